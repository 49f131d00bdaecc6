"""Triton layer: is Triton there and the one torch pins, can it build its C helpers, can it
compile and launch a kernel, and does a warm cache hide a missing compiler
(FAILURE_MODES.md section 2, GPU_NOTES.md)."""

from __future__ import annotations

import re
from typing import Any, List, Mapping, Optional

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, version_tuple
from .multi_gpu import build_note, descriptor_shortage, failure_note, limit_note, other_causes

COMPILER_MISSING = "Failed to find C compiler"
#: tempfile's "No usable temporary directory", gcc/as failing on their ccXXXXXX temporary files (tmp24)
TEMP_DIR_FAILURE = re.compile(r"No usable temporary directory found in|Cannot create temporary file in |"
                              r"/cc\w{6}\.[sio]:? [^\n]{0,80}No space left on device")


def first_line(text: Any, limit: int = 300) -> str:
    line = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return line if len(line) <= limit else line[:limit] + "..."


def exc_line(err: Optional[Mapping[str, Any]]) -> str:
    """``Type: first line of message`` of recorded exception facts."""
    if not err:
        return ""
    return f"{err.get('type')}: {first_line(err.get('message'))}"


def exc_text(err: Optional[Mapping[str, Any]]) -> str:
    """The recorded exception verbatim: traceback when there is one, else type and message."""
    if not err:
        return ""
    return (err.get("traceback") or "").strip() or f"{err.get('type')}: {err.get('message')}"


def compiler_failure(err: Optional[Mapping[str, Any]]) -> bool:
    """Whether recorded exception facts say that a C compile failed or no compiler was found."""
    if not err:
        return False
    text = f"{err.get('message') or ''}\n{err.get('traceback') or ''}"
    return (COMPILER_MISSING in text or err.get("type") == "CalledProcessError"
            or (err.get("type") == "FileNotFoundError" and "runtime/build.py" in text))


def py_params(version: Any) -> Mapping[str, str]:
    """``py_mm``/``py_nodot`` for package names such as python3.12-dev."""
    v = version_tuple(version)
    if len(v) < 2:
        return {}
    return {"py_mm": f"{v[0]}.{v[1]}", "py_nodot": f"{v[0]}{v[1]}"}


def _launch_label(launch: Mapping[str, Any]) -> str:
    n = launch.get("n")
    if n is None and launch.get("label") == "int-arg-1":
        n = 1
    return f"{launch.get('label')} (n={n})" if n is not None else str(launch.get("label"))


def _pin_operator(requirement_line: Optional[str]) -> str:
    """``~=`` when torch asks for a compatible release (torch 2.14: ``triton~=3.8.0``), else ``==``."""
    return "~=" if requirement_line and re.match(r"\s*[\w-]+\s*~=", requirement_line) else "=="


def _pin_matches(pin: str, installed: str, operator: str = "==") -> bool:
    if "+" in pin:
        return pin == installed
    have = version_tuple(installed.split("+")[0])
    if operator == "~=":        # PEP 440: ~=3.8.0 is >=3.8.0, ==3.8.*
        want = version_tuple(pin)
        return have[:len(want) - 1] == want[:-1] and have >= want
    return version_tuple(pin) == have


class TritonImport(Check):
    """Triton is installed (package metadata), imports in the target interpreter, and is the
    release torch pins (``Requires-Dist: triton==X`` in torch's metadata; CPU wheels have no
    pin). Skipped when Triton is absent and torch is not a CUDA/ROCm build."""

    id = "triton.import"
    title = "Triton installed, importable, the release torch pins"
    layer = "triton"
    codes = ("triton-not-installed", "triton-import-failed", "triton-torch-version-mismatch")
    facts = _facts.TritonImportFacts
    requires = ("torch.cuda", "config.module_origins")
    probe = "triton_layer.import_facts"
    probe_needs = ()  # torch.cuda only informs the verdict; importing Triton needs nothing
    timeout = 60.0

    def evaluate(self, facts, ctx):
        tc = ctx.dep("torch.cuda")
        torch_version = facts["torch_version"] or tc.get("version")
        gpu_build = facts["torch_cuda"] or facts["torch_hip"] or tc.get("cuda") or tc.get("hip")
        pin = facts["triton_pin"]
        pin_dist = facts["triton_pin_dist"] or "triton"
        operator = _pin_operator(facts["triton_requirement_line"])
        params = {"torch_version": torch_version, "triton_pin": pin, "triton_version": facts["version"],
                  "triton_requirement": f"{pin_dist}{operator}{pin}" if pin else "triton"}
        if not facts["installed"] and not facts["path"]:
            if gpu_build:
                return ctx.verdict("triton is not installed", ctx.finding(
                    "triton-not-installed", "gpu-build-pinned" if pin else "gpu-build",
                    torch_cuda=facts["torch_cuda"] or tc.get("cuda"), **params), installed=False)
            what = f"torch {torch_version} is a CPU build" if torch_version else "torch is not installed"
            return ctx.skip(f"triton is not installed; {what}, so nothing here needs it", installed=False)
        version = facts["version"] or facts["dist_version"]
        if not facts["importable"]:
            err = facts["import_error"]
            return ctx.verdict(f"triton {version} is installed but `import triton` fails", ctx.finding(
                "triton-import-failed", "installed", dist=facts["dist"], error=exc_line(err),
                evidence=exc_text(err), **dict(params, triton_version=version)))
        findings = []
        if pin and (not _pin_matches(pin, str(version), operator) or (facts["dist"] and facts["dist"] != pin_dist)):
            findings.append(ctx.finding(
                "triton-torch-version-mismatch", dist=facts["dist"],
                evidence=facts["triton_requirement_line"] or "", **dict(params, triton_version=version)))
        pinned = f"; torch {torch_version} pins {pin_dist}{operator}{pin}" if pin else ""
        return ctx.verdict(f"triton {version} at {facts['path']}{pinned}", *findings)


class TritonBuild(Check):
    """Triton's own C build path (``triton.runtime.build``: ``compile_module_from_src`` or
    ``_build``, whichever this release offers) compiles and loads a tiny Python extension
    with a fresh, empty cache directory. This is how Triton builds its ``cuda_utils`` helper
    and (3.6 and older) its per-signature launchers; no GPU or libcuda is needed."""

    id = "triton.build"
    title = "Triton can compile its C helpers (empty cache)"
    layer = "triton"
    codes = ("triton-build-failed", "open-files-limit-low")
    facts = _facts.TritonBuildFacts
    # multi_gpu.open_files: gcc and ld under a low limit (named only when the build failed of it, tmp26)
    requires = ("triton.import", "toolchain.extension_build", "toolchain.temp_dir", "multi_gpu.open_files")
    gate = ("triton.import",)
    probe = "triton_layer.build_facts"
    probe_needs = ()
    timeout = 120.0

    def on_failure(self, failure, ctx):  # the probe died: EMFILE in what it left
        return build_note(ctx, "Triton's build probe", getattr(failure, "stderr_tail", ""),
                          getattr(failure, "detail", ""))

    def evaluate(self, facts, ctx):
        version = facts.get("triton_version") or ctx.dep("triton.import").get("version")
        cc = facts["compiler"]
        if facts["ok"]:
            return ctx.ok(f"triton {version} built and loaded a C extension with {cc} "
                          f"({facts['api']}, empty cache)")
        err = facts["error"] or {}
        stderr = facts["compiler_stderr"] or ""
        text = f"{err.get('message') or ''}\n{stderr}"
        if COMPILER_MISSING in text:
            cause = "no-compiler"
        elif TEMP_DIR_FAILURE.search(text):  # tmp24: before FileNotFoundError (tempfile raises that too)
            cause = "temp-dir"
        elif err.get("type") == "FileNotFoundError":
            cause = "cc-missing"
        elif "Python.h" in stderr:
            cause = "python-h"
        elif re.search(r"(stdlib|stdio|dlfcn|string|stddef)\.h: No such file|crt[1i]\.o", stderr):
            cause = "libc"
        elif err.get("type") == "CalledProcessError":
            cause = "compiler-failed"
        elif facts["answer"] not in (None, 42):
            cause = "wrong-answer"
        else:
            cause = "other"
        # ld's `cannot find crti.o: Too many open files` is the open-files limit, not the C library (tmp26)
        note = build_note(ctx, f"Triton's C build with {cc}", stderr, err.get("message") or "",
                          unexplained=cause in ("compiler-failed", "other"))
        if note and cause in ("temp-dir", "python-h", "libc"):
            cause = "compiler-failed" if err.get("type") == "CalledProcessError" else "other"
        evidence = [exc_line(err) if err else ""]
        if facts["command"]:
            cmd = facts["command"]
            evidence.append("Compiler command: " + (" ".join(cmd) if isinstance(cmd, list) else str(cmd)))
        if stderr.strip():
            evidence.append("Compiler stderr:\n" + stderr.rstrip())
        if err.get("traceback"):
            evidence.append(err["traceback"].rstrip())
        finding = ctx.finding(
            "triton-build-failed", [None if err else "no-error", cause],
            triton_version=version, api=facts["api"] or "triton.runtime.build",
            error=(exc_line(err) or "").rstrip("."), cc=repr(cc), python_include=facts["python_include"],
            returncode=facts["returncode"], answer=repr(facts["answer"]),
            evidence="\n\n".join(e for e in evidence if e),
            **py_params(facts["python_version"] or ctx.target.get("version")))
        return ctx.verdict(f"Triton's C build fails with an empty cache ({cause.replace('-', ' ')})", finding,
                           *note, ok=False)

class TritonKernelLaunch(Check):
    """Triton's active driver and target, then a real ``@triton.jit`` vector add compiled
    and launched on torch CUDA tensors with a fresh cache, its result checked exactly. When
    that fails for want of a C compiler and the user's cache holds ``cuda_utils`` for this
    Python, the run is repeated on a copy of the user's compiled helpers, with an extra
    launch whose int argument is 1 (a new launcher signature on Triton <= 3.6): a warm cache
    that hides a missing compiler is reported as its own finding."""

    id = "triton.kernel_launch"
    title = "Triton compiles and launches a kernel (empty cache)"
    layer = "triton"
    codes = (
        "triton-import-failed",
        "triton-no-active-driver",
        "triton-driver-init-failed",
        "triton-kernel-failed",
        "triton-wrong-result",
        "triton-warm-cache-hides-compiler",
        "open-files-limit-low",
    )
    facts = _facts.TritonKernelLaunchFacts
    # multi_gpu.open_files: Triton's driver build and a CUDA context need descriptors
    requires = ("triton.import", "triton.build", "torch.cuda", "toolchain.libcuda_discovery", "toolchain.ptxas",
                "toolchain.triton_cache", "multi_gpu.open_files")
    gate = ("triton.import",)
    probe = "triton_layer.kernel_launch"
    preload = ("torch", "triton")  # its launch phases fork from the interpreter that imported torch (runner/zygote.py)
    probe_needs = ("toolchain.triton_cache", "triton.build")  # the cache dir and whether Triton can build
    prework = "launch_prework"  # builds Triton's cuda_utils into the empty cache while torch imports
    start_first = True  # its fork's own work (CUDA context, compile, launch: 0.9-1.3 s on an H100) ends the run
    timeout = 240.0
    probe_options = {"budget_s": 220, "fresh_timeout_s": 150, "user_timeout_s": 120}

    def on_failure(self, failure, ctx):
        return failure_note(ctx, failure, "Triton's kernel-launch probe")

    def evaluate(self, facts, ctx):
        fresh = facts["fresh"] or {}
        user = facts["user_run"]
        cache = facts["user_cache"] or {}
        version = facts["triton_version"] or fresh.get("triton_version")
        if fresh.get("ok"):
            launch = (fresh.get("launches") or [{}])[0]
            dev = fresh.get("device") or {}
            target = fresh.get("target") or {}
            where = (f"{dev.get('name')} (cc {dev.get('cc')})" if dev
                     else f"{target.get('backend')} {target.get('arch')}")
            summary = (f"triton {version}: vector add of {launch.get('n')} floats compiled and launched on "
                       f"{where} with an empty cache, result exact")
            if ctx.dep_status.get("toolchain.triton_cache") is Status.FAIL:
                # the launch used a private cache: say that the user's own cannot be used
                summary += (" (in a private cache: the configured one, "
                            f"{ctx.dep('toolchain.triton_cache').get('cache_dir')}, "
                            "cannot be used, so kernels launched with it fail; see toolchain.triton_cache)")
            return ctx.ok(summary, cache_used="fresh")
        stage = fresh.get("stage")
        err = fresh.get("error")
        if stage == "import-torch":
            return ctx.skip(f"torch cannot be imported ({exc_line(err)}): no tensors to launch a kernel on; "
                            "see torch.cuda", cache_used="fresh")

        warm = self._warm_cache(facts, fresh, user, cache, version, ctx) if user else None
        if warm is not None:
            return warm
        finding = self._fresh_finding(fresh, stage, err, facts, cache, version, ctx)
        limits = ctx.dep("multi_gpu.open_files")
        proc = fresh.get("process") or {}
        # the launch process ended without an answer (not a timeout: a hang is no shortage)
        timed_out = str(proc.get("error") or "").startswith("timed out")
        short = descriptor_shortage(limits, err, (fresh.get("output") or {}).get("stderr"), proc.get("stderr_tail"),
                                    died=stage == "process" and not timed_out, ruled_out=other_causes(ctx))
        extra = [limit_note(ctx, limits, f"Triton's kernel launch (stage {stage!r})", short)] if short else []
        return ctx.verdict(f"triton {version}: {self._stage_words(stage)}", finding, *extra, cache_used="fresh")

    @staticmethod
    def _stage_words(stage):
        return {"driver": "the driver cannot be created", "launch": "the kernel fails to compile or launch",
                "result": "the kernel computes a wrong result", "import-triton": "triton cannot be imported",
                "kernel-source": "the kernel source cannot be loaded",
                "process": "the launch process did not answer"}.get(stage, f"failed at {stage}")

    def _fresh_finding(self, fresh, stage, err, facts, cache, version, ctx):
        params = {"cache_dir": cache.get("dir")}
        cuda = fresh.get("cuda_available")
        if cuda is None:
            cuda = ctx.dep("torch.cuda").get("available")
        if stage == "driver" and err and "active drivers" in (err.get("message") or ""):
            return ctx.finding(
                "triton-no-active-driver", triton_version=version, error=exc_line(err),
                torch_version=fresh.get("torch_version"), cuda=cuda, device_count=fresh.get("device_count"),
                evidence=exc_text(err), **params)
        if stage == "driver":
            sentences = [None] + (["needs-compiler"] + self._cache_words(facts, cache) if compiler_failure(err) else [])
            user = facts["user_run"] or {}
            return ctx.finding(
                "triton-driver-init-failed", sentences, triton_version=version, error=exc_line(err),
                n=cache.get("cuda_utils_this_python"), key=repr(user.get("platform_key")),
                evidence=exc_text(err), **params)
        if stage == "result":
            launch = (fresh.get("launches") or [{}])[0]
            bad = launch.get("first_bad") or {}
            return ctx.finding(
                "triton-wrong-result", triton_version=version, n=launch.get("n"), mismatches=launch.get("mismatches"),
                max_abs_err=launch.get("max_abs_err"), index=bad.get("index"), got=bad.get("got"),
                expected=bad.get("expected"), evidence="", **params)
        if stage == "import-triton":
            return ctx.finding("triton-import-failed", "fresh-process", error=exc_line(err),
                               evidence=exc_text(err), triton_requirement="triton")
        launch = (fresh.get("launches") or [{}])[0]
        out = (fresh.get("output") or {})
        evidence = [exc_text(err)]
        if out.get("stderr", "").strip():
            evidence.append("stderr:\n" + out["stderr"].rstrip())
        if stage == "process":
            proc = fresh.get("process") or {}
            evidence.append(f"exit status {proc.get('rc')}, {proc.get('error') or ''}\n{proc.get('stderr_tail') or ''}")
            variant, error = "process", proc.get("error") or f"exit status {proc.get('rc')}"
        elif launch.get("ptxas_error"):
            variant, error = "ptxas", exc_line(err)
        else:
            variant, error = "launch", exc_line(err)
        dev = fresh.get("device") or {}
        return ctx.finding(
            "triton-kernel-failed", [variant] + (["on-device"] if dev else []) + ["new-process"],
            triton_version=version, error=error, device=f"{dev.get('name')} (cc {dev.get('cc')})" if dev else None,
            evidence="\n\n".join(e for e in evidence if e), **params)

    @staticmethod
    def _cache_words(facts, cache) -> List[str]:
        """The sentences on what the user's cache did (or could not do) about a missing compiler."""
        user = facts["user_run"]
        if user is not None:
            key = user.get("platform_key")
            return ["cache-key-file" if isinstance(key, str) and key.endswith(",") else "cache-key-other"]
        reason = facts["user_run_reason"]
        if reason == "no-cuda-utils":
            return ["cache-no-cuda-utils"]
        if reason == "no-time-left":
            return ["cache-no-time"]
        return []

    def _warm_cache(self, facts, fresh, user, cache, version, ctx):
        """The verdict when a replay on the user's cached helpers was run; None if it proves nothing."""
        stage = user.get("stage")
        if stage in (None, "probe", "process", "import-torch", "import-triton", "driver"):
            return None  # the cached helpers did not get Triton past its driver: no hiding
        launches = user.get("launches") or []
        latent = [x for x in launches if not x.get("ok") and compiler_failure(x.get("error"))]
        other = [x for x in launches if not x.get("ok") and not compiler_failure(x.get("error"))]
        legacy = bool(version_tuple(version)) and version_tuple(version) < (3, 7)
        where = f"{cache.get('dir')} ({cache.get('cuda_utils_this_python')} cuda_utils and " \
                f"{cache.get('launchers_this_python')} launcher modules for {facts['ext_suffix']})"
        fresh_err = exc_line(fresh.get("error"))
        evidence = [f"With an empty cache ({fresh.get('cache_dir')}):\n{exc_text(fresh.get('error'))}"]
        for x in launches:
            tag = "OK" if x.get("ok") else exc_line(x.get("error"))
            evidence.append(f"With a copy of the user's cached helpers, launch {_launch_label(x)}: {tag}")
        for x in latent + other:
            evidence.append(exc_text(x.get("error")))
        findings = []
        if latent:
            labels = ", ".join(_launch_label(x) for x in latent)
            # proven to fail right now for a new kernel signature: blocking, not only latent
            findings.append(ctx.finding("triton-warm-cache-hides-compiler", "latent", triton_version=version,
                                        where=where, fresh_error=fresh_err, labels=labels,
                                        error=exc_line(latent[0].get("error")),
                                        evidence="\n\n".join(evidence), severity=Severity.BLOCKING,
                                        cache_dir=cache.get("dir"), **py_params(ctx.target.get("version"))))
        else:
            ok_labels = ", ".join(_launch_label(x) for x in launches if x.get("ok"))
            findings.append(ctx.finding("triton-warm-cache-hides-compiler", "hidden-legacy" if legacy else "hidden",
                                        triton_version=version, where=where, fresh_error=fresh_err,
                                        labels=ok_labels or "none", evidence="\n\n".join(evidence),
                                        cache_dir=cache.get("dir"), **py_params(ctx.target.get("version"))))
        for x in other:
            findings.append(ctx.finding(
                "triton-kernel-failed", "user-cache", launch=_launch_label(x), error=exc_line(x.get("error")),
                evidence=exc_text(x.get("error")), cache_dir=cache.get("dir")))
        summary = (f"triton {version} works only with the user's warm cache"
                   + ("; a new kernel signature fails now" if latent else ""))
        return ctx.verdict(summary, *findings, cache_used="user-copy")

