"""The data stackpeel passes between its layers: frozen dataclasses and enums.

Checks produce :class:`CheckResult` objects, the diagnosis turns a list of them into a
:class:`Diagnosis`, and renderers turn a :class:`Report` into text. Everything here
serialises to plain JSON (``to_dict``) and back (``from_dict``) so reports can cross
process boundaries and be pinned by the schema in ``docs/report.schema.json``.

Statuses keep "the system is broken" apart from "the check is broken":

==========  ===============================================================
``pass``     the layer works as far as this check can tell
``warn``     it works, but something degrades it (performance, a latent risk)
``fail``     it is broken; findings say why
``skip``     not applicable here (e.g. the library is not installed)
``blocked``  not run: a prerequisite it cannot run without did not pass
``error``    the check itself crashed, hung or printed junk (evidence kept)
==========  ===============================================================
"""

from __future__ import annotations

import enum
import functools
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

SCHEMA_VERSION = 1


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    BLOCKED = "blocked"
    ERROR = "error"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


class Severity(str, enum.Enum):
    """How bad a finding is.

    ``blocking``: the stack does not work (a training run fails or silently runs the
    wrong code path). ``degraded``: it works but slower, or will break under a foreseeable
    change (a latent failure). ``info``: worth knowing, nothing to fix.
    """

    BLOCKING = "blocking"
    DEGRADED = "degraded"
    INFO = "info"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


class ExitCode(enum.IntEnum):
    """Exit codes of ``stackpeel check``, ``explain`` and ``run`` (and ``list``, ``codes``).

    OK (0): ``check``: every check ran and no blocking problem was found; ``explain``: the
    log shows no error at all; ``run``: (the program's own status is returned instead).
    PROBLEMS (1): ``check``: a blocking problem was found, or a check could not complete
    (``error``): stackpeel does not claim health it could not measure; ``explain``: a cause
    (or a known symptom) was identified, or the log shows an error nothing explains.
    USAGE (2): bad command-line input, unreadable input, or stackpeel itself failed.
    NOT_STARTED (127): ``run``: the command could not be started (as a shell says).
    INTERRUPTED (130): interrupted by Ctrl-C (SIGINT), as a shell says.

    ``stackpeel run`` otherwise exits with the program's own status (and dies by the same
    signal), so it can wrap a command without changing what its caller sees.
    """

    OK = 0
    PROBLEMS = 1
    USAGE = 2
    NOT_STARTED = 127
    INTERRUPTED = 130


#: what each exit code means per command, for ``--help`` (generated from one table)
_EXIT_HELP = {
    "check": ((ExitCode.OK, "no blocking problem found"),
              (ExitCode.PROBLEMS, "a blocking problem was found, or a check could not complete"),
              (ExitCode.USAGE, "usage error, or stackpeel itself failed"),
              (ExitCode.INTERRUPTED, "interrupted (Ctrl-C)")),
    "explain": ((ExitCode.OK, "no known problem found in the log: it shows no error at all"),
                (ExitCode.PROBLEMS, "a cause (or a known symptom) was identified, or the log shows an error no "
                                    "knowledge-base entry explains (an \"Unknown error\" with a fingerprint)"),
                (ExitCode.USAGE, "usage error, or the input is empty, binary or unreadable"),
                (ExitCode.INTERRUPTED, "interrupted (Ctrl-C)")),
    "run": ((None, "the program's own exit status (and death by the same signal)"),
            (ExitCode.USAGE, "usage error"),
            (ExitCode.NOT_STARTED, "the command cannot be started")),
}


def exit_status_help(command: str) -> str:
    """The ``exit status:`` block of ``stackpeel COMMAND --help`` (from :class:`ExitCode`)."""
    lines = ["exit status:"]
    for code, text in _EXIT_HELP[command]:
        lines.append(f"  {'*' if code is None else str(int(code)):>3}  {text}")
    return "\n".join(lines) + "\n"


#: the ``kind`` of each JSON document stackpeel writes
REPORT_KINDS = ("check", "explain", "run")


def envelope(kind: str, schema_version: int = SCHEMA_VERSION) -> Dict[str, Any]:
    """The keys every JSON report of ``check``, ``explain`` and ``run`` starts with:
    ``schema_version`` (changes only on incompatible changes), ``kind`` and ``tool``."""
    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report kind {kind!r}")
    from . import __version__

    return {"schema_version": schema_version, "kind": kind, "tool": {"name": "stackpeel", "version": __version__}}


@dataclass(frozen=True)
class Command:
    """One copy-pasteable shell command, tagged with the tool it belongs to.

    ``manager`` is one of ``apt``, ``dnf``, ``yum``, ``apk``, ``zypper``, ``pacman``,
    ``conda``, ``pip``, ``shell``. ``command`` is the whole line, ready to paste.

    The structure lets the report merge fixes without parsing shell text: ``kind`` is
    ``install`` when the command installs ``packages`` with ``manager`` (so the installs of
    several findings become one command), ``update`` for a package index refresh, and
    ``shell`` for anything else (run as written). ``sudo`` is the prefix the command used
    (``"sudo "`` or ``""``), kept so a merged command keeps it too.
    """

    manager: str
    command: str
    packages: Tuple[str, ...] = ()
    kind: str = "shell"
    sudo: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"manager": self.manager, "command": self.command, "kind": self.kind,
                "packages": list(self.packages), "sudo": self.sudo}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Command":
        return cls(manager=d["manager"], command=d["command"], packages=tuple(d.get("packages") or ()),
                   kind=d.get("kind") or "shell", sudo=d.get("sudo") or "")


@dataclass(frozen=True)
class Remedy:
    """What to do: prose for people, commands for machines, kept apart.

    ``automatic`` is the knowledge base's word on whether the commands may run here, unattended
    (``remedy = {automatic = ...}``): ``False`` means a person must act elsewhere or with care
    (the host's driver, a container's configuration) and ``why`` says so; ``None``: not stated.
    """

    text: str
    commands: Tuple[Command, ...] = ()
    automatic: Optional[bool] = None
    why: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"text": self.text, "commands": [c.to_dict() for c in self.commands], "automatic": self.automatic,
                "why": self.why}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Remedy":
        return cls(text=d["text"], commands=tuple(Command.from_dict(c) for c in d.get("commands", ())),
                   automatic=d.get("automatic"), why=d.get("why") or "")


@dataclass(frozen=True)
class Finding:
    """A verdict with a stable code.

    ``message`` states the fact with the observed values and its consequence.
    ``evidence`` is the original text verbatim (exception, compiler stderr, exit code),
    the part libraries usually swallow.
    """

    code: str
    severity: Severity
    title: str
    message: str
    evidence: str = ""
    remedy: Optional[Remedy] = None

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "title": self.title,
            "message": self.message,
            "evidence": self.evidence,
            "remedy": self.remedy.to_dict() if self.remedy else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Finding":
        return cls(
            code=d["code"],
            severity=Severity(d["severity"]),
            title=d["title"],
            message=d["message"],
            evidence=d.get("evidence", ""),
            remedy=Remedy.from_dict(d["remedy"]) if d.get("remedy") else None,
        )


@dataclass(frozen=True)
class ProbeFailure:
    """Why a check ended in ``error``: what the child process did instead of answering."""

    # "timeout", "signal", "exit", "no-output", "bad-output", "probe-exception", "evaluate-exception",
    # "facts-shape", "spawn"
    reason: str
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    detail: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ProbeFailure":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})  # type: ignore[arg-type]


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    layer: str
    status: Status
    summary: str
    facts: Dict[str, Any] = field(default_factory=dict)
    findings: Tuple[Finding, ...] = ()
    duration_s: float = 0.0
    failure: Optional[ProbeFailure] = None
    requires: Tuple[str, ...] = ()

    @property
    def worst_severity(self) -> Optional[Severity]:
        order = [Severity.BLOCKING, Severity.DEGRADED, Severity.INFO]
        for sev in order:
            if any(f.severity is sev for f in self.findings):
                return sev
        return None

    def to_dict(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "layer": self.layer,
            "status": self.status.value,
            "summary": self.summary,
            "facts": self.facts,
            "findings": [f.to_dict() for f in self.findings],
            "duration_s": round(self.duration_s, 4),
            "failure": self.failure.to_dict() if self.failure else None,
            "requires": list(self.requires),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CheckResult":
        return cls(
            id=d["id"],
            title=d["title"],
            layer=d["layer"],
            status=Status(d["status"]),
            summary=d.get("summary", ""),
            facts=dict(d.get("facts") or {}),
            findings=tuple(Finding.from_dict(f) for f in d.get("findings", ())),
            duration_s=float(d.get("duration_s", 0.0)),
            failure=ProbeFailure.from_dict(d["failure"]) if d.get("failure") else None,
            requires=tuple(d.get("requires", ())),
        )


@dataclass(frozen=True)
class Symptom:
    """A problem explained by a root cause; ``path`` runs from the root to this check."""

    check_id: str
    path: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {"check": self.check_id, "path": list(self.path)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Symptom":
        return cls(check_id=d["check"], path=tuple(d["path"]))


@dataclass(frozen=True)
class RootCause:
    check_id: str
    codes: Tuple[str, ...]
    severity: Severity
    symptoms: Tuple[Symptom, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {
            "check": self.check_id,
            "codes": list(self.codes),
            "severity": self.severity.value,
            "symptoms": [s.to_dict() for s in self.symptoms],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RootCause":
        return cls(
            check_id=d["check"],
            codes=tuple(d["codes"]),
            severity=Severity(d["severity"]),
            symptoms=tuple(Symptom.from_dict(s) for s in d.get("symptoms", ())),
        )


@dataclass(frozen=True)
class Diagnosis:
    """Root causes first. ``blocking`` and ``degraded`` hold the roots of each kind;
    ``errors`` lists checks that could not complete (the check broke, not the system)."""

    blocking: Tuple[RootCause, ...] = ()
    degraded: Tuple[RootCause, ...] = ()
    errors: Tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.PROBLEMS if (self.blocking or self.errors) else ExitCode.OK

    def to_dict(self) -> Dict[str, Any]:
        return {
            "blocking": [r.to_dict() for r in self.blocking],
            "degraded": [r.to_dict() for r in self.degraded],
            "errors": list(self.errors),
            "exit_code": int(self.exit_code),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Diagnosis":
        return cls(
            blocking=tuple(RootCause.from_dict(r) for r in d.get("blocking", ())),
            degraded=tuple(RootCause.from_dict(r) for r in d.get("degraded", ())),
            errors=tuple(d.get("errors", ())),
        )


@dataclass(frozen=True)
class Report:
    tool_version: str
    created: str
    target: Dict[str, Any]
    host: Dict[str, Any]
    results: Tuple[CheckResult, ...]
    diagnosis: Diagnosis
    duration_s: float = 0.0
    schema_version: int = SCHEMA_VERSION
    #: what --only/--skip left out: ``{"only": [...], "skip": [...], "not_run": [check ids]}``
    selection: Dict[str, Any] = field(default_factory=dict)

    def result(self, check_id: str) -> Optional[CheckResult]:
        for r in self.results:
            if r.id == check_id:
                return r
        return None

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "kind": "check",
            "tool": {"name": "stackpeel", "version": self.tool_version},
            "created": self.created,
            "duration_s": round(self.duration_s, 3),
            "selection": self.selection,
            "target": self.target,
            "host": self.host,
            "diagnosis": self.diagnosis.to_dict(),
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Report":
        """The report a JSON document describes; :class:`ReportFormatError` if it is not one."""
        try:
            return cls._from_dict(d)
        except ReportFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ReportFormatError(f"not a stackpeel report ({type(exc).__name__}: {exc})"[:300]) from None

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "Report":
        if not isinstance(d, Mapping):
            raise ReportFormatError(f"not a stackpeel report: a JSON {type(d).__name__}, not an object")
        return _consistent(_typed(cls(
            schema_version=int(d["schema_version"]),
            tool_version=d["tool"]["version"],
            created=d["created"],
            duration_s=float(d.get("duration_s", 0.0)),
            target=dict(d.get("target") or {}),
            host=dict(d.get("host") or {}),
            results=tuple(CheckResult.from_dict(r) for r in d["results"]),
            diagnosis=Diagnosis.from_dict(d["diagnosis"]),
            selection=dict(d.get("selection") or {}),
        )))


def _consistent(report: "Report") -> "Report":
    """Every check the diagnosis names is among the results (renderers look them up)."""
    ids = {r.id for r in report.results}
    named = list(report.diagnosis.errors)
    for rc in report.diagnosis.blocking + report.diagnosis.degraded:
        named.append(rc.check_id)
        for sym in rc.symptoms:
            named.append(sym.check_id)
            named.extend(sym.path)
    missing = sorted(set(named) - ids)
    if missing:
        raise ReportFormatError(f"not a stackpeel report: the diagnosis names checks with no result: "
                                f"{', '.join(missing)[:200]}")
    return report


def _typed(obj: Any, where: str = "report") -> Any:
    """``obj`` (a dataclass read from JSON) if every field holds the type it declares, so a
    renderer never meets a null summary or a list where a string goes; else ReportFormatError."""
    import dataclasses

    hints = _type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if not _holds(value, hints[f.name], f"{where}.{f.name}"):
            raise ReportFormatError(f"not a stackpeel report: {where}.{f.name} is a {type(value).__name__}")
    return obj


@functools.lru_cache(maxsize=None)
def _type_hints(cls: type) -> Dict[str, Any]:
    """A dataclass's resolved annotations, once per class: typing.get_type_hints compiles every
    string annotation on each call, which made reading a report back cost ~50 ms (a fleet reads
    one per node)."""
    import typing

    return typing.get_type_hints(cls)


def _holds(value: Any, hint: Any, where: str) -> bool:
    import dataclasses
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin is typing.Union:
        return any(_holds(value, a, where) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is tuple:
        item = args[0] if args else Any
        return isinstance(value, tuple) and all(_holds(v, item, where) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return isinstance(value, Mapping)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return isinstance(value, hint) and _typed(value, where) is value
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


class ReportFormatError(ValueError):
    """A document given as a report lacks what a report needs (read by ``diff``, ``replay``)."""


def results_by_id(results: List[CheckResult]) -> Dict[str, CheckResult]:
    return {r.id: r for r in results}
