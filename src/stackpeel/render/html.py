"""A self-contained HTML report: the stack drawn as a dependency graph in SVG, each check
coloured *and labelled* by status, root causes outlined, their symptom chains drawn as
highlighted paths; a click on a node opens its facts, evidence and fix.

One file, nothing fetched when it is viewed: styles and the few lines of script are inline,
and a Content-Security-Policy forbids every other source, so a report attached to an issue
opens the same anywhere. Without script (or printed) every check's details are shown in
order below the graph; the graph carries text alternatives (``<title>`` per node, a
summary for screen readers), and status is never told by colour alone.

Layout: a simple layered drawing (the Sugiyama scheme reduced to what a stack needs). The
layers are fixed by the checks themselves (system at the top, then gpu, cuda, torch, ...),
so each layer is a row (split into sub-rows where checks of one layer require each other, so every
edge points down); inside a row, checks are ordered by the mean position of what they
require in the rows above (one barycentre pass, which removes most edge crossings for a
tower like this one), ties kept in declaration order. Edges run from a requirement down to
the check that needs it. No layout library is needed for a graph of this shape; a plugin
layer simply becomes another row. A line that skips a row bows out past the boxes between.

The machinery is shared by every HTML page: :class:`GraphNode` and :func:`draw_graph` draw any
layered graph (checks here and in ``fleet``; finding codes in ``explain``'s page, see
:mod:`.explain_html`; both sides' stacks in ``diff``'s, see :mod:`.diff_html`), and
:func:`page` is the shell (style, script, CSP, the verdict first).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Sequence, Set, Tuple

from ..model import CheckResult, Report, Status
from ._shared import evidence_tail, header_facts

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 190, 46, 24, 46, 16
LABEL_W = 100  # the layer names' column (RUNTIME_LIBS fits)
BOW = 30  # how far a line that skips a row bows out past the boxes between (room kept on the right)

STATUS_LABEL = {Status.PASS: "pass", Status.WARN: "warn", Status.FAIL: "FAIL", Status.SKIP: "skip",
                Status.BLOCKED: "blocked", Status.ERROR: "ERROR"}
STATUS_SIGN = {Status.PASS: "\u2713", Status.WARN: "!", Status.FAIL: "\u2717", Status.SKIP: "-",
               Status.BLOCKED: "\u2298", Status.ERROR: "?"}

CSS = """
:root{--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--error:#8250df;--skip:#6e7781;--blocked:#6e7781;
--bg:#fff;--fg:#1f2328;--muted:#57606a;--line:#d0d7de}
*{box-sizing:border-box}body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);
background:var(--bg)}header,main{max-width:1100px;margin:0 auto;padding:12px 16px}
h1{font-size:1.35em;margin:.3em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1.02em;margin:.2em 0}
.verdict{font-weight:600;padding:8px 12px;border-left:6px solid var(--pass);background:#f6f8fa}
.verdict.bad{border-color:var(--fail)}.meta{color:var(--muted);font-size:.9em}
.graph{overflow-x:auto;border:1px solid var(--line);border-radius:6px;background:#fbfbfc}
svg{display:block;width:100%;max-width:var(--w,100%);height:auto}
.node rect{fill:#fff;stroke:var(--line);stroke-width:1.5}.node text{font-size:12px;fill:var(--fg)}
.node .st{font-weight:700}.node.pass .st{fill:var(--pass)}.node.warn .st{fill:var(--warn)}
.node.fail .st{fill:var(--fail)}.node.error .st{fill:var(--error)}.node.skip .st,.node.blocked .st{fill:var(--skip)}
.node.fail rect{stroke:var(--fail)}.node.warn rect{stroke:var(--warn)}.node.error rect{stroke:var(--error)}
.node.root rect{stroke-width:4}.node.chain rect{fill:#fff5f5}.node:focus rect,.node:hover rect{stroke:#0969da}
.node.selected rect{stroke:#0969da;stroke-width:3}
.edge{stroke:#afb8c1;stroke-width:1.2;fill:none}.edge.chain{stroke:var(--fail);stroke-width:2.5}
.edge.maybe,.node.maybe rect{stroke-dasharray:5 4}
table{border-collapse:collapse;width:100%;margin:.4em 0}th,td{border:1px solid var(--line);padding:4px 6px;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f6f8fa}
ol.evidence{margin:.3em 0;padding-left:0;list-style:none}
ol.evidence li{font-family:ui-monospace,monospace;font-size:.85em;
background:#f6f8fa;padding:4px 8px;margin:2px 0;overflow-wrap:anywhere}
.layer{font-size:11px;fill:var(--muted);text-transform:uppercase;letter-spacing:.06em}
.legend{font-size:.85em;color:var(--muted)}.legend span{margin-right:1em}
section.check{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:8px 0}
section.check:target,section.check.selected{outline:3px solid #0969da}
.badge{display:inline-block;font-size:.8em;font-weight:700;padding:0 6px;border-radius:10px;border:1px solid;
white-space:nowrap}
.badge.pass{color:var(--pass)}.badge.warn{color:var(--warn)}.badge.fail{color:var(--fail)}
.badge.error{color:var(--error)}.badge.skip,.badge.blocked{color:var(--skip)}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-word;font-size:.85em}
code{font-size:.9em}.fix pre{border-left:4px solid var(--pass)}details summary{cursor:pointer;color:var(--muted)}
ul.roots li{margin:.3em 0}
@media (max-width:600px){body{font-size:14px}header,main{padding:8px}
.graph svg{min-width:min(760px,var(--w,760px));max-width:none}}
@media print{.graph{display:none}details{display:block}details>*{display:block}section.check{break-inside:avoid}}
"""

JS = """
(function(){
  function show(node){
    document.querySelectorAll('.selected').forEach(function(e){e.classList.remove('selected');});
    node.classList.add('selected');
    var sec=document.getElementById(node.getAttribute('data-section'));
    if(sec){sec.classList.add('selected'); var d=sec.querySelector('details'); if(d){d.open=true;}
      var up=sec.parentElement; while(up){if(up.tagName==='DETAILS'){up.open=true;} up=up.parentElement;}
      sec.scrollIntoView({behavior:'smooth',block:'nearest'});}
  }
  document.querySelectorAll('.node[data-section]').forEach(function(n){
    n.addEventListener('click',function(e){e.preventDefault();show(n);});
    n.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();show(n);}});
  });
})();
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _slug(check_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in check_id)


def layered_layout(results: Sequence["CheckResult | "
                                     "GraphNode"], layers: Sequence[str]) -> Dict[str, Tuple[float, float]]:
    """Top-left corner of each box (a check, or any node with ``id``, ``layer`` and ``requires``):
    one row per layer (a layer whose boxes require each other gets one row per step, so every edge
    runs downwards), barycentre order within a row."""
    rows: List[list] = []
    order = list(layers) + sorted({r.layer for r in results if r.layer not in layers})
    by_id = {r.id: r for r in results}
    depth: Dict[str, int] = {}

    def sub(r) -> int:  # longest chain of requirements inside its own layer
        if r.id not in depth:
            depth[r.id] = 0
            same = [by_id[q] for q in r.requires if q in by_id and by_id[q].layer == r.layer]
            depth[r.id] = max((sub(q) + 1 for q in same), default=0)
        return depth[r.id]

    for layer in order:
        members = [r for r in results if r.layer == layer]
        for k in sorted({sub(r) for r in members}):
            rows.append([r for r in members if sub(r) == k])
    pos: Dict[str, Tuple[float, float]] = {}
    width = max((len(r) for r in rows), default=1) * (NODE_W + GAP_X) - GAP_X
    for y, row in enumerate(rows):
        decl = {r.id: i for i, r in enumerate(row)}

        def centre(r) -> float:
            xs = [pos[q][0] for q in r.requires if q in pos]
            return sum(xs) / len(xs) if xs else float("inf")

        placed = sorted(row, key=lambda r: (centre(r) if centre(r) != float("inf") else decl[r.id] * 1e6,
                                            decl[r.id]))
        row_w = len(placed) * (NODE_W + GAP_X) - GAP_X
        x0 = PAD + LABEL_W + (width - row_w) / 2
        for i, r in enumerate(placed):
            pos[r.id] = (x0 + i * (NODE_W + GAP_X), PAD + y * (NODE_H + GAP_Y))
    return pos


def _chains(report: Report) -> Tuple[Set[str], Set[Tuple[str, str]], Set[str]]:
    """Checks on a root's symptom paths, the edges along them, and the roots."""
    nodes: Set[str] = set()
    edges: Set[Tuple[str, str]] = set()
    roots: Set[str] = set()
    for root in tuple(report.diagnosis.blocking) + tuple(report.diagnosis.degraded):
        roots.add(root.check_id)
        for s in root.symptoms:
            nodes.update(s.path)
            edges.update(zip(s.path, s.path[1:]))
    return nodes, edges, roots


@dataclass(frozen=True)
class GraphNode:
    """One box of a layered graph: what ``draw_graph`` needs, whatever the page draws (checks,
    finding codes). ``requires`` names the boxes drawn above it with a line down to it."""

    id: str
    layer: str
    requires: Tuple[str, ...]
    classes: Tuple[str, ...]  # CSS: a status (pass, fail, ...) and roles (root, chain, maybe)
    name: str  # first line
    state: str  # second line: the status in words (never told by colour alone)
    tip: str  # accessible name and tooltip
    section: str  # id of the element the box opens


def draw_graph(nodes: Sequence[GraphNode], layers: Sequence[str], chain_edges: Set[Tuple[str, str]],
               title: str, desc: str, prefix: str = "node-", maybe_edges: Set[Tuple[str, str]] = frozenset()) -> str:
    """The SVG of a layered graph (:func:`layered_layout`): lines from each box to the boxes that
    require it, the ``chain_edges`` drawn on top in red, ``maybe_edges`` dashed; each box a link
    to its ``section`` (the page's script opens it). ``prefix`` keeps ids unique when a page
    holds several graphs."""
    pos = layered_layout(nodes, layers)
    w = max((x for x, _ in pos.values()), default=0) + NODE_W + PAD + BOW
    h = max((y for _, y in pos.values()), default=0) + NODE_H + PAD
    gid = _slug(prefix)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0f} {h:.0f}" style="--w:{w:.0f}px" role="img" '
           f'aria-labelledby="{gid}title {gid}desc"><title id="{gid}title">{_e(title)}</title>'
           f'<desc id="{gid}desc">{_e(desc)}</desc>']
    seen_layers: Set[str] = set()
    for n in nodes:
        if n.layer not in seen_layers and n.id in pos:
            seen_layers.add(n.layer)
            out.append(f'<text class="layer" x="{PAD}" y="{pos[n.id][1] + NODE_H / 2 + 4:.0f}">{_e(n.layer)}</text>')
    # edges first, chains last so they are drawn on top
    edge_list = [(q, n.id) for n in nodes for q in n.requires if q in pos and n.id in pos]
    edge_list.sort(key=lambda e: e in chain_edges)
    for a, b in edge_list:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        x1, y1, x2, y2 = xa + NODE_W / 2, ya + NODE_H, xb + NODE_W / 2, yb
        if y2 < y1:  # a line to a box in a row above: from its top to the other's bottom
            y1, y2 = ya, yb + NODE_H
        cls = "edge chain" if (a, b) in chain_edges else ("edge maybe" if (a, b) in maybe_edges else "edge")
        mid = (y1 + y2) / 2
        c1, c2 = x1, x2
        if abs(y2 - y1) > NODE_H + GAP_Y and abs(x2 - x1) < NODE_W:  # skips a row: bow past the boxes between
            c1 = c2 = max(x1, x2) + NODE_W / 2 + BOW * 2
        out.append(f'<path class="{cls}" data-from="{_e(a)}" data-to="{_e(b)}" '
                   f'd="M{x1:.0f},{y1:.0f} C{c1:.0f},{mid:.0f} {c2:.0f},{mid:.0f} {x2:.0f},{y2:.0f}"/>')
    for n in nodes:
        if n.id not in pos:
            continue
        x, y = pos[n.id]
        name = n.name if len(n.name) <= 27 else n.name[:25] + "\u2026"
        out.append(
            f'<a class="{" ".join(("node",) + n.classes)}" id="{prefix}{_slug(n.id)}" data-section="{_e(n.section)}" '
            f'href="#{_e(n.section)}" tabindex="0" role="button" aria-label="{_e(n.tip)}">'
            f'<title>{_e(n.tip)}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{NODE_H}" rx="6"/>'
            f'<text x="{x + 8:.0f}" y="{y + 18:.0f}">{_e(name)}</text>'
            f'<text class="st" x="{x + 8:.0f}" y="{y + 36:.0f}">{_e(n.state)}</text></a>')
    out.append("</svg>")
    return "".join(out)


def _svg(report: Report, layers: Sequence[str], prefix: str = "node-",
         section: Callable[[str], str] = lambda cid: "check-" + _slug(cid)) -> str:
    """A report's checks as a graph: coloured and labelled by status, roots outlined, each root's
    symptom paths in red."""
    results = list(report.results)
    chain_nodes, chain_edges, roots = _chains(report)
    nodes = []
    for r in results:
        st = r.status
        codes = ", ".join(f.code for f in r.findings)
        tip = f"{r.id}: {STATUS_LABEL[st]}" + (" (root cause)" if r.id in roots else "") + \
              (f" [{codes}]" if codes else "") + f". {r.summary}"
        nodes.append(GraphNode(
            r.id, r.layer, tuple(r.requires),
            (st.value,) + (("root",) if r.id in roots else ()) + (("chain",) if r.id in chain_nodes else ()),
            r.id, f"{STATUS_SIGN[st]} {STATUS_LABEL[st]}" + ("  ROOT CAUSE" if r.id in roots else ""), tip,
            section(r.id)))
    n_fail = sum(r.status in (Status.FAIL, Status.ERROR) for r in results)
    desc = (f"Dependency graph of {len(results)} checks, {n_fail} failing or not completed; "
            f"root causes: {', '.join(sorted(roots)) or 'none'}. The same information is listed below the graph.")
    return draw_graph(nodes, layers, chain_edges, "stackpeel check graph", desc, prefix)


def page(command: str, verdict: str, bad: bool, meta_html: str, main: Iterable[str], script: bool = True) -> str:
    """The shell every HTML page shares: one file, inline style and script, a CSP that forbids
    every other source, the verdict first (as a status for screen readers)."""
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>stackpeel {_e(command)}: {_e(verdict)}</title><style>{CSS}</style></head><body>",
        "<header>",
        f"<h1>stackpeel {_e(command)}</h1>",
        f'<p class="verdict{" bad" if bad else ""}" role="status">{_e(verdict)}</p>',
        meta_html,
        "</header><main>",
    ]
    body.extend(main)
    body.append("</main>" + (f"<script>{JS}</script>" if script else "") + "</body></html>")
    return "\n".join(body) + "\n"


def _facts_block(facts: Mapping[str, object]) -> str:
    text = json.dumps(facts, indent=2, sort_keys=True, default=str)
    return f"<details><summary>Facts ({len(facts)})</summary><pre>{_e(text)}</pre></details>"


def _check_section(r: CheckResult, roots: Set[str], symptom_of: Mapping[str, List[str]]) -> str:
    parts = [f'<section class="check" id="check-{_slug(r.id)}" aria-labelledby="h-{_slug(r.id)}">',
             f'<h3 id="h-{_slug(r.id)}"><span class="badge {r.status.value}">{STATUS_SIGN[r.status]} '
             f'{STATUS_LABEL[r.status]}</span> {_e(r.title)} <code>{_e(r.id)}</code>'
             + (' <strong>root cause</strong>' if r.id in roots else "") + "</h3>",
             f"<p>{_e(r.summary)}</p>"]
    if symptom_of.get(r.id):
        parts.append(f"<p class=\"meta\">Symptom of: {', '.join(_e(x) for x in symptom_of[r.id])}</p>")
    for f in r.findings:
        parts.append(f"<p><strong>{_e(f.title)}</strong> <code>{_e(f.code)}</code> ({_e(f.severity.value)})</p>")
        parts.append(f"<p>{_e(f.message)}</p>")
        if f.evidence:
            tail = "\n".join(evidence_tail(f.evidence, 14))
            parts.append(f"<details><summary>Evidence</summary><pre>{_e(tail)}</pre></details>")
        if f.remedy:
            cmds = "\n".join(c.command for c in f.remedy.commands)
            parts.append(f'<div class="fix"><p>Fix: {_e(f.remedy.text)}</p>'
                         + (f"<pre>{_e(cmds)}</pre>" if cmds else "") + "</div>")
    if r.failure:
        parts.append(f"<details><summary>Why it could not complete</summary><pre>"
                     f"{_e(r.failure.reason)}: {_e(r.failure.detail)}\n{_e(r.failure.stderr_tail)}</pre></details>")
    if r.facts:
        parts.append(_facts_block(r.facts))
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Report, layers: Iterable[str] = ()) -> str:
    from ..registry import LAYERS

    layers = tuple(layers) or LAYERS
    target, platform = header_facts(report)
    d = report.diagnosis
    bad = bool(d.blocking or d.errors)
    roots = {rc.check_id for rc in tuple(d.blocking) + tuple(d.degraded)}
    symptom_of: Dict[str, List[str]] = {}
    for rc in tuple(d.blocking) + tuple(d.degraded):
        for s in rc.symptoms:
            symptom_of.setdefault(s.check_id, []).append(rc.check_id)
    if d.blocking:
        verdict = f"{len(d.blocking)} root cause{'s' if len(d.blocking) != 1 else ''} of blocking problems"
    elif d.errors:
        verdict = f"no blocking problem found, but {len(d.errors)} check(s) could not complete"
    else:
        verdict = "no blocking problem found"
    root_items = []
    for kind, group in (("blocking", d.blocking), ("degraded", d.degraded)):
        for rc in group:
            r = report.result(rc.check_id)
            title = r.findings[0].title if r and r.findings else rc.check_id
            root_items.append(f'<li><a href="#check-{_slug(rc.check_id)}">{_e(title)}</a> '
                              f'<code>{_e(", ".join(rc.codes))}</code> ({kind}), explains '
                              f'{len(rc.symptoms)} symptom{"s" if len(rc.symptoms) != 1 else ""}</li>')
    legend = " ".join(f'<span>{STATUS_SIGN[s]} {STATUS_LABEL[s]}</span>' for s in Status)
    body = []
    if root_items:
        body.append('<h2>Root causes</h2><ul class="roots">' + "".join(root_items) + "</ul>")
    body.append('<h2 id="graph">The stack</h2>')
    body.append(f'<p class="legend">Each box is a check; a line runs from a check to one that depends on it. '
                f'Red lines trace each root cause to its symptoms. Select a box for its details. {legend}</p>')
    body.append(f'<div class="graph">{_svg(report, layers)}</div>')
    body.append("<h2>Every check</h2>")
    order = sorted(report.results, key=lambda r: (r.id not in roots, r.status in (Status.PASS, Status.SKIP)))
    body.extend(_check_section(r, roots, symptom_of) for r in order)
    meta = (f'<p class="meta">Target: {_e(target)}<br>Platform: {_e(platform)}<br>'
            f"stackpeel {_e(report.tool_version)}, {_e(report.created)}, {report.duration_s:.1f} s</p>")
    return page("check", verdict, bad, meta, body)


def render_fleet_html(fleet) -> str:
    """A fleet report as one self-contained page: the verdict, the odd nodes with what differs,
    then every node's own graph (folded), drawn by the same layout as ``check``'s page."""
    from ..registry import LAYERS

    answered = sum(o.state == "ok" for o in fleet.nodes)
    bad = fleet.exit_code != 0
    verdict = (f"{len(fleet.nodes)} node(s), {answered} diagnosed; "
               + ("problems found" if bad else "every node healthy"))

    def sig(s):
        return ", ".join(s) if s else "healthy (no blocking problem)"

    body: List[str] = []
    meta = f'<p class="meta">stackpeel {_e(fleet.tool_version)}, {_e(fleet.created)}</p>' if fleet.tool_version else ""
    if fleet.groups:
        g0 = fleet.groups[0]
        body.append(f"<p>Majority ({len(g0.nodes)} of {answered}): <strong>{_e(sig(g0.signature))}</strong></p>")
    if fleet.odd:
        body.append('<h2>Odd ones out</h2><ul class="roots">')
        for o in fleet.odd:
            diffs = "".join(f"<li><code>{_e(k)}</code>: {_e(b)} (majority: {_e(a)})</li>"
                            for k, (a, b) in o.profile_diff.items())
            tops = "".join(f"<li>{_e(t)}</li>" for t in o.top_differences)
            body.append(f'<li id="odd-{_slug(o.node)}"><a href="#node-{_slug(o.node)}">{_e(o.node)}</a>: '
                        f"{_e(sig(o.signature))}<ul>{diffs}{tops}</ul></li>")
        body.append("</ul>")
    body.append('<h2>Nodes by diagnosis</h2><table><thead><tr><th scope="col">root causes</th>'
                '<th scope="col">nodes</th></tr></thead><tbody>')
    for g in fleet.groups:
        body.append(f"<tr><td>{_e(sig(g.signature))}</td><td>{_e(', '.join(g.nodes))}</td></tr>")
    body.append("</tbody></table>")
    missing = tuple(fleet.unreachable) + tuple(fleet.failed)
    if missing:
        body.append('<h2>Not diagnosed</h2><ul>')
        body.extend(f"<li>{_e(o.node)}: {_e(o.state)}: {_e((o.detail or '').splitlines()[-1:] or '')}</li>"
                    for o in missing)
        body.append("</ul>")
    c = getattr(fleet, "collective", None)
    if c is not None:  # fleet --collective: the all-reduce across the nodes
        body.append(f'<h2 id="collective">Across nodes: {_e(c.backend)} all-reduce, {c.world} node(s), rendezvous '
                    f"{_e(c.master)}</h2>")
        body.append("<p>" + ("passed: every node reached the rendezvous and the all-reduce summed right" if c.passed
                             else "<strong>failed</strong>") + "</p>")
        if c.findings:
            body.append('<ul class="roots">')
            for nf in c.findings:
                f = nf.finding
                cmds = "".join(f"<li><code>{_e(cmd.command)}</code></li>" for cmd in (f.remedy.commands if nf.root
                                                                                       and f.remedy else ()))
                body.append(f"<li>{_e(nf.node)}: {'' if nf.root else '(symptom) '}<code>{_e(f.code)}</code>: "
                            f"{_e(f.message)}<ul>{cmds}</ul></li>")
            body.append("</ul>")
        body.append('<table><thead><tr><th scope="col">rank</th><th scope="col">node</th>'
                    '<th scope="col">route to master</th><th scope="col">gloo binds</th>'
                    '<th scope="col">all-reduce</th></tr></thead><tbody>')
        for i, (node, state, facts, _detail) in enumerate(c.ranks):
            facts = facts or {}
            route, gloo = facts.get("route") or {}, facts.get("gloo") or {}
            ar = facts.get("allreduce") or {}
            binds = gloo.get("value") if gloo.get("source") == "GLOO_SOCKET_IFNAME" else \
                f"hostname -> {gloo.get('address') or gloo.get('error') or '?'}"
            body.append(f"<tr><td>{i}</td><td>{_e(node)}</td>"
                        f"<td>{_e(route.get('interface') or route.get('error') or state)}"
                        f" ({_e(route.get('source', '-'))})</td><td>{_e(binds or '-')}</td>"
                        f"<td>{'ok' if ar.get('ok') else _e((ar.get('error') or state).splitlines()[0][:200])}"
                        "</td></tr>")
        body.append("</tbody></table>")
    body.append("<h2>Every node</h2>")
    for o in fleet.nodes:
        if o.report is None:
            continue
        roots = ", ".join(c for rc in o.report.diagnosis.blocking for c in rc.codes) or "no blocking problem"
        body.append(f'<section class="check" id="node-{_slug(o.node)}"><details><summary><strong>{_e(o.node)}'
                    f"</strong>: {_e(roots)}</summary>"
                    f'<div class="graph">{_svg(o.report, LAYERS, prefix=_slug(o.node) + "-node-")}</div>'
                    '</details></section>')
    return page("fleet", verdict, bad, meta, body, script=False)
