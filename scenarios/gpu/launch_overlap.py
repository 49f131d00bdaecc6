"""Where triton.kernel_launch's own time goes on a GPU, and whether creating the CUDA context
while Triton builds its cuda_utils helper (a gcc run) shortens it.

Run with the stack's interpreter on a GPU machine:  python scenarios/gpu/launch_overlap.py [rounds]
Each variant runs in a fork of one interpreter that imported torch and triton (as stackpeel's
torch interpreter does), with its own empty TRITON_CACHE_DIR, rounds times, interleaved:
  sequential  as the probe does: is_available, driver (cuda_utils build), tensors (context), kernel
  ctx-thread  the context is created in a thread while the main thread builds the driver
  drv-thread  the driver is built in a thread while the main thread creates the context
Prints each stage's median seconds and the total per variant.
"""

import ast
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

import torch
import triton  # noqa: F401
import triton.runtime

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "stackpeel", "probes",
                     "triton_layer.py")
#: the probe's own kernel (KERNEL_SRC of triton_layer.py), read without importing the probe module
KERNEL = next(node.value.value for node in ast.parse(open(PROBE).read()).body
              if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "KERNEL_SRC")


def child(variant, out):
    import importlib.util
    t = {}
    t0 = time.monotonic()
    torch.cuda.is_available()
    t["is_available"] = time.monotonic() - t0
    path = os.path.join(os.path.dirname(out), "k.py")
    with open(path, "w") as f:
        f.write(KERNEL)
    spec = importlib.util.spec_from_file_location("k", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def driver():
        s = time.monotonic()
        triton.runtime.driver.active.get_current_target()
        t["driver"] = time.monotonic() - s

    def context():
        s = time.monotonic()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        t["context"] = time.monotonic() - s

    s = time.monotonic()
    if variant == "sequential":
        driver()
        context()
    else:
        first, second = (context, driver) if variant == "ctx-thread" else (driver, context)
        th = threading.Thread(target=first)
        th.start()
        second()
        th.join()
    t["driver+context"] = time.monotonic() - s
    s = time.monotonic()
    n = 1000
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.full((n,), 0.5, dtype=torch.float32, device="cuda")
    o = torch.empty(n, dtype=torch.float32, device="cuda")
    mod.stackpeel_add[(4,)](x, y, o, n, BLOCK=256)
    torch.cuda.synchronize()
    t["kernel"] = time.monotonic() - s
    t["ok"] = bool((o.cpu() == torch.arange(n, dtype=torch.float32) + 0.5).all())
    t["total"] = time.monotonic() - t0
    with open(out, "w") as f:
        json.dump(t, f)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    variants = ("sequential", "ctx-thread", "drv-thread")
    got = {v: [] for v in variants}
    for r in range(rounds):
        for v in variants[r % 3:] + variants[:r % 3]:
            work = tempfile.mkdtemp(prefix="overlap-")  # the kernel's file, the answer, the empty cache
            out = os.path.join(work, "out.json")
            try:
                pid = os.fork()
                if pid == 0:
                    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "cache")
                    try:
                        child(v, out)
                    finally:
                        os._exit(0)
                os.waitpid(pid, 0)
                with open(out) as f:
                    got[v].append(json.load(f))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    for v in variants:
        keys = [k for k in got[v][0] if k != "ok"]
        med = {k: round(statistics.median(x[k] for x in got[v]), 3) for k in keys}
        print(f"{v:<11} ok={all(x['ok'] for x in got[v])} " + " ".join(f"{k}={s}" for k, s in med.items())
              + "   totals " + " ".join(f"{x['total']:.2f}" for x in got[v]))


if __name__ == "__main__":
    main()
