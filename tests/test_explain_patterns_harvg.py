"""Environment messages harvested from the source of the compilers and kernel builders (harvg):
torch.compile (inductor/dynamo), nvcc and its host-compiler checks, ninja, pybind11, CUTLASS,
TransformerEngine, Megatron-core, Liger-Kernel, Unsloth, torchao, FlashInfer, SageAttention and
TileLang. Each message below is the library's text with its variable parts filled in (the file
that raises or prints it is named above it); each must rank its code first in every wrapper pasted
logs put around it. The healthy lines are notices these libraries print on runs that go on: they
must name nothing. docs/dev/harvest-harvg.md has the table of what explain named for each message
before and after.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "no-c-compiler": [
        # torch/_inductor/exc.py InvalidCxxCompiler (raised by cpp_builder.get_cpp_compiler)
        "torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in "
        "torch._inductor.config.cpp.cxx: (None, 'g++')",
        # torch/_inductor/cpp_builder.py check_mingw_win32_flavor / InvalidCxxCompiler(compiler)
        "RuntimeError: Compiler: x86_64-w64-mingw32-g++ is not found.",
    ],
    "windows-compiler-unusable": [
        # nvcc on Windows outside a Visual Studio developer prompt
        "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH",
        "nvcc fatal   : Could not set up the environment for Microsoft Visual Studio using "
        "'C:/Program Files/Microsoft Visual Studio/2022/Community/VC/Auxiliary/Build/vcvars64.bat'",
        # cmd.exe, when a build runs cl without the developer environment
        "'cl' is not recognized as an internal or external command,",
        # torch/_inductor/cpp_builder.py check_msvc_cl_language_id, _is_clang, _is_intel_compiler
        "RuntimeError: Torch.compile() is only support MSVC with English language pack,"
        "Please reinstall its language pack to English.",
        "RuntimeError: Please use clang-cl, due to torch.compile only support MSVC-like CLI (compiler flags syntax).",
    ],
    "python-headers-missing": [
        # torch/_inductor/cpp_builder.py _get_python_include_dirs
        "UserWarning: Can't find Python.h in /usr/include/python3.10",
    ],
    "host-compiler-unsupported-by-nvcc": [
        # nvcc's host-compiler version check (macOS clang)
        "nvcc fatal   : The version ('90100') of the host compiler ('Apple clang') is not supported",
        # nvcc 11.4-11.6 front end on gcc 11's libstdc++
        "/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with '...':",
    ],
    "nvcc-missing": [
        # flashinfer/jit/cpp_ext.py get_cuda_path / get_cuda_version
        "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist",
        "RuntimeError: nvcc not found and PyTorch is not built with CUDA support. Could not determine CUDA version.",
        # flashinfer cake backend; torch/_inductor/codecache.py (AOT fatbin)
        "RuntimeError: nvcc is required to build the Cake Router GEMM backend",
        "RuntimeError: nvcc is required to build fatbin",
        # tilelang/env.py, tilelang/contrib/nvcc.py
        "RuntimeError: Failed to automatically detect CUDA installation. Please set the CUDA_HOME environment "
        "variable manually (e.g., export CUDA_HOME=/usr/local/cuda).",
        "AssertionError: `nvidia-cuda-nvcc` installed but no `nvcc` found",
        "RuntimeError: Cannot find 'nvdisasm' or 'cuobjdump'. Please ensure CUDA toolkit is installed and in PATH.",
        # TransformerEngine build_tools/utils.py, build_tools/pytorch.py
        "RuntimeError: Could neither find NVCC executable nor CUDA runtime Python package.",
        "RuntimeError: Transformer Engine requires CUDA 12.0 or newer",
        # SageAttention setup.py
        "RuntimeError: CUDA 12.0 or higher is required to build the package.",
    ],
    "cuda-headers-missing": [
        # transformer_engine/common/util/cuda_runtime.cpp include_directory / include_directory_version
        "RuntimeError: /workspace/TransformerEngine/transformer_engine/common/util/cuda_runtime.cpp:276 in "
        "function include_directory: Could not find cuda_runtime.h in NVTE_CUDA_INCLUDE_DIR=<unset>, "
        "CUDA_HOME=<unset>, CUDA_DIR=<unset>, /usr/local/cuda. Specify path to CUDA Toolkit headers with "
        "NVTE_CUDA_INCLUDE_DIR or disable NVRTC support with NVTE_DISABLE_NVRTC=1.",
        "RuntimeError: Could not detect version of CUDA Toolkit headers (CUDA Toolkit headers not found).",
    ],
    "cuda-link-library-missing": [
        # ninja src/build.cc, for a CUDA library linked by full path
        "ninja: error: '/usr/local/cuda/lib64/libcudart.so', needed by 'fused_kernels.so', missing and no "
        "known rule to make it",
    ],
    "extension-python-version-mismatch": [
        # pybind11 include/pybind11/detail/common.h PYBIND11_CHECK_PYTHON_VERSION
        "ImportError: Python version mismatch: module was compiled for Python 3.10, but the interpreter "
        "version is incompatible: 3.11.4.",
    ],
    "build-dependency-headers-missing": [
        # CMake find_package(pybind11)
        'By not providing "Findpybind11.cmake" in CMAKE_MODULE_PATH this project has asked CMake to find a '
        'package configuration file provided by "pybind11", but CMake did not find one.',
    ],
    "extension-arch-missing": [
        # cutlass include/cute/arch/mma_sm90_gmma.hpp and siblings; cutlass.h status string
        "ERROR : Arch conditional MMA instruction used without targeting sm90a compute capability. Aborting.",
        "Attempting to use SM90_64x128x16_F32BF16BF16_SS without CUTE_ARCH_MMA_SM90A_ENABLED",
        "Trying to use tma without CUTE_ARCH_TMA_SM90_ENABLED.",
        "RuntimeError: cutlass_scaled_mm failed: Error Architecture Mismatch",
    ],
    "driver-too-old-for-build": [
        # cutlass.h cutlassGetStatusString(kErrorInsufficientDriver)
        "RuntimeError: CUTLASS GEMM cannot be initialized: Error Insufficient Driver",
    ],
    "kernel-extension-not-built": [
        # transformer_engine/common/__init__.py
        "FileNotFoundError: Could not find shared object file for Transformer Engine core lib.",
        "RuntimeError: Found empty `transformer-engine` meta package installed. Install `transformer-engine` "
        "with framework extensions via'pip3 install --no-build-isolation transformer-engine[pytorch,jax]==VERSION'",
        # megatron/core/tensor_parallel/layers.py
        "RuntimeError: ColumnParallelLinear was called with gradient_accumulation_fusion set to True but the "
        "custom CUDA extension fused_weight_gradient_mlp_cuda module is not found. To use "
        "gradient_accumulation_fusion you must install APEX with --cpp_ext and --cuda_ext.",
        # torchao/prototype/mx_formats/kernels.py
        "NotImplementedError: `mxfp8_quantize_cuda` needs (1) torch 2.8+ and (2) torchao built from source on "
        "a machine with CUDA capability 10.0+. Please see https://github.com/pytorch/ao/issues/2932 for more details.",
        # flashinfer/jit/env.py, flashinfer/jit/core.py MissingJITCacheError
        "FileNotFoundError: FlashInfer headers were not found. Checked:",
        "flashinfer.jit.core.MissingJITCacheError: JIT compilation is disabled via FLASHINFER_DISABLE_JIT "
        "environment variable, but the required module is not found in the JIT cache.",
        # tilelang/libinfo.py
        "RuntimeError: Cannot find libraries: libtilelang_module.so",
    ],
    "library-missing": [
        # transformer_engine/common/__init__.py _load_cuda_library
        "RuntimeError: nvrtc shared object not found.",
        "RuntimeError: cublas shared object not found.",
    ],
    "cudnn-unusable": [
        "RuntimeError: cudnn shared object not found.",
    ],
    "gpu-arch-lacks-dtype": [
        # transformer_engine/pytorch/quantization.py check_mxfp8_support / check_nvfp4_support
        "AssertionError: Device compute capability 10.0 or higher required for MXFP8 execution.",
        "AssertionError: Device compute capability 10.0 or higher required for NVFP4 execution.",
        "RuntimeError: MXFP8 Dequantization is NOT supported by architectures < 10.0",
        # torchao/quantization/quant_api.py
        "AssertionError: Float8 dynamic quantization requires CUDA compute capability ≥8.9 or MI300+ or XPU.",
    ],
    "framework-gpu-arch-unsupported": [
        # flashinfer/jit/core.py, compilation_context.py, utils.py
        "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
        "RuntimeError: No supported CUDA architectures found for major versions [9, 10].",
        "flashinfer.utils.BackendSupportedError: mm_fp4 does not support compute capability 89",
        # Liger-Kernel cutedsl cross entropy
        "RuntimeError: CuTe DSL fused scaled cross entropy requires a Hopper compute capability 9.0 GPU",
        # megatron/core/transformer/moe/grouped_gemm_util.py
        "AssertionError: Unsupported compute capability for GroupedGEMM kernels.",
        # TransformerEngine NCCL EP, grouped requantization
        "RuntimeError: NCCL EP requires SM_90+ (Hopper or later), but current device is SM_80",
        # sageattention/core.py
        "ValueError: Unsupported CUDA architecture: sm75",
    ],
    "nvcc-arch-unsupported": [
        # SageAttention setup.py
        "RuntimeError: CUDA 12.4 or higher is required for compute capability 8.9.",
        "RuntimeError: CUDA 12.8 or higher is required for compute capability 12.0.",
        # transformer_engine/common/cast
        "RuntimeError: FP4 support requires CUDA 12.8+, but compile-time CUDA version is 12040",
        # flashinfer/compilation_context.py
        "RuntimeError: SM 12.x requires CUDA >= 12.9",
    ],
    "build-native-arch-without-gpu": [
        # SageAttention setup.py
        "RuntimeError: No target compute capabilities. Set TORCH_CUDA_ARCH_LIST or build on a machine with GPUs.",
    ],
    "dependency-version-mismatch": [
        # megatron/core/extensions/transformer_engine.py
        "RuntimeError: Only TE with version >=2.3.0 supports delay_wgrad_compute now.",
        "AssertionError: qk-clip is only supported in TE 2.9.0 and later",
        # flashinfer/__init__.py, jit/env.py
        "RuntimeError: flashinfer-cubin version (0.4.1) does not match flashinfer version (0.5.2). Please "
        "install the same version of both packages. Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check.",
        # unsloth/_gpu_init.py
        "Unsloth: Please update Unsloth and Unsloth-Zoo to the latest version!",
        # pybind11 include/pybind11/detail/common.h
        '/usr/include/pybind11/detail/common.h:14:6: error: #error "PYTHON < 3.9 IS UNSUPPORTED. pybind11 '
        'v3.0 was the last to support Python 3.8."',
    ],
    "kernel-library-not-installed": [
        # megatron/core/fusions/fused_layer_norm.py, extensions/transformer_engine.py
        "ValueError: Apex must be installed to use FusedLayerNorm.",
        "ImportError: Transformer Engine is not installed. Please install it with `pip install transformer-engine`.",
        # Liger-Kernel ops/backends/cutedsl
        "ImportError: cutedsl backend requires the NVIDIA CUTLASS Python DSL (CuTe DSL). Install it with "
        "`pip install nvidia-cutlass-dsl`",
        # unsloth/_gpu_init.py, unsloth/kernels
        "ImportError: Unsloth: Please install unsloth_zoo via `pip install unsloth_zoo` then retry!",
        "ImportError: Unsloth: `bitsandbytes` is not installed.",
        # flashinfer cute_dsl/comm modules; TransformerEngine's cudnn-frontend import
        "ImportError: Could not import the 'cuda' module. Please install cuda-python that matches your CUDA version.",
        "ImportError: cuDNN frontend Python package not found. Install it with: pip install nvidia-cudnn-frontend",
    ],
    "nvcc-torch-cuda-mismatch": [
        # torch/utils/cpp_extension.py (1.8-1.13) ninja rule given to an nvcc older than 10.2
        "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'",
    ],
    "torch-too-old-for-package": [
        # unsloth/import_fixes.py
        "RuntimeError: Unsloth: refusing to load checkpoint RNG state on torch < 2.6 (CVE-2026-1839 / "
        "CVE-2025-32434); upgrade to torch >= 2.6.",
    ],
    "extension-torch-mismatch": [
        # unsloth/import_fixes.py torchvision check (an existing signature names it)
        "ImportError: Unsloth: torchvision==0.20.1 claims to match torch==2.5.1, but its compiled operators do "
        "not load (RuntimeError: operator torchvision::nms does not exist).",
        # unsloth/models/_utils.py
        "ImportError: Unsloth: You have torch = 2.2.0 but xformers = 0.0.26. Please install xformers < 0.0.26 "
        "for torch = 2.2.0.",
    ],
    "xformers-no-cuda-ops": [
        "ImportError: Unsloth: Xformers was not installed correctly. Please install xformers separately first.",
    ],
    "model-architecture-unsupported": [
        # unsloth/models/gemma2.py
        "ImportError: Unsloth: Your transformers version of 4.40.0 does not support Gemma2. The minimum "
        "required version is 4.42.3.",
    ],
    "libcuda-not-in-ldconfig": [
        # unsloth/_gpu_init.py
        "UserWarning: Unsloth: CUDA is not linked properly. You need to run in your terminal "
        "`sudo ldconfig /usr/lib64-nvidia` yourself, then import Unsloth.",
    ],
    "torch-cuda-unavailable": [
        # unsloth/device_type.py get_device_type
        "NotImplementedError: Unsloth cannot find any torch accelerator? You need a GPU.",
        "NotImplementedError: Unsloth currently only works on NVIDIA, AMD and Intel GPUs.",
    ],
    "torch-cpu-only-build": [
        "RuntimeError: Unsloth: PyTorch does not provide the cuda backend.",
    ],
    "triton-torch-version-mismatch": [
        # torch/_inductor/runtime/triton_heuristics.py
        "RuntimeError: Installed triton version too old, please upgrade",
    ],
    "triton-not-installed": [
        # torchao kernels defined when has_triton() is False
        "AssertionError: needs triton",
    ],
    "triton-no-active-driver": [
        # torch/_inductor/runtime/triton_helpers.py
        "RuntimeError: Could not find an active GPU backend",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_the_new_code_is_sourced = sourced_roots_test(["extension-python-version-mismatch"])

#: notices these libraries print on runs that go on, with the words of the messages above
test_healthy_notices_name_nothing = healthy_test([
    # megatron/core/fusions/fused_layer_norm.py (falls back to torch's norm)
    "UserWarning: Apex is not installed. Falling back to Torch Norm",
    "Persistent fused layer norm kernel is supported from pytorch v1.11 (nvidia pytorch container paired "
    "with v1.11). Defaulting to no_persist_layer_norm=True",
    # unsloth/_gpu_init.py: 16-bit and full finetuning still work
    "Unsloth: `bitsandbytes` is not installed - 4bit QLoRA unallowed, but 16bit and full finetuning works!",
    # transformer_engine/pytorch/attention/dot_product_attention/utils.py backend selection notes
    "[WARNING  | transformer_engine]: Disabling FlashAttention as version <2.4.1 does not support "
    "deterministic execution. To use FlashAttention with deterministic behavior, please install flash-attn >= 2.4.1.",
    "flash-attn v3 may provide important feature support or performance improvement. Please install "
    "flash-attn v3 by pip3 install flash-attn-3",
    # torchao: the kernel is simply not used on this GPU
    "MXFP8 quantization requires SM90+ (Hopper) or SM100+ (Blackwell) architecture. Kernel will be disabled "
    "for this architecture.",
    # nvcc's deprecation note; inductor's libdevice note
    "nvcc warning : The 'compute_35', 'compute_37', 'sm_35', and 'sm_37' architectures are deprecated, and may "
    "be removed in a future release (Use -Wno-deprecated-gpu-targets to suppress warning).",
    "W1202 12:00:00.000000 123 torch/_inductor/runtime/compile_tasks.py:95] CUDA_HOME not set; using Triton's "
    "bundled libdevice which may be older than your CUDA toolkit",
    # build progress lines with the same words
    "Target compute capabilities: {'8.0', '9.0'}",
    "[1/3] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile -c batch_prefill.cu -o "
    "batch_prefill.cuda.o -gencode=arch=compute_90a,code=sm_90a",
    '-- Found pybind11: /usr/include (found version "2.11.1")',
    "Unsloth: Will patch your computer to enable 2x faster free finetuning.",
    "Device does not support bfloat16. Will change to float16.",
    "Unsloth: Fast downloading is enabled - ignore downloading bars which are red colored!",
    "2025-01-01 12:00:00,000 - INFO - flashinfer.jit: Loading JIT ops: batch_prefill_with_kv_cache",
    # torchao/__init__.py when the user asks it to skip its C++ extensions
    "Skipping import of cpp extensions due to TORCHAO_FORCE_SKIP_LOADING_SO_FILES=1",
    "Successfully installed transformer-engine-2.8.0 transformer-engine-cu12-2.8.0 transformer-engine-torch-2.8.0",
])


def _top(text):
    return [c.code for c in explain_text(text).candidates][:1]


def test_te_extension_notice_yields_to_a_real_failure():
    # the RuntimeWarning TE prints when one framework's extension is absent is a fallback signature:
    # alone it names the missing extension, beside a real failure it stays out of the way
    notice = ("RuntimeWarning: Detected a PyTorch installation but could not find the shared object file for "
              "the Transformer Engine PyTorch extension library. If this is not intentional, please reinstall "
              "Transformer Engine with `pip install transformer_engine[pytorch]`\n")
    assert _top(notice) == ["kernel-extension-not-built"]
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
           "capacity of 79.10 GiB of which 1.06 GiB is free.\n")
    assert _top(notice + oom) == ["gpu-out-of-memory"]


def test_inductor_cl_not_found_stays_the_windows_compiler():
    # 'Compiler: cl is not found.' is windows-compiler-unusable's; other compilers' names are no-c-compiler's
    assert _top("torch._inductor.exc.InductorError: InvalidCxxCompiler: Compiler: cl is not found.\n") == \
        ["windows-compiler-unusable"]
    assert _top("RuntimeError: Compiler: clang++ is not found.\n") == ["no-c-compiler"]


def test_no_working_cxx_inside_backend_compiler_failed_names_the_compiler():
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 10, in <module>\n'
            "    out = compiled(x)\n"
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
            "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')\n"
            "\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information\n")
    assert _top(text) == ["no-c-compiler"]
