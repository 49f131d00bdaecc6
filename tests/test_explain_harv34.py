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

FAMILIES = {
    "tensorrt-python-api-mismatch": [TRT11_FP16, TRT11_INT8, TRT11_CALIB, TRT11_DEVMEM],
    "triton-cache-stale-arch": [TRITON_LAUNCHER_DLL, TRITON_CUDA_UTILS_DLL, TRITON_CUDA_UTILS_DLL_ZH],
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
