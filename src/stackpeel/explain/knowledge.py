"""The log side of the knowledge base: ``stackpeel explain``'s view of it.

Every finding code's log signatures (``[[code.log]]`` in ``stackpeel/knowledge/*.toml``)
become :class:`Entry` objects here, with the code's own meaning and fix (one wording per
code). This module compiles the regexes once:

* one regex per pattern, searched in single log lines (``re.MULTILINE`` so ``$`` also
  works inside a multi-line exception text handed to :func:`match_codes`);
* one *gate* regex, the alternation of every pattern plus the structural markers the
  parser needs, run once per log line: a line that misses the gate costs one search.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Pattern, Sequence, Tuple

from .. import combinations as _combinations
from .. import knowledge as _knowledge
from ..knowledge import KnowledgeError

try:  # the regex parser, to find the literal every pattern needs
    import re._parser as _sre_parse  # type: ignore[import-not-found]  # 3.11+
    import re._constants as _sre_c  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - 3.9/3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

#: Layers from the bottom of the stack to the top (the order of ``stackpeel list``);
#: "deepest first" sorts by this rank.
LAYER_ORDER: Tuple[str, ...] = _knowledge.LAYERS

KINDS = _knowledge.KINDS


#: shortest literal a pattern must contain (the scanner's prefilter looks for it)
MIN_NEEDLE = 4


def needles_of(pattern: str) -> List[str]:
    """Literal strings, one of which every match of ``pattern`` contains.

    The candidates: each run of the pattern's top-level sequence made of literal characters and
    groups of literal alternatives (``(?:the|my) (?:GPU|gpu) is `` gives ``the GPU is ``,
    ``the gpu is ``, ``my GPU is ``, ``my gpu is ``; at most :data:`MAX_NEEDLE_SET` strings, else
    the part of the run that stays within it). The chosen set is the one whose weakest string is
    longest, then rarest by :data:`_CHAR_FREQ`: a needle that is a common word (`` is ``) makes the scanner
    run every signature on every line that holds it (``tests/test_explain_needles.py`` keeps
    them rare). A top-level alternation gives one set per branch. Raises :class:`KnowledgeError`
    when a branch has no literal of MIN_NEEDLE chars.
    """
    parsed = _sre_parse.parse(pattern)
    items = list(parsed)
    if len(items) == 1 and items[0][0] is _sre_c.BRANCH:
        out: List[str] = []
        for branch in items[0][1][1]:
            out.extend(_needles_seq(list(branch), pattern))
        return out
    return _needles_seq(items, pattern)


#: strings a needle set formed from a pattern's alternatives may hold at most
MAX_NEEDLE_SET = 16


def _info(text: str) -> float:
    """How rare ``text`` is in a log, by :data:`_CHAR_FREQ` (the sum of each character's -log p)."""
    return sum(-math.log(_CHAR_FREQ.get(ch, 2) / 1000.0) for ch in text)


def _plain_group(av) -> bool:
    """A group without flags that change how its literals match (``(?i:...)``)."""
    return not (av[1] & _sre_c.SRE_FLAG_IGNORECASE)


def _literal_alternatives(seq) -> Optional[List[str]]:
    """The strings a sequence matches when it is literals and groups of literal alternatives
    only (``the|my``, ``GPU``), else None."""
    out = [""]
    for op, av in seq:
        if op is _sre_c.LITERAL:
            out = [o + chr(av) for o in out]
        elif op is _sre_c.BRANCH:
            alts = _branch_strings(av[1])
            if alts is None:
                return None
            out = [o + x for o in out for x in alts]
        elif op is _sre_c.SUBPATTERN and _plain_group(av):
            sub = _literal_alternatives(av[-1])
            if sub is None:
                return None
            out = [o + x for o in out for x in sub]
        else:
            return None
        if len(out) > MAX_NEEDLE_SET:
            return None
    return out


def _branch_strings(branches) -> Optional[List[str]]:
    """The strings a group of alternatives matches when every branch is literal, else None."""
    alts: List[str] = []
    for branch in branches:
        sub = _literal_alternatives(branch)
        if sub is None:
            return None
        alts.extend(sub)
    return alts if len(alts) <= MAX_NEEDLE_SET else None


def _candidates(items) -> List[List[str]]:
    """Needle sets of a sequence (see :func:`needles_of`)."""
    found: List[List[str]] = []
    run: List[List[str]] = []  # segments, each the strings one of which the text holds there

    def close() -> None:
        for i in range(len(run)):
            prod = [""]
            for seg in run[i:]:
                nxt = [a + b for a in prod for b in seg]
                if len(nxt) > MAX_NEEDLE_SET:
                    break
                prod = nxt
            found.append(prod)
        run.clear()

    def alternatives(branches) -> None:
        """A group of alternatives (``(?:a|b)``, which the parser leaves as a bare BRANCH): when
        every branch is literal, it extends the run; otherwise it ends it."""
        alts = _branch_strings(branches)
        if alts is None:
            close()
        else:
            run.append(alts)

    def walk(seq) -> None:
        for op, av in seq:
            if op is _sre_c.LITERAL:
                if run and len(run[-1]) == 1:
                    run[-1] = [run[-1][0] + chr(av)]
                else:
                    run.append([chr(av)])
            elif op is _sre_c.BRANCH:
                alternatives(av[1])
            elif op is _sre_c.SUBPATTERN and _plain_group(av):
                walk(list(av[-1]))
            else:
                close()

    walk(items)
    close()
    return found


def _best(cands: Sequence[List[str]]) -> Optional[List[str]]:
    """The set whose weakest string is longest, then rarest, then smallest, among those whose
    every string has MIN_NEEDLE characters (for single literals: the longest, as before)."""
    ok = [list(dict.fromkeys(c)) for c in cands if c and min(len(x) for x in c) >= MIN_NEEDLE]
    return max(ok, key=lambda c: (min(len(x) for x in c), min(_info(x) for x in c), -len(c)), default=None)


def _needles_seq(items, pattern: str) -> List[str]:
    best = _best(_candidates(items))
    if best is None:
        raise KnowledgeError(f"pattern {pattern!r} has no literal of {MIN_NEEDLE}+ characters to search for")
    return best


def layer_rank(layer: str) -> int:
    try:
        return LAYER_ORDER.index(layer)
    except ValueError:
        return len(LAYER_ORDER)


@dataclass(frozen=True)
class Refine:
    context: Pattern[str]
    codes: Tuple[str, ...]
    #: read only on the lines around the hit, never on the log's clue lines
    local: bool = False
    #: also read on every line the scan kept, in a log none of whose kept lines matches this
    far_unless: Optional[Pattern[str]] = None


@dataclass(frozen=True)
class Requires:
    """A fact of the log (knowledge ``requires``, and ``unless``, which must not hold): ``context``
    matches the lines around the hit or a kept line, or the log states one of ``facts``; and, with
    ``gpu_cc`` (a capability bound), a GPU the log names has a capability within it. Each part
    given must hold."""

    context: Optional[Pattern[str]]
    facts: Tuple[str, ...] = ()
    gpu_cc: Optional[Any] = None  # combinations.Specifier

    def holds(self, context: str, kept: str, facts: Any) -> bool:
        if self.context is not None or self.facts:
            if not (self.shown(context, kept) or self._stated(facts)):
                return False
        return self.gpu_cc is None or self.capability(facts) is not None

    def shown(self, context: str, kept: str) -> bool:
        return self.context is not None and bool(self.context.search(context) or (kept and self.context.search(kept)))

    def _stated(self, facts: Any) -> bool:
        if not facts:
            return False
        versions = getattr(facts, "versions", None) or {}
        other = getattr(facts, "other", None) or {}
        return any(bool(getattr(facts, "gpus", ())) if f == "gpus" else (f in versions or f in other)
                   for f in self.facts)

    def capability(self, facts: Any) -> Optional[str]:
        """The capability of a GPU the log names that meets ``gpu_cc`` (None: none does)."""
        if self.gpu_cc is None or not facts:
            return None
        ccs = (getattr(facts, "versions", None) or {}).get("gpu_cc") or ()
        for cc in ([ccs] if isinstance(ccs, str) else ccs):
            if cc and self.gpu_cc.contains(str(cc)):
                return str(cc)
        return None


def _requires(req: Any, where: str) -> Optional[Requires]:
    """The explain-side :class:`Requires` of a knowledge ``Requirement`` (None for None)."""
    if req is None:
        return None
    return Requires(_compile(req.context, where) if req.context else None, req.facts,
                    _combinations.parse_specifier(req.gpu_cc) if req.gpu_cc else None)


@dataclass(frozen=True)
class Entry:
    id: str
    patterns: Tuple[Pattern[str], ...]
    layer: str
    codes: Tuple[str, ...]
    kind: str
    weight: int
    explanation: str
    fix: str
    links: Tuple[str, ...] = ()
    could_be: Tuple[str, ...] = ()
    refine: Tuple[Refine, ...] = ()
    order: int = 0
    #: literals, one of which any matching line contains (from the patterns)
    needles: Tuple[str, ...] = ()
    #: a catch-all: counts only when no other entry matched the log
    fallback: bool = False
    #: a user's sentence stating the cause: ranks after the roots programs' lines state
    said: bool = False
    #: a program's warning: counts only in a log that shows a failure on another line
    warning: bool = False
    #: reads a bare status number's name (knowledge ``number``): counts only where no entry matched
    #: another line of the log, fallback ones included
    number: bool = False
    #: a fact the log must also show for the entry to count (None: none)
    requires: Optional[Requires] = None
    #: a fact that, where the log shows it, drops the entry's hits (knowledge ``unless``)
    unless: Optional[Requires] = None

    @property
    def is_root(self) -> bool:
        return self.kind == "root"

    def search(self, line: str) -> Optional["re.Match[str]"]:
        if not any(n in line for n in self.needles):
            return None
        for pat in self.patterns:
            m = pat.search(line)
            if m:
                return None if self.said and not stated(line, m.start(), m.end(), told=not self.is_root) else m
        return None

    def codes_for(self, context: str) -> Tuple[str, ...]:
        """The codes this entry stands for, given the text around the matching line."""
        for rule in self.refine:
            if rule.far_unless is not None and rule.far_unless.search(context):
                continue  # the rule holds only where nothing the log kept matches far_unless
            if rule.context.search(context):
                return rule.codes
        return self.codes

    def all_codes(self) -> Tuple[str, ...]:
        seen: Dict[str, None] = {}
        for c in self.codes + self.could_be + tuple(c for r in self.refine for c in r.codes):
            seen.setdefault(c, None)
        return tuple(seen)

    def sort_key(self) -> Tuple[int, int, int]:
        """Deepest first: root causes before symptoms, then by layer, then KB order."""
        return (0 if self.is_root else 1, layer_rank(self.layer), self.order)


#: Literals the parser needs to see even when no entry matches (tracebacks, warnings,
#: compiler and NCCL errors), so that they reach the "unexplained errors" sample.
STRUCTURAL = (
    "Traceback (most recent call last)",
    "During handling of the above exception",
    "The above exception was the direct cause",
    "Warning: ",
    "error",
    "Error",
    "ERROR",
    "Exception",
    "NCCL WARN",
    "fatal",
    "FAILED",
    "Killed",
    "Segmentation fault",
    # a traceback's frame line: one with no "Traceback" line above it opens a truncated traceback
    '", line ',
)
#: Literals of the other error shapes (parser.error_shape: a step that failed, a missing file,
#: a signal, an exit status, a timeout, a hang, out of memory ...), so that such a line
#: reaches the error-line detector even when no entry names it. Cut like the needles (rare
#: start); "hang" also flags "change": such a line costs one more search, nothing else.
ERROR_WORDS = (
    "failed", "Failed", "fails", "Fails", "not found", "No such file", "No such device", "annot ", "nable to",
    "unexpectedly", "exit code", "exit status", "exitcode", "exited with", "signal", "Signal", "SIGSEGV",
    "SIGBUS", "SIGABRT", "SIGKILL", "SIGILL", "SIGFPE", "Aborted", "Illegal instruction", "core dumped",
    "timed out", "imeout", "Watchdog", "eadline exceeded", "ut of memory", "OOM", "oom-kill", "CUDA_ERROR_",
    "STATUS_", "EH_EXCEPTION_NUMBER", "undefined symbol", "Errno", "errno", "hang", "hung", "stuck", "freez", "frozen",
    "deadlock",
    "non-zero exit", "ould not ", "No matching distribution",
    # tools' own failure lines (parser.HARD_ERROR_RE "tool"), issue prose, other languages
    "E: ", "No solution found", "ResolutionImpossible", "libmamba", "BackOff", "ErrImagePull",
    "nsufficient nvidia", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "DEADLINE", "TIMEOUT",
    "CANCELLED", "DUE TO", "step aborted", "died", "Root Cause", "panic", "goroutine", "terminate called",
    "what():", "Configuring incomplete", "No rule to make", "not recognized as", "zsh: ", "Terminated", "Hangup",
    "to break", "breaks ", "broke", ".exc.", ".exceptions.",
    "refused", "crashe", "segfaults", "n't work", "not work", "stopped working",
    # parser.SOFT_ERROR_RE "cpu" and "slain": users' words for a run on the CPU, a killed process
    # (few needles: each one more made the 10 MB bench log's scan slower)
    "the GPU", "CPU instead", "my GPU", "version of", "CPU version", "cpu version", "to the cpu", "to the CPU",
    "without the CUDA", "without CUDA", "CPU\u7248\u672c", "killed",
    # parser.WORD_ERROR_RE beyond "error"/"Error"/"ERROR"/"fatal" (STRUCTURAL) and "annot ": the
    # upper-case spellings and "Fatal". Not "annot" alone nor "ailure": each made the scan of the
    # 10 MB bench log 2-3 % slower (their first characters), for a "cannot" at the end of a line
    # or a "failure" on a line with no other error word
    "CANNOT", "FATAL", "Fatal",
    # a launcher's "Webserver Crashed" (text-generation-inference; parser.SOFT_ERROR_RE "exited")
    "Crashed", "CRASHED",
    # ggml's "  current device: N, in function F at FILE:LINE" (parser.HARD_ERROR_RE "cuda")
    "current device: ",
    # a shell's "bash: ./train.sh: Permission denied" (parser.HARD_ERROR_RE "shell"; the shape,
    # not these words, decides)
    "Permission denied", "permission denied: ",
    # "Exit code: 0xC0000005", Kubernetes' "Exit Code: 137" (parser.HARD_ERROR_RE "exit")
    "Exit code", "Exit Code", "Exit status",
    # "Can't load ...", "couldn't find ..." (parser.SOFT_ERROR_RE "missing", contracted spellings)
    "an't ", "an\u2019t ", "AN'T ", "an not ", "ouldn't ", "ouldn\u2019t ",
    # a job's fatal signal alone on its line and the kernel's record of a stopped process
    # (parser.HARD_ERROR_RE "crash")
    "segfault at", "protection fault", "breakpoint trap", "limit exceeded", "Abort trap", "BPT trap",
    # glibc's heap and stack aborts, libstdc++'s pure virtual call (parser.HARD_ERROR_RE "crash")
    "free(): ", "malloc(): ", "munmap_chunk", "malloc_consolidate", "double free", "corrupted size",
    "corrupted double", "smashing detected", "overflow detected", "pure virtual",
    # absl's failed statuses (parser.SOFT_ERROR_RE "status")
    "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "PERMISSION_DENIED", "DEADLINE_EXCEEDED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "DATA_LOSS", "UNAUTHENTICATED", "INTERNAL: ", "NOT_FOUND: ", "UNAVAILABLE: ",
    # a sample's or a test's verdict, npm's and Compose's failures, an unhandled exception, the
    # bare "fail to" (parser.HARD_ERROR_RE "tool", SOFT_ERROR_RE "failed")
    "Result = FAIL", "FAIL: ", "npm ERR!", "npm error", "is invalid because", "nhandled exception",
    "nhandled Exception", "fail to ", "Fail to ", "FAIL to ",
    # strerror() texts ending a line (parser.SOFT_ERROR_RE "errno"), a shortage in words and
    # Apple's ld64, gdb's backtrace of an abort
    "not permitted", "Input/output error", "resource busy", "left on device", "Read-only file", "open files",
    "Broken pipe", "reset by peer", "Text file busy", "Invalid argument", "not supported", "Bad address",
    "No such process", "is unreachable", "route to host", "already in use", "quota exceeded", "Stale file",
    "not implemented", "list too long", "needs cleaning", "Value too large", "Protocol error", "connection abort",
    "is not connected", "Remote I/O", "cross-device", "temporarily unavailable", "Exec format", "device or address",
    "ot enough", "OT ENOUGH", "nsufficient ", "NSUFFICIENT ", "Undefined symbols", "abort (", "raise (",
    "pthread_kill", "marked dead", "Undefined symbol",
    # clean35 (issue 8: no error line answered silently): the lower- and mixed-case level tags
    # (parser.HARD_ERROR_RE "level"), unittest's verdict, Click's "Aborted!", Rust's stack overflow,
    # std::bad_alloc ("tool", "oom"); a panic, an uncaught exception, a web UI's toast, an HTTP
    # status, Go's lower-case strerror texts, a refusal, European words for an error
    # (SOFT_ERROR_RE "exited", "errno", "foreign"); "exception: ..." (HARD "lowered"); a segfault
    # and a named program's crash in words (SUSPECT_RE, COMPLAINT_RE)
    "[FAIL", "... FAIL", "Aborting", "Aborted!", "overflowed its stack", "bad_alloc", "panicked",
    "ncaught", "NCAUGHT", "nhandled", "NHANDLED", "xception:", "went wrong", "tatus code", "STATUS ", "HTTP ",
    "rror 4", "rror 5", "ERROR 4", "ERROR 5", "esponse code", "no such file", "ermission denied",
    "not permitted", "input/output error", "no space left", "read-only file", "too many open", "reset by peer",
    "invalid argument", "exec format", "resource busy", "ccess denied", "ccess is denied", "ccess Denied",
    # (French "\u00e9chec" is in FOREIGN_WORDS only: an ASCII "chec" here flagged every "checkpoint" and
    # "check" line of a training log, +21 % CPU on bench/explain_bench.py's log (perf35), and the
    # accented word makes its chunk non-ASCII, where the foreign gate runs)
    "denied: ", "Fehler", "ehlgeschlagen", "rreur", "Errore", "rrore", "Erro:", "segfault", "Segfault",
    "rashes", "rashed", "failing", "thrown", "raised", "StopAsyncIteration",
    # an issue's words (COMPLAINT_RE): "I can't install", "can't start", "aborts", "here is the
    # traceback", "exception when", "is broken"
    "I can", "I could", "we can", "nable to", "an't start", "annot run", "annot start", "aborts", "aborted",
    "traceback", "xception when", "xception while", "xception during", "broken",
    # a server's access log of a 5xx answer (parser.HARD_ERROR_RE "tool")
    'HTTP/1.1" 5', 'HTTP/1.0" 5', 'HTTP/2" 5', 'HTTP/2.0" 5',
    # tools42: the client's side of it: a status line, requests' repr, a proxy's page (parser.HARD_ERROR_RE "tool")
    "HTTP/1.1 5", "HTTP/1.0 5", "HTTP/2 5", "HTTP/2.0 5", "<Response [5", "Bad Gateway", "Gateway Time",
    "Service Unavailable",
    # systemd's unit status, Open MPI's signal report, Lua's traceback, GStreamer, a failing step
    # (parser.HARD_ERROR_RE "exit", "tool"; SOFT_ERROR_RE "failed")
    "Failing at address", "stack traceback:", "No such element", "ailing to", "Cuda error",
    "THCudaCheck",
    # tools40: pytest's "E       assert ...", asyncio's unretrieved task exception, the exit statuses of GNU
    # time, docker's classic builder, a Python child's repr and Code::Blocks, a crash in Windows' and
    # macOS's words, Slurm's job states and exit codes, runpy's missing module (parser.HARD_ERROR_RE)
    "E   ", "abnormally", "never retrieved", "on-zero ", "onzero ", "returncode", "rocess returned",
    "referenced memory", "Faulting ", "EXC_BAD_", "EXC_ARITHMETIC", "OUT_OF_ME+", "ExitCode=", ": No module named",
    "module specification",
    # tools41: systemd's status with its "code=" cut off, Neovim's :terminal record, systemd-coredump's
    # record, the short "ERR: "/"ERR! " tags and "[ERR]" (parser.HARD_ERROR_RE "exit", "crash", "level")
    "status=", "rocess exited", "dumped core", "ERR: ", "ERR! ", "ERR]",
)
#: "error", "reported an error", "failed" in Chinese, Japanese, Korean, Russian (parser's
#: "foreign" shape). Apart from ERROR_WORDS: a first character above U+00FF in the chunk gate
#: made the scan of an ASCII log 8 % slower; the scanner searches these only in a chunk that is
#: not ASCII (str.isascii, C speed), and every flagged line is checked with :attr:`line_gate`
FOREIGN_WORDS = ("\u9519\u8bef", "\u62a5\u9519", "\u5931\u8d25", "\u5931\u6557", "\u30a8\u30e9\u30fc",
                 "\uc624\ub958", "\u0448\u0438\u0431\u043a",
                 # bash's "Killed" in a zh_CN locale (strsignal(SIGKILL)): parser.HARD_ERROR_RE "killed"
                 "\u5df2\u6740\u6b7b",
                 # "cpu\u7248\u672c" (the CPU build, lower case as pip's "+cpu" spells it); the upper-case
                 # spelling is in ERROR_WORDS: parser.SOFT_ERROR_RE "cpu"
                 "cpu\u7248\u672c",
                 # Polish "B\u0142\u0105d", French "\u00e9chec", Spanish "fall\u00f3" (parser.SOFT_ERROR_RE "foreign")
                 "B\u0142\u0105d", "\u00e9chec", "\u00c9chec", "fall\u00f3")


@dataclass(frozen=True)
class KnowledgeBase:
    entries: Tuple[Entry, ...]
    #: finding code -> check id that confirms it live
    checks: Mapping[str, str] = field(default_factory=dict)
    #: explain-only code -> the check codes that confirm it live (the knowledge base's ``confirmed_by``)
    confirms: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)

    def check_of(self, code: str) -> Optional[str]:
        """The check that confirms ``code`` live: its own, or that of a code in its ``confirmed_by``."""
        for c in (code, *self.confirms.get(code, ())):
            if c in self.checks:
                return self.checks[c]
        return None
    version: int = 1
    #: finding code -> literal clues that make it likelier when a log shows only its symptoms
    clues: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    #: (host sign name, platform, its regex): what tells the OS a log ran on (``[host.NAME]``)
    hosts: Tuple[Tuple[str, str, Pattern[str]], ...] = ()
    #: finding code -> the operating systems it can happen on (``platforms``; absent: any)
    platforms: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)

    @functools.cached_property
    def clue_gate(self) -> Pattern[str]:
        """Finds the rare-character part of any clue literal (like :attr:`gate`, cut with
        :func:`rare_start`); :meth:`clues_at` then says which literals really are there."""
        return _literal_alternation([rare_start(c, CLUE_KEEP) for cs in self.clues.values() for c in cs])

    @functools.cached_property
    def _clue_index(self) -> Dict[str, Tuple[Tuple[str, str, int], ...]]:
        """What a :attr:`clue_gate` match stands for: the gate's trie stops at the shortest cut
        part that starts at a position, so each shortest part maps to every (part, literal,
        offset of the part in the literal) whose part begins with it, longest literal first."""
        parts: Dict[str, List[Tuple[str, str, int]]] = {}
        for lit in {c for cs in self.clues.values() for c in cs}:
            part = rare_start(lit, CLUE_KEEP)
            parts.setdefault(part, []).append((part, lit, len(lit) - len(part)))
        by_short: Dict[str, List[Tuple[str, str, int]]] = {}
        for part, items in parts.items():
            short = next(part[:j] for j in range(1, len(part) + 1) if part[:j] in parts)
            by_short.setdefault(short, []).extend(items)
        return {k: tuple(sorted(v, key=lambda t: len(t[1]), reverse=True)) for k, v in by_short.items()}

    def clue_hits(self, text: str) -> Iterator[Tuple[int, str]]:
        """(position, matched text) of every :attr:`clue_gate` hit in ``text``, overlapping ones
        too: searched again from one character past each hit, not ``finditer``, because a
        clue's part may start inside another's (``PU memory`` of ``Shared GPU memory`` starts
        inside the part ``GPU``: ``finditer`` never found that clue)."""
        search = self.clue_gate.search
        m = search(text)
        while m is not None:
            yield m.start(), m.group()
            m = search(text, m.start() + 1)

    def clue_literals(self, hit: str) -> Tuple[str, ...]:
        """Every clue literal a :attr:`clue_gate` match of ``hit`` may be part of."""
        return tuple(lit for _, lit, _ in self._clue_index.get(hit, ()))

    def clues_at(self, text: str, pos: int, hit: Optional[str] = None) -> List[str]:
        """The clue literals found by a :attr:`clue_gate` match at ``text[pos]`` (``hit``: the
        text it matched, when the caller has it)."""
        if hit is None:
            m = self.clue_gate.match(text, pos)
            hit = m.group() if m else ""
        return [lit for part, lit, off in self._clue_index.get(hit, ())
                if pos >= off and text.startswith(part, pos) and text.startswith(lit, pos - off)]

    @functools.cached_property
    def gate(self) -> Pattern[str]:
        """One search per log line: the alternation of every entry's needles and the
        structural literals. Plain literals keep Python's regex engine fast (a 10 MB
        log of noise in a fraction of a second); the full patterns run only on lines
        that pass."""
        base = [rare_start(n) for e in self.entries for n in e.needles] + list(STRUCTURAL)
        starts = frozenset(b[0] for b in base if b)
        return _literal_alternation(base + [rare_start_among(w, starts) for w in ERROR_WORDS])

    @functools.cached_property
    def foreign_gate(self) -> Pattern[str]:
        """:data:`FOREIGN_WORDS`: searched only in chunks that are not ASCII."""
        return _literal_alternation(FOREIGN_WORDS)

    @functools.cached_property
    def line_gate(self) -> Pattern[str]:
        """:attr:`gate` and :attr:`foreign_gate` in one: run on the lines either flagged."""
        return re.compile(f"{self.gate.pattern}|{self.foreign_gate.pattern}")

    @functools.cached_property
    def entry_gate(self) -> Pattern[str]:
        """Only the entries' needles (no structural markers)."""
        return _literal_alternation([rare_start(n) for e in self.entries for n in e.needles])

    def by_id(self, entry_id: str) -> Entry:
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise KeyError(entry_id)

    def referenced_codes(self) -> Tuple[str, ...]:
        seen: Dict[str, None] = {}
        for e in self.entries:
            for c in e.all_codes():
                seen.setdefault(c, None)
        for c in self.checks:
            seen.setdefault(c, None)
        return tuple(seen)

    def match_line(self, line: str) -> List[Entry]:
        """Entries whose patterns match ``line`` (in KB order). Only the entries one of whose
        needles the line holds are tried (:class:`_NeedleIndex`), not all of them."""
        return [e for i in self._needle_index.hits(line) for e in (self.entries[i],) if e.search(line)]

    @functools.cached_property
    def _needle_index(self) -> "_NeedleIndex":
        return _NeedleIndex({i: [rare_start(n) for n in e.needles] for i, e in enumerate(self.entries)},
                            self.entry_gate)

    @functools.cached_property
    def _folded_needles(self) -> Tuple[Tuple[Entry, Tuple[str, ...]], ...]:
        return tuple((e, tuple(dict.fromkeys(n.casefold() for n in e.needles))) for e in self.entries if e.needles)

    @functools.cached_property
    def _folded_index(self) -> "_NeedleIndex":
        """:attr:`_folded_needles` as a :class:`_NeedleIndex`: a substring test of each of
        about 1,500 folded needles took 0.16 s on a 16 kB error line (10 s of CPU on a megabyte
        of them); the trie finds the same entries in one pass."""
        by_entry = {i: needles for i, (_, needles) in enumerate(self._folded_needles)}
        return _NeedleIndex(by_entry, _literal_alternation([n for ns in by_entry.values() for n in ns]))

    def match_line_folded(self, line: str) -> List[Entry]:
        """Entries whose patterns match ``line`` whatever the letter case: for an error line no
        entry matches as written (a Go program's lower-case ``failed to initialize nvml: ...``,
        a message retyped by hand). Slower than :meth:`match_line`;
        the parser asks it only for error lines nothing matched, a bounded number per log."""
        low = line.casefold()
        folded = self._folded_needles
        return [e for i in self._folded_index.hits(low) for e in (folded[i][0],) if any(
                    m is not None and (not e.said or stated(line, m.start(), m.end(), told=not e.is_root))
                    for m in (_ignoring_case(p).search(line) for p in e.patterns))]


class _NeedleIndex:
    """Which entries' needles a line holds, found with the needles' trie regex
    (:attr:`KnowledgeBase.entry_gate`, already compiled for the gate) instead of a substring
    test per needle of every entry (about 1,500 on each line the gate lets through). Searched
    again from one character past each hit, the regex reports every position where a needle
    starts; the trie stops at the shortest needle that starts there, and the longer needles
    that begin with it are compared at that position. The result holds every entry one of
    whose needles the line holds, in KB order."""

    def __init__(self, needles_by_entry: Mapping[int, Sequence[str]], trie: Pattern[str]):
        keys: Dict[str, set] = {}
        for i, needles in needles_by_entry.items():
            for n in needles:
                keys.setdefault(n, set()).add(i)
        #: the shortest needle each needle starts with -> [(needle, entries)]
        self.longer: Dict[str, List[Tuple[str, Tuple[int, ...]]]] = {}
        for k, idx in keys.items():
            short = next(k[:j] for j in range(1, len(k) + 1) if k[:j] in keys)
            self.longer.setdefault(short, []).append((k, tuple(sorted(idx))))
        self.search = trie.search

    def hits(self, line: str) -> List[int]:
        found: set = set()
        m = self.search(line)
        while m is not None:
            at = m.start()
            for k, idx in self.longer[m.group()]:
                if line.startswith(k, at):
                    found.update(idx)
            m = self.search(line, at + 1)
        return sorted(found)


#: rough frequency of characters in ML logs (per mille); others count as 2. Used to cut
#: each needle down to a substring that starts with a rare character: the regex engine
#: then stops at far fewer positions (3x faster on a log of training noise).
_CHAR_FREQ: Dict[str, int] = {
    " ": 150, "e": 60, "t": 45, "a": 40, "o": 38, "i": 38, "n": 36, "s": 35, "r": 34, "l": 25, "d": 22, "c": 20,
    "u": 18, "m": 16, "p": 15, "h": 15, "f": 12, "g": 12, "b": 8, "y": 8, "w": 7, "v": 6, "k": 5, "x": 3, "q": 1,
    "j": 1, "z": 1, **{d: 30 for d in "0123456789"}, **{ch: 20 for ch in "=.:,-_/[]%"},
    **{ch: 5 for ch in "()'\"|<>"}, **{ch: 4 for ch in "ABCDHJKLMPQUVWXYZ"}, **{ch: 8 for ch in "EINOSRTAFG"},
}


#: clue literals are cut shorter than needles: the clue gate runs over every chunk, and a
#: few-character rare part keeps its trie small (4-6x faster on a 10 MB log); every gate
#: hit is then checked against the whole literal
CLUE_KEEP = 3


def rare_start(needle: str, keep: int = 6) -> str:
    """The suffix of ``needle`` (at least ``keep`` characters) starting with its rarest character."""
    if len(needle) <= keep:
        return needle
    best = min(range(len(needle) - keep + 1), key=lambda p: (_CHAR_FREQ.get(needle[p], 2), p))
    return needle[best:]


def rare_start_among(word: str, starts: frozenset, keep: int = 5) -> str:
    """Like :func:`rare_start`, but the suffix starts with a character the gate already starts
    a literal with (``starts``) where one exists: the regex engine skips text positions by the
    set of first characters, so a new first character (a frequent lower-case letter) would
    slow the scan of every line (measured: +15 % on the 10 MB bench log; with this, none)."""
    if len(word) <= keep:
        return word
    at = [p for p in range(len(word) - keep + 1) if word[p] in starts]
    if not at:
        return rare_start(word, keep)
    return word[min(at, key=lambda p: (_CHAR_FREQ.get(word[p], 2), p)):]


#: a sentence that asks, guesses or advises (a question word first, a question mark, *maybe*,
#: *could it be*, *if*, *make sure*, *don't forget*, *you should*): a user's words there state no
#: cause, so no ``said`` signature reads it. Searched only on the sentence a ``said`` pattern
#: matched in; linear (no nested quantifiers).
SAID_NOT_STATED_RE = re.compile(
    r"^[\s>#*_-]{0,12}(?:(?:is|are|does|do|did|was|were|can|could|should|has|have)\s(?!not\b)|(?:why|how|what|which)\s)"
    r"|[?\uff1f]|\u5417"
    r"|\b(?:maybe|perhaps|probably|possibly|is it|could it be|could this be|could be|might be|may be|"
    r"suspect|not sure|wonder|if|whether|make sure|ensure|do you|did you|in case"
    # advice, not a report: "Don't forget to add --gpus all", "remember to", "be sure to"
    r"|don'?t forget|do not forget|remember to|be sure to|you (?:need|have|must|ought) to|you should)\b",
    re.IGNORECASE)


#: the part of :data:`SAID_NOT_STATED_RE` that voids a user's words for a SYMPTOM (a ``said``
#: signature of kind "symptom": "GPU not detected", "flash_attn is always building"): a guess, a
#: condition or advice ("if it hangs, set NCCL_DEBUG=INFO", "make sure the GPU is detected"). A
#: question still tells the symptom: "flash_attn is always building, what's the matter?" and "why
#: is my GPU not detected?" report what the user sees (a question about the CAUSE states no cause).
#: A yes/no question ("Is the GPU not detected?") and a question about a cause ("... not
#: detected because of the driver?") still ask, not tell
#: (A title that drops its subject, "Does not detect GPU" or "Is not working", states; the
#: opening word is no question where "not" follows it.)
SAID_NOT_TOLD_RE = re.compile(
    r"^[\s>#*_-]{0,12}(?:is|are|does|do|did|was|were|can|could|should|has|have)\s(?!not\b)"
    r"|\b(?:because|due to|caused by)\b[^?\uff1f\n]{0,200}[?\uff1f]"
    r"|\b(?:maybe|perhaps|probably|possibly|could it be|could this be|could be|might be|may be|"
    r"suspect|not sure|wonder|if|whether|make sure|ensure|do you|did you|in case"
    r"|don'?t forget|do not forget|remember to|be sure to|you (?:need|have|must|ought) to|you should)\b",
    re.IGNORECASE)


#: the end of a sentence: CJK full stops, or . ! ? before a space or the line's end (not the dot
#: of a version, a file name or a URL)
_SENTENCE_END_RE = re.compile(r"[\u3002\uff01\uff1f]|[.!?](?=\s|$)")


def stated(line: str, start: int = 0, end: int = -1, told: bool = False) -> bool:
    """Whether the sentence of ``line`` that holds ``line[start:end]`` states something (no
    question, guess or condition): a title's question after the statement does not count.
    ``told``: the words tell a symptom, not a cause; only a guess, a condition or advice voids
    them (:data:`SAID_NOT_TOLD_RE`), a question does not."""
    end = len(line) if end < 0 else end
    begin = 0
    for m in _SENTENCE_END_RE.finditer(line, 0, start):
        begin = m.end()
    m = _SENTENCE_END_RE.search(line, end)
    return (SAID_NOT_TOLD_RE if told else SAID_NOT_STATED_RE).search(line[begin:m.end() if m else len(line)]) is None


@functools.lru_cache(maxsize=None)
def _ignoring_case(pattern: Pattern[str]) -> Pattern[str]:
    return re.compile(pattern.pattern, pattern.flags | re.IGNORECASE)


def _literal_alternation(literals: Sequence[str]) -> Pattern[str]:
    """A regex matching any of ``literals``, shaped as a trie: ``F(?:ailed to find C|ound no)``.
    Python's engine then tries about one branch per position instead of every literal
    (about 2.5x faster than a flat alternation on a log of noise)."""
    trie: Dict[str, dict] = {}
    for word in set(literals):
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: Dict[str, dict]) -> str:
        if "" in node:  # a shorter literal ends here: enough for a prefilter
            return ""
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(emit(trie) if trie else "(?!)")


#: a pattern that starts with a lower-case letter (optionally after ``\\b``), not one a quantifier
#: or a group's syntax follows
_LOWER_START_RE = re.compile(r"(\\b)?([a-z])(?![?*+{])")


def either_case_start(pattern: str) -> str:
    """``pattern`` with its first letter matched in either case when it starts with a lower-case
    letter: a program's lower-case message is capitalised where it starts a sentence, an issue's
    title or a banner line ("Device-side assert triggered", NGC's "[[ System has unsupported display
    driver ... ]]", "An illegal memory access was encountered"). Only the first letter: the rest of
    a message keeps its case, which tells one program's wording from another's."""
    m = _LOWER_START_RE.match(pattern)
    if m is None:
        return pattern
    ch = m.group(2)
    return f"{m.group(1) or ''}[{ch}{ch.upper()}]{pattern[m.end():]}"


def _either_case_needles(pattern: str) -> List[str]:
    """The needles of ``pattern`` as :func:`either_case_start` matches it: each needle that starts
    with the pattern's first letter also capitalised (a needle from a later run is unchanged by
    the first letter's case, and a capitalised copy of it only widens the prefilter)."""
    needles = needles_of(pattern)
    m = _LOWER_START_RE.match(pattern)
    if m is None:
        return needles
    ch = m.group(2)
    return needles + [ch.upper() + n[1:] for n in needles if n[:1] == ch]


def _compile(pattern: str, where: str) -> Pattern[str]:
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise KnowledgeError(f"{where}: bad regex {pattern!r}: {exc}") from None


def fix_text(code: _knowledge.CodeEntry) -> str:
    """The code's fix as a log reader sees it: no observed values, so the parentheses that
    would hold them are left out."""
    return _knowledge.render_prose(code.fix, {})


def from_knowledge(kb: _knowledge.KnowledgeBase, checks: Optional[Mapping[str, str]] = None) -> KnowledgeBase:
    """The explain view of ``kb``: one :class:`Entry` per log signature, in KB order."""
    entries: List[Entry] = []
    for i, sig in enumerate(kb.signatures()):
        code = kb.get(sig.code)
        where = f"{code.file} [{code.code}] log {sig.id!r}"
        patterns = [either_case_start(p) for p in sig.patterns]
        try:
            needles = tuple(dict.fromkeys(n for p in sig.patterns for n in _either_case_needles(p)))
        except (KnowledgeError, re.error) as exc:
            raise KnowledgeError(f"{where}: {exc}") from None
        entries.append(Entry(
            id=sig.id,
            needles=needles,
            patterns=tuple(_compile(p, where) for p in patterns),
            layer=sig.layer,
            codes=(sig.code,),
            kind=sig.kind,
            weight=sig.weight,
            explanation=code.meaning,
            fix=fix_text(code),
            links=code.links,
            could_be=sig.could_be,
            refine=tuple(Refine(_compile(r.context, where), (r.code,), r.local,
                                _compile(r.far_unless, where) if r.far_unless else None) for r in sig.refine),
            order=i,
            fallback=sig.fallback,
            said=sig.said,
            warning=sig.warning,
            number=sig.number,
            requires=_requires(sig.requires, where), unless=_requires(sig.unless, where),
        ))
    clues = {c.code: c.clues for c in kb.codes.values() if c.clues}
    confirms = {c.code: c.confirmed_by for c in kb.codes.values() if c.confirmed_by}
    hosts = tuple((h.name, h.platform, _compile(h.pattern, f"{h.file} [host.{h.name}]")) for h in kb.hosts.values())
    platforms = {c.code: c.platforms for c in kb.codes.values() if c.platforms}
    return KnowledgeBase(entries=tuple(entries), checks=dict(checks or {}), clues=clues, confirms=confirms,
                         hosts=hosts, platforms=platforms)


def _live_checks() -> Dict[str, str]:
    """finding code -> the check that confirms it live (the first that declares it)."""
    from .. import registry

    return registry.checks_for_codes(registry.load())


@functools.lru_cache(maxsize=None)
def load(path: Optional[str] = None) -> KnowledgeBase:
    """The explain view of the knowledge base (cached). ``path`` (a TOML file, or several
    joined by os.pathsep) replaces the bundled ``stackpeel/knowledge/*.toml``."""
    import os

    kb = _knowledge.load(tuple(path.split(os.pathsep)) if path else None)
    return from_knowledge(kb, _live_checks())


def match_codes(text: str, kb: Optional[KnowledgeBase] = None) -> List[str]:
    """The finding codes whose patterns match ``text``, deepest first.

    Root causes come before symptoms, lower layers before higher ones. ``text`` may be
    one line or a whole exception text; refinements (e.g. "no kernel image" inside
    causal_conv1d -> ``extension-arch-missing``) are judged on ``text`` itself. When no
    pattern matches as written, they are tried whatever the letter case
    (:meth:`KnowledgeBase.match_line_folded`); a line in another language is read in English
    first (:mod:`.translate`), and a bare status number with its name (:mod:`.numbers`), as the
    scanner reads them. Never raises for any string input.
    """
    if not isinstance(text, str) or not text:
        return []
    kb = kb or load()
    if not text.isascii():  # what the system printed in the machine's language, read in English
        from .translate import translate

        text = "\n".join(translate(line) for line in text.split("\n"))
    from .numbers import read_text  # a bare status number read as its name ("exit code 132 [SIGILL: ...]")

    text = read_text(text)
    matched = [e for e in kb.entries if e.search(text)] if kb.entry_gate.search(text) else []
    # as the scanner does for an error line: whatever the letter case when nothing matched
    hits = [(e.sort_key(), e.codes_for(text)) for e in matched or kb.match_line_folded(text)]
    out: Dict[str, None] = {}
    for _, codes in sorted(hits, key=lambda h: h[0]):
        for c in codes:
            out.setdefault(c, None)
    return list(out)


def codes_of_entries(entries: Sequence[Entry], context: str = "") -> List[str]:
    out: Dict[str, None] = {}
    for e in sorted(entries, key=Entry.sort_key):
        for c in e.codes_for(context):
            out.setdefault(c, None)
    return list(out)
