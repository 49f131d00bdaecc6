"""Signatures of the codes added for SPLIT.toml's ``[codes].proposed`` names (2026-12-02): the
causes that blind validation gatherers found without a code. Messages come from the programs
that print them (named per family) and from the training threads of
``# collected: training-2026-12-02i``; each must head explain's answer in every wrapper a pasted
log puts around it, and healthy lines with the same words name nothing.

Two proposed names became aliases with a signature each: ``msvc-toolset-not-installed`` of
no-c-compiler (MSBuild's MSB8020, CMake's Visual Studio generator) and
``companion-package-version-mismatch`` of dependency-version-mismatch.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test

FAMILIES = {
    "cpu-instruction-set-unsupported": [
        # tensorflow/core/platform/cpu_feature_guard.cc (DeepSpeech 1023, tensorflow 6896)
        "2017-12-15 22:17:31.710780: F tensorflow/core/platform/cpu_feature_guard.cc:35] The TensorFlow library "
        "was compiled to use AVX2 instructions, but these aren't available on your machine.",
        "The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.",
        # a curly apostrophe, as a thread quoted it
        "The TensorFlow library was compiled to use AVX instructions, but these aren\u2019t available on your machine.",
        "F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use SSE4.1 "
        "instructions, but these aren't available on your machine.",
        # jaxlib/cpu_feature_guard.c
        "RuntimeError: This version of jaxlib was built using AVX instructions, which your CPU and/or operating "
        "system do not support. You may be able work around this issue by building jaxlib from source.",
        # the shell's report of SIGILL (REL 53), macOS, zsh, gdb
        "Illegal instruction (core dumped)",
        "./livox_viewer.sh: line 11: 22417 Illegal instruction     (core dumped) ./livox_viewer",
        "Illegal instruction: 4",
        "[1]    122549 illegal hardware instruction (core dumped)  python predict.py model.pth.tar",
        "Program received signal SIGILL, Illegal instruction.",
    ],
    "cmake-missing": [
        # the cmake_example setup.py template (kazam 65, social_mapper 25)
        "RuntimeError: CMake must be installed to build the following extensions: _itree",
        "CMake must be installed to build the following extensions: dlib",
        # CPython's subprocess, setuptools' spawn, the shells
        "FileNotFoundError: [Errno 2] No such file or directory: 'cmake'",
        "error: command 'cmake' failed: No such file or directory",
        "/bin/sh: 1: cmake: not found",
        "bash: cmake: command not found",
        "'cmake' is not recognized as an internal or external command,",
        # scikit-build skbuild/cmaker.py
        "Problem with the CMake installation, aborting build. CMake executable is cmake",
    ],
    "nvcc-arch-dropped": [
        # nvcc of CUDA 12 given compute_35 (GBGPU 7), of CUDA 11 given sm_30, of CUDA 13 given sm_70
        "nvcc fatal   : Unsupported gpu architecture 'compute_35'",
        "Unsupported gpu architecture 'compute_30'",
        "nvcc fatal : Unsupported gpu architecture 'compute_70'",
        "nvcc fatal   : Value 'sm_30' is not defined for option 'gpu-architecture'",
    ],
    "gpu-profiling-restricted-to-admin": [
        # Nsight Compute (ThunderKittens 73), nvprof (machine-shop-maintenance 11)
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
        "on the target device 0. For instructions on enabling permissions and to get more information see "
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM",
        "==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on the target device.",
        # CUPTI callers: TensorFlow's cupti_tracer.cc, Paddle's device_tracer.cc, Kineto
        "E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1441] function cupti_interface_->Subscribe( "
        "&subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "/paddle/paddle/fluid/platform/device_tracer.cc:131: error: function dynload::cuptiActivityEnable("
        "CUPTI_ACTIVITY_KIND_MEMCPY) failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.",
    ],
    "cuda-bundled-cub-incompatible": [
        # thrust/system/cuda/config.h through gcc (k2 582) and MSVC (cub 273)
        "/usr/local/cuda-11.0/bin/../targets/x86_64-linux/include/thrust/system/cuda/config.h:78:2: error: #error "
        "The version of CUB in your include path is not compatible with this release of Thrust. CUB is now included "
        "in the CUDA Toolkit, so you no longer need to use your own checkout of CUB. Define "
        "THRUST_IGNORE_CUB_VERSION_CHECK to ignore this.",
        "config.h(78): fatal error C1189: #error:  The version of CUB in your include path is not compatible with "
        "this release of Thrust.",
    ],
    "egl-device-display-unavailable": [
        # mujoco/egl/__init__.py (Gymnasium 726), dm_control egl_renderer.py (dm_control 415)
        "ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does not "
        "support the PLATFORM_DEVICE extension, which is required for creating a headless rendering context.",
        "ImportError: Cannot initialize a headless EGL display.",
        # nvdiffrast/common/glutil.cpp
        "[F glutil.cpp:332] eglGetDisplay() failed",
        "[F glutil.cpp:338] eglInitialize() failed",
    ],
    "build-dependency-headers-missing": [
        # gcc, clang, MSVC for a library's header (TextDeformer 4)
        "fatal error: EGL/egl.h: No such file or directory",
        "/src/glutil.h:28:10: fatal error: EGL/egl.h: No such file or directory",
        "src/mesh.cpp:3:10: fatal error: 'Eigen/Dense' file not found",
        "C:\\src\\io.cpp(5): fatal error C1083: Cannot open include file: 'zlib.h': No such file or directory",
    ],
    "no-c-compiler": [
        # the msvc-toolset-not-installed alias: MSBuild's Microsoft.CppBuild.targets, CMake's VS generator
        "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\\MSBuild\\Microsoft\\VC\\v170\\"
        "Microsoft.CppBuild.targets(463,5): error MSB8020: The build tools for Visual Studio 2019 (Platform "
        "Toolset = 'v142') cannot be found.",
        "error MSB8020: The build tools for v143 (Platform Toolset = 'v143') cannot be found.",
        "could not find any instance of Visual Studio.",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


def test_a_dropped_architecture_is_not_an_nvcc_too_old_for_the_gpu():
    for line, code in (("nvcc fatal   : Unsupported gpu architecture 'compute_35'", "nvcc-arch-dropped"),
                       ("nvcc fatal   : Unsupported gpu architecture 'compute_89'", "nvcc-arch-unsupported"),
                       ("nvcc fatal : Unsupported gpu architecture 'compute_120'", "nvcc-arch-unsupported"),
                       ("nvcc fatal : Value 'sm_121' is not defined for option 'gpu-architecture'", "nvcc-arch-unsupported")):
        codes = [c.code for c in explain_text("building\n" + line + "\n").candidates]
        assert codes[:1] == [code], (line, codes)


def test_a_new_arch_failure_next_to_an_old_gencode_list_stays_too_old():
    """The refinement reads the line's neighbours: an old architecture in the -gencode list beside
    a failure for a new one must not turn it into a dropped architecture."""
    log = ("/usr/local/cuda/bin/nvcc -c k.cu -gencode=arch=compute_35,code=sm_35 -gencode=arch=compute_120,code=sm_120\n"
           "nvcc fatal   : Unsupported gpu architecture 'compute_120'\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["nvcc-arch-unsupported"], codes


def test_the_missing_header_catch_all_yields_to_specific_headers():
    """CUDA, Python and OpenMP headers keep their own codes; the generic header signature is a
    fallback that speaks only when nothing else matched."""
    for line, code in (("fatal error: cuda_runtime.h: No such file or directory", "cuda-headers-missing"),
                       ("fatal error: Python.h: No such file or directory", "python-headers-missing"),
                       ("fatal error: omp.h: No such file or directory", "openmp-missing")):
        codes = [c.code for c in explain_text("building\n" + line + "\n").candidates]
        assert codes[:1] == [code], (line, codes)
    kb = load()
    entries = [e for e in kb.match_line("fatal error: EGL/egl.h: No such file or directory")
               if "build-dependency-headers-missing" in e.codes]
    assert entries and entries[0].fallback and entries[0].weight == 2


def test_a_gpu_illegal_instruction_is_not_the_cpu():
    codes = [c.code for c in explain_text(
        "RuntimeError: CUDA error: an illegal instruction was encountered\n").candidates]
    assert "cpu-instruction-set-unsupported" not in codes, codes


def test_the_aliases_name_their_codes():
    from stackpeel.knowledge import load as load_codes
    kb = load_codes()
    assert "msvc-toolset-not-installed" in kb.codes["no-c-compiler"].aliases
    assert "companion-package-version-mismatch" in kb.codes["dependency-version-mismatch"].aliases
    # the collector's name and sweepc's code were written the same day for one cause: one code
    assert "cpu-lacks-required-instructions" in kb.codes["cpu-instruction-set-unsupported"].aliases


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    # TensorFlow's notice that a faster build exists, and its info line
    "2018-03-19 14:44:16.835465: W tensorflow/core/platform/cpu_feature_guard.cc:45] The TensorFlow library "
    "wasn't compiled to use AVX instructions, but these are available on your machine and could speed up CPU computations.",
    "I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary is optimized with oneAPI Deep "
    "Neural Network Library (oneDNN) to use the following CPU instructions in performance-critical operations:  AVX2 FMA",
    "flags: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma",
    "cmake version 3.28.3",
    "-- Configuring done (0.4s)",
    "Collecting cmake>=3.18",
    "Successfully installed cmake-3.30.2 ninja-1.11.1.1",
    "nvcc --list-gpu-arch: compute_50 compute_52 compute_60 compute_70 compute_75 compute_80 compute_86",
    "-gencode arch=compute_35,code=sm_35 -gencode arch=compute_50,code=sm_50",
    "INFO:2024-02-02 09:53:39 166:166 init.cpp:158] If you see CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, refer to "
    "https://developer.nvidia.com/nvidia-development-tools-solutions-err-nvgpuctrperm-cupti",
    "==PROF== Connected to process 2213 (/build/src/gpu/cuda_PartA)",
    "-- Found CUB: /usr/local/cuda/include (found suitable version \"2.2.0.0\")",
    "export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl",
    "Creating GL context for Cuda device 0",
    "#include <EGL/egl.h>",
    "-- Selecting Windows SDK version 10.0.22621.0 to target Windows 10.0.19045.",
    "-- Building for: Visual Studio 17 2022",
])
