#!/usr/bin/env python3
"""Fleet at scale, on one machine: (1) merging 1,000 node reports; (2) the SSH fan-out's own
scheduler (fleet.ssh.gather) over 1,000 simulated hosts whose latency and failures are injected
(log-normal report times around 8 s, 3 % unreachable after 3 s, 1 % hung until the timeout).

The merge uses real reports (the committed H200 validation runs, varied per node). The fan-out
measures stackpeel's part only (scheduling, bounded concurrency, timeouts), not sshd.

Usage: python bench/fleet_bench.py [--out bench/results/fleet_bench-DATE.txt]
"""

import argparse
import asyncio
import datetime
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from stackpeel.fleet import NodeOutcome, merge  # noqa: E402
from stackpeel.fleet.ssh import SshOptions, gather  # noqa: E402
from stackpeel.model import Report  # noqa: E402

REPORTS = sorted((ROOT / "docs" / "validation" / "2026-11-29-h200" / "reports").glob("*.json"))


def merge_bench(n=1000, rounds=5):
    reps = [Report.from_dict(json.loads(p.read_text())) for p in REPORTS]
    rng = random.Random(7)
    # mostly healthy nodes, a few of every failure the validation runs recorded
    healthy = [r for p, r in zip(REPORTS, reps) if p.stem == "healthy"][0]
    outcomes = [NodeOutcome(f"node{i:04d}", "file", "ok", healthy if rng.random() < 0.9 else rng.choice(reps))
                for i in range(n)]
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fleet = merge(outcomes)
        times.append(time.perf_counter() - t)
    return times, fleet


async def simulated(spec, command, bundle, opts, timeout, rng=random.Random(11)):
    roll = rng.random()
    if roll < 0.03:
        await asyncio.sleep(3.0 * SCALE)
        return NodeOutcome(spec, "sim", "unreachable", None, "No route to host")
    if roll < 0.04:
        await asyncio.sleep(timeout)
        return NodeOutcome(spec, "sim", "timeout", None, "no answer")
    await asyncio.sleep(min(timeout, rng.lognormvariate(2.0, 0.35) * SCALE))  # timeout is already scaled
    return NodeOutcome(spec, "sim", "ok", None)


def slurm_parse_bench(n=1000, rounds=3):
    """One srun step's labelled output from ``n`` nodes, each sending a real report (base64,
    76-column lines as the node's ``base64`` prints them), lines of all tasks interleaved
    round-robin as srun relays them: the time fleet.slurm.parse takes to sort it back out."""
    import base64

    from stackpeel.fleet.slurm import MARK, parse

    body = (ROOT / "docs" / "validation" / "2026-11-29-h200" / "reports" / "healthy.json").read_bytes()
    b64 = base64.encodebytes(body).decode().splitlines()
    per_task = []
    for t in range(n):
        lines = [f"{MARK} node node{t:04d} node[0000-{n - 1:04d}]", f"{MARK} rc 0", *b64, f"{MARK} stderr",
                 f"{MARK} end"]
        per_task.append([f"{t}: {ln}" for ln in lines])
    out = "\n".join(line for group in zip(*per_task) for line in group)
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        got = parse(out, "", 1.0, True)
        times.append(time.perf_counter() - t)
    return times, got, len(out)


SCALE = 0.01  # simulated seconds -> real seconds (8 s reports take 80 ms), so the bench runs in seconds


def fanout(hosts, concurrency, timeout=30.0):
    t = time.perf_counter()
    out = asyncio.run(gather([f"h{i}" for i in range(hosts)], "", b"", SshOptions(), timeout * SCALE, concurrency,
                             one=lambda s, c, b, o, to: simulated(s, c, b, o, to)))
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" /
                                         f"fleet_bench-{datetime.date.today().isoformat()}.txt"))
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# bench/fleet_bench.py  commit {commit}  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"# machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}", ""]
    times, fleet = merge_bench()
    lines.append(f"merge of 1000 node reports: median {sorted(times)[len(times) // 2]:.3f} s, "
                 f"max {max(times):.3f} s over {len(times)} rounds "
                 f"({len(fleet.groups)} groups, {len(fleet.odd)} odd nodes)")
    times, got, size = slurm_parse_bench()
    lines.append(f"slurm: one srun step's output from {len(got)} nodes ({size / 1e6:.0f} MB, real reports, lines "
                 f"interleaved) parsed in median {sorted(times)[len(times) // 2]:.3f} s, max {max(times):.3f} s; "
                 f"{sum(o.state == 'ok' for o in got)} reports")
    lines.append("")
    lines.append(f"fan-out, simulated hosts (time scale {SCALE}: a 8 s report takes 80 ms); wall in real seconds")
    lines.append("hosts  concurrency  wall_s  ok  unreachable  timeout  simulated_wall_s")
    for hosts in (10, 100, 1000):
        for conc in (8, 32, 128):
            wall, out = fanout(hosts, conc)
            st = [o.state for o in out]
            lines.append(f"{hosts:>5}  {conc:>11}  {wall:6.2f}  {st.count('ok'):>3}  {st.count('unreachable'):>11}  "
                         f"{st.count('timeout'):>7}  {wall / SCALE:16.0f}")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
