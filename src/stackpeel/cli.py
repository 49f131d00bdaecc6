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
from .model import ExitCode, exit_status_help

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
  stackpeel check --require triton.kernel_launch,kernels.fla
                                          preflight at a job's start: exit 1 only if these fail

""" + exit_status_help("check")


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
    p.add_argument("--require", action="append", default=[], metavar="ID|LAYER",
                   help="preflight for a job: run these checks and what they require; exit 1 only when one of "
                        "them does not pass; under torchrun/Slurm/MPI one rank per node checks, the others "
                        "wait for its verdict (docs/plugins.md#preflight)")
    p.add_argument("--skip", action="append", default=[], metavar="ID|LAYER",
                   help="leave out these checks or layers; repeatable, comma-separated")
    p.add_argument("-v", "--verbose", action="store_true", help="show more evidence and every finding")
    p.add_argument("--redact", action="store_true",
                   help="also hide user, home directory and host names (secrets are always hidden)")
    p.add_argument("--no-color", action="store_true", help="never colour the text output (also: NO_COLOR=1)")
    p.add_argument("--ascii", action="store_true", help="use ASCII marks instead of Unicode symbols")
    p.add_argument("--no-plugins", action="store_true",
                   help="ignore checks installed by other packages (also: STACKPEEL_NO_PLUGINS=1)")
    p.add_argument("--timeout-scale", type=float, default=1.0, metavar="X",
                   help="multiply every check's timeout by X (slow or loaded machines)")
    p.add_argument("--deep", action="store_true",
                   help="import the kernel libraries whole and run tiny real ops forward and backward "
                        "(FLA, causal-conv1d, torch.compile) on an empty Triton cache; minutes on a GPU")
    p.add_argument("--prometheus", metavar="FILE",
                   help="also write node_exporter textfile metrics to FILE (needs prometheus-client: "
                        "pip install 'stackpeel[fleet]')")
    p.add_argument("--fresh", action="store_true",
                   help="run every check again instead of reusing an unchanged earlier run's results")


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The whole parser; for ``command`` check, list or codes, only the built-in
    subcommands (the other subcommands' modules are not imported: check starts faster)."""
    parser = argparse.ArgumentParser(prog="stackpeel", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Run 'stackpeel COMMAND --help' for a command's options. "
                                            "Finding codes are explained by 'stackpeel codes'.")
    parser.add_argument("--version", action="version", version=f"stackpeel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_check_parser(sub)
    pl = sub.add_parser("list", help="list the checks, their layers and what each requires (runs nothing)")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.add_argument("--no-plugins", action="store_true", help="ignore checks installed by other packages "
                    "(also: STACKPEEL_NO_PLUGINS=1)")
    pc = sub.add_parser("codes", help="explain every finding code: meaning and fix")
    pc.add_argument("code", nargs="?", help="show just this code")
    pc.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    pc.add_argument("--no-plugins", action="store_true", help="only stackpeel's own codes")
    for name, mod in (("explain", "explain.cli"), ("run", "unmask.cli"), ("diff", "compare"), ("fleet", "fleet.cli"),
                      ("render", "render.cli"), ("fix", "fix"), ("export", "export")):
        if command in BUILTIN_COMMANDS:
            break
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
                line = self.line(done, items, now, self.width())
                try:
                    self.stream.write("\r\x1b[2K" + line)
                    self.stream.flush()
                except (OSError, ValueError):
                    return
            else:
                for cid, t0 in items:
                    if now - t0 >= self.SLOW and cid not in self.noted:
                        self.noted.add(cid)
                        self.stream.write(f"stackpeel: {cid} is taking a long time ({now - t0:.0f} s so far)...\n")
                        self.stream.flush()

    def width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return 80

    def line(self, done: int, items, now: float, width: int) -> str:
        """One line that never reaches the last column: a line that wraps cannot be rewritten
        with a carriage return, and leaves stale copies behind."""
        head = f"stackpeel: {done}/{self.total} checks done"
        names = [f"{cid} {now - t0:.0f}s" for cid, t0 in items]
        room = width - 1
        line = head
        for i, name in enumerate(names):
            rest = len(names) - i - 1
            more = f" +{rest}" if rest else ""
            cand = line + ("; running " if i == 0 else ", ") + name
            if len(cand + more) > room:
                line += f" +{len(names) - i}" if i else f"; {len(names)} running"
                break
            line = cand
        return line[:room]

    def __enter__(self):
        if self.stream is None:
            return self
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
        if self.tty:
            try:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def output_problem(output: Optional[str]) -> Optional[str]:
    """Why the report cannot be written to ``output`` (checked before anything runs), or None."""
    if not output or output == "-":
        return None
    if os.path.isdir(output):
        return f"{output} is a directory; give a file name (e.g. {os.path.join(output, 'report.txt')})"
    try:
        parent = os.path.dirname(os.path.abspath(output)) or os.sep
    except OSError:
        return f"{output}: the current directory no longer exists; give an absolute path"
    if not os.path.isdir(parent):
        return f"cannot write {output}: directory {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write {output}: no permission to create files in {parent}"
    if os.path.exists(output) and not os.access(output, os.W_OK):
        return f"cannot write {output}: the file is not writable"
    return None


def write_atomically(path: str, text: str) -> None:
    """Write a whole file or nothing: a temporary file beside it, renamed over it.

    Only a regular file (or a new one) is replaced: /dev/null, /dev/stdout, a FIFO or a
    terminal is written to as it is (renaming over /dev/null would replace the device)."""
    import stat

    from ._files import replace_file

    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    umask = os.umask(0)
    os.umask(umask)
    replace_file(path, text, 0o666 & ~umask)


def _stdout_gone() -> None:
    """Point fd 1 at /dev/null so that the interpreter's final flush cannot traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


#: descriptors stackpeel's own process needs to start a check (measured: it fails under a hard
#: limit of 16 or less and runs from 17, on the 2-core CI machine, taking its probes one at a time)
OWN_DESCRIPTORS = 17


def _own_descriptors(error: str) -> str:
    """What to add when stackpeel itself ran out of descriptors (it raises its soft open-files
    limit to the hard one, runner/child.own_nofile, but cannot go past a hard limit this low)."""
    if "Too many open files" not in error:
        return ""
    try:
        import resource
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    except (ImportError, OSError, ValueError):
        return ""
    if hard == resource.RLIM_INFINITY or hard >= OWN_DESCRIPTORS:
        return ""  # not the hard limit: stackpeel could raise its own past what it ran out of
    return (f" (stackpeel itself needs about {OWN_DESCRIPTORS} open files and the hard limit here is {hard}: "
            f"run it from a shell with a higher limit, e.g. `ulimit -n 1024`, to diagnose this one)")


def _warn(msg: str) -> None:
    try:
        print(f"stackpeel: {msg}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _emit(text: str, output: Optional[str]) -> bool:
    """Deliver the report; False (with a one-line warning, never a traceback) when it could not be."""
    if output and output != "-":
        try:
            write_atomically(output, text)
        except OSError as exc:
            _warn(f"cannot write the report to {output}: {exc.strerror or exc}")
            return False
        return True
    if sys.stdout is None:
        _warn("standard output is closed: the report was not written (use -o FILE)")
        return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_gone()          # the reader stopped reading (| head): not worth a word
        return False
    except (OSError, ValueError) as exc:
        _stdout_gone()
        _warn(f"cannot write the report to standard output: {getattr(exc, 'strerror', None) or exc}")
        return False
    return True


def cmd_check(args) -> int:
    from .engine import check, start_early
    from .host import TargetError
    from .runner.hygiene import NoTempDir

    only, skip = _split(args.only), _split(args.skip)
    problem = output_problem(args.output) or (args.prometheus and output_problem(args.prometheus))
    if problem:
        _warn(problem)
        return ExitCode.USAGE
    if args.prometheus:
        from .prometheus import ensure_available
        try:
            ensure_available()
        except RuntimeError as exc:
            _warn(str(exc))
            return ExitCode.USAGE
    required = _split(args.require)
    # the torch import (the critical path) starts now, before the registry and the renderers load
    early = None if required else start_early(args.python, only, deep=args.deep, reuse=True, fresh=args.fresh)
    from . import registry
    from .model import Report
    from .redact import redact_report_dict
    from .render import render

    try:
        classes = registry.select(registry.load(plugins=not args.no_plugins), only + required, skip)
    except registry.RegistryError as exc:
        if early is not None:
            early.close()
        print(f"stackpeel: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    progress = Progress(total=len(classes))
    try:
        if required:
            report, exit_code = _preflight(args, required + only)
        else:
            with progress:
                report = check(python=args.python, only=only, skip=skip, progress=progress,
                               timeout_scale=args.timeout_scale, plugins=not args.no_plugins,
                               deep=args.deep, reuse=True, fresh=args.fresh, zygotes=early)
            exit_code = int(report.diagnosis.exit_code)
    except TargetError as exc:
        _warn(f"cannot diagnose: {exc}{_own_descriptors(str(exc))}")
        return ExitCode.USAGE
    except NoTempDir as exc:
        _warn(f"cannot diagnose: {exc.strerror}")
        return ExitCode.USAGE
    reused = report.target.get("reused") or {}
    if reused.get("results"):
        print(f"stackpeel: {reused['results']} of {len(report.results)} results reused from an earlier run on this "
              "unchanged machine (--fresh runs every check again)", file=sys.stderr)
    if args.redact:
        report = Report.from_dict(redact_report_dict(report.to_dict(), identity=True))
    color = (args.format == "text" and not args.no_color and not os.environ.get("NO_COLOR")
             and not args.output and sys.stdout is not None and sys.stdout.isatty())
    enc = (getattr(sys.stdout, "encoding", "") or "").lower()
    ascii_only = args.ascii or ("utf" not in enc and not args.output)
    if args.format == "text":
        from .render.text import terminal_width
        text = render(report, "text", color=color, ascii_only=ascii_only, verbose=args.verbose,
                      width=terminal_width(None if args.output else sys.stdout))
    else:
        text = render(report, args.format, verbose=args.verbose)
    if _emit(text, args.output) and args.output and args.output != "-":
        _warn(f"report written to {args.output}")
    if args.prometheus:
        from .prometheus import write_report
        try:
            write_report(report, args.prometheus)
        except OSError as exc:
            _warn(f"cannot write the metrics to {args.prometheus}: {exc.strerror or exc}")
            return ExitCode.USAGE
    return exit_code


def _preflight(args, required: List[str]):
    """``check --require``: stackpeel.require's verdict, shared between the ranks of a node."""
    from .host import default_python
    from .preflight import StackError, require

    python = args.python or default_python(os.environ)["python"]
    try:
        return require(*required, python=python, timeout_scale=args.timeout_scale,
                       plugins=not args.no_plugins, reuse=not args.fresh), ExitCode.OK
    except StackError as exc:
        return exc.report, ExitCode.PROBLEMS


def cmd_list(args) -> int:
    from . import registry

    classes = registry.load(plugins=not args.no_plugins)
    if args.format == "json":
        _emit(json.dumps([c.describe() for c in classes], indent=2) + "\n", None)
        return ExitCode.OK
    lines = []
    for layer in registry.LAYERS:
        members = [c for c in classes if c.layer == layer]
        if not members:
            continue
        lines.append(f"{layer}:")
        for c in members:
            req = f"  (requires {', '.join(c.requires)})" if c.requires else ""
            origin = f"  [from {c.origin}]" if c.origin != "builtin" else ""
            lines.append(f"  {c.id:<32} {c.title}{req}{origin}")
    plugins = sorted({c.origin for c in classes if c.origin != "builtin"})
    lines.append(f"{len(classes)} checks: {sum(c.origin == 'builtin' for c in classes)} built in"
                 + (f", {len(classes) - sum(c.origin == 'builtin' for c in classes)} from plugins "
                    f"({', '.join(plugins)})" if plugins else "; no plugins installed (docs/plugins.md)"))
    _emit("\n".join(lines) + "\n", None)
    return ExitCode.OK


def cmd_codes(args) -> int:
    from .codes import all_codes
    from .docs import codes_json, codes_markdown, codes_text

    catalogue = all_codes()
    if args.code:  # an alias shows the code it names
        from .knowledge import load as _load_kb

        args.code = _load_kb().canonical(args.code)
    if args.code and args.code not in catalogue:
        import difflib

        close = difflib.get_close_matches(args.code, list(catalogue), n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        _warn(f"unknown finding code {args.code!r}{hint}; 'stackpeel codes' lists them all")
        return ExitCode.USAGE
    selected = [catalogue[args.code]] if args.code else list(catalogue.values())
    fn = {"json": codes_json, "markdown": codes_markdown, "text": codes_text}[args.format]
    _emit(fn(selected), None)
    return ExitCode.OK


#: subcommands whose parsers build_parser defines itself
BUILTIN_COMMANDS = ("check", "list", "codes")


def main(argv: Optional[Sequence[str]] = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in BUILTIN_COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return ExitCode.USAGE
    if getattr(args, "no_plugins", False):
        from . import plugins

        plugins.disable()
    handlers = {"check": cmd_check, "list": cmd_list, "codes": cmd_codes}
    handler = handlers.get(args.command) or getattr(args, "handler", None)
    if args.command == "diff":  # check validates its own -o; run's program runs whatever -o is
        problem = output_problem(getattr(args, "output", None))
        if problem:
            _warn(problem)
            return ExitCode.USAGE
    as_program = argv is None and args.command in ("check", "explain", "diff")  # the commands that start probes
    if as_program:
        _end_with_stackpeel()  # as a program only: a caller of main(argv) keeps its own signal handling
        from .runner.child import own_fsize, own_nofile, raise_own_fsize, raise_own_nofile

        raise_own_nofile()  # its own open-files limit up to the hard one; the probes keep the user's
        own_nofile()  # now, before the target is identified (--only and no preload start no zygote first)
        raise_own_fsize()  # likewise its file-size limit: the report, the cache and probe inputs are its own
        own_fsize()
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        _warn("interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _stdout_gone()
        return ExitCode.USAGE
    finally:
        if as_program:  # a normal end too: what a probe left running (a daemon, an adopted orphan) goes
            from .runner import hygiene

            hygiene.terminate_all()
            # and what a probe killed in this run (a timeout, SIGKILL) left outside stackpeel's scratch:
            # the extension build's stamped folder in the user's temporary directory (tmp25)
            hygiene.sweep_orphans()


_ENDING = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}


def _end_with_stackpeel() -> None:
    """Signals and parent death end every probe, its descendants and temp dirs, then stackpeel.

    A first signal kills the probes (whole process groups and descendants), removes the
    temporary directories and exits with 128+signal; a second one during that exits at once.
    The parent's death counts as SIGHUP."""
    import signal

    from .runner import hygiene

    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum: int, _frame=None) -> None:
        for name in _ENDING:
            signal.signal(getattr(signal, name), lambda s, f: os._exit(128 + s))
        hygiene.terminate_all()
        try:
            os.write(2, f"\nstackpeel: {_ENDING.get(signal.Signals(signum).name, 'ended')}; "
                        "every probe was stopped\n".encode())
        except OSError:
            pass
        os._exit(128 + signum)

    # a signal ignored on entry stays ignored (nohup, a shell's background job for SIGINT):
    # whoever ignored it wants stackpeel to outlive that event, parent death included
    ignored = {name for name in _ENDING if signal.getsignal(getattr(signal, name)) is signal.SIG_IGN}
    for name in _ENDING:
        if name not in ignored:
            signal.signal(getattr(signal, name), leave)
    hygiene.become_subreaper()
    if "SIGHUP" not in ignored:
        hygiene.watch_parent(lambda: os.kill(os.getpid(), signal.SIGHUP))
    # what an earlier stackpeel killed outright (SIGKILL, the OOM killer) could not remove
    hygiene.sweep_orphans()
