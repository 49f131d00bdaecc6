"""harv38b: an unbiased harvest of virtualised, partitioned and shared GPUs (LXC/LXD/Incus containers,
VM passthrough, vGPU, MIG, MPS, compute modes, cloud VM images), scored blind, and the general fixes
its misses ask for (docs/dev/harv38b.md).

Fifteen new training-side logs; explain named four first before any change. The fixed misses:
- the kernel module's legacy-branch notice, which nv.c prints over five lines, each with its own
  ``NVRM:`` prefix: the signature expected ``is supported through`` on one line (siderolabs/talos#8764);
- glog's ``(0 vs. 216)`` after a CUDA driver call, CUDA_ERROR_CONTEXT_ALREADY_IN_USE in an exclusive
  compute mode, as TensorFlow's StreamExecutor checks it (tensorflow/tensorflow#526);
- ``cudaMallocAsync`` refused with 801 on a vGPU without memory pools, in a program's own words rather
  than a call with its argument list (AcademySoftwareFoundation/openvdb#2255);
- a new root code, ``vgpu-guest-driver-incompatible``: Xid 78's ``Guest driver is incompatible with
  host driver`` (skypilot-org/skypilot#10468);
- LXD/Incus ``info --resources`` with an empty ``NVRM Version:``: no nvidia-container-cli on the host
  (lxc/incus#1322, which was silent);
- error 46 in a log that names the MPS daemon: ``mps-unavailable`` joins the causes the symptom is
  read against (NVIDIA/nvidia-docker#419).
Each message is the program's own text (from its source) or a training-side thread's paste, with
near-misses that keep their reading.
"""

from __future__ import annotations

from test_explain_patterns import codes, codes_of as _codes, family_tests, ids

# open-gpu-kernel-modules gpu.c: nvErrorLog_va(pGpu, VGPU_START_ERROR, "Guest driver is incompatible with
# host driver"); the reporter's wording of the guest kernel log (skypilot-org/skypilot#10468)
XID78 = "Xid 78: Guest driver is incompatible with host driver"
# the host's nvidia-vgpu-mgr journal (mbilker/vgpu_unlock-rs#10, a training-side thread)
VMIOP = ("error: vmiop_log: (0x0): Incompatible Guest/Host drivers: Guest VGX version is older than the "
         "minimum version supported by the Host. Disabling vGPU.")
# AcademySoftwareFoundation/openvdb#2255 (NanoVDB's DeviceResource on an AWS g6f fractional vGPU)
NANOVDB = ("we receive an error at the first call to `cudaMallocAsync` at `nanovdb/cuda/DeviceResource.h:22`:  "
           "`CUDA error 801: operation not supported`")
# TensorFlow stream_executor cuda_driver.cc, glog CHECK_EQ (tensorflow/tensorflow#526)
TF_216 = "F tensorflow/stream_executor/cuda/cuda_driver.cc:334] Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)"
# nv.c's legacy notice, the lines the kernel log splits it into
LEGACY_2 = "NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please"
LEGACY_4 = "NVRM:  information.  The 535.129.03 NVIDIA driver will ignore"

FAMILIES = {
    "vgpu-guest-driver-incompatible": [XID78, VMIOP],
    "cuda-malloc-async-unsupported": [NANOVDB],
    "cuda-devices-unavailable": [TF_216],
    "proprietary-kernel-module-unsupported-gpu": [LEGACY_2, LEGACY_4],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_talos_legacy_notice_split_by_the_kernel_log():
    # siderolabs/talos#8764: the notice as dmesg prints it, under Talos's kern: prefix
    text = (
        "kern:     err: [2024-05-20T02:46:53.856596762Z]: NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is\n"
        " NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please\n"
        " NVRM:  visit http://www.nvidia.com/object/unix.html for more\n"
        " NVRM:  information.  The 535.129.03 NVIDIA driver will ignore\n"
        " NVRM:  this GPU.  Continuing probe...\n"
        " kern: warning: [2024-05-20T02:46:53.859954762Z]: NVRM: No NVIDIA GPU found.\n"
    )
    assert _codes(text)[:1] == ["proprietary-kernel-module-unsupported-gpu"]


def test_legacy_near_misses():
    assert "nvrm-requires-open-modules" not in ids("This GPU is supported through the NVIDIA 470 driver")
    assert "nvrm-requires-open-modules" not in ids("The NVIDIA driver will ignore this setting on laptops")


def test_skypilot_azure_a10_stale_grid_image():
    text = (
        "On a newly allocated `Standard_NV36ads_A10_v5`, the stale guest driver fails\n"
        "below CUDA/Docker. The kernel reports:\n\n```text\n"
        "Xid 78: Guest driver is incompatible with host driver\n```\n\n"
        "`nvidia-smi` then sees no GPU and Docker eventually reports a driver RPC\ntimeout.\n"
    )
    assert _codes(text)[:1] == ["vgpu-guest-driver-incompatible"]


def test_xid_78_in_the_kernel_log_form():
    assert "vgpu-start-error-xid-78" in ids("[  12.345678] NVRM: Xid (PCI:0000:00:05): 78, pid=<unknown>, name=<unknown>")


def test_other_xids_are_not_a_vgpu_start_error():
    for line in ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
                 "NVRM: Xid (PCI:0000:3b:00): 781, pid=1234",
                 "Xid 13: Graphics Engine Exception"):
        found = ids(line)
        assert "vgpu-start-error-xid-78" not in found and "vgpu-start-error-guest-incompatible" not in found, line


def test_nanovdb_g6f_paste():
    # the paste around the message (openvdb#2255): the attribute query and nvidia-smi header
    text = (
        "When attempting to use the AWS EC2 `g6f` instance type for CI in `fvdb-core`, " + NANOVDB + "\n"
        "`driver=13000, query=no error, memoryPoolsSupported=0`\n"
        "| NVIDIA-SMI 580.159.03             Driver Version: 580.159.03     CUDA Version: 13.0     |\n"
    )
    assert _codes(text)[:1] == ["cuda-malloc-async-unsupported"]


def test_cudamallocasync_near_misses():
    for line in ("Using cudaMallocAsync allocator backend for device 0",
                 "cudaMallocAsync: out of memory allocating 2097152 bytes",
                 "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync operation took 3s"):
        assert "cudamallocasync-call-not-supported" not in ids(line), line


def test_tensorflow_context_in_use_paste():
    # tensorflow/tensorflow#526: the message quoted in the sentence, then the start-up lines
    text = (
        "I am still seeing the same cuda error for tensorflow 0.7. The error is ```Check failed: CUDA_SUCCESS == "
        "dynload::cuCtxSetCurrent(context) (0 vs. 216)```\n"
        "I tensorflow/stream_executor/dso_loader.cc:105] successfully opened CUDA library libcuda.so.1 locally\n"
        "I tensorflow/core/common_runtime/gpu/gpu_init.cc:102] Found device 0 with properties: \nname: Tesla K40m\n"
    )
    assert _codes(text)[:1] == ["cuda-devices-unavailable"]


def test_other_check_failures_keep_their_reading():
    for line in ("Check failed: CUDA_SUCCESS == cuCtxSetCurrent(context) (0 vs. 201)",
                 "Check failed: status == CUDNN_STATUS_SUCCESS (0 vs. 216)",
                 "Check failed: error == cudaSuccess (0 vs. 216) on the 216th batch"):
        assert "cuda-exclusive-thread-in-use" not in ids(line), line


def test_incus_resources_with_empty_nvidia_information():
    # lxc/incus#1322: `incus info --resources` on a host without nvidia-container-cli
    text = (
        "GPU:\n  NUMA node: 0\n  Vendor: NVIDIA Corporation (10de)\n"
        "  Product: GA104 [GeForce RTX 3060 Ti Lite Hash Rate] (2489)\n  PCI address: 0000:01:00.0\n"
        "  Driver: nvidia (560.35.03)\n  NVIDIA information:\n    Architecture:\n    Brand: NVIDIA\n"
        "    Model: NVIDIA GeForce RTX 3060 Ti\n    CUDA Version:\n    NVRM Version:\n    UUID:\n"
    )
    assert _codes(text)[:1] == ["container-toolkit-missing"]


def test_nvrm_version_with_a_value_is_healthy():
    for line in ("    NVRM Version: 560.35.03",
                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024",
                 "NVRM version:   410.93"):
        assert "lxd-incus-resources-without-nvidia-container-cli" not in ids(line), line


def test_mps_daemon_in_the_log_reads_error_46_as_mps():
    # NVIDIA/nvidia-docker#419: MPS started inside an nvidia-docker 1.0 container
    text = (
        "1. When I run `nvidia-cuda-mps-control -d` to start mps daemon in Nvidia-docker, I can't see this "
        "process from `nvidia-smi`\n"
        "F0703 13:39:15.539633    97 common.cpp:165] Check failed: error == cudaSuccess (46 vs. 0)  all "
        "CUDA-capable devices are busy or unavailable\n"
    )
    assert codes(text)[:1] == ["mps-unavailable"]


def test_error_46_without_mps_stays_the_symptom():
    text = ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n"
            "CUDA kernel errors might be asynchronously reported at some other API call\n")
    assert codes(text)[:1] == ["cuda-devices-unavailable"]
