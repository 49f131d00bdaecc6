#!/usr/bin/env python3
"""Does `stackpeel explain` read a real GPU machine's reports right, and agree with `check`?

Run on an NVIDIA machine whose Python has torch (and, for the combination part, triton and
flash-linear-attention):

    python scenarios/gpu/explain_facts.py --python /path/to/venv/bin/python

1. Collects the text a user pastes into an issue, for real: ``nvidia-smi``, ``nvidia-smi -L``,
   ``python -m torch.utils.collect_env`` and ``pip list`` of that interpreter.
2. ``stackpeel explain --no-live --format json`` on that report alone: the facts it reads
   (torch, CUDA build, driver and its CUDA version, GPU names and compute capability, Triton,
   FLA) must equal what the machine says (torch.version.cuda, torch.cuda.get_device_capability),
   the report must add no candidate (exit 0), and the known-bad combinations it matches must be
   the ones ``stackpeel check --only config.known_combinations`` matches from package metadata
   (one matcher).
3. With FLA installed: the FLA GatedDeltaNet forward/backward of known_combinations.py, its
   output appended to the report; where the backward is refused, explain must name
   ``fla-triton-hopper-gated-backward`` first with the combination among its supporting facts.

Prints one JSON line per step and a verdict; exit 0 when all agree, 1 otherwise, 2 when the
machine cannot run it (no nvidia-smi, no torch), saying why.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
_spec = importlib.util.spec_from_file_location("known_combinations", Path(__file__).parent / "known_combinations.py")
known_combinations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_combinations)

TRUTH = r"""
import json
out = {}
try:
    import torch
    out.update(torch=torch.__version__, cuda=torch.version.cuda, available=torch.cuda.is_available())
    if torch.cuda.is_available():
        out["cc"] = sorted({"%d.%d" % torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())})
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
"""


def sh(argv, timeout=300, env=None):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)


def explain(text: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(text)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    rc, out = sh([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", f.name], env=env)
    os.unlink(f.name)
    data = json.loads(out[out.index("{"):])
    data["_rc"] = rc
    return data


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if not shutil.which("nvidia-smi"):
        print("cannot run: no nvidia-smi on PATH")
        return 2
    rc, truth_out = sh([args.python, "-c", TRUTH])
    truth = json.loads(truth_out.strip().splitlines()[-1]) if rc == 0 else {"error": truth_out[-400:]}
    if "torch" not in truth:
        print(f"cannot run: torch does not import in {args.python}: {truth}")
        return 2
    report = "\n".join(out for _, out in (sh(["nvidia-smi"]), sh(["nvidia-smi", "-L"]),
                                          sh([args.python, "-m", "torch.utils.collect_env"], timeout=600),
                                          sh([args.python, "-m", "pip", "list"])))
    ok = True
    env_only = explain(report)
    facts = env_only["facts"]
    got = {"torch": facts["versions"].get("torch"), "cuda": facts["versions"].get("cuda"),
           "cc": sorted(facts["versions"].get("gpu_cc") or [])}
    want = {"torch": truth["torch"], "cuda": truth.get("cuda"), "cc": truth.get("cc", [])}
    same = got == want
    # a known-bad combination of this stack is context only: no candidate, exit 0
    quiet = env_only["candidates"] == [] and env_only["_rc"] == 0
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    _, check_out = sh([sys.executable, "-m", "stackpeel", "check", "--python", args.python, "--only",
                       "config.known_combinations", "--format", "json"], env=env, timeout=600)
    check = json.loads(check_out[check_out.index("{"):])
    check_matched = sorted(m for r in check.get("results", []) for m in (r.get("facts") or {}).get("matched", []))
    explain_matched = sorted(facts.get("combinations", []))
    agree = check_matched == explain_matched
    print(json.dumps({"step": "report", "facts": got, "truth": want, "same": same, "quiet": quiet,
                      "check_matched": check_matched, "explain_matched": explain_matched, "agree": agree,
                      "notes": env_only["notes"]}))
    ok = ok and same and quiet and agree
    rc, proof = sh([args.python, "-c", known_combinations.PROOF], timeout=900)
    last = json.loads(proof.strip().splitlines()[-1]) if rc == 0 and proof.strip() else {"error": proof[-400:]}
    if "torch" in last and "No module named 'fla'" not in str(last.get("error", "")):
        refused = "chunk_bwd_dqkwg" in str(last.get("error", ""))
        with_run = explain(report + "\n" + proof)
        top = with_run["candidates"][0] if with_run["candidates"] else {}
        right = (top.get("code") == "fla-triton-hopper-gated-backward"
                 and any(r.startswith("combination:") for r in top.get("facts", []))) if refused else \
            with_run["candidates"] == []
        print(json.dumps({"step": "fla-backward", "proof": last, "refused": refused,
                          "explain_top": top.get("code"), "facts": top.get("facts"), "right": right}))
        ok = ok and right
    else:
        print(json.dumps({"step": "fla-backward", "skipped": last}))
    print("verdict:", "explain's facts agree with the machine and with check" if ok else "DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
