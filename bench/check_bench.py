#!/usr/bin/env python3
"""Benchmark: `stackpeel check` against the named anchor, `python -m torch.utils.collect_env`.

Both run on the same target interpreter, alternating, N rounds each; the figure that
matters is the ratio of medians (machines are noisy). Also reported:

- the subset of checks that never import torch (system, gpu, cuda, toolchain without nvcc);
- the run without the kernel-library layer (`--skip kernels`): collect_env's scope plus
  the toolchain and Triton layers, without importing FLA and transformers;
- the critical path: the slowest single check in the full run; a parallel runner should
  finish close to it.

Usage: python bench/check_bench.py --python VENV/bin/python [--rounds 5] [--json OUT]
This is not a test: it asserts nothing and prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

NO_TORCH_SKIP = "runtime_libs,torch,triton,kernels,multi_gpu,toolchain.nvcc"


def wall(argv, env=None):
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    return time.perf_counter() - t0, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="target interpreter (with torch installed)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    sp = [sys.executable, "-m", "stackpeel", "check", "--python", args.python, "--format", "json"]
    anchor = [args.python, "-m", "torch.utils.collect_env"]
    ours, theirs, subset, nokernels, reports = [], [], [], [], []
    # one warm-up of each so that the first round does not pay for cold disk caches alone
    wall(anchor)
    wall(sp)
    for i in range(args.rounds):
        pair = [("anchor", anchor), ("stackpeel", sp)]
        if i % 2:
            pair.reverse()
        for name, argv in pair:
            t, proc = wall(argv)
            if name == "anchor":
                theirs.append(t)
            else:
                ours.append(t)
                try:
                    reports.append(json.loads(proc.stdout))
                except ValueError:
                    print("stackpeel printed no JSON:", proc.stderr[-2000:], file=sys.stderr)
                    return 2
        t, _ = wall(sp + ["--skip", NO_TORCH_SKIP])
        subset.append(t)
        t, _ = wall(sp + ["--skip", "kernels"])
        nokernels.append(t)

    last = reports[-1]
    durations = sorted(((r["duration_s"], r["id"]) for r in last["results"]), reverse=True)
    crit_s, crit_id = durations[0]
    med_ours, med_theirs, med_subset = statistics.median(ours), statistics.median(theirs), statistics.median(subset)
    med_nok = statistics.median(nokernels)
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    machine = f"{os.cpu_count()} CPUs ({cpu or platform.processor()}), {platform.system()} {platform.release()}"
    print(f"machine: {machine}")
    print(f"target:  {args.python} (Python {last['target'].get('version')})")
    print(f"rounds:  {args.rounds} alternating, medians")
    print()
    print(f"{'what':<48} {'median s':>9}")
    print(f"{'python -m torch.utils.collect_env (anchor)':<48} {med_theirs:>9.2f}")
    print(f"{'stackpeel check (all ' + str(len(last['results'])) + ' checks)':<48} {med_ours:>9.2f}")
    print(f"{'stackpeel check --skip kernels':<48} {med_nok:>9.2f}")
    print(f"{'stackpeel check, checks that never import torch':<48} {med_subset:>9.2f}")
    print(f"{'slowest single check (critical path): ' + crit_id:<48} {crit_s:>9.2f}")
    print()
    print(f"ratio stackpeel / collect_env: {med_ours / med_theirs:.2f}")
    print(f"ratio stackpeel / critical path: {med_ours / crit_s:.2f}")
    print(f"ratio stackpeel --skip kernels / collect_env: {med_nok / med_theirs:.2f}")
    print()
    print("per-check wall in the last full run:")
    for d, cid in durations:
        print(f"  {cid:<36} {d:6.2f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "rounds": args.rounds, "collect_env_s": theirs, "stackpeel_s": ours,
                       "no_torch_subset_s": subset, "skip_kernels_s": nokernels, "critical_path": [crit_id, crit_s],
                       "per_check_s": {cid: d for d, cid in durations}}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
