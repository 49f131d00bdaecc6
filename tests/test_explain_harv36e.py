"""harv36e: an unbiased harvest of building GPU software from source outside torch's
cpp_extension (CMake's CUDA language support and FindCUDA, nvcc's host-compiler and architecture
checks, cuDNN discovery in PyTorch's and onnxruntime's builds), scored blind, and the general fixes
its misses ask for (docs/dev/harv36e.md).

Nineteen new training-side logs; explain named ten first before any change. The fixed misses:
- cuDNN not found by a source build's configure step: PyTorch's FindCUDNN ``Could NOT find CUDNN
  (missing: CUDNN_LIBRARY_PATH CUDNN_INCLUDE_PATH)`` (sparticlesteve/nersc-pytorch-build#5),
  onnxruntime's build.py ``cudnn_home='None' valid=False`` (microsoft/onnxruntime#1777); and
  FindCUDA finding nvcc but not the headers ``Could NOT find CUDA (missing: CUDA_INCLUDE_DIRS)``
  (GMMTeam/GMM#3): now ``cuda-headers-missing``;
- nvcc's host-compiler refusal in words the signature did not know: the host_config.h sentence
  without its ``unsupported GNU version!`` prefix (DeadSix27/waifu2x-converter-cpp#203, silent),
  CUDA 8's ``Microsoft Visual Studio 2015 Update >= 2 is not supported yet!`` (opencv/opencv#7080),
  the front end's ``parameter packs not expanded`` in libstdc++'s <tuple> (NVIDIA/nccl#102), and
  CMake 3.18-3.23's ``CMAKE_CUDA_ARCHITECTURES must be valid if set`` no longer outranking the
  host-compiler error it follows (NVlabs/tiny-cuda-nn#109): ``host-compiler-unsupported-by-nvcc``;
- an architecture number no GPU has (``sm_91``: CUDA 9.1 written as the compute capability,
  src-d/kmcuda#76): ``cuda-arch-value-malformed`` rather than a too-old nvcc.
Each message is the tool's own text (cited in the knowledge entry) or a training-side thread's
paste, run through the wrappers pasted logs put around lines, with near-misses that keep their
reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# pytorch/pytorch cmake/Modules_CUDA_fix/FindCUDNN.cmake through FindPackageHandleStandardArgs
TORCH_FINDCUDNN = "-- Could NOT find CUDNN (missing: CUDNN_LIBRARY_PATH CUDNN_INCLUDE_PATH)"
# OpenCV's FindCUDNN (the variable names it lists)
OPENCV_FINDCUDNN = "-- Could NOT find CUDNN (missing: CUDNN_LIBRARY CUDNN_INCLUDE_DIR)"
# microsoft/onnxruntime tools/ci_build/build.py setup_cuda_vars (second line of its BuildError)
ORT_CUDNN_HOME = "cuda_home='/usr/local/cuda' valid=True. cudnn_home='None' valid=False"
# microsoft/onnxruntime cmake/external/cuDNN.cmake
ORT_CUDNN_CMAKE = "  Could not find CUDNN_INCLUDE_DIR using the following files: cudnn.h"
# CMake Modules/FindCUDA.cmake through FindPackageHandleStandardArgs
FINDCUDA_INCLUDE = '  Could NOT find CUDA (missing: CUDA_INCLUDE_DIRS) (found version "6.0")'
# CUDA crt/host_config.h, the version-limit sentence on its own (quoted without its prefix)
GCC_LATER = "gcc versions later than 8 are not supported"
# CUDA 8.0 crt/host_config.h under MSVC (C1189)
VS2015_UPDATE = "C1189\t#error:  Microsoft Visual Studio 2015 Update >= 2 is not supported yet!"
# nvcc's front end on gcc 6's libstdc++ <tuple> (NVIDIA/nccl#102)
TUPLE_PACKS = "/usr/include/c++/6/tuple:605:4: error: parameter packs not expanded with ‘...’:"
# nvcc asked for sm_91 (CUDA 9.1 given as CUDA_ARCH, src-d/kmcuda#76)
SM_91 = "nvcc fatal   : Value 'sm_91' is not defined for option 'gpu-architecture'"

FAMILIES = {
    "cuda-headers-missing": [TORCH_FINDCUDNN, OPENCV_FINDCUDNN, ORT_CUDNN_HOME, ORT_CUDNN_CMAKE, FINDCUDA_INCLUDE],
    "host-compiler-unsupported-by-nvcc": [GCC_LATER, VS2015_UPDATE, TUPLE_PACKS],
    "cuda-arch-value-malformed": [SM_91],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_onnxruntime_build_script_without_cudnn_home():
    # microsoft/onnxruntime#1777, the reporter's paste
    text = (
        "$ ./build.sh --use_cuda --cuda_home=/usr/local/cuda\n"
        "2019-09-07 15:39:21,386 Build [DEBUG] - Defaulting to running update, build [and test for native builds].\n"
        "2019-09-07 15:39:21,386 Build [ERROR] - cuda_home and cudnn_home paths must be specified and valid.\n"
        "cuda_home='/usr/local/cuda' valid=True. cudnn_home='None' valid=False\n"
    )
    assert _codes(text)[:1] == ["cuda-headers-missing"]


def test_onnxruntime_missing_cuda_home_is_not_read_as_cudnn():
    # the same check failing on CUDA's path only: cudnn_home is valid, so not this signature
    line = "cuda_home='None' valid=False. cudnn_home='/usr/local/cudnn' valid=True"
    assert "build-config-cudnn-not-found" not in _ids(line)


def test_findcuda_missing_nvcc_keeps_its_reading():
    # nvcc (and the toolkit root) missing is nvcc-missing's signature, not the headers'
    line = "Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE CUDA_INCLUDE_DIRS)"
    assert "findcuda-include-dirs-missing" not in _ids(line)
    assert _codes(line + "\n")[:1] == ["nvcc-missing"]


def test_cudnn_found_is_quiet():
    for line in ("-- Found CUDNN: /usr/lib/x86_64-linux-gnu/libcudnn.so (found version \"8.9.7\")",
                 "-- Found cuDNN: v9.1.0  (include: /usr/include, library: /usr/lib/libcudnn.so.9)",
                 "cuda_home='/usr/local/cuda' valid=True. cudnn_home='/usr/local/cuda' valid=True"):
        assert "build-config-cudnn-not-found" not in _ids(line)


def test_gcc_limit_in_a_title_and_in_prose():
    # DeadSix27/waifu2x-converter-cpp#203: the title and the reporter's sentence
    text = ("gcc versions later than 8 are not supported\n\n"
            "Currently CUDA doesn't support gcc versions later than 8. I've tried to switch to clang.\n")
    assert _codes(text)[:1] == ["host-compiler-unsupported-by-nvcc"]


def test_gcc_limit_near_misses_stay_quiet():
    for line in ("gcc versions later than 8 are supported since CUDA 10.1",
                 "clang versions later than 8 are not supported by this script",
                 "-- The CXX compiler identification is GNU 9.4.0"):
        assert "nvcc-host-config-unsupported" not in _ids(line)


def test_vs2015_update_in_the_reporters_words():
    # opencv/opencv#7080, the reporter's paste and answer
    text = ("I receive an error during compilation with Visual Studio 2015 Update 3\n"
            "`C1189\t#error:  Microsoft Visual Studio 2015 Update >= 2 is not supported yet!`\n"
            "File: `host_config.h` \nLine: 137\nYes, CUDA is enabled. I'm Using CUDA 8.0\n")
    assert _codes(text)[:1] == ["host-compiler-unsupported-by-nvcc"]


def test_parameter_packs_in_libstdcxx_headers():
    # NVIDIA/nccl#102 (gcc 6 <tuple>) and the gcc 11 <functional> wording
    text = ("[ 64%] Building NVCC (Device) object nccl/CMakeFiles/cuda_compile_1.dir/src/"
            "cuda_compile_1_generated_reduce_scatter.cu.o\n"
            "/usr/include/c++/6/tuple:605:4: error: parameter packs not expanded with ‘...’:\n"
            "                bool>::type=true>\n"
            "/usr/include/c++/6/tuple:605:4: note:         ‘_Elements’\n")
    assert _codes(text)[:1] == ["host-compiler-unsupported-by-nvcc"]
    conda = ("/opt/conda/x86_64-conda-linux-gnu/include/c++/11.4.0/bits/std_function.h:435:145: "
             "error: parameter packs not expanded with '...':")
    assert _codes(conda + "\n")[:1] == ["host-compiler-unsupported-by-nvcc"]


def test_parameter_packs_in_user_code_is_not_the_host_compiler():
    # the same gcc error in the project's own template, not in a standard library header
    line = "src/ops/kernel.cuh:42:17: error: parameter packs not expanded with '...':"
    assert "nvcc-host-compiler-version-refused" not in _ids(line)


def test_must_be_valid_yields_to_the_host_compiler_error():
    # NVlabs/tiny-cuda-nn#109: CMake 3.23's message and nvcc's refusal of gcc 12 in one paste
    text = (
        "CMake Error at /usr/share/cmake/Modules/CMakeDetermineCUDACompiler.cmake:311 (message):\n"
        "  CMAKE_CUDA_ARCHITECTURES must be valid if set.\n"
        "Call Stack (most recent call first):\n  CMakeLists.txt:25 (PROJECT)\n"
        "error: #error -- unsupported GNU version! gcc versions later than 11 are not supported! "
        "The nvcc flag '-allow-unsupported-compiler'\n"
    )
    assert _codes(text)[:1] == ["host-compiler-unsupported-by-nvcc"]


def test_must_be_valid_alone_keeps_its_reading():
    text = ("CMake Error at /usr/share/cmake-3.22/Modules/CMakeDetermineCUDACompiler.cmake:277 (message):\n"
            "  CMAKE_CUDA_ARCHITECTURES must be valid if set.\n")
    assert _codes(text)[:1] == ["cuda-arch-value-malformed"]


def test_arch_numbers_that_exist_keep_their_reading():
    # real architectures: too new for the nvcc (sm_89, sm_120, sm_90a) or dropped by it (sm_35)
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_89'\n")[:1] == ["nvcc-arch-unsupported"]
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_120'\n")[:1] == ["nvcc-arch-unsupported"]
    assert _codes("nvcc fatal   : Value 'sm_90a' is not defined for option 'gpu-architecture'\n")[:1] == [
        "nvcc-arch-unsupported"]
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_35'\n")[:1] == ["nvcc-arch-dropped"]


def test_cuda_release_numbers_as_architectures():
    for arch in ("compute_92", "sm_118", "compute_124"):
        line = f"nvcc fatal   : Unsupported gpu architecture '{arch}'\n"
        assert _codes(line)[:1] == ["cuda-arch-value-malformed"], arch
