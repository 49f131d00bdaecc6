"""GPU layer: is there an NVIDIA driver, can this process open the GPU, what NVML sees,
and which GPUs CUDA_VISIBLE_DEVICES leaves visible.

The four checks form a chain (kernel driver -> device nodes -> NVML -> visible devices), so
one missing driver is reported once, as the root, and everything above it nests under it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, Context, Verdict
from .multi_gpu import nvlink_layout, topology_matrix

#: container kinds whose runtime takes the NVIDIA Container Toolkit's --gpus/CDI options
TOOLKIT_RUNTIMES = {"docker": "docker", "podman": "podman"}
_IN_CONTAINER = {"docker", "podman", "kubernetes", "lxc", "systemd-nspawn", "apptainer"}


#: a GPU with less than this fraction of its memory free, the rest held by other processes, is
#: reported (degraded): a job started there gets only what is left. A CUDA context takes a few
#: hundred MiB, so stackpeel's own probes never come near it on a GPU of any size
GPU_FREE_MIN_FRACTION = 0.10


def _gib(n: Optional[int]) -> str:
    if n is None:
        return "an unknown amount"
    return f"{n / (1 << 30):.1f} GiB" if n >= (1 << 30) else f"{n / (1 << 20):.0f} MiB"


#: what opening a device node says when no driver has a device behind its major/minor
_NO_DEVICE_ERRNOS = ("ENXIO", "ENODEV")


def _branch(version: Optional[str]) -> Optional[str]:
    return version.split(".")[0] if version else None


class KernelDriver(Check):
    """The NVIDIA kernel module: /proc/driver/nvidia/version, nvidia in /proc/modules, or WSL2's
    /dev/dxg with the Windows driver's libraries. Without it no GPU code can run."""

    id = "gpu.kernel_driver"
    title = "NVIDIA kernel driver"
    layer = "gpu"
    codes = ("no-nvidia-driver",)
    facts = _facts.GpuKernelDriverFacts
    probe = "gpu.kernel_driver"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        ver = facts["driver_version"]
        modules = facts["modules"] or []
        wsl = facts["wsl"] or {}
        kind = facts["container"]
        if ver:
            flavour = facts["module_flavour"]
            extra = f", {flavour} kernel module" if flavour else ""
            return ctx.ok(f"NVIDIA driver {ver}{extra}", driver_branch=_branch(ver))
        if "nvidia" in modules:
            return ctx.ok("nvidia kernel module loaded (/proc/driver/nvidia/version not readable: version unknown)")
        if wsl.get("dxg") and wsl.get("libcuda"):
            return ctx.ok("WSL2 GPU paravirtualisation: /dev/dxg and /usr/lib/wsl/lib/libcuda.so.1 "
                          "(the Windows host's driver)", wsl=True)
        # nvidiactl is there, but no driver answers behind it: nodes left after the module was
        # unloaded (or made by hand, or copied in from another host) open with ENXIO / ENODEV
        orphaned = facts["nvidiactl_exists"] and facts.get("nvidiactl_open_error") in _NO_DEVICE_ERRNOS
        if facts["nvidiactl_exists"] and not orphaned:
            return ctx.ok("/dev/nvidiactl present but /proc/driver/nvidia is not visible here: driver version unknown")
        evidence = "\n".join([
            "/proc/driver/nvidia/version: " + ("absent" if facts["proc_version_text"] is None else "unparsable"),
            "/proc/modules nvidia*: " + (", ".join(modules) or "none") if facts["modules"] is not None
            else "/proc/modules: not readable",
            "/dev/nvidiactl: " + (f"present, but opening it fails with {facts.get('nvidiactl_open_error')} "
                                  "(no driver behind the node)" if orphaned else "absent"),
            "/dev/dxg (WSL2): " + ("present" if wsl.get("dxg") else "absent"),
            "PCI NVIDIA display controllers: " + _pci_text(facts["pci_gpus"]),
            f"kernel: {facts['kernel']}, container: {kind}",
        ])
        pci = facts["pci_gpus"]
        if wsl.get("dxg"):
            sentences = ["wsl"]
        else:
            sentences = ["in-container" if kind in _IN_CONTAINER else None]
        if orphaned:
            sentences = ["nodes-orphaned"]
        sentences.append("pci-unknown" if pci is None else ("pci-gpu" if pci else "pci-none"))
        return ctx.verdict("no NVIDIA driver: no GPU is visible", ctx.finding(
            "no-nvidia-driver", sentences, evidence=evidence, container=kind,
            pci_gpu=_pci_text(pci) if pci else None))

def _pci_text(pci: Optional[Sequence[Mapping[str, Any]]]) -> str:
    if pci is None:
        return "unknown (/sys/bus/pci not readable)"
    if not pci:
        return "none"
    return ", ".join(f"{d.get('address')} [{d.get('id')}] driver={d.get('driver') or 'none'}" for d in pci)


def _node_line(node: Mapping[str, Any]) -> str:
    if not node.get("exists"):
        return f"{node.get('path')}: absent"
    bits = [f"{node.get('path')}: {node.get('mode')} uid={node.get('uid')} gid={node.get('gid')}"]
    if node.get("group"):
        bits.append(f"({node['group']})")
    if node.get("type") == "char":
        bits.append(f"char {node.get('major')}:{node.get('minor')}")
    err = node.get("open_error")
    bits.append(f"open O_RDWR: {err['errno']} {err['message']}" if err else "open O_RDWR: ok")
    return " ".join(bits)


class DeviceNodes(Check):
    """/dev/nvidiactl, /dev/nvidia<N> and /dev/nvidia-uvm exist and this process can open them
    read-write. Catches containers started without GPU passthrough, a missing nvidia-uvm node
    (nvidia-smi works, CUDA fails with 999) and permission or cgroup denials."""

    id = "gpu.device_nodes"
    title = "NVIDIA device nodes"
    layer = "gpu"
    codes = ("device-nodes-missing", "nvidia-uvm-missing", "device-permission-denied", "gpu-access-revoked")
    facts = _facts.GpuDeviceNodesFacts
    requires = ("gpu.kernel_driver",)
    probe = "gpu.device_nodes"
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 20.0

    def evaluate(self, facts, ctx):
        driver_status = ctx.dep_status.get("gpu.kernel_driver")
        driver = ctx.dep("gpu.kernel_driver")
        ctl = facts["nvidiactl"] or {}
        gpus = [g for g in facts["gpus"] or [] if g.get("exists")]
        uvm = facts["uvm"] or {}
        kind = facts["container"]
        dxg = (facts["dxg"] or {}).get("exists")
        if dxg and not ctl.get("exists") and not gpus:
            return ctx.ok("WSL2: the GPU is reached through /dev/dxg (no /dev/nvidia* nodes are used)")
        if driver_status is Status.FAIL and not ctl.get("exists") and not gpus:
            # no driver, so nothing creates the nodes: a symptom of gpu.kernel_driver, not a second cause
            return Verdict(Status.FAIL, "no /dev/nvidia* device nodes: there is no NVIDIA driver to create them")
        majors = facts["proc_devices"] or {}
        env = facts["env"] or {}
        if not ctl.get("exists") or not gpus:
            return ctx.verdict("NVIDIA device nodes missing", self._missing(ctx, facts, driver, ctl, gpus, kind,
                                                                             majors, env))
        findings = []
        on_demand = self._uvm_on_demand(facts) if not uvm.get("exists") else None
        if not uvm.get("exists") and not on_demand:
            modules = facts["modules"]
            if modules is None:
                sentences = ["modules-unknown"]
            elif "nvidia_uvm" in modules:
                sentences = ["module-loaded"] + (["uvm-major"] if "nvidia-uvm" in majors else []) + (
                    ["not-passed"] if kind in _IN_CONTAINER else [])
            else:
                sentences = ["module-unloaded"]
            if facts.get("dev_read_only"):
                sentences.append("dev-read-only")
            elif sentences[0] != "module-unloaded" and facts["uid"] != 0:
                sentences.append("not-creatable")
            findings.append(ctx.finding(
                "nvidia-uvm-missing", sentences, gpu_nodes=len(gpus), uvm_major=majors.get("nvidia-uvm"),
                container=kind,
                evidence="\n".join([_node_line(n) for n in [ctl] + gpus + [uvm]] +
                                    [f"nvidia-modprobe: {(facts.get('nvidia_modprobe') or {}).get('path') or 'absent'}",
                                     f"euid: {facts['uid']}"] +
                                    (["/dev: a read-only mount (no node can be created in it)"]
                                     if facts.get("dev_read_only") else []))))
        revoked, denied = [], []
        for node in [ctl] + gpus + ([uvm] if uvm.get("exists") else []):
            err = node.get("open_error")
            if err and err.get("errno") == "EPERM" and node.get("access_rw"):
                revoked.append(node)
            elif err and err.get("errno") in ("EACCES", "EPERM", "EROFS") or node.get("access_rw") is False:
                denied.append(node)
        if revoked:
            paths = ", ".join(n["path"] for n in revoked)
            findings.append(ctx.finding(
                "gpu-access-revoked", "in-container" if kind in _IN_CONTAINER else None, paths=paths, container=kind,
                evidence="\n".join(_node_line(n) for n in revoked)))
        if denied:
            first = denied[0]
            user = facts["user"] or f"uid {facts['uid']}"
            groups = facts["groups"] or []
            group = first.get("group")
            findings.append(ctx.finding(
                "device-permission-denied", paths=", ".join(n["path"] for n in denied), user=user,
                groups=", ".join(map(str, groups)) or "none", first=first["path"], mode=first.get("mode"),
                uid=first.get("uid"), gid=f"{first.get('gid')} ({group})" if group else first.get("gid"),
                evidence="\n".join(_node_line(n) for n in denied), device_group=group))
        tools = "" if (facts["uvm_tools"] or {}).get("exists") else " (no /dev/nvidia-uvm-tools: profilers " \
                                                                         "such as Nsight/CUPTI will not work)"
        summary = (f"/dev/nvidiactl, {len(gpus)} GPU node(s) ({', '.join(g['path'].rsplit('/', 1)[-1] for g in gpus)})"
                   f"{', /dev/nvidia-uvm' if uvm.get('exists') else ''}")
        if findings:
            return ctx.verdict(summary + ": " + ", ".join(f.code for f in findings), *findings)
        if driver_status is Status.FAIL and (ctl.get("open_error") or {}).get("errno") in _NO_DEVICE_ERRNOS:
            # nodes left behind with no driver to answer them: a symptom of gpu.kernel_driver
            return Verdict(Status.FAIL, f"{summary} present, but /dev/nvidiactl opens with "
                                        f"{ctl['open_error']['errno']}: no NVIDIA driver behind the nodes")
        # an open that fails otherwise (ENXIO, ENODEV: a node left behind with no device in the driver
        # behind it, e.g. after the module was unloaded) is not "openable": say so, the layers above show it
        unopened = [n for n in [ctl] + gpus + ([uvm] if uvm.get("exists") else []) if n.get("open_error")]
        opened = ("present and openable read-write" if not unopened else "present, but opening " + "; ".join(
            f"{n['path']} fails with {n['open_error'].get('errno')}" for n in unopened) +
            " (no device behind the node: the driver does not have it, or is not loaded)")
        if on_demand:
            return ctx.ok(summary + f" {opened}; /dev/nvidia-uvm absent, but {on_demand} "
                          "can create it at the first CUDA call (cuda.driver_api shows whether it did)",
                          uvm_on_demand=True)
        return ctx.ok(summary + f" {opened}" + tools)

    @staticmethod
    def _uvm_on_demand(facts) -> Optional[str]:
        """Who would create /dev/nvidia-uvm when libcuda asks for it, or None. libcuda runs the
        setuid-root nvidia-modprobe (or, as root, creates the node itself) when nvidia_uvm is
        available; a container's device cgroup can still forbid it, which cuInit then shows. On a
        read-only /dev nobody can create it."""
        if facts.get("dev_read_only"):
            return None
        modules = facts["modules"]
        if modules is not None and "nvidia_uvm" not in modules and "nvidia-uvm" not in (facts["proc_devices"] or {}):
            return None
        if facts["uid"] == 0:
            return "this process (root)"
        mp = facts.get("nvidia_modprobe") or {}
        if mp.get("setuid_root"):
            return f"the setuid-root {mp.get('path')}"
        return None

    def _missing(self, ctx: Context, facts, driver, ctl, gpus, kind, majors, env):
        missing = [p for p, ok in (("/dev/nvidiactl", ctl.get("exists")), ("/dev/nvidia<N>", bool(gpus))) if not ok]
        ver = driver.get("driver_version")
        nvd = env.get("NVIDIA_VISIBLE_DEVICES")
        sentences: List[Optional[str]] = ["missing-in-container" if kind in _IN_CONTAINER else "missing"]
        sentences.append({"docker": "docker", "podman": "docker", "kubernetes": "kubernetes", "lxc": "lxc",
                          "apptainer": "apptainer"}.get(kind or "", "host"))
        if nvd is not None and nvd.strip().lower() in ("void", "none", ""):
            sentences.append("nvd-void")
        params: Dict[str, Any] = {}
        if kind in TOOLKIT_RUNTIMES:
            params["container_runtime"] = TOOLKIT_RUNTIMES[kind]
        if kind == "lxc":
            params["lxc_uvm_major"] = majors.get("nvidia-uvm")
            params["lxc_name"] = facts["hostname"]
        evidence = "\n".join([_node_line(ctl)] + [_node_line(g) for g in gpus] +
                             [f"/proc/devices: {majors}",
                              f"container: {kind} ({'; '.join(facts['container_signals'] or [])})",
                              f"NVIDIA_VISIBLE_DEVICES={nvd!r}"])
        return ctx.finding("device-nodes-missing", sentences, evidence=evidence, container=kind,
                           driver_version=ver or "version unknown", missing=" and ".join(missing), nvd=repr(nvd),
                           **params)


#: NVML clock event reasons (nvml.h) that mean the GPU is slowed by heat or by its power brake, as
#: probes/gpu.py names them: SW Thermal Slowdown 0x20, HW Thermal Slowdown 0x40, HW Power Brake
#: Slowdown 0x80. Idle (0x1), application clocks (0x2), the SW power cap (0x4), sync boost (0x10)
#: and the display clock (0x100) are how a healthy GPU runs; HW Slowdown (0x8) comes with 0x40 or
#: 0x80 and, alone, also during P-state changes, so it is named only beside them
SLOWDOWN_FAULTS = {0x20: "SW Thermal Slowdown", 0x40: "HW Thermal Slowdown", 0x80: "HW Power Brake Slowdown"}
SLOWDOWN_FAULT_MASK = 0x20 | 0x40 | 0x80
SLOWDOWN_FAULTS_BY_NAME = set(SLOWDOWN_FAULTS.values())


def slowdown_summary(devices: Sequence[Mapping[str, Any]]) -> str:
    """What the summary says of the GPUs' clock slowdown reasons: that none slows for heat or the
    power brake (with the temperatures), or on which GPUs the reasons could not be read and why.
    Empty for facts recorded before the probe read them."""
    read = [d for d in devices if d.get("slowdown")]
    if not read:
        return ""
    ok = [d for d in read if d["slowdown"].get("reasons_mask") is not None]
    unread = [d for d in read if d["slowdown"].get("reasons_mask") is None]
    parts = []
    calm = [d for d in ok if not d["slowdown"]["reasons_mask"] & SLOWDOWN_FAULT_MASK]
    if calm:
        temps = sorted(d["slowdown"]["temperature_c"] for d in calm if d["slowdown"].get("temperature_c") is not None)
        span = (f"{temps[0]} C" if temps[0] == temps[-1] else f"{temps[0]}-{temps[-1]} C") if temps else "?"
        parts.append(f"no thermal or power-brake clock slowdown on {len(calm)} GPU(s) ({span})")
    if unread:
        by_why: Dict[str, List[str]] = {}
        for d in unread:
            e = (d["slowdown"].get("errors") or {}).get("clock_event_reasons") or {}
            by_why.setdefault(str(e.get("name") or "not read"), []).append(str(d.get("index")))
        parts.append("clock slowdown reasons could not be read (" + "; ".join(
            f"GPU {', '.join(idx)}: {why}" for why, idx in by_why.items()) + ")")
    return "; ".join(parts)


def _devices_text(devices: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{d.get('name') or '?'} (cc {d.get('cc') or '?'})" for d in devices)


class Nvml(Check):
    """NVML through ctypes (libnvidia-ml.so.1): driver version, GPU names and compute capability.
    Also catches driver libraries whose version differs from the kernel module's, GPUs whose memory
    other processes hold, and GPUs slowed now by heat or the power brake (clock event reasons)."""

    id = "gpu.nvml"
    title = "NVML (libnvidia-ml) and driver library versions"
    layer = "gpu"
    codes = ("nvml-unavailable", "driver-library-mismatch", "gpu-memory-held-by-other-processes",
             "gpu-thermal-throttling")
    facts = _facts.GpuNvmlFacts
    requires = ("gpu.device_nodes",)
    probe = "gpu.nvml"
    exclusive = "nvidia-driver"  # cuInit, nvmlInit, nvidia-smi: one after another
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 20.0

    def evaluate(self, facts, ctx):
        nodes_ok = ctx.dep_status.get("gpu.device_nodes") in (Status.PASS, Status.WARN, None)
        kernel = facts["kernel_driver_version"]
        params = {"driver_branch": _branch(kernel), "kernel_driver_version": kernel}
        findings = []
        mismatch = self._mismatch(ctx, facts, kernel, params)
        if not facts["loaded"]:
            sev = Severity.DEGRADED if nodes_ok else Severity.BLOCKING
            findings.append(ctx.finding(
                "nvml-unavailable", ["not-loadable", "cuda-may-work" if nodes_ok else "no-driver"],
                load_error=facts["load_error"], evidence=facts["load_error"] or "", severity=sev, **params))
            return ctx.verdict("NVML unavailable: libnvidia-ml.so.1 not loadable", *findings, *mismatch)
        err = facts["init_error"]
        if err:
            text = f"{err.get('name')} ({err.get('code')}): {err.get('message')}"
            if err.get("code") == 18:
                findings.append(ctx.finding("driver-library-mismatch", "init", init_error=text, path=facts["path"],
                                            evidence=text, **dict(params, kernel_driver_version=kernel or "unknown")))
            else:
                sev = Severity.DEGRADED if nodes_ok else Severity.BLOCKING
                reload_note = (err.get("code") == 999
                               and ctx.dep("gpu.device_nodes").get("container") in _IN_CONTAINER)
                findings.append(ctx.finding(
                    "nvml-unavailable", ["init-fails"] + (["daemon-reload"] if reload_note else []), init_error=text,
                    path=facts["path"], evidence=text, severity=sev, **params))
            return ctx.verdict(f"nvmlInit failed: {err.get('name')}", *findings, *(
                m for m in mismatch if err.get("code") != 18))
        devices = facts["devices"] or []
        count = facts["device_count"]
        summary = (f"NVML {facts['nvml_version'] or '?'}, driver {facts['driver_version'] or '?'}: "
                   f"{count if count is not None else '?'} GPU(s)" + (f": {_devices_text(devices)}" if devices else ""))
        held = [f for f in (self._held(ctx, d, facts.get("pid")) for d in devices) if f is not None]
        hot = [f for f in (self._slowdown(ctx, d) for d in devices) if f is not None]
        clocks = slowdown_summary(devices)
        return ctx.verdict(summary + (f"; {clocks}" if clocks else ""), *mismatch, *held, *hot)

    @staticmethod
    def _slowdown(ctx: Context, dev: Mapping[str, Any]):
        """A finding when a GPU's clock event reasons hold a thermal or power-brake slowdown now."""
        slow = dev.get("slowdown") or {}
        mask = slow.get("reasons_mask")
        if mask is None or not mask & SLOWDOWN_FAULT_MASK:
            return None
        names = [n for n in slow.get("reasons") or [] if n in SLOWDOWN_FAULTS_BY_NAME or n == "HW Slowdown"]
        temp = slow.get("temperature_c")
        err = (slow.get("errors") or {}).get("nvmlDeviceGetTemperature") or {}
        thresholds = slow.get("thresholds_c") or {}
        limits = [f"{label} {thresholds[key]} C" for key, label in (("gpu_max", "max operating"),
                                                                   ("slowdown", "slowdown"),
                                                                   ("shutdown", "shutdown")) if key in thresholds]
        lines = [f"nvmlDeviceGetCurrentClocksEventReasons(GPU {dev.get('index')}): {mask:#x} = "
                 + ", ".join(slow.get("reasons") or []),
                 f"nvmlDeviceGetTemperature(GPU {dev.get('index')}): "
                 + (f"{temp} C" if temp is not None else str(err.get("name") or "not read"))]
        lines += [f"nvmlDeviceGetTemperatureThreshold({key}): {v} C" for key, v in sorted(thresholds.items())]
        variant = ["active"] + (["power-brake"] if mask & 0x80 else [])
        return ctx.finding(
            "gpu-thermal-throttling", variant, evidence="\n".join(lines), index=dev.get("index"),
            name=dev.get("name") or "?", reasons=", ".join(names), mask=f"{mask:#x}",
            temperature=f"{temp} C" if temp is not None else f"unknown ({err.get('name') or 'not read'})",
            thresholds=f" (the driver's thresholds: {', '.join(limits)})" if limits else "")

    @staticmethod
    def _held(ctx: Context, dev: Mapping[str, Any], own_pid: Optional[int]):
        """A finding when other processes leave less than GPU_FREE_MIN_FRACTION of a GPU's memory free."""
        mem = dev.get("memory") or {}
        total, free = mem.get("total"), mem.get("free")
        if not total or free is None or free >= GPU_FREE_MIN_FRACTION * total:
            return None
        others = sorted((p for p in dev.get("processes") or [] if p.get("pid") != own_pid),
                        key=lambda p: -(p.get("used_bytes") or 0))
        holders = "; ".join(f"process {p['pid']}" + (f" ({p['name']})" if p.get("name") else "")
                            + f" holds {_gib(p.get('used_bytes'))}" for p in others[:5])
        if len(others) > 5:
            holders += f"; and {len(others) - 5} more"
        lines = [f"nvmlDeviceGetMemoryInfo(GPU {dev.get('index')}): total {total}, free {free}, used {mem.get('used')}"]
        lines += [f"nvmlDeviceGetComputeRunningProcesses: pid {p['pid']} used {p.get('used_bytes')} "
                  f"{p.get('name') or ''}".rstrip() for p in others]
        return ctx.finding(
            "gpu-memory-held-by-other-processes", "processes" if others else "unknown", evidence="\n".join(lines),
            index=dev.get("index"), name=dev.get("name") or "?", free=_gib(free), total=_gib(total),
            percent=f"{100.0 * free / total:.1f}", threshold=f"{100 * GPU_FREE_MIN_FRACTION:.0f}", holders=holders,
            pids=", ".join(str(p["pid"]) for p in others))

    @staticmethod
    def _mismatch(ctx: Context, facts, kernel: Optional[str], params) -> List:
        if not kernel:
            return []
        pairs = [("libnvidia-ml.so.1", facts["path"], facts["path_version"]),
                 ("NVML's driver version", None, facts["driver_version"])]
        cuda_path = facts["libcuda_path"] or ""
        if "/compat/" not in cuda_path:  # forward-compat libcuda is newer by design (cuda.driver_api judges it)
            pairs.append(("libcuda.so.1", cuda_path, facts["libcuda_path_version"]))
        wrong = [(name, path, v) for name, path, v in pairs if v and v != kernel]
        if not wrong:
            return []
        desc = "; ".join(f"{name} is {v}" + (f" ({path})" if path else "") for name, path, v in wrong)
        return [ctx.finding(
            "driver-library-mismatch", "versions", libraries=desc,
            evidence="\n".join([f"/proc/driver/nvidia/version: {kernel}"] +
                               [f"{name}: {v} {path or ''}".rstrip() for name, path, v in wrong]), **params)]

def visible_count(parsed: Mapping[str, Any], n: int,
                  uuids: Sequence[Optional[str]]) -> Tuple[Optional[int], Optional[str]]:
    """How many of ``n`` GPUs torch and CUDA will see, and the entry that cut the list short.

    Mirrors torch's ``_device_count_nvml``: ordinals are trimmed at the first one >= n; UUID
    prefixes map to the unique GPU they start; a duplicate GPU empties the list. MIG entries
    are resolved by CUDA itself: (None, None).
    """
    kind = parsed.get("kind")
    entries = list(parsed.get("entries") or [])
    if kind == "all":
        return n, None
    if kind == "mig":
        return None, None
    if kind == "uuids":
        if not uuids or any(u is None for u in uuids):
            return None, None
        ordinals: List[int] = []
        for cand in entries:
            hits = [i for i, u in enumerate(uuids) if u.startswith(cand)]
            if len(hits) != 1:
                return len(ordinals), cand
            if hits[0] in ordinals:
                return 0, cand
            ordinals.append(hits[0])
        return len(ordinals), None
    for idx, val in enumerate(entries):
        if val >= n:
            return idx, str(val)
    return len(entries), None


def compute_modes(nvml: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Each NVML device's compute mode, ``[{"index": 0, "mode": "DEFAULT"}, ...]`` (mode None where
    NVML could not read it or the facts predate it); [] without NVML devices."""
    return [{"index": d.get("index"), "mode": d.get("compute_mode")} for d in nvml.get("devices") or []
            if isinstance(d, Mapping)]


class VisibleDevices(Check):
    """CUDA_VISIBLE_DEVICES, parsed exactly as torch and CUDA parse it, against the GPUs NVML
    sees. An empty value, a repeated entry or a wrong index hides GPUs as completely as having
    none."""

    id = "gpu.visible_devices"
    title = "CUDA_VISIBLE_DEVICES selection"
    layer = "gpu"
    codes = ("cuda-visible-devices-hides-gpus",)
    facts = _facts.GpuVisibleDevicesFacts
    requires = ("gpu.nvml",)
    probe = "gpu.visible_devices"
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 10.0

    def evaluate(self, facts, ctx):
        verdict = self._judge(facts, ctx)
        # passed on to the GPU checks (cuda.driver_api, torch.cuda): a GPU in an exclusive compute
        # mode says 'busy or unavailable' to a second process, as a context short of descriptors does
        modes = compute_modes(ctx.dep("gpu.nvml"))
        return dataclasses.replace(verdict, facts=dict(verdict.facts, compute_modes=modes))

    def _judge(self, facts, ctx):
        nvml = ctx.dep("gpu.nvml")
        raw = facts["cuda_visible_devices"]
        parsed = facts["parsed"] or {}
        n = nvml.get("device_count") if nvml.get("loaded") and not nvml.get("init_error") else None
        source = "NVML"
        if n is None and facts["gpu_nodes"]:
            n, source = facts["gpu_nodes"], "/dev/nvidia<N> nodes"
        shown = "unset" if raw is None else repr(raw)
        if not n:
            nvd = facts["nvidia_visible_devices"]
            extra = f"; NVIDIA_VISIBLE_DEVICES={nvd!r}" if nvd is not None else ""
            return ctx.skip(f"no GPU to select from (CUDA_VISIBLE_DEVICES {shown}{extra})", gpu_count=n,
                            visible_count=0)
        uuids = [d.get("uuid") for d in nvml.get("devices") or []] if source == "NVML" else []
        seen, cut = visible_count(parsed, n, uuids)
        if seen is None:
            return ctx.ok(f"CUDA_VISIBLE_DEVICES={shown}: {parsed.get('kind')} entries, resolved by CUDA itself "
                          f"({n} GPU(s) per {source})", gpu_count=n, visible_count=None)
        suggested = ",".join(str(i) for i in range(n))
        if seen == 0:
            if raw == "":
                variant = "empty"
            elif parsed.get("duplicate") is not None:
                variant = "duplicate"
            elif cut is not None and parsed.get("kind") == "uuids":
                variant = "uuid"
            elif cut is not None:
                variant = "index"
            else:
                variant = "not-index"
            named = source == "NVML" and nvml.get("devices")
            finding = ctx.finding(
                "cuda-visible-devices-hides-gpus", [variant, "hides-all-named" if named else "hides-all", "no-device"],
                raw=repr(raw), duplicate=repr(parsed.get("duplicate")), cut=repr(cut) if variant == "uuid" else cut,
                n=n, last=n - 1, stopped_at=repr(parsed.get("stopped_at")), source=source,
                devices=_devices_text(nvml.get("devices") or []),
                evidence=f"CUDA_VISIBLE_DEVICES={raw!r} -> parsed {parsed.get('entries')!r} "
                         f"({parsed.get('kind')}); {source}: {n} GPU(s)",
                suggested_visible=suggested)
            return ctx.verdict(f"CUDA_VISIBLE_DEVICES={raw!r} hides all {n} GPU(s)", finding, gpu_count=n,
                               visible_count=0)
        listed = len(raw.split(",")) if raw else n
        ignored = cut if cut is not None else (parsed.get("stopped_at") if listed > seen else None)
        if ignored is not None and listed > seen:
            finding = ctx.finding(
                "cuda-visible-devices-hides-gpus", "cut-short", raw=repr(raw), listed=listed, seen=seen,
                ignored=repr(ignored), n=n, source=source,
                evidence=f"parsed {parsed.get('entries')!r}, {source}: {n} GPU(s)", severity=Severity.DEGRADED,
                suggested_visible=suggested)
            return ctx.verdict(f"{seen} of {n} GPU(s) visible; entries from {ignored!r} on ignored", finding,
                               gpu_count=n, visible_count=seen)
        if raw is None:
            return ctx.ok(f"all {n} GPU(s) visible (CUDA_VISIBLE_DEVICES unset)", gpu_count=n, visible_count=seen)
        return ctx.ok(f"{seen} of {n} GPU(s) visible (CUDA_VISIBLE_DEVICES={raw!r})", gpu_count=n,
                      visible_count=seen)


# --------------------------------------------------------------------------- NVLink fabric
# On NVSwitch boards (HGX/DGX) each GPU must be registered with the fabric by the Fabric
# Manager before CUDA can use it, and every GPU pair should have the same number of NVLinks.
# Read from nvidia-smi alone, so it answers even when cuInit fails (error 802, "system not
# yet initialized"), which is exactly when it is needed: cuda.driver_api requires this check,
# so that failure nests under it.

def _gpus(items: List[Mapping[str, Any]]) -> str:
    return ", ".join(str(g.get("index", g.get("bus_id", "?"))) for g in items)


def _fm(pids: Optional[List[int]]) -> str:
    if pids:
        return "running (pid %s)" % ", ".join(map(str, pids))
    return "not visible from here (it runs on the host or in the GPU operator's driver container)"


class NvlinkFabric(Check):
    """Per-GPU fabric state and status from ``nvidia-smi`` (``--query-gpu fabric.state`` and the
    ``Fabric`` section of ``-q``), a running ``nv-fabricmanager``, and the NVLink counts of
    ``nvidia-smi topo -m``. Skips where there is no fabric (one GPU, PCIe boards, drivers that
    report 'Not Supported')."""

    id = "gpu.nvlink_fabric"
    title = "NVLink fabric (NVSwitch registration, links)"
    layer = "gpu"
    requires = ("gpu.nvml",)
    codes = ("fabric-not-ready", "fabric-registration-failed", "fabric-unhealthy", "nvlink-degraded")
    facts = _facts.GpuNvlinkFabricFacts
    probe = "fabric.nvlink_fabric"
    exclusive = "nvidia-driver"  # cuInit, nvmlInit, nvidia-smi: one after another
    timeout = 45.0

    def evaluate(self, facts, ctx):
        if not facts["nvidia_smi"]:
            return ctx.skip("not applicable: nvidia-smi is not on PATH")
        gpus: List[Dict[str, Any]] = [dict(g) for g in facts.get("gpus") or []]
        sections = facts.get("sections") or []
        for g, s in zip(gpus, sections):  # nvidia-smi -q lists GPUs in index order
            g.setdefault("health_summary", s.get("health_summary"))
        if not gpus and sections:  # older nvidia-smi without the fabric.* query fields
            gpus = [dict(s, index=i) for i, s in enumerate(sections)]
        topo = (facts.get("topology") or {}).get("stdout") or ""
        layout = nvlink_layout(topology_matrix(topo))
        findings = []
        waiting = [g for g in gpus if g.get("state") in ("Not Started", "In Progress")]
        if waiting:
            states = sorted({g["state"] for g in waiting})
            findings.append(ctx.finding("fabric-not-ready", gpus=_gpus(waiting), state="' / '".join(states),
                                        fm=_fm(facts["fabric_manager_pids"]),
                                        evidence=(facts.get("query") or {}).get("stdout", "")))
        failed = [g for g in gpus if g.get("state") == "Completed" and g.get("status") not in ("Success", "N/A", None)]
        if failed:
            findings.append(ctx.finding("fabric-registration-failed", gpus=_gpus(failed),
                                        status=" / ".join(sorted({g["status"] for g in failed})),
                                        evidence=(facts.get("query") or {}).get("stdout", "")))
        sick = [g for g in gpus if (g.get("health_summary") or "").lower() == "unhealthy"]
        if sick:
            findings.append(ctx.finding("fabric-unhealthy", gpus=_gpus(sick)))
        weak = [(p, "NV?") for p in layout["weak"]] + [(p, "no NVLink") for p in layout["not_nvlink"]]
        if weak:
            links = topology_matrix(topo)["links"]
            pairs = ", ".join(f"GPU{a}-GPU{b} ({links.get((a, b), kind)})" for (a, b), kind in weak)
            findings.append(ctx.finding("nvlink-degraded", pairs=pairs, common=layout["common"],
                                        evidence="nvidia-smi topo -m:\n" + topo.rstrip()))
        registered = [g for g in gpus if g.get("state") == "Completed"]
        derived = {"fabric_gpus": len(registered), "nvlink_layout": layout["kind"], "nvlink_common": layout["common"]}
        if findings:
            return ctx.verdict(f"NVLink fabric: {len(findings)} problem(s)", *findings, **derived)
        if registered:
            return ctx.ok(f"{len(registered)} GPU(s) registered with the NVLink fabric"
                          + (f", every pair {layout['common']}" if layout["kind"] == "all-nvlink" else ""), **derived)
        if layout["kind"] == "all-nvlink":
            return ctx.ok(f"no NVSwitch fabric reported; every GPU pair joined by {layout['common']}", **derived)
        n = len(gpus) or len(topology_matrix(topo)["gpus"])
        return ctx.skip(f"not applicable: no NVLink fabric here ({n} GPU(s), fabric state "
                        f"{', '.join(sorted({g.get('state') or '?' for g in gpus})) or 'not reported'})", **derived)
