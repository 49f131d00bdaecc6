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
#: the open-files and file-size limits of the user's shell back, before anything is imported
#: (stackpeel raised its own, never a probe's: :func:`own_nofile`, :func:`own_fsize`, :func:`probe_env`)
NOFILE_PROLOGUE = r"""
import sys, os
for _var, _which in (("STACKPEEL_NOFILE", "RLIMIT_NOFILE"), ("STACKPEEL_FSIZE", "RLIMIT_FSIZE")):
    _limit = os.environ.pop(_var, "")
    if _limit:
        try:
            import resource
            resource.setrlimit(getattr(resource, _which), tuple(int(x) for x in _limit.split(",")))
        except Exception:
            pass
"""
BOOTSTRAP = NOFILE_PROLOGUE + r"""try:  # die with stackpeel (Linux): the kernel sends SIGKILL when the process that started us ends
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
    data = json.dumps({"ok": False, "type": type(e).__name__, "message": "facts not serialisable: %s" % e, "traceback": ""})
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
_nofile_lock = threading.Lock()
_user_nofile: Optional[Tuple[int, int]] = None  # (soft, hard) of the user's shell, once read
_user_fsize: Optional[Tuple[int, int]] = None  # the same for RLIMIT_FSIZE, -1 for unlimited
_probe_slots: Optional[threading.BoundedSemaphore] = None
_may_raise = False  # only where stackpeel is the program (raise_own_nofile): never in a caller's process
_may_raise_fsize = False  # the same for the file-size limit (raise_own_fsize)


def raise_own_nofile() -> None:
    """Let :func:`own_nofile` raise this process's soft open-files limit: the CLI calls it when
    stackpeel is the program. A library caller (the pytest plugin, the Python API) keeps its
    process's limit as it is (its tests would otherwise run under a limit their shell never set)."""
    global _may_raise
    _may_raise = True


def own_nofile() -> Tuple[int, int]:
    """Raise stackpeel's own soft open-files limit (``ulimit -n``) to its hard limit, as many
    tools do, so that a low limit does not break stackpeel before it can report it (only after
    :func:`raise_own_nofile`); return the user's limit (soft, hard), which every probe gets back
    (:func:`probe_env`): check measures the user's environment, not stackpeel's. Once per
    process; later calls return the same."""
    global _user_nofile
    with _nofile_lock:
        if _user_nofile is None:
            try:
                import resource
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                _user_nofile = (soft, hard)
                want = hard if hard != resource.RLIM_INFINITY else 1 << 16
                if _may_raise and soft != resource.RLIM_INFINITY and want > soft:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            except (ImportError, OSError, ValueError):
                _user_nofile = _user_nofile or (-1, -1)
        return _user_nofile


def raise_own_fsize() -> None:
    """Let :func:`own_fsize` raise this process's soft file-size limit: the CLI calls it when
    stackpeel is the program (a library caller keeps its process's limit, as with
    :func:`raise_own_nofile`)."""
    global _may_raise_fsize
    _may_raise_fsize = True


def own_fsize() -> Tuple[int, int]:
    """The file-size limit (RLIMIT_FSIZE, ``ulimit -f``) of the user's shell, which every probe runs
    under (:func:`probe_env`), as (soft, hard) bytes, -1 where unlimited; (-1, -1) where the platform
    has none. After :func:`raise_own_fsize`, stackpeel's own soft limit is raised to the hard one
    on the first call, so that a low limit does not cut its report, cache or probe inputs short
    (chk29: a report over `ulimit -Sf 64` was 'File too large'). Once per process."""
    global _user_fsize
    with _nofile_lock:
        if _user_fsize is None:
            try:
                import resource
                soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
                _user_fsize = (-1 if soft == resource.RLIM_INFINITY else soft,
                               -1 if hard == resource.RLIM_INFINITY else hard)
                if _may_raise_fsize and soft != resource.RLIM_INFINITY and (
                        hard == resource.RLIM_INFINITY or hard > soft):
                    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
            except (ImportError, AttributeError, OSError, ValueError):
                _user_fsize = _user_fsize or (-1, -1)
        return _user_fsize


def probe_env(env: Dict[str, str]) -> Dict[str, str]:
    """``env`` (a probe's or a zygote's, changed in place) told to put the user's open-files
    limit back (the bootstrap and the zygote apply ``STACKPEEL_NOFILE`` before anything else)."""
    user = own_nofile()
    env.pop("STACKPEEL_NOFILE", None)  # never a value the user's environment carried in
    env.pop("STACKPEEL_FSIZE", None)
    try:
        import resource
        if user[0] >= 0 and resource.getrlimit(resource.RLIMIT_NOFILE) != user:
            env["STACKPEEL_NOFILE"] = "%d,%d" % user
        fsize = own_fsize()
        want = tuple(resource.RLIM_INFINITY if x < 0 else x for x in fsize)
        if fsize != (-1, -1) and resource.getrlimit(resource.RLIMIT_FSIZE) != want:
            env["STACKPEEL_FSIZE"] = "%d,%d" % want
    except (ImportError, AttributeError, OSError, ValueError):
        pass
    return env


def probe_slots() -> threading.BoundedSemaphore:
    """How many probes stackpeel may have under way at once with the descriptors its own limit
    leaves (a hard limit of 20 leaves one at a time; from 6 * 64 + what is open, no bound worth
    the name). Probes beyond that wait their turn instead of failing with EMFILE in stackpeel."""
    global _probe_slots
    with _nofile_lock:
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


def _run_in(tmpdir: Path, python: str, probe: str, module: str, function: str, inp: Mapping[str, Any],
            timeout: float, env: Optional[Mapping[str, str]], probes_dir: Optional[Path],
            start: float) -> ProbeAnswer:
    inp_path, out_path = tmpdir / "input.json", tmpdir / "answer.json"
    out_file, err_file = tmpdir / "stdout", tmpdir / "stderr"
    workdir, probe_tmp = tmpdir / "cwd", tmpdir / "tmp"
    workdir.mkdir()
    probe_tmp.mkdir()
    inp_path.write_text(json.dumps(inp))
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
