"""What a check is: declared data plus a small, pure ``evaluate`` body.

A check's probe (``probe = "toolchain.c_compiler"``: function ``c_compiler`` in
``stackpeel/probes/toolchain.py``) runs in a child of the *target* interpreter and
returns a dict of observed facts. ``evaluate`` runs in stackpeel's own process, turns
those facts into a :class:`Verdict` and never touches the system. Keeping the two apart
lets the runner isolate the dangerous part and lets tests feed recorded facts to
``evaluate`` directly.

Example::

    class CCompiler(Check):
        id = "toolchain.c_compiler"
        title = "C compiler that Triton will use"
        layer = "toolchain"
        probe = "toolchain.c_compiler"
        codes = ("no-c-compiler", "c-compiler-broken")
        facts = CCompilerFacts  # a TypedDict (stackpeel/facts.py)

        def evaluate(self, facts, ctx):
            if not facts["compiler"]:
                return ctx.verdict("no C compiler",
                                   ctx.finding("no-c-compiler", path=facts["path_env"]))
            return ctx.ok(f"{facts['compiler']} works")
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import facts as _facts
from .. import knowledge as _knowledge
from .. import remedies
from ..model import Finding, Severity, Status


def version_tuple(text: Any) -> Tuple[int, ...]:
    """(3, 6, 0) from '3.6.0', '2.11.0+cu130', '3.7.0rc1', 'glibc 2.36' parts; () when unparsable."""
    out: List[int] = []
    for part in re.split(r"[.+]", str(text or "")):
        m = re.match(r"(\d+)", part)
        if not m:
            break
        out.append(int(m.group(1)))
        if len(out) == 3:
            break
    return tuple(out)


@dataclass(frozen=True)
class Verdict:
    status: Status
    summary: str
    findings: Tuple[Finding, ...] = ()
    #: facts derived in evaluate, merged over the probe's facts in the result
    facts: Mapping[str, Any] = field(default_factory=dict)


class Context:
    """What ``evaluate`` may look at: the host, the target, and the facts of the
    checks it requires (``deps``). It also builds findings with remedies."""

    def __init__(self, host: Mapping[str, Any], target: Mapping[str, Any], deps: Mapping[str, Mapping[str, Any]],
                 dep_status: Optional[Mapping[str, Status]] = None):
        self.host = host
        self.target = target
        self.deps = deps
        self.dep_status = dep_status or {}
        #: codes passed to :meth:`finding`, when the caller wants to audit them (tests, the runner)
        self.emitted: Optional[List[str]] = None

    def dep(self, check_id: str) -> Mapping[str, Any]:
        """Facts of a required check ({} when it produced none)."""
        return self.deps.get(check_id) or {}

    def finding(self, code: str, variant: _knowledge.Variant = None, evidence: str = "",
                severity: Optional[Severity] = None, message: Optional[str] = None, **observed: Any) -> Finding:
        """A finding of ``code``, its message rendered from the knowledge base's template
        (``variant`` picks one of ``messages.<variant>``, or a sequence of them to join) with
        the ``observed`` values.

        ``message=`` (legacy, for checks not yet moved to templates) gives the text verbatim.
        ``observed`` values also fill the remedy's commands.
        """
        spec = _knowledge.get(code)
        if self.emitted is not None:
            self.emitted.append(code)
        merged = {"python": self.target.get("python")}
        merged.update(observed)
        if message is None:
            message = spec.render_message(variant, merged)
        return Finding(
            code=code,
            severity=severity or spec.severity,
            title=spec.title,
            message=message,
            evidence=evidence or "",
            remedy=remedies.build(code, self.host, merged),
        )

    @staticmethod
    def sentence(code: str, variant: str, **observed: Any) -> str:
        """One ``messages.<variant>`` of ``code``, rendered alone: for a finding that lists a
        sentence per item (a package, a rank), joined into one of its message's params."""
        return _knowledge.render(_knowledge.get(code).template(variant), observed)

    # verdict helpers -------------------------------------------------------
    @staticmethod
    def ok(summary: str, **facts: Any) -> Verdict:
        return Verdict(Status.PASS, summary, (), facts)

    @staticmethod
    def skip(summary: str, **facts: Any) -> Verdict:
        return Verdict(Status.SKIP, summary, (), facts)

    @staticmethod
    def verdict(summary: str, *findings: Finding, **facts: Any) -> Verdict:
        """FAIL if any finding is blocking, WARN if any is degraded, else PASS."""
        sevs = {f.severity for f in findings}
        if Severity.BLOCKING in sevs:
            status = Status.FAIL
        elif Severity.DEGRADED in sevs:
            status = Status.WARN
        else:
            status = Status.PASS
        return Verdict(status, summary, tuple(findings), facts)


class UndeclaredCode(AssertionError):
    """A check emitted a finding code missing from its ``codes`` (raised in strict mode only)."""


#: environment variable that makes an undeclared code an error (the test suite sets it)
STRICT_ENV = "STACKPEEL_STRICT_CODES"


def strict_codes() -> bool:
    """True when a check emitting a code it does not declare must fail loudly (tests, CI)."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


class FactsShapeError(AssertionError):
    """A probe's facts do not fit the check's declared shape (``Check.facts``). Raised in strict
    mode only; otherwise the runner turns the mismatch into an ``error`` result."""


#: environment variable that makes facts that do not fit their shape an exception (the test
#: suite sets it): required keys missing, wrong types and, for a probe's own answer, undeclared keys
STRICT_FACTS_ENV = "STACKPEEL_STRICT_FACTS"


def strict_facts() -> bool:
    """True when facts that do not fit their declared shape must fail loudly (tests, CI)."""
    return os.environ.get(STRICT_FACTS_ENV, "") not in ("", "0")


def facts_problems(cls: "type", facts: Mapping[str, Any], extra: bool = False) -> List[str]:
    """What is wrong with ``facts`` for ``cls.facts`` ([] when it declares no shape)."""
    shape = getattr(cls, "facts", None)
    return _facts.problems(shape, facts, extra=extra) if shape is not None else []


class Check:
    """Base class of every check. Subclasses set the class attributes and ``evaluate``.

    id        dotted, names the healthy state (``toolchain.c_compiler``); public API
    title     one line for people
    layer     one of :data:`stackpeel.registry.LAYERS`
    requires  checks whose facts this one reads and whose failure would explain its own
    gate      subset of ``requires`` that must pass (or warn) for the probe to run at all;
              otherwise the result is ``blocked``
    probe_needs  requirements whose facts the probe itself reads (default: all, whole results);
              when declared, the probe starts on their probes' clean answers, not their verdicts
    probe     "module.function" in ``probes_dir`` (default ``stackpeel/probes``); None for
              checks that only combine facts of their requirements
    timeout   seconds before the probe is killed
    codes     finding codes ``evaluate`` may emit (validated against the knowledge base)
    facts     the TypedDict of the probe's facts (``stackpeel/facts.py``)
    """

    id: ClassVar[str]
    title: ClassVar[str]
    layer: ClassVar[str]
    requires: ClassVar[Tuple[str, ...]] = ()
    gate: ClassVar[Tuple[str, ...]] = ()
    probe: ClassVar[Optional[str]] = None
    #: requirements whose facts the *probe* reads; it starts once they are done. None
    #: means all of ``requires``. Listing fewer lets slow probes of different layers
    #: run at the same time; ``evaluate`` always waits for every requirement.
    probe_needs: ClassVar[Optional[Tuple[str, ...]]] = None
    timeout: ClassVar[float] = 30.0
    #: directory holding the probe module; None means stackpeel's own ``probes/``.
    #: Plugins set it to a folder of their package (their probes can still use ``_common``).
    probes_dir: ClassVar[Optional[str]] = None
    #: options the probe receives in its input (besides deps); override per check
    probe_options: ClassVar[Dict[str, Any]] = {}
    #: finding codes ``evaluate`` may emit; each exists in the knowledge base (the registry
    #: checks) and emitting another one is a bug (the test suite fails)
    codes: ClassVar[Tuple[str, ...]] = ()
    #: the shape of the probe's facts: a TypedDict (``stackpeel/facts.py``); None while undeclared
    facts: ClassVar[Optional[type]] = None
    #: modules the probe imports anyway (``("torch",)``): such probes are forked from one
    #: interpreter that imported them once (runner/zygote.py) and are started first
    preload: ClassVar[Tuple[str, ...]] = ()
    #: a function of the probe's module that needs none of ``preload`` (``"loaded_libs_prework"``):
    #: it runs at once in the torch-free interpreter and its facts reach the probe as
    #: ``inp["prework"]`` (absent when it failed: the probe then does that work itself), so a
    #: probe that waits for the torch import only does, after it, what needs torch
    prework: ClassVar[Optional[str]] = None
    #: the run's critical path among the ``preload`` probes (the one with the most work after
    #: the import): when the preload ends, its fork is made before the others' (runner/zygote.py)
    start_first: ClassVar[bool] = False
    #: a resource the probe uses that serves one client at a time, or serves several each
    #: slower (``"nvidia-driver"``: cuInit, nvmlInit and nvidia-smi each initialise the driver's
    #: view of every GPU, and run together they wait on each other). Probes naming the same
    #: one run one after another, in dependency order; one that runs longer than
    #: ``runner.scheduler.EXCLUSIVE_LEASE_S`` no longer holds the others back.
    exclusive: ClassVar[Optional[str]] = None
    #: runs only under ``stackpeel check --deep`` (real kernels); otherwise skipped unprobed
    deep_only: ClassVar[bool] = False
    #: its facts change without any change of the machine (free space): a repeat run never
    #: reuses its result, and reuses its dependents' only if its verdict came out the same
    volatile: ClassVar[bool] = False
    #: it measures a limit every probe starts under (stackpeel gives each probe the user's own:
    #: runner/child.own_nofile): the runner offers it the death of any other check's probe
    #: (:meth:`explain_death`), and the note it returns nests that check under this one in the
    #: diagnosis instead of listing it among the checks that could not complete
    limits_every_probe: ClassVar[bool] = False
    #: where the check comes from: "builtin", or a plugin's distribution and version (set by
    #: stackpeel/plugins.py from the package metadata, never by the check itself)
    origin: ClassVar[str] = "builtin"
    #: the plugin's name (its entry point's name) for a plugin's check, else ""
    plugin: ClassVar[str] = ""

    def evaluate(self, facts: Mapping[str, Any], ctx: Context) -> Verdict:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_failure(self, failure: Any, ctx: Context) -> Sequence[Finding]:
        """Findings for a result whose probe gave no answer (``failure``: its ProbeFailure, with
        exit status and stderr tail): a requirement that explains the death (a low open-files
        limit under which the probe could not even write its answer). The result stays
        ``error``; the diagnosis nests it under the requirement it names. A **blocking** finding
        here says the check measured its own condition as far as it matters: the diagnosis then
        takes the result as a root cause, not as a check that could not complete
        (diagnosis._died_of_its_own), so return one only for a death the condition explains.
        Default: for a check that ``limits_every_probe``, its first code's ``no-probe`` sentence,
        blocking, where :meth:`death_params` says its limit killed the probe; else none."""
        return self._limit_finding(failure, ctx, "no-probe", Severity.BLOCKING)

    def explain_death(self, failure: Any, ctx: Context) -> Sequence[Finding]:
        """For a check that ``limits_every_probe``: an **informational** finding of its own code when
        its condition explains why *another* check's probe died without an answer (``failure``: that
        probe's ProbeFailure; ``ctx.target``: the limits the runner started it under, ``nofile`` and
        ``fsize``). The diagnosis then nests that check under this one (a ``named_only`` code names
        its cause). Default: its first code's ``probe-died`` sentence where :meth:`death_params`
        says so; else none."""
        return self._limit_finding(failure, ctx, "probe-died", Severity.INFO)

    def death_params(self, failure: Any, ctx: Context) -> Optional[Dict[str, Any]]:
        """For a check that ``limits_every_probe``: the message parameters (and ``evidence``) of its
        finding when the limit it measures is why a probe gave no answer, None when it is not: the
        one judgement :meth:`on_failure` and :meth:`explain_death` share. Default: None."""
        return None

    def _limit_finding(self, failure: Any, ctx: Context, variant: str, severity: Severity) -> Sequence[Finding]:
        if not self.limits_every_probe:
            return ()
        params = self.death_params(failure, ctx)
        return [] if params is None else [ctx.finding(self.codes[0], variant, severity=severity, **params)]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "evaluate" in vars(cls) and not getattr(cls.evaluate, "_audited", False):
            inner = cls.evaluate

            @functools.wraps(inner)
            def evaluate(self: "Check", facts: Mapping[str, Any], ctx: Context) -> Verdict:
                if strict_facts():  # the runner validated them already; a test may feed its own
                    # (required keys only: a replayed report may hold a derived value over a probe's)
                    wrong = [w for w in facts_problems(type(self), facts) if w.startswith("missing key")]
                    if wrong:
                        raise FactsShapeError(f"{type(self).id}: facts do not fit "
                                              f"{type(self).facts.__name__}: {'; '.join(wrong)}")
                verdict = inner(self, facts, ctx)
                if strict_codes():
                    undeclared = [f.code for f in verdict.findings if f.code not in type(self).codes]
                    if undeclared:
                        raise UndeclaredCode(f"{type(self).id}: emitted {', '.join(undeclared)} "
                                             f"but declares only codes = {type(self).codes}")
                return verdict

            evaluate._audited = True  # type: ignore[attr-defined]
            cls.evaluate = evaluate  # type: ignore[method-assign]

    @classmethod
    def describe(cls) -> Dict[str, Any]:
        return {
            "id": cls.id,
            "title": cls.title,
            "layer": cls.layer,
            "requires": list(cls.requires),
            "gate": list(cls.gate),
            "probe_needs": list(cls.requires if cls.probe_needs is None else cls.probe_needs),
            "probe": cls.probe,
            "timeout": cls.timeout,
            "codes": list(cls.codes),
            "origin": cls.origin,
            "doc": (cls.__doc__ or "").strip(),
        }
