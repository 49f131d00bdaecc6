"""A run the user stopped with Ctrl+C is no failure (fix32): when a KeyboardInterrupt is the log's
last exception and no error precedes it, explain names the interruption and guesses no cause
(no resemblance, no words); a real error before it (or raised while handling it) is still the
failure to explain. The tracebacks are real: a Python process interrupted by SIGINT here."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.render import render

WAIT = """
import signal, sys, time
# a shell's background job starts with SIGINT ignored, and Python then leaves it ignored: take
# Ctrl+C's default handler back so the signal raises KeyboardInterrupt wherever the tests run
signal.signal(signal.SIGINT, signal.default_int_handler)
def wait_for_batch():
    print("ready", flush=True)
    time.sleep(60)
def train():
    wait_for_batch()
{body}
"""


def interrupted_run(body: str = "train()") -> str:
    """stderr of a real Python process that was sent SIGINT (what Ctrl+C sends) while it waited,
    with the shell's report of its exit status."""
    proc = subprocess.Popen([sys.executable, "-c", WAIT.format(body=body)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert "KeyboardInterrupt" in err
    return ("{'loss': 1.8412, 'learning_rate': 1.9e-05, 'epoch': 0.12}\n" + err
            + f"\nProcess finished with exit code 130 (interrupted by signal 2: SIGINT)\n")


def test_a_run_stopped_with_ctrl_c_is_named_and_no_cause_is_guessed():
    log = interrupted_run()
    expl = explain_text(log)
    assert expl.candidates == () and expl.interrupted is not None
    assert expl.interrupted.text == "KeyboardInterrupt" and not expl.has_errors
    assert expl.fingerprint is None and expl.unexplained == ()
    assert any("wait_for_batch when it stopped" in n for n in expl.notes)   # where it was
    text = render(expl, "text")
    assert text.splitlines()[2].startswith("Interrupted: the run was stopped by the user")
    assert "Possible causes" not in text and "Unknown error" not in text
    data = json.loads(render(expl, "json"))
    assert data["interrupted"]["line"] == expl.interrupted.line and data["root_cause"] is None
    assert "**Interrupted**" in render(expl, "markdown")


def test_another_exception_in_the_same_place_is_no_interruption():
    """The same traceback ending in another exception is a failure to explain."""
    log = interrupted_run()
    other = explain_text(log.replace("KeyboardInterrupt", "TimeoutError: batch never came"))
    assert other.interrupted is None and other.has_errors


@pytest.mark.parametrize("body", [
    # an error, then Ctrl+C while handling it: Python prints both, chained
    "try:\n    raise RuntimeError('CUDA error: an illegal memory access was encountered')\n"
    "except RuntimeError:\n    train()",
])
def test_a_real_error_before_the_interruption_is_still_explained(body):
    log = interrupted_run(body)
    assert "During handling of the above exception" in log
    expl = explain_text(log)
    assert expl.interrupted is None and expl.has_errors
    assert [c.code for c in expl.candidates][:1] == ["cuda-error-unclassified"]


def test_an_error_line_before_the_interruption_is_still_a_failure():
    log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + interrupted_run()
    expl = explain_text(log)
    assert expl.interrupted is None and expl.candidates


def test_several_workers_interrupted_together_are_one_interruption():
    """A pool's workers each print their KeyboardInterrupt: still only an interruption."""
    log = interrupted_run()
    tb = log[log.index("Traceback"):log.index("KeyboardInterrupt") + len("KeyboardInterrupt")]
    expl = explain_text(log.replace(tb, tb + "\n" + tb))
    assert expl.interrupted is not None and expl.candidates == ()


@pytest.mark.parametrize("status", [
    "Process finished with exit code 130 (interrupted by signal 2: SIGINT)",   # PyCharm, VS Code
])
def test_a_ctrl_c_status_alone_is_an_interruption(status):
    """(Windows' STATUS_CONTROL_C_EXIT alone is no error line at all: tests/test_explain_review31.py)"""
    expl = explain_text("epoch 3 done\n" + status + "\n")
    assert expl.candidates == () and not expl.has_errors
    assert expl.interrupted is not None and expl.interrupted.line == 2
    assert "Interrupted:" in render(expl, "text") and "Interrupted:" in render(expl, "html")


def test_a_kill_report_is_no_interruption():
    expl = explain_text("epoch 3 done\nProcess finished with exit code 137 (interrupted by signal 9: SIGKILL)\n")
    assert expl.interrupted is None
