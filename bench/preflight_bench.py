#!/usr/bin/env python3
"""Benchmark: N local ranks calling stackpeel.require at a job's start, sharing one verdict
per node (the default) against each rank checking by itself, and against the anchor: one
process, one require.

Ranks are real processes started as torchrun starts them (same parent; LOCAL_RANK, RANK,
WORLD_SIZE, MASTER_ADDR/PORT, TORCHELASTIC_RUN_ID), each in a fresh launch; the figure is the
wall time until the last rank has its verdict, as a ratio to the anchor's, medians of
--rounds rounds run alternately in one run (shared machines are noisy; ratios are what
compare). Nothing is reused between launches (--fresh caches per launch).

Usage: python bench/preflight_bench.py --python VENV/bin/python [--checks toolchain.extension_build]
       [--ranks 1,4,8] [--rounds 3] [--json OUT]
This is not a test: it asserts nothing and prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

RANK = r"""
import sys, stackpeel
try:
    stackpeel.require(*sys.argv[2].split(","), python=sys.argv[1], share=sys.argv[3] == "1")
except stackpeel.StackError:
    pass
"""


def launch(python: str, checks: str, ranks: int, share: bool, tmp: str) -> float:
    run_id = uuid.uuid4().hex
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-" + run_id),
               STACKPEEL_PREFLIGHT_DIR=os.path.join(tmp, "verdicts"))
    start = time.monotonic()
    procs = []
    for r in range(ranks):
        renv = dict(env, LOCAL_RANK=str(r), RANK=str(r), WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks),
                    MASTER_ADDR="127.0.0.1", MASTER_PORT="29511", TORCHELASTIC_RUN_ID=run_id)
        procs.append(subprocess.Popen([sys.executable, "-c", RANK, python, checks, "1" if share else "0"], env=renv,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for p in procs:
        p.wait(timeout=900)
    return time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--checks", default="toolchain.extension_build")
    ap.add_argument("--ranks", default="1,4,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    counts = [int(n) for n in args.ranks.split(",")]
    tmp = tempfile.mkdtemp(prefix="preflight-bench-")
    times: dict = {"anchor": []}
    try:
        for _ in range(args.rounds):
            times["anchor"].append(launch(args.python, args.checks, 1, False, tmp))
            for n in counts:
                for share in (True, False):
                    times.setdefault(f"{n} ranks {'shared' if share else 'each alone'}", []).append(
                        launch(args.python, args.checks, n, share, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    anchor = statistics.median(times["anchor"])
    rows = {k: {"median_s": round(statistics.median(v), 2), "ratio": round(statistics.median(v) / anchor, 2)}
            for k, v in times.items()}
    print(f"require({args.checks}) on {args.python}; {os.cpu_count()} CPUs; {args.rounds} rounds; "
          f"anchor: one process, one require")
    for k, row in rows.items():
        print(f"  {k:<24} {row['median_s']:>7.2f} s   x{row['ratio']:.2f} of the anchor")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"checks": args.checks, "cpus": os.cpu_count(), "rounds": args.rounds, "rows": rows}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
