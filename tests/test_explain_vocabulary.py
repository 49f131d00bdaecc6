"""Guesses from words (issue 8, item 3: never silence on an error).

An error line that no knowledge-base signature explains gets a ranked list of the codes its
words implicate (knowledge/vocabulary.toml), marked as a guess: confidence "low", basis
"vocabulary", with the words and lines used; context words anywhere in the log re-rank the
guesses and never add one. The table is data: every code must exist, every pattern compile
and stay linear, and each word is shown implicating its first code on a real line (a
library's or tool's own message; the source is named on each line).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text, vocabulary
from stackpeel.explain.render import render
from stackpeel.knowledge import KnowledgeError, load as load_kb
from ranking import ranking
from test_explain_patterns import MESSAGES, SHAPES

# word id -> a real line in which the word implicates the entry's first code
REAL_LINES = {
    "c-compiler": "error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory",   # setuptools
    "compiler-ran": "x86_64-linux-gnu-gcc: error: unrecognized command-line option '-mno-avx512'",         # gcc
    "compiler-missing": "make: cc: No such file or directory",                                     # GNU make
    "c-headers": "/tmp/x.c:1:10: fatal error: stdio.h: No such file or directory",                 # gcc
    "python-headers": "/tmp/cuda_utils.c:1:10: fatal error: Python.h: No such file or directory",  # gcc in Triton's build
    "nvcc": "error: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",              # torch cpp_extension
    "ptxas": "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",                # ptxas
    "windows-toolchain": "LINK : fatal error LNK1104: cannot open file 'python311.lib'",            # MSVC link.exe
    "extension-build": "ERROR: Failed building wheel for mamba-ssm",                                # pip
    "libcuda": "AssertionError: libcuda.so cannot found!",                                          # Triton <= 2.1
    "ldconfig": "FileNotFoundError: [Errno 2] No such file or directory: '/sbin/ldconfig'",         # Triton driver.py
    "shared-object": "python: error while loading shared libraries: libfoo.so.3: cannot open shared object file",
    "undefined-symbol": "ImportError: /opt/x/ext.so: undefined symbol: cublasLtHSHMatmulAlgoInit",  # glibc dl-lookup
    "torch-abi": "OSError: /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: failed to map segment",
    "libstdcxx": "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found",
    "libc": "ImportError: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by /opt/x/_C.so)",
    "elf-format": "OSError: /opt/x/libfoo.so: wrong ELF class: ELFCLASS32",                          # glibc dl-load
    "ld-library-path": "OSError: LD_LIBRARY_PATH names /usr/local/cuda-11.8/lib64, which does not exist",
    "cuda-libraries": "OSError: libcublasLt.so.12: cannot open shared object file: No such file or directory",
    "cudnn": "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",                             # torch
    "triton-attrs-descriptor": "ImportError: cannot import name 'AttrsDescriptor' from 'triton.backends.compiler' (/usr/lib/python3/site-packages/triton/backends/compiler.py)",  # torch 2.6 + Triton 3.3
    "nvml": "Failed to initialize NVML: Unknown Error",                                              # nvidia-smi
    "nvidia-driver": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    "device-nodes": "open /dev/nvidiactl: operation not permitted: unknown",                        # container runtime
    "uvm": "modprobe: FATAL: Module nvidia-uvm not found in directory /lib/modules/6.8.0-45-generic",
    "permission": "OSError: [Errno 1] Operation not permitted",
    "device-permission": "PermissionError: [Errno 13] Permission denied: '/dev/nvidia0'",
    "triton-cache-permission": "PermissionError: [Errno 13] Permission denied: '/home/u/.triton/cache/ab12'",
    "cuda-init": "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
                 "before calling NumCudaDevices() that might have already set an error?",           # c10/cuda
    "no-gpu": "RuntimeError: No CUDA GPUs are available",                                           # torch/cuda
    "cpu-torch": "ERROR: No matching distribution found for torch==2.1.0+cu121",                    # pip
    "visible-devices": "ValueError: CUDA_VISIBLE_DEVICES=4 names a device this node lacks",
    "gpu-arch": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "driver-too-old": "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
    "mig-mps": "RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server",
    "fabric": "RuntimeError: CUDA error: system not yet initialized (cudaErrorSystemNotReady)",
    "gpu-fault": "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",           # NVRM
    "container-runtime": "docker: Error response from daemon: could not select device driver \"\" with "
                         "capabilities: [[gpu]].",                                                   # docker
    "wsl": "OSError: /usr/lib/wsl/lib/libcuda.so.1: file too short",
    "secure-boot": "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",       # kmod
    "fork": "RuntimeError: CUDA error: initialization error after fork() in a DataLoader worker",
    "torch-import": "ModuleNotFoundError: No module named 'torch'",
    "triton-build": "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmp1/cuda_utils.c', '-O3']' "
                    "returned non-zero exit status 1.",                                              # Triton build.py
    "triton-driver": "RuntimeError: 0 active drivers ([]). There should only be one.",             # Triton driver.py
    "triton-cache": "PermissionError: [Errno 13] Permission denied: '/home/user/.triton/cache/abc'",
    "triton": "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'",
    # kijai/ComfyUI-WanVideoWrapper#875 (training-2026-12-01j)
    "triton-not-present": "the process cannot be initiated because some of the packages are not loaded (Triton)",
    "shared-memory-kernel": "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: "
                            "262144, Hardware limit: 101376.",                                       # Triton errors.py
    "fla": "ImportError: cannot import name 'chunk_gated_delta_rule' from 'fla.ops.gated_delta_rule'",
    "causal-conv1d": "ImportError: causal_conv1d_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
                     "_ZN3c104cuda9SetDeviceEi",
    "mamba": "ModuleNotFoundError: No module named 'selective_scan_cuda'",
    "flash-attn": "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the "
                  "following error: the package flash_attn seems to be not installed.",            # transformers
    "xformers": "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs: "
                "xformers built without CUDA",
    "bitsandbytes": "RuntimeError: bitsandbytes: libbitsandbytes_cuda121.so: cannot open shared object file",
    "onnxruntime": "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.",     # onnxruntime
    "compile": "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: CalledProcessError",
    "transformers-fast-path": "The fast path is not available because one of the required library is not "
                              "installed. Falling back to torch implementation.",                   # transformers
    "shm": "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
           "memory (shm).",                                                                          # torch
    "dataloader-worker": "RuntimeError: DataLoader worker (pid 1234) is killed by signal: Killed.",
    "bus-error": "Bus error (core dumped)",
    "killed": "Killed",                                                                             # bash, SIGKILL
    "native-crash": "Fatal Python error: Segmentation fault",                                       # faulthandler
    "nccl": "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid argument",
    "infiniband": "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<34567> with error 12, opcode 0, len 0",
    "socket": "NCCL WARN socketStartConnect: Connect to 10.0.0.2<45678> failed : Software caused connection "
              "abort; Connection refused",
    "rendezvous": "torch.distributed.DistNetworkError: The client socket has timed out after 900s while "
                  "trying to connect to (10.0.0.1, 29500). MASTER_ADDR unreachable",
    "collective-timeout": "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
                          "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 ms",
    "memlock": "NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",           # net_ib.cc
    "enomem": "OSError: [Errno 12] Cannot allocate memory",                                        # os.fork, strerror(ENOMEM)
    # training log nccl-210-socket-address-family.log (a user's words: no library prints a hang)
    "hang": "but I find rank 0 will hang when I call ncclcommInitRank and all ranks report the following warning.",
    # torch/multiprocessing/spawn.py ProcessExitedException
    "process-died": "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 1",
    # training logs of training-2026-12-01i (kbgrow3): a bare errno (pytorch-biggraph-99), users'
    # words for the +cpu build (pytorch-168065) and for a run on the CPU (pytranscriber-56)
    "connect-errno": 'Distributed job on slurm cluster fails with "RuntimeError: No route to host"',
    "cpu-build-named": "Hi, noticing that trying to `pip install torch` resulted in the CPU version of torch stable.",
    "gpu-not-used": "Whisper does not invoke the GPU; it uses the CPU instead",
    # training threads of training-2026-12-01l (kbgrow6): users' words for hangs, OOM, ports
    "hang-late-in-epoch": "When training llama2-7B, it gets stuck at the end of the first epoch without any bugs.",  # DeepSpeed#4367
    "hang-at-init": "NODE_RANK causes DDP jobs to hang at `initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8`",  # Lightning#5651
    "nccl-hangs-gloo-works": "tried to run the following code, stuck with backend `nccl`, but works with `gloo`:",  # transformers#28280
    "gpu-oom-word": "FSDP SFT deepseekv2-prover7B OOM on 8*RTX3080",  # trl#3436
    "ports-blocked": "Failed to launch PyTorch DDP script on ray clusters when exposed ports on nodes are limited",  # torchx#540
}


def test_the_table_loads_and_every_code_exists():
    vocab = vocabulary.load()
    codes = load_kb().codes
    assert len(vocab.words) >= 40 and len(vocab.contexts) >= 8
    assert all(c in codes for c in vocab.codes())
    assert all(w.source.strip() for w in vocab.words) and all(c.source.strip() for c in vocab.contexts)


def test_every_word_has_a_real_line():
    assert set(REAL_LINES) == {w.id for w in vocabulary.load().words}


@pytest.mark.parametrize("word_id", sorted(REAL_LINES))
def test_word_implicates_its_first_code_on_a_real_line(word_id):
    vocab = vocabulary.load()
    word = next(w for w in vocab.words if w.id == word_id)
    assert word.search(REAL_LINES[word_id]), (word_id, REAL_LINES[word_id])
    guesses = vocabulary.guess([(1, REAL_LINES[word_id], "", 1.0)], {}, {}, vocab)
    got = {g.code: g for g in guesses}
    assert word.codes[0] in got or len(guesses) == vocabulary.MAX_GUESSES, [g.code for g in guesses]
    if word.codes[0] in got:
        assert word_id in [w for w, _ in got[word.codes[0]].words]


@pytest.mark.parametrize("table, needle", [
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-such-code"], "source": "s"}]}, "unknown code"),
    ({"word": [{"id": "x", "patterns": ["gc("], "codes": ["no-c-compiler"], "source": "s"}]}, "bad regex"),
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-c-compiler"]}]}, "source is required"),
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-c-compiler"], "source": "s", "weight": 5}]},
     "weight"),
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-c-compiler"], "source": "s", "colour": 1}]},
     "unknown field"),
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-c-compiler"], "source": "s"},
               {"id": "x", "patterns": ["cc1"], "codes": ["no-c-compiler"], "source": "s"}]}, "already used"),
    ({"context": [{"id": "y", "words": [], "codes": ["no-c-compiler"], "source": "s"}]}, "non-empty list"),
    ({"word": [{"id": "x", "patterns": ["gcc"], "codes": ["no-c-compiler", "no-c-compiler"], "source": "s"}]},
     "listed twice"),
    ({"words": []}, "unknown top-level"),
])
def test_a_bad_table_is_refused_with_the_entry_named(table, needle):
    with pytest.raises(KnowledgeError) as err:
        vocabulary.parse(table, load_kb().codes)
    assert needle in str(err.value) and "vocabulary.toml" in str(err.value)


_PROBE = r'''
import json, sys, time
from stackpeel.explain import vocabulary
shapes = json.loads(sys.stdin.read())
worst = []
for w in vocabulary.load().words:
    for p in w.patterns:
        for name, line in shapes.items():
            t = time.perf_counter(); p.search(line); worst.append((time.perf_counter() - t, name, p.pattern))
worst.sort(reverse=True)
print(json.dumps(worst[:5]))
'''


def test_every_pattern_is_linear_on_adversarial_lines():
    """Each vocabulary regex on the 25 adversarial 16 KB lines of test_explain_patterns (the
    slowest search measured: about 1 ms; budget 0.25 s each, the process is killed at 60 s)."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {src!r})\n" + _PROBE],
                         input=json.dumps(SHAPES), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    slow = [w for w in json.loads(out.stdout) if w[0] > 0.25]
    assert not slow, slow


# -- explain's answer ------------------------------------------------------------------------

# a failure no signature names (a gcc error about an option), with words of the stack
UNKNOWN = ("building 'selective_scan_cuda' extension\n"
           "x86_64-linux-gnu-gcc: error: unrecognized command-line option '-mno-avx512'\n"
           "ninja: build stopped: subcommand failed.\n")


def test_an_unexplained_error_gets_ranked_guesses_not_silence():
    expl = explain_text(UNKNOWN)
    assert expl.candidates and all(c.basis == "vocabulary" and c.confidence == "low" for c in expl.candidates)
    # gcc printed the error itself: it exists and ran, so a broken compiler outranks a missing one
    assert [c.code for c in expl.candidates][:2] == ["c-compiler-broken", "no-c-compiler"]
    assert ("compiler-ran", "x86_64-linux-gnu-gcc: error:") in expl.root.words
    assert expl.root.evidence and expl.root.evidence[0].line == 2
    assert expl.fingerprint and expl.exit_code == 1
    assert any("guessed from their words" in n for n in expl.notes)


def test_json_carries_confidence_basis_and_words_where_the_bench_ranks():
    d = json.loads(render(explain_text(UNKNOWN), "json"))
    c = d["candidates"][0]
    assert (c["confidence"], c["basis"]) == ("low", "vocabulary")
    assert {"word": "c-compiler", "text": "x86_64-linux-gnu-gcc"} in c["words"]
    assert d["root_cause"] == "c-compiler-broken" and d["fingerprint"]
    assert ranking(d)[:2] == ["c-compiler-broken", "no-c-compiler"]
    # a signature match says so
    seed = json.loads(render(explain_text(MESSAGES["no-c-compiler"] + "\n"), "json"))
    assert (seed["candidates"][0]["basis"], seed["candidates"][0]["confidence"]) == ("signature", "stated")


def test_text_says_it_is_a_guess_shows_the_lines_and_what_to_run():
    text = render(explain_text(UNKNOWN, source="build.log"), "text")
    assert "Unknown error: no known message matches it (fingerprint" in text
    assert "Possible causes, guessed from the words of the error lines (low confidence):" in text
    assert "  1. c-compiler-broken [toolchain]" in text and "'x86_64-linux-gnu-gcc'" in text
    assert "Error lines the guess is made from:" in text and "line 2: x86_64-linux-gnu-gcc: error" in text
    assert "\n    stackpeel check\n" in text and "stackpeel check --only toolchain.c_compiler" in text
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("    stackpeel"))
    md = render(explain_text(UNKNOWN), "markdown")
    assert "**Unknown error**" in md and "low confidence" in md and "`c-compiler-broken`" in md
    assert "guess (low confidence)" in render(explain_text(UNKNOWN), "html")


def test_context_re_ranks_guesses_and_never_adds_one():
    # torch ProcessGroupNCCL.cpp (broadcastUniqueNCCLID) when the rank-0 store went away, cut at the
    # terminal's edge before the words its signature (c10d-store-wait-timeout, harvf) reads
    line = ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId "
            "from [0] via c10d\n")
    alone = explain_text(line)
    assert alone.root.basis == "vocabulary" and alone.root.code == "collective-rendezvous-unreachable"
    in_docker = explain_text("docker run --gpus all -it my/image\n" + line)
    codes = [c.code for c in in_docker.candidates]
    assert all(c.basis == "vocabulary" for c in in_docker.candidates)
    assert codes.index("nccl-shm-too-small") < [c.code for c in alone.candidates].index("nccl-shm-too-small")
    assert "container" in dict((c.code, c.context) for c in in_docker.candidates)["nccl-shm-too-small"]
    # docker's own codes (device nodes, the toolkit) are not guessed: no word of the error names them
    assert "device-nodes-missing" not in codes and "container-toolkit-missing" not in codes


def test_no_word_of_the_stack_is_an_unknown_error_without_guesses():
    expl = explain_text("Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'k'\n")
    assert expl.candidates == () and expl.fingerprint and expl.exit_code == 1


def test_a_signature_match_is_never_mixed_with_guesses():
    log = "gcc: error: unrecognized option\n" + MESSAGES["no-c-compiler"] + "\n"
    assert all(c.basis != "vocabulary" for c in explain_text(log).candidates)


def test_frames_of_an_unexplained_traceback_are_words_at_half_weight():
    log = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.11/site-packages/triton/runtime/build.py", line 48, in _build\n'
           "    subprocess.check_call(cc_cmd)\n"
           "OSError: something odd\n")
    expl = explain_text(log)
    assert expl.root.basis == "vocabulary" and expl.root.code == "no-c-compiler"
    guess = vocabulary.guess([(4, "OSError: something odd", "", 1.0),
                              (4, "/venv/lib/python3.11/site-packages/triton/runtime/build.py:48 in _build", "",
                               vocabulary.FRAME_FACTOR)], {}, {}, vocabulary.load())
    assert guess[0].score == 2 * vocabulary.FRAME_FACTOR


NEGATIVE = sorted((Path(__file__).parent / "corpus" / "negative").glob("*.log"))


@pytest.mark.parametrize("path", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_healthy_log_has_no_error_line_and_no_guess(path):
    """The healthy runs of tests/corpus/negative/ (pip installs, CPU training, collect_env,
    stackpeel check, torchrun with gloo, a ninja build of a torch extension ...) hold no
    error line: 'No known problem', exit 0, nothing guessed."""
    body = path.read_text(encoding="utf-8").split("# ---\n", 1)[1]
    expl = explain_text(body)
    assert expl.exit_code == 0 and not expl.unexplained and not expl.candidates, \
        [e.text[:120] for e in expl.unexplained]


def test_a_guess_confirmed_live_becomes_the_root_cause(nocc_env):
    """The real engine and the real toolchain check, on a PATH with no C compiler: the guess
    from the words of the shell's error is confirmed and shown as the root cause."""
    from stackpeel.explain.live import confirm

    log = "/bin/sh: 1: gcc: not found\n"          # dash, when make or a build script runs gcc
    expl = explain_text(log)
    assert expl.root.code == "no-c-compiler" and expl.root.basis == "vocabulary"
    out = confirm(expl, python=sys.executable, env=nocc_env, known={"toolchain.c_compiler"})
    assert out.live.ran and out.root.code == "no-c-compiler" and out.root.live.verdict == "confirmed"
    text = render(out, "text")
    assert text.splitlines()[2].startswith("Root cause (guessed from words, confirmed live): no-c-compiler")
    assert "stackpeel check --only toolchain.c_compiler" in text


def test_a_truncated_traceback_is_guessed_from_its_frames():
    # a paste cut before the exception line: only the frames say where it failed
    log = ("Traceback (most recent call last):\n"
           '  File "/app/train.py", line 88, in <module>\n'
           "    loss = model(batch).loss\n"
           '  File "/venv/lib/python3.12/site-packages/triton/runtime/build.py", line 32, in _build\n')
    expl = explain_text(log)
    assert expl.exceptions[0].truncated and expl.root.basis == "vocabulary"
    assert expl.root.code == "no-c-compiler" and ("triton-build", "triton/runtime/build.py") in expl.root.words
