"""harv32c: a fourteenth unbiased harvest (HPC clusters and shared machines), scored blind, and
the general fixes its misses ask for (docs/dev/harv32c.md).

Eight new training-side logs; explain named four first before any change. The fixed misses:
- A2, a specific message caught only by a generic rule: a program that runs nvcc by its full
  path through the shell, on a node where that path does not exist. bash says
  ``sh: /usr/local/cuda/bin/nvcc: No such file or directory`` (execute_cmd.c, ENOENT for a
  command given by a path) and OpenMM reports the shell's exit status as
  ``Error launching CUDA compiler: 32512`` (std::system's 127 << 8; CudaContext.cpp), which
  explain read as ``shell-command-not-found``: it is ``nvcc-missing`` (cBio/cbio-cluster#90: the
  /usr/local/cuda link missing on some cluster nodes);
- A1, a program's own message not covered: ``DLL load failed while importing MPI: ...`` is
  mpi4py's MPI extension whose MPI runtime DLL (msmpi.dll, impi.dll) is not installed, and
  mpi4py 4's own ``cannot load MPI library`` (src/mpi4py/_mpiabi.py): ``library-missing``
  (mpi4py/mpi4py#374: installing Microsoft MPI fixed it); explain had only a guess by
  resemblance (``msvc-runtime-missing`` first).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import match_codes
from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# bash's file_error for a command given by a path (what sh -c prints under std::system)
BASH_NVCC = "sh: /usr/local/cuda/bin/nvcc: No such file or directory"
BASH_NVCC_LINE = "/bin/bash: line 1: /opt/cuda-11.8/bin/nvcc: No such file or directory"
# OpenMM CudaContext::createModule: "Error launching CUDA compiler: " << std::system's result
OPENMM = "Exception: Error launching CUDA compiler: 32512"
# CPython's Windows loader on mpi4py's MPI extension, English and zh_CN system text
MPI_DLL = "ImportError: DLL load failed while importing MPI: The specified module could not be found."
MPI_DLL_ZH = "ImportError: DLL load failed while importing MPI: 找不到指定的模块。"
# mpi4py 4.x _mpiabi._dlopen_libmpi
MPI_ABI = "RuntimeError: cannot load MPI library"

FAMILIES = {
    "nvcc-missing": [BASH_NVCC, BASH_NVCC_LINE, OPENMM],
    "library-missing": [MPI_DLL, MPI_DLL_ZH, MPI_ABI],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_cbio_cluster_node_without_cuda_link_names_nvcc_missing():
    # cBio/cbio-cluster#90 (the reporter's paste, OpenMM under an interactive cluster session)
    text = (
        "Hi, I'm encountering problems with the CUDA nvcc path when running some GPU-enabled code on certain nodes.\n"
        "I get the following error message:\n"
        "```\n"
        "Exception: Error launching CUDA compiler: 32512\n"
        "sh: /usr/local/cuda/bin/nvcc: No such file or directory\n"
        "```\n"
        'I\'m using an interactive session with tcsh, and with the "cuda/5.5" module loaded, $CUDA_HOME set to '
        "/usr/local/cuda-5.5, and /usr/local/cuda-5.5/bin included in $PATH.\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]


def test_openmm_compiler_status_alone_names_nvcc_missing():
    # the exception line as a Python traceback ends with it (the compiler's stderr cut off)
    text = (
        'Traceback (most recent call last):\n'
        '  File "simulate.py", line 12, in <module>\n'
        "    simulation.context.setPositions(pdb.positions)\n"
        "openmm.OpenMMException: Error launching CUDA compiler: 32512\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]


def test_mpi4py_windows_without_msmpi_names_library_missing():
    # mpi4py/mpi4py#374 (the whole report)
    text = 'win10\npython 3.8\nI had get\n"from mpi4py import MPI\n' + MPI_DLL_ZH + '"\n'
    assert _codes(text)[:1] == ["library-missing"]


@pytest.mark.parametrize("text", [
    # CUDA_HOME written as a path list: the env-path-unusable refinement, not this signature's own
    "sh: :/usr/local/cuda/bin/nvcc: No such file or directory",
    "/bin/sh: 1: :/usr/local/cuda-11.0:/usr/local/cuda-11.0/bin/nvcc: not found",
])
def test_cuda_home_list_keeps_env_path_unusable(text):
    assert _codes(text)[:1] == ["env-path-unusable"]


@pytest.mark.parametrize("text", [
    "bash: /opt/conda/bin/python: No such file or directory",
    "sh: /opt/kokkos/bin/nvcc_wrapper: No such file or directory",
    "sh: /usr/local/cuda/bin/nvcc-gcc: No such file or directory",
])
def test_other_programs_by_path_are_not_nvcc(text):
    assert "shell-cannot-run-nvcc-path" not in _ids(text)
    assert "nvcc-missing" not in _codes(text)


def test_openmm_other_exit_status_is_not_nvcc_missing():
    # 256 is the compiler's own exit status 1 (a compile error, cBio/cbio-cluster#98's cc1plus)
    # (explain may still guess it by resemblance to the corpus's OpenMM log: no signature reads it)
    assert "shell-cannot-run-nvcc-path" not in _ids("Error launching CUDA compiler: 256")
    assert "nvcc-missing" not in match_codes("Exception: Error launching CUDA compiler: 256")


@pytest.mark.parametrize("text", [
    # a procedure missing from the DLL is a DLL of another version, not a runtime not installed
    "ImportError: DLL load failed while importing MPI: The specified procedure could not be found.",
    # other extensions' DLL failures keep their own signatures
    "ImportError: DLL load failed while importing _C: The specified module could not be found.",
    "ImportError: DLL load failed while importing MPIWrapper: The specified module could not be found.",
])
def test_mpi4py_signature_reads_only_mpi4py_missing_runtime(text):
    assert "mpi4py-mpi-runtime-not-loadable" not in _ids(text)


def test_torch_c_dll_still_msvc_runtime():
    assert _codes("ImportError: DLL load failed while importing _C: The specified module could not be found.")[:1] == [
        "msvc-runtime-missing"]


# --- filesystem-locks-unavailable: a new explain-only root code (no corpus log yet; left undone
# in harv31d/harv32c's frame: cluster homes on NFS). ENOLCK as Python prints it from fcntl.
from test_explain_patterns import sourced_roots_test  # noqa: E402

ENOLCK = "OSError: [Errno 37] No locks available"
ENOLCK_REPR = "OSError(37, 'No locks available')"

test_lock_family_in_every_wrapper, test_lock_family_own_signature = family_tests(
    {"filesystem-locks-unavailable": [ENOLCK, ENOLCK_REPR]})
test_new_code_sourced = sourced_roots_test(["filesystem-locks-unavailable"])


def test_filelock_acquire_on_nfs_names_locks_unavailable():
    # py-filelock's UnixFileLock._acquire (vendored in datasets) interrupted by the user
    text = (
        ">>> ds = load_dataset('xsum')\n"
        "^CTraceback (most recent call last):\n"
        '  File "/home/u/.conda/envs/e/lib/python3.8/site-packages/filelock/_unix.py", line 39, in _acquire\n'
        "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        + ENOLCK + "\n"
    )
    assert _codes(text)[:1] == ["filesystem-locks-unavailable"]


@pytest.mark.parametrize("text", [
    # other errno values of a lock file keep their own causes
    "PermissionError: [Errno 13] Permission denied: '/home/u/.cache/huggingface/hub/.locks/x.lock'",
    "BlockingIOError: [Errno 11] Resource temporarily unavailable",
    "OSError: [Errno 38] Function not implemented",
    # another errno number with words that resemble it
    "OSError: [Errno 77] No locks available here",
])
def test_other_lock_errors_are_not_enolck(text):
    assert "enolck" not in _ids(text)
