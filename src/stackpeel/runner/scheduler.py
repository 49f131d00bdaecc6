"""Run checks in parallel, in dependency order, and always come back with a result for each.

A check starts as soon as every check it requires has finished. If a check in its
``gate`` did not pass (or warn), it is ``blocked`` without running. Its probe runs in
a child of the target interpreter (:mod:`.child`); its ``evaluate`` runs here. Any
misbehaviour (probe crash, timeout, junk, a bug in ``evaluate``) becomes an ``error``
result with the evidence; nothing escapes as an exception.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Type

from ..checks.base import Check, Context, Verdict
from ..model import CheckResult, ProbeFailure, Status
from .child import run_probe

OK_STATUSES = (Status.PASS, Status.WARN)

ProgressFn = Callable[[str, Type[Check], Optional[CheckResult]], None]


def _default_workers() -> int:
    return max(4, min(12, (os.cpu_count() or 2) * 2))


def _result(cls: Type[Check], status: Status, summary: str, duration: float = 0.0, facts=None, findings=(),
            failure: Optional[ProbeFailure] = None) -> CheckResult:
    return CheckResult(id=cls.id, title=cls.title, layer=cls.layer, status=status, summary=summary,
                       facts=dict(facts or {}), findings=tuple(findings), duration_s=duration, failure=failure,
                       requires=tuple(cls.requires))


def run_one(cls: Type[Check], python: str, host: Mapping[str, Any], target: Mapping[str, Any],
            done: Mapping[str, CheckResult], env: Optional[Mapping[str, str]] = None,
            timeout_scale: float = 1.0) -> CheckResult:
    """Run a single check whose requirements are in ``done``."""
    for req in cls.gate:
        dep = done.get(req)
        if dep is None:
            return _result(cls, Status.BLOCKED, f"not run: it needs {req}, which was not selected")
        if dep.status is Status.SKIP:
            return _result(cls, Status.SKIP, f"not applicable: {req} was skipped ({dep.summary})")
        if dep.status not in OK_STATUSES:
            how = {Status.FAIL: "failed", Status.ERROR: "could not complete", Status.BLOCKED: "was blocked"}
            return _result(cls, Status.BLOCKED, f"not run: it needs {req}, which {how[dep.status]}")
    deps = {req: done[req].facts for req in cls.requires if req in done}
    start = time.monotonic()
    facts: Dict[str, Any] = {}
    if cls.probe:
        inp = {"deps": deps, "options": dict(cls.probe_options), "check": cls.id}
        answer = run_probe(python, cls.probe, inp, cls.timeout * timeout_scale, env=env, probes_dir=cls.probes_dir)
        if answer.failure is not None:
            return _result(cls, Status.ERROR, f"check could not complete: {answer.failure.detail.splitlines()[0]}",
                           answer.duration_s, failure=answer.failure)
        facts = answer.facts or {}
    ctx = Context(host, target, deps, {req: done[req].status for req in cls.requires if req in done})
    try:
        verdict = cls().evaluate(facts, ctx)
        if not isinstance(verdict, Verdict):
            raise TypeError(f"evaluate returned {type(verdict).__name__}, not a Verdict")
    except Exception as exc:  # a bug in stackpeel's own check: report it, keep going
        return _result(cls, Status.ERROR, f"stackpeel's evaluation of this check failed: {exc}",
                       time.monotonic() - start, facts=facts,
                       failure=ProbeFailure("evaluate-exception", detail=traceback.format_exc()[-6000:]))
    merged = dict(facts)
    merged.update(verdict.facts)
    return _result(cls, verdict.status, verdict.summary, time.monotonic() - start, merged, verdict.findings)


def run_checks(classes: Sequence[Type[Check]], python: str, host: Mapping[str, Any],
               target: Mapping[str, Any], env: Optional[Mapping[str, str]] = None,
               workers: Optional[int] = None, progress: Optional[ProgressFn] = None,
               timeout_scale: float = 1.0) -> List[CheckResult]:
    """Run ``classes`` (already validated, in dependency order); results come back in that order."""
    by_id = {c.id: c for c in classes}
    pending = {c.id: {r for r in c.requires if r in by_id} for c in classes}
    done: Dict[str, CheckResult] = {}
    lock = threading.Lock()
    futures: Dict[cf.Future, str] = {}

    def safe_run(cls: Type[Check], snapshot: Dict[str, CheckResult]) -> CheckResult:
        try:
            return run_one(cls, python, host, target, snapshot, env, timeout_scale)
        except Exception as exc:  # runner bug: still a result
            return _result(cls, Status.ERROR, f"stackpeel failed to run this check: {exc}",
                           failure=ProbeFailure("runner-exception", detail=traceback.format_exc()[-6000:]))

    with cf.ThreadPoolExecutor(max_workers=workers or _default_workers(), thread_name_prefix="stackpeel") as pool:

        def submit_ready() -> None:
            for cid in [c for c, reqs in pending.items() if not reqs]:
                del pending[cid]
                cls = by_id[cid]
                if progress:
                    progress("start", cls, None)
                with lock:
                    snapshot = dict(done)
                futures[pool.submit(safe_run, cls, snapshot)] = cid

        submit_ready()
        while futures:
            finished, _ = cf.wait(list(futures), return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                cid = futures.pop(fut)
                res = fut.result()
                with lock:
                    done[cid] = res
                if progress:
                    progress("finish", by_id[cid], res)
                for reqs in pending.values():
                    reqs.discard(cid)
            submit_ready()
    return [done[c.id] for c in classes]
