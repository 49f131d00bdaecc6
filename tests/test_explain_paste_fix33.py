"""fix33 item 3: paste invariance. An unexplained error line a terminal cut at 80 columns is
reported whole (the words a guess reads), once for its pieces (bench/explain_invariance.py's wrap80;
docs/dev/fix33.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from stackpeel.explain import explain_text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from explain_invariance import _hard_wrap  # noqa: E402


def _body(name: str) -> str:
    return (ROOT / "tests" / "corpus" / "explain" / name).read_text(encoding="utf-8").split("# ---\n", 1)[1]


def test_a_users_error_sentence_cut_at_80_columns_is_reported_whole():
    # kijai/ComfyUI-WanVideoWrapper#875: '... because some of the packages are not loaded (Triton)',
    # cut by the terminal after 'not l': the word that names the cause is on the piece
    wrapped = _hard_wrap(80)(_body("comfyui-wanvideowrapper-875-sampler-triton-broken.log"))
    expl = explain_text(wrapped)
    texts = [u.text for u in expl.unexplained]
    cut = [t for t in texts if t.startswith("Basically the proocess cannot be initiated")]
    assert cut and cut[0].endswith("oaded (Triton)")
    # the piece is no line of its own
    assert not any(t.startswith("oaded") for t in texts)
    assert [c.code for c in expl.candidates][:1] == ["triton-not-installed"]


def test_a_programs_error_line_cut_at_80_columns_is_reported_whole():
    line = "RuntimeError: the worker pool could not start, resource temporarily unavailable: (worker 3 of 8, pool 0)"
    # (cut after the colon: no letters meet at the cut, the pieces are glued as the terminal split them)
    lines = [u.text for u in explain_text(line[:80] + "\n" + line[80:] + "\n").unexplained]
    assert lines == [line]


def test_two_error_lines_that_merely_look_cut_stay_two():
    line = "RuntimeError: the worker pool could not start, resource temporarily unavailable: (fork failed, errno 11)"
    lines = [u.text for u in explain_text(line[:80] + "\n" + line[80:] + "\n").unexplained]
    assert lines == [line[:80], line[80:].strip()]
