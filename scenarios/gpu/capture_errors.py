#!/usr/bin/env python3
"""Does `stackpeel explain` name a real CUDA graph capture failure (kb6's cuda-graph-capture-unsupported)?

Run on an NVIDIA machine whose Python has a CUDA build of torch:

    python scenarios/gpu/capture_errors.py --python /path/to/venv/bin/python

For each case a child of that interpreter captures a CUDA graph (torch.cuda.graph) around an
operation CUDA refuses while a stream is capturing, and prints its traceback; stackpeel explain
(--no-live, JSON) must rank the expected code first:

- ``item``: ``.item()`` inside the capture (a host synchronisation): ``CUDA error: operation not
  permitted when stream is capturing``;
- ``sync``: ``torch.cuda.synchronize()`` inside the capture (the same error from another call).

Prints one JSON line per case (the error line the child printed, explain's first codes) and a
verdict; exit 0 when every case names the code, 1 otherwise, 2 when the machine cannot run it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
EXPECTED = "cuda-graph-capture-unsupported"

CHILD = r"""
import sys, torch
if not torch.cuda.is_available():
    print("NO-CUDA", file=sys.stderr); sys.exit(2)
case = sys.argv[1]
x = torch.ones(16, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    y = x * 2  # warm up outside the capture
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2
    if case == "item":
        y.sum().item()
    else:
        torch.cuda.synchronize()
print("captured without an error", file=sys.stderr)
"""


def _explain(text: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", "-"],
                         input=text, capture_output=True, text=True, timeout=120, env=env)
    return json.loads(out.stdout) if out.stdout.strip() else {"candidates": [], "error": out.stderr[-500:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable, help="the interpreter with a CUDA torch")
    args = ap.parse_args(argv)
    ok = True
    for case in ("item", "sync"):
        proc = subprocess.run([args.python, "-c", CHILD, case], capture_output=True, text=True, timeout=300)
        if proc.returncode == 2 or "No module named 'torch'" in proc.stderr:
            print(json.dumps({"case": case, "skip": proc.stderr.strip()[-300:]}))
            return 2
        if proc.returncode == 0:
            print(json.dumps({"case": case, "ok": False, "why": "the capture did not fail",
                              "stderr": proc.stderr[-300:]}))
            ok = False
            continue
        lines = [ln for ln in proc.stderr.splitlines() if "error" in ln.lower()]
        report = _explain(proc.stderr)
        codes = [c["code"] for c in report.get("candidates", [])][:3]
        good = codes[:1] == [EXPECTED]
        ok &= good
        print(json.dumps({"case": case, "ok": good, "error_line": lines[-1][:200] if lines else "", "codes": codes}))
    print(json.dumps({"verdict": "pass" if ok else "fail"}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
