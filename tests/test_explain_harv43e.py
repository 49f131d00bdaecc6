"""harv43e: an unbiased harvest of video generation and world-model stacks (Wan, HunyuanVideo,
CogVideoX, Open-Sora, FramePack and their ComfyUI wrappers) and the attention kernels they pull in
(SageAttention, flash-attn, xformers), scored blind, and the general fixes its misses ask for
(docs/dev/harv43e.md).

Nine new training-side logs; explain named six first before any change. The fixed misses:
- diffusers' and transformers' lazy package module (``_LazyModule.__getattr__``) raises
  ``module diffusers has no attribute AutoencoderKLWan`` for a class the installed release does
  not export: the caller was written for another release (A1, ostris/ai-toolkit#266: a diffusers
  older than the Wan classes); now ``dependency-version-mismatch`` (a catch-all: another
  signature in the log comes first);
- SageAttention's compiled modules (``_fused``, ``_qattn_sm80/_sm89/_sm90``) failing on Windows
  with ``DLL load failed while importing _fused: The specified procedure could not be found``: a
  torch symbol the wheel was linked against is missing from the installed torch (C1, first only
  in third place by resemblance, woct0rdho/SageAttention#71: a torch 2.9 wheel on a torch 2.11
  nightly); now ``extension-torch-mismatch``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# huggingface/diffusers src/diffusers/utils/import_utils.py _LazyModule.__getattr__
# (raise AttributeError(f"module {self.__name__} has no attribute {name}")); Python 3.10+ adds the suggestion
DIFFUSERS_LAZY = "AttributeError: module diffusers has no attribute AutoencoderKLWan. Did you mean: 'AutoencoderKL'?"
DIFFUSERS_LAZY_SUB = "AttributeError: module diffusers.models has no attribute CogVideoXTransformer3DModel"
# huggingface/transformers src/transformers/utils/import_utils.py _LazyModule.__getattr__, the same wording
TRANSFORMERS_LAZY = "AttributeError: module transformers has no attribute AdamW"
# CPython Python/dynload_win.c for sageattention._fused / _qattn_sm89 (thu-ml/SageAttention setup.py)
SAGE_FUSED_PROC = "ImportError: DLL load failed while importing _fused: The specified procedure could not be found."
SAGE_QATTN_PROC = "ImportError: DLL load failed while importing _qattn_sm89: The specified procedure could not be found."

FAMILIES = {
    "dependency-version-mismatch": [DIFFUSERS_LAZY, DIFFUSERS_LAZY_SUB, TRANSFORMERS_LAZY],
    "extension-torch-mismatch": [SAGE_FUSED_PROC, SAGE_QATTN_PROC],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_ai_toolkit_paste_names_the_diffusers_release():
    # ostris/ai-toolkit#266: the reporter's words around the line
    text = (
        "## Describe the bug\n\n"
        "when running wan lora training script:\n\n"
        "AttributeError: module diffusers has no attribute AutoencoderKLWan. Did you mean: 'AutoencoderKL'?\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_lazy_module_traceback_names_the_release():
    # the frame the message comes from, as a traceback shows it
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/ai-toolkit/toolkit/models/wan21.py", line 12, in <module>\n'
        "    from diffusers import AutoencoderKLWan\n"
        '  File "/home/u/venv/lib/python3.10/site-packages/diffusers/utils/import_utils.py", line 920, in __getattr__\n'
        '    raise AttributeError(f"module {self.__name__} has no attribute {name}")\n'
        "AttributeError: module diffusers has no attribute AutoencoderKLWan. Did you mean: 'AutoencoderKL'?\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_lazy_module_near_misses_stay_quiet():
    # CPython's own quoted wording (a stray diffusers.py or folder can print it: module-shadowed's
    # ground), the source line itself, other packages and an object's attribute are not this rule
    for line in ("AttributeError: module 'diffusers' has no attribute 'AutoencoderKLWan'",
                 '    raise AttributeError(f"module {self.__name__} has no attribute {name}")',
                 "AttributeError: module accelerate has no attribute Accelerator",
                 "AttributeError: 'AutoencoderKLCogVideoX' object has no attribute '_clear_fake_context_parallel_cache'",
                 "submodule diffusers.pipelines has no attribute list in the docs"):
        assert "hf-lazy-module-missing-name" not in _ids(line), line


def test_lazy_module_yields_to_a_stated_cause():
    # a catch-all: a failure another signature names comes first (here a CPU-only torch)
    text = (
        "AssertionError: Torch not compiled with CUDA enabled\n"
        "AttributeError: module diffusers has no attribute AutoencoderKLWan\n"
    )
    assert _codes(text)[:1] != ["dependency-version-mismatch"]


def test_sageattention_71_paste_names_the_torch_mismatch():
    # woct0rdho/SageAttention#71, the reporter's paste
    text = (
        "## Problem\n\n"
        "The current wheels (including `torch2.9.0andhigher`) fail on PyTorch 2.11 nightly:\n\n"
        "ImportError: DLL load failed while importing _fused: The specified procedure could not be found.\n\n"
        "## Environment\n\n- GPU: RTX 5090 (Blackwell, sm_120)\n- PyTorch: 2.11.0.dev20251217+cu128\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_sageattention_comfyui_traceback_names_the_torch_mismatch():
    # the import chain ComfyUI's attention module and the video wrappers print
    text = (
        '  File "C:\\ComfyUI\\comfy\\ldm\\modules\\attention.py", line 23, in <module>\n'
        "    from sageattention import sageattn\n"
        '  File "C:\\ComfyUI\\venv\\Lib\\site-packages\\sageattention\\quant.py", line 20, in <module>\n'
        "    from . import _fused\n"
        "ImportError: DLL load failed while importing _fused: 找不到指定的程序。\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_sageattention_dll_near_misses_stay_quiet():
    # a missing dependent DLL is another reading; other module names and the source line are not this rule
    for line in ("ImportError: DLL load failed while importing _fused: The specified module could not be found.",
                 "ImportError: DLL load failed while importing _fused_adam: The specified procedure could not be found.",
                 "ImportError: DLL load failed while importing _ctypes: The specified procedure could not be found.",
                 "    from . import _fused"):
        assert "sageattention-windows-dll-procedure-not-found" not in _ids(line), line
