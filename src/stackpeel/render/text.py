"""Plain-text report, in the spirit of ``flutter doctor`` and ``brew doctor``: the answer in one
screen, details behind ``-v``.

Default layout (issue 18):

1. a summary: one entry per root cause (code, title, the observed fact that proves it), one per
   degraded finding, one per check that could not complete; past five entries one line each,
   past twelve a count;
2. one copy-paste block with every fix command for this host, merged (one ``apt-get update``,
   one install of every package), then what remains manual (such as the host's driver);
3. what the root causes explain: each symptom once, under the first root that explains it (the
   nearest: shortest chain, ties in report order), grouped under "also caused by" the others;
   evidence lines quoted once each, as many as the line budget (40) leaves room for, and when
   even the titles do not fit, the root with the most symptoms lists them by code;
4. a one-line count of the checks.

``verbose`` adds every root's full message, evidence and fix, the full chain of symptoms under
every root, and the table of all checks. Prose wraps at ``width``; commands are never cut.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from typing import List, Optional, Set

from ..model import CheckResult, Report, RootCause, Severity, Status
from ._shared import (STATUS_MARK, all_roots, evidence_tail, exit_line, first_lines, first_sentence, fix_plan,
                      header_facts, owned_symptoms, root_findings, root_label, selection_note, status_counts,
                      symptom_owners, symptom_rows)

_COLORS = {"red": "31", "yellow": "33", "green": "32", "dim": "2", "bold": "1", "cyan": "36"}
_STATUS_COLOR = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.ERROR: "red",
                 Status.BLOCKED: "dim", Status.SKIP: "dim"}
#: the narrowest layout; a terminal narrower than this still gets 60 columns
MIN_WIDTH = 60
DEFAULT_WIDTH = 80
#: summary entries shown with their observed fact (two lines each); more get one line each
_SUMMARY_DETAILED = 5
#: summary entries shown at all; the rest are counted ("... and N more")
_SUMMARY_MAX = 12


def terminal_width(stream=None, default: int = DEFAULT_WIDTH) -> int:
    """The width to lay the report out at: the terminal's (from $COLUMNS or the tty), kept within
    60..120 columns; ``default`` when the output is no terminal (a file, a pipe)."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return max(MIN_WIDTH, min(int(cols), 120))
    if stream is not None and hasattr(stream, "isatty") and stream.isatty():
        return max(MIN_WIDTH, min(shutil.get_terminal_size((default, 24)).columns, 120))
    return default


class _Out:
    def __init__(self, width: int, color: bool, ascii_only: bool):
        self.width, self.color, self.ascii = max(MIN_WIDTH, width), color, ascii_only
        self.lines: List[str] = []
        self.evidence_seen: Set[str] = set()

    def style(self, text: str, name: str) -> str:
        return f"\x1b[{_COLORS[name]}m{text}\x1b[0m" if self.color and text else text

    def plain_mark(self, status: Status) -> str:
        uni, asc = STATUS_MARK[status]
        return asc if self.ascii else uni

    def mark(self, status: Status, pad: bool = False) -> str:
        text = self.plain_mark(status)
        if pad:
            text = text.ljust(max(len(a if self.ascii else u) for u, a in STATUS_MARK.values()))
        return self.style(text, _STATUS_COLOR[status])

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def heading(self, text: str) -> None:
        self.wrap(text, "", style="bold")

    def wrap(self, text: str, indent: str, first: Optional[str] = None, style: Optional[str] = None,
             max_lines: int = 0) -> None:
        """Prose, wrapped at the width."""
        first = indent if first is None else first
        out: List[str] = []
        for para in text.splitlines() or [""]:
            # a word is broken only when it alone is wider than the line (a long path)
            wrapped = textwrap.wrap(para, width=self.width, initial_indent=first, subsequent_indent=indent,
                                    break_long_words=True, break_on_hyphens=False) or [first.rstrip()]
            out.extend(wrapped)
            first = indent
        if max_lines and len(out) > max_lines:
            out = out[:max_lines]
            cut = out[-1]
            ell = "..." if self.ascii else "…"
            while len(cut) + len(ell) > self.width and " " in cut.strip():
                cut = cut.rsplit(" ", 1)[0]
            out[-1] = cut.rstrip(" ,;:") + ell
        self.lines.extend(self.style(ln, style) if style else ln for ln in out)

    def item(self, status: Status, text: str, indent: str, max_lines: int = 0, lead: str = "") -> None:
        """``indent`` + ``lead`` + mark + text, wrapped under the text; only the mark is coloured."""
        plain = self.plain_mark(status)
        start = len(self.lines)
        self.wrap(text, indent + " " * (len(lead) + len(plain) + 1), first=f"{indent}{lead}{plain} ",
                  max_lines=max_lines)
        if self.color and len(self.lines) > start:
            self.lines[start] = self.lines[start].replace(plain, self.mark(status), 1)

    def evidence(self, text: str, n: int, indent: str, once: bool) -> None:
        """The tail of ``text``, quoted. With ``once`` (the default report): at most the last ``n``
        lines, none that was quoted above, and nothing when the last line was (the same error
        again), each cut to two lines; -v and JSON keep it whole."""
        lines = evidence_tail(text, n)
        if once:
            lines = [ln for ln in lines if not ln.startswith("... (")]
            if not lines or lines[-1].strip() in self.evidence_seen:
                return
            lines = [ln for ln in lines if ln.strip() not in self.evidence_seen]
        for ln in lines:
            self.evidence_seen.add(ln.strip())
            wrapped = textwrap.wrap(ln, width=self.width, initial_indent=indent + "| ",
                                    subsequent_indent=indent + "|   ", break_long_words=True,
                                    break_on_hyphens=False) or [indent + "|"]
            if once and len(wrapped) > 2:
                ell = "..." if self.ascii else "…"
                wrapped = wrapped[:2]
                wrapped[1] = wrapped[1][:self.width - len(ell)] + ell
            self.lines.extend(w.rstrip() for w in wrapped)


def _observed(report: Report, root: RootCause) -> str:
    findings = root_findings(report, root)
    if findings:
        return first_sentence(findings[0].message)
    r = report.result(root.check_id)
    return r.summary if r else ""


def _root_mark(report: Report, root: RootCause) -> Status:
    """A blocking root is marked as failing even where its own check only warned (a low limit
    that made another check fail); any other root by its check's own status."""
    r = report.result(root.check_id)
    blocking = root.severity is Severity.BLOCKING
    if r is None:
        return Status.FAIL if blocking else Status.WARN
    return Status.FAIL if blocking and r.status is not Status.ERROR else r.status


def _title(report: Report, root: RootCause) -> str:
    findings = root_findings(report, root)
    r = report.result(root.check_id)
    return findings[0].title if findings else (r.title if r else root.check_id)


def _summary(out: _Out, report: Report) -> None:
    d = report.diagnosis
    roots = all_roots(report)
    n_entries = len(roots) + len(d.errors)
    # few entries: code and title, then the observed fact on up to two lines; more: the code and
    # the observed fact on up to two lines (the title is in -v and JSON); many: code and title
    mode = "full" if n_entries <= 2 else ("observed" if n_entries <= _SUMMARY_DETAILED else "title")
    shown = 0
    for label, group in ((f"{len(d.blocking)} BLOCKING ROOT CAUSE{'S' if len(d.blocking) != 1 else ''}",
                          [r for r in roots if r.severity is Severity.BLOCKING]),
                         ("DEGRADED: works, but slower or at risk",
                          [r for r in roots if r.severity is not Severity.BLOCKING])):
        if not group:
            continue
        out.heading(label)
        for root in group:
            if shown >= _SUMMARY_MAX:
                break
            shown += 1
            mark = _root_mark(report, root)
            if mode == "observed":
                out.item(mark, f"{root_label(report, root)}: {_observed(report, root)}", " ", max_lines=2)
                continue
            out.item(mark, f"{root_label(report, root)}: {_title(report, root)}", " ",
                     max_lines=1 if mode == "title" else 0)
            if mode == "full":
                out.wrap(_observed(report, root), "     ", max_lines=2)
    if d.errors:
        out.heading(f"COULD NOT COMPLETE ({len(d.errors)}): stackpeel could not measure these")
        for cid in d.errors:
            if shown >= _SUMMARY_MAX:
                break
            shown += 1
            r = report.result(cid)
            out.item(Status.ERROR, f"{cid}: {r.summary if r else ''}", " ", max_lines=1 if mode == "title" else 2)
    if n_entries > shown:
        out.line(f" ... and {n_entries - shown} more (-v lists every one)")


def _fix_block(out: _Out, report: Report, verbose: bool) -> None:
    commands, codes, manual = fix_plan(report)
    if commands:
        out.line()
        out.heading("FIX: paste into a shell of this environment")
        for c in commands:
            out.line("    " + c.command)  # commands are never wrapped nor cut
    if manual:
        if not commands:
            out.line()
        out.heading("BY HAND: no command here can do it")
        for code, text, cmds in manual:
            out.wrap(f"{code}: {text}", "   ", first=" - ", max_lines=0 if verbose else 2)
            for c in cmds:
                out.line(f"     $ {c.command}")  # where the prose says, not here: never in the block


def _symptom_line(out: _Out, report: Report, s: CheckResult, also: List[RootCause], indent: str,
                  arrow: str = "") -> None:
    """-v: a symptom with its whole message, evidence and fix."""
    codes = ", ".join(f.code for f in s.findings)
    # a check that could not complete shows what happened (its note names the cause beside it)
    title = s.findings[0].title if s.findings and s.status is not Status.ERROR else s.summary
    out.item(s.status, f"{title}" + (f" [{codes}]" if codes else "") + f" ({s.id})", indent, lead=arrow)
    sub = indent + " " * (len(arrow) + 3)
    if also:
        out.wrap("also caused by: " + ", ".join(root_label(report, o) for o in also), sub)
    if s.findings:
        out.wrap(s.findings[0].message, sub)
    for f in s.findings:
        if f.evidence:
            out.evidence(f.evidence, 10, sub, once=False)
            break
    for f in s.findings:
        if f.remedy:
            out.wrap("Fix: " + f.remedy.text, sub + "  ", first=sub)
            for c in f.remedy.commands:
                out.line(f"{sub}  $ {c.command}")


def _explains(out: _Out, report: Report, budget: int) -> None:
    """Each symptom once, under the nearest root that explains it, grouped by the other roots
    that explain it too. Evidence lines are added, first symptoms first, while the whole report
    stays within ``budget`` lines (-v shows them all)."""
    plan = []  # (root, [(also, [symptom results])], [blocked, no finding], [died of the root, its note only])
    for root in all_roots(report):
        mine = owned_symptoms(report, root)
        if not mine:
            continue  # a root whose symptoms all sit under another: named there in "also caused by"
        groups: List = []
        quiet = [r for _, r, _ in mine if r.status is Status.BLOCKED and not r.findings]
        # checks whose probe died of the root, with only its note (a limit every probe starts under):
        # listed by code they would all read the root's own code, so by id, once over the budget
        died = [r for _, r, _ in mine if r.status is Status.ERROR and r.findings
                and all(f.severity is Severity.INFO and f.code in root.codes for f in r.findings)]
        mine = sorted(mine, key=lambda t: len(t[2]) > 0)  # symptoms of this root alone first
        for _, sym, also in mine:
            if sym in quiet:
                continue
            key = tuple(root_label(report, o) for o in also)
            if not groups or groups[-1][0] != key:
                groups.append((key, []))
            groups[-1][1].append(sym)
        plan.append((root, groups, quiet, died))
    if not plan:
        return
    def build(compact: Set[str]):
        """The section's lines, and where each symptom's evidence would go. Roots in ``compact``
        list their symptoms by code on wrapped lines instead of one title per line."""
        body = _Out(out.width, out.color, out.ascii)
        slots = []  # (index into body.lines after which evidence goes, finding evidence)
        for root, groups, quiet, died in plan:
            body.wrap(f"{root_label(report, root)} explains:", "   ", first="")
            for key, syms in groups:
                if key:
                    body.wrap(f"also caused by {', '.join(key)}:", "     ", first="   ")
                if root.check_id in compact:
                    syms = [x for x in syms if x not in died]
                    if syms:
                        worst = Status.FAIL if any(x.status is Status.FAIL for x in syms) else syms[0].status
                        body.item(worst, ", ".join(x.findings[0].code if x.findings else x.id for x in syms), "   ")
                    continue
                for sym in syms:
                    codes = ", ".join(f.code for f in sym.findings)
                    title = sym.findings[0].title if sym.findings and sym.status is not Status.ERROR \
                        else sym.summary
                    body.item(sym.status, title + (f" [{codes}]" if codes else ""), "   ")
                    ev = next((f.evidence for f in sym.findings if f.evidence), "")
                    if ev:
                        slots.append((len(body.lines), ev))
            if died and root.check_id in compact:
                body.wrap("could not complete because of it (its probe died): " + ", ".join(r.id for r in died),
                          "     ", first="   ")
            if quiet:
                body.wrap("not run because of it: " + ", ".join(r.id for r in quiet), "     ", first="   ")
        return body, slots

    # over the budget even without evidence: the roots with the most symptoms list them by code
    compact: Set[str] = set()
    body, slots = build(compact)
    by_size = sorted(plan, key=lambda p: -sum(len(syms) for _, syms in p[1]))
    for root, groups, _, _ in by_size:
        if len(out.lines) + len(body.lines) + 1 <= budget:
            break
        if sum(len(syms) for _, syms in groups) > 1:
            compact.add(root.check_id)
            body, slots = build(compact)
    room = budget - len(out.lines) - len(body.lines) - 1
    inserts = {}
    for at, ev in slots:
        probe = _Out(out.width, out.color, out.ascii)
        probe.evidence_seen = out.evidence_seen
        probe.evidence(ev, 1, "      ", once=True)
        if probe.lines and len(probe.lines) <= room:
            room -= len(probe.lines)
            inserts[at] = probe.lines
        elif probe.lines:
            for ln in probe.lines:  # not shown: let a later symptom quote it
                out.evidence_seen.discard(ln[ln.index("|") + 2:].strip())
    out.line()
    for i, ln in enumerate(body.lines):
        out.line(ln)
        for extra in inserts.get(i + 1, ()):
            out.line(extra)


def _root_full(out: _Out, report: Report, n: int, root: RootCause) -> None:
    """-v: a root with its whole message, evidence, fix and the full chain below it."""
    r = report.result(root.check_id)
    findings = root_findings(report, root)
    out.item(_root_mark(report, root), f"{n}. {_title(report, root)} [{root_label(report, root)}] ({r.id})", " ")
    for f in findings:
        out.wrap(f.message, "     ")
        if f.evidence:
            out.line("     Evidence:")
            out.evidence(f.evidence, 12, "       ", once=False)
    for f in findings:
        if f.remedy:
            out.wrap("Fix: " + f.remedy.text, "       ", first="     ")
            for c in f.remedy.commands:
                out.line(f"       $ {c.command}")
    rows = symptom_rows(report, root)
    owners = symptom_owners(report)
    if rows:
        out.line(f"     Explains {len(rows)} symptom{'s' if len(rows) != 1 else ''}:")
        arrow = "`-> " if out.ascii else "└─ "
        for depth, s in rows:
            pad = "     " + "  " * min(depth - 1, 5)
            also = [o for o in owners.get(s.id, []) if o is not root]
            _symptom_line(out, report, s, also, pad, arrow)
    out.line()


def _errors_full(out: _Out, report: Report) -> None:
    d = report.diagnosis
    if not d.errors:
        return
    out.heading(f"CHECKS THAT COULD NOT COMPLETE ({len(d.errors)})")
    for cid in d.errors:
        r = report.result(cid)
        out.item(Status.ERROR, f"{r.title} ({r.id})", " ")
        out.wrap(r.summary, "     ")
        if r.failure:
            fl = r.failure
            bits = [f"reason={fl.reason}"]
            if fl.exit_code is not None:
                bits.append(f"exit={fl.exit_code}")
            if fl.signal is not None:
                bits.append(f"signal={fl.signal}")
            if fl.timed_out:
                bits.append("timed out")
            out.line("     " + ", ".join(bits))
            out.evidence(fl.stderr_tail or fl.detail, 8, "       ", once=False)
    out.line()


def _checks(out: _Out, report: Report, verbose: bool) -> None:
    if not verbose:
        counts = status_counts(report.results)
        names = [("pass", "ok"), ("fail", "failed"), ("warn", "warned"), ("blocked", "blocked"),
                 ("error", "could not complete"), ("skip", "skipped")]
        bits = [f"{counts[k]} {word}" for k, word in names if counts.get(k)]
        out.wrap(f"Checks: {', '.join(bits)}; -v for details.", "  ", first="")
        return
    out.heading("CHECKS")
    idw = max((len(r.id) for r in report.results), default=10)
    markw = max(len(a if out.ascii else u) for u, a in STATUS_MARK.values())
    for r in report.results:
        indent = " " * (markw + idw + 4)
        plain = (out.ascii and STATUS_MARK[r.status][1] or STATUS_MARK[r.status][0]).ljust(markw)
        start = len(out.lines)
        out.wrap(r.summary, indent, first=f" {plain} {r.id.ljust(idw)}  ")
        if out.color:
            out.lines[start] = out.lines[start].replace(plain, out.mark(r.status, pad=True), 1)
        for f in r.findings:
            if f.severity is Severity.INFO:
                out.wrap(f"{f.code}: {f.message}", indent)


def render_text(report: Report, width: int = DEFAULT_WIDTH, color: bool = False, ascii_only: bool = False,
                verbose: bool = False, budget: int = 40) -> str:
    """The report as text. ``budget``: the line count the default layout aims at; it decides
    how many evidence lines the symptoms get (the summary, fix block and symptoms always show)."""
    out = _Out(width, color, ascii_only)
    _, host = header_facts(report)
    t = report.target
    source = t.get("source")
    chosen = f", from {source}" if source and source != "--python" else ""  # --python: the user named it
    out.wrap(f"stackpeel {report.tool_version}: {t.get('python')} (Python {t.get('version', '?')}{chosen})", "  ",
             first="")
    out.lines[0] = out.lines[0].replace(f"stackpeel {report.tool_version}",
                                        out.style(f"stackpeel {report.tool_version}", "bold"), 1)
    n = len(report.results)
    host = host.replace("container: ", "in ")
    out.wrap(f"Host: {host}; {n} check{'s' if n != 1 else ''} in {report.duration_s:.1f} s.", "  ", first="")
    note = selection_note(report)
    if note:
        out.wrap(note, "")
    d = report.diagnosis
    if d.blocking or d.degraded or d.errors:
        out.line()
        _summary(out, report)
        _fix_block(out, report, verbose)
    if verbose:
        out.line()
        for i, root in enumerate(all_roots(report), 1):
            _root_full(out, report, i, root)
        _errors_full(out, report)
    else:
        footer = _Out(out.width, out.color, out.ascii)
        _checks(footer, report, verbose)
        _explains(out, report, budget - len(footer.lines) - 2)
        out.line()
    _checks(out, report, verbose)
    if verbose:
        out.line()
    out.line(out.style(exit_line(report), "bold"))
    return "\n".join(out.lines) + "\n"


__all__ = ["render_text", "terminal_width", "first_lines"]
