"""src44 (issue 8 item 2): messages harvested from the programs' own source: TensorRT-LLM's Python package,
mmcv's setup.py, detectron2's launcher and its compiled-module import, Ray Tune's and Ray Train's
insufficient-resources warning, and NVIDIA DALI's start-up checks. docs/dev/src44.md says what was read; the
lists docs/dev/src44-*.txt hold every message listed and explain's answer before and after.

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). The messages that stop a run go through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word wrap and
terminal cuts at 80 columns, CRLF, container log formats) and must rank their code first. The warnings (a
run may go on after them) must name their code in a log that fails, and stay silent alone. Near misses and
healthy lines that must not name the new signatures follow.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "extension-torch-mismatch": [
        # TensorRT-LLM tensorrt_llm/_bootstrap.py _init (and _common.py _init), then the 0.x wording
        "FATAL: Decoding operators failed to load. This may be caused by an incompatibility between PyTorch "
        "and TensorRT-LLM. Please rebuild and install TensorRT-LLM.",
        "FATAL: Decoding operators failed to load. This may be caused by the incompatibility between PyTorch "
        "and TensorRT-LLM. Please rebuild and install TensorRT-LLM.",
    ],
    "build-isolation-hides-torch": [
        # mmcv setup.py (module level, 1.x and 2.x)
        "Skip building ext ops due to the absence of torch.",
    ],
    "kernel-extension-not-built": [
        # CPython's import_from while the package is still initializing, no _C beside it
        "ImportError: cannot import name '_C' from partially initialized module 'detectron2' (most likely due "
        "to a circular import) (/home/user/detectron2/detectron2/__init__.py)",
        "ImportError: cannot import name '_C' from partially initialized module 'pytorch3d' (most likely due "
        "to a circular import) (/src/pytorch3d/pytorch3d/__init__.py)",
    ],
    "device-ordinal-out-of-range": [
        # detectron2 detectron2/engine/launch.py launch: the traceback's source line of a bare AssertionError
        "    assert num_gpus_per_machine <= torch.cuda.device_count()\nAssertionError",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # ray python/ray/tune/execution/insufficient_resources_manager.py (Tune, then Train)
        "Ignore this message if the cluster is autoscaling. No trial is running and no new trial has been "
        "started within the last 60 seconds. This could be due to the cluster not having enough resources "
        "available. You asked for 4.0 CPUs and 1.0 GPUs per trial, but the cluster only has 16.0 CPUs and 0 "
        "GPUs available. Stop the tuning and adjust the required resources (e.g. via the `ScalingConfig` or "
        "`resources_per_trial`, or `num_workers` for rllib), or add more resources to your cluster.",
        "Ignore this message if the cluster is autoscaling. Training has not started in the last 60 seconds. "
        "This could be due to the cluster not having enough resources available. You asked for 1.0 CPUs and "
        "0.5 GPUs, but the cluster only has 8.0 CPUs and 0 GPUs available.",
    ],
    "libcuda-missing": [
        # NVIDIA DALI dali/core/dynlink_cuda.cc loadCudaLibrary
        'dlopen "libcuda.so" failed!',
    ],
    "gpu-out-of-memory": [
        # NVIDIA DALI include/dali/core/cuda_error.h CUDABadAlloc(requested_size), as DALI's pipeline wraps it
        "RuntimeError: Critical error in pipeline:\nError when executing Mixed operator ImageDecoder encountered:\n"
        "Can't allocate 129499136 bytes on device 0.\nCurrent pipeline object is no longer valid.",
    ],
}

# symptoms: their code heads the answer only where nothing narrower is named
SYMPTOMS = {
    "torch-cuda-unavailable": [
        # NVIDIA DALI dali/core/device_guard.cc DeviceGuard
        'RuntimeError: [/opt/dali/dali/core/device_guard.cc:33] Assert on "cuInitChecked()" failed: Failed to load '
        "libcuda.so. Check your library paths and if the driver is installed correctly.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)
test_symptom_in_every_wrapper, test_symptom_own_signature = family_tests(SYMPTOMS)

# warnings: code -> messages; each names its code in a log that fails, and nothing alone
WARNINGS = {
    "framework-cpu-only-build": [
        # mmcv setup.py get_extensions (1.4+ and 2.x), then 1.0-1.3
        "Compiling mmcv._ext only with CPU",
        "Compiling mmcv._ext without CUDA",
    ],
    "library-missing": [
        # NVIDIA DALI dali/python/nvidia/dali/backend.py check_cuda_runtime
        "/venv/lib/python3.10/site-packages/nvidia/dali/backend.py:99: Warning: Cannot access cuFFT library. "
        "Please check cuda installation and/or if an appropriate wheel is installed.",
        "Warning: Cannot access NPP library. Please check cuda installation and/or if an appropriate wheel is "
        "installed.",
        "Warning: Cannot access nvJPEG library. Please check cuda installation and/or if an appropriate wheel "
        "is installed.",
    ],
    "torch-cuda-unavailable": [
        # NVIDIA DALI backend.py check_cuda_runtime
        "/venv/lib/python3.10/site-packages/nvidia/dali/backend.py:99: Warning: GPU is not available. Only CPU "
        "operators are available.",
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
    expl = explain_text(msg + "\n" + FAILURE)
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]


@pytest.mark.parametrize("code,msg", WARNING_CASES)
def test_warning_alone_is_silent(code, msg):
    expl = explain_text("starting\n" + msg + "\nepoch 1 done\n")
    assert expl.candidates == () and expl.exit_code == 0, [c.code for c in expl.candidates]


@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "2026-12-07 10:00:00,123 WARNING ", "> "])
@pytest.mark.parametrize("code,msg", WARNING_CASES)
def test_warning_prefixed_or_quoted(code, msg, prefix):
    expl = explain_text(prefix + msg + "\n" + FAILURE)
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]


# every new (or widened) signature id, and one message above that it must match on its own
NEW_SIGNATURES = {
    "trtllm-decoding-ops-failed-to-load": FAMILIES["extension-torch-mismatch"][0],
    "mmcv-setup-skip-ops-no-torch": FAMILIES["build-isolation-hides-torch"][0],
    "package-compiled-module-name-missing": FAMILIES["kernel-extension-not-built"][0],
    "detectron2-launch-gpus-exceed-device-count": FAMILIES["device-ordinal-out-of-range"][0].split("\n")[0],
    "ray-tune-cluster-has-no-gpus": FAMILIES["scheduler-gpu-request-unsatisfiable"][1],
    "dali-dlopen-libcuda-failed": FAMILIES["libcuda-missing"][0],
    "dali-cant-allocate-on-device": "Can't allocate 129499136 bytes on device 0.",
    "dali-cuinit-failed": SYMPTOMS["torch-cuda-unavailable"][0],
    "mmcv-setup-compiling-without-cuda": WARNINGS["framework-cpu-only-build"][1],
    "dali-cuda-library-not-accessible": WARNINGS["library-missing"][2],
    "dali-gpu-not-available": WARNINGS["torch-cuda-unavailable"][0],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # TensorRT-LLM's start-up lines
    "[TensorRT-LLM] TensorRT LLM version: 0.21.0 (backend: cuda)",
    "[TensorRT-LLM][INFO] Initializing MPI with thread mode 3",
    # mmcv built for Ascend NPUs, and with CUDA
    "Compiling mmcv._ext only with CPU and NPU",
    "building 'mmcv._ext' extension",
    # insightface on a working GPU
    "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: "
    "{'CUDAExecutionProvider': {'device_id': '0'}, 'CPUExecutionProvider': {}}",
    # Ray Tune asking for CPUs only
    "You asked for 32.0 CPUs and 0 GPUs per trial, but the cluster only has 16.0 CPUs and 0 GPUs available.",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # TensorRT-LLM's plugin check and another package's rebuild hint
    ("ImportError: TensorRT LLM Plugin is unavailable", "trtllm-decoding-ops-failed-to-load"),
    ("Operators failed to load. Please rebuild and install the package.", "trtllm-decoding-ops-failed-to-load"),
    # mmcv's other notices
    ("Skip building ext ops for MLU due to the absence of torch_mlu.", "mmcv-setup-skip-ops-no-torch"),
    ("Compiling mmcv._ext only with CPU and NPU", "mmcv-setup-compiling-without-cuda"),
    ("Compiling mmcv._ext only with CPU and DIPU", "mmcv-setup-compiling-without-cuda"),
    ("Compiling mmcv._ext with CUDA", "mmcv-setup-compiling-without-cuda"),
    # torch itself run from its source tree (another cause), and a name that is no compiled module
    ("ImportError: cannot import name '_C' from partially initialized module 'torch' (most likely due to a "
     "circular import)", "package-compiled-module-name-missing"),
    ("ImportError: cannot import name 'utils' from partially initialized module 'detectron2' (most likely due "
     "to a circular import)", "package-compiled-module-name-missing"),
    # another assertion in detectron2's launcher
    ("    assert num_machines == 1, \"dist_url=auto not supported in multi-machine jobs.\"",
     "detectron2-launch-gpus-exceed-device-count"),
    # Ray with some GPUs in the cluster (the numbers decide what is short), and a CPU-only trial
    ("You asked for 4.0 CPUs and 2.0 GPUs per trial, but the cluster only has 16.0 CPUs and 1.0 GPUs available.",
     "ray-tune-cluster-has-no-gpus"),
    ("You asked for 32.0 CPUs and 0 GPUs per trial, but the cluster only has 16.0 CPUs and 0 GPUs available.",
     "ray-tune-cluster-has-no-gpus"),
    # DALI's other dlopen notice and a library DALI found
    ('dlopen "libnvcuvid.so" failed!', "dali-dlopen-libcuda-failed"),
    ("Cannot access cuFFT plan cache: disabled", "dali-cuda-library-not-accessible"),
    # a GPU that is available
    ("GPU is available. Using GPU operators.", "dali-gpu-not-available"),
    # DALI's pinned host allocation (host RAM, memlock or WSL: not the GPU's memory)
    ("Can't allocate 1048576 bytes on host.", "dali-cant-allocate-on-device"),
    ("Failed to load libcudart.so. Check your library paths.", "dali-cuinit-failed"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def codes(log):
    return [c.code for c in explain_text(log).candidates]


def test_trtllm_missing_library_stays_first():
    """TensorRT-LLM puts the loader's error before its FATAL line: a missing library, named there, heads the
    answer; the torch mismatch the FATAL line suggests follows."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "run.py", line 1, in <module>\n'
        "    import tensorrt_llm\n"
        "ImportError: libnvinfer.so.10: cannot open shared object file: No such file or directory\n"
        "FATAL: Decoding operators failed to load. This may be caused by an incompatibility between PyTorch and "
        "TensorRT-LLM. Please rebuild and install TensorRT-LLM.\n"
    )
    assert codes(log)[:2] == ["library-missing", "extension-torch-mismatch"], codes(log)


def test_trtllm_undefined_symbol_and_fatal_line_agree():
    log = (
        "ImportError: /usr/local/lib/python3.10/dist-packages/tensorrt_llm/libs/libth_common.so: undefined "
        "symbol: _ZN3c1017RegisterOperatorsD1Ev\n"
        "FATAL: Decoding operators failed to load. This may be caused by an incompatibility between PyTorch and "
        "TensorRT-LLM. Please rebuild and install TensorRT-LLM.\n"
    )
    assert codes(log) == ["extension-torch-mismatch"], codes(log)


def test_mmcv_build_without_torch_is_named_beside_the_missing_ext():
    """The build notice and the later import failure are both named: mmcv._ext is missing because the build
    did not see torch."""
    log = (
        "  Building wheel for mmcv (setup.py): started\n"
        "  Skip building ext ops due to the absence of torch.\n"
        "  Building wheel for mmcv (setup.py): finished with status 'done'\n"
        "Successfully installed mmcv-2.1.0\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    from mmcv.ops import nms\n"
        "ModuleNotFoundError: No module named 'mmcv._ext'\n"
    )
    assert set(codes(log)[:2]) == {"kernel-extension-not-built", "build-isolation-hides-torch"}, codes(log)


def test_mmcv_cpu_build_then_missing_cuda_implementation():
    log = (
        "Compiling mmcv._ext only with CPU\n"
        "Successfully installed mmcv-2.1.0\n"
        "Traceback (most recent call last):\n"
        '  File "tools/train.py", line 9, in <module>\n'
        "    main()\n"
        "RuntimeError: nms_impl: implementation for device cuda:0 not found.\n"
    )
    assert codes(log)[:1] == ["framework-cpu-only-build"], codes(log)


def test_detectron2_launch_assertion_in_a_full_traceback():
    log = (
        "Traceback (most recent call last):\n"
        '  File "tools/train_net.py", line 190, in <module>\n'
        "    launch(\n"
        '  File "/opt/detectron2/detectron2/engine/launch.py", line 69, in launch\n'
        "    assert num_gpus_per_machine <= torch.cuda.device_count()\n"
        "AssertionError\n"
    )
    assert codes(log)[:1] == ["device-ordinal-out-of-range"], codes(log)


def test_dali_cuinit_failure_lists_the_driver_causes():
    expl = explain_text(SYMPTOMS["torch-cuda-unavailable"][0] + "\n")
    top = expl.candidates[0]
    assert top.code == "torch-cuda-unavailable"
    assert {"libcuda-missing", "no-nvidia-driver", "device-nodes-missing"} <= set(top.could_be), top.could_be


def test_dali_cufft_warning_before_the_pipeline_error():
    log = (
        "/venv/lib/python3.10/site-packages/nvidia/dali/backend.py:99: Warning: Cannot access cuFFT library. "
        "Please check cuda installation and/or if an appropriate wheel is installed.\n"
        "  deprecation_warning(\n"
        "Traceback (most recent call last):\n"
        '  File "pipe.py", line 20, in <module>\n'
        "    pipe.build()\n"
        "RuntimeError: Critical error when building pipeline:\n"
        "Error when constructing operator: spectrogram encountered:\n"
        "cuFFT error\n"
    )
    assert codes(log)[:1] == ["library-missing"], codes(log)


DALI_NO_KERNEL = (
    "RuntimeError: Critical error in pipeline:\n"
    "Error when executing GPU operator Resize encountered:\n"
    "CUDA runtime API error cudaErrorNoKernelImageForDevice (209):\n"
    "no kernel image is available for execution on the device\n"
    "Current pipeline object is no longer valid.\n"
)


@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "    "])
def test_dali_no_kernel_image_is_dalis_wheel_not_torch(prefix):
    """DALI's own CUDA error inside its pipeline error names DALI's build (framework-gpu-arch-unsupported),
    not torch's."""
    log = "".join(prefix + line + "\n" for line in DALI_NO_KERNEL.splitlines())
    assert codes(log)[:1] == ["framework-gpu-arch-unsupported"], codes(log)


def test_dali_no_kernel_image_in_a_full_traceback():
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 50, in <module>\n'
        "    for data in loader:\n"
        '  File "/venv/lib/python3.10/site-packages/nvidia/dali/plugin/pytorch.py", line 178, in __next__\n'
        "    outputs = self._get_outputs()\n" + DALI_NO_KERNEL
    )
    assert codes(log)[:1] == ["framework-gpu-arch-unsupported"], codes(log)


def test_torch_no_kernel_image_stays_torchs():
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 50, in <module>\n'
        "    out = model(x)\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert codes(log)[:1] == ["torch-arch-not-supported"], codes(log)


# TensorRT-LLM cpp/tensorrt_llm/common/attentionOp.cpp AttentionOp::initialize: the FP8 context-FMHA check, in
# three releases' wordings; the GPU the log names decides between the GPU's lack and the release's age
FP8_FMHA = [
    "[TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper Arch. "
    "(/src/tensorrt_llm/cpp/tensorrt_llm/common/attentionOp.cpp:1520)",
    "what():  [TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper or "
    "Blackwell Arch. (/code/tensorrt_llm/cpp/tensorrt_llm/common/attentionOp.cpp:2357)",
    "[TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA can only be enabled on sm_89, sm_90, sm_100f, sm_120 or "
    "sm_121. (/src/cpp/tensorrt_llm/common/attentionOp.cpp:2919)",
]


@pytest.mark.parametrize("msg", FP8_FMHA)
@pytest.mark.parametrize("gpu,code", [
    ("", "gpu-arch-lacks-dtype"),
    ("GPU: NVIDIA A100-SXM4-80GB\n", "gpu-arch-lacks-dtype"),
    ("GPU: Tesla V100-SXM2-32GB\n", "gpu-arch-lacks-dtype"),
    ("GPU: NVIDIA L40S\n", "framework-gpu-arch-unsupported"),
    ("[TRT-LLM] [I] Compute capability: (12, 1)\n", "framework-gpu-arch-unsupported"),
    ("GPU: NVIDIA GeForce RTX 5090\n", "framework-gpu-arch-unsupported"),
])
def test_trtllm_fp8_fmha_refusal_reads_the_gpu(msg, gpu, code):
    assert codes(gpu + msg + "\n")[:1] == [code], codes(gpu + msg + "\n")


@pytest.mark.parametrize("msg", FP8_FMHA)
def test_trtllm_fp8_fmha_signatures_match(msg):
    assert {"trtllm-fp8-fmha-arch-refused", "trtllm-fp8-fmha-release-predates-gpu"} <= set(ids(msg)), ids(msg)


def test_trtllm_test_suite_skip_reason_is_not_the_check():
    """TensorRT-LLM's own tests skip with a reason that reads alike; a skip is no failure of the user's run."""
    line = "SKIPPED [1] tests/integration/defs/test_e2e.py:420: FP8 FMHA cannot be enabled on Pre-Hopper Arch."
    assert not {"trtllm-fp8-fmha-arch-refused", "trtllm-fp8-fmha-release-predates-gpu"} & set(ids(line))


def test_trtllm_fp8_fmha_without_context_fmha_is_not_the_arch():
    line = ("[TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled because Context FMHA is not "
            "supported.")
    assert not {"trtllm-fp8-fmha-arch-refused", "trtllm-fp8-fmha-release-predates-gpu"} & set(ids(line))
