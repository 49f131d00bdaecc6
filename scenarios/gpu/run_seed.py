#!/usr/bin/env python3
"""The founding case under `stackpeel run` on a real GPU: the error FLA swallowed, recovered.

Run on an NVIDIA machine whose Python has a CUDA build of torch, Triton and FLA:

    python scenarios/gpu/run_seed.py --python /path/to/venv/bin/python

A child of that interpreter imports FLA and runs its gated delta rule on ``cuda`` tensors,
under ``stackpeel run --format json``, twice on fresh Triton caches:

- **no compiler**: no C compiler on PATH and CC unset. Triton cannot build its launcher; FLA
  catches that at import, warns "Triton is not supported on current platform, roll back to
  CPU", and the op then fails far from the cause. The report's first swallowed exception must
  be Triton's compiler error, evidence for ``no-c-compiler``, handled in FLA, linked to that
  warning.
- **control**: the compilers present. The op runs (the program prints ``ok``) and no swallowed
  exception is evidence for ``no-c-compiler``.

Prints one JSON line per run and a verdict; exit 0 when both hold, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite import is_compiler, symlink_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """\
import torch
import torch.nn.functional as F
import fla
from fla.ops.gated_delta_rule import chunk_gated_delta_rule
print("fla imported", flush=True)
B, T, H, K = 1, 64, 2, 64
kw = dict(device="cuda", dtype=torch.bfloat16)
q, k, v = (torch.randn(B, T, H, K, **kw) for _ in range(3))
k = F.normalize(k.float(), p=2, dim=-1).to(torch.bfloat16)
g = F.logsigmoid(torch.randn(B, T, H, device="cuda", dtype=torch.float32))
beta = torch.rand(B, T, H, device="cuda", dtype=torch.float32).sigmoid()
o, _ = chunk_gated_delta_rule(q, k, v, g, beta)
torch.cuda.synchronize()
print("ok", tuple(o.shape), flush=True)
"""


def run(python: str, env: dict, tmp: Path, name: str) -> dict:
    prog = tmp / "seed_program.py"
    prog.write_text(PROGRAM, encoding="utf-8")
    out = tmp / f"{name}.json"
    cmd = [sys.executable, "-m", "stackpeel", "run", "--format", "json", "-o", str(out), "--", python, str(prog)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    res = {"exit": proc.returncode, "stdout": proc.stdout.strip()[-200:]}
    try:
        rep = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        res["error"] = (proc.stderr or "no report")[-600:]
        return res
    swallowed = rep.get("swallowed") or []
    first = swallowed[0] if swallowed else {}
    res["first"] = {k: first.get(k) for k in ("type", "message", "codes", "shown")} if first else None
    if first:
        res["first"]["message"] = (first.get("message") or "")[:200]
        res["first"]["raised"] = (first.get("raised") or {}).get("module")
        res["first"]["handled"] = "%s:%s" % ((first.get("handled") or {}).get("module"),
                                             (first.get("handled") or {}).get("function"))
    res["no_c_compiler"] = [s.get("id") for s in swallowed if "no-c-compiler" in (s.get("codes") or [])]
    res["warnings"] = [{"message": (n.get("message") or "")[:100], "handling": n.get("handling"),
                        "codes": n.get("codes")} for n in rep.get("notices") or []
                       if "roll back to CPU" in (n.get("message") or "")]
    res["uncaught"] = ((rep.get("exit") or {}).get("uncaught") or {}).get("type")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="stackpeel-run-seed-") as t:
        tmp = Path(t)
        base = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        base.pop("CC", None)
        nocc = dict(base, PATH=symlink_path(is_compiler, tmp / "bin-nocc"),
                    TRITON_CACHE_DIR=str(tmp / "triton-cache-nocc"))
        control_env = dict(base, TRITON_CACHE_DIR=str(tmp / "triton-cache-control"))
        without = run(args.python, nocc, tmp, "nocc")
        control = run(args.python, control_env, tmp, "control")
    print(json.dumps({"run": "no compiler on PATH, CC unset", **without}))
    print(json.dumps({"run": "control: compilers present", **control}))
    first = without.get("first") or {}
    linked = any(w.get("handling") == without["no_c_compiler"][0] for w in without.get("warnings") or []) \
        if without.get("no_c_compiler") else False
    ok = ("no-c-compiler" in (first.get("codes") or []) and linked
          and control.get("exit") == 0 and "ok" in control.get("stdout", "") and not control.get("no_c_compiler"))
    print("verdict:", "the swallowed compiler error is first and linked to FLA's warning; the control is clean"
          if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
