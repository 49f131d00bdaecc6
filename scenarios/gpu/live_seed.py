#!/usr/bin/env python3
"""Issue 8's acceptance on a real machine: live `stackpeel explain` on the seed's log (FLA's
"roll back to CPU" warning and the AttributeError on ``torch.cpu``, no lower-layer line) run
where no C compiler is on PATH and CC is unset must put ``no-c-compiler`` first, confirmed live;
the same log with the compilers present must not (the control).

    python scenarios/gpu/live_seed.py --python /path/to/venv/bin/python

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
SEED = """\
INFO 12:00:01 loading model
/venv/lib/python3.12/site-packages/fla/utils.py:62: UserWarning: Triton is not supported on current platform, roll back to CPU.
  warnings.warn(
INFO 12:00:02 step 0
Traceback (most recent call last):
  File "/app/train.py", line 88, in <module>
    out = model(**batch)
  File "/venv/lib/python3.12/site-packages/fla/ops/gated_delta_rule/chunk.py", line 301, in forward
    with torch.cpu.device(q.device.index):
AttributeError: module 'torch.cpu' has no attribute 'device'
"""


def run(python: str, env: dict, log: Path) -> dict:
    cmd = [sys.executable, "-m", "stackpeel", "explain", "--format", "json", "--python", python, str(log)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    try:
        rep = json.loads(proc.stdout)
    except ValueError:
        return {"exit": proc.returncode, "error": (proc.stderr or proc.stdout)[-400:]}
    cands = rep.get("candidates") or []
    first = cands[0] if cands else {}
    return {"exit": proc.returncode, "root": rep.get("root_cause"), "first": first.get("code"),
            "first_live": (first.get("live") or {}).get("status") if isinstance(first.get("live"), dict)
            else first.get("live"), "ranked": [c.get("code") for c in cands][:4]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="stackpeel-live-seed-") as tmp:
        log = Path(tmp) / "seed.log"
        log.write_text(SEED, encoding="utf-8")
        base = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        base.pop("CC", None)
        nocc = dict(base, PATH=symlink_path(is_compiler, Path(tmp) / "bin-nocc"),
                    TRITON_CACHE_DIR=str(Path(tmp) / "triton-cache"))
        without = run(args.python, nocc, log)
        control = run(args.python, base, log)
    print(json.dumps({"run": "no compiler on PATH, CC unset", **without}))
    print(json.dumps({"run": "control: compilers present", **control}))
    ok = without.get("first") == "no-c-compiler" and control.get("first") != "no-c-compiler"
    print("verdict:", "no-c-compiler first only where the compiler is missing" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
