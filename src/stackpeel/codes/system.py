"""Finding codes of the system layer."""

from ..model import Severity
from . import Code

CODES = (
    Code(
        code="libc-unsupported",
        layer="system",
        severity=Severity.BLOCKING,
        title="C library cannot run PyTorch/Triton wheels",
        meaning="The system C library ({observed}) is not one that PyTorch and Triton ship wheels for "
                "(glibc 2.28 or newer). pip either refuses the wheels or installs ones that cannot load.",
        fix="Use a glibc-based image of a current distro (Debian 12, Ubuntu 22.04+, RHEL 9) for GPU work.",
    ),
)
