"""tools35: the wordings earlier rounds left unread (tools34, harv34, harv34b, harv34c).

Every message is written as the program prints it (its raise site is named beside it); each runs
through wrappers of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near misses
that must stay unread or read otherwise.
"""
import pytest

from stackpeel.combinations import facts_from_text
from stackpeel.explain import explain_text

from test_explain_patterns import WRAPPERS, assert_sourced_root, codes, ids, wrapped  # noqa: E402


SOME_WRAPPERS = ["plain", "torchrun-rank", "python-logging", "docker-compose", "markdown-quote",
                 "prose-quotes", "word-wrapped-80", "journald"]

# -- 1a. ROCm's no-device line beside a visibility mask: only a mask that can hide every GPU
#    (HIP runtime hipErrorNoDevice 'no ROCm-capable device is detected'; torch/cuda/__init__.py
#    _parse_visible_devices: ROCR_VISIBLE_DEVICES filters first and renumbers from 0, HIP indexes
#    what is left, so index 0 exists whenever any GPU does)

NO_ROCM_DEVICE = "RuntimeError: HIP error: no ROCm-capable device is detected"


def _masked(assign):
    return (assign + "\n" + "\n".join(f"step {i}: loading shard" for i in range(5)) + "\n"
            + NO_ROCM_DEVICE + "\n")


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("assign", [
    "export HIP_VISIBLE_DEVICES=1",
    "export ROCR_VISIBLE_DEVICES=3",
    "HIP_VISIBLE_DEVICES=-1 python train.py",
    "os.environ[\"HIP_VISIBLE_DEVICES\"] = \"2\"",
    "ROCR_VISIBLE_DEVICES=GPU-f980f88ef31631a2 python train.py",
])
def test_rocm_mask_that_can_hide_every_gpu_names_the_mask(assign, wrap):
    assert codes(wrapped(wrap, _masked(assign)))[:1] == ["cuda-visible-devices-hides-gpus"]


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("assign", [
    "export HIP_VISIBLE_DEVICES=0",
    "export ROCR_VISIBLE_DEVICES=0",
    "HIP_VISIBLE_DEVICES=0,1 python train.py",
    "os.environ['HIP_VISIBLE_DEVICES'] = '0'",
    "if HIP_VISIBLE_DEVICES == 1: print('second GPU')",
])
def test_rocm_mask_on_the_first_gpu_is_no_cause(assign, wrap):
    # index 0 is there whenever ROCR left any GPU: no device at all is the driver's or /dev/kfd's
    assert codes(wrapped(wrap, _masked(assign)))[:1] == ["rocm-gpu-unavailable"]


def test_rocm_masks_stacked_on_one_index_still_name_the_mask():
    # unslothai/unsloth#6175's shape: both masks on the second GPU
    text = "HIP_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=1 llama-server --list-devices\n" + NO_ROCM_DEVICE + "\n"
    assert codes(text)[:1] == ["cuda-visible-devices-hides-gpus"]


# -- 1b. torch_xla's PJRT registry with no client for the device PJRT_DEVICE names
#    (torch_xla/csrc/runtime/pjrt_registry.cc InitializePjRt; google-ai-edge/litert-torch#326,
#    unslothai/unsloth#2006)

PJRT_TRACE = """RuntimeError: torch_xla/csrc/runtime/pjrt_registry.cc:214 : Check failed: client
*** Begin stack trace ***
        tsl::CurrentStackTrace()
        torch_xla::runtime::InitializePjRt(std::string const&)
        torch_xla::runtime::PjRtComputationClient::PjRtComputationClient()
        torch_xla::runtime::GetComputationClient()
        torch_xla::bridge::GetDefaultDevice()
*** End stack trace ***
Unknown PJRT_DEVICE 'CUDA'
"""


@pytest.mark.parametrize("wrap", list(WRAPPERS))
def test_unknown_pjrt_device_line_alone(wrap):
    expl = explain_text("step 1/10\n" + WRAPPERS[wrap]("Unknown PJRT_DEVICE 'CUDA'") + "\nexiting\n")
    assert [c.code for c in expl.candidates][:1] == ["torch-xla-pjrt-device-unknown"]


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
def test_unknown_pjrt_device_after_its_trace(wrap):
    assert codes(wrapped(wrap, PJRT_TRACE))[:1] == ["torch-xla-pjrt-device-unknown"]


def test_unknown_pjrt_device_timestamped_as_unsloth_2006():
    # unslothai/unsloth#2006: a cloud console put a timestamp line before every line
    text = "".join(f"2025-03-13 15:47:31.039 EET\n{line}\n" for line in PJRT_TRACE.splitlines())
    assert codes(text)[:1] == ["torch-xla-pjrt-device-unknown"]


def test_pjrt_code_is_sourced():
    assert_sourced_root("torch-xla-pjrt-device-unknown")


@pytest.mark.parametrize("text", [
    "export PJRT_DEVICE=CUDA",
    'os.environ["PJRT_DEVICE"] = "CUDA"',
    "Unknown device 'CUDA'",
    "PJRT_DEVICE='TPU' python train.py",
])
def test_pjrt_near_misses_stay_unread(text):
    assert "torch-xla-unknown-pjrt-device" not in ids(text)


# -- 2a. mmdeploy's bare TensorRT build failure (mmdeploy/backend/tensorrt/utils.py from_onnx:
#    assert engine is not None, 'Failed to create TensorRT engine'): a symptom whose causes are ranked

MMDEPLOY_TRT = """  File "/usr/local/lib/python3.8/dist-packages/mmdeploy/backend/tensorrt/utils.py", line 248, in from_onnx
    assert engine is not None, 'Failed to create TensorRT engine'
AssertionError: Failed to create TensorRT engine
"""


@pytest.mark.parametrize("wrap", list(WRAPPERS))
def test_mmdeploy_trt_failure_line_alone(wrap):
    expl = explain_text("step 1/10\n" + WRAPPERS[wrap]("AssertionError: Failed to create TensorRT engine")
                        + "\nexiting\n")
    cands = expl.candidates
    assert [c.code for c in cands][:1] == ["tensorrt-engine-build-failed"]
    assert cands[0].kind == "symptom"
    assert "tensorrt-gpu-arch-unsupported" in cands[0].could_be


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
def test_mmdeploy_trt_failure_with_its_frames(wrap):
    assert codes(wrapped(wrap, MMDEPLOY_TRT))[:1] == ["tensorrt-engine-build-failed"]


def test_trt_build_failure_after_tensorrts_own_reason_keeps_the_reason():
    # TensorRT's logger said why first: the GPU is newer than the release
    text = ("[TRT] [E] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error (Unsupported SM: 0x809)\n"
            + MMDEPLOY_TRT)
    assert codes(text)[:1] == ["tensorrt-gpu-arch-unsupported"]


@pytest.mark.parametrize("text", [
    # mmdeploy's pipeline lines around a conversion that worked
    "06/12 09:50:01 - mmengine - INFO - Start pipeline mmdeploy.apis.utils.utils.to_backend in main process",
    "06/12 09:54:07 - mmengine - INFO - Finish pipeline mmdeploy.apis.utils.utils.to_backend",
    "failed to create tensorrt engine",   # lower case: no program prints it so
])
def test_trt_near_misses(text):
    assert "mmdeploy-failed-to-create-trt-engine" not in ids(text)


# -- 2b. an nvcc of torch's CUDA major but an older minor, beside a failed extension build
#    (turboderp/exllama#65: Ubuntu's nvcc 11.5 against a torch from the cu118 index)

NVCC_115 = "Cuda compilation tools, release 11.5, V11.5.119"
EXT_FAILED = "ninja: build stopped: subcommand failed.\nRuntimeError: Error compiling objects for extension"


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("torch_line", [
    "pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu118",
    "pip3 install torch torchvision --index-url https://download.pytorch.org/whl/cu118",
    "torch 2.0.1+cu118",
    "torch.version.cuda = 11.8",
])
def test_nvcc_minor_older_than_torch_cuda_names_the_mismatch(torch_line, wrap):
    text = NVCC_115 + "\n" + torch_line + "\n" + EXT_FAILED + "\n"
    assert codes(wrapped(wrap, text))[:1] == ["nvcc-torch-cuda-mismatch"]


@pytest.mark.parametrize("nvcc,torch_line", [
    ("11.8", "torch 2.0.1+cu118"),                                                    # the same release
    ("12.4", "torch 2.3.0+cu121"),                                                    # a newer minor is fine
    ("11.5", "torch 2.0.1+cpu"),                                                      # a CPU torch
    ("11.5", "pip install torch --index-url https://download.pytorch.org/whl/cpu"),  # no CUDA index
])
def test_nvcc_release_near_misses_keep_the_build_failure(nvcc, torch_line):
    text = f"Cuda compilation tools, release {nvcc}, V{nvcc}.1\n{torch_line}\n{EXT_FAILED}\n"
    assert "nvcc-torch-cuda-mismatch" not in codes(text)[:1]


def test_nvcc_and_index_without_a_failure_stay_quiet():
    text = NVCC_115 + "\npip install torch --index-url https://download.pytorch.org/whl/cu118\nSuccessfully installed torch\n"
    assert codes(text) == []


def test_torch_index_cuda_fact():
    f = facts_from_text("pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu118\n")
    assert f.other.get("torch_index_cuda") == "118"


# -- 3a. a command that prints a variable, its value on the next line: the clue line is read as
#    VAR=value (parser._clue_text), so a refine's context reads it as an assignment (tools34's
#    JAX loader refine: jax_plugins/cuda __init__.py _version_check's "Unable to load cuSPARSE. Is it
#    installed?" with a CUDA toolkit's library directory on LD_LIBRARY_PATH, jax-ml/jax#28929)

JAX_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/jax_plugins/xla_cuda12/__init__.py", line 196, in '
    "_version_check\n    version = get_version()\n"
    "RuntimeError: Unable to load cuSPARSE. Is it installed?\n")


@pytest.mark.parametrize("wrap", ["plain", "kubectl-prefix", "markdown-quote", "docker-compose", "journald"])
@pytest.mark.parametrize("echo,value", [
    ("$ echo $LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64:/usr/local/nvidia/lib64"),
    ("(jax) user@gpu01:~$ echo ${LD_LIBRARY_PATH}", "/usr/local/cuda/lib64:"),
    ('echo "$LD_LIBRARY_PATH"', "/opt/cuda-12.0/targets/x86_64-linux/lib"),
    ("$ printenv LD_LIBRARY_PATH", "/usr/local/cuda-11.8/lib64"),
])
def test_echoed_ld_library_path_value_on_the_next_line(echo, value, wrap):
    log = wrapped(wrap, echo + "\n" + value + "\n$ python -c 'import jax'\n" + JAX_TRACE)
    assert codes(log)[:1] == ["cuda-library-shadowed"], codes(log)


@pytest.mark.parametrize("echo,value", [
    ("$ echo $LD_LIBRARY_PATH", ""),                                   # unset: an empty line
    ("$ echo $LD_LIBRARY_PATH", "/home/u/lib:/opt/lib"),               # no CUDA toolkit directory
    ("$ echo $LD_LIBRARY_PATH", "$ export CUDA=/usr/local/cuda/lib64"),  # the next command, not a value
    ("$ echo $PATH", "/usr/local/cuda-12.1/bin:/usr/bin"),             # another variable
])
def test_echoed_variable_near_misses_keep_the_loader_reading(echo, value):
    log = echo + "\n" + value + "\n$ python -c 'import jax'\n" + JAX_TRACE
    assert codes(log)[:1] == ["library-missing"], codes(log)


def test_echoed_ld_library_path_in_a_crlf_paste():
    log = ("$ echo $LD_LIBRARY_PATH\n/usr/local/cuda-12.1/lib64\n" + JAX_TRACE).replace("\n", "\r\n")
    assert codes(log)[:1] == ["cuda-library-shadowed"]


# -- 3b. a driver branch named only in a sentence, for the version rule that needs it (tools34's
#    driver-branch-dropped-gpu: NVIDIA's legacy GPU list leaves Kepler to 470.xx)

K80_BASE = ("$ lspci | grep -i nvidia\n00:04.0 3D controller: NVIDIA Corporation GK210GL [Tesla K80] (rev a1)\n"
            "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
            "that the latest NVIDIA driver is installed and running.\n")


@pytest.mark.parametrize("wrap", ["plain", "markdown-quote", "prose-quotes", "docker-compose"])
@pytest.mark.parametrize("said", [
    "I installed the 535 driver from the graphics-drivers PPA.",
    "Ubuntu 22.04 with NVIDIA driver 550 (installed through Software & Updates)",
    "After upgrading to driver version 545.29 the GPU is gone.",
    "the 535.xx NVIDIA drivers are installed",
])
def test_kepler_under_a_branch_named_in_prose(said, wrap):
    r = explain_text(wrapped(wrap, said + "\n" + K80_BASE))
    assert [c.code for c in r.candidates][:1] == ["proprietary-kernel-module-unsupported-gpu"], r.candidates
    assert [f.rule for f in r.fact_findings] == ["state:driver-branch-dropped-gpu"]


@pytest.mark.parametrize("said", [
    "I installed the 470 driver.",                          # Kepler's own legacy branch
    "My other box has a GTX 470 driver-less setup.",        # a GeForce model, no branch
    "The driver 12.2 runtime is installed",                 # a CUDA release, no branch
    "Setting up nvidia-driver-470 (470.256.02-0ubuntu0.22.04.1) ...\nI also tried driver 535 before.",
])
def test_prose_branch_near_misses(said):
    facts = explain_text(said + "\n" + K80_BASE).fact_findings
    assert not any(f.code == "proprietary-kernel-module-unsupported-gpu" for f in facts)


def test_prose_branch_alone_stays_quiet():
    assert codes("I installed the 535 driver yesterday.\n") == []
