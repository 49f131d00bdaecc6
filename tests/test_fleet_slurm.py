"""`stackpeel fleet --slurm` on a real Slurm cluster started by the test: Debian's slurmctld,
three slurmd (node1..node3) and munged (tests/slurm_rig.py). node3's slurmd runs in a mount
namespace where the C compiler is /dev/null: every task on node3 sees an image without a
compiler. Reports come back through srun, one task per node, the bundle on srun's stdin."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.fleet import TIMEOUT, UNREACHABLE
from stackpeel.fleet.slurm import MARK, parse, srun_argv

from fleet_rig import record_evidence
from slurm_rig import SlurmRig, can_run

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slurm



@pytest.fixture(scope="module")
def slurm():
    why = can_run()
    if why:
        pytest.skip(f"Slurm cluster not available: {why}")
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("needs gcc on this machine (node3 is the node without it)")
    rig = SlurmRig(hide={"node3": [os.path.realpath(gcc)]}, env_of={"node2": {"GLOO_SOCKET_IFNAME": "eth9"}})
    try:
        rig.start()
    except Exception:
        logs = rig.logs() if rig.workdir.exists() else ""
        rig.stop()
        raise RuntimeError("the Slurm rig did not start:\n" + logs)
    yield rig
    rig.stop()


def fleet(rig, stack_python, *args, prefix=(), timeout=240, only="toolchain.c_compiler"):
    env = dict(rig.env, PYTHONPATH=str(ROOT / "src"), VIRTUAL_ENV=str(Path(stack_python).parent.parent))
    return subprocess.run([*prefix, sys.executable, "-m", "stackpeel", "fleet", *args, "--no-installed",
                           "--only", only, "--format", "json", "--timeout", "30"],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.slow
def test_partition_one_report_per_node_and_the_node_without_compiler_named(slurm, stack_python):
    proc = fleet(slurm, stack_python, "--slurm", slurm.partition)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    nodes = {n["node"]: n for n in data["nodes"]}
    assert sorted(nodes) == ["node1", "node2", "node3"]
    assert {n["transport"] for n in data["nodes"]} == {"slurm"} and {n["state"] for n in data["nodes"]} == {"ok"}
    # every report is that node's own: the Slurm node name each task saw
    s = data["summary"]
    assert s["majority"] == [] and s["groups"][0]["nodes"] == ["node1", "node2"]
    (odd,) = s["odd"]
    assert odd["node"] == "node3" and odd["root_causes"] == ["no-c-compiler"]
    assert odd["differs"]["c_compiler"] == {"majority": shutil.which("gcc"), "node": None}
    assert "toolchain.c_compiler: pass -> fail (no-c-compiler)" in odd["top_differences"]
    record_evidence("fleet-slurm.txt", proc.stdout)


@pytest.mark.slow
def test_inside_an_allocation_and_a_nodelist(slurm, stack_python, tmp_path):
    # salloc runs the command with the allocation's SLURM_JOB_ID and SLURM_JOB_NUM_NODES set
    proc = fleet(slurm, stack_python, "--slurm", prefix=("salloc", "--nodes=2", f"--partition={slurm.partition}",
                                                          "--nodelist=node2,node3"))
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert sorted(n["node"] for n in data["nodes"]) == ["node2", "node3"]
    states = {n["node"]: n["report"]["results"] for n in data["nodes"]}
    assert all(states)
    # --slurm PARTITION/NODELIST asks srun for those nodes only
    proc = fleet(slurm, stack_python, "--slurm", f"{slurm.partition}/node[1-2]")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert sorted(n["node"] for n in data["nodes"]) == ["node1", "node2"] and data["summary"]["odd"] == []
    text = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--slurm"], capture_output=True, text=True,
                          timeout=60, env={k: v for k, v in slurm.env.items() if not k.startswith("SLURM_JOB")}
                          | {"PYTHONPATH": str(ROOT / "src")})
    assert text.returncode == 2 and "inside an allocation" in text.stderr


def test_srun_line_and_what_a_cut_step_left():
    argv = srun_argv(None, "true", 300, {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "4"})
    assert argv[:5] == ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--input=all", "--label"]
    assert "--overlap" in argv and "--nodes=4" in argv and argv[-3:-1] == ["/bin/sh", "-c"]
    assert "--partition=gpu" in srun_argv("gpu/16", "true", 60, {}) and "--nodes=16" in srun_argv("gpu/16", "true",
                                                                                                  60, {})
    # recorded shape of a step ended by the timeout: node1 answered, node2 started and hung,
    # node3 never started (srun names it)
    import base64
    good = base64.encodebytes(json.dumps({"bad": "report"}).encode()).decode().splitlines()
    out = [f"0: {MARK} node node1 node[1-3]", f"0: {MARK} rc 1", *(f"0: {ln}" for ln in good), f"0: {MARK} stderr",
           f"0: {MARK} end", f"1: {MARK} node node2 node[1-3]"]
    got = {o.node: o for o in parse("\n".join(out), "srun: error: node3: task 2: Communication connection failure\n",
                                    5.0, finished=False)}
    assert got["node1"].state == "stackpeel-failed" and "exit status 1" in got["node1"].detail
    assert got["node2"].state == TIMEOUT and "sent no report" in got["node2"].detail
    assert got["node3"].state == TIMEOUT and "node3: task 2" in got["node3"].detail
    # the step ended by itself: a node that never started is unreachable, with srun's words
    done = {o.node: o for o in parse("\n".join(out[:5]), "srun: error: node3: task 2: Exited\n", 5.0, True)}
    assert sorted(done) == ["node1", "node2", "node3"]
    assert done["node3"].state == done["node2"].state == UNREACHABLE and done["node3"].detail.startswith("srun: error")


@pytest.mark.slow
def test_collective_through_srun_and_the_node_whose_gloo_interface_is_missing(slurm, stack_python):
    """A second srun step, one rank per node (SLURM_NODEID), master the first node's NodeAddr
    as scontrol gives it; node2's TaskProlog sets GLOO_SOCKET_IFNAME=eth9."""
    proc = fleet(slurm, stack_python, "--slurm", f"{slurm.partition}/node1,node3", "--collective",
                 only="system.platform")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    c = json.loads(proc.stdout)["collective"]
    assert c["passed"] and [r["node"] for r in c["ranks"]] == ["node1", "node3"] and c["master"].startswith("127.0.0.1:")
    assert [r["facts"]["rank"] for r in c["ranks"]] == [0, 1] and c["ranks"][1]["facts"]["allreduce"]["got"] == [3.0]
    proc = fleet(slurm, stack_python, "--slurm", slurm.partition, "--collective", only="config.nccl_environment")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    c = data["collective"]
    roots = [(f["node"], f["code"]) for f in c["findings"] if f["root"]]
    assert roots == [("node2", "env-nccl-socket-ifname-no-match")], c["findings"]
    assert "GLOO_SOCKET_IFNAME='eth9'" in c["findings"][0]["message"]
    assert "Unable to find address for: eth9" in c["ranks"][1]["facts"]["allreduce"]["error"]
    # the per-node check saw it too: node2 is the odd one of the fleet
    assert [o["node"] for o in data["summary"]["odd"]] == ["node2"]
    record_evidence("fleet-slurm-collective.txt", proc.stdout)
