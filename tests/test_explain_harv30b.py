"""harv30b: a seventh unbiased harvest, framed on the platform under the stack (WSL2, Windows,
Jetson/aarch64, containers, Kubernetes, Slurm, vGPU, new and dropped GPUs), scored blind, and the
general fixes its misses ask for (docs/dev/harv30b.md).

Twenty new training-side logs; explain named fifteen first before any change. Two misses were a
program's own line read as a more generic cause (A2):
- an NGC image's entrypoint verdict that the host driver is older than the one the image was built
  for (``version 440.100 was detected and compatibility mode is UNAVAILABLE``) lost to the
  ``cuInit(0) returned 804`` it prints two lines under it (forward compatibility could not cover
  the gap): ``driver-too-old-for-build`` (ultralytics/yolov5#231);
- the dynamic loader's ``undefined symbol: nvmlDeviceGetPciInfo_v3`` without the library's path
  (the k8s device plugin on driver 375) read as a compiled extension against another torch:
  ``nvml-function-missing-in-driver`` (NVIDIA/k8s-device-plugin#108).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "driver-too-old-for-build": [
        # NGC entrypoint's driver check, second line (ultralytics/yolov5#231: image 20.06, host 440.100)
        "version 440.100 was detected and compatibility mode is UNAVAILABLE.",
        # the same check as a later image prints it with a three-part driver version
        "version 550.127.08 was detected and compatibility mode is UNAVAILABLE.",
    ],
    "nvml-function-missing-in-driver": [
        # the loader's word for a versioned NVML entry point an older driver lacks
        # (NVIDIA/k8s-device-plugin#108, driver 375)
        "undefined symbol: nvmlDeviceGetPciInfo_v3",
        # pynvml's ctypes lookup with the library named (read before this round; kept as a row)
        "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
        "nvmlDeviceGetComputeRunningProcesses_v3",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)

NGC_BANNER = (
    "== PyTorch ==\n"
    "\n"
    "NVIDIA Release 20.06 (build 13192355)\n"
    "PyTorch Version 1.6.0a0+9907a3e\n"
    "\n"
    "ERROR: This container was built for NVIDIA Driver Release 450.36 or later, but\n"
    "       version 440.100 was detected and compatibility mode is UNAVAILABLE.\n"
)


def test_ngc_verdict_outranks_its_804_with_the_entrypoint_blank_line():
    # nvidia_entrypoint.sh echoes an empty line between the verdict and '[[status]]'
    text = NGC_BANNER + "\n       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n"
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_ngc_verdict_in_the_yolov5_paste():
    # ultralytics/yolov5#231 as pasted (no blank line, then the MOFED note and the app's own line)
    text = (
        "ERROR: This container was built for NVIDIA Driver Release 450.36 or later, but\n"
        "       version 440.100 was detected and compatibility mode is UNAVAILABLE.\n"
        "       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n"
        "NOTE: MOFED driver for multi-node communication was not detected.\n"
        "      Multi-node communication performance may be reduced.\n"
        "Using CPU\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_ngc_verdict_behind_docker_compose_prefixes():
    text = (
        "triton-1  | ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but\n"
        "triton-1  |        version 470.182.03 was detected and compatibility mode is UNAVAILABLE.\n"
        "triton-1  | \n"
        "triton-1  |        [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_ngc_near_misses_keep_their_reading():
    # no driver visible in the container: the entrypoint prints an empty version and status
    empty = (
        "ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but\n"
        "       version  was detected and compatibility mode is UNAVAILABLE.\n"
        "\n"
        "       [[]]\n"
    )
    assert "driver-too-old-for-build" not in match_codes(empty)
    # forward compatibility worked: a note, not a failure
    assert "driver-too-old-for-build" not in match_codes(
        "NOTE: Legacy NVIDIA Driver detected.  Compatibility mode ENABLED.\n")
    # the same entrypoint's CPU check
    assert "driver-too-old-for-build" not in match_codes(
        "ERROR: This container was built for CPUs supporting at least the AVX instruction set, but\n"
        "       the CPU detected was Intel(R) Celeron(R) CPU N3350, which does not report\n")
    # an 804 with no NGC verdict beside it stays forward compatibility's
    assert _codes("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                  "functions before calling NumCudaDevices() that might have already set an error? "
                  "Error 804: forward compatibility was attempted on non supported HW\n")[:1] == [
        "cuda-forward-compat-unsupported"]


def test_device_plugin_issue_text():
    # NVIDIA/k8s-device-plugin#108 as written
    text = (
        "Using drivers version 375.* , the pod crashes with : "
        '"undefined symbol: nvmlDeviceGetPciInfo_v3"\n'
    )
    assert _codes(text)[:1] == ["nvml-function-missing-in-driver"]


def test_other_undefined_symbols_are_not_nvml():
    # torch's own C++ symbol from an extension built against another torch
    assert "nvml-function-missing-in-driver" not in match_codes(
        "ImportError: /venv/lib/python3.10/site-packages/torch_scatter/_scatter_cuda.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    # NCCL's and the CUDA driver's entry points are other libraries
    assert "nvml-function-missing-in-driver" not in match_codes(
        "undefined symbol: ncclCommInitRankConfig\n")
    assert "nvml-function-missing-in-driver" not in match_codes(
        "undefined symbol: cuGetProcAddress_v2\n")
