"""System layer: what machine, distro, libc and container the stack runs in."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

from .. import facts as _facts
from ..model import Severity
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


# --------------------------------------------------------------------------- file-size limit

MIB = 1 << 20
#: under this file-size limit no model checkpoint, downloaded weight file or compiled extension fits
#: (tens of MB and more; Triton's small launchers and cubins still do: at 1 MiB the CPU machine's
#: Triton build passed); above it, only files larger than the limit fail (a 7B model's shard is GBs)
FSIZE_TOOLS_MIN = 64 * MIB

#: how a write past the limit reads: EFBIG in Python (which ignores SIGXFSZ) or a tool's strerror
_EFBIG = re.compile(r"\[Errno 27\]|File too large|\bEFBIG\b|File size limit exceeded")
#: SIGXFSZ on Linux: a program that does not ignore it is killed by it
SIGXFSZ = 25


def _size_text(n: Optional[int]) -> str:
    if n is None:
        return "unlimited"
    for unit, size in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _raise_to(soft: int, hard: Optional[int]) -> Optional[str]:
    """What the job may raise its soft limit to itself, in the 1024-byte blocks of bash's
    ``ulimit -f``; None (the command is left out) where the hard limit is no higher."""
    if hard is None:
        return "unlimited"
    return str(hard // 1024) if hard > soft else None


class FileSizeLimit(Check):
    """The file-size limit (RLIMIT_FSIZE, ``ulimit -f``) the job inherits. Unlimited by default;
    any limit was set by someone (a shell profile, a batch system copying the submitting shell's
    limits, ``docker run --ulimit fsize=``): a write past it fails with EFBIG. Fails under
    :data:`FSIZE_TOOLS_MIN` (no checkpoint, weight file or compiled extension fits), warns above it
    (files larger than the limit cannot be written)."""

    id = "system.file_size_limit"
    title = "File-size limit (ulimit -f) for checkpoints, caches and builds"
    layer = "system"
    codes = ("file-size-limit",)
    facts = _facts.SystemFileSizeLimitFacts
    probe = "system.file_size_limit"
    timeout = 15.0
    #: every probe starts under it (stackpeel raises its own soft limit to the hard one for its report,
    #: cache and probe inputs, and gives every probe the user's back: runner/child.own_fsize)
    limits_every_probe = True

    def death_params(self, failure: Any, ctx: Any) -> Optional[Dict[str, Any]]:
        """The finding's parameters when a probe that gave no answer ran into the file-size limit the
        probe ran under (``target["fsize"]``, the user's, read where stackpeel started): EFBIG in its
        words, or killed by SIGXFSZ, while that limit is finite. None otherwise (EFBIG under no limit
        is a file system's largest file, which this check does not measure)."""
        soft, hard = (list(ctx.target.get("fsize") or ()) + [None, None])[:2]
        if not isinstance(soft, int) or soft < 0:
            return None
        if getattr(failure, "reason", "") in ("evaluate-exception", "facts-shape"):
            return None  # stackpeel's own fault, not the probe's death
        text = f"{getattr(failure, 'stderr_tail', '') or ''}\n{getattr(failure, 'detail', '') or ''}"
        if not _EFBIG.search(text) and getattr(failure, "signal", None) != SIGXFSZ:
            return None
        hard = hard if isinstance(hard, int) and hard >= 0 else None
        error = (getattr(failure, "detail", "") or "").strip().splitlines()[:1] or ["no answer"]
        return dict(limit=_size_text(soft), hard=_size_text(hard), raise_to=_raise_to(soft, hard), error=error[0],
                    evidence=f"getrlimit(RLIMIT_FSIZE) where stackpeel started: ({soft}, {_size_text(hard)})\n"
                             f"{text.strip()}")

    # Check.on_failure and Check.explain_death turn death_params into findings: its own probe (each
    # probe writes its answer to a file under the user's limit; a hard limit this low refuses
    # stackpeel's own input files too) blocking,
    # another check's an informational note that nests it under this check

    def evaluate(self, facts, ctx):
        soft, hard = facts["soft"], facts["hard"]
        summary = f"file-size soft limit {_size_text(soft)}, hard {_size_text(hard)}"
        if soft is None:
            return ctx.ok(summary)
        evidence = f"getrlimit(RLIMIT_FSIZE) = ({soft}, {_size_text(hard)})"
        if soft < FSIZE_TOOLS_MIN:
            return ctx.verdict(summary, ctx.finding("file-size-limit", "tools", evidence=evidence,
                                                    limit=_size_text(soft), hard=_size_text(hard),
                                                    raise_to=_raise_to(soft, hard)))
        return ctx.verdict(summary, ctx.finding("file-size-limit", "checkpoints", severity=Severity.DEGRADED,
                                                evidence=evidence, limit=_size_text(soft),
                                                hard=_size_text(hard), raise_to=_raise_to(soft, hard)))

