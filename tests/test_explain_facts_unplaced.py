"""A failure nothing places, joined with a fact the log proves on its own (ctx22, issue 8 item 3;
docs/dev/ctx22.md).

When a log fails (an error line, an exception, a traceback cut before its message) and no
signature, clue or word of the vocabulary says in which layer, a finding the log's facts hold in
full is the likeliest cause on offer: it becomes a candidate of medium confidence instead of a
note (``facts.UNPLACED``, ``facts._grade``). Before, such a log was answered *Unknown error*
with the finding only as a note. A known-bad combination whose ``explains`` names a root cause
is named by that cause when no line names another of its codes (``triton-pre-volta``:
``triton-gpu-too-old``).

Each case: the failure with the fact (the specific code first, as pasted, with a rank prefix and
quoted); the same failure without the fact (the old answer: no such candidate); the fact without
a failure (a note, no candidate); and a near miss (a partial combination, a failure a word
places elsewhere).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text as _explain_text
from stackpeel.explain.similar import leaving_out

#: the two training threads whose logs these shapes come from: left out, so a resemblance guess
#: from their own exemplars does not stand in for the rule (as the accuracy bench does)
THREADS = ("https://github.com/ultralytics/ultralytics/issues/227",
           "https://github.com/unslothai/unsloth/issues/1998")


def explain_text(text: str):
    with leaving_out(*THREADS):
        return _explain_text(text)

# CPython argparse: parser.error(_('unrecognized arguments: %s')) prints "<prog>: error: ..."
ARGPARSE = "train.py: error: unrecognized arguments: --device 0"
# torch/version.py of a CPU wheel: __version__ = '1.13.1+cpu'; pip list's row of it
CPU_TORCH = "torch                    1.13.1+cpu"
# nvidia-smi's header (the driver and the CUDA it supports)
SMI = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |"
# unsloth's start-up banner (unsloth/models/_utils.py / llama.py: gpu_stats.name, torch.__version__,
# the capability as "CUDA: major.minor", torch.version.cuda, triton's __version__)
UNSLOTH = ("==((====))==  Unsloth 2025.3.9: Fast Qwen2 patching. Transformers: 4.49.0. vLLM: 0.7.3.\n"
           "   \\\\   /|    NVIDIA GeForce GTX 1070. Num GPUs = 1. Max memory: 7.909 GB. Platform: Linux.\n"
           "O^O/ \\_/ \\    Torch: 2.5.1+cu124. CUDA: 6.1. CUDA Toolkit: 12.4. Triton: 3.1.0")
UNSLOTH_NO_GPU = ("==((====))==  Unsloth 2025.3.9: Fast Qwen2 patching. Transformers: 4.49.0. vLLM: 0.7.3.\n"
                  "O^O/ \\_/ \\    Torch: 2.5.1+cu124. CUDA Toolkit: 12.4. Triton: 3.1.0")
# a traceback cut before its exception line (a paste that stops early)
CUT_TRACEBACK = ("Traceback (most recent call last):\n"
                 '  File "/home/u/train.py", line 19, in <module>\n'
                 "    model, tokenizer = FastLanguageModel.from_pretrained(\n"
                 '  File "/home/u/venv/lib/python3.12/site-packages/unsloth/models/loader.py", line 308, in from_pretrained\n'
                 "    model, tokenizer = dispatch_model.from_pretrained(")

WRAPS = {
    "bare": lambda t: t,
    "rank": lambda t: "\n".join(f"[rank0]: {x}" for x in t.splitlines()),
    "quoted": lambda t: "\n".join(f"> {x}" for x in t.splitlines()),
}


def _first(text: str):
    expl = explain_text(text)
    return expl.candidates[0] if expl.candidates else None


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_cpu_torch_beside_a_driver_names_an_unplaced_failure(wrap):
    top = _first(WRAPS[wrap](f"{ARGPARSE}\nCUDA is not used\n{SMI}\n{CPU_TORCH}"))
    assert top is not None and top.code == "torch-cpu-only-build"
    assert top.confidence == "medium" and top.basis == "facts"


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_gpu_below_triton_names_a_cut_traceback(wrap):
    top = _first(WRAPS[wrap](f"{UNSLOTH}\n{CUT_TRACEBACK}"))
    assert top is not None and top.code == "triton-gpu-too-old"
    assert top.confidence == "medium" and top.basis == "combination"


def test_without_the_fact_the_failure_keeps_its_old_answer():
    for text in (ARGPARSE, f"{ARGPARSE}\n{SMI}", CUT_TRACEBACK, f"{UNSLOTH_NO_GPU}\n{CUT_TRACEBACK}"):
        codes = [c.code for c in explain_text(text).candidates]
        assert "torch-cpu-only-build" not in codes and "triton-gpu-too-old" not in codes, text


def test_the_fact_without_a_failure_is_a_note_only():
    for text in (f"{SMI}\n{CPU_TORCH}", UNSLOTH):
        expl = explain_text(text)
        assert not expl.candidates, text
        assert [f for f in expl.fact_findings if f.confidence == "context"], text


def test_a_cpu_torch_with_no_gpu_shown_names_nothing():
    # a CPU wheel on a machine that shows no NVIDIA GPU or driver is no fault (the state rule
    # needs the GPU), however the log fails
    codes = [c.code for c in explain_text(f"{ARGPARSE}\n{CPU_TORCH}").candidates]
    assert "torch-cpu-only-build" not in codes


def test_a_failure_a_word_places_elsewhere_keeps_its_layer():
    # "Killed" is the vocabulary's word for the host's OOM killer: the failure is placed (in the
    # system layer), and a Pascal GPU beside Triton breaks nothing there
    codes = [c.code for c in explain_text(f"{UNSLOTH}\nKilled").candidates]
    assert codes and codes[0] != "triton-gpu-too-old"


def test_a_partial_combination_stays_out():
    # Triton's version without the GPU (or the GPU without Triton) is half the combination:
    # nothing to name, whatever the failure
    for text in (f"{UNSLOTH_NO_GPU}\n{CUT_TRACEBACK}",
                 f"NVIDIA GeForce GTX 1070. Num GPUs = 1.\n{CUT_TRACEBACK}"):
        assert "triton-gpu-too-old" not in [c.code for c in explain_text(text).candidates], text


def test_triton_pre_volta_names_its_root():
    from stackpeel import combinations
    from stackpeel.codes import all_codes
    e = next(x for x in combinations.load() if x.id == "triton-pre-volta")
    assert e.explains[0] == "triton-gpu-too-old"
    assert all_codes()["triton-gpu-too-old"].kind == "root"
