"""Issue 8 (recall8): explain's recall on the existing codes of the torch and kernels layers,
widened by class from 34 fresh training threads (tests/corpus/explain/*.log with
``# collected: training-2026-12-02c``) and from the programs that print the messages.

What the threads showed, and the class each fix covers:

- onnxruntime's CPU package beside (or instead of) onnxruntime-gpu: users report it in words,
  "i could get only CPUExecutionProvider" (microsoft/onnxruntime#3787), "CUDAExecutionProvider
  is not avaliable", "... missing from available providers", and the one-element provider list
  older CPU packages print. A fallback symptom of framework-cpu-only-build: a provider that is
  there but cannot load (onnxruntime-cuda-libs-missing) has its own loader lines, which outrank it.
- A package's CUDA wheel on a ROCm machine, in the words of the thread that traced it
  (vllm-project/vllm#44660: "an AMD host silently ends up with a CUDA build"); torch itself
  built for CUDA on an AMD GPU stays amd-gpu-no-torch-backend (could_be).
- Model code that raises when flash_attn does not import, in its own words (InternVL's
  ``ImportError: flash_attn is not installed.`` on Windows, OpenGVLab/InternVL#197; other
  projects' ValueError and assert), and the warning projects print on every start when they
  fall back (a fallback symptom: it names the cause only when nothing else does).
- torch.compile refused on a Python version, in users' words ("Torch compile does not work on
  python 3.12", pytorch/pytorch#120233).
- transformers 4.x's bare ``KeyError: 'qwen2'`` for a model type it does not know: the traceback
  frames of configuration_auto.py name it (QwenLM/Qwen3#434), and users write the key beside
  the transformers release (#247, #30); before, only a guess by resemblance found these.
- numpy's C-API header in extensions built for NumPy 1.x: ``AttributeError: _ARRAY_API not
  found`` and ``numpy.core._multiarray_umath failed to import`` alone (the banner above them is
  often cut from a paste).
- torch 1.12-1.13's MPS wording "is not current implemented for the MPS device" (sic).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "framework-cpu-only-build": [
        # users' words (microsoft/onnxruntime#3787, Naozumi520/g2pW-Cantonese#1, nazdridoy/kokoro-tts#59)
        "But the model runs only on CPU and when i checked using get_device(), i could get only CPUExecutionProvider.",
        "CUDAExecutionProvider is not avaliable",
        "CUDAExecutionProvider missing from available providers in ONNX Runtime",
        "onnxruntime.get_available_providers() returns ['CPUExecutionProvider']",
    ],
    "cuda-extension-on-rocm": [
        # vllm-project/vllm#44660
        "vLLM's PyPI wheels are compiled for **CUDA**, so an AMD host silently ends up with a CUDA build.",
        "When installing vLLM on an AMD/ROCm host running Python 3.11, the resolver silently installs the "
        "**CUDA** wheel instead of failing or installing a ROCm artifact.",
    ],
    "flash-attn-not-installed": [
        # InternVL's modeling code, as its traceback shows it (OpenGVLab/InternVL#197)
        "    raise ImportError('flash_attn is not installed.')",
        "ImportError: flash_attn is not installed.",
        # other projects' raise sites (attention-implementation pickers, asserts before flash_attn_varlen_func)
        "ValueError: flash_attention_2 requested but flash_attn is not installed",
        "AssertionError: flash_attn is not installed or not supported",
        # a fallback warning printed on every start (Qwen3-TTS), alone in the log
        "Warning: flash-attn is not installed. Will only run the manual PyTorch version. Please install flash-attn "
        "for faster inference.",
    ],
    "torch-compile-python-unsupported": [
        # pytorch/pytorch#120233's title
        "Torch compile does not work on python 3.12",
        "torch.compile is not yet supported on Python 3.13",
    ],
    "model-architecture-unsupported": [
        # transformers 4.x configuration_auto.py, as the traceback of QwenLM/Qwen3#434 shows it
        '    config_class = CONFIG_MAPPING[config_dict["model_type"]]',
        '  File "/home/anaconda3/envs/qwen/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py", '
        'line 723, in __getitem__',
        # users' words with the release on the same line (QwenLM/Qwen3#30's title, #247)
        "KeyError: 'qwen2' Successfully installed transformers-4.37.2 vllm",
        "按照quick start中的 transformer调用方法，给的例子运行。报错KeyError: 'qwen2' 。 是不是因为transformers版本低于4.37.0导致的。",
    ],
    "numpy-abi-mismatch": [
        # numpy's C-API header (_import_array), compiled into cv2, pandas, numexpr, ...
        "AttributeError: _ARRAY_API not found",
        "ImportError: numpy.core._multiarray_umath failed to import",
        "ImportError: numpy._core._multiarray_umath failed to import",
    ],
    "apple-mps-op-unsupported": [
        # torch 1.12-1.13 (sic), as READMEs and code comments quote it
        "NotImplementedError: The operator 'aten::_index_put_impl_' is not current implemented for the MPS device. "
        "If you want this op to be added in priority during the prototype phase of this feature, please comment on "
        "https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the environment variable "
        "`PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. WARNING: this will be slower than "
        "running natively on MPS.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


test_users_words_name_the_cause = users_words_test({
    # microsoft/onnxruntime#3787
    "when i checked using get_device(), i could get only CPUExecutionProvider": "framework-cpu-only-build",
    # vllm-project/vllm#44660
    "so an AMD host silently ends up with a CUDA build": "cuda-extension-on-rocm",
    # pytorch/pytorch#120233
    "Torch compile does not work on python 3.12": "torch-compile-python-unsupported",
})


test_healthy_lines_name_nothing = healthy_test([
    "['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']",
    "Onnx selected provider: CUDAExecutionProvider",
    "flash_attn is installed, using flash_attention_2",
    "torch.compile works on Python 3.12 with torch 2.4",
    "Installed the ROCm build of vLLM on an AMD host.",
])


def test_a_loader_failure_outranks_the_only_cpu_provider_words():
    log = ("2024-03-05 11:40:14.847702004 [E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_CUDA] "
           "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
           "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
           "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: "
           "No such file or directory\n"
           "so I could get only CPUExecutionProvider\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["onnxruntime-cuda-libs-missing"], codes


def test_the_fallback_warning_does_not_outrank_a_real_failure():
    log = ("Warning: flash-attn is not installed. Will only run the manual PyTorch version.\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes and codes[0] != "flash-attn-not-installed", codes
