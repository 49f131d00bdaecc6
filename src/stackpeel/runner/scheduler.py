"""Run checks in parallel, in dependency order, and always come back with a result for each.

A check's probe starts as soon as the checks whose facts it reads (``probe_needs``) have
finished and its ``gate`` passed, or the gate's probes answered cleanly while their
verdicts wait for other checks; its verdict waits for everything it ``requires``. If a
check in its ``gate`` did not pass (or warn), it is ``blocked``: its probe never starts,
or its answer is discarded when it started on the gate's clean answer. Probes that would
get the same input run once for all of them. Its probe runs in
a child of the target interpreter (:mod:`.child`); its ``evaluate`` runs here. Any
misbehaviour (probe crash, timeout, junk, a bug in ``evaluate``) becomes an ``error``
result with the evidence; nothing escapes as an exception.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import os
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Type

from ..checks.base import Check, Context, FactsShapeError, Verdict, facts_problems, strict_facts
from ..model import CheckResult, ProbeFailure, Status
from ..plugins import PluginLoadError
from . import hygiene
from .child import ProbeAnswer, own_nofile, run_probe
from .zygote import FEW_CORES, TORCH_FREE_NICE, Zygotes  # noqa: F401 (the nice levels: read by tests here)

OK_STATUSES = (Status.PASS, Status.WARN)

ProgressFn = Callable[[str, Type[Check], Optional[CheckResult]], None]


def _default_workers() -> int:
    return max(4, min(12, (os.cpu_count() or 2) * 2))


def _result(cls: Type[Check], status: Status, summary: str, duration: float = 0.0, facts=None, findings=(),
            failure: Optional[ProbeFailure] = None) -> CheckResult:
    return CheckResult(id=cls.id, title=cls.title, layer=cls.layer, status=status, summary=summary,
                       facts=dict(facts or {}), findings=tuple(findings), duration_s=duration, failure=failure,
                       requires=tuple(cls.requires))


def _gate(cls: Type[Check], done: Mapping[str, CheckResult]) -> Optional[CheckResult]:
    """The result of a check that must not run because of its gate, else None."""
    for req in cls.gate:
        dep = done.get(req)
        if dep is None:
            return _result(cls, Status.BLOCKED, f"not run: it needs {req}, which was not selected")
        if dep.status is Status.SKIP:
            return _result(cls, Status.SKIP, f"not applicable: {req} was skipped ({dep.summary})")
        if dep.status not in OK_STATUSES:
            how = {Status.FAIL: "failed", Status.ERROR: "could not complete", Status.BLOCKED: "was blocked"}
            return _result(cls, Status.BLOCKED, f"not run: it needs {req}, which {how[dep.status]}")
    return None


def _probe(cls: Type[Check], python: str, done: Mapping[str, Any], env: Optional[Mapping[str, str]],
           timeout_scale: float, mode: str = "default", zygote: Optional["Zygotes"] = None,
           prework: Optional[Mapping[str, Any]] = None, scratch: Optional[str] = None) -> Optional[ProbeAnswer]:
    """``done``: the results of the checks the probe reads, or (see :func:`_inputs_ready`)
    their probes' clean answers; only their ``facts`` are read. ``prework``: the facts of
    the check's ``prework`` function (:func:`_prework`), when it answered; ``scratch``: the
    folder it shared with that function (:func:`_prework`)."""
    if not cls.probe:
        return None
    deps = {req: done[req].facts for req in probe_inputs(cls) if req in done}
    timeout = cls.timeout * timeout_scale
    # probes that budget sub-steps read their effective timeout from timeout_s; "mode" is
    # "default" (fast: only the imports the verdict needs) or "deep" (full imports, real ops)
    inp = {"deps": deps, "options": dict(cls.probe_options), "check": cls.id, "timeout_s": timeout, "mode": mode}
    if prework is not None:
        inp["prework"] = dict(prework)
    if scratch is not None:
        inp["scratch"] = scratch
    if zygote is not None:
        answer = zygote.for_probe(cls).run_probe(cls.probe, inp, timeout, probes_dir=cls.probes_dir,
                                                 first=cls.start_first)
        if answer is not None:
            return answer
    return run_probe(python, cls.probe, inp, timeout, env=env, probes_dir=cls.probes_dir)


def _prework(cls: Type[Check], zygote: "Zygotes", timeout_scale: float, mode: str,
             scratch: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """Run the check's ``prework`` function in the torch-free interpreter; its facts, or None
    when it cannot (the probe then does that work itself: it only gets faster with them).
    ``scratch``: a folder the runner made for this check, handed to the prework function and
    then to the probe (``inp["scratch"]``), so what one leaves there the other finds; the
    runner removes it once the probe has answered."""
    module = str(cls.probe).rpartition(".")[0]
    timeout = cls.timeout * timeout_scale
    inp = {"deps": {}, "options": dict(cls.probe_options), "check": cls.id, "timeout_s": timeout, "mode": mode}
    if scratch is not None:
        inp["scratch"] = scratch
    try:
        answer = zygote.bare.run_probe(f"{module}.{cls.prework}", inp, timeout, probes_dir=cls.probes_dir)
    except Exception:  # runner bug: the probe does it all
        return None
    if answer is None or answer.failure is not None or not isinstance(answer.facts, dict):
        return None
    return answer.facts


def _gate_promising(gate: Set[str], done: Mapping[str, CheckResult],
                    answered: Mapping[str, Optional[ProbeAnswer]]) -> bool:
    """True when every check of a gate passed, or its probe answered cleanly and only its
    verdict is still waiting for other checks: a probe gated on it may start now (its gate is
    judged when its own verdict is due; a probe run for a gate that then fails is discarded).
    ``triton.build`` thus starts when ``triton.import``'s probe answers, not when its verdict,
    which waits for ``torch.cuda`` and so for ``import torch``, comes in."""
    for g in gate:
        if g in done:
            if done[g].status not in OK_STATUSES:
                return False
        elif g not in answered or (answered[g] is not None and answered[g].failure is not None):
            return False
    return True


def _deep_skip(cls: Type[Check], mode: str) -> Optional[CheckResult]:
    if getattr(cls, "deep_only", False) and mode != "deep":
        return _result(cls, Status.SKIP, "not run: it runs real kernels, only with `stackpeel check --deep`")
    return None


def preload_of(classes: Sequence[Type[Check]], env: Optional[Mapping[str, str]] = None) -> Optional[Tuple[str, ...]]:
    """The modules the preloading interpreter imports for ``classes`` (``()``: a bare one
    only), or None when no zygote is used (no probes, or STACKPEEL_NO_PRELOAD is set)."""
    environ = os.environ if env is None else env
    if not any(c.probe for c in classes) or environ.get("STACKPEEL_NO_PRELOAD") \
            or os.environ.get("STACKPEEL_NO_PRELOAD"):
        return None
    return tuple(dict.fromkeys(m for c in classes for m in (c.preload or ())))


@contextlib.contextmanager
def _zygote(classes: Sequence[Type[Check]], python: str, env: Optional[Mapping[str, str]],
            started: Optional[Zygotes] = None, eager: bool = True, warm: bool = True):
    """The forking interpreters of this run (``started`` when it serves it), or None when
    STACKPEEL_NO_PRELOAD is set; closed at the end either way: ``started`` only begins to
    end (its owner closes it: engine.check builds the report meanwhile), the others are
    gone on return. ``eager``: see :class:`Zygotes`."""
    preload = preload_of(classes, env)
    if started is not None and (preload is None or not started.serves(python, preload, env)):
        started.close()
        started = None
    if preload is None:
        yield None
        return
    zygotes = started or Zygotes(python, preload, env, eager=eager, warm=warm)
    try:
        yield zygotes
    finally:
        if started is not None:
            zygotes.release()
        else:
            zygotes.close()


def _failure_findings(cls: Type[Check], failure: ProbeFailure, host: Mapping[str, Any],
                      target: Mapping[str, Any], done: Mapping[str, CheckResult],
                      limits: Sequence[Type[Check]] = ()) -> tuple:
    """What the check's ``on_failure`` names about a probe that gave no answer, then what each
    check of ``limits`` (``Check.limits_every_probe``) other than this one says of the death in its
    ``explain_death``, unless ``on_failure`` named one of that check's codes already (never raises)."""
    deps = {req: done[req].facts for req in cls.requires if req in done}
    # the open-files limit the probe was started under (the user's, read before stackpeel raised its
    # own): multi_gpu.open_files names it when its own probe died of it (chk27), or another's (chk28).
    # A report records it (engine.check), so a replay judges the death by the run's limit, not its own
    if not isinstance(target.get("nofile"), (list, tuple)):
        target = {**target, "nofile": list(own_nofile())}
    ctx = Context(host, target, deps, {req: done[req].status for req in cls.requires if req in done})
    try:
        found = list(cls().on_failure(failure, ctx))
    except Exception:  # a bug there must not hide the failure itself
        found = []
    for lim in limits:
        if lim.id == cls.id or {f.code for f in found} & set(lim.codes):
            continue
        try:
            found.extend(lim().explain_death(failure, ctx))
        except Exception:
            pass
    return tuple(found)


def _finish(cls: Type[Check], answer: Optional[ProbeAnswer], host: Mapping[str, Any], target: Mapping[str, Any],
            done: Mapping[str, CheckResult], recorded: bool = False,
            limits: Sequence[Type[Check]] = ()) -> CheckResult:
    """Turn a probe's answer into the check's result; ``done`` holds every requirement.

    The facts must fit the check's declared shape (``Check.facts``) before ``evaluate`` reads
    them: otherwise the result is ``error`` naming the key (strict mode: FactsShapeError).
    ``recorded``: the facts come from a saved report (replay), where the keys ``evaluate``
    derived sit beside the probe's and may have replaced one of them (config.nccl_environment's
    ``interfaces`` did, before it derived ``interface_names``): only missing keys count there.
    ``limits``: the checks of the run that ``limits_every_probe`` (:func:`_failure_findings`)."""
    if answer is not None and answer.failure is not None:
        return _result(cls, Status.ERROR, f"check could not complete: {answer.failure.detail.splitlines()[0]}",
                       answer.duration_s, failure=answer.failure,
                       findings=_failure_findings(cls, answer.failure, host, target, done, limits))
    facts: Dict[str, Any] = dict(answer.facts or {}) if answer is not None else {}
    duration = answer.duration_s if answer is not None else 0.0
    if answer is not None:
        strict = strict_facts()
        # undeclared keys cannot mislead evaluate (it reads declared ones): flagged in strict mode
        wrong = facts_problems(cls, facts, extra=strict and not recorded)
        if recorded:
            wrong = [w for w in wrong if w.startswith("missing key")]
        if wrong:
            detail = f"{cls.probe} answered facts that do not fit {cls.facts.__name__}: " + "; ".join(wrong)
            if strict:
                raise FactsShapeError(f"{cls.id}: {detail}")
            whose = "stackpeel's probe and check disagree (a stackpeel bug: please report it)" \
                if cls.origin == "builtin" else f"the plugin {cls.plugin}'s probe and check disagree ({cls.origin})"
            return _result(cls, Status.ERROR, f"{whose}: {wrong[0]}", duration, facts=facts,
                           failure=ProbeFailure("facts-shape", detail=detail))
    deps = {req: done[req].facts for req in cls.requires if req in done}
    ctx = Context(host, target, deps, {req: done[req].status for req in cls.requires if req in done})
    start = time.monotonic()
    try:
        verdict = cls().evaluate(facts, ctx)
        if not isinstance(verdict, Verdict):
            raise TypeError(f"evaluate returned {type(verdict).__name__}, not a Verdict")
    except PluginLoadError as exc:  # the stand-in of a plugin that cannot be used
        return _result(cls, Status.ERROR, f"plugin {cls.plugin} ({cls.origin}) cannot be used: "
                       f"{str(exc).splitlines()[0]}", failure=ProbeFailure("plugin-load", detail=str(exc)[-6000:]))
    except Exception as exc:  # a bug in the check: report it (whose it is), keep going
        whose = "stackpeel's evaluation of this check" if cls.origin == "builtin" else \
            f"evaluation by the plugin {cls.plugin} ({cls.origin})"
        return _result(cls, Status.ERROR, f"{whose} failed: {exc}",
                       duration + time.monotonic() - start, facts=facts,
                       failure=ProbeFailure("evaluate-exception", detail=traceback.format_exc()[-6000:]))
    merged = dict(facts)
    merged.update(verdict.facts)
    return _result(cls, verdict.status, verdict.summary, duration + time.monotonic() - start, merged,
                   verdict.findings)


def _same(now: CheckResult, before: CheckResult) -> bool:
    """The same verdict: status and findings (code, severity)."""
    return now.status == before.status and [(f.code, f.severity) for f in now.findings] == \
        [(f.code, f.severity) for f in before.findings]


def _share_key(cls: Type[Check], done: Mapping[str, Any]) -> Optional[Tuple[Any, ...]]:
    """Checks whose probe would get the same input share one run of it (the five
    ``config.*_environment`` checks read one probe): the same probe, options, timeout and
    interpreter, and the same facts of the same requirements. None: runs on its own."""
    if not isinstance(cls.probe_options, Mapping):
        return None
    try:
        options = json.dumps(cls.probe_options, sort_keys=True)
        deps = json.dumps({r: done[r].facts for r in probe_inputs(cls) if r in done}, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return None
    return (cls.probe, str(cls.probes_dir or ""), options, deps, cls.timeout, tuple(cls.preload or ()))


def probe_inputs(cls: Type[Check]) -> Tuple[str, ...]:
    """Requirements whose facts the probe reads, so it must start after them."""
    return tuple(cls.requires) if cls.probe_needs is None else tuple(cls.probe_needs)


def _inputs_ready(cls: Type[Check], needs: Set[str], done: Mapping[str, CheckResult],
                  answered: Mapping[str, Optional[ProbeAnswer]]) -> Optional[Dict[str, Any]]:
    """What the probe of ``cls`` reads, once all of it is there; else None.

    A check that declares ``probe_needs`` reads only those probes' facts, so a clean answer
    (no failure) is enough: it need not wait for their verdicts, which may wait for slower
    checks (``triton.build``'s waits, through ``triton.import``, for ``torch.cuda`` and so for
    ``import torch``; ``triton.kernel_launch``, which reads only its facts, starts at once).
    Without ``probe_needs`` the probe reads whole results, verdict facts included."""
    inputs: Dict[str, Any] = {}
    for req in needs:
        if req in done:
            inputs[req] = done[req]
            continue
        answer = answered.get(req)
        if cls.probe_needs is None or answer is None or answer.failure is not None:
            return None
        inputs[req] = answer
    return inputs


#: seconds a probe holds its ``Check.exclusive`` resource before the others that name it start
#: anyway: one driver client that hangs must not queue the rest behind its whole timeout
EXCLUSIVE_LEASE_S = 2.0


def _resource_free(cls: Type[Check], holders: Mapping[str, Tuple[cf.Future, float]]) -> bool:
    """Whether the probe of ``cls`` may start now as far as its ``exclusive`` resource goes."""
    held = holders.get(cls.exclusive) if cls.exclusive else None
    if held is None:
        return True
    fut, since = held
    return fut.done() or time.monotonic() - since > EXCLUSIVE_LEASE_S


def run_one(cls: Type[Check], python: str, host: Mapping[str, Any], target: Mapping[str, Any],
            done: Mapping[str, CheckResult], env: Optional[Mapping[str, str]] = None,
            timeout_scale: float = 1.0, mode: str = "default") -> CheckResult:
    """Run a single check whose requirements are in ``done``."""
    gated = _gate(cls, done) or _deep_skip(cls, mode)
    if gated is not None:
        return gated
    return _finish(cls, _probe(cls, python, done, env, timeout_scale, mode), host, target, done)


def run_checks(classes: Sequence[Type[Check]], python: str, host: Mapping[str, Any],
               target: Mapping[str, Any], env: Optional[Mapping[str, str]] = None,
               workers: Optional[int] = None, progress: Optional[ProgressFn] = None,
               timeout_scale: float = 1.0, mode: str = "default",
               cached: Optional[Mapping[str, CheckResult]] = None,
               stats: Optional[Dict[str, Any]] = None, zygotes: Optional[Zygotes] = None) -> List[CheckResult]:
    """Run ``classes`` (already validated, in dependency order); results come back in that order.

    A probe starts as soon as the checks it reads (``probe_needs``) are done and its gate
    passed or answered cleanly (:func:`_gate_promising`), so slow probes of different layers
    overlap; its ``evaluate`` waits for every check in
    ``requires``, because the verdict may depend on them. Probes that import torch anyway
    (``preload``) are forked from one interpreter that imported it once, and start first.

    ``cached`` holds a previous run's results under an unchanged key (runner/cache.py): a
    cached result stands, without running its probe, unless its check is ``volatile`` or one
    of its requirements came out differently this time (status or findings).
    ``stats``, when given, receives what the preloading interpreter did (``preload``).
    ``zygotes``: forking interpreters the caller started early (see :class:`Zygotes`); this
    function ends them (in the background: the caller's ``close()`` waits until they are gone).
    """
    by_id = {c.id: c for c in classes}
    present = set(by_id)
    needs = {c.id: set(probe_inputs(c)) & present for c in classes}
    gates = {c.id: set(c.gate) & present for c in classes}
    speculative = set()   # probes started before their gate's verdict: the gate is judged at the end
    limits = [c for c in classes if c.limits_every_probe]  # offered every probe's death (_failure_findings)
    # the slow probes (those that import torch) first, so the critical path starts at once
    waiting_probe = [c.id for c in sorted(classes, key=lambda c: not c.preload)]
    answered: Dict[str, Optional[ProbeAnswer]] = {}
    done: Dict[str, CheckResult] = {}
    cached = cached or {}
    reusable = {cid: r for cid, r in cached.items() if cid in by_id and not getattr(by_id[cid], "volatile", False)}
    futures: Dict[cf.Future, List[str]] = {}   # a probe run -> the checks waiting for its answer
    shared: Dict[Tuple[Any, ...], cf.Future] = {}

    prework: Dict[str, cf.Future] = {}  # check id -> its prework's facts (or None), started at once
    scratch: Dict[str, str] = {}        # check id -> the folder its prework and probe share
    holders: Dict[str, Tuple[cf.Future, float]] = {}  # Check.exclusive -> the probe run holding it, since when

    def safe_probe(cls: Type[Check], snapshot: Dict[str, Any]) -> Optional[ProbeAnswer]:
        try:
            pre = prework[cls.id].result() if cls.id in prework else None
            return _probe(cls, python, snapshot, env, timeout_scale, mode, zygote, pre, scratch.get(cls.id))
        except Exception:  # runner bug: still an answer
            return ProbeAnswer(None, ProbeFailure("runner-exception", detail=traceback.format_exc()[-6000:]), 0.0)
        finally:
            if cls.id in scratch:
                hygiene.remove_tempdir(scratch.pop(cls.id))

    def complete(cid: str, res: CheckResult) -> None:
        done[cid] = res
        if progress:
            progress("finish", by_id[cid], res)

    # a probe waiting for the zygote's preload holds a worker: do not let it starve the quick ones
    pool_size = workers or _default_workers() + sum(1 for c in classes if c.preload) + \
        sum(1 for c in classes if c.prework)
    # the torch interpreter starts at once unless every check that would fork from it is reused
    eager = any(c.preload and c.probe and c.id not in reusable for c in classes)
    preloading = {c.id for c in classes if c.preload and c.probe}
    # warming the bare interpreter pays from about three probes on (a repeat run reruns two)
    warm = sum(1 for c in classes if c.probe and not c.preload and c.id not in reusable) > 3
    try:
        with _zygote(classes, python, env, zygotes, eager, warm) as zygote, \
                cf.ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="stackpeel") as pool:
            if zygote is not None:  # (each probe spawning its own interpreter: no torch import to overlap)
                for c in classes:
                    if c.prework and c.probe and c.id not in reusable and _deep_skip(c, mode) is None:
                        try:
                            scratch[c.id] = hygiene.make_tempdir("stackpeel-scratch-")
                        except (hygiene.Closing, hygiene.NoTempDir):
                            pass  # the probe works in a folder of its own
                        prework[c.id] = pool.submit(_prework, c, zygote, timeout_scale, mode, scratch.get(c.id))
            while len(done) < len(classes):
                progressed = True
                while progressed:
                    progressed = False
                    for cid in list(waiting_probe):
                        inputs = _inputs_ready(by_id[cid], needs[cid], done, answered)
                        if inputs is None:
                            continue
                        early = not gates[cid] <= set(done)
                        if early and (cid in reusable or not _gate_promising(gates[cid], done, answered)):
                            continue
                        cls = by_id[cid]
                        if cid in reusable:
                            if not set(cls.requires) & present <= set(done):
                                continue
                            if all(_same(done[r], cached[r]) for r in cls.requires if r in present and r in cached):
                                waiting_probe.remove(cid)
                                complete(cid, reusable[cid])
                                progressed = True
                                continue
                            del reusable[cid]
                        gated = (None if early else _gate(cls, done)) or _deep_skip(cls, mode)
                        if gated is None and cls.probe and not _resource_free(cls, holders):
                            continue
                        waiting_probe.remove(cid)
                        if gated is not None:
                            complete(cid, gated)
                            progressed = True
                            continue
                        if early:
                            speculative.add(cid)
                        if progress:
                            progress("start", cls, None)
                        if cls.probe:
                            key = _share_key(cls, inputs)
                            fut = shared.get(key) if key else None
                            if fut is None:
                                fut = pool.submit(safe_probe, cls, inputs)
                                futures[fut] = []
                                if key:
                                    shared[key] = fut
                                if cls.exclusive:
                                    holders[cls.exclusive] = (fut, time.monotonic())
                            if fut in futures:
                                futures[fut].append(cid)
                            else:
                                answered[cid] = fut.result()
                        else:
                            answered[cid] = None
                    for cid in list(answered):
                        if set(by_id[cid].requires) & present <= set(done):
                            answer = answered.pop(cid)
                            try:
                                gated = _gate(by_id[cid], done) if cid in speculative else None
                                res = gated or _finish(by_id[cid], answer, host, target, done, limits=limits)
                            except FactsShapeError:  # strict mode (tests): a probe/shape mismatch fails loudly
                                raise
                            except Exception as exc:  # runner bug: still a result
                                res = _result(by_id[cid], Status.ERROR, f"stackpeel failed to run this check: {exc}",
                                              failure=ProbeFailure("runner-exception",
                                                                   detail=traceback.format_exc()[-6000:]))
                            complete(cid, res)
                            progressed = True
                if len(done) == len(classes):
                    break
                if zygote is not None and preloading and preloading <= set(done) | set(answered):
                    zygote.release_loaded()  # every probe that forks from it has answered
                    preloading = set()
                if not futures:  # nothing running and nothing ready: cannot happen with a validated DAG
                    for cid in list(waiting_probe) + list(answered):
                        complete(cid, _result(by_id[cid], Status.ERROR, "stackpeel could not schedule this check",
                                              failure=ProbeFailure("runner-exception", detail="unsatisfiable order")))
                    break
                # with a timeout: a signal another thread received runs its handler here within it
                finished, _ = cf.wait(list(futures), timeout=0.25, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    for cid in futures.pop(fut):
                        answered[cid] = fut.result()
            if stats is not None and zygote is not None and zygote.loaded not in (None, zygote.bare):
                z = zygote.loaded
                stats["preload"] = {"wanted": list(z.preload), "imported": list(z.preloaded),
                                    "forked": bool(z.ready.is_set() and z.clean), "problem": z.problem,
                                    "import_s": z.import_s}
    finally:  # a probe that never ran (blocked, skipped): its prework has ended with the pool
        for path in list(scratch.values()):
            hygiene.remove_tempdir(path)
    return [done[c.id] for c in classes]
