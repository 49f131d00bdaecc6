"""Issue 8 item 2 (kb4): knowledge harvested from the libraries' own sources, for the layers the
issue lists (docs/dev/coverage-audit.md holds every message harvested and the code it maps to).

Every message below is the program's own wording where its source raises or prints it (the
``source`` of the matching signature names the file; variable parts filled in as the program fills
them). Each runs through the wrappers pasted logs put around messages (tests/test_explain_patterns.py:
rank and worker prefixes, logging/glog/vLLM prefixes, docker compose, Markdown quotes, prose in
backticks or quotes, CRLF, word wrap and terminal cut at 80 columns) and must rank its code first;
healthy lines the same programs print must name nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import assert_sourced_root, family_tests, healthy_test

ROOT = Path(__file__).resolve().parent.parent

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    # -- new codes
    "framework-cpu-only-build": [
        # jax/_src/xla_bridge.py, as JAX's logger prints it
        "WARNING:2025-06-10 09:01:40,857:jax._src.xla_bridge:966: An NVIDIA GPU may be present on this machine, "
        "but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        # paddle/phi/common/place.cc
        "(PreconditionNotMet) Cannot use GPU because you have installed CPU version PaddlePaddle.",
        "If you want to use GPU, please try to install GPU version PaddlePaddle by: pip install paddlepaddle-gpu",
        # torch-scatter / torch-sparse, detectron2 csrc
        "RuntimeError: Not compiled with CUDA support",
        "RuntimeError: Not compiled with GPU support",
        # dgl src/runtime/c_runtime_api.cc
        "dgl._ffi.base.DGLError: [15:17:02] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: allow_missing: "
        "Device API cuda is not enabled. Please install the cuda version of dgl.",
        # llama.cpp common/arg.cpp
        "warning: not compiled with GPU offload support, --gpu-layers option will be ignored",
    ],
    "nvrtc-arch-unsupported": [
        # NVRTC's log, raised by torch's jit_utils.cpp / CuPy's compiler.py
        "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",
        "cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)",
    ],
    "proprietary-kernel-module-unsupported-gpu": [
        # nv.c, one NVRM line each as dmesg prints them
        "NVRM: installed in this system requires use of the NVIDIA open kernel modules.",
        "[    5.559842] NVRM: The NVIDIA GeForce GTX 680 GPU installed in this system is supported through the "
        "NVIDIA 470.xx Legacy drivers. Please visit http://www.nvidia.com/object/unix.html for more information.",
        "NVRM: The 535.104.05 NVIDIA driver will ignore this GPU.  Continuing probe...",
    ],
    "tensorrt-engine-file-corrupt": [
        # TensorRT stdArchiveReader.cpp
        "[02/23/2024-16:13:15] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::57] Error Code 1: "
        "Serialization (Serialization assertion sizeRead == static_cast<uint64_t>(mEnd - mCurrent) failed.Size "
        "specified in header does not match archive size)",
    ],
    "torch-build-too-old-for-fast-path": [
        # aten/src/ATen/native/transformers/cuda/sdp_utils.cpp (the '1' is how Windows wheels print it)
        "C:\\ComfyUI\\comfy\\ldm\\modules\\attention.py:407: UserWarning: 1Torch was not compiled with flash "
        "attention. (Triggered internally at ..\\aten\\src\\ATen\\native\\transformers\\cuda\\sdp_utils.cpp:455.)",
        "UserWarning: Torch was not compiled with memory efficient attention. (Triggered internally at "
        "/pytorch/aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:600.)",
        # transformers/modeling_utils.py
        "ImportError: PyTorch SDPA requirements in Transformers are not met. Please install torch>=2.1.1.",
    ],
    "transformers-torch-too-old": [
        # transformers/utils/import_utils.py is_torch_available()
        "[transformers] Disabling PyTorch because PyTorch >= 2.6 is required but found 2.4.1+cu121",
        "Disabling PyTorch because PyTorch >= 2.5 is required but found 2.3.0",
    ],
    "ptx-jit-compiler-missing": [
        # CUDA's error string, through Triton's driver.c and torch's CUDAException.h
        "RuntimeError: Triton Error [CUDA]: PTX JIT compiler library not found",
        "RuntimeError: CUDA error: PTX JIT compiler library not found",
        "failed call to cuModuleLoadData: CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
    ],
    "container-device-cgroup-denied": [
        # libnvidia-container; runc's cgroup v2 device filter
        "nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device filters "
        "attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted: unknown",
        "error setting cgroup config for procHooks process: bpf_prog_query(BPF_CGROUP_DEVICE) failed: "
        "function not implemented",
    ],
    "kernel-library-not-installed": [
        # Python's import system where model code, vLLM or SGLang import the kernel library
        "ModuleNotFoundError: No module named 'fla'",
        "ModuleNotFoundError: No module named 'causal_conv1d'",
        "ModuleNotFoundError: No module named 'mamba_ssm'",
        "ModuleNotFoundError: No module named 'sgl_kernel'",
        "ModuleNotFoundError: No module named 'apex'",
        "ImportError: CUDA CP requires the causal-conv1d package",  # fla/modules/causal_conv1d/backends/cuda/cp.py
        "ImportError: Mamba-3 SISO kernels are unavailable. Install `mamba_ssm` with Mamba-3 support.",  # fla/layers/mamba3.py
    ],
    "transformers-fast-path-unavailable": [  # fla/modules/causal_conv1d/ops.py: a notice, the answer only when alone
        "UserWarning: The `backend` parameter is set to `cuda`, but `causal_conv1d_fn` is not available. Switching to "
        "the Triton implementation instead. Consider installing `causal_conv1d` to enable the CUDA backend.",
    ],
    "msvc-runtime-missing": [  # torch/__init__.py _load_dll_libraries (Windows)
        "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.",
        "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "
        "\"C:\\Users\\me\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
    ],
    "page-size-unsupported": [
        # glibc's loader; jemalloc pages_boot()
        "ImportError: /opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so: ELF load command "
        "address/offset not page-aligned",
        "<jemalloc>: Unsupported system page size",
    ],
    "model-architecture-unsupported": [
        # transformers/models/auto/configuration_auto.py
        "ValueError: The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not "
        "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
        "version of Transformers is out of date.",
        "ImportError: cannot import name 'Qwen3NextForCausalLM' from 'transformers' "
        "(/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)",
        # vllm/model_executor/models/registry.py
        "ValueError: Model architectures ['Qwen3NextForCausalLM'] are not supported for now. Supported "
        "architectures: dict_keys(['AquilaModel', 'LlamaForCausalLM'])",
        # llama.cpp llama-model-loader.cpp
        "llama_model_load: error loading model: error loading model architecture: unknown model architecture: "
        "'gemma4'",
    ],
    "numpy-abi-mismatch": [
        # numpy/core/_multiarray_umath.py (first line of its dedented notice), __multiarray_api.h
        "A module that was compiled using NumPy 1.x cannot be run in",
        "ImportError: numpy.core.multiarray failed to import",
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000",
        # torch/csrc/utils/tensor_numpy.cpp
        "UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
        "/pytorch/torch/csrc/utils/tensor_numpy.cpp:84.)",
        "ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got "
        "88 from PyObject",
    ],
    "torch-too-old-for-package": [
        "ImportError: cannot import name 'sdpa_kernel' from 'torch.nn.attention' "
        "(/usr/local/lib/python3.10/dist-packages/torch/nn/attention/__init__.py)",
        "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'",
        "AttributeError: module 'torch.library' has no attribute 'custom_op'",
        "AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'. Did you mean: "
        "'_register_pytree_node'?",
        "TypeError: scaled_dot_product_attention() got an unexpected keyword argument 'enable_gqa'",
    ],
    "package-no-matching-wheel": [
        # pip's resolver; uv's
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: 2.6.0, "
        "2.7.0, 2.7.1)",
        "ERROR: No matching distribution found for triton",
        "  ╰─▶ Because torch==2.1.0 has no wheels with a matching Python ABI tag (e.g., `cp313`), we can conclude "
        "that torch==2.1.0 cannot be used.",
    ],
    "nccl-not-built-in": ["RuntimeError: Distributed package doesn't have NCCL built in"],
    "disk-full": [
        "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
        "docker: failed to register layer: write /usr/local/lib/python3.10/dist-packages/torch/lib/"
        "libtorch_cuda.so: no space left on device.",
    ],
    # -- signatures added to existing codes
    "triton-not-installed": [  # torch/_inductor/exc.py TritonMissing
        # vllm/triton_utils/importing.py: a notice, the answer only when alone
        "INFO 05-01 12:00:00 [importing.py:53] Triton not installed or not compatible; certain GPU-related "
        "functions will not be available.",
        "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the package is not "
        "installed or it is too old. More information on installing Triton can be found at: "
        "https://github.com/triton-lang/triton",
    ],
    "cuda-error-unclassified": [  # cudaErrorOperatingSystem's string: no more specific entry, never silence
        "RuntimeError: CUDA error: OS call failed or operation not supported on this OS",
    ],
    "extension-build-failed": [  # deepspeed op_builder/builder.py jit_load, when no reason follows
        "RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
        "hardware/software issue.",
    ],
    "kernel-extension-not-built": [  # vllm/_custom_ops.py
        "WARNING 05-01 12:00:00 [_custom_ops.py:21] Failed to import from vllm._moe_C with "
        "ModuleNotFoundError(\"No module named 'vllm._moe_C'\")",
    ],
    "libcuda-missing": [
        "RuntimeError: Failed to open libcuda.so.1",  # triton driver.c
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, "
        "make sure you are on a CUDA machine!",  # bitsandbytes cuda_setup/main.py
    ],
    "driver-too-old-for-build": ["RuntimeError: Failed to retrieve cuTensorMapEncodeTiled from libcuda.so.1"],
    "collective-peer-lost": [
        "node2:4242:4300 [1] misc/socket.cc:50 NCCL WARN Net : Connection closed by remote peer "
        "10.1.1.2<36264>",
    ],
    "gpu-out-of-memory": [
        "node1:123:456 [0] init.cc:1234 NCCL WARN Cuda failure 'out of memory'",
    ],
    # src41: vLLM's start-up check names the cause, other processes on the GPU (was gpu-out-of-memory)
    "gpu-memory-held-by-other-processes": [
        "ValueError: Free memory on device (10.5/79.1 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 71.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
        "processes.",
    ],
    "no-nvidia-driver": ["RuntimeError: cuda driver can't be loaded, is cuda enabled?"],
    "torch-cuda-unavailable": [
        "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
        "RuntimeError: No GPU found. A GPU is needed for quantization.",
        "ValueError: fp16 mixed precision requires a GPU (not 'cpu').",  # accelerate/accelerator.py
    ],
    "library-missing": [
        "RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.12.1.  Make sure that "
        "libnvrtc-builtins.so.12.1 is installed correctly.",
    ],
    "gpu-hardware-fault": [
        "pynvml.NVMLError_InsufficientPower: Insufficient External Power",  # nvml.h nvmlErrorString
        # cuda.h CUresult 220 and 226, as torch and the driver API print them
        "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
        "cuLaunchKernel failed: CUDA_ERROR_CONTAINED",
    ],
    "nccl-p2p-blocked": ["cuCtxEnablePeerAccess returned CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"],
    "library-shadowed": [
        "/bin/bash: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_PRIVATE' not found (required by "
        "/opt/conda/lib/libtinfo.so.6)",
    ],
    "system-library-missing": [
        "Error loading shared library libgomp.so.1: No such file or directory (needed by "
        "/usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
    ],
    "bitsandbytes-cuda-setup-failed": ["CUDA SETUP: CUDA detection failed! Possible reasons:"],
    "extension-arch-missing": [
        "Error named symbol not found at line 508 in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/"
        "csrc/ops.cu",
    ],
    "ninja-missing": ["RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed."],
    "extension-torch-mismatch": [
        # torchvision/extension.py; torch/_ops.py load_library; pip's resolver notice (alone in the log)
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
        "incompatible, or if you had errors while compiling torchvision from source.",
        "OSError: Could not load this library: /usr/local/lib/python3.10/dist-packages/torchaudio/lib/"
        "libtorchaudio.so",
        "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.",
        "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different "
        "version than what is being used at runtime. Please re-install DeepSpeed or switch torch versions. "
        "Install torch version=2.1, Runtime torch version=2.3",
        "RuntimeError: CUDA version mismatch! DeepSpeed ops were compiled and installed with a different version "
        "than what is being used at runtime.",
    ],
    "nvcc-missing": [
        " [WARNING]  fused_adam cuda is missing or is incompatible with installed torch, only cpu ops can be "
        "compiled!",
        "RuntimeError: FlashAttention is only supported on CUDA 11.7 and above.  Note: make sure nvcc has a "
        "supported version by running nvcc -V.",
    ],
    "torch-not-installed": [
        # (transformers' import notices "PyTorch was not found. Models won't be available ..." and "None of
        # PyTorch, TensorFlow >= 2.0, or Flax have been found" alone are a healthy tokenizer-only start since
        # tools41: tests/test_explain_tools41.py)
        "ImportError: AutoModelForCausalLM requires the PyTorch library but it was not found in your environment.",
        "AutoModelForCausalLM requires PyTorch >= 2.6, but PyTorch was not found or an older version is installed.",
    ],
    "flash-attn-not-installed": [
        "ImportError: Please install Flash Attention via `pip install flash-attn --no-build-isolation` first",
        # fla/layers/attn.py: the ImportWarning at import, alone in the log
        "ImportWarning: Flash Attention is not installed. Please install it via `pip install flash-attn "
        "--no-build-isolation`",
    ],
    "xformers-no-cuda-ops": [
        "NotImplementedError: No operator found: operator wasn't built - see `python -m xformers.info` for more "
        "info",
        "WARNING[XFORMERS]: xFormers was built for a different version of PyTorch or Python.",
    ],
    "container-toolkit-missing": [
        # Docker 28+ resolving --gpus through CDI without the toolkit
        "docker: Error response from daemon: failed to discover GPU vendor from CDI: no known GPU vendor found",
        "E1119 17:44:43.345466       1 factory.go:112] Incompatible strategy detected auto",
        "E1119 17:44:43.345479       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA "
        "Container Toolkit?",
    ],
    "container-gpu-device-unknown": [
        "nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/gpus/0000:3b:00.0: no such file "
        "or directory: unknown",
    ],
    "triton-cache-unusable": [
        "OSError: [Errno 28] No space left on device: '/home/user/.triton/cache/2b3c/cuda_utils.so'",
    ],
    # nccl src/os/linux.cc, src/misc/socket.cc: the address a rank advertised is not reachable
    "nccl-socket-ifname-wrong": [
        "node2:4242:4300 [0] misc/socket.cc:484 NCCL WARN ncclSocketConnect: connect to 172.17.0.1<43127> "
        "returned Connection refused, exceeded error retry count after 35 attempts",
        "node2:4242:4300 [0] misc/socket.cc:538 NCCL WARN Call to connect returned Connection refused, retrying",
        "node2:4242:4300 [0] NCCL WARN no device found matching eth9, verify NCCL_OOB_NET_IFNAME",
    ],
    "collective-mismatch-across-ranks": [  # nccl src/init.cc
        "node3:5151:5200 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 8 version 22105 "
        "rank 0 version 21903",
    ],
    "cuda-library-shadowed": [  # nccl src/dev_runtime.cc
        "NCCL WARN NCCL library is too old. This application was compiled with NCCL version 2.21.5, but is "
        "running with NCCL library version 2.18.1.",
    ],
    "nccl-duplicate-gpu": [  # nccl src/init.cc
        "node1:123:456 [1] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set "
        "NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
    ],
    "nccl-ib-hca-wrong": [  # nccl src/transport/net_ib/connect.cc
        "NCCL WARN NET/IB : Remote ETH device is incompatible with the local [0]mlx5_0:1/IB. Try selecting "
        "NICs of only one link type using NCCL_IB_HCA",
    ],
}

NEW_CODES = ["framework-cpu-only-build", "nvrtc-arch-unsupported", "proprietary-kernel-module-unsupported-gpu",
             "tensorrt-engine-file-corrupt", "torch-build-too-old-for-fast-path", "transformers-torch-too-old",
             "ptx-jit-compiler-missing", "container-device-cgroup-denied", "kernel-library-not-installed",
             "msvc-runtime-missing", "page-size-unsupported", "model-architecture-unsupported",
             "numpy-abi-mismatch", "torch-too-old-for-package", "package-no-matching-wheel", "nccl-not-built-in",
             "disk-full"]


# (runc's line cut at 80 columns inside 'bpf_prog_query(BPF_CGROUP_DEVICE)' was skipped here:
# explain's second look at an error line now joins a cut inside a word without a space too)
test_library_message_in_every_wrapper, test_every_message_matches_a_signature_of_its_code = \
    family_tests(FAMILIES)

HEALTHY = [

    # healthy lines of the same programs: notices printed on runs that work
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.105.08  Wed Oct 29 23:15:11 UTC 2025",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build",
    "Auto-detected mode as 'legacy'",
    "I1119 17:44:43.345499       1 main.go:381] Starting GRPC server for 'nvidia.com/gpu'",
    "[TRT] [I] Loaded engine size: 42 MiB",
    "[TRT] [I] [MemUsageChange] TensorRT-managed allocation in engine deserialization: CPU +0, GPU +40, now: CPU 0",
    "INFO 05-01 12:00:00 [cuda.py:234] Using Flash Attention backend.",
    "Using PyTorch SDPA (flash) for attention; torch 2.5.1+cu124",
    "[transformers] PyTorch 2.6.0+cu124 available.",
    "CUDA SETUP: Detected CUDA version 118",
    "CUDA SETUP: Highest compute capability among GPUs detected: 7.5",
    "Installed CUDA version 12.1 does not match the version torch was compiled with 12.4 but since the APIs are "
    "compatible, accepting this combination",
    "DeepSpeed C++/CUDA extension op report",
    "fused_adam ............. [NO] ....... [OKAY]",
    "node1:123:456 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
    "node1:123:456 [0] NCCL INFO Connected all rings",
    "jax.devices(): [CudaDevice(id=0)]",
    "paddle.device.is_compiled_with_cuda(): True",
    "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23000 MiB free",
    "load_tensors: offloaded 33/33 layers to GPU",
    "Guessing wheel URL:  https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.5.0/causal_conv1d.whl",
    "nvrtc version: 12.8; torch.cuda.get_arch_list(): ['sm_80', 'sm_90', 'sm_100', 'sm_120']",
    "modinfo -F license nvidia: Dual MIT/GPL",
]

test_healthy_lines_of_the_harvested_programs_name_nothing = healthy_test(HEALTHY)


@pytest.mark.parametrize("code", NEW_CODES)
def test_new_code_is_sourced_and_says_what_to_do(code):
    entry = assert_sourced_root(code)
    if entry.commands:
        assert entry.remedy is not None


def test_proposed_names_now_have_entries():
    """The five names SPLIT.toml proposed for causes without an entry are codes now, and none
    of the names still proposed (a later blind set's) has an entry."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    split = tomllib.loads((ROOT / "tests" / "corpus" / "explain" / "SPLIT.toml").read_text(encoding="utf-8"))
    kb = load_kb()
    assert not [c for c in split["codes"]["proposed"] if c in kb.codes], split["codes"]["proposed"]
    for code in ["framework-cpu-only-build", "nvrtc-arch-unsupported", "proprietary-kernel-module-unsupported-gpu",
                 "tensorrt-engine-file-corrupt", "torch-build-too-old-for-fast-path"]:
        assert kb.get(code).code == code


def test_open_and_proprietary_module_refusals_stay_apart():
    """The open module refusing an old GPU and the closed module refusing a Blackwell GPU are opposite fixes."""
    closed = "NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\nNVRM: installed in this system requires use of " \
             "the NVIDIA open kernel modules.\nNVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n"
    opened = "NVRM: installed in this system is not supported by open\nNVRM: nvidia.ko because it does not include " \
             "the required GPU\n"
    assert explain_text(closed).root.code == "proprietary-kernel-module-unsupported-gpu"
    assert explain_text(opened).root.code == "open-kernel-module-unsupported-gpu"


def test_tensorrt_truncated_engine_is_not_a_version_mismatch():
    version = ("[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::42] Error Code 1: Serialization (Serialization "
               "assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current "
               "Version: 232, Serialized Engine Version: 213)\n")
    size = FAMILIES["tensorrt-engine-file-corrupt"][0] + "\n"
    tail = "[TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal Error (Engine deserialization failed.)\n"
    assert explain_text(version + tail).root.code == "tensorrt-engine-version-mismatch"
    assert explain_text(size + tail).root.code == "tensorrt-engine-file-corrupt"


def test_ptx_jit_compiler_outranks_the_symptom_and_the_catch_all():
    log = ("  File \"/usr/lib/python3/dist-packages/triton/backends/nvidia/driver.py\", line 71, in load_binary\n"
           "RuntimeError: Triton Error [CUDA]: PTX JIT compiler library not found\n")
    expl = explain_text(log)
    assert expl.root.code == "ptx-jit-compiler-missing"
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in load_kb().get("ptx-jit-compiler-missing").fix


def test_transformers_torch_too_old_from_the_real_library(stack_python, tmp_path):
    """Real transformers (5.24 in the stack venv) with a torch 2.4.0 distribution's metadata earlier
    on sys.path, as a stale install leaves it: transformers reads that version, disables PyTorch and
    fails at the first model class. explain on that stderr names the version conflict first, not
    'torch is not installed'."""
    stale = tmp_path / "stale" / "torch-2.4.0.dist-info"
    stale.mkdir(parents=True)
    (stale / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0\n", encoding="utf-8")
    proc = subprocess.run(
        [stack_python, "-c", "from transformers import AutoModelForCausalLM\nAutoModelForCausalLM.from_pretrained('x')"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={"PYTHONPATH": str(stale.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode != 0
    assert "Disabling PyTorch because PyTorch >= " in proc.stderr, proc.stderr[-2000:]
    out = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", "-"],
                         input=proc.stderr, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    codes = [c["code"] for c in report["candidates"]]
    assert codes[0] == "transformers-torch-too-old", codes
    first = report["candidates"][0]
    assert first["evidence"][0]["entry"] == "transformers-disables-torch"
    assert "Disabling PyTorch because PyTorch >= " in first["evidence"][0]["text"]
    assert "torch>=2.6" in first["fix"]


def test_a_missing_submodule_is_not_a_missing_library():
    """'No module named fla' is FLA not installed; 'No module named fla.layers.x' is FLA of another
    release than the code expects: not the same fix."""
    assert explain_text("ModuleNotFoundError: No module named 'fla'\n").root.code == "kernel-library-not-installed"
    ranked = [c.code for c in explain_text("ModuleNotFoundError: No module named 'fla.layers.gdn'\n").candidates]
    assert "kernel-library-not-installed" not in ranked


def test_deepspeed_names_the_reason_an_op_is_not_compatible():
    """DeepSpeed appends the op's own complaint to 'not being compatible': that complaint names the cause."""
    log = ("RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
           "issue. async_io requires the dev libaio .so object and headers but these were not found.\n")
    assert explain_text(log).root.code == "libaio-missing"


def test_fla_import_notices_give_way_to_the_failure():
    """FLA's notices (flash-attn absent, conv backend falling back) name a cause only when the log has no
    other: next to a real failure the failure heads the answer."""
    log = ("ImportWarning: Flash Attention is not installed. Please install it via `pip install flash-attn "
           "--no-build-isolation`\n"
           "UserWarning: The `backend` parameter is set to `cuda`, but `causal_conv1d_fn` is not available. "
           "Switching to the Triton implementation instead.\n"
           "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
           "triton.knobs.build.impl.\n")
    assert explain_text(log).root.code == "no-c-compiler"


def test_unknown_architecture_from_the_real_library(stack_python, tmp_path):
    """Real transformers refusing a checkpoint whose model_type it does not know (a model newer than the
    installed release): explain on the traceback names the framework's age, not the GPU stack."""
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"model_type": "qwen99_next", "architectures": ["Qwen99NextForCausalLM"]}',
                                      encoding="utf-8")
    proc = subprocess.run(
        [stack_python, "-c", f"from transformers import AutoConfig\nAutoConfig.from_pretrained({str(ckpt)!r})"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode != 0 and "does not recognize this architecture" in proc.stderr, proc.stderr[-2000:]
    expl = explain_text(proc.stderr)
    assert expl.root.code == "model-architecture-unsupported", [c.code for c in expl.candidates]


@pytest.mark.parametrize("line,code", [
    ("OSError: [Errno 28] No space left on device: '/dev/shm/nccl-Xh3k2'", "nccl-shm-too-small"),
    ("RuntimeError: unable to write to file </torch_4242_123_0>: No space left on device (28)",
     "dataloader-shm-too-small"),
    ("OSError: [Errno 28] No space left on device: '/home/user/.triton/cache/2b3c/cuda_utils.so'", "triton-cache-unusable"),
])
def test_a_full_disk_with_an_entry_of_its_own_keeps_it(line, code):
    """/dev/shm and the Triton cache running full have their own causes and fixes; the generic disk-full
    entry gives way to them."""
    assert explain_text(line + "\n").root.code == code


def test_nccl_backend_on_a_torch_without_nccl_from_the_real_library(stack_python, tmp_path):
    """The stack venv's CPU torch has no NCCL: asking it for the nccl backend, as most launch scripts
    do, raises torch's own refusal, and explain names the build, not NCCL's network or shm."""
    proc = subprocess.run(
        [stack_python, "-c",
         "import torch.distributed as d\n"
         f"d.init_process_group(backend='nccl', init_method='file://{tmp_path / 'pg'}', world_size=1, rank=0)"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode != 0 and "doesn't have NCCL built in" in proc.stderr, proc.stderr[-2000:]
    expl = explain_text(proc.stderr)
    assert expl.root.code == "nccl-not-built-in", [c.code for c in expl.candidates]
    assert "gloo" in load_kb().get("nccl-not-built-in").fix


@pytest.mark.parametrize("etype,message,code", [
    ("OSError", "[Errno 28] No space left on device", "disk-full"),
    ("ValueError", "The checkpoint you are trying to load has model type `qwen99` but Transformers does not "
                   "recognize this architecture.", "model-architecture-unsupported"),
    ("ImportError", "numpy.core.multiarray failed to import", "numpy-abi-mismatch"),
    ("AttributeError", "module 'torch' has no attribute 'float8_e4m3fn'", "torch-too-old-for-package"),
    ("ModuleNotFoundError", "No module named 'causal_conv1d'", "kernel-library-not-installed"),
    ("RuntimeError", "Distributed package doesn't have NCCL built in", "nccl-not-built-in"),
    ("RuntimeError", "nvrtc: error: invalid value for --gpu-architecture (-arch)", "nvrtc-arch-unsupported"),
    ("RuntimeError", "Triton Error [CUDA]: PTX JIT compiler library not found", "ptx-jit-compiler-missing"),
])
def test_exception_shapes_for_run(etype, message, code):
    """`stackpeel run` maps a swallowed exception to the same code explain gives its message."""
    assert load_kb().exception_codes(etype, message) == [code]


def test_a_full_shm_is_not_the_generic_disk_full_for_run():
    assert "disk-full" not in load_kb().exception_codes("OSError", "[Errno 28] No space left on device: '/dev/shm/x'")


def test_a_refused_cuda_build_followed_by_torchs_cuda_assertion_is_a_cpu_torch():
    """pip could not find the CUDA build, the install went on without it, and torch then reports no CUDA:
    the torch that got installed is a CPU build (the refusal alone names the missing wheel)."""
    refused = "ERROR: No matching distribution found for torch==2.0.1+cu118\n"
    assert explain_text(refused).root.code == "package-no-matching-wheel"
    later = refused + "python demo.py\ntorch.cuda.is_available() returns False\n"
    assert explain_text(later).root.code == "torch-cpu-only-build"


def test_pips_pin_notice_gives_way_to_the_failure():
    log = ("xformers 0.0.28.post1 requires torch==2.4.1, but you have torch 2.5.1+cu124 which is incompatible.\n"
           "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
           "triton.knobs.build.impl.\n")
    assert explain_text(log).root.code == "no-c-compiler"
