"""Issue 8 items 2, 3 and 7 (recall2): what explain missed on 32 fresh training threads about the
CUDA runtime and driver API, torch's CUDA builds and GPU architectures, and the environment
variables that steer the stack (tests/corpus/explain/*.log with ``# collected:
training-2026-12-01p``), fixed by class, for the existing codes of the cuda, torch and config layers.

- The loader's symbol-version errors for CUDA libraries without the quotes the old signature
  needed: glibc 2.30+ ``undefined symbol: X, version libcublasLt.so.11`` and the older
  ``symbol X version libcublasLt.so.11 not defined in file ... with link time reference``.
- NumPy's C-API check in its two historical words (``ABI version`` and ``API version``, hex or,
  before NumPy 1.8, decimal).
- torch's allocator-config parser (``PYTORCH_CUDA_ALLOC_CONF``): every rejection it raises, from
  ``Unrecognized CachingAllocator option`` (1.10-2.8) to ``Unrecognized key ... in Accelerator
  allocator config`` (2.9+); the code had no signature at all.
- NVRTC's result code as CuPy and C++ wrappers print it instead of its log.
- Gloo's ``Unable to find address for:`` quoted or followed by prose.
- Build isolation hiding torch when the log says so in words; the user's words for a CPU-only
  torch that an installer picked on Windows.
- Context: under WSL 2 a CUDA "no device" is the WSL GPU bridge, not a missing Linux driver.
- Beyond the logs: CPython 3.13's own words for a file that shadows a library (module-shadowed had
  no signature), torch's words for its source tree shadowing the install, and the loader's
  LD_PRELOAD notice (env-library-path-missing, only when a log shows nothing else).

Messages are the programs' own wording (each signature's ``source`` names the file); the users'
words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from test_explain_patterns import family_tests, healthy_test, users_words_test, codes_of as _codes


# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "cuda-library-shadowed": [
        # glibc elf/dl-lookup.c, 2.30+ (symbol lookup error)
        "OSError: /home/u/envs/avt/lib/python3.7/site-packages/nvidia/cublas/lib/libcublas.so.11: "
        "undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11",
        # glibc elf/dl-lookup.c before 2.30 (relocation error)
        "OSError: /opt/conda/lib/python3.7/site-packages/nvidia/cublas/lib/libcublas.so.11: symbol "
        "cublasLtHSHMatmulAlgoInit version libcublasLt.so.11 not defined in file libcublasLt.so.11 "
        "with link time reference",
        "python: symbol lookup error: /usr/local/lib/libcudnn_cnn_infer.so.8: undefined symbol: "
        "_ZN5cudnn3ops18GetInternalStreamsEP12cudnnContextiPP11CUstream_st, version libcudnn_ops_infer.so.8",
    ],
    "numpy-abi-mismatch": [
        # numpy/_core/include/numpy/__multiarray_api.h _import_array (NPY_FEATURE_VERSION check)
        "RuntimeError: module compiled against API version 0xe but this version of numpy is 0xd",
        "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xf . Check the "
        "section C-API incompatibility at the Troubleshooting ImportError section at "
        "https://numpy.org/devdocs/user/troubleshooting-importerror.html#c-api-incompatibility for "
        "indications on how to solve this problem .",
        # NumPy before 1.8 printed the versions in decimal (matplotlib issue 1749)
        "RuntimeError: module compiled against API version 8 but this version of numpy is 4",
        # the NPY_VERSION (ABI) check, unchanged
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000",
    ],
    "env-alloc-conf-invalid": [
        # c10/cuda/CUDAAllocatorConfig.cpp parseArgs (torch 1.10-2.8)
        "RuntimeError: Unrecognized CachingAllocator option: expandable_segments",
        "RuntimeError: Unrecognized CachingAllocator option: C",
        # consumeToken, parseMaxSplitSize, the expandable_segments and garbage-collection checks
        "RuntimeError: Error parsing CachingAllocator settings, expected :",
        "RuntimeError: CachingAllocator option max_split_size_mb too small, must be > 20",
        "RuntimeError: Expected a single True/False argument for expandable_segments",
        "RuntimeError: garbage_collect_threshold too big, set it 0.0~1.0",
        # c10/core/AllocatorConfig.cpp (2.9+)
        "ValueError: Unrecognized key 'expandable_segment' in Accelerator allocator config.",
    ],
    "nvrtc-arch-unsupported": [
        # CuPy cupy/cuda/nvrtc.pyx check_status
        "cupy.cuda.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)",
        # cuda-api-wrappers issue 509 (NVRTC 11.2 loaded on an sm_89 L40)
        "Failed invoking compiler for CUDA C++ program at 0x07fae240a1c80: NVRTC_ERROR_INVALID_OPTION",
    ],
    "env-nccl-socket-ifname-no-match": [
        # gloo/transport/tcp/device.cc, quoted in prose (Primus pull request 1063)
        'every rank died in Gloo with "Unable to find address for: <ip>". Leave it empty instead.',
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. "
        "Unable to find address for: ^lo",
    ],
    "module-shadowed": [
        # CPython 3.13 Objects/moduleobject.c and Python/ceval.c import_from
        "AttributeError: module 'triton' has no attribute 'jit' (consider renaming '/home/me/triton.py' "
        "if it has the same name as a library you intended to import)",
        "ImportError: cannot import name 'AutoModel' from 'transformers' (consider renaming "
        "'/work/transformers.py' if it has the same name as a library you intended to import)",
        "AttributeError: module 'inspect' has no attribute 'signature' (consider renaming '/srv/app/inspect.py' "
        "since it has the same name as the standard library module named 'inspect' and prevents importing "
        "that standard library module)",
        # torch/__init__.py, run from a PyTorch checkout
        "It appears that PyTorch has loaded the `torch/_C` folder",
    ],
    "device-ordinal-out-of-range": [
        # TensorFlow/XLA's capitalised wording of cudaErrorInvalidDevice
        "InvalidArgumentError: Invalid device ordinal value (1). Valid range is [0, 0]. while setting up "
        "XLA_GPU_JIT device number 1",
        # heipei/engine-cuda pull request 4
        "Cuda error 10 in file 'cuda_common.cu' in line 123: invalid device ordinal.",
    ],
    "framework-gpu-arch-unsupported": [
        # neon/backends/nervanagpu.py before 1.2.0 (NervanaSystems/neon issue 80)
        "RuntimeError: Device 0 does not have CUDA compute capability 5.0 or greater",
    ],
    "env-library-path-missing": [
        # glibc elf/rtld.c (alone in a log: nothing else failed)
        "ERROR: ld.so: object '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' from LD_PRELOAD cannot be "
        "preloaded (cannot open shared object file): ignored.",
    ],
}


def _skip(msg, wrapper):
    # (a terminal's cut at the width is re-joined: parser.hard_wrap_cuts; a mangled symbol longer
    # than a word-wrap's width, on a line of its own, is read with its paragraph:
    # parser.soft_wrap_paragraph, session 20)
    return None


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, skip=_skip)


# Healthy lines that share words with the signatures above: settings, versions, successes
HEALTHY = [
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py",
    "numpy 1.26.4 (C API version 0x10, ABI version 0x1000009)",
    "Loaded library libcublasLt.so.12, version 12.4.5.8",
    "NVRTC version 12.4 supports sm_50 ... sm_90",
    "export GLOO_SOCKET_IFNAME=eth0 NCCL_SOCKET_IFNAME=eth0",
    "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 python train.py",
    "consider renaming the variable for clarity",
    "pip install flash-attn --no-build-isolation",
    "Successfully installed torch-2.5.1+cu121 torchvision-0.20.1+cu121",
    "Running under WSL 2 (5.15.153.1-microsoft-standard-WSL2), GPU: NVIDIA GeForce RTX 4090",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


# --- an informational notice stays behind a real failure ---------------------------------------

def test_the_ld_preload_notice_does_not_hide_a_real_failure():
    log = ("ERROR: ld.so: object 'libjemalloc.so.2' from LD_PRELOAD cannot be preloaded "
           "(cannot open shared object file): ignored.\n"
           "RuntimeError: Unrecognized CachingAllocator option: expandable_segments\n")
    assert _codes(log)[:1] == ["env-alloc-conf-invalid"], _codes(log)


def test_a_symbol_version_error_of_another_library_stays_generic():
    # the same glibc words for a non-CUDA library are the runtime_libs codes' business
    codes = _codes("ImportError: /usr/lib/libfoo.so.1: undefined symbol: foo_init, version FOO_1.2\n")
    assert "cuda-library-shadowed" not in codes[:1], codes


# --- context: WSL 2 ------------------------------------------------------------------------------

NO_DEVICE = ("[E 12/20/24 08:45:40.689 2984] [cuda_driver.h:operator()@92] CUDA Error CUDA_ERROR_NO_DEVICE: "
             "no CUDA-capable device is detected while calling init (cuInit)\n")


def test_no_device_under_wsl_is_the_wsl_bridge():
    # Genesis-Embodied-AI/genesis-world issue 114
    log = "I have the same issue with my cuda 12.1 run under wsl2 with both python 310-312 tested\n" + NO_DEVICE
    assert _codes(log)[:1] == ["wsl-gpu-unavailable"], _codes(log)


def test_no_device_elsewhere_stays_the_missing_driver():
    assert _codes(NO_DEVICE)[:1] == ["no-nvidia-driver"], _codes(NO_DEVICE)


def test_devices_busy_can_be_the_wsl_bridge():
    from stackpeel.knowledge import load

    assert "wsl-gpu-unavailable" in load().get("cuda-devices-unavailable").caused_by


# --- the users' words ------------------------------------------------------------------------------

CPU_WHEEL_WORDS = [
    # talmolab/sleap-nn pull request 340
    "Previously, `uv tool install sleap-nn[torch-cuda128]` didn't  install torch with cuda support on windows",
    "it defaults to pulling in the standard torch and torchvision and for windows the default wheels is CPU",
]


test_users_words_for_an_installer_picking_the_cpu_wheel = users_words_test(
    {line: "torch-cpu-only-build" for line in CPU_WHEEL_WORDS})


def test_no_module_torch_in_a_sentence_about_build_isolation_is_build_isolation():
    # mlzxy/devit pull request 90
    log = ("This PR fixes a ModuleNotFoundError: No module named 'torch' that occurs when trying to install "
           "the package in a clean environment (e.g., using pip install -e .).\n\n"
           "Problem: The setup.py script imports torch at build time. However, because torch was not specified "
           "as a build-system requirement, pip would create an isolated build environment that did not have "
           "torch installed, causing the installation to fail.\n")
    assert _codes(log)[:1] == ["build-isolation-hides-torch"], _codes(log)


def test_no_module_torch_mid_sentence_without_a_build_is_torch_missing():
    log = "Running train.py fails with ModuleNotFoundError: No module named 'torch' right away.\n"
    assert _codes(log)[:1] == ["torch-not-installed"], _codes(log)


def test_no_module_for_a_torch_submodule_is_not_torch_missing():
    assert "torch-not-installed" not in _codes("ModuleNotFoundError: No module named 'torch.nn.attention'\n")[:1]


# --- DataLoader workers -------------------------------------------------------------------------

WORKER_INIT_ERROR = """Traceback (most recent call last):
  File "train.py", line 9, in <module>
    for batch in loader:
RuntimeError: Caught RuntimeError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
    data = fetcher.fetch(index)
  File "/work/data.py", line 31, in __getitem__
    return self.table[i].cuda()
RuntimeError: CUDA error: initialization error
"""


def test_cuda_initialization_error_in_a_dataloader_worker_is_cuda_used_before_fork():
    assert _codes(WORKER_INIT_ERROR)[:1] == ["cuda-initialized-before-fork"], _codes(WORKER_INIT_ERROR)


def test_cuda_initialization_error_alone_stays_cuda_init_failed():
    codes = _codes("RuntimeError: CUDA error: initialization error\n")
    assert codes[:1] == ["cuda-init-failed"], codes


@pytest.mark.parametrize("signal,code", [
    # torch/csrc/DataLoader.cpp: the signal decides; the generic case is the worker's death itself
    ("Segmentation fault.", "dataloader-worker-exited"),
    ("Aborted.", "dataloader-worker-exited"),
    ("Killed.", "host-oom-killed"),
    ("Bus error. It is possible that dataloader's workers are out of shared memory. "
     "Please try to raise your shared memory limit.", "dataloader-shm-too-small"),
])
def test_a_dataloader_worker_killed_by_a_signal(signal, code):
    codes = _codes(f"RuntimeError: DataLoader worker (pid 4242) is killed by signal: {signal}\n")
    assert codes[:1] == [code], codes
