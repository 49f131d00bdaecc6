"""The config layer's environment checks and shadowed-module check, run for real: stackpeel's
probes in children of the stack interpreter with the variables set in their environment, a
real stray package folder in the working directory, and the diagnosis that nests the layer a
variable breaks under the variable."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from stackpeel import engine, registry
from stackpeel.checks import config as cfg
from stackpeel.checks.base import Context
from stackpeel.diagnosis import diagnose
from stackpeel.model import CheckResult, Severity, Status
from stackpeel.runner.child import run_probe

HOST = {"pkg_manager": "apt", "is_root": True}
IFACES = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []


def run(python, env, *only):
    report = engine.check(python=python, only=list(only), env=env, plugins=False)
    return report, {r.id: r for r in report.results}


def codes(result):
    return [f.code for f in result.findings]


# --------------------------------------------------------------------------- NCCL / gloo

def test_nccl_socket_ifname_naming_no_interface_is_a_blocking_root(stack_python, clean_env):
    env = dict(clean_env, NCCL_SOCKET_IFNAME="nonexistent0", NCCL_P2P_DISABLE="1")
    before = set(os.listdir("/sys/class/net")) if IFACES else set()
    report, res = run(stack_python, env, "config.nccl_environment")
    # other tests' rigs add and remove bridges meanwhile: only interfaces present throughout count
    stable = before & (set(os.listdir("/sys/class/net")) if IFACES else set())
    r = res["config.nccl_environment"]
    assert r.status is Status.FAIL
    assert codes(r) == ["env-nccl-socket-ifname-no-match", "env-switch-set"]
    f = r.findings[0]
    assert f.severity is Severity.BLOCKING
    assert "NCCL_SOCKET_IFNAME='nonexistent0'" in f.message
    assert all(name in f.message for name in stable)          # it names what exists
    assert "Bootstrap : no socket interface found" in f.message
    assert any(c.command == "unset NCCL_SOCKET_IFNAME" for c in f.remedy.commands)
    assert r.findings[1].severity is Severity.INFO and "NCCL_P2P_DISABLE=1" in r.findings[1].message
    assert [rc.check_id for rc in report.diagnosis.blocking] == ["config.nccl_environment"]


@pytest.mark.skipif(not IFACES, reason="no /sys/class/net")
def test_nccl_socket_ifname_syntax_on_this_machines_interfaces(stack_python, clean_env):
    first = IFACES[0]
    assert cfg.ifname_matches(first[:1], IFACES)                       # a prefix
    assert cfg.ifname_matches("=" + first, IFACES) == [first]          # '=' exact
    assert not cfg.ifname_matches("=" + first[:-1] + "X", IFACES)
    assert cfg.ifname_matches("nonexistent0," + first, IFACES) == [first]
    excluded_all = "^" + ",".join(IFACES)
    assert cfg.ifname_matches(excluded_all, IFACES) == []
    _, res = run(stack_python, dict(clean_env, NCCL_SOCKET_IFNAME=first), "config.nccl_environment")
    assert res["config.nccl_environment"].status is Status.PASS
    _, res = run(stack_python, dict(clean_env, NCCL_SOCKET_IFNAME=excluded_all), "config.nccl_environment")
    assert codes(res["config.nccl_environment"]) == ["env-nccl-socket-ifname-no-match"]


def test_gloo_ifname_and_ib_hca_against_what_exists(stack_python, clean_env):
    env = dict(clean_env, GLOO_SOCKET_IFNAME="ib0-missing", NCCL_IB_HCA="=mlx5_99:1")
    _, res = run(stack_python, env, "config.nccl_environment")
    r = res["config.nccl_environment"]
    found = {f.code: f for f in r.findings}
    assert "Unable to find address for: ib0-missing" in found["env-nccl-socket-ifname-no-match"].message
    ib = found["env-nccl-ib-hca-no-match"]
    assert ib.severity is Severity.DEGRADED and "'=mlx5_99:1'" in ib.message
    if not os.path.isdir("/sys/class/infiniband"):
        assert "no /sys/class/infiniband devices" in ib.message


def test_a_failing_all_reduce_nests_under_the_bad_ifname():
    """multi_gpu.nccl requires config.nccl_environment: the NCCL failure the 2 x H200 run showed
    with NCCL_SOCKET_IFNAME naming nothing (ncclInvalidUsage) is a symptom of the variable."""
    classes = {c.id: c for c in registry.load(plugins=False)}
    assert "config.nccl_environment" in classes["multi_gpu.nccl"].requires

    def res(cid, status):
        c = classes[cid]
        return CheckResult(id=cid, title=c.title, layer=c.layer, status=status, summary="", requires=c.requires)

    results = [res("config.nccl_environment", Status.FAIL), res("torch.cuda", Status.PASS),
               res("multi_gpu.shm", Status.PASS), res("multi_gpu.p2p", Status.PASS),
               res("multi_gpu.nccl", Status.FAIL)]
    d = diagnose(results, registry.LAYERS)
    assert [r.check_id for r in d.blocking] == ["config.nccl_environment"]
    assert [s.check_id for s in d.blocking[0].symptoms] == ["multi_gpu.nccl"]


# --------------------------------------------------------------------------- Triton's variables

def test_triton_ptxas_path_that_does_not_exist(stack_python, clean_env, tmp_path):
    env = dict(clean_env, TRITON_PTXAS_PATH="/nonexistent/ptxas", TRITON_CACHE_DIR=str(tmp_path / "new" / "cache"))
    report, res = run(stack_python, env, "config.triton_environment", "toolchain.ptxas")
    r = res["config.triton_environment"]
    assert codes(r) == ["env-path-unusable"]                    # a creatable cache dir is fine
    f = r.findings[0]
    assert f.message.startswith("TRITON_PTXAS_PATH=/nonexistent/ptxas does not exist.")
    assert "Cannot find ptxas" in f.message
    # toolchain.ptxas reads the same variable: whatever it concludes, it is not a second root
    assert "config.triton_environment" in res["toolchain.ptxas"].requires
    roots = [rc.check_id for rc in report.diagnosis.blocking]
    assert "config.triton_environment" in roots and "toolchain.ptxas" not in roots


def test_triton_paths_that_exist_but_cannot_serve(stack_python, clean_env, tmp_path):
    plain = tmp_path / "ptxas"
    plain.write_text("not a program\n")            # exists, not executable
    env = dict(clean_env, TRITON_PTXAS_PATH=str(plain), TRITON_LIBCUDA_PATH=str(tmp_path),
               TRITON_CACHE_DIR="/proc/stackpeel-cannot-create/cache", TRITON_INTERPRET="1")
    _, res = run(stack_python, env, "config.triton_environment")
    by_var = {f.message.split("=", 1)[0]: f for f in res["config.triton_environment"].findings}
    assert "is not executable" in by_var["TRITON_PTXAS_PATH"].message
    assert "holds no libcuda.so*" in by_var["TRITON_LIBCUDA_PATH"].message
    assert "cannot be created" in by_var["TRITON_CACHE_DIR"].message
    assert by_var["TRITON_INTERPRET"].severity is Severity.DEGRADED


# --------------------------------------------------------------------------- builds, loader, torch

def test_cc_naming_no_program_is_the_root_of_the_compiler_failure(stack_python, clean_env):
    env = dict(clean_env, CC="/nonexistent/gcc")
    report, res = run(stack_python, env, "toolchain.c_compiler")
    r = res["config.compiler_environment"]
    assert codes(r) == ["env-path-unusable"]
    assert r.findings[0].message.startswith("CC=/nonexistent/gcc does not exist. Triton runs CC")
    assert res["toolchain.c_compiler"].status is Status.FAIL     # Triton's lookup trusts CC
    assert [(rc.check_id, [s.check_id for s in rc.symptoms]) for rc in report.diagnosis.blocking] == \
        [("config.compiler_environment", ["toolchain.c_compiler"])]


def test_build_and_allocator_variables_parsed_as_torch_parses_them(stack_python, clean_env, tmp_path):
    env = dict(clean_env, TORCH_CUDA_ARCH_LIST="8.0,8.6", PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,foo:1",
               CUDA_HOME=str(tmp_path), LD_LIBRARY_PATH="/nonexistent/lib64:" + str(tmp_path),
               LD_PRELOAD="/nonexistent/libjemalloc.so", NVIDIA_VISIBLE_DEVICES="void", CUDA_LAUNCH_BLOCKING="1")
    _, res = run(stack_python, env, "config.environment", "config.cuda_home_environment")
    r = res["config.environment"]
    assert "has no executable bin/nvcc" in res["config.cuda_home_environment"].findings[0].message
    found = {}
    for f in r.findings:
        found.setdefault(f.code, []).append(f)
    assert "torch rejects '8.0,8.6'" in found["env-torch-cuda-arch-list-invalid"][0].message
    assert "unknown key 'foo'" in found["env-alloc-conf-invalid"][0].message
    missing = {f.message.split(" ", 1)[0]: f for f in found["env-library-path-missing"]}
    assert missing["LD_LIBRARY_PATH"].severity is Severity.INFO and "/nonexistent/lib64" in missing["LD_LIBRARY_PATH"].message
    assert str(tmp_path) not in missing["LD_LIBRARY_PATH"].message
    assert missing["LD_PRELOAD"].severity is Severity.DEGRADED
    assert found["env-nvidia-visible-devices-none"][0].severity is Severity.INFO
    assert found["env-switch-set"][0].severity is Severity.DEGRADED        # CUDA_LAUNCH_BLOCKING=1
    assert r.status is Status.FAIL


@pytest.mark.parametrize("value, bad", [
    ("8.0;8.6+PTX", []), ("Ampere Hopper", []), ("9.0a;10.0a;12.0", []), ("native", []),
    ("8.0,8.6", ["8.0,8.6"]), ("8.0;", [""]), ("sm_90", ["sm_90"]), ("9.0+ptx", ["9.0+ptx"]),
])
def test_arch_list_entries(value, bad):
    assert cfg.invalid_arch_entries(value) == bad


@pytest.mark.parametrize("value, n", [
    ("expandable_segments:True", 0),
    ("roundup_power2_divisions:[256:1,512:2,>:4],max_split_size_mb:512", 0),
    ("backend:cudaMallocAsync", 0),
    ("expandable_segments:yes", 1), ("max_split_size_mb:lots", 1), ("garbage_collection_threshold", 1),
    ("backend:async,foo:1", 2),
])
def test_alloc_conf_entries(value, n):
    assert len(cfg.alloc_conf_problems(value)) == n


def test_nothing_set_passes(stack_python, clean_env):
    env = {k: v for k, v in clean_env.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CXX",
                                                           "NCCL_DEBUG", "CUDA_LAUNCH_BLOCKING")}
    ids = ("config.environment", "config.compiler_environment", "config.cuda_home_environment",
           "config.triton_environment", "config.nccl_environment")
    _, res = run(stack_python, env, *ids)
    for cid in ids:
        assert res[cid].status is Status.PASS, (cid, [f.message for f in res[cid].findings])


def test_cuda_visible_devices_is_owned_by_gpu_visible_devices():
    """CUDA_VISIBLE_DEVICES=7 on the recorded 1-GPU H200: gpu.visible_devices (not config) is
    the root, and CUDA and torch nest under it."""
    import json
    from stackpeel.checks import gpu as gpu_checks
    from test_gpu_layers import load_probe

    rec = json.loads((Path(__file__).parent / "data" / "gpu" / "h200_recorded.json").read_text())["healthy"]
    facts = load_probe("gpu").visible_devices_facts(env={"CUDA_VISIBLE_DEVICES": "7"})
    ctx = Context(HOST, {"python": sys.executable}, {"gpu.nvml": rec["gpu.nvml"]["facts"]})
    v = gpu_checks.VisibleDevices().evaluate(facts, ctx)
    assert v.status is Status.FAIL and v.findings[0].code == "cuda-visible-devices-hides-gpus"
    assert "starts with device 7, but there are only 1 GPU(s)" in v.findings[0].message


# --------------------------------------------------------------------------- shadowed modules

def test_a_stray_triton_folder_in_the_working_directory(stack_python, clean_env, tmp_path, monkeypatch):
    stray = tmp_path / "triton"
    stray.mkdir()
    (stray / "__init__.py").write_text("raise ImportError('this is not Triton')\n")
    monkeypatch.chdir(tmp_path)
    report, res = run(stack_python, clean_env, "config.module_origins")
    r = res["config.module_origins"]
    assert r.status is Status.FAIL and codes(r) == ["module-shadowed"]
    f = r.findings[0]
    assert f.message.startswith(f"`import triton` loads {stray} (working directory), not the installed triton ")
    assert [c.command for c in f.remedy.commands] == [f"mv {stray} {stray}.stray"]
    # a real `python -c` from there does load the stray copy: the probe predicted it right
    import subprocess
    out = subprocess.run([stack_python, "-c", "import triton"], cwd=tmp_path, capture_output=True, text=True)
    assert "this is not Triton" in out.stderr
    assert [rc.check_id for rc in report.diagnosis.blocking] == ["config.module_origins"]


def test_a_stray_module_file_on_pythonpath_and_a_harmless_namespace_folder(stack_python, clean_env, tmp_path,
                                                                            monkeypatch):
    pp = tmp_path / "pp"
    pp.mkdir()
    (pp / "numpy.py").write_text("# an old script called numpy.py\n")
    (tmp_path / "torch").mkdir()        # no __init__.py: a namespace portion loses to the real package
    monkeypatch.chdir(tmp_path)
    env = dict(clean_env, PYTHONPATH=str(pp))
    _, res = run(stack_python, env, "config.module_origins")
    r = res["config.module_origins"]
    shadowed = {f.message.split("`")[1]: f for f in r.findings}
    assert set(shadowed) == {"import numpy"}
    assert "(PYTHONPATH)" in shadowed["import numpy"].message
    mods = {m["module"]: m for m in r.facts["modules"]}
    assert mods["torch"]["matches"] is True


def test_clean_directory_passes(stack_python, clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, res = run(stack_python, clean_env, "config.module_origins")
    r = res["config.module_origins"]
    assert r.status is Status.PASS
    assert {m["module"] for m in r.facts["modules"]} >= {"torch", "triton", "fla", "transformers", "numpy"}


# --------------------------------------------------------------------------- other Pythons

@pytest.mark.parametrize("probe", ["config.versions", "config.environment", "config.module_origins"])
def test_probes_run_on_other_pythons(other_python, clean_env, probe, tmp_path):
    inp = {"deps": {}, "options": {"cwd": str(tmp_path)}, "check": probe, "timeout_s": 30}
    answer = run_probe(other_python, probe, inp, 60, env=dict(clean_env, NCCL_SOCKET_IFNAME="nonexistent0"))
    assert answer.failure is None, answer.failure
    if probe == "config.versions":
        import re
        minor = re.search(r"(3\.\d+)", other_python)
        assert answer.facts["python"].startswith(minor.group(1) + ".") if minor else answer.facts["python"]
        assert isinstance(answer.facts["dists"], dict)
    if probe == "config.environment":
        assert answer.facts["set"]["NCCL_SOCKET_IFNAME"] == "nonexistent0"
    if probe == "config.module_origins":
        assert answer.facts["cwd"] == str(tmp_path)


def test_only_the_checks_that_read_a_variable_nest_under_it():
    """A bad TORCH_CUDA_ARCH_LIST (config.environment) does not explain a missing compiler, and a
    bad CC (config.compiler_environment) does not explain a failing NCCL all-reduce."""
    classes = {c.id: c for c in registry.load(plugins=False)}

    def res(cid, status):
        c = classes[cid]
        return CheckResult(id=cid, title=c.title, layer=c.layer, status=status, summary="", requires=c.requires)

    d = diagnose([res("config.environment", Status.FAIL), res("config.compiler_environment", Status.PASS),
                  res("toolchain.c_compiler", Status.FAIL)], registry.LAYERS)
    assert sorted(r.check_id for r in d.blocking) == ["config.environment", "toolchain.c_compiler"]
    d = diagnose([res("config.compiler_environment", Status.FAIL), res("config.nccl_environment", Status.PASS),
                  res("torch.cuda", Status.PASS), res("multi_gpu.shm", Status.PASS), res("multi_gpu.p2p", Status.PASS),
                  res("multi_gpu.nccl", Status.FAIL)], registry.LAYERS)
    assert sorted(r.check_id for r in d.blocking) == ["config.compiler_environment", "multi_gpu.nccl"]
