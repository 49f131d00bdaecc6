"""Environment messages harvested from the libraries' own source (harvi): applications and
high-level frameworks (ComfyUI, stable-diffusion-webui and Forge, text-generation-webui, KoboldCpp,
diffusers, PEFT, PyTorch Lightning, NeMo, Ultralytics, PaddlePaddle, MXNet, openai-whisper,
insightface). Each message below is the library's text with its variable parts filled in (the
file that raises or prints it is named above it); each must rank its code first in every wrapper
pasted logs put around it. The healthy lines are notices these programs print on runs that go
on: they must name nothing. docs/dev/harvest-harvi.md has the table of what explain named for
each message before and after.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test

FAMILIES = {
    "torch-cuda-unavailable": [
        # AUTOMATIC1111/stable-diffusion-webui modules/launch_utils.py prepare_environment
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable "
        "to disable this check",
        # lllyasviel/stable-diffusion-webui-forge modules/launch_utils.py prepare_environment
        "RuntimeError: Your device does not support the current version of Torch/CUDA! Consider download "
        "another version: ",
        # oobabooga/text-generation-webui modules/models.py, modules/transformers_loader.py
        "WARNING:torch.cuda.is_available() and is_xpu_available() returned False. This means that no GPU has "
        "been detected. Falling back to CPU mode.",
        # Lightning-AI/pytorch-lightning src/lightning/fabric/utilities/device_parser.py
        "lightning.fabric.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
        # src/lightning/fabric/accelerators/cuda.py find_usable_cuda_devices
        "ValueError: You requested to find 2 devices but there are no visible CUDA devices on this machine.",
        # src/lightning/fabric/connector.py _check_and_init_precision
        "RuntimeError: Bitsandbytes is only supported on CUDA GPUs.",
        # ultralytics/ultralytics ultralytics/utils/torch_utils.py select_device
        "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if "
        "available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.",
        # ultralytics/yolov5 utils/torch_utils.py select_device
        "AssertionError: CUDA unavailable, invalid device 0 requested",
        # apache/mxnet src/base.cc Context::CudaLibChecks
        "[10:12:01] src/base.cc:49: GPU context requested, but no GPUs found.",
        # NVIDIA/NeMo nemo/core/optim/optimizers.py
        "ValueError: CUDA must be available to use fused_adam.",
        # nemo/core/utils/cuda_python_utils.py (EnvironmentError is OSError in Python 3)
        "OSError: CUDA is not available",
        # huggingface/diffusers src/diffusers/pipelines/pipeline_utils.py
        "RuntimeError: `enable_model_cpu_offload` requires accelerator, but not found",
        # comfyanonymous/ComfyUI comfy/model_management.py
        "Could not pick default device.",
    ],
    "device-ordinal-out-of-range": [
        # Lightning-AI/pytorch-lightning src/lightning/fabric/accelerators/cuda.py find_usable_cuda_devices
        "ValueError: You requested to find 4 devices but this machine only has 2 GPUs.",
        # src/lightning/fabric/utilities/device_parser.py _sanitize_gpu_ids (first line of two)
        "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1]",
    ],
    "cuda-devices-unavailable": [
        # src/lightning/fabric/accelerators/cuda.py find_usable_cuda_devices
        "RuntimeError: You requested to find 2 devices but only 1 are currently available. The devices [1] are "
        "occupied by other processes and can't be used at the moment.",
    ],
    "cuda-initialized-before-fork": [
        # src/lightning/fabric/strategies/launchers/multiprocessing.py _check_bad_cuda_fork
        "RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually "
        "call `torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any "
        "other way?",
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
        "use the 'spawn' start method or avoid CUDA initialization in the main process.",
    ],
    "cuda-malloc-async-unsupported": [
        # comfyanonymous/ComfyUI main.py (cuda_malloc.py's blacklist)
        'WARNING: this card most likely does not support cuda-malloc, if you get "CUDA error" please run '
        "ComfyUI with: --disable-cuda-malloc",
    ],
    "package-no-matching-wheel": [
        # AUTOMATIC1111/stable-diffusion-webui modules/launch_utils.py check_python_version, prepare_environment
        "This program is tested with 3.10.6 Python, but you have 3.12.1.",
        "Installation of xformers is not supported in this version of Python.",
    ],
    "framework-cpu-only-build": [
        # LostRuins/koboldcpp koboldcpp.py pick_existant_file
        "Warning: CuBLAS library file not found. CPU library will be used.",
        "Warning: Vulkan library file not found. CPU library will be used.",
        "Warning: NoAVX2 CLBlast library file not found. CPU library will be used.",
        # apache/mxnet include/mxnet/libinfo.h MXNET_GPU_NOT_ENABLED_ERROR via src/storage/storage.cc
        "mxnet.base.MXNetError: [10:12:01] src/storage/storage.cc:119: GPU is not enabled",
        "MXNetError: Compile with USE_CUDA=1 to enable GPU usage",
        # PaddlePaddle/Paddle python/paddle/device (a CPU wheel asked for the GPU)
        "Cannot use GPU because you have installed CPU version PaddlePaddle.",
    ],
    "framework-gpu-arch-unsupported": [
        # PaddlePaddle/Paddle paddle/phi/backends/gpu/gpu_resources.cc
        "W0101 12:00:00.000000  1234 gpu_resources.cc:106] The GPU architecture in your current machine is "
        "Pascal, which is not compatible with Paddle installation with arch: 70 75 80 86 , it is recommended to "
        "install the corresponding wheel package according to the installation information on the official "
        "Paddle website.",
        # apache/mxnet src/common/cuda/utils.h CUDA_CALL
        "mxnet.base.MXNetError: [10:12:01] src/engine/threaded_engine.cc:331: Check failed: e == cudaSuccess || "
        "e == cudaErrorCudartUnloading: CUDA: no kernel image is available for execution on the device",
    ],
    "llm-gpu-layers-not-offloaded": [
        # LostRuins/koboldcpp koboldcpp.py main
        "WARNING: GPU layers is set, but a GPU backend was not selected! GPU will not be used!",
    ],
    "amd-gpu-no-torch-backend": [
        # oobabooga/text-generation-webui one_click.py install_webui
        "AMD GPUs are only supported on Linux. Exiting...",
    ],
    "gpu-out-of-memory": [
        # apache/mxnet src/storage/pooled_storage_manager.h Alloc
        "mxnet.base.MXNetError: [10:12:01] src/storage/./pooled_storage_manager.h:212: Memory allocation "
        "failed out of memory",
        "mxnet.base.MXNetError: [10:12:01] src/storage/./pooled_storage_manager.h:157: cudaMalloc retry "
        "failed: out of memory",
        # PaddlePaddle/Paddle paddle/fluid/memory/allocation
        "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, "
        "15.700000GB memory has been allocated and available memory is only 100.000000MB.",
    ],
    "no-nvidia-driver": [
        # apache/mxnet src/base.cc Context::CudaLibChecks
        "[10:12:01] src/base.cc:47: Please install cuda driver for GPU use.  No cuda driver detected.",
    ],
    "driver-too-old-for-build": [
        # NVIDIA/NeMo nemo/core/utils/cuda_python_utils.py
        "ImportError: Driver supports cuda toolkit version 12.2, but the driver needs to support at least 12,6. "
        "Please update your cuda driver.",
    ],
    "library-version-mismatch": [
        # PaddlePaddle/Paddle paddle/phi/backends/gpu/gpu_resources.cc (and fluid/platform/device_context.cc)
        "W1114 22:57:33.949204    32 gpu_resources.cc:196] WARNING: device: 0. The installed Paddle is compiled "
        "with CUDNN 8.1, but CUDNN version in your machine is 8.0, which may cause serious incompatible bug. "
        "Please recompile or reinstall Paddle with compatible CUDNN version.",
        "WARNING: device: 0. The installed Paddle is compiled with CUDA 11.8, but CUDA runtime version in your "
        "machine is 11.6, which may cause serious incompatible bug. Please recompile or reinstall Paddle with "
        "compatible CUDA version.",
        # apache/mxnet src/base.cc Context::CuDNNLibChecks
        "[10:12:01] src/base.cc:79: cuDNN lib mismatch: linked-against version 8100 != compiled-against version "
        "7600.  Set MXNET_CUDNN_LIB_CHECKING=0 to quiet this warning.",
    ],
    "cudnn-unusable": [
        # PaddlePaddle/Paddle paddle/phi/backends/dynload/dynamic_loader.cc, cudnn.cc
        "W0523 17:19:38.360607 12884 dynamic_loader.cc:307] The third-party dynamic library (libcudnn.so) that "
        "Paddle depends on is not configured correctly. (error code is /usr/local/cuda/lib64/libcudnn.so: cannot "
        "open shared object file: No such file or directory)",
        "Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.",
    ],
    "kernel-library-not-installed": [
        # oobabooga/text-generation-webui modules/models.py
        "ModuleNotFoundError: Failed to import 'tensorrt_llm'. Please install it manually following the "
        "instructions in the TensorRT-LLM GitHub repository.",
        # NVIDIA/NeMo nemo/core/utils/cuda_python_utils.py, cuda_graph_rnnt_greedy_decoding.py, numba_utils.py
        "ModuleNotFoundError: No `cuda-python` module. Please do `pip install cuda-python>=12.3`",
        "ValueError: Cannot instantiate RNNTGreedyDecodeCudaGraph without `pip install cuda-python`",
        "Could not import `numba`.",
        # NeMo's megatron model files (raised)
        "ImportError: megatron-core was not found. Please see the NeMo README for installation instructions: "
        "https://github.com/NVIDIA/NeMo#megatron-gpt.",
        # NeMo's import-time warning (a fallback signature: alone in the log it names the cause)
        "[NeMo W 2024-05-01 10:00:00 nemo_logging:349] Apex was not found. Please see the NeMo README for "
        "installation instructions: https://github.com/NVIDIA/NeMo#megatron-gpt.",
        # huggingface/diffusers src/diffusers/utils/import_utils.py BACKENDS_MAPPING; attention_processor.py
        "ImportError: FluxPipeline requires the bitsandbytes library but it was not found in your environment. "
        "You can install it with pip: `pip install bitsandbytes`",
        "ModuleNotFoundError: Refer to https://github.com/facebookresearch/xformers for more information on how "
        "to install xformers",
        # huggingface/peft src/peft/utils/loftq_utils.py
        "ValueError: bitsandbytes is not available, please install it to use LoftQ.",
        # comfyanonymous/ComfyUI nodes.py load_custom_node: the reason after the colon decides
        "Cannot import /home/u/ComfyUI/custom_nodes/ComfyUI-Foo module for custom nodes: No module named "
        "'xformers'",
    ],
    "dependency-version-mismatch": [
        # NVIDIA/NeMo nemo/core/utils/cuda_python_utils.py; nemo/core/optim/distributed_adam.py
        "ImportError: Found cuda-python 12.2.0, but at least version 12.3.0 is needed.",
        "RuntimeError: Invalid Transformer Engine version for FP8 distributed optimizer",
        # huggingface/peft src/peft/utils/other.py; src/peft/tuners/lora/model.py
        "ImportError: Your transformers version is too old, please upgrade it to >= 4.53.1",
        "ValueError: Using aLoRA requires transformers >= 4.52.1.",
        # huggingface/diffusers src/diffusers/utils/import_utils.py requires_backends; bnb_quantizer.py
        "ImportError: You need to install `transformers>=4.25` in order to use UnCLIPPipeline:",
        "ImportError: Using `bitsandbytes` 4-bit quantization requires the latest version of bitsandbytes: "
        "`pip install -U bitsandbytes`",
        "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install "
        "'accelerate>=0.26.0'`",
    ],
    "torch-too-old-for-package": [
        # huggingface/diffusers src/diffusers/models/attention_processor.py
        "ImportError: AttnProcessor2_0 requires PyTorch 2.0, to use it, please upgrade PyTorch to 2.0.",
        "ImportError: FusedAttnProcessor2_0 requires at least PyTorch 2.0, to use it. Please upgrade PyTorch to "
        "> 2.0.",
        # Lightning-AI/pytorch-lightning src/lightning/fabric/strategies/fsdp.py, model_parallel.py
        "ValueError: The `device_mesh` argument is only supported in torch >= 2.2.",
        "ImportError: ModelParallelStrategy requires PyTorch 2.4 or higher.",
    ],
    "torch-cpu-only-build": [
        # ComfyUI's get_torch_device() on a CPU build of torch, also as a custom node's import reason
        "AssertionError: Torch not compiled with CUDA enabled",
        "Cannot import /ComfyUI/custom_nodes/ComfyUI-Foo module for custom nodes: Torch not compiled with CUDA "
        "enabled",
    ],
    "library-missing": [
        # PaddlePaddle/Paddle paddle/phi/backends/dynload/dynamic_loader.cc
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (libnccl.so) that Paddle depends on "
        "is not configured correctly. (error code is libnccl.so: cannot open shared object file: No such file or "
        "directory)",
        # ComfyUI custom node whose extension needs another CUDA runtime
        "Cannot import /home/u/ComfyUI/custom_nodes/ComfyUI-Foo module for custom nodes: libcudart.so.11.0: "
        "cannot open shared object file: No such file or directory",
    ],
    "ffmpeg-not-found": [
        # openai/whisper whisper/audio.py load_audio (runs the ffmpeg CLI)
        "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'",
        "RuntimeError: Failed to load audio: /bin/sh: 1: ffmpeg: not found",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# notices these programs print on runs that go on (fallbacks, advisories, start-up records)
test_healthy_notices_name_nothing = healthy_test([
    # openai/whisper whisper/transcribe.py: a CPU run casts to float32 and goes on
    "UserWarning: FP16 is not supported on CPU; using FP32 instead",
    "/usr/lib/python3.11/site-packages/whisper/transcribe.py:126: UserWarning: FP16 is not supported on CPU; "
    "using FP32 instead",
    "UserWarning: Performing inference on CPU when CUDA is available",
    # comfyanonymous/ComfyUI comfy/model_management.py start-up records
    "Trying to enable lowvram mode because your GPU seems to have 4GB or less. If you don't want this use: "
    "--normalvram",
    "Set vram state to: NORMAL_VRAM",
    "Device: cuda:0 NVIDIA GeForce RTX 3090 : cudaMallocAsync",
    "Total VRAM 24576 MB, total RAM 64234 MB",
    # oobabooga/text-generation-webui modules/exllamav2.py: a performance advisory
    "You are running ExLlamaV2 without flash-attention. This will cause the VRAM usage to be a lot higher than "
    "it could be.",
    # Lightning: the Tensor Cores hint and start-up records, torchelastic's default address
    "You are using a CUDA device ('NVIDIA GeForce RTX 3090') that has Tensor Cores. To properly utilize them, "
    "you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for "
    "performance.",
    "GPU available: True (cuda), used: True",
    "TPU available: False, using: 0 TPU cores",
    "MASTER_ADDR environment variable is not defined. Set as localhost",
    # NeMo: a fallback to Apex's calculator
    "Megatron num_microbatches_calculator not found, using Apex version.",
    # apache/mxnet src/base.cc: an advisory about an old but working cuDNN
    "Upgrade advisory: this mxnet has been built against cuDNN lib version 7500, which is older than the oldest "
    "version tested by CI (7600).  Set MXNET_CUDNN_LIB_CHECKING=0 to quiet this warning.",
    # PaddlePaddle start-up records and paddle.utils.run_check()
    "W0522 14:31:24.082360  3337 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 7.5, "
    "Driver API Version: 11.6, Runtime API Version: 11.8",
    "W0522 14:31:24.083253  3337 gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.",
    "PaddlePaddle works well on 1 GPU.",
    "PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now.",
    # deepinsight/insightface python-package/insightface/model_zoo/model_zoo.py
    "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: "
    "{'CUDAExecutionProvider': {'device_id': '0'}, 'CPUExecutionProvider': {}}",
    # LostRuins/koboldcpp koboldcpp.py: start-up records and a handled fallback
    "Attempting to use CuBLAS library for faster prompt ingestion. A compatible CuBLAS will be required.",
    "Auto Selected CUDA Backend...",
    "Initializing dynamic library: koboldcpp_cublas.dll",
    "Warning: NoAVX2 library file not found. Failsafe library will be used.",
    # ultralytics: the AMP self-check that passed, the banner
    "AMP: checks passed ✅",
    "Ultralytics 8.3.0 🚀 Python-3.11.5 torch-2.4.0+cu121 CUDA:0 (NVIDIA GeForce RTX 4090, 24210MiB)",
    # webui's launch line
    "Launching Web UI with arguments: --xformers --medvram",
])


def _top(text: str):
    return [c.code for c in explain_text(text).candidates][:1]


def test_lightning_gpu_list_spanning_two_lines():
    # device_parser.py: f"You requested gpu: {gpus}\n But your machine only has: {all_available_gpus}"
    text = ("lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1, 2, 3]\n"
            " But your machine only has: [0]\n")
    assert _top(text) == ["device-ordinal-out-of-range"]


def test_webui_python_warning_names_the_cause_of_a_failed_torch_install():
    # launch_utils.py prints the explanation, then the torch install fails ("Couldn't install torch.")
    text = ("INCOMPATIBLE PYTHON VERSION\n\nThis program is tested with 3.10.6 Python, but you have 3.13.0.\n"
            "If you encounter an error with \"RuntimeError: Couldn't install torch.\" message,\n"
            "Installing torch and torchvision\nERROR: Could not find a version that satisfies the requirement "
            "torch==2.1.2 (from versions: 2.6.0, 2.7.0)\nERROR: No matching distribution found for torch==2.1.2\n"
            "RuntimeError: Couldn't install torch.\n")
    assert _top(text) == ["package-no-matching-wheel"]


def test_nemo_apex_notice_gives_way_to_the_real_error():
    # the import-time warning is a fallback: a real failure elsewhere in the log outranks it
    text = ("[NeMo W 2024-05-01 10:00:00 nemo_logging:349] Apex was not found. Please see the NeMo README for "
            "installation instructions: https://github.com/NVIDIA/NeMo#megatron-gpt.\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
            "of 23.65 GiB of which 1.02 GiB is free.\n")
    assert _top(text) == ["gpu-out-of-memory"]
