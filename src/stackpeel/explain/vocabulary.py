"""Guesses from words, for error lines no signature explains (issue 8: never silence).

When a log's error lines match no knowledge-base signature, ``explain`` does not stop at
"Unknown error": the words of those lines (``gcc``, ``Python.h``, ``libcuda``, ``ptxas``,
``undefined symbol``, ``/dev/shm``, ``NCCL`` ...) point at the parts of the stack that
failed, and the table ``knowledge/vocabulary.toml`` maps each stable word to the finding
codes it implicates. Context words (a container, WSL, Slurm, conda, a GPU name, a ``+cpu``
torch) re-rank those codes, as do the codes' own ``clues``; they never add a code the error
lines do not implicate. A context word that is also a code's clue is found anywhere in the log
(the scanner's clue pass); the others are looked for in what the scan kept (a pass of their
own over every chunk cost 12 % of the scan of a 10 MB log).

The result is a ranked list of :class:`Guess` objects; :mod:`.reasoning` turns them into
candidates with ``confidence = "low"`` and ``basis = "vocabulary"``, so a reader (and the
accuracy bench) can tell a guess from a signature match. Pure: reads only its arguments and
the bundled table.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Pattern, Sequence, Tuple

from ..knowledge import KB_DIR, KnowledgeError

try:  # pragma: no cover - depends on the Python version
    import tomllib as _toml
except ImportError:  # pragma: no cover
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ImportError:
        _toml = None  # type: ignore[assignment]

VOCABULARY_FILE = KB_DIR / "vocabulary.toml"
FILE = VOCABULARY_FILE.name
#: guesses kept (the first is the headline, the rest "could also be")
MAX_GUESSES = 5
#: weight of a word found in a traceback's frames (files) rather than in an error line
FRAME_FACTOR = 0.5
#: characters of an error line whose words are read
TEXT_CHARS = 2000
#: a code's context support counts at most this much (context re-ranks; it never outweighs a word)
MAX_SUPPORT = 3
_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_WORD_KEYS = {"id", "patterns", "codes", "weight", "source"}
_CONTEXT_KEYS = {"id", "words", "codes", "source"}


@dataclass(frozen=True)
class Word:
    """A stable word of the stack and the codes it implicates (likeliest first)."""

    id: str
    patterns: Tuple[Pattern[str], ...]
    codes: Tuple[str, ...]
    weight: int
    source: str
    order: int

    def search(self, text: str) -> Optional[str]:
        """The text of the first match in ``text``, else None."""
        for pat in self.patterns:
            m = pat.search(text)
            if m:
                return m.group(0)
        return None


@dataclass(frozen=True)
class Context:
    """Words of the setting a log was made in, and the codes they make likelier."""

    id: str
    words: Tuple[str, ...]
    codes: Tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Vocabulary:
    words: Tuple[Word, ...]
    contexts: Tuple[Context, ...]
    version: int = 1

    @property
    def context_words(self) -> Tuple[str, ...]:
        """Every literal of every context entry (the scanner records where each occurs)."""
        return tuple(dict.fromkeys(w for c in self.contexts for w in c.words))

    def codes(self) -> Tuple[str, ...]:
        seen: Dict[str, None] = {}
        for entry in (*self.words, *self.contexts):
            for code in entry.codes:
                seen.setdefault(code, None)
        return tuple(seen)


@dataclass(frozen=True)
class Guess:
    """One code the words of the unexplained error lines point at."""

    code: str
    score: float
    #: (word id, the text it matched) for each word that implicated the code
    words: Tuple[Tuple[str, str], ...]
    #: (line number, text, stream) of the lines those words were found in
    lines: Tuple[Tuple[int, str, str], ...]
    #: context entries and clue literals the log holds for the code (what re-ranked it)
    context: Tuple[str, ...] = ()


def _where(kind: str, raw: Mapping[str, Any], i: int) -> str:
    ident = raw.get("id") if isinstance(raw, Mapping) else None
    return f"{FILE} [[{kind}]] #{i + 1}" + (f" ({ident})" if isinstance(ident, str) else "")


def _strings(raw: Mapping[str, Any], key: str, where: str) -> Tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise KnowledgeError(f"{where}: {key} must be a non-empty list of non-empty strings")
    return tuple(value)


def parse(data: Mapping[str, Any], known_codes: Iterable[str]) -> Vocabulary:
    """A :class:`Vocabulary` from the parsed TOML; every code must be in ``known_codes``.
    Raises :class:`KnowledgeError` naming the entry for an unknown field or code, a bad regex,
    a duplicate id, a weight outside 1..3 or a missing source."""
    known = set(known_codes)
    extra = set(data) - {"version", "word", "context"}
    if extra:
        raise KnowledgeError(f"{FILE}: unknown top-level key(s) {sorted(extra)}")
    seen: Dict[Tuple[str, str], str] = {}
    words: List[Word] = []
    contexts: List[Context] = []
    for kind, keys in (("word", _WORD_KEYS), ("context", _CONTEXT_KEYS)):
        items = data.get(kind, [])
        if not isinstance(items, list):
            raise KnowledgeError(f"{FILE}: [[{kind}]] must be an array of tables")
        for i, raw in enumerate(items):
            where = _where(kind, raw, i)
            if not isinstance(raw, Mapping):
                raise KnowledgeError(f"{where}: not a table")
            unknown = set(raw) - keys
            if unknown:
                raise KnowledgeError(f"{where}: unknown field(s) {sorted(unknown)}")
            ident = raw.get("id")
            if not isinstance(ident, str) or not _ID_RE.match(ident):
                raise KnowledgeError(f"{where}: id must be kebab-case")
            if (kind, ident) in seen:
                raise KnowledgeError(f"{where}: id {ident!r} already used by another [[{kind}]]")
            seen[(kind, ident)] = kind
            source = raw.get("source")
            if not isinstance(source, str) or not source.strip():
                raise KnowledgeError(f"{where}: source is required (where the word comes from)")
            codes = _strings(raw, "codes", where)
            for code in codes:
                if code not in known:
                    raise KnowledgeError(f"{where}: names unknown code {code!r}")
            if len(set(codes)) != len(codes):
                raise KnowledgeError(f"{where}: a code is listed twice")
            if kind == "context":
                contexts.append(Context(ident, _strings(raw, "words", where), codes, source))
                continue
            weight = raw.get("weight", 1)
            if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 3:
                raise KnowledgeError(f"{where}: weight must be 1, 2 or 3")
            pats = []
            for p in _strings(raw, "patterns", where):
                try:
                    pats.append(re.compile(p))
                except re.error as exc:
                    raise KnowledgeError(f"{where}: bad regex {p!r}: {exc}") from None
            words.append(Word(ident, tuple(pats), codes, weight, source, len(words)))
    version = data.get("version", 1)
    if not isinstance(version, int):
        raise KnowledgeError(f"{FILE}: version must be an integer")
    return Vocabulary(tuple(words), tuple(contexts), version)


@functools.lru_cache(maxsize=None)
def load(path: Optional[str] = None) -> Vocabulary:
    """The bundled table (or ``path``), validated against the knowledge base's codes and
    aliases (cached)."""
    from .. import knowledge

    if _toml is None:  # pragma: no cover
        raise KnowledgeError("reading the knowledge base needs Python 3.11+ or the 'tomli' package")
    file = Path(path) if path else VOCABULARY_FILE
    try:
        with open(file, "rb") as f:
            data = _toml.load(f)
    except _toml.TOMLDecodeError as exc:
        raise KnowledgeError(f"{file.name}: {exc}") from None
    return parse(data, knowledge.load().codes)


def guess(texts: Sequence[Tuple[int, str, str, float]], found: Mapping[str, Sequence[Tuple[int, str]]],
          clues: Mapping[str, Sequence[str]], vocab: Vocabulary, known: Optional[Iterable[str]] = None
          ) -> List[Guess]:
    """Rank the codes the words of ``texts`` implicate.

    ``texts``: (line number, text, stream, factor) of the unexplained error lines (factor 1)
    and of their tracebacks' frame files (factor :data:`FRAME_FACTOR`); ``found``: the literals
    the scanner found anywhere in the log (clue and context literal -> lines); ``clues``: code
    -> its own clue literals. A code scores the weight of every distinct word that implicates
    it (times the factor of the best text it was found in); then one point per context entry
    or own clue literal the log holds for it (at most :data:`MAX_SUPPORT`). Ties keep the
    table's order (the word first matched, then the code's place in its list)."""
    allowed = set(known) if known is not None else None
    best: Dict[str, Dict[str, Tuple[float, str, int]]] = {}    # code -> word id -> (score, matched, pos)
    lines: Dict[str, List[Tuple[int, str, str]]] = {}
    first: Dict[str, Tuple[int, int]] = {}
    for number, text, stream, factor in texts:
        if not text:
            continue
        for w in vocab.words:
            hit = w.search(text)
            if hit is None:
                continue
            for pos, code in enumerate(w.codes):
                if allowed is not None and code not in allowed:
                    continue
                per = best.setdefault(code, {})
                score = w.weight * factor
                if w.id not in per or per[w.id][0] < score:
                    per[w.id] = (score, hit, pos)
                first.setdefault(code, (w.order, pos))
                got = lines.setdefault(code, [])
                if (number, text, stream) not in got:
                    got.append((number, text, stream))
    out = []
    for code, per in best.items():
        support = [c.id for c in vocab.contexts if code in c.codes and any(found.get(lit) for lit in c.words)]
        support += [f"'{lit}'" for lit in clues.get(code, ()) if found.get(lit)]
        score = sum(s for s, _, _ in per.values()) + min(len(support), MAX_SUPPORT) * 0.5
        words = tuple((wid, hit) for wid, (_, hit, _) in sorted(per.items(), key=lambda kv: -kv[1][0]))
        out.append(Guess(code, score, words, tuple(sorted(lines[code])), tuple(support)))
    out.sort(key=lambda g: (-g.score, first[g.code]))
    return out[:MAX_GUESSES]
