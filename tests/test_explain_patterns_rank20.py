"""Precision of two specific rules (rank20, docs/dev/rank20.md): CUDA's own error strings
(``cudaGetErrorString`` of libcudart, knowledge/status_codes.json) explained one by one, each bare
and behind ``RuntimeError: CUDA error:``, found two that a specific root's pattern read as another
error's cause:

* ``peer mapping resources exhausted`` (cudaErrorTooManyPeers, 711: a GPU's peer mappings are used
  up) was nccl-p2p-blocked (peer access denied between two GPUs: ACS, IOMMU, a hypervisor);
* ``operation not supported on global/shared address space`` (cudaErrorInvalidAddressSpace, 717: a
  kernel's load or store in the wrong address space) was cuda-malloc-async-unsupported through its
  prefix ``CUDA error: operation not supported`` (cudaErrorNotSupported, 801).

Both then read as the generic CUDA error (a symptom with its ranked causes); the first has its own
root since session 37 (``cuda-peer-mappings-exhausted``, harv37c). The messages the rules were
written for still name their causes, in every wrapper.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests

FAMILIES = {
    "nccl-p2p-blocked": [
        # cudaGetErrorString(cudaErrorPeerAccessUnsupported), as torch's c10 check prints it
        "RuntimeError: CUDA error: peer access is not supported between these two devices",
        # vLLM's custom all-reduce (csrc/custom_all_reduce.cuh CUDACHECK)
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
    ],
    "cuda-malloc-async-unsupported": [
        # c10/cuda/CUDAException.cpp: 'CUDA error: ' + cudaGetErrorString(cudaErrorNotSupported)
        "RuntimeError: CUDA error: operation not supported",
        "RuntimeError: CUDA error: operation not supported\nCUDA kernel errors might be asynchronously reported at some other API call",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

#: (line, the specific entry it must no longer match)
NEAR_MISSES = [
    # cudaGetErrorString(cudaErrorTooManyPeers), torch's wording and the enum's name
    ("RuntimeError: CUDA error: peer mapping resources exhausted", "nccl-p2p"),
    ("cudaErrorTooManyPeers: peer mapping resources exhausted", "nccl-p2p"),
    ("[rank3]: RuntimeError: CUDA error: peer mapping resources exhausted", "nccl-p2p"),
    # cudaGetErrorString(cudaErrorInvalidAddressSpace) behind torch's prefix
    ("RuntimeError: CUDA error: operation not supported on global/shared address space",
     "torch-cuda-error-operation-not-supported"),
    ("[rank0]: RuntimeError: CUDA error: operation not supported on global/shared address space",
     "torch-cuda-error-operation-not-supported"),
]


@pytest.mark.parametrize("line,entry", NEAR_MISSES)
def test_another_errors_string_is_the_generic_cuda_error(line, entry):
    assert entry not in [e.id for e in load().match_line(line)]
    expl = explain_text(line + "\n")
    first = expl.candidates[0]
    # cudaErrorTooManyPeers has its own root since session 37 (harv37c: cuda-peer-mappings-exhausted);
    # the point here stays: neither is read as the other error's cause
    expected = ("cuda-peer-mappings-exhausted", "root") if "peer mapping" in line else ("cuda-error-unclassified",
                                                                                       "symptom")
    assert (first.code, first.kind) == expected, [c.code for c in expl.candidates]
    assert "nccl-p2p-blocked" not in expl.codes and "cuda-malloc-async-unsupported" not in expl.codes
