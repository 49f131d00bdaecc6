"""Command-line interface: argument parsing and output plumbing only."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Dict, List, Optional, Sequence

from . import __version__
from .model import ExitCode

DESCRIPTION = """\
stackpeel finds the root cause of a broken GPU machine-learning stack.

It probes every layer directly (device nodes and kernel driver, libcuda/NVML,
PyTorch, the C compiler and headers Triton needs, ptxas, Triton itself, kernel
libraries such as flash-linear-attention and causal-conv1d), each in an isolated
child process of the Python you diagnose, and reports the root cause first, the
symptoms it explains, the error text that libraries swallowed, and how to fix it.
"""

EPILOG_CHECK = """\
examples:
  stackpeel check                         diagnose the active venv/conda env (or python3 on PATH)
  stackpeel check --python ~/venv/bin/python --format markdown -o report.md
  stackpeel check --only toolchain        just the C toolchain Triton needs (and what it requires)
  stackpeel check --skip kernels -v       everything but the kernel libraries, with details

exit status:
  0  no blocking problem found
  1  a blocking problem was found, or a check could not complete
  2  usage error, or stackpeel itself failed
"""


def _add_check_parser(sub) -> None:
    p = sub.add_parser("check", help="diagnose a Python environment's GPU stack",
                       description="Probe each layer of the stack and report root causes first.",
                       epilog=EPILOG_CHECK, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", metavar="PATH",
                   help="interpreter to diagnose (default: $VIRTUAL_ENV, then $CONDA_PREFIX, then python3 on PATH)")
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default="text",
                   help="output format (default: text; html: one self-contained page with the cause graph)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output")
    p.add_argument("--only", action="append", default=[], metavar="ID|LAYER",
                   help="run only these checks or layers (and what they require); repeatable, comma-separated")
    p.add_argument("--skip", action="append", default=[], metavar="ID|LAYER",
                   help="leave out these checks or layers; repeatable, comma-separated")
    p.add_argument("-v", "--verbose", action="store_true", help="show more evidence and every finding")
    p.add_argument("--redact", action="store_true",
                   help="also hide user, home directory and host names (secrets are always hidden)")
    p.add_argument("--no-color", action="store_true", help="never colour the text output (also: NO_COLOR=1)")
    p.add_argument("--ascii", action="store_true", help="use ASCII marks instead of Unicode symbols")
    p.add_argument("--no-plugins", action="store_true", help="ignore checks installed by other packages")
    p.add_argument("--timeout-scale", type=float, default=1.0, metavar="X",
                   help="multiply every check's timeout by X (slow or loaded machines)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stackpeel", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Run 'stackpeel COMMAND --help' for a command's options. "
                                            "Finding codes are explained by 'stackpeel codes'.")
    parser.add_argument("--version", action="version", version=f"stackpeel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_check_parser(sub)
    pl = sub.add_parser("list", help="list the checks, their layers and what each requires (runs nothing)")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.add_argument("--no-plugins", action="store_true")
    pc = sub.add_parser("codes", help="explain every finding code: meaning and fix")
    pc.add_argument("code", nargs="?", help="show just this code")
    pc.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    for name, mod in (("explain", "explain.cli"), ("run", "unmask.cli"), ("diff", "compare"),
                      ("render", "render.cli")):
        try:
            module = __import__(f"stackpeel.{mod}", fromlist=["add_parser"])
        except ImportError:
            continue
        module.add_parser(sub)
    return parser


def _split(values: Sequence[str]) -> List[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


class Progress:
    """A progress line on stderr while probes run: one rewritten line on a terminal,
    a note per slow check (10 s and over) otherwise. Never writes to stdout."""

    SLOW = 10.0

    def __init__(self, stream=None, total: int = 0):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.running: Dict[str, float] = {}
        self.noted: set = set()
        self.done = 0
        self.total = total
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __call__(self, event, cls, result) -> None:
        with self.lock:
            if event == "start":
                self.running[cls.id] = time.monotonic()
            else:
                self.running.pop(cls.id, None)
                self.done += 1

    def _loop(self) -> None:
        while not self.stop.wait(0.25):
            now = time.monotonic()
            with self.lock:
                items = sorted(self.running.items(), key=lambda kv: kv[1])
                done = self.done
            if self.tty:
                names = ", ".join(f"{cid} {now - t0:.0f}s" for cid, t0 in items[:3])
                more = f" +{len(items) - 3}" if len(items) > 3 else ""
                line = f"stackpeel: {done}/{self.total} checks done; running {names}{more}"
                self.stream.write("\r\x1b[2K" + line[:150])
                self.stream.flush()
            else:
                for cid, t0 in items:
                    if now - t0 >= self.SLOW and cid not in self.noted:
                        self.noted.add(cid)
                        self.stream.write(f"stackpeel: {cid} is taking a long time ({now - t0:.0f} s so far)...\n")
                        self.stream.flush()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        if self.tty:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _emit(text: str, output: Optional[str]) -> None:
    if output and output != "-":
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def cmd_check(args) -> int:
    from . import registry
    from .engine import check
    from .host import TargetError
    from .model import Report
    from .redact import redact_report_dict
    from .render import render

    only, skip = _split(args.only), _split(args.skip)
    try:
        classes = registry.select(registry.load(plugins=not args.no_plugins), only, skip)
    except registry.RegistryError as exc:
        print(f"stackpeel: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    progress = Progress(total=len(classes))
    try:
        with progress:
            report = check(python=args.python, only=only, skip=skip, progress=progress,
                           timeout_scale=args.timeout_scale, plugins=not args.no_plugins)
    except TargetError as exc:
        print(f"stackpeel: cannot diagnose: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.redact:
        report = Report.from_dict(redact_report_dict(report.to_dict(), identity=True))
    color = (args.format == "text" and not args.no_color and not os.environ.get("NO_COLOR")
             and not args.output and sys.stdout.isatty())
    enc = (getattr(sys.stdout, "encoding", "") or "").lower()
    ascii_only = args.ascii or ("utf" not in enc and not args.output)
    if args.format == "text":
        from .render.text import terminal_width
        text = render(report, "text", color=color, ascii_only=ascii_only, verbose=args.verbose,
                      width=terminal_width(None if args.output else sys.stdout))
    else:
        text = render(report, args.format, verbose=args.verbose)
    _emit(text, args.output)
    if args.output:
        print(f"stackpeel: report written to {args.output}", file=sys.stderr)
    return int(report.diagnosis.exit_code)


def cmd_list(args) -> int:
    from . import registry

    classes = registry.load(plugins=not args.no_plugins)
    if args.format == "json":
        _emit(json.dumps([c.describe() for c in classes], indent=2) + "\n", None)
        return 0
    lines = []
    for layer in registry.LAYERS:
        members = [c for c in classes if c.layer == layer]
        if not members:
            continue
        lines.append(f"{layer}:")
        for c in members:
            req = f"  (requires {', '.join(c.requires)})" if c.requires else ""
            lines.append(f"  {c.id:<32} {c.title}{req}")
    _emit("\n".join(lines) + "\n", None)
    return 0


def cmd_codes(args) -> int:
    from .codes import all_codes
    from .docs import codes_json, codes_markdown, codes_text

    catalogue = all_codes()
    if args.code and args.code not in catalogue:
        print(f"stackpeel: unknown finding code {args.code!r}; 'stackpeel codes' lists them all", file=sys.stderr)
        return ExitCode.USAGE
    selected = [catalogue[args.code]] if args.code else list(catalogue.values())
    fn = {"json": codes_json, "markdown": codes_markdown, "text": codes_text}[args.format]
    _emit(fn(selected), None)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return ExitCode.USAGE
    handlers = {"check": cmd_check, "list": cmd_list, "codes": cmd_codes}
    handler = handlers.get(args.command) or getattr(args, "handler", None)
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        print("stackpeel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
