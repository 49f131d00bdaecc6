"""src39 (issue 8 item 2): messages harvested from the programs' own source: NCCL (NVIDIA/nccl src/),
torch.distributed (c10d, torchelastic), vLLM's and SGLang's start-up checks (docs/dev/src39.md; the
per-program lists docs/dev/src39-*.txt hold every message read and what explain makes of it).

Every message below is the program's own format string with plausible values filled in (the
``source`` of the matching signature names the file and function). Each runs through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word
wrap and terminal cuts at 80 columns, CRLF, container log formats) and must rank its code first. Near
misses that must not name the new signatures follow: healthy lines the same programs print, and
sibling messages another cause owns.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids

W = "node1:1234:5678 [0] NCCL WARN "

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "process-limit-exhausted": [
        # nccl src/include/checks.h STDTHREADCREATE_IMPL and PTHREADCHECK
        W + "Thread creation failed: Resource temporarily unavailable",
        W + "Call to pthread_create failed: Resource temporarily unavailable",
        "misc/socket.cc:512 NCCL WARN Call to pthread_create failed : Resource temporarily unavailable",
    ],
    "rendezvous-port-in-use": [
        # nccl src/misc/socket.cc ncclSocketListen via SYSCHECK
        W + "Call to bind failed: Address already in use",
        # torch/distributed/elastic/utils/distributed.py create_c10d_store
        "RuntimeError: on node-0.cluster.local, port: 29500 already in use",
    ],
    "collective-peer-lost": [
        # nccl src/os/linux.cc ncclOsSocketProgressOpt
        W + "ncclOsSocketProgressOpt: Call to send to 10.0.0.2<37525> failed : Broken pipe",
        W + "socketProgressOpt: Call to send to 10.0.0.2<37525> failed : Connection reset by peer",
    ],
    "gpu-arch-lacks-dtype": [
        # nccl src/enqueue.cc taskAppend
        W + "FP8 reduction support begins with sm90 capable devices.",
        # vllm/v1/attention/backends/triton_attn.py
        "ValueError: FP8 KV cache is not supported by the Triton attention backend on Tesla T4 (compute "
        "capability 7.5); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype auto.",
    ],
    "driver-too-old-for-build": [
        # nccl src/enqueue.cc rmaTaskAppend, src/misc/cudawrap.cc initOnceFunc
        W + "One-sided RMA requires CUDA driver 12.5 or later (found 12.2).",
        W + "CUDA some PFN functions not found in the library",
    ],
    "no-nvidia-driver": [
        # nccl src/misc/nvmlwrap.cc ncclNvmlEnsureInitialized
        W + "nvmlInit_v2() failed: Driver Not Loaded",
    ],
    "collective-mismatch-across-ranks": [
        # nccl src/bootstrap.cc bootstrapRoot
        W + "Bootstrap Root : mismatch in info from procs, nranks 8 vs 16, nroots 1 vs 1, iroot 0 vs 0, "
            "offset 0 vs 0",
    ],
    "nccl-ib-transport-error": [
        # nccl src/transport/net_ib/p2p.cc ncclIbTest
        W + "NET/IB: Got CQE with error (devIndex=0, req=0x7f1c2c00, comm=0x7f2a1000 (send), wr_id=12, "
            "qp_num=4711)",
    ],
    "nccl-ib-hca-wrong": [
        # nccl src/init.cc initTransportsRank
        W + "Detected mixed local Net device counts across ranks (min 4, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 "
            "to continue.",
    ],
    "nccl-net-plugin-mismatch": [
        W + "Detected mixed local CollNet device counts across ranks (min 0, max 1). Set "
            "NCCL_IGNORE_COLLNET_MISMATCH=1 to continue.",
    ],
    "memlock-limit-low": [
        # nccl src/transport/net_ib/connect.cc ncclIbCreateQpMlx5 (%m)
        W + "NET/IB: mlx5dv_create_qp failed to create QP: Cannot allocate memory",
    ],
    "collective-rendezvous-unreachable": [
        # nccl src/misc/socket.cc ncclSocketGetAddrFromString (gai_strerror)
        W + "Net : error encountered when getting address info : Name or service not known",
        W + "Net : error encountered when getting address info : Temporary failure in name resolution",
        # torch/distributed/elastic/utils/distributed.py _check_full_rank
        "TimeoutError: timed out waiting for all 2 members to join",
    ],
    "device-ordinal-out-of-range": [
        # torch/distributed/distributed_c10d.py init_process_group
        "ValueError: device_id cuda:3 is out of range. Please use a device index less than the number of "
        "accelerators available: 2.",
        # torch/distributed/elastic/agent/server/local_elastic_agent.py
        "ValueError: local_rank 2 exceeds available GPUs in CUDA_VISIBLE_DEVICES=0,1",
        # vllm/v1/worker/gpu_worker.py, vllm/config/parallel.py
        "AssertionError: local_world_size (8) must be less than or equal to the number of visible devices (4).",
        "ValueError: World size (4) is larger than the number of available GPUs (2) in this node. If this is "
        "intentional and you are using: - ray, set '--distributed-executor-backend ray'. - multiprocessing, "
        "set '--nnodes' appropriately.",
    ],
    "torch-cuda-unavailable": [
        "ValueError: device_id is an int, but no accelerator support is found from the current compilation. "
        "Please use a different compiled version that supports your accelerator.",
    ],
    "distributed-launch-env-missing": [
        "RuntimeError: LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context and want the "
        "code to run locally instead.",
    ],
    "nccl-shm-too-small": [
        # vllm/distributed/device_communicators/shm_broadcast.py check_shm_free_space
        "RuntimeError: Insufficient space in /dev/shm for shared-memory allocation: 1024 MiB required, 64 MiB "
        "free. Increase /dev/shm (e.g. --shm-size or --ipc=host).",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # vllm/v1/executor/ray_utils.py _wait_until_pg_ready
        "ValueError: Cannot provide a placement group requiring 8 GPUs (placement_group_specs=[{'GPU': 1.0}, "
        "{'GPU': 1.0}]) within 1800 seconds. Tensor parallel size may exceed available GPUs in your cluster. "
        "Check resources with `ray status` and `ray list nodes`.",
    ],
    "cuda-visible-devices-hides-gpus": [
        # vllm/platforms/rocm.py _sync_hip_cuda_env_vars
        "ValueError: Inconsistent GPU visibility env vars: HIP_VISIBLE_DEVICES='0,1' vs "
        "CUDA_VISIBLE_DEVICES='2,3'. Please set only one, or ensure they match.",
    ],
    "gpu-out-of-memory": [
        # sglang/srt/mem_cache/kv_cache_configurator.py _profile_available_bytes
        "RuntimeError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88. "
        "Raise --mem-fraction-static above 0.912 (minimum viable = 1 - available/pre = 0.9051). If using "
        "speculative decoding, draft weights are now counted.",
    ],
}


def _skip(msg, wrapper):
    return None


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, skip=_skip)

# every new signature id, and one message of the families above that it must match on its own
NEW_SIGNATURES = {
    "nccl-thread-creation-eagain": FAMILIES["process-limit-exhausted"][0],
    "nccl-bind-address-in-use": FAMILIES["rendezvous-port-in-use"][0],
    "torchelastic-port-in-use": FAMILIES["rendezvous-port-in-use"][1],
    "nccl-socket-send-peer-gone": FAMILIES["collective-peer-lost"][0],
    "nccl-fp8-reduction-needs-sm90": FAMILIES["gpu-arch-lacks-dtype"][0],
    "vllm-triton-fp8-kv-cache-needs-sm89": FAMILIES["gpu-arch-lacks-dtype"][1],
    "nccl-driver-too-old": FAMILIES["driver-too-old-for-build"][1],
    "nvml-driver-not-loaded": FAMILIES["no-nvidia-driver"][0],
    "nccl-bootstrap-root-mismatch": FAMILIES["collective-mismatch-across-ranks"][0],
    "nccl-ib-cqe-error": FAMILIES["nccl-ib-transport-error"][0],
    "nccl-mixed-net-device-counts": FAMILIES["nccl-ib-hca-wrong"][0],
    "nccl-mixed-collnet-device-counts": FAMILIES["nccl-net-plugin-mismatch"][0],
    "nccl-mlx5dv-qp-enomem": FAMILIES["memlock-limit-low"][0],
    "nccl-comm-id-unresolvable": FAMILIES["collective-rendezvous-unreachable"][0],
    "torchelastic-store-members-timeout": FAMILIES["collective-rendezvous-unreachable"][2],
    "torch-distributed-device-id-out-of-range": FAMILIES["device-ordinal-out-of-range"][0],
    "vllm-world-size-exceeds-visible-devices": FAMILIES["device-ordinal-out-of-range"][2],
    "vllm-world-size-exceeds-node-gpus": FAMILIES["device-ordinal-out-of-range"][3],
    "torch-distributed-device-id-no-accelerator": FAMILIES["torch-cuda-unavailable"][0],
    "torch-node-local-rank-missing": FAMILIES["distributed-launch-env-missing"][0],
    "vllm-shm-broadcast-no-space": FAMILIES["nccl-shm-too-small"][0],
    "vllm-ray-placement-group-timeout": FAMILIES["scheduler-gpu-request-unsatisfiable"][0],
    "vllm-rocm-visibility-vars-disagree": FAMILIES["cuda-visible-devices-hides-gpus"][0],
    "sglang-weights-leave-no-kv-cache-memory": FAMILIES["gpu-out-of-memory"][0],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # NCCL's INFO lines on a healthy init
    "node1:1234:5678 [0] NCCL INFO cudaDriverVersion 12040",
    "node1:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "node1:1234:5678 [0] NCCL INFO Loaded NVML from libnvidia-ml.so.1",
    "node1:1234:5678 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
    "node1:1234:5678 [0] NCCL INFO ncclCommInitRank comm 0x55d4 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 "
    "commId 0x9d1c - Init COMPLETE",
    # torch.distributed's healthy status lines
    "[I socket.cpp:752] [c10d] The client socket has connected to [node1]:29500 on [node2]:41862.",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers.",
    # vLLM's start-up notices on a working GPU
    "INFO 05-01 12:00:00 [__init__.py:244] Automatically detected platform cuda.",
    "INFO 05-01 12:00:00 [gpu_worker.py:276] Available KV cache memory: 52.31 GiB",
    "INFO 05-01 12:00:00 [kv_cache_utils.py:1031] GPU KV cache size: 428,512 tokens",
    # SGLang's
    "[2025-05-01 12:00:00 TP0] KV Cache is allocated. #tokens: 410214, K size: 22.0 GB, V size: 22.0 GB",
    "[2025-05-01 12:00:00 TP0] Memory pool end. avail mem=7.41 GB",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # NCCL retries a refused connect at INFO: not the bind failure, not a thread limit
    ("node1:1234:5678 [0] NCCL INFO Call to connect returned Connection refused, retrying", "nccl-bind-address-in-use"),
    # a bind that fails for another reason: not the port held by another process
    (W + "Call to bind failed: Cannot assign requested address", "nccl-bind-address-in-use"),
    # EPERM from pthread_create is a seccomp profile, not the process limit
    (W + "Call to pthread_create failed: Operation not permitted", "nccl-thread-creation-eagain"),
    # a recv reset is c10d-peer-reset's; the new signature reads sends and broken pipes
    (W + "ncclOsSocketProgressOpt: Call to recv from 10.0.0.2<37525> failed : Connection reset by peer",
     "nccl-socket-send-peer-gone"),
    # NVML's other answers: a version mismatch is driver-library-mismatch's
    (W + "nvmlInit_v2() failed: Driver/library version mismatch", "nvml-driver-not-loaded"),
    # torchelastic's retry warning before it gives up is not the failure
    ("WARNING:torch.distributed.elastic.utils.distributed:port: 29500 already in use, attempt: [1/3]",
     "torchelastic-port-in-use"),
    # an FP8 model on a GPU that has FP8: vLLM's info line
    ("INFO 05-01 12:00:00 [cuda.py:289] Using FlashAttention backend with FP8 KV cache on H100",
     "vllm-triton-fp8-kv-cache-needs-sm89"),
    # an address lookup that worked
    ("node1:1234:5678 [0] NCCL INFO NCCL_COMM_ID set by environment to 10.0.0.1:29600",
     "nccl-comm-id-unresolvable"),
    # a world size that fits
    ("INFO 05-01 12:00:00 [parallel.py:311] World size (2) fits the 8 GPUs in this node",
     "vllm-world-size-exceeds-node-gpus"),
    # /dev/shm with room to spare
    ("INFO shm_broadcast: 1024 MiB required, 65536 MiB free in /dev/shm", "vllm-shm-broadcast-no-space"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_recv_reset_stays_peer_lost():
    codes = [c.code for c in explain_text(
        W + "ncclOsSocketProgressOpt: Call to recv from 10.0.0.2<37525> failed : Connection reset by peer\n"
    ).candidates]
    assert codes[:1] == ["collective-peer-lost"], codes
