"""GPU layer: is there an NVIDIA driver, can this process open the GPU, what NVML sees,
and which GPUs CUDA_VISIBLE_DEVICES leaves visible.

The four checks form a chain (kernel driver -> device nodes -> NVML -> visible devices), so
one missing driver is reported once, as the root, and everything above it nests under it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, Context, Verdict
from .multi_gpu import nvlink_layout, topology_matrix

#: container kinds whose runtime takes the NVIDIA Container Toolkit's --gpus/CDI options
TOOLKIT_RUNTIMES = {"docker": "docker", "podman": "podman"}
_IN_CONTAINER = {"docker", "podman", "kubernetes", "lxc", "systemd-nspawn", "apptainer"}


def _branch(version: Optional[str]) -> Optional[str]:
    return version.split(".")[0] if version else None


def _where(kind: Optional[str]) -> str:
    return f" in this {kind} container" if kind in _IN_CONTAINER else ""


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
        ver = facts.get("driver_version")
        modules = facts.get("modules") or []
        wsl = facts.get("wsl") or {}
        kind = facts.get("container")
        if ver:
            flavour = facts.get("module_flavour")
            extra = f", {flavour} kernel module" if flavour else ""
            return ctx.ok(f"NVIDIA driver {ver}{extra}", driver_branch=_branch(ver))
        if "nvidia" in modules:
            return ctx.ok("nvidia kernel module loaded (/proc/driver/nvidia/version not readable: version unknown)")
        if wsl.get("dxg") and wsl.get("libcuda"):
            return ctx.ok("WSL2 GPU paravirtualisation: /dev/dxg and /usr/lib/wsl/lib/libcuda.so.1 "
                          "(the Windows host's driver)", wsl=True)
        if facts.get("nvidiactl_exists"):
            return ctx.ok("/dev/nvidiactl present but /proc/driver/nvidia is not visible here: driver version unknown")
        evidence = "\n".join([
            "/proc/driver/nvidia/version: " + ("absent" if facts.get("proc_version_text") is None else "unparsable"),
            "/proc/modules nvidia*: " + (", ".join(modules) or "none") if facts.get("modules") is not None
            else "/proc/modules: not readable",
            "/dev/nvidiactl: absent",
            "/dev/dxg (WSL2): " + ("present" if wsl.get("dxg") else "absent"),
            "PCI NVIDIA display controllers: " + _pci_text(facts.get("pci_gpus")),
            f"kernel: {facts.get('kernel')}, container: {kind}",
        ])
        pci = facts.get("pci_gpus")
        if wsl.get("dxg"):
            message = ("This is WSL2 (/dev/dxg exists) but /usr/lib/wsl/lib/libcuda.so.1 is missing: the Windows "
                       "NVIDIA driver is not installed or too old to expose CUDA to WSL.")
        else:
            message = ("No NVIDIA kernel driver is loaded or visible: /proc/driver/nvidia/version is absent, "
                       "/proc/modules lists no nvidia module, and there is neither /dev/nvidiactl nor WSL2's "
                       f"/dev/dxg{_where(kind)}.")
        if pci is None:
            message += " The PCI bus is not readable here, so whether the machine has an NVIDIA GPU is unknown."
        elif not pci:
            message += " The PCI bus shows no NVIDIA GPU either: this machine has no GPU visible to it."
        else:
            message += (f" Yet the PCI bus shows NVIDIA GPU hardware ({_pci_text(pci)}): the driver is not "
                        "installed or not loaded.")
        message += (" So no GPU is visible to this environment: CUDA cannot initialise, torch.cuda.is_available() "
                    "is False, Triton kernels cannot launch ('0 active drivers') and FLA falls back to CPU or "
                    "fails at its first kernel.")
        params: Dict[str, Any] = {}
        if pci:
            params["pci_gpu"] = _pci_text(pci)
        return ctx.verdict("no NVIDIA driver: no GPU is visible", ctx.finding(
            "no-nvidia-driver", message=message, evidence=evidence, **params))


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
        ctl = facts.get("nvidiactl") or {}
        gpus = [g for g in facts.get("gpus") or [] if g.get("exists")]
        uvm = facts.get("uvm") or {}
        kind = facts.get("container")
        dxg = (facts.get("dxg") or {}).get("exists")
        if dxg and not ctl.get("exists") and not gpus:
            return ctx.ok("WSL2: the GPU is reached through /dev/dxg (no /dev/nvidia* nodes are used)")
        if driver_status is Status.FAIL and not ctl.get("exists") and not gpus:
            # no driver, so nothing creates the nodes: a symptom of gpu.kernel_driver, not a second cause
            return Verdict(Status.FAIL, "no /dev/nvidia* device nodes: there is no NVIDIA driver to create them")
        majors = facts.get("proc_devices") or {}
        env = facts.get("env") or {}
        if not ctl.get("exists") or not gpus:
            return ctx.verdict("NVIDIA device nodes missing", self._missing(ctx, facts, driver, ctl, gpus, kind,
                                                                             majors, env))
        findings = []
        on_demand = self._uvm_on_demand(facts) if not uvm.get("exists") else None
        if not uvm.get("exists") and not on_demand:
            modules = facts.get("modules")
            if modules is None:
                state = "whether the nvidia_uvm module is loaded is unknown (/proc/modules not readable)"
            elif "nvidia_uvm" in modules:
                state = ("the nvidia_uvm module is loaded" +
                         (f" (major {majors['nvidia-uvm']} in /proc/devices)" if "nvidia-uvm" in majors else "") +
                         ", but the node was never created here" +
                         (f" or not passed into this {kind} container" if kind in _IN_CONTAINER else ""))
            else:
                state = "the nvidia_uvm kernel module is not loaded"
            findings.append(ctx.finding(
                "nvidia-uvm-missing",
                message=f"/dev/nvidiactl and {len(gpus)} GPU node(s) exist, but /dev/nvidia-uvm does not; {state}. "
                "NVML and nvidia-smi will still list the GPUs, but cuInit fails with CUDA error 999 (unknown "
                "error) and torch warns 'CUDA unknown error' and reports CUDA unavailable. Nothing here can "
                "create it at first use: this process is not root and there is no setuid-root "
                "/usr/bin/nvidia-modprobe.",
                evidence="\n".join([_node_line(n) for n in [ctl] + gpus + [uvm]] +
                                    [f"nvidia-modprobe: {(facts.get('nvidia_modprobe') or {}).get('path') or 'absent'}",
                                     f"euid: {facts.get('uid')}"])))
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
                "gpu-access-revoked",
                message=f"Opening {paths} read-write fails with 'Operation not permitted' although the file modes allow "
                f"this user{_where(kind)}: the device cgroup denies the GPU. CUDA and NVML fail ('Failed to "
                "initialize NVML: Unknown Error', CUDA error 999) until the container is restarted.",
                evidence="\n".join(_node_line(n) for n in revoked)))
        if denied:
            first = denied[0]
            user = facts.get("user") or f"uid {facts.get('uid')}"
            groups = facts.get("groups") or []
            group = first.get("group")
            findings.append(ctx.finding(
                "device-permission-denied",
                message=f"{', '.join(n['path'] for n in denied)} cannot be opened read-write by {user} (groups "
                f"{', '.join(map(str, groups)) or 'none'}): {first['path']} is {first.get('mode')} owned by "
                f"uid {first.get('uid')}, gid {first.get('gid')}{f' ({group})' if group else ''}. CUDA sees no "
                "usable GPU, so torch reports CUDA unavailable.",
                evidence="\n".join(_node_line(n) for n in denied),
                user=facts.get("user"), device_group=group))
        tools = "" if (facts.get("uvm_tools") or {}).get("exists") else " (no /dev/nvidia-uvm-tools: profilers " \
                                                                         "such as Nsight/CUPTI will not work)"
        summary = (f"/dev/nvidiactl, {len(gpus)} GPU node(s) ({', '.join(g['path'].rsplit('/', 1)[-1] for g in gpus)})"
                   f"{', /dev/nvidia-uvm' if uvm.get('exists') else ''}")
        if findings:
            return ctx.verdict(summary + ": " + ", ".join(f.code for f in findings), *findings)
        if on_demand:
            return ctx.ok(summary + f" present and openable read-write; /dev/nvidia-uvm absent, but {on_demand} "
                          "can create it at the first CUDA call (cuda.driver_api shows whether it did)",
                          uvm_on_demand=True)
        return ctx.ok(summary + " present and openable read-write" + tools)

    @staticmethod
    def _uvm_on_demand(facts) -> Optional[str]:
        """Who would create /dev/nvidia-uvm when libcuda asks for it, or None. libcuda runs the
        setuid-root nvidia-modprobe (or, as root, creates the node itself) when nvidia_uvm is
        available; a container's device cgroup can still forbid it, which cuInit then shows."""
        modules = facts.get("modules")
        if modules is not None and "nvidia_uvm" not in modules and "nvidia-uvm" not in (facts.get("proc_devices") or {}):
            return None
        if facts.get("uid") == 0:
            return "this process (root)"
        mp = facts.get("nvidia_modprobe") or {}
        if mp.get("setuid_root"):
            return f"the setuid-root {mp.get('path')}"
        return None

    def _missing(self, ctx: Context, facts, driver, ctl, gpus, kind, majors, env):
        missing = [p for p, ok in (("/dev/nvidiactl", ctl.get("exists")), ("/dev/nvidia<N>", bool(gpus))) if not ok]
        ver = driver.get("driver_version")
        nvd = env.get("NVIDIA_VISIBLE_DEVICES")
        message = (f"The NVIDIA kernel driver{' ' + ver if ver else ''} is loaded"
                   f"{' on the host' if kind in _IN_CONTAINER else ''}, but {' and '.join(missing)} "
                   f"{'is' if len(missing) == 1 else 'are'} missing{_where(kind)}. ")
        if kind in ("docker", "podman"):
            message += f"The {kind} container was started without a GPU (no --gpus / CDI device). "
        elif kind == "kubernetes":
            message += "The pod requests no GPU (resources.limits nvidia.com/gpu) or the device plugin is missing. "
        elif kind == "lxc":
            message += "The LXC container's config does not bind the NVIDIA device nodes. "
        elif kind == "apptainer":
            message += "Apptainer/Singularity was run without --nv. "
        else:
            message += "On a bare host the nodes are created by nvidia-modprobe or udev when the driver loads. "
        if nvd is not None and nvd.strip().lower() in ("void", "none", ""):
            message += f"NVIDIA_VISIBLE_DEVICES={nvd!r} tells the container runtime to inject no GPU. "
        message += ("CUDA cannot open a GPU: torch reports 'Found no NVIDIA driver' or CUDA error 100, and "
                    "everything above it fails.")
        params: Dict[str, Any] = {}
        if kind in TOOLKIT_RUNTIMES:
            params["container_runtime"] = TOOLKIT_RUNTIMES[kind]
        if kind == "lxc":
            params["lxc_uvm_major"] = majors.get("nvidia-uvm")
            params["lxc_name"] = facts.get("hostname")
        evidence = "\n".join([_node_line(ctl)] + [_node_line(g) for g in gpus] +
                             [f"/proc/devices: {majors}", f"container: {kind} ({'; '.join(facts.get('container_signals') or [])})",
                              f"NVIDIA_VISIBLE_DEVICES={nvd!r}"])
        return ctx.finding("device-nodes-missing", message=message, evidence=evidence, **params)


def _devices_text(devices: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{d.get('name') or '?'} (cc {d.get('cc') or '?'})" for d in devices)


class Nvml(Check):
    """NVML through ctypes (libnvidia-ml.so.1): driver version, GPU names and compute capability.
    Also catches driver libraries whose version differs from the kernel module's."""

    id = "gpu.nvml"
    title = "NVML (libnvidia-ml) and driver library versions"
    layer = "gpu"
    codes = ("nvml-unavailable", "driver-library-mismatch")
    facts = _facts.GpuNvmlFacts
    requires = ("gpu.device_nodes",)
    probe = "gpu.nvml"
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 20.0

    def evaluate(self, facts, ctx):
        nodes_ok = ctx.dep_status.get("gpu.device_nodes") in (Status.PASS, Status.WARN, None)
        kernel = facts.get("kernel_driver_version")
        params = {"driver_branch": _branch(kernel), "kernel_driver_version": kernel}
        findings = []
        mismatch = self._mismatch(ctx, facts, kernel, params)
        if not facts.get("loaded"):
            sev = Severity.DEGRADED if nodes_ok else Severity.BLOCKING
            consequence = ("nvidia-smi and GPU monitoring do not work and torch's NVML-based device count falls "
                           "back to CUDA; CUDA itself may still work (see cuda.driver_api)." if nodes_ok else
                           "Without a usable driver, no GPU can be listed.")
            findings.append(ctx.finding(
                "nvml-unavailable", message=f"libnvidia-ml.so.1 cannot be loaded: {facts.get('load_error')}. {consequence}",
                evidence=facts.get("load_error") or "", severity=sev, **params))
            return ctx.verdict("NVML unavailable: libnvidia-ml.so.1 not loadable", *findings, *mismatch)
        err = facts.get("init_error")
        if err:
            text = f"{err.get('name')} ({err.get('code')}): {err.get('message')}"
            if err.get("code") == 18:
                findings.append(ctx.finding(
                    "driver-library-mismatch",
                    message=f"nvmlInit fails with {text}: libnvidia-ml.so.1 ({facts.get('path')}) is not the version of "
                    f"the loaded kernel module ({kernel or 'unknown'}). nvidia-smi fails with 'Driver/library "
                    "version mismatch' and CUDA fails to initialise (803 or 'driver version is insufficient').",
                    evidence=text, **params))
            else:
                sev = Severity.DEGRADED if nodes_ok else Severity.BLOCKING
                hint = ""
                if err.get("code") == 999 and ctx.dep("gpu.device_nodes").get("container") in _IN_CONTAINER:
                    hint = (" In a container, 'Unknown Error' is the known symptom of lost device access after a "
                            "'systemctl daemon-reload' on the host; restarting the container restores it.")
                findings.append(ctx.finding(
                    "nvml-unavailable",
                    message=f"libnvidia-ml.so.1 ({facts.get('path')}) loads but nvmlInit fails with {text}; nvidia-smi "
                    f"reports 'Failed to initialize NVML'.{hint}", evidence=text, severity=sev, **params))
            return ctx.verdict(f"nvmlInit failed: {err.get('name')}", *findings, *(
                m for m in mismatch if err.get("code") != 18))
        devices = facts.get("devices") or []
        count = facts.get("device_count")
        summary = (f"NVML {facts.get('nvml_version') or '?'}, driver {facts.get('driver_version') or '?'}: "
                   f"{count if count is not None else '?'} GPU(s)" + (f": {_devices_text(devices)}" if devices else ""))
        return ctx.verdict(summary, *mismatch)

    @staticmethod
    def _mismatch(ctx: Context, facts, kernel: Optional[str], params) -> List:
        if not kernel:
            return []
        pairs = [("libnvidia-ml.so.1", facts.get("path"), facts.get("path_version")),
                 ("NVML's driver version", None, facts.get("driver_version"))]
        cuda_path = facts.get("libcuda_path") or ""
        if "/compat/" not in cuda_path:  # forward-compat libcuda is newer by design (cuda.driver_api judges it)
            pairs.append(("libcuda.so.1", cuda_path, facts.get("libcuda_path_version")))
        wrong = [(name, path, v) for name, path, v in pairs if v and v != kernel]
        if not wrong:
            return []
        desc = "; ".join(f"{name} is {v}" + (f" ({path})" if path else "") for name, path, v in wrong)
        return [ctx.finding(
            "driver-library-mismatch",
            message=f"The kernel module is NVIDIA {kernel} (/proc/driver/nvidia/version) but {desc}. User-space driver "
            "libraries must be the kernel module's exact version: NVML fails with 'Driver/library version "
            "mismatch' and CUDA with error 803 or 'CUDA driver version is insufficient'.",
            evidence="\n".join([f"/proc/driver/nvidia/version: {kernel}"] +
                               [f"{name}: {v} {path or ''}".rstrip() for name, path, v in wrong]), **params)]


def visible_count(parsed: Mapping[str, Any], n: int, uuids: Sequence[Optional[str]]) -> Tuple[Optional[int], Optional[str]]:
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
        nvml = ctx.dep("gpu.nvml")
        raw = facts.get("cuda_visible_devices")
        parsed = facts.get("parsed") or {}
        n = nvml.get("device_count") if nvml.get("loaded") and not nvml.get("init_error") else None
        source = "NVML"
        if n is None and facts.get("gpu_nodes"):
            n, source = facts["gpu_nodes"], "/dev/nvidia<N> nodes"
        shown = "unset" if raw is None else repr(raw)
        if not n:
            nvd = facts.get("nvidia_visible_devices")
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
                why = "is set to the empty string, which means 'no GPU'"
            elif parsed.get("duplicate") is not None:
                why = f"repeats the entry {parsed['duplicate']!r}, and a repeated entry empties the whole list"
            elif cut is not None and parsed.get("kind") == "uuids":
                why = f"starts with {cut!r}, which matches no single GPU UUID here"
            elif cut is not None:
                why = f"starts with device {cut}, but there are only {n} GPU(s) (indices 0-{n - 1})"
            else:
                why = f"starts with {parsed.get('stopped_at')!r}, which is not a device index"
            finding = ctx.finding(
                "cuda-visible-devices-hides-gpus",
                message=f"CUDA_VISIBLE_DEVICES={raw!r} {why}. It hides all {n} GPU(s) that {source} sees"
                f"{': ' + _devices_text(nvml.get('devices') or []) if source == 'NVML' and nvml.get('devices') else ''}. "
                "CUDA reports no device (cuInit: CUDA_ERROR_NO_DEVICE), torch.cuda.is_available() is False and "
                "Triton raises '0 active drivers', exactly as on a machine without a GPU.",
                evidence=f"CUDA_VISIBLE_DEVICES={raw!r} -> parsed {parsed.get('entries')!r} "
                         f"({parsed.get('kind')}); {source}: {n} GPU(s)",
                suggested_visible=suggested)
            return ctx.verdict(f"CUDA_VISIBLE_DEVICES={raw!r} hides all {n} GPU(s)", finding, gpu_count=n,
                               visible_count=0)
        listed = len(raw.split(",")) if raw else n
        ignored = cut if cut is not None else (parsed.get("stopped_at") if listed > seen else None)
        if ignored is not None and listed > seen:
            finding = ctx.finding(
                "cuda-visible-devices-hides-gpus",
                message=f"CUDA_VISIBLE_DEVICES={raw!r} lists {listed} entries but only {seen} GPU(s) are visible: parsing "
                f"stops at {ignored!r} (not a usable device; {n} GPU(s) here per {source}), and every entry after "
                "it is silently ignored.",
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
    timeout = 45.0

    def evaluate(self, facts, ctx):
        if not facts.get("nvidia_smi"):
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
                                        fm=_fm(facts.get("fabric_manager_pids")),
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
