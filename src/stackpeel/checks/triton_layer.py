"""Triton layer: is Triton there and the one torch pins, can it build its C helpers, can it
compile and launch a kernel, and does a warm cache hide a missing compiler
(FAILURE_MODES.md section 2, GPU_NOTES.md)."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from ..model import Severity
from .base import Check, version_tuple

COMPILER_MISSING = "Failed to find C compiler"


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


def _pin_matches(pin: str, installed: str) -> bool:
    if "+" in pin:
        return pin == installed
    return version_tuple(pin) == version_tuple(installed.split("+")[0])


class TritonImport(Check):
    """Triton is installed (package metadata), imports in the target interpreter, and is the
    release torch pins (``Requires-Dist: triton==X`` in torch's metadata; CPU wheels have no
    pin). Skipped when Triton is absent and torch is not a CUDA/ROCm build."""

    id = "triton.import"
    title = "Triton installed, importable, the release torch pins"
    layer = "triton"
    codes = ("triton-not-installed", "triton-import-failed", "triton-torch-version-mismatch")
    requires = ("torch.cuda",)
    probe = "triton_layer.import_facts"
    probe_needs = ()  # torch.cuda only informs the verdict; importing Triton needs nothing
    timeout = 60.0

    def evaluate(self, facts, ctx):
        tc = ctx.dep("torch.cuda")
        torch_version = facts.get("torch_version") or tc.get("version")
        gpu_build = facts.get("torch_cuda") or facts.get("torch_hip") or tc.get("cuda") or tc.get("hip")
        pin = facts.get("triton_pin")
        pin_dist = facts.get("triton_pin_dist") or "triton"
        params = {"torch_version": torch_version, "triton_pin": pin, "triton_version": facts.get("version"),
                  "triton_requirement": f"{pin_dist}=={pin}" if pin else "triton"}
        if not facts.get("installed") and not facts.get("path"):
            if gpu_build:
                return ctx.verdict("triton is not installed", ctx.finding(
                    "triton-not-installed",
                    message=f"torch {torch_version} is a GPU build (CUDA {facts.get('torch_cuda') or tc.get('cuda')}) but no "
                    f"Triton distribution is installed{f' (torch pins {pin_dist}=={pin})' if pin else ''}: "
                    "torch.compile and every Triton kernel library fail with "
                    "`ModuleNotFoundError: No module named 'triton'` or fall back to slow paths.",
                    **params), installed=False)
            what = f"torch {torch_version} is a CPU build" if torch_version else "torch is not installed"
            return ctx.skip(f"triton is not installed; {what}, so nothing here needs it", installed=False)
        version = facts.get("version") or facts.get("dist_version")
        if not facts.get("importable"):
            err = facts.get("import_error")
            return ctx.verdict(f"triton {version} is installed but `import triton` fails", ctx.finding(
                "triton-import-failed",
                message=f"triton {version} is installed ({facts.get('dist')}) but `import triton` raises "
                f"{exc_line(err)}; torch.compile, FLA and every Triton kernel fail the same way.",
                evidence=exc_text(err), **params))
        findings = []
        if pin and (not _pin_matches(pin, str(version)) or (facts.get("dist") and facts["dist"] != pin_dist)):
            findings.append(ctx.finding(
                "triton-torch-version-mismatch",
                message=f"torch {torch_version} pins {pin_dist}=={pin} but {facts.get('dist')} {version} is installed; "
                "torch.compile (Inductor) is only tested with the pinned release and commonly fails with "
                "ImportError/AttributeError on Triton internals with another one.",
                evidence=facts.get("triton_requirement_line") or "", **params))
        pinned = f"; torch {torch_version} pins {pin_dist}=={pin}" if pin else ""
        return ctx.verdict(f"triton {version} at {facts.get('path')}{pinned}", *findings)


class TritonBuild(Check):
    """Triton's own C build path (``triton.runtime.build``: ``compile_module_from_src`` or
    ``_build``, whichever this release offers) compiles and loads a tiny Python extension
    with a fresh, empty cache directory. This is how Triton builds its ``cuda_utils`` helper
    and (3.6 and older) its per-signature launchers; no GPU or libcuda is needed."""

    id = "triton.build"
    title = "Triton can compile its C helpers (empty cache)"
    layer = "triton"
    codes = ("triton-build-failed",)
    requires = ("triton.import", "toolchain.extension_build")
    gate = ("triton.import",)
    probe = "triton_layer.build_facts"
    probe_needs = ()
    timeout = 120.0

    def evaluate(self, facts, ctx):
        version = facts.get("triton_version") or ctx.dep("triton.import").get("version")
        cc = facts.get("compiler")
        if facts.get("ok"):
            return ctx.ok(f"triton {version} built and loaded a C extension with {cc} "
                          f"({facts.get('api')}, empty cache)")
        err = facts.get("error") or {}
        stderr = facts.get("compiler_stderr") or ""
        text = f"{err.get('message') or ''}\n{stderr}"
        if COMPILER_MISSING in text:
            why = ("no C compiler: CC is unset and neither gcc nor clang is on PATH (Triton never tries plain `cc`)")
        elif err.get("type") == "FileNotFoundError":
            why = f"the compiler Triton was told to use does not exist (CC={cc!r})"
        elif "Python.h" in stderr:
            why = f"the compiler cannot find Python.h (looked in {facts.get('python_include')})"
        elif re.search(r"(stdlib|stdio|dlfcn|string|stddef)\.h: No such file|crt[1i]\.o", stderr):
            why = "the compiler has no C library headers or start files"
        elif err.get("type") == "CalledProcessError":
            why = f"the compiler {cc} failed (exit status {facts.get('returncode')})"
        elif facts.get("answer") not in (None, 42):
            why = f"the built extension loaded but returned {facts.get('answer')!r} instead of 42"
        else:
            why = "building or loading the extension failed"
        evidence = [exc_line(err) if err else ""]
        if facts.get("command"):
            cmd = facts["command"]
            evidence.append("Compiler command: " + (" ".join(cmd) if isinstance(cmd, list) else str(cmd)))
        if stderr.strip():
            evidence.append("Compiler stderr:\n" + stderr.rstrip())
        if err.get("traceback"):
            evidence.append(err["traceback"].rstrip())
        finding = ctx.finding(
            "triton-build-failed",
            message=f"Triton {version}'s own build ({facts.get('api') or 'triton.runtime.build'}) failed with an empty "
            f"cache: {(exc_line(err) or why).rstrip('.')}. Cause: {why}. With an empty cache (a new container, "
            "another Python, "
            "a cleared ~/.triton) Triton cannot build cuda_utils, so every Triton kernel, FLA op and torch.compile "
            "fails.",
            evidence="\n\n".join(e for e in evidence if e),
            **py_params(facts.get("python_version") or ctx.target.get("version")))
        return ctx.verdict(f"Triton's C build fails: {why}", finding, ok=False)


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
    )
    requires = ("triton.import", "triton.build", "torch.cuda", "toolchain.libcuda_discovery", "toolchain.ptxas",
                "toolchain.triton_cache")
    gate = ("triton.import",)
    probe = "triton_layer.kernel_launch"
    preload = ("torch", "triton")  # its launch phases fork from the interpreter that imported torch (runner/zygote.py)
    probe_needs = ("toolchain.triton_cache", "triton.build")  # the cache dir and whether Triton can build
    timeout = 240.0
    probe_options = {"budget_s": 220, "fresh_timeout_s": 150, "user_timeout_s": 120}

    def evaluate(self, facts, ctx):
        fresh = facts.get("fresh") or {}
        user = facts.get("user_run")
        cache = facts.get("user_cache") or {}
        version = facts.get("triton_version") or fresh.get("triton_version")
        if fresh.get("ok"):
            launch = (fresh.get("launches") or [{}])[0]
            dev = fresh.get("device") or {}
            target = fresh.get("target") or {}
            where = (f"{dev.get('name')} (cc {dev.get('cc')})" if dev
                     else f"{target.get('backend')} {target.get('arch')}")
            return ctx.ok(f"triton {version}: vector add of {launch.get('n')} floats compiled and launched on "
                          f"{where} with an empty cache, result exact", cache_used="fresh")
        stage = fresh.get("stage")
        err = fresh.get("error")
        if stage == "import-torch":
            return ctx.skip(f"torch cannot be imported ({exc_line(err)}): no tensors to launch a kernel on; "
                            "see torch.cuda", cache_used="fresh")

        warm = self._warm_cache(facts, fresh, user, cache, version, ctx) if user else None
        if warm is not None:
            return warm
        finding = self._fresh_finding(fresh, stage, err, facts, cache, version, ctx)
        return ctx.verdict(f"triton {version}: {self._stage_words(stage)}", finding, cache_used="fresh")

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
                "triton-no-active-driver",
                message=f"Triton {version} found no active GPU backend: `{exc_line(err)}`; torch "
                f"{fresh.get('torch_version')} says torch.cuda.is_available() is {cuda} "
                f"(device count {fresh.get('device_count')}). Every Triton kernel launch raises this, and FLA hides "
                "it behind 'roll back to CPU'.",
                evidence=exc_text(err), **params)
        if stage == "driver":
            extra = ""
            if compiler_failure(err):
                extra = " Creating the driver compiles Triton's cuda_utils helper, and that needs a C compiler." \
                    + self._cache_words(facts, cache)
            return ctx.finding(
                "triton-driver-init-failed",
                message=f"Creating Triton {version}'s driver with an empty cache raised `{exc_line(err)}`.{extra} Every "
                "Triton kernel, FLA op and torch.compile fails the same way.",
                evidence=exc_text(err), **params)
        if stage == "result":
            launch = (fresh.get("launches") or [{}])[0]
            bad = launch.get("first_bad") or {}
            return ctx.finding(
                "triton-wrong-result",
                message=f"A Triton {version} vector add of {launch.get('n')} floats ran without error but "
                f"{launch.get('mismatches')} values are wrong (max abs error {launch.get('max_abs_err')}; first at "
                f"index {bad.get('index')}: got {bad.get('got')}, expected {bad.get('expected')}).",
                evidence="", **params)
        if stage == "import-triton":
            return ctx.finding("triton-import-failed",
                               message=f"`import triton` fails in a fresh process: {exc_line(err)}.",
                               evidence=exc_text(err), triton_requirement="triton")
        launch = (fresh.get("launches") or [{}])[0]
        out = (fresh.get("output") or {})
        evidence = [exc_text(err)]
        if out.get("stderr", "").strip():
            evidence.append("stderr:\n" + out["stderr"].rstrip())
        if stage == "process":
            proc = fresh.get("process") or {}
            evidence.append(f"exit status {proc.get('rc')}, {proc.get('error') or ''}\n{proc.get('stderr_tail') or ''}")
            what = (f"the process compiling and launching the kernel did not answer "
                    f"({proc.get('error') or 'exit status %s' % proc.get('rc')})")
        elif launch.get("ptxas_error"):
            what = f"ptxas rejected the kernel: {exc_line(err)}"
        else:
            what = f"compiling or launching the kernel raised {exc_line(err)}"
        dev = fresh.get("device") or {}
        on = f" on {dev.get('name')} (cc {dev.get('cc')})" if dev else ""
        return ctx.finding(
            "triton-kernel-failed",
            message=f"Triton {version}'s driver works{on}, but {what}. Every Triton kernel in a new process fails the same "
            "way.",
            evidence="\n\n".join(e for e in evidence if e), **params)

    @staticmethod
    def _cache_words(facts, cache):
        """What the user's cache did (or could not do) about a missing compiler."""
        user = facts.get("user_run")
        n = cache.get("cuda_utils_this_python")
        if user is not None:
            key = user.get("platform_key")
            why = (f" (its platform key here is {key!r}, without 'ELF': the `file` program is missing, so a cache "
                   "warmed where `file` exists is never hit)" if isinstance(key, str) and key.endswith(",") else
                   " (another Triton release, another Python, or on Triton >= 3.8 a moved venv or libcuda directory)")
            return (f" The user's cache {cache.get('dir')} holds {n} cuda_utils module(s) for this Python, but Triton "
                    f"did not reuse them here: the build-cache key differs{why}.")
        reason = facts.get("user_run_reason")
        if reason == "no-cuda-utils":
            return f" The user's cache {cache.get('dir')} holds no cuda_utils for this Python either."
        if reason == "no-time-left":
            return (f" The user's cache {cache.get('dir')} holds {n} cuda_utils module(s) for this Python; there was "
                    "no time left to try them.")
        return ""

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
                f"{cache.get('launchers_this_python')} launcher modules for {facts.get('ext_suffix')})"
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
            msg = (f"Triton {version} works only because of the cache in {where}: with an empty cache it fails "
                   f"(`{fresh_err}`); with the user's cached helpers the driver starts, but launching a kernel "
                   f"whose launcher is not cached yet ({labels}) fails with `{exc_line(latent[0].get('error'))}`. "
                   "Any new kernel signature (an int argument equal to 1, None instead of a tensor), a new "
                   "container, another Python, a missing `file` program or a cleared cache fails the same way.")
            # proven to fail right now for a new kernel signature: blocking, not only latent
            findings.append(ctx.finding("triton-warm-cache-hides-compiler", message=msg,
                                        evidence="\n\n".join(evidence), severity=Severity.BLOCKING,
                                        cache_dir=cache.get("dir"), **py_params(ctx.target.get("version"))))
        else:
            ok_labels = ", ".join(_launch_label(x) for x in launches if x.get("ok"))
            msg = (f"Triton {version} works only because of the cache in {where}: with an empty cache it fails "
                   f"(`{fresh_err}`), while with the user's cached helpers the kernel launches succeed "
                   f"({ok_labels or 'none'}). A new container, another Python, a missing `file` program (it "
                   "changes the cache key), a moved venv (Triton >= 3.8) or a cleared cache will fail with "
                   "`Failed to find C compiler`"
                   + (", and so will any new kernel signature on this Triton (<= 3.6)." if legacy else "."))
            findings.append(ctx.finding("triton-warm-cache-hides-compiler", message=msg, evidence="\n\n".join(evidence),
                                        cache_dir=cache.get("dir"), **py_params(ctx.target.get("version"))))
        for x in other:
            findings.append(ctx.finding(
                "triton-kernel-failed",
                message=f"With the user's cached helpers, launching the kernel ({_launch_label(x)}) raised "
                f"`{exc_line(x.get('error'))}`.", evidence=exc_text(x.get("error")), cache_dir=cache.get("dir")))
        summary = (f"triton {version} works only with the user's warm cache"
                   + ("; a new kernel signature fails now" if latent else ""))
        return ctx.verdict(summary, *findings, cache_used="user-copy")

