"""tools33: the wordings earlier rounds left unread.

Every message is written as the program prints it (its raise site is named beside it); each runs
through every wrapper of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near
misses that must stay unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text

from test_explain_patterns import codes, family_tests, ids, sourced_roots_test  # noqa: E402


# -- 1. libstdc++'s #error for a translation unit compiled in an older C++ dialect than the
#    header needs (gcc libstdc++-v3/include/bits/c++0x_warning.h, c++14_warning.h,
#    c++17_warning.h): cxx-standard-not-enabled

CXX_DIALECT = [
    # gcc 5 and later (c++0x_warning.h), as gcc prints it: file:line:col: error: #error TEXT
    "/usr/include/c++/5/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2011 standard. This support must be enabled with the -std=c++11 or -std=gnu++11 "
    "compiler options.",
    # gcc 4.7-4.9 (CentOS 7's 4.8.5)
    "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2011 standard. This support is currently experimental, and must be enabled with "
    "the -std=c++11 or -std=gnu++11 compiler options.",
    # gcc 4.4-4.6
    "/usr/include/c++/4.6/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the upcoming ISO C++ standard, C++0x. This support is currently experimental, and must be "
    "enabled with the -std=c++0x or -std=gnu++0x compiler options.",
    # c++14_warning.h, c++17_warning.h
    "/usr/include/c++/4.9/bits/c++14_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the forthcoming ISO C++ 2014 standard. This support is currently experimental, and must be "
    "enabled with the -std=c++1y or -std=gnu++1y compiler options.",
    "/usr/include/c++/6/bits/c++17_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2017 standard. This support must be enabled with the -std=c++17 or -std=gnu++17 "
    "compiler options.",
    # MinGW through Dev-C++'s message pane
    r"32	2	C:\Program Files (x86)\Dev-Cpp\MinGW64\lib\gcc\x86_64-w64-mingw32\4.9.2\include\c++\bits\c++0x_warning.h"
    "	[Error] #error This file requires compiler and library support for the ISO C++ 2011 standard. This "
    "support is currently experimental, and must be enabled with the -std=c++11 or -std=gnu++11 compiler options.",
]

test_cxx_dialect_in_every_wrapper, test_cxx_dialect_own_signature = family_tests(
    {"cxx-standard-not-enabled": CXX_DIALECT})

test_cxx_dialect_sourced = sourced_roots_test(["cxx-standard-not-enabled"])


def test_cxx_dialect_in_a_zh_cn_locale_and_under_nvcc():
    # gcc's zh_CN catalogue translates "error:" but the #error text is the header's own
    log = ("nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. Flag will be "
           "ignored.\nIn file included from /usr/include/c++/4.8.2/tuple:35:0,\n"
           "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: 错误：#error This file requires compiler and "
           "library support for the ISO C++ 2011 standard. This support is currently experimental, and must "
           "be enable\nmake: *** [all] Error 1\n")
    assert codes(log)[:1] == ["cxx-standard-not-enabled"]


@pytest.mark.parametrize("line", [
    # the preprocessor's source echo under the message stops before the standard's name
    " #error This file requires compiler and library support \\",
    " #error This file requires compiler and library support for the \\",
    # a comment in a project's source, no compile
    "//#include <chrono> //Just for time measurement. This library requires compiler and library support "
    "for the ISO C++ 2011 standard.",
    # nvcc's dropped flag alone is a healthy notice
    "nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. Flag will be ignored.",
])
def test_cxx_dialect_near_misses_stay_quiet(line):
    assert "libstdcxx-cxx0x-warning-header" not in ids(line)
    # no line states it (the echo alone may still resemble the training log's words: a guess)
    stated = [c.code for c in explain_text(line + "\n").candidates if c.confidence in ("stated", "high")]
    assert "cxx-standard-not-enabled" not in stated


def test_torchs_own_cxx17_error_keeps_its_code():
    line = ("/opt/venv/lib/python3.10/site-packages/torch/include/ATen/ATen.h:4:2: error: #error C++17 or later "
            "compatible compiler is required to use ATen.")
    assert codes(line)[:1] == ["extension-cxx-standard-too-old"]


# -- 2. vLLM's "No platform detected" in a GKE pod: GKE's own device plugin
#    (GoogleCloudPlatform/container-engine-accelerators cmd/nvidia_gpu/nvidia_gpu.go: -host-path
#    /home/kubernetes/bin/nvidia mounted at -container-path /usr/local/nvidia) mounts the driver's
#    libraries, found only through LD_LIBRARY_PATH: libcuda-missing's GKE clues rank it

VLLM_NO_PLATFORM = (
    "INFO 08-18 15:31:33 [__init__.py:220] No platform detected, vLLM is running on UnspecifiedPlatform\n"
    "Traceback (most recent call last):\n"
    "RuntimeError: Device string must not be empty\n")

GKE_WORDS = [
    # GKE's GPU node label, as a pod spec carries it
    "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4",
    # a GKE node name (gke-<cluster>-<pool>-<hash>) in kubectl describe pod
    "Node:             gke-llm-cluster-l4-pool-5f2c1a7e-x9q2/10.128.0.7",
    "We deploy vLLM on GKE Autopilot with one L4.",
    "Google Kubernetes Engine (GKE) 1.30, L4 node pool",
]


@pytest.mark.parametrize("words", GKE_WORDS)
@pytest.mark.parametrize("wrap", ["plain", "markdown-quote", "prose-quotes", "kubectl-prefix"])
def test_vllm_no_platform_in_a_gke_pod_reads_libcuda_off_the_loader_path(words, wrap):
    from test_explain_patterns import WRAPPERS
    log = words + "\n" + "\n".join(WRAPPERS[wrap](line) for line in VLLM_NO_PLATFORM.splitlines()) + "\n"
    cands = explain_text(log).candidates
    assert [c.code for c in cands][:1] == ["libcuda-missing"], [c.code for c in cands]
    assert cands[0].confidence == "inferred"


def test_torch_finding_no_driver_in_a_gke_pod_reads_libcuda_off_the_loader_path():
    log = ("Deployed on GKE with an nvidia-l4 node pool\n"
           "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have "
           "an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"
           "AssertionError: Torch not compiled with CUDA enabled\n")
    assert "libcuda-missing" in codes(log)[:2]


@pytest.mark.parametrize("words", [
    # Kubernetes without GKE's words: the toolkit and device readings stay first
    "Running vLLM on Kubernetes with an L4 in docker",
    # words that merely contain the letters
    "the package ngke-utils is installed",
])
def test_vllm_no_platform_without_gke_words_is_not_read_as_gke(words):
    assert codes(words + "\n" + VLLM_NO_PLATFORM)[:1] != ["libcuda-missing"]


def test_gke_words_alone_stay_quiet():
    assert codes("Node: gke-llm-cluster-l4-pool-5f2c1a7e-x9q2/10.128.0.7 on GKE\nRunning: 1 pod\n") == []


# -- 3. ROCm: torch's hipified TORCH_CUDABLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED) when hipBLASLt's
#    heuristic returns no algorithm (aten/src/ATen/cuda/CUDABlas.cpp), and a hipBLASLt call that
#    does not implement the type (ROCm/hipBLASLt hipblaslt-ext-op.cpp): hipblaslt-gemm-unsupported.
#    MIOpen's hiprtc compile error (ROCm/MIOpen src/comgr.cpp) names no cause: read as the
#    unclassified GPU error, never silent

HIPBLASLT = [
    "RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `HIPBLAS_STATUS_NOT_SUPPORTED`",
    "RuntimeError: HIP error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasLtMatmul( ltHandle, "
    "computeDesc.descriptor(), &alpha_val, mat1_ptr, Adesc.descriptor(), mat2_ptr, Bdesc.descriptor(), "
    "&beta_val, result_ptr, Cdesc.descriptor(), result_ptr, Cdesc.descriptor(), &heuristicResult.algo, "
    "workspace.mutable_data_ptr(), workspaceSize, at::cuda::getCurrentCUDAStream())`",
]

test_hipblaslt_in_every_wrapper, test_hipblaslt_own_signature = family_tests(
    {"hipblaslt-gemm-unsupported": HIPBLASLT})

test_hipblaslt_sourced = sourced_roots_test(["hipblaslt-gemm-unsupported"])


@pytest.mark.parametrize("line", [
    # hipBLAS's (not Lt's) NOT_SUPPORTED, rocBLAS's not_implemented: another library, not read here
    "RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasGemmEx( handle, opa, opb, m, "
    "n, k, &falpha, a, HIP_R_16BF, lda, b, HIP_R_16BF, ldb, &fbeta, c, HIP_R_16BF, ldc, HIPBLAS_COMPUTE_32F, "
    "HIPBLAS_GEMM_DEFAULT)`",
    # torch's own warning on an architecture hipBLASLt does not support: it falls back, nothing fails
    "UserWarning: Attempting to use hipBLASLt on an unsupported architecture! Overriding blas backend to hipblas "
    "(Triggered internally at ../aten/src/ATen/Context.cpp:296.)",
    # the status's name in a header or an enum listing
    "HIPBLAS_STATUS_NOT_SUPPORTED = 7,",
])
def test_hipblaslt_near_misses(line):
    assert "torch-hipblaslt-no-heuristic" not in ids(line)
    assert "hipblaslt-gemm-unsupported" not in codes(line)


MIOPEN_COMPILE = [
    "MIOpen(HIP): Error [Compile] 'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' "
    "naive_conv.cpp: HIPRTC_ERROR_COMPILATION (6)",
    "MIOpen(HIP): Error [BuildHip] HIPRTC status = HIPRTC_ERROR_COMPILATION (6), source file: naive_conv.cpp",
]


@pytest.mark.parametrize("line", MIOPEN_COMPILE)
@pytest.mark.parametrize("wrap", ["plain", "torchrun-rank", "prose-quotes", "markdown-quote", "docker-compose"])
def test_miopen_hiprtc_compile_is_read_not_silent(line, wrap):
    from test_explain_patterns import WRAPPERS
    expl = explain_text("step 1/10\n" + WRAPPERS[wrap](line) + "\n")
    assert [c.code for c in expl.candidates][:1] == ["cuda-error-unclassified"]
    assert expl.candidates[0].kind == "symptom"


def test_miopen_hiprtc_compile_yields_to_a_stated_cause():
    log = MIOPEN_COMPILE[0] + "\nRuntimeError: HIP error: out of memory\n"
    assert codes(log)[:1] == ["gpu-out-of-memory"]


def test_miopen_hiprtc_info_line_stays_quiet():
    # MIOPEN_DEBUG_COMGR_LOG_CALLS' success line
    assert codes("MIOpen(HIP): Info [Compile] Ok 'hiprtcCompileProgram(prog.get(), c_options.size(), "
                 "c_options.data())' naive_conv.cpp\n") == []


# -- 4. file locks and SQLite on shared file systems.
#    Lustre without flock/localflock answers flock with ENOSYS (lustre/llite/file.c
#    ll_file_noflock); filelock raises NotImplementedError('... use SoftFileLock instead') and
#    huggingface_hub (utils/_fixes.py WeakFileLock) warns and falls back to a SoftFileLock:
#    filesystem-locks-unavailable. huggingface_hub's wait line is the one line a lock that never
#    frees shows: file-lock-held-elsewhere. SQLite's SQLITE_BUSY (sqlite src/main.c
#    sqlite3ErrStr 'database is locked'): sqlite-database-locked

LOCKS = {
    "filesystem-locks-unavailable": [
        "NotImplementedError: FileSystem does not appear to support flock; use SoftFileLock instead",
    ],
    "file-lock-held-elsewhere": [
        "Still waiting to acquire lock on /home/u/.cache/huggingface/hub/.locks/models--meta-llama--Llama-3.1-8B/"
        "5f0b2c.lock (elapsed: 120.3 seconds)",
        # huggingface_hub before the elapsed time was added
        "still waiting to acquire lock on /scratch/u/hf/hub/.locks/models--gpt2/8f3c.lock",
    ],
    "sqlite-database-locked": [
        "sqlite3.OperationalError: database is locked",
        "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database is locked",
        "[SQL: UPDATE studies SET study_name=? WHERE studies.study_id = ?]"
        " (Background on this error at: https://sqlalche.me/e/20/e3q8) (sqlite3.OperationalError) database is locked",
    ],
}

test_locks_in_every_wrapper, test_locks_own_signature = family_tests(LOCKS)

test_locks_sourced = sourced_roots_test(["file-lock-held-elsewhere", "sqlite-database-locked"])

HUB_FALLBACK = ("FileSystem does not appear to support flock. Falling back to SoftFileLock for "
                "/lustre/home/u/.cache/huggingface/hub/.locks/models--gpt2/8f3c.lock")


def test_hub_flock_fallback_is_a_warning_alone():
    # huggingface_hub goes on with a SoftFileLock: alone, nothing failed
    assert list(explain_text(HUB_FALLBACK + "\nFetching 7 files: 100%|##########| 7/7\n").candidates) == []


def test_hub_flock_fallback_names_the_cause_of_a_stuck_lock():
    log = (HUB_FALLBACK + "\n"
           "Still waiting to acquire lock on /lustre/home/u/.cache/huggingface/hub/.locks/models--gpt2/8f3c.lock "
           "(elapsed: 610.0 seconds)\n^CTraceback (most recent call last):\nKeyboardInterrupt\n")
    assert "filesystem-locks-unavailable" in codes(log)[:2]


def test_nfs_enolck_keeps_its_reading():
    assert codes("OSError: [Errno 37] No locks available\n")[:1] == ["filesystem-locks-unavailable"]


@pytest.mark.parametrize("line", [
    # IPython's own history database: the session runs on (a healthy notice)
    "The history saving thread hit an unexpected error (OperationalError('database is locked')).History will "
    "not be written to the database.",
    "The history saving thread hit an unexpected error (OperationalError('attempt to write a readonly database'))."
    "History will not be written to the database.",
    # SQLite's other lock status and the sentence in prose
    "the database is locked by design while the job runs",
    # filelock's soft lock named in a config
    "lock_class = SoftFileLock  # instead of FileLock",
])
def test_lock_near_misses_stay_quiet(line):
    expl = explain_text(line + "\n")
    assert [c.code for c in expl.candidates] == [], [c.code for c in expl.candidates]


# -- 5. waifu2x-caffe's dialogs (lltcggie/waifu2x-caffe bin/lang/*.json, as
#    waifu2x-caffe-gui/MainDialog.cpp shows them): the glog failure function's split-size dialog is
#    the unclassified GPU error (its cause is the CHECK line: VRAM or cuDNN); the model loader's
#    parse failure (common/cNet.cpp eWaifu2xError_FailedParseModelFile) is model-file-corrupt

WAIFU_SPLIT = [
    "There is a possibility the split size is too large",
    "分割サイズが大きすぎる可能性があります",
    "분할 크기가 너무 크게 설정되어 있을 가능성이 있습니다.",
    "Возможно размер блока слишком большой",
    "Eventuell ist die Teilungsgröße zu hoch.",
    "Há a possibilidade do tamanho da divisão ser muito grande",
    "拆分尺寸可能过大。",
]


@pytest.mark.parametrize("line", WAIFU_SPLIT)
@pytest.mark.parametrize("wrap", ["plain", "markdown-quote", "prose-quotes", "prose-backticks"])
def test_waifu2x_split_size_dialog_is_the_unclassified_gpu_error(line, wrap):
    from test_explain_patterns import WRAPPERS
    expl = explain_text("A fatal error has occurred.\n" + WRAPPERS[wrap](line) + "\n")
    cands = expl.candidates
    assert [c.code for c in cands][:1] == ["cuda-error-unclassified"], [c.code for c in cands]
    assert set(cands[0].could_be[:2]) == {"gpu-out-of-memory", "cudnn-unusable"}


def test_waifu2x_split_size_dialog_yields_to_a_named_cause():
    log = ("cuDNN cannot be used\n[cudnn64_7.dll]not found\n"
           "A fatal error has occurred.\nThere is a possibility the split size is too large\n")
    assert codes(log)[:1] == ["cudnn-unusable"]


WAIFU_PARSE = [
    "Failed to parse model file",
    "モデルファイルが壊れています",
    "모델 파일을 구문 분석하지 못했습니다.",
    "Не удалось пропарсить файл профиля",
    "No se pudo analizar el archivo de modelo.",
    "模型文件已损坏",
]

test_waifu_parse_in_every_wrapper, test_waifu_parse_own_signature = family_tests(
    {"model-file-corrupt": WAIFU_PARSE})


@pytest.mark.parametrize("line", [
    # the catalogue's key and the split-size setting's label, no dialog
    '"MessageLogFatalError":"A fatal error has occurred."',
    "Split size: 128",
    # the open failure is not read as a damaged file
    "Failed to open model file",
])
def test_waifu2x_near_misses(line):
    assert "waifu2x-caffe-fatal-split-size" not in ids(line)
    assert "waifu2x-caffe-model-file-parse-failed" not in ids(line)
