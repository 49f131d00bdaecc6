"""Context decides between sibling causes (the miss study's class C, docs/dev/miss-taxonomy.md;
the rules are tabled in docs/dev/context-rules.md).

For every rule: the generic message with the deciding context names the specific code first;
the same message without it still names the generic code; the context line alone (a healthy
log) names nothing; and a log whose own line states another specific cause keeps that cause
(a context word far from the generic line is an inference, which a stated cause outranks).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of as _codes

#: lines between the generic line and a context line "far" from it (beyond the scanner's
#: CONTEXT_BEFORE/CONTEXT_AFTER, so only the log's clue lines carry it)
GAP = "\n".join(f"step {i}: ok" for i in range(8))


def _top(text: str):
    return _codes(text)[:1]


def far(context: str, line: str, other: str = "") -> str:
    return "\n".join(x for x in (context, GAP, line, GAP if other else "", other) if x) + "\n"


# (rule id, generic line, generic code, context line, specific code, a line stating another cause, its code)
RULES = [
    # NVML's "Driver Not Loaded" (nvidia-smi, nvidia-container-cli): why the module is not loaded
    ("driver-not-loaded/secure-boot",
     "Failed to initialize NVML: Driver Not Loaded", "no-nvidia-driver",
     "SecureBoot enabled", "secure-boot-rejects-module",
     "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
     "nvidia-module-missing-for-kernel"),
    ("driver-not-loaded/secure-boot-prose",
     "Failed to initialize NVML: Driver Not Loaded", "no-nvidia-driver",
     "Secure Boot is enabled on this laptop (Ubuntu 24.04, nvidia-driver-550)", "secure-boot-rejects-module",
     "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
     "nvidia-module-missing-for-kernel"),
    ("driver-not-loaded/kernel-update",
     "Failed to initialize NVML: Driver Not Loaded", "no-nvidia-driver",
     "It worked until the kernel update last night (unattended-upgrade installed 6.8.0-49).",
     "nvidia-module-missing-for-kernel",
     "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "secure-boot-rejects-module"),
    ("no-device/kernel-update",
     "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
     "CUDA_ERROR_NO_DEVICE (100)", "no-nvidia-driver",
     # (apt's log, not the user's sentence: a sentence stating it is a cause stated in words,
     # tests/test_explain_users_words.py)
     "Start-Date: 2024-11-05  06:25:13 Commandline: /usr/bin/unattended-upgrade", "nvidia-module-missing-for-kernel",
     "Linux DESKTOP-7Q2 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux", "wsl-gpu-unavailable"),
    ("driver-not-loaded/nouveau",
     "Failed to initialize NVML: Driver Not Loaded", "no-nvidia-driver",
     "nouveau              2314240  1", "nouveau-holds-gpu",
     "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
     "nvidia-module-missing-for-kernel"),
    # nvidia-smi's symptom: a kernel module that does not support the GPU is one of its causes
    ("nvidia-smi/open-module-pascal",
     "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
     "latest NVIDIA driver is installed and running.", "no-nvidia-driver",
     "I installed nvidia-driver-550-open on my GTX 1080", "open-kernel-module-unsupported-gpu",
     "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
     "nvidia-module-missing-for-kernel"),
    # a loader's generic "cannot load" whose library is cuDNN's
    ("cudnn-dll/tensorflow",
     "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
     "'cudart64_110.dll'; dlerror: cudart64_110.dll not found", "library-missing",
     None, None, None, None),
    # libcuda missing on Colab: a CPU runtime
    ("libcuda/colab",
     "OSError: libcuda.so.1: cannot open shared object file: No such file or directory", "libcuda-missing",
     "I am running the notebook on Google Colab", "no-nvidia-driver",
     "AssertionError: Torch not compiled with CUDA enabled", "torch-cpu-only-build"),
    # NCCL: the interface list names a bridge / a container's virtual interface
    ("nccl/docker0",
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled "
     "system error, NCCL version 2.14.3", "nccl-error",
     "node1:2301:2301 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]docker0:172.17.0.1<0>",
     "nccl-socket-ifname-wrong",
     "node1:2301:2380 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-vzIpS6 (size 9637888)", "nccl-shm-too-small"),
    ("nccl/bootstrap-virbr",
     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
     "remote process exited or there was a network error, NCCL version 2.20.5", "nccl-error",
     "node2:811:811 [0] NCCL INFO Bootstrap : Using virbr0:192.168.122.1<0>", "nccl-socket-ifname-wrong",
     "node1:2301:2380 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-vzIpS6 (size 9637888)", "nccl-shm-too-small"),
    # a collective timeout on GeForce RTX 40 cards: their peer-to-peer
    ("watchdog/rtx4090",
     "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600046 "
     "milliseconds before timing out.", "nccl-allreduce-failed",
     "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-5b1c)", "nccl-p2p-blocked",
     "node1:2301:2380 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-vzIpS6 (size 9637888)", "nccl-shm-too-small"),
    # a bare cuBLAS failure on a Blackwell GPU: a torch build without its kernels
    ("cublas/blackwell",
     "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, "
     "m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
     "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`", "cublas-call-failed",
     "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-9f3a)", "torch-arch-not-supported",
     "cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime version "
     "(8, 9, 2).", "library-version-mismatch"),
    # cuFFT's internal error on an Ada GPU: CUDA 11.7's cuFFT (the GPU's "RTX 4090" is also a
    # clue of nccl-p2p-blocked, a cause of other symptoms: it does not hide cuFFT's "RTX 40")
    ("cufft/ada",
     "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "cuda-error-unclassified",
     "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-5b1c)", "cuda-math-library-too-old-for-gpu",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "gpu-out-of-memory"),
    ("cuda-error/blackwell",
     "RuntimeError: CUDA error: the provided function is not supported", "cuda-error-unclassified",
     "Device: NVIDIA RTX PRO 6000 Blackwell Workstation Edition, sm_120", "torch-arch-not-supported",
     "RuntimeError: CUDA error: out of memory", "gpu-out-of-memory"),
]

RULE_IDS = [r[0] for r in RULES]


@pytest.mark.parametrize("rule", [r for r in RULES if r[3]], ids=[r[0] for r in RULES if r[3]])
def test_context_names_the_specific_cause(rule):
    _, line, _, context, specific, _, _ = rule
    # the context next to the line, and far from it (before and after)
    assert _top(f"{context}\n{line}\n") == [specific], _codes(f"{context}\n{line}\n")
    assert _top(far(context, line)) == [specific], _codes(far(context, line))
    assert _top(far(line, context)) == [specific], _codes(far(line, context))


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_without_context_the_generic_code_stays(rule):
    _, line, generic, _, _, _, _ = rule
    assert _top(f"{line}\n") == [generic], _codes(f"{line}\n")


@pytest.mark.parametrize("rule", [r for r in RULES if r[3]], ids=[r[0] for r in RULES if r[3]])
def test_the_context_alone_names_nothing(rule):
    context = rule[3]
    assert _codes(f"{context}\n{GAP}\nall done, exit code 0\n") == []


@pytest.mark.parametrize("rule", [r for r in RULES if r[5]], ids=[r[0] for r in RULES if r[5]])
def test_a_stated_cause_keeps_its_rank(rule):
    _, line, _, context, specific, other, other_code = rule
    log = far(context, line, other)
    codes = _codes(log)
    assert codes[:1] == [other_code], codes


def test_a_far_context_is_an_inference_with_its_line_as_evidence():
    log = far("SecureBoot enabled", "Failed to initialize NVML: Driver Not Loaded")
    top = explain_text(log).candidates[0]
    assert top.code == "secure-boot-rejects-module"
    assert top.confidence == "inferred" and top.basis == "clues"
    assert any(e.entry.startswith("clue:") and "SecureBoot enabled" in e.text for e in top.evidence)
    assert any(e.entry == "nvml-driver-not-loaded" for e in top.evidence)
    note = " ".join(explain_text(log).notes)
    assert "inferred from a line of a more generic cause (nvml-driver-not-loaded)" in note


def test_a_context_word_does_not_flip_its_own_code_to_an_inference():
    # the refinement that names the entry's own code is not a far context: the line stays stated
    log = far("GPU 0: NVIDIA GeForce RTX 5090; torch.cuda.get_device_name(0)",
              "RuntimeError: CUDA error: no kernel image is available for execution on the device")
    top = explain_text(log).candidates[0]
    assert top.code == "torch-arch-not-supported" and top.confidence == "stated"


# -- cuDNN's libraries named by the loaders' generic messages (library-missing's wordings)

CUDNN_LINES = [
    # TensorFlow stream_executor dso_loader.cc (Windows and Linux)
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found",
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory",
    # CPython ctypes on Windows (os.add_dll_directory / WinDLL)
    "FileNotFoundError: Could not find module 'C:\\Program Files\\NVIDIA\\CUDNN\\v8.9\\bin\\cudnn64_8.dll' "
    "(or one of its dependencies). Try using the full path with constructor syntax.",
    # CTranslate2's lazy loader (faster-whisper, WhisperX)
    "RuntimeError: Library libcudnn_ops_infer.so.8 is not found or cannot be loaded",
    "Library cudnn_ops_infer64_8.dll is not found or cannot be loaded",
    # jax _version_check
    "RuntimeError: Unable to load cuDNN. Is it installed?",
    # users' and installers' words
    "cudnn_ops_infer64_8.dll is missing",
]


@pytest.mark.parametrize("line", CUDNN_LINES)
def test_a_cudnn_library_that_cannot_load_is_cudnn_unusable(line):
    assert _top(line + "\n") == ["cudnn-unusable"], _codes(line + "\n")


def test_cuda_libraries_missing_beside_cudnn_stay_library_missing():
    log = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n"
           "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'cublas64_11.dll'; dlerror: cublas64_11.dll not found\n"
           "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found\n")
    assert _codes(log)[:2] == ["library-missing", "cudnn-unusable"], _codes(log)
    for line in ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
                 "RuntimeError: Unable to load cuBLAS. Is it installed?"):
        assert _top(line + "\n") == ["library-missing"], line


def test_onnxruntime_keeps_a_missing_cudnn():
    log = ("onnxruntime_pybind11_state.cc:1 Could not load dynamic library 'cudnn64_8.dll'; "
           "CUDAExecutionProvider is not available\n")
    assert _top(log) == ["onnxruntime-cuda-libs-missing"], _codes(log)


# -- clues inside longer clues

def test_docker_inside_an_interface_name_is_not_a_container():
    # "docker" is nccl-shm-too-small's clue; inside NCCL's "[1]docker0:" it is the interface's word
    log = far("node1:2301:2301 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]docker0:172.17.0.1<0>",
              "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3")
    top = explain_text(log).candidates[0]
    assert top.code == "nccl-socket-ifname-wrong"
    assert dict(explain_text(log).candidates[1].could_be_clues).get("nccl-shm-too-small") is None
    # a docker command line elsewhere is the container's word again
    with_run = "docker run --gpus all --shm-size=64m -it img torchrun train.py\n" + log
    assert "nccl-shm-too-small" in dict(explain_text(with_run).candidates[-1].could_be_clues)
