"""tools39: numeric status codes as facts. A bare exit status, signal or Windows status that
``explain.numbers`` reads as its name reaches the code the name stands for (``number = true``
signatures: weaker than any message, so a bare number never outranks a named one); torchrun's
``failed (exitcode: N)`` still matches once a name is read into it; a check macro's ``CUDA error:
Error code N``. docs/dev/KNOWLEDGE.md, docs/dev/tools39.md.
"""
from __future__ import annotations

import pytest

from stackpeel import knowledge
from stackpeel.explain import explain_text, match_codes
from stackpeel.explain.numbers import read_numbers
from stackpeel.explain.priors import MIN_SHARE, MIN_THREADS, ORDER_MIN_SHARE, ORDER_MIN_THREADS


def cands(text: str) -> list:
    return explain_text(text).to_dict()["candidates"]


def codes(text: str) -> list:
    return [c["code"] for c in cands(text)]


def first(text: str):
    found = codes(text)
    return found[0] if found else None


PY = "subprocess.CalledProcessError: Command '['python', 'train.py', '--bs', '8']' returned non-zero exit status {}."
SH = "subprocess.CalledProcessError: Command '['bash', 'run.sh']' returned non-zero exit status {}."
TORCHRUN = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {}) local_rank: 0 (pid: 2410412) "
            "of binary: /opt/conda/bin/python")

# ----------------------------------------------------------------------------- the knowledge base

NUMBER_SIGNATURES = {
    "exit-status-read-as-sigkill": "host-oom-killed",
    "windows-status-commitment-limit": "windows-pagefile-too-small",
    "windows-status-no-memory": "windows-pagefile-too-small",
    "windows-status-invalid-image-format": "library-wrong-format",
    "windows-status-dll-init-failed": "msvc-runtime-missing",
    "windows-status-entrypoint-not-found": "library-shadowed",
    # src41
    "windows-status-stack-overflow": "windows-stack-overflow",
    "windows-status-in-page-error": "windows-mapped-file-unreadable",
}


def test_number_signatures_are_declared_as_such():
    kb = knowledge.load()
    sigs = {s.id: (s, code) for code, e in kb.codes.items() for s in e.logs}
    for sid, code in NUMBER_SIGNATURES.items():
        sig, owner = sigs[sid]
        assert owner == code and sig.number and not sig.fallback, sid
    # no signature a program's own words match is a number one
    assert sum(s.number for s, _ in sigs.values()) == len(NUMBER_SIGNATURES)


def test_number_flag_must_be_a_boolean(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text('[x-code]\nlayer = "system"\nkind = "root"\nseverity = "blocking"\ntitle = "t"\n'
                   'meaning = "m"\nfix = "f"\nsource = "s"\n'
                   '[[x-code.log]]\nid = "x"\npatterns = ["abcdef"]\nweight = 1\nnumber = "yes"\nsource = "s"\n')
    with pytest.raises(knowledge.KnowledgeError, match="'number' must be true or false"):
        knowledge.load(paths=(str(bad),))
    good = tmp_path / "y.toml"
    good.write_text(bad.read_text().replace('number = "yes"', "number = true"))
    sig = knowledge.load(paths=(str(good),)).codes["x-code"].logs[0]
    assert sig.number and not sig.fallback


# ----------------------------------------------------------------------------- numbers: a check macro's words

@pytest.mark.parametrize("line, name", [
    ("!!!! CUDA error: Error code 35", "cudaErrorInsufficientDriver"),
    ("CUDA error: error code 804", "cudaErrorCompatNotSupportedOnDevice"),
    ("CUDA error: Error code: 2", "cudaErrorMemoryAllocation"),
    ("!!!! CUBLAS error: Status code 13", "CUBLAS_STATUS_EXECUTION_FAILED"),
    ("NCCL error: Error code 2", "ncclSystemError"),
])
def test_check_macro_error_code_is_read(line, name):
    assert f"[{name}" in read_numbers(line)


@pytest.mark.parametrize("line", [
    "Error code 35",                                   # no library named
    "CUDA error: Error code 2: out of memory",         # the program's own text follows
    "CUDA error: Error code 35 (cudaErrorInsufficientDriver)",   # named as written
    "compile error code 35 in cuda_kernel.cu",
])
def test_check_macro_near_misses_are_left(line):
    got = read_numbers(line)
    assert got == line or "[cudaError" not in got


def test_check_macro_error_code_gives_the_names_code():
    assert first("!!!! CUDA error: Error code 35") == first("cudaErrorInsufficientDriver")
    assert first("!!!! CUDA error: Error code 2") == "gpu-out-of-memory"


# ----------------------------------------------------------------------------- torchrun's line with a name read into it

@pytest.mark.parametrize("status", ["-15", "-2", "137", "143", "2", "1"])
def test_torchrun_failed_line_still_matches(status):
    assert "launcher-worker-failed" in match_codes(TORCHRUN.format(status))
    assert "launcher-worker-failed" in codes(TORCHRUN.format(status))


def test_torchrun_137_names_the_oom_killer_first():
    assert codes(TORCHRUN.format("137"))[:2] == ["host-oom-killed", "launcher-worker-failed"]


# ----------------------------------------------------------------------------- SIGKILL from a number

SIGKILL_READ = [
    "exit code 137",
    "Error: process exited with code 137",
    "srun: error: gpu-node-3: task 0: Exited with exit code 137",
    "The container exited with code 137",
    SH.format(137),
    PY.format(137),
    "Process finished with exit code 137",
    "make: *** [Makefile:5: all] Error 137",
    "The worker was killed by signal 9",
    "returncode=-9",
    "error: Exited (137) 3 seconds ago",
]


@pytest.mark.parametrize("line", SIGKILL_READ)
def test_exit_status_read_as_sigkill_names_the_oom_killer(line):
    assert first(line) == "host-oom-killed", codes(line)


SIGKILL_NOT = [
    "exit code 9",                     # a program's own status 9, no signal
    "Killed 137 processes",            # a count
    "exit code 1",
    "exit code 0",
    "exit code 143",                   # SIGTERM: stopped, not the OOM killer
    "exit code 139",                   # SIGSEGV
    "exit code 1370",
    "processed 137 items, exit code 2",
]


@pytest.mark.parametrize("line", SIGKILL_NOT)
def test_other_numbers_are_not_sigkill(line):
    found = cands(line)
    assert not any(c["code"] == "host-oom-killed" and c["basis"] == "signature" for c in found), found


# ----------------------------------------------------------------------------- Windows statuses

WINDOWS = [
    ("Process finished with exit code -1073741523 (0xC000012D)", "windows-pagefile-too-small"),
    ("Process finished with exit code 3221225773", "windows-pagefile-too-small"),
    ("Process finished with exit code -1073741801 (0xC0000017)", "windows-pagefile-too-small"),
    ("exited with code 3221225495", "windows-pagefile-too-small"),
    ("Process finished with exit code -1073741701 (0xC000007B)", "library-wrong-format"),
    ("The application was unable to start correctly (0xc000007b). Click OK to close the application.",
     "library-wrong-format"),
    ("Process finished with exit code -1073741502 (0xC0000142)", "msvc-runtime-missing"),
    ("The application was unable to start correctly (0xc0000142).", "msvc-runtime-missing"),
    ("Process finished with exit code -1073741511 (0xC0000139)", "library-shadowed"),
    ("Process finished with exit code 3221225785", "library-shadowed"),
    ("Process finished with exit code -1073741512 (0xC0000138)", "library-shadowed"),
]


@pytest.mark.parametrize("line, code", WINDOWS)
def test_windows_status_names_its_code(line, code):
    assert first(line) == code, codes(line)


def test_dll_init_failed_carries_its_could_be():
    c = cands("Process finished with exit code -1073741502 (0xC0000142)")[0]
    assert "library-missing" in c["could_be"]


WINDOWS_NOT = [
    "Process finished with exit code -1073741510 (0xC000013A)",      # Ctrl+C: no failure
    "Process finished with exit code 3221225786",
    "Process finished with exit code 1073741523",                    # positive, no status
    # (stack overflow, 0xC00000FD, had no code here; src41 gave it windows-stack-overflow)
    "allocated 3221225773 bytes",                                    # a size, not a status
]


@pytest.mark.parametrize("line", WINDOWS_NOT)
def test_other_windows_numbers_name_none_of_these(line):
    found = [c for c in cands(line) if c["basis"] == "signature"]
    assert not any(c["code"] in set(NUMBER_SIGNATURES.values()) for c in found), found


# ----------------------------------------------------------------------------- a bare number never outranks a message

TRACEBACK = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'
WITH_MESSAGE = [
    (TRACEBACK + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + PY.format(137),
     "gpu-out-of-memory"),
    (TRACEBACK + "ModuleNotFoundError: No module named 'flash_attn'\nexit code 137", "flash-attn-not-installed"),
    # a catch-all message (a bare CUDA error text) too
    ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
     "Process finished with exit code -1073741523 (0xC000012D)", "cuda-error-unclassified"),
    ("ImportError: DLL load failed while importing _C: The specified module could not be found.\n"
     "Process finished with exit code -1073741701 (0xC000007B)", None),
    ("RuntimeError: CUDA error: an illegal memory access was encountered\nexit code 137", "cuda-error-unclassified"),
]


@pytest.mark.parametrize("log, code", WITH_MESSAGE)
def test_bare_number_gives_way_to_a_message(log, code):
    found = cands(log)
    assert found
    if code is not None:
        assert found[0]["code"] == code, [c["code"] for c in found]
    number_codes = {"host-oom-killed", "windows-pagefile-too-small", "library-wrong-format"}
    assert not any(c["code"] in number_codes for c in found), [c["code"] for c in found]


# ----------------------------------------------------------------------------- a python child's signal

@pytest.mark.parametrize("status, could", [
    ("139", "library-loaded-twice"), ("134", "library-loaded-twice"), ("-11", "library-loaded-twice"),
    ("135", "dataloader-shm-too-small"), ("-7", "dataloader-shm-too-small"),
])
def test_python_child_signal_carries_its_causes(status, could):
    c = cands(PY.format(status))[0]
    assert c["code"] == "launcher-worker-failed" and could in c["could_be"], c


@pytest.mark.parametrize("status", ["1", "2", "255"])
def test_python_child_plain_status_keeps_the_launchers_causes(status):
    c = cands(PY.format(status))[0]
    assert c["code"] == "launcher-worker-failed"
    assert "dataloader-shm-too-small" in c["could_be"] and "host-oom-killed" in c["could_be"]


def test_shell_child_segfault_is_not_a_launcher():
    # a shell's child is no launcher's worker: the words decide (native crash), as before
    assert first(SH.format(139)) == "native-crash-in-gpu-library"


# ----------------------------------------------------------------------------- priors' thresholds (item 2)

def test_prior_thresholds():
    assert (MIN_THREADS, MIN_SHARE) == (6, 0.4)
    assert (ORDER_MIN_THREADS, ORDER_MIN_SHARE) == (8, 0.5)


# ----------------------------------------------------------------------------- 3. torch's OOM numbers wrapped over lines

import textwrap  # noqa: E402

from stackpeel.combinations import torch_oom_across  # noqa: E402

OOM_OTHERS = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
              "23.65 GiB of which 3.12 MiB is free. Process 1234 has 17.20 GiB memory in use. Including non-PyTorch "
              "memory, this process has 6.40 GiB memory in use. Of the allocated memory 5.90 GiB is allocated by "
              "PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.")
OOM_MINE = OOM_OTHERS.replace("Process 1234 has 17.20 GiB memory in use. ", "").replace("this process has 6.40 GiB",
                                                                                          "this process has 23.60 GiB")
OOM_OLD_OTHERS = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; "
                  "2.10 GiB already allocated; 3.12 MiB free; 2.20 GiB reserved in total by PyTorch) If reserved memory "
                  "is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
OOM_OLD_MINE = OOM_OLD_OTHERS.replace("2.10 GiB already", "21.10 GiB already").replace("2.20 GiB reserved",
                                                                                         "22.90 GiB reserved")
TB = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'


def wrapped(text: str, width: int, prefix: str = "") -> str:
    return "\n".join(prefix + ln for ln in textwrap.wrap(text, width))


SHAPES = [
    lambda t: TB + wrapped(t, 80),
    lambda t: TB + wrapped(t, 100),
    lambda t: wrapped(t, 120),
    lambda t: wrapped(t, 72),
    lambda t: TB + wrapped(t, 90, "[rank0]: "),
    lambda t: wrapped(t, 90, "    "),
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@pytest.mark.parametrize("message", [OOM_OTHERS, OOM_OLD_OTHERS])
def test_wrapped_oom_numbers_name_other_processes(shape, message):
    assert first(SHAPES[shape](message)) == "gpu-memory-held-by-other-processes"


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@pytest.mark.parametrize("message", [OOM_MINE, OOM_OLD_MINE])
def test_wrapped_oom_numbers_of_this_process_stay_out_of_memory(shape, message):
    found = codes(SHAPES[shape](message))
    assert found[0] == "gpu-out-of-memory" and "gpu-memory-held-by-other-processes" not in found


def test_oom_across_reads_only_a_message_it_starts():
    lines = textwrap.wrap(OOM_OTHERS, 80)
    assert torch_oom_across(lines).startswith("torch.OutOfMemoryError")
    assert torch_oom_across([OOM_OTHERS]) is None                 # whole on one line: the line reads it
    assert torch_oom_across(lines[1:]) is None or "has a total" in lines[1]
    assert torch_oom_across(["RuntimeError: something else", *lines[1:]]) is None
    # a blank line ends the message
    assert torch_oom_across([lines[0], "", *lines[1:]]) is None
    # a message cut before its numbers: nothing to read
    assert torch_oom_across(lines[:2]) is None
