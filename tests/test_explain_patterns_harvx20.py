"""harvx20: programs' own messages that no entry read (docs/dev/harvx20.md).

The batch schedulers' wall-time limit (Slurm's slurmstepd and its submission refusal, Torque/PBS,
LSF) is a cause of its own (``scheduler-time-limit``); their memory-limit kills are the host's
memory running out for the job (``host-oom-killed``); a bare ``No module named 'jaxlib'`` (jax
0.2.x imported jaxlib without its friendly message) is the library not installed. XLA's warning
that the driver is older than its ptxas stays the healthy notice kb5 made it (a rule for it was
measured and left out: docs/dev/harvx20.md). Each message is the program's own text (the ``source`` of each signature)
or a training-side thread's paste; every family runs through the wrappers pasted logs put around
lines, and each has near-misses that must stay unread.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests, sourced_roots_test

FAMILIES = {
    "scheduler-time-limit": [
        # slurmstepd req.c, as labsyspharm/mcmicro#163 pasted it
        "slurmstepd: error: *** JOB 13055114 ON compute-h-17-51 CANCELLED AT 2020-07-11T22:48:26 DUE TO TIME LIMIT ***",
        # srun's _timeout_handler (a step, not the whole job)
        "slurmstepd: error: *** STEP 494583.0 ON gpu-node-3 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
        # older slurmstepd, without the node
        "slurmstepd: error: *** JOB 602025 CANCELLED AT 2017-07-12T15:20:54 DUE TO TIME LIMIT ***",
        # slurm_errno.c ESLURM_INVALID_TIME_LIMIT through srun and sbatch
        "srun: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)",
        "sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)",
        # Torque mom_main.c and LSF's job report
        "=>> PBS: job killed: walltime 3623 exceeded limit 3600",
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
    ],
    "host-oom-killed": [
        # jobacct_gather common_jag.c _check_mem_limit, new and old step names (coqui-ai/STT#2238)
        "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
        "slurmstepd: error: StepId=1234.0 exceeded memory limit (34359738368 > 32212254720), being killed",
        "slurmstepd: error: Exceeded job memory limit",
        "slurmstepd: error: Exceeded step memory limit at some point.",
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
    ],
    "kernel-library-not-installed": [
        # jax 0.2.x jax/lib/__init__.py 'import jaxlib' (jax-ml/jax#6071)
        "ModuleNotFoundError: No module named 'jaxlib'",
        "ImportError: No module named jaxlib",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


test_new_root_is_sourced = sourced_roots_test(["scheduler-time-limit"])


def test_scheduler_time_limit_is_blocking_with_the_partition_limits_command():
    entry = assert_sourced_root("scheduler-time-limit")
    assert entry.severity == "blocking"
    assert "sinfo" in str(entry.commands)


def test_time_limit_quoted_in_prose_and_in_backticks():
    # capreolus-ir/capreolus#172 quotes srun's refusal in backticks inside a sentence
    text = ("However, I receive the error message:\n"
            "`srun: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)`\n")
    assert _codes(text)[:1] == ["scheduler-time-limit"]
    text = 'My job stops with "slurmstepd: error: *** JOB 42 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***" every night\n'
    assert _codes(text)[:1] == ["scheduler-time-limit"]


def test_time_limit_explains_the_launchers_sigterm():
    # torchrun reports the ranks the scheduler's SIGTERM ended; the time-limit line says why
    text = ("[2024-05-01 10:00:01,000] torch.distributed.elastic.agent.server.api: [WARNING] Received Signals.SIGTERM death signal, shutting down workers\n"
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 4242 got signal: 15\n"
            "slurmstepd: error: *** JOB 77 ON gpu-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n")
    expl = explain_text(text)
    assert [c.code for c in expl.candidates][:1] == ["scheduler-time-limit"]


def test_a_hang_that_ran_into_the_time_limit_still_shows_the_hang():
    # known limit (docs/dev/harvx20.md): a rank that waited in a collective until the time limit
    # is answered with the time limit first; the watchdog's symptom must stay listed beside it
    text = ("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.\n"
            "slurmstepd: error: *** JOB 77 ON gpu-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n")
    codes = _codes(text)
    assert "scheduler-time-limit" in codes
    assert {"nccl-allreduce-failed", "collective-hang"} & set(codes[1:])


def test_xla_driver_older_than_ptxas_stays_a_healthy_notice():
    # kb5 holds it healthy (slower compiles only); harvx20 measured a rule for it and left it out
    # (docs/dev/harvx20.md): the warning alone, even hard-wrapped, names nothing
    text = ("2022-12-16 18:31:30.311235: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:497] The NVIDIA driver's CUDA version is 11.\n"
            "0 which is older than the ptxas CUDA version (11.6.124). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, whic\n"
            "h may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.\n")
    assert "driver-too-old-for-build" not in _codes(text)


@pytest.mark.parametrize("line,code", [
    # a time limit that is only talked about, or set, is no failure
    ("#SBATCH --time=13-24:00:00 # days-hh:mm:ss", "scheduler-time-limit"),
    ("slurmstepd: error: *** JOB 7518 ON xantipa CANCELLED AT 2022-06-10T17:11:35 ***", "scheduler-time-limit"),
    ("slurmstepd: error: *** JOB 5 ON n2 CANCELLED AT 2024-01-01T00:00:00 DUE TO PREEMPTION ***", "scheduler-time-limit"),
    ("truncated (bool): the episode ended due to time limit, not failure", "scheduler-time-limit"),
    # other programs' memory limits, worded alike but with units or no kill
    ("Process worker exceeded memory limit (2048 MB > 1024 MB)", "host-oom-killed"),
    ("WASI execution exceeded memory limit (1048576 bytes)", "host-oom-killed"),
    # XLA's other ptxas warnings belong to other entries
    ("Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 8.9", "driver-too-old-for-build"),
    ("You are using ptxas 11.0.221, which is older than 11.1. ptxas before 11.1 is known to miscompile XLA code", "driver-too-old-for-build"),
    # a jaxlib submodule missing is a jax/jaxlib version mismatch, not jaxlib missing
    ("ModuleNotFoundError: No module named 'jaxlib.mlir.extras'", "kernel-library-not-installed"),
    ("ModuleNotFoundError: No module named 'jaxlib_plugin'", "kernel-library-not-installed"),
])
def test_near_misses_stay_unread(line, code):
    assert code not in match_codes(line)
