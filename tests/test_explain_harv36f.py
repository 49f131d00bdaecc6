"""harv36f: an unbiased harvest of local LLM runners on consumer GPUs (llama.cpp and llama-cpp-python
wheels and builds, Ollama, exllamav2/TabbyAPI, koboldcpp, GPT4All, xinference), scored blind, and
the general fixes its misses ask for (docs/dev/harv36f.md).

Twenty-one new training-side logs; explain named ten first before any change. The fixed misses:
- exllamav2's ``Paged attention required Flash Attention 2.5.7 or later`` (attn.py
  assert_paged_attn; theroyallab/tabbyAPI#120, unknown before): ``dependency-version-mismatch``;
- rocBLAS's `` List of available TensileLibrary Files : `` and the quoted per-architecture library
  paths it lists after 'Cannot read ...TensileLibrary.dat ... for GPU arch' (tensile_host.cpp;
  ollama/ollama#9455 kept only the list): ``rocm-gpu-arch-unsupported``;
- GPT4All's bindings ``Unable to retrieve list of all GPU devices`` (llmodel_available_gpu_devices
  found no Vulkan device; nomic-ai/gpt4all#1429 on Colab): ``vulkan-driver-libs-missing``;
- glibc's ``symbol lookup error: ...: undefined symbol: ggml_/llama_/mtmd_...`` and ctypes'
  ``libllama.so: undefined symbol: llama_...`` (another llama.cpp build's libggml/libllama first
  on the loader's path; ggml-org/llama.cpp#8695, #23163, read as an extension built for another
  torch by guess before): ``library-shadowed``;
- the Visual C++ runtime DLL named with the verb first, or in the loader's Chinese or German
  dialog (ollama/ollama#6804, read as library-missing): ``msvc-runtime-missing``;
- CMake FindCUDAToolkit's ``Could not find nvcc, please set CUDAToolkit_ROOT.`` (xorbitsai/inference
  #1979, first only by a guess from words): ``nvcc-missing``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# turboderp-org/exllamav2 exllamav2/attn.py assert_paged_attn
EXL2_PAGED = "AssertionError: Paged attention required Flash Attention 2.5.7 or later"
# ROCm/rocBLAS library/src/tensile_host.cpp TensileHost::initialize
ROCBLAS_LIST = " List of available TensileLibrary Files : "
# nomic-ai/gpt4all bindings: python _pyllmodel.py init_gpu, typescript index.cc, csharp
GPT4ALL_PY = "ValueError: Unable to retrieve list of all GPU devices"
GPT4ALL_CS = "System.Exception: Unable to retrieve available GPU devices"
# glibc's lazy-binding failure in a llama.cpp program, and ctypes' dlsym failure in llama-cpp-python
GGML_LOOKUP = "./llama-server: symbol lookup error: ./llama-server: undefined symbol: mtmd_get_cap_from_file"
GGML_LIB_LOOKUP = ("./llama-cli: symbol lookup error: /home/u/llama.cpp/build/src/libllama.so: "
                   "undefined symbol: ggml_cpu_has_llamafile")
LLAMA_CTYPES = ("AttributeError: /home/developer/mambaforge/envs/CodeLlama/lib/libllama.so: "
                "undefined symbol: llama_n_ctx_train")
# the Windows loader's dialog, retold with the verb first, and in Chinese and German
VC_VERB_FIRST = "I was prompted that I could not find VCRUNTIME140.dll, MSVCP140.dll, VCRUNTIME140_1.dll"
VC_ZH = "ollama_llama_server.exe - 系统错误：由于找不到VCRUNTIME140_1.dll，无法继续执行代码。重新安装程序可能会解决此问题。"
VC_DE = ("Die Ausführung des Codes kann nicht fortgesetzt werden, da VCRUNTIME140_1.dll nicht gefunden wurde. "
         "Durch eine Neuinstallation des Programms kann das Problem möglicherweise behoben werden.")
# Kitware/CMake Modules/FindCUDAToolkit.cmake
CMAKE_NO_NVCC = "-- Could not find nvcc, please set CUDAToolkit_ROOT."

FAMILIES = {
    "dependency-version-mismatch": [EXL2_PAGED],
    "rocm-gpu-arch-unsupported": [ROCBLAS_LIST],
    "vulkan-driver-libs-missing": [GPT4ALL_PY, GPT4ALL_CS],
    "library-shadowed": [GGML_LOOKUP, GGML_LIB_LOOKUP, LLAMA_CTYPES],
    "msvc-runtime-missing": [VC_VERB_FIRST, VC_ZH, VC_DE],
    "nvcc-missing": [CMAKE_NO_NVCC],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_tabbyapi_traceback_names_the_old_flash_attn():
    # theroyallab/tabbyAPI#120: the model load's traceback, ending in exllamav2's assertion
    text = (
        "Loading model modules ━━━━━━━━━━━━━━━━━━━━ 100% 67/67 0:00:00\n"
        "Traceback (most recent call last):\n"
        '  File "L:\\tabbyAPI\\backends\\exllamav2\\model.py", line 462, in load_gen\n'
        "    self.generator = ExLlamaV2DynamicGeneratorAsync(\n"
        '  File "C:\\Python310\\lib\\site-packages\\exllamav2\\generator\\dynamic.py", line 280, in __init__\n'
        "    assert_paged_attn()\n"
        '  File "C:\\Python310\\lib\\site-packages\\exllamav2\\attn.py", line 90, in assert_paged_attn\n'
        "    assert has_flash_attn_with_paged, \\\n"
        "AssertionError: Paged attention required Flash Attention 2.5.7 or later\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_exllamav2_near_misses_stay_quiet():
    # the source line itself, TabbyAPI's own warning (it falls back, nothing fails), a docs line
    assert "exllamav2-paged-attn-needs-flash-attn" not in _ids("def assert_paged_attn():")
    assert "exllamav2-paged-attn-needs-flash-attn" not in _ids(
        "WARNING: Flash attention version >=2.5.7 is required to use paged attention. "
        "Switching to compatibility mode.")
    assert "exllamav2-paged-attn-needs-flash-attn" not in _ids(
        "Paged attention requires Flash Attention 2, which is installed.")


def test_ollama_journal_keeps_only_rocblas_list():
    # ollama/ollama#9455: the journal excerpt holds the listed files and the runner's abort
    text = (
        'Mar 02 06:28:39 ubuntu ollama[1295]: "/usr/local/lib/ollama/rocm/rocblas/library/TensileLibrary_lazy_gfx1100.dat"\n'
        'Mar 02 06:28:39 ubuntu ollama[1295]: "/usr/local/lib/ollama/rocm/rocblas/library/TensileLibrary_lazy_gfx1030.dat"\n'
        "Mar 02 06:28:39 ubuntu ollama[1295]: time=2025-03-02T06:28:39.656Z level=ERROR source=server.go:421 "
        'msg="llama runner terminated" error="signal: aborted (core dumped)"\n'
    )
    assert _codes(text)[:1] == ["rocm-gpu-arch-unsupported"]


def test_rocblas_full_message_and_windows_paths():
    # the whole report (rocBLAS 6.x on a gfx1010 card) and a Windows build's backslashed list
    text = (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory "
        "for GPU arch : gfx1010\n"
        " List of available TensileLibrary Files : \n"
        '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx900.dat"\n'
        '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx906.dat"\n'
        "Aborted (core dumped)\n"
    )
    assert _codes(text)[:1] == ["rocm-gpu-arch-unsupported"]
    assert "rocblas-listed-tensile-file" in _ids(
        '"C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\rocblas\\library\\TensileLibrary_lazy_gfx1030.dat"')


def test_rocblas_paths_elsewhere_stay_quiet():
    # install logs, ls and CMake print the same files without quotes; a quoted path in a sentence
    for line in ("-- Installing: /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
                 "/usr/local/lib/ollama/rocm/rocblas/library/TensileLibrary_lazy_gfx1030.dat",
                 'sudo ln -s "/usr/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat" gfx1010.dat',
                 "ls /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx*.dat"):
        assert not {"rocblas-listed-tensile-file", "rocblas-available-tensile-files"} & set(_ids(line)), line


def test_gpt4all_colab_traceback():
    # nomic-ai/gpt4all#1429: device='gpu' on Colab, the binding's raise at the end of the traceback
    text = (
        "----> 1 model = GPT4All(\"orca-mini-3b.ggmlv3.q4_0.bin\", device='gpu')\n"
        "/usr/local/lib/python3.10/dist-packages/gpt4all/pyllmodel.py in init_gpu(self, model_path, device)\n"
        "    232             if not all_devices_ptr:\n"
        "--> 233                 raise ValueError(\"Unable to retrieve list of all GPU devices\")\n"
        "ValueError: Unable to retrieve list of all GPU devices\n"
    )
    assert _codes(text)[:1] == ["vulkan-driver-libs-missing"]


def test_gpt4all_near_misses_stay_quiet():
    assert "gpt4all-no-gpu-devices" not in _ids("Retrieved list of all GPU devices: ['Tesla T4']")
    assert "gpt4all-no-gpu-devices" not in _ids("Unable to retrieve the list of models from the server")


def test_llama_cpp_stale_library_logs():
    # ggml-org/llama.cpp#23163 and #8695: a program of one build, a library of another
    text = (
        "./llama-server -m /home/u/Qwen3.5-4B-Q4_K_M.gguf\n"
        "./llama-server: symbol lookup error: ./llama-server: undefined symbol: mtmd_get_cap_from_file\n"
    )
    assert _codes(text)[:1] == ["library-shadowed"]
    text = "Bug: ./llama-cli: symbol lookup error: llama.cpp/build/src/libllama.so: undefined symbol: ggml_cpu_has_llamafile\n"
    assert _codes(text)[:1] == ["library-shadowed"]


def test_undefined_symbols_of_other_libraries_keep_their_reading():
    # torch extensions, CUDA libraries and other programs' symbols are not a llama.cpp build's
    for line in (
        "ImportError: /venv/lib/python3.10/site-packages/exllamav2_ext.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda14ExchangeDeviceEa",
        "python: symbol lookup error: /usr/lib/libfoo.so: undefined symbol: foo_init",
        "OSError: /opt/conda/lib/python3.11/site-packages/llama_cpp/lib/libggml.so: cannot open shared object file",
        "llama_model_loader: loaded meta data with 21 key-value pairs",
    ):
        assert "ggml-llama-undefined-symbol" not in _ids(line), line


def test_ollama_windows_vc_runtime_report():
    # ollama/ollama#6804: the reporter's retelling, the runner's status and the Chinese dialog
    text = (
        "when I installed ollama0.3.10, I was prompted that I could not find VCRUNTIME140.dll, MSVCP140.dll, "
        "VCRUNTIME140_1.dll, and Error was displayed: llama runner process has terminated: exit status 0xc0000135\n"
        "“ollama_llama_server.exe - 系统错误：由于找不到VCRUNTIME140_1.dll，无法继续执行代码。重新安装程序可能会解决。”\n"
    )
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


def test_vc_runtime_near_misses_stay_quiet():
    # other DLLs in the same phrasing, and the runtime DLL found
    for line in ("could not find cudart64_12.dll",
                 "由于找不到cublas64_12.dll，无法继续执行代码。",
                 "Loaded VCRUNTIME140_1.dll from C:\\Windows\\System32"):
        assert "vc-runtime-dll-not-found" not in _ids(line), line


def test_llama_cpp_python_cmake_without_nvcc():
    # the CUDA build of llama-cpp-python (vendored llama.cpp) on a host or image without nvcc
    text = (
        '$ CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python\n'
        "  -- Using llamafile\n"
        "  -- Could not find nvcc, please set CUDAToolkit_ROOT.\n"
        "  CMake Warning at vendor/llama.cpp/ggml/src/CMakeLists.txt:400 (message):\n"
        "    CUDA not found\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]


def test_cmake_nvcc_found_stays_quiet():
    for line in ("-- Found CUDAToolkit: /usr/local/cuda/include (found version \"12.4.131\")",
                 "-- The CUDA compiler identification is NVIDIA 12.4.131",
                 "Please set CUDAToolkit_ROOT to the toolkit you want to use."):
        assert "cmake-findcudatoolkit-no-nvcc" not in _ids(line), line
