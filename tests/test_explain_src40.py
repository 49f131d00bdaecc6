"""src40 (issue 8 item 2): messages harvested from the programs' own source: flash-attn (FlashAttention 3
hopper/ and 4 cute/), mamba-ssm, XLA's ptxas search (JAX, TensorFlow) and Ollama's GPU discovery
(docs/dev/src40.md; the per-program lists docs/dev/src40-*.txt hold every message read and what explain
makes of it).

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). Each runs through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word wrap
and terminal cuts at 80 columns, CRLF, container log formats) and must rank its code first. Near misses
that must not name the new signatures follow: healthy lines the same programs print, and sibling
messages another cause owns.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "flash-attn-build-feature-disabled": [
        # flash-attention hopper/flash_api.cpp (FlashAttention 3 built with FLASHATTENTION_DISABLE_*)
        "RuntimeError: This flash attention build does not support backward.",
        "RuntimeError: This flash attention build does not support FP8.",
        "RuntimeError: This flash attention build does not support paged KV.",
        "RuntimeError: Flash-Attention was built with backward disabled",
        # csrc/flash_attn/flash_api.cpp (FlashAttention 2, FLASHATTENTION_DISABLE_UNEVEN_K / _DROPOUT)
        "RuntimeError: This flash attention build does not support headdim not being a multiple of 32.",
        "RuntimeError: This flash attention build does not support dropout.",
    ],
    "gpu-arch-lacks-dtype": [
        # hopper/flash_api.cpp mha_fwd: FP8 tensors on sm_8x
        "RuntimeError: FlashAttention on Ampere/Ada cards only supports fp16 and bf16 data type",
    ],
    "flash-attn-arch-unsupported": [
        # flash_attn/cute/interface.py _flash_attn_fwd
        "AssertionError: only support Blackwell arch with qv",
    ],
    "kernel-extension-not-built": [
        # mamba_ssm/ops/selective_scan_interface.py _check_selective_scan_cuda
        "RuntimeError: selective_scan_cuda is not installed. To use Mamba-1, reinstall with:\n"
        "  MAMBA_KEEP_CUDA_BUILD=TRUE pip install mamba-ssm --no-build-isolation",
    ],
    "kernel-library-not-installed": [
        # mamba_ssm/ops/selective_scan_interface.py, mamba_ssm/modules/mamba3.py
        "AssertionError: causal_conv1d_cuda is not available. Please install causal-conv1d.",
        "AssertionError: causal_conv1d_fn is not available. Please install causal-conv1d.",
        "AssertionError: Cute Mamba-3 step function is not available. Please ensure you installed the "
        "necessary dependencies, such as nvidia-cutlass-dsl and quack-kernels.",
    ],
    "xla-cuda-toolkit-missing": [
        # xla/stream_executor/cuda/subprocess_compilation.cc FindCudaExecutable / GetToolVersionImpl
        "jax.errors.JaxRuntimeError: NOT_FOUND: Couldn't find a suitable version of ptxas. The following "
        "locations were considered: /usr/local/cuda-12.3/bin/ptxas, /usr/local/cuda/bin/ptxas, /usr/bin/ptxas",
        "jaxlib.xla_extension.XlaRuntimeError: NOT_FOUND: Couldn't find a suitable version of nvlink. The "
        "following locations were considered: /usr/local/cuda/bin/nvlink",
        "Couldn't get ptxas/nvlink version string: INTERNAL: Couldn't invoke /usr/local/cuda/bin/ptxas --version",
        # xla/stream_executor/gpu/asm_compiler.cc (jaxlib 0.4.x, TensorFlow 2.14-2.16)
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: XLA requires ptxas version 11.8 or higher",
        # CompileGpuAsmUsingPtxAs, raised
        "tensorflow.python.framework.errors_impl.InternalError: Failed to launch ptxas "
        "[Op:__inference_train_function_1234]",
    ],
    "rocm-gpu-unavailable": [
        # ollama discover/amd_linux.go AMDGetGPUInfo / CheckKFDPermissions
        "time=2025-01-01T12:00:00.000Z level=ERROR source=amd_linux.go:407 msg=\"amdgpu devices detected but "
        "permission problems block access: kfd driver not loaded.  If running in a container, remember to "
        "include '--device /dev/kfd --device /dev/dri'\"",
        "amdgpu devices detected but permission problems block access: permissions not set up properly.  "
        "Either run ollama as root, or add you user account to the render group. open /dev/kfd: permission "
        "denied",
    ],
    "rocm-gpu-arch-unsupported": [
        # ollama discover/amd.go
        "time=2025-01-01T12:00:00.000Z level=WARN source=amd.go:470 msg=\"dropping ROCm device \u2014 no rocblas "
        "support for gfx target\" device=\"AMD Radeon RX 6700 XT\" gfx_target=gfx1031",
    ],
    "framework-gpu-arch-unsupported": [
        # ollama discover/llama_server.go
        "time=2025-01-01T12:00:00.000Z level=INFO source=llama_server.go:299 msg=\"skipping CUDA device \u2014 "
        "compute capability not in compiled architectures\" device=\"Tesla K80\" cc=37 archs=50,61,70,75,80",
    ],
}


def _skip(msg, wrapper):
    return None


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, skip=_skip)

# every new signature id, and one message of the families above that it must match on its own
NEW_SIGNATURES = {
    "flash-attn-build-feature-compiled-out": FAMILIES["flash-attn-build-feature-disabled"][0],
    "flash-attn3-fp8-needs-hopper": FAMILIES["gpu-arch-lacks-dtype"][0],
    "flash-attn-cute-qv-blackwell-only": FAMILIES["flash-attn-arch-unsupported"][0],
    "mamba-selective-scan-cuda-not-installed": FAMILIES["kernel-extension-not-built"][0],
    "mamba-causal-conv1d-not-available": FAMILIES["kernel-library-not-installed"][0],
    "mamba3-cute-dependencies-missing": FAMILIES["kernel-library-not-installed"][2],
    "xla-ptxas-not-found": FAMILIES["xla-cuda-toolkit-missing"][0],
    "ollama-amdgpu-access-blocked": FAMILIES["rocm-gpu-unavailable"][0],
    "ollama-rocm-no-rocblas-for-gfx": FAMILIES["rocm-gpu-arch-unsupported"][0],
    "ollama-cc-not-in-compiled-archs": FAMILIES["framework-gpu-arch-unsupported"][0],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # flash-attn's and mamba-ssm's setup.py on a working install
    "Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/"
    "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl",
    "Raw wheel path dist/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl",
    # XLA's ptxas lookup at VLOG(2), and the search succeeding
    "Using /usr/local/cuda/bin/ptxas with version 12.4.131",
    # Ollama's discovery on a working GPU
    "time=2025-01-01T12:00:00.000Z level=INFO source=types.go:130 msg=\"inference compute\" id=GPU-452cac9f "
    "library=cuda variant=v12 compute=8.6 driver=12.4 name=\"NVIDIA GeForce RTX 3090\" total=\"23.7 GiB\"",
    "time=2025-01-01T12:00:00.000Z level=INFO source=amd_linux.go:386 msg=\"amdgpu is supported\" gpu=0 "
    "gpu_type=gfx1100",
    # XLA's warning alone, in a run that goes on
    "W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/gpu/redzone_allocator.cc:317] "
    "INTERNAL: Failed to launch ptxas",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # a build that has the feature: flash-attn's own notice that a feature is unsupported by the call's
    # arguments, not by the build
    ("RuntimeError: Softcapping does not support dropout for now", "flash-attn-build-feature-compiled-out"),
    ("RuntimeError: return_softmax is only supported when p_dropout > 0.0", "flash-attn-build-feature-compiled-out"),
    # FA3 on Hopper with FP8 works; the dtype check of FlashAttention 2 is flash-attn-dtype-unsupported's
    ("RuntimeError: FlashAttention only support fp16 and bf16 data type", "flash-attn3-fp8-needs-hopper"),
    # the qv check of FlashAttention 3 is the Hopper one
    ("RuntimeError: q_v is only supported for Hopper GPUs", "flash-attn-cute-qv-blackwell-only"),
    # a missing selective_scan_cuda module is the older extension-module-missing signature
    ("ModuleNotFoundError: No module named 'selective_scan_cuda'", "mamba-selective-scan-cuda-not-installed"),
    # causal-conv1d's own notices
    ("UserWarning: causal_conv1d was requested, but nvcc was not found.", "mamba-causal-conv1d-not-available"),
    # ptxas found and too old for the GPU: a fallback, ptxas-arch-unsupported's
    ("W external/xla/xla/stream_executor/cuda/subprocess_compilation.cc:196] Falling back to the CUDA driver "
     "for PTX compilation; ptxas does not support CC 9.0", "xla-ptxas-not-found"),
    ("Couldn't find a suitable version of the model checkpoint", "xla-ptxas-not-found"),
    # Ollama's AMD lines another signature owns, or healthy
    ("time=2025-01-01T12:00:00.000Z level=WARN source=amd_linux.go:309 msg=\"amdgpu too old gfx803\" gpu=0",
     "ollama-rocm-no-rocblas-for-gfx"),
    ("time=2025-01-01T12:00:00.000Z level=INFO source=amd_linux.go:389 msg=\"skipping rocm gfx compatibility "
     "check\" HSA_OVERRIDE_GFX_VERSION=10.3.0", "ollama-amdgpu-access-blocked"),
    ("time=2025-01-01T12:00:00.000Z level=INFO source=llama_server.go:290 msg=\"using CUDA device\" cc=86",
     "ollama-cc-not-in-compiled-archs"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_ptxas_launch_warning_names_its_cause_where_the_run_fails():
    log = ("W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/gpu/redzone_allocator.cc:317] "
           "INTERNAL: Failed to launch ptxas\nRelying on driver to perform ptx compilation.\n"
           "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    model.fit(x)\n"
           "RuntimeError: Graph execution error\n")
    assert [c.code for c in explain_text(log).candidates][:1] == ["xla-cuda-toolkit-missing"]


def test_ptxas_launch_warning_alone_is_quiet():
    log = ("W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/gpu/redzone_allocator.cc:317] "
           "INTERNAL: Failed to launch ptxas\nRelying on driver to perform ptx compilation.\nEpoch 1/10 loss 0.3\n")
    assert explain_text(log).candidates == ()
