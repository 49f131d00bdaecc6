"""harv33: a fifteenth unbiased harvest (multi-node and multi-GPU distributed training), scored
blind, and the general fixes its misses ask for (docs/dev/harv33.md).

Eleven new training-side logs; explain named six first before any change. The fixed misses:
- A1, a program's own message not covered: NCCL's ``NCCL cannot be captured in a graph if
  either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.``
  (src/misc/strongstream.cc, returned as ncclInvalidUsage while a stream is capturing) is
  ``cuda-graph-capture-unsupported``: vLLM captures its tensor-parallel all-reduce in CUDA
  graphs, and the NCCL loaded was built for CUDA 11.0 (vllm-project/vllm#3069); explain had
  only a prior (``nccl-shm-too-small``);
- A3, the user's own word for a hang: ``When i use nccl test on 8xM40 GPU, it will be
  stalled.`` (NVIDIA/nccl#104, ACS) was silent. "stalled" / "stalls" now reads as a hang next
  to a word of the GPU stack (parser's hang shape, the hang word, collective-hang's words);
  the ACS behind it is not in the log, so the answer is the symptom with its causes.
Beyond the misses, a new root code for a frame failure the sample met without a code
(NVIDIA/nccl#1240 and #1008, reporter-confirmed): ``nccl-graph-file-mismatch``, NCCL_GRAPH_FILE
set by a cloud image's /etc/nccl.conf for other GPUs (``XML Import Channel : dev 1 not found.``;
or ``ncclSystemError`` with NCCL's ``NCCL_GRAPH_FILE set by environment to`` line).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests, sourced_roots_test

# NCCL src/misc/strongstream.cc ncclCudaGetCapturingGraph
NCCL_CAPTURE = ("misc/strongstream.cc:53 NCCL WARN NCCL cannot be captured in a graph if either it wasn't "
                "built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.")
# NCCL src/graph/search.cc ncclTopoGetChannelFromXml
NCCL_XML_DEV = "graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found."

FAMILIES = {
    "cuda-graph-capture-unsupported": [NCCL_CAPTURE],
    "nccl-graph-file-mismatch": [NCCL_XML_DEV],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_vllm_tensor_parallel_nccl_cuda11_0_names_graph_capture():
    # vllm-project/vllm#3069 (the reporter's paste)
    text = (
        "用一张卡跑7b模型不会报错，用两张卡时报NCCL错误。vllm版本v0.3.2。\n"
        "command：\n"
        "python -m vllm.entrypoints.openai.api_server --model models/Qwen-14B-Chat --trust-remote-code "
        "--port 8509 --tensor-parallel-size 2\n"
        "NCCL：NCCL version 2.19.3+cuda11.0\n"
        "CUDA：11.6\n"
        "error：\n"
        "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 "
        "or if the installed CUDA driver < R465.\n"
    )
    assert _codes(text)[:1] == ["cuda-graph-capture-unsupported"]


def test_capture_message_is_its_own_signature():
    assert "nccl-graph-capture-needs-cuda-11-3" in _ids(NCCL_CAPTURE)


def test_capture_fix_names_the_nccl_build():
    fix = load_kb().get("cuda-graph-capture-unsupported").fix
    assert "NCCL cannot be captured in a graph" in fix and "11.3" in fix and "R465" in fix


def test_capture_near_misses_stay_other_codes():
    # NCCL's graph-register notice and a vLLM start-up line name no failure of capture
    assert "nccl-graph-capture-needs-cuda-11-3" not in _ids("NCCL INFO NVLS comm 0x7f19 registered buffers for graph capture")
    assert "nccl-graph-capture-needs-cuda-11-3" not in _ids(
        "INFO 02-28 model_runner.py:691] Capturing the model for CUDA graphs. This may lead to unexpected consequences")


def test_nccl_tests_stalled_with_words_of_the_stack_is_a_hang():
    # NVIDIA/nccl#104 (the reporter's paste): silent before harv33
    text = (
        "When i use nccl test on 8xM40 GPU, it will be stalled.\n\n"
        "> Using devices\n"
        "   Rank  0 uses device  0 [0x05] Tesla M40 24GB\n"
        "   Rank  1 uses device  1 [0x08] Tesla M40 24GB\n"
        ">                                                 out-of-place                    in-place\n"
        ">      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
    )
    codes = _codes(text)
    assert codes[:1] == ["collective-hang"], codes


def test_stalled_in_other_wordings_reads_as_a_hang():
    for text in (
        "DDP training on 4 GPUs stalls after the first epoch",
        "[rank0]: training stalled at all_reduce, NCCL never returns",
        "The job is stalling in the NCCL barrier on 2 nodes",
    ):
        assert _codes(text)[:1] == ["collective-hang"], (text, _codes(text))


def test_stalled_near_misses_stay_quiet():
    # a package installed (the word inside another), a stall with no word of the GPU stack,
    # and Horovod's own stall check being switched off
    assert _codes("Successfully installed torch-2.1.0 nccl-2.18.1") == []
    assert _codes("the download stalled for a while, then finished") == []
    assert "collective-hang" not in _codes("pip is installing collected packages: torch, triton")


def test_graph_file_ncclsystemerror_with_info_line_names_the_graph_file():
    # NVIDIA/nccl#1240: the reporter's error and the line the maintainer quoted from the same log
    text = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "Spotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n"
    )
    assert _codes(text)[:1] == ["nccl-graph-file-mismatch"]


def test_graph_file_xml_import_paste_names_the_graph_file():
    # Azure/azhpc-images#327 (the reporter's paste, a 1-GPU NC24ads A100 v4)
    text = (
        "::16674:17023 [0] NCCL INFO comm 0x5640f24752d0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 100000 - Init START\n"
        "::16674:17023 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml\n"
        "::16674:17023 [0] NCCL INFO Setting affinity for GPU 0 to ffffff\n"
        "::16674:17023 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n\n"
        "::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.\n"
        "::16674:17023 [0] NCCL INFO graph/search.cc:733 -> 2\n"
        "::16674:17023 [0] NCCL INFO graph/search.cc:740 -> 2\n"
    )
    assert _codes(text)[:1] == ["nccl-graph-file-mismatch"]


test_new_code_sourced = sourced_roots_test(["nccl-graph-file-mismatch"])


def test_graph_file_code_says_where_the_variable_hides():
    e = assert_sourced_root("nccl-graph-file-mismatch")
    assert e.layer == "multi_gpu"
    assert "/etc/nccl.conf" in e.fix and "NCCL_TOPO_FILE" in e.fix
    assert any("nccl/issues/1240" in link for link in e.links)
    assert "search.cc" in e.source


def test_graph_file_near_misses_keep_their_reading():
    # the topology file alone is harmless: a system error beside it keeps the generic reading
    topo_only = (
        "RuntimeError: NCCL Error 2: unhandled system error\n"
        "cs-project:2748:2852 [1] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml\n"
    )
    assert "nccl-graph-file-mismatch" not in _codes(topo_only)[:1]
    # a healthy run that sets the variable names no failure
    assert _codes("node1:1:1 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /tmp/g.xml\n") == []
    # another XML import problem of NCCL's topology is not the graph file's
    assert "nccl-xml-import-channel-dev-not-found" not in _ids("graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found")
