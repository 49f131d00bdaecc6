"""`stackpeel fleet --collective` between real sshd hosts in their own network namespaces
(tests/fleet_rig.py), each running one rank of a real torch.distributed gloo all-reduce with the
stack venv's CPU torch: passing between hosts whose GLOO_SOCKET_IFNAME is their bridge interface;
failing, with the finding that names the host and the variable, when one host's
GLOO_SOCKET_IFNAME names an interface it does not have, or one on a network no other host reaches."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.fleet.collective import evaluate

from fleet_rig import Rig, can_run, record_evidence

ROOT = Path(__file__).resolve().parents[1]



@pytest.fixture(scope="module")
def rig(tmp_path_factory, stack_python):
    why = can_run()
    if why:
        pytest.skip(why)
    venv = str(Path(stack_python).parent.parent)
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    envs = {
        "a": {"VIRTUAL_ENV": venv, "PATH": path, "GLOO_SOCKET_IFNAME": "eth0"},
        "b": {"VIRTUAL_ENV": venv, "PATH": path, "GLOO_SOCKET_IFNAME": "eth0"},
        "noiface": {"VIRTUAL_ENV": venv, "PATH": path, "GLOO_SOCKET_IFNAME": "eth9"},
        "wrongnet": {"VIRTUAL_ENV": venv, "PATH": path, "GLOO_SOCKET_IFNAME": "wan0"},
    }
    r = Rig(tmp_path_factory.mktemp("collective") / "rig").start(envs)
    try:
        r.add_isolated_interface("wrongnet", "wan0", "10.99.0.1/24")
        yield r
    finally:
        r.stop()


def fleet(rig, *names, only="system.platform", extra=()):
    hosts = [f"root@{h.addr}" for n in names for h in rig.hosts if h.name == n]
    proc = subprocess.run(
        [sys.executable, "-m", "stackpeel", "fleet", *hosts, "-i", str(rig.key), "--known-hosts", "none",
         "--timeout", "30", "--only", only, "--no-installed", "--collective", "--format", "json", *extra],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    return proc, hosts


@pytest.mark.slow
def test_allreduce_passes_between_hosts_on_one_network(rig):
    proc, hosts = fleet(rig, "a", "b")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    c = json.loads(proc.stdout)["collective"]
    assert c["passed"] and c["world"] == 2 and c["backend"] == "gloo" and c["findings"] == []
    assert c["master"] == f"{rig.hosts[0].addr}:29512"
    for rank, r in enumerate(c["ranks"]):
        f = r["facts"]
        assert r["node"] == hosts[rank] and f["rank"] == rank
        assert f["route"] == {"source": rig.hosts[rank].addr, "interface": "eth0"}
        assert f["gloo"]["interfaces"] == [{"name": "eth0", "exists": True, "address": rig.hosts[rank].addr}]
        assert f["rendezvous"]["ok"] and f["allreduce"]["ok"] and f["allreduce"]["got"] == [3.0]
    record_evidence("fleet-collective-pass.txt", proc.stdout)


@pytest.mark.slow
def test_interface_that_does_not_exist_is_named_with_host_and_variable(rig, tmp_path):
    prom = tmp_path / "fleet.prom"
    proc, hosts = fleet(rig, "a", "b", "noiface", only="config.nccl_environment", extra=("--prometheus", str(prom)))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    c = data["collective"]
    assert not c["passed"]
    roots = [f for f in c["findings"] if f["root"]]
    assert [(f["node"], f["code"]) for f in roots] == [(hosts[2], "env-nccl-socket-ifname-no-match")]
    assert "GLOO_SOCKET_IFNAME='eth9'" in roots[0]["message"] and "eth0" in roots[0]["message"]
    # the real all-reduce failed on the host itself with gloo's own words
    mine = next(r for r in c["ranks"] if r["node"] == hosts[2])["facts"]["allreduce"]
    assert "Unable to find address for: eth9" in mine["error"]
    symptoms = {f["node"] for f in c["findings"] if not f["root"]}
    assert symptoms == set(hosts) and {f["code"] for f in c["findings"] if not f["root"]} == {
        "collective-allreduce-failed"}
    # the per-node check agrees: the host is the odd one out of the fleet
    assert [o["node"] for o in data["summary"]["odd"]] == [hosts[2]]
    metrics = prom.read_text()
    assert 'stackpeel_collective_passed{backend="gloo"} 0.0' in metrics
    assert (f'stackpeel_collective_finding{{code="env-nccl-socket-ifname-no-match",node="{hosts[2]}",root="true"}} 1.0'
            in metrics), metrics


@pytest.mark.slow
def test_interface_on_a_network_nobody_reaches_is_named(rig):
    proc, hosts = fleet(rig, "a", "b", "wrongnet")
    assert proc.returncode == 1
    c = json.loads(proc.stdout)["collective"]
    roots = [f for f in c["findings"] if f["root"]]
    assert [(f["node"], f["code"]) for f in roots] == [(hosts[2], "collective-ifname-off-route")]
    msg = roots[0]["message"]
    assert "GLOO_SOCKET_IFNAME='wan0' binds wan0 (10.99.0.1)" in msg and "leaves by eth0" in msg
    assert ["shell", "export GLOO_SOCKET_IFNAME=eth0"] in [[c["manager"], c["command"]]
                                                          for c in roots[0]["remedy"]["commands"]]
    # a rank that tried to connect to wan0's address got the kernel's answer; one that lost its
    # peer first may fail with that instead (whichever failure reaches it first)
    others = [r["facts"]["allreduce"]["error"] for r in c["ranks"] if r["node"] != hosts[2]]
    assert any("Network is unreachable" in e for e in others), others
    record_evidence("fleet-collective-wrongnet.txt", proc.stdout)


@pytest.mark.slow
def test_rendezvous_nobody_answers_is_named_per_host(rig):
    dead = rig.unreachable()
    proc, hosts = fleet(rig, "a", "b", extra=("--master", f"{dead}:29512"))
    assert proc.returncode == 1
    c = json.loads(proc.stdout)["collective"]
    assert c["master"] == f"{dead}:29512"
    roots = [f for f in c["findings"] if f["root"]]
    # rank 0 cannot serve a store on an address that is not its own; rank 1 cannot reach it
    assert [(f["node"], f["code"]) for f in roots] == [(hosts[1], "collective-rendezvous-unreachable")]
    assert f"cannot open a TCP connection to the rendezvous {dead}:29512" in roots[0]["message"]
    assert ["shell", f"nc -vz {dead} 29512"] in [[x["manager"], x["command"]] for x in roots[0]["remedy"]["commands"]]


def test_evaluate_hostname_loopback_only_when_the_allreduce_failed():
    facts = {"route": {"source": "10.0.0.2", "interface": "eth0"}, "master": {"addr": "10.0.0.1", "ip": "10.0.0.1",
             "port": 29512}, "interfaces": {"lo": "127.0.0.1", "eth0": "10.0.0.2"},
             "gloo": {"source": "hostname", "hostname": "vm", "address": "127.0.0.1", "interface": "lo"},
             "rendezvous": {"ok": True}, "allreduce": {"ok": True, "got": [3.0]}}
    ok = dict(facts, route={"source": "10.0.0.1", "interface": "eth0"})
    passed = evaluate([("n0", "ok", ok, ""), ("n1", "ok", facts, "")], "10.0.0.1:29512")
    assert passed.passed and passed.findings == ()
    failed = dict(facts, allreduce={"ok": False, "stage": "all_reduce", "error": "RuntimeError: Connection refused"})
    rep = evaluate([("n0", "ok", ok, ""), ("n1", "ok", failed, "")], "10.0.0.1:29512")
    roots = [(f.node, f.finding.code) for f in rep.findings if f.root]
    assert ("n1", "collective-hostname-loopback") in roots and not rep.passed
    assert "export GLOO_SOCKET_IFNAME=eth0" in [c.command for f in rep.findings if f.node == "n1" and f.root
                                                 for c in f.finding.remedy.commands]


def test_evaluate_nccl_socket_ifname_matching_nothing_is_named():
    facts = {"route": {"source": "127.0.0.1", "interface": "lo"}, "master": {"addr": "127.0.0.1", "ip": "127.0.0.1",
             "port": 29512}, "interfaces": {"lo": "127.0.0.1", "eth0": "10.0.0.2"}, "env": {"NCCL_SOCKET_IFNAME": "lo"},
             "gloo": {"source": "hostname", "address": "127.0.0.1"}, "rendezvous": {"ok": True},
             "allreduce": {"ok": True, "got": [3.0]}}
    bad = dict(facts, env={"NCCL_SOCKET_IFNAME": "=ib0"},
               allreduce={"ok": False, "stage": "all_reduce", "error": "DistBackendError: NCCL error"})
    rep = evaluate([("gpu0", "ok", facts, ""), ("gpu1", "ok", bad, "")], "127.0.0.1:29512", "nccl")
    (root,) = [f for f in rep.findings if f.root]
    assert (root.node, root.finding.code) == ("gpu1", "env-nccl-socket-ifname-no-match")
    assert "NCCL_SOCKET_IFNAME='=ib0'" in root.finding.message
    # NCCL's prefix rules: 'e' matches eth0, so nothing is wrong with the setting itself
    fine = evaluate([("gpu0", "ok", facts, ""), ("gpu1", "ok", dict(facts, env={"NCCL_SOCKET_IFNAME": "e"}), "")],
                    "127.0.0.1:29512", "nccl")
    assert fine.passed and fine.findings == ()


def test_fleet_html_shows_the_collective_escaped():
    import dataclasses

    from stackpeel.fleet import merge
    from stackpeel.render.html import render_fleet_html

    facts = {"route": {"source": "10.0.0.2", "interface": "eth0"}, "master": {"addr": "10.0.0.1", "ip": "10.0.0.1",
             "port": 29512}, "interfaces": {"lo": "127.0.0.1", "eth0": "10.0.0.2"},
             "gloo": {"source": "GLOO_SOCKET_IFNAME", "value": "<eth9>",
                      "interfaces": [{"name": "<eth9>", "exists": False, "address": None}]},
             "rendezvous": {"ok": True}, "allreduce": {"ok": False, "stage": "init_process_group",
                                                      "error": "RuntimeError: Unable to find address for: <eth9>"}}
    c = evaluate([("n<0>", "ok", dict(facts, gloo={"source": "hostname", "address": "10.0.0.1"}), ""),
                  ("n<1>", "ok", facts, "")], "10.0.0.1:29512")
    page = render_fleet_html(dataclasses.replace(merge([]), collective=c))
    assert 'id="collective"' in page and "env-nccl-socket-ifname-no-match" in page
    assert "n&lt;1&gt;" in page and "<eth9>" not in page and "Unable to find address for: &lt;eth9&gt;" in page


def test_collective_needs_exactly_one_engine(tmp_path):
    """--collective over saved reports, or over SSH and Slurm at once, is refused with exit 2."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    saved = tmp_path / "n.json"
    saved.write_text("{}")
    for args in (["--from", str(saved)], ["h1", "--slurm", "gpu"]):
        proc = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", *args, "--collective"], capture_output=True,
                              text=True, timeout=60, env=env)
        assert proc.returncode == 2 and "--collective runs over one of SSH hosts, --slurm or --ray" in proc.stderr
