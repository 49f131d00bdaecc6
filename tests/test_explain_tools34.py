"""tools34: the wordings earlier rounds left unread (tools33, harv33, harv33b, harv33c, harv33d).

Every message is written as the program prints it (its raise site is named beside it); each runs
through wrappers of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near misses
that must stay unread or read otherwise.
"""
import pytest

from stackpeel.combinations import facts_from_text
from stackpeel.explain import explain_text

from test_explain_patterns import codes, ids, wrapped  # noqa: E402


SOME_WRAPPERS = ["plain", "torchrun-rank", "python-logging", "docker-compose", "markdown-quote",
                 "prose-quotes", "word-wrapped-80"]

# -- 1. NCCL releases that differ between nodes behind the family-0 / "unhandled system error"
#    lines: NCCL prints its release at the first communicator (src/init.cc showVersion: VERSION_STRING
#    "NCCL version X.Y.Z+cudaA.B"), torch's c10d appends it to every NCCL error (", NCCL version
#    X.Y.Z"); peers of another release fail in the bootstrap (src/misc/socket.cc ncclSocketInit's
#    "family %d is neither AF_INET") or in initTransportsRank ("Mismatched NCCL version detected")

FAMILY_0 = ("misc/socket.cc:484 NCCL WARN ncclSocketInit: connecting to address  with family 0 is neither "
            "AF_INET(2) nor AF_INET6(10)")
C10D_ERROR = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
              "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), "
              "NCCL version {v}")


def _two_nodes(v1, v2, failure=FAMILY_0):
    return (f"node1:12:12 [0] NCCL INFO NCCL version {v1}+cuda12.1\n"
            f"node2:40:40 [0] NCCL INFO NCCL version {v2}+cuda12.2\n"
            f"node1:12:80 [0] {failure}\n"
            "node1:12:80 [0] NCCL INFO bootstrap.cc:98 -> 3\n"
            + C10D_ERROR.format(v=v1) + "\n")


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
def test_nccl_releases_differing_between_nodes_rank_first(wrap):
    cands = explain_text(wrapped(wrap, _two_nodes("2.18.1", "2.19.3"))).candidates
    assert [c.code for c in cands][:1] == ["collective-mismatch-across-ranks"], [c.code for c in cands]
    assert "nccl-socket-ifname-wrong" in cands[0].explains


def test_nccl_releases_differing_in_c10d_errors_alone():
    # no NCCL_DEBUG: only torch's error lines, one per rank, each with its own release
    log = ("[rank0]: " + C10D_ERROR.format(v="2.14.3") + "\n"
           "[rank1]: " + C10D_ERROR.format(v="2.18.1") + "\n")
    assert codes(log)[:1] == ["collective-mismatch-across-ranks"]


def test_nccl_version_fact_reads_every_distinct_release():
    f = facts_from_text(_two_nodes("2.18.1", "2.19.3"))
    assert f.other.get("nccl_versions") == "2.18.1, 2.19.3"


def test_same_nccl_release_on_every_node_keeps_the_interface_reading():
    assert codes(_two_nodes("2.18.1", "2.18.1"))[:1] == ["nccl-socket-ifname-wrong"]
    assert "nccl_versions" not in facts_from_text(_two_nodes("2.18.1", "2.18.1")).other


def test_nccl_too_old_line_is_not_two_releases():
    # src/dev_runtime.cc: one process, the release it was compiled with and the one it loaded
    line = ("NCCL WARN NCCL library is too old. This application was compiled with NCCL version 2.21.5, but "
            "is running with NCCL library version 2.18.1.")
    assert "nccl_versions" not in facts_from_text(line + "\nNCCL INFO NCCL version 2.18.1+cuda12.1\n").other
    assert codes(line)[:1] == ["cuda-library-shadowed"]


def test_differing_nccl_releases_alone_stay_quiet():
    # two releases and no failure: a note at most, never a candidate
    log = "NCCL INFO NCCL version 2.18.1+cuda12.1\nNCCL INFO NCCL version 2.19.3+cuda12.2\ntraining done\n"
    assert codes(log) == []


# -- 2. nvcc's refused architecture read with the nvcc release beside it (nvcc fatal's "Unsupported gpu
#    architecture 'compute_NN'" / "Value 'sm_NN' is not defined for option 'gpu-architecture'"; which
#    CUDA added and dropped each architecture: CUDA Toolkit release notes, CMake's
#    Modules/Internal/CMakeCUDAArchitecturesAll.cmake), and a Kepler GPU under a driver branch that
#    dropped it (NVIDIA's legacy GPU list)

NVCC_VALUE = "nvcc fatal   : Value 'sm_{a}' is not defined for option 'gpu-architecture'"
NVCC_UNSUPPORTED = "nvcc fatal   : Unsupported gpu architecture 'compute_{a}'"
RELEASES = {
    "nvcc --version": "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release {r}, V{r}.17",
    "build command": "/usr/local/cuda-{r}/bin/nvcc -gencode arch=compute_{a},code=sm_{a} -c kernel.cu -o kernel.o",
    "cmake": '-- Found CUDA: /usr/local/cuda (found suitable version "{r}", minimum required is "7.0")',
    "image": "Step 1/9 : FROM nvidia/cuda:{r}-devel-ubuntu16.04",
}


def _nvcc_log(release_form, r, a, line):
    return (RELEASES[release_form].format(r=r, a=a) + "\n" + line.format(a=a) + "\nmake: *** [kernel.o] Error 1\n")


@pytest.mark.parametrize("form", sorted(RELEASES))
@pytest.mark.parametrize("r,a,line", [
    ("7.5", "61", NVCC_VALUE),         # nvidia-docker#237's case: a CUDA 7.5 image and a GTX 1070
    ("8.0", "70", NVCC_UNSUPPORTED),   # Volta before CUDA 9
    ("11.0", "86", NVCC_UNSUPPORTED),  # Ampere GA10x before CUDA 11.1
])
@pytest.mark.parametrize("wrap", ["plain", "python-logging", "markdown-quote", "word-wrapped-80"])
def test_nvcc_older_than_the_refused_arch(form, r, a, line, wrap):
    assert codes(wrapped(wrap, _nvcc_log(form, r, a, line)))[:1] == ["nvcc-arch-unsupported"]


@pytest.mark.parametrize("form", sorted(RELEASES))
@pytest.mark.parametrize("r,a,line", [
    ("12.1", "35", NVCC_UNSUPPORTED),  # Kepler after CUDA 12.0
    ("13.0", "61", NVCC_VALUE),        # Pascal after CUDA 13.0
    ("13.0", "101", NVCC_UNSUPPORTED),  # sm_101, renamed sm_110 in 13.0
])
def test_nvcc_newer_than_the_refused_arch(form, r, a, line):
    assert codes(_nvcc_log(form, r, a, line))[:1] == ["nvcc-arch-dropped"]


def test_nvcc_refused_arch_quoted_in_prose_with_the_release():
    log = ("I'm building inside the nvidia/cuda image, `nvcc --version` says Cuda compilation tools, release 7.5, "
           "V7.5.17 and the build stops with \"nvcc fatal : Value 'sm_61' is not defined for option "
           "'gpu-architecture'\"\n")
    assert codes(log)[:1] == ["nvcc-arch-unsupported"]


@pytest.mark.parametrize("log", [
    # no release in the log: the architecture alone keeps the existing reading (CUDA 13 dropped sm_61)
    NVCC_VALUE.format(a="61") + "\n",
    # a release that knows the architecture and has not dropped it: no fact, the line's own reading
    _nvcc_log("nvcc --version", "10.2", "61", NVCC_VALUE),
])
def test_nvcc_refused_arch_without_a_deciding_release(log):
    assert codes(log)[:1] == ["nvcc-arch-dropped"]


def test_nvcc_release_alone_stays_quiet():
    assert codes("Cuda compilation tools, release 7.5, V7.5.17\n/usr/local/cuda-7.5/bin/nvcc -c k.cu\n") == []


K80_BASE = ("$ lspci | grep -i nvidia\n00:04.0 3D controller: NVIDIA Corporation GK210GL [Tesla K80] (rev a1)\n"
            "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
            "that the latest NVIDIA driver is installed and running.\n")


@pytest.mark.parametrize("driver", [
    "Setting up nvidia-driver-535 (535.183.01-0ubuntu0.22.04.1) ...",
    "Unpacking nvidia-headless-550-server (550.90.07-0ubuntu1) ...",
    "Verifying archive integrity... OK\nUncompressing NVIDIA Accelerated Graphics Driver for Linux-x86_64 "
    "550.90.07.... ./NVIDIA-Linux-x86_64-550.90.07.run",
    "Installing : cuda-drivers-545-545.23.08-1.x86_64",
])
def test_kepler_under_a_driver_branch_that_dropped_it(driver):
    r = explain_text(driver + "\n" + K80_BASE)
    assert [c.code for c in r.candidates][:1] == ["proprietary-kernel-module-unsupported-gpu"], r.candidates
    assert [f.rule for f in r.fact_findings] == ["state:driver-branch-dropped-gpu"]


@pytest.mark.parametrize("log", [
    # the 470 branch still drives Kepler, and a K80 with no driver named is no driver at all
    "Setting up nvidia-driver-470 (470.256.02-0ubuntu0.22.04.1) ...\n" + K80_BASE,
    K80_BASE,
    # a Turing GPU under the same branch is driven: the symptom keeps its own causes
    K80_BASE.replace("GK210GL [Tesla K80]", "TU104GL [Tesla T4]") + "nvidia-driver-535 installed\n",
])
def test_driver_branch_near_misses(log):
    facts = explain_text(log).fact_findings
    assert not any(f.code == "proprietary-kernel-module-unsupported-gpu" for f in facts)


# -- 3. vLLM's compressed-tensors scheme check (compressed_tensors.py get_scheme -> _check_scheme_supported)
#    names no scheme; an FP8 checkpoint's name in the log (llm-compressor's -FP8 / -FP8-Dynamic /
#    -W8A8-FP8, which vLLM logs as the model it loads) makes it the GPU's missing FP8

CT_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/quantization/compressed_tensors/'
    'compressed_tensors.py", line 263, in get_scheme\n'
    "    self._check_scheme_supported(scheme.get_min_capability())\n"
    "RuntimeError: Quantization scheme is not supported for the current GPU. Min capability: 80. Current "
    "capability: 75.\n")
FP8_MODELS = [
    "INFO 05-01 12:00:00 llm_engine.py:161] Initializing an LLM engine (v0.5.3) with config: "
    "model='neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8', speculative_config=None, tokenizer='neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8'",
    "$ vllm serve RedHatAI/Mistral-Small-24B-Instruct-2501-FP8-dynamic --max-model-len 8192",
    "INFO 05-01 12:00:00 [config.py:1604] Using model Qwen2.5-7B-Instruct-W8A8-FP8",
    "model_path: /models/granite-3.1-8b-instruct_FP8",
]


@pytest.mark.parametrize("model", FP8_MODELS)
@pytest.mark.parametrize("wrap", ["plain", "vllm-worker", "docker-compose", "markdown-quote"])
def test_compressed_tensors_min_capability_with_an_fp8_checkpoint(model, wrap):
    cands = explain_text(wrapped(wrap, model + "\n" + CT_TRACE)).candidates
    assert [c.code for c in cands][:1] == ["gpu-arch-lacks-dtype"], [c.code for c in cands]


@pytest.mark.parametrize("model", [
    "$ vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
    "$ vllm serve RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8",
    "",  # no model named: the message alone
    # fp8 as a setting, not the checkpoint's name
    "$ vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8",
])
def test_compressed_tensors_min_capability_without_an_fp8_checkpoint(model):
    assert codes(model + "\n" + CT_TRACE)[:1] == ["framework-gpu-arch-unsupported"]


def test_compressed_tensors_signature_reads_the_message():
    assert ids("RuntimeError: Quantization scheme is not supported for the current GPU. Min capability: 80. "
               "Current capability: 75.") == ["compressed-tensors-scheme-min-capability"]
    # vLLM's method check keeps its own signature and its local FP8 refine
    line = ("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: "
            "89. Current capability: 86.")
    assert ids(line) == ["llm-quantization-min-capability"] and codes(line)[:1] == ["gpu-arch-lacks-dtype"]


def test_fp8_checkpoint_name_alone_stays_quiet():
    assert codes(FP8_MODELS[1] + "\nINFO:     Application startup complete.\n") == []


# -- 4. JAX's "Unable to load cuSPARSE. Is it installed?" (jax_plugins/cuda(12)/__init__.py
#    _version_check) with a CUDA toolkit's library directory on LD_LIBRARY_PATH, which the loader
#    searches before the wheels' RUNPATH (an older libnvJitLink.so.12 for pip's libcusparse.so.12:
#    jax-ml/jax#28929); and the CUDA_HOME list read only for the libraries a CUDA_HOME lookup finds

JAX_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/jax_plugins/xla_cuda12/__init__.py", line 196, in '
    "_version_check\n    version = get_version()\n"
    "RuntimeError: Unable to load {name}. Is it installed?\n")
LD_PATHS = [
    "export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64:$LD_LIBRARY_PATH",
    "LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "ENV LD_LIBRARY_PATH /usr/local/cuda-12.2/targets/x86_64-linux/lib:${LD_LIBRARY_PATH}",
    "os.environ['LD_LIBRARY_PATH'] = '/opt/cuda-12.0/lib64'",
]


@pytest.mark.parametrize("ld", LD_PATHS)
@pytest.mark.parametrize("name", ["cuSPARSE", "cuBLAS", "cuFFT"])
@pytest.mark.parametrize("wrap", ["plain", "python-logging", "markdown-quote", "prose-quotes"])
def test_jax_unable_to_load_with_a_cuda_toolkit_on_ld_library_path(ld, name, wrap):
    log = wrapped(wrap, ld + "\n" + FILLER_LINES + JAX_TRACE.format(name=name))
    assert codes(log)[:1] == ["cuda-library-shadowed"], codes(log)


FILLER_LINES = "$ python -c 'import jax; print(jax.devices())'\nloading\n"


@pytest.mark.parametrize("ld", [
    "",  # nothing on the loader path: the wheel is missing or broken
    "export LD_LIBRARY_PATH=/home/u/lib:$LD_LIBRARY_PATH",  # no CUDA toolkit directory
    "export CUDA_PATH=/usr/local/cuda-12.1/lib64",  # another variable
])
def test_jax_unable_to_load_without_a_toolkit_on_the_loader_path(ld):
    assert codes(ld + "\n" + FILLER_LINES + JAX_TRACE.format(name="cuSPARSE"))[:1] == ["library-missing"]


CUDA_HOME_LIST = "export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8\n"


@pytest.mark.parametrize("lib", ["libnvvm.so", "libcudadevrt.so"])
def test_cuda_home_list_still_reads_a_library_cuda_home_locates(lib):
    log = CUDA_HOME_LIST + FILLER_LINES + f"OSError: {lib}: cannot open shared object file: No such file or directory\n"
    assert codes(log)[:1] == ["env-path-unusable"]


@pytest.mark.parametrize("lib", ["libsndfile.so.1", "libGLU.so.1", "libtcmalloc.so.4"])
def test_cuda_home_list_does_not_steer_an_unrelated_missing_library(lib):
    log = CUDA_HOME_LIST + FILLER_LINES + f"OSError: {lib}: cannot open shared object file: No such file or directory\n"
    assert codes(log)[:1] == ["system-library-missing"], codes(log)


# -- 5. a bare ENOSYS ("OSError: [Errno 38] Function not implemented", strerror(38)): a symptom of its
#    own (syscall-not-implemented), read as filesystem-locks-unavailable where a lock frame
#    (fcntl.flock / fcntl.lockf, a filelock frame) is in its traceback (Lustre's ll_file_noflock)

LOCK_FRAMES = [
    ('  File "/home/u/.local/lib/python3.10/site-packages/filelock/_unix.py", line 39, in _acquire\n'
     "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"),
    ('  File "/scratch/u/proj/utils/lock.py", line 12, in __enter__\n'
     "    fcntl.lockf(self.fh, fcntl.LOCK_EX)\n"),
    ('  File "C:/x/site-packages/filelock/_api.py", line 332, in acquire\n    self._acquire()\n'),
]
ENOSYS_LINES = ["OSError: [Errno 38] Function not implemented",
                "OSError(38, 'Function not implemented')"]


@pytest.mark.parametrize("frame", LOCK_FRAMES)
@pytest.mark.parametrize("line", ENOSYS_LINES)
@pytest.mark.parametrize("wrap", ["plain", "torchrun-rank", "python-logging", "markdown-quote"])
def test_enosys_under_a_lock_frame_is_a_file_system_without_locks(frame, line, wrap):
    log = wrapped(wrap, "Traceback (most recent call last):\n" + frame + line)
    cands = explain_text(log).candidates
    assert [c.code for c in cands][:1] == ["filesystem-locks-unavailable"], [c.code for c in cands]
    assert cands[0].confidence == "stated"


def test_enosys_quoted_in_prose_under_a_lock_frame():
    log = ("On the cluster's Lustre scratch the download dies:\n> " + LOCK_FRAMES[0].replace("\n", "\n> ")
           + "\nwith `OSError: [Errno 38] Function not implemented`\n")
    assert codes(log)[:1] == ["filesystem-locks-unavailable"]


@pytest.mark.parametrize("frame", [
    "",
    # multiprocessing's semaphore in a sandbox without /dev/shm: another ENOSYS, not a lock
    ('  File "/var/lang/lib/python3.9/multiprocessing/synchronize.py", line 57, in __init__\n'
     "    sl = self._semlock = _multiprocessing.SemLock(\n"),
])
def test_enosys_elsewhere_is_the_symptom_not_a_lock(frame):
    cands = explain_text("Traceback (most recent call last):\n" + frame + ENOSYS_LINES[0] + "\n").candidates
    assert [c.code for c in cands][:1] == ["syscall-not-implemented"]
    assert cands[0].kind == "symptom" and "filesystem-locks-unavailable" in cands[0].could_be


@pytest.mark.parametrize("line", [
    # other errnos and texts that only look alike
    "OSError: [Errno 37] No locks available",  # ENOLCK: its own reading, kept
    "NotImplementedError: Function not implemented for this backend",
    "[Errno 380] Function not implemented yet",
])
def test_enosys_near_misses(line):
    assert "enosys-function-not-implemented" not in ids(line)


# -- 5b. "Failed to open model file" (waifu2x-caffe's MessageFailedOpenModelFileError in its 13
#    catalogues, bin/lang/*.json; common/cNet.cpp returns it when the open of a model file fails and
#    when the .protobin it writes beside the prototxt cannot be created; other loaders print the same
#    words on a failed open of the model path): model-file-unopenable

from test_explain_patterns import family_tests, sourced_roots_test  # noqa: E402

OPEN_MODEL = [
    "Failed to open model file",
    "Failed to open model file: /home/u/models/ggml-model-q4_0.bin (errno=2)",
    "モデルファイルが開けませんでした",
    "모델 파일을 열지 못했습니다.",
    "Не удалось открыть файл профиля",
    "Modeldatei konnte nicht geöffnet werden",
    "Impossible d'ouvrir le fichier de modèle",
    "No se pudo abrir el archivo de modelo.",
    "Falha ao abrir o arquivo de modelo",
    "Errore nell'apertura del file del modello",
    "模型文件无法打开",
    "開啟模組檔案失敗",
    "Nelze otevřít soubor s modelem",
    "Model dosya açılamıyor.",
]

test_open_model_in_every_wrapper, test_open_model_own_signature = family_tests({"model-file-unopenable": OPEN_MODEL})
test_open_model_sourced = sourced_roots_test(["model-file-unopenable"])


@pytest.mark.parametrize("line", [
    "Failed to open model file box",             # a storage box's name, no model path
    "Failed to parse model file",                # read but not parsed: model-file-corrupt
    "Successfully opened model file /models/x.bin",
])
def test_open_model_near_misses(line):
    assert "failed-to-open-model-file" not in ids(line)


def test_parse_failure_keeps_the_corrupt_file_reading():
    assert codes("Failed to parse model file\n")[:1] == ["model-file-corrupt"]
