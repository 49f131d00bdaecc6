"""Read a localized line in English: what the C library, bash, gcc, binutils and make print
in the user's language, put back into the English words explain's signatures are written in.

``libcudart.so.11.0: 无法打开共享对象文件: 没有那个文件或目录`` becomes
``libcudart.so.11.0: cannot open shared object file: No such file or directory``;
``bash: nvcc: 未找到命令`` becomes ``bash: nvcc: command not found``; ``段错误 (核心已转储)``
becomes ``Segmentation fault (core dumped)``. The pairs come from the distribution's own
message catalogues (``knowledge/locales.json``, written by ``scripts/build_locales.py``), so a
message is read in every language those programs are translated into, without a pattern
per language.

Only lines with a character outside ASCII are looked at (a translation with none, such as
French ``Erreur de segmentation``, is not read: the cost would fall on every English log).
A message's placeholders (``%s``, ``%d``, ``%1$s``) match any text and are carried over in the
English order. Pure and standard library only; the table is compiled on the first line that
needs it.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Pattern, Tuple

FILE = Path(__file__).resolve().parent.parent / "knowledge" / "locales.json"
#: translations no distribution catalogue holds (Windows, Visual Studio, cmd.exe, PowerShell),
#: kept by hand, each with where its text was seen: ``[[message]]`` tables with ``english``,
#: ``source`` and ``[message.tr]`` (language -> text), placeholders written as in C (``%s``)
EXTRA = FILE.with_name("locales_extra.toml")

#: a printf directive of the catalogues' formats: C (``%s``, ``%1$s``, ``%ld``, ``%m``), gcc
#: (``%qs``, ``%<``/``%>`` quotes) and binutils (``%P`` program, ``%E`` error, ``%pT`` symbol)
DIRECTIVE_RE = re.compile(
    r"%(?:(?P<pos>\d+)\$)?[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
    r"(?P<len>hh|ll|[hlLzjtq]|p(?=[ABCDPTSE]))?(?P<conv>[diouxXcsmABCDEPTS%<>'])")
#: a translated literal too short to search for on its own (it still counts inside a longer one);
#: one in ASCII letters only ("Datei oder Verzeichnis nicht gefunden") must be longer
MIN_KEY = 2
MIN_ASCII_KEY = 10
FULLWIDTH_COLON_RE = re.compile("\uff1a\\s*")
#: translations applied to one line at most (each pass applies one, then looks again)
MAX_PASSES = 8


@functools.lru_cache(maxsize=1)
def _table() -> Tuple[Optional[Pattern[str]], Dict[str, List[Tuple[str, str, Tuple, Tuple[int, ...]]]]]:
    """(gate, prefix -> [(key, pattern, English parts, argument groups)]).

    Each translation is filed under its key (its longest literal: the words a line must hold
    for it to apply). The gate is a trie of the keys that stops at the shortest key a position
    begins with (:func:`.knowledge._literal_alternation`); that prefix leads to every key it
    begins, longest translation first."""
    messages = _messages()
    if not messages:
        return None, {}
    by_key: Dict[str, List[Tuple[int, str, Tuple, Tuple[int, ...]]]] = {}
    for msg in messages:
        english = _english_parts(msg["msgid"].strip("\n"))
        for text in msg.get("tr", {}).values():
            compiled = _compile(text.strip("\n"), english)
            if compiled is None:
                continue
            pattern, order, key, size = compiled
            by_key.setdefault(key, []).append((size, pattern, english, order))
    if not by_key:
        return None, {}
    from .knowledge import _literal_alternation

    keys = set(by_key)
    table: Dict[str, List[Tuple[str, str, Tuple, Tuple[int, ...]]]] = {}
    for key, found in by_key.items():
        prefix = next(key[:n] for n in range(1, len(key) + 1) if key[:n] in keys)
        table.setdefault(prefix, []).extend((key, p, e, o) for _, p, e, o in found)
    for prefix, rows in table.items():
        rows.sort(key=lambda r: -sum(len(x) for x in r[2] if isinstance(x, str)) - len(r[0]))
    return _literal_alternation(sorted(keys)), table


def _messages() -> List[dict]:
    """Every message with its translations: the catalogues' and the hand-kept ones."""
    out: List[dict] = []
    try:
        out.extend(json.loads(FILE.read_text(encoding="utf-8")).get("messages", []))
    except (OSError, ValueError):
        pass
    if EXTRA.is_file():
        from ..knowledge import _toml

        if _toml is not None:
            with EXTRA.open("rb") as fh:
                doc = _toml.load(fh)
            out.extend({"msgid": m["english"], "tr": m.get("tr", {})} for m in doc.get("message", []))
    return out


def _english_parts(msgid: str) -> Optional[Tuple]:
    """The English message as a tuple of literal strings and argument indexes (ints)."""
    parts: List = []
    pos = 0
    arg = 0
    for m in DIRECTIVE_RE.finditer(msgid):
        parts.append(msgid[pos:m.start()])
        conv = m.group("conv")
        if conv == "%":
            parts.append("%")
        elif conv in "<>'":
            parts.append("'")
        else:
            parts.append(arg)
            arg += 1
        pos = m.end()
    parts.append(msgid[pos:])
    return tuple(p for p in parts if p != "")


def _compile(text: str, english: Tuple) -> Optional[Tuple[str, Tuple[int, ...], str, int]]:
    """(regex, the group of each English argument, its gate key, the size of its literals)."""
    out: List[str] = []
    literals: List[str] = []
    pos = 0
    arg = 0
    order: List[int] = []
    for m in DIRECTIVE_RE.finditer(text):
        lit = text[pos:m.start()]
        out.append(re.escape(lit))
        literals.append(lit)
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
        elif conv in "<>'":
            out.append("[\"'`\u2018\u2019\u201c\u201d\u300c\u300d\u00ab\u00bb]?")
        else:
            index = int(m.group("pos")) - 1 if m.group("pos") else arg
            arg += 1
            order.append(index)
            out.append(r"(-?\d+)" if conv in "diouxX" else "(.*?)")
        pos = m.end()
    literals.append(text[pos:])
    out.append(re.escape(text[pos:]))
    n_args = sum(1 for p in english if isinstance(p, int))
    if sorted(order) != list(range(n_args)):
        return None  # the translation drops or adds an argument: not a faithful one
    if out and out[-1] == "" and len(out) > 1 and out[-2] == "(.*?)":
        out[-2] = "(.*)"  # a trailing argument runs to the end of the line
    keys = [lit.strip() for lit in literals
            if len(lit.strip()) >= (MIN_KEY if not lit.isascii() else MIN_ASCII_KEY)]
    if not keys:
        return None
    key = max(keys, key=len)
    # the group that holds each argument of the English message
    groups = {index: g + 1 for g, index in enumerate(order)}
    return ("".join(out), tuple(groups[i] for i in range(n_args)), key, sum(len(lit) for lit in literals))


@functools.lru_cache(maxsize=None)
def _regex(pattern: str) -> Pattern[str]:
    """A translation's regex, compiled when a line first holds its key."""
    return re.compile(pattern)


def _render(english: Tuple, m: "re.Match[str]", order: Tuple[int, ...]) -> str:
    return "".join(p if isinstance(p, str) else m.group(order[p]) for p in english)


@functools.lru_cache(maxsize=1)
def _letters() -> FrozenSet[str]:
    """Every character outside ASCII that a translation holds: a line with none of them (a
    progress bar's blocks, an emoji, an arrow) holds no translation, and the table is not even
    compiled for it."""
    return frozenset(ch for msg in _messages() for text in msg.get("tr", {}).values()
                     for ch in text if ord(ch) > 127)


def translate(line: str) -> str:
    """``line`` with every catalogue message it holds in English (unchanged when none)."""
    if line.isascii() or _letters().isdisjoint(line):
        return line
    gate, table = _table()
    if gate is None:
        return line
    original = line
    for _ in range(MAX_PASSES):  # a translation may uncover or shift another
        new = _pass(line, gate, table)
        if new == line:
            break
        line = new
    if line != original:
        # a full-width colon of the same line ("cuda_runtime.h：" from gcc's "%s：%s") is the
        # English colon and space the signatures expect
        line = FULLWIDTH_COLON_RE.sub(": ", line)
    return line


def _pass(line: str, gate: Pattern[str], table: Dict) -> str:
    for m in gate.finditer(line):
        for key, pattern, english, order in table[m.group(0)]:
            if not line.startswith(key, m.start()):
                continue
            new = _regex(pattern).sub(lambda mm: _render(english, mm, order), line)
            if new != line:
                return new
    return line
