"""Signatures added by the lead in the eleventh session, from the libraries' own source and
training threads (``# collected: training-2026-12-02s``); each must head explain's answer in every
wrapper a pasted log puts around it, and healthy lines with the same words name nothing.

``tcpstore-libuv-unavailable``: torch 2.4 made libuv the TCPStore's default backend (pytorch PR
127957); the Windows wheels are built without it, so every rendezvous stops with the TCPStore's
check (torch/csrc/distributed/c10d/TCPStore.cpp), spelt "build" in 2.4-2.6 and "built ... run with
USE_LIBUV=0" later (EDTalk 24, LlamaFactory 7806).
"""

from __future__ import annotations

from test_explain_patterns import family_tests, healthy_test

FAMILIES = {
    "tcpstore-libuv-unavailable": [
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv support, "
        "run with USE_LIBUV=0 to disable it.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_healthy_lines_name_nothing = healthy_test([
    "Using TCPStore with use_libuv=False",
    "export USE_LIBUV=0",
    "libuv 1.48.0 installed",
])


def test_torch_not_compiled_with_cuda_in_open3d_words_is_torchs_own_cpu_build():
    """The Open3D-ML wording 'X was not compiled with CUDA support' names the framework's CPU build;
    when X is torch itself it is torch's CPU wheel (found on rereading the merged rules)."""
    from stackpeel.explain import explain_text

    for line, code in (("AssertionError: PyTorch was not compiled with CUDA support", "torch-cpu-only-build"),
                       ("RuntimeError: torch was not compiled with CUDA support", "torch-cpu-only-build"),
                       ("BuildSpatialHashTable was not compiled with CUDA support", "framework-cpu-only-build")):
        codes = [c.code for c in explain_text(line + "\n").candidates]
        assert codes[:1] == [code], (line, codes)
