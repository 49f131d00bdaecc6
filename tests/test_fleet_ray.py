"""`stackpeel fleet --ray` on a real local Ray cluster started by the test (tests/ray_rig.py): a
head and two workers, each its own set of processes; the worker "nocc" was started with a PATH
without any C compiler, so every task Ray runs on it has that PATH. One task per node, pinned
with NodeAffinitySchedulingStrategy(soft=False), each running the shipped bundle."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.fleet.raynodes import node_names, outcome

from conftest import no_compiler_path
from fleet_rig import record_evidence
from ray_rig import RayRig, can_run

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.ray



@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    why = can_run()
    if why:
        pytest.skip(f"Ray cluster not available: {why}")
    base = tmp_path_factory.mktemp("ray")
    path = os.environ.get("PATH", "/usr/bin:/bin")
    rig = RayRig()
    try:
        # nocc: no compiler, and a GLOO_SOCKET_IFNAME naming an interface it does not have
        rig.start({"head": {"PATH": path}, "worker": {"PATH": path},
                   "nocc": {"PATH": no_compiler_path(base), "GLOO_SOCKET_IFNAME": "eth9"}})
        yield rig
    finally:
        rig.stop()
        assert rig.leftovers() == [], "Ray processes outlived the cluster"


@pytest.mark.slow
def test_one_report_per_node_and_the_node_without_compiler_named(ray_cluster, stack_python):
    rig = ray_cluster
    proc = subprocess.run(
        [sys.executable, "-m", "stackpeel", "fleet", "--ray", rig.address, "--python", stack_python, "--no-installed",
         "--only", "toolchain.c_compiler", "--format", "json", "--timeout", "120"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["nodes"]) == 3 and {n["transport"] for n in data["nodes"]} == {"ray"}
    assert {n["state"] for n in data["nodes"]} == {"ok"}
    # every node on this machine shares one IP: names carry the node id's first 8 characters
    name = {tag: next(n["node"] for n in data["nodes"] if n["node"].endswith(":" + nid[:8]))
            for tag, nid in rig.node_ids.items()}
    s = data["summary"]
    assert sorted(s["groups"][0]["nodes"]) == sorted([name["head"], name["worker"]]) and s["majority"] == []
    (odd,) = s["odd"]
    assert odd["node"] == name["nocc"] and odd["root_causes"] == ["no-c-compiler"]
    assert odd["differs"]["c_compiler"]["node"] is None and odd["differs"]["c_compiler"]["majority"]
    # each report diagnosed the interpreter named, on its own node
    assert {n["report"]["target"]["python"] for n in data["nodes"]} == {stack_python}
    record_evidence("fleet-ray.txt", proc.stdout)


@pytest.mark.slow
def test_default_target_is_the_workers_interpreter_and_no_cluster_is_exit_2(ray_cluster):
    proc = subprocess.run(
        [sys.executable, "-m", "stackpeel", "fleet", "--ray", ray_cluster.address, "--only", "system.platform",
         "--format", "json", "--timeout", "120"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    data = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    # the Ray workers run this environment's Python (the one `ray start` came from)
    assert {os.path.dirname(n["report"]["target"]["python"]) for n in data["nodes"]} == {
        os.path.dirname(sys.executable)}
    gone = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--ray", "127.0.0.1:1"], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert gone.returncode == 2 and "no Ray cluster at '127.0.0.1:1'" in gone.stderr, gone.stderr


@pytest.mark.slow
def test_collective_one_pinned_rank_per_node_names_the_node_and_variable(ray_cluster, stack_python):
    rig = ray_cluster
    proc = subprocess.run(
        [sys.executable, "-m", "stackpeel", "fleet", "--ray", rig.address, "--python", stack_python, "--only",
         "system.platform", "--collective", "--format", "json", "--timeout", "30"],
        capture_output=True, text=True, timeout=400, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 1, proc.stderr
    c = json.loads(proc.stdout)["collective"]
    nocc = next(r["node"] for r in c["ranks"] if r["node"].endswith(":" + rig.node_ids["nocc"][:8]))
    roots = [(f["node"], f["code"]) for f in c["findings"] if f["root"]]
    assert roots == [(nocc, "env-nccl-socket-ifname-no-match")], c["findings"]
    assert c["world"] == 3 and [r["facts"]["rank"] for r in c["ranks"]] == [0, 1, 2]
    mine = next(r for r in c["ranks"] if r["node"] == nocc)["facts"]
    assert mine["env"]["GLOO_SOCKET_IFNAME"] == "eth9" and "eth9" in mine["allreduce"]["error"]
    # the other ranks reached rank 0's store (unless nocc was rank 0 and closed it on failing)
    if mine["rank"] != 0:
        assert all(r["facts"]["rendezvous"]["ok"] for r in c["ranks"])


def test_node_names_and_answers():
    nodes = [{"NodeID": "aaaaaaaa11", "NodeName": "10.0.0.5"}, {"NodeID": "bbbbbbbb22", "NodeName": "10.0.0.5"},
             {"NodeID": "cccccccc33", "NodeName": "gpu-07"}]
    assert node_names(nodes) == {"aaaaaaaa11": "10.0.0.5:aaaaaaaa", "bbbbbbbb22": "10.0.0.5:bbbbbbbb",
                                 "cccccccc33": "gpu-07"}
    assert outcome("n", {"rc": None, "stderr": b"stackpeel did not finish within the timeout"}, 1).state == "timeout"
    assert outcome("n", {"rc": 97, "stderr": b"no python3"}, 1).state == "stackpeel-failed"
    bad = outcome("n", {"rc": 2, "stdout": b"Traceback", "stderr": b"boom"}, 1)
    assert bad.state == "stackpeel-failed" and "exit status 2" in bad.detail and "boom" in bad.detail
