"""Preflight (stackpeel.require, check --require): on the real stack venv, against the
no-compiler fault, and with several real processes started as torchrun starts local ranks
(same parent, LOCAL_RANK/RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT/TORCHELASTIC_RUN_ID). The
marker plugin (tests/data/plugin_pkg, installed in ``plugin_venv``) writes one line per probe
run with the rank that ran it, which proves how many processes ran the checks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

import stackpeel
from conftest import no_compiler_path

pytestmark = pytest.mark.slow

NEEDS = "toolchain.extension_build,plugin.marker"

RANK = r"""
import json, os, sys
import stackpeel
try:
    r = stackpeel.require(*sys.argv[2].split(","), python=sys.argv[1], grace=float(os.environ.get("GRACE", "60")),
                          timeout=float(os.environ.get("WAIT", "900")))
    out = {"ok": True, "preflight": r.target["preflight"],
           "statuses": {x.id: x.status.value for x in r.results}}
except stackpeel.StackError as e:
    out = {"ok": False, "failed": list(e.failed), "message": str(e), "preflight": e.report.target["preflight"]}
print(json.dumps(out))
"""


def test_require_passes_on_what_works(stack_python, clean_env):
    report = stackpeel.require("toolchain.extension_build", python=stack_python, env=clean_env, reuse=False)
    assert report.result("toolchain.extension_build").status is stackpeel.Status.PASS
    # just the check and what it requires (multi_gpu.open_files since tmp26: ld under a low limit)
    assert {r.id for r in report.results} == {"config.compiler_environment", "toolchain.c_compiler",
                                             "toolchain.python_headers", "toolchain.temp_dir",
                                             "multi_gpu.open_files", "toolchain.extension_build"}
    assert report.target["preflight"]["role"] == "checked" and report.target["preflight"]["shared"] is False


def test_require_raises_one_error_with_the_root_cause_on_no_compiler(stack_python, nocc_env):
    with pytest.raises(stackpeel.StackError) as info:
        stackpeel.require("toolchain.extension_build", python=stack_python, env=nocc_env, reuse=False)
    err = info.value
    assert isinstance(err, RuntimeError) and err.failed == ("toolchain.extension_build",)
    assert err.exit_code == stackpeel.ExitCode.PROBLEMS
    text = str(err)
    assert text.startswith("stackpeel: the stack cannot run what this job requires: toolchain.extension_build")
    assert "BLOCKING ROOT CAUSE" in text and "no-c-compiler: No C compiler that Triton can find" in text
    assert "apt-get install -y gcc" in text
    assert [r.codes for r in err.report.diagnosis.blocking] == [("no-c-compiler",)]


def test_require_refuses_an_unknown_check_at_once(stack_python):
    with pytest.raises(ValueError, match="did you mean 'toolchain.extension_build'"):
        stackpeel.require("toolchain.extension_buld", python=stack_python)


def test_check_require_exit_codes(stack_python, clean_env, tmp_path):
    def run(*args, env):
        return subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", stack_python, "--no-color",
                               *args], capture_output=True, text=True, env=env, timeout=300)

    env = dict(clean_env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    ok = run("--require", "toolchain.extension_build", env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "toolchain.extension_build" in run("--require", "toolchain.extension_build", "-v", env=env).stdout
    bad = run("--require", "toolchain.extension_build", env=dict(env, PATH=no_compiler_path(tmp_path)))
    assert bad.returncode == 1 and "no-c-compiler" in bad.stdout
    assert run("--require", "toolchain.nope", env=env).returncode == 2


def rank_env(base, rank, world, run_id, port, marker, shared):
    env = dict(base, LOCAL_RANK=str(rank), RANK=str(rank), GROUP_RANK="0", LOCAL_WORLD_SIZE=str(world),
               WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=run_id,
               TORCHELASTIC_RESTART_COUNT="0", STACKPEEL_TEST_MARKER=str(marker), STACKPEEL_PREFLIGHT_DIR=str(shared))
    return env


def start(plugin_venv, stack_python, env, needs=NEEDS, **kw):
    return subprocess.Popen([str(plugin_venv / "bin" / "python"), "-c", RANK, stack_python, needs],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)


def outcome(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def marks(marker):
    return [line.split() for line in marker.read_text().splitlines()] if marker.exists() else []


@pytest.fixture
def job(clean_env, tmp_path):
    base = dict(clean_env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for k in ("SLURM_JOB_ID", "PMIX_NAMESPACE", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        base.pop(k, None)
    return {"base": base, "run_id": uuid.uuid4().hex, "port": 29500 + os.getpid() % 1000,
            "marker": tmp_path / "marks", "shared": tmp_path / "preflight"}


def ranks_env(job, rank, world=3, **extra):
    return dict(rank_env(job["base"], rank, world, job["run_id"], job["port"], job["marker"], job["shared"]), **extra)


def test_ranks_of_one_node_check_once_and_share_the_verdict(plugin_venv, stack_python, job):
    procs = [start(plugin_venv, stack_python, ranks_env(job, r)) for r in (2, 1, 0)]  # rank 0 last
    results = [outcome(p) for p in procs]
    assert [m[0] for m in marks(job["marker"])] == ["0"]  # one probe run, by local rank 0
    assert all(r["ok"] for r in results)
    assert len({json.dumps(r["statuses"], sort_keys=True) for r in results}) == 1
    assert results[0]["statuses"]["toolchain.extension_build"] == "pass"
    roles = {r["preflight"]["role"] for r in results[:2]}
    assert roles == {"waited"} and results[2]["preflight"]["role"] == "checked"
    assert all(r["preflight"]["by"]["local_rank"] == 0 for r in results)


def test_ranks_all_raise_the_same_root_cause_on_no_compiler(plugin_venv, stack_python, job, tmp_path):
    nocc = no_compiler_path(tmp_path)
    procs = [start(plugin_venv, stack_python, ranks_env(job, r, PATH=nocc)) for r in (0, 1, 2)]
    results = [outcome(p) for p in procs]
    assert len(marks(job["marker"])) == 1
    assert all(not r["ok"] and r["failed"] == ["toolchain.extension_build"] for r in results)
    assert len({r["message"] for r in results}) == 1 and "no-c-compiler" in results[0]["message"]


def test_a_crashed_rank_0_is_replaced_by_one_waiting_rank(plugin_venv, stack_python, job):
    first = start(plugin_venv, stack_python, ranks_env(job, 0, STACKPEEL_TEST_MARKER_SLEEP="120"),
                  start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marks(job["marker"]) and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.2)
        assert [m[0] for m in marks(job["marker"])] == ["0"], first.communicate(timeout=5)
        os.killpg(first.pid, signal.SIGKILL)  # rank 0 dies in the middle of its checks
        first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    others = [start(plugin_venv, stack_python, ranks_env(job, r)) for r in (1, 2)]
    results = [outcome(p) for p in others]
    lines = marks(job["marker"])
    assert len(lines) == 2 and lines[1][0] in ("1", "2")  # exactly one of them took over
    assert sorted(r["preflight"]["role"] for r in results) == ["checked", "waited"]
    assert all(r["ok"] for r in results)
    # the probe of the killed rank 0 did not outlive it
    assert not os.path.exists(f"/proc/{lines[0][1]}") or \
        open(f"/proc/{lines[0][1]}/stat").read().split()[2] == "Z"


def test_ranks_take_over_when_rank_0_never_comes(plugin_venv, stack_python, job):
    procs = [start(plugin_venv, stack_python, ranks_env(job, r, GRACE="1")) for r in (1, 2)]
    results = [outcome(p) for p in procs]
    assert len(marks(job["marker"])) == 1 and marks(job["marker"])[0][0] in ("1", "2")
    assert sorted(r["preflight"]["role"] for r in results) == ["checked", "waited"]


@pytest.mark.parametrize("env, rank, key", [
    ({"SLURM_JOB_ID": "812", "SLURM_STEP_ID": "0", "SLURM_LOCALID": "3"}, 3, "slurm:812.0.0"),
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "1", "PMIX_NAMESPACE": "prterun-n1-77@1"}, 1, "pmix:prterun-n1-77@1"),
    ({"LOCAL_RANK": "0", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}, 0, "master:10.0.0.1:29500"),
    ({"LOCAL_RANK": "x"}, None, None),
    ({}, None, None),
])
def test_launcher_variables(env, rank, key):
    from stackpeel.preflight import job_key, local_rank

    assert local_rank(env) == rank and job_key(env) == key


def test_torchrun_launches_differ_by_their_agent():
    from stackpeel.preflight import job_key

    env = {"TORCHELASTIC_RUN_ID": "none", "LOCAL_RANK": "0", "MASTER_PORT": "29500"}
    key = job_key(env)
    assert key.startswith("torchrun:none.0.29500:") and f":{os.getppid()}@" in key
    assert job_key(dict(env, TORCHELASTIC_RESTART_COUNT="1")) != key  # a restarted job checks again


def test_a_verdict_directory_another_user_could_write_is_not_used(plugin_venv, stack_python, job):
    """Each rank then checks alone: correct, only slower (a planted verdict is never read)."""
    job["shared"].mkdir(mode=0o777)
    os.chmod(job["shared"], 0o777)
    # each rank its own result cache: with one, the rank that finished first wrote results the
    # other could reuse, running no probe (the marker then held one rank: a race of the starts)
    procs = [start(plugin_venv, stack_python,
                   ranks_env(job, r, world=2, XDG_CACHE_HOME=str(job["marker"].parent / f"cache-{r}")))
             for r in (0, 1)]
    results = [outcome(p) for p in procs]
    assert sorted(m[0] for m in marks(job["marker"])) == ["0", "1"]
    assert all(r["ok"] and r["preflight"]["role"] == "checked" and not r["preflight"]["shared"] for r in results)
    assert list(job["shared"].iterdir()) == []


def test_real_torchrun_launches(stack_python, tmp_path, clean_env):
    """scenarios/gpu/preflight.sh, the GPU scenario, on this CPU machine with the stack venv's own
    torchrun (3 ranks): healthy, no compiler and a relaunch each have exactly one checking rank
    and one verdict for all (its job script: scenarios/gpu/preflight_job.py)."""
    from conftest import ROOT

    (tmp_path / "tmp").mkdir()  # torchrun's agent leaves its torchelastic_* folders there, not in /tmp
    env = dict(clean_env, NPROC="3", OUT=str(tmp_path / "out"), PREFLIGHT_CHECKS="toolchain.extension_build",
               XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp"))
    p = subprocess.run([str(ROOT / "scenarios" / "gpu" / "preflight.sh"), stack_python], capture_output=True,
                       text=True, env=env, timeout=600)
    summary = (tmp_path / "out" / "summary.txt").read_text().splitlines()
    assert p.returncode == 0, p.stdout + p.stderr
    assert [line.split()[:3] for line in summary] == [["PASS", "healthy:", "3"], ["PASS", "nocc:", "3"],
                                                      ["PASS", "again:", "3"]]
    nocc = [json.loads(line) for line in (tmp_path / "out" / "nocc.jsonl").read_text().splitlines()]
    assert sorted(r["role"] for r in nocc) == ["checked", "waited", "waited"]
    assert all(r["roots"] == [["no-c-compiler"]] and not r["ok"] for r in nocc)


def test_a_waiter_past_its_timeout_checks_by_itself(plugin_venv, stack_python, job):
    first = start(plugin_venv, stack_python, ranks_env(job, 0, STACKPEEL_TEST_MARKER_SLEEP="120"),
                  start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marks(job["marker"]) and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.2)
        second = start(plugin_venv, stack_python, ranks_env(job, 1, WAIT="2"))
        out, err = second.communicate(timeout=300)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ok"] and result["preflight"]["role"] == "checked" and result["preflight"]["shared"] is False
    assert [m[0] for m in marks(job["marker"])] == ["0", "1"]
    assert "no verdict from local rank 0 after 2 s" in err


def test_files_of_launches_long_over_are_swept(plugin_venv, stack_python, job):
    job["shared"].mkdir(mode=0o700)
    old, recent = job["shared"] / ("a" * 24 + ".json"), job["shared"] / ("b" * 24 + ".lock")
    for f in (old, recent):
        f.write_text("{}")
    os.utime(old, (time.time() - 13 * 3600,) * 2)
    outcome(start(plugin_venv, stack_python, ranks_env(job, 0, world=1)))
    assert not old.exists() and recent.exists()


def test_a_lock_that_cannot_be_opened_means_checking_here_not_waiting(stack_python, clean_env, tmp_path, capfd):
    import socket

    from stackpeel.preflight import _Files

    env = dict(clean_env, SLURM_JOB_ID="4242", SLURM_STEP_ID="0", SLURM_LOCALID="0",
               STACKPEEL_PREFLIGHT_DIR=str(tmp_path / "pf"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    (tmp_path / "pf").mkdir(mode=0o700)
    key = "|".join(("slurm:4242.0.0", socket.gethostname(), str(os.getuid()), os.path.realpath(stack_python),
                    "toolchain.extension_build", "1.0", "True"))
    os.mkdir(_Files(str(tmp_path / "pf"), key).lock_path)  # a directory where the lock file goes
    report = stackpeel.require("toolchain.extension_build", python=stack_python, env=env, timeout=600)
    assert report.target["preflight"]["role"] == "checked" and report.target["preflight"]["shared"] is False
    assert "cannot share the verdict" in capfd.readouterr().err


def test_an_unknown_check_reaches_every_rank_as_the_same_error(plugin_venv, stack_python, job):
    procs = [start(plugin_venv, stack_python, ranks_env(job, r, world=2), needs="toolchain.extension_buld")
             for r in (1, 0)]
    errors = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        errors.append(err.strip().splitlines()[-1])
        assert p.returncode == 1
    assert len(set(errors)) == 1 and "RegistryError: no check or layer named 'toolchain.extension_buld'" in errors[0]
    assert not job["marker"].exists()
