"""src38 (issue 8 item 2): messages harvested from the programs' own source: glibc's dynamic loader,
nvcc and CUDA's crt/host_config.h, CMake's CUDA support, uv and libmamba (docs/dev/src38.md and the
per-program lists docs/dev/src38-*.txt hold every message read and what explain makes of it).

Every message below is the program's own wording (the ``source`` of the matching signature names the
file and function); where a program was run here (CMake 3.25, nvcc 13.0 on a machine without a GPU)
the text is what it printed. Each runs through the wrappers of tests/test_explain_patterns.py (rank
and worker prefixes, logging prefixes, quotes, Markdown, word wrap and terminal cuts at 80 columns,
CRLF, container log formats) and must rank its code first. Near misses that must not name the code
follow: healthy lines the same programs print, and sibling messages another cause owns.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "libc-unsupported": [
        # glibc elf/dl-version.c match_symbol, for a library packed with DT_RELR
        "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_ABI_DT_RELR' not found (required by "
        "/opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so)",
    ],
    "address-space-limit": [
        # glibc elf/dl-map-segments.h under RLIMIT_AS (strerror appended by dl-catch.c)
        "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: failed to map segment "
        "from shared object: Cannot allocate memory",
        "OSError: /opt/conda/lib/python3.10/site-packages/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9: "
        "cannot map zero-fill pages: Cannot allocate memory",
    ],
    "cpu-instruction-set-unsupported": [
        # glibc sysdeps/x86/dl-prop.h (dlopen and program forms), sysdeps/x86/dl-get-cpu-features.c
        "ImportError: /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so: CPU ISA level is lower "
        "than required",
        "/usr/bin/python3: CPU ISA level is lower than required",
        "Fatal glibc error: CPU does not support x86-64-v2",
    ],
    "library-wrong-format": [
        # glibc elf/dl-load.c open_verify
        "ImportError: /opt/venv/lib/python3.10/site-packages/xformers/_C.so: ELF file data encoding not "
        "little-endian",
        "OSError: /usr/local/lib/libggml-cuda.so: ELF file OS ABI invalid",
        "ImportError: /work/build/fused_kernels.o: only ET_DYN and ET_EXEC can be loaded",
        "ImportError: /opt/venv/lib/python3.10/site-packages/mylib/_ext.so: ELF file version does not match "
        "current one",
    ],
    "host-compiler-unsupported-by-nvcc": [
        # CUDA 13.0 include/crt/host_config.h, as gcc prints an #error
        "/usr/local/cuda/bin/../targets/x86_64-linux/include/crt/host_config.h:118:2: error: #error -- unsupported "
        "Intel ICX compiler! The nvcc flag '-allow-unsupported-compiler' can be used to override this version "
        "check; however, using an unsupported host compiler may cause compilation failure or incorrect run time "
        "execution. Use at your own risk.",
        "/usr/local/cuda/include/crt/host_config.h:103:2: error: #error -- ICC is not supported as a host "
        "compiler!",
        "/usr/local/cuda/include/crt/host_config.h:81:2: error: #error --- !!! UNSUPPORTED COMPILER !!! ---",
        "/usr/local/cuda/include/crt/host_config.h:112:2: error: #error -- unsupported Grace clang version! The "
        "version must be 16.x to 20.x. The nvcc flag '-allow-unsupported-compiler' can be used to override this "
        "version check",
        # CUDA 10's host_config.h
        "/usr/local/cuda/include/crt/host_config.h:83:2: error: #error -- unsupported ICC configuration! Only "
        "ICC 15.0, ICC 16.0, ICC 17.0, ICC 18.0 and ICC 19.0 on Linux x86_64 are supported!",
        # the nvcc driver's own check (CUDA 13.0 binary)
        "nvcc fatal   : The version ('17.10') of the host compiler ('Visual Studio') is not supported",
        "nvcc fatal   : nvcc cannot find a supported version of Microsoft Visual Studio. Only the versions between "
        "2019 and 2022 (inclusive) are supported! The nvcc flag '-allow-unsupported-compiler' can be used to "
        "override this version check",
        "nvcc fatal   : Unsupported host compiler 'icpx'",
        "nvcc fatal   : Unsupported NVHPC compiler found. nvc++ is the only NVHPC compiler that is supported.",
    ],
    "windows-compiler-unusable": [
        "nvcc fatal   : Microsoft Visual Studio configuration file 'vcvars64.bat' could not be found for "
        "installation at 'C:/Program Files (x86)/Microsoft Visual Studio/2019/BuildTools/VC/Tools/MSVC/"
        "14.29.30133/bin/HostX86/x64/../../../../../../..'",
        "nvcc fatal   : Cannot compile in the 64-bit mode when the host compiler targets x86.",
    ],
    "cuda-link-library-missing": [
        "nvcc fatal   : libcudart_static.a not found in the expected location",
    ],
    "nvcc-missing": [
        # CMake 3.25 as run here, and CMake 3.26+'s wording
        "Could not find compiler set in environment variable CUDACXX:",
        "Could not find the compiler specified in the environment variable CUDACXX:",
        # FindCUDAToolkit.cmake and Internal/CMakeCUDAFindToolkit.cmake
        "Could not find `nvcc` executable in any searched paths, please set CUDAToolkit_ROOT",
        "Could not find nvcc executable in path specified by environment variable CUDAToolkit_ROOT=/usr/local/"
        "cuda-12.1",
        "Compiler NVIDIA requires the CUDA toolkit. Please set the CUDAToolkit_ROOT variable.",
    ],
    "cxx-compiler-missing": [
        "Could not find compiler set in environment variable CUDAHOSTCXX:",
        "Could not find the compiler specified in the variable CMAKE_CUDA_HOST_COMPILER:",
    ],
    "cuda-arch-value-malformed": [
        "CMAKE_CUDA_ARCHITECTURES contains literal quotes:",
    ],
    "package-no-matching-wheel": [
        # uv: crates/uv-distribution-types, its resolver's hint and pubgrub report
        "error: Distribution `torch==2.5.1+cu121 @ registry+https://download.pytorch.org/whl/cu121` can't be "
        "installed because it doesn't have a source distribution or wheel for the current platform",
        "hint: You're on Windows (`win_amd64`), but `torch` (v2.6.0) only has wheels for the following platform: "
        "`macosx_11_0_arm64`",
        "  ╰─▶ Because only torch<=2.6.0+cu124 is available and you require torch>=2.8, we can conclude that your "
        "requirements are unsatisfiable.",
        # libmamba problems_graph.cpp
        "└─ pytorch-cuda 12.4**  does not exist (perhaps a typo or a missing channel).",
    ],
}


def _skip(msg, wrapper):
    return None


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, skip=_skip)

# healthy lines the same programs print: they name nothing
HEALTHY = [
    # ldd -v and ld.so --help
    "\tGLIBC_ABI_DT_RELR (GLIBC_ABI_DT_RELR) => /lib/x86_64-linux-gnu/libc.so.6",
    "  x86-64-v3 (supported, searched)",
    # readelf -h
    "  Data:                              2's complement, little endian",
    "  OS/ABI:                            UNIX - System V",
    # CMake's status lines on a healthy configure
    "-- The CUDA compiler identification is NVIDIA 12.4.131",
    '-- Found CUDAToolkit: /usr/local/cuda/include (found version "12.4.131")',
    "-- Detecting CUDA compiler ABI info - done",
    '-DCMAKE_CUDA_ARCHITECTURES="80;86;89;90"',
    # nvcc's warnings on healthy builds
    "nvcc warning : Support for offline compilation for architectures prior to '<compute/sm/lto>_75' will be "
    "removed in a future release (Use -Wno-deprecated-gpu-targets to suppress warning).",
    "nvcc warning : The support for the host compiler (gcc 7.5) has been deprecated and will be removed in the "
    "next CUDA Toolkit release",
    # a warning of a build that went on: nothing failed
    "nvcc warning : Cannot find valid GPU for '-arch=native', default arch is used",
    # installers that succeeded
    "Resolved 24 packages in 396ms",
    "Successfully installed torch-2.5.1+cu121 torchvision-0.20.1+cu121",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # a package outside the GPU stack: not this signature's (the platform is not the stack's)
    ("error: Distribution `kaleido==0.2.1.post1 @ registry+https://pypi.org/simple` can't be installed because it "
     "doesn't have a source distribution or wheel for the current platform", "uv-gpu-package-no-wheel-for-platform"),
    ("  ╰─▶ Because only torchmetrics==1.0.3 is available and you require torchmetrics>=1.4.1, we can conclude "
     "that your requirements are unsatisfiable.", "uv-gpu-package-no-wheel-for-platform"),
    ("└─ ambertools =* * does not exist (perhaps a typo or a missing channel).", "libmamba-gpu-package-does-not-exist"),
    # another errno: a noexec mount (build-dir-unusable, triton-cache-unusable), not the address-space limit
    ("OSError: /tmp/tmpabc/cuda_utils.so: failed to map segment from shared object: Operation not permitted",
     "dl-map-segment-enomem"),
    # a compiler version nvcc accepts, printed by CMake
    ("-- The CXX compiler identification is IntelLLVM 2024.0.2", "nvcc-host-config-other-compiler"),
    # CUDACXX or CUDAHOSTCXX set and found: a healthy status line
    ("-- Check for working CUDA compiler: /usr/local/cuda/bin/nvcc - skipped", "cmake-cuda-compiler-named-missing"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_noexec_mount_is_not_the_address_space_limit():
    codes = [c.code for c in explain_text(
        "OSError: /tmp/tmpabc/cuda_utils.so: failed to map segment from shared object: Operation not permitted\n"
    ).candidates]
    assert codes and codes[0] != "address-space-limit", codes


def test_native_arch_warning_names_its_cause_where_the_build_then_fails():
    log = ("nvcc warning : Cannot find valid GPU for '-arch=native', default arch is used\n"
           "ninja: build stopped: subcommand failed.\n"
           "RuntimeError: Error compiling objects for extension\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert "build-native-arch-without-gpu" in codes, codes
