"""A failure told in words, with no error line, gets ranked causes (issue 8, item 3; quiet20).

Two shapes of a failure that no program's line shows: a GPU stack that works only on the CPU
(the user's "no CUDA support", "0 VRAM", "inference runs on cpu", or TensorFlow's device list
that holds only the CPU) and a build that never ends ("always building", "takes forever").
parser.COMPLAINT_RE makes such a line a possible failure; a ``said`` symptom signature reads it
and ranks its causes. Real wording from training threads; wrapped, quoted and prefixed variants;
healthy near-misses that must stay quiet.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import stated
from stackpeel.explain.parser import complaint

from ranking import ranked


# (told line, the code that must come first, a code the ranked list must also hold or None)
TOLD = [
    # transformerlab/transformerlab-app#1330 (training): the +cpu build named beside the words
    ("On a DGX Spark (NVIDIA GB10), the installer detects the NVIDIA GPU and installs CUDA 12.8.1, but when "
     "starting the app the runtime reports **PyTorch `2.9.1+cpu`**, and the web UI shows **no CUDA support** "
     "and **0 VRAM**.", "torch-cpu-only-build", "torch-cuda-unavailable"),
    # the same words without the +cpu clue: the symptom, with its causes ranked
    ("The web UI shows no CUDA support and 0 VRAM on my RTX 4090.", "torch-cuda-unavailable", "torch-cpu-only-build"),
    ("It only uses the CPU, the GPU stays idle.", "torch-cuda-unavailable", "torch-cpu-only-build"),
    # tensorflow/tensorflow#38090 (training): tf.config.list_physical_devices(None) printed only the CPU
    ("`[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]`", "library-missing", "framework-cpu-only-build"),
    # Wan-Video/Wan2.1#38 (training): a question still tells the symptom
    ("flash_attn is always building , what's the matter?", "extension-source-build-slow", "ninja-missing"),
    ("Building wheel for flash-attn takes forever on my machine.", "extension-source-build-slow", None),
    ("pip install flash-attn is still compiling after three hours", "extension-source-build-slow", None),
    # vladmandic/sdnext#409 (training): a title without its subject, and the +cpu build beside it
    ("does not detect GPU, generates on CPU. System Info says \"2.0.0+cpu Autocast half\".",
     "torch-cpu-only-build", "torch-cuda-unavailable"),
    ("ComfyUI doesn't recognize my GPU anymore.", None, "torch-cuda-unavailable"),
]

WRAPS = {
    "plain": lambda s: s,
    "quoted": lambda s: "> " + s,
    "bullet": lambda s: "- " + s,
    "rank": lambda s: "[rank0]: " + s,
    "timestamped": lambda s: "2024-05-01T12:00:00.000000000Z stdout F " + s,
    "in a description": lambda s: "### Describe the bug\n\n" + s + "\n\n### System Info\n\n- OS: Ubuntu 22.04\n",
}


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("line, first, also", TOLD, ids=[f"told-{i}" for i in range(len(TOLD))])
def test_a_told_failure_gets_ranked_causes(line, first, also, wrap):
    expl = explain_text(WRAPS[wrap](line) + "\n")
    codes = ranked(expl)
    assert expl.exit_code != 0, codes
    assert codes and (first is None or codes[0] == first), codes
    if also:
        assert also in codes, codes


def test_a_wrapped_told_line_is_read_whole():
    # a terminal's cut in the middle of the sentence: the halves are re-joined
    expl = explain_text("The web UI shows no CUDA support and 0\nVRAM on my RTX 4090.\n")
    assert ranked(expl)[:1] == ["torch-cuda-unavailable"], ranked(expl)


def test_the_symptom_is_no_cause_where_a_program_shows_the_failure():
    # a program's own line tells more than the user's summary of it
    expl = explain_text("flash_attn is always building\n"
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n")
    assert "extension-source-build-slow" not in [c.code for c in expl.candidates]
    assert expl.candidates and expl.candidates[0].code != "extension-source-build-slow"


# healthy lines with the same words (a CPU machine, a benchmark, a build summary, a changelog, a
# device list with a GPU, a finished build): no complaint, and explain stays quiet
HEALTHY = [
    "Built with no CUDA support",
    "-- CUDA support: no",
    "llama.cpp: no CUDA support compiled in",
    "Benchmark: training runs on CPU: 3.2 s",
    "CPU: 0.1 s",
    "Running on CPU: 0.12 s per step",
    "Device set to use cpu",
    "Fixed a crash when the model runs on CPU",
    "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'), "
    "PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]",
    "Building wheel for flash-attn (setup.py) ... done",
    "The build took 2 hours on 8 cores and passed all tests.",
    "Installing collected packages: ninja, flash-attn",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_a_healthy_line_with_the_words_stays_quiet(line):
    assert not complaint(line)
    expl = explain_text("epoch 1 done\n" + line + "\nepoch 2 done\n")
    assert expl.exit_code == 0 and not expl.candidates, ranked(expl)


def test_a_symptom_told_as_a_question_counts_a_cause_asked_about_does_not():
    line = "flash_attn is always building , what's the matter?"
    i = line.index("always")
    assert stated(line, i, i + 6, told=True)
    assert not stated(line, i, i + 6)  # a statement of a CAUSE in a question states nothing
    asked = "Is the GPU not detected?"
    assert not stated(asked, 4, 20, told=True)
    because = "The GPU is not detected because of the driver?"
    assert not stated(because, 4, 20, told=True)
    guess = "Maybe it is always building because ninja is missing"
    assert not stated(guess, 11, 26, told=True)
    advice = "If it keeps building for hours, install ninja first"
    assert not stated(advice, 6, 20, told=True)
    # a title that drops its subject states; the same words asked do not
    assert stated("Does not detect GPU", 0, 19, told=True)
    assert stated("Is not working on the RTX 4090", 0, 14, told=True)
    assert not stated("Does it not detect the GPU?", 0, 26, told=True)
    assert not stated("Why not use the GPU", 0, 19)


# a failure the user points at, whose message the paste lost (training threads: icra2024-sim2real#5
# "it shows the error:", VLM-R1#289 "this bug appears", mmskeleton#30 "I recieved this error:"):
# a possible failure, listed, so explain is not silent
POINTED = [
    "Whenever I run the pytorch with cuda in the baseline docker, it shows the error:",
    "I have started a training process, and I also want to start another training process, but this bug appears.",
    "  but I recieved this error:",
    "> I get the following error when I run the demo",
    # etarkangaroo#4, lincir#22, flexflow#263, colabtools#4425 (training): told, no message
    "I try with 56,128 84,256 or 84,128 or 56,256 GTX 1080 Ti . still not work, looking for your help.",
    "When I try to python demo.py,I can't run it normally.But",
    "The make process errored when building NVCC objects at 47%.",
    "\u043d\u0435 \u0437\u0430\u0433\u0440\u0443\u0436\u0430\u0435\u0442\u0441\u044f",
    # what a user sees of a failure no program reports (session 25)
    "Nothing happens after I click Generate, the console stays empty.",
    "After 200 steps the loss becomes NaN on the A100 but not on the 3090.",
    "The model generates gibberish on the GPU but is fine on the CPU.",
    "GPU utilization stays at 0% during training.",
]


@pytest.mark.parametrize("line", POINTED)
def test_a_pointed_at_error_is_a_possible_failure(line):
    assert complaint(line)
    expl = explain_text("### Describe the bug\n\n" + line + "\n\n### System Info\n- OS: Ubuntu 22.04\n")
    assert expl.exit_code != 0 and (expl.candidates or expl.unexplained), expl.exit_code


@pytest.mark.parametrize("line", [
    "We get the error rate down to 3%",
    "It fixes the error when loading the tokenizer",
    "Now I no longer get the error",
    "Added error handling for the loader",
    "It works, and it does not stop the other jobs",
    "You can run it normally with python demo.py",
    # the same words as a condition, a metric, a table's idle GPU
    "If the loss is NaN, the step is skipped and the scaler lowers the scale.",
    "when loss becomes nan we lower the learning rate",
    "step 10 loss 2.31 grad_norm 0.98",
    "GPU utilization: 0% (idle before the run)",
    "Nothing happened to the cache; reused 12 entries",
    "Checking that the loss is NaN-free: ok",
    "Sanity check passed: the model does not produce gibberish",
])
def test_an_error_word_that_points_at_no_failure_is_no_complaint(line):
    # (the bare word "error" is parser.WORD_ERROR_RE's to judge, as before; the pointing shape
    # adds no reading of such a line)
    assert not complaint(line)
