"""harv37c: an unbiased harvest of single-host multi-GPU failures (peer-to-peer and IOMMU/ACS on
consumer and workstation GPUs, NCCL on one node, torchrun/accelerate/deepspeed launchers, device
and rank mix-ups), scored blind, and the general fixes its misses ask for (docs/dev/harv37c.md).

Thirteen new training-side logs; explain named four first before any change. The fixed misses:
- CUDA's cudaErrorTooManyPeers text ``peer mapping resources exhausted`` (a GPU maps at most eight
  peers: NVIDIA/nccl#51, ggml-org/llama.cpp#21883 with ten P40s, hiyouga/LlamaFactory#1213 with
  ten processes) had no code and read as the generic CUDA error; now its own
  ``cuda-peer-mappings-exhausted`` (A1/G);
- the deepspeed launcher's own ``ValueError: No slot '2' specified on host 'localhost'``
  (deepspeedai/DeepSpeed#5818: CUDA_VISIBLE_DEVICES=0,2 turned into ``--include localhost:0,2``
  against slots 0 and 1); now ``deepspeed-launcher-cuda-visible-devices`` (A1/G);
- CUDA's cudaErrorPeerAccessUnsupported text shortened in a title or a quote (``peer access is not
  supported between two devices``, ``... between these two device``: NVIDIA/TensorRT-LLM#1499,
  efeslab/Nanoflow#22); the ``nccl-p2p-blocked`` signature now stops at ``between`` (A2).
Each message is the library's own text (its source is named in the knowledge entry), run through
the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# torch's c10 CUDA check around cudaDeviceEnablePeerAccess (hiyouga/LlamaFactory#1213)
TORCH_TOO_MANY_PEERS = "RuntimeError: CUDA error: peer mapping resources exhausted"
# NCCL's CUDACHECK in its allocator (nccl-tests on ten GPUs)
NCCL_TOO_MANY_PEERS = ("ubuntu:33207:33207 [0] allocator.cc:79 NCCL WARN Cuda failure 711 "
                       "'peer mapping resources exhausted'")
# torch 0.x / cutorch's THCudaCheck wording
THC_TOO_MANY_PEERS = ("RuntimeError: cuda runtime error (60) : peer mapping resources exhausted at "
                      "/py/conda-bld/pytorch_1493676237139/work/torch/lib/THC/THCGeneral.c:224")
# deepspeed/launcher/runner.py parse_resource_filter
DS_NO_SLOT = "ValueError: No slot '2' specified on host 'localhost'"
DS_NO_SLOT_SLURM = "ValueError: No slot '4' specified on host 'localhost'"
# CUDA's cudaErrorPeerAccessUnsupported as torch prints it, and as a title shortens it
P2P_UNSUPPORTED = "RuntimeError: CUDA error: peer access is not supported between these two devices"
P2P_UNSUPPORTED_SHORT = "peer access is not supported between two devices"

FAMILIES = {
    "cuda-peer-mappings-exhausted": [TORCH_TOO_MANY_PEERS, NCCL_TOO_MANY_PEERS, THC_TOO_MANY_PEERS],
    "deepspeed-launcher-cuda-visible-devices": [DS_NO_SLOT, DS_NO_SLOT_SLURM],
    "nccl-p2p-blocked": [P2P_UNSUPPORTED, P2P_UNSUPPORTED_SHORT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_llama_cpp_init_with_ten_gpus_names_the_peer_limit():
    # ggml-org/llama.cpp#21883: ggml_cuda_init enabling peer access between all ten P40s
    text = (
        "ggml_cuda_init: found 10 CUDA devices (Total VRAM: 229059 MiB):\n"
        "  Device 0: Tesla P40, compute capability 6.1, VMM: yes, VRAM: 22905 MiB\n"
        "  ...\n"
        "CUDA error: peer mapping resources exhausted\n"
        "  current device: 0, in function ggml_cuda_init at ggml/src/ggml-cuda/ggml-cuda.cu:336\n"
        "  cudaDeviceEnablePeerAccess(id_other, 0)\n"
        "Aborted (core dumped)\n"
    )
    assert _codes(text)[:1] == ["cuda-peer-mappings-exhausted"]


def test_peer_limit_quoted_in_prose():
    # a user quoting the message in a sentence (NVIDIA/nccl#51's wording)
    text = ('When I added small arrays together across 16 workers I got the error "peer mapping resources '
            'exhausted". Looking online I determined that perhaps I was limited to 8 GPUs in a group.\n')
    assert _codes(text)[:1] == ["cuda-peer-mappings-exhausted"]


def test_peer_limit_near_misses_keep_their_reading():
    # peer access blocked between two GPUs is nccl-p2p-blocked, not the eight-peer limit; resources
    # of other kinds exhausted are not peer mappings
    assert "cuda-too-many-peers" not in _ids(P2P_UNSUPPORTED)
    assert "cuda-too-many-peers" not in _ids("CUDA error: out of memory (resources exhausted)")
    assert "cuda-too-many-peers" not in _ids("peer mapping enabled between GPU 0 and GPU 1")
    assert _codes(P2P_UNSUPPORTED + "\n")[:1] == ["nccl-p2p-blocked"]


def test_deepspeed_launcher_paste_names_the_slot_list():
    # deepspeedai/DeepSpeed#5818: CUDA_VISIBLE_DEVICES=0,2 on one node, in the launcher's own log
    text = (
        "[2024-07-31 10:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, will "
        "proceed with training with local resources only.\n"
        "Detected CUDA_VISIBLE_DEVICES=0,2: setting --include=localhost:0,2\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/deepspeed", line 6, in <module>\n'
        "    main()\n"
        '  File "/usr/local/lib/python3.10/site-packages/deepspeed/launcher/runner.py", line 432, in main\n'
        "    active_resources = parse_inclusion_exclusion(resource_pool, args.include, args.exclude)\n"
        "ValueError: No slot '2' specified on host 'localhost'\n"
    )
    assert _codes(text)[:1] == ["deepspeed-launcher-cuda-visible-devices"]


def test_deepspeed_launcher_near_misses_stay_quiet():
    # the launcher's healthy notes about CUDA_VISIBLE_DEVICES, and its other hostfile errors
    for line in (
        "Detected CUDA_VISIBLE_DEVICES=0,1,2,3 but ignoring it because one or several of "
        "--include/--exclude/--num_gpus/--num_nodes cl args were used. If you want to use "
        "CUDA_VISIBLE_DEVICES don't pass any of these arguments to deepspeed.",
        "Detected CUDA_VISIBLE_DEVICES=1: setting --include=localhost:1",
        "ValueError: Hostname 'worker-1' not found in hostfile",
        "ValueError: Hostfile contains a bad entry: worker-1 lots=8, unable to proceed with launching",
        "no slot is free on this host",
    ):
        assert "deepspeed-no-slot-on-host" not in _ids(line), line


def test_shortened_peer_access_titles_read_as_blocked_p2p():
    # NVIDIA/TensorRT-LLM#1499's title and efeslab/Nanoflow#22's quote (no final s)
    assert _codes("peer access is not supported between two devices\n")[:1] == ["nccl-p2p-blocked"]
    text = ("error: peer access is not supported between these two device\n\n"
            "I tried run llama3-70B, raise the error `peer access is not supported between these two device`\n")
    assert _codes(text)[:1] == ["nccl-p2p-blocked"]


def test_peer_access_near_misses_keep_their_reading():
    # healthy peer-access lines and NCCL's informational P2P notes are not the CUDA error
    for line in (
        "Device=0 CAN Access Peer Device=1",
        "peer access is supported between GPU 0 and GPU 1",
        "NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC",
        "cudaDeviceCanAccessPeer(0, 1) = 1",
    ):
        assert "nccl-p2p" not in _ids(line), line
