"""Renderers of an :class:`~stackpeel.explain.reasoning.Explanation`: pure functions,
Explanation in, text out. JSON carries ``schema_version``; HTML is drawn by
:mod:`stackpeel.render.explain_html` with the check page's machinery.

Text follows the rules of the check report (issue 18): the answer first (the root cause and the
log line that proves it), one fix block, each symptom once, prose wrapped at the width and
commands never cut; Markdown shows the summary and fix and folds the rest.
"""

from __future__ import annotations

import json
import textwrap
from typing import List, Optional

from .reasoning import GUESS_BASES, Candidate, Explanation

FORMATS = ("text", "json", "markdown", "html")
#: columns the text is laid out at (the command passes the terminal's)
WIDTH = 80
#: evidence text longer than this is shortened in text/markdown (JSON keeps it whole)
EVIDENCE_CHARS = 220



def _could_be_text(c, quote: str = "") -> str:
    """The causes a candidate could have, each with the context clues the log holds for it
    (why it ranks where it does)."""
    why = dict(c.could_be_clues)
    parts = []
    for code in c.could_be:
        lits = why.get(code)
        hint = f" (the log mentions {', '.join(repr(x) for x in lits[:3])})" if lits else ""
        parts.append(f"{quote}{code}{quote}{hint}")
    return ", ".join(parts)

def render(expl: Explanation, fmt: str = "text", width: int = WIDTH) -> str:
    if fmt == "text":
        return render_text(expl, width=width)
    if fmt == "json":
        return render_json(expl)
    if fmt == "markdown":
        return render_markdown(expl)
    if fmt == "html":
        from ..render.explain_html import render_explanation_html
        return render_explanation_html(expl)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def render_json(expl: Explanation) -> str:
    return json.dumps(expl.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _short(text: str, n: int = EVIDENCE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _wrap(text: str, indent: str, width: int = WIDTH, first: Optional[str] = None, max_lines: int = 0) -> List[str]:
    """Prose wrapped at ``width``; a word is broken only when it alone is wider than a line.
    ``max_lines`` cuts the rest with "..." (the JSON keeps the whole text)."""
    first = indent if first is None else first
    out = textwrap.wrap(text.replace("\r", " ").replace("\n", " "), width, initial_indent=first,
                        subsequent_indent=indent, break_long_words=True, break_on_hyphens=False) or [first.rstrip()]
    if max_lines and len(out) > max_lines:
        out = out[:max_lines]
        out[-1] = out[-1][: width - 3].rstrip() + "..."
    return out


def _live_text(c: Candidate) -> str:
    if not c.live:
        return ""
    v = c.live
    return f"{v.verdict} by {v.check} ({v.status})" + (f": {_short(v.detail, 160)}" if v.detail else "")


def _size(expl: Explanation) -> str:
    mb = expl.bytes / 1e6
    size = f"{mb:.1f} MB" if mb >= 1 else f"{expl.bytes:,} bytes"
    return f"{expl.lines:,} line{'' if expl.lines == 1 else 's'}, {size}"


def _evidence_lines(c: Candidate, ind: str, width: int) -> List[str]:
    out: List[str] = []
    for ev in c.evidence:
        stream = f"{ev.stream} " if ev.stream else ""
        out.extend(_wrap(f"line {ev.line}: {stream}{ev.text}", ind + "  ", width, first=ind, max_lines=2))
    if c.count > len(c.evidence):
        out.append(f"{ind}({c.count} matching lines in all)")
    return out


def _fix_lines(c: Candidate, ind: str, width: int) -> List[str]:
    """What to do about ``c``: the prose, and the command that confirms it on the affected machine."""
    out = _wrap("Fix: " + c.fix, ind + "  ", width, first=ind)
    if c.check:
        out.append(f"{ind}  On the affected machine, confirm with:")
        out.append(f"{ind}    stackpeel check --only {c.check}")  # a command: never wrapped
    return out


def _last_exception_title(expl: Explanation) -> str:
    """How the exception that ended the run is introduced: the log's last, or, where a launcher's
    summary (torchrun's ChildFailedError) reports a worker's own traceback printed before it, the
    worker's, with the launcher's line named (reasoning.Explanation.last_exception)."""
    last, launcher = expl.last_exception, expl.launcher_exception
    if launcher is None:
        return f"Last exception (line {last.line})"
    kind = (launcher.type or "exception").rsplit(".", 1)[-1]
    return f"The worker's exception (line {last.line}; the launcher's {kind} at line {launcher.line} reports it)"


def render_text(expl: Explanation, width: int = WIDTH) -> str:
    """The explanation as text, laid out like ``stackpeel check``'s report: the root cause with the
    line that proves it, then one fix block, then each symptom once ("also caused by" when other
    candidates explain it too), then the other candidates and the exceptions. Prose wraps at
    ``width``; commands are never cut."""
    out: List[str] = _wrap(f"stackpeel explain: {expl.source} ({_size(expl)})", "  ", width, first="") + [""]
    if not expl.candidates:
        if expl.interrupted is not None:
            out.extend(_wrap(f"Interrupted: the run was stopped by the user (line {expl.interrupted.line}: "
                             f"{expl.interrupted.text}), and no error precedes it. An interruption is no "
                             "failure: no cause is guessed.", "  ", width, first=""))
        elif expl.suspect_only:
            out.extend(_wrap(f"Possible failure: no error line, but the lines below say something went wrong, "
                             f"and no knowledge-base entry explains them (fingerprint {expl.fingerprint}).",
                             "  ", width, first=""))
        elif expl.has_errors:
            out.append(f"Unknown error: no knowledge-base entry explains it (fingerprint {expl.fingerprint}).")
        else:
            out.append("No error in this log. No known problem found.")
        if expl.exceptions:
            last = expl.last_exception
            out.extend(_wrap(f"{_last_exception_title(expl)}: {last.shown}", "  ", width,
                             first="", max_lines=3))
        if expl.unexplained:
            out.append("Lines that say something went wrong:" if expl.suspect_only else
                       "Error lines stackpeel does not recognise:")
            for ev in expl.unexplained[:5]:
                out.extend(_wrap(f"line {ev.line}: {ev.text}", "    ", width, first="  ", max_lines=2))
        if expl.interrupted is not None:
            for note in expl.notes:
                out.extend(_wrap(f"Note: {note}", "  ", width, first=""))
        out.append("")
        out.extend(_wrap("If this log shows a GPU stack failure, `stackpeel check` probes the machine directly.",
                         "", width))
        return "\n".join(out) + "\n"

    root = expl.candidates[0]
    if root.basis in GUESS_BASES and not (root.live and root.live.verdict == "confirmed"):
        return _render_guesses_text(expl, out, width)
    out.extend(_wrap(f"{_headline(root)}: {root.code}  [{root.layer}]  {root.title}", "  ", width, first=""))
    out.extend(_evidence_lines(root, "  ", width))
    out.extend(_wrap(root.explanation, "  ", width))
    if root.facts and root.basis not in ("combination", "facts"):
        out.extend(_wrap(_facts_text(root), "  ", width))
    if root.could_be:
        label = "Could be caused by: " if root.kind == "symptom" else "The same text can also come from: "
        out.extend(_wrap(label + _could_be_text(root), "  ", width))
    if root.live:
        out.extend(_wrap(f"Live: {_live_text(root)}", "    ", width, first="  "))
    out.append("")
    out.extend(_fix_lines(root, "", width))
    for link in root.links[:3]:
        out.append(f"  See: {link}")
    rest = expl.candidates[1:]
    explained = [c for c in rest if c.code in root.explains]
    others = [c for c in rest if c not in explained]
    if explained:
        out.append("")
        out.append("Symptoms it explains:")
        for c in explained:
            ev = c.evidence[0] if c.evidence else None
            where = f"  line {ev.line}: {ev.text}" if ev else ""
            via = [b for b in c.explained_by if b != root.code and b in root.explains]
            how = f" (through {', '.join(via)})" if via else ""
            out.extend(_wrap(f"{c.code} [{c.layer}]{how}{where}", "    ", width, first="  ", max_lines=3))
            also = [b for b in c.explained_by if b != root.code and b not in root.explains]
            if also:
                out.extend(_wrap("also caused by: " + ", ".join(also), "      ", width, first="    "))
    if others:
        out.append("")
        out.append("Other candidates:")
        for i, c in enumerate(others, 2):
            out.extend(_wrap(f"{i}. {c.code} [{c.layer}, {c.kind}]  {c.title}", "     ", width, first="  "))
            out.extend(_evidence_lines(c, "     ", width)[:2])
            if c.could_be:
                out.extend(_wrap(f"could be caused by: {', '.join(c.could_be)}", "       ", width, first="     "))
            if c.live:
                out.extend(_wrap(f"live: {_live_text(c)}", "       ", width, first="     "))
            if c.fix and c.kind == "root":
                out.extend(_wrap("fix: " + c.fix, "       ", width, first="     ", max_lines=3))
    if expl.exceptions:
        out.append("")
        out.append(f"Exceptions in the log ({expl.n_exceptions}; last shown):")
        for e in expl.exceptions[-4:]:
            link = {"cause": "caused by the one at", "context": "raised while handling the one at"}.get(e.chain or "")
            tail = f"  ({link} line {e.parent_line})" if link and e.parent_line else ""
            if e is expl.launcher_exception:
                tail = f"  (the launcher's report of the worker's exception at line {expl.last_exception.line})"
            trunc = " [truncated]" if e.truncated else ""
            stream = f"{e.stream} " if e.stream else ""
            lines = _wrap(f"line {e.line}: {stream}{_short(f'{e.type}: {e.message}', 140)}{trunc}", "    ", width,
                          first="  ")
            if tail and len(lines[-1]) + len(tail) <= width:
                lines[-1] += tail
            elif tail:
                lines.append("    " + tail.strip())  # the link between exceptions stays whole
            out.extend(lines)
    if expl.live is not None:
        out.append("")
        if expl.live.ran:
            out.extend(_wrap(f"Live checks on this machine ({expl.live.python}): {', '.join(expl.live.checks)}",
                             "  ", width, first=""))
            if expl.live.found:
                out.extend(_wrap(f"blocking problems found live: {', '.join(expl.live.found)}", "    ", width,
                                 first="  "))
            if expl.live.provenance != "same":
                out.extend(_wrap(f"The log may come from another machine ({expl.live.provenance_reason}): "
                                 "a check that passes here rules nothing out.", "    ", width, first="  "))
        else:
            out.extend(_wrap(f"Live checks not run: {expl.live.note}", "  ", width, first=""))
    for note in expl.notes:
        out.append("")
        out.extend(_wrap(f"Note: {note}", "", width))
    return "\n".join(out) + "\n"


def _words_text(c: Candidate) -> str:
    """The words that implicated a guessed candidate, and the context that re-ranked it; for a
    guess by resemblance, the threads it resembles."""
    if c.basis == "similar":
        return "resembles " + ", ".join(f"{u} (similarity {x:.2f})" for u, x in c.resembles)
    words = ", ".join(dict.fromkeys(repr(t) for _, t in c.words))
    ctx = f"; context: {', '.join(c.context)}" if c.context else ""
    return f"words: {words}{ctx}" if words else ctx.lstrip("; ")


def _render_guesses_text(expl: Explanation, out: List[str], width: int) -> str:
    """No signature matched, but error lines were found: the codes their words implicate,
    marked as a guess, with the lines used and what to run to know."""
    guesses = [c for c in expl.candidates if c.basis in GUESS_BASES]
    head = ("Possible failure: no error line, and no known message matches the lines that say something went wrong"
            if expl.suspect_only else "Unknown error: no known message matches it")
    out.extend(_wrap(f"{head} (fingerprint {expl.fingerprint}).", "  ", width,
                     first=""))
    how = ("guessed from threads with an established cause whose error lines resemble these"
           if guesses and guesses[0].basis == "similar" else "guessed from the words of the error lines")
    out.extend(_wrap(f"Possible causes, {how} (low confidence):", "  ", width,
                     first=""))
    for i, c in enumerate(guesses, 1):
        out.extend(_wrap(f"{i}. {c.code} [{c.layer}]  {c.title}", "     ", width, first="  "))
        out.extend(_wrap(f"({_words_text(c)})", "     ", width, first="     ", max_lines=2))
        if c.could_be:
            out.extend(_wrap(f"could be caused by: {', '.join(c.could_be)}", "     ", width, first="     "))
        if c.live:
            out.extend(_wrap(f"live: {_live_text(c)}", "       ", width, first="     "))
    used: List = []
    for c in guesses:
        for ev in c.evidence:
            if all(ev.line != u.line or ev.text != u.text for u in used):
                used.append(ev)
    if used:
        out.append("")
        out.append("Lines the guess is made from:" if expl.suspect_only else "Error lines the guess is made from:")
        for ev in sorted(used, key=lambda e: e.line)[:6]:
            stream = f"{ev.stream} " if ev.stream else ""
            out.extend(_wrap(f"line {ev.line}: {stream}{ev.text}", "    ", width, first="  ", max_lines=2))
    top = guesses[0]
    out.append("")
    out.extend(_wrap(f"If it is {top.code}: {top.fix}", "  ", width, first="", max_lines=4))
    out.append("")
    out.extend(_wrap("To know which (if any) it is, on the affected machine run:", "  ", width, first=""))
    out.append("    stackpeel check")  # a command: never wrapped
    checks = list(dict.fromkeys(c.check for c in guesses if c.check))
    if checks:
        out.append(f"    stackpeel check --only {','.join(checks[:4])}")
    if expl.exceptions:
        out.append("")
        last = expl.last_exception
        trunc = " [truncated]" if last.truncated else ""
        out.extend(_wrap(f"{_last_exception_title(expl)}: {_short(last.shown, 200)}{trunc}",
                         "  ", width, first="", max_lines=3))
    for note in expl.notes:
        out.append("")
        out.extend(_wrap(f"Note: {note}", "", width))
    return "\n".join(out) + "\n"


def _headline(c: Candidate) -> str:
    """What the top candidate is, and how sure stackpeel is of it."""
    live = c.live.verdict if c.live else ""
    if c.basis == "prior":
        if live == "confirmed":
            return "Root cause (a base-rate guess, confirmed live)"
        # the threads showed the symptom alone (a prior) or beside other lines (the order table)
        how = f"{c.prior[1]} of {c.prior[2]} earlier threads that showed {c.prior[0]}" if c.prior else \
            "earlier threads that showed this symptom"
        return f"Likeliest cause (a base-rate guess from {how}; not in the log, low confidence)"
    if c.confidence == "low":
        return "Root cause (guessed from words, confirmed live)" if live == "confirmed" else \
            "Possible cause (guessed from the words of the error lines, low confidence)"
    if c.confidence == "inferred":
        return "Likely root cause (confirmed live)" if live == "confirmed" else \
            "Likely root cause (inferred from the log's context)"
    if c.basis in ("combination", "facts") and live != "confirmed":
        what = "a known-bad combination of the versions the log prints" if c.basis == "combination" else \
            "the versions and GPUs the log prints"
        if c.kind == "symptom":
            return f"Symptom (from {what})"
        return f"Root cause (from {what})" if c.confidence == "high" else \
            f"Likely root cause (from {what}, medium confidence)"
    if c.kind == "symptom":
        return ("Symptom (the versions the log prints match a known-bad combination that produces it)"
                if any(r.startswith("combination:") for r in c.facts) else "Symptom (cause not in the log)")
    return "Root cause (confirmed live)" if live == "confirmed" else "Root cause"


def _facts_text(c: Candidate) -> str:
    """'Supported by the versions and GPUs the log prints: combination:<id>, state:<rule>'."""
    return "Supported by the versions and GPUs the log prints: " + ", ".join(c.facts) if c.facts else ""


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def render_markdown(expl: Explanation) -> str:
    out: List[str] = [f"## stackpeel explain: `{_md_escape(expl.source)}`", "", f"{_size(expl)}.", ""]
    if not expl.candidates:
        out.append(f"**Interrupted** (line {expl.interrupted.line}: `{_md_escape(expl.interrupted.text)}`): "
                   "the run was "
                   "stopped by the user and no error precedes it; an interruption is no failure, no cause is guessed."
                   if expl.interrupted is not None else
                   f"**Possible failure** (fingerprint `{expl.fingerprint}`): no error line, but some lines say "
                   "something went wrong, and no knowledge-base entry explains them." if expl.suspect_only else
                   f"**Unknown error** (fingerprint `{expl.fingerprint}`): no knowledge-base entry explains it."
                   if expl.has_errors else "**No error in this log. No known problem found.**")
        if expl.exceptions:
            last = expl.last_exception
            out += ["", f"{_last_exception_title(expl)}:", "", "```",
                    _short(last.shown, 400), "```"]
        return "\n".join(out) + "\n"
    root = expl.candidates[0]
    if root.basis in GUESS_BASES:
        out.append(f"**Possible failure** (fingerprint `{expl.fingerprint}`): no error line, and no known message "
                   "matches the lines that say something went wrong." if expl.suspect_only else
                   f"**Unknown error** (fingerprint `{expl.fingerprint}`): no known message matches it.")
        out.append("")
    out.append(f"### {_headline(root)}: `{root.code}` ({root.layer}): {root.title}")
    out.append("")
    out.append("```")
    for ev in root.evidence:
        out.append(f"{ev.line}: {_short(ev.text)}")
    out.append("```")
    out.append("")
    if root.basis in GUESS_BASES:
        out.append(f"Guessed ({_md_escape(_words_text(root))}); other guesses: "
                   + (", ".join(f"`{c.code}`" for c in expl.candidates[1:] if c.basis in GUESS_BASES) or "none")
                   + ". Run `stackpeel check` on the affected machine to know which.")
        out.append("")
    out.append(root.explanation)
    out.append("")
    if root.facts:
        out.append(_facts_text(root).replace(": ", ": `", 1).replace(", ", "`, `") + "`")
        out.append("")
    if root.could_be:
        label = "Could be caused by: " if root.kind == "symptom" else "The same text can also come from: "
        out.append(label + _could_be_text(root, "`"))
        out.append("")
    out.append(f"**Fix:** {root.fix}")
    if root.live:
        out += ["", f"**Live:** {_live_text(root)}"]
    if root.links:
        out += ["", "See: " + ", ".join(root.links)]
    if root.check:
        out += ["", "Confirm on the affected machine:", "", "```sh", f"stackpeel check --only {root.check}", "```"]
    symptoms = [c for c in expl.candidates[1:] if c.code in root.explains]
    if symptoms:
        out += ["", "Symptoms it explains: " + ", ".join(f"`{c.code}`" for c in symptoms)]
    details = len(expl.candidates) > 1 or expl.exceptions or expl.live is not None
    if details:
        out += ["", "<details><summary>Details: every candidate, exceptions, live checks</summary>"]
    if len(expl.candidates) > 1:
        out += ["", "### All candidates", "", "| # | code | layer | kind | first evidence | "
                                              "live |", "|---|---|---|---|---|---|"]
        for i, c in enumerate(expl.candidates, 1):
            ev = c.evidence[0] if c.evidence else None
            first = f"line {ev.line}: {_md_escape(_short(ev.text, 100))}" if ev else ""
            live = _md_escape(c.live.verdict) if c.live else ""
            out.append(f"| {i} | `{c.code}` | {c.layer} | {c.kind} | {first} | {live} |")
    if expl.exceptions:
        out += ["", "### Exceptions", ""]
        for e in expl.exceptions[-4:]:
            chain = f" ({e.chain} of line {e.parent_line})" if e.chain and e.parent_line else ""
            if e is expl.launcher_exception:
                chain = f" (the launcher's report of the worker's exception at line {expl.last_exception.line})"
            out.append(f"- line {e.line}: `{_md_escape(_short(f'{e.type}: {e.message}', 140))}`{chain}")
    if expl.live is not None:
        out += ["", "### Live checks", ""]
        out.append(f"Ran {', '.join(expl.live.checks)} on `{expl.live.python}`." if expl.live.ran
                   else f"Not run: {expl.live.note}")
        if expl.live.ran and expl.live.provenance != "same":
            out.append(f"The log may come from another machine ({_md_escape(expl.live.provenance_reason)}): "
                       "a check that passes here rules nothing out.")
    if details:
        out += ["", "</details>"]
    for note in expl.notes:
        out += ["", f"> {note}"]
    return "\n".join(out) + "\n"
