"""Would a guess from precedent have named the cause of logs nobody had written a rule for?
(not a test; TRAINING logs only). An experiment that explain does NOT ship (docs/explain.md,
"Tried and not shipped: guesses from precedent").

A signature many causes print (NCCL's ``unhandled system error``, ``No CUDA GPUs are
available``, the driver's ``insufficient for CUDA runtime version``) names a generic code, and on
a new log that code is rarely the cause its thread established. The *precedent* of a set of
signatures: of the training threads whose logs matched any of them, how many established each
cause (one vote per thread). The rule tried: when explain's first answer is a symptom a
signature names, put first the cause at least ``--agree`` threads (and at least ``--share`` of
the ``--threads`` or more that showed it) established, among the codes those signatures can
stand for (``Entry.names``).

The protocol. Every training log that a pattern engineer brought in was measured *before* any
rule was written from it (``bench/results/explain_accuracy-*-before*.txt``, or ``.txt.gz``: the lines of the
round's new logs, not its whole-training files). That first answer is what explain says to a
log it has never seen. For each such log whose first answer names a code:

* the signatures of the log that evidence that code (``Entry.codes``) are found by scanning the
  log with today's knowledge base;
* the precedent is asked with every exemplar of the log's own REPOSITORY left out (its sibling
  threads do not vote for it), among the codes those signatures can stand for;
* the log scores as before, or with the precedent's code first when it speaks.

Settings are chosen on half A of the repositories (second hex digit of sha256(repository)
even, as bench/explain_fallback.py) and reported on half B. Caveats: the signatures are today's,
and the voting threads include threads collected after the log (other repositories).

    python bench/explain_precedent.py [--half A|B|AB] [--grid] [--roots] [--out FILE]

``--roots`` also lets a precedent replace a first answer that is a root (the variant measured
first; it lost as many logs as it gained).

Standard library, stackpeel and the benches beside it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import aliases, corpus_split, git, read_results  # noqa: E402
from explain_fallback import half, log_body  # noqa: E402
from stackpeel.codes import all_codes  # noqa: E402
from stackpeel.explain.knowledge import load as load_explain_kb  # noqa: E402
from stackpeel.explain.parser import scan_text  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: the files that hold a round's new logs measured before its rules (not the whole-training runs)
BEFORE = re.compile(r"explain_accuracy-\d{4}-\d\d-\d\d-[a-z]+\d*-before\d*\.txt(?:\.gz)?$")


#: the settings chosen on half A (threads, agree, share)
THREADS, AGREE, SHARE = 3, 3, 0.5


@dataclass
class Voter:
    """A training thread: its repository, established code and the signatures its log matched."""
    source: str
    repo: str
    code: str
    entries: frozenset


@dataclass
class Case:
    name: str
    repo: str
    half: str
    expected: List[str]
    first: str
    #: "root" or "symptom": the first code's kind in today's catalogue
    kind: str
    entries: Tuple[str, ...]


def first_answers() -> Dict[str, str]:
    """file name -> explain's first code when the log was new (its earliest 'before' file)."""
    out: Dict[str, str] = {}
    for f in sorted(p for p in RESULTS.iterdir() if BEFORE.search(p.name)):
        for line in read_results(f).splitlines():
            if not line.startswith("training\t"):
                continue
            cols = line.split("\t")
            ranked = cols[3].split("=", 1)[1]
            if cols[1] not in out and ranked != "-":
                out[cols[1]] = ranked.split(",")[0]
    return out


def corpus() -> Tuple[List[Case], List[Voter]]:
    """The logs measured before their rules, and every training thread as a voter."""
    alias = aliases()
    firsts = first_answers()
    split = corpus_split.compute_split()
    entries = {e.id: e for e in load_explain_kb().entries}
    catalogue = all_codes()
    cases, voters = [], []
    for h in sorted(split.training, key=lambda h: h.name):
        repo = h.repository.lower()
        expected = [alias.get(c, c) for c in h.expected]
        hits = {x.entry for x in scan_text(log_body(h.path)).hits if x.entry in entries}
        if expected and h.meta.get("source"):
            voters.append(Voter(h.meta["source"], repo, expected[0], frozenset(hits)))
        if h.name in firsts:
            first = alias.get(firsts[h.name], firsts[h.name])
            kind = getattr(catalogue.get(first), "kind", "root")
            mine = tuple(sorted(i for i in hits if first in entries[i].codes))
            cases.append(Case(h.name, repo, half(repo), expected, first, kind, mine))
    return cases, voters


def names(entry) -> Tuple[str, ...]:
    """Every code a line of ``entry`` can stand for: its codes, could-be codes, refinements."""
    return tuple(dict.fromkeys((*entry.codes, *entry.could_be, *(c for r in entry.refine for c in r.codes))))


def precedent(ids: Sequence[str], allowed: Sequence[str], voters: Sequence[Voter], repo: str,
              settings: Tuple[int, int, float]) -> Optional[str]:
    """The cause most threads (of other repositories) that matched ``ids`` established, when
    enough agree and it is ``allowed``; one vote per thread."""
    threads, agree, share = settings
    votes = Counter(v.code for v in {v.source: v for v in voters if v.repo != repo and v.entries & set(ids)}.values())
    if not votes:
        return None
    (code, k), *rest = votes.most_common()
    n = sum(votes.values())
    if (rest and rest[0][1] == k) or n < threads or k < agree or k < share * n or code not in allowed:
        return None
    return code


def answer(case: Case, voters: Sequence[Voter], entries: Dict, settings: Tuple[int, int, float],
           roots: bool = False) -> str:
    """The first code with the precedent applied (the old first code when it does not speak)."""
    if not case.entries or (case.kind != "symptom" and not roots):
        return case.first
    allowed = [c for i in case.entries for c in names(entries[i]) if c != case.first]
    return precedent(case.entries, allowed, voters, case.repo, settings) or case.first


def score(cs: Sequence[Case], voters: Sequence[Voter], settings: Tuple[int, int, float],
          roots: bool = False) -> Dict[str, int]:
    entries = {e.id: e for e in load_explain_kb().entries}
    n = before = after = switched = right = lost = 0
    for c in cs:
        new = answer(c, voters, entries, settings, roots)
        n += 1
        before += c.first in c.expected
        after += new in c.expected
        if new != c.first:
            switched += 1
            right += new in c.expected
            lost += c.first in c.expected
    return {"logs": n, "before": before, "after": after, "switched": switched, "switched_right": right,
            "lost": lost}


def line(label: str, f: Dict[str, int]) -> str:
    pct = lambda k: 100.0 * k / f["logs"] if f["logs"] else 0.0  # noqa: E731
    return (f"{label:4s} {f['logs']:4d} logs  top-1 before {f['before']:4d} ({pct(f['before']):5.1f} %)  "
            f"after {f['after']:4d} ({pct(f['after']):5.1f} %)  switched {f['switched']:3d}  "
            f"of them right {f['switched_right']:3d}, were right before {f['lost']:3d}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", default="A", choices=("A", "B", "AB"),
                    help="which half of the training repositories (settings are chosen on A only)")
    ap.add_argument("--grid", action="store_true", help="try the settings around the chosen ones (half A only)")
    ap.add_argument("--roots", action="store_true", help="let a precedent replace a root too")
    ap.add_argument("--out", type=Path, default=None, help="write the figures here")
    args = ap.parse_args(argv)
    cs, voters = corpus()
    out = [f"stackpeel explain precedent protocol, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
           f"commit {git('rev-parse', '--short', 'HEAD')}; {len(cs)} training logs measured before their rules; "
           f"{len(voters)} voting threads, those of the log's own repository left out",
           f"replaces: {'any first answer' if args.roots else 'a first answer that is a symptom'}", ""]
    if args.grid:
        if args.half != "A":
            ap.error("--grid chooses settings: half A only")
        sel = [c for c in cs if c.half == "A"]
        rows = []
        for t, a, s in itertools.product((2, 3, 5, 8), (2, 3, 4, 5), (0.3, 0.4, 0.5, 0.6, 0.7)):
            if a <= t:
                rows.append(((t, a, s), score(sel, voters, (t, a, s), args.roots)))
        rows.sort(key=lambda r: (-(r[1]["after"] - r[1]["before"]), r[1]["switched"]))
        for (t, a, s), f in rows[:15]:
            out.append(line("A", f) + f"   threads>={t} agree>={a} share>={s}")
    else:
        settings = (THREADS, AGREE, SHARE)
        out.append(f"settings: threads >= {THREADS}, agree >= {AGREE}, share >= {SHARE}")
        for h in args.half:
            out.append(line(h, score([c for c in cs if c.half == h], voters, settings, args.roots)))
        entries = {e.id: e for e in load_explain_kb().entries}
        by = Counter((c.first, answer(c, voters, entries, settings, args.roots)) for c in cs if c.half in args.half)
        out.append("")
        out.append("switches (first code before -> with the precedent: logs):")
        for (a, b), k in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])):
            if a != b:
                out.append(f"  {a} -> {b}: {k}")
    text = "\n".join(out) + "\n"
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
