"""Runtime libraries: the CUDA, cuDNN, NCCL, OpenMP and C++ runtime files a process really loads.

Version reports say what is installed; crashes come from what is loaded. The probe
imports torch and the installed kernel extensions in a child of the target interpreter,
reads that process's ``/proc/self/maps`` and describes each library of the stack: file,
version, owning package, the copy its consumer ships when another one won, and the other
copies on disk. ``evaluate`` turns those facts into root causes that torch, Triton and
kernel failures nest under:

* ``library-loaded-twice``     two files of one library in the process
* ``library-version-mismatch`` a loaded copy unlike the one torch was built with or pins
* ``library-shadowed``         LD_PRELOAD / LD_LIBRARY_PATH / an earlier load beat the shipped copy
* ``library-missing``          an import failed on a library the loader cannot find
* ``libstdcxx-too-old``        an extension needs GLIBCXX versions the loaded libstdc++ lacks
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import facts as _facts
from ..model import Finding, Severity
from .base import Check, Context, version_tuple

OPENMP = ("libgomp", "libiomp5", "libomp")

#: torch's Requires-Dist distribution (without the -cuXX suffix) -> library families it ships
DIST_FAMILIES = {
    "nvidia-cuda-runtime": ("libcudart",), "nvidia-cudnn": ("libcudnn",), "nvidia-nccl": ("libnccl",),
    "nvidia-cublas": ("libcublasLt", "libcublas"), "nvidia-cufft": ("libcufft",), "nvidia-curand": ("libcurand",),
    "nvidia-nvjitlink": ("libnvJitLink",), "nvidia-cuda-nvrtc": ("libnvrtc",),
}
#: families whose version the probe reads from the library's own version call (comparable to pins)
CALLED = ("libcudart", "libcudnn", "libnccl", "libcublasLt", "libnvrtc", "libnvJitLink", "libcufft", "libcurand")


def owner_text(owner: Optional[Mapping[str, Any]]) -> str:
    """'pip nvidia-cudnn-cu12 9.1.0.70', 'dpkg libgomp1:amd64 12.2.0-14', 'no package'."""
    owner = owner or {}
    kind = owner.get("kind")
    if kind in (None, "none") or not owner.get("name"):
        return "no package"
    label = owner.get("manager") if kind == "system" else kind
    return " ".join(str(x) for x in (label, owner.get("name"), owner.get("version")) if x)


def _row_text(row: Mapping[str, Any]) -> str:
    version = f", version {row['version']}" if row.get("version") and \
        row["version"] != (row.get("owner") or {}).get("version") else ""
    return f"{row.get('realpath') or row.get('path')} ({owner_text(row.get('owner'))}{version})"


def others_text(facts: Mapping[str, Any], family: str, exclude: Sequence[str] = ()) -> str:
    """The copies of ``family`` on disk that are not loaded: 'path (owner; found in: ...)' or 'none'."""
    items = []
    for c in (facts.get("copies") or {}).get(family) or ():
        if c.get("realpath") in exclude:
            continue
        version = f", {c['version']}" if c.get("version") and c["version"] != (c.get("owner") or {}).get("version") \
            else ""
        items.append(f"{c.get('realpath')} ({owner_text(c.get('owner'))}{version}; found in: "
                     f"{', '.join(c.get('found_in') or ()) or '?'})")
    return "; ".join(items) if items else "none"


def remove_hint(row: Mapping[str, Any], python: Optional[str]) -> Optional[str]:
    """A command that uninstalls the package owning ``row``; None for system packages (not ours to remove)."""
    owner = row.get("owner") or {}
    if owner.get("kind") == "pip" and owner.get("name") and owner.get("name") != "torch" and python:
        return f"{python} -m pip uninstall -y {owner['name']}"
    if owner.get("kind") == "conda" and owner.get("name"):
        return f"conda remove --force -y {owner['name']}"
    return None


def _without(value: Optional[str], entry: Optional[str], sep: str) -> str:
    parts = [p for p in re.split(r"[:\s]+" if sep == " " else ":", value or "") if p]
    return sep.join(p for p in parts if p != entry)


def _major_minor(text: Any) -> Tuple[int, ...]:
    return version_tuple(text)[:2]


class LoadedLibraries(Check):
    """Imports torch and the installed kernel extensions in a child of the target interpreter
    (each in its own fork, so a crashing import costs only itself), reads /proc/self/maps and
    names every loaded library of the CUDA stack with its file, version and owning package."""

    id = "runtime_libs.loaded"
    title = "Libraries the stack really loads (CUDA, cuDNN, NCCL, OpenMP, C++ runtime)"
    layer = "runtime_libs"
    probe = "runtime_libs.loaded_libs"
    facts = _facts.RuntimeLibsLoadedFacts
    timeout = 150.0
    probe_options = {"budget_s": 120}
    # forked from the interpreter that imported torch (and triton) once (runner/zygote.py): the
    # probe's own children then start with them loaded, as a training script has them
    preload = ("torch", "triton")
    # the pip index, directory listings and package owners need no import: read while torch imports
    prework = "loaded_libs_prework"
    codes = ("library-loaded-twice", "library-version-mismatch", "library-shadowed", "library-missing",
             "libstdcxx-too-old")

    def evaluate(self, facts, ctx):
        if not facts["supported"]:
            return ctx.skip(f"cannot read a process's loaded libraries here: {facts.get('reason') or 'unsupported'}")
        python = ctx.target.get("python")
        rows: List[Mapping[str, Any]] = facts["loaded"] or []
        findings: List[Finding] = []
        findings += self._twice(rows, facts, ctx, python)
        findings += self._mismatch(rows, facts, ctx, python)
        findings += self._shadowed(rows, facts, ctx, python)
        findings += self._failed_shadows(facts, ctx)
        findings += self._missing(facts, ctx)
        findings += self._cxx(rows, facts, ctx)
        imports = facts["imports"] or []
        crashed = [i["module"] for i in imports if i.get("crashed")]
        described = ", ".join(f"{r.get('stem') or r.get('family')} {r.get('version') or '?'} "
                              f"({owner_text(r.get('owner'))})" for r in rows) or "none of the stack's libraries"
        summary = (f"imported {', '.join(i['module'] for i in imports if i.get('ok')) or 'nothing'}; loaded "
                   f"{described}; {facts['others_count']} other shared objects")
        if crashed:
            summary += f"; importing {', '.join(crashed)} crashed the process"
        # keyed by SONAME so that `stackpeel diff` names the library whose file or version changed
        libraries: Dict[str, Dict[str, Any]] = {}
        for r in rows:
            key = r.get("soname") or os.path.basename(r.get("realpath") or "?")
            while key in libraries:
                key += "+"
            libraries[key] = {"family": r.get("family"), "path": r.get("realpath"), "version": r.get("version"),
                              "owner": owner_text(r.get("owner")), "via": r.get("via")}
        return ctx.verdict(summary, *findings, libraries=libraries)

    # ------------------------------------------------------------------ twice
    def _twice(self, rows, facts, ctx: Context, python) -> List[Finding]:
        out: List[Finding] = []
        groups: Dict[str, List[Mapping[str, Any]]] = {}
        for r in rows:
            groups.setdefault(r.get("stem") or r.get("family"), []).append(r)
        # cuDNN's sub-libraries of different majors are two cuDNNs too
        majors = {}
        for r in rows:
            if r.get("family") == "libcudnn" and r.get("soname"):
                majors.setdefault((r["soname"].rsplit(".so.", 1) + [""])[1].split(".")[0], r)
        if len(majors) > 1:
            groups["libcudnn (majors " + ", ".join(sorted(majors)) + ")"] = list(majors.values())
        openmp = [r for r in rows if r.get("family") in OPENMP]
        if len({r.get("family") for r in openmp}) > 1:
            groups["OpenMP"] = openmp
        for name, members in groups.items():
            uniq = {m.get("realpath"): m for m in members}
            if len(uniq) < 2:
                continue
            members = list(uniq.values())
            fam = members[0].get("family")
            keep = min(members, key=lambda m: _keep_rank(m, facts["torch"] or {}))
            drop = [m for m in members if m is not keep]
            hint = next((h for h in (remove_hint(m, python) for m in drop) if h), None)
            variant = "openmp" if fam in OPENMP else None
            params = dict(family=name, copies="; ".join(_row_text(m) for m in members), keep=_row_text(keep),
                          others=others_text(facts, fam, [m.get("realpath") for m in members]), remove_hint=hint)
            out.append(ctx.finding("library-loaded-twice", variant,
                                   evidence="\n".join(m.get("path") for m in members), **params))
        return out

    # ------------------------------------------------------------------ mismatch
    def _mismatch(self, rows, facts, ctx: Context, python) -> List[Finding]:
        torch = facts["torch"] or {}
        tv = torch.get("version")
        if not tv:
            return []
        expectations: List[Tuple[str, str, str, str]] = []  # (family, wanted version, declared text, rule)
        if torch.get("cuda"):
            expectations.append(("libcudart", torch["cuda"], f"{torch['cuda']} (torch.version.cuda)", "major"))
        if torch.get("cudnn_compile"):
            expectations.append(("libcudnn", torch["cudnn_compile"],
                                 f"{torch['cudnn_compile']} (torch was built with it)", "cudnn"))
        for dist, pin in sorted((torch.get("requires") or {}).items()):
            base = re.sub(r"-cu\d+$", "", dist)
            for fam in DIST_FAMILIES.get(base, ()):
                expectations.append((fam, pin, f"=={pin} (torch's pin on {dist})", "minor"))
        out: List[Finding] = []
        done = set()
        err = (torch.get("cudnn_error") or {}).get("message") or ""
        m = re.search(r"compiled\s+against \((\d+), (\d+), (\d+)\) but (?:found runtime version|linked against) "
                      r"\((\d+), (\d+), (\d+)\)", err)
        if m:
            row = self._versioned_row(rows, "libcudnn") or next((r for r in rows if r.get("family") == "libcudnn"), {})
            declared = "{}.{}.{} (torch was built with it)".format(*m.groups()[:3])
            params = dict(family="libcudnn", declared=declared, torch_version=tv,
                          path=row.get("realpath") or "an unknown file", owner=owner_text(row.get("owner")),
                          version="{}.{}.{} (torch.backends.cudnn.version())".format(*m.groups()[3:]),
                          others=others_text(facts, "libcudnn", [row.get("realpath")]),
                          fix_detail=("LD_LIBRARY_PATH brings it: drop {} from "
                                      "LD_LIBRARY_PATH.".format(row["via_entry"])
                                      if row.get("via") == "LD_LIBRARY_PATH" else
                                      "Reinstall torch's own nvidia-cudnn package (the one it pins)."))
            out.append(ctx.finding("library-version-mismatch", evidence=err, **params))
            done.add("libcudnn")
        for fam, wanted, declared, rule in expectations:
            if fam in done:
                continue
            row = self._versioned_row(rows, fam)
            if row is None:
                continue
            have, want = version_tuple(row.get("version")), version_tuple(wanted)
            owner = row.get("owner") or {}
            if rule == "minor" and owner.get("kind") == "pip" and owner.get("name") and \
                    declared.endswith(f"on {owner['name']})"):
                # the pinned package itself: compare package versions (a library's own numbering may differ)
                have = version_tuple(owner.get("version"))
            if not have or not want:
                continue
            bad, severity = False, Severity.BLOCKING
            if have[0] != want[0]:
                bad = True
            elif rule == "cudnn" and len(have) > 1 and len(want) > 1 and have[1] < want[1]:
                bad = True  # torch/backends/cudnn: runtime minor must be >= compile minor
            elif rule == "minor" and len(have) > 1 and len(want) > 1 and have[1] != want[1]:
                bad, severity = True, (Severity.BLOCKING if have[1] < want[1] else Severity.DEGRADED)
            if not bad:
                continue
            done.add(fam)
            if row.get("via") == "LD_PRELOAD":
                detail = "LD_PRELOAD brings it: unset LD_PRELOAD or drop it from there."
            elif row.get("via"):
                detail = f"LD_LIBRARY_PATH brings it: drop {row.get('via_entry')} from LD_LIBRARY_PATH."
            elif rule == "minor":
                detail = f"Reinstall the pinned package: {python or 'python'} -m pip install '{_dist_for(torch, fam)}'."
            else:
                detail = ("Reinstall torch's own nvidia-* packages, or use the torch build made for "
                          f"{row.get('version')}.")
            params = dict(family=fam, declared=declared, torch_version=tv, path=row.get("realpath"),
                          owner=owner_text(row.get("owner")),
                          version=f"{row.get('version')} ({row.get('version_source') or '?'})",
                          others=others_text(facts, fam, [row.get("realpath")]), fix_detail=detail,
                          remove_hint=remove_hint(row, python) if row.get("owner", {}).get("kind") == "conda" else None)
            out.append(ctx.finding("library-version-mismatch",
                                   evidence=f"{row.get('path')}: {row.get('version')} via "
                                            f"{row.get('version_source')}; expected {declared}",
                                   severity=severity, **params))
        return out

    @staticmethod
    def _versioned_row(rows, fam) -> Optional[Mapping[str, Any]]:
        cands = [r for r in rows if r.get("family") == fam and r.get("version")]
        if fam == "libcudnn":
            cands = [r for r in cands if (r.get("soname") or "").startswith("libcudnn.so")] or cands
        # a version from the library's own call beats one from a package or a file name
        cands.sort(key=lambda r: 0 if r.get("version_call") else 1)
        return cands[0] if cands else None

    # ------------------------------------------------------------------ shadowed
    def _shadowed(self, rows, facts, ctx: Context, python) -> List[Finding]:
        env = facts["env"] or {}
        out: List[Finding] = []
        for r in rows:
            exp = r.get("expected")
            if not exp:
                continue
            via = r.get("via")
            variant = {"LD_PRELOAD": "ld-preload", "LD_LIBRARY_PATH": "ld-library-path"}.get(via, "loaded-earlier")
            params = dict(family=r.get("family"), soname=r.get("soname"), path=r.get("realpath"),
                          owner=owner_text(r.get("owner")), version=r.get("version") or "unknown",
                          expected=exp.get("path"), expected_owner=owner_text(exp.get("owner")),
                          consumer=exp.get("consumer"), directory=r.get("via_entry"),
                          others=others_text(facts, r.get("family"), [r.get("realpath"), exp.get("realpath")]))
            if via in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
                rest = _without(env.get(via), r.get("via_entry"), ":" if via == "LD_LIBRARY_PATH" else " ")
                if rest:
                    params[via.lower()] = shlex.quote(rest)
                else:
                    params["unset_variable"] = via
            out.append(ctx.finding("library-shadowed", variant,
                                   evidence=f"loaded: {r.get('path')}\nshipped: {exp.get('path')} "
                                            f"({_found_by(exp.get('found_by'), exp.get('consumer'))})", **params))
        return out

    def _failed_shadows(self, facts, ctx: Context) -> List[Finding]:
        """Imports that failed on a symbol the loader's copy lacks, while the failing object's
        RUNPATH/RPATH points at a copy that has it (resolved from the files: the map no longer
        holds libraries of a failed import)."""
        env = facts["env"] or {}
        out: List[Finding] = []
        for r in facts["failed_import_shadows"] or ():
            if not r.get("expected") or not r.get("would_load") or r["would_load"] == r.get("expected_realpath"):
                continue
            how = r.get("how")
            variant = {"LD_PRELOAD": "ld-preload", "LD_LIBRARY_PATH": "ld-library-path"}.get(how, "loaded-earlier")
            params = dict(family=r.get("family"), soname=r.get("soname"), path=r.get("would_load"),
                          owner=owner_text(r.get("owner")), version=r.get("version") or "unknown",
                          expected=r.get("expected"), expected_owner=owner_text(r.get("expected_owner")),
                          consumer=r.get("consumer"), directory=r.get("entry"),
                          others=others_text(facts, r.get("family"), [r.get("would_load")]))
            if how in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
                rest = _without(env.get(how), r.get("entry"), ":" if how == "LD_LIBRARY_PATH" else " ")
                if rest:
                    params[how.lower()] = shlex.quote(rest)
                else:
                    params["unset_variable"] = how
            evidence = f"import {r.get('module')}: {r.get('consumer')}: {r.get('symbol')} not found in " \
                       f"{r.get('would_load')}"
            have, want = r.get("symbol_release") or {}, r.get("expected_symbol_release") or {}
            if have.get("newest") and not have.get("defines"):
                evidence += f" (it defines up to {have['newest']})"
            if want.get("defines"):
                evidence += f"; {r.get('expected')} ({_found_by(r.get('expected_how'), r.get('consumer'))}) defines it"
            out.append(ctx.finding("library-shadowed", variant, severity=Severity.BLOCKING, evidence=evidence,
                                   **params))
        return out

    # ------------------------------------------------------------------ missing
    def _missing(self, facts, ctx: Context) -> List[Finding]:
        out: List[Finding] = []
        seen = set()
        for item in facts["import_libraries"] or ():
            for soname in item.get("cannot_open") or ():
                if soname in seen:
                    continue
                seen.add(soname)
                fam = _family(soname)
                others = others_text(facts, fam or soname)
                params = dict(module=item.get("module"), soname=soname, family=fam or soname,
                              required_by=f"an extension of {item.get('module')}", others=others)
                variant = "none" if others == "none" else None
                out.append(ctx.finding("library-missing", variant,
                                       evidence=f"import {item.get('module')}: {soname}: cannot open shared object "
                                                "file", **params))
        return out

    # ------------------------------------------------------------------ C++ runtime
    def _cxx(self, rows, facts, ctx: Context) -> List[Finding]:
        out: List[Finding] = []
        stdcxx = next((r for r in rows if r.get("family") == "libstdc++"), None)
        provided = facts.get("cxx_provided") or (stdcxx or {}).get("version")
        for need in facts["cxx_needs"] or ():
            missing = need.get("missing") or []
            if not missing:
                continue
            top = missing[-1]
            newer = [c for c in (facts["copies"] or {}).get("libstdc++") or ()
                     if c.get("provides_glibcxx") and version_tuple(c["provides_glibcxx"].split("_", 1)[-1]) >=
                     version_tuple(top.split("_", 1)[-1])]
            newer_text = "; ".join(f"{c['realpath']} ({owner_text(c.get('owner'))}, up to {c['provides_glibcxx']})"
                                   for c in newer) or "none on this machine"
            params = dict(needed=top, provided=provided, required_by=need.get("object"),
                          path=(stdcxx or {}).get("realpath") or "no libstdc++",
                          owner=owner_text((stdcxx or {}).get("owner")), newer=newer_text,
                          newer_path=newer[0]["realpath"] if newer else None)
            out.append(ctx.finding("libstdcxx-too-old",
                                   evidence=f"{need.get('object')}: needs {', '.join(missing)}; loaded "
                                            f"{(stdcxx or {}).get('path')} defines up to {provided}", **params))
        return out


def _found_by(how: Optional[str], consumer: Optional[str]) -> str:
    """How the shipped copy is reached: 'RUNPATH of X', or 'next to X in torch's nvidia-* wheels'."""
    if how == "nvidia wheels":
        return f"next to {consumer} in the nvidia-* wheels, where torch preloads it from"
    return f"{how or 'RUNPATH'} of {consumer}"


def _keep_rank(row: Mapping[str, Any], torch: Mapping[str, Any]) -> Tuple[int, int, int]:
    """Which of two copies to keep: the one whose major matches what torch was built with, then
    one from a package torch pins, then one no environment variable forced in."""
    want = {"libcudnn": torch.get("cudnn_compile"), "libcudart": torch.get("cuda")}.get(row.get("family"))
    have = version_tuple(row.get("version"))
    matches = bool(want and have and version_tuple(want)[:1] == have[:1])
    pinned = (row.get("owner") or {}).get("name") in (torch.get("requires") or {})
    return (0 if matches else 1, 0 if pinned else 1, 1 if row.get("via") else 0)


def _family(soname: str) -> Optional[str]:
    m = re.match(r"^(lib[\w+.-]*?)(?:-[0-9a-f]{8})?\.so", soname)
    if not m:
        return None
    fam = m.group(1)
    return "libcudnn" if fam.startswith("libcudnn_") else fam


def _dist_for(torch: Mapping[str, Any], family: str) -> str:
    for dist, pin in (torch.get("requires") or {}).items():
        if family in DIST_FAMILIES.get(re.sub(r"-cu\d+$", "", dist), ()):
            return f"{dist}=={pin}"
    return family


__all__ = ["LoadedLibraries", "owner_text", "others_text"]

