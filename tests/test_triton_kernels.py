"""The triton and kernels layers: evaluate() on recorded facts (this CPU machine and an H200),
and end-to-end runs against the real stack venv (CPU torch, triton 3.9, FLA 0.6.0,
transformers 5.24) with injected faults: no compiler, a compiler that cannot find Python.h,
a causal-conv1d whose extension was built for another torch, and other Pythons."""

from __future__ import annotations

import copy
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import engine
from stackpeel.checks.base import Context
from stackpeel.checks.kernels import CausalConv1d, Fla, TransformersFastPath
from stackpeel.checks.triton_layer import TritonBuild, TritonImport, TritonKernelLaunch
from stackpeel.diagnosis import root_of
from stackpeel.model import Severity, Status
from stackpeel.runner import run_probe
from shapes import answer


DATA = Path(__file__).parent / "data" / "triton"
HOST = {"pkg_manager": "apt", "is_root": True, "conda_prefix": None}
TARGET = {"python": "/opt/venv/bin/python3", "version": "3.12.3"}
MY_CHECKS = ["triton.import", "triton.build", "triton.kernel_launch", "kernels.fla", "kernels.causal_conv1d",
             "kernels.transformers_fast_path"]
ZERO_DRIVERS = "0 active drivers ([]). There should only be one."
NO_CC = "Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl."


def load(name):
    return json.loads((DATA / name).read_text())


def evaluate(cls, facts, deps=None, target=TARGET):
    return cls().evaluate(answer(cls, facts), Context(HOST, target, deps or {}))


def commands(finding):
    return [c.command for c in finding.remedy.commands]


def base_env():
    """What the ``clean_env`` fixture gives, for the module-scoped run."""
    env = dict(os.environ)
    for k in ("CUDA_VISIBLE_DEVICES", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_LIBCUDA_PATH", "TRITON_PTXAS_PATH",
              "TRITON_PTXAS_BLACKWELL_PATH", "CC", "PYTHONPATH"):
        env.pop(k, None)
    return env


def exc(type_, message, tb=""):
    return {"type": type_, "module": "builtins", "message": message, "chain": [],
            "traceback": tb or f"Traceback (most recent call last):\n  ...\n{type_}: {message}\n"}


# --------------------------------------------------------------------------- triton.import (recorded facts)

TORCH_CU130 = {"torch_version": "2.11.0+cu130", "torch_cuda": "13.0", "torch_hip": None, "triton_pin": "3.6.0",
               "triton_pin_dist": "triton",
               "triton_requirement_line": 'triton==3.6.0; platform_system == "Linux"'}


def test_import_pinned_release_passes():
    facts = dict(TORCH_CU130, installed=True, dist="triton", version="3.6.0", dist_version="3.6.0",
                 path="/opt/venv/lib/python3.12/site-packages/triton", importable=True)
    v = evaluate(TritonImport, facts)
    assert v.status is Status.PASS and "pins triton==3.6.0" in v.summary


def test_import_other_release_than_torch_pins_is_degraded_with_the_pin_to_install():
    facts = dict(TORCH_CU130, installed=True, dist="triton", version="3.5.1", dist_version="3.5.1",
                 path="/x/triton", importable=True)
    v = evaluate(TritonImport, facts)
    assert v.status is Status.WARN
    (f,) = v.findings
    assert f.code == "triton-torch-version-mismatch" and f.severity is Severity.DEGRADED
    assert "pins triton==3.6.0" in f.message and "3.5.1" in f.message
    assert "/opt/venv/bin/python3 -m pip install triton==3.6.0" in commands(f)


# torch 2.14 and 2.15 no longer pin one Triton release: their wheels' metadata asks for a compatible
# release (torch-2.14.0 and torch-2.15.0 cp311 manylinux wheels on PyPI, read by combo26)
TORCH_214 = dict(TORCH_CU130, torch_version="2.14.0", triton_pin="3.8.0",
                 triton_requirement_line='triton~=3.8.0; platform_system == "Linux" and python_version < "3.15"')


@pytest.mark.parametrize("installed, ok", [("3.7.1", False), ("3.9.0", False), ("3.8.0", True), ("3.8.1", True)])
def test_import_against_a_compatible_release_pin(installed, ok):
    """triton~=3.8.0 is >=3.8.0,==3.8.*: 3.8.1 is what torch asked for, 3.7.1 and 3.9.0 are not."""
    facts = dict(TORCH_214, installed=True, dist="triton", version=installed, dist_version=installed,
                 path="/x/triton", importable=True)
    v = evaluate(TritonImport, facts)
    assert "torch 2.14.0 pins triton~=3.8.0" in v.summary
    if ok:
        assert v.status is Status.PASS and v.findings == ()
    else:
        (f,) = v.findings
        assert v.status is Status.WARN and f.code == "triton-torch-version-mismatch"
        assert f"pins triton~=3.8.0 but triton {installed} is installed" in f.message
        assert "/opt/venv/bin/python3 -m pip install triton~=3.8.0" in commands(f)  # no tilde expansion mid-word


def _fake_torch_and_triton(root: Path, torch_line: str, triton_version: str) -> Path:
    """torch's dist-info with the Requires-Dist line of a real wheel, and an importable triton
    package of the given release, first on PYTHONPATH (the real torch stays the one whose
    version.py is read)."""
    t = root / "torch-2.14.0.dist-info"
    t.mkdir(parents=True)
    (t / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: 2.14.0\nRequires-Dist: {torch_line}\n")
    pkg = root / "triton"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"__version__ = '{triton_version}'\n")
    d = root / f"triton-{triton_version}.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: triton\nVersion: {triton_version}\n")
    return root


@pytest.mark.parametrize("triton_version, ok", [("3.7.1", False), ("3.8.1", True)])
def test_real_probe_reads_torchs_compatible_release_pin(stack_python, tmp_path, clean_env, triton_version, ok):
    """The real probe in the stack venv reads `triton~=3.8.0` (it read only `==` before: on torch
    2.14/2.15 any Triton passed, and the known-bad combination was left to this check)."""
    root = _fake_torch_and_triton(tmp_path / "site", TORCH_214["triton_requirement_line"], triton_version)
    answer = run_probe(stack_python, "triton_layer.import_facts", {"deps": {}, "options": {}}, 120,
                       env=dict(clean_env, PYTHONPATH=str(root)))
    assert answer.failure is None, answer.failure
    facts = answer.facts
    assert (facts["torch_version"], facts["triton_pin"], facts["version"]) == ("2.14.0", "3.8.0", triton_version)
    assert facts["triton_requirement_line"].startswith("triton~=3.8.0")
    v = evaluate(TritonImport, facts)
    assert [f.code for f in v.findings] == ([] if ok else ["triton-torch-version-mismatch"])


def test_import_missing_with_cuda_torch_is_blocking_and_cpu_torch_skips():
    v = evaluate(TritonImport, dict(TORCH_CU130, installed=False, path=None, importable=False))
    assert v.status is Status.FAIL and v.findings[0].code == "triton-not-installed"
    assert "/opt/venv/bin/python3 -m pip install triton==3.6.0" in commands(v.findings[0])
    cpu = {"torch_version": "2.13.0+cpu", "torch_cuda": None, "torch_hip": None, "triton_pin": None,
           "installed": False, "path": None}
    assert evaluate(TritonImport, cpu).status is Status.SKIP


def test_import_failure_keeps_the_traceback():
    err = exc("ImportError", "libtriton.so: cannot open shared object file: No such file or directory")
    facts = dict(TORCH_CU130, installed=True, dist="triton", version="3.6.0", path="/x/triton", importable=False,
                 import_error=err)
    v = evaluate(TritonImport, facts)
    assert v.status is Status.FAIL and v.findings[0].code == "triton-import-failed"
    assert "libtriton.so: cannot open shared object file" in v.findings[0].evidence


# --------------------------------------------------------------------------- triton.build (recorded facts)

def test_build_missing_python_h_names_the_cause_and_keeps_compiler_stderr():
    v = evaluate(TritonBuild, load("build_python_h_missing.json"))
    assert v.status is Status.FAIL
    (f,) = v.findings
    assert f.code == "triton-build-failed" and "Python.h" in f.message
    assert "fatal error: Python.h: No such file or directory" in f.evidence
    assert "Compiler command: " in f.evidence
    assert any("python3.11-dev" in c for c in commands(f))


# --------------------------------------------------------------------------- triton.kernel_launch (recorded facts)

def test_import_pinned_release_recorded_on_h200_passes():
    v = evaluate(TritonImport, load("h200_import_36.json"))
    assert v.status is Status.PASS and "torch 2.11.0 pins triton==3.6.0" in v.summary


def test_launch_healthy_h200_passes():
    v = evaluate(TritonKernelLaunch, load("h200_launch_healthy.json"))
    assert v.status is Status.PASS, v
    assert "NVIDIA H200 (cc 9.0)" in v.summary and "empty cache, result exact" in v.summary
    assert v.facts["cache_used"] == "fresh"


def test_launch_in_a_private_cache_says_the_configured_one_cannot_be_used():
    """The launch runs in an empty private cache, so it passes on an H200 whose TRITON_CACHE_DIR names
    a file (the GPU fault suite's triton-cache-dir-is-a-file); the summary must not let that read as
    "your kernels launch"."""
    facts = answer(TritonKernelLaunch, load("h200_launch_healthy.json"))
    ctx = Context(HOST, TARGET, {"toolchain.triton_cache": {"cache_dir": "/scratch/triton-cache"}},
                  {"toolchain.triton_cache": Status.FAIL})
    v = TritonKernelLaunch().evaluate(facts, ctx)
    assert v.status is Status.PASS and "empty cache, result exact" in v.summary
    assert "the configured one, /scratch/triton-cache, cannot be used" in v.summary
    assert "cannot be used" not in evaluate(TritonKernelLaunch, load("h200_launch_healthy.json")).summary


@pytest.mark.parametrize("name", ["cpu_launch_no_driver.json", "h200_launch_cuda_hidden.json"])
def test_launch_without_active_driver_is_reported_verbatim(name):
    v = evaluate(TritonKernelLaunch, load(name))
    (f,) = v.findings
    assert v.status is Status.FAIL and f.code == "triton-no-active-driver"
    assert ZERO_DRIVERS in f.message and ZERO_DRIVERS in f.evidence
    assert "torch.cuda.is_available() is False" in f.message


def test_warm_cache_on_triton_36_that_fails_for_a_new_signature_is_blocking():
    # H200, triton 3.6.0, no compiler; the cache was warmed by the probe's own kernel
    v = evaluate(TritonKernelLaunch, load("h200_launch_warm_cache_36.json"))
    assert v.status is Status.FAIL
    (f,) = v.findings
    assert f.code == "triton-warm-cache-hides-compiler" and f.severity is Severity.BLOCKING
    assert "works only because of the cache" in f.message
    assert "int-arg-1 (n=1)" in f.message and "`file` program" in f.message and "new container" in f.message
    assert NO_CC in f.evidence  # the empty-cache failure and the new-signature failure, verbatim
    assert "launch main (n=1000): OK" in f.evidence and "launch int-arg-1 (n=1): RuntimeError" in f.evidence
    assert v.facts["cache_used"] == "user-copy"
    assert any(c.endswith("apt-get install -y gcc libc6-dev python3.12-dev") for c in commands(f))


def test_warm_cache_of_other_kernels_fails_even_the_first_launch_on_triton_36():
    # warmed by a kernel of another signature: cuda_utils is reused, the launcher is not
    v = evaluate(TritonKernelLaunch, load("h200_launch_warm_other_36.json"))
    (f,) = v.findings
    assert f.code == "triton-warm-cache-hides-compiler" and f.severity is Severity.BLOCKING
    assert "launcher is not cached yet (main)" in f.message


def test_warm_cache_on_triton_39_is_a_latent_degraded_risk():
    facts = load("h200_launch_warm_cache_36.json")
    facts["triton_version"] = "3.9.0"  # generic launcher: a new signature needs no compiler
    for launch in facts["user_run"]["launches"]:
        launch.update(ok=True, mismatches=0, n=launch.get("n") or 1)
        launch.pop("error", None)
    facts["user_run"]["ok"], facts["user_run"]["stage"] = True, "done"
    v = evaluate(TritonKernelLaunch, facts)
    assert v.status is Status.WARN
    (f,) = v.findings
    assert f.code == "triton-warm-cache-hides-compiler" and f.severity is Severity.DEGRADED
    assert "a cleared cache will fail with `Failed to find C compiler`" in f.message


def test_warm_cache_not_reused_without_file_program_is_a_plain_driver_failure():
    # H200: same warm cache, but `file` is missing from PATH: the build-cache key changes
    v = evaluate(TritonKernelLaunch, load("h200_launch_nofile_36.json"))
    (f,) = v.findings
    assert f.code == "triton-driver-init-failed" and NO_CC in f.message
    assert "did not reuse them" in f.message and "'x86_64,Linux,64bit,'" in f.message
    assert "`file` program is missing" in f.message


def test_ptxas_error_at_launch_is_kernel_failed_with_ptxas_stderr():
    # the H200 healthy run, with the launch failing as Triton 3.6 does on sm_121 (FAILURE_MODES T11 text)
    facts = load("h200_launch_healthy.json")
    ptxas = ("Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined "
             "for option 'gpu-name'\n\nRepro command: /x/triton/backends/nvidia/bin/ptxas -lineinfo -v "
             "--gpu-name=sm_121a /tmp/a.ptx -o /tmp/a.ptx.o\n")
    facts["fresh"].update(ok=False, stage="launch", error=exc("PTXASError", ptxas))
    facts["fresh"]["launches"] = [{"label": "main", "n": 1000, "ok": False, "ptxas_error": True,
                                   "error": exc("PTXASError", ptxas)}]
    v = evaluate(TritonKernelLaunch, facts)
    assert v.status is Status.FAIL
    (f,) = v.findings
    assert f.code == "triton-kernel-failed" and "ptxas rejected the kernel" in f.message
    assert "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'" in f.evidence


def test_wrong_result_is_reported_with_the_measured_values():
    facts = load("h200_launch_healthy.json")
    fresh = facts["fresh"]
    fresh.update(ok=False, stage="result")
    fresh["launches"][0].update(ok=False, mismatches=3, max_abs_err=1.5,
                                first_bad={"index": 7, "got": 8.0, "expected": 7.5})
    v = evaluate(TritonKernelLaunch, facts)
    (f,) = v.findings
    assert f.code == "triton-wrong-result" and "3 values are wrong" in f.message and "got 8.0" in f.message


# --------------------------------------------------------------------------- kernels (recorded facts)

def test_fla_healthy_on_h200_passes():
    v = evaluate(Fla, load("h200_fla_healthy.json"))
    assert v.status is Status.PASS and "'cuda'" in v.summary and "H200" in v.summary


def test_fla_fallback_without_compiler_on_h200_and_behind_a_warm_cache():
    facts = load("h200_fla_nocc.json")  # H200, no C compiler, empty Triton cache
    hard = evaluate(Fla, facts)
    assert hard.status is Status.FAIL
    (f,) = hard.findings
    assert f.code == "fla-cpu-fallback" and NO_CC in f.message and "is True" in f.message
    assert "hardware.py:62: UserWarning: Triton is not supported on current platform, roll back to CPU." in f.evidence
    assert "hardware.py:157" in f.evidence and NO_CC in f.evidence
    soft = evaluate(Fla, facts, deps={"triton.kernel_launch": {"cache_used": "user-copy"}})
    assert soft.status is Status.WARN and "warm Triton cache" in soft.findings[0].message


def test_fla_without_triton_is_the_packaging_finding():
    facts = {"installed": True, "dists": {"fla-core": "0.6.0"}, "triton_installed": False, "torch_installed": True,
             "import_error": dict(exc("ModuleNotFoundError", "No module named 'triton'"), missing_module="triton")}
    v = evaluate(Fla, facts)
    assert v.findings[0].code == "fla-missing-triton"
    assert "/opt/venv/bin/python3 -m pip install 'fla-core[cuda]'" in commands(v.findings[0])
    assert evaluate(Fla, {"installed": False}).status is Status.SKIP


CC1D = {"installed": True, "version": "1.7.0+cu12torch2.4cxx11abiFALSE", "package": "/x/causal_conv1d",
        "extension": "/x/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so", "torch_version": "2.11.0+cu130",
        "torch_cuda": "13.0", "torch_cxx11abi": True, "cuda_available": True,
        "tag": {"cuda_major": 12, "torch": "2.4", "cxx11abi": False}}


def test_causal_conv1d_tables():
    sym = "_ZN3c104cuda9SetDeviceEi"
    broken = dict(CC1D, imported=False, undefined_symbol=sym, undefined_symbol_demangled="c10::cuda::SetDevice(int)",
                  import_error=exc("ImportError", f"/x/causal_conv1d_cuda.so: undefined symbol: {sym}"))
    f = evaluate(CausalConv1d, broken).findings[0]
    assert f.code == "causal-conv1d-torch-mismatch" and sym in f.message and "torch 2.4" in f.message
    assert any("--no-build-isolation" in c for c in commands(f))

    no_ext = dict(CC1D, extension=None, imported=False, import_error=dict(
        exc("ModuleNotFoundError", "No module named 'causal_conv1d_cuda'"), missing_module="causal_conv1d_cuda"))
    assert evaluate(CausalConv1d, no_ext).findings[0].code == "causal-conv1d-no-extension"

    tag_only = dict(CC1D, imported=True, has_fn=True, gpu_call={"ok": True, "max_abs_err": 0.0})
    v = evaluate(CausalConv1d, tag_only)
    assert v.status is Status.WARN and v.findings[0].severity is Severity.DEGRADED
    assert "torch 2.4 (installed: 2.11.0+cu130)" in v.findings[0].message

    arch = dict(CC1D, version="1.7.0", tag=None, imported=True, has_fn=True, gpu_call={"ok": False, "error": exc(
        "RuntimeError", "CUDA error: no kernel image is available for execution on the device")})
    assert evaluate(CausalConv1d, arch).findings[0].code == "extension-arch-missing"
    assert evaluate(CausalConv1d, {"installed": False}).status is Status.SKIP


def _binding(func, package, impl=None, reason=None):
    return {"attr": func, "func_name": func, "package": package, "reference": impl is None,
            "implementation": impl or f"transformers.models.qwen3_next.modeling_qwen3_next.{func}",
            "reason": reason}


def test_transformers_on_h200_without_causal_conv1d_is_degraded():
    v = evaluate(TransformersFastPath, load("h200_transformers_healthy.json"))
    assert v.status is Status.WARN
    (f,) = v.findings
    assert f.code == "transformers-fast-path-unavailable" and f.severity is Severity.DEGRADED
    assert "causal_conv1d_fn, causal_conv1d_update use the PyTorch reference because causal-conv1d is not installed" \
        in f.message
    assert "chunk_gated_delta_rule -> fla.ops.gated_delta_rule.chunk.chunk_gated_delta_rule" in f.evidence


def test_transformers_fast_path_tables():
    fla = "fla.ops.gated_delta_rule.chunk.chunk_gated_delta_rule"
    missing = exc("ModuleNotFoundError", "No module named 'causal_conv1d'")
    base = {"installed": True, "version": "5.17.0",
            "model_module": "transformers.models.qwen3_next.modeling_qwen3_next",
            "fla_dists": {"fla-core": "0.6.0"}, "causal_conv1d_version": None,
            "bindings": [_binding("causal_conv1d_fn", "causal_conv1d", reason=missing),
                         _binding("chunk_gated_delta_rule", "fla", impl=fla)]}
    gpu = dict(base, cuda_available=True)
    v = evaluate(TransformersFastPath, gpu)
    (f,) = v.findings
    assert v.status is Status.WARN and f.code == "transformers-fast-path-unavailable"
    assert "causal-conv1d is not installed" in f.message
    assert "/opt/venv/bin/python3 -m pip install --no-build-isolation causal-conv1d" in commands(f)

    broken = copy.deepcopy(gpu)
    broken["causal_conv1d_version"] = "1.7.0"
    broken["bindings"][0]["reason"] = exc("ImportError", "causal_conv1d_cuda.so: undefined symbol: _ZN3c10")
    f = evaluate(TransformersFastPath, broken).findings[0]
    assert "IS installed" in f.message and "undefined symbol" in f.message and "'is not installed'" in f.message

    cpu = dict(base, cuda_available=False)
    f = evaluate(TransformersFastPath, cpu,
                 deps={"kernels.fla": {"swallowed": exc("RuntimeError", ZERO_DRIVERS)}}).findings[0]
    assert f.code == "transformers-fla-on-cpu" and ZERO_DRIVERS in f.message

    legacy = {"installed": True, "version": "5.14.0", "model_module": base["model_module"], "bindings": [],
              "cuda_available": True, "legacy": {"is_fast_path_available": False,
                                                 "functions": {"causal_conv1d_fn": None, "chunk_gated_delta_rule": fla},
                                                 "reasons": {"causal_conv1d": missing}}}
    f = evaluate(TransformersFastPath, legacy).findings[0]
    assert f.code == "transformers-fast-path-unavailable" and "No module named 'causal_conv1d'" in f.message
    assert evaluate(TransformersFastPath, {"installed": False}).status is Status.SKIP


def test_transformers_joins_the_answers_of_the_checks_that_import_the_packages():
    """The default mode: the probe read the bindings from the sources; whether each package
    imports is kernels.fla's / kernels.causal_conv1d's answer, CUDA torch.cuda's."""
    impl = "fla.ops.gated_delta_rule.chunk.chunk_gated_delta_rule"
    missing = exc("ModuleNotFoundError", "No module named 'causal_conv1d'")
    facts = {"installed": True, "version": "5.24.0", "model_module": "transformers.models.qwen3_next.modeling_qwen3_next",
             "fla_dists": {"fla-core": "0.6.0"}, "causal_conv1d_version": None, "bindings": [],
             "bindings_from": "source", "source_bindings": [
                 {"attr": "causal_conv1d_fn", "func_name": "causal_conv1d_fn", "package": "causal_conv1d",
                  "module_path": "causal_conv1d", "origin": None, "resolved": True, "implementation": None,
                  "reason": missing},
                 {"attr": "torch_chunk_gated_delta_rule", "func_name": "chunk_gated_delta_rule", "package": "fla",
                  "module_path": "fla.ops.gated_delta_rule", "origin": "/x/fla", "resolved": False,
                  "implementation": impl}]}
    fla_ok = {"import_error": None, "import_deps_error": None, "import_path": "fla/utils/hardware.py only"}
    gpu = {"kernels.fla": fla_ok, "torch.cuda": {"available": True}, "kernels.causal_conv1d": {"installed": False}}
    v = evaluate(TransformersFastPath, facts, deps=gpu)
    assert v.status is Status.WARN and v.findings[0].code == "transformers-fast-path-unavailable"
    bound = {b["func_name"]: b for b in v.facts["bindings"]}
    assert bound["chunk_gated_delta_rule"]["implementation"] == impl and not bound["chunk_gated_delta_rule"]["reference"]
    assert bound["chunk_gated_delta_rule"]["joined_from"] == "kernels.fla" and v.facts["cuda_available"] is True
    assert bound["causal_conv1d_fn"]["reference"] and bound["causal_conv1d_fn"]["reason"] == missing

    # FLA's import fails (einops missing): transformers binds the reference, with that exception as the reason
    einops = exc("ModuleNotFoundError", "No module named 'einops'")
    v = evaluate(TransformersFastPath, facts, deps=dict(gpu, **{"kernels.fla": dict(fla_ok, import_deps_error=einops)}))
    ref = {b["func_name"]: b for b in v.facts["bindings"]}["chunk_gated_delta_rule"]
    assert ref["reference"] and "einops" in ref["reason"]["message"] and "einops" in v.findings[0].evidence

    # no CUDA: FLA bound is transformers-fla-on-cpu, as on the import path
    cpu = dict(gpu, **{"torch.cuda": {"available": False},
                       "kernels.fla": dict(fla_ok, swallowed=exc("RuntimeError", ZERO_DRIVERS))})
    assert evaluate(TransformersFastPath, facts, deps=cpu).findings[0].code == "transformers-fla-on-cpu"

    # a joined check without facts (it crashed or timed out): blocked, no guess either way
    assert evaluate(TransformersFastPath, facts, deps=dict(gpu, **{"kernels.fla": {}})).status is Status.BLOCKED
    assert evaluate(TransformersFastPath, facts, deps=dict(gpu, **{"torch.cuda": {}})).status is Status.BLOCKED


# --------------------------------------------------------------------------- end to end, real stack venv

@pytest.fixture(scope="module")
def plain_report(stack_python):
    """One run of every triton/kernels check (and what they require) on this CPU machine."""
    return engine.check(stack_python, only=MY_CHECKS, env=base_env(), plugins=False)


def test_plain_run_triton_imports_and_builds(plain_report):
    imp = plain_report.result("triton.import")
    assert imp.status is Status.PASS and imp.facts["importable"] is True and imp.facts["version"]
    build = plain_report.result("triton.build")
    assert build.status is Status.PASS, build.summary
    assert build.facts["answer"] == 42 and build.facts["api"].startswith("triton.runtime.build.")


def test_plain_run_launch_fails_with_zero_active_drivers(plain_report):
    launch = plain_report.result("triton.kernel_launch")
    assert launch.status is Status.FAIL
    (f,) = launch.findings
    assert f.code == "triton-no-active-driver" and ZERO_DRIVERS in f.evidence
    assert launch.facts["fresh"]["stage"] == "driver" and launch.facts["fresh"]["cuda_available"] is False


def test_plain_run_fla_fallback_recovers_the_swallowed_exception(plain_report):
    fla = plain_report.result("kernels.fla")
    assert fla.status is Status.FAIL
    (f,) = fla.findings
    assert f.code == "fla-cpu-fallback"
    assert "Triton is not supported on current platform, roll back to CPU." in f.evidence
    assert ZERO_DRIVERS in f.evidence and ZERO_DRIVERS in f.message
    assert fla.facts["device_platform"] == "cpu" and fla.facts["swallowed"]["type"] == "RuntimeError"
    # FLA is nested under the cause, not reported as a root
    roots = root_of(plain_report.diagnosis, "kernels.fla")
    assert roots and "kernels.fla" not in roots and "triton.kernel_launch" not in roots


def test_plain_run_transformers_binds_fla_on_cpu(plain_report):
    tf = plain_report.result("kernels.transformers_fast_path")
    assert tf.status is Status.FAIL and tf.findings[0].code == "transformers-fla-on-cpu"
    bound = {b["func_name"]: b for b in tf.facts["bindings"]}
    assert bound["chunk_gated_delta_rule"]["implementation"].startswith("fla.ops.gated_delta_rule")
    assert bound["causal_conv1d_fn"]["reference"] is True
    assert plain_report.result("kernels.causal_conv1d").status is Status.SKIP


def test_no_compiler_fails_triton_build_under_the_compiler_root(stack_python, nocc_env):
    report = engine.check(stack_python, only=["triton.build"], env=nocc_env, plugins=False)
    build = report.result("triton.build")
    assert build.status is Status.FAIL
    (f,) = build.findings
    assert f.code == "triton-build-failed" and NO_CC in f.evidence and "no C compiler" in f.message
    assert "toolchain.c_compiler" in (root_of(report.diagnosis, "triton.build") or [])


def test_compiler_without_python_h_surfaces_gcc_stderr(stack_python, tmp_path, clean_env):
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("needs gcc to wrap")
    wrapper = tmp_path / "cc-no-python-h"
    wrapper.write_text("#!%s\nimport os, sys\nargs = [a for a in sys.argv[1:] if not (a.startswith('-I') and "
                       "os.path.exists(os.path.join(a[2:], 'Python.h')))]\nos.execv(%r, [%r] + args)\n"
                       % (sys.executable, gcc, gcc))
    wrapper.chmod(0o755)
    env = dict(clean_env, CC=str(wrapper))
    answer = run_probe(stack_python, "triton_layer.build_facts", {"deps": {}, "options": {}}, 120, env=env)
    assert answer.failure is None
    v = evaluate(TritonBuild, answer.facts)
    assert v.status is Status.FAIL and "Python.h" in v.findings[0].message
    assert "Python.h: No such file or directory" in v.findings[0].evidence


def _fake_causal_conv1d(root: Path, ext_suffix: str, with_extension: bool) -> Path:
    pkg = root / "causal_conv1d"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import causal_conv1d_cuda\n\ndef causal_conv1d_fn(*a, **k):\n    pass\n")
    dist = root / "causal_conv1d-1.7.0+cu12torch2.4cxx11abiFALSE.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: causal_conv1d\n"
                                   "Version: 1.7.0+cu12torch2.4cxx11abiFALSE\n")
    if with_extension:
        src = root / "ext.c"
        # a real extension that needs a c10 symbol this torch does not export
        src.write_text("extern void _ZN3c104cuda9SetDeviceEi(int);\n"
                       "void *PyInit_causal_conv1d_cuda(void) { _ZN3c104cuda9SetDeviceEi(0); return 0; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(root / f"causal_conv1d_cuda{ext_suffix}")],
                       check=True)
    return root


@pytest.mark.parametrize("with_extension", [True, False], ids=["undefined-symbol", "no-extension"])
def test_fake_causal_conv1d_built_for_another_torch(stack_python, tmp_path, clean_env, with_extension):
    if with_extension and not shutil.which("gcc"):
        pytest.skip("needs gcc to build the fake extension")
    suffix = subprocess.run([stack_python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    root = _fake_causal_conv1d(tmp_path / "site", suffix, with_extension)
    env = dict(clean_env, PYTHONPATH=str(root))
    answer = run_probe(stack_python, "kernels.causal_conv1d_facts", {"deps": {}, "options": {}}, 120, env=env)
    assert answer.failure is None, answer.failure
    facts = answer.facts
    assert facts["tag"] == {"cuda_major": 12, "torch": "2.4", "cxx11abi": False}
    v = evaluate(CausalConv1d, facts)
    assert v.status is Status.FAIL
    (f,) = v.findings
    if with_extension:
        assert facts["undefined_symbol"] == "_ZN3c104cuda9SetDeviceEi"
        assert f.code == "causal-conv1d-torch-mismatch" and "_ZN3c104cuda9SetDeviceEi" in f.message
        assert "undefined symbol: _ZN3c104cuda9SetDeviceEi" in f.evidence
        if shutil.which("c++filt"):
            assert "c10::cuda::SetDevice(int)" in f.message
    else:
        assert f.code == "causal-conv1d-no-extension" and "No module named 'causal_conv1d_cuda'" in f.evidence


# --------------------------------------------------------------------------- other Pythons

PROBES = [("triton_layer.import_facts", TritonImport), ("triton_layer.build_facts", TritonBuild),
          ("triton_layer.kernel_launch", TritonKernelLaunch), ("kernels.fla_facts", Fla),
          ("kernels.causal_conv1d_facts", CausalConv1d), ("kernels.transformers_facts", TransformersFastPath)]


def real_interpreter(py):
    """The interpreter behind a pyenv shim (a shim refuses to run outside a pyenv-selected directory)."""
    if "/shims/" not in py:
        return py
    minor = os.path.basename(py)[len("python"):]
    root = os.path.dirname(os.path.dirname(py))
    hits = sorted(glob.glob(os.path.join(root, "versions", f"{minor}.*", "bin", "python")))
    return hits[-1] if hits else py


def test_probes_run_on_other_pythons(other_python, clean_env):
    """No triton, torch or FLA there: every probe answers, nothing crashes, and the
    library checks skip (triton.build and the launch would be gated on triton.import)."""
    other_python = real_interpreter(other_python)
    env = clean_env
    for probe, cls in PROBES:
        answer = run_probe(other_python, probe, {"deps": {}, "options": {"budget_s": 60}}, 90, env=env)
        assert answer.failure is None, (probe, answer.failure)
        if cls in (TritonBuild, TritonKernelLaunch):
            continue
        v = evaluate(cls, answer.facts, target={"python": other_python})
        assert v.status is Status.SKIP, (probe, v)
