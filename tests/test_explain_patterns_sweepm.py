"""Recall of explain on logs sampled the way the blind sets are (sweepm): the first training-side
threads of generic application queries ("stable diffusion training error", "yolo cuda", "nerf
cuda", "gaussian splatting cuda", "diffusers cuda", "mujoco gpu", "isaac gym", "open3d cuda",
"text generation webui", "tts cuda", "segment anything cuda", "mmdetection cuda", "numba cuda",
"faiss gpu", "multi node training", "ubuntu driver gpu"), 12 logs with
``# collected: training-2026-12-02u``.

The classes the misses showed, and the fix for each:

- a compiled package that is its CPU build, in its own words: the dispatcher's
  ``Could not run 'torchvision::nms' with arguments from the 'CUDA' backend`` (the extension
  registered CPU kernels only: a CPU torchvision wheel beside a CUDA torch, ultralytics 3084;
  before, it read as a torch/torchvision version mismatch), Open3D's
  ``Not compiled with CUDA, but CUDA device is used`` and ``BUILD_CUDA_MODULE: False`` as users
  print ``open3d._build_config`` (Open3D 6310), Open3D-ML's ``X was not compiled with CUDA
  support``.
- faiss's ``Invalid GPU device %d`` (GpuIndex's check ``config_.device < getNumDevices()``):
  an index past the GPUs the process sees (faiss 1491).
- nvidia-smi's ``Driver/library version mismatch`` retyped in lower case, and deciding for it
  over a ``no CUDA-capable device is detected`` line that the mismatch caused (dynet 1020).
- the no-kernel-image line cut before 'on the device' (titles, retyped quotes), and an 8-bit
  optimizer (AdamW8bit ...) in the log making it bitsandbytes' missing build (kohya_ss 929).
- RAPIDS' plain cudaMalloc resource and libcudf's null-mask kernels answering 801
  cudaErrorNotSupported: RAPIDS on WSL2 needs compute capability 7.0+ (cudf 11382).
- not fixed: a report naming torch's ``+cpu`` version beside prose only (ultralytics 227): a
  healthy CPU-only run reports the same, so no rule may blame it (an expected miss).
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "framework-cpu-only-build": [
        # c10 OperatorEntry reportError for an extension op with CPU kernels only
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build).",
        "RuntimeError: Could not run 'torchvision::roi_align' with arguments from the 'CUDA' backend.",
        # ultralytics 3084, as the user quoted it
        'ERROR: **"NotImplementedError: Could not run \'torchvision::nms\' with arguments from CUDA backend"**',
        "RuntimeError: Could not run 'torch_scatter::scatter_max' with arguments from the 'CUDA' backend.",
        # Open3D core's dispatch without BUILD_CUDA_MODULE, and its build report
        "[Open3D Error] (void open3d::core::kernel::UnaryEW(const open3d::core::Tensor&, open3d::core::Tensor&, open3d::core::kernel::UnaryEWOpCode)) /root/Open3D/cpp/open3d/core/kernel/UnaryEW.cpp:53: Not compiled with CUDA, but CUDA device is used.",
        "BUILD_CUDA_MODULE: False",
        "RuntimeError: BuildSpatialHashTable was not compiled with CUDA support",
    ],
    "device-ordinal-out-of-range": [
        # faiss/gpu/GpuIndex.cu
        "RuntimeError: Error in faiss::gpu::GpuIndex::GpuIndex(faiss::gpu::GpuResources*, int, faiss::MetricType, float, faiss::gpu::GpuIndexConfig) at gpu/GpuIndex.cu:49: Error: 'device_ < getNumDevices()' failed: Invalid GPU device 1",
        "Error: 'config_.device < getNumDevices()' failed: Invalid GPU device 2",
    ],
    "driver-library-mismatch": [
        "`nvidia-smi failed to initialize nvml: driver/library version mismatch`",
        "failed to initialize nvml: driver/library version mismatch",
    ],
    "framework-gpu-arch-unsupported": [
        "RuntimeError: CUDA error encountered at: /workspace/.conda-bld/work/cpp/src/bitmask/null_mask.cu:93: 801 cudaErrorNotSupported operation not supported.",
        "MemoryError: std::bad_alloc: CUDA error at: /workspace/.conda-bld/work/include/rmm/mr/device/cuda_memory_resource.hpp:70: cudaErrorNotSupported operation not supported",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


def test_the_torchvision_cuda_backend_line_is_no_longer_a_version_mismatch():
    kb = load()
    line = "Could not run 'torchvision::nms' with arguments from the 'CUDA' backend."
    assert "torchvision-built-for-other-torch" not in [e.id for e in kb.match_line(line)]
    # the other backends' and the missing operator's wordings stay where they were
    assert _codes("RuntimeError: operator torchvision::nms does not exist\n")[:1] == ["extension-torch-mismatch"]


def test_an_aten_op_without_a_cuda_kernel_is_not_an_extensions_cpu_build():
    # torch's own op missing a CUDA kernel is torch's matter: no extension signature reads it
    kb = load()
    line = "NotImplementedError: Could not run 'aten::slow_conv3d_forward' with arguments from the 'CUDA' backend."
    assert "extension-op-no-cuda-kernel" not in [e.id for e in kb.match_line(line)]
    assert "extension-op-no-cuda-kernel" not in [e.id for e in kb.match_line(line.replace("aten::", "xformers::"))]


def test_a_cut_no_kernel_image_title_is_still_the_arch_gap():
    log = 'Still failed when it start training "Error no kernel image is available for execution"\n'
    assert _codes(log)[:1] == ["torch-arch-not-supported"]


@pytest.mark.parametrize("optimizer", [
    'And I found if I select "AdamW8bit Optimizer" the training will goes wrong',
    "accelerate launch train_network.py --optimizer_type=AdamW8bit --xformers",
    "use_8bit_adam: true",
])
def test_no_kernel_image_with_an_8bit_optimizer_is_bitsandbytes_build(optimizer):
    log = "\n".join([
        'Still failed when it start training "Error no kernel image is available for execution"',
        "step 1", "step 2", "step 3", "step 4", "step 5", "step 6",
        optimizer,
    ]) + "\n"
    assert _codes(log)[:1] == ["extension-arch-missing"]


def test_no_kernel_image_next_to_torchs_own_warning_stays_torchs_with_an_8bit_optimizer():
    log = ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
           "--optimizer_type=AdamW8bit\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(log)[:1] == ["torch-arch-not-supported"]


def test_no_cuda_device_beside_nvidia_smis_mismatch_is_the_mismatch():
    log = ("[dynet] initializing CUDA\n"
           "   CUDA failure in cudaGetDeviceCount(&nDevices) \n"
           "   no CUDA-capable device is detected\n"
           "I was running on Ubuntu 16.04. When I run `nvidia-smi`, I got this error:\n\n"
           "`nvidia-smi failed to initialize nvml: driver/library version mismatch`\n")
    assert _codes(log)[:1] == ["driver-library-mismatch"]


def test_no_cuda_device_alone_stays_the_driver():
    assert _codes("CUDA failure in cudaGetDeviceCount(&nDevices) no CUDA-capable device is detected\n")[:1] == ["no-nvidia-driver"]


def test_a_reported_cpu_torch_alone_names_nothing_blocking():
    # 'pytorch 1.13.1+cpu' is also what a healthy CPU-only run reports (tests/corpus/negative):
    # without a GPU failure beside it, no rule may blame it (ultralytics 227 stays a miss)
    kb = load()
    assert not [e for e in kb.match_line("pytorch 1.13.1+cpu") if "torch-cpu-only-build" in e.codes]


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "BUILD_CUDA_MODULE: True",
    "Open3D 0.18.0 compiled with CUDA 11.8; CUDA device CUDA:0 is used",
    "faiss: using GPU device 1 of 2",
    "torchvision::nms registered for backends CPU, CUDA",
    "torch 2.1.0+cu121",
    "nvidia-smi: driver/library versions match (550.54.15)",
    "Adam8bit optimizer selected; 1500 steps",
])
