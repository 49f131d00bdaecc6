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
def _table() -> Tuple[Optional[Pattern[str]], Dict[str, List[Tuple[str, Tuple, Tuple]]]]:
    """(gate, prefix -> [(key, (translation's parts, index of its key), English parts)]).

    Each translation is filed under its key (its longest literal: the words a line must hold
    for it to apply). The gate is a trie of the keys that stops at the shortest key a position
    begins with (:func:`.knowledge._literal_alternation`); that prefix leads to every key it
    begins, longest translation first."""
    messages = _messages()
    if not messages:
        return None, {}
    by_key: Dict[str, List[Tuple[int, Tuple, Tuple]]] = {}
    for msg in messages:
        english = _english_parts(msg["msgid"].strip("\n"))
        for text in msg.get("tr", {}).values():
            compiled = _compile(text.strip("\n").translate(PASTED_CHARS), english)
            if compiled is None:
                continue
            parts, k, key, size = compiled
            by_key.setdefault(key, []).append((size, (parts, k), english))
    if not by_key:
        return None, {}
    from .knowledge import _literal_alternation

    keys = set(by_key)
    table: Dict[str, List[Tuple[str, Tuple, Tuple]]] = {}
    for key, found in by_key.items():
        prefix = next(key[:n] for n in range(1, len(key) + 1) if key[:n] in keys)
        # longest translation first (its literals' size), then the longest key
        table.setdefault(prefix, []).extend((key, c, e) for _, c, e in sorted(found, key=lambda t: -t[0]))
    for prefix, rows in table.items():
        rows.sort(key=lambda r: -len(r[0]))
    return _literal_alternation(sorted(keys)), table


@functools.lru_cache(maxsize=1)
def _messages() -> Tuple[dict, ...]:
    """Every message with its translations: the catalogues' and the hand-kept ones (read once:
    the table and the letters gate both need them)."""
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
    return tuple(out)


def _english_parts(msgid: str) -> Tuple:
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


#: an argument of a translation: ("arg", index of the argument in the English message, numeric)
#: a literal: ("lit", text); an optional quote mark (gcc's %< %>): ("quote",)
Part = Tuple


def _compile(text: str, english: Tuple) -> Optional[Tuple[Tuple[Part, ...], int, str, int]]:
    """(the translation's parts, the index of its key among them, the key, the size of its literals).

    No regular expression: a translation is matched by finding its literals in order with
    ``str.find`` from its key outwards, each argument taking the text between (the first
    occurrence going right, the nearest going left), so a line of any length costs linear time
    (a regex with two or three lazy wildcards backtracks cubically on an adversarial line)."""
    parts: List[Part] = []
    pos = 0
    arg = 0
    indexes: List[int] = []
    for m in DIRECTIVE_RE.finditer(text):
        if m.start() > pos:
            parts.append(("lit", text[pos:m.start()]))
        conv = m.group("conv")
        if conv == "%":
            parts.append(("lit", "%"))
        elif conv in "<>'":
            parts.append(("quote",))
        else:
            index = int(m.group("pos")) - 1 if m.group("pos") else arg
            arg += 1
            indexes.append(index)
            parts.append(("arg", index, conv in "diouxX"))
        pos = m.end()
    if pos < len(text):
        parts.append(("lit", text[pos:]))
    n_args = sum(1 for p in english if isinstance(p, int))
    if sorted(indexes) != list(range(n_args)):
        return None  # the translation drops or adds an argument: not a faithful one
    best = -1
    for i, part in enumerate(parts):
        if part[0] == "lit":
            lit = part[1].strip()
            if len(lit) >= (MIN_KEY if not lit.isascii() else MIN_ASCII_KEY) and \
                    (best < 0 or len(lit) > len(parts[best][1].strip())):
                best = i
    if best < 0:
        return None
    size = sum(len(p[1]) for p in parts if p[0] == "lit")
    return tuple(parts), best, parts[best][1].strip(), size


#: the most characters an argument between two literals may take (a path, a name, a number):
#: bounds each search, so a line full of one translation's key stays linear
MAX_ARG = 1000
#: what a paste's route puts in place of the characters a program printed, read back as them:
#: typographic quotes of word processors, forums and chat clients ("No module named
#: \u2018triton\u2019", "Can\u2019t load tokenizer") and the no-break and other fixed-width spaces of
#: a web page copied from a browser; the knowledge base's signatures quote and space as the
#: programs do (bench/explain_invariance.py "smart-quotes", "nbsp"). The parser reads a log's
#: lines through it (parser.as_printed) and the catalogues' translations are read the same way, since
#: glibc's and MSVC's own translations hold such quotes (uk "\u043e\u0431\u2019\u0454\u043a\u0442\u0456\u0432",
#: zh_CN \u201c...\u201d)
PASTED_CHARS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                              "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
                              "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2007": " ", "\u2009": " ",
                              "\u200a": " ", "\u202f": " ", "\u205f": " "})
PASTED_CHARS_RE = re.compile("[\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00a0\u2002\u2003\u2007"
                             "\u2009\u200a\u202f\u205f]")

QUOTES = frozenset("\"'`\u2018\u2019\u201c\u201d\u300c\u300d\u00ab\u00bb")
NUMBER_RE = re.compile(r"-?\d+")


def _match(line: str, parts: Tuple[Part, ...], k: int, at: int) -> Optional[Tuple[int, int, Dict[int, str]]]:
    """(start, end, arguments) of the translation whose key literal (parts[k], stripped) was
    found at ``at``, or None."""
    lit = parts[k][1]
    begin = at - (len(lit) - len(lit.lstrip()))
    if begin < 0 or not line.startswith(lit, begin):
        return None
    args: Dict[int, str] = {}
    # rightwards from the key
    p = begin + len(lit)
    pending: Optional[Part] = None
    for part in parts[k + 1:]:
        if part[0] == "quote":
            if pending is None and p < len(line) and line[p] in QUOTES:
                p += 1
            continue
        if part[0] == "arg":
            if pending is not None:  # two arguments side by side ("%d%s"): a number takes its digits
                m = NUMBER_RE.match(line, p) if pending[2] else None
                if pending[2] and m is None:
                    return None
                args[pending[1]], p = (m.group(0), m.end()) if m else ("", p)
            pending = part
            continue
        found = line.find(part[1], p, p + MAX_ARG + len(part[1])) if pending is not None else \
            (p if line.startswith(part[1], p) else -1)
        if found < 0:
            return None
        if pending is not None:
            value = line[p:found]
            if pending[2] and not NUMBER_RE.fullmatch(value):
                return None
            args[pending[1]] = value
            pending = None
        p = found + len(part[1])
    if pending is not None:  # a trailing argument: the rest of the line (a number: its digits)
        if pending[2]:
            m = NUMBER_RE.match(line, p)
            if m is None:
                return None
            args[pending[1]], p = m.group(0), m.end()
        else:
            args[pending[1]], p = line[p:], len(line)
    end = p
    # leftwards from the key
    q = begin
    pending = None
    for part in reversed(parts[:k]):
        if part[0] == "quote":
            if pending is None and q > 0 and line[q - 1] in QUOTES:
                q -= 1
            continue
        if part[0] == "arg":
            if pending is not None:
                if pending[2]:
                    return None  # a number right after another argument, read leftwards: give up
                args[pending[1]] = ""
            pending = part
            continue
        found = line.rfind(part[1], max(0, q - MAX_ARG - len(part[1])), q) if pending is not None else \
            (q - len(part[1]) if line.startswith(part[1], q - len(part[1])) and q >= len(part[1]) else -1)
        if found < 0:
            return None
        if pending is not None:
            value = line[found + len(part[1]):q]
            if pending[2] and not NUMBER_RE.fullmatch(value):
                return None
            args[pending[1]] = value
            pending = None
        q = found
    if pending is not None:  # a leading argument: the line from its start (a number: its digits)
        if pending[2]:
            m = re.search(r"-?\d+$", line[:q])
            if m is None:
                return None
            args[pending[1]], q = m.group(0), m.start()
        else:
            args[pending[1]], q = line[:q], 0
    return q, end, args


def _render(english: Tuple, args: Dict[int, str]) -> str:
    return "".join(p if isinstance(p, str) else args.get(p, "") for p in english)


@functools.lru_cache(maxsize=1)
def _letters() -> FrozenSet[str]:
    """Every character outside ASCII that a translation holds: a line with none of them (a
    progress bar's blocks, an emoji, an arrow) holds no translation, and the table is not even
    compiled for it."""
    return frozenset(ch for msg in _messages() for text in msg.get("tr", {}).values()
                     for ch in text if ord(ch) > 127)


def translate(line: str) -> str:
    """``line`` with every catalogue message it holds in English (unchanged when none). The
    catalogues' typographic quotes and fixed-width spaces are read as :data:`PASTED_CHARS` reads
    them, so a line is matched the same however they were pasted."""
    if line.isascii() or _letters().isdisjoint(line):
        return line
    gate, table = _table()
    if gate is None:
        return line
    original = line
    if PASTED_CHARS_RE.search(line):
        line = line.translate(PASTED_CHARS)
    read_as = line
    for _ in range(MAX_PASSES):  # a translation may uncover or shift another
        new = _pass(line, gate, table)
        if new == line:
            break
        line = new
    if line == read_as:
        return original
    if line != original:
        # a full-width colon of the same line ("cuda_runtime.h：" from gcc's "%s：%s") is the
        # English colon and space the signatures expect
        line = FULLWIDTH_COLON_RE.sub(": ", line)
    return line


def _pass(line: str, gate: Pattern[str], table: Dict) -> str:
    # the gate's matches may overlap: a shorter key (': 找不到', of '%s: 找不到 %s') found at a
    # position must not hide a key that begins inside it ('找不到指定的程序' two characters on,
    # in 'DLL load failed while importing exllamav2_ext: 找不到指定的程序。'), so the search
    # goes on from the next character, not from the end of the match (harv33c)
    pos = 0
    while True:
        m = gate.search(line, pos)
        if m is None:
            return line
        for key, (parts, k), english in table[m.group(0)]:
            if not line.startswith(key, m.start()):
                continue
            found = _match(line, parts, k, m.start())
            if found is not None:
                start, end, args = found
                return line[:start] + _render(english, args) + line[end:]
        pos = m.start() + 1
