"""A raise-site sweep (tools29, docs/dev/tools29.md has the table of every message swept, its
source and explain's reading before and after): the messages torch, Triton, transformers, FLA and
the linkers print about the environment that explain answered with nothing or a wrong cause.

Each message is the program's own text, taken from its source (the file and function are in the
signature's `source`); the family tests run it through every wrapper of
test_explain_patterns.WRAPPERS (rank and logging prefixes, quotes, markdown, 80-column wraps).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

SWEEP = {
    # transformers/modeling_utils.py _check_and_enable_sdpa / _check_and_enable_flash_attn_2
    "model-attention-implementation-unsupported": [
        "ValueError: GPT2Model does not support an attention implementation through "
        "torch.nn.functional.scaled_dot_product_attention yet. Please request the support for this "
        "architecture: https://github.com/huggingface/transformers/issues/28005. If you believe this error "
        "is a bug, please open an issue in Transformers GitHub repository and load your model with the "
        "argument `attn_implementation=\"eager\"` meanwhile.",
        "ValueError: T5EncoderModel does not support Flash Attention 2.0 yet. Please request to add support "
        "where the model is hosted, on its model hub page: https://huggingface.co/t5-base/discussions/new "
        "or in the Transformers GitHub repo: https://github.com/huggingface/transformers/issues/new",
    ],
    # torch/utils/cpp_extension.py get_compiler_abi_compatibility_and_version on Windows
    "windows-compiler-unusable": [
        "C:\\Python311\\Lib\\site-packages\\torch\\utils\\cpp_extension.py:383: UserWarning: Error checking "
        "compiler version for cl: [WinError 2] The system cannot find the file specified",
    ],
    # torch/utils/cpp_extension.py ABI_INCOMPATIBILITY_WARNING
    "extension-cxx-standard-too-old": [
        "UserWarning: Your compiler (g++ 4.8.5) may be ABI-incompatible with PyTorch!\n"
        "Please use a compiler that is ABI-compatible with GCC 5.0 and above.",
    ],
    # fla/utils.py check_environments; a Triton 2.x driver object under code written for 3.x
    "triton-too-old-for-package": [
        "Current Triton version 3.1.0 is below the recommended 3.3.0 version. Errors may occur and these "
        "issues will not be fixed. Please consider upgrading Triton.",
        "AttributeError: 'CudaDriver' object has no attribute 'active'",
        "AttributeError: 'CudaDriver' object has no attribute 'get_active_torch_device'",
    ],
    # fla/utils.py: torch < 2.4 and get_available_device() rolled back to 'cpu'
    "fla-cpu-fallback": [
        "AssertionError: Only cuda device is supported for PyTorch version < 2.4.0.",
    ],
    # Apple ld64 (and lld's Mach-O port): the same libraries as GNU ld's 'cannot find -lX'
    "cxx-runtime-link-library-missing": ["ld: library not found for -lstdc++"],
    "openmp-missing": ["ld: library not found for -lomp"],
    "python-headers-missing": ["ld: library not found for -lpython3.11"],
    "torch-libs-not-on-link-path": ["ld: library not found for -lc10"],
    "cuda-link-library-missing": ["ld: library not found for -lcudart"],
    "libc-headers-missing": ["ld: library not found for -lm"],
    # torch 2.0 removed torch/_six.py; a package written for torch 1.x imports it
    "dependency-version-mismatch": [
        "ModuleNotFoundError: No module named 'torch._six'",
        "ImportError: cannot import name 'inf' from 'torch._six' (/opt/venv/lib/python3.10/site-packages/torch/_six.py)",
    ],
    # bitsandbytes/cextension.py get_cuda_bnb_library_path refusing its override variable
    "bitsandbytes-cuda-setup-failed": [
        "RuntimeError: BNB_CUDA_VERSION=118 detected for ROCm!! \nClear the variable and retry: export BNB_CUDA_VERSION=",
        "RuntimeError: BNB_CUDA_VERSION='12.4': value must be digits only (e.g. '124' for 12.4).",
    ],
}

test_sweep_messages_head_explain_in_every_wrapper, test_sweep_messages_are_matched_by_their_code = \
    family_tests(SWEEP)

test_sweep_roots_are_sourced = sourced_roots_test(["model-attention-implementation-unsupported"])

# look-alike lines a healthy run prints: they must stay quiet
test_healthy_look_alikes_stay_quiet = healthy_test([
    "Using attn_implementation='sdpa' (torch.nn.functional.scaled_dot_product_attention)",
    "clang++ -stdlib=libc++ -lc++ -o main main.o",
    "Current Triton version 3.4.0",
    "offload_folder set to ./offload",
    "WARNING: BNB_CUDA_VERSION=118 environment variable detected; loading libbitsandbytes_cuda118.so.",
])


@pytest.mark.parametrize("line", [
    # ld64 about a library none of these causes is about, and macOS's legacy libgcc_s.10.4 stub
    "ld: library not found for -lz",
    "ld: library not found for -lgcc_s.10.4",
    "ld: library not found for -lssl",
])
def test_ld64_other_libraries_are_not_these_causes(line):
    codes = codes_of(line + "\n")
    assert not {"cxx-runtime-link-library-missing", "torch-libs-not-on-link-path", "libc-headers-missing",
                "openmp-missing", "cuda-link-library-missing"} & set(codes[:1]), codes


def test_fla_triton_warning_does_not_outrank_a_stated_cause():
    log = ("Current Triton version 3.1.0 is below the recommended 3.3.0 version. Errors may occur and these "
           "issues will not be fixed. Please consider upgrading Triton.\n"
           "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    assert codes_of(log)[:1] == ["no-c-compiler"]


@pytest.mark.parametrize("line,code", [
    ("Could not import foo_bar, some features disabled", "python-package-not-installed"),
    ("Could not import einops, some features disabled", "python-package-not-installed"),
    ("WARNING: Could not import deepspeed, some features disabled", "python-package-not-installed"),
    ("Could not import flash_attn, some features disabled", "flash-attn-not-installed"),
    ("Could not import triton, some features disabled", "triton-not-installed"),
    ("Could not import xformers, some features disabled", "kernel-library-not-installed"),
    ("2024-05-01 12:00:00,123 - WARNING - Could not import causal_conv1d, some features disabled",
     "kernel-library-not-installed"),
    ("> `Could not import foo_bar, some features disabled`", "python-package-not-installed"),
])
def test_a_bare_optional_import_warning_is_a_low_hint_not_silence(line, code):
    expl = explain_text(line + "\n")
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    assert expl.candidates[0].confidence == "low"


def test_an_optional_import_warning_before_a_real_error_is_not_the_answer():
    log = "Could not import foo_bar, some features disabled\nRuntimeError: CUDA error: out of memory\n"
    assert codes_of(log)[:1] == ["gpu-out-of-memory"]
