"""``stackpeel diff A B``: what differs between two diagnoses, ranked by how much each
difference can explain the checks that fail on one side and not the other.

"Why does it work on that machine and not this one?" A and B are saved JSON reports of
``stackpeel check`` (or interpreters, diagnosed on the spot). The comparison is pure: two
:class:`~stackpeel.model.Report` objects in, a :class:`Comparison` out; renderers turn that
into text, JSON or Markdown.

How differences are ranked (highest first):

1. a check whose verdict differs, when it is a root cause on either side;
2. facts of such a root-cause check (the compiler that is there on A and missing on B);
3. other checks whose verdict differs (symptoms);
4. facts of checks that are prerequisites of a check whose verdict differs;
5. versions (torch, Triton, FLA, the driver...) anywhere, then other facts, then the
   environment and host.

Timings, process ids, temporary paths and long captured output are noise and left out.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from .model import Report, Status

__all__ = ["Difference", "Comparison", "compare", "render_comparison"]

COMPARISON_SCHEMA_VERSION = 1

#: fact keys (last path element) that change from run to run without meaning anything
_NOISE = re.compile(r"(^|_)(duration|elapsed|seconds|pid|pids|created|time|timestamp|mtime|log_tail|tail|"
                    r"stdout_tail|stderr_tail|tmp|tmpdir|workdir|gb_per_s|rate|free_bytes|free_inodes|stderr|"
                    r"stdout|traceback|chain|argv|command|cache_files|line|uuid|module)(_s)?$|_s$")
_VERSION = re.compile(r"(^|_)version$|^versions?$|^(torch|triton|cuda|cudnn|nccl|driver|fla|transformers)$")
#: a random temporary-directory name (tempfile.mkdtemp, pytest's tmp_path): differs every run
_TEMP = re.compile(r"(?:stackpeel-[a-z0-9_]+-?|tmp|pytest-)[A-Za-z0-9_]{6,}|pytest-\d+|popen-gw\d+")
_LONG = 160


@dataclass(frozen=True)
class Difference:
    kind: str  # "verdict" | "version" | "fact" | "environment"
    where: str  # check id, or "target" / "host"
    key: str  # dotted fact path ("" for a verdict)
    a: Any
    b: Any
    score: int
    why: str
    #: the checks whose verdict differs that this difference can explain: its own check and
    #: the checks that (transitively) require it; for an environment variable that steers the
    #: stack, or the Python version, every check whose verdict differs
    explains: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "key": self.key, "a": self.a, "b": self.b,
                "score": self.score, "why": self.why, "explains": list(self.explains)}


@dataclass(frozen=True)
class Comparison:
    a_label: str
    b_label: str
    differences: Tuple[Difference, ...]
    roots_a: Tuple[str, ...] = ()
    roots_b: Tuple[str, ...] = ()
    only_a: Tuple[str, ...] = field(default_factory=tuple)  # checks present only in A
    only_b: Tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema_version": COMPARISON_SCHEMA_VERSION,
            "kind": "diff",
            "tool": {"name": "stackpeel"},
            "a": {"label": self.a_label, "root_causes": list(self.roots_a), "only_here": list(self.only_a)},
            "b": {"label": self.b_label, "root_causes": list(self.roots_b), "only_here": list(self.only_b)},
            "differences": [d.to_dict() for d in self.differences],
        }


def _flatten(value: Any, prefix: str = "") -> Iterable[Tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k in sorted(value, key=str):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
        # records (warnings, launches, ranks): compared as a set of their gist, order ignored
        yield prefix + "[]", frozenset(_gist(v) for v in value)
    else:
        yield prefix, value


def _gist(record: Mapping[str, Any]) -> str:
    for key in ("message", "label", "name", "code", "id"):
        if isinstance(record.get(key), str):
            return record[key][:120]
    return json.dumps({k: v for k, v in sorted(record.items()) if not isinstance(v, (dict, list))},
                      default=str)[:120]


def _comparable(value: Any) -> Any:
    """Long text and lists compare by content, shown shortened; empty is the same as none."""
    if value in ("", [], (), {}):
        return None
    if isinstance(value, (list, tuple)):
        value = ", ".join(map(str, value))
    if isinstance(value, str) and len(value) > _LONG:
        digest = hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:8]
        return f"{value[:60]}... ({len(value)} chars, {digest})"
    return value


def _is_noise(key: str, a: Any, b: Any) -> bool:
    last = re.sub(r"\[\d+\]", "", key.rsplit(".", 1)[-1])
    if _NOISE.search(last):
        return True
    # a temporary directory named differently on each run is not a difference
    # the same path but for a random temporary directory's name is not a difference
    return (isinstance(a, str) and isinstance(b, str) and bool(_TEMP.search(a))
            and _TEMP.sub("", a) == _TEMP.sub("", b))


def _facts_diff(fa: Mapping[str, Any], fb: Mapping[str, Any]) -> List[Tuple[str, Any, Any]]:
    da, db = dict(_flatten(fa)), dict(_flatten(fb))
    out = []
    for key in sorted(set(da) | set(db)):
        a, b = da.get(key), db.get(key)
        if isinstance(a, frozenset) or isinstance(b, frozenset):
            sa, sb = a or frozenset(), b or frozenset()
            if sa != sb and not _is_noise(key, None, None):
                out.append((key, "; ".join(sorted(sa - sb)) or "(nothing else)",
                            "; ".join(sorted(sb - sa)) or "(nothing else)"))
            continue
        a, b = _comparable(a), _comparable(b)
        if a != b and not _is_noise(key, a, b):
            out.append((key, a, b))
    return out


def _ancestors(results: Mapping[str, Any], cid: str) -> Set[str]:
    seen: Set[str] = set()
    stack = list(getattr(results.get(cid), "requires", ()) or ())
    while stack:
        r = stack.pop()
        if r not in seen:
            seen.add(r)
            stack.extend(getattr(results.get(r), "requires", ()) or ())
    return seen


def _roots(report: Report) -> Dict[str, Tuple[str, ...]]:
    return {rc.check_id: tuple(rc.codes) for rc in tuple(report.diagnosis.blocking) + tuple(report.diagnosis.degraded)}


def _codes(result) -> Tuple[str, ...]:
    return tuple(sorted(f.code for f in result.findings))


#: environment variables of the target that steer the stack (their values are compared)
_STEERING = re.compile(r"^(PATH|CC|CXX|CUDA_\w+|LD_\w+|TRITON_\w+|NCCL_\w+|TORCH_\w+|PYTORCH_\w+|"
                       r"NVIDIA_\w+|CONDA_PREFIX|VIRTUAL_ENV|PYTHONPATH|HF_\w+|XDG_CACHE_HOME)$")


def compare(a: Report, b: Report, a_label: str = "A", b_label: str = "B") -> Comparison:
    """Every meaningful difference between ``a`` and ``b``, most explanatory first."""
    ra, rb = {r.id: r for r in a.results}, {r.id: r for r in b.results}
    roots_a, roots_b = _roots(a), _roots(b)
    both = [cid for cid in ra if cid in rb]
    changed = {cid for cid in both if (ra[cid].status, _codes(ra[cid])) != (rb[cid].status, _codes(rb[cid]))}
    upstream: Set[str] = set()
    merged = dict(ra)
    merged.update(rb)
    order = {cid: i for i, cid in enumerate(list(ra) + [c for c in rb if c not in ra])}
    below: Dict[str, List[str]] = {}  # check -> the changed checks it can explain
    for cid in sorted(changed, key=lambda c: order.get(c, 0)):
        above = _ancestors(merged, cid)
        upstream |= above
        for x in above | {cid}:
            below.setdefault(x, []).append(cid)
    everything = tuple(sorted(changed, key=lambda c: order.get(c, 0)))
    diffs: List[Difference] = []
    for cid in both:
        x, y = ra[cid], rb[cid]
        is_root = cid in roots_a or cid in roots_b
        if cid in changed:
            side = "root cause on " + " and ".join(
                s for s, roots in (("A", roots_a), ("B", roots_b)) if cid in roots) if is_root else \
                "its verdict differs"
            sa = f"{x.status.value}" + (f" ({', '.join(_codes(x))})" if x.findings else "")
            sb = f"{y.status.value}" + (f" ({', '.join(_codes(y))})" if y.findings else "")
            diffs.append(Difference("verdict", cid, "", sa, sb, 100 if is_root else 60, side,
                                    tuple(below.get(cid, ()))))
        for key, va, vb in _facts_diff(x.facts, y.facts):
            is_version = bool(_VERSION.search(re.sub(r"\[\d+\]", "", key.rsplit(".", 1)[-1])))
            score = 10 + (25 if is_version and cid not in changed else 0) + (5 if (va is None) != (vb is None) else 0)
            if cid in changed:
                score += 45 if is_root else 25
                why = "fact of a root cause" if is_root else "fact of a check whose verdict differs"
            elif cid in upstream:
                score += 15
                why = "fact of a prerequisite of a check whose verdict differs"
            else:
                why = "version" if is_version else "fact"
            diffs.append(Difference("version" if is_version else "fact", cid, key, va, vb, score, why,
                                    tuple(below.get(cid, ()))))
    for where, da, db in (("target", a.target, b.target), ("host", a.host, b.host)):
        for key, va, vb in _facts_diff(da, db):
            last = key.rsplit(".", 1)[-1]
            score = 8 if _STEERING.match(last) else 3
            is_version = bool(_VERSION.search(last))
            diffs.append(Difference("version" if is_version else "environment", where, key, va, vb,
                                    score + (20 if is_version else 0), "environment" if score == 3 else
                                    "environment variable that steers the stack",
                                    everything if (score > 3 or is_version) else ()))
    diffs.sort(key=lambda d: (-d.score, order.get(d.where, len(order)), d.key))
    return Comparison(
        a_label=a_label, b_label=b_label, differences=tuple(diffs),
        roots_a=tuple(f"{c} ({', '.join(codes)})" for c, codes in roots_a.items()),
        roots_b=tuple(f"{c} ({', '.join(codes)})" for c, codes in roots_b.items()),
        only_a=tuple(c for c in ra if c not in rb), only_b=tuple(c for c in rb if c not in ra),
    )


# --------------------------------------------------------------------------- rendering

def _show(v: Any) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_comparison(cmp: Comparison, fmt: str = "text", limit: int = 12, facts_per_check: int = 4,
                      reports: Optional[Tuple[Report, Report]] = None) -> str:
    """Text and Markdown group the differences by check, most explanatory check first, and
    fit 80 columns; JSON keeps every difference; HTML (:mod:`stackpeel.render.diff_html`) adds
    both sides' verdicts and graphs when given the two ``reports``."""
    if fmt == "json":
        return json.dumps(cmp.to_dict(), indent=2, default=str) + "\n"
    if fmt == "html":
        from .render.diff_html import render_comparison_html
        return render_comparison_html(cmp, *(reports or (None, None)), limit=limit)
    md = fmt == "markdown"
    lines: List[str] = []
    lines.append(("# " if md else "") + "stackpeel diff")
    lines.append(f"{'- ' if md else ''}A: {cmp.a_label}")
    lines.append(f"{'- ' if md else ''}B: {cmp.b_label}")
    lines.append("")
    for side, roots in (("A", cmp.roots_a), ("B", cmp.roots_b)):
        text = f"Root causes on {side}: {', '.join(roots) if roots else 'none'}"
        lines.extend(["- " + text] if md else textwrap.wrap(text, 80, subsequent_indent="    "))
    lines.append("")
    if not cmp.differences:
        lines.append("No meaningful difference: same verdicts, versions and facts.")
        return "\n".join(lines) + "\n"
    groups: Dict[str, List[Difference]] = {}
    for d in cmp.differences:  # already most explanatory first
        groups.setdefault(d.where, []).append(d)
    lines.append(f"{len(cmp.differences)} difference(s) in {len(groups)} place(s), most explanatory first:")
    lines.append("")
    for n, (where, ds) in enumerate(groups.items()):
        if n == limit:
            rest = sum(len(v) for v in list(groups.values())[limit:])
            lines.append(f"... {len(groups) - limit} more place(s), {rest} difference(s): --all shows them")
            break
        verdict = next((d for d in ds if d.kind == "verdict"), None)
        facts = [d for d in ds if d.kind != "verdict"]
        head = f"{where}: {_show(verdict.a)} -> {_show(verdict.b)}" if verdict else f"{where}: same verdict"
        why = f" [{verdict.why}]" if verdict and verdict.why.startswith("root") else ""
        lines.append(("### " if md else "") + head + why)
        if md:
            lines.append("")
        for d in facts[:facts_per_check]:
            text = f"{d.key}: {_clip(_show(d.a), 28)} -> {_clip(_show(d.b), 28)}"
            lines.append(("- " if md else "    ") + (_clip(text, 76) if not md else text))
        if len(facts) > facts_per_check:
            lines.append(("- " if md else "    ") + f"+ {len(facts) - facts_per_check} more fact(s)")
        lines.append("")
    for side, only in (("A", cmp.only_a), ("B", cmp.only_b)):
        if only:
            lines.append(f"Checks only in {side}: {', '.join(only)}")
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- CLI

EPILOG = """\
A and B are JSON reports saved with `stackpeel check --format json -o FILE`, nodes of a
fleet report saved with `stackpeel fleet --format json -o FILE` (written FILE:NODE), or
interpreters (a path to a python, or a venv directory) to diagnose now.

examples:
  stackpeel diff works.json broken.json
  stackpeel diff ~/venv-old/bin/python ~/venv-new/bin/python --format markdown
  stackpeel diff fleet.json:gpu-01 fleet.json:gpu-07 --format html -o diff.html

exit codes: 0 no meaningful difference, 1 differences found, 2 bad input.
"""


def add_parser(sub):
    import argparse

    p = sub.add_parser("diff", help="compare two diagnoses: what differs, ranked by what it explains",
                       description="Compare two stackpeel reports (or interpreters) and rank every difference "
                                   "in verdicts, versions, facts and environment by how much it can explain "
                                   "the checks that fail on one side only.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="report JSON, FLEET.json:NODE or interpreter (the working side, usually)")
    p.add_argument("b", metavar="B", help="report JSON, FLEET.json:NODE or interpreter (the broken side, usually)")
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default="text",
                   help="output format (default: text; html: one self-contained page with both sides' graphs)")
    p.add_argument("--all", action="store_true", help="show every difference (default: the 12 most explanatory "
                                                      "places, 4 facts each)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the comparison to FILE")
    p.set_defaults(handler=cmd_diff)
    return p


def _fleet_node(data: Mapping[str, Any], node: str, path: str) -> Report:
    nodes = data.get("nodes") or []
    names = [n.get("node") for n in nodes]
    for n in nodes:
        if n.get("node") == node:
            if not n.get("report"):
                raise ValueError(f"node {node} of {path} has no report ({n.get('state')}: "
                                 f"{(n.get('detail') or '').strip().splitlines()[-1:] or ''})")
            return Report.from_dict(n["report"])
    raise ValueError(f"{path} has no node {node!r}; its nodes: {', '.join(map(str, names)) or 'none'}")


def _split_fleet_spec(spec: str) -> Optional[Tuple[str, str]]:
    """``FILE:NODE`` -> (FILE, NODE) where FILE exists (a node name may hold ':', host:port)."""
    import os

    at = spec.find(":")
    while at > 0:
        if os.path.isfile(spec[:at]):
            return spec[:at], spec[at + 1:]
        at = spec.find(":", at + 1)
    return None


def _read_json(path: str) -> Any:
    from .redact import redact_report_dict

    with open(path, encoding="utf-8") as f:
        return redact_report_dict(json.load(f))  # a report from elsewhere: secrets out as in every format


def _load(spec: str) -> Report:
    """A side of the comparison: a report JSON, a node of a fleet report, or an interpreter."""
    import os

    is_file = os.path.isfile(spec)
    if not is_file and not os.path.isdir(spec):
        fleet = _split_fleet_spec(spec)
        if fleet:
            path, node = fleet
            data = _read_json(path)
            if not isinstance(data, Mapping) or data.get("kind") != "fleet":
                raise ValueError(f"{path} is not a fleet report (FILE:NODE names a node of `stackpeel fleet "
                                 "--format json`)")
            return _fleet_node(data, node, path)
    if is_file and not os.access(spec, os.X_OK) or spec.endswith(".json"):
        data = _read_json(spec)
        if isinstance(data, Mapping) and data.get("kind") == "fleet":
            names = [str(n.get("node")) for n in data.get("nodes") or []]
            raise ValueError(f"{spec} is a fleet report: name one of its nodes as {spec}:NODE "
                             f"(nodes: {', '.join(names) or 'none'})")
        return Report.from_dict(data)
    from .engine import check

    python = os.path.join(spec, "bin", "python") if os.path.isdir(spec) else spec
    return check(python=python)


def cmd_diff(args) -> int:
    import sys

    try:
        a, b = _load(args.a), _load(args.b)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"stackpeel diff: cannot read a report: {exc}", file=sys.stderr)
        return 2
    cmp = compare(a, b, args.a, args.b)
    text = render_comparison(cmp, args.format, limit=10 ** 9 if args.all else 12,
                             facts_per_check=10 ** 9 if args.all else 4, reports=(a, b))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 1 if cmp.differences else 0
