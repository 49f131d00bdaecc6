"""Toolchain layer: what Triton needs around it to build its C helper, find libcuda,
assemble PTX and cache its output, and what CUDA extension builds need (nvcc).

Each probe re-does Triton's own lookup (compiler order, include dir, ``/sbin/ldconfig -p``,
ptxas selection, cache dir, build-cache key) without importing Triton, and then does the
real thing: compiles and loads a C extension, assembles PTX, writes and maps a file in
the cache dir. See FAILURE_MODES T1-T13 for the failures these checks name.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ..model import Finding, Severity, Status
from .base import Check, Verdict

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
    probe = "toolchain.c_compiler"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        cc, source = facts.get("compiler"), facts.get("source")
        keep = {"compiler": cc, "source": source}
        if cc is None:
            path = facts.get("path_env")
            hints: List[str] = []
            alt = None
            if facts.get("plain_cc"):
                alt = facts["plain_cc"]
                what = f" ({facts['plain_cc_version']})" if facts.get("plain_cc_version") else ""
                hints.append(f"`cc` exists at {alt}{what}, but Triton never looks for plain `cc`; export CC to use it.")
            if facts.get("conda_gcc"):
                alt = alt or facts["conda_gcc"][0]
                hints.append(f"This conda environment has {facts['conda_gcc'][0]}, which Triton finds only when the "
                             "environment is activated (activation exports CC).")
            msg = (f"CC is unset and neither gcc nor clang is on PATH ({path if path is not None else 'PATH unset'}). "
                   "Triton raises 'RuntimeError: Failed to find C compiler. Please specify via CC environment variable "
                   "or set triton.knobs.build.impl.' the first time it builds its CUDA helper, so every Triton kernel "
                   "(FLA, torch.compile) fails.")
            if hints:
                msg += " " + " ".join(hints)
            return ctx.verdict("no C compiler that Triton can find",
                               ctx.finding("no-c-compiler", message=msg, cc_path=alt), **keep)
        if not facts.get("works"):
            run = facts.get("version_run") or {}
            if source == "CC":
                if cc == "":
                    what = "CC is set but empty"
                elif not facts.get("resolved"):
                    if " " in cc.strip():
                        what = (f"CC={cc!r} holds several words, but Triton runs CC as one program name without "
                                "splitting it, so no such program exists")
                    elif "/" in cc:
                        what = f"CC={cc} names a file that does not exist"
                    else:
                        what = f"CC={cc} names a program that is not on PATH"
                elif not facts.get("executable"):
                    what = f"CC={cc} is not executable"
                else:
                    what = f"CC={cc} does not run: `{cc} --version` failed ({run.get('error') or 'exit status %s' % run.get('rc')})"
            else:
                what = (f"{source.split()[-1]} on PATH ({cc}) does not run: `--version` failed "
                        f"({run.get('error') or 'exit status %s' % run.get('rc')})")
            msg = (f"{what}. Triton uses this compiler without checking it, so building its CUDA helper fails "
                   "(FileNotFoundError or subprocess.CalledProcessError) and every Triton kernel fails.")
            return ctx.verdict(f"the C compiler Triton would use ({cc or 'empty CC'}) does not run",
                               ctx.finding("c-compiler-broken", message=msg, evidence=_run_evidence(run),
                                           cc_env=(cc or "(empty)") if source == "CC" and "\n" not in cc else None,
                                           compiler_pkg=None if source == "CC" else source.split()[-1]), **keep)
        summary = f"{facts.get('version') or cc} at {facts.get('resolved') or cc} (from {source})"
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


def _kind_note(h: Mapping[str, Any]) -> str:
    kind = h.get("kind")
    if kind in ("conda", "pyenv", "standalone"):
        return (f" This is a {kind} interpreter ({h.get('base_prefix')}), which ships its headers: they were "
                "removed, so reinstall the interpreter (a distro package would not put them in its include dir).")
    if kind == "system":
        return " This is the distro's Python: its headers come in a separate development package."
    if kind == "local":
        return (f" This interpreter lives in {h.get('base_prefix')} (built from source or an official python "
                "image), which normally has its headers: reinstall it.")
    return ""


class PythonHeaders(Check):
    """``Python.h`` in the include dir Triton compiles against: ``sysconfig.get_paths(scheme)
    ["include"]`` of the target interpreter, with Debian's ``posix_local`` read as
    ``posix_prefix`` (for a venv, the base interpreter's headers)."""

    id = "toolchain.python_headers"
    title = "Python headers for building C extensions"
    layer = "toolchain"
    codes = ("python-headers-missing",)
    probe = "toolchain.python_headers"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        where = facts.get("python_h")
        if facts.get("python_h_exists") and facts.get("python_h_readable"):
            return ctx.ok(f"Python.h found in {facts.get('include_dir')} (scheme {facts.get('scheme')})")
        if facts.get("python_h_exists"):
            state = f"{where} exists but is not readable by this user"
        elif facts.get("include_dir_exists"):
            state = f"{where} does not exist (the directory {facts.get('include_dir')} exists without it)"
        else:
            state = f"{where} does not exist (nor does its directory)"
        msg = (f"{state}; that is the include dir Triton passes to the compiler for Python "
               f"{facts.get('python_version')} (scheme {facts.get('scheme')}). Building Triton's CUDA helper fails "
               "with 'fatal error: Python.h: No such file or directory' and a bare CalledProcessError, so every "
               "Triton kernel fails." + _kind_note(facts))
        return ctx.verdict(f"Python.h missing for Python {facts.get('python_version')}",
                           ctx.finding("python-headers-missing", message=msg, **header_params(facts)))


class ExtensionBuild(Check):
    """Compiles and links a real Python extension (``#include <Python.h>``, dlopen) with Triton's
    exact command line, then imports it and calls it. Tells missing Python headers, missing
    C library headers and other build failures apart from the compiler's stderr."""

    id = "toolchain.extension_build"
    title = "Build and load a C extension the way Triton does"
    layer = "toolchain"
    codes = ("libc-headers-missing", "python-headers-missing", "extension-build-failed")
    requires = ("toolchain.c_compiler", "toolchain.python_headers")
    probe = "toolchain.extension_build"
    timeout = 120.0

    def evaluate(self, facts, ctx):
        keep = {"ok": bool(facts.get("ok")), "stderr": facts.get("stderr") or ""}
        kind = facts.get("failure_kind")
        cc = facts.get("compiler")
        if kind == "no-compiler":
            return Verdict(Status.BLOCKED, "not attempted: there is no C compiler (see toolchain.c_compiler)", (), keep)
        if facts.get("ok"):
            return ctx.ok(f"compiled, loaded and called a C extension with {cc} and Triton's flags", **keep)
        stderr = facts.get("stderr") or ""
        cmd = " ".join(facts.get("command") or [])
        evidence = f"$ {cmd}\nexit status {facts.get('rc')}\n{stderr}".rstrip()
        missing = facts.get("missing")
        findings: List[Finding] = []
        if kind == "python-headers":
            msg = (f"Compiling a C extension with Triton's command failed: {missing} was not found with "
                   f"-I{facts.get('include_dir')}. Triton's CUDA helper build fails the same way, so every Triton "
                   "kernel fails.")
            findings.append(ctx.finding("python-headers-missing", message=msg, evidence=evidence,
                                        **header_params(ctx.dep("toolchain.python_headers"))))
        elif kind == "libc-headers":
            what = "start file" if missing and not missing.endswith(".h") else "header"
            msg = (f"{cc} runs but cannot find the C library {what} {missing}, so it cannot build anything: "
                   "Triton's CUDA helper build fails with a bare CalledProcessError and every Triton kernel fails.")
            findings.append(ctx.finding("libc-headers-missing", message=msg, evidence=evidence))
        else:
            if kind == "binutils":
                what = f"{cc} cannot run the {'assembler' if missing == 'as' else 'linker'} `{missing}` (binutils)"
            elif kind == "compiler-incomplete":
                what = f"{cc} is incomplete: it cannot run its own `{missing}`"
            elif kind == "compiler-exec":
                what = f"{cc} could not be started ({facts.get('error')})"
                evidence = f"$ {cmd}\n{facts.get('error')}"
            elif kind == "load":
                err = facts.get("import_error") or {}
                what = (f"the extension built, but importing it failed ({err.get('type')}: {err.get('message')}); "
                        f"it was built in {facts.get('tmpdir')}")
                evidence = err.get("traceback") or evidence
            elif kind == "wrong-result":
                what = f"the extension built and loaded but returned {facts.get('answer')!r} instead of 42"
            else:
                what = f"{cc} failed to build a minimal extension (exit status {facts.get('rc')})"
            msg = (f"Building a C extension with Triton's command failed: {what}. Triton's CUDA helper build "
                   "fails the same way, so every Triton kernel fails.")
            findings.append(ctx.finding("extension-build-failed", message=msg, evidence=evidence))
        return ctx.verdict(f"a C extension does not build with {cc}", *findings, **keep)


class LibcudaDiscovery(Check):
    """Finds libcuda.so.1 the way Triton does: ``TRITON_LIBCUDA_PATH`` (trusted), else the
    ``/sbin/ldconfig -p`` lines naming it (files must exist), else ``LD_LIBRARY_PATH`` only
    when ldconfig lists none."""

    id = "toolchain.libcuda_discovery"
    title = "libcuda.so.1 where Triton looks for it"
    layer = "toolchain"
    codes = ("libcuda-not-in-ldconfig", "ldconfig-missing", "triton-libcuda-path-wrong")
    requires = ("cuda.driver_api",)
    probe = "toolchain.libcuda_discovery"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        found = list(facts.get("libcuda_found_in") or [])
        good_entries = [e["path"] for e in facts.get("ldconfig_entries") or [] if e.get("exists")]
        libcuda_dir = (found or [p.rsplit("/", 1)[0] for p in good_entries] or [None])[0]
        override = facts.get("triton_libcuda_path")
        driver = ctx.dep("cuda.driver_api")
        keep = {"libcuda_dirs": facts.get("triton_dirs") or []}
        if override:
            o = facts.get("override") or {}
            if o.get("has_libcuda_so1"):
                return ctx.ok(f"TRITON_LIBCUDA_PATH={override} holds libcuda.so.1", **keep)
            if not o.get("is_dir"):
                state = "is not a directory"
            elif o.get("is_stubs") or o.get("has_libcuda_so"):
                state = ("holds only libcuda.so (the CUDA toolkit's link-time stub), not the driver's libcuda.so.1"
                         if o.get("has_libcuda_so") else "is a stubs directory without libcuda.so.1")
            else:
                state = "has no libcuda.so.1"
            msg = (f"TRITON_LIBCUDA_PATH={override} {state}. Triton trusts this variable without checking and links "
                   "its CUDA helper with -l:libcuda.so.1 from there, so the build fails with 'cannot find "
                   "-l:libcuda.so.1' and a bare CalledProcessError (on Triton 3.6/3.7 only once the cache misses).")
            if libcuda_dir:
                msg += f" libcuda.so.1 is in {libcuda_dir}."
            return ctx.verdict("TRITON_LIBCUDA_PATH does not hold libcuda.so.1",
                               ctx.finding("triton-libcuda-path-wrong", message=msg, libcuda_dir=libcuda_dir), **keep)
        run = facts.get("ldconfig_run") or {}
        if run.get("error") or run.get("rc") not in (0, None):
            if not facts.get("ldconfig_exists"):
                state = f"{facts.get('ldconfig')} does not exist"
            else:
                state = f"`{facts.get('ldconfig')} -p` fails ({run.get('error') or 'exit status %s' % run.get('rc')})"
            msg = (f"{state}, and TRITON_LIBCUDA_PATH is unset. Triton runs exactly that command to find libcuda.so.1, "
                   f"so its first use fails with '{(facts.get('triton_error') or '').splitlines()[0]}'.")
            if libcuda_dir:
                msg += f" libcuda.so.1 is in {libcuda_dir}."
            return ctx.verdict("Triton cannot run /sbin/ldconfig",
                               ctx.finding("ldconfig-missing", message=msg, evidence=run.get("stderr") or "",
                                           libcuda_dir=libcuda_dir), **keep)
        if facts.get("triton_ok"):
            stale = [e["path"] for e in facts.get("ldconfig_entries") or [] if not e.get("exists")]
            summary = f"libcuda.so.1 found via {facts.get('triton_source')} in {', '.join(facts.get('triton_dirs'))}"
            if stale:
                summary += f" (stale cache entries ignored: {', '.join(stale)})"
            return ctx.ok(summary, **keep)
        entries = facts.get("ldconfig_entries") or []
        if entries:
            state = ("the linker cache (`/sbin/ldconfig -p`) lists libcuda.so.1 at "
                     + ", ".join(e["path"] for e in entries)
                     + ", but none of those files exists (a stale cache: the driver was removed or not mounted)")
            if facts.get("ld_library_path_hits"):
                state += (f"; LD_LIBRARY_PATH has it in {', '.join(facts['ld_library_path_hits'])}, but Triton reads "
                          "LD_LIBRARY_PATH only when the cache lists no libcuda.so.1")
        else:
            llp = facts.get("ld_library_path")
            state = ("the linker cache (`/sbin/ldconfig -p`) lists no libcuda.so.1 and LD_LIBRARY_PATH "
                     + (f"({llp}) has none" if llp else "is unset"))
        msg = (f"Triton cannot find libcuda.so.1: {state}. Its first use raises 'AssertionError: libcuda.so cannot "
               "found!', even with a warm cache, so every Triton kernel fails.")
        if libcuda_dir:
            msg += f" libcuda.so.1 exists in {libcuda_dir}, which Triton does not search."
        elif driver.get("libcuda_loaded") is False or ctx.dep_status.get("cuda.driver_api") in (
                Status.FAIL, Status.BLOCKED):
            msg += (" The dynamic loader cannot load it either (see cuda.driver_api): the driver's user-space library "
                    "is not installed on this machine or not mounted into this container.")
        refresh = "drop the stale entries" if entries and not libcuda_dir else None
        return ctx.verdict("libcuda.so.1 is not where Triton looks",
                           ctx.finding("libcuda-not-in-ldconfig", message=msg, evidence=facts.get("triton_error") or "",
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
    requires = ("cuda.driver_api",)
    probe = "toolchain.ptxas"
    timeout = 120.0

    def evaluate(self, facts, ctx):
        if not facts.get("triton_installed"):
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
                msg = (f"Triton {version} cannot run its {name}: {tried}. Every kernel needs it (its --version is "
                       f"part of each kernel's cache key, even for cached kernels), so Triton raises '{t['error']}'.")
                findings.append(ctx.finding("ptxas-unusable", message=msg, evidence="\n".join(
                    (x.get("stderr") or "") for x in t.get("tried") or []).strip(),
                    ptxas_path=default.get("path") if default.get("exists") and not default.get("executable") else None,
                    triton_version=version))
            elif t.get("fell_back"):
                bad = (t.get("tried") or [{}])[0]
                msg = (f"{t.get('env_var')}={t.get('override')} does not run ({bad.get('error') or 'exit status %s' % bad.get('rc')}), "
                       f"so Triton silently uses its bundled {name} {t.get('release')} instead of the one you chose.")
                findings.append(ctx.finding("ptxas-unusable", message=msg, evidence=bad.get("stderr") or "",
                                            severity=Severity.DEGRADED, override_var=t.get("env_var")))
        dv = ctx.dep("cuda.driver_api").get("driver_version", facts.get("driver_version"))
        drv = _driver_cuda(dv)
        notes: List[str] = []
        for a in archs:
            asm = a.get("assemble")
            if not asm:
                continue
            chosen = f"{a['tool']} of CUDA {a.get('release')} ({a.get('ptxas')})"
            alts = a.get("alternatives") or []
            ok_alt = next((x["ptxas"] for x in alts if x.get("accepted") and not x.get("newer_than_driver")), None)
            ignored = a.get("ignored_env") or []
            ignored_note = (f" {', '.join(ignored)} is set but Triton {version} ignores it for this GPU; the variable "
                            f"that applies is {a.get('env_var')}." if ignored else "")
            if not asm.get("accepted"):
                if a.get("from_device"):
                    msg = (f"The GPU has compute capability {a['cc']}, so Triton {version} asks {chosen} for "
                           f"--gpu-name={asm['gpu_name']}, and ptxas rejects it (exit status {asm.get('rc')}). Every "
                           "Triton kernel compile fails with PTXASError, so FLA and torch.compile fail at their first "
                           "kernel." + ignored_note)
                    if ok_alt:
                        msg += f" {ok_alt} on this machine accepts it."
                    findings.append(ctx.finding("ptxas-arch-unsupported", message=msg, evidence=_run_evidence(asm),
                                                ptxas_env=a.get("env_var"), ptxas_alternative=ok_alt))
                else:
                    msg = (f"{chosen} fails to assemble a minimal PTX for {asm['gpu_name']} (exit status "
                           f"{asm.get('rc')}{', ' + asm['error'] if asm.get('error') else ''}), so Triton cannot "
                           "compile kernels with it.")
                    findings.append(ctx.finding("ptxas-unusable", message=msg, evidence=_run_evidence(asm),
                                                triton_version=version))
                continue
            newer = bool(drv and a.get("release")) and int(a["release"].split(".")[0]) > dv // 1000
            if newer and a.get("from_device"):
                msg = (f"Triton {version} assembles kernels for compute capability {a['cc']} with {chosen}, but the "
                       f"driver supports CUDA {drv} only. Cubins of a newer CUDA major do not load on an older "
                       "driver: the first launch fails with 'Triton Error [CUDA]: device kernel image is invalid'."
                       + ignored_note)
                if ok_alt:
                    msg += f" {ok_alt} on this machine is not newer than the driver and accepts this GPU."
                findings.append(ctx.finding("ptxas-newer-than-driver", message=msg, ptxas_version=a.get("release"),
                                            driver_cuda=drv, ptxas_env=a.get("env_var"), ptxas_alternative=ok_alt))
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
    probe = "toolchain.triton_cache"
    timeout = 30.0

    def evaluate(self, facts, ctx):
        d = facts.get("cache_dir")
        keep = {"cache_dir": d, "writable": bool(facts.get("writable")), "file_program": facts.get("file_program")}
        findings: List[Finding] = []
        mount = facts.get("mount") or {}
        where = f"{mount.get('mount_point')} ({mount.get('fstype')}, {','.join(mount.get('options') or [])})" \
            if mount else "unknown mount"
        tested = facts.get("tested_dir")
        origin = {"TRITON_CACHE_DIR": "from TRITON_CACHE_DIR", "TRITON_HOME": "from TRITON_HOME",
                  "HOME": "from HOME", "passwd": "HOME unset, home from /etc/passwd",
                  "unresolved ~": "HOME unset and this user has no passwd entry"}.get(facts.get("source"), "")
        consequence = ("Triton cannot store or load compiled kernels and its CUDA helper, so every Triton kernel "
                       "fails (FLA falls back to CPU with only a generic warning).")
        if facts.get("empty"):
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message="TRITON_CACHE_DIR is set but empty; Triton raises 'RuntimeError: Could not create or locate cache dir'. "
                + consequence))
        elif not facts.get("writable"):
            target = d if tested == facts.get("abs_path") else f"{d} (does not exist; its nearest existing parent {tested})"
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message=f"Triton's cache dir {target} ({origin}) cannot be written: {facts.get('write_error')}; mount "
                f"{where}. " + consequence, evidence=facts.get("write_error") or ""))
        elif facts.get("exec_ok") is False:
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message=f"Triton's cache dir {d} ({origin}) is writable but files in it cannot be mapped executable "
                f"({facts.get('exec_error')}; mount {where}): loading a cached helper fails with 'failed to map "
                "segment from shared object'. " + consequence, evidence=facts.get("exec_error") or ""))
        elif facts.get("free_bytes") is not None and facts["free_bytes"] < MIN_CACHE_FREE:
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message=f"Triton's cache dir {d} has {facts['free_bytes'] // 1024} KiB free on {where}; writes of compiled "
                "kernels are about to fail with 'No space left on device'. " + consequence))
        elif facts.get("free_inodes") == 0:
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message=f"The file system of Triton's cache dir {d} has no free inodes ({where}); Triton cannot create "
                "files there. " + consequence))
        if facts.get("relative") and not findings:
            findings.append(ctx.finding(
                "triton-cache-unusable",
                message=f"Triton's cache dir is the relative path {d} ({origin}): each process puts its cache under its "
                "own working directory, so caches are scattered and lost, and a read-only working directory breaks "
                "Triton.", severity=Severity.DEGRADED))
        if not facts.get("file_program"):
            helpers = facts.get("cached_helpers") or []
            extra = (f" This cache holds {len(helpers)} compiled helper(s), e.g. {helpers[0]}, that a run with "
                     "`file` may have keyed differently." if helpers else "")
            findings.append(ctx.finding(
                "file-command-missing",
                message=f"`file` is not on PATH, so platform.architecture() returns no linkage and Triton's build-cache key "
                f"is '{facts.get('platform_key')}' instead of '{facts.get('platform_key_with_file')}'. A Triton "
                "cache warmed where `file` exists is cold here: Triton rebuilds its helpers and then needs a working "
                "C compiler at runtime." + extra))
        if findings:
            return ctx.verdict("; ".join(f.title for f in findings), *findings, **keep)
        free = _gib(facts.get("free_bytes"))
        state = "exists" if facts.get("exists") else f"will be created under {tested}"
        return ctx.ok(f"{d} ({origin}) {state}: writable, exec allowed, {free} free; build-cache key "
                      f"{facts.get('platform_key')}", **keep)


class Nvcc(Check):
    """nvcc for building CUDA extensions (causal-conv1d...), found the way
    ``torch.utils.cpp_extension`` finds it (CUDA_HOME / CUDA_PATH, ``which nvcc``,
    ``/usr/local/cuda``), and its CUDA major against torch's. Only source builds need it,
    so its problems degrade rather than block."""

    id = "toolchain.nvcc"
    title = "nvcc for CUDA extension builds"
    layer = "toolchain"
    codes = ("nvcc-missing", "nvcc-torch-cuda-mismatch")
    requires = ("torch.cuda",)
    probe = "toolchain.nvcc"
    probe_needs = ()  # torch's CUDA version only matters to the verdict
    timeout = 45.0

    def evaluate(self, facts, ctx):
        torch = dict(facts.get("torch_files") or {})
        dep = ctx.dep("torch.cuda")
        if "installed" in dep:
            torch.update({k: dep.get(k) for k in ("installed", "version", "cuda")})
        nvcc, ver = facts.get("nvcc"), facts.get("nvcc_version")
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
        consequence = (f"Source builds of CUDA extensions for torch {torch.get('version')} (CUDA {tcuda}) fail, e.g. "
                       "causal-conv1d without a matching prebuilt wheel; prebuilt wheels and Triton kernels are "
                       "unaffected.")
        if not ver:
            if not facts.get("cuda_home"):
                state = ("torch's lookup finds no CUDA: CUDA_HOME and CUDA_PATH are unset, `nvcc` is not on PATH and "
                         "/usr/local/cuda does not exist")
            elif not facts.get("nvcc_exists"):
                state = (f"torch's lookup settles on CUDA_HOME={facts['cuda_home']} (from {facts.get('source')}) "
                         f"but {nvcc} does not exist (torch: \"FileNotFoundError: nvcc not found at '{nvcc}'\")")
            else:
                state = (f"{nvcc} (from {facts.get('source')}) does not run: "
                         f"{facts.get('nvcc_error') or 'exit status %s' % facts.get('nvcc_rc')}")
            if facts.get("pip_nvcc"):
                state += f"; a pip-installed nvcc exists at {facts['pip_nvcc'][0]} but torch does not look there"
            return ctx.verdict("no usable nvcc for CUDA extension builds",
                               ctx.finding("nvcc-missing", message=f"{state}. {consequence}",
                                           evidence=facts.get("nvcc_stderr") or "", **params), **keep)
        if ver.split(".")[0] != tmm.split(".")[0]:
            msg = (f"nvcc at {nvcc} (from {facts.get('source')}) is CUDA {ver}, but torch {torch.get('version')} "
                   f"was built with CUDA {tcuda}; torch.utils.cpp_extension refuses a different major ('The detected "
                   f"CUDA version ({ver}) mismatches the version that was used to compilePyTorch ({tcuda})'). "
                   + consequence)
            return ctx.verdict(f"nvcc {ver} does not match torch's CUDA {tcuda}",
                               ctx.finding("nvcc-torch-cuda-mismatch", message=msg, **params), **keep)
        note = "" if ver == tmm else f" (minor differs from torch's {tcuda}: torch only logs a warning)"
        return ctx.ok(f"{have} matches torch's CUDA {tcuda}{note}", **keep)


__all__ = ["CCompiler", "ExtensionBuild", "LibcudaDiscovery", "Nvcc", "PythonHeaders", "Ptxas", "TritonCache",
           "header_params"]
