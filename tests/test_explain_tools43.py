"""tools43: explain's general readings from an audit of the training misses (docs/dev/tools43.md).

1. GPU names written glued or in lower case ("rtx2080ti", "a100-80g", "H100SXM5", "nvidia_a100")
   are read by knowledge/gpus.toml's lookup (``combinations.glued_pattern``) where the text itself
   says it is a GPU; a lone lower-case "p100" (a latency percentile) is not.
2. A crash stack whose top frames are libc's abort path (``__pthread_kill_implementation``,
   ``raise``, ``abort``; libstdc++'s terminate handler) names the first frame past that path when it
   is a GPU library's (``explain/stacks.py``, signature ``abort-path-frame-in-gpu-library``).
3. torchrun's ChildFailedError / ``failed (exitcode: 1)`` beside the worker's own earlier traceback,
   every worker status plain, gives way to that traceback: no launcher-worker-failed, no guess
   from the launcher's lines. A signal's status, or no traceback before it, keeps the launcher.
4. A version table's name cell pairs with the version in the next cell ("| torch | 2.1.0 |").
"""
from __future__ import annotations

import pytest

from stackpeel.combinations import facts_from_text, glued_pattern, gpus_in_line
from stackpeel.explain.stacks import MARK, abort_callers

from explain_helpers import TORCHRUN_CHILD_FAILED as CHILD, answer, codes


def entries(text: str) -> list:
    return [e.get("entry") for c in answer(text)["candidates"] for e in c["evidence"]]


# --------------------------------------------------------------------------- 1. GPU names


@pytest.mark.parametrize("line, cc", [
    ("NVIDIA GeForce RTX2080Ti", "7.5"),
    ("int4 on my rtx2080ti", "7.5"),
    ("GPU: rtx 4090", "8.9"),
    ("node has 8x H100SXM5", "9.0"),
    ("h100sxm nodes", "9.0"),
    ("a100-80g instance", "8.0"),
    ("a100 80gb", "8.0"),
    ("gpu_type=nvidia_a100_80gb", "8.0"),
    ("RTX3090 24G", "8.6"),
    ("GeForce GTX1080Ti", "6.1"),
    ("tesla-v100 x4", "7.0"),
    ("geforce rtx4060ti", "8.9"),
    ("quadro rtx6000", "7.5"),
])
def test_a_glued_or_lower_case_gpu_name_is_read(line, cc):
    assert cc in [c for _, c in gpus_in_line(line)], gpus_in_line(line)


@pytest.mark.parametrize("line", [
    "latency p50 12ms p100 40ms",
    "run a100 finished",
    "the 4090 tiger image",
    "/home/xavier/project",
    "origin/main",
    "shah100 commit",
    "bh1000 sensor",
])
def test_a_word_that_only_looks_like_a_gpu_is_none(line):
    assert gpus_in_line(line) == []


def test_names_written_as_the_vendor_does_keep_their_reading():
    assert gpus_in_line("Tesla V100-SXM2-32GB") == [("V100", "7.0")]
    assert gpus_in_line("NVIDIA A100-SXM4-80GB") == [("A100", "8.0")]
    assert gpus_in_line("NVIDIA RTX 5000 Ada Generation") == [("RTX 5000 Ada", "8.9")]
    assert [c for _, c in gpus_in_line("NVIDIA GeForce RTX 2080 Ti")] == ["7.5"]


def test_a_pattern_of_words_alone_gets_no_glued_spelling():
    assert glued_pattern(r"\bOrin\b") is None
    assert glued_pattern(r"TITAN X\b(?! \(Pascal)(?!p)") is None
    assert glued_pattern(r"RTX 20[6-8]0\b") == r"(?i)RTX[ _-]?20[6-8]0(?![0-9])"


@pytest.mark.parametrize("wrap", ["{}", "> {}", "[rank0]: {}", "2024-05-01 10:00:00 INFO {}"])
def test_a_log_that_names_a_glued_gpu_has_it_among_its_facts(wrap):
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
            "RuntimeError: CUDA error: named symbol not found\n" + wrap.format("running int4 on my rtx2080ti") + "\n")
    facts = answer(text)["facts"]
    assert any("2080" in g for g in facts.get("gpus", [])), facts


# --------------------------------------------------------------------------- 2. abort path

SYSTEMD = """Aborted (core dumped)
           PID: 4321 (python3)
       Message: Process 4321 (python3) of user 1000 dumped core.

                Stack trace of thread 4321:
                #0  0x00007f1a2b29e9fc __pthread_kill_implementation (libc.so.6 + 0x969fc)
                #1  0x00007f1a2b24a476 raise (libc.so.6 + 0x42476)
                #2  0x00007f1a2b2307f3 abort (libc.so.6 + 0x287f3)
                #3  0x00007f19e4c1a2b3 n/a ({lib} + 0x21a2b3)
                #4  0x00007f19e4d0b8c1 n/a (libtorch_cuda.so + 0x30b8c1)
"""
GDB = """Thread 1 "python" received signal SIGABRT, Aborted.
(gdb) bt
#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=140737352595264) at ./nptl/pthread_kill.c:44
#1  __pthread_kill_internal (signo=6, threadid=140737352595264) at ./nptl/pthread_kill.c:78
#2  __GI___pthread_kill (threadid=140737352595264, signo=signo@entry=6) at ./nptl/pthread_kill.c:89
#3  0x00007ffff7c42476 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26
#4  0x00007ffff7c287f3 in __GI_abort () at ./stdlib/abort.c:79
#5  0x00007ffff7aa2b9e in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6
#6  0x00007ffff7aae20c in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6
#7  0x00007fffd1e8a1c3 in ?? () from /usr/lib/x86_64-linux-gnu/{lib}
#8  0x00007fffd1e8b2c4 in ?? () from /usr/lib/x86_64-linux-gnu/libpython3.10.so.1.0
"""


@pytest.mark.parametrize("lib", ["libcuda.so.1", "libnvidia-glcore.so.535.104.05", "libcudnn_ops_infer.so.8",
                                 "libnccl.so.2", "libtorch_cuda.so"])
@pytest.mark.parametrize("record", [SYSTEMD, GDB])
def test_the_first_frame_past_the_abort_path_in_a_gpu_library_is_named(record, lib):
    d = answer(record.replace("{lib}", lib))
    first = d["candidates"][0]
    assert first["code"] == "native-crash-in-gpu-library"
    ev = [e for e in first["evidence"] if e["entry"] == "abort-path-frame-in-gpu-library"]
    assert ev and lib.split(".so")[0] in ev[0]["text"] and MARK not in ev[0]["text"]


@pytest.mark.parametrize("prefix", ["Dec 07 10:00:00 host systemd-coredump[99]: ", "> ", "    "])
def test_a_prefixed_stack_is_read_too(prefix):
    text = "\n".join(prefix + ln if ln.strip().startswith("#") else ln for ln in SYSTEMD.replace("{lib}", "libcuda.so.1").splitlines())
    assert "abort-path-frame-in-gpu-library" in entries(text)


@pytest.mark.parametrize("lib", ["libpython3.10.so.1.0", "libmyplugin.so", "libtorch_cpu.so"])
def test_an_abort_called_from_another_module_names_no_gpu_library(lib):
    assert "abort-path-frame-in-gpu-library" not in entries(SYSTEMD.replace("{lib}", lib))
    assert "abort-path-frame-in-gpu-library" not in entries(GDB.replace("{lib}", lib))


def test_an_idle_thread_waiting_in_libc_with_libcuda_below_is_not_the_abort():
    text = """Process 4321 (python3) of user 1000 dumped core.
                Stack trace of thread 4330:
                #0  0x00007f1a2b31bd7f __poll (libc.so.6 + 0x11bd7f)
                #1  0x00007f19e4c1a2b3 n/a (libcuda.so.1 + 0x21a2b3)
                #2  0x00007f1a2b294ac3 start_thread (libc.so.6 + 0x94ac3)
"""
    assert "abort-path-frame-in-gpu-library" not in entries(text)
    lines = text.splitlines()
    assert abort_callers(lines, range(len(lines))) == []


def test_a_live_backtrace_without_a_crash_is_not_read():
    text = GDB.replace("{lib}", "libcuda.so.1").replace('Thread 1 "python" received signal SIGABRT, Aborted.\n', "")
    text = text.replace("(gdb) bt\n", "(gdb) thread apply 1 bt\n")
    assert "abort-path-frame-in-gpu-library" not in entries(text)


def test_a_stack_whose_numbers_break_is_two_stacks():
    lines = ["#0  0x00007f1a2b29e9fc raise (libc.so.6 + 0x969fc)",
             "#5  0x00007f19e4c1a2b3 n/a (libcuda.so.1 + 0x21a2b3)"]
    assert abort_callers(lines, [0, 1]) == []
    lines[1] = lines[1].replace("#5", "#1")
    assert abort_callers(lines, [0, 1]) == [1]


# --------------------------------------------------------------------------- 3. launcher


def test_the_workers_own_unknown_traceback_is_not_hidden_by_the_launcher():
    d = answer(CHILD.format(child="ValueError: the config wants 3 stages, got 2", status=1))
    assert [c["code"] for c in d["candidates"]] == []
    assert d["exit_code"] != 0 and d["fingerprint"]
    assert any("ValueError" in u["text"] for u in d["unexplained"])


def test_the_workers_own_known_traceback_names_its_cause():
    text = CHILD.format(child="RuntimeError: CUDA error: no kernel image is available for execution on the device", status=1)
    assert codes(text)[0] == "torch-arch-not-supported"
    assert "launcher-worker-failed" not in codes(text)[:1]


@pytest.mark.parametrize("status", ["-9", "-7", "-11", "137"])
def test_a_signal_status_keeps_the_launchers_reading(status):
    text = CHILD.format(child="ValueError: the config wants 3 stages, got 2", status=status)
    assert "launcher-worker-failed" in codes(text)[:1] or codes(text)[0] in (
        "host-oom-killed", "dataloader-shm-too-small", "nccl-shm-too-small", "native-crash-in-gpu-library")


def test_the_launchers_summary_alone_still_names_the_launcher():
    text = CHILD.format(child="", status=1).split("ERROR:torch", 1)[1]
    assert codes("ERROR:torch" + text)[0] == "launcher-worker-failed"


def test_a_summary_without_a_status_keeps_the_launcher():
    text = CHILD.format(child="ValueError: bad", status=1).replace("  exitcode  : 1 (pid: 1234)\n", "")
    text = text.replace("failed (exitcode: 1) ", "failed ")
    assert "launcher-worker-failed" in codes(text)


# --------------------------------------------------------------------------- 4. version tables


@pytest.mark.parametrize("text, want", [
    ("| Package | Version |\n|---|---|\n| torch | 2.1.0 |\n| transformers | 4.36.2 |\n",
     {"torch": "2.1.0", "transformers": "4.36.2"}),
    ("| torch | `2.3.1` |\n", {"torch": "2.3.1"}),
    ("\u2502 torch        \u2502 2.4.0 \u2502\n", {"torch": "2.4.0"}),
    ("torch      2.1.0\nflash-attn 2.5.0\n", {"torch": "2.1.0", "flash-attn": "2.5.0"}),
])
def test_a_name_cell_pairs_with_the_next_cells_version(text, want):
    vs = dict(facts_from_text(text).versions)
    assert {k: vs.get(k) for k in want} == want


@pytest.mark.parametrize("text", ["| torch | cuda | 12.1 |\n", "| torch | yes |\n"])
def test_a_name_cell_two_cells_from_a_number_pairs_with_nothing(text):
    assert "torch" not in facts_from_text(text).versions
