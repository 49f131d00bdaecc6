"""The Ray transport: one task per alive node of a Ray cluster, pinned to it with
``NodeAffinitySchedulingStrategy(node_id, soft=False)``.

Ray is an optional extra (``stackpeel[ray]``) imported only here, only for ``--ray``. The task
(fleet/_ray_task.py, standard library only, pickled by value so the nodes need no stackpeel)
runs bundle.remote_command with the bundle on its stdin, as SSH and srun do; the Ray worker's
interpreter runs stackpeel and, without ``--python``, is the one diagnosed: the Python the
cluster's own tasks run. The task asks for no CPU (``num_cpus=0``), so a busy cluster still
runs it. A node whose task does not finish within the timeout is ``timeout`` (its task is
cancelled, its process group killed by the task's own timeout); a node that died or could not
run the task is ``unreachable`` with Ray's words.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import TIMEOUT, UNREACHABLE, NodeOutcome, outcome_of_run


class RayUnavailable(RuntimeError):
    """Ray is not installed, or no cluster answers at the address."""


def node_names(nodes: Sequence[Mapping[str, Any]]) -> Dict[str, str]:
    """node id -> a name for people: the node's name (its IP unless the cluster set one), with
    the node id's first 8 characters where several nodes share it (nodes on one machine)."""
    base = {n["NodeID"]: str(n.get("NodeName") or n.get("NodeManagerAddress") or n["NodeID"]) for n in nodes}
    counts = Counter(base.values())
    return {nid: (name if counts[name] == 1 else f"{name}:{nid[:8]}") for nid, name in base.items()}


def outcome(node: str, answer: Mapping[str, Any], duration_s: float) -> NodeOutcome:
    """A node task's answer -> its outcome (pure)."""
    rc = answer.get("rc")
    stdout = answer.get("stdout") or b""
    stderr = (answer.get("stderr") or b"").decode("utf-8", "replace")
    if rc is None:
        return NodeOutcome(node, "ray", TIMEOUT, None, stderr.strip()[-2000:], duration_s)
    return outcome_of_run(node, "ray", rc, stdout, stderr, duration_s)


def _reachable(address: str, timeout: float = 10.0) -> None:
    """ray.init retries an address that does not answer for minutes: a TCP connect first."""
    if address in ("auto", "") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise RayUnavailable(f"--ray takes 'auto' or HOST:PORT of the cluster's head (GCS), not {address!r}")
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayUnavailable(f"no Ray cluster at {address!r}: {exc}") from None


def on_every_node(address: str, command_for: Callable[[int, Mapping[str, Any], str], str], timeout: float,
                  only: Optional[Sequence[str]] = None) -> List[Tuple[str, Any, float]]:
    """Connect to the cluster at ``address`` ('auto' or host:port), run ``command_for(index,
    node, name)`` on every alive node (or those named in ``only``, in that order) at once, with
    the bundle on its stdin; disconnect. (name, the task's answer or the exception or None for
    no answer in time, seconds) per node, in Ray's order of the nodes."""
    try:
        import ray
        import ray.cloudpickle
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError as exc:
        raise RayUnavailable(f"--ray needs Ray on this machine ({exc}): pip install 'stackpeel[ray]' "
                             "(pipx inject stackpeel ray)") from None
    from . import _ray_task
    from .bundle import make_bundle

    start = time.monotonic()
    _reachable(address)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"no Ray cluster at {address!r}: {type(exc).__name__}: {exc}") from None
    try:
        ray.cloudpickle.register_pickle_by_value(_ray_task)  # the nodes need no stackpeel to unpickle it
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        names = node_names(nodes)
        if only is not None:
            by_name = {names[n["NodeID"]]: n for n in nodes}
            nodes = [by_name[x] for x in only if x in by_name]
        bundle = ray.put(make_bundle())
        task = ray.remote(num_cpus=0, max_retries=0)(_ray_task.node_task)
        refs = {}
        for i, n in enumerate(nodes):
            strategy = NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
            name = names[n["NodeID"]]
            refs[task.options(scheduling_strategy=strategy).remote(command_for(i, n, name), bundle, timeout)] = name
        ready, pending = ray.wait(list(refs), num_returns=len(refs), timeout=timeout + 10)
        took = time.monotonic() - start
        got: Dict[str, Any] = {}
        for ref in ready:
            try:
                got[refs[ref]] = ray.get(ref)
            except Exception as exc:  # the task's node died, the worker crashed, the task was unschedulable
                got[refs[ref]] = exc
        for ref in pending:
            ray.cancel(ref, force=True)
            got[refs[ref]] = None
        return [(names[n["NodeID"]], got[names[n["NodeID"]]], took) for n in nodes]
    finally:
        ray.cloudpickle.unregister_pickle_by_value(_ray_task)
        ray.shutdown()


def run_ray(address: str, check_args: Sequence[str] = (), python: Optional[str] = None,
            prefer_installed: bool = True, timeout: float = 300.0) -> List[NodeOutcome]:
    """The check on every alive node at once. Outcomes in the order Ray lists the nodes."""
    from .bundle import remote_command

    command = remote_command(check_args, python, prefer_installed=prefer_installed, worker_python=True)
    out = []
    for node, answer, took in on_every_node(address, lambda i, n, name: command, timeout):
        if answer is None:
            out.append(NodeOutcome(node, "ray", TIMEOUT, None, f"no answer within {timeout:g} s", took))
        elif isinstance(answer, Exception):
            out.append(NodeOutcome(node, "ray", UNREACHABLE, None,
                                   f"{type(answer).__name__}: {str(answer).strip()[-1500:]}", took))
        else:
            out.append(outcome(node, answer, took))
    return out


__all__ = ["run_ray", "on_every_node", "RayUnavailable", "node_names", "outcome"]
