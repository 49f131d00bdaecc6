"""The GPU scenario suite, kept from rotting on a CPU-only machine.

GPU scenarios must skip with a reason here; the scenarios that need no GPU (no
compiler, Python.h hidden) run for real against the stack venv; ``judge`` is tested
with small synthetic reports.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path


SUITE_PATH = Path(__file__).resolve().parent.parent / "scenarios" / "gpu" / "suite.py"
spec = importlib.util.spec_from_file_location("gpu_suite", SUITE_PATH)
suite = importlib.util.module_from_spec(spec)
sys.modules["gpu_suite"] = suite  # dataclasses look their module up while the class is built
spec.loader.exec_module(suite)


def report(blocking=(), degraded=(), errors=(), results=()):
    return {"diagnosis": {"blocking": list(blocking), "degraded": list(degraded), "errors": list(errors),
                          "exit_code": 1 if blocking or errors else 0},
            "results": list(results)}


def root(check, codes, symptoms=()):
    return {"check": check, "codes": list(codes), "severity": "blocking",
            "symptoms": [{"check": s, "path": [check, s]} for s in symptoms]}


def result(cid, status="fail", findings=()):
    return {"id": cid, "status": status, "findings": [{"code": c, "evidence": e, "message": ""} for c, e in findings]}


SC = {s.name: s for s in suite.SCENARIOS}


def test_judge_accepts_the_right_root_and_chain():
    rep = report([root("toolchain.c_compiler", ["no-c-compiler"],
                       ["toolchain.extension_build", "triton.build", "triton.kernel_launch"])],
                 results=[result("triton.build", findings=[("triton-build-failed", "Failed to find C compiler")])])
    assert suite.judge(SC["no-compiler"], rep) == []


def test_judge_rejects_wrong_root_missing_symptom_and_false_alarm():
    rep = report([root("gpu.kernel_driver", ["no-nvidia-driver"], ["triton.kernel_launch"])],
                 results=[result("triton.kernel_launch", findings=[("triton-no-active-driver", "0 active drivers")])])
    problems = suite.judge(SC["cuda-visible-devices-empty"], rep)
    assert any("cuda-visible-devices-hides-gpus" in p for p in problems)
    assert any("must not be a root cause" in p for p in problems)
    healthy = suite.judge(SC["healthy"], rep)
    assert any("expected no blocking root cause" in p for p in healthy)
    assert any("should pass" in p for p in healthy)


def test_judge_checks_recovered_evidence():
    rep = report([root("toolchain.c_compiler", ["no-c-compiler"], ["kernels.fla"])],
                 results=[result("kernels.fla", findings=[("fla-cpu-fallback", "roll back to CPU")])])
    problems = suite.judge(SC["fla-no-compiler"], rep)
    assert problems == ["kernels.fla: evidence lacks 'Failed to find C compiler'"]


def test_cpu_run_skips_gpu_scenarios_and_runs_the_rest(stack_python, tmp_path, capsys):
    rc = suite.main(["--python", stack_python, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "summary.json").read_text())
    recs = {r["name"]: r for r in summary["scenarios"]}
    assert summary["machine"]["gpus"] == 0
    for name in ("healthy", "no-compiler-warm-cache", "cuda-visible-devices-empty", "fla-no-compiler",
                 "multi-gpu-healthy"):
        assert recs[name]["status"] == "skip" and "GPU" in recs[name]["reason"], recs[name]
    # no GPU needed: these run for real and must name the right root cause
    assert recs["no-compiler"]["status"] == "pass", recs["no-compiler"]
    hidden = recs["python-h-hidden"]
    if hidden["status"] != "skip":
        assert hidden["status"] == "pass", hidden
    assert rc == 0, out
