"""Cascade reasoning: a pure function from parsed log evidence to ranked causes.

Each knowledge-base hit is evidence for finding codes, either as a *root* (the line
names the cause) or a *symptom* (what a lower-layer cause looks like from above, with
the codes that can produce it in ``could_be``). :func:`explain` aggregates the hits
per code and ranks them:

1. roots that no other evidenced cause explains (the deepest ones) come first; a
   cause A explains B when A is in B's ``could_be`` (e.g. ``no-c-compiler`` explains
   FLA's "roll back to CPU" and the ``torch.cpu`` AttributeError that follows it);
2. among those, the one that explains most of the other evidence, then the most
   specific wording (entry weight), then the lowest layer, then the earliest line;
3. roots that another cause explains follow, then symptoms (deepest layer first).

When the log holds only symptoms, the top candidate is the deepest symptom and its
``could_be`` lists the lower-layer causes that can produce it, deepest first; live
confirmation (:mod:`.live`) can then tell which one it is on this machine.

The versions, GPUs and driver the log prints (``ParseResult.facts``) add what they prove
(:mod:`.facts`): a known-bad combination or a state fact of high confidence is a cause
ranked with those the lines state (or supports the line that names it), one of medium
confidence ranks like an inference, one the log shows no failure for is only a note.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..codes import all_codes
from ..combinations import LogFacts, contradicted_pairing, match_combinations
from ..model import SCHEMA_VERSION, ExitCode, envelope
from . import host as _host
from . import numbers as _numbers
from .knowledge import Entry, KnowledgeBase, fix_text, layer_rank, load
from .parser import WARN_LEVEL_RE, Hit, ParseResult, error_shape, split_prefix, suspect_shape

#: evidence lines kept per candidate
EVIDENCE_PER_CANDIDATE = 5
#: what a guess rests on (no line states the cause): the words of the error lines, or their
#: resemblance to threads whose cause was established
GUESS_BASES = ("vocabulary", "similar")
#: a cause put before a symptom the log shows alone, from the base rate of the threads that
#: showed it (knowledge/priors.json): a guess too, but the symptom's lines are known
PRIOR_BASIS = "prior"


@dataclass(frozen=True)
class Evidence:
    line: int
    text: str
    entry: str
    stream: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"line": self.line, "text": self.text, "entry": self.entry, "stream": self.stream}


@dataclass(frozen=True)
class LiveCheck:
    """What a live check said about a candidate on this machine."""

    verdict: str          # "confirmed" | "ruled-out" | "inconclusive" | "other-problem"
    check: str
    status: str
    detail: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"verdict": self.verdict, "check": self.check, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Candidate:
    code: str
    layer: str
    kind: str                     # "root" | "symptom"
    title: str
    evidence: Tuple[Evidence, ...]
    count: int
    weight: int
    explanation: str
    fix: str
    links: Tuple[str, ...] = ()
    #: other candidates in this log that this one accounts for
    explains: Tuple[str, ...] = ()
    #: candidates in this log that account for this one
    explained_by: Tuple[str, ...] = ()
    #: codes that can cause this one (deepest first); for symptoms, where to look
    could_be: Tuple[str, ...] = ()
    #: the `stackpeel check` check that can confirm it live
    check: Optional[str] = None
    live: Optional[LiveCheck] = None
    #: how sure: "stated" (a log line names this cause), "inferred" (a symptom in the log
    #: plus context that points to this cause: container, WSL, Colab, variables...),
    #: "symptom" (what a lower cause looks like; the cause is one of ``could_be``), "low" (a
    #: guess from the words of error lines no signature explains)
    confidence: str = "stated"
    #: what the candidate rests on: "signature" (a knowledge-base pattern matched a line),
    #: "clues" (inferred from a symptom and context clues), "vocabulary" (words of unexplained
    #: error lines, knowledge/vocabulary.toml), "similar" (unexplained error lines resemble
    #: those of a thread whose cause was established, knowledge/exemplars.json), "prior" (the log
    #: shows only a symptom; the cause most earlier threads with it established, knowledge/priors.json)
    basis: str = "signature"
    #: for a guess from words: (word id, the text it matched) that implicated the code, and the
    #: context entries or clue literals that re-ranked it
    words: Tuple[Tuple[str, str], ...] = ()
    context: Tuple[str, ...] = ()
    #: for each code in ``could_be`` that the log's context points to, the clue literals found
    #: (what ranked it first: a `docker run` line, a WSL kernel, `NCCL_SOCKET_IFNAME=` ...)
    could_be_clues: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    #: the known-bad combinations and state facts of the log's versions and GPUs that support
    #: this candidate ("combination:<id>", "state:<rule>"; :mod:`.facts`)
    facts: Tuple[str, ...] = ()
    #: for a guess by resemblance (basis "similar"): (thread URL, similarity) of the training
    #: logs with an established cause that the log's error lines resemble (:mod:`.similar`)
    resembles: Tuple[Tuple[str, float], ...] = ()
    #: for a base-rate guess (basis "prior"): (the symptom, threads whose established cause was
    #: this code, threads with that symptom first) (:mod:`.priors`)
    prior: Optional[Tuple[str, int, int]] = None
    #: how many codes at the start of ``could_be`` a signature on the candidate's lines declared
    #: as its own ranked causes (NCCL's ``Cuda failure`` line: a failed CUDA call), ahead of the
    #: code-level ``caused_by`` another signature of the same code on the line brought; a base
    #: rate reorders each part on its own (not in :meth:`to_dict`)
    own_causes: int = 0

    @property
    def first_line(self) -> int:
        return min((e.line for e in self.evidence), default=0)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "layer": self.layer,
            "kind": self.kind,
            "title": self.title,
            "evidence": [e.to_dict() for e in self.evidence],
            "count": self.count,
            "weight": self.weight,
            "explanation": self.explanation,
            "fix": self.fix,
            "links": list(self.links),
            "explains": list(self.explains),
            "explained_by": list(self.explained_by),
            "could_be": list(self.could_be),
            "check": self.check,
            "live": self.live.to_dict() if self.live else None,
            "confidence": self.confidence,
            "basis": self.basis,
            "words": [{"word": w, "text": t} for w, t in self.words],
            "context": list(self.context),
            "could_be_clues": {code: list(lits) for code, lits in self.could_be_clues},
            "facts": list(self.facts),
            "resembles": [{"source": u, "similarity": x} for u, x in self.resembles],
            "prior": ({"symptom": self.prior[0], "threads": self.prior[1], "of": self.prior[2]}
                      if self.prior else None),
        }


@dataclass(frozen=True)
class ExceptionInfo:
    """One Python exception found in the log (the line of ``Type: message``)."""

    line: int
    type: Optional[str]
    message: str
    stream: str = ""
    start: int = 0
    chain: Optional[str] = None     # how it follows the previous one: "cause" | "context"
    parent_line: Optional[int] = None
    truncated: bool = False
    frames: Tuple[str, ...] = ()    # innermost last: "file:line in func"
    codes: Tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        """'Type: message', or what is known of a traceback cut before its exception line."""
        if self.type:
            return f"{self.type}: {self.message}"
        where = f", last frame {self.frames[-1]}" if self.frames else ""
        return f"(a traceback cut before its exception line{where})"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "line": self.line, "type": self.type, "message": self.message, "stream": self.stream,
            "start": self.start, "chain": self.chain, "parent_line": self.parent_line,
            "truncated": self.truncated, "frames": list(self.frames), "codes": list(self.codes),
        }


@dataclass(frozen=True)
class LiveSummary:
    ran: bool
    python: Optional[str] = None
    checks: Tuple[str, ...] = ()
    #: blocking root causes the live run found (codes), whether or not the log shows them
    found: Tuple[str, ...] = ()
    note: str = ""
    #: whether the log comes from the machine the checks ran on: "same", "other" or
    #: "unknown"; a passing check rules a cause out only for "same"
    provenance: str = "unknown"
    provenance_reason: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"ran": self.ran, "python": self.python, "checks": list(self.checks), "found": list(self.found),
                "note": self.note, "provenance": self.provenance, "provenance_reason": self.provenance_reason}


@dataclass(frozen=True)
class Explanation:
    source: str
    lines: int
    bytes: int
    candidates: Tuple[Candidate, ...] = ()
    exceptions: Tuple[ExceptionInfo, ...] = ()
    n_exceptions: int = 0
    unexplained: Tuple[Evidence, ...] = ()
    n_unexplained: int = 0
    #: no error line: ``unexplained`` holds lines that say something went wrong only in a
    #: warning, a hang or timeout in words, or a signal (parser.suspect_shape)
    suspect_only: bool = False
    n_warnings: int = 0
    streams: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = ()
    live: Optional[LiveSummary] = None
    #: stable id of the error lines no knowledge-base entry explains (when nothing is known)
    fingerprint: Optional[str] = None
    #: what the log states about its stack (versions, GPUs, CUDA build, context), and the
    #: combinations and state facts that hold for it (``.facts``)
    facts: Optional[LogFacts] = None
    fact_findings: Tuple[Any, ...] = ()
    #: the user stopped the run (Ctrl+C: a KeyboardInterrupt is the log's last exception and no
    #: error precedes it): its exception line; the log shows no failure and no cause is guessed
    interrupted: Optional[Evidence] = None
    #: where a launcher's catch-all reports a worker that printed its own traceback before it
    #: (torchrun's ChildFailedError after the worker's ValueError, tools43): the line of the
    #: worker's exception, the failure a user reads first (:attr:`last_exception`)
    worker_exception_line: Optional[int] = None
    schema_version: int = SCHEMA_VERSION

    @property
    def root(self) -> Optional[Candidate]:
        return self.candidates[0] if self.candidates else None

    @property
    def codes(self) -> List[str]:
        return [c.code for c in self.candidates]

    @property
    def last_exception(self) -> Optional[ExceptionInfo]:
        """The exception that ended the run as a user reads it: the log's last, but where a launcher's
        summary (ChildFailedError) reports a worker's own traceback printed before it, the worker's."""
        if self.worker_exception_line is not None:
            for x in self.exceptions:
                if x.line == self.worker_exception_line:
                    return x
        return self.exceptions[-1] if self.exceptions else None

    @property
    def launcher_exception(self) -> Optional[ExceptionInfo]:
        """The launcher's exception that reports the worker's (:attr:`last_exception`), when it does."""
        last = self.last_exception
        return self.exceptions[-1] if last is not None and self.exceptions and last is not self.exceptions[-1] else None

    @property
    def has_errors(self) -> bool:
        """The log shows a failure: a known cause or symptom, an exception or an error line (a
        run the user interrupted, and nothing else, is none)."""
        return bool(self.candidates or (self.interrupted is None and (self.n_exceptions or self.n_unexplained)))

    @property
    def exit_code(self) -> ExitCode:
        """OK: the log shows no error at all; PROBLEMS: a cause, a known symptom, or an
        error no entry knows (see :attr:`fingerprint`) was found."""
        return ExitCode.PROBLEMS if self.has_errors else ExitCode.OK

    def to_dict(self) -> Dict[str, Any]:
        return {
            **envelope("explain", self.schema_version),
            "source": self.source,
            "lines": self.lines,
            "bytes": self.bytes,
            "root_cause": self.root.code if self.root else None,
            "root_kind": self.root.kind if self.root else None,
            "exit_code": int(self.exit_code),
            "candidates": [c.to_dict() for c in self.candidates],
            "exceptions": [e.to_dict() for e in self.exceptions],
            "n_exceptions": self.n_exceptions,
            "unexplained": [e.to_dict() for e in self.unexplained],
            "n_unexplained": self.n_unexplained,
            "suspect_only": self.suspect_only,
            "n_warnings": self.n_warnings,
            "streams": list(self.streams),
            "notes": list(self.notes),
            "interrupted": self.interrupted.to_dict() if self.interrupted else None,
            "worker_exception_line": self.worker_exception_line,
            "live": self.live.to_dict() if self.live else None,
            "fingerprint": self.fingerprint,
            "facts": {**(self.facts.to_dict() if self.facts else {}),
                      # the entries that fully hold, by the matcher check uses (partial ones are findings)
                      "combinations": [m.id for m in match_combinations(self.facts.versions)
                                       if not contradicted_pairing(self.facts, m.observed)] if self.facts else [],
                      "findings": [f.to_dict() for f in self.fact_findings]},
        }


# ----------------------------------------------------------------------------- helpers

def code_layer(code: str, catalogue: Mapping[str, Any], default: str = "") -> str:
    spec = catalogue.get(code)
    return spec.layer if spec is not None else default


def _general_causes(code: str, catalogue: Mapping[str, Any]) -> Set[str]:
    """The code's own ``caused_by``: what a signature that declares no ``could_be`` gets."""
    return set(getattr(catalogue.get(code), "caused_by", ()) or ())


def deepest_first(codes: Sequence[str], catalogue: Mapping[str, Any]) -> Tuple[str, ...]:
    seen: Dict[str, None] = {}
    for c in codes:
        seen.setdefault(c, None)
    order = {c: i for i, c in enumerate(seen)}
    return tuple(sorted(seen, key=lambda c: (layer_rank(code_layer(c, catalogue, "zz")), order[c])))


@dataclass
class _Acc:
    code: str
    entries: List[Entry] = field(default_factory=list)
    evidence: List[Evidence] = field(default_factory=list)
    count: int = 0
    root: bool = False
    weight: int = 0
    could_be: List[str] = field(default_factory=list)
    #: the part of ``could_be`` that signatures declared as their own (not the code's caused_by),
    #: in their order: it comes first
    own: List[str] = field(default_factory=list)
    #: inferred from symptoms and context clues, not named by a line
    inferred: bool = False
    #: the symptom codes an inferred cause was inferred from
    infers: List[str] = field(default_factory=list)
    #: a combination or state fact of the log's facts that names this code (.facts.FactFinding)
    fact: Any = None
    #: rules of the facts that support it
    rules: List[str] = field(default_factory=list)
    #: a line other than an optional import's warning names it (optional_import_warning)
    stated_besides_warnings: bool = False

    @property
    def hint(self) -> bool:
        """Only optional imports' warnings name it: a degraded hint, ranked after the causes lines
        state (confidence "low")."""
        return bool(self.entries) and not self.stated_besides_warnings and self.fact is None

    @property
    def said(self) -> bool:
        """Only a user's sentence names it (signatures with ``said = true``): among the roots
        nothing else explains, it ranks after those a program's own line states. It still
        explains what lists it in ``could_be`` (the deeper cause of a line that says it may be
        this: *Secure Boot is enabled* under *NVIDIA driver not loaded*)."""
        return bool(self.entries) and all(e.said for e in self.entries) and self.fact is None


#: an import that failed, as a library words it when it goes on without the module (tools28)
_OPTIONAL_IMPORT_RE = re.compile(
    r"No module named|[Cc]ould not import|[Cc]ouldn't import|[Ff]ailed to import|[Uu]nable to import"
    r"|cannot import name|Failed to load (?:image )?Python extension")
#: the words of a library that goes on without an optional module: xformers/__init__.py ("A matching
#: Triton is not available, some optimizations will not be enabled.\nError caught was: No module named
#: 'triton'"), older xformers ("Triton is not available, some optimizations will not be enabled.\n{e}",
#: "Functorch is not available, some optimizations will not be enabled"), torchvision/io/image.py
#: ("Failed to load image Python extension: ... If you don't plan on using image functionality from
#: `torchvision.io`, you can ignore this warning."), the "Could not import X, some features disabled"
#: shape of other libraries
_DEGRADED_RE = re.compile(
    r"\bsome (?:features|optimi[sz]ations|functionality|functions|ops|kernels)\b[^\n]{0,40}?"
    r"(?:disabled|not be enabled|unavailable|not be available|not work)"
    r"|\bfeatures? (?:are |will be |is )?disabled\b|^\W{0,3}Error caught was: |you can ignore this warning")
#: a line of Python's warnings module ("file.py:13: UserWarning: ...")
_PY_WARNING_RE = re.compile(r"\b[A-Z]\w{0,40}Warning: ")


def optional_import_warning(hit: Hit) -> bool:
    """Whether ``hit`` is a library's warning that an optional import failed and it goes on
    without it: an import failure ("No module named 'xformers'", "Could not import ...") in a
    WARNING record or a Python warning, or with words of a degraded feature on its line or the line
    before ("some optimizations will not be enabled"). Not a traceback's exception line. Such a
    line is no root of a failure another line states (docs/dev/tools28.md)."""
    if hit.traceback is not None:
        return False
    text = hit.line.text
    if not _OPTIONAL_IMPORT_RE.search(text):
        return False
    if WARN_LEVEL_RE.match(text) or _PY_WARNING_RE.search(text) or _DEGRADED_RE.search(text):
        return True
    return bool(hit.before) and _DEGRADED_RE.search(hit.before[-1].text) is not None


def _exceptions(parsed: ParseResult, kb: KnowledgeBase) -> Tuple[List[ExceptionInfo], int]:
    from .knowledge import codes_of_entries

    by_index = {tb.index: tb for tb in parsed.tracebacks}
    out = []
    for tb in parsed.tracebacks:
        if not tb.exc_type and not tb.truncated:
            continue
        text = f"{tb.exc_type or ''}: {tb.message}"
        parent = by_index.get(tb.parent) if tb.parent is not None else None
        frames = tuple(f"{f.file}:{f.line} in {f.func}" for f in tb.frames[-3:])
        out.append(ExceptionInfo(
            line=tb.exc_line or tb.end, type=tb.exc_type, message=tb.message, stream=tb.stream, start=tb.start,
            chain=tb.chain, parent_line=(parent.exc_line or parent.end) if parent else None, truncated=tb.truncated,
            frames=frames, codes=tuple(codes_of_entries(kb.match_line(text), tb.context())),
        ))
    return out, parsed.n_tracebacks


# ----------------------------------------------------------------------------- explain

#: the launchers' catch-all signatures (launcher-worker-failed): a worker died, its status says how
LAUNCHER_CATCH_ALLS = frozenset(("launcher-child-failed",))
#: the exception types a launcher raises about its worker (not the worker's own failure)
_LAUNCHER_EXC_RE = re.compile(r"(?:^|\.)(?:ChildFailedError|CalledProcessError|SystemExit|KeyboardInterrupt|"
                              r"ProcessRaisedException|ProcessExitedException|SignalException)$")
#: a worker's exit status as torchrun (api.py 'failed (exitcode: 1)', the Root Cause table's
#: 'exitcode  : 1 (pid: ...)'), DeepSpeed's launcher ('exits with return code = 1'), accelerate's
#: CalledProcessError ("Command '[...]' returned non-zero exit status 1."), mpirun (help-orterun.txt
#: 'Exit code:    1') and srun (launch.c 'task 0: Exited with exit code 1') print it
_WORKER_STATUS_RE = re.compile(r"(?:exitcode\s{0,4}:\s{0,4}|exits with return code = |returned non-zero exit status "
                               r"|\bExit code:\s{1,8}|: Exited with exit code )(-?\d{1,4})\b")
#: a worker's end by a signal as a launcher words it: torch elastic's 'Signal 9 (SIGKILL) received by PID',
#: explain.numbers' reading of a status ('[SIGKILL: Killed]'), CPython's CalledProcessError ("died with
#: <Signals.SIGKILL: 9>"), mpirun's 'exited on signal 9 (Killed)', srun's strsignal after the task ('task 0:
#: Killed', 'task 1: Segmentation fault (core dumped)')
_WORKER_SIGNAL_RE = re.compile(r"\[SIG[A-Z]{2,6}[:\]]|\bSignal \d{1,2} \(|died with <Signals\.|exited on signal \d"
                               r"|: tasks? [\d,\[\]-]{1,60}: "
                               r"(?:Killed|Segmentation fault|Aborted|Bus error|Terminated)\b")


def _launcher_reports_child_traceback(parsed: ParseResult, entries: Mapping[str, Any]) -> bool:
    """Whether the log's launcher catch-all (:data:`LAUNCHER_CATCH_ALLS`) reports a worker that
    printed its own traceback earlier (tools43): every worker status the log prints is a plain
    exit status (1 to 127: the worker's Python raised; not a negative signal number, not a
    shell's 128+N, and none read as a signal's name), at least one is printed, and a traceback
    whose exception is not a launcher's (ChildFailedError, CalledProcessError, SystemExit ...)
    starts before the first launcher line."""
    launcher = [h for h in parsed.hits if h.entry in LAUNCHER_CATCH_ALLS]
    if not launcher:
        return False
    first = min(h.line.number for h in launcher)
    texts = [h.whole or h.line.text for h in parsed.hits if h.entry in entries]
    # (and the lines after a launcher's line: mpirun's 'Exit code:    1' a few lines below its own)
    texts += [ln.text for h in launcher for ln in h.after]
    texts += [ln.text for ln in parsed.other_errors]
    texts += [tb.message for tb in parsed.tracebacks if tb.exc_type and _LAUNCHER_EXC_RE.search(tb.exc_type)]
    statuses = [int(m.group(1)) for t in texts for m in _WORKER_STATUS_RE.finditer(t)]
    if not statuses or any(not 0 < n < 128 for n in statuses):
        return False
    if any(_WORKER_SIGNAL_RE.search(t) for t in texts):
        return False
    return any(tb.exc_type and not _LAUNCHER_EXC_RE.search(tb.exc_type) and tb.start < first
               for tb in parsed.tracebacks)


def _worker_exception_line(parsed: ParseResult, exceptions: Sequence[ExceptionInfo]) -> Optional[int]:
    """Where the launcher reports a worker's traceback (:func:`_launcher_reports_child_traceback`): the
    line of the last exception, not a launcher's, whose traceback starts before the launcher's first
    line (a chained traceback's last part; of the ranks that print the same one, the last)."""
    launcher = [h.line.number for h in parsed.hits if h.entry in LAUNCHER_CATCH_ALLS]
    if not launcher:
        return None
    first = min(launcher)
    worker = [x for x in exceptions if x.type and not _LAUNCHER_EXC_RE.search(x.type) and x.start < first]
    return worker[-1].line if worker and worker[-1] is not exceptions[-1] else None


def _without_launcher(parsed: ParseResult, exceptions: Sequence[ExceptionInfo]
                      ) -> Tuple[ParseResult, List[ExceptionInfo]]:
    """``parsed`` and ``exceptions`` without the launcher's report of its worker (tools43): its
    hits, the error lines from its first line on (torchrun's summary table), its exceptions."""
    first = min((h.line.number for h in parsed.hits if h.entry in LAUNCHER_CATCH_ALLS), default=None)
    if first is None:
        return parsed, list(exceptions)
    kept = replace(
        parsed,
        hits=[h for h in parsed.hits if h.entry not in LAUNCHER_CATCH_ALLS],
        other_errors=[ln for ln in parsed.other_errors if ln.number < first],
        tracebacks=[tb for tb in parsed.tracebacks if not (tb.exc_type and _LAUNCHER_EXC_RE.search(tb.exc_type))],
    )
    return kept, [x for x in exceptions if not (x.type and _LAUNCHER_EXC_RE.search(x.type))]


def explain(parsed: ParseResult, source: str = "<log>", kb: Optional[KnowledgeBase] = None,
            catalogue: Optional[Mapping[str, Any]] = None) -> Explanation:
    """Rank the causes the parsed log evidences. Pure: reads only its arguments
    (and the bundled knowledge base / code catalogue when not given)."""
    kb = kb or load()
    catalogue = all_codes() if catalogue is None else catalogue
    entries = {e.id: e for e in kb.entries}
    # a signature that ``requires`` a fact the log does not show (whisper's 'FP16 is not supported
    # on CPU' where nothing says a GPU was expected) is as if it had not matched
    parsed = _requirements_met(parsed, entries)

    accs: Dict[str, _Acc] = {}
    # a catch-all signature (a bare CUDA error name) speaks only when nothing else matched; a user's
    # sentence that names a symptom ("can't use the GPU after sleep") does not silence it: that
    # sentence is read only where no program's line shows the failure, and the catch-all's is one
    specific = any(not e.fallback and not e.number and not (e.said and not e.is_root)
                   for e in (entries.get(h.entry) for h in parsed.hits) if e is not None)
    # a bare status number read as its name (a ``number`` signature: "exit code 137 [SIGKILL: Killed]")
    # gives way to any other signature, a catch-all included, but one of its own line that states a
    # symptom its code can cause (the launcher's "returned non-zero exit status 137" it narrows)
    worded = [(h.line.number, set(e.could_be)) for h in parsed.hits
              for e in [entries.get(h.entry)] if e is not None and not e.number and not e.said]
    clue_lines = list(dict.fromkeys(w for seen in parsed.clues.values() for w in seen))
    #: codes a line of the log names itself, and codes only the context far from the line chose
    near: set = set()
    far: Dict[str, List[Evidence]] = {}
    # a user's sentence (a ``said`` signature) states the cause of a failure: it counts when the
    # log shows one besides such sentences (a program's line, a traceback, another error line)
    # or the sentence is an error line itself ("it exhausts the RAM and the PC crashes"); alone,
    # "SecureBoot enabled" or "it started after a kernel update" is a fact of the machine, and
    # "installing the CPU version of torch for the docs build" a plan, not a failure. A sentence
    # that says something does not work ("GPU not detected on fresh install") is a possible
    # failure of its own (parser.COMPLAINT_RE): a `said` symptom reads it in a log with nothing
    # else, and only there (where a program's lines show the failure, they tell more than the
    # user's summary of it: "no GPU found" may be a program's warning above the real error)
    failing = bool(parsed.n_tracebacks or parsed.n_other_errors or any(
        not e.said for e in (entries.get(h.entry) for h in parsed.hits) if e is not None))
    #: a program's line shows the failure (lines that only may show one do not count)
    shown = failing and not (parsed.suspect_only and not parsed.n_tracebacks and all(
        e is None or e.said for e in (entries.get(h.entry) for h in parsed.hits)))
    # an optional import's warning ("No module named 'xformers'" in a WARNING record, xformers'
    # "some optimizations will not be enabled") is no root where another line states a failure it
    # does not explain; alone it is a hint (tools28)
    hinted = {id(h) for h in parsed.hits if optional_import_warning(h)}
    hint_codes = {c for h in parsed.hits if id(h) in hinted
                  for e in [entries.get(h.entry)] if e is not None for c in e.all_codes()}
    elsewhere = any(not e.fallback and not e.number and not e.said and not (hint_codes & {*e.all_codes(), *e.could_be})
                    for h in parsed.hits if id(h) not in hinted
                    for e in [entries.get(h.entry)] if e is not None)
    # a program's warning (a ``warning`` signature: triton-windows' 'Failed to find MSVC.', after
    # which the run may go on) names its cause only where another line shows a failure
    # (a piece of the warning's own line, hard-wrapped onto a line of its own, is no other failure:
    # XLA's "...h may slow down compilation. You should update your NVIDIA driver ..." lead43)
    warned = [h.line.text for h in parsed.hits for e in [entries.get(h.entry)] if e is not None and e.warning]
    other_errors = [ln for ln in parsed.other_errors
                    if not (warned and len(ln.text.strip()) >= 20 and any(ln.text.strip() in w for w in warned))]
    failing_besides = bool(
        parsed.n_tracebacks or other_errors or parsed.n_other_errors > len(parsed.other_errors)
        or any(not e.said and not e.warning for e in (entries.get(h.entry) for h in parsed.hits) if e is not None))
    copies = _refined_copies(parsed, entries)
    # a launcher's catch-all (torchrun's ChildFailedError, 'failed (exitcode: 1)') beside the worker's
    # own traceback printed before it, where the worker's status is a plain exit status (a Python
    # exception, no signal): the traceback is the failure, the launcher's report of it says nothing
    # more, and its could-be (the OOM killer, /dev/shm, a time limit: signals) do not fit (tools43)
    reported_child = _launcher_reports_child_traceback(parsed, entries)
    # what a refine with ``far_unless`` reads besides the line's neighbours: every line the scan kept
    kept_lines: List[Tuple[int, str]] = [(ln.number, ln.text) for ln in parsed.other_errors]
    kept_lines += [(tb.exc_line or tb.start, f"{tb.files_text}\n{tb.exc_type or ''}: {tb.message}")
                   for tb in parsed.tracebacks]
    kept_lines += [(h.line.number, h.context or h.line.text) for h in parsed.hits]
    kept_lines += clue_lines
    for hit in parsed.hits:
        e = entries.get(hit.entry)
        if e is None or (e.fallback and specific) or (e.warning and not failing_besides):
            continue
        if reported_child and e.fallback and e.id in LAUNCHER_CATCH_ALLS:
            continue
        if e.number and (specific or any(n != hit.line.number or not could_be & set(e.all_codes())
                                         for n, could_be in worded)):
            continue
        if id(hit) in hinted and elsewhere:
            continue
        if e.said and not e.is_root:
            if shown or not suspect_shape(hit.line.text):
                continue
        elif e.said and not failing and error_shape(hit.whole or hit.line.text) is None \
                and not _gives_cause(e, hit.whole or hit.line.text):
            # (the sentence as the user wrote it: a line a paste wrapped read whole)
            continue
        codes, context_line = _refined(e, hit.context, clue_lines, kb, kept_lines)
        if copies and codes == e.codes and e.refine and _own_reading(e, hit.context) is None:
            m = e.search(hit.line.text)
            refined = copies.get((e.id, m.group(0))) if m else None
            if refined is not None:
                codes, context_line = refined, None
        for code in codes:
            acc = accs.setdefault(code, _Acc(code))
            if e not in acc.entries:
                acc.entries.append(e)
            acc.evidence.append(Evidence(hit.line.number, hit.line.text.strip(), e.id, hit.line.stream))
            if context_line is None:
                if not e.said:  # a user's sentence does not make a code the far context chose stated
                    near.add(code)
            else:
                far.setdefault(code, []).append(context_line)
            # a refinement that moved a symptom's line to a root cause (a bare ENOSYS under a file-lock
            # frame: filesystem-locks-unavailable) states that root
            acc.root = acc.root or e.is_root or (code not in e.codes and code in catalogue
                                                 and catalogue[code].kind == "root")
            acc.stated_besides_warnings = acc.stated_besides_warnings or id(hit) not in hinted
            acc.weight = max(acc.weight, e.weight)
            for c in e.could_be:
                if c != code and c not in acc.could_be:
                    acc.could_be.append(c)
            if e.could_be and set(e.could_be) != _general_causes(code, catalogue):
                acc.own.extend(c for c in e.could_be if c != code and c not in acc.own)
    # a code that only a context line far from the generic line chose is an inference: a
    # cause another line names outranks it (and its context line is part of its evidence)
    for code, evs in far.items():
        if code not in near:
            accs[code].inferred = True
            accs[code].evidence.extend(dict.fromkeys(evs))
    # counts include hits beyond those kept
    for acc in accs.values():
        acc.count = sum(parsed.hit_counts.get(e.id, 0) for e in acc.entries) or len(acc.evidence)

    _infer(accs, parsed, kb, catalogue)
    exceptions, n_exc = _exceptions(parsed, kb)
    worker_line = _worker_exception_line(parsed, exceptions) if reported_child else None
    findings, fact_notes, early_guesses = _apply_facts(accs, parsed, exceptions, kb, catalogue)
    # the OS the log plainly comes from rules out guesses and base rates of causes that cannot
    # happen there (/dev/shm on native Windows); a cause a line states is never dropped (tools36b)
    host = _host.platform_of(parsed, kb)
    platform = host[0] if host else None
    dropped: List[str] = []

    def possible(guesses: Optional[List[Candidate]]) -> Optional[List[Candidate]]:
        if guesses is None or platform is None:
            return guesses
        dropped.extend(c.code for c in guesses if _host.ruled_out(c.code, platform, kb) and c.code not in dropped)
        return [c for c in guesses if not _host.ruled_out(c.code, platform, kb)]

    early_guesses = possible(early_guesses)

    present = set(accs)
    explains: Dict[str, List[str]] = {c: [] for c in accs}
    explained_by: Dict[str, List[str]] = {c: [] for c in accs}
    for b, acc in accs.items():
        for a in acc.could_be:
            if a in present and a != b:
                explains[a].append(b)
                explained_by[b].append(a)
    for a, acc in accs.items():
        for b in acc.infers:
            if b in present and b not in explains[a]:
                explains[a].append(b)
                explained_by[b].append(a)
    # a symptom code that is also evidenced as a root stays a root; a root never
    # "explains" a deeper root it is itself a could_be of (keep the graph acyclic-ish)
    for a in list(explains):
        for b in list(explains[a]):
            if a in explains.get(b, []) \
                    and layer_rank(_layer(accs[b], catalogue)) < layer_rank(_layer(accs[a], catalogue)):
                explains[a].remove(b)
                explained_by[b].remove(a)

    def closure_of(code: str) -> List[str]:
        return closure.get(code, [])

    def rank(acc: _Acc) -> Tuple:
        layer = _layer(acc, catalogue)
        root_unexplained = acc.root and not explained_by[acc.code]
        group = 0 if root_unexplained else (1 if acc.root else 2)
        first = min((ev.line for ev in acc.evidence), default=0)
        if group == 2:
            return (group, 0, layer_rank(layer), -acc.weight, first)
        # a cause a line names outranks one inferred from context; a program's line outranks
        # a user's sentence
        return (group, int(acc.inferred or acc.hint), int(acc.said), -len(closure_of(acc.code)), -acc.weight,
                layer_rank(layer), first)

    # what each root accounts for, directly or through a chain of explained causes
    closure: Dict[str, List[str]] = {}
    for code in accs:
        seen: List[str] = []
        todo = list(explains[code])
        while todo:
            c = todo.pop(0)
            if c not in seen and c != code:
                seen.append(c)
                todo.extend(explains.get(c, []))
        closure[code] = seen

    ranked = sorted(accs.values(), key=rank)
    candidates = []
    for acc in ranked:
        spec = catalogue.get(acc.code)
        if acc.entries:
            main = sorted(acc.entries, key=lambda e: (-e.weight, e.order))[0]
            explanation, fix = main.explanation, main.fix
            if acc.code not in main.codes and spec is not None:
                # a refinement moved the line to another code: that code's own words, not the
                # words of the code the signature is filed under
                explanation, fix = spec.meaning, fix_text(spec)
        else:  # inferred: the code's own words
            explanation = spec.meaning if spec is not None else ""
            fix = fix_text(spec) if spec is not None else ""
        ev = _pick_evidence(acc.evidence)
        # a signature's own ranked causes first, in its order; the code's general ones after
        own = tuple(acc.own)
        could_be = own + deepest_first([c for c in acc.could_be if c not in own], catalogue)
        why = tuple((c, tuple(lit for lit, _ in hits)) for c in could_be
                    for hits in [_clue_hits(c, parsed, kb, rivals=could_be)] if hits) if parsed.clues else ()
        fact = acc.fact if not acc.entries else None
        if fact is not None:
            explanation, fix = fact.explanation, fact.fix or fix
        candidates.append(Candidate(
            code=acc.code,
            layer=_layer(acc, catalogue),
            kind="root" if acc.root else "symptom",
            title=spec.title if spec is not None else acc.code,
            evidence=ev,
            count=acc.count,
            weight=acc.weight,
            explanation=explanation,
            fix=fix,
            links=tuple(dict.fromkeys([*(link for e in acc.entries for link in e.links),
                                       *(fact.links if fact is not None else ())])),
            explains=tuple(closure[acc.code]),
            explained_by=tuple(explained_by[acc.code]),
            could_be=could_be,
            check=kb.checks.get(acc.code),
            confidence=(fact.confidence if fact is not None else
                        "inferred" if acc.inferred else "low" if acc.hint else ("stated" if acc.root else "symptom")),
            basis=fact.basis if fact is not None else ("clues" if acc.inferred else "signature"),
            could_be_clues=why,
            facts=tuple(acc.rules),
            own_causes=len(own),
        ))

    candidates = _apply_prior(candidates, kb, catalogue, platform, dropped)
    cited = {ev.line for c in candidates for ev in c.evidence}
    unexplained = tuple(Evidence(ln.number, ln.text.strip(), "", ln.stream) for ln in parsed.other_errors[:10]
                        if ln.number not in cited)
    interrupted = None if candidates else _interruption(parsed, exceptions)
    if interrupted is not None:
        # a run the user stopped (Ctrl+C) is no failure: no cause is guessed from its lines
        candidates, unexplained = [], ()
    elif not candidates:
        # the worker's own traceback is the failure: no guess from the launcher's report of it
        g_parsed, g_exceptions = _without_launcher(parsed, exceptions) if reported_child else (parsed, exceptions)
        candidates = early_guesses if early_guesses is not None and not reported_child else possible(
            _guesses(g_parsed, g_exceptions, kb, catalogue)) or []
        if parsed.suspect_only:
            # lines that only may show a failure guess no cause from their words: they are listed
            candidates = [c for c in candidates if c.basis != "vocabulary"]
        elif not candidates:
            candidates = possible(_similar_guesses(g_parsed, g_exceptions, kb, catalogue)) or []
    elif early_guesses and all(c.basis in ("combination", "facts") for c in candidates):
        candidates = candidates + [g for g in early_guesses if g.code not in {c.code for c in candidates}]
    notes = []
    if parsed.cut_lines:
        notes.append(f"{parsed.cut_lines} very long line(s) were cut to their first 16384 characters")
    if parsed.junk_chars:
        notes.append(f"{parsed.junk_chars} control/binary character(s) were ignored")
    if parsed.n_tracebacks > len(parsed.tracebacks):
        notes.append(f"{parsed.n_tracebacks} tracebacks in the log; the first and last "
                     f"{len(parsed.tracebacks)} were kept")
    if parsed.compressed:
        notes.append("the input was gzip-compressed")
    if parsed.repeats:
        # a long log's repeated records (parser.COLLAPSE_AFTER): counted, not read again
        shown = "; ".join(f"`{rep.line.text[:100]}` {rep.count} times (counted only at lines "
                          f"{', '.join(map(str, rep.numbers))}{', ...' if rep.collapsed > len(rep.numbers) else ''})"
                          for rep in parsed.repeats[:3])
        notes.append(f"{sum(rep.collapsed for rep in parsed.repeats)} copies of {len(parsed.repeats)} record(s) "
                     f"that repeat (the same text but for numbers) were counted, not read again: {shown}"
                     f"{'; ...' if len(parsed.repeats) > 3 else ''}")
    if candidates and candidates[0].basis == PRIOR_BASIS and candidates[0].prior:
        symptom, k, n = candidates[0].prior
        notes.append(f"the log shows only {symptom}; in {k} of {n} earlier threads with it the cause was "
                     f"{candidates[0].code}: a base-rate guess (low confidence), not read from the log; confirm it "
                     "with `stackpeel check` on the affected machine (or explain without --no-live there)")
    elif candidates and candidates[0].basis == "similar":
        notes.append("no knowledge-base message or word matches these error lines: the causes listed are those of "
                     "earlier threads whose error lines resemble them (low confidence; open the threads to compare); "
                     "run `stackpeel check` on the affected machine to tell which, if any, it is")
    elif candidates and candidates[0].basis == "vocabulary":
        notes.append("no knowledge-base message matches these error lines: the causes listed are guessed from "
                     "their words (low confidence); run `stackpeel check` on the affected machine (or explain "
                     "without --no-live there) to tell which, if any, it is")
    elif candidates and candidates[0].confidence == "low" and candidates[0].basis == "signature":
        top = candidates[0]
        notes.append(f"the only line that names {top.code} is a warning that an optional import failed "
                     f"('{top.evidence[0].text if top.evidence else ''}'): the program goes on without that module, so "
                     "it is a hint (low confidence), not the cause of a failure; if something else failed, look "
                     "for its own error")
    elif candidates and candidates[0].confidence == "inferred":
        top = candidates[0]
        why = ", ".join(f"'{e.text.split(': ', 1)[-1]}'" for e in top.evidence if e.entry.startswith("clue:"))
        seen_as = (f"the symptom(s) {', '.join(top.explains)}" if top.explains else
                   "a line of a more generic cause (" + ", ".join(dict.fromkeys(
                       e.entry for e in top.evidence
                       if not e.entry.startswith("clue:") and not getattr(entries.get(e.entry), "said", False))) + ")")
        notes.append(f"no line names the cause: {top.code} is inferred from {seen_as} and the log's "
                     f"context ({why}); run on the affected machine without --no-live (or `stackpeel check`) "
                     "to confirm it")
    elif candidates and candidates[0].kind == "symptom" \
            and any(r.startswith("combination:") for r in candidates[0].facts):
        top = candidates[0]
        ids = ", ".join(r.split(":", 1)[1] for r in top.facts if r.startswith("combination:"))
        notes.append(f"the versions the log prints match a known-bad combination that produces {top.code} ({ids}): "
                     "the cause is that pairing of versions; change one side of it")
    elif candidates and candidates[0].kind == "symptom":
        top = candidates[0]
        hinted = [c for c, _ in top.could_be_clues]
        how_sure = (f"the log's context points to {', '.join(hinted)}" if hinted else
                    "nothing in the log tells them apart")
        notes.append("the log shows symptoms only: the cause is one of the lower-layer codes listed under "
                     f"'could be' ({how_sure}); run on the affected machine without --no-live (or `stackpeel "
                     "check`) to tell which")
    if interrupted is not None:
        frames = exceptions[-1].frames if exceptions else ()
        if frames:
            notes.append(f"the interrupted run was in {frames[-1]} when it stopped: if it hung, "
                         "that is where it waited")
    if dropped and host is not None:
        notes.append(f"the log comes from {platform} ({', '.join(host[1])}): {', '.join(dropped)} cannot happen "
                     "there: no guess or base rate names it, and no symptom lists it as a possible cause")
    notes.extend(fact_notes)
    fingerprint = None
    guessed = all(c.basis in GUESS_BASES for c in candidates)
    if guessed and (parsed.other_errors or exceptions) and interrupted is None:
        fingerprint = error_fingerprint([e.text for e in unexplained] +
                                        [f"{x.type}: {x.message.splitlines()[0] if x.message else ''}"
                                         for x in exceptions])
        if not candidates:
            notes.append(f"no knowledge-base entry explains these {'lines' if parsed.suspect_only else 'errors'}; "
                         f"fingerprint {fingerprint} identifies them (the same failure elsewhere gets the same "
                         "fingerprint)")
    if parsed.translated:  # matched in English, shown as the log wrote them (the fingerprint stays English)
        candidates, unexplained = _as_written(candidates, unexplained, parsed.translated)
    return Explanation(
        source=source, lines=parsed.lines, bytes=parsed.bytes, candidates=tuple(candidates),
        exceptions=tuple(exceptions), n_exceptions=n_exc, unexplained=unexplained,
        n_unexplained=parsed.n_other_errors, suspect_only=parsed.suspect_only, n_warnings=parsed.n_warnings,
        streams=tuple(parsed.streams),
        notes=tuple(notes), fingerprint=fingerprint, facts=parsed.facts if parsed.facts else None,
        fact_findings=tuple(findings), interrupted=interrupted, worker_exception_line=worker_line,
    )


#: the exception Python raises where the user pressed Ctrl+C (SIGINT's default handler)
_INTERRUPT_TYPE = "KeyboardInterrupt"
#: an exit status that says Ctrl+C stopped the process: an IDE's "exit code 130 (interrupted by
#: signal 2: SIGINT)", Windows' STATUS_CONTROL_C_EXIT (0xC000013A, -1073741510, 3221225786)
_CTRL_C_RE = re.compile(r"interrupted by signal 2\b|STATUS_CONTROL_C_EXIT|0x[Cc]000013[Aa]\b|-1073741510\b|"
                        r"\b3221225786\b")


def _interruption(parsed: ParseResult, exceptions: Sequence[ExceptionInfo]) -> Optional[Evidence]:
    """The line of the KeyboardInterrupt that ended a run the user stopped, when it is the log's
    last exception and no error precedes it: every exception the log shows is one (a pool's
    workers each print theirs; a traceback chained to another error is that error's), and no
    error line besides their exception lines. None otherwise: a real error before the Ctrl+C
    (or an exception raised while handling it) is the failure to explain."""
    said = parsed.other_errors
    if not exceptions and parsed.suspect_only and said and parsed.n_other_errors == len(said) \
            and all(_CTRL_C_RE.search(ln.text) for ln in said):
        # no traceback, only the status a shell, an IDE or Windows reports for a Ctrl+C (the
        # lines that only may show a failure, parser.suspect_shape)
        return Evidence(said[-1].number, said[-1].text.strip(), "interrupted", said[-1].stream)
    if not exceptions or any((x.type or "").rsplit(".", 1)[-1] != _INTERRUPT_TYPE for x in exceptions):
        return None
    own = {x.line for x in exceptions}
    if parsed.n_other_errors > len(parsed.other_errors) or any(ln.number not in own for ln in parsed.other_errors):
        return None
    last = exceptions[-1]
    return Evidence(last.line, last.shown.rstrip(": "), "interrupted", last.stream)


def _as_written(candidates: Sequence[Candidate], unexplained: Tuple[Evidence, ...],
                translated: Mapping[int, str]) -> Tuple[List[Candidate], Tuple[Evidence, ...]]:
    """Evidence of a line read in English (:mod:`.translate`) or with a status number's name
    appended (:mod:`.numbers`) shows the line as the log wrote it again, without the
    per-process prefix the report prints from the stream (``[rank3]:``); clue evidence (a
    line with the clue named after it) is left as it is."""
    def ev(e: Evidence) -> Evidence:
        if e.line in translated and not e.entry.startswith("clue:"):
            return replace(e, text=split_prefix(translated[e.line])[1].strip())
        return e

    return ([replace(c, evidence=tuple(ev(e) for e in c.evidence)) for c in candidates],
            tuple(ev(e) for e in unexplained))


def _apply_facts(accs: Dict[str, _Acc], parsed: ParseResult, exceptions: Sequence[ExceptionInfo],
                 kb: KnowledgeBase, catalogue: Mapping[str, Any]
                 ) -> Tuple[List[Any], List[str], Optional[List[Candidate]]]:
    """Known-bad combinations and state facts of the log's facts (:mod:`.facts`): a finding of
    high or medium confidence names its code as a candidate (basis "combination" or "facts"),
    or, when a line already states that code, supports it; one of context confidence is only
    a note. Returns (findings, notes, the guesses from words computed to learn which layers an
    otherwise unexplained log fails in, or None)."""
    if not parsed.facts:
        return [], [], None
    from .facts import UNPLACED, context_note, evaluate

    evidenced = {c: ("root" if a.root else "symptom", _layer(a, catalogue)) for c, a in accs.items()}
    guesses: Optional[List[Candidate]] = None
    if not evidenced and (parsed.other_errors or exceptions):
        guesses = _guesses(parsed, exceptions, kb, catalogue)
        evidenced = {g.code: ("guess", g.layer) for g in guesses}
        if not evidenced:
            # the log fails (an error line, an exception) and no line, clue or word says in which
            # layer: a fact the log proves wrong on its own (a CPU-only torch beside an NVIDIA driver,
            # a known-bad combination it prints in full) is the likeliest cause on offer
            evidenced = {UNPLACED: ("unplaced", "")}
    entries = {e.id: c for c, a in accs.items() for e in a.entries}
    findings = evaluate(parsed.facts, evidenced, catalogue, entries)
    notes = []
    for f in findings:
        if f.confidence == "context":
            notes.append(context_note(f))
            continue
        acc = accs.get(f.code)
        evs = [Evidence(n, text, label) for n, text, label in f.evidence]
        if acc is not None and (acc.entries or acc.fact is not None):
            # a line states it, or a surer finding already made it a candidate: this one supports it
            acc.evidence.extend(evs)
            acc.rules.append(f.rule)
            acc.infers.extend(c for c in f.explains if c not in acc.infers)
            continue
        spec = catalogue.get(f.code)
        if acc is None:
            acc = accs[f.code] = _Acc(f.code, root=spec is not None and spec.kind == "root")
        acc.inferred = f.confidence != "high"
        acc.fact = f
        acc.rules.append(f.rule)
        acc.weight = max(acc.weight, 2 if f.confidence == "high" else 1)
        acc.evidence.extend(evs)
        acc.count = max(acc.count, 1)
        for c in f.explains:
            if c not in acc.infers:
                acc.infers.append(c)
        if not acc.root and spec is not None:
            acc.could_be.extend(c for c in spec.caused_by if c not in acc.could_be)
    return findings, notes, guesses


def _apply_prior(candidates: List[Candidate], kb: KnowledgeBase, catalogue: Mapping[str, Any],
                 platform: Optional[str] = None, dropped: Optional[List[str]] = None) -> List[Candidate]:
    """Base rates (:mod:`.priors`). Each symptom a signature named has its ``could_be`` ordered by
    how often the earlier threads in whose explanation it was a candidate established each cause,
    two threads at least (causes the log's clues point to stay first; ties keep the knowledge
    base's order). And for a log whose first candidate is a symptom nothing in the log narrows (no
    line names a cause, no clue points at one), when that symptom's prior is supported enough (or,
    where it names nothing, the ``order`` table: :func:`.priors.order_guess`), its cause comes first
    as a low-confidence guess with basis "prior", its evidence the symptom's lines. On a log that
    plainly comes from ``platform`` (:mod:`.host`), a cause that cannot happen there leaves every
    symptom's ``could_be`` and is never the base rate's guess (its code added to ``dropped``)."""
    from . import priors

    def out_of_place(code: str) -> bool:
        return _host.ruled_out(code, platform, kb)

    out = []
    for c in candidates:
        # a line that declares causes of its own is ordered by the threads that showed that line
        named = sorted({e.entry for e in c.evidence}) if c.own_causes else None
        counts = priors.order_counts(c.code, entries=named) if c.kind == "symptom" and c.basis == "signature" else {}
        if platform is not None and c.kind == "symptom" and any(map(out_of_place, c.could_be)):
            if dropped is not None:
                dropped.extend(x for x in c.could_be if out_of_place(x) and x not in dropped)
            kept = tuple(x for x in c.could_be if not out_of_place(x))
            c = replace(c, could_be=kept, own_causes=sum(1 for x in c.could_be[:c.own_causes] if x in kept),
                        could_be_clues=tuple(w for w in c.could_be_clues if w[0] in kept))
        if counts and c.could_be:
            clued = {code for code, _ in c.could_be_clues}
            # a cause one earlier thread established is no base rate: it keeps its place
            # a cause the log's clues point to comes first; then a signature's own causes stay
            # ahead of the code's general ones
            own = c.could_be[:c.own_causes]
            order = sorted(c.could_be, key=lambda code: (code not in clued, code not in own,
                                                          -max(counts.get(code, 0) - 1, 0)))
            c = replace(c, could_be=tuple(order))
        out.append(c)
    if not out or not priors.applies(out[0]):
        return out
    top = out[0]
    could_be = _line_could_be(top, kb, catalogue)
    p = priors.of(top.code)
    guess = p.cause_for(could_be, [e.entry for e in top.evidence]) if p is not None else None
    of = p.n if p is not None else 0
    if guess is None:
        wider = priors.order_guess(top.code, could_be)
        guess, of = (wider[:2], wider[2]) if wider else (None, 0)
    if guess is not None and out_of_place(guess[0]):
        # the base rate's cause cannot happen on the log's OS: no other cause takes its place
        if dropped is not None and guess[0] not in dropped:
            dropped.append(guess[0])
        guess = None
    if guess is None or guess[0] not in catalogue:
        return out
    code, k = guess
    spec = catalogue[code]
    kind = spec.kind if spec.kind in ("root", "symptom") else "root"
    rest = [c for c in out if c.code != code]
    cand = Candidate(
        code=code, layer=spec.layer, kind=kind, title=spec.title, evidence=top.evidence, count=top.count, weight=0,
        explanation=spec.meaning, fix=fix_text(spec), links=tuple(spec.links),
        explains=tuple(dict.fromkeys([top.code, *top.explains])),
        could_be=deepest_first(spec.caused_by, catalogue) if kind == "symptom" else (),
        check=kb.checks.get(code), confidence="low", basis=PRIOR_BASIS, prior=(top.code, k, of),
    )
    return [cand, *rest]


def _line_could_be(top: Candidate, kb: KnowledgeBase, catalogue: Mapping[str, Any]) -> Tuple[str, ...]:
    """The causes a base rate may name for the symptom ``top``: its ``could_be``, narrowed to what its
    own lines say they can come from when one of its signatures on them declares a ``could_be`` of its
    own (NCCL's ``unhandled cuda error`` is a failed CUDA call: the /dev/shm size that most
    ``unhandled system error`` threads established is no cause of it, so the rate counted over every
    NCCL failure does not name it); the symptom's whole ``could_be`` when none does. A signature
    that declares none has the symptom's ``caused_by`` (knowledge loading), which narrows nothing."""
    spec = catalogue.get(top.code)
    general = set(getattr(spec, "caused_by", ()) or ())
    declared: Set[str] = set()
    for ev in top.evidence:
        try:
            entries = [kb.by_id(ev.entry)]
        except KeyError:
            continue  # a clue, a fact or a word: no signature
        # the symptom's other signatures on the same line (the evidence keeps one per line)
        entries += [e for e in kb.match_line(ev.text) if top.code in e.codes]
        for e in entries:
            if e.could_be and set(e.could_be) != general:
                declared.update(e.could_be)
    return tuple(c for c in top.could_be if c in declared) if declared else top.could_be


def _guesses(parsed: ParseResult, exceptions: Sequence[ExceptionInfo], kb: KnowledgeBase,
              catalogue: Mapping[str, Any]) -> List[Candidate]:
    """Candidates guessed from the words of the error lines no signature explains
    (:mod:`.vocabulary`): confidence "low", basis "vocabulary", evidence the lines used."""
    from . import vocabulary
    from ..knowledge import KnowledgeError

    # the words of the stack are near the start of a message: a kept line is read up to
    # vocabulary.TEXT_CHARS (40 lines of 16 KB of adversarial text took 0.7 s, now 0.1 s)
    # an exit status that names no cause ("exited with code 1") gives no words (numbers.bare_status)
    texts: List[Tuple[int, str, str, float]] = [(ln.number, text.strip()[:vocabulary.TEXT_CHARS], ln.stream, 1.0)
                                                for ln in parsed.other_errors
                                                for text in [_numbers.bare_status(ln.text)] if text is not None]
    for x in exceptions:
        if x.codes:
            continue
        head = x.message.splitlines()[0] if x.message else ""
        texts.append((x.line, f"{x.type or 'Traceback'}: {head}".strip()[:vocabulary.TEXT_CHARS], x.stream, 1.0))
        texts.extend((x.line, frame, x.stream, vocabulary.FRAME_FACTOR) for frame in x.frames)
    if not texts:
        return []
    try:
        vocab = vocabulary.load()
    except KnowledgeError:
        return []
    # context words: those that are clue literals were found anywhere in the log by the clue
    # pass; the others are looked for in what the scan kept (error lines, tracebacks, the
    # lines around hits, clue lines): a pass of their own over every chunk cost 12 % of the
    # scan of the 10 MB bench log
    found: Dict[str, Any] = dict(parsed.clues)
    kept = "\n".join([ln.text for ln in parsed.other_errors]
                      + [f"{tb.files_text}\n{tb.exc_type or ''}: {tb.message}" for tb in parsed.tracebacks]
                      + [t for h in parsed.hits for t in (h.context,)]
                      + [text for seen in parsed.clues.values() for _, text in seen])
    for word in vocab.context_words:
        if word not in found and word in kept:
            found[word] = [(0, "")]
    out = []
    for g in vocabulary.guess(texts, found, kb.clues, vocab, known=catalogue):
        spec = catalogue[g.code]
        ev = tuple(Evidence(n, text[:2000], f"vocabulary:{','.join(w for w, _ in g.words)}", stream)
                   for n, text, stream in g.lines[:EVIDENCE_PER_CANDIDATE])
        kind = spec.kind if spec.kind in ("root", "symptom") else "root"
        out.append(Candidate(
            code=g.code, layer=spec.layer, kind=kind, title=spec.title, evidence=ev, count=len(g.lines), weight=0,
            explanation=spec.meaning, fix=fix_text(spec), links=tuple(spec.links),
            could_be=deepest_first(spec.caused_by, catalogue) if kind == "symptom" else (),
            check=kb.checks.get(g.code), confidence="low", basis="vocabulary", words=g.words, context=g.context,
        ))
    return out


def _similar_guesses(parsed: ParseResult, exceptions: Sequence[ExceptionInfo], kb: KnowledgeBase,
                     catalogue: Mapping[str, Any]) -> List[Candidate]:
    """Candidates for error lines that neither a signature nor a word explains: the codes of
    the training threads whose error lines they resemble most (:mod:`.similar`); confidence
    "low", basis "similar", evidence the error lines, the threads in ``resembles``."""
    from . import similar

    if not (parsed.other_errors or exceptions):
        return []
    index = similar.load()
    if index is None:
        return []
    lines = [Evidence(ln.number, ln.text.strip()[:2000], "similar", ln.stream) for ln in parsed.other_errors]
    lines += [Evidence(x.line, f"{x.type or 'Traceback'}: {x.message.splitlines()[0] if x.message else ''}"[:2000],
                       "similar", x.stream) for x in exceptions]
    lines.sort(key=lambda e: e.line)
    out = []
    for g in index.nearest(similar.material(parsed), known=catalogue):
        spec = catalogue[g.code]
        kind = spec.kind if spec.kind in ("root", "symptom") else "root"
        out.append(Candidate(
            code=g.code, layer=spec.layer, kind=kind, title=spec.title, evidence=tuple(lines[-EVIDENCE_PER_CANDIDATE:]),
            count=len(lines), weight=0, explanation=spec.meaning, fix=fix_text(spec),
            links=tuple(dict.fromkeys([*(u for u, _ in g.resembles), *spec.links])),
            could_be=deepest_first(spec.caused_by, catalogue) if kind == "symptom" else (),
            check=kb.checks.get(g.code), confidence="low", basis="similar", resembles=g.resembles,
        ))
    return out


#: the word that ties an outcome to its cause in a user's sentence
_GIVES_CAUSE_RE = re.compile(r"\b(?:because|due to|caused by)\b", re.IGNORECASE)


def _gives_cause(e: Entry, text: str) -> bool:
    """Whether a user's sentence gives ``e``'s statement as the cause of what it reports before
    it: "the gated DeltaNet layers ran on the fp32 torch chunk loop because flash-linear-attention
    was not installed" (transformers#48718) reports a problem and its cause, where "flash-attn is
    not installed" alone is a fact of the machine. The statement must open the clause that the
    word starts ("I installed the CPU version because the docs build needs it" gives no cause)."""
    m = _GIVES_CAUSE_RE.search(text)
    if m is None or m.start() < 12:
        return False
    found = e.search(text[m.start():])
    return found is not None and found.start() <= len(m.group(0)) + 24


def _requirements_met(parsed: ParseResult, entries: Mapping[str, Entry]) -> ParseResult:
    """``parsed`` without the hits of entries whose ``requires`` fact the log does not show (not
    on the lines around the hit, not on a line the scan kept (host.kept_text), not among the
    facts it states, no GPU within its capability bound) or whose ``unless`` fact it shows.
    Unchanged (the same object) when no hit is dropped."""
    gated = [h for h in parsed.hits for e in [entries.get(h.entry)]
             if e is not None and (e.requires is not None or e.unless is not None)]
    if not gated:
        return parsed
    kept = _host.kept_text(parsed)
    dropped = set()
    for h in gated:
        e, near = entries[h.entry], f"{h.line.text}\n{h.context}"
        if (e.requires is not None and not e.requires.holds(near, kept, parsed.facts)) \
                or (e.unless is not None and e.unless.holds(near, kept, parsed.facts)):
            dropped.add(id(h))
    if not dropped:
        return parsed
    return replace(parsed, hits=[h for h in parsed.hits if id(h) not in dropped])


def _refined_copies(parsed: ParseResult, entries: Mapping[str, Entry]) -> Dict[Tuple[str, str], Tuple[str, ...]]:
    """The same failure line printed more than once (an issue's title repeating its body's error
    line, a summary repeating the log's) is one failure: where the lines around one copy refine
    it and those around another do not, the copy with that context carries the evidence (apex#1051:
    the title's copy of torch's 'no kernel image' read alone as torch's build, the body's copy
    beside ``export TORCH_CUDA_ARCH_LIST="7.5"`` as an extension built without the GPU). By
    (entry, the text its pattern matched): the one refined reading the copies' own lines give,
    where they give exactly one (two copies refined differently stay as they are)."""
    seen: Dict[Tuple[str, str], Set[Tuple[str, ...]]] = {}
    for hit in parsed.hits:
        e = entries.get(hit.entry)
        if e is None or not e.refine:
            continue
        codes = _own_reading(e, hit.context)
        m = e.search(hit.line.text) if codes is not None else None
        if m is not None:
            seen.setdefault((e.id, m.group(0)), set()).add(codes)
    return {key: codes for key, found in seen.items() if len(found) == 1
            for codes in found if codes != entries[key[0]].codes}


def _own_reading(e: Entry, context: str) -> Optional[Tuple[str, ...]]:
    """The codes the first refinement that matches the lines around a hit gives, None when none
    does (even one that gives the entry's own codes is a reading)."""
    for rule in e.refine:
        if rule.context.search(context):
            return rule.codes
    return None


def _refined(e: Entry, context: str, clue_lines: Sequence[Tuple[int, str]], kb: KnowledgeBase,
             kept: Sequence[Tuple[int, str]] = ()) -> Tuple[Tuple[str, ...], Optional[Evidence]]:
    """The codes a hit stands for: a refinement reads the lines around the hit; one whose code has
    clues (the code of a place the log runs in: a Jetson, WSL, a container; or a fact that names
    the narrower cause of a generic line: a kernel update, Secure Boot) also reads the lines of
    the log that hold clue literals, wherever they are. The rules are read in their order, each
    on the lines around the hit and then on the clue lines: the first that matches decides, so an
    entry puts a narrower rule first (a container started with bare `--device` flags, read from
    its `docker run` line, before the prebuilt program's neighbours). A ``local`` rule reads only
    the lines around the hit (a setting a log may print anywhere). The second value is the clue
    line that decided (as evidence), None when the line's own context did. A rule with
    ``far_unless`` applies only in a log none of whose kept lines (``kept``) matches that regex,
    and there it reads every kept line too (a far line that decides is evidence, as a clue line)."""
    if not clue_lines and not any(r.far_unless is not None for r in e.refine):
        return e.codes_for(context), None
    for rule in e.refine:
        if rule.far_unless is not None:
            if any(rule.far_unless.search(text) for _, text in kept):
                continue
            if rule.context.search(context):
                return rule.codes, None
            for line, text in kept:
                m = rule.context.search(text)
                if m:
                    return rule.codes, Evidence(line, f"{text.strip()[:200]} [clue: {m.group(0)[:60]}]",
                                                f"clue:{m.group(0)[:60]}")
            continue
        if rule.context.search(context):
            return rule.codes, None
        if rule.local or rule.codes == e.codes or not any(kb.clues.get(c) for c in rule.codes):
            continue
        for line, text in clue_lines:
            m = rule.context.search(text)
            if m:
                return rule.codes, Evidence(line, f"{text[:200]} [clue: {m.group(0)[:60]}]", f"clue:{m.group(0)[:60]}")
    return e.codes, None


def _clue_hits(code: str, parsed: ParseResult, kb: KnowledgeBase, skip: Sequence[int] = (),
               rivals: Sequence[str] = ()) -> List[Tuple[str, Tuple[int, str]]]:
    """The clues of ``code`` the log holds (with the first line that holds each). A literal
    does not count on a line where each of its occurrences is glued, inside a longer clue of a
    rival cause (another cause of the same symptom), to a letter or digit: "docker"
    (nccl-shm-too-small) inside NCCL's interface list "[1]docker0:" is that interface's name
    (nccl-socket-ifname-wrong's clue ``]docker0:``), not a container. "RTX 40" inside "RTX 4090"
    of a cause of another symptom still counts."""
    own = set(kb.clues.get(code, ()))
    theirs = {m for r in rivals if r != code for m in kb.clues.get(r, ())} - own
    out = []
    for lit in kb.clues.get(code, ()):
        longer = [m for m in parsed.clues if len(m) > len(lit) and lit in m and m in theirs]
        where = [w for w in parsed.clues.get(lit, ()) if w[0] not in skip
                 and not (longer and _glued_inside(lit, w[1], longer))]
        if where:
            out.append((lit, where[0]))
    return out


def _glued_inside(lit: str, text: str, longer: Sequence[str]) -> bool:
    """Whether every occurrence of ``lit`` in ``text`` lies inside an occurrence of one of the
    ``longer`` literals with a letter or digit right next to it there."""
    spans = [(j, j + len(m)) for m in longer for j in _occurrences(m, text)]
    if not spans:
        return False
    for i in _occurrences(lit, text):
        end = i + len(lit)
        glued = any(a <= i and end <= b and ((i > a and text[i - 1].isalnum() and lit[0].isalnum()) or
                                             (end < b and text[end].isalnum() and lit[-1].isalnum()))
                    for a, b in spans)
        if not glued:
            return False
    return True


def _occurrences(lit: str, text: str) -> List[int]:
    out, i = [], text.find(lit)
    while i >= 0 and len(out) < 20:
        out.append(i)
        i = text.find(lit, i + 1)
    return out


def _infer(accs: Dict[str, _Acc], parsed: ParseResult, kb: KnowledgeBase, catalogue: Mapping[str, Any]) -> None:
    """Context decides among the causes a symptom can have.

    Every candidate's ``could_be`` is reordered by how many of each cause's clues the log
    holds (stable: the knowledge base's order breaks ties). A symptom that no evidenced
    root explains gets its best-supported cause added as an *inferred* candidate, whose
    evidence is the symptom's line and the lines that hold the clues."""
    if not parsed.clues:
        return
    rivals: Dict[str, List[str]] = {}
    for acc in accs.values():
        for c in acc.could_be:
            rivals.setdefault(c, []).extend(acc.could_be)
    support = {c: _clue_hits(c, parsed, kb, rivals=rivals[c]) for c in rivals}
    for acc in accs.values():
        acc.could_be.sort(key=lambda c: -len(support.get(c, ())))
    named = {c for c, a in accs.items() if a.root}
    for code, acc in list(accs.items()):
        if acc.root or acc.inferred or not acc.could_be or any(c in named for c in acc.could_be):
            continue
        best = acc.could_be[0]
        hits = support.get(best, [])
        if not hits or best not in catalogue:
            continue
        inf = accs.get(best)
        if inf is None:
            inf = accs[best] = _Acc(best, root=True, inferred=True)
        if code not in inf.infers:
            inf.infers.append(code)
        if acc.evidence:
            ev = min(acc.evidence, key=lambda e: e.line)
            inf.evidence.append(Evidence(ev.line, ev.text, f"symptom:{code}", ev.stream))
        for lit, (line, text) in hits:
            inf.evidence.append(Evidence(line, f"{text[:200]} [clue: {lit}]", f"clue:{lit}"))
        inf.count = max(inf.count, 1)


_FP_HEX = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b")
_FP_NUM = re.compile(r"\d+")
_FP_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/](?:[^\s'\"\\/:]+[\\/])+")


def error_fingerprint(lines: Sequence[str]) -> str:
    """A short stable id for a set of error lines: numbers, addresses and directories are
    blanked and the order does not matter, so the same failure on another machine, at
    another time or in another rank gets the same id."""
    norm = set()
    for line in lines:
        t = _FP_PATH.sub("/", line.strip())
        t = _FP_HEX.sub("H", t)
        t = _FP_NUM.sub("N", t)
        if t:
            norm.add(t[:200])
    return hashlib.sha1("\n".join(sorted(norm)).encode("utf-8", "replace")).hexdigest()[:12]


def _layer(acc: _Acc, catalogue: Mapping[str, Any]) -> str:
    return code_layer(acc.code, catalogue, acc.entries[0].layer if acc.entries else "")


def _pick_evidence(evidence: List[Evidence]) -> Tuple[Evidence, ...]:
    """Up to EVIDENCE_PER_CANDIDATE lines, one per distinct text first, in line order; the lines
    a signature matched before the lines of versions that support them (``combination:``,
    ``facts:``), so a log's own error line is never pushed out by its pip list."""
    seen: Dict[str, Evidence] = {}
    for ev in sorted(evidence, key=lambda e: (e.entry.startswith(("combination:", "facts:")), e.line)):
        seen.setdefault(ev.text, ev)
    picked = list(seen.values())[:EVIDENCE_PER_CANDIDATE]
    return tuple(sorted(picked, key=lambda e: e.line))


def with_live(expl: Explanation, verdicts: Mapping[str, LiveCheck], summary: LiveSummary,
              extra: Sequence[Candidate] = ()) -> Explanation:
    """A copy of ``expl`` with live verdicts attached and the ranking updated:
    confirmed candidates first (among them, causes that explain other candidates before
    the symptoms they explain), ruled-out ones last, the rest in their order."""
    cands = [replace(c, live=verdicts.get(c.code, c.live)) for c in expl.candidates]
    cands.extend(extra)
    confirmed = {c.code for c in cands if c.live and c.live.verdict == "confirmed"}

    def key(ic: Tuple[int, Candidate]) -> Tuple[int, int, int]:
        i, c = ic
        v = c.live.verdict if c.live else ""
        rank = {"confirmed": 0, "ruled-out": 2}.get(v, 1)
        # a confirmed symptom gives way to a confirmed cause that explains it
        explained = rank == 0 and (c.kind == "symptom" or any(
            c.code in o.explains for o in cands if o.code in confirmed and o.code != c.code))
        return (rank, 1 if explained else 0, i)

    ordered = [c for _, c in sorted(enumerate(cands), key=key)]
    return replace(expl, candidates=tuple(ordered), live=summary)
