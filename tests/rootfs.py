"""A real minimal Debian root for the fix/export tests (not a test module itself).

``mmdebstrap --variant=minbase`` with python3 and python3-venv: no C compiler, no Python headers,
no ``file``. Inside it a venv ``/opt/stack`` whose site-packages holds the stack venv's real
Triton (the same cp311 ABI as bookworm's python3.11), bound read-only in each command instead of
copied (it is about 1 GB), and stackpeel from this checkout on PYTHONPATH (bound read-only at
/src/stackpeel). Commands run with :func:`inside`: a private mount namespace (``unshare -m``) with
/proc, /dev and /sys bound, then ``chroot``; every mount vanishes with the namespace.

The base root is built once per test session, in /dev/shm when it has room, and copied (``cp -a``)
for each test module that changes it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
STACK_SITE = "/opt/stack/lib/python3.11/site-packages"
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def why_not() -> Optional[str]:
    """Why this machine cannot build and enter a root, or None."""
    if os.geteuid() != 0:
        return "needs root (mmdebstrap, unshare -m, chroot)"
    missing = [t for t in ("mmdebstrap", "unshare", "chroot") if not shutil.which(t)]
    if missing:
        return f"needs {', '.join(missing)} (apt-get install mmdebstrap)"
    if not triton_dir():
        return "needs the stack venv's Triton (STACKPEEL_STACK_PYTHON)"
    return None


def triton_dir() -> Optional[Path]:
    py = os.environ.get("STACKPEEL_STACK_PYTHON") or str(REPO / ".venv-stack" / "bin" / "python")
    if not os.path.exists(py):
        return None
    p = subprocess.run([py, "-c", "import importlib.util as u; print(u.find_spec('triton').submodule_search_locations[0])"],
                       capture_output=True, text=True, timeout=60)
    path = Path(p.stdout.strip()) if p.returncode == 0 else None
    return path if path and (path / "__init__.py").exists() else None


def build_base(dest: Path) -> Path:
    """mmdebstrap a bookworm minbase root at ``dest`` with /opt/stack holding Triton's dist-info."""
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", "--include=python3,python3-venv",
                    "bookworm", str(dest)], check=True, timeout=1200, capture_output=True)
    # the venv, and Triton's metadata (its package dir is bound in by inside())
    inside(dest, "python3 -m venv --without-pip /opt/stack", check=True)
    tdir = triton_dir()
    assert tdir is not None
    site = dest / STACK_SITE.lstrip("/")
    (site / "triton").mkdir(exist_ok=True)
    for info in tdir.parent.glob("triton-*.dist-info"):
        shutil.copytree(info, site / info.name)
    return dest


def copy_root(base: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(base), str(dest)], check=True, timeout=600)
    return dest


def scratch_dir() -> Path:
    if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > 6 << 30:
        return Path(tempfile.mkdtemp(prefix="stackpeel-fix-", dir="/dev/shm"))
    return Path(tempfile.mkdtemp(prefix="stackpeel-fix-"))


def inside(root: Path, command: str, *, user: Optional[str] = None, env: Optional[Dict[str, str]] = None,
           check: bool = False, timeout: float = 900, **popen) -> subprocess.CompletedProcess:
    """Run ``command`` (sh -c) inside ``root``; as ``user`` via runuser when given."""
    root = Path(root)
    tdir = triton_dir()
    binds = [
        "mount --bind /proc {r}/proc", "mount --rbind /dev {r}/dev", "mount --rbind /sys {r}/sys",
        "mkdir -p {r}/src/stackpeel", "mount --bind -o ro " + shlex.quote(str(REPO)) + " {r}/src/stackpeel",
    ]
    if tdir and (root / STACK_SITE.lstrip("/") / "triton").is_dir():
        binds.append("mount --bind -o ro " + shlex.quote(str(tdir)) + " {r}" + STACK_SITE + "/triton")
    if os.path.exists("/etc/resolv.conf"):
        binds.append("(cmp -s /etc/resolv.conf {r}/etc/resolv.conf || cp /etc/resolv.conf {r}/etc/resolv.conf)")
    setup = " && ".join(b.format(r=shlex.quote(str(root))) for b in binds)
    envs = {"PATH": CLEAN_PATH, "HOME": f"/home/{user}" if user else "/root", "LANG": "C.UTF-8", "PYTHONPATH": "/src/stackpeel/src",
            "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    inner: List[str] = ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in envs.items()), "/bin/sh", "-c", command]
    if user:
        inner = ["/usr/sbin/runuser", "-u", user, "--", *inner]
    full = f"{setup} && exec chroot {shlex.quote(str(root))} {shlex.join(inner)}"
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", full], text=True,
                          capture_output="stdout" not in popen, timeout=timeout, check=check, **popen)


def stackpeel(root: Path, args: Sequence[str], **kw) -> subprocess.CompletedProcess:
    return inside(root, "cd / && python3 -m stackpeel " + shlex.join(list(args)), **kw)


def tree(root: Path) -> Dict[str, tuple]:
    """Every path under ``root`` (not following mounts) with type, mode, size and mtime."""
    out: Dict[str, tuple] = {}
    root = Path(root)
    dev = root.stat().st_dev
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.lstat(os.path.join(dirpath, d)).st_dev == dev
                       and os.path.relpath(os.path.join(dirpath, d), root) not in ("proc", "sys", "dev", "tmp")]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out
