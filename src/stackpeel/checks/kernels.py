"""Kernel libraries on top of Triton and torch: flash-linear-attention, causal-conv1d, and
which implementation transformers binds for gated-delta-net layers (FAILURE_MODES.md
sections 3, 4, 5). Each probe recovers what the library swallowed."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Mapping, Optional

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, Verdict, version_tuple
from .multi_gpu import failure_note
from .triton_layer import compiler_failure, exc_line, exc_text

#: what FLA exposes when its Triton probe succeeded
GPU_PLATFORMS = ("cuda", "hip", "xpu", "musa", "npu")


def _warning_lines(warnings: List[Mapping[str, Any]]) -> str:
    return "\n".join(f"{w.get('file')}:{w.get('line')}: {w.get('category')}: {w.get('message')}" for w in warnings)


class Fla(Check):
    """flash-linear-attention imports and detected the GPU. FLA runs Triton's driver at
    import and, on any exception, warns 'roll back to CPU' and carries on with
    ``device_platform == 'cpu'``; this check imports ``fla.utils`` with warnings recorded and a
    fresh Triton cache, then calls the same entry point FLA called
    (``triton.runtime.driver.active.get_current_target()``) to recover the exception FLA
    swallowed."""

    id = "kernels.fla"
    title = "flash-linear-attention detects the GPU"
    layer = "kernels"
    codes = ("fla-cpu-fallback", "fla-missing-triton", "fla-import-failed", "open-files-limit-low")
    facts = _facts.KernelsFlaFacts
    # multi_gpu.open_files: named only when the probe died of it (on_failure; under `ulimit -n 20`
    # on an H200 it exited 70 without an answer, as torch's did)
    # torch.cuda: read by on_failure (an exclusive-mode GPU or none is no shortage); already a
    # requirement through triton.kernel_launch, and probe_needs is empty, so the probe starts as soon
    requires = ("triton.kernel_launch", "multi_gpu.open_files", "torch.cuda")
    probe = "kernels.fla_facts"
    preload = ("torch", "triton")
    probe_needs = ()  # the verdict compares with the lower layers; the probe needs none of them
    timeout = 180.0

    def on_failure(self, failure, ctx):
        return failure_note(ctx, failure, "FLA's probe")

    def evaluate(self, facts, ctx):
        if not facts["installed"]:
            return ctx.skip("flash-linear-attention is not installed")
        dists = facts["dists"] or {}
        names = " + ".join(f"{k} {v}" for k, v in dists.items()) or "fla"
        err = facts["import_error"]
        if err:
            missing = err.get("missing_module") or ""
            if missing.split(".")[0] in ("triton", "torch") or not facts["triton_installed"] \
                    or not facts["torch_installed"]:
                what = missing or ("triton" if not facts["triton_installed"] else "torch")
                return ctx.verdict(f"{names} is installed without {what}", ctx.finding(
                    "fla-missing-triton", names=names, error=exc_line(err), what=what, evidence=exc_text(err)))
            return ctx.verdict("`import fla.utils` fails", ctx.finding(
                "fla-import-failed", names=names, error=exc_line(err), evidence=exc_text(err),
                fla_dists=" ".join(dists) or "fla-core"))

        platform = facts["device_platform"]
        fallback = platform == "cpu" or bool(facts["fallback_warnings"])
        cuda = facts["cuda_available"]
        if not fallback:
            gpu = facts.get("gpu_name")
            return ctx.ok(f"{names}: device_platform={platform!r}" + (f" ({gpu})" if gpu else "")
                          + f", IS_NVIDIA={facts['IS_NVIDIA']}")

        sw = facts["swallowed"]
        warns = facts["fallback_warnings"] or []
        evidence = []
        if sw:
            evidence.append("The exception FLA swallowed, raised again by "
                            "triton.runtime.driver.active.get_current_target():\n" + exc_text(sw))
        if warns:  # last, so that a renderer showing the tail shows both texts
            evidence.append("All FLA reported at import:\n" + _warning_lines(warns))
        state = (f"device_platform={platform!r}, device={facts['device']!r}, "
                 f"device_torch_lib={facts['device_torch_lib']}, IS_NVIDIA={facts['IS_NVIDIA']}")
        severity: Optional[Severity] = None
        sentences = ["swallowed" if sw else "transient"]
        launch = ctx.dep("triton.kernel_launch")
        if sw and compiler_failure(sw) and launch.get("cache_used") == "user-copy":
            severity = Severity.DEGRADED
            sentences.append("warm-cache")
        return ctx.verdict(f"{names} fell back to CPU: {exc_line(sw) or 'transient failure at import'}",
                           ctx.finding("fla-cpu-fallback", sentences, names=names, state=state, cuda=cuda,
                                       error=exc_line(sw) if sw else None, evidence="\n\n".join(evidence),
                                       severity=severity))


class CausalConv1d(Check):
    """causal-conv1d imports with its compiled ``causal_conv1d_cuda`` extension, was built
    for the installed torch (the local version tag of prebuilt wheels names torch, CUDA
    major and C++ ABI), and, with a GPU, runs one tiny convolution checked against its
    definition."""

    id = "kernels.causal_conv1d"
    title = "causal-conv1d imports and matches torch"
    layer = "kernels"
    codes = (
        "causal-conv1d-import-failed",
        "causal-conv1d-torch-mismatch",
        "causal-conv1d-no-extension",
        "extension-arch-missing",
    )
    facts = _facts.KernelsCausalConv1dFacts
    requires = ("torch.cuda",)
    probe = "kernels.causal_conv1d_facts"
    probe_needs = ()
    timeout = 120.0

    def evaluate(self, facts, ctx):
        if not facts["installed"]:
            return ctx.skip("causal-conv1d is not installed")
        version = facts["version"] or "(no metadata)"
        torch_version = facts.get("torch_version")
        err = facts["import_error"]
        tag = facts["tag"] or {}
        built_for = (f" (its version tag says torch {tag.get('torch')}, CUDA {tag.get('cuda_major')}, "
                     f"cxx11abi {tag.get('cxx11abi')})") if tag else ""
        if facts["package"] and not facts["extension"] and (
                not err or err.get("missing_module") == "causal_conv1d_cuda" or "causal_conv1d_cuda" in
                (err.get("message") or "")):
            return ctx.verdict("causal-conv1d has no compiled extension", ctx.finding(
                "causal-conv1d-no-extension", "import-error" if err else None, version=version,
                package=facts["package"], error=exc_line(err) if err else None, evidence=exc_text(err)))
        if err and facts["undefined_symbol"]:
            sym = facts["undefined_symbol"]
            dem = facts["undefined_symbol_demangled"]
            return ctx.verdict("causal-conv1d was built for another torch", ctx.finding(
                "causal-conv1d-torch-mismatch", "symbol", symbol=f"{sym} ({dem})" if dem else sym,
                torch_version=torch_version, built_for=built_for, evidence=exc_text(err)))
        if err:
            return ctx.verdict("`import causal_conv1d` fails", ctx.finding(
                "causal-conv1d-import-failed", "import", version=version, error=exc_line(err), evidence=exc_text(err)))
        findings = []
        mismatch = self._tag_mismatch(tag, facts)
        if mismatch:
            findings.append(ctx.finding("causal-conv1d-torch-mismatch", "tag", version=version, built_for=mismatch,
                                        severity=Severity.DEGRADED))
        call = facts.get("gpu_call") or {}
        call_err = call.get("error")
        if call_err and "no kernel image" in (call_err.get("message") or ""):
            findings.append(ctx.finding("extension-arch-missing", "causal-conv1d", version=version,
                                        error=exc_line(call_err), evidence=exc_text(call_err)))
        elif call_err:
            findings.append(ctx.finding("causal-conv1d-import-failed", "gpu-call", version=version,
                                        error=exc_line(call_err), evidence=exc_text(call_err)))
        ran = (f"; a GPU call matches the definition (max abs error {call.get('max_abs_err')})"
               if call.get("ok") else "")
        return ctx.verdict(f"causal-conv1d {version} imports with torch {torch_version}{ran}", *findings)

    @staticmethod
    def _tag_mismatch(tag, facts) -> str:
        if not tag:
            return ""
        parts = []
        tv = version_tuple(facts.get("torch_version"))
        if tv and version_tuple(tag.get("torch"))[:2] != tv[:2]:
            parts.append(f"torch {tag.get('torch')} (installed: {facts.get('torch_version')})")
        cuda = version_tuple(facts.get("torch_cuda"))
        if cuda and tag.get("cuda_major") != cuda[0]:
            parts.append(f"CUDA {tag.get('cuda_major')} (torch's: {facts.get('torch_cuda')})")
        abi = facts.get("torch_cxx11abi")
        if abi is not None and tag.get("cxx11abi") is not None and bool(abi) != tag["cxx11abi"]:
            parts.append(f"cxx11abi {tag['cxx11abi']} (torch's: {abi})")
        return ", ".join(parts)


class TransformersFastPath(Check):
    """Which implementation transformers binds for its gated-delta-net functions
    (Qwen3-Next, Qwen3.5). 5.15+ wraps each function with a fallback that catches *any*
    exception from importing FLA or causal-conv1d (and, 5.17+, logs that the package 'is
    not installed'). By default the probe reads the decorators from the model module's
    source and the function from the kernel package's source, without torch; whether
    ``import fla`` / ``import causal_conv1d`` raises, and whether CUDA is there, are the
    answers of ``kernels.fla``, ``kernels.causal_conv1d`` and ``torch.cuda``, joined here.
    ``--deep`` imports the model module and reads the implementation each wrapper closed
    over. <= 5.14: reads ``is_fast_path_available`` and the module-level functions."""

    id = "kernels.transformers_fast_path"
    title = "transformers binds fast gated-delta-net kernels"
    layer = "kernels"
    codes = ("transformers-fast-path-unavailable", "transformers-fla-on-cpu")
    facts = _facts.KernelsTransformersFastPathFacts
    requires = ("kernels.fla", "kernels.causal_conv1d", "torch.cuda")
    probe = "kernels.transformers_facts"
    probe_needs = ()  # torch-free by default: the other checks' answers are joined in evaluate
    timeout = 180.0

    def evaluate(self, facts, ctx):
        if not facts["installed"]:
            return ctx.skip("transformers is not installed")
        version = facts["version"]
        module = facts["model_module"]
        if not module:
            return ctx.skip(f"transformers {version} has no gated-delta-net model (qwen3_next, qwen3_5)")
        short = module.rsplit(".", 1)[-1]
        err = facts["import_error"]
        if err:
            return ctx.verdict(f"importing {short} fails", ctx.finding(
                "transformers-fast-path-unavailable", "import", module=module, version=version, error=exc_line(err),
                evidence=exc_text(err), severity=Severity.BLOCKING,
                missing_packages=self._packages_for(["fla", "causal_conv1d"], facts)))
        if facts.get("bindings_from") == "source" and facts.get("source_bindings") is not None:
            return self._joined(facts, version, short, ctx)
        cuda = facts["cuda_available"]
        bindings = facts["bindings"] or []
        if bindings:
            return self._modern(facts, bindings, cuda, version, short, ctx)
        legacy = facts["legacy"]
        if legacy is not None:
            return self._legacy(facts, legacy, cuda, version, short, ctx)
        return ctx.skip(f"transformers {version}: {short} has no recognisable fast-path bindings")

    #: the check whose probe imports each package the way transformers' fallback does
    IMPORTED_BY = {"fla": "kernels.fla", "causal_conv1d": "kernels.causal_conv1d"}

    def _joined(self, facts, version, short, ctx):
        """The default mode: the bindings the probe read from the sources, each completed
        with whether ``import <package>`` raises (the answer of the check that imports it)
        and CUDA from ``torch.cuda``; the result carries them as ``bindings`` and
        ``cuda_available``, the keys the import path fills."""
        bindings, unknown = [], []
        for s in facts["source_bindings"]:
            entry = {"attr": s.get("attr"), "func_name": s.get("func_name"), "package": s.get("package"),
                     "predicted": not s.get("resolved")}
            impl, reason = s.get("implementation"), s.get("reason")
            if not s.get("resolved"):
                known, reason = self._import_outcome(s.get("package"), ctx)
                if not known:
                    unknown.append(s.get("package"))
                    continue
                entry["joined_from"] = self.IMPORTED_BY.get(s.get("package"))
                impl = None if reason else impl
            entry.update(implementation=impl or f"{facts['model_module']}.{s.get('attr')}", reference=impl is None,
                         implementation_module=(impl.rsplit(".", 1)[0] if impl else facts["model_module"]))
            if impl is None:
                entry["reason"] = reason
            bindings.append(entry)
        cuda_facts = ctx.dep("torch.cuda")
        cuda = cuda_facts.get("available") if "available" in cuda_facts else None
        if unknown:
            whose = ", ".join(sorted({self.IMPORTED_BY.get(p, p) for p in unknown}))
            return Verdict(Status.BLOCKED, f"not known: whether transformers binds {', '.join(sorted(set(unknown)))} "
                                           f"is the answer of {whose}, which could not complete",
                           (), {"bindings": bindings, "cuda_available": cuda})
        if cuda is None and bindings:  # whether a binding is right depends on CUDA: say nothing wrong
            return Verdict(Status.BLOCKED, "not known: whether the bindings are the right ones depends on "
                                           "torch.cuda's answer, which could not complete",
                           (), {"bindings": bindings, "cuda_available": None})
        if not bindings:
            return ctx.skip(f"transformers {version}: {short} has no recognisable fast-path bindings")
        verdict = self._modern(facts, bindings, cuda, version, short, ctx)
        return dataclasses.replace(verdict, facts=dict(verdict.facts, bindings=bindings, cuda_available=cuda))

    def _import_outcome(self, package, ctx):
        """(known, the exception ``import package`` raises or None), from the check that
        imports it; known is False when that check produced no facts (it crashed or timed out)."""
        dep = ctx.dep(self.IMPORTED_BY.get(package, ""))
        if package == "fla":
            err = dep.get("import_deps_error") or dep.get("torch_error") or dep.get("import_error")
            if err is None and "import_deps_error" not in dep:  # no answer (crashed, or an older probe's facts)
                return False, None
            return True, (dict(err, module=err.get("module") or "fla") if err else None)
        if package == "causal_conv1d":
            if "imported" not in dep:
                return False, None
            err = dep.get("import_error")
            return True, (dict(err, module=err.get("module") or "causal_conv1d") if err else None)
        return False, None

    @staticmethod
    def _packages_for(packages, facts) -> str:
        out = []
        if "fla" in packages:
            out.append("flash-linear-attention")
        if "causal_conv1d" in packages:
            out.append("--no-build-isolation causal-conv1d")
        return " ".join(out)

    @staticmethod
    def _grouped(bindings) -> str:
        """``FLA for a, b; torch reference for c, d`` (one line for summaries)."""
        groups = {}
        for b in bindings:
            key = "torch reference" if b.get("reference") else (b.get("implementation_module") or "?").split(".")[0]
            groups.setdefault(key, []).append(b.get("func_name"))
        return "; ".join(f"{k} for {', '.join(v)}" for k, v in groups.items())

    def _modern(self, facts, bindings, cuda, version, short, ctx):
        listing = ", ".join(
            f"{b.get('func_name')} -> {'torch reference' if b.get('reference') else b.get('implementation')}"
            for b in bindings)
        grouped = self._grouped(bindings)
        findings = []
        fla_bound = [b for b in bindings if not b.get("reference") and b.get("package") == "fla"]
        refs = [b for b in bindings if b.get("reference")]
        if fla_bound and cuda is False:
            fla_err = ctx.dep("kernels.fla").get("swallowed")
            crash = f"`{exc_line(fla_err)}`" if fla_err else "Triton's error"
            findings.append(ctx.finding(
                "transformers-fla-on-cpu", version=version, funcs=", ".join(b.get("func_name") for b in fla_bound),
                implementation=fla_bound[0].get("implementation"), error=crash, evidence=f"{short}: {listing}"))
        if refs and cuda:
            findings.append(self._fast_path_finding(facts, refs, version, short, listing, ctx))
        if not findings:
            if refs and not cuda:
                return ctx.ok(f"transformers {version}, CUDA unavailable: {short} uses the PyTorch reference path, "
                              f"the right one here ({grouped})")
            return ctx.ok(f"transformers {version}: {grouped}")
        return ctx.verdict(f"transformers {version}: {grouped}", *findings)

    def _fast_path_finding(self, facts, refs, version, short, listing, ctx):
        installed = {"fla": bool(facts["fla_dists"]), "causal_conv1d": bool(facts["causal_conv1d_version"])}
        dist_name = {"fla": "flash-linear-attention", "causal_conv1d": "causal-conv1d"}
        parts, evidence, packages = [], [], set()
        for package in sorted({b.get("package") for b in refs}):
            funcs = ", ".join(b.get("func_name") for b in refs if b.get("package") == package)
            reason = next((b.get("reason") for b in refs if b.get("package") == package and b.get("reason")), None)
            name = dist_name.get(package, package)
            code = "transformers-fast-path-unavailable"
            if installed.get(package):
                text = ctx.sentence(code, "part-import-failed" if reason else "part-imports-now", funcs=funcs,
                                    name=name, reason=exc_line(reason) if reason else None)
                if version_tuple(version) >= (5, 17):
                    text += " " + ctx.sentence(code, "part-wrong-log", name=name)
            else:
                text = ctx.sentence(code, "part-not-installed", funcs=funcs, name=name)
                packages.add(package)
            parts.append(text)
            if reason:
                evidence.append(f"import of {reason.get('module') or package}:\n{exc_text(reason)}")
        return ctx.finding("transformers-fast-path-unavailable", "slow", version=version, short=short,
                           parts="; ".join(parts), evidence="\n\n".join([f"{short}: {listing}"] + evidence),
                           missing_packages=self._packages_for(packages, facts) or None)

    def _legacy(self, facts, legacy, cuda, version, short, ctx):
        funcs = legacy.get("functions") or {}
        listing = ", ".join(f"{k} -> {v or 'None'}" for k, v in funcs.items())
        if legacy.get("is_fast_path_available"):
            return ctx.ok(f"transformers {version}: is_fast_path_available=True ({listing})")
        if not cuda:
            return ctx.ok(f"transformers {version}, CUDA unavailable: {short} uses the PyTorch path ({listing})")
        reasons = legacy.get("reasons") or {}
        why = "; ".join(f"import {m}: {exc_line(r)}" for m, r in reasons.items() if r)
        missing = [p for p, r in reasons.items() if r]
        return ctx.verdict(f"transformers {version}: is_fast_path_available=False", ctx.finding(
            "transformers-fast-path-unavailable", "legacy" if why else "legacy-imports-now", version=version,
            short=short, listing=listing, reasons=why,
            evidence="\n\n".join(f"import {m}:\n{exc_text(r)}" for m, r in reasons.items() if r),
            missing_packages=self._packages_for(["fla" if "fla" in m else "causal_conv1d" for m in missing], facts)
            or None))




# --------------------------------------------------------------------------- --deep: real ops

def _seconds(steps) -> str:
    return "; ".join(f"{s.get('name')} {s.get('seconds') or 0:.1f} s" for s in steps
                     if not str(s.get("name", "")).startswith(("forward compared", "gradients compared", "cpu: compare",
                                                               "cuda: compare")))


def _numbers(step) -> str:
    return exc_line((step or {}).get("error")).split(": ", 1)[-1]


def _deep_verdict(check, facts, ctx, failure, wrong):
    """The verdict of a --deep check: skip with the probe's reason, pass with each step's
    seconds, or the first failing step as a finding: ``wrong(failed, lib, evidence, params)``
    when its result was off the reference, else ``failure(failed, lib, evidence, params)``;
    ``params`` are the observed values the knowledge base's messages name."""
    if facts["skipped"]:
        return ctx.skip(facts["skipped"])
    steps = facts["steps"] or []
    lib = check.library(facts)
    failed = next((s for s in steps if not s.get("ok")), None)
    if failed is None:
        return ctx.ok(f"{lib}: {_seconds(steps)} on empty caches; results match the reference")
    err = failed.get("error") or {}
    params = {"library": lib, "op": check.op, "step": failed.get("name"), "error": exc_line(err),
              "raised_in": err.get("raised_in"), "timings": _seconds(steps), "numbers": _numbers(failed),
              "device": str(failed.get("name", "")).split(":", 1)[0]}
    if failed.get("wrong_result"):
        return ctx.verdict(f"{lib}: {failed.get('name')}: wrong result", wrong(failed, lib, exc_text(err), params))
    return ctx.verdict(f"{lib}: {failed.get('name')} raises {exc_line(err)}",
                       failure(failed, lib, exc_text(err), params))


class TorchCompileOp(Check):
    """``torch.compile`` of a small function, forward and backward, on empty Inductor and
    Triton caches, against eager torch: on CPU (Inductor builds C++ with the system compiler)
    and, with CUDA, on the GPU (Triton kernels). Runs only with ``--deep``."""

    id = "kernels.torch_compile"
    title = "torch.compile runs forward and backward (--deep)"
    layer = "kernels"
    # not torch.cuda: the CPU op runs without CUDA, and a compile failure there is the toolchain's;
    # toolchain.temp_dir: Inductor's C++ backend writes ~149 MiB there (tmp26)
    requires = ("toolchain.extension_build", "toolchain.temp_dir")
    probe = "kernels.torch_compile_op"
    facts = _facts.KernelsTorchCompileFacts
    probe_needs = ()
    preload = ("torch", "triton")
    deep_only = True
    timeout = 900.0
    op = "torch.compile"
    codes = ("torch-compile-failed", "kernel-op-wrong-result")

    def library(self, facts) -> str:
        return f"torch {facts.get('torch_version')} torch.compile ({', '.join(facts['devices'] or [])})"

    def evaluate(self, facts, ctx):
        room = facts.get("room") or {}
        free, need = room.get("free_bytes"), room.get("need_bytes")
        if free is not None and need and free < need and not facts["steps"] and not facts["skipped"]:
            where = room.get("dir")
            temp = ctx.dep("toolchain.temp_dir")
            where = (f"stackpeel's own scratch, in {where} for want of a usable temporary directory (see "
                     "toolchain.temp_dir)," if temp.get("python_error") else f"the temporary directory ({where})")
            return Verdict(Status.BLOCKED, f"not attempted: torch.compile's C++ backend writes about {need >> 20} MiB "
                           f"in its temporary directory (a precompiled header), and {where} has {free / 2**20:.1f} "
                           "MiB free: g++ would fail there with a misleading 'C++ compile error'", (), {})
        return _deep_verdict(
            self, facts, ctx,
            lambda failed, lib, evidence, p: ctx.finding("torch-compile-failed", evidence=evidence, **p),
            lambda failed, lib, evidence, p: ctx.finding("kernel-op-wrong-result", evidence=evidence, **p))


class FlaOps(Check):
    """FLA's ``chunk_gated_delta_rule`` (what transformers binds for gated-delta-net layers)
    forward and backward against FLA's naive recurrent reference, then a ``GatedDeltaNet``
    layer forward and backward, after a full ``import fla``, on an empty Triton cache. Shows
    runtime guards with FLA's own message (the Hopper + Triton < 3.7.1 backward guard),
    missing kernels and miscompilations. Runs only with ``--deep``; needs a GPU."""

    id = "kernels.fla_ops"
    title = "FLA gated-delta-rule ops run forward and backward (--deep)"
    layer = "kernels"
    requires = ("kernels.fla",)
    probe = "kernels.fla_ops"
    facts = _facts.KernelsFlaOpsFacts
    probe_needs = ()
    preload = ("torch", "triton")
    deep_only = True
    timeout = 900.0
    op = "chunk_gated_delta_rule"
    codes = ("kernel-op-failed", "kernel-backward-failed", "kernel-op-wrong-result")

    def library(self, facts) -> str:
        dists = facts["dists"] or {}
        names = " + ".join(f"{k} {v}" for k, v in dists.items()) or "flash-linear-attention"
        gpu = f" on {facts.get('gpu_name')} (cc {facts.get('cc')})" if facts.get("gpu_name") else ""
        return f"{names} with Triton {facts['triton_version']}{gpu}"

    def evaluate(self, facts, ctx):
        steps = facts["steps"] or []

        def failure(failed, lib, evidence, p):
            name = str(failed.get("name", ""))
            forward = next((s for s in steps if s.get("name", "").endswith("forward (compile and run)")), None)
            if "backward" in name and forward and forward.get("ok"):  # training broken, inference works
                p = dict(p, op="GatedDeltaNet" if name.startswith("GatedDeltaNet") else self.op,
                         forward_s=forward.get("seconds"))
                return ctx.finding("kernel-backward-failed", evidence=evidence, **p)
            return ctx.finding("kernel-op-failed", evidence=evidence, **p)

        return _deep_verdict(
            self, facts, ctx, failure,
            lambda failed, lib, evidence, p: ctx.finding("kernel-op-wrong-result", evidence=evidence, **p))


class CausalConv1dOps(Check):
    """``causal_conv1d_fn`` forward and backward against torch's depthwise conv1d. Runs only
    with ``--deep``; needs a GPU and causal-conv1d."""

    id = "kernels.causal_conv1d_ops"
    title = "causal-conv1d runs forward and backward (--deep)"
    layer = "kernels"
    requires = ("kernels.causal_conv1d",)
    probe = "kernels.causal_conv1d_ops"
    facts = _facts.KernelsCausalConv1dOpsFacts
    probe_needs = ()
    preload = ("torch", "triton")
    deep_only = True
    timeout = 900.0
    op = "causal_conv1d_fn"
    codes = ("kernel-op-failed", "kernel-op-wrong-result")

    def library(self, facts) -> str:
        return f"causal-conv1d {facts['version']}"

    def evaluate(self, facts, ctx):
        return _deep_verdict(
            self, facts, ctx,
            lambda failed, lib, evidence, p: ctx.finding("kernel-op-failed", evidence=evidence, **p),
            lambda failed, lib, evidence, p: ctx.finding("kernel-op-wrong-result", evidence=evidence, **p))
