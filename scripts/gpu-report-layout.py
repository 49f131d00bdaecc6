#!/usr/bin/env python3
"""The report layout of issue 18 on a real GPU machine with three faults at once.

On an NVIDIA machine (as root: Python.h is hidden by a bind mount in a private mount namespace),
breaks three things together, as the founding case did on a minimal root, but with a working GPU:

* every C compiler off PATH and CC unset (a PATH of symlinks, as scenarios/gpu/suite.py does),
* `file` off that PATH too,
* Python.h hidden (an empty directory bind-mounted over the interpreter's include dir),

runs `stackpeel check --format json` on the target interpreter with a fresh Triton cache, and
judges the default text report at 80 columns: the roots `no-c-compiler` and
`python-headers-missing` named in the first 10 lines, at most 40 lines, no line wider than 80
but commands, each symptom printed once, ONE fix block whose install line holds gcc, the
Python headers and `file`, and `apt-get update` once. It prints the text report, the verdict
lines, and writes report.json / report.txt / report.md under --out.

    python3 scripts/gpu-report-layout.py --python /path/to/venv/bin/python --out /tmp/layout

Exit status: 0 every judgement passed, 1 one failed, 2 this machine cannot run it (the reason
is printed: no GPU, not root, no unshare).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scenarios" / "gpu"))

import suite  # noqa: E402  (the scenario helpers: Machine, symlink_path, fresh_cache)

from stackpeel.model import Report  # noqa: E402
from stackpeel.render import render  # noqa: E402


def fix_block(text: str):
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("FIX:")]
    block = []
    if len(starts) == 1:
        for ln in lines[starts[0] + 1:]:
            if not ln.startswith("    "):
                break
            block.append(ln.strip())
    return starts, block


def judge(report: Report, text: str) -> list:
    problems = []
    lines = text.splitlines()
    roots = [c for r in report.diagnosis.blocking for c in r.codes]
    for code in ("no-c-compiler", "python-headers-missing"):
        if code not in roots:
            problems.append(f"expected root {code}; roots were {roots}")
        elif code not in "\n".join(lines[:10]):
            problems.append(f"{code} not named in the first 10 lines")
    if len(lines) > 40:
        problems.append(f"default report is {len(lines)} lines (> 40)")
    starts, block = fix_block(text)
    if len(starts) != 1:
        problems.append(f"{len(starts)} fix blocks (expected 1)")
    # one install per system package manager; the Python headers come from it for a distro Python,
    # or from reinstalling the interpreter for a self-contained one (pyenv, uv, conda)
    installs = [ln for ln in block if re.match(r"(sudo )?(apt-get|dnf|yum|zypper) install |(sudo )?apk add ", ln)]
    if len(installs) != 1:
        problems.append(f"{len(installs)} system install commands in the fix block (expected 1): {block}")
    else:
        words = set(installs[0].split())
        for need in ("gcc", "file"):
            if need not in words:
                problems.append(f"{need} missing from the install line: {installs[0]}")
        py_dev = [w for w in words if re.fullmatch(r"python3(\.\d+)?-dev(el)?", w)]
        if not py_dev and not any(re.search(r"\b(pyenv|uv python|conda) .*install", ln) for ln in block):
            problems.append(f"neither a Python headers package nor an interpreter reinstall in the fix block: {block}")
    if text.count("apt-get update") > 1:
        problems.append("apt-get update printed more than once")
    wide = [ln for ln in lines if len(ln) > 80 and ln.strip() not in block]
    if wide:
        problems.append(f"{len(wide)} non-command lines wider than 80: {wide[:2]}")
    problems += symptoms_once(report, text)
    return problems


def symptoms_once(report: Report, text: str) -> list:
    """Each symptom named exactly once in the section below the fix block (by its code, with or
    without its title; by its check id when it has no finding)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.endswith(" explains:")), len(lines))
    section = "\n".join(lines[start:])
    roots_ids = {r.check_id for r in report.diagnosis.blocking + report.diagnosis.degraded}
    problems = []
    for cid in sorted({s.check_id for r in report.diagnosis.blocking for s in r.symptoms} - roots_ids):
        res = report.result(cid)
        name = res.findings[0].code if res and res.findings else cid
        n = len(re.findall(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", section))
        if res is not None and not res.findings:  # shown by its summary, or (listed by code) its id
            n += " ".join(section.split()).count(" ".join(res.summary.split()))
        if n != 1:
            problems.append(f"symptom {name} ({cid}) named {n} times below the fix block")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="target interpreter (default: this one)")
    ap.add_argument("--out", help="directory for report.json/.txt/.md (default: a temp dir)")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    python = os.path.abspath(args.python)
    m = suite.Machine.probe(python)
    why = [w for w in ("no GPU" if m.gpus < 1 else "", "not root" if not m.is_root else "",
                       "no unshare" if not m.unshare else "", "no include dir" if not m.include_dir else "") if w]
    if why:
        print(f"cannot run here: {', '.join(why)}")
        return 2
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="stackpeel-layout-"))
    out.mkdir(parents=True, exist_ok=True)
    env = suite.fresh_cache(suite.base_env(), out)
    env.pop("CC", None)
    env.pop("CXX", None)
    env["PATH"] = suite.symlink_path(lambda n: suite.is_compiler(n) or n == "file", out / "bin-nocc-nofile")
    env["PYTHONPATH"] = str(REPO / "src")
    empty = out / "empty-include"
    empty.mkdir(exist_ok=True)
    wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"',
            str(empty), str(m.include_dir)]
    argv = wrap + [python, "-m", "stackpeel", "check", "--python", python, "--format", "json"]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=args.timeout)
    try:
        data = json.loads(p.stdout)
    except ValueError:
        print(f"stackpeel printed no JSON (exit {p.returncode}):\n{p.stderr[-3000:]}")
        return 1
    (out / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    report = Report.from_dict(data)
    text = render(report, "text", width=80)
    (out / "report.txt").write_text(text)
    (out / "report.md").write_text(render(report, "markdown"))
    (out / "report-v.txt").write_text(render(report, "text", width=80, verbose=True))
    print(text)
    problems = judge(report, text)
    print(f"machine: {m.gpus} GPU(s), triton {m.triton_version}; exit {p.returncode}; "
          f"{len(text.splitlines())} lines; reports in {out}")
    for prob in problems:
        print(f"FAIL {prob}")
    print("PASS report layout on a real GPU machine with three faults" if not problems else
          f"FAIL {len(problems)} judgement(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
