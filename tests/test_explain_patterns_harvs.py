"""Harvest harvs: crash, kill and memory symptoms whose thread established the cause
(docs/dev/harvest-harvs.md). cuDNN's and cuBLAS's ALLOC_FAILED statuses are GPU memory running
out (both libraries document them as a failed cudaMalloc inside the library); cuDNN's
INTERNAL_ERROR is a symptom whose likeliest causes start with GPU memory (NVIDIA's triage of
pytorch/pytorch#81620); a child's return code -9 and a Chinese sentence quoting the shell's
"Killed" are the OOM killer's SIGKILL, read from the words of the line.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from stackpeel.explain.parser import HARD_ERROR_RE
from test_explain_patterns import family_tests

FAMILIES = {
    "gpu-out-of-memory": [
        # amdegroot/ssd.pytorch#33, the title as the user wrote it
        "CUDNN_STATUS_ALLOC_FAILED",
        # torch aten/src/ATen/cudnn/Exceptions.h AT_CUDNN_CHECK
        "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
        # torch aten/src/ATen/cuda/Exceptions.h TORCH_CUDABLAS_CHECK (QwenLM/Qwen3#873)
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        # TensorFlow stream_executor cuda_dnn.cc / cuda_blas.cc
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED",
        "E tensorflow/stream_executor/cuda/cuda_blas.cc:238] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
        # CNTK's wording
        "cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=host ; expr=finder(calgo, algoPerf)",
        # lua torch's cudnn bindings (cudnn/init.lua errcheck)
        "/home/u/torch/install/share/lua/5.1/cudnn/init.lua:58: Error in CuDNN: CUDNN_STATUS_ALLOC_FAILED "
        "(cudnnFindConvolutionForwardAlgorithm)",
    ],
    "cudnn-call-failed": [
        # torch AT_CUDNN_CHECK; CNTK (Azure/ObjectDetectionUsingCntk#2); TensorFlow cuda_dnn.cc
        "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
        "cuDNN failure 4: CUDNN_STATUS_INTERNAL_ERROR",
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:371] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
        "`cuDNN error: CUDNN_STATUS_INTERNAL_ERROR`",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _first(text: str):
    expl = explain_text(text)
    return expl, [c.code for c in expl.candidates]


def test_internal_error_offers_gpu_memory_among_its_causes():
    expl, codes = _first("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n")
    assert codes[:1] == ["cudnn-call-failed"]
    assert "gpu-out-of-memory" in expl.candidates[0].could_be


@pytest.mark.parametrize("line", [
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
    "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR",
])
def test_other_cudnn_statuses_keep_their_reading(line):
    # the library statuses that are no allocation stay the symptom, without GPU memory as a cause
    expl, codes = _first(line + "\n")
    assert codes[:1] == ["cudnn-call-failed"]
    assert "gpu-out-of-memory" not in match_codes(line)


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
    "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
    "cudnnStatus_t CUDNN_STATUS_SUCCESS = 0",
])
def test_no_allocation_status_is_no_gpu_memory(line):
    assert "gpu-out-of-memory" not in match_codes(line)


@pytest.mark.parametrize("text", [
    "ERROR: error code -9\n",                                    # NVIDIA/DIGITS#1362
    "subprocess exited: exit status -9\n",
    "程序显示了Killed。请问这是出于什么原因呢？\n",                  # ShuweiShao/AF-SfMLearner#38
    "训练的时候总是出现Killed\n",
])
def test_sigkill_in_words_reads_as_the_oom_killer(text):
    expl, codes = _first(text)
    assert codes[:1] == ["host-oom-killed"], codes
    assert expl.exit_code == 1


@pytest.mark.parametrize("text", [
    "ERROR: error code -90\n",            # another number
    "ERROR: error code 9\n",              # a plain code, no signal
    "the worker Killedlist was empty\n",  # no Chinese text around it
])
def test_near_misses_are_not_the_oom_killer(text):
    _, codes = _first(text)
    assert codes[:1] != ["host-oom-killed"], codes


def test_killed_glued_to_chinese_is_an_error_line():
    assert HARD_ERROR_RE.search("程序显示了Killed。")
    assert not HARD_ERROR_RE.search("显示了Killedlist")


def test_killed_retyped_in_lower_case_alone_is_an_error_line():
    # the last line of a pasted log (video-llava-13): the user's own 'killed' under bash's 'Killed'
    assert HARD_ERROR_RE.search("killed")
    assert HARD_ERROR_RE.search("  killed  ")
    assert not HARD_ERROR_RE.search("the process was killed by me")
    assert not HARD_ERROR_RE.search("killed_processes = 0")
