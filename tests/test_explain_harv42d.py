"""harv42d: an unbiased harvest of state-space and linear-attention model kernels (mamba-ssm,
causal-conv1d, flash-linear-attention, RWKV CUDA kernels and the apps around them), scored blind,
and the general fixes its misses ask for (docs/dev/harv42d.md).

Thirteen new training-side logs; explain named seven first before any change. The fixed misses:
- RWKV-Runner's own text for a failed model switch, in English and zh-hans, names a CPU torch
  (``... ninja is required to load C++ extensions. You may be using the CPU version of PyTorch,
  please reinstall PyTorch with CUDA. ...``; josStorer/RWKV-Runner#311, #406): it was read as
  ``ninja-missing`` (English) or guessed from words (Chinese); now ``torch-cpu-only-build``;
- nvcc of CUDA 10.x asked for C++17 (``nvcc fatal   : Value 'c++17' is not defined for option
  'std'``, BlinkDL/ChatRWKV#62): now ``nvcc-torch-cuda-mismatch`` (first was a guess);
- Triton's ``IndexError: map::at`` on a Turing GPU (state-spaces/mamba#361, unknown before): now
  ``gpu-arch-lacks-dtype``, unless the log names a GPU of compute capability 8.0 or more;
- ptxas's bf16 feature error quoted without its ``Feature`` word (``'.bf16' requires .target
  sm_80 or higher``, Joluck/RWKV-PEFT#60, unknown before): now ``gpu-arch-lacks-dtype``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# josStorer/RWKV-Runner frontend/src/components/RunButton.tsx errorsMap, and its zh-hans locale
RR_NINJA = ("Failed to switch model - Failed to enable custom CUDA kernel, ninja is required to load C++ "
            "extensions. You may be using the CPU version of PyTorch, please reinstall PyTorch with CUDA. Or if "
            "you are using a custom Python interpreter, you must compile the CUDA kernel by yourself or disable "
            "Custom CUDA kernel acceleration.")
RR_BAD_TORCH = "Failed to switch model - Bad PyTorch version, please reinstall PyTorch with cuda."
RR_NINJA_ZH = ("切换模型失败 - 自定义CUDA算子开启失败，需要安装Ninja来读取C++扩展。你可能正在使用CPU版本的PyTorch，"
               "请重新安装CUDA版本的PyTorch。如果你正在使用自定义Python解释器，你必须自己编译CUDA算子或禁用自定义CUDA算子加速")
RR_BAD_TORCH_ZH = "切换模型失败 - 错误的PyTorch版本，请重新安装CUDA版本的PyTorch"
# nvcc of CUDA 10.x given -std=c++17
NVCC_CXX17 = "nvcc fatal   : Value 'c++17' is not defined for option 'std'"
# Triton's lowering on a Turing GPU (pybind11's IndexError for std::map::at)
MAP_AT = "IndexError: map::at"
# ptxas's bf16 errors as users quote them, without the 'Feature' word
BF16_QUOTED = "'.bf16' requires .target sm_80 or higher"
BF16_CVT_QUOTED = "'cvt with .f32.bf16' requires .target sm_80 or higher"

FAMILIES = {
    "torch-cpu-only-build": [RR_NINJA, RR_BAD_TORCH, RR_NINJA_ZH, RR_BAD_TORCH_ZH],
    "nvcc-torch-cuda-mismatch": [NVCC_CXX17],
    "gpu-arch-lacks-dtype": [MAP_AT, BF16_QUOTED, BF16_CVT_QUOTED],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_rwkv_runner_paste_names_the_cpu_torch():
    # josStorer/RWKV-Runner#311: the toast the reporter pasted in a sentence of their own
    text = ("CUDA和Pytorch已经安装，但依然提示Failed to switch model - Failed to enable custom CUDA kernel, ninja is "
            "required to load C++ extensions. You may be using the CPU version of PyTorch, please reinstall PyTorch "
            "with CUDA. Or if you are using a custom Python interpreter, you must compile the CUDA kernel by yourself "
            "or disable Custom CUDA kernel acceleration\"\n")
    assert _codes(text)[:1] == ["torch-cpu-only-build"]


def test_rwkv_runner_near_misses_keep_their_reading():
    # torch's own message stays ninja's; a user's guess about a CPU build is no program text
    assert _codes("RuntimeError: Ninja is required to load C++ extensions\n")[:1] == ["ninja-missing"]
    for line in (
        "Maybe you are using the CPU version of PyTorch?",
        "You may be using the CPU version of PyTorch",
        "Please reinstall PyTorch with CUDA support from pytorch.org",
        "自定义CUDA算子开启失败",
    ):
        assert "rwkv-runner-cpu-torch" not in _ids(line)


def test_chatrwkv_build_names_the_old_nvcc():
    # BlinkDL/ChatRWKV#62
    text = ('compile wkv_cuda failed when running "python chat.py":\n'
            "nvcc fatal   : Value 'c++17' is not defined for option 'std'\n\n"
            "My torch and cuda is 1.13.1+cuda117\n")
    assert _codes(text)[:1] == ["nvcc-torch-cuda-mismatch"]


def test_nvcc_std_near_misses_keep_their_reading():
    assert "nvcc-without-cxx17" not in _ids("nvcc fatal   : Value 'c++14' is not defined for option 'std'")
    assert "nvcc-without-cxx17" not in _ids("nvcc fatal   : Value 'sm_90' is not defined for option 'gpu-architecture'")
    assert "nvcc-without-cxx17" not in _ids("g++: error: unrecognized command line option '-std=c++17'")


def test_map_at_on_turing_names_the_gpu():
    # state-spaces/mamba#361 and #516 (the reporter's traceback tail on an RTX 2080 Ti)
    assert _codes("Mamba-2: IndexError: map::at\n\nrtx2080ti with driver version 535.171.04\n")[:1] == [
        "gpu-arch-lacks-dtype"]
    text = ('  File "/home/u/anaconda3/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py", line 228, '
            "in make_llir\n    pm.run(mod)\nIndexError: map::at\n\nMy GPU: Tesla T4,\nTrition: 3.0.0.\n")
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_map_at_beside_an_ampere_gpu_is_no_dtype_problem():
    text = "GPU 0: NVIDIA A100-SXM4-80GB\nIndexError: map::at\n"
    assert "gpu-arch-lacks-dtype" not in _codes(text)[:1]


def test_map_at_near_misses_stay_quiet():
    for line in (
        "terminate called after throwing an instance of 'std::out_of_range'",
        "  what():  map::at",
        "Engine loop failed with error: map::at",
        "KeyError: 'map'",
    ):
        assert "triton-map-at-pre-ampere" not in _ids(line)


def test_rwkv_peft_quote_names_the_missing_bf16():
    # Joluck/RWKV-PEFT#60 (the reporter's two sentences)
    text = ("如果使用fla的话，就只能使用float32训练，我的显卡好像不支持bf16计算'.bf16' requires .target sm_80 or higher\n\n"
            "我试了一下fp32，仍然碰到'cvt with .f32.bf16' requires .target sm_80 or higher这个问题\n")
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_bf16_near_misses_keep_their_reading():
    # the mma shape before sm_80 is another code's (framework-gpu-arch-unsupported); fp8 needs sm_89
    assert "gpu-lacks-bf16-fp8" not in _ids(
        "ptxas /tmp/x.ptx, line 5; error   : Feature '.m16n8k16' requires .target sm_80 or higher")
    assert "gpu-lacks-bf16-fp8" not in _ids("bf16 requires a GPU of sm_80 or higher")
    assert "gpu-lacks-bf16-fp8" not in _ids("'.bf16' requires .target sm_90 or higher")
