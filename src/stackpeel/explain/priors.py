"""Base rates: the likeliest cause of a symptom that comes first with nothing else (issue 8).

A log that shows only a symptom (``torch-cuda-unavailable``, ``nccl-error`` ...) gets that
symptom first and its causes under "could be". An expert who has seen many such threads
still says which cause it usually was. ``knowledge/priors.json`` records, for each symptom
that came first in the explanation of a TRAINING log of the corpus (signature basis, no
context clue pointing at one of its causes, no known-bad combination), the cause each thread
established (the header's ``# cause:`` where the log alone shows only the symptom, else its
``# expected:`` code): a cause in the symptom's ``caused_by`` closure or ``could_be``, or the
symptom itself (nothing deeper), with the thread URLs; any other code counts as "other".

A second table, ``order``, counts for each symptom the causes established by every training
thread in whose explanation it is a candidate (first or not, clues or not), the causes outside
its ``caused_by`` closure and ``could_be`` left out: what orders the ``could_be`` of every symptom
(:func:`order_counts`), not what names a cause.  A third, ``order_lines``, records for each symptom the threads
each signature named it in: a line that declares causes of its own is ordered by the threads
that showed that line, when :data:`ORDER_LINE_MIN_THREADS` did.

When a symptom comes first and its prior is supported enough (:data:`MIN_THREADS`,
:data:`MIN_SHARE`, the cause outnumbers the symptom itself, is among the ``could_be`` of the
log's line, and a signature of the log's line showed the symptom in those threads), reasoning
puts that cause first as a low-confidence guess with basis "prior"; otherwise the prior only orders the
symptom's ``could_be`` (after the causes the log's clues point to). Context clues and any line
that names a cause always win over a prior.

Built by ``scripts/build_priors.py`` (explaining each training log without priors, as the
accuracy bench does); a test keeps the file current. The threads left out of the exemplars
(:func:`.similar.left_out`: ``STACKPEEL_EXEMPLARS_LEAVE_OUT``, :func:`.similar.leaving_out`)
are left out of the priors too, so a corpus log is never explained from its own thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from ..knowledge import KB_DIR

PRIORS_FILE = KB_DIR / "priors.json"
FORMAT = "stackpeel-priors"
VERSION = 1
#: threads (with this symptom first) a prior needs before it names a cause, and the share of
#: them whose established cause it is, at least. Chosen on the training part, each log without
#: its own thread (``scripts/build_priors.py --loo``): 4 and 0.5 gain 7 top-1 and lose 3 (logs
#: whose expected code is the symptom itself, the prior's cause their thread's cause); 6 and 0.5
#: gain 5 and lose the same 3; 0.6 with 4 threads gains 5 and loses 3. Re-chosen (symptom20) after
#: five more bare-symptom threads, on the runtime's grid (this prior, then the order table at
#: ORDER_MIN_THREADS/ORDER_MIN_SHARE; ``--loo --order`` per MIN_*): 4 and 0.5 now net +1 (a 2-2-1
#: split of cuda-init-failed's five threads between nvidia-uvm-missing and
#: nvidia-uvm-broken-after-suspend guesses the other one whenever a thread is left out); 4 and 0.6,
#: 5 and 0.5 or 0.6 net +4 (8 gained, 4 lost, as before the five); 3 and 0.5 net -1; with a sixth
#: (89 logs) 4 and 0.6 net +3 against 0 at half (bench/results/build_priors-loo-2026-12-04-symptom20-order.txt).
#: Re-chosen in session 34 (111 logs with a symptom first): two CPU-only-torch threads took
#: torch-cuda-unavailable's leading cause to 10 of 17, under 0.6, and no prior fired at all; the
#: grid then gave 4 and 0.6 net -1 (3 fire, 0 gained, 1 lost), 4 and 0.5 net -1, 5 and 0.3 or
#: 0.4 net +3 (8 gained, 5 lost), 6 and over net +1 (bench/results/build_priors-loo-2026-12-06-session34.txt)
#: Re-chosen in session 39 (2,036 training logs, 127 with a symptom first) on the runtime's grid
#: (``--loo --runtime``: the prior per pair, then the order table at (8, 0.5), as explain asks them):
#: 5 and 0.3 or 0.4 net +2 (9 gained, 7 lost); 6 to 10 and 0.3 or 0.4 net +4 (the same 9 gained, 5
#: lost: two logs the prior took from their symptom go to the order table, which keeps them); 0.5 and
#: over fires on 4 to 11 logs, net 0 to +3. The prior alone (``--loo``) is +1 at 5 and at 6
#: (bench/results/build_priors-loo-2026-12-07-tools39.txt)
MIN_THREADS = 6
MIN_SHARE = 0.4
#: the same for the ``order`` table (:func:`order_guess`), asked only when the symptom's prior names
#: nothing. Chosen the same way (``scripts/build_priors.py --loo --order``): from 4 to 12 threads
#: and half the threads or more it gains one first place (NCCL's unhandled system error shown by a
#: wording no earlier symptom-first thread showed: nccl-shm-too-small, 15 of its 23 threads) and loses
#: none; with 2 or 3 threads, or a third of them under 10 threads, it loses at least as much as it gains
ORDER_MIN_THREADS = 8
ORDER_MIN_SHARE = 0.5

#: threads that showed a symptom's line (one that declares causes of its own) before the causes
#: they established alone order that line's ``could_be`` (:func:`order_counts`); fewer, and every
#: thread with the symptom counts. torch's "No CUDA GPUs are available" (10 threads) keeps its
#: device nodes ahead of a missing driver that two threads of a web UI's own GPU check on AMD
#: cards established. Training top-3 (1,921 logs): with no lower bound 1 gained, 3 lost (two of those
#: AMD threads, a thread of nccl-tests whose line two threads showed); with 3, 1 gained, none lost
ORDER_LINE_MIN_THREADS = 3

#: priors switched off (the builder explains the training logs without them)
_OFF: "contextvars.ContextVar[bool]" = contextvars.ContextVar("stackpeel_priors_off", default=False)


@contextlib.contextmanager
def off() -> Iterator[None]:
    """Explain without priors (what the priors are built from)."""
    token = _OFF.set(True)
    try:
        yield
    finally:
        _OFF.reset(token)


@dataclass(frozen=True)
class Prior:
    symptom: str
    #: threads with this symptom first (those left out excluded)
    n: int
    #: (code, threads) most frequent first; the symptom's own code means "nothing deeper found"
    causes: Tuple[Tuple[str, int], ...]
    #: the signatures (entry ids) that showed the symptom in those threads, with their thread counts
    lines: Tuple[Tuple[str, int], ...] = ()

    def shown_by(self, entries: Any) -> bool:
        """Whether one of these signatures showed the symptom in an earlier thread: a prior speaks
        for the lines its threads showed (a float16 op a CPU kernel lacks is read as CUDA not in
        use too, but no thread with that line taught the prior anything)."""
        seen = dict(self.lines)
        return any(seen.get(e, 0) > 0 for e in entries)

    def count(self, code: str) -> int:
        return dict(self.causes).get(code, 0)

    @property
    def top(self) -> Optional[Tuple[str, int]]:
        return self.causes[0] if self.causes else None

    def guess(self, min_threads: int = MIN_THREADS, min_share: float = MIN_SHARE) -> Optional[Tuple[str, int]]:
        """The cause to put first, (code, threads), or None: enough threads, a large enough
        share, and more threads than those where nothing deeper than the symptom was found."""
        if self.n < min_threads or not self.causes:
            return None
        code, k = self.causes[0]
        if code == self.symptom or k <= self.count(self.symptom) or k / self.n < min_share:
            return None
        if len(self.causes) > 1 and self.causes[1][1] == k:
            return None  # a tie names nothing
        return code, k

    def cause_for(self, could_be: Any, entries: Any, min_threads: int = MIN_THREADS,
                  min_share: float = MIN_SHARE) -> Optional[Tuple[str, int]]:
        """The cause to put before the symptom on one log, (code, threads), or None: :meth:`guess`,
        and only a cause the log's symptom line can have (``could_be``: "No HIP GPUs are available"
        is torch-cuda-unavailable too, but CUDA_VISIBLE_DEVICES is not among its causes) and only
        for a line its earlier threads showed (``entries``, :meth:`shown_by`). What reasoning
        applies and what ``scripts/build_priors.py --loo`` scores."""
        g = self.guess(min_threads, min_share)
        if g is None or g[0] not in could_be or not self.shown_by(entries):
            return None
        return g


def applies(candidate: Any) -> bool:
    """Whether a first candidate is a symptom a prior may speak for: named by a signature, with
    no context clue pointing at one of its causes and no known-bad combination behind it."""
    return (candidate.kind == "symptom" and candidate.basis == "signature" and candidate.confidence == "symptom"
            and not candidate.could_be_clues and not any(r.startswith("combination:") for r in candidate.facts))


def of(symptom: str, data: Optional[Mapping[str, Any]] = None) -> Optional[Prior]:
    """The prior of ``symptom`` without the threads left out, or None (none recorded, or off)."""
    if _OFF.get():
        return None
    from .similar import left_out

    data = load() if data is None else data
    row = (data or {}).get(symptom)
    if not row:
        return None
    gone = left_out()
    threads = set()
    counts: Dict[str, int] = {}
    for code, urls in row.get("causes", {}).items():
        kept = {u for u in urls if u not in gone}
        threads |= kept
        if kept:
            counts[code] = len(kept)
    threads |= {u for u in row.get("other", []) if u not in gone}
    if not threads:
        return None
    causes = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = tuple(sorted((e, k) for e, urls in row.get("lines", {}).items()
                         for k in [len({u for u in urls if u not in gone})] if k))
    return Prior(symptom, len(threads), causes, lines)


def order_counts(symptom: str, data: Optional[Mapping[str, Any]] = None,
                 entries: Any = None, lines: Optional[Mapping[str, Any]] = None) -> Dict[str, int]:
    """The causes of ``symptom`` established by the training threads in whose explanation it was a
    candidate, (code, threads), without the threads left out; empty when none or off. With
    ``entries`` (the signatures that named the symptom on this log), only the threads in which one
    of them did (the ``order_lines`` table), where :data:`ORDER_LINE_MIN_THREADS` did: what a line
    that declares causes of its own can come from is counted over the threads that showed that
    line, not over every line of the symptom."""
    if _OFF.get():
        return {}
    from .similar import left_out

    data = load_order() if data is None else data
    row = (data or {}).get(symptom) or {}
    gone = left_out()
    keep = None
    if entries is not None:
        by_line = ((load_order_lines() if lines is None else lines) or {}).get(symptom) or {}
        keep = {u for e in entries for u in by_line.get(e, ()) if u not in gone}
        if len(keep) < ORDER_LINE_MIN_THREADS:
            keep = None  # too few threads showed the line: every line of the symptom counts
    return {code: k for code, urls in row.items()
            for k in [len([u for u in urls if u not in gone and (keep is None or u in keep)])] if k}


def order_guess(symptom: str, could_be: Any, min_threads: int = ORDER_MIN_THREADS,
                min_share: float = ORDER_MIN_SHARE, data: Optional[Mapping[str, Any]] = None
                ) -> Optional[Tuple[str, int, int]]:
    """The cause to put before ``symptom`` from the ``order`` table, (code, threads, of threads), or
    None: the cause most threads with the symptom a candidate established, in ``min_threads`` at
    least and ``min_share`` of them (those whose cause was the symptom itself count in the whole),
    more than the symptom itself, no tie, and one the log's line can have (``could_be``)."""
    counts = order_counts(symptom, data)
    itself = counts.pop(symptom, 0)
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    code, k = ranked[0]
    n = sum(counts.values()) + itself
    if k < min_threads or k / n < min_share or k <= itself or code not in could_be:
        return None
    if len(ranked) > 1 and ranked[1][1] == k:
        return None
    return code, k, n


def closure(code: str, catalogue: Mapping[str, Any]) -> List[str]:
    """The codes that can cause ``code``, directly or through a chain (``caused_by``)."""
    seen: List[str] = []
    todo = list(getattr(catalogue.get(code), "caused_by", ()) or ())
    while todo:
        c = todo.pop(0)
        if c in seen or c == code:
            continue
        seen.append(c)
        todo.extend(getattr(catalogue.get(c), "caused_by", ()) or ())
    return seen


def build(rows: List[Tuple[str, str, List[str], List[str], List[str]]], catalogue: Mapping[str, Any],
          seen: Optional[List[Tuple[str, str, List[str], List[str], List[str]]]] = None) -> Dict[str, Any]:
    """The priors file's content from (symptom first, thread URL, established codes, the symptom's
    ``could_be`` in that log, the signatures that showed it) of training logs, and the ``order``
    table from ``seen``: (a symptom that was a candidate, thread URL, established codes, its
    ``could_be`` in that log, the signatures that named it there) of training logs, with the
    ``order_lines`` table (for each symptom, the threads each signature named it in)."""
    order: Dict[str, Dict[str, List[str]]] = {}
    order_lines: Dict[str, Dict[str, List[str]]] = {}
    for symptom, source, established, could_be, *named in seen or ():
        for e in (named[0] if named else ()):
            urls = order_lines.setdefault(symptom, {}).setdefault(e, [])
            if source not in urls:
                urls.append(source)
        allowed = [symptom, *closure(symptom, catalogue), *could_be]
        hit = next((c for c in established if c in allowed), None)
        if hit is None:
            continue
        urls = order.setdefault(symptom, {}).setdefault(hit, [])
        if source not in urls:
            urls.append(source)
    out: Dict[str, Dict[str, Any]] = {}
    for symptom, source, established, could_be, entries in rows:
        allowed = [symptom, *closure(symptom, catalogue), *could_be]
        row = out.setdefault(symptom, {"causes": {}, "other": [], "lines": {}})
        for e in entries:
            urls = row["lines"].setdefault(e, [])
            if source not in urls:
                urls.append(source)
        hit = next((c for c in established if c in allowed), None)
        bucket = row["causes"].setdefault(hit, []) if hit else row["other"]
        if source not in bucket:
            bucket.append(source)
    for row in out.values():
        row["causes"] = {c: sorted(u) for c, u in sorted(row["causes"].items())}
        row["other"] = sorted(row["other"])
        row["lines"] = {e: sorted(u) for e, u in sorted(row["lines"].items())}
        row["n"] = len({u for us in row["causes"].values() for u in us} | set(row["other"]))
    return {"format": FORMAT, "version": VERSION,
            "about": "for each symptom code explain put first on a training log of tests/corpus/explain (no clue, "
                     "no line naming a cause), the causes its threads established and the threads; built by "
                     "scripts/build_priors.py, never from a validation log",
            "priors": {s: {"n": r["n"], "causes": r["causes"], "other": r["other"], "lines": r["lines"]}
                       for s, r in sorted(out.items())},
            "order": {s: {c: sorted(u) for c, u in sorted(row.items())} for s, row in sorted(order.items())},
            "order_lines": {s: {e: sorted(u) for e, u in sorted(row.items())}
                            for s, row in sorted(order_lines.items())}}


@functools.lru_cache(maxsize=1)
def _file() -> Dict[str, Any]:
    try:
        data = json.loads(PRIORS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        return {}
    return data


def load() -> Optional[Dict[str, Any]]:
    """The priors (symptom first), or None when the file is missing or of another format."""
    data = _file()
    return (data.get("priors") or {}) if data else None


def load_order() -> Optional[Dict[str, Any]]:
    """The ``order`` table (every symptom candidate), or None when the file is missing."""
    data = _file()
    return (data.get("order") or {}) if data else None


def load_order_lines() -> Optional[Dict[str, Any]]:
    """The ``order_lines`` table (for each symptom, the threads each signature named it in), or None."""
    data = _file()
    return (data.get("order_lines") or {}) if data else None
