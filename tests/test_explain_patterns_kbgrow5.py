"""Issue 8 items 2, 3 and 7 (kbgrow5): what explain missed on 36 fresh training threads of LLM
inference and serving users (vLLM, SGLang, Ollama, llama.cpp and the servers built on it,
exllamav2, AutoGPTQ/AutoAWQ, TensorRT-LLM, lmdeploy, MLC-LLM, ktransformers, xinference;
tests/corpus/explain/*.log with ``# collected: training-2026-12-01k``), fixed by class.

- The GPU idle under a llama.cpp-based runtime: with a CUDA build nothing moves to the GPU
  unless layers are asked for (``-ngl``, ``n_gpu_layers``, ``--gpulayers``, ``gpu_layers:``).
  New code ``llm-gpu-layers-not-offloaded``; users' words for the GPU not used ('it uses the
  cpu', 'still uses only my CPU', 'the GPU is 0%') now reach the symptom, whose causes include
  it, a CPU-only build of a framework, a GPU lost after suspend and a GPU too old for the
  runtime; the log's words (``--usecublas``, ``gpu_layers``, ``LocalAI``, ``sleep``) decide.
- llama.cpp's own words for a build without a GPU backend, old and new ('was compiled without
  support for GPU offload', 'was compiled without cuBLAS. It is not possible to set ...',
  'no usable GPU found, --gpu-layers option will be ignored'), as its forks print them.
- The quantization kernels' own words when their compiled module does not load: AutoGPTQ
  ('CUDA extension not installed.', 'CUDA kernels for auto_gptq are not installed', exllama
  kernels), AutoAWQ ('AWQ kernels could not be loaded', 'could not load GEMM kernels extension.
  Details: ...', whose details decide), the NameError of a module whose import was swallowed,
  and Windows' 'DLL load failed while importing exllamav2_ext'.
- A GPU older than the runtime's kernels: vLLM's (and SGLang's) capability gate for a
  quantization method, and ptxas refusing instructions the target architecture lacks.
- Ollama's GPU discovery failing with the CUDA runtime's unknown error (cudart init failure
  999), the state a suspend leaves nvidia_uvm in.

Messages are the programs' own wording (each signature's ``source`` names the file); the users'
words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "framework-cpu-only-build": [
        # llama.cpp common/arg.cpp (llama_supports_gpu_offload() false)
        "warning: llama.cpp was compiled without support for GPU offload. Setting the split mode has no effect.",
        "warning: llama.cpp was compiled without support for GPU offload. Setting a tensor split has no effect.",
        "warning: no usable GPU found, --gpu-layers option will be ignored",
        # llama.cpp common/common.cpp and examples/server before 2024, and forks
        "warning: llama.cpp was compiled without cuBLAS. It is not possible to set a main GPU.",
        "llama.cpp was compiled without cuBLAS. It is not possible to set a tensor split.",
        "warning: PowerInfer was compiled without cuBLAS. It is not possible to set a VRAM budget.",
        "warning: not compiled with GPU offload support, --n-gpu-layers option will be ignored",
        '{"timestamp":1699689763,"level":"WARNING","function":"server_params_parse","line":871,'
        '"message":"Not compiled with GPU offload support, --n-gpu-layers option will be ignored. '
        'See main README.md for information on enabling GPU BLAS support"}',
    ],
    "kernel-extension-not-built": [
        # auto_gptq/nn_modules/qlinear/qlinear_cuda.py, modeling/_base.py, qlinear_exllama.py
        "WARNING:auto_gptq.nn_modules.qlinear.qlinear_cuda:CUDA extension not installed.",
        "WARNING - CUDA kernels for auto_gptq are not installed, this will result in very slow inference speed. "
        "This may because:",
        "Exllama kernel is not installed, reset disable_exllama to True. This may because you installed "
        "auto_gptq using a pre-build wheel on Windows, in which exllama_kernels are not compiled.",
        "Exllamav2 kernel is not installed, reset disable_exllamav2 to True.",
        "ERROR:auto_gptq.nn_modules.qlinear.qlinear_exllama:exllama_kernels not installed.",
        # AutoAWQ awq/modules/fused and linear/gemm.py
        "AssertionError: AWQ kernels could not be loaded. Please install them from "
        "https://github.com/casper-hansen/AutoAWQ_kernels",
        "ValueError: auto-awq kernels is needed to be installed to use `.backward()`. Make sure to install "
        "the auto-awq kernels by following the installation guides in https://github.com/casper-hansen/AutoAWQ_kernels",
        "UserWarning: AutoAWQ could not load GEMV kernels extension. Details: No module named 'awq_ext'",
    ],
    "extension-torch-mismatch": [
        # a compiled module's import swallowed, its name used later (exllamav2/ext.py, AutoAWQ gemm.py)
        "NameError: name 'awq_ext' is not defined",
        "NameError: name 'exllamav2_ext' is not defined",
        "NameError: name 'autogptq_cuda_256' is not defined",
        # CPython's Windows loader for a module built against another torch (turboderp-org/exui#37)
        "ImportError: DLL load failed while importing exllamav2_ext: The specified procedure could not be found.",
        # AutoAWQ's details holding the loader's undefined symbol
        "UserWarning: AutoAWQ could not load GEMM kernels extension. Details: /usr/local/lib/python3.10/"
        "site-packages/awq_ext.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    ],
    "library-missing": [
        # casper-hansen/AutoAWQ#579: AutoAWQ's details holding a missing CUDA 12 runtime
        "UserWarning: AutoAWQ could not load ExLlamaV2 kernels extension. Details: libcudart.so.12: "
        "cannot open shared object file: No such file or directory",
    ],
    "framework-gpu-arch-unsupported": [
        # vLLM's capability gate (vllm/config), and compressed-tensors' scheme check
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
        "Current capability: 70.",
        # (the FP8/FP4 methods' minimum reads gpu-arch-lacks-dtype since harv33c: vllm#4327, see
        # tests/test_explain_harv33c.py)
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
        "'Current capability: 75.')",
        # ptxas, building AWQ kernels for a T4 (mit-han-lab/llm-awq#204, vllm-project/vllm#1063)
        "ptxas /tmp/tmpxft_0000f5ba_00000000-6_gemm_cuda_gen.ptx, line 709; error   : Feature '.m16n8k16' "
        "requires .target sm_80 or higher",
    ],
    "cuda-init-failed": [
        # ollama discover/gpu_info_cudart.c, as gpu.go logs it (ollama/ollama#6647)
        'time=2024-09-05T09:20:35.624+08:00 level=DEBUG source=gpu.go:533 msg="Unable to load cudart" '
        'library=/tmp/ollama786265597/runners/cuda_v11/libcudart.so.11.0 error="cudart init failure: 999"',
        "cudaSetDevice err: 999",
    ],
    "llm-gpu-layers-not-offloaded": [
        # llama.cpp src/llama-model.cpp load_tensors (llm_load_tensors before 2024-10)
        "llm_load_tensors: offloaded 0/33 layers to GPU",
        "load_tensors: offloaded 0/29 layers to GPU",
    ],
    "native-crash-in-gpu-library": [
        # ollama llm/server.go WaitUntilRunning (ollama/ollama#7031, #4442)
        "Error: llama runner process has terminated: exit status 0xc0000409",
        "Error: llama runner process has terminated: exit status 2",
    ],
    "host-oom-killed": [
        # the same, when the kernel's OOM killer ended the runner (Go's exec: 'signal: killed')
        "Error: llama runner process has terminated: signal: killed",
    ],
    "model-load-hang": [
        # users' words for a server that stops at a loading step (vllm-project/vllm#7303,
        # kvcache-ai/ktransformers#1367, Chen-zexi/vllm-cli#8)
        "hangs after above logs",
        "[Bug]: vllm hangs after model download / load",
        "\u6267\u884c\u4e0b\u9762\u7684\u547d\u4ee4\u65f6\u6ca1\u6709\u62a5\u9519\uff0c\u4f46\u662f\u4f1a\u5361\u5728loading model.layers.12\u4e0a",
        "The server gets stuck at Loading model weights... This may take a while",
    ],
    "torch-cpu-only-build": [
        # tabbyAPI common/hardware.py torch_gpu_problem
        "The installed PyTorch (2.7.0+cpu) is a CPU-only build, with neither CUDA nor ROCm support, so "
        "ExLlamaV3 cannot use a GPU.",
    ],
    "torch-cuda-unavailable": [
        "The installed PyTorch (2.7.0+cu128) is built for CUDA 12.8 but found no usable GPU. Check that an "
        "NVIDIA GPU with a current driver is present",
        # the start-up check of serving scripts (h2oai/h2ogpt#1624 quotes it)
        "No GPUs detected",
        "WARNING: No GPU detected.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_new_root_is_sourced_and_says_what_to_do = sourced_roots_test(["llm-gpu-layers-not-offloaded"])


# --- users' words for the GPU not used, and the context that decides among its causes ---------

# (a log as the thread pasted it, the cause the log's context points to)
GPU_NOT_USED_IN_CONTEXT = [
    # LostRuins/koboldcpp#723
    ("when i run the latest prebuilt binary with:\n./koboldcpp-linux-x64 --usecublas\n\n"
     "it uses the cpu even though i have the latest drivers/cuda, am i missing some flag or config?\n",
     "llm-gpu-layers-not-offloaded"),
    # mudler/LocalAI#586
    ("Despite building with cuBLAS, `LocalAI` still uses only my CPU by the looks of it.\n",
     "llm-gpu-layers-not-offloaded"),
    # mudler/LocalAI#1108
    ("When i tried to set gpu-layer for gpt4all-j-groovy with gpt4all backend.\n\nLocalAi use CPU instead of GPU.\n",
     "llm-gpu-layers-not-offloaded"),
    # a llama-cpp-python install (pip's default build has no CUDA backend)
    ("pip install llama-cpp-python\nThe model loads but it still uses only my CPU\n", "framework-cpu-only-build"),
    # ollama/ollama#6647: after the laptop slept
    ("can't use nvidia GPU only after sleep\n\nafter gentoo linux sleep, ollama only use cpu\n", "nvidia-uvm-broken-after-suspend"),
]


@pytest.mark.parametrize("text,code", GPU_NOT_USED_IN_CONTEXT, ids=[c for _, c in GPU_NOT_USED_IN_CONTEXT])
def test_the_gpu_not_used_is_decided_by_the_logs_context(text, code):
    expl = explain_text(text)
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    assert expl.candidates[0].confidence == "inferred"
    assert "torch-cuda-unavailable" in [c.code for c in expl.candidates]
    assert expl.exit_code == 1


@pytest.mark.parametrize("line", [
    "it uses the cpu even though i have the latest drivers",
    "It still uses only my CPU by the looks of it.",
    "ollama only use cpu",
    "my CPU usage is 100% and the GPU is 0%.",
])
def test_users_words_without_context_stay_the_symptom(line):
    assert _codes(line + "\n")[:1] == ["torch-cuda-unavailable"]


def test_ollamas_unknown_error_after_sleep_is_the_suspend():
    log = ("after gentoo linux sleep, ollama only use cpu\n"
           "cudaSetDevice err: 999\n"
           'time=2024-09-05T09:20:35.624+08:00 level=DEBUG source=gpu.go:533 msg="Unable to load cudart" '
           'library=/opt/cuda/lib64/libcudart.so.12.6.37 error="cudart init failure: 999"\n')
    assert _codes(log)[:2] == ["nvidia-uvm-broken-after-suspend", "cuda-init-failed"]


def test_ollamas_insufficient_driver_stays_the_driver():
    # code 35 is the driver's, not the unknown error's (ollama prints its own sentence for it)
    line = 'msg="Unable to load cudart" library=/usr/lib/libcudart.so.12 error="cudart init failure: 35"'
    assert _codes(line + "\n")[:1] == ["driver-too-old-for-build"]


def test_the_runners_own_reason_outranks_its_exit():
    # the runner's error, when Ollama passes it on, names the cause (llama.cpp's loader)
    line = "Error: llama runner process has terminated: error loading model: unknown model architecture: 'gemma3'"
    assert _codes(line + "\n")[:1] == ["model-architecture-unsupported"]


def test_a_load_that_stops_ranks_host_memory_first():
    expl = explain_text("INFO 08-12 14:54:49 selector.py:79] Using Flashinfer backend.\nhangs after above logs\n")
    top = expl.candidates[0]
    assert top.code == "model-load-hang" and list(top.could_be)[:1] == ["host-oom-killed"], (top.code, top.could_be)
    assert expl.exit_code == 1


def test_a_training_hang_stays_a_collectives_hang():
    assert _codes("the training hangs at step 100 on 8 GPUs\n")[:1] == ["collective-hang"]


def test_zero_layers_next_to_a_cpu_only_build_is_the_build():
    log = ("warning: no usable GPU found, --gpu-layers option will be ignored\n"
           "llm_load_tensors: offloaded 0/33 layers to GPU\n")
    assert _codes(log)[:1] == ["framework-cpu-only-build"]


# Healthy lines of the same programs, and sentences that share words with the shapes above
HEALTHY = [
    "llm_load_tensors: offloaded 33/33 layers to GPU",
    "load_tensors: offloaded 29/29 layers to GPU",
    "ggml_cuda_init: found 1 CUDA devices:",
    'time=2024-09-05T09:20:35.622+08:00 level=DEBUG source=gpu.go:521 msg="discovered GPU libraries" '
    'paths="[/tmp/ollama786265597/runners/cuda_v11/libcudart.so.11.0]"',
    "Successfully installed autoawq-0.2.5 autoawq-kernels-0.0.6",
    "INFO 01-09 06:24:15 model_runner.py:1092] Starting to load model Qwen/Qwen2-VL-7B-Instruct-AWQ...",
    "It uses the GPU for the forward pass and the CPU for sampling",
    "Benchmark mode uses the CPU for tokenization",
    "GPU 0: NVIDIA GeForce RTX 4090, the GPU is 97% busy",
    "Building exllamav2_ext (this may take a while) ...",
    # a load that finishes, and a hang that is not a load's
    "INFO 08-12 14:54:50 model_runner.py:732] Loading model weights took 4.9 GB",
    # a library's own sentence that holds the words (sgl-kernel's variant notice)
    "- Expected variant: CPU/No GPU detected (using precise math)",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)
