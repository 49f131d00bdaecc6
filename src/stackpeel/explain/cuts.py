"""Cuts of a log that show a failure the way a log nobody wrote a pattern for shows it.

:func:`uncited` removes the lines the matched signatures cite, again and again until no
signature matches: what is left is the failure without the words the knowledge base knows.
``tests/test_explain_silence.py`` checks that such a cut is never answered "No known problem";
``bench/explain_fallback.py`` measures how well the guessers (the vocabulary, resemblance)
name the established cause of it. Reads only its argument and the bundled knowledge base.
"""

from __future__ import annotations

#: rounds of removal at most (a signature may cite another line once the first is gone)
ROUNDS = 8


def uncited(body: str) -> str:
    """``body`` without the lines signatures cite, repeated until no signature matches."""
    from . import explain_text

    lines = body.split("\n")
    for _ in range(ROUNDS):
        expl = explain_text("\n".join(lines))
        cited = {ev.line for c in expl.candidates if c.basis == "signature" for ev in c.evidence if ev.line}
        if not cited:
            break
        lines = [ln for i, ln in enumerate(lines, 1) if i not in cited]
    return "\n".join(lines) + "\n"
