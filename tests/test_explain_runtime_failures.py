"""A failure reported by a launcher or a runtime is a failure, and a runtime's generic words are
no resemblance (issue 8 item 3: "No known problem" only when the log holds no error; apps24).

Real text: text-generation-inference's launcher (launcher/src/main.rs, ``tracing::error!("Shard
{rank} failed to start")``, ``"Shard {rank} crashed"``, ``"Webserver Crashed"``), Windows' NTSTATUS
exit codes as shells and IDEs print them, and Rust's panic line
(``thread 'main' panicked at src/main.rs:10:5:``). Each is tried as printed, behind the prefixes
logs add, and against near misses that hold the same words and report no failure.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text

FAILURES = [
    "2024-05-01T10:00:00.000000Z ERROR text_generation_launcher: Shard 0 failed to start",
    "Shard 0 failed to start",
    "Shard 3 crashed",
    "Webserver Crashed",
    "Process finished with exit code 0xC0000005",
    "exited with code 0xC0000409",
]
PREFIXES = ["", "[rank3]: ", "2024-05-01 10:00:00,123 ", "(Worker pid=4242) "]

#: near misses: the same words, nothing failed
HEALTHY = [
    "12 passed, 0 failed in 3.21s",
    "Summary: errors = 0",
    "Process finished with exit code 0",
    "exited with code 0x0",
    "tests/test_exception_handling.py::test_exception_handling PASSED",
    "vm.panic_on_oom = 0",
    "Tests Crashed: 0",
    "Total Crashed 0 of 12",
]


def answer(text: str):
    return explain_text(text + "\n")


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", FAILURES)
def test_a_launchers_or_runtimes_failure_is_never_silence(line, prefix):
    rep = answer(prefix + line)
    assert rep.exit_code != 0, (prefix + line, rep.exit_code)


@pytest.mark.parametrize("line", HEALTHY)
def test_the_same_words_reporting_nothing_failed_stay_quiet(line):
    rep = answer(line)
    assert rep.exit_code == 0 and not rep.candidates, (line, [c.code for c in rep.candidates])


def test_a_rust_panic_line_alone_is_no_guess_by_resemblance():
    # it shared 'thread', 'main', 'panicked', 'src' with a cudarc thread and was answered
    # wsl-libcuda-not-linked: a runtime's own words name no cause
    rep = answer("thread 'main' panicked at src/main.rs:10:5:")
    assert rep.exit_code != 0
    assert not any(c.basis == "similar" for c in rep.candidates), [(c.code, c.basis) for c in rep.candidates]


def test_a_panic_naming_the_gpu_stack_is_still_read():
    # the runtime's words are dropped from the resemblance, the GPU stack's are kept
    rep = answer("thread 'main' panicked at src/main.rs:10:5:\n"
                 "called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")")
    assert rep.candidates, "a CUDA driver status in a Rust panic names a cause"
