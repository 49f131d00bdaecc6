#!/usr/bin/env python3
"""Write the known-bad-combination entries for companions of torch built for another torch release.

Each torchvision, torchaudio, vLLM, SGLang and xformers release is built for one torch release and
says so in its wheel metadata (``Requires-Dist: torch==2.7.0``). With any other torch their C++
operators do not load: recent torchvision releases fail at import (``operator torchvision::nms
does not exist``). Two steps, so that the knowledge is reproducible offline:

    python scripts/companion_pins.py --refresh    # read every release's pin from the index into
                                                  # scripts/companion_pins.json (network, ~20 min)
    python scripts/companion_pins.py --write      # rewrite the block in combinations.toml from it
    python scripts/companion_pins.py --check      # exit 1 if the block is not what the snapshot gives
    python scripts/companion_pins.py              # print the block

``--refresh`` reads the metadata without downloading a wheel (pip resolves with ``--dry-run
--report`` from the metadata files the index serves beside the wheels). The block lies between the
markers below in ``knowledge/combinations.toml``; a test runs ``--check``, so the committed block
is always what the committed snapshot gives.

A minor release whose patches name different torch releases of one minor (0.24.0 -> 2.9.0, 0.24.1
-> 2.9.1) pairs with that torch minor: patch releases of torch keep the operators' ABI. A minor
release with a patch that names no exact torch (``torch>=2.11``), or whose metadata pip could not
read, gives no entry. SGLang pins torch only under its ``srt`` extra before 0.5 (``torch==2.6.0;
extra == "srt"``): that pin counts, since the engine runs only with it. Not here: sgl-kernel and
flashinfer (their Requires-Dist names no torch release), flash-attn, causal-conv1d and mamba-ssm
(source distributions, built on the user's machine for whatever torch is there). sgl-kernel's
long description says "Requires torch == X" from 0.3.16.post4 on (two runs: 2.8.0, 2.9.1, the torch
the SGLang releases that pin it pin beside it): those two entries are written by hand in
combinations.toml; flashinfer-python ships no compiled library (it JIT-builds for the torch there).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "src" / "stackpeel" / "knowledge" / "combinations.toml"
#: every release's torch pin as the index served it at the last ``--refresh``
SNAPSHOT = Path(__file__).resolve().with_suffix(".json")
BEGIN = "# >>> companion pins (scripts/companion_pins.py; do not edit by hand)"
END = "# <<< companion pins"
#: package -> how its releases pair with torch: "minor" (each minor release built for one torch
#: minor: torchvision 0.22 -> torch 2.7), "range" (runs of releases pinned to one torch minor:
#: vLLM 0.6.4 to 0.7.3 -> torch 2.5) or "exact" (each release loads its extensions only beside the
#: very torch release it was built for: xformers/_cpp_lib.py compares the versions)
PACKAGES = {"torchvision": "minor", "torchaudio": "minor", "vllm": "range", "sglang": "range", "xformers": "exact"}

WHAT = {
    "torchvision": ("torchvision's compiled operators (nms, roi_align, deform_conv2d, image decoding): recent "
                    "releases fail at import",
                    "torchvision {minor} is built for torch {torch}: with another torch its C++ operators do not "
                    "load. Importing it raises RuntimeError: operator torchvision::nms does not exist (releases that "
                    "register their operators' fake kernels at import), or its operators raise RuntimeError: "
                    "Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
                    "incompatible."),
    "torchaudio": ("torchaudio's compiled extension (its I/O and the operators of torchaudio.functional and "
                   "transforms that are implemented in C++)",
                   "torchaudio {minor} is built for torch {torch}: with another torch its extension fails to load "
                   "(OSError or ImportError: undefined symbol ... in libtorchaudio.so, or 'Could not load this "
                   "library'), and the operators that need it fail."),
    "xformers": ("xformers' C++/CUDA operators (memory_efficient_attention)",
                 "xformers {minor} is built for torch {torch}: with another torch release it warns 'xFormers "
                 "can't load C++/CUDA extensions. xFormers was built for: PyTorch {torch} ...' and "
                 "memory_efficient_attention raises NotImplementedError (no operator found)."),
    "vllm": ("vLLM's compiled kernels (vllm._C): the engine does not start",
             "vLLM {minor} is built for torch {torch} (it pins torch exactly): with another torch its compiled "
             "extension fails to load (ImportError: ... vllm/_C.abi3.so: undefined symbol: ..., or 'Failed to "
             "import from vllm._C') and the engine does not start."),
    "sglang": ("SGLang's runtime (sgl_kernel and the other compiled kernels it pins beside torch): the server "
               "does not start",
               "SGLang {minor} is built for torch {torch} (it pins torch exactly, with the sgl-kernel and "
               "flashinfer releases built for it): with another torch sgl_kernel fails to load (ImportError: "
               "... undefined symbol: ..., or 'Failed to load the sgl_kernel library') and the server does "
               "not start."),
}

#: the fix and command per package: the companions follow torch, vLLM brings its own torch
FIX = {
    "minor": ("Install the {package} release built for the installed torch, from the index torch came from "
              "(its CUDA build): pinning torch to the installed version lets pip pick it. Or install torch "
              "{torch}, which {package} {minor} is built for.",
              "{{python}} -m pip install --upgrade 'torch=={{version:torch}}' {package}"),
    "exact": ("Install the {package} release built for the installed torch, or the torch this {package} "
              "was built for.",
              "{{python}} -m pip install 'torch=={torch}'"),
    "range": ("Install the torch that this {label} pins (installing the same {label} release again makes pip "
              "bring it, with the torchvision and torchaudio it pins), or a {label} release built for the "
              "installed torch.",
              "{{python}} -m pip install '{package}=={{version:{package}}}'"),
}


def versions(package: str) -> List[str]:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package],
                         capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("Available versions:"))
    return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]


def torch_pin(package: str, version: str) -> Optional[str]:
    """The exact torch release the release's metadata requires; None when it names none or
    its metadata could not be read (no wheel for this Python, say)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                               "--no-deps", "--quiet", "--report", str(report), f"{package}=={version}"],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not report.exists():
            # say why: a local pip constraint (a cap on torchvision, say) fails the dry run and would
            # otherwise read as "names no torch"
            why = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")][:1]
            print(f"{package} {version}: pip could not read its metadata: {why[0] if why else proc.returncode}",
                  file=sys.stderr)
            return None
        meta = json.loads(report.read_text())["install"][0]["metadata"]
    for req in meta.get("requires_dist") or ():
        m = re.fullmatch(r"torch\s*\(?\s*==\s*([\d.]+)\s*\)?", req.split(";")[0].strip())
        if m:
            return m.group(1)
    return None


def minor(v: str) -> str:
    return ".".join(v.split(".")[:2])


def key(v: str) -> Tuple[int, ...]:
    """Release order of a final release (post releases after their base: 0.6.4 < 0.6.4.post1 < 0.6.5)."""
    base, _, post = v.partition(".post")
    return tuple(int(p) for p in base.split(".")) + (int(post or -1),)


#: final releases (and post releases); no pre-releases or dev releases
FINAL = re.compile(r"\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?")


#: how a package is named in prose
LABEL = {"vllm": "vLLM", "sglang": "SGLang"}

#: what a source line adds to the metadata, per package
SOURCE_MORE = {"xformers": "; the warning from xformers/_cpp_lib.py"}


def fetch(package: str) -> Dict[str, Optional[str]]:
    """Every final or post release of the package -> the exact torch release its metadata requires
    (None: it names none, or pip could not read it). Reads the index."""
    out: Dict[str, Optional[str]] = {}
    for v in sorted((v for v in versions(package) if FINAL.fullmatch(v)), key=key):
        out[v] = torch_pin(package, v)
        print(f"{package} {v}: torch {out[v] or '-'}", file=sys.stderr)
    return out


def load_snapshot(path: Path = SNAPSHOT) -> Dict[str, Dict[str, Optional[str]]]:
    return json.loads(path.read_text(encoding="utf-8"))["pins"]


def exact(snap: Dict[str, Optional[str]]) -> List[Tuple[str, str]]:
    """(release, torch release) for each final or post release pinned to one exact torch release."""
    out = []
    for v in sorted(snap, key=key):
        t = snap[v]
        if t:
            out.append((v, t))
    return out


def ranges(snap: Dict[str, Optional[str]]) -> List[Tuple[str, str, str, List[str]]]:
    """(first release, last release, torch minor, releases) for each run of consecutive releases
    pinned to one torch minor; a release that names no exact torch ends a run and is in none."""
    out: List[Tuple[str, str, str, List[str]]] = []
    run: List[str] = []
    run_torch = None
    for v in sorted(snap, key=key):
        t = minor(snap[v]) if snap[v] else None
        if run and t != run_torch:
            out.append((run[0], run[-1], run_torch, run))
            run = []
        if t is not None:
            run.append(v)
            run_torch = t
    if run:
        out.append((run[0], run[-1], run_torch, run))
    return out


def pins(snap: Dict[str, Optional[str]]) -> Dict[str, Tuple[str, Set[str]]]:
    """minor release of the package -> (torch minor, releases read) for the releases with an exact pin."""
    by_minor: Dict[str, Dict[str, Set[str]]] = defaultdict(lambda: defaultdict(set))
    loose: Set[str] = set()
    for v, t in snap.items():
        if not re.fullmatch(r"\d+\.\d+\.\d+", v):
            continue  # post-releases: no new pairing
        if t:
            by_minor[minor(v)][minor(t)].add(v)
        else:
            loose.add(minor(v))
    out = {}
    for m, torches in by_minor.items():
        # one torch minor for every patch, and no patch that names no exact torch (torchvision
        # 0.29.1 asks for torch>=2.14.0: that minor may be built for more than one torch)
        if len(torches) == 1 and m not in loose:
            (t, releases), = torches.items()
            out[m] = (t, releases)
    return out


def block(snapshot: Dict[str, Dict[str, Optional[str]]]) -> str:
    lines = [BEGIN,
             "# torchvision and torchaudio releases are each built for one torch release (their wheel",
             "# metadata: Requires-Dist torch==X.Y.Z); with another torch minor their C++ operators do not load."]
    for package, mode in PACKAGES.items():
        if mode == "minor":
            table = pins(snapshot[package])
            rows = [(f"{package}-{m}-torch", m, f"=={m}.*", table[m][0], sorted(table[m][1], key=key))
                    for m in sorted(table, key=lambda s: tuple(int(p) for p in s.split(".")))]
        elif mode == "exact":
            rows = [(f"{package}-{v}-torch", v, f"=={v}", t, [v]) for v, t in exact(snapshot[package])]
        else:
            rows = [(f"{package}-{a}-torch" if a == b else f"{package}-{a}-to-{b}-torch",
                     a if a == b else f"{a} to {b}", f"=={a}" if a == b else f">={a},<={b}", t, rel)
                    for a, b, t, rel in ranges(snapshot[package])]
        breaks, consequence = WHAT[package]
        fix, command = FIX[mode]
        for ident, label, spec, t, releases in rows:
            lines += [
                "",
                "[[combination]]",
                f'id = "{ident}"',
                'code = "known-bad-combination"',
                'explains = ["extension-torch-mismatch"]',
                'severity = "blocking"',
                f'when = {{ {package} = "{spec}", torch = "!={t}{"" if mode == "exact" else ".*"}" }}',
                f'breaks = "{breaks}"',
                f'consequence = "{consequence.format(minor=label, torch=t)}"',
                f'fix = "{fix.format(package=package, torch=t, minor=label, label=LABEL.get(package, package))}"',
                f'commands = [["pip", "{command.format(package=package, torch=t)}"]]',
                f'source = "{package} {", ".join(releases)} wheel metadata (PyPI): Requires-Dist '
                f'torch=={t}{"" if mode == "exact" else ".x"}{SOURCE_MORE.get(package, "")}"',
            ]
    lines.append(END)
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refresh", action="store_true",
                    help=f"read every release's torch pin from the index into {SNAPSHOT.name} (network)")
    ap.add_argument("--write", action="store_true", help="replace the block in knowledge/combinations.toml")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed block is not what the snapshot gives")
    args = ap.parse_args(argv)
    if args.refresh:
        snap = {package: fetch(package) for package in PACKAGES}
        SNAPSHOT.write_text(json.dumps({"format": "stackpeel-companion-pins", "version": 1, "pins": snap},
                                       indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
    text = block(load_snapshot())
    old = TABLE.read_text(encoding="utf-8")
    if args.check:
        if BEGIN not in old or BEGIN + old.split(BEGIN, 1)[1].split(END, 1)[0] + END + "\n" != text:
            print(f"{TABLE.name}'s companion block is not what {SNAPSHOT.name} gives: "
                  "run scripts/companion_pins.py --write", file=sys.stderr)
            return 1
        return 0
    if not args.write:
        if not args.refresh:
            sys.stdout.write(text)
        return 0
    if BEGIN in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + text + ("\n" + tail if tail else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    TABLE.write_text(new, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
