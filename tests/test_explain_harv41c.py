"""harv41c: an unbiased harvest of mixture-of-experts, FP8 and low-precision kernel threads
(TransformerEngine, torch._scaled_mm / float8, DeepGEMM, FBGEMM, Marlin, NVSHMEM, CUTLASS DSL,
int4), scored blind, and the general fixes its misses ask for (docs/dev/harv41c.md).

Sixteen new training-side logs; explain named six first before any change. The fixed misses:
- TransformerEngine installed without its framework extra (`pip install transformer_engine`
  instead of `transformer_engine[pytorch]`): ``module 'transformer_engine' has no attribute
  'pytorch'``, its loader's StopIteration at ``so_path = next(so_dir.glob(...))`` and its
  ``Could not find package transformer_engine_torch`` (NVIDIA/TransformerEngine#1379); now
  ``kernel-extension-not-built`` (A1);
- TransformerEngine built from a checkout without submodules: ``cudnn_frontend.h: No such file or
  directory`` and TE's own ``Could not find cuDNN frontend API. Try running 'git submodule update
  --init --recursive'`` (NVIDIA/TransformerEngine#171); now ``git-submodules-missing`` (A2: the
  generic missing-header catch-all named it before);
- torch 2.1/2.2's sm90-only fp8 check ``torch._scaled_mm is only supported on devices with compute
  capability >= 9.0``: on an Ada GPU (8.9) a newer torch runs it (Comfy-Org/ComfyUI#4531,
  meta-pytorch/float8_experimental#197), on an older one the GPU has no fp8 (A1 + C3, the GPU's
  capability decides); with it an Ada "4060ti" and "which have a compute capability of 8.9" are
  read as the GPU's capability;
- torch 2.1's fp8 matmul on a pre-Ada GPU: ``CUBLAS_STATUS_NOT_SUPPORTED when calling
  cublasLtMatmulAlgoGetHeuristic`` beside _scaled_mm/float8 on a GPU below 8.9
  (pytorch/pytorch#108411); now ``gpu-arch-lacks-dtype`` over the bare cuBLAS status (C1);
- MLIR Python bindings whose C-API library is another build (``_mlir_libs/...so: undefined symbol:
  mlir...``, the CuTe DSL in NVIDIA/cutlass#2801); now ``dependency-version-mismatch`` (A1).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.combinations import facts_from_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# NVIDIA/TransformerEngine: the meta-package without its framework extra
TE_NO_ATTR = "AttributeError: module 'transformer_engine' has no attribute 'pytorch'"
TE_NO_ATTR_JAX = "AttributeError: module 'transformer_engine' has no attribute 'jax'"
TE_NO_PACKAGE = ("INFO:root:Could not find package transformer_engine_torch. Install transformer-engine using "
                 "'pip3 install transformer-engine[pytorch]==VERSION'")
TE_GLOB_19 = '    so_path = next(so_dir.glob(f"*.{extension}"))'
TE_GLOB_113 = '    so_path = next(so_dir.glob(f"{module_name}.*.{extension}"))'
TE_GLOB_TORCH = '    so_path = next(so_dir.glob(f"transformer_engine_torch.*.{extension}"))'
# NVIDIA/TransformerEngine: the cuDNN frontend submodule (3rdparty/cudnn-frontend)
TE_CUDNN_FE_ASSERT = ("AssertionError: Could not find cuDNN frontend API. Try running 'git submodule update "
                      "--init --recursive' within the Transformer Engine source.")
TE_CUDNN_FE_GCC = ("/opt/transformer-engine/transformer_engine/common/fused_attn/utils.h:11:10: fatal error: "
                   "cudnn_frontend.h: No such file or directory")
TE_CUDNN_FE_CLANG = "transformer_engine/common/util/cudnn.h:17:10: fatal error: 'cudnn_frontend.h' file not found"
# MLIR Python bindings against another build of their C-API library
CUTE_DSL_MLIR = ("ImportError:  cutlass/python/CuTeDSL/cutlass/_mlir/_mlir_libs/_mlirDialectsCuda.cpython-310-"
                 "aarch64-linux-gnu.so: undefined symbol: mlirTypeIsACudaLaunchConfigType")
JAXLIB_MLIR = ("ImportError: /opt/venv/lib/python3.11/site-packages/jaxlib/mlir/_mlir_libs/_mlir.so: "
               "undefined symbol: mlirOperationPrintWithState")

FAMILIES = {
    "kernel-extension-not-built": [TE_NO_ATTR, TE_NO_ATTR_JAX, TE_NO_PACKAGE],
    "git-submodules-missing": [TE_CUDNN_FE_ASSERT, TE_CUDNN_FE_GCC, TE_CUDNN_FE_CLANG],
    "dependency-version-mismatch": [CUTE_DSL_MLIR, JAXLIB_MLIR],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)

OLD_SCALED_MM = "RuntimeError: torch._scaled_mm is only supported on devices with compute capability >= 9.0)"
NEW_SCALED_MM = ("RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 "
                 "or 8.9, or ROCm MI300+")


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_te_loader_glob_lines_are_its_signature():
    for line in (TE_GLOB_19, TE_GLOB_113, TE_GLOB_TORCH):
        assert _ids(line) == ["transformer-engine-framework-extension-missing"], line


def test_te_stopiteration_traceback_names_the_missing_extension():
    # NVIDIA/TransformerEngine#1147 / #1541: `pip install transformer-engine` without [pytorch]
    text = (
        ">>> import transformer_engine.pytorch\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/transformer_engine/pytorch/__init__.py", line 22, in _load_library\n'
        '    so_path = next(so_dir.glob(f"*.{extension}"))\n'
        "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "StopIteration\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_te_issue_1379_body():
    text = (
        "AttributeError: module 'transformer_engine' has no attribute 'pytorch'\n\n"
        "I encountered the error AttributeError: module 'transformer_engine' has no attribute 'pytorch' when "
        "installing TE using pip install transformer_engine. Does anyone have any good solutions?\n\n"
        "transformer_engine==1.13.0\npytorch==2.3.0\ncuda==12.1\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_te_near_misses_keep_their_reading():
    # another attribute of TE's own torch module, another project's glob, TE's version-mismatch error
    assert "transformer-engine-framework-extension-missing" not in _ids(
        "AttributeError: module 'transformer_engine.pytorch' has no attribute 'fp8_model_init'")
    assert "transformer-engine-framework-extension-missing" not in _ids(
        "    so_path = next(SO_DIR.glob(PYBIND_SO_PATTERN))")
    assert "transformer-engine-framework-extension-missing" not in _ids(
        "RuntimeError: Found transformer_engine_torch v2.1 but transformer-engine-cu12 v2.2. Install "
        "transformer-engine using 'pip3 install transformer-engine[pytorch]==VERSION'")


def test_te_source_build_without_submodules():
    # NVIDIA/TransformerEngine#171 (the CI build log of a checkout without submodules)
    text = (
        "When building from the head of `main`, the following error occurred:\n"
        "/opt/transformer-engine/transformer_engine/common/fused_attn/utils.h:11:10: fatal error: "
        "cudnn_frontend.h: No such file or directory\n"
        "#8 455.6            11 | #include <cudnn_frontend.h>\n"
    )
    assert _codes(text)[:1] == ["git-submodules-missing"]


def test_other_missing_headers_keep_their_reading():
    assert "transformer-engine-cudnn-frontend-submodule" not in _ids(
        "fatal error: cudnn.h: No such file or directory")
    assert "transformer-engine-cudnn-frontend-submodule" not in _ids(
        "fatal error: cudnn_frontend_utils.h: No such file or directory")
    assert "transformer-engine-cudnn-frontend-submodule" not in _ids(
        "-- Found cuDNN frontend API: /opt/TransformerEngine/3rdparty/cudnn-frontend/include")


def test_old_scaled_mm_on_ada_names_the_old_torch():
    # Comfy-Org/ComfyUI#4531: torch 2.2's sm90-only check on a 4060 Ti
    text = (
        "torch._scaled_mm is only supported on devices with compute capability >= 9.0\n\n"
        "Using --fast I get the above error. However running this snippet in the same venv as comfy:\n"
        "['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']\n"
        "shows I do have the capability to run 9.0 on a 4060ti 16Gb.\n"
    )
    assert _codes(text)[:1] == ["torch-too-old-for-package"]
    ada = OLD_SCALED_MM + "\nGPU 0: NVIDIA GeForce RTX 4090\n"
    assert _codes(ada)[:1] == ["torch-too-old-for-package"]
    prose = (OLD_SCALED_MM + "\nPossible to add support for the NVIDIA Ada Lovelace cards, which have a compute "
             "capability of 8.9?\n")
    assert _codes(prose)[:1] == ["torch-too-old-for-package"]


def test_old_scaled_mm_elsewhere_names_the_gpu():
    assert _codes(OLD_SCALED_MM + "\nGPU 0: NVIDIA A100-SXM4-80GB\n")[:1] == ["gpu-arch-lacks-dtype"]
    assert _codes(OLD_SCALED_MM + "\n")[:1] == ["gpu-arch-lacks-dtype"]


def test_new_scaled_mm_wording_keeps_its_reading():
    # torch 2.3+'s wording is fp8-needs-sm89's (the GPU lacks fp8 whatever torch)
    ids = _ids(NEW_SCALED_MM)
    assert "fp8-needs-sm89" in ids
    assert "scaled-mm-sm90-only-torch" not in ids and "scaled-mm-sm90-only-torch-on-ada" not in ids
    assert _codes(NEW_SCALED_MM + "\nGPU 0: NVIDIA GeForce RTX 4090\n")[:1] == ["gpu-arch-lacks-dtype"]


CUBLASLT = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmulAlgoGetHeuristic( "
            "ltHandle, computeDesc.descriptor(), Adesc.descriptor(), Bdesc.descriptor(), Cdesc.descriptor(), "
            "Ddesc.descriptor(), preference.descriptor(), 1, &heuristicResult, &returnedResult)`")


def test_cublaslt_fp8_on_ampere_names_the_gpu():
    # pytorch/pytorch#108411 (torch 2.1, before the capability check)
    text = (
        "If we run this on a GPU which does not support float8 mm (such as NVIDIA A100), we currently get\n"
        "Traceback (most recent call last):\n"
        '  File "/tmp/scaled_mm_simple.py", line 5, in <module>\n'
        "    res = torch._scaled_mm(x1, x2)\n"
        + CUBLASLT + "\n"
    )
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_cublaslt_without_fp8_or_old_gpu_keeps_its_reading():
    # an fp8 _scaled_mm on a Hopper GPU (a dtype pairing cuBLASLt lacks), a bf16 Lt call on an A100
    hopper = "    out = torch._scaled_mm(a, b)\nGPU 0: NVIDIA H100 80GB HBM3\n" + CUBLASLT + "\n"
    assert _codes(hopper)[:1] != ["gpu-arch-lacks-dtype"]
    ampere_bf16 = "model.to(torch.bfloat16)\nGPU 0: NVIDIA A100-SXM4-80GB\n" + CUBLASLT + "\n"
    assert _codes(ampere_bf16)[:1] != ["gpu-arch-lacks-dtype"]


def test_mlir_near_misses_keep_their_reading():
    # a C++-mangled MLIR symbol, and an mlir-named symbol in a library outside _mlir_libs
    assert "mlir-python-bindings-undefined-capi-symbol" not in _ids(
        "ImportError: /x/triton/_C/libtriton.so: undefined symbol: _ZN4mlir11MLIRContextC1Ev")
    assert "mlir-python-bindings-undefined-capi-symbol" not in _ids(
        "ImportError: /x/site-packages/torch/lib/libtorch.so: undefined symbol: mlirFooBar")


def test_gpu_facts_read_the_new_spellings():
    assert facts_from_text("shows I do have the capability to run 9.0 on a 4060ti 16Gb.\n").versions.get(
        "gpu_cc") == ["8.9"]
    assert facts_from_text("the NVIDIA Ada Lovelace cards, which have a compute capability of 8.9?\n").versions.get(
        "gpu_cc") == ["8.9"]
    # a requirement is no GPU's capability
    assert "gpu_cc" not in facts_from_text("GPUs that have a compute capability of 8.0 or higher\n").versions
