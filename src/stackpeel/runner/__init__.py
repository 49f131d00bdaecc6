"""Isolation, parallelism and timeouts: see :mod:`.scheduler` and :mod:`.child`."""

from .child import PROBES_DIR, ProbeAnswer, run_probe
from .scheduler import run_checks, run_one

__all__ = ["PROBES_DIR", "ProbeAnswer", "run_checks", "run_one", "run_probe"]
