"""harv34: an unbiased harvest of the compiler layer at run time (torch.compile, Inductor,
TensorRT engines and Python API, NVRTC, torch_xla, ONNX export), scored blind, and the general
fixes its misses ask for (docs/dev/harv34.md).

Fourteen new training-side logs; explain named eleven first before any change. The fixed misses:
- A2, a program's own message read only by a generic rule: TensorRT 11 removed weak typing
  (``BuilderFlag.FP16``/``INT8``/... , the INT8 calibrator API, ``ICudaEngine.device_memory_size``;
  TensorRT's 10.x-to-11.x migration guide, "Removed Python APIs and Replacements"), so code written
  for 8.x-10.x fails with ``AttributeError: type object 'tensorrt_bindings.tensorrt.BuilderFlag'
  has no attribute 'FP16'`` (yuvraj108c/ComfyUI-Rife-Tensorrt#25); explain answered with the
  generic ``torch-too-old-for-package``; now ``tensorrt-python-api-mismatch``;
- A1, a program's own message: triton-windows loads its cached helper DLLs (``cuda_utils``,
  ``__triton_launcher``); a copy built by another Python, Triton, MSVC or CUDA fails with
  ``ImportError: DLL load failed while importing __triton_launcher: The specified module could not
  be found`` (triton-windows README; woct0rdho/triton-windows#23, the torchinductor temp cache);
  explain guessed a compiler code from the words; now ``triton-cache-stale-arch`` (the line's
  ``could_be`` names the Visual C++ runtime when the log shows that too).
Round 2 (three more logs, scored blind after round 1's fixes, 2 of 3 first): TF-TRT's own
``TensorRT mismatch. Compiled against version 5.0.2, but loaded 5.1.2`` (and its older-major
error) had no signature (A1, tensorflow/tensorrt#85); now ``library-version-mismatch``.
Each message is the program's own text (from its source or documentation) or a training-side
thread's paste, run through the wrappers pasted logs put around lines, with near-misses.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import codes_of as _codes, family_tests

# pybind11's enum on a name TensorRT 11 removed (migration guide, Removed Python APIs)
TRT11_FP16 = "AttributeError: type object 'tensorrt_bindings.tensorrt.BuilderFlag' has no attribute 'FP16'"
TRT11_INT8 = "AttributeError: type object 'tensorrt.tensorrt.BuilderFlag' has no attribute 'INT8'"
TRT11_CALIB = "AttributeError: 'tensorrt_bindings.tensorrt.IBuilderConfig' object has no attribute 'int8_calibrator'"
TRT11_DEVMEM = "AttributeError: 'tensorrt_bindings.tensorrt.ICudaEngine' object has no attribute 'device_memory_size'"
# CPython Python/dynload_win.c on triton-windows' cached helpers
TRITON_LAUNCHER_DLL = ("ImportError: DLL load failed while importing __triton_launcher: "
                       "The specified module could not be found.")
TRITON_CUDA_UTILS_DLL = "ImportError: DLL load failed while importing cuda_utils: The specified module could not be found."
TRITON_CUDA_UTILS_DLL_ZH = "ImportError: DLL load failed while importing cuda_utils: 找不到指定的模块。"

# tensorflow/contrib/tensorrt/python/trt_convert.py create_inference_graph (TF 1.7-1.14)
TFTRT_WARN = "WARNING:tensorflow:TensorRT mismatch. Compiled against version 5.0.2, but loaded 5.1.2. Things may not work"
TFTRT_ERROR = ("ERROR:tensorflow:TensorRT version mismatch. Tensorflow was compiled against TensorRT 5.1.5 but library "
               "loaded from environment is TensorRT 4.0.1. Please make sure that correct version of TensorRT is "
               "available in the system and added to ldconfig or LD_LIBRARY_PATH")

FAMILIES = {
    "tensorrt-python-api-mismatch": [TRT11_FP16, TRT11_INT8, TRT11_CALIB, TRT11_DEVMEM],
    "triton-cache-stale-arch": [TRITON_LAUNCHER_DLL, TRITON_CUDA_UTILS_DLL, TRITON_CUDA_UTILS_DLL_ZH],
    "library-version-mismatch": [TFTRT_WARN, TFTRT_ERROR],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_comfyui_rife_trt11_paste_names_the_api_mismatch():
    # yuvraj108c/ComfyUI-Rife-Tensorrt#25 (the reporter's title and error)
    text = (
        "[BUG] BuilderFlag.FP16 AttributeError with TensorRT 11.x\n\n"
        "... which breaks `LoadRifeTensorrtModel`:\n\n"
        "```\n" + TRT11_FP16 + "\n```\n"
    )
    assert _codes(text)[:1] == ["tensorrt-python-api-mismatch"]


def test_trt11_flags_in_a_builder_traceback():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/app/export_trt.py", line 88, in build\n'
        "    config.set_flag(trt.BuilderFlag.FP16)\n"
        "                    ^^^^^^^^^^^^^^^^^^^\n" + TRT11_FP16 + "\n"
    )
    assert _codes(text)[:1] == ["tensorrt-python-api-mismatch"]


def test_trt11_fix_names_the_pin_and_strong_typing():
    code = load_kb().get("tensorrt-python-api-mismatch")
    assert "tensorrt<11" in code.fix and "strongly typed" in code.fix
    assert "BuilderFlag.FP16" in code.meaning


def test_trt11_near_misses_stay_quiet():
    # a flag TensorRT 11 keeps, another enum's FP16, a user's own class
    assert "tensorrt-11-removed-weak-typing-api" not in _ids(
        "AttributeError: type object 'tensorrt_bindings.tensorrt.BuilderFlag' has no attribute 'FP16_TYPO'")
    assert "tensorrt-11-removed-weak-typing-api" not in _ids(
        "AttributeError: type object 'tensorrt_bindings.tensorrt.DataType' has no attribute 'FP16'")
    assert "tensorrt-11-removed-weak-typing-api" not in _ids(
        "AttributeError: type object 'MyBuilderFlagEnum' has no attribute 'FP16'")
    assert "tensorrt-11-removed-weak-typing-api" not in _ids(
        "[TRT] [I] Using BuilderFlag.FP16: the network is weakly typed (deprecated)")


def test_triton_windows_paste_names_the_stale_cache():
    # woct0rdho/triton-windows#23 (the reporter's paste)
    text = (
        "this fixed the following error: (__triton_launcher.pyd failed to load)\n"
        '> File "<frozen importlib._bootstrap>", line 241, in _call_with_frames_removed\n'
        "> " + TRITON_LAUNCHER_DLL + "\n"
    )
    assert _codes(text)[:1] == ["triton-cache-stale-arch"]


def test_triton_cuda_utils_in_a_torch_compile_traceback():
    text = (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        '  File "C:\\ComfyUI\\python_embeded\\Lib\\site-packages\\triton\\backends\\nvidia\\driver.py", line 67, in __init__\n'
        "    mod = compile_module_from_src(Path(os.path.join(dirname, \"driver.c\")).read_text(), \"cuda_utils\")\n"
        + TRITON_CUDA_UTILS_DLL + "\n"
    )
    assert _codes(text)[:1] == ["triton-cache-stale-arch"]


def test_stale_cache_fix_names_the_inductor_temp_cache():
    code = load_kb().get("triton-cache-stale-arch")
    assert "torchinductor_" in code.fix and "vcredist" in code.fix
    assert "__triton_launcher" in code.meaning


def test_triton_dll_near_misses_keep_their_reading():
    # other extensions' DLL failures are not Triton's cache
    assert "triton-windows-cached-helper-dll-load-failed" not in _ids(
        "ImportError: DLL load failed while importing _C: The specified module could not be found.")
    assert "triton-windows-cached-helper-dll-load-failed" not in _ids(
        "ImportError: DLL load failed while importing cuda_utils_ext: The specified module could not be found.")
    assert "triton-windows-cached-helper-dll-load-failed" not in _ids(
        "ImportError: DLL load failed while importing libtriton: The specified module could not be found.")
    # a healthy load of the helper names nothing
    assert "triton-windows-cached-helper-dll-load-failed" not in _ids(
        "LoadLibrary C:\\Users\\me\\.triton\\cache\\abc\\cuda_utils.cp312-win_amd64.pyd")


def test_tf_trt_paste_names_the_tensorrt_mismatch():
    # tensorflow/tensorrt#85 (round 2, the reporter's paste)
    text = (
        "TensorFlow version:1.13.1\nTensorRT version: 5.1.2\n"
        "import tensorflow.contrib.tensorrt as trt\n"
        "trt_graph = trt.create_inference_graph(input_graph_def=frozen_graph, max_batch_size=1, precision_mode=\"fp16\")\n"
        "However, then I get the error: \n```\n" + TFTRT_WARN + "\n```\n"
    )
    assert _codes(text)[:1] == ["library-version-mismatch"]


def test_tf_trt_older_major_raises():
    text = TFTRT_ERROR + "\nRuntimeError: Incompatible TensorRT library version\n"
    assert _codes(text)[:1] == ["library-version-mismatch"]


def test_tf_trt_near_misses_stay_quiet():
    # TF-TRT's line when the versions agree, and TensorRT's own cuDNN link warning (its own code)
    assert not {"tf-trt-compiled-against-other-tensorrt", "tf-trt-loaded-older-tensorrt-major"} & set(_ids(
        "INFO:tensorflow:Running against TensorRT version 5.1.2"))
    assert "tf-trt-compiled-against-other-tensorrt" not in _ids(
        "[TRT] [W] TensorRT was linked against cuDNN 8.9.6 but loaded cuDNN 8.9.2")
    assert _codes("[TRT] [W] TensorRT was linked against cuDNN 8.9.6 but loaded cuDNN 8.9.2")[:1] != ["library-version-mismatch"]
