"""Generic error lines lead with a symptom, a generic code or nothing, not with one specific
cause the line does not show; the specific message still names its cause (issue 8, second round:
docs/dev/signature-precision.md)."""
import pytest

from stackpeel.explain import explain_text


def first(text):
    e = explain_text(text)
    return e.candidates[0].code if e.candidates else None


@pytest.mark.parametrize("line, not_first", [
    ("OSError: [Errno 12] Cannot allocate memory", "memlock-limit-low"),
    ("ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
     "'/usr/local/lib/python3.10/dist-packages/torch'", "device-permission-denied"),
    ("PermissionError: [Errno 13] Permission denied: '/data/run1/ckpt.pt'", "device-permission-denied"),
    ("terminate called after throwing an instance of 'c10::Error'", "extension-torch-mismatch"),
    ("OSError: [Errno 5] Input/output error", "disk-full"),
    ("OSError: [Errno 16] Device or resource busy", "disk-full"),
    ("OSError: [Errno 104] Connection reset by peer", "disk-full"),
])
def test_a_generic_line_does_not_lead_with_a_specific_cause(line, not_first):
    assert first(line) != not_first


def test_enomem_leads_with_host_memory_and_c10_error_with_the_crash_symptom():
    assert first("OSError: [Errno 12] Cannot allocate memory") == "host-oom-killed"
    assert first("terminate called after throwing an instance of 'c10::Error'") == "native-crash-in-gpu-library"


@pytest.mark.parametrize("line, code", [
    ("NCCL WARN NET/IB : Call to ibv_reg_mr failed with error Cannot allocate memory", "memlock-limit-low"),
    ("PermissionError: [Errno 13] Permission denied: '/dev/nvidia0'", "device-permission-denied"),
    ("Failed to open /dev/nvidiactl: Permission denied", "device-permission-denied"),
    ("PermissionError: [Errno 13] Permission denied: '/home/u/.triton/cache/ab12'", "triton-cache-unusable"),
    ("OSError: [Errno 28] No space left on device", "disk-full"),
])
def test_the_specific_message_still_names_its_cause(line, code):
    assert first(line) == code


ARCH_NOTICE = ("/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py:1965: UserWarning: "
               "TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation. \n"
               "If this is not desired, please set os.environ['TORCH_CUDA_ARCH_LIST'].")


def test_torch_arch_list_notice_is_a_healthy_notice():
    from stackpeel.explain.parser import scan_text, startup_notice
    assert startup_notice(ARCH_NOTICE.splitlines()[0])
    parsed = scan_text("Building extension module foo...\n" + ARCH_NOTICE + "\nninja: no work to do.\n")
    assert not parsed.other_errors and not parsed.hits
    e = explain_text("Building extension module foo...\n" + ARCH_NOTICE + "\nLoading extension module foo...\n")
    assert not e.candidates
