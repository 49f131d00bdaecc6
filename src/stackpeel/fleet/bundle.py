"""What a node runs: stackpeel shipped as a gzipped tarball on the transport's standard input.

The node unpacks it into a private temporary directory, runs ``python3 -m stackpeel check
--format json`` with its own Python (3.9 or newer; ``tomli`` travels in the tarball for
Pythons without ``tomllib``), prints the report on stdout and removes the directory, whatever
happens. A node where ``stackpeel`` is already on PATH uses that install instead (it drains
the tarball first, so the transport never blocks on a full pipe).
"""

from __future__ import annotations

import io
import os
import shlex
import tarfile
from pathlib import Path
from typing import Optional, Sequence

import stackpeel

_PKG_DIR = Path(stackpeel.__file__).resolve().parent
_SKIP_DIRS = {"__pycache__"}


def _add_tree(tar: tarfile.TarFile, root: Path, arcroot: str) -> None:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.suffix in (".pyc", ".pyo"):
            continue
        info = tar.gettarinfo(str(path), arcname=f"{arcroot}/{rel.as_posix()}")
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0  # the same bytes for the same code: a stable, cacheable bundle
        if path.is_file():
            with open(path, "rb") as f:
                tar.addfile(info, f)
        elif path.is_dir():
            tar.addfile(info)


def make_bundle() -> bytes:
    """stackpeel's package (and tomli, when this environment has it) as .tar.gz bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        _add_tree(tar, _PKG_DIR, "stackpeel")
        try:
            import tomli  # noqa: F401  (pure Python; lets nodes with Python < 3.11 read the knowledge base)
        except ImportError:
            pass
        else:
            _add_tree(tar, Path(tomli.__file__).resolve().parent, "tomli")
    return buf.getvalue()


def remote_command(check_args: Sequence[str] = (), python: Optional[str] = None, prefer_installed: bool = True,
                   worker_python: bool = False) -> str:
    """The POSIX shell line a node runs with the bundle on its standard input.

    ``worker_python``: the node's runner (Ray) names its own interpreter in
    ``$STACKPEEL_FLEET_PY``; it runs stackpeel and, without ``python``, is the one diagnosed.
    Exit status is stackpeel's own (0 healthy, 1 problems, 2 stackpeel could not run);
    97 means the node has no usable Python to run stackpeel with.
    """
    args = ["check", "--format", "json", *check_args]
    if python:
        args += ["--python", python]
    quoted = " ".join(shlex.quote(a) for a in args)
    if worker_python and not python:
        quoted += ' --python "$STACKPEEL_FLEET_PY"'
    find_py = ('py=${STACKPEEL_FLEET_PY:-}; [ -n "$py" ] || ' if worker_python else "") + \
        'py=$(command -v python3 || command -v python)'
    installed = (f'if command -v stackpeel >/dev/null 2>&1; then cat >/dev/null; exec stackpeel {quoted}; fi; '
                 if prefer_installed else "")
    return (
        "set -u; " + installed +
        'd=$(mktemp -d "${TMPDIR:-/tmp}/stackpeel-fleet-XXXXXX") || exit 97; '
        'trap \'rm -rf "$d"\' EXIT HUP INT TERM; '
        'tar -xzf - -C "$d" || exit 97; '
        f'{find_py} || {{ echo "stackpeel fleet: no python3 on this node" >&2; '
        'exit 97; }; '
        f'PYTHONPATH="$d" PYTHONDONTWRITEBYTECODE=1 "$py" -m stackpeel {quoted}'
    )


def bundle_size_note(data: bytes) -> str:
    return f"{len(data) / 1024:.0f} KiB"


__all__ = ["make_bundle", "remote_command"]
