"""How precise each log signature of the knowledge base is on the corpus (a developer tool, not a test).

For every signature (``[[<code>.log]]``) and the corpus logs of one part (training by default),
counts

* matched: the logs where the signature matched a line (``ParseResult.hit_counts``);
* first: the logs where a code the signature stood for in that log (its code, or the code its
  ``refine`` chose from the line's context) is the code of explain's first candidate;
* wrong-first: of those, the logs whose expected code is a different cause: neither the first code
  itself, nor an alias of it, nor a code the expected one is ``caused_by`` or ``causes`` (a symptom
  answer whose ranked causes hold the expected code is not wrong, nor a cause of the expected symptom).

Explain runs in this process exactly as ``bench/explain_accuracy.py --in-process`` runs it (the log
body below ``# ---``, the log's own thread left out of the resemblance exemplars), through
:func:`stackpeel.explain.parser.scan_text` and :func:`stackpeel.explain.reasoning.explain`, which
``stackpeel explain --no-live`` calls; the hits of the scan name their signature (``Hit.entry``).

Prints a table sorted by wrong-firsts (its code column is the table the signature is declared in; a
``refine`` may have chosen another code in a log), then for each signature with wrong-firsts the
matched line of each such log, with its expected code and explain's first code. Usage::

    python bench/signature_precision.py [--part training] [--top N] [--all]

Patterns are written from the training part only: run it on training. ``--part validation`` is
refused unless ``--counts-only`` is given, which prints the table without any line or log name.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import corpus_split  # noqa: E402  (the accuracy bench loads scripts/corpus_split.py once)


def related(code: str, kb) -> Set[str]:
    """The codes a first answer may be when ``code`` is expected: itself, what causes it, what it causes."""
    entry = kb.codes.get(code)
    out = {code}
    if entry is not None:
        out.update(entry.caused_by)
        out.update(entry.causes)
    return out


def measure(part: str) -> Tuple[Dict[str, Dict], Dict[str, Tuple[str, ...]]]:
    from stackpeel.explain import similar
    from stackpeel.explain.knowledge import load as load_explain
    from stackpeel.explain.parser import scan_text
    from stackpeel.explain.reasoning import _refined, explain
    from stackpeel.knowledge import load

    kb = load()
    ekb = load_explain()
    entries = {e.id: e for e in ekb.entries}
    stats: Dict[str, Dict] = {e.id: {"matched": 0, "first": 0, "wrong": 0, "lines": [], "all": []}
                              for e in ekb.entries}
    split = corpus_split.compute_split()
    logs = split.training if part == "training" else split.validation
    for h in logs:
        expected = [kb.canonical(c) for c in h.expected]
        ok: Set[str] = set()
        for c in expected:
            ok |= related(c, kb)
        parsed = scan_text(corpus_split.read_body(h.path))
        with similar.leaving_out(h.meta.get("source", "")):
            expl = explain(parsed, source="<log>")
        first = expl.candidates[0].code if expl.candidates else None
        clue_lines = list(dict.fromkeys(w for seen in parsed.clues.values() for w in seen))
        # per signature: the codes it stood for in this log, and its first matched line
        stood: Dict[str, Set[str]] = defaultdict(set)
        line_of: Dict[str, str] = {}
        for hit in parsed.hits:
            e = entries.get(hit.entry)
            if e is None:
                continue
            codes, _ = _refined(e, hit.context, clue_lines, ekb)
            stood[e.id].update(codes)
            line_of.setdefault(e.id, hit.line.text.strip())
        for sid in set(parsed.hit_counts) | set(stood):
            if sid not in stats:
                continue
            s = stats[sid]
            s["matched"] += 1
            s["all"].append((h.name, ",".join(expected), first or "-", line_of.get(sid, "?")))
            if first is not None and first in (stood.get(sid) or set(entries[sid].codes)):
                s["first"] += 1
                if first not in ok:
                    s["wrong"] += 1
                    s["lines"].append((h.name, ",".join(expected), first, line_of.get(sid, "?")))
    return stats, {e.id: e.codes for e in ekb.entries}


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="training", choices=("training", "validation"))
    ap.add_argument("--counts-only", action="store_true", help="print the table only, no line or log name")
    ap.add_argument("--top", type=int, default=40, help="rows of the table (default 40)")
    ap.add_argument("--all", action="store_true", help="every signature that matched a log")
    ap.add_argument("--signature", metavar="ID", action="append", default=[],
                    help="print every log the signature matched (expected code, first code, line)")
    args = ap.parse_args(argv)
    if args.part != "training" and not args.counts_only:
        ap.error("only the training part may be read line by line: add --counts-only")
    stats, codes = measure(args.part)
    rows = sorted((s for s in stats.items() if s[1]["matched"]),
                  key=lambda kv: (-kv[1]["wrong"], -kv[1]["first"], kv[0]))
    if not args.all:
        rows = [r for r in rows if r[1]["wrong"]][:args.top] if any(r[1]["wrong"] for r in rows) else rows[:args.top]
    total = {k: sum(s[k] for s in stats.values()) for k in ("matched", "first", "wrong")}
    print(f"part: {args.part}; signatures that matched: {sum(1 for s in stats.values() if s['matched'])}; "
          f"wrong-firsts in all: {total['wrong']}")
    print(f"{'signature':50s} {'code':38s} {'matched':>7s} {'first':>5s} {'wrong':>5s}")
    for sid, s in rows:
        print(f"{sid:50s} {','.join(codes[sid])[:38]:38s} {s['matched']:7d} {s['first']:5d} {s['wrong']:5d}")
    if args.counts_only:
        return 0
    for sid in args.signature:
        print(f"== {sid}: every matched log (file, expected, first, line)")
        for name, expected, first, line in stats.get(sid, {}).get("all", []):
            print(f"   {name}  expected={expected}  first={first}\n      {line[:300]}")
        return 0
    print()
    for sid, s in rows:
        if not s["lines"]:
            continue
        print(f"== {sid} ({','.join(codes[sid])})")
        for name, expected, first, line in s["lines"]:
            print(f"   {name}  expected={expected}  first={first}\n      {line[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
