#!/usr/bin/env python3
"""Does `stackpeel check` call the FLA + Triton + Hopper combination right, on a real GPU?

Run on an NVIDIA machine whose Python has torch, triton and flash-linear-attention (fla-core):

    python scenarios/gpu/known_combinations.py --python /path/to/venv/bin/python [--triton-wheel-dir DIR]

1. `stackpeel check --only config.known_combinations --format json` on that interpreter:
   what stackpeel predicts from package metadata and the GPU (no import).
2. The proof: a tiny GatedDeltaNet-style `chunk_gated_delta_rule` forward and backward on
   cuda:0 in a child of that interpreter, recording whether the backward raises FLA's
   'produces incorrect results for gated chunk_bwd_dqkwg' RuntimeError.
3. The two must agree: blocking `fla-triton-hopper-gated-backward` exactly when the backward
   is refused. With ``--triton-wheel-dir`` (a directory holding a triton>=3.7.1 wheel) it
   repeats 1-2 with that Triton installed into a throwaway ``--target`` dir put first on
   PYTHONPATH, where stackpeel must pass and the backward must run.

Prints one JSON line per run and a verdict; exit 0 when every run agrees, 1 otherwise,
2 when the machine cannot run it (no GPU, no FLA), saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent

PROOF = r"""
import json, sys
out = {}
try:
    import torch, triton
    out.update(torch=torch.__version__, triton=triton.__version__, gpu=torch.cuda.get_device_name(0),
               cc=".".join(map(str, torch.cuda.get_device_capability(0))))
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    B, T, H, K, V = 1, 128, 2, 64, 64
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(B, T, H, K, device=dev, dtype=dt, requires_grad=True)
    k = torch.nn.functional.normalize(torch.randn(B, T, H, K, device=dev, dtype=torch.float32), dim=-1).to(dt)
    k.requires_grad_(True)
    v = torch.randn(B, T, H, V, device=dev, dtype=dt, requires_grad=True)
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, device=dev, dtype=torch.float32)).requires_grad_(True)
    beta = torch.rand(B, T, H, device=dev, dtype=dt).sigmoid().requires_grad_(True)
    o, _ = chunk_gated_delta_rule(q, k, v, g, beta)
    out["forward"] = "ok"
    o.float().sum().backward()
    out["backward"] = "ok"
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
print(json.dumps(out))
"""


def run(argv, env, timeout=900):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def one_run(python: str, extra_path: str, label: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra_path, env.get("PYTHONPATH", "")]))
    sp_env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "src"), env["PYTHONPATH"]])))
    rc, so, se = run([python, "-m", "stackpeel", "check", "--python", python, "--only", "config.known_combinations",
                      "--format", "json"], sp_env)
    try:
        report = json.loads(so)
    except ValueError:
        return {"run": label, "status": "fail", "problem": f"stackpeel printed no JSON (exit {rc})", "stderr": se[-2000:]}
    res = next(r for r in report["results"] if r["id"] == "config.known_combinations")
    predicted = [f["code"] for f in res["findings"] if f["severity"] == "blocking"]
    rc, so, se = run([python, "-c", PROOF], env)
    try:
        proof = json.loads(so.strip().splitlines()[-1])
    except (ValueError, IndexError):
        proof = {"error": f"proof printed nothing (exit {rc}): {se[-800:]}"}
    refused = "gated chunk_bwd_dqkwg" in proof.get("error", "")
    agrees = refused == ("fla-triton-hopper-gated-backward" in predicted) and (refused or proof.get("backward") == "ok")
    return {"run": label, "status": "pass" if agrees else "fail", "check_status": res["status"],
            "check_summary": res["summary"], "predicted_blocking": predicted, "versions": res["facts"].get("versions"),
            "proof": proof, "backward_refused": refused}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter with torch, triton and FLA")
    ap.add_argument("--triton-wheel-dir", help="directory with a triton>=3.7.1 wheel for the second run")
    args = ap.parse_args()
    rc, so, _ = run([args.python, "-c", "import torch, fla; print(torch.cuda.is_available())"], dict(os.environ))
    if rc != 0 or so.strip() != "True":
        print(json.dumps({"status": "skip", "why": "needs a visible CUDA GPU and FLA in " + args.python}))
        return 2
    results = [one_run(args.python, "", "installed Triton")]
    if args.triton_wheel_dir:
        target = tempfile.mkdtemp(prefix="triton-new-")
        rc, _, se = run([args.python, "-m", "pip", "install", "--no-deps", "--no-index", "--find-links",
                         args.triton_wheel_dir, "--target", target, "triton>=3.7.1"], dict(os.environ))
        if rc != 0:
            results.append({"run": "Triton >= 3.7.1", "status": "fail", "problem": se[-1500:]})
        else:
            results.append(one_run(args.python, target, "Triton >= 3.7.1"))
    for r in results:
        print(json.dumps(r))
    ok = all(r["status"] == "pass" for r in results)
    print("VERDICT:", "stackpeel's prediction matches FLA's behaviour" if ok else "MISMATCH (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
