"""Environment messages harvested from the libraries' own source (harva): JAX/jaxlib/XLA,
TensorFlow, CuPy and Numba. Each message below is the library's text with its variable parts
filled in (the file that raises or prints it is named above it); each must rank its code first in
every wrapper pasted logs put around it. The healthy lines are start-up notices these libraries
print on runs that go on: they must name nothing. docs/dev/harvest-harva.md has the table of
what explain named for each message before and after.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "dependency-version-mismatch": [
        # jax/_src/lib/__init__.py check_jaxlib_version and its import guard
        "RuntimeError: jaxlib is version 0.4.7, but this version of jax requires version >= 0.4.14.",
        "RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version 0.4.28. "
        "Please update your jax and/or jaxlib packages.",
        "ImportError: This version of jax requires jaxlib version >= 0.4.30.",
        # numba/__init__.py _ensure_critical_deps / _ensure_llvm
        "ImportError: Numba needs NumPy 2.0 or less. Got NumPy 2.1.",
        "ImportError: Numba needs NumPy 1.22 or greater. Got NumPy 1.21.",
        "ImportError: Numba requires at least version 0.43.0 of llvmlite.",
        # cupy/_environment.py _detect_duplicate_installation (two builds of one package)
        "UserWarning: CuPy may not function correctly because multiple CuPy packages are installed "
        "in your environment: cupy-cuda11x, cupy-cuda12x",
    ],
    "kernel-library-not-installed": [
        # jax/_src/lib/__init__.py; numba/cuda/cudadrv/driver.py MVCLinker
        "ModuleNotFoundError: jax requires jaxlib to be installed. See "
        "https://github.com/jax-ml/jax#installation for installation instructions.",
        "ImportError: Minor version compatibility requires ptxcompiler and cubinlinker packages to be available",
    ],
    "library-version-mismatch": [
        # jax_plugins/cuda/__init__.py _check_cuda_versions
        "RuntimeError: cuDNN 9.10.0 had a binary backward-compatibility issue due to reordered enum values "
        "affecting block-scale datatypes. Found runtime version 91000 and build version 90800. Please upgrade "
        "to 9.10.1 or above.",
        "RuntimeError: cuDNN < 9.10.0 (90800 found) had an issue that caused some multi-GPU matmuls, in which "
        "the same finalized execution plan is used across different GPUs, to be functionally incorrect when "
        "run with cublasLt >= 12.9 (120900 found). Please upgrade to 9.10.1 or above.",
    ],
    "framework-cpu-only-build": [
        # jax/_src/xla_bridge.py _get_backend_uncached / backends
        "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are "
        "present. Platforms present are: cpu",
        "RuntimeError: Unknown backend cuda. Available backends are ['cpu']",
        # TensorFlow >= 2.11 on native Windows
        "WARNING:tensorflow:TensorFlow GPU support is not available on native Windows for TensorFlow >= 2.11. "
        "Even if CUDA/cuDNN are installed, GPU will not be used. Please use WSL2 or the TensorFlow-DirectML plugin.",
        # jax/_src/xla_bridge.py (jax <= 0.4.13), a fallback signature: alone in the log it names the cause
        "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        # xla/stream_executor/platform_manager.cc through jax/_src/xla_bridge.py: no CUDA platform in jaxlib
        "INFO:jax._src.xla_bridge:Unable to initialize backend 'cuda': NOT_FOUND: Could not find registered "
        'platform with name: "cuda". Available platform names are: Interpreter Host',
    ],
    "framework-gpu-arch-unsupported": [
        # tensorflow/core/common_runtime/gpu/gpu_device.cc (fallback: alone it names the cause)
        "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2431] TensorFlow was not built with CUDA kernel "
        "binaries compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which "
        "could take 30 minutes or longer.",
        # a framework's own launcher: TensorFlow's GpuLaunchKernel, CuPy's driver API
        "Non-OK-status: GpuLaunchKernel(SetZero<T>, config.block_count, config.thread_per_block, 0, d.stream()) "
        "status: Internal: no kernel image is available for execution on the device",
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is "
        "available for execution on the device",
        # xla/stream_executor/cuda/cuda_executor.cc through JAX
        "jax.errors.JaxRuntimeError: INTERNAL: Failed to load in-memory CUBIN: CUDA_ERROR_NO_BINARY_FOR_GPU: "
        "no kernel image is available for execution on the device",
    ],
    "gpu-out-of-memory": [
        # xla/tsl/framework/bfc_allocator.cc (TensorFlow and JAX)
        "W external/xla/xla/tsl/framework/bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of memory "
        "trying to allocate 16.00GiB (rounded to 17179869184)requested by op",
        # tensorflow/core/common_runtime/gpu/gpu_device.cc
        "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 "
        "failed. Status: out of memory",
        # cupy/cuda/memory.pyx OutOfMemoryError
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: "
        "2,147,483,648 bytes).",
        # tensorflow/core/common_runtime/gpu/gpu_device.cc EigenGpuStreamDevice::allocate
        "F tensorflow/core/common_runtime/gpu/gpu_device.cc:130] EigenAllocator for GPU ran out of memory when "
        "allocating 8388608. See error logs for more detailed info.",
    ],
    "driver-too-old-for-build": [
        # tensorflow gpu_device.cc's cudaGetDevice() status
        "tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: CUDA driver "
        "version is insufficient for CUDA runtime version",
        # numba/cuda/cudadrv/driver.py (cuInit's result; _find_api)
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
        "CUDA_ERROR_INSUFFICIENT_DRIVER (35)",
        "numba.cuda.cudadrv.error.CudaDriverError: Driver missing function: cuDeviceGetUuid_v2",
        # cupy/cuda/memory.pyx MemoryAsyncPool
        "RuntimeError: The driver version is insufficient for this query",
    ],
    "driver-library-mismatch": [
        # xla/stream_executor/cuda/cuda_diagnostics.cc WarnOnDsoKernelMismatch
        "E external/xla/xla/stream_executor/cuda/cuda_diagnostics.cc:256] kernel version 470.82.1 does not "
        "match DSO version 510.47.3 -- cannot find working devices in this configuration",
    ],
    "device-nodes-missing": [
        # xla/stream_executor/cuda/cuda_diagnostics.cc LogDiagnosticInformation
        "no NVIDIA GPU device is present: /dev/nvidia0 does not exist",
    ],
    "cuda-init-failed": [
        # numba/cuda/cudadrv/driver.py Driver.initialize
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
        "CUDA_ERROR_OPERATING_SYSTEM (304)",
    ],
    "cudnn-unusable": [
        # cuDNN 8.3-8.9 for Windows, as TensorFlow users paste it
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
    ],
    "cuda-initialized-before-fork": [
        # numba/cuda/cudadrv/driver.py _detect_fork
        "numba.cuda.cudadrv.error.CudaDriverError: CUDA initialized before forking",
    ],
    "env-switch-set": [
        # numba/cuda/cudadrv/driver.py and runtime.py
        "numba.cuda.cudadrv.error.CudaSupportError: CUDA is disabled due to setting NUMBA_DISABLE_CUDA=1 in "
        "the environment, or because CUDA is unsupported on 32-bit systems.",
    ],
    "env-path-unusable": [
        # numba/cuda/cudadrv/driver.py locate_driver_and_loader
        "ValueError: NUMBA_CUDA_DRIVER /usr/lib/libcuda.so is not a valid file path.  Note it must be a "
        "filepath of the .so/.dll/.dylib or the driver",
    ],
    "cublas-call-failed": [
        # tensorflow/core/kernels/matmul_op_impl.h
        "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : a.shape=(32, 784), "
        "b.shape=(784, 10), m=32, n=10, k=784",
        # xla/stream_executor/cuda/cuda_blas.cc CUDABlas::Init
        "E external/xla/xla/stream_executor/cuda/cuda_blas.cc:190] failed to create cublas handle: the library "
        "was not initialized",
    ],
    "xla-cuda-toolkit-missing": [
        # xla/stream_executor/cuda/subprocess_compilation.cc
        "You are using ptxas 11.6.124, which is older than 11.8. ptxas before 11.8 is known to miscompile XLA "
        "code, leading to incorrect results or invalid-address errors.",
    ],
    "nvcc-missing": [
        # cupy/cuda/compiler.py _run_cc
        "OSError: Failed to run `nvcc` command. Check PATH environment variable: [Errno 2] No such file or "
        "directory: 'nvcc'",
    ],
    "library-missing": [
        # nvrtc.h NVRTC_ERROR_BUILTIN_OPERATION_FAILURE through cupy_backends/cuda/libs/nvrtc.pyx
        "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE (7)",
    ],
    "numba-cuda-toolkit-unusable": [
        # numba/cuda/cudadrv/nvvm.py and nvrtc.py
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:",
        "RuntimeError: Missing libdevice file for compute_52.",
        "RuntimeError: Missing libdevice file.",
        "UserWarning: CUDA Toolkit 10.2 is unsupported by Numba - 11.2 is the minimum required version.",
        "numba.cuda.cudadrv.error.NvvmSupportError: No supported GPU compute capabilities found. Please check "
        "your cudatoolkit version matches your CUDA version.",
        "numba.cuda.cudadrv.error.NvrtcSupportError: NVRTC cannot be loaded",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_the_new_code_is_sourced = sourced_roots_test(["numba-cuda-toolkit-unusable"])


# start-up notices and fallbacks the libraries print on runs that go on: they name nothing
test_healthy_notices_name_nothing = healthy_test([
    # xla/stream_executor/cuda/cuda_dnn.cc (and cuda_fft.cc, cuda_blas.cc): every TF 2.1x start
    "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
    "Attempting to register factory for plugin cuDNN when one has already been registered",
    "E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register cuBLAS factory: "
    "Attempting to register factory for plugin cuBLAS when one has already been registered",
    # tensorflow/compiler/tf2tensorrt: TensorRT is optional
    "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
    "Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, please make "
    "sure the missing libraries mentioned above are installed properly.",
    # tsl/cuda/cudart_stub.cc, cuda_executor.cc, gpu_device.cc, cpu_feature_guard.cc
    "I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a "
    "GPU set up on your machine.",
    "successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, "
    "so returning NUMA node zero",
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1525] Created device "
    "/job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> device: 0, name: NVIDIA GeForce "
    "RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6",
    "This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
    # bfc_allocator.cc: the caller retries with less memory
    "W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying "
    "to allocate 2.26GiB with freed_by_count=0. The caller indicates that this is not a failure, but this may "
    "mean that there could be performance gains if more memory were available.",
    # xla/stream_executor/cuda: diagnostics and the driver fallback for PTX
    "I external/xla/xla/stream_executor/cuda/cuda_diagnostics.cc:137] retrieving CUDA diagnostic information "
    "for host: gpu-node-3",
    "Can't find ptxas binary in ${CUDA_DIR}/bin.  Will back to the GPU driver for PTX -> sass compilation. "
    "This is OK so long as you don't see a warning below about an out-of-date driver version.",
    # jax/_src/xla_bridge.py _at_fork; jax_plugins/cuda's advisory about cuBLAS on Blackwell
    "RuntimeWarning: os.fork() was called. os.fork() is incompatible with multithreaded code, and JAX is "
    "multithreaded, so this will likely lead to a deadlock.",
    "cuBLAS < 13.2 (120900 found) has a known issue where many kernels free TMEM buffers multiple times.",
    # cupy/_environment.py (wheels carry their libraries) and cupy/_core/core.pyx PerformanceWarning
    "UserWarning: CUDA path could not be detected. Set CUDA_PATH environment variable if CuPy fails to load.",
    "PerformanceWarning: Using synchronous transfer as pinned memory (1048576 bytes) could not be allocated. "
    "This generally occurs because of insufficient host memory. The original error was: "
    "cudaErrorMemoryAllocation: out of memory",
    # numba's occupancy hint
    "NumbaPerformanceWarning: Grid size 1 will likely result in GPU under-utilization due to low occupancy.",
    # jax/_src/xla_bridge.py backends(): a platform jaxlib does not have, logged on every healthy CUDA run
    "INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered "
    'platform with name: "rocm". Available platform names are: CUDA',
    "I0000 00:00:1700000000.000000 1234 xla_bridge.py:660] Unable to initialize backend 'rocm': NOT_FOUND: "
    'Could not find registered platform with name: "rocm". Available platform names are: CUDA',
    # TensorFlow start-up records
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1720] Found device 0 with properties: pciBusID: "
    "0000:01:00.0 name: NVIDIA GeForce RTX 3090 computeCapability: 8.6",
    "Your CPU supports instructions that this TensorFlow binary was not compiled to use: AVX2 FMA",
    "oneDNN custom operations are on. You may see slightly different numerical results due to floating-point "
    "round-off errors from different computation orders. To turn them off, set the environment variable "
    "`TF_ENABLE_ONEDNN_OPTS=0`.",
    "I external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:454] Loaded cuDNN version 8907",
])


def _top(text: str):
    return [c.code for c in explain_text(text).candidates][:1]


def test_numba_driver_messages_spanning_lines_name_their_cause():
    # numba/cuda/cudadrv/driver.py DRIVER_NOT_FOUND_MSG / DRIVER_LOAD_ERROR_MSG: several lines
    not_found = ("Traceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n"
                 "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \n"
                 "CUDA driver library cannot be found.\nIf you are sure that a CUDA driver is installed,\n"
                 "try setting environment variable NUMBA_CUDA_DRIVER\nwith the file path of the CUDA driver "
                 "shared library.\n:\n")
    assert _top(not_found) == ["libcuda-missing"]
    load_error = ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \n"
                  "Possible CUDA driver libraries are found but error occurred during load:\n"
                  "libcuda.so: cannot open shared object file: No such file or directory\n:\n")
    assert _top(load_error) == ["libcuda-missing"]
    # the driver JIT's log under cuModuleLoadDataEx: PTX newer than the driver
    jit = ("numba.cuda.cudadrv.driver.CudaAPIError: [218] cuModuleLoadDataEx error:\n"
           "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.4; current version is '8.2'\n")
    assert _top(jit) == ["driver-too-old-for-build"]


def test_a_ptxas_version_error_outside_numba_stays_ptxas():
    triton = ("RuntimeError: Internal Triton PTX codegen error:\n"
              "ptxas application ptx input, line 5; fatal   : Unsupported .version 8.7; current version is '8.4'\n")
    assert _top(triton) == ["ptxas-arch-unsupported"]


def test_cupy_import_failure_names_the_library_under_it():
    # cupy/__init__.py wraps the original ImportError in _diagnose_import_error's text
    text = ("ImportError: \n================================================================\n"
            "Failed to import CuPy.\n\nIf you installed CuPy via wheels (cupy-cudaXXX or cupy-rocm-X-X), make "
            "sure that the package matches with the version of CUDA or ROCm installed.\n\nOriginal error:\n"
            "  ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
            "================================================================\n")
    assert _top(text) == ["library-missing"]
    # alone (the original error cut off), the fallback signature still names a library CuPy cannot load
    assert _top("Failed to import CuPy.\n") == ["library-missing"]


def test_jax_outdated_component_report_names_the_version_mismatch():
    # jax_plugins/cuda/__init__.py _check_cuda_versions / _make_msg
    text = ("RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n"
            "Outdated cuDNN installation found.\nVersion JAX was built against: 90800\nMinimum supported: 90800\n"
            "Installed version: 90100\nThe local installation version must be no lower than 90800.\n")
    assert _top(text) == ["library-version-mismatch"]


def test_tf_not_built_for_capability_yields_to_a_real_failure():
    # the JIT-from-PTX notice is a fallback signature: a failure elsewhere in the log outranks it
    text = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2431] TensorFlow was not built with CUDA kernel "
            "binaries compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which "
            "could take 30 minutes or longer.\n"
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
            "shape[32,64,224,224] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
            "GPU_0_bfc\n")
    assert _top(text) == ["gpu-out-of-memory"]
