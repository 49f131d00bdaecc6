"""Markdown, ready to paste into a GitHub issue: summary first, details folded."""

from __future__ import annotations

from typing import List

from ..model import Report, RootCause
from ._shared import evidence_tail, exit_line, header_facts, main_findings, selection_note, symptom_rows


def _fence(lines: List[str]) -> List[str]:
    body = "\n".join(lines).replace("```", "ʼʼʼ")
    return ["```", body, "```"]


def _root(report: Report, n: int, root: RootCause, out: List[str]) -> None:
    r = report.result(root.check_id)
    findings = main_findings(r, root.severity)
    title = findings[0].title if findings else r.title
    out.append(f"### {n}. {title} (`{', '.join(root.codes) or r.id}`)")
    out.append("")
    out.append(f"Check `{r.id}`: {r.summary}")
    out.append("")
    for f in findings:
        out.append(f.message)
        out.append("")
        if f.evidence:
            out.append("Evidence:")
            out.append("")
            out.extend(_fence(evidence_tail(f.evidence, 20)))
            out.append("")
    for f in findings:
        if f.remedy:
            out.append(f"**Fix:** {f.remedy.text}")
            out.append("")
            if f.remedy.commands:
                out.append("```sh")
                out.extend(c.command for c in f.remedy.commands)
                out.append("```")
                out.append("")
    rows = symptom_rows(report, root)
    if rows:
        out.append("Symptoms it explains:")
        out.append("")
        for depth, s in rows:
            codes = ", ".join(f"`{f.code}`" for f in s.findings)
            detail = s.findings[0].message if s.findings else s.summary
            title = s.findings[0].title if s.findings else s.title
            out.append("  " * (depth - 1) + f"- **{title}** ({s.status.value}{', ' + codes if codes else ''}): {detail}")
            for f in s.findings:
                if f.evidence:
                    out.append("  " * depth + "```")
                    out.extend("  " * depth + ln.replace("```", "ʼʼʼ") for ln in evidence_tail(f.evidence, 6))
                    out.append("  " * depth + "```")
                    break
        out.append("")


def render_markdown(report: Report, verbose: bool = False) -> str:
    target, host = header_facts(report)
    out: List[str] = ["## stackpeel report", "", f"- Target: `{target}`", f"- Host: {host}",
                      f"- stackpeel {report.tool_version}, {len(report.results)} checks in {report.duration_s:.1f} s",
                      f"- Verdict: {exit_line(report)}"]
    if selection_note(report):
        out.append(f"- Note: {selection_note(report)}")
    out.append("")
    d = report.diagnosis
    if d.blocking:
        out += [f"## Root causes ({len(d.blocking)} blocking)", ""]
        for i, root in enumerate(d.blocking, 1):
            _root(report, i, root, out)
    if d.degraded:
        out += [f"## Degraded ({len(d.degraded)})", ""]
        for i, root in enumerate(d.degraded, 1):
            _root(report, i, root, out)
    if d.errors:
        out += ["## Checks that could not complete", ""]
        for cid in d.errors:
            r = report.result(cid)
            out.append(f"- `{cid}`: {r.summary}")
        out.append("")
    out += ["<details><summary>All checks</summary>", "", "| check | status | summary |", "|---|---|---|"]
    for r in report.results:
        out.append(f"| `{r.id}` | {r.status.value} | {r.summary.replace('|', '/')} |")
    out += ["", "</details>", ""]
    return "\n".join(out)
