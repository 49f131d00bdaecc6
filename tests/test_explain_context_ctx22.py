"""Context rules of ctx22 (docs/dev/ctx22.md): one environment word picks the sibling cause.

Each rule: the symptom line with the context word names the specific cause (the word near the
line, far from it, under a rank prefix and quoted); the same line without it keeps the old
answer; near misses (words that look alike but do not state the context) keep it too.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text

from explain_helpers import codes_of as _codes

GAP = "\n".join(f"step {i}: ok" for i in range(8))

# torch/cuda/__init__.py _lazy_init: raise AssertionError("Torch not compiled with CUDA enabled")
NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"


@pytest.mark.parametrize("text", [
    f"{NOT_COMPILED}\nGPU: AMD Radeon RX 6800 XT",
    f"System: Windows 11, AMD Radeon RX 7900 XTX\n{GAP}\n{NOT_COMPILED}",
    f"[rank0]: {NOT_COMPILED}\n[rank0]: GPU: AMD Radeon RX 6800 XT",
    f"> {NOT_COMPILED}\n> AMD Radeon RX 6800 XT",
    f"ROCm 6.0 installed, agent gfx1100\n{NOT_COMPILED}",
    f"pip install torch-directml\n{NOT_COMPILED}",
])
def test_a_cpu_torch_on_an_amd_gpu_needs_an_amd_backend(text):
    assert _codes(text)[0] == "amd-gpu-no-torch-backend"


@pytest.mark.parametrize("text", [
    NOT_COMPILED,
    f"CPU: AMD Ryzen 9 7950X\n{NOT_COMPILED}",                                # an AMD CPU
    f"Python 3.10.9 [MSC v.1934 64 bit (AMD64)]\n{NOT_COMPILED}",             # the x86-64 arch name
    f"{NOT_COMPILED}\nGPU 0: NVIDIA GeForce RTX 3090",                        # an NVIDIA GPU
])
def test_without_an_amd_gpu_it_stays_a_cpu_build(text):
    assert _codes(text)[0] == "torch-cpu-only-build"


# cudart's cudaErrorInsufficientDriver (35) as torch prints it (c10/cuda/CUDAException.h)
INSUFFICIENT = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
PLAIN_RUN = "$ docker run -it --rm -v $PWD:/ws pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime python /ws/train.py"


def test_cudart_35_under_a_plain_docker_run_keeps_its_reading():
    # not refined: under a daemon whose default runtime is nvidia an image that sets
    # NVIDIA_VISIBLE_DEVICES gets the GPU and the driver's libcuda, and 35 is the old driver
    # (tests/test_explain_refine_order.py pins the same for a non-torch program)
    assert _codes(f"{PLAIN_RUN}\n{INSUFFICIENT}")[0] == "driver-too-old-for-torch"


@pytest.mark.parametrize("text,code", [
    (INSUFFICIENT, "driver-too-old-for-torch"),
    (f"{PLAIN_RUN.replace('-it', '--gpus all -it')}\n{INSUFFICIENT}", "driver-too-old-for-torch"),
    (f"$ docker build -t trainer .\n{INSUFFICIENT}", "driver-too-old-for-torch"),
    # the bare --device rule (main, nvidia-docker#24) names the missing toolkit
    (f"{PLAIN_RUN.replace('-it', '--device /dev/nvidia0 --device /dev/nvidiactl -it')}\n{INSUFFICIENT}",
     "container-toolkit-missing"),
])
def test_cudart_35_and_container_lines(text, code):
    assert _codes(text)[0] == code


# the dynamic loader's message for the driver's library (glibc dlerror), as torch/ctypes show it
LIBCUDA = "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"
BARE_DEVICE_RUN = "docker run --device /dev/nvidia0 --device /dev/nvidiactl --device /dev/nvidia-uvm -it img python t.py"


@pytest.mark.parametrize("text,code", [
    (f"{PLAIN_RUN}\n{LIBCUDA}", "device-nodes-missing"),
    (f"{PLAIN_RUN}\n{GAP}\n{LIBCUDA}", "device-nodes-missing"),
    (f"[rank0]: {PLAIN_RUN}\n[rank0]: {LIBCUDA}", "device-nodes-missing"),
    (f"> {BARE_DEVICE_RUN}\n> {LIBCUDA}", "container-toolkit-missing"),
    (f"{BARE_DEVICE_RUN}\n{GAP}\n{LIBCUDA}", "container-toolkit-missing"),
])
def test_libcuda_missing_in_a_container_started_without_the_gpu_runtime(text, code):
    assert _codes(text)[0] == code


@pytest.mark.parametrize("text,code", [
    (LIBCUDA, "libcuda-missing"),
    (f"{PLAIN_RUN.replace('-it', '--gpus all -it')}\n{LIBCUDA}", "libcuda-missing"),
    (f"{BARE_DEVICE_RUN.replace('docker run', 'docker run --runtime=nvidia')}\n{LIBCUDA}", "libcuda-missing"),
    (f"Linux box 5.15.133.1-microsoft-standard-WSL2\n{LIBCUDA}", "wsl-libcuda-not-linked"),
])
def test_libcuda_missing_with_the_gpu_runtime_or_no_container_keeps_its_answer(text, code):
    assert _codes(text)[0] == code


# nvidia-smi's header and torch's collect_env line (the facts: the driver's CUDA, torch's CUDA)
SMI_122 = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |"
SMI_114 = "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |"
TORCH_121 = "CUDA used to build PyTorch: 12.1"


@pytest.mark.parametrize("text", [
    f"{SMI_122}\n{TORCH_121}\n{INSUFFICIENT}",
    f"{SMI_122}\n{GAP}\n{INSUFFICIENT}\n{GAP}\ntorch 2.3.0+cu124",          # far; a 12.4 runtime on a 12.2 driver
    "\n".join(f"[rank0]: {x}" for x in (SMI_122, TORCH_121, INSUFFICIENT)),
    "\n".join(f"> {x}" for x in (SMI_122, TORCH_121, INSUFFICIENT)),
])
def test_cudart_35_with_a_driver_new_enough_is_a_libcuda_it_cannot_reach(text):
    top = explain_text(text).candidates[0]
    assert top.code == "libcuda-missing" and "state:driver-new-enough-for-runtime" in top.facts


@pytest.mark.parametrize("text,code", [
    (INSUFFICIENT, "driver-too-old-for-torch"),                                 # no facts
    (f"{SMI_122}\n{INSUFFICIENT}", "driver-too-old-for-torch"),                 # the runtime's CUDA unknown
    (f"{SMI_114}\n{TORCH_121}\n{INSUFFICIENT}", "driver-too-old-for-torch"),    # the driver is too old
    (f"{SMI_122}\n{TORCH_121}\n{BARE_DEVICE_RUN}\n{INSUFFICIENT}", "container-toolkit-missing"),  # refined line
    # another line of the same code: a PTX too new for the driver is not about libcuda
    (f"{SMI_122}\n{TORCH_121}\nRuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
     "driver-too-old-for-torch"),
])
def test_cudart_35_without_the_deciding_facts_keeps_its_answer(text, code):
    assert _codes(text)[0] == code


def test_the_facts_alone_name_nothing():
    assert _codes(f"{SMI_122}\n{TORCH_121}") == []
