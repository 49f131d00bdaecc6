"""runtime_libs: the libraries a process really loads.

First evaluate() on recorded facts (tables of the GPU-only situations this machine cannot
produce: two cuDNN majors, a cuDNN older than torch was built with, an NCCL unlike the
pin). Then the real probe on the stack venv (CPU torch loads libgomp, libstdc++,
libgcc_s) with faults injected from outside: the list against /proc/<pid>/maps of a real
torch process read from outside, a libgomp copy on LD_LIBRARY_PATH, LD_PRELOAD of the
system libgomp, a second libgomp with another SONAME, a real C extension whose loader
error says it needs GLIBCXX_3.4.99, one linked against a libcudart.so.11.0 that is not
there, and an import that kills its process with SIGSEGV.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import engine
from stackpeel.checks.base import Context
from stackpeel.checks.runtime_libs import LoadedLibraries, owner_text
from stackpeel.codes import all_codes
from stackpeel.model import Severity, Status
from stackpeel.runner import run_probe
from shapes import answer
from test_gpu_layers import load_probe  # the runner's way of loading a probe

HOST = {"pkg_manager": "apt", "is_root": True, "conda_prefix": None}
PY = "/opt/venv/bin/python"
SITE = "/opt/venv/lib/python3.12/site-packages"
SYSTEM_GOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"


def evaluate(facts):
    return LoadedLibraries().evaluate(answer(LoadedLibraries, facts), Context(HOST, {"python": PY}, {}))


def codes(verdict):
    return [f.code for f in verdict.findings]


def row(path, family, soname, version=None, owner=None, call=None, **extra):
    base = os.path.basename(path)
    stem = base.split(".so")[0]
    out = {"path": path, "realpath": path, "family": family, "stem": stem, "soname": soname, "version": version,
           "version_source": "%s()" % call if call else "file name", "version_call": {"symbol": call} if call else None,
           "owner": owner or {"kind": "none"}, "via": None, "via_entry": None, "expected": None, "consumers": []}
    out.update(extra)
    return out


def pip(name, version):
    return {"kind": "pip", "name": name, "version": version}


def facts(rows, torch=None, copies=None, **extra):
    out = {"supported": True, "env": {"LD_LIBRARY_PATH": None, "LD_PRELOAD": None},
           "imports": [{"module": "torch", "ok": True}], "torch": torch or {}, "loaded": rows, "copies": copies or {},
           "others_count": 0, "import_libraries": [], "cxx_needs": []}
    out.update(extra)
    return out


H200_TORCH = {"version": "2.11.0+cu130", "cuda": "13.0", "cudnn_compile": "9.13.0",
              "requires": {"nvidia-cudnn-cu13": "9.13.0.50", "nvidia-nccl-cu13": "2.27.7",
                           "nvidia-cuda-runtime": "13.0.96"}}


# --------------------------------------------------------------------------------------------
# evaluate() on recorded facts


def test_wording_lives_in_the_knowledge_file_and_every_code_is_catalogued():
    cat = all_codes()
    for code in LoadedLibraries.codes:
        assert code in cat, code
    for code in ("library-loaded-twice", "library-version-mismatch", "library-shadowed", "library-missing"):
        assert cat[code].layer == "runtime_libs"
        assert cat[code].links and all(link.startswith("https://github.com/") for link in cat[code].links)


def test_healthy_cuda_stack_passes_and_lists_each_library():
    rows = [row(f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", "libcudnn", "libcudnn.so.9", "9.13.0",
                pip("nvidia-cudnn-cu13", "9.13.0.50"), "cudnnGetVersion"),
            row(f"{SITE}/nvidia/nccl/lib/libnccl.so.2", "libnccl", "libnccl.so.2", "2.27.7",
                pip("nvidia-nccl-cu13", "2.27.7"), "ncclGetVersion"),
            row(f"{SITE}/nvidia/cu13/lib/libcudart.so.13", "libcudart", "libcudart.so.13", "13.0",
                pip("nvidia-cuda-runtime", "13.0.96"), "cudaRuntimeGetVersion")]
    v = evaluate(facts(rows, H200_TORCH))
    assert v.status is Status.PASS, v.findings
    assert "libcudnn 9.13.0 (pip nvidia-cudnn-cu13 9.13.0.50)" in v.summary
    assert v.facts["libraries"]["libnccl.so.2"] == {
        "family": "libnccl", "path": f"{SITE}/nvidia/nccl/lib/libnccl.so.2", "version": "2.27.7",
        "owner": "pip nvidia-nccl-cu13 2.27.7", "via": None}
    assert list(v.facts["libraries"]) == ["libcudnn.so.9", "libnccl.so.2", "libcudart.so.13"]


def test_two_cudnn_majors_in_one_process_are_one_root_cause():
    rows = [row("/opt/conda/lib/libcudnn.so.8.9.2", "libcudnn", "libcudnn.so.8", "8.9.2",
                {"kind": "conda", "name": "cudnn", "version": "8.9.2"}),
            row(f"{SITE}/nvidia/cudnn/lib/libcudnn_ops.so.9", "libcudnn", "libcudnn_ops.so.9", "9.13.0",
                pip("nvidia-cudnn-cu13", "9.13.0.50"))]
    v = evaluate(facts(rows, {"version": "2.11.0+cu130", "cudnn_compile": "9.13.0"}))
    # the cuDNN 8 copy is also not the one torch was built with
    assert codes(v) == ["library-loaded-twice", "library-version-mismatch"]
    assert "libcudnn.so.8.9.2" in v.findings[1].message
    f = v.findings[0]
    # a latent failure (each copy may keep to its own users); the cuDNN 8 copy unlike torch's build blocks
    assert f.severity is Severity.DEGRADED and v.findings[1].severity is Severity.BLOCKING
    assert "/opt/conda/lib/libcudnn.so.8.9.2 (conda cudnn 8.9.2" in f.message
    assert "libcudnn_ops.so.9 (pip nvidia-cudnn-cu13 9.13.0.50" in f.message
    assert f"Keep {SITE}/nvidia/cudnn/lib/libcudnn_ops.so.9" in f.message
    assert [c.command for c in f.remedy.commands] == ["conda remove --force -y cudnn"]


def test_cudnn_older_than_torch_was_built_with_and_nccl_unlike_the_pin():
    rows = [row("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", "libcudnn", "libcudnn.so.9", "9.1.0",
                {"kind": "system", "manager": "dpkg", "name": "libcudnn9-cuda-12", "version": "9.1.0.70-1"},
                "cudnnGetVersion", via="LD_LIBRARY_PATH", via_entry="/usr/lib/x86_64-linux-gnu"),
            row("/opt/nccl/lib/libnccl.so.2.21.5", "libnccl", "libnccl.so.2", "2.21.5", None, "ncclGetVersion",
                via="LD_PRELOAD", via_entry="/opt/nccl/lib/libnccl.so.2.21.5")]
    copies = {"libcudnn": [{"realpath": f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", "version": "9.13.0.50",
                            "owner": pip("nvidia-cudnn-cu13", "9.13.0.50"), "found_in": ["pip nvidia"]}]}
    v = evaluate(facts(rows, H200_TORCH, copies))
    assert codes(v) == ["library-version-mismatch", "library-version-mismatch"]
    cudnn, nccl = v.findings
    assert "expects libcudnn 9.13.0 (torch was built with it)" in cudnn.message
    assert "version 9.1.0 (cudnnGetVersion())" in cudnn.message
    assert "LD_LIBRARY_PATH brings it: drop /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH." in cudnn.message
    assert f"Other copies on disk: {SITE}/nvidia/cudnn/lib/libcudnn.so.9 (pip nvidia-cudnn-cu13 9.13.0.50" \
        in cudnn.message
    assert "==2.27.7 (torch's pin on nvidia-nccl-cu13)" in nccl.message and "2.21.5" in nccl.message
    assert "LD_PRELOAD brings it: unset LD_PRELOAD" in nccl.message
    assert {f.severity for f in v.findings} == {Severity.BLOCKING}


def test_pinned_package_upgraded_past_the_pin_and_own_numbering_ignored():
    torch = dict(H200_TORCH, requires={"nvidia-nccl-cu13": "2.27.7", "nvidia-cufft": "12.0.0.61"})
    rows = [row(f"{SITE}/nvidia/nccl/lib/libnccl.so.2", "libnccl", "libnccl.so.2", "2.21.5",
                pip("nvidia-nccl-cu13", "2.21.5"), "ncclGetVersion"),
            # the library's own version call may number differently from its package: the package decides
            row(f"{SITE}/nvidia/cufft/lib/libcufft.so.12", "libcufft", "libcufft.so.12", "11.9.9",
                pip("nvidia-cufft", "12.0.0.61"), "cufftGetVersion")]
    v = evaluate(facts(rows, torch))
    assert codes(v) == ["library-version-mismatch"]
    assert "Reinstall the pinned package: /opt/venv/bin/python -m pip install 'nvidia-nccl-cu13==2.27.7'." \
        in v.findings[0].message


def test_cuda_runtime_major_unlike_torch_build():
    rows = [row("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "libcudart", "libcudart.so.12", "12.4",
                None, "cudaRuntimeGetVersion")]
    v = evaluate(facts(rows, {"version": "2.11.0+cu130", "cuda": "13.0"}))
    assert codes(v) == ["library-version-mismatch"]
    assert "expects libcudart 13.0 (torch.version.cuda)" in v.findings[0].message


def test_shadow_fix_keeps_the_other_ld_library_path_entries():
    exp = {"path": f"{SITE}/torch/lib/libgomp.so.1", "realpath": f"{SITE}/torch/lib/libgomp.so.1",
           "consumer": f"{SITE}/torch/lib/libtorch_cpu.so", "owner": pip("torch", "2.13.0+cpu")}
    rows = [row("/opt/omp/libgomp.so.1", "libgomp", "libgomp.so.1", "GOMP_5.1", via="LD_LIBRARY_PATH",
                via_entry="/opt/omp", expected=exp)]
    f = facts(rows)
    f["env"]["LD_LIBRARY_PATH"] = "/opt/omp:/usr/local/lib"
    v = evaluate(f)
    assert codes(v) == ["library-shadowed"] and v.status is Status.WARN
    assert [c.command for c in v.findings[0].remedy.commands] == ["export LD_LIBRARY_PATH=/usr/local/lib"]


def test_owner_text():
    assert owner_text({"kind": "system", "manager": "dpkg", "name": "libgomp1:amd64", "version": "12.2.0"}) == \
        "dpkg libgomp1:amd64 12.2.0"
    assert owner_text({"kind": "none"}) == "no package"


# --------------------------------------------------------------------------------------------
# the real probe on the stack venv


def _probe(python, imports=None, env=None, budget=120):
    opts = {"budget_s": budget}
    if imports is not None:
        opts["imports"] = imports
    ans = run_probe(python, "runtime_libs.loaded_libs", {"options": opts, "deps": {}}, timeout=budget + 30,
                    env=env)
    assert ans.failure is None, ans.failure
    return ans.facts


def _check(python, env):
    report = engine.check(python=python, only=["runtime_libs"], env=env)
    return report.result("runtime_libs.loaded")


def _maps_of(pid):
    out = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/") and ".so" in os.path.basename(parts[5].strip()):
                out.add(parts[5].strip())
    return out


@pytest.mark.slow
def test_loaded_list_matches_maps_of_a_real_torch_process(stack_python):
    got = _probe(stack_python, ["torch"])
    assert [i["module"] for i in got["imports"] if i["ok"]] == ["torch"]
    # the same imports in a process of its own, its map read from outside
    code = ("import sys, ctypes, json, select, signal, struct, subprocess, glob, traceback, warnings, io, "
            "importlib.util; import torch; print('ready', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([stack_python, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        outside = _maps_of(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    probe_paths = {r["path"] for r in got["loaded"]} | set(got["others"])
    # every shared object of torch and the system is the same file in both; only the probe's
    # own stdlib helpers may differ
    def not_stdlib(paths):
        return {p for p in paths if "/lib-dynload/" not in p}
    assert not_stdlib(probe_paths) == not_stdlib(outside)
    families = {r["family"] for r in got["loaded"]}
    assert {"libgomp", "libstdc++", "libgcc_s"} <= families
    gomp = next(r for r in got["loaded"] if r["family"] == "libgomp")
    assert gomp["owner"]["kind"] == "pip" and gomp["owner"]["name"] == "torch"
    assert gomp["path"].endswith("/torch/lib/libgomp.so.1") and gomp["soname"] == "libgomp.so.1"
    stdcxx = next(r for r in got["loaded"] if r["family"] == "libstdc++")
    assert stdcxx["version"].startswith("GLIBCXX_3.4.") and stdcxx["soname"] == "libstdc++.so.6"
    assert got["torch"]["version"].startswith("2.") and got["torch"]["cuda"] is None


@pytest.fixture
def shadow_dir(tmp_path):
    if not os.path.exists(SYSTEM_GOMP):
        pytest.skip("no system libgomp.so.1 to shadow torch's copy with")
    d = tmp_path / "omp"
    d.mkdir()
    shutil.copy(os.path.realpath(SYSTEM_GOMP), d / "libgomp.so.1")
    return d


@pytest.mark.slow
def test_libgomp_on_ld_library_path_is_named_with_both_paths_and_the_fix(stack_python, shadow_dir):
    env = dict(os.environ, LD_LIBRARY_PATH=f"{shadow_dir}:/nonexistent/lib")
    res = _check(stack_python, env)
    assert res.status is Status.WARN, res.summary
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f"LD_LIBRARY_PATH holds {shadow_dir}" in f.message
    assert "/torch/lib/libgomp.so.1 (pip torch" in f.message
    assert [c.command for c in f.remedy.commands] == ["export LD_LIBRARY_PATH=/nonexistent/lib"]


@pytest.mark.slow
def test_ld_preload_of_the_system_libgomp_is_named(stack_python):
    if not os.path.exists(SYSTEM_GOMP):
        pytest.skip("no system libgomp.so.1")
    res = _check(stack_python, dict(os.environ, LD_PRELOAD=SYSTEM_GOMP))
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f.message.startswith(f"LD_PRELOAD puts {os.path.realpath(SYSTEM_GOMP)} (dpkg libgomp1") or \
        f.message.startswith(f"LD_PRELOAD puts {os.path.realpath(SYSTEM_GOMP)} (")
    assert "/torch/lib/libgomp.so.1" in f.message
    assert [c.command for c in f.remedy.commands] == ["unset LD_PRELOAD"]


@pytest.mark.slow
def test_a_second_libgomp_with_another_soname_is_loaded_twice(stack_python, tmp_path):
    """auditwheel-style: a copy whose SONAME differs is not merged with torch's by the loader."""
    if not os.path.exists(SYSTEM_GOMP):
        pytest.skip("no system libgomp.so.1")
    data = Path(os.path.realpath(SYSTEM_GOMP)).read_bytes()
    assert b"libgomp.so.1\0" in data
    other = tmp_path / "libgomp-0badc0de.so.1"
    other.write_bytes(data.replace(b"libgomp.so.1\0", b"libgomp.so.7\0"))
    res = _check(stack_python, dict(os.environ, LD_PRELOAD=str(other)))
    f = next(f for f in res.findings if f.code == "library-loaded-twice")
    assert f.severity is Severity.DEGRADED
    assert str(other) in f.message and "/torch/lib/libgomp.so.1" in f.message
    assert f.message.startswith("Two OpenMP runtimes")


def _gcc():
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("no gcc to build the test extension")
    return gcc


def _build(gcc, cwd, *args):
    res = subprocess.run([gcc, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


@pytest.mark.slow
def test_extension_needing_a_newer_glibcxx_than_the_loaded_libstdcxx(stack_python, tmp_path):
    gcc = _gcc()
    stub, mod = tmp_path / "stub", tmp_path / "mods"
    stub.mkdir(), mod.mkdir()
    (stub / "stub.c").write_text("int stackpeel_cxx_probe(void) { return 1; }\n")
    (stub / "v.map").write_text("GLIBCXX_3.4.99 { global: stackpeel_cxx_probe; local: *; };\n")
    _build(gcc, stub, "-shared", "-fPIC", "-o", "libstdc++.so.6", "stub.c", "-Wl,--version-script=v.map",
           "-Wl,-soname,libstdc++.so.6")
    (mod / "needs_new_cxx.c").write_text("int stackpeel_cxx_probe(void);\nint PyInit_needs_new_cxx(void) "
                                         "{ return stackpeel_cxx_probe(); }\n")
    _build(gcc, mod, "-shared", "-fPIC", "-o", "needs_new_cxx.so", "needs_new_cxx.c", f"-L{stub}",
           "-l:libstdc++.so.6")
    shutil.rmtree(stub)  # only the real libstdc++ is left for the loader
    env = dict(os.environ, PYTHONPATH=str(mod))
    got = _probe(stack_python, ["torch", "needs_new_cxx"], env=env)
    step = next(i for i in got["imports"] if i["module"] == "needs_new_cxx")
    assert not step["ok"] and "GLIBCXX_3.4.99" in step["error"]["message"]
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    f = next(f for f in res.findings if f.code == "libstdcxx-too-old")
    assert f.severity is Severity.BLOCKING
    assert f"{mod}/needs_new_cxx.so needs GLIBCXX_3.4.99" in f.message
    assert "which provides up to GLIBCXX_3.4." in f.message and "none on this machine" in f.message


@pytest.mark.slow
def test_extension_linked_against_a_missing_libcudart_names_the_copies(stack_python, tmp_path):
    gcc = _gcc()
    stub, mod = tmp_path / "stub", tmp_path / "mods"
    stub.mkdir(), mod.mkdir()
    (stub / "rt.c").write_text("int cudaRuntimeGetVersion(int *v) { *v = 11000; return 0; }\n")
    _build(gcc, stub, "-shared", "-fPIC", "-o", "libcudart.so.11.0", "rt.c", "-Wl,-soname,libcudart.so.11.0")
    (mod / "old_cuda_ext.c").write_text("int cudaRuntimeGetVersion(int *v);\nint PyInit_old_cuda_ext(void) "
                                        "{ int v; return cudaRuntimeGetVersion(&v); }\n")
    _build(gcc, mod, "-shared", "-fPIC", "-o", "old_cuda_ext.so", "old_cuda_ext.c", f"-L{stub}",
           "-l:libcudart.so.11.0")
    shutil.rmtree(stub)
    got = _probe(stack_python, ["old_cuda_ext"], env=dict(os.environ, PYTHONPATH=str(mod)))
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    f = next(f for f in res.findings if f.code == "library-missing")
    assert f.message.startswith("import old_cuda_ext fails: libcudart.so.11.0 (needed by an extension of "
                                "old_cuda_ext) is not on the loader's path")
    on_disk = got["copies"].get("libcudart") or []
    if on_disk:  # a CUDA toolkit or a pip nvidia-cuda-runtime here: each copy is named
        assert all(c["realpath"] in f.message for c in on_disk)
    else:
        assert "no copy of libcudart exists on this machine" in f.message


@pytest.mark.slow
def test_an_import_that_crashes_costs_only_itself(stack_python, tmp_path):
    (tmp_path / "crasher.py").write_text("import ctypes\nctypes.string_at(0)\n")
    got = _probe(stack_python, ["crasher", "torch"], env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    steps = {i["module"]: i for i in got["imports"]}
    assert steps["crasher"]["crashed"]["signal"] == signal.SIGSEGV
    assert steps["torch"]["ok"]
    assert any(r["family"] == "libgomp" for r in got["loaded"])


def test_probe_runs_on_every_python(other_python):
    got = _probe(other_python, ["ctypes"])
    assert got["supported"] and got["imports"] == [
        {"module": "ctypes", "ok": True, "error": None, "stderr": "", "crashed": None}]
    assert any("_ctypes" in p for p in got["others"])
    assert got["torch"] == {"version": None, "cuda": None, "cudnn_compile": None, "cudnn_runtime": None,
                            "nccl_runtime": None, "requires": {}}


def test_probe_is_standard_library_only():
    src = (Path(__file__).resolve().parent.parent / "src/stackpeel/probes/runtime_libs.py").read_text()
    imported = {line.split()[1].split(".")[0] for line in src.splitlines()
                if line.startswith(("import ", "from ")) and not line.startswith("from __future__")}
    assert imported <= set(sys.stdlib_module_names) | {"_stackpeel_probe__common"}, imported


# --------------------------------------------------------------------------------------------
# explain: log lines about a library, confirmed (or not) by what this machine loads

from stackpeel.explain import explain_text  # noqa: E402

#: real lines: pytorch/pytorch#80637 (cuDNN), the cuBLAS/cuBLASLt mix of pip and system CUDA
#: (one of torch's CUDA libraries shadowed: the cuda layer's specific code), bitsandbytes#956-style
#: missing runtime, an old libgomp in place of torch's
LIB_LINES = [
    ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 3, 2) but found runtime "
     "version (8, 0, 3). PyTorch already comes bundled with cuDNN.", "library-version-mismatch", "runtime_libs"),
    ("OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.12: "
     "undefined symbol: cublasLtGetStatusString, version libcublasLt.so.12", "cuda-library-shadowed", "cuda"),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     "library-missing", "runtime_libs"),
    ("OSError: /usr/lib/x86_64-linux-gnu/libgomp.so.1: version `GOMP_5.0' not found (required by "
     "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)", "library-shadowed", "runtime_libs"),
]


@pytest.mark.parametrize("line,code,layer", LIB_LINES)
def test_log_lines_about_libraries_name_their_library_code(line, code, layer):
    expl = explain_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                        f"    import torch\n{line}\n")
    assert expl.root is not None and expl.root.code == code
    assert expl.root.layer == layer


GOMP_LOG = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import torch\n"
            + LIB_LINES[3][0] + "\n")


@pytest.mark.slow
def test_explain_live_names_the_shadowing_copy(stack_python, shadow_dir, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", str(shadow_dir))
    expl = explain_text(GOMP_LOG, live=True, python=stack_python)
    root = expl.root
    assert root.code == "library-shadowed" and root.live.verdict == "confirmed"
    assert f"LD_LIBRARY_PATH holds {shadow_dir}" in root.live.detail
    assert "/torch/lib/libgomp.so.1" in root.live.detail


@pytest.mark.slow
def test_explain_live_without_the_fault_says_what_this_machine_loads(stack_python, monkeypatch):
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    expl = explain_text(GOMP_LOG, live=True, python=stack_python)
    live = expl.root.live
    # the log's /opt/venv does not exist here: a passing check rules nothing out
    assert live.verdict == "inconclusive" and expl.live.provenance == "other"
    assert "may come from another one" in live.detail
    assert live.detail.startswith("libgomp: loaded here from ") and "/torch/lib/libgomp.so.1 (pip torch" in live.detail
    cuda = explain_text("ImportError: " + LIB_LINES[2][0].split(": ", 1)[1] + "\n", live=True, python=stack_python)
    assert cuda.root.code == "library-missing"
    assert cuda.root.live.detail.startswith("libcudart: loaded here from nowhere; on disk: ")


@pytest.mark.slow
def test_import_failing_on_a_shadowed_copy_is_resolved_from_the_files(stack_python, shadow_dir, tmp_path):
    """The loader unloads a failed import's libraries, so the map cannot show the culprit: the
    probe resolves the failing object's library the way ld.so does (LD_LIBRARY_PATH before
    RUNPATH) and names both copies. The shipped copy defines GOMP_99; the system libgomp on
    LD_LIBRARY_PATH does not."""
    gcc = _gcc()
    mod = tmp_path / "mods"
    (mod / "lib").mkdir(parents=True)
    (mod / "stub.c").write_text("int stackpeel_gomp_probe(void) { return 1; }\n")
    (mod / "v.map").write_text("GOMP_99 { global: stackpeel_gomp_probe; local: *; };\n")
    _build(gcc, mod, "-shared", "-fPIC", "-o", "lib/libgomp.so.1", "stub.c", "-Wl,--version-script=v.map",
           "-Wl,-soname,libgomp.so.1")
    (mod / "needs_gomp99.c").write_text("int stackpeel_gomp_probe(void);\nint PyInit_needs_gomp99(void) "
                                        "{ return stackpeel_gomp_probe(); }\n")
    _build(gcc, mod, "-shared", "-fPIC", "-o", "needs_gomp99.so", "needs_gomp99.c", "-Llib", "-l:libgomp.so.1",
           "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
    env = dict(os.environ, PYTHONPATH=str(mod), LD_LIBRARY_PATH=str(shadow_dir))
    got = _probe(stack_python, ["needs_gomp99"], env=env)
    step = got["imports"][0]
    assert not step["ok"] and "GOMP_99" in step["error"]["message"]
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f.severity is Severity.BLOCKING
    assert f.message.startswith(f"LD_LIBRARY_PATH holds {shadow_dir}, whose libgomp.so.1")
    assert f"ships at {mod}/lib/libgomp.so.1" in f.message
    assert [c.command for c in f.remedy.commands] == ["unset LD_LIBRARY_PATH"]


@pytest.mark.slow
def test_diff_names_the_library_whose_file_changed(stack_python, shadow_dir):
    """`stackpeel diff` of a healthy run and a shadowed one points at the library, not at a list."""
    from stackpeel.compare import compare

    clean = dict(os.environ)
    clean.pop("LD_LIBRARY_PATH", None)
    a = engine.check(python=stack_python, only=["runtime_libs"], env=clean)
    b = engine.check(python=stack_python, only=["runtime_libs"], env=dict(clean, LD_LIBRARY_PATH=str(shadow_dir)))
    diffs = {(d.where, d.key): d for d in compare(a, b).differences}
    path = diffs[("runtime_libs.loaded", "libraries.libgomp.so.1.path")]
    assert path.a.endswith("/torch/lib/libgomp.so.1") and path.b == str(shadow_dir / "libgomp.so.1")
    assert diffs[("runtime_libs.loaded", "libraries.libgomp.so.1.via")].b == "LD_LIBRARY_PATH"


def _probe_module():
    """The probe module loaded the way the runner loads it (its _common sibling first)."""
    return load_probe("runtime_libs")


def test_elf_reader_on_real_truncated_and_hostile_files(tmp_path):
    rl = _probe_module()
    real = os.path.realpath(SYSTEM_GOMP) if os.path.exists(SYSTEM_GOMP) else os.path.realpath(sys.executable)
    info = rl.elf_info(real)
    assert "error" not in info and info["needed"], info
    if real.endswith(".so.1.0.0"):
        assert info["soname"] == "libgomp.so.1" and rl.newest(info["defines"], "GOMP_").startswith("GOMP_")
        assert "libc.so.6" in info["needs"]
    data = Path(real).read_bytes()
    import random

    rnd = random.Random(16)
    samples = [data[:n] for n in (0, 4, 16, 40, 64, 1000, len(data) // 2)]
    samples += [b"\x7fELF" + bytes(rnd.randrange(256) for _ in range(200)) for _ in range(20)]
    for _ in range(20):  # flip bytes in the headers and section table of the real file
        b = bytearray(data)
        for _ in range(30):
            pos = rnd.choice([rnd.randrange(64), len(b) - 1 - rnd.randrange(min(len(b), 4096))])
            b[pos] = rnd.randrange(256)
        samples.append(bytes(b))
    for i, blob in enumerate(samples):
        f = tmp_path / f"lib{i}.so"
        f.write_bytes(blob)
        out = rl.elf_info(str(f))  # never raises, never hangs
        assert isinstance(out, dict)
    assert rl.family_of("libcudnn_ops.so.9") == "libcudnn" and rl.family_of("libgomp-a34b3233.so.1") == "libgomp"
    assert rl.name_version("libcudart.so.12.4.127") == "12.4.127" and rl.family_of("not-a-library.txt") is None


H200_B = Path(__file__).resolve().parent.parent / "docs" / "validation" / "2026-12-01-h200-b" / "loaded" / "s4b_nccl_preload"


def test_h200_older_nccl_preloaded_heads_explain_when_confirmed_live():
    """The real H200 run (docs/validation/2026-12-01-h200-b): an older NCCL (2.21.5, from another
    installation) in LD_PRELOAD makes `import torch` fail with `libtorch_cuda.so: undefined symbol:
    ncclCommWindowDeregister`. The log alone names torch's import; the live check of that machine
    (its recorded report, replayed here) finds the preloaded copy, which then heads the answer
    and explains the import failure."""
    from stackpeel.explain.live import confirm
    from stackpeel.model import Report

    log = (H200_B / "workload.log").read_text()
    report = Report.from_dict(json.loads((H200_B / "check.json").read_text()))
    assert report.diagnosis.blocking[0].check_id == "runtime_libs.loaded"
    expl = explain_text(log)
    assert {"torch-import-failed", "cuda-library-shadowed"} <= {c.code for c in expl.candidates}
    out = confirm(expl, python=report.target["python"], check=lambda **kw: report)
    root = out.candidates[0]
    assert root.code == "library-shadowed" and root.live.verdict == "confirmed", [c.code for c in out.candidates]
    assert "LD_PRELOAD puts /usr/local/nccl-2.21.5/lib64/libnccl.so.2" in root.live.detail
    assert "torch-import-failed" in root.explains
    assert out.candidates[1].code in ("torch-import-failed", "cuda-library-shadowed")


# --------------------------------------------------------------------------------------------
# who installed a system library: dpkg's file lists read by the probe, as `dpkg -S` reads them

def _dpkg_s(paths):
    """The first package `dpkg -S` names for each path (what the probe asked it before)."""
    res = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True)
    out = {}
    for line in res.stdout.splitlines():
        pkg, sep, path = line.partition(": ")
        if sep and "diversion" not in pkg:
            out.setdefault(path.strip(), pkg.split(",")[0].strip())
    return out


@pytest.mark.skipif(not shutil.which("dpkg") or not os.path.isdir("/var/lib/dpkg/info"), reason="no dpkg database")
def test_package_owners_read_from_dpkg_lists_are_what_dpkg_s_names():
    rl = _probe_module()
    # every shared library of the system (both sides of merged /usr), a program, and files no package owns
    libs = sorted(p for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib") if os.path.isdir(d)
                  for p in __import__("glob").glob(d + "/lib*.so*"))[:300]
    paths = libs + ["/lib/" + p[len("/usr/lib/"):] for p in libs[:50]] + [os.path.realpath(shutil.which("dpkg")),
                                                                          "/usr/lib/not-a-file.so.1", "/etc/hostname"]
    mine = rl.dpkg_list_owners(paths)
    assert mine == _dpkg_s(paths)
    assert len(mine) >= min(20, len(libs) // 2), "hardly any library found: the comparison proves nothing"


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("dpkg") or not os.path.isdir("/var/lib/dpkg/info"), reason="no dpkg database")
def test_owners_are_the_same_when_dpkg_s_answers(stack_python):
    """Where dpkg is configured to another database (DPKG_ADMINDIR here), the probe asks
    `dpkg -S` as it did before it read the lists itself: the owners of every loaded library
    and every copy on disk come out the same either way."""
    def owners(facts):
        rows = {r["realpath"]: r["owner"] for r in facts["loaded"]}
        rows.update({c["realpath"]: c["owner"] for copies in facts["copies"].values() for c in copies})
        return rows
    read = owners(_probe(stack_python, ["torch"]))
    asked = owners(_probe(stack_python, ["torch"], env=dict(os.environ, DPKG_ADMINDIR="/var/lib/dpkg")))
    assert read == asked
    assert any(o.get("manager") == "dpkg" and o.get("version") for o in read.values()), read


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["none", "ld_library_path"])
def test_the_prework_read_before_the_torch_import_changes_no_fact(stack_python, shadow_dir, fault):
    """runtime_libs.loaded's prework (pip index, directory listings, ldconfig cache, package
    owners: read in the torch-free interpreter while torch imports) only saves the probe that
    work: its facts are the same with it as without it, healthy and with a libgomp copy on
    LD_LIBRARY_PATH, and the scheduler hands it over in a real run."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(shadow_dir)) if fault == "ld_library_path" else dict(os.environ)
    pre = run_probe(stack_python, "runtime_libs.loaded_libs_prework", {"options": {}, "deps": {}}, timeout=60, env=env)
    assert pre.failure is None and pre.facts["pip"] and pre.facts["listings"], pre.failure

    def facts(prework):
        inp = {"options": {"budget_s": 120, "imports": ["torch"]}, "deps": {}}
        if prework is not None:
            inp["prework"] = prework
        ans = run_probe(stack_python, "runtime_libs.loaded_libs", inp, timeout=150, env=env)
        assert ans.failure is None, ans.failure
        out = {k: v for k, v in ans.facts.items() if k not in ("duration_s", "timings", "others", "others_count")}
        out["loaded"] = sorted(out["loaded"], key=lambda r: r["realpath"])  # map order: where ASLR put them
        return out

    with_it, without = facts(pre.facts), facts(None)
    assert with_it == without
    if fault == "ld_library_path":
        gomp = next(r for r in with_it["loaded"] if r["family"] == "libgomp")
        assert gomp["via"] == "LD_LIBRARY_PATH" and gomp["expected"]["owner"]["kind"] == "pip"
    else:
        # the system's libstdc++ and libgcc_s: their owners came from the prework's lookups
        assert any(r["owner"].get("kind") == "system" for r in with_it["loaded"]) or not shutil.which("dpkg")
    report = engine.check(python=stack_python, only=["runtime_libs"], env=env, plugins=False)
    assert report.result("runtime_libs.loaded").status is (Status.WARN if fault != "none" else Status.PASS)


# --------------------------------------------------------------------------------------------
# an older nvJitLink first on the loader's path, with the real libraries of two releases
# (PyPI's nvidia-nvjitlink-cu12 12.0.76 and 12.1.105, unpacked from the wheels; no binary is
# committed: the test skips without them). The consumer stands for CUDA 12's cusparse wheel:
# nvidia/cusparse/lib/libcusparse.so.12, linked against 12.1.105 so that it needs the
# release-suffixed __nvJitLinkAddData_12_1 of version node libnvJitLink.so.12, and, as in that
# wheel, with no RUNPATH: its own libnvJitLink.so.12 lies in nvidia/nvjitlink/lib, where torch
# preloads it from (torch/__init__.py _preload_cuda_deps). A package imports it with ctypes, as
# torch's _load_global_deps does.

REPO = Path(__file__).resolve().parent.parent
#: where the wheels are looked for: the suite's .whl (carried to the GPU machine) and .whl-test
#: (CPU tests only), both git-ignored; docs/dev/gpu23.md has the pip download commands
WHEEL_DIRS = (REPO / ".whl", REPO / ".whl-test")
NVJITLINK_CU12 = {"12.0.76": "nvidia_nvjitlink_cu12-12.0.76-*.whl", "12.1.105": "nvidia_nvjitlink_cu12-12.1.105-*.whl"}


def _unpack_nvjitlink(version, dest):
    import zipfile
    wheel = next((w for d in WHEEL_DIRS for w in sorted(d.glob(NVJITLINK_CU12[version]))), None)
    if wheel is None:
        pytest.skip(f"no nvidia-nvjitlink-cu12=={version} wheel in {', '.join(map(str, WHEEL_DIRS))} "
                    f"(pip download --no-deps --only-binary=:all: -d .whl-test nvidia-nvjitlink-cu12=={version})")
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z, z.open("nvidia/nvjitlink/lib/libnvJitLink.so.12") as src, \
            open(dest / "libnvJitLink.so.12", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return dest / "libnvJitLink.so.12"


@pytest.fixture
def nvjitlink_site(tmp_path):
    """site/nvidia/nvjitlink/lib (12.1.105, the wheel's own), site/nvidia/cusparse/lib/libcusparse.so.12
    (the consumer), site/fakecusparse (imports it), and the older 12.0.76 in old/."""
    gcc = _gcc()
    site = tmp_path / "site"
    shipped = _unpack_nvjitlink("12.1.105", site / "nvidia" / "nvjitlink" / "lib")
    old = _unpack_nvjitlink("12.0.76", tmp_path / "old")
    lib = site / "nvidia" / "cusparse" / "lib"
    lib.mkdir(parents=True)
    (lib / "cusp.c").write_text(
        "int __nvJitLinkAddData_12_1(void *h, int kind, const void *d, unsigned long n, const char *name);\n"
        "int stackpeel_cusparse_probe(void) { return __nvJitLinkAddData_12_1(0, 0, 0, 0, 0); }\n")
    _build(gcc, lib, "-shared", "-fPIC", "-o", "libcusparse.so.12", "cusp.c", "-Wl,-soname,libcusparse.so.12",
           f"-L{shipped.parent}", "-l:libnvJitLink.so.12")
    (site / "fakecusparse").mkdir()
    (site / "fakecusparse" / "__init__.py").write_text(
        "import ctypes, os\n_here = os.path.dirname(os.path.abspath(__file__))\n"
        "ctypes.CDLL(os.path.join(_here, '..', 'nvidia', 'cusparse', 'lib', 'libcusparse.so.12'))\n")
    return site, shipped, old


def _nvjitlink_env(site, **extra):
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LD_PRELOAD", None)
    env.update(extra)
    return env


def test_the_release_suffixed_symbols_tell_the_two_nvjitlinks_apart(nvjitlink_site):
    probe = load_probe("runtime_libs")
    site, shipped, old = nvjitlink_site
    assert probe.symbol_release(str(shipped), "__nvJitLinkAddData_12_1") == {
        "defines": True, "newest": "__nvJitLinkAddData_12_1"}
    assert probe.symbol_release(str(old), "__nvJitLinkAddData_12_1") == {
        "defines": False, "newest": "__nvJitLinkAddData_12_0"}
    consumer = site / "nvidia" / "cusparse" / "lib" / "libcusparse.so.12"
    # the consumer uses the symbol but does not define it; a name without a release suffix says nothing
    assert probe.symbol_release(str(consumer), "__nvJitLinkAddData_12_1") == {"defines": False, "newest": None}
    assert probe.symbol_release(str(shipped), "nvJitLinkAddData") is None
    info = probe.elf_info(str(consumer))
    assert info["needs"] == {"libnvJitLink.so.12": ["libnvJitLink.so.12"]} and not info["runpath"]
    # no RUNPATH: the copy it ships is found beside it in the nvidia-* wheels, not by the loader
    assert probe.shipped_copy("libnvJitLink.so.12", str(consumer), info) == (str(shipped), "nvidia wheels")
    assert probe.shipped_copy("libnvJitLink.so.12", str(old), {}) == (None, None)  # not in a wheel folder


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["LD_LIBRARY_PATH", "LD_PRELOAD"])
def test_an_older_nvjitlink_first_fails_the_import_and_is_the_blocking_shadow(stack_python, nvjitlink_site,
                                                                            variable):
    """The loader's own message, with real libraries: the older copy lacks __nvJitLinkAddData_12_1;
    check names it as the blocking root, with both copies and the symbol that tells them apart."""
    site, shipped, old = nvjitlink_site
    value = str(old.parent) if variable == "LD_LIBRARY_PATH" else str(old)
    env = _nvjitlink_env(site, **{variable: value})
    p = subprocess.run([stack_python, "-c", "import fakecusparse"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0
    assert ("libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12"
            in p.stderr), p.stderr
    got = _probe(stack_python, ["fakecusparse"], env=env)
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    assert res.status is Status.FAIL
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f.severity is Severity.BLOCKING
    if variable == "LD_LIBRARY_PATH":
        assert f.message.startswith(f"LD_LIBRARY_PATH holds {old.parent}, whose libnvJitLink.so.12 "
                                    "(no package, version 12.0)")
        assert [c.command for c in f.remedy.commands] == ["unset LD_LIBRARY_PATH"]
    else:
        assert f.message.startswith(f"LD_PRELOAD puts {old} (no package, version 12.0) into the process")
    assert f"ships at {shipped}" in f.message
    assert f"__nvJitLinkAddData_12_1 not found in {old} (it defines up to __nvJitLinkAddData_12_0)" in f.evidence
    assert f"{shipped} (next to " in f.evidence and "defines it" in f.evidence


@pytest.mark.slow
def test_the_same_release_on_ld_library_path_is_no_failure(stack_python, nvjitlink_site, tmp_path):
    """Near miss: a copy of the wheel's own release first on LD_LIBRARY_PATH: the import works,
    nothing blocks; the copy from elsewhere is still named, as degraded."""
    site, shipped, _ = nvjitlink_site
    same = tmp_path / "same"
    same.mkdir()
    shutil.copy(shipped, same / "libnvJitLink.so.12")
    env = _nvjitlink_env(site, LD_LIBRARY_PATH=str(same))
    got = _probe(stack_python, ["fakecusparse"], env=env)
    assert got["imports"][0]["ok"] and got["failed_import_shadows"] == []
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    assert {f.severity for f in res.findings} == {Severity.DEGRADED}
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f"LD_LIBRARY_PATH holds {same}" in f.message and "in the nvidia-* wheels" in f.evidence


@pytest.mark.slow
def test_an_older_copy_preloaded_beside_the_one_torch_preloads_is_named_not_blocking(stack_python, tmp_path):
    """CUDA 13's layout (one nvidia/cu13/lib folder, cusparse with RUNPATH $ORIGIN) and what torch
    >= 2.6 does on import: it loads the wheel's nvJitLink by path, then cusparse. An older copy in
    LD_PRELOAD that defines every symbol cusparse asks for (here *_12_0) is what cusparse binds to:
    no import fails, the process holds both copies, check names the shadow and the two copies
    (degraded, as the GPU suite's older-nvjitlink-preloaded expects on the H200)."""
    gcc = _gcc()
    lib = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    shipped = _unpack_nvjitlink("12.1.105", lib)
    old = _unpack_nvjitlink("12.0.76", tmp_path / "old")
    (lib / "cusp.c").write_text(
        "int __nvJitLinkAddData_12_0(void *h, int kind, const void *d, unsigned long n, const char *name);\n"
        "int stackpeel_cusparse_probe(void) { return __nvJitLinkAddData_12_0(0, 0, 0, 0, 0); }\n")
    _build(gcc, lib, "-shared", "-fPIC", "-o", "libcusparse.so.12", "cusp.c", "-Wl,-soname,libcusparse.so.12",
           "-L.", "-l:libnvJitLink.so.12", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
    pkg = tmp_path / "site" / "preloadlike"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import ctypes, os\nlib = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'nvidia', 'cu13', "
        "'lib')\nctypes.CDLL(os.path.join(lib, 'libnvJitLink.so.12'))\nctypes.CDLL(os.path.join(lib, "
        "'libcusparse.so.12'))\n")
    env = _nvjitlink_env(tmp_path / "site", LD_PRELOAD=str(old))
    got = _probe(stack_python, ["preloadlike"], env=env)
    assert got["imports"][0]["ok"], got["imports"]
    loaded = {r["realpath"] for r in got["loaded"] if r["family"] == "libnvJitLink"}
    assert loaded == {str(old), str(shipped)}
    res = LoadedLibraries().evaluate(got, Context(HOST, {"python": stack_python}, {}))
    assert sorted(codes(res)) == ["library-loaded-twice", "library-shadowed"]
    assert {f.severity for f in res.findings} == {Severity.DEGRADED}
    f = next(f for f in res.findings if f.code == "library-shadowed")
    assert f.message.startswith(f"LD_PRELOAD puts {old} (no package")
    assert f"ships at {lib}/libnvJitLink.so.12" in f.message
    assert f"RUNPATH of {lib}/libcusparse.so.12" in f.evidence


#: the loader's message for an older nvJitLink (glibc elf/dl-lookup.c 'undefined symbol: %s, version
#: %s'), as torch's import prints it, and the forms users paste it in
NVJITLINK_LINE = ("ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/"
                  "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12")
IMPORT_TB = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    import torch\n"


@pytest.mark.parametrize("text", [
    IMPORT_TB + NVJITLINK_LINE + "\n",
    "".join("[rank3]: " + ln for ln in (IMPORT_TB + NVJITLINK_LINE + "\n").splitlines(True)),
    "After installing CUDA 12.0 on the host, import torch fails with `" + NVJITLINK_LINE.split(": ", 1)[1] + "`.\n",
    IMPORT_TB + NVJITLINK_LINE.replace(" version libnvJitLink", "\nversion libnvJitLink") + "\n",
    IMPORT_TB + "OSError: /venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcusparse.so.12: undefined symbol: "
                "__nvJitLinkAddData_13_1, version libnvJitLink.so.13\n",
], ids=["plain", "rank-prefixed", "quoted-in-prose", "wrapped", "cuda-13"])
def test_an_older_nvjitlink_in_a_log_is_a_shadowed_cuda_library(text):
    expl = explain_text(text)
    assert expl.root is not None and expl.root.code == "cuda-library-shadowed"


def test_an_nvjitlink_link_error_is_not_a_shadowed_library():
    """Near miss: nvJitLink itself reporting a failed link names the library, not a missing symbol."""
    expl = explain_text(IMPORT_TB + "RuntimeError: nvJitLink error: NVJITLINK_ERROR_PTX_COMPILE (4)\n")
    assert expl.root is None or expl.root.code not in ("cuda-library-shadowed", "library-shadowed")


def test_the_wheels_fallback_never_claims_the_cxx_runtime_or_the_driver(tmp_path):
    """Near miss of the nvidia-* wheels fallback: a libstdc++.so.6 or libcuda.so.1 lying in a wheel
    folder is not the copy a CUDA library 'ships': the system's C++ runtime and the driver's
    libcuda are loaded from elsewhere on every healthy machine."""
    probe = load_probe("runtime_libs")
    lib = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    for name in ("libstdc++.so.6", "libcuda.so.1", "libnvJitLink.so.13"):
        (lib / name).write_bytes(b"")
    consumer = str(lib / "libcublas.so.13")
    assert probe.shipped_copy("libstdc++.so.6", consumer, {}) == (None, None)
    assert probe.shipped_copy("libcuda.so.1", consumer, {}) == (None, None)
    assert probe.shipped_copy("libnvJitLink.so.13", consumer, {}) == (str(lib / "libnvJitLink.so.13"), "nvidia wheels")
