"""The knowledge base of ``stackpeel explain``: log patterns mapped to finding codes.

The entries live in ``knowledge.toml`` (data, not code; its header documents the
fields). This module loads and validates them once and compiles the regexes:

* one regex per pattern, searched in single log lines (``re.MULTILINE`` so ``$`` also
  works inside a multi-line exception text handed to :func:`match_codes`);
* one *gate* regex, the alternation of every pattern plus the structural markers the
  parser needs, run once per log line: a line that misses the gate costs one search.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Pattern, Sequence, Tuple

try:  # the regex parser, to find the literal every pattern needs
    import re._parser as _sre_parse  # type: ignore[import-not-found]  # 3.11+
    import re._constants as _sre_c  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - 3.9/3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - exercised on 3.9/3.10 only
    try:
        import tomli as _toml
    except ImportError:  # pragma: no cover
        _toml = None

#: Layers from the bottom of the stack to the top (the order of ``stackpeel list``);
#: "deepest first" sorts by this rank.
LAYER_ORDER: Tuple[str, ...] = ("system", "gpu", "cuda", "torch", "toolchain", "triton", "kernels", "multi_gpu")

KINDS = ("root", "symptom")

KB_PATH = Path(__file__).with_name("knowledge.toml")


class KnowledgeError(ValueError):
    """knowledge.toml is malformed (a bad regex, an unknown field, a missing key)."""


#: shortest literal a pattern must contain (the scanner's prefilter looks for it)
MIN_NEEDLE = 4


def needles_of(pattern: str) -> List[str]:
    """Literal strings, one of which every match of ``pattern`` contains.

    The longest run of literal characters in the pattern's top-level sequence (plain
    groups are looked into); a top-level alternation gives one needle per branch.
    Raises :class:`KnowledgeError` when a branch has no literal of MIN_NEEDLE chars.
    """
    parsed = _sre_parse.parse(pattern)
    items = list(parsed)
    if len(items) == 1 and items[0][0] is _sre_c.BRANCH:
        out: List[str] = []
        for branch in items[0][1][1]:
            out.extend(_needles_seq(list(branch), pattern))
        return out
    return _needles_seq(items, pattern)


def _needles_seq(items, pattern: str) -> List[str]:
    runs: List[str] = []
    cur: List[str] = []

    def walk(seq) -> None:
        for op, av in seq:
            if op is _sre_c.LITERAL:
                cur.append(chr(av))
            elif op is _sre_c.SUBPATTERN and not any(o is _sre_c.BRANCH for o, _ in av[-1]):
                walk(list(av[-1]))
            else:
                if cur:
                    runs.append("".join(cur))
                    cur.clear()
                if op is _sre_c.BRANCH and len(seq) == 1:
                    raise KnowledgeError(f"pattern {pattern!r}: put alternatives at the top level")
    walk(items)
    if cur:
        runs.append("".join(cur))
    best = max(runs, key=len, default="")
    if len(best) < MIN_NEEDLE:
        raise KnowledgeError(f"pattern {pattern!r} has no literal of {MIN_NEEDLE}+ characters to search for")
    return [best]


def layer_rank(layer: str) -> int:
    try:
        return LAYER_ORDER.index(layer)
    except ValueError:
        return len(LAYER_ORDER)


@dataclass(frozen=True)
class Refine:
    context: Pattern[str]
    codes: Tuple[str, ...]


@dataclass(frozen=True)
class Entry:
    id: str
    patterns: Tuple[Pattern[str], ...]
    layer: str
    codes: Tuple[str, ...]
    kind: str
    weight: int
    explanation: str
    fix: str
    links: Tuple[str, ...] = ()
    could_be: Tuple[str, ...] = ()
    refine: Tuple[Refine, ...] = ()
    order: int = 0
    #: literals, one of which any matching line contains (from the patterns)
    needles: Tuple[str, ...] = ()

    @property
    def is_root(self) -> bool:
        return self.kind == "root"

    def search(self, line: str) -> Optional["re.Match[str]"]:
        if not any(n in line for n in self.needles):
            return None
        for pat in self.patterns:
            m = pat.search(line)
            if m:
                return m
        return None

    def codes_for(self, context: str) -> Tuple[str, ...]:
        """The codes this entry stands for, given the text around the matching line."""
        for rule in self.refine:
            if rule.context.search(context):
                return rule.codes
        return self.codes

    def all_codes(self) -> Tuple[str, ...]:
        seen: Dict[str, None] = {}
        for c in self.codes + self.could_be + tuple(c for r in self.refine for c in r.codes):
            seen.setdefault(c, None)
        return tuple(seen)

    def sort_key(self) -> Tuple[int, int, int]:
        """Deepest first: root causes before symptoms, then by layer, then KB order."""
        return (0 if self.is_root else 1, layer_rank(self.layer), self.order)


_ALLOWED = {"id", "patterns", "layer", "codes", "kind", "weight", "explanation", "fix", "links", "could_be",
            "refine"}

#: Literals the parser needs to see even when no entry matches (tracebacks, warnings,
#: compiler and NCCL errors), so that they reach the "unexplained errors" sample.
STRUCTURAL = (
    "Traceback (most recent call last)",
    "During handling of the above exception",
    "The above exception was the direct cause",
    "Warning: ",
    "error",
    "Error",
    "ERROR",
    "Exception",
    "NCCL WARN",
    "fatal",
    "FAILED",
    "Killed",
    "Segmentation fault",
)


@dataclass(frozen=True)
class KnowledgeBase:
    entries: Tuple[Entry, ...]
    #: finding code -> check id that confirms it live
    checks: Mapping[str, str] = field(default_factory=dict)
    version: int = 1

    @functools.cached_property
    def gate(self) -> Pattern[str]:
        """One search per log line: the alternation of every entry's needles and the
        structural literals. Plain literals keep Python's regex engine fast (a 10 MB
        log of noise in a fraction of a second); the full patterns run only on lines
        that pass."""
        return _literal_alternation([rare_start(n) for e in self.entries for n in e.needles] + list(STRUCTURAL))

    @functools.cached_property
    def entry_gate(self) -> Pattern[str]:
        """Only the entries' needles (no structural markers)."""
        return _literal_alternation([rare_start(n) for e in self.entries for n in e.needles])

    def by_id(self, entry_id: str) -> Entry:
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise KeyError(entry_id)

    def referenced_codes(self) -> Tuple[str, ...]:
        seen: Dict[str, None] = {}
        for e in self.entries:
            for c in e.all_codes():
                seen.setdefault(c, None)
        for c in self.checks:
            seen.setdefault(c, None)
        return tuple(seen)

    def match_line(self, line: str) -> List[Entry]:
        """Entries whose patterns match ``line`` (in KB order)."""
        return [e for e in self.entries if e.search(line)]


#: rough frequency of characters in ML logs (per mille); others count as 2. Used to cut
#: each needle down to a substring that starts with a rare character: the regex engine
#: then stops at far fewer positions (3x faster on a log of training noise).
_CHAR_FREQ: Dict[str, int] = {
    " ": 150, "e": 60, "t": 45, "a": 40, "o": 38, "i": 38, "n": 36, "s": 35, "r": 34, "l": 25, "d": 22, "c": 20,
    "u": 18, "m": 16, "p": 15, "h": 15, "f": 12, "g": 12, "b": 8, "y": 8, "w": 7, "v": 6, "k": 5, "x": 3, "q": 1,
    "j": 1, "z": 1, **{d: 30 for d in "0123456789"}, **{ch: 20 for ch in "=.:,-_/[]"},
    **{ch: 5 for ch in "()'\"|<>"}, **{ch: 4 for ch in "ABCDHJKLMPQUVWXYZ"}, **{ch: 8 for ch in "EINOSRTAFG"},
}


def rare_start(needle: str, keep: int = 6) -> str:
    """The suffix of ``needle`` (at least ``keep`` characters) starting with its rarest character."""
    if len(needle) <= keep:
        return needle
    best = min(range(len(needle) - keep + 1), key=lambda p: (_CHAR_FREQ.get(needle[p], 2), p))
    return needle[best:]


def _literal_alternation(literals: Sequence[str]) -> Pattern[str]:
    """A regex matching any of ``literals``, shaped as a trie: ``F(?:ailed to find C|ound no)``.
    Python's engine then tries about one branch per position instead of every literal
    (about 2.5x faster than a flat alternation on a log of noise)."""
    trie: Dict[str, dict] = {}
    for word in set(literals):
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: Dict[str, dict]) -> str:
        if "" in node:  # a shorter literal ends here: enough for a prefilter
            return ""
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(emit(trie) if trie else "(?!)")


def _compile(pattern: str, where: str) -> Pattern[str]:
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise KnowledgeError(f"{where}: bad regex {pattern!r}: {exc}") from None


def parse_kb(data: Mapping) -> KnowledgeBase:
    entries: List[Entry] = []
    seen = set()
    for i, raw in enumerate(data.get("entry", ())):
        where = f"knowledge.toml entry #{i + 1} ({raw.get('id', '?')})"
        unknown = set(raw) - _ALLOWED
        if unknown:
            raise KnowledgeError(f"{where}: unknown field(s) {sorted(unknown)}")
        for key in ("id", "patterns", "layer", "codes", "kind", "explanation", "fix"):
            if not raw.get(key):
                raise KnowledgeError(f"{where}: missing {key!r}")
        if raw["id"] in seen:
            raise KnowledgeError(f"{where}: duplicate id")
        seen.add(raw["id"])
        if raw["kind"] not in KINDS:
            raise KnowledgeError(f"{where}: kind must be one of {KINDS}")
        if raw["layer"] not in LAYER_ORDER:
            raise KnowledgeError(f"{where}: unknown layer {raw['layer']!r}")
        weight = int(raw.get("weight", 2))
        if not 1 <= weight <= 3:
            raise KnowledgeError(f"{where}: weight must be 1..3")
        refine = tuple(
            Refine(_compile(r["context"], where), tuple(r["codes"])) for r in raw.get("refine", ())
        )
        try:
            needles = tuple(dict.fromkeys(n for p in raw["patterns"] for n in needles_of(p)))
        except (KnowledgeError, re.error) as exc:
            raise KnowledgeError(f"{where}: {exc}") from None
        entries.append(Entry(
            id=raw["id"],
            needles=needles,
            patterns=tuple(_compile(p, where) for p in raw["patterns"]),
            layer=raw["layer"],
            codes=tuple(raw["codes"]),
            kind=raw["kind"],
            weight=weight,
            explanation=raw["explanation"].strip(),
            fix=raw["fix"].strip(),
            links=tuple(raw.get("links", ())),
            could_be=tuple(raw.get("could_be", ())),
            refine=refine,
            order=i,
        ))
    checks = dict(data.get("checks", {}))
    return KnowledgeBase(entries=tuple(entries), checks=checks, version=int(data.get("version", 1)))


@functools.lru_cache(maxsize=None)
def load(path: Optional[str] = None) -> KnowledgeBase:
    """The knowledge base (cached). ``path`` overrides the bundled knowledge.toml."""
    if _toml is None:  # pragma: no cover
        raise KnowledgeError("reading knowledge.toml needs Python 3.11+ or the 'tomli' package")
    p = Path(path) if path else KB_PATH
    with open(p, "rb") as f:
        data = _toml.load(f)
    return parse_kb(data)


def match_codes(text: str, kb: Optional[KnowledgeBase] = None) -> List[str]:
    """The finding codes whose patterns match ``text``, deepest first.

    Root causes come before symptoms, lower layers before higher ones. ``text`` may be
    one line or a whole exception text; refinements (e.g. "no kernel image" inside
    causal_conv1d -> ``extension-arch-missing``) are judged on ``text`` itself.
    Never raises for any string input.
    """
    if not isinstance(text, str) or not text:
        return []
    kb = kb or load()
    if not kb.entry_gate.search(text):
        return []
    hits: List[Tuple[Tuple[int, int, int], Tuple[str, ...]]] = []
    for e in kb.entries:
        if e.search(text):
            hits.append((e.sort_key(), e.codes_for(text)))
    out: Dict[str, None] = {}
    for _, codes in sorted(hits, key=lambda h: h[0]):
        for c in codes:
            out.setdefault(c, None)
    return list(out)


def codes_of_entries(entries: Sequence[Entry], context: str = "") -> List[str]:
    out: Dict[str, None] = {}
    for e in sorted(entries, key=Entry.sort_key):
        for c in e.codes_for(context):
            out.setdefault(c, None)
    return list(out)
