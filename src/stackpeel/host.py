"""Which interpreter to diagnose, and what the host offers for fixing things.

Runs in stackpeel's own process and only reads files and environment variables; it
imports nothing from the stack under diagnosis.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
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


def machine_identity() -> Dict[str, Optional[str]]:
    """What tells this machine apart from others: systemd's machine id (/etc/machine-id, else
    D-Bus's copy) and the host name. ``stackpeel fix --from`` compares them with a report's."""
    mid = None
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                mid = f.read().strip() or None
        except OSError:
            continue
        if mid:
            break
    return {"machine_id": mid, "hostname": socket.gethostname() or None}


def detect(python: str) -> Dict[str, Any]:
    osr = os_release()
    return {
        **machine_identity(),
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


#: runs under any Python, 2.7 included, so that an old one is named rather than crashing
_IDENTIFY = ("import sys, json, sysconfig; print('STACKPEEL-ID ' + json.dumps({'version': '%d.%d.%d' % "
             "tuple(sys.version_info[:3]), 'executable': sys.executable, 'prefix': sys.prefix, "
             "'base_prefix': getattr(sys, 'base_prefix', sys.prefix), "
             "'implementation': getattr(getattr(sys, 'implementation', None), 'name', 'cpython'), "
             "'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX')}))")
_ID_MARK = "STACKPEEL-ID "
MIN_PYTHON = (3, 8)


def resolve_python(python: str, environ: Mapping[str, str] = os.environ) -> str:
    """``--python`` as given -> the interpreter path to run: absolute (not resolved: a venv's
    python is a symlink that must stay one); a venv or conda directory -> its bin/python."""
    if os.sep in python:
        if not os.path.isabs(python):
            try:
                os.getcwd()
            except OSError:
                raise TargetError(f"{python}: a relative path, but the current directory no longer exists; "
                                  "give --python as an absolute path") from None
        python = os.path.abspath(python)
    elif os.path.isdir(python):
        python = os.path.abspath(python)
    else:
        found = shutil.which(python, path=environ.get("PATH"))
        if not found:
            raise TargetError(f"{python}: not found on PATH")
        python = found
    if os.path.isdir(python):
        for name in ("bin/python", "bin/python3"):
            cand = os.path.join(python, name)
            if os.path.isfile(cand):
                return cand
        raise TargetError(f"{python} is a directory with no bin/python in it; give the interpreter itself "
                          "(e.g. --python ~/venv/bin/python)")
    return python


def identify(python: str, env: Optional[Mapping[str, str]] = None, timeout: float = 20.0) -> Dict[str, Any]:
    """Run the interpreter once to learn what it is; TargetError if it cannot run or is no Python 3.8+."""
    from .runner import hygiene

    if os.sep in python and not os.path.exists(python):
        raise TargetError(f"{python}: no such file")
    if os.path.isdir(python):
        raise TargetError(f"{python} is a directory, not an interpreter")
    try:
        rc, out, err = hygiene.run_captured([python, "-c", _IDENTIFY], timeout=timeout,
                                            env=dict(env) if env is not None else None)
    except FileNotFoundError:
        raise TargetError(f"{python}: not found") from None
    except PermissionError:
        raise TargetError(f"{python}: not executable") from None
    except OSError as exc:
        raise TargetError(f"{python}: {exc.strerror or exc}") from None
    if rc is None:
        raise TargetError(f"{python} did not answer within {timeout:g} s (it and what it started were ended)")
    out = out.decode("utf-8", "replace")
    # never echo stackpeel's own one-liner back (a non-Python program quotes its arguments)
    err = "\n".join(ln for ln in err.decode("utf-8", "replace").splitlines() if "sysconfig" not in ln)
    missing = object()
    answer: Any = missing
    for line in reversed(out.splitlines()):
        if line.startswith(_ID_MARK):
            try:
                answer = json.loads(line[len(_ID_MARK):])
            except ValueError:
                answer = line[len(_ID_MARK):]
            break
    if answer is missing:
        last = (err.strip().splitlines() or [""])[-1][-200:]
        if rc != 0:
            raise TargetError(f"{python} is not a working Python interpreter: asked to run Python code, it "
                              f"exited with status {rc}" + (f" ({last})" if last else ""))
        raise TargetError(f"{python} is not a Python interpreter: it did not answer stackpeel's "
                          f"identification (it printed {out.strip()[-100:]!r})")
    if not isinstance(answer, dict) or not all(isinstance(answer.get(k), str) for k in ("version", "executable")):
        raise TargetError(f"{python} gave an unusable answer to stackpeel's identification: {str(answer)[:100]!r}")
    try:
        version = tuple(int(x) for x in answer["version"].split(".")[:2])
    except ValueError:
        raise TargetError(f"{python} reported an unreadable version {answer['version']!r}") from None
    if version < MIN_PYTHON:
        raise TargetError(f"{python} is Python {answer['version']}; stackpeel diagnoses Python "
                          f"{'.'.join(map(str, MIN_PYTHON))} and newer (give a newer interpreter with --python)")
    return answer
