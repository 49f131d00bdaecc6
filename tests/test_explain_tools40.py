"""tools40: no silence on an error line, warnings are no failure for resemblance, Slurm's job
states as facts. A line a program prints as an error (pytest's ``E   assert``, an exception class
without the usual suffix, GNU time's and docker's non-zero statuses, a crash in Windows' and
macOS's words, Slurm's failed states, asyncio's lost task exception ...) gets at least *Unknown
error* with its fingerprint; a Python warning's own line (``UserWarning: ...`` with its file cut
off) counts as an error line only where the log shows a failure besides it, so a healthy run's
warning gets no guess by resemblance; Slurm's ``JobState=OUT_OF_MEMORY`` / sacct's ``OUT_OF_ME+``
name the OOM killer, and its ``ExitCode=0:9`` is read as SIGKILL. docs/dev/tools40.md.
"""
from __future__ import annotations

import pytest

from stackpeel import knowledge
from stackpeel.explain.numbers import read_numbers
from stackpeel.explain.parser import error_shape, exception_line, warning_line

from explain_helpers import answer, codes, silent


#: a healthy run's lines around the line under test (they must not decide anything)
AROUND = "epoch 1/3 loss 0.412\n{}\nepoch 2/3 loss 0.377\n"

# ----------------------------------------------------------------------------- 1. no silence on an error line

ERROR_LINES = [
    # pytest's failure lines (_pytest/_code/code.py fail_marker "E")
    "E       assert torch.allclose(out, ref)",
    "E   assert 0 == 1\nE    +  where 0 = len([])",
    "E       assert False\nE        +  where False = <built-in method is_cuda>()",
    # exception classes without Error/Exception in their names, or private ones
    "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
    "the future was running or pending.",
    "subprocess.TimeoutExpired: Command '['nvidia-smi']' timed out after 10 seconds",
    "zipfile.BadZipFile: File is not a zip file",
    "http.client.RemoteDisconnected: Remote end closed connection without response",
    "pkg_resources.DistributionNotFound: The 'tokenizers>=0.11.1' distribution was not found",
    "pkg_resources.ContextualVersionConflict: (numpy 1.19.5 (/x/site-packages), Requirement.parse('numpy>=1.20'))",
    "packaging.version.InvalidVersion: Invalid version: '2.1.0a0+git'",
    "torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed",
    # exit statuses in a tool's words
    "Command exited with non-zero status 1",
    "The command '/bin/sh -c pip install flash-attn' returned a non-zero code: 1",
    "CompletedProcess(args=['nvcc', '--version'], returncode=127)",
    "Process returned -1073741571 (0xC00000FD)   execution time : 2.141 s",
    "The process terminated abnormally.",
    # a crash in the operating system's or a debugger's words
    "The instruction at 0x00007FF8A1B2C3D4 referenced memory at 0x0000000000000000. The memory could not be read.",
    "Faulting application name: python.exe, version: 3.10.6150.1013, time stamp: 0x62f1",
    "* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x0)",
    "Exception Type:  EXC_BAD_INSTRUCTION (SIGILL)",
    "CUDA Exception: Warp Illegal Address",
    # Python's runtimes' records of an exception nothing caught
    "Task exception was never retrieved",
    "Exception in callback _ProactorBasePipeTransport._call_connection_lost(None)",
    "Exception in ASGI application",
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f3c2c1d0ee0>",
    # the interpreter's own line for `python -m` with no such module
    "/usr/bin/python3: No module named torch",
    "C:\\Python311\\python.exe: Error while finding module specification for 'vllm.entrypoints' "
    "(ModuleNotFoundError: No module named 'vllm')",
    # Slurm's failed states and exit codes
    "   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)",
    "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)",
    "   ExitCode=1:0",
    "12345.batch   batch     OUT_OF_ME+    0:125",
]


@pytest.mark.parametrize("line", ERROR_LINES)
def test_an_error_line_is_never_answered_silently(line):
    assert not silent(line)
    assert not silent(AROUND.format(line))


@pytest.mark.parametrize("line", [
    "E       assert torch.allclose(out, ref)",
    "Command exited with non-zero status 1",
    "Faulting application name: python.exe, version: 3.10.6150.1013",
    "Task exception was never retrieved",
])
def test_such_a_line_alone_gets_a_fingerprint(line):
    d = answer(AROUND.format(line))
    assert d["exit_code"] != 0
    assert any("fingerprint" in n for n in d["notes"]) or d["candidates"]


@pytest.mark.parametrize("line", [
    # pytest's other marker lines and passing runs
    "E   ", "E    1.0    2.0    3.0", "========================= 12 passed in 3.21s =========================",
    "assert x == y",
    # a status that says all went well, an option's help, a count
    "Process returned 0 (0x0)   execution time : 0.012 s",
    "CompletedProcess(args=['nvcc', '--version'], returncode=0)",
    "  --strict    exit with a non-zero status on warnings",
    "Exit status: 0",
    # Slurm's states of a job that is fine
    "   JobState=COMPLETED Reason=None Dependency=(null)",
    "   JobState=RUNNING Reason=None Dependency=(null)",
    "   ExitCode=0:0",
    "   DerivedExitCode=0:0",
    "12345.batch   batch     COMPLETED    0:0",
    # words that only resemble the new shapes
    "queue.Empty", "Exception handling is configured in config.yaml",
    "Faulting is a term for ...",
    "the task exception handler is installed",
])
def test_healthy_lines_stay_silent(line):
    assert silent(AROUND.format(line)), line


def test_unsuffixed_exception_types_are_read_in_a_traceback():
    tb = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n"
          "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly\n")
    exc = answer(tb)["exceptions"]
    assert exc and exc[0]["type"] == "concurrent.futures.process.BrokenProcessPool"
    assert exception_line("torch._C._LinAlgError: x") == ("torch._C._LinAlgError", "x")
    # not a word that happens to be capitalised
    assert exception_line("Empty: nothing to do") is None
    assert exception_line("Note: this is fine") is None


# ----------------------------------------------------------------------------- 2. warnings are no failure alone

HEALTHY_WARNINGS = [
    "UserWarning: The detected CUDA version (12.2) has a minor version mismatch with the version that was used "
    "to compile PyTorch (12.1). Most likely this shouldn't be a problem.",
    "FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses "
    "the default pickle module implicitly.",
    "DeprecationWarning: pkg_resources is deprecated as an API",
    "2024-05-01 12:00:00 WARNING  FutureWarning: `resume_download` is deprecated and will be removed in version 1.0.0.",
    "[rank0]: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
    "  UserWarning: TypedStorage is deprecated. It will be removed in the future.",
]


@pytest.mark.parametrize("line", HEALTHY_WARNINGS)
def test_a_warning_alone_is_no_failure_and_resembles_nothing(line):
    assert warning_line(line.split(": ", 1)[-1] if line.startswith("[rank0]") else line)
    d = answer(AROUND.format(line))
    assert d["exit_code"] == 0 and not d["candidates"], d["candidates"]
    assert not any(c.get("basis") == "similar" for c in d["candidates"])


def test_a_warning_that_states_a_failure_is_a_possible_failure():
    d = answer(AROUND.format("UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open "
                             "shared object file"))
    assert d["exit_code"] != 0
    assert not any(c.get("basis") == "similar" for c in d["candidates"])


def test_a_warning_counts_where_the_log_shows_a_failure():
    warn = "UserWarning: Plan B: the widget frobnicator is deprecated"
    tb = ("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\n"
          "ZorkError: the quux could not be frobbed\n")
    d = answer(f"{warn}\n{tb}")
    assert d["exit_code"] != 0
    assert any("frobnicator" in u["text"] for u in d["unexplained"]), d["unexplained"]
    alone = answer(AROUND.format(warn))
    assert alone["exit_code"] == 0 and not alone["unexplained"]


def test_a_warning_signature_on_the_warning_line_still_names_its_code():
    line = ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, "
            "8-bit multiplication, and GPU quantization are unavailable.")
    assert codes(line)


@pytest.mark.parametrize("text", [
    "UserWarning: x", "FutureWarning: y", "RuntimeWarning: invalid value encountered in divide",
    "2024-05-01 12:00:00 WARNING  FutureWarning: z",
])
def test_warning_line_reads_the_category(text):
    assert warning_line(text)


@pytest.mark.parametrize("text", ["RuntimeError: x", "ValueError: Warning: not a warning", "Warning: x",
                                  "/x/a.py:3: UserWarning: x"])
def test_warning_line_refuses_others(text):
    # (a warning with its file:line is read by WARNING_RE before error_shape is asked)
    assert not warning_line(text) or text.startswith("/x/")
    assert error_shape("RuntimeError: x") == "exception"


# ----------------------------------------------------------------------------- 3. Slurm's job states

@pytest.mark.parametrize("text", [
    "JobId=4242 JobName=train\n   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)\n   ExitCode=0:125",
    "       JobID    JobName      State ExitCode\n------------ ---------- ---------- --------\n"
    "4242              train OUT_OF_ME+    0:125\n4242.batch         batch OUT_OF_ME+    0:125",
    "4242.0   python   OUT_OF_MEMORY    0:125",
    "JobId=4242 JobName=train\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n   ExitCode=0:9",
    "4242         train     FAILED      0:9",
])
def test_slurm_oom_states_name_the_oom_killer(text):
    assert codes(text)[:1] == ["host-oom-killed"]


@pytest.mark.parametrize("text", [
    "JobId=4242 JobName=train\n   JobState=CANCELLED Reason=None Dependency=(null)\n   ExitCode=0:15",
    "glGetError() returned OUT_OF_MEMORY while uploading the texture",
    "4242         train     FAILED      1:0",
])
def test_other_slurm_states_and_other_out_of_memory_are_not_the_oom_killer(text):
    assert "host-oom-killed" not in codes(text)


def test_slurm_signature_and_reader():
    kb = knowledge.load()
    sig = {s.id: s for s in kb.codes["host-oom-killed"].logs}["slurm-job-state-oom"]
    assert sig.weight == 3 and not sig.number and not sig.warning
    assert read_numbers("   ExitCode=0:9").endswith("[SIGKILL: Killed]")
    assert read_numbers("4242  train  FAILED      0:9").endswith("[SIGKILL: Killed]")
    assert read_numbers("   ExitCode=0:0") == "   ExitCode=0:0"
    assert read_numbers("   ExitCode=1:0") == "   ExitCode=1:0"


def test_a_named_message_outranks_slurms_signal():
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "   JobState=FAILED Reason=NonZeroExitCode\n   ExitCode=0:9\n")
    assert codes(text)[0] != "host-oom-killed"
