"""Recall of explain on logs sampled by symptom (sweepf): 16 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02k``) taken in search order
for symptom queries (pip finds no torch, CUDA not compiled, ``undefined symbol: _ZN3c10``, the
CUDA version that mismatches PyTorch's, no flash_attn, cudaGetDeviceCount's unexpected error,
bitsandbytes' CUDA SETUP, ``cannot import name`` from transformers, numpy's multiarray, torch
without an attribute), then fixed by class from the programs that print the messages.

What the threads showed, and the class each fix covers:

- torch's ``Unexpected error from cudaGetDeviceCount() ... Error 500: named symbol not found``
  (cudaErrorSymbolNotFound answered by the device count) came from Docker on Windows, and
  updating Docker Desktop (its WSL 2 GPU support) fixed it in both threads (jhj0517/Whisper-WebUI
  279, YanWenKun/ComfyUI-Docker 74): ``wsl-gpu-unavailable`` at weight 2, with
  ``driver-library-mismatch`` among could_be; the CUDA samples' ``cudaGetDeviceCount returned
  500`` too.
- ``cannot import name 'X' from 'transformers[.module]'`` is the code written against another
  transformers release (deepset-ai/haystack 41: ``pipeline`` with 2.1.1; zjunlp/PromptKG 4:
  ``_BaseLazyModule`` gone from transformers.file_utils): ``dependency-version-mismatch`` as a
  catch-all (the model classes keep model-architecture-unsupported, a local transformers.py
  keeps module-shadowed).
- ``module 'torch' has no attribute 'no_grad'`` (0.4), ``'device'`` (0.4), ``'tensordot'`` (1.0) ...
  up to ``'compile'`` (2.0): the torch API older research code assumes, next to the 2.x names the
  rule already had (AlphaPose 297, pytorch-CycleGAN-and-pix2pix 314); Python 2's ``'module'
  object has no attribute 'no_grad'``; a partially initialized torch stays out.
- bitsandbytes' ``Required library version not found: libbitsandbytes_cudaXYZ.so`` quoted without
  its ``CUDA SETUP:`` prefix (bitsandbytes 1518, a release older than the CUDA version).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test

# code -> messages as the programs print them (each must rank the code first, whatever wraps it)
FAMILIES = {
    "wsl-gpu-unavailable": [
        # c10/cuda/CUDAFunctions.cpp device_count_impl, raised (torch.cuda.device_count callers) ...
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found",
        # ... and warned by torch.cuda.is_available()
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error 500: named "
        "symbol not found (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)",
        # CUDA samples' deviceQuery (printf("cudaGetDeviceCount returned %d\n-> %s\n", ...))
        "cudaGetDeviceCount returned 500",
    ],
    "dependency-version-mismatch": [
        # Python/ceval.c import_from, from the threads (haystack 41, PromptKG 4) and the same class
        "ImportError: cannot import name 'pipeline' from 'transformers' "
        "(C:\\ANACON~1\\lib\\site-packages\\transformers\\__init__.py)",
        "cannot import name '_BaseLazyModule' from 'transformers.file_utils'",
        "ImportError: cannot import name 'requires_backends' from 'transformers' "
        "(/usr/local/lib/python3.11/dist-packages/transformers/__init__.py)",
        "ImportError: cannot import name 'TransfoXLModel' from 'transformers'",
    ],
    "bitsandbytes-cuda-setup-failed": [
        # bitsandbytes/cuda_setup/main.py 0.35-0.42, as titles and prose quote it (no prefix)
        "Required library version not found: libbitsandbytes_cuda124_nocublaslt.so",
        "Required library version not found: libsbitsandbytes_cpu.so",
        # the printed line keeps its signature
        "CUDA SETUP: Required library version not found: libbitsandbytes_cuda100.so. Maybe you need to "
        "compile it from source?",
    ],
    "torch-too-old-for-package": [
        # CPython's AttributeError for torch API of older releases, from the threads (AlphaPose 297,
        # pytorch-CycleGAN-and-pix2pix 314, CalciferZh/SMPL 21, zhengchen1999/DAT 73)
        "error: AttributeError: module 'torch' has no attribute 'no_grad'",
        "AttributeError: module 'torch' has no attribute 'device'",
        "AttributeError: module 'torch' has no attribute 'tensordot'",
        "AttributeError: module 'torch' has no attribute 'fx'",
        "AttributeError: module 'torch' has no attribute 'compile'",
        # Python 2 (JiaRenChang/PSMNet 20, torch 0.3)
        "AttributeError: 'module' object has no attribute 'no_grad'",
    ],
}



def _wrap_limit(msg, wrapper):
    """No limit is left: torch's device-count message is three sentences; wrapped at 80 columns
    its error number ('Error 500: ...') starts a line of its own after the '?' that ends the
    question, and the paragraph reader reads the three lines together
    (parser.soft_wrap_paragraph, session 20; a terminal's cut is re-joined by
    parser.hard_wrap_cuts)."""
    return None


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, skip=_wrap_limit)


@pytest.mark.parametrize("prefix", ["", "[rank3]: ", "2024-09-17 10:00:00 ", "(Worker pid=4242) ", "> ",
                                    "app-1  | "])
def test_error_500_keeps_its_code_behind_prefixes(prefix):
    line = (prefix + "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
            "before calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found")
    codes = [c.code for c in explain_text("Attaching to app-1\n" + line + "\n").candidates]
    assert codes[:1] == ["wsl-gpu-unavailable"], codes


def test_error_500_in_backticks_keeps_its_code():
    log = ("Error when building docker\n\n```\nUnexpected error from cudaGetDeviceCount(). Did you run some cuda "
           "functions before calling NumCudaDevices() that might have already set an error? Error 500: named "
           "symbol not found\n```\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["wsl-gpu-unavailable"], codes


def test_error_500_is_generic_and_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line(
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found")
        if e.id == "cuda-device-count-symbol-not-found"]
    assert entries and entries[0].weight == 2 and "driver-library-mismatch" in entries[0].could_be


def test_other_device_count_errors_keep_their_codes():
    for err, code in [("Error 804: forward compatibility was attempted on non supported HW",
                       "cuda-forward-compat-unsupported"),
                      ("Error 802: system not yet initialized", "fabric-manager-not-running")]:
        line = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                "calling NumCudaDevices() that might have already set an error? " + err)
        codes = [c.code for c in explain_text(line + "\n").candidates]
        assert codes[:1] == [code], (err, codes)


def test_transformers_import_of_a_model_class_stays_the_architecture():
    codes = [c.code for c in explain_text(
        "ImportError: cannot import name 'Qwen2VLForConditionalGeneration' from 'transformers' "
        "(/usr/local/lib/python3.10/site-packages/transformers/__init__.py)\n").candidates]
    assert codes[:1] == ["model-architecture-unsupported"], codes


def test_a_local_transformers_py_stays_module_shadowed():
    codes = [c.code for c in explain_text(
        "ImportError: cannot import name 'AutoModel' from 'transformers' (consider renaming "
        "'/work/transformers.py' if it has the same name as a library you intended to import)\n").candidates]
    assert codes[:1] == ["module-shadowed"], codes


def test_transformers_import_is_a_catch_all_behind_a_named_cause():
    # georgesung/llm_qlora#2: bitsandbytes' CPU library is the cause; the transformers import follows
    log = ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit "
           "optimizers and GPU quantization are unavailable.\n"
           "'NoneType' object has no attribute 'cadam32bit_grad_fp32'\n"
           "ImportError: cannot import name 'BitsAndBytesConfig' from 'transformers'\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["bitsandbytes-cuda-setup-failed"], codes


@pytest.mark.parametrize("line", [
    # a circular import, not an old torch
    "AttributeError: partially initialized module 'torch' has no attribute 'device' "
    "(most likely due to a circular import)",
    # a name torch never had: the code's own typo
    "AttributeError: module 'torch' has no attribute 'Foo'",
])
def test_the_old_torch_signature_leaves_other_attribute_errors(line):
    ids = [e.id for e in load().match_line(line)]
    assert "torch-api-missing-older" not in ids and "torch-api-missing" not in ids, ids


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "cudaGetDeviceCount() found 2 devices",
    "from transformers import pipeline",
    "import name 'pipeline' from transformers 4.44.2: ok",
    "Required library version found: libbitsandbytes_cuda124.so",
    "bitsandbytes library version 0.45.0 loaded libbitsandbytes_cuda124.so",
    "with torch.no_grad():",
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
])
