"""harv40d: an unbiased harvest of export and inference runtimes (onnxruntime-gpu's CUDA and
TensorRT providers, TensorRT engines, TensorRT-LLM, Triton Inference Server, torch2trt), scored
blind, and the general fixes its misses ask for (docs/dev/harv40d.md).

Twenty-one new training-side logs; explain named fourteen first before any change. The fixed misses:
- TensorRT 7's own wording of the builder's refusal of a GPU it does not know (``Assertion failed:
  Unsupported SM.`` / ``Assertion Error in trtSmToCask: 0 (Unsupported SM.)``, wang-xinyu/tensorrtx#819,
  an RTX 3080 under TensorRT 7.0): now ``tensorrt-gpu-arch-unsupported`` like TensorRT 8's
  ``Unsupported SM: 0x809`` (A2: explain guessed a native crash);
- onnxruntime's Windows provider-load failure without its empty quotes (``Loadlibrary failed with
  error 126 when trying to load onnxruntime_providers_cuda.dll``, microsoft/onnxruntime#20223,
  which was silent): the signature is tolerant of the quoting now (B);
- a model newer than the runtime (``Unknown model file format version.``, ONNX Runtime 1.15 and
  older, and ``Unsupported model IR version: 10, max supported IR version: 9``, 1.16+;
  microsoft/onnxruntime#16153): a new code ``onnx-model-newer-than-runtime`` (A1/G);
- Triton's Python backend out of /dev/shm (``Failed to increase the shared memory pool size ...
  use '--shm-size' flag ... Error: No space left on device``, triton-inference-server/server#5681,
  read as a full disk): a new code ``inference-server-shm-too-small`` (A1/G).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes as _codes, family_tests

# TensorRT 7 (rtSafe/cuda/caskUtils.cpp trtSmToCask), as wang-xinyu/tensorrtx#819 pasted it
TRT7_FATAL = "[11/15/2021-17:51:03] [F] [TRT] Assertion failed: Unsupported SM."
TRT7_ERROR = ("[11/15/2021-17:51:03] [E] [TRT] ../rtSafe/cuda/caskUtils.cpp (80) - Assertion Error in "
              "trtSmToCask: 0 (Unsupported SM.)")
# onnxruntime core/platform/windows/env.cc as it prints, and as a reporter retyped it
ORT_LOADLIB = ('[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" when trying to load '
               '"C:\\venv\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"')
ORT_LOADLIB_RETYPED = "Loadlibrary failed with error 126 when trying to load onnxruntime_providers_cuda.dll"
# onnxruntime core/graph/model.cc Model::Model, the two releases' wordings
ORT_IR_OLD = ("onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load model "
              "from model.onnx failed:Unknown model file format version.")
ORT_IR_NEW = ("onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : "
              "INVALID_ARGUMENT : Failed to load model with error: Unsupported model IR version: 10, max "
              "supported IR version: 9")
# triton-inference-server/python_backend src/shm_manager.cc (GrowIfNeeded, the constructor)
SHM_GROW = ("tritonclient.utils.InferenceServerException: Failed to increase the shared memory pool size for "
            "key 'triton_python_backend_shm_region_2' to 67108864 bytes. If you are running Triton inside "
            "docker, use '--shm-size' flag to control the shared memory region size. Error: No space left "
            "on device")
SHM_INIT = ("UNAVAILABLE: Internal: Unable to initialize shared memory key '/pre_multi_skin_GPU_0' to requested "
            "size (67108864 bytes). If you are running Triton inside docker, use '--shm-size' flag to control "
            "the shared memory region size. Each Python backend model instance requires at least 1 MB of "
            "shared memory. Error: No such file or directory")
SHM_GROW_NO_KEY = ("Failed to increase the shared memory pool size to 1048576 bytes. If you are running Triton "
                   "inside docker, use '--shm-size' flag to control the shared memory region size. Error: No "
                   "space left on device")

FAMILIES = {
    "tensorrt-gpu-arch-unsupported": [TRT7_FATAL, TRT7_ERROR],
    "onnxruntime-cuda-libs-missing": [ORT_LOADLIB, ORT_LOADLIB_RETYPED],
    "onnx-model-newer-than-runtime": [ORT_IR_OLD, ORT_IR_NEW],
    "inference-server-shm-too-small": [SHM_GROW, SHM_INIT, SHM_GROW_NO_KEY],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_tensorrtx_paste_names_the_old_tensorrt():
    # wang-xinyu/tensorrtx#819: the builder's lines, then the sample's own assertion on the null engine
    text = (
        "Loading weights: yolov5s.wts\nBuilding engine, please wait for a while...\n"
        "[11/15/2021-17:37:28] [W] [TRT] Half2 support requested on hardware without native FP16 support, "
        "performance will be negatively affected.\n\n"
        "[11/15/2021-17:51:03] [F] [TRT] Assertion failed: Unsupported SM.\n../rtSafe/cuda/caskUtils.cpp:80\n"
        "Aborting...\n\n"
        "[11/15/2021-17:51:03] [E] [TRT] ../rtSafe/cuda/caskUtils.cpp (80) - Assertion Error in trtSmToCask: 0 "
        "(Unsupported SM.)\nBuild engine successfully!\n"
        "yolov5: /home/neo/tensorrtx/yolov5/yolov5.cpp:243: void APIToModel(unsigned int, nvinfer1::IHostMemory**, "
        "bool&, float&, float&, std::__cxx11::string&): Assertion `engine != nullptr' failed.\n"
        "Aborted (core dumped)\n"
    )
    assert _codes(text)[:1] == ["tensorrt-gpu-arch-unsupported"]


def test_unsupported_sm_near_misses_stay_quiet():
    # nvcc's own refusal of an architecture, a question in prose, TensorRT's healthy lines
    for line in (
        "nvcc fatal   : Unsupported gpu architecture 'compute_75'",
        "Is SM 8.9 unsupported by TensorRT 8.4?",
        "[TRT] [I] [MemUsageChange] Init CUDA: CPU +571, GPU +0, now: CPU 801, GPU 369 (MiB)",
        "Assertion failed: engine != nullptr",
    ):
        assert "trt7-cask-unsupported-sm" not in _ids(line), line


def test_loadlibrary_retyped_paste_is_read():
    # microsoft/onnxruntime#20223: the reporter's whole description, the message without its quotes
    text = (
        "Whether CUDA12.4 and cudnn9 matches onnxruntime-win-x64-cuda12-1.17.1\n\n### Describe the issue\n\n"
        "  Loadlibrary failed with error 126 when trying to load onnxruntime_providers_cuda.dll\n\n"
        "### To reproduce\n\napply yolov8n.onnx with cuda12.4 cudnn9 onnxruntime-win-x64-cuda12-1.17.1\n"
    )
    assert _codes(text)[:1] == ["onnxruntime-cuda-libs-missing"]


def test_loadlibrary_near_misses_keep_their_reading():
    # the shared providers library and another DLL are not the CUDA provider's load failure
    for line in (
        'LoadLibrary failed with error 126 "" when trying to load "C:\\ort\\onnxruntime_providers_shared.dll"',
        "LoadLibrary failed with error 126 when trying to load cudnn64_8.dll",
        "Could not load library cudnn_cnn_infer64_8.dll. Error code 126",
    ):
        assert "ort-provider-library-load" not in _ids(line), line


def test_model_newer_than_runtime_in_the_issue_body():
    # microsoft/onnxruntime#16153: the message inside the reporter's sentence
    text = (
        "the tensorflow model (tensorflow-gpu 1.12) work well in cuda 9.0, and use tf2onnx.convert to onnx, then "
        "use the onnx model in cuda 10.2 with onnxruntime-gpu 1.6, but failed loading, raise the error: "
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail -- Unknown model file format version.\n"
    )
    assert _codes(text)[:1] == ["onnx-model-newer-than-runtime"]


def test_model_version_near_misses_stay_quiet():
    # onnx's own checker, an IR print, a model's format line
    for line in (
        "onnx.onnx_cpp2py_export.checker.ValidationError: Your model ir_version 10 is higher than the checker's (9).",
        "ir_version: 8, opset_import: [domain: '' version: 17]",
        "Model file format: ONNX v8",
    ):
        assert "ort-model-ir-version-too-new" not in _ids(line), line


def test_shm_pool_full_is_not_a_full_disk():
    # triton-inference-server/server#5681: the client's exception ends in 'No space left on device'
    text = (
        "I'm unable to complete inference between I've run out of shared memory:\n\n> " + SHM_GROW + "\n\n"
        "Unfortunately, the environment in which I'm running the image (Fargate) does not support using that flag.\n"
    )
    assert _codes(text)[:1] == ["inference-server-shm-too-small"]


def test_shm_near_misses_keep_their_reading():
    # Triton's healthy start-up line, a docker command line, the DataLoader's own shm message
    for line in (
        'I1020 05:12:57.585837 1 python_be.cc:1778] "Shared memory configuration is '
        'shm-default-byte-size=1048576,shm-growth-byte-size=1048576,stub-timeout-seconds=30"',
        "docker run --gpus=1 --rm --shm-size=1g -p8000:8000 nvcr.io/nvidia/tritonserver:24.04-py3 tritonserver",
        "error: creating server: Internal - failed to load all models",
    ):
        assert "triton-python-backend-shm-pool" not in _ids(line), line
    text = ("RuntimeError: DataLoader worker (pid 4321) is killed by signal: Bus error. It is possible that "
            "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")
    assert _codes(text)[:1] == ["dataloader-shm-too-small"]
