"""Plain-text report, in the spirit of ``flutter doctor``: root causes first, their
symptoms nested under them, the swallowed evidence quoted, fixes ready to paste."""

from __future__ import annotations

import textwrap
from typing import List

from ..model import Report, RootCause, Severity, Status
from ._shared import (STATUS_MARK, evidence_tail, exit_line, first_lines, header_facts, main_findings,
                      selection_note, symptom_rows)

_COLORS = {"red": "31", "yellow": "33", "green": "32", "dim": "2", "bold": "1", "cyan": "36"}
_STATUS_COLOR = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.ERROR: "red",
                 Status.BLOCKED: "dim", Status.SKIP: "dim"}


class _Out:
    def __init__(self, width: int, color: bool, ascii_only: bool):
        self.width, self.color, self.ascii = width, color, ascii_only
        self.lines: List[str] = []

    def style(self, text: str, name: str) -> str:
        return f"\x1b[{_COLORS[name]}m{text}\x1b[0m" if self.color and text else text

    def mark(self, status: Status, pad: bool = False) -> str:
        uni, asc = STATUS_MARK[status]
        text = asc if self.ascii else uni
        if pad:
            text = text.ljust(max(len(a if self.ascii else u) for u, a in STATUS_MARK.values()))
        return self.style(text, _STATUS_COLOR[status])

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def wrap(self, text: str, indent: str, first: str = None) -> None:
        first = indent if first is None else first
        for para in text.splitlines() or [""]:
            wrapped = textwrap.wrap(para, width=max(30, self.width - len(indent)), break_long_words=False,
                                    break_on_hyphens=False) or [""]
            for i, w in enumerate(wrapped):
                self.lines.append((first if i == 0 else indent) + w)
            first = indent


def _root(out: _Out, report: Report, n: int, root: RootCause, verbose: bool) -> None:
    r = report.result(root.check_id)
    sev = root.severity
    findings = main_findings(r, sev)
    title = findings[0].title if findings else r.title
    codes = ", ".join(root.codes) or ", ".join(f.code for f in r.findings)
    head = f" {out.mark(r.status)} {n}. {out.style(title, 'bold')}"
    out.line(f"{head}  [{codes}]" + out.style(f"  ({r.id})", "dim"))
    for f in findings:
        out.wrap(f.message, "      ")
        if f.evidence:
            out.line("      Evidence:")
            for ln in evidence_tail(f.evidence, 12 if verbose else 6):
                out.line("        | " + ln)
    for f in findings:
        if f.remedy:
            out.line("      Fix:")
            out.wrap(f.remedy.text, "        ")
            for c in f.remedy.commands:
                out.line(f"        $ {c.command}" + out.style(f"   # {c.manager}", "dim"))
    rows = symptom_rows(report, root)
    if rows:
        out.line(f"      Explains {len(rows)} symptom{'s' if len(rows) != 1 else ''}:")
        for depth, s in rows:
            pad = "        " + "   " * (depth - 1)
            arrow = "`-> " if out.ascii else "└─ "
            codes_s = ", ".join(f.code for f in s.findings)
            label = (s.findings[0].title if s.findings else s.title) + (f" [{codes_s}]" if codes_s else "")
            out.line(f"{pad}{arrow}{out.mark(s.status)} {label}" + out.style(f"  ({s.id})", "dim"))
            detail = s.findings[0].message if s.findings else s.summary
            out.wrap(detail, pad + "     ")
            for f in s.findings:
                if f.evidence:
                    for ln in evidence_tail(f.evidence, 4 if not verbose else 10):
                        out.line(pad + "     | " + ln)
                    break
    out.line()


def render_text(report: Report, width: int = 100, color: bool = False, ascii_only: bool = False,
                verbose: bool = False) -> str:
    out = _Out(width, color, ascii_only)
    target, host = header_facts(report)
    out.line(out.style(f"stackpeel {report.tool_version}", "bold") + f" diagnosed {target}")
    n = len(report.results)
    out.line(f"Host: {host}. {n} check{'s' if n != 1 else ''} in {report.duration_s:.1f} s.")
    note = selection_note(report)
    if note:
        out.wrap(note, "")
    out.line()
    d = report.diagnosis
    if d.blocking:
        out.line(out.style(f"ROOT CAUSES ({len(d.blocking)} blocking)", "bold"))
        for i, root in enumerate(d.blocking, 1):
            _root(out, report, i, root, verbose)
    if d.degraded:
        out.line(out.style(f"DEGRADED ({len(d.degraded)}): works, but slower or at risk", "bold"))
        for i, root in enumerate(d.degraded, 1):
            _root(out, report, i, root, verbose)
    if d.errors:
        out.line(out.style(f"CHECKS THAT COULD NOT COMPLETE ({len(d.errors)})", "bold"))
        for cid in d.errors:
            r = report.result(cid)
            out.line(f" {out.mark(Status.ERROR)} {r.title}" + out.style(f"  ({r.id})", "dim"))
            out.wrap(r.summary, "      ")
            if r.failure:
                fl = r.failure
                bits = [f"reason={fl.reason}"]
                if fl.exit_code is not None:
                    bits.append(f"exit={fl.exit_code}")
                if fl.signal is not None:
                    bits.append(f"signal={fl.signal}")
                if fl.timed_out:
                    bits.append("timed out")
                out.line("      " + ", ".join(bits))
                for ln in evidence_tail(fl.stderr_tail or fl.detail, 8 if verbose else 4):
                    out.line("        | " + ln)
        out.line()
    out.line(out.style("CHECKS", "bold"))
    idw = max((len(r.id) for r in report.results), default=10)
    for r in report.results:
        out.line(f" {out.mark(r.status, pad=True)} {r.id.ljust(idw)}  {r.summary}")
        if verbose:
            for f in r.findings:
                if f.severity is Severity.INFO:
                    out.wrap(f"{f.code}: {f.message}", " " * (idw + 5))
    out.line()
    out.line(out.style(exit_line(report), "bold"))
    return "\n".join(out.lines) + "\n"


__all__ = ["render_text", "first_lines"]
