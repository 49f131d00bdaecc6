"""How well explain guesses when no signature matches (not a test; TRAINING logs only).

The protocol. For every TRAINING log of tests/corpus/explain (scripts/corpus_split.py decides;
a validation log is never opened: only the header of each log is read to learn its side):

* the **cut**: the lines the matched signatures cite are removed, again and again until no
  signature matches (:func:`stackpeel.explain.cuts.uncited`, the cut tests/test_explain_silence.py
  stresses). What is left is the failure as a log nobody wrote a pattern for shows it; explain
  answers it with what remains: context clues, facts, the vocabulary, resemblance;
* the **whole** log, to show that a change costs nothing where the signatures answer.

Each is explained in process with every exemplar of the log's own REPOSITORY left out
(``similar.leaving_out``): a repository's sibling threads do not answer for each other. The
answer is scored against the log's ``# expected:`` codes (through the knowledge base's aliases)
the way bench/explain_accuracy.py scores it (the candidates' codes, each followed by its
"could be" codes): answered (a code is named), top-1, top-3, unknown (no code), silent (no
code and exit 0), and the precision of the first guess (top-1 of the answered).

The training repositories are split into two halves by a fixed rule: half A when the SECOND hex
digit of sha256(repository.lower()) is even, half B when it is odd. Settings are chosen on half A
only; half B is reported once per change kept (``--half B``), never iterated on.

    python bench/explain_fallback.py                  # half A (the default)
    python bench/explain_fallback.py --half AB --out bench/results/explain_fallback-<date>.txt

Standard library, stackpeel and the accuracy bench beside it (its corpus reading).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
# the accuracy bench's corpus split, log body, aliases and git: one reading of the corpus for both
from explain_accuracy import aliases, corpus_split, git  # noqa: E402
log_body = corpus_split.read_body
from stackpeel.explain import explain_text, similar  # noqa: E402
from stackpeel.explain.cuts import uncited  # noqa: E402

_REPO_RE = re.compile(r"https://github\.com/([^/]+/[^/]+)/")
#: the bases of a first candidate that is a guess of the fallback mechanisms
GUESSES = ("vocabulary", "similar")


def half(repo: str) -> str:
    """'A' or 'B': the parity of the second hex digit of sha256(repo.lower())."""
    return "A" if int(hashlib.sha256(repo.lower().encode()).hexdigest()[1], 16) % 2 == 0 else "B"


@dataclass
class Case:
    name: str
    repo: str
    half: str
    expected: List[str]
    whole: str
    cut: str = ""
    #: thread URLs of the log's repository (all left out of the exemplars while it is explained)
    siblings: Tuple[str, ...] = ()


@dataclass
class Row:
    name: str
    half: str
    part: str
    expected: List[str]
    ranked: List[str]
    basis: str
    exit: int

    @property
    def top1(self) -> bool:
        return bool(self.ranked) and self.ranked[0] in self.expected

    @property
    def top3(self) -> bool:
        return any(c in self.expected for c in self.ranked[:3])

    @property
    def unknown(self) -> bool:
        return not self.ranked

    @property
    def silent(self) -> bool:
        return not self.ranked and self.exit == 0


def cases(halves: Iterable[str] = ("A", "B")) -> List[Case]:
    """The training logs of the given halves, with their cuts (validation logs: header only)."""
    alias = aliases()
    split = corpus_split.compute_split()
    by_repo: Dict[str, set] = {}
    for h in split.training:
        by_repo.setdefault(h.repository.lower(), set()).add(h.meta.get("source", ""))
    index = similar.load()
    for ex in (index.exemplars if index is not None else ()):
        m = _REPO_RE.match(ex.source)
        if m:
            by_repo.setdefault(m.group(1).lower(), set()).add(ex.source)
    out = []
    wanted = set(halves)
    for h in sorted(split.training, key=lambda h: h.name):
        repo = h.repository.lower()
        if half(repo) not in wanted:
            continue
        out.append(Case(h.name, repo, half(repo), [alias.get(c, c) for c in h.expected], log_body(h.path),
                        siblings=tuple(sorted(filter(None, by_repo.get(repo, ()))))))
    for c in out:
        c.cut = uncited(c.whole)
    return out


def answer(case: Case, part: str) -> Row:
    text = case.cut if part == "cut" else case.whole
    with similar.leaving_out(*case.siblings):
        expl = explain_text(text)
    ranked: List[str] = []
    for cand in expl.candidates:
        for code in (cand.code, *cand.could_be):
            if code not in ranked:
                ranked.append(code)
    basis = expl.candidates[0].basis if expl.candidates else ""
    return Row(case.name, case.half, part, case.expected, ranked, basis, int(expl.exit_code))


def run(cs: Sequence[Case], parts: Sequence[str] = ("cut", "whole")) -> List[Row]:
    return [answer(c, part) for part in parts for c in cs]


def figures(rows: Sequence[Row]) -> Dict[str, float]:
    n = len(rows)
    answered = sum(not r.unknown for r in rows)
    top1 = sum(r.top1 for r in rows)
    guessed = [r for r in rows if r.basis in GUESSES]
    return {"logs": n, "answered": answered, "top1": top1, "top3": sum(r.top3 for r in rows),
            "unknown": sum(r.unknown for r in rows), "silent": sum(r.silent for r in rows),
            "precision": 100.0 * top1 / answered if answered else 0.0,
            "guessed": len(guessed), "guessed_top1": sum(r.top1 for r in guessed)}


def line(label: str, rows: Sequence[Row]) -> str:
    f = figures(rows)
    pct = lambda k: 100.0 * k / f["logs"] if f["logs"] else 0.0
    by_basis = Counter(r.basis or "-" for r in rows)
    right = Counter(r.basis or "-" for r in rows if r.top1)
    bases = " ".join(f"{b}:{right[b]}/{by_basis[b]}" for b in sorted(by_basis))
    return (f"{label:10s} {f['logs']:4d} logs  answered {f['answered']:4d}  top-1 {f['top1']:4d} ({pct(f['top1']):5.1f} %)  "
            f"top-3 {f['top3']:4d} ({pct(f['top3']):5.1f} %)  unknown {f['unknown']:3d}  silent {f['silent']:3d}  "
            f"precision {f['precision']:5.1f} %\n{'':10s} first answer's basis (top-1/logs): {bases}")


def report(rows: Sequence[Row], halves: Sequence[str]) -> str:
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--", "src") else ""
    out = [f"stackpeel explain fallback protocol, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
           f"commit {git('rev-parse', '--short', 'HEAD')}, src/ as of {git('log', '-1', '--format=%h', '--', 'src')}{dirty}",
           "training logs only; each explained in process with every exemplar of its own repository left out;",
           "half A: second hex digit of sha256(repository.lower()) even, half B: odd", ""]
    for h in halves:
        for part in ("cut", "whole"):
            sel = [r for r in rows if r.half == h and r.part == part]
            out.append(line(f"{h} {part}", sel))
        out.append("")
    out.append("per-log answers (half, part, file, expected, ranking, first basis, verdict):")
    for r in rows:
        verdict = ("top-1" if r.top1 else "top-3" if r.top3 else "silent" if r.silent else
                   "unknown" if r.unknown else "miss")
        out.append(f"{r.half}\t{r.part}\t{r.name}\texpected={','.join(r.expected)}\t"
                   f"ranked={','.join(r.ranked[:5]) or '-'}\t{r.basis or '-'}\t{verdict}")
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", default="A", choices=("A", "B", "AB"),
                    help="which half of the training repositories (settings are chosen on A only)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures and per-log answers here")
    args = ap.parse_args(argv)
    halves = tuple(args.half)
    t0 = time.monotonic()
    cs = cases(halves)
    rows = run(cs)
    text = report(rows, halves)
    print(text.split("per-log answers")[0].rstrip())
    print(f"({len(cs)} logs, {time.monotonic() - t0:.0f} s)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
