"""tools35: the wordings earlier rounds left unread (tools34, harv34, harv34b, harv34c).

Every message is written as the program prints it (its raise site is named beside it); each runs
through wrappers of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near misses
that must stay unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text

from test_explain_patterns import WRAPPERS, assert_sourced_root, codes, ids  # noqa: E402


def wrapped(wrap, text):
    return "\n".join(WRAPPERS[wrap](line) for line in text.splitlines()) + "\n"


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
