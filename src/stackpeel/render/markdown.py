"""Markdown, ready to paste into a GitHub issue: the summary and the fix block visible, the details
folded in ``<details>`` (issue 18). The same rules as the text report: one entry per root cause
with the observed fact, one merged block of commands, each symptom once under the nearest root
that explains it ("also caused by" the others); ``verbose`` lists every symptom under every root.
"""

from __future__ import annotations

from typing import List

from ..model import Report, RootCause, Status
from ._shared import (all_roots, evidence_tail, exit_line, first_sentence, fix_plan, header_facts,
                      owned_symptoms, root_findings, root_label, selection_note, symptom_owners, symptom_rows)


def _fence(lines: List[str], indent: str = "", lang: str = "") -> List[str]:
    body = [indent + ln.replace("```", "ʼʼʼ") for ln in lines]
    return [indent + "```" + lang] + body + [indent + "```"]


def _inline(text: str) -> str:
    return text.replace("|", "\\|")


def _summary(report: Report, out: List[str]) -> None:
    d = report.diagnosis
    for heading, roots in ((f"### {len(d.blocking)} blocking root cause{'s' if len(d.blocking) != 1 else ''}",
                            d.blocking), ("### Degraded: works, but slower or at risk", d.degraded)):
        if not roots:
            continue
        out += [heading, ""]
        for root in roots:
            findings = root_findings(report, root)
            r = report.result(root.check_id)
            title = findings[0].title if findings else r.title
            observed = first_sentence(findings[0].message) if findings else r.summary
            out.append(f"- **`{root_label(report, root)}`** {_inline(title)}: {_inline(observed)}")
        out.append("")
    if d.errors:
        out += ["### Checks that could not complete", ""]
        for cid in d.errors:
            r = report.result(cid)
            out.append(f"- `{cid}`: {_inline(r.summary) if r else ''}")
        out.append("")


def _fixes(report: Report, out: List[str]) -> None:
    commands, codes, manual = fix_plan(report)
    if not commands and not manual:
        return
    out += ["### Fix", ""]
    if commands:
        out += [f"Paste into a shell of this environment (for {', '.join(f'`{c}`' for c in codes)}):", ""]
        out += _fence([c.command for c in commands], lang="sh")
        out.append("")
    if manual:
        out += ["By hand (no command here can do it):", ""]
        for label, text, cmds in manual:
            code, _, why = label.partition(" ")
            out.append(f"- `{code}`{' ' + why if why else ''}: {text}")
            if cmds:
                out += _fence([c.command for c in cmds], indent="  ", lang="sh")
        out.append("")


def _symptom(report: Report, s, also: List[RootCause], depth: int, out: List[str], seen: set) -> None:
    pad = "  " * (depth - 1)
    codes = ", ".join(f"`{f.code}`" for f in s.findings)
    title = s.findings[0].title if s.findings else s.title
    # a check that could not complete says what happened first (its note names the cause)
    detail = s.findings[0].message if s.findings and s.status is not Status.ERROR else s.summary
    head = f"{pad}- **{_inline(title)}** ({s.status.value}{', ' + codes if codes else ''}; `{s.id}`): {_inline(detail)}"
    if also:
        head += " Also caused by: " + ", ".join(f"`{root_label(report, o)}`" for o in also) + "."
    out.append(head)
    for f in s.findings:
        if f.evidence:
            lines = [ln for ln in evidence_tail(f.evidence, 6) if ln.strip() not in seen]
            if lines:
                seen.update(ln.strip() for ln in lines)
                out += _fence(lines, indent=pad + "  ")
            break
    for f in s.findings:
        if f.remedy:
            out.append(f"{pad}  Fix: {f.remedy.text}")
            if f.remedy.commands:
                out += _fence([c.command for c in f.remedy.commands], indent=pad + "  ", lang="sh")


def _root(report: Report, n: int, root: RootCause, out: List[str], verbose: bool, seen: set) -> None:
    r = report.result(root.check_id)
    findings = root_findings(report, root)
    title = findings[0].title if findings else r.title
    out += [f"#### {n}. {title} (`{root_label(report, root)}`)", "", f"Check `{r.id}`: {r.summary}", ""]
    for f in findings:
        out += [f.message, ""]
        if f.evidence:
            out += ["Evidence:", ""] + _fence(evidence_tail(f.evidence, 20)) + [""]
            seen.update(ln.strip() for ln in evidence_tail(f.evidence, 20))
        if f.remedy:
            out += [f"**Fix:** {f.remedy.text}", ""]
            if f.remedy.commands:
                out += _fence([c.command for c in f.remedy.commands], lang="sh") + [""]
    owners = symptom_owners(report)
    if verbose:
        rows = [(depth, s, [o for o in owners.get(s.id, []) if o is not root])
                for depth, s in symptom_rows(report, root)]
    else:
        rows = owned_symptoms(report, root)
    elsewhere = [s.check_id for s in root.symptoms if not verbose and owners.get(s.check_id, [root])[0] is not root]
    if rows:
        out += ["Symptoms it explains:", ""]
        for depth, s, also in rows:
            _symptom(report, s, also, depth if verbose else 1, out, seen)
        out.append("")
    if elsewhere:
        out += [f"It also explains {', '.join(f'`{c}`' for c in elsewhere)}, listed under another root cause.", ""]


def render_markdown(report: Report, verbose: bool = False) -> str:
    target, host = header_facts(report)
    out: List[str] = ["## stackpeel report", "", f"- Target: `{target}`", f"- Host: {host}",
                      f"- stackpeel {report.tool_version}, {len(report.results)} checks in {report.duration_s:.1f} s",
                      f"- Verdict: {exit_line(report)}"]
    if selection_note(report):
        out.append(f"- Note: {selection_note(report)}")
    out.append("")
    _summary(report, out)
    _fixes(report, out)
    roots = all_roots(report)
    if roots:
        label = "every symptom under every root" if verbose else "each symptom once"
        out += [f"<details><summary>Details: evidence, fixes and what each root cause explains ({label})</summary>",
                ""]
        seen: set = set()
        for i, root in enumerate(roots, 1):
            _root(report, i, root, out, verbose, seen)
        out += ["</details>", ""]
    d = report.diagnosis
    if d.errors:
        out += ["<details><summary>Why checks could not complete</summary>", ""]
        for cid in d.errors:
            r = report.result(cid)
            out.append(f"- `{cid}`: {r.summary}")
            if r.failure and (r.failure.stderr_tail or r.failure.detail):
                out += _fence(evidence_tail(r.failure.stderr_tail or r.failure.detail, 8), indent="  ")
        out += ["", "</details>", ""]
    out += ["<details><summary>All checks</summary>", "", "| check | status | summary |", "|---|---|---|"]
    for r in report.results:
        out.append(f"| `{r.id}` | {r.status.value} | {_inline(r.summary)} |")
    out += ["", "</details>", ""]
    return "\n".join(out)


__all__ = ["render_markdown"]
