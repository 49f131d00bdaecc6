"""Issue 8 items 2, 3 and 7 (recall3): explain's recall on the existing codes of the toolchain and
triton layers, widened by class from 34 fresh training threads (tests/corpus/explain/*.log with
``# collected: training-2026-12-01q``) and from the programs' sources.

- A compiler's diagnostic carries the C library's strerror in the user's language (gcc's
  ``fatal error: %s: %m``): the signatures of missing headers (libc, CUDA toolkit, OpenMP) match the
  stable core before it.
- MSVC's ``C1083`` for Python.h is the interpreter's headers (an embedded Python without
  ``Include``), not Visual Studio's environment; localized Visual Studio quotes it differently.
- A path to nvcc is not a C compiler (``/usr/local/cuda/bin/nvcc`` ends in "cc").
- Every release's wording of one raise site: torch's C++ standard check (C++14, 17, 20), its
  ninja check (torch 1.x's FileNotFoundError, the old singular; BuildExtension's fallback warning stays a healthy line);
  clang as a CUDA compiler refusing an architecture like nvcc; nvcc refusing a host compiler
  that targets an unsupported OS; the ninja run of a JIT build as CalledProcessError.
- A stack dumped while torch's FileBaton waits on a lock (faulthandler on a timeout) is the
  stale lock; Triton's LLVM failing to select an NVVM intrinsic is the Triton release.

Messages are the programs' own wording (each signature's ``source`` names where); the users'
wrappings are those of the training threads named per case.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "python-headers-missing": [
        # MSVC cl.exe on triton-windows' main.c (triton-windows issue 3, a Chinese Visual Studio)
        "C:\\Users\\PLAY\\AppData\\Local\\Temp\\tmpqu5oyina\\main.c(12): fatal error C1083: "
        "\u65e0\u6cd5\u6253\u5f00\u5305\u62ec\u6587\u4ef6: \u201cPython.h\u201d: No such file or directory",
        "C:\\Users\\me\\AppData\\Local\\Temp\\tmp1\\cuda_utils.c(5): fatal error C1083: Cannot open include file: "
        "'Python.h': No such file or directory",
        # gcc in a Chinese locale (scope issue 84's message, localized strerror)
        "/tmp/tmpbe9ryx74/cuda_utils.c:5:10: fatal error: Python.h: \u6ca1\u6709\u90a3\u4e2a\u6587\u4ef6\u6216\u76ee\u5f55",
    ],
    "libc-headers-missing": [
        "/tmp/tmpx/main.c:1:10: fatal error: stdlib.h: No existe el archivo o el directorio",
        "/tmp/tmpx/cuda_utils.c:2:10: fatal error: dlfcn.h: Datei oder Verzeichnis nicht gefunden",
    ],
    "cuda-headers-missing": [
        # torch's c10/cuda headers included by an extension (Box_Discretization_Network-style, zh_CN locale)
        "/home/u/envs/dl/lib/python3.7/site-packages/torch/include/c10/cuda/CUDAStream.h:6:10: fatal error: "
        "cuda_runtime_api.h: \u6ca1\u6709\u90a3\u4e2a\u6587\u4ef6\u6216\u76ee\u5f55",
        "fatal error: cuda_runtime.h: No such file or directory",
        "csrc\\layer_norm.cpp(4): fatal error C1083: Cannot open include file: 'cuda_runtime.h': No such file or directory",
        "fatal error: cudnn.h: Aucun fichier ou dossier de ce type",
    ],
    "openmp-missing": [
        "/tmp/torchinductor_u/ab/cab.cpp:2:10: fatal error: omp.h: Datei oder Verzeichnis nicht gefunden",
    ],
    "c-compiler-broken": [
        "FileNotFoundError: [Errno 2] No such file or directory: '/opt/conda/bin/x86_64-conda-linux-gnu-gcc'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/bin/gcc-12'",
        # gcc/gcc.cc execute(): 'cannot execute %qs: %s' (pytorch/vision issue 8540)
        "gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or directory",
    ],
    "nvcc-missing": [
        # flash-attn setup.py get_cuda_bare_metal_version (huggingface/nanotron issue 167)
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
    ],
    "ninja-missing": [
        # torch 1.x verify_ninja_availability (zhanghang1989/PyTorch-Encoding issue 167)
        "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'ninja': 'ninja'",
        '  File "/home/llg/.local/lib/python3.5/site-packages/torch/utils/cpp_extension.py", line 873, '
        "in verify_ninja_availability",
        "RuntimeError: Ninja is required to load C++ extension",
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)",
    ],
    "extension-cxx-standard-too-old": [
        "/opt/venv/lib/python3.8/site-packages/torch/include/ATen/ATen.h:4:2: error: #error C++14 or later "
        "compatible compiler is required to use ATen.",
        "torch/include/ATen/ATen.h:4:2: error: #error C++20 or later compatible compiler is required to use ATen.",
        "torch/include/c10/util/C++17.h:27:2: error: #error You need C++17 to compile PyTorch",
    ],
    "extension-build-lock-stale": [
        # faulthandler dump of a pytest-timeout (PASSIONLab/OpenEquivariance issue 156)
        'File "/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py", line 50 in wait',
        '  File "/usr/lib/python3/dist-packages/torch/utils/file_baton.py", line 42, in wait',
        # faulthandler's dump (no comma) of a process stuck inside the JIT build
        'File "/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py", line 2156 in _jit_compile',
    ],
    "nvcc-arch-unsupported": [
        "clang: error: unsupported CUDA gpu architecture: sm_89",
        "clang-18: error: GPU arch sm_35 is supported by CUDA versions between 7.0 and 11.8 (inclusive), but "
        "installation at /usr/local/cuda is 12.4; use '--cuda-path' to specify a different CUDA install, pass a "
        "different GPU arch with '--cuda-gpu-arch', or pass '--no-cuda-version-check'",
    ],
    "host-compiler-unsupported-by-nvcc": [
        "nvcc fatal   : Host compiler targets unsupported OS.",
        # CUDA 13.1 host_config.h on VS Build Tools 18 (JustVugg/colibri PR 1231), as the PR wraps it
        "host_config.h(164): fatal error C1189: #error: -- unsupported Microsoft Visual\n"
        "Studio version! Only the versions between 2019 and 2022 (inclusive) are supported!",
    ],
    "triton-compiler-bug": [
        # triton 3.5 on sm_103 (triton issue 8473)
        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st",
    ],
}


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)

test_healthy_line_names_nothing = healthy_test([
    # a working build's lines that name the same programs and headers
    "ptxas info    : Used 255 registers, 0 bytes cmem[0]",
    "Using /root/.cache/torch_extensions/py311_cu121 as PyTorch extensions root...",
    "Emitting ninja build file /root/.cache/torch_extensions/py311_cu121/fused_adam/build.ninja...",
    "ninja: no work to do.",
    "#include <Python.h>",
    "-- Found OpenMP_CXX: -fopenmp (found version \"4.5\")",
    "nvcc: NVIDIA (R) Cuda compiler driver",
    "set(CMAKE_CXX_STANDARD 17)",
    "export CC=/usr/bin/gcc-12 CXX=/usr/bin/g++-12",
])


def _top(log: str):
    return [c.code for c in explain_text(log).candidates]


def test_a_missing_nvcc_path_is_not_a_broken_c_compiler():
    # '/usr/local/cuda/bin/nvcc' ends in "cc": the C compiler signature must not claim it
    top = _top("FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n")
    assert top[:1] == ["nvcc-missing"] and "c-compiler-broken" not in top, top


def test_msvc_without_its_environment_stays_the_windows_compiler():
    top = _top("main.c(1): fatal error C1083: Cannot open include file: 'stdio.h': No such file or directory\n")
    assert top[:1] == ["windows-compiler-unusable"], top


def test_a_failed_ninja_run_is_the_extension_build_symptom_with_its_cause_first():
    # torch's _run_ninja_build raises CalledProcessError; the compiler's line names the cause
    log = ("/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions "
           "later than 12 are not supported!\n"
           "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")
    top = _top(log)
    assert top[:1] == ["host-compiler-unsupported-by-nvcc"] and "extension-build-failed" in top, top


def test_a_failed_ninja_run_alone_is_the_extension_build_symptom():
    top = _top("subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '8']' returned non-zero exit status 1.\n")
    assert top[:1] == ["extension-build-failed"], top


@pytest.mark.parametrize("frame", [
    # a traceback (with its comma) through _jit_compile is an exception, not a hang
    '  File "/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py", line 2156, in _jit_compile',
    'File "/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py", line 28 in try_acquire',
])
def test_other_frames_of_a_jit_build_name_no_lock(frame):
    assert "extension-build-lock-stale" not in _top(frame + "\n")
