"""Pieces both the text and the Markdown renderer need, computed from the report alone."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from ..model import CheckResult, Finding, Report, RootCause, Severity, Status


def header_facts(report: Report) -> Tuple[str, str]:
    t, h = report.target, report.host
    plat = report.result("system.platform")
    pf = plat.facts if plat else {}
    target = f"{t.get('python')} (Python {t.get('version', '?')}, chosen from {t.get('source', '?')})"
    bits = [pf.get("distro") or h.get("distro_name") or "unknown distro"]
    if pf.get("arch"):
        bits.append(pf["arch"])
    if pf.get("container"):
        bits.append(f"container: {pf['container']}")
    return target, ", ".join(map(str, bits))


def main_findings(result: CheckResult, severity: Severity) -> List[Finding]:
    found = [f for f in result.findings if f.severity is severity]
    return found or list(result.findings)


def symptom_rows(report: Report, root: RootCause) -> List[Tuple[int, CheckResult]]:
    """(depth, result) for each symptom, as a tree under the root (depth 1 = direct)."""
    rows = []
    for s in root.symptoms:
        r = report.result(s.check_id)
        if r is not None:
            rows.append((len(s.path) - 1, r))
    return rows


def first_lines(text: str, n: int) -> List[str]:
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > n:
        return lines[:n] + [f"... ({len(lines) - n} more lines; see --format json)"]
    return lines


_NOISE = re.compile(r"^\s*[\^~]+\s*$|^\s*File \"<frozen importlib\._bootstrap(_external)?>\"")


def evidence_tail(text: str, n: int) -> List[str]:
    """The last lines of evidence: where a traceback says what went wrong.

    Caret markers and importlib's frozen frames are left out here (they only push the
    message off screen); the JSON report keeps the evidence verbatim.
    """
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip() and not _NOISE.match(ln)]
    if len(lines) > n:
        return [f"... ({len(lines) - n} earlier lines; see --format json)"] + lines[-n:]
    return lines


def status_counts(results: Sequence[CheckResult]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for r in results:
        out[r.status.value] = out.get(r.status.value, 0) + 1
    return out


def exit_line(report: Report) -> str:
    d = report.diagnosis
    if d.blocking:
        n = len(d.blocking)
        return f"{n} blocking root cause{'s' if n != 1 else ''} found (exit 1)."
    if d.errors:
        return f"No blocking problem found, but {len(d.errors)} check(s) could not complete (exit 1)."
    if d.degraded:
        return "No blocking problem; degraded only (exit 0)."
    return "No problem found (exit 0)."


STATUS_MARK = {
    Status.PASS: ("✓", "[ok]"),
    Status.WARN: ("!", "[warn]"),
    Status.FAIL: ("✗", "[FAIL]"),
    Status.SKIP: ("-", "[skip]"),
    Status.BLOCKED: ("↳", "[blocked]"),
    Status.ERROR: ("⚠", "[ERROR]"),
}


def selection_note(report: Report) -> str:
    """One sentence when --skip left out requirements of checks that ran (a root cause may then
    be a symptom of one of them)."""
    left_out = report.selection.get("not_run") or []
    if not left_out:
        return ""
    return (f"Not run on request, though other checks depend on {'them' if len(left_out) != 1 else 'it'}: "
            f"{', '.join(left_out)}. A root cause below may be a symptom of something not checked.")
