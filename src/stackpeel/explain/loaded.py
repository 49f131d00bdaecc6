"""explain's bridge to runtime_libs. A log line about a CUDA library that cannot be opened,
lacks a symbol or has the wrong version (knowledge.toml's runtime_libs entries) makes the
live run read which copies this machine really loads (check ``runtime_libs.loaded``):

* every runtime_libs finding of the live run that the log does not show already becomes a
  confirmed candidate: it names the copy that shadows or doubles the library;
* a log candidate the live run does not confirm gets, as its live detail, what this
  machine loads and keeps on disk for the libraries the log names, so a log pasted from
  another machine can still be compared.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, List, Sequence

from ..codes import all_codes
from ..model import Report
from .reasoning import Candidate, Explanation, LiveCheck

CHECK = "runtime_libs.loaded"
CODES = ("library-missing", "library-shadowed", "library-version-mismatch", "library-loaded-twice",
         "libstdcxx-too-old")


def library_candidates(expl: Explanation) -> List[Candidate]:
    return [c for c in expl.candidates if c.code in CODES]


def _families(cands: Sequence[Candidate]) -> List[str]:
    names: Dict[str, None] = {}
    for c in cands:
        for ev in c.evidence:
            for m in re.finditer(r"(lib[A-Za-z_+]+?)(?:-[0-9a-f]{8})?\.so", ev.text):
                fam = m.group(1)
                names.setdefault("libcudnn" if fam.startswith("libcudnn") else fam, None)
    return list(names)


def here(report: Report, families: Sequence[str]) -> str:
    """'libcudart: loaded here X (owner, version); on disk: ...' for each family."""
    from ..checks.runtime_libs import others_text

    result = report.result(CHECK)
    if result is None:
        return ""
    facts = result.facts or {}
    parts = []
    for fam in families:
        loaded = [lib for lib in (facts.get("libraries") or {}).values() if lib.get("family") == fam]
        now = "; ".join(f"{lib['path']} ({lib.get('owner')}, {lib.get('version') or '?'})" for lib in loaded)
        parts.append(f"{fam}: loaded here from {now or 'nowhere'}; on disk: {others_text(facts, fam)}")
    return " | ".join(parts)


def attach(expl: Explanation, report: Report, present: Sequence[str]) -> List[Candidate]:
    """Extra candidates from the live runtime_libs findings (codes not in ``present``)."""
    result = report.result(CHECK)
    logged = library_candidates(expl)
    if result is None or not logged:
        return []
    cat = all_codes()
    out: List[Candidate] = []
    for f in result.findings:
        if f.code in present or any(c.code == f.code for c in out):
            continue
        spec = cat.get(f.code)
        out.append(Candidate(
            code=f.code, layer=spec.layer if spec else "runtime_libs", kind="root", title=f.title,
            evidence=tuple(ev for c in logged for ev in c.evidence)[:5], count=0, weight=0,
            explanation=f.message + " (found by the live check; the log shows what it causes)",
            fix=f.remedy.text, links=tuple(spec.links) if spec else (), explains=tuple(c.code for c in logged),
            check=CHECK, live=LiveCheck("confirmed", CHECK, result.status.value, f.message)))
    return out


def annotate(verdicts: Dict[str, LiveCheck], expl: Explanation, report: Report) -> Dict[str, LiveCheck]:
    """Live verdicts of the log's runtime_libs candidates that the run did not confirm get, as
    detail, what this machine loads and has on disk for the libraries the log names."""
    out = dict(verdicts)
    result = report.result(CHECK)
    for c in library_candidates(expl):
        verdict = out.get(c.code)
        if verdict is None:
            continue
        families = _families([c])
        if verdict.verdict == "confirmed":
            # the same code about another library does not confirm this line
            same = [f for f in (result.findings if result else ()) if f.code == c.code]
            if not families or any(fam in f.message for f in same for fam in families):
                continue
            verdict = replace(verdict, verdict="other-problem",
                              detail=f"the live check found {c.code} for other libraries: "
                                     + " ".join(f.message for f in same))
        seen = here(report, families)
        if seen:
            verdict = replace(verdict, detail=f"{seen}; {verdict.detail}".strip("; "))
        out[c.code] = verdict
    return out
