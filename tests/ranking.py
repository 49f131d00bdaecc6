"""The accuracy bench's ranking rule, shared by the tests that assert on a ranking.

``bench/explain_accuracy.py`` scores a log by explain's candidates in order, each followed by the
causes it says it could be (``could_be``); a test that restated the rule could drift from what the
figures measure, so the tests import it from the bench.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    from explain_accuracy import ranking  # noqa: E402  (the one rule)
finally:
    sys.path.pop(0)

from stackpeel.explain.render import render  # noqa: E402

__all__ = ["ranking", "ranked"]


def ranked(expl) -> List[str]:
    """The ranking of an explanation, read from its JSON report as the bench reads it."""
    return ranking(json.loads(render(expl, "json")))
