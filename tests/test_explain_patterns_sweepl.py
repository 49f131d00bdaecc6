"""Recall of explain on existing codes, widened by class from 12 fresh training threads sampled
by the blind sets' own generic queries (tests/corpus/explain/*.log with ``# collected:
training-2026-12-02t``) and from the programs that raise the messages.

What the threads showed, and the class each fix covers:

- causal-conv1d's pybind11 bindings (``causal_conv1d_fwd``, ``_bwd``, ``_update``, csrc/
  causal_conv1d.cpp) called by mamba-ssm (and forks that vendor its selective_scan_interface.py)
  with the argument list of another causal-conv1d release: pybind11 raises ``TypeError:
  causal_conv1d_fwd(): incompatible function arguments. The following argument types are
  supported:`` before any kernel runs (hustvl/Vim#95, Jiaxin-Ye/DepMamba#8,
  wurenkai/UltraLight-VM-UNet#34, each fixed by installing the release pair). That is
  dependency-version-mismatch, not a failed import or a torch ABI mismatch of causal-conv1d.
- a bare ``no kernel image`` / ``invalid device function`` in a log that names a compiled
  extension package anywhere (PyG's torch-scatter family, pytorch3d, nvdiffrast, tinycudann,
  MinkowskiEngine, 3DGS rasterizers) is that extension's architecture gap (extension-arch-missing;
  rusty1s/pytorch_scatter#204: scatter_sum ran, scatter_mul raised it in a self-built
  torch-scatter): the package names are clues of extension-arch-missing, read wherever they are;
  torch's own incompatibility warning keeps naming torch-arch-not-supported.
- Python <= 3.6's ``cannot import name 'X'`` (no ``from 'module'``; traveller59/spconv#508, two
  cumm releases side by side) is the same release-mismatch catch-all as the 3.7+ wording; a
  ``from torch... import`` / ``from triton... import`` frame before it reads as their codes.
- Paddle 1.x's ``Can not find library: libcudnn.so`` (as PaddlePaddle/ERNIE's FAQ quotes it) and
  the enforce location of its only cuDNN check, ``at (/paddle/.../dynload/cudnn.cc:63)`` (Paddle
  24953), are cudnn-unusable like Paddle's other cuDNN load failures; the same words for
  libnccl/libcublas... are library-missing.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test

FAMILIES = {
    "dependency-version-mismatch": [
        # pybind11/pybind11.h dispatcher, for the causal-conv1d bindings (csrc/causal_conv1d.cpp)
        "TypeError: causal_conv1d_fwd(): incompatible function arguments. The following argument types are supported:",
        "TypeError: causal_conv1d_bwd(): incompatible function arguments. The following argument types are supported:",
        "TypeError: causal_conv1d_update(): incompatible function arguments. The following argument types are supported:",
        # as users title it (wurenkai/UltraLight-VM-UNet#34, Jiaxin-Ye/DepMamba#8)
        "causal_conv1d_fwd(): incompatible function arguments.",
    ],
}

FAMILIES["dependency-version-mismatch"] += [
    # CPython <= 3.6 Python/ceval.c import_from
    "ImportError: cannot import name 'NVRTCMode'",
    "ImportError: cannot import name 'ConvFwdAndBwdInput'",
]
FAMILIES["cudnn-unusable"] = [
    # Paddle 1.x dynload, as PaddlePaddle/ERNIE's FAQ4 quotes it
    "Can not find library: libcudnn.so. Please try to add the lib path to LD_LIBRARY_PATH.",
    # EnforceCUDNNLoaded's location, fluid and phi
    "PreconditionNotMetError: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion. (at /paddle/paddle/fluid/platform/dynload/cudnn.cc:63)",
    "Red hat 4.85nGetVersion at (/paddle/paddle/fluid/platform/dynload/cudnn.cc:63)",
    "  [Hint: cudnn_dso_handle should not be null.] (at ../paddle/phi/backends/dynload/cudnn.cc:64)",
]
FAMILIES["library-missing"] = [
    # Paddle 1.x dynload, as PaddlePaddle/ERNIE's FAQ5 quotes it
    "Can not find library: libnccl.so. Please try to add the lib path to LD_LIBRARY_PATH.",
    "Can not find library: libcublas.so",
]

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# users' own words for the same cause
test_users_words_name_the_cause = users_words_test({
    "TypeError: causal_conv1d_fwd() incompatible function arguments": "dependency-version-mismatch",
    "Problem about selective_scan_interface.py: causal_conv1d_fwd(): incompatible function arguments": "dependency-version-mismatch",
    "说是 Can not find library: libcudnn.so. 我也查了之前几个相同问题的": "cudnn-unusable",
})


@pytest.mark.parametrize("frame,code", [
    ("    from torch.nn.attention import sdpa_kernel", "torch-too-old-for-package"),
    ("    from triton.compiler.compiler import AttrsDescriptor", "triton-torch-version-mismatch"),
    ("    from cumm.gemm.constants import NVRTCMode", "dependency-version-mismatch"),
])
def test_the_py36_import_wording_reads_the_frame_that_imports(frame, code):
    log = ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
           + frame + "\nImportError: cannot import name '" + frame.split()[-1] + "'\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == [code], codes


def test_the_py36_rule_leaves_the_37_wording_to_its_siblings():
    kb = load()
    ids = [e.id for e in kb.match_line("ImportError: cannot import name 'x' from 'cumm.gemm.constants' (/p/cumm/gemm/constants.py)")]
    assert "cannot-import-name-py36" not in ids and "cannot-import-name-from-module" in ids


def test_the_binding_arity_line_beats_the_causal_conv1d_import_guesses():
    """The thread's shape: the mamba-ssm frame, then pybind11's TypeError and its signature list."""
    log = (
        '  File "/root/miniconda3/lib/python3.8/site-packages/mamba_ssm/ops/selective_scan_interface.py", line 187, in forward\n'
        "    conv1d_out = causal_conv1d_cuda.causal_conv1d_fwd(\n"
        "TypeError: causal_conv1d_fwd(): incompatible function arguments. The following argument types are supported:\n"
        "    1. (arg0: torch.Tensor, arg1: torch.Tensor, arg2: Optional[torch.Tensor], arg3: Optional[torch.Tensor], arg4: bool) -> torch.Tensor\n"
    )
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["dependency-version-mismatch"], codes


def test_the_binding_rule_is_exact_and_anchored_on_the_binding_name():
    kb = load()
    ids = [e.id for e in kb.match_line("TypeError: causal_conv1d_fwd(): incompatible function arguments.")]
    assert "causal-conv1d-binding-arity" in ids
    entry = next(e for e in kb.match_line("causal_conv1d_update(): incompatible function arguments")
                 if e.id == "causal-conv1d-binding-arity")
    assert entry.weight == 3
    # pybind11's wording for any other function is not this rule's
    assert "causal-conv1d-binding-arity" not in [
        e.id for e in kb.match_line("TypeError: forward(): incompatible function arguments.")]


EXTENSION_MENTIONS = [
    "I install the torch_scatter 2.0.6 and I meet this error when I use scatter_mul on cuda.",
    "from torch_scatter import scatter",
    "pip install torch-sparse -f https://data.pyg.org/whl/torch-2.1.0+cu121.html",
    "  File \"/opt/conda/lib/python3.10/site-packages/pytorch3d/renderer/mesh/rasterize_meshes.py\", line 230, in forward",
    "glctx = dr.RasterizeCudaContext()  # nvdiffrast",
    "import tinycudann as tcnn",
]
ARCH_FAILURES = [
    "RuntimeError: CUDA error: invalid device function",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
]


@pytest.mark.parametrize("mention", EXTENSION_MENTIONS)
@pytest.mark.parametrize("failure", ARCH_FAILURES)
def test_an_arch_gap_in_a_log_that_names_a_compiled_extension_is_the_extensions(mention, failure):
    log = "\n".join([mention, "", "cuda:0", "tensor([0, 1, 2, 3], device='cuda:0')",
                     "Traceback (most recent call last):", '  File "test.py", line 11, in <module>',
                     "    print(torch.arange(4, device=device))", failure, "Segmentation fault (core dumped)"]) + "\n"
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["extension-arch-missing"], codes


@pytest.mark.parametrize("failure", ARCH_FAILURES)
def test_torchs_own_warning_still_names_torch_with_an_extension_in_the_log(failure):
    log = "\n".join([
        "from torch_scatter import scatter",
        "UserWarning: ",
        "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.",
        "step 1", "step 2", "step 3",
        failure]) + "\n"
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["torch-arch-not-supported"], codes


@pytest.mark.parametrize("failure", ARCH_FAILURES)
def test_without_an_extension_named_the_bare_arch_gap_stays_torchs(failure):
    codes = [c.code for c in explain_text("step 3/10\n" + failure + "\n").candidates]
    assert codes[:1] == ["torch-arch-not-supported"], codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "conv1d_out = causal_conv1d_cuda.causal_conv1d_fwd(x, conv1d_weight, conv1d_bias, None, None, None, True)",
    "causal-conv1d 1.4.0 and mamba-ssm 2.2.2 installed; causal_conv1d_fwd arguments match",
    "Successfully installed torch-scatter-2.1.2+pt21cu121 torch-sparse-0.6.18+pt21cu121",
    "pytorch3d 0.7.5 built for sm_86 sm_89",
    "Found library: libcudnn.so.8 in /usr/local/cuda/lib64",
    "[ 42%] Building CXX object paddle/phi/backends/dynload/CMakeFiles/phi_dynload_cuda.dir/cudnn.cc.o",
    "I0616 17:16:24.460505  2840 dynamic_loader.cc:227] Try to find library: libcudnn.so from default system path.",
])
