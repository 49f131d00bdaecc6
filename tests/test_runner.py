"""The runner against real misbehaving children: hangs, crashes, junk, floods."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from stackpeel.checks.base import Check
from stackpeel.diagnosis import diagnose
from stackpeel.model import Report, Status
from stackpeel.runner import run_checks, run_probe

FAULTS = str(Path(__file__).parent / "data" / "fault_probes")
SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "report.schema.json").read_text())
HOST = {"pkg_manager": "apt", "is_root": True}
TARGET = {"python": sys.executable}


def make(check_id: str, probe_fn: str, timeout: float = 20.0, requires=(), gate=()):
    attrs = dict(id=f"system.{check_id}", title=check_id.replace("_", " "), layer="system", probe=f"faulty.{probe_fn}",
                 probes_dir=FAULTS, timeout=timeout, requires=tuple(requires), gate=tuple(gate))

    def evaluate(self, facts, ctx):
        return ctx.ok(f"answered {sorted(facts)}")

    attrs["evaluate"] = evaluate
    return type(f"C_{check_id}", (Check,), attrs)


def run(*classes, workers=4):
    return {r.id: r for r in run_checks(list(classes), sys.executable, HOST, TARGET, workers=workers)}


def test_healthy_probe_answers_and_sees_dependency_facts():
    a = make("a", "healthy")
    b = make("b", "healthy", requires=("system.a",))
    res = run(a, b)
    assert res["system.a"].status is Status.PASS
    assert res["system.a"].facts["value"] == 42
    assert res["system.b"].facts["deps_seen"] == ["system.a"]


@pytest.mark.parametrize("fn, reason, check", [
    ("segfault", "signal", lambda f: f.signal == 11),
    ("abort", "signal", lambda f: f.signal == 6),
    ("exit_nonzero", "exit", lambda f: f.exit_code == 3),
    ("sys_exit", "probe-exception", lambda f: "SystemExit" in f.detail),
    ("raises", "probe-exception", lambda f: "probe blew up on purpose" in f.detail and "Traceback" in f.detail),
    ("junk_answer", "bad-output", lambda f: "unreadable answer" in f.detail),
    ("not_a_dict", "bad-output", lambda f: "list" in f.detail),
])
def test_misbehaving_probe_becomes_error_with_evidence(fn, reason, check):
    res = run(make(fn, fn))[f"system.{fn}"]
    assert res.status is Status.ERROR
    assert res.failure is not None and res.failure.reason == reason
    assert check(res.failure), res.failure


def test_hang_is_killed_at_its_timeout_and_the_run_completes():
    start = time.monotonic()
    res = run(make("hang", "hang", timeout=1.5), make("stubborn", "hang_ignoring_sigterm", timeout=1.5),
              make("fine", "healthy"))
    elapsed = time.monotonic() - start
    for cid in ("system.hang", "system.stubborn"):
        assert res[cid].status is Status.ERROR
        assert res[cid].failure.timed_out and res[cid].failure.reason == "timeout"
    assert res["system.fine"].status is Status.PASS
    # the deadline is the check's timeout, not forever (generous bound for a loaded 2-core box)
    assert elapsed < 30


def test_junk_on_stdout_does_not_spoil_the_answer():
    res = run(make("junk_stdout", "junk_stdout"))["system.junk_stdout"]
    assert res.status is Status.PASS and res.facts["printed"] is True


def test_megabytes_of_output_are_spooled_not_kept():
    answer = run_probe(sys.executable, "faulty.megabytes", {"deps": {}, "options": {}}, 60, probes_dir=FAULTS)
    assert answer.failure is None and answer.facts == {"printed_mib": 20}
    assert len(answer.stdout_tail) < 10_000
    assert "the end of stderr" in answer.stderr_tail


def test_unserialisable_facts_are_reprd_not_fatal():
    res = run(make("unser", "unserialisable"))["system.unser"]
    assert res.status is Status.PASS and res.facts["obj"].startswith("<object object")


def test_grandchildren_are_killed_with_the_probe_group():
    res = run(make("gc", "leaves_grandchild"))["system.gc"]
    pid = res.facts["grandchild"]
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        # a killed child lingers as a zombie until its parent reaps it; zombies count as gone
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("grandchild survived its probe")


def test_missing_interpreter_is_an_error_not_an_exception():
    classes = [make("a", "healthy")]
    res = run_checks(classes, "/nonexistent/python", HOST, TARGET)
    assert res[0].status is Status.ERROR and res[0].failure.reason == "spawn"


def test_gate_blocks_and_skip_propagates():
    bad = make("bad", "segfault")
    gated = make("gated", "healthy", requires=("system.bad",), gate=("system.bad",))
    ungated = make("ungated", "healthy", requires=("system.bad",))
    res = run(bad, gated, ungated)
    assert res["system.gated"].status is Status.BLOCKED
    assert "system.bad" in res["system.gated"].summary
    assert res["system.ungated"].status is Status.PASS


def test_evaluate_bug_is_an_error_result():
    cls = make("evalbug", "healthy")
    cls.evaluate = lambda self, facts, ctx: 1 / 0
    res = run(cls)["system.evalbug"]
    assert res.status is Status.ERROR and res.failure.reason == "evaluate-exception"
    assert "ZeroDivisionError" in res.failure.detail


def test_fault_suite_report_validates_against_schema():
    jsonschema = pytest.importorskip("jsonschema")
    classes = [make(n, n, timeout=2) for n in ("healthy", "segfault", "abort", "junk_answer", "hang", "raises")]
    results = run_checks(classes, sys.executable, HOST, TARGET, workers=6)
    report = Report(tool_version="test", created="2026-01-01T00:00:00+00:00", target={"python": "x", "source": "PATH"},
                    host=HOST, results=tuple(results), diagnosis=diagnose(results))
    data = report.to_dict()
    jsonschema.validate(data, SCHEMA)
    assert int(data["diagnosis"]["exit_code"]) == 1
    assert sorted(data["diagnosis"]["errors"]) == sorted(r.id for r in results if r.status is Status.ERROR)
    # round trip
    assert Report.from_dict(json.loads(json.dumps(data))).to_dict() == data


def test_probe_starts_before_requirements_it_does_not_read():
    slow = make("slow", "sleepy")
    eager = make("eager", "stamp", requires=("system.slow",))
    eager.probe_needs = ()
    patient = make("patient", "stamp", requires=("system.slow",))
    res = run(slow, eager, patient)
    # ordering, not timing: the eager probe ran while the slow one slept; the patient one after it
    assert res["system.eager"].facts["start"] < res["system.slow"].facts["end"]
    assert res["system.patient"].facts["start"] >= res["system.slow"].facts["end"]
    assert res["system.eager"].facts["deps_seen"] == [] and res["system.patient"].facts["deps_seen"] == ["system.slow"]


def test_probe_reading_another_probes_facts_starts_on_its_answer_not_its_verdict():
    """triton.kernel_launch reads triton.build's facts, whose verdict waits (through
    triton.import) for torch.cuda: it starts on the answer, so the GPU check no longer
    queues behind the torch import. Without probe_needs a probe reads whole results and waits."""
    slow = make("slow", "sleepy")
    quick = make("quick", "stamp", requires=("system.slow",))
    quick.probe_needs = ()
    reader = make("reader", "stamp", requires=("system.quick", "system.slow"))
    reader.probe_needs = ("system.quick",)
    whole = make("whole", "stamp", requires=("system.quick",))
    whole.probe_options = {"not": "shared"}  # else it shares reader's identical probe run
    res = run(slow, quick, reader, whole)
    assert res["system.reader"].facts["start"] < res["system.slow"].facts["end"]
    assert res["system.reader"].facts["deps_seen"] == ["system.quick"]
    assert res["system.whole"].facts["start"] >= res["system.slow"].facts["end"]
    assert all(r.status is Status.PASS for r in res.values())


def test_probe_never_starts_on_a_failed_answer_of_what_it_reads():
    slow = make("slow", "sleepy")
    broken = make("broken", "raises", requires=("system.slow",))
    broken.probe_needs = ()
    reader = make("reader", "stamp", requires=("system.broken", "system.slow"))
    reader.probe_needs = ("system.broken",)
    res = run(slow, broken, reader)
    assert res["system.broken"].status is Status.ERROR
    assert res["system.reader"].facts["start"] >= res["system.slow"].facts["end"]


def _exclusive(check_id, fn, seconds=None, timeout=20.0):
    cls = make(check_id, fn, timeout=timeout)
    cls.exclusive = "test-device"
    if seconds is not None:
        cls.probe_options = {"seconds": seconds}
    return cls


def test_probes_naming_one_exclusive_resource_run_one_after_another():
    """cuInit, nvmlInit and nvidia-smi each initialise the driver: run together they wait on
    each other, so the checks that use it say so (``exclusive``) and take turns, in dependency
    order, while everything else runs beside them."""
    first, second = _exclusive("first", "sleepy", 0.6), _exclusive("second", "sleepy", 0.3)
    beside = make("beside", "sleepy")
    beside.probe_options = {"seconds": 0.6}
    res = run(first, second, beside)
    f, s, b = (res[f"system.{n}"].facts for n in ("first", "second", "beside"))
    assert s["start"] >= f["end"]  # took turns
    assert b["start"] < f["end"] and b["start"] < s["end"]  # the others did not wait
    # each one's time is its own run, not the wait for its turn
    assert res["system.second"].duration_s < s["end"] - f["start"]


def test_a_hung_holder_of_an_exclusive_resource_does_not_queue_the_others_behind_its_timeout():
    from stackpeel.runner.scheduler import EXCLUSIVE_LEASE_S
    hung = _exclusive("hung", "hang", timeout=EXCLUSIVE_LEASE_S + 4)
    after = _exclusive("after", "stamp")
    t0 = time.time()
    res = run(hung, after)
    assert res["system.hung"].status is Status.ERROR and res["system.hung"].failure.reason == "timeout"
    assert res["system.after"].status is Status.PASS
    # ordering: it waited for the lease, then started, not at the hung probe's timeout (4 s later)
    assert t0 + EXCLUSIVE_LEASE_S - 0.1 <= res["system.after"].facts["start"] < t0 + hung.timeout
