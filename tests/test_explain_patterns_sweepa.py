"""Recall of explain on "the GPU is not there" symptoms, sampled the way users meet them
(sweepa): fresh training threads gathered by symptom query (tests/corpus/explain/*.log with
``# collected: training-2026-12-02e``), measured before any rule, then fixed by class.

What the threads showed, and the class each fix covers:

- ``nvidia-smi`` not found, in the words users quote it with rather than as bash prints it:
  ``\\`nvidia-smi\\` 命令返回错误 command not found`` (cnstark/pytorch-docker#19: a CUDA image run
  without ``--gpus``), bash's zh_CN ``nvidia-smi: 未找到命令``, ``nvidia-smi returns "command not
  found"``. Only a verb of answering may stand between, so another command's ``not found`` in
  the same sentence names nothing.
- the cause in users' own words: the GPU was not passed into the container (odysseus-dev/
  odysseus#2659: ``Docker does not pass the GPU into the container``, ``has no NVIDIA device
  reservation``; a forgotten ``--gpus all``), named device-nodes-missing, which had no signature
  of its own.
- CUDA's bare ``cudaErrorNoDevice`` / ``CUDA_ERROR_NO_DEVICE`` (numba's cuInit, cupy) with a
  CUDA_VISIBLE_DEVICES in the log is the variable hiding the GPUs, as its message's sibling
  signature ('no CUDA-capable device is detected') already said; both now read the Python
  spelling ``os.environ["CUDA_VISIBLE_DEVICES"] = ...`` too.
- torch's ``No CUDA GPUs are available`` is cudaErrorNoDevice (c10/cuda/CUDAFunctions.cpp):
  the driver answered, so what it could be no longer lists a missing driver or a CPU-only build.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test

FAMILIES = {
    "no-nvidia-driver": [
        # bash, as printed and in a zh_CN locale (bash.pot: 'command not found' -> '未找到命令')
        "bash: nvidia-smi: command not found",
        "bash: nvidia-smi: 未找到命令",
        # users quoting it (cnstark/pytorch-docker#19)
        "你好，安装完之后 `nvcc -V`显示了 cuda 版本，但是 `nvidia-smi` 命令返回错误 command not found",
        'On the new server `nvidia-smi` returns "command not found".',
        "nvidia-smi gives an error: command not found",
        # CUDA's own name for no device (numba cudadrv/driver.py), without CUDA_VISIBLE_DEVICES
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
        "CUDA_ERROR_NO_DEVICE (100)",
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


test_users_words_for_a_container_without_its_gpu = users_words_test({
    # odysseus-dev/odysseus#2659
    "Without it Docker does not pass the GPU into the container and `nvidia-smi` returns nothing.": "device-nodes-missing",
    "The `odysseus` service in `docker-compose.yml` has no NVIDIA device reservation, so `nvidia-smi` is "
    "unavailable inside the container.": "device-nodes-missing",
    "docker-compose: NVIDIA GPU not passed through to container": "device-nodes-missing",
    # cnstark/pytorch-docker#19 and its kind
    "fixed: forget to add `--gpus all` flag": "device-nodes-missing",
    "原因是启动容器时忘了加 --gpus all": "device-nodes-missing",
    "nvidia-smi is not found inside the container": "device-nodes-missing",
})


ENVS = [
    'os.environ["CUDA_VISIBLE_DEVICES"]="-1"',
    "os.environ['CUDA_VISIBLE_DEVICES'] = '7'",
    "export CUDA_VISIBLE_DEVICES=3",
    "[rank0]: CUDA_VISIBLE_DEVICES=2 python main.py",
]
NO_DEVICE = [
    "Call to cuInit results in CUDA_ERROR_NO_DEVICE:",
    "numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE",
    "cupy.cuda.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected",
    "THCudaCheck FAIL file=torch/csrc/cuda/Module.cpp line=109 error=38 : no CUDA-capable device is detected",
]


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("failure", NO_DEVICE)
def test_no_device_with_cuda_visible_devices_set_is_the_variable(env, failure):
    codes = [c.code for c in explain_text(env + "\n" + failure + "\n").candidates]
    assert codes[:1] == ["cuda-visible-devices-hides-gpus"], codes


@pytest.mark.parametrize("failure", NO_DEVICE)
def test_no_device_alone_stays_the_driver(failure):
    codes = [c.code for c in explain_text("step 1/10\n" + failure + "\n").candidates]
    assert codes[:1] == ["no-nvidia-driver"], codes


def test_nvml_driver_not_loaded_does_not_read_cuda_visible_devices():
    """NVML ignores the variable: its 'Driver Not Loaded' stays the driver with it set."""
    log = "export CUDA_VISIBLE_DEVICES=0\nFailed to initialize NVML: Driver Not Loaded\n"
    assert [c.code for c in explain_text(log).candidates][:1] == ["no-nvidia-driver"]


def test_no_cuda_gpus_could_be_what_cuda_error_no_device_means():
    """torch raises it for cudaErrorNoDevice: libcuda answered; what hides the GPU is the
    variable, a container without device nodes, no GPU at all (Colab's CPU runtime: the
    libraries, no device) or a MIG selection, never a CPU build."""
    expl = explain_text("RuntimeError: No CUDA GPUs are available\n")
    root = expl.candidates[0]
    assert root.code == "torch-cuda-unavailable"
    assert root.could_be[:2] == ("cuda-visible-devices-hides-gpus", "device-nodes-missing")
    assert "torch-cpu-only-build" not in root.could_be


def test_no_cuda_gpus_with_the_variable_in_the_log_is_the_variable():
    log = 'os.environ["CUDA_VISIBLE_DEVICES"]="3"\nRuntimeError: No CUDA GPUs are available\n'
    assert [c.code for c in explain_text(log).candidates][:1] == ["cuda-visible-devices-hides-gpus"]


def test_a_container_word_moves_nvidia_smi_missing_to_the_container():
    log = ("docker run -it anibali/pytorch:1.4.0-cuda10.1 sh\n"
           "`nvidia-smi` 命令返回错误 command not found\n")
    assert [c.code for c in explain_text(log).candidates][:1] == ["device-nodes-missing"]


@pytest.mark.parametrize("line", [
    "nvidia-smi works but nvcc: command not found",
    "nvidia-smi shows both GPUs; then `pip` returns command not found",
])
def test_another_commands_not_found_is_not_nvidia_smi(line):
    entries = [e.id for e in load().match_line(line)]
    assert "nvidia-smi-missing" not in entries, entries


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi",
    "The NVIDIA runtime passes the GPU into the container when you add --gpus all.",
    "Don't forget to add --gpus all when you start the container.",
    "deploy: resources: reservations: devices: - driver: nvidia count: all capabilities: [gpu]",
    "nvidia-smi shows both GPUs inside the container",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"',
    "torch.cuda.is_available(): True, device count 2",
])
