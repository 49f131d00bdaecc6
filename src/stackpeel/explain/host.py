"""The operating system a log plainly comes from, and the causes it rules out (tools36b).

A log's own words often say where it ran: a traceback through ``C:\\ProgramData\\...``, a
``[WinError 126]``, a ``.dll``; ``/home/user/...``, a ``linux-gnu`` extension; a ``/Users/``
home, ``Darwin``. The knowledge base's ``[host.NAME]`` tables hold these signs, each for one
platform, and each code's ``platforms`` the operating systems its cause can happen on at all
(``/dev/shm`` too small: Linux; the page file: Windows; the Apple GPU: macOS).

:func:`platform_of` reads the signs on what the scan kept (tracebacks, error lines, the lines
around hits, clue lines, fact lines): a log whose signs name one platform only comes from it;
signs of two (WSL, Docker Desktop, a Windows prompt that runs a Linux container) decide
nothing. Reasoning then never lets a guess (words, resemblance) or a base rate name first a
cause :func:`ruled_out` there. A cause a line of the log states is never dropped: the rule
reads the OS to weigh guesses, not to overrule what the log says.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

#: characters of kept text read for host signs (the scan keeps a few hundred lines at most)
HOST_TEXT_CHARS = 200_000


def kept_text(parsed: Any) -> str:
    """The text the scan kept, joined: where host signs are looked for."""
    parts: List[str] = [ln.text for ln in parsed.other_errors]
    parts += [ln.text for ln in parsed.suspects]
    parts += [f"{tb.files_text}\n{tb.exc_type or ''}: {tb.message}" for tb in parsed.tracebacks]
    parts += [f"{h.line.text}\n{h.context}" for h in parsed.hits]
    parts += [text for seen in parsed.clues.values() for _, text in seen]
    lines = getattr(parsed.facts, "lines", None) or {}
    parts += [text for _, text in lines.values()]
    return "\n".join(parts)[:HOST_TEXT_CHARS]


def signs_of(text: str, kb: Any) -> Dict[str, List[str]]:
    """platform -> the names of the host signs found in ``text``."""
    out: Dict[str, List[str]] = {}
    for name, platform, regex in kb.hosts:
        if regex.search(text):
            out.setdefault(platform, []).append(name)
    return out


def platform_of(parsed: Any, kb: Any) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(platform, the signs that name it) when the log's kept text shows the signs of one
    platform only; None when it shows none, or signs of two or more."""
    if not getattr(kb, "hosts", ()):
        return None
    found = signs_of(kept_text(parsed), kb)
    if len(found) != 1:
        return None
    platform, names = next(iter(found.items()))
    return platform, tuple(names)


def ruled_out(code: str, platform: Optional[str], kb: Any) -> bool:
    """Whether ``code``'s cause cannot happen on ``platform`` (its ``platforms`` leave it out)."""
    if platform is None:
        return False
    allowed = kb.platforms.get(code, ())
    return bool(allowed) and platform not in allowed
