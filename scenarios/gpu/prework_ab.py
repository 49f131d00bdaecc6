"""A/B of two stackpeel source trees on one machine, alternating: the run's wall time and
triton.kernel_launch's stages. Used for launch_prework (Triton's cuda_utils built torch-free
while torch imports): `python scenarios/gpu/prework_ab.py --python PY --a OLD/src --b src`.
Prints one line per run and the medians; nothing is asserted (machines are noisy)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def one(src, python, env):
    env = dict(env, PYTHONPATH=src + os.pathsep + env.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", python, "--fresh",
                           "--format", "json"], capture_output=True, text=True, env=env, timeout=300)
    wall = time.monotonic() - t0
    rep = json.loads(proc.stdout)
    kl = next(r for r in rep["results"] if r["id"] == "triton.kernel_launch")
    fresh = kl["facts"].get("fresh") or {}
    return {"wall": round(wall, 3), "launch_check": kl["duration_s"], "status": kl["status"],
            "stages": fresh.get("stage_s"), "prebuilt": (kl["facts"].get("prebuilt") or {}).get("ok")}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--python", required=True)
    ap.add_argument("--a", required=True, help="source tree A (the src folder)")
    ap.add_argument("--b", required=True, help="source tree B")
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    got = {"A": [], "B": []}
    for i in range(args.rounds):
        for name in (("A", "B") if i % 2 == 0 else ("B", "A")):
            r = one(args.a if name == "A" else args.b, args.python, env)
            got[name].append(r)
            print(name, i, json.dumps(r), flush=True)
    for name, rs in got.items():
        driver = [r["stages"].get("driver") for r in rs if r.get("stages") and "driver" in r["stages"]]
        launch = [r["stages"].get("launch") for r in rs if r.get("stages") and "launch" in r["stages"]]
        print(f"{name}: wall median {statistics.median(r['wall'] for r in rs):.2f} s; kernel_launch check "
              f"{statistics.median(r['launch_check'] for r in rs):.2f} s; driver stage "
              f"{statistics.median(driver) if driver else float('nan'):.2f} s; launch stage "
              f"{statistics.median(launch) if launch else float('nan'):.2f} s; prebuilt {[r['prebuilt'] for r in rs]}")


if __name__ == "__main__":
    main()
