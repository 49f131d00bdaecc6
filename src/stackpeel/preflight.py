"""Preflight: check what a job needs at its start, once per node, and stop it with the root cause.

::

    import stackpeel
    stackpeel.require("triton.kernel_launch", "kernels.fla")   # raises StackError, or returns the Report

runs just those checks and what they require (the registry knows ``requires``) against the
interpreter that runs the job (or ``python=``), and raises one :class:`StackError` whose message
is the root-cause report when a named check does not end ``pass``/``warn``/``skip``.

Launched by ``torchrun``, Slurm or MPI, every rank may call it: the ranks of one node agree
through two files in a per-user directory (``$STACKPEEL_PREFLIGHT_DIR``, default
``<tmp>/stackpeel-preflight-<uid>``), keyed on the job (SLURM_JOB_ID.SLURM_STEP_ID,
TORCHELASTIC_RUN_ID with the launching agent's pid, PMIX_NAMESPACE, or MASTER_ADDR:MASTER_PORT),
the host, the user and what is required. Local rank 0 (LOCAL_RANK, SLURM_LOCALID,
OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID) takes an exclusive ``flock`` on ``<key>.lock``,
runs the checks and writes ``<key>.json`` atomically; the other ranks wait for that verdict and
return or raise exactly as rank 0 does. A lock is released by the kernel when its holder dies,
so a rank 0 that crashed (the lock free, its claim written, no verdict) or never came (none
after ``grace`` seconds) is replaced by the first waiting rank that takes the lock; a rank that
waited ``timeout`` seconds runs the checks itself. Nothing ever waits forever.

Exceptions::

    RuntimeError
     └── StackError          a required check failed, could not complete or was blocked
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .model import ExitCode, Report, Status

__all__ = ["StackError", "job_key", "local_rank", "require"]

#: variables launchers set to a process's rank among the processes of its node, first wins
LOCAL_RANK_VARS = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
DIR_ENV = "STACKPEEL_PREFLIGHT_DIR"
#: a verdict older than this is never reused (seconds), whatever its key
MAX_AGE_S = 6 * 3600.0
#: statuses of a required check that let the job start (skip: its subject is not installed)
PASSING = (Status.PASS, Status.WARN, Status.SKIP)


class StackError(RuntimeError):
    """A check the job requires did not pass. ``str(exc)`` is the root-cause report (text);
    ``report`` the whole :class:`~stackpeel.model.Report`, ``failed`` the ids of the required
    checks that did not pass, ``exit_code`` what ``stackpeel check --require`` exits with."""

    def __init__(self, text: str, report: Optional[Report], failed: Sequence[str]):
        super().__init__(text)
        self.report = report
        self.failed = tuple(failed)
        self.exit_code = ExitCode.PROBLEMS


def local_rank(env: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """This process's rank on its node as a launcher set it, or None outside a launcher."""
    environ = os.environ if env is None else env
    for name in LOCAL_RANK_VARS:
        value = environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def _proc_start(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def job_key(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """What identifies this job's launch on this node, or None (no launcher: nothing to share)."""
    environ = os.environ if env is None else env
    if environ.get("SLURM_JOB_ID"):
        job = "slurm:{}.{}.{}".format(environ["SLURM_JOB_ID"], environ.get("SLURM_STEP_ID", ""),
                                      environ.get("SLURM_RESTART_COUNT", "0"))
    elif environ.get("TORCHELASTIC_RUN_ID"):
        # "none" unless --rdzv-id is given: the elastic agent (every local rank's parent) tells launches apart
        ppid = os.getppid()
        job = "torchrun:{}.{}.{}:{}@{}".format(environ["TORCHELASTIC_RUN_ID"],
                                               environ.get("TORCHELASTIC_RESTART_COUNT", "0"),
                                               environ.get("MASTER_PORT", ""), ppid, _proc_start(ppid))
    elif environ.get("PMIX_NAMESPACE"):
        job = "pmix:" + environ["PMIX_NAMESPACE"]
    elif environ.get("MASTER_ADDR") and environ.get("MASTER_PORT"):
        job = "master:{}:{}".format(environ["MASTER_ADDR"], environ["MASTER_PORT"])
    else:
        return None
    return job


def _directory(env: Mapping[str, str]) -> Optional[str]:
    """The per-user directory of verdicts: ours, not a link, not writable by others; else None."""
    path = env.get(DIR_ENV) or os.path.join(tempfile.gettempdir(), f"stackpeel-preflight-{os.getuid()}")
    from pathlib import Path

    from .runner.cache import _private

    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path if _private(Path(path), True) else None


class _Files:
    """The lock and the verdict of one key."""

    def __init__(self, directory: str, key: str):
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        self.key = key
        self.lock_path = os.path.join(directory, digest + ".lock")
        self.verdict_path = os.path.join(directory, digest + ".json")
        self.fd: Optional[int] = None

    def try_lock(self) -> bool:
        import fcntl

        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def claim(self, rank: Optional[int]) -> None:
        """Say in the lock file who runs the checks (a waiter that finds it without a verdict
        and the lock free knows the claimant died)."""
        assert self.fd is not None
        data = json.dumps({"pid": os.getpid(), "local_rank": rank, "started": time.time()}).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def claimed(self) -> Optional[Dict[str, Any]]:
        try:
            with open(self.lock_path, encoding="utf-8") as f:
                text = f.read()
            return json.loads(text) if text.strip() else None
        except (OSError, ValueError):
            return None

    def unlock(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the flock
            self.fd = None

    def verdict(self) -> Optional[Dict[str, Any]]:
        try:
            with open(self.verdict_path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != self.key:
            return None
        if time.time() - float(data.get("written", 0)) > MAX_AGE_S:
            return None
        return data

    def write_verdict(self, data: Mapping[str, Any]) -> None:
        from .cli import write_atomically

        write_atomically(self.verdict_path, json.dumps(dict(data, key=self.key, written=time.time())))


def _named(report: Report, keys: Sequence[str]) -> List[str]:
    """Ids of the results that ``keys`` name (an id, a layer, or an id prefix)."""
    return [r.id for r in report.results
            if any(k == r.id or k == r.layer or r.id.startswith(k + ".") for k in keys)]


def _verdict(report: Report, keys: Sequence[str]) -> Dict[str, Any]:
    from .render import render

    failed = [rid for rid in _named(report, keys) if report.result(rid).status not in PASSING]
    text = ""
    if failed:
        head = (f"stackpeel: the stack cannot run what this job requires: {', '.join(failed)} did not pass "
                f"(`stackpeel check --require {','.join(keys)}` shows the same)")
        text = head + "\n\n" + render(report, "text", color=False, ascii_only=False, verbose=False, width=100)
    return {"failed": failed, "text": text, "report": report.to_dict()}


def _outcome(data: Mapping[str, Any], role: Mapping[str, Any]) -> Report:
    if data.get("usage_error"):
        from .registry import RegistryError

        raise RegistryError(data["usage_error"])
    report = Report.from_dict(data["report"])
    report = Report.from_dict(dict(report.to_dict(), target=dict(report.target, preflight=dict(role))))
    if data.get("failed"):
        raise StackError(data["text"], report, data["failed"])
    return report


def _split(ids: Sequence[str]) -> List[str]:
    return [v.strip() for item in ids for v in str(item).split(",") if v.strip()]


def require(*checks: str, python: Optional[str] = None, timeout: float = 900.0, grace: float = 60.0,
            timeout_scale: float = 1.0, env: Optional[Mapping[str, str]] = None, plugins: bool = True,
            reuse: bool = True, share: bool = True, poll: float = 0.2) -> Report:
    """Run ``checks`` (ids, layers or id prefixes, comma-separated or not) and what they require.

    Returns the :class:`Report` when every named check passes, warns or is not applicable, and
    raises :class:`StackError` (message: the root-cause report) when one fails, could not
    complete or was blocked; :class:`stackpeel.registry.RegistryError` (a ValueError) names an
    unknown check, :class:`stackpeel.TargetError` an interpreter that cannot run.

    ``python``: the interpreter to diagnose (default: the one running this call, the job's).
    Under a launcher (``share``; see the module's doc) one process per node runs the checks:
    the others wait up to ``timeout`` seconds for its verdict, and take over after ``grace``
    seconds when no rank 0 ever claimed the work. ``reuse`` lets an unchanged machine's
    earlier results stand (runner/cache.py), as ``stackpeel check`` does.
    ``report.target["preflight"]`` says what this process did: ``{"role": "checked" or "waited",
    "by": {pid, local_rank, host}}``.
    """
    from .cli import _warn  # the one stderr line of every command (cli imports only the standard library)

    from . import engine, registry

    keys = _split(checks)
    if not keys:
        raise registry.RegistryError("require() needs at least one check id or layer; see `stackpeel list`")
    environ = dict(os.environ if env is None else env)
    target = python or sys.executable
    me = {"pid": os.getpid(), "local_rank": local_rank(environ), "host": socket.gethostname()}

    def run() -> Dict[str, Any]:
        try:
            report = engine.check(python=target, only=keys, env=env, timeout_scale=timeout_scale, plugins=plugins,
                                  reuse=reuse)
        except registry.RegistryError as exc:  # an unknown name: every rank raises it (waiters load no registry)
            return {"usage_error": str(exc), "by": me}
        return dict(_verdict(report, keys), by=me)

    job = job_key(environ) if share else None
    directory = _directory(environ) if job else None
    if not job or not directory:
        data = run()
        return _outcome(data, {"role": "checked", "by": me, "shared": False})
    key = "|".join((job, socket.gethostname(), str(os.getuid()), os.path.realpath(target), ",".join(sorted(keys)),
                    str(timeout_scale), str(bool(plugins))))
    _sweep(directory)
    files = _Files(directory, key)
    rank = me["local_rank"]
    start = time.monotonic()
    while True:
        data = files.verdict()
        if data is not None:
            return _outcome(data, {"role": "waited", "by": data.get("by"), "shared": True})
        waited = time.monotonic() - start
        if waited > timeout:
            _warn(f"no verdict from local rank 0 after {timeout:.0f} s ({files.lock_path}); checking here")
            return _outcome(run(), {"role": "checked", "by": me, "shared": False})
        # rank 0 takes the lock at once; another rank only when rank 0 died (its claim is
        # there, no verdict) or never came within the grace period
        if rank in (0, None) or files.claimed() is not None or waited > grace:
            try:
                locked = files.try_lock()
            except OSError as exc:  # the lock file cannot be opened: share nothing, never wait for nothing
                _warn(f"cannot share the verdict ({files.lock_path}: {exc.strerror}); checking here")
                return _outcome(run(), {"role": "checked", "by": me, "shared": False})
            if locked:
                try:
                    data = files.verdict()
                    if data is not None:
                        return _outcome(data, {"role": "waited", "by": data.get("by"), "shared": True})
                    files.claim(rank)
                    data = run()
                    try:
                        files.write_verdict(data)
                    except OSError as exc:
                        _warn(f"cannot share the verdict ({files.verdict_path}: {exc.strerror}); "
                             "the other ranks will check themselves")
                    return _outcome(data, {"role": "checked", "by": me, "shared": True})
                finally:
                    files.unlock()
        time.sleep(poll)


def _sweep(directory: str) -> None:
    """Remove the lock and verdict files of launches long over (twice the age a verdict is trusted)."""
    now = time.time()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.endswith((".lock", ".json")):
            path = os.path.join(directory, name)
            try:
                if now - os.lstat(path).st_mtime > 2 * MAX_AGE_S:
                    os.unlink(path)
            except OSError:
                pass



