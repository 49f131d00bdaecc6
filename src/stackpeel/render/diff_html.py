"""``stackpeel diff --format html``: a comparison as one self-contained page.

Drawn with the check page's machinery (:mod:`.html`: page shell, style, script, layered SVG
graph). In order: the verdict and both sides; the differences, grouped by the check (or
``target``/``host``) they belong to, most explanatory first, each with links to the checks
whose verdict differs that it can explain (:attr:`stackpeel.compare.Difference.explains`);
the verdicts of both sides as a table, each changed check linking back to the differences
that can explain it; then each side's stack as a graph, its root causes outlined and their
symptom paths in red. Status is written as a word and a sign beside every colour; tables
wrap and graphs scroll inside their own box, so the page reads at 400 px.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..compare import _show
from ..model import CheckResult, Report, Status
from ._shared import header_facts
from .html import STATUS_LABEL, STATUS_SIGN, _e, _slug, _svg, page

#: places (checks, target, host) shown open; the rest are folded
PLACES_OPEN = 12
#: facts shown per place; the rest are folded
FACTS_OPEN = 6


def _place(where: str) -> str:
    return "place-" + _slug(where)


def _verdict_id(cid: str) -> str:
    return "verdict-" + _slug(cid)


def _check_links(ids: Sequence[str], known: Optional[set]) -> str:
    return ", ".join(f'<a href="#{_verdict_id(c)}"><code>{_e(c)}</code></a>' if known is None or c in known
                     else f"<code>{_e(c)}</code>" for c in ids)


def _badge(r: Optional[CheckResult]) -> str:
    if r is None:
        return '<span class="meta">not run on this side</span>'
    codes = ", ".join(sorted({f.code for f in r.findings}))
    return (f'<span class="badge {r.status.value}">{STATUS_SIGN[r.status]} {STATUS_LABEL[r.status]}</span>'
            + (f" <code>{_e(codes)}</code>" if codes else ""))


def _groups(cmp) -> List[Tuple[str, list]]:
    groups: Dict[str, list] = {}
    for d in cmp.differences:  # already most explanatory first
        groups.setdefault(d.where, []).append(d)
    return list(groups.items())


def _group_section(rank: int, where: str, ds: list, known: Optional[set]) -> str:
    verdict = next((d for d in ds if d.kind == "verdict"), None)
    head = (f"{_e(where)}: {_e(_show(verdict.a))} \u2192 {_e(_show(verdict.b))}" if verdict
            else f"{_e(where)}: same verdict")
    why = f" <strong>[{_e(verdict.why)}]</strong>" if verdict and verdict.why.startswith("root") else ""
    shared = ds[0].explains if all(d.explains == ds[0].explains for d in ds) else None
    facts = [d for d in ds if d.kind != "verdict"]
    common_why = facts[0].why if facts and all(d.why == facts[0].why for d in facts) else None

    def row(d) -> str:
        what = "verdict" if d.kind == "verdict" else d.key
        notes = [] if d.kind in ("verdict", "fact") else [d.kind]
        if d.kind != "verdict" and common_why is None:
            notes.append(d.why)
        own = "" if shared is not None or not d.explains else \
            f'<br><span class="meta">can explain: {_check_links(d.explains, known)}</span>'
        note = f'<br><span class="meta">{_e("; ".join(notes))}</span>' if notes else ""
        return (f'<tr class="kind-{_e(d.kind)}"><th scope="row"><code>{_e(what)}</code>{note}{own}</th>'
                f"<td>{_e(_show(d.a))}</td><td>{_e(_show(d.b))}</td></tr>")

    table = ('<table><thead><tr><th scope="col">what differs</th><th scope="col">A</th><th scope="col">B</th>'
             "</tr></thead><tbody>{}</tbody></table>")
    shown = ([verdict] if verdict else []) + facts[:FACTS_OPEN]
    parts = [table.format("".join(row(d) for d in shown))]
    if len(facts) > FACTS_OPEN:
        parts.append(f"<details><summary>{len(facts) - FACTS_OPEN} more fact(s)</summary>"
                     + table.format("".join(row(d) for d in facts[FACTS_OPEN:])) + "</details>")
    foot = f"<p>Can explain: {_check_links(shared, known)}</p>" if shared else ""
    if common_why:
        foot += f'<p class="meta">Its facts rank as: {_e(common_why)}.</p>'
    return (f'<section class="check" id="{_place(where)}" aria-labelledby="h-{_place(where)}">'
            f'<h3 id="h-{_place(where)}">{rank}. {head}{why}</h3>{foot}{"".join(parts)}</section>')


def _verdict_table(a: Report, b: Report, explained_by: Dict[str, List[str]]) -> List[str]:
    ra, rb = {r.id: r for r in a.results}, {r.id: r for r in b.results}
    ids = list(ra) + [c for c in rb if c not in ra]

    def changed(cid: str) -> bool:
        x, y = ra.get(cid), rb.get(cid)
        return x is None or y is None or (x.status, sorted(f.code for f in x.findings)) != \
            (y.status, sorted(f.code for f in y.findings))

    def row(cid: str) -> str:
        by = explained_by.get(cid, [])
        links = ", ".join(f'<a href="#{_place(w)}">{_e(w)}</a>' for w in by[:3]) + \
            (f" (+{len(by) - 3})" if len(by) > 3 else "")
        return (f'<tr id="{_verdict_id(cid)}"><th scope="row"><code>{_e(cid)}</code></th>'
                f"<td>{_badge(ra.get(cid))}</td><td>{_badge(rb.get(cid))}</td><td>{links}</td></tr>")

    head = ('<table class="verdicts"><thead><tr><th scope="col">check</th><th scope="col">A</th>'
            '<th scope="col">B</th><th scope="col">explained by</th></tr></thead><tbody>')
    differ = [c for c in ids if changed(c)]
    same = [c for c in ids if not changed(c)]
    out = [f"<p>{len(differ)} check(s) with a different verdict, {len(same)} the same.</p>"]
    if differ:
        out.append(head + "".join(row(c) for c in differ) + "</tbody></table>")
    if same:
        out.append(f"<details><summary>{len(same)} check(s) with the same verdict on both sides</summary>"
                   + head + "".join(row(c) for c in same) + "</tbody></table></details>")
    return out


def render_comparison_html(cmp, a: Optional[Report] = None, b: Optional[Report] = None,
                           limit: int = PLACES_OPEN) -> str:
    from ..registry import LAYERS

    groups = _groups(cmp)
    known = None if a is None or b is None else {r.id for r in tuple(a.results) + tuple(b.results)}
    if not cmp.differences:
        verdict = "No meaningful difference: same verdicts, versions and facts."
    else:
        d = cmp.differences[0]
        what = f"{d.a} \u2192 {d.b}" if d.kind == "verdict" else f"{d.key}: {_show(d.a)} \u2192 {_show(d.b)}"
        verdict = f"{len(cmp.differences)} difference(s) in {len(groups)} place(s); most explanatory: " \
                  f"{d.where}: {what}"
    sides = []
    for name, label, rep, roots in (("A", cmp.a_label, a, cmp.roots_a), ("B", cmp.b_label, b, cmp.roots_b)):
        target = f"<br>Target: {_e(header_facts(rep)[0])}<br>Platform: {_e(header_facts(rep)[1])}" if rep else ""
        sides.append(f"<li><strong>{name}</strong>: <code>{_e(label)}</code>{target}<br>Root causes: "
                     f"{_e(', '.join(roots) or 'none')}</li>")
    meta = '<ul class="meta sides">' + "".join(sides) + "</ul>"
    body: List[str] = []
    if groups:
        body.append('<h2 id="differences">What differs, most explanatory first</h2>')
        body.append('<p class="legend">Ranked by how much each difference can explain the checks whose verdict '
                    "differs: a root cause's verdict and facts first, then symptoms, then facts of their "
                    "prerequisites, then versions and the environment. \u201cCan explain\u201d links to those "
                    "checks.</p>")
        for n, (where, ds) in enumerate(groups[:limit], 1):
            body.append(_group_section(n, where, ds, known))
        if len(groups) > limit:
            rest = groups[limit:]
            body.append(f"<details><summary>{len(rest)} more place(s), {sum(len(ds) for _, ds in rest)} "
                        "difference(s)</summary>")
            body.extend(_group_section(n, where, ds, known) for n, (where, ds) in enumerate(rest, limit + 1))
            body.append("</details>")
    for side, only in (("A", cmp.only_a), ("B", cmp.only_b)):
        if only:
            body.append(f"<p>Checks only in {side}: {_e(', '.join(only))}</p>")
    if a is not None and b is not None:
        explained_by: Dict[str, List[str]] = {}
        for where, ds in groups:
            for c in {c for d in ds for c in d.explains}:
                explained_by.setdefault(c, []).append(where)
        body.append('<h2 id="verdicts">Verdicts on both sides</h2>')
        body.extend(_verdict_table(a, b, explained_by))
        body.append('<h2 id="graphs">Each side\u2019s stack</h2>')
        legend = " ".join(f"<span>{STATUS_SIGN[s]} {STATUS_LABEL[s]}</span>" for s in Status)
        body.append('<p class="legend">Each box is a check; a line runs from a check to one that depends on it; '
                    f"red lines trace each root cause to its symptoms. Select a box for its verdicts. {legend}</p>")
        for name, label, rep in (("A", cmp.a_label, a), ("B", cmp.b_label, b)):
            body.append(f'<details open id="graph-{name.lower()}"><summary><strong>{name}</strong>: '
                        f"<code>{_e(label)}</code></summary><div class=\"graph\">"
                        f"{_svg(rep, LAYERS, prefix=name.lower() + '-node-', section=_verdict_id)}</div></details>")
    return page("diff", verdict, bool(cmp.differences), meta, body)


__all__ = ["render_comparison_html"]
