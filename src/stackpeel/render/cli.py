"""``stackpeel render``: lay out a saved JSON report again (another format, width or -v).

Runs nothing: the report's facts and verdicts are read back as they were recorded, so a report
from another machine (or an older stackpeel: fields added since read as their defaults) can be
shown in the current layout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

EPILOG = """\
examples:
  stackpeel check --format json -o report.json   (on the machine with the problem)
  stackpeel render report.json                   the text report, laid out for this terminal
  stackpeel render report.json --format markdown -o issue.md
  stackpeel render report.json -v --width 100
  stackpeel render old-report.json --rediagnose   today's verdicts from the recorded facts

exit status:
  0  rendered
  2  the file is missing, not JSON, or not a stackpeel report
"""


def add_parser(sub) -> argparse.ArgumentParser:
    from . import FORMATS

    p = sub.add_parser("render", help="show a saved JSON report (from check --format json) in any format",
                       description="Render a report written by 'stackpeel check --format json'. Runs no check.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", metavar="REPORT.json", help="the report ('-': standard input)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("-v", "--verbose", action="store_true", help="full chains, evidence, every fix and check")
    p.add_argument("--width", type=int, metavar="N", help="columns to lay text out at (default: the terminal's, or 80)")
    p.add_argument("--ascii", action="store_true", help="ASCII marks instead of Unicode symbols")
    p.add_argument("--no-color", action="store_true", help="never colour the text (also: NO_COLOR=1)")
    p.add_argument("--rediagnose", action="store_true",
                   help="judge the recorded facts again with this stackpeel's checks (today's verdicts and "
                        "fix commands, which older reports lack the structure to merge); probes nothing")
    p.set_defaults(handler=run)
    return p


def run(args) -> int:
    from ..model import Report
    from . import render
    from .text import terminal_width

    try:
        raw = sys.stdin.read() if args.report == "-" else open(args.report, encoding="utf-8").read()
        report = Report.from_dict(json.loads(raw))
    except OSError as exc:
        print(f"stackpeel render: cannot read {args.report}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, TypeError) as exc:
        print(f"stackpeel render: {args.report} is not a stackpeel check report "
              f"({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    if args.rediagnose:
        from ..registry import RegistryError
        from ..replay import rediagnose
        try:
            report = rediagnose(report)
        except (RegistryError, KeyError, TypeError, ValueError) as exc:
            print(f"stackpeel render: cannot re-judge {args.report} with this stackpeel's checks "
                  f"({type(exc).__name__}: {exc}); render it as recorded (without --rediagnose)", file=sys.stderr)
            return 2
    if args.format == "text":
        to_tty = not args.output and sys.stdout.isatty()
        width = args.width or terminal_width(sys.stdout if to_tty else None)
        color = to_tty and not args.no_color and not os.environ.get("NO_COLOR")
        text = render(report, "text", width=width, ascii_only=args.ascii, verbose=args.verbose, color=color)
    else:
        text = render(report, args.format, verbose=args.verbose)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
