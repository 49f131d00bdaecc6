"""Run a command with the unmask monitor injected into every Python it starts.

The command runs unchanged: same argv, same stdin/stdout/stderr (inherited, never piped),
its exit status handed back as is. Only the environment differs: a temporary directory
holding a bootstrap ``sitecustomize.py`` (plus a copy of :mod:`.monitor`) is put first on
``PYTHONPATH``, and ``STACKPEEL_UNMASK_DIR`` names the directory each monitored process
writes its record into (``record-<pid>.json``, ``journal-<pid>.jsonl``, ``crash-<pid>.txt``).

Signals, each delivered once:

- stackpeel in the foreground of a terminal: the program shares stackpeel's process group,
  so the terminal's SIGINT, SIGQUIT, SIGTSTP and hangup SIGHUP reach it directly (stackpeel
  ignores SIGINT/SIGQUIT and does not pass SIGHUP on); SIGTERM, SIGUSR1 and SIGUSR2 sent
  to stackpeel are passed on.
- otherwise (a job scheduler, nohup, CI, a pipeline): the program runs in a process group of
  its own, so a signal sent to stackpeel's group reaches the program only through stackpeel,
  which passes SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 on to the program's group.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..redact import scrub, scrub_text, secret_values
from ..runner import hygiene
from . import monitor as _monitor

BOOTSTRAP_DIR = Path(__file__).resolve().parent / "bootstrap"
MONITOR_MODULE = "_stackpeel_unmask_monitor"

FORWARDED_TTY = ("SIGTERM", "SIGUSR1", "SIGUSR2")
IGNORED_TTY = ("SIGINT", "SIGQUIT", "SIGHUP")
FORWARDED_GROUP = ("SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")


def in_terminal_foreground() -> bool:
    """Is stackpeel the foreground job of its controlling terminal?"""
    for fd in (0, 1, 2):
        try:
            return os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


class LaunchError(Exception):
    """The command could not be started at all (not found, not executable)."""


@dataclass(frozen=True)
class Target:
    """What the command is, as far as it can be told without running it."""

    argv0: str
    path: Optional[str]             # resolved executable
    kind: str                       # "python" | "python-script" | "other" | "missing"
    interpreter: Optional[str]      # the Python that will run (shebang of a console script)
    note: Optional[str] = None
    interpreter_args: Tuple[str, ...] = ()  # flags on the shebang line


@dataclass
class Launch:
    """The outcome of one run: exit status and the records the monitors left."""

    argv: List[str]
    target: Target
    returncode: int
    duration: float
    records: List[Dict[str, Any]] = field(default_factory=list)
    crash_dumps: Dict[int, str] = field(default_factory=dict)
    pid: Optional[int] = None       # of the process the command started
    unmonitored: Optional[str] = None   # why the command ran without the monitor

    @property
    def main_pid(self) -> Optional[int]:
        """The pid of the Python the command started (or, through a wrapper, its first child)."""
        pids = [r.get("pid") for r in self.records]
        if self.pid in pids:
            return self.pid
        for r in self.records:
            if r.get("ppid") == self.pid or r.get("ppid") == os.getpid():
                return r.get("pid")
        return pids[0] if pids else None

    @property
    def signal(self) -> Optional[int]:
        return -self.returncode if self.returncode < 0 else None


PIP_EXEC = "'''exec'"      # pip's long-path trick:  #!/bin/sh  then  '''exec' /path/to/python "$0" "$@"


def _read_shebang(path: str) -> Optional[List[str]]:
    """The interpreter and its arguments from a script's #! line (pip's /bin/sh trick too)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    lines = head.decode("utf-8", "replace").splitlines()
    first = lines[0][2:].strip().split()
    if first and os.path.basename(first[0]) == "sh" and len(lines) > 1:
        second = lines[1].strip()
        if second.startswith(PIP_EXEC):
            words = second[len(PIP_EXEC):].split()
            return [w for w in words if not w.startswith(('"$0', '"$@'))] or None
    if first and os.path.basename(first[0]) == "env" and len(first) > 1:
        rest = first[1:]
        while rest and rest[0].startswith("-"):     # env -S, env -i ...
            rest = rest[1:]
        return rest or None
    return first or None


def _looks_like_python(name: str) -> bool:
    base = os.path.basename(name)
    return base.startswith(("python", "pypy")) or base in ("py",)


def resolve_target(argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> Target:
    """Find the executable of argv[0] and, for a console script, its interpreter."""
    argv0 = argv[0]
    path_env = (env or os.environ).get("PATH")
    path = argv0 if os.sep in argv0 else shutil.which(argv0, path=path_env)
    if not path or not os.path.exists(path):
        return Target(argv0, None, "missing", None, f"{argv0}: command not found")
    if _looks_like_python(path):
        return Target(argv0, path, "python", path)
    shebang = _read_shebang(path)
    if shebang:
        interp = shebang[0]
        if not os.path.isabs(interp):
            interp = shutil.which(interp, path=path_env) or interp
        if _looks_like_python(interp):
            return Target(argv0, path, "python-script", interp, interpreter_args=tuple(shebang[1:]))
    return Target(argv0, path, "other", None,
                  note="not a Python program: only the Python processes it starts are monitored")


def python_flags_note(argv: Sequence[str]) -> Optional[str]:
    """-I, -E and -S stop Python from reading PYTHONPATH or running sitecustomize."""
    skip_next = False
    for a in argv[1:]:
        if skip_next:
            skip_next = False
            continue
        if a == "--" or not a.startswith("-") or a.startswith("--") or a == "-":
            break
        for i, letter in enumerate(a[1:]):
            if letter in "mc":
                return None                     # the rest belongs to the program
            if letter in "WX":
                skip_next = i == len(a) - 2     # "-W arg" (rather than "-Warg")
                break
            why = {"I": "-I (isolated mode)", "E": "-E", "S": "-S"}.get(letter)
            if why:
                return (f"the command runs Python with {why}, which ignores PYTHONPATH or sitecustomize: "
                        "nothing can be monitored; drop the flag, or call stackpeel.unmask.install() "
                        "inside the program")
    return None


def make_bootstrap(workdir: Path) -> Path:
    """The directory that goes first on PYTHONPATH: sitecustomize.py + the monitor module."""
    boot = workdir / "boot"
    boot.mkdir()
    shutil.copyfile(BOOTSTRAP_DIR / "sitecustomize.py", boot / "sitecustomize.py")
    shutil.copyfile(_monitor.__file__, boot / f"{MONITOR_MODULE}.py")
    return boot


def child_env(base: Dict[str, str], boot: Path, records: Path, options: Dict[str, Any]) -> Dict[str, str]:
    env = dict(base)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(boot) + (os.pathsep + old if old else "")
    env[_monitor.ENV_DIR] = str(records)
    env[_monitor.ENV_OPTIONS] = json.dumps(options)
    return env


def read_records(records: Path) -> (List[Dict[str, Any]], Dict[int, str]):
    """Final records, or what the journals kept for processes that never finished."""
    out: List[Dict[str, Any]] = []
    crashes: Dict[int, str] = {}
    done = set()
    for p in sorted(records.glob("record-*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out.append(rec)
        done.add(rec.get("pid"))
    for p in sorted(records.glob("journal-*.jsonl")):
        try:
            pid = int(p.stem.split("-", 1)[1])
        except ValueError:
            continue
        if pid in done:
            continue
        out.append(record_from_journal(pid, p))
    for p in sorted(records.glob("crash-*.txt")):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
            pid = int(p.stem.split("-", 1)[1])
        except (OSError, ValueError):
            continue
        if text.strip():
            crashes[pid] = text
    # the program's exception messages may hold its secrets: replaced before anything is ranked or cut
    values = secret_values(os.environ)
    return [scrub(rec, values) for rec in out], {pid: scrub_text(t, values) for pid, t in crashes.items()}


def record_from_journal(pid: int, path: Path) -> Dict[str, Any]:
    """A partial record rebuilt from a journal: counts are 'at least once'."""
    handled, warnings, logs = [], [], []
    header: Dict[str, Any] = {}
    updates: Dict[Any, set] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for ln in lines:
        try:
            item = json.loads(ln)
        except ValueError:
            continue          # a line cut short by the crash
        data = item.get("data") or {}
        kind = item.get("kind")
        if kind == "process":
            header = data
        elif kind in ("reraised", "converted"):
            updates.setdefault(data.get("id"), set()).add(kind)
        elif kind == "handled":
            data.setdefault("count", 1)
            data.setdefault("reraised", 0)
            data.setdefault("converted", 0)
            data.setdefault("last_time", data.get("first_time"))
            handled.append(data)
        elif kind == "warning":
            data["count"] = max(int(data.get("count") or 0), 1)
            warnings.append(data)
        elif kind == "log":
            data["count"] = max(int(data.get("count") or 0), 1)
            logs.append(data)
    for h in handled:
        seen = updates.get(h.get("id"), ())
        if "reraised" in seen:
            h["count"], h["reraised"] = 0, 1       # handled there, but passed on (at least once)
        if "converted" in seen:
            h["count"], h["converted"] = 0, 1
    rec = {k: header.get(k) for k in ("ppid", "python", "implementation", "executable", "argv", "mode",
                                      "mode_note", "started")}
    rec.update({"format": _monitor.RECORD_FORMAT, "version": _monitor.RECORD_VERSION, "complete": False,
            "pid": pid, "handled": handled, "warnings": warnings, "logs": logs,
            "note": "the process ended without running its exit handlers (signal, os._exit, crash): "
                    "rebuilt from its journal; counts are 'at least once', and exceptions handled "
                    "and then re-raised may be listed"})
    return rec


def launch(argv: Sequence[str], options: Optional[Dict[str, Any]] = None,
           env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> Launch:
    """Run argv to completion with the monitor injected; never changes its I/O or status."""
    argv = list(argv)
    if not argv:
        raise LaunchError("no command given")
    base_env = dict(os.environ if env is None else env)
    target = resolve_target(argv, base_env)
    if target.kind == "missing":
        raise LaunchError(target.note or f"{argv[0]}: command not found")
    try:
        # stamped with our pid: when stackpeel itself is killed outright, the next one removes it
        workdir = Path(hygiene.make_tempdir(prefix="stackpeel-run-"))
    except OSError as exc:
        # the program runs all the same: a doctor must never be the reason it did not
        why = (f"{exc.strerror or exc}; the program ran unmonitored" if isinstance(exc, hygiene.NoTempDir)
               else f"no writable temporary directory ({exc.strerror or exc}); the program ran unmonitored "
                    "(set TMPDIR to a writable directory)")
        rc, duration, pid = _run(argv, base_env, cwd)
        return Launch(argv, target, rc, duration, [], {}, pid, unmonitored=why)
    try:
        boot = make_bootstrap(workdir)
        records = workdir / "records"
        records.mkdir()
        cenv = child_env(base_env, boot, records, dict(options or {}))
        rc, duration, pid = _run(argv, cenv, cwd)
        recs, crashes = read_records(records)
        return Launch(argv, target, rc, duration, recs, crashes, pid)
    finally:
        hygiene.remove_tempdir(str(workdir))


def _run(argv: List[str], env: Dict[str, str], cwd: Optional[str]) -> Tuple[int, float, int]:
    """Run to completion, signals passed on once (module docstring); (status, seconds, pid)."""
    tty = in_terminal_foreground()
    extra: Dict[str, Any] = {}
    if not tty:  # a group of its own (module docstring)
        if sys.version_info >= (3, 11):
            extra["process_group"] = 0
        else:
            extra["preexec_fn"] = os.setpgrp
    previous = {}
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, **extra)
    except OSError as exc:
        raise LaunchError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    try:
        for name in (IGNORED_TTY if tty else ()):
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, signal.SIG_IGN)
        for name in (FORWARDED_TTY if tty else FORWARDED_GROUP):
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, lambda s, _f: _forward(proc, s, group=not tty))
        while True:
            try:
                rc = proc.wait()
                break
            except InterruptedError:  # pragma: no cover - PEP 475 retries for us
                continue
    finally:
        for sig, old in previous.items():
            try:
                signal.signal(sig, old)
            except (TypeError, ValueError):
                pass
    return rc, time.monotonic() - t0, proc.pid


def _forward(proc: subprocess.Popen, sig: int, group: bool = False) -> None:
    try:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except OSError:
        pass


def die_like(returncode: int) -> int:
    """Leave with the child's status: its exit code, or death by the same signal."""
    if returncode >= 0:
        return returncode
    sig = -returncode
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # the child dumped core already, if at all
    except Exception:
        pass
    try:
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        time.sleep(1)
    except Exception:
        pass
    return 128 + sig
