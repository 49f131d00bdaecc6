"""Environment messages harvested from the sources of the other accelerators and platforms (harvh):
torch's Apple MPS, Intel XPU and ROCm/HIP back ends, Intel Extension for PyTorch, Triton's AMD
back end, ROCm's rocminfo, Windows DLL loading as Python reports it, WSL, conda's CUDA virtual
package and pip's resolution of CUDA wheels. Each message below is the library's text with its
variable parts filled in (the file that raises or prints it is named above it); each must rank its
code first in every wrapper pasted logs put around it. The healthy lines are notices these back
ends print on runs that go on: they must name nothing. docs/dev/harvest-harvh.md has the table of
what explain named for each message before and after.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "apple-mps-unavailable": [
        # aten/src/ATen/native/mps/OperationUtils.mm MPS_ERROR_RUNTIME_TOO_LOW (14.0+ since torch 2.10)
        "RuntimeError: The MPS backend is supported on MacOS 12.3+.Current OS version can be queried using `sw_vers`",
        "RuntimeError: The MPS backend is supported on macOS 14.0+. Current OS version can be queried using `sw_vers`",
        # OperationUtils.mm MPS_ERROR_NOT_COMPILED (an x86_64 torch under Rosetta)
        "RuntimeError: PyTorch code is not compiled with MPS enabled",
        # torch/mps/__init__.py _get_default_mps_generator / compile_shader
        "RuntimeError: MPS is not available",
    ],
    "apple-mps-op-unsupported": [
        # aten/src/ATen/mps/MPSFallback.mm mps_error_fallback (already named before this round)
        "NotImplementedError: The operator 'aten::_linalg_solve_ex.result' is not currently implemented for the "
        "MPS device. If you want this op to be considered for addition please comment on "
        "https://github.com/pytorch/pytorch/issues/141287 and mention use-case, that resulted in missing op as well "
        "as commit hash 2236df1770800ffea5697b11b0bb0d910b2e59e1. As a temporary fix, you can set the environment "
        "variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. WARNING: this will be "
        "slower than running natively on MPS.",
        # native/mps/operations/Convolution.mm, Pooling.mm: gated by the macOS release
        "RuntimeError: Conv3D is only supported on MPS for MacOS_13_2 or newer",
        "RuntimeError: avg_pool3d is only supported on MPS for MacOS_13_2 or newer",
        # native/mps/operations/LinearAlgebra.mm; OperationUtils.mm; UnaryOps.mm
        "RuntimeError: MPS device does not support mm for non-float inputs",
        "RuntimeError: MPSGraph does not support tensor dims larger than INT_MAX",
        "TypeError: MPS BFloat16 is only supported on MacOS 14 or newer",
        "RuntimeError: MPS does not support cumsum op with int64 input. Support has been added in macOS 13.3",
    ],
    "intel-xpu-unavailable": [
        # torch/xpu/__init__.py _lazy_init / _is_compiled
        "AssertionError: Torch not compiled with XPU enabled",
        "NotImplementedError: PyTorch was compiled without XPU support",
        # libtorch_cpu (a build without ATen_xpu)
        "RuntimeError: Cannot initialize XPU without ATen_xpu library.",
        # intel_extension_for_pytorch/xpu/lazy_init.py; csrc/gpu/runtime/Device.cpp
        "AssertionError: IPEX not compiled with XPU enabled",
        "UserWarning: XPU device count is zero! (Triggered internally at "
        "/build/intel-extension-for-pytorch/csrc/gpu/runtime/Device.cpp:127.)",
        # torch/xpu/__init__.py _import_pyzes; the Level Zero loader the SYCL runtime opens
        "RuntimeError: Failed to import pyzes. Ensure the GPU driver is installed with Level Zero Sysman support.",
        "OSError: libze_loader.so.1: cannot open shared object file: No such file or directory",
    ],
    "extension-torch-mismatch": [
        # intel_extension_for_pytorch/__init__.py (then os._exit(127)); transformers' is_ipex_available
        "ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.1.*, but PyTorch 2.2.0+cu121 is found. "
        "Please switch to the matching version and run again.",
        "UserWarning: Intel Extension for PyTorch 2.1 needs to work with PyTorch 2.1.*, but PyTorch 2.2.0 is "
        "found. Please switch to the matching version and run again.",
    ],
    "cpu-instruction-set-unsupported": [
        # intel_extension_for_pytorch/cpu/utils/_cpu_isa.py
        "ERROR! Intel® Extension for PyTorch* only works on machines with instruction sets equal or newer than "
        "AVX2, which are not detected on the current machine.",
    ],
    "gpu-out-of-memory": [
        # torch-directml dml_heap_allocator.cc (as the binary prints it)
        "RuntimeError: Could not allocate tensor with 231211008 bytes. There is not enough GPU video memory "
        "available!",
        # aten/src/ATen/mps/MPSAllocator.mm alloc_buffer_block (named before this round)
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.80 GB, other allocations: 1.23 GB, max "
        "allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 "
        "to disable upper limit for memory allocations (may cause system failure).",
        # c10/xpu caching allocator; Unified Runtime / Level Zero result codes
        "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
        "15.11 GiB. Of the allocated memory 12.30 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch "
        "but unallocated.",
        "RuntimeError: UR error: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        "RuntimeError: level_zero backend failed with error: 39 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        # c10/hip (hipified CUDACachingAllocator)
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "15.98 GiB of which 1.20 GiB is free. Of the allocated memory 13.00 GiB is allocated by PyTorch",
    ],
    "cuda-initialized-before-fork": [
        # torch/xpu/__init__.py _lazy_init
        "RuntimeError: Cannot re-initialize XPU in forked subprocess. To use XPU with multiprocessing, you must "
        "use the 'spawn' start method",
    ],
    "rocm-gpu-arch-unsupported": [
        # ROCm clr hip_code_object.cpp; torch c10/hip (named before this round)
        "RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
        "RuntimeError: HIP error: invalid device function",
    ],
    "rocm-gpu-unavailable": [
        # ROCm/rocBLAS library/src/tensile_host.cpp
        "rocBLAS error: Could not initialize Tensile host: No devices found",
        # hipGetErrorString(hipErrorNoDevice) through torch's c10/hip
        "RuntimeError: HIP error: no ROCm-capable device is detected",
        "RuntimeError: HIP error: hipErrorNoDevice",
        # ROCm/rocminfo rocminfo.cc CheckInitialState / RET_IF_HSA_ERR
        "ROCk module is NOT loaded, possibly no GPU devices",
        "Unable to open /dev/kfd read-write: Permission denied",
        "Failed to get user name to check for video group membership",
        "hsa api call failure at: /long_pathname_so_that_rpms_can_package_the_debug_info/src/rocminfo/rocminfo.cc:1306",
    ],
    "cuda-error-unclassified": [
        # the HSA runtime's illegal-address report under ROCm (fallback)
        "Memory access fault by GPU node-1 (Agent handle: 0x55d5c0b3a2d0) on address 0x7f5b2d600000. Reason: "
        "Page not present or supervisor privilege.",
        # torch c10/hip C10_HIP_CHECK: a HIP error no other entry names (fallback)
        "RuntimeError: HIP error: an illegal memory access was encountered",
    ],
    "library-missing": [
        # the ROCm libraries of a ROCm build, ROCm not installed or another major release
        "ImportError: libamdhip64.so.6: cannot open shared object file: No such file or directory",
        "OSError: libMIOpen.so.1: cannot open shared object file: No such file or directory",
        "ImportError: librocm_smi64.so.7: cannot open shared object file: No such file or directory",
        # triton third_party/amd/backend/driver.py _get_path_to_hip_runtime_dylib
        "RuntimeError: cannot locate libamdhip64.so after attempted paths ['/venv/lib/python3.10/site-packages/"
        "triton/backends/amd/lib/libamdhip64.so', '/opt/rocm/lib/libamdhip64.so']",
        # cpython Lib/ctypes/__init__.py on Windows (llama-cpp-python's loader and others)
        "FileNotFoundError: Could not find module 'C:\\venv\\lib\\site-packages\\llama_cpp\\lib\\llama.dll' (or one "
        "of its dependencies). Try using the full path with constructor syntax.",
        # torch/__init__.py _load_dll_libraries, a CUDA DLL of torch (named before this round)
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\ComfyUI\\'
        'python_embeded\\Lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
    ],
    "env-path-unusable": [
        # triton third_party/amd/backend/driver.py
        "RuntimeError: TRITON_LIBHIP_PATH '/opt/rocm/lib/libhip.so' does not point to a valid libamdhip64.so",
    ],
    "gpu-display-watchdog": [
        # winerror.h DXGI_ERROR_DEVICE_REMOVED / _HUNG through torch-directml and onnxruntime's DML provider
        "RuntimeError: D:\\a\\_work\\1\\s\\pytorch-directml-plugin\\torch_directml\\csrc\\engine\\"
        "dml_heap_allocator.cc(120): 887A0005 The GPU device instance has been suspended. Use "
        "GetDeviceRemovedReason to determine the appropriate action.",
        "887A0006 The GPU will not respond to more commands, most likely because of an invalid command passed by "
        "the calling application.",
    ],
    "kernel-library-not-installed": [
        "ModuleNotFoundError: No module named 'torch_directml'",
        "ModuleNotFoundError: No module named 'intel_extension_for_pytorch'",
    ],
    "windows-long-paths-disabled": [
        # pip src/pip/_internal/commands/install.py create_os_error_message; winerror.h 206
        "HINT: This error might have occurred since this system does not have Windows Long Path support enabled. "
        "You can find information on how to enable this at https://pip.pypa.io/warnings/enable-long-paths",
        "OSError: [WinError 206] The filename or extension is too long",
    ],
    "library-shadowed": [
        # torch/__init__.py _load_dll_libraries with WinError 127 (a DLL of another version first on PATH)
        'OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\\venv\\lib\\'
        'site-packages\\torch\\lib\\torch_cuda.dll" or one of its dependencies.',
    ],
    "msvc-runtime-missing": [
        # torch/__init__.py _load_dll_libraries on c10.dll (named before this round)
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Users\\me\\venv\\lib\\'
        'site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
        'OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading '
        '"C:\\venv\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
    ],
    "windows-pagefile-too-small": [
        'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
        '"C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
    ],
    "wsl-libcuda-not-linked": [
        # glibc ldconfig under WSL 2 (named before this round)
        "/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link",
    ],
    "wsl-gpu-unavailable": [
        "Failed to initialize NVML: GPU access blocked by the operating system",
    ],
    "conda-cuda-virtual-package-unsatisfied": [
        # libsolv / libmamba problem explanations, conda's classic UnsatisfiableError
        "nothing provides __cuda needed by pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0",
        "__cuda is missing on the system, but can be mocked via the CONDA_OVERRIDE_CUDA environment variable.",
        "__cuda >=12 , which is missing on the system, but can be mocked via the CONDA_OVERRIDE_CUDA environment "
        "variable.",
        "package jaxlib-0.4.23-cuda120py311h5a49573_200 requires __cuda, but none of the providers can be installed",
        "__cuda >=12.4 , which conflicts with any installable versions previously reported.",
        "feature:/linux-64::__cuda==11.4=0",
    ],
    "library-version-mismatch": [
        # pip check / resolver; uv's resolver
        'torch 2.3.0 requires nvidia-cudnn-cu12==8.9.2.26; platform_system == "Linux" and platform_machine == '
        '"x86_64", but you have nvidia-cudnn-cu12 9.1.0.70 which is incompatible.',
        "jax 0.4.30 requires nvidia-cudnn-cu12>=9.1, but you have nvidia-cudnn-cu12 8.9.2.26 which is incompatible.",
        "ERROR: Cannot install torch==2.1.0 and nvidia-cudnn-cu12==9.1.0.70 because these package versions have "
        "conflicting dependencies.",
        "Because torch==2.4.0+cu121 depends on nvidia-cudnn-cu12==9.1.0.70 and you require "
        "nvidia-cudnn-cu12==8.9.7.29, we can conclude that your requirements are unsatisfiable.",
    ],
    "package-no-matching-wheel": [
        # pip (named before this round) and its wheel-tag check
        "ERROR: No matching distribution found for torch==2.0.1+cu118",
        "ERROR: torch-2.1.0+cu121-cp311-cp311-linux_x86_64.whl is not a supported wheel on this platform.",
    ],
}



def _skip(msg, wrapper):
    # torch-vc-redist's c10.dll rule needs the DLL's name whole; an 80-column cut split the path
    # until the scanner re-joined a terminal's cuts (parser.hard_wrap_cuts): no limit left
    return None


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, skip=_skip)

test_the_new_codes_are_sourced = sourced_roots_test(
    ["apple-mps-unavailable", "intel-xpu-unavailable", "rocm-gpu-unavailable",
     "conda-cuda-virtual-package-unsatisfied", "windows-long-paths-disabled"])


# notices the back ends print on runs that go on: they name nothing
test_healthy_notices_name_nothing = healthy_test([
    # aten/src/ATen/mps/MPSFallback.mm mps_fallback (PYTORCH_ENABLE_MPS_FALLBACK=1)
    "UserWarning: The operator 'aten::linalg_svd' is not currently supported on the MPS backend and will fall "
    "back to run on the CPU. This may have performance implications. (Triggered internally at "
    "/Users/runner/work/pytorch/pytorch/pytorch/aten/src/ATen/mps/MPSFallback.mm:13.)",
    # native/mps/operations/ReduceOps.mm
    "UserWarning: MPS: no support for int64 reduction ops, casting it to int32 (Triggered internally at "
    "/Users/runner/work/pytorch/pytorch/pytorch/aten/src/ATen/native/mps/operations/ReduceOps.mm:144.)",
    # aten/src/ATen/Context.cpp on ROCm: hipBLASLt is not built for every gfx target
    "UserWarning: Attempting to use hipBLASLt on an unsupported architecture! Overriding blas backend to "
    "hipblas (Triggered internally at /pytorch/aten/src/ATen/Context.cpp:296.)",
    # libdrm on ROCm machines: the marketing-name table is optional
    "amdgpu.ids: No such file or directory",
    # rocminfo's header on a working machine; pip's index lines for CUDA wheels
    "ROCk module version 6.8.5 is loaded",
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu121",
    "Collecting nvidia-cudnn-cu12==9.1.0.70 (from torch)",
    "Successfully installed nvidia-cudnn-cu12-9.1.0.70 torch-2.4.0+cu121",
    "torch.backends.mps.is_available(): True",
    "Using device: mps",
    "  __cuda                   12.4        0             @virtual",
    # MIOpen's note that its prebuilt kernel database is not installed (it compiles kernels instead)
    "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_30.kdb Performance may degrade. "
    "Please follow instructions to install: https://github.com/ROCmSoftwarePlatform/MIOpen#installing-miopen-kernels-package",
])


def test_pip_long_path_hint_outranks_the_missing_file_it_explains():
    text = ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
            "'C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\nvidia\\\\cudnn\\\\include\\\\cudnn_backend_v9.h'\n"
            "HINT: This error might have occurred since this system does not have Windows Long Path support "
            "enabled. You can find information on how to enable this at "
            "https://pip.pypa.io/warnings/enable-long-paths\n")
    assert _top(text) == ["windows-long-paths-disabled"]


def _top(text: str):
    return [c.code for c in explain_text(text).candidates][:1]


def test_apple_mps_words_no_longer_name_nvidia_mps():
    # Apple's MPS back end is not NVIDIA's Multi-Process Service (the vocabulary's mig-mps word)
    text = "RuntimeError: Placeholder storage has not been allocated on MPS device!\n"
    assert "mps-unavailable" not in [c.code for c in explain_text(text).candidates]


def test_nvidia_mps_still_named():
    text = "CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server\n"
    assert _top(text) == ["mps-unavailable"]


def test_a_specific_hip_error_outranks_the_hip_fallback():
    text = ("RuntimeError: HIP error: invalid device function\n"
            "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\n")
    assert _top(text) == ["rocm-gpu-arch-unsupported"]


def test_rocminfo_report_names_the_missing_kfd_access():
    # rocminfo.cc prints the failing call and the HSA status on two lines
    text = ("ROCk module is loaded\n"
            "hsa api call failure at: /long_pathname_so_that_rpms_can_package_the_debug_info/src/rocminfo/"
            "rocminfo.cc:1306\n"
            "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
            "resources. This error may also occur when the core runtime library needs to spawn threads or create "
            "internal OS-specific events.\n")
    assert _top(text) == ["rocm-gpu-unavailable"]


def test_mamba_cuda_problem_tree_names_the_virtual_package():
    text = ("Could not solve for environment specs\n"
            "The following packages are incompatible\n"
            "├─ __cuda =11.4 * is requested and can be installed;\n"
            "└─ pytorch-cuda 12.4**  is not installable because it requires\n"
            "   └─ __cuda >=12.4 , which conflicts with any installable versions previously reported.\n")
    assert _top(text) == ["conda-cuda-virtual-package-unsatisfied"]


def test_bitsandbytes_dll_keeps_its_own_code():
    text = ("OSError: Could not find module 'C:\\Users\\me\\bitsandbytes\\libbitsandbytes_cuda121.dll' (or one of "
            "its dependencies). Try using the full path with constructor syntax.\n")
    assert _top(text) == ["bitsandbytes-cuda-setup-failed"]
