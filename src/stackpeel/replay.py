"""Re-diagnose a saved report with today's code: the recorded facts go through today's
``evaluate`` bodies and today's diagnosis, without probing anything.

This is how committed evidence stays honest: a test replays every committed report and
fails when today's verdict differs from the one the real run printed (then the real
scenario is re-run and its new output committed). It also lets a report from another
machine be re-read by a newer stackpeel.

Results that never reached ``evaluate`` stay as recorded: ``error`` (the probe crashed or
timed out: there are no facts to judge), ``blocked`` (a gate kept the probe from running) and
``--deep``-only checks a default run skipped.
A check of today's registry that the report does not hold is left out; a recorded check that
today's registry does not know is kept as recorded.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Type

from . import registry
from .checks.base import Check
from .diagnosis import diagnose
from .model import CheckResult, Report, Status
from .runner.scheduler import _finish
from .runner.child import ProbeAnswer

__all__ = ["rediagnose", "verdict_of"]

#: ProbeFailure reasons of a probe that ran and gave no answer (not a runner or shape problem)
PROBE_DEATHS = ("exit", "no-output", "signal", "timeout", "probe-exception", "bad-output")


def rediagnose(report: Report, classes: Optional[Sequence[Type[Check]]] = None) -> Report:
    """``report`` with every result re-evaluated from its recorded facts, in dependency order."""
    pool = list(classes) if classes is not None else registry.load(plugins=False)
    by_id = {c.id: c for c in pool}
    recorded = {r.id: r for r in report.results}
    done: Dict[str, CheckResult] = {}
    limits = [c for c in pool if c.limits_every_probe and c.id in recorded]  # as the run offered deaths to
    # today's dependency order, restricted to what the report holds (a requirement added since
    # the report was made is simply absent: its facts read as {})
    for cls in [c for c in registry.validate(pool) if c.id in recorded]:
        old = recorded[cls.id]
        deep_skipped = getattr(cls, "deep_only", False) and old.status is Status.SKIP and not old.facts
        if old.status is Status.ERROR and old.failure is not None and cls.probe and \
                old.failure.reason in PROBE_DEATHS:  # judged again: on_failure may name a cause now
            done[cls.id] = _finish(cls, ProbeAnswer(None, old.failure, old.duration_s), report.host, report.target,
                                   done, recorded=True, limits=limits)
            continue
        if old.status in (Status.ERROR, Status.BLOCKED) or old.failure is not None or deep_skipped:
            done[cls.id] = old
            continue
        answer = ProbeAnswer(dict(old.facts), None, old.duration_s) if cls.probe else None
        done[cls.id] = _finish(cls, answer, report.host, report.target, done, recorded=True)
    results: List[CheckResult] = [done.get(r.id, r) if r.id in by_id else r for r in report.results]
    return Report(tool_version=report.tool_version, created=report.created, target=report.target,
                  host=report.host, results=tuple(results), diagnosis=diagnose(results, registry.LAYERS),
                  duration_s=report.duration_s, selection=report.selection)


def verdict_of(report: Report) -> Mapping[str, object]:
    """What a report concludes, for comparing two of them: each check's status and codes,
    the blocking and degraded roots with their codes, and the checks that could not complete."""
    return {
        "statuses": {r.id: (r.status.value, tuple(sorted(f.code for f in r.findings))) for r in report.results},
        "blocking": sorted((rc.check_id, tuple(rc.codes)) for rc in report.diagnosis.blocking),
        "degraded": sorted((rc.check_id, tuple(rc.codes)) for rc in report.diagnosis.degraded),
        "errors": sorted(report.diagnosis.errors),
    }
