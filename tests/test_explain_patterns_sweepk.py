"""Recall of explain from a sweep by generic queries (tensorflow gpu, onnxruntime gpu, windows cuda,
wsl gpu, jetson, colab gpu, conda cuda, apex, cupy, mmcv cuda) on the training side: 12 fresh
training threads (tests/corpus/explain/*.log with ``# collected: training-2026-12-02r``), widened by
class from the programs that raise the messages.

What the threads showed, and the class each fix covers:

- CUDA_HOME written as a path list (``export CUDA_HOME=$CUDA_HOME:/usr/local/cuda``): every build
  that joins CUDA_HOME with ``bin/nvcc`` runs a path with ``:`` inside, whichever way the build
  reports it (FileNotFoundError, setuptools' ``unable to execute``, ``error: command ... failed
  with exit status 127``; NVIDIA/apex 368, open-mmlab/mmcv 87 and 693). That is
  env-path-unusable, not a missing nvcc: nvcc-missing's own signature refines to it.
- onnxruntime's Python package that could not load its native module: ``Cannot load
  onnxruntime.capi. Error`` (capi/_pybind_state.py) and the ImportError of the next name imported
  from it (microsoft/onnxruntime 2861, 625); the onnxruntime-gpu build's CUDA/cuDNN are what it
  misses, unless onnxruntime's own warning names the Visual C++ runtime.
- ``no kernel image`` in onnxruntime's context (``Non-zero status code returned while running X
  node``, ``[ONNXRuntimeError]``) is the onnxruntime build lacking the GPU's architecture
  (ultralytics 5305: a GT 730), not torch's.
- THC's wording of CUBLAS_STATUS_EXECUTION_FAILED, ``cublas runtime error : the GPU program
  failed to execute``: the cuBLAS of a CUDA 9 torch build on Turing and newer (dbolya/yolact 77).
- a CUDA library named as missing in words rather than in the loader's ``cannot open shared
  object file``: a soname (``libcudart.so.8.0 shared object not found``, CERN/TIGRE 56) or a
  Windows DLL (``cublas64_100.dll ... are missing``, pytorch 29356; the Windows loader's ``...
  cudart64_110.dll was not found``); TensorFlow's start-up dso_loader notice stays out.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test

FAMILIES = {
    "env-path-unusable": [
        # torch.utils.cpp_extension / setup.py's subprocess (apex 368), setuptools spawn (mmcv 87),
        # distutils' failed command (mmcv 693)
        "FileNotFoundError: [Errno 2] No such file or directory: ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc': "
        "':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc'",
        "unable to execute '/usr/local/cuda-10.0:/usr/local/cuda-10.0:/usr/local/cuda-10.0:/bin/nvcc': No such file or directory",
        "error: command '/usr/local/cuda-10.1:/bin/nvcc' failed with exit status 127",
        "error: [Errno 2] No such file or directory: ':/usr/local/cuda-9.0/bin/nvcc'",
    ],
    "onnxruntime-cuda-libs-missing": [
        # onnxruntime python/_pybind_state.py and __init__.py (1.0-1.16)
        "UserWarning: Cannot load onnxruntime.capi. Error: 'DLL load failed: The specified module could not be found.'.",
        "ImportError: cannot import name 'get_all_providers' from 'onnxruntime.capi._pybind_state' "
        "(C:\\Programs\\Python\\Python37\\lib\\site-packages\\onnxruntime\\capi\\_pybind_state.py)",
        "ImportError: cannot import name 'RunOptions' from 'onnxruntime.capi._pybind_state'",
    ],
    "framework-gpu-arch-unsupported": [
        # onnxruntime core/framework/sequential_executor.cc with the CUDA EP's CUDA_CALL status text
        "[E:onnxruntime:, sequential_executor.cc:318 Execute] Non-zero status code returned while running Gemm node. "
        "Name:'gemm' Status Message: CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device",
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while "
        "running Relu node. Name:'Relu_1' Status Message: CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available "
        "for execution on the device",
    ],
    "cuda-math-library-too-old-for-gpu": [
        # THC's THCublasCheck (torch <= 1.x)
        "RuntimeError: cublas runtime error : the GPU program failed to execute at /pytorch/aten/src/THC/THCBlas.cu:411",
        "RuntimeError: cublas runtime error : the GPU program failed to execute at "
        "/opt/conda/conda-bld/pytorch_1549628766161/work/aten/src/THC/THCBlas.cu:258",
    ],
    "library-missing": [
        # users' and installers' words, and the Windows loader's dialog
        "libcudart.so.8.0 shared object not found",
        "libcublas.so.11 not found",
        "cublas64_100.dll, cusparse64_100.dll and a few others are missing from torch-1.3.0-cp37-cp37m-win_amd64.whl",
        "The code execution cannot proceed because cudart64_110.dll was not found.",
    ],
    # cuDNN's own DLL named missing: cudnn-unusable's (the cuDNN major the framework was built
    # for), as the loaders' other cuDNN wordings (docs/dev/context-rules.md)
    "cudnn-unusable": [
        "cudnn64_8.dll could not be found",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# users' prose that names the same causes
test_users_words = users_words_test({
    "my build fails with: No such file or directory: ':/usr/local/cuda/bin/nvcc'": "env-path-unusable",
    "after pip install onnxruntime-gpu I get Cannot load onnxruntime.capi. Error: 'DLL load failed'": "onnxruntime-cuda-libs-missing",
    "when installing, conda throws libcudart.so.8.0 shared object not found": "library-missing",
})


test_healthy_lines_name_nothing = healthy_test([
    # a CUDA_HOME that is fine, and a Windows nvcc path
    "Using CUDA_HOME='/usr/local/cuda' and nvcc at '/usr/local/cuda/bin/nvcc'",
    "nvcc path: 'C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/nvcc'",
    # onnxruntime importing normally
    "from onnxruntime.capi._pybind_state import get_all_providers, get_available_providers",
    # a CUDA DLL that was found and loaded
    "Successfully opened dynamic library cudart64_110.dll",
    "libcudart.so.12 found in /usr/local/cuda/lib64",
])


def test_a_plain_missing_nvcc_stays_nvcc_missing():
    for line in ("FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
                 "unable to execute '/usr/local/cuda-11.8/bin/nvcc': No such file or directory"):
        codes = [c.code for c in explain_text("step 1\n" + line + "\n").candidates]
        assert codes[:1] == ["nvcc-missing"], (line, codes)


def test_no_kernel_image_without_onnxruntime_stays_torch():
    codes = [c.code for c in explain_text(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n").candidates]
    assert codes[:1] == ["torch-arch-not-supported"], codes


def test_onnxruntime_capi_failure_that_names_the_vc_runtime_is_msvc():
    log = ("UserWarning: Cannot load onnxruntime.capi. Error: 'DLL load failed: The specified module could not be found.'.\n"
           "UserWarning: Please install the 2019 Visual C++ runtime and then try again.\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["msvc-runtime-missing"], codes


def test_tensorflow_dso_loader_notice_is_not_a_named_missing_library():
    """TensorFlow prints this at every start without a GPU set up; the new words-signature must not
    claim it (';' ends its window, the dlerror copy is excluded)."""
    kb = load()
    line = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            "'cudart64_110.dll'; dlerror: cudart64_110.dll not found")
    assert "cuda-library-named-missing" not in [e.id for e in kb.match_line(line)]


@pytest.mark.parametrize("sig_id,expected", [
    ("cuda-home-list-in-nvcc-path", ("env-path-unusable", 3)),
    ("ort-capi-native-module-not-loaded", ("onnxruntime-cuda-libs-missing", 2)),
    ("thc-cublas-execution-failed", ("cuda-math-library-too-old-for-gpu", 2)),
    ("cuda-library-named-missing", ("library-missing", 2)),
])
def test_signature_weights(sig_id, expected):
    kb = load()
    entries = [e for e in kb.entries if e.id == sig_id]
    assert entries, sig_id
    assert (entries[0].codes[0], entries[0].weight) == expected


def test_the_path_list_refinement_reads_the_path_list_signatures_regex():
    """nvcc-not-found hands a path-list nvcc line to env-path-unusable by the same regex the
    cuda-home-list-in-nvcc-path signature matches it with: one definition of that line, written
    in two places of the knowledge base (a refinement cannot name a signature)."""
    kb = load()
    signature = kb.by_id("cuda-home-list-in-nvcc-path").patterns[0].pattern
    refine = [r for r in kb.by_id("nvcc-not-found").refine if "env-path-unusable" in r.codes]
    assert [r.context.pattern for r in refine] == [signature]
