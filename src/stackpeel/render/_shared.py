"""Pieces both the text and the Markdown renderer need, computed from the report alone."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from ..model import CheckResult, Command, Finding, Report, RootCause, Severity, Status


def header_facts(report: Report) -> Tuple[str, str]:
    t, h = report.target, report.host
    plat = report.result("system.platform")
    pf = plat.facts if plat else {}
    target = f"{t.get('python')} (Python {t.get('version', '?')}, chosen from {t.get('source', '?')})"
    bits = [pf.get("distro") or h.get("distro_name") or "unknown distro"]
    if pf.get("arch"):
        bits.append(pf["arch"])
    if pf.get("container") and pf["container"] != "none":
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


_NOISE = re.compile(r"^\s*\|?\s*[\^~]+\s*$|^\s*File \"<frozen importlib\._bootstrap(_external)?>\"")


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


# --- the summary-first layout (issue 18): each symptom once, one block of fixes -------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`'\"/])")


def first_sentence(text: str) -> str:
    """The first sentence of a message: the observed fact; the rest is the consequence."""
    text = " ".join(text.split())
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return parts[0] if parts else text


def all_roots(report: Report) -> List[RootCause]:
    return list(report.diagnosis.blocking) + list(report.diagnosis.degraded)


def root_label(report: Report, root: RootCause) -> str:
    """How a root is named where it is referred to: its codes, or its check id."""
    if root.codes:
        return ", ".join(root.codes)
    r = report.result(root.check_id)
    return ", ".join(f.code for f in r.findings) if r and r.findings else root.check_id


def symptom_owners(report: Report) -> Dict[str, List[RootCause]]:
    """check id -> the roots that explain it, nearest first (shortest chain; ties in report order,
    blocking first). The first owns it: the default report prints the symptom under that root
    only, with "also caused by" the others."""
    owners: Dict[str, List[Tuple[int, int, RootCause]]] = {}
    for i, root in enumerate(all_roots(report)):
        for s in root.symptoms:
            owners.setdefault(s.check_id, []).append((len(s.path), i, root))
    return {cid: [root for _, _, root in sorted(rows, key=lambda t: t[:2])] for cid, rows in owners.items()}


def owned_symptoms(report: Report, root: RootCause) -> List[Tuple[int, CheckResult, List[RootCause]]]:
    """(depth, result, other roots) for the symptoms this root is the first to explain."""
    owners = symptom_owners(report)
    out = []
    for s in root.symptoms:
        r = report.result(s.check_id)
        mine = owners.get(s.check_id, [])
        if r is not None and mine and mine[0] is root:
            out.append((len(s.path) - 1, r, list(mine[1:])))
    return out


def root_findings(report: Report, root: RootCause) -> List[Finding]:
    r = report.result(root.check_id)
    return main_findings(r, root.severity) if r else []


def fix_plan(report: Report) -> Tuple[List[Command], List[str], List[Tuple[str, str, List[Command]]]]:
    """What to run, and what stays manual, for every root cause of the report.

    Returns (merged commands, codes whose commands they are, [(code and why, fix prose, commands)] for
    the roots a person must handle: no command at all, or a remedy the knowledge base marks
    ``automatic = false`` (the host's driver, a container's configuration), whose commands are
    shown with it and never pasted into the block). Merging follows
    :func:`stackpeel.remedies.merge`: one refresh, one install per package manager, no repeats.
    """
    from ..remedies import merge

    commands: List[Command] = []
    codes: List[str] = []
    manual: List[Tuple[str, str, List[Command]]] = []
    for root in all_roots(report):
        for f in root_findings(report, root):
            if not f.remedy:
                continue
            if f.remedy.commands and f.remedy.automatic is not False:
                commands.extend(f.remedy.commands)
                if f.code not in codes:
                    codes.append(f.code)
            elif f.remedy.text or f.remedy.commands:
                label = f.code + (f" ({f.remedy.why})" if f.remedy.why else "")
                manual.append((label, f.remedy.text, list(f.remedy.commands)))
    return merge(commands), codes, manual
