"""Environment messages harvested from the libraries' own source (harvc): DeepSpeed, HF
accelerate, bitsandbytes, xformers, flash-attn, vLLM and SGLang. Each message is the text a raise
site or a printed error carries, its variable parts filled in as a user's run fills them; each
must name the cause it states in every wrapper a pasted log puts around it, and the notices the
same libraries print on healthy runs (compatibility reports, fallbacks) must name nothing.

docs/dev/harvest-harvc.md lists every message found, what explain named before and after, and
the ones left (with why).
"""

from __future__ import annotations

import pytest

from test_explain_patterns import family_tests, healthy_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "cuda-initialized-before-fork": [
        # DeepSpeed op_builder/builder.py CUDAOpBuilder.compute_capability_args (torch.cuda._is_in_bad_fork())
        "RuntimeError: DeepSpeed JIT builder for 'fused_adam' cannot probe CUDA device capabilities in a forked "
        "subprocess where CUDA has already been initialized. Set TORCH_CUDA_ARCH_LIST to specify target "
        "architectures explicitly.",
        # accelerate src/accelerate/launchers.py notebook_launcher
        "RuntimeError: An issue was found when verifying a stable environment for the notebook launcher.This likely "
        "stems from an outside import causing issues once the `notebook_launcher()` is called. Please review your "
        "imports and test them when running the `notebook_launcher()` to identify which one is problematic and "
        "causing CUDA to be initialized.",
        "RuntimeError: Could not start distributed process. Libraries known to initialize device upon import have "
        "been imported already. Please keep these imports inside your training function to try and help with this:",
        "RuntimeError: CUDA has been initialized before the `notebook_launcher` could create a forked subprocess. "
        "This likely stems from an outside import causing issues once the `notebook_launcher()` is called.",
    ],
    "build-native-arch-without-gpu": [
        # DeepSpeed op_builder/builder.py CUDAOpBuilder.compute_capability_args (no TORCH_CUDA_ARCH_LIST, no GPU)
        "RuntimeError: DeepSpeed JIT builder for 'cpu_adam' found no CUDA devices. Set TORCH_CUDA_ARCH_LIST or make "
        "GPUs visible.",
        # flash-attention setup.py (ROCm build)
        "RuntimeError: GPU_ARCHS not set and no GPU detected. Please set GPU_ARCHS (e.g. GPU_ARCHS='gfx942') to "
        "cross-compile.",
    ],
    "extension-arch-missing": [
        # DeepSpeed op_builder/builder.py compute_capability_args after filter_ccs
        "RuntimeError: Unable to load transformer_inference op due to no compute capabilities remaining after filtering",
        # xformers ops/fmha/common.py not_supported_reasons (CUDA_MAXIMUM_COMPUTE_CAPABILITY)
        "requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)",
    ],
    "build-dependency-headers-missing": [
        # DeepSpeed op_builder/evoformer_attn.py _candidate_cutlass_paths / include_paths
        "ImportError: Unable to locate CUTLASS from the nvidia-cutlass Python package",
        "RuntimeError: Unable to locate CUTLASS. Install nvidia-cutlass, clone CUTLASS next to DeepSpeed, or set "
        "CUTLASS_PATH.",
        "RuntimeError: CUTLASS_PATH /opt/cutlass does not contain CUTLASS headers",
    ],
    "build-isolation-hides-torch": [
        # DeepSpeed setup.py (DS_BUILD_OPS=1 with torch not importable in the build environment)
        "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting "
        "to pre-compile ops.",
        "AssertionError: Unable to pre-compile fused_adam, please first install torch",
    ],
    "torch-too-old-for-package": [
        # accelerate accelerator.py, inference.py, parallelism_config.py
        "ValueError: FSDP requires PyTorch >= 2.1.0",
        "ImportError: FSDP2 requires PyTorch >= 2.6.0",
        "ImportError: Tried to use TP, but `torch.distributed.device_mesh` requires PyTorch >= 2.2.0. Please upgrade "
        "your PyTorch version",
        "ImportError: Using `torch.distributed.pipelining` requires PyTorch 2.4.0 or later.",
        "RuntimeError: Building a device_mesh requires to have torch>=2.2.0",
        "ValueError: fp16 mixed precision with MPS device requires a Pytorch >= 2.5.0",
        # DeepSpeed deepspeed/comm/torch.py, deepspeed/ops/adam/zenflow_torch_adam.py
        "RuntimeError: Torch version must be 2.5 or higher to use symmetric memory. ",
        "RuntimeError: Current torch version does not have all_reduce_coalesced api",
        "RuntimeError: ZenFlow features are not available with PyTorch < 2.0. Please upgrade to PyTorch 2.0+ to use "
        "ZenFlow, or omit 'zenflow' from your config.",
        # pip's resolver (pip/_internal/operations/check.py), the same cause from the installer
        "xformers 0.0.28.post1 requires torch==2.4.1, but you have torch 2.4.0 which is incompatible.\n"
        "flash-attn 2.6.3 requires torch>=2.4, but you have torch 2.1.0 which is incompatible.",
    ],
    "dependency-version-mismatch": [
        # accelerate accelerator.py
        "ImportError: DeepSpeed version must be >= 0.9.3. Please update DeepSpeed.",
        "ImportError: Deepspeed TP requires deepspeed >= 0.16.4, Please update DeepSpeed via `pip install deepspeed -U`.",
        # SGLang python/sglang/srt/utils.py assert_pkg_version
        "Exception: sgl-kernel is installed with version 0.1.0, which is less than the minimum required version "
        "0.1.4. Please reinstall the latest version with `pip install sgl-kernel --force-reinstall`",
        "Exception: flashinfer_python is installed with version 0.2.3, which is less than the minimum required "
        "version 0.2.5. Please reinstall the latest version",
        # xformers ops/fmha/flash.py (flash_attn outside the supported range)
        "ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.4 but got 2.5.8.",
        # accelerate utils/bnb.py load_and_quantize_model
        "ImportError: You have a version of `bitsandbytes` that is not compatible with 8bit quantization, make sure "
        "you have the latest version of `bitsandbytes` installed.",
    ],
    "kernel-library-not-installed": [
        # accelerate accelerator.py, commands/launch.py, state.py
        "ImportError: DeepSpeed is not installed => run `pip install deepspeed` or build it from source.",
        "ImportError: DeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.",
        "ValueError: Using `fp8` precision requires `transformer_engine` or `MS-AMP` to be installed.",
        "ImportError: `transformer_engine` was not found on your system. Please ensure that `transformer_engine` is "
        "installed and try again.",
        "ImportError: `torchao` was not found on your system or is too old of a version. Please ensure that "
        "`torchao >= 0.6.1` is installed to use torchao FP8.",
        # accelerate utils/imports.py torchao_required
        "ImportError: `torchao` is not available, please install it before calling this function via "
        "`pip install torchao`.",
        # SGLang python/sglang/srt/utils.py assert_pkg_version (PackageNotFoundError)
        "Exception: sgl-kernel with minimum required version 0.1.4 is not installed. Please reinstall the latest "
        "version with `pip install sgl-kernel --force-reinstall`",
        # vLLM vllm/platforms/cuda.py get_attn_backend_cls (a forced backend that does not import)
        "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration. Reason: "
        "['ImportError']",
    ],
    "nccl-not-built-in": [
        # accelerate src/accelerate/state.py PartialState.__init__
        "ValueError: Your assigned backend nccl is not available, please use gloo",
    ],
    "nccl-p2p-blocked": [
        # accelerate src/accelerate/state.py PartialState.__init__, big_modeling.py dispatch_model
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
        "Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate launch` which will do "
        "this automatically.",
        "We've detected an older driver with an RTX 4000 series GPU. These drivers have issues with P2P. This can "
        "affect the multi-gpu inference when using accelerate device_map.Please make sure to update your driver to "
        "the latest version which resolves this.",
    ],
    "bitsandbytes-cuda-setup-failed": [
        # bitsandbytes/cextension.py ErrorHandlerMockBNBNativeLibrary (0.46+)
        "🚨 Forgot to compile the bitsandbytes library? 🚨",
        "bitsandbytes tried to find a compatible CUDA binary but none could be loaded.",
        "CUDA 12.x runtime libraries were not found in the LD_LIBRARY_PATH.",
        "RuntimeError: Attempted to use bitsandbytes native library functionality but it's not available. "
        "Native code method attempted to call: lib.cquantize_blockwise_fp16_nf4()",
        # bitsandbytes/diagnostics/cuda.py, diagnostics/main.py (python -m bitsandbytes)
        "No compatible CUDA library found (tried: libbitsandbytes_cuda128.so). You may need to compile from source:",
        "WARNING: bitsandbytes is running as CPU-only!",
        # 0.43-0.44 diagnostics/cuda.py
        "Library not found: /usr/local/lib/python3.10/dist-packages/bitsandbytes/libbitsandbytes_cuda124.so. Maybe "
        "you need to compile it from source?",
        "Could not find the bitsandbytes CUDA binary at PosixPath('/usr/local/lib/python3.10/site-packages/"
        "bitsandbytes/libbitsandbytes_cuda124.so')",
        # 0.46+ cextension.py: the CPU library loaded where a GPU build was wanted
        "🚨 Failed to load CPU-only bitsandbytes library 🚨",
        "RuntimeError: Method 'cadam32bit_grad_fp32' not available in CPU-only version of bitsandbytes.\n"
        "Reinstall with GPU support or use CUDA-enabled hardware.",
    ],
    "torch-cuda-unavailable": [
        # bitsandbytes 0.43-0.44 diagnostics/main.py
        "Torch says CUDA is not available. Possible reasons:",
    ],
    "flash-attn-arch-unsupported": [
        # flash-attention hopper/flash_api.cpp (FlashAttention 3)
        "RuntimeError: Only Hopper supports different V headdim",
        "RuntimeError: q_v is only supported for Hopper GPUs",
        "RuntimeError: Attention combine function only supports Ampere GPUs or newer.",
        # flash-attention flash_attn/cute/interface.py (FlashAttention 4)
        "AssertionError: Unsupported compute capability. Supported: 8.x, 9.x, 10.x, 11.x, 12.x",
        "AssertionError: Unsupported compute capability. Supported: 10.x, 11.x",
        # SGLang python/sglang/srt/layers/attention/attention_registry.py create_flashattention_v3_backend
        "AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend "
        "flashinfer`.",
        # xformers ops/fmha/triton_splitk.py not_supported_reasons
        "requires NVidia GPU with sm80 minimum compute capacity, e.g., A100/H100/L4",
    ],
    "gpu-arch-lacks-dtype": [
        # flash-attention flash_attn/cute/interface.py
        "AssertionError: FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.",
    ],
    "library-missing": [
        # vLLM vllm/distributed/device_communicators/pynccl_wrapper.py NCCLLibrary.__init__
        "ERROR 10-18 14:42:48 pynccl_wrapper.py:196] Failed to load NCCL library from libnccl.so.2 .It is expected "
        "if you are not running on NVIDIA/AMD GPUs.Otherwise, the nccl library might not exist, be corrupted or it "
        "does not support the current platform Linux-5.15.0-50-generic-x86_64-with-glibc2.31.If you already have "
        "the library, please set the environment variable VLLM_NCCL_SO_PATH to point to the correct nccl library "
        "path.",
        "Failed to load NCCL library from libnccl.so.2 (Linux-6.8.0-x86_64-with-glibc2.35). Set VLLM_NCCL_SO_PATH "
        "to the correct path.",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # vLLM vllm/executor/ray_utils.py initialize_ray_cluster, ray_distributed_executor.py
        "ValueError: Current node has no GPU available. current_node_resource={'CPU': 20.0, 'memory': "
        "1000000.0}. vLLM engine cannot start without GPU. Make sure you have at least 1 GPU available in a node "
        "current_node_id='abc' current_ip='10.0.0.2'.",
        "ValueError: Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group "
        "or running the driver on a GPU node.",
    ],
    # src41: the message names the cause, other processes on the GPU (was gpu-out-of-memory)
    "gpu-memory-held-by-other-processes": [
        # SGLang python/sglang/srt/model_executor/model_runner.py init_torch_distributed
        "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
        "min_per_gpu_memory=10.2, local_gpu_memory=70.1, local_gpu_memory * 0.9 = 63.1",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# DeepSpeed accelerator/real_accelerator.py get_accelerator: a warning that names its cause only
# when nothing else in the log does
ACCELERATOR_CPU = ("[2024-05-01 12:00:00,123] [WARNING] [real_accelerator.py:199:get_accelerator] Setting "
                   "accelerator to CPU. If you have GPU or other accelerator, we were unable to detect it.")


def test_deepspeed_falling_back_to_cpu_names_the_missing_gpu_when_nothing_else_does():
    assert _codes(ACCELERATOR_CPU + "\nRuntimeError: something went wrong\n")[:1] == ["torch-cuda-unavailable"]


def test_deepspeed_launcher_without_gpus_names_torch_without_the_gpu():
    # deepspeed/launcher/runner.py main: get_accelerator().device_count() == 0
    assert "torch-cuda-unavailable" in _codes("RuntimeError: Unable to proceed, no GPU resources available\n")


def test_deepspeed_falling_back_to_cpu_does_not_outrank_the_real_failure():
    log = ACCELERATOR_CPU + "\nImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    assert _codes(log)[:1] == ["libcuda-missing"]


XFORMERS_HEAD = (
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
    "     query       : shape=(2, 4096, 8, 64) ({dtype})\n"
    "     key         : shape=(2, 4096, 8, 64) ({dtype})\n"
    "     value       : shape=(2, 4096, 8, 64) ({dtype})\n"
    "     attn_bias   : <class 'NoneType'>\n"
    "     p           : 0.0\n"
)


def test_xformers_inputs_on_the_cpu_name_torch_without_the_gpu():
    # xformers ops/fmha/dispatch.py _run_priority_list with common.py's reasons: every op refuses
    # the device, so the tensors never reached a GPU
    log = XFORMERS_HEAD.format(dtype="torch.float32") + (
        "`decoderF` is not supported because:\n"
        "    device=cpu (supported: {'cuda'})\n"
        "    attn_bias type is <class 'NoneType'>\n"
        "`flshattF@v2.5.6` is not supported because:\n"
        "    device=cpu (supported: {'cuda'})\n"
        "    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})\n"
        "`cutlassF` is not supported because:\n"
        "    device=cpu (supported: {'cuda'})\n"
        "`smallkF` is not supported because:\n"
        "    max(query.shape[-1] != value.shape[-1]) > 32\n"
        "    device=cpu (supported: {'cuda'})\n")
    assert _codes(log)[:1] == ["torch-cuda-unavailable"]


def test_xformers_built_without_cuda_stays_xformers():
    log = XFORMERS_HEAD.format(dtype="torch.float16") + (
        "`flshattF@0.0.0` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n"
        "    operator wasn't built - see `python -m xformers.info` for more info\n"
        "`cutlassF` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n"
        "    operator wasn't built - see `python -m xformers.info` for more info\n")
    assert _codes(log)[:1] == ["xformers-no-cuda-ops"]


def test_sgl_kernel_load_failure_names_the_library_its_details_name():
    # sgl-kernel python/sgl_kernel/load_utils.py _load_architecture_specific_ops: the CRITICAL
    # summary, then each import attempt's own error
    log = ("ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n\n"
           "Please ensure sgl_kernel is properly installed with:\npip install --upgrade sgl_kernel\n\n"
           "Error details from previous import attempts:\n"
           "- ImportError: libnuma.so.1: cannot open shared object file: No such file or directory\n"
           "- ModuleNotFoundError: No module named 'common_ops'\n")
    assert _codes(log)[:1] == ["system-library-missing"]


def test_the_generic_torch_requirement_needs_an_exception_to_count():
    # a README's or a setup script's statement of what it needs is not a failure
    assert _codes("This package requires PyTorch >= 2.1 (see setup.py) and CUDA 12\n") == []


# what the same libraries print on healthy runs, or when they handle the condition themselves
test_healthy_lines_name_nothing = healthy_test([
    # DeepSpeed ds_report / op_builder compatibility reports (op_builder/*.py is_compatible(verbose=True))
    " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.4",
    " [WARNING]  using untested triton version (3.0.0), only 1.0.0 is known to be compatible",
    " [WARNING]  Please pip install nvidia-cutlass",
    " [WARNING]  NVIDIA Inference is only supported on Ampere and newer architectures",
    " [WARNING]  sparse_attn is not compatible with ROCM",
    "[2024-05-01 12:00:00,123] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda "
    "(auto detect)",
    # DeepSpeed op_builder/builder.py assert_no_cuda_mismatch: a minor mismatch it accepts
    "Installed CUDA version 12.1 does not match the version torch was compiled with 12.4 but since the APIs are "
    "compatible, accepting this combination",
    "Time to load fused_adam op: 0.05 seconds",
    # accelerate commands/launch.py multi_gpu_launcher, state.py (FP8 falls back to FP16)
    "Using RTX 4000 series which doesn't support faster communication speedups. Ensuring P2P and IB "
    "communications are disabled.",
    "The current device has compute capability of (7, 5) which is insufficient for FP8 mixed precision training "
    "(requires a GPU Hopper/Ada Lovelace or higher, compute capability of 8.9 or higher). Will use FP16 instead.",
    "Launching training on 8 GPUs.",
    "Distributed environment: MULTI_GPU  Backend: nccl",
    # bitsandbytes cextension.py (nearest prebuilt binary), diagnostics, backends/cuda/ops.py fallback
    "No prebuilt binary for CUDA 13.1, loading CUDA 13.0 instead. Set BNB_CUDA_VERSION to override.",
    "PyTorch settings found: CUDA_VERSION=124, Highest Compute Capability: (8, 9).",
    "* Found CUDA runtime at: /usr/local/cuda/lib64/libcudart.so",
    "int8_linear_matmul has no usable (hip|cu)blasLt algo for shape shapeA=(4, 4) shapeB=(8, 4); falling back "
    "to fp32 matmul.",
    # xformers __init__.py (no Triton: its kernels are skipped)
    "2024-05-01 12:00:00,123 - xformers - WARNING - A matching Triton is not available, some optimizations will "
    "not be enabled",
    # flash-attention flash_attn_interface.py (ROCm fallback), setup.py (prebuilt wheel lookup)
    "flash_attn_2_cuda (which has ROCm/HIP kernels) not found, falling back to Triton implementation",
    "Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
    "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
    # vLLM's notices: pynccl, custom all-reduce, attention selection, Marlin FP8 fallback
    "INFO 05-01 12:00:00 [pynccl.py:69] vLLM is using nccl==2.21.5",
    "INFO 05-01 12:00:00 [utils.py:1009] Found nccl from library libnccl.so.2",
    "WARNING 05-01 12:00:00 [custom_all_reduce.py:144] Custom allreduce is disabled because your platform lacks "
    "GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True "
    "explicitly.",
    "INFO 05-01 12:00:00 [cuda.py:229] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
    "INFO 05-01 12:00:00 [cuda.py:247] Cannot use FlashAttention-2 backend because the vllm.vllm_flash_attn "
    "package is not found. Make sure that vllm_flash_attn was built and installed (on by default).",
    "WARNING 05-01 12:00:00 [marlin_utils_fp8.py:54] Your GPU does not have native support for FP8 computation "
    "but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. "
    "This may degrade performance for compute-heavy workloads.",
    "INFO 05-01 12:00:00 [gpu_worker.py:227] Available KV cache memory: 60.12 GiB",
    "WARNING 03-20 23:36:27 [cuda.py:394] Detected different devices in the system: NVIDIA GeForce RTX 4080 SUPER, "
    "NVIDIA GeForce RTX 3060. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior.",
    "INFO 03-20 23:36:27 [__init__.py:256] Automatically detected platform cuda.",
    "WARNING 05-01 12:00:00 [topk_topp_sampler.py:63] FlashInfer is not available. Falling back to the "
    "PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.",
    "WARNING 05-01 12:00:00 [utils.py:2273] We must use the `spawn` multiprocessing start method. Overriding "
    "VLLM_WORKER_MULTIPROC_METHOD to 'spawn'. Reason: CUDA is initialized",
    # SGLang model_runner.py
    "[2025-05-01 12:00:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB, "
    "mem usage=15.07 GB.",
    # the words without the failure
    "FSDP2 with PyTorch 2.6.0: sharding 32 layers",
    "sgl-kernel is installed with version 0.1.4 (ok)",
    "DeepSpeed JIT builder for 'fused_adam' compiled for 8.0;9.0+PTX",
])


def test_ds_reports_cutlass_warning_names_no_cause():
    # op_builder/evoformer_attn.py is_compatible(verbose) prints the lookup's exception as a
    # warning on runs that never build the op: no code (the word 'Unable' still reads as an error)
    assert _codes(" [WARNING]  Unable to locate CUTLASS from the nvidia-cutlass Python package\n") == []


@pytest.mark.parametrize("line", [
    # the DeepSpeed ds_report line with a torch requirement is not accelerate's guard
    " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.4",
])
def test_a_range_requirement_is_not_torch_too_old(line):
    assert "torch-too-old-for-package" not in _codes("RuntimeError: boom\n" + line + "\n")
