"""``stackpeel fleet``: argument parsing and the run; the work is in the sibling modules."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import sys
import time
from typing import List, Optional

from .. import __version__
from . import NodeOutcome, merge
from .collective import DEFAULT_PORT

EPILOG = """\
Hosts come from arguments (user@host:port), --hosts-file (one per line) or --ssh-hosts PATTERN
(Host aliases of ~/.ssh/config that match, e.g. 'gpu-*'); or the nodes of a Slurm allocation
(--slurm) or of a Ray cluster (--ray). Nothing needs to be installed on the
nodes: stackpeel ships itself over SSH (a ~200 KiB tarball) and runs with the node's python3;
a node with stackpeel on PATH uses its own. --from merges reports saved on the nodes instead
(e.g. the JSON a Kubernetes Job's pods printed, see docs/fleet.md).

examples:
  stackpeel fleet gpu-01 gpu-02 gpu-03 --python /opt/venv/bin/python
  stackpeel fleet --ssh-hosts 'gpu-*' --only toolchain,triton --format markdown
  stackpeel fleet --from reports/*.json --prometheus /var/lib/node_exporter/stackpeel.prom
  stackpeel fleet --slurm gpu/16            (inside salloc/sbatch: --slurm alone)
  stackpeel fleet --ray auto --python /opt/venv/bin/python
  stackpeel fleet gpu-01 gpu-02 --collective   (a real all-reduce across the nodes too)

exit codes: 0 every node diagnosed and healthy; 1 a node has a blocking problem or could not
be diagnosed; 2 bad input.
"""


#: ``--slurm`` without a value: the allocation this command runs in
ALLOCATION = "@allocation"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("fleet", help="diagnose every node of a cluster over SSH, Slurm or Ray (or merge saved reports)",
                       description="Run `stackpeel check` on many nodes at once and merge the verdicts: nodes "
                                   "grouped by root cause, the odd ones out named with what differs.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hosts", nargs="*", metavar="HOST", help="[user@]host[:port] to diagnose over SSH")
    p.add_argument("--hosts-file", metavar="FILE", help="more hosts, one per line")
    p.add_argument("--ssh-hosts", metavar="PATTERN", action="append", default=[],
                   help="Host aliases from ~/.ssh/config matching PATTERN (repeatable)")
    p.add_argument("--slurm", nargs="?", const=ALLOCATION, metavar="PARTITION[/NODES]",
                   help="one srun task per node: of this allocation (no value), or of an allocation srun asks "
                        "for (-p PARTITION, NODES a count or a nodelist; none: every node that is up)")
    p.add_argument("--ray", metavar="ADDRESS", help="one task per alive node of the Ray cluster at ADDRESS "
                                                    "('auto': the one this machine belongs to); needs stackpeel[ray]")
    p.add_argument("--from", dest="from_files", nargs="+", metavar="REPORT",
                   help="merge saved `check --format json` reports instead of connecting")
    p.add_argument("--python", metavar="PATH", help="interpreter to diagnose on every node (default: the "
                                                     "node's active environment, as `check` chooses it)")
    p.add_argument("--only", action="append", default=[], metavar="IDS", help="passed to check on each node")
    p.add_argument("--skip", action="append", default=[], metavar="IDS", help="passed to check on each node")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per node, connect to report (300)")
    p.add_argument("--concurrency", type=int, default=32, help="nodes diagnosed at once (32)")
    p.add_argument("-l", "--user", help="SSH user name (default: ssh config, then your user)")
    p.add_argument("-p", "--port", type=int, help="SSH port (default: ssh config, then 22)")
    p.add_argument("-i", "--identity", action="append", default=[], metavar="FILE", help="SSH private key")
    p.add_argument("-J", "--jump", metavar="HOST", help="SSH jump host (ProxyJump)")
    p.add_argument("--ssh-config", action="append", default=[], metavar="FILE", help="ssh_config file to read")
    p.add_argument("--known-hosts", metavar="FILE", help="known_hosts file ('none' skips host key checks: "
                                                         "only for throwaway test rigs)")
    p.add_argument("--no-installed", action="store_true", help="always ship this stackpeel, even where the node "
                                                              "has one installed")
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write the merged report to FILE")
    p.add_argument("--prometheus", metavar="FILE", help="also write node_exporter textfile metrics to FILE")
    c = p.add_argument_group("across nodes (SSH, Slurm or Ray; see docs/fleet.md)")
    c.add_argument("--collective", action="store_true",
                   help="after the checks, run one torch.distributed rank per diagnosed node at once: rendezvous "
                        "reachability, the interface each would use, a real all-reduce; findings name node and setting")
    c.add_argument("--master", metavar="ADDR[:PORT]", help="rendezvous for --collective (default: the first "
                                                           f"diagnosed host's address, port {DEFAULT_PORT})")
    c.add_argument("--backend", choices=("gloo", "nccl"), help="for --collective (default: nccl when every node "
                                                               "has a GPU, else gloo)")
    k = p.add_argument_group("Kubernetes (see docs/fleet.md)")
    k.add_argument("--k8s-manifest", action="store_true", help="print a DaemonSet manifest that runs check on "
                                                               "every GPU node; collect with --from")
    k.add_argument("--image", help="container image for --k8s-manifest (your training image)")
    k.add_argument("--namespace", default="stackpeel", help="namespace for --k8s-manifest (stackpeel)")
    k.add_argument("--gpus", type=int, default=1, help="nvidia.com/gpu limit of the pod (1; 0: none)")
    k.add_argument("--runtime-class", help="runtimeClassName for the pod (e.g. nvidia)")
    p.set_defaults(handler=cmd_fleet)
    return p


def _load_saved(paths: List[str], fleets: Optional[list] = None) -> List[NodeOutcome]:
    """Reports and fleet reports from files; ``fleets`` collects each fleet report's run
    (duration, collective) so that one read back says what its run said."""
    from ..model import Report

    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if data.get("kind") == "fleet":  # a fleet report: its nodes again (and its collective)
                out.extend(NodeOutcome.from_dict(n) for n in data.get("nodes", []))
                if fleets is not None:
                    from .collective import CollectiveReport
                    fleets.append((float(data.get("duration_s") or 0.0),
                                   CollectiveReport.from_dict(data["collective"]) if data.get("collective") else None))
                continue
            rep = Report.from_dict(data)
            name = (rep.host or {}).get("hostname") or os.path.splitext(os.path.basename(path))[0]
            out.append(NodeOutcome(name, "file", "ok", rep, path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out.append(NodeOutcome(os.path.basename(path), "file", "stackpeel-failed", None,
                                   f"cannot read {path}: {type(exc).__name__}: {exc}"))
    return out


def _collective(args, outcomes: List[NodeOutcome]):
    """Ranks on the nodes that gave a report, in the order named; None when fewer than two did."""
    from .bundle import make_bundle
    from .collective import run_ray_collective, run_slurm_collective, run_ssh_collective

    ok = [o for o in outcomes if o.state == "ok" and o.report is not None]
    if len(ok) < 2:
        print("stackpeel fleet: --collective needs two diagnosed nodes; "
              f"{len(ok)} gave a report", file=sys.stderr)
        return None
    backend = args.backend or ("nccl" if all((o.report.result("cuda.driver_api") is not None and
                                              (o.report.result("cuda.driver_api").facts or {}).get("device_count"))
                                             for o in ok) else "gloo")
    addr, port = args.master, DEFAULT_PORT
    if addr and addr.rpartition(":")[2].isdigit() and addr.count(":") == 1:
        addr, _, p = addr.partition(":")
        port = int(p)
    # the store waits this long for every rank; the node's own budget is twice that and more
    wait = max(10.0, min(120.0, args.timeout / 3))
    if args.ray:
        return run_ray_collective(args.ray, [o.node for o in ok], addr or None, port, backend, wait, args.python)
    if args.slurm is not None:
        return run_slurm_collective(None if args.slurm == ALLOCATION else args.slurm, [o.node for o in ok],
                                    make_bundle(), addr or None, port, backend, wait, args.python)
    from .ssh import SshOptions

    opts = SshOptions(username=args.user, port=args.port, identity=tuple(args.identity),
                      known_hosts=args.known_hosts, config=tuple(args.ssh_config), jump=args.jump)
    return run_ssh_collective([o.node for o in ok], opts, make_bundle(), addr or None, port, backend, wait,
                              args.python)


def cmd_fleet(args) -> int:
    from .render import render_fleet

    if args.k8s_manifest:
        if not args.image:
            print("stackpeel fleet: --k8s-manifest needs --image (the image your GPU jobs run)", file=sys.stderr)
            return 2
        from .k8s import render_manifest
        extra: List[str] = []
        for flag, values in (("--only", args.only), ("--skip", args.skip)):
            if values:
                extra += [flag, ",".join(values)]
        sys.stdout.write(render_manifest(image=args.image, namespace=args.namespace, python=args.python,
                                         gpus=args.gpus, runtime_class=args.runtime_class, check_args=extra))
        return 0
    hosts: List[str] = list(args.hosts)
    try:
        if args.hosts_file:
            from .ssh import hosts_from_file
            hosts += hosts_from_file(args.hosts_file)
    except OSError as exc:
        print(f"stackpeel fleet: cannot read --hosts-file: {exc}", file=sys.stderr)
        return 2
    if args.ssh_hosts:
        from .ssh import hosts_from_ssh_config
        found = hosts_from_ssh_config(args.ssh_hosts, (args.ssh_config or [None])[0])
        if not found:
            print(f"stackpeel fleet: no Host in the ssh config matches {', '.join(args.ssh_hosts)}", file=sys.stderr)
            return 2
        hosts += found
    if not hosts and not args.from_files and args.slurm is None and not args.ray:
        print("stackpeel fleet: name hosts, --hosts-file, --ssh-hosts, --slurm, --ray or --from REPORT...",
              file=sys.stderr)
        return 2
    engines = sum((bool(hosts), args.slurm is not None, bool(args.ray)))
    if args.collective and engines != 1:
        print("stackpeel fleet: --collective runs over one of SSH hosts, --slurm or --ray", file=sys.stderr)
        return 2
    if args.slurm == ALLOCATION and not os.environ.get("SLURM_JOB_ID"):
        print("stackpeel fleet: --slurm without PARTITION runs inside an allocation (salloc, sbatch): "
              "SLURM_JOB_ID is not set here; name one: --slurm PARTITION[/NODES]", file=sys.stderr)
        return 2
    if args.prometheus:
        from ..prometheus import ensure_available
        try:
            ensure_available()
        except RuntimeError as exc:
            print(f"stackpeel fleet: {exc}", file=sys.stderr)
            return 2
    start = time.monotonic()
    fleets: list = []
    outcomes: List[NodeOutcome] = _load_saved(args.from_files, fleets) if args.from_files else []
    check_args: List[str] = []
    for flag, values in (("--only", args.only), ("--skip", args.skip)):
        if values:
            check_args += [flag, ",".join(values)]
    if hosts:
        try:
            from .ssh import SshOptions, run_ssh
        except ImportError:
            print("stackpeel fleet: SSH needs asyncssh: pipx inject stackpeel asyncssh "
                  "(or pip install 'stackpeel[fleet]')", file=sys.stderr)
            return 2
        from .bundle import make_bundle, remote_command

        command = remote_command(check_args, args.python, prefer_installed=not args.no_installed)
        opts = SshOptions(username=args.user, port=args.port, identity=tuple(args.identity),
                          known_hosts=args.known_hosts, config=tuple(args.ssh_config), jump=args.jump)
        tty = sys.stderr.isatty()

        def progress(o: NodeOutcome, done: int, total: int) -> None:
            line = f"[{done}/{total}] {o.node}: {o.state} ({o.duration_s:.1f} s)"
            print(("\r\x1b[2K" + line[:78]) if tty else line, file=sys.stderr, end="" if tty else "\n", flush=True)

        outcomes += run_ssh(hosts, command, make_bundle(), opts, timeout=args.timeout,
                            concurrency=args.concurrency, progress=progress)
        if tty:
            print("\r\x1b[2K", end="", file=sys.stderr, flush=True)
    if args.slurm is not None:
        from .bundle import make_bundle, remote_command
        from .slurm import run_slurm

        command = remote_command(check_args, args.python, prefer_installed=not args.no_installed)
        outcomes += run_slurm(None if args.slurm == ALLOCATION else args.slurm, command, make_bundle(),
                              timeout=args.timeout)
    if args.ray:
        from .raynodes import RayUnavailable, run_ray

        try:
            outcomes += run_ray(args.ray, check_args, args.python, prefer_installed=not args.no_installed,
                                timeout=args.timeout)
        except RayUnavailable as exc:
            print(f"stackpeel fleet: {exc}", file=sys.stderr)
            return 2
    # one saved fleet report read back keeps its run's duration and collective; several: no one run
    one_run = len(fleets) == 1 and len(args.from_files) == 1 and not hosts and args.slurm is None and not args.ray
    collective = fleets[0][1] if one_run else None
    if args.collective:
        collective = _collective(args, [o for o in outcomes if o.transport in ("ssh", "slurm", "ray")])
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    rep = merge(outcomes, created=created, tool_version=__version__,
                duration_s=fleets[0][0] if one_run else time.monotonic() - start)
    if collective is not None:
        rep = dataclasses.replace(rep, collective=collective)
    text = render_fleet(rep, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.prometheus:
        from ..prometheus import write_fleet
        write_fleet(rep, args.prometheus)
    return rep.exit_code
