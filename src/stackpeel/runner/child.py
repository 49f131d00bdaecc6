"""Run one probe in a child of the target interpreter, and never trust it.

Every subprocess rule of stackpeel lives here: argv lists (never a shell), the
child's own session so a timeout kills its whole process group, stdout and stderr
spooled to files (a child that prints megabytes costs disk, not memory), and the
answer read from a file the child writes last, so junk on stdout cannot be mistaken
for a result.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from ..model import ProbeFailure
from . import hygiene

PROBES_DIR = Path(__file__).resolve().parent.parent / "probes"

#: Executed with ``python -c`` in the target interpreter (3.8+). Loads the probe module by
#: path under a private name, runs it, writes the answer atomically, then leaves with
#: os._exit so that no library's atexit hook or lingering thread can hang the child.
#: The first lines of every program stackpeel starts in the target (this bootstrap, the zygote):
#: the user's limits back (open files, file size: :data:`OWN_LIMITS`), before anything is imported
#: (stackpeel raised its own, never a probe's: :class:`OwnLimit`, :func:`probe_env`)
#: (environment variable, resource name) of each limit, the prologue's and :data:`OWN_LIMITS`'
LIMIT_VARS = (("STACKPEEL_NOFILE", "RLIMIT_NOFILE"), ("STACKPEEL_FSIZE", "RLIMIT_FSIZE"))
LIMITS_PROLOGUE = r"""
import sys, os
for _var, _which in %r:
    _limit = os.environ.pop(_var, "")
    if _limit:
        try:
            import resource
            resource.setrlimit(getattr(resource, _which), tuple(int(x) for x in _limit.split(",")))
        except Exception:
            pass
""" % (LIMIT_VARS,)
BOOTSTRAP = LIMITS_PROLOGUE + r"""try:  # die with stackpeel (Linux): the kernel sends SIGKILL when the process
    # that started us ends
    import ctypes
    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)
    os.kill(int(os.environ.get("STACKPEEL_PARENT_PID") or 0) or os.getppid(), 0)
except ProcessLookupError:
    os._exit(70)  # stackpeel ended before the request took effect
except Exception:
    pass
import json, traceback, importlib.util
common_dir, d, mod, fn, inp_path, out_path = sys.argv[1:7]
def _load(name, where=None):
    path = os.path.join(where or d, name + ".py")
    spec = importlib.util.spec_from_file_location("_stackpeel_probe_" + name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    code = getattr(sys, "_stackpeel_code", {}).get(path)  # compiled once by the zygote we forked from
    if code is not None:
        exec(code, m.__dict__)
    else:
        spec.loader.exec_module(m)
    return m
try:
    _load("_common", common_dir)
    with open(inp_path) as f:
        inp = json.load(f)
    res = {"ok": True, "facts": getattr(_load(mod), fn)(inp)}
except BaseException as e:
    res = {"ok": False, "type": type(e).__name__, "message": str(e)[:4000], "traceback": traceback.format_exc()[-8000:]}
try:
    data = json.dumps(res, default=repr)
except Exception as e:
    data = json.dumps({"ok": False, "type": type(e).__name__, "message": "facts not serialisable: %s" % e,
                       "traceback": ""})
try:
    try:
        f = open(out_path + ".tmp", "w")
    except OSError as e:
        if e.errno != 24:  # EMFILE: the probe used every descriptor its limit allows, and holds them
            raise
        os.closerange(3, 1 << 16)  # it is done: give them back, so that its answer still comes
        f = open(out_path + ".tmp", "w")
    with f:
        f.write(data)
    os.replace(out_path + ".tmp", out_path)
except BaseException as e:
    try:
        os.write(2, ("\nstackpeel: the probe's answer could not be written: %s: %s\n" % (type(e).__name__, e)).encode())
    except Exception:
        pass
    os._exit(71)
for s in (sys.stdout, sys.stderr):
    try:
        s.flush()
    except Exception:
        pass
os._exit(0)
"""

#: Exit statuses of the bootstrap and the zygote's forks (sysexits.h), read by :func:`read_answer`:
#: 70 (EX_SOFTWARE) stackpeel ended before the probe started, or a fork's setup failed;
#: 71 (EX_OSERR) the probe ran but its answer could not be written (the reason is on its stderr).
EXIT_ORPHANED, EXIT_NO_ANSWER = 70, 71

TAIL_BYTES = 6000

# ---------------------------------------------------------------- stackpeel's own descriptors
#: Descriptors stackpeel holds for one probe at a time (a spawned one: its stdout and stderr
#: files, /dev/null, Popen's error pipe; a forked one: its input, answer and output files).
DESCRIPTORS_PER_PROBE = 6
#: kept free for everything else the run opens (the cache, the report, a module's import)
DESCRIPTORS_SPARE = 8
_lock = threading.Lock()
_probe_slots: Optional[threading.BoundedSemaphore] = None


class OwnLimit:
    """One resource limit of the user's shell that stackpeel raises for itself and gives every probe
    back: read once per process (:meth:`user`); after :meth:`allow_raise` (only where stackpeel is
    the program: the CLI; a library caller such as the pytest plugin or the Python API keeps its
    process's limit, or its tests would run under a limit their shell never set), the first read
    also raises stackpeel's own soft limit to the hard one, so that a low limit does not break
    stackpeel before it can report it. :func:`probe_env` hands the user's limit to each probe in
    ``env_var``, which :data:`LIMITS_PROLOGUE` applies before anything else."""

    def __init__(self, env_var: str, which: str, unlimited_hard_to: Optional[int] = None,
                 unlimited_as_minus_one: bool = False) -> None:
        self.which = which  # the name in the resource module
        self.env_var = env_var
        #: the soft limit to raise to where the hard one is unlimited (None: unlimited too)
        self.unlimited_hard_to = unlimited_hard_to
        #: whether :meth:`user` spells RLIM_INFINITY as -1 (on Linux RLIM_INFINITY is -1 already)
        self.unlimited_as_minus_one = unlimited_as_minus_one
        self.may_raise = False
        self.read: Optional[Tuple[int, int]] = None  # (soft, hard) as getrlimit gave it; None: no limit

    def allow_raise(self) -> None:
        self.may_raise = True

    def user(self) -> Tuple[int, int]:
        """The user's (soft, hard) limit; (-1, -1) where the platform has none. Once per process;
        later calls return the same."""
        with _lock:
            if self.read is None:
                self.read = (-1, -1)
                try:
                    import resource
                    which = getattr(resource, self.which)
                    soft, hard = resource.getrlimit(which)
                    self.read = (soft, hard)
                    inf = resource.RLIM_INFINITY
                    want = hard if hard != inf or self.unlimited_hard_to is None else self.unlimited_hard_to
                    if self.may_raise and soft != inf and (want == inf or want > soft):
                        resource.setrlimit(which, (want, hard))
                except (ImportError, AttributeError, OSError, ValueError):
                    pass
            if not self.unlimited_as_minus_one:
                return self.read
            try:
                import resource
                inf = resource.RLIM_INFINITY
            except ImportError:
                return self.read
            return tuple(-1 if x == inf else x for x in self.read)  # type: ignore[return-value]

    def note(self, env: Dict[str, str]) -> None:
        """Put the user's limit in ``env`` where stackpeel's own differs from it."""
        self.user()
        soft, hard = self.read  # type: ignore[misc]
        try:
            import resource
            if (soft, hard) != (-1, -1) and soft != resource.RLIM_INFINITY and \
                    resource.getrlimit(getattr(resource, self.which)) != (soft, hard):
                env[self.env_var] = "%d,%d" % (soft, hard)
        except (ImportError, AttributeError, OSError, ValueError):
            pass


#: the open-files limit (``ulimit -n``): where the hard limit is unlimited, stackpeel's own soft
#: limit goes to 65536 (Linux refuses an unlimited soft one past fs.nr_open)
NOFILE = OwnLimit(*LIMIT_VARS[0], unlimited_hard_to=1 << 16)
#: the file-size limit (``ulimit -f``), in bytes: so that a low one does not cut stackpeel's report,
#: cache or probe inputs short (chk29: a report over `ulimit -Sf 64` was 'File too large')
FSIZE = OwnLimit(*LIMIT_VARS[1], unlimited_as_minus_one=True)
OWN_LIMITS = (NOFILE, FSIZE)


def raise_own_nofile() -> None:
    """Let :func:`own_nofile` raise this process's soft open-files limit: the CLI calls it when
    stackpeel is the program (:class:`OwnLimit`)."""
    NOFILE.allow_raise()


def own_nofile() -> Tuple[int, int]:
    """The user's open-files limit (soft, hard), which every probe gets back (:func:`probe_env`):
    check measures the user's environment, not stackpeel's; the first call raises stackpeel's own
    after :func:`raise_own_nofile` (:class:`OwnLimit`)."""
    return NOFILE.user()


def raise_own_fsize() -> None:
    """Let :func:`own_fsize` raise this process's soft file-size limit (as :func:`raise_own_nofile`)."""
    FSIZE.allow_raise()


def own_fsize() -> Tuple[int, int]:
    """The user's file-size limit (RLIMIT_FSIZE, ``ulimit -f``) as (soft, hard) bytes, -1 where
    unlimited; (-1, -1) where the platform has none (:class:`OwnLimit`)."""
    return FSIZE.user()


def probe_env(env: Dict[str, str]) -> Dict[str, str]:
    """``env`` (a probe's or a zygote's, changed in place) told to put the user's limits back
    (the bootstrap and the zygote apply them before anything else: :data:`LIMITS_PROLOGUE`)."""
    for limit in OWN_LIMITS:
        env.pop(limit.env_var, None)  # never a value the user's environment carried in
    for limit in OWN_LIMITS:
        limit.note(env)
    return env


def probe_slots() -> threading.BoundedSemaphore:
    """How many probes stackpeel may have under way at once with the descriptors its own limit
    leaves (a hard limit of 20 leaves one at a time; from 6 * 64 + what is open, no bound worth
    the name). Probes beyond that wait their turn instead of failing with EMFILE in stackpeel."""
    global _probe_slots
    with _lock:
        if _probe_slots is None:
            try:
                import resource
                soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                used = len(os.listdir("/proc/self/fd"))
            except (ImportError, OSError, ValueError):
                soft, used = -1, 0
            if soft < 0:
                n = 64
            else:
                n = max(1, min(64, (soft - used - DESCRIPTORS_SPARE) // DESCRIPTORS_PER_PROBE))
            _probe_slots = threading.BoundedSemaphore(n)
        return _probe_slots
MAX_ANSWER_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class ProbeAnswer:
    facts: Optional[Dict[str, Any]]
    failure: Optional[ProbeFailure]
    duration_s: float
    stdout_tail: str = ""
    stderr_tail: str = ""


def _tail(path: Path) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if size > TAIL_BYTES:
                f.seek(size - TAIL_BYTES)
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if size > TAIL_BYTES:
        text = f"[... {size - TAIL_BYTES} bytes cut ...]" + text
    return text


def run_probe(python: str, probe: str, inp: Mapping[str, Any], timeout: float,
              env: Optional[Mapping[str, str]] = None, probes_dir: Optional[Path] = None) -> ProbeAnswer:
    """Run ``probe`` ("module.function") under ``python`` with ``inp`` as its input."""
    own_nofile()
    with probe_slots():
        return _run_probe(python, probe, inp, timeout, env, probes_dir)


def _run_probe(python: str, probe: str, inp: Mapping[str, Any], timeout: float,
               env: Optional[Mapping[str, str]], probes_dir: Optional[Path]) -> ProbeAnswer:
    module, _, function = probe.rpartition(".")
    start = time.monotonic()
    try:
        tmp = hygiene.make_tempdir("stackpeel-")
    except hygiene.Closing:
        return ProbeAnswer(None, ProbeFailure("spawn", detail="not started: stackpeel is shutting down"), 0.0)
    except hygiene.NoTempDir as exc:
        return ProbeAnswer(None, ProbeFailure("spawn", detail=f"cannot start probe {probe}: {exc.strerror}"), 0.0)
    try:
        return _run_in(Path(tmp), python, probe, module, function, inp, timeout, env, probes_dir, start)
    finally:
        hygiene.remove_tempdir(tmp)


def probe_files(tmpdir: Path, inp: Mapping[str, Any]) -> Tuple[Path, Path, Path, Path, Path, Path]:
    """A probe run's files in its private directory ``tmpdir`` (the input written, the working
    and temporary directories made): input, answer, stdout, stderr, working directory, tmp.
    One layout for a spawned child and a zygote's fork."""
    inp_path, out_path = tmpdir / "input.json", tmpdir / "answer.json"
    out_file, err_file = tmpdir / "stdout", tmpdir / "stderr"
    workdir, probe_tmp = tmpdir / "cwd", tmpdir / "tmp"
    workdir.mkdir()
    probe_tmp.mkdir()
    inp_path.write_text(json.dumps(inp))
    return inp_path, out_path, out_file, err_file, workdir, probe_tmp


def _run_in(tmpdir: Path, python: str, probe: str, module: str, function: str, inp: Mapping[str, Any],
            timeout: float, env: Optional[Mapping[str, str]], probes_dir: Optional[Path],
            start: float) -> ProbeAnswer:
    inp_path, out_path, out_file, err_file, workdir, probe_tmp = probe_files(tmpdir, inp)
    argv = [python, "-c", BOOTSTRAP, str(PROBES_DIR), str(probes_dir or PROBES_DIR), module, function,
            str(inp_path), str(out_path)]
    # the probe's own temporary files (compiler runs, kernel builds) go inside this directory,
    # so they go when it goes, even when the probe is killed
    cenv = dict(os.environ if env is None else env)
    hygiene.keep_target_tmp(cenv)  # the target's TMPDIR and cwd, which the probe's replace (tmp24)
    cenv["TMPDIR"] = str(probe_tmp)
    cenv["STACKPEEL_PARENT_PID"] = str(os.getpid())
    probe_env(cenv)
    timed_out = False
    try:
        with open(out_file, "wb") as fo, open(err_file, "wb") as fe:
            proc = hygiene.spawn(argv, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, cwd=workdir, env=cenv)
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                hygiene.reap(proc)
                rc = proc.wait()
            finally:
                hygiene.reap(proc)  # leftovers the probe started in its group
    except hygiene.Closing:
        return ProbeAnswer(None, ProbeFailure("spawn", detail="not started: stackpeel is shutting down"),
                           time.monotonic() - start)
    except OSError as exc:
        return ProbeAnswer(None, ProbeFailure("spawn", detail=f"cannot start {python}: {exc}"),
                           time.monotonic() - start)
    return read_answer(probe, out_path, out_file, err_file, rc, timed_out, timeout, time.monotonic() - start)


def read_answer(probe: str, out_path: Path, out_file: Path, err_file: Path, rc: Optional[int], timed_out: bool,
                timeout: float, duration: float) -> ProbeAnswer:
    """A finished probe's answer file, exit status and output, read into a :class:`ProbeAnswer`
    (or the failure that explains why there is no answer). Shared by spawned and forked probes."""
    so, se = _tail(out_file), _tail(err_file)

    def failed(reason: str, detail: str, exit_code: Optional[int] = rc, sig: Optional[int] = None) -> ProbeAnswer:
        return ProbeAnswer(None, ProbeFailure(reason, exit_code=exit_code, signal=sig, timed_out=timed_out,
                                              stdout_tail=so, stderr_tail=se, detail=detail), duration, so, se)

    if timed_out:
        return failed("timeout", f"probe {probe} did not finish within {timeout:g} s and was killed", None)
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return failed("signal", f"probe {probe} was killed by {name}", None, -rc)
    if not out_path.exists():
        why = ""
        if rc == EXIT_NO_ANSWER:  # the bootstrap's own words, last on the probe's stderr
            head = "stackpeel: the probe's answer could not be written: "
            why = next((": " + ln[len(head):] for ln in reversed(se.splitlines()) if ln.startswith(head)), "")
        return failed("exit" if rc else "no-output",
                      f"probe {probe} exited with status {rc} without writing its answer{why}")
    if out_path.stat().st_size > MAX_ANSWER_BYTES:
        return failed("bad-output", f"probe {probe} wrote an answer over {MAX_ANSWER_BYTES} bytes")
    try:
        answer = json.loads(out_path.read_text(encoding="utf-8", errors="replace"))
        ok = answer["ok"]
    except (ValueError, KeyError, TypeError) as exc:
        return failed("bad-output", f"probe {probe} wrote an unreadable answer: {exc}")
    if not ok:
        detail = f"{answer.get('type')}: {answer.get('message')}\n{answer.get('traceback', '')}".strip()
        return failed("probe-exception", detail)
    facts = answer.get("facts")
    if not isinstance(facts, dict):
        return failed("bad-output", f"probe {probe} returned {type(facts).__name__}, not a dict of facts")
    return ProbeAnswer(facts, None, duration, so, se)
