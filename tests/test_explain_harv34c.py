"""harv34c: a harvest of non-NVIDIA accelerators and edge devices on the same stack (Apple MPS,
AMD ROCm, Intel XPU / Level Zero, Jetson, torch_xla, Ascend), scored blind, and the general
fixes its misses ask for (docs/dev/harv34c.md).

Eighteen new training-side logs; explain named eleven first before any change. The fixed misses:
- A1, torch's MPS allocator refusing its watermark ratios (``RuntimeError: invalid low watermark
  ratio 1.4``: PYTORCH_MPS_HIGH_WATERMARK_RATIO lowered below the default low ratio,
  kohya-ss/sd-scripts#603): ``env-alloc-conf-invalid``.
- A1, torch <= 2.2 refusing every bfloat16 tensor on MPS (``TypeError: BFloat16 is not supported
  on MPS``, the last Intel-Mac wheels, lllyasviel/stable-diffusion-webui-forge#2399):
  ``apple-mps-op-unsupported``, not pip's no-matching-version line beside it.
- A2, the Level Zero loader's debug trace when compute-runtime's GPU driver is not installed
  (``Load Library of libze_intel_gpu.so.1 failed with ...: cannot open shared object file``,
  intel/compute-runtime#832): ``intel-xpu-unavailable``, not the loader catch-all.
- C3, ``no ROCm-capable device is detected`` with ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES
  assigned in the log (the two masks stack: unslothai/unsloth#6175):
  ``cuda-visible-devices-hides-gpus``; and torch's own refusal of a HIP mask longer than the ROCR
  mask.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# aten/src/ATen/mps/MPSAllocator.mm init_allocator (TORCH_CHECK -> RuntimeError)
MPS_LOW = "RuntimeError: invalid low watermark ratio 1.4"
MPS_HIGH = "RuntimeError: invalid high watermark ratio 3.5"
# torch <= 2.2 aten/src/ATen/mps/EmptyTensor.cpp (TORCH_CHECK_TYPE -> TypeError)
MPS_BF16 = "TypeError: BFloat16 is not supported on MPS"
# oneapi-src/level-zero source/loader/ze_loader.cpp context_t::init (debug trace)
ZE_GPU = ("ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu.so.1 failed with libze_intel_gpu.so.1: "
          "cannot open shared object file: No such file or directory")
ZE_NONE = "ZE_LOADER_DEBUG_TRACE:0 Drivers Discovered"
# torch/cuda/__init__.py _parse_visible_devices (ROCm builds)
HIP_LONGER = "RuntimeError: HIP_VISIBLE_DEVICES contains more devices than ROCR_VISIBLE_DEVICES"

FAMILIES = {
    "env-alloc-conf-invalid": [MPS_LOW, MPS_HIGH],
    "apple-mps-op-unsupported": [MPS_BF16],
    "intel-xpu-unavailable": [ZE_GPU, ZE_NONE],
    "cuda-visible-devices-hides-gpus": [HIP_LONGER],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_sd_scripts_603_report_names_alloc_conf():
    # kohya-ss/sd-scripts#603 (the reporter's paste)
    text = (
        "While starting training, the programme exits at the following steps:\n\n...\n"
        "loading vae: <All keys matched successfully>\n"
        "import network module: networks.lora\n...\n"
        "RuntimeError: invalid low watermark ratio 1.4\n...\n"
    )
    assert _codes(text)[:1] == ["env-alloc-conf-invalid"]


def test_forge_2399_report_names_mps_dtype_over_pip():
    # lllyasviel/stable-diffusion-webui-forge#2399: pip's no-matching-version line for torch 2.3.1
    # (no Intel-Mac wheel) is beside the failure, the TypeError names it
    text = (
        "% pip install torch==2.3.1\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.3.1 (from versions: "
        "2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2)\n"
        "ERROR: No matching distribution found for torch==2.3.1\n"
        "Successfully installed torch-2.2.2 torchaudio-2.2.2 torchvision-0.17.2\n"
        "PyTorch Version: 2.2.2\nMPS Available: True\n"
        "Traceback (most recent call last):\n"
        '  File "/Volumes/x/stable-diffusion-webui-forge/modules/txt2img.py", line 131, in txt2img_function\n'
        + MPS_BF16 + "\n"
    )
    assert _codes(text)[:1] == ["apple-mps-op-unsupported"]


def test_compute_runtime_832_trace_names_xpu_unavailable():
    # intel/compute-runtime#832 (the commenter's ZE_ENABLE_LOADER_DEBUG_TRACE=1 sycl-ls)
    text = (
        "$ ZE_ENABLE_LOADER_DEBUG_TRACE=1 sycl-ls\n"
        "ZE_LOADER_DEBUG_TRACE:Loading Driver libze_intel_gpu.so.1\n"
        + ZE_GPU + "\n"
        "ZE_LOADER_DEBUG_TRACE:Loading Driver libze_intel_vpu.so.1\n"
        "ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_vpu.so.1 failed with libze_intel_vpu.so.1: "
        "cannot open shared object file: No such file or directory\n"
        "[opencl:gpu][opencl:1] Intel(R) OpenCL Graphics, Intel(R) UHD Graphics 750 OpenCL 3.0 NEO  [23.43.027642]\n"
    )
    assert _codes(text)[:1] == ["intel-xpu-unavailable"]


def test_unsloth_6175_both_masks_name_visible_devices():
    # unslothai/unsloth#6175: llama.cpp's HIP build with both masks set to the second GPU
    text = (
        "Environment: 2x Radeon AI PRO R9700 (gfx1201), ROCm 7.1.1, torch 2.10.0+rocm7.1.\n"
        "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected\n"
        "Confirmed: `HIP_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=1 llama-server --list-devices` shows no "
        "device; `HIP_VISIBLE_DEVICES=1` alone works.\n"
    )
    assert _codes(text)[:1] == ["cuda-visible-devices-hides-gpus"]


@pytest.mark.parametrize("assign", [
    "export ROCR_VISIBLE_DEVICES=1",
    "export HIP_VISIBLE_DEVICES=2",
    "os.environ['HIP_VISIBLE_DEVICES'] = '1'",
    "ROCR_VISIBLE_DEVICES=GPU-f980f88ef31631a2 python train.py",
])
def test_rocm_mask_assigned_far_from_no_device(assign):
    text = (
        assign + "\n"
        + "\n".join(f"step {i}: loading shard" for i in range(30)) + "\n"
        "RuntimeError: HIP error: no ROCm-capable device is detected\n"
    )
    assert _codes(text)[:1] == ["cuda-visible-devices-hides-gpus"]


def test_no_device_without_mask_stays_rocm_unavailable():
    text = ("$ python -c 'import torch; torch.zeros(1).cuda()'\n"
            "RuntimeError: HIP error: no ROCm-capable device is detected\n")
    assert _codes(text)[:1] == ["rocm-gpu-unavailable"]


def test_kfd_permission_outranks_a_mask_beside_it():
    # the mask is there, but rocminfo says why no device is seen: the node is not readable
    text = (
        "export HIP_VISIBLE_DEVICES=0\n"
        "Unable to open /dev/kfd read-write: Permission denied\n"
        "RuntimeError: HIP error: no ROCm-capable device is detected\n"
    )
    assert _codes(text)[:1] == ["rocm-gpu-unavailable"]


def test_mask_merely_named_is_no_assignment():
    # the variable named in prose (no '='), as tabbyAPI's hint and docs do
    text = ("Check that HIP_VISIBLE_DEVICES, if set, doesn't hide it.\n"
            "RuntimeError: HIP error: no ROCm-capable device is detected\n")
    assert _codes(text)[:1] == ["rocm-gpu-unavailable"]


@pytest.mark.parametrize("text", [
    # the loader tries every driver name; a missing NPU/VPU/legacy driver is normal on a GPU box
    "ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_vpu.so.1 failed with libze_intel_vpu.so.1: "
    "cannot open shared object file: No such file or directory",
    "ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_npu.so.1 failed with libze_intel_npu.so.1: "
    "cannot open shared object file: No such file or directory",
    "ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu_legacy1.so.1 failed with "
    "libze_intel_gpu_legacy1.so.1: cannot open shared object file: No such file or directory",
    "ZE_LOADER_DEBUG_TRACE:Loading Driver libze_intel_gpu.so.1 succeeded from: /lib64/libze_intel_gpu.so.1",
    "ZE_LOADER_DEBUG_TRACE:3 Drivers Discovered",
])
def test_level_zero_trace_near_misses_stay_quiet(text):
    assert "level-zero-gpu-driver-not-loadable" not in _ids(text)


@pytest.mark.parametrize("text", [
    # other projects' own words about bf16 on MPS (a fallback warning, diffusers' refusal): lower case
    "Type bfloat16 is not supported on MPS, using float16 instead",
    "ValueError: Mixed precision training with bfloat16 is not supported on MPS. Please use fp16 (recommended) or fp32 instead.",
    # the watermark variables set or printed, no refusal
    "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0",
    "Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
    "low watermark ratio set to 1.4",
    # the mask rule's message, named without a failure
    "HIP_VISIBLE_DEVICES contains the devices to use",
])
def test_near_misses_match_no_new_signature(text):
    ids = _ids(text)
    for new in ("mps-watermark-ratio-rejected", "hip-mask-longer-than-rocr-mask", "mps-dtype-unsupported"):
        assert new not in ids


def test_mps_out_of_memory_stays_gpu_out_of_memory():
    # the OOM names the watermark variable; it is no rejected ratio
    text = ("RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, "
            "max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use "
            "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations "
            "(may cause system failure).\n")
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


# --- round 2: torch.Generator on a back end the installed torch has no generator for
# (torch/csrc/Generator.cpp THPGenerator_pynew, torch <= 2.0 for PrivateUse1, <= 1.13 for MPS)

GEN_DML = "RuntimeError: Device type PRIVATEUSEONE is not supported for torch.Generator() api."
GEN_MPS = "RuntimeError: Device type MPS is not supported for torch.Generator() api."

test_generator_in_every_wrapper, test_generator_own_signature = family_tests(
    {"directml-op-unsupported": [GEN_DML], "apple-mps-op-unsupported": [GEN_MPS]})


def test_directml_374_report_names_directml_op_unsupported():
    # microsoft/DirectML#374 (the reporter's minimal script and traceback)
    text = (
        "    device = torch_directml.device()\n"
        "    generator = torch.Generator(device)\n"
        "Traceback (most recent call last):\n"
        '  File "path\\to\\rng_error.py", line 7, in main\n'
        "    generator = torch.Generator(device)\n"
        + GEN_DML + "\n"
        "- PyTorch: 1.13.1\n- torch-directml: 0.1.13.1.dev230119\n"
    )
    assert _codes(text)[:1] == ["directml-op-unsupported"]


@pytest.mark.parametrize("text", [
    # diffusers' test comment and a README's advice name the words without a failure of torch's
    "# device type MPS is not supported for torch.Generator() api.",
    "Device type CUDA is not supported for Generator API.",
])
def test_generator_near_misses_stay_quiet(text):
    ids = _ids(text)
    assert "generator-unsupported-on-privateuseone" not in ids
    assert "generator-unsupported-on-mps" not in ids
