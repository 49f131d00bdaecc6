"""stackpeel: a root-cause doctor for GPU machine-learning software stacks.

Public API::

    from stackpeel import check, render
    report = check(python="/path/to/venv/bin/python")
    print(render(report, "text"))

    # at a job's start (every rank may call it; one per node checks):
    require("triton.kernel_launch", "kernels.fla")   # raises StackError with the root cause
"""

__version__ = "0.1.0"

from .engine import TargetError, check  # noqa: E402
from .model import (  # noqa: E402
    CheckResult,
    Diagnosis,
    ExitCode,
    Finding,
    Remedy,
    Report,
    Severity,
    Status,
)
from .preflight import StackError, require  # noqa: E402
from .render import render  # noqa: E402

__all__ = sorted([
    "CheckResult",
    "Diagnosis",
    "ExitCode",
    "Finding",
    "Remedy",
    "Report",
    "Severity",
    "StackError",
    "Status",
    "TargetError",
    "__version__",
    "check",
    "render",
    "require",
])
