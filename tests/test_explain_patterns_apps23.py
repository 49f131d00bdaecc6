"""apps23: programs' own messages, third round, and two context rules (docs/dev/apps23.md).

xFormers prints ``Triton is not available, some optimizations will not be enabled.`` whenever its
``_is_triton_available()`` is False (xformers/sparse/blocksparse_tensor.py 0.0.16-0.0.27), which
since 0.0.24 includes every GPU below compute capability 8.0 (xformers/__init__.py: "drop support
for triton kernels below A100"). The notice is healthy on its own; in a log that fails, with every
GPU it names below 8.0, the cause is that gate (triton-gpu-too-old, the state fact
``state:xformers-triton-below-sm80``). CUDA asked for on a Mac (cuda-on-macos), torch's broken-build
check and pynvml's missing function follow. Near-misses must stay unread.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of as _codes, family_tests

GAP = "\n".join(f"step {i}: ok" for i in range(8))

# xformers/sparse/blocksparse_tensor.py (0.0.24-0.0.27): the warning and its second line when
# _is_triton_available() returned False
XF_WARNING = "WARNING:xformers:Triton is not available, some optimizations will not be enabled."
XF_JUST_A_WARNING = "This is just a warning: triton is not available"
# xformers/__init__.py _is_triton_available: `import triton` raised after the capability gate
XF_MATCHING = "WARNING:xformers:A matching Triton is not available, some optimizations will not be enabled"
# xformers/info.py print_info: "{:<50} {}".format(f"{name}:", status)
XF_INFO = ("xFormers 0.0.29.post1\n"
           + "{:<50} {}\n".format("memory_efficient_attention.cutlassF-pt:", "available")
           + "{:<50} {}\n".format("is_triton_available:", "False")
           + "{:<50} {}\n".format("pytorch.version:", "2.6.0+cu124")
           + "{:<50} {}\n".format("pytorch.cuda:", "available")
           + "{:<50} {}\n".format("gpu.compute_capability:", "7.5")
           + "{:<50} {}".format("gpu.name:", "Tesla T4"))

# xformers/ops/rmsnorm.py (0.0.24+): a Triton-only op asserts the gate
RMSNORM_ASSERT = ("Traceback (most recent call last):\n"
                  '  File "/opt/venv/lib/python3.10/site-packages/xformers/ops/rmsnorm.py", line 31, in forward\n'
                  "    assert _is_triton_available()\n"
                  "AssertionError")


@pytest.mark.parametrize("text", [
    f"{XF_WARNING}\n{XF_JUST_A_WARNING}\nGPU 0: Tesla T4\n{RMSNORM_ASSERT}",
    # the notice's second line reads as an error line: the gate is the answer on offer
    f"{XF_WARNING}\n{XF_JUST_A_WARNING}\nGPU 0: Tesla T4",
    f"GPU: NVIDIA GeForce RTX 2080 Ti\n{GAP}\n{XF_WARNING}\n{RMSNORM_ASSERT}",
    f"[rank0]: {XF_WARNING}\n[rank0]: device: Tesla V100-SXM2-32GB\n{RMSNORM_ASSERT}",
    f"{XF_INFO}\n{RMSNORM_ASSERT}",
    # xformers-1240's shape: the bare title (a user's complaint) beside xformers.info's capability
    "Triton is not available\n\ngpu.compute_capability: 7.5",
    # the bare sentence in a log whose pip list shows xFormers
    "xformers                  0.0.28.post3\nGPU 0: Tesla T4\nTriton is not available",
])
def test_xformers_triton_gate_below_sm80_is_the_gpu(text):
    expl = explain_text(text)
    assert [c.code for c in expl.candidates][:1] == ["triton-gpu-too-old"], [c.code for c in expl.candidates]
    assert "state:xformers-triton-below-sm80" in expl.candidates[0].facts


@pytest.mark.parametrize("text", [
    f"{XF_WARNING}\nGPU 0: NVIDIA A100-SXM4-80GB\n{RMSNORM_ASSERT}",                   # 8.0 passes the gate
    f"{XF_WARNING}\nGPU 0: Tesla T4\nGPU 1: NVIDIA A100-SXM4-80GB\n{RMSNORM_ASSERT}",  # not every GPU below 8.0
    # another program's bare sentence on a T4: Triton supports 7.5, no xFormers shown
    "Triton is not available\nGPU 0: Tesla T4",
    # the import of triton failed: xFormers passed (or had no) gate
    f"{XF_MATCHING}\nGPU 0: Tesla T4\n{RMSNORM_ASSERT}",
    # a fallback notice, not xFormers' wording
    f"Triton is not available, falling back to eager mode\nGPU 0: Tesla T4\n{RMSNORM_ASSERT}",
])
def test_without_the_gate_it_is_not_the_gpu(text):
    assert "triton-gpu-too-old" not in _codes(text)[:1], _codes(text)


@pytest.mark.parametrize("text", [
    XF_WARNING,
    f"{XF_WARNING}\nGPU 0: Tesla T4",     # the gate, but nothing fails: a note
    XF_INFO,
])
def test_the_notice_alone_is_healthy(text):
    expl = explain_text(text + "\n")
    assert expl.candidates == () and expl.exit_code == 0, [c.code for c in expl.candidates]


def test_the_gate_is_a_note_when_nothing_fails():
    expl = explain_text(f"{XF_WARNING}\nGPU 0: Tesla T4\n")
    assert any("xformers-triton-below-sm80" in n for n in expl.notes), expl.notes


def test_a_real_failure_outranks_the_start_notice():
    log = (f"{XF_WARNING}\nGPU 0: Tesla T4\n{GAP}\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
           "of 14.75 GiB of which 1.06 GiB is free.\n")
    codes = _codes(log)
    assert codes[0] == "gpu-out-of-memory", codes
    assert "triton-gpu-too-old" not in codes


# -- CUDA asked for on a Mac (cuda-on-macos): torch/cuda/__init__.py _lazy_init raises this in every
#    build without CUDA, which every macOS build is; a Mac word beside it decides

# torch/cuda/__init__.py _lazy_init
NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"
# torch/cuda/__init__.py _check_driver (a CUDA-built torch without a driver)
NO_DRIVER = ("AssertionError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")
# A1111 modules/launch_utils.py prepare_environment
WEBUI_NO_GPU = ("RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable "
                "to disable this check")
MAC_WORDS = [
    "Platform: macOS-14.2.1-arm64-arm-64bit",                       # platform.platform()
    "OS: macOS 13.6.3 (x86_64)",                                    # torch's collect_env
    "Darwin MacBook-Pro.local 23.1.0 Darwin Kernel Version 23.1.0",  # uname -a
    "Hardware: Apple M2 Max, 32 GB",
    "I'm on a MacBook Pro with the M1 Pro chip",
    '  File "/Users/ana/stable-diffusion-webui/modules/devices.py", line 5, in <module>',
    "  /opt/homebrew/lib/python3.11/site-packages/torch/cuda/__init__.py",
    "/Library/Frameworks/Python.framework/Versions/3.10/bin/python3",
    "Downloading torch-2.2.0-cp311-none-macosx_11_0_arm64.whl (59.7 MB)",
]


@pytest.mark.parametrize("word", MAC_WORDS)
@pytest.mark.parametrize("shape", ["near", "far", "rank", "quoted"])
def test_cuda_asked_for_on_a_mac(word, shape):
    text = {"near": f"{word}\n{NOT_COMPILED}",
            "far": f"{word}\n{GAP}\n{NOT_COMPILED}",
            "rank": f"[rank0]: {NOT_COMPILED}\n[rank0]: {word}",
            "quoted": f"> {NOT_COMPILED}\n> {word}"}[shape]
    if shape == "far" and word.startswith("  File"):
        pytest.skip("a /Users/ path is read beside the line or in its traceback only (C:/Users/ on Windows)")
    assert _codes(text)[:1] == ["cuda-on-macos"], _codes(text)


@pytest.mark.parametrize("text", [
    f"{NO_DRIVER}\nOS: macOS 10.13.6 (x86_64)",
    f"{WEBUI_NO_GPU}\nDarwin MacBook-Pro.local 23.1.0 Darwin Kernel Version 23.1.0",
    f"Python: /Library/Frameworks/Python.framework/Versions/3.10/bin/python3\n{GAP}\n{NO_DRIVER}",
])
def test_symptoms_on_a_mac_rank_it_first(text):
    assert _codes(text)[:1] == ["cuda-on-macos"], _codes(text)


@pytest.mark.parametrize("text,code", [
    (NOT_COMPILED, "torch-cpu-only-build"),
    # a Windows home with forward slashes, Git Bash's and WSL's views of it
    (f'  File "C:/Users/bob/ComfyUI/main.py", line 3, in <module>\n{NOT_COMPILED}', "torch-cpu-only-build"),
    (f'  File "/c/Users/bob/ComfyUI/main.py", line 3, in <module>\n{NOT_COMPILED}', "torch-cpu-only-build"),
    (f'  File "/mnt/c/Users/bob/run.py", line 3, in <module>\n{NOT_COMPILED}', "torch-cpu-only-build"),
    (f"running on Machine 3 of the cluster\n{NOT_COMPILED}", "torch-cpu-only-build"),
    (f"set the mac address to 00:11:22:33:44:55\n{NOT_COMPILED}", "torch-cpu-only-build"),
    (f"on mac address 00:11:22:33:44:55\n{NOT_COMPILED}", "torch-cpu-only-build"),
    (f"Model: M2 SSD 1TB\n{NOT_COMPILED}", "torch-cpu-only-build"),
    # an AMD GPU on Linux keeps its own answer; an Intel Mac's Radeon is still a Mac
    (f"{NOT_COMPILED}\nGPU: AMD Radeon RX 6800 XT", "amd-gpu-no-torch-backend"),
    (f"{NOT_COMPILED}\nOS: macOS 13.6 (x86_64), AMD Radeon Pro 5500M", "cuda-on-macos"),
    (NO_DRIVER, "no-nvidia-driver"),
])
def test_without_a_mac_word_the_old_reading_holds(text, code):
    assert _codes(text)[:1] == [code], _codes(text)


def test_a_mac_word_alone_names_nothing():
    expl = explain_text("Platform: macOS-14.2.1-arm64-arm-64bit\nHardware: Apple M2 Max\n")
    assert expl.candidates == () and expl.exit_code == 0


# -- coverage-audit's "Still none": torch's broken-build check and pynvml's missing function

ITEM3 = {
    "torch-cuda-bindings-missing": [
        # torch/cuda/__init__.py _lazy_init (_cudart is None in a CUDA build)
        "AssertionError: libcudart functions unavailable. It looks like you have a broken build?",
    ],
    "nvml-function-missing-in-driver": [
        # pynvml.py _nvmlGetFunctionPointer: NVMLError(NVML_ERROR_FUNCTION_NOT_FOUND)
        "pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found",
        "pynvml.NVMLError_FunctionNotFound: Function Not Found",
        # ctypes' lookup that precedes it
        "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
        "nvmlDeviceGetComputeRunningProcesses_v2",
    ],
}

test_item3_in_every_wrapper, test_item3_own_signature = family_tests(ITEM3)


@pytest.mark.parametrize("source_lines", [
    # IPython's traceback shows the code around the raise: torch's source, not its error
    ["    210 if not hasattr(torch._C, '_cuda_getDeviceCount'):",
     "--> 211     raise AssertionError(\"Torch not compiled with CUDA enabled\")",
     "    212 if _cudart is None:",
     "    213     raise AssertionError(",
     "    214         \"libcudart functions unavailable. It looks like you have a broken build?\")"],
    # rich's traceback box
    ["│   213 │   │   │   raise AssertionError(                                              │",
     "│   214 │   │   │   │   \"libcudart functions unavailable. It looks like you have a broken build?   │"],
])
def test_torch_source_shown_in_a_traceback_is_not_its_error(source_lines):
    log = "\n".join(source_lines) + "\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert _codes(log)[:1] == ["torch-cpu-only-build"], _codes(log)
    assert "torch-cuda-bindings-missing" not in _codes(log)


def test_pynvml_traceback_names_the_driver_side():
    log = ("Traceback (most recent call last):\n"
           '  File "/opt/conda/lib/python3.8/site-packages/pynvml/nvml.py", line 782, in _nvmlGetFunctionPointer\n'
           "    _nvmlGetFunctionPointer_cache[name] = getattr(nvmlLib, name)\n"
           "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
           "nvmlDeviceGetComputeRunningProcesses_v2\n\n"
           "During handling of the above exception, another exception occurred:\n\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/conda/lib/python3.8/site-packages/pynvml/nvml.py", line 785, in _nvmlGetFunctionPointer\n'
           "    raise NVMLError(NVML_ERROR_FUNCTION_NOT_FOUND)\n"
           "pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found\n")
    assert _codes(log)[:1] == ["nvml-function-missing-in-driver"]


@pytest.mark.parametrize("line", [
    "libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12",
    "pynvml.nvml.NVMLError_NotSupported: Not Supported",                  # another NVML error
    "AttributeError: module 'pynvml' has no attribute 'nvmlDeviceGetComputeRunningProcesses_v2'",  # the binding is too old
    "OSError: /usr/lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: cuGetProcAddress_v2",
])
def test_item3_near_misses(line):
    codes = _codes(line + "\n")
    assert not {"torch-cuda-bindings-missing", "nvml-function-missing-in-driver"} & set(codes), codes


# -- applications' own GPU messages (item 4): unsloth's older guard, InvokeAI, kohya-ss/sd-scripts

APPS = {
    "torch-cuda-unavailable": [
        # unsloth/__init__.py (2024-2025 releases)
        "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!",
        # unsloth/device_type.py get_device_type
        "RuntimeError: Unsloth: Weirdly `torch.cuda.is_available()`, `torch.xpu.is_available()` and `is_hip` all failed.",
        # invokeai/backend/util/devices.py
        "ValueError: generation_devices requested 'cuda:1', but no CUDA device is available.",
    ],
    "device-ordinal-out-of-range": [
        "ValueError: generation_devices requested 'cuda:3', but only 2 CUDA device(s) are available (valid indices 0-1).",
        # exllamav2/model_init.py
        " ## Error: Too many entries in gpu_split. 1 CUDA devices are available.",
    ],
    "gpu-out-of-memory": [
        # invokeai/backend/model_manager/load/model_cache/model_cache.py
        "[2025-01-01 12:00:00,000]::[ModelManagerService]::WARNING --> Insufficient GPU memory to load model. Aborting",
    ],
    "gpu-arch-lacks-dtype": [
        # axolotl src/axolotl/utils/schemas/config.py check_bf16 / check_fp8
        "bf16 requested, but AMP is not supported on this GPU. Requires Ampere series or above. Training will fail, "
        "but other operations (such as merging) are still functional.",
        "ValueError: fp8 requested, but fp8 is not supported on this GPU",
    ],
    "torch-cpu-only-build": [
        # exllamav2/model.py
        " ## Warning: The installed version of PyTorch is 2.1.0+cpu and does not support CUDA or ROCm.",
    ],
    "extension-torch-mismatch": [
        # exllamav2/ext.py
        '"undefined symbol" error here usually means you are attempting to load a prebuilt extension wheel that was '
        "compiled against a different version of PyTorch than the one you are you using. Please verify that the "
        "versions match.",
    ],
    "tensorrt-engine-version-mismatch": [
        # TensorRT-LLM tensorrt_llm/runtime/generation.py GenerationSession.__init__
        "RuntimeError: Tensor names in engine are not the same as expected, to use this GenerationSession, you "
        "need to use PretrainedModel.prepare_inputs to create TRT Network inputs.",
        "RuntimeError: Tensor names in engine are not the same as expected.",
    ],
    "kernel-library-not-installed": [
        # kohya-ss/sd-scripts library/train_util.py
        "ImportError: No xformers / xformersがインストールされていないようです",
        "ImportError: No bitsandbytes / bitsandbytesがインストールされていないようです",
    ],
}

test_apps_in_every_wrapper, test_apps_own_signature = family_tests(APPS)


@pytest.mark.parametrize("line", [
    "generation_devices requested 'cuda:0' and 'cuda:1'",                     # a config echo, no failure
    "INFO --> Loaded model onto cuda; 4.2 GB of GPU memory free",
    "No xformers / SDPA selected; using the default attention",
    "Unsloth: Will patch your computer to enable 2x faster free finetuning.",   # unsloth's banner
    "bf16 support detected, but not enabled for this configuration.",         # axolotl's INFO
    "fp8 requested; fp8 is supported on this GPU (sm_90)",
    "Expected tensor names: ['input_ids', 'logits']",                        # TRT-LLM's debug list
])
def test_apps_near_misses(line):
    codes = _codes(line + "\n")
    assert not {"torch-cuda-unavailable", "device-ordinal-out-of-range", "gpu-out-of-memory",
                "kernel-library-not-installed", "gpu-arch-lacks-dtype",
                "tensorrt-engine-version-mismatch"} & set(codes[:1]), codes


def test_exllamav2_torch_warning_on_a_mac_is_cuda_on_a_mac():
    log = (" ## Warning: The installed version of PyTorch is 2.1.0 and does not support CUDA or ROCm.\n"
           "Platform: macOS-14.1-arm64-arm-64bit\n")
    assert _codes(log)[:1] == ["cuda-on-macos"]
