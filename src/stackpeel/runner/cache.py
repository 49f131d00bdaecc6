"""Reuse a previous check's results when nothing that could change them has changed.

People run a doctor many times in a row while they fix things. A second ``stackpeel
check`` on an unchanged machine reuses the results of the first, keyed on everything a
check reads:

- stackpeel itself: version, and the size and mtime of its own source files (checks,
  probes, plugins' modules) and the run's mode (default / deep) and timeout scale;
- the interpreter: path, resolved path, their stat, ``sys.path`` as the target computes it
  (PYTHONPATH, .pth files), every ``sys.path`` directory's stat and, for each installed
  distribution, the stat of its ``METADATA``/``RECORD``/``PKG-INFO``; its include
  directories and ``Python.h``;
- the environment variables a check or a library reads (PATH, CC, CUDA_*, TRITON_*, LD_*,
  NCCL_*, PYTHON*, ...; their values are hashed, never stored);
- the programs and libraries the stack looks up: every PATH and LD_LIBRARY_PATH directory
  (installing or removing a compiler changes its directory), ``/etc/ld.so.cache``, the C
  include directories, the Triton cache directory;
- the GPU: ``/proc/driver/nvidia/version``, ``/sys/module/nvidia/version``, the
  ``/dev/nvidia*`` nodes (name, mode, owner, mtime), the GPUs the driver lists, the boot id;
- the user: uid, gids (device permissions), the memlock limit.

A stat is (device, inode, size, mtime in ns), so a bind mount over a directory changes it
too. Checks marked ``volatile`` (free space, limits) and everything that requires them run
again every time; errors and timeouts are never reused. ``--fresh`` ignores the cache (and
refreshes it). The cache lives in ``$XDG_CACHE_HOME/stackpeel`` (``~/.cache/stackpeel``),
a directory only its owner may use: files are written atomically with mode 0600, and a
directory or file owned by someone else or writable by others is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Type

from .._files import replace_file
from ..model import CheckResult, Status
from . import hygiene

if TYPE_CHECKING:
    from ..checks.base import Check

#: environment variables that change what a check or a library does (prefixes end in _ or *)
ENV_EXACT = ("PATH", "CC", "CXX", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "HOME",
             "TMPDIR", "XDG_CACHE_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "USER", "container")
ENV_PREFIXES = ("CUDA_", "NVIDIA_", "TRITON_", "LD_", "NCCL_", "PYTHON", "TORCH", "PYTORCH_", "FLA_", "CAUSAL_CONV1D_",
                "TRANSFORMERS_", "HF_", "OMP_", "MKL_", "KMP_", "CUBLAS_", "CUDNN_", "NVTE_", "STACKPEEL_", "SLURM_",
                "KUBERNETES_", "WSL_", "APPTAINER_", "SINGULARITY_", "GLIBC_", "MALLOC_")
#: newest cache entries older than this are not reused (a safety net; the key decides)
MAX_AGE_S = 24 * 3600.0

#: run in the target interpreter (3.8+): what its imports depend on
KEY_SCRIPT = r"""
import sys, os, json, sysconfig
def st(p):
    try:
        s = os.stat(p)
        return [s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_mode]
    except OSError:
        return None
out = {"executable": sys.executable, "real": os.path.realpath(sys.executable), "path": sys.path,
       "version": sys.version, "files": {}}
f = out["files"]
f[sys.executable] = st(sys.executable); f[out["real"]] = st(out["real"])
for d in sys.path:
    if not d:
        continue  # the working directory of "-c": probes run in their own
    if not os.path.isdir(d):
        f[d] = st(d)
        continue
    f[d] = st(d)
    try:
        names = sorted(os.listdir(d))
    except OSError:
        continue
    for n in names:
        if n.endswith((".dist-info", ".egg-info")):
            for m in ("METADATA", "RECORD", "PKG-INFO", "direct_url.json"):
                p = os.path.join(d, n, m)
                s = st(p)
                if s:
                    f[p] = s
        elif n.endswith((".pth", ".egg-link")) or n in ("sitecustomize.py", "usercustomize.py"):
            f[os.path.join(d, n)] = st(os.path.join(d, n))
for k in ("include", "platinclude"):
    inc = sysconfig.get_paths().get(k)
    if inc:
        f[inc] = st(inc); f[os.path.join(inc, "Python.h")] = st(os.path.join(inc, "Python.h"))
print(json.dumps(out))
"""


def _stat(path: str) -> Optional[List[int]]:
    try:
        s = os.stat(path)
        return [s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_mode, s.st_uid, s.st_gid]
    except OSError:
        return None


def _read(path: str, limit: int = 4096) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _listing(path: str) -> Optional[List[str]]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None


#: the folder toolchain.triton_cache writes and removes in the Triton cache to test it (probes/toolchain.py
#: _exec_map_test): not the user's, so not part of what the cache holds
PROBE_DIR_PREFIX = ".stackpeel-probe-"


def _triton_cache_material(path: str) -> Optional[List[Any]]:
    """The Triton cache folder as the key sees it: its stat without the modification time, and a digest
    of its entries (one folder per compiled kernel or launcher). Not the mtime: toolchain.triton_cache
    creates and removes a folder in it on every run, so the mtime changed with every check and a repeat
    run never reused a result on a machine whose Triton cache exists (gpu32: 1.0x on the device after a
    Triton program had filled ~/.triton/cache, 12.6x before). A kernel compiled or a cache emptied
    changes the entries, and so the key."""
    st = _stat(path)
    if st is None:
        return None
    names = [n for n in _listing(path) or [] if not n.startswith(PROBE_DIR_PREFIX)]
    digest = hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return st[:2] + st[4:] + [len(names), digest]


def env_material(environ: Mapping[str, str]) -> Dict[str, str]:
    """Relevant variables, each value replaced by its hash (secrets never reach the cache)."""
    out = {}
    for k, v in environ.items():
        if k in ENV_EXACT or k.startswith(ENV_PREFIXES):
            out[k] = hashlib.sha256(v.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return out


def host_material(environ: Mapping[str, str]) -> Dict[str, Any]:
    """What the stack reads outside the interpreter, as stats and short file contents."""
    files: Dict[str, Any] = {}
    dirs = [d for var in ("PATH", "LD_LIBRARY_PATH") for d in environ.get(var, "").split(os.pathsep) if d]
    dirs += ["/etc/ld.so.cache", "/etc/ld.so.conf.d", "/usr/include", "/usr/local/include", "/usr/local/cuda",
             "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib"]
    cuda_home = environ.get("CUDA_HOME") or environ.get("CUDA_PATH")
    if cuda_home:
        dirs += [cuda_home, os.path.join(cuda_home, "bin")]
    home = environ.get("HOME") or os.path.expanduser("~")
    triton_cache = environ.get("TRITON_CACHE_DIR") or os.path.join(environ.get("TRITON_HOME") or home,
                                                                      ".triton", "cache")
    for d in dirs:
        files[d] = _stat(d)
    files["triton-cache"] = _triton_cache_material(triton_cache)
    if files["triton-cache"] is None:  # where it would be created: who owns it, not when it last changed
        parent = os.path.dirname(os.path.abspath(triton_cache))
        while parent != os.path.dirname(parent) and not os.path.isdir(parent):
            parent = os.path.dirname(parent)
        st = _stat(parent)
        files["triton-cache-parent"] = [parent] + (st[:2] + st[4:] if st else [])
    dev = {}
    for name in _listing("/dev") or []:
        if name.startswith(("nvidia", "dxg")):
            dev[name] = _stat(os.path.join("/dev", name))
    for sub in ("nvidia-caps", "dri"):
        for name in _listing(os.path.join("/dev", sub)) or []:
            dev[f"{sub}/{name}"] = _stat(os.path.join("/dev", sub, name))
    try:
        import resource
        memlock = list(resource.getrlimit(resource.RLIMIT_MEMLOCK))
    except (ImportError, OSError, ValueError):
        memlock = None
    # the user's open-files limit, not the one stackpeel raised for itself (tmp26): without it a run
    # under `ulimit -Sn 12` reused the results of one under 20000, the limit's check included
    from .child import own_fsize, own_nofile
    nofile = list(own_nofile())
    return {
        "files": files,
        "dev": dev,
        "driver": _read("/proc/driver/nvidia/version"),
        "module": _read("/sys/module/nvidia/version"),
        "gpus": _listing("/proc/driver/nvidia/gpus"),
        "modules": sorted(line.split(" ", 1)[0] for line in (_read("/proc/modules", 1 << 20) or "").splitlines()
                          if line.startswith(("nvidia", "nouveau"))),
        "boot_id": _read("/proc/sys/kernel/random/boot_id"),
        "uid": os.getuid(), "gids": sorted(set(os.getgroups()) | {os.getgid()}),
        "memlock": memlock, "nofile": nofile, "fsize": list(own_fsize()),
    }


def stackpeel_material(classes: Sequence[Type[Check]]) -> Dict[str, Any]:
    """stackpeel's version and the stat of every source file its checks and probes use."""
    from .. import __version__
    import sys
    files = {}
    roots = {Path(__file__).resolve().parent.parent}
    for cls in classes:
        mod = sys.modules.get(cls.__module__)
        if mod is not None and getattr(mod, "__file__", None):
            files[mod.__file__] = _stat(mod.__file__)
            if getattr(cls, "origin", "builtin") != "builtin":  # a plugin's wording (stackpeel/plugins.py)
                roots.add(Path(mod.__file__).resolve().parent / "knowledge")
        if cls.probes_dir:
            roots.add(Path(cls.probes_dir))
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml", ".json") and "__pycache__" not in path.parts:
                files[str(path)] = _stat(str(path))
    return {"version": __version__, "checks": [c.id for c in classes], "files": files,
            "origins": sorted({getattr(c, "origin", "builtin") for c in classes})}


def target_material(python: str, environ: Optional[Mapping[str, str]], timeout: float = 30.0) -> Optional[Dict]:
    """Run the target once (KEY_SCRIPT); None if it cannot say (then nothing is reused). It runs
    in a thread while stackpeel loads its registry, so it never raises: no writable temporary
    directory is the caller's one-line error, not a traceback of this thread."""
    try:  # its temporary folder and its process are hygiene's, as every probe's
        cwd = hygiene.make_tempdir("stackpeel-key-")  # empty: "-c" puts it first on sys.path
    except (OSError, hygiene.Closing):
        return None
    try:
        # a relative PYTHONPATH resolved against the user's directory, as the target resolves it:
        # read in the fresh folder, PYTHONPATH=src named a new stackpeel-key-*/src every run and no key
        # ever repeated (tmp26, chk27); a copy, since resolve_pythonpath changes what it is given
        env = hygiene.resolve_pythonpath(dict(os.environ if environ is None else environ))
        rc, out, _ = hygiene.run_captured([python, "-c", KEY_SCRIPT], timeout, env=env, cwd=cwd)
    except (OSError, hygiene.Closing):
        return None
    finally:
        hygiene.remove_tempdir(cwd)
    if rc != 0:
        return None
    try:
        return json.loads(out.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


#: compute_key's ``target`` when the caller did not run target_material itself
_RUN_IT = object()


def compute_key(python: str, classes: Sequence[Type[Check]], environ: Optional[Mapping[str, str]], mode: str,
                timeout_scale: float, target: Any = _RUN_IT) -> Optional[str]:
    """The digest of everything above; None when the target could not describe itself.
    ``target``: what :func:`target_material` returned, when the caller ran it already (engine.check
    starts it with the run, so that the target's start overlaps stackpeel's own)."""
    env = os.environ if environ is None else environ
    if target is _RUN_IT:
        target = target_material(python, environ)
    if target is None:
        return None
    material = {"python": python, "real": os.path.realpath(python), "python_stat": _stat(python), "mode": mode,
                "timeout_scale": timeout_scale, "target": target, "env": env_material(env),
                "host": host_material(env), "stackpeel": stackpeel_material(classes)}
    blob = json.dumps(material, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()


# ------------------------------------------------------------------------------------- storage

def cache_dir(environ: Optional[Mapping[str, str]] = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "stackpeel"


def _private(path: Path, is_dir: bool) -> bool:
    """Owned by this user and not writable by group or others."""
    try:
        st = path.lstat()
    except OSError:
        return False
    kind_ok = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode)
    return kind_ok and st.st_uid == os.getuid() and not (st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _entry_path(python: str, mode: str, environ: Optional[Mapping[str, str]]) -> Path:
    name = hashlib.sha256(f"{os.getuid()}:{os.path.abspath(python)}:{mode}".encode()).hexdigest()[:20]
    return cache_dir(environ) / f"check-{name}.json"


def has_entry(python: str, mode: str, environ: Optional[Mapping[str, str]] = None) -> bool:
    """True when results of an earlier run of ``python`` in ``mode`` are stored (whatever
    their key): a cheap hint, before the key is computed, that this run may reuse them."""
    try:
        return _entry_path(python, mode, environ).is_file()
    except OSError:
        return False


def load(python: str, mode: str, key: str, environ: Optional[Mapping[str, str]] = None) -> Dict[str, CheckResult]:
    """Results stored under ``key`` for this target and mode ({} when none may be reused)."""
    text = read_private(_entry_path(python, mode, environ))
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("key") != key:
        return {}
    if time.time() - float(data.get("stored_at", 0)) > MAX_AGE_S:
        return {}
    out = {}
    for item in data.get("results") or ():
        try:
            res = CheckResult.from_dict(item)
        except Exception:  # an entry from another stackpeel: not reused
            return {}
        out[res.id] = res
    return out


def store(python: str, mode: str, key: str, results: Sequence[CheckResult],
          environ: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """Write the reusable results atomically (0600, in a 0700 directory); never raises."""
    path = _entry_path(python, mode, environ)
    keep = [r.to_dict() for r in results if r.status is not Status.ERROR]
    text = json.dumps({"key": key, "stored_at": time.time(), "results": keep})
    return path if write_private(path, text) else None


def read_private(path: Path) -> Optional[str]:
    """The text of a file of the cache directory, or None unless it and its directory are
    this user's alone (a file others could write is never read)."""
    if not (_private(path.parent, True) and _private(path, False)):
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def write_private(path: Path, text: str) -> bool:
    """Write a file of the cache directory atomically (0600, in a 0700 directory owned by this
    user); False when it cannot. Never raises."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(path.parent, True):
            return False
        replace_file(str(path), text, 0o600, prefix="." + path.stem + "-")
    except OSError:
        return False
    return True


def reusable(classes: Sequence[Type[Check]], cached: Mapping[str, CheckResult]) -> Dict[str, CheckResult]:
    """Cached results that may stand: not volatile, no volatile requirement (transitively)."""
    by_id = {c.id: c for c in classes}
    fresh_needed: Dict[str, bool] = {}

    def needs_rerun(cid: str) -> bool:
        if cid not in fresh_needed:
            cls = by_id.get(cid)
            fresh_needed[cid] = True  # cycles cannot happen (validated), but never recurse forever
            fresh_needed[cid] = (cls is None or getattr(cls, "volatile", False) or cid not in cached
                                 or any(needs_rerun(r) for r in cls.requires if r in by_id))
        return fresh_needed[cid]

    return {cid: res for cid, res in cached.items() if cid in by_id and not needs_rerun(cid)}
