"""Torch layer: is this PyTorch a CUDA build, does it initialise CUDA, does it have kernels
for these GPUs, and does one real kernel run.

torch is imported only in the probe's child process (once: it is the slowest import of
the whole run). The rules below mirror torch's own: ``DEVICE_REQUIREMENT`` in
``torch/cuda/__init__.py`` for which compiled architecture runs on which GPU, and CUDA's
major-version compatibility for driver versus wheel.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable, List, Optional, Sequence, Tuple

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, Verdict
from .cuda import cuda_version_text, limit_evidence, limit_params
from .multi_gpu import (CONTEXT_DENIED, descriptor_shortage, exclusive_evidence, exclusive_gpus, failure_note,
                        limit_note, other_causes)

#: torch's DEVICE_REQUIREMENT (2.11-2.13): compiled code cc -> ("interval", start, excluded) or
#: ("set", members). An interval covers the same major with minor >= start's minor.
DEVICE_REQUIREMENT = {
    50: ("interval", 50, {53}), 52: ("interval", 52, {53}), 53: ("set", {53}),
    60: ("interval", 60, {62}), 61: ("interval", 61, {62}), 62: ("set", {62}),
    70: ("interval", 70, {72}), 72: ("set", {72}), 75: ("interval", 75, set()),
    80: ("interval", 80, {87}), 86: ("interval", 86, {87}), 87: ("set", {87}),
    89: ("interval", 89, set()), 90: ("interval", 90, set()),
    100: ("interval", 100, {101}), 101: ("set", {101, 110}), 103: ("interval", 103, set()),
    110: ("interval", 110, set()), 120: ("interval", 120, set()), 121: ("interval", 121, set()),
}

#: PyTorch wheel indexes: (minimum cuDriverGetVersion, index tag, compute capabilities built for).
#: Newest first. cu130 needs driver R580+, cu128 R570+, cu126 R560+.
WHEEL_INDEXES: Tuple[Tuple[int, str, Tuple[int, ...]], ...] = (
    (13000, "cu130", (75, 80, 86, 90, 100, 110, 120)),
    (12080, "cu128", (70, 75, 80, 86, 90, 100, 120)),
    (12060, "cu126", (50, 60, 70, 75, 80, 86, 90)),
    (12040, "cu124", (50, 60, 70, 75, 80, 86, 90)),
    (11080, "cu118", (50, 60, 70, 75, 80, 86, 90)),
)


def arch_cc(arch: str) -> Optional[int]:
    """'sm_90' -> 90, 'sm_100a' -> 100, 'compute_120' -> 120 (torch's _extract_arch_version)."""
    m = re.match(r"^(?:sm|compute)_(\d+)[af]?$", arch.strip())
    return int(m.group(1)) if m else None


def code_runs_on(code_cc: int, device_cc: int) -> bool:
    rule = DEVICE_REQUIREMENT.get(code_cc)
    if rule is None:  # unknown to torch: same major, minor >= (what torch assumes too)
        return device_cc // 10 == code_cc // 10 and device_cc % 10 >= code_cc % 10
    if rule[0] == "set":
        return device_cc in rule[1]
    _, start, excluded = rule
    return device_cc not in excluded and device_cc // 10 == start // 10 and device_cc % 10 >= start % 10


def covering_arch(arch_list: Iterable[str], cc: str) -> Optional[str]:
    """The entry of ``arch_list`` whose code runs on a GPU of compute capability ``cc`` ('9.0'), by
    torch's rule; None if none does."""
    major, _, minor = cc.partition(".")
    device = int(major) * 10 + int(minor or 0)
    for arch in arch_list:
        code = arch_cc(arch)
        if code is not None and code_runs_on(code, device):
            return arch
    return None


def ptx_fallback(arch_list: Iterable[str], cc: str) -> Optional[str]:
    """A PTX entry (compute_XY) the driver could JIT for ``cc`` although torch's rule says no."""
    major, _, minor = cc.partition(".")
    device = int(major) * 10 + int(minor or 0)
    for arch in arch_list:
        if arch.startswith("compute_"):
            code = arch_cc(arch)
            if code is not None and code <= device:
                return arch
    return None


def torch_index_for(driver_version: Optional[int], ccs: Sequence[str] = ()) -> Optional[str]:
    """The newest PyTorch wheel index that this driver can run and whose build covers every GPU."""
    if not isinstance(driver_version, int):
        return None
    for minimum, tag, built in WHEEL_INDEXES:
        if driver_version < minimum:
            continue
        archs = [f"sm_{c}" for c in built]
        if all(covering_arch(archs, cc) for cc in ccs):
            return tag
    return None


def _major(version: Optional[str]) -> Optional[int]:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def _matching(warnings: Sequence[str], *needles: str) -> List[str]:
    return [w for w in warnings if any(n in w for n in needles)]


class TorchCuda(Check):
    """torch in the target interpreter: a CUDA build, is_available() (with torch's own warnings),
    the driver's CUDA major against the wheel's, compiled architectures against each GPU, and a
    one-element kernel."""

    id = "torch.cuda"
    title = "PyTorch CUDA"
    layer = "torch"
    codes = (
        "torch-not-installed",
        "torch-import-failed",
        "torch-cpu-only-build",
        "driver-too-old-for-torch",
        "torch-cuda-unavailable",
        "torch-arch-not-supported",
        "torch-gpu-op-failed",
        "address-space-limit",
        "open-files-limit-low",
    )
    facts = _facts.TorchCudaFacts
    # runtime_libs.loaded: a shadowed or second copy of a CUDA library is a root cause torch's failures nest under;
    # config.module_origins: a stray torch.py or torch/ earlier on sys.path;
    # multi_gpu.open_files: a CUDA context needs descriptors (the limit its failures may be)
    requires = ("cuda.driver_api", "config.module_origins", "runtime_libs.loaded", "multi_gpu.open_files")
    probe = "torch_layer.torch_cuda"
    preload = ("torch",)  # forked from the interpreter that imported torch once (runner/zygote.py)
    probe_needs = ()  # reads nothing from its requirements: start at once
    timeout = 90.0

    def on_failure(self, failure, ctx):
        # under `ulimit -n 20` on an H200 the probe's context took every descriptor (exit 70, no answer)
        return failure_note(ctx, failure, "torch's CUDA probe")

    def evaluate(self, facts, ctx):
        verdict = self._judge(facts, ctx)
        # passed on to the checks that require this one (Triton, peer copies, NCCL: see exclusive_gpus)
        return dataclasses.replace(verdict, facts=dict(
            verdict.facts, compute_modes=ctx.dep("cuda.driver_api").get("compute_modes") or []))

    def _judge(self, facts, ctx):
        drv = ctx.dep("cuda.driver_api")
        dv = drv.get("driver_version")
        driver_ccs = [d["cc"] for d in drv.get("devices") or [] if d.get("cc")]
        python = ctx.target.get("python") or "this interpreter"
        index = torch_index_for(dv, driver_ccs)
        params = {"torch_index": index}
        if not facts["installed"]:
            return Verdict(Status.SKIP, f"torch is not installed in {python}", (ctx.finding(
                "torch-not-installed", python=python, **params),), {})
        if facts["import_error"]:
            e = facts["import_error"]
            return ctx.verdict(f"import torch fails: {e.get('type')}", ctx.finding(
                "torch-import-failed", torch_version=facts["dist_version"] or "", origin=facts["origin"],
                error=f"{e.get('type')}: {e.get('message')}",
                evidence=e.get("traceback") or e.get("message") or "", **params))
        version = facts["version"]
        cuda = facts["cuda"]
        if facts["hip"]:
            return ctx.skip(f"torch {version} is a ROCm (HIP {facts['hip']}) build: the NVIDIA checks do not apply")
        params.update(torch_version=version, torch_cuda=cuda, driver_cuda=cuda_version_text(dv), driver_version=dv)
        if not cuda:
            return ctx.verdict(f"torch {version} is a CPU-only build", ctx.finding(
                "torch-cpu-only-build", [None, "driver" if dv and index else "no-driver"],
                evidence=f"torch.__version__ = {version!r}, torch.version.cuda = None, path = {facts['path']}",
                **params))
        findings = []
        available = facts["available"]
        warnings = facts["warnings"] or []
        tmajor, dmajor = _major(cuda), (dv // 1000 if isinstance(dv, int) else None)
        if tmajor is not None and dmajor is not None and dmajor < tmajor:
            findings.append(ctx.finding(
                "driver-too-old-for-torch", [None, "with-index" if index else "upgrade"], available=bool(available),
                evidence="\n".join(_matching(warnings, "too old", "driver")) or
                         f"cuDriverGetVersion = {dv}; torch.version.cuda = {cuda}", **params))
        if not available:
            if not findings:
                err = (facts["errors"] or {}).get("is_available")
                sentences = ["raised" if err else ("warning" if warnings else "silent")]
                if ctx.dep_status.get("cuda.driver_api") not in (None, Status.PASS, Status.WARN):
                    sentences.append("driver-broken")
                findings.append(ctx.finding(
                    "torch-cuda-unavailable", sentences, said=warnings[0].splitlines()[0] if warnings else None,
                    error=f"{err.get('type')}: {(err.get('message') or '').strip()}" if err else None,
                    evidence="\n".join(warnings) or (err or {}).get("traceback", "") or "no warning from torch",
                    **params))
                findings.extend(self._limit(ctx, "torch.cuda.is_available()", err, *warnings))
            return ctx.verdict(f"torch {version} (CUDA {cuda}): CUDA not available", *findings)
        arch = facts["arch_list"] or facts["built_arch_flags"] or []
        devices = facts["devices"] or []
        for dev in devices:
            cc = dev.get("cc")
            if not cc or not arch:
                continue
            if covering_arch(arch, cc):
                continue
            ptx = ptx_fallback(arch, cc)
            cover_index = torch_index_for(dv, [cc])
            sentences = [None, "ptx" if ptx else "no-kernel"] + (["covered"] if cover_index else [])
            sev = Severity.DEGRADED if ptx else Severity.BLOCKING
            findings.append(ctx.finding(
                "torch-arch-not-supported", sentences, severity=sev, gpu=dev.get("index"), name=dev.get("name"),
                cc=cc, arch=" ".join(arch), ptx=ptx, torch_version=version,
                evidence="\n".join(_matching(warnings, "compute capability", "not compatible", "CUDA capability"))
                         or f"get_arch_list() = {arch}; get_device_capability({dev.get('index')}) = {cc}",
                torch_index=cover_index))
        if facts["op_ok"] is False:
            err = (facts["errors"] or {}).get("op") or {}
            if err:
                first = (err.get("message") or "").splitlines()
                outcome = f"raised {err.get('type')}: {first[0] if first else ''}"
            else:
                outcome = f"returned {facts['op_result']!r} instead of 2"
            limit = (drv.get("rlimit_as") or {}).get("soft")
            if limit is not None and "out of memory" in (err.get("message") or ""):
                # a one-element tensor cannot exhaust a GPU: under `ulimit -v` the context does not fit
                # in what torch's own libraries left of the address space (an H200 under 16 GiB: cuInit
                # and a bare context fit, torch's first tensor does not)
                findings.append(ctx.finding(
                    "address-space-limit", "torch", outcome=outcome,
                    evidence="\n".join((err.get("traceback") or err.get("message") or "",
                                         limit_evidence(drv["rlimit_as"]))),
                    **limit_params(drv["rlimit_as"])))
            else:
                evidence = err.get("traceback") or err.get("message") or ""
                exclusive = exclusive_gpus(ctx)
                if exclusive and CONTEXT_DENIED.search(f"{err.get('message') or ''}"):
                    evidence = "\n".join(filter(None, (evidence, exclusive_evidence(exclusive))))
                findings.append(ctx.finding("torch-gpu-op-failed", outcome=outcome, evidence=evidence, **params))
                findings.extend(self._limit(ctx, "torch's first tensor on the GPU", err))
        summary = (f"torch {version} (CUDA {cuda}): {len(devices)} GPU(s) {_gpu_list(devices)}; "
                   f"arch list {' '.join(arch) or 'empty'}")
        if facts["op_ok"]:
            summary += "; test kernel ran"
        return ctx.verdict(summary, *findings)

    @staticmethod
    def _limit(ctx, what, *errors):
        """open-files-limit-low beside the failure, when a low open-files limit explains it."""
        limits = ctx.dep("multi_gpu.open_files")
        short = descriptor_shortage(limits, *errors, ruled_out=other_causes(ctx))
        return [limit_note(ctx, limits, what, short)] if short else []


def _gpu_list(devices) -> str:
    return ", ".join(f"{d.get('name')} (cc {d.get('cc')})" for d in devices)
