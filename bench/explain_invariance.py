#!/usr/bin/env python3
"""Does `stackpeel explain` name the same cause however a log was pasted?

Issue 8 item 2: patterns must hold when a message is prefixed (loggers, ranks, Ray and vLLM
workers, kubectl, journald), wrapped in a container runtime's JSON lines, quoted in Markdown,
fenced, hard-wrapped by a terminal, re-wrapped at word boundaries, cut at the top or the
bottom, or sent with CRLF line ends. For every TRAINING log of the corpus whose expected cause
explain names first as pasted, each transform below is applied to the whole log and explain is
run again (in this process, --no-live, the log's own thread left out of the exemplars as the
accuracy bench does). The report counts, per transform, the logs that keep their first place
and those that lose it (hit -> miss). Validation logs are never read.

    PYTHONPATH=src python bench/explain_invariance.py [--sample N] [--only T,T] [--out FILE]

A transform that removes text (cut-top, cut-bottom) may remove the evidence itself: its losses
bound how much of a log explain needs, they are not all defects. The anchor is the pasted log
itself (the "as pasted" hits); the figures are counts of the same logs, so machines' speed
does not enter them.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from explain_accuracy import corpus_split  # noqa: E402  (the accuracy bench loads scripts/corpus_split.py once)


def _each_line(prefix: str) -> Callable[[str], str]:
    return lambda body: "\n".join(prefix + line for line in body.split("\n"))


def _docker_json(body: str) -> str:
    # docker's json-file driver: one JSON object per line, the line with its newline in "log"
    return "\n".join(json.dumps({"log": line + "\n", "stream": "stderr",
                                 "time": "2024-05-01T12:00:00.123456789Z"}) for line in body.split("\n"))


def _hard_wrap(width: int) -> Callable[[str], str]:
    # a terminal (or a CI log viewer) cuts at the column, inside words
    def wrap(body: str) -> str:
        out: List[str] = []
        for line in body.split("\n"):
            out.extend([line[i:i + width] for i in range(0, len(line), width)] or [""])
        return "\n".join(out)
    return wrap


def _soft_wrap(body: str) -> str:
    # a mail client or an editor re-wrapping at word boundaries, indentation kept
    out: List[str] = []
    for line in body.split("\n"):
        indent = line[:len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, 80, subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True) or [""])
    return "\n".join(out)


def _kept_lines(top: bool, n: int) -> range:
    """The 1-based numbers of the lines of an ``n``-line log that a cut keeps."""
    k = n // 4
    return range(k + 1, n + 1) if top else range(1, n - k + 1)


def _cut(top: bool) -> Callable[[str], str]:
    def cut(body: str) -> str:
        lines = body.split("\n")
        kept = _kept_lines(top, len(lines))
        return "\n".join(lines[kept.start - 1:kept.stop - 1])
    return cut


#: the transforms that remove lines: which of the log's lines they keep (``_kept_lines``)
CUTS = {"cut-top": True, "cut-bottom": False}


#: name -> (what a user did, transform)
TRANSFORMS: Dict[str, tuple] = {
    "record": ("Python logging's default-ish record prefix on every line",
               _each_line("2024-05-01 12:00:00,123 - root - ERROR - ")),
    "record-bracket": ("a bracketed timestamp and level", _each_line("[2024-05-01 12:00:00] ERROR: ")),
    "glog": ("glog / absl prefix", _each_line("E0501 12:00:00.123456  4242 worker.cc:88] ")),
    "vllm": ("vLLM's logger", _each_line("ERROR 05-01 12:00:00 [engine.py:12] ")),
    "rank": ("torchrun's --tee rank prefix", _each_line("[rank3]: ")),
    "vllm-worker": ("vLLM's worker process prefix", _each_line("(VllmWorker rank=0 pid=123) ")),
    "ray": ("a Ray actor's prefix", _each_line("(RayWorkerWrapper pid=1234, ip=10.0.0.1) ")),
    "kubectl": ("kubectl logs --prefix", _each_line("[pod/trainer-0/main] ")),
    "journald": ("journalctl's short format", _each_line("May 01 12:00:00 gpu-node-3 python[4242]: ")),
    "docker-json": ("docker's json-file log lines", _docker_json),
    "quote": ("a Markdown quote", _each_line("> ")),
    "fence": ("a Markdown code fence", lambda body: "```text\n" + body + "\n```"),
    "wrap80": ("a terminal's hard wrap at 80 columns", _hard_wrap(80)),
    "softwrap": ("re-wrapped at word boundaries at 80 columns", _soft_wrap),
    "crlf": ("CRLF line ends", lambda body: body.replace("\n", "\r\n")),
    "smart-quotes": ("typographic quotes, as a word processor or a forum writes them",
                     lambda body: body.replace("'", "\u2019").replace('"', "\u201d")),
    "nbsp": ("no-break spaces, as a web page copied from a browser holds them",
             lambda body: body.replace(" ", "\u00a0")),
    "html": ("HTML-escaped quotes and brackets, as a mail notification or a page's source holds them",
             lambda body: body.replace("&", "&amp;").replace("'", "&#39;").replace('"', "&quot;")
             .replace("<", "&lt;").replace(">", "&gt;")),
    "gha": ("GitHub Actions' timestamp on every line", _each_line("2024-05-01T12:00:00.1234567Z ")),
    "cut-top": ("the first quarter of the lines cut", _cut(True)),
    "cut-bottom": ("the last quarter of the lines cut", _cut(False)),
}


def _git(*args: str) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    return "?"


def first(text: str, source: str):
    """Explain's first candidate for ``text`` (None when it names nothing)."""
    from stackpeel.explain import explain_text, similar

    with similar.leaving_out(source):
        expl = explain_text(text)
    return expl.candidates[0] if expl.candidates else None


def signature_lines(cand) -> List[int]:
    """The lines a signature of ``cand`` matched (not the context clues and facts beside them)."""
    return sorted({e.line for e in cand.evidence if not e.entry.startswith(("clue:", "facts:"))})


def first_code(text: str, source: str) -> Optional[str]:
    cand = first(text, source)
    return cand.code if cand is not None else None


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=0,
                    help="use at most N of the training logs that are hits as pasted (a fixed "
                         "choice by the hash of the file name; default: all)")
    ap.add_argument("--only", default="", help="comma-separated transforms (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="write the report here too")
    ap.add_argument("--list", action="store_true", help="list the transforms and exit")
    ap.add_argument("--lost", action="store_true",
                    help="name each training log a transform loses, with the code it got instead")
    args = ap.parse_args(argv)
    if args.list:
        for name, (what, _) in TRANSFORMS.items():
            print(f"{name:15} {what}")
        return 0
    names = [n for n in args.only.split(",") if n] or list(TRANSFORMS)
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        ap.error(f"unknown transform(s): {', '.join(unknown)} (see --list)")

    sys.path.insert(0, str(ROOT / "src"))
    from stackpeel.knowledge import load

    alias = dict(getattr(load(), "aliases", {}))
    split = corpus_split.compute_split()   # training only: validation logs are never read here
    logs = sorted(split.training, key=lambda h: hashlib.sha256(h.name.encode()).hexdigest())
    start = time.monotonic()
    base: List[tuple] = []
    for h in logs:
        body = corpus_split.read_body(h.path)
        expected = [alias.get(c, c) for c in h.expected]
        cand = first(body, h.meta.get("source", ""))
        if cand is not None and alias.get(cand.code, cand.code) in expected:
            base.append((h, body, expected, signature_lines(cand)))
        if args.sample and len(base) >= args.sample:
            break
    rows = []
    for name in names:
        fn = TRANSFORMS[name][1]
        lost = fragile = 0
        for h, body, expected, evidence in base:
            code = first_code(fn(body), h.meta.get("source", ""))
            missed = not (code is not None and alias.get(code, code) in expected)
            lost += missed
            # a cut that kept a line a signature of the first answer matched, and still lost it
            survived = name in CUTS and missed and bool(
                set(evidence) & set(_kept_lines(CUTS[name], body.count("\n") + 1)))
            fragile += survived
            if missed and args.lost:
                print(f"lost {name}: {h.name} (expected {', '.join(expected)}; got {code})"
                      + (" [its signature's line was kept]" if survived else ""), flush=True)
        rows.append((name, lost, fragile))
    secs = time.monotonic() - start

    commit = _git("rev-parse", "--short", "HEAD")
    lines = [f"stackpeel explain paste invariance, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"commit {commit}; training logs named first as pasted: {len(base)}"
             + (f" (a fixed sample of {args.sample})" if args.sample else " (all)"),
             f"{len(names)} transforms in {secs:.0f} s", "",
             f"{'transform':15} {'kept':>5} {'lost':>5}  what a user did"]
    for name, lost, fragile in rows:
        lines.append(f"{name:15} {len(base) - lost:5} {lost:5}  {TRANSFORMS[name][0]}"
                     + (f" ({fragile} of the lost kept its signature's line)" if name in CUTS else ""))
    lines.append(f"{'total':15} {sum(len(base) - r[1] for r in rows):5} {sum(r[1] for r in rows):5}")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0



if __name__ == "__main__":
    sys.exit(main())
