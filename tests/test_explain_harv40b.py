"""harv40b: an unbiased harvest of crashes without a Python traceback (segmentation faults, SIGILL,
aborts, two OpenMP runtimes), scored blind, and the general fixes its misses ask for
(docs/dev/harv40b.md).

Twenty new training-side logs; explain named eight first before any change. The fixed misses:
- zsh's job report of a crashed job, ``[1]    10389 segmentation fault  python`` (zsh words the
  signal in lower case, Src/signames2.awk; facebookresearch/faiss#4273): now an error line and a
  word of a native crash, as ``zsh: segmentation fault`` already was (B);
- a reporter's statement that the crash follows the order of two imports (``A segmentation fault
  occurs when you import `materialize_dataset` before `torch```, ``Switching the order of the
  imports works around the issue.``, ``Importing tensorflow before torch seems fine as well.``):
  ``said-library-loaded-twice``, and clues of the same words (A3);
- SIGILL retold in a reporter's lower case (``failed with an illegal instruction``, the title
  ``Raspberry Pi illegal Instruction pytorch 2.4``): ``sigill-illegal-instruction-retold`` for
  ``cpu-instruction-set-unsupported``, which a known-bad combination read from the prose
  (torchvision 0.18.1 of the downgrade beside the title's torch 2.4) no longer outranks (A2).
Near-misses keep their reading: CUDA's GPU-side 'an illegal instruction was encountered', zsh's
other job lines, a question or a condition about the import order, an import order with no crash.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# bash's SIGILL report retold by a reporter (ultralytics/ultralytics#15835, numpy/numpy#18175)
RETOLD_ULTRALYTICS = ("My detection program that is running on two other Pis failed with an illegal instruction. "
                      "My other Pis are running pytorch 2.3.1")
RETOLD_NUMPY = ("Installing numpy 1.19.5 works but importing it gives illegal instruction error. "
                "This problem is not present if I instead install python 1.18.")

FAMILIES = {
    "cpu-instruction-set-unsupported": [RETOLD_ULTRALYTICS, RETOLD_NUMPY],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def _root(text):
    expl = explain_text(text if text.endswith("\n") else text + "\n")
    return expl.root.code if expl.root else None, expl


# -- zsh's job report (B)

def test_zsh_job_report_segfault_is_a_crash_line():
    # facebookresearch/faiss#4273, the reporter's paste (zsh with a job number and pid)
    text = ("import faiss\nimport torch\ntorch.arange(0, 32_769)\n"
            "[1]    10389 segmentation fault  python\n")
    expl = explain_text(text)
    assert expl.exit_code == 1
    assert expl.candidates, "a crashed job must not be silent"
    assert "native-crash-in-gpu-library" in [c.code for c in expl.candidates]


def test_zsh_job_report_with_plus_and_core_dump():
    expl = explain_text("[2]  + 4242 segmentation fault (core dumped)  python train.py\n")
    assert expl.exit_code == 1 and expl.candidates


def test_zsh_job_report_of_a_healthy_job_is_no_crash():
    # zsh's report of a job that ended well or was stopped says nothing of a crash
    for line in ("[1]  + 10389 done       python train.py", "[1]  + 10389 suspended  python train.py",
                 "[3]    777 running    python serve.py"):
        expl = explain_text(line + "\n")
        assert "native-crash-in-gpu-library" not in [c.code for c in expl.candidates], line


# -- the order of two imports, in the reporter's words (A3)

def test_petastorm_410_when_you_import_before_torch():
    # uber/petastorm#410, the reporter's paste
    text = (
        "Segmentation fault with materialize_dataset and torch\n\n"
        "A segmentation fault occurs when you import `materialize_dataset` before `torch`. It happens inside an "
        "`ubuntu:16.04` Docker container but not natively on MacOS.\n\n"
        "```\nfrom petastorm.etl.dataset_metadata import materialize_dataset\nimport torch\n```\n"
    )
    assert _codes(text)[:1] == ["library-loaded-twice"]
    assert "said-library-loaded-twice" in _ids(
        "A segmentation fault occurs when you import `materialize_dataset` before `torch`.")


def test_faiss_4273_switching_the_order_works_around():
    text = (
        "segmentation fault in torch if faiss is imported before torch\n\n"
        "```\nimport faiss\nimport torch\ntorch.arange(0, 32_769)\n[1]    10389 segmentation fault  python\n```\n"
        "Note that it only happens for arrays of size 32_769 and more. Switching the order of the imports works "
        "around the issue.\n"
    )
    assert _codes(text)[:1] == ["library-loaded-twice"]


def test_tensorflow_14812_importing_first_seems_fine():
    text = (
        "This fails:\n```python\n>>> import torch\n>>> import tensorflow as tf\nSegmentation fault (core dumped)\n```\n"
        "When I use tensorflow alone, it works fine. Also, Importing tensorflow before torch seems fine as well.\n"
    )
    assert _codes(text)[:1] == ["library-loaded-twice"]


def test_import_first_solved_it_statement():
    for sentence in ("Importing open3d before torch solved it.", "import cv2 before torch fixes the crash",
                     "Swapping the order of the imports fixed it.",
                     "The process crashes when I import decord before torch"):
        assert "said-library-loaded-twice" in _ids(sentence), sentence


def test_import_order_questions_and_conditions_state_nothing():
    # a question, a guess or a condition is no statement (explain/knowledge.py SAID_NOT_STATED_RE)
    for sentence in ("Does it crash when you import faiss before torch?",
                     "Maybe switching the order of the imports fixes it",
                     "If `faiss` is imported before `torch`, it can cause segfaults."):
        root, _ = _root("Segmentation fault (core dumped)\n" + sentence)
        assert root != "library-loaded-twice" or "said-library-loaded-twice" not in _ids(sentence), sentence


def test_import_order_without_a_crash_names_nothing():
    # the words alone, in a log that shows no failure, name no cause
    expl = explain_text("Importing tensorflow before torch seems fine as well.\nTraining finished.\n")
    assert expl.root is None or expl.root.code != "library-loaded-twice"


def test_import_statement_without_order_does_not_match():
    for sentence in ("import torch before running the script", "Importing the dataset takes two minutes",
                     "when you import torch the CUDA context is created lazily"):
        assert "said-library-loaded-twice" not in _ids(sentence), sentence


def test_clue_reorders_a_bare_segfault_guess():
    # a bare crash plus the reporter's 'imported before': the guess from words puts the duplicate
    # library first (its clue), not libstdc++ or the GPU-library symptom
    text = ("import vaex\nimport torch\nSegmentation fault (core dumped)\n"
            "It only crashes when torch is imported after vaex; torch imported first is fine.\n")
    assert _codes(text)[:1] == ["library-loaded-twice"]


# -- SIGILL retold in lower case (A2)

def test_ultralytics_15835_retold_sigill_beats_the_prose_combination():
    # ultralytics/ultralytics#15835: the versions of the downgrade command (torchvision 0.18.1) beside
    # the title's torch 2.4 read as a known-bad combination; the retold SIGILL is the failure
    text = (
        "Raspberry Pi illegal Instruction pytorch 2.4\n\n### Bug\n\n"
        "I created a fresh install of bookworm and then installed ultralytics with pip install ultralytics . "
        "It installed pytorch 2.4\n\n" + RETOLD_ULTRALYTICS + "\n\n"
        "I got to work by going back with pip install torch==2.3.1 torchvision==0.18.1 \n\n"
        "CPU                 Cortex-A72\n"
    )
    assert _codes(text)[:1] == ["cpu-instruction-set-unsupported"]


def test_retold_sigill_signature_id():
    assert "sigill-illegal-instruction-retold" in _ids("it crashed illegal instruction, and I checked (lscpu)")
    assert "sigill-illegal-instruction-retold" in _ids("Raspberry Pi illegal Instruction pytorch 2.4")


def test_cuda_illegal_instruction_is_not_the_cpu():
    # CUDA's GPU-side fault (cudaErrorIllegalInstruction) and its retellings stay out
    for line in ("RuntimeError: CUDA error: an illegal instruction was encountered",
                 "CUDA error: an illegal instruction was encountered",
                 'It is something like "CUDA illegal instructions", "Unknwon CU result: 700".',
                 "cuda illegal instruction in kernel"):
        assert "sigill-illegal-instruction-retold" not in _ids(line), line
        assert "cpu-instruction-set-unsupported" not in _codes(line + "\n")[:1], line


def test_retold_sigill_with_core_dump_matches():
    # the reporter's lower-case copy of bash's report, with its core dump
    assert "sigill-illegal-instruction-retold" in _ids("i also getting   illegal instruction core dumped.")
    assert "sigill-illegal-instruction-retold" in _ids("the following errors occur:illegal instruction (core dumped).")


def test_retold_sigill_in_other_words_does_not_match():
    for line in ("illegal instructions in the PTX listing", "the illegal-instruction handler ran",
                 "cudaGetLastError: illegal instruction (715)"):
        assert "sigill-illegal-instruction-retold" not in _ids(line), line
