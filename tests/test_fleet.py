"""`stackpeel fleet` over real SSH: four real sshd hosts in their own network namespaces
(one without a C compiler on PATH, one whose environment is a venv with another Triton), an
address nobody answers and a port that accepts but never speaks. The merge's rules are also
tested on their own with committed real reports."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackpeel.fleet import NodeOutcome, merge
from stackpeel.fleet.render import render_fleet
from stackpeel.model import Report

from conftest import no_compiler_path
from fleet_rig import Rig, can_run

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "docs" / "validation" / "2026-11-29-h200" / "reports"


def rep(name):
    return Report.from_dict(json.loads((H200 / f"{name}.json").read_text()))


def test_merge_names_the_odd_nodes_and_what_differs():
    outcomes = [NodeOutcome(f"gpu-{i:02d}", "file", "ok", rep("healthy")) for i in range(5)]
    outcomes.append(NodeOutcome("gpu-05", "file", "ok", rep("no-compiler")))
    outcomes.append(NodeOutcome("gpu-06", "ssh", "unreachable", None, "OSError: [Errno 113] No route to host"))
    outcomes.append(NodeOutcome("gpu-07", "ssh", "stackpeel-failed", None, "no Python to run stackpeel with"))
    fleet = merge(outcomes)
    assert fleet.majority == () and fleet.groups[0].nodes == tuple(f"gpu-{i:02d}" for i in range(5))
    (odd,) = fleet.odd
    assert odd.node == "gpu-05" and odd.signature == ("no-c-compiler",)
    assert odd.profile_diff["c_compiler"] == ("/opt/gcc/bin/gcc", None)
    assert odd.top_differences[0] == "toolchain.c_compiler: pass -> fail (no-c-compiler)"
    assert [o.node for o in fleet.unreachable] == ["gpu-06"] and [o.node for o in fleet.failed] == ["gpu-07"]
    assert fleet.exit_code == 1
    text = render_fleet(fleet)
    assert text.index("Odd ones out") < text.index("gpu-05: no-c-compiler") < text.index("Not diagnosed")
    assert max(map(len, text.splitlines())) <= 80
    data = json.loads(render_fleet(fleet, "json"))
    assert (data["schema_version"], data["kind"]) == (1, "fleet") and data["summary"]["odd"][0]["node"] == "gpu-05"
    # a fleet report reads back
    again = [NodeOutcome.from_dict(n) for n in data["nodes"]]
    assert merge(again).odd[0].node == "gpu-05"


def test_same_verdict_but_other_versions_is_still_named():
    a = json.loads((H200 / "healthy.json").read_text())
    b = json.loads(json.dumps(a))
    for r in b["results"]:
        if r["id"] == "triton.import":
            r["facts"]["version"] = "3.7.1"
    outcomes = [NodeOutcome(f"n{i}", "file", "ok", Report.from_dict(a)) for i in range(3)]
    outcomes.append(NodeOutcome("n3", "file", "ok", Report.from_dict(b)))
    fleet = merge(outcomes)
    assert [(o.node, dict(o.profile_diff)) for o in fleet.odd] == [("n3", {"triton": ("3.6.0", "3.7.1")})]


def test_healthy_fleet_exits_zero():
    fleet = merge([NodeOutcome(f"n{i}", "file", "ok", rep("healthy")) for i in range(3)])
    assert fleet.exit_code == 0 and fleet.odd == ()


@pytest.fixture(scope="module")
def rig(tmp_path_factory, stack_python):
    why = can_run()
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("fleet")
    venv = Path(stack_python).parent.parent
    # a second stack: the stack venv with Triton 3.6.0 laid over it (see test_compare.py)
    other = base / "venv-triton36"
    subprocess.run([sys.executable, "-m", "venv", str(other)], check=True, timeout=120)
    site = next((other / "lib").glob("python3*/site-packages"))
    stack_site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "stack.pth").write_text(str(stack_site) + "\n")
    pip = subprocess.run([str(other / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                          "--disable-pip-version-check", "triton==3.6.0"], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"triton 3.6.0 not installable here: {pip.stderr.strip()[-300:]}")
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    envs = {
        "node1": {"VIRTUAL_ENV": str(venv), "PATH": path},
        "node2": {"VIRTUAL_ENV": str(venv), "PATH": path},
        "nocc": {"VIRTUAL_ENV": str(venv), "PATH": no_compiler_path(base)},
        "otherstack": {"VIRTUAL_ENV": str(other), "PATH": path},
    }
    r = Rig(base / "rig").start(envs)
    yield r
    r.stop()


@pytest.mark.slow
def test_real_ssh_fleet_names_the_two_odd_hosts(rig, tmp_path):
    hosts = [f"root@{h.addr}" for h in rig.hosts]
    dead, hung = rig.unreachable(), rig.hanging_login()
    out = tmp_path / "fleet.json"
    prom = tmp_path / "fleet.prom"
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "stackpeel", "fleet", *hosts, f"root@{dead}", f"root@{hung}",
         "-i", str(rig.key), "--known-hosts", "none", "--timeout", "20", "--only", "toolchain.c_compiler,triton.import",
         "--no-installed", "--format", "json", "-o", str(out), "--prometheus", str(prom)],
        capture_output=True, text=True, timeout=240, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    data = json.loads(out.read_text())
    s = data["summary"]
    by_node = {n["node"]: n for n in data["nodes"]}
    assert by_node[f"root@{dead}"]["state"] in ("unreachable", "timeout")
    assert by_node[f"root@{hung}"]["state"] == "timeout"
    assert took < 20 * 3, "unreachable and hung hosts are reported within their timeout"
    # this machine has no GPU and a CPU-only torch: the majority's diagnosis (--only pulls in
    # triton.import's requirements down to the driver)
    base = ["no-nvidia-driver", "torch-cpu-only-build"]
    assert s["reports"] == 4 and s["majority"] == base
    odd = {o["node"]: o for o in s["odd"]}
    nocc, other = f"root@{rig.hosts[2].addr}", f"root@{rig.hosts[3].addr}"
    assert set(odd) == {nocc, other}, s
    assert odd[nocc]["root_causes"] == sorted(base + ["no-c-compiler"])
    assert odd[nocc]["differs"]["c_compiler"]["node"] is None and odd[nocc]["differs"]["c_compiler"]["majority"]
    assert odd[other]["root_causes"] == base
    assert odd[other]["differs"]["triton"]["node"] == "3.6.0" and odd[other]["differs"]["triton"]["majority"] != "3.6.0"
    assert set(odd[other]["differs"]) == {"triton"}, odd[other]
    # nothing left behind on the nodes: each bundle's temporary directory is gone
    assert not list(Path("/tmp").glob("stackpeel-fleet-*"))
    # the same fleet as a person reads it (a fleet report reads back through --from)
    text = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--from", str(out)], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "src"))).stdout
    assert "Odd ones out" in text and nocc in text and other in text
    if os.environ.get("STACKPEEL_EVIDENCE_DIR"):  # how docs/validation's fleet output was recorded
        Path(os.environ["STACKPEEL_EVIDENCE_DIR"], "fleet-ssh.txt").write_text(text)
    # two nodes of the saved report compared (`diff FILE:NODE`): the compiler, then the Triton release
    def diff(node):
        p = subprocess.run([sys.executable, "-m", "stackpeel", "diff", f"{out}:{hosts[0]}", f"{out}:{node}",
                            "--format", "json"], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        assert p.returncode == 1, p.stderr
        return json.loads(p.stdout)["differences"][0]
    compiler = diff(nocc)
    assert (compiler["where"], compiler["why"]) == ("toolchain.c_compiler", "root cause on B"), compiler
    first = diff(other)
    assert (first["kind"], first["where"], first["b"]) == ("version", "triton.import", "3.6.0"), first
    metrics = prom.read_text()
    assert f'stackpeel_root_cause{{check="toolchain.c_compiler",code="no-c-compiler",node="{nocc}",severity="blocking"}} 1.0' \
        in metrics
    assert f'stackpeel_node_diagnosed{{node="root@{hung}",state="timeout"}} 1.0' in metrics


def test_kubernetes_manifest_and_collector(tmp_path, stack_python):
    """The DaemonSet's own container command, run here against the ConfigMap's bundle (what the
    kubelet would mount), prints a report; `fleet --from` merges what `kubectl logs` gives back."""
    import base64

    from stackpeel.fleet.k8s import MOUNT, manifest

    m = manifest(image="registry.example/train:1", python=stack_python, check_args=["--only", "toolchain.c_compiler"])
    kinds = [i["kind"] for i in m["items"]]
    assert kinds == ["Namespace", "ConfigMap", "DaemonSet"]
    ds = m["items"][2]
    pod = ds["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["image"] == "registry.example/train:1" and c["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]
    mount = tmp_path / "bundle"
    mount.mkdir()
    (mount / "bundle.tgz").write_bytes(base64.b64decode(m["items"][1]["binaryData"]["bundle.tgz"]))
    script = c["command"][2].replace(MOUNT, str(mount)).replace("exec sleep infinity", "true")
    logs = []
    for node in ("gpu-a", "gpu-b"):
        proc = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "stackpeel exited" in proc.stderr, proc.stderr
        path = tmp_path / f"{node}.json"
        path.write_text(proc.stdout)  # what `kubectl logs` prints
        logs.append(str(path))
    out = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--from", *logs, "--format", "json"],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    data = json.loads(out.stdout)
    assert data["summary"]["reports"] == 2 and [n["transport"] for n in data["nodes"]] == ["file", "file"]


def test_check_writes_prometheus_textfile(tmp_path):
    prom = tmp_path / "node.prom"
    proc = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--only", "system.platform", "--fresh",
                           "--prometheus", str(prom)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 0, proc.stderr
    text = prom.read_text()
    assert 'stackpeel_check_status{check="system.platform",layer="system",node="",status="pass"} 1.0' in text
    assert "# TYPE stackpeel_last_run_timestamp_seconds gauge" in text
    bad = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--only", "system.platform", "--prometheus",
                          str(tmp_path / "no" / "such" / "dir.prom")], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
