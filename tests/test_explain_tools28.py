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


# -- WSL 2's memory cap behind a killed process ----------------------------------------------

UNAME_WSL = "Linux DESKTOP-7K2 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC 2024 x86_64 GNU/Linux"

#: host-oom-killed's own lines (bash, torch's DataLoader, torchelastic, c10's CPU allocator, the kernel)
KILLS = [
    "[1]+  Killed                  python train.py",
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 812) of binary: "
    "/usr/bin/python3",
    "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you "
    "tried to allocate 4194304000 bytes. Error code 12 (Cannot allocate memory)",
    "[ 8123.456789] Out of memory: Killed process 4242 (python) total-vm:41234567kB, anon-rss:15234567kB",
]

WSL_MARKERS = {
    "uname": UNAME_WSL,
    "prose": "I'm running this on WSL2 (Ubuntu 22.04) with an RTX 4090.",
    "libcuda-path": "/usr/lib/wsl/lib/libcuda.so.1",
    "wslconfig": "my .wslconfig has no [wsl2] section",
}


@pytest.mark.parametrize("marker", list(WSL_MARKERS))
@pytest.mark.parametrize("kill", KILLS, ids=range(len(KILLS)))
def test_a_kill_on_wsl_names_the_vms_memory_cap(kill, marker):
    codes = codes_of(WSL_MARKERS[marker] + "\nLoading checkpoint shards:  50%\n" + kill + "\n")
    assert codes[:1] == ["wsl-memory-limit"], codes


@pytest.mark.parametrize("wrapper", ["plain", "torchrun-rank", "python-logging", "docker-compose", "journald",
                                     "prose-backticks", "word-wrapped-80"])
def test_the_wsl_cap_in_wrappers(wrapper):
    from test_explain_patterns import WRAPPERS
    codes = codes_of(UNAME_WSL + "\n" + WRAPPERS[wrapper](KILLS[1]) + "\n")
    assert codes[:1] == ["wsl-memory-limit"], codes


def test_a_wsl_marker_far_from_the_kill_still_names_the_cap():
    log = UNAME_WSL + "\n" + "".join(f"step {i} loss 0.{i}\n" for i in range(40)) + KILLS[0] + "\n"
    assert codes_of(log)[:1] == ["wsl-memory-limit"]


def test_a_bare_killed_after_a_progress_bar_on_wsl():
    """bash's bare `Killed` is read from its words only (host-oom-killed's vocabulary): WSL re-ranks it."""
    log = UNAME_WSL + "\nLoading checkpoint shards:  50%|#####     | 1/2 [00:20<00:20, 20.1s/it]\nKilled\n"
    assert codes_of(log)[:1] == ["wsl-memory-limit"]


@pytest.mark.parametrize("log", [
    # the same kills with no WSL: the host's (or the container's) memory
    KILLS[0] + "\n",
    KILLS[1] + "\n",
    "Loading checkpoint shards:  50%|#####     | 1/2 [00:20<00:20, 20.1s/it]\nKilled\n",
    # WSL 1 has no virtual machine and no cap of its own
    "Using WSL 1 on Windows 10\n" + KILLS[0] + "\n",
])
def test_a_kill_without_wsl_2_stays_host_oom(log):
    assert codes_of(log)[:1] == ["host-oom-killed"]


@pytest.mark.parametrize("marker", list(WSL_MARKERS))
def test_a_cuda_out_of_memory_on_wsl_is_the_gpus_memory(marker):
    """.wslconfig caps the VM's RAM, not the GPU's memory: a plain CUDA OOM on WSL stays gpu-out-of-memory
    and the WSL cap is not among its answers."""
    log = (WSL_MARKERS[marker] + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
           "a total capacity of 23.99 GiB of which 0 bytes is free.\n")
    codes = codes_of(log)
    assert codes[:1] == ["gpu-out-of-memory"] and "wsl-memory-limit" not in codes, codes


test_healthy_wsl_lines_stay_quiet = healthy_test([
    UNAME_WSL,
    "[wsl2]\nmemory=48GB\nswap=16GB",
    "Mem:           47Gi       3.1Gi        43Gi       3.0Mi       1.2Gi        44Gi",
])



def test_the_wsl_cap_is_sourced_and_says_what_to_change():
    """wsl-memory-limit has no line of its own (WSL prints nothing when its VM runs out): it is what
    host-oom-killed's lines stand for in a WSL 2 log (their `refine`), so it is checked here."""
    from stackpeel.knowledge import load as load_kb

    kb = load_kb()
    entry = kb.get("wsl-memory-limit")
    assert entry.kind == "root" and entry.source and entry.links and entry.commands
    assert entry.remedy.get("automatic") is False and ".wslconfig" in entry.fix and "memory=" in entry.fix
    refined = [sig.id for sig in kb.get("host-oom-killed").logs
               if any(r.code == "wsl-memory-limit" for r in sig.refine)]
    assert len(refined) >= 6, refined


# -- optional imports' warnings: no root where another line states the failure ---------------

#: libraries' own warnings when an optional import fails and they go on without it
OPTIONAL_IMPORT_WARNINGS = {
    # xformers/__init__.py _is_triton_available: logger.warning(f"A matching Triton is not available, some
    # optimizations will not be enabled.\nError caught was: {e}")
    "xformers-triton": "A matching Triton is not available, some optimizations will not be enabled.\n"
                       "Error caught was: No module named 'triton'",
    # older xformers (xformers/triton/__init__.py): logging.warning(f"Triton is not available, some
    # optimizations will not be enabled.\n{e}")
    "xformers-triton-old": "WARNING:root:Triton is not available, some optimizations will not be enabled.\n"
                           "No module named 'triton'",
    # a library's logger at WARNING level naming the module it could not import
    "warning-record": "WARNING:root:No module named 'xformers'",
    "logging-format": "2024-05-01 12:00:00,123 - WARNING - No module named 'flash_attn'",
    # torchvision/io/image.py: warn(f"Failed to load image Python extension: '{e}'If you don't plan on
    # using image functionality from `torchvision.io`, you can ignore this warning. ...")
    "torchvision-image": "/opt/venv/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to "
                         "load image Python extension: 'libc10_cuda.so: cannot open shared object file: No such file "
                         "or directory'If you don't plan on using image functionality from `torchvision.io`, you can "
                         "ignore this warning. Otherwise, there might be something wrong with your environment.",
}

#: real failures later in the same log, each stated by its own line
LATER_FAILURES = {
    "gpu-out-of-memory": "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n"
                         "    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                         "2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of which 0 bytes is free.",
    "model-architecture-unsupported": "ValueError: The checkpoint you are trying to load has model type `qwen3` "
                                      "but Transformers does not recognize this architecture.",
    "nccl-shm-too-small": "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)",
}


@pytest.mark.parametrize("later", list(LATER_FAILURES))
@pytest.mark.parametrize("warning", list(OPTIONAL_IMPORT_WARNINGS))
def test_a_later_real_error_ranks_before_an_optional_imports_warning(warning, later):
    codes = codes_of(OPTIONAL_IMPORT_WARNINGS[warning] + "\nstep 1/10\n" + LATER_FAILURES[later] + "\n")
    assert codes[:1] == [later], codes


@pytest.mark.parametrize("warning", list(OPTIONAL_IMPORT_WARNINGS))
def test_alone_an_optional_imports_warning_is_a_low_confidence_hint(warning):
    from stackpeel.explain import explain_text

    expl = explain_text(OPTIONAL_IMPORT_WARNINGS[warning] + "\n")
    top = expl.candidates[0]
    assert top.confidence == "low" and top.basis == "signature", (top.code, top.confidence)
    assert any("optional import" in n for n in expl.notes), expl.notes


@pytest.mark.parametrize("line,code", [
    # the same import failures as errors, not warnings: stated roots
    ("ModuleNotFoundError: No module named 'flash_attn'", "flash-attn-not-installed"),
    ("Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n    import xformers\n"
     "ModuleNotFoundError: No module named 'xformers'", "kernel-library-not-installed"),
])
def test_an_import_that_fails_as_an_error_stays_stated(line, code):
    from stackpeel.explain import explain_text

    top = explain_text(line + "\n").candidates[0]
    assert (top.code, top.confidence) == (code, "stated")


def test_a_warning_the_later_error_may_come_from_keeps_its_place():
    """vLLM's start-up warning and the error its missing extension produces (custom-ops-not-registered
    lists the extension among its causes): the warning still names the cause first."""
    log = ("WARNING 05-01 12:00:00 _custom_ops.py:14] Failed to import from vllm._C with "
           "ModuleNotFoundError(\"No module named 'vllm._C'\")\n"
           "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
           "    torch.ops._C.rms_norm(out, x, w, eps)\n"
           "AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'\n")
    codes = codes_of(log)
    assert codes[:2] == ["kernel-extension-not-built", "custom-ops-not-registered"], codes


# -- vLLM's KV-cache connector against its engine and LMCache ---------------------------------

CONNECTOR = {
    "vllm-kv-connector-version-mismatch": [
        # vllm/distributed/kv_transfer/kv_connector/factory.py
        "ValueError: Attempting to initialize a V0 Connector, but found envs.VLLM_USE_V1=True",
        "ValueError: Attempting to initialize a V1 Connector, but found envs.VLLM_USE_V1=False",
        "ValueError: Unsupported connector type: LMCacheConnector",
        # v1/lmcache_connector.py importing an LMCache release without the V1 adapter
        "ModuleNotFoundError: No module named 'lmcache.integration.vllm.vllm_v1_adapter'",
        "ImportError: cannot import name 'LMCacheConnectorV1Impl' from 'lmcache.integration.vllm.vllm_v1_adapter' "
        "(/opt/venv/lib/python3.12/site-packages/lmcache/integration/vllm/vllm_v1_adapter.py)",
    ],
}

test_connector_messages_head_explain_in_every_wrapper, test_connector_messages_are_matched_by_their_code = \
    family_tests(CONNECTOR)

test_connector_root_is_sourced = sourced_roots_test(list(CONNECTOR))

test_healthy_connector_lines_stay_quiet = healthy_test([
    "INFO 05-01 12:00:00 [factory.py:51] Creating v1 connector with name: LMCacheConnectorV1 and engine_id: "
    "5f0c2a1e-1b2c-4d5e-8f90-123456789abc",
    "vllm serve meta-llama/Llama-3.1-8B --kv-transfer-config '{\"kv_connector\":\"LMCacheConnectorV1\","
    "\"kv_role\":\"kv_both\"}'",
])
