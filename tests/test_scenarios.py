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


# --- device-node faults, proved with fake nodes (no NVIDIA driver here) ------------------------

import os  # noqa: E402
import shutil  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402

import pytest  # noqa: E402

DEVICE_SCENARIOS = ("nvidia-uvm-node-missing", "nvidiactl-node-missing", "gpu-node-missing", "only-gpu-node-passed",
                    "device-nodes-not-openable", "driver-gone-nodes-left")
SYSTEM_PYTHON = "/usr/bin/python3"


def _free_char_major() -> int:
    """A character major no driver here has registered (the fake nvidia-uvm's), as the driver
    would get one dynamically."""
    text = Path("/proc/devices").read_text()
    used = {int(line.split()[0]) for line in text.split("Block devices:")[0].splitlines()[1:] if line.strip()}
    return next(m for m in range(511, 233, -1) if m not in used)


@pytest.fixture
def fake_dev(tmp_path, monkeypatch):
    """A folder of NVIDIA nodes made as the driver makes them (nvidia-smi's majors and minors),
    with the suite reading its 'real' nodes there. Without a driver they open with ENXIO."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mknod, mount, unshare); the project's CI runs as root")
    if not shutil.which("unshare") or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("unshare -m is not permitted here")
    dev = tmp_path / "fake-dev"
    dev.mkdir()
    uvm = _free_char_major()
    for name, major, minor in (("nvidiactl", 195, 255), ("nvidia0", 195, 0), ("nvidia-uvm", uvm, 0),
                               ("nvidia-uvm-tools", uvm, 1)):
        os.mknod(dev / name, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(dev / name, 0o666)
    monkeypatch.setattr(suite, "DEV_SOURCE", str(dev))
    return dev


#: scenario -> the NVIDIA nodes left in the namespace's /dev, with their modes
EXPECTED_NODES = {
    "nvidia-uvm-node-missing": {"nvidiactl": "crw-rw-rw-", "nvidia0": "crw-rw-rw-"},
    "nvidiactl-node-missing": {"nvidia0": "crw-rw-rw-", "nvidia-uvm": "crw-rw-rw-", "nvidia-uvm-tools": "crw-rw-rw-"},
    "gpu-node-missing": {"nvidiactl": "crw-rw-rw-", "nvidia-uvm": "crw-rw-rw-", "nvidia-uvm-tools": "crw-rw-rw-"},
    "only-gpu-node-passed": {"nvidia0": "crw-rw-rw-"},
    "driver-gone-nodes-left": {"nvidiactl": "crw-rw-rw-", "nvidia0": "crw-rw-rw-", "nvidia-uvm": "crw-rw-rw-",
                               "nvidia-uvm-tools": "crw-rw-rw-"},
    "device-nodes-not-openable": {"nvidiactl": "crw-rw----", "nvidia0": "crw-rw----", "nvidia-uvm": "crw-rw-rw-",
                                  "nvidia-uvm-tools": "crw-rw-rw-"},
}

INSIDE = r"""
ls -l /dev/nvidia* 2>/dev/null | awk '{print $1, $NF}'
echo "id $(id -u)"
echo written > /dev/null && echo "null ok"
echo "urandom $(head -c 16 /dev/urandom | wc -c)"
echo "zero $(head -c 8 /dev/zero | wc -c)"
touch /dev/nvidia-uvm 2>/dev/null && echo "dev writable" || echo "dev read-only"
: > /dev/shm/stackpeel-probe && rm /dev/shm/stackpeel-probe && echo "shm ok"
stat -c 'shm dev %d' /dev/shm
"""


def _in_namespace(sc_name, tmp_path, argv):
    setup = SC[sc_name].setup(None, tmp_path / sc_name)
    p = subprocess.run(setup.wrap + argv, env=setup.env, capture_output=True, text=True, timeout=300)
    if setup.env.get("HOME", "").startswith(tempfile_root()):
        shutil.rmtree(setup.env["HOME"], ignore_errors=True)
    return setup, p


@pytest.mark.parametrize("name", DEVICE_SCENARIOS)
def test_device_node_setup_leaves_exactly_the_intended_nodes(name, fake_dev, tmp_path):
    (tmp_path / name).mkdir()
    _, p = _in_namespace(name, tmp_path, ["sh", "-c", INSIDE])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    nodes = {ln.split()[1].rsplit("/", 1)[-1]: ln.split()[0] for ln in lines if ln.startswith("c")}
    assert nodes == EXPECTED_NODES[name]
    assert f"id {suite.NOBODY if name == 'device-nodes-not-openable' else 0}" in lines
    for line in ("null ok", "urandom 16", "zero 8", "dev read-only", "shm ok", f"shm dev {os.stat('/dev/shm').st_dev}"):
        assert line in lines, (line, p.stdout, p.stderr)
    # the host's own /dev is untouched: the namespace was private
    assert not os.path.exists("/dev/nvidia-uvm") or stat.S_ISCHR(os.stat("/dev/nvidia-uvm").st_mode)
    assert os.access("/dev/null", os.W_OK) and not os.path.ismount(str(tmp_path / name / "host" / "dev"))


def test_the_unprivileged_user_runs_python_in_the_namespace(fake_dev, tmp_path, stack_python):
    """uid 65534 runs the target interpreter inside the wrap, or the scenario skips saying why
    (here the stack venv's python links into /root/.pyenv, which nobody may enter)."""
    (tmp_path / "u").mkdir()
    m = suite.Machine(python=stack_python, gpus=1, is_root=True, unshare=True, fla=False, triton_version=None,
                      include_dir=None, ptxas=None, cc_major=None)
    why = suite.need_unprivileged_python(m)
    setup = suite.device_nodes_setup(user=suite.NOBODY)(m, tmp_path / "u")
    python = stack_python if why is None else SYSTEM_PYTHON
    if why is not None:
        assert f"uid {suite.NOBODY} cannot run {stack_python}" in why
        if not os.access(SYSTEM_PYTHON, os.X_OK):
            pytest.skip(f"the stack python is closed to nobody ({why}) and there is no {SYSTEM_PYTHON}")
    code = "import os, sys; print(os.getuid(), os.getgroups(), os.environ['HOME'])"
    p = subprocess.run(setup.wrap + [python, "-c", code], env=setup.env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    uid, _, home = p.stdout.split(" ", 2)
    assert uid == str(suite.NOBODY) and "[]" in p.stdout
    assert os.stat(home.strip()).st_uid == suite.NOBODY and setup.env["TRITON_CACHE_DIR"].startswith(home.strip())
    if home.strip().startswith(tempfile_root()):
        shutil.rmtree(home.strip(), ignore_errors=True)


def _check_json(name, tmp_path, python):
    (tmp_path / name).mkdir(exist_ok=True)
    setup = SC[name].setup(None, tmp_path / name)
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(python, ["--only", "gpu"]), env=env, capture_output=True,
                       text=True, timeout=300)
    if setup.env.get("HOME", "").startswith(tempfile_root()):
        shutil.rmtree(setup.env["HOME"], ignore_errors=True)
    assert p.stdout.strip(), p.stderr[-3000:]
    return json.loads(p.stdout)


def tempfile_root() -> str:
    import tempfile
    return os.path.join(tempfile.gettempdir(), "stackpeel-uid")


def _device_nodes(rep):
    return next(r for r in rep["results"] if r["id"] == "gpu.device_nodes")


def test_check_in_the_namespace_names_the_missing_uvm_node(fake_dev, tmp_path, stack_python):
    """As root, with /dev read-only, nobody can create /dev/nvidia-uvm: check says it is missing
    (the fake nodes' ENXIO is shown in the evidence, as a driver with no such device would)."""
    rep = _check_json("nvidia-uvm-node-missing", tmp_path, stack_python)
    res = _device_nodes(rep)
    assert [f["code"] for f in res["findings"]] == ["nvidia-uvm-missing"]
    ev = res["findings"][0]["evidence"]
    assert "/dev/nvidia-uvm: absent" in ev and "read-only mount" in ev and "ENXIO" in ev
    if os.path.exists("/proc/driver/nvidia/version"):
        assert suite.judge(SC["nvidia-uvm-node-missing"], rep) == []
    else:
        # no driver behind the fake nodes (they open with ENXIO): since session 22b gpu.kernel_driver
        # says so and is the root, the missing uvm node nested under it; on the H200 the driver is seen
        root = next(r for r in rep["diagnosis"]["blocking"] if r["check"] == "gpu.kernel_driver")
        assert root["codes"] == ["no-nvidia-driver"] and "gpu.device_nodes" in {s["check"] for s in root["symptoms"]}


@pytest.mark.parametrize("name, missing", [("nvidiactl-node-missing", "/dev/nvidiactl"),
                                           ("gpu-node-missing", "/dev/nvidia<N>"),
                                           ("only-gpu-node-passed", "/dev/nvidiactl")])
def test_check_in_the_namespace_names_missing_nodes(name, missing, fake_dev, tmp_path, stack_python):
    """device-nodes-missing is found; without /proc/driver/nvidia (no driver here) the kernel
    driver check may fail first and nest it, which the real GPU run does not have."""
    rep = _check_json(name, tmp_path, stack_python)
    res = _device_nodes(rep)
    assert [f["code"] for f in res["findings"]] == ["device-nodes-missing"]
    assert missing in res["findings"][0]["message"]
    assert "nvidia-uvm-missing" not in {f["code"] for r in rep["results"] for f in r["findings"]}


def test_check_as_nobody_names_the_permission_denial(fake_dev, tmp_path, stack_python):
    m = suite.Machine(python=stack_python, gpus=1, is_root=True, unshare=True, fla=False, triton_version=None,
                      include_dir=None, ptxas=None, cc_major=None)
    python = stack_python if suite.need_unprivileged_python(m) is None else SYSTEM_PYTHON
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c",
                            f"import sys; sys.path.insert(0, {str(suite.REPO / 'src')!r}); import stackpeel"],
                           capture_output=True, text=True, env={"PATH": os.environ["PATH"], "HOME": "/"})
    if probe.returncode:
        pytest.skip(f"uid 65534 cannot import stackpeel with {python}: {probe.stderr.strip()[-200:]}")
    rep = _check_json("device-nodes-not-openable", tmp_path, python)
    res = _device_nodes(rep)
    assert [f["code"] for f in res["findings"]] == ["device-permission-denied"]
    f = res["findings"][0]
    assert "/dev/nvidiactl, /dev/nvidia0 cannot be opened read-write by nobody" in f["message"]
    assert "EACCES" in f["evidence"] and "nvidia-uvm" not in f["evidence"]
    assert suite.judge(SC["device-nodes-not-openable"], rep) == []


# --- session 22b: kernel driver behind a node, the loader, /dev/shm for a DataLoader -------------

def test_kernel_driver_reads_an_orphaned_nvidiactl_as_no_driver(tmp_path):
    """A real /dev/nvidiactl node (char 195:255, made with mknod) with no NVIDIA driver behind it,
    as nodes left after `rmmod nvidia` are: the probe opens it (ENXIO here) and the check says
    no-nvidia-driver; a regular file of that name (no char device) stays 'present'."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mknod)")
    if os.path.exists("/proc/driver/nvidia/version"):
        pytest.skip("an NVIDIA driver is loaded here: 195:255 would open")
    from stackpeel.checks import gpu as gpu_checks
    from stackpeel.checks.base import Context
    from shapes import answer
    from test_gpu_layers import load_probe  # the runner's way of loading a probe, one copy
    gpu = load_probe("gpu")
    (tmp_path / "dev").mkdir()
    try:
        os.mknod(tmp_path / "dev" / "nvidiactl", 0o666 | stat.S_IFCHR, os.makedev(195, 255))
    except PermissionError as exc:
        pytest.skip(f"mknod refused here: {exc}")
    os.chmod(tmp_path / "dev" / "nvidiactl", 0o666)
    facts = gpu.kernel_driver_facts(str(tmp_path))
    assert facts["nvidiactl_exists"] and facts["nvidiactl_open_error"] in ("ENXIO", "ENODEV")
    check = gpu_checks.KernelDriver
    v = check().evaluate(answer(check, facts), Context({}, {}, {}, {}))
    assert [f.code for f in v.findings] == ["no-nvidia-driver"]
    assert "opening it fails with" in v.findings[0].evidence
    # near miss: something named nvidiactl that opens fine (not a driver's node, but not an ENXIO either)
    os.unlink(tmp_path / "dev" / "nvidiactl")
    (tmp_path / "dev" / "nvidiactl").write_text("")
    facts = gpu.kernel_driver_facts(str(tmp_path))
    assert facts["nvidiactl_open_error"] is None
    assert not check().evaluate(answer(check, facts), Context({}, {}, {}, {})).findings


def test_the_libcuda_not_elf_setup_stops_the_loader_before_the_real_library(tmp_path):
    """glibc's open_verify rejects the text file ('invalid ELF header') and dlopen does not go on
    to the next LD_LIBRARY_PATH folder, where a real libcuda.so.1 (here a one-function stand-in) is."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("needs a C compiler for the stand-in libcuda")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "s.c").write_text("int cuInit(unsigned int f) { return 0; }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "real" / "libcuda.so.1"),
                    str(tmp_path / "real" / "s.c")], check=True)
    setup = suite.libcuda_not_elf_first(None, tmp_path)
    ld = setup.env["LD_LIBRARY_PATH"].split(os.pathsep)
    assert ld[0] == str(tmp_path / "libcuda-not-elf")
    code = "import ctypes\ntry:\n ctypes.CDLL('libcuda.so.1'); print('loaded')\nexcept OSError as e:\n print(e)"
    env = dict(setup.env, LD_LIBRARY_PATH=os.pathsep.join([ld[0], str(tmp_path / "real")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
    assert out.strip() == f"{ld[0]}/libcuda.so.1: invalid ELF header"
    # control: without the bad folder first the real one loads
    env["LD_LIBRARY_PATH"] = str(tmp_path / "real")
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip() == \
        "loaded"


def test_check_names_the_missing_preload_as_degraded_only(tmp_path, stack_python):
    """The ld-preload-missing scenario's environment: the loader's complaint goes to stderr, the
    report is whole, and config.environment holds the only (degraded) finding of the config layer."""
    setup = SC["ld-preload-missing"].setup(None, tmp_path)
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(suite.stackpeel_argv(stack_python, ["--only", "config"]), env=env, capture_output=True,
                       text=True, timeout=300)
    assert "from LD_PRELOAD cannot be preloaded" in p.stderr
    rep = json.loads(p.stdout)
    assert rep["diagnosis"]["blocking"] == []
    assert [(d["check"], d["codes"]) for d in rep["diagnosis"]["degraded"]] == [
        ("config.environment", ["env-library-path-missing"])]
    env_result = next(r for r in rep["results"] if r["id"] == "config.environment")
    assert suite.MISSING_PRELOAD in env_result["findings"][0]["message"]
    assert suite.judge(SC["ld-preload-missing"], rep) == []


def test_the_dataloader_fails_under_dockers_shm_and_runs_without_it(tmp_path, stack_python):
    """The user's DataLoader job, for real (CPU tensors through /dev/shm): it fails under the
    scenario's 64 MiB /dev/shm with torch's own words, and succeeds on the host's /dev/shm."""
    if os.geteuid() != 0 or not shutil.which("unshare") or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs root and unshare -m for the private /dev/shm")
    setup = suite.docker_default_shm(None, tmp_path)
    argv = [stack_python, str(suite.USER_DATALOADER), "--timeout", "20"]
    p = subprocess.run(setup.wrap + argv, env=setup.env, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    assert "unable to allocate shared memory(shm) for file </torch_" in p.stderr
    from stackpeel.explain import explain_text
    assert explain_text(p.stdout + p.stderr).root.code == "dataloader-shm-too-small"
    ok = subprocess.run(argv, env=setup.env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "user dataloader OK" in ok.stdout, ok.stderr[-2000:]


def test_check_reads_nodes_left_without_a_driver_as_no_driver(fake_dev, tmp_path, stack_python):
    """driver-gone-nodes-left: every node at a major no driver has (ENXIO), /proc/driver/nvidia and
    /proc/modules' nvidia lines hidden where they exist. Before session 22b gpu.kernel_driver passed
    on nvidiactl's existence; now it is the root and the nodes' check nests under it."""
    name = "driver-gone-nodes-left"
    (tmp_path / name).mkdir()
    _, p = _in_namespace(name, tmp_path, ["sh", "-c", "stat -c '%t %T %n' /dev/nvidia*; "
                                          "ls /proc/driver/nvidia 2>/dev/null | wc -l"])
    majors = {ln.split()[0] for ln in p.stdout.splitlines() if ln.count(" ") == 2}
    assert majors == {format(suite.free_char_major(), "x")}, p.stdout  # every node, nvidiactl included
    assert p.stdout.splitlines()[-1] == "0"  # the driver's /proc folder is empty (or absent) inside
    rep = _check_json(name, tmp_path, stack_python)
    kd = next(r for r in rep["results"] if r["id"] == "gpu.kernel_driver")
    assert [f["code"] for f in kd["findings"]] == ["no-nvidia-driver"]
    assert "/dev/nvidiactl: present, but opening it fails with ENXIO" in kd["findings"][0]["evidence"]
    assert "left behind" in kd["findings"][0]["message"]
    root = next(r for r in rep["diagnosis"]["blocking"] if r["check"] == "gpu.kernel_driver")
    assert "gpu.device_nodes" in {s["check"] for s in root["symptoms"]}
    assert suite.judge(SC[name], rep) == []


# --------------------------------------------------------------------------------------------
# an older libnvJitLink of torch's CUDA major first on the loader's path (gpu23)

OLDER = ("older-nvjitlink-on-library-path", "older-nvjitlink-preloaded", "older-nvjitlink-preloaded-cu12")


def _machine(python="python3", cuda=None, preloads=True):
    return suite.Machine(python=python, gpus=1, is_root=True, unshare=True, fla=False, triton_version=None,
                         include_dir=None, ptxas=None, cc_major=9, torch_version="2.11.0+cu130" if cuda else "2.11.0",
                         cuda_version=cuda, torch_preloads_cuda_libs=preloads)


def test_older_nvjitlink_scenarios_skip_with_a_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "WHEELS", tmp_path)
    lib_path, preloaded, cu12 = (SC[n].needs for n in OLDER)
    assert "needs a CUDA build of torch" in lib_path(_machine(cuda=None))
    why = lib_path(_machine(cuda="13.0"))
    assert f"{tmp_path}/nvidia_nvjitlink-13.0.39-*.whl is absent" in why
    assert "pip download --no-deps --only-binary=:all:" in why and "nvidia-nvjitlink==13.0.39" in why
    assert "nvidia-nvjitlink-cu12==12.0.76" in cu12(_machine(cuda="12.8"))
    assert "for a torch built for CUDA 12" in cu12(_machine(cuda="13.0"))
    assert "for a torch built for CUDA 13" in preloaded(_machine(cuda="12.8"))
    assert "no older nvJitLink wheel is known for CUDA 11" in lib_path(_machine(cuda="11.8"))
    (tmp_path / "nvidia_nvjitlink-13.0.39-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl").write_bytes(b"")
    (tmp_path / "nvidia_nvjitlink_cu12-12.0.76-py3-none-manylinux1_x86_64.whl").write_bytes(b"")
    assert lib_path(_machine(cuda="13.0")) is None and preloaded(_machine(cuda="13.0")) is None
    # without torch's own preload (torch < 2.6) the library-path copy would be used: another outcome
    assert "does not preload" in lib_path(_machine(cuda="13.0", preloads=False))
    assert cu12(_machine(cuda="12.8", preloads=False)) is None  # LD_PRELOAD wins either way
    # a GPU is still needed: the CPU run reports these as skips
    assert "needs 1 visible NVIDIA GPU" in lib_path(dataclasses_replace(_machine(cuda="13.0"), gpus=0))


def dataclasses_replace(m, **changes):
    import dataclasses
    return dataclasses.replace(m, **changes)


@pytest.mark.parametrize("cuda, wheel_dir", [("13.0", ".whl"), ("12.8", ".whl-test")])
def test_older_nvjitlink_setups_put_the_real_older_library_first(cuda, wheel_dir, tmp_path, monkeypatch):
    """The setups unpack the library from PyPI's wheel (skip without it): an ELF file whose
    release-suffixed symbols stop at the older release, first on LD_LIBRARY_PATH or in LD_PRELOAD."""
    from test_gpu_layers import load_probe  # the runner's way of loading a probe
    probe = load_probe("runtime_libs")
    folder = suite.REPO / wheel_dir
    m = _machine(cuda=cuda)
    if folder.is_dir():
        monkeypatch.setattr(suite, "WHEELS", folder)
    if not folder.is_dir() or suite.older_nvjitlink_wheel(m) is None:
        pytest.skip(f"no older nvJitLink wheel for CUDA {cuda} in {folder} (docs/dev/gpu23.md: pip download)")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/elsewhere/lib")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    first = suite.older_nvjitlink_first(m, tmp_path)
    entries = first.env["LD_LIBRARY_PATH"].split(os.pathsep)
    major = cuda.split(".")[0]
    lib = Path(entries[0]) / f"libnvJitLink.so.{major}"
    assert entries[1:] == ["/opt/elsewhere/lib"] and lib.is_file()
    assert Path(entries[0]).name == "nvjitlink-" + ("13.0.39" if major == "13" else "12.0.76")
    assert probe.elf_info(str(lib))["soname"] == f"libnvJitLink.so.{major}"
    release = probe.symbol_release(str(lib), f"__nvJitLinkAddData_{major}_1")
    # 13.0.39 stops at *_13_0 (all torch's CUDA 13.0 cusparse needs); 12.0.76 at *_12_0 (older than any
    # CUDA 12 cusparse after 12.0 needs)
    assert release == {"defines": False, "newest": f"__nvJitLinkAddData_{major}_0"}
    pre = suite.older_nvjitlink_preloaded(m, tmp_path)
    assert pre.env["LD_PRELOAD"] == str(lib) and pre.env["LD_LIBRARY_PATH"] == "/opt/elsewhere/lib"
    # the loader takes it: a process started with it preloaded maps that file
    p = subprocess.run([sys.executable, "-c", "print(open('/proc/self/maps').read())"],
                       env=dict(os.environ, LD_PRELOAD=str(lib)), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and str(lib) in p.stdout


@pytest.mark.slow
def test_the_machine_probe_reads_torchs_cuda_build_and_preload(stack_python):
    m = suite.Machine.probe(stack_python)
    assert m.torch_version and m.torch_version.startswith("2.")
    assert m.cuda_version is None  # the stack venv's torch is a CPU build
    # torch 2.13's __init__ preloads its nvidia-* libraries once libcudart is in (pytorch#138460)
    assert m.torch_preloads_cuda_libs is True
    assert "needs a CUDA build of torch" in SC["older-nvjitlink-on-library-path"].needs(dataclasses_replace(m, gpus=1))


def test_judge_on_the_older_nvjitlink_expectations():
    """The LD_LIBRARY_PATH copy must stay unused (check passes, the wheel's copy loaded); the
    preloaded one must be named; a shadow reported on the library-path scenario is a failure."""
    ok = report(results=[result("runtime_libs.loaded", "pass") | {
        "summary": "loaded libnvJitLink 13.0 (pip nvidia-nvjitlink 13.0.88), libcusparse 12.6.3.3"}])
    assert suite.judge(SC["older-nvjitlink-on-library-path"], ok) == []
    used = report(degraded=[{"check": "runtime_libs.loaded", "codes": ["library-shadowed"]}],
                  results=[result("runtime_libs.loaded", "warn", [("library-shadowed", "loaded: /tmp/x")]) | {
                      "summary": "loaded libnvJitLink 13.0 (no package)"}])
    problems = suite.judge(SC["older-nvjitlink-on-library-path"], used)
    assert any("runtime_libs.loaded should pass" in p for p in problems)
    assert any("summary lacks '(pip nvidia-nvjitlink'" in p for p in problems)
    named = report(degraded=[{"check": "runtime_libs.loaded", "codes": ["library-shadowed", "library-loaded-twice"]}],
                   results=[{"id": "runtime_libs.loaded", "status": "warn", "findings": [
                       {"code": "library-shadowed",
                        "evidence": "loaded: /o/older-nvjitlink-preloaded/nvjitlink-13.0.39/libnvJitLink.so.13",
                        "message": "LD_PRELOAD puts /o/... into the process"},
                       {"code": "library-loaded-twice", "evidence": "", "message": ""}]}])
    assert suite.judge(SC["older-nvjitlink-preloaded"], named) == []
    assert any("expected finding library-loaded-twice" in p
               for p in suite.judge(SC["older-nvjitlink-preloaded"], report(results=[result(
                   "runtime_libs.loaded", "warn", [("library-shadowed", "LD_PRELOAD puts nvjitlink-13.0.39/"
                                                   "libnvJitLink.so.13")])])))


# --- process limits and a GPU shared with another process (gpu23b) ---------------------------

def _need_prlimit():
    if not shutil.which("prlimit"):
        pytest.skip("needs prlimit (util-linux) to set the job's limits")


def test_the_address_space_limit_reaches_checks_probe(tmp_path, stack_python):
    """address-space-limit: check runs under prlimit --as, and cuda.driver_api's probe (a child of
    check) reads the same limit, as the probes of a user's job would. Whether cuInit then fails is
    the H200's to show (no libcuda here)."""
    _need_prlimit()
    setup = SC["address-space-limit"].setup(None, tmp_path)
    assert setup.wrap == ["prlimit", f"--as={suite.ADDRESS_SPACE_LIMIT}", "--"]
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(stack_python, ["--only", "cuda.driver_api"]), env=env,
                       capture_output=True, text=True, timeout=300)
    rep = json.loads(p.stdout)
    facts = next(r for r in rep["results"] if r["id"] == "cuda.driver_api")["facts"]
    assert facts["rlimit_as"] == {"soft": suite.ADDRESS_SPACE_LIMIT, "hard": suite.ADDRESS_SPACE_LIMIT}


def test_check_names_the_open_files_limit_and_the_dataloader_fails_under_it(tmp_path, stack_python):
    """open-files-limit, for real on CPU: check (its probe inherits prlimit --nofile=64) reports the
    limit as the scenario expects, and the user's DataLoader job with 64-tensor batches fails under
    it with torch's words, which explain reads as the open-files limit; without the limit it runs."""
    _need_prlimit()
    sc = SC["open-files-limit"]
    setup = sc.setup(None, tmp_path)
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(stack_python, ["--only", "multi_gpu.open_files"]), env=env,
                       capture_output=True, text=True, timeout=300)
    rep = json.loads(p.stdout)
    assert [(d["check"], d["codes"]) for d in rep["diagnosis"]["degraded"]] == [
        ("multi_gpu.open_files", ["open-files-limit-low"])]
    assert suite.judge(sc, rep) == []
    (proof,) = sc.proofs
    argv = [stack_python, str(proof.script), *proof.args]
    failed = subprocess.run(setup.wrap + argv, env=setup.env, capture_output=True, text=True, timeout=300)
    assert failed.returncode != 0
    assert "Too many open files" in failed.stderr
    from stackpeel.explain import explain_text
    assert explain_text(failed.stdout + failed.stderr).root.code in sc.explain
    ok = subprocess.run(argv, env=setup.env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "user dataloader OK" in ok.stdout, ok.stderr[-2000:]


def test_the_teardown_runs_whatever_check_does(tmp_path, stack_python):
    """What a setup starts is stopped when its scenario ends, here after a check that printed no
    JSON (the earliest way out of run_scenario)."""
    stopped = []
    sleeper = subprocess.Popen(["sleep", "600"])

    def setup(m, tmp):
        return suite.Setup(suite.base_env(), wrap=["false"], teardown=[lambda: suite._stop(sleeper),
                                                                     lambda: stopped.append(True)])
    sc = suite.Scenario("teardown-probe", "a setup with something to stop", setup)
    m = suite.Machine(python=stack_python, gpus=0, is_root=False, unshare=False, fla=False, triton_version=None,
                      include_dir=None, ptxas=None, cc_major=None)
    rec = suite.run_scenario(sc, m, tmp_path, {"PYTHONPATH": ""}, 60)
    assert rec["status"] == "fail" and "printed no JSON" in rec["problems"][0]
    assert stopped == [True] and sleeper.poll() is not None


def test_the_memory_holder_setup_returns_and_stops_its_process_without_a_gpu(tmp_path, stack_python):
    """gpu-memory-held-by-another-process's setup on a machine without a GPU: the holder (the real
    script on the target's torch) says why it holds nothing and exits; the setup neither hangs nor
    leaves it behind, and fails as a setup (no fault to judge check against)."""
    m = suite.Machine(python=stack_python, gpus=0, is_root=False, unshare=False, fla=False, triton_version=None,
                      include_dir=None, ptxas=None, cc_major=None)
    with pytest.raises(RuntimeError, match="did not hold the memory"):
        suite.gpu_memory_held(m, tmp_path)
    assert not (tmp_path / "holder.json").exists()
    assert (tmp_path / "holder.log").read_text().strip()  # torch's own complaint: no CUDA here
    # the suite records such a scenario as failed in its setup, never as a judged run
    rec = suite.run_scenario(dataclasses_replace(SC["gpu-memory-held-by-another-process"], needs=lambda m: None),
                             m, tmp_path / "run", {}, 30)
    assert rec["status"] == "fail" and rec["problems"][0].startswith("the fault could not be set up")
    sc = SC["gpu-memory-held-by-another-process"]
    # explain: the holder first where torch's numbers show it (>= 2.1's message), else the GPU out of memory
    assert sc.findings == ["gpu-memory-held-by-other-processes"]
    assert sc.explain == ["gpu-memory-held-by-other-processes", "gpu-out-of-memory"]
    assert sc.proofs[0].args == ["--alloc-gib", str(suite.USER_MODEL_GIB)] and suite.USER_MODEL_GIB > \
        suite.HOLDER_LEAVES_GIB


def test_check_names_the_read_only_home_as_the_triton_cache_fault(tmp_path, stack_python):
    """home-read-only-default-cache's check side on CPU: with HOME read-only and no TRITON_CACHE_DIR,
    toolchain.triton_cache (the existing triton-cache-unusable code) is the root, says the folder
    came from HOME and keeps the OSError verbatim."""
    if os.geteuid() != 0 or not shutil.which("unshare") or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs root and unshare -m for the read-only HOME")
    sc = SC["home-read-only-default-cache"]
    setup = sc.setup(None, tmp_path)
    assert "TRITON_CACHE_DIR" not in setup.env and "TRITON_HOME" not in setup.env
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(stack_python, ["--only", "toolchain.triton_cache"]), env=env,
                       capture_output=True, text=True, timeout=300)
    rep = json.loads(p.stdout)
    assert suite.judge(sc, rep) == []
    (tc,) = [r for r in rep["results"] if r["id"] == "toolchain.triton_cache"]
    assert str(tmp_path / "home-read-only" / ".triton" / "cache") in tc["findings"][0]["message"]


# ---- tmp24: tmp-read-only and tmp-full, their setups run here for real (CPU) ---------------------------

TRITON_BUILD = ("from triton.runtime.build import compile_module_from_src as c\n"
                "src = '#include <Python.h>\\nstatic struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"t24\", 0, -1, 0};\\n"
                "PyMODINIT_FUNC PyInit_t24(void) { return PyModule_Create(&d); }\\n'\n"
                "print('built', c(src, 't24').__file__)\n")


@pytest.mark.parametrize("name", ["tmp-read-only", "tmp-full"])
def test_temp_dir_scenarios_name_the_directory_and_break_tritons_own_build(name, tmp_path, stack_python):
    """The scenario's fault on this CPU machine: check (its toolchain layer) is judged as the suite judges
    it, and Triton's own build of a C helper, the step the user's kernel takes first on a fresh cache,
    fails with the text the scenario's proof expects. The GPU run adds the user's kernel itself."""
    if os.geteuid() != 0 or not shutil.which("unshare") or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs root and unshare -m for the private /tmp")
    hidden = [p for p in (suite.REPO, Path(sys.executable), Path(stack_python))
              if os.path.realpath(str(p)) == "/tmp" or os.path.realpath(str(p)).startswith(("/tmp/", "/var/tmp/"))]
    if name == "tmp-full" and hidden:
        pytest.skip(f"{hidden[0]} lies under /tmp, which the full tmpfs would hide")
    sc = SC[name]
    setup = sc.setup(None, tmp_path)
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(stack_python, ["--only", "toolchain.extension_build,triton.build,"
                                                                             "triton.kernel_launch"]),
                       env=env, capture_output=True, text=True, timeout=300)
    rep = json.loads(p.stdout)
    assert suite.judge(sc, rep) == []
    assert p.returncode == 1
    built = subprocess.run(setup.wrap + [stack_python, "-c", TRITON_BUILD], env=setup.env, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode != 0 and "built" not in built.stdout
    assert sc.proofs[0].expect_text in built.stderr, built.stderr[-2000:]
    from stackpeel.explain import explain_text
    assert explain_text(built.stdout + built.stderr).root.code in sc.explain
    # the same build with /tmp untouched succeeds: the fault, not this machine, broke it
    ok = subprocess.run([stack_python, "-c", TRITON_BUILD], env=dict(setup.env, TRITON_CACHE_DIR=str(tmp_path / "ok")),
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "built" in ok.stdout, ok.stderr[-2000:]
