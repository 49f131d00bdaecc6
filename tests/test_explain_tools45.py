"""tools45: a launcher's summary read with its worker's traceback whatever prefix each line carries,
the other launchers' own summaries, and the worker's exit signal as a fact (issue 8 items 2 and 3).

The launchers' words are their own source's:

- torchrun: torch/distributed/elastic/multiprocessing/api.py (``failed (exitcode: %s) local_rank: %s
  (pid: %s) of binary: %s``) and errors/__init__.py (ChildFailedError's table, ``_FAILURE_FORMAT_TEMPLATE``
  ``  traceback : ${message}`` with the worker's error-file traceback indented by two spaces,
  ``.replace("\\n", "\\n  ")``; ``Signal {n} ({name}) received by PID {pid}``);
  the fixture is ``explain_helpers.TORCHRUN_CHILD_FAILED``.
- DeepSpeed: deepspeed/launcher/launch.py:325 (``{cmd} exits with return code = {last_return_code}``),
  deepspeed/utils/logging.py:63 (the record prefix ``[%(asctime)s] [%(levelname)s]
  [%(filename)s:%(lineno)d:%(funcName)s] ``).
- accelerate: src/accelerate/commands/launch.py:993 (``raise subprocess.CalledProcessError(returncode=...,
  cmd=cmd)``), worded by CPython's Lib/subprocess.py CalledProcessError.__str__ (``Command '%s' returned
  non-zero exit status %d.``, ``Command '%s' died with %r.``).
- mpirun (Open MPI 4.1): orte/mca/state/base/help-state-base.txt and errmgr/base/help-errmgr-base.txt
  ``[normal-termination-but]``; orte/tools/orterun/help-orterun.txt:129/:140 (``%s noticed that process
  rank %lu with PID %lu on node %s exited on signal %d (%s).``), :631/:635 (``%s detected that one or more
  processes exited with non-zero status``, ``Exit code:    %d``); opal/util/show_help.c:43 (the
  74-dash frame).
- srun (Slurm): src/srun/launch.c:377 (``%s: %s %s: Out Of Memory``), :388 (``Exited with exit code %d``),
  :409 (``%s: %s %s: %s%s`` with strsignal and `` (core dumped)``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import read_log_prefix, scan_text
from stackpeel.explain.render import render_text

from explain_helpers import TORCHRUN_CHILD_FAILED, WORKER_TRACEBACK, answer, codes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from explain_invariance import TRANSFORMS  # noqa: E402

UNKNOWN = "ValueError: the config wants 3 stages, got 2"
KNOWN = "RuntimeError: CUDA error: no kernel image is available for execution on the device"

#: the worker's own traceback, as every log below starts
WORKER = WORKER_TRACEBACK


def torchrun(child: str = UNKNOWN, status: object = 1) -> str:
    return TORCHRUN_CHILD_FAILED.format(child=child, status=status)


def each_line(prefix: str, text: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


# ------------------------------------------------------------------ 1. every line prefixed

#: bench/explain_invariance.py's transforms that keep every line (the cuts remove the evidence)
PASTES = sorted(n for n in TRANSFORMS if not n.startswith("cut-"))
#: prefixes the brief names that are not among the bench's: a relay's INFO record, DeepSpeed's record
#: prefix, torchrun --tee's, a Ray Train worker's, mpirun's --tag-output, srun --label's, an indented block
PREFIXES = {
    "relayed-info-record": "2024-05-01 10:00:00,123 - INFO - ",
    "deepspeed-record": "[2024-05-01 10:00:00,123] [INFO] [launch.py:319:main] ",
    "tee": "[default0]:",
    "ray-train": "(RayTrainWorker pid=123) ",
    "mpirun-tag": "[1,0]<stderr>:",
    "srun-label": "0: ",
    "indent": "    ",
    "tab": "\t",
}


def _reads_the_workers_exception(expl, exc_type: str) -> None:
    assert expl.last_exception is not None and expl.last_exception.type == exc_type
    assert expl.worker_exception_line == expl.last_exception.line
    assert expl.launcher_exception is not None
    assert expl.launcher_exception.type.endswith("ChildFailedError")


@pytest.mark.parametrize("paste", PASTES)
def test_every_paste_of_the_bench_reads_the_workers_traceback(paste):
    expl = explain_text(TRANSFORMS[paste][1](torchrun()))
    assert not expl.candidates   # Unknown error: the summary's could-be do not stand for a ValueError
    _reads_the_workers_exception(expl, "ValueError")
    known = explain_text(TRANSFORMS[paste][1](torchrun(KNOWN)))
    assert [c.code for c in known.candidates][:1] == ["torch-arch-not-supported"]
    _reads_the_workers_exception(known, "RuntimeError")


@pytest.mark.parametrize("name", sorted(PREFIXES))
def test_every_prefix_reads_the_workers_traceback(name):
    expl = explain_text(each_line(PREFIXES[name], torchrun()))
    assert not expl.candidates
    _reads_the_workers_exception(expl, "ValueError")
    assert "3 stages" in expl.last_exception.message
    known = explain_text(each_line(PREFIXES[name], torchrun(KNOWN)))
    assert [c.code for c in known.candidates][:1] == ["torch-arch-not-supported"]


@pytest.mark.parametrize("name", ["tee", "ray-train", "mpirun-tag", "srun-label", "indent"])
def test_the_workers_lines_alone_prefixed(name):
    # the worker's stream prefixed, the launcher's own lines as it prints them
    lines = torchrun().split("\n")
    text = "\n".join((PREFIXES[name] + ln) if i < 6 else ln for i, ln in enumerate(lines))
    expl = explain_text(text)
    assert not expl.candidates
    _reads_the_workers_exception(expl, "ValueError")


def test_an_indented_traceback_has_its_exception_line():
    r = scan_text(each_line("    ", WORKER.format(child=UNKNOWN)))
    assert [(tb.start, tb.exc_line, tb.exc_type) for tb in r.tracebacks] == [(1, 6, "ValueError")]
    # the frames' source lines, deeper than the traceback's own indentation, are no exception line
    deep = '    Traceback (most recent call last):\n      File "a.py", line 3, in f\n        KeyError: in source\n    KeyError: \'x\'\n'
    assert [(tb.exc_line, tb.exc_type) for tb in scan_text(deep).tracebacks] == [(4, "KeyError")]


def test_the_root_cause_tables_traceback_is_read():
    # a worker decorated with @record: the table holds its traceback, indented by two spaces
    tb = 'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    main()\n' + UNKNOWN
    text = torchrun().replace(
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "  traceback : " + tb.replace("\n", "\n  "))
    r = scan_text(text)
    table = [t for t in r.tracebacks if t.start > 13]
    assert [(t.exc_type, t.message.split("\n")[0]) for t in table] == [("ValueError", "the config wants 3 stages, got 2")]
    expl = explain_text(text)
    assert not expl.candidates
    assert expl.worker_exception_line == 6


def test_a_relayed_record_keeps_the_level_of_the_line_it_relays():
    relayed = "2024-05-01 10:00:00,123 - INFO - ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3\n"
    assert [h.entry for h in scan_text(relayed).hits] == ["launcher-child-failed"]
    assert codes(relayed) == ["launcher-worker-failed"]
    # negative control: an INFO record whose message carries no level of its own stays quiet
    quiet = relayed.replace("ERROR:torch", "torch")
    assert [h.entry for h in scan_text(quiet).hits] == []


def test_deepspeeds_record_prefix_is_a_logger_prefix():
    end, level, stamped = read_log_prefix("[2024-05-01 10:00:34,591] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3'] exits")
    assert stamped and level == "ERROR"
    assert "[2024-05-01 10:00:34,591] [ERROR] [launch.py:325:sigkill_handler] "[end:] == ""
    # a bracketed list after the prefix is the message, not a third bracket of the prefix
    text = "[2024-05-01 10:00:34,591] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u'] exits"
    assert text[read_log_prefix(text)[0]:].startswith("['/usr/bin/python3'")


# ------------------------------------------------------------------ 2. the other launchers' summaries

DEEPSPEED = """[2024-05-01 10:00:34,590] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 12345
[2024-05-01 10:00:34,591] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=0', '--deepspeed', 'ds.json'] exits with return code = {status}
"""
ACCELERATE = """Traceback (most recent call last):
  File "/usr/local/bin/accelerate", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 993, in simple_launcher
    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)
subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', '--config', 'a.yaml']' {status}
"""
FRAME = "-" * 74
MPIRUN_EXIT = f"""{FRAME}
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
{FRAME}
{FRAME}
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[56671,1],0]
  Exit code:    {{status}}
{FRAME}
"""
MPIRUN_SIGNAL = f"""{FRAME}
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
{FRAME}
{FRAME}
mpirun noticed that process rank 0 with PID 1234 on node gpu-node-3 exited on signal {{status}}.
{FRAME}
"""
SRUN = """srun: error: gpu-node-3: task 0: {status}
srun: launch/slurm: _step_signal: Terminating StepId=4242.0
"""

#: (launcher, the summary, a plain exit status, a SIGKILL, a SIGSEGV as each words them)
LAUNCHERS = {
    "deepspeed": (DEEPSPEED, "1", "-9", "-11"),
    "accelerate": (ACCELERATE, "returned non-zero exit status 1.", "died with <Signals.SIGKILL: 9>.",
                   "died with <Signals.SIGSEGV: 11>."),
    "mpirun-exit": (MPIRUN_EXIT, "1", "137", None),
    "mpirun-signal": (MPIRUN_SIGNAL, None, "9 (Killed)", "11 (Segmentation fault)"),
    "srun": (SRUN, "Exited with exit code 1", "Killed", "Segmentation fault (core dumped)"),
}
#: the codes the worker's "no kernel image" line names (torch's arch list, or an extension's)
NO_KERNEL_IMAGE = ("torch-arch-not-supported", "extension-arch-missing")
PLAIN = sorted(k for k, v in LAUNCHERS.items() if v[1])
SIGKILL = sorted(LAUNCHERS)
SIGSEGV = sorted(k for k, v in LAUNCHERS.items() if v[3])


def signal_of(text: str):
    """The worker_signal fact of ``text`` (a log's line), or None."""
    return answer(text + "\n")["facts"].get("other", {}).get("worker_signal")


def summary(launcher: str, which: int) -> str:
    tpl, *statuses = LAUNCHERS[launcher]
    return tpl.format(status=statuses[which])


@pytest.mark.parametrize("launcher", PLAIN)
def test_a_plain_status_after_an_unknown_worker_traceback_is_an_unknown_error(launcher):
    text = WORKER.format(child=UNKNOWN) + summary(launcher, 0)
    expl = explain_text(text)
    assert not expl.candidates   # not launcher-worker-failed, nor the OOM killer its could-be names
    assert expl.last_exception.type == "ValueError"
    assert expl.last_exception.message == "the config wants 3 stages, got 2"   # the summary is not its message


@pytest.mark.parametrize("launcher", PLAIN)
def test_a_plain_status_alone_is_the_launchers_report(launcher):
    assert codes(summary(launcher, 0)) == ["launcher-worker-failed"]


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_a_worker_traceback_naming_a_cause_keeps_it_first(launcher, which):
    # negative control: whatever status the launcher reports, a cause the worker's traceback names
    # stays first (the SIGKILL signatures older than this session, torch elastic's and DeepSpeed's
    # '-9' and CalledProcessError's SIGKILL, put host-oom-killed first: left as they were)
    if LAUNCHERS[launcher][which + 1] is None:
        pytest.skip("no such status in this launcher's words")
    if which == 1 and launcher in ("deepspeed", "accelerate"):
        pytest.skip("an older signature names host-oom-killed on this line (tools39)")
    # (DeepSpeed's words are a clue that an extension was built: the same line is then extension-arch-missing)
    assert codes(WORKER.format(child=KNOWN) + summary(launcher, which))[0] in NO_KERNEL_IMAGE


def test_accelerates_summary_names_the_workers_exception():
    expl = explain_text(WORKER.format(child=UNKNOWN) + summary("accelerate", 0))
    assert expl.worker_exception_line == 6
    assert expl.launcher_exception.type == "subprocess.CalledProcessError"
    assert "The worker's exception (line 6; the launcher's CalledProcessError at line" in " ".join(render_text(expl).split())


@pytest.mark.parametrize("launcher", SIGSEGV)
def test_a_segfault_names_the_native_crash_causes(launcher):
    d = answer(summary(launcher, 2))
    first = d["candidates"][0]
    assert first["code"] == "launcher-worker-failed"
    assert first["could_be"][:2] == ["library-loaded-twice", "extension-torch-mismatch"]
    assert "host-oom-killed" not in [c["code"] for c in d["candidates"]]


@pytest.mark.parametrize("line", [
    "srun: error: gpu-node-3: task 0: Bus error",
    "mpirun noticed that process rank 1 with PID 99 on node n2 exited on signal 7 (Bus error).",
])
def test_a_bus_error_names_dev_shm(line):
    d = answer(line + "\n")
    assert d["candidates"][0]["code"] == "launcher-worker-failed"
    assert d["candidates"][0]["could_be"][:2] == ["dataloader-shm-too-small", "nccl-shm-too-small"]


def test_sruns_out_of_memory_is_the_oom_killer():
    assert codes(summary("srun", 0).replace("Exited with exit code 1", "Out Of Memory"))[0] == "host-oom-killed"
    assert codes("srun: error: gpu-node-3: tasks 0-3: Out Of Memory\n")[0] == "host-oom-killed"


def test_a_ray_actor_death_is_not_read_as_one_signal():
    # Ray's own message names three causes (src/ray/raylet/node_manager.cc HandleClientConnectionError:
    # the OOM killer, `ray stop --force`, SIGSEGV): no worker_signal fact
    text = ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit "
            "detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some "
            "potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. "
            "(2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other "
            "unexpected errors.\n")
    assert signal_of(text.rstrip("\n")) is None


# ------------------------------------------------------------------ 3. the exit signal as a fact


@pytest.mark.parametrize("launcher", ["mpirun-exit", "mpirun-signal", "srun"])
def test_sigkill_narrows_the_launchers_report_to_the_oom_killer(launcher):
    d = answer(summary(launcher, 1))
    assert [c["code"] for c in d["candidates"]][:2] == ["host-oom-killed", "launcher-worker-failed"]
    first = d["candidates"][0]
    assert first["basis"] == "facts" and first["explains"] == ["launcher-worker-failed"]
    assert [f["rule"] for f in d["facts"]["findings"]] == ["state:launcher-worker-sigkill"]


@pytest.mark.parametrize("text, signal", [
    ("  exitcode  : -9 (pid: 1234)", "SIGKILL"),
    ("Signal 9 (SIGKILL) received by PID 1234", "SIGKILL"),
    ("['/usr/bin/python3', 'train.py'] exits with return code = -9", "SIGKILL"),
    ("subprocess.CalledProcessError: Command '['python3', 'a.py']' returned non-zero exit status 137.", "SIGKILL"),
    ("subprocess.CalledProcessError: Command '['python3', 'a.py']' died with <Signals.SIGSEGV: 11>.", "SIGSEGV"),
    ("mpirun noticed that process rank 0 with PID 1 on node n1 exited on signal 6 (Aborted).", "Aborted"),
    ("srun: error: n1: task 3: Segmentation fault (core dumped)", "Segmentation fault"),
])
def test_the_worker_signal_fact(text, signal):
    assert signal_of(text) == signal


@pytest.mark.parametrize("text", [
    "subprocess.CalledProcessError: Command '['python3', 'a.py']' returned non-zero exit status 1.",
    "srun: error: n1: task 0: Exited with exit code 2",
    "make: *** [Makefile:5: all] Error 137",               # make's, no launcher's worker
    "docker: container exited (137)",
    "The process was Killed by the user",
])
def test_no_worker_signal_where_no_launcher_reports_one(text):
    assert signal_of(text) is None


def test_sigterm_names_no_cause():
    # the launcher's own signal to the ranks left after another failed (torchrun, mpirun): no narrowing
    d = answer("mpirun noticed that process rank 1 with PID 99 on node n2 exited on signal 15 (Terminated).\n")
    assert d["facts"]["other"]["worker_signal"] == "Terminated"
    assert "host-oom-killed" not in [c["code"] for c in d["candidates"]]
