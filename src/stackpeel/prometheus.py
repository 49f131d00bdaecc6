"""node_exporter textfile metrics for ``check --prometheus FILE`` and ``fleet --prometheus FILE``,
written with the Prometheus project's own client (``prometheus-client``, an optional extra:
``pip install 'stackpeel[fleet]'``) so the exposition format is theirs, not ours.

Metrics (every series also carries ``node`` for fleet runs):

- ``stackpeel_check_status{check, layer, status}``: 1 for the check's status, 0 for the others
- ``stackpeel_root_cause{check, code, severity}``: 1 per root cause of the run
- ``stackpeel_stack_info{python, torch, triton, fla, driver}``: 1, versions as labels (few values)
- ``stackpeel_node_diagnosed{state}``: 1 for how the node's diagnosis ended (fleet)
- ``stackpeel_last_run_timestamp_seconds``, ``stackpeel_run_duration_seconds``
- ``stackpeel_collective_passed{backend}``: 1 when ``fleet --collective``'s all-reduce passed, else 0
- ``stackpeel_collective_finding{node, code, root}``: 1 per finding of the cross-node run
"""

from __future__ import annotations

import time
from typing import Iterable, Optional, Tuple

from .model import Report, Status

STATUSES = tuple(s.value for s in Status)


def ensure_available() -> None:
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise RuntimeError("--prometheus needs prometheus-client: pipx inject stackpeel prometheus-client "
                           "(or pip install 'stackpeel[fleet]')") from None


def _fill(registry, reports: Iterable[Tuple[Optional[str], str, Optional[Report]]]) -> None:
    from prometheus_client import Gauge

    node_label = ["node"]
    status = Gauge("stackpeel_check_status", "1 for the status each check ended in",
                   node_label + ["check", "layer", "status"], registry=registry)
    roots = Gauge("stackpeel_root_cause", "1 per root cause stackpeel "
                                          "named", node_label + ["check", "code", "severity"],
                  registry=registry)
    info = Gauge("stackpeel_stack_info", "versions of the diagnosed stack",
                 node_label + ["python", "torch", "triton", "fla", "driver"], registry=registry)
    diagnosed = Gauge("stackpeel_node_diagnosed", "1 for how the node's diagnosis ended", node_label + ["state"],
                      registry=registry)
    stamp = Gauge("stackpeel_last_run_timestamp_seconds", "when stackpeel ran", node_label, registry=registry)
    took = Gauge("stackpeel_run_duration_seconds", "how long the checks took", node_label, registry=registry)
    for node, state, rep in reports:
        n = node or ""
        for s in ("ok", "unreachable", "timeout", "stackpeel-failed"):
            diagnosed.labels(n, s).set(1 if s == state else 0)
        stamp.labels(n).set(time.time())
        if rep is None:
            continue
        took.labels(n).set(rep.duration_s)
        for r in rep.results:
            for s in STATUSES:
                status.labels(n, r.id, r.layer, s).set(1 if r.status.value == s else 0)
        for sev, group in (("blocking", rep.diagnosis.blocking), ("degraded", rep.diagnosis.degraded)):
            for rc in group:
                for code in rc.codes:
                    roots.labels(n, rc.check_id, code, sev).set(1)
        from .fleet import profile
        p = profile(rep)
        info.labels(n, str(p.get("python") or ""), str(p.get("torch") or ""), str(p.get("triton") or ""),
                    str(p.get("fla") or ""), str(p.get("driver") or "")).set(1)


def write_report(report: Report, path: str) -> None:
    ensure_available()
    from prometheus_client import CollectorRegistry, write_to_textfile

    reg = CollectorRegistry()
    _fill(reg, [(None, "ok", report)])
    write_to_textfile(path, reg)  # writes a temp file and renames it: node_exporter never reads half a file


def write_fleet(fleet, path: str) -> None:
    ensure_available()
    from prometheus_client import CollectorRegistry, write_to_textfile

    reg = CollectorRegistry()
    _fill(reg, [(o.node, o.state, o.report) for o in fleet.nodes])
    c = getattr(fleet, "collective", None)
    if c is not None:
        from prometheus_client import Gauge

        Gauge("stackpeel_collective_passed", "1 when the all-reduce across the nodes passed", ["backend"],
              registry=reg).labels(c.backend).set(1 if c.passed else 0)
        found = Gauge("stackpeel_collective_finding", "1 per finding of the all-reduce across the nodes",
                      ["node", "code", "root"], registry=reg)
        for f in c.findings:
            found.labels(f.node, f.finding.code, "true" if f.root else "false").set(1)
    write_to_textfile(path, reg)
