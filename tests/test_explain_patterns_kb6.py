"""Issue 8 item 2 (kb6): knowledge for the layers users of GPU stacks hit around the core stack,
harvested from the programs' own sources (docs/dev/coverage-audit.md, "kb6", lists every message
and the code it maps to): torch.compile (Dynamo's Python-version guards, Inductor's C++/OpenMP
compile), torch.distributed beyond NCCL (env:// rendezvous, gloo, torchelastic's and DeepSpeed's
exit-code tables), cluster schedulers (Slurm GRES, Ray), installing and linking the stack (uv,
`-lcudart`), precision features (FP8 on GPUs before sm_89, cuBLASLt too old for Ada's FP8,
FlashAttention's head-size limit), and Docker's runtime registry.

Each message is the program's own wording where its source raises or prints it (the signature's
``source`` names the file); several are reproduced here for real (torchrun workers killed by
signals, init_process_group without a launcher, gloo with a missing interface, torch.compile with
omp.h hidden by a bind mount, gcc linking -lcudart) and explain must name the cause from the real
output. Healthy lines the same programs print must name nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from ranking import ranking
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    # -- new codes
    "openmp-missing": [
        # gcc / clang on torch/include/torch/csrc/inductor/cpp_prefix.h's '#include <omp.h>'
        "/venv/lib/python3.11/site-packages/torch/include/torch/csrc/inductor/cpp_prefix.h:4:10: fatal error: "
        "omp.h: No such file or directory",
        "/opt/venv/lib/python3.12/site-packages/torch/include/torch/csrc/inductor/cpp_prefix.h:4:10: fatal error: "
        "'omp.h' file not found",
        # torch/_inductor/cpp_builder.py _run_compile_cmd (macOS)
        "OpenMP support not found. Please try one of the following solutions:",
        "/usr/bin/ld: cannot find -lgomp: No such file or directory",
    ],
    "torch-compile-python-unsupported": [
        # torch/__init__.py (2.13); torch/_dynamo/eval_frame.py check_if_dynamo_supported (2.0-2.5)
        "RuntimeError: torch.compile is not supported on Python 3.15+",
        "RuntimeError: Python 3.12+ not yet supported for torch.compile",
        "RuntimeError: Dynamo is not supported on Python 3.13+",
        "RuntimeError: Windows not yet supported for torch.compile",
        "RuntimeError: torch.compile is not supported on Python < 3.13.3 built with GIL disabled. Please use "
        "Python 3.13.3+.",
    ],
    "distributed-launch-env-missing": [
        # torch/distributed/rendezvous.py _env_rendezvous_handler
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
        "expected, but not set",
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
        "expected, but not set",
        # a training script's int(os.environ["LOCAL_RANK"]) under plain python
        "KeyError: 'LOCAL_RANK'",
    ],
    "launcher-worker-failed": [
        # torch/distributed/elastic/multiprocessing/api.py and errors/__init__.py
        "E1201 13:50:19.733000 18067 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
        "local_rank: 0 (pid: 18099) of binary: /venv/bin/python",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        # (a rank killed by SIGBUS ranks nccl-shm-too-small first: test_explain_patterns_kbgrow6.py)
        "  exitcode  : -11 (pid: 17893)  (SIGSEGV)",
        "  traceback : Signal 6 (SIGABRT) received by PID 17968",
        # DeepSpeed launcher/launch.py sigkill_handler
        "[2024-03-01 10:00:34,590] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
        "'--local_rank=0'] exits with return code = 1",
        # accelerate 1.15 commands/launch.py simple_launcher (subprocess.CalledProcessError of the python child)
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', '--bf16']' returned non-zero exit "
        "status 1.",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # Slurm src/common/slurm_errno.c ESLURM_INVALID_GRES
        "srun: error: Unable to create step for job 53054263: Invalid generic resource (gres) specification",
        "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification",
        # Ray: the autoscaler's event as logs print it; ray 2.58 autoscaler (v1, v2) and raylet
        "Error: No available node types can fulfill resource request {'GPU': 1.0}. Add suitable node types to this "
        "cluster to resolve this issue.",
        "No available node types can fulfill resource requests {'CPU': 1.0, 'GPU': 8.0}*1. Add suitable node types "
        "to this cluster to resolve this issue.",
        "The lease 0a1b2c cannot be scheduled right now. It requires {GPU: 1.000000} for placement, however the "
        "cluster currently cannot provide the requested resources.",
        "(autoscaler +9m40s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0, "
        "'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating fewer "
        "actors or adding more nodes to this Ray cluster.",
    ],
    "cuda-link-library-missing": [
        # GNU ld (binutils >= 2.39 adds ': No such file or directory'); the conda toolchain's ld; MSVC link
        "/usr/bin/ld: cannot find -lcudart: No such file or directory",
        "../../x86_64-conda-linux-gnu/bin/ld: cannot find -lcudart: No such file or directory",
        "/usr/bin/ld: cannot find -lcublas",
        "/usr/bin/ld: cannot find -lnvrtc",
        "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'",
    ],
    "cuda-math-library-too-old-for-gpu": [
        # TransformerEngine transformer_engine/pytorch/fp8.py check_fp8_support
        "AssertionError: CublasLt version 12.1.3.x or higher required for FP8 execution on Ada.",
        "AssertionError: Cuda version 12.1 or higher required for FP8 execution on Ada.",
    ],
    "docker-nvidia-runtime-not-registered": [
        # moby: runtime lookup (Docker >= 20.10), and the older wording
        "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
        "docker: Error response from daemon: Unknown runtime specified nvidia.",
        "Error response from daemon: unknown or invalid runtime name: nvidia",
    ],
    "cuda-graph-capture-unsupported": [
        # CUDA runtime error strings (cudaErrorStreamCaptureUnsupported / Invalidated / CapturedEvent)
        # through torch, SGLang, NCCL's CUDACHECK and HIP
        "RuntimeError: CUDA error: operation not permitted when stream is capturing",
        "Capture cuda graph failed: CUDA error: operation failed due to a previous error during capture",
        "10-64-29-12:20967:20967 [1] dev_runtime.cc:591 NCCL WARN Cuda failure 'operation not permitted when stream "
        "is capturing'",
        "HIP error: operation not permitted on an event last recorded in a capturing stream",
    ],
    "flash-attn-head-dim-unsupported": [
        # flash-attention csrc/flash_attn/flash_api.cpp and its CK (ROCm) build
        "RuntimeError: FlashAttention forward only supports head dimension at most 256",
        "RuntimeError: CK FlashAttention backward only supports head dimension at most 256",
    ],
    # -- signatures added to existing codes
    "gpu-arch-lacks-dtype": [
        # torch's _scaled_mm check; TransformerEngine; transformers' FP8 and MXFP4 quantizers (raise)
        "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or "
        "ROCm MI300+",
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
        "ValueError: FP8 quantized models is only supported on GPUs with compute capability >= 9.0 (e.g H100)",
        "ValueError: MXFP4 quantization is only supported on GPUs with compute capability >= 7.5 (e.g T4, A100, L4, "
        "H100, or B200) or XPUs (e.g Intel\u00ae Data Center GPU Max Series) or CPU",
    ],
    "env-nccl-socket-ifname-no-match": [
        # gloo/transport/tcp/device.cc lookupAddrForIface
        "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:84] "
        "ifa != nullptr. Unable to find address for: eth9",
    ],
    "host-oom-killed": [
        "[2023-11-28 10:00:34,590] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
        "'finetune.py', '--local_rank=0'] exits with return code = -9",
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' died with <Signals.SIGKILL: 9>.",
    ],
    "torch-cuda-unavailable": [
        # lightning 2.6 trainer/connectors/accelerator_connector.py with accelerator="cuda"
        "lightning.fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your "
        "system since the accelerator is not available. The following accelerator(s) is available and can be "
        "passed into `accelerator` argument of `Trainer`: ['cpu'].",
        # ATen/Dispatch.h for a CPU kernel without float16: a float16 model left on the CPU
        "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
        "NotImplementedError: \"cholesky_cpu\" not implemented for 'Half'",
        "RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half'",
    ],
    "kernel-library-not-installed": [
        # accelerate 1.15 utils/launch.py with --mixed_precision fp8
        "RuntimeError: FP8 is not available on this machine. Please ensure that either Transformer Engine, MSAMP or "
        "torchao is installed.",
    ],
    "package-no-matching-wheel": [
        # uv's resolver
        "  \u2570\u2500\u25b6 Because there is no version of torch==2.1.0+cu118 and you require torch==2.1.0+cu118, we "
        "can conclude that your requirements are unsatisfiable.",
    ],
    "cuda-error-unclassified": [
        # torch's cuFFT status (a symptom: cuFFT 11.7 on Ada, or memory)
        "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
    ],
}

NEW_ROOTS = ["openmp-missing", "torch-compile-python-unsupported", "distributed-launch-env-missing",
             "scheduler-gpu-request-unsatisfiable", "cuda-link-library-missing", "cuda-math-library-too-old-for-gpu",
             "docker-nvidia-runtime-not-registered", "flash-attn-head-dim-unsupported",
             "cuda-graph-capture-unsupported"]



def _wrap_limit(msg, wrapper):
    """No limit is left: a long DeepSpeed line whose exit code a word-wrapping editor moves alone
    onto the next line ('exits with return code =' / '1') is read as its paragraph
    (parser.soft_wrap_paragraph, session 20)."""
    # (MXFP4's raise and transformers' warning differ only in their last words; cut at 80 columns
    # they are told apart since the scanner re-joins a terminal's cuts and a word-wrap's seams)
    return None


test_library_message_in_every_wrapper, test_every_message_matches_a_signature_of_its_code = \
    family_tests(FAMILIES, skip=_wrap_limit)

HEALTHY = [
    # notices the same programs print on runs that work
    "W1201 13:50:10.100000 17834 torch/distributed/run.py:852] Setting OMP_NUM_THREADS environment variable for "
    "each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for "
    "optimal performance in your application as needed.",
    "I1201 13:50:11.000000 17834 torch/distributed/elastic/agent/server/api.py:525] [default] Starting worker group",
    "[2024-03-01 10:00:34,590] [INFO] [launch.py:347:main] Process 12345 exits successfully.",
    "[2024-03-01 10:00:00,000] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch "
    "--world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_addr=127.0.0.1 --master_port=29500 train.py",
    "[W socket.cpp:697] [c10d] The client socket has connected to [localhost]:29500 on [localhost]:43222.",
    "The following values were not passed to `accelerate launch` and had defaults used instead:",
    "\t`--num_processes` was set to a value of `1`",
    "(autoscaler +2s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set "
    "RAY_SCHEDULER_EVENTS=0.",
    "srun: job 53054263 queued and waiting for resources",
    "#SBATCH --gres=gpu:a100:4",
    "MXFP4 quantization is only supported on GPUs with compute capability >= 7.5 (e.g T4, A100, L4, H100, or B200) "
    "or XPUs (e.g Intel\u00ae Data Center GPU Max Series). We will default to dequantizing the model to bf16.",
    "FP8 quantized models is only supported on GPUs with compute capability >= 8.9 (e.g 4090/H100), actual = `8.6`. "
    "We will default to dequantizing the model to bf16. Feel free to use a different quantization method like "
    "bitsandbytes or torchao",
    "WARNING 05-01 12:00:00 custom_all_reduce.py:134] Custom allreduce is disabled because your platform lacks GPU "
    "P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu121",
    "Successfully installed torch-2.5.1+cu121",
    "Runtimes: io.containerd.runc.v2 nvidia runc",
    "g++ -shared -fopenmp build/x.o -L/usr/local/cuda/lib64 -lcudart -o x.so",
    "tensor(66.8233)",
    "skipping cudagraphs due to mutated inputs (1 instances). Found from :",
    "INFO 05-01 12:00:00 [gpu_model_runner.py:2000] Graph capturing finished in 12 secs, took 0.45 GiB",
]

test_healthy_lines_of_the_harvested_programs_name_nothing = healthy_test(HEALTHY)


test_new_code_is_sourced_and_says_what_to_do = sourced_roots_test(NEW_ROOTS)


def test_launcher_worker_failed_is_a_symptom_with_ranked_causes():
    kb = load_kb()
    entry = kb.get("launcher-worker-failed")
    assert entry.kind == "symptom" and entry.caused_by[0] == "host-oom-killed"
    assert entry.source and entry.links and all(sig.source for sig in entry.logs)


def test_proposed_names_now_have_entries():
    """SPLIT.toml's proposed names have knowledge-base entries now (written from sources, docs and
    training threads only), and none is left on the proposed list."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    split = tomllib.loads((Path(__file__).resolve().parent / "corpus" / "explain" / "SPLIT.toml")
                          .read_text(encoding="utf-8"))
    kb = load_kb()
    names = ["cuda-link-library-missing", "cuda-math-library-too-old-for-gpu", "docker-nvidia-runtime-not-registered",
             "gpu-peer-access-unsupported"]
    for name in names:
        assert name not in split["codes"]["proposed"]
    for name in names[:3]:
        assert kb.get(name).code == name
    # the same cause as an existing code: an alias, as docs/dev/KNOWLEDGE.md asks
    assert kb.get("gpu-peer-access-unsupported").code == "nccl-p2p-blocked"


def test_cufft_internal_error_ranks_the_old_cufft_when_the_log_shows_an_ada_gpu_and_cu117():
    """CUFFT_INTERNAL_ERROR alone does not tell an old cuFFT on Ada from memory; the GPU and torch's
    CUDA printed in the same log (collect_env) do."""
    line = "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n"
    alone = explain_text(line)
    assert alone.root.code == "cuda-error-unclassified"
    assert alone.root.could_be[:2] == ("cuda-math-library-too-old-for-gpu", "gpu-out-of-memory") or \
        set(alone.root.could_be[:2]) == {"cuda-math-library-too-old-for-gpu", "gpu-out-of-memory"}
    env = ("CUDA used to build PyTorch: 11.7\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n")
    hinted = explain_text(env + line)
    assert hinted.root.code == "cuda-math-library-too-old-for-gpu" and hinted.root.confidence == "inferred"


def test_docker_runtime_name_is_not_the_missing_driver_libraries():
    """Docker refusing the runtime name is its daemon's configuration, not a container without the
    driver's libraries (container-toolkit-missing, which keeps the hook's missing executables)."""
    expl = explain_text("docker: Error response from daemon: unknown or invalid runtime name: nvidia.\n")
    assert expl.root.code == "docker-nvidia-runtime-not-registered"
    hook = ('OCI runtime create failed: container_linux.go:349: starting container process caused "exec: '
            '\\"nvidia-container-runtime-hook\\": executable file not found in $PATH": unknown\n')
    assert explain_text(hook).root.code == "container-toolkit-missing"


# -- real processes: the messages as the programs print them here ---------------------------------------

def _explain_json(text: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", "-"],
                         input=text, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, (out.returncode, out.stderr[-1000:])
    return json.loads(out.stdout)


_DIE = textwrap.dedent("""
    import os, signal, sys
    how = sys.argv[1]
    if how == "exit":
        raise SystemExit(3)
    if how == "env":
        for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
            os.environ.pop(k, None)
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="env://")
    os.kill(os.getpid(), getattr(signal, how))
""")


def _torchrun(stack_python: str, tmp_path: Path, how: str) -> str:
    script = tmp_path / "worker.py"
    script.write_text(_DIE, encoding="utf-8")
    # (TMPDIR: torchrun's agent leaves its torchelastic_* folders there, not in /tmp)
    proc = subprocess.run([stack_python, "-m", "torch.distributed.run", "--nproc-per-node", "1", str(script), how],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert proc.returncode != 0
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("how,first,causes", [
    # the rank itself died of SIGBUS: its /dev/shm buffers, NCCL's first (kbgrow6; a DataLoader
    # worker's SIGBUS is reported by the main process as 'killed by signal: Bus error' and exit 1)
    ("SIGBUS", "nccl-shm-too-small", ["dataloader-shm-too-small"]),
    ("SIGSEGV", "launcher-worker-failed", ["library-loaded-twice", "extension-torch-mismatch"]),
    ("SIGKILL", "host-oom-killed", []),
    ("exit", "launcher-worker-failed", ["host-oom-killed"]),
    ("env", "distributed-launch-env-missing", []),
])
def test_real_torchrun_worker_failures(stack_python, tmp_path, how, first, causes):
    """torchrun (the stack venv's torch) with one worker that dies by a signal, exits 3, or calls
    init_process_group with the launcher's variables removed: the ChildFailedError table is a
    symptom whose signal ranks its causes; a worker's own error outranks the table."""
    log = _torchrun(stack_python, tmp_path, how)
    assert "ChildFailedError" in log, log[-2000:]
    report = _explain_json(log)
    ranked = ranking(report)
    assert ranked[:1] == [first], (ranked, log[-1500:])
    for cause in causes:
        assert cause in ranked[:5], (cause, ranked)


_DIST = textwrap.dedent("""
    import os, socket, sys
    import torch.distributed as dist
    if sys.argv[1] == "env":
        for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
            os.environ.pop(k, None)
        dist.init_process_group("gloo", init_method="env://")
    elif sys.argv[1] in ("timeout", "inuse"):
        import datetime
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        if sys.argv[1] == "timeout":
            s.close()  # nobody serves the store: the client times out
        else:
            s.listen()  # somebody holds the port: the server cannot listen
        dist.TCPStore("127.0.0.1", port, 2, sys.argv[1] == "inuse", timeout=datetime.timedelta(seconds=3))
    else:
        os.environ["GLOO_SOCKET_IFNAME"] = "stackpeel-no-such-if0"
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
""")


@pytest.mark.parametrize("case,code", [("env", "distributed-launch-env-missing"),
                                       ("ifname", "env-nccl-socket-ifname-no-match"),
                                       ("timeout", "collective-rendezvous-unreachable"),
                                       ("inuse", "rendezvous-port-in-use")])
def test_real_process_group_init_failures(stack_python, tmp_path, case, code):
    """init_process_group and the c10d store for real: started without a launcher (no RANK), gloo
    told to use an interface this machine does not have (GLOO_SOCKET_IFNAME), a store client with
    no server (a 3 s timeout), a store server on a port another socket holds (EADDRINUSE)."""
    script = tmp_path / "dist.py"
    script.write_text(_DIST, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    proc = subprocess.run([stack_python, str(script), case], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    report = _explain_json(proc.stderr)
    assert [c["code"] for c in report["candidates"]][:1] == [code], (report["candidates"][:2], proc.stderr[-1500:])


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_real_link_against_cudart_without_the_toolkit_libraries(tmp_path):
    """gcc linking -lcudart where no libcudart.so is on the linker's path (this machine has no CUDA
    toolkit libraries; LIBRARY_PATH cleared): ld's own error names the cause."""
    src = tmp_path / "m.c"
    src.write_text("int main(void) { return 0; }\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "LIBRARY_PATH"}
    env["LC_ALL"] = "C"
    proc = subprocess.run(["gcc", str(src), "-lcudart", "-o", str(tmp_path / "m")], capture_output=True, text=True,
                          timeout=120, env=env)
    if proc.returncode == 0:
        pytest.skip("this machine has a libcudart.so on the linker's path")
    assert "cannot find -lcudart" in proc.stderr
    report = _explain_json(proc.stderr)
    assert [c["code"] for c in report["candidates"]][:1] == ["cuda-link-library-missing"], report["candidates"][:2]


def _omp_dir():
    out = subprocess.run(["gcc", "-print-file-name=include/omp.h"], capture_output=True, text=True, timeout=60)
    path = Path(out.stdout.strip())
    return path.parent if path.is_absolute() and path.exists() else None


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("unshare") is None or os.geteuid() != 0,
                    reason="needs gcc, unshare and root for a private bind mount")
def test_real_torch_compile_without_omp_h(stack_python, tmp_path):
    """torch.compile of a CPU function (the stack venv's torch 2.13, Inductor, g++) with gcc's
    omp.h hidden by a bind mount in a private mount namespace (`unshare -m`): the real
    InductorError/CppCompileError output names openmp-missing, not a missing compiler."""
    inc = _omp_dir()
    if inc is None:
        pytest.skip("gcc has no omp.h here")
    copy = tmp_path / "include"
    shutil.copytree(inc, copy, symlinks=True)
    (copy / "omp.h").unlink()
    script = tmp_path / "comp.py"
    script.write_text("import torch\n@torch.compile\ndef f(x):\n    return (x.sin() + 1).sum()\n"
                      "print(f(torch.randn(16)))\n", encoding="utf-8")
    cmd = (f"mount --bind {copy} {inc} && TORCHINDUCTOR_CACHE_DIR={tmp_path / 'cache'} "
           f"exec {stack_python} {script}")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --make-rprivate / 2>/dev/null; true"],
                           capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("unshare -m is not permitted here")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", "mount --make-rprivate / 2>/dev/null; " + cmd],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "LC_ALL": "C"})
    assert proc.returncode != 0, proc.stdout[-500:]
    log = proc.stdout + proc.stderr
    assert "omp.h" in log and "CppCompileError" in log, log[-2000:]
    report = _explain_json(log)
    codes = [c["code"] for c in report["candidates"]]
    assert codes[:2] == ["openmp-missing", "torch-compile-failed"], codes


def test_real_float16_op_on_the_cpu(stack_python):
    """A float16 tensor through a CPU kernel that has no float16 (torch 2.13, the stack venv's CPU
    torch): the model was meant for the GPU and runs on the CPU; explain reads it as CUDA not in use
    and ranks why CUDA can be unavailable."""
    proc = subprocess.run([stack_python, "-c", "import torch; torch.linalg.cholesky(torch.eye(3).half())"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "not implemented for 'Half'" in proc.stderr, proc.stderr[-1000:]
    report = _explain_json(proc.stderr)
    first = report["candidates"][0]
    assert first["code"] == "torch-cuda-unavailable" and first["kind"] == "symptom", report["candidates"][:2]
    assert "torch-cpu-only-build" in first["could_be"]
