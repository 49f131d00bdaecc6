"""Clue literals of generic wording do not infer a specific cause (issue 8, prec21:
docs/dev/prec21.md). A clue makes its code the inferred cause of a symptom the log shows; a
script's `sleep 30` or `time.sleep(5)`, a run's `--resume`, or torch's `+cu118` version suffix
shows no suspended machine and no shadowing second set of CUDA wheels."""
import pytest

from test_explain_patterns import codes_of as codes

UNKNOWN = "RuntimeError: CUDA error: unknown error"
CUBLAS = ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, "
          "opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`")


@pytest.mark.parametrize("context", [
    "$ sleep 30; python train.py",
    '  File "train.py", line 12, in <module>\n    time.sleep(5)',
    "python train.py --resume checkpoints/last.pt",
    "[rank0]: resuming from checkpoint step 4000 (resume_from_checkpoint=True)",
])
def test_a_script_sleep_or_a_training_resume_is_no_suspend(context):
    for text in (f"{context}\n{UNKNOWN}", f"{context}\n[rank0]: {UNKNOWN}", f"{context}\n> {UNKNOWN}"):
        found = codes(text)
        assert found and found[0] == "cuda-error-unclassified", (text, found)
        assert "nvidia-uvm-broken-after-suspend" not in found[:1]


@pytest.mark.parametrize("context", [
    "I get cupy error after my laptop goes to sleep or hibernation.",   # cupy#7774
    "it breaks every time the PC comes back from sleep",
    "It worked until the machine went to sleep; after resume CUDA fails",
    "after gentoo linux sleep, ollama only use cpu",                     # ollama (tests/test_explain_patterns_kbgrow5.py)
])
def test_the_machines_sleep_still_infers_the_uvm_state(context):
    for text in (f"{context}\n{UNKNOWN}", f"{context}\n[rank0]: {UNKNOWN}"):
        assert codes(text)[0] == "nvidia-uvm-broken-after-suspend", text


@pytest.mark.parametrize("context", ["torch 2.0.1+cu118", "PyTorch version: 1.13.1+cu117",
                                     "Looking in indexes: https://download.pytorch.org/whl/cu118"])
def test_a_cu11_version_suffix_is_no_shadowed_library(context):
    found = codes(f"{context}\n{CUBLAS}")
    assert found[0] == "cublas-call-failed" and "cuda-library-shadowed" not in found[:1], found


@pytest.mark.parametrize("context", ["nvidia-cublas-cu11==11.10.3.66\nnvidia-cublas-cu12==12.1.3.1",
                                     "Successfully installed nvidia-cublas-cu11-11.11.3.6"])
def test_a_second_set_of_cu11_wheels_still_infers_shadowing(context):
    assert codes(f"{context}\n{CUBLAS}")[0] == "cuda-library-shadowed"


ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"


@pytest.mark.parametrize("context", ["MPS available: False",
                                     "device = 'mps' if torch.backends.mps.is_available() else 'cuda'"])
def test_apples_mps_is_no_nvidia_mps_server(context):
    for text in (f"{context}\n{ILLEGAL}", f"{context}\n[rank0]: {ILLEGAL}"):
        found = codes(text)
        assert found[0] == "cuda-error-unclassified" and "mps-unavailable" not in found[:1], found


@pytest.mark.parametrize("context", ["nvidia-cuda-mps-control -d", "export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps",
                                     "the MPS server is running on the node"])
def test_nvidias_mps_still_infers_the_mps_cause(context):
    assert codes(f"{context}\n{ILLEGAL}")[0] == "mps-unavailable"


def test_a_compute_capability_refusal_still_infers_the_framework_arch():
    text = ('This results in a fatal "compute capability not supported" assertion failure\n'
            "RuntimeError: CUDA error: unknown error")
    assert codes(text)[0] == "framework-gpu-arch-unsupported"


@pytest.mark.parametrize("context", ["tensorflow 2.12.0", "pip install paddlepaddle-gpu==2.5.1"])
def test_a_frameworks_name_is_no_arch_refusal(context):
    found = codes(f"{context}\nRuntimeError: CUDA error: unknown error")
    assert found[0] == "cuda-error-unclassified" and "framework-gpu-arch-unsupported" not in found[:1], found


def test_the_frameworks_own_line_still_refines_no_kernel_image():
    line = ("2024-01-01 10:00:00.000000: W tensorflow/core/kernels/conv_ops.cc:1000] CUDA error: no kernel image is "
            "available for execution on the device")
    assert codes(line)[0] == "framework-gpu-arch-unsupported"
