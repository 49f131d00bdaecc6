"""Does the guess by resemblance generalise? k-fold by repository on TRAINING logs only (not a test).

The exemplar index (:mod:`stackpeel.explain.similar`, ``knowledge/exemplars.json``) is built from
every training log. Explaining a log with only its own thread left out (the accuracy bench) still
lets its repository's sibling threads answer for it. This harness builds the index, fold by fold,
from the training logs of the OTHER repositories only and queries it with the held-out fold:

* folds: the repositories of the training part, fold = int(sha256(repository.lower())[2], 16) % 5
  (the split uses digit 0, bench/explain_fallback.py's halves digit 1);
* populations, each queried with the held-out fold's index:
  - ``cut``: every training log with the lines its signatures cite removed (:func:`.cuts.uncited`):
    the failure as a log nobody wrote a rule for shows it;
  - ``cut-fallback``: the cuts explain (run with the log's repository left out of the exemplars and
    priors) answers with nothing or only a guess (basis vocabulary / similar / prior, or no code):
    where the fallback decides the answer;
  - ``before``: the logs of bench/results/before-misses-training.tsv (explain missed them when they
    were new, before any rule was written from them), whole body: hard unseen failures;
* variants: which text feeds the index (``material``: what explain uses; ``noframes``: without the
  frame words; ``errors``: exception type + message and error lines only; ``masked``: material with
  numbers, hex, paths and quoted values masked), the weighting (tf-idf cosine, as explain; BM25
  normalised by the query's own score), the vote (the best K=1/3/5 neighbours, summed by code) and
  the threshold. Every variant keeps explain's filters (two shared distinct words, the missing
  module rule, runtime and errno words).

For each population, variant and threshold it prints per fold and in total: answered (a guess is
made), right (the first guess is an expected code), precision (right / answered) and top-3.
A validation log is never opened: only the header of each log is read to learn its side.

    python bench/knn_folds.py --out bench/results/knn_folds-<date>.txt
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import math
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import aliases, corpus_split, git  # noqa: E402
from stackpeel.explain import explain_text, similar  # noqa: E402
from stackpeel.explain.cuts import uncited  # noqa: E402
from stackpeel.explain.parser import scan_text  # noqa: E402
from stackpeel.knowledge import all_codes  # noqa: E402

FOLDS = 5
_REPO_RE = re.compile(r"https://github\.com/([^/]+/[^/]+)/")
GUESS_BASES = ("vocabulary", "similar", "prior", "")
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def fold(repo: str) -> int:
    return int(hashlib.sha256(repo.lower().encode()).hexdigest()[2], 16) % FOLDS


_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]+"), " HEX "),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+-]+){2,}"), lambda m: " " + " ".join(
        p for p in re.split(r"[\\/]", m.group(0)) if p and ("site-packages" in m.group(0) or "dist-packages" in m.group(0))
        and not p.endswith(("-packages",)))[-120:] + " "),
    (re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\""), lambda m: m.group(0) if re.fullmatch(r"['\"][\w.-]+['\"]", m.group(0)) else " QUOTED "),
    (re.compile(r"\d+"), " "),
)


def masked(text: str) -> str:
    for rx, rep in _MASKS:
        text = rx.sub(rep, text)
    return text


def materials(parsed) -> Dict[str, str]:
    full = similar.material(parsed)
    frames = {w for tb in parsed.tracebacks for w in [similar.frame_words(tb)] if w}
    noframes = "\n".join(ln for ln in full.splitlines() if ln not in frames)
    errors = "\n".join([f"{tb.exc_type or ''} {tb.message}"[:similar.TEXT_CHARS] for tb in parsed.tracebacks]
                       + [ln.text[:similar.TEXT_CHARS] for ln in parsed.other_errors])
    errors = "\n".join(ln for ln in errors.splitlines() if not similar.BOILERPLATE.search(ln))
    return {"material": full, "noframes": noframes, "errors": errors, "masked": masked(full)}


class Idx:
    """An index like :class:`similar.Index` with a choice of weighting; the same filters."""

    def __init__(self, rows: Sequence[Tuple[str, str, Counter]], weight: str):
        self.weight = weight
        n = len(rows)
        df: Counter = Counter()
        for _, _, c in rows:
            df.update(c.keys())
        self.n = n
        self.idf = {t: math.log(n / (1 + k)) for t, k in df.items()}
        self.rare = math.log(max(n, 2))
        self.avgdl = sum(sum(c.values()) for _, _, c in rows) / max(n, 1)
        self.rows = [(code, src, self.vec(c)) for code, src, c in rows]

    def vec(self, counts: Counter) -> Dict[str, float]:
        if self.weight == "bm25":
            k1, b = 1.2, 0.75
            dl = sum(counts.values())
            v = {t: self.idf.get(t, self.rare) * k * (k1 + 1) / (k + k1 * (1 - b + b * dl / (self.avgdl or 1)))
                 for t, k in counts.items()}
        else:
            v = {t: (1 + math.log(k)) * self.idf.get(t, self.rare) for t, k in counts.items()}
        v = {t: x for t, x in v.items() if x > 0}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def sims(self, text: str) -> List[Tuple[float, str]]:
        q = self.vec(Counter(similar.tokens(text)))
        if not q:
            return []
        absent = similar.missing_modules(text)
        out = []
        for code, _src, ev in self.rows:
            ignore = similar._MISSING_MODULE_WORDS if absent and not any(m in ev for m in absent) else ()
            a, b = (q, ev) if len(q) <= len(ev) else (ev, q)
            shared = [x * b[t] for t, x in a.items() if t in b and t not in ignore]
            if len(shared) < similar.MIN_SHARED or len(similar._distinct_words(
                    t for t in a if t in b and t not in ignore and t not in similar._ERRNO_WORDS
                    and not similar._runtime_word(t))) < similar.MIN_SHARED:
                continue
            out.append((sum(shared), code))
        out.sort(key=lambda p: -p[0])
        return out[:8]


def vote(sims: Sequence[Tuple[float, str]], k: int, threshold: float) -> List[str]:
    votes: Dict[str, float] = {}
    for s, code in [p for p in sims if p[0] >= threshold][:k]:
        votes[code] = votes.get(code, 0.0) + s
    return [c for c, _ in sorted(votes.items(), key=lambda p: -p[1])][:similar.MAX_GUESSES]


def priors_folds() -> List[str]:
    """The base-rate priors (knowledge/priors.json) scored with every thread of the log's whole
    FOLD of repositories left out, beside the leave-one-thread-out figure build_priors.py gives:
    a symptom-first training log gains top-1 when the prior's cause is expected and the symptom is
    not, loses it the other way round."""
    import importlib.util
    from stackpeel.explain import priors

    spec = importlib.util.spec_from_file_location("build_priors", ROOT / "scripts" / "build_priors.py")
    bp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bp)
    rows, _seen = bp.collect()
    data = priors.build([r[:5] for r in rows], all_codes())["priors"]
    fold_of = {}
    for url in {r[1] for r in rows}:
        m = _REPO_RE.match(url)
        fold_of[url] = fold(m.group(1)) if m else -1
    by_fold: Dict[int, List[str]] = defaultdict(list)
    for url, f in fold_of.items():
        by_fold[f].append(url)
    out = [f"== priors: {len(rows)} symptom-first training logs; (fires/gained/lost) with the log's own thread left "
           f"out (thread) and with its whole fold of repositories left out (fold), per fold",
           "min_threads min_share  thread: fires gained lost net | fold: fires gained lost net | per fold (fold mode)"]
    for n_min, share in ((3, 0.5), (4, 0.5), (4, 0.6), (5, 0.6), (6, 0.6), (8, 0.5)):
        res = {}
        for mode in ("thread", "fold"):
            per = [Counter() for _ in range(FOLDS)]
            for symptom, source, _est, could_be, entries, expected in rows:
                gone = [source] if mode == "thread" else by_fold[fold_of[source]]
                with similar.leaving_out(*gone):
                    pr = priors.of(symptom, data)
                g = pr.cause_for(could_be, entries, n_min, share) if pr else None
                if g is None:
                    continue
                c = per[fold_of[source]] if fold_of[source] >= 0 else Counter()
                c["fires"] += 1
                c["gained"] += g[0] in expected and symptom not in expected
                c["lost"] += symptom in expected and g[0] not in expected
            res[mode] = (sum(per, Counter()), per)
        t, f_ = res["thread"][0], res["fold"][0]
        out.append(f"{n_min:11d} {share:9.1f}  thread: {t['fires']:4d} {t['gained']:4d} {t['lost']:4d} "
                   f"{t['gained'] - t['lost']:+4d} | fold: {f_['fires']:4d} {f_['gained']:4d} {f_['lost']:4d} "
                   f"{f_['gained'] - f_['lost']:+4d} | "
                   + " ".join(f"{c['fires']}/{c['gained']}/{c['lost']}" for c in res["fold"][1]))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    alias = aliases()
    codes = all_codes()
    split = corpus_split.compute_split()
    before = {ln.split("\t", 1)[0] for ln in (ROOT / "bench/results/before-misses-training.tsv").read_text().splitlines()
              if ln and not ln.startswith("#")}
    by_repo: Dict[str, set] = defaultdict(set)
    for h in split.training:
        by_repo[h.repository.lower()].add(h.meta.get("source", ""))
    logs = []
    for h in sorted(split.training, key=lambda h: h.name):
        expected = [alias.get(c, c) for c in h.expected]
        body = corpus_split.read_body(h.path)
        repo = h.repository.lower()
        cut = uncited(body)
        with similar.leaving_out(*sorted(filter(None, by_repo[repo]))):
            expl = explain_text(cut)
        basis = expl.candidates[0].basis if expl.candidates else ""
        ranked: List[str] = []
        for cand in expl.candidates:
            for code in (cand.code, *cand.could_be):
                if code not in ranked:
                    ranked.append(code)
        logs.append({"name": h.name, "repo": repo, "fold": fold(repo), "expected": expected,
                     "first": expected[0] if expected and expected[0] in codes and h.meta.get("source") else None,
                     "whole": materials(scan_text(body)), "cut": materials(scan_text(cut)),
                     "fallback": basis in GUESS_BASES, "basis": basis, "ranked": ranked,
                     "errors": bool(expl.candidates) or bool(materials(scan_text(cut))["errors"].strip()),
                     "before": h.name in before})
    print(f"read {len(logs)} training logs in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    pops = {"cut": [(lg, "cut") for lg in logs],
            "cut-fallback": [(lg, "cut") for lg in logs if lg["fallback"]],
            "cut-unknown": [(lg, "cut") for lg in logs if not lg["ranked"]],
            "cut-vocabulary": [(lg, "cut") for lg in logs if lg["basis"] == "vocabulary"],
            "cut-similar": [(lg, "cut") for lg in logs if lg["basis"] == "similar"],
            # where explain consults the resemblance: no signature, clue, fact or word answered
            "cut-novocab": [(lg, "cut") for lg in logs if lg["basis"] in ("similar", "")],
            "before": [(lg, "whole") for lg in logs if lg["before"]]}
    # material@cut: the index holds the training logs' cuts (what a log no signature matched
    # shows) instead of their whole logs; material@both: both, one exemplar each
    reps = ("material", "noframes", "errors", "masked", "material@cut", "material@both")
    configs = [(rep, w, k) for rep in reps for w in ("tfidf", "bm25") for k in (1, 3, 5)]
    # per fold, per rep and weight: the index of the other folds' whole logs (as build_exemplars)
    results: Dict[Tuple, Dict] = {}
    sims_cache: Dict[Tuple, List] = {}
    for f in range(FOLDS):
        train = [lg for lg in logs if lg["fold"] != f and lg["first"]]
        for rep in reps:
            for w in ("tfidf", "bm25"):
                base = rep.split("@")[0]
                src = {"material@cut": ("cut",), "material@both": ("whole", "cut")}.get(rep, ("whole",))
                idx = Idx([(lg["first"], lg["name"], Counter(similar.tokens(lg[part][base])))
                           for lg in train for part in src if similar.tokens(lg[part][base])], w)
                for pop, members in pops.items():
                    for lg, part in members:
                        if lg["fold"] == f:
                            sims_cache[(pop, rep, w, lg["name"])] = idx.sims(lg[part][base])
    lines = [f"knn_folds: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {git('rev-parse', '--short', 'HEAD')}",
             f"training logs only; {FOLDS} folds by repository (sha256(repo.lower())[2] % {FOLDS}); index of the other folds",
             "answered = a guess is made; right = first guess is an expected code; prec = right/answered; "
             "right% = right/population; top3 = an expected code among the guesses", ""]
    for pop, members in pops.items():
        sizes = Counter(lg["fold"] for lg, _ in members)
        lines.append(f"== population {pop}: {len(members)} logs, per fold {[sizes[f] for f in range(FOLDS)]}")
        if pop.startswith("cut"):
            own = [sum(1 for lg, _ in members if lg["fold"] == f and lg["ranked"] and lg["ranked"][0] in lg["expected"])
                   for f in range(FOLDS)]
            ans = [sum(1 for lg, _ in members if lg["fold"] == f and lg["ranked"]) for f in range(FOLDS)]
            lines.append(f"{pop:12s} explain's own answer (repository left out): {sum(ans)} ans {sum(own)} right, "
                         f"per fold answered/right {list(zip(ans, own))}")
        for rep, w, k in configs:
            for th in THRESHOLDS:
                per = []
                tot = Counter()
                for f in range(FOLDS):
                    c = Counter()
                    for lg, _ in members:
                        if lg["fold"] != f:
                            continue
                        g = vote(sims_cache[(pop, rep, w, lg["name"])], k, th)
                        c["n"] += 1
                        if g:
                            c["ans"] += 1
                            c["right"] += g[0] in lg["expected"]
                            c["top3"] += any(x in lg["expected"] for x in g[:3])
                    per.append(c)
                    tot.update(c)
                results[(pop, rep, w, k, th)] = (tot, per)
                fmt = lambda c: (f"{c['ans']:3d}/{c['n']:3d} ans, {c['right']:3d} right "
                                 f"({100.0 * c['right'] / c['ans'] if c['ans'] else 0:4.1f} % prec)")
                lines.append(f"{pop:12s} {rep:8s} {w:5s} k={k} th={th:.2f}  total {tot['ans']:4d} ans "
                             f"{tot['right']:4d} right prec {100.0 * tot['right'] / tot['ans'] if tot['ans'] else 0:5.1f} % "
                             f"right% {100.0 * tot['right'] / tot['n'] if tot['n'] else 0:5.1f} top3 {tot['top3']:4d}  | "
                             + " | ".join(fmt(c) for c in per))
        lines.append("")
    # would the resemblance, when it is close, be a better first guess than the vocabulary's?
    lines.append("== override: cut-vocabulary logs where the resemblance (material, tf-idf, k=3) answers a "
                 "different first code than the vocabulary; who is right (per fold: disagree/vocabulary right/"
                 "resemblance right)")
    for th in (0.3, 0.35, 0.4, 0.5, 0.6):
        per = []
        for f in range(FOLDS):
            c = Counter()
            for lg, _ in pops["cut-vocabulary"]:
                if lg["fold"] != f:
                    continue
                g = vote(sims_cache[("cut-vocabulary", "material", "tfidf", lg["name"])], 3, th)
                if g and g[0] != lg["ranked"][0]:
                    c["n"] += 1
                    c["vocab"] += lg["ranked"][0] in lg["expected"]
                    c["knn"] += g[0] in lg["expected"]
            per.append(c)
        tot = sum(per, Counter())
        lines.append(f"override th={th:.2f}  disagree {tot['n']:3d}  vocabulary right {tot['vocab']:3d}  "
                     f"resemblance right {tot['knn']:3d}  | " + " | ".join(f"{c['n']}/{c['vocab']}/{c['knn']}" for c in per))
    # a lower threshold only where neighbours agree: answer below the threshold when at least
    # two of the best three neighbours at or above `low` name the same code
    lines.append("== agreement: material, tf-idf; answer as explain (k=3, 0.25), plus, below 0.25, where 2 of the "
                 "best 3 neighbours at or above LOW agree (per fold: extra answered/extra right)")
    for pop in ("cut-novocab", "cut-unknown", "before"):
        for low in (0.1, 0.15, 0.2):
            per = []
            for f in range(FOLDS):
                c = Counter()
                for lg, _ in pops[pop]:
                    if lg["fold"] != f:
                        continue
                    sims = sims_cache[(pop, "material", "tfidf", lg["name"])]
                    if vote(sims, 3, similar.MIN_SIMILARITY):
                        continue
                    top = Counter(code for sim, code in sims[:3] if sim >= low)
                    if top and top.most_common(1)[0][1] >= 2:
                        c["n"] += 1
                        c["right"] += top.most_common(1)[0][0] in lg["expected"]
                per.append(c)
            tot = sum(per, Counter())
            lines.append(f"agreement {pop:12s} low={low:.2f}  extra answered {tot['n']:3d}  right {tot['right']:3d}  | "
                         + " | ".join(f"{c['n']}/{c['right']}" for c in per))
    unk = [lg for lg, _ in pops["cut-unknown"]]
    lines.append(f"== cut-unknown: {len(unk)} logs, {sum(1 for lg in unk if lg['cut']['material'].strip())} with any "
                 f"material (error lines, exceptions, hits) left after the cut")
    lines.append("")
    lines += priors_folds()
    text = "\n".join(lines) + "\n"
    print(f"done in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
