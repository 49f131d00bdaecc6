"""tools42: an exit status speaks only for what it can mean, the error lines and the bench's word of
failure agree on a few more shapes, and a crash record's top frame in a GPU library names the crash.

1. ``numbers.bare_status``: a launcher's report of an exit status that names no signal ("Process
   finished with exit code 1", "train-1 exited with code 1", "[Process exited 1]", systemd's
   ``status=1/FAILURE``) gives the guesses by words and by resemblance nothing to read: such a log is
   *Unknown error* with its fingerprint. 137 / -9 / SIGKILL still name host-oom-killed, 139 / SIGSEGV a
   native crash, and another line that names a cause still does. vocabulary's ``process-died`` reads an
   exit status only where it is SIGKILL's.
2. Error lines: an HTTP 5xx seen from the client (a status line, requests' ``<Response [500]>``, a
   proxy's "502 Bad Gateway"); no longer error lines: a logging level in a configuration dump
   ("log_level: ERROR") and argparse's help line with choices ("--on-error {stop,continue}").
3. systemd-coredump's and gdb's stack with its top frame (#0) in a GPU library, beside the crash
   record: native-crash-in-gpu-library with the line that names the library; the kernel's
   ``segfault at ... in libtriton.so[...]`` too. Without such a frame: Unknown error.
docs/dev/tools42.md.
"""
from __future__ import annotations

import pytest

from stackpeel.explain.numbers import bare_status
from stackpeel.explain.parser import error_shape

from explain_helpers import answer, codes, silent


def unknown(text: str) -> bool:
    """Unknown error: not silent, no candidate at all, a fingerprint."""
    d = answer(text)
    return d["exit_code"] != 0 and not d["candidates"] and bool(d["fingerprint"])


#: a healthy run's lines around the line under test (they must not decide anything)
AROUND = "epoch 1/3 loss 0.412\n{}\nepoch 2/3 loss 0.377\n"

# ----------------------------------------------------------------------------- 1. bare exit statuses

#: exit statuses that name no signal, in their programs' own words: no guess from them
BARE_STATUSES = [
    # JetBrains' run console
    "Process finished with exit code 1",
    "Process finished with exit code 2",
    # docker compose's
    "train-1 exited with code 1",
    "exited with code 255",
    # Neovim's :terminal (src/nvim/channel.c: "[Process exited %d]")
    "[Process exited 1]",
    # systemd's unit status
    "Main process exited, code=exited, status=1/FAILURE",
    "status=1/FAILURE",
    # GNU time's, Code::Blocks', subprocess' repr
    "Command exited with non-zero status 1",
    "Process returned 1 (0x1)   execution time : 0.312 s",
    "returncode=2",
    # a level tag says no more than the status: GitHub Actions', colcon's (srun's task line is a
    # launcher's summary since tools45, read as torchrun's and accelerate's are: launcher-worker-failed)
    "##[error]Process completed with exit code 1.",
    "Failed   <<< my_package [1.72s, exited with code 1]",
    "Error: setup.py exited with code 1",
]


@pytest.mark.parametrize("line", BARE_STATUSES)
def test_bare_status_alone_is_unknown_error(line):
    assert unknown(line), answer(line)["candidates"]
    assert unknown(AROUND.format(line))


@pytest.mark.parametrize("line", BARE_STATUSES)
def test_bare_status_reads_as_nothing(line):
    assert bare_status(line) is None


def test_bare_status_draws_no_oom_or_twice_loaded_guess():
    # the guesses tools41 left: host-oom-killed by the word 'exited with code 1', library-loaded-twice
    # by resemblance to a thread that pasted "Process finished with exit code 139"
    for line in ("exited with code 1", "Process finished with exit code 1", "train-1 exited with code 1"):
        got = codes(AROUND.format(line))
        assert "host-oom-killed" not in got and "library-loaded-twice" not in got, (line, got)


@pytest.mark.parametrize("line,left", [
    # the verb stays where the line names what failed: its words may still guess
    ("error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1",
     "error: command '/usr/local/cuda/bin/nvcc' failed"),
    ("ERROR: Command errored out with exit status 1: python setup.py egg_info",
     "ERROR: Command errored out with : python setup.py egg_info"),
    # a status that names a signal or a Windows status stays as it is
    ("exited with code 139 [SIGSEGV: Segmentation fault]", "exited with code 139 [SIGSEGV: Segmentation fault]"),
    ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
     "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)"),
    ("Process finished with exit code -1073741819 (0xC0000005)",
     "Process finished with exit code -1073741819 (0xC0000005)"),
    ("Main process exited, code=killed, status=9/KILL", "Main process exited, code=killed, status=9/KILL"),
    # no status at all
    ("ValueError: bad value", "ValueError: bad value"),
    ("Process finished with exit code 0", "Process finished with exit code 0"),
])
def test_bare_status_keeps_what_says_more(line, left):
    assert bare_status(line) == left


@pytest.mark.parametrize("line", [
    "train-1 exited with code 137",
    "worker exited with code -9",
    "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
    "Process finished with exit code 1\nKilled",
])
def test_sigkill_status_still_names_host_oom(line):
    assert codes(AROUND.format(line))[0] == "host-oom-killed"


@pytest.mark.parametrize("line", [
    "train-1 exited with code 139",
    "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
    "Process finished with exit code 1\nSegmentation fault (core dumped)",
])
def test_sigsegv_status_names_a_native_crash_not_oom(line):
    got = codes(AROUND.format(line))
    assert got[0] == "native-crash-in-gpu-library", got
    # 'exited with code 1' inside '139' was read as the process-died word (host-oom-killed first)
    assert "host-oom-killed" not in got


def test_bare_status_beside_a_named_cause_keeps_the_cause():
    log = ("RuntimeError: CUDA error: out of memory\n"
           "Process finished with exit code 1\n")
    assert codes(log)[0] == "gpu-out-of-memory"


def test_bare_status_beside_an_unknown_traceback_guesses_from_the_traceback_only():
    log = ("Traceback (most recent call last):\n"
           '  File "train.py", line 3, in <module>\n'
           "    import cv2\n"
           "ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n"
           "Process finished with exit code 1\n")
    got = codes(log)
    assert got and "host-oom-killed" not in got and "library-loaded-twice" not in got


def test_healthy_exit_stays_silent():
    assert silent(AROUND.format("Process finished with exit code 0"))
    assert silent(AROUND.format("train-1 exited with code 0"))


# ----------------------------------------------------------------------------- 2. error lines

#: an HTTP 5xx seen from the client's side: a server in front of a GPU model failed the request
HTTP_5XX = [
    "HTTP/1.1 502 Bad Gateway",
    "HTTP/1.1 500 Internal Server Error",
    "< HTTP/2 503",
    "502 Bad Gateway",
    "<html><head><title>504 Gateway Time-out</title></head>",
    "<Response [500]>",
    "print(r) -> <Response [503]>",
]


@pytest.mark.parametrize("line", HTTP_5XX)
def test_http_5xx_is_an_error_line(line):
    assert error_shape(line) is not None
    assert unknown(AROUND.format(line)), answer(AROUND.format(line))["candidates"]


#: the bench's word of failure where there is none, and 2xx/4xx-free healthy lines: silent
HEALTHY = [
    "HTTP/1.1 200 OK",
    "< HTTP/2 200",
    "<Response [200]>",
    'INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK',
    "served 5021 requests, 0 errors",
    "Found 0 errors in 12 files",
    "error_rate: 0.0012",
    "open(path, errors='ignore')",
    "log_level: ERROR",
    "LOG_LEVEL=FATAL",
    '  verbosity = "error"',
    "{'level': 'ERROR', 'handlers': ['console']}",
    '  "logging": {"level": "error"},',
    "  --on-error {stop,continue}   what to do on an error",
    "  --ignore-errors        continue on errors",
    "failures: 0",
    "timeout: 600",
    "max_retries_on_failure = 3",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_false_alarms_stay_silent(line):
    assert silent(AROUND.format(line)), answer(AROUND.format(line))["candidates"]


@pytest.mark.parametrize("line", [
    # a level word with a failure after it is still a failure
    "level: ERROR failed to load the model",
    "ERROR: level: ERROR",
    # an option's help is no shield for a real error record
    "error: unrecognized arguments: --on-error",
])
def test_level_and_option_lines_with_a_failure_still_count(line):
    assert not silent(AROUND.format(line))


# ----------------------------------------------------------------------------- 3. crash records

COREDUMP_CUDA = """\
Dec 07 10:01:02 host systemd-coredump[5123]: Process 4321 (python3) of user 1000 dumped core.

                                             Stack trace of thread 4321:
                                             #0  0x00007f3a2c1e4b1c n/a (libcuda.so.1 + 0x2a4b1c)
                                             #1  0x00007f3a2c0b7e1b n/a (libcuda.so.1 + 0x177e1b)
                                             #2  0x00007f3a4b2c3d4e cudaLaunchKernel (libcudart.so.12 + 0x6cd4e)
                                             #3  0x00007f3a6d029d90 __libc_start_call_main (libc.so.6 + 0x29d90)
"""

#: the crashing thread is in libc and libpython; a CUDA worker thread waits in poll with libcuda below
COREDUMP_IDLE_CUDA_THREAD = """\
Process 4321 (python3) of user 1000 dumped core.

Stack trace of thread 4321:
#0  0x00007f3a6d0969fc __pthread_kill_implementation (libc.so.6 + 0x969fc)
#1  0x00007f3a6d042476 raise (libc.so.6 + 0x42476)
#2  0x00007f3a6d0287f3 abort (libc.so.6 + 0x287f3)
#3  0x00007f3a5b7e1234 n/a (libpython3.10.so.1.0 + 0x1234)

Stack trace of thread 4330:
#0  0x00007f3a6d118bcf __poll (libc.so.6 + 0x118bcf)
#1  0x00007f3a2c3f1a2b n/a (libcuda.so.1 + 0x3f1a2b)
"""

GDB_CUDA = """\
Thread 1 "python" received signal SIGSEGV, Segmentation fault.
0x00007ffff5e3c1a0 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
(gdb) bt
#0  0x00007ffff5e3c1a0 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
#1  0x00007ffff5e3d2b1 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
"""


@pytest.mark.parametrize("lib", ["libcuda.so.1", "libnvidia-glcore.so.535.104.05", "libcudnn_ops_infer.so.8",
                                 "libnccl.so.2", "libtorch_cuda.so", "libtriton.so"])
def test_coredump_top_frame_names_the_library(lib):
    log = COREDUMP_CUDA.replace("libcuda.so.1 + 0x2a4b1c", f"{lib} + 0x2a4b1c")
    d = answer(log)
    top = d["candidates"][0]
    assert top["code"] == "native-crash-in-gpu-library"
    assert any(lib in e["text"] for e in top["evidence"])


def test_coredump_without_a_gpu_top_frame_is_unknown_error():
    assert unknown(COREDUMP_IDLE_CUDA_THREAD)


def test_coredump_record_alone_is_unknown_error():
    assert unknown(AROUND.format("Process 4321 (python3) of user 1000 dumped core."))


def test_gdb_backtrace_after_sigsegv_names_the_crash():
    assert codes(GDB_CUDA)[0] == "native-crash-in-gpu-library"


def test_backtrace_of_a_live_process_is_no_crash():
    # `thread apply all bt` of a hung or healthy process: the top frame in libcuda, no signal, no core
    log = ("(gdb) thread apply all bt\n"
           "#0  0x00007ffff5e3c1a0 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
           "#1  0x00007ffff5e3d2b1 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1\n")
    assert "native-crash-in-gpu-library" not in codes(log)


def test_gdb_top_frame_in_libc_is_not_named():
    log = ("Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.\n"
           "(gdb) bt\n"
           "#0  0x00007ffff7d1e9fc in __GI___poll () from /lib/x86_64-linux-gnu/libc.so.6\n"
           "#1  0x00007ffff5e3d2b1 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1\n")
    d = answer(log)
    assert not any(e["entry"] == "coredump-top-frame-in-gpu-library"
                   for c in d["candidates"] for e in c["evidence"])


@pytest.mark.parametrize("lib", ["libcuda.so.535.104.05", "libtriton.so", "libnvidia-ptxjitcompiler.so.1"])
def test_kernel_segfault_record_in_gpu_library(lib):
    line = (f"[12345.678901] python[4321]: segfault at 7f3a00000010 ip 00007f3a2c1e4b1c sp 00007ffd5e6f7a80 "
            f"error 4 in {lib}[7f3a2bf40000+1c6a000]")
    assert codes(line)[0] == "native-crash-in-gpu-library"


def test_kernel_segfault_record_elsewhere_is_unknown_error():
    line = ("[12345.678901] python[4321]: segfault at 10 ip 00007f3a2c1e4b1c sp 00007ffd5e6f7a80 error 4 in "
            "libpython3.10.so.1.0[7f3a2bf40000+1c6a000]")
    assert "native-crash-in-gpu-library" not in codes(line)
    assert not silent(line)
