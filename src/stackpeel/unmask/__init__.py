"""Unmask the errors that libraries swallow.

Command line: ``stackpeel run -- python train.py`` (see :mod:`.cli` and docs/run.md).

Python API, for programs that cannot be launched through the command line::

    import stackpeel.unmask

    with stackpeel.unmask.watch() as w:
        import fla                      # anything: imports, a model forward...
    print(w.report())                   # the ranked text report
    w.report().to_dict()                # the same as JSON-ready data

    stackpeel.unmask.install()          # monitor the rest of the process; report at exit
    report = stackpeel.unmask.run(["python", "train.py"])   # what `stackpeel run` does

``python -m stackpeel.unmask.auto script.py ARGS`` (or ``-m module ARGS``) runs a program
in-process under the monitor; ``import stackpeel.unmask.auto`` installs it from inside.

The pieces: :mod:`.monitor` (stdlib-only code that runs in the target interpreter),
:mod:`.launcher` (runs a command with the monitor injected), :mod:`.report` (merges,
links and ranks records), :mod:`.render` (text and JSON).
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Dict, Iterable, Optional, Sequence

from .monitor import Monitor
from .report import RunReport, build_report

__all__ = sorted(["Monitor", "RunReport", "Watch", "install", "run", "watch"])


class Watch:
    """Monitors this process between :meth:`start` and :meth:`stop` (or a ``with`` block).

    Python >= 3.12 uses sys.monitoring (all threads). Older Pythons use a trace
    function for the current thread and threads started later; it does not start when a
    debugger or coverage tool already traces the process (``report().notes`` says so).
    """

    def __init__(self, include: Iterable[str] = (), exclude: Iterable[str] = (), show_all: bool = False):
        self.monitor = Monitor({"include": list(include), "exclude": list(exclude), "journal": False})
        self.show_all = show_all

    def start(self) -> "Watch":
        self.monitor.start()
        return self

    def stop(self) -> "Watch":
        self.monitor.stop()
        return self

    def __enter__(self) -> "Watch":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def record(self) -> Dict[str, Any]:
        """The raw record (what the monitor saw), as JSON-ready data."""
        return self.monitor.record()

    def report(self, show_all: Optional[bool] = None, returncode: Optional[int] = None) -> RunReport:
        """The ranked report; ``str()`` of it is the text rendering."""
        rec = self.record()
        return build_report([rec], show_all=self.show_all if show_all is None else show_all,
                            duration=rec.get("duration"), returncode=returncode, main_pid=os.getpid())


def watch(include: Iterable[str] = (), exclude: Iterable[str] = (), show_all: bool = False) -> Watch:
    """A :class:`Watch`, to use as a context manager: ``with watch() as w: ...``."""
    return Watch(include, exclude, show_all)


def install(output: Optional[str] = None, format: str = "text", show_all: bool = False,
            include: Iterable[str] = (), exclude: Iterable[str] = ()) -> Watch:
    """Monitor the rest of this process and write the report when it exits.

    The report goes to standard error, or to ``output`` (a path; ``$STACKPEEL_UNMASK_REPORT``
    when not given). Returns the running :class:`Watch`.
    """
    w = Watch(include, exclude, show_all).start()
    output = output or os.environ.get("STACKPEEL_UNMASK_REPORT") or None

    def _at_exit() -> None:
        from .render import render
        try:
            rec = w.monitor.record(final=True)
            w.stop()
            rc = 1 if rec.get("uncaught") else 0
            se = rec.get("system_exit")
            if se is not None and not rec.get("uncaught"):
                code = se.get("code")
                rc = code if isinstance(code, int) else (0 if code is None else 1)
            rep = build_report([rec], command=list(sys.argv), returncode=rc, duration=rec.get("duration"),
                               main_pid=os.getpid(), show_all=show_all)
            text = render(rep, format)
            if output:
                with open(output, "w", encoding="utf-8") as f:
                    f.write(text)
            else:
                sys.stderr.write(text)
                sys.stderr.flush()
        except Exception as exc:  # never turn a clean exit into a crash
            try:
                sys.stderr.write(f"stackpeel: could not write the unmask report: {exc}\n")
            except Exception:
                pass

    atexit.register(_at_exit)
    return w


def run(argv: Sequence[str], show_all: bool = False, include: Iterable[str] = (),
        exclude: Iterable[str] = (), env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None) -> RunReport:
    """Run a command as ``stackpeel run`` does and return its report (the exit status is
    in ``report.exit``)."""
    from .launcher import launch

    res = launch(list(argv), options={"include": list(include), "exclude": list(exclude)}, env=env, cwd=cwd)
    target = {"argv0": res.target.argv0, "path": res.target.path, "kind": res.target.kind,
              "interpreter": res.target.interpreter}
    return build_report(res.records, command=list(argv), target=target, returncode=res.returncode,
                        duration=res.duration, crash_dumps=res.crash_dumps, main_pid=res.main_pid,
                        show_all=show_all)
