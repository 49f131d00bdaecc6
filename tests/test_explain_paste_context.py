"""A refinement's context counts the log's own lines, not a paste's pieces (issue 8, paste
invariance): a line a terminal cut at its width or a word-wrapper broke is read with the pieces
that continue it, in the window before and after a hit and joined back in the text a refine
reads; a short paste whose longest lines are exactly a terminal's width (80, 120) is read as cut
there even with one or two such lines. The messages are torch's own (torch/__init__.py
_load_dll_libraries, c10/cuda/CUDAException.h)."""

from __future__ import annotations

import textwrap

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import hard_wrap_cuts, scan_text

DLL = ('02:54:18-197331 ERROR    Could not load torch: [WinError 126] The specified module could not be found. '
       'Error loading\n'
       '                         "C:\\AI\\kohya_ss\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of '
       'its dependencies.\n')
NO_KERNEL = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
             "\n"
             "> I have the same issue. Same nvcc/driver both 11.7 When running: `python -m "
             "vllm.entrypoints.openai.api_server --model meta-llama/Llama-2-7b-chat-hf` This solution works for me.\n")


def hard_wrap(body: str, width: int = 80) -> str:
    """A terminal's cut at ``width`` columns, inside words (bench/explain_invariance.py)."""
    return "\n".join(piece for line in body.split("\n")
                     for piece in ([line[i:i + width] for i in range(0, len(line), width)] or [""]))


def soft_wrap(body: str, width: int = 80) -> str:
    """Re-wrapped at word boundaries, indentation kept (bench/explain_invariance.py)."""
    out = []
    for line in body.split("\n"):
        indent = line[:len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False) or [""])
    return "\n".join(out)


def first(text: str):
    cands = explain_text(text).candidates
    return cands[0].code if cands else None


def test_the_dll_refinement_reads_the_winerror_of_a_line_a_terminal_cut():
    """WinError 126 on a CPU-side DLL of torch\\lib is the Visual C++ runtime: the refine reads the
    error number and the DLL on one line, which the 80-column cut split into four pieces."""
    assert first(DLL) == "msvc-runtime-missing"
    wrapped = hard_wrap(DLL)
    assert max(len(ln) for ln in wrapped.split("\n")) == 80
    assert first(wrapped) == "msvc-runtime-missing"


def test_the_window_after_a_hit_holds_the_whole_next_line_of_a_rewrapped_paste():
    """vllm's extension named on the line after the blank one: re-wrapped at 80 columns, that
    line's name is on its second piece, past two physical lines."""
    assert first(NO_KERNEL) == "extension-arch-missing"
    assert first(soft_wrap(NO_KERNEL)) == "extension-arch-missing"


def test_the_context_joins_a_wrapped_lines_pieces():
    hit = [h for h in scan_text(soft_wrap(NO_KERNEL)).hits if h.entry == "no-kernel-image"][0]
    assert "`python -m vllm.entrypoints.openai.api_server" in hit.context
    # a log that was not wrapped keeps its lines
    hit = [h for h in scan_text(NO_KERNEL).hits if h.entry == "no-kernel-image"][0]
    assert hit.context.startswith(NO_KERNEL.split("\n")[0] + "\n\nI have the same issue")  # (the quote mark read off)


@pytest.mark.parametrize("width, cut", [(80, True), (120, True), (200, False), (97, False)])
def test_one_line_of_a_terminals_width_is_a_cut_only_at_a_terminals_width(width, cut):
    """A collector that truncates at 200 characters, or a line that happens to be the longest,
    is no terminal's cut; 80 and 120 columns are."""
    lines = ["x" * 20, "RuntimeError: " + "a" * (width - 14), "rest of it", "short"]
    assert (hard_wrap_cuts(lines) == {1}) is cut
    assert hard_wrap_cuts(lines, strong=True) == set()


#: vLLM's check (vllm/worker/worker.py _check_if_gpu_supports_dtype), retyped in lower case as
#: a user's title does, then cut by an 80-column terminal inside "least"
RETYPED = ("valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. "
           "your tesla v100-sxm2-32gb gpu has compute capability 7.0.\n")


def test_a_retyped_message_cut_by_a_terminal_is_read_whatever_its_case():
    assert first(RETYPED) == "gpu-arch-lacks-dtype"
    assert first(hard_wrap(RETYPED)) == "gpu-arch-lacks-dtype"


#: one launcher error printed three times (its source line aside), re-wrapped at word boundaries:
#: three lines of one width and none near it, which a terminal's wrap also shows
REPEATED = "".join(f"[error][simple_yolo.cu:{n}]:launch failed: no kernel image is available for execution "
                   "on the device\n" for n in (556, 450, 454))


def test_a_repeated_record_rewrapped_at_word_boundaries_is_not_glued():
    wrapped = soft_wrap(REPEATED)
    assert "available for\nexecution" in wrapped
    assert hard_wrap_cuts(wrapped.split("\n"), strong=True) == set()
    assert first(wrapped) == first(REPEATED) == "extension-arch-missing"


#: a user's sentence (pytorch#168065) that states the CPU build, re-wrapped before its last words
SAID = "Hi, noticing that trying to `pip install torch` resulted in the CPU version of torch stable.\n"


def test_a_users_sentence_a_paste_wrapped_is_judged_whole():
    """The sentence names the failure only with its last words ('... version of torch'): the hit
    keeps the whole line, pieces joined (``Hit.whole``), for judging it."""
    assert first(SAID) == "torch-cpu-only-build"
    wrapped = soft_wrap(SAID)
    assert wrapped.split("\n")[1] == "torch stable."
    assert first(wrapped) == "torch-cpu-only-build"
    (hit,) = scan_text(wrapped).hits
    assert hit.whole == SAID.strip() and hit.line.text != hit.whole
