"""Live confirmation: run the ``stackpeel check`` checks the log's evidence points to.

For every candidate (and, for symptoms, every code in ``could_be``), the check that
declares the code (``Check.codes``) can confirm it. Those checks run
through the library API :func:`stackpeel.engine.check` (each probe in an isolated
child of the target interpreter), and each candidate gets a verdict:

``confirmed``      the check reports this very code
``ruled-out``      the check ran and passed: this cause is absent *here*, and the log
                   demonstrably comes from here (it names the checked interpreter's
                   prefix or this host); otherwise the verdict is ``inconclusive``
``other-problem``  the check failed with other codes (listed in the detail)
``inconclusive``   skipped, blocked by a failed prerequisite, or the check crashed

Blocking root causes the live run finds that the log's symptoms could stand for are
added as candidates. A log pasted from another machine says nothing about this one:
turn live confirmation off with ``--no-live`` there.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ..model import Report, Status
from . import loaded
from .knowledge import KnowledgeBase, fix_text, load
from .reasoning import Candidate, Evidence, Explanation, LiveCheck, LiveSummary, with_live

#: candidates whose codes are checked (the top ones; the rest are rarely informative)
MAX_CANDIDATES = 6

CheckFn = Callable[..., Report]


def plan(expl: Explanation, kb: Optional[KnowledgeBase] = None, known: Optional[Set[str]] = None) -> List[str]:
    """The check ids to run for ``expl``, in candidate order, limited to ``known`` ids."""
    kb = kb or load()
    ids: Dict[str, None] = {}
    for cand in expl.candidates[:MAX_CANDIDATES]:
        for code in (cand.code, *cand.could_be):
            cid = kb.check_of(code)
            if cid and (known is None or cid in known):
                ids.setdefault(cid, None)
    return list(ids)


def _known_checks() -> Set[str]:
    from .. import registry

    return {c.id for c in registry.load()}


def verdicts(report: Report, codes: Sequence[str], kb: Optional[KnowledgeBase] = None) -> Dict[str, LiveCheck]:
    """Pure: what ``report`` says about each code."""
    kb = kb or load()
    out: Dict[str, LiveCheck] = {}
    for code in codes:
        cid = kb.check_of(code)
        result = report.result(cid) if cid else None
        if result is None:
            continue
        found = [f.code for f in result.findings]
        status = result.status.value
        # a log-only code is confirmed by the check code that stands for it (confirmed_by)
        confirming = [c for c in (code, *kb.confirms.get(code, ())) if c in found]
        if confirming:
            f = next(f for f in result.findings if f.code == confirming[0])
            out[code] = LiveCheck("confirmed", cid, status, f.message)
        elif kb.confirms.get(code) and result.status in (Status.PASS, Status.WARN):
            # the check reads a risk, the log shows the event (descriptors exhausted at a limit the
            # check calls generous): a passing check cannot rule out what the log proves happened
            out[code] = LiveCheck("inconclusive", cid, status,
                                  f"the check finds no risk here, but the log shows it happen: {result.summary}")
        elif result.status in (Status.PASS,):
            out[code] = LiveCheck("ruled-out", cid, status, result.summary)
        elif result.status in (Status.FAIL, Status.WARN) and found:
            out[code] = LiveCheck("other-problem", cid, status, "the check found " + ", ".join(found))
        elif result.status is Status.WARN:
            out[code] = LiveCheck("ruled-out", cid, status, result.summary)
        else:
            why = {"skip": "not applicable here", "blocked": "a prerequisite check failed",
                   "error": "the check itself failed"}.get(status, status)
            out[code] = LiveCheck("inconclusive", cid, status, f"{why}: {result.summary}".strip(": "))
    return out


#: an environment's site-packages as a log shows it (a traceback frame, a warning, a build line)
SITE_RE = re.compile(r"(/[^\s\"':]*?)/lib(?:64)?/python(\d+\.\d+)/(?:site|dist)-packages\b")
WINDOWS_PATH_RE = re.compile(r"\b[A-Za-z]:\\(?:Users|Program Files|ProgramData|Windows|[^\\\s]+\\)")


def _log_texts(expl: Explanation) -> Iterable[str]:
    for exc in expl.exceptions:
        yield from exc.frames
        yield exc.message
    for cand in expl.candidates:
        for ev in cand.evidence:
            yield ev.text
    for ev in expl.unexplained:
        yield ev.text


def provenance(expl: Explanation, target: Optional[Mapping[str, Any]],
               hostname: Optional[str] = None) -> Tuple[str, str]:
    """Whether the log comes from this machine: ``("same" | "other" | "unknown", reason)``.

    "same" needs a positive sign (a path under the checked interpreter's prefix, or this
    host's name); "other" a contradiction (another Python version's site-packages, an
    environment that does not exist here, Windows paths on a POSIX host); otherwise
    "unknown". Only the lines explain kept are looked at (evidence, tracebacks, error lines).
    """
    target = target or {}
    prefixes = {os.path.realpath(p) for p in (target.get("prefix"), target.get("base_prefix")) if p}
    version = ".".join(str(target.get("version", "")).split(".")[:2])
    host = hostname if hostname is not None else socket.gethostname()
    texts = list(_log_texts(expl))
    other = ""
    for text in texts:
        for m in SITE_RE.finditer(text):
            prefix, pyver = m.group(1), m.group(2)
            if os.path.realpath(prefix) in prefixes and (not version or pyver == version):
                return "same", f"the log shows this interpreter's environment ({prefix})"
            if not other:
                if version and pyver != version:
                    other = f"the log's Python is {pyver}, the checked one is {version}"
                elif not os.path.isdir(prefix):
                    other = f"the log's environment {prefix} does not exist here"
        if os.name != "nt" and not other and WINDOWS_PATH_RE.search(text):
            other = "the log shows Windows paths"
    if host and len(host) >= 4 and any(re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", t) for t in texts):
        return "same", f"the log names this host ({host})"
    if other:
        return "other", other
    return "unknown", "nothing in the log identifies the machine it came from"


def _not_here(v: Dict[str, LiveCheck], reason: str) -> Dict[str, LiveCheck]:
    """A check that passes here rules nothing out for a log made elsewhere."""
    out = {}
    for code, lc in v.items():
        if lc.verdict == "ruled-out":
            lc = LiveCheck("inconclusive", lc.check, lc.status,
                           f"passes on this machine, but the log may come from another one ({reason})")
        out[code] = lc
    return out


def confirm(expl: Explanation, python: Optional[str] = None, check: Optional[CheckFn] = None,
            kb: Optional[KnowledgeBase] = None, known: Optional[Set[str]] = None,
            env: Optional[Mapping[str, str]] = None) -> Explanation:
    """Run the checks ``expl`` points to and return it with live verdicts attached.

    ``check`` defaults to :func:`stackpeel.engine.check`; ``known`` to the registered
    check ids. Never raises: a failure to run becomes a note in ``expl.live``.
    """
    kb = kb or load()
    if not expl.candidates:
        return expl
    try:
        if known is None:
            known = _known_checks()
        ids = plan(expl, kb, known)
    except Exception as exc:  # noqa: BLE001 - the checks are optional here
        return with_live(expl, {}, LiveSummary(False, python, (), (), f"cannot load the checks: {exc}"))
    if not ids:
        return with_live(expl, {}, LiveSummary(False, python, (), (),
                                               "no installed check covers these causes"))
    if check is None:
        from ..engine import check as check  # noqa: PLW0127
    try:
        report = check(python=python, only=ids, env=env)
    except Exception as exc:  # noqa: BLE001 - TargetError, RegistryError, anything
        return with_live(expl, {}, LiveSummary(False, python, tuple(ids), (), f"live checks could not run: {exc}"))

    codes: Dict[str, None] = {}
    for cand in expl.candidates:
        codes.setdefault(cand.code, None)
        for c in cand.could_be:
            codes.setdefault(c, None)
    v = verdicts(report, list(codes), kb)
    where, why = provenance(expl, report.target)
    if where != "same":
        v = _not_here(v, why)
    found = tuple(dict.fromkeys(code for root in report.diagnosis.blocking for code in root.codes))

    # a live root cause that a symptom in the log could stand for becomes a candidate; when neither
    # such a root nor any of the log's own candidates is confirmed, so does a cause the checks report
    # as a degraded risk that a line of the log could be (a `ulimit -v` CUDA starts under, for torch's
    # 'CUDA error: out of memory' at the first tensor)
    from ..codes import all_codes

    present = {c.code for c in expl.candidates}
    extra: List[Candidate] = []

    def add(codes: Iterable[str]) -> None:
        for code in codes:
            symptoms = [c for c in expl.candidates if code in c.could_be]
            if code in present or not symptoms:
                continue
            verdict = v.get(code) or LiveCheck("confirmed", kb.checks.get(code, "?"), "fail", "")
            extra.append(_live_candidate(code, symptoms, verdict))
            present.add(code)

    add(found)
    if not extra and not any(v.get(c.code) and v[c.code].verdict == "confirmed" for c in expl.candidates):
        specs = all_codes()
        add(code for code, lc in v.items()
            if lc.verdict == "confirmed" and code in specs and specs[code].kind == "root")
    v = loaded.annotate(v, expl, report)  # runtime_libs: which copies this machine loads and has
    extra.extend(loaded.attach(expl, report, sorted(present)))
    summary = LiveSummary(True, report.target.get("python") if report.target else python, tuple(ids), found,
                          provenance=where, provenance_reason=why)
    out = with_live(expl, v, summary, extra)
    return out


def _live_candidate(code: str, symptoms: Sequence[Candidate], verdict: LiveCheck) -> Candidate:
    from ..codes import all_codes

    spec = all_codes().get(code)
    ev = tuple(Evidence(s.first_line, f"[{s.code}] " + (s.evidence[0].text if s.evidence else ""), "live")
               for s in symptoms[:3])
    return Candidate(
        code=code, layer=spec.layer if spec else "", kind="root", title=spec.title if spec else code,
        evidence=ev, count=0, weight=0,
        explanation=(spec.meaning if spec else "") + " (found by the live check; the log shows its symptoms)",
        fix=fix_text(spec) if spec else "", links=tuple(spec.links) if spec else (),
        explains=tuple(s.code for s in symptoms), check=verdict.check, live=verdict,
    )
