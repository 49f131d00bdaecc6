"""gpu34: cuda.driver_api's probe alone (forked from a bare zygote, as bench/check_bench.py runs it),
under one neighbour at a time, to see which part of a whole check's load slows cuInit and the exit
after it. Conditions, N runs each: nothing; `import torch, triton` starting in another interpreter
0.3 s before; 8 busy CPU loops; right after gpu.nvml's probe (the driver's previous client) exited.
Uses zyprof.py's timestamps inside the fork. Usage: python contend.py T [N]
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zyprof  # noqa: E402  (patches the bootstrap: timestamps inside each fork)
from stackpeel import registry  # noqa: E402
from stackpeel.runner import zygote as Z  # noqa: E402
from stackpeel.runner.scheduler import probe_inputs  # noqa: E402

python = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
classes = {c.id: c for c in registry.load(plugins=False)}
TDIR = zyprof.TDIR
os.makedirs(TDIR, exist_ok=True)


def run(z, cid):
    cls = classes[cid]
    for f in os.listdir(TDIR):
        os.unlink(os.path.join(TDIR, f))
    inp = {"deps": {r: {} for r in probe_inputs(cls)}, "options": dict(cls.probe_options), "check": cid,
           "timeout_s": cls.timeout, "mode": "default"}
    t = time.monotonic()
    ans = z.run_probe(cls.probe, inp, cls.timeout, probes_dir=cls.probes_dir)
    rid = max(z.pids)
    pid = z.pids[rid]
    with open(os.path.join(TDIR, os.listdir(TDIR)[0])) as f:
        i = eval(f.read())
    return {"duration": ans.duration_s, "init": ((ans.facts or {}).get("seconds") or {}).get("init"),
            "probe": i[2] - i[1], "exit": z.exits.at[pid] - i[4], "before": i[1] - t}


def show(name, rows):
    med = {k: statistics.median([r[k] for r in rows if r[k] is not None] or [-1.0])
           for k in ("duration", "init", "probe", "exit", "before")}
    print("%-34s n=%d median: duration %.3f = before-probe %.3f + probe %.3f (cuInit %.3f) + exit %.3f; durations %s" % (
        name, len(rows), med["duration"], med["before"], med["probe"], med["init"], med["exit"],
        " ".join("%.3f" % r["duration"] for r in rows)))


z = Z.Zygote(os.path.abspath(python), (), None)
assert z.usable()
try:
    run(z, "cuda.driver_api")  # once, not counted
    show("alone", [run(z, "cuda.driver_api") for _ in range(n)])
    rows = []
    for _ in range(n):
        bg = subprocess.Popen([python, "-c", "import torch, triton"])
        time.sleep(0.3)
        rows.append(run(z, "cuda.driver_api"))
        bg.wait()
    show("while `import torch, triton` runs", rows)
    rows = []
    loops = [subprocess.Popen([python, "-c", "while True: pass"]) for _ in range(8)]
    try:
        time.sleep(0.2)
        rows = [run(z, "cuda.driver_api") for _ in range(n)]
    finally:
        for p in loops:
            p.kill(); p.wait()
    show("with 8 busy CPU loops", rows)
    rows = []
    for _ in range(n):
        run(z, "gpu.nvml")
        rows.append(run(z, "cuda.driver_api"))
    show("right after gpu.nvml's probe", rows)
    rows = []
    for _ in range(n):
        bg = subprocess.Popen([python, "-c", "import torch, triton"])
        time.sleep(0.3)
        run(z, "gpu.nvml")
        rows.append(run(z, "cuda.driver_api"))
        bg.wait()
    show("import torch running + after gpu.nvml", rows)
finally:
    z.close()
