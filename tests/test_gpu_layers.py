"""The gpu, cuda and torch layers: verdicts from recorded facts, and the real probes end to end.

Hardware this machine lacks is stood in for by a fake ``libcuda.so.1`` and
``libnvidia-ml.so.1`` compiled here from ``tests/data/gpu/*.c`` (put on LD_LIBRARY_PATH)
and a fake /proc, /dev and /sys tree handed to the probes as their ``root`` option. The
torch layer runs against the real CPU torch of the stack venv.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

import pytest

from stackpeel import engine
from stackpeel.checks import cuda as cuda_checks
from stackpeel.checks import gpu as gpu_checks
from stackpeel.checks import runtime_libs as runtime_libs_checks
from stackpeel.checks import torch_layer as torch_checks
from stackpeel.checks.base import Check, Context
from stackpeel.codes import all_codes
from stackpeel.diagnosis import diagnose
from stackpeel.model import CheckResult, Severity, Status
from stackpeel.registry import LAYERS
from stackpeel.runner import run_probe
from stackpeel.runner.child import PROBES_DIR
from shapes import answer

DATA = Path(__file__).parent / "data" / "gpu"
HOST = {"pkg_manager": "apt", "is_root": False, "distro_id": "ubuntu"}
TARGET = {"python": "/opt/venv/bin/python"}
H200_ARCH = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
CU126_ARCH = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
NVRM_OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
             "GCC version:  gcc version 15.3.0 (GCC) \n")
NVRM_PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"


# --- helpers -----------------------------------------------------------------------

def load_probe(name: str):
    """A probe module loaded the way the runner loads it (after _common, by path)."""
    for mod in ("_common", name):
        key = "_stackpeel_probe_" + mod
        if key not in sys.modules:
            spec = importlib.util.spec_from_file_location(key, PROBES_DIR / f"{mod}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[key] = module
            spec.loader.exec_module(module)
    return sys.modules["_stackpeel_probe_" + name]


def fake_driver_mount(tmp_path, where: str = "usr/local/nvidia/lib64") -> str:
    """A root (``tmp_path``) whose ``where`` holds a libcuda.so.1, as a platform mounts the host's
    driver into a container (GKE, nvidia-docker: /usr/local/nvidia/lib64); returns the root."""
    d = tmp_path / where
    d.mkdir(parents=True)
    (d / "libcuda.so.1").write_bytes(b"\x7fELF")
    return str(tmp_path)


def evaluate(cls, facts, deps=None, dep_status=None, host=HOST):
    return cls().evaluate(answer(cls, facts), Context(host, TARGET, deps or {}, dep_status or {}))


def codes(verdict):
    return [f.code for f in verdict.findings]


def commands(finding):
    return [c.command for c in finding.remedy.commands]


@pytest.fixture(scope="session")
def fake_libs(tmp_path_factory) -> Dict[str, str]:
    """Fake driver libraries: ``good`` matches kernel 580.159.04, ``old`` is libcuda 575.57.08."""
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the fake driver libraries")
    base = tmp_path_factory.mktemp("fakelibs")
    out = {}
    for label, version in (("good", "580.159.04"), ("old", "575.57.08")):
        d = base / label
        d.mkdir()
        for src, soname in (("fake_libcuda.c", "libcuda.so.1"), ("fake_nvml.c", "libnvidia-ml.so.1")):
            real = d / f"{soname[:-2]}.{version}"
            subprocess.run(["gcc", "-Wall", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(real),
                            str(DATA / src)], check=True, capture_output=True, timeout=60)
            (d / soname).symlink_to(real.name)
        out[label] = str(d)
    return out


def make_tree(root: Path, driver: Optional[str] = "580.159.04", gpus: int = 1, uvm: bool = True,
              modules=("nvidia_uvm", "nvidia"), pci: bool = True, mode: int = 0o666) -> str:
    """A fake /proc, /dev and /sys as a GPU host presents them (device nodes as plain files)."""
    def put(rel: str, text: str = "", file_mode: Optional[int] = None) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if file_mode is not None:
            p.chmod(file_mode)

    if driver:
        put("proc/driver/nvidia/version", NVRM_OPEN.replace("580.159.04", driver))
    put("proc/modules", "".join(f"{m} 1830912 - - Live 0x0000000000000000 (O)\n" for m in modules) +
        "virtio_net 65536 0 - Live 0x0000000000000000\n")
    put("proc/devices", "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n241 nvidia-caps\n"
                        "\nBlock devices:\n  7 loop\n")
    put("proc/sys/kernel/osrelease", "6.8.0-fake\n")
    (root / "dev").mkdir(parents=True, exist_ok=True)
    if driver:
        put("dev/nvidiactl", file_mode=mode)
        for i in range(gpus):
            put(f"dev/nvidia{i}", file_mode=mode)
        if uvm:
            put("dev/nvidia-uvm", file_mode=mode)
            put("dev/nvidia-uvm-tools", file_mode=mode)
        put("dev/nvidia-caps/nvidia-cap1", file_mode=0o400)
    if pci:
        for i in range(gpus):
            put(f"sys/bus/pci/devices/0000:{i + 0x18:02x}:00.0/vendor", "0x10de\n")
            put(f"sys/bus/pci/devices/0000:{i + 0x18:02x}:00.0/class", "0x030200\n")
            put(f"sys/bus/pci/devices/0000:{i + 0x18:02x}:00.0/device", "0x2335\n")
    return str(root)


def rooted(root: str):
    """The gpu and cuda checks with their probes pointed at a fake tree."""
    out = []
    for cls in (gpu_checks.KernelDriver, gpu_checks.DeviceNodes, gpu_checks.Nvml, gpu_checks.VisibleDevices,
                cuda_checks.DriverApi):
        out.append(type(cls.__name__, (cls,), {"probe_options": {"root": root}}))
    return out + [gpu_checks.NvlinkFabric]  # reads nvidia-smi from PATH: absent in the fake tree, so it skips


def fake_env(clean_env, libdir: str, **extra) -> Dict[str, str]:
    env = dict(clean_env)
    env["LD_LIBRARY_PATH"] = libdir
    for k in ("FAKE_GPUS", "FAKE_CUDA_INIT", "FAKE_CUDA_DRIVER_VERSION", "FAKE_NVML_INIT", "FAKE_NVML_DRIVER",
              "FAKE_NVML_COMPUTE_MODE", "NVIDIA_VISIBLE_DEVICES"):
        env.pop(k, None)
    env.update(extra)
    return env


def run_fake(root: str, env, python: str = sys.executable, extra=(), only=()):
    return engine.check(python=python, env=env, checks=rooted(root) + list(extra), only=list(only), plugins=False)


def roots(report):
    return [(r.check_id, list(r.codes)) for r in report.diagnosis.blocking]


def symptoms(report, root_id):
    for r in report.diagnosis.blocking + report.diagnosis.degraded:
        if r.check_id == root_id:
            return [s.check_id for s in r.symptoms]
    return []


no_driver_here = pytest.mark.skipif(os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl"),
                                    reason="this machine has an NVIDIA driver")


# --- the real machine ---------------------------------------------------------------

@no_driver_here
def test_real_machine_without_gpu_blames_the_missing_driver(stack_python, clean_env):
    report = engine.check(python=stack_python, only=["torch", "gpu", "cuda"], env=clean_env, plugins=False)
    # the stack venv's torch is a +cpu wheel: a root of its own, since no driver would fix it
    assert roots(report) == [("gpu.kernel_driver", ["no-nvidia-driver"]), ("torch.cuda", ["torch-cpu-only-build"])]
    assert "cuda.driver_api" in symptoms(report, "gpu.kernel_driver")
    assert report.diagnosis.errors == ()
    root = report.result("gpu.kernel_driver").findings[0]
    assert "No NVIDIA kernel driver" in root.message and "FLA" in root.message and "Triton" in root.message
    t = report.result("torch.cuda")
    assert t.facts["installed"] is True and t.facts["version"].startswith("2.")
    assert t.facts["cuda"] is None and t.facts["available"] is False and t.facts["arch_list"] == []
    assert codes(t) == ["torch-cpu-only-build"]
    d = report.result("cuda.driver_api")
    assert d.facts["libcuda_loaded"] is False and "libcuda.so.1" in d.facts["load_error"]
    assert report.result("gpu.device_nodes").status is Status.FAIL  # a symptom, with no second root cause
    assert report.result("gpu.visible_devices").status is Status.SKIP


# --- CUDA_VISIBLE_DEVICES -------------------------------------------------------------

PARSE_CASES = [
    (None, "all", list(range(64))),
    ("", "ordinals", []),
    ("0", "ordinals", [0]),
    ("1,0", "ordinals", [1, 0]),
    ("0, 1", "ordinals", [0, 1]),
    ("1gpu2,2ampere", "ordinals", [1, 2]),
    ("0,-1,1", "ordinals", [0]),
    ("-1", "ordinals", []),
    ("0,0", "ordinals", []),
    ("1,2,1", "ordinals", []),
    ("abc", "ordinals", []),
    ("0,abc,1", "ordinals", [0]),
    ("+1", "ordinals", [1]),
    ("GPU-fa4e,GPU-1234", "uuids", ["GPU-fa4e", "GPU-1234"]),
    ("GPU-fa4e,0", "uuids", ["GPU-fa4e"]),
    ("GPU-a,GPU-a", "uuids", []),
    ("MIG-5c3a,MIG-77", "mig", ["MIG-5c3a", "MIG-77"]),
]


@pytest.mark.parametrize("value, kind, entries", PARSE_CASES)
def test_cuda_visible_devices_parsing_table(value, kind, entries):
    parsed = load_probe("gpu").parse_visible_devices(value)
    assert parsed["kind"] == kind
    assert parsed["entries"] == entries


def test_cuda_visible_devices_parsing_agrees_with_real_torch(stack_python):
    """torch's own _parse_visible_devices is the oracle (pure Python, works on the CPU build)."""
    code = ("import json, os, sys, torch.cuda as c\nout = []\n"
            "for v in json.loads(sys.argv[1]):\n"
            "    os.environ.pop('CUDA_VISIBLE_DEVICES', None)\n"
            "    if v is not None: os.environ['CUDA_VISIBLE_DEVICES'] = v\n"
            "    out.append(c._parse_visible_devices())\nprint(json.dumps(out))\n")
    values = [v for v, _, _ in PARSE_CASES]
    proc = subprocess.run([stack_python, "-c", code, json.dumps(values)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    torch_says = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = [load_probe("gpu").parse_visible_devices(v)["entries"] for v in values]
    assert ours == torch_says


UUIDS = ["GPU-fa4e0000-0000-0000-0000-000000000000", "GPU-fa4e0000-0000-0000-0000-000000000001"]


@pytest.mark.parametrize("value, n, expected", [
    (None, 2, (2, None)),
    ("1", 2, (1, None)),
    ("0,5", 2, (1, "5")),
    ("3", 2, (0, "3")),
    ("GPU-fa4e0000-0000-0000-0000-000000000001", 2, (1, None)),
    ("GPU-fa4e", 2, (0, "GPU-fa4e")),  # ambiguous prefix: torch stops there
    ("GPU-dead", 2, (0, "GPU-dead")),
    ("MIG-abc", 2, (None, None)),
])
def test_visible_count_follows_torch_device_count_nvml(value, n, expected):
    parsed = load_probe("gpu").parse_visible_devices(value)
    assert gpu_checks.visible_count(parsed, n, UUIDS) == expected


def _visible(value, n=2):
    facts = load_probe("gpu").visible_devices_facts("/nonexistent", env={} if value is None else
                                                    {"CUDA_VISIBLE_DEVICES": value})
    nvml = {"loaded": True, "init_error": None, "device_count": n,
            "devices": [{"index": i, "name": "NVIDIA H200", "uuid": UUIDS[i], "cc": "9.0"} for i in range(n)]}
    return evaluate(gpu_checks.VisibleDevices, facts, {"gpu.nvml": nvml})


@pytest.mark.parametrize("value, status, code, severity, words", [
    (None, Status.PASS, None, None, "all 2 GPU(s) visible"),
    ("1", Status.PASS, None, None, "1 of 2"),
    ("", Status.FAIL, "cuda-visible-devices-hides-gpus", Severity.BLOCKING, "empty string"),
    ("0,0", Status.FAIL, "cuda-visible-devices-hides-gpus", Severity.BLOCKING, "repeats"),
    ("2", Status.FAIL, "cuda-visible-devices-hides-gpus", Severity.BLOCKING, "only 2 GPU(s)"),
    ("0,7,1", Status.WARN, "cuda-visible-devices-hides-gpus", Severity.DEGRADED, "stops at '7'"),
])
def test_visible_devices_verdicts(value, status, code, severity, words):
    v = _visible(value)
    assert v.status is status
    text = v.summary + " ".join(f.message for f in v.findings)
    assert words in text
    if code:
        assert codes(v) == [code] and v.findings[0].severity is severity
        assert "unset CUDA_VISIBLE_DEVICES" in commands(v.findings[0])[0]


def test_visible_devices_without_any_gpu_is_not_a_root_cause():
    v = evaluate(gpu_checks.VisibleDevices, load_probe("gpu").visible_devices_facts("/nonexistent", env={
        "CUDA_VISIBLE_DEVICES": ""}), {"gpu.nvml": {"loaded": False}})
    assert v.status is Status.SKIP and not v.findings


# --- kernel driver, device nodes, NVML: recorded facts ----------------------------------

def test_nvrm_version_parsing():
    parse = load_probe("gpu").parse_nvrm_version
    assert parse(NVRM_OPEN) == ("580.159.04", "open")
    assert parse(NVRM_PROPRIETARY) == ("535.129.03", "proprietary")
    assert parse("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06  Release Build") == \
        ("570.124.06", "open")
    assert parse(None) == (None, None)


def _driver_facts(**kw):
    facts = {"proc_version_text": None, "driver_version": None, "module_flavour": None, "modules": [],
             "nvidiactl_exists": False, "wsl": {"dxg": False, "lib_dir": False, "libcuda": False},
             "pci_gpus": [], "kernel": "6.8.0", "container": "none"}
    facts.update(kw)
    return facts


@pytest.mark.parametrize("facts, status, words", [
    (_driver_facts(driver_version="580.159.04", module_flavour="open", modules=["nvidia"]), Status.PASS,
     "NVIDIA driver 580.159.04, open kernel module"),
    (_driver_facts(modules=["nvidia", "nvidia_uvm"]), Status.PASS, "version unknown"),
    (_driver_facts(wsl={"dxg": True, "lib_dir": True, "libcuda": True}), Status.PASS, "WSL2"),
    (_driver_facts(nvidiactl_exists=True), Status.PASS, "/dev/nvidiactl present"),
    # a node that opens (or is refused by permissions or a device cgroup) has a driver behind it
    (_driver_facts(nvidiactl_exists=True, nvidiactl_open_error=None), Status.PASS, "/dev/nvidiactl present"),
    (_driver_facts(nvidiactl_exists=True, nvidiactl_open_error="EACCES"), Status.PASS, "/dev/nvidiactl present"),
    (_driver_facts(nvidiactl_exists=True, nvidiactl_open_error="EPERM"), Status.PASS, "/dev/nvidiactl present"),
    # left behind with no driver: the open says ENXIO (no device at that major/minor) or ENODEV
    (_driver_facts(nvidiactl_exists=True, nvidiactl_open_error="ENXIO"), Status.FAIL, "fails with ENXIO or ENODEV"),
    (_driver_facts(nvidiactl_exists=True, nvidiactl_open_error="ENODEV"), Status.FAIL, "left behind"),
    (_driver_facts(), Status.FAIL, "no GPU visible to it"),
    (_driver_facts(pci_gpus=None), Status.FAIL, "not readable"),
    (_driver_facts(wsl={"dxg": True, "lib_dir": False, "libcuda": False}), Status.FAIL, "Windows"),
])
def test_kernel_driver_verdicts(facts, status, words):
    v = evaluate(gpu_checks.KernelDriver, facts)
    assert v.status is status
    assert words in v.summary + " ".join(f.message for f in v.findings)
    if status is Status.FAIL:
        assert codes(v) == ["no-nvidia-driver"]
        assert not commands(v.findings[0])  # no install command when no NVIDIA GPU was seen


def test_orphaned_nvidiactl_is_no_driver_with_its_evidence():
    v = evaluate(gpu_checks.KernelDriver, _driver_facts(nvidiactl_exists=True, nvidiactl_open_error="ENXIO",
                                                        container="docker"))
    f = v.findings[0]
    assert "/dev/nvidiactl: present, but opening it fails with ENXIO" in f.evidence
    assert "neither /dev/nvidiactl" not in f.message  # the node is there: the sentence says what is wrong with it
    # a driver that answers wins over the node's open (a version or a module in /proc)
    v = evaluate(gpu_checks.KernelDriver, _driver_facts(driver_version="580.159.04", nvidiactl_exists=True,
                                                        nvidiactl_open_error="ENXIO"))
    assert v.status is Status.PASS


def test_no_driver_with_gpu_on_pci_offers_the_install():
    pci = [{"address": "0000:18:00.0", "id": "10de:2335", "class": "0x030200", "driver": None}]
    v = evaluate(gpu_checks.KernelDriver, _driver_facts(pci_gpus=pci))
    f = v.findings[0]
    assert "10de:2335" in f.message and "not installed or not loaded" in f.message
    assert any("apt-get install -y nvidia-open" in c for c in commands(f))
    assert not any("dnf" in c for c in commands(f))  # another distro's command is left out


def _node(path, exists=True, mode="crw-rw-rw-", err=None, access=True, group="root"):
    return {"path": path, "exists": exists, "type": "char" if exists else None, "major": 195, "minor": 0,
            "mode": mode if exists else None, "uid": 0, "gid": 0, "group": group, "access_rw": access if exists else None,
            "open_error": err}


def _nodes_facts(ctl=True, gpus=1, uvm=True, container="none", **kw):
    facts = {"nvidiactl": _node("/dev/nvidiactl", ctl), "gpus": [_node(f"/dev/nvidia{i}") for i in range(gpus)],
             "uvm": _node("/dev/nvidia-uvm", uvm), "uvm_tools": _node("/dev/nvidia-uvm-tools", uvm),
             "caps": [], "dxg": _node("/dev/dxg", False), "modules": ["nvidia", "nvidia_uvm"],
             "proc_devices": {"nvidia": 195, "nvidiactl": 195, "nvidia-uvm": 238}, "container": container,
             "container_signals": [], "hostname": "trainbox", "user": "alice", "uid": 1000, "groups": [1000],
             "env": {"NVIDIA_VISIBLE_DEVICES": None, "NVIDIA_DRIVER_CAPABILITIES": None}}
    facts.update(kw)
    return facts


DRIVER_OK = {"gpu.kernel_driver": {"driver_version": "580.159.04"}}


@pytest.mark.parametrize("container, present, absent", [
    ("docker", "nvidia-ctk runtime configure --runtime=docker", "lxc.cgroup2"),
    ("podman", "nvidia.com/gpu=all", "lxc.cgroup2"),
    ("lxc", "c 238:* rwm", "nvidia-ctk"),
    ("none", None, "nvidia-ctk"),
])
def test_device_nodes_missing_fix_fits_the_container(container, present, absent):
    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(ctl=False, gpus=0, uvm=False, container=container), DRIVER_OK,
                 {"gpu.kernel_driver": Status.PASS})
    assert v.status is Status.FAIL and codes(v) == ["device-nodes-missing"]
    cmds = " ".join(commands(v.findings[0]))
    if present:
        assert present in cmds
    assert absent not in cmds
    assert "580.159.04" in v.findings[0].message


def test_device_nodes_without_driver_are_a_symptom_not_a_finding():
    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(ctl=False, gpus=0, uvm=False), {},
                 {"gpu.kernel_driver": Status.FAIL})
    assert v.status is Status.FAIL and v.findings == ()


def test_uvm_missing_and_permissions():
    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(uvm=False, modules=["nvidia"]), DRIVER_OK)
    assert codes(v) == ["nvidia-uvm-missing"] and "not loaded" in v.findings[0].message
    assert any("nvidia-modprobe -u -c=0" in c for c in commands(v.findings[0]))
    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(uvm=False), DRIVER_OK)
    assert codes(v) == ["nvidia-uvm-missing"] and "not root" in v.findings[0].message
    assert "read-only" not in v.findings[0].message
    # who can create the node at the first CUDA call: root, or a setuid-root nvidia-modprobe (as on the H200)
    for extra in ({"uid": 0}, {"nvidia_modprobe": {"path": "/usr/bin/nvidia-modprobe", "setuid_root": True}}):
        v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(uvm=False, **extra), DRIVER_OK)
        assert v.status is Status.PASS and v.facts["uvm_on_demand"] is True and "first CUDA call" in v.summary

    denied = _nodes_facts()  # the group is the node's (below)
    denied["gpus"] = [_node("/dev/nvidia0", mode="crw-rw----", access=False, group="video",
                            err={"errno": "EACCES", "message": "[Errno 13] Permission denied: '/dev/nvidia0'"})]
    v = evaluate(gpu_checks.DeviceNodes, denied, DRIVER_OK)
    assert codes(v) == ["device-permission-denied"]
    assert "sudo usermod -aG video alice" in commands(v.findings[0])[0]

    revoked = _nodes_facts(container="docker")
    revoked["nvidiactl"] = _node("/dev/nvidiactl", err={"errno": "EPERM", "message": "Operation not permitted"})
    v = evaluate(gpu_checks.DeviceNodes, revoked, DRIVER_OK)
    assert codes(v) == ["gpu-access-revoked"] and "cgroup" in v.findings[0].message

    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(gpus=8), DRIVER_OK)
    assert v.status is Status.PASS and "8 GPU node(s)" in v.summary


def test_uvm_missing_on_a_read_only_dev_is_not_creatable_even_for_root():
    """A container's /dev mounted read-only (the GPU fault suite's nvidia-uvm-node-missing does
    this): neither root's libcuda nor a setuid nvidia-modprobe can create the node, so the missing
    node is the root cause, not something cuInit may repair."""
    for extra in ({"uid": 0}, {"nvidia_modprobe": {"path": "/usr/bin/nvidia-modprobe", "setuid_root": True}}):
        v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(uvm=False, dev_read_only=True, **extra), DRIVER_OK)
        assert v.status is Status.FAIL and codes(v) == ["nvidia-uvm-missing"]
        assert "/dev: a read-only mount" in v.findings[0].evidence
        assert "/dev is a read-only mount" in v.findings[0].message and "not root" not in v.findings[0].message
        assert not v.facts.get("uvm_on_demand")
    # near miss: a writable /dev (False) or an old snapshot without the fact keeps the on-demand pass
    for extra in ({"dev_read_only": False}, {}):
        v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(uvm=False, uid=0, **extra), DRIVER_OK)
        assert v.status is Status.PASS and v.facts["uvm_on_demand"] is True


def test_nodes_that_exist_but_do_not_open_are_not_called_openable():
    """Nodes left with no device behind them (the driver unloaded; fake nodes made with mknod on a
    machine without the driver, as tests/test_scenarios.py does) open with ENXIO."""
    stale = _nodes_facts()
    for key in ("nvidiactl", "uvm"):
        stale[key]["open_error"] = {"errno": "ENXIO", "message": "[Errno 6] No such device or address"}
    v = evaluate(gpu_checks.DeviceNodes, stale, DRIVER_OK)
    assert "openable" not in v.summary
    assert "/dev/nvidiactl fails with ENXIO; /dev/nvidia-uvm fails with ENXIO" in v.summary
    v = evaluate(gpu_checks.DeviceNodes, _nodes_facts(), DRIVER_OK)  # control: every node opens
    assert "present and openable read-write" in v.summary
    # with gpu.kernel_driver failing on them (no driver behind the nodes), the nodes' check is its symptom
    v = evaluate(gpu_checks.DeviceNodes, stale, {"gpu.kernel_driver": {}}, {"gpu.kernel_driver": Status.FAIL})
    assert v.status is Status.FAIL and not v.findings and "no NVIDIA driver behind the nodes" in v.summary
    # near miss: refused by permissions, not ENXIO: a finding of its own, not a symptom
    denied = _nodes_facts()
    denied["nvidiactl"]["open_error"] = {"errno": "EACCES", "message": "[Errno 13] Permission denied"}
    v = evaluate(gpu_checks.DeviceNodes, denied, {"gpu.kernel_driver": {}}, {"gpu.kernel_driver": Status.FAIL})
    assert codes(v) == ["device-permission-denied"]


def _nvml_facts(**kw):
    facts = {"loaded": True, "load_error": None, "path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04",
             "path_version": "580.159.04", "init_error": None, "driver_version": "580.159.04",
             "nvml_version": "13.580.159.04", "cuda_driver_version": 13000, "device_count": 1,
             "devices": [{"index": 0, "name": "NVIDIA H200", "uuid": UUIDS[0], "cc": "9.0"}],
             "kernel_driver_version": "580.159.04",
             "libcuda_path": "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "libcuda_path_version": "580.159.04"}
    facts.update(kw)
    return facts


@pytest.mark.parametrize("facts, status, code, severity", [
    (_nvml_facts(), Status.PASS, None, None),
    (_nvml_facts(libcuda_path="/usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08", libcuda_path_version="575.57.08"),
     Status.FAIL, "driver-library-mismatch", Severity.BLOCKING),
    (_nvml_facts(libcuda_path="/usr/local/cuda-13.0/compat/libcuda.so.580.65.06", libcuda_path_version="580.65.06"),
     Status.PASS, None, None),  # forward compat is newer on purpose; cuda.driver_api judges it
    (_nvml_facts(init_error={"code": 18, "name": "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                             "message": "Driver/library version mismatch"}),
     Status.FAIL, "driver-library-mismatch", Severity.BLOCKING),
    (_nvml_facts(loaded=False, load_error="libnvidia-ml.so.1: cannot open shared object file"),
     Status.WARN, "nvml-unavailable", Severity.DEGRADED),
])
def test_nvml_verdicts(facts, status, code, severity):
    v = evaluate(gpu_checks.Nvml, facts, {}, {"gpu.device_nodes": Status.PASS})
    assert v.status is status
    if code:
        assert codes(v) == [code] and v.findings[0].severity is severity
    else:
        assert "NVIDIA H200 (cc 9.0)" in v.summary


# --- cuda.driver_api: recorded facts ------------------------------------------------------

def _cuda_facts(**kw):
    facts = {"library": "libcuda.so.1", "libcuda_loaded": True, "load_error": None,
             "libcuda_path": "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "libcuda_path_version": "580.159.04",
             "forward_compat": False, "stub": False, "driver_version": 13000, "init_result": 0, "init_error": None,
             "device_count": 1, "devices": [{"index": 0, "name": "NVIDIA H200", "cc": "9.0", "cc_major": 9,
                                             "cc_minor": 0}],
             "kernel_driver_version": "580.159.04", "uvm_node": True, "uvm_module": True, "nvidiactl": True,
             "container": "none", "cuda_visible_devices": None}
    facts.update(kw)
    return facts


def _init(code, name, message, **kw):
    return _cuda_facts(init_result=code, init_error={"code": code, "name": name, "message": message},
                       device_count=None, devices=[], **kw)


@pytest.mark.parametrize("facts, code, words, command", [
    (_cuda_facts(libcuda_loaded=False, load_error="libcuda.so.1: cannot open shared object file: No such file"),
     "libcuda-missing", "cannot open shared object", "libnvidia-compute-580"),
    (_cuda_facts(libcuda_loaded=False, load_error="libcuda.so.1: cannot open shared object file", container="docker"),
     "container-toolkit-missing", "NVIDIA Container Toolkit", "--runtime=docker"),
    # a file named libcuda.so.1 that is no library, first on the loader path, in a container with the
    # nodes: the loader found it (the H200 fault suite's libcuda-not-elf-first), the toolkit is not why
    (_cuda_facts(libcuda_loaded=False, container="docker",
                 load_error="/tmp/bad/libcuda.so.1: invalid ELF header"),
     "libcuda-missing", "invalid ELF header", None),
    (_init(999, "CUDA_ERROR_UNKNOWN", "unknown error", uvm_node=False, uvm_module=False),
     "cuda-init-failed", "/dev/nvidia-uvm is missing", "nvidia-modprobe -u -c=0"),
    (_init(999, "CUDA_ERROR_UNKNOWN", "unknown error"), "cuda-init-failed", "cgroup", None),
    (_init(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW",
           libcuda_path="/usr/local/cuda/compat/libcuda.so.580.65.06", forward_compat=True),
     "cuda-forward-compat-unsupported", "does not support forward compatibility", "drops /usr/local/cuda/compat"),
    (_init(802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"), "fabric-manager-not-running",
     "Fabric Manager", "nvidia-fabricmanager-580"),
    (_init(34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library",
           libcuda_path="/usr/local/cuda/lib64/stubs/libcuda.so", stub=True),
     "libcuda-stub-loaded", "link-time stub", "drops /usr/local/cuda/lib64/stubs"),
    (_init(100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", cuda_visible_devices=""),
     "cuda-init-failed", "CUDA_VISIBLE_DEVICES=''", None),
])
def test_driver_api_failures(facts, code, words, command):
    v = evaluate(cuda_checks.DriverApi, facts)
    assert v.status is Status.FAIL and codes(v) == [code]
    assert words in v.findings[0].message
    assert v.facts["device_count"] == 0
    cmds = " ".join(commands(v.findings[0]))
    if command:
        assert command in cmds
    else:
        assert "nvidia-modprobe" not in cmds


# --- process limits and a shared GPU (gpu23b) ----------------------------------------------

AS_16G = {"soft": 16 << 30, "hard": 16 << 30}


def test_cuinit_failing_under_an_address_space_limit_names_the_limit():
    v = evaluate(cuda_checks.DriverApi, _init(2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", rlimit_as=AS_16G))
    assert v.status is Status.FAIL and codes(v) == ["address-space-limit"]
    f = v.findings[0]
    assert f.severity is Severity.BLOCKING
    assert "limited to 16.0 GiB" in f.message and "`ulimit -v` 16777216" in f.message
    assert "CUDA_ERROR_OUT_OF_MEMORY" in f.message
    assert "RLIMIT_AS (ulimit -v) = 17179869184 bytes" in f.evidence
    assert "ulimit -v unlimited" in " ".join(commands(f))
    # an error whose own cause is known keeps its reading under a limit too (the stub's 34)
    stub = _init(34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library", rlimit_as=AS_16G,
                 libcuda_path="/usr/local/cuda/lib64/stubs/libcuda.so", stub=True)
    assert codes(evaluate(cuda_checks.DriverApi, stub)) == ["libcuda-stub-loaded"]


def test_cuinit_out_of_memory_without_a_limit_is_not_the_limit():
    for rlimit in ({"soft": None, "hard": None}, None):
        facts = _init(2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
        if rlimit is not None:
            facts["rlimit_as"] = rlimit
        assert codes(evaluate(cuda_checks.DriverApi, facts)) == ["cuda-init-failed"]


def test_torchs_first_tensor_out_of_memory_under_a_limit_is_the_limit():
    """The H200 under 16 GiB (session 23): cuInit succeeds (cuda.driver_api: degraded), and
    torch's first one-element tensor raises 'CUDA error: out of memory'; that is the limit."""
    oom = {"op": {"type": "AcceleratorError", "message": "CUDA error: out of memory\nSearch for "
                  "`cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/...",
                  "traceback": "Traceback ...\ntorch.AcceleratorError: CUDA error: out of memory"}}
    limited = {"cuda.driver_api": dict(H200_DRIVER["cuda.driver_api"], rlimit_as=AS_16G)}
    v = evaluate(torch_checks.TorchCuda, _torch_facts(op_ok=False, op_result=None, errors=oom), limited,
                 {"cuda.driver_api": Status.WARN})
    assert v.status is Status.FAIL and codes(v) == ["address-space-limit"]
    f = v.findings[0]
    assert f.severity is Severity.BLOCKING and "first one-element tensor" in f.message
    assert "raised AcceleratorError: CUDA error: out of memory" in f.message and "limited to 16.0 GiB" in f.message
    assert "RLIMIT_AS (ulimit -v) = 17179869184 bytes" in f.evidence and "ulimit -v unlimited" in " ".join(commands(f))
    # without a limit it is the op that failed; under a limit another error stays the op's own
    assert codes(evaluate(torch_checks.TorchCuda, _torch_facts(op_ok=False, op_result=None, errors=oom),
                          H200_DRIVER)) == ["torch-gpu-op-failed"]
    other = {"op": dict(oom["op"], message="CUDA error: no kernel image is available for execution on the device")}
    assert codes(evaluate(torch_checks.TorchCuda, _torch_facts(op_ok=False, op_result=None, errors=other),
                          limited)) == ["torch-gpu-op-failed"]


def test_a_limit_cuda_starts_under_is_degraded_only():
    v = evaluate(cuda_checks.DriverApi, _cuda_facts(rlimit_as={"soft": 64 << 30, "hard": None}))
    assert v.status is Status.WARN and codes(v) == ["address-space-limit"]
    assert v.findings[0].severity is Severity.DEGRADED and "hard limit unlimited" in v.findings[0].message
    assert "virtual address space limited to 64.0 GiB" in v.summary
    assert evaluate(cuda_checks.DriverApi, _cuda_facts(rlimit_as={"soft": None, "hard": None})).status is Status.PASS


def test_the_driver_probe_reads_the_address_space_limit_it_runs_under():
    if not shutil.which("prlimit"):
        pytest.skip("needs prlimit (util-linux)")
    code = ("import json, sys; sys.path.insert(0, %r); from test_gpu_layers import load_probe; "
            "print(json.dumps(load_probe('cuda_driver').address_space_limit()))") % str(Path(__file__).parent)
    out = subprocess.run(["prlimit", f"--as={8 << 30}:{16 << 30}", "--", sys.executable, "-c", code],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             [str(Path(__file__).parent.parent / "src"), os.environ.get("PYTHONPATH", "")])))
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"soft": 8 << 30, "hard": 16 << 30}, out.stderr
    assert load_probe("cuda_driver").driver_api_facts(library="libstackpeel-absent.so.1")["rlimit_as"] == \
        load_probe("cuda_driver").address_space_limit()


def test_nvml_process_list_reads_the_structures_nvml_fills():
    gpu = load_probe("gpu")
    entries = (gpu.NvmlProcessInfo * 4)()
    entries[0].pid, entries[0].usedGpuMemory = os.getpid(), 135 << 30
    entries[1].pid, entries[1].usedGpuMemory = 999999999, gpu.NVML_VALUE_NOT_AVAILABLE
    got = gpu.process_list(entries, 2)
    assert [(p["pid"], p["used_bytes"]) for p in got] == [(os.getpid(), 135 << 30), (999999999, None)]
    assert "python" in got[0]["name"] and got[1]["name"] is None  # /proc names this process, not a gone one
    v1 = (gpu.NvmlProcessInfoV1 * 1)()
    v1[0].pid, v1[0].usedGpuMemory = 7, 1 << 20
    assert gpu.process_list(v1, 1)[0]["used_bytes"] == 1 << 20
    assert ctypes.sizeof(gpu.NvmlProcessInfo) == 24 and ctypes.sizeof(gpu.NvmlMemory) == 24


def _held(free_gib, processes, pid=1000):
    dev = {"index": 0, "name": "NVIDIA H200", "uuid": UUIDS[0], "cc": "9.0",
           "memory": {"total": 140 << 30, "free": int(free_gib * (1 << 30)), "used": 0}, "processes": processes}
    return _nvml_facts(devices=[dev], pid=pid)


def test_nvml_names_other_processes_holding_the_gpus_memory():
    holder = {"pid": 4242, "used_bytes": 135 << 30, "name": "python gpu_memory_holder.py --leave-gib 4"}
    own = {"pid": 1000, "used_bytes": 500 << 20, "name": "python probe"}
    v = evaluate(gpu_checks.Nvml, _held(4, [own, holder]), {}, {"gpu.device_nodes": Status.PASS})
    assert v.status is Status.WARN and codes(v) == ["gpu-memory-held-by-other-processes"]
    f = v.findings[0]
    assert f.severity is Severity.DEGRADED
    assert "4.0 GiB free of 140.0 GiB (2.9% free, under 10%)" in f.message
    assert "process 4242 (python gpu_memory_holder.py --leave-gib 4) holds 135.0 GiB" in f.message
    assert "pid 1000" not in f.evidence and f"pid 4242 used {135 << 30} " in f.evidence
    assert "kill 4242" in f.remedy.text
    # nothing listed (another PID namespace): said so, still reported
    v = evaluate(gpu_checks.Nvml, _held(1, []), {}, {"gpu.device_nodes": Status.PASS})
    assert codes(v) == ["gpu-memory-held-by-other-processes"] and "lists no process" in v.findings[0].message


@pytest.mark.parametrize("facts", [
    _held(20, [{"pid": 4242, "used_bytes": 120 << 30, "name": None}]),  # 14% free: busy, not full
    _nvml_facts(),  # facts recorded before the probe read memory
])
def test_nvml_leaves_a_gpu_with_room_alone(facts):
    v = evaluate(gpu_checks.Nvml, facts, {}, {"gpu.device_nodes": Status.PASS})
    assert v.status is Status.PASS and not v.findings


def test_driver_api_healthy_h200():
    v = evaluate(cuda_checks.DriverApi, _cuda_facts())
    assert v.status is Status.PASS
    assert "CUDA 13.0" in v.summary and "NVIDIA H200 (cc 9.0)" in v.summary
    assert v.facts["driver_cuda_version"] == "13.0"


# --- torch.cuda: recorded facts -------------------------------------------------------------

def _torch_facts(**kw):
    """What the probe reports on the healthy H200 (torch 2.11.0+cu130)."""
    facts = {"installed": True, "dist_version": "2.11.0+cu130", "origin": "/opt/torch/.venv/lib/python3.12/"
             "site-packages/torch", "import_error": None, "version": "2.11.0+cu130", "path": "/opt/torch/torch",
             "cuda": "13.0", "hip": None, "compiled_with_cuda": True, "available": True, "device_count": 1,
             "arch_list": list(H200_ARCH), "built_arch_flags": list(H200_ARCH), "capabilities": ["9.0"],
             "devices": [{"index": 0, "name": "NVIDIA H200", "cc": "9.0"}], "op_ok": True, "op_result": 2.0,
             "warnings": [], "errors": {}, "output": [], "env": {}}
    facts.update(kw)
    return facts


H200_DRIVER = {"cuda.driver_api": {"driver_version": 13000, "devices": [{"index": 0, "cc": "9.0"}]}}


def _gpu(name, cc):
    return {"capabilities": [cc], "devices": [{"index": 0, "name": name, "cc": cc}]}


@pytest.mark.parametrize("facts, deps, expected, index", [
    (_torch_facts(), H200_DRIVER, [], None),
    # GB10 (cc 12.1) is covered by sm_120 code
    (_torch_facts(**_gpu("NVIDIA GB10", "12.1")), H200_DRIVER, [], None),
    # B300 (cc 10.3) with a cu126 build: no sm_100
    (_torch_facts(cuda="12.6", version="2.7.0+cu126", arch_list=list(CU126_ARCH), **_gpu("NVIDIA B300", "10.3")), H200_DRIVER,
     ["torch-arch-not-supported"], "cu130"),
    (_torch_facts(cuda="12.6", version="2.7.0+cu126", arch_list=list(CU126_ARCH), **_gpu("NVIDIA B300", "10.3")),
     {"cuda.driver_api": {"driver_version": 12080}}, ["torch-arch-not-supported"], "cu128"),
    # Jetson Orin (8.7) is not covered by sm_80/sm_86
    (_torch_facts(**_gpu("Orin", "8.7")), H200_DRIVER, ["torch-arch-not-supported"], None),
    # driver CUDA 12.8 under a cu130 wheel
    (_torch_facts(available=False, arch_list=[], capabilities=[], devices=[], op_ok=None, warnings=[
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12080). "
        "Please update your GPU driver by downloading and installing a new version from the URL: "
        "http://www.nvidia.com/Download/index.aspx"]),
     {"cuda.driver_api": {"driver_version": 12080, "devices": [{"cc": "9.0"}]}}, ["driver-too-old-for-torch"],
     "cu128"),
    (_torch_facts(available=False, arch_list=[], capabilities=[], devices=[], op_ok=None,
                  warnings=["UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
                            "incorrectly set up environment"]),
     H200_DRIVER, ["torch-cuda-unavailable"], None),
    (_torch_facts(op_ok=False, op_result=None, errors={"op": {
        "type": "AcceleratorError", "message": "CUDA error: no kernel image is available for execution on the device",
        "traceback": "Traceback ...\ntorch.AcceleratorError: CUDA error: no kernel image is available"}}),
     H200_DRIVER, ["torch-gpu-op-failed"], None),
    (_torch_facts(cuda=None, version="2.11.0+cpu", available=False, arch_list=[], capabilities=[], devices=[]),
     H200_DRIVER, ["torch-cpu-only-build"], "cu130"),
])
def test_torch_verdicts(facts, deps, expected, index):
    v = evaluate(torch_checks.TorchCuda, facts, deps, {"cuda.driver_api": Status.PASS})
    assert codes(v) == expected
    assert v.status is (Status.FAIL if expected else Status.PASS)
    if not expected:
        assert "test kernel ran" in v.summary
    if index:
        f = v.findings[0]
        assert f"https://download.pytorch.org/whl/{index}" in " ".join(commands(f)) + f.message
    if "driver-too-old-for-torch" in expected:
        assert "found version 12080" in v.findings[0].evidence  # torch's own words, verbatim
        assert "CUDA 12.8" in v.findings[0].message and "CUDA 13.0" in v.findings[0].message


def test_torch_not_installed_and_import_failure():
    v = evaluate(torch_checks.TorchCuda, {"installed": False}, H200_DRIVER)
    assert v.status is Status.SKIP and codes(v) == ["torch-not-installed"]
    assert v.findings[0].severity is Severity.INFO
    v = evaluate(torch_checks.TorchCuda, {"installed": True, "origin": "/x/torch", "import_error": {
        "type": "ImportError", "message": "libcudnn.so.9: cannot open shared object file",
        "traceback": "Traceback (most recent call last):\nImportError: libcudnn.so.9: cannot open shared object file"}},
        H200_DRIVER)
    assert codes(v) == ["torch-import-failed"] and "libcudnn.so.9" in v.findings[0].evidence


@pytest.mark.parametrize("arch, cc, covered", [
    ("sm_90", "9.0", True), ("sm_80", "8.9", True), ("sm_86", "8.0", False), ("sm_80", "8.7", False),
    ("sm_87", "8.7", True), ("sm_100", "10.3", True), ("sm_100", "10.1", False), ("sm_101", "11.0", True),
    ("sm_120", "12.1", True), ("sm_120", "11.0", False), ("sm_90a", "9.0", True), ("compute_90", "9.0", True),
])
def test_arch_rule_mirrors_torch_device_requirement(arch, cc, covered):
    assert (torch_checks.covering_arch([arch], cc) is not None) is covered


@pytest.mark.parametrize("driver, ccs, index", [
    (13000, ["9.0"], "cu130"), (12080, ["9.0"], "cu128"), (12060, ["10.0"], None), (13000, ["6.1"], "cu126"),
    (12090, ["12.0"], "cu128"), (None, [], None), (11040, [], None),
])
def test_wheel_index_for_driver_and_gpus(driver, ccs, index):
    assert torch_checks.torch_index_for(driver, ccs) == index


# --- facts recorded on the real H200 ------------------------------------------------------------

RECORDED = json.loads((DATA / "h200_recorded.json").read_text())
CHAIN = (gpu_checks.KernelDriver, gpu_checks.DeviceNodes, gpu_checks.Nvml, gpu_checks.VisibleDevices,
         cuda_checks.DriverApi, torch_checks.TorchCuda)


def replay(scenario: str):
    """Evaluate the probes' facts recorded on the lent H200, in dependency order, and diagnose."""
    done: Dict[str, CheckResult] = {}
    for cls in CHAIN:
        facts = RECORDED[scenario][cls.id]["facts"]
        v = evaluate(cls, facts, {r: done[r].facts for r in cls.requires if r in done},
                     {r: done[r].status for r in cls.requires if r in done})
        done[cls.id] = CheckResult(id=cls.id, title=cls.title, layer=cls.layer, status=v.status, summary=v.summary,
                                   facts={**facts, **v.facts}, findings=v.findings, requires=cls.requires)
    return done, diagnose(list(done.values()), LAYERS)


@pytest.mark.parametrize("scenario", ["healthy", "empty", "dup", "stub", "uvm", "uvm_nonroot"])
def test_recorded_h200_facts_give_the_same_verdicts(scenario):
    done, diagnosis = replay(scenario)
    assert {cid: r.status.value for cid, r in done.items()} == \
        {cid: rec["status"] for cid, rec in RECORDED[scenario].items() if not cid.startswith("_")}
    if scenario == "stub":  # LD_LIBRARY_PATH put the toolkit's stub libcuda first
        assert [(r.check_id, list(r.codes)) for r in diagnosis.blocking] == [("cuda.driver_api", ["libcuda-stub-loaded"])]
        f = done["cuda.driver_api"].findings[0]
        assert "CUDA_ERROR_STUB_LIBRARY (34)" in f.message and "None" not in f.message
        assert any("grep -v stubs" in c for c in commands(f))
        assert "Error 34: CUDA driver is a stub library" in done["torch.cuda"].findings[0].evidence
        return
    if scenario == "uvm_nonroot":  # the same for user nobody: nothing can create the node, CUDA fails with 999
        assert [(r.check_id, list(r.codes)) for r in diagnosis.blocking] == [("gpu.device_nodes", ["nvidia-uvm-missing"])]
        assert {s.check_id for s in diagnosis.blocking[0].symptoms} == {"cuda.driver_api", "torch.cuda"}
        assert done["cuda.driver_api"].facts["init_error"]["code"] == 999
        assert "CUDA unknown error - this may be due to an incorrectly set up environment" in \
            done["torch.cuda"].findings[0].evidence
        return
    if scenario == "uvm":  # /dev/nvidia-uvm removed; root's cuInit re-created it and CUDA worked
        assert diagnosis.blocking == () and diagnosis.degraded == ()
        assert done["gpu.device_nodes"].facts["uvm_on_demand"] is True
        return
    if scenario == "healthy":
        assert diagnosis.blocking == () and diagnosis.degraded == ()
        t = done["torch.cuda"]
        assert t.facts["version"] == "2.11.0+cu130" and t.facts["arch_list"] == H200_ARCH
        assert "test kernel ran" in t.summary
        assert done["cuda.driver_api"].facts["driver_version"] == 13000
        return
    assert [(r.check_id, list(r.codes)) for r in diagnosis.blocking] == \
        [("gpu.visible_devices", ["cuda-visible-devices-hides-gpus"])]
    assert {s.check_id for s in diagnosis.blocking[0].symptoms} == {"cuda.driver_api", "torch.cuda"}
    if scenario == "dup":  # the real driver answers 101 to a repeated ordinal, torch words it as below
        assert "CUDA_ERROR_INVALID_DEVICE" in done["cuda.driver_api"].findings[0].message
        assert "Error 101: invalid device ordinal" in done["torch.cuda"].findings[0].evidence


# --- fake driver libraries end to end --------------------------------------------------------

def test_healthy_fake_h200_passes(tmp_path, fake_libs, clean_env):
    root = make_tree(tmp_path / "root")
    report = run_fake(root, fake_env(clean_env, fake_libs["good"]))
    assert {r.id: r.status for r in report.results if r.id != "gpu.nvlink_fabric"} == \
        {r.id: Status.PASS for r in report.results if r.id != "gpu.nvlink_fabric"}, [(r.id, r.summary) for r in report.results]
    assert len(report.results) == 6 and report.result("gpu.nvlink_fabric").status is Status.SKIP
    assert report.diagnosis.blocking == () and report.diagnosis.degraded == ()
    d = report.result("cuda.driver_api").facts
    assert d["libcuda_loaded"] is True and d["driver_version"] == 13000 and d["init_error"] is None
    assert d["libcuda_path"].endswith("libcuda.so.580.159.04")
    assert d["devices"] == [{"index": 0, "name": "NVIDIA H200", "cc": "9.0", "cc_major": 9, "cc_minor": 0,
                             "total_memory": 143771 * 1024 * 1024, "error": None}]
    n = report.result("gpu.nvml").facts
    assert n["driver_version"] == "580.159.04" and n["device_count"] == 1 and n["devices"][0]["cc"] == "9.0"
    assert report.result("gpu.kernel_driver").facts["pci_gpus"][0]["id"] == "10de:2335"


def test_cuinit_999_with_uvm_module_unloaded(tmp_path, fake_libs, clean_env):
    root = make_tree(tmp_path / "root", modules=("nvidia",))
    report = run_fake(root, fake_env(clean_env, fake_libs["good"], FAKE_CUDA_INIT="999"))
    assert roots(report) == [("cuda.driver_api", ["cuda-init-failed"])]
    f = report.result("cuda.driver_api").findings[0]
    assert "CUDA_ERROR_UNKNOWN (999): unknown error" in f.message and "nvidia_uvm kernel module is not loaded" in f.message
    assert any("nvidia-modprobe -u -c=0" in c for c in commands(f))


def test_cuinit_999_without_uvm_node(tmp_path, fake_libs, clean_env):
    """Without /dev/nvidia-uvm, a non-root process is stuck (device_nodes is the root); root may have
    libcuda create the node on demand, so only cuInit's failure proves it could not."""
    root = make_tree(tmp_path / "root", uvm=False)
    report = run_fake(root, fake_env(clean_env, fake_libs["good"], FAKE_CUDA_INIT="999"))
    f = report.result("cuda.driver_api").findings[0]
    assert f.code == "cuda-init-failed" and "/dev/nvidia-uvm is missing" in f.message
    if os.geteuid() == 0:
        assert roots(report) == [("cuda.driver_api", ["cuda-init-failed"])]
        assert report.result("gpu.device_nodes").facts["uvm_on_demand"] is True
        assert "creating it at first use failed" in f.message
    else:
        assert roots(report) == [("gpu.device_nodes", ["nvidia-uvm-missing"])]
        assert "cuda.driver_api" in symptoms(report, "gpu.device_nodes")


def test_empty_cuda_visible_devices_with_two_gpus_is_the_root(tmp_path, fake_libs, clean_env, stack_python):
    root = make_tree(tmp_path / "root", gpus=2)
    env = fake_env(clean_env, fake_libs["good"], FAKE_GPUS="NVIDIA H200:9.0;NVIDIA H200:9.0", CUDA_VISIBLE_DEVICES="")
    from stackpeel.checks.config import ModuleOrigins  # torch.cuda requires it (a stray torch.py),
    # runtime_libs.loaded (the libraries torch really loads) and multi_gpu.open_files (the limit a CUDA
    # context's descriptors count against)
    from stackpeel.checks.multi_gpu import OpenFiles
    report = run_fake(root, env, python=stack_python,
                      extra=[ModuleOrigins, runtime_libs_checks.LoadedLibraries, OpenFiles, torch_checks.TorchCuda])
    # the stack venv's torch is a +cpu wheel: its own root cause, beside the hidden GPUs
    assert roots(report) == [("gpu.visible_devices", ["cuda-visible-devices-hides-gpus"]),
                             ("torch.cuda", ["torch-cpu-only-build"])]
    assert set(symptoms(report, "gpu.visible_devices")) == {"cuda.driver_api"}
    assert report.result("cuda.driver_api").facts["init_error"]["name"] == "CUDA_ERROR_NO_DEVICE"
    assert "hides all 2 GPU(s)" in report.result("gpu.visible_devices").findings[0].message


def test_libcuda_of_another_version_than_the_kernel_module(tmp_path, fake_libs, clean_env):
    root = make_tree(tmp_path / "root")
    report = run_fake(root, fake_env(clean_env, fake_libs["old"]))
    assert roots(report) == [("gpu.nvml", ["driver-library-mismatch"])]
    f = report.result("gpu.nvml").findings[0]
    assert "575.57.08" in f.message and "580.159.04" in f.message


def test_fake_gb10_and_driver_too_old_facts(tmp_path, fake_libs, clean_env):
    """cuDriverGetVersion 12080 reaches torch.cuda's evaluate as the driver version (recorded torch facts)."""
    root = make_tree(tmp_path / "root")
    report = run_fake(root, fake_env(clean_env, fake_libs["good"], FAKE_GPUS="NVIDIA GB10:12.1",
                                     FAKE_CUDA_DRIVER_VERSION="12080"))
    drv = report.result("cuda.driver_api")
    assert drv.status is Status.PASS and drv.facts["devices"][0]["cc"] == "12.1"
    v = evaluate(torch_checks.TorchCuda, _torch_facts(available=False, arch_list=[], devices=[], capabilities=[]),
                 {"cuda.driver_api": drv.facts}, {"cuda.driver_api": Status.PASS})
    assert codes(v) == ["driver-too-old-for-torch"]
    assert "https://download.pytorch.org/whl/cu128" in commands(v.findings[0])[0]


# --- probes on other Pythons -----------------------------------------------------------------

def _behind_shim(py: str) -> str:
    """The interpreter behind a pyenv shim (a shim refuses to run a version that is not selected)."""
    if "/shims/" not in py:
        return py
    minor = os.path.basename(py)[len("python"):]
    hits = sorted(Path(py).parent.parent.glob(f"versions/{minor}.*/bin/python"))
    return str(hits[-1]) if hits else py


def test_probes_run_on_other_pythons(other_python, tmp_path, fake_libs, clean_env):
    other_python = _behind_shim(other_python)
    root = make_tree(tmp_path / "root", gpus=2)
    env = fake_env(clean_env, fake_libs["good"], FAKE_GPUS="NVIDIA H200:9.0;NVIDIA GB10:12.1",
                   CUDA_VISIBLE_DEVICES="1")
    inp = {"deps": {}, "options": {"root": root}}
    out = {}
    for probe in ("gpu.kernel_driver", "gpu.device_nodes", "gpu.nvml", "gpu.visible_devices",
                  "cuda_driver.driver_api", "torch_layer.torch_cuda"):
        answer = run_probe(other_python, probe, inp, 60, env=env)
        assert answer.failure is None, answer.failure
        out[probe] = answer.facts
    assert out["gpu.kernel_driver"]["driver_version"] == "580.159.04"
    assert [g["path"].rsplit("/", 1)[-1] for g in out["gpu.device_nodes"]["gpus"]] == ["nvidia0", "nvidia1"]
    assert out["gpu.nvml"]["device_count"] == 2 and out["gpu.nvml"]["devices"][1]["cc"] == "12.1"
    assert out["gpu.visible_devices"]["parsed"]["entries"] == [1]
    cuda = out["cuda_driver.driver_api"]
    assert cuda["device_count"] == 1 and cuda["devices"][0]["name"] == "NVIDIA GB10" and cuda["devices"][0]["cc"] == "12.1"
    assert out["torch_layer.torch_cuda"]["installed"] is False  # no torch in the bare interpreters


def test_every_layer_code_is_declared_with_a_fix():
    expected = {
        "gpu": {"no-nvidia-driver", "device-nodes-missing", "nvidia-uvm-missing", "device-permission-denied",
                "nvml-unavailable", "driver-library-mismatch", "cuda-visible-devices-hides-gpus",
                "container-toolkit-missing", "gpu-access-revoked", "fabric-manager-not-running",
                "fabric-not-ready", "fabric-registration-failed", "fabric-unhealthy", "nvlink-degraded"},
        "cuda": {"libcuda-missing", "cuda-init-failed", "cuda-forward-compat-unsupported"},
        "torch": {"torch-not-installed", "torch-import-failed", "torch-cpu-only-build", "driver-too-old-for-torch",
                  "torch-cuda-unavailable", "torch-arch-not-supported", "torch-gpu-op-failed"},
    }
    catalogue = all_codes()
    for layer, names in expected.items():
        # codes are never removed; other tasks add codes that only logs show (explain_only.toml)
        assert names <= {c.code for c in catalogue.values() if c.layer == layer}
        for name in names:
            assert catalogue[name].meaning and catalogue[name].fix and "{" not in catalogue[name].meaning


def test_checks_declare_the_contract():
    spec = {c.id: tuple(c.requires) for c in (gpu_checks.KernelDriver, gpu_checks.DeviceNodes, gpu_checks.Nvml,
                                              gpu_checks.VisibleDevices, gpu_checks.NvlinkFabric,
                                              cuda_checks.DriverApi, torch_checks.TorchCuda)}
    assert spec == {
        "gpu.kernel_driver": (), "gpu.device_nodes": ("gpu.kernel_driver",), "gpu.nvml": ("gpu.device_nodes",),
        "gpu.visible_devices": ("gpu.nvml",), "gpu.nvlink_fabric": ("gpu.nvml",),
        "cuda.driver_api": ("gpu.visible_devices", "gpu.nvlink_fabric"),
        "torch.cuda": ("cuda.driver_api", "config.module_origins", "runtime_libs.loaded", "multi_gpu.open_files"),
    }
    assert issubclass(torch_checks.TorchCuda, Check)


def test_other_processes_are_named_without_their_arguments(tmp_path):
    """gpu.nvml names the processes holding a GPU's memory by program and script only: their
    arguments may carry tokens."""
    script = tmp_path / "train.py"
    script.write_text("import sys, time\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(script), "--hf-token", "hf_abcdefghijklmnop", "--lr=3e-4"])
    try:
        deadline, name = time.monotonic() + 10, None
        while not (name or "").endswith("train.py") and time.monotonic() < deadline:  # until it has exec'd
            name = load_probe("gpu")._comm(proc.pid)
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert name == f"{os.path.basename(sys.executable)} train.py"
    assert load_probe("gpu")._comm(2 ** 22 + 7) is None  # no such process


@pytest.mark.parametrize("value, mode", [("3", "EXCLUSIVE_PROCESS"), ("2", "PROHIBITED"), (None, "DEFAULT"),
                                         ("-1", None)])
def test_nvml_reads_the_compute_mode_and_passes_it_on(tmp_path, fake_libs, clean_env, value, mode):
    """nvmlDeviceGetComputeMode through the real probe on the fake NVML (fd25); -1: the call fails."""
    root = make_tree(tmp_path / "root")
    extra = {"FAKE_NVML_COMPUTE_MODE": value} if value is not None else {}
    report = run_fake(root, fake_env(clean_env, fake_libs["good"], **extra))
    assert report.result("gpu.nvml").facts["devices"][0]["compute_mode"] == mode
    assert report.result("gpu.visible_devices").facts["compute_modes"] == [{"index": 0, "mode": mode}]
    assert report.result("cuda.driver_api").facts["compute_modes"] == [{"index": 0, "mode": mode}]
