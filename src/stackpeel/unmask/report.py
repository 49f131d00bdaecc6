"""From monitor records to a ranked report of swallowed errors (pure: no I/O, no probing).

A *record* is what one monitored process wrote (see :mod:`.monitor`). :func:`build_report`
merges the records of every process a run started, links each swallowed exception to
the warnings and log messages issued while it was being handled, to the finding codes
its message matches (``stackpeel.explain.match_codes``) and to the crash, scores it,
and orders the result most relevant first.

Scoring (each point comes with a human-readable reason kept in the report):

========================================  ======
raised in a stack library (triton, torch...)  +2
swallowed in a stack library                  +1
message matches a known failure (codes)       +6
the handler issued a warning / log message    +5 (+1 when it reads like a fallback)
a warning from the same file soon after       +3
the same error ended the program              +4
a "serious" type (RuntimeError, OSError...)   +2
routine type or optional-import probe         -4 (-6 when caught where raised)
converted into another exception              -2
repeats more than 100 times                   -1
========================================  ======

An entry is *shown* by default when it was swallowed by library code (or by the
standard library on behalf of library code) and scores at least :data:`SHOW_SCORE`;
``--all`` shows everything, the user's own handlers included.
"""

from __future__ import annotations

import re
import signal as _signal
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..model import SCHEMA_VERSION, envelope

SHOW_SCORE = 5

#: libraries whose swallowed errors can hide a broken GPU stack
STACK_LAYER_LIBS = frozenset({
    "triton", "torch", "fla", "causal_conv1d", "transformers", "flash_attn", "bitsandbytes",
    "xformers", "mamba_ssm", "accelerate", "deepspeed", "vllm", "apex", "liger_kernel", "tilelang",
    "kernels", "peft", "torchvision", "torchaudio", "nvidia", "cuda", "pynvml", "jax", "jaxlib",
    "tensorflow", "onnxruntime", "tensorrt", "sglang", "flashinfer", "transformer_engine",
    "megatron", "cupy",
})

ROUTINE_TYPES = frozenset({
    "StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyError", "AttributeError",
    "IndexError", "NameError", "UnicodeDecodeError", "UnicodeEncodeError", "FileNotFoundError",
    "FileExistsError", "NotADirectoryError", "IsADirectoryError", "PackageNotFoundError",
    "InterruptedError", "BlockingIOError", "EOFError", "ZipImportError", "TypeError",
})
SERIOUS_TYPES = frozenset({
    "RuntimeError", "OSError", "PermissionError", "CalledProcessError", "TimeoutExpired",
    "AssertionError", "SystemError", "MemoryError", "OutOfMemoryError", "CompilationError",
    "CompileTimeAssertionFailure", "OutOfResources", "AcceleratorError", "DeferredCudaCallError",
})
PROBE_MESSAGE = re.compile(r"^(No module named |cannot import name |DLL load failed while importing )|"
                           r"optional dependency|is not installed|requires? the \S+ (package|library)",
                           re.IGNORECASE)
FALLBACK_TEXT = re.compile(
    r"fall(ing)?[ -]?back|roll(ing)? back|not (supported|available|installed|usable|found)|"
    r"unavailable|disabl|slower|instead|switching to|reference (pytorch|torch) implementation|"
    r"is not compiled|could not|failed to",
    re.IGNORECASE)

CodesFn = Callable[[str], List[str]]


# -- model --------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """A place in the code: file, line, function, module."""

    file: str
    line: Optional[int]
    function: Optional[str] = None
    module: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Optional[Mapping[str, Any]]) -> Optional["Site"]:
        if not d or "file" not in d:
            return None
        return cls(d.get("file") or "?", d.get("line"), d.get("function"), d.get("module"))

    @property
    def library(self) -> Optional[str]:
        return library_of(self.file, self.module)

    def short(self) -> str:
        where = short_path(self.file)
        return f"{where}:{self.line}" if self.line is not None else where


@dataclass(frozen=True)
class Swallowed:
    """One swallowed exception: caught and not re-raised, with how often and why it matters."""

    id: int
    pid: int
    type: str
    message: str
    raised: Site
    handled: Site
    except_line: Optional[int]
    scope: str                      # where the handler is: library | stdlib | user
    raise_scope: str
    count: int
    reraised: int
    converted: int
    converted_to: Optional[Dict[str, str]]
    first_time: Optional[float]
    last_time: Optional[float]
    first_seq: int
    thread: Optional[str]
    stack: Tuple[Dict[str, Any], ...]
    during: Optional[Site]
    chain: Tuple[Dict[str, str], ...]
    codes: Tuple[str, ...]
    score: int
    reasons: Tuple[str, ...]
    notices: Tuple[int, ...]        # ids of the warnings/log messages linked to it
    shown: bool
    routine: bool

    @property
    def type_short(self) -> str:
        return self.type.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Notice:
    """A warning (warnings module) or a log record of level WARNING and above."""

    id: int
    pid: int
    kind: str                       # "warning" | "log"
    category: str                   # warning category, or log level
    message: str
    site: Site
    logger: Optional[str]
    count: int
    first_time: Optional[float]
    first_seq: int
    handling: Optional[int]         # id of the swallowed exception being handled when issued
    codes: Tuple[str, ...]
    fallback: bool
    shown: bool
    exception: Optional[Dict[str, str]] = None


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    python: Optional[str]
    executable: Optional[str]
    argv: Tuple[str, ...]
    mode: Optional[str]
    mode_note: Optional[str]
    complete: bool
    note: Optional[str] = None


@dataclass(frozen=True)
class ExitInfo:
    returncode: int
    signal: Optional[int]
    signal_name: Optional[str]
    uncaught: Optional[Dict[str, Any]]
    crash_dump: Optional[str]


@dataclass(frozen=True)
class RunReport:
    """What ``stackpeel run`` (or ``stackpeel.unmask.watch()``) found."""

    command: Tuple[str, ...]
    target: Dict[str, Any]
    duration: Optional[float]
    exit: Optional[ExitInfo]
    processes: Tuple[ProcessInfo, ...]
    swallowed: Tuple[Swallowed, ...]
    notices: Tuple[Notice, ...]
    totals: Dict[str, Any]
    notes: Tuple[str, ...]
    show_all: bool = False
    schema_version: int = SCHEMA_VERSION

    @property
    def shown_swallowed(self) -> List[Swallowed]:
        return [s for s in self.swallowed if self.show_all or s.shown]

    @property
    def shown_notices(self) -> List[Notice]:
        return [n for n in self.notices if self.show_all or n.shown]

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        schema_version = d.pop("schema_version")
        return {**envelope("run", schema_version), **d}

    def __str__(self) -> str:
        from .render import render_text
        return render_text(self)


# -- helpers ------------------------------------------------------------------------


_SITE_RE = re.compile(r"[/\\](?:site|dist)-packages[/\\]")
_STDLIB_RE = re.compile(r"[/\\]lib[/\\](python\d+\.\d+t?)[/\\]")


def short_path(path: str) -> str:
    """site-packages/triton/runtime/driver.py -> triton/runtime/driver.py."""
    if not path:
        return "?"
    parts = _SITE_RE.split(path)
    if len(parts) > 1:
        return parts[-1].replace("\\", "/")
    m = _STDLIB_RE.search(path)
    if m:
        return m.group(1) + "/" + path[m.end():]
    return path


def library_of(path: Optional[str], module: Optional[str] = None) -> Optional[str]:
    """The top-level package a file belongs to (from its module name, else from its path)."""
    if module and module not in ("__main__", "__mp_main__"):
        return module.split(".", 1)[0]
    if path:
        parts = _SITE_RE.split(path)
        if len(parts) > 1:
            first = re.split(r"[/\\]", parts[-1], maxsplit=1)[0]
            return first[:-3] if first.endswith(".py") else first
    return None


def signal_name(sig: Optional[int]) -> Optional[str]:
    if sig is None:
        return None
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def default_codes() -> CodesFn:
    """The knowledge base's matcher: the codes whose exception shapes match ("Type: message"),
    then those whose log signatures do (``stackpeel.explain.match_codes``); a matcher that
    finds nothing when the knowledge base cannot load."""
    try:
        from ..explain import match_codes
        from ..knowledge import load

        kb = load()
    except Exception:  # explain not installed / its knowledge base failed to load
        return lambda text: []
    return lambda text: codes_for_exception_text(text, kb, match_codes)


def codes_for_exception_text(text: str, kb: Any, match_codes: CodesFn) -> List[str]:
    """``text`` is "Type: message" as the monitor recorded it."""
    type_name, _, message = text.partition(": ")
    out = dict.fromkeys(kb.exception_codes(type_name.strip(), message))
    out.update(dict.fromkeys(match_codes(text)))
    return list(out)


def _safe_codes(codes_fn: CodesFn, text: str) -> Tuple[str, ...]:
    try:
        return tuple(codes_fn(text) or ())
    except Exception:
        return ()


# -- building -----------------------------------------------------------------------


def _is_routine(type_short: str, message: str) -> Optional[str]:
    if type_short in ("ImportError", "ModuleNotFoundError") and (not message or PROBE_MESSAGE.search(message)):
        return "optional-import probe"
    if type_short in ROUTINE_TYPES:
        return f"routine {type_short}"
    return None


def _score(s: Dict[str, Any], codes: Tuple[str, ...], linked: List[Dict[str, Any]], nearby: List[Dict[str, Any]],
           uncaught: Optional[Mapping[str, Any]]) -> Tuple[int, List[str], bool]:
    raised, handled = s["_raised"], s["_handled"]
    type_short = s["type"].rsplit(".", 1)[-1]
    score, why = 0, []
    lib_r, lib_h = raised.library, handled.library
    if lib_r in STACK_LAYER_LIBS:
        score += 2
        why.append(f"raised in {lib_r}")
    if lib_h in STACK_LAYER_LIBS:
        score += 1
        why.append(f"swallowed in {lib_h}")
    if codes:
        score += 6
        why.append("matches " + ", ".join(codes))
    if linked:
        n = linked[0]
        bonus = 5 + (1 if FALLBACK_TEXT.search(n["message"]) else 0)
        score += bonus
        what = "warning" if n["kind"] == "warning" else "log message"
        why.append(f"its handler issued the {what} {_quote(n['message'])}")
    elif nearby:
        score += 3
        why.append(f"followed by {_quote(nearby[0]['message'])} from the same file")
    if uncaught and uncaught.get("type", "").rsplit(".", 1)[-1] == type_short and \
            (uncaught.get("message") or "") == s["message"]:
        score += 4
        why.append("the same error ended the program")
    if type_short in SERIOUS_TYPES or (type_short in ("ImportError", "ModuleNotFoundError")
                                       and s["message"] and not PROBE_MESSAGE.search(s["message"])):
        score += 2
        why.append(f"{type_short} is rarely routine")
    routine = _is_routine(type_short, s["message"] or "")
    if routine:
        score -= 4
        why.append(routine)
        if raised.file == handled.file and raised.line == handled.line:
            score -= 2
            why.append("caught right where it was raised")
    if s.get("converted") and s.get("count", 0) <= 0:
        score -= 2
        why.append("turned into another exception, not swallowed")
    if (s.get("count") or 0) > 100:
        score -= 1
        why.append(f"repeats {s['count']} times")
    return score, why, routine is not None


def _quote(text: str, n: int = 70) -> str:
    text = " ".join(str(text).split())
    return '"' + (text if len(text) <= n else text[:n - 3] + "...") + '"'


def build_report(records: Sequence[Mapping[str, Any]], *, command: Sequence[str] = (),
                 target: Optional[Mapping[str, Any]] = None, returncode: Optional[int] = None,
                 duration: Optional[float] = None, crash_dumps: Optional[Mapping[int, str]] = None,
                 main_pid: Optional[int] = None, show_all: bool = False,
                 codes_fn: Optional[CodesFn] = None, notes: Iterable[str] = ()) -> RunReport:
    """Merge, link, score and order the records of one run."""
    codes_fn = codes_fn or default_codes()
    notes = list(notes)
    records = [r for r in records if isinstance(r, Mapping)]
    main = None
    for r in records:
        if main_pid is not None and r.get("pid") == main_pid:
            main = r
    if main is None and records:
        main = records[0]
    uncaught = (main or {}).get("uncaught")

    processes = []
    for r in records:
        processes.append(ProcessInfo(int(r.get("pid") or 0), r.get("python"), r.get("executable"),
                                     tuple(r.get("argv") or ()), r.get("mode"), r.get("mode_note"),
                                     bool(r.get("complete")), r.get("note") or r.get("error")))
        if r.get("mode_note"):
            notes.append(f"process {r.get('pid')}: {r['mode_note']}")
    if not records:
        notes.append("no monitored Python process reported back: the command ran no Python 3.8+, or ran it "
                     "with -I, -E or -S (which skip PYTHONPATH or sitecustomize), or the monitor failed")

    # notices first: swallowed entries link to them
    raw_notices: List[Dict[str, Any]] = []
    for r in records:
        pid = int(r.get("pid") or 0)
        for kind, items in (("warning", r.get("warnings") or ()), ("log", r.get("logs") or ())):
            for w in items:
                n = dict(w)
                n["kind"], n["pid"] = kind, pid
                raw_notices.append(n)
    by_handling: Dict[Tuple[int, int], List[Dict[str, Any]]] = {}
    for n in raw_notices:
        if n.get("handling") is not None:
            by_handling.setdefault((n["pid"], n["handling"]), []).append(n)

    swallowed: List[Swallowed] = []
    linked_ids: Dict[Tuple[int, int], int] = {}
    for r in records:
        pid = int(r.get("pid") or 0)
        for h in r.get("handled") or ():
            raised = Site.from_dict(h.get("raised")) or Site("?", None)
            handled = Site.from_dict(h.get("handled")) or Site("?", None)
            s = dict(h)
            s["_raised"], s["_handled"] = raised, handled
            type_short = str(h.get("type") or "?").rsplit(".", 1)[-1]
            message = h.get("message") or ""
            codes = _safe_codes(codes_fn, f"{type_short}: {message}")
            linked = by_handling.get((pid, h.get("id")), [])
            nearby = []
            if not linked and h.get("first_time") is not None:
                for n in raw_notices:
                    if n["pid"] == pid and n.get("first_time") is not None and \
                            0 <= n["first_time"] - h["first_time"] <= 2.0 and \
                            any(f.get("file") == handled.file for f in n.get("stack") or [{"file": n.get("file")}]):
                        nearby.append(n)
            score, why, routine = _score(s, codes, linked, nearby, uncaught if pid == (main or {}).get("pid") else None)
            scope = h.get("scope") or "library"
            raise_scope = h.get("raise_scope") or "library"
            in_scope = scope == "library" or (scope == "stdlib" and raise_scope == "library")
            for n in linked + nearby[:1]:
                linked_ids[(pid, n["id"])] = int(h.get("id") or 0)
            swallowed.append(Swallowed(
                id=int(h.get("id") or 0), pid=pid, type=str(h.get("type") or "?"), message=message,
                raised=raised, handled=handled, except_line=(h.get("handled") or {}).get("except_line"),
                scope=scope, raise_scope=raise_scope, count=int(h.get("count") or 0),
                reraised=int(h.get("reraised") or 0), converted=int(h.get("converted") or 0),
                converted_to=h.get("converted_to"), first_time=h.get("first_time"), last_time=h.get("last_time"),
                first_seq=int(h.get("first_seq") or 0), thread=h.get("thread"),
                stack=tuple(h.get("stack") or ()), during=Site.from_dict(h.get("during")),
                chain=tuple(h.get("chain") or ()), codes=codes, score=score, reasons=tuple(why),
                notices=tuple(int(n["id"]) for n in linked + nearby[:1]),
                shown=in_scope and score >= SHOW_SCORE and (int(h.get("count") or 0) > 0), routine=routine))
    swallowed.sort(key=lambda s: (-s.score, s.pid != (main or {}).get("pid"), s.first_seq))

    shown_ids = {(s.pid, s.id) for s in swallowed if s.shown}
    notices: List[Notice] = []
    for n in raw_notices:
        site = Site(n.get("file") or "?", n.get("line"), n.get("function"), None)
        cat = n.get("category") or n.get("level") or "?"
        message = n.get("message") or ""
        codes = _safe_codes(codes_fn, f"{cat.rsplit('.', 1)[-1]}: {message}")
        fallback = bool(FALLBACK_TEXT.search(message))
        lib = site.library or library_of(None, n.get("logger"))
        handling = n.get("handling")
        if handling is None:
            handling = linked_ids.get((n["pid"], n["id"]))
        shown = bool(codes) or (n["pid"], handling) in shown_ids or (
            lib in STACK_LAYER_LIBS and (fallback or n["kind"] == "log" or cat.endswith("Warning")))
        notices.append(Notice(
            id=int(n.get("id") or 0), pid=n["pid"], kind=n["kind"], category=cat, message=message, site=site,
            logger=n.get("logger"), count=int(n.get("count") or 0), first_time=n.get("first_time"),
            first_seq=int(n.get("first_seq") or 0), handling=handling, codes=codes, fallback=fallback,
            shown=shown, exception=n.get("exception")))
    notices.sort(key=lambda n: (n.pid != (main or {}).get("pid"), n.first_seq))

    totals: Dict[str, Any] = {
        "swallowed_sites": len(swallowed),
        "swallowed_events": sum(max(s.count, 0) for s in swallowed),
        "shown": sum(1 for s in swallowed if s.shown),
        "by_scope": {},
        "overflow": {},
    }
    for s in swallowed:
        totals["by_scope"][s.scope] = totals["by_scope"].get(s.scope, 0) + max(s.count, 0)
    for r in records:
        ov = r.get("overflow") or {}
        if any(v for v in ov.values() if not isinstance(v, dict)) or ov.get("counted_only"):
            totals["overflow"][str(r.get("pid"))] = ov

    exit_info = None
    if returncode is not None:
        sig = -returncode if returncode < 0 else None
        dump = None
        if crash_dumps:
            dump = crash_dumps.get(main_pid) if main_pid is not None else None
            dump = dump or (next(iter(crash_dumps.values())) if sig else None)
        exit_info = ExitInfo(returncode, sig, signal_name(sig), uncaught, dump)
    return RunReport(command=tuple(command), target=dict(target or {}), duration=duration, exit=exit_info,
                     processes=tuple(processes), swallowed=tuple(swallowed), notices=tuple(notices),
                     totals=totals, notes=tuple(notes), show_all=show_all)


def report_from_dict(d: Mapping[str, Any]) -> RunReport:
    """The inverse of :meth:`RunReport.to_dict` (for tools that read the JSON back)."""
    def site(x):
        return Site.from_dict(x) if x else None

    sw = []
    for s in d.get("swallowed") or ():
        s = dict(s)
        s["raised"], s["handled"], s["during"] = site(s["raised"]), site(s["handled"]), site(s.get("during"))
        for k in ("stack", "chain", "codes", "reasons", "notices"):
            s[k] = tuple(s.get(k) or ())
        sw.append(Swallowed(**s))
    no = []
    for n in d.get("notices") or ():
        n = dict(n)
        n["site"] = site(n["site"])
        n["codes"] = tuple(n.get("codes") or ())
        no.append(Notice(**n))
    ex = d.get("exit")
    procs = []
    for p in d.get("processes") or ():
        p = dict(p)
        p["argv"] = tuple(p.get("argv") or ())
        procs.append(ProcessInfo(**p))
    return RunReport(command=tuple(d.get("command") or ()), target=dict(d.get("target") or {}),
                     duration=d.get("duration"), exit=ExitInfo(**ex) if ex else None,
                     processes=tuple(procs), swallowed=tuple(sw), notices=tuple(no),
                     totals=dict(d.get("totals") or {}), notes=tuple(d.get("notes") or ()),
                     show_all=bool(d.get("show_all")), schema_version=int(d.get("schema_version") or SCHEMA_VERSION))
