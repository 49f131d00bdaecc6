"""Monitor a program from inside its own process.

``import stackpeel.unmask.auto`` starts the monitor and writes the report at exit
(to standard error, or to ``$STACKPEEL_UNMASK_REPORT``). Also works through
``PYTHONSTARTUP`` or a ``.pth`` file.

``python -m stackpeel.unmask.auto script.py ARGS`` or
``python -m stackpeel.unmask.auto -m module ARGS`` runs the program in this process
under the monitor (``sys.argv`` becomes what the program would have seen).
``stackpeel run`` is preferred where it can be used: it needs no stackpeel in the target
environment and leaves the process exactly as it was.
"""

from __future__ import annotations

import os
import runpy
import sys

from . import install


def _main(argv) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        raise SystemExit(0 if argv else 2)
    install(show_all=bool(os.environ.get("STACKPEEL_UNMASK_ALL")))
    if argv[0] == "-m":
        if len(argv) < 2:
            raise SystemExit("python -m stackpeel.unmask.auto -m MODULE [ARGS]")
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    _main(sys.argv[1:])
else:
    install(show_all=bool(os.environ.get("STACKPEEL_UNMASK_ALL")))
