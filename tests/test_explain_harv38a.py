"""harv38a: an unbiased harvest of GPU driver installation and kernel-module threads (DKMS after
kernel updates, the driver's compiler check, Secure Boot, nouveau, driver/library version
mismatches, the GPU Operator's driver container), scored blind, and the general fixes its misses
ask for (docs/dev/harv38a.md).

Twenty-one new training-side logs; explain named thirteen first before any change. The fixed
misses:
- A1, the NVIDIA driver's own compiler check in kernel/conftest.sh (``Compiler version check
  failed:``, ``*** Failed CC version check. Bailing out! ***``, the older ``gcc-version-check
  failed:``): clearlinux/distribution#1970 named no-nvidia-driver first; now
  ``nvidia-module-missing-for-kernel`` (the module was not built for the running kernel);
- A1, the GPU Operator driver container's ``Could not unload NVIDIA driver kernel modules, driver
  is in use`` (NVIDIA/gpu-operator#163, unknown before); now ``nvidia-module-in-use``;
- A1, nvidia-modeset.ko's own load check ``nvidia-modeset: Version mismatch: nvidia.ko(...)``
  (voidlinux/void-packages#5745, unknown before); now ``driver-library-mismatch``;
- A1 + C2, RPM Fusion's ``NVIDIA kernel module missing. Falling back to nouveau``
  (gridhead/nvidia-auto-installer-for-fedora-linux#107, unknown before): now
  ``nvidia-module-missing-for-kernel``, refined to ``secure-boot-rejects-module`` by the same
  Secure Boot context the other 'no driver loaded' signatures read.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# NVIDIA driver kernel/conftest.sh cc_version_check (the fatal form, 390-440 era)
CC_BAILING = "*** Failed CC version check. Bailing out! ***"
CC_HEADING = "Compiler version check failed:"
CC_MAJOR_MINOR = "The major and minor number of the compiler used to"
# the older cc_sanity_check wording (340/367 era)
GCC_CHECK = "gcc-version-check failed:"
GCC_REJECTS = "that does not exactly match that of the compiler used to build the running kernel. " \
    "The Linux 2.6 kernel module loader rejects kernel modules built with a version of gcc"
# NVIDIA/gpu-driver-container nvidia-driver _unload_driver; NVIDIA/k8s-driver-manager
UNLOAD_IN_USE = "Could not unload NVIDIA driver kernel modules, driver is in use"
# kernel/nvidia-modeset/nvidia-modeset-linux.c nvkms_alloc_rm (as void-packages#5745 pasted it,
# an older release without '.ko'), and kernel/nvidia-drm/nvidia-drm-linux.c nv_drm_init
MODESET_MISMATCH = "nvidia-modeset: Version mismatch: nvidia.ko(378.13) nvidia-modeset(375.26)"
MODESET_MISMATCH_KO = "[    5.101] nvidia-modeset: Version mismatch: nvidia.ko(550.90.07) nvidia-modeset.ko(550.107.02)"
DRM_MISMATCH = "[drm:nv_drm_init [nvidia_drm]] *ERROR* [nvidia-drm] Version mismatch: " \
    "nvidia-modeset.ko(550.90.07) nvidia-drm.ko(550.107.02)"
# RPM Fusion xorg-x11-drv-nvidia nvidia-fallback.service
FALLBACK = "NVIDIA kernel module missing. Falling back to nouveau"

FAMILIES = {
    "nvidia-module-missing-for-kernel": [CC_BAILING, CC_MAJOR_MINOR, GCC_CHECK, GCC_REJECTS, FALLBACK],
    "nvidia-module-in-use": [UNLOAD_IN_USE],
    "driver-library-mismatch": [MODESET_MISMATCH, MODESET_MISMATCH_KO, DRM_MISMATCH],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_clearlinux_dkms_make_log_names_the_compiler_check():
    # clearlinux/distribution#1970, the DKMS make.log as pasted
    text = (
        "cat /var/lib/dkms/nvidia/440.82/build/make.log\n"
        "DKMS make.log for nvidia-440.82 for kernel 5.4.40-38.lts2019 (x86_64)\n"
        "make[1]: Entering directory '/usr/lib/modules/5.4.40-38.lts2019/build'\n"
        "  SYMLINK /var/lib/dkms/nvidia/440.82/build/nvidia/nv-kernel.o\n"
        "\n"
        "Compiler version check failed:\n"
        "\n"
        "The major and minor number of the compiler used to\n"
        "compile the kernel:\n"
        "\n"
        "gcc version 9.3.1 20200507 releases/gcc-9.3.0-217-g7790399265 (Clear Linux OS for Intel Architecture)\n"
        "\n"
        "does not match the compiler used here:\n"
        "\n"
        "cc (Clear Linux OS for Intel Architecture) 10.1.1 20200513 releases/gcc-10.1.0-36-gf2b77b928a\n"
    )
    assert _codes(text)[:1] == ["nvidia-module-missing-for-kernel"]


def test_compiler_check_near_misses_keep_their_reading():
    # other tools' 'Compiler version check failed: <details>' (a build script, SCons)
    assert "nvidia-kbuild-cc-version-check-heading" not in _ids(
        "RuntimeError: Compiler version check failed: {'status': 'failed'}")
    assert "nvidia-kbuild-cc-version-check-heading" not in _ids(
        "Compiler version check failed. Supported compilers: clang 3.3 or later, g++ 4.7 or later")
    # the kernel's own build warning is no refusal
    assert not {"nvidia-kbuild-cc-version-check", "nvidia-kbuild-cc-version-check-heading"} & set(_ids(
        "warning: the compiler differs from the one used to build the kernel"))
    # a user who sets the override in a script names no failure
    assert "nvidia-kbuild-cc-version-check-heading" not in _ids("export IGNORE_CC_MISMATCH=1")


def test_driver_container_unload_in_gpu_operator_pod_log():
    # NVIDIA/gpu-operator#163, the driver daemonset's log
    text = (
        "Starting installation of NVIDIA driver version 460.32.03 for Linux kernel version 4.15.0-136-generic\n"
        "\n"
        "Stopping NVIDIA persistence daemon...\n"
        "Unloading NVIDIA driver kernel modules...\n"
        "Could not unload NVIDIA driver kernel modules, driver is in use\n"
    )
    assert _codes(text)[:1] == ["nvidia-module-in-use"]


def test_unload_near_misses():
    # the container's healthy progress line, and k8s-driver-manager's per-module warning alone
    assert "driver-container-cannot-unload" not in _ids("Unloading NVIDIA driver kernel modules...")
    assert "driver-container-cannot-unload" not in _ids(
        "Failed to unload kernel module nvidia_uvm: resource temporarily unavailable")


def test_modeset_mismatch_near_misses():
    # NVRM's API mismatch already has its own signature; the healthy load banner matches nothing here
    assert "nvidia-kernel-modules-version-mismatch" not in _ids(
        "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.90.07")
    assert "nvidia-kernel-modules-version-mismatch" not in _ids(
        "nvidia-nvswitch: Version mismatch, kernel version 450.80.02 user version 450.51.06")


def test_fallback_with_secure_boot_names_secure_boot():
    # gridhead/nvidia-auto-installer-for-fedora-linux#107: the fallback line and a MOK import
    text = (
        "This is the phrase that I would get on boot:\n"
        "nvidia kernel module missing falling back to nouveau\n"
        "\n"
        "3. sudo mokutil --import /etc/pki/akmods/certs/public_key.der\n"
    )
    assert _codes(text)[:1] == ["secure-boot-rejects-module"]


def test_fallback_alone_names_the_missing_module():
    text = "May 02 10:11:12 fedora sh[812]: NVIDIA kernel module missing. Falling back to nouveau\n"
    assert _codes(text)[:1] == ["nvidia-module-missing-for-kernel"]


def test_fallback_near_misses():
    # installers' own messages that fall back by choice, not because a module is missing
    assert "rpmfusion-nvidia-fallback" not in _ids(
        "WARNING: NVIDIA driver installation failed. Falling back to nouveau.")
    assert "rpmfusion-nvidia-fallback" not in _ids(
        "Legacy NVIDIA branch 470 unavailable — falling back to nouveau.")
