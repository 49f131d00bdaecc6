"""The messages session 27 left unread, swept from their programs' source (tools28,
docs/dev/tools28.md has the table of each message, its source and its code).

- The linkers' "cannot find -lX": GNU ld (bfd ldfile.c 'cannot find -l%s', ': No such file or
  directory' since binutils 2.39), gold (fileread.cc 'cannot find %s%s'), lld (ELF/Driver.cpp
  LinkerDriver::addLibrary 'unable to find library -l' + name) and mold ('library not found: ').
  Which library is missing decides the cause: the C++ runtime of the compiler's GCC installation
  (cxx-runtime-link-library-missing), torch's own libraries (torch-libs-not-on-link-path), the C
  library (libc-headers-missing), libpython (python-headers-missing), the CUDA driver
  (libcuda-not-in-ldconfig) or the CUDA toolkit's libraries (cuda-link-library-missing).
"""

from __future__ import annotations

import pytest

from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

LINKER = {
    "cxx-runtime-link-library-missing": [
        # clang picking a GCC installation without libstdc++-N-dev (llvm/llvm-project#63988)
        "/usr/bin/ld: cannot find -lstdc++: No such file or directory",
        "/usr/bin/ld: cannot find -lgcc_s: No such file or directory",
        "/usr/bin/ld: cannot find -lstdc++",
        "/usr/bin/ld.gold: error: cannot find -lstdc++",
        "ld.lld: error: unable to find library -lstdc++",
        "mold: fatal: library not found: stdc++",
        "/opt/conda/bin/../lib/gcc/x86_64-conda-linux-gnu/12.3.0/../../../../x86_64-conda-linux-gnu/bin/ld: "
        "cannot find -lgcc_s: No such file or directory",
    ],
    "torch-libs-not-on-link-path": [
        "/usr/bin/ld: cannot find -lc10: No such file or directory",
        "/usr/bin/ld: cannot find -ltorch_python",
        "/usr/bin/ld: cannot find -ltorch_cpu: No such file or directory",
        "ld.lld: error: unable to find library -ltorch",
        "LINK : fatal error LNK1181: cannot open input file 'c10.lib'",
        # torch 1.11-1.12's split CUDA library, named by a build script on a newer torch
        "/usr/bin/ld: cannot find -ltorch_cuda_cu: No such file or directory",
        "/usr/bin/ld: cannot find -lc10_cuda: No such file or directory",
    ],
    "libc-headers-missing": [
        "/usr/bin/ld: cannot find -lm: No such file or directory",
        "/usr/bin/ld: cannot find -lc: No such file or directory",
        "/usr/bin/ld: cannot find -lpthread",
        "ld.lld: error: unable to find library -ldl",
    ],
    "python-headers-missing": [
        "/usr/bin/ld: cannot find -lpython3.10: No such file or directory",
        "ld.lld: error: unable to find library -lpython3.12",
    ],
    "libcuda-not-in-ldconfig": [
        "ld.lld: error: unable to find library -lcuda",
        "mold: fatal: library not found: cuda",
    ],
    "cuda-link-library-missing": [
        "ld.lld: error: unable to find library -lcudart",
        "mold: fatal: library not found: cublas",
    ],
}

test_linker_messages_head_explain_in_every_wrapper, test_linker_messages_are_matched_by_their_code = \
    family_tests(LINKER)

test_linker_roots_are_sourced = sourced_roots_test(["cxx-runtime-link-library-missing",
                                                     "torch-libs-not-on-link-path"])

# a healthy build prints the same library names on its command lines and in CMake's notices
test_healthy_link_lines_stay_quiet = healthy_test([
    "g++ -pthread -shared build/temp.linux-x86_64-cpython-310/ops.o -L/opt/venv/lib/python3.10/site-packages/torch/lib "
    "-lc10 -ltorch -ltorch_cpu -ltorch_python -lc10_cuda -ltorch_cuda -lcudart -lstdc++ -lgcc_s -o build/ops.so",
    "-- Found Torch: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch.so",
    "[100%] Linking CXX shared library libops.so",
    "-- Looking for pthread_create in pthread - found",
])


@pytest.mark.parametrize("line", [
    # a library no rule is about: not the C++ runtime, torch or libc
    "/usr/bin/ld: cannot find -lstdc++-libc6.2-2",
    "/usr/bin/ld: cannot find -lc10d_custom",
    "/usr/bin/ld: cannot find -lmagma",
    # ld's warning before it goes on searching: no refusal
    "/usr/bin/ld: skipping incompatible /usr/lib/i386-linux-gnu/libstdc++.so when searching for -lstdc++",
])
def test_other_libraries_are_not_these_causes(line):
    found = set(codes_of(line + "\n"))
    assert not found & {"cxx-runtime-link-library-missing", "torch-libs-not-on-link-path", "libc-headers-missing"}, found


def test_the_linker_names_the_cause_not_the_build_tool_around_it():
    """clang's and ninja's lines after the linker's: the linker's names the cause."""
    log = ("[2/2] Linking CXX shared module ops.so\nFAILED: ops.so\n"
           "/usr/bin/ld: cannot find -lstdc++: No such file or directory\n"
           "clang++: error: linker command failed with exit code 1 (use -v to see invocation)\n"
           "ninja: build stopped: subcommand failed.\n"
           "RuntimeError: Error building extension 'ops'\n")
    assert codes_of(log)[:1] == ["cxx-runtime-link-library-missing"]


def test_torch_and_its_cuda_libraries_missing_together_name_the_link_path():
    log = ("/usr/bin/ld: cannot find -lc10: No such file or directory\n"
           "/usr/bin/ld: cannot find -lc10_cuda: No such file or directory\n"
           "/usr/bin/ld: cannot find -ltorch: No such file or directory\n"
           "collect2: error: ld returned 1 exit status\n")
    assert codes_of(log)[:1] == ["torch-libs-not-on-link-path"]


# -- CMake's and torch's CUDA architecture messages ------------------------------------------

ARCH = {
    "cuda-arch-value-malformed": [
        # CMake 3.18-3.23 CMakeDetermineCUDACompiler.cmake, an explicit value with no number in it
        "CMake Error at /usr/share/cmake-3.22/Modules/CMakeDetermineCUDACompiler.cmake:277 (message): "
        "CMAKE_CUDA_ARCHITECTURES must be valid if set.",
        "CMAKE_CUDA_ARCHITECTURES must be non-empty if set.",
        'CUDA_ARCHITECTURES is empty for target "cmTC_0c3d2".',
    ],
    "nvcc-missing": [
        # CMakeDetermineCUDACompiler.cmake: the nvcc CMake picked could not build its id file
        "CMake Error at /usr/share/cmake-3.26/Modules/CMakeDetermineCUDACompiler.cmake:603 (message): "
        "Failed to detect a default CUDA architecture.",
    ],
    "build-native-arch-without-gpu": [
        # torch/utils/cpp_extension.py _get_cuda_arch_flags with no visible GPU
        "File \"/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py\", line 1950, in "
        "_get_cuda_arch_flags\n    arch_list[-1] += '+PTX'\nIndexError: list index out of range",
    ],
    "env-torch-cuda-arch-list-invalid": [
        "ValueError: Unknown CUDA arch (8.0,8.6) or GPU not supported",
    ],
    "host-compiler-unsupported-by-nvcc": [
        # CMakeDetermineCompilerId.cmake, alone: the weak answer that says where CMake stopped
        'Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" failed.',
    ],
}

test_arch_messages_head_explain_in_every_wrapper, test_arch_messages_are_matched_by_their_code = \
    family_tests(ARCH)

test_healthy_cmake_cuda_lines_stay_quiet = healthy_test([
    'Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" succeeded.',
    "-- The CUDA compiler identification is NVIDIA 12.4.131",
    "-- Detecting CUDA compile features - done",
    'set(CMAKE_CUDA_ARCHITECTURES "80;86;90")',
    "TORCH_CUDA_ARCH_LIST=8.0;8.6;9.0+PTX pip install --no-build-isolation .",
])


@pytest.mark.parametrize("log,code", [
    # the compiler's own words under CMake's generic line name the cause
    ('Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" failed.\n'
     "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH\n", "windows-compiler-unusable"),
    ('Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" failed.\n'
     "/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions "
     "later than 12 are not supported!\n", "host-compiler-unsupported-by-nvcc"),
])
def test_the_compilers_words_under_cmakes_id_line_decide(log, code):
    assert codes_of(log)[:1] == [code]
