"""src45 (issue 8 item 2): messages harvested from the programs' own source: bitsandbytes' library loading
across its releases (0.37's CPU-library fallback, the multi-backend releases' ROCm wording), TensorRT-LLM's
C++ and Python GPU-architecture checks (bfloat16 before Ampere, the FP8 block-scaling GEMM), HIP's
fat-binary loader naming a library without the GPU's code object, and text-embeddings-inference's image
built for another compute capability. docs/dev/src45.md says what was read;
the lists docs/dev/src45-*.txt hold every message listed and explain's answer before and after.

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). The messages that stop a run go through the wrappers of
tests/test_explain_patterns.py and must rank their code first. The warnings must name their code in a log
that fails, and stay silent alone. Near misses and healthy lines that must not name the new signatures
follow.
"""

from __future__ import annotations

import pytest

from explain_helpers import codes, silent
from test_explain_patterns import family_tests, healthy_test, ids

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "bitsandbytes-cuda-setup-failed": [
        # bitsandbytes 0.37.0 bitsandbytes/cuda_setup/main.py evaluate_cuda_setup (warnings before the CPU library)
        "WARNING: No GPU detected! Check your CUDA paths. Proceeding to load CPU-only library...",
        "WARNING: No libcudart.so found! Install CUDA or the cudatoolkit package (anaconda)!",
        # bitsandbytes multi-backend releases bitsandbytes/cextension.py (ROCm build)
        "ROCm Setup failed despite ROCm being available. Please run the following command to get more "
        "information:",
        "Could not find the bitsandbytes ROCm binary at PosixPath('/opt/conda/lib/python3.10/site-packages/"
        "bitsandbytes/libbitsandbytes_rocm62.so')",
    ],
    "gpu-arch-lacks-dtype": [
        # TensorRT-LLM cpp/tensorrt_llm/common/attentionOp.cpp and the plugins (TLLM_CHECK_WITH_INFO)
        "[TensorRT-LLM][ERROR] Assertion failed: Unsupported data type, pre SM 80 GPUs do not support bfloat16 "
        "(/src/tensorrt_llm/cpp/tensorrt_llm/common/attentionOp.cpp:2615)",
        # TensorRT-LLM tensorrt_llm/llmapi/llm_args.py validate_dtype
        "RuntimeError: Pre SM 80 GPUs do not support bfloat16",
        # TensorRT-LLM cpp/tensorrt_llm/thop/fp8BlockScalingGemm.cpp (no GPU named: the GPU's lack)
        "RuntimeError: Unsupported SM version for FP8 block scaling GEMM",
    ],
    "framework-gpu-arch-unsupported": [
        # text-embeddings-inference backends/candle/src/lib.rs CandleBackend::new (an image for another GPU)
        "Could not start backend: Runtime compute cap 89 is not compatible with compile time compute cap 80",
        "Runtime compute cap 75 is not compatible with compile time compute cap 80",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)

# warnings: code -> messages; each names its code in a log that fails, and nothing alone
WARNINGS = {
    "rocm-gpu-arch-unsupported": [
        # ROCm/clr hipamd/src/hip_fatbin.cpp (AMD_LOG_LEVEL's error level)
        ":1:hip_fatbin.cpp           :255 : 95708404069 us: [pid:2117 tid:0x7ca06301e740] Cannot find CO in the "
        "bundle /usr/local/lib/python3.10/site-packages/torch/lib/libtorch_hip.so for ISA: "
        "amdgcn-amd-amdhsa--gfx1031",
        ":1:hip_fatbin.cpp           :109 : 95708404081 us: [pid:2117 tid:0x7ca06301e740] Missing CO for these "
        "ISAs - ",
        # later releases' wording (neither native, generic nor SPIR-V code object)
        ":1:hip_fatbin.cpp           :411 : 1234567 us: [pid:2117 tid:0x7ca06301e740] No compatible code objects "
        "found for: gfx1031, value of HIP_FORCE_SPIRV_CODEOBJECT: 0",
    ],
}
WARNING_CASES = [(code, msg) for code, msgs in WARNINGS.items() for msg in msgs]

FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 40, in <module>\n'
    "    main()\n"
    "RuntimeError: run failed\n"
)


@pytest.mark.parametrize("code,msg", WARNING_CASES)
def test_warning_names_its_code_where_the_log_fails(code, msg):
    assert codes(msg + "\n" + FAILURE)[:1] == [code], codes(msg + "\n" + FAILURE)


@pytest.mark.parametrize("code,msg", WARNING_CASES)
def test_warning_alone_is_silent(code, msg):
    assert silent("starting\n" + msg + "\nepoch 1 done\n")


@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "2026-12-07 10:00:00,123 WARNING ", "> "])
@pytest.mark.parametrize("code,msg", WARNING_CASES)
def test_warning_prefixed_or_quoted(code, msg, prefix):
    assert codes(prefix + msg + "\n" + FAILURE)[:1] == [code], codes(prefix + msg + "\n" + FAILURE)


# every new (or widened) signature id, and one message above that it must match on its own
NEW_SIGNATURES = {
    "bnb-037-cpu-library-fallback": FAMILIES["bitsandbytes-cuda-setup-failed"][1],
    "bitsandbytes-cuda-setup": FAMILIES["bitsandbytes-cuda-setup-failed"][2],
    "bitsandbytes-native-library-analysis": FAMILIES["bitsandbytes-cuda-setup-failed"][3],
    "trtllm-pre-sm80-no-bfloat16": FAMILIES["gpu-arch-lacks-dtype"][0],
    "trtllm-fp8-block-scaling-arch-refused": FAMILIES["gpu-arch-lacks-dtype"][2],
    "trtllm-fp8-block-scaling-release-predates-gpu": FAMILIES["gpu-arch-lacks-dtype"][2],
    "hip-fatbin-missing-code-object": WARNINGS["rocm-gpu-arch-unsupported"][0],
    "tei-image-built-for-other-compute-cap": FAMILIES["framework-gpu-arch-unsupported"][0],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # bitsandbytes 0.37-0.42 on a working GPU
    "CUDA SETUP: Loading binary /usr/local/lib/python3.10/dist-packages/bitsandbytes/libbitsandbytes_cuda118.so...",
    "CUDA SETUP: PyTorch settings found: CUDA_VERSION=118, Highest Compute Capability: 8.6.",
    "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so.11.0",
    "CUDA SETUP: Highest compute capability among GPUs detected: 8.6",
    "CUDA SETUP: Detected CUDA version 117",
    # TensorRT-LLM's model config falling back to float16 on a pre-Ampere GPU (the run goes on)
    "[TensorRT-LLM][WARNING] Pre SM 80 GPUs do not support bfloat16, fallback to float16",
    # HIP on a working GPU
    ":3:hip_fatbin.cpp           :230 : 95708404069 us: [pid:2117 tid:0x7ca06301e740] Found CO in the bundle "
    "for ISA: amdgcn-amd-amdhsa--gfx1100",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # bitsandbytes' CPU library on a machine without a GPU (0.37 returns before its lookups) and a CUDA path
    ("CUDA SETUP: Loading binary /usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda117.so...",
     "bnb-037-cpu-library-fallback"),
    ("No GPU detected on this node", "bnb-037-cpu-library-fallback"),
    ("Found libcudart.so at /usr/local/cuda/lib64", "bnb-037-cpu-library-fallback"),
    # another program's "setup failed" and another binary
    ("Driver Setup failed despite retries", "bitsandbytes-cuda-setup"),
    ("Could not find the bitsandbytes NPU binary at /x/libbitsandbytes_npu.so", "bitsandbytes-native-library-analysis"),
    # TensorRT-LLM's fallback warning and a bfloat16 note on an Ampere GPU
    ("Pre SM 80 GPUs do not support bfloat16, fallback to float16", "trtllm-pre-sm80-no-bfloat16"),
    ("SM 80 GPUs support bfloat16", "trtllm-pre-sm80-no-bfloat16"),
    # TensorRT-LLM's other dispatch errors (not the SM version)
    ("RuntimeError: Matrix dtype must be FP8.", "trtllm-fp8-block-scaling-arch-refused"),
    ("Unsupported data type for FP8 block scaling GEMM", "trtllm-fp8-block-scaling-arch-refused"),
    # text-embeddings-inference's early Blackwell images refusing their own compute capability (a bug of
    # the release, TEI issue 652), and the same numbers glued to the next line by a wrap repair
    ("Runtime compute cap 120 is not compatible with compile time compute cap 120",
     "tei-image-built-for-other-compute-cap"),
    ("Runtime compute cap 90 is not compatible with compile time compute cap 90step 2",
     "tei-image-built-for-other-compute-cap"),
    # HIP finding the code object
    ("Found CO in the bundle /opt/x.so for ISA: gfx1100", "hip-fatbin-missing-code-object"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_bnb_037_fallback_is_bitsandbytes_not_torch():
    """0.37's lookups run only where torch sees the GPU: its 'No GPU detected' is bitsandbytes' own lookup
    failing (libcuda.so by its unversioned name), not torch without CUDA: the loader's line and the
    fallback head the answer, torch's symptom (from the words 'No GPU detected') comes after them."""
    log = (
        "===================================BUG REPORT===================================\n"
        "Welcome to bitsandbytes. For bug reports, please submit your error trace to: "
        "https://github.com/TimDettmers/bitsandbytes/issues\n"
        "================================================================================\n"
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, "
        "make sure you are on a CUDA machine!\n"
        "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n"
        "/usr/lib/python3/dist-packages/bitsandbytes/cuda_setup/main.py:136: UserWarning: WARNING: No GPU "
        "detected! Check your CUDA paths. Proceeding to load CPU-only library...\n"
        "  warn(msg)\n"
        "CUDA SETUP: Loading binary /usr/lib/python3/dist-packages/bitsandbytes/libbitsandbytes_cpu.so...\n"
    )
    found = codes(log)
    assert "torch-cuda-unavailable" not in found[:1], found
    assert set(found[:2]) == {"bitsandbytes-cuda-setup-failed", "libcuda-missing"}, found


def test_bnb_037_no_libcudart_then_cpu_library_undefined_symbol():
    log = (
        "WARNING: No libcudart.so found! Install CUDA or the cudatoolkit package (anaconda)!\n"
        "CUDA SETUP: Loading binary /opt/conda/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cpu.so...\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    optimizer.step()\n"
        "AttributeError: /opt/conda/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined "
        "symbol: cadam32bit_grad_fp32\n"
    )
    assert codes(log)[:1] == ["bitsandbytes-cuda-setup-failed"], codes(log)


FP8_BLOCK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/modules/linear.py", line 600, in apply\n'
    "    output = torch.ops.trtllm.fp8_block_scaling_gemm(act_input_fp8, module.weight, act_input_sf, "
    "module.weight_scale)\n"
    "RuntimeError: Unsupported SM version for FP8 block scaling GEMM\n"
)


@pytest.mark.parametrize("gpu,code", [
    (None, "gpu-arch-lacks-dtype"),
    ("NVIDIA A100-SXM4-80GB", "gpu-arch-lacks-dtype"),
    ("Tesla V100-SXM2-32GB", "gpu-arch-lacks-dtype"),
    ("NVIDIA GeForce RTX 5090", "framework-gpu-arch-unsupported"),
    ("NVIDIA L40S", "framework-gpu-arch-unsupported"),
])
def test_trtllm_fp8_block_scaling_split_by_the_gpu(gpu, code):
    """Below sm_89 the GPU has no FP8; on sm_89 or newer the release's switch leaves the GPU out."""
    log = ("GPU 0: %s\n" % gpu if gpu else "") + FP8_BLOCK
    assert codes(log)[:1] == [code], codes(log)


def test_trtllm_bfloat16_refusal_in_the_executor_log():
    log = (
        "[TensorRT-LLM][INFO] Initializing MPI with thread mode 3\n"
        "[TensorRT-LLM][ERROR] Assertion failed: Unsupported data type, pre SM 80 GPUs do not support bfloat16 "
        "(/src/tensorrt_llm/cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp:422)\n"
        "1       0x7f2a3c0a1234 tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 100\n"
    )
    assert codes(log)[:1] == ["gpu-arch-lacks-dtype"], codes(log)


def test_hip_missing_code_object_then_no_binary_for_gpu():
    log = (
        ":1:hip_fatbin.cpp           :255 : 95708404069 us: [pid:2117 tid:0x7ca0] Cannot find CO in the bundle "
        "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so for ISA: amdgcn-amd-amdhsa--gfx1031\n"
        ":1:hip_fatbin.cpp           :109 : 95708404081 us: [pid:2117 tid:0x7ca0] Missing CO for these ISAs - \n"
        ":1:hip_fatbin.cpp           :112 : 95708404085 us: [pid:2117 tid:0x7ca0]      amdgcn-amd-amdhsa--gfx1031\n"
        "Traceback (most recent call last):\n"
        '  File "gen.py", line 8, in <module>\n'
        "    x = torch.ones(4, device='cuda') * 2\n"
        "RuntimeError: HIP error: invalid device function\n"
    )
    assert codes(log)[:1] == ["rocm-gpu-arch-unsupported"], codes(log)


def test_tei_compute_cap_in_the_router_error():
    log = (
        '2026-12-07T10:00:00.123456Z  INFO text_embeddings_router: router/src/main.rs:175: Args { model_id: '
        '"BAA*/***-****-**-v1.5", revision: None }\n'
        "Error: Could not create backend\n"
        "\n"
        "Caused by:\n"
        "    Could not start backend: Runtime compute cap 89 is not compatible with compile time compute cap 80\n"
    )
    assert codes(log)[:1] == ["framework-gpu-arch-unsupported"], codes(log)


def test_tei_same_compute_cap_is_not_named():
    """An equal pair is the release's own bug: the signature stays out (nothing else names it either)."""
    assert "framework-gpu-arch-unsupported" not in codes(
        "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime compute cap 120 is "
        "not compatible with compile time compute cap 120\n"
    )
