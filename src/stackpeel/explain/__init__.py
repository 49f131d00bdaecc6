"""``stackpeel explain``: from a pasted log or traceback to the root cause.

Public API::

    from stackpeel.explain import explain_text, match_codes
    match_codes("RuntimeError: Failed to find C compiler. Please specify via CC ...")
    # -> ['no-c-compiler']

The pieces, each usable alone:

* :mod:`.knowledge` -- the knowledge base (``knowledge.toml``: patterns -> finding codes);
* :mod:`.parser`    -- a streaming log scanner (tracebacks, warnings, compiler, NCCL, ...);
* :mod:`.reasoning` -- a pure function from parsed evidence to ranked root causes;
* :mod:`.live`      -- confirms candidates by running the matching ``stackpeel check`` checks;
* :mod:`.render`    -- text / JSON / Markdown renderers of an :class:`Explanation`.
"""

from __future__ import annotations

from .knowledge import match_codes

__all__ = sorted(["match_codes"])
