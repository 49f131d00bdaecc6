"""A file-size limit (RLIMIT_FSIZE, ``ulimit -f``) the job inherits: check measures it, names it as
the cause of probes that could not be written or answer under it, and says how far the job may
raise it. Real limits (bash ``ulimit -f``), real child processes, the real stack venv; the
explain side (EFBIG, SIGXFSZ) is in tests/test_explain_lead28.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.checks.base import Context
from stackpeel.checks.system import FSIZE_TOOLS_MIN, FileSizeLimit
from stackpeel.model import ProbeFailure, Severity

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def _check(limit_cmd: str, tmp_path: Path, stack: str, only: str = "") -> dict:
    cmd = (f"{limit_cmd}; exec {sys.executable} -m stackpeel check --fresh --format json --no-plugins "
           f"--python {stack}" + (f" --only {only}" if only else ""))
    # the report goes to a pipe, which no file-size limit bounds
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _result(report: dict, cid: str) -> dict:
    return next(r for r in report["results"] if r["id"] == cid)


def _commands(finding: dict) -> list:
    return [c["command"] for c in finding["remedy"]["commands"]]


def test_no_limit_passes(tmp_path, stack_python):
    report = _check("ulimit -f unlimited", tmp_path, stack_python, "system.file_size_limit")
    res = _result(report, "system.file_size_limit")
    assert res["status"] == "pass", res
    assert (res["facts"]["soft"], res["facts"]["hard"]) == (None, None)
    assert report["target"]["fsize"] == [-1, -1]


def test_a_limit_larger_than_the_stacks_own_files_warns_for_checkpoints(tmp_path, stack_python):
    report = _check("ulimit -Sf 4194304", tmp_path, stack_python, "system.file_size_limit")   # 4 GiB in 1024-byte blocks
    res = _result(report, "system.file_size_limit")
    assert res["status"] == "warn", res
    assert res["facts"]["soft"] == 4 << 30
    (f,) = res["findings"]
    assert f["code"] == "file-size-limit" and f["severity"] == "degraded"
    assert "4.0 GiB" in f["message"] and "no file larger" in f["message"]
    assert _commands(f)[1].startswith("ulimit -f unlimited ")
    assert report["diagnosis"]["blocking"] == []


def test_a_limit_below_any_checkpoint_is_blocking_and_the_command_stops_at_the_hard_limit(tmp_path, stack_python):
    report = _check("ulimit -Sf 1024; ulimit -Hf 8192", tmp_path, stack_python, "system.file_size_limit")
    res = _result(report, "system.file_size_limit")
    assert res["status"] == "fail", res
    assert (res["facts"]["soft"], res["facts"]["hard"]) == (1 << 20, 8 << 20)
    assert 1 << 20 < FSIZE_TOOLS_MIN
    (f,) = res["findings"]
    assert f["severity"] == "blocking" and "1.0 MiB (hard 8.0 MiB)" in f["message"]
    assert _commands(f)[1].startswith("ulimit -f 8192 ")
    assert [r["check"] for r in report["diagnosis"]["blocking"]] == ["system.file_size_limit"]


def test_at_a_limit_of_zero_every_check_that_could_not_answer_is_the_limits(tmp_path, stack_python):
    """Under ``ulimit -f 0`` stackpeel cannot write one probe's input: before this check every result
    was 'could not complete: OSError: [Errno 27] File too large' and nothing said why."""
    report = _check("ulimit -f 0", tmp_path, stack_python)
    own = _result(report, "system.file_size_limit")
    assert own["status"] == "error" and "[Errno 27] File too large" in own["failure"]["detail"], own
    assert [f["code"] for f in own["findings"]] == ["file-size-limit"]
    assert own["findings"][0]["severity"] == "blocking"
    # the job cannot raise a hard limit of 0 itself: no `ulimit -f N` command that would fail
    assert _commands(own["findings"][0]) == ["ulimit -f; df -T .   # default unlimited; vfat (FAT32): files < 4 GiB"]
    assert [r["check"] for r in report["diagnosis"]["blocking"]] == ["system.file_size_limit"]
    died = [r for r in report["results"] if r["status"] == "error" and r["id"] != "system.file_size_limit"]
    assert died, "every probe is written to a file first"
    for r in died:
        assert [f["code"] for f in r["findings"]] == ["file-size-limit"], r
        assert r["findings"][0]["severity"] == "info"
    assert report["diagnosis"]["errors"] == [], report["diagnosis"]["errors"]


# -- the judgement of a probe that gave no answer, on its own -----------------------------------

def _ctx(fsize):
    return Context({}, {"fsize": fsize}, {}, {})


EFBIG = ProbeFailure("spawn", detail="OSError: [Errno 27] File too large")


@pytest.mark.parametrize("failure, fsize, named", [
    (EFBIG, [0, 0], True),
    (EFBIG, [1 << 20, -1], True),
    # killed by SIGXFSZ (a program that does not ignore it, unlike Python)
    (ProbeFailure("signal", signal=25, detail="probe killed by signal 25"), [1 << 20, -1], True),
    # EFBIG with no limit: a file system's largest file, which this check does not measure
    (EFBIG, [-1, -1], False),
    # another death under a limit: not the limit's
    (ProbeFailure("exit", exit_code=70, detail="exited with status 70"), [0, 0], False),
    # stackpeel's own fault
    (ProbeFailure("evaluate-exception", detail="OSError: [Errno 27] File too large"), [0, 0], False),
    # a report recorded before the limit was (a replay of an older run)
    (EFBIG, None, False),
])
def test_a_probe_that_could_not_answer_is_the_limits_only_when_it_hit_it(failure, fsize, named):
    check = FileSizeLimit()
    own = check.on_failure(failure, _ctx(fsize))
    other = check.explain_death(failure, _ctx(fsize))
    assert bool(own) is named and bool(other) is named
    if named:
        assert own[0].severity is Severity.BLOCKING and other[0].severity is Severity.INFO


# -- stackpeel's own writes under a low soft limit (chk29) -----------------------------------------

def test_stackpeel_writes_its_whole_report_under_a_low_soft_limit_while_the_probes_keep_it(tmp_path, stack_python):
    """``ulimit -Sf 64`` (64 KiB; the hard limit unlimited): the whole check's JSON report is larger,
    and `--out FILE` said "cannot write the report to FILE: File too large" (exit 1, no file).
    stackpeel raises its own soft limit to the hard one (runner/child.own_fsize), as it does for
    open files; every probe runs under the user's 64 KiB again, and measures it."""
    out = tmp_path / "report.json"
    cmd = (f"ulimit -Sf 64; exec {sys.executable} -m stackpeel check --fresh --format json --no-plugins "
           f"--python {stack_python} --out {out}")
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert "cannot write the report" not in p.stderr and p.returncode in (0, 1), p.stderr
    assert out.stat().st_size > 64 * 1024  # over the limit the shell set: cut short before
    report = json.loads(out.read_text())
    assert report["target"]["fsize"] == [64 * 1024, -1]  # the user's limit, recorded
    own = _result(report, "system.file_size_limit")
    assert (own["facts"]["soft"], own["facts"]["hard"]) == (64 * 1024, None)  # measured in a probe
    assert [f["code"] for f in own["findings"]] == ["file-size-limit"] and own["findings"][0]["severity"] == "blocking"
    # what no probe died of: the report's own size was the only thing the limit cut
    assert [r["id"] for r in report["results"] if r["status"] == "error"] == []


def test_a_hard_limit_stackpeel_cannot_raise_still_names_the_limit(tmp_path, stack_python):
    """Negative control: ``ulimit -f 64`` sets the hard limit too; stackpeel cannot go past it and
    says so instead of writing a cut report."""
    out = tmp_path / "report.json"
    cmd = (f"ulimit -f 64; exec {sys.executable} -m stackpeel check --fresh --format json --no-plugins "
           f"--python {stack_python} --only system.file_size_limit --only gpu.kernel_driver --out {out}")
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    report = json.loads(out.read_text())  # small enough to fit under 64 KiB
    assert report["target"]["fsize"] == [64 * 1024, 64 * 1024], p.stderr
    own = _result(report, "system.file_size_limit")
    assert (own["facts"]["soft"], own["facts"]["hard"]) == (64 * 1024, 64 * 1024)
    # named by its code, blocking (64 KiB is below what the stack's own files need), as a root
    # (gpu.kernel_driver, run beside it, is a root of its own on a machine without a driver)
    assert [f["code"] for f in own["findings"]] == ["file-size-limit"], own
    assert own["findings"][0]["severity"] == "blocking"
    assert "system.file_size_limit" in [r["check"] for r in report["diagnosis"]["blocking"]]
