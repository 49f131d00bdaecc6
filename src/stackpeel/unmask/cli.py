"""``stackpeel run``: argument parsing and output plumbing only."""

from __future__ import annotations

import argparse
import sys

from ..model import ExitCode, exit_status_help

DESCRIPTION = """\
Run a Python program unchanged and report the errors its libraries caught and hid.

Libraries of the GPU stack often catch a real error and carry on with a vague warning:
FLA turns Triton's "Failed to find C compiler" into "Triton is not supported on current
platform, roll back to CPU"; transformers says a package "is not installed" whatever the
import error was. stackpeel run records every exception that library code catches and
does not re-raise, links it to the warning issued instead and to the finding code it is
evidence for, and prints the most relevant ones after the program ends.

The program's arguments, standard input/output/error, exit status and death by signal
are untouched; the report goes to standard error after it ends (or to --output).
"""

EPILOG = """\
examples:
  stackpeel run -- python train.py --epochs 1
  stackpeel run -- python -m mypkg.serve
  stackpeel run --format json -o swallowed.json -- accelerate launch train.py
  stackpeel run --all -- python -c "import fla"     every handled exception, user code too

how: the command gets a sitecustomize.py on PYTHONPATH that starts a monitor in every
Python 3.8+ process it runs (sys.monitoring on 3.12+, a slower trace hook before).
Python run with -I, -E or -S cannot be monitored this way: use stackpeel.unmask.install()
inside the program instead (docs/run.md).

""" + exit_status_help("run")


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run a program and report the errors its libraries swallowed",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default: text)")
    p.add_argument("--all", action="store_true", dest="show_all",
                   help="list every handled exception and warning, routine ones and the program's own included")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard error")
    p.add_argument("--include", action="append", default=[], metavar="PREFIX",
                   help="record only exceptions that touch modules starting with PREFIX (stack libraries are "
                        "always recorded); repeatable")
    p.add_argument("--exclude", action="append", default=[], metavar="PREFIX",
                   help="do not record exceptions caught in modules starting with PREFIX; repeatable")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
                   help="the program to run, after --")
    p.set_defaults(handler=cmd_run)


def _split(values):
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def cmd_run(args) -> int:
    from .launcher import LaunchError, die_like, launch

    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("stackpeel run: no command given (usage: stackpeel run [options] -- COMMAND [ARGS...])",
              file=sys.stderr)
        return ExitCode.USAGE
    options = {"include": _split(args.include), "exclude": _split(args.exclude)}
    try:
        result = launch(argv, options=options)
    except LaunchError as exc:
        print(f"stackpeel run: {exc}", file=sys.stderr)
        return ExitCode.NOT_STARTED
    try:
        _report(args, argv, result)
    except Exception as exc:  # stackpeel's own failure never becomes the program's exit status
        _say(f"stackpeel run: could not build the report ({type(exc).__name__}: {exc})")
    return die_like(result.returncode)


def _say(msg: str) -> None:
    try:
        print(msg, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _report(args, argv, result) -> None:
    from ..redact import scrub_argv, scrub_output, secret_values
    from .launcher import python_flags_note
    from .render import render
    from .report import build_report

    if result.unmonitored:
        _say(f"stackpeel run: {result.unmonitored}")
        return
    notes = []
    t = result.target
    if t.kind in ("python", "python-script"):
        flag_note = python_flags_note(argv if t.kind == "python" else [t.interpreter or "python",
                                                                       *t.interpreter_args])
        if flag_note:
            notes.append(flag_note)
    elif t.note:
        notes.append(t.note)
    target = {"argv0": t.argv0, "path": t.path, "kind": t.kind, "interpreter": t.interpreter}
    import os

    report = build_report(result.records, command=scrub_argv(argv, secret_values(os.environ)), target=target,
                          returncode=result.returncode, duration=result.duration, crash_dumps=result.crash_dumps,
                          main_pid=result.main_pid, show_all=args.show_all, notes=notes)
    from ..render.text import terminal_width

    to_file = args.output and args.output != "-"
    text = scrub_output(render(report, args.format, width=terminal_width(None if to_file else sys.stderr)))
    if to_file:
        from ..cli import write_atomically

        try:
            write_atomically(args.output, text)
        except OSError as exc:
            _say(f"stackpeel run: cannot write the report to {args.output}: {exc.strerror or exc}")
        return
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
