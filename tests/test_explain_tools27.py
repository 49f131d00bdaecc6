"""The build tools', installers' and linker's own messages that had no code (tools27).

Worded from the programs' own source (docs/dev/tools27.md has the whole sweep's table):

- pip-hash-mismatch: pip src/pip/_internal/exceptions.py HashMismatch.head / HashMissing.head
  (printed by HashErrors.__str__), uv's ``Hash mismatch for `...```;
- link-object-not-pic: GNU ld (bfd elf_x86_64_need_pic, the aarch64 backend) and lld
  (ELF/Relocations.cpp) refusing a non-PIC object in a shared link;
- conda-channel-unreachable: conda/exceptions.py CondaHTTPError (status 000, reason CONNECTION
  FAILED from gateways/connection/download.py) and CondaSSLError.
"""

from __future__ import annotations

import pytest

from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "pip-hash-mismatch": [
        "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the "
        "package versions, please update the hashes. Otherwise, examine the package contents carefully; "
        "someone may have tampered with them.",
        "ERROR: Hashes are required in --require-hashes mode, but they are missing from some requirements. "
        "Here is a list of those requirements along with the hashes their downloaded archives actually had.",
        "error: Failed to download `torch==2.4.0`\n  Caused by: Hash mismatch for `torch==2.4.0`",
    ],
    "link-object-not-pic": [
        "/usr/bin/ld: build/libggml.a(ggml.o): relocation R_X86_64_32 against `.rodata' can not be used when "
        "making a shared object; recompile with -fPIC",
        "/usr/bin/ld: /usr/local/cuda/lib64/libcudart_static.a(cudart.o): relocation R_X86_64_PC32 against "
        "symbol `foo' can not be used when making a shared object; recompile with -fPIC",
        "/usr/bin/ld: foo.o: relocation R_AARCH64_ADR_PREL_PG_HI21 against symbol `bar' which may bind "
        "externally can not be used when making a shared object; recompile with -fPIC",
        "ld.lld: error: relocation R_X86_64_32 cannot be used against local symbol; recompile with -fPIC",
    ],
    "conda-channel-unreachable": [
        "CondaHTTPError: HTTP 000 CONNECTION FAILED for url "
        "<https://conda.anaconda.org/conda-forge/linux-64/current_repodata.json>",
        "CondaSSLError: Encountered an SSL error. Most likely a certificate verification issue.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_each_new_root_is_sourced = sourced_roots_test(list(FAMILIES))

# what a healthy run of the same tools prints: nothing to explain
test_healthy_tool_lines_stay_quiet = healthy_test([
    "DEPRECATION: Legacy editable install of flash-attn==2.5.8 (setup.py develop) is deprecated. pip 25.0 "
    "will enforce this behaviour change.",
    "CMake Warning at CMakeLists.txt:12 (message):",
    "-- Looking for pthread_create in pthreads - not found",
    "  Downloading torch-2.4.0-cp311-cp311-manylinux1_x86_64.whl (797.2 MB)",
    "Collecting package metadata (current_repodata.json): done",
    "gcc -pthread -B /opt/conda/compiler_compat -fPIC -O2 -isystem /opt/conda/include -c csrc/ops.cpp",
    "Successfully installed torch-2.4.0 triton-3.0.0",
])


@pytest.mark.parametrize("line", [
    # near misses: the words without the tools' refusal
    "pip install --require-hashes -r requirements.txt",
    "set(CMAKE_POSITION_INDEPENDENT_CODE ON)  # recompile with -fPIC for the shared library",
    "conda config --set ssl_verify /etc/ssl/certs/ca.pem",
])
def test_near_misses_name_none_of_the_new_codes(line):
    assert not set(codes_of(line + "\n")) & set(FAMILIES), codes_of(line + "\n")


@pytest.mark.parametrize("line,code", [
    # messages of the sweep that had a code already keep it
    ("ERROR: Could not find a version that satisfies the requirement torch==1.7.1 (from versions: 2.2.0)",
     "package-no-matching-wheel"),
    ("error: externally-managed-environment", "python-externally-managed"),
    ("/usr/bin/ld: cannot find -lcudart", "cuda-link-library-missing"),
    ("ImportError: /lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
     "static-tls-exhausted"),
    ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "container-gpu-device-unknown"),
    ("  nothing provides __cuda needed by pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0",
     "conda-cuda-virtual-package-unsatisfied"),
])
def test_swept_messages_with_a_code_keep_it(line, code):
    assert codes_of(line + "\n")[:1] == [code]


NVCC = {
    "nvcc-host-flag-unforwarded": [
        # nvcc's option parser on a gcc/clang flag given without -Xcompiler
        "nvcc fatal   : Unknown option '-fopenmp'",
        "nvcc fatal   : Unknown option '-Wall'",
        "nvcc fatal   : Unknown option '-pthread'",
        "nvcc fatal   : Unknown option '-march=native'",
        "nvcc fatal   : Unknown option '-Wl,-rpath,/usr/local/lib'",
    ],
}

test_nvcc_messages_head_explain_in_every_wrapper, test_nvcc_messages_are_matched_by_their_code = \
    family_tests(NVCC)

test_nvcc_root_is_sourced = sourced_roots_test(list(NVCC))


@pytest.mark.parametrize("line,code", [
    # torch 1.8-1.13's own nvcc option on an older nvcc keeps its code
    ("nvcc fatal   : Unknown option '-generate-dependencies-with-compile'", "nvcc-torch-cuda-mismatch"),
])
def test_nvcc_options_of_its_own_keep_their_code(line, code):
    codes = codes_of(line + "\n")
    assert codes[:1] == [code] and "nvcc-host-flag-unforwarded" not in codes, codes


def test_a_host_flag_on_a_compile_line_is_not_a_refusal():
    assert "nvcc-host-flag-unforwarded" not in codes_of(
        "/usr/local/cuda/bin/nvcc -c ops.cu -o ops.o -Xcompiler -fopenmp -Xcompiler -fPIC -O3\n")


CMAKE = {
    "libtorch-cmake-config-not-found": [
        # CMake cmFindPackageCommand.cxx, find_package(Torch) in config mode
        'CMake Error at CMakeLists.txt:8 (find_package): By not providing "FindTorch.cmake" in CMAKE_MODULE_PATH '
        'this project has asked CMake to find a package configuration file provided by "Torch", but CMake did '
        'not find one.',
        '  Could not find a package configuration file provided by "Torch" with any of the following names: '
        'TorchConfig.cmake torch-config.cmake',
        '  Add the installation prefix of "Torch" to CMAKE_PREFIX_PATH or set "Torch_DIR" to a directory '
        'containing one of the above files.',
    ],
}

test_cmake_messages_head_explain_in_every_wrapper, test_cmake_messages_are_matched_by_their_code = \
    family_tests(CMAKE)

test_cmake_root_is_sourced = sourced_roots_test(list(CMAKE))


def test_another_packages_config_is_not_torchs():
    assert "libtorch-cmake-config-not-found" not in codes_of(
        '  Could not find a package configuration file provided by "Eigen3" with any of the following names:\n')
