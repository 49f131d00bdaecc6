"""How precise each clue literal of the knowledge base is on the training part (a developer tool, not a test).

A clue (``clues = [...]`` of a code) is a literal whose presence anywhere in a log makes that code
the inferred cause of a symptom the log shows, or lets a refinement pick it. A literal of generic
wording (a script's ``sleep 30``, a run's ``--resume``, a path's ``lib64``) infers a cause the log
does not show: the "wrong specific rule" shape of docs/dev/validation-miss-audit.md (finding 8),
reached through context rather than through a signature.

For every literal, over the training logs (explain run in process as ``bench/explain_accuracy.py
--in-process`` runs it, the log's own thread left out of the resemblance exemplars), counts

* present: logs whose scan found it (``ParseResult.clues``);
* decided: logs whose first candidate cites it as evidence (``clue:<literal>``);
* wrong: of those, logs whose expected code is not the first code (nor its alias).

Prints the literals that decided at least once, sorted by wrong, then every literal present in
many logs that never decided (generic words that stay harmless only while no symptom asks for
them). Training part only. Usage::

    python bench/clue_precision.py [--present N]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import corpus_split  # noqa: E402  (the accuracy bench loads scripts/corpus_split.py once)


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--present", type=int, default=15,
                    help="list literals present in at least N logs that never decided (default 15)")
    args = ap.parse_args(argv)
    from stackpeel.explain import similar
    from stackpeel.explain.knowledge import load as load_explain
    from stackpeel.explain.parser import scan_text
    from stackpeel.explain.reasoning import explain
    from stackpeel.knowledge import load

    kb = load()
    ekb = load_explain()
    owner: Dict[str, List[str]] = defaultdict(list)
    for code, lits in ekb.clues.items():
        for lit in lits:
            owner[lit].append(code)
    stats: Dict[str, List[int]] = defaultdict(lambda: [0, 0, 0])
    lines: Dict[str, List[str]] = defaultdict(list)
    for h in corpus_split.compute_split().training:
        expected = {kb.canonical(c) for c in h.expected}
        parsed = scan_text(corpus_split.read_body(h.path))
        for lit in parsed.clues:
            stats[lit][0] += 1
        if not parsed.clues:
            continue
        with similar.leaving_out(h.meta.get("source", "")):
            expl = explain(parsed, source="<log>")
        if not expl.candidates:
            continue
        top = expl.candidates[0]
        right = kb.canonical(top.code) in expected
        for lit in dict.fromkeys(e.entry[5:] for e in top.evidence if e.entry.startswith("clue:")):
            s = stats[lit]
            s[1] += 1
            if not right:
                s[2] += 1
                lines[lit].append(f"{h.name} expected={','.join(sorted(expected))} first={top.code}")
    decided = sorted((kv for kv in stats.items() if kv[1][1]), key=lambda kv: (-kv[1][2], -kv[1][1], kv[0]))
    print(f"training part; clue literals present in a log: {sum(1 for s in stats.values() if s[0])}; "
          f"that decided a first answer: {len(decided)}; wrong decisions: {sum(s[2] for _, s in decided)}")
    print(f"{'literal':32s} {'code':36s} {'present':>7s} {'decided':>7s} {'wrong':>5s}")
    for lit, (p, d, w) in decided:
        print(f"{lit[:32]:32s} {','.join(owner.get(lit, ['?']))[:36]:36s} {p:7d} {d:7d} {w:5d}")
        for row in lines[lit]:
            print(f"    {row}")
    print(f"\nliterals present in at least {args.present} training logs that decided nothing:")
    for lit, (p, d, w) in sorted(stats.items(), key=lambda kv: -kv[1][0]):
        if p >= args.present and not d:
            print(f"{lit[:32]:32s} {','.join(owner.get(lit, ['?']))[:36]:36s} {p:7d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
