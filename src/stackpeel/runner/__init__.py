"""Isolation, parallelism and timeouts: see :mod:`.scheduler` and :mod:`.child`.

The names below are imported on first use: ``stackpeel check`` starts the interpreter that
imports torch (:mod:`.zygote`) before it pays for the scheduler's imports (the checks' base,
the plugins)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .child import PROBES_DIR, ProbeAnswer, run_probe
    from .scheduler import run_checks, run_one

__all__ = ["PROBES_DIR", "ProbeAnswer", "run_checks", "run_one", "run_probe"]

_HOME = {"PROBES_DIR": "child", "ProbeAnswer": "child", "run_probe": "child", "run_checks": "scheduler",
         "run_one": "scheduler"}


from .._lazy import exports as _exports

__getattr__ = _exports(__name__, _HOME, globals())
