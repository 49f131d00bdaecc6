"""The core issue's acceptance, end to end: the real CLI on the real stack venv, full runs.

1. As this GPU-less machine is: the root cause is the missing NVIDIA driver, and Triton's
   `0 active drivers` and FLA's CPU fallback (with the exception it swallowed) are nested
   under it.
2. The seed: every C compiler removed from PATH and CC unset: `no-c-compiler` is a root,
   with this distro's package command, and the checks that need Triton's C build are its
   symptoms.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "report.schema.json").read_text())


def check_json(python, env):
    p = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", python, "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 1, p.stderr[-3000:]
    report = json.loads(p.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, SCHEMA)
    return report


def roots(report):
    return {r["check"]: r for r in report["diagnosis"]["blocking"]}


def findings(report, check_id):
    res = next(r for r in report["results"] if r["id"] == check_id)
    return res, {f["code"]: f for f in res["findings"]}


@pytest.fixture(scope="module")
def plain(stack_python):
    import os
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return check_json(stack_python, env)


@pytest.fixture(scope="module")
def no_compiler(stack_python, tmp_path_factory):
    import os
    from conftest import no_compiler_path
    env = dict(os.environ)
    env.pop("CC", None)
    env["PATH"] = no_compiler_path(tmp_path_factory.mktemp("nocc"))
    return check_json(stack_python, env)


def test_no_gpu_and_cpu_torch_are_the_roots_and_explain_triton_and_fla(plain):
    # two causes, each with its own fix: a driver would not make the +cpu wheel use a GPU
    assert list(roots(plain)) == ["gpu.kernel_driver", "torch.cuda"]
    assert roots(plain)["torch.cuda"]["codes"] == ["torch-cpu-only-build"]
    root = roots(plain)["gpu.kernel_driver"]
    assert root["codes"] == ["no-nvidia-driver"]
    nested = {s["check"]: s["path"] for s in root["symptoms"]}
    assert "torch.cuda" not in nested
    for cid in ("cuda.driver_api", "triton.kernel_launch", "kernels.fla"):
        assert cid in nested, cid
    assert {"triton.kernel_launch", "kernels.fla"} <= {s["check"] for s in roots(plain)["torch.cuda"]["symptoms"]}
    assert nested["kernels.fla"][0] == "gpu.kernel_driver" and nested["kernels.fla"][-1] == "kernels.fla"
    _, launch = findings(plain, "triton.kernel_launch")
    assert "0 active drivers" in launch["triton-no-active-driver"]["evidence"]
    _, fla = findings(plain, "kernels.fla")
    evidence = fla["fla-cpu-fallback"]["evidence"]
    assert "roll back to CPU" in evidence  # what FLA said
    assert "0 active drivers ([]). There should only be one." in evidence  # what FLA swallowed


def test_seed_no_compiler_is_a_root_with_the_distro_fix_and_its_symptoms(no_compiler):
    rs = roots(no_compiler)
    assert "toolchain.c_compiler" in rs and rs["toolchain.c_compiler"]["codes"] == ["no-c-compiler"]
    nested = {s["check"] for s in rs["toolchain.c_compiler"]["symptoms"]}
    assert {"toolchain.extension_build", "triton.build", "triton.kernel_launch"} <= nested
    _, cc = findings(no_compiler, "toolchain.c_compiler")
    commands = [c["command"] for c in cc["no-c-compiler"]["remedy"]["commands"]]
    assert any("apt-get install -y gcc" in c for c in commands), commands  # this host is Debian, as root
    _, build = findings(no_compiler, "triton.build")
    assert "Failed to find C compiler" in build["triton-build-failed"]["evidence"]
