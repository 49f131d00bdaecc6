"""Recall of explain on the existing codes of the toolchain, runtime_libs and system layers
(recall9), widened by class from 36 fresh training threads (tests/corpus/explain/*.log with
``# collected: training-2026-12-02d``) and from the programs that raise the messages.

What the threads showed, and the class each fix covers:

- nvcc's own words quoted without its ``nvcc fatal :`` prefix: ``"Unsupported gpu architecture
  'compute_89'"`` in a title (llama.cpp 1420).
- torch's shared-memory segment write failure without errno text, as torch <= 0.4's
  TH/THAllocator.c raised it (``unable to write to file </torch_PID_RAND> at
  .../THAllocator.c:271``, flownet2-pytorch 43); MapAllocator's newer form keeps its entry.
- a cuDNN load failure in onnxruntime's context is onnxruntime's CUDA provider missing the
  libraries it was built for, including the C#/.NET spellings (OnnxRuntime,
  MakeSessionOptionWithCudaProvider) and the Windows ``Could not load library cudnn_*64_8.dll.
  Error code 127`` (onnxruntime 18973); without that context it stays cudnn-unusable.
- the Visual C++ runtime as TensorFlow names it (self_check.py: ``Could not find the DLL(s)
  'msvcp140_1.dll'``) and CPython <= 3.7's bare ``DLL load failed: The specified module could
  not be found`` (tensorflow 37797), a generic wording of weight 1 that could be library-missing.
- python-soundfile's own raise, ``sndfile library not found`` (and ``... using
  ctypes.util.find_library``), and cffi's ``cannot load library 'libsndfile.dll': error 0x7e``
  (Wave-U-Net-Pytorch 11, python-soundfile 468, VOICEVOX engine 745).
- torch's Windows compiler check, ``Compiler: cl is not found.``, or only its traceback frame
  ``in check_compiler_exist_windows`` where the paste cuts the message (ComfyUI-Zonos 7).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "nvcc-arch-unsupported": [
        # nvcc, as it prints it and as users quote its core
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
        "Unsupported gpu architecture 'compute_120'",
        "nvcc fatal : Unsupported gpu architecture 'sm_100'",
    ],
    "dataloader-shm-too-small": [
        # TH/THAllocator.c (torch <= 0.4) and ATen's MapAllocator, the /torch_ segment under /dev/shm
        "RuntimeError: unable to write to file </torch_18693_1954506624> at /pytorch/torch/lib/TH/THAllocator.c:271",
        "RuntimeError: unable to write to file </torch_15769_1517813162>",
        "RuntimeError: unable to write to file </torch_722_783672312_1>: No space left on device (28)",
    ],
    "msvc-runtime-missing": [
        # tensorflow/python/platform/self_check.py preload_check
        "ImportError: Could not find the DLL(s) 'msvcp140_1.dll'. TensorFlow requires that these DLLs be installed "
        "in a directory that is named in your %PATH% environment variable.",
        "ImportError: Could not find the DLL(s) 'msvcp140.dll or msvcp140_1.dll'.",
        # CPython <= 3.7 Python/dynload_win.c, English and zh-CN Windows
        "ImportError: DLL load failed: The specified module could not be found.",
        "ImportError: DLL load failed: 找不到指定的模块。",
    ],
    "system-library-missing": [
        # python-soundfile soundfile.py (<= 0.10, 0.11+) and cffi's dlopen of the explicit name
        "OSError: sndfile library not found",
        "OSError: sndfile library not found using ctypes.util.find_library",
        "OSError: cannot load library 'libsndfile.dll': error 0x7e",
        "OSError: cannot load library 'libsndfile.so': libsndfile.so: cannot open shared object file: No such file or directory",
    ],
    "windows-compiler-unusable": [
        # torch/_inductor/cpp_builder.py check_compiler_exist_windows, through Inductor and Dynamo
        "torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.",
        "torch._dynamo.exc.InternalTorchDynamoError: RuntimeError: Compiler: cl is not found.",
        "RuntimeError: Compiler: cl.exe is not found.",
        # its traceback frame, where the paste stops before the message
        '  File "C:\\ai\\torch\\_inductor\\cpp_builder.py", line 135, in check_compiler_exist_windows',
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


ORT_CONTEXTS = [
    # C#/.NET (onnxruntime 18973)
    "SessionOptions.MakeSessionOptionWithCudaProvider())",
    "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException]",
    "   at Microsoft.ML.OnnxRuntime.SessionOptions.AppendExecutionProvider_CUDA(Int32 deviceId)",
    # Python
    "sess = ort.InferenceSession('model.onnx', providers=['CUDAExecutionProvider'])",
    "  File \"/usr/lib/python3.10/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py\", line 419, in __init__",
]
CUDNN_LOAD_FAILURES = [
    # cuDNN 8's loader, Windows and Linux
    "Could not load library cudnn_cnn_infer64_8.dll. Error code 127",
    "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("context", ORT_CONTEXTS)
@pytest.mark.parametrize("failure", CUDNN_LOAD_FAILURES)
@pytest.mark.parametrize("order", ["context-first", "failure-first"])
def test_a_cudnn_load_failure_in_onnxruntime_is_its_cuda_provider(context, failure, order):
    lines = [context, "", "2024-01-02 10:00:00 loading model", failure] if order == "context-first" \
        else [failure, "", "2024-01-02 10:00:00 loading model", context]
    codes = [c.code for c in explain_text("\n".join(lines) + "\n").candidates]
    assert codes[:1] == ["onnxruntime-cuda-libs-missing"], codes


@pytest.mark.parametrize("failure", CUDNN_LOAD_FAILURES)
def test_the_same_failure_without_onnxruntime_stays_cudnn_unusable(failure):
    codes = [c.code for c in explain_text("step 3/10\n" + failure + "\n").candidates]
    assert codes[:1] == ["cudnn-unusable"], codes


def test_a_dll_load_failure_that_names_the_module_is_not_the_bare_wording():
    """3.8+'s 'while importing X' wording is other entries' (an extension of another torch, the
    CPU's instruction set); the weight-1 bare signature does not claim it."""
    kb = load()
    for line in ("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: "
                 "A dynamic link library (DLL) initialization routine failed.",
                 "ImportError: DLL load failed while importing flash_attn_2_cuda: The specified module could not be found."):
        assert "bare-dll-load-failed-module-not-found" not in [e.id for e in kb.match_line(line)], line


def test_the_bare_dll_load_failure_is_generic_and_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line("ImportError: DLL load failed: The specified module could not be found.")
               if e.id == "bare-dll-load-failed-module-not-found"]
    assert entries and entries[0].weight == 1 and "library-missing" in entries[0].could_be


def test_a_torch_shm_write_failure_without_errno_could_be_a_full_disk():
    kb = load()
    entries = [e for e in kb.match_line("RuntimeError: unable to write to file </torch_18693_1954506624>")
               if e.id == "torch-shm-segment-write-failed"]
    assert entries and entries[0].weight == 2 and "disk-full" in entries[0].could_be


def test_the_cl_compiler_check_beats_the_torch_compile_symptom():
    log = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
           "RuntimeError: Compiler: cl is not found.\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["windows-compiler-unusable"], codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90",
    "nvcc --list-gpu-arch: compute_50 compute_52 compute_60 compute_70 compute_75 compute_80 compute_86 compute_89",
    "wrote 512 tensors to shared memory file /torch_18693_1954506624",
    "Found msvcp140_1.dll in C:\\Windows\\System32",
    "soundfile 0.12.1 uses its bundled libsndfile 1.2.2",
    "sndfile library found at /usr/lib/x86_64-linux-gnu/libsndfile.so.1",
    "Using compiler: cl (Microsoft (R) C/C++ Optimizing Compiler Version 19.40.33811 for x64)",
    "onnxruntime 1.18.0 providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']",
])
