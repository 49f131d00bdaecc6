"""Issue 8 item 2 (kbdrift): the same causes as other library RELEASES word them.

The knowledge base was mostly written from one recent release of each library (torch 2.13, Triton 3.9,
transformers 5.24, ...). Real logs come from every release: Triton 1.x's ``CUDA: Error- <name>`` and
its ``OutOfResources`` without separators, Triton 2.3's ``Failed to open libcuda.so``, torch 1.x's
``cuda runtime error (N) :`` and multi-line ``_check_driver`` assertions, flash-attn 0.2-1.0's bare
``TORCH_CHECK``s, bitsandbytes 0.35 to 0.50's five generations of setup errors, xformers 0.0.13 to
0.0.33, DeepSpeed 0.3 to 0.17, NCCL 2.4 to 2.30, the container toolkit's legacy and CSV modes, and
the CUDA runtime's error strings from libcudart 10.2 (bundled with torch 1.8.1), 11.7, 12.1, 12.8 and 13.0.

Each row is (code, releases, where the release raises or prints it, the message as that release
words it, variable parts filled in as the program fills them). docs/dev/coverage-audit.md,
"kbdrift: wordings across releases", lists every row with whether the signatures of the knowledge
base before this round matched it. Every message must head explain's answer with its code in every
wrapper pasted logs put around it (tests/test_explain_patterns.py's WRAPPERS plus this file's:
container log timestamps, journald, Ray's ``(Worker pid=..)``, a rank prefix on every line, and the
message re-raised under another exception type), and be matched by a signature of its own code.
Healthy lines the same releases print must name nothing.
"""

from __future__ import annotations

import re

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test

# (code, releases, source, message)
WORDINGS = [
    # combo26: transformers 5.x names the bitsandbytes floor in its own words (5.0.0 to 5.25.0:
    # BITSANDBYTES_MIN_VERSION = "0.46.1"); the 4.x wording was 'requires the latest version of bitsandbytes'
    ("dependency-version-mismatch", "transformers 5.0-5.25", "transformers/quantizers/quantizer_bnb_4bit.py "
     "validate_environment", "ImportError: Using `bitsandbytes` 4-bit quantization requires bitsandbytes: "
     "`pip install -U bitsandbytes>=0.46.1`"),
    ("dependency-version-mismatch", "transformers 5.0-5.25", "transformers/quantizers/quantizer_bnb_8bit.py "
     "validate_environment", "ImportError: Using `bitsandbytes` 8-bit quantization requires accelerate: "
     "`pip install 'accelerate>=1.1.0'`"),
    ("apple-mps-op-unsupported", "torch 1.12-1.13", "aten/src/ATen/mps/MPSFallback.mm mps_error_fallback (as public copies quote it)",
     "NotImplementedError: The operator 'aten::index.Tensor' is not current implemented for the MPS device. If you "
     "want this op to be added in priority during the prototype phase of this feature, please comment on "
     "https://github.com/pytorch/pytorch/issues/77764."),
    # recall7: older releases' wordings the 2026-12-02b training threads pasted
    ("nccl-ib-transport-error", "nccl 2.4-2.12", "src/transport/net_ib.cc ncclIbTest",
     "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129"),
    ("nccl-ib-transport-error", "nccl before 2.19", "src/misc/ibvwrap.cc wrap_ibv_modify_qp",
     "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"),
    ("nccl-ib-transport-error", "nccl 2.19+", "src/misc/ibvwrap.cc wrap_ibv_modify_qp",
     "NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1"),
    ("distributed-launch-env-missing", "torch 0.4", "torch/lib/THD InitMethodEnv.cpp",
     "RuntimeError: rank is not set but it is required for env:// init method"),
    ("no-c-compiler", "triton 2.0.0-3.3.1",
     "triton/compiler.py (2.0), common/build.py (2.1-2.3), runtime/build.py (3.0-3.3)",
     "RuntimeError: Failed to find C compiler. Please specify via CC environment variable."),
    ("no-c-compiler", "triton 3.4.0-3.9.0", "triton/runtime/build.py get_cc",
     "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
     "triton.knobs.build.impl."),
    ("shared-memory-too-small", "triton 1.1.1", "triton/code_gen.py OutOfResources",
     "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 98304Hardware limit: 65536"),
    ("shared-memory-too-small", "triton 1.1.1", "triton/code_gen.py OutOfResources",
     "out of resource: shared memoryRequired: 98304Hardware limit: 65536"),
    ("shared-memory-too-small", "triton 2.0.0", "triton/compiler.py OutOfResources",
     "triton.compiler.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536"),
    ("shared-memory-too-small", "triton 2.1.0-2.3.1", "triton/runtime/autotuner.py OutOfResources",
     "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
     "101376. Reducing block sizes or `num_stages` may help."),
    ("shared-memory-too-small", "triton 3.0.0-3.9.0", "triton/runtime/errors.py OutOfResources",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
     "101376. Reducing block sizes or `num_stages` may help."),
    ("libcuda-not-in-ldconfig", "triton 2.1.0", "triton/common/build.py libcuda_dirs",
     "AssertionError: libcuda.so cannot found!"),
    ("libcuda-not-in-ldconfig", "triton 2.3.1", "triton/common/build.py libcuda_dirs",
     'Please make sure GPU is setup and then run "/sbin/ldconfig" (requires sudo) to refresh the linker cache.'),
    ("libcuda-not-in-ldconfig", "triton 3.0.0-3.9.0", "triton/backends/nvidia/driver.py libcuda_dirs",
     'Please make sure GPU is set up and then run "/sbin/ldconfig" (requires sudo) to refresh the linker cache.'),
    ("libcuda-not-in-ldconfig", "triton 2.1.0-3.9.0", "triton/backends/nvidia/driver.py libcuda_dirs",
     "Possible files are located at ['/usr/lib/wsl/lib/libcuda.so.1'].Please create a symlink of libcuda.so to any "
     "of the file."),
    ("libcuda-missing", "triton 2.3.1", "triton/runtime/backends/cuda.c (dlopen)",
     "RuntimeError: Failed to open libcuda.so"),
    ("libcuda-missing", "triton 3.0.0-3.9.0", "triton/backends/nvidia/driver.c (dlopen)",
     "RuntimeError: Failed to open libcuda.so.1"),
    ("driver-too-old-for-build", "triton 2.3.1", "triton/compiler/make_launcher.py",
     "RuntimeError: Failed to retrieve cuLaunchKernelEx from libcuda.so"),
    ("driver-too-old-for-build", "triton 3.0.0-3.9.0", "triton/backends/nvidia/driver.c",
     "RuntimeError: Failed to retrieve cuTensorMapEncodeTiled from libcuda.so.1"),
    ("triton-no-active-driver", "triton 3.0.0-3.9.0", "triton/runtime/driver.py",
     "RuntimeError: 0 active drivers ([]). There should only be one."),
    ("triton-cache-unusable", "triton 2.3.1-3.9.0", "triton/runtime/cache.py",
     "RuntimeError: Could not create or locate cache dir"),
    ("ptxas-newer-than-driver", "triton 2.0.0-3.9.0", "driver.c gpuAssert",
     "RuntimeError: Triton Error [CUDA]: device kernel image is invalid"),
    ("ptxas-newer-than-driver", "triton 1.1.1", "libtriton.so cu_check",
     "RuntimeError: CUDA: Error- invalid image"),
    ("torch-arch-not-supported", "triton 1.1.1", "libtriton.so cu_check",
     "RuntimeError: CUDA: Error- no binary for gpu"),
    ("nccl-p2p-blocked", "triton 1.1.1", "libtriton.so cu_check",
     "RuntimeError: CUDA: Error- peer access unsupported"),
    ("device-ordinal-out-of-range", "triton 1.1.1", "libtriton.so cu_check",
     "RuntimeError: CUDA: Error- invalid device"),
    ("no-nvidia-driver", "triton 1.1.1", "libtriton.so cu_check",
     "RuntimeError: CUDA: Error- no device"),
    ("triton-kernel-failed", "triton 2.0.0-3.9.0", "libtriton / compiler.py",
     "RuntimeError: Internal Triton PTX codegen error: "),
    ("ptxas-unusable", "triton 2.0.0-2.1.0", "triton/compiler.py / common/backend.py",
     "RuntimeError: Cannot find ptxas"),
    ("ptxas-unusable", "triton 2.0.0", "triton/compiler.py",
     "RuntimeError: Triton only support CUDA 10.0 or higher"),
    ("flash-attn-arch-unsupported", "flash-attn 0.2.8", "csrc/flash_attn/fmha_api.cpp",
     "RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.  (Could this error message be improved?  "
     "If so, please report an enhancement request to PyTorch.)"),
    ("flash-attn-arch-unsupported", "flash-attn 1.0.9", "csrc/flash_attn/fmha_api.cpp",
     "RuntimeError: Expected is_sm90 || is_sm8x || is_sm75 to be true, but got false.  (Could this error message be "
     "improved?  If so, please report an enhancement request to PyTorch.)"),
    ("flash-attn-arch-unsupported", "flash-attn 1.0.9", "csrc/flash_attn/fmha_api.cpp",
     "RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the implementation "
     "needs a large amount of shared memory."),
    ("flash-attn-arch-unsupported", "flash-attn 2.0.0-2.8.3", "csrc/flash_attn/flash_api.cpp",
     "RuntimeError: FlashAttention only supports Ampere GPUs or newer."),
    ("gpu-arch-lacks-dtype", "flash-attn 0.2.8", "csrc/flash_attn/fmha_api.cpp",
     "RuntimeError: Expected q_dtype == torch::kFloat16 || (is_sm8x && q_dtype == torch::kBFloat16) to be true, but "
     "got false."),
    ("gpu-arch-lacks-dtype", "flash-attn 1.0.9", "csrc/flash_attn/fmha_api.cpp",
     "RuntimeError: Expected q_dtype == torch::kFloat16 || ((is_sm8x || is_sm90) && q_dtype == torch::kBFloat16) to "
     "be true, but got false."),
    ("gpu-arch-lacks-dtype", "flash-attn 2.0.0-2.6.3", "csrc/flash_attn/flash_api.cpp",
     "RuntimeError: bfloat16 is only supported on Ampere GPUs or newer"),
    ("driver-too-old-for-torch", "torch 1.x THCGeneral", "aten/src/THC/THCGeneral.cpp",
     "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
     "/pytorch/aten/src/THC/THCGeneral.cpp:50"),
    ("no-nvidia-driver", "torch 1.x THCGeneral", "aten/src/THC/THCGeneral.cpp",
     "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at "
     "/pytorch/aten/src/THC/THCGeneral.cpp:50"),
    ("torch-arch-not-supported", "torch 1.x THC", "THCudaCheck",
     "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=48 : no kernel image is available "
     "for execution on the device"),
    ("torch-arch-not-supported", "torch 2.8+ AcceleratorError", "c10/cuda/CUDAException",
     "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device"),
    ("cuda-forward-compat-unsupported", "libcudart 10.2-13.0", "cudaGetErrorString(804)",
     "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
     "supported HW"),
    ("driver-library-mismatch", "libcudart 10.2-13.0", "cudaGetErrorString(803)",
     "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / "
     "cuda driver combination"),
    ("libcuda-stub-loaded", "libcudart 11.7-13.0 (not in 10.2)", "cudaGetErrorString(34)",
     "RuntimeError: CUDA error: CUDA driver is a stub library"),
    ("driver-too-old-for-torch", "libcudart 11.7-13.0 (not in 10.2)", "cudaGetErrorString(222)",
     "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain."),
    ("no-nvidia-driver", "torch 1.4.0", "torch/cuda/__init__.py _check_driver",
     "AssertionError: \nFound no NVIDIA driver on your system. Please check that you\nhave an NVIDIA GPU and "
     "installed a driver from\nhttp://www.nvidia.com/Download/index.aspx"),
    ("driver-too-old-for-torch", "torch 1.4.0", "torch/cuda/__init__.py _check_driver",
     "AssertionError: \nThe NVIDIA driver on your system is too old (found version 10010).\nPlease update your GPU "
     "driver by downloading and installing a new\nversion from the URL: http://www.nvidia.com/Download/index.aspx"),
    ("torch-arch-not-supported", "torch 1.4.0", "torch/cuda/__init__.py _check_capability",
     "UserWarning: \n    Found GPU0 GeForce RTX 3090 which requires CUDA_VERSION >= 11000 to\n     work properly, "
     "but your PyTorch was compiled\n     with CUDA_VERSION 10020. Please install the correct PyTorch binary\n     "
     "using instructions from https://pytorch.org\n"),
    ("torch-arch-not-supported", "torch 1.4.0", "torch/cuda/__init__.py _check_capability",
     "UserWarning: \n    Found GPU0 GeForce GTX 760 which is of cuda capability 3.0.\n    PyTorch no longer "
     "supports this GPU because it is too old.\n    The minimum cuda capability that we support is 3.5.\n"),
    ("torch-arch-not-supported", "torch 1.13.1-2.4.1", "torch/cuda/__init__.py _check_capability",
     "UserWarning: \n    Found GPU0 NVIDIA GeForce GTX 760 which is of cuda capability 3.0.\n    PyTorch no longer "
     "supports this GPU because it is too old.\n    The minimum cuda capability supported by this library is 3.7.\n"),
    ("torch-arch-not-supported", "torch 2.13.0", "torch/cuda/__init__.py _warn_unsupported_code",
     "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 which is of compute capability (CC) 6.1."),
    ("torch-arch-not-supported", "torch 1.8.1-2.13.0", "torch/cuda/__init__.py _check_cubins",
     "UserWarning: \nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
     "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
     "sm_90.\n"),
    ("torch-cpu-only-build", "torch 1.4.0-2.13.0", "torch/cuda/__init__.py _lazy_init",
     "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch-cpu-only-build", "torch 2.1.0-2.13.0", "torch/cuda/__init__.py",
     "RuntimeError: PyTorch was compiled without CUDA support"),
    ("cuda-initialized-before-fork", "torch 1.4.0", "torch/cuda/__init__.py _lazy_init",
     "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method"),
    ("cuda-initialized-before-fork", "torch 1.4.0 (py<3.4)", "torch/cuda/__init__.py _lazy_init",
     "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "Python 3.4+ and the 'spawn' start method"),
    ("device-ordinal-out-of-range", "torch 1.4.0-2.13.0", "torch/cuda/__init__.py",
     "AssertionError: Invalid device id"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.35.0", "bitsandbytes/cuda_setup/main.py",
     "CUDA SETUP: CUDA detection failed. Either CUDA driver not installed, CUDA not installed, or you have multiple "
     "conflicting CUDA libraries!"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.35.0", "bitsandbytes/cuda_setup/main.py",
     "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching /usr/local/cuda/lib64..."),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.39.1-0.42.0", "bitsandbytes/cextension.py",
     "RuntimeError: \n        CUDA Setup failed despite GPU being available. Please run the following command to "
     "get more information:"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.42.0", "bitsandbytes/cuda_setup/main.py",
     "CUDA SETUP: Problem: The main issue seems to be that the main CUDA library was not detected or CUDA not "
     "installed."),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.39.1-0.42.0", "bitsandbytes/cuda_setup/main.py",
     "CUDA SETUP: Required library version not found: libbitsandbytes_cuda121.so. Maybe you need to compile it from "
     "source?"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.43.0-0.45.5", "bitsandbytes/cextension.py",
     "CUDA Setup failed despite CUDA being available. Please run the following command to get more information:"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.43.0-0.45.5", "bitsandbytes/cextension.py",
     "Could not load bitsandbytes native library: "
     "/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda124.so: cannot open shared object file: "
     "No such file or directory"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.46.0-0.49.2", "bitsandbytes/cextension.py get_native_library",
     "RuntimeError: Configured CUDA binary not found at "
     "/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda130.so"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.50.0+", "bitsandbytes/cextension.py get_native_library",
     "RuntimeError: No compatible CUDA binary found at "
     "/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda130.so"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.46.0+",
     "bitsandbytes/cextension.py ErrorHandlerMockBNBNativeLibrary",
     "Attempted to use bitsandbytes native library functionality but it's not available."),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.46.0+", "bitsandbytes/cextension.py _format_lib_error_message",
     "🚨 CUDA VERSION MISMATCH 🚨"),
    ("bitsandbytes-cuda-setup-failed", "bitsandbytes 0.46.0+", "bitsandbytes/cextension.py _format_dependency_error",
     "🚨 CUDA SETUP ERROR: Missing dependency: libcusparse.so.11 🚨"),
    ("xformers-no-cuda-ops", "xformers 0.0.13", "xformers/ops.py get_xformers_operator",
     "RuntimeError: No such operator xformers::efficient_attention - did you forget to build xformers with `python "
     "setup.py develop`?"),
    ("xformers-no-cuda-ops", "xformers 0.0.16-0.0.33", "xformers/_cpp_lib.py",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:"),
    ("xformers-no-cuda-ops", "xformers 0.0.20-0.0.23", "xformers/ops/fmha/common.py",
     "`cutlassF` is not supported because:\n    Operator wasn't built - see `python -m xformers.info` for more info"),
    ("xformers-no-cuda-ops", "xformers 0.0.24+", "xformers/ops/fmha/common.py",
     "    operator wasn't built - see `python -m xformers.info` for more info"),
    ("xformers-no-cuda-ops", "xformers 0.0.16+", "xformers/ops/fmha/common.py",
     "    xFormers wasn't build with CUDA support"),
    ("flash-attn-arch-unsupported", "xformers 0.0.28+", "xformers/ops/fmha/common.py",
     "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)"),
    ("nvcc-torch-cuda-mismatch", "DeepSpeed 0.3.10-0.11", "op_builder/builder.py assert_no_cuda_mismatch",
     "Exception: Installed CUDA version 11.3 does not match the version torch was compiled with 11.1, unable to "
     "compile cuda/cpp extensions without a matching cuda version."),
    ("nvcc-torch-cuda-mismatch", "DeepSpeed 0.12-0.17", "op_builder/builder.py assert_no_cuda_mismatch",
     "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.4 "
     "does not match the version torch was compiled with 11.8, unable to compile cuda/cpp extensions without a "
     "matching cuda version."),
    ("nvcc-missing", "DeepSpeed 0.3.10-0.11", "op_builder/builder.py installed_cuda_version",
     "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)"),
    ("nvcc-missing", "DeepSpeed 0.12-0.17", "op_builder/builder.py installed_cuda_version",
     "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)"),
    ("nvcc-missing", "DeepSpeed 0.9-0.17", "op_builder/builder.py get_cuda_compile_flag",
     " [WARNING]  async_io cuda is missing or is incompatible with installed torch, only cpu ops can be compiled!"),
    ("extension-torch-mismatch", "DeepSpeed 0.3.10-0.5", "op_builder/builder.py",
     "Exception: PyTorch and CUDA version mismatch! DeepSpeed ops were compiled and installed with a different "
     "version than what is being used at runtime. Please re-install DeepSpeed or switch torch versions."),
    ("extension-torch-mismatch", "DeepSpeed 0.8-0.17", "op_builder/builder.py validate_torch_version",
     "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version "
     "than what is being used at runtime. Please re-install DeepSpeed or switch torch versions."),
    ("flash-attn-not-installed", "transformers 4.36.2-4.46.3", "modeling_utils.py _check_and_enable_flash_attn_2",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
     "package flash_attn seems to be not installed. Please refer to the documentation of "
     "https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2."),
    ("flash-attn-not-installed", "transformers 4.36.2-4.46.3", "modeling_utils.py _check_and_enable_flash_attn_2",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: you need "
     "flash_attn package version to be greater or equal than 2.1.0. Detected version 1.0.9. Please refer to the "
     "documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install "
     "Flash Attention 2."),
    ("flash-attn-not-installed", "transformers 5.24.0", "modeling_utils.py",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
     "package for FlashAttention2 doesn't seem to be installed."),
    ("flash-attn-not-installed", "transformers 5.24.0", "modeling_utils.py",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention2 requires at least version `2.3.3`."),
    ("flash-attn-not-installed", "transformers 4.26.1-5.24.0", "dynamic_module_utils.py check_imports",
     "ImportError: This modeling file requires the following packages that were not found in your environment: "
     "flash_attn. Run `pip install flash_attn`"),
    ("torch-cuda-unavailable", "transformers 4.46.3", "modeling_utils.py",
     "ValueError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: Flash "
     "Attention 2 is not available on CPU. Please make sure torch can access a CUDA device."),
    ("torch-cuda-unavailable", "transformers 5.24.0", "modeling_utils.py",
     "ValueError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention2 is not available on CPU. Please make sure you are on any of the supported devices."),
    ("nccl-shm-too-small", "NCCL 2.4.8-2.11", "include/checks.h SYSCHECK from include/shm.h",
     "node1:123:456 [0] NCCL WARN Call to posix_fallocate failed : No space left on device"),
    ("nccl-shm-too-small", "NCCL 2.4.8-2.21", "include/shm.h (2.4-2.11), src/misc/shmutils.cc (2.12-2.21)",
     "node1:123:456 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)"),
    ("nccl-shm-too-small", "NCCL 2.23-2.30", "src/misc/shmutils.cc",
     "node1:123:456 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888), "
     "error: No space left on device (28)"),
    ("nccl-shm-too-small", "NCCL 2.4.8-2.30", "src/misc/shmutils.cc",
     "node1:123:457 [1] NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)"),
    ("nccl-shm-too-small", "NCCL 2.12-2.21", "src/misc/shmutils.cc",
     "node1:123:456 [0] NCCL WARN Error: failed to extend /dev/shm/nccl-03v824 to 9637892 bytes"),
    ("nccl-shm-too-small", "NCCL 2.23-2.30", "src/misc/shmutils.cc",
     "node1:123:456 [0] NCCL WARN Error: failed to extend /dev/shm/nccl-03v824 to 9637892 bytes, error: No space "
     "left on device (28)"),
    ("nccl-socket-ifname-wrong", "NCCL 2.4.8-2.30", "src/misc/socket.cc",
     "node1:123:456 [0] NCCL WARN Bootstrap : no socket interface found"),
    ("nccl-socket-ifname-wrong", "NCCL 2.4.8-2.30", "src/transport/net_socket.cc",
     "node1:123:456 [0] NCCL WARN NET/Socket : No usable listening interface found"),
    # harv39d: NCCL names a hardware issue for NVLink-connected GPUs (NVIDIA/nccl#2329): nvlink-degraded
    ("nvlink-degraded", "NCCL 2.12-2.30", "src/graph/paths.cc",
     "node1:123:456 [0] NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the "
     "case given their connectivity, and is probably due to a hardware issue."),
    ("nccl-ib-hca-wrong", "NCCL 2.4.8-2.30", "src/transport/net_ib.cc",
     "node1:123:456 [0] NCCL WARN NET/IB : Unable to open device mlx5_1"),
    ("driver-too-old-for-build", "libnvidia-container 1.x (legacy)", "src/nvc_info.c requirement check",
     "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a "
     "newer version, or use an earlier cuda container: unknown"),
    ("driver-too-old-for-build", "nvidia-container-toolkit 1.10+ (csv mode)", "internal/modifier/csv.go",
     "requirements not met: unsatisfied condition: cuda>=12.2 (cuda=11.4)"),
    ("container-toolkit-missing", "Docker 19.03-27", "moby daemon",
     'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'),
    ("container-toolkit-missing", "libnvidia-container 1.0-1.17", "src/driver.c",
     "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
     "file: no such file or directory: unknown"),
    ("libc-unsupported", "glibc 2.17-2.41", "elf/dl-version.c match_symbol",
     "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
     "/venv/lib/python3.10/site-packages/triton/_C/libtriton.so)"),
    ("libstdcxx-too-old", "glibc 2.17-2.41", "elf/dl-version.c match_symbol",
     "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
     "/venv/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"),
    ("libstdcxx-too-old", "glibc 2.17-2.41", "elf/dl-version.c match_symbol",
     "OSError: /opt/conda/lib/libstdc++.so.6: version `CXXABI_1.3.15' not found (required by /usr/lib/libLLVM.so)"),
    ("libcuda-missing", "glibc 2.17-2.41", "dlerror",
     "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"),
    ("python-headers-missing", "gcc", "gcc",
     "/tmp/tmpabc/main.c:1:10: fatal error: Python.h: No such file or directory"),
    ("python-headers-missing", "clang", "clang",
     "/tmp/tmpabc/main.c:1:10: fatal error: 'Python.h' file not found"),
    ("nvcc-arch-unsupported", "nvcc 10.2-12.x", "nvcc",
     "nvcc fatal   : Unsupported gpu architecture 'compute_89'"),
    ("ptxas-arch-unsupported", "ptxas 10.2-12.x", "ptxas",
     "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'"),
    ("torch-cuda-unavailable", "torch 1.8.1-2.13.0", "c10/cuda",
     "RuntimeError: No CUDA GPUs are available"),
    ("cuda-init-failed", "torch 1.8.1-2.13.0", "c10/cuda/CUDAFunctions.cpp",
     "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, "
     "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero."),
    ("dataloader-shm-too-small", "torch 1.4.0-2.13.0", "torch/csrc/DataLoader.cpp",
     "RuntimeError: DataLoader worker (pid 4821) is killed by signal: Bus error. It is possible that dataloader's "
     "workers are out of shared memory. Please try to raise your shared memory limit."),
    ("cuda-init-failed", "torch 1.0-1.10 (THC)", "aten/src/THC/THCGeneral.cpp THCudaCheck",
     "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=30 : unknown error"),
    ("cuda-init-failed", "torch 1.0-1.10 (THC)", "aten/src/THC/THCGeneral.cpp THCudaCheck",
     "RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:50"),
    ("extension-torch-mismatch", "macOS dyld (torch wheels for macOS)", "dyld dlerror",
     "ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/torchvision/_C.so, 0x0002): Symbol not found: "
     "__ZN3c1017RegisterOperatorsD1Ev"),
    ("extension-torch-mismatch", "glibc 2.17-2.41", "dlerror (elf/dl-lookup.c)",
     "ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined "
     "symbol: _ZN3c104cuda9SetDeviceEi"),
    ("extension-torch-mismatch", "CPython 3.8+ on Windows", "Python/dynload_win.c",
     "ImportError: DLL load failed while importing flash_attn_2_cuda: The specified procedure could not be found."),
    ("causal-conv1d-torch-mismatch", "causal-conv1d 1.0.0-1.6.1", 'setup.py CUDAExtension(name="causal_conv1d_cuda")',
     "ImportError: /venv/lib/python3.10/site-packages/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so: undefined "
     "symbol: "
     "_ZN3c107WarningC1ESt7variantIJNS0_11UserWarningENS0_18DeprecationWarningEEERKNS_14SourceLocationENSt7"
     "__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEb"),
    ("nvcc-missing", "causal-conv1d 1.0.0-1.6.1", "setup.py get_cuda_bare_metal_version",
     "RuntimeError: causal_conv1d is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V."),
    ("cuda-library-shadowed", "torch 2.1-2.13 + CUDA 12 wheels", "the loader (libcusparse.so.12 -> libnvJitLink.so.12)",
     "ImportError: /venv/lib/python3.10/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
     "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12"),
    ("cuda-library-shadowed", "NCCL before 2.29 under a newer torch", "the loader (libtorch_cuda.so -> libnccl.so.2)",
     "OSError: /venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"),
    ("cuda-library-shadowed", "NCCL 2.29-2.30", "src/init.cc",
     "NCCL WARN NCCL library is too old. This application was compiled with NCCL version 22703, but is running with "
     "NCCL version 21903"),
    ("fla-cpu-fallback", "fla 0.1.0-0.6.0", "fla/utils.py _cpu_device_warning (0.1-0.5), fla/utils/_device.py (0.6)",
     "/venv/lib/python3.12/site-packages/fla/utils.py:62: UserWarning: Triton is not supported on current platform, "
     "roll back to CPU."),
    ("fla-cpu-fallback", "fla 0.1.0-0.6.0 (torch 2.1-2.13: torch.cpu has no device)",
     "fla/utils.py device_torch_lib = getattr(torch, device)",
     "AttributeError: module 'torch.cpu' has no attribute 'device'"),
    ("triton-gpu-too-old", "torch 2.1.0-2.4.1", "torch/_inductor/scheduler.py",
     "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which "
     "is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA "
     "capability 6.0"),
    ("triton-gpu-too-old", "torch 2.13.0", "torch/_inductor/exc.py GPUTooOldForTriton",
     "torch._inductor.exc.GPUTooOldForTriton: Found Tesla P100-PCIE-16GB which is too old to be supported by the "
     "triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, "
     "but your device is of CUDA capability 6.0"),
    ("gpu-arch-lacks-dtype", "vLLM 0.2-0.6", "vllm/worker/worker.py _check_if_gpu_supports_dtype",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for "
     "example: --dtype=half."),
    ("gpu-arch-lacks-dtype", "vLLM 0.6-0.7", "vllm/worker/worker.py (compute_str)",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
     "V100-PCIE-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the `dtype` "
     "flag in CLI, for example: --dtype=half."),
    ("gpu-arch-lacks-dtype", "transformers 4.26.1-4.46.3", "training_args.py TrainingArguments.__post_init__",
     "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0"),
    ("gpu-arch-lacks-dtype", "transformers 5.24.0 (CUDA available)", "training_args.py TrainingArguments.__post_init__",
     "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model on "
     "CPU. You need Ampere+ GPU with cuda>=11.0."),
    ("torch-cuda-unavailable", "transformers 5.24.0 (no CUDA)", "training_args.py TrainingArguments.__post_init__",
     "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model on "
     "CPU."),
    ("torch-cuda-unavailable", "accelerate 0.15.0-0.25.0", "accelerator.py Accelerator.__init__",
     "ValueError: fp16 mixed precision requires a GPU"),
    ("torch-cuda-unavailable", "accelerate 1.0.1", "accelerator.py Accelerator.__init__",
     "ValueError: fp16 mixed precision requires a GPU (not 'mps')."),
    ("torch-cuda-unavailable", "accelerate 1.15.0", "accelerator.py Accelerator.__init__",
     "ValueError: fp16 mixed precision requires a device in ('xpu', 'cuda', 'npu', 'xla', 'mlu', 'musa', 'hpu', "
     "'sdaa', 'mps') (not 'meta')."),
    ("gpu-arch-lacks-dtype", "accelerate 0.15.0-1.15.0", "accelerator.py Accelerator.__init__",
     "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device."),
    ("dataloader-shm-too-small", "torch 1.8.1-2.13.0", "torch/csrc/DataLoader.cpp",
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."),
    # sweepb: setuptools' Visual C++ error before 'or greater' (Anaconda-Platform/support#125)
    ("no-c-compiler", "setuptools 40-54", "setuptools/msvc.py msvc14 error",
     'error: Microsoft Visual C++ 14.0 is required. Get it with "Build Tools for Visual Studio": '
     "https://visualstudio.microsoft.com/downloads/"),
    ("no-c-compiler", "setuptools on Python 2.7", "setuptools/msvc.py msvc9 error",
     "error: Microsoft Visual C++ 9.0 is required. Get it from http://aka.ms/vcpython27"),
]

FAMILIES: dict = {}
for _code, _releases, _source, _msg in WORDINGS:
    FAMILIES.setdefault(_code, []).append(_msg)


def _per_line(prefix):
    return lambda m: "\n".join(prefix + line for line in m.split("\n"))


_TYPE_RE = re.compile(r"^(?:[\w.]+(?:Error|Exception|Warning)|Exception): ")


def _reraised(m):
    """The message raised under another exception type, at the end of a traceback (torch 2.8+
    raises CUDA errors as torch.AcceleratorError, DeepSpeed 0.12+ as its own exception classes,
    a library may wrap the original in RuntimeError or ImportError)."""
    other = "ImportError: " if m.startswith("RuntimeError: ") else "RuntimeError: "
    body = _TYPE_RE.sub("", m, count=1)
    return ('Traceback (most recent call last):\n  File "/app/train.py", line 12, in <module>\n    main()\n'
            + other + body)


EXTRA_WRAPPERS = {
    # `kubectl logs --timestamps` / `docker logs -t`: an RFC 3339 stamp before every line
    "container-timestamps": _per_line("2024-05-01T12:00:00.123456789Z "),
    # journald (a systemd service): date, host, program[pid]
    "journald": _per_line("Dec 01 12:00:00 gpu-node-3 python3[4821]: "),
    # Ray's worker prefix, on every line of a multi-line message
    "ray-worker-every-line": _per_line("(Worker pid=4821) "),
    # torchrun 2.x prefixes every line of a rank's traceback
    "rank-every-line": _per_line("[rank3]: "),
    "reraised-other-type": _reraised,
    # older releases' prefixes: vLLM <= 0.6's worker processes, Ray's bare (pid=..), torchrun
    # --tee's [default0]:
    "vllm-0.6-worker": _per_line("(VllmWorkerProcess pid=4821) ERROR 05-01 12:00:00 multiproc_worker_utils.py:120] "),
    "ray-pid": _per_line("(pid=4821) "),
    "torchrun-tee": _per_line("[default0]:"),
    # a terminal cuts each line of a multi-line message at its width (WRAPPERS' terminal-cut-80
    # cuts the text as one line)
    "terminal-cut-80-per-line": lambda m: "\n".join(line[i:i + 80] for line in m.split("\n")
                                                    for i in range(0, max(len(line), 1), 80)),
}


test_release_wording_in_every_wrapper, test_every_release_wording_matches_a_signature_of_its_code = \
    family_tests(FAMILIES, wrappers=EXTRA_WRAPPERS)


HEALTHY = [
    # DeepSpeed op_builder/builder.py assert_no_cuda_mismatch: a minor mismatch it accepts
    "Installed CUDA version 11.8 does not match the version torch was compiled with 11.7 but since the APIs are "
    "compatible, accepting this combination",
    # bitsandbytes cuda_setup/main.py on every start that works (0.35-0.42; the runtime path line 0.39-0.42)
    "CUDA SETUP: Loading binary /venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda118.so...",
    "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so",
    # bitsandbytes 0.43+ cextension.py (logger.debug)
    "Loading bitsandbytes native library from: /venv/lib/python3.11/site-packages/bitsandbytes/"
    "libbitsandbytes_cuda124.so",
    # NCCL 2.12-2.30 src/graph/paths.cc: P2P off between GPUs that have no NVLink is an INFO
    "node1:123:456 [0] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with "
    "NCCL_IGNORE_DISABLED_P2P=1.",
    "node1:123:456 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
    # Triton 3.x's autotuner with TRITON_PRINT_AUTOTUNING=1 (runtime/autotuner.py, Config.__str__)
    "best config selected: BLOCK_M: 64, BLOCK_N: 64, num_warps: 4, num_ctas: 1, num_stages: 3, maxnreg: None, "
    "ir_override: None;",
    # `python -m xformers.info` on a working install (xformers/info.py: "{:<50} {}")
    "{:<50} {}".format("memory_efficient_attention.cutlassF:", "available"),
    "{:<50} {}".format("pytorch.cuda:", "available"),
    # torch 1.x cpp_extension on a working build
    "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
]

test_healthy_lines_of_these_releases_name_nothing = healthy_test(HEALTHY)


def test_every_row_names_a_known_code_and_a_release():
    kb = load_kb()
    for code, releases, source, msg in WORDINGS:
        assert kb.get(code).code == code
        assert releases and source and msg


def test_new_signatures_name_the_release_they_come_from():
    """A signature added for another release's wording says which release in its source."""
    kb = load_kb()
    ids = ["triton-libcuda-possible-files", "triton1-cuda-invalid-image", "torch-binary-needs-newer-cuda",
           "triton1-cuda-no-binary-for-gpu", "nccl-shm-attach", "triton1-cuda-peer-access-unsupported",
           "triton1-cuda-no-device", "triton1-cuda-invalid-device", "flash-attn-bf16-needs-ampere",
           "transformers-flash-attn-too-old", "transformers-bf16-gpu-unsupported"]
    sigs = {sig.id: sig for entry in kb.codes.values() for sig in entry.logs}
    for sig_id in ids:
        assert re.search(r"\b\d+\.(?:\d+|x)\b", sigs[sig_id].source), (sig_id, sigs[sig_id].source)


def test_triton1_error_names_do_not_swallow_their_neighbours():
    """Triton 1.x throws every CUresult as 'CUDA: Error- <name>': 'invalid device' is one name,
    'invalid context' another; only the first means a device ordinal out of range."""
    assert [c.code for c in explain_text("RuntimeError: CUDA: Error- invalid device\n").candidates][:1] == \
        ["device-ordinal-out-of-range"]
    # a guess by resemblance (basis "similar") is the training corpus's nearest thread, not a
    # signature swallowing the name: 'invalid context' names no cause, and which thread it
    # resembles most moves with every training log added
    for other in ("invalid context", "invalid device function", "no binary for gpu"):
        codes = [c.code for c in explain_text(f"RuntimeError: CUDA: Error- {other}\n").candidates
                 if c.basis != "similar"]
        assert "device-ordinal-out-of-range" not in codes[:1], (other, codes)
