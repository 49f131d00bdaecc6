"""harv33c: a seventeenth unbiased harvest (quantization and low-bit kernels), scored blind, and
the general fixes its misses ask for (docs/dev/harv33c.md).

Seventeen new training-side logs; explain named ten first before any change. The fixed misses:
- A1, programs' own messages not read: ComfyUI-QwenVL's guard ``FP8 models require a GPU with
  Compute Capability 8.9 or higher`` (1038lab/ComfyUI-QwenVL#28) and SageAttention's
  ``SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher.``,
  which it asserts after importing its compiled ``_qattn_sm80`` under a bare ``except:``
  (Comfy-Org/ComfyUI#7770: the wheel did not load after an update; reinstalling it fixed it);
- A2, vLLM's capability check ``The quantization method fp8 is not supported for the current
  GPU. Minimum capability: 90. Current capability: 86.`` read as a framework build without the
  GPU's kernels: for the FP8/FP4 methods it is the GPU lacking the type (vllm-project/vllm#4327);
- C2, one environment word: bitsandbytes' CPU-library fallback on a Mac (a /Users/ home, macOS'
  dyld) is CUDA asked for on a Mac (bitsandbytes#485), and ``ctransformers`` (GGML's prebuilt CUDA
  library) was taken for the transformers library, so its error 35 read as torch's driver gap
  (marella/ctransformers#139);
- B/A1, ``cannot import name 'ActivationOrdering' from 'compressed_tensors.quantization`` pasted
  without its closing quote: llm-compressor's pinned companion is older than it needs
  (vllm-project/llm-compressor#696).
After the blind scores: TensorRT 9's wording of the FP8 refusal ('Networks with FP8 precision
require hardware with FP8 support', NVIDIA/TensorRT-LLM#1428, named before only by resemblance)
and the localized-line reader (explain/translate.py), whose table stopped at a shorter key that
begins two characters before CPython's zh_CN 'DLL load failed while importing exllamav2_ext:
找不到指定的程序。' (Zuellni/ComfyUI-ExLlama-Nodes#7, named before only by resemblance; B).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# 1038lab/ComfyUI-QwenVL load_model, two of its wordings
QWENVL = ("ValueError: FP8 models require a GPU with Compute Capability 8.9 or higher (e.g., RTX 4090). "
          "Your GPU's capability is 8.6. Please select a non-FP8 model.")
QWENVL_LOWER = ("FP8 models require a GPU with compute capability 8.9 or higher (e.g., RTX 4090)."
                "Your GPU compute capability is 7.5. Please choose a non-FP8 model.")
# vLLM's capability check (VllmConfig._get_quantization_config) for the FP8 and FP4 methods
VLLM_FP8 = ("ValueError: The quantization method fp8 is not supported for the current GPU. "
            "Minimum capability: 90. Current capability: 86.")
VLLM_FBGEMM = ("ValueError: The quantization method fbgemm_fp8 is not supported for the current GPU. "
               "Minimum capability: 89. Current capability: 80.")
VLLM_FP4 = ("ValueError: The quantization method modelopt_fp4 is not supported for the current GPU. "
            "Minimum capability: 100. Current capability: 90.")
# SageAttention sageattention/core.py, the old and the new wording
SAGE80 = "AssertionError: SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher."
SAGE80_NEW = "AssertionError: SM80 kernel is not available. Make sure your GPU compute capability is 8.0 or higher."
SAGE89 = "AssertionError: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9."
SAGE90 = "AssertionError: SM90 kernel is not available. Make sure your GPUs have compute capability 9.0."
# Python's import_from on llm-compressor's imports of compressed-tensors
# TensorRT 9's builder (under TensorRT-LLM 0.9) on a GPU without FP8
TRT9 = ("[04/09/2024-16:26:41] [TRT] [E] 9: [standardEngineBuilder.cpp::buildEngine::2266] Error Code 9: "
        "Internal Error (Networks with FP8 precision require hardware with FP8 support.)")
CT = "ImportError: cannot import name 'ActivationOrdering' from 'compressed_tensors.quantization'"
CT_CUT = "ImportError: cannot import name 'freeze_module_quantization' from 'compressed_tensors.quantization"
CT_PATH = ("ImportError: cannot import name 'TensorProfiler' from 'compressed_tensors.entrypoints.convert.memory' "
           "(/opt/venv/lib/python3.12/site-packages/compressed_tensors/entrypoints/convert/memory.py)")

# CPython's Windows loader in a zh_CN system (ERROR_PROC_NOT_FOUND, 127): the translation table
# must not stop at the shorter key ': 找不到' that begins two characters before the message
EXLLAMA_ZH = "ImportError: DLL load failed while importing exllamav2_ext: 找不到指定的程序。"

FAMILIES = {
    "gpu-arch-lacks-dtype": [QWENVL, QWENVL_LOWER, VLLM_FP8, VLLM_FBGEMM, VLLM_FP4, TRT9],
    "extension-torch-mismatch": [SAGE80, SAGE80_NEW, EXLLAMA_ZH],
    "extension-arch-missing": [SAGE89, SAGE90],
    "dependency-version-mismatch": [CT, CT_CUT, CT_PATH],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_qwenvl_report_names_gpu_lacking_fp8():
    # 1038lab/ComfyUI-QwenVL#28 (the whole report)
    text = ("ERROR: FP8 models require a GPU with Compute Capability 8.9 or higher (e.g., RTX 4090). "
            "Your GPU's capability is 8.6. Please select a non-FP8 model.\n\n30系 不支持，还是  算力低得卡不支持。\n")
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_vllm_ray_fp8_paste_names_gpu_lacking_fp8():
    # vllm-project/vllm#4327 (the reporter's paste, ray worker prefixes)
    text = (
        "And the error is\n"
        "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 90. Current capability: 86.\n"
        "(RayWorkerWrapper pid=2202490) ERROR 04-24 16:06:40 worker_base.py:157] Error executing method load_model. "
        "This might cause deadlock in distributed execution.\n"
        "(RayWorkerWrapper pid=2202821) ERROR 04-24 16:06:40 worker_base.py:157] ValueError: The quantization method fp8 "
        "is not supported for the current GPU. Minimum capability: 90. Current capability: 86. [repeated 2x across cluster]\n"
    )
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


@pytest.mark.parametrize("method,minimum,current", [("awq", 75, 70), ("gptq_marlin", 80, 75), ("marlin", 80, 70)])
def test_other_quantization_minimums_keep_framework_code(method, minimum, current):
    # the integer kernels' minimums are the build's (AWQ, Marlin): not a missing data type
    text = (f"ValueError: The quantization method {method} is not supported for the current GPU. "
            f"Minimum capability: {minimum}. Current capability: {current}.")
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


def test_fp8_refine_reads_its_own_line_only():
    # an fp8 KV-cache flag elsewhere in the log does not turn an AWQ minimum into a dtype gap
    text = (
        "INFO args: quantization='awq', kv_cache_dtype='fp8'\n"
        "The quantization method fp8 is supported for kv cache only on this GPU\n"
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.\n"
    )
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


def test_comfyui_sageattention_paste_names_torch_mismatch():
    # Comfy-Org/ComfyUI#7770 (the reporter's paste)
    text = (
        "```powershell\n"
        "AssertionError: SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher.\n\n"
        "2025-04-23T19:24:20.149200 - Prompt executed in 72.65 seconds\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


@pytest.mark.parametrize("text", [
    "ValueError: Unsupported CUDA architecture: sm75",
    "SM80 kernel is not available on this build",
    "SM89 kernel is not available",
    "warning: SM100 kernel is not available, falling back",
])
def test_other_sageattention_lines_are_not_read_as_kernels(text):
    ids = _ids(text)
    assert "sageattention-sm80-kernel-unavailable" not in ids
    assert "sageattention-sm89-sm90-kernel-unavailable" not in ids


def test_bitsandbytes_on_a_mac_names_cuda_on_macos():
    # bitsandbytes-foundation/bitsandbytes#485 (the reporter's paste, cut where the excerpt ends)
    text = (
        "I am on M2 Max Chip MacOS that has 12CPU, 38GPU, 96 GB processor, 2 TB storage.\n"
        "This is the issue:\n\n"
        "===================================BUG REPORT===================================\n"
        "bin /Users/phdykd/miniconda3/envs/Guanaco/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so\n"
        "/Users/phdykd/miniconda3/envs/Guanaco/lib/python3.10/site-packages/bitsandbytes/cextension.py:34: UserWarning: "
        "The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, "
        "and GPU quantization are unavailable.\n"
        "'NoneType' object has no attribute 'cadam32bit_grad_fp32'\n"
        "CUDA SETUP: Loading binary /Users/phdykd/miniconda3/envs/Guanaco/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so...\n"
        "dlopen(/Users/phdykd/miniconda3/envs/Guanaco/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so, 0x0006): tried: "
    )
    assert _codes(text)[:1] == ["cuda-on-macos"]


@pytest.mark.parametrize("home", [
    "/home/ubuntu/venv",
    r"C:\Users\ron\miniconda3",
    "C:/Users/ron/miniconda3",
    "/c/Users/ron/miniconda3",
])
def test_bitsandbytes_cpu_fallback_elsewhere_keeps_its_code(home):
    # the same fallback on Linux, or on Windows (its Users folder), is bitsandbytes' own setup
    text = (
        f"{home}/lib/site-packages/bitsandbytes/cextension.py:34: UserWarning: The installed version of bitsandbytes "
        "was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.\n"
        "'NoneType' object has no attribute 'cadam32bit_grad_fp32'\n"
    )
    assert _codes(text)[:1] == ["bitsandbytes-cuda-setup-failed"]


def test_ctransformers_error_35_names_the_prebuilt_program():
    # marella/ctransformers#139 (title and report)
    text = (
        "CUDA error 35 at /home/runner/work/ctransformers/ctransformers/models/ggml/ggml-cuda.cu:5067: "
        "CUDA driver version is insufficient for CUDA runtime version\n\n"
        "What cuda drivers are needed?\n\n"
        "I'm able to run llama-cpp-pyhon and llama.cpp just fine, but not this tool\n\n"
        "Ubuntu 22\nCuda 11.7\ndriver is 515.43.04\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


@pytest.mark.parametrize("lib", ["transformers", "sentence_transformers"])
def test_transformers_error_35_stays_torch(lib):
    # the transformers library (and libraries named after it) runs on torch: its wheel's CUDA
    text = (
        f'  File "/opt/venv/lib/python3.10/site-packages/{lib}/modeling_utils.py", line 3210, in from_pretrained\n'
        "    model = model.cuda()\n"
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
        "ggml-cuda.cu was not involved\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-torch"]


def test_llm_compressor_report_names_dependency_mismatch():
    # vllm-project/llm-compressor#696 (the reporter's paste, closing quote lost)
    text = (
        "While importing GTPQModifier, below error is appears:\n\n```\n"
        "from llmcompressor.modifiers.quantization import GPTQModifier\n\n"
        "ImportError: cannot import name 'ActivationOrdering' from 'compressed_tensors.quantization\n```\n"
        "3. LLM Compressor version - 0.2.0\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


@pytest.mark.parametrize("text", [
    "ImportError: cannot import name 'Foo' from 'compressed_tensors_extra'",
    "ImportError: cannot import name 'Foo' from 'my_compressed_tensors'",
    "No module named 'compressed_tensors'",
])
def test_compressed_tensors_signature_reads_only_its_module(text):
    assert "compressed-tensors-name-missing" not in _ids(text)



def test_localized_windows_loader_line_is_translated_inside_a_longer_key():
    from stackpeel.explain.translate import translate
    assert translate(EXLLAMA_ZH) == (
        "ImportError: DLL load failed while importing exllamav2_ext: The specified procedure could not be found.")
    assert translate("/usr/bin/ld: 找不到 -lcuda") == "/usr/bin/ld: cannot find -lcuda"


def test_exllama_nodes_zh_title_names_torch_mismatch_by_signature():
    # Zuellni/ComfyUI-ExLlama-Nodes#7 (the title, the whole paste)
    from test_explain_patterns import explain_text
    expl = explain_text(EXLLAMA_ZH + "\n")
    assert [c.code for c in expl.candidates][:1] == ["extension-torch-mismatch"]
    assert expl.candidates[0].basis == "signature"
