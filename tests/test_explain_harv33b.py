"""harv33b: a sixteenth unbiased harvest (hosted notebooks and rented GPU machines: Colab, Kaggle,
SageMaker, Azure, RunPod, Kubernetes notebooks), scored blind, and the general fixes its misses ask
for (docs/dev/harv33b.md).

Twenty-one new training-side logs; explain named fifteen first before any change. The fixed misses
(both A2, a specific message caught only by a generic or sibling rule):
- ``OSError: libtorch_cuda_cu.so: cannot open shared object file``: torch 1.8-1.12's CUDA wheels
  split libtorch_cuda into libtorch_cuda_cu.so and libtorch_cuda_cpp.so (BUILD_SPLIT_CUDA,
  c10/macros/Export.h) and torch.utils.cpp_extension linked extensions against them; any other
  torch build (a CPU wheel, the later single-library CUDA wheels) has no such file, so an extension
  that asks for it was built for another torch: ``extension-torch-mismatch`` (rusty1s/pytorch_scatter
  #223: a torch-scatter wheel for another torch on Colab). explain had the generic
  ``system-library-missing``;
- Triton's ``Internal Triton PTX codegen error`` with ptxas's ``Feature '...' requires .target
  sm_60 or higher``: Triton compiles for the GPU it runs on, so a feature needing sm_60/sm_70 means
  a GPU below compute capability 7.0 (Colab's default K80), which no Triton supports:
  ``triton-gpu-too-old`` (triton-lang/triton#496). explain had ``framework-gpu-arch-unsupported``
  (the nvcc-build reading of the same ptxas line).
Each message is the program's own text or a training-side thread's paste, run through the wrappers
pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# ld.so for an extension linked against a split-CUDA torch, under a torch without the split
SPLIT_CU = "OSError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory"
SPLIT_CPP = ("ImportError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory")
# Triton's compiler wrapping ptxas's stderr (triton-lang/triton#496, as the parser joins the two lines)
TRITON_SM60 = ("RuntimeError: Internal Triton PTX codegen error: ptxas /tmp/fileot19Lw, line 38; error   : "
               "Feature 'scopes on atomic operations' requires .target sm_60 or higher")

FAMILIES = {
    "extension-torch-mismatch": [SPLIT_CU, SPLIT_CPP],
    "triton-gpu-too-old": [TRITON_SM60],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_split_cuda_library_is_its_own_signature():
    assert "torch-split-cuda-library-missing" in _ids(SPLIT_CU)
    assert "torch-split-cuda-library-missing" in _ids(SPLIT_CPP)


def test_pytorch_scatter_colab_report_names_extension_torch_mismatch():
    # rusty1s/pytorch_scatter#223 (the reporter's title and text)
    text = (
        "OSError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n"
        "\n"
        "Lately, I'm having an installation issue with torch-scatter.\n"
        "\n"
        "Google Colab to reproduce (set runtime to GPU - seems to work on CPU)\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_split_cuda_library_in_an_import_traceback():
    # the shape such imports take (torch_sparse loading its ops through torch.ops.load_library)
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    import torch_sparse\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch_sparse/__init__.py", line 19, in <module>\n'
        "    torch.ops.load_library(spec.origin)\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch/_ops.py", line 643, in load_library\n'
        "    ctypes.CDLL(path)\n"
        '  File "/usr/lib/python3.10/ctypes/__init__.py", line 374, in __init__\n'
        "    self._handle = _dlopen(self._name, mode)\n"
        "OSError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_torch_own_unsplit_libraries_keep_their_reading():
    # near-misses: libtorch_cuda.so and libc10.so are every CUDA torch's own files, not the split.
    # libc10.so missing is an extension imported without torch (library-missing's
    # torch-library-cannot-open); since harv43b libtorch_cuda.so alone missing is a torch without its
    # CUDA libraries (torch-cpu-only-build's extension-needs-torch-cuda-library: an extension links
    # libc10 first and the CUDA libraries last, so libc10 was found)
    for line, sig in (
            ("ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory",
             "extension-needs-torch-cuda-library"),
            ("ImportError: libc10.so: cannot open shared object file: No such file or directory",
             "torch-library-cannot-open")):
        assert "torch-split-cuda-library-missing" not in _ids(line)
        assert sig in _ids(line)


def test_split_library_named_without_the_loader_error_stays_quiet():
    # a build log listing the split libraries is no failure
    text = ("-- Installing: /opt/libtorch/lib/libtorch_cuda_cu.so\n"
            "-- Installing: /opt/libtorch/lib/libtorch_cuda_cpp.so\n")
    assert "extension-torch-mismatch" not in _codes(text)


def test_triton_k80_colab_report_names_triton_gpu_too_old():
    # triton-lang/triton#496 (the reporter's paste, lines as printed)
    text = (
        "Repro: run the first example. Notebook here\n"
        "\n"
        "```\n"
        "RuntimeError: Internal Triton PTX codegen error: \n"
        "ptxas /tmp/fileot19Lw, line 38; error   : Feature 'scopes on atomic operations' requires .target sm_60 or higher\n"
        "ptxas /tmp/fileot19Lw, line 93; error   : Feature 'scopes on atomic operations' requires .target sm_60 or higher\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n"
        "```\n"
    )
    assert _codes(text)[:1] == ["triton-gpu-too-old"]


def test_triton3_ptxas_error_on_a_pascal_gpu_names_triton_gpu_too_old():
    # Triton 3's wording (triton/backends/nvidia/compiler.py make_cubin raises PTXASError with the
    # `ptxas` stderr), a feature of sm_70 asked of a GPU below it
    text = (
        "triton.runtime.errors.PTXASError: PTX Assembler Error: `ptxas` stderr:\n"
        "ptxas /tmp/tmpa1b2c3.ptx, line 57; error   : Feature 'ldmatrix' requires .target sm_70 or higher\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n"
    )
    assert _codes(text)[:1] == ["triton-gpu-too-old"]


def test_ptxas_feature_in_an_nvcc_build_keeps_framework_reading():
    # near-miss: the same ptxas line from nvcc building an extension (no Triton) is the build's
    # target, not the GPU Triton runs on (mit-han-lab/llm-awq#204's shape)
    text = (
        "ptxas /tmp/tmpxft_0000a1b2_00000000-6_gemm_cuda_gen.ptx, line 889; error   : "
        "Feature '.m16n8k16' requires .target sm_80 or higher\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n"
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 255\n"
    )
    assert "triton-gpu-too-old" not in _codes(text)[:1]


def test_triton_bf16_on_a_t4_is_not_read_as_an_old_gpu():
    # near-miss: sm_80 features (bf16) under Triton on a T4 (sm_75) are a dtype the GPU lacks,
    # not a GPU below Triton's minimum (unsloth#501's shape)
    text = (
        "RuntimeError: Internal Triton PTX codegen error: \n"
        "ptxas /tmp/compile-ptx-src-38292b, line 336; error   : Feature '.bf16' requires .target sm_80 or higher\n"
        "ptxas /tmp/compile-ptx-src-38292b, line 336; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher\n"
    )
    assert "triton-gpu-too-old" not in _codes(text)
