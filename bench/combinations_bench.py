#!/usr/bin/env python3
"""Benchmark: the known-bad-combinations table against the named anchor, one bare start of the
target interpreter (`python -c pass`), in one run.

Measured, medians of N rounds:

- ``match``: :func:`stackpeel.combinations.match_combinations` over every entry for the H200's
  versions (torch 2.11.0+cu130, Triton 3.6.0, FLA 0.6.0, cc 9.0, driver 580.159.04), in
  stackpeel's own process: the whole cost `check` adds once the versions are known;
- ``probe``: the ``config.versions`` probe (package metadata and torch/version.py, nothing
  imported) in a child of the target interpreter, as the runner starts it;
- ``anchor``: ``python -c pass`` with the same interpreter.

The figures that matter are the ratios probe/anchor and match/anchor (machines are noisy).
Usage: python bench/combinations_bench.py --python VENV/bin/python [--rounds 20]
This is not a test: it asserts nothing and prints what it measured.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from stackpeel import combinations  # noqa: E402
from stackpeel.runner.child import run_probe  # noqa: E402

H200 = {"torch": "2.11.0+cu130", "triton": "3.6.0", "fla-core": "0.6.0", "flash-linear-attention": "0.6.0",
        "transformers": "5.17.0", "gpu_cc": ["9.0"], "driver": "580.159.04", "cuda": "13.0", "python": "3.12.3"}


def median_s(fn, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    combinations.load()  # parse the file once, as a long-lived process does
    match = median_s(lambda: combinations.match_combinations(H200), args.rounds * 10)
    probe = median_s(lambda: run_probe(args.python, "config.versions", {"deps": {}, "options": {}}, 60),
                     args.rounds)
    anchor = median_s(lambda: subprocess.run([args.python, "-c", "pass"], check=True), args.rounds)
    parse = median_s(lambda: combinations.parse_entries(
        combinations._toml.loads(combinations.DATA_FILE.read_text())), args.rounds)
    n = len(combinations.load())
    print(f"entries: {n}; matched for the H200: {[m.id for m in combinations.match_combinations(H200)]}")
    print(f"match_combinations      {match * 1e3:8.3f} ms   ({match / anchor:.4f} x anchor)")
    print(f"parse combinations.toml {parse * 1e3:8.3f} ms   ({parse / anchor:.4f} x anchor)")
    print(f"config.versions probe   {probe * 1e3:8.3f} ms   ({probe / anchor:.2f} x anchor)")
    print(f"anchor: python -c pass  {anchor * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
