#!/usr/bin/env python3
"""Build src/stackpeel/knowledge/priors.json from the TRAINING part of the explain corpus.

Each training log is explained as the accuracy bench explains it (the body only, its own thread
left out of the exemplars) with priors off; when its first candidate is a symptom a prior may
speak for (``stackpeel.explain.priors.applies``), the log's expected codes are counted under
that symptom: the cause its thread established (``# cause:`` where the log alone shows only the
symptom, else the expected code), if it is in the symptom's ``caused_by`` closure or ``could_be`` or
is the symptom itself; else "other".
Validation logs are never read: the split (scripts/corpus_split.py) decides, by repository.

    python scripts/build_priors.py            # rewrite the file
    python scripts/build_priors.py --check    # exit 1 if the file is not current
    python scripts/build_priors.py --loo      # leave-one-thread-out top-1 change per threshold pair
    python scripts/build_priors.py --loo --expected-only   # the same, counting expected codes only
    python scripts/build_priors.py --loo --by-signature    # priors keyed by the symptom's signature first
    python scripts/build_priors.py --loo --order           # the order table's guess where the prior names nothing
    python scripts/build_priors.py --loo --runtime         # per MIN_*, the order table after the prior (as explain)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus_split  # noqa: E402
from stackpeel.explain import explain_text, priors, similar  # noqa: E402
from stackpeel.knowledge import all_codes, load  # noqa: E402


Row = Tuple[str, str, List[str], List[str], List[str], List[str]]
Seen = Tuple[str, str, List[str], List[str]]


def symptom_first() -> List[Row]:
    """(symptom first, thread URL, established codes, its could_be, the signatures that showed it,
    expected codes) of the training logs a prior may speak for."""
    return collect()[0]


def collect() -> Tuple[List[Row], List[Seen]]:
    """:func:`symptom_first`'s rows, and (a symptom a signature named, thread URL, established
    codes, its could_be) for every symptom candidate of every training log (the ``order`` table)."""
    split = corpus_split.compute_split()
    alias = dict(getattr(load(), "aliases", {}))
    rows: List[Row] = []
    seen: List[Seen] = []
    for h in split.training:
        source = h.meta.get("source", "")
        if not source:
            continue
        with priors.off(), similar.leaving_out(source):
            expl = explain_text(corpus_split.read_body(h.path), source=h.name)
        expected = [alias.get(c, c) for c in h.expected]
        cause = alias.get(h.meta.get("cause", ""), h.meta.get("cause", ""))
        for c in expl.candidates:
            if c.kind == "symptom" and c.basis == "signature":
                seen.append((c.code, source, [cause] if cause else expected, list(c.could_be),
                             sorted({ev.entry for ev in c.evidence})))
        if expl.candidates and priors.applies(expl.candidates[0]):
            first = expl.candidates[0]
            entries = sorted({ev.entry for ev in first.evidence})
            rows.append((first.code, source, [cause] if cause else expected, list(first.could_be), entries, expected))
    return rows, seen


def content(rows=None, seen=None) -> str:
    if rows is None:
        rows, seen = collect()
    data = priors.build([r[:5] for r in rows], all_codes(), seen)
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def loo(rows, expected_only: bool = False) -> str:
    """Top-1 gained and lost on the symptom-first training logs, each with its own thread left
    out of the priors, per (MIN_THREADS, MIN_SHARE); ``expected_only`` counts each log's expected
    codes instead of its thread's established cause. Gained and lost are the bench's (a log's
    ``# expected:`` codes); ``cause`` counts the fires that name the cause the log's thread
    established (its ``# cause:``, else its expected code): a log labelled with the symptom whose
    thread established the prior's cause is lost on the bench yet right in that column."""
    if expected_only:
        rows = [(s, u, e, cb, en, e) for s, u, _, cb, en, e in rows]
    data = priors.build([r[:5] for r in rows], all_codes())["priors"]
    out = [f"{len(rows)} training logs with a symptom first; leave-one-thread-out"
           + (" (counting expected codes, not the threads' causes)" if expected_only else "") + ":",
           "min_threads min_share  fires  gained  lost  net  cause"]
    for n_min in (3, 4, 5, 6, 8, 10):
        for share in (0.3, 0.4, 0.5, 0.6, 0.7):
            fires = gained = lost = cause = 0
            for symptom, source, established, could_be, entries, expected in rows:
                with similar.leaving_out(source):
                    p = priors.of(symptom, data)
                g = p.cause_for(could_be, entries, n_min, share) if p else None
                if g is None:
                    continue
                fires += 1
                gained += g[0] in expected and symptom not in expected
                lost += symptom in expected and g[0] not in expected
                cause += g[0] in established
            out.append(f"{n_min:11d} {share:9.1f} {fires:6d} {gained:7d} {lost:5d} {gained - lost:4d} {cause:6d}")
    return "\n".join(out)


def loo_by_signature(rows) -> str:
    """Top-1 gained and lost when a prior is keyed by the signature that showed the symptom (the
    entry with the most threads among the log's), falling back to the symptom code's prior
    (:data:`priors.MIN_THREADS`, :data:`priors.MIN_SHARE`) when the signature has fewer than
    ``min_threads`` threads; each log with its own thread left out. Counts expected codes.
    Also per pair: answered (logs the prior put a cause first on) and right (of those, the
    cause is an expected code), the curve of answered share against right share."""
    catalogue = all_codes()
    by_code = priors.build([r[:5] for r in rows], catalogue)["priors"]
    keyed = [(f"{s}@{e}", u, est, cb, [e]) for s, u, est, cb, en, _ in rows for e in en]
    by_sig = priors.build(keyed, catalogue)["priors"]
    out = [f"{len(rows)} training logs with a symptom first; leave-one-thread-out; a signature's own prior "
           "decides when it has min_threads threads, else the code's "
           f"({priors.MIN_THREADS}, {priors.MIN_SHARE}):",
           "min_threads min_share  fires  right  gained  lost  net  (signature only: fires right gained lost net)"]
    for n_min in (2, 3, 4, 5, 6):
        for share in (0.5, 0.6, 0.7, 0.8, 1.0):
            cells = []
            for fallback in (True, False):
                fires = right = gained = lost = 0
                for symptom, source, _, could_be, entries, expected in rows:
                    with similar.leaving_out(source):
                        own = [p for p in (priors.of(f"{symptom}@{e}", by_sig) for e in entries) if p is not None]
                        best = max(own, key=lambda p: p.n, default=None)
                        if best is not None and best.n >= n_min:
                            g = best.cause_for(could_be, [best.symptom.split("@", 1)[1]], n_min, share)
                        elif fallback:
                            p = priors.of(symptom, by_code)
                            g = p.cause_for(could_be, entries) if p else None
                        else:
                            g = None
                    if g is None:
                        continue
                    fires += 1
                    right += g[0] in expected
                    gained += g[0] in expected and symptom not in expected
                    lost += symptom in expected and g[0] not in expected
                cells.append((fires, right, gained, lost, gained - lost))
            (f, r, g, lo, n), (f2, r2, g2, lo2, n2) = cells
            out.append(f"{n_min:11d} {share:9.1f} {f:6d} {r:6d} {g:7d} {lo:5d} {n:4d}   {f2:6d} {r2:6d} {g2:7d} {lo2:5d} {n2:4d}")
    return "\n".join(out)


def _runtime_guess(row, data, order, prior=(), order_at=()):
    """explain's question on one log, its own thread left out: the symptom's prior (at ``prior``,
    (min_threads, min_share), else the defaults) first, the ``order`` table (at ``order_at``) where it
    names nothing. Returns (guess (code, threads) or None, the order table's answer or None)."""
    symptom, source, _, could_be, entries, _ = row
    with similar.leaving_out(source):
        p = priors.of(symptom, data)
        g = p.cause_for(could_be, entries, *prior) if p else None
        w = priors.order_guess(symptom, could_be, *order_at, data=order) if g is None else None
    return g or (w[:2] if w else None), w


def _grid_row(rows, data, order, prior=(), order_at=()) -> Tuple[int, int, int, int, int, int]:
    """fires, right, gained, lost, and of the fires the order table's fires and right, over ``rows``
    (:func:`_runtime_guess` per log; right, gained and lost count expected codes)."""
    fires = right = gained = lost = wide = wide_right = 0
    for row in rows:
        symptom, expected = row[0], row[5]
        g, w = _runtime_guess(row, data, order, prior, order_at)
        if g is None:
            continue
        fires += 1
        right += g[0] in expected
        wide += w is not None
        wide_right += w is not None and g[0] in expected
        gained += g[0] in expected and symptom not in expected
        lost += symptom in expected and g[0] not in expected
    return fires, right, gained, lost, wide, wide_right


def loo_order(rows, seen) -> str:
    """Top-1 gained and lost on the symptom-first training logs when, where the symptom's prior
    (:data:`priors.MIN_THREADS`, :data:`priors.MIN_SHARE`) names nothing, the ``order`` table (every
    training log the symptom was a candidate of) names the cause (:func:`priors.order_guess`), per
    (ORDER_MIN_THREADS, ORDER_MIN_SHARE); each log with its own thread left out. Counts expected codes."""
    built = priors.build([r[:5] for r in rows], all_codes(), seen)
    out = [f"{len(rows)} training logs with a symptom first, {len(seen)} symptom candidates in the order table; "
           f"leave-one-thread-out; the prior ({priors.MIN_THREADS}, {priors.MIN_SHARE}) first, the order table where "
           "it names nothing:",
           "min_threads min_share  fires  right  gained  lost  net  (of which the order table: fires right)"]
    for n_min in (2, 3, 4, 5, 6, 8, 10, 12):
        for share in (0.3, 0.4, 0.5, 0.6):
            f, r, g, lo, wide, wide_right = _grid_row(rows, built["priors"], built["order"], order_at=(n_min, share))
            out.append(f"{n_min:11d} {share:9.1f} {f:6d} {r:6d} {g:7d} {lo:5d} {g - lo:4d}   {wide:6d} {wide_right:6d}")
    return "\n".join(out)


def loo_runtime(rows, seen) -> str:
    """The runtime's grid per (MIN_THREADS, MIN_SHARE): the symptom's prior at that pair first, the
    ``order`` table at (:data:`priors.ORDER_MIN_THREADS`, :data:`priors.ORDER_MIN_SHARE`) where it
    names nothing, as explain asks them; each log with its own thread left out. Counts expected codes."""
    built = priors.build([r[:5] for r in rows], all_codes(), seen)
    out = [f"{len(rows)} training logs with a symptom first; leave-one-thread-out; the prior per pair first, the "
           f"order table ({priors.ORDER_MIN_THREADS}, {priors.ORDER_MIN_SHARE}) where it names nothing:",
           "min_threads min_share  fires  right  gained  lost  net"]
    for n_min in (3, 4, 5, 6, 8, 10):
        for share in (0.3, 0.4, 0.5, 0.6):
            f, r, g, lo, _, _ = _grid_row(rows, built["priors"], built["order"], prior=(n_min, share))
            out.append(f"{n_min:11d} {share:9.1f} {f:6d} {r:6d} {g:7d} {lo:5d} {g - lo:4d}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file is not current")
    ap.add_argument("--loo", action="store_true", help="print the leave-one-out grid of thresholds")
    ap.add_argument("--expected-only", action="store_true",
                    help="with --loo: count the logs' expected codes, not the '# cause:' their threads established")
    ap.add_argument("--order", action="store_true",
                    help="with --loo: the grid of the order table's guess where the symptom's prior names nothing")
    ap.add_argument("--runtime", action="store_true",
                    help="with --loo: the grid per MIN_THREADS/MIN_SHARE, the order table after it, as explain asks")
    ap.add_argument("--by-signature", action="store_true",
                    help="with --loo: the grid of priors keyed by signature, with the code's prior as fallback")
    args = ap.parse_args(argv)
    rows, seen = collect()
    if args.loo and args.order:
        print(loo_order(rows, seen))
        return 0
    if args.loo and args.runtime:
        print(loo_runtime(rows, seen))
        return 0
    if args.loo and args.by_signature:
        print(loo_by_signature(rows))
        return 0
    if args.loo:
        print(loo(rows, args.expected_only))
        return 0
    new = content(rows, seen)
    if args.check:
        old = priors.PRIORS_FILE.read_text(encoding="utf-8") if priors.PRIORS_FILE.exists() else ""
        if old != new:
            print(f"{priors.PRIORS_FILE.name} is not current: run scripts/build_priors.py", file=sys.stderr)
            return 1
        return 0
    priors.PRIORS_FILE.write_text(new, encoding="utf-8")
    print(f"wrote {priors.PRIORS_FILE.relative_to(ROOT)} ({len(json.loads(new)['priors'])} symptoms, {len(rows)} logs; "
          f"order: {len(json.loads(new)['order'])} symptoms, {len(seen)} candidates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
