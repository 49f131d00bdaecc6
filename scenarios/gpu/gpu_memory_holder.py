"""Another process on a shared GPU: allocate all but ``--leave-gib`` GiB of one GPU's free memory
and sleep, as a stale notebook kernel, an orphaned training process or another user's job does.

Started by the suite's ``gpu-memory-held-by-another-process`` setup and killed by its teardown;
it also ends on its own after ``--max-seconds`` and when the process that started it dies
(PR_SET_PDEATHSIG), so nothing outlives the scenario. Once it holds the memory it writes
``--ready`` (JSON: pid, device, held, total and free bytes as CUDA reports them).
"""

import argparse
import ctypes
import json
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--leave-gib", type=float, default=4.0)
    ap.add_argument("--ready", required=True, help="file written once the memory is held")
    ap.add_argument("--max-seconds", type=float, default=1800)
    ap.add_argument("--parent", type=int, help="the suite's pid: end at once if it is already gone")
    args = ap.parse_args()
    try:  # die with the suite, whatever happens to it
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if args.parent is not None and os.getppid() != args.parent:  # it died before the line above
        return 1
    import torch

    dev = torch.device("cuda", args.device)
    free, total = torch.cuda.mem_get_info(dev)
    want = free - int(args.leave_gib * (1 << 30))
    if want <= 0:
        print(f"gpu memory holder: only {free} bytes free, nothing to hold", file=sys.stderr)
        return 1
    block = torch.empty(want, dtype=torch.uint8, device=dev)
    block.fill_(1)  # touch it, so the memory is surely the device's
    torch.cuda.synchronize(dev)
    free_after, _ = torch.cuda.mem_get_info(dev)
    facts = {"pid": os.getpid(), "device": args.device, "held": want, "total": total, "free": free_after}
    tmp = args.ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump(facts, f)
    os.replace(tmp, args.ready)
    print(f"gpu memory holder: {json.dumps(facts)}", flush=True)
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline:
        time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
