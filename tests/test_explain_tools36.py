"""tools36: a maintainer's "I can't reproduce this" is no failure; a user's "I can't import torch" is.

COMPLAINT_RE (stackpeel/explain/parser.py) read "I can't <any verb>" as a complaint, so a thread's
reply "I can't reproduce this on my machine" alone got "unknown" instead of silence. The verbs a
maintainer uses for what they cannot judge are now excluded; a step the user cannot take still
counts.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import complaint

PRE = "Loading model...\nstep 1/10 done\n"


def answer(line: str) -> str:
    expl = explain_text(PRE + line + "\n")
    if expl.candidates:
        return "ranked"
    return "unknown" if int(expl.exit_code) else "silent"


MAINTAINER = [
    "I can't reproduce this on my machine.",
    "We can't reproduce it on an A100 either, closing for now.",
    "I couldn't reproduce this with torch 2.4.",
    "I can't repro on my side",
    "I can't tell from this log what went wrong.",
    "I can't say for sure, but it looks fine here.",
    "I can't recall whether we tested that.",
    "I can\u2019t reproduce this one.",
]

# no complaint either, but another word on the line still speaks (a hang, "the issue", "a bug",
# an OS release): those readings are not COMPLAINT_RE's and are left as they are
MAINTAINER_OTHER_WORDS = [
    "I cannot reproduce the issue with the latest main.",
    "I could not replicate the hang.",
    "We cannot confirm this is a bug in our code.",
    "I am unable to reproduce this on Ubuntu 22.04.",
    "I was unable to reproduce it.",
]

USER = [
    "I can't import torch",
    "I can't use the GPU",
    "I cannot install flash-attn on Windows",
    "we can't load the model anymore",
    "I couldn't start the server after the upgrade",
    "I am unable to access the GPU from the container",
]


@pytest.mark.parametrize("line", MAINTAINER)
def test_a_maintainers_cannot_reproduce_is_no_complaint(line):
    assert not complaint(line)
    assert answer(line) == "silent"


@pytest.mark.parametrize("line", MAINTAINER_OTHER_WORDS)
def test_cannot_reproduce_with_other_words_is_no_complaint(line):
    assert not complaint(line)


@pytest.mark.parametrize("line", USER)
def test_a_step_the_user_cannot_take_is_still_a_complaint(line):
    assert complaint(line)
    assert answer(line) != "silent"
