"""Which interpreter to diagnose, and what the host offers for fixing things.

Runs in stackpeel's own process and only reads files and environment variables; it
imports nothing from the stack under diagnosis.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

# the system probe's parser: probes are standard-library only, so stackpeel may reuse them
from .probes.system import os_release

#: distro ids (from /etc/os-release ID and ID_LIKE) -> package manager
_PKG_BY_DISTRO = (
    (("debian", "ubuntu"), "apt"),
    (("fedora", "rhel", "centos", "rocky", "almalinux", "amzn", "ol"), "dnf"),
    (("alpine",), "apk"),
    (("opensuse", "sles", "suse"), "zypper"),
    (("arch", "manjaro"), "pacman"),
)


class TargetError(Exception):
    """The interpreter to diagnose cannot be found or does not run."""


def package_manager(os_release: Mapping[str, str]) -> Optional[str]:
    ids = [os_release.get("ID", "")] + os_release.get("ID_LIKE", "").split()
    for names, pm in _PKG_BY_DISTRO:
        if any(i in names for i in ids):
            if pm == "dnf" and not shutil.which("dnf") and shutil.which("yum"):
                return "yum"
            return pm
    for pm, binary in (("apt", "apt-get"), ("dnf", "dnf"), ("yum", "yum"), ("apk", "apk"), ("zypper", "zypper"),
                       ("pacman", "pacman")):
        if shutil.which(binary):
            return pm
    return None


def conda_prefix_of(python: str) -> Optional[str]:
    """The conda environment an interpreter belongs to, if any."""
    path = Path(python)
    for candidate in (path.parent.parent, Path(os.path.realpath(python)).parent.parent):
        if (candidate / "conda-meta").is_dir():
            return str(candidate)
    return None


def detect(python: str) -> Dict[str, Any]:
    osr = os_release()
    return {
        "distro_id": osr.get("ID"),
        "distro_like": osr.get("ID_LIKE"),
        "distro_name": osr.get("PRETTY_NAME") or osr.get("NAME"),
        "distro_version": osr.get("VERSION_ID"),
        "pkg_manager": package_manager(osr),
        "is_root": hasattr(os, "geteuid") and os.geteuid() == 0,
        "conda_prefix": conda_prefix_of(python),
    }


def default_python(environ: Mapping[str, str] = os.environ) -> Dict[str, str]:
    """The interpreter of the user's active environment, not stackpeel's own."""
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = environ.get(var)
        if prefix:
            for name in ("bin/python", "bin/python3"):
                cand = Path(prefix) / name
                if cand.exists():
                    return {"python": str(cand), "source": f"${var}"}
    found = shutil.which("python3", path=environ.get("PATH")) or shutil.which("python", path=environ.get("PATH"))
    if not found:
        raise TargetError("no python3 on PATH and no active virtualenv or conda environment; pass --python PATH")
    return {"python": found, "source": "PATH"}


_IDENTIFY = ("import sys, json, sysconfig; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], "
             "'executable': sys.executable, 'prefix': sys.prefix, 'base_prefix': getattr(sys, 'base_prefix', sys.prefix), "
             "'implementation': sys.implementation.name, 'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX')}))")


def identify(python: str, env: Optional[Mapping[str, str]] = None, timeout: float = 20.0) -> Dict[str, Any]:
    """Run the interpreter once to learn what it is; TargetError if it cannot run."""
    if os.sep in python and not os.path.exists(python):
        raise TargetError(f"{python}: no such file")
    try:
        proc = subprocess.run([python, "-c", _IDENTIFY], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, env=dict(env) if env is not None else None)
    except FileNotFoundError:
        raise TargetError(f"{python}: not found") from None
    except PermissionError:
        raise TargetError(f"{python}: not executable") from None
    except subprocess.TimeoutExpired:
        raise TargetError(f"{python} did not start within {timeout:g} s") from None
    except OSError as exc:
        raise TargetError(f"{python}: {exc}") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise TargetError(f"{python} is not a working Python interpreter (exit {proc.returncode}): "
                          f"{proc.stderr.strip()[-500:]}")
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise TargetError(f"{python} printed something unexpected: {proc.stdout[-300:]!r}") from None
