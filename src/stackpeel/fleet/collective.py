"""``stackpeel fleet --collective``: can the nodes run a collective together?

Every node that gave a report runs one rank of ``probes/collective.py`` at the same time
(rank 0 is the first node; MASTER_ADDR is its address as the user named it, or ``--master``):
the interface gloo would bind (GLOO_SOCKET_IFNAME, else the hostname's address), NCCL_SOCKET_IFNAME,
the route the kernel takes to the master, a TCP connect to the rendezvous, then a real
``torch.distributed`` all-reduce (gloo; NCCL where the nodes have GPUs) whose sum each rank
checks. :func:`evaluate` (pure) turns the ranks' facts into findings that name the node and the
setting; their wording is in ``knowledge/multi_gpu.toml`` and ``config.toml``.

Run on a node as ``python -m stackpeel.fleet.collective SPEC_JSON [PYTHON]``: it picks the
interpreter to test the way ``check`` does (``$VIRTUAL_ENV``, ``$CONDA_PREFIX``, python3) and
runs the probe with it, so the rank uses the node's own torch.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

#: the codes only this cross-node run emits (registry.uncovered_codes counts them as emitted)
CODES = ("collective-rendezvous-unreachable", "collective-ifname-off-route", "collective-hostname-loopback",
         "collective-allreduce-failed")
#: GLOO_SOCKET_IFNAME naming interfaces that do not exist: the per-node check's code, reused
NO_SUCH_IFACE = "env-nccl-socket-ifname-no-match"
DEFAULT_PORT = 29512


@dataclass(frozen=True)
class NodeFinding:
    node: str
    finding: Any  # model.Finding
    root: bool

    def to_dict(self) -> Dict[str, Any]:
        return {"node": self.node, "root": self.root, **self.finding.to_dict()}


@dataclass(frozen=True)
class CollectiveReport:
    backend: str
    master: str
    world: int
    ranks: Tuple[Tuple[str, str, Optional[Mapping[str, Any]], str], ...]  # node, state, facts, detail
    findings: Tuple[NodeFinding, ...]
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.ranks) and not self.findings and all(
            f is not None and (f.get("allreduce") or {}).get("ok") for _, _, f, _ in self.ranks)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CollectiveReport":
        from ..model import Finding

        ranks = tuple((r["node"], r["state"], r.get("facts"), r.get("detail", "")) for r in d.get("ranks", []))
        findings = tuple(NodeFinding(f["node"], Finding.from_dict(f), bool(f.get("root")))
                         for f in d.get("findings", []))
        return cls(d.get("backend", "gloo"), d.get("master", ""), int(d.get("world", len(ranks))), ranks, findings,
                   float(d.get("duration_s", 0.0)))

    def to_dict(self) -> Dict[str, Any]:
        return {"backend": self.backend, "master": self.master, "world": self.world, "passed": self.passed,
                "duration_s": round(self.duration_s, 3),
                "findings": [f.to_dict() for f in self.findings],
                "ranks": [{"node": n, "rank": i, "state": s, "facts": f, "detail": d}
                          for i, (n, s, f, d) in enumerate(self.ranks)]}


def _finding(code: str, variant: Optional[str] = None, **params: Any):
    from .. import knowledge, remedies
    from ..model import Finding

    spec = knowledge.get(code)
    return Finding(code=code, severity=spec.severity, title=spec.title,
                   message=spec.render_message(variant, params), evidence=str(params.pop("evidence", "") or ""),
                   remedy=remedies.build(code, {}, params))


def _loopback(addr: Optional[str]) -> bool:
    return bool(addr) and addr.startswith("127.")


def evaluate(ranks: Sequence[Tuple[str, str, Optional[Mapping[str, Any]], str]], master: str, backend: str = "gloo",
             duration_s: float = 0.0) -> CollectiveReport:
    """The ranks' facts -> findings naming the node and the setting (pure)."""
    roots: List[NodeFinding] = []
    symptoms: List[NodeFinding] = []
    unreachable: List[NodeFinding] = []
    failed_anywhere = any(f is None or not (f.get("allreduce") or {}).get("ok") for _, _, f, _ in ranks)
    # every rank has the master's address itself: one machine, where the loopback joins them all
    one_machine = all(f is not None and (f.get("master") or {}).get("ip") in (f.get("interfaces") or {}).values()
                      for _, _, f, _ in ranks)
    world = len(ranks)
    for node, state, facts, detail in ranks:
        if facts is None:
            symptoms.append(NodeFinding(node, _finding("collective-allreduce-failed", "no-answer", node=node,
                                                       state=state, error=detail.strip()[-300:] or state,
                                                       world=world, backend=backend), False))
            continue
        route = facts.get("route") or {}
        route_if, source = route.get("interface"), route.get("source")
        m = facts.get("master") or {}
        master_ip = m.get("ip") or m.get("addr")
        common = dict(node=node, master=master, master_ip=master_ip, route_if=route_if or "?", source=source or "?")
        gloo = facts.get("gloo") or {}
        ifaces = facts.get("interfaces") or {}
        if backend == "gloo" and gloo.get("source") == "GLOO_SOCKET_IFNAME":
            named = gloo.get("interfaces") or []
            missing = [i["name"] for i in named if not i.get("exists")]
            value = gloo.get("value", "")
            if missing or not named:
                roots.append(NodeFinding(node, _finding(
                    NO_SUCH_IFACE, "gloo", var="GLOO_SOCKET_IFNAME", value=value, bad=", ".join(missing) or repr(value),
                    interfaces=", ".join(ifaces) or "none"), True))
            else:
                binds = ", ".join(f"{i['name']} ({i.get('address') or 'no IPv4 address'})" for i in named)
                unusable = [i for i in named if not i.get("address") or
                            (_loopback(i.get("address")) and not _loopback(master_ip))]
                off = [i for i in named if i["name"] != route_if]
                # only when the all-reduce failed: gloo between network namespaces was seen to pass
                # with GLOO_SOCKET_IFNAME=lo on one rank, so a setting alone is no verdict
                if unusable and failed_anywhere:
                    roots.append(NodeFinding(node, _finding("collective-ifname-off-route", "unusable",
                                                            var="GLOO_SOCKET_IFNAME", value=value, binds=binds,
                                                            **common), True))
                elif off and route_if and failed_anywhere:
                    roots.append(NodeFinding(node, _finding("collective-ifname-off-route", var="GLOO_SOCKET_IFNAME",
                                                            value=value, binds=binds, **common), True))
        elif backend == "gloo" and world > 1 and failed_anywhere and not one_machine:
            addr = gloo.get("address")
            if gloo.get("error") or (_loopback(addr) and not _loopback(master_ip)):
                roots.append(NodeFinding(node, _finding(
                    "collective-hostname-loopback", "unresolved" if gloo.get("error") else None,
                    hostname=gloo.get("hostname", "?"), address=addr or "?", error=gloo.get("error") or "",
                    **common), True))
        nccl_value = (facts.get("env") or {}).get("NCCL_SOCKET_IFNAME")
        if backend == "nccl" and nccl_value and nccl_value.strip():
            from ..checks.config import ifname_matches

            if not ifname_matches(nccl_value, list(ifaces)):
                roots.append(NodeFinding(node, _finding(NO_SUCH_IFACE, var="NCCL_SOCKET_IFNAME", value=nccl_value,
                                                        interfaces=", ".join(ifaces) or "none"), True))
        rdv = facts.get("rendezvous") or {}
        if not rdv.get("ok"):
            unreachable.append(NodeFinding(node, _finding(
                "collective-rendezvous-unreachable", master=master, port=m.get("port", "?"), node=node,
                master_ip=master_ip or "?", attempts=rdv.get("attempts", 0), seconds=rdv.get("seconds", 0),
                error=rdv.get("error") or "?", route_if=route_if or "?", source=source or "?",
                evidence=rdv.get("error") or ""), True))
        ar = facts.get("allreduce") or {}
        if not ar.get("ok"):
            if "got" in ar and "error" not in ar:
                symptoms.append(NodeFinding(node, _finding("collective-allreduce-failed", "wrong-sums", node=node,
                                                           world=world, backend=backend, expected=ar.get("expected"),
                                                           got=ar.get("got")), False))
            else:
                symptoms.append(NodeFinding(node, _finding(
                    "collective-allreduce-failed", node=node, world=world, backend=backend,
                    stage=ar.get("stage", "?"), error=(ar.get("error") or "?").splitlines()[0][:300],
                    evidence=ar.get("traceback") or ar.get("error") or ""), False))
    # a rank that could not reach the store is a cause of its own only when nothing else is:
    # a rank 0 that failed on its own setting may close the store before the others connect
    if not roots:
        roots = unreachable
    return CollectiveReport(backend, master, world, tuple(ranks), tuple(roots + symptoms), duration_s)


# --- running it -----------------------------------------------------------------------------

def node_command(spec: Mapping[str, Any], python: Optional[str] = None, worker_python: bool = False) -> str:
    """The shell line a node runs, the bundle on its stdin (as bundle.remote_command;
    ``worker_python``: Ray's worker interpreter, in $STACKPEEL_FLEET_PY, runs it and is tested)."""
    args = [json.dumps(dict(spec), separators=(",", ":"))] + ([python] if python else [])
    quoted = " ".join(shlex.quote(a) for a in args)
    if worker_python:
        find = 'py=${STACKPEEL_FLEET_PY:-}; [ -n "$py" ] || exit 97; '
        quoted += "" if python else ' "$py"'
    else:
        find = 'py=$(command -v python3 || command -v python) || exit 97; '
    return ('set -u; d=$(mktemp -d "${TMPDIR:-/tmp}/stackpeel-fleet-XXXXXX") || exit 97; '
            'trap \'rm -rf "$d"\' EXIT HUP INT TERM; tar -xzf - -C "$d" || exit 97; ' + find +
            f'PYTHONPATH="$d" PYTHONDONTWRITEBYTECODE=1 "$py" -m stackpeel.fleet.collective {quoted}')


def host_of(spec: str) -> str:
    """The address part of an SSH host spec (``user@host:port``)."""
    from .ssh import _split_host

    return _split_host(spec)["host"]


def run_ssh_collective(nodes: Sequence[str], opts, bundle: bytes, master: Optional[str], port: int = DEFAULT_PORT,
                       backend: str = "gloo", timeout: float = 60.0, python: Optional[str] = None) -> CollectiveReport:
    """One rank per node, all at once (a collective needs every rank in flight)."""
    from .ssh import execute

    addr = master or host_of(nodes[0])
    start = time.monotonic()

    async def all_ranks():
        coros = []
        for rank, node in enumerate(nodes):
            spec = {"master_addr": addr, "master_port": port, "rank": rank, "world_size": len(nodes),
                    "backend": backend, "timeout": timeout}
            coros.append(execute(node, node_command(spec, python), bundle, opts, timeout * 2 + 30))
        return await asyncio.gather(*coros)

    ranks = []
    for node, got in zip(nodes, asyncio.run(all_ranks())):
        if not isinstance(got, tuple):
            ranks.append((node, got.state, None, got.detail))
            continue
        status, stdout, stderr = got
        try:
            facts = json.loads(stdout.decode("utf-8", "replace").strip().splitlines()[-1])
            ranks.append((node, "ok", facts, stderr.strip()[-500:]))
        except (ValueError, IndexError) as exc:
            ranks.append((node, "stackpeel-failed", None,
                          f"exit status {status}, no answer ({type(exc).__name__}); stderr: {stderr.strip()[-800:]}"))
    return evaluate(ranks, f"{addr}:{port}", backend, time.monotonic() - start)


def from_slurm(spec: Dict[str, Any], environ: Mapping[str, str] = os.environ) -> Dict[str, Any]:
    """Fill what a Slurm task knows: its rank (SLURM_NODEID), the world (the step's node
    count) and, unless given, the master: the step's first node, at the NodeAddr scontrol
    gives for it (a Slurm node name need not resolve), as torchrun-on-Slurm recipes do."""
    from .slurm import expand_nodelist

    spec = dict(spec)
    spec.setdefault("rank", int(environ["SLURM_NODEID"]))
    spec.setdefault("world_size", int(environ.get("SLURM_STEP_NUM_NODES") or environ["SLURM_NNODES"]))
    if not spec.get("master_addr"):
        first = expand_nodelist(environ.get("SLURM_STEP_NODELIST") or environ["SLURM_JOB_NODELIST"])[0]
        addr = first
        try:
            out = subprocess.run(["scontrol", "show", "node", "-o", first], capture_output=True, text=True, timeout=30)
            for word in out.stdout.split():
                if word.startswith("NodeAddr="):
                    addr = word.split("=", 1)[1] or first
        except (OSError, subprocess.TimeoutExpired):
            pass
        spec["master_addr"] = addr
    return spec


def run_slurm_collective(where: Optional[str], nodes: Sequence[str], bundle: bytes, master: Optional[str],
                         port: int = DEFAULT_PORT, backend: str = "gloo", timeout: float = 60.0,
                         python: Optional[str] = None) -> CollectiveReport:
    """One srun step on ``nodes`` (those that gave a report), a rank per node (SLURM_NODEID)."""
    from . import slurm

    start = time.monotonic()
    spec = {"master_port": port, "backend": backend, "timeout": timeout, "slurm": True}
    if master:
        spec["master_addr"] = master
    limit = timeout * 2 + 60
    argv = slurm.srun_argv(where, node_command(spec, python), limit, nodes_only=list(nodes))
    out, err, finished, _rc = slurm.srun(argv, bundle, limit)
    got, step_nodes = slurm.answers(out)
    ranks = []
    for a in got:
        try:
            facts = json.loads(a.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
            ranks.append((a.node, "ok", facts, a.stderr.strip()[-500:]))
        except (ValueError, IndexError):
            ranks.append((a.node, "stackpeel-failed" if a.ended else "timeout", None,
                          f"exit status {a.rc}, no answer; stderr: {a.stderr.strip()[-800:]}"))
    for o in slurm.missing(step_nodes or list(nodes), [a.node for a in got], err, finished, 0.0):
        ranks.append((o.node, o.state, None, o.detail))
    ranks.sort(key=lambda r: (r[2] or {}).get("rank", len(nodes)))
    m = next(((r[2] or {}).get("master") for r in ranks if r[2]), None) or {}
    return evaluate(ranks, f"{m.get('addr', master or '?')}:{port}", backend, time.monotonic() - start)


def run_ray_collective(address: str, nodes: Sequence[str], master: Optional[str], port: int = DEFAULT_PORT,
                       backend: str = "gloo", timeout: float = 60.0, python: Optional[str] = None) -> CollectiveReport:
    """One pinned Ray task per node (those that gave a report, in that order), rank by order;
    the master is the first node's address as Ray knows it (NodeManagerAddress)."""
    from .raynodes import on_every_node

    start = time.monotonic()
    chosen: Dict[str, str] = {}

    def command_for(rank: int, node: Mapping[str, Any], name: str) -> str:
        if rank == 0:
            chosen["addr"] = master or node.get("NodeManagerAddress") or "127.0.0.1"
        spec = {"master_addr": chosen["addr"], "master_port": port, "rank": rank, "world_size": len(nodes),
                "backend": backend, "timeout": timeout}
        return node_command(spec, python, worker_python=True)

    ranks = []
    for node, answer, _took in on_every_node(address, command_for, timeout * 2 + 30, only=nodes):
        if not isinstance(answer, Mapping):
            ranks.append((node, "timeout" if answer is None else "unreachable", None,
                          "no answer in time" if answer is None else f"{type(answer).__name__}: {answer}"[-800:]))
            continue
        stderr = (answer.get("stderr") or b"").decode("utf-8", "replace")
        try:
            facts = json.loads((answer.get("stdout") or b"").decode("utf-8", "replace").strip().splitlines()[-1])
            ranks.append((node, "ok", facts, stderr.strip()[-500:]))
        except (ValueError, IndexError):
            ranks.append((node, "stackpeel-failed", None,
                          f"exit status {answer.get('rc')}, no answer; stderr: {stderr.strip()[-800:]}"))
    return evaluate(ranks, f"{chosen.get('addr', master or '?')}:{port}", backend, time.monotonic() - start)


def main(argv: Sequence[str]) -> int:
    """Node side: run the probe with the interpreter under test and pass its JSON through."""
    from ..host import default_python

    spec = json.loads(argv[0])
    if spec.pop("slurm", False):
        spec = from_slurm(spec)
    python = argv[1] if len(argv) > 1 else default_python()["python"]
    probe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probes", "collective.py")
    limit = float(spec.get("timeout", 60)) * 2 + 15
    try:
        proc = subprocess.run([python, probe, json.dumps(spec)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=limit, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        sys.stderr.write(f"stackpeel collective: {type(exc).__name__}: {exc}\n")
        return 2
    sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-4000:])
    sys.stdout.write(proc.stdout.decode("utf-8", "replace"))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["CODES", "CollectiveReport", "NodeFinding", "evaluate", "run_ssh_collective", "run_slurm_collective",
           "run_ray_collective",
           "node_command"]
