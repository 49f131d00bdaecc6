"""GPU facts: NVIDIA kernel driver, device nodes, NVML, CUDA_VISIBLE_DEVICES.

Standard library only; Python 3.8+. Every function that reads the file system takes
``root`` (default "/") so tests can point it at a fake /proc, /dev and /sys tree; the
probes read it from ``inp["options"]["root"]``. Libraries are loaded with ctypes by
soname, so LD_LIBRARY_PATH decides which ``libnvidia-ml.so.1`` is used, exactly as for
torch and nvidia-smi.
"""

import ctypes
import errno
import os
import re
import socket
import stat

import _stackpeel_probe__common as common  # loaded by the runner


def _path(root, path):
    return os.path.join(root, path.lstrip("/"))


def _read(root, path, limit=1 << 20):
    try:
        with open(_path(root, path), "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except (OSError, IOError):
        return None


def _options(inp):
    opts = (inp or {}).get("options") or {}
    return opts, opts.get("root") or "/"


# --- kernel driver -------------------------------------------------------------

_NVRM = re.compile(r"NVRM version:\s*(.*?Kernel Module(?:\s+for\s+\S+)?)\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)")


def parse_nvrm_version(text):
    """(version, flavour) from /proc/driver/nvidia/version, e.g. ("580.159.04", "open")."""
    if not text:
        return None, None
    m = _NVRM.search(text)
    if not m:
        m2 = re.search(r"NVRM version:.*?\s([0-9]{3,}\.[0-9]+(?:\.[0-9]+)?)\s", text)
        return (m2.group(1) if m2 else None), None
    flavour = "open" if "Open Kernel Module" in m.group(1) else "proprietary"
    return m.group(2), flavour


def loaded_modules(root="/"):
    """Names of nvidia* kernel modules in /proc/modules (None if it cannot be read)."""
    text = _read(root, "/proc/modules")
    if text is None:
        return None
    return sorted(line.split()[0] for line in text.splitlines() if line.split() and line.startswith("nvidia"))


def char_majors(root="/"):
    """Character-device majors of NVIDIA drivers from /proc/devices ({"nvidia-uvm": 238, ...})."""
    text = _read(root, "/proc/devices")
    if text is None:
        return None
    out = {}
    section = None
    for line in text.splitlines():
        if line.strip().endswith("devices:"):
            section = line.strip()
            continue
        parts = line.split()
        if section == "Character devices:" and len(parts) == 2 and parts[0].isdigit() and "nvidia" in parts[1]:
            out[parts[1]] = int(parts[0])
    return out


def pci_nvidia_gpus(root="/"):
    """NVIDIA display/3D controllers on the PCI bus from /sys (None if /sys is not readable)."""
    base = _path(root, "/sys/bus/pci/devices")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return None
    out = []
    for name in names:
        vendor = (_read(root, "/sys/bus/pci/devices/%s/vendor" % name) or "").strip().lower()
        if vendor != "0x10de":
            continue
        cls = (_read(root, "/sys/bus/pci/devices/%s/class" % name) or "").strip().lower()
        if not cls.startswith("0x03"):  # 0x0300 VGA, 0x0302 3D controller; not NVSwitch bridges or audio
            continue
        device = (_read(root, "/sys/bus/pci/devices/%s/device" % name) or "").strip().lower()
        driver = None
        try:
            driver = os.path.basename(os.readlink(os.path.join(base, name, "driver")))
        except OSError:
            pass
        out.append({"address": name, "id": "10de:%s" % device.replace("0x", ""), "class": cls, "driver": driver})
    return out


def container(root="/"):
    """(kind, signals) from the system probe; ("unknown", [error]) if it cannot tell."""
    try:
        kind, signals = common.sibling("system").container_kind(root=root)
        return kind, signals
    except Exception as exc:  # the system probe is another module's: never let it break this one
        return "unknown", ["%s: %s" % (type(exc).__name__, exc)]


def kernel_driver_facts(root="/"):
    proc_text = _read(root, "/proc/driver/nvidia/version")
    version, flavour = parse_nvrm_version(proc_text)
    wsl_dir = _path(root, "/usr/lib/wsl/lib")
    kind, signals = container(root)
    return {
        "proc_version_text": common.clip(proc_text, 2000) if proc_text is not None else None,
        "driver_version": version,
        "module_flavour": flavour,
        "modules": loaded_modules(root),
        "proc_devices": char_majors(root),
        "nvidiactl_exists": os.path.exists(_path(root, "/dev/nvidiactl")),
        # a node left behind with no driver behind it (the module unloaded, a node copied into a
        # container from another host) exists but opens with ENXIO or ENODEV
        "nvidiactl_open_error": (node_facts(_path(root, "/dev/nvidiactl")).get("open_error") or {}).get("errno"),
        "wsl": {
            "dxg": os.path.exists(_path(root, "/dev/dxg")),
            "lib_dir": os.path.isdir(wsl_dir),
            "libcuda": os.path.exists(os.path.join(wsl_dir, "libcuda.so.1")),
        },
        "pci_gpus": pci_nvidia_gpus(root),
        "kernel": (_read(root, "/proc/sys/kernel/osrelease") or "").strip() or None,
        "container": kind,
        "container_signals": signals,
    }


def kernel_driver(inp):
    _, root = _options(inp)
    return kernel_driver_facts(root)


# --- device nodes --------------------------------------------------------------

_RW = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def node_facts(path, try_open=True):
    """What a device node is and whether this process can open it read-write."""
    out = {"path": path, "exists": False, "type": None, "major": None, "minor": None, "mode": None,
           "uid": None, "gid": None, "group": None, "access_rw": None, "open_error": None}
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            out["open_error"] = {"errno": errno.errorcode.get(exc.errno, str(exc.errno)), "message": str(exc)}
        return out
    out["exists"] = True
    if stat.S_ISCHR(st.st_mode):
        out["type"] = "char"
        out["major"], out["minor"] = os.major(st.st_rdev), os.minor(st.st_rdev)
    elif stat.S_ISDIR(st.st_mode):
        out["type"] = "dir"
    elif stat.S_ISREG(st.st_mode):
        out["type"] = "file"
    else:
        out["type"] = "other"
    out["mode"] = stat.filemode(st.st_mode)
    out["uid"], out["gid"] = st.st_uid, st.st_gid
    try:
        import grp
        out["group"] = grp.getgrgid(st.st_gid).gr_name
    except (ImportError, KeyError):
        pass
    out["access_rw"] = os.access(path, os.R_OK | os.W_OK)
    if try_open and out["type"] in ("char", "file"):
        try:
            fd = os.open(path, _RW)
        except OSError as exc:
            out["open_error"] = {"errno": errno.errorcode.get(exc.errno, str(exc.errno)), "message": str(exc)}
        else:
            os.close(fd)
    return out


def _gpu_node_names(root):
    try:
        names = os.listdir(_path(root, "/dev"))
    except OSError:
        return []
    return sorted((n for n in names if re.match(r"^nvidia[0-9]+$", n)), key=lambda n: int(n[6:]))


def nvidia_modprobe(root="/"):
    """nvidia-modprobe, which the driver libraries run to load nvidia_uvm and create missing
    nodes: where it is and whether it is setuid root (so it works for any user)."""
    path = _path(root, "/usr/bin/nvidia-modprobe")
    if not os.path.exists(path):
        found = common.which("nvidia-modprobe") if root == "/" else None
        path = found or path
    try:
        st = os.stat(path)
    except OSError:
        return {"path": None, "setuid_root": False}
    return {"path": path, "setuid_root": bool(st.st_mode & stat.S_ISUID) and st.st_uid == 0}


def read_only_mount(path):
    """Whether ``path`` lies on a read-only mount (a container's /dev can be one): then nobody,
    root or the setuid nvidia-modprobe, can create a missing node in it. None if unknown."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return None


def device_nodes_facts(root="/", env=None):
    env = os.environ if env is None else env
    dev = lambda name: _path(root, "/dev/" + name)  # noqa: E731
    caps_dir = dev("nvidia-caps")
    try:
        caps = sorted(os.listdir(caps_dir))
    except OSError:
        caps = []
    try:
        switches = sorted(n for n in os.listdir(_path(root, "/dev")) if n.startswith("nvidia-nvswitch"))
    except OSError:
        switches = []
    kind, signals = container(root)
    try:
        import pwd
        user = pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        user = None
    try:
        groups = sorted(set(os.getgroups()))
    except OSError:
        groups = []
    return {
        "nvidiactl": node_facts(dev("nvidiactl")),
        "gpus": [node_facts(dev(n)) for n in _gpu_node_names(root)],
        "uvm": node_facts(dev("nvidia-uvm")),
        "uvm_tools": node_facts(dev("nvidia-uvm-tools"), try_open=False),
        "modeset": node_facts(dev("nvidia-modeset"), try_open=False),
        # MIG capability nodes are root-only by design (nvidia-cap1): record, never open
        "caps": [node_facts(os.path.join(caps_dir, n), try_open=False) for n in caps],
        "nvswitches": len(switches),
        "dxg": node_facts(dev("dxg"), try_open=False),
        "modules": loaded_modules(root),
        "proc_devices": char_majors(root),
        "container": kind,
        "container_signals": signals,
        "hostname": socket.gethostname(),
        "user": user,
        "uid": os.geteuid() if hasattr(os, "geteuid") else None,
        "nvidia_modprobe": nvidia_modprobe(root),
        "dev_read_only": read_only_mount(_path(root, "/dev")),
        "groups": groups,
        "env": {k: env.get(k) for k in ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")},
    }


def device_nodes(inp):
    _, root = _options(inp)
    return device_nodes_facts(root)


# --- shared library helpers ----------------------------------------------------

class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def library_file(lib, symbol):
    """realpath of the file a loaded library came from, via dladdr on one of its symbols,
    falling back to /proc/self/maps. None if neither works."""
    try:
        addr = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    except (AttributeError, TypeError, ValueError):
        addr = None
    if addr:
        for cand in (None, "libdl.so.2", "libc.so.6"):
            try:
                dladdr = ctypes.CDLL(cand).dladdr
            except (OSError, AttributeError):
                continue
            dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
            dladdr.restype = ctypes.c_int
            info = _DlInfo()
            try:
                if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
                    return os.path.realpath(info.dli_fname.decode("utf-8", "replace"))
            except Exception:
                pass
            break
        maps = _read("/", "/proc/self/maps", 1 << 24) or ""
        for line in maps.splitlines():
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/"):
                try:
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                except ValueError:
                    continue
                if lo <= addr < hi:
                    return os.path.realpath(parts[5])
    return None


def version_suffix(path):
    """'580.159.04' from '/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04' (None if there is none)."""
    if not path:
        return None
    m = re.search(r"\.so\.([0-9]+\.[0-9]+(?:\.[0-9]+)?)$", os.path.basename(path))
    return m.group(1) if m else None


def load_library(name):
    """(handle, error text) for ctypes.CDLL(name); the error is dlerror's text verbatim."""
    try:
        return ctypes.CDLL(name), None
    except OSError as exc:
        return None, str(exc)


# --- NVML ----------------------------------------------------------------------

NVML_ERRORS = {
    0: "NVML_SUCCESS", 1: "NVML_ERROR_UNINITIALIZED", 2: "NVML_ERROR_INVALID_ARGUMENT",
    3: "NVML_ERROR_NOT_SUPPORTED", 4: "NVML_ERROR_NO_PERMISSION", 5: "NVML_ERROR_ALREADY_INITIALIZED",
    6: "NVML_ERROR_NOT_FOUND", 7: "NVML_ERROR_INSUFFICIENT_SIZE", 8: "NVML_ERROR_INSUFFICIENT_POWER",
    9: "NVML_ERROR_DRIVER_NOT_LOADED", 10: "NVML_ERROR_TIMEOUT", 11: "NVML_ERROR_IRQ_ISSUE",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND", 13: "NVML_ERROR_FUNCTION_NOT_FOUND", 14: "NVML_ERROR_CORRUPTED_INFOROM",
    15: "NVML_ERROR_GPU_IS_LOST", 16: "NVML_ERROR_RESET_REQUIRED", 17: "NVML_ERROR_OPERATING_SYSTEM",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH", 19: "NVML_ERROR_IN_USE", 20: "NVML_ERROR_MEMORY",
    21: "NVML_ERROR_NO_DATA", 22: "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", 23: "NVML_ERROR_INSUFFICIENT_RESOURCES",
    999: "NVML_ERROR_UNKNOWN",
}


class _Nvml(common.GuardedLib):
    """NVML through ctypes; a missing symbol is recorded, never raised."""

    def error(self, rc):
        out = {"code": rc, "name": NVML_ERRORS.get(rc, "NVML_ERROR_%d" % rc), "message": None}
        f = None
        try:
            f = self.lib.nvmlErrorString
        except AttributeError:
            pass
        if f is not None:
            f.argtypes = [ctypes.c_int]
            f.restype = ctypes.c_char_p
            try:
                msg = f(rc)
                out["message"] = msg.decode("utf-8", "replace") if msg else None
            except Exception:
                pass
        return out

    def string(self, name, *args, **kw):
        """Call an NVML getter that fills a char buffer; (value, error)."""
        size = kw.get("size", 96)
        f = self.fn(name, [type(a) for a in args] + [ctypes.c_char_p, ctypes.c_uint]) if args else \
            self.fn(name, [ctypes.c_char_p, ctypes.c_uint])
        if f is None:
            return None, {"code": None, "name": "symbol missing", "message": name}
        buf = ctypes.create_string_buffer(size)
        rc = f(*(args + (buf, ctypes.c_uint(size))))
        if rc != 0:
            return None, self.error(rc)
        return buf.value.decode("utf-8", "replace"), None


class NvmlMemory(ctypes.Structure):
    """nvmlMemory_t (nvml.h): bytes."""
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class NvmlProcessInfoV1(ctypes.Structure):
    """nvmlProcessInfo_v1_t, what nvmlDeviceGetComputeRunningProcesses (no suffix) fills."""
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class NvmlProcessInfo(ctypes.Structure):
    """nvmlProcessInfo_t (nvmlProcessInfo_v2_t), what ..._v2 and ..._v3 fill."""
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


#: NVML_VALUE_NOT_AVAILABLE for an unsigned long long: the driver cannot tell (e.g. Windows WDDM)
NVML_VALUE_NOT_AVAILABLE = (1 << 64) - 1
NVML_ERROR_INSUFFICIENT_SIZE = 7


def process_list(entries, count):
    """The first ``count`` entries of a filled nvmlProcessInfo array as dicts: pid, used bytes
    (None where NVML cannot tell) and the process's command name where /proc shows it (a PID
    from another PID namespace, as in a container, has none)."""
    out = []
    for e in list(entries)[:count]:
        used = None if e.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE else int(e.usedGpuMemory)
        out.append({"pid": int(e.pid), "used_bytes": used, "name": _comm(int(e.pid))})
    return out


def _comm(pid):
    """What another process runs, without its arguments (they may hold tokens): the program's
    name, and the script's when the program is Python (``python3 train.py``)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            words = [w.decode("utf-8", "replace") for w in f.read().split(b"\0") if w]
    except (OSError, IOError):
        return None
    if not words:
        return None
    shown = [os.path.basename(words[0])]
    script = next((w for w in words[1:3] if w.endswith(".py")), None)
    if script:
        shown.append(os.path.basename(script))
    return " ".join(shown)[:160]


#: nvmlComputeMode_t (nvml.h); nvidia-smi's "Compute Mode" prints the same names in CamelCase
COMPUTE_MODES = {0: "DEFAULT", 1: "EXCLUSIVE_THREAD", 2: "PROHIBITED", 3: "EXCLUSIVE_PROCESS"}


def compute_mode(nv, handle):
    """The device's compute mode (nvmlDeviceGetComputeMode) by name; None when it cannot be read.
    In EXCLUSIVE_PROCESS (or the old EXCLUSIVE_THREAD) mode one process at a time may hold a
    context; in PROHIBITED none may: a second process gets 'busy or unavailable'."""
    f = nv.fn("nvmlDeviceGetComputeMode", [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)])
    if f is None:
        return None
    mode = ctypes.c_int(-1)
    if f(handle, ctypes.byref(mode)) != 0:
        return None
    return COMPUTE_MODES.get(mode.value, "mode %d" % mode.value)


def device_memory(nv, handle):
    """(memory dict or None, processes list or None, errors dict) of one device: its memory
    (nvmlDeviceGetMemoryInfo) and the compute processes using it with their memory
    (nvmlDeviceGetComputeRunningProcesses_v3, _v2, or the first version)."""
    errors = {}
    memory = None
    f = nv.fn("nvmlDeviceGetMemoryInfo", [ctypes.c_void_p, ctypes.POINTER(NvmlMemory)])
    if f is not None:
        m = NvmlMemory()
        rc = f(handle, ctypes.byref(m))
        if rc == 0:
            memory = {"total": int(m.total), "free": int(m.free), "used": int(m.used)}
        else:
            errors["nvmlDeviceGetMemoryInfo"] = nv.error(rc)
    processes = None
    for name, struct in (("nvmlDeviceGetComputeRunningProcesses_v3", NvmlProcessInfo),
                         ("nvmlDeviceGetComputeRunningProcesses_v2", NvmlProcessInfo),
                         ("nvmlDeviceGetComputeRunningProcesses", NvmlProcessInfoV1)):
        try:
            getattr(nv.lib, name)
        except AttributeError:
            continue
        f = nv.fn(name, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(struct)])
        if f is None:
            continue
        for _ in range(3):  # processes may start between the two calls: ask again with more room
            count = ctypes.c_uint(0)
            rc = f(handle, ctypes.byref(count), None)
            if rc == 0:
                processes = []
                break
            if rc != NVML_ERROR_INSUFFICIENT_SIZE:
                errors[name] = nv.error(rc)
                break
            room = count.value + 8
            entries = (struct * room)()
            count = ctypes.c_uint(room)
            rc = f(handle, ctypes.byref(count), entries)
            if rc == 0:
                processes = process_list(entries, count.value)
                break
            if rc != NVML_ERROR_INSUFFICIENT_SIZE:
                errors[name] = nv.error(rc)
                break
        if processes is not None:
            break  # else an older version of the call may answer (a newer one NOT_SUPPORTED)
    return memory, processes, errors


#: The clock event ("throttle") reason bits of nvml.h, lowest first, by the names nvidia-smi -q
#: prints under "Clocks Event Reasons" ("Clocks Throttle Reasons" on older drivers):
#: nvmlClocksEventReasonGpuIdle 0x1, ...ApplicationsClocksSetting 0x2, ...SwPowerCap 0x4,
#: nvmlClocksThrottleReasonHwSlowdown 0x8, nvmlClocksEventReasonSyncBoost 0x10,
#: ...SwThermalSlowdown 0x20, nvmlClocksThrottleReasonHwThermalSlowdown 0x40,
#: ...HwPowerBrakeSlowdown 0x80, nvmlClocksEventReasonDisplayClockSetting 0x100
CLOCK_EVENT_REASONS = (
    (0x1, "GPU Idle"), (0x2, "Applications Clocks Setting"), (0x4, "SW Power Cap"), (0x8, "HW Slowdown"),
    (0x10, "Sync Boost"), (0x20, "SW Thermal Slowdown"), (0x40, "HW Thermal Slowdown"),
    (0x80, "HW Power Brake Slowdown"), (0x100, "Display Clock Setting"),
)

#: nvmlTemperatureThresholds_t (nvml.h) of nvmlDeviceGetTemperatureThreshold, in degrees C
TEMPERATURE_THRESHOLDS = (("shutdown", 0), ("slowdown", 1), ("mem_max", 2), ("gpu_max", 3))
NVML_TEMPERATURE_GPU = 0  # nvmlTemperatureSensors_t: the GPU die


def decode_clock_event_reasons(mask):
    """The names of the bits set in an nvmlDeviceGetCurrentClocksEventReasons mask, lowest bit first;
    a bit nvml.h does not name is written in hex (``"0x200"``). None for None."""
    if mask is None:
        return None
    out = [name for bit, name in CLOCK_EVENT_REASONS if mask & bit]
    known = 0
    for bit, _ in CLOCK_EVENT_REASONS:
        known |= bit
    rest = mask & ~known
    bit = 1
    while rest and bit <= rest:
        if rest & bit:
            out.append("0x%x" % bit)
        bit <<= 1
    return out


def _uint_getter(nv, name, handle, *args):
    """(value, error) of an NVML getter ``name(device, args..., unsigned int/long long *out)``;
    a missing symbol is an error entry, never an exception."""
    wide = name.endswith("Reasons")
    kind = ctypes.c_ulonglong if wide else ctypes.c_uint
    f = nv.fn(name, [ctypes.c_void_p] + [ctypes.c_int for _ in args] + [ctypes.POINTER(kind)])
    if f is None:
        return None, {"code": None, "name": "symbol missing", "message": name}
    value = kind(0)
    try:
        rc = f(handle, *[ctypes.c_int(a) for a in args] + [ctypes.byref(value)])
    except Exception as exc:  # a foreign library: never let one call end the probe
        return None, {"code": None, "name": type(exc).__name__, "message": str(exc)}
    if rc != 0:
        return None, nv.error(rc)
    return int(value.value), None


def clock_slowdown(nv, handle):
    """What slows one GPU's clocks now: its temperature (nvmlDeviceGetTemperature, GPU sensor),
    the clock event reasons mask (nvmlDeviceGetCurrentClocksEventReasons, or the older name
    nvmlDeviceGetCurrentClocksThrottleReasons on drivers before R535) decoded to nvidia-smi's names,
    and the temperature thresholds the driver gives (nvmlDeviceGetTemperatureThreshold). Every
    value is None (a threshold absent) where its call failed; ``errors`` says why."""
    out = {"temperature_c": None, "reasons_mask": None, "reasons_call": None, "reasons": None,
           "thresholds_c": {}, "errors": {}}
    out["temperature_c"], e = _uint_getter(nv, "nvmlDeviceGetTemperature", handle, NVML_TEMPERATURE_GPU)
    if e:
        out["errors"]["nvmlDeviceGetTemperature"] = e
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        try:
            getattr(nv.lib, name)
        except AttributeError:
            continue  # an older (or newer) driver has the other name; both missing is recorded below
        mask, e = _uint_getter(nv, name, handle)
        out["reasons_call"] = name
        if e is None:
            out["reasons_mask"], out["reasons"] = mask, decode_clock_event_reasons(mask)
            out["errors"].pop("clock_event_reasons", None)
            break
        out["errors"]["clock_event_reasons"] = dict(e, call=name)
    if out["reasons_call"] is None:
        out["errors"]["clock_event_reasons"] = {
            "code": None, "name": "symbol missing", "call": None,
            "message": "nvmlDeviceGetCurrentClocksEventReasons / nvmlDeviceGetCurrentClocksThrottleReasons"}
    for key, which in TEMPERATURE_THRESHOLDS:
        value, e = _uint_getter(nv, "nvmlDeviceGetTemperatureThreshold", handle, which)
        if e is None:
            out["thresholds_c"][key] = value
    return out


def nvml_facts(library="libnvidia-ml.so.1", root="/"):
    kernel_version, _ = parse_nvrm_version(_read(root, "/proc/driver/nvidia/version"))
    out = {"library": library, "loaded": False, "load_error": None, "path": None, "path_version": None,
           "init_error": None, "driver_version": None, "nvml_version": None, "cuda_driver_version": None,
           "device_count": None, "devices": [], "missing_symbols": [], "errors": {},
           "kernel_driver_version": kernel_version, "libcuda_path": None, "libcuda_path_version": None,
           "libcuda_load_error": None, "pid": os.getpid()}
    # libcuda's file, without initialising CUDA (dlopen runs no cuInit): for the version-suffix check
    cuda, cuda_err = load_library("libcuda.so.1")
    if cuda is not None:
        out["libcuda_path"] = library_file(cuda, "cuDriverGetVersion")
        out["libcuda_path_version"] = version_suffix(out["libcuda_path"])
    else:
        out["libcuda_load_error"] = cuda_err
    lib, err = load_library(library)
    if lib is None:
        out["load_error"] = err
        return out
    out["loaded"] = True
    out["path"] = library_file(lib, "nvmlInit_v2") or library_file(lib, "nvmlInit")
    out["path_version"] = version_suffix(out["path"])
    nv = _Nvml(lib)
    init = nv.fn("nvmlInit_v2", []) or nv.fn("nvmlInit", [])
    if init is None:
        out["init_error"] = {"code": None, "name": "symbol missing", "message": "nvmlInit_v2 / nvmlInit"}
        out["missing_symbols"] = nv.missing
        return out
    rc = init()
    if rc != 0:
        out["init_error"] = nv.error(rc)
        out["missing_symbols"] = nv.missing
        return out
    try:
        out["driver_version"], e = nv.string("nvmlSystemGetDriverVersion", size=80)
        if e:
            out["errors"]["nvmlSystemGetDriverVersion"] = e
        out["nvml_version"], e = nv.string("nvmlSystemGetNVMLVersion", size=80)
        if e:
            out["errors"]["nvmlSystemGetNVMLVersion"] = e
        f = nv.fn("nvmlSystemGetCudaDriverVersion_v2", [ctypes.POINTER(ctypes.c_int)]) or \
            nv.fn("nvmlSystemGetCudaDriverVersion", [ctypes.POINTER(ctypes.c_int)])
        if f is not None:
            v = ctypes.c_int(0)
            rc = f(ctypes.byref(v))
            if rc == 0:
                out["cuda_driver_version"] = v.value
            else:
                out["errors"]["nvmlSystemGetCudaDriverVersion"] = nv.error(rc)
        f = nv.fn("nvmlDeviceGetCount_v2", [ctypes.POINTER(ctypes.c_uint)]) or \
            nv.fn("nvmlDeviceGetCount", [ctypes.POINTER(ctypes.c_uint)])
        count = ctypes.c_uint(0)
        rc = f(ctypes.byref(count)) if f is not None else None
        if rc == 0:
            out["device_count"] = count.value
        elif rc is not None:
            out["errors"]["nvmlDeviceGetCount"] = nv.error(rc)
        get = nv.fn("nvmlDeviceGetHandleByIndex_v2", [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]) or \
            nv.fn("nvmlDeviceGetHandleByIndex", [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)])
        cc = nv.fn("nvmlDeviceGetCudaComputeCapability",
                   [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)])
        for i in range(min(out["device_count"] or 0, 64)):
            dev = {"index": i, "name": None, "uuid": None, "cc": None, "cc_major": None, "cc_minor": None,
                   "error": None}
            handle = ctypes.c_void_p()
            if get is None:
                break
            rc = get(ctypes.c_uint(i), ctypes.byref(handle))
            if rc != 0:
                dev["error"] = nv.error(rc)
                out["devices"].append(dev)
                continue
            dev["name"], e = nv.string("nvmlDeviceGetName", handle, size=96)
            dev["uuid"], e2 = nv.string("nvmlDeviceGetUUID", handle, size=96)
            if cc is not None:
                ma, mi = ctypes.c_int(0), ctypes.c_int(0)
                if cc(handle, ctypes.byref(ma), ctypes.byref(mi)) == 0:
                    dev["cc_major"], dev["cc_minor"] = ma.value, mi.value
                    dev["cc"] = "%d.%d" % (ma.value, mi.value)
            dev["error"] = e or e2
            dev["compute_mode"] = compute_mode(nv, handle)
            dev["memory"], dev["processes"], errs = device_memory(nv, handle)
            if errs:
                dev["memory_errors"] = errs
            dev["slowdown"] = clock_slowdown(nv, handle)
            out["devices"].append(dev)
    finally:
        shut = nv.fn("nvmlShutdown", [])
        if shut is not None:
            shut()
    out["missing_symbols"] = nv.missing
    return out


def nvml(inp):
    opts, root = _options(inp)
    return nvml_facts(opts.get("library") or "libnvidia-ml.so.1", root)


# --- CUDA_VISIBLE_DEVICES --------------------------------------------------------

def _strtoul(s):
    """torch's ``_strtoul``: -1, or the integer the string starts with (an optional sign, digits)."""
    if not s:
        return -1
    idx = 0
    for idx, c in enumerate(s):
        if not (c.isdigit() or (idx == 0 and c in "+-")):
            break
        if idx + 1 == len(s):
            idx += 1
    if idx <= 0:
        return -1
    try:
        return int(s[:idx])
    except ValueError:  # "+" or "-" alone: torch raises here; CUDA reads it as an invalid entry
        return -1


def parse_visible_devices(var):
    """``CUDA_VISIBLE_DEVICES`` exactly as torch's ``_parse_visible_devices`` reads it (CUDA build).

    Returns a dict: ``kind`` ("all" when unset, "ordinals", "uuids", "mig"), ``entries`` (the
    list torch would use; [] hides every GPU), ``stopped_at`` (the first entry that ended the
    list, if any) and ``duplicate`` (the repeated entry that emptied it, if any).
    """
    out = {"kind": None, "entries": [], "stopped_at": None, "duplicate": None}
    if var is None:
        out["kind"] = "all"
        out["entries"] = list(range(64))
        return out
    for prefix, kind in (("GPU-", "uuids"), ("MIG-", "mig")):
        if var.startswith(prefix):
            out["kind"] = kind
            rcs = []
            for elem in var.split(","):
                if elem in rcs:
                    out["duplicate"] = elem
                    return out
                if not elem.startswith(prefix):
                    out["stopped_at"] = elem
                    break
                rcs.append(elem)
            out["entries"] = rcs
            return out
    out["kind"] = "ordinals"
    rc = []
    for elem in var.split(","):
        x = _strtoul(elem.strip())
        if x in rc:
            out["duplicate"] = elem
            return out
        if x < 0:
            out["stopped_at"] = elem
            break
        rc.append(x)
    out["entries"] = rc
    return out


def visible_devices_facts(root="/", env=None):
    env = os.environ if env is None else env
    var = env.get("CUDA_VISIBLE_DEVICES")
    return {
        "cuda_visible_devices": var,
        "parsed": parse_visible_devices(var),
        "nvidia_visible_devices": env.get("NVIDIA_VISIBLE_DEVICES"),
        "cuda_device_order": env.get("CUDA_DEVICE_ORDER"),
        "pytorch_nvml_based_cuda_check": env.get("PYTORCH_NVML_BASED_CUDA_CHECK"),
        "gpu_nodes": len(_gpu_node_names(root)),
    }


def visible_devices(inp):
    _, root = _options(inp)
    return visible_devices_facts(root)
