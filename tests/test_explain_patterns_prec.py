"""Precision of specific rules (prec, docs/dev/signature-precision.md): a signature written for one
cause must need the part of a message that shows that cause. A generic line (the CUDA error every
refused kernel image raises, OpenSSH's refusal of any key) is the symptom with its ranked causes,
or nothing, never one specific cause; the specific message still names its cause.

Found with ``bench/signature_precision.py`` on the training part: per signature, the logs where
it led explain's answer with a cause other than the established one.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, codes_of

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "ptxas-newer-than-driver": [
        # triton/backends/nvidia/driver.c gpuAssert (triton 2.0 - 3.x), triton 2971 / pytorch 141744
        "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
        # through torch.compile (pytorch 119054)
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    ],
    "launcher-ssh-unreachable": [
        # pdsh's rcmd relaying OpenSSH, as DeepSpeed's pdsh launcher prints it
        "worker-1: jiaming@worker-1: Permission denied (publickey,password).",
        "pdsh@node-0: node-1: ssh exited with exit code 255",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


def _ids(line: str):
    return [e.id for e in load().match_line(line)]


# a refused kernel image, as programs other than Triton print it: the driver's error string
# (cuGetErrorString(CUDA_ERROR_INVALID_IMAGE)) or its enum name, without saying why
GENERIC_INVALID_IMAGE = [
    # nbminer 121 (a cc 5.2 card the miner's kernels were not built for)
    'mining eth ,it reported "ERROR - CUDA Error: device kernel image is invalid (err_no=200)',
    "CUDA error: device kernel image is invalid",
    "cuModuleLoadData(&module, image) failed with CUDA_ERROR_INVALID_IMAGE",
    "  [2024-05-01 10:00:00] what():  cudaErrorInvalidKernelImage: device kernel image is invalid",
]


@pytest.mark.parametrize("line", GENERIC_INVALID_IMAGE)
def test_a_bare_invalid_image_is_the_symptom_with_its_causes(line):
    assert "kernel-image-invalid" not in _ids(line)
    expl = explain_text(line + "\n")
    first = expl.candidates[0]
    assert first.code == "cuda-error-unclassified" and first.kind == "symptom", [c.code for c in expl.candidates]
    assert {"framework-gpu-arch-unsupported", "driver-too-old-for-build", "ptxas-newer-than-driver"} <= set(first.could_be)
    assert "ptxas-newer-than-driver" not in codes_of(line + "\n")


def test_an_invalid_image_in_tritons_traceback_is_still_its_ptxas():
    log = ("Traceback (most recent call last):\n"
           '  File "/usr/lib/python3/site-packages/triton/compiler/compiler.py", line 411, in __getattribute__\n'
           "    self._init_handles()\n"
           "RuntimeError: device kernel image is invalid\n")
    assert codes_of(log)[:1] == ["ptxas-newer-than-driver"]


@pytest.mark.parametrize("line", [
    "git@github.com: Permission denied (publickey).",
    "  git@gitlab.com: Permission denied (publickey,keyboard-interactive).",
    "Cloning into 'apex'... git@github.com: Permission denied (publickey). fatal: Could not read from remote repository.",
])
def test_a_git_hosts_key_refusal_is_no_launcher(line):
    assert "pdsh-ssh-failed" not in _ids(line)
    assert "launcher-ssh-unreachable" not in codes_of(line + "\n")


def test_a_nodes_key_refusal_is_still_the_launcher():
    # quoted and prefixed as users paste it
    for line in ["`node2: Permission denied (publickey).`",
                 "[2023-06-01 12:00:01,123] [INFO] [multinode_runner.py:70:get_cmd] gpu3: Permission denied (publickey,gssapi-keyex,gssapi-with-mic)."]:
        assert codes_of(line + "\n")[:1] == ["launcher-ssh-unreachable"], line


# torch's wording of cudaErrorInitializationError (c10/cuda/CUDAFunctions.cpp device_count_impl)
TORCH_INIT_ERROR = "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu."


@pytest.mark.parametrize("line", [
    TORCH_INIT_ERROR,
    "    raise RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
    "(EngineCore_0 pid=123) `RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.`",
])
def test_torchs_driver_initialization_failed_is_the_init_symptom_not_a_missing_driver(line):
    assert "no-nvidia-driver" not in _ids(line)
    assert "cuda-initialization-error" in _ids(line)
    expl = explain_text(line + "\n")
    first = expl.candidates[0]
    assert first.code == "cuda-init-failed" and first.kind == "symptom", [c.code for c in expl.candidates]
    assert "no-nvidia-driver" in first.could_be


def test_torchs_driver_initialization_failed_in_a_forked_worker_is_the_fork():
    log = ("Traceback (most recent call last):\n"
           '  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
           "    data = fetcher.fetch(index)\n"
           + TORCH_INIT_ERROR + "\n")
    assert codes_of(log)[:1] == ["cuda-initialized-before-fork"]


def test_no_cuda_capable_device_still_names_the_driver():
    line = "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
    assert codes_of(line + "\n")[:1] == ["no-nvidia-driver"]


# libnvidia-container's requirement check (src/nvc_info.c) and the toolkit's CSV mode
# (internal/modifier/csv.go): the image's CUDA is newer than the host driver
CONTAINER_REQUIREMENT = [
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown",
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy' nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.6, please update your driver to a newer version, or use an earlier cuda container: unknown.",
    "Error: requirements not met: unsatisfied condition: cuda>=12.2 (cuda=11.4)",
]


@pytest.mark.parametrize("line", CONTAINER_REQUIREMENT)
def test_a_containers_cuda_requirement_is_the_driver_too_old_for_the_image(line):
    assert codes_of(line + "\n")[:1] == ["driver-too-old-for-build"]
    assert "driver-too-old-for-torch" not in codes_of(line + "\n")


def test_a_containers_cuda_requirement_beside_a_torch_image_stays_torchs():
    log = ("$ docker run --gpus all -it pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime\n"
           + CONTAINER_REQUIREMENT[0] + "\n")
    assert codes_of(log)[:1] == ["driver-too-old-for-torch"]


def test_a_bare_key_refusal_is_still_the_launcher():
    assert codes_of("Permission denied (publickey,password).\n")[:1] == ["launcher-ssh-unreachable"]


@pytest.mark.parametrize("line", [
    # ninja's own last line, as torch.utils.cpp_extension re-raises it
    "RuntimeError: ninja: build stopped: subcommand failed.",
    "  ninja: build stopped: subcommand failed.",
])
def test_a_build_that_stopped_is_the_build_symptom_not_a_missing_nvcc(line):
    # a guess from words (knowledge/vocabulary.toml, the word extension-build): the words say a
    # build failed, not which of its causes; the symptom leads, its causes follow
    expl = explain_text(line + "\n")
    first = expl.candidates[0]
    assert (first.code, first.basis) == ("extension-build-failed", "vocabulary"), [c.code for c in expl.candidates]
    assert "nvcc-missing" in first.could_be
