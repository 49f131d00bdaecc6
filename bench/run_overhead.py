#!/usr/bin/env python3
"""How much does ``stackpeel run`` slow a program down? (A benchmark, not a test.)

Workloads, each run directly and under ``stackpeel run``, alternating, medians kept:

* ``transformers``: import torch + transformers, build a tiny random LlamaForCausalLM
  from a config (no download) and run forward passes on CPU. The child reports the time
  of each phase, so the in-process figures exclude stackpeel's own start-up.
* ``raise-heavy``: a pure-Python loop that raises and catches an exception per
  iteration (the worst case: every iteration fires monitor callbacks).
* ``pure-python``: a pure-Python loop that raises nothing (sys.monitoring: should be free;
  settrace fallback: pays a trace call per Python call).

Pythons: an interpreter >= 3.12 (sys.monitoring) and one < 3.12 (settrace fallback).
By default: /tmp/v312/bin/python (a 3.12 venv with torch+transformers, if present),
.venv-stack/bin/python (3.11 with torch+transformers), and pyenv's 3.13 for the pure
workloads. Pass others with --python (repeatable).

    python bench/run_overhead.py                 # default set, 5 alternating rounds
    python bench/run_overhead.py --rounds 3 --python /path/to/python3.13

Ratios are monitored/direct medians: 1.05 means 5 % slower.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TRANSFORMERS = r'''
import json, sys, time
c0, t0 = time.process_time(), time.perf_counter()
import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM
c1, t1 = time.process_time(), time.perf_counter()
torch.manual_seed(0)
torch.set_num_threads(1)
cfg = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
model = LlamaForCausalLM(cfg).eval()
ids = torch.randint(0, 1000, (2, 32))
with torch.no_grad():
    model(ids)                          # warm-up
c2, t2 = time.process_time(), time.perf_counter()
with torch.no_grad():
    for _ in range(int(sys.argv[1])):
        model(ids)
c3, t3 = time.process_time(), time.perf_counter()
print(json.dumps({"phases": {"import cpu": c1 - c0, "forward cpu": c3 - c2, "work cpu": (c1 - c0) + (c3 - c2),
                             "work": (t1 - t0) + (t3 - t2)}}))
'''

RAISE_HEAVY = r'''
import json, sys, time
def parse(i):
    raise ValueError("not a number: %d" % i)
def run(n):
    bad = 0
    for i in range(n):
        try:
            parse(i)
        except ValueError:
            bad += 1
    return bad
c0, t0 = time.process_time(), time.perf_counter()
run(int(sys.argv[1]))
c1, t1 = time.process_time(), time.perf_counter()
print(json.dumps({"phases": {"work cpu": c1 - c0, "work": t1 - t0}}))
'''

PURE_PYTHON = r'''
import json, sys, time
def f(x):
    return x * 2 + 1
def run(n):
    s = 0
    for i in range(n):
        s += f(i) % 7
    return s
c0, t0 = time.process_time(), time.perf_counter()
run(int(sys.argv[1]))
c1, t1 = time.process_time(), time.perf_counter()
print(json.dumps({"phases": {"work cpu": c1 - c0, "work": t1 - t0}}))
'''

WORKLOADS = {
    "transformers": (TRANSFORMERS, "300", True),
    "raise-heavy": (RAISE_HEAVY, "200000", False),
    "pure-python": (PURE_PYTHON, "2000000", False),
}


def version_of(py: str) -> str:
    out = subprocess.run([py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def has_transformers(py: str) -> bool:
    out = subprocess.run([py, "-c", "import importlib.util as u; print(bool(u.find_spec('transformers') "
                                    "and u.find_spec('torch')))"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "True"


def one_run(cmd, env) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({out.returncode}): {out.stderr[-2000:]}")
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")][-1]
    data = json.loads(line)["phases"]
    data["wall"] = wall
    return data


def measure(py: str, script: Path, arg: str, rounds: int, env) -> dict:
    direct_cmd = [py, str(script), arg]
    run_cmd = [sys.executable, "-m", "stackpeel", "run", "-o", os.devnull, "--", py, str(script), arg]
    one_run(direct_cmd, env)            # warm the page cache and .pyc files once
    one_run(run_cmd, env)
    direct, monitored = [], []
    for i in range(rounds):
        # alternate, and swap the order every round, so drift hits both sides alike
        pair = [(direct_cmd, direct), (run_cmd, monitored)]
        for cmd, sink in (pair if i % 2 == 0 else pair[::-1]):
            sink.append(one_run(cmd, env))
    out = {}
    for key in direct[0]:
        d = statistics.median(r[key] for r in direct)
        m = statistics.median(r[key] for r in monitored)
        out[key] = (d, m, m / d if d else float("nan"))
    return out


def default_pythons() -> list:
    cands = ["/tmp/v312/bin/python", str(ROOT / ".venv-stack" / "bin" / "python")]
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13.*/bin/python")))[-1:]
    return [c for c in cands if os.path.exists(c)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", action="append", default=[], help="interpreter to measure (repeatable)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per measurement (default 5)")
    ap.add_argument("--only", choices=sorted(WORKLOADS), action="append", default=[])
    args = ap.parse_args(argv)
    pythons = args.python or default_pythons()
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)     # the workloads must see their own environment only
    rows = []
    with tempfile.TemporaryDirectory(prefix="stackpeel-bench-") as tmp:
        for name, (code, arg, needs_tf) in WORKLOADS.items():
            if args.only and name not in args.only:
                continue
            script = Path(tmp) / f"bench_{name.replace('-', '_')}.py"   # not transformers.py: it would shadow the package
            script.write_text(code)
            for py in pythons:
                if needs_tf and not has_transformers(py):
                    continue
                ver = version_of(py)
                mode = "monitoring" if tuple(int(x) for x in ver.split(".")[:2]) >= (3, 12) else "settrace"
                print(f"measuring {name} on Python {ver} ({mode}), {args.rounds} rounds...", file=sys.stderr)
                res = measure(py, script, arg, args.rounds, env)
                for phase, (d, m, r) in res.items():
                    rows.append((name, ver, mode, phase, d, m, r))
    cpu = os.cpu_count()
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = "?"
    print(f"\nstackpeel run overhead: {cpu} CPUs ({model}), medians of {args.rounds} alternating rounds\n")
    head = ("workload", "python", "monitor", "phase", "direct s", "monitored s", "ratio")
    widths = [14, 8, 11, 11, 10, 12, 7]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("  ".join("-" * w for w in widths))
    for name, ver, mode, phase, d, m, r in rows:
        cells = (name, ver, mode, phase, f"{d:.3f}", f"{m:.3f}", f"{r:.2f}")
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    print("\nphases: import = import torch+transformers; forward = 300 forward passes of a tiny Llama;")
    print("work = what the program itself timed; 'cpu' = CPU time of the program's process (less sensitive")
    print("to other load on a shared machine); wall = whole process, stackpeel's own start-up included.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
