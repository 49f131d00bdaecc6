#!/usr/bin/env python3
"""GPU fault-injection scenarios: break one thing, run `stackpeel check`, assert the root cause.

Run on any NVIDIA machine, as root for the scenarios that need mounts:

    python scenarios/gpu/suite.py --python /path/to/venv/bin/python --out results/

Each scenario sets up its fault without damaging the machine (a PATH of symlinks without
compilers or without `file`, a fresh or pre-warmed TRITON_CACHE_DIR, a private mount
namespace that hides Python.h or gives /dev only some of the NVIDIA device nodes, an
environment variable, an older release of one of torch's CUDA libraries unpacked from PyPI's
wheel in <repo>/.whl, a resource limit set with prlimit, a second process holding a GPU's
memory that the scenario's teardown stops), runs
`stackpeel check --format json` on the target interpreter, and checks the report:
the expected root cause is named, its symptoms are attributed to it, and the evidence
libraries swallowed is recovered. Some scenarios also run a user's program under the same
fault to *prove* the claim stackpeel makes (e.g. that a warm cache hides a missing
compiler until a new kernel signature appears).

A scenario whose needs this machine cannot meet (no GPU, fewer GPUs, not root, no
unshare, FLA not installed) is reported as `skip` with the reason, never as a pass.
Exit status: 0 if no scenario failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
USER_KERNEL = HERE / "user_kernel.py"
USER_DATALOADER = HERE / "user_dataloader.py"
GPU_MEMORY_HOLDER = HERE / "gpu_memory_holder.py"

# the accuracy bench's ranking (candidates in order, each followed by the causes it could be), so the
# suite ranks `explain` exactly as the bench does; the bench's folder is put on the path once, here
if str(REPO / "bench") not in sys.path:
    sys.path.insert(0, str(REPO / "bench"))
from explain_accuracy import ranking  # noqa: E402

COMPILER_NAMES = ("cc", "gcc", "g++", "c++", "c89", "c99", "cpp", "tcc")


# --------------------------------------------------------------------------- environment helpers

def symlink_path(exclude: Callable[[str], bool], where: Path, path: Optional[str] = None) -> str:
    """A directory of symlinks to every program on PATH except the excluded names."""
    where.mkdir(parents=True, exist_ok=True)
    for entry in (path or os.environ.get("PATH", "")).split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in sorted(os.listdir(entry)):
            src = os.path.join(entry, name)
            link = where / name
            if exclude(name) or link.exists() or os.path.isdir(src) or not os.access(src, os.X_OK):
                continue
            link.symlink_to(src)
    return str(where)


def is_compiler(name: str) -> bool:
    return (name in COMPILER_NAMES or name.startswith(("clang", "gcc-", "g++")) or "-gcc" in name
            or "-g++" in name or name.endswith("-cc"))


@dataclass
class Machine:
    """What this machine offers, measured once."""

    python: str
    gpus: int
    is_root: bool
    unshare: bool
    fla: bool
    triton_version: Optional[str]
    include_dir: Optional[str]
    ptxas: Optional[str]
    cc_major: Optional[int]
    torch_version: Optional[str] = None
    cuda_version: Optional[str] = None  # torch.version.cuda: which CUDA major its nvidia-* wheels are
    torch_preloads_cuda_libs: bool = False  # torch/__init__.py loads its nvidia-* libraries itself

    @classmethod
    def probe(cls, python: str) -> "Machine":
        code = r"""
import json, os, sys, sysconfig, importlib.util
out = {"gpus": 0, "fla": importlib.util.find_spec("fla") is not None, "triton": None, "ptxas": None, "cc_major": None,
       "torch": None, "cuda": None, "preloads": False}
scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else sysconfig._get_default_scheme()
if scheme == "posix_local":
    scheme = "posix_prefix"
out["include"] = sysconfig.get_paths(scheme=scheme)["include"]
spec = importlib.util.find_spec("triton")
if spec and spec.submodule_search_locations:
    d = list(spec.submodule_search_locations)[0]
    p = os.path.join(d, "backends", "nvidia", "bin", "ptxas")
    out["ptxas"] = p if os.path.exists(p) else None
    try:
        from importlib.metadata import version
        out["triton"] = version("triton")
    except Exception:
        pass
try:
    import torch
    out["torch"], out["cuda"] = torch.__version__, torch.version.cuda
    # torch >= 2.6 preloads its nvidia-* libraries from site-packages once libcudart is in (pytorch#138460)
    with open(os.path.join(os.path.dirname(torch.__file__), "__init__.py")) as f:
        out["preloads"] = 'if "libcudart.so" not in _maps' in f.read()
    if torch.cuda.is_available():
        out["gpus"] = torch.cuda.device_count()
        out["cc_major"] = torch.cuda.get_device_capability(0)[0]
except Exception:
    pass
print(json.dumps(out))
"""
        env = dict(os.environ)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300, env=env)
        facts = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else {}
        unshare = bool(shutil.which("unshare")) and subprocess.run(
            ["unshare", "-m", "true"], capture_output=True, timeout=30).returncode == 0
        return cls(python=python, gpus=int(facts.get("gpus", 0)), is_root=os.geteuid() == 0, unshare=unshare,
                   fla=bool(facts.get("fla")), triton_version=facts.get("triton"), include_dir=facts.get("include"),
                   ptxas=facts.get("ptxas"), cc_major=facts.get("cc_major"), torch_version=facts.get("torch"),
                   cuda_version=facts.get("cuda"), torch_preloads_cuda_libs=bool(facts.get("preloads")))

    def triton_at_most(self, major: int, minor: int) -> bool:
        if not self.triton_version:
            return False
        parts = self.triton_version.split(".")
        return (int(parts[0]), int(parts[1])) <= (major, minor)


@dataclass
class Setup:
    env: Dict[str, str]
    wrap: List[str] = field(default_factory=list)  # argv prefix (e.g. unshare + bind mount)
    path: List[str] = field(default_factory=list)  # PYTHONPATH entries put before stackpeel's own
    #: called when the scenario ends, passed or not (stops what the setup started)
    teardown: List[Callable[[], None]] = field(default_factory=list)


@dataclass
class Proof:
    """A user's program run under the fault, with the outcome the report's claim implies."""

    label: str
    args: Sequence[str]
    expect_ok: bool
    expect_text: str = ""
    only_if: Callable[[Machine], bool] = lambda m: m.gpus > 0
    script: Path = USER_KERNEL  # the user's program (the Triton kernel, or the DataLoader job)


@dataclass
class Scenario:
    name: str
    about: str
    setup: Callable[[Machine, Path], Setup]
    needs: Callable[[Machine], Optional[str]] = lambda m: None  # reason to skip, or None
    roots: Sequence[str] = ()  # finding codes that must be blocking root causes
    forbid_roots: Sequence[str] = ()  # codes that must NOT be root causes
    findings: Sequence[str] = ()  # codes that must appear somewhere in the report
    symptoms: Dict[str, Sequence[str]] = field(default_factory=dict)  # root code -> check ids nested under it
    evidence: Dict[str, Sequence[str]] = field(default_factory=dict)  # check id -> substrings of its evidence
    summaries: Dict[str, Sequence[str]] = field(default_factory=dict)  # check id -> substrings of its summary
    #: codes of which one must be among the first three `stackpeel explain --no-live` ranks on the
    #: output of each proof that fails (the log a user would paste); the first rank is recorded
    explain: Sequence[str] = ()
    #: codes of which one must be FIRST when `stackpeel explain` runs live (its checks confirm
    #: candidates on this machine) inside the scenario's own environment, on the same output: for
    #: faults whose output is the same for several causes (a missing node and a node the user cannot
    #: open both read 'No CUDA GPUs are available'), only the live run can tell them apart
    explain_live: Sequence[str] = ()
    no_blocking: bool = False
    passes: Sequence[str] = ()  # check ids that must pass
    warm_cache: bool = False  # warm TRITON_CACHE_DIR with the user's kernel (compiler present) first
    proofs: Sequence[Proof] = ()


# --------------------------------------------------------------------------- needs

def need_gpu(n: int = 1):
    def check(m: Machine) -> Optional[str]:
        if m.gpus < n:
            return f"needs {n} visible NVIDIA GPU(s); torch sees {m.gpus}"
        return None
    return check


def need_all(*checks):
    def check(m: Machine) -> Optional[str]:
        for c in checks:
            why = c(m)
            if why:
                return why
        return None
    return check


def need_fla(m: Machine) -> Optional[str]:
    return None if m.fla else "flash-linear-attention is not installed in the target environment"


def need_unshare(m: Machine) -> Optional[str]:
    if not m.is_root:
        return "needs root for a private mount namespace"
    return None if m.unshare else "unshare -m is not permitted here"


# --------------------------------------------------------------------------- setups

def base_env() -> Dict[str, str]:
    env = dict(os.environ)
    for k in ("TRITON_CACHE_DIR", "TRITON_HOME", "CUDA_VISIBLE_DEVICES", "TRITON_PTXAS_PATH",
              "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_LIBCUDA_PATH"):
        env.pop(k, None)
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    return env


def fresh_cache(env: Dict[str, str], tmp: Path) -> Dict[str, str]:
    d = tmp / "fresh-cache"
    d.mkdir(exist_ok=True)
    env["TRITON_CACHE_DIR"] = str(d)
    return env


def with_env(**variables: str) -> Callable[[Machine, Path], Setup]:
    """A setup: the base environment with a fresh Triton cache and these variables set."""
    def setup(m: Machine, tmp: Path) -> Setup:
        env = fresh_cache(base_env(), tmp)
        env.update(variables)
        return Setup(env)
    return setup


healthy = with_env()


def no_compiler(m: Machine, tmp: Path) -> Setup:
    env = fresh_cache(base_env(), tmp)
    env.pop("CC", None)
    env.pop("CXX", None)
    env["PATH"] = symlink_path(is_compiler, tmp / "bin-nocc")
    return Setup(env)


def no_compiler_warm(m: Machine, tmp: Path) -> Setup:
    env = base_env()
    env.pop("CC", None)
    env.pop("CXX", None)
    env["TRITON_CACHE_DIR"] = str(tmp / "warm-cache")  # warmed by the runner before this setup's env is used
    env["PATH"] = symlink_path(is_compiler, tmp / "bin-nocc")
    return Setup(env)


def no_file_warm(m: Machine, tmp: Path) -> Setup:
    env = no_compiler_warm(m, tmp).env
    env["PATH"] = symlink_path(lambda n: is_compiler(n) or n == "file", tmp / "bin-nocc-nofile")
    return Setup(env)


def no_file_with_compiler(m: Machine, tmp: Path) -> Setup:
    env = fresh_cache(base_env(), tmp)
    env["PATH"] = symlink_path(lambda n: n == "file", tmp / "bin-nofile")
    return Setup(env)


def hide_python_h(m: Machine, tmp: Path) -> Setup:
    empty = tmp / "empty-include"
    empty.mkdir(exist_ok=True)
    script = 'mount --bind "$0" "$1" && shift && exec "$@"'
    return Setup(fresh_cache(base_env(), tmp),
                 ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(empty), str(m.include_dir)])


def ptxas_not_executable(m: Machine, tmp: Path) -> Setup:
    env = fresh_cache(base_env(), tmp)
    bad = tmp / "ptxas-noexec"
    if m.ptxas:
        shutil.copyfile(m.ptxas, bad)
    else:
        bad.write_text("not a program\n")
    bad.chmod(0o644)
    # whichever variable applies to this Triton and arch, both point at the broken tool
    env["TRITON_PTXAS_PATH"] = str(bad)
    env["TRITON_PTXAS_BLACKWELL_PATH"] = str(bad)
    return Setup(env)


#: where a CUDA toolkit keeps its link-time stub of libcuda (never meant to be loaded at run time)
STUB_LIBCUDA = ("/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so",
                "/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so")

#: a stand-in for the toolkit's stub where no toolkit is installed: every entry point returns
#: CUDA_ERROR_STUB_LIBRARY (34), as the real stub does
STUB_SOURCE = r"""
int cuInit(unsigned int f) { return 34; }
int cuDriverGetVersion(int *v) { return 34; }
int cuDeviceGetCount(int *n) { return 34; }
int cuGetProcAddress(const char *s, void **p, int v, unsigned long long f) { return 34; }
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, void *st) { return 34; }
int cuGetErrorString(int e, const char **s) { return 34; }
int cuGetErrorName(int e, const char **s) { return 34; }
"""


def stub_libcuda_first(m: Machine, tmp: Path) -> Setup:
    """The toolkit's stubs directory, with a libcuda.so.1 link in it (as Dockerfiles that link
    against the stub make), first on LD_LIBRARY_PATH."""
    stubs = tmp / "stubs"
    stubs.mkdir(exist_ok=True)
    link = stubs / "libcuda.so.1"
    real = next((c for c in STUB_LIBCUDA if os.path.exists(c)), None)
    if real and not link.exists():
        link.symlink_to(real)
    elif not link.exists():
        src = tmp / "stub.c"
        src.write_text(STUB_SOURCE)
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(link), str(src)], check=True, timeout=60)
    env = fresh_cache(base_env(), tmp)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(stubs), env.get("LD_LIBRARY_PATH", "")]))
    return Setup(env)


def visible_index_out_of_range(m: Machine, tmp: Path) -> Setup:
    env = fresh_cache(base_env(), tmp)
    env["CUDA_VISIBLE_DEVICES"] = str(max(m.gpus, 1))  # the first index this machine does not have
    return Setup(env)


def cache_dir_is_a_file(m: Machine, tmp: Path) -> Setup:
    env = base_env()
    blocker = tmp / "triton-cache"
    blocker.write_text("a file where Triton's cache directory should be\n")
    env["TRITON_CACHE_DIR"] = str(blocker)
    return Setup(env)


def stray_triton_package(m: Machine, tmp: Path) -> Setup:
    """A folder named triton with an __init__.py on PYTHONPATH (a scratch directory, a checkout's
    leftover): ``import triton`` finds it before the installed Triton."""
    stray = tmp / "stray" / "triton"
    stray.mkdir(parents=True, exist_ok=True)
    (stray / "__init__.py").write_text("# not Triton\n")
    return Setup(fresh_cache(base_env(), tmp), path=[str(stray.parent)])


def docker_default_shm(m: Machine, tmp: Path) -> Setup:
    """/dev/shm as Docker mounts it without --shm-size or --ipc=host: 64 MiB (private mount namespace)."""
    script = 'mount -t tmpfs -o size=64m,nosuid,nodev,noexec shm /dev/shm && exec "$@"'
    return Setup(fresh_cache(base_env(), tmp), ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"])


#: what a missing preload looks like: a path that was right on another machine or image (an
#: allocator, an NCCL plugin, a shim), here absent
MISSING_PRELOAD = "/opt/stackpeel-absent/lib/libjemalloc.so.2"

#: a Git LFS pointer: what a repository that keeps its libraries in LFS checks out when git-lfs is
#: not installed (a text file where the library should be, well over ELF's 64-byte header)
LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 28168440\n")


def libcuda_not_elf_first(m: Machine, tmp: Path) -> Setup:
    """A folder first on LD_LIBRARY_PATH holding a libcuda.so.1 that is a text file (a Git LFS
    pointer, a file a broken download or copy left): the loader stops at it with 'invalid ELF
    header' instead of going on to the driver's own libcuda.so.1."""
    bad = tmp / "libcuda-not-elf"
    bad.mkdir(exist_ok=True)
    (bad / "libcuda.so.1").write_text(LFS_POINTER)
    env = fresh_cache(base_env(), tmp)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(bad), env.get("LD_LIBRARY_PATH", "")]))
    return Setup(env)


# --------------------------------------------------------------------------- an older CUDA library first (gpu23)
#
# torch's CUDA libraries come from nvidia-* wheels; the commonest loader fault users paste is an older
# copy of one of them found first (a system toolkit on LD_LIBRARY_PATH, a conda package, LD_PRELOAD):
# `libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12`.
# nvJitLink adds release-suffixed symbols in each CUDA minor (12.0.76 defines only *_12_0, 12.1.105
# also *_12_1); CUDA 13's first release (13.0.39) already defines every *_13_0 that torch's
# CUDA 13.0 cusparse (nvidia/cu13/lib, RUNPATH $ORIGIN) asks for. torch >= 2.6 loads its own
# nvJitLink by path before cusparse (torch/__init__.py _load_global_deps -> _preload_cuda_deps), so a
# copy on LD_LIBRARY_PATH is never used; LD_PRELOAD still wins. The wheels are PyPI's, downloaded with
#   pip download --no-deps --only-binary=:all: -d .whl nvidia-nvjitlink==13.0.39        (CUDA 13 torch)
#   pip download --no-deps --only-binary=:all: -d .whl nvidia-nvjitlink-cu12==12.0.76   (CUDA 12 torch)
# and carried in <repo>/.whl; the setup unpacks the library from the wheel into the scenario's folder.

WHEELS = REPO / ".whl"
#: torch's CUDA major -> (the older nvJitLink wheel, its version, the library inside it)
OLDER_NVJITLINK = {
    "13": ("nvidia_nvjitlink-13.0.39-*.whl", "13.0.39", "nvidia/cu13/lib/libnvJitLink.so.13"),
    "12": ("nvidia_nvjitlink_cu12-12.0.76-*.whl", "12.0.76", "nvidia/nvjitlink/lib/libnvJitLink.so.12"),
}


def cuda_major(m: Machine) -> Optional[str]:
    return m.cuda_version.split(".")[0] if m.cuda_version else None


def older_nvjitlink_wheel(m: Machine, wheels: Optional[Path] = None) -> Optional[Path]:
    entry = OLDER_NVJITLINK.get(cuda_major(m) or "")
    found = sorted((wheels or WHEELS).glob(entry[0])) if entry else []
    return found[0] if found else None


def need_older_nvjitlink(major: Optional[str] = None, preloads: bool = True):
    """torch built for CUDA ``major`` (any known one when None), the older nvJitLink wheel of that major
    in <repo>/.whl, and (``preloads``) a torch that preloads its own nvidia-* libraries."""
    def check(m: Machine) -> Optional[str]:
        have = cuda_major(m)
        if have is None:
            return f"needs a CUDA build of torch; {m.torch_version or 'no torch'} has none"
        if major is not None and have != major:
            return f"for a torch built for CUDA {major}; this one is {m.torch_version} (CUDA {m.cuda_version})"
        if have not in OLDER_NVJITLINK:
            return f"no older nvJitLink wheel is known for CUDA {have}"
        if older_nvjitlink_wheel(m) is None:
            pattern, version, _ = OLDER_NVJITLINK[have]
            return (f"{WHEELS}/{pattern} is absent: pip download --no-deps --only-binary=:all: -d {WHEELS} "
                    f"{'nvidia-nvjitlink' if have == '13' else 'nvidia-nvjitlink-cu' + have}=={version}")
        if preloads and not m.torch_preloads_cuda_libs:
            return f"torch {m.torch_version} does not preload its nvidia-* libraries (torch < 2.6)"
        return None
    return check


def unpack_older_nvjitlink(m: Machine, tmp: Path) -> Path:
    """The older libnvJitLink of torch's CUDA major, unpacked from its wheel into <tmp>/nvjitlink-<version>/."""
    import zipfile
    _, version, member = OLDER_NVJITLINK[cuda_major(m) or ""]
    wheel = older_nvjitlink_wheel(m)
    if wheel is None:
        raise FileNotFoundError(f"no older nvJitLink wheel for CUDA {m.cuda_version} in {WHEELS}")
    folder = tmp / f"nvjitlink-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / os.path.basename(member)
    if not target.exists():
        with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def older_nvjitlink_first(m: Machine, tmp: Path) -> Setup:
    """The older libnvJitLink first on LD_LIBRARY_PATH, as a system toolkit or conda's lib puts it."""
    lib = unpack_older_nvjitlink(m, tmp)
    env = fresh_cache(base_env(), tmp)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib.parent), env.get("LD_LIBRARY_PATH", "")]))
    return Setup(env)


def older_nvjitlink_preloaded(m: Machine, tmp: Path) -> Setup:
    """The older libnvJitLink in LD_PRELOAD: in the process before torch asks for its own."""
    lib = unpack_older_nvjitlink(m, tmp)
    env = fresh_cache(base_env(), tmp)
    env["LD_PRELOAD"] = " ".join(filter(None, [str(lib), env.get("LD_PRELOAD", "")]))
    return Setup(env)


# --------------------------------------------------------------------------- more setups

def cc_names_nothing(m: Machine, tmp: Path) -> Setup:
    env = fresh_cache(base_env(), tmp)
    env["CC"] = str(tmp / "no-such-dir" / "gcc")
    return Setup(env)


def libcuda_path_without_libcuda(m: Machine, tmp: Path) -> Setup:
    empty = tmp / "no-libcuda-here"
    empty.mkdir(exist_ok=True)
    env = fresh_cache(base_env(), tmp)
    env["TRITON_LIBCUDA_PATH"] = str(empty)
    return Setup(env)


def cache_on_mount(options: str):
    """TRITON_CACHE_DIR on a tmpfs mounted with ``options`` (private mount namespace): /tmp or a
    home directory mounted noexec, or read-only, as hardened hosts and some clusters do."""
    def setup(m: Machine, tmp: Path) -> Setup:
        mnt = tmp / "cache-mount"
        mnt.mkdir(exist_ok=True)
        env = base_env()
        env["TRITON_CACHE_DIR"] = str(mnt / "triton")
        if "ro" in options.split(","):  # a read-only mount of a directory that exists
            (mnt / "triton").mkdir(exist_ok=True)
            script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
        else:
            script = f'mount -t tmpfs -o {options} tmpfs "$0" && exec "$@"'
        return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(mnt)])
    return setup



# --------------------------------------------------------------------------- device nodes

#: where the real NVIDIA nodes are read from (tests point it at a folder of fake nodes)
DEV_SOURCE = "/dev"

#: the ordinary nodes every program expects in /dev, recreated with the host's major/minor
STANDARD_NODES = ("null", "zero", "full", "random", "urandom", "tty")

#: the unprivileged user a permission scenario runs as (nobody/nogroup on Debian and Ubuntu)
NOBODY = 65534


def _nvidia_nodes(source: str) -> List[str]:
    """The NVIDIA character nodes under ``source`` ('nvidiactl', 'nvidia0', 'nvidia-caps/nvidia-cap1', ...)."""
    names = []
    for name in sorted(os.listdir(source)) if os.path.isdir(source) else []:
        path = os.path.join(source, name)
        if name == "nvidia-caps" and os.path.isdir(path):
            names += [f"{name}/{n}" for n in sorted(os.listdir(path))
                      if stat.S_ISCHR(os.stat(os.path.join(path, n)).st_mode)]
        elif name.startswith("nvidia") and stat.S_ISCHR(os.stat(path).st_mode):
            names.append(name)
    return names


def _is_gpu_node(name: str) -> bool:
    return name.startswith("nvidia") and name[6:].isdigit()


def device_nodes_script(keep: Sequence[str], source: str, save: Path,
                        modes: Optional[Dict[str, int]] = None, orphan_major: Optional[int] = None,
                        user: Optional[int] = None) -> str:
    """A shell script (run as root in a private mount namespace) that replaces /dev by a tmpfs
    holding the standard nodes, the host's /dev/shm, and copies (mknod, the real major/minor and
    owner; ``modes`` overrides a node's mode) of the NVIDIA nodes in ``keep``, then remounts it
    read-only, as a container's /dev looks to a program that tries to create a missing node.

    ``save`` is an empty folder where the host's /dev and /dev/shm stay reachable once the tmpfs
    hides them. ``orphan_major`` (a character major no driver has registered) makes every NVIDIA
    node a copy at that major, and hides /proc/driver/nvidia and the nvidia lines of /proc/modules:
    the nodes a host keeps after ``rmmod nvidia``, which open with ENXIO. ``user`` (a uid) runs the
    program as that user. Where mknod is refused (a machine that is itself a container without
    CAP_MKNOD) a node keeping its host mode is bind-mounted from there instead; a node whose mode
    is overridden is always a copy, so the host's own node is never changed."""
    q = lambda p: shlex.quote(str(p))  # noqa: E731
    (save / "dev").mkdir(parents=True, exist_ok=True)
    (save / "shm").mkdir(exist_ok=True)
    lines = ["set -e", f"mount --bind /dev {q(save / 'dev')}", f"mount --bind /dev/shm {q(save / 'shm')}",
             "mount -t tmpfs -o mode=755,nosuid,size=1m stackpeel-dev /dev"]

    def node(src: str, src_here: str, name: str, mode: Optional[int] = None, major: Optional[int] = None) -> None:
        st = os.stat(src)
        perm = stat.S_IMODE(st.st_mode) if mode is None else mode
        dst = q("/dev/" + name)
        copy = (f"mknod -m {perm:o} {dst} c {os.major(st.st_rdev) if major is None else major} {os.minor(st.st_rdev)}"
                f" && chown {st.st_uid}:{st.st_gid} {dst}")
        if mode is None and major is None:
            lines.append(f"{{ {copy}; }} || {{ rm -f {dst}; : > {dst} && mount --bind {q(src_here)} {dst}; }}")
        else:
            lines.append(copy)

    for name in STANDARD_NODES:
        if os.path.exists("/dev/" + name):
            node("/dev/" + name, str(save / "dev" / name), name)
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        lines.append(f"ln -s /proc/self/fd/{i} /dev/{name}")
    lines += ["ln -s /proc/self/fd /dev/fd", "mkdir -m 1777 /dev/shm", f"mount --bind {q(save / 'shm')} /dev/shm"]
    if any("/" in n for n in keep):
        lines.append("mkdir -m 755 /dev/nvidia-caps")
    for name in keep:
        src = os.path.join(source, name)
        here = str(save / "dev" / name) if os.path.realpath(source) == "/dev" else src
        node(src, here, name, (modes or {}).get(name), orphan_major)
    if orphan_major is not None:
        (save / "no-driver").mkdir(exist_ok=True)
        modules = save / "modules"
        lines += [f"if [ -d /proc/driver/nvidia ]; then mount --bind {q(save / 'no-driver')} /proc/driver/nvidia; fi",
                  f"if [ -r /proc/modules ]; then grep -v '^nvidia' /proc/modules > {q(modules)} || true; "
                  f"mount --bind {q(modules)} /proc/modules; fi"]
    # the program runs as ``user`` (uid and gid, no supplementary groups) when one is given
    switch = f"setpriv --reuid={user} --regid={user} --clear-groups " if user is not None else ""
    lines += ["mount -o remount,ro /dev", f'exec {switch}"$@"']
    return "\n".join(lines)


def free_char_major() -> int:
    """A character major no driver here has registered (/proc/devices), as the kernel hands out
    dynamic majors from 511 down: a node made at it opens with ENXIO."""
    with open("/proc/devices") as f:
        text = f.read().split("Block devices:")[0]
    used = {int(line.split()[0]) for line in text.splitlines()[1:] if line.strip()}
    return next(m for m in range(511, 233, -1) if m not in used)


def device_nodes_setup(drop: Callable[[str], bool] = lambda n: False, modes: Optional[Dict[str, int]] = None,
                       user: Optional[int] = None, orphaned: bool = False) -> Callable[[Machine, Path], Setup]:
    """A setup: /dev as a container sees it (see device_nodes_script) without the NVIDIA nodes
    ``drop`` names, ``modes`` applied to the ones kept (name -> mode; a name's GPU nodes by the key
    'nvidia<N>'), and the programs run as ``user`` (uid = gid, no supplementary groups) if given.

    Why /dev is read-only: libcuda creates a missing node at the first CUDA call, itself when it
    runs as root or through the setuid-root nvidia-modprobe (checks/cuda.py, DeviceNodes's
    ``_uvm_on_demand``). With a writable /dev the suite, which runs as root, would see root's
    cuInit re-create /dev/nvidia-uvm and CUDA work (it did on the H200:
    tests/test_gpu_layers.py's recorded 'uvm' case), which is no container's fault. A Docker
    container's /dev is writable and root may mknod there, but its device cgroup refuses to open a
    node it was not given, so the fault stays; a read-only /dev is how this namespace keeps it
    without a cgroup of its own, and check sees it (``dev_read_only``: nobody can create a node)."""
    def setup(m: Machine, tmp: Path) -> Setup:
        env = base_env()
        names = _nvidia_nodes(DEV_SOURCE)
        keep = [n for n in names if not drop(n)]
        per_node = {n: mode for key, mode in (modes or {}).items() for n in keep
                    if n == key or (key == "nvidia<N>" and _is_gpu_node(n))}
        if user is not None:
            # a home of its own: in the scenario's folder if the user can reach it, else in the system's
            # temporary folder (the results may sit under a home only root enters), removed when the
            # suite ends
            reachable = all(os.stat(p).st_mode & 0o001 for p in [tmp.resolve(), *tmp.resolve().parents])
            if reachable:
                home = tmp / f"home-uid{user}"
            else:
                home = Path(tempfile.mkdtemp(prefix=f"stackpeel-uid{user}-"))
                atexit.register(shutil.rmtree, home, True)
            home.mkdir(exist_ok=True)
            (home / "triton-cache").mkdir(exist_ok=True)
            for p in (home, home / "triton-cache"):
                os.chown(p, user, user)
            env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
                       TRITON_CACHE_DIR=str(home / "triton-cache"))
            env.pop("USER", None)
            env.pop("LOGNAME", None)
        else:
            fresh_cache(env, tmp)
        script = device_nodes_script(keep, DEV_SOURCE, tmp / "host", per_node,
                                     free_char_major() if orphaned else None, user)
        (tmp / "dev-setup.sh").write_text(script + "\n")
        return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"])
    return setup


def need_nvidia_nodes(m: Machine) -> Optional[str]:
    names = _nvidia_nodes(DEV_SOURCE)
    if "nvidiactl" not in names or not any(_is_gpu_node(n) for n in names) or "nvidia-uvm" not in names:
        return f"needs /dev/nvidiactl, /dev/nvidia<N> and /dev/nvidia-uvm on the host; {DEV_SOURCE} has {names}"
    return None


def need_unprivileged_python(m: Machine) -> Optional[str]:
    """The unprivileged user must be able to run the target interpreter and import stackpeel and
    the user's kernel from where they are (a checkout under /root is closed to it)."""
    if not shutil.which("setpriv"):
        return "needs setpriv (util-linux) to run as an unprivileged user"
    # stackpeel starts the target again by its path (its probes), so that path must resolve for the
    # user too, not only the first exec (setpriv execs it before a parent folder closed to the user
    # is checked again in some sandboxes)
    code = (f"import os, subprocess, sys; sys.path.insert(0, {str(REPO / 'src')!r}); import stackpeel, torch, triton; "
            f"open({str(USER_KERNEL)!r}).read(); subprocess.run([{m.python!r}, '-c', 'import torch'], check=True)")
    p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", m.python, "-c", code],
                       capture_output=True, text=True, timeout=300, env=dict(base_env(), HOME="/"))
    if p.returncode != 0:
        return (f"uid {NOBODY} cannot run {m.python} with stackpeel from {REPO / 'src'} "
                f"(make them world-readable): {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return None

# --------------------------------------------------------------------------- process limits, a shared GPU

def need_prlimit(m: Machine) -> Optional[str]:
    return None if shutil.which("prlimit") else "needs prlimit (util-linux) to set the job's limits"


def with_limits(**limits: int) -> Callable[[Machine, Path], Setup]:
    """A setup: the programs run under these resource limits, soft and hard (``prlimit --as=N``,
    ``--nofile=N``), as a batch scheduler, a login limit or a job script's ``ulimit`` sets them;
    check's probes inherit them, as they would in the user's job."""
    def setup(m: Machine, tmp: Path) -> Setup:
        flags = [f"--{name}={value}" for name, value in sorted(limits.items())]
        return Setup(fresh_cache(base_env(), tmp), ["prlimit", *flags, "--"])
    return setup


#: the address-space limit of the address-space-limit scenario: far above what importing torch,
#: Triton and stackpeel maps (a few GiB), far below the range the CUDA driver reserves at cuInit
#: on an H200 (sized by the GPU's 141 GB and the host's memory)
ADDRESS_SPACE_LIMIT = 16 << 30

#: the open-files limit of the open-files-limit-cuda scenario: between the 28 at which Triton's
#: driver build fails and the 48 at which torch's first tensor still does (one H200, 2026-12-04)
OPEN_FILES_CUDA_LIMIT = 32
#: the layer codes a low open-files limit produces, which must nest under it (never roots)
OPEN_FILES_LAYER_ROOTS = ["triton-kernel-failed", "nccl-p2p-blocked", "torch-gpu-op-failed",
                          "triton-driver-init-failed", "triton-no-active-driver"]

#: what the gpu-memory-held-by-another-process holder leaves free, and what the user's job allocates
HOLDER_LEAVES_GIB = 4
USER_MODEL_GIB = 8


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def gpu_memory_held(m: Machine, tmp: Path) -> Setup:
    """Another process (scenarios/gpu/gpu_memory_holder.py, on the target interpreter) holds all
    but HOLDER_LEAVES_GIB of GPU 0's memory and sleeps; the teardown stops it (and it dies with
    the suite, and after 30 minutes, on its own)."""
    env = fresh_cache(base_env(), tmp)
    ready = tmp / "holder.json"
    if ready.exists():
        ready.unlink()
    with open(tmp / "holder.log", "wb") as log:
        proc = subprocess.Popen([m.python, str(GPU_MEMORY_HOLDER), "--leave-gib", str(HOLDER_LEAVES_GIB),
                                 "--ready", str(ready), "--parent", str(os.getpid())], env=base_env(), stdout=log,
                                stderr=subprocess.STDOUT)
    atexit.register(_stop, proc)
    deadline = time.monotonic() + 180
    while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    if not ready.exists():  # no fault to judge: the scenario fails as a setup, not as check's miss
        _stop(proc)
        tail = (tmp / "holder.log").read_text(errors="replace")[-400:]
        raise RuntimeError(f"the GPU memory holder did not hold the memory (rc {proc.returncode}): {tail}")
    return Setup(env, teardown=[lambda: _stop(proc)])


def home_read_only(m: Machine, tmp: Path) -> Setup:
    """HOME on a read-only mount (private mount namespace) and no TRITON_CACHE_DIR or TRITON_HOME, as
    on clusters whose home directories are read-only on the compute nodes: Triton's default cache,
    ``~/.triton/cache``, cannot be made."""
    home = tmp / "home-read-only"
    home.mkdir(exist_ok=True)
    env = base_env()  # TRITON_CACHE_DIR and TRITON_HOME unset
    env["HOME"] = str(home)
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(home)])


# -- tmp24: the temporary directory Triton builds in ------------------------------------------------

def _tmp_fault(tmp: Path, full: bool) -> Setup:
    """/tmp unusable in a private mount namespace, TMPDIR/TEMP/TMP unset, a fresh Triton cache on a
    tmpfs of its own (so Triton must build its helpers and its cache is no fault).

    Read-only: /tmp, /var/tmp (and /usr/tmp) made read-only in place (a suite output folder under /tmp
    stays visible) and the commands run from a read-only directory, so tempfile has no candidate left
    (its last one is the working directory). Full: a full 64 KiB tmpfs over /tmp, the Triton cache on
    a tmpfs at /mnt (a cache under /tmp would be hidden by it); stackpeel's checkout must not be under
    /tmp then."""
    env = base_env()
    for k in ("TMPDIR", "TEMP", "TMP"):
        env.pop(k, None)
    ro = 'ro() { mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"; }; '
    if full:
        if str(REPO).startswith("/tmp/") or not os.path.isdir("/mnt"):
            raise RuntimeError("a tmpfs over /tmp would hide this checkout (under /tmp), or there is no /mnt "
                               "for the Triton cache")
        env["TRITON_CACHE_DIR"] = "/mnt/stackpeel-triton-cache"
        script = ('mount -t tmpfs -o size=256m tmpfs /mnt && mkdir /mnt/stackpeel-triton-cache && '
                  'mount -t tmpfs -o size=64k tmpfs /tmp && { dd if=/dev/zero of=/tmp/fill bs=4k count=64 '
                  '2>/dev/null; true; } && exec "$@"')
        return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"])
    cache = tmp / "fresh-cache"
    cache.mkdir(exist_ok=True)
    env["TRITON_CACHE_DIR"] = str(cache)
    cwd = tmp / "read-only-cwd"
    cwd.mkdir(exist_ok=True)
    script = (ro + 'ro /tmp && { [ ! -d /var/tmp ] || ro /var/tmp; } && { [ ! -d /usr/tmp ] || ro /usr/tmp; } && '
              'mount -t tmpfs -o size=256m tmpfs "$0" && ro "$1" && cd "$1" && shift && exec "$@"')
    return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(cache), str(cwd)])


def tmp_read_only(m: Machine, tmp: Path) -> Setup:
    return _tmp_fault(tmp, full=False)


def tmp_full(m: Machine, tmp: Path) -> Setup:
    return _tmp_fault(tmp, full=True)



# -- gpu38: where Triton looks for libcuda.so.1, and a full cache --------------------------------------------

def ldconfig_cache_without_libcuda(m: Machine, tmp: Path) -> Setup:
    """/etc/ld.so.cache replaced (private mount namespace) by a valid cache of an empty root, and
    LD_LIBRARY_PATH unset: `/sbin/ldconfig -p` lists no libcuda.so.1 and Triton has nowhere else to
    look, while the loader still finds the driver's libcuda.so.1 in its default directories (/lib,
    /usr/lib and the multiarch ones), so torch works: a container that bind-mounted the driver's
    libraries without refreshing the linker cache (FAILURE_MODES T5)."""
    root = tmp / "empty-root"
    (root / "etc").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["/sbin/ldconfig", "-r", str(root)], capture_output=True, text=True, timeout=60)
    cache = root / "etc" / "ld.so.cache"
    if not cache.is_file():
        raise RuntimeError(f"ldconfig -r wrote no cache (rc {proc.returncode}): {proc.stderr[-300:]}")
    env = fresh_cache(base_env(), tmp)
    env.pop("LD_LIBRARY_PATH", None)
    script = 'mount --bind "$0" /etc/ld.so.cache && exec "$@"'
    return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(cache)])


def ldconfig_hidden(m: Machine, tmp: Path) -> Setup:
    """An empty tmpfs over the directory that holds /sbin/ldconfig (private mount namespace), as in a
    distroless image: Triton's hard-coded `/sbin/ldconfig -p` raises FileNotFoundError on a fresh cache."""
    env = fresh_cache(base_env(), tmp)
    script = ('d=$(dirname "$(readlink -f /sbin/ldconfig)") && mount -t tmpfs -o size=1m tmpfs "$d" && '
              '[ ! -e /sbin/ldconfig ] && exec "$@"')
    return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"])


def cache_on_full_mount(m: Machine, tmp: Path) -> Setup:
    """TRITON_CACHE_DIR on a 64 KiB tmpfs filled to the last block (private mount namespace), as a
    quota or a full disk leaves it: the folder exists and is writable, every write fails with ENOSPC."""
    mnt = tmp / "cache-mount"
    mnt.mkdir(exist_ok=True)
    env = base_env()
    env["TRITON_CACHE_DIR"] = str(mnt / "triton")
    script = ('mount -t tmpfs -o size=64k tmpfs "$0" && mkdir "$0/triton" && '
              '{ dd if=/dev/zero of="$0/fill" bs=4k count=64 2>/dev/null; true; } && exec "$@"')
    return Setup(env, ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(mnt)])


#: the Triton layer's own codes: a temporary-directory fault must not be blamed on them
TRITON_LAYER_ROOTS = ("triton-cache-unusable", "env-path-unusable", "no-c-compiler", "c-compiler-broken",
                      "triton-build-failed", "triton-kernel-failed", "triton-driver-init-failed")


SCENARIOS: List[Scenario] = [
    Scenario(
        "healthy", "untouched machine, fresh Triton cache: no blocking finding, no false alarm",
        healthy, need_gpu(), no_blocking=True, passes=["cuda.driver_api", "torch.cuda", "triton.kernel_launch"],
        proofs=[Proof("user kernel runs", [], True, "user kernel OK")]),
    Scenario(
        "no-compiler", "every C compiler removed from PATH, CC unset, fresh Triton cache",
        no_compiler, roots=["no-c-compiler"],
        symptoms={"no-c-compiler": ["toolchain.extension_build", "triton.build", "triton.kernel_launch"]},
        evidence={"triton.build": ["Failed to find C compiler"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "Failed to find C compiler")],
        explain=["no-c-compiler"]),
    Scenario(
        "no-compiler-warm-cache",
        "cache warmed with a compiler, then the compiler removed: the user's launch still works; stackpeel "
        "reports the latent failure, and a new launcher signature (n == 1, Triton <= 3.6) proves it",
        no_compiler_warm, need_gpu(), roots=["no-c-compiler"], findings=["triton-warm-cache-hides-compiler"],
        warm_cache=True,
        proofs=[Proof("same launch with the warm cache works", [], True, "user kernel OK"),
                Proof("new launcher signature (n == 1) fails", ["--n1"], False, "Failed to find C compiler",
                      only_if=lambda m: m.gpus > 0 and m.triton_at_most(3, 6))]),
    Scenario(
        "no-file-warm-cache",
        "cache warmed with a compiler, then both the compiler and `file` removed: the cache key changes and "
        "the warm cache silently goes cold",
        no_file_warm, need_gpu(), roots=["no-c-compiler"], findings=["file-command-missing"], warm_cache=True,
        proofs=[Proof("the identical launch now fails", [], False, "Failed to find C compiler")],
        explain=["no-c-compiler"]),
    Scenario(
        "no-file", "`file` missing but a compiler present: degraded only (caches from other images go cold)",
        no_file_with_compiler, need_gpu(), findings=["file-command-missing"], no_blocking=True),
    Scenario(
        "python-h-hidden", "Python.h hidden by an empty bind mount over the include dir (private mount namespace)",
        hide_python_h, need_unshare, roots=["python-headers-missing"],
        symptoms={"python-headers-missing": ["toolchain.extension_build", "triton.build"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "Python.h")],
        explain=["python-headers-missing"]),
    Scenario(
        "cuda-visible-devices-empty", "CUDA_VISIBLE_DEVICES= (empty): the variable is the root cause, not 'no GPU'",
        with_env(CUDA_VISIBLE_DEVICES=""), need_gpu(), roots=["cuda-visible-devices-hides-gpus"],
        forbid_roots=["no-nvidia-driver"],
        evidence={"triton.kernel_launch": ["0 active drivers"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["cuda-visible-devices-hides-gpus"]),
    Scenario(
        "ptxas-not-executable", "TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH point at a non-executable ptxas",
        ptxas_not_executable, need_gpu(), roots=["env-path-unusable"],
        symptoms={"env-path-unusable": ["toolchain.ptxas"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False)],
        explain=["env-path-unusable", "ptxas-unusable"]),
    Scenario(
        "fla-no-compiler", "the seed: FLA installed, no C compiler, fresh cache; FLA's 'roll back to CPU' is a "
        "symptom and the exception it swallowed is recovered",
        no_compiler, need_all(need_gpu(), need_fla), roots=["no-c-compiler"],
        symptoms={"no-c-compiler": ["kernels.fla"]},
        evidence={"kernels.fla": ["roll back to CPU", "Failed to find C compiler"]}),
    Scenario(
        "libcuda-stub-first", "the CUDA toolkit's stub libcuda (linked as libcuda.so.1) first on LD_LIBRARY_PATH: "
        "cuInit returns CUDA_ERROR_STUB_LIBRARY; NVML and the driver are fine",
        stub_libcuda_first, need_gpu(), roots=["libcuda-stub-loaded"], forbid_roots=["no-nvidia-driver"],
        evidence={"cuda.driver_api": ["stub"]},
        proofs=[Proof("user kernel fails under the stub", [], False)], explain=["libcuda-stub-loaded"]),
    Scenario(
        "cuda-visible-devices-out-of-range", "CUDA_VISIBLE_DEVICES names an index this machine does not have",
        visible_index_out_of_range, need_gpu(), roots=["cuda-visible-devices-hides-gpus"],
        forbid_roots=["no-nvidia-driver"], proofs=[Proof("user kernel fails", [], False)],
        explain=["cuda-visible-devices-hides-gpus"]),
    Scenario(
        "cuda-visible-devices-unknown-uuid", "CUDA_VISIBLE_DEVICES names a GPU UUID no GPU here has",
        with_env(CUDA_VISIBLE_DEVICES="GPU-00000000-0000-0000-0000-000000000000"), need_gpu(),
        roots=["cuda-visible-devices-hides-gpus"],
        forbid_roots=["no-nvidia-driver"], proofs=[Proof("user kernel fails", [], False)],
        explain=["cuda-visible-devices-hides-gpus"]),
    Scenario(
        "triton-cache-dir-is-a-file", "TRITON_CACHE_DIR names a regular file: the variable is the root cause, "
        "Triton's unusable cache its symptom",
        cache_dir_is_a_file, need_gpu(), roots=["env-path-unusable"],
        symptoms={"env-path-unusable": ["toolchain.triton_cache"]},
        evidence={"config.triton_environment": ["TRITON_CACHE_DIR"], "toolchain.triton_cache": ["not a directory"]},
        summaries={"triton.kernel_launch": ["cannot be used"]},  # it passes in a private cache: it must say so
        proofs=[Proof("user kernel fails", [], False)], explain=["triton-cache-unusable", "env-path-unusable"]),
    Scenario(
        "stray-triton-package", "a stray triton/__init__.py on PYTHONPATH shadows the installed Triton",
        stray_triton_package, need_gpu(), roots=["module-shadowed"],
        evidence={"config.module_origins": ["triton"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["module-shadowed"]),
    Scenario(
        "docker-default-shm", "/dev/shm of 64 MiB, as Docker mounts it without --shm-size (private mount namespace)",
        docker_default_shm, need_all(need_gpu(), need_unshare), findings=["nccl-shm-too-small"]),
    Scenario(
        "cc-names-nothing", "CC names a compiler path that does not exist (Triton runs CC before any gcc on PATH)",
        cc_names_nothing, need_gpu(), roots=["env-path-unusable"],
        evidence={"config.compiler_environment": ["CC"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False)],
        explain=["env-path-unusable", "c-compiler-broken"]),
    Scenario(
        "nccl-socket-ifname-names-nothing", "NCCL_SOCKET_IFNAME names a network interface this host does not have",
        with_env(NCCL_SOCKET_IFNAME="ens999np0"), need_gpu(), findings=["env-nccl-socket-ifname-no-match"]),
    Scenario(
        "alloc-conf-invalid", "PYTORCH_CUDA_ALLOC_CONF with a misspelt option: torch refuses it at the first allocation",
        # the option is expandable_segments
        with_env(PYTORCH_CUDA_ALLOC_CONF="expandable_segment:True"), need_gpu(), findings=["env-alloc-conf-invalid"],
        proofs=[Proof("user kernel fails", [], False)], explain=["env-alloc-conf-invalid"]),
    Scenario(
        "triton-libcuda-path-without-libcuda", "TRITON_LIBCUDA_PATH names a directory without libcuda.so.1, on a "
        "host whose compiler finds the driver's libcuda in its own directories: wrong, not blocking",
        libcuda_path_without_libcuda, need_gpu(), no_blocking=True, findings=["triton-libcuda-path-wrong"],
        summaries={"toolchain.libcuda_discovery": ["finds it elsewhere"]},
        proofs=[Proof("user kernel still runs on a fresh cache (the link finds libcuda.so.1)", [], True,
                      "user kernel OK")]),
    Scenario(
        "cuda-visible-devices-duplicate", "CUDA_VISIBLE_DEVICES=0,0 names one GPU twice",
        with_env(CUDA_VISIBLE_DEVICES="0,0"), need_gpu(), roots=["cuda-visible-devices-hides-gpus"],
        forbid_roots=["no-nvidia-driver"],
        proofs=[Proof("user kernel fails", [], False)], explain=["cuda-visible-devices-hides-gpus"]),
    Scenario(
        "triton-cache-noexec", "TRITON_CACHE_DIR on a noexec mount: Triton cannot load the helpers it builds there",
        cache_on_mount("noexec,size=256m"), need_all(need_gpu(), need_unshare), roots=["triton-cache-unusable"],
        proofs=[Proof("user kernel fails", [], False)], explain=["triton-cache-unusable"]),
    Scenario(
        "triton-cache-read-only", "TRITON_CACHE_DIR on a read-only mount",
        cache_on_mount("ro"), need_all(need_gpu(), need_unshare), roots=["env-path-unusable"],
        evidence={"config.triton_environment": ["TRITON_CACHE_DIR"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["triton-cache-unusable", "env-path-unusable"]),
    # /dev as a container's: a tmpfs with copies of the NVIDIA nodes a scenario keeps, read-only so
    # that no one re-creates a missing node at the first CUDA call (device_nodes_setup says why)
    Scenario(
        "nvidia-uvm-node-missing", "/dev/nvidia-uvm (and -tools) absent, nvidiactl and the GPU nodes present, "
        "/dev read-only (a container given --device for the GPU nodes only): nvidia-smi works, cuInit does not",
        device_nodes_setup(drop=lambda n: n.startswith("nvidia-uvm")),
        need_all(need_gpu(), need_unshare, need_nvidia_nodes), roots=["nvidia-uvm-missing"],
        forbid_roots=["no-nvidia-driver", "device-nodes-missing"],
        evidence={"gpu.device_nodes": ["/dev/nvidia-uvm: absent", "read-only"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["nvidia-uvm-missing"],
        explain_live=["nvidia-uvm-missing"]),
    Scenario(
        "nvidiactl-node-missing", "/dev/nvidiactl absent, the GPU nodes and nvidia-uvm present, /dev read-only",
        device_nodes_setup(drop=lambda n: n == "nvidiactl"),
        need_all(need_gpu(), need_unshare, need_nvidia_nodes), roots=["device-nodes-missing"],
        forbid_roots=["no-nvidia-driver"], evidence={"gpu.device_nodes": ["/dev/nvidiactl: absent"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["device-nodes-missing"],
        explain_live=["device-nodes-missing"]),
    Scenario(
        "gpu-node-missing", "every /dev/nvidia<N> absent, nvidiactl and nvidia-uvm present, /dev read-only",
        device_nodes_setup(drop=_is_gpu_node),
        need_all(need_gpu(), need_unshare, need_nvidia_nodes), roots=["device-nodes-missing"],
        forbid_roots=["no-nvidia-driver"],
        proofs=[Proof("user kernel fails", [], False)], explain=["device-nodes-missing"],
        explain_live=["device-nodes-missing"]),
    Scenario(
        "only-gpu-node-passed", "only /dev/nvidia0 (the commonest container mistake: --device /dev/nvidia0 "
        "without nvidiactl and nvidia-uvm), /dev read-only",
        device_nodes_setup(drop=lambda n: n != "nvidia0"),
        need_all(need_gpu(), need_unshare, need_nvidia_nodes), roots=["device-nodes-missing"],
        forbid_roots=["no-nvidia-driver"], evidence={"gpu.device_nodes": ["/dev/nvidiactl: absent"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["device-nodes-missing"],
        explain_live=["device-nodes-missing"]),
    Scenario(
        "device-nodes-not-openable", "nvidiactl and the GPU nodes root-only (0660, no group the user has), "
        f"stackpeel and the user's kernel run as uid {NOBODY} with no supplementary groups",
        device_nodes_setup(modes={"nvidiactl": 0o660, "nvidia<N>": 0o660}, user=NOBODY),
        need_all(need_gpu(), need_unshare, need_nvidia_nodes, need_unprivileged_python),
        roots=["device-permission-denied"], forbid_roots=["no-nvidia-driver", "device-nodes-missing"],
        evidence={"gpu.device_nodes": ["/dev/nvidiactl", "EACCES"]},
        proofs=[Proof("user kernel fails", [], False)],
        # its output is byte-identical to a missing node's (and to CUDA_VISIBLE_DEVICES=''): from the
        # log alone explain can only offer the node family; live, as the user, it must name the permission
        explain=["device-permission-denied", "device-nodes-missing"],
        explain_live=["device-permission-denied"]),
    # the loader and the host's limits (session 22b)
    Scenario(
        "ld-preload-missing", "LD_PRELOAD names a library that does not exist (an allocator path from another "
        "image): ld.so prints 'ERROR: ld.so: object ... cannot be preloaded' at every start and goes on; harmless "
        "to the kernel, so no blocking root, config.environment's degraded finding",
        with_env(LD_PRELOAD=MISSING_PRELOAD), need_gpu(), no_blocking=True,
        findings=["env-library-path-missing"], evidence={"config.environment": [MISSING_PRELOAD]},
        proofs=[Proof("user kernel still runs (the loader ignores the entry)", [], True, "user kernel OK"),
                Proof("the loader says so", [], True, "from LD_PRELOAD cannot be preloaded")]),
    Scenario(
        "libcuda-not-elf-first", "a folder first on LD_LIBRARY_PATH holds a libcuda.so.1 that is a text file (a Git "
        "LFS pointer): dlopen stops at it ('invalid ELF header', glibc's open_verify) and never reaches the "
        "driver's libcuda; NVML, the nodes and the driver are fine",
        # torch prints 'Found no NVIDIA driver on your system' (H200, session 22), a line that holds no
        # trace of the file: from the log alone no-nvidia-driver first; check (once it read a container
        # with the nodes as a missing toolkit: now the loader's own ELF error decides) and live explain
        # on the machine must name the file
        libcuda_not_elf_first, need_gpu(), roots=["libcuda-missing"], forbid_roots=["no-nvidia-driver"],
        evidence={"cuda.driver_api": ["invalid ELF header", "libcuda-not-elf/libcuda.so.1"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["libcuda-missing", "no-nvidia-driver"],
        explain_live=["libcuda-missing"]),
    # an older release of one of torch's CUDA libraries first on the loader's path (gpu23)
    Scenario(
        "older-nvjitlink-on-library-path", "an older libnvJitLink of torch's CUDA major (13.0.39, or 12.0.76 for "
        "CUDA 12) first on LD_LIBRARY_PATH, as a system toolkit or a conda lib folder puts it: torch >= 2.6 loads "
        "its own nvJitLink by path before cusparse asks for one, so nothing uses the older copy and nothing fails",
        older_nvjitlink_first, need_all(need_gpu(), need_older_nvjitlink()), no_blocking=True,
        forbid_roots=["library-shadowed"], passes=["runtime_libs.loaded"],
        # the copy loaded is the wheel's own (a copy from the scenario's folder would be 'no package')
        summaries={"runtime_libs.loaded": ["(pip nvidia-nvjitlink"]},
        proofs=[Proof("user kernel runs", [], True, "user kernel OK")]),
    Scenario(
        "older-nvjitlink-preloaded", "the oldest CUDA 13 libnvJitLink (13.0.39) in LD_PRELOAD: cusparse binds to it "
        "instead of the 13.0.88 torch ships, and torch's own preload adds the wheel's copy beside it; 13.0.39 "
        "defines every *_13_0 symbol cusparse needs, so the kernel runs: check names the shadowing copy "
        "(degraded), nothing blocking",
        older_nvjitlink_preloaded, need_all(need_gpu(), need_older_nvjitlink("13")), no_blocking=True,
        findings=["library-shadowed", "library-loaded-twice"],
        evidence={"runtime_libs.loaded": ["LD_PRELOAD puts", "nvjitlink-13.0.39/libnvJitLink.so.13"]},
        proofs=[Proof("user kernel runs", [], True, "user kernel OK")]),
    Scenario(
        "older-nvjitlink-preloaded-cu12", "CUDA 12 torch: the 12.0.76 libnvJitLink (only *_12_0 symbols) in "
        "LD_PRELOAD; torch's cusparse, from a later CUDA 12 release, asks for a newer one and `import torch` "
        "fails with 'libcusparse.so.12: undefined symbol: __nvJitLink..._12_N, version libnvJitLink.so.12'",
        # the H200's torch is CUDA 13 (session 22): this one runs on a CUDA 12 torch only
        older_nvjitlink_preloaded, need_all(need_gpu(), need_older_nvjitlink("12", preloads=False)),
        roots=["library-shadowed"],
        evidence={"runtime_libs.loaded": ["LD_PRELOAD puts", "nvjitlink-12.0.76/libnvJitLink.so.12",
                                          "it defines up to __nvJitLink"]},
        proofs=[Proof("import torch fails", [], False, "version libnvJitLink.so.12")],
        explain=["cuda-library-shadowed", "library-shadowed"], explain_live=["library-shadowed"]),
    Scenario(
        "dataloader-docker-shm", "a DataLoader with two workers (48 MiB batches) under a 64 MiB /dev/shm, as Docker "
        "mounts it without --shm-size or --ipc=host: the workers cannot put their batches in shared memory "
        "('unable to allocate shared memory(shm)', ENOSPC) and the loop waits until DataLoader's timeout",
        # no GPU needed to inject or prove it (the batches move between CPU processes); check's finding is
        # multi_gpu.shm's (a degraded one: it reads the mount, not the program)
        docker_default_shm, need_unshare, findings=["nccl-shm-too-small"],
        evidence={"multi_gpu.shm": ["64"]},
        proofs=[Proof("the DataLoader job fails", ["--timeout", "20"], False, "unable to allocate shared memory",
                      only_if=lambda m: True, script=USER_DATALOADER)],
        explain=["dataloader-shm-too-small"]),
    Scenario(
        "driver-gone-nodes-left", "the NVIDIA nodes left in /dev with no driver behind them (after `rmmod nvidia`, "
        "or nodes made by hand): every node at a major no driver has, so it opens with ENXIO; /proc/driver/nvidia "
        "and the nvidia lines of /proc/modules hidden (private mount namespace), /dev read-only",
        # with no driver answering, check's root is 'no-nvidia-driver' (H200, session 22: so it was)
        device_nodes_setup(orphaned=True), need_all(need_gpu(), need_unshare, need_nvidia_nodes),
        roots=["no-nvidia-driver"], forbid_roots=["device-nodes-missing", "nvidia-uvm-missing"],
        evidence={"gpu.kernel_driver": ["/dev/nvidiactl: present, but opening it fails with ENXIO"]},
        # torch prints "No CUDA GPUs are available" here, byte-identical to an empty CUDA_VISIBLE_DEVICES
        # (H200, session 22): from the log alone the node family; live must name the missing driver
        proofs=[Proof("user kernel fails", [], False)], explain=["no-nvidia-driver", "device-nodes-missing"],
        explain_live=["no-nvidia-driver"]),
    # -- process limits and a GPU shared with another process (gpu23b)
    Scenario(
        "address-space-limit", "the job's virtual address space limited to 16 GiB (`ulimit -v`, RLIMIT_AS, as "
        "SGE's h_vmem, PBS's vmem or a login limit set it; prlimit --as, so check's probes inherit it): the CUDA "
        "driver's first context does not fit",
        # seen on the H200 (session 23): cuInit succeeds under 16 GiB and torch's first tensor raises
        # 'CUDA error: out of memory' (the driver's context does not fit; other machines report cuInit's
        # own CUDA_ERROR_OUT_OF_MEMORY and torch's 'Unexpected error from cudaGetDeviceCount() ... Error 2');
        # a bare ctypes process retained a context and allocated 2 MiB under the same limit there: torch's
        # own libraries take the space. torch.cuda names the limit from its one-element op failing so under a finite
        # RLIMIT_AS; from the log alone the runtime's out-of-memory status could also be a full GPU, hence
        # among the first three (live: first)
        with_limits(**{"as": ADDRESS_SPACE_LIMIT}), need_all(need_gpu(), need_prlimit),
        roots=["address-space-limit"], forbid_roots=["no-nvidia-driver", "libcuda-missing"],
        evidence={"cuda.driver_api": [f"RLIMIT_AS (ulimit -v) = {ADDRESS_SPACE_LIMIT} bytes"]},
        proofs=[Proof("user kernel fails", [], False)], explain=["address-space-limit"],
        explain_live=["address-space-limit"]),
    Scenario(
        "open-files-limit", "the job's open-files limit at 64 (`ulimit -n 64`, RLIMIT_NOFILE; prlimit --nofile): a "
        "DataLoader with two workers whose batches are lists of 64 small tensors, each passed as a file "
        "descriptor (torch's default file_descriptor sharing strategy)",
        # no GPU needed to inject or prove it. Measured with torch 2.13 on CPU (tests/test_scenarios.py): each
        # worker fails 'unable to open shared memory object </torch_...> in read-write mode: Too many open
        # files (24)' and the loop waits until DataLoader's timeout; on the H200 the main process may instead
        # stop with 'received 0 items of ancdata', hence no expected text: explain must name the limit
        # on two H200s check's own Triton launch and peer copies fail under 64 as well (x2-faults.txt of
        # session 23): the limit must be the root they nest under, never the layers (ofl24)
        with_limits(nofile=64), need_prlimit, findings=["open-files-limit-low"],
        forbid_roots=OPEN_FILES_LAYER_ROOTS,
        evidence={"multi_gpu.open_files": ["getrlimit(RLIMIT_NOFILE) = (64, 64)"]},
        proofs=[Proof("the DataLoader job fails", ["--pieces", "64", "--timeout", "20"], False,
                      only_if=lambda m: True, script=USER_DATALOADER)],
        explain=["open-files-limit-exhausted"]),
    Scenario(
        "open-files-limit-cuda", f"the job's open-files limit at {OPEN_FILES_CUDA_LIMIT} (`ulimit -n "
        f"{OPEN_FILES_CUDA_LIMIT}`): too few descriptors for a CUDA context, torch's and Triton's libraries",
        # measured before the fix (docs/validation/2026-12-04-h200-session24/open-files-before.txt): under 48
        # and 36 torch's first tensor raises 'CUDA-capable device(s) is/are busy or unavailable', under 28
        # Triton's driver build '[Errno 24] Too many open files'; check blamed torch and Triton. The user's
        # kernel fails the same way: explain reads the error as cuda-devices-unavailable (or, where Triton's
        # build is what fails, the descriptor shortage itself); live, the open-files check confirms the limit
        with_limits(nofile=OPEN_FILES_CUDA_LIMIT), need_all(need_gpu(), need_prlimit),
        roots=["open-files-limit-low"], forbid_roots=OPEN_FILES_LAYER_ROOTS,
        symptoms={"open-files-limit-low": ["torch.cuda"]},
        evidence={"multi_gpu.open_files": [f"getrlimit(RLIMIT_NOFILE) = ({OPEN_FILES_CUDA_LIMIT}, "
                                           f"{OPEN_FILES_CUDA_LIMIT})"]},
        proofs=[Proof("user kernel fails", [], False)],
        explain=["cuda-devices-unavailable", "open-files-limit-exhausted"],
        explain_live=["open-files-limit-low", "open-files-limit-exhausted"]),
    Scenario(
        "gpu-memory-held-by-another-process", f"a second process holds all but {HOLDER_LEAVES_GIB} GiB of GPU 0's "
        f"memory and sleeps (a stale notebook, an orphaned trainer, another user's job); the user's job needs "
        f"{USER_MODEL_GIB} GiB",
        # check's own probes need well under the 4 GiB left (a context each); NVML lists the holder with its
        # command line (one PID namespace here). torch's message names the holder ('Process N has ... memory
        # in use') and, since torch 2.1, what this process holds ('Including non-PyTorch memory, this process
        # has ...'): explain reads the other processes' share from those numbers (tools38); an older message
        # without the second figure reads as the GPU out of memory
        gpu_memory_held, need_gpu(), findings=["gpu-memory-held-by-other-processes"],
        forbid_roots=["no-nvidia-driver"], evidence={"gpu.nvml": ["gpu_memory_holder.py"]},
        proofs=[Proof(f"user kernel with a {USER_MODEL_GIB} GiB model fails", ["--alloc-gib", str(USER_MODEL_GIB)],
                      False, "CUDA out of memory")],
        explain=["gpu-memory-held-by-other-processes", "gpu-out-of-memory"]),
    Scenario(
        "home-read-only-default-cache", "HOME on a read-only mount and no TRITON_CACHE_DIR (private mount "
        "namespace): Triton's default cache ~/.triton/cache cannot be created",
        # the existing triton-cache code, told where the directory came from ('from HOME'); what Triton prints
        # on the H200 (an OSError 'Read-only file system' making the cache folder) is the run's to show
        home_read_only, need_all(need_gpu(), need_unshare), roots=["triton-cache-unusable"],
        evidence={"toolchain.triton_cache": ["Read-only file system", "from HOME"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False)],
        explain=["triton-cache-unusable", "env-path-unusable"]),
    # tmp24. Proved on a CPU machine (gcc 12.2, Triton 3.9's own build, CPython 3.11 tempfile): read-only
    # /tmp, /var/tmp and working directory -> tempfile raises 'No usable temporary directory found in [...]'
    # (Triton's TemporaryDirectory() fails before gcc runs); a full /tmp -> tempfile falls back to /var/tmp
    # but gcc, whose libiberty picks /tmp by access(), stops with 'error closing /tmp/ccXXXXXX.s: No space
    # left on device' (Triton: CalledProcessError). Only the GPU run shows that Triton 3.6 on the H200
    # builds cuda_utils this way on a fresh cache, that torch and Triton import with no usable /tmp, and
    # what the user's kernel prints there (the expected text below is the CPU machine's).
    # tmp25: triton.kernel_launch now builds where the user's kernel does (the target's TMPDIR and working
    # directory, not stackpeel's scratch), so on the GPU it must fail too and be listed under the root; before,
    # it could pass in stackpeel's scratch and would be missing from the symptoms
    Scenario(
        "tmp-read-only", "/tmp and /var/tmp read-only (private mount namespace), TMPDIR unset, run from a "
        "read-only directory, fresh Triton cache: tempfile has no directory, Triton cannot build its helpers",
        tmp_read_only, need_all(need_gpu(), need_unshare), roots=["temp-dir-unusable"],
        forbid_roots=list(TRITON_LAYER_ROOTS),
        symptoms={"temp-dir-unusable": ["toolchain.extension_build", "triton.build", "triton.kernel_launch"]},
        evidence={"toolchain.temp_dir": ["No usable temporary directory found in"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "No usable temporary directory found in")],
        explain=["temp-dir-unusable"]),
    Scenario(
        "tmp-full", "a full 64 KiB tmpfs at /tmp (private mount namespace), TMPDIR unset, fresh Triton cache: "
        "tempfile falls back to /var/tmp, gcc writes /tmp and fails",
        tmp_full, need_all(need_gpu(), need_unshare), roots=["temp-dir-unusable"],
        forbid_roots=list(TRITON_LAYER_ROOTS),
        symptoms={"temp-dir-unusable": ["toolchain.extension_build", "triton.build", "triton.kernel_launch"]},
        evidence={"toolchain.temp_dir": ["No space left on device"],
                  "toolchain.extension_build": ["No space left on device"]},
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "No space left on device")],
        explain=["temp-dir-unusable"]),
    # gpu38: Triton's own libcuda discovery (T5) and a full cache (T8); written before their first GPU run
    Scenario(
        "libcuda-not-in-ldconfig", "the linker cache lists no libcuda.so.1 (a valid /etc/ld.so.cache of an empty "
        "root bound over the real one) and LD_LIBRARY_PATH unset; the loader still finds the driver's libcuda.so.1 "
        "in its default directories, so torch works and Triton's `/sbin/ldconfig -p` lookup fails",
        ldconfig_cache_without_libcuda, need_all(need_gpu(), need_unshare), roots=["libcuda-not-in-ldconfig"],
        forbid_roots=["libcuda-missing", "no-nvidia-driver", "triton-build-failed"],
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "libcuda.so cannot found")],
        explain=["libcuda-not-in-ldconfig"]),
    Scenario(
        "ldconfig-missing", "/sbin/ldconfig absent (an empty tmpfs over its directory, as in a distroless image), "
        "TRITON_LIBCUDA_PATH unset, fresh Triton cache",
        ldconfig_hidden, need_all(need_gpu(), need_unshare), roots=["ldconfig-missing"],
        forbid_roots=["libcuda-missing", "no-nvidia-driver"],
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "/sbin/ldconfig")],
        explain=["ldconfig-missing"]),
    Scenario(
        "triton-cache-full", "TRITON_CACHE_DIR on a full 64 KiB tmpfs (a quota or a full disk): the folder is "
        "writable, every write into it fails with ENOSPC",
        cache_on_full_mount, need_all(need_gpu(), need_unshare), roots=["triton-cache-unusable"],
        forbid_roots=["temp-dir-unusable", "triton-build-failed"],
        proofs=[Proof("user kernel fails on a fresh cache", [], False, "No space left on device")],
        explain=["triton-cache-unusable"]),
    Scenario(
        "multi-gpu-healthy", "2+ GPUs: NCCL all-reduce across all GPUs, peer access, /dev/shm and memlock",
        healthy, need_gpu(2), no_blocking=True,
        passes=["multi_gpu.nccl", "multi_gpu.p2p", "multi_gpu.shm"]),
]


# --------------------------------------------------------------------------- running

def stackpeel_argv(python: str, extra: Sequence[str] = ()) -> List[str]:
    # --fresh: each scenario is judged on what it finds now, never on an earlier run's results
    return [python, "-m", "stackpeel", "check", "--python", python, "--format", "json", "--fresh", *extra]


def run(argv: Sequence[str], env: Dict[str, str], timeout: float) -> Tuple[int, str, str, float]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as exc:
        return -999, exc.stdout or "", f"timed out after {timeout}s", time.monotonic() - t0


#: root causes that are true of the lent machine's own stack, whatever the scenario injects:
#: FLA 0.6.0 with Triton 3.6.0 on a Hopper GPU is a known-bad combination for training (FLA's own
#: guard raises in the first gated backward pass; `check --deep` shows it there). A scenario that
#: expects "no blocking root cause" tolerates these, and only these.
MACHINE_BASELINE = {"fla-triton-hopper-gated-backward"}


def judge(sc: Scenario, report: dict) -> List[str]:
    """Everything the report gets wrong for this scenario (empty = pass)."""
    problems = []
    diag = report["diagnosis"]
    root_codes = {c: r for r in diag["blocking"] for c in r["codes"]}
    all_codes = {f["code"] for res in report["results"] for f in res["findings"]}
    unexpected = [r for r in diag["blocking"] if not set(r["codes"]) <= MACHINE_BASELINE]
    if sc.no_blocking and unexpected:
        problems.append("expected no blocking root cause, got: " +
                        ", ".join(f"{r['check']} {r['codes']}" for r in unexpected))
    if sc.no_blocking and diag["errors"]:
        problems.append(f"checks could not complete: {diag['errors']}")
    for code in sc.roots:
        if code not in root_codes:
            problems.append(f"expected root cause {code}; roots were "
                            f"{sorted(root_codes) or 'none'}")
    for code in sc.forbid_roots:
        if code in root_codes:
            problems.append(f"{code} must not be a root cause here")
    for code in sc.findings:
        if code not in all_codes:
            problems.append(f"expected finding {code} somewhere; found {sorted(all_codes)}")
    for code, checks in sc.symptoms.items():
        root = root_codes.get(code)
        if root is None:
            continue
        nested = {s["check"] for s in root["symptoms"]}
        for cid in checks:
            if cid not in nested:
                problems.append(f"{cid} should be a symptom of {code}; symptoms were {sorted(nested)}")
    by_id = {r["id"]: r for r in report["results"]}
    for cid in sc.passes:
        status = by_id.get(cid, {}).get("status", "absent")
        if status != "pass":
            problems.append(f"{cid} should pass; it is {status}")
    for cid, needles in sc.evidence.items():
        res = by_id.get(cid)
        text = "" if res is None else "\n".join(f["evidence"] + "\n" + f["message"] for f in res["findings"])
        for needle in needles:
            if needle not in text:
                problems.append(f"{cid}: evidence lacks {needle!r}")
    for cid, needles in sc.summaries.items():
        summary = by_id.get(cid, {}).get("summary", "")
        for needle in needles:
            if needle not in summary:
                problems.append(f"{cid}: summary lacks {needle!r} ({summary[:200]!r})")
    return problems


def explain_ranking(argv: Sequence[str], text: str, env: Dict[str, str], timeout: float) -> List[str]:
    """A `stackpeel explain ... --format json -` command (``argv``) on a failing program's output,
    ranked as the accuracy bench ranks: the candidates in order, each followed by the causes it
    could be. Nothing (an empty list) when it hangs or prints no report."""
    try:
        p = subprocess.run(list(argv), input=text, capture_output=True, text=True, env=env, timeout=timeout)
        return ranking(json.loads(p.stdout))
    except (subprocess.TimeoutExpired, ValueError):
        return []


def run_scenario(sc: Scenario, m: Machine, workdir: Path, stackpeel_env: Dict[str, str],
                 timeout: float) -> dict:
    why = sc.needs(m)
    if why:
        return {"name": sc.name, "about": sc.about, "status": "skip", "reason": why}
    tmp = workdir / sc.name
    tmp.mkdir(parents=True, exist_ok=True)
    record: dict = {"name": sc.name, "about": sc.about, "proofs": []}
    if sc.warm_cache:
        warm_env = base_env()
        warm_env["TRITON_CACHE_DIR"] = str(tmp / "warm-cache")
        rc, out, err, t = run([m.python, str(USER_KERNEL)], warm_env, timeout)
        record["warm_up"] = {"rc": rc, "wall_s": round(t, 2), "tail": (out + err)[-800:]}
        if rc != 0:
            record.update(status="fail", problems=["could not warm the cache on the healthy machine"])
            return record
    try:
        setup = sc.setup(m, tmp)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        record.update(status="fail", problems=[f"the fault could not be set up: {exc}"])
        return record
    try:
        return _run_set_up(sc, m, tmp, setup, record, stackpeel_env, timeout)
    finally:
        for stop in setup.teardown:
            stop()


def _run_set_up(sc: Scenario, m: Machine, tmp: Path, setup: Setup, record: dict, stackpeel_env: Dict[str, str],
                timeout: float) -> dict:
    """check, the proofs and explain in the environment ``setup`` made; ``record`` filled and returned."""
    env = dict(setup.env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*setup.path, stackpeel_env.get("PYTHONPATH", "")]))
    argv = setup.wrap + stackpeel_argv(m.python)
    rc, out, err, wall = run(argv, env, timeout)
    record.update(command=" ".join(argv[-8:]), exit_code=rc, wall_s=round(wall, 2))
    try:
        report = json.loads(out)
    except ValueError:
        record.update(status="fail", problems=[f"stackpeel printed no JSON (exit {rc})"], stderr=err[-3000:])
        return record
    (tmp / "report.json").write_text(json.dumps(report, indent=1))
    record["roots"] = [{"check": r["check"], "codes": r["codes"], "symptoms": [s["check"] for s in r["symptoms"]]}
                       for r in report["diagnosis"]["blocking"]]
    record["degraded"] = [{"check": r["check"], "codes": r["codes"]} for r in report["diagnosis"]["degraded"]]
    record["errors"] = report["diagnosis"]["errors"]
    record["per_check_s"] = {r["id"]: r["duration_s"] for r in report["results"]}
    record["statuses"] = {r["id"]: r["status"] for r in report["results"]}
    problems = judge(sc, report)
    if rc != report["diagnosis"]["exit_code"]:
        problems.append(f"exit code {rc} != report's {report['diagnosis']['exit_code']}")
    for proof in sc.proofs:
        if not proof.only_if(m):
            record["proofs"].append({"label": proof.label, "status": "skip",
                                     "reason": f"not applicable to triton {m.triton_version}"})
            continue
        penv = dict(setup.env)
        if setup.path:
            penv["PYTHONPATH"] = os.pathsep.join([*setup.path, penv.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        prc, pout, perr, pt = run(setup.wrap + [m.python, str(proof.script), *proof.args], penv, timeout)
        text = pout + perr
        ok = (prc == 0) == proof.expect_ok and proof.expect_text in text
        record["proofs"].append({"label": proof.label, "status": "pass" if ok else "fail", "rc": prc,
                                 "wall_s": round(pt, 2), "tail": text.strip().splitlines()[-1:] if text else []})
        if not ok:
            problems.append(f"proof failed: {proof.label} (rc={prc}, expected "
                            f"{'success' if proof.expect_ok else 'failure'} with {proof.expect_text!r})")
        if sc.explain and prc != 0:
            # the log a user would paste, read elsewhere: no live checks
            ranked = explain_ranking(
                [sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", "-"],
                text, dict(os.environ, PYTHONPATH=stackpeel_env.get("PYTHONPATH", "")), timeout)
            (tmp / f"proof-{len(record['proofs'])}.log").write_text(text)
            hit = next((i for i, c in enumerate(ranked[:3]) if c in sc.explain), None)
            record["proofs"][-1]["explain"] = {"ranked": ranked[:5], "rank": None if hit is None else hit + 1}
            if hit is None:
                problems.append(f"explain on the failing program's output ranks {ranked[:3] or 'nothing'}; "
                                f"expected one of {list(sc.explain)} among the first three")
        if sc.explain_live and prc != 0:
            # explain with its live checks, inside the fault (its mounts, its user) as a user there runs it
            ranked = explain_ranking([*setup.wrap, m.python, "-m", "stackpeel", "explain", "--python", m.python,
                                      "--format", "json", "-"], text, env, timeout)
            record["proofs"][-1]["explain_live"] = {"ranked": ranked[:5]}
            if not ranked or ranked[0] not in sc.explain_live:
                problems.append(f"live explain on the failing program's output ranks {ranked[:3] or 'nothing'}; "
                                f"expected one of {list(sc.explain_live)} first")
    record["status"] = "fail" if problems else "pass"
    record["problems"] = problems
    return record


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="target interpreter (default: this one)")
    ap.add_argument("--only", action="append", default=[], help="run only these scenarios (repeatable)")
    ap.add_argument("--out", help="directory for summary.json and per-scenario reports")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per stackpeel run")
    ap.add_argument("--list", action="store_true", help="list scenarios and exit")
    args = ap.parse_args(argv)
    if args.list:
        for sc in SCENARIOS:
            print(f"{sc.name:<34} {sc.about}")
        return 0
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    unknown = set(args.only) - {s.name for s in SCENARIOS}
    if unknown:
        print(f"unknown scenario(s): {', '.join(sorted(unknown))}; see --list", file=sys.stderr)
        return 2
    python = os.path.abspath(args.python) if os.sep in args.python else (shutil.which(args.python) or args.python)
    m = Machine.probe(python)
    print(f"machine: {m.gpus} GPU(s), torch {m.torch_version} (CUDA {m.cuda_version or 'none'}), "
          f"triton {m.triton_version}, FLA {'yes' if m.fla else 'no'}, "
          f"root {m.is_root}, unshare {m.unshare}", flush=True)
    spenv = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))}
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="stackpeel-scenarios-"))
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for sc in chosen:
        rec = run_scenario(sc, m, out, spenv, args.timeout)
        records.append(rec)
        line = f"{rec['status'].upper():<5} {sc.name:<34}"
        if rec["status"] == "skip":
            line += f" skipped: {rec['reason']}"
        else:
            roots = "; ".join(f"{r['check']} {','.join(r['codes'])}" for r in rec.get("roots", [])) or "no blocking root"
            line += f" {rec.get('wall_s', 0):6.1f}s  roots: {roots}"
        print(line, flush=True)
        for p in rec.get("problems", []):
            print(f"      - {p}", flush=True)
        for p in rec.get("proofs", []):
            ex = p.get("explain")
            said = f"; explain ranks {', '.join(ex['ranked'][:3]) or 'nothing'}" if ex else ""
            live = p.get("explain_live")
            said += f"; live: {', '.join(live['ranked'][:3]) or 'nothing'}" if live else ""
            print(f"      proof {p['status']}: {p['label']}{said}", flush=True)
    summary = {"machine": vars(m), "scenarios": records}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    failed = [r["name"] for r in records if r["status"] == "fail"]
    explained = [p["explain"]["rank"] for r in records for p in r.get("proofs", []) if p.get("explain")]
    if explained:
        print(f"\nexplain on the failing programs' output: expected cause first in "
              f"{sum(r == 1 for r in explained)} of {len(explained)}, in the first three in "
              f"{sum(r is not None for r in explained)}")
    print(f"\n{sum(r['status'] == 'pass' for r in records)} passed, {len(failed)} failed, "
          f"{sum(r['status'] == 'skip' for r in records)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
