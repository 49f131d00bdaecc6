"""Issue 8: "no log with an error line answered with 'No known problem'" (clean35).

Each error shape below is printed by a real program (its source is named); before clean35
explain answered each of them "No known problem found" (exit 0, no candidate). Now each gets at
least an unknown (its fingerprint) or a ranked guess. The near misses beside them are healthy
lines that carry the same words (a count of none, a setting, an option's help, code that prints
an error) and must stay silent. Every case is a short log: a line of progress, then the line.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text

PRE = "Loading model...\nstep 1/10 done\n"


def answer(line: str) -> str:
    expl = explain_text(PRE + line + "\n")
    if expl.candidates:
        return "ranked"
    return "unknown" if int(expl.exit_code) else "silent"


ERROR_SHAPES = [
    # lower- and mixed-case level tags (Node's and Rust's loggers, test runners, init systems)
    "[error] model weights mismatch",
    "[Fatal] cannot continue",
    "[FAIL] test_forward",
    # Python's exception groups (3.11+) and StopAsyncIteration, alone as pasted
    "ExceptionGroup: errors in task group (2 sub-exceptions)",
    "BaseExceptionGroup: boom (1 sub-exception)",
    "StopAsyncIteration: done",
    # a C++ program's "exception: ..." and an uncaught one
    "exception: file is corrupt",
    "caught exception: bad alloc",
    "uncaught exception: bad alloc",
    "Uncaught ReferenceError: foo is not defined",
    # unittest's verbose verdict, Click's Abort, a program aborting
    "test_forward (tests.test_model.ModelTest) ... FAIL",
    "test_forward (tests.test_model.ModelTest) ... ERROR",
    "Aborted!",
    "Aborting!",
    # Rust's stack overflow, std::bad_alloc, Open MPI's signal report, Lua, GStreamer, systemd
    "thread 'main' has overflowed its stack",
    "std::bad_alloc",
    "[node01:12345] Failing at address: (nil)",
    "stack traceback:",
    "WARNING: erroneous pipeline: no element \"nvh264enc\"\nNo such element or plugin 'nvh264enc'",
    "nvidia-docker.service: Main process exited, code=exited, status=1/FAILURE",
    "python.service: Main process exited, code=dumped, status=11/SEGV",
    # Go's lower-case strerror texts (syscall.Errno), Windows' and other programs' refusals
    "2024/01/01 12:00:00 open config.yaml: no such file or directory",
    "dial unix /var/run/docker.sock: connect: permission denied",
    "write /data/out.bin: no space left on device",
    "Access is denied.",
    "Access denied",
    "ERROR 1045: Access denied for user 'root'@'localhost'",
    "denied: requested access to the resource is denied",
    # a panic in words, an HTTP failure status, a web UI's toast, a server's 5xx answer
    "the worker panicked",
    "Kernel panic - not syncing: Fatal exception",
    "Error 500",
    "request failed: status code 503",
    "Something went wrong",
    'INFO:     127.0.0.1:54321 - "POST /generate HTTP/1.1" 500 Internal Server Error',
    # torch 0.x and other CUDA wrappers
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=100 : no CUDA-capable device is detected",
    "Cuda error 10 in file 'cuda_common.cu' in line 123: invalid device ordinal.",
    # European words for an error
    "Fehler: Datei nicht gefunden",
    "Erreur : fichier introuvable",
    "Errore: file non trovato",
    "Erro: arquivo n\u00e3o encontrado",
    "B\u0142\u0105d: nie znaleziono pliku",
    # an issue's words
    "ComfyUI crashes when loading the model",
    "The tests are failing",
    "exception when loading the checkpoint",
    "I can't install flash-attn on Windows",
    "can't start",
    "the program aborts",
    "Here is the traceback",
    "It throws exceptions",
    "model loading is broken",
    "the output is invalid",
    "I got a segfault",
    "The training process was directly killed by the system",
    "Process killed",
]

HEALTHY_NEAR_MISSES = [
    "0 errors",
    "Compiled with 0 errors and 2 warnings",
    "no error",
    "No errors found.",
    "error_count=0",
    "error count: 0",
    "errors=0",
    "errors: []",
    '"error": null',
    "failed=0",
    "Not found: 0",
    "--on-error=continue",
    "  --on-error ACTION     what to do on error",
    "ignore errors",
    "pip install --ignore-errors foo",
    "ignore_errors = True",
    "Tests: 10 passed, 0 failed",
    "# if this fails, try again",
    '    print("error:", e)',
    "    log('Error:' + msg)",
    "Loss: 0.123, error rate 0.01",
    "top-1 error: 23.1",
    "timeout=30",
    "Process finished with exit code 0",
    "python.service: Main process exited, code=exited, status=0/SUCCESS",
    'INFO:     127.0.0.1:54321 - "GET /favicon.ico HTTP/1.1" 404 Not Found',
    "the crashes are gone",
    "fixes crashes on exit",
    "Crash reporting disabled",
    "if something went wrong, check the logs",
    # (test_explain_apps25: a sentence about the words, no shell's failure)
    "run chmod +x train.sh to fix the Permission denied",
    "Permission denied checks are skipped",
    # (test_explain_patterns_sweepj)
    "no CUDA exception was raised during setup",
]


@pytest.mark.parametrize("line", ERROR_SHAPES)
def test_a_real_error_shape_is_never_answered_silently(line):
    assert answer(line) != "silent", line


@pytest.mark.parametrize("line", HEALTHY_NEAR_MISSES)
def test_a_healthy_line_with_the_same_words_stays_silent(line):
    assert answer(line) == "silent", line


def test_a_healthy_log_around_the_near_misses_stays_silent():
    # the near misses together, as a success log prints them, are still no problem
    expl = explain_text(PRE + "\n".join(HEALTHY_NEAR_MISSES) + "\nDone.\n")
    assert not expl.candidates and int(expl.exit_code) == 0, [e.text for e in expl.unexplained]


def test_an_error_shape_after_the_near_misses_is_read():
    # ... and one error line among them is read (the near misses do not hide it)
    expl = explain_text(PRE + "\n".join(HEALTHY_NEAR_MISSES) + "\n[error] model weights mismatch\n")
    assert int(expl.exit_code) == 1
    assert any("model weights mismatch" in e.text for e in expl.unexplained) or expl.candidates
