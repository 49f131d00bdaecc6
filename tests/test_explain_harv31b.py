"""harv31b: a ninth unbiased harvest, framed on research code that builds its own CUDA/C++
extensions (Gaussian splatting, nvdiffrast, tiny-cuda-nn, DCNv2, PyG's torch-scatter/-sparse,
apex, mmcv ...), scored blind, and the general fixes its misses ask for (docs/dev/harv31b.md).

Nineteen new training-side logs; explain named nine first before any change. The fixed misses
were a program's own message with no signature (A1) or read as a generic build failure:
- MSVC's STL refusing an older CUDA front end (``error STL1002: Unexpected compiler version,
  expected CUDA 12.4 or newer.``), the Visual Studio half of the host-compiler pairing:
  ``host-compiler-unsupported-by-nvcc`` (peylnog/ContinuousSR#4);
- torch's JIT build looking up cl.exe with ``where cl`` outside a developer prompt:
  ``windows-compiler-unusable`` (apple/ml-sharp#52);
- the legacy TH library (``TH/TH.h``, ``THFloatBlas_gemv``) gone from torch, like THC:
  ``extension-source-torch-api-removed`` (CharlesShang/DCNv2#136, lucasjinreal/DCNv2_latest#55,
  JialianW/TraDeS#2);
- PyG's import check reporting the extension's CUDA version as 0.0 (compiled without CUDA):
  ``kernel-extension-not-built`` (rusty1s/pytorch_sparse#41).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "host-compiler-unsupported-by-nvcc": [
        # nvcc's report of the STL's static_assert (peylnog/ContinuousSR#4, VS 2022 17.10+)
        'static assertion failed with "error STL1002: Unexpected compiler version, expected CUDA 12.4 or newer."',
        # the older STL's #error form, as MSVC prints it (yvals_core.h, VS 2019)
        "yvals_core.h(493): fatal error C1189: #error:  STL1002: Unexpected compiler version, "
        "expected CUDA 10.1 Update 2 or newer.",
    ],
    "windows-compiler-unusable": [
        # torch/utils/cpp_extension.py _write_ninja_file's `where cl` (apple/ml-sharp#52)
        "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",
    ],
    "extension-source-torch-api-removed": [
        # gcc on an extension that includes the removed TH header (CharlesShang/DCNv2#136)
        "DCNv2/src/cpu/dcn_v2_im2col_cpu.cpp:9:10: fatal error: TH/TH.h: No such file or directory",
        # clang's wording of the same include
        "src/cpu/dcn_v2_cpu.cpp:7:10: fatal error: 'TH/TH.h' file not found",
        # MSVC's wording (C1083)
        "dcn_v2_cpu.cpp(7): fatal error C1083: Cannot open include file: 'TH/TH.h': No such file or directory",
        # the removed per-type TH BLAS call (JialianW/TraDeS#2, gcc 7.5)
        "src/cpu/dcn_v2_cpu.cpp:224:9: error: 'THFloatBlas_gemv' was not declared in this scope",
        # nvcc's wording for a removed TH tensor function
        'src/cuda/roi_align.cu(41): error: identifier "THFloatTensor_data" is undefined',
    ],
    "kernel-extension-not-built": [
        # torch_sparse/__init__.py with cuda_version() == -1 (rusty1s/pytorch_sparse#41)
        "RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA "
        "versions. PyTorch has CUDA version 10.1 and torch_sparse has CUDA version 0.0. Please "
        "reinstall the torch_sparse that matches your PyTorch install.",
        # torch_scatter's twin of the same check
        "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA "
        "versions. PyTorch has CUDA version 11.8 and torch_scatter has CUDA version 0.0. Please "
        "reinstall the torch_scatter that matches your PyTorch install.",
    ],
}


# (harv31b skipped the terminal cut inside 'has CUDA version 0.0' for the PyG messages; since fix33
# explain reports a cut error line whole and reads them: the skip is dropped, as family_tests asks)
test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_stl1002_outranks_nvcc_failed_in_the_gsplat_paste():
    # peylnog/ContinuousSR#4 as pasted: the STL's verdict, then nvcc's exit on the next attempt
    text = (
        'But I installed gsplat with error: static assertion failed with "error STL1002: '
        'Unexpected compiler version, expected CUDA 12.4 or newer."\n'
        "error: command 'C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v12.4\\\\bin"
        "\\\\nvcc' failed with exit code 2\n"
    )
    assert _codes(text)[:1] == ["host-compiler-unsupported-by-nvcc"]


def test_where_cl_outranks_gsplat_no_cuda_toolkit():
    # apple/ml-sharp#52: the CalledProcessError, then gsplat's own fallback notice
    text = (
        '  File "C:\\Users\\u\\miniconda3\\envs\\sharp\\Lib\\subprocess.py", line 577, in run\n'
        "    raise CalledProcessError(retcode, process.args,\n"
        "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.\n"
        "\n"
        "gsplat: No CUDA toolkit found. gsplat will be disabled.\n"
    )
    assert _codes(text)[:1] == ["windows-compiler-unusable"]


def test_th_header_behind_pip_build_indentation():
    # pip's indented build output with the compiler's caret lines (DCNv2 under setup.py develop)
    text = (
        "      DCNv2/src/cpu/dcn_v2_im2col_cpu.cpp:9:10: fatal error: TH/TH.h: No such file or directory\n"
        "          9 | #include <TH/TH.h>\n"
        "            |          ^~~~~~~~~\n"
        "      compilation terminated.\n"
        "      error: command 'g++' failed with exit status 1\n"
    )
    assert _codes(text)[:1] == ["extension-source-torch-api-removed"]


def test_pyg_nonzero_cuda_mismatch_keeps_its_cause():
    # near-miss: a real CUDA version on both sides is a build against another CUDA, not a build
    # without CUDA (the refine reads only 0.0)
    for other in ("10.0", "10.2", "11.0", "0.1"):
        text = (
            "RuntimeError: Detected that PyTorch and torch_sparse were compiled with different "
            f"CUDA versions. PyTorch has CUDA version 10.1 and torch_sparse has CUDA version {other}. "
            "Please reinstall the torch_sparse that matches your PyTorch install."
        )
        assert _codes(text)[:1] == ["nvcc-torch-cuda-mismatch"], other


def test_near_misses_stay_quiet():
    # other STL version gates (an old clang or MSVC, no CUDA involved) are not this code
    assert "host-compiler-unsupported-by-nvcc" not in match_codes(
        "yvals_core.h(28): fatal error C1189: #error:  STL1001: Unexpected compiler version, expected MSVC 19.29 or newer."
    )
    assert "host-compiler-unsupported-by-nvcc" not in match_codes(
        "error STL1000: Unexpected compiler version, expected Clang 11.0.0 or newer."
    )
    # a `where` lookup of another program, and a `where cl` that succeeded
    assert "windows-compiler-unusable" not in match_codes(
        "subprocess.CalledProcessError: Command '['where', 'nvcc']' returned non-zero exit status 1."
    )
    assert "windows-compiler-unusable" not in match_codes(
        "C:\\Program Files\\Microsoft Visual Studio\\2022\\BuildTools\\VC\\Tools\\MSVC\\14.38.33130\\bin\\Hostx64\\x64\\cl.exe"
    )
    # the TH include found (a compile command line naming the include directory), an unrelated
    # identifier that starts with TH, and a header merely named like TH
    for line in (
        "c++ -I/opt/conda/lib/python3.8/site-packages/torch/include/TH -c dcn_v2_cpu.cpp -o dcn_v2_cpu.o",
        "#include <TH/TH.h>",
        "src/foo.cpp:12:5: error: 'THRESHOLD_MAX' was not declared in this scope",
        "fatal error: MATH/MATH.h: No such file or directory",
    ):
        assert "extension-source-torch-api-removed" not in match_codes(line), line
