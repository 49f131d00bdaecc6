"""harv37d: an unbiased harvest of memory and resource limits (GPU memory held elsewhere, host
RAM, /dev/shm, open files, process limits, the OOM killer), scored blind, and the general fixes
its misses ask for (docs/dev/harv37d.md).

Nine new training-side logs; explain named two first before any change. The fixes:
- a new root ``process-limit-exhausted`` (system): the per-user process/thread limit
  (RLIMIT_NPROC) or a pids limit is used up, so the threads numerical libraries start at load
  fail with EAGAIN: OpenBLAS' ``blas_thread_init: pthread_create failed for thread N of M:
  Resource temporarily unavailable`` (facebookresearch/detectron2#3900, which was unknown),
  libgomp's ``Thread creation failed``, jemalloc's ``background thread creation failed (11)``,
  Rust's ``failed to spawn thread`` with os error 11, bash's ``fork: retry``, CPython's
  ``can't start new thread``;
- TensorFlow 1.x's OOM wording ``OOM when allocating tensor of shape [...] and type float``
  (dongjun-Lee/text-classification-models-tf#4, unknown before) now reads as gpu-out-of-memory
  like the later ``with shape`` wording.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# OpenMathLib/OpenBLAS driver/others/blas_server.c blas_thread_init (facebookresearch/detectron2#3900)
OPENBLAS = "OpenBLAS blas_thread_init: pthread_create failed for thread 55 of 64: Resource temporarily unavailable"
# the older releases' wording (no thread numbers)
OPENBLAS_OLD = "OpenBLAS blas_thread_init: pthread_create: Resource temporarily unavailable"
# GCC libgomp team.c gomp_team_start
LIBGOMP = "libgomp: Thread creation failed: Resource temporarily unavailable"
# jemalloc background_thread.c (11 = EAGAIN)
JEMALLOC = "<jemalloc>: arena 0 background thread creation failed (11)"
# Rust std::thread::spawn's panic (rayon pools, e.g. Hugging Face tokenizers)
RUST_SPAWN = ("thread '<unnamed>' panicked at 'failed to spawn thread: Os { code: 11, kind: WouldBlock, "
              "message: \"Resource temporarily unavailable\" }'")
# bash jobs.c make_child
BASH_FORK = "bash: fork: retry: Resource temporarily unavailable"
# CPython Modules/_threadmodule.c
PY_THREAD = "RuntimeError: can't start new thread"
# TensorFlow 1.x (dongjun-Lee/text-classification-models-tf#4)
TF1_OOM = ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape "
           "[563354,256] and type float")

FAMILIES = {
    "process-limit-exhausted": [OPENBLAS, OPENBLAS_OLD, LIBGOMP, JEMALLOC, RUST_SPAWN, BASH_FORK, PY_THREAD],
    "gpu-out-of-memory": [TF1_OOM],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_detectron2_openblas_paste_names_the_process_limit():
    # facebookresearch/detectron2#3900: the reporter's paste; OMP_NUM_THREADS=2 fixed it
    text = (
        "Error when resume from .pth: BlockingIOError: [Errno 11] Resource temporarily unavailable\n\n"
        "OpenBLAS blas_thread_init: pthread_create failed for thread 55 of 64: Resource temporarily unavailable\n"
        "OpenBLAS blas_thread_init: RLIMIT_NPROC 4096 current, 1544645 max\n"
        "OpenBLAS blas_thread_init: pthread_create failed for thread 56 of 64: Resource temporarily unavailable\n"
        "OpenBLAS blas_thread_init: RLIMIT_NPROC 4096 current, 1544645 max\n"
    )
    assert _codes(text)[:1] == ["process-limit-exhausted"]


def test_newer_openblas_advice_lines_around_the_failure():
    # OpenBLAS 0.3.2x prints its advice after the failure line; the failure line decides
    text = (
        "OpenBLAS blas_thread_init: pthread_create failed for thread 32 of 56: Resource temporarily unavailable\n"
        "OpenBLAS blas_thread_init: ensure that your address space and process count limits are big enough "
        "(ulimit -a)\n"
        "OpenBLAS blas_thread_init: or set a smaller OPENBLAS_NUM_THREADS to fit into what you have available\n"
        "OpenBLAS blas_thread_init: RLIMIT_NPROC 128 current, 128 max\n"
    )
    assert _codes(text)[:1] == ["process-limit-exhausted"]


def test_process_limit_near_misses_keep_their_reading():
    ours = {"openblas-pthread-create-eagain", "thread-creation-eagain", "python-cant-start-new-thread"}
    # EPERM: a seccomp profile refusing clone3, not the process limit
    assert not ours & set(_ids(
        "OpenBLAS blas_thread_init: pthread_create failed for thread 35 of 48: Operation not permitted"))
    # the advice and limit lines alone say nothing of which error it was
    assert not ours & set(_ids("OpenBLAS blas_thread_init: RLIMIT_NPROC -1 current, -1 max"))
    assert not ours & set(_ids(
        "OpenBLAS blas_thread_init: or set a smaller OPENBLAS_NUM_THREADS to fit into what you have available"))
    # a non-blocking socket's EAGAIN and jemalloc's other errors
    assert not ours & set(_ids("BlockingIOError: [Errno 11] Resource temporarily unavailable"))
    assert not ours & set(_ids("<jemalloc>: arena 0 background thread creation failed (1)"))
    # OpenBLAS' buffer/thread-count abort is another limit (NUM_THREADS at build time)
    assert not ours & set(_ids("OpenBLAS : Program is Terminated. Because you tried to allocate too many "
                               "memory regions."))
    # a thread that started fine
    assert not ours & set(_ids("INFO: started new thread for the data loader"))


def test_tf1_oom_wording_reads_as_gpu_oom():
    # dongjun-Lee/text-classification-models-tf#4, the original post (unknown before harv37d)
    text = (
        "ResourceExhaustedError: OOM\n\n"
        "find a error when train the att_rnn model\n\n"
        "Machine: 4 * Tesla P100-PCIE-16GB, memory: 256G\n\n"
        "`\n" + TF1_OOM + "\n"
        "\t [[Node: embeddings/Adam/Initializer/zeros = Const[dtype=DT_FLOAT, value=Tensor<type: float "
        "shape: [563354,256] values: [0 0 0]...>, _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"]()]]\n"
        "`\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_tf_oom_near_misses_stay_quiet():
    assert "xla-resource-exhausted" not in _ids("allocating tensor of shape [3, 224, 224] for the input batch")
    assert "xla-resource-exhausted" not in _ids("Hint: If you want to see a list of allocated tensors when OOM "
                                                "happens, add report_tensor_allocations_upon_oom to RunOptions")
