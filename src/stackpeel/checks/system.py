"""System layer: what machine, distro, libc and container the stack runs in."""

from __future__ import annotations

from .. import facts as _facts
from .base import Check, version_tuple

#: oldest glibc that current PyTorch/Triton manylinux_2_28 wheels accept
MIN_GLIBC = (2, 28)


class Platform(Check):
    """Distro, CPU architecture, libc, container kind and user. Fails when the libc
    cannot run PyTorch and Triton wheels (musl, or glibc older than 2.28)."""

    id = "system.platform"
    title = "Operating system, libc and container"
    layer = "system"
    codes = ("libc-unsupported",)
    facts = _facts.SystemPlatformFacts
    probe = "system.platform_facts"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        where = facts["distro"] or "unknown distro"
        summary = f"{where}, {facts['arch']}, container: {facts['container']}"
        findings = []
        libc, ver = facts["libc"], facts["libc_version"]
        if libc == "musl":
            findings.append(ctx.finding("libc-unsupported", "musl"))
        elif libc == "glibc" and version_tuple(ver) and version_tuple(ver)[:2] < MIN_GLIBC:
            findings.append(ctx.finding("libc-unsupported", "old-glibc", libc_version=ver,
                                        min_glibc=".".join(map(str, MIN_GLIBC))))
        return ctx.verdict(summary, *findings)
