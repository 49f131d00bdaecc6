"""The CUDA driver API through ctypes: libcuda.so.1, cuInit, versions, devices.

Standard library only; Python 3.8+. Runs in a child process, so cuInit never happens in
stackpeel's own process. cuDriverGetVersion and cuGetErrorName/String work before (and
without) a successful cuInit, so the driver's CUDA version is known even when
initialisation fails.
"""

import ctypes
import os
import time

try:
    import resource
except ImportError:  # not POSIX
    resource = None

import _stackpeel_probe__common as common  # loaded by the runner

#: CUresult names for when cuGetErrorName itself is unavailable (cuda.h)
CU_ERRORS = {
    0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 34: "CUDA_ERROR_STUB_LIBRARY",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE", 100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
    102: "CUDA_ERROR_DEVICE_NOT_LICENSED", 200: "CUDA_ERROR_INVALID_IMAGE", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
    221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    304: "CUDA_ERROR_OPERATING_SYSTEM", 401: "CUDA_ERROR_ILLEGAL_STATE", 800: "CUDA_ERROR_NOT_PERMITTED",
    801: "CUDA_ERROR_NOT_SUPPORTED", 802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 999: "CUDA_ERROR_UNKNOWN",
}

ATTR_CC_MAJOR = 75  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
ATTR_CC_MINOR = 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR


def _gpu():
    """The gpu probe module (helpers for library paths and /proc), loaded by path."""
    return common.sibling("gpu")


class _Cuda(common.GuardedLib):
    """The CUDA driver API through ctypes; a missing symbol is recorded, never raised."""

    def _text(self, getter, rc):
        f = self.fn(getter, [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)])
        if f is None:
            return None
        p = ctypes.c_char_p()
        try:
            if f(rc, ctypes.byref(p)) == 0 and p.value:
                return p.value.decode("utf-8", "replace")
        except Exception:
            pass
        return None

    def error(self, rc):
        return {"code": rc, "name": self._text("cuGetErrorName", rc) or CU_ERRORS.get(rc, "CUresult %d" % rc),
                "message": self._text("cuGetErrorString", rc)}


def address_space_limit():
    """RLIMIT_AS (``ulimit -v``) of this process as (soft, hard) bytes, None where unlimited or
    unknown. cuInit reserves a large virtual range (for unified addressing), so under a small
    limit it fails; the probe inherits the limit of the job that runs stackpeel."""
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return {"soft": None, "hard": None}
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return {"soft": None, "hard": None}
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}


#: where container platforms mount the host driver's libraries without ldconfig: GKE's device
#: plugin (and nvidia-docker 1) bind the driver into /usr/local/nvidia, and NVIDIA's CUDA base images
#: up to 12.8.0 (and again from 13.0) set ENV LD_LIBRARY_PATH /usr/local/nvidia/lib:/usr/local/nvidia/lib64
#: for it; the 12.8.1-12.9 images dropped it (vllm#18859, vllm#23935, dcgm-exporter#484). Only lib64:
#: /usr/local/nvidia/lib is nvidia-docker 1's 32-bit directory, whose libcuda a 64-bit process cannot load
MOUNTED_DRIVER_DIRS = ("/usr/local/nvidia/lib64",)


def mounted_off_path(root="/", env=None):
    """The directory of MOUNTED_DRIVER_DIRS holding a libcuda.so.1 that LD_LIBRARY_PATH does not
    name, or None: the driver is there, the loader is not told where (tools32)."""
    env = os.environ if env is None else env
    on_path = [os.path.normpath(d) for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d]
    for d in MOUNTED_DRIVER_DIRS:
        if os.path.exists(os.path.join(root, d.lstrip("/"), "libcuda.so.1")) and d not in on_path:
            return d
    return None


def driver_api_facts(library="libcuda.so.1", root="/", env=None):
    env = os.environ if env is None else env
    clock = time.monotonic()
    gpu = _gpu()
    kernel_version, _ = gpu.parse_nvrm_version(gpu._read(root, "/proc/driver/nvidia/version"))
    modules = gpu.loaded_modules(root)
    kind, _signals = gpu.container(root)
    out = {
        "library": library, "libcuda_loaded": False, "load_error": None, "libcuda_path": None,
        "libcuda_path_version": None, "forward_compat": False, "stub": False,
        "driver_version": None, "driver_version_error": None, "init_result": None, "init_error": None,
        "device_count": None, "devices": [], "missing_symbols": [],
        "kernel_driver_version": kernel_version,
        "uvm_node": os.path.exists(gpu._path(root, "/dev/nvidia-uvm")),
        "uvm_module": (None if modules is None else "nvidia_uvm" in modules),
        "nvidiactl": os.path.exists(gpu._path(root, "/dev/nvidiactl")),
        "container": kind,
        "cuda_visible_devices": env.get("CUDA_VISIBLE_DEVICES"),
        "ld_library_path": env.get("LD_LIBRARY_PATH"),
        "rlimit_as": address_space_limit(),
    }
    # where its time goes: reading the host, loading libcuda, cuInit, the device queries
    out["seconds"] = seconds = {"host": round(time.monotonic() - clock, 4)}
    clock = time.monotonic()
    lib, err = gpu.load_library(library)
    seconds["load"] = round(time.monotonic() - clock, 4)
    if lib is None:
        out["load_error"] = err
        out["libcuda_off_path"] = mounted_off_path(root, env)
        return out
    out["libcuda_loaded"] = True
    path = gpu.library_file(lib, "cuInit") or gpu.library_file(lib, "cuDriverGetVersion")
    out["libcuda_path"] = path
    out["libcuda_path_version"] = gpu.version_suffix(path)
    if path:
        parts = path.split(os.sep)
        out["forward_compat"] = "compat" in parts
        out["stub"] = "stubs" in parts
    cu = _Cuda(lib)
    get_version = cu.fn("cuDriverGetVersion", [ctypes.POINTER(ctypes.c_int)])
    if get_version is not None:
        v = ctypes.c_int(0)
        rc = get_version(ctypes.byref(v))
        if rc == 0:
            out["driver_version"] = v.value
        else:
            out["driver_version_error"] = cu.error(rc)
    init = cu.fn("cuInit", [ctypes.c_uint])
    if init is None:
        out["init_error"] = {"code": None, "name": "symbol missing", "message": "libcuda has no cuInit"}
        out["missing_symbols"] = cu.missing
        return out
    clock = time.monotonic()
    rc = init(0)
    seconds["init"] = round(time.monotonic() - clock, 4)
    clock = time.monotonic()
    out["init_result"] = rc
    # libcuda creates a missing /dev/nvidia-uvm itself when it can (root, or setuid nvidia-modprobe)
    out["uvm_node_after_init"] = os.path.exists(gpu._path(root, "/dev/nvidia-uvm"))
    if rc != 0:
        out["init_error"] = cu.error(rc)
        out["missing_symbols"] = cu.missing
        return out
    count_fn = cu.fn("cuDeviceGetCount", [ctypes.POINTER(ctypes.c_int)])
    n = ctypes.c_int(0)
    if count_fn is not None:
        rc = count_fn(ctypes.byref(n))
        if rc == 0:
            out["device_count"] = n.value
        else:
            out["device_count_error"] = cu.error(rc)
    get = cu.fn("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int])
    name_fn = cu.fn("cuDeviceGetName", [ctypes.c_char_p, ctypes.c_int, ctypes.c_int])
    attr = cu.fn("cuDeviceGetAttribute", [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int])
    mem = cu.fn("cuDeviceTotalMem_v2", [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int])
    for i in range(min(out["device_count"] or 0, 64)):
        dev = {"index": i, "name": None, "cc": None, "cc_major": None, "cc_minor": None,
               "total_memory": None, "error": None}
        handle = ctypes.c_int(i)
        if get is not None:
            rc = get(ctypes.byref(handle), i)
            if rc != 0:
                dev["error"] = cu.error(rc)
                out["devices"].append(dev)
                continue
        if name_fn is not None:
            buf = ctypes.create_string_buffer(256)
            rc = name_fn(buf, 256, handle.value)
            if rc == 0:
                dev["name"] = buf.value.decode("utf-8", "replace")
            else:
                dev["error"] = cu.error(rc)
        if attr is not None:
            ma, mi = ctypes.c_int(0), ctypes.c_int(0)
            r1 = attr(ctypes.byref(ma), ATTR_CC_MAJOR, handle.value)
            r2 = attr(ctypes.byref(mi), ATTR_CC_MINOR, handle.value)
            if r1 == 0 and r2 == 0:
                dev["cc_major"], dev["cc_minor"] = ma.value, mi.value
                dev["cc"] = "%d.%d" % (ma.value, mi.value)
            else:
                dev["error"] = cu.error(r1 or r2)
        if mem is not None:
            size = ctypes.c_size_t(0)
            if mem(ctypes.byref(size), handle.value) == 0:
                dev["total_memory"] = size.value
        out["devices"].append(dev)
    seconds["devices"] = round(time.monotonic() - clock, 4)
    out["missing_symbols"] = cu.missing
    return out


def driver_api(inp):
    opts = (inp or {}).get("options") or {}
    return driver_api_facts(opts.get("library") or "libcuda.so.1", opts.get("root") or "/")
