"""Issue 8, breadth from library sources: the GPU running out of memory (torch's caching
allocator, vLLM's KV-cache sizing, XLA, llama.cpp), and the CUDA start-up failures of JAX and
TensorFlow (XLA's cuDNN version check, JAX's backend initialisation, TensorFlow's GPU loader).

Every message is the program's own wording where its source raises or prints it (the ``source``
of the matching signature names where; variable parts filled in as the program fills them). Each
runs through the wrappers pasted logs put around messages (tests/test_explain_patterns.py) and
must rank its code first.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test

FAMILIES = {
    # c10/cuda/CUDACachingAllocator.cpp, CUDA runtime, vLLM kv_cache_utils, XLA BFC allocator, ggml-cuda
    "gpu-out-of-memory": [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "23.65 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in use.",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total "
        "capacity; 11.39 GiB already allocated; 1.02 GiB free; 12.99 GiB reserved in total by PyTorch)",
        "RuntimeError: CUDA error: out of memory",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.",
        "ValueError: To serve at least one request with the models's max seq len (40960), (5.62 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (4.50 GiB).",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
        "4294967296 bytes.",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of "
        "memory",
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 5064192000",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the "
        "quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in "
        "32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True`",
        "Warp CUDA error 2: out of memory (in function wp_cuda_graph_create_exec, /builds/omniverse/warp/warp/native/"
        "warp.cu:2945)",
    ],
    # torchvision/extension.py
    "extension-torch-mismatch": [
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
        "PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1. Please reinstall the torchvision that "
        "matches your PyTorch install.",
        "RuntimeError: operator torchvision::nms does not exist",
    ],
    # c10 OperatorEntry: an extension op with no CUDA kernel registered is the extension's CPU
    # build beside a CUDA torch (ultralytics 3084: a CPU torchvision; reinstalling it from the
    # CUDA index fixed it), not a build for another torch
    "framework-cpu-only-build": [
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be "
        "because the operator doesn't exist for this backend",
    ],
    # c10 OperatorEntry: the allocation ops have no CUDA kernel only in a CPU-only torch
    "torch-cpu-only-build": [
        "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the selective/custom build "
        "process (if using custom build).",
    ],
    # xla/stream_executor/cuda/cuda_dnn.cc, JAX's CUDA plugin
    "cudnn-unusable": [
        "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the "
        "errors above for more details.",
        "Invalid handle. Cannot load symbol cudnnCreateConvolutionDescriptor",
    ],
    # the same sources' version checks: a cuDNN older than the build is a version mismatch (kbgrow8)
    "library-version-mismatch": [
        "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Loaded runtime CuDNN library: 8.6.0 but source "
        "was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor "
        "version.",
        "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8907, which "
        "is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX "
        "was built.",
    ],
    # jax/_src/xla_bridge.py
    "cuda-init-failed": [
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may "
        "need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)",
    ],
    # NVIDIA/apex setup.py (and the projects that copied its check)
    "nvcc-torch-cuda-mismatch": [
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version "
        "used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 11.7.",
    ],
    # the CUDA/NGC container entrypoint's driver check
    "device-nodes-missing": [
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
    ],
    # ollama discover/gpu_info_cudart.c (CUDA_ERROR_INSUFFICIENT_DRIVER from cudaSetDevice)
    "driver-too-old-for-build": [
        'time=2024-04-30T15:06:56.218Z level=INFO source=gpu.go:343 msg="Unable to load cudart CUDA management '
        'library /tmp/ollama523635885/runners/cuda_v11/libcudart.so.11.0: your nvidia driver is too old or missing, '
        'please upgrade to run ollama"',
        'msg="Unable to load cudart library /usr/lib/ollama/cuda_v12/libcudart.so.12.8.90: cudart init failure: 35"',
        "Warp CUDA error: Warp requires CUDA driver 12.0 or higher, but the current driver only supports CUDA 11.4",
    ],
    # ollama discover/gpu.go: a notice, the cause only when nothing else in the log is
    "no-nvidia-driver": [
        'time=2024-10-15T09:18:18.299Z level=INFO source=gpu.go:347 msg="no compatible GPUs were discovered"',
    ],
    # xformers/_cpp_lib.py
    "xformers-no-cuda-ops": [
        "WARNING[XFORMERS]: Need to compile C++ extensions to use all xFormers features.",
    ],
    # vllm/platforms (UnspecifiedPlatform's empty device type reaches torch.device)
    "torch-cuda-unavailable": [
        "RuntimeError: Device string must not be empty",
        "lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
        "RuntimeError: No HIP GPUs are available",
    ],
    # tsl/cuda/cudart_stub.cc: a notice, the cause only when nothing else in the log is
    "libcuda-missing": [
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found. If you "
        "are sure that a CUDA driver is installed, try setting environment variable NUMBA_CUDA_DRIVER with the file "
        "path of the CUDA driver shared library.",
        "2024-02-15 17:38:56.694239: I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your "
        "machine, GPU will not be used.",
    ],
    # gcc's driver and nvcc when the OOM killer ends a compiler job of a parallel extension build
    "host-oom-killed": [
        "c++: fatal error: Killed signal terminated program cc1plus",
        "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
    ],
    # tensorflow/core/common_runtime/gpu/gpu_device.cc, tsl/cuda/cudart_stub.cc
    "library-missing": [
        "tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: cudaGetErrorString "
        "symbol not found.",
        "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2211] Cannot dlopen some GPU libraries. Please make "
        "sure the missing libraries mentioned above are installed properly if you would like to use GPU.",
    ],
}

# (ollama's 99+ character INFO notice cut at 80 columns, 'no compatible\nGPUs', is re-joined:
# its first half holds a prefilter literal of a user's-statement rule, so the join is tried)
test_library_message_in_every_wrapper, test_every_message_matches_a_signature_of_its_code = \
    family_tests(FAMILIES)


def test_new_code_is_sourced_and_says_what_to_do():
    entry = load_kb().get("gpu-out-of-memory")
    assert entry.fix and entry.source and entry.links
    assert entry.logs and all(sig.source for sig in entry.logs)
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in " ".join(c for _, c in entry.commands)


def test_gpu_oom_outranks_the_catch_all_cuda_error_and_is_named_by_alias():
    """'CUDA error: out of memory' is this cause, never the catch-all 'cuda-error-unclassified';
    the names proposed for it elsewhere resolve to it."""
    expl = explain_text("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
                        "reported at some other API call\n")
    assert expl.root.code == "gpu-out-of-memory"
    assert "cuda-error-unclassified" not in [c.code for c in expl.candidates]
    kb = load_kb()
    assert set(kb.get("gpu-out-of-memory").aliases) == {"cuda-out-of-memory", "gpu-oom"}


def test_ollama_notice_gives_way_to_the_reason_it_names():
    """'no compatible GPUs were discovered' is what ollama says whatever hid the GPU; the
    cudart line before it says why (the driver), and that ranks first."""
    log = ('level=INFO source=gpu.go:343 msg="Unable to load cudart CUDA management library /tmp/ollama1/runners/'
           'cuda_v11/libcudart.so.11.0: your nvidia driver is too old or missing, please upgrade to run ollama"\n'
           'level=INFO source=gpu.go:347 msg="no compatible GPUs were discovered"\n')
    assert explain_text(log).root.code == "driver-too-old-for-build"


def test_vllm_without_a_platform_is_a_gpu_it_cannot_see():
    log = ("INFO 08-11 04:15:03 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform\n"
           "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.12/dist-packages/vllm/config.py\", "
           "line 2021, in __init__\n    self.device = torch.device(self.device_type)\n"
           "RuntimeError: Device string must not be empty\n")
    expl = explain_text(log)
    assert expl.root.code == "torch-cuda-unavailable"


def test_tensorflow_notice_gives_way_to_a_named_library():
    """TensorFlow prints the cudart_stub notice on every CPU-only start: a log that names a
    missing library is answered as that line alone is."""
    err = "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
    log = ("I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be "
           "used.\n" + err)
    ranked = [c.code for c in explain_text(log).candidates]
    assert ranked[:2] == [c.code for c in explain_text(err).candidates][:2]
    assert "libcuda-missing" not in ranked


def test_a_killed_compiler_in_an_extension_build_is_host_memory():
    """flash-attn / mamba-ssm builds run one nvcc per core; the OOM killer ends one and ninja
    reports a failed build: the cause is host memory, not the compiler or the toolkit."""
    log = ("[12/73] /usr/local/cuda/bin/nvcc -c csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.cu -o build/x.o\n"
           "FAILED: build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_bwd_hdim256_fp16_sm80.o\n"
           "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
           "ninja: build stopped: subcommand failed.\n"
           "RuntimeError: Error compiling objects for extension\n")
    expl = explain_text(log)
    assert expl.root.code == "host-oom-killed"
    assert "MAX_JOBS=" in load_kb().get("host-oom-killed").fix


def test_host_oom_is_not_gpu_oom():
    log = "[ 1234.5] Out of memory: Killed process 4242 (python) total-vm:81234kB\n"
    assert explain_text(log).root.code == "host-oom-killed"


HEALTHY = [
    # healthy lines of the same programs: nothing to explain
    "# GPU blocks: 27344, # CPU blocks: 2048",
    "INFO 10-08 20:33:48 [kv_cache_utils.py:1087] GPU KV cache size: 255,968 tokens",
    "Maximum concurrency for 32768 tokens per request: 7.81x",
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0/"
    "device:GPU:0 with 22000 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090",
    "Loaded cuDNN version 8907",
    "max_split_size_mb:512,expandable_segments:True",
    "INFO: GPU available: True (cuda), used: True",
    "torchvision: 0.19.0+cu121",
    # torch's own is_available(), quoted in the traceback of any CUDA warning: no error of its own
    "  return torch._C._cuda_getDeviceCount() > 0",
    "|    0   N/A  N/A      4242      C   python                                      22000MiB |",
]

test_healthy_lines_name_nothing = healthy_test(HEALTHY)
