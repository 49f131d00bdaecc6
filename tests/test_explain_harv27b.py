"""harv27b: a third unbiased harvest scored blind, and the general fixes its misses ask for
(docs/dev/harv27b.md).

Ten new training-side logs sampled in search order (not by family); explain named five first
before any change. The misses the logs themselves can fix:
- a numbered source line an IPython traceback echoes whose code is a string literal (the
  argument of torch's ``raise RuntimeError(`` in ``_lazy_init``: "Cannot re-initialize CUDA in
  forked subprocess") was read as the message and ranked first (C: angelolab/Nimbus-Inference#12);
- glibc's ``undefined symbol: sgesdd`` for a BLAS/LAPACK routine (a wheel built against a
  system BLAS that is not installed: NVIDIA's Jetson torch wheels, pytorch/pytorch#51092) was
  read as a bare torch import failure: ``system-library-missing``;
- nvcc's ``identifier "__high2bfloat16" is undefined`` (cuda_bf16.hpp's bf16 intrinsics exist
  only for sm_80+ device code) was read by nothing: ``gpu-arch-lacks-dtype``;
- huggingface kernels' ``Either a revision or a version must be specified`` (a kernels release
  newer than transformers declares, odysseus-dev/odysseus#191) was read by nothing:
  ``dependency-version-mismatch``.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "system-library-missing": [
        # pytorch/pytorch#51092 (Jetson TX2, NVIDIA's torch 1.7 wheel)
        "ImportError: /home/dji/.local/lib/python3.6/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: sgesdd",
        # the Fortran name with its trailing underscore, and a CBLAS routine
        "OSError: /opt/venv/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: dgetrf_",
        "ImportError: /usr/lib/python3/dist-packages/scipy/linalg/_fblas.so: undefined symbol: cblas_sgemm",
    ],
    "gpu-arch-lacks-dtype": [
        # NX-AI/xlstm#50 (nvcc's front end, an extension built for sm_70)
        'error: identifier "__high2bfloat16" is undefined',
        '/tmp/ext/slstm_kernel.cu(57): error: identifier "__float2bfloat16" is undefined',
        'csrc/kernels.cuh(120): error: identifier "__hmul2_bf162" is undefined',
    ],
    "dependency-version-mismatch": [
        # kernels/layer/layer.py LayerRepository.__init__, as transformers' hub_kernels import hits it
        "ValueError: Either a revision or a version must be specified.",
        '    raise ValueError("Either a revision or a version must be specified.")',
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_blas_near_misses_are_not_a_missing_blas():
    # an undefined symbol of torch's own API (an extension built for another torch) and an MKL
    # symbol are other causes; a routine name that only starts like one is no LAPACK routine
    for line in ("ImportError: /site-packages/fused_ops.so: undefined symbol: _ZN3c104cuda20getCurrentCUDAStreamEa",
                 "ImportError: libtorch_cpu.so: undefined symbol: sgesddx_wrapper",
                 "ImportError: libtorch_cpu.so: undefined symbol: sgesdd.v2"):
        assert "system-library-missing" not in match_codes(line + "\n"), line


def test_bf16_intrinsic_near_misses():
    # another undefined identifier (THC's, gone from torch) is not a dtype the GPU lacks
    for line in ('error: identifier "THCudaCheck" is undefined',
                 'error: identifier "__half2float" is undefined'):
        assert "gpu-arch-lacks-dtype" not in match_codes(line + "\n"), line


def test_quoted_and_prefixed_variants():
    # in a markdown quote and in backticks, as issue pastes hold them
    assert _codes("> `ImportError: /usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cpu.so: undefined symbol: sgesdd`\n")[:1] \
        == ["system-library-missing"]
    assert _codes('    [rank0]: error: identifier "__high2bfloat16" is undefined\n')[:1] == ["gpu-arch-lacks-dtype"]


IPYTHON_LAZY_INIT = '''File ~\\AppData\\Local\\miniconda3\\envs\\Nimbus\\lib\\site-packages\\torch\\cuda\\__init__.py:293, in _lazy_init()
    288     raise RuntimeError(
    289         "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
    290         "multiprocessing, you must use the 'spawn' start method"
    291     )
    292 if not hasattr(torch._C, "_cuda_getDeviceCount"):
--> 293     raise AssertionError("Torch not compiled with CUDA enabled")
    294 if _cudart is None:
    295     raise AssertionError(
    296         "libcudart functions unavailable. It looks like you have a broken build?"
    297     )

AssertionError: Torch not compiled with CUDA enabled
'''


def test_ipython_echoed_string_literal_is_not_the_message():
    # angelolab/Nimbus-Inference#12: the fork message is a string of a branch not taken
    codes = _codes(IPYTHON_LAZY_INIT)
    assert codes[:1] == ["torch-cpu-only-build"]
    assert "cuda-initialized-before-fork" not in codes


def test_fork_message_as_raised_still_reads():
    # near-miss: the same words as the exception line torch raised are the message
    text = ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
            "multiprocessing, you must use the 'spawn' start method\n")
    assert _codes(text)[:1] == ["cuda-initialized-before-fork"]
    # and a gcc/clang echo ('  12 | "text"') is not an IPython source line: left as it was
    from stackpeel.explain.parser import ECHOED_STRING_RE
    assert ECHOED_STRING_RE.match('  143 | "Cannot re-initialize CUDA"') is None
    assert ECHOED_STRING_RE.match('    289         "Cannot re-initialize CUDA in forked subprocess."')
    assert ECHOED_STRING_RE.match("--> 12     f'bad {x}'")


def test_kernels_both_given_is_not_the_mismatch():
    # near-miss: the same check's other branch (a caller passing revision and version both)
    line = "ValueError: Either a revision or a version must be specified, not both.\n"
    assert "dependency-version-mismatch" not in match_codes(line)


def test_kernels_mismatch_in_an_abbreviated_traceback():
    # odysseus-dev/odysseus#191 as the maintainer quoted it: frames only, no exception line
    text = ('transformers/integrations/hub_kernels.py", line 89, in <module>\n'
            '    "cuda": LayerRepository(\n'
            'kernels/layer/layer.py", line 76, in __init__\n'
            '    raise ValueError("Either a revision or a version must be specified.")\n')
    assert _codes(text)[:1] == ["dependency-version-mismatch"]
