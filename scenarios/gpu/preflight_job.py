#!/usr/bin/env python3
"""A training job's first lines, as torchrun starts it on every rank (scenarios/gpu/preflight.sh).

Calls stackpeel.require(CHECKS) and prints one JSON line: what this rank did (checked, or
waited for its node's local rank 0), the verdict, and, when the stack passed and a GPU is
there, a real Triton kernel launched on this rank's GPU, which proves the verdict true.
Exits 0 when the stack passed, 3 on StackError (the job would stop here, before any work).
"""

import json
import os
import sys
import time

import stackpeel

CHECKS = os.environ.get("PREFLIGHT_CHECKS", "triton.kernel_launch").split(",")


def launch_kernel() -> str:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    x = torch.arange(1000, device=dev, dtype=torch.float32)
    out = torch.empty_like(x)
    add[(4,)](x, x, out, 1000, BLOCK=256)
    return "ok" if torch.equal(out, 2 * x) else "wrong result"


def main() -> int:
    start = time.monotonic()
    line = {"rank": os.environ.get("RANK"), "local_rank": os.environ.get("LOCAL_RANK"), "pid": os.getpid()}
    try:
        report = stackpeel.require(*CHECKS)
    except stackpeel.StackError as exc:
        line.update(ok=False, failed=list(exc.failed), role=exc.report.target["preflight"]["role"],
                    by=exc.report.target["preflight"]["by"], roots=[list(r.codes) for r in
                                                               exc.report.diagnosis.blocking],
                    seconds=round(time.monotonic() - start, 2), message_head=str(exc).splitlines()[0])
        print(json.dumps(line), flush=True)
        # torchrun stops every rank when one exits with an error: linger so that each rank's
        # line is recorded (a real job would just exit)
        time.sleep(float(os.environ.get("PREFLIGHT_LINGER", "0")))
        return 3
    line.update(ok=True, role=report.target["preflight"]["role"], by=report.target["preflight"]["by"],
                seconds=round(time.monotonic() - start, 2))
    try:
        import torch
        line["kernel"] = launch_kernel() if torch.cuda.is_available() else "no GPU"
    except Exception as exc:  # the verdict said pass: a failure here is what the scenario must catch
        line["kernel"] = f"{type(exc).__name__}: {exc}"[:300]
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
