"""Error lines as users paste them (issue 8: "no log with an error line answered with 'No known
problem'"), and signatures found through the decorations and line breaks pasting adds.

Every error line below is real text: a library's or tool's own wording (the file that prints it
is named) or a line of a *training* log of tests/corpus/explain/ (its file is named). Every
healthy line is output of a tool that worked (the negative corpus, tests/corpus/negative/, made
by running the tools here, or the tool's source for its summary line).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import bare, error_shape, exception_name, scan_text, undecorate
from test_explain_patterns import MESSAGES

# shape -> real lines that show it
ERROR_LINES = {
    "exception": [
        # an exception type in a sentence (ask-anything-57-not-compiled-cuda-manual-torch.log)
        "While running demo.py, I am able to initialize the various models but get terminated with the "
        "AssertionError.",
        # in backticks after prose (triton-2110-libcuda-not-found-typo.log)
        "pip install -e . no longer works in my H100 on HEAD, it raises  `AssertionError lidcuda.so not found`",
        # after a logger prefix of an unknown shape (torch/distributed/elastic/multiprocessing/errors)
        "[2024-05-01 12:00:00] trainer: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        # dotted type in quotes (c10/cuda/CUDACachingAllocator.cpp raises torch.OutOfMemoryError)
        "the run stops with 'torch.OutOfMemoryError' after 3 steps",
    ],
    "failed": [
        # ninja's message when an edge fails (ninja src/build.cc)
        "ninja: build stopped: subcommand failed.",
        # ninja prints FAILED: before the command of the failed edge
        "FAILED: /tmp/build/temp.linux-x86_64-cpython-311/csrc/causal_conv1d.o",
        # nvidia-container-cli (training: docker run with --gpus)
        "nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device "
        "filters attached to the cgroup",
    ],
    "missing": [
        # dash when a program is not on PATH (training: triton-2878-ldconfig-missing-prose.log family)
        "/bin/sh: 1: ldconfig: not found",
        # glibc's loader (elf/dl-load.c) for a program
        "python: error while loading shared libraries: libpython3.11.so.1.0: cannot open shared object file: "
        "No such file or directory",
        # cuDNN's loader (cudnn_graph: 'Unable to load any of {...}')
        "Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}",
        # pip/_internal/resolution (ask-anything-57-not-compiled-cuda-manual-torch.log)
        "there was a dependency conflict as `No matching distribution found for torch==1.13.1+cu117`",
        # NCCL ENODEV quoted in prose (nccl-799-ib-no-such-device-hca.log)
        "with error No such device --NCCL 2.7.8",
    ],
    "exit": [
        # pip's build failure box (training: pip build logs)
        "  │ exit code: 1",
        # torch/distributed/elastic/multiprocessing/errors/__init__.py, the failure table
        "  exitcode  : -9 (pid: 2345)",
        # GNU make when a recipe fails (src/job.c: '*** [%s] Error %d'); 137 is 128 + SIGKILL
        "make: *** [Makefile:12: all] Error 137",
        # subprocess.CalledProcessError's message
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        # the same in a CI runner's or a user's words (GitHub Actions: 'Process completed with
        # exit code 1'; 'the job had a non-zero exit')
        "The container exited with a non-zero exit code after the first epoch",
        "train.py returned a nonzero exit status",
    ],
    "crash": [
        "Aborted (core dumped)",                     # bash, SIGABRT
        "Bus error (core dumped)",                   # bash, SIGBUS
        "Illegal instruction (core dumped)",         # bash, SIGILL
        "Segmentation fault (core dumped)",          # bash, SIGSEGV
        # torch elastic's failure table when a rank was killed (errors/__init__.py)
        "  traceback : Signal 9 (SIGKILL) received by PID 2345",
        # DataLoader (torch/utils/data/_utils/signal_handling.py; training: *-shm-* logs)
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        "(shm).",
    ],
    "timeout": [
        # torch ProcessGroupNCCL.cpp watchdog (a collective other than all-reduce: no signature names it)
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=BROADCAST, "
        "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.",
        # socket.timeout's message as printed by a download in a training script
        "the rendezvous with node 0 timed out after 900 seconds",
    ],
    "hang": [
        # training logs of the collective-hang family
        "AllReduce hangs",
        "but I find rank 0 will hang when I call ncclcommInitRank and all ranks report the following warning.",
    ],
    "oom": [
        # c10/cuda/CUDACachingAllocator.cpp
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 6.69 MiB is free.",
        # the kernel's OOM killer (mm/oom_kill.c), as dmesg prints it
        "Out of memory: Killed process 2345 (python) total-vm:123456kB, anon-rss:120000kB",
    ],
    "cuda": [
        "cuInit failed: CUDA_ERROR_NO_DEVICE",                           # cuda.h error name
        "cudaGetDeviceCount returned cudaErrorInsufficientDriver",      # driver_types.h error name
    ],
    "symbol": [
        # glibc elf/dl-lookup.c, for a program (not torch's symbols: no signature)
        "python: symbol lookup error: /opt/lib/libfoo.so: undefined symbol: foo_init",
    ],
    "errno": [
        # OSError as a framework logs it, without the exception type at the start
        "Saving checkpoint: [Errno 28] No space left on device",
    ],
    "nccl": [
        # torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr: the result name first
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        # NCCL result names (src/nccl.h.in) inside torch's message
        "RuntimeError: NCCL communicator was aborted on rank 1. Original reason for failure was: "
        "ncclInvalidArgument",
    ],
    "word": [
        # an error word itself, in lines of training logs no logger marked below ERROR
        "I receive error like",                                         # nccl-286-unhandled-system-error-loopback.log
        "Device=0 CANNOT Access Peer Device=3",                          # nccl-257-allreduce-hangs-iommu.log
        "-> unknown error",                                             # nvbio-gpl-7-uvm-module.log
        "But I still get nccl error. BTW, I have 4 A100 GPU.",          # easyr1-228-nccl-shm-ray-runner.log
        "[16:10:43] stdout/ERROR  [2026-08-28|16:10:43|FrontendAPI] ERROR    Backend worker is gone and cannot be "
        "restarted; stopping the API server",                          # freetoken-246-rtx2080ti-shared-memory.log
    ],
    "msvc": [
        # MSVC's tools put a code between the word and the colon (pantheios-4-cl-without-developer-prompt.log;
        # link.exe's LNK2019 in the form Microsoft's error reference gives it)
        "NMAKE : fatal error U1077: 'cl.exe' : return code '0x2'",
        "main.obj : error LNK2019: unresolved external symbol cudaMalloc referenced in function main",
    ],
    "level": [
        # logrus records of docker and the container toolkit (nvidia-docker-1137-driver-error-failed-request.log)
        "ERRO[0001] error waiting for container: context canceled",
        # containerd's logrus text format (the same record shape as the toolkit's runtime hooks)
        'time="2024-05-01T12:00:00Z" level=error msg="failed to create shim task"',
    ],
}

# shape -> the group error_shape names (the soft and hard shapes have their own names)
SHAPE_NAMES = {
    "exception": {"exception", "label"}, "failed": {"failed", "label", "build"}, "missing": {"missing", "label", "shell"},
    "exit": {"exit", "build", "exception"}, "crash": {"crash", "label"}, "timeout": {"timeout"},
    "hang": {"hang"}, "oom": {"oom", "exception"}, "cuda": {"cuda"}, "symbol": {"symbol"}, "errno": {"errno"},
    "nccl": {"nccl", "exception"}, "word": {"word", "level"}, "msvc": {"msvc"}, "level": {"level"},
}

# output of tools that worked: must not read as errors
HEALTHY = [
    # CTest's summary (cmake Source/CTest/cmCTestTestHandler.cxx)
    "100% tests passed, 0 tests failed out of 12",
    # torch's reducer at INFO level (tests/corpus/negative/torchrun-gloo-ddp-cpp-log-info.log)
    "[default0]:[rank0]:[I1201 01:38:57.441926735 reducer.cpp:1228] Reducer: comm-optimized memory allocator "
    "not found, using regular one",
    "[I1201 01:39:00.899076810 TCPStoreLibUvBackend.cpp:1354] [c10d] uv_loop_close failed with:-16 errn:EBUSY "
    "desc:resource busy or locked",
    # NCCL INFO plugin lines of a healthy run (NCCL src/plugin/net.cc)
    "node1:123:456 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
    "node1:123:456 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such "
    "file or directory No plugin found (libnccl-net.so), using internal implementation",
    # lscpu in torch.utils.collect_env (tests/corpus/negative/torch-collect-env-cpu.log)
    "Vulnerability Tsx async abort:           Not affected",
    # gcc flags printed by torch.__config__.show() (negative corpus: torch-triton-transformers-import-noise)
    "  - CXX flags: -ffunction-sections -fdata-sections -fno-math-errno -fno-trapping-math -Werror=format",
    # CMake's configure checks (Modules/CheckLibraryExists.cmake)
    "-- Looking for pthread_create in pthreads - not found",
    # debconf falls back to the next frontend (apt-get in any Dockerfile; /var/log/apt/term.log here)
    "debconf: unable to initialize frontend: Dialog",
    # exit status 0 and 'Killed' in the middle of a sentence are no failure
    "Process finished with exit code 0",
    # stackpeel check --format json (negative corpus)
    '      "failure": null,',
    '    "errors": [],',
    # torch.utils.cpp_extension says what it falls back to
    "Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back to using the "
    "slow distutils backend.",
    "2021-03-01 12:00:00.123456: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Could not "
    "load dynamic library 'libcudart.so.11.0'",
    # error words that name something (tests/corpus/negative: cmake-ninja-ctest-with-warnings,
    # cpu-train-error-metrics, pip-install-c-extension-verbose-warnings)
    "[1/4] /usr/bin/cc -Dfastsum_EXPORTS  -Wall -Wextra -Wno-error=unused-variable "
    "-Werror=implicit-function-declaration -fPIC -c fastsum.c",
    "epoch 1/3 loss 8.7948 | mean absolute error: 1.9604 | root mean squared error 2.4345 | val error rate 0.0703 "
    "| top-1 error = 7.03%",
    "final: train error 0.0293, no errors during training",
    # a warning record with a soft word (pip, WARNING level)
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
    "broken by 'ReadTimeoutError'",
]


@pytest.mark.parametrize("shape, line", [(s, ln) for s, lines in ERROR_LINES.items() for ln in lines])
def test_error_line_is_detected(shape, line):
    # an "error:" label anywhere in the line wins over the shape the rest of it shows
    assert error_shape(line) in SHAPE_NAMES[shape] | {"label"}, (shape, error_shape(line))
    _assert_error(line)


def _assert_error(line):
    """Between two healthy lines, ``line`` is an error: never "No known problem" but a cause,
    a guess or an unknown error, exit 1."""
    expl = explain_text("step 1 loss 0.5\n" + line + "\nstep 2\n")
    assert expl.exit_code == 1 and expl.has_errors, line


def _assert_healthy(line):
    """``line`` has no error shape, and between two healthy lines names nothing, exit 0."""
    assert error_shape(line) is None, (line, error_shape(line))
    expl = explain_text("step 1 loss 0.5\n" + line + "\nstep 2\n")
    assert expl.exit_code == 0 and not expl.candidates and expl.fingerprint is None, line


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_line_is_no_error(line):
    _assert_healthy(line)


#: Lines that are no error line (error_shape holds them back for precision) but that state a
#: failure by the documented rule: alone in a log, they are a *Possible failure* (exit 1), never
#: "No known problem"; next to a real error they are not reported.
HELD_BACK = [
    "The weather hangs over the city",                  # a hang with no GPU word
    # TensorFlow's glog warning without a date, at every start without TensorRT
    # (tensorflow/stream_executor/platform/default/dso_loader.cc)
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("line", HELD_BACK)
def test_held_back_line_is_no_error_line_but_alone_a_possible_failure(line):
    assert error_shape(line) is None, (line, error_shape(line))
    expl = explain_text("step 1 loss 0.5\n" + line + "\nstep 2\n")
    assert expl.exit_code == 1 and expl.suspect_only and not expl.candidates, line
    expl = explain_text("step 1 loss 0.5\n" + line + "\nRuntimeError: CUDA error: out of memory\n")
    assert not expl.suspect_only and line not in [ev.text for ev in expl.unexplained]


def test_exception_name_is_read_back_from_its_end():
    assert exception_name("get terminated with the AssertionError.") == "AssertionError"
    assert exception_name("raises `torch.cuda.OutOfMemoryError` at once") == "torch.cuda.OutOfMemoryError"
    assert exception_name("an Exception handler and an error_rate") is None
    assert exception_name("a UserWarning and DeprecationWarning") is None
    # linear: a 16 KB run of names is looked at a bounded number of times
    assert exception_name("A" + "Error" * 3270 + "!") is not None


def test_truncated_traceback_without_exception_line_is_an_error():
    # a paste cut after the frames (setup.py of a CUDA extension): no exception line at all
    log = ("Traceback (most recent call last):\n  File \"/tmp/pip-install/setup.py\", line 111, in <module>\n"
           "    if bare_metal_version >= Version(\"11.8\"):\n")
    expl = explain_text(log)
    assert expl.exit_code == 1 and expl.exceptions and expl.exceptions[0].truncated
    assert "No known problem" not in str(expl.to_dict())


# -- decorations ------------------------------------------------------------------------

DECORATIONS = {
    "rfc3339": lambda m: "2024-05-01T12:00:00.1234567Z " + m,                        # GitHub Actions raw log
    "cri": lambda m: "2024-05-01T12:00:00.123456789+00:00 stderr F " + m,             # kubectl logs / CRI file
    "cri-rank": lambda m: "2024-05-01T12:00:00Z stdout F [rank3]: " + m,
    "pytest": lambda m: "E       " + m,                                               # pytest's failure lines
    "table": lambda m: "| " + m + " |",                                               # a Markdown table cell
    "nested-quote": lambda m: "> > " + m,                                             # a quoted reply
    "quote-timestamp": lambda m: "> 2024-05-01T12:00:00Z " + m,
}


@pytest.mark.parametrize("deco", list(DECORATIONS))
@pytest.mark.parametrize("code", list(MESSAGES))
def test_message_found_through_every_decoration(code, deco):
    expl = explain_text("epoch 1/10\n" + DECORATIONS[deco](MESSAGES[code]) + "\nexiting\n")
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]


@pytest.mark.parametrize("deco", [d for d in DECORATIONS if d != "pytest"])  # pytest marks no frame with E
def test_traceback_keeps_its_frames_and_exception_through_decorations(deco):
    tb = ["Traceback (most recent call last):", '  File "/app/train.py", line 88, in <module>',
          "    loss = model(batch).loss", "KeyError: 'shard-00017'"]
    r = scan_text("\n".join(DECORATIONS[deco](ln) for ln in tb) + "\n")
    t = r.tracebacks[0]
    assert (t.exc_type, t.message, t.truncated, [f.file for f in t.frames]) == \
        ("KeyError", "'shard-00017'", False, ["/app/train.py"])


@pytest.mark.parametrize("line, rest", [
    ("2024-05-01T12:00:00.123Z stdout F [rank0]: boom", "[rank0]: boom"),
    (">   File \"x\", line 1", "  File \"x\", line 1"),
    ("| RuntimeError: x |", "RuntimeError: x"),
    ("E       RuntimeError: x", "RuntimeError: x"),
    ("2024-05-01 12:00:00,123 INFO x", "2024-05-01 12:00:00,123 INFO x"),   # a logger prefix, not decoration
    ("Error: x", "Error: x"),
])
def test_undecorate(line, rest):
    assert undecorate(line) == rest


def test_bare_strips_decorations_on_both_sides_of_the_stream_prefix():
    assert bare("2024-05-01T12:00:00Z [rank2]: > RuntimeError: x") == ("[rank2]:", "RuntimeError: x")


# -- messages broken before an upper-case word, a path or a number ------------------------

def _breaks(message: str):
    """Every place a terminal or a person may have broken ``message``: before an upper-case
    word, a path or a number (the seam pass rejoins only lower-case continuations)."""
    for m in re.finditer(r" (?=[A-Z/0-9])", message):
        yield message[:m.start()] + "\n" + message[m.end():]


@pytest.mark.parametrize("code", list(MESSAGES))
def test_message_broken_before_an_upper_case_word_or_a_path(code):
    msg = MESSAGES[code]
    broken = list(_breaks(msg))
    for text in broken:
        expl = explain_text("epoch 1/10\n" + text + "\nexiting\n")
        assert code in [c.code for c in expl.candidates][:1], (code, text)


def test_rejoin_of_a_real_wrap_before_upper_case():
    # triton/runtime/build.py's message cut by an 80-column terminal before 'C compiler'
    log = ("RuntimeError: Failed to find\n"
           "C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.\n")
    expl = explain_text(log)
    assert expl.root.code == "no-c-compiler" and expl.root.basis == "signature"
    assert "Failed to find C compiler" in expl.root.evidence[0].text


def test_rejoin_is_bounded_per_log():
    from stackpeel.explain import parser

    sc = parser.LogScanner()
    sc.feed("gcc: error: something odd happened while building the extension module\nNext line\n" * 2000)
    sc.close()
    assert sc._rejoins == parser.MAX_REJOINS


def test_word_wrapped_unexplained_error_keeps_its_own_lines():
    log = textwrap.dedent("""\
        gcc: error: unrecognized command-line option '-mfoo'; did you mean '-mfma'?
        Some unrelated line
        """)
    expl = explain_text(log)
    assert [e.text for e in expl.unexplained][:1] == ["gcc: error: unrecognized command-line option '-mfoo'; did you mean '-mfma'?"]


def test_source_lines_of_a_traceback_are_not_error_lines_of_their_own():
    # the seed's Triton traceback with an exception no entry names: the `raise` line quoted in
    # the frames must not count as a second error (nor change the fingerprint)
    frames = ('Traceback (most recent call last):\n'
              '  File "/venv/lib/python3.12/site-packages/x/build.py", line 32, in _build\n'
              '    raise ValueError("bad value for the build: exit code 2")\n')
    expl = explain_text(frames + "ValueError: bad value for the build: exit code 2\n")
    assert [e.type for e in expl.exceptions] == ["ValueError"]
    assert [e.line for e in expl.unexplained] == [4], expl.unexplained   # the exception line only


def test_a_line_only_a_catch_all_matched_is_joined_with_its_continuation():
    # driver_types.h cudaErrorUnsupportedPtxVersion's string, broken before 'PTX' by a terminal:
    # the first half alone is a bare "CUDA error: <string>" (the catch-all cuda-error-unclassified)
    log = "RuntimeError: CUDA error: the provided\nPTX was compiled with an unsupported toolchain.\n"
    whole = explain_text("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n")
    assert whole.root.code != "cuda-error-unclassified"
    assert explain_text(log).root.code == whole.root.code


def test_torch_elastic_failure_names_no_unrelated_guess():
    # torch/distributed/elastic/multiprocessing/api.py: a rank killed with SIGKILL (exit -9); the
    # module path holds 'multiprocessing', which says nothing about fork
    line = ("torch.distributed.elastic.multiprocessing.api:[ERROR] failed (exitcode: -9) local_rank: 0 "
            "(pid: 4321) of binary: /usr/bin/python3\n")
    expl = explain_text(line)
    assert expl.exit_code == 1 and "cuda-initialized-before-fork" not in expl.codes


def test_watchdog_timeout_names_the_hang_first():
    line = ("[rank1]:[E1201 12:00:00.000000 123 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600012 milliseconds before timing out.\n")
    expl = explain_text(line)
    assert expl.root.code == "collective-hang" and "nccl-p2p-blocked" in expl.root.could_be


@pytest.mark.parametrize("line", [
    # torch missing while building an extension (pip's build isolation), quoted in a sentence
    "When I run `pip install flash-attn` it stops with `ModuleNotFoundError: No module named 'torch'` every time",
    'It says "ModuleNotFoundError: No module named \'torch\'" and stops',
    "The build ends with ModuleNotFoundError: No module named 'torch'.",
])
def test_end_anchored_message_found_inside_prose(line):
    # the signature ends with $ (the module name is the whole message): quoted, it is searched alone
    alone = explain_text("ModuleNotFoundError: No module named 'torch'\n").root.code
    assert explain_text(line + "\n").root.code == alone


# -- the failure lines of the tools GPU users paste output from ------------------------------
#
# Each line is the tool's own wording: printed here by the real tool (tests below run it), a
# line of a *training* log of tests/corpus/explain/ (file named), or the tool's source (named).
TOOL_ERROR_LINES = [
    # pip's resolver (pip/_internal/resolution/resolvelib/factory.py), pip install --no-index here
    "ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from versions: none)",
    "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/",
    "pip._vendor.resolvelib.resolvers.ResolutionImpossible: [RequirementInformation(requirement="
    "SpecifierRequirement('torch==2.1.0'), parent=None)]",
    "error: metadata-generation-failed",                                  # pip/_internal/exceptions.py
    # uv (crates/uv/src/commands/diagnostics.rs, pip/operations.rs)
    "  × Failed to build `flash-attn==2.7.4.post1`",
    "  × No solution found when resolving dependencies:",
    # apt (apt-pkg/cacheset.cc, apt-private/private-install.cc) and dpkg (src/main/errors.c)
    "E: Unable to locate package python3.11-dev",
    "E: Package 'nvidia-driver-550' has no installation candidate",
    "E: Sub-process /usr/bin/dpkg returned an error code (1)",
    "dpkg: error processing package nvidia-dkms-550 (--configure):",
    "Errors were encountered while processing:",
    # conda (conda/exceptions.py) and mamba (libmamba/src/api/install.cpp)
    "PackagesNotFoundError: The following packages are not available from current channels:",
    "LibMambaUnsatisfiableError: Encountered problems while solving:",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://conda.anaconda.org/conda-forge/noarch/repodata.json>",
    "error    libmamba Could not solve for environment specs",
    "critical libmamba Multiple errors occured:",
    # git (builtin/clone.c, http.c)
    "fatal: destination path 'flash-attention' already exists and is not an empty directory.",
    # docker (stable-diffusion-docker-82-no-nvidia-gpu.log, sadtalker-49-nvidia-container-cli-no-sudo.log)
    # and podman with crun (crun src/libcrun/linux.c)
    'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
    "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create "
    "failed: unable to start container process: error during container init",
    "Error: crun: executable file `python` not found in $PATH: No such file or directory: OCI runtime attempted "
    "to invoke a command that was not found",
    # kubectl describe pod / get pods (kubelet pkg/kubelet/kuberuntime, scheduler's FitError)
    "  Warning  BackOff    2m (x5 over 3m)  kubelet  Back-off restarting failed container trainer in pod "
    "train-0_default(1234)",
    "train-0   0/1     CrashLoopBackOff   5 (2m ago)   6m",
    "  Warning  FailedScheduling  12s   default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
    # Slurm: srun, slurmstepd (src/slurmd/slurmstepd/req.c), sacct's State and ExitCode columns
    "srun: error: node01: task 0: Exited with exit code 1",
    "slurmstepd: error: *** JOB 1234 ON node01 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***",
    "1234.0       python     gpu     acct    8  OUT_OF_MEMORY    0:125",
    "1234         train      gpu     acct    8  CANCELLED by 1000      0:0",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    # Ray (python/ray/exceptions.py; easyr1-211-zero-active-drivers-ray.log)
    "ray.exceptions.RayTaskError(RuntimeError): ray::train_fn() (pid=1234, ip=10.0.0.1)",
    "The actor died unexpectedly before finishing this task.",
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
    "the problem, check the logs for the dead worker.",
    # torch elastic's failure table (torch/distributed/elastic/multiprocessing/errors/__init__.py)
    "Root Cause (first observed failure):",
    # Go (runtime/panic.go, runtime/traceback.go)
    "panic: assignment to entry in nil map",
    "goroutine 1 [running]:",
    # Rust (library/std/src/panicking.rs; the thread id is printed since 1.91)
    "thread 'main' panicked at src/main.rs:4:5:",
    "thread 'main' (7270) panicked at p.rs:1:53:",
    # C++ std::terminate (libstdc++ vterminate.cc)
    "terminate called after throwing an instance of 'c10::Error'",
    "  what():  std::bad_alloc",
    "terminate called without an active exception",
    # CMake (colmap-1822-docker-build-native-arch-empty.log; cmake Source/cmake.cxx), GNU make (src/remake.c)
    "CMake Error at /usr/share/cmake-3.22/Modules/CMakeDetermineCompilerId.cmake:726 (message):",
    "-- Configuring incomplete, errors occurred!",
    "make[2]: *** No rule to make target 'csrc/kernel.cu', needed by 'kernel.o'.  Stop.",
    # cmd.exe when a program is not on PATH
    "'nvcc' is not recognized as an internal or external command,",
    # Python's OSError on Windows, its winerror in brackets
    "[WinError 5] Access is denied: 'C:\\\\Users\\\\me\\\\AppData'",
    # a lone exception line whose class lives in a library's exception module (torch/_dynamo/exc.py)
    "torch._dynamo.exc.Unsupported: call_function BuiltinVariable(setattr) [TensorVariable(), ConstantVariable()] {}",
    # a logger's ERROR record (logging's default format, loguru's, a bracketed level)
    "2024-05-01 12:00:00,123 - trainer - ERROR - Evaluation produced NaN loss at step 1200",
    "2024-05-01 12:00:00.123 | ERROR    | train:main:42 - Evaluation produced NaN loss at step 1200",
    "[ERROR] Evaluation produced NaN loss at step 1200",
    # glog's E level (kubectl here, without a server: k8s.io/client-go memcache.go)
    'E1201 09:22:09.628174    7015 memcache.go:265] "Unhandled Error" err="couldn\'t get current server API '
    'group list"',
    "The connection to the server localhost:8080 was refused - did you specify the right host or port?",
    "srun: fatal: Could not establish a configuration source",
    # users' own languages (weclone-85-bf16-t4-chinese.log, dockermonitor-12-nvml-mismatch-ldconfig.log),
    # then "failed" and "error: <message>" in Chinese, Japanese, Korean and Russian as issues write them
    # (the message is Windows' ERROR_MOD_NOT_FOUND text; the "error:" label in each language)
    "使用T4 GPU时报错：需要支持半精度",
    "  - 有同学发现安装完python-dev,python-tk等库后会报驱动不一致的错误``nvidia-smi``无法使用",
    "安装 flash-attn 失败",
    "错误：找不到指定的模块。",
    "エラー: モジュールが見つかりません",
    "오류: 모듈을 찾을 수 없습니다",
    "Ошибка: модуль не найден",
    # shells' job reports (bash jobs.c, printed here by the test below; zsh Src/jobs.c, signames)
    "k.sh: line 2: 18666 Killed                  python3 train.py",
    "zsh: segmentation fault  python train.py",
    "zsh: illegal hardware instruction  python",
    "zsh: killed     python train.py",
    # PyCharm / Windows: STATUS_ACCESS_VIOLATION as a signed and an unsigned exit code
    "Process finished with exit code -1073741819 (0xC0000005)",
    "Process finished with exit code 3221225477",
    # PowerShell when a program is not on PATH
    "python : The term 'python' is not recognized as the name of a cmdlet, function, script file, or operable "
    "program.",
    # Jupyter (notebook's kernel restart dialog, VS Code's Jupyter extension)
    "The kernel appears to have died. It will restart automatically.",
    "The Kernel crashed while executing code in the current cell or a previous cell.",
    # Hydra (hydra/_internal/utils.py) before the exception it caught
    "Error executing job with overrides: ['trainer.devices=8']",
    # wandb's terminal logger at ERROR level
    "wandb: ERROR Run abc123 errored: RuntimeError('CUDA error')",
    # issue-template prose about a quoted message
    "Triton seems to break when using 3.10 as it looks for the headers, but the headers are not in `/local`",
    "When I run `python train.py` it crashes immediately",
    "I get an error when calling `model.generate()`",
    "`import fla` doesn't work on my machine",
]

# the same tools working: their ordinary output must stay quiet
TOOL_HEALTHY = [
    "Successfully installed torch-2.5.1 triton-3.1.0",                       # pip
    "Resolved 42 packages in 1.20s",                                         # uv
    "0 upgraded, 1 newly installed, 0 to remove and 12 not upgraded.",       # apt
    "Unable to find image 'nvidia/cuda:12.4.0-base-ubuntu22.04' locally",   # docker run before a pull
    "Solving environment: done",                                             # conda
    "Cloning into 'flash-attention'...",                                     # git
    "  Normal   Scheduled  12s   default-scheduler  Successfully assigned default/train-0 to node01",
    "train-0   1/1     Running   0          6m",                             # kubectl get pods
    "1234         train      gpu     acct    8  COMPLETED      0:0",         # sacct
    "srun: job 1234 queued and waiting for resources",
    "-- Configuring done (1.2s)",                                            # cmake
    "ninja: no work to do.",
    "make: Nothing to be done for 'all'.",
    "This release fixes a crash in `torch.compile` with dynamic shapes",     # a changelog: no crash now
    "没有错误",                                                               # "no errors"
    "Don't panic: the checkpoint is saved every 500 steps",
    "2024-05-01 12:00:00,123 - trainer - INFO - Evaluation at step 1200: loss 0.5",
    "transformers.logging.set_verbosity(ERROR)",
    "fatal_on_oom: false",
    "Process finished with exit code 0",
    "[1]+  Done                    python train.py",                      # bash's job report, success
]


@pytest.mark.parametrize("line", TOOL_ERROR_LINES)
def test_tool_error_line_is_detected(line):
    assert error_shape(line) is not None, line
    _assert_error(line)


@pytest.mark.parametrize("line", TOOL_HEALTHY)
def test_tool_healthy_line_is_no_error(line):
    _assert_healthy(line)


def test_prose_needs_a_quoted_message():
    # "it crashes" with nothing quoted is a sentence, not a report of a message
    assert error_shape("it crashes") is None
    assert error_shape("it crashes with `the device went away`") == "prose"
    # (a quoted message with a shape of its own is read by that shape: glibc's heap abort)
    assert error_shape("it crashes with `free(): invalid pointer`") == "crash"


# -- the real tools, run here: their failure is an error, their success is not ----------------

def _sh(argv, cwd, env=None):
    import os
    import subprocess

    full = dict(os.environ, LC_ALL="C", **(env or {}))
    full.pop("RUST_BACKTRACE", None)
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=full)
    return p.returncode, p.stdout + p.stderr


def _need(*tools):
    import shutil

    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not on PATH: {missing}")


def _make(tmp):
    _need("make")
    (tmp / "Makefile").write_text("all: missing.o\n")
    (tmp / "ok.mk").write_text("built:\n\ttouch built\n")
    (tmp / "built").write_text("")
    return ["make"], ["make", "-f", "ok.mk"]


def _make_recipe(tmp):
    _need("make")
    (tmp / "Makefile").write_text("all:\n\tfalse\n")
    (tmp / "ok.mk").write_text("all:\n\ttrue\n")
    return ["make"], ["make", "-f", "ok.mk"]


def _link(tmp):
    _need("gcc")
    (tmp / "m.c").write_text("int main(void){return 0;}\n")
    return ["gcc", "m.c", "-lstackpeelnosuchlib", "-o", "m"], ["gcc", "m.c", "-o", "m"]


def _terminate(tmp):
    _need("g++")
    (tmp / "t.cc").write_text('#include <stdexcept>\n#include <cstdio>\nint main(int c, char**){\n'
                              '  try { if (c > 1) throw std::runtime_error("x"); } catch (...) { return 0; }\n'
                              '  throw std::runtime_error("tensor shape mismatch");\n}\n')
    rc, out = _sh(["g++", "t.cc", "-o", "t"], tmp)
    assert rc == 0, out
    return ["./t"], ["./t", "caught"]


def _cmake(tmp):
    _need("cmake")
    for d, body in (("bad", "find_package(StackpeelNoSuch REQUIRED)\n"), ("good", "")):
        (tmp / d).mkdir()
        (tmp / d / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\n{body}")
    return ["cmake", "-S", "bad", "-B", "bad/b"], ["cmake", "-S", "good", "-B", "good/b"]


def _ninja(tmp):
    _need("ninja", "cc")
    (tmp / "build.ninja").write_text("rule cc\n  command = cc -c $in -o $out\nbuild x.o: cc nosuch.c\n")
    (tmp / "ok.ninja").write_text("rule t\n  command = touch $out\nbuild y: t\n")
    rc, out = _sh(["ninja", "-f", "ok.ninja"], tmp)
    assert rc == 0, out
    return ["ninja"], ["ninja", "-f", "ok.ninja"]     # the second run: "ninja: no work to do."


def _git(tmp):
    _need("git")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["git", "init", "-q", "src"], ["git", "-C", "src", "commit", "-q", "--allow-empty", "-m", "x"]):
        rc, out = _sh(argv, tmp, env)
        assert rc == 0, out
    (tmp / "busy").mkdir()
    (tmp / "busy" / "f").write_text("x")
    return ["git", "clone", "src", "busy"], ["git", "clone", "src", "fresh"]


def _apt(tmp):
    _need("apt-get", "dpkg")
    return ["apt-get", "-s", "install", "stackpeel-no-such-package"], ["apt-get", "-s", "install", "dpkg"]


def _dpkg(tmp):
    _need("dpkg")
    return ["dpkg", "-i", str(tmp / "stackpeel-no-such.deb")], ["dpkg", "-s", "dpkg"]


def _pip(tmp):
    import sys

    return ([sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(tmp), "stackpeel-no-such-dist"],
            [sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(tmp), "pip"])


def _rust(tmp):
    _need("rustc")
    (tmp / "p.rs").write_text("fn main(){ let v: Vec<u8> = std::env::args().skip(1).map(|_| 1).collect();"
                              " println!(\"{}\", v[0]); }\n")
    rc, out = _sh(["rustc", "p.rs", "-o", "p"], tmp)
    assert rc == 0, out
    return ["./p"], ["./p", "x"]


def _bash_job(tmp):
    _need("bash")
    import sys

    (tmp / "k.sh").write_text(f"{sys.executable} -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'\n"
                              "exit $?\n")
    (tmp / "ok.sh").write_text(f"{sys.executable} -c 'print(1)'\n")
    return ["bash", "k.sh"], ["bash", "ok.sh"]


@pytest.mark.parametrize("case", [_bash_job, _make, _make_recipe, _link, _terminate, _cmake, _ninja, _git, _apt, _dpkg, _pip,
                                  _rust], ids=lambda f: f.__name__.strip("_"))
def test_real_tool_failure_is_an_error_and_its_success_is_not(case, tmp_path):
    bad, good = case(tmp_path)
    rc, out = _sh(bad, tmp_path)
    assert rc != 0, out                                   # the tool really failed
    expl = explain_text(out)
    assert expl.exit_code == 1 and expl.has_errors, out
    rc, out = _sh(good, tmp_path)
    assert rc == 0, out
    expl = explain_text(out)
    assert expl.exit_code == 0 and not expl.candidates, (out, [e.text for e in expl.unexplained])
