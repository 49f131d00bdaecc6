"""CUDA layer: the driver API in libcuda.so.1, as every CUDA user (torch, Triton) meets it."""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

from .. import facts as _facts
from .base import Check

#: what each cuInit failure usually means, for the message (codes from cuda.h)
INIT_HINTS = {
    3: "the driver could not be initialised at all",
    34: "the loaded libcuda is the CUDA toolkit's link-time stub (…/stubs/libcuda.so), not the driver's library",
    46: "the GPU is busy or in exclusive-process compute mode, held by another process",
    100: "CUDA sees no GPU: the device nodes are not usable or CUDA_VISIBLE_DEVICES hides every GPU",
    101: "CUDA_VISIBLE_DEVICES is invalid: it repeats a device or names one that does not exist",
    304: "an operating-system call of the driver failed (often a device node it cannot open)",
    802: "the system is not ready: on NVSwitch systems the Fabric Manager has not configured the fabric",
    803: "libcuda does not match the kernel module's version (driver upgraded without reboot, or a container's "
         "own driver libraries)",
    804: "the forward-compatibility libcuda was loaded on a GPU that does not support forward compatibility",
    999: "usually /dev/nvidia-uvm is missing or the nvidia_uvm module is not loaded, or the container's "
         "cgroup lost access to the GPU",
}

_TOOLKIT_CONTAINERS = {"docker": "docker", "podman": "podman", "kubernetes": None}


def cuda_version_text(driver_version: Optional[int]) -> Optional[str]:
    """12080 -> '12.8', 13000 -> '13.0'."""
    if not isinstance(driver_version, int) or driver_version <= 0:
        return None
    return f"{driver_version // 1000}.{(driver_version % 1000) // 10}"


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
    )
    facts = _facts.CudaDriverApiFacts
    requires = ("gpu.visible_devices", "gpu.nvlink_fabric")  # error 802 nests under an unregistered fabric
    probe = "cuda_driver.driver_api"
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 30.0

    def evaluate(self, facts, ctx):
        dv = facts.get("driver_version")
        version = cuda_version_text(dv)
        kernel = facts.get("kernel_driver_version")
        derived: Dict[str, Any] = {"driver_cuda_version": version}
        if not facts.get("libcuda_loaded"):
            derived["device_count"] = 0
            kind = facts.get("container")
            err = facts.get("load_error") or "unknown error"
            if kind in _TOOLKIT_CONTAINERS and facts.get("nvidiactl"):
                finding = ctx.finding(
                    "container-toolkit-missing",
                    message=f"libcuda.so.1 cannot be loaded ({err}) although /dev/nvidiactl exists in this {kind} "
                    "container: the GPU device nodes were passed in but not the host driver's libraries, which "
                    "the NVIDIA Container Toolkit injects. No CUDA program can start: torch finds no driver and "
                    "Triton finds no libcuda.",
                    evidence=err, container_runtime=_TOOLKIT_CONTAINERS[kind])
            else:
                finding = ctx.finding(
                    "libcuda-missing",
                    message=f"libcuda.so.1, the CUDA driver library, cannot be loaded: {err}. No CUDA program can start "
                    "here: torch warns 'Found no NVIDIA driver on your system' and reports CUDA unavailable, "
                    "Triton finds no libcuda." + (f" The kernel module is {kernel}, so the library must be "
                                                  f"exactly {kernel}." if kernel else ""),
                    evidence=err, driver_branch=kernel.split(".")[0] if kernel else None)
            return ctx.verdict("libcuda.so.1 not loadable", finding, **derived)
        err = facts.get("init_error")
        where = facts.get("libcuda_path") or facts.get("library")
        if err:
            derived["device_count"] = 0
            return ctx.verdict(f"cuInit failed: {err.get('name')} ({err.get('code')})",
                               self._init_failed(ctx, facts, err, where, version), **derived)
        devices = facts.get("devices") or []
        count = facts.get("device_count") or 0
        if count == 0:
            finding = ctx.finding(
                "cuda-init-failed",
                message=f"cuInit(0) succeeded with {where} but cuDeviceGetCount reports 0 devices: CUDA has no GPU to run on.",
                evidence=f"cuDeviceGetCount = 0; CUDA_VISIBLE_DEVICES={facts.get('cuda_visible_devices')!r}",
                init_name="no devices")
            return ctx.verdict("CUDA sees 0 devices", finding, **derived)
        summary = (f"CUDA {version or '?'} driver API (cuDriverGetVersion {dv}) via {where}: "
                   f"{count} device(s): {_devices_text(devices)}")
        if facts.get("uvm_node") is False and facts.get("uvm_node_after_init"):
            summary += "; libcuda created the missing /dev/nvidia-uvm on demand"
        return ctx.ok(summary, **derived)

    @staticmethod
    def _init_failed(ctx, facts: Mapping[str, Any], err: Mapping[str, Any], where: str, version: Optional[str]):
        code = err.get("code")
        text = f"{err.get('name')} ({code})" + (f": {err['message']}" if err.get("message") else "")
        dv = facts.get("driver_version")
        dv_err = facts.get("driver_version_error") or {}
        dv_text = str(dv) if dv is not None else f"failed: {dv_err.get('name') or 'no answer'}"
        uvm_module = {True: "loaded", False: "not loaded"}.get(facts.get("uvm_module"), "unknown")
        evidence = "\n".join([
            f"cuInit(0) = {code} {err.get('name')}" + (f": {err['message']}" if err.get("message") else ""),
            f"libcuda: {where}",
            f"cuDriverGetVersion = {dv_text}",
            f"kernel module: {facts.get('kernel_driver_version')}",
            f"/dev/nvidia-uvm: {'present' if facts.get('uvm_node') else 'absent'}; nvidia_uvm module: {uvm_module}",
            "CUDA_VISIBLE_DEVICES=" + ("(unset)" if facts.get("cuda_visible_devices") is None
                                        else repr(facts.get("cuda_visible_devices"))),
        ])
        head = (f"cuInit(0) with {where} returns {text}, so CUDA cannot start here: torch reports CUDA "
                "unavailable ('CUDA initialization: ...' warning) and Triton finds no active driver.")
        path = facts.get("libcuda_path") or ""
        if code == 804 or (code == 803 and facts.get("forward_compat")):
            return ctx.finding(
                "cuda-forward-compat-unsupported",
                message=head + f" {where} is a CUDA forward-compatibility library (cuda-compat"
                f"{', driver CUDA ' + version if version else ''}) and the "
                + ("GPU does not support forward compatibility." if code == 804 else
                   f"installed kernel driver ({facts.get('kernel_driver_version') or 'unknown'}) is not a branch it supports."),
                evidence=evidence, compat_dir=os.path.dirname(path) if path else None)
        if code == 802:
            return ctx.finding("fabric-manager-not-running", message=head + " " + INIT_HINTS[802] + ".", evidence=evidence,
                               driver_branch=(facts.get("kernel_driver_version") or "").split(".")[0] or None)
        hint = INIT_HINTS.get(code)
        if code == 999:
            if not facts.get("uvm_node") and not facts.get("uvm_node_after_init"):
                hint = "/dev/nvidia-uvm is missing" + (
                    " and the nvidia_uvm module is not loaded" if facts.get("uvm_module") is False else
                    ", and creating it at first use failed (a container's device cgroup forbids it, or there is "
                    "no nvidia-modprobe)")
            elif facts.get("uvm_module") is False:
                hint = "the nvidia_uvm kernel module is not loaded"
            else:
                hint = ("/dev/nvidia-uvm exists and nvidia_uvm is loaded, so the likely cause is the container's "
                        "cgroup denying the GPU (lost access after 'systemctl daemon-reload'; restart the container) "
                        "or a GPU in a bad state (check dmesg for Xid errors)")
        if code == 100 and facts.get("cuda_visible_devices") is not None:
            hint = f"CUDA sees no GPU (CUDA_VISIBLE_DEVICES={facts.get('cuda_visible_devices')!r})"
        if code == 101 and facts.get("cuda_visible_devices") is not None:
            hint = (f"CUDA_VISIBLE_DEVICES={facts.get('cuda_visible_devices')!r} is invalid: it repeats a device "
                    "or names one that does not exist")
        params: Dict[str, Any] = {"init_name": err.get("name")}
        if code == 999 and (not facts.get("uvm_node") or facts.get("uvm_module") is False):
            params["uvm_state"] = ("/dev/nvidia-uvm absent" if not facts.get("uvm_node") else "nvidia_uvm not loaded")
        if code == 34 or facts.get("stub"):
            params["stub_dir"] = os.path.dirname(path) if path else None
            hint = INIT_HINTS[34]
        if code == 46:
            params["busy_gpu"] = "every GPU (add -i <index> for one)"
        return ctx.finding("cuda-init-failed", message=head + (f" Cause: {hint}." if hint else ""), evidence=evidence,
                           **params)
