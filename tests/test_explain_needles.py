"""The scanner's prefilter stays selective (explain/knowledge.py ``needles_of``, ``rare_start``).

Every log line is searched once for the literals of all signatures (the entry gate); a line that
holds one runs every signature. A literal that is a common word of healthy logs (`` is `` of a
sentence, ``100%`` of a tqdm bar, ``", line `` of every traceback frame) makes that happen on
most lines: three such needles made explain 2.5 times slower on a 10 MB training log
(bench/results/explain_bench-2026-12-02-needles.txt: 4.5 s of CPU before they were fixed, 1.8 s
after). These tests
hold every gate literal to a budget on healthy text, and pin how a needle is chosen.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set

import pytest

from stackpeel.explain.knowledge import MAX_NEEDLE_SET, load, needles_of, rare_start

ROOT = Path(__file__).resolve().parent.parent
NEGATIVE = sorted((ROOT / "tests" / "corpus" / "negative").glob("*.log"))
#: share of lines of healthy text a gate literal may occur on
BUDGET_NOISE = 0.01      # the bench's generated training log (tqdm bars, INFO lines, tracebacks)
BUDGET_HEALTHY = 0.05    # the negative controls (pip output, builds, CPU training, NCCL INFO)


def _lines(text: str) -> List[str]:
    return text.split("\n")


@pytest.fixture(scope="module")
def cuts() -> Dict[str, Set[str]]:
    """gate literal -> the signatures whose needle it stands for"""
    out: Dict[str, Set[str]] = defaultdict(set)
    for e in load().entries:
        for n in e.needles:
            out[rare_start(n)].add(e.id)
    return out


@pytest.fixture(scope="module")
def noise(tmp_path_factory) -> List[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from explain_bench import make_log
    finally:
        sys.path.pop(0)
    path = tmp_path_factory.mktemp("noise") / "train.log"
    make_log(str(path), 1.0)
    return _lines(path.read_text(encoding="utf-8", errors="replace"))


def _over(cuts: Dict[str, Set[str]], lines: List[str], budget: float) -> List[str]:
    limit = budget * len(lines)
    return [f"{c!r} ({sum(c in ln for ln in lines)} of {len(lines)} lines; {', '.join(sorted(ids))})"
            for c, ids in cuts.items() if sum(c in ln for ln in lines) > limit]


def test_no_gate_literal_is_common_in_a_training_log(cuts, noise):
    assert not _over(cuts, noise, BUDGET_NOISE), "make these signatures' literals rarer (see needles_of)"


def test_no_gate_literal_is_common_in_healthy_logs(cuts):
    lines = [ln for p in NEGATIVE for ln in _lines(p.read_text(encoding="utf-8", errors="replace"))]
    assert len(lines) > 500
    assert not _over(cuts, lines, BUDGET_HEALTHY), "make these signatures' literals rarer (see needles_of)"


@pytest.mark.parametrize("pattern, needles", [
    # a run of literals and groups of literal alternatives: their products (a bare " is " before)
    (r"\b(?:the|my) (?:GPU|gpu) is (?:at )?0 ?%", ["the GPU is ", "the gpu is ", "my GPU is ", "my gpu is "]),
    (r"KeyError: '(?:RANK|WORLD_SIZE)'", ["KeyError: 'RANK'", "KeyError: 'WORLD_SIZE'"]),
    # a group that is not all literal ends the run; the longest literal is kept
    (r"CUDA error: no kernel image(?: is)? available", ["CUDA error: no kernel image"]),
    # a top-level alternation: one set per branch
    (r"(?:foo|bar)bazq|quuxes", ["foobazq", "barbazq", "quuxes"]),
    # of two literals of one length, the rarer by character (a digit run with '%' is common)
    (r"\b(?:hang|hung|stuck)\b[^\n]{0,80}\b100%", ["hang", "hung", "stuck"]),
])
def test_needles_of(pattern, needles):
    assert needles_of(pattern) == needles


def test_a_product_too_large_keeps_the_part_of_the_run_that_fits():
    alts = "|".join(f"w{i:02d}" for i in range(MAX_NEEDLE_SET + 1))
    got = needles_of(rf"(?:{alts}) tail-literal")
    assert got == [" tail-literal"]


@pytest.mark.parametrize("pattern, line", [
    (r"\b(?:the|my) (?:GPU|gpu) is (?:at )?0 ?%", "and my gpu is at 0% the whole time"),
    (r"KeyError: '(?:RANK|WORLD_SIZE)'", "KeyError: 'WORLD_SIZE'"),
    (r"\b(?:hang|hung|stuck)\b[^\n]{0,80}\b100%", "training hung, GPU util 100%"),
])
def test_every_match_holds_a_needle(pattern, line):
    import re
    m = re.search(pattern, line)
    assert m and any(n in m.group(0) for n in needles_of(pattern))
