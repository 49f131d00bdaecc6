"""stackpeel: a root-cause doctor for GPU machine-learning software stacks.

Public API::

    from stackpeel import check, render
    report = check(python="/path/to/venv/bin/python")
    print(render(report, "text"))

    # at a job's start (every rank may call it; one per node checks):
    require("triton.kernel_launch", "kernels.fla")   # raises StackError with the root cause
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import TargetError, check
    from .model import CheckResult, Diagnosis, ExitCode, Finding, Remedy, Report, Severity, Status
    from .preflight import StackError, require

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

#: where each public name lives; imported on first use, so that ``python -m stackpeel check``
#: starts the interpreter that imports torch before it imports the registry and renderers
_HOME = {"TargetError": "engine", "check": "engine", "StackError": "preflight", "require": "preflight",
         "CheckResult": "model", "Diagnosis": "model", "ExitCode": "model", "Finding": "model",
         "Remedy": "model", "Report": "model", "Severity": "model", "Status": "model"}


from ._lazy import exports as _exports

# ``render`` is bound now, not on first use: the function shares its name with the subpackage
# ``stackpeel.render``, and importing any module of that subpackage (``stackpeel.render.text``)
# sets the package attribute to the subpackage, so a lazy ``render`` would turn into a module.
# The import costs only stackpeel.model, which every command imports anyway.
from .render import render  # noqa: E402

__getattr__ = _exports(__name__, _HOME, globals())


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
