"""cuBLAS that cannot set up because the GPU's memory is full (ctx22; docs/dev/ctx22.md).

The knowledge base's own meaning of ``cublas-call-failed`` says NOT_INITIALIZED or ALLOC_FAILED at
``cublasCreate(handle)`` means the GPU's memory is already full (cuBLAS API reference: cublasCreate
allocates the handle's resources on the device; CUBLAS_STATUS_ALLOC_FAILED "the resources could not
be allocated", CUBLAS_STATUS_NOT_INITIALIZED "an error in the CUDA Runtime API called by the cuBLAS
routine"), yet ``gpu-out-of-memory`` was not among its causes, so no base rate or clue could name
it. It is now listed; the symptom itself still comes first when the log names nothing deeper.
"""

from __future__ import annotations

import pytest

from stackpeel.codes import all_codes
from stackpeel.explain import explain_text

# aten/src/ATen/cuda/Exceptions.h TORCH_CUDABLAS_CHECK; XLA's cuda_blas.cc CUDABlas::Init
LINES = [
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
    "[rank1]: RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    "> E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED",
]


def test_gpu_out_of_memory_is_a_cause_of_a_cublas_failure():
    assert "gpu-out-of-memory" in all_codes()["cublas-call-failed"].caused_by


@pytest.mark.parametrize("line", LINES)
def test_a_cublas_setup_failure_lists_the_full_gpu(line):
    expl = explain_text(line)
    top = expl.candidates[0]
    assert top.code in ("cublas-call-failed", "gpu-out-of-memory")
    listed = [c.code for c in expl.candidates] + list(top.could_be)
    assert "gpu-out-of-memory" in listed


def test_a_stated_out_of_memory_is_not_a_cublas_failure():
    # near miss: torch's own OOM line names the root, no cuBLAS symptom
    codes = [c.code for c in explain_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB").candidates]
    assert codes[0] == "gpu-out-of-memory" and "cublas-call-failed" not in codes
