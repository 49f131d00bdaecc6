"""Configuration of the target: package versions from metadata, the environment variables the
stack reads (checked against what exists), and stack modules shadowed by stray files.

Nothing here imports torch, triton or any other stack package: versions come from
``importlib.metadata``, module locations from ``importlib.machinery.PathFinder``, devices from
``/sys``. Standard library only, Python 3.8+.
"""

import os
import platform
import shutil
import stat
import sys

import _stackpeel_probe__common as common

try:
    import importlib.metadata as _metadata
except ImportError:  # pragma: no cover - Python < 3.8 is not supported by stackpeel
    _metadata = None

#: distributions whose versions the known-bad-combinations table reads
VERSION_DISTS = ("torch", "triton", "pytorch-triton", "fla-core", "flash-linear-attention", "tilelang",
                 "transformers", "causal-conv1d", "mamba-ssm", "flash-attn", "xformers", "bitsandbytes",
                 "numpy", "vllm", "accelerate", "deepspeed", "nvidia-nccl-cu12", "nvidia-nccl-cu13",
                 "torchvision", "torchaudio", "torchao", "tensorrt", "sglang", "sgl-kernel", "flashinfer-python")

#: import name -> distributions that may provide it (first installed one counts)
STACK_MODULES = (
    ("torch", ("torch",)),
    ("triton", ("triton", "pytorch-triton")),
    ("fla", ("fla-core", "flash-linear-attention")),
    ("transformers", ("transformers",)),
    ("causal_conv1d", ("causal-conv1d",)),
    ("mamba_ssm", ("mamba-ssm",)),
    ("flash_attn", ("flash-attn",)),
    ("xformers", ("xformers",)),
    ("bitsandbytes", ("bitsandbytes",)),
    ("numpy", ("numpy",)),
    ("einops", ("einops",)),
    ("accelerate", ("accelerate",)),
    ("safetensors", ("safetensors",)),
    ("tokenizers", ("tokenizers",)),
    ("tilelang", ("tilelang",)),
)


def _dist_version(name):
    if _metadata is None:
        return None
    try:
        return _metadata.version(name)
    except Exception:  # PackageNotFoundError, or broken metadata
        return None


# --------------------------------------------------------------------------- versions

def versions(inp):
    """Versions of the stack's distributions, torch's CUDA (from torch/version.py), Python."""
    dists = {}
    for name in VERSION_DISTS:
        v = _dist_version(name)
        if v is not None:
            dists[name] = v
    torch_files = common.sibling("toolchain").torch_cuda_from_files()
    facts = {
        "dists": dists,
        "torch_cuda": torch_files.get("cuda"),
        "torch_version_file": torch_files.get("version"),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    facts.update(gpu_facts())
    if "tilelang" in dists:
        facts["fla_tilelang"] = fla_tilelang_state()
    # the contract: nothing of the stack was imported to read this
    facts["imported"] = sorted(m for m in ("torch", "triton", "fla", "transformers", "numpy") if m in sys.modules)
    return facts


def _usable_nvcc(env):
    """FLA's has_usable_nvcc() (fla/utils/env.py, 0.6.0): CUDA_HOME/CUDA_PATH bin/nvcc, nvcc
    on PATH, an nvcc in the nvidia-cuda-nvcc wheel, /usr/local/cuda/bin/nvcc."""
    home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    if home is not None and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return True
    if shutil.which("nvcc", path=env.get("PATH")):
        return True
    try:
        files = _metadata.files("nvidia-cuda-nvcc") or []
    except Exception:
        files = []
    if any(os.path.basename(str(f)) in ("nvcc", "nvcc.exe") for f in files):
        return True
    return os.path.exists("/usr/local/cuda/bin/nvcc")


def fla_tilelang_state(env=None):
    """Would FLA dispatch to its TileLang kernels? (fla/backends.py TileLangBackend.can_use:
    tilelang importable, a usable nvcc, FLA_TILELANG not '0', dispatch not disabled)."""
    env = os.environ if env is None else env
    why = []
    if env.get("FLA_DISABLE_BACKEND_DISPATCH") == "1":
        why.append("FLA_DISABLE_BACKEND_DISPATCH=1")
    if env.get("FLA_TILELANG", "1") == "0":
        why.append("FLA_TILELANG=0")
    if not _usable_nvcc(env):
        why.append("no nvcc where FLA looks (CUDA_HOME/CUDA_PATH, PATH, the nvidia-cuda-nvcc wheel, /usr/local/cuda)")
    return {"usable": not why, "why_not": why}


def gpu_facts(root="/"):
    """GPUs' compute capabilities and the driver version through NVML (no CUDA context, no
    torch), else the kernel module's version from /proc: what the table's GPU and driver
    conditions need. Never raises."""
    out = {"gpus": [], "driver": None, "cuda_driver_version": None, "gpu_source": None}
    gpu = common.sibling("gpu")
    try:
        nv = gpu.nvml_facts(root=root)
    except Exception as exc:  # a broken NVML must not cost the version facts
        nv = {"error": "%s: %s" % (type(exc).__name__, exc)}
    if nv.get("devices"):
        out["gpus"] = [{"name": d.get("name"), "cc": d.get("cc")} for d in nv["devices"] if d.get("cc")]
        out["gpu_source"] = "NVML"
    out["driver"] = nv.get("driver_version") or nv.get("kernel_driver_version")
    out["cuda_driver_version"] = nv.get("cuda_driver_version")
    if not out["driver"]:
        try:
            out["driver"] = gpu.kernel_driver_facts(root).get("driver_version")
        except Exception:
            pass
    return out


# --------------------------------------------------------------------------- environment

#: variables whose value names a program (first word, looked up on PATH)
PROGRAM_VARS = ("CC", "CXX")
#: variables naming an executable file
EXECUTABLE_VARS = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH",
                   "TRITON_NVDISASM_PATH")
#: variables naming a directory
DIR_VARS = ("CUDA_HOME", "CUDA_PATH", "TRITON_LIBCUDA_PATH", "TRITON_CACHE_DIR", "TRITON_HOME")
#: colon-separated lists of directories / files
LIST_VARS = ("LD_LIBRARY_PATH", "LD_PRELOAD")
#: variables read as values, validated by the check
VALUE_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA", "TORCH_CUDA_ARCH_LIST",
              "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
              "CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "CUDA_DEVICE_ORDER", "PYTORCH_NO_CUDA_MEMORY_CACHING",
              "TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TRITON_INTERPRET", "CUDA_MODULE_LOADING",
              "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NET", "NCCL_P2P_LEVEL",
              "NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE", "NCCL_DEBUG", "NCCL_ALGO", "NCCL_PROTO",
              "NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
              "NCCL_ASYNC_ERROR_HANDLING")


def path_state(path):
    """What is at ``path``: exists, kind, executable, writable (never raises)."""
    out = {"path": path, "exists": False, "kind": None, "executable": False, "writable": False, "readable": False}
    if not path:
        return out
    try:
        st = os.stat(path)
    except OSError as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, exc.strerror or exc)
        return out
    out["exists"] = True
    out["kind"] = "dir" if stat.S_ISDIR(st.st_mode) else ("file" if stat.S_ISREG(st.st_mode) else "other")
    out["executable"] = os.access(path, os.X_OK)
    out["writable"] = os.access(path, os.W_OK)
    out["readable"] = os.access(path, os.R_OK)
    return out


def _nearest_existing(path):
    """The closest existing ancestor of ``path`` and whether it is writable (can the dir be created?)."""
    cur = os.path.abspath(path)
    while cur and not os.path.exists(cur):
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return {"path": cur, "writable": _can_create_in(cur) if cur else False}


def _can_create_in(directory):
    """Whether a file can really be created in ``directory`` (root passes os.access almost
    everywhere, /proc and read-only mounts still refuse): create and remove a temp file."""
    import tempfile
    try:
        fd, name = tempfile.mkstemp(prefix=".stackpeel-", dir=directory)
    except (OSError, IOError):
        return False
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return True


def interfaces(root="/"):
    """Network interfaces as the kernel lists them, with operstate and whether an IPv4 address exists."""
    base = os.path.join(root, "sys/class/net")
    out = {}
    try:
        names = sorted(os.listdir(base))
    except OSError:
        names = []
        try:  # /proc/net/dev lists them where /sys is not mounted
            with open(os.path.join(root, "proc/net/dev")) as f:
                for line in f.readlines()[2:]:
                    if ":" in line:
                        names.append(line.split(":", 1)[0].strip())
        except (OSError, IOError):
            return None
    for name in names:
        state = None
        try:
            with open(os.path.join(base, name, "operstate")) as f:
                state = f.read().strip()
        except (OSError, IOError):
            pass
        out[name] = {"operstate": state}
    return out


def ib_devices(root="/"):
    """InfiniBand / RoCE HCAs (``/sys/class/infiniband``) with their port numbers; None if absent."""
    base = os.path.join(root, "sys/class/infiniband")
    if not os.path.isdir(base):
        return None
    out = {}
    for name in sorted(os.listdir(base)):
        try:
            ports = sorted(os.listdir(os.path.join(base, name, "ports")))
        except OSError:
            ports = []
        out[name] = ports
    return out


def environment_facts(env=None, root="/"):
    env = os.environ if env is None else env
    facts = {"set": {}, "programs": {}, "paths": {}, "lists": {}, "cache_parent": {}}
    for var in PROGRAM_VARS + EXECUTABLE_VARS + DIR_VARS + LIST_VARS + VALUE_VARS:
        if var in env:
            facts["set"][var] = env[var]
    for var in PROGRAM_VARS:
        value = env.get(var)
        if value is None or not value.strip():
            continue
        first = value.split()[0]
        found = shutil.which(first, path=env.get("PATH")) if os.sep not in first else first
        facts["programs"][var] = {"program": first, "resolved": found,
                                  "state": path_state(found) if found else None, "words": len(value.split())}
    for var in EXECUTABLE_VARS + DIR_VARS:
        value = env.get(var)
        if value:
            facts["paths"][var] = path_state(value)
            if var in ("TRITON_CACHE_DIR", "TRITON_HOME") and facts["paths"][var].get("kind") == "dir":
                facts["paths"][var]["writable"] = _can_create_in(value)
            if var in ("TRITON_CACHE_DIR", "TRITON_HOME") and not os.path.exists(value):
                facts["cache_parent"][var] = _nearest_existing(value)
    libcuda_dir = env.get("TRITON_LIBCUDA_PATH")
    if libcuda_dir:
        facts["libcuda_files"] = sorted(n for n in _listdir(libcuda_dir) if n.startswith("libcuda.so"))
    cuda_home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    if cuda_home:
        facts["cuda_home_nvcc"] = path_state(os.path.join(cuda_home, "bin", "nvcc"))
    for var in LIST_VARS:
        value = env.get(var)
        if not value:
            continue
        sep = ":" if var == "LD_LIBRARY_PATH" else None
        entries = value.split(sep) if sep else value.replace(":", " ").split()
        facts["lists"][var] = [dict(path_state(e), entry=e) if e and (var == "LD_LIBRARY_PATH" or "/" in e)
                               else {"entry": e, "exists": None} for e in entries]
    facts["interfaces"] = interfaces(root)
    facts["ib_devices"] = ib_devices(root)
    return facts


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def environment(inp):
    root = (inp.get("options") or {}).get("root") or "/"
    return environment_facts(root=root)


# --------------------------------------------------------------------------- shadowed modules

def _editable_dir(dist):
    """Source directory of an editable install (PEP 610 direct_url.json), else None."""
    try:
        import json
        text = dist.read_text("direct_url.json")
        if not text:
            return None
        data = json.loads(text)
    except Exception:
        return None
    if (data.get("dir_info") or {}).get("editable") and str(data.get("url", "")).startswith("file://"):
        return data["url"][len("file://"):]
    return None


def _record_paths(dist):
    """The file names ``dist`` lists, as strings: the first field of each RECORD row (a
    csv reader only for a quoted row), else ``dist.files`` (egg-info's lists)."""
    try:
        text = dist.read_text("RECORD")
    except Exception:
        text = None
    if not text:
        return [str(f) for f in dist.files or ()]
    out = []
    for line in text.splitlines():
        if line.startswith('"'):
            import csv
            out.extend(row[0] for row in csv.reader([line]) if row)
        elif line:
            out.append(line.split(",", 1)[0])
    return out


def _dist_module_location(dist, module):
    """Where ``dist`` installed top-level ``module``: its package folder or its single file
    (resolved), or None when the distribution lists no files for it. String work over RECORD
    plus one realpath: torch lists some 14,000 files, and ``dist.files`` would make a path
    object of each (0.25 s of this probe's 0.28 s)."""
    single = None
    for f in _record_paths(dist):
        parts = f.replace("\\", "/").split("/")
        if len(parts) > 1 and parts[0] == module:
            try:
                return os.path.realpath(str(dist.locate_file(module)))
            except Exception:
                return None
        if len(parts) == 1 and parts[0].split(".")[0] == module and parts[0].endswith((".py", ".so", ".pyd")):
            single = f
    if single is not None:
        try:
            return os.path.realpath(str(dist.locate_file(single)))
        except Exception:
            return None
    return None


def _search_path(caller_cwd):
    """sys.path as a program started with ``python -c``/``-m`` from ``caller_cwd`` would see it."""
    out = []
    for entry in sys.path:
        if entry in ("", "."):
            if caller_cwd:
                out.append(caller_cwd)
            continue
        out.append(entry)
    return out


def _path_source(entry, caller_cwd, env):
    if caller_cwd and os.path.realpath(entry) == os.path.realpath(caller_cwd):
        return "working directory"
    for var in ("PYTHONPATH",):
        for p in (env.get(var) or "").split(os.pathsep):
            if p and os.path.realpath(p) == os.path.realpath(entry):
                return var
    if entry.endswith(("site-packages", "dist-packages")):
        return "site-packages"
    return "sys.path"


def module_origins(inp):
    """For each stack module: where ``import`` would load it from (without importing it) and
    whether that location belongs to the installed distribution."""
    import importlib.machinery
    opts = inp.get("options") or {}
    caller_cwd = opts.get("cwd") or os.environ.get("PWD")
    path = _search_path(caller_cwd)
    results = []
    for module, dist_names in STACK_MODULES:
        dist = None
        for name in dist_names:
            try:
                dist = _metadata.distribution(name) if _metadata else None
            except Exception:
                dist = None
            if dist is not None:
                break
        if dist is None:
            continue
        entry = {"module": module, "dist": dist.metadata["Name"], "version": dist.version}
        try:
            spec = importlib.machinery.PathFinder.find_spec(module, path)
        except Exception as exc:  # a broken finder or a bad .pth: record it, go on
            entry["error"] = "%s: %s" % (type(exc).__name__, exc)
            results.append(entry)
            continue
        if spec is None:
            entry["found"] = None
            results.append(entry)
            continue
        origin = spec.origin if spec.origin not in (None, "namespace") else None
        locations = list(spec.submodule_search_locations or [])
        where = origin or (locations[0] if locations else None)
        if where and os.path.basename(where).startswith("__init__.") and locations:
            where = os.path.dirname(where)  # the package folder, not its __init__.py
        entry["found"] = where
        entry["namespace"] = origin is None
        location = _dist_module_location(dist, module)
        editable = _editable_dir(dist)
        entry["editable"] = editable
        real = os.path.realpath(where) if where else None
        if real is None or (location is None and not editable):
            entry["matches"] = None  # nothing to compare with (metadata without a file list)
        elif editable and real.startswith(os.path.realpath(editable) + os.sep):
            entry["matches"] = True
        else:
            entry["matches"] = location is not None and (real == location or real.startswith(location + os.sep))
        if entry["matches"] is False:
            for p in path:
                cand = os.path.join(p, module)
                if where and (where.startswith(cand + os.sep) or where.startswith(cand + ".") or where == cand):
                    entry["path_entry"] = p
                    entry["path_source"] = _path_source(p, caller_cwd, os.environ)
                    break
            entry["installed_at"] = location
        results.append(entry)
    return {"cwd": caller_cwd, "modules": results, "sys_path_head": path[:4]}
