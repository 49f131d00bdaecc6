"""src43 (issue 8 item 2): messages harvested from the programs' own source: PyTorch Lightning and
Lightning Fabric, Ray, ComfyUI and diffusers, faiss and RAPIDS (cuDF, cuML, RMM), and the compiled-op
libraries (mmcv, detectron2, spconv, gsplat, tiny-cuda-nn, CTranslate2). docs/dev/src43.md says what was
read; the lists docs/dev/src43-*.txt hold every message listed and explain's answer.

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). Each runs through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word wrap
and terminal cuts at 80 columns, CRLF, container log formats) and must rank its code first. Near misses
that must not name the new signatures follow.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "device-ordinal-out-of-range": [
        # ray python/ray/_private/resource_spec.py ResourceSpec.resolve (a list shorter than the count)
        "ValueError: Attempting to start raylet with 4 GPU, but CUDA_VISIBLE_DEVICES contains ['0', '1'].",
        # Ray 0.x-1.x services.py
        "Exception: Attempting to start raylet with 8 GPUs, but CUDA_VISIBLE_DEVICES contains ['2', '3'].",
    ],
    "cuda-visible-devices-hides-gpus": [
        # the same check with an empty list (CUDA_VISIBLE_DEVICES='' or 'NoDevFiles')
        "ValueError: Attempting to start raylet with 1 GPU, but CUDA_VISIBLE_DEVICES contains [].",
    ],
    "kernel-library-not-installed": [
        # ComfyUI comfy/ldm/modules/attention.py
        "To use the `--use-sage-attention` feature, the `sageattention` package must be installed first.",
        "To use the `--use-flash-attention` feature, the `flash-attn` package must be installed first.",
        # diffusers src/diffusers/models/attention_dispatch.py _check_attention_backend_requirements
        "RuntimeError: Sage Attention backend 'sage' is not usable because of missing package or the version is "
        "too old. Please install `sageattention>=2.1.1`.",
        "RuntimeError: Xformers Attention backend 'xformers' is not usable because of missing package or the "
        "version is too old. Please install `xformers>=0.0.29`.",
        "RuntimeError: Flash Attention 3 backend '_flash_3' is not usable because of missing package or the "
        "version is too old. Please build FA3 beta release from source.",
        "RuntimeError: Backend '_flash_3_hub' is not usable because the `kernels` package isn't available. "
        "Please install it with `pip install kernels`.",
    ],
    "flash-attn-not-installed": [
        # diffusers attention_dispatch.py, the flash and flash_varlen backends
        "RuntimeError: Flash Attention backend 'flash' is not usable because of missing package or the version "
        "is too old. Please install `flash-attn>=2.6.3`.",
    ],
    "framework-gpu-arch-unsupported": [
        # cudf python/cudf/cudf/utils/gpu_utils.py validate_setup (21.x and later, then 0.1x)
        "cudf.errors.UnsupportedCUDAError: A GPU with NVIDIA Volta™ (Compute Capability 7.0) or newer "
        "architecture is required.\nDetected GPU 0: NVIDIA GeForce GTX 1080 Ti\nDetected Compute Capability: 6.1",
        "UserWarning: You will need a GPU with NVIDIA Pascal™ or newer architecture\nDetected GPU 0: Tesla K80\n"
        "Detected Compute Capability: 3.7",
        "cudf.errors.UnSupportedGPUError: You will need a GPU with NVIDIA Pascal™ architecture or better",
    ],
    "driver-too-old-for-build": [
        # cudf gpu_utils.py validate_setup
        "cudf.errors.UnsupportedCUDAError: Please update your NVIDIA GPU Driver to support CUDA Runtime.\n"
        "Detected CUDA Runtime version : 11020\nLatest version of CUDA supported by current NVIDIA GPU Driver : 11000",
    ],
    "gpu-out-of-memory": [
        # rmm cpp/include/rmm/mr/pool_memory_resource.hpp
        "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/"
        "pool_memory_resource.hpp:196: Maximum pool size exceeded",
        # tiny-cuda-nn include/tiny-cuda-nn/gpu_memory.h GPUMemory::allocate_memory (2.x, then 1.x)
        "RuntimeError: Could not allocate memory: /opt/tcnn/include/tiny-cuda-nn/gpu_memory.h:590 "
        "cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed: out of memory",
        "RuntimeError: Could not allocate memory: gpu_memory.h:462 cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) "
        "failed with error out of memory",
        # TensorRT-LLM cpp/include/tensorrt_llm/common/cudaUtils.h check
        "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in cudaMemGetInfo(&free, &total): out of memory "
        "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/bufferManager.cpp:211)",
    ],
    "cuda-malloc-async-unsupported": [
        # rmm cpp/src/mr/detail/cuda_async_memory_resource_impl.cpp
        "RuntimeError: RMM failure at:/opt/conda/include/rmm/mr/device/cuda_async_memory_resource.hpp:91: "
        "cudaMallocAsync not supported with this CUDA driver/runtime version",
    ],
    "extension-arch-missing": [
        # spconv spconv/pytorch/cppcore.py get_arch
        "UserWarning: [WARNING]your gpu arch (12, 0) isn't compiled in prebuilt, may cause invalid device "
        "function error. available: {(5, 2), (6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0)}",
    ],
}

# the symptoms: their code heads the answer only where nothing narrower is named
SYMPTOMS = {
    "torch-cuda-unavailable": [
        # pytorch_lightning 1.7 and 1.5-1.6 trainer/connectors/accelerator_connector.py
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUAccelerator can not run on your "
        "system since the accelerator is not available. The following accelerator(s) is available and can be "
        "passed into `accelerator` argument of `Trainer`: ['cpu'].",
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUAccelerator can not run on your "
        "system since GPUs are not available.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)
test_symptom_in_every_wrapper, test_symptom_own_signature = family_tests(SYMPTOMS)

# every new (or extended) signature id, and one message above that it must match on its own
NEW_SIGNATURES = {
    "ray-raylet-gpus-exceed-visible-devices": FAMILIES["device-ordinal-out-of-range"][0],
    "ray-raylet-visible-devices-empty": FAMILIES["cuda-visible-devices-hides-gpus"][0],
    "comfyui-attention-package-missing": FAMILIES["kernel-library-not-installed"][0],
    "diffusers-attention-backend-package-missing": FAMILIES["kernel-library-not-installed"][5],
    "diffusers-flash-backend-unusable": FAMILIES["flash-attn-not-installed"][0],
    "rapids-gpu-below-minimum-architecture": FAMILIES["framework-gpu-arch-unsupported"][2],
    "rapids-driver-older-than-runtime": FAMILIES["driver-too-old-for-build"][0].split("\n")[0],
    "rmm-pool-size-exceeded": FAMILIES["gpu-out-of-memory"][0],
    "tcnn-could-not-allocate-memory": FAMILIES["gpu-out-of-memory"][2],
    "trtllm-cuda-runtime-error-oom": FAMILIES["gpu-out-of-memory"][3],
    "rmm-cuda-async-unsupported": FAMILIES["cuda-malloc-async-unsupported"][0],
    "spconv-gpu-arch-not-in-prebuilt": FAMILIES["extension-arch-missing"][0],
    "lightning-no-gpu-backend": SYMPTOMS["torch-cuda-unavailable"][1],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # Lightning's device summary and its per-rank CUDA_VISIBLE_DEVICES notice
    "GPU available: True (cuda), used: True",
    "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]",
    # Ray's start-up line, ComfyUI's start-up lines, gsplat's JIT build done
    "Started a local Ray instance. View the dashboard at 127.0.0.1:8265",
    "Total VRAM 24564 MB, total RAM 64203 MB",
    "Set vram state to: NORMAL_VRAM",
    "gsplat: CUDA extension has been set up successfully in 42.10 seconds.",
    # RMM's pool on a working GPU
    "rmm.reinitialize(pool_allocator=True, initial_pool_size=2**30, maximum_pool_size=2**33)",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # Ray with enough visible GPUs, and Ray's scheduling warning (another code's)
    ("Attempting to start raylet with 2 GPU, CUDA_VISIBLE_DEVICES=0,1", "ray-raylet-gpus-exceed-visible-devices"),
    ("ValueError: Attempting to start raylet with 4 GPU, but CUDA_VISIBLE_DEVICES contains ['0', '1'].",
     "ray-raylet-visible-devices-empty"),
    ("ValueError: Attempting to start raylet with 1 GPU, but CUDA_VISIBLE_DEVICES contains [].",
     "ray-raylet-gpus-exceed-visible-devices"),
    # ComfyUI's other start-up failures and a generic R/Unity install hint
    ("Note: Input System package must be installed first.", "comfyui-attention-package-missing"),
    ("Error running sage attention: CUDA error: no kernel image is available for execution on the device, "
     "using pytorch attention instead.", "comfyui-attention-package-missing"),
    # diffusers' other backends (torch, NPU, XLA) and its import warning
    ("RuntimeError: Flex Attention backend 'flex' is not usable because of missing package or the version is "
     "too old. Please install `torch>=2.5.0`.", "diffusers-attention-backend-package-missing"),
    ("RuntimeError: Flex Attention backend 'flex' is not usable because of missing package or the version is "
     "too old. Please install `torch>=2.5.0`.", "diffusers-flash-backend-unusable"),
    ("RuntimeError: Flash Attention 3 backend '_flash_3' is not usable because of missing package or the "
     "version is too old.", "diffusers-flash-backend-unusable"),
    # a supported GPU's compute capability notice, cuDF's no-GPU warning
    ("Detected GPU 0: NVIDIA A100-SXM4-80GB, Compute Capability: 8.0", "rapids-gpu-below-minimum-architecture"),
    ("UserWarning: No NVIDIA GPU detected", "rapids-gpu-below-minimum-architecture"),
    # a driver update notice of another kind
    ("Please update your NVIDIA GPU Driver to the latest version for best performance.",
     "rapids-driver-older-than-runtime"),
    # RMM's pool notice, tiny-cuda-nn's failure to free memory (a warning at exit), a host allocation
    ("maximum pool size set to 8.00 GiB", "rmm-pool-size-exceeded"),
    ("Could not free memory: cudaFree(m_data) failed: driver shutting down", "tcnn-could-not-allocate-memory"),
    ("Could not allocate memory: out of host memory", "tcnn-could-not-allocate-memory"),
    # TensorRT-LLM's CUDA check with other errors (each named by its own signature)
    ("[TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported between these two devices",
     "trtllm-cuda-runtime-error-oom"),
    ("[TensorRT-LLM][ERROR] CUDA runtime error in cudaStreamSynchronize(stream): no kernel image is available for "
     "execution on the device", "trtllm-cuda-runtime-error-oom"),
    # RMM's other capability check, torch's async allocator notice
    ("RMM failure at: cuda_async_memory_resource.hpp:50: Requested IPC memory handle type not supported",
     "rmm-cuda-async-unsupported"),
    ("Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync", "rmm-cuda-async-unsupported"),
    # spconv on a GPU its wheel covers prints nothing; another library's prebuilt notice
    ("spconv: using prebuilt kernels for gpu arch (8, 6)", "spconv-gpu-arch-not-in-prebuilt"),
    # Lightning's Apple and TPU accelerators (not CUDA's)
    ("MisconfigurationException: `MPSAccelerator` can not run on your system since the accelerator is not "
     "available.", "lightning-no-gpu-backend"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_diffusers_flash_import_error_still_heads():
    """diffusers logs why flash_attn failed to import before the backend check refuses: that cause
    (here a flash_attn built for another torch) stays first, the backend's refusal follows."""
    log = (
        "flash_attn is installed but failed to import: /venv/lib/python3.11/site-packages/"
        "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE. "
        "Falling back to native PyTorch attention.\n"
        "Traceback (most recent call last):\n"
        '  File "run.py", line 12, in <module>\n'
        '    pipe.transformer.set_attention_backend("flash")\n'
        "RuntimeError: Flash Attention backend 'flash' is not usable because of missing package or the version "
        "is too old. Please install `flash-attn>=2.6.3`.\n"
    )
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:2] == ["extension-torch-mismatch", "flash-attn-not-installed"], codes


def test_spconv_warning_names_the_wheel_not_torch():
    """spconv's warning before CUDA's 'invalid device function' names spconv's wheel, not torch's build."""
    log = (
        "/venv/lib/python3.10/site-packages/spconv/pytorch/cppcore.py:105: UserWarning: [WARNING]your gpu arch "
        "(12, 0) isn't compiled in prebuilt, may cause invalid device function error. available: {(8, 6), (9, 0)}\n"
        "  warnings.warn(\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "RuntimeError: CUDA error: invalid device function\n"
    )
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["extension-arch-missing"], codes
