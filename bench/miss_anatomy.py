"""Where explain's first answer comes from on each training miss (a developer tool, not a test).

For every log of the training part whose first candidate is not its expected code (the same
scoring as ``bench/explain_accuracy.py``: the expected code or an alias of it), prints one row:

* ``kind``: ``nothing`` (no candidate), ``guess`` (vocabulary, resemblance, prior), ``symptom``
  (a symptom code first), ``stated`` / ``inferred`` (a root first, from a signature or from a
  symptom and context clues);
* ``pos``: where the first candidate's evidence lies against the *failure line* (the message
  line of the last traceback, else the last error line the scan kept): ``at`` (it cites that
  line), ``before``, ``after``, ``-`` (no failure line);
* ``warn``: every evidence line of the first candidate is warning-shaped (``file:N:
  XWarning:``, ``warn``/``WARNING`` in the line) while the log has an error line;
* the rank of the expected code among the candidates (``-`` when absent) and whether its
  evidence cites the failure line;
* the first candidate's first evidence line, and the failure line.

Then counts per kind and per position, and how many misses hold the expected code lower in the
ranking with evidence on the failure line while the first does not cite it (the misses a
"failure line first" ranking rule could gain, before counting what it would lose).

Explain runs exactly as ``bench/explain_accuracy.py --in-process`` runs it (the body below
``# ---``, the log's own thread left out of the resemblance exemplars). Training part only: it
prints log names and lines. Usage::

    python bench/miss_anatomy.py [--lines]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import corpus_split  # noqa: E402  (the accuracy bench loads scripts/corpus_split.py once)

#: a warning-shaped line (``NCCL_DEBUG=WARN`` is a setting, not a warning)
WARN_RE = re.compile(r"(?<![=\w])warn(?:ing)?\b|[A-Z]\w*Warning\b", re.I)


def failure_line(parsed) -> Optional[int]:
    """The message line of the last traceback, else the last error line the scan kept."""
    if parsed.tracebacks:
        tb = parsed.tracebacks[-1]
        return tb.exc_line or tb.end or None
    if parsed.other_errors:
        return parsed.other_errors[-1].number
    return None


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", action="store_true", help="print the first evidence and failure lines")
    args = ap.parse_args(argv)
    from stackpeel.explain import similar
    from stackpeel.explain.parser import scan_text
    from stackpeel.explain.reasoning import GUESS_BASES, PRIOR_BASIS, explain
    from stackpeel.knowledge import load

    kb = load()
    split = corpus_split.compute_split()
    kinds: Counter = Counter()
    pos_counts: Counter = Counter()
    #: over every log with a first candidate: (kind, position, warning-only) -> [right, wrong]
    table: Dict[Tuple[str, str, int], List[int]] = defaultdict(lambda: [0, 0])
    movable = 0
    n = 0
    for h in split.training:
        expected = {kb.canonical(c) for c in h.expected}
        body = corpus_split.read_body(h.path)
        parsed = scan_text(body)
        with similar.leaving_out(h.meta.get("source", "")):
            expl = explain(parsed, source="<log>")
        cands = expl.candidates
        codes = [kb.canonical(c.code) for c in cands]
        right = bool(codes) and codes[0] in expected
        fl = failure_line(parsed)
        if not cands:
            kind, pos, warn = "nothing", "-", False
        else:
            top = cands[0]
            kind = ("guess" if top.basis in GUESS_BASES or top.basis == PRIOR_BASIS else
                    "symptom" if top.kind == "symptom" else top.confidence)
            own = [e for e in top.evidence if not e.entry.startswith(("clue:", "symptom:"))]
            lines = [e.line for e in own] or [top.first_line]
            pos = ("-" if fl is None else "at" if fl in lines else
                   "before" if max(lines) < fl else "after")
            warn = bool(own) and bool(parsed.tracebacks or parsed.other_errors) and all(
                WARN_RE.search(e.text) for e in own)
            table[(kind, pos, int(warn))][0 if right else 1] += 1
        if right:
            continue
        n += 1
        text = body.splitlines()
        rank = next((i + 1 for i, c in enumerate(codes) if c in expected), None)
        exp_at = False
        if rank is not None:
            exp_at = fl is not None and any(e.line == fl for e in cands[rank - 1].evidence)
            if exp_at and pos != "at":
                movable += 1
        kinds[kind] += 1
        pos_counts[pos] += 1
        print(f"{h.name}\texpected={','.join(sorted(expected))}\tfirst={codes[0] if codes else '-'}\t"
              f"kind={kind}\tpos={pos}\twarn={int(warn)}\texpected_rank={rank or '-'}\texpected_at_failure={int(exp_at)}")
        if args.lines and cands:
            ev = cands[0].evidence[0] if cands[0].evidence else None
            if ev is not None:
                print(f"    first L{ev.line}: {ev.text[:200]}")
            if fl is not None and 0 < fl <= len(text):
                print(f"    failure L{fl}: {text[fl - 1].strip()[:200]}")
    print(f"\nmisses: {n}")
    print("by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    print("first candidate's evidence against the failure line: " +
          ", ".join(f"{k} {v}" for k, v in pos_counts.most_common()))
    print(f"expected code ranked lower with evidence on the failure line, first not citing it: {movable}")
    print("\nevery log with a first candidate: kind, position, warning-only -> right / wrong")
    for (kind, pos, warn), (r, w) in sorted(table.items(), key=lambda kv: (-sum(kv[1]), kv[0])):
        print(f"  {kind:9s} {pos:7s} warn={warn}  right {r:4d}  wrong {w:3d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
