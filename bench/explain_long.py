#!/usr/bin/env python3
"""How long `stackpeel explain --no-live` takes on long logs, against `grep -c` over the same file.

A fault in a job of 64 ranks, each with DataLoader workers, makes every process print the same
traceback: hundreds of megabytes of records that differ only in their numbers (pids, ranks,
timestamps). This bench builds such logs from real text of the TRAINING corpus and times explain
on them. The anchor is `grep -c Traceback FILE` (one pass of a C program over the same bytes), so
the figure is a ratio that does not depend much on the machine:

* ``workers``: torchtitan#423's traceback (tests/corpus/explain/torchtitan-423-...log) as each rank
  prints it (``[rankN]:`` on every line), pipedream#28's DataLoader bus error with the worker's pid,
  and torchrun's ``failed (exitcode: 1) local_rank: N (pid: P)`` record, with glog stamps that
  vary: repeated up to SIZE bytes (default 230 MB, what 64 workers printed in the report the
  brief cites);
* ``distinct``: 1,000,000 lines that all differ in their words (a download/progress listing with
  hexadecimal names), then the same failure once.

    PYTHONPATH=src python bench/explain_long.py [--size MB] [--only workers,distinct] [--out FILE]
        [--src OTHER_CHECKOUT/src] [--keep DIR [--reuse]]

Each row: the input's size and lines, grep's and explain's seconds (wall clock, and the CPU time
the child used: the steadier figure on a shared machine), their ratios, and explain's first
candidate (which must be the same at every size). Inputs are written to a temporary
directory and removed.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "explain"
#: the stackpeel source timed (--src: another checkout's, for a before/after)
SRC = ROOT / "src"


def _body(name: str) -> list:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return text.split("# ---\n", 1)[1].rstrip("\n").split("\n")


def _traceback_lines() -> list:
    # the traceback of torchtitan#423 (without its command line and the "..." above it)
    lines = _body("torchtitan-423-invalid-device-ordinal-ngpu.log")
    start = next(i for i, ln in enumerate(lines) if "Traceback" in ln)
    return [ln.replace("traceback : ", "", 1) for ln in lines[start:]]


def _bus_error_lines() -> list:
    lines = _body("pipedream-28-unexpected-bus-error-shm.log")
    return [ln for ln in lines if ln.startswith(("ERROR:", "Traceback", "  ", "RuntimeError"))]


def write_workers(path: Path, size: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    tb = _traceback_lines()
    bus = _bus_error_lines()
    written = 0
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write("W1206 03:01:00.000000 4242 torch/distributed/run.py:793] Setting OMP_NUM_THREADS "
                  "environment variable for each process to be 1 in default\n")
        while written < size:
            rank = n % 64
            pid = 10000 + rng.randrange(90000)
            ms = n * 7
            stamp = f"{3 + ms // 3600000 % 20:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}{rng.randrange(1000):03d}"
            block = []
            if n % 4 == 3:
                block += [ln.replace("pid 325", f"pid {pid}") for ln in bus]
            else:
                block += [f"[rank{rank}]: {ln}" for ln in tb]
            block.append(f"E1206 {stamp} {pid} torch/distributed/elastic/multiprocessing/api.py:869] failed "
                         f"(exitcode: 1) local_rank: {rank % 8} (pid: {pid}) of binary: /usr/bin/python3")
            chunk = "\n".join(block) + "\n"
            out.write(chunk)
            written += len(chunk)
            n += 1
    return written


def write_distinct(path: Path, lines: int = 1_000_000, seed: int = 0) -> int:
    rng = random.Random(seed)
    words = ["model", "shard", "weights", "tokenizer", "vocab", "config", "adapter", "optimizer", "state",
             "scheduler", "rng", "ema", "lora", "embed", "head", "layer"]
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for i in range(lines):
            a, b = rng.choice(words), rng.choice(words)
            h = "".join(rng.choice("abcdef") for _ in range(12))
            line = f"Fetching {a}-{h}-{b}.safetensors from cache {rng.choice(words)}/{h[::-1]} ok\n"
            out.write(line)
            written += len(line)
        tail = "\n".join(f"[rank0]: {ln}" for ln in _traceback_lines()) + "\n"
        out.write(tail)
        written += len(tail)
    return written


def _time(cmd: list, env=None) -> tuple:
    """(wall seconds, CPU seconds of the child, completed process): on a shared machine the CPU
    seconds are the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p


def run_one(name: str, path: Path) -> str:
    size = path.stat().st_size
    with open(path, "rb") as f:
        nlines = sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 24), b""))
    g, gc, _ = _time(["grep", "-c", "Traceback", str(path)])
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    e, ec, p = _time([sys.executable, "-m", "stackpeel", "explain", str(path), "--no-live", "--format", "json"], env=env)
    first = "-"
    try:
        import json
        doc = json.loads(p.stdout)
        if doc.get("candidates"):
            first = doc["candidates"][0]["code"]
    except ValueError:
        first = f"(exit {p.returncode}: {p.stderr.strip()[-200:]})"
    return (f"{name:9} {size / 1e6:6.1f} MB {nlines:8d} lines  wall: grep -c {g:5.2f} s, explain {e:6.2f} s, "
            f"ratio {e / max(g, 1e-3):6.1f}  cpu: grep -c {gc:5.2f} s, explain {ec:6.2f} s, "
            f"ratio {ec / max(gc, 1e-2):6.1f}  first {first}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=float, default=230.0, help="the workers log's size in MB (default 230)")
    ap.add_argument("--only", default="workers,distinct")
    ap.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--src", help="time the stackpeel of this src directory (default: this checkout's)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: time the inputs already there")
    args = ap.parse_args()
    global SRC
    if args.src:
        SRC = Path(args.src).resolve()
    rows = [f"# bench/explain_long.py --size {args.size:g}  ({platform.python_version()}, "
            f"{os.cpu_count()} CPUs, {platform.machine()})"]
    print(rows[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.keep or tmp)
        d.mkdir(parents=True, exist_ok=True)
        for name in args.only.split(","):
            path = d / f"long-{name}.log"
            if args.reuse and path.exists():
                pass
            elif name == "workers":
                write_workers(path, int(args.size * 1e6))
            elif name == "distinct":
                write_distinct(path)
            else:
                raise SystemExit(f"unknown input {name!r}")
            rows.append(run_one(name, path))
            print(rows[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
