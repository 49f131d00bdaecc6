"""``stackpeel explain``: from a pasted log or traceback to the root cause.

Public API::

    from stackpeel.explain import explain_text, match_codes
    match_codes("RuntimeError: Failed to find C compiler. Please specify via CC ...")
    # -> ['no-c-compiler']
    expl = explain_text(open("train.log").read())
    expl.root.code, expl.root.evidence[0].line

The pieces, each usable alone:

* :mod:`.knowledge` -- the log side of the knowledge base (``stackpeel/knowledge/``: patterns -> finding codes);
* :mod:`.parser`    -- a streaming log scanner (tracebacks, warnings, compiler, NCCL, ...);
* :mod:`.reasoning` -- a pure function from parsed evidence to ranked root causes;
* :mod:`.facts`     -- what the versions, GPUs and driver a log prints prove (known-bad combinations, state facts);
* :mod:`.live`      -- confirms candidates by running the matching ``stackpeel check`` checks;
* :mod:`.render`    -- text / JSON / Markdown renderers of an :class:`Explanation`.

The library functions never run live checks unless asked (``live=True``); the
``stackpeel explain`` command does by default.
"""

from __future__ import annotations

from typing import IO, Optional

from .knowledge import match_codes
from .parser import InputError, scan_stream, scan_text
from .reasoning import Candidate, Evidence, Explanation, ExceptionInfo


def explain_text(text: str, source: str = "<text>", live: bool = False, python: Optional[str] = None) -> Explanation:
    """Explain a log held in memory. With ``live=True``, confirm the candidates by
    running the matching checks against ``python`` (default: the active environment)."""
    from .reasoning import explain

    expl = explain(scan_text(text if isinstance(text, str) else str(text)), source=source)
    if live:
        from .live import confirm
        expl = confirm(expl, python=python)
    return expl


def explain_stream(stream: IO[bytes], source: str = "<stream>", live: bool = False,
                   python: Optional[str] = None) -> Explanation:
    """Explain a log read from a binary stream, in bounded memory. Raises
    :class:`InputError` when the input is not a text log."""
    from .reasoning import explain

    expl = explain(scan_stream(stream), source=source)
    if live:
        from .live import confirm
        expl = confirm(expl, python=python)
    return expl


__all__ = sorted([
    "Candidate", "Evidence", "ExceptionInfo", "Explanation", "InputError", "explain_stream", "explain_text",
    "match_codes",
])
