"""``stackpeel fleet``: diagnose every node of a cluster through the engines it already runs.

Transports fetch one ``stackpeel check --format json`` report per node; nothing has to be
installed on the nodes beforehand (stackpeel ships itself as a small tarball over the
transport's standard input and runs with the node's Python; a node where stackpeel is
installed uses its own). The merge is pure: node outcomes in, a :class:`FleetReport` out,
rendered as text, JSON (the same envelope as ``check``) or Markdown.

Module map::

    fleet/
      __init__.py   NodeOutcome and FleetReport (data), merge() (pure)
      bundle.py     the tarball a node unpacks, and the shell line that runs it
      ssh.py        the SSH transport (asyncssh): bounded concurrency, per-host timeout
      slurm.py      the Slurm transport: one srun task per node, the bundle broadcast on stdin
      raynodes.py   the Ray transport: one task per alive node, pinned (_ray_task.py runs there)
      collective.py --collective: one torch.distributed rank per node, findings across nodes
      render.py     text / JSON / Markdown
      cli.py        the ``fleet`` subcommand
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..compare import compare
from ..model import Report

__all__ = ["NodeOutcome", "outcome_of_run", "FleetReport", "NodeGroup", "OddNode", "merge", "profile",
           "FLEET_SCHEMA_VERSION"]

FLEET_SCHEMA_VERSION = 1

#: how a node's diagnosis ended, besides "ok" (a report came back)
UNREACHABLE, TIMEOUT, FAILED = "unreachable", "timeout", "stackpeel-failed"


@dataclass(frozen=True)
class NodeOutcome:
    """What one node gave back: a report, or why there is none."""

    node: str
    transport: str
    state: str  # "ok" | "unreachable" | "timeout" | "stackpeel-failed"
    report: Optional[Report] = None
    detail: str = ""
    duration_s: float = 0.0

    def to_dict(self) -> Dict[str, Any]:
        return {"node": self.node, "transport": self.transport, "state": self.state, "detail": self.detail,
                "duration_s": round(self.duration_s, 3),
                "report": self.report.to_dict() if self.report is not None else None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NodeOutcome":
        return cls(node=d["node"], transport=d.get("transport", ""), state=d["state"], detail=d.get("detail", ""),
                   duration_s=float(d.get("duration_s", 0.0)),
                   report=Report.from_dict(d["report"]) if d.get("report") else None)


def outcome_of_run(node: str, transport: str, status: Optional[int], stdout: bytes, stderr: str,
                   duration_s: float) -> NodeOutcome:
    """What a node's run of bundle.remote_command gave back -> its outcome (every transport):
    exit status 97 is a node with no Python; stdout must be a report, else stackpeel failed."""
    stderr = stderr.strip()
    if status == 97:
        return NodeOutcome(node, transport, FAILED, None, "no Python to run stackpeel with on this node: " + stderr,
                           duration_s)
    try:
        report = Report.from_dict(json.loads(stdout.decode("utf-8", "replace")))
    except (ValueError, KeyError, TypeError) as exc:
        return NodeOutcome(node, transport, FAILED, None, f"exit status {status}, no report ({type(exc).__name__}: "
                                                          f"{exc}); stderr: {stderr}"[-2000:], duration_s)
    return NodeOutcome(node, transport, "ok", report, stderr[-500:], duration_s)


def _result_facts(report: Report, check_id: str) -> Mapping[str, Any]:
    r = report.result(check_id)
    return r.facts if r is not None else {}


def profile(report: Report) -> Dict[str, Any]:
    """The facts that tell nodes apart, each from the check that measures it (None: not measured)."""
    drv = _result_facts(report, "gpu.kernel_driver")
    cuda = _result_facts(report, "cuda.driver_api")
    torch = _result_facts(report, "torch.cuda")
    devices = cuda.get("devices") or []
    names = Counter(d.get("name") for d in devices if isinstance(d, Mapping))
    cc = _result_facts(report, "toolchain.c_compiler")
    headers = report.result("toolchain.python_headers")
    shm = _result_facts(report, "multi_gpu.shm")
    nccl = _result_facts(report, "multi_gpu.nccl")
    return {
        "python": report.target.get("version"),
        "driver": drv.get("driver_version") or drv.get("version"),
        "cuda_driver_api": cuda.get("driver_version"),
        "gpus": cuda.get("device_count"),
        "gpu_model": ", ".join(f"{n}x {m}" for m, n in sorted(names.items())) or None,
        "torch": torch.get("version"),
        "torch_cuda": torch.get("cuda"),
        "triton": _result_facts(report, "triton.import").get("version"),
        "fla": _result_facts(report, "kernels.fla").get("version"),
        "causal_conv1d": _result_facts(report, "kernels.causal_conv1d").get("version"),
        "c_compiler": cc.get("compiler") if cc else None,
        "python_headers": None if headers is None else headers.status.value,
        "shm_bytes": shm.get("size_bytes"),
        "nccl": nccl.get("nccl_version"),
    }


def signature(report: Report) -> Tuple[str, ...]:
    """Nodes with the same blocking root-cause codes share a signature (() = healthy)."""
    return tuple(sorted({code for rc in report.diagnosis.blocking for code in rc.codes}))


@dataclass(frozen=True)
class NodeGroup:
    signature: Tuple[str, ...]
    nodes: Tuple[str, ...]


@dataclass(frozen=True)
class OddNode:
    """A node whose diagnosis is not the majority's, with what differs."""

    node: str
    signature: Tuple[str, ...]
    profile_diff: Mapping[str, Tuple[Any, Any]]  # key -> (majority value, this node's)
    top_differences: Tuple[str, ...]  # from stackpeel diff against a majority node, most explanatory first


@dataclass(frozen=True)
class FleetReport:
    nodes: Tuple[NodeOutcome, ...]
    groups: Tuple[NodeGroup, ...]
    majority: Optional[Tuple[str, ...]]
    odd: Tuple[OddNode, ...]
    unreachable: Tuple[NodeOutcome, ...]
    failed: Tuple[NodeOutcome, ...]
    created: str = ""
    tool_version: str = ""
    duration_s: float = 0.0
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: ``fleet --collective``: a collective.CollectiveReport (None: not asked for)
    collective: Optional[Any] = None

    @property
    def exit_code(self) -> int:
        """0: every node answered and none has a blocking problem (and the collective, when
        asked for, passed); 1 otherwise."""
        ok = all(o.state == "ok" for o in self.nodes)
        healthy = all(g.signature == () for g in self.groups)
        together = self.collective is None or self.collective.passed
        return 0 if ok and healthy and together and self.nodes else 1

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema_version": FLEET_SCHEMA_VERSION,
            "kind": "fleet",
            "tool": {"name": "stackpeel", "version": self.tool_version},
            "created": self.created,
            "duration_s": round(self.duration_s, 3),
            "summary": {
                "nodes": len(self.nodes),
                "reports": sum(o.state == "ok" for o in self.nodes),
                "unreachable": [o.node for o in self.unreachable],
                "stackpeel_failed": [o.node for o in self.failed],
                "majority": list(self.majority) if self.majority is not None else None,
                "groups": [{"root_causes": list(g.signature), "nodes": list(g.nodes)} for g in self.groups],
                "odd": [{"node": o.node, "root_causes": list(o.signature),
                         "differs": {k: {"majority": a, "node": b} for k, (a, b) in o.profile_diff.items()},
                         "top_differences": list(o.top_differences)} for o in self.odd],
            },
            "profiles": {k: dict(v) for k, v in self.profiles.items()},
            **({"collective": self.collective.to_dict()} if self.collective is not None else {}),
            "exit_code": self.exit_code,
            "nodes": [o.to_dict() for o in self.nodes],
        }


def _majority_profile(profiles: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    keys = {k for p in profiles for k in p}
    for k in sorted(keys):
        counts = Counter(repr(p.get(k)) for p in profiles)
        top = counts.most_common(1)[0][0]
        out[k] = next(p.get(k) for p in profiles if repr(p.get(k)) == top)
    return out


def merge(outcomes: Sequence[NodeOutcome], created: str = "", tool_version: str = "",
          duration_s: float = 0.0, differences_per_node: int = 3) -> FleetReport:
    """Group nodes by root causes, name the odd ones out and what sets them apart.

    The majority is the largest group (ties: the healthy group, then the first seen). A node
    outside it is odd; its profile (driver, CUDA, torch, Triton, FLA, compiler, headers,
    /dev/shm, GPUs, NCCL) is compared with the majority's most common values, and
    ``stackpeel diff`` against one majority node gives the most explanatory differences.
    Unreachable nodes and nodes where stackpeel itself failed are listed apart.
    """
    reports = [o for o in outcomes if o.state == "ok" and o.report is not None]
    by_sig: Dict[Tuple[str, ...], List[str]] = {}
    for o in reports:
        by_sig.setdefault(signature(o.report), []).append(o.node)
    groups = sorted((NodeGroup(sig, tuple(nodes)) for sig, nodes in by_sig.items()),
                    key=lambda g: (-len(g.nodes), g.signature != (), g.nodes[0]))
    profiles = {o.node: profile(o.report) for o in reports}
    majority = groups[0].signature if groups else None
    odd: List[OddNode] = []
    if groups and len(groups) > 1:
        members = set(groups[0].nodes)
        ref_profile = _majority_profile([profiles[n] for n in groups[0].nodes])
        ref = next(o for o in reports if o.node in members)
        for o in reports:
            if o.node in members:
                continue
            p = profiles[o.node]
            diff = {k: (ref_profile.get(k), p.get(k)) for k in ref_profile if ref_profile.get(k) != p.get(k)}
            cmp = compare(ref.report, o.report, ref.node, o.node)
            tops = []
            for d in cmp.differences:  # the verdicts that differ; the profile already lists the facts
                if d.kind != "verdict":
                    continue
                tops.append(f"{d.where}: {d.a} -> {d.b}")
                if len(tops) == differences_per_node:
                    break
            odd.append(OddNode(o.node, signature(o.report), diff, tuple(tops)))
    # a node can be odd in its stack without a different verdict: same signature, other versions
    if groups:
        ref_profile = _majority_profile([profiles[n] for n in groups[0].nodes])
        for n in groups[0].nodes:
            diff = {k: (ref_profile.get(k), profiles[n].get(k)) for k in ref_profile
                    if ref_profile.get(k) != profiles[n].get(k)}
            if diff and len(groups[0].nodes) > 2:
                odd.append(OddNode(n, groups[0].signature, diff, ()))
    return FleetReport(
        nodes=tuple(outcomes), groups=tuple(groups), majority=majority, odd=tuple(odd),
        unreachable=tuple(o for o in outcomes if o.state in (UNREACHABLE, TIMEOUT)),
        failed=tuple(o for o in outcomes if o.state == FAILED),
        created=created, tool_version=tool_version, duration_s=duration_s, profiles=profiles)
