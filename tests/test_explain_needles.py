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


# -- the needle index: which entries a line can match, found in one regex pass ---------------

def _lines_with_needles() -> List[str]:
    """Lines that hold needles: every signature's own test strings are not at hand here, so
    take each entry's needles themselves, side by side, overlapping and inside words, plus
    the negative controls' lines."""
    kb = load()
    needles = [n for e in kb.entries for n in e.needles]
    out = [f"x {n} y" for n in needles]
    out += [a + b for a, b in zip(needles, needles[1:])]          # one needle right after another
    out += [n[: len(n) // 2] + m for n, m in zip(needles, needles[3:])]  # a cut needle, then one
    for path in NEGATIVE:
        out += path.read_text(encoding="utf-8", errors="replace").split("\n")[:400]
    return out


def test_the_needle_index_finds_every_entry_whose_needle_a_line_holds():
    """KnowledgeBase.match_line tries only the entries the index names; it must name every
    entry one of whose needles the line holds (else a signature would silently stop matching)."""
    kb = load()
    index = kb._needle_index
    missed = []
    for line in _lines_with_needles():
        want = {i for i, e in enumerate(kb.entries) if any(n in line for n in e.needles)}
        got = set(index.hits(line))
        if want - got:
            missed.append((line[:80], sorted(kb.entries[i].id for i in want - got)))
    assert not missed, missed[:10]


def test_match_line_is_the_same_as_trying_every_entry():
    kb = load()
    for line in _lines_with_needles():
        assert kb.match_line(line) == [e for e in kb.entries if e.search(line)], line[:80]


def test_the_clue_index_finds_every_clue_literal_at_a_gate_hit():
    """KnowledgeBase.clues_at with the gate's matched text finds what a test of every clue
    literal at that position finds, and every clue literal is found in a line that holds it
    (``finditer`` missed a clue whose part starts inside another clue's part: "Shared GPU
    memory", cut to "PU memory", inside "GPU")."""
    kb = load()
    lits = sorted({c for cs in kb.clues.values() for c in cs})
    text = " | ".join(lits) + " | " + "".join(lits) + "\n"
    for pos, hit in kb.clue_hits(text):
        brute = {lit for lit in lits for off in (len(lit) - len(rare_start(lit, 3)),)
                 if pos >= off and text.startswith(lit, pos - off) and text.startswith(rare_start(lit, 3), pos)}
        assert set(kb.clues_at(text, pos, hit)) == brute, text[pos - 20:pos + 20]
    for lit in lits:
        alone = f"see {lit} here\n"
        assert lit in {c for pos, hit in kb.clue_hits(alone) for c in kb.clues_at(alone, pos, hit)}, lit
