"""Isolation, parallelism and timeouts: see :mod:`.scheduler` and :mod:`.child`.

The names below are imported on first use: ``stackpeel check`` starts the interpreter that
imports torch (:mod:`.zygote`) before it pays for the scheduler's imports (the checks' base,
the plugins)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .child import PROBES_DIR, ProbeAnswer, run_probe
    from .scheduler import run_checks, run_one

__all__ = ["PROBES_DIR", "ProbeAnswer", "run_checks", "run_one", "run_probe"]

_HOME = {"PROBES_DIR": "child", "ProbeAnswer": "child", "run_probe": "child", "run_checks": "scheduler",
         "run_one": "scheduler"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value
