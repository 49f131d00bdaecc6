"""Environment messages harvested from the libraries' own source (harvd): llama.cpp/ggml,
llama-cpp-python, Ollama, CTranslate2/faster-whisper, onnxruntime and TensorRT. Each family is
a message class one library raises or prints when the environment is wrong, in the words of
the raise site (cited per message), with the code that names the cause it states. The full
harvest (what explain named before and after, what was left and why) is
docs/dev/harvest-harvd.md.

Mechanisms besides new signatures:

- ``no kernel image`` / ``invalid device function`` read as the program's own gap next to
  ggml-cuda's CUDA_CHECK report (``current device: 0, in function ggml_cuda_compute_forward at
  .../ggml-cuda.cu``: extension-arch-missing), CTranslate2's ``CUDA failed with error``
  (framework-gpu-arch-unsupported) and TensorRT's ``Error Code 1: Cuda Runtime (...)``
  (tensorrt-gpu-arch-unsupported), not as torch's wheel lacking the architecture.
- the PTX-toolchain and insufficient-driver refinements know onnxruntime's
  ``[ONNXRuntimeError] ... CUDA failure 222:`` and TensorRT's ``[TRT]`` as programs of their own.
- onnxruntime's ``[W:onnxruntime:...]`` / ``[I:...]`` and TensorRT's ``[TRT] [W]`` records are
  warning/info records: their soft words (``unable to run CUDA graph``) are not errors.
"""

from __future__ import annotations

import pytest

from test_explain_patterns import family_tests, healthy_test, sourced_roots_test, codes_of as _codes

#: a paste that keeps the Python traceback above the message
TRACEBACK = {
    "traceback": lambda m: ("Traceback (most recent call last):\n"
                            '  File "/app/run.py", line 12, in <module>\n'
                            "    model = load_model(args.model, device='cuda')\n" + m),
}

FAMILIES = {
    # CMake's own words (Modules/CMakeDetermineCUDACompiler.cmake, CMakeDetermineCompilerId.cmake)
    # and ggml src/ggml-cuda/CMakeLists.txt message(FATAL_ERROR "CUDA Toolkit not found")
    "nvcc-missing": [
        "No CMAKE_CUDA_COMPILER could be found.",
        "Failed to find nvcc.  Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT variable.",
        "CMake Error at vendor/llama.cpp/ggml/src/ggml-cuda/CMakeLists.txt:183 (message):\n  CUDA Toolkit not found",
        "CMake Error at C:/Program Files/CMake/share/cmake-3.29/Modules/CMakeDetermineCompilerId.cmake:563 "
        "(message):\n  No CUDA toolset found.",
    ],
    # llama.cpp CMakeLists.txt llama_option_depr(FATAL_ERROR LLAMA_CUBLAS GGML_CUDA)
    "llama-cpp-cmake-option-renamed": [
        "CMake Error at vendor/llama.cpp/CMakeLists.txt:95 (message):\n"
        "  LLAMA_CUBLAS is deprecated and will be removed in the future.\n\n  Use GGML_CUDA instead",
        "LLAMA_CUBLAS is deprecated and will be removed in the future.",
    ],
    # CTranslate2 src/types.cc unsupported_compute_type; src/ops/awq/gemm.cc
    "gpu-arch-lacks-dtype": [
        "ValueError: Requested float16 compute type, but the target device or backend do not support "
        "efficient float16 computation.",
        "ValueError: Requested int8_float16 compute type, but the target device or backend do not support "
        "efficient int8_float16 computation.",
        "RuntimeError: AWQ Gemm does not support for cuda arch < 7.5",
    ],
    # onnxruntime core/framework/bfc_arena.cc BFCArena::AllocateRawInternal
    "gpu-out-of-memory": [
        "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : "
        "RUNTIME_EXCEPTION : Non-zero status code returned while running MatMul node. Name:'MatMul_123' "
        "Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* "
        "onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
        "onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 1073741824",
        "onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
        "onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than requested bytes of 268435456",
        # llama.cpp ggml-cuda.cu before 2024 (CUDA_CHECK)
        "CUDA error 2 at ggml-cuda.cu:6862: out of memory",
    ],
    "driver-too-old-for-build": [
        # TensorRT (libnvinfer) cudaDriverHelpers: cudart's 35 at start-up
        "[TRT] [E] 6: [cudaDriverHelpers.cpp::getDeviceCount::32] Error Code 6: API Usage Error (CUDA "
        "initialization failure with error: 35. Please check your CUDA installation: "
        "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html)",
        # ollama discover/cuda_compat.go
        'time=2025-09-01T10:00:00.000Z level=WARN source=cuda_compat.go:65 msg="NVIDIA driver too old" '
        "driver=470.82 required=525",
        # onnxruntime core/providers/cuda/cuda_call.cc CudaCall, cudaErrorUnsupportedPtxVersion (222)
        "[ONNXRuntimeError] : 1 : FAIL : CUDA failure 222: the provided PTX was compiled with an unsupported "
        "toolchain. ; GPU=0 ; hostname=abc ; expr=cudaGetLastError();",
        # ollama discover/gpu_info_nvcuda.c: libcuda lacks a driver-API entry point
        'time=2024-06-01T10:00:00.000Z level=INFO source=gpu.go:612 msg="Unable to load cudart library '
        '/usr/lib/x86_64-linux-gnu/libcuda.so.1: symbol lookup for cuCtxCreate_v3 failed: '
        '/usr/lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: cuCtxCreate_v3"',
    ],
    # TensorRT graphContext.h MyelinGraphContext
    "tensorrt-engine-built-for-other-gpu": [
        "[TRT] [E] 1: [graphContext.h::MyelinGraphContext::24] Error Code 1: Myelin (Compiled assuming that "
        "device 0 was SM 86, but device 0 is SM 75.)",
    ],
    # onnxruntime core/providers/tensorrt/tensorrt_execution_provider.cc
    "tensorrt-engine-version-mismatch": [
        "[ONNXRuntimeError] : 1 : FAIL : TensorRT EP could not deserialize engine from cache: "
        "./trt_cache/TensorrtExecutionProvider_TRTKernel_graph_main_graph_1_0_0.engine",
    ],
    # ollama discover/amd_linux.go
    "rocm-gpu-arch-unsupported": [
        'time=2024-06-01T10:00:00.000Z level=WARN source=amd_linux.go:309 msg="amdgpu too old gfx803" gpu=0',
        'time=2024-06-01T10:00:00.000Z level=WARN source=amd_linux.go:376 msg="amdgpu is not supported '
        '(supported types:[gfx1030 gfx1100 gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942])" '
        "gpu_type=gfx1032 gpu=0 library=/usr/lib/ollama",
    ],
    "framework-gpu-arch-unsupported": [
        # ollama discover/gpu.go GetGPUInfo
        'time=2024-06-01T10:00:00.000Z level=INFO source=gpu.go:303 msg="[0] CUDA GPU is too old. Compute '
        'Capability detected: 3.0"',
        # TensorRT-LLM kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp
        "Assertion failed: Unsupported architecture "
        "(/tensorrt_llm/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp:89)",
        # CTranslate2 src/cuda/utils.h CUDA_CHECK
        "RuntimeError: CUDA failed with error no kernel image is available for execution on the device",
    ],
    # TensorRT checkMacros.cpp catchCudaError
    "tensorrt-gpu-arch-unsupported": [
        "[TRT] [E] 1: [checkMacros.cpp::catchCudaError::272] Error Code 1: Cuda Runtime (no kernel image is "
        "available for execution on the device)",
    ],
    # ggml src/ggml-cuda/ggml-cuda.cu ggml_cuda_error (CUDA_CHECK)
    "extension-arch-missing": [
        "CUDA error: no kernel image is available for execution on the device\n"
        "  current device: 0, in function ggml_cuda_compute_forward at "
        "/tmp/pip-install/vendor/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2365",
    ],
    # ollama discover/gpu.go loadNVCUDAMgmt
    "driver-library-mismatch": [
        'time=2024-06-01T10:00:00.000Z level=WARN source=gpu.go:599 msg="version mismatch between driver and '
        'cuda driver library - reboot or upgrade may be required: library '
        '/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"',
        # ollama discover/gpu_info_nvcuda.c (803 = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
        'msg="Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.1: cuda driver library init '
        'failure: 803"',
    ],
    "no-nvidia-driver": [
        'time=2024-06-01T10:00:00.000Z level=INFO source=gpu.go:602 msg="no nvidia devices detected by '
        'library /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"',
    ],
    "cuda-init-failed": [
        # ollama discover/gpu.go loadNVCUDAMgmt + gpu_info_nvcuda.c
        'time=2024-06-01T10:00:00.000Z level=WARN source=gpu.go:605 msg="unknown error initializing cuda '
        'driver library /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05: cuda driver library init failure: '
        '999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information"',
        # ggml ggml-cuda.cu ggml_cuda_init
        "ggml_cuda_init: failed to initialize CUDA: unknown error",
        # onnxruntime cuda_call.cc CudaCall
        "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : CUDA failure 999: unknown error ; GPU=0 ; hostname=abc ; "
        "expr=cudaSetDevice(info_.device_id);",
    ],
    "library-missing": [
        # CTranslate2 src/cuda/nccl_stub.cc
        "RuntimeError: Library libnccl.so.2 is not found or cannot be loaded",
        # TensorRT libLoader.cpp; TensorRT python/packaging/bindings_wheel/tensorrt/__init__.py find_lib
        "[TRT] [E] 6: [libLoader.cpp::Impl::293] Error Code 6: Internal Error (Unable to load library: "
        "nvinfer_builder_resource_10.dll)",
        "FileNotFoundError: Could not find: nvinfer_10.dll. Is it on your PATH?",
        # Windows STATUS_DLL_NOT_FOUND through ollama llm/server.go
        "Error: llama runner process has terminated: exit status 0xc0000135",
    ],
    # ggml src/ggml-backend-reg.cpp load_backend
    "library-version-mismatch": [
        "load_backend: failed to initialize backend from C:\\llama\\ggml-cuda.dll: incompatible API version "
        "(backend: 1, current: 2)",
    ],
    # llama.cpp ggml-cuda.cu before 2024: CUDA_CHECK / CUBLAS_CHECK 'CUDA error %d at %s:%d: %s'
    "cublas-call-failed": [
        "cuBLAS error 15 at ggml-cuda.cu:7586: the function requires a feature absent from the device",
    ],
    # CMake's NMake generator on Windows without the MSVC environment (pip install llama-cpp-python)
    "windows-compiler-unusable": [
        "CMake Error at CMakeLists.txt:3 (project):\n  Running\n\n   'nmake' '-?'\n\n  failed with:\n\n"
        "   The system cannot find the file specified",
    ],
    # ollama llm/server.go NewLlamaServer
    "host-memory-too-small-for-model": [
        "Error: model requires more system memory (11.2 GiB) than is available (7.6 GiB)",
    ],
    # ollama discover/gpu_info_nvcuda.c: cuInit's CUresult as a number
    "cuda-forward-compat-unsupported": [
        'time=2024-06-01T10:00:00.000Z level=WARN source=gpu.go:599 msg="unable to load nvcuda" '
        'library=/usr/lib/x86_64-linux-gnu/libcuda.so.1 error="cuda driver library init failure: 804"',
    ],
    # TensorRT 10.0 removed APIs / TensorRT 10 code on TensorRT 8 (python bindings' AttributeError)
    "tensorrt-python-api-mismatch": [
        "AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'build_engine'",
        "AttributeError: 'tensorrt_bindings.tensorrt.ICudaEngine' object has no attribute 'get_binding_shape'",
        "AttributeError: 'tensorrt.tensorrt.IBuilderConfig' object has no attribute 'max_workspace_size'",
        "AttributeError: 'tensorrt.tensorrt.ICudaEngine' object has no attribute 'num_io_tensors'",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, wrappers=TRACEBACK)

test_new_codes_are_sourced = sourced_roots_test(["llama-cpp-cmake-option-renamed", "host-memory-too-small-for-model",
                                                 "tensorrt-python-api-mismatch"])

#: what these libraries print on healthy runs, with the same words: names nothing
HEALTHY = [
    # ggml ggml-cuda.cu ggml_cuda_init and its notices
    "ggml_cuda_init: found 1 CUDA devices (Total VRAM: 24217 MiB):",
    "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24217 MiB",
    "NCCL not compiled in; falling back to internal AllReduce.  Recompile with -DGGML_CUDA_NCCL=ON for better "
    "multi-GPU performance.",
    "-- Warning: NCCL not found, performance for multiple CUDA GPUs will be suboptimal",
    "Consider compiling with CMAKE_CUDA_ARCHITECTURES=61-virtual;80-virtual and DGGML_CUDA_FORCE_MMQ to force "
    "the use of the Pascal code for Turing.",
    "hipMallocManaged unsupported, falling back to hipMalloc.",
    "-- CUDA Toolkit found",
    '-- Found CUDAToolkit: /usr/local/cuda/include (found version "12.4.131")',
    # llama.cpp: the options still accepted with a warning
    "  LLAMA_CUDA is deprecated and will be removed in the future.",
    # ollama discovery on a healthy start
    'time=2024-06-01T10:00:00.000Z level=INFO source=gpu.go:217 msg="looking for compatible GPUs"',
    'time=2024-06-01T10:00:00.000Z level=INFO source=types.go:105 msg="inference compute" id=GPU-1234 '
    'library=cuda compute=8.6 driver=12.4 name="NVIDIA GeForce RTX 3090" total="23.7 GiB" available="23.4 GiB"',
    'time=2024-06-01T10:00:00.000Z level=INFO source=amd_linux.go:386 msg="amdgpu is supported" gpu=0 '
    "gpu_type=gfx1100",
    'time=2024-06-01T10:00:00.000Z level=INFO source=amd_linux.go:389 msg="skipping rocm gfx compatibility '
    'check" HSA_OVERRIDE_GFX_VERSION=10.3.0',
    'time=2024-06-01T10:00:00.000Z level=INFO source=amd_linux.go:296 msg="unsupported Radeon iGPU detected '
    'skipping" id=0 total="512.0 MiB"',
    # onnxruntime's performance notices (warning records)
    "2024-05-01 10:00:00.123 [W:onnxruntime:, transformer_memcpy.cc:74 ApplyImpl] 2 Memcpy nodes are added to "
    "the graph main_graph for CUDAExecutionProvider. It might have negative impact on performance (including "
    "unable to run CUDA graph). Set session_options.log_severity_level=1 to see the detail logs before this "
    "message.",
    "2024-05-01 10:00:00.123 [W:onnxruntime:, session_state.cc:1166 VerifyEachNodeIsAssignedToAnEp] Some nodes "
    "were not assigned to the preferred execution providers which may or may not have an negative impact on "
    "performance. e.g. ORT explicitly assigns shape related ops to CPU to improve perf.",
    "Falling back to ['CPUExecutionProvider'] and retrying.",
    # CTranslate2's conversion notice and its library report
    "[ctranslate2] [thread 123] [warning] The compute type inferred from the saved model is float16, but the "
    "target device or backend do not support efficient float16 computation. The model weights have been "
    "automatically converted to use the float32 compute type instead.",
    "[2024-01-01 10:00:00.000] [ctranslate2] [thread 1] [info] Loaded cuBLAS library version 12.1.3",
    # TensorRT's start-up notices
    '[TRT] [W] CUDA lazy loading is not enabled. Enabling it can significantly reduce device memory usage and '
    'speed up TensorRT initialization. See "Lazy Loading" section of CUDA documentation',
    "[04/28/2024-15:57:10] [TRT] [I] [MemUsageChange] Init CUDA: CPU +13, GPU +0, now: CPU 259, GPU 157 (MiB)",
]

test_healthy_lines_name_nothing = healthy_test(HEALTHY)


def test_llama_cuda_warning_is_not_the_removed_option():
    """llama.cpp still builds with -DLLAMA_CUDA=on (a CMake Warning): only LLAMA_CUBLAS is fatal."""
    text = ("CMake Warning at vendor/llama.cpp/CMakeLists.txt:95 (message):\n"
            "  LLAMA_CUDA is deprecated and will be removed in the future.\n\n  Use GGML_CUDA instead\n")
    assert "llama-cpp-cmake-option-renamed" not in _codes(text)


def test_torch_no_kernel_image_stays_torch():
    """The ggml/CTranslate2/TensorRT refinements leave torch's own 'no kernel image' alone."""
    text = ("  File \"/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py\", line 116, in forward\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] != ["extension-arch-missing"]
    assert "tensorrt-gpu-arch-unsupported" not in _codes(text)


def test_cuda_toolkit_fallback_notice_is_not_missing_nvcc():
    """A build that says it goes on without CUDA is not missing nvcc."""
    assert "nvcc-missing" not in _codes("CUDA Toolkit not found, building without CUDA support\n")


@pytest.mark.parametrize("line", [
    "2024-05-01 10:00:00.123 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
    "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. "
    "Please install all dependencies as mentioned in the GPU requirements page, make sure they're in the PATH, "
    "and that your GPU is supported.",
    "[TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA installation:  "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
])
def test_warning_records_with_a_signature_still_name_their_cause(line):
    """Marking onnxruntime's and TensorRT's warning records as warnings keeps their signatures."""
    assert _codes(line + "\n")
