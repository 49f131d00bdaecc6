"""System layer: what machine, distro, libc and container the stack runs in."""

from __future__ import annotations

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
    probe = "system.platform_facts"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        where = facts.get("distro") or "unknown distro"
        summary = f"{where}, {facts.get('arch')}, container: {facts.get('container')}"
        findings = []
        libc, ver = facts.get("libc"), facts.get("libc_version")
        if libc == "musl":
            findings.append(ctx.finding(
                "libc-unsupported",
                message="The C library is musl; PyTorch and Triton publish wheels for glibc (manylinux) only, "
                "so pip cannot install them here, or installs builds that fail to load.",
                observed="musl"))
        elif libc == "glibc" and version_tuple(ver) and version_tuple(ver)[:2] < MIN_GLIBC:
            findings.append(ctx.finding(
                "libc-unsupported",
                message=f"glibc {ver} is older than {'.'.join(map(str, MIN_GLIBC))}, the oldest that current "
                "PyTorch and Triton wheels (manylinux_2_28) support; they will not install or load.",
                observed=f"glibc {ver}"))
        return ctx.verdict(summary, *findings)
