"""Issue 8 items 2, 3 and 7 (recall4): explain's recall on the existing codes of the kernels and
runtime_libs layers, widened by class from 60 fresh training threads (tests/corpus/explain/*.log
with ``# collected: training-2026-12-01r``) and from the sources that print the same causes.

- The dynamic loader in the user's language: glibc translates dlerror() through LANG, so a
  Chinese, Japanese, Russian or German desktop prints "无法启用共享目标需要的可执行栈" for
  "cannot enable executable stack as shared object requires" (BambuStudio#6003). The msgstr are
  glibc's own (po/*.po, read from libc.mo of glibc 2.36); zh_CN changed 执行栈 to 可执行栈 later.
- The same cause printed by another program or platform: Paddle's own dynload messages for a
  missing cuDNN; macOS dyld and Windows for a library of another architecture; torch's own
  libc10.so missing when an extension is imported before torch; two OpenMP runtimes reported by
  the OpenMP runtime itself (error #15) and by threadpoolctl; xFormers' dispatcher refusing its
  FlashAttention op for a head dimension over 256; onnxruntime's CUDA_PATH variant.
- Another release's wording: torch 0.4-1.11's "cuDNN version mismatch ... 7102 but linked against
  7605", transformers 4.x and 5.x "Tokenizer class ... is not currently imported",
  huggingface_hub 0.26's other removed names, FLA 0.6.0 ops that have no backward.
- The users' words for NaN images ("I got a black pic every time"), never diffusers' safety
  checker's "A black image will be returned instead".

Messages are the programs' own wording (each signature's ``source`` names the file); the users'
words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "library-needs-executable-stack": [
        # glibc 2.41 zh_CN (BambuStudio#6003), glibc 2.36 zh_CN, zh_TW, ja, ru, de, fr, es
        "error, dlerror is /home/u/.config/BambuStudio/plugins/libbambu_networking.so: "
        "无法启用共享目标需要的可执行栈: 无效的参数",
        "ImportError: libctranslate2-bc15bf3f.so.4.5.0: 无法启用共享目标需要的执行栈: 无效的参数",
        "ImportError: libctranslate2.so.4: 無法開啟可執行堆疊做為共用物件: 不適用的引數",
        "ImportError: libctranslate2.so.4: 共有オブジェクトが必要としている実行可能スタックを有効にできません: 無効な引数です",
        "ImportError: libctranslate2.so.4: невозможно задействовать исполняемый стек, как требует разделяемый "
        "объект: Недопустимый аргумент",
        "OSError: libjax_common.so: Kann den Stack nicht ausführbar machen wie vom Shared Object verlangt: "
        "Das Argument ist ungültig",
        "ImportError: libctranslate2.so.4: ne peut activer une pile exécutable comme l'objet partagé le requiert: "
        "Argument invalide",
        "ImportError: libctranslate2.so.4: no se puede activar la pila ejecutable tal y como el objeto compartido "
        "necesita: Argumento inválido",
    ],
    "static-tls-exhausted": [
        "OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: 无法在静态 TLS 块中分配内存",
        "ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: невозможно выделить память в статичном блоке TLS",
        "ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: Kein Speicher im statischen TLS-Block verfügbar",
    ],
    "library-wrong-format": [
        "ImportError: /opt/venv/lib/python3.10/site-packages/edgetpu/_edgetpu_cpp_wrapper.so: 错误的 ELF 类：ELFCLASS32",
        "OSError: /usr/local/lib/libpysgfplib.so: mauvaise classe ELF : ELFCLASS64",
        # macOS dyld, new and old wording
        "ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/torch_scatter/_version_cuda.so, 0x0002): "
        "tried: '/Users/me/venv/lib/python3.11/site-packages/torch_scatter/_version_cuda.so' "
        "(mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64'))",
        "Reason: image not found (mach-o file, but is an incompatible architecture (have (x86_64), need (arm64e)))",
        # Windows LoadLibrary ERROR_BAD_EXE_FORMAT
        "OSError: [WinError 193] %1 is not a valid Win32 application",
    ],
    "library-missing": [
        # the loader in the user's language (glibc msgstr)
        "ImportError: libcudart.so.11.0: 无法打开共享对象文件: 没有那个文件或目录",
        "OSError: libcublasLt.so.12: 共有オブジェクトファイルを開けません: そのようなファイルやディレクトリはありません",
        "ImportError: libcudart.so.11.0: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht gefunden",
        "ImportError: libnccl.so.2: невозможно открыть разделяемый объектный файл: Нет такого файла или каталога",
        # torch's own libraries (AlwaysFHao/Mamba-Install#1: causal_conv1d_cuda imported before torch)
        "ImportError: libc10.so: cannot open shared object file: No such file or directory",
        "ImportError: libtorch_cpu.so: cannot open shared object file: No such file or directory",
        # Paddle's dynload (phi/backends/dynload/dynamic_loader.cc) for the CUDA libraries but cuDNN
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cublas64_11.dll) that Paddle depends on "
        "is not configured correctly. (error code is 126)",
        "F0531 03:56:01.989326  2382 DynamicLoader.cpp:104] Check failed: nullptr != *dso_handle Failed to find "
        "dynamic library: libcublas.so ( libcublas.so: cannot open shared object file: No such file or directory )",
        # jax _version_check of the nvidia-*-cu12 libraries
        "jaxlib.xla_extension.XlaRuntimeError: Unable to load cuSPARSE. Is it installed?",
        "RuntimeError: Unable to load cuBLAS. Is it installed?",
    ],
    "cudnn-unusable": [
        # a missing cuDNN is cudnn-unusable's (its fix names the cuDNN major): Paddle's words, the loader's
        # in the user's language
        "ImportError: libcudnn.so.8: 无法打开共享对象文件: 没有那个文件或目录",
        "Error: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion at "
        "(/paddle/paddle/fluid/platform/dynload/cudnn.cc:63)",
        "RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.",
        "W0623 12:29:30.035391 62732 dynamic_loader.cc:305] The third-party dynamic library (libcudnn.so) that "
        "Paddle depends on is not configured correctly. (error code is /usr/local/cuda/lib64/libcudnn.so: cannot "
        "open shared object file: No such file or directory)",
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on "
        "is not configured correctly. (error code is 126)",
    ],
    "library-loaded-twice": [
        # LLVM/Intel OpenMP runtime, DuplicateLibrary (error #15) and its hint
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "OMP: Error #15: Initializing libomp.dylib, but found libomp.dylib already initialized.",
        "OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program. That "
        "is dangerous, since it can degrade performance or cause incorrect results.",
    ],
    "library-version-mismatch": [
        # torch 0.4-1.11 torch/backends/cudnn/__init__.py
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7605",
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7003 but linked against 7301",
    ],
    "onnxruntime-cuda-libs-missing": [
        # onnxruntime_pybind_state.cc CreateExecutionProviderInstance (Windows, CUDA_PATH set)
        "2024-07-19 17:43:44.2312351 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
        "onnxruntime::python::CreateExecutionProviderInstance] CUDA_PATH is set but CUDA wasnt able to be loaded. "
        "Please install the correct version of CUDA and cuDNN as mentioned in the GPU requirements page",
    ],
    "model-architecture-unsupported": [
        # transformers tokenization_auto.py: 4.x, 5.24 (two raise sites)
        "ValueError: Tokenizer class GPTNeoXTokenizer does not exist or is not currently imported.",
        "ValueError: Tokenizer class Qwen3NextTokenizer is not currently imported.",
        "ValueError: Tokenizer class 'TokenizersBackend' specified in the tokenizer config was not found. "
        "The tokenizer may need to be converted or re-saved.",
    ],
    "flash-attn-head-dim-unsupported": [
        # xformers/ops/fmha/common.py shape_not_supported_reasons (older and newer wording)
        "`flshattF@v2.3.6` is not supported because: max(query.shape[-1] != value.shape[-1]) > 256",
        "    max(query.shape[-1], value.shape[-1]) > 256",
    ],
    "huggingface-hub-api-removed": [
        "ImportError: cannot import name 'url_to_filename' from 'huggingface_hub' "
        "(/opt/conda/lib/python3.10/site-packages/huggingface_hub/__init__.py)",
        "ImportError: cannot import name 'filename_to_url' from 'huggingface_hub'",
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub.file_download'",
    ],
    "bitsandbytes-cuda-setup-failed": [
        # bitsandbytes 0.37-0.41: functional.py calls lib.cadam32bit_grad_fp32 with lib = None
        "'NoneType' object has no attribute 'cadam32bit_grad_fp32'",
        "AttributeError: 'NoneType' object has no attribute 'cadam32bit_grad_fp32'",
        # bitsandbytes 0.35-0.41 cuda_setup/main.py report (bitsandbytes#82)
        "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...",
        "4. Required library not pre-compiled for this bitsandbytes release!",
        "================================================ERROR=====================================",
    ],
    "kernel-extension-not-built": [
        # torch/utils/cpp_extension.py imports the JIT build's module; a failed build left none
        "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot open shared "
        "object file: No such file or directory",
        # VMamba's build of mamba's selective scan (MzeroMiko/VMamba, kernels/selective_scan)
        "ModuleNotFoundError: No module named 'selective_scan_cuda_core'",
    ],
    "extension-torch-mismatch": [
        # the loader's undefined torch symbol pasted without the library path (flash-attention#928)
        "undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEE",
    ],
    "transformers-fast-path-unavailable": [
        # transformers 4.4x modeling_bamba.py (its typo "on of")
        "The fast path is not available because on of `(selective_state_update, causal_conv1d_fn, "
        "causal_conv1d_update)` is None. Falling back to the naive implementation. To install follow "
        "https://github.com/state-spaces/mamba/#installation and https://github.com/Dao-AILab/causal-conv1d",
    ],
    "kernel-backward-failed": [
        # FLA 0.6.0: ops/delta_rule/parallel.py, ops/cyfa/fused_recurrent.py, dplr tilelang chunk_stream_bwd.py
        "NotImplementedError: Backward pass is not implemented. Stay tuned!",
        "NotImplementedError: `fused_recurrent_cyfa` is inference-only; use chunk mode for training.",
        "NotImplementedError: The fused DPLR stream backward requires K == V.",
    ],
}


def _skip(msg, wrapper):
    if wrapper == "terminal-cut-80" and msg.startswith("=" * 48 + "ERROR"):
        return "bitsandbytes' 90-column banner is matched whole; a terminal 80 columns wide breaks it into two rules"
    return None


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, skip=_skip)


# Healthy lines that share words with the signatures above: a notice, a fix being typed, a success
HEALTHY = [
    "Potential NSFW content was detected in one or more images. A black image will be returned instead. "
    "Try again with a different prompt and/or seed.",
    "OMP: Info #276: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead.",
    "set KMP_DUPLICATE_LIB_OK=TRUE",
    "patchelf --clear-execstack ~/.config/BambuStudio/plugins/libbambu_networking.so",
    "execstack -c /usr/lib/libcallback.so.0.0.0",
    "export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096",
    "libcudnn.so.9: ELF 64-bit LSB shared object, x86-64, version 1 (SYSV), dynamically linked",
    "memory_efficient_attention.flshattF@v2.5.6:        available",
    "Successfully installed huggingface_hub-0.25.2",
    "Using CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4 for the CUDAExecutionProvider",
    "loading tokenizer class LlamaTokenizerFast from tokenizer_config.json",
    "step 120: forward 1.2 ms, backward 2.9 ms (chunk mode)",
    "The background of the images is black and white",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


# --- the users' words for a NaN image (fallback: only when nothing else matched) -------------

USERS = [
    # AUTOMATIC1111/stable-diffusion-webui issues 12923 and 2830
    "I used model dreamshaper-xl10, I got a black pic every time.",
    "When I try dump every step result of image, I found some of them can be black",
    "SDXL with the fp16 VAE: all the outputs are completely black",
]


test_users_words_for_black_images_name_half_precision = users_words_test({line: "fp16-nan-output" for line in USERS})


def test_black_images_beside_a_real_error_leave_the_error_first():
    expl = explain_text("I got a black pic every time, then this:\n"
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                        "capacity of 8.00 GiB of which 1.12 GiB is free.\n")
    assert [c.code for c in expl.candidates][:1] == ["gpu-out-of-memory"], [c.code for c in expl.candidates]


# --- threadpoolctl's warning is printed at every start: it names the cause only when alone ------

THREADPOOLCTL = ("UserWarning: Found Intel OpenMP ('libiomp') and LLVM OpenMP ('libomp') loaded at the same time. "
                 "Both libraries are known to be incompatible and this can cause random crashes or deadlocks on "
                 "Linux when loaded in the same Python program.")


def test_threadpoolctl_warning_alone_names_two_openmp_runtimes():
    expl = explain_text(THREADPOOLCTL + "\nSegmentation fault (core dumped)\n")
    assert [c.code for c in expl.candidates][:1] == ["library-loaded-twice"], [c.code for c in expl.candidates]


def test_threadpoolctl_warning_does_not_outrank_the_failure():
    expl = explain_text(THREADPOOLCTL + "\nImportError: libcublasLt.so.12: cannot open shared object file: "
                        "No such file or directory\n")
    assert [c.code for c in expl.candidates][:1] == ["library-missing"], [c.code for c in expl.candidates]


# --- who owns a missing library decides the code ----------------------------------------------

def test_a_system_library_stays_the_system_s():
    expl = explain_text("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n")
    assert [c.code for c in expl.candidates][:1] == ["system-library-missing"], [c.code for c in expl.candidates]


def test_a_translated_cuda_library_under_onnxruntime_is_onnxruntime_s():
    expl = explain_text("[E:onnxruntime:Default, provider_bridge_ort.cc:1992 TryGetProviderInfo_CUDA] Failed to load "
                        "library\nlibcublasLt.so.12: 无法打开共享对象文件: 没有那个文件或目录\n"
                        "onnxruntime CUDAExecutionProvider unavailable\n")
    assert [c.code for c in expl.candidates][:1] == ["onnxruntime-cuda-libs-missing"], \
        [c.code for c in expl.candidates]


def test_a_head_dim_reason_under_128_is_not_the_head_dim():
    # a NotImplementedError dump lists every op's reasons: smallkF's "> 32" is not a head too wide
    expl = explain_text("`smallkF` is not supported because:\n    max(query.shape[-1] != value.shape[-1]) > 32\n")
    assert "flash-attn-head-dim-unsupported" not in [c.code for c in expl.candidates]
