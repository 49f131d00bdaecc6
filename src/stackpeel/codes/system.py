"""Finding codes of the system layer."""

from ..model import Severity
from . import Code

CODES = (
    Code(
        code="libc-unsupported",
        layer="system",
        severity=Severity.BLOCKING,
        title="C library cannot run PyTorch/Triton wheels",
        meaning="The system C library is not one that PyTorch and Triton ship wheels for "
                "(glibc 2.28 or newer). pip either refuses the wheels or installs ones that cannot load.",
        fix="Use a glibc-based image of a current distro (Debian 12, Ubuntu 22.04+, RHEL 9) for GPU work.",
    ),
    Code(
        code="libstdcxx-too-old",
        layer="system",
        severity=Severity.BLOCKING,
        title="libstdc++ is older than a compiled extension needs",
        meaning="A compiled extension (torch, a kernel library, a conda or pip binary) was linked against a newer "
                "libstdc++ than the one the dynamic loader finds first, so importing it fails with "
                "`version 'GLIBCXX_3.4.NN' not found`. Often a conda environment's or an old system's "
                "libstdc++.so.6 shadows a newer one.",
        fix="Put a libstdc++ at least as new as the extension needs first on the loader's path: upgrade the "
            "system's, or inside conda install a newer one from conda-forge; as a stopgap, point LD_PRELOAD at the "
            "newer library. `strings $(gcc -print-file-name=libstdc++.so.6) | grep GLIBCXX` lists what one provides.",
        packages={"apt": "libstdc++6", "dnf": "libstdc++", "conda": "-c conda-forge libstdcxx-ng"},
        links=("https://github.com/pytorch/pytorch/issues/88882",),
    ),
)
