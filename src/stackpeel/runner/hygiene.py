"""Nothing outlives stackpeel: every child, its descendants and every temporary directory.

Every process stackpeel starts to probe the target (probes, the identification of
``--python``) is started through :func:`spawn`: in a session of its own, registered here
until it has been reaped. Every temporary directory comes from :func:`make_tempdir` and is
registered until removed. :func:`terminate_all` is what a signal handler calls: it kills
every registered process group and every descendant found under the registered children
(so a grandchild that made a session of its own dies too), removes the registered
directories and, when ``final``, refuses any later spawn or directory, so a worker thread
that was about to start a probe cannot leave one behind.

Parent death is covered twice: each probe asks the kernel for SIGKILL when stackpeel dies
(``PR_SET_PDEATHSIG``, in the probe bootstrap), and the CLI watches its own parent
(:func:`watch_parent`) so that a dead parent ends stackpeel as SIGHUP would.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat as stat_mod
import subprocess
import tempfile
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..probes import _common  # the owner stamp (standard library only; written once for both)

__all__ = ["Closing", "NoTempDir", "ensure_scratch", "keep_target_tmp", "make_tempdir", "remove_tempdir", "spawn",
           "reap", "run_captured", "sweep_orphans", "terminate_all", "watch_parent"]

_LOCK = threading.RLock()
_LIVE: Dict[int, subprocess.Popen] = {}
_DIRS: Set[str] = set()
_closing = False


class Closing(Exception):
    """stackpeel is ending: no new child and no new directory."""


class NoTempDir(OSError):
    """No writable temporary directory (TMPDIR and the system defaults)."""


#: where stackpeel keeps its own scratch when no system temporary directory can be used (tmp24): a
#: read-only or full /tmp is what ``toolchain.temp_dir`` diagnoses, so stackpeel itself must still run.
#: Only this process's ``tempfile.tempdir`` moves; probes get their own TMPDIR (child.py), and the
#: target's temporary directory is read from the variables the runner passes (STACKPEEL_TARGET_*)
FALLBACK_TMP_ROOTS = ("/dev/shm",)

#: What stackpeel's scratch holds at its peak during ``check`` on the CPU stack venv (torch 2.13,
#: Triton 3.9), sampled every 5 ms on a tmpfs of its own (tmp25): 0.13 MiB by default (probe answers
#: and inputs, Triton's test build); 149 MiB with --deep, almost all of it the precompiled header torch
#: inductor writes for its C++ kernels (``torchinductor_<user>/precompiled_headers``, in the kernels
#: probe's TMPDIR)
SCRATCH_PEAK = 149 << 20
#: /dev/shm is memory NCCL needs (one ~9.2 MiB segment per peer: 'failed to extend /dev/shm/nccl-...
#: to 9637892 bytes'; Docker gives it 64 MiB). stackpeel's scratch goes there first only when it has
#: twice the --deep peak free and 200 MiB left after that; otherwise in the user's cache folder
#: (:func:`_cache_root`), and in /dev/shm only as the last resort, with at least SHM_LAST_RESORT free
#: (the default peak is 0.13 MiB)
SHM_MIN_FREE = 2 * SCRATCH_PEAK + (200 << 20)
SHM_LAST_RESORT = 16 << 20
#: a temporary directory with less free than this is too full for stackpeel's own scratch (a probe's
#: 38 KiB input would fail to write): the fallback takes it, and the fault is the target's to name
SCRATCH_MIN_FREE = 4 << 20


def _free(path: str) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def _cache_root() -> Optional[str]:
    """$XDG_CACHE_HOME/stackpeel/tmp, else ~/.cache/stackpeel/tmp (an absolute folder only)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        base = os.path.join(home, ".cache") if os.path.isabs(home) else ""
    return os.path.join(base, "stackpeel", "tmp") if base else None


def fallback_roots() -> List[str]:
    """Where stackpeel's own scratch may go when tempfile finds no directory, best first (tmp25):
    /dev/shm when it has :data:`SHM_MIN_FREE`, the user's cache folder, /dev/shm with
    :data:`SHM_LAST_RESORT`. The sweep looks in each of them too."""
    roots: List[str] = []
    for root in FALLBACK_TMP_ROOTS:
        if _free(root) >= SHM_MIN_FREE:
            roots.append(root)
    cache = _cache_root()
    if cache:
        roots.append(cache)
    for root in FALLBACK_TMP_ROOTS:
        if root not in roots and _free(root) >= SHM_LAST_RESORT:
            roots.append(root)
    return roots


def _fallback_tempdir(prefix: str) -> Optional[str]:
    for root in fallback_roots():
        try:
            if not os.path.isdir(root):
                os.makedirs(root, mode=0o700)
            path = tempfile.mkdtemp(prefix=prefix, dir=root)
        except OSError:
            continue
        tempfile.tempdir = root  # stackpeel's later scratch (zygote capture files) goes there too
        return path
    return None


def _roomy_tempdir() -> str:
    """tempfile.gettempdir(), or OSError (ENOSPC) where it has less than SCRATCH_MIN_FREE free (tmp25)."""
    root = tempfile.gettempdir()
    if os.path.isdir(root) and _free(root) < SCRATCH_MIN_FREE:
        raise OSError(28, f"{_free(root) >> 10} KiB free, stackpeel needs {SCRATCH_MIN_FREE >> 20} MiB")
    return root


def ensure_scratch() -> None:
    """Make this process's ``tempfile`` usable before an anonymous temporary file is made (the
    zygote's stderr): where tempfile finds no directory, the fallback root becomes its default."""
    try:
        _roomy_tempdir()
    except OSError:
        path = _fallback_tempdir("stackpeel-")
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)


def keep_target_tmp(env: Dict[str, str]) -> Dict[str, str]:
    """``env`` with the target's TMPDIR and working directory kept in STACKPEEL_TARGET_TMPDIR (absent:
    TMPDIR unset) and STACKPEEL_TARGET_CWD, before a probe's TMPDIR and cwd become stackpeel's
    scratch: toolchain.temp_dir and the extension build read them back (tmp24)."""
    env.pop("STACKPEEL_TARGET_TMPDIR", None)
    if env.get("TMPDIR") is not None:
        env["STACKPEEL_TARGET_TMPDIR"] = env["TMPDIR"]
    try:
        env["STACKPEEL_TARGET_CWD"] = os.getcwd()
    except OSError:
        env.pop("STACKPEEL_TARGET_CWD", None)
    return resolve_pythonpath(env)


def resolve_pythonpath(env: Dict[str, str]) -> Dict[str, str]:
    """``env`` (changed in place) with each relative PYTHONPATH entry made absolute against the
    user's working directory, as the target resolves it there (site makes sys.path absolute).
    stackpeel runs the target in folders of its own (the cache key's script, every probe): read
    there, ``PYTHONPATH=src`` named ``<that folder>/src``, a new path every run and not the
    user's (chk27). A working directory that is gone leaves the value as it is."""
    value = env.get("PYTHONPATH")
    if not value:   # unset, or empty: CPython adds nothing for PYTHONPATH=""
        return env
    entries = value.split(os.pathsep)
    if all(os.path.isabs(e) for e in entries):
        return env
    try:
        here = os.getcwd()
    except OSError:
        return env
    env["PYTHONPATH"] = os.pathsep.join(e if os.path.isabs(e) else os.path.abspath(os.path.join(here, e))
                                        for e in entries)
    return env


def make_tempdir(prefix: str = "stackpeel-") -> str:
    with _LOCK:
        if _closing:
            raise Closing("stackpeel is shutting down")
        try:
            path = tempfile.mkdtemp(prefix=prefix, dir=_roomy_tempdir())
        except (FileNotFoundError, PermissionError, OSError) as exc:
            fallback = _fallback_tempdir(prefix)
            if fallback is None:
                where = os.environ.get("TMPDIR") or "/tmp"
                raise NoTempDir(exc.errno, f"no writable temporary directory ({where}: {exc.strerror or exc}); "
                                           "set TMPDIR to a writable directory") from None
            path = fallback
        _DIRS.add(path)
    _stamp(path)
    return path


#: the file in each of stackpeel's temporary directories that names the process that made it; a probe
#: stamps the folders it makes outside this scratch (the extension build's, in the user's temporary
#: directory) with the same line: one writer for both (probes/_common.py ``owner_line``, tmp25)
OWNER = _common.OWNER


def _start_time(pid: int) -> Optional[str]:
    """The start time of process ``pid`` in clock ticks since boot (Linux), or None: with the
    pid it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        return stat[stat.rindex(")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        return None


def _runs(pid: int, start: str) -> bool:
    """Process ``pid`` started at ``start`` still runs: it exists and is no zombie. A probe killed
    with stackpeel becomes a zombie until whoever adopted it reaps it (a subreaper that never
    waits keeps it so), and a zombie writes nothing more in its folder (tmp25)."""
    if _start_time(pid) != start:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        return stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X")
    except (OSError, ValueError, IndexError):
        return False


def _where() -> Tuple[str, str]:
    """(this process's pid namespace, this boot): a pid means something only inside both."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return ns.replace(" ", ""), boot


def _stamp(path: str) -> None:
    line = _common.owner_line()
    if line is None:
        return
    try:
        with open(os.path.join(path, OWNER), "w") as f:
            f.write(line)
    except OSError:
        pass


def sweep_orphans(root: Optional[str] = None) -> List[str]:
    """Remove the temporary directories that a stackpeel killed outright (SIGKILL, the OOM
    killer, a power cut of its container) could not remove: those of this user whose
    :data:`OWNER` names a process that no longer runs. A directory without the stamp, of
    another user, or of a stackpeel still running is left alone, and so is one made in another
    pid namespace of this boot (a container sharing this /tmp: its pids are not ours to read).
    Returns what was removed."""
    removed: List[str] = []
    if root is None:  # the temporary directory, and where stackpeel's scratch goes without one (tmp25)
        roots = []
        try:
            roots.append(tempfile.gettempdir())
        except OSError:
            pass
        # and every place a probe may have made its stamped folder in the user's temporary
        # directory (where stackpeel's own scratch moved to a fallback, tempfile no longer names
        # it): the variables tempfile reads, its fixed list, the working directory it falls back to
        candidates = list(FALLBACK_TMP_ROOTS) + [_cache_root()]
        candidates += [os.environ.get(v) for v in ("STACKPEEL_TARGET_TMPDIR", "TMPDIR", "TEMP", "TMP")]
        candidates += ["/tmp", "/var/tmp", "/usr/tmp"]
        try:
            candidates.append(os.getcwd())
        except OSError:
            pass
        for extra in candidates:
            extra = os.path.abspath(extra) if extra else extra
            if extra and extra not in roots and os.path.isdir(extra):
                roots.append(extra)
        for one in roots:
            removed.extend(sweep_orphans(one))
        return removed
    try:
        names = [n for n in os.listdir(root) if n.startswith("stackpeel-")]
    except OSError:
        return removed
    uid = os.getuid()
    here_ns, here_boot = _where()
    for name in names:
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
            if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            with open(os.path.join(path, OWNER)) as f:
                pid_text, start, ns, boot = f.read(256).split()
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if boot == here_boot and (ns != here_ns or pid == os.getpid() or _runs(pid, start)):
            continue  # its maker still runs, or may (another pid namespace); another boot: gone
        with _LOCK:
            if path in _DIRS:
                continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def remove_tempdir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with _LOCK:
        _DIRS.discard(path)


def spawn(argv: Sequence[str], **kwargs) -> subprocess.Popen:
    """Popen in a new session, registered until :func:`reap`."""
    with _LOCK:
        if _closing:
            raise Closing("stackpeel is shutting down")
        proc = subprocess.Popen(list(argv), start_new_session=True, **kwargs)
        _LIVE[proc.pid] = proc
        return proc


def reap(proc: subprocess.Popen) -> None:
    """Kill what is left of the child's process group and forget it."""
    _kill_tree(proc.pid)
    with _LOCK:
        _LIVE.pop(proc.pid, None)


def run_captured(argv: Sequence[str], timeout: float, env=None, cwd: Optional[str] = None):
    """Run to completion with stdout/stderr captured: (returncode or None on timeout, out, err)."""
    proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc: Optional[int] = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        try:
            out, err = proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:  # a daemon that left the tree still holds the pipes
            for pipe in (proc.stdout, proc.stderr):
                try:
                    pipe.close()
                except OSError:
                    pass
            proc.wait()
            out, err = b"", b""
        rc = None
    finally:
        reap(proc)
    return rc, out, err


def _proc_table() -> Tuple[Dict[int, List[int]], Dict[int, str]]:
    """(parent pid -> child pids, pid -> state letter) of every process /proc lists now."""
    kids: Dict[int, List[int]] = {}
    states: Dict[int, str] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return kids, states
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
            fields = stat[stat.rindex(")") + 2:].split()
            state, ppid = fields[0], int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
        states[int(name)] = state
    return kids, states


def _children_map() -> Dict[int, List[int]]:
    return _proc_table()[0]


def descendants(pid: int, kids: Optional[Dict[int, List[int]]] = None) -> List[int]:
    kids = _children_map() if kids is None else kids
    out, todo = [], list(kids.get(pid, ()))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def _kill_tree(pid: int, kids: Optional[Dict[int, List[int]]] = None) -> None:
    """SIGKILL the process group led by ``pid`` and every descendant of ``pid``."""
    tree = descendants(pid, kids)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


#: how long the final sweep goes on killing a tree that is still forking (a process in
#: uninterruptible sleep dies only when its I/O ends; stackpeel does not wait for it longer)
SWEEP_DEADLINE_S = 5.0


def terminate_all(final: bool = True) -> None:
    """Kill every registered child with its descendants and remove every registered directory.

    Safe to call from a signal handler in the main thread: the lock is re-entrant, and when
    another thread holds it (a spawn that does not return), the kill goes ahead without it
    after a moment rather than leaving stackpeel hanging in its own signal handler.

    When ``final``, the kill is repeated until no live (non-zombie) process is left under
    stackpeel, or :data:`SWEEP_DEADLINE_S` has passed: one reading of the process table misses
    what is forked after it (a target another thread was starting when the signal came, a shell
    between its fork and our kill), and such a child in a session of its own is in no group we
    kill. Every SIGKILLed process forks no more, and what it had forked is re-parented to
    stackpeel (a subreaper), so the next reading finds it."""
    global _closing
    locked = _LOCK.acquire(timeout=1.0)
    try:
        if final:
            _closing = True
        kids = _children_map()
        for pid in _snapshot(_LIVE):
            _kill_tree(pid, kids)
        if final:
            # orphans stackpeel adopted as a subreaper, and children of its own not registered,
            # until none is left alive
            _sweep_descendants(SWEEP_DEADLINE_S)
        for path in _snapshot(_DIRS):
            shutil.rmtree(path, ignore_errors=True)
            _DIRS.discard(path)
    finally:
        if locked:
            _LOCK.release()


def _sweep_descendants(deadline_s: float) -> int:
    """SIGKILL every live descendant of this process (and the group of each that leads one),
    reading the process table again after each round, until none is alive or ``deadline_s``
    has passed. Returns the number of rounds that found something to kill."""
    me = os.getpid()
    end = time.monotonic() + deadline_s
    rounds = 0
    pause = 0.001
    while True:
        kids, states = _proc_table()
        alive = [p for p in descendants(me, kids) if states.get(p) not in ("Z", "X", None)]
        if not alive or time.monotonic() > end:
            return rounds
        rounds += 1
        for p in alive:
            try:
                if os.getpgid(p) == p:  # a group leader: its members forked since the reading too
                    os.killpg(p, signal.SIGKILL)
            except OSError:  # gone, or not ours
                pass
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(pause)  # a killed process leaves /proc's live states once the kernel has ended it
        pause = min(pause * 2, 0.05)


def _snapshot(items) -> List:
    """A copy of a registry another thread may be changing (only without the lock)."""
    for _ in range(100):
        try:
            return list(items)
        except RuntimeError:  # changed size during iteration
            continue
    return []


def _prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux), so that a grandchild whose parent died is still ours to end."""
    prctl = _prctl()
    return bool(prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def watch_parent(on_death: Callable[[], None], interval: float = 0.2) -> Optional[threading.Thread]:
    """Call ``on_death`` (from a daemon thread) when this process's parent goes away.

    Polling ``getppid`` rather than ``PR_SET_PDEATHSIG`` on stackpeel itself: the kernel sends
    that signal when the parent *thread* that forked us ends, so a multi-threaded launcher
    (a Go program, a thread pool) would end stackpeel while it is still alive."""
    parent = os.getppid()
    if parent <= 1:
        return None

    def loop() -> None:
        stop = threading.Event()
        while not stop.wait(interval):
            if os.getppid() != parent:
                on_death()
                return

    t = threading.Thread(target=loop, name="stackpeel-parent-watch", daemon=True)
    t.start()
    return t
