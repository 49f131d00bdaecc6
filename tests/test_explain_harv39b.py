"""harv39b: an unbiased harvest of process failures (multiprocessing fork and spawn with CUDA,
DataLoader workers, a Jupyter kernel that died), scored blind, and the general fixes its misses
ask for (docs/dev/harv39b.md).

Fourteen new training-side logs; explain named five first before any change. The fixes:
- CPython's own refusal to start a process while the spawned child is still importing the main
  script (``An attempt has been made to start a new process before the current process has
  finished its bootstrapping phase ... you have forgotten to use the proper idiom in the main
  module``, Lib/multiprocessing/spawn.py _check_not_importing_main) had no code (G): now the new
  ``multiprocessing-main-guard-missing`` (whchien/funda-scraper#35, thampiman/reverse-geocoder#31,
  guoyang9/BPR-pytorch#1);
- CUDA error 3 in its older and other wordings (THC's ``cuda runtime error (3) : initialization
  error`` and ``THCudaCheck FAIL ... error=3 : initialization error``, torch 0.2's ``CUDA error (3):
  initialization error``, PyCUDA's ``cuInit failed: initialization error``) was only a guess from
  words; now the ``cuda-initialization-error`` signature of ``cuda-init-failed``, whose refinement
  also reads a child process around the line (Python's multiprocessing, Celery's prefork pool, a
  "child process") as ``cuda-initialized-before-fork`` (pytorch#2517, #17357, celery#3402,
  pycuda#137);
- the OpenMP runtime's hint sentence ``... KMP_DUPLICATE_LIB_OK=TRUE to allow the program to
  continue to execute`` quoted without its error line (GQCG/GQCP#590): ``library-loaded-twice``.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# CPython Lib/multiprocessing/spawn.py _check_not_importing_main (joined on one line, as many
# pastes and titles have it)
BOOT_ONE_LINE = ("RuntimeError: An attempt has been made to start a new process before the current process has "
                 "finished its bootstrapping phase.")
BOOT_IDIOM = ("This probably means that you are not using fork to start your child processes and you have "
              "forgotten to use the proper idiom in the main module:")
# THC __THCudaCheck (torch/lib/THC/THCGeneral.c): the fprintf and the raised error
THC_RAISED = ("RuntimeError: cuda runtime error (3) : initialization error at "
              "/opt/conda/conda-bld/pytorch_1535491974311/work/aten/src/THC/THCGeneral.cpp:74")
THC_FAIL = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=74 error=3 : "
            "initialization error")
TORCH02 = "terminate called after throwing an instance of 'std::runtime_error'  what():  CUDA error (3): initialization error"
PYCUDA = "pycuda._driver.LogicError: cuInit failed: initialization error"
# the LLVM/Intel OpenMP runtime's hint (openmp/runtime/src/i18n/en_US.txt), its last sentence
OMP_HINT = ("OMP: Hint As an unsafe, unsupported, undocumented workaround you can set the environment variable "
            "KMP_DUPLICATE_LIB_OK=TRUE to allow the program to continue to execute, but that may cause crashes "
            "or silently produce incorrect results.")

FAMILIES = {
    "multiprocessing-main-guard-missing": [BOOT_ONE_LINE, BOOT_IDIOM],
    "cuda-init-failed": [THC_RAISED, THC_FAIL, TORCH02, PYCUDA],
    "library-loaded-twice": [OMP_HINT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


# CPython's message as Python prints it: indented, wrapped over several lines
BOOT_WRAPPED = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "C:\\Users\\me\\Anaconda3\\lib\\multiprocessing\\spawn.py", line 105, in spawn_main
    exitcode = _main(fd)
  File "C:\\Users\\me\\Anaconda3\\lib\\multiprocessing\\spawn.py", line 114, in _main
    prepare(preparation_data)
  File "C:\\Users\\me\\Anaconda3\\lib\\multiprocessing\\spawn.py", line 136, in _check_not_importing_main
    is not going to be frozen to produce an executable.''')
RuntimeError:
        An attempt has been made to start a new process before the
        current process has finished its bootstrapping phase.

        This probably means that you are not using fork to start your
        child processes and you have forgotten to use the proper idiom
        in the main module:

            if __name__ == '__main__':
                freeze_support()
                ...

        The "freeze_support()" line can be omitted if the program
        is not going to be frozen to produce an executable.
"""


def test_bootstrapping_error_wrapped_as_python_prints_it():
    assert _codes(BOOT_WRAPPED)[:1] == ["multiprocessing-main-guard-missing"]


def test_bootstrapping_error_312_with_the_docs_pointer():
    # Python 3.12+ adds a pointer to the docs after the idiom
    text = BOOT_WRAPPED + ('\n        To fix this issue, refer to the "Safe importing of main module"\n'
                           "        section in https://docs.python.org/3/library/multiprocessing.html\n")
    assert _codes(text)[:1] == ["multiprocessing-main-guard-missing"]


def test_bootstrapping_error_title_only():
    # guoyang9/BPR-pytorch#1: the title's message and a question
    text = ("RuntimeError: An attempt has been made to start a new process before the current process has "
            "finished its bootstrapping phase.\n\nhow can I solve this problem?\n")
    assert _codes(text)[:1] == ["multiprocessing-main-guard-missing"]


def test_bootstrapping_error_beside_the_dataloader_worker_symptom():
    # Windows: the child's RuntimeError, then the parent's DataLoader reports the worker's exit
    text = BOOT_WRAPPED + (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    for x, y in loader:\n"
        "RuntimeError: DataLoader worker (pid(s) 16732) exited unexpectedly\n")
    assert _codes(text)[:1] == ["multiprocessing-main-guard-missing"]


def test_bootstrapping_near_misses_keep_their_reading():
    # advice text and a docstring about the guard; the spawn frames alone; a user's guard
    for text in (
        "Always put the training code under if __name__ == '__main__': on Windows.",
        "Spawn-start workers without letting them re-execute the caller's __main__ script.",
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 291, in _fixup_main_from_path',
        "if __name__ == '__main__':\n    freeze_support()",
        "The current process has finished its bootstrapping phase and is ready.",
    ):
        assert "multiprocessing-bootstrapping-phase" not in _ids(text), text


def test_error_3_in_a_forked_child_is_the_fork():
    # pytorch#17357: the child's traceback through multiprocessing/process.py
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/miniconda/lib/python3.7/multiprocessing/process.py", line 297, in _bootstrap\n'
        "    self.run()\n"
        '  File "/home/u/miniconda/lib/python3.7/multiprocessing/process.py", line 99, in run\n'
        "    self._target(*self._args, **self._kwargs)\n"
        '  File "dist_bug.py", line 5, in run\n'
        "    torch.cuda.set_device(rank)\n"
        '  File "/home/u/project/pytorch/torch/cuda/__init__.py", line 265, in set_device\n'
        "    torch._C._cuda_setDevice(device)\n"
        "RuntimeError: cuda runtime error (3) : initialization error at ../torch/csrc/cuda/Module.cpp:33\n")
    assert _codes(text)[:1] == ["cuda-initialized-before-fork"]


def test_error_3_in_a_celery_worker_is_the_fork():
    # celery#3402: a model loaded in Celery's main process, the task in a prefork worker
    text = ("I am loading a deep learning model to the celery mainprocess but when I try to run a task on the "
            "worker, then it shows the following error:\n\n"
            "`$ Error: cuda runtime error (3) : initialization error at /tmp/luarocks_cutorch-scm-1/cutorch/init.c:720`\n"
            "`THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1/cutorch/init.c line=720 error=3 : initialization error`\n")
    assert _codes(text)[:1] == ["cuda-initialized-before-fork"]


def test_pycuda_cuinit_in_a_child_process_is_the_fork():
    # inducer/pycuda#137
    text = ("Running `py.test test_pycuda_multi.py` on some machines causes this error in the child process:\n\n"
            "> LogicError: cuInit failed: initialization error\n")
    assert _codes(text)[:1] == ["cuda-initialized-before-fork"]


def test_error_3_with_no_child_process_stays_cuda_init_failed():
    # the same error in a plain script: the driver cannot initialise (no fork in the log)
    for text in (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    model.cuda()\n"
        "RuntimeError: cuda runtime error (3) : initialization error at /pytorch/aten/src/THC/THCGeneral.cpp:50\n",
        "pycuda._driver.LogicError: cuInit failed: initialization error\n",
    ):
        assert _codes(text)[:1] == ["cuda-init-failed"], text


def test_error_3_near_misses():
    # other errors in the same wordings, and container-cli's 'initialization error' lines
    for text in (
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=663 error=11 : invalid argument",
        "pycuda._driver.LogicError: cuMemAlloc failed: out of memory",
        "CUDA error (30): unknown error",
    ):
        assert "cuda-initialization-error" not in _ids(text), text


def test_omp_hint_quoted_without_its_error_line():
    # GQCG/GQCP#590: the reporter quotes the hint, cut
    text = ('did the trick but its warning concerns me: "As an unsafe, unsupported, undocumented workaround you '
            "can set the environment variable KMP_DUPLICATE_LIB_OK=TRUE to allow the program to continue to ex\n")
    assert _codes(text)[:1] == ["library-loaded-twice"]


def test_omp_hint_wrapped():
    text = ("OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program.\n"
            "As an unsafe, unsupported, undocumented workaround you can set the environment variable\n"
            "KMP_DUPLICATE_LIB_OK=TRUE to allow the program to continue to execute, but that may cause crashes\n")
    assert _codes(text)[:1] == ["library-loaded-twice"]


def test_kmp_duplicate_lib_ok_in_code_is_not_the_hint():
    for text in (
        "os.environ['KMP_DUPLICATE_LIB_OK']='True'",
        'os.environ["KMP_DUPLICATE_LIB_OK"] = "TRUE"',
        "export KMP_DUPLICATE_LIB_OK=TRUE",
        "set KMP_DUPLICATE_LIB_OK=TRUE to make it run",
    ):
        assert "openmp-duplicate-runtime" not in _ids(text), text
