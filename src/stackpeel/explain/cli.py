"""``stackpeel explain``: argument parsing and input plumbing only."""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO, Optional

from ..model import ExitCode, exit_status_help

EPILOG = """\
examples:
  stackpeel explain train.log                 root cause of a failed run's log
  some_command 2>&1 | stackpeel explain       read the log from standard input
  stackpeel explain ci.log.gz --no-live       a log from another machine (no local checks)
  stackpeel explain err.txt --format json     machine-readable (has "schema_version")
  stackpeel explain err.txt --format html > err.html   one page: cause graph, evidence, fix

The log may be a traceback, a pip/gcc build log, a multi-rank training log
([rank0]: / 0: prefixes), with colours, CRLF, binary junk or gzip; it is read
once, line by line, in bounded memory.

By default the checks of `stackpeel check` that the evidence points to are run
on this machine (in the environment of --python) to confirm or rule out each
candidate. Use --no-live for a log that came from another machine.

""" + exit_status_help("explain")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "explain", help="find the root cause in a pasted log or traceback",
        description="Read a log or traceback and name the deepest cause it evidences, with the evidence lines, "
                    "the symptoms it explains and the fix.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", nargs="?", metavar="FILE|-", help="the log file ('-' or nothing: standard input)")
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default="text",
                   help="output format (default: text; html: one self-contained page with the cause graph)")
    p.add_argument("--no-live", action="store_true",
                   help="do not run checks on this machine to confirm the candidates")
    p.add_argument("--python", metavar="PATH",
                   help="interpreter whose environment the live checks diagnose (default: the active one)")
    p.set_defaults(handler=run)
    return p


def _err(msg: str) -> int:
    print(f"stackpeel explain: {msg}", file=sys.stderr)
    return ExitCode.USAGE


def _open(path: Optional[str]) -> "tuple[IO[bytes], str]":
    if path in (None, "-"):
        if path is None and sys.stdin is not None and sys.stdin.isatty():
            raise ValueError("no input: give a log FILE, or pipe a log into standard input")
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise ValueError("standard input is not readable")
        return stream, "<stdin>"
    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory, not a log file")
    return open(path, "rb"), path


def run(args) -> int:
    from .knowledge import KnowledgeError, load
    from .live import confirm
    from .parser import InputError, scan_stream
    from .reasoning import explain
    from .render import render

    try:
        load()
    except (KnowledgeError, OSError) as exc:
        return _err(f"cannot load the knowledge base: {exc}")

    try:
        stream, source = _open(args.file)
    except ValueError as exc:
        return _err(str(exc))
    except OSError as exc:
        return _err(f"cannot read {args.file}: {exc.strerror or exc}")
    progress = _Progress(stream) if sys.stderr is not None and sys.stderr.isatty() else None
    try:
        with stream if source != "<stdin>" else _nullcontext(stream):
            parsed = scan_stream(stream, progress=progress)
    except InputError as exc:
        return _err(f"{source}: {exc}")
    except OSError as exc:
        return _err(f"cannot read {source}: {exc.strerror or exc}")
    except (EOFError, ValueError) as exc:  # a corrupt gzip stream
        return _err(f"cannot read {source}: {exc}")
    except MemoryError:
        return _err(f"{source}: out of memory while reading")
    finally:
        if progress is not None:
            progress.done()
    if not parsed.has_text:
        return _err(f"{source} is empty: nothing to explain")
    expl = explain(parsed, source=source)
    if not args.no_live and expl.candidates:
        expl = confirm(expl, python=args.python)
    from ..redact import scrub_fields, scrub_output, secret_values

    from ..cli import _emit
    from ..render.text import terminal_width

    if args.format == "html":  # markup: its text is scrubbed before it is laid out, not after
        text = render(scrub_fields(expl, secret_values(os.environ)), "html")
    else:
        text = scrub_output(render(expl, args.format, width=terminal_width(sys.stdout)))
    # a closed or full stdout keeps the exit code
    _emit(text, None)
    return expl.exit_code


class _Progress:
    """How far the read of a long log is, on a terminal's standard error: shown once the read
    has taken PROGRESS_AFTER seconds, rewritten in place at most every PROGRESS_EVERY seconds,
    and erased when the read ends (the report itself goes to standard output)."""

    PROGRESS_AFTER = 2.0
    PROGRESS_EVERY = 0.5

    def __init__(self, stream: IO[bytes]):
        import time
        self._clock = time.monotonic
        self._next = self._clock() + self.PROGRESS_AFTER
        self._shown = False
        try:
            st = os.fstat(stream.fileno())
            import stat
            self.total = st.st_size if stat.S_ISREG(st.st_mode) and st.st_size else None
        except (AttributeError, OSError, ValueError):
            self.total = None

    def __call__(self, n: int) -> None:
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self.PROGRESS_EVERY
        done = f"{n / 1e6:,.0f} MB"
        if self.total:
            done += f" of {self.total / 1e6:,.0f} MB ({min(100, 100 * n // self.total)} %)"
        self._write(f"\rstackpeel explain: read {done}")
        self._shown = True

    def done(self) -> None:
        if self._shown:
            self._write("\r\x1b[K")
            self._shown = False

    @staticmethod
    def _write(text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


class _nullcontext:
    def __init__(self, obj):
        self.obj = obj

    def __enter__(self):
        return self.obj

    def __exit__(self, *exc):
        return False
