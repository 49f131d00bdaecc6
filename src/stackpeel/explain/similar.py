"""Guesses by resemblance, for error lines no signature and no word explains (issue 8).

The knowledge base's signatures name a cause when a log states it the way some library
prints it; the vocabulary guesses from the stack's own words. A log of an unseen failure often
does neither, yet it reads like a thread whose cause was established: the same exception,
the same module names, the same tool. ``knowledge/exemplars.json`` holds the words of the
error lines of every TRAINING log of the corpus (``tests/corpus/explain``; never a
validation log), each with its established code and its thread. When nothing else explains
a log's error lines, the codes of the most similar exemplars (tf-idf, cosine, the best
:data:`K`) are offered as low-confidence guesses, each naming the threads it resembles, so a
reader can open them.

Built by ``scripts/build_exemplars.py`` from the corpus split; a test keeps the file current.
Reads only its arguments, the bundled file and, once at import, ``STACKPEEL_EXEMPLARS_LEAVE_OUT``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from ..knowledge import KB_DIR
from .numbers import bare_status

EXEMPLARS_FILE = KB_DIR / "exemplars.json"
FORMAT = "stackpeel-exemplars"
VERSION = 1
#: neighbours that vote
K = 3
#: cosine similarity below which a neighbour says nothing (leave-one-repository-out on the
#: training part: 0.2 answers 79 % of logs, 63 % of them right; 0.25 answers 68 %, 68 % right;
#: 0.3 answers 61 %, 71 % right). Those figures query with whole logs, whose signature lines the
#: exemplars share. bench/knn_folds.py (5 folds by repository, the index of the other folds) asks
#: where the guess decides: the cuts of the training logs that no signature, clue, fact or word
#: answers (1163); 0.25 answers 119, 36 right (30 %); 0.2 answers 181, 42 right (the 62 more
#: are right 1 in 10); 0.3 answers 77, 27 right. No other text (no frames, error lines only,
#: numbers/paths/quotes masked), weighting (BM25), vote (k=1, 5) or agreement rule beat this
#: setting in every fold (bench/results/knn_folds-2026-12-05.txt.gz, docs/dev/knn30.md)
MIN_SIMILARITY = 0.25
#: guesses kept
MAX_GUESSES = 3
#: words a neighbour must share with the query: one shared word is no resemblance (a bare
#: ``KeyError: 'k'`` shares only ``keyerror`` with a thread whose whole paste was
#: ``KeyError: 'RANK'``, a cosine of 0.77)
MIN_SHARED = 2
#: characters of one error line that are read
TEXT_CHARS = 2000
#: characters of the frame words of one traceback that are read
FRAME_CHARS = 600

#: threads whose exemplars are left out: the accuracy bench and the corpus tests explain a
#: training log without its own thread (leave-one-out), so its figure is not a log recognising
#: itself. ``STACKPEEL_EXEMPLARS_LEAVE_OUT`` (thread URLs, comma-separated) sets it for a process; the
#: priors (:mod:`.priors`) leave the same threads out.
LEAVE_OUT: FrozenSet[str] = frozenset(filter(None, os.environ.get("STACKPEEL_EXEMPLARS_LEAVE_OUT", "").split(",")))
#: what :func:`leaving_out` adds, per thread and task (a context variable, not a module global that
#: two threads explaining at once would overwrite for each other)
_LEFT_OUT: "contextvars.ContextVar[FrozenSet[str]]" = contextvars.ContextVar("stackpeel_exemplars_left_out",
                                                                           default=frozenset())

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{2,40}")
_SPLIT = re.compile(r"[._-]")
_STOP = frozenset(
    "the and for with this that from not are was were but have has you your can please when what which "
    "will would there their then than into file line error traceback most recent call last".split())


def tokens(text: str) -> List[str]:
    """Lower-case words of 3+ characters; a dotted or underscored name also gives its parts
    (``libcudnn_ops_infer.so.8`` -> ``libcudnn``, ``ops``, ``infer``)."""
    out: List[str] = []
    for raw in _TOKEN.findall(text):
        t = raw.strip(".-").lower()
        if len(t) < 3 or t in _STOP:
            continue
        out.append(t)
        if "." in t or "_" in t or "-" in t:
            out.extend(p for p in _SPLIT.split(t) if len(p) >= 3)
    return out


#: the module a ModuleNotFoundError / ImportError says is missing (``No module named 'distutils'``,
#: Python 2's ``No module named distutils``): which module is absent is the whole statement of such
#: a line; its other words (``modulenotfounderror``, ``module``, ``named``) are the same for every
#: module, so without the name a missing ``distutils`` or ``_lzma`` "resembles" a thread whose
#: missing module was ``triton``
_MISSING_MODULE = re.compile(r"No module named ['\"`]?([A-Za-z_][\w.]{0,100})")


#: the words every missing-module line has, whichever module is missing
_MISSING_MODULE_WORDS = frozenset(("modulenotfounderror", "module", "named"))


#: the words of Python's OSError family that every errno line has, whatever the errno
#: (``OSError: [Errno 5] Input/output error`` and ``OSError: [Errno 28] No space left on device``
#: share only ``oserror`` and ``errno``; the number is no word): they still weigh in the cosine
#: but are no shared word of their own, so a bare errno line does not "resemble" every thread
#: that pasted another errno
_ERRNO_WORDS = frozenset(("oserror", "errno", "ioerror", "permissionerror", "filenotfounderror"))


#: the words in which a runtime reports any failure, whatever failed (Rust's "thread 'main'
#: panicked at src/main.rs:10:5", Go's "panic: runtime error" / "goroutine 1 [running]", C++'s
#: "terminate called after throwing an instance of", Java's "Exception in thread "main"", a
#: shell's "Aborted (core dumped)", a launcher's "exited with exit code"), and the user's own
#: source files such a report names (``main.rs``, ``server.go``, ``Main.java``): like
#: :data:`_ERRNO_WORDS` they weigh in the cosine but are no shared word of their own, so a
#: guess by resemblance rests on a word of the GPU stack, not on the runtime's (apps24: a bare
#: Rust panic line "resembled" a cudarc thread by ``thread``, ``main``, ``panicked``, ``src``)
_RUNTIME_WORDS = frozenset((
    "thread", "main", "panicked", "panic", "src", "goroutine", "goroutines", "running", "runtime",
    "terminate", "called", "throwing", "instance", "what", "aborted", "core", "dumped", "exception",
    "exit", "exited", "java", "lang", "rust_backtrace", "backtrace", "unwrap"))
_SOURCE_FILE_RE = re.compile(r"\.(?:rs|go|java|kt|scala|js|mjs|cjs|ts|c|cc|cpp|cxx|h|hpp|swift|cs)$")


def _runtime_word(t: str) -> bool:
    """True for a word of :data:`_RUNTIME_WORDS` or a source file of a program's own language."""
    return t in _RUNTIME_WORDS or _SOURCE_FILE_RE.search(t) is not None


def _distinct_words(words: Iterable[str]) -> FrozenSet[str]:
    """The shared words that count towards :data:`MIN_SHARED`: a hyphenated name and the parts
    :func:`tokens` splits it into are one word, not several (``tensorrt-llm``, ``tensorrt`` and
    ``llm`` shared are one product's name: a line of another failure of the same tool resembles
    nothing by it alone). A dotted or underscored name (a file, a module path in a traceback's
    frames) still counts with its parts: frames that pass through the same files resemble."""
    seen = frozenset(words)
    parts = {p for t in seen if "-" in t for p in t.split("-")}
    return frozenset(t for t in seen if t not in parts)


def missing_modules(text: str) -> FrozenSet[str]:
    """The top-level names of the modules the text says are missing, lower-cased."""
    return frozenset(m.split(".", 1)[0].lower() for m in _MISSING_MODULE.findall(text))


#: lines printed after every failure of their kind, whatever it was: they resemble every
#: thread that pasted them and tell none apart (c10/cuda/CUDAException.cpp appends the first
#: three to each CUDA error)
BOILERPLATE = re.compile(
    r"CUDA kernel errors might be asynchronously reported"
    r"|For debugging consider passing CUDA_LAUNCH_BLOCKING"
    r"|Compile with .?TORCH_USE_CUDA_DSA.? to enable device-side assertions"
    # torchrun's and mmengine's notice on every multi-process start (session 39: it resembled the
    # invalid-OMP_NUM_THREADS threads by its variable's words alone)
    r"|Setting OMP_NUM_THREADS environment variable for each process to be")


#: the folders installed packages live in
_PACKAGES_DIRS = ("site-packages/", "dist-packages/")


def frame_words(tb: Any) -> str:
    """The installed packages a traceback passes through and their files' names, in order,
    without repeats (``flash_attn bert_padding torch cpp_extension``): which library failed is
    a stable word of a failure even where its message is cut or generic. The user's own files
    are left out (they name one project, not a cause); a module installed as one file gives
    its file's name (``soundfile.py``, which the tokenizer also reads as ``soundfile``).
    Measured with bench/explain_fallback.py (uncited cuts of the training logs, each without its
    whole repository's exemplars): on half
    A of the repositories 51 cuts named right instead of 49 (answered 112 instead of 109), on
    half B 48 instead of 43 (132 instead of 125); no whole log's first answer changed."""
    words: Dict[str, None] = {}
    for fr in tb.frames:
        path = fr.file.replace("\\", "/")
        at = min((i + len(d) for d in _PACKAGES_DIRS for i in (path.find(d),) if i >= 0), default=-1)
        if at < 0:
            continue
        package = path[at:].lstrip("/").split("/", 1)[0]
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for word in (package, stem):
            if word:
                words.setdefault(word, None)
    return " ".join(words)[:FRAME_CHARS]


def material(parsed: Any) -> str:
    """The text an exemplar and a query are compared on: each exception's type and message,
    the packages and files its frames pass through (:func:`frame_words`), the error lines, the
    lines that say something went wrong, the lines signatures matched (less :data:`BOILERPLATE`)."""
    parts = [f"{tb.exc_type or ''} {tb.message}"[:TEXT_CHARS] for tb in parsed.tracebacks]
    parts += [w for w in (frame_words(tb) for tb in parsed.tracebacks) if w]
    # an exit status that names no cause ("Process finished with exit code 1") resembles every thread
    # that pasted one, whatever failed there: it is left out, and a line that says nothing else with it
    parts += [text[:TEXT_CHARS] for ln in (*parsed.other_errors, *parsed.suspects)
              for text in [bare_status(ln.text)] if text is not None]
    parts += [h.line.text[:TEXT_CHARS] for h in parsed.hits]
    return "\n".join(line for part in parts for line in part.splitlines() if not BOILERPLATE.search(line))


@dataclass(frozen=True)
class Exemplar:
    code: str
    source: str
    vector: Mapping[str, float]


@dataclass(frozen=True)
class Guess:
    code: str
    score: float
    #: (thread URL, similarity) of the exemplars that voted for it, most similar first
    resembles: Tuple[Tuple[str, float], ...]


class Index:
    def __init__(self, exemplars: Sequence[Tuple[str, str, Mapping[str, int]]]):
        n = len(exemplars)
        df: Counter = Counter()
        for _, _, counts in exemplars:
            df.update(counts.keys())
        self.idf = {t: math.log(n / (1 + k)) for t, k in df.items()}
        self.rare = math.log(max(n, 2))
        self.exemplars = [Exemplar(code, source, self.vector(counts)) for code, source, counts in exemplars]

    def vector(self, counts: Mapping[str, int]) -> Dict[str, float]:
        # a word no exemplar holds is as rare as a word can be: it weighs in the norm, so an
        # error line of unknown words resembles nothing (it is not the few known words it has)
        v = {t: (1 + math.log(k)) * self.idf.get(t, self.rare) for t, k in counts.items()}
        v = {t: x for t, x in v.items() if x > 0}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def nearest(self, text: str, known: Optional[Iterable[str]] = None) -> List[Guess]:
        q = self.vector(Counter(tokens(text)))
        if not q:
            return []
        sims = []
        gone = left_out()
        # a query that says which module is missing shares the words of that statement only
        # with a thread that names one of those modules: a missing module is a class of
        # failures, the module decides the cause (its other lines still count as they are)
        absent = missing_modules(text)
        for ex in self.exemplars:
            if ex.source in gone:
                continue
            ignore = _MISSING_MODULE_WORDS if absent and not any(m in ex.vector for m in absent) else ()
            a, b = (q, ex.vector) if len(q) <= len(ex.vector) else (ex.vector, q)
            shared = [x * b[t] for t, x in a.items() if t in b and t not in ignore]
            if len(shared) < MIN_SHARED or len(_distinct_words(
                    t for t in a if t in b and t not in ignore and t not in _ERRNO_WORDS
                    and not _runtime_word(t))) < MIN_SHARED:
                continue
            s = sum(shared)
            if s >= MIN_SIMILARITY:
                sims.append((s, ex))
        sims.sort(key=lambda p: -p[0])
        votes: Dict[str, List[Tuple[str, float]]] = {}
        for s, ex in sims[:K]:
            votes.setdefault(ex.code, []).append((ex.source, round(s, 2)))
        allowed = set(known) if known is not None else None
        out = [Guess(code, sum(s for _, s in seen), tuple(seen)) for code, seen in votes.items()
               if allowed is None or code in allowed]
        out.sort(key=lambda g: -g.score)
        return out[:MAX_GUESSES]


def left_out() -> FrozenSet[str]:
    """The threads left out now (:data:`LEAVE_OUT` and :func:`leaving_out`): their exemplars, and
    their counts in the priors (:mod:`.priors`)."""
    return LEAVE_OUT | _LEFT_OUT.get()


@contextlib.contextmanager
def leaving_out(*sources: str) -> Iterator[None]:
    """Explain without the exemplars of these threads (a corpus log without its own thread), and
    without their counts in the priors (:mod:`.priors`)."""
    token = _LEFT_OUT.set(_LEFT_OUT.get() | frozenset(filter(None, sources)))
    try:
        yield
    finally:
        _LEFT_OUT.reset(token)


def build(logs: Iterable[Tuple[str, str, str]]) -> Dict[str, Any]:
    """The exemplars file's content from (code, thread URL, material) of training logs."""
    rows = []
    for code, source, text in logs:
        counts = Counter(tokens(text))
        if counts:
            rows.append({"code": code, "source": source, "words": dict(sorted(counts.items()))})
    rows.sort(key=lambda r: (r["source"], r["code"]))
    return {"format": FORMAT, "version": VERSION,
            "about": "words of the error lines of the training logs of tests/corpus/explain, with their "
                     "established codes; built by scripts/build_exemplars.py, never from a validation log",
            "exemplars": rows}


@functools.lru_cache(maxsize=1)
def load() -> Optional[Index]:
    try:
        data = json.loads(EXEMPLARS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        return None
    return Index([(r["code"], r["source"], r["words"]) for r in data.get("exemplars", [])])
