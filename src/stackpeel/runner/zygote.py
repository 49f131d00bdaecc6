"""One interpreter start shared by the probes that import torch anyway.

``import torch`` costs 1.7 s of CPU on the 2-core CI machine and 5 s on the H200; four
probes (``torch.cuda``, ``triton.kernel_launch``, ``kernels.*``) each paid it. A *zygote*
child of the target interpreter imports the preload list (``torch``) once and then forks
one process per probe: each probe still runs in its own process (its own session, its
own stdout/stderr files, killed alone on timeout, a crash harms nobody else), but starts
with torch already imported, exactly as a training script has it before it imports FLA.

Isolation is kept where it matters:

- the zygote never initialises CUDA (importing torch does not), so each fork starts with
  no CUDA context, like a fresh process;
- the preload must be *silent*: if importing the first module (torch) fails, warns, or
  writes anything to stdout/stderr, the zygote says so and every probe falls back to its
  own fresh interpreter, where it records that failure or warning itself; a later module
  (triton) is first imported in a throwaway child, and preloading stops before it unless
  that was silent too (the probes then import it themselves, in the same order);
- the probe's input, answer file and bootstrap are those of :mod:`.child`, so a forked
  probe's answer is read exactly like a spawned one's.

The zygote imports with the cyclic garbage collector off (a collection every few thousand
allocations costs about a tenth of ``import torch``: 0.15-0.25 s on the 2-core CI machine),
then freezes what it imported (``gc.freeze``) and turns collection on again in each fork
before the probe runs, so a probe sees an interpreter like any other.

What a fork no longer pays for: the standard modules probes import (:data:`STDLIB_WARM`,
imported once by the zygote) and loading its probe module (once per zygote: from the .pyc
the target's import system would use when it is current, else compiled from the source, as
under PYTHONDONTWRITEBYTECODE or for another Python version). The bare zygote of the
torch-free probes may run at a lower priority (``nice``), so that on a machine with few cores
they leave the one import everything waits for its own core; there they also take turns on
the cores that import leaves (:class:`Slots`), each timed from its turn, instead of twenty
forks sharing one core at once.

``STACKPEEL_NO_PRELOAD=1`` turns the zygote off (every probe spawns its own interpreter).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, Mapping, Optional, Sequence, Type

from . import hygiene
from .child import (BOOTSTRAP, LIMITS_PROLOGUE, PROBES_DIR, ProbeAnswer, own_nofile, probe_env, probe_files,
                    probe_slots, read_answer)

if TYPE_CHECKING:
    from ..checks.base import Check

#: Runs in the target interpreter (3.8+): preload, report, then fork one child per request.
ZYGOTE = LIMITS_PROLOGUE + r"""import json, select, warnings, tempfile, gc
import signal as signal_mod
gc.disable()  # no collections while importing (about a tenth of `import torch`); on again in every fork
ctl = int(sys.argv[1]); preload = [m for m in sys.argv[2].split(",") if m]; boot = sys.argv[3]
if int(sys.argv[4]):  # lower priority, inherited by every fork (the torch-free probes: see Zygote)
    try:
        os.nice(int(sys.argv[4]))
    except OSError:
        pass
def warm(names):
    # standard-library modules the bootstrap and the probes import: once here, not once per fork
    for name in filter(None, names.split(",")):
        try:
            __import__(name)
        except Exception:
            pass
if not preload:
    warm(sys.argv[5])
def say(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        data = data[os.write(ctl, data):]
def quiet_import(name):
    # import name; the problem (failure, warning, output) or None when it was silent
    cap = tempfile.TemporaryFile()
    saved = (os.dup(1), os.dup(2))
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(cap.fileno(), 1); os.dup2(cap.fileno(), 2)
    problem = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            __import__(name)
        except BaseException as e:
            problem = "import %s: %s: %s" % (name, type(e).__name__, e)
    try:
        sys.stdout.flush(); sys.stderr.flush()
    except Exception:
        pass
    os.dup2(saved[0], 1); os.dup2(saved[1], 2)
    os.close(saved[0]); os.close(saved[1])
    cap.seek(0); noise = cap.read(2000)
    if problem is None and caught:
        problem = "warning while importing %s: %s" % (name, caught[0].message)
    if problem is None and noise:
        problem = "output while importing %s: %r" % (name, noise[:200])
    return problem
def restart_with(names):
    # this interpreter again, preloading only names: a later module that failed (or warned)
    # left half-imported modules and native libraries that no fork may inherit
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
        head = len(argv) - len(sys.argv)  # argv[head] is the code, argv[head + 1:] == sys.argv[1:]
        argv[head + 2] = ",".join(names)
        argv[head + 4] = "0"  # the niceness is inherited already
        try:  # an interval timer outlives exec: its signal would end the new image before its handler
            signal_mod.setitimer(signal_mod.ITIMER_REAL, 0, 0)
        except (AttributeError, OSError, ValueError):
            pass
        os.execv(sys.executable, argv)
    except Exception:
        return False
def code_of(path):
    # the module's code: from the .pyc this interpreter's import system would use when it is
    # current (as importlib checks it: magic, timestamp flags, the source's mtime and size),
    # else compiled from the source (none under PYTHONDONTWRITEBYTECODE, or another Python's)
    import importlib.util, marshal
    st = os.stat(path)
    try:
        with open(importlib.util.cache_from_source(path), "rb") as f:
            data = f.read()
        if (data[:4] == importlib.util.MAGIC_NUMBER and data[4:8] == b"\0\0\0\0"
                and int.from_bytes(data[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(data[12:16], "little") == st.st_size & 0xFFFFFFFF):
            code = marshal.loads(data[16:])
            try:  # as the import system does: the path of the file now, not the one it was compiled at
                import _imp
                _imp._fix_co_filename(code, path)
            except Exception:
                pass
            return code
    except Exception:
        pass
    with open(path, "rb") as f:
        return compile(importlib.util.decode_source(f.read()), path, "exec", dont_inherit=True)
def importable(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False
parent = os.getppid()
def orphaned(*_):
    # stackpeel died without a word (SIGKILL): it cannot end this interpreter while it
    # imports, and no fork of it is running yet to be ended with it
    if os.getppid() != parent:
        os._exit(70)
try:  # checked 5 times a second while the preload imports (system calls restart)
    signal_mod.signal(signal_mod.SIGALRM, orphaned)
    signal_mod.siginterrupt(signal_mod.SIGALRM, False)
    signal_mod.setitimer(signal_mod.ITIMER_REAL, 0.2, 0.2)
except (AttributeError, OSError, ValueError):
    pass
problem = None
loaded = []
can_restart = os.path.exists("/proc/self/cmdline")
for i, name in enumerate(preload):
    if i and not importable(name):
        break  # not installed: nothing imported, the forks import it (and fail) themselves
    if i and not can_restart:  # tried in a throwaway child first: a failed import leaves half-imported modules
        pid = os.fork()
        if pid == 0:
            os._exit(0 if quiet_import(name) is None else 1)
        st = os.waitpid(pid, 0)[1]
        if not (os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0):
            break
    problem = quiet_import(name)
    if problem is not None:
        if i and can_restart:  # (rare: a broken or noisy later module) start over without it
            restart_with(loaded)
        break
    loaded.append(name)
if preload and problem is None:
    warm(sys.argv[5])
try:  # from here an orphaned zygote reads the end of its input and ends with its forks
    signal_mod.setitimer(signal_mod.ITIMER_REAL, 0, 0)
    signal_mod.signal(signal_mod.SIGALRM, signal_mod.SIG_DFL)
except (AttributeError, OSError, ValueError):
    pass
if hasattr(gc, "freeze"):  # 3.7+: what is imported now is never scanned (nor its pages copied) by a fork's collections
    gc.freeze()
say({"event": "ready", "clean": problem is None, "problem": problem, "preloaded": loaded})
if problem is not None:
    sys.exit(0)
buf = b""
children = set()
codes = sys._stackpeel_code = {}
try:  # a fork's exit wakes the loop at once (it polled every 20 ms: the last probe's answer waited for it)
    woke, wake = os.pipe()
    os.set_blocking(wake, False)
    signal_mod.set_wakeup_fd(wake)
    signal_mod.signal(signal_mod.SIGCHLD, lambda *_: None)
    watched = [0, woke]
except (OSError, ValueError, AttributeError):
    woke = wake = None
    watched = [0]
while True:
    r, _, _ = select.select(watched, [], [], 0.02 if children else 1.0)
    if woke is not None and woke in r:
        try:
            os.read(woke, 4096)
        except OSError:
            pass
        r = [x for x in r if x != woke]
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        children.discard(pid)
        say({"event": "exit", "pid": pid,
             "rc": -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)})
    if not r:
        continue
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        req = json.loads(line)
        for path in (os.path.join(req["argv"][0], "_common.py"), os.path.join(req["argv"][1], req["argv"][2] + ".py")):
            if path not in codes:  # loaded here once for every fork
                try:
                    codes[path] = code_of(path)
                except Exception:
                    codes[path] = None  # the fork's own import meets the problem and reports it
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.close(ctl)
                if woke is not None:  # SIGCHLD and the wakeup pipe are the zygote's: the probe gets the defaults
                    signal_mod.set_wakeup_fd(-1)
                    signal_mod.signal(signal_mod.SIGCHLD, signal_mod.SIG_DFL)
                    os.close(woke)
                    os.close(wake)
                gc.enable()  # the probe runs as in any interpreter
                fo = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                fe = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                dn = os.open(os.devnull, os.O_RDONLY)
                os.dup2(dn, 0); os.dup2(fo, 1); os.dup2(fe, 2)
                for fd in (dn, fo, fe):  # the probe starts with the descriptors a fresh process has
                    if fd > 2:
                        os.close(fd)
                os.chdir(req["cwd"])
                if req.get("tmp"):  # the probe's own temporary files go where its directory goes
                    os.environ["TMPDIR"] = req["tmp"]
                    tempfile.tempdir = None  # forget the default the zygote may have cached
                sys.argv = ["-c"] + req["argv"]
                signal_mod.signal(signal_mod.SIGINT, signal_mod.default_int_handler)
                exec(compile(boot, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
            finally:
                os._exit(70)
        children.add(pid)
        say({"event": "started", "id": req["id"], "pid": pid})
for pid in children:  # stackpeel went away: take the probes still running with us
    try:
        os.killpg(pid, 9)
    except OSError:
        pass
"""


#: standard-library modules the bootstrap and the probes import (``grep import probes/*.py``):
#: the zygote imports them before it forks, so that no probe pays for them again (about 20 ms
#: of CPU per probe, 0.5 s per run of 27 torch-free probes on the 2-core CI machine). Importing
#: a standard module changes nothing a probe observes; one that fails to import is left out
#: (the probe then meets the failure itself).
STDLIB_WARM = ("ctypes", "traceback", "importlib.util", "importlib.metadata", "json", "subprocess", "tempfile",
               "shutil", "platform", "sysconfig", "glob", "re", "stat", "contextlib", "io", "warnings", "signal",
               "select", "struct", "pwd", "grp", "types", "inspect")


class Slots:
    """At most ``n`` probes at once, taken in the order they asked (first come, first served).

    On a machine with few cores the torch-free probes share what ``import torch`` leaves
    free: twenty of them forked at once each take three times as long as alone and finish no
    sooner as a group. A probe that holds its slot longer than ``lease_s`` no longer counts,
    so one that hangs (a driver call, a compiler) delays the others by ``lease_s`` at most,
    never by its timeout."""

    def __init__(self, n: int, lease_s: float):
        self.n = max(1, int(n))
        self.lease_s = lease_s
        self._cond = threading.Condition()
        self._running: Dict[int, float] = {}   # ticket -> when it took its slot
        self._tickets = itertools.count()
        self._queue: list = []                 # tickets waiting, in the order they asked

    def _busy(self, now: float) -> list:
        return [t for t in self._running.values() if now - t < self.lease_s]

    @contextlib.contextmanager
    def take(self) -> Iterator[float]:
        """Wait for a slot; yields the seconds waited."""
        asked = time.monotonic()
        with self._cond:
            ticket = next(self._tickets)
            self._queue.append(ticket)
            while True:
                now = time.monotonic()
                busy = self._busy(now)
                if self._queue[0] == ticket and len(busy) < self.n:
                    break
                # woken by a probe that ends, or when the oldest running one outlives its lease
                self._cond.wait(max(0.005, min(busy) + self.lease_s - now) if busy else 0.05)
            self._queue.pop(0)
            self._running[ticket] = time.monotonic()
            self._cond.notify_all()  # the next in the queue may fit too
        try:
            yield self._running[ticket] - asked
        finally:
            with self._cond:
                del self._running[ticket]
                self._cond.notify_all()


class Zygote:
    """The stackpeel side of one zygote: start it, send requests, wait for forks."""

    READY_TIMEOUT = 300.0

    def __init__(self, python: str, preload: Sequence[str], env: Optional[Mapping[str, str]] = None,
                 nice: int = 0, warm: bool = True):
        """``nice``: a niceness increment for the zygote and its forks (0: none); ``warm``:
        import :data:`STDLIB_WARM` before forking (pays from about three probes on)."""
        own_nofile()  # before its pipes: stackpeel's own limit raised, the zygote's put back (probe_env)
        self.python = python
        self.preload = tuple(preload)
        self.ready = threading.Event()
        self.clean = False
        self.problem: Optional[str] = None
        self.preloaded: tuple = ()
        self.started = time.monotonic()
        #: seconds from starting the interpreter to the end of its preload
        self.import_s: Optional[float] = None
        self.lock = threading.Lock()
        self.pids: Dict[int, int] = {}              # request id -> pid
        self.exits: Dict[int, int] = {}             # pid -> rc
        self.changed = threading.Condition(self.lock)
        self.dead = False
        self.closed = False
        self.next_id = 0
        #: when set, each probe waits for one of these before it starts (and its time starts)
        self.slots: Optional[Slots] = None
        #: probes asked with ``first=True`` that have not sent their request yet: when the
        #: preload ends, the others send theirs after them (see :meth:`run_probe`)
        self.firsts = 0
        rfd, wfd = os.pipe()
        hygiene.ensure_scratch()  # a read-only or full /tmp is the target's problem, not stackpeel's (tmp24)
        self.err = tempfile.TemporaryFile()
        # an empty working directory: "-c" puts it first on sys.path, so nothing in it may shadow torch
        # (hygiene registers both, so a signal or parent death ends the zygote, its forks and this dir)
        try:
            self.cwd = hygiene.make_tempdir(prefix="stackpeel-zygote-")
            # its own temporary files (an import's scratch files, tempfile's probe of a writable
            # directory, which a kill can interrupt) go inside that directory, so they go with it;
            # the hyphen keeps the folder from being imported as a module from the first sys.path entry
            ztmp = os.path.join(self.cwd, "zygote-tmp")
            os.mkdir(ztmp, 0o700)
            zenv = probe_env(dict(hygiene.keep_target_tmp(dict(os.environ if env is None else env)), TMPDIR=ztmp))
            self.proc = hygiene.spawn(
                [python, "-c", ZYGOTE, str(wfd), ",".join(self.preload), BOOTSTRAP, str(int(nice)),
                 ",".join(STDLIB_WARM) if warm else ""],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.err, pass_fds=(wfd,),
                env=zenv, cwd=self.cwd)
        except (OSError, hygiene.Closing) as exc:
            self.cwd = getattr(self, "cwd", None)
            os.close(rfd)
            os.close(wfd)
            self.proc = None
            self.problem = f"cannot start {python}: {exc}"
            self.dead = True
            self.ready.set()
            return
        os.close(wfd)
        self.reader = threading.Thread(target=self._read, args=(rfd,), daemon=True, name="stackpeel-zygote")
        self.reader.start()

    # -- the control channel ------------------------------------------------------------------
    def _read(self, rfd: int) -> None:
        with os.fdopen(rfd, "rb") as f:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                with self.changed:
                    if msg.get("event") == "ready":
                        self.import_s = round(time.monotonic() - self.started, 3)
                        self.clean = bool(msg.get("clean"))
                        self.problem = msg.get("problem")
                        self.preloaded = tuple(msg.get("preloaded") or ())
                        self.ready.set()
                    elif msg.get("event") == "started":
                        self.pids[msg["id"]] = msg["pid"]
                    elif msg.get("event") == "exit":
                        self.exits[msg["pid"]] = msg["rc"]
                    self.changed.notify_all()
        with self.changed:
            self.dead = True
            if not self.ready.is_set():
                self.problem = self.problem or "the preloading interpreter exited before it was ready"
            self.ready.set()
            self.changed.notify_all()

    def usable(self) -> bool:
        """Wait until the preload finished; True when probes may be forked from it."""
        self.ready.wait(self.READY_TIMEOUT)
        return self.clean and not self.dead

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.cwd:
            hygiene.remove_tempdir(self.cwd)
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        hygiene.reap(self.proc)  # the zygote's group and every fork still alive under it
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with self.lock:
            pending = [pid for pid in self.pids.values() if pid not in self.exits]
        for pid in pending:  # forks still running when the run ends (never in a finished run)
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.err.close()

    # -- one probe ------------------------------------------------------------------------------
    def run_probe(self, probe: str, inp: Mapping[str, Any], timeout: float,
                  probes_dir: Optional[Path] = None, first: bool = False) -> Optional[ProbeAnswer]:
        """Run ``probe`` in a fork; None when the zygote cannot serve it (the caller spawns).
        With :attr:`slots`, the probe first waits for a slot; its time starts when it has one.
        ``first``: the probe is the run's critical path (``Check.start_first``): probes waiting
        for the preload with it send their requests after its own, so that its fork is the first
        one the zygote makes when the import ends (and the first to initialise CUDA)."""
        with probe_slots(), (self.slots.take() if self.slots is not None else contextlib.nullcontext()):
            if not first:
                return self._run_probe(probe, inp, timeout, probes_dir)
            with self.changed:
                self.firsts += 1
            sent = [False]
            try:
                return self._run_probe(probe, inp, timeout, probes_dir, sent)
            finally:
                if not sent[0]:  # it returned before its request went out
                    self._first_sent()

    def _first_sent(self) -> None:
        with self.changed:
            self.firsts -= 1
            self.changed.notify_all()

    def _after_firsts(self) -> None:
        """Wait (at most :data:`FIRST_WAIT_S`) until the probes asked with ``first`` have sent their requests."""
        end = time.monotonic() + FIRST_WAIT_S
        with self.changed:
            while self.firsts > 0 and not self.dead:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self.changed.wait(left)

    def _run_probe(self, probe: str, inp: Mapping[str, Any], timeout: float,
                   probes_dir: Optional[Path], sent: Optional[list] = None) -> Optional[ProbeAnswer]:
        start = time.monotonic()
        if self.preload and not self.ready.is_set():
            # the preload is part of the probe's time, all of it: had the probe imported torch
            # itself, it would have paid the whole import (the zygote may have started before
            # the probe was asked for: engine.start_early). A bare zygote still starting costs
            # the probe only what is left of its start, as its own interpreter would have: the
            # time before the probe was asked for is the CLI's own (measured as the whole run)
            start = min(start, self.started)
        if not self.usable():
            return None
        module, _, function = probe.rpartition(".")
        try:
            tmp = hygiene.make_tempdir("stackpeel-")
        except (hygiene.Closing, hygiene.NoTempDir):
            return None  # the caller's spawn path reports it
        try:
            tmpdir = Path(tmp)
            inp_path, out_path, out_file, err_file, workdir, probe_tmp = probe_files(tmpdir, inp)
            with self.changed:
                rid = self.next_id
                self.next_id += 1
            req = {"id": rid, "stdout": str(out_file), "stderr": str(err_file), "cwd": str(workdir),
                   "tmp": str(probe_tmp),
                   "argv": [str(PROBES_DIR), str(probes_dir or PROBES_DIR), module, function, str(inp_path),
                            str(out_path)]}
            if sent is None:
                self._after_firsts()
            try:
                with self.lock:
                    self.proc.stdin.write((json.dumps(req) + "\n").encode())
                    self.proc.stdin.flush()
            except (OSError, ValueError):
                return None
            finally:
                if sent is not None:
                    sent[0] = True
                    self._first_sent()
            deadline = start + timeout
            timed_out = False
            with self.changed:
                while rid not in self.pids and not self.dead:
                    self.changed.wait(0.5)
                pid = self.pids.get(rid)
                if pid is None:
                    return None
                while pid not in self.exits and not self.dead:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    self.changed.wait(min(left, 1.0))
            if timed_out or pid not in self.exits:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                with self.changed:
                    end = time.monotonic() + 5
                    while pid not in self.exits and not self.dead and time.monotonic() < end:
                        self.changed.wait(0.2)
                if not timed_out and pid not in self.exits:  # the zygote died under a running probe
                    return None
            else:
                try:  # leftovers the probe started in its session
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            rc = None if timed_out else self.exits.get(pid)
            return read_answer(probe, out_path, out_file, err_file, rc, timed_out, timeout,
                               time.monotonic() - start)
        finally:
            hygiene.remove_tempdir(tmp)


#: the longest a probe waits for a ``first`` probe's request to go out before it sends its own
#: (that probe is a few milliseconds from sending it: this only bounds a surprise)
FIRST_WAIT_S = 0.5

#: niceness increment of the interpreter the torch-free probes fork from, on a machine with
#: at most FEW_CORES cores: there they must not take CPU from the one import the whole run
#: waits for (``import torch`` in the other zygote). With more cores it would change nothing
#: for the run and only slow the probes down on a node busy with a training job.
TORCH_FREE_NICE = 10
FEW_CORES = 4
#: seconds a torch-free probe holds its slot (:class:`Slots`) before the next one starts anyway
SLOT_LEASE_S = 0.5


def _torch_free_nice() -> int:
    return TORCH_FREE_NICE if (os.cpu_count() or 1) <= FEW_CORES else 0


class Zygotes:
    """Two forking interpreters of the target: one that imported the preload list (torch)
    for the probes that import it anyway, and a bare one, at a lower priority, for all
    others, so that no probe pays for an interpreter start of its own (see :mod:`.zygote`).

    The caller may start them before it knows the checks (``engine.check`` does, before
    loading the registry, so the torch import starts first) and hand them to
    :func:`run_checks`, which uses them when their preload is the one the checks need and
    closes them in any case."""

    def __init__(self, python: str, preload: Sequence[str], env: Optional[Mapping[str, str]],
                 nice: Optional[int] = None, eager: bool = True, warm: bool = True):
        """``eager``: start the preloading interpreter now; otherwise when a probe first needs
        it (a repeat run whose torch probes are all reused never imports torch)."""
        self.python = python
        self.env = env
        self.preload = tuple(preload)
        self._lock = threading.Lock()
        if nice is None:
            nice = _torch_free_nice()
        self._loaded: Optional[Zygote] = None
        self._released: list = []                   # interpreters being ended (each once)
        self._closing: list = []                    # the threads ending them
        self.bare: Zygote
        if eager and self.preload:  # the critical path (import torch) starts first
            self._loaded = Zygote(python, self.preload, env=env)
        self.bare = Zygote(python, (), env=env, nice=nice if preload else 0, warm=warm)
        if nice and preload:  # few cores: the torch-free probes take turns on what the import leaves
            self.bare.slots = Slots((os.cpu_count() or 1) - 1, SLOT_LEASE_S)
        if eager:
            self._start_loaded()

    def _start_loaded(self) -> Zygote:
        with self._lock:
            if self._loaded is None:
                self._loaded = Zygote(self.python, self.preload, env=self.env) if self.preload else self.bare
            return self._loaded

    @property
    def loaded(self) -> Optional[Zygote]:
        """The preloading interpreter, once started (the bare one when nothing is preloaded)."""
        return self._loaded

    def for_probe(self, cls: Type[Check]) -> Zygote:
        return self._start_loaded() if cls.preload else self.bare

    def serves(self, python: str, preload: Sequence[str], env: Optional[Mapping[str, str]]) -> bool:
        """True when these interpreters are the ones a run of ``python`` with ``preload`` needs."""
        return self.python == python and self.env == env and self.preload == tuple(preload)

    def _end_in_background(self, zygotes: Sequence[Zygote]) -> None:
        for z in zygotes:  # an interpreter holding torch takes some 30-60 ms to die
            t = threading.Thread(target=z.close, name="stackpeel-zygote-close", daemon=True)
            t.start()
            self._closing.append(t)

    def release_loaded(self) -> None:
        """No probe will fork from the preloading interpreter again: end it in the background,
        while the last verdicts are judged and the report is built. :meth:`close` waits for it."""
        with self._lock:
            loaded = self._loaded
            if loaded is None or loaded is self.bare or loaded in self._released:
                return
            self._released.append(loaded)
        self._end_in_background([loaded])

    def release(self) -> None:
        """The run is over: end both interpreters in the background (nothing starts after);
        :meth:`close` waits for them."""
        with self._lock:
            ending = [z for z in (self._loaded, self.bare) if z is not None and z not in self._released]
            self._released.extend(ending)
            self._loaded = self.bare  # nothing starts after the end
        self._end_in_background(ending)

    def close(self) -> None:
        """End both interpreters (and every fork still under them) and wait until they are gone."""
        self.release()
        for t in list(self._closing):
            t.join(30)
