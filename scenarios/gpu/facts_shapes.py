#!/usr/bin/env python3
"""Do the probes' answers on a real GPU machine fit their declared shapes (stackpeel/facts.py)?

Run on an NVIDIA machine, from the repository (stackpeel importable), with the stack's Python:

    python scenarios/gpu/facts_shapes.py --python /path/to/venv/bin/python [--out DIR]

It runs `stackpeel check` in five situations: as the machine is, `--deep`, with
CUDA_VISIBLE_DEVICES="", with no C compiler on PATH, and with Triton/compiler variables that
name nothing usable (TRITON_LIBCUDA_PATH, TRITON_CACHE_DIR, CC, CUDA_HOME). Outside strict
mode, as a user runs it: a probe answer that misses a required key or holds a value of the
wrong type is a check result `error` with failure reason `facts-shape`; those are listed.
Keys in a result that neither its shape declares nor its `evaluate` derives (found by
evaluating the recorded facts again) are listed as undeclared.

Prints one JSON line per situation and a verdict; exit 0 when every answer fits, 1 when one
does not (declare the key in stackpeel/facts.py, from the probe's code), 2 when the machine
has no NVIDIA GPU (the CPU paths are covered by tests/test_facts.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "src"))

from stackpeel import facts as F  # noqa: E402
from stackpeel import registry  # noqa: E402
from stackpeel.checks.base import Context  # noqa: E402
from stackpeel.engine import check  # noqa: E402

COMPILERS = ("cc", "gcc", "g++", "c++", "c89", "c99", "cpp", "tcc")


def no_compiler_path(where: Path) -> str:
    """A directory of links to every program on PATH except C compilers."""
    where.mkdir(exist_ok=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            if name in COMPILERS or name.startswith(("clang", "gcc-", "g++")) or "-gcc" in name \
                    or "-g++" in name or name.endswith("-cc"):
                continue
            src, link = os.path.join(entry, name), where / name
            if not link.exists() and os.access(src, os.X_OK) and not os.path.isdir(src):
                link.symlink_to(src)
    return str(where)


def shape_report(report) -> dict:
    """Shape errors (production: error results) and undeclared keys of one report."""
    classes = {c.id: c for c in registry.load(plugins=False)}
    by_id = {r.id: r for r in report.results}
    errors, undeclared, fitted = {}, {}, 0
    for r in report.results:
        if r.failure is not None and r.failure.reason == "facts-shape":
            errors[r.id] = r.failure.detail
            continue
        cls = classes.get(r.id)
        if cls is None or cls.facts is None or not r.facts or r.status.value in ("error", "blocked"):
            continue
        fitted += 1
        deps = {q: by_id[q].facts for q in cls.requires if q in by_id}
        try:
            derived = set(cls().evaluate(r.facts, Context(report.host, report.target, deps, {})).facts)
        except Exception as exc:  # report it, go on with the others
            derived = set()
            errors[r.id] = f"re-evaluating its facts raised {type(exc).__name__}: {exc}"
        extra = sorted(set(r.facts) - set(F._hints(cls.facts)) - derived)
        if extra:
            undeclared[r.id] = extra
    return {"fitted": fitted, "shape_errors": errors, "undeclared": undeclared}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="the stack's interpreter")
    ap.add_argument("--out", help="directory for the JSON reports")
    ap.add_argument("--allow-no-gpu", action="store_true", help="run anyway on a machine without a GPU")
    args = ap.parse_args()
    os.environ.pop("STACKPEEL_STRICT_FACTS", None)  # as a user runs it: mismatches become error results
    if not os.path.exists("/dev/nvidiactl") and not args.allow_no_gpu:
        print(json.dumps({"verdict": "cannot run", "why": "no /dev/nvidiactl: no NVIDIA GPU here"}))
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="stackpeel-shapes-"))
    try:
        base = dict(os.environ)
        (tmp / "empty").mkdir()
        situations = [
            ("as-is", base, False),
            ("deep", base, True),
            ("cuda-hidden", dict(base, CUDA_VISIBLE_DEVICES=""), False),
            # CC/CXX name a compiler outside PATH on some machines (the lent H200 sets CC=/opt/gcc/bin/gcc)
            ("no-compiler", {**{k: v for k, v in base.items() if k not in ("CC", "CXX")},
                             "PATH": no_compiler_path(tmp / "nocc-bin")}, False),
            ("env-unusable", dict(base, TRITON_LIBCUDA_PATH=str(tmp / "empty"), TRITON_CACHE_DIR="/proc/stackpeel",
                                  CC=str(tmp / "no-such-cc"), CUDA_HOME=str(tmp / "empty")), False),
        ]
        bad = 0
        for name, env, deep in situations:
            report = check(python=args.python, env=env, deep=deep, plugins=False)
            if args.out:
                Path(args.out).mkdir(parents=True, exist_ok=True)
                (Path(args.out) / f"{name}.json").write_text(json.dumps(report.to_dict(), indent=1))
            line = dict(situation=name, **shape_report(report))
            bad += bool(line["shape_errors"] or line["undeclared"])
            print(json.dumps(line), flush=True)
        print(json.dumps({"verdict": "every answer fits its shape" if not bad else
                          f"{bad} situation(s) with answers that do not fit: declare them in stackpeel/facts.py"}))
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
