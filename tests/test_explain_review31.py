"""Session 31's merge-review findings, each with the text that showed it.

A Linux host's CUDA MPS daemon is no Mac; Windows statuses written in hexadecimal that end in a
letter make an error line; Ctrl+C's STATUS_CONTROL_C_EXIT is an interruption, not a failure;
faulthandler prints nothing for MSVC's C++ exception (CPython Modules/faulthandler.c
faulthandler_ignore_exception); MSVC's STL1002 check is Windows' and its own flag skips it; an old
gcc's C99 refusal on Triton's helper is an old compiler (its own root); a cause the log's clues
point to stays first in a symptom's causes; a sentence's ``ncclShmOpen()`` is no crash frame."""
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_knowledge

from test_explain_patterns import codes

#: explain as a user gets it: the base rates order a symptom's causes, and the log's clues stay first
USES_PRIORS = True

KB_DIR = Path(__file__).resolve().parent.parent / "src" / "stackpeel" / "knowledge"
STUB = ("RuntimeError: Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
        "shared libraries: a CPU library and a CUDA library\n")


def test_a_linux_host_running_cuda_mps_is_no_mac():
    nvsmi = "|    0   N/A  N/A     41234      C   nvidia-cuda-mps-server            30MiB |\n"
    assert codes(nvsmi + "Traceback (most recent call last):\n" + STUB)[:1] == ["torch-cpu-only-build"]
    assert codes("torch.backends.mps.is_available(): False\n" + STUB)[:1] == ["torch-cpu-only-build"]
    # a Mac in the log still reads as CUDA asked for on a Mac
    assert codes("Darwin Kernel Version 23.4.0\n" + STUB)[:1] == ["cuda-on-macos"]


def test_the_cpu_torch_signatures_read_a_mac_the_same_way():
    data = tomllib.loads((KB_DIR / "torch.toml").read_text(encoding="utf-8"))
    sigs = {s["id"]: s for s in data["torch-cpu-only-build"]["log"]}
    # one shared context (``[context.mac-host]``, tests/test_knowledge_contexts.py), named three times
    mac = [r.get("context_name") for i in ("torch-not-compiled-with-cuda", "torch-stub-cuda-hooks",
                                           "exllamav2-torch-without-cuda-or-rocm")
           for r in sigs[i].get("refine", []) if r["code"] == "cuda-on-macos"]
    assert mac == ["mac-host"] * 3 and "mac-host" in data["context"]


def _has_errors(text):
    return bool(explain_text(text).unexplained) or bool(codes(text))


@pytest.mark.parametrize("line", [
    "Command returned 0xC00000FD",            # STATUS_STACK_OVERFLOW, hex ending in a letter
    "Command returned -1073741571",           # the same status in decimal
    "Process finished with exit code -1073741819 (0xC0000005)",
])
def test_a_windows_status_makes_an_error_line(line):
    assert _has_errors(line + "\n")


@pytest.mark.parametrize("line", [
    "Command returned -1073741510",
    "Command returned 3221225786",
    "Process finished with exit code -1073741510 (0xC000013A: interrupted by Ctrl+C)",
    "Process finished with exit code 0xC000013A",
    "  exitcode  : -1073741510 (pid: 4242)",
])
def test_ctrl_c_is_no_failure(line):
    assert not _has_errors("Epoch 3 done\n" + line + "\n")


@pytest.mark.parametrize("line", [
    "error: Command exited with code 3221225786",
    "ERROR: process exited with code -1073741510",
    "Process finished with exit code 130 (interrupted by signal 2: SIGINT)",
])
def test_ctrl_c_is_no_dead_process(line):
    """The words' guess (vocabulary process-died) and the exit-status shapes leave Ctrl+C alone."""
    log = "Traceback (most recent call last):\nKeyboardInterrupt\n" + line + "\n"
    # (a resemblance to other logs may still guess: the words do not)
    assert not any(c.code == "host-oom-killed" and c.basis == "vocabulary" for c in explain_text(log).candidates)
    assert not any(c.code in ("host-oom-killed", "library-loaded-twice", "native-crash-in-gpu-library")
                   for c in explain_text("Epoch 3 done\n" + line + "\n").candidates)


def test_the_cxx_exception_fix_does_not_send_users_to_faulthandler():
    fix = load_knowledge().codes["msvc-cxx-exception-uncaught"].fix
    assert "-X faulthandler" not in fix and "sxe eh" in fix


def test_stl1002_gets_the_windows_way_out():
    line = ('yvals_core.h(902): error: static assertion failed with "error STL1002: Unexpected compiler '
            'version, expected CUDA 12.4 or newer."\n')
    expl = explain_text(line)
    assert [c.code for c in expl.candidates[:1]] == ["host-compiler-unsupported-by-nvcc"]
    assert "_ALLOW_COMPILER_AND_STL_VERSION_MISMATCH" in expl.candidates[0].fix
    assert "vcvars_ver" in expl.candidates[0].fix


def test_an_old_gcc_on_triton_s_helper_is_an_old_compiler():
    line = ("/tmp/tmpab12cd34/main.c:354:3: error: 'for' loop initial declarations are only allowed in C99 "
            "mode\n")
    assert codes(line)[:1] == ["c-compiler-too-old"]
    assert "c-compiler-too-old" in load_knowledge().codes["triton-build-failed"].caused_by


def test_a_clued_cause_stays_first_among_a_symptom_s_causes():
    log = ("docker run --gpus all --shm-size=64m img torchrun train.py\n"
           "gpu1:2:2 [0] init.cc:100 NCCL WARN Cuda failure 1 'invalid argument'\n")
    nccl = next(c for c in explain_text(log).candidates if c.code == "nccl-error")
    assert nccl.could_be[:1] == ("nccl-shm-too-small",)
    # without the clue the entry's own ranked causes lead
    alone = next(c for c in explain_text(log.split("\n", 1)[1]).candidates if c.code == "nccl-error")
    assert alone.could_be[:1] != ("nccl-shm-too-small",)


@pytest.mark.parametrize("text", [
    "ncclShmOpen() calls cudaHostRegister on the buffer\n",
    "I think ncclShmOpen() is where it fails\n",
])
def test_ncclshmopen_in_a_sentence_is_no_frame(text):
    assert "nccl-shm-too-small" not in codes(text)
