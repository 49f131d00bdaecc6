"""Renderers of an :class:`~stackpeel.explain.reasoning.Explanation`: pure functions,
Explanation in, text out. JSON carries ``schema_version``."""

from __future__ import annotations

import json
import textwrap
from typing import List

from .reasoning import Candidate, Explanation

FORMATS = ("text", "json", "markdown")
WIDTH = 88
#: evidence text longer than this is shortened in text/markdown (JSON keeps it whole)
EVIDENCE_CHARS = 220


def render(expl: Explanation, fmt: str = "text") -> str:
    if fmt == "text":
        return render_text(expl)
    if fmt == "json":
        return render_json(expl)
    if fmt == "markdown":
        return render_markdown(expl)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def render_json(expl: Explanation) -> str:
    return json.dumps(expl.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _short(text: str, n: int = EVIDENCE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _wrap(text: str, indent: str) -> List[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def _live_text(c: Candidate) -> str:
    if not c.live:
        return ""
    v = c.live
    return f"{v.verdict} by {v.check} ({v.status})" + (f": {_short(v.detail, 160)}" if v.detail else "")


def _size(expl: Explanation) -> str:
    mb = expl.bytes / 1e6
    size = f"{mb:.1f} MB" if mb >= 1 else f"{expl.bytes:,} bytes"
    return f"{expl.lines:,} lines, {size}"


def render_text(expl: Explanation) -> str:
    out: List[str] = [f"stackpeel explain: {expl.source} ({_size(expl)})", ""]
    if not expl.candidates:
        out.append("No known problem found in this log.")
        if expl.exceptions:
            last = expl.exceptions[-1]
            out.append(f"Last exception (line {last.line}): {_short(f'{last.type}: {last.message}')}")
        if expl.unexplained:
            out.append("Error lines stackpeel does not recognise:")
            for ev in expl.unexplained[:5]:
                out.append(f"  line {ev.line}: {_short(ev.text, 160)}")
        out.append("")
        out.append("If this log shows a GPU stack failure, `stackpeel check` probes the machine directly.")
        return "\n".join(out) + "\n"

    root = expl.candidates[0]
    head = "Root cause" if root.kind == "root" else "Symptom (cause not in the log)"
    out.append(f"{head}: {root.code}  [{root.layer}]  {root.title}")
    out.extend(_candidate_body(root, "  "))
    rest = expl.candidates[1:]
    explained = [c for c in rest if c.code in root.explains]
    others = [c for c in rest if c not in explained]
    if explained:
        out.append("")
        out.append("Symptoms it explains:")
        for c in explained:
            ev = c.evidence[0] if c.evidence else None
            where = f"line {ev.line}: {_short(ev.text, 120)}" if ev else ""
            via = [b for b in c.explained_by if b != root.code and b in root.explains]
            how = f" (through {', '.join(via)})" if via else ""
            out.append(f"  {c.code} [{c.layer}]{how}  {where}")
    if others:
        out.append("")
        out.append("Other candidates:")
        for i, c in enumerate(others, 2):
            ev = c.evidence[0] if c.evidence else None
            out.append(f"  {i}. {c.code} [{c.layer}, {c.kind}]  {c.title}")
            if ev:
                out.append(f"     line {ev.line}: {_short(ev.text, 120)}")
            if c.could_be:
                out.append(f"     could be caused by: {', '.join(c.could_be)}")
            if c.live:
                out.append(f"     live: {_live_text(c)}")
    if expl.exceptions:
        out.append("")
        out.append(f"Exceptions in the log ({expl.n_exceptions}; last shown):")
        for e in expl.exceptions[-4:]:
            link = {"cause": "caused by the one at", "context": "raised while handling the one at"}.get(e.chain or "")
            tail = f"  ({link} line {e.parent_line})" if link and e.parent_line else ""
            trunc = " [truncated]" if e.truncated else ""
            stream = f"{e.stream} " if e.stream else ""
            out.append(f"  line {e.line}: {stream}{_short(f'{e.type}: {e.message}', 140)}{trunc}{tail}")
    if expl.live is not None:
        out.append("")
        if expl.live.ran:
            out.append(f"Live checks on this machine ({expl.live.python}): {', '.join(expl.live.checks)}")
            if expl.live.found:
                out.append(f"  blocking problems found live: {', '.join(expl.live.found)}")
        else:
            out.append(f"Live checks not run: {expl.live.note}")
    for note in expl.notes:
        out.append("")
        out.extend(_wrap(f"Note: {note}", ""))
    return "\n".join(out) + "\n"


def _candidate_body(c: Candidate, ind: str) -> List[str]:
    out: List[str] = []
    for ev in c.evidence:
        stream = f"{ev.stream} " if ev.stream else ""
        out.append(f"{ind}line {ev.line}: {stream}{_short(ev.text)}")
    if c.count > len(c.evidence):
        out.append(f"{ind}({c.count} matching lines in all)")
    out.extend(_wrap(c.explanation, ind))
    if c.could_be:
        label = "Could be caused by: " if c.kind == "symptom" else "The same text can also come from: "
        out.extend(_wrap(label + ", ".join(c.could_be), ind))
    out.extend(_wrap("Fix: " + c.fix, ind))
    if c.live:
        out.append(f"{ind}Live: {_live_text(c)}")
    for link in c.links[:3]:
        out.append(f"{ind}See: {link}")
    return out


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def render_markdown(expl: Explanation) -> str:
    out: List[str] = [f"## stackpeel explain: `{_md_escape(expl.source)}`", "", f"{_size(expl)}.", ""]
    if not expl.candidates:
        out.append("**No known problem found in this log.**")
        if expl.exceptions:
            last = expl.exceptions[-1]
            out += ["", f"Last exception (line {last.line}):", "", "```",
                    _short(f"{last.type}: {last.message}", 400), "```"]
        return "\n".join(out) + "\n"
    root = expl.candidates[0]
    head = "Root cause" if root.kind == "root" else "Symptom (the cause is not in the log)"
    out.append(f"### {head}: `{root.code}` ({root.layer}): {root.title}")
    out.append("")
    out.append("```")
    for ev in root.evidence:
        out.append(f"{ev.line}: {_short(ev.text)}")
    out.append("```")
    out.append("")
    out.append(root.explanation)
    out.append("")
    if root.could_be:
        label = "Could be caused by: " if root.kind == "symptom" else "The same text can also come from: "
        out.append(label + ", ".join(f"`{c}`" for c in root.could_be))
        out.append("")
    out.append(f"**Fix:** {root.fix}")
    if root.live:
        out += ["", f"**Live:** {_live_text(root)}"]
    if root.links:
        out += ["", "See: " + ", ".join(root.links)]
    if len(expl.candidates) > 1:
        out += ["", "### All candidates", "", "| # | code | layer | kind | first evidence | live |", "|---|---|---|---|---|---|"]
        for i, c in enumerate(expl.candidates, 1):
            ev = c.evidence[0] if c.evidence else None
            first = f"line {ev.line}: {_md_escape(_short(ev.text, 100))}" if ev else ""
            live = _md_escape(c.live.verdict) if c.live else ""
            out.append(f"| {i} | `{c.code}` | {c.layer} | {c.kind} | {first} | {live} |")
    if expl.exceptions:
        out += ["", "### Exceptions", ""]
        for e in expl.exceptions[-4:]:
            chain = f" ({e.chain} of line {e.parent_line})" if e.chain and e.parent_line else ""
            out.append(f"- line {e.line}: `{_md_escape(_short(f'{e.type}: {e.message}', 140))}`{chain}")
    if expl.live is not None:
        out += ["", "### Live checks", ""]
        out.append(f"Ran {', '.join(expl.live.checks)} on `{expl.live.python}`." if expl.live.ran
                   else f"Not run: {expl.live.note}")
    for note in expl.notes:
        out += ["", f"> {note}"]
    return "\n".join(out) + "\n"
