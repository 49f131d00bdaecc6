"""Re-diagnosing saved reports with today's code (stackpeel.replay)."""

import copy
import json
from pathlib import Path

from stackpeel.model import Report, Status
from stackpeel.replay import rediagnose, verdict_of

DATA = Path(__file__).parent / "data"


def load(path):
    return Report.from_dict(json.loads(Path(path).read_text()))


def test_recorded_h200_report_replays_to_the_same_verdict():
    rep = load(DATA / "toolchain" / "h200_report.json")
    assert verdict_of(rediagnose(rep)) == verdict_of(rep)


def test_a_changed_fact_changes_the_replayed_verdict():
    raw = json.loads((DATA / "toolchain" / "h200_report.json").read_text())
    (cc,) = [r for r in raw["results"] if r["id"] == "toolchain.c_compiler"]
    assert cc["status"] == "pass"
    cc["facts"].update(compiler=None, source=None, path_env="/nowhere", plain_cc=None, conda_gcc=[])
    before = Report.from_dict(raw)
    after = rediagnose(before)
    assert after.result("toolchain.c_compiler").status is Status.FAIL
    assert ("toolchain.c_compiler", ("no-c-compiler",)) in verdict_of(after)["blocking"]
    assert verdict_of(after) != verdict_of(before)


def test_errors_and_blocked_results_stay_as_recorded():
    raw = json.loads((DATA / "toolchain" / "h200_report.json").read_text())
    victim = raw["results"][0]
    victim.update(status="error", summary="check could not complete: timed out", findings=[],
                  failure={"reason": "timeout", "timed_out": True, "detail": "timed out after 30 s"})
    rep = Report.from_dict(copy.deepcopy(raw))
    again = rediagnose(rep).result(victim["id"])
    assert again.status is Status.ERROR and again.failure.reason == "timeout"
