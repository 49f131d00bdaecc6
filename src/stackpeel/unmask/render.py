"""Renderers for :class:`~.report.RunReport`: pure functions from a report to text.

Text follows the rules of the check report (issue 18): the answer first (which finding codes the
swallowed errors are evidence for, and the one command that finds their root cause and fix on
this machine), then each swallowed error once (the same error swallowed at several places is one
block), lines wrapped at the width with the value column kept, commands never cut.
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from typing import Any, Dict, List, Optional

from .report import Notice, RunReport, Site, Swallowed, short_path

MAX_MESSAGE = 300
#: columns the text is laid out at (the command passes the terminal's)
WIDTH = 80
#: a block line "      raised at     value": wrapped lines continue under the value
_FIELD = re.compile(r"^(\s+(?:raised at|swallowed at|during|then|turned into|evidence for|seen|why listed|"
                    r"score -?\d+:|also swallowed at)\s+)")


def render(report: RunReport, fmt: str = "text", width: int = WIDTH) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "text":
        return render_text(report, width=width)
    raise ValueError(f"unknown format {fmt!r} (text or json)")


def render_json(report: RunReport) -> str:
    out: Dict[str, Any] = report.to_dict()  # envelope keys first
    return json.dumps(out, indent=2, sort_keys=False, default=str) + "\n"


def _title(code: str) -> str:
    """": <the code's title>" from the knowledge base (the words check and explain use)."""
    try:
        from ..knowledge import load

        return ": " + load().get(code).title
    except Exception:  # noqa: BLE001 - a report is still worth printing without titles
        return ""


def _one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _site(site: Optional[Site], except_line: Optional[int] = None) -> str:
    if site is None:
        return "?"
    text = site.short()
    if site.function:
        text += f" in {site.function}"
    if except_line is not None and except_line != site.line:
        text += f" (handler at line {except_line})"
    return text


def _times(n: int) -> str:
    return "1 time" if n == 1 else f"{n} times"


def _command(report: RunReport) -> str:
    if not report.command:
        return "the watched code"
    text = " ".join(shlex.quote(a) for a in report.command)
    return "`" + _one_line(text, 120) + "`"


def _header(report: RunReport) -> List[str]:
    lines = []
    ex = report.exit
    dur = f" after {report.duration:.1f} s" if report.duration is not None else ""
    if ex is None:
        lines.append(f"stackpeel: {_command(report)} is still running{dur}" if report.command
                     else f"stackpeel: swallowed errors seen so far{dur}")
    elif ex.signal:
        lines.append(f"stackpeel run: {_command(report)} was killed by {ex.signal_name}{dur}")
    else:
        lines.append(f"stackpeel run: {_command(report)} exited with status {ex.returncode}{dur}")
    for p in report.processes[:4]:
        how = {"monitoring": "sys.monitoring", "settrace": "settrace fallback "
                                                           "(slower)"}.get(p.mode or "", "not monitored")
        extra = "" if p.complete else "; ended without exit handlers, rebuilt from its journal"
        lines.append(f"  monitored: pid {p.pid}, Python {p.python or '?'}, {how}{extra}")
    if len(report.processes) > 4:
        lines.append(f"  ... and {len(report.processes) - 4} more Python processes")
    return lines


def _swallowed_block(i: int, s: Swallowed, report: RunReport, notices: Dict[Any, Notice]) -> List[str]:
    lines = [f"{i:>2}. {s.type}: {_one_line(s.message) or '(no message)'}"]
    pad = "      "
    lines.append(f"{pad}raised at     {_site(s.raised)}")
    lines.append(f"{pad}swallowed at  {_site(s.handled, s.except_line)}")
    if s.during is not None:
        lines.append(f"{pad}during        {_site(s.during)}")
    for nid in s.notices:
        n = notices.get((s.pid, nid))
        if n is not None:
            what = n.category if n.kind == "warning" else f"log {n.category} ({n.logger})"
            lines.append(f'{pad}then          {what} "{_one_line(n.message, 160)}" ({n.site.short()})')
    if s.converted_to and s.count <= 0:
        ct = s.converted_to
        lines.append(f"{pad}turned into   {ct.get('type')}: {_one_line(ct.get('message') or '', 160)}")
    for c in s.codes:
        lines.append(f"{pad}evidence for  {c}{_title(c)}   (stackpeel codes {c})")
    seen = f"{_times(s.count)}"
    if s.first_time is not None:
        seen += f", first at {s.first_time:.2f} s"
    if s.thread and s.thread != "MainThread":
        seen += f", thread {s.thread}"
    if len(report.processes) > 1:
        seen += f", pid {s.pid}"
    if s.reraised:
        seen += f" (re-raised {_times(s.reraised)} more)"
    lines.append(f"{pad}seen          {seen}")
    if report.show_all:
        lines.append(f"{pad}score {s.score}: {'; '.join(s.reasons) or 'no evidence'}")
        for f in s.stack:
            if "skipped" in f:
                lines.append(f"{pad}  ... {f['skipped']} frames ...")
            else:
                lines.append(f"{pad}  {short_path(f.get('file', '?'))}:{f.get('line')} in {f.get('function')}")
    else:
        lines.append(f"{pad}why listed    {'; '.join(s.reasons)}")
    return lines


def _groups(items: List[Swallowed]) -> List[List[Swallowed]]:
    """The same error (type, message, raise site) swallowed at several places: one block."""
    groups: List[List[Swallowed]] = []
    by_key: Dict[Any, List[Swallowed]] = {}
    for s in items:
        key = (s.pid, s.type, s.message, s.raised.file, s.raised.line)
        if key in by_key:
            by_key[key].append(s)
        else:
            by_key[key] = [s]
            groups.append(by_key[key])
    return groups


def _fit(lines: List[str], width: int, commands: set) -> List[str]:
    """Each line wrapped at ``width``: a block's field lines continue under their value column,
    other lines two spaces in; ``commands`` are never wrapped."""
    out: List[str] = []
    for ln in lines:
        if len(ln) <= width or ln in commands:
            out.append(ln)
            continue
        m = _FIELD.match(ln)
        lead = m.group(1) if m else re.match(r"^\s*(?:\d+\. )?", ln).group(0)
        indent = " " * min(len(lead) if m else len(lead) + 2, width // 2)
        out.extend(textwrap.wrap(ln[len(lead):], width, initial_indent=lead, subsequent_indent=indent,
                                 break_long_words=True, break_on_hyphens=False) or [ln])
    return out


def _summary(report: RunReport) -> List[str]:
    """Which finding codes this run shows evidence for, and the command that finds the cause."""
    codes: List[str] = []
    for s in report.shown_swallowed:
        codes.extend(c for c in s.codes if c not in codes)
    for n in report.shown_notices:
        codes.extend(c for c in n.codes if c not in codes)
    if not codes:
        return []
    return ["", f"Evidence for: {', '.join(codes)} (`stackpeel codes CODE` explains each).",
            "Find the root cause and its fix on this machine:", "    stackpeel check"]


def render_text(report: RunReport, width: int = WIDTH) -> str:
    head = _header(report) + _summary(report)
    return "\n".join(_fit(head + _body(report), width, {"    stackpeel check"})) + "\n"


def _body(report: RunReport) -> List[str]:
    lines: List[str] = []
    notices = {(n.pid, n.id): n for n in report.notices}
    shown = report.shown_swallowed
    groups = _groups(shown)
    index: Dict[Any, int] = {}
    total = len([s for s in report.swallowed if s.count > 0 or report.show_all])
    lines.append("")
    if shown:
        more = "" if report.show_all else "; --all lists every one"
        lines.append(f"Swallowed errors, most relevant first ({len(shown)} of {total} sites{more}):")
        for i, group in enumerate(groups, 1):
            lines.append("")
            lines.extend(_swallowed_block(i, group[0], report, notices))
            for other in group[1:]:
                lines.append(f"      also swallowed at {_site(other.handled, other.except_line)} "
                             f"({_times(other.count)})")
            for s in group:
                index[(s.pid, s.id)] = i
    else:
        events = report.totals.get("swallowed_events", 0)
        lines.append(f"No swallowed error looks relevant ({_times(events)} an exception was caught and not "
                     f"re-raised, at {total} sites; --all lists them).")
    shown_n = report.shown_notices
    if shown_n:
        lines.append("")
        more = "" if report.show_all else f" ({len(shown_n)} of {len(report.notices)}; --all lists every one)"
        lines.append(f"Warnings and fallback messages{more}:")
        for n in shown_n:
            what = n.category if n.kind == "warning" else f"{n.category} {n.logger}"
            tail = f" x{n.count}" if n.count > 1 else ""
            if n.handling is not None and (n.pid, n.handling) in index:
                tail += f", while handling #{index[(n.pid, n.handling)]}"
            if n.codes:
                tail += f", evidence for {', '.join(n.codes)}"
            lines.append(f'  {what}  {n.site.short()}  "{_one_line(n.message, 200)}"{tail}')
    ex = report.exit
    if ex is not None:
        lines.append("")
        if ex.signal:
            lines.append(f"Exit: killed by {ex.signal_name} (the status stackpeel exits with too)")
        else:
            lines.append(f"Exit: status {ex.returncode}")
        if ex.uncaught:
            u = ex.uncaught
            lines.append(f"  uncaught {u.get('type')}: {_one_line(u.get('message') or '', 200)}")
            r = Site.from_dict(u.get("raised"))
            if r is not None:
                lines.append(f"  raised at {_site(r)}")
            same = [index[(s.pid, s.id)] for s in shown
                    if s.type_short == str(u.get("type", "")).rsplit(".", 1)[-1] and s.message == u.get("message")]
            if same:
                lines.append(f"  the same error was swallowed earlier: #{same[0]}")
        if ex.crash_dump:
            dump = [ln for ln in ex.crash_dump.strip().splitlines() if ln.strip()]
            lines.append("  Python stack when the signal arrived (faulthandler):")
            for ln in dump[:12]:
                lines.append("    " + ln.rstrip())
            if len(dump) > 12:
                lines.append(f"    ... {len(dump) - 12} more lines (--format json has all)")
    ov = report.totals.get("overflow") or {}
    if ov:
        lines.append("")
        lines.append("Note: the record hit its size caps; some sites were only counted (see --format json: "
                     "totals.overflow).")
    for note in report.notes:
        lines.append(f"Note: {note}")
    return lines
