"""``stackpeel explain --format html``: the explanation of a log as one self-contained page.

Drawn with the check page's machinery (:mod:`.html`: the page shell, its style and script,
the layered SVG graph): here the boxes are the finding codes the log evidences, and a line
runs from a cause to the symptom it explains (the knowledge base's ``caused_by``, as
:mod:`stackpeel.explain.reasoning` applied it to this log). The root cause is outlined and the
chain of symptoms it explains drawn in red; when the log shows only a symptom, the causes
that can produce it are drawn dashed ("not in the log"). Each box opens its section: the log
lines that evidence it, what it means, and the fix. Exceptions found in the log follow, with
how they chain. The status of every box is written in it, never told by colour alone.

Secrets: the page is rendered from an explanation whose text was scrubbed field by field
(:func:`stackpeel.redact.scrub_fields`); scrubbing the finished HTML would also hit the
page's own markup.
"""

from __future__ import annotations

from typing import List, Set, Tuple

from ..explain.reasoning import Candidate, Explanation
from .html import GraphNode, _e, _slug, draw_graph, page

#: possible causes of a symptom-only log drawn as dashed boxes (the rest are listed)
MAYBE_NODES = 5
SEP = " \u00b7 "
CONFIDENCE = {"stated": "a line of the log names this cause",
              "inferred": "inferred from a symptom and the log's context, not named by a line",
              "symptom": "a symptom: what a cause in a lower layer looks like",
              "low": "a guess (low confidence) from the words of error lines no known message matches"}
SIMILAR = ("a guess (low confidence): the error lines resemble those of threads where this was the established "
           "cause (the first links below)")
PRIOR = ("a base-rate guess (low confidence): the log shows only a symptom, and this was the established cause "
         "in most earlier threads that showed it alone; not read from the log")


def _sec(code: str) -> str:
    return "code-" + _slug(code)


def _lines(c: Candidate) -> str:
    lines = sorted({ev.line for ev in c.evidence})
    if not lines:
        return "no line"
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines[:3])) + \
        ("\u2026" if len(lines) > 3 else "")


def _code_link(code: str, present: Set[str]) -> str:
    return f'<a href="#{_sec(code)}"><code>{_e(code)}</code></a>' if code in present else f"<code>{_e(code)}</code>"


def _evidence(c: Candidate) -> str:
    if not c.evidence:
        return ""
    items = "".join(f"<li>line {ev.line}: {_e((ev.stream + ' ') if ev.stream else '')}{_e(ev.text)}</li>"
                    for ev in c.evidence)
    more = f'<p class="meta">{c.count} matching lines in all</p>' if c.count > len(c.evidence) else ""
    return f'<p>Evidence in the log:</p><ol class="evidence">{items}</ol>{more}'


def _live(c: Candidate) -> str:
    if not c.live:
        return ""
    v = c.live
    return (f"<p><strong>Live on this machine:</strong> {_e(v.verdict)} by <code>{_e(v.check)}</code> "
            f"({_e(v.status)}){': ' + _e(v.detail) if v.detail else ''}</p>")


def _fix(c: Candidate) -> str:
    if not c.fix and not c.check:
        return ""
    out = f'<div class="fix"><p>Fix: {_e(c.fix)}</p>' if c.fix else '<div class="fix">'
    if c.check:
        out += f"<p>On the affected machine, confirm with:</p><pre>stackpeel check --only {_e(c.check)}</pre>"
    return out + "</div>"


def _links(c: Candidate) -> str:
    if not c.links:
        return ""
    items = "".join(f'<li><a href="{_e(u)}" rel="noreferrer noopener">{_e(u)}</a></li>' for u in c.links[:5])
    return f'<p class="meta">Where the cause was established:</p><ul class="meta">{items}</ul>'


def _role(c: Candidate, top: Candidate, chain: Set[str]) -> Tuple[Tuple[str, ...], str]:
    """CSS classes and the words of a box (its second line)."""
    live = {"confirmed": " \u00b7 "
                         "confirmed", "ruled-out": " \u00b7 ruled out"}.get(c.live.verdict if c.live else "", "")
    if c is top and c.kind == "root":
        return ("fail", "root"), f"\u2717 ROOT CAUSE \u00b7 {_lines(c)}{live}"
    if c is top:
        return ("fail", "root"), f"\u2717 SYMPTOM \u00b7 {_lines(c)}{live}"
    if c.code in chain:  # a cause a line names, but one the root explains, is no symptom
        word = "symptom" if c.kind == "symptom" else "explained"
        return ("fail", "chain"), f"\u21b3 {word} \u00b7 {_lines(c)}{live}"
    word = "other cause" if c.kind == "root" else "symptom"
    return ("warn",), f"! {word} \u00b7 {_lines(c)}{live}"


def _graph(expl: Explanation, catalogue) -> Tuple[str, List[str]]:
    """The SVG, and the possible causes drawn dashed (codes not in the log)."""
    from ..registry import LAYERS

    cands = list(expl.candidates)
    top = cands[0]
    present = {c.code for c in cands}
    chain = set(top.explains)
    on_path = chain | {top.code}
    nodes: List[GraphNode] = []
    chain_edges: Set[Tuple[str, str]] = set()
    maybe_edges: Set[Tuple[str, str]] = set()
    maybe = [] if top.kind == "root" else [c for c in top.could_be if c not in present][:MAYBE_NODES]
    for code in maybe:
        spec = catalogue.get(code)
        title = spec.title if spec is not None else code
        nodes.append(GraphNode(code, spec.layer if spec is not None else top.layer, (), ("skip", "maybe"), code,
                               "? possible cause", f"{code}: possible cause of {top.code}, not in "
                               f"the log. {title}", "maybe-" + _slug(code)))
        maybe_edges.add((code, top.code))
    for c in cands:
        classes, state = _role(c, top, chain)
        requires = tuple(b for b in c.explained_by if b in present)
        if c is top:
            requires += tuple(maybe)
        for b in requires:
            if c.code in chain and b in on_path:
                chain_edges.add((b, c.code))
        tip = (f"{c.code} [{c.layer}]: {state}. {c.title}"
               + (f". Explained by {', '.join(c.explained_by)}" if c.explained_by else "")
               + (f". Explains {', '.join(c.explains)}" if c.explains else ""))
        nodes.append(GraphNode(c.code, c.layer, requires, classes, c.code, state, tip, _sec(c.code)))
    what = "root cause" if top.kind == "root" else "deepest symptom"
    desc = (f"Causal graph of {len(cands)} finding code(s) the log evidences; {what} {top.code}"
            + (f", which explains {', '.join(top.explains)}" if top.explains else "")
            + (f"; possible causes not in the log: {', '.join(maybe)}" if maybe else "")
            + ". The same information is listed below the graph.")
    return draw_graph(nodes, LAYERS, chain_edges, "stackpeel explain: causes and symptoms", desc,
                      maybe_edges=maybe_edges), maybe


def _candidate_section(c: Candidate, top: Candidate, present: Set[str]) -> str:
    classes, state = _role(c, top, set(top.explains))
    basis = (SIMILAR if c.basis == "similar" else PRIOR if c.basis == "prior"
             else CONFIDENCE.get(c.confidence, c.confidence))
    parts = [f'<section class="check{" root-cause" if c is top else ""}" id="{_sec(c.code)}" '
             f'aria-labelledby="h-{_sec(c.code)}">',
             f'<h3 id="h-{_sec(c.code)}"><span class="badge {classes[0]}">{_e(state.split(SEP)[0])}</span> '
             f"{_e(c.title)} <code>{_e(c.code)}</code></h3>",
             f'<p class="meta">layer {_e(c.layer)}; {_e(basis)}</p>',
             _evidence(c), f"<p>{_e(c.explanation)}</p>" if c.explanation else ""]
    if c.explains:
        parts.append("<p>Explains: " + ", ".join(_code_link(x, present) for x in c.explains) + "</p>")
    if c.explained_by:
        parts.append("<p>Explained by: " + ", ".join(_code_link(x, present) for x in c.explained_by) + "</p>")
    if c.could_be:
        label = "Could be caused by" if c.kind == "symptom" else "The same text can also come from"
        parts.append(f"<p>{label}: " + ", ".join(_code_link(x, present) for x in c.could_be) + "</p>")
    parts += [_live(c), _fix(c), _links(c), "</section>"]
    return "".join(parts)


def _exceptions(expl: Explanation, present: Set[str]) -> List[str]:
    if not expl.exceptions:
        return []
    shown = len(expl.exceptions)
    out = [f'<h2 id="exceptions">Exceptions in the log ({expl.n_exceptions}'
           + (f"; {shown} shown" if shown < expl.n_exceptions else "") + ")</h2><ol class=\"exceptions\">"]
    lines = {e.line for e in expl.exceptions}
    for e in expl.exceptions:
        how = {"cause": "the direct cause was the exception at", "context": "raised while handling the exception at"}
        link = ""
        if e.chain in how and e.parent_line:
            target = f'<a href="#exc-{e.parent_line}">line {e.parent_line}</a>' if e.parent_line in lines \
                else f"line {e.parent_line}"
            link = f"<p>{_e(how[e.chain])} {target}</p>"
        frames = f'<pre>{_e(chr(10).join(e.frames))}</pre>' if e.frames else ""
        codes = ("<p>Means: " + ", ".join(_code_link(c, present) for c in e.codes) + "</p>") if e.codes else ""
        out.append(f'<li id="exc-{e.line}"><p>line {e.line}: {_e(e.stream + " " if e.stream else "")}'
                   f"<code>{_e(e.type or '(no type)')}: {_e(e.message)}</code>"
                   f"{' [truncated]' if e.truncated else ''}</p>{link}{frames}{codes}</li>")
    out.append("</ol>")
    return out


def render_explanation_html(expl: Explanation) -> str:
    from ..codes import all_codes
    from ..explain.render import _headline, _size

    catalogue = all_codes()
    cands = list(expl.candidates)
    present = {c.code for c in cands}
    body: List[str] = []
    if not cands:
        verdict = (f"Interrupted: the run was stopped by the user (line {expl.interrupted.line}: "
                   f"{expl.interrupted.text}) and no error precedes it; an interruption is no failure, no cause is "
                   "guessed" if expl.interrupted is not None else
                   f"Possible failure: no error line, but some lines say something went wrong, and no "
                   f"knowledge-base entry explains them (fingerprint {expl.fingerprint})" if expl.suspect_only else
                   f"Unknown error: no knowledge-base entry explains it (fingerprint {expl.fingerprint})"
                   if expl.has_errors else "No error in this log. No known problem found.")
    else:
        top = cands[0]
        verdict = f"{_headline(top)}: {top.code}: {top.title}"
        body.append(f'<h2 id="root">{_e(_headline(top))}</h2>')
        body.append(_candidate_section(top, top, present))
        svg, maybe = _graph(expl, catalogue)
        body.append('<h2 id="graph">Causes and symptoms</h2>')
        body.append('<p class="legend">Each box is a finding code this log evidences; a line runs from a cause to '
                    "the symptom it explains. The root cause is outlined and red lines trace the symptoms it "
                    "explains; dashed boxes are causes that can produce the symptom but are not in the log. "
                    "Select a box for its evidence and fix. <span>\u2717 root cause or its symptom</span> "
                    "<span>! other candidate</span> <span>? possible cause</span></p>")
        body.append(f'<div class="graph">{svg}</div>')
        if maybe:
            from ..explain.knowledge import load

            checks = load().checks
            body.append('<h2>Possible causes (not in the log)</h2><p>On the machine that wrote the log, the '
                        "check after each one tells whether it is the cause.</p><ul class=\"roots\">")
            for code in maybe:
                spec = catalogue.get(code)
                title = spec.title if spec is not None else code
                confirm = f"<pre>stackpeel check --only {_e(checks[code])}</pre>" if checks.get(code) else ""
                body.append(f'<li id="maybe-{_slug(code)}"><code>{_e(code)}</code> [{_e(spec.layer if spec else "")}]'
                            f" {_e(title)}{confirm}</li>")
            body.append("</ul>")
        if len(cands) > 1:
            body.append('<h2 id="candidates">The other candidates</h2>')
            body.extend(_candidate_section(c, top, present) for c in cands[1:])
    body.extend(_exceptions(expl, present))
    if expl.unexplained:
        heading = "Lines that say something went wrong" if expl.suspect_only else "Error lines no entry explains"
        body.append(f"<h2>{heading} ({expl.n_unexplained})</h2>"
                    '<ol class="evidence">' + "".join(f"<li>line {ev.line}: {_e(ev.text)}</li>"
                                                      for ev in expl.unexplained) + "</ol>")
    if expl.live is not None:
        lv = expl.live
        body.append("<h2>Live checks</h2>")
        if lv.ran:
            body.append(f"<p>Ran {_e(', '.join(lv.checks))} on <code>{_e(lv.python)}</code>"
                        + (f"; blocking problems found: {_e(', '.join(lv.found))}" if lv.found else "") + ".</p>")
            if lv.provenance != "same":
                body.append(f"<p>The log may come from another machine ({_e(lv.provenance_reason)}): a check that "
                            "passes here rules nothing out.</p>")
        else:
            body.append(f"<p>Not run: {_e(lv.note)}</p>")
    if expl.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in expl.notes) + "</ul>")
    if not cands:
        body.append("<p>If this log shows a GPU stack failure, <code>stackpeel check</code> probes the machine "
                    "directly.</p>")
    meta = f'<p class="meta">Log: {_e(expl.source)} ({_e(_size(expl))})</p>'
    return page("explain", verdict, expl.has_errors, meta, body)


__all__ = ["render_explanation_html"]
