"""``stackpeel check --deep``: real ops of the kernel libraries, forward and backward.

On this CPU machine the torch.compile op runs for real (Inductor builds C++ with the system
compiler), so the no-compiler fault is proven end to end; the GPU ops (FLA,
causal-conv1d) skip with their reason here and are judged from facts shaped like the GPU
run's (the H200 run: scenarios/gpu/speed_suite.sh).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stackpeel.checks.base import Context
from stackpeel.checks.kernels import CausalConv1dOps, FlaOps, TorchCompileOp
from stackpeel.model import Severity, Status
from shapes import answer

DEEP = "kernels.torch_compile,kernels.fla_ops,kernels.causal_conv1d_ops"
#: FLA 0.6.0's guard, raised in fla/ops/common/chunk_o.py (chunk_bwd_dqkwg); seen on the H200 (GPU_NOTES.md)
FLA_HOPPER = ("Triton >= 3.4.0 and < 3.7.1 on Hopper GPUs produces incorrect results for gated chunk_bwd_dqkwg "
              "(see #640). Please upgrade Triton to >= 3.7.1 or install tilelang")
TARGET = {"python": "/opt/venv/bin/python3"}
HOST = {"pkg_manager": "apt", "is_root": True}


def deep_cli(python, env):
    argv = [sys.executable, "-m", "stackpeel", "check", "--python", python, "--format", "json", "--deep", "--fresh",
            "--only", DEEP]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def result(report, check_id):
    return next(r for r in report["results"] if r["id"] == check_id)


@pytest.mark.slow
def test_deep_compiles_and_checks_torch_compile_on_cpu_and_skips_gpu_ops_with_the_reason(stack_python, clean_env,
                                                                                         tmp_path):
    report, _ = deep_cli(stack_python, dict(clean_env, XDG_CACHE_HOME=str(tmp_path)))
    tc = result(report, "kernels.torch_compile")
    assert tc["status"] == "pass", tc
    steps = {s["name"]: s for s in tc["facts"]["steps"]}
    assert steps["cpu: forward (compile and run)"]["ok"] and steps["cpu: backward (compile and run)"]["ok"]
    errors = steps["cpu: compare with eager"]["errors"]
    assert set(errors) == {"output", "grad x", "grad w"} and all(e["ratio"] < 1e-3 for e in errors.values())
    assert "cpu: forward (compile and run)" in tc["summary"] and " s" in tc["summary"]  # how long each step took
    assert tc["facts"]["caches"].startswith("empty")
    fla = result(report, "kernels.fla_ops")
    assert fla["status"] == "skip" and "torch.cuda.is_available() is False" in fla["summary"]
    conv = result(report, "kernels.causal_conv1d_ops")
    assert conv["status"] == "skip" and "not installed" in conv["summary"]
    assert report["target"]["mode"] == "deep"


@pytest.mark.slow
def test_deep_without_a_compiler_fails_torch_compile_under_the_compiler_root(stack_python, nocc_env, tmp_path):
    report, _ = deep_cli(stack_python, dict(nocc_env, XDG_CACHE_HOME=str(tmp_path)))
    tc = result(report, "kernels.torch_compile")
    assert tc["status"] == "fail"
    (f,) = tc["findings"]
    assert f["code"] == "torch-compile-failed" and f["severity"] == "blocking"
    assert "InvalidCxxCompiler" in f["message"] and "No working C++ compiler" in f["evidence"]
    roots = report["diagnosis"]["blocking"]
    root = next(r for r in roots if any(s["check"] == "kernels.torch_compile" for s in r["symptoms"]))
    assert root["check"] == "toolchain.c_compiler"


def test_default_check_skips_the_deep_ops_without_running_them(stack_python, clean_env, tmp_path):
    argv = [sys.executable, "-m", "stackpeel", "check", "--python", stack_python, "--format", "json",
            "--only", DEEP, "--fresh"]
    report = json.loads(subprocess.run(argv, capture_output=True, text=True,
                                       env=dict(clean_env, XDG_CACHE_HOME=str(tmp_path))).stdout)
    for cid in DEEP.split(","):
        r = result(report, cid)
        assert r["status"] == "skip" and "--deep" in r["summary"] and r["facts"] == {}


# --------------------------------------------------------------------------- verdicts from GPU-shaped facts

def evaluate(cls, facts):
    return cls().evaluate(answer(cls, facts), Context(HOST, TARGET, {}))


def step(name, seconds, error=None, wrong=False, errors=None):
    s = {"name": name, "ok": error is None, "seconds": seconds}
    if error:
        s["error"] = error
    if wrong:
        s["wrong_result"] = True
    if errors:
        s["errors"] = errors
    return s


def exc(type_, message, raised_in):
    return {"type": type_, "message": message, "raised_in": raised_in, "chain": [],
            "traceback": f"Traceback (most recent call last):\n  ...\n{type_}: {message}\n"}


FLA_BASE = {"skipped": None, "dists": {"fla-core": "0.6.0", "flash-linear-attention": "0.6.0"}, "triton_version": "3.6.0",
            "gpu_name": "NVIDIA H200", "cc": "9.0", "cuda_available": True}


def test_fla_hopper_backward_guard_is_blocking_for_training_with_flas_own_message():
    facts = dict(FLA_BASE, steps=[
        step("import fla", 17.6),
        step("chunk_gated_delta_rule forward (compile and run)", 41.0),
        step("forward compared with naive_recurrent_gated_delta_rule", 0.01, errors={"o": {"ratio": 0.001}}),
        step("chunk_gated_delta_rule backward (compile and run)", 12.5,
             error=exc("RuntimeError", FLA_HOPPER, "fla/ops/common/chunk_o.py:729 (chunk_bwd_dqkwg)")),
    ])
    v = evaluate(FlaOps, facts)
    assert v.status is Status.FAIL
    (f,) = v.findings
    assert f.code == "kernel-backward-failed" and f.severity is Severity.BLOCKING
    assert FLA_HOPPER in f.message and "training" in f.message and "inference works" in f.message
    assert "41.0 s" in f.message and "chunk_o.py:729 (chunk_bwd_dqkwg)" in f.message
    assert "NVIDIA H200 (cc 9.0)" in f.message and "Triton 3.6.0" in f.message
    assert FLA_HOPPER in f.evidence


def test_fla_healthy_combination_passes_with_each_steps_seconds():
    facts = dict(FLA_BASE, triton_version="3.7.1", steps=[
        step("import fla", 17.6), step("chunk_gated_delta_rule forward (compile and run)", 41.0),
        step("forward compared with naive_recurrent_gated_delta_rule", 0.01),
        step("chunk_gated_delta_rule backward (compile and run)", 30.2),
        step("gradients compared with the reference", 0.01),
        step("GatedDeltaNet layer forward", 20.0), step("GatedDeltaNet layer backward", 9.0)])
    v = evaluate(FlaOps, facts)
    assert v.status is Status.PASS and not v.findings
    assert "backward (compile and run) 30.2 s" in v.summary and "GatedDeltaNet layer backward 9.0 s" in v.summary


def test_wrong_numbers_and_forward_failures_are_their_own_codes():
    wrong = dict(FLA_BASE, steps=[
        step("chunk_gated_delta_rule forward (compile and run)", 40.0),
        step("forward compared with naive_recurrent_gated_delta_rule", 0.01, wrong=True, error=exc(
            "AssertionError", "results differ from the reference beyond a ratio of 0.005: o ratio 0.41 max abs 3.2",
            "probes/kernels.py:1 (check)"))])
    (f,) = evaluate(FlaOps, wrong).findings
    assert f.code == "kernel-op-wrong-result" and "o ratio 0.41 max abs 3.2" in f.message
    fwd = dict(FLA_BASE, steps=[step("chunk_gated_delta_rule forward (compile and run)", 3.0, error=exc(
        "RuntimeError", "Triton Error [CUDA]: device kernel image is invalid", "triton/backends/nvidia/driver.py:1 (x)"))])
    (f,) = evaluate(FlaOps, fwd).findings
    assert f.code == "kernel-op-failed" and "device kernel image is invalid" in f.message
    conv = {"skipped": None, "version": "1.7.0", "steps": [step("causal_conv1d_fn forward", 0.5, error=exc(
        "RuntimeError", "CUDA error: no kernel image is available for execution on the device", "causal_conv1d/x.py:3 (f)"
    ))]}
    (f,) = evaluate(CausalConv1dOps, conv).findings
    assert f.code == "kernel-op-failed" and "causal-conv1d 1.7.0" in f.message


def test_skips_carry_the_probes_reason():
    v = evaluate(TorchCompileOp, {"skipped": "torch is not installed", "steps": []})
    assert v.status is Status.SKIP and v.summary == "torch is not installed"
