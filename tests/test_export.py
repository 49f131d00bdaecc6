"""``stackpeel export``: provisioning lines derived from the installed libraries, with the reason
on each, from saved reports (offline) and end to end: a Dockerfile written for the stack of a
fresh minimal Debian root, its RUN lines executed in that root, leaves no toolchain finding
(opt-in: ``pytest -m minroot tests/test_export.py``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import export, knowledge
from stackpeel.model import Report

import rootfs

REPO = Path(__file__).resolve().parent.parent
MINROOT = REPO / "tests" / "data" / "report" / "minroot-bookworm.json"
H200_HEALTHY = REPO / "docs" / "validation" / "2026-11-29-h200" / "reports" / "healthy.json"


def _report(path: Path) -> Report:
    return Report.from_dict(json.loads(path.read_text()))


def _run(args, **kw):
    return subprocess.run([sys.executable, "-m", "stackpeel", "export", *args], capture_output=True, text=True,
                          timeout=120, **kw)


def test_needs_come_from_installed_libraries_not_from_failures():
    # the H200 machine was healthy: nothing failed, yet Triton still needs its compiler and headers
    rep = _report(H200_HEALTHY)
    assert not rep.diagnosis.blocking
    codes = [n.code for n in export.needs(rep)]
    assert {"no-c-compiler", "python-headers-missing", "file-command-missing"} <= set(codes)
    # a CUDA build of torch needs GPU device nodes, /dev/shm and memlock in a container
    assert {"device-nodes-missing", "nccl-shm-too-small", "memlock-limit-low"} <= set(codes)
    # the CPU-only stack of the minimal root needs no device settings
    cpu = {n.code for n in export.needs(_report(MINROOT))}
    assert {"no-c-compiler", "python-headers-missing"} <= cpu
    assert not cpu & {"device-nodes-missing", "nccl-shm-too-small", "memlock-limit-low", "nvcc-missing"}


def test_every_line_says_which_library_needs_it_and_why():
    kb = knowledge.load()
    text = export.render(_report(H200_HEALTHY), "dockerfile")
    lines = text.splitlines()
    runs = [i for i, ln in enumerate(lines) if ln.startswith("RUN ") and "install" in ln]
    assert runs
    for i in runs:
        assert lines[i - 1].startswith("# triton 3.6.0: "), lines[i - 1]
    assert "RUN apt-get install -y --no-install-recommends gcc libc6-dev" in lines
    assert "RUN apt-get install -y --no-install-recommends python3.12-dev python3-dev" in lines
    assert "RUN apt-get install -y --no-install-recommends file" in lines
    # the wording is the knowledge base's
    why = kb.codes["no-c-compiler"].needed_by[0]["why"]
    assert f"# triton 3.6.0: {why}" in lines
    assert "#   docker run --gpus all --shm-size=8g --ulimit memlock=-1:-1 IMAGE" in lines


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_every_format_offline_from_a_saved_report(fmt, tmp_path):
    out = tmp_path / "out"
    p = _run(["--format", fmt, "--from", str(H200_HEALTHY), "-o", str(out)])
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "triton 3.6.0" in text
    body = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if fmt in ("apt", "dockerfile"):
        assert any("gcc libc6-dev" in ln for ln in body)
    if fmt == "dnf":
        assert "dnf install -y gcc glibc-devel" in text
    if fmt == "apk":
        assert "apk add --no-cache gcc musl-dev" in text
    if fmt == "conda":
        assert "  - c-compiler" in body and "  - conda-forge" in body
    if fmt == "requirements":
        assert body == ["torch==2.11.0+cu130", "triton==3.6.0", "flash-linear-attention==0.6.0",
                        "transformers==5.17.0"]
    if fmt == "lxc":
        assert "lxc.prlimit.memlock = unlimited" in body and any(b.startswith("lxc.cgroup2.devices.allow") for b in body)
    if fmt == "cloud-init":
        assert text.startswith("#cloud-config\n") and "  - gcc" in body and "      * - memlock unlimited" in body


def test_unreadable_report_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = _run(["--from", str(bad)])
    assert p.returncode == 2 and "cannot read" in p.stderr


# ----------------------------------------------------------------------------- end to end

@pytest.fixture(scope="module")
def fresh_root(request):
    if "minroot" not in (request.config.getoption("-m") or ""):
        pytest.skip("opt-in: pytest -m minroot tests/test_export.py (builds a Debian root with mmdebstrap)")
    reason = rootfs.why_not()
    if reason:
        pytest.skip(reason)
    base = rootfs.scratch_dir()
    try:
        yield rootfs.build_base(base / "root")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.minroot
def test_dockerfile_applied_to_a_fresh_root_leaves_no_toolchain_finding(fresh_root):
    root = fresh_root
    p = rootfs.stackpeel(root, ["export", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--format", "dockerfile"])
    assert p.returncode == 0, p.stderr
    print(p.stdout)
    runs = [ln[4:] for ln in p.stdout.splitlines() if ln.startswith("RUN ")]
    assert runs[0] == "apt-get update" and any("file" in r.split() for r in runs)
    for cmd in runs:  # as docker build would: each RUN line by /bin/sh -c, in order
        r = rootfs.inside(root, cmd, env={"DEBIAN_FRONTEND": "noninteractive"}, timeout=1200)
        assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-2000:])
    q = rootfs.stackpeel(root, ["check", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--format", "json"])
    rep = Report.from_dict(json.loads(q.stdout))
    toolchain = [(r.id, f.code) for r in rep.results if r.layer == "toolchain" for f in r.findings
                 if r.status.value in ("fail", "warn")]
    # no-nvidia-driver's symptoms (libcuda discovery) are the driver's, not the toolchain's
    roots = {c for rc in rep.diagnosis.blocking + rep.diagnosis.degraded for c in rc.codes}
    assert not roots & {"no-c-compiler", "python-headers-missing", "file-command-missing", "libc-headers-missing"}
    assert all(cid == "toolchain.libcuda_discovery" for cid, _ in toolchain), toolchain
    assert rep.result("triton.build").status.value == "pass"
    assert rep.result("toolchain.triton_cache").status.value == "pass"
