"""Session 19 (lead): the status names of the CUDA math libraries that no entry read, EGL's
own error name, and NCCL's ibv_modify_qp warning without its "Call to" (docs/dev/harvest-lead19.md).

cuSOLVER's, cuSPARSE's, cuRAND's and cuFFT's allocation statuses are a cudaMalloc failing inside
the library (their guides say so), as cuBLAS's and cuDNN's are; cuSOLVER's INTERNAL_ERROR is a
symptom with GPU memory among its causes (the threads that established a cause); the other
status names are a CUDA error no entry explains, never silence. The gaps merge holds the
cuSOLVER/cuRAND entries (tests/test_explain_gaps.py); these tests read them in every wrapper too.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import family_tests

FAMILIES = {
    "gpu-out-of-memory": [
        # torch aten/src/ATen/native/cuda/linalg/CUDASolver.h TORCH_CUSOLVER_CHECK
        "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
        # torch aten/src/ATen/cuda/CUDASparse.h TORCH_CUDASPARSE_CHECK
        "RuntimeError: CUDA error: CUSPARSE_STATUS_ALLOC_FAILED when calling `cusparseCreate(handle)`",
        # curandStatus_t through Caffe's CURAND_CHECK
        "F0101 12:00:00.000000 100 syncedmem.cpp:71] Check failed: status == CURAND_STATUS_SUCCESS (102 vs. 0)  CURAND_STATUS_ALLOCATION_FAILED",
        # cufftResult
        "RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED",
    ],
    "cuda-error-unclassified": [
        # the title of nerdyrodent/VQGAN-CLIP#143 and Yzichen/FlashOCC#19 (torch's wording)
        "RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
        # PaddlePaddle's wording (PaddlePaddle/PaddleX#740)
        "OSError: (External) Cublas error, `CUSOLVER_STATUS_INTERNAL_ERROR`. An internal cuSolver operation failed.",
        # Caffe's CURAND_CHECK (rbgirshick/fast-rcnn#163)
        "F0809 20:24:03.616431 11559 math_functions.cu:401] Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)  CURAND_STATUS_LAUNCH_FAILURE",
        "RuntimeError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, m, n, dA, ldda, static_cast<float*>(dataPtr.get()), ipiv, info)`",
        "RuntimeError: CUDA error: CUSPARSE_STATUS_NOT_SUPPORTED when calling `cusparseSpMM(handle, opa, opb, &alpha, descA, descB, &beta, descC, valueType, CUSPARSE_SPMM_ALG_DEFAULT, buffer)`",
    ],
    "egl-device-display-unavailable": [
        # PyOpenGL OpenGL/raw/EGL/_errors.py, raised from eglInitialize (pyrender, MuJoCo)
        "OpenGL.raw.EGL._errors.EGLError: EGLError(err = EGL_NOT_INITIALIZED, baseOperation = eglInitialize, cArguments = (<OpenGL._opaque.EGLDisplay_pointer object at 0x7f0a>, c_long(0), c_long(0)), result = 0)",
        "EGL_NOT_INITIALIZED",
    ],
    "nccl-ib-transport-error": [
        # NCCL src/misc/ibvwrap.cc, the new and the old wording, and the retyped one without "Call to"
        "node1:12:34 [0] NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3",
        "node1:12:34 [0] NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
        "NCCL WARN NET/IB : ibv_modify_qp failed with 110 Connection timed out",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _codes(text: str):
    expl = explain_text(text)
    return expl, [c.code for c in expl.candidates]


def test_cusolver_internal_error_offers_gpu_memory():
    expl, codes = _codes("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`\n")
    assert codes[:1] == ["cuda-error-unclassified"]
    # the causes are listed deepest first (reasoning.deepest_first), GPU memory among them
    assert "gpu-out-of-memory" in expl.candidates[0].could_be
    assert expl.exit_code == 1


@pytest.mark.parametrize("line", [
    "CUSOLVER_STATUS_SUCCESS",                                   # a success name printed by a test
    "cusolverStatus_t status = CUSOLVER_STATUS_SUCCESS;",
    "CURAND_STATUS_SUCCESS",
    "assert(stat == CUSPARSE_STATUS_SUCCESS);",
    "EGL_NOT_INITIALIZEDX",                                      # no whole name
    "my_CUFFT_ALLOC_FAILED_handler",
])
def test_success_names_and_glued_names_are_no_failure(line):
    codes = match_codes(line)
    assert "gpu-out-of-memory" not in codes and "cuda-error-unclassified" not in codes
    assert "egl-device-display-unavailable" not in codes


def test_non_allocation_statuses_are_no_gpu_memory():
    for line in ("CUSOLVER_STATUS_INTERNAL_ERROR", "CURAND_STATUS_LAUNCH_FAILURE",
                 "CUSPARSE_STATUS_NOT_SUPPORTED"):
        assert "gpu-out-of-memory" not in match_codes(line), line


def test_modify_qp_with_other_errno_is_not_unreachable():
    # EPERM has no reading of its own: not the unreachable-peer signature
    codes = match_codes("NCCL WARN Call to ibv_modify_qp failed with 1 Operation not permitted")
    assert "nccl-ib-transport-error" not in codes
