"""Text, JSON and Markdown for a :class:`~stackpeel.fleet.FleetReport`: the verdict first
(how many nodes answered, how many share the majority's diagnosis), then the odd nodes
with what sets them apart, then nodes that could not be diagnosed, apart from stack problems."""

from __future__ import annotations

import json
import textwrap
from typing import List

from . import FleetReport


def _sig(sig) -> str:
    return ", ".join(sig) if sig else "healthy (no blocking problem)"


def _wrap(text: str, indent: str, width: int = 80) -> List[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False) or [indent]


def _collective(c, md: bool) -> List[str]:
    out = [("## " if md else "") + f"Across nodes: {c.backend} all-reduce, {c.world} node(s), rendezvous {c.master}"]
    if md:
        out.append("")
    if c.passed:
        secs = max((f or {}).get("allreduce", {}).get("seconds", 0) for _, _, f, _ in c.ranks)
        out += _wrap(f"passed: every node reached the rendezvous and the all-reduce summed right ({secs:.1f} s)",
                     "- " if md else "  ")
    roots = [f for f in c.findings if f.root]
    for nf in c.findings:
        f = nf.finding
        lead = "" if nf.root or not roots else "(symptom) "
        out += _wrap(f"{nf.node}: {lead}{f.code}: {f.message}", "- " if md else "  ")
        if nf.root and f.remedy is not None:
            for cmd in f.remedy.commands:
                out += _wrap(f"$ {cmd.command}", "  - " if md else "      ")
    for node, _, facts, _ in c.ranks:
        if facts:
            route = facts.get("route") or {}
            gloo = facts.get("gloo") or {}
            bind = gloo.get("value") if gloo.get("source") == "GLOO_SOCKET_IFNAME" else \
                f"hostname -> {gloo.get('address') or gloo.get('error')}"
            out += _wrap(f"{node}: route to master via {route.get('interface') or route.get('error')} "
                         f"({route.get('source', '-')}); gloo binds {bind}", "- " if md else "  ")
    out.append("")
    return out


def render_fleet(rep: FleetReport, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(rep.to_dict(), indent=2, default=str) + "\n"
    if fmt == "html":
        from ..render.html import render_fleet_html
        return render_fleet_html(rep)
    md = fmt == "markdown"
    n = len(rep.nodes)
    answered = sum(o.state == "ok" for o in rep.nodes)
    out: List[str] = [("# " if md else "") + f"stackpeel fleet: {n} node(s), {answered} diagnosed", ""]
    if rep.groups:
        g0 = rep.groups[0]
        out += _wrap(f"Majority ({len(g0.nodes)} of {answered}): {_sig(g0.signature)}", "- " if md else "")
        out.append("")
    if rep.odd:
        out.append(("## " if md else "") + "Odd ones out")
        if md:
            out.append("")
        for o in rep.odd:
            out += _wrap(f"{o.node}: {_sig(o.signature)}", "- " if md else "  ")
            for key, (maj, mine) in o.profile_diff.items():
                out += _wrap(f"{key}: {mine} (majority: {maj})", "  - " if md else "      ")
            for line in o.top_differences:
                out += _wrap(line, "  - " if md else "      ")
        out.append("")
    if len(rep.groups) > 1:
        out.append(("## " if md else "") + "Nodes by diagnosis")
        if md:
            out.append("")
        for g in rep.groups:
            out += _wrap(f"{_sig(g.signature)}: {', '.join(g.nodes)}", "- " if md else "  ")
        out.append("")
    if rep.unreachable or rep.failed:
        out.append(("## " if md else "") + "Not diagnosed (no report came back)")
        if md:
            out.append("")
        for o in tuple(rep.unreachable) + tuple(rep.failed):
            out += _wrap(f"{o.node}: {o.state}: {o.detail.splitlines()[-1] if o.detail else ''}",
                         "- " if md else "  ")
        out.append("")
    if rep.collective is not None:
        out += _collective(rep.collective, md)
    out.append(f"{'healthy' if rep.exit_code == 0 else 'problems found'} (exit {rep.exit_code}); "
               f"{rep.duration_s:.1f} s")
    return "\n".join(out) + "\n"
