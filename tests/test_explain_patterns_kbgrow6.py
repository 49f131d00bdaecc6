"""Issue 8 items 2, 3 and 7 (kbgrow6): what explain missed on 37 fresh training threads of LLM
fine-tuning and distributed-training users (DeepSpeed, Megatron-LM, NeMo, Lightning, LLaMA-Factory,
unsloth, bitsandbytes, peft, trl, Horovod, NCCL, torchrun; tests/corpus/explain/*.log with
``# collected: training-2026-12-01l``), fixed by class.

- Launchers: DeepSpeed's runner checks passwordless ssh to every hostfile host before it starts
  (``launcher-ssh-unreachable``); a rank killed by SIGBUS (exitcode -7) is the rank's own
  shared memory, NCCL's segments first (a DataLoader worker's SIGBUS is reported as exit 1);
  launcher variables left in the environment (NODE_RANK ...) make a job wait for ranks that
  never start (``distributed-launch-env-stale``); a JIT extension build waiting on the lock an
  interrupted build left (``extension-build-lock-stale``, torch's FileBaton).
- NCCL: the socket transport listing container bridges and veths; a topology bug of a release
  (``nccl-release-bug``); multi-node words rank the interface above /dev/shm; "hangs with nccl,
  works with gloo" is the transport NCCL adds on one node (P2P).
- Triton's API moving under the libraries that ship kernels: who imports decides between a
  library written for another Triton (``triton-too-old-for-package``) and torch's Inductor on a
  Triton it does not pin; Inductor reading Triton's internal objects.
- Libraries' own words: LLaMA-Factory's FlashAttention-2/SDPA warnings, bitsandbytes 0.37-0.42
  CUDA setup messages and its pre-Turing int8 warning, nccl.h/cudnn.h missing in a build.
- Symptoms with context: a hang late in an epoch (uneven batches across ranks), a hang at the
  first rendezvous, ENOSPC without a path in a container (/dev/shm), libcuda on WSL.

Messages are the programs' own wording (each signature's ``source`` names the file); the
users' words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "launcher-ssh-unreachable": [
        # deepspeed/launcher/runner.py main (0.16)
        "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via ssh. If you are "
        "running with a single node please remove /job/hostfile or setup passwordless ssh.",
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' "
        "returned non-zero exit status 255.",
        "subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', 'manager', 'hostname']' "
        "returned non-zero exit status 255.",
        "Unable to detect suitable master address via `hostname -I`, please manually specify one via --master_addr",
        "RuntimeError: launcher 'pdsh' not installed.",
        # pdsh's ssh rcmd module, OpenSSH
        "pdsh@node0: worker-1: ssh exited with exit code 255",
        "worker-1: jiaming@worker-1: Permission denied (publickey,password).",
    ],
    "nccl-shm-too-small": [
        # DeepSpeed launcher/launch.py sigkill_handler; torchelastic's ChildFailedError table
        "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=1'] "
        "exits with return code = -7",
        "  exitcode  : -7 (pid: 4242)",
        "  traceback : Signal 7 (SIGBUS) received by PID 4242",
    ],
    "nccl-socket-ifname-wrong": [
        # NCCL src/transport/net_socket.cc with Docker user-defined networks and container veths
        "node1:3100:3100 [0] NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab815fa14e:172.19.0.1<0>",
        "[12]veth6163fba:fe80::b878:6cff:fe52:abe2%veth6163fba<0>",
    ],
    "nccl-release-bug": [
        # NCCL src/graph/topo.h ncclTopoIdToIndex (2.25-2.26)
        "nid001:1234:1300 [0] graph/topo.h:230 NCCL WARN Could not find NET with id 0",
    ],
    "cuda-headers-missing": [
        # gcc's missing include, from horovod/common/ops/nccl_operations.h and cuDNN users
        "horovod/common/ops/nccl_operations.h:22:10: fatal error: nccl.h: No such file or directory",
        "csrc/conv.cpp:3:10: fatal error: cudnn.h: No such file or directory",
    ],
    "flash-attn-not-installed": [
        # LLaMA-Factory src/llamafactory/model/model_utils/attention.py (0.9) and llmtuner (0.5-0.6)
        "[WARNING|2025-03-15 10:00:00] llamafactory.model.model_utils.attention:143 >> FlashAttention-2 is not installed.",
        "FlashAttention-2 is not installed, use eager attention.",
        "WARNING - llmtuner.model.patcher - FlashAttention2 is not installed.",
    ],
    "torch-build-too-old-for-fast-path": [
        # LLaMA-Factory attention.py
        "[WARNING|2025-03-15 10:00:00] llamafactory.model.model_utils.attention:143 >> torch>=2.1.1 is required for SDPA attention.",
    ],
    "bitsandbytes-cuda-setup-failed": [
        # bitsandbytes/cuda_setup/main.py 0.37-0.42
        "CUDA SETUP: Something unexpected happened. Please compile from source:",
        "CUDA SETUP: CUDA 10.0 not supported. Please use a different CUDA version.",
        "NameError: name 'cuda_setup' is not defined",
    ],
    "gpu-arch-lacks-dtype": [
        # bitsandbytes/cuda_setup/main.py is_cublasLt_compatible
        "UserWarning: WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for your GPU!",
    ],
    "triton-torch-version-mismatch": [
        # torch/_inductor/runtime/triton_heuristics.py reading Triton's internals (unsloth PR 4001)
        "torch._inductor.exc.InductorError: AttributeError: 'KernelMetadata' object has no attribute 'cluster_dims'",
        "AttributeError: type object 'CompiledKernel' has no attribute 'launch_enter_hook'",
    ],
    "triton-not-installed": [
        # Python's ModuleNotFoundError as users retell it (unsloth issues 540, 852)
        "It say's no module named Triton",
        "ModuleNotFoundError: No module named triton",
    ],
    "extension-build-lock-stale": [
        # torch/utils/file_baton.py FileBaton.wait
        'UserWarning: Waited on lock file "/root/.cache/torch_extensions/py310_cu121/fused_adam/lock" for 60 seconds.',
        # users' words for the same stall (Megatron-LM issues 82 and 1050)
        "The program got stuck in compiling and loading fused kernels ... and timed out after ten minutes",
        "I found that the problem was stuck at compilating fused_kernels",
    ],
}

# (a terminal cut at 80 columns before the bridge's "]br-" was skipped until fix32: a refinement's
# context now reads a cut line's pieces joined)
test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_new_roots_are_sourced_and_say_what_to_do = sourced_roots_test([
    "launcher-ssh-unreachable", "nccl-release-bug", "extension-build-lock-stale",
])


@pytest.mark.parametrize("code", ["triton-too-old-for-package", "distributed-launch-env-stale"])
def test_roots_reached_through_context_are_sourced_and_say_what_to_do(code):
    # no line of their own: a refinement (who imports Triton) or the log's words reach them
    from stackpeel.knowledge import load as load_kb

    entry = load_kb().get(code)
    assert entry.fix and entry.source and entry.links and entry.layer and entry.kind == "root"
    assert entry.commands and entry.remedy.get("automatic") is False


# Healthy lines that share words with the signatures above: a plan, a notice, a success
HEALTHY = [
    "Using FlashAttention-2 for faster training and inference.",
    "Using torch SDPA for faster training and inference.",
    "[INFO] [launch.py:351:main] Process 4242 exits successfully.",
    "node1:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0> [1]ib0:10.1.0.2<0>",
    ">>> done with compiling and loading fused kernels. Compilation time: 2.345 seconds",
    "Loading extension module fused_adam...",
    " 96%|█████████▌| 4260/4435 [12:01<00:30,  5.9it/s]",
    "export NODE_RANK=0 WORLD_SIZE=16 MASTER_ADDR=10.0.0.1",
    "ssh -o PasswordAuthentication=no worker-1 hostname",
    "pip install flash-attn --no-build-isolation",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


# --- Triton's API under the libraries: who imports decides ---------------------------------

UNSLOTH_TRACEBACK = """Traceback (most recent call last):
  File "/data/envs/py310/lib/python3.10/site-packages/unsloth/__init__.py", line 62, in <module>
    from triton.common.build import libcuda_dirs
ModuleNotFoundError: No module named 'triton.common'
"""

INDUCTOR_TRACEBACK = """Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 1757, in make_launcher
    from triton.compiler.compiler import KernelMetadata
ImportError: cannot import name 'KernelMetadata' from 'triton.compiler.compiler'
"""


def test_a_kernel_library_on_another_triton_api_is_the_library_s():
    expl = explain_text(UNSLOTH_TRACEBACK)
    assert [c.code for c in expl.candidates][:1] == ["triton-too-old-for-package"], [c.code for c in expl.candidates]


def test_inductor_on_another_triton_is_torch_s_pin():
    expl = explain_text(INDUCTOR_TRACEBACK)
    assert [c.code for c in expl.candidates][:1] == ["triton-torch-version-mismatch"], [c.code for c in expl.candidates]


def test_the_title_as_users_retype_it_names_the_library_s_triton():
    # unsloth issue 1263: the title quotes the AttributeError without its "module" and quotes
    expl = explain_text("`triton.language' has no attribute cast`\n\nBeen using unsloth for my trainings, however "
                        "updating the version resulted to an error.\n")
    assert [c.code for c in expl.candidates][:1] == ["triton-too-old-for-package"], [c.code for c in expl.candidates]


# --- the log's context ---------------------------------------------------------------------

HANG_AT_INIT = "DDP jobs hang at `initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8`"


def test_a_hang_at_the_first_rendezvous_is_the_rendezvous():
    expl = explain_text(HANG_AT_INIT + "\n")
    assert [c.code for c in expl.candidates][:1] == ["collective-rendezvous-unreachable"], \
        [c.code for c in expl.candidates]
    assert expl.candidates[0].basis == "vocabulary"


def test_a_hang_at_the_first_rendezvous_with_launcher_variables_set_is_the_stale_variable():
    # Lightning issue 5651
    expl = explain_text("NODE_RANK causes " + HANG_AT_INIT + "\n* NODE_RANK=0\n* WORLD_SIZE=8\n")
    assert [c.code for c in expl.candidates][:1] == ["distributed-launch-env-stale"], \
        [c.code for c in expl.candidates]


def test_a_hang_late_in_an_epoch_is_uneven_batches_across_ranks():
    # Lightning issue 9851
    expl = explain_text('ddp training stuck\nthe numbers "96% 4260/4435" keeps the same forever.\n')
    assert [c.code for c in expl.candidates][:1] == ["collective-mismatch-across-ranks"], \
        [c.code for c in expl.candidates]


def test_a_bare_hang_stays_the_collective_hang():
    expl = explain_text("ddp training stuck\n")
    assert [c.code for c in expl.candidates][:1] == ["collective-hang"], [c.code for c in expl.candidates]


@pytest.mark.parametrize("line,code", [
    # transformers issue 28280
    ("tried to run the following code, stuck with backend `nccl`, but works with `gloo`:", "nccl-p2p-blocked"),
    # trl issue 3436
    ("FSDP SFT deepseekv2-prover7B OOM on 8*RTX3080", "gpu-out-of-memory"),
    # torchx issue 540
    ("Failed to launch PyTorch DDP script on ray clusters when exposed ports on nodes are limited",
     "collective-rendezvous-unreachable"),
])
def test_users_words_name_the_cause_as_a_guess(line, code):
    expl = explain_text(line + "\n")
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    assert expl.candidates[0].basis == "vocabulary"


def test_the_oom_killer_is_not_the_gpu():
    expl = explain_text("The training was killed by the OOM killer on the RTX 3090 box\n")
    assert "gpu-out-of-memory" not in [c.code for c in expl.candidates][:1], [c.code for c in expl.candidates]


NCCL_SYSTEM_ERROR = "RuntimeError: NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error"


def test_an_nccl_system_error_on_several_nodes_is_the_interface():
    # NVIDIA/nccl issue 207
    expl = explain_text("I try to use torch.distributed.launch to run code in multi node with multi gpus.\n"
                        + NCCL_SYSTEM_ERROR + "\n")
    assert [c.code for c in expl.candidates][:1] == ["nccl-socket-ifname-wrong"], [c.code for c in expl.candidates]


def test_an_nccl_system_error_alone_stays_the_symptom():
    expl = explain_text(NCCL_SYSTEM_ERROR + "\n")
    assert [c.code for c in expl.candidates][:1] == ["nccl-error"], [c.code for c in expl.candidates]


ENOSPC = "OSError: [Errno 28] No space left on device"


def test_enospc_without_a_path_in_a_container_is_shared_memory():
    # Megatron-LM issue 878
    expl = explain_text(f"{ENOSPC}\n\nyes, I run it in docker.\n`docker run -it --gpus all nvcr.io/nvidia/pytorch:23.09-py3`\n")
    assert [c.code for c in expl.candidates][:1] == ["dataloader-shm-too-small"], [c.code for c in expl.candidates]


@pytest.mark.parametrize("log", [ENOSPC, ENOSPC + ": '/data/checkpoints/step_1000/model.safetensors'"])
def test_enospc_alone_or_with_a_disk_path_is_the_disk(log):
    expl = explain_text(log + "\n")
    assert [c.code for c in expl.candidates][:1] == ["disk-full"], [c.code for c in expl.candidates]


def test_libcuda_not_found_on_wsl_is_wsl_s_library_path():
    # bitsandbytes issue 17
    expl = explain_text("WSL: libcuda.so: cannot open shared object file\n")
    assert [c.code for c in expl.candidates][:1] == ["wsl-libcuda-not-linked"], [c.code for c in expl.candidates]


def test_libcuda_not_found_elsewhere_stays_libcuda_missing():
    expl = explain_text("OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n")
    assert [c.code for c in expl.candidates][:1] == ["libcuda-missing"], [c.code for c in expl.candidates]


def test_a_dataloader_worker_bus_error_stays_the_dataloader_s():
    # the main process reports its worker's SIGBUS itself and exits 1: not the rank's own signal
    expl = explain_text("RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.\n"
                        "  exitcode  : 1 (pid: 300)\n")
    assert [c.code for c in expl.candidates][:1] == ["dataloader-shm-too-small"], [c.code for c in expl.candidates]
