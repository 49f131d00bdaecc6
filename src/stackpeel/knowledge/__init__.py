"""The knowledge base: every finding code and every word a user reads about it, as data.

One TOML table per finding code in ``knowledge/<layer>.toml`` (``explain_only.toml`` for
codes that only logs show); the format is documented in ``docs/dev/KNOWLEDGE.md``.
``check`` renders its findings from it (:meth:`CodeEntry.render_message`), ``explain``
and ``run`` match its log signatures and exception shapes, ``stackpeel codes`` and
``docs/codes.md`` print it. Nothing else holds a finding's wording.

Loading validates the files: an error names the file and the code (:class:`KnowledgeError`).
"""

from __future__ import annotations

import functools
import re
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..model import Severity

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - exercised on 3.9/3.10 only
    try:
        import tomli as _toml
    except ImportError:  # pragma: no cover
        _toml = None

#: Layers from the bottom of the stack to the top: the order of files, docs and ``stackpeel list``.
LAYERS: Tuple[str, ...] = ("system", "config", "gpu", "cuda", "runtime_libs", "torch", "toolchain", "triton", "kernels",
                          "multi_gpu")
KINDS = ("root", "symptom")
#: the file of codes that no check emits
EXPLAIN_ONLY = "explain_only"
KB_DIR = Path(__file__).parent
#: data files beside the codes, read by their own modules (combinations.toml: stackpeel.combinations;
#: vocabulary.toml: stackpeel.explain.vocabulary; gpus.toml and torch_wheels.toml: stackpeel.combinations;
#: locales_extra.toml: stackpeel.explain.translate)
DATA_FILES = ("combinations.toml", "vocabulary.toml", "gpus.toml", "torch_wheels.toml", "locales_extra.toml")


class KnowledgeError(ValueError):
    """A knowledge-base file is malformed; the message names the file and the code."""


@dataclass(frozen=True)
class Refine:
    """When ``context`` (a regex) matches the line or the text around it, the signature
    evidences ``code`` instead of its own. ``local``: read only around the line, never on the
    log's clue lines far from it (a setting any log may print anywhere). ``name``: the shared
    ``[context.NAME]`` the regex comes from (``refine = [{context_name = NAME, code = ...}]``),
    "" for a regex written inline. ``far_unless`` (a regex): the rule also reads every line the
    scan kept anywhere in the log (tracebacks, error lines, the lines around hits) when none of
    them matches it (a bare ``CUDA_ERROR_NO_BINARY_FOR_GPU`` in a log that names CuPy far from the
    line, and no torch anywhere); a code chosen so is inferred, as one a clue line chose."""

    context: str
    code: str
    local: bool = False
    name: str = ""
    far_unless: str = ""


#: facts of a log (``combinations.LogFacts``) a signature's ``requires`` may name: each says the
#: machine has, or the user expects, an NVIDIA GPU: ``gpus`` (a GPU name the log prints),
#: ``driver``/``cuda_driver`` (the nvidia-smi header), ``gpu_cc`` (a GPU's compute capability),
#: ``nvcc``/``image_cuda``/``torch_index_cuda`` (a CUDA toolkit, a CUDA image, a CUDA wheel index),
#: ``driver_branch`` (a driver package). Not ``cuda``: a CUDA torch prints it on any host
REQUIRE_FACTS = ("gpus", "driver", "cuda_driver", "gpu_cc", "nvcc", "image_cuda", "torch_index_cuda",
                 "driver_branch")


@dataclass(frozen=True)
class Requirement:
    """A fact of the log without which a signature says nothing (``requires``): ``context`` (a
    regex) matches the lines around the hit or a line the scan kept (tracebacks, error and
    warning lines, the lines around hits, clue lines, the lines facts were read from), or the
    log states one of ``facts`` (:data:`REQUIRE_FACTS`). A warning that is routine on a CPU-only
    host (whisper's 'FP16 is not supported on CPU') names a cause only where the log shows that
    a GPU was expected. ``name``: the shared ``[context.NAME]`` the regex comes from."""

    context: str
    name: str = ""
    facts: Tuple[str, ...] = ()
    #: a bound on a GPU's compute capability (a version specifier, '<8.0', '>=10.0'): the log
    #: must name a GPU (knowledge/gpus.toml, or a capability it prints) whose capability meets
    #: it; with ``context``/``facts`` too, both must hold (tools38). "" when none
    gpu_cc: str = ""


@dataclass(frozen=True)
class LogSignature:
    """Text in a log that evidences a code (for ``explain``)."""

    id: str
    code: str
    patterns: Tuple[str, ...]
    weight: int = 2
    #: "root": the line names the cause itself; "symptom": what a lower cause looks like
    kind: str = "root"
    layer: str = ""
    #: other codes the same text can stand for, deepest first
    could_be: Tuple[str, ...] = ()
    refine: Tuple[Refine, ...] = ()
    source: str = ""
    #: position in the knowledge base (files in layer order, then file order)
    order: int = 0
    #: a catch-all wording (a bare CUDA error name): its code is a candidate only when no
    #: other signature matched anything in the log
    fallback: bool = False
    #: a user's sentence stating the cause (no program prints it): its code ranks after every
    #: root that a program's own line states (it still explains what lists it in could_be)
    said: bool = False
    #: a program's warning that names a cause only where the log shows a failure on another
    #: line; in a run that goes on (no traceback, no error line, no other signature) it is silent
    warning: bool = False
    #: reads the name explain.numbers gave a bare status number ("exit code 137 [SIGKILL: Killed]"):
    #: weaker than any message, it counts only where no signature matched another line of the log
    #: (fallback ones included), so a bare number never outranks a named message (tools39)
    number: bool = False
    #: a fact the log must also show for this signature to count (None: none needed)
    requires: Optional[Requirement] = None
    #: a fact that, where the log shows it, makes this signature not count (tools38: a CPU the user
    #: chose beside a warning routine on a CPU, a GPU capability that contradicts the line)
    unless: Optional[Requirement] = None


@dataclass(frozen=True)
class ExceptionShape:
    """An exception in a running process that evidences a code (for ``run``)."""

    code: str
    type: str
    message: str = ""


@dataclass(frozen=True)
class CodeEntry:
    """One finding code: its wording, its fix, and the evidence that shows it."""

    code: str
    layer: str
    kind: str
    severity: Severity
    title: str
    meaning: str
    fix: str
    #: template of the check's message; named params are observed values
    message: str = ""
    #: variant -> template, for distinct observed situations
    messages: Mapping[str, str] = field(default_factory=dict)
    consequence: str = ""
    #: package manager -> space-separated packages (templated), e.g. {"apt": "gcc", "apk": "gcc musl-dev"}
    packages: Mapping[str, str] = field(default_factory=dict)
    #: extra commands: (manager, template). manager "shell" means any POSIX shell.
    commands: Tuple[Tuple[str, str], ...] = ()
    #: contract for `stackpeel fix`: {"automatic": bool, "why": str, "verify": [check ids]}
    remedy: Mapping[str, Any] = field(default_factory=dict)
    #: for `stackpeel export`: the installed libraries that need what this code's packages provide,
    #: each {"package", "why", "when"?} ("when = cuda": only for a CUDA build of torch)
    needed_by: Tuple[Mapping[str, str], ...] = ()
    #: for `stackpeel export`: settings outside packages, per target (docker_run, lxc, limits_conf): lists of lines
    provision: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    #: for symptoms: codes that can produce it, likeliest first
    caused_by: Tuple[str, ...] = ()
    #: for a code no check emits (explain only): the check codes whose finding, reported live,
    #: confirms it (the open-files limit check's ``open-files-limit-low`` confirms a log's
    #: ``open-files-limit-exhausted``)
    confirmed_by: Tuple[str, ...] = ()
    #: a cause that no failing prerequisite of its check produces or explains (a CPU-only torch
    #: wheel stays CPU-only whatever the driver): shown as a root cause of its own
    standalone: bool = False
    #: a condition that explains another check's problem only where that check names this code
    #: among its findings (it saw the evidence): a low open-files limit breaks torch only when
    #: torch's error shows a descriptor shortage, and never explains an unrelated warning
    named_only: bool = False
    #: codes this one can produce (derived: the codes whose caused_by names this one)
    causes: Tuple[str, ...] = ()
    #: upstream threads where the cause was established
    links: Tuple[str, ...] = ()
    #: literal text that, found anywhere in a log, makes this cause likelier when the log
    #: shows only a symptom it can produce (``explain`` ranks with them), e.g. "docker"
    clues: Tuple[str, ...] = ()
    #: the operating systems (:data:`PLATFORMS`) on which this cause can happen at all; empty: any.
    #: explain never lets a guess or a base rate name it first for a log that plainly comes from
    #: another one (a `[host.NAME]` table's signs, :func:`parse_hosts`): /dev/shm on native Windows
    platforms: Tuple[str, ...] = ()
    source: str = ""
    deprecated: str = ""
    #: other names of this code: names proposed for the same cause before it had an entry
    #: (e.g. in a corpus's ``# expected:``); ``stackpeel codes ALIAS`` shows this code
    aliases: Tuple[str, ...] = ()
    logs: Tuple[LogSignature, ...] = ()
    exceptions: Tuple[ExceptionShape, ...] = ()
    #: the file it came from (for error messages)
    file: str = ""

    def template(self, variant: Optional[str] = None) -> str:
        """The message template of ``variant`` (the plain ``message`` for None)."""
        if variant is None:
            if not self.message and self.messages:
                raise KeyError(f"finding code {self.code!r} needs a message variant "
                               f"(one of: {', '.join(sorted(self.messages))})")
            return self.message
        try:
            return self.messages[variant]
        except KeyError:
            raise KeyError(f"finding code {self.code!r} has no message variant {variant!r} "
                           f"(it has: {', '.join(sorted(self.messages)) or 'none'})") from None

    def render_message(self, variant: "Variant" = None, params: Optional[Mapping[str, Any]] = None) -> str:
        """The message with observed values filled in; a missing one shows as ``<name>``
        (a bug the wording tests catch). The consequence follows the message.

        ``variant`` is None (``message``), a name (``messages.<name>``), or a sequence of
        them: the sentences are joined in that order (None stands for ``message``), so a
        check composes its message from the knowledge base's sentences, never writes one.
        """
        names = list(variant) if isinstance(variant, (list, tuple)) else [variant]
        parts = [render(self.template(v), params or {}) for v in names]
        if self.consequence:
            parts.append(render(self.consequence, params or {}))
        return " ".join(p for p in parts if p)

    def params(self) -> List[str]:
        """Every ``{param}`` the message templates, fix and commands name."""
        names: Dict[str, None] = {}
        for t in (self.message, *self.messages.values(), self.consequence, self.fix, *self.packages.values(),
                  *(c for _, c in self.commands)):
            for n in template_params(t):
                names.setdefault(n, None)
        return list(names)


#: what ``Context.finding`` accepts as ``variant``
Variant = Union[None, str, Sequence[Optional[str]]]


class _Loose(dict):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def template_params(template: str) -> List[str]:
    """Names of the ``{params}`` in ``template`` (``{x!r}`` gives ``x``)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def render(template: str, params: Mapping[str, Any]) -> str:
    """``template`` with ``params``; a param that is missing or None shows as ``<name>``."""
    return string.Formatter().vformat(template, (), _Loose({k: v for k, v in params.items() if v is not None}))


_PAREN_PARAM = re.compile(r" ?\((?:[^(){}]*)\{(\w+)[^{}]*\}(?:[^(){}]*)\)")


def render_prose(template: str, params: Mapping[str, Any]) -> str:
    """Prose for people (a fix): a parenthesis whose param is unknown is left out, so
    "reinstall it ({compiler_pkg})" reads "reinstall it" where no value was observed;
    any other unknown param shows as ``<name>``."""
    def drop(m: "re.Match[str]") -> str:
        return m.group(0) if params.get(m.group(1)) not in (None, "") else ""

    return render(_PAREN_PARAM.sub(drop, template), params)


@dataclass(frozen=True)
class KnowledgeBase:
    codes: Mapping[str, CodeEntry]
    files: Tuple[str, ...] = ()
    #: alias -> the code it names (``aliases = [...]`` of each entry)
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: host sign name -> :class:`HostSign` (``[host.NAME]`` tables)
    hosts: Mapping[str, "HostSign"] = field(default_factory=dict)

    def canonical(self, code: str) -> str:
        """The code an alias names; any other string unchanged."""
        return self.aliases.get(code, code)

    def get(self, code: str) -> CodeEntry:
        try:
            return self.codes[self.canonical(code)]
        except KeyError:
            raise KeyError(f"unknown finding code {code!r}; declare it in stackpeel/knowledge/") from None

    def __contains__(self, code: object) -> bool:
        return code in self.codes

    def signatures(self) -> List[LogSignature]:
        """Every log signature, in knowledge-base order."""
        return sorted((s for c in self.codes.values() for s in c.logs), key=lambda s: s.order)

    def exception_shapes(self) -> List[ExceptionShape]:
        return [e for c in self.codes.values() for e in c.exceptions]

    def exception_codes(self, type_name: str, message: str) -> List[str]:
        """Codes whose ``[[code.exception]]`` shapes match an exception (for ``stackpeel run``):
        ``type`` equals the exception's qualified or bare name (or is ``*``) and ``message``
        is searched in its text."""
        bare = type_name.rsplit(".", 1)[-1]
        out: Dict[str, None] = {}
        for shape in self.exception_shapes():
            both_qualified = "." in shape.type and "." in type_name
            if shape.type != "*" and not (shape.type == type_name if both_qualified
                                          else shape.type.rsplit(".", 1)[-1] == bare):
                continue
            if shape.message and not re.search(shape.message, message or ""):
                continue
            out.setdefault(shape.code, None)
        return list(out)

    def explain_only(self) -> List[str]:
        return [c.code for c in self.codes.values() if Path(c.file).stem == EXPLAIN_ONLY]


# ----------------------------------------------------------------------------- loading

_CODE_KEYS = {"layer", "kind", "severity", "title", "meaning", "message", "messages", "consequence", "fix",
              "packages", "commands", "remedy", "needed_by", "provision", "causes", "caused_by", "confirmed_by",
              "standalone", "named_only", "links",
              "clues", "platforms", "source",
              "deprecated", "aliases", "log", "exception"}
_REMEDY_KEYS = {"automatic", "why", "verify"}
_LOG_KEYS = {"id", "patterns", "weight", "kind", "layer", "could_be", "refine", "source", "fallback", "said", "warning",
             "number", "requires", "unless"}
_REQUIRES_FORM = ("{what} is {{context = regex[, facts = [...]][, gpu_cc = '<8.0']}}, {{context_name = NAME[, "
                  "facts = [...]][, gpu_cc = ...]}} or {{gpu_cc = '>=10.0'}}")
_EXC_KEYS = {"type", "message"}
#: the top-level table of shared refine contexts (``[context.NAME]``); no code may take this name
CONTEXT_TABLE = "context"
_CONTEXT_KEYS = {"pattern", "means"}
#: the top-level table of host signs (``[host.NAME]``): what in a log tells the OS it ran on
HOST_TABLE = "host"
_HOST_KEYS = {"platform", "pattern", "means"}
#: the operating systems a code's ``platforms`` and a host sign's ``platform`` may name
PLATFORMS = ("linux", "windows", "macos")
_CODE_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _strs(value: Any, where: str, key: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise KnowledgeError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _str(raw: Mapping[str, Any], key: str, where: str, required: bool = False) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise KnowledgeError(f"{where}: {key} must be a string")
    if required and not value.strip():
        raise KnowledgeError(f"{where}: missing {key!r}")
    return value.strip() if "\n" in value else value


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise KnowledgeError(f"{where}: {key!r} must be true or false")
    return value


def _clues(value: Any, where: str) -> Tuple[str, ...]:
    clues = _strs(value, where, "clues")
    for c in clues:
        if len(c.strip()) < 2:
            raise KnowledgeError(f"{where}: clue {c!r} is too short to mean anything")
    return clues


def _check_template(text: str, where: str, key: str) -> None:
    try:
        list(string.Formatter().parse(text))
    except ValueError as exc:
        raise KnowledgeError(f"{where}: {key}: bad template {text!r}: {exc}") from None


def parse_code(code: str, raw: Mapping[str, Any], file: str, order: int, regexes: bool = True,
               contexts: Optional[Mapping[str, str]] = None) -> CodeEntry:
    """One ``[code]`` table of ``file``. ``regexes``: compile its patterns to validate them
    (False only for documents this very parser accepted before: see :func:`_cached_documents`).
    ``contexts``: the shared ``[context.NAME]`` regexes a refine may name (:func:`parse_contexts`)."""
    where = f"{file} [{code}]"
    if not _CODE_RE.match(code):
        raise KnowledgeError(f"{where}: a code is lower-case words joined by '-'")
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{where}: must be a table")
    unknown = set(raw) - _CODE_KEYS
    if unknown:
        raise KnowledgeError(f"{where}: unknown field(s) {sorted(unknown)}")
    for key in ("layer", "kind", "severity", "title", "meaning", "fix"):
        _str(raw, key, where, required=True)
    if raw["layer"] not in LAYERS:
        raise KnowledgeError(f"{where}: unknown layer {raw['layer']!r}; one of {LAYERS}")
    if raw["kind"] not in KINDS:
        raise KnowledgeError(f"{where}: kind must be one of {KINDS}")
    try:
        severity = Severity(raw["severity"])
    except ValueError:
        raise KnowledgeError(f"{where}: severity must be one of {[s.value for s in Severity]}") from None
    messages = raw.get("messages", {})
    if not isinstance(messages, dict) or not all(isinstance(v, str) for v in messages.values()):
        raise KnowledgeError(f"{where}: messages must be a table of strings")
    packages = raw.get("packages", {})
    if not isinstance(packages, dict) or not all(isinstance(v, str) for v in packages.values()):
        raise KnowledgeError(f"{where}: packages must be a table of strings")
    commands = raw.get("commands", [])
    if not isinstance(commands, list) or not all(
            isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in commands):
        raise KnowledgeError(f"{where}: commands must be a list of [manager, command] pairs")
    remedy = raw.get("remedy", {})
    if not isinstance(remedy, dict) or set(remedy) - _REMEDY_KEYS or (
            "automatic" in remedy and not isinstance(remedy["automatic"], bool)):
        raise KnowledgeError(f"{where}: remedy must be a table of {sorted(_REMEDY_KEYS)} (automatic: true|false)")
    if remedy.get("automatic") is False and not str(remedy.get("why") or "").strip():
        raise KnowledgeError(f"{where}: remedy with automatic = false must say why")
    _strs(remedy.get("verify", []), where, "remedy.verify")
    needed_by = raw.get("needed_by", [])
    if not isinstance(needed_by, list) or not all(
            isinstance(n, dict) and not set(n) - {"package", "why", "when"} and n.get("package") and n.get("why")
            and all(isinstance(v, str) for v in n.values()) for n in needed_by):
        raise KnowledgeError(f"{where}: needed_by must be a list of {{package, why, when?}} tables")
    provision = raw.get("provision", {})
    if not isinstance(provision, dict):
        raise KnowledgeError(f"{where}: provision must be a table of line lists")
    provision = {k: _strs(v, where, f"provision.{k}") for k, v in provision.items()}
    entry_kind = raw["kind"]
    for key in ("message", "consequence", "fix", "title"):
        _check_template(_str(raw, key, where), where, key)
    for name, text in messages.items():
        _check_template(text, where, f"messages.{name}")
    if template_params(raw["title"]):
        raise KnowledgeError(f"{where}: the title takes no params")

    logs: List[LogSignature] = []
    for i, lraw in enumerate(raw.get("log", ())):
        lwhere = f"{where} log #{i + 1} ({lraw.get('id', '?') if isinstance(lraw, dict) else '?'})"
        if not isinstance(lraw, dict):
            raise KnowledgeError(f"{lwhere}: must be a table")
        unknown = set(lraw) - _LOG_KEYS
        if unknown:
            raise KnowledgeError(f"{lwhere}: unknown field(s) {sorted(unknown)}")
        if not lraw.get("id") or not lraw.get("patterns"):
            raise KnowledgeError(f"{lwhere}: needs id and patterns")
        weight = lraw.get("weight", 2)
        if not isinstance(weight, int) or not 1 <= weight <= 3:
            raise KnowledgeError(f"{lwhere}: weight must be 1..3")
        kind = lraw.get("kind", entry_kind)
        if kind not in KINDS:
            raise KnowledgeError(f"{lwhere}: kind must be one of {KINDS}")
        layer = lraw.get("layer", raw["layer"])
        if layer not in LAYERS:
            raise KnowledgeError(f"{lwhere}: unknown layer {layer!r}")
        patterns = _strs(lraw["patterns"], lwhere, "patterns")
        for p in patterns if regexes else ():
            try:
                re.compile(p)
            except re.error as exc:
                raise KnowledgeError(f"{lwhere}: bad regex {p!r}: {exc}") from None
        refine = []
        for r in lraw.get("refine", ()):
            if not isinstance(r, dict) or not isinstance(r.get("local", False), bool) \
                    or not isinstance(r.get("far_unless", ""), str) or (r.get("local") and r.get("far_unless")):
                raise KnowledgeError(f"{lwhere}: refine entries are {{context = regex, code = code[, local = true "
                                     "| far_unless = regex]} or {context_name = NAME, code = code[, local = true "
                                     "| far_unless = regex]}")
            far_unless = r.get("far_unless", "")
            if far_unless and regexes:
                _compiles(far_unless, f"{lwhere}: bad refine far_unless regex")
            if {"context_name", "code"} <= set(r) <= {"context_name", "code", "local", "far_unless"}:
                name = r["context_name"]
                refine.append(Refine(_named_context(name, contexts, f"{lwhere}: refine"), r["code"],
                                     r.get("local", False), name, far_unless))
                continue
            if not {"context", "code"} <= set(r) <= {"context", "code", "local", "far_unless"}:
                raise KnowledgeError(f"{lwhere}: refine entries are {{context = regex, code = code[, local = true "
                                     "| far_unless = regex]} or {context_name = NAME, code = code[, local = true "
                                     "| far_unless = regex]}")
            if regexes:
                _compiles(r["context"], f"{lwhere}: bad refine regex")
            refine.append(Refine(r["context"], r["code"], r.get("local", False), far_unless=far_unless))
        could_be = lraw.get("could_be")
        requires = _requirement(lraw.get("requires"), lwhere, regexes, contexts) if "requires" in lraw else None
        unless = _requirement(lraw.get("unless"), lwhere, regexes, contexts, "unless") if "unless" in lraw else None
        logs.append(LogSignature(
            id=lraw["id"], code=code, patterns=patterns, weight=weight, kind=kind, layer=layer,
            could_be=tuple(raw.get("caused_by", []) if could_be is None else could_be),
            refine=tuple(refine), source=_str(lraw, "source", lwhere), order=order * 1000 + i,
            fallback=_flag(lraw, "fallback", lwhere), said=_flag(lraw, "said", lwhere),
            warning=_flag(lraw, "warning", lwhere), number=_flag(lraw, "number", lwhere),
            requires=requires, unless=unless,
        ))
    exceptions: List[ExceptionShape] = []
    for i, eraw in enumerate(raw.get("exception", ())):
        ewhere = f"{where} exception #{i + 1}"
        if not isinstance(eraw, dict) or set(eraw) - _EXC_KEYS or not eraw.get("type"):
            raise KnowledgeError(f"{ewhere}: needs type (and optional message), nothing else")
        try:
            if regexes:
                re.compile(eraw.get("message", ""))
        except re.error as exc:
            raise KnowledgeError(f"{ewhere}: bad message regex: {exc}") from None
        exceptions.append(ExceptionShape(code, eraw["type"], eraw.get("message", "")))
    if "causes" in raw:
        raise KnowledgeError(f"{where}: 'causes' is derived from the other codes' caused_by; "
                             "list this code in their caused_by instead")
    return CodeEntry(
        code=code, layer=raw["layer"], kind=entry_kind, severity=severity, title=raw["title"],
        meaning=_str(raw, "meaning", where), fix=_str(raw, "fix", where), message=_str(raw, "message", where),
        messages=dict(messages), consequence=_str(raw, "consequence", where), packages=dict(packages),
        commands=tuple((m, c) for m, c in commands), remedy=dict(remedy),
        needed_by=tuple(dict(n) for n in needed_by), provision=provision,
        caused_by=_strs(raw.get("caused_by", []), where, "caused_by"),
        confirmed_by=_strs(raw.get("confirmed_by", []), where, "confirmed_by"),
        standalone=_flag(raw, "standalone", where),
        named_only=_flag(raw, "named_only", where),
        links=_strs(raw.get("links", []), where, "links"), clues=_clues(raw.get("clues", []), where),
        platforms=_platforms(raw.get("platforms", []), where),
        source=_str(raw, "source", where),
        deprecated=_str(raw, "deprecated", where), aliases=_aliases(raw.get("aliases", []), where),
        logs=tuple(logs), exceptions=tuple(exceptions), file=file,
    )


def _platforms(value: Any, where: str) -> Tuple[str, ...]:
    platforms = _strs(value, where, "platforms")
    if len(set(platforms)) != len(platforms) or not set(platforms) <= set(PLATFORMS) \
            or len(platforms) == len(PLATFORMS):
        raise KnowledgeError(f"{where}: platforms is a list of some of {list(PLATFORMS)}, each once, "
                             "not all of them (leave it out for a cause of any OS)")
    return platforms


def _aliases(value: Any, where: str) -> Tuple[str, ...]:
    aliases = _strs(value, where, "aliases")
    for a in aliases:
        if not _CODE_RE.match(a):
            raise KnowledgeError(f"{where}: alias {a!r} is not a code name (lower-case words joined by '-')")
    return aliases


def _file_order(path: Path) -> Tuple[int, str]:
    stem = path.stem
    if stem in LAYERS:
        return (LAYERS.index(stem), stem)
    return (len(LAYERS) + (1 if stem == EXPLAIN_ONLY else 0), stem)


def default_files() -> List[Path]:
    """The bundled ``knowledge/*.toml`` files, lower layers first, ``explain_only.toml`` last."""
    return sorted((p for p in KB_DIR.glob("*.toml") if p.name not in DATA_FILES), key=_file_order)


def _requirement(raw: Any, where: str, regexes: bool, contexts: Optional[Mapping[str, str]],
                 what: str = "requires") -> Requirement:
    """A signature's ``requires`` (or ``unless``) table, validated (:class:`Requirement`)."""
    form = _REQUIRES_FORM.format(what=what)
    if not isinstance(raw, dict) or not raw or set(raw) - {"context", "context_name", "facts", "gpu_cc"} \
            or ("context" in raw and "context_name" in raw) \
            or not ({"context", "context_name", "gpu_cc"} & set(raw)):
        raise KnowledgeError(f"{where}: {form}")
    facts = raw.get("facts", [])
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts) or len(set(facts)) != len(facts) \
            or ("facts" in raw and not facts):
        raise KnowledgeError(f"{where}: {what} facts is a non-empty list of distinct names of {REQUIRE_FACTS}")
    unknown = [f for f in facts if f not in REQUIRE_FACTS]
    if unknown:
        raise KnowledgeError(f"{where}: {what} names unknown fact(s) {unknown} (known: {REQUIRE_FACTS})")
    gpu_cc = raw.get("gpu_cc", "")
    if "gpu_cc" in raw:
        gpu_cc = _capability_bound(gpu_cc, f"{where}: {what} gpu_cc")
    if "context_name" in raw:
        name = raw["context_name"]
        return Requirement(_named_context(name, contexts, f"{where}: {what}"), name, tuple(facts), gpu_cc)
    pattern = raw.get("context", "")
    if "context" in raw and (not isinstance(pattern, str) or not pattern):
        raise KnowledgeError(f"{where}: {form}")
    if regexes and pattern:
        _compiles(pattern, f"{where}: bad {what} regex")
    return Requirement(pattern, facts=tuple(facts), gpu_cc=gpu_cc)


#: a compute-capability bound: one to three clauses of <, <=, >, >=, == on a capability (major.minor)
_CC_BOUND_RE = re.compile(r"(?:<=?|>=?|==)\d{1,2}\.\d(?:,(?:<=?|>=?|==)\d{1,2}\.\d){0,2}")


def _capability_bound(value: Any, what: str) -> str:
    """``value`` if it is a capability bound ('<8.0', '>=10.0', '>=7.0,<8.0'), else KnowledgeError."""
    if not isinstance(value, str) or not _CC_BOUND_RE.fullmatch(value.replace(" ", "")):
        raise KnowledgeError(f"{what} is a compute-capability bound such as '<8.0', '>=10.0' or '>=7.0,<8.0', "
                             f"not {value!r}")
    return value.replace(" ", "")


def _named_context(name: Any, contexts: Optional[Mapping[str, str]], what: str) -> str:
    """The regex of the shared context ``name`` (``[context.NAME]``) that a refine or a
    ``requires`` names; ``what`` says which, for the error."""
    if not isinstance(name, str) or name not in (contexts or {}):
        raise KnowledgeError(f"{what} names unknown context {name!r} (declare it as [{CONTEXT_TABLE}.{name}])")
    return (contexts or {})[name]


def _compiles(pattern: str, what: str) -> None:
    """Raise KnowledgeError (``what``, the pattern, the reason) unless ``pattern`` compiles."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise KnowledgeError(f"{what} {pattern!r}: {exc}") from None


def parse_contexts(documents: Sequence[Tuple[str, Mapping[str, Any]]], accepted: int = 0
                   ) -> Tuple[Dict[str, str], Dict[str, str]]:
    """The shared refine contexts of ``documents``: each file's ``[context.NAME]`` tables
    (``pattern``: the regex; ``means``: what its match says about the log, for people). One
    name, one regex, across every file (a plugin's refine may name a built-in context). Returns
    (name -> regex, name -> the file that declares it)."""
    regexes: Dict[str, str] = {}
    files: Dict[str, str] = {}
    for i, (file, data) in enumerate(documents):
        table = data.get(CONTEXT_TABLE, {})
        if not isinstance(table, dict):
            raise KnowledgeError(f"{file} [{CONTEXT_TABLE}]: must be a table of [{CONTEXT_TABLE}.NAME] tables")
        for name, raw in table.items():
            where = f"{file} [{CONTEXT_TABLE}.{name}]"
            if not _CODE_RE.match(name):
                raise KnowledgeError(f"{where}: a context's name is lower-case words joined by '-'")
            if name in regexes:
                raise KnowledgeError(f"{where}: declared twice (also in {files[name]})")
            if not isinstance(raw, dict) or set(raw) != _CONTEXT_KEYS:
                raise KnowledgeError(f"{where}: a context is {{pattern = regex, means = text}}, nothing else")
            pattern = _str(raw, "pattern", where, required=True)
            _str(raw, "means", where, required=True)
            if i >= accepted:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise KnowledgeError(f"{where}: bad regex {pattern!r}: {exc}") from None
            regexes[name], files[name] = raw["pattern"], file
    return regexes, files


@dataclass(frozen=True)
class HostSign:
    """What in a log tells the operating system it ran on (``[host.NAME]``): a regex searched on
    the lines explain keeps (tracebacks, error lines, the lines around hits, clue lines)."""

    name: str
    platform: str
    pattern: str
    means: str
    file: str = ""


def parse_hosts(documents: Sequence[Tuple[str, Mapping[str, Any]]], accepted: int = 0) -> Dict[str, HostSign]:
    """The host signs of ``documents``: each file's ``[host.NAME]`` tables (``platform``: one of
    :data:`PLATFORMS`; ``pattern``: the regex; ``means``: what its match says, for people)."""
    out: Dict[str, HostSign] = {}
    for i, (file, data) in enumerate(documents):
        table = data.get(HOST_TABLE, {})
        if not isinstance(table, dict):
            raise KnowledgeError(f"{file} [{HOST_TABLE}]: must be a table of [{HOST_TABLE}.NAME] tables")
        for name, raw in table.items():
            where = f"{file} [{HOST_TABLE}.{name}]"
            if not _CODE_RE.match(name):
                raise KnowledgeError(f"{where}: a host sign's name is lower-case words joined by '-'")
            if name in out:
                raise KnowledgeError(f"{where}: declared twice (also in {out[name].file})")
            if not isinstance(raw, dict) or set(raw) != _HOST_KEYS:
                raise KnowledgeError(f"{where}: a host sign is {{platform, pattern, means}}, nothing else")
            platform = _str(raw, "platform", where, required=True)
            if platform not in PLATFORMS:
                raise KnowledgeError(f"{where}: platform must be one of {list(PLATFORMS)}")
            pattern = _str(raw, "pattern", where, required=True)
            _str(raw, "means", where, required=True)
            if i >= accepted:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise KnowledgeError(f"{where}: bad regex {pattern!r}: {exc}") from None
            out[name] = HostSign(name, platform, pattern, raw["means"], file)
    return out


def parse(documents: Sequence[Tuple[str, Mapping[str, Any]]], accepted: int = 0) -> KnowledgeBase:
    """A knowledge base from ``(file name, parsed TOML)`` pairs; validates references.
    ``accepted``: how many leading documents this parser accepted before, unchanged (their
    regexes are not compiled again; everything else is validated as always)."""
    codes: Dict[str, CodeEntry] = {}
    contexts, context_files = parse_contexts(documents, accepted)
    hosts = parse_hosts(documents, accepted)
    order = 0
    for i, (file, data) in enumerate(documents):
        for code, raw in data.items():
            if code in (CONTEXT_TABLE, HOST_TABLE):
                continue
            if code in codes:
                raise KnowledgeError(f"{file} [{code}]: declared twice (also in {codes[code].file})")
            codes[code] = parse_code(code, raw, file, order, regexes=i >= accepted, contexts=contexts)
            order += 1
    used = {r.name for c in codes.values() for s in c.logs for r in s.refine}
    used |= {r.name for c in codes.values() for s in c.logs for r in (s.requires, s.unless) if r is not None}
    for name in contexts:
        if name not in used:
            raise KnowledgeError(f"{context_files[name]} [{CONTEXT_TABLE}.{name}]: no refine names it "
                                 "(nor a requires or unless; a shared context is for regexes refines would "
                                 "otherwise repeat)")
    sig_ids: Dict[str, str] = {}
    aliases: Dict[str, str] = {}
    for c in codes.values():
        where = f"{c.file} [{c.code}]"
        for a in c.aliases:
            if a in codes or a in aliases:
                raise KnowledgeError(f"{where}: alias {a!r} is already "
                                     + ("a code" if a in codes else f"an alias of [{aliases[a]}]"))
            aliases[a] = c.code
        for ref in c.caused_by:
            if ref not in codes:
                raise KnowledgeError(f"{where}: caused_by names unknown code {ref!r}")
        for ref in c.confirmed_by:
            if ref not in codes or ref == c.code:
                raise KnowledgeError(f"{where}: confirmed_by names unknown code {ref!r}")
        for s in c.logs:
            if s.id in sig_ids:
                raise KnowledgeError(f"{where}: log id {s.id!r} already used by [{sig_ids[s.id]}]")
            sig_ids[s.id] = c.code
            for ref in s.could_be + tuple(r.code for r in s.refine):
                if ref not in codes:
                    raise KnowledgeError(f"{where} log {s.id!r}: names unknown code {ref!r}")
    # causes: the inverse of caused_by (one source of truth)
    causes: Dict[str, List[str]] = {c: [] for c in codes}
    for c in codes.values():
        for ref in c.caused_by:
            causes[ref].append(c.code)
    rank = {c: i for i, c in enumerate(codes)}
    ordered = sorted(codes.values(), key=lambda c: (LAYERS.index(c.layer), rank[c.code]))
    out = {}
    for c in ordered:
        out[c.code] = c if not causes[c.code] else _replace(c, causes=tuple(causes[c.code]))
    return KnowledgeBase(codes=out, files=tuple(f for f, _ in documents), aliases=aliases, hosts=hosts)


def _replace(entry: CodeEntry, **changes: Any) -> CodeEntry:
    from dataclasses import replace

    return replace(entry, **changes)


def read_files(paths: Iterable[Path]) -> List[Tuple[str, Mapping[str, Any]]]:
    if _toml is None:  # pragma: no cover
        raise KnowledgeError("reading the knowledge base needs Python 3.11+ or the 'tomli' package")
    docs = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                docs.append((Path(p).name, _toml.load(f)))
        except _toml.TOMLDecodeError as exc:
            raise KnowledgeError(f"{Path(p).name}: {exc}") from None
    return docs


def load(paths: Optional[Tuple[str, ...]] = None) -> KnowledgeBase:
    """The knowledge base (cached): the bundled files and the usable plugins' files
    (stackpeel/plugins.py; none with ``--no-plugins``), or ``paths`` instead."""
    from .. import plugins

    return _load(paths or None, not paths and plugins.enabled())


@functools.lru_cache(maxsize=None)
def _load(paths: Optional[Tuple[str, ...]], with_plugins: bool) -> KnowledgeBase:
    files = [Path(p) for p in paths] if paths else default_files()
    cached = None if paths else _cached_documents(files)
    docs = list(cached) if cached is not None else read_files(files)
    bundled = len(docs)
    if with_plugins:
        from .. import plugins

        docs += plugins.knowledge_documents()
    kb = parse(docs, accepted=bundled if cached is not None else 0)
    if cached is None and not paths:
        _store_documents(files, docs[:bundled])
    return kb


# -- the bundled files, parsed once per change ----------------------------------------------------
# Every command reads the knowledge base: parsing its TOML and compiling its 600 log patterns
# to validate them cost 0.1 s of CPU, a third of a repeat `stackpeel check` (issue 9). The
# bundled files' parsed documents are kept as JSON in stackpeel's private cache directory
# (runner/cache.py: owned by the user, 0600 in 0700), keyed on this parser's version and each
# file's stat; an entry is written only after parse() accepted those documents, so a hit skips
# the TOML parse and the regex compiles, never the other validation. Plugins' files are read and
# validated every time.


def _documents_key(files: Sequence[Path]) -> Optional[str]:
    import hashlib
    import json
    import os

    from .. import __version__

    try:
        stats = [(str(f), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
                 for f in [*files, Path(__file__)] for st in [os.stat(f)]]
    except OSError:
        return None
    material = [__version__, sys.version, sys.implementation.name, stats]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def _documents_path() -> Path:
    from ..runner.cache import cache_dir

    return cache_dir() / "knowledge-documents.json"


def _cached_documents(files: Sequence[Path]) -> Optional[List[Tuple[str, Mapping[str, Any]]]]:
    """The parsed documents of ``files`` stored by an earlier run, when none of them changed."""
    import json

    from ..runner.cache import read_private

    key = _documents_key(files)
    text = read_private(_documents_path()) if key is not None else None
    if text is None:
        return None
    try:
        data = json.loads(text)
        if data.get("key") != key:
            return None
        docs = [(str(name), doc) for name, doc in data["documents"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if [name for name, _ in docs] != [f.name for f in files] or not all(isinstance(d, dict) for _, d in docs):
        return None
    return docs


def _store_documents(files: Sequence[Path], docs: Sequence[Tuple[str, Mapping[str, Any]]]) -> None:
    """Keep the documents parse() just accepted; never raises."""
    import json

    from ..runner.cache import write_private

    key = _documents_key(files)
    if key is None:
        return
    try:
        text = json.dumps({"key": key, "documents": [[name, doc] for name, doc in docs]})
    except (TypeError, ValueError):
        return  # a value JSON cannot carry (a TOML date): no entry
    if json.loads(text)["documents"] == [[name, doc] for name, doc in docs]:
        write_private(_documents_path(), text)


load.cache_clear = _load.cache_clear  # type: ignore[attr-defined]


def get(code: str) -> CodeEntry:
    return load().get(code)


def all_codes() -> Mapping[str, CodeEntry]:
    """Every finding code, keyed by code, lower layers first."""
    return load().codes
