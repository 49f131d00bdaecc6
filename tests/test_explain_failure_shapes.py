"""Failure lines explain used to answer "No known problem" (issue 8 item 3: "No known problem"
only when the log holds no error at all): a step that failed in contracted spelling ("Can't",
"couldn't"), a job's fatal signal alone on its line, the kernel's record of a crashed process, an
exception that ended a thread. Each is the program's own text:

- transformers tokenization_utils_base.py ``PreTrainedTokenizerBase.from_pretrained``:
  ``raise OSError(f"Can't load tokenizer for '{name}'. If you were trying to load it from ...")``
- datasets load.py: ``FileNotFoundError(f"Couldn't find a dataset script at {path} or any data file
  in the same directory.")``
- bash jobs.c ``pretty_print_job`` / ``print_pipeline``: strsignal(3) of a job's fatal signal
  ("Aborted", "Terminated", "Trace/breakpoint trap"), followed by " (core dumped)" when it dumped
- Linux arch/x86/mm/fault.c ``show_signal_msg`` ("%s%s[%d]: segfault at %lx ip %px sp %px error %lx")
  and arch/x86/kernel/traps.c (``traps: %s[%d] general protection fault ip:%lx sp:%lx error:%lx``),
  each followed by " in LIB[...]"
- glibc malloc/malloc.c ``malloc_printerr`` ("free(): invalid pointer", "double free or corruption
  (out)", "malloc(): corrupted top size", "corrupted size vs. prev_size"), debug/fortify_fail.c
  ("*** stack smashing detected ***: terminated"), libstdc++ ``__cxa_pure_virtual``
- absl/status/status.cc ``StatusCodeToString`` before a message, as XLA/JAX/TensorFlow print it
- bash jobs.c, zsh Src/jobs.c ``printjob``, fish: an interactive job killed by SIGKILL
- CPython Lib/threading.py ``excepthook``: ``Exception in thread {name}:`` (3.10+:
  ``Thread-1 (worker)``); the JVM: ``Exception in thread "main" java.lang.OutOfMemoryError``
- the CUDA samples' verdict (``Result = FAIL``), CPython Lib/unittest/runner.py's ``FAIL: test (Case)``,
  npm/cli lib/utils/error-message.js (``npm ERR!``, npm 10 ``npm error``), docker compose v1
  compose/config/validation.py (``The Compose file '...' is invalid because:``), .NET's and MSVC's
  ``Unhandled exception``; the bare verb of a failed step (``fail to initialise cuda backend``)
- glibc's strerror() texts ending a perror()/err() line (sysdeps/gnu/errlist.h), Apple ld64's
  ``Undefined symbols for architecture``, gdb's backtrace frames of ``abort``/``raise``/``__pthread_kill``
- hosted notebooks' notices: Colab's ``Your session crashed after using all available RAM.`` and
  ``Your session crashed for an unknown reason.``, Kaggle's ``Your notebook tried to allocate more
  memory than is available. It has restarted.``
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import error_shape


def answer(text: str):
    return explain_text(text if text.endswith("\n") else text + "\n")


def codes(rep):
    return [c.code for c in rep.candidates]


FAILURES = [
    ("Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from "
     "'https://huggingface.co/models', make sure you don't have a local directory with the same name.", "missing"),
    ("Couldn't find a dataset script at /data/squad/squad.py or any data file in the same directory.", "missing"),
    ("couldn\u2019t find libcudart.so.12 anywhere on the library path", "missing"),
    ("I can not open /dev/nvidia0 from inside the container", "missing"),
    ("Aborted", "crash"),
    ("Terminated", "crash"),
    ("Trace/breakpoint trap (core dumped)", "crash"),
    ("Abort trap: 6", "crash"),
    ("Killed: 9", "crash"),
    ("python[2345]: segfault at 0 ip 00007f3a2b1c4d10 sp 00007ffd4c3b2a10 error 4 in libc.so.6[7f3a2a000000+1c00000]",
     "crash"),
    ("traps: python3[9921] general protection fault ip:7f1c2d3e4f50 sp:7ffc1a2b3c40 error:0 in libz.so.1", "crash"),
    ("free(): invalid pointer", "crash"),
    ("double free or corruption (out)", "crash"),
    ("malloc(): corrupted top size", "crash"),
    ("corrupted size vs. prev_size", "crash"),
    ("*** stack smashing detected ***: terminated", "crash"),
    ("pure virtual method called", "crash"),
    ("INVALID_ARGUMENT: Unknown ptxas version", "status"),
    ("Exception in thread Thread-1 (worker):", "thread"),
    ('Exception in thread "main" java.lang.UnsatisfiedLinkError: no jcuda in java.library.path', "thread"),
    # cuda-samples Common/helper_cuda.h users (deviceQuery, bandwidthTest) end with their verdict
    ("Result = FAIL", "tool"),
    # CPython Lib/unittest/runner.py TextTestResult.printErrorList ("%s: %s" % (flavour, description))
    ("FAIL: test_matmul (test_ops.TestOps)", "tool"),
    ("FAIL: test_matmul (test_ops.TestOps.test_matmul)", "tool"),
    # npm/cli lib/utils/error-message.js (npm < 10 "npm ERR!", npm 10 "npm error")
    ("npm ERR! code ELIFECYCLE", "tool"),
    ("npm error code ENOENT", "tool"),
    # docker compose v1 compose/config/validation.py ("The Compose file '{file}' is invalid because:")
    ("The Compose file './docker-compose.yml' is invalid because:", "tool"),
    # .NET's unhandled-exception report, MSVC's debugger, a C++ runtime's last words
    ("Unhandled exception. System.DllNotFoundException: Unable to load DLL 'nvcuda.dll'", "tool"),
    ("Unhandled exception at 0x00007FF8A1B2C3D4 in python.exe: 0xC0000005: Access violation", "tool"),
    ("Unhandled exception: std::bad_alloc", "tool"),
    # the bare verb of a failed step (llama.cpp-era C programs, Chinese-English messages)
    ("fail to initialise cuda backend", "failed"),
    ("Fail to load model from /models/x.bin", "failed"),
    # a step that "could not" start, in more verbs (NVML's users: "Could not initialize NVML")
    ("Could not initialize NVML", "missing"),
    # a shortage in words
    ("not enough memory", "missing"),
    ("Insufficient GPU memory to load the model", "missing"),
    # strerror() ending a perror()/err() line, or alone (glibc sysdeps/gnu/errlist.h)
    ("mount: /mnt/data: Operation not permitted", "errno"),
    ("Permission denied", "errno"),
    ("Invalid argument", "errno"),
    ("Too many open files", "errno"),
    ("cp: error writing '/data/weights.bin': No space left on device", "errno"),
    ("write(4): Broken pipe.", "errno"),
    # Apple's ld64; gdb's backtrace of an aborted process
    ("Undefined symbols for architecture arm64:", "build"),
    ("#1  0x00007ffff7a44801 in abort () from /lib/x86_64-linux-gnu/libc.so.6", "crash"),
    # libstdc++'s verbose terminate handler when a handler throws again
    ("terminate called recursively", "tool"),
    # Ray's GCS on a node whose raylet stopped answering
    ("The node with node id: 5f2c and address: 10.0.0.7 and node name: gpu-7 has been marked dead because the "
     "detector has missed too many heartbeats from it.", "exited"),
    ("#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=140737352591168) at ./nptl/pthread_kill.c:44",
     "crash"),
]

#: what launchers and log collectors put before a line (a shell's or the kernel's line never
#: carries a Python logger's timestamp: that one only before a program's own message)
PREFIXES = ["", "[rank0]: ", "(Worker pid=4242) ", "2024-05-01T10:00:00.123456789Z "]
LOGGER = "2024-05-01 10:00:00,123 "
PREFIXED = [(p + line, shape) for line, shape in FAILURES for p in PREFIXES + [LOGGER]
            if p != LOGGER or shape == "missing"]


@pytest.mark.parametrize("line,shape", FAILURES)
def test_the_shape_of_the_line(line, shape):
    assert error_shape(line) == shape


@pytest.mark.parametrize("line,shape", PREFIXED)
def test_a_log_holding_only_this_line_is_a_failure_never_no_known_problem(line, shape):
    rep = answer(line)
    assert rep.exit_code == 1 and rep.has_errors, (line, rep.exit_code)


@pytest.mark.parametrize("line", [
    # the kernel's records name the library the crash was in: a GPU library's is that symptom
    "[12345.678901] python[2345]: segfault at 0 ip 00007f3a2b1c4d10 sp 00007ffd4c3b2a10 error 4 in "
    "libcuda.so.1[7f3a2a000000+1c00000]",
    "traps: python3[9921] general protection fault ip:7f1c2d3e4f50 sp:7ffc1a2b3c40 error:0 in "
    "libnvidia-glcore.so.550.54.14[7f1c2a000000+1800000]",
])
def test_the_kernels_record_of_a_crash_in_a_gpu_library_names_that_symptom(line):
    assert codes(answer(line))[:1] == ["native-crash-in-gpu-library"], codes(answer(line))


@pytest.mark.parametrize("line", [
    # a record below ERROR, a fallback notice, a signal's name inside a sentence or a status field
    "INFO: can't find optional plugin libfoo, skipping",
    "WARNING: couldn't find ninja, falling back to the slow distutils backend",
    "Job state: Terminated by the scheduler at 12:00 (requeued)",
    "the run was Aborted early on purpose to save time",
    "Worker thread started: Thread-1 (worker)",
    "segfault handler installed at startup",
    # JAX's back-end probe at INFO (jax/_src/xla_bridge.py), a status name inside a name
    "INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform",
    "grpc.StatusCode.UNAVAILABLE_RETRY_POLICY set",
    "calls free() on exit; malloc() statistics printed below",
    # a passing verdict, a count, a guess or a denial of the bare verb
    "Result = PASS",
    "FAIL: 0",
    "I wonder if it would fail to build with gcc 13",
    "this does not fail to load on the CPU",
    # a strerror() text inside a sentence, not ending a failed call; a gdb frame of no abort
    "Invalid argument handling was improved in this release",
    "see the Permission denied section of the FAQ for details",
    "#2  0x00005555555551a9 in main () at train.c:12",
    # torch's NNPACK notice on a CPU it does not support (the run goes on); a shortage as a condition
    "[W NNPACK.cpp:64] Could not initialize NNPACK! Reason: Unsupported hardware.",
    "lower the batch size if not enough memory is free",
])
def test_near_misses_are_no_failure_lines(line):
    assert error_shape(line) is None, line


@pytest.mark.parametrize("line,suspect", [
    # users' words in issue threads (a crash the log does not show): a possible failure, exit 1
    ("it crashes on startup", None),
    ("The kernel keeps crashing after the first cell", None),
    ("training randomly segfaults after a few hundred steps", None),
    # a hosted notebook's notice of a crash with no cause named
    ("Your session crashed for an unknown reason.", None),
    # a process that ends without a word: only a suspect line (no error line at all)
    ("the python process just exits silently", True),
    ("training stopped without any output", True),
    ("the job terminated without a traceback", True),
    ("There is no traceback, the process just disappears", True),
    ("the model loads but the result is wrong", True),
    ("fp16 inference produces incorrect results on the 4090", True),
    # a library that swallowed a GPU failure and went on on the CPU (the founding case's shape)
    ("[2024-01-01 10:00:00] WARN Failed to load libcuda.so, falling back to CPU", None),
])
def test_a_crash_or_a_silent_end_in_the_users_words_is_a_possible_failure(line, suspect):
    rep = answer(line)
    assert rep.exit_code == 1, (line, rep.exit_code)
    if suspect:
        assert rep.suspect_only, line


@pytest.mark.parametrize("line", ["crash reporter enabled", "no crashes so far", "--disable-crash-handler set"])
def test_the_word_crash_in_a_name_or_a_count_is_no_failure(line):
    assert answer(line).exit_code == 0, line


@pytest.mark.parametrize("line", [
    "[1]+  Killed                  python train.py",
    "[1]  + 4242 killed     python train.py",
    "zsh: killed     python train.py",
    "fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)",
])
def test_an_interactive_shells_killed_job_is_the_oom_killer_first(line):
    assert codes(answer(line))[:1] == ["host-oom-killed"], codes(answer(line))


def test_a_killed_count_is_no_killed_job():
    assert "host-oom-killed" not in codes(answer("[1] 3 workers killed  cleanly at shutdown, 0 errors"))


@pytest.mark.parametrize("line", [
    # cudaGetErrorString's texts of cudaErrorIllegalAddress / cudaErrorIllegalInstruction, quoted
    # without "CUDA error: " (knowledge/status_codes.json holds libcudart's texts)
    "an illegal memory access was encountered",
    "I keep getting `an illegal instruction was encountered` after a few steps",
    "misaligned address",
    "unspecified launch failure",
    'the kernel fails with "invalid configuration argument" for large batches',
    "invalid resource handle.",
])
def test_a_cuda_runtime_text_alone_is_a_cuda_error(line):
    rep = answer(line)
    assert rep.exit_code == 1 and "cuda-error-unclassified" in codes(rep), codes(rep)


def test_the_cuda_texts_come_from_the_runtime():
    from stackpeel.explain import numbers
    texts = {v[1] for v in numbers.table()["cudaError"].values() if len(v) > 1}
    assert {"an illegal memory access was encountered", "an illegal instruction was encountered",
            "misaligned address", "unspecified launch failure", "invalid configuration argument",
            "invalid resource handle", "hardware stack error", "invalid program counter"} <= texts


@pytest.mark.parametrize("line", ["the allocator now rounds a misaligned address up to 256 bytes",
                                  "added a check for invalid resource handles in the stream pool"])
def test_a_cuda_text_inside_a_sentence_is_no_cuda_error(line):
    assert "cuda-error-unclassified" not in codes(answer(line)), codes(answer(line))


@pytest.mark.parametrize("line", [
    # the driver's record retold in users' words (NVIDIA's Xid catalog: 79 = fallen off the bus)
    "The GPU fell off the bus",
    "GPU 3 has fallen off the bus after a few hours",
    "Xid 79",
    "we keep hitting Xid error 48 on node 3",
])
def test_a_retold_hardware_xid_is_a_hardware_fault(line):
    assert codes(answer(line))[:1] == ["gpu-hardware-fault"], codes(answer(line))


@pytest.mark.parametrize("line", [
    "Xid 13 in dmesg",            # a program's illegal address, not the hardware
    "step 79 took Xid 79 ms",     # a number with a unit
    "the bus driver fell off the schedule",
])
def test_other_xids_and_words_are_no_hardware_fault(line):
    assert "gpu-hardware-fault" not in codes(answer(line)), codes(answer(line))


# -- the Docker client's own failures (moby client request.go / errors.go) ------------------

DOCKER = [
    ('Got permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: '
     'Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json": dial unix /var/run/docker.sock: connect: '
     'permission denied', "docker-socket-permission-denied"),
    ("docker: permission denied while trying to connect to the Docker daemon socket at "
     "unix:///var/run/docker.sock.\nSee 'docker run --help'.", "docker-socket-permission-denied"),
    ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
     "docker-daemon-not-running"),
    # Docker Desktop's socket: the CLI's context is desktop-linux, whose VM has no NVIDIA runtime
    ("docker: Cannot connect to the Docker daemon at unix:///home/u/.docker/desktop/docker.sock. Is the docker "
     "daemon running?", "docker-nvidia-runtime-not-registered"),
]


@pytest.mark.parametrize("prefix", ["", "$ ", "[rank0]: ", "2024-05-01T10:00:00.123456789Z "])
@pytest.mark.parametrize("text,code", DOCKER)
def test_the_docker_clients_failures_name_their_cause(text, code, prefix):
    assert codes(answer(prefix + text))[:1] == [code], codes(answer(prefix + text))


def test_docker_prose_without_the_message_names_neither():
    rep = answer("I added myself to the docker group so that the daemon socket works without sudo")
    assert not {"docker-socket-permission-denied", "docker-daemon-not-running"} & set(codes(rep))


@pytest.mark.parametrize("line", ["the script exits without error", "Completed without errors",
                                  "finished without any errors",
                                  # a fallback that is not from the GPU, a fix for wrong results
                                  "ninja not found, falling back to the slow distutils backend",
                                  "this release fixes wrong results in fp16 matmul"])
def test_ending_without_error_is_a_success(line):
    assert answer(line).exit_code == 0, line


@pytest.mark.parametrize("line", [
    "Your session crashed after using all available RAM. If you are interested in access to high-RAM runtimes, "
    "you may want to check out Colab Pro.",
    "Your notebook tried to allocate more memory than is available. It has restarted.",
])
def test_a_hosted_notebooks_ram_notice_is_the_oom_killer(line):
    assert codes(answer(line))[:1] == ["host-oom-killed"], codes(answer(line))


@pytest.mark.parametrize("line", [
    "torch.cuda.device_count() returns 0",
    "but `torch.cuda.device_count()` returned 0 inside the container",
    "print(torch.cuda.device_count()) gives 0",
])
def test_a_device_count_of_zero_in_the_users_words_is_torch_seeing_no_gpu(line):
    assert "torch-cuda-unavailable" in codes(answer(line)), codes(answer(line))


@pytest.mark.parametrize("line", ["torch.cuda.device_count() returns 8", "device_count() is 0.5 of what I expected",
                                  "device_count() = 01"])
def test_a_device_count_above_zero_is_no_symptom(line):
    assert "torch-cuda-unavailable" not in codes(answer(line)), codes(answer(line))


@pytest.mark.parametrize("line", ["Too many open files", "socket(): Too many open files",
                                  "accept: Too many open files."])
def test_emfile_alone_or_ending_a_line_is_the_open_files_limit(line):
    assert codes(answer(line))[:1] == ["open-files-limit-exhausted"], codes(answer(line))


def test_enfile_is_not_the_process_limit():
    # ENFILE: the whole system's file table (fs.file-max), not the process's ulimit -n
    assert "open-files-limit-exhausted" not in codes(answer("socket(): Too many open files in system"))


def test_enospc_as_oserrors_repr_is_the_disk_or_shm_symptom():
    # wandb and loggers print the exception's repr, not str(): OSError(28, '...')
    got = codes(answer("wandb: ERROR Run abc errored: OSError(28, 'No space left on device')"))
    assert got[:1] == ["disk-full"], got


def test_a_fix_report_that_the_error_disappears_is_no_complaint():
    assert answer("it disappears after upgrading the driver").exit_code == 0


@pytest.mark.parametrize("line,code", [
    # a Python exception retyped all in lower case: the folded reading names it as the program wrote it
    ("valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. your tesla "
     "v100-sxm2-32gb gpu has compute capability 7.0.", "gpu-arch-lacks-dtype"),
    ("runtimeerror: cuda error: no kernel image is available for execution on the device", "torch-arch-not-supported"),
])
def test_an_exception_line_in_lower_case_is_read_as_written(line, code):
    assert error_shape(line) == "lowered"
    assert codes(answer(line))[:1] == [code], codes(answer(line))


@pytest.mark.parametrize("line", ["stderror: 0.12", "val_error: 0.5", "terror: a film"])
def test_a_metric_or_a_word_ending_in_error_is_no_lowered_exception(line):
    assert error_shape(line) != "lowered"
