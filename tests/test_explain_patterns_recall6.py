"""Issue 8 items 2, 3 and 7 (recall6): explain's recall on the existing codes of the gpu layer
(driver, kernel modules, container toolkit, NVML, WSL, MIG, fabric), widened by class from 21
fresh training threads (tests/corpus/explain/*.log with ``# collected: training-2026-12-02a``)
and from the programs that print the messages.

What the threads showed, and the class each fix covers:

- kmod's ``FATAL: Module nvidia-uvm not found`` named the whole module set missing for the kernel
  (nvidia-module-missing-for-kernel), although only the unified-memory module was absent while
  the main module loaded (Bumblebee 623, a distribution that names it nvidia-<branch>-uvm). The
  uvm module is now excluded from that signature and is a weaker signature of nvidia-uvm-missing:
  when 'Module nvidia not found' is in the log too, the whole set is still the answer.
- ``invalid device ordinal`` on a MIG-partitioned GPU (mlcommons/training 442): every ordinal
  but 0 is invalid because a process enumerates one MIG instance; the log's MIG words (anywhere,
  through the clue lines) refine device-ordinal-out-of-range to mig-device-selection.
- Docker's ``could not select device driver "" with capabilities: [[gpu]]`` when the toolkit is
  installed but was never registered with the daemon (Blucast 7: ``nvidia-ctk runtime configure``
  not run): the log's words refine container-toolkit-missing to
  docker-nvidia-runtime-not-registered.
- nvidia-smi's ``couldn't find libnvidia-ml.so library`` inside a container, fixed by running
  ldconfig in the container (nvidia-docker 1163, libnvidia-container 67): the hook injected the
  library but the loader cache was not updated, container-toolkit-ldconfig-broken; the users'
  sentence is a signature of its own.
- Windows' TDR as users meet it: the Windows 7 wording of the reset dialog without the driver's
  name ('Display driver stopped responding and has recovered', hybridizer-basic-samples 41), and,
  when the CUDA error itself is generic (999), 'my screen goes black for a second'
  (raytracinginoneweekendincuda 7) or a named TDR, as a catch-all signature.
- Beyond the collected logs, other spellings of the same raise sites: the driver API's
  ``CUDA_ERROR_SYSTEM_NOT_READY`` (802, the fabric manager; numba and JAX print the enum name),
  nvidia-installer's Secure Boot sentence cut after its first clause and its signed-module
  variant (luckyyyyy/blog 72), dkms's stale tree of the nvidia module (negativo17 56).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text

from explain_helpers import codes_of as _codes
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "nvidia-uvm-missing": [
        # kmod tools/modprobe.c, asked for the unified-memory module (nvidia-modprobe -u, a CUDA program)
        "modprobe: FATAL: Module nvidia-uvm not found.",
        "modprobe: FATAL: Module nvidia_uvm not found in directory /lib/modules/5.15.0-91-generic",
    ],
    "gpu-display-watchdog": [
        # Windows 7's wording of the TDR dialog (no driver name), and Windows 10's event text
        "Display driver stopped responding and has recovered",
        "Display driver nvlddmkm stopped responding and has successfully recovered.",
    ],
    "fabric-manager-not-running": [
        # cuda.h CUDA_ERROR_SYSTEM_NOT_READY (802) as driver-API clients print it (numba, jax)
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in CUDA_ERROR_SYSTEM_NOT_READY (802)",
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY",
    ],
    "secure-boot-rejects-module": [
        # nvidia-installer, its sentence cut after the first clause, and the signed-module variant
        "ERROR: The kernel module failed to load. Secure boot is enabled on this system",
        "Error: The signed kernel module failed to load.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# users' words of the training threads (nvidia-docker 1163, libnvidia-container 67,
# raytracinginoneweekendincuda 7, NCAR/VAPOR 1420)
test_users_words_name_the_cause = users_words_test({
    "receive error NVIDIA-SMI couldn't find libnvidia-ml.so library in your system when running nvidia-smi within "
    "cointainer. running ldconfig within the container corrects this temporarily until the container is updated":
        "container-toolkit-ldconfig-broken",
    "I must launch ldconfig within the container and it fix the problem.": "container-toolkit-ldconfig-broken",
    "crashes after a few seconds with CUDA error 999 (Also my screen goes black for a second)": "gpu-display-watchdog",
    "Volume rendering on Windows produces a timeout error: A TDR has been detected": "gpu-display-watchdog",
})


def test_only_the_uvm_module_missing_is_uvm():
    # Bumblebee 623 (training)
    log = ("pycuda._driver.Error: cuInit failed: unknown\n"
           "modprobe: FATAL: Module nvidia-uvm not found.\n"
           "modprobe: ERROR: could not insert 'nvidia_331_updates_uvm': No such device\n")
    assert _codes(log)[:1] == ["nvidia-uvm-missing"]


@pytest.mark.parametrize("log", [
    "modprobe: FATAL: Module nvidia not found.\n",
    # the whole set missing: the main module's line outranks the uvm one
    "$ nvidia-smi\nmodprobe: FATAL: Module nvidia not found.\n"
    "$ sudo nvidia-modprobe -u -c=0\nmodprobe: FATAL: Module nvidia-uvm not found.\n",
    "modprobe: FATAL: Module nvidia_drm not found in directory /lib/modules/6.8.0-45-generic\n",
])
def test_the_main_module_missing_stays_missing_for_the_kernel(log):
    assert _codes(log)[:1] == ["nvidia-module-missing-for-kernel"]


@pytest.mark.parametrize("log", [
    # mlcommons/training 442 (training)
    "I tried to run the benchmark on NVIDIA A100 with MIG GPU instances\n"
    "RuntimeError: cuda runtime error (101) : invalid device ordinal at /opt/pytorch/torch/csrc/cuda/Module.cpp:33\n",
    # the MIG words far from the error
    "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6)\n  MIG 1g.5gb Device 0: (UUID: MIG-c6d4f1ef)\n"
    + "".join(f"step {i}\n" for i in range(30))
    + "[rank1]: RuntimeError: CUDA error: invalid device ordinal\n",
])
def test_an_invalid_ordinal_on_mig_is_mig_device_selection(log):
    assert _codes(log)[:1] == ["mig-device-selection"]


def test_an_invalid_ordinal_without_mig_stays_out_of_range():
    log = "[rank3]: RuntimeError: CUDA error: invalid device ordinal\n"
    assert _codes(log)[:1] == ["device-ordinal-out-of-range"]


@pytest.mark.parametrize("log", [
    # Blucast 7 (training)
    "When using Docker (not Podman), the run fails with `could not select device driver \"\" with capabilities: "
    "[[gpu]]` if the NVIDIA Container Toolkit hasn't been configured for Docker.\n",
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"
    "NVIDIA Container Toolkit installed, docker restarted\n",
    "> docker: Error response from daemon: could not select device driver \"nvidia\" with capabilities: [[gpu]].\n"
    "> I ran sudo nvidia-ctk runtime configure --runtime=docker but not the restart\n",
])
def test_a_refusal_with_the_toolkit_installed_is_an_unregistered_runtime(log):
    assert _codes(log)[:1] == ["docker-nvidia-runtime-not-registered"]


def test_the_bare_refusal_stays_a_missing_toolkit():
    log = "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"
    assert _codes(log)[:1] == ["container-toolkit-missing"]


def test_nvml_not_found_without_ldconfig_words_stays_nvml():
    log = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
           "Display Driver is properly installed and present in your system.\n")
    assert _codes(log)[:1] == ["nvml-unavailable"]


def test_the_hooks_ldconfig_option_is_not_the_users_fix():
    # every nvidia-container-cli command dump names ldconfig: it decides nothing
    log = ("stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real "
           "--device=all --compute --utility --require=cuda>=9.0 --pid=3461 /var/lib/docker/overlay2/34e/merged]\n"
           "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.\n")
    assert _codes(log)[:1] == ["nvml-unavailable"]


def test_a_screen_that_stays_black_is_not_the_watchdog():
    log = "After installing the driver the screen goes black after reboot and stays black\n"
    assert "gpu-display-watchdog" not in _codes(log)


def test_a_blank_screen_beside_a_real_failure_is_not_named():
    # a catch-all: any other signature wins
    log = ("my screen went black for a second\n"
           "RuntimeError: CUDA error: out of memory\n")
    assert _codes(log)[:1] != ["gpu-display-watchdog"]


# negative controls: healthy lines with the same words
test_healthy_lines_name_nothing = healthy_test([
    "$ sudo modprobe nvidia-uvm && ls -l /dev/nvidia-uvm",
    "nvidia_uvm: Loaded the UVM driver, major device number 511.",
    "Display driver: NVIDIA 551.61",
    "Setting up nvidia-container-toolkit (1.17.8-1) ...",
    "ldconfig -p | grep libnvidia-ml",
    "MIG 1g.5gb Device 0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)",
])


def test_a_stale_dkms_entry_of_nvidia_is_the_module_missing():
    # negativo17/nvidia-driver 56 (training): dkms status stops on a removed version's entry
    log = ("$ dkms status\nError! Could not locate dkms.conf file.\n"
           "File: /var/lib/dkms/nvidia/390.48/source/dkms.conf does not exist.\n")
    expl = explain_text(log)
    assert [c.code for c in expl.candidates][:1] == ["nvidia-module-missing-for-kernel"]
    assert expl.root.basis != "vocabulary"


def test_another_modules_stale_dkms_entry_is_not_nvidias():
    log = "File: /var/lib/dkms/r8125/9.011.00/source/dkms.conf does not exist.\n"
    assert "nvidia-module-missing-for-kernel" not in _codes(log)
