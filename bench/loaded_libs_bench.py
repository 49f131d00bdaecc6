#!/usr/bin/env python3
"""Benchmark: the runtime_libs probe against the anchor, a bare ``import`` of the same
modules in the same interpreter.

The probe must import torch (and the installed extensions) to see what they load; the
question is what it costs on top of that. Each round runs, alternating, in fresh
processes of the target interpreter:

- anchor: ``python -c "import torch"`` (and ``import torch, triton`` for the default set);
- probe:  the runtime_libs probe started exactly as ``stackpeel check`` starts it (the
  runner's bootstrap, a child of the target interpreter), limited to the same imports.

Printed: medians of wall time and of CPU time (user + system of the process tree), the
ratios probe / anchor, and the probe's own split (imports vs its reading of the map, the
ELF files, owners and copies on disk). Target: the probe's extra cost is no more than the
import it pays for, i.e. ratio <= 2.

Usage: python bench/loaded_libs_bench.py --python VENV/bin/python [--rounds 5] [--out DIR]
This is not a test: it asserts nothing and prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from stackpeel.runner import run_probe  # noqa: E402


def timed(fn):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def anchor(python, modules):
    code = "import " + ", ".join(modules)
    return lambda: subprocess.run([python, "-c", code], check=True, capture_output=True, timeout=600)


def probe(python, modules):
    def go():
        ans = run_probe(python, "runtime_libs.loaded_libs", {"options": {"imports": modules, "budget_s": 300},
                                                              "deps": {}}, timeout=400)
        if ans.failure:
            raise SystemExit(f"probe failed: {ans.failure}")
        return ans.facts
    return go


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="target interpreter (with torch installed)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", help="directory for the raw figures (JSON)")
    args = ap.parse_args()
    args.python = os.path.abspath(args.python)  # the probe runs in a temporary directory

    sets = [["torch"]]
    has_triton = subprocess.run([args.python, "-c", "import importlib.util as u; "
                                 "raise SystemExit(u.find_spec('triton') is None)"]).returncode == 0
    if has_triton:
        sets.append(["torch", "triton"])
    # the venv's name, not its path: raw figures are committed
    venv = os.path.basename(os.path.dirname(os.path.dirname(args.python)))
    pyver = subprocess.run([args.python, "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__)"],
                           capture_output=True, text=True).stdout.strip()
    raw = {"python": f"{venv} (Python, torch: {pyver})", "host": platform.platform(), "cpus": os.cpu_count(), "rounds": args.rounds,
           "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "sets": {}}
    for modules in sets:
        a_run, p_run = anchor(args.python, modules), probe(args.python, modules)
        a_run(), p_run()  # warm the page cache for both
        rows = {"anchor": [], "probe": [], "split": []}
        for i in range(args.rounds):
            order = [("anchor", a_run), ("probe", p_run)]
            if i % 2:
                order.reverse()
            for name, fn in order:
                wall, cpu, out = timed(fn)
                rows[name].append({"wall_s": wall, "cpu_s": cpu})
                if name == "probe":
                    rows["split"].append(out.get("timings") or {})
        raw["sets"][" ".join(modules)] = rows

    lines = []
    say = lambda text: (print(text), lines.append(text))  # noqa: E731
    say(f"runtime_libs probe vs bare import; {raw['python']}; {raw['cpus']} CPUs; {args.rounds} alternating rounds, "
          "medians")
    say(f"{'imports':<16} {'anchor wall':>11} {'probe wall':>11} {'ratio':>6} {'anchor cpu':>11} {'probe cpu':>10} "
          f"{'ratio':>6} {'probe: imports':>15} {'own work':>9}")
    for name, rows in raw["sets"].items():
        med = lambda key, what: statistics.median(r[what] for r in rows[key])  # noqa: E731
        aw, pw, ac, pc = med("anchor", "wall_s"), med("probe", "wall_s"), med("anchor", "cpu_s"), med("probe", "cpu_s")
        imp = statistics.median(s.get("imports_s", 0) for s in rows["split"])
        own = statistics.median(s.get("analysis_s", 0) for s in rows["split"])
        raw["sets"][name]["medians"] = {"anchor_wall_s": aw, "probe_wall_s": pw, "wall_ratio": pw / aw,
                                        "anchor_cpu_s": ac, "probe_cpu_s": pc, "cpu_ratio": pc / ac,
                                        "probe_imports_s": imp, "probe_own_work_s": own}
        say(f"{name:<16} {aw:>10.2f}s {pw:>10.2f}s {pw / aw:>6.2f} {ac:>10.2f}s {pc:>9.2f}s {pc / ac:>6.2f} "
              f"{imp:>14.2f}s {own:>8.2f}s")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"loaded_libs-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.json"
        path.write_text(json.dumps(raw, indent=1))
        path.with_suffix(".txt").write_text("\n".join(lines) + "\n")
        print(f"raw figures: {path} (table: {path.with_suffix('.txt').name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
