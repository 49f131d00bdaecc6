"""Harvest harvt: install-time and environment failures (docs/dev/harvest-harvt.md).

New codes: ``install-dir-unwritable`` (pip, conda or uv may not write the environment they
install into) and ``mpi-not-cuda-aware`` (an MPI without CUDA support given device buffers);
``rendezvous-port-in-use`` widened to servers whose port is taken (vLLM/SGLang through
uvicorn, gradio, Ray). Each message is the program's own text (source cited per line), in the
form users' pastes show it.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import family_tests

FAMILIES = {
    "install-dir-unwritable": [
        # pip/_internal/commands/install.py create_os_error_message (EACCES)
        "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
        "'/usr/local/lib/python3.10/dist-packages/torch-2.1.0.dist-info'",
        # before pip 21 the same function said EnvironmentError
        "ERROR: Could not install packages due to an EnvironmentError: [Errno 13] Permission denied: "
        "'/Library/Python/2.7/site-packages/urllib3-1.25.7.dist-info'",
        # EROFS on a read-only image or mount
        "ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file system: "
        "'/opt/conda/lib/python3.11/site-packages/numpy'",
        # conda/exceptions.py
        "EnvironmentNotWritableError: The current user does not have write permissions to the target environment.",
        "NotWritableError: The current user does not have write permissions to a required path.",
        "NoWritablePkgsDirError: No writeable pkgs directories configured.",
        # WinError 5 on a directory of an all-users install (Comfy-Org/ComfyUI-Manager#1667)
        "ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: "
        "'C:\\\\ProgramData\\\\anaconda3\\\\envs\\\\ml\\\\Lib\\\\site-packages\\\\numpy'",
        # uv (fs-err + io::Error on one line, astral-sh/uv#15691)
        "error: failed to create directory `/usr/local/lib/python3.10/site-packages/torch`: Permission denied (os error 13)",
    ],
    "mpi-not-cuda-aware": [
        # torch/csrc/distributed/c10d/ProcessGroupMPI.cpp checkSingleTensorHelper
        "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
        # Open MPI 2-4 help text (conda-forge/openmpi-feedstock#83)
        "The user requested CUDA support with the --mca mpi_cuda_support 1 flag\n"
        "but the library was not compiled with any support.",
        # Open MPI FAQ's check program; FluxMPI.jl's warning
        "This MPI library does not have CUDA-aware support.",
        "Warning: MPI Implementation is not CUDA Aware.",
    ],
    "rendezvous-port-in-use": [
        # CPython asyncio/base_events.py create_server, as uvicorn logs it (vLLM, SGLang)
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
        "ERROR:    [Errno 10048] error while attempting to bind on address ('0.0.0.0', 8000): only one usage "
        "of each socket address (protocol/network address/port) is normally permitted",
        # gradio/networking.py
        "OSError: Cannot find empty port in range: 7860-7860. You can specify a different port by setting "
        "the GRADIO_SERVER_PORT environment variable or passing the `server_port` parameter to `launch()`.",
        # gradio 3.x networking.py
        "OSError: All ports from 7860 to 7959 are in use. Please close a port.",
        "OSError: Port 7860 is in use. If a gradio.Blocks is running on the port, you can close() it or gradio.close_all().",
        # ray/_private/node.py
        "ValueError: Ray component gcs_server is trying to use a port number 6379 that is used by other components.",
        # socket.bind
        "OSError: [Errno 98] Address already in use",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_pip_out_of_space_and_windows_locked_file_are_not_permissions():
    assert "install-dir-unwritable" not in match_codes(
        "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device")
    # WinError 5 is mostly a DLL a running Python holds open; pip adds the --user advice to it too
    text = ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: "
            "'C:\\\\Python311\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll'\n"
            "Consider using the `--user` option or check the permissions.")
    assert "install-dir-unwritable" not in match_codes(text)
    # ... also under an all-users install when it is a module Python has loaded
    assert "install-dir-unwritable" not in match_codes(
        "ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: "
        "'C:\\\\ProgramData\\\\anaconda3\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll'")


def test_uv_permission_denied_outside_an_environment_is_not_read():
    # a temporary file uv cannot write says nothing about the target environment
    assert "install-dir-unwritable" not in match_codes(
        'error: Permission denied (os error 13) at path "/var/folders/sk/1rps9wzs79/T/.tmpjKWSI5"')


def test_mpi_words_without_the_refusal_are_not_read():
    assert "mpi-not-cuda-aware" not in match_codes("This MPI library has CUDA-aware support.")
    assert "mpi-not-cuda-aware" not in match_codes(
        "The user requested CUDA support with the --mca mpi_cuda_support 0 flag")


def test_a_bind_refused_for_another_reason_is_not_a_port_in_use():
    # asyncio's same wording with EACCES (a port below 1024 without privileges)
    assert "rendezvous-port-in-use" not in match_codes(
        "ERROR:    [Errno 13] error while attempting to bind on address ('0.0.0.0', 80): permission denied")


def test_a_free_port_search_that_succeeds_is_not_read():
    assert "rendezvous-port-in-use" not in match_codes("Running on local URL:  http://127.0.0.1:7860")
    assert "rendezvous-port-in-use" not in match_codes(
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
