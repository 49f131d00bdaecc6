"""From check results to root causes: a pure function over the dependency graph.

A *problem* is a check that failed, was blocked, or warned. A problem's
*explainers* are its nearest problem ancestors along ``requires`` (walking through
checks that passed; a check that only warns is explained by warnings alone). A problem with no
explainer is a **root cause**; every other
problem is a **symptom**, listed under each root it traces back to, with the path
from the root to it. Roots whose findings are blocking come first; roots that only
degrade (performance, latent risks) are listed apart. Checks that ended in ``error``
explain their dependants but are never called a root cause: stackpeel could not
measure them, and says so instead (unless the check named the limit its probe died of:
then it is that limit's symptom, and not listed among the checks that could not complete).

A requirement whose codes are all ``named_only`` in the knowledge base (a resource limit)
explains a problem only where the problem's check names one of those codes among its
findings: it saw the evidence (torch's first tensor failing 'busy or unavailable' under a
low open-files limit carries ``open-files-limit-low`` beside ``torch-gpu-op-failed``), and
then it does whatever its own status and the problem's, even a warning explaining a failure.
Elsewhere the walk goes through it as through a check that passed. A warning that explains
a failure is a *blocking* root cause: the limit, not the layers it broke, is what to fix.
Such a limit is one every probe starts under, so it explains a problem that names it whether the
problem's check requires it or not (at a soft open-files limit of 5 the probes of checks that
require nothing die too, and the runner notes the limit beside each: Check.limits_every_probe);
for a check that could not complete, it is then the only explainer (its probe died of the limit,
not of a failing requirement).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from .model import CheckResult, Diagnosis, RootCause, Severity, Status, Symptom

_PROBLEM = (Status.FAIL, Status.BLOCKED, Status.WARN, Status.ERROR)


def _every_finding_is(result: CheckResult, flag: str) -> bool:
    """Every blocking/degraded finding of ``result`` has ``flag`` set in the knowledge base (False
    when it has none, or a code the knowledge base lacks)."""
    codes = [f.code for f in result.findings if f.severity is not Severity.INFO]
    if not codes:
        return False
    try:
        from .knowledge import all_codes

        kb = all_codes()
    except Exception:  # the diagnosis never fails for want of wording
        return False
    return all(c in kb and getattr(kb[c], flag) for c in codes)


def _standalone(result: CheckResult) -> bool:
    """Every blocking/degraded finding of the result is a cause no prerequisite can explain
    (knowledge base ``standalone = true``), e.g. a CPU-only torch wheel on a machine without
    a driver: two root causes, each with its own fix."""
    return _every_finding_is(result, "standalone")


def _named_only(result: CheckResult) -> bool:
    """Every finding of ``result`` is ``named_only`` in the knowledge base (a resource limit that
    explains only the problems that name it)."""
    return _every_finding_is(result, "named_only")


def _explainers(rid: str, by_id: Dict[str, CheckResult]) -> List[str]:
    """Nearest problem ancestors of ``rid`` that can explain it, in declaration order.

    Warnings and failures explain only their own kind: a check that only *warns* is
    explained by warning ancestors (had a failing requirement caused its trouble, it would
    have failed too: on a GPU box without a compiler, transformers warning that
    causal-conv1d is missing is no symptom of the compiler), and a failure is never
    blamed on a requirement that still works, only degraded (NVML missing does not
    explain cuInit failing). The walk goes through problems of the other kind.
    """
    if _standalone(by_id[rid]):
        return []
    degraded_only = by_id[rid].status is Status.WARN
    named = {f.code for f in by_id[rid].findings}
    found: List[str] = []
    seen: Set[str] = set()
    frontier = list(by_id[rid].requires)
    while frontier:
        nxt: List[str] = []
        for aid in frontier:
            if aid in seen or aid not in by_id:
                continue
            seen.add(aid)
            status = by_id[aid].status
            if status in _PROBLEM and _named_only(by_id[aid]):
                if any(f.code in named for f in by_id[aid].findings):
                    found.append(aid)
                else:
                    nxt.extend(by_id[aid].requires)
            elif status in _PROBLEM and degraded_only == (status is Status.WARN):
                found.append(aid)
            else:
                nxt.extend(by_id[aid].requires)
        frontier = nxt
    # a limit every probe starts under (the open-files limit, Check.limits_every_probe) explains the
    # problems that name it whether or not they require its check: the probe of a check that requires
    # nothing dies of it too (chk28); for a check that could not complete it is the whole story
    limits = [aid for aid, r in by_id.items() if aid != rid and r.status in _PROBLEM and _named_only(r)
              and any(f.code in named for f in r.findings)]
    if limits and by_id[rid].status is Status.ERROR:
        return [aid for aid in by_id if aid in limits]
    return found + [aid for aid in by_id if aid in limits and aid not in found]


def _died_of_its_own(r: CheckResult) -> bool:
    """A check whose probe gave no answer but whose ``on_failure`` names, as blocking, the condition
    it measures (multi_gpu.open_files's probe dies under a soft limit of 5, chk27): a root cause,
    measured as far as it matters, not a check that merely could not complete."""
    return r.status is Status.ERROR and any(f.severity is Severity.BLOCKING for f in r.findings)


def diagnose(results: Sequence[CheckResult], layer_order: Sequence[str] = ()) -> Diagnosis:
    by_id = {r.id: r for r in results}
    order = {r.id: i for i, r in enumerate(results)}
    problems = [r.id for r in results if r.status in _PROBLEM]
    explainers = {pid: _explainers(pid, by_id) for pid in problems}

    # paths from each root to each problem; a problem with no explainer is its own root
    paths: Dict[str, Dict[str, Tuple[str, ...]]] = {}

    def roots_of(pid: str, stack: Tuple[str, ...] = ()) -> Dict[str, Tuple[str, ...]]:
        if pid in paths:
            return paths[pid]
        if pid in stack:  # registry forbids cycles; be safe anyway
            return {}
        out: Dict[str, Tuple[str, ...]] = {}
        if not explainers[pid]:
            out[pid] = (pid,)
        for e in explainers[pid]:
            for root, path in roots_of(e, stack + (pid,)).items():
                cand = path + (pid,)
                if root not in out or len(cand) < len(out[root]):
                    out[root] = cand
        paths[pid] = out
        return out

    for pid in problems:
        roots_of(pid)

    def layer_rank(rid: str) -> Tuple[int, int]:
        layer = by_id[rid].layer
        return (list(layer_order).index(layer) if layer in layer_order else len(layer_order), order[rid])

    blocking: List[RootCause] = []
    degraded: List[RootCause] = []
    for rid in sorted((p for p in problems if not explainers[p]), key=layer_rank):
        r = by_id[rid]
        if r.status is Status.ERROR and not _died_of_its_own(r):
            continue  # unmeasured: listed under errors, never a root cause
        symptoms = sorted(
            (Symptom(pid, paths[pid][rid]) for pid in problems if pid != rid and rid in paths[pid]),
            key=lambda s: (len(s.path), order[s.check_id]),
        )
        breaks = any(by_id[s.check_id].status is not Status.WARN for s in symptoms)
        if r.status is Status.WARN and not breaks:
            sev = Severity.DEGRADED
            codes = tuple(f.code for f in r.findings if f.severity is Severity.DEGRADED)
            degraded.append(RootCause(rid, codes, sev, tuple(symptoms)))
        elif r.status is Status.WARN:  # a degraded condition that the failures below attribute to it
            codes = tuple(f.code for f in r.findings if f.severity is Severity.DEGRADED)
            blocking.append(RootCause(rid, codes, Severity.BLOCKING, tuple(symptoms)))
        else:
            sev = Severity.BLOCKING
            codes = tuple(f.code for f in r.findings if f.severity is Severity.BLOCKING)
            blocking.append(RootCause(rid, codes, sev, tuple(symptoms)))
    # a warning promoted to a blocking root ranks where the lowest layer it broke does
    blocking.sort(key=lambda root: min(layer_rank(c) for c in (root.check_id, *(
        s.check_id for s in root.symptoms if by_id[root.check_id].status is Status.WARN)))
        if by_id[root.check_id].status is Status.WARN else layer_rank(root.check_id))
    # a check that could not complete and named the limit that killed it (Check.on_failure) is
    # that root's symptom, measured as far as it matters: not listed as "could not complete"
    errors = tuple(r.id for r in results if r.status is Status.ERROR and not _died_of_its_own(r)
                   and not any(_named_only(by_id[e]) for e in explainers.get(r.id, ())))
    return Diagnosis(tuple(blocking), tuple(degraded), errors)


def root_of(diagnosis: Diagnosis, check_id: str) -> Optional[List[str]]:
    """The root causes that explain ``check_id`` (itself, if it is a root)."""
    out = []
    for root in diagnosis.blocking + diagnosis.degraded:
        if root.check_id == check_id or any(s.check_id == check_id for s in root.symptoms):
            out.append(root.check_id)
    return out or None
