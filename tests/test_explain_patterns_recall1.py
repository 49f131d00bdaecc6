"""Issue 8 items 2, 3 and 7 (recall1): the gpu layer's existing codes, widened from 36 fresh
training threads (tests/corpus/explain/*.log with ``# collected: training-2026-12-01o``) that
state the same causes in other words, and from the sources that print their messages.

- Other clients of one library: NVML's error strings as nvidia-docker 1.x prints them
  ('Error: nvml: Insufficient Permissions'), as nvidia-ml-py words them ('RM has detected an
  NVML/RM version mismatch.', 'The operating system has blocked the request.'), as nvml.h
  documents them ('NVIDIA driver is not loaded', printed by nvidia-settings).
- Other releases and builds of one program: libnvidia-container's driver RPC ('driver rpc
  error: failed to process request' / 'timed out'), its 1.0 CUDA query ('cuda error: unknown
  error'), LXD's snap binary 'nvidia-container-cli.real', a pre-1.8 hook on cgroup v2
  ('cgroup subsystem devices not found'); the kernel module naming the driver that owns the
  GPU ('is already bound to NovaCore'), and nouveau's own probe line.
- Other libraries printing the same failure: SAPIEN's Vulkan ICD check, vLLM's placement group
  check, containerd's CRI for a RuntimeClass without a runtime, kubelet's admission
  ('OutOfnvidia.com/gpu'), Windows' TDR event for the display watchdog.
- Context deciding a symptom: WSL for 'NVIDIA-SMI has failed', a set CUDA_VISIBLE_DEVICES for
  'no CUDA-capable device is detected', MIG names for 'device_count() shows only one gpu',
  'proprietary' for a Blackwell GPU that never initialises, the kernel the machine booted into
  for 'NVIDIA driver is not loaded', vGPU words for 'all CUDA-capable devices are busy',
  libnvidia-container's driver service for a libcuda that does not load.

Messages are the programs' own wording (each signature's ``source`` names the file); the users'
words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import PROSE_WRAPPERS, family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "device-permission-denied": [
        # nvidia-docker 1.x (NVIDIA/nvidia-docker#284): nvmlErrorString(NVML_ERROR_NO_PERMISSION)
        "nvidia-docker | 2017/01/06 20:03:02 Error: nvml: Insufficient Permissions",
        "NVML: Insufficient Permissions",
    ],
    "no-nvidia-driver": [
        # the same client, NVML_ERROR_DRIVER_NOT_LOADED; nvidia-settings (void-linux/void-packages#14377)
        "nvidia-docker | 2017/02/04 13:05:46 Error: nvml: Driver Not Loaded",
        "ERROR: NVIDIA driver is not loaded",
    ],
    "driver-library-mismatch": [
        # nvidia-ml-py pynvml.py _errcode_to_string[NVML_ERROR_LIB_RM_VERSION_MISMATCH]
        "gpustat: NVML error: RM has detected an NVML/RM version mismatch.",
    ],
    "nvidia-container-cli-driver-error": [
        # libnvidia-container 1.5+ driver RPC (NVIDIA/nvidia-container-toolkit#556), LXD's snap binary,
        # libnvidia-container 1.0.x (NVIDIA/libnvidia-container#103)
        "nvidia-container-cli: initialization error: driver rpc error: failed to process request: unknown.",
        "stderr: nvidia-container-cli.real: initialization error: driver rpc error: timed out",
        "nvidia-container-cli: initialization error: cuda error: unknown error",
    ],
    "container-gpu-device-unknown": [
        # libnvidia-container src/cli/common.c select_devices, as LXD's snap names the binary
        # (NVIDIA/nvidia-container-toolkit#203)
        "nvidia-container-cli.real: device error: MIG-GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39/1/0: unknown device",
    ],
    "container-device-cgroup-denied": [
        # libnvidia-container src/nvc_container.c find_cgroup_path (NVIDIA/nvidia-docker#1660)
        "nvidia-container-cli: container error: cgroup subsystem devices not found: unknown",
    ],
    "nouveau-holds-gpu": [
        # NVIDIA kernel module nv-pci.c probe (beclab/Olares#3963)
        "[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.",
        "NVRM: GPU 0000:65:00.0 is already bound to nouveau.",
    ],
    "vulkan-driver-libs-missing": [
        # sapien/_vulkan_tricks.py (NVIDIA/nvidia-container-toolkit#1392)
        "/usr/local/lib/python3.10/site-packages/sapien/_vulkan_tricks.py:37: UserWarning: Failed to find Vulkan "
        "ICD file. This is probably due to an incorrect or partial installation of the NVIDIA driver. SAPIEN will "
        "attempt to provide an ICD file anyway but it may not work.",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # vllm/executor/ray_utils.py (warning in newer releases, ValueError in older ones)
        "WARNING 03-18 11:21:32 ray_utils.py:320] The number of required GPUs exceeds the total number of "
        "available GPUs in the placement group.",
        "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group.",
    ],
    "wsl-gpu-unavailable": [
        # nvidia-ml-py words NVML_ERROR_OPERATING_SYSTEM
        "pynvml.NVMLError_OperatingSystem: The operating system has blocked the request.",
    ],
    "docker-nvidia-runtime-not-registered": [
        # containerd CRI for a RuntimeClass whose handler is not configured
        'Warning  FailedCreatePodSandBox  3s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown '
        'desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
    ],
    "gpu-display-watchdog": [
        # Windows System log, Display event 4101
        "Display driver nvlddmkm stopped responding and has successfully recovered.",
    ],
    "k8s-gpu-insufficient": [
        # kubelet admission, pkg/kubelet/lifecycle/predicate.go
        "Warning  OutOfnvidia.com/gpu  12s  kubelet  Node didn't have enough resource: nvidia.com/gpu, "
        "requested: 1, used: 1, capacity: 1",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


# users' words for a cause (the training threads), in the wrappers issues and chats put around them
PROSE = [
    # getsolus/packages#5575
    ("switching to another TTY and running dmesg shows an explicit error message about the open kernel modules "
     "being required", "proprietary-kernel-module-unsupported-gpu"),
    ("My RTX 5090 requires the open kernel modules, the proprietary ones do nothing",
     "proprietary-kernel-module-unsupported-gpu"),
    # ray-project/ray#55247
    ("In my test environment, there is only 1 GPU, so the placement group creation failed due to insufficient "
     "GPU resources.", "scheduler-gpu-request-unsatisfiable"),
]


@pytest.mark.parametrize("wrapper", list(PROSE_WRAPPERS))
@pytest.mark.parametrize("sentence,code", PROSE, ids=[c + "-" + str(i) for i, (_, c) in enumerate(PROSE)])
def test_users_words_name_the_cause(sentence, code, wrapper):
    expl = explain_text(PROSE_WRAPPERS[wrapper](sentence) + "\n")
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    assert expl.exit_code == 1


def _first(log: str) -> str:
    codes = [c.code for c in explain_text(log).candidates]
    assert codes, log
    return codes[0]


SMI_FAILED = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
              "latest NVIDIA driver is installed and running.\n")


def test_nvidia_smi_failing_under_wsl_is_wsl():
    # microsoft/WSL#3847
    assert _first("#### Ubuntu app WSL:\nwhen using nvidia-smi I get :\n" + SMI_FAILED) == "wsl-gpu-unavailable"


def test_nvidia_smi_failing_elsewhere_stays_no_driver():
    assert _first(SMI_FAILED) == "no-nvidia-driver"


NO_DEVICE = "THCudaCheck FAIL file=torch/csrc/cuda/Module.cpp line=109 error=38 : no CUDA-capable device is detected\n"


def test_no_device_with_cuda_visible_devices_set_is_the_variable():
    # pytorch/examples#115: the README's CUDA_VISIBLE_DEVICES=2 on a one-GPU machine
    log = "(py35) ~/pytorch/examples/mnist$ CUDA_VISIBLE_DEVICES=2 python main.py\n" + NO_DEVICE
    assert _first(log) == "cuda-visible-devices-hides-gpus"


def test_no_device_set_far_from_the_error_is_still_the_variable():
    log = "export CUDA_VISIBLE_DEVICES=3\n" + "".join(f"step {i}\n" for i in range(30)) + NO_DEVICE
    assert _first(log) == "cuda-visible-devices-hides-gpus"


def test_no_device_alone_stays_no_driver():
    assert _first(NO_DEVICE) == "no-nvidia-driver"


def test_libcuda_missing_in_the_hook_s_driver_service_is_the_hook():
    # OE4T/meta-tegra#1456
    log = ("nvidia-container-cli: initialization error: driver error: failed to process request\n"
           "E0116 15:56:51.763612 1363 driver.c:196] could not start driver service: load library failed: "
           "libcuda.so.1: cannot open shared object file: no such file or directory\n")
    assert _first(log) == "nvidia-container-cli-driver-error"


NOUVEAU_DMESG = ("[    5.435274] nouveau 0000:01:00.0: enabling device (0000 -> 0003)\n"
                 "[    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)\n"
                 "[    5.871440] nouveau 0000:01:00.0: DRM: VRAM: 4096 MiB\n")


def test_nouveau_bound_to_the_gpu_alone_is_nouveau():
    # negativo17/nvidia-driver#73: the dmesg is all the user pasted
    assert _first(NOUVEAU_DMESG) == "nouveau-holds-gpu"


def test_nouveau_s_boot_line_does_not_outrank_a_named_failure():
    log = NOUVEAU_DMESG + "RuntimeError: CUDA error: out of memory\n"
    assert _first(log) != "nouveau-holds-gpu"


DEVICE_COUNT = "and `torch.cuda.device_count()` shows only one gpu. How could I solve it?\n"


def test_device_count_one_on_a_mig_gpu_is_mig():
    # pytorch/pytorch#102715
    assert _first("Hi, I have an a100 machine and the configuration for MIG is following.\n" + DEVICE_COUNT) \
        == "mig-device-selection"


def test_device_count_one_with_the_variable_set_is_the_variable():
    assert _first("CUDA_VISIBLE_DEVICES=1 python train.py\n" + DEVICE_COUNT) == "cuda-visible-devices-hides-gpus"


RM_INIT = "NVRM: GPU 000f:01:00.0: RmInitAdapter failed! (0x62:0x1a:2631)\n"


def test_a_gpu_that_never_initialises_under_the_proprietary_module_is_the_flavour():
    # Start9Labs/start-technologies#3693
    log = "With 580.173.02's **proprietary** modules the GPU is found but never initializes:\n" + RM_INIT
    assert _first(log) == "proprietary-kernel-module-unsupported-gpu"


def test_a_gpu_that_never_initialises_alone_stays_the_symptom():
    assert _first(RM_INIT) == "nvidia-gpu-init-failed"


def test_driver_not_loaded_after_booting_a_new_kernel_is_the_module():
    # void-linux/void-packages#14377 in the words of a user who says which kernel it booted into
    log = "After the upgrade the machine booted into 5.2 and nvidia-settings says\nERROR: NVIDIA driver is not loaded\n"
    assert _first(log) == "nvidia-module-missing-for-kernel"


BUSY = ("tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 "
        "failed. Status: all CUDA-capable devices are busy or unavailable\n")


def test_devices_busy_on_a_vgpu_is_its_license():
    # DDMAL/Rodan#1332, with the vGPU named
    assert _first("The VM has an NVIDIA vGPU (A40-8C profile).\n" + BUSY) == "vgpu-unlicensed"


def test_devices_busy_alone_names_vgpu_among_the_likely_causes():
    expl = explain_text(BUSY)
    assert expl.candidates[0].code == "cuda-devices-unavailable"
    assert "vgpu-unlicensed" in expl.candidates[0].could_be[:2], expl.candidates[0].could_be


test_healthy_line_names_nothing = healthy_test([
    "print(torch.cuda.device_count())  # 8 on the DGX",
    "MIG 3g.40gb     Device  0: (UUID: MIG-0929581a-2be6-5dec-bf34-0954c6c529a6)",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build",
    "I0116 15:56:51.762404 1363 driver.c:134] starting driver service",
    "Installed the open kernel modules: sudo apt install nvidia-driver-580-open",
    "Placement group pg_4f2a created with 4 GPU bundles",
    "export VK_ICD_FILENAMES=/etc/vulkan/icd.d/nvidia_icd.json",
    "License Status                    : Licensed (Expiry: 2026-12-31 0:0:0 GMT)",
    "nvidia-container-cli: info: 2 GPUs, driver 580.95.05",
    "[drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on minor 1",
])
