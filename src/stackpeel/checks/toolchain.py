"""Toolchain layer: what Triton needs around it to build its C helper, find libcuda,
assemble PTX and cache its output, and what CUDA extension builds need (nvcc).

Each probe re-does Triton's own lookup (compiler order, include dir, ``/sbin/ldconfig -p``,
ptxas selection, cache dir, build-cache key) without importing Triton, and then does the
real thing: compiles and loads a C extension, assembles PTX, writes and maps a file in
the cache dir. See FAILURE_MODES T1-T13 for the failures these checks name.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..model import Finding, Severity, Status
from .. import facts as _facts
from .base import Check, Verdict
from .multi_gpu import build_note

#: below this much free space Triton's cache writes are about to fail
MIN_CACHE_FREE = 32 * 1024 * 1024


def _gib(n: Optional[int]) -> str:
    return "unknown" if n is None else f"{n / 2**30:.1f} GiB"


def _run_evidence(run: Optional[Mapping[str, Any]]) -> str:
    """A command's failure as it happened: argv, exit status or error, stderr verbatim."""
    if not run:
        return ""
    head = "$ " + " ".join(map(str, run.get("argv") or run.get("command") or []))
    status = run.get("error") or f"exit status {run.get('rc')}"
    body = (run.get("stderr") or "") or (run.get("stdout") or "")
    return f"{head}\n{status}\n{body}".rstrip()


class CCompiler(Check):
    """The C compiler Triton would run: ``CC`` if set (taken as is), else gcc, else clang on
    PATH (never plain ``cc``). Fails when there is none, or when it does not run."""

    id = "toolchain.c_compiler"
    title = "C compiler that Triton will use"
    layer = "toolchain"
    codes = ("no-c-compiler", "c-compiler-broken")
    facts = _facts.ToolchainCCompilerFacts
    requires = ("config.compiler_environment",)  # a CC that names nothing is the variable's fault
    probe_needs = ()
    probe = "toolchain.c_compiler"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        cc, source = facts["compiler"], facts["source"]
        keep = {"compiler": cc, "source": source}
        if cc is None:
            path = facts["path_env"]
            sentences: List[Optional[str]] = [None if path is not None else "no-path"]
            alt = None
            if facts["plain_cc"]:
                alt = facts["plain_cc"]
                sentences.append("plain-cc-version" if facts.get("plain_cc_version") else "plain-cc")
            if facts["conda_gcc"]:
                alt = alt or facts["conda_gcc"][0]
                sentences.append("conda-gcc")
            finding = ctx.finding("no-c-compiler", sentences, path=path, plain_cc=facts["plain_cc"],
                                  plain_cc_version=facts.get("plain_cc_version"),
                                  conda_gcc=(facts["conda_gcc"] or [None])[0], cc_path=alt)
            return ctx.verdict("no C compiler that Triton can find", finding, **keep)
        if not facts["works"]:
            run = facts.get("version_run") or {}
            if source == "CC":
                if cc == "":
                    variant = "cc-empty"
                elif not facts["resolved"]:
                    variant = "cc-words" if " " in cc.strip() else ("cc-no-file" if "/" in cc else "cc-not-on-path")
                elif not facts["executable"]:
                    variant = "cc-not-executable"
                else:
                    variant = "cc-fails"
            else:
                variant = "path-fails"
            finding = ctx.finding("c-compiler-broken", variant, evidence=_run_evidence(run), cc=cc,
                                  compiler=(source or "").split()[-1] if source else None,
                                  run_error=run.get("error") or f"exit status {run.get('rc')}",
                                  cc_env=(cc or "(empty)") if source == "CC" and "\n" not in cc else None,
                                  compiler_pkg=None if source == "CC" else source.split()[-1])
            return ctx.verdict(f"the C compiler Triton would use ({cc or 'empty CC'}) does not run", finding, **keep)
        summary = f"{facts.get('version') or cc} at {facts['resolved'] or cc} (from {source})"
        return ctx.ok(summary, **keep)


def header_params(h: Mapping[str, Any]) -> Dict[str, Any]:
    """Remedy params for python-headers-missing from python_headers facts."""
    mm = h.get("py_mm")
    version = h.get("python_version")
    kind = h.get("kind")
    p: Dict[str, Any] = {"py_mm": mm, "py_nodot": (mm or "").replace(".", "") or None}
    if kind == "system" and mm:
        p["apt_dev"] = f"python{mm}-dev" + (" python3-dev" if h.get("is_distro_python3") else "")
        p["dnf_devel"] = "python3-devel" if h.get("is_distro_python3") else f"python{mm}-devel"
    base = h.get("base_prefix") or ""
    if kind == "pyenv" and version:
        p["reinstall_cmd"] = f"pyenv install --force {version}"
    elif kind == "conda" and version:
        p["reinstall_cmd"] = f"conda install -y -p {base} --force-reinstall python={version}"
    elif kind == "standalone" and version and "/uv/python/" in base:
        p["reinstall_cmd"] = f"uv python install --reinstall {version}"
    return p


def _kind_note(h: Mapping[str, Any]) -> Optional[str]:
    """The python-headers-missing sentence that says what kind of interpreter lost its headers."""
    return {"conda": "self-contained", "pyenv": "self-contained", "standalone": "self-contained",
            "system": "distro", "local": "local"}.get(h.get("kind") or "")


class PythonHeaders(Check):
    """``Python.h`` in the include dir Triton compiles against: ``sysconfig.get_paths(scheme)
    ["include"]`` of the target interpreter, with Debian's ``posix_local`` read as
    ``posix_prefix`` (for a venv, the base interpreter's headers)."""

    id = "toolchain.python_headers"
    title = "Python headers for building C extensions"
    layer = "toolchain"
    codes = ("python-headers-missing",)
    facts = _facts.ToolchainPythonHeadersFacts
    probe = "toolchain.python_headers"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        where = facts["python_h"]
        if facts["python_h_exists"] and facts["python_h_readable"]:
            return ctx.ok(f"Python.h found in {facts['include_dir']} (scheme {facts['scheme']})")
        if facts["python_h_exists"]:
            variant = "unreadable"
        elif facts["include_dir_exists"]:
            variant = "no-file"
        else:
            variant = "no-dir"
        sentences = [variant] + ([_kind_note(facts)] if _kind_note(facts) else [])
        return ctx.verdict(f"Python.h missing for Python {facts['python_version']}",
                           ctx.finding("python-headers-missing", sentences, python_h=where,
                                       include_dir=facts["include_dir"], python_version=facts["python_version"],
                                       scheme=facts["scheme"], kind=facts["kind"],
                                       base_prefix=facts["base_prefix"], **header_params(facts)))

class ExtensionBuild(Check):
    """Compiles and links a real Python extension (``#include <Python.h>``, dlopen) with Triton's
    exact command line, then imports it and calls it. Tells missing Python headers, missing
    C library headers and other build failures apart from the compiler's stderr."""

    id = "toolchain.extension_build"
    title = "Build and load a C extension the way Triton does"
    layer = "toolchain"
    codes = ("libc-headers-missing", "python-headers-missing", "extension-build-failed", "open-files-limit-low")
    facts = _facts.ToolchainExtensionBuildFacts
    # multi_gpu.open_files: the compiler and ld open every input at once (named only when the
    # build failed of it: `ulimit -Sn 12`, tmp26)
    requires = ("toolchain.c_compiler", "toolchain.python_headers", "toolchain.temp_dir", "multi_gpu.open_files")
    probe = "toolchain.extension_build"
    timeout = 120.0

    def on_failure(self, failure, ctx):  # the probe died: EMFILE in what it left
        return build_note(ctx, "the extension-build probe", getattr(failure, "stderr_tail", ""),
                          getattr(failure, "detail", ""))

    def evaluate(self, facts, ctx):
        keep = {"ok": bool(facts["ok"]), "stderr": facts["stderr"] or ""}
        kind = facts["failure_kind"]
        cc = facts["compiler"]
        if kind == "no-compiler":
            return Verdict(Status.BLOCKED, "not attempted: there is no C compiler (see toolchain.c_compiler)", (), keep)
        if kind == "no-tmp":  # tmp24: the build directory cannot even be created
            return Verdict(Status.BLOCKED, f"not attempted: no temporary directory to build in ({facts.get('error')}; "
                           "see toolchain.temp_dir)", (), keep)
        if facts["ok"]:
            return ctx.ok(f"compiled, loaded and called a C extension with {cc} and Triton's flags", **keep)
        stderr = facts["stderr"] or ""
        cmd = " ".join(facts.get("command") or [])
        evidence = f"$ {cmd}\nexit status {facts.get('rc')}\n{stderr}".rstrip()
        missing = facts.get("missing")
        # under a low open-files limit ld says `cannot find crti.o: Too many open files`: not a
        # missing file, the limit (tmp26); the build's own finding is then a plain failure
        findings: List[Finding] = build_note(ctx, f"the C extension build with {cc}", stderr, facts.get("error"),
                                             unexplained=kind == "other")
        if findings and kind in ("python-headers", "libc-headers", "binutils", "compiler-incomplete", "temp-dir"):
            kind = "other"
        if kind == "python-headers":
            findings.append(ctx.finding("python-headers-missing", "build", evidence=evidence, missing=missing,
                                        include_dir=facts["include_dir"],
                                        **header_params(ctx.dep("toolchain.python_headers"))))
        elif kind == "libc-headers":
            findings.append(ctx.finding("libc-headers-missing",
                                        "start-file" if missing and not missing.endswith(".h") else "header",
                                        evidence=evidence, compiler=cc, missing=missing))
        else:
            observed: Dict[str, Any] = {"compiler": cc, "missing": missing, "rc": facts.get("rc")}
            if kind == "binutils":
                variant = "assembler" if missing == "as" else "linker"
            elif kind == "compiler-incomplete":
                variant = "compiler-incomplete"
            elif kind == "compiler-exec":
                variant, observed["error"] = "compiler-exec", facts.get("error")
                evidence = f"$ {cmd}\n{facts.get('error')}"
            elif kind == "load":
                err = facts.get("import_error") or {}
                variant = "load"
                observed.update(error=f"{err.get('type')}: {err.get('message')}", tmpdir=facts.get("tmpdir"))
                evidence = err.get("traceback") or evidence
            elif kind == "temp-dir":  # tmp24
                variant = "temp-dir"
            elif kind == "wrong-result":
                variant, observed["answer"] = "wrong-result", repr(facts.get("answer"))
            else:
                variant = "other"
            findings.append(ctx.finding("extension-build-failed", variant, evidence=evidence, **observed))
        return ctx.verdict(f"a C extension does not build with {cc}", *findings, **keep)


def cxx20_gxx(host) -> Tuple[Optional[str], Optional[str]]:
    """(gcc major, CXX) of a g++ that builds C++20 for torch >= 2.14 from this host's own archive,
    or (None, None) where it has none: gcc 11 is the first whose -std=c++20 sets __cplusplus to
    202002L. g++-12 is in Ubuntu 22.04 and Debian 12 and later, RHEL 8/9's gcc-toolset-12, CentOS
    7's SCL devtoolset-11; Ubuntu 20.04 (a PPA) and Debian 11 (conda-forge's gxx) get the fix's
    words only, not a command that would fail there (chk27)."""
    pm = host.get("pkg_manager")
    distro = str(host.get("distro_id") or "").lower()
    major = str(host.get("distro_version") or "").split(".")[0]
    if pm == "apt":
        old = major.isdigit() and ((distro == "ubuntu" and int(major) < 22) or (distro == "debian" and int(major) < 12))
        return (None, None) if old else ("12", "g++-12")
    if pm == "dnf":
        return "12", "/opt/rh/gcc-toolset-12/root/usr/bin/g++"
    if pm == "yum":
        return "11", "/opt/rh/devtoolset-11/root/usr/bin/g++"
    return None, None


class CxxCompiler(Check):
    """The C++ compiler torch.utils.cpp_extension runs (``CXX``, else ``c++``) compiles C++20
    with ``-std=c++20`` (``__cplusplus`` 202002L, a concept, ``<compare>``), which torch 2.14's
    headers need. Below 2.14 nothing is compiled. Only source builds need it: it degrades."""

    id = "toolchain.cxx_compiler"
    title = "C++ compiler for torch extensions (C++20 from torch 2.14)"
    layer = "toolchain"
    codes = ("extension-cxx-standard-too-old", "cxx-compiler-missing")
    facts = _facts.ToolchainCxxCompilerFacts
    requires = ("config.compiler_environment",)  # a CXX that names nothing is the variable's fault
    probe = "toolchain.cxx_compiler"
    probe_needs = ()
    timeout = 60.0

    def evaluate(self, facts, ctx):
        torch = facts["torch_files"] or {}
        cxx, source = facts["compiler"], facts["source"]
        keep = {"compiler": cxx, "kind": facts.get("kind")}
        if not torch.get("installed"):
            return ctx.skip("torch is not installed: no extension is built against its headers", **keep)
        tv = torch.get("version")
        if not facts["needs_cxx20"]:
            if not tv:
                return ctx.skip("torch's version could not be read: not tested (its headers need C++20 from 2.14)",
                                **keep)
            return ctx.skip(f"torch {tv} does not need C++20 (its headers do from 2.14): not tested", **keep)
        kind = facts.get("kind")
        version = facts.get("compiler_version") or "version unknown"
        # the program PATH gave for CXX's first word (`c++` is often an alternatives link): which one ran
        program = (cxx.split() or [cxx])[0]
        at = f" at {facts['resolved']}" if facts.get("resolved") and facts["resolved"] != program else ""
        if kind == "ok":
            return ctx.ok(f"{cxx}{at} ({version}, from {source}) compiles C++20 for torch {tv}'s headers", **keep)
        stderr = facts.get("stderr") or ""
        first = next((ln.strip() for ln in stderr.splitlines() if "error" in ln), None)
        cmd = " ".join(facts.get("command") or [cxx])
        ran = f"# {program} is {facts['resolved']}\n" if at else ""
        evidence = f"{ran}$ {cmd}\n{facts.get('error') or 'exit status %s' % facts.get('rc')}\n{stderr}".rstrip()
        if kind == "exec":   # no compiler at all: not a question of its C++ standard
            finding = ctx.finding("cxx-compiler-missing", evidence=evidence, torch_version=tv, cxx=cxx,
                                  cxx_source=source, cxx_error=facts.get("error") or f"exit status {facts.get('rc')}")
            return ctx.verdict(f"{cxx} does not run: no C++ compiler for torch {tv}'s extension builds", finding,
                               **keep)
        major, fix_cxx = cxx20_gxx(ctx.host)
        finding = ctx.finding("extension-cxx-standard-too-old", kind if kind in ("flag", "cplusplus", "library")
                              else "other", evidence=evidence, torch_version=tv, cxx=cxx,
                              cxx_source=source, cxx_version=version, cxx_error=first or facts.get("error") or
                              f"exit status {facts.get('rc')}", gxx_major=major, cxx_fix=fix_cxx)
        return ctx.verdict(f"{cxx} does not build C++20 ({version}), which torch {tv}'s headers need", finding, **keep)


class LibcudaDiscovery(Check):
    """Finds libcuda.so.1 the way Triton does: ``TRITON_LIBCUDA_PATH`` (trusted), else the
    ``/sbin/ldconfig -p`` lines naming it (files must exist), else ``LD_LIBRARY_PATH`` only
    when ldconfig lists none."""

    id = "toolchain.libcuda_discovery"
    title = "libcuda.so.1 where Triton looks for it"
    layer = "toolchain"
    codes = ("libcuda-not-in-ldconfig", "ldconfig-missing", "triton-libcuda-path-wrong")
    facts = _facts.ToolchainLibcudaDiscoveryFacts
    requires = ("cuda.driver_api", "config.triton_environment")
    probe = "toolchain.libcuda_discovery"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        if facts.get("triton_installed") is False:
            return ctx.skip("triton is not installed: nothing here looks for libcuda.so.1 the way it does")
        found = list(facts["libcuda_found_in"] or [])
        good_entries = [e["path"] for e in facts["ldconfig_entries"] or [] if e.get("exists")]
        libcuda_dir = (found or [p.rsplit("/", 1)[0] for p in good_entries] or [None])[0]
        override = facts["triton_libcuda_path"]
        driver = ctx.dep("cuda.driver_api")
        keep = {"libcuda_dirs": facts["triton_dirs"] or []}
        if override:
            o = facts.get("override") or {}
            if o.get("has_libcuda_so1"):
                return ctx.ok(f"TRITON_LIBCUDA_PATH={override} holds libcuda.so.1", **keep)
            if not o.get("is_dir"):
                variant = "not-dir"
            elif o.get("is_stubs") or o.get("has_libcuda_so"):
                variant = "stub" if o.get("has_libcuda_so") else "stubs-dir"
            else:
                variant = "no-libcuda"
            linked = facts.get("linker_libcuda")
            if linked:  # the compiler's default directories hold it: the link works here
                return ctx.verdict("TRITON_LIBCUDA_PATH does not hold libcuda.so.1 (the link finds it elsewhere)",
                                   ctx.finding("triton-libcuda-path-wrong", [variant, "linker-finds"],
                                               severity=Severity.DEGRADED, override=override, linked=linked,
                                               libcuda_dir=os.path.dirname(linked)), **keep)
            return ctx.verdict("TRITON_LIBCUDA_PATH does not hold libcuda.so.1",
                               ctx.finding("triton-libcuda-path-wrong",
                                           [variant] + (["found-in"] if libcuda_dir else []),
                                           override=override, libcuda_dir=libcuda_dir), **keep)
        run = facts["ldconfig_run"] or {}
        if run.get("error") or run.get("rc") not in (0, None):
            variant = "missing" if not facts["ldconfig_exists"] else "fails"
            return ctx.verdict("Triton cannot run /sbin/ldconfig",
                               ctx.finding("ldconfig-missing", [variant] + (["found-in"] if libcuda_dir else []),
                                           evidence=run.get("stderr") or "", ldconfig=facts["ldconfig"],
                                           run_error=run.get("error") or f"exit status {run.get('rc')}",
                                           triton_error=(facts["triton_error"] or "").splitlines()[0]
                                           if facts["triton_error"] else "",
                                           libcuda_dir=libcuda_dir), **keep)
        if facts["triton_ok"]:
            stale = [e["path"] for e in facts["ldconfig_entries"] or [] if not e.get("exists")]
            summary = f"libcuda.so.1 found via {facts['triton_source']} in {', '.join(facts['triton_dirs'])}"
            if stale:
                summary += f" (stale cache entries ignored: {', '.join(stale)})"
            return ctx.ok(summary, **keep)
        entries = facts["ldconfig_entries"] or []
        llp = facts["ld_library_path"]
        if entries:
            sentences: List[Optional[str]] = ["stale-llp" if facts["ld_library_path_hits"] else "stale"]
        else:
            sentences = ["none" if llp else "none-no-llp"]
        if libcuda_dir:
            sentences.append("elsewhere")
        elif driver.get("libcuda_loaded") is False or ctx.dep_status.get("cuda.driver_api") in (
                Status.FAIL, Status.BLOCKED):
            sentences.append("not-loadable")
        refresh = "drop the stale entries" if entries and not libcuda_dir else None
        return ctx.verdict("libcuda.so.1 is not where Triton looks",
                           ctx.finding("libcuda-not-in-ldconfig", sentences, evidence=facts["triton_error"] or "",
                                       entries=", ".join(e["path"] for e in entries),
                                       hits=", ".join(facts["ld_library_path_hits"] or []), ld_library_path=llp,
                                       libcuda_dir=libcuda_dir, refresh_reason=refresh), **keep)

def _driver_cuda(dv: Any) -> Optional[str]:
    if isinstance(dv, int) and dv > 0:
        return f"{dv // 1000}.{dv % 1000 // 10}"
    return None


class Ptxas(Check):
    """The ptxas Triton will run for each GPU, found without importing Triton: its bundled
    ``backends/nvidia/bin/ptxas`` / ``ptxas-blackwell`` (which one depends on the GPU's
    compute capability and the Triton version) or the override variable that applies.
    Runs ``--version`` and assembles a tiny PTX with ``--gpu-name=sm_<cc>[a]`` as Triton does,
    and compares the ptxas CUDA major with the driver's."""

    id = "toolchain.ptxas"
    title = "ptxas that Triton will use, for this GPU"
    layer = "toolchain"
    codes = ("ptxas-unusable", "ptxas-arch-unsupported", "ptxas-newer-than-driver")
    facts = _facts.ToolchainPtxasFacts
    requires = ("cuda.driver_api", "config.triton_environment")
    probe = "toolchain.ptxas"
    timeout = 120.0

    def evaluate(self, facts, ctx):
        if not facts["triton_installed"]:
            return ctx.skip("triton is not installed")
        if facts.get("nvidia_backend") is False:
            return ctx.skip(f"triton {facts.get('triton_version')} at {facts.get('triton_path')} has no NVIDIA backend")
        tools: Mapping[str, Any] = facts.get("tools") or {}
        archs = facts.get("archs") or []
        version = facts.get("triton_version")
        findings: List[Finding] = []
        used = {a["tool"] for a in archs}
        for name in sorted(used):
            t = tools.get(name) or {}
            if t.get("error"):
                tried = "; ".join(f"{x.get('path')}: {x.get('error') or 'exit status %s' % x.get('rc')}"
                                  f"{' (mode ' + x['mode'] + ')' if x.get('mode') else ''}"
                                  for x in t.get("tried") or [])
                default = (t.get("tried") or [{}])[-1]
                findings.append(ctx.finding("ptxas-unusable", "cannot-run", evidence="\n".join(
                    (x.get("stderr") or "") for x in t.get("tried") or []).strip(),
                    tool=name, tried=tried, error=t["error"],
                    ptxas_path=default.get("path") if default.get("exists") and not default.get("executable") else None,
                    triton_version=version))
            elif t.get("fell_back"):
                bad = (t.get("tried") or [{}])[0]
                findings.append(ctx.finding("ptxas-unusable", "override-fails", evidence=bad.get("stderr") or "",
                                            severity=Severity.DEGRADED, override_var=t.get("env_var"),
                                            env_var=t.get("env_var"), override=t.get("override"), tool=name,
                                            release=t.get("release"),
                                            run_error=bad.get("error") or f"exit status {bad.get('rc')}"))
        dv = ctx.dep("cuda.driver_api").get("driver_version", facts.get("driver_version"))
        drv = _driver_cuda(dv)
        notes: List[str] = []
        for a in archs:
            asm = a.get("assemble")
            if not asm:
                continue
            alts = a.get("alternatives") or []
            ok_alt = next((x["ptxas"] for x in alts if x.get("accepted") and not x.get("newer_than_driver")), None)
            ignored = a.get("ignored_env") or []
            extra: List[str] = (["ignored"] if ignored else []) + (["alternative"] if ok_alt else [])
            observed = {"tool": a["tool"], "release": a.get("release"), "ptxas": a.get("ptxas"), "cc": a.get("cc"),
                        "gpu_name": asm.get("gpu_name"), "rc": asm.get("rc"), "triton_version": version,
                        "ignored": ", ".join(ignored), "env_var": a.get("env_var"), "alternative": ok_alt}
            if not asm.get("accepted"):
                if a.get("from_device"):
                    findings.append(ctx.finding("ptxas-arch-unsupported", [None] + extra, evidence=_run_evidence(asm),
                                                ptxas_env=a.get("env_var"), ptxas_alternative=ok_alt, **observed))
                else:
                    findings.append(ctx.finding("ptxas-unusable",
                                                "cannot-assemble-error" if asm.get("error") else "cannot-assemble",
                                                evidence=_run_evidence(asm), error=asm.get("error"), **observed))
                continue
            newer = bool(drv and a.get("release")) and int(a["release"].split(".")[0]) > dv // 1000
            if newer and a.get("from_device"):
                findings.append(ctx.finding("ptxas-newer-than-driver", [None] + extra, ptxas_version=a.get("release"),
                                            driver_cuda=drv, ptxas_env=a.get("env_var"), ptxas_alternative=ok_alt,
                                            **observed))
                continue
            who = f"GPU {a['cc']}: " if a.get("from_device") else ""
            notes.append(f"{who}{a['tool']} {a.get('release')} assembles {asm['gpu_name']}" + (
                f" ({', '.join(ignored)} ignored for it)" if ignored and a.get("from_device") else ""))
        known = any(a.get("from_device") for a in archs)
        summary = f"Triton {version}: " + ("" if known else "no GPU known; ") + (", ".join(notes) or "no ptxas run")
        if findings:
            summary = f"Triton {version}: " + "; ".join(dict.fromkeys(f.title for f in findings))
        return ctx.verdict(summary, *findings)


class TritonCache(Check):
    """Triton's cache dir resolved as Triton does (``TRITON_CACHE_DIR``, else
    ``${TRITON_HOME:-~}/.triton/cache``), then a real write and an executable mapping in it
    (as dlopen of a cached helper does), free space, mount flags, and the ``file`` program
    that Triton's build-cache key depends on."""

    id = "toolchain.triton_cache"
    volatile = True  # free space: measured again on every run (runner/cache.py)
    title = "Triton cache directory and build-cache key"
    layer = "toolchain"
    codes = ("triton-cache-unusable", "file-command-missing")
    facts = _facts.ToolchainTritonCacheFacts
    requires = ("config.triton_environment",)  # TRITON_CACHE_DIR / TRITON_HOME
    probe_needs = ()
    probe = "toolchain.triton_cache"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        if facts.get("triton_installed") is False:
            return ctx.skip("triton is not installed: no Triton cache is used")
        d = facts["cache_dir"]
        keep = {"cache_dir": d, "writable": bool(facts["writable"]), "file_program": facts["file_program"]}
        findings: List[Finding] = []
        mount = facts.get("mount") or {}
        where = f"{mount.get('mount_point')} ({mount.get('fstype')}, {','.join(mount.get('options') or [])})" \
            if mount else "unknown mount"
        tested = facts.get("tested_dir")
        origin = {"TRITON_CACHE_DIR": "from TRITON_CACHE_DIR", "TRITON_HOME": "from TRITON_HOME",
                  "HOME": "from HOME", "passwd": "HOME unset, home from /etc/passwd",
                  "unresolved ~": "HOME unset and this user has no passwd entry"}.get(facts["source"], "")
        observed = {"cache_dir": d, "origin": origin, "mount": where}
        if facts["empty"]:
            findings.append(ctx.finding("triton-cache-unusable", "empty", **observed))
        elif not facts["writable"]:
            if facts.get("not_a_directory"):
                target = f"{d} (a file, not a directory)"
            elif tested == facts.get("abs_path"):
                target = d
            else:
                target = f"{d} (does not exist; its nearest existing parent {tested})"
            findings.append(ctx.finding("triton-cache-unusable", "not-writable", evidence=facts["write_error"] or "",
                                        target=target, write_error=facts["write_error"], **observed))
        elif facts.get("exec_ok") is False:
            findings.append(ctx.finding("triton-cache-unusable", "no-exec", evidence=facts.get("exec_error") or "",
                                        exec_error=facts.get("exec_error"), **observed))
        elif facts.get("free_bytes") is not None and facts["free_bytes"] < MIN_CACHE_FREE:
            findings.append(ctx.finding("triton-cache-unusable", "no-space", free_kib=facts["free_bytes"] // 1024,
                                        **observed))
        elif facts.get("free_inodes") == 0:
            findings.append(ctx.finding("triton-cache-unusable", "no-inodes", **observed))
        if facts["relative"] and not findings:
            findings.append(ctx.finding("triton-cache-unusable", "relative", severity=Severity.DEGRADED, **observed))
        if not facts["file_program"]:
            helpers = facts.get("cached_helpers") or []
            findings.append(ctx.finding("file-command-missing", [None] + (["helpers"] if helpers else []),
                                        platform_key=facts["platform_key"],
                                        platform_key_with_file=facts["platform_key_with_file"],
                                        helpers=len(helpers), first_helper=helpers[0] if helpers else None))
        if findings:
            return ctx.verdict("; ".join(f.title for f in findings), *findings, **keep)
        free = _gib(facts.get("free_bytes"))
        state = "exists" if facts.get("exists") else f"will be created under {tested}"
        return ctx.ok(f"{d} ({origin}) {state}: writable, exec allowed, {free} free; build-cache key "
                      f"{facts['platform_key']}", **keep)


class Nvcc(Check):
    """nvcc for building CUDA extensions (causal-conv1d...), found the way
    ``torch.utils.cpp_extension`` finds it (CUDA_HOME / CUDA_PATH, ``which nvcc``,
    ``/usr/local/cuda``), and its CUDA major against torch's. Only source builds need it,
    so its problems degrade rather than block."""

    id = "toolchain.nvcc"
    title = "nvcc for CUDA extension builds"
    layer = "toolchain"
    codes = ("nvcc-missing", "nvcc-torch-cuda-mismatch")
    facts = _facts.ToolchainNvccFacts
    requires = ("torch.cuda", "config.cuda_home_environment")
    probe = "toolchain.nvcc"
    probe_needs = ()  # torch's CUDA version only matters to the verdict
    timeout = 45.0

    def evaluate(self, facts, ctx):
        torch = dict(facts["torch_files"] or {})
        dep = ctx.dep("torch.cuda")
        if "installed" in dep:
            torch.update({k: dep.get(k) for k in ("installed", "version", "cuda")})
        nvcc, ver = facts["nvcc"], facts.get("nvcc_version")
        keep = {"nvcc": nvcc if facts.get("nvcc_exists") else None, "nvcc_version": ver}
        if not torch.get("installed"):
            return ctx.skip("torch is not installed; nvcc only matters for building CUDA extensions for it", **keep)
        tcuda = torch.get("cuda")
        have = f"nvcc {ver} at {nvcc}" if ver else None
        if not tcuda:
            return ctx.ok((have or "no nvcc") + f"; torch {torch.get('version')} is a CPU-only build, so no CUDA "
                          "extension is built for it", **keep)
        tmm = ".".join(str(tcuda).split(".")[:2])
        params = {"torch_cuda_mm": tmm, "torch_cuda_pkg": tmm.replace(".", "-"),
                  "torch_cuda_major": tmm.split(".")[0], "nvcc_version": ver}
        params.update(torch_version=torch.get("version"), torch_cuda=tcuda, nvcc=nvcc, nvcc_source=facts["source"],
                      cuda_home=facts["cuda_home"])
        if not ver:
            if not facts["cuda_home"]:
                variant = "no-cuda"
            elif not facts.get("nvcc_exists"):
                variant = "not-found"
            else:
                variant = "fails"
            pip_nvcc = facts["pip_nvcc"] or []
            return ctx.verdict("no usable nvcc for CUDA extension builds",
                               ctx.finding("nvcc-missing", [variant] + (["pip-nvcc"] if pip_nvcc else []),
                                           evidence=facts.get("nvcc_stderr") or "",
                                           error=facts.get("nvcc_error") or f"exit status {facts.get('nvcc_rc')}",
                                           pip_nvcc=pip_nvcc[0] if pip_nvcc else None, **params), **keep)
        if ver.split(".")[0] != tmm.split(".")[0]:
            return ctx.verdict(f"nvcc {ver} does not match torch's CUDA {tcuda}",
                               ctx.finding("nvcc-torch-cuda-mismatch", **params), **keep)
        note = "" if ver == tmm else f" (minor differs from torch's {tcuda}: torch only logs a warning)"
        return ctx.ok(f"{have} matches torch's CUDA {tcuda}{note}", **keep)


# -- tmp24: the temporary directory -------------------------------------------------------

#: Below this much free space in the temporary directory a build of Triton's helpers fails (blocking).
#: Measured (gcc 12.2, Triton 3.9's backends/nvidia/driver.c, -O3 -fPIC): source 57 KB, gcc's
#: ccXXXXXX.s 108 KB and ccXXXXXX.o 54 KB live at once, plus the built .so: about 0.3 MB per helper.
MIN_TMP_FREE = 1024 * 1024
#: Below this, degraded. Measured (tmp25: peak bytes in TMPDIR on a tmpfs of its own, sampled every 2-5 ms,
#: and confirmed by a smaller tmpfs failing): Triton's helper 164 KiB (128 KiB fails), the extension-build
#: probe 32 KiB (16 KiB fails); torch.utils.cpp_extension.load_inline of a one-line CPU op 5.7 MiB (g++'s
#: .s; 4 MiB fails); nvcc 13.0 on a small CUDA op including <torch/extension.h> 54 MiB for sm_90
#: (48 MiB fails: 'when writing output to .../tmpxft_..._k.cpp1.ii: No space left on device') and 74 MiB
#: for sm_80+sm_90; torch.compile's C++ backend (CPU, torch 2.13) a 149 MiB precompiled header under
#: torchinductor_<user> in the temporary directory. 256 MiB: the largest of these (149 MiB) with a 1.7x
#: margin, which also holds the nvcc build for about six architectures (+20 MiB each, extrapolated)
LOW_TMP_FREE = 256 * 1024 * 1024


def _mount_text(entry: Optional[Mapping[str, Any]]) -> str:
    m = (entry or {}).get("mount") or {}
    if not m:
        return "unknown mount"
    return f"mount {m.get('mount_point')}, {m.get('fstype')}, {','.join(m.get('options') or [])}"


class TempDir(Check):
    """The temporary directory Triton's builds and the compilers use: ``tempfile.gettempdir()``
    in the target interpreter (TMPDIR, TEMP, TMP, /tmp, /var/tmp, /usr/tmp, the working
    directory: the first one a file can be created in), and the one gcc picks (libiberty:
    TMPDIR, TMP, TEMP, /tmp, /var/tmp, /usr/tmp by access(), else the working directory), with a
    real write and the free space of each. A variable that names an unusable directory is named
    even when the fallback works."""

    id = "toolchain.temp_dir"
    volatile = True  # free space: measured again on every run
    title = "Temporary directory for Triton's builds and the compiler"
    layer = "toolchain"
    codes = ("temp-dir-unusable",)
    facts = _facts.ToolchainTempDirFacts
    probe = "toolchain.temp_dir"
    probe_needs = ()
    timeout = 15.0

    def evaluate(self, facts, ctx):
        py_dir, cc_dir = facts["python_tmpdir"], facts["compiler_tmpdir"]
        cc = facts["compiler"] or {}
        py = facts["python"] or {}
        keep = {"python_tmpdir": py_dir, "compiler_tmpdir": cc_dir}
        skipped = list(facts["skipped"] or [])
        extra: List[Optional[str]] = []
        params: Dict[str, Any] = {"python_tmpdir": py_dir, "compiler_tmpdir": cc_dir}
        if skipped:
            first = skipped[0]
            extra.append("env-skipped" if py_dir else "env-skipped-none")
            params.update(var=first.get("var"), value=first.get("path"), var_error=first.get("write_error"))
        elsewhere = ["python-elsewhere"] if py_dir and os.path.abspath(py_dir) != cc_dir else []
        if facts["python_error"]:
            finding = ctx.finding("temp-dir-unusable", ["none"] + extra, evidence=facts["python_error"],
                                  python_error=facts["python_error"], **params)
            return ctx.verdict("no usable temporary directory", finding, **keep)
        if cc.get("write_error") and "[Errno 28]" not in cc["write_error"]:  # ENOSPC: the no-space case below
            finding = ctx.finding("temp-dir-unusable", ["compiler-unwritable"] + elsewhere + extra,
                                  evidence=cc["write_error"], compiler_mount=_mount_text(cc),
                                  compiler_error=cc["write_error"], **params)
            return ctx.verdict(f"gcc's temporary directory {cc_dir} cannot be written", finding, **keep)
        for limit, variant, sev in ((MIN_TMP_FREE, "no-space", None), (LOW_TMP_FREE, "low-space", Severity.DEGRADED)):
            low = [(d, e) for d, e in ((cc_dir, cc), (py_dir, py))
                   if e.get("free_bytes") is not None and e["free_bytes"] < limit
                   or "[Errno 28]" in (e.get("write_error") or "")]
            if low:
                d, e = low[0]
                if e.get("free_bytes") is not None and e["free_bytes"] >= limit:
                    variant = "no-files"  # ENOSPC with room left: the file system's inodes are used up
                finding = ctx.finding("temp-dir-unusable", [variant] + elsewhere + extra, severity=sev, tmp_dir=d,
                                      evidence=e.get("write_error") or "",
                                      tmp_mount=_mount_text(e), free_kib=(e.get("free_bytes") or 0) // 1024,
                                      need_kib=limit // 1024, write_error=e.get("write_error") or "", **params)
                return ctx.verdict(f"the temporary directory {d} is {'full' if sev is None else 'nearly full'}",
                                   finding, **keep)
        free = _gib(cc.get("free_bytes"))
        if skipped:
            finding = ctx.finding("temp-dir-unusable", extra + elsewhere, severity=Severity.DEGRADED, **params)
            return ctx.verdict(f"{params['var']} names an unusable directory; {py_dir} used instead", finding, **keep)
        where = py_dir if os.path.abspath(py_dir or "") == cc_dir else f"{py_dir} (Python), {cc_dir} (gcc)"
        return ctx.ok(f"{where}: writable, {free} free", **keep)


__all__ = ["CCompiler", "CxxCompiler", "ExtensionBuild", "LibcudaDiscovery", "Nvcc", "PythonHeaders", "Ptxas",
           "TempDir", "TritonCache", "header_params"]
