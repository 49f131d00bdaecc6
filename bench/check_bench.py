#!/usr/bin/env python3
"""Benchmark: `stackpeel check` against the named anchor, `python -m torch.utils.collect_env`.

All on the same target interpreter, alternating in one run (the order rotates every
round), N rounds; the figures that matter are ratios of medians, because the machines
are shared and noisy:

- collect_env (the anchor);
- the default check, run with ``--fresh`` (nothing reused);
- the repeat run: the same command right after, reusing the unchanged machine's results;
- ``--deep`` (real ops; fewer rounds: minutes on a GPU);
- ``python -c "import torch"``: what the critical path cannot avoid;
- the critical path: the slowest check of the default run, and what it spends its time
  on (the shared torch import it waited for, then its own work);
- the checks that never import torch, each (issue 9: <= 0.3 s each): their wall in the
  default run, and each probe run alone (forked, nothing else running), its own cost.

Each row also gives the median CPU time (user + system, children included): on a machine
shared with other jobs the wall time also measures the neighbours.

Usage: python bench/check_bench.py --python VENV/bin/python [--rounds 5] [--deep-rounds 1]
       [--json OUT] [--label TEXT]
This is not a test: it asserts nothing and prints what it measured.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
import tempfile
import time

#: checks whose probes import torch (or may: kernels.causal_conv1d does when causal-conv1d is
#: installed); kernels.transformers_fast_path no longer does (it joins the other checks' answers)
TORCH_IMPORTING = ("torch.", "triton.kernel_launch", "kernels.fla", "kernels.causal_conv1d", "kernels.torch_compile",
                   "multi_gpu.p2p", "multi_gpu.nccl", "toolchain.nvcc", "runtime_libs.")
#: how many times each torch-free probe runs alone (forked from a bare interpreter, nothing
#: else running) for its own cost (--alone-rounds)
ALONE_ROUNDS = 5


#: CPU seconds (user + system) of each timed command, its children included, by the
#: label it was timed under: on a shared machine the wall time also measures the
#: neighbours; the CPU time is what the command itself costs
CPU = {}


def wall(argv, env=None, label=None):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
    t = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if label:
        CPU.setdefault(label, []).append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return t, proc


def report_of(proc):
    try:
        return json.loads(proc.stdout)
    except ValueError:
        sys.stderr.write("stackpeel printed no JSON:\n" + proc.stderr[-2000:] + "\n")
        raise SystemExit(2)


def versions(python):
    code = ("import json, importlib.metadata as m\nout = {}\nfor d in ('torch', 'triton', 'fla-core', "
            "'flash-linear-attention', 'transformers', 'causal-conv1d'):\n    try:\n        out[d] = m.version(d)\n"
            "    except Exception:\n        out[d] = None\nprint(json.dumps(out))")
    try:
        return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True).stdout)
    except ValueError:
        return {}


def commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().replace("\n", "; ")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return (f"{os.cpu_count()} CPUs ({cpu or platform.processor()}), {platform.system()} {platform.release()}"
            + (f", GPU: {gpu}" if gpu else ", no GPU"))


def alone(python, report, ids, env, rounds=ALONE_ROUNDS):
    """Each check's probe run alone, ``rounds`` times, forked from a bare interpreter of the
    target with the facts of the last default run as its input, as the scheduler would give
    them: its own cost, without the neighbours of a full run (on 2 cores the torch import
    holds one, and every other probe of the run shares the second). Median seconds by id."""
    from stackpeel import registry
    from stackpeel.runner.scheduler import probe_inputs
    from stackpeel.runner.zygote import Zygote

    classes = {c.id: c for c in registry.load(plugins=False)}
    facts = {r["id"]: r["facts"] for r in report["results"]}
    zygote = Zygote(os.path.abspath(python), (), env)  # it runs in a directory of its own: --python may be relative
    out = {}
    try:
        if not zygote.usable():
            return out
        for cid in ids:
            cls = classes.get(cid)
            if cls is None or not cls.probe:
                continue
            inp = {"deps": {r: facts.get(r, {}) for r in probe_inputs(cls)}, "options": dict(cls.probe_options),
                   "check": cid, "timeout_s": cls.timeout, "mode": "default"}
            runs = []
            for _ in range(rounds):
                answer = zygote.run_probe(cls.probe, inp, cls.timeout, probes_dir=cls.probes_dir)
                if answer is None or answer.failure is not None:
                    break
                runs.append(answer.duration_s)
            if runs:
                out[cid] = med(runs)
    finally:
        zygote.close()
    return out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def precompile() -> int:
    """Byte-compile stackpeel's own package once when this machine forbids writing .pyc files
    (PYTHONDONTWRITEBYTECODE): an installed stackpeel has them (pip and pipx compile at install),
    and without them every start compiles some 100 modules from source, which no user pays.
    Returns how many modules were compiled (0: nothing to do). Python reads .pyc files even
    with the variable set."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return 0
    import compileall
    import importlib.util
    spec = importlib.util.find_spec("stackpeel")
    if spec is None or not spec.submodule_search_locations:
        return 0
    root = list(spec.submodule_search_locations)[0]
    compileall.compile_dir(root, quiet=2)
    return sum(1 for _ in Path(root).rglob("*.py"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="target interpreter (with torch installed)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--deep-rounds", type=int, default=1, help="rounds that also run --deep (0: none)")
    ap.add_argument("--alone-rounds", type=int, default=ALONE_ROUNDS,
                    help="runs of each torch-free probe alone, for its own cost (0: none)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--label", default="", help="what to call this machine in the output")
    args = ap.parse_args()

    cache_home = tempfile.mkdtemp(prefix="stackpeel-bench-cache-")
    atexit.register(shutil.rmtree, cache_home, True)  # the bench's private repeat-run cache goes with it
    env = dict(os.environ, XDG_CACHE_HOME=cache_home)
    sp = [sys.executable, "-m", "stackpeel", "check", "--python", args.python, "--format", "json"]
    precompiled = precompile()
    runs = {
        "collect_env": [args.python, "-m", "torch.utils.collect_env"],
        "import_torch": [args.python, "-c", "import torch"],
        "default": sp + ["--fresh"],
    }
    times = {k: [] for k in ("collect_env", "import_torch", "default", "repeat", "deep")}
    last_default, last_repeat, last_deep, identical = None, None, None, []
    wall(runs["collect_env"])  # warm the disk cache once for everyone
    wall(runs["default"], env)
    for i in range(args.rounds):
        order = ["collect_env", "import_torch", "default"]
        order = order[i % 3:] + order[:i % 3]
        for name in order:
            t, proc = wall(runs[name], env, name)
            times[name].append(t)
            if name == "default":
                last_default = report_of(proc)
                t, proc = wall(sp, env, "repeat")  # right after: the repeat run on an unchanged machine
                times["repeat"].append(t)
                last_repeat = report_of(proc)
                same = ([(r["id"], r["status"], [f["code"] for f in r["findings"]]) for r in last_default["results"]]
                        == [(r["id"], r["status"], [f["code"] for f in r["findings"]])
                            for r in last_repeat["results"]]) and last_default["diagnosis"] == last_repeat["diagnosis"]
                identical.append(same)
        if i < args.deep_rounds:
            t, proc = wall(sp + ["--deep", "--fresh"], env, "deep")
            times["deep"].append(t)
            last_deep = report_of(proc)

    durations = sorted(((r["duration_s"], r["id"]) for r in last_default["results"]), reverse=True)
    crit_s, crit_id = durations[0]
    no_torch = [(d, cid) for d, cid in durations if not cid.startswith(TORCH_IMPORTING)]
    m = {k: med(v) for k, v in times.items()}
    out = []
    say = out.append
    say(f"machine: {args.label + ': ' if args.label else ''}{machine()}")
    say(f"target:  {args.python} (Python {last_default['target'].get('version')})")
    say(f"stack:   {json.dumps(versions(args.python))}")
    say(f"stackpeel commit: {commit()}")
    say(f"rounds:  {args.rounds} alternating (order rotates), medians; --deep in {len(times['deep'])} round(s)")
    if precompiled:
        say(f"note:    PYTHONDONTWRITEBYTECODE is set, so stackpeel's {precompiled} modules were byte-compiled once "
            "before the rounds, as pip and pipx do when they install it")
    say("")
    say(f"{'what':<58} {'median s':>9} {'CPU s':>6}   all rounds (wall)")
    rows = [("python -m torch.utils.collect_env (anchor)", "collect_env"),
            ("python -c 'import torch' (floor of any torch probe)", "import_torch"),
            (f"stackpeel check --fresh (all {len(last_default['results'])} checks)", "default"),
            ("stackpeel check, repeat run (unchanged machine)", "repeat"),
            ("stackpeel check --deep --fresh", "deep")]
    for label, key in rows:
        if times[key]:
            say(f"{label:<58} {m[key]:>9.2f} {med(CPU.get(key, [])):>6.2f}   {' '.join(f'{t:.2f}' for t in times[key])}")
    say("")
    say(f"ratio default check / collect_env:        {m['default'] / m['collect_env']:.2f}   (issue 9: <= 1.0); "
        f"in CPU time {med(CPU['default']) / med(CPU['collect_env']):.2f}")
    say(f"ratio default check / slowest probe:      {m['default'] / crit_s:.2f}   (issue 9: <= 1.3)")
    say(f"speed-up of the repeat run:               {m['default'] / m['repeat']:.1f}x  (issue 9: >= 5); "
        f"identical verdicts in {sum(identical)}/{len(identical)} rounds")
    own = alone(args.python, last_default, [cid for _, cid in no_torch], env, args.alone_rounds) \
        if args.alone_rounds > 0 else {}
    if no_torch:
        d, cid = no_torch[0]
        say(f"slowest check that never imports torch:   {cid} {d:.2f} s   (issue 9: <= 0.3 s each)")
    if own:
        worst = max(own, key=own.get)
        say(f"  the same checks run alone:              {worst} {own[worst]:.2f} s the slowest "
            f"(median of {args.alone_rounds}, each forked with nothing else running)")
    say("")
    say(f"critical path (last default run): {crit_id} {crit_s:.2f} s; it is forked from the interpreter that imports "
        f"torch once, so it spends about {m['import_torch']:.2f} s waiting for that import (measured alone above) "
        f"and {max(0.0, crit_s - m['import_torch']):.2f} s on its own work")
    pre = last_default["target"].get("preload") or {}
    if pre:
        say(f"  the forking interpreter imported {', '.join(pre.get('imported') or []) or 'nothing'} in "
            f"{pre.get('import_s')} s (probes forked from it: {pre.get('forked')}"
            + (f"; {pre.get('problem')}" if pre.get("problem") else "") + ")")
    for r in last_default["results"]:
        if r["id"] == crit_id:
            say(f"  its summary: {r['summary'][:160]}")
            fresh = (r.get("facts") or {}).get("fresh") or {}
            if fresh.get("stage_s"):  # triton.kernel_launch's own work, stage by stage
                launch = (fresh.get("launches") or [{}])[0]
                parts = [f"{k} {v:.2f}" for k, v in fresh["stage_s"].items()]
                parts += [f"{k[:-2]} {launch[k]:.2f}" for k in ("tensors_s", "kernel_s") if k in launch]
                say(f"  its launch in a fork of that interpreter, {fresh.get('seconds')} s: " + ", ".join(parts))
            pre_built = (r.get("facts") or {}).get("prebuilt") or {}
            if pre_built:  # launch_prework: Triton's cuda_utils built torch-free while torch imported
                say(f"  Triton's cuda_utils built beforehand, torch-free: {pre_built.get('ok')} "
                    f"({pre_built.get('seconds')} s" + (f"; {pre_built['skipped']}" if pre_built.get("skipped") else "")
                    + (f"; {(pre_built.get('error') or {}).get('type')}" if pre_built.get("error") else "") + ")")
    say("")
    say("per-check wall in the last default run (and, for the torch-free ones, alone):")
    for d, cid in durations:
        say(f"  {cid:<36} {d:6.2f} s" + (f"   alone {own[cid]:.2f} s" if cid in own else ""))
        steps = next(((r.get("facts") or {}).get("seconds") for r in last_default["results"] if r["id"] == cid), None)
        if isinstance(steps, dict) and steps:  # a probe that times its own steps (cuda.driver_api)
            say(f"  {'':<36} its steps: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items()
                                                      if isinstance(v, (int, float))))
    if last_deep:
        say("")
        say("--deep: the real ops and what each step took (last --deep run):")
        for r in last_deep["results"]:
            if r["id"] in ("kernels.torch_compile", "kernels.fla_ops", "kernels.causal_conv1d_ops"):
                say(f"  {r['id']:<28} {r['status']:<5} {r['duration_s']:7.2f} s  {r['summary'][:200]}")
    text = "\n".join(out)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "label": args.label, "versions": versions(args.python), "commit": commit(),
                       "rounds": args.rounds, "seconds": times, "medians": m, "cpu_seconds": CPU,
                       "bytecode_cache": True, "precompiled_modules": precompiled,
                       "ratios": {"default_over_collect_env": m["default"] / m["collect_env"],
                                  "default_over_slowest_probe": m["default"] / crit_s,
                                  "repeat_speedup": m["default"] / m["repeat"]},
                       "identical_verdicts": identical, "critical_path": [crit_id, crit_s],
                       "per_check_s": {cid: d for d, cid in durations}, "torch_free_alone_s": own,
                       "deep": {r["id"]: [r["status"], r["duration_s"], r["summary"]] for r in
                                (last_deep or {}).get("results", []) if r["id"].endswith(("_ops", "torch_compile"))},
                       "text": text}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
