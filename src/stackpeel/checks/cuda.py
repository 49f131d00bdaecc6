"""CUDA layer: the driver API in libcuda.so.1, as every CUDA user (torch, Triton) meets it."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Dict, Mapping, Optional

from .. import facts as _facts
from ..model import Severity
from .base import Check

#: cuInit results whose cause the knowledge base words (messages.e<code> of cuda-init-failed)
INIT_VARIANTS = {3, 46, 100, 101, 304, 803}

_TOOLKIT_CONTAINERS = {"docker": "docker", "podman": "podman", "kubernetes": None}
#: the loader found a file named libcuda.so.1 and could not load it (glibc dl-load.c): a broken or
#: foreign file first on the search path, not a container without the toolkit's mounts (seen on
#: an H200: a text file named libcuda.so.1 first on LD_LIBRARY_PATH, GPU fault suite)
_NOT_A_LIBRARY = ("invalid ELF header", "file too short", "wrong ELF class", "ELF file", "ELF load command",
                  "cannot read file data")


def cuda_version_text(driver_version: Optional[int]) -> Optional[str]:
    """12080 -> '12.8', 13000 -> '13.0'."""
    if not isinstance(driver_version, int) or driver_version <= 0:
        return None
    return f"{driver_version // 1000}.{(driver_version % 1000) // 10}"


def _bytes_text(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= (1 << 30) else f"{n / (1 << 20):.0f} MiB"


def limit_params(rlimit: Mapping[str, Any]) -> Dict[str, Any]:
    """address-space-limit's message parameters from a probe's ``rlimit_as`` (a finite soft limit)."""
    soft, hard = rlimit.get("soft"), rlimit.get("hard")
    return {"limit": _bytes_text(soft), "limit_kib": soft // 1024,
            "hard": "unlimited" if hard is None else _bytes_text(hard)}


def limit_evidence(rlimit: Mapping[str, Any]) -> str:
    """The limit as address-space-limit's evidence states it, whichever check observed it."""
    return f"RLIMIT_AS (ulimit -v) = {rlimit.get('soft')} bytes, hard {rlimit.get('hard')}"


def _devices_text(devices) -> str:
    return ", ".join(f"{d.get('name') or '?'} (cc {d.get('cc') or '?'})" for d in devices)


class DriverApi(Check):
    """libcuda.so.1 through ctypes: which file loads, cuDriverGetVersion, the raw CUresult of
    cuInit(0) with CUDA's own error name and text, and each device's name and compute capability."""

    id = "cuda.driver_api"
    title = "CUDA driver API (libcuda.so.1, cuInit)"
    layer = "cuda"
    codes = (
        "container-toolkit-missing",
        "fabric-manager-not-running",
        "libcuda-missing",
        "cuda-init-failed",
        "cuda-forward-compat-unsupported",
        "libcuda-stub-loaded",
        "address-space-limit",
    )
    facts = _facts.CudaDriverApiFacts
    requires = ("gpu.visible_devices", "gpu.nvlink_fabric")  # error 802 nests under an unregistered fabric
    probe = "cuda_driver.driver_api"
    exclusive = "nvidia-driver"  # cuInit, nvmlInit, nvidia-smi: one after another
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 30.0

    def evaluate(self, facts, ctx):
        dv = facts["driver_version"]
        version = cuda_version_text(dv)
        kernel = facts["kernel_driver_version"]
        derived: Dict[str, Any] = {"driver_cuda_version": version,
                                   "compute_modes": ctx.dep("gpu.visible_devices").get("compute_modes") or []}
        if not facts["libcuda_loaded"]:
            derived["device_count"] = 0
            kind = facts["container"]
            err = facts["load_error"] or "unknown error"
            off_path = facts.get("libcuda_off_path")
            not_a_library = any(s in err for s in _NOT_A_LIBRARY)
            if off_path and not not_a_library and "cannot open shared object file" in err:
                # the driver's libcuda is mounted (GKE's device plugin, /usr/local/nvidia/lib64) in a
                # directory the loader is not told about: the toolkit did its part (tools32). The
                # platform mounted the driver, so no package is offered: only the loader's path
                finding = ctx.finding("libcuda-missing", ["kernel-known" if kernel else None, "off-path"],
                                      evidence=err, load_error=err, kernel_driver_version=kernel, off_path=off_path)
                finding = replace(finding, remedy=replace(finding.remedy, commands=tuple(
                    c for c in finding.remedy.commands if c.kind != "install")))
            elif kind in _TOOLKIT_CONTAINERS and facts["nvidiactl"] and not not_a_library:
                finding = ctx.finding("container-toolkit-missing", "libcuda", evidence=err, load_error=err,
                                      container=kind, container_runtime=_TOOLKIT_CONTAINERS[kind])
            else:
                finding = ctx.finding("libcuda-missing", "kernel-known" if kernel else None, evidence=err,
                                      load_error=err, kernel_driver_version=kernel,
                                      driver_branch=kernel.split(".")[0] if kernel else None)
            return ctx.verdict("libcuda.so.1 not loadable", finding, **derived)
        err = facts["init_error"]
        where = facts["libcuda_path"] or facts["library"]
        if err:
            derived["device_count"] = 0
            return ctx.verdict(f"cuInit failed: {err.get('name')} ({err.get('code')})",
                               self._init_failed(ctx, facts, err, where, version), **derived)
        devices = facts["devices"] or []
        count = facts["device_count"] or 0
        if count == 0:
            finding = ctx.finding(
                "cuda-init-failed", "no-devices", where=where,
                evidence=f"cuDeviceGetCount = 0; CUDA_VISIBLE_DEVICES={facts['cuda_visible_devices']!r}",
                init_name="no devices")
            return ctx.verdict("CUDA sees 0 devices", finding, **derived)
        summary = (f"CUDA {version or '?'} driver API (cuDriverGetVersion {dv}) via {where}: "
                   f"{count} device(s): {_devices_text(devices)}")
        if facts["uvm_node"] is False and facts.get("uvm_node_after_init"):
            summary += "; libcuda created the missing /dev/nvidia-uvm on demand"
        limit = (facts.get("rlimit_as") or {}).get("soft")
        if limit is not None:
            return ctx.verdict(summary + f"; virtual address space limited to {_bytes_text(limit)} (ulimit -v)",
                               ctx.finding("address-space-limit", "limited", severity=Severity.DEGRADED,
                                           evidence=limit_evidence(facts["rlimit_as"]) + "; cuInit succeeded",
                                           **limit_params(facts["rlimit_as"])), **derived)
        return ctx.ok(summary, **derived)

    @staticmethod
    def _init_failed(ctx, facts: Mapping[str, Any], err: Mapping[str, Any], where: str, version: Optional[str]):
        code = err.get("code")
        text = f"{err.get('name')} ({code})" + (f": {err['message']}" if err.get("message") else "")
        dv = facts["driver_version"]
        dv_err = facts["driver_version_error"] or {}
        dv_text = str(dv) if dv is not None else f"failed: {dv_err.get('name') or 'no answer'}"
        uvm_module = {True: "loaded", False: "not loaded"}.get(facts["uvm_module"], "unknown")
        evidence = "\n".join([
            f"cuInit(0) = {code} {err.get('name')}" + (f": {err['message']}" if err.get("message") else ""),
            f"libcuda: {where}",
            f"cuDriverGetVersion = {dv_text}",
            f"kernel module: {facts['kernel_driver_version']}",
            f"/dev/nvidia-uvm: {'present' if facts['uvm_node'] else 'absent'}; nvidia_uvm module: {uvm_module}",
            "CUDA_VISIBLE_DEVICES=" + ("(unset)" if facts["cuda_visible_devices"] is None
                                        else repr(facts["cuda_visible_devices"])),
        ])
        visible = facts["cuda_visible_devices"]
        observed: Dict[str, Any] = {"where": where, "init_error": text, "init_name": err.get("name"),
                                    "kernel_driver_version": facts["kernel_driver_version"] or "unknown",
                                    "visible": repr(visible), "driver_cuda_version": version or "unknown"}
        path = facts["libcuda_path"] or ""
        if code == 804 or (code == 803 and facts["forward_compat"]):
            return ctx.finding("cuda-forward-compat-unsupported", "gpu" if code == 804 else "branch",
                               evidence=evidence, compat_dir=os.path.dirname(path) if path else None, **observed)
        if code == 802:
            return ctx.finding("fabric-manager-not-running", "cuinit", evidence=evidence,
                               driver_branch=(facts["kernel_driver_version"] or "").split(".")[0] or None,
                               **observed)
        if code == 34 or facts["stub"]:
            return ctx.finding("libcuda-stub-loaded", evidence=evidence,
                               stub_dir=os.path.dirname(path) if path else None, **observed)
        limit = (facts.get("rlimit_as") or {}).get("soft")
        if limit is not None and not (code in (100, 101) and visible is not None) and facts["uvm_node"]:
            # cuInit reserves far more virtual space than a ulimit -v of a few GiB (or tens) allows
            return ctx.finding("address-space-limit", "cuinit",
                               evidence=evidence + "\n" + limit_evidence(facts["rlimit_as"]),
                               **limit_params(facts["rlimit_as"]), **observed)
        variant = f"e{code}" if code in INIT_VARIANTS else None
        if code == 999:
            if not facts["uvm_node"] and not facts.get("uvm_node_after_init"):
                variant = ("e999-uvm-missing-module-unloaded" if facts["uvm_module"] is False
                           else "e999-uvm-not-creatable")
            elif facts["uvm_module"] is False:
                variant = "e999-module-unloaded"
            else:
                variant = "e999-cgroup"
        if code in (100, 101) and visible is not None:
            variant = f"e{code}-visible"
        if code == 999 and (not facts["uvm_node"] or facts["uvm_module"] is False):
            observed["uvm_state"] = ("/dev/nvidia-uvm absent" if not facts["uvm_node"] else "nvidia_uvm not loaded")
        if code == 46:
            observed["busy_gpu"] = "every GPU (add -i <index> for one)"
        return ctx.finding("cuda-init-failed", variant, evidence=evidence, **observed)
