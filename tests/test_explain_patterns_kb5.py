"""Issue 8 item 2 (kb5): knowledge for the wider GPU ecosystem, harvested from the programs' own
sources (docs/dev/coverage-audit.md, "kb5", lists every message harvested and the code it maps to):
inference runtimes (onnxruntime, TensorRT, llama.cpp/ggml-cuda, CTranslate2/faster-whisper), other
frameworks' GPU layers (JAX/XLA, TensorFlow, MXNet), cuDNN's loaders, ROCm/HIP, NCCL on a newer GPU,
old extension sources against a newer torch, and Apple's MPS backend.

Every message below is the program's own wording where its source raises or prints it (the
``source`` of the matching signature names the file; variable parts filled in as the program fills
them). Each runs through the wrappers pasted logs put around messages (tests/test_explain_patterns.py)
and must rank its code first; healthy lines the same programs print must name nothing.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    # -- new codes
    "xla-cuda-toolkit-missing": [
        # xla/service/gpu/llvm_gpu_backend/nvptx_libdevice_path.cc, as TensorFlow's and JAX's glog prints it
        "2023-05-06 16:19:54.078251: W tensorflow/compiler/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:530] "
        "Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice. This may result in compilation or runtime "
        "failures, if the program we try to run uses routines from libdevice.",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: libdevice not found at ./libdevice.10.bc",
        "tensorflow.python.framework.errors_impl.InternalError: libdevice not found at ./libdevice.10.bc [Op:__inference_train_function_1234]",
        # xla/stream_executor/cuda/subprocess_compilation.cc
        "W external/xla/xla/stream_executor/cuda/subprocess_compilation.cc:194] Couldn't get ptxas version string: "
        "INTERNAL: Couldn't invoke ptxas --version",
    ],
    "rocm-gpu-arch-unsupported": [
        # ROCm clr hipamd/src/hip_code_object.cpp
        '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
        ":1:hip_code_object.cpp      :456 : 1885938529 us: hipErrorNoBinaryForGpu: Unable to find code object for "
        "all current devices!",
        # rocBLAS tensile_host.cpp
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for "
        "GPU arch : gfx1031",
        # torch's c10/hip/HIPException.h with hipErrorInvalidDeviceFunction's string
        "RuntimeError: HIP error: invalid device function",
        # llama.cpp ggml/src/ggml-cuda/common.cuh (HIP build)
        "/app/ggml/src/ggml-cuda/mmq.cuh:3077: ERROR: HIP kernel mul_mat_q has no device code compatible with HIP "
        "arch 1030.",
    ],
    "cuda-extension-on-rocm": [
        # xformers/_cpp_lib.py, the line of its warning that holds both builds
        "    PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.5.1+rocm6.2)",
    ],
    "apple-mps-op-unsupported": [
        # aten/src/ATen/mps/MPSFallback.mm
        "NotImplementedError: The operator 'aten::_linalg_solve_ex.result' is not currently implemented for the MPS "
        "device. If you want this op to be added in priority during the prototype phase of this feature, please "
        "comment on https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the environment "
        "variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. WARNING: this will be "
        "slower than running natively on MPS.",
        # aten/src/ATen/native/mps/OperationUtils.mm
        "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please "
        "use float32 instead.",
    ],
    "nccl-too-old-for-gpu": [
        # nccl src/include/checks.h CUDACHECK with cudaErrorNoKernelImageForDevice's string
        "node1:2291:2291 [0] enqueue.cc:1556 NCCL WARN Cuda failure 'no kernel image is available for execution on "
        "the device'",
        "b200-0:123:456 [3] NCCL WARN Cuda failure 209 'no kernel image is available for execution on the device'",
    ],
    "extension-source-torch-api-removed": [
        # gcc / nvcc compiling an old extension against torch >= 1.11 (no THC) or >= 1.5 (no AT_CHECK)
        "/tmp/pip-build/src/cuda/nms_kernel.cu:2:10: fatal error: THC/THC.h: No such file or directory",
        "csrc/deform_conv.cpp:12:3: error: \u2018AT_CHECK\u2019 was not declared in this scope; did you mean "
        "\u2018TORCH_CHECK\u2019?",
        "csrc/cuda/roi_align_kernel.cu(309): error: identifier \"THCudaCheck\" is undefined",
        "csrc/cuda/roi_align_kernel.cu(280): error: identifier \"THCState\" is undefined",
        "csrc/ext.cpp:40:5: error: use of undeclared identifier 'THCudaMalloc'",
    ],
    "framework-gpu-arch-unsupported": [
        # tensorflow/core/common_runtime/gpu/gpu_device.cc (glog INFO line)
        "2020-07-07 15:35:48.520179: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1721] Ignoring visible gpu "
        "device (device: 0, name: GeForce GTX 670MX, pci bus id: 0000:01:00.0, compute capability: 3.0) with Cuda "
        "compute capability 3.0. The minimum required Cuda capability is 3.5.",
        # paddle/phi/backends/gpu/gpu_resources.cc InitGpuProperties
        "W0601 12:00:00.000000  1234 gpu_resources.cc:96] The GPU architecture in your current machine is Pascal, "
        "which is not compatible with Paddle installation with arch: 70 75 80 86 , it is recommended to install the "
        "corresponding wheel package according to the installation information on the official Paddle website.",
        "The GPU compute capability in your current machine is 120, which is not supported by Paddle, it is "
        "recommended to install the corresponding wheel package according to the installation information on the "
        "official Paddle website.",
    ],
    # -- signatures added to existing codes
    "cudnn-unusable": [
        # tensorflow/core/kernels/conv_ops*.cc
        "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably "
        "because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
        # xla/stream_executor (errors::Unimplemented)
        "tensorflow.python.framework.errors_impl.UnimplementedError: Graph execution error: DNN library is not found.",
        # cuDNN 9's loader, as CTranslate2/faster-whisper and onnxruntime hit it
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
        # cuDNN 8's loader on Windows
        "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
        "Could not load library cudnn_cnn_infer64_8.dll. Error code 193",
    ],
    "library-missing": [
        # CTranslate2's cuBLAS/cuDNN dlopen wrappers (faster-whisper, WhisperX)
        "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
        "RuntimeError: Library cublas64_12.dll is not found or cannot be loaded",
        # TensorRT's Python bindings on a machine without libnvinfer
        "ImportError: libnvinfer.so.10: cannot open shared object file: No such file or directory",
    ],
    "library-version-mismatch": [
        # jax_plugins/xla_cuda12 / jax/_src/xla_bridge.py _version_check (first line of the message)
        "RuntimeError: Unable to initialize backend 'cuda': Outdated cuSOLVER installation found.",
        "Outdated cuBLAS installation found.",
    ],
    "framework-cpu-only-build": [
        # CTranslate2; MXNet src/storage/storage.cc
        "ValueError: This CTranslate2 package was not compiled with CUDA support",
        "  what():  [22:03:01] src/storage/storage.cc:119: Compile with USE_CUDA=1 to enable GPU usage",
    ],
    "extension-arch-missing": [
        # llama.cpp ggml/src/ggml-cuda/common.cuh
        "/llama.cpp/ggml/src/ggml-cuda/mmv.cu:51: ERROR: CUDA kernel mul_mat_vec has no device code compatible with "
        "CUDA arch 520. ggml-cuda.cu was compiled for: 520",
    ],
    "flash-attn-arch-unsupported": [  # flash-attn's ROCm (composable_kernel) build on a GPU before MI200
        "RuntimeError: FlashAttention only supports AMD MI200 GPUs or newer.",
    ],
    "gpu-out-of-memory": [
        # TensorRT defaultAllocator.cpp; onnxruntime's CUDA_CALL with cudaErrorMemoryAllocation
        "[12/01/2025-10:12:13] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime "
        "(out of memory)",
        "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : "
        "CUDA failure 2: out of memory ; GPU=0 ; hostname=node1 ; expr=cudaMalloc((void**)&p, size);",
    ],
}

NEW_CODES = ["xla-cuda-toolkit-missing", "rocm-gpu-arch-unsupported", "cuda-extension-on-rocm",
             "apple-mps-op-unsupported", "nccl-too-old-for-gpu", "extension-source-torch-api-removed",
             "framework-gpu-arch-unsupported"]


test_library_message_in_every_wrapper, test_every_message_matches_a_signature_of_its_code = \
    family_tests(FAMILIES)

HEALTHY = [
    # healthy lines of the same programs: notices printed on runs that work
    "I0000 00:00:1700000000.123456 1234 gpu_device.cc:2019] Created device /job:localhost/replica:0/task:0/device:"
    "GPU:0 with 22000 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 4090, pci bus id: 0000:01:00.0, "
    "compute capability: 8.9",
    "I tensorflow/stream_executor/cuda/cuda_dnn.cc:384] Loaded cuDNN version 8600",
    "I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:901] successful NUMA node read from SysFS had "
    "negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero.",
    "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU "
    "instructions in performance-critical operations.",
    "[CudaDevice(id=0), CudaDevice(id=1)]",
    "W external/xla/xla/service/gpu/nvptx_compiler.cc:742] The NVIDIA driver's CUDA version is 12.0 which is older "
    "than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is disabling "
    "parallel compilation, which may slow down compilation.",
    "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
    "ggml_cuda_init: found 1 CUDA devices:",
    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes",
    "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no",
    "load_tensors: offloaded 33/33 layers to GPU",
    "[TRT] [I] [MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 150, GPU 1020 (MiB)",
    "[TRT] [W] CUDA lazy loading is not enabled. Enabling it can significantly reduce device memory usage and "
    "speed up TensorRT initialization. See \"Lazy Loading\" section of CUDA documentation",
    "['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']",
    "Processing audio with duration 00:16.114",
    "ctranslate2.get_cuda_device_count(): 1",
    # paddle gpu_resources.cc on a supported GPU
    "W0601 12:00:00.000000  1234 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.6, Driver "
    "API Version: 12.2, Runtime API Version: 11.8",
    "W0601 12:00:00.000000  1234 gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.",
    "torch 2.5.1+rocm6.2, torch.version.hip 6.2.41133",
    "  Name:                    gfx1100",
    "PYTORCH_ENABLE_MPS_FALLBACK=1 python train.py --device mps",
    "torch.backends.mps.is_available(): True",
    "node1:123:456 [0] NCCL INFO NCCL version 2.26.2+cuda12.8",
    "node1:123:456 [0] NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7",
    "building 'nms_ext' extension",
    "TORCH_CHECK(x.is_cuda(), \"x must be a CUDA tensor\");",
]

test_healthy_lines_of_the_harvested_programs_name_nothing = healthy_test(HEALTHY)


test_new_code_is_sourced_and_says_what_to_do = sourced_roots_test(NEW_CODES)


def test_proposed_names_now_have_entries():
    """SPLIT.toml's proposed names for causes without an entry are codes now (written from the
    sources, docs/dev/coverage-audit.md), and none is still on the proposed list."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    from pathlib import Path
    split = tomllib.loads((Path(__file__).resolve().parent / "corpus" / "explain" / "SPLIT.toml")
                          .read_text(encoding="utf-8"))
    kb = load_kb()
    for code in ["cuda-extension-on-rocm", "extension-source-torch-api-removed", "nccl-too-old-for-gpu"]:
        assert kb.get(code).code == code
        assert code not in split["codes"]["proposed"]


def test_xformers_cuda_build_under_rocm_torch_is_the_wrong_build_not_a_version_mismatch():
    """xformers' warning names both builds; with a ROCm torch the fix is the ROCm build of xformers,
    with a CUDA torch of another release it stays xformers' own code."""
    head = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n")
    rocm = head + "    PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.5.1+rocm6.2)\n    Python  3.11.10 (you have 3.11.10)\n"
    cuda = head + "    PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.4.0+cu121)\n    Python  3.11.10 (you have 3.11.10)\n"
    assert explain_text(rocm).root.code == "cuda-extension-on-rocm"
    assert explain_text(cuda).root.code != "cuda-extension-on-rocm"


def test_nccl_without_kernels_outranks_torch_arch():
    """torch's own kernels run (the GPU is supported by torch); only the NCCL inside the collective
    has no kernel image: the line NCCL prints names NCCL, not torch's build."""
    log = ("node1:2291:2291 [0] NCCL INFO NCCL version 2.20.5+cuda12.4\n"
           "node1:2291:2291 [0] enqueue.cc:1556 NCCL WARN Cuda failure 'no kernel image is available for execution "
           "on the device'\n"
           "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
           "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n")
    expl = explain_text(log)
    assert expl.root.code == "nccl-too-old-for-gpu"
    assert "torch-arch-not-supported" != expl.root.code
    # torch's own no-kernel-image error (no NCCL line) stays torch's
    torch_line = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert explain_text(torch_line).root.code != "nccl-too-old-for-gpu"


def _torch_include(stack_python):
    out = subprocess.run([stack_python, "-c", "import torch.utils.cpp_extension as c; "
                          "print('\\n'.join(c.include_paths()))"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return [p for p in out.stdout.split("\n") if p]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile against torch's headers")
def test_old_extension_source_against_the_real_torch_headers(stack_python, tmp_path):
    """An extension source written for torch < 1.11 (THC) and < 1.5 (AT_CHECK), compiled by the real
    g++ against the real torch's headers (the stack venv's): explain on the compiler's stderr names
    the removed API, not a missing toolchain or CUDA headers."""
    includes = _torch_include(stack_python)
    assert any(glob.glob(os.path.join(p, "c10", "util", "Exception.h")) for p in includes)
    args = [a for p in includes for a in ("-I", p)]
    thc = tmp_path / "nms.cpp"
    thc.write_text("#include <THC/THC.h>\nint main() { return 0; }\n", encoding="utf-8")
    at_check = tmp_path / "deform.cpp"
    at_check.write_text("#include <c10/util/Exception.h>\n"
                        "void f(bool ok) { AT_CHECK(ok, \"input must be contiguous\"); }\n", encoding="utf-8")
    for src, code in ((thc, "extension-source-torch-api-removed"), (at_check, "extension-source-torch-api-removed")):
        proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *args, str(src)],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"})
        assert proc.returncode != 0, proc.stderr[-1000:]
        out = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", "-"],
                             input=proc.stderr, capture_output=True, text=True, timeout=120)
        report = json.loads(out.stdout)
        assert out.returncode == 1, out.stderr[-1000:]
        codes = [c["code"] for c in report["candidates"]]
        assert codes[:1] == [code], (proc.stderr[-1500:], codes)
