#!/usr/bin/env python3
"""The NCCL path of `stackpeel fleet --collective`, on a real machine with two or more GPUs.

Run where a Python has CUDA torch (no SSH, no cluster needed):

    python scenarios/gpu/fleet_collective_nccl.py --python /path/to/venv/bin/python

Each rank is what `fleet --collective` starts on a node (``python -m stackpeel.fleet.collective
SPEC PYTHON``: probes/collective.py with that interpreter), one per GPU (CUDA_VISIBLE_DEVICES),
rendezvous on 127.0.0.1, backend nccl; their facts go through the same pure
``fleet.collective.evaluate`` as over SSH.

1. NCCL_SOCKET_IFNAME=lo on every rank: the all-reduce must pass with no finding.
2. NCCL_SOCKET_IFNAME=eth-none on the last rank: a root finding
   ``env-nccl-socket-ifname-no-match`` naming that rank's node and NCCL_SOCKET_IFNAME, and the
   all-reduce failing (NCCL's bootstrap finds no interface).

Prints each run's rendered section and one JSON line per run; exit 0 when both runs come out as
stated, 1 otherwise, 2 when the machine cannot run it (fewer than two GPUs, no CUDA torch).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "src"))

from stackpeel.fleet.collective import evaluate  # noqa: E402
from stackpeel.fleet.render import _collective  # noqa: E402


def gpus(python: str) -> int:
    out = subprocess.run([python, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True,
                         text=True, timeout=300)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(python: str, world: int, ifname_of, timeout: float = 60.0, backend: str = "nccl"):
    port = free_port()
    procs = []
    for rank in range(world):
        spec = {"master_addr": "127.0.0.1", "master_port": port, "rank": rank, "world_size": world,
                "backend": backend, "timeout": timeout}
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(rank), NCCL_SOCKET_IFNAME=ifname_of(rank),
                   PYTHONPATH=str(REPO / "src"))
        env.pop("GLOO_SOCKET_IFNAME", None)
        procs.append(subprocess.Popen([sys.executable, "-m", "stackpeel.fleet.collective", json.dumps(spec), python],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    ranks = []
    for rank, p in enumerate(procs):
        out, err = p.communicate(timeout=timeout * 2 + 60)
        try:
            ranks.append((f"gpu{rank}", "ok", json.loads(out.decode().strip().splitlines()[-1]), err.decode()[-500:]))
        except (ValueError, IndexError):
            ranks.append((f"gpu{rank}", "stackpeel-failed", None, err.decode()[-800:]))
    return evaluate(ranks, f"127.0.0.1:{port}", backend)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter with CUDA torch")
    args = ap.parse_args()
    n = gpus(args.python)
    if n < 2:
        print(f"needs two GPUs visible to {args.python} (torch.cuda.device_count() = {n})")
        return 2
    world = min(n, 8)
    ok = True
    good = run(args.python, world, lambda r: "lo")
    print("\n".join(_collective(good, md=False)))
    print(json.dumps({"run": "lo everywhere", "passed": good.passed, "findings": [
        (f.node, f.finding.code) for f in good.findings]}))
    ok &= good.passed
    bad = run(args.python, world, lambda r: "eth-none" if r == world - 1 else "lo")
    print("\n".join(_collective(bad, md=False)))
    roots = [(f.node, f.finding.code) for f in bad.findings if f.root]
    print(json.dumps({"run": "last rank eth-none", "passed": bad.passed, "roots": roots,
                      "errors": [(n, (fa or {}).get("allreduce", {}).get("error")) for n, _, fa, _ in bad.ranks]}))
    ok &= (not bad.passed and roots == [(f"gpu{world - 1}", "env-nccl-socket-ifname-no-match")]
           and "NCCL_SOCKET_IFNAME" in next(f.finding.message for f in bad.findings if f.root))
    print("verdict:", "as stated" if ok else "NOT as stated")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
