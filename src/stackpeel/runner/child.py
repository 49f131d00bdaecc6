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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from ..model import ProbeFailure
from . import hygiene

PROBES_DIR = Path(__file__).resolve().parent.parent / "probes"

#: Executed with ``python -c`` in the target interpreter (3.8+). Loads the probe module by
#: path under a private name, runs it, writes the answer atomically, then leaves with
#: os._exit so that no library's atexit hook or lingering thread can hang the child.
BOOTSTRAP = r"""
import sys, os
try:  # die with stackpeel (Linux): the kernel sends SIGKILL when the process that started us ends
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
with open(out_path + ".tmp", "w") as f:
    f.write(data)
os.replace(out_path + ".tmp", out_path)
for s in (sys.stdout, sys.stderr):
    try:
        s.flush()
    except Exception:
        pass
os._exit(0)
"""

TAIL_BYTES = 6000
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
        return failed("exit" if rc else "no-output",
                      f"probe {probe} exited with status {rc} without writing its answer")
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
