"""A streaming scanner for machine-learning logs.

It reads a log once, line by line, in bounded memory, and keeps only what matters:

* **hits**: lines that match a knowledge-base entry, with a little context;
* **tracebacks**: Python tracebacks, including chained ones ("During handling of the
  above exception..." / "The above exception was the direct cause..."), followed per
  output stream so interleaved ranks (``[rank0]:``, ``0:``, ``(Worker pid=1)``, docker
  compose ``svc-1  |``) do not mix; truncated ones are marked as such;
* **other errors**: compiler/linker/ptxas/nvcc errors, pip build failures, NCCL WARN
  lines, ``file:line: Category: msg`` warnings and exception lines that no entry
  explains (a bounded sample, for the "nothing known" case).

Robust to ANSI colours, CRLF and bare CR (progress bars), NUL and other binary junk, log
records written as JSON lines (docker's json-file driver, ``journalctl -o json``, structured
loggers: :func:`decode_json_records`),
UTF-16 logs with a BOM, gzip-compressed logs, and very long lines (cut at
:data:`MAX_LINE` characters). Cost per line that matches nothing: one regex search.
"""

from __future__ import annotations

import codecs
import collections
import gzip
import io
import json
import os
import re
import zlib
from dataclasses import dataclass, field, replace
from typing import IO, Callable, Deque, Dict, Iterator, List, Mapping, Optional, Pattern, Sequence, Set, Tuple

from .. import combinations as _combinations
from ..redact import scrub_shapes, scrub_text, secret_values
from .knowledge import Entry, KnowledgeBase, _literal_alternation, load, needles_of, rare_start
from .numbers import GATE_RE as NUMBERS_GATE, read_numbers, read_wrapped
from .stacks import GATE_RE as STACK_GATE, read_abort_stacks
from .translate import PASTED_CHARS as _PASTED_CHARS, PASTED_CHARS_RE as _PASTED_CHARS_RE, translate

#: characters of one line that are kept and searched
MAX_LINE = 16384
#: bytes read at a time
CHUNK = 1 << 20
#: lines of context kept before and after a hit
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 2
#: the window counts a log's own lines: a piece that continues the line before it (a terminal's
#: cut, a word-wrapper's break: the seams and cuts :meth:`LogScanner._chunk` finds) is read with
#: that line and not counted, at most this many pieces per side (a pasted log re-wrapped at 80
#: columns keeps the neighbours a refinement reads: issue 8's paste invariance)
CONTEXT_PIECES = 6
#: hits kept per knowledge-base entry (the rest are only counted)
HITS_PER_ENTRY = 8
#: tracebacks kept (the first and the last ones; the rest are only counted)
TRACEBACKS_HEAD = 20
TRACEBACKS_TAIL = 20
#: unexplained error lines kept
OTHER_ERRORS = 40
#: a log that has shown no error yet is kept up to this many characters, so that a log with no
#: error at all can be read again, every line, for what the rule calls a failure (the line gate
#: is case-sensitive and leaves out words whose needles slow every scan: "Stuck", "failure")
QUIET_RESCAN_CHARS = 1 << 20
#: unexplained error lines joined with their neighbours for a second search (per log)
MAX_REJOINS = 400
#: a message a line break cut lies across the break: a join searches this many characters on
#: each side of it, not two whole lines (64 error lines of 16 KB, each joined whole with its
#: neighbours, took 6.5 s of CPU; no signature spans more than a few hundred characters)
SEAM_CHARS = 2048
#: error lines per log whose soft-wrapped paragraph is looked for (:func:`soft_wrap_paragraph`)
MAX_PARAGRAPHS = 400
#: error lines per log that are matched again whatever the letter case (see
#: ``KnowledgeBase.match_line_folded``): each costs a pass over every entry's needles
MAX_FOLDED = 200
#: characters of a line the error-line detector reads (what makes a line an error is near its
#: start; a 16 KB line of adversarial text costs 4x less)
ERROR_SHAPE_CHARS = 4096
#: frames kept per traceback (the innermost ones)
FRAMES_KEPT = 12
#: exception message continuation lines kept
MESSAGE_LINES = 15
#: distinct clue literals recorded per log, and lines kept per clue
MAX_CLUES = 200
#: localized lines read in English whose own words are kept for the report (:mod:`.translate`)
MAX_TRANSLATED = 2000
CLUE_LINES = 3
#: characters of traceback text kept as context for refinements
TB_CONTEXT_CHARS = 6000
#: characters at the start and at the end of a log whose lines are read for facts (versions,
#: GPUs, context): where environment reports (collect_env, pip list, nvidia-smi) are printed;
#: the lines the scan keeps are read wherever they are. At most FACT_LINES lines each.
FACT_WINDOW = 256 * 1024
FACT_LINES = 5000
#: the facts gate (combinations.FACT_LITERALS, each cut to start at a rare character like the
#: other gates' literals): run over the first and the last chunk only
FACT_GATE = _literal_alternation([rare_start(lit, 4) for lit in _combinations.FACT_LITERALS])
#: a log longer than one read (CHUNK) has its repeated records collapsed: a record (a line that
#: starts at its stream's margin and the indented lines after it: a traceback, a message with
#: its continuation) whose text, numbers aside, was read COLLAPSE_AFTER times is counted, not
#: read again (a fault makes every rank and DataLoader worker print the same traceback with
#: its own pids: hundreds of megabytes). The first copies are read in full, so the hits kept
#: (HITS_PER_ENTRY per entry) are the ones a full read keeps; the copies collapsed add to the
#: counts what one copy adds (:meth:`LogScanner._record_effects`) and are reported
#: (``ParseResult.repeats``) with their number and the first line numbers.
COLLAPSE_AFTER = 16
#: distinct records (numbers aside) remembered per log; a log of a million distinct lines keeps
#: counting the ones it has met
MAX_RECORD_KINDS = 100_000
#: line numbers kept per collapsed record
REPEAT_LINES = 5
#: the first line of a record: not blank, not indented, and not indented after a stream's prefix
#: (``[rank3]:     File ...`` continues the record; ``[rank3]: Traceback`` starts one)
RECORD_START_RE = re.compile(r"^(?![ \t]|$)(?!(?:\[[^\]\n]{1,60}\]:?|[\w.-]{1,40}:)[ \t]{2,})", re.M)

ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]+")
#: the same characters for str.translate: on an ASCII chunk (most logs) deleting them this way
#: scans 1 MB in 0.5 ms where the regex takes 8 ms; a non-ASCII chunk keeps the regex
_CTRL_TABLE = dict.fromkeys([*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20), 0x7f, 0xfffd])

#: known per-process line prefixes -> stream key
PREFIX_RE = re.compile(
    r"^(?:"
    r"(?P<rank>\[(?:rank|Rank|RANK|default)\s*\d+\]\s*:?\s?)"        # [rank0]: , [default0]:
    r"|(?P<mpi>\[\d+,\d+\]<std(?:out|err)>:\s?)"                     # mpirun [1,0]<stderr>:
    r"|(?P<ray>\((?:[\w.-]+(?: [\w.=-]+){0,3} )?pid=\d+(?:, ip=[\w.:-]+)?\)\s)"  # (RayWorker pid=12, ip=1.2.3.4),
    #                                                        (VllmWorker rank=0 pid=12), (EngineCore_0 pid=3)
    r"|(?P<compose>[\w.-]+-\d+\s+\|\s)"                             # docker compose: vllm-1  |
    r"|(?P<num>\d{1,4}: )"                                          # srun/torchrun: 0:
    r"|(?P<kube>\[pod/[\w.-]{1,253}/[\w.-]{1,63}\]\s)"               # kubectl logs --prefix: [pod/name/container]
    # journalctl's short format: 'May 01 12:00:00 host python3[4242]: ' (the stream is the process)
    r"|(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} "
    r"(?P<journal>[\w.@/()-]{1,64}(?:\[\d{1,10}\])?): )"
    r")"
)
TB_START = "Traceback (most recent call last)"
#: the frame Open MPI's show_help prints around every message of mpirun's (opal/util/show_help.c dash_line,
#: 74 dashes): the worker's exception message before it has ended (torch elastic's own rules are 60 at most)
SHOW_HELP_FRAME = "-" * 74
#: a program's own error line ('srun: error: node1: task 0: Exited with exit code 1', slurmstepd's,
#: a compiler driver's 'x86_64-linux-gnu-gcc: error: ...'): no continuation of an exception's message
PROGRAM_ERROR_RE = re.compile(r"[\w.+-]{1,40}: (?:error|fatal error): ")
CHAIN_CONTEXT = "During handling of the above exception, another exception occurred"
CHAIN_CAUSE = "The above exception was the direct cause of the following exception"
FRAME_RE = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in (?P<func>.*))?')
#: a frame line with no "Traceback" line above it (a paste that starts inside the traceback, or
#: the last lines of a log): it opens a traceback marked truncated. The function may be
#: missing when nothing follows it: GitHub's Markdown drops ``<module>``, ``<lambda>`` and
#: ``<listcomp>`` as unknown HTML tags, so a pasted frame often ends at ", in"
HEADLESS_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"\n]{1,1000})", line (?P<line>\d{1,9})'
                               r'(?:, in (?P<func>\S.*)|(?:, in)?\s*$)')
#: ``Type: message`` of an exception line. One greedy run of name characters followed by
#: ":" or the end: linear on any line (the old one-regex form nested ``\w*`` inside
#: alternatives and took seconds on a 16 KB line of ``ErrorErrorError...``); the type's
#: shape is then judged in Python by :func:`_is_exception_type`.
EXC_HEAD_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::[ \t]?(?P<msg>.*))?$")
#: a numbered source line an IPython or rich traceback echoes (``    168  code``, ``--> 170``)
_NUMBERED_SOURCE_RE = re.compile(r"\A[ \t│|]*(?:(?:-+>|❱)[ \t]*)?\d{1,6}(?:[ \t│|]|$)")
_EXC_SUFFIXES = ("Error", "Exception", "Exit", "Interrupt", "Warning", "Failure", "Fault")
#: A logger's prefix before the message: one reader for both uses (session 20: two overlapping
#: regexes read it before). Its first part, ``stamped``, is a record prefix with a timestamp,
#: read off every line of a paste (:meth:`LogScanner._line`), the level kept apart in groups
#: ``l1``..``l5``: Python logging's default ``2024-05-01 12:00:00,123 - root - ERROR - ``,
#: ``[2024-05-01 12:00:00] ERROR: ``, ``2024-05-01 12:00:00,123 ERROR ``, glog
#: ``E0501 12:00:00.123 123 file.cc:12] ``, vLLM's ``INFO 05-01 12:00:00 [file.py:12] ``. The
#: rest are looser shapes read only where a line may hold an exception's type after them
#: (:func:`strip_log_prefix`): ``ERROR 05-26 07:50:26 [core.py:396] ``, glog with more spaces,
#: ``ERROR:    `` (uvicorn), ``[05/23/2021 18:30:06][host][0]:``, ``2024-01-02 10:11:12 ``.
#: (journald's ``May 01 12:00:00 host python[123]: `` is a stream prefix: :data:`PREFIX_RE`
#: reads it first.)
_LEVEL = r"(?P<{}>DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)"
_STAMP = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
LOG_PREFIX_RE = re.compile(
    r"^(?:(?P<stamped>" + _STAMP + r"(?: - [\w.<>-]{1,80})? - " + _LEVEL.format("l1") + r" - "
    # (DeepSpeed's '[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] ', deepspeed/utils/logging.py)
    r"|\[" + _STAMP + r"\](?:\[[^\]\n]{1,80}\])? ?\[?" + _LEVEL.format("l2") + r"\]?:? (?:\[[^\]\s]{1,200}\] )?"
    r"|" + _STAMP + r" \|? ?" + _LEVEL.format("l3") + r" \|? ?"
    r"|(?P<l4>[IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]\s]{1,200}:\d+\] "
    r"|" + _LEVEL.format("l5") + r" \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[[^\]\s]{1,200}\] )?"
    r")"
    r"|(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL)\b[^\]\n]{0,80}\]\s"
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s[^\]\s]{1,200}\]\s"
    r"|(?:ERROR|WARNING|INFO|DEBUG|CRITICAL):\s+"
    r"|(?:\[[^\]\n]{1,40}\]){2,4}:?\s?"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,]?\d*\s+(?:[A-Z]+\s+)?)"
)
_LEVEL_GROUPS = ("l1", "l2", "l3", "l4", "l5")
#: the first characters of a logger's prefix: a timestamp's digit, a bracket, a level's letter
_LOG_PREFIX_FIRST = frozenset("0123456789[DINWECF")


#: exception classes whose names carry none of :data:`_EXC_SUFFIXES`, raised where the stack
#: fails (tools40): the standard library's concurrent.futures.process.BrokenProcessPool (a worker
#: died: OOM killer, a native crash), concurrent.futures.BrokenExecutor, subprocess.TimeoutExpired,
#: zipfile.BadZipFile (a cut download), http.client.RemoteDisconnected and IncompleteRead;
#: pkg_resources' DistributionNotFound and (Contextual)VersionConflict; packaging's
#: InvalidVersion, InvalidRequirement, InvalidSpecifier; Triton's OutOfResources
_UNSUFFIXED_EXCEPTIONS = frozenset((
    "BrokenProcessPool", "BrokenExecutor", "TimeoutExpired", "BadZipFile", "RemoteDisconnected", "IncompleteRead",
    "DistributionNotFound", "VersionConflict", "ContextualVersionConflict", "InvalidVersion", "InvalidRequirement",
    "InvalidSpecifier", "OutOfResources"))


def _is_exception_type(name: str) -> bool:
    # (a private class keeps its underscore: torch._C._LinAlgError)
    last = name.rsplit(".", 1)[-1].lstrip("_")
    if not last or not last[0].isupper():
        return False
    if last in ("KeyboardInterrupt", "StopIteration", "StopAsyncIteration", "Exception", "ExceptionGroup",
                "BaseExceptionGroup") or last in _UNSUFFIXED_EXCEPTIONS:
        return True
    if last in _EXC_SUFFIXES:
        return False
    if "." in name and any(mod in ("exc", "exceptions", "errors") for mod in name.split(".")[:-1]):
        # a class of a library's exception module: torch._dynamo.exc.Unsupported,
        # pip._vendor.resolvelib.resolvers.ResolutionImpossible is named by HARD_ERROR_RE
        return True
    if last.endswith(_EXC_SUFFIXES):
        return True
    return "Error" in last[1:] or "Failed" in last[1:]


def exception_line(text: str) -> Optional[Tuple[str, str]]:
    """``(type, message)`` when ``text`` is the ``Type: message`` line of an exception
    (dotted types such as ``torch.distributed.DistBackendError`` included), else None.
    Linear in the length of the line."""
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return None
    m = EXC_HEAD_RE.match(text)
    if m is None or not _is_exception_type(m.group("type")):
        return None
    return m.group("type"), m.group("msg") or ""


#: a line that opens a JSON object with a string key: the only lines :func:`decode_json_records`
#: parses (found by one C-speed search over a chunk)
JSON_RECORD_LINE_RE = re.compile(r'^[ \t]*\{[ \t]*"[^"\n]{1,40}"[ \t]*:[^\n]*\}[ \t\r]*$', re.M)
#: keys that hold a log record's text: docker json-file's "log", journald's "MESSAGE", structured
#: loggers' "message" / "msg"
JSON_TEXT_KEYS = ("log", "MESSAGE", "message", "msg")
#: keys that make a JSON object a log record (a time, a level, a stream, a process): a JSON line
#: of data that merely has a "message" field stays as it is
JSON_RECORD_MARKS = frozenset(("stream", "time", "timestamp", "@timestamp", "ts", "level", "levelname",
                               "severity", "_PID", "__REALTIME_TIMESTAMP", "SYSLOG_IDENTIFIER", "logger"))

#: a JSON record's level keys, and the levels that mean its program met an error
JSON_LEVEL_KEYS = ("level", "levelname", "severity")
JSON_ERROR_LEVELS = frozenset(("ERROR", "ERR", "FATAL", "CRITICAL", "CRIT", "PANIC", "DPANIC", "ALERT", "EMERG",
                               "EMERGENCY"))


def json_record_text(line: str) -> Optional[str]:
    """The text of a log record written as one JSON object (``{"log":"...\\n","stream":"stderr",
    "time":"..."}``), or None when the line is no such record."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or JSON_RECORD_MARKS.isdisjoint(obj):
        return None
    for key in JSON_TEXT_KEYS:
        value = obj.get(key)
        if isinstance(value, str):
            text = value[:-1] if value.endswith("\n") else value
            # a record at error level keeps its level as a logger's prefix (zap's, logrus' and slog's JSON
            # handlers: {"level":"error","msg":"allocation rejected"}): its text alone may name no failure,
            # and the record says one happened (lead42); one line only, so a logged traceback stays one
            level = next((obj[k] for k in JSON_LEVEL_KEYS if isinstance(obj.get(k), str)), "")
            if level.upper() in JSON_ERROR_LEVELS and "\n" not in text:
                return "ERROR " + text
            return text
    return None


def decode_json_records(body: str) -> str:
    """``body`` with each line that is a JSON log record replaced by the record's text (its
    escapes decoded: quotes, tabs, ANSI colours, non-ASCII). A record whose text holds newlines
    (a traceback logged as one record) becomes several lines: line numbers count the decoded
    lines. Other lines, JSON or not, are left as they are."""
    out: List[str] = []
    last = 0
    for m in JSON_RECORD_LINE_RE.finditer(body):
        text = json_record_text(m.group(0).strip())
        if text is None:
            continue
        out.append(body[last:m.start()])
        out.append(text)
        last = m.end()
    if not out:
        return body
    out.append(body[last:])
    return "".join(out)


#: a terminal's hard wrap: the widths it cuts at, and how many lines of exactly that width (the
#: chunk's longest) a chunk must hold before its lines of that width are read as cut ones
HARD_WRAP_MIN, HARD_WRAP_MAX, HARD_WRAP_LINES = 60, 400, 3
#: lines this much shorter than the width, at most, are "near" it (word-wrapped lines end there);
#: a chunk is rewritten only when it holds HARD_WRAP_STRONG times as many cut lines as near ones
#: (a paragraph re-wrapped at word boundaries has lines of the full width too, and many near it:
#: gluing them drops the spaces its wrapper took out)
HARD_WRAP_NEAR = 8
HARD_WRAP_STRONG = 3
#: the column counts terminals open with (xterm's, the Linux console's and Windows' conhost's 80,
#: Windows Terminal's and many IDE consoles' 120): a chunk whose longest lines have exactly one
#: of these widths is read as cut there even with one or two such lines (a short paste: one
#: error message cut once or twice), for the weak reading only (joins kept where they match an
#: entry the pieces alone do not). Not round numbers a tool truncates at (a collector's 200)
TERMINAL_WIDTHS = frozenset((80, 120))


_BOX_CHARS = "|│┃║+╭╮╯╰┌┐└┘├┤"
_DIGITS_RE = re.compile(r"\d+")


def _may_be_cut(line: str, nxt: str) -> bool:
    """Whether ``line`` (of the chunk's widest length) may be a piece a terminal cut from a
    longer line continued by ``nxt``: not a separator of one repeated character, not a row
    of a table or a box (nvidia-smi, rich) that is as wide by design, not a sentence ended
    before a new one (unless the line keeps the space a terminal cuts after), and not followed
    by a new record of the same shape (a repeated log line: same first characters), a log
    record or a traceback's line."""
    core = line.strip()
    if len(set(core)) < 2 or not nxt.strip():
        return False
    if core[0] in _BOX_CHARS or core[-1] in _BOX_CHARS or core.endswith(("it/s]", "s/it]")):
        return False                                  # a table's row, a box, a progress bar
    if core[-1] in ".:;!?" and nxt[:1].isupper() and not line.endswith(" "):
        return False            # a sentence ended, a new one begins (a terminal keeps the space)
    if nxt[:8] == line[:8] or RECORD_RE.match(nxt) or nxt.lstrip().startswith(("File \"", "Traceback (")):
        return False
    return True


def hard_wrap_cuts(lines: List[str], strong: bool = False) -> Set[int]:
    """The indexes of the lines a terminal cut at its width (issue 8: a message copied from an
    80- or 120-column console arrives in pieces, cut inside words).

    The width is inferred, not assumed: the longest line of the chunk, when at least
    HARD_WRAP_LINES lines have exactly that length, or two different ones in a row (one message
    cut twice), and it lies between HARD_WRAP_MIN and HARD_WRAP_MAX; a line of that width
    counts only where :func:`_may_be_cut` allows (no table row, separator, progress bar,
    sentence end, or repeated record). A log that was not wrapped almost never qualifies; one
    that was has a cut at every full line. The scanner then reads each such line joined with
    the pieces that follow (:meth:`LogScanner._chunk`), and keeps the joined text only where it
    matches an entry the piece alone does not: a word-wrap whose lines happen to be as long
    changes nothing. ``strong``: only a chunk that shows the wrap beyond doubt (at least
    HARD_WRAP_LINES cuts, and HARD_WRAP_STRONG times as many lines of exactly the width as
    lines up to HARD_WRAP_NEAR characters shorter), whose lines :func:`rejoin_hard_wraps` rewrites."""
    if len(lines) < 2:
        return set()
    width = max(len(ln) for ln in lines)
    if not HARD_WRAP_MIN <= width <= HARD_WRAP_MAX:
        return set()
    cut = [len(ln) == width and _may_be_cut(ln, nxt) for ln, nxt in zip(lines, lines[1:] + [""])]
    n_cut = sum(cut)
    if n_cut < HARD_WRAP_LINES and not any(
            cut[i] and cut[i + 1] and lines[i] != lines[i + 1] for i in range(len(lines) - 1)) \
            and (strong or not n_cut or width not in TERMINAL_WIDTHS):
        # fewer than three cuts, no line cut twice (two different lines of the width in a
        # row), and not a terminal's usual width: no sign of a terminal's wrap
        return set()
    if strong:
        # a terminal cuts every long line at the width, so lines just shorter than it are rare;
        # a word-wrapper leaves many (its lines end where a word ends)
        near = sum(1 for ln in lines if width - HARD_WRAP_NEAR <= len(ln) < width)
        if n_cut < HARD_WRAP_LINES or n_cut < HARD_WRAP_STRONG * near:
            return set()
        # one record repeated (its numbers aside) and re-wrapped at word boundaries has as many
        # lines of one width as it has copies, none near it: HARD_WRAP_LINES different cut lines,
        # or the chunk is read the weak way (each join tried glued and spaced)
        if len({_DIGITS_RE.sub("", ln) for ln, c in zip(lines, cut) if c}) < HARD_WRAP_LINES:
            return set()
    return {i for i, was_cut in enumerate(cut) if was_cut}


def rejoin_hard_wraps(body: str) -> str:
    """``body`` with the lines :func:`hard_wrap_cuts` finds beyond doubt (``strong``) joined to
    the pieces after them, as the terminal split them (no space added). Line numbers then count
    the joined lines. A chunk with weaker signs keeps its lines; the scanner tries their joins
    one line at a time (:meth:`LogScanner._chunk`)."""
    if "\n" not in body:
        return body
    lines = body.split("\n")
    cuts = hard_wrap_cuts(lines, strong=True)
    if not cuts:
        return body
    out: List[str] = []
    piece = ""
    for i, ln in enumerate(lines):
        piece += ln
        if i not in cuts:
            out.append(piece)
            piece = ""
    if piece:
        out.append(piece)
    return "\n".join(out)


def _wrapped_rest(lines: List[str], i: int, cuts: Set[int]) -> str:
    """The pieces that continue the cut line ``i``: the next line and, while a piece was cut
    too, the one after it, glued as the terminal split them (MAX_LINE characters at most)."""
    out: List[str] = []
    size = 0
    j = i + 1
    while j < len(lines) and size < MAX_LINE:
        out.append(lines[j])
        size += len(lines[j])
        if j not in cuts:
            break
        j += 1
    return "".join(out)[:MAX_LINE]


#: a message re-wrapped at word boundaries (an editor, a mail client, a terminal that wraps
#: words, an issue form at 72 to 120 columns) is a paragraph of lines each as long as the words
#: allow; the lines of such a paragraph around an error line are read joined, for a signature
#: that only the whole message reads (:func:`soft_wrap_paragraph`). The narrowest and the widest
#: width taken for a wrap (a log's own long lines are no wrapped paragraph), and how many lines
#: and characters a paragraph reads at most
SOFT_WRAP_MIN, SOFT_WRAP_MAX = 60, 200
PARAGRAPH_LINES = 6
#: a chunk of more lines than this with a line wider than SOFT_WRAP_MAX is not read as re-wrapped
#: (a long log; the test costs a pass of Python over its lines otherwise)
SOFT_WRAP_LINES = 2000
PARAGRAPH_CHARS = 1500


#: a progress bar (tqdm's ``42%|####| 88/88 [00:28<00:00, 3.07it/s]``): as wide as the terminal by
#: design, cut there by a paste, never a wrapped sentence
_PROGRESS_RE = re.compile(r"\d%\||\bit/s\b|\bs/it\b")


def _first_word_len(text: str) -> int:
    cut = text.find(" ")
    return len(text) if cut < 0 else cut


def _continues(text: str) -> bool:
    """Whether a stripped line may continue the line before it as a wrapped piece: not a new
    record, a traceback's line, an exception line or an item of a list."""
    return not (text.startswith(('File "', "Traceback (", "During handling of", "The above exception",
                                 "- ", "* ", "```"))
                or RECORD_RE.match(text) or read_log_prefix(text)[0] or exception_line(text))


def soft_wrap_paragraph(pieces: List[str], i: int, head: bool = False, sentences: bool = False) -> Tuple[int, int]:
    """``(first, last)``: the run of ``pieces`` (lines without their stream prefixes) around
    ``pieces[i]`` that a word wrapper made of one line, or ``(i, i)``.

    A word wrapper at width W fills each line while the next word fits: every line but the last
    is at most W long and its next line's first word would have made it longer than W. W is
    taken as the run's longest line of several words (a lone word longer than the width stays
    whole on its own line), between SOFT_WRAP_MIN and SOFT_WRAP_MAX; each break of the run must
    fit it. The
    pieces share their indentation (a wrapper keeps it), none is blank, and none after the first
    starts a record, a traceback line, an exception line or a list item (:func:`_continues`).
    At most PARAGRAPH_LINES pieces and PARAGRAPH_CHARS characters. ``head``: ``pieces[i]`` starts
    a record of its own (a logger's prefix was read off it): the run starts there. ``sentences``:
    the run starts at ``pieces[i]`` and ends at a line that ends a sentence or opens a quote
    (``.``, ``?``, ``!``, ``:``), before a line of one word or one that starts with a sign (a
    separator, a fence), after a frame, and at a table's row (columns aligned with spaces): what
    is reported as one error line is the rest of
    its own sentence (a message's next sentence may be read for a signature, not the line
    after it)."""
    def indent(text: str) -> int:
        return len(text) - len(text.lstrip())

    def joinable(j: int) -> bool:          # the break between pieces[j] and pieces[j + 1]
        a, b = pieces[j].rstrip(), pieces[j + 1]
        head_b = b.strip()
        if not (a.strip() and head_b) or indent(a) != indent(b) or not _continues(head_b) \
                or a.strip()[:8] == head_b[:8] or _PROGRESS_RE.search(a) or _PROGRESS_RE.search(b):
            return False                   # (two records of one shape: "Writing metrics: ..." twice)
        if sentences and (a.rstrip("`'\")")[-1:] in (".", "?", "!", ":") or " " not in head_b
                          or not (head_b[0].isalnum() or head_b[0] in "(`'\"") or a.lstrip().startswith('File "')
                          or "   " in a.strip() or "   " in head_b):
            return False
        if head_b[0].isupper() and a[-1] not in ".?!:;":
            # mid-sentence, a wrapper puts a capital first only on a name: a word with more capitals,
            # digits or signs in it ("NumCudaDevices()", "CUDA"), or one of a run of names ("AGX / Orin.")
            word = head_b[:_first_word_len(head_b)].rstrip(".,;:")
            last = a.rsplit(None, 1)[-1]
            if word[1:].islower() and word.isalpha() and not last[:1].isupper():
                return False               # a new line of its own ("... scores.jsonl" / "Killed")
        return True

    first = last = i
    size = len(pieces[i])
    while last + 1 < len(pieces) and last - first + 1 < PARAGRAPH_LINES and joinable(last) \
            and size + len(pieces[last + 1]) <= PARAGRAPH_CHARS:
        last += 1
        size += len(pieces[last])
    while not (head or sentences) and first > 0 and last - first + 1 < PARAGRAPH_LINES and joinable(first - 1) \
            and size + len(pieces[first - 1]) <= PARAGRAPH_CHARS:
        first -= 1
        size += len(pieces[first])
    if first == last:
        return i, i
    width = max((len(p.rstrip()) for p in pieces[first:last + 1] if " " in p.strip()), default=0)
    if width < SOFT_WRAP_MIN and any(len(p.strip()) > SOFT_WRAP_MIN for p in pieces[first:last + 1]):
        # short lines around one word longer than any width taken (a path, a mangled symbol): the
        # word was moved to a line of its own
        width = SOFT_WRAP_MIN
    if not SOFT_WRAP_MIN <= width <= SOFT_WRAP_MAX:
        return i, i

    def wrapped(j: int) -> bool:           # the next piece's first word did not fit on pieces[j]
        return len(pieces[j].rstrip()) + 1 + _first_word_len(pieces[j + 1].strip()) > width

    lo = hi = i
    while hi < last and wrapped(hi):
        hi += 1
    while lo > first and wrapped(lo - 1):
        lo -= 1
    return lo, hi


def soft_wrapped(lines: List[str]) -> bool:
    """Whether a chunk reads as re-wrapped at word boundaries as a whole: its longest line of
    several words (W, between SOFT_WRAP_MIN and SOFT_WRAP_MAX) is matched by at least three such
    lines up to 12 characters shorter, a third of all its lines longer than W / 2 (a wrapper
    fills every line to near its width; a log's own lines end anywhere). The guard of the
    unexplained-error paragraph (:meth:`LogScanner._line`), where no entry vouches for a join."""
    if len(lines) > SOFT_WRAP_LINES and max(map(len, lines), default=0) > SOFT_WRAP_MAX:
        return False           # a long log with lines wider than any wrap: no paste re-wrapped
    lens = [len(ln.rstrip()) for ln in lines if " " in ln.strip()]
    width = max(lens, default=0)
    if not SOFT_WRAP_MIN <= width <= SOFT_WRAP_MAX:
        return False
    near = sum(1 for n in lens if n >= width - 12)
    return near >= 3 and 3 * near >= sum(1 for n in lens if n > width // 2)


def _has_json_records(text: str) -> bool:
    return "{" in text and '":' in text and JSON_RECORD_LINE_RE.search(text) is not None


def read_log_prefix(text: str) -> Tuple[int, str, bool]:
    """``(end, level, stamped)`` of the logger's prefix ``text`` starts with (:data:`LOG_PREFIX_RE`):
    where the message begins, the record's level (``"ERROR"``, glog's ``"I"``; ``""`` when the
    prefix names none or is a loose one), and whether it is a timestamped record prefix.
    ``(0, "", False)`` when there is none."""
    if not text or text[0] not in _LOG_PREFIX_FIRST:
        return 0, "", False
    m = LOG_PREFIX_RE.match(text)
    if m is None:
        return 0, "", False
    if m.group("stamped") is None:
        return m.end(), "", False
    return m.end(), next(m.group(g) for g in _LEVEL_GROUPS if m.group(g)), True


def _record_prefix(text: str) -> Tuple[int, str, bool]:
    """:func:`read_log_prefix`, and a record prefix on an empty line whose trailing space was
    stripped with the line's (``2024-05-01 12:00:00,123 - root - ERROR -``): its end is past
    the text."""
    if text[-1:] in ("-", ":", "]"):
        end, level, stamped = read_log_prefix(text + " ")
        if stamped and end > len(text):
            return end, level, stamped
    return read_log_prefix(text)


#: the level a relayed line carries at its start: Python logging's default format
#: ('%(levelname)s:%(name)s:%(message)s', as torchrun's elastic agent prints 'ERROR:torch.distributed...')
_RELAYED_LEVEL_RE = re.compile(r"(ERROR|CRITICAL|FATAL|WARNING|WARN):[\w.]{1,120}:")


def _relayed_level(message: str) -> str:
    """The level of a logger's record that ``message`` (the message of another record) starts with:
    a timestamped record prefix's (:data:`LOG_PREFIX_RE`) or Python logging's default format's;
    ``""`` for none."""
    end, level, stamped = read_log_prefix(message)
    if stamped and level:
        return level
    m = _RELAYED_LEVEL_RE.match(message) if message[:1] in "EFCW" else None
    return m.group(1) if m else ""


def strip_log_prefix(text: str) -> str:
    """``text`` without one leading logger prefix (level, timestamp, ``[file:line]``)."""
    end = read_log_prefix(text)[0]
    return text[end:] if end else text


#: a line that starts a new log record (ends an exception's message)
RECORD_RE = re.compile(
    r"^(?:\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|\[\d{4}|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|[IWEF]\d{4} "
    r"|\[[A-Z]\w*\]|\S+:\d+: \w*Warning: |Traceback \(most recent call last\)|\S+ \d+:\d+:\d+ )"
)
#: the end of a line and the start of the next that read as one sentence broken in two:
#: a word (or comma) at the end, a lower-case word (or an opening quote) after the indent
#: a wrapped line is one a terminal, a logger or a person cut at a width: lines shorter
#: than SEAM_MIN or longer than SEAM_MAX are not joined with the next (keeps the cost of
#: joining bounded on logs of long or very short lines)
SEAM_MIN, SEAM_MAX = 40, 2000
#: a numbered source line of a traceback (IPython ``----> 170``/``    168``, rich ``│ ❱ 170 │``)
#: whose code is a comment: the echoed library source, not the user's words. Not a C
#: preprocessor ``#error`` directive that gcc and clang echo under their diagnostic
#: (``  143 | #error -- unsupported GNU version! ...``): its text is what the compiler failed on
ECHOED_COMMENT_RE = re.compile(r"\A[ \t│|]*(?:(?:-+>|❱)[ \t]*)?\d{1,6}[ \t│|]+#(?!error\b)")
#: a numbered source line of an IPython or rich traceback whose code is a string literal (the
#: argument of a ``raise`` on the line above: ``    289         "Cannot re-initialize CUDA in
#: forked subprocess. ..."``): the library's text of a branch not taken, not what happened; the
#: traceback's exception line says what was raised. Not gcc's and clang's ``  143 |`` echo
ECHOED_STRING_RE = re.compile(r"\A[ \t│]*(?:(?:-+>|❱)[ \t]*)?\d{1,6}[ \t│]+[rRfFbBuU]{0,2}[\"']")
#: a line break before a lower-case continuation (a word-wrapped line, or one a terminal cut
#: inside a word or right after a space); the character before the break is checked in
#: Python (SEAM_END): a regex
#: that starts with the newline scans 15x faster than one that starts with a class. Breaks
#: before an upper-case word or a path are not rejoined: on ordinary logs that would send
#: most lines through the Python path (measured: twice the scan time)
SEAM_RE = re.compile(r"\n[ \t>]*[a-z(`'\"]")
SEAM_END = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.:;-_/ ")
WARNING_RE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+): (?P<cat>[A-Z]\w*Warning): (?P<msg>.*)")
#: an exit status that says the user pressed Ctrl+C (Windows' STATUS_CONTROL_C_EXIT in decimal, an
#: IDE's "130 (interrupted by signal 2: SIGINT)"): put before a status's digits
_CTRL_C = r"(?!-1073741510\b|3221225786\b|130 \(interrupted by signal 2\b)"
#: Shapes of a line a user would call an error (issue 8: "no log with an error line answered
#: with 'No known problem'"). Each alternative starts at a literal and bounds every repeat, so
#: a search is linear on any line; the group that matched names the shape. HARD shapes are
#: errors whatever the line's log level; SOFT ones (a step that "failed", "not found", a
#: timeout, a hang) are not when the line is an INFO/DEBUG or WARNING record: NCCL's
#: "NCCL INFO NET/Plugin: ... No such file or directory ... using internal implementation" and
#: torch's "[I...] Reducer: comm-optimized memory allocator not found, using regular one" are
#: healthy runs talking.
HARD_ERROR_RE = re.compile(
    # (not a metric a trainer prints: "mean absolute error: 1.9604 |", "top-1 error: 23.1%")
    r"(?P<label>(?:^|[\s`'\"(\[|>*])(?:fatal error|error|Error|ERROR|fatal|FATAL)(?:\[\w{1,40}\])?:"
    r"(?!\s{0,3}-?\d{1,9}(?:\.\d{1,12}(?:e-?\d{1,3})?%?|%)(?:\s|,|;|\||$))"
    # (nor a string literal in code that prints one: 'print("error:", e)', 'log("Error:" + msg)')
    r"(?![\"'][ \t]{0,2}[,)+%]))"
    # MSVC and its tools put a code between the word and the colon: "error C2065:",
    # "fatal error C1083:", "error LNK2019:", "NMAKE : fatal error U1077:"
    r"|(?P<msvc>\b(?:fatal error|error) [A-Z]{1,4}\d{3,5}\s?:)"
    # a Python exception line the user retyped in lower case, name and all ("valueerror: bfloat16 is
    # only supported on gpus with compute capability of at least 8.0"): the folded reading of the
    # knowledge base then names it as written in the program
    r"|(?P<lowered>^\s{0,8}(?:[a-z]{2,30}\.){0,4}(?:[a-z]{2,40}error|[a-z]{0,40}exception): (?!-?[\d.])\S)"
    r"|(?P<build>ptxas fatal|nvcc fatal|cannot find -l|undefined reference to|Failed building wheel"
    # Apple's ld64 ("Undefined symbols for architecture arm64:", "ld: symbol(s) not found for ...")
    r"|Undefined symbols for architecture \w"
    r"|subprocess-exited-with-error|returned non-zero exit status)"
    r"|(?P<nccl>NCCL WARN|\bnccl[A-Z]\w{0,30}Error\b)"
    r"|(?P<crash>Segmentation fault|core dumped|Bus error|Illegal instruction|Aborted \(|Floating point exception"
    r"|\bSIG(?:SEGV|BUS|ABRT|KILL|ILL|FPE)\b|killed by signal|[Ss]ignal:? ?(?:9|11|6|7|4|8)\b"
    # bash's job report ("line 2: 18666 Killed   python ...", "[1]+  Killed   python ...") and zsh's
    # (in a zh_CN locale strsignal(SIGKILL) reads "\u5df2\u6740\u6b7b": "[1]+  \u5df2\u6740\u6b7b   nohup ...")
    r"|\b\d{1,10} (?:Killed|Terminated|Aborted|Hangup)\s{2,}|^\[\d{1,4}\][+-]?\s{1,4}(?:Killed|Terminated|Aborted|"
    r"\u5df2\u6740\u6b7b)\s"
    r"|^zsh: (?:segmentation fault|killed|abort|bus error|illegal hardware instruction|floating point exception)\b"
    # harv40b: zsh's job report names the pid before its signal text (Src/jobs.c printjob with
    # the sigmsg table of Src/signames2.awk): "[1]    10389 segmentation fault  python test.py"
    r"|^\[\d{1,4}\]\s{0,4}[+-]?\s{1,6}\d{1,10} (?:segmentation fault|bus error|illegal hardware instruction"
    r"|abort|floating point exception)\b"
    # a job's fatal signal alone on its line, as bash prints strsignal() for a foreground job
    # that died without a core ("Aborted", "Terminated", "Trace/breakpoint trap"); macOS's libc
    # words some otherwise and bash there adds the number ("Abort trap: 6", "Killed: 9")
    r"|^\s{0,8}(?:Aborted|Terminated|Hangup|Trace/breakpoint trap|Bus error|Illegal instruction|Abort trap"
    r"|Trace/BPT trap|Killed|User defined signal [12]|CPU time limit exceeded|File size limit exceeded)"
    r"(?:: \d{1,2})?(?: \(core dumped\))?\s*$"
    # the kernel's record of a process it stopped (arch/x86/mm/fault.c show_signal_msg: "python[123]:
    # segfault at 0 ip 00007f... sp 00007f... error 4 in libcuda.so.1[...]"; traps.c: "traps:
    # python[123] general protection fault ip:...")
    r"|\bsegfault at [0-9a-f]{1,16} ip [0-9a-f]{1,16}\b|\btraps: [^\n]{1,100}? general protection fault\b"
    # systemd-coredump's record of a process that dumped core (src/coredump/coredump.c: "Process 4321
    # (python3) of user 1000 dumped core.") (tools41)
    r"|\bof user \d{1,10} dumped core\b"
    # a crash in the operating system's words (tools40): Windows' access-violation dialog ("The
    # instruction at 0x... referenced memory at 0x.... The memory could not be read."), its event
    # log's Application Error record ("Faulting application name: python.exe, ..."), macOS's Mach
    # exceptions as lldb and crash reports name them ("stop reason = EXC_BAD_ACCESS (code=1, ...)")
    r"|\breferenced memory at 0x[0-9A-Fa-f]{1,16}\b|\bFaulting (?:application|module) name: \S"
    r"|\bEXC_(?:BAD_ACCESS|BAD_INSTRUCTION|ARITHMETIC)\b"
    # glibc's aborts on a corrupted heap or stack (malloc/malloc.c malloc_printerr: "free(): invalid
    # pointer", "double free or corruption (out)", "malloc(): corrupted top size", "corrupted size
    # vs. prev_size"; debug/fortify_fail.c: "*** stack smashing detected ***: terminated") and
    # libstdc++'s __cxa_pure_virtual ("pure virtual method called"): the process aborts next
    r"|\b(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc|tcache_thread_shutdown)"
    r"\(\): (?:invalid|corrupted|memory corruption|double free|unaligned|unsorted)"
    r"|\bdouble free or corruption \(|\bcorrupted (?:size vs\. prev_size|double-linked list)"
    r"|\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*|\bpure virtual method called\b"
    # gdb's backtrace of a process that aborted ("#1  0x00007ffff7a44801 in abort () from
    # /lib/x86_64-linux-gnu/libc.so.6", "#0  __pthread_kill_implementation (...) at ./nptl/pthread_kill.c:44")
    r"|^#\d{1,3}\s{1,4}(?:0x[0-9a-f]{4,16} in )?(?:abort|raise|__GI_raise|__GI_abort|__pthread_kill\w{0,30}|"
    r"pthread_kill)"
    r" \()"
    # an exception that ended a thread: Python's threading.excepthook ("Exception in thread
    # Thread-3:", "Exception in thread Thread-1 (worker):") and the JVM ("Exception in thread \"main\"")
    r"|(?P<thread>^\s{0,8}Exception in thread \S"
    # the same of Python's other runtimes (tools40): asyncio's exception handler (asyncio/futures.py
    # and tasks.py: "Task exception was never retrieved", events.py Handle._run: "Exception in
    # callback ..."), uvicorn's ("Exception in ASGI application"), CPython's unraisable hook
    # (Python/errors.c PyErr_WriteUnraisable: "Exception ignored in: <function ...>")
    r"|^\s{0,8}(?:Task exception was never retrieved|Exception in (?:callback|ASGI application)\b"
    r"|Exception ignored in: \S))"
    # pytest's failure lines (_pytest/_code/code.py FormattedExcinfo.fail_marker "E"): the assertion
    # it rewrote and what it compared ("E       assert 0 == 1", "E        +  where 0 = len([])")
    r"|(?P<pytest>^E {3,16}(?:assert\b|\+{1,2} {1,4}where\b))"
    # a shell that could not run a command, in its own words: bash (execute_cmd.c: "bash: x:
    # command not found", file_error's "bash: ./train.sh: Permission denied", "-bash: /usr/bin/python:
    # No such file or directory", "bash: ./x.sh: /bin/bash^M: bad interpreter: ..."; in a script
    # "./run.sh: line 3: x: command not found"), dash (exec.c: "/bin/sh: 1: nvcc: not found",
    # "sh: 1: ./x: Permission denied"), zsh ("zsh: permission denied: ./run.sh", "zsh: command not
    # found: x"). Only the shell's own line: "Permission denied" elsewhere is no failure of a command
    r"|(?P<shell>^-?(?:/[\w./-]{0,60}/)?(?:ba|da|z|k|mk)?sh(?:-\d[\d.]{0,6})?: (?:line \d{1,7}: |\d{1,7}: )?"
    r"[^\n]{1,300}?: (?:Permission denied|command not found|not found|No such file or directory|bad "
    r"interpreter\b[^\n]{0,80})\s*$"
    r"|^[^\s:]{1,200}: line \d{1,7}: [^\n]{1,300}?: (?:Permission denied|command not found|No such file or "
    r"directory)\s*$"
    r"|^zsh: (?:permission denied|command not found|no such file or directory|exec format error): \S"
    # the interpreter's own line for a module `python -m` could not run (runpy._run_module_as_main:
    # "%s: %s" % (sys.executable, exc): "/usr/bin/python3: No module named torch") (tools40)
    r"|^[^\s:]{0,200}python[\d.]{0,5}(?:\.exe)?: (?:No module named \S|Error while finding module specification))"
    # (and capitalised, as Kubernetes' "Exit Code: 137", debuggers' and IDEs' "Exit code: 0xC0000005")
    # (not Windows' STATUS_CONTROL_C_EXIT, -1073741510 / 3221225786 / 0xC000013A, nor an IDE's
    # "exit code 130 (interrupted by signal 2: SIGINT)": the user pressed Ctrl+C, an interruption,
    # not a failure)
    r"|(?P<exit>\b[Ee]xit(?: ?[Cc]ode| [Ss]tatus)\s{0,4}[:=]?\s{0,4}" + _CTRL_C + r"-?[1-9]\d{0,10}\b"
    r"|exited with (?:code|status) " + _CTRL_C + r"-?[1-9]"
    # Windows' NTSTATUS in hex (0xC0000005 an access violation, 0xC0000409 a stack buffer overrun),
    # not 0x0
    r"|\b[Ee]xit(?:ed with)?(?: ?[Cc]ode| "
    r"[Ss]tatus)\s{0,4}[:=]?\s{0,4}0x(?![cC]000013[aA]\b)0{0,7}[1-9A-Fa-f][0-9A-Fa-f]{0,7}\b"
    r"|\bexitcode\s{0,4}:\s{0,4}" + _CTRL_C + r"-?[1-9]|\*\*\* \[[^\]\n]{1,200}\] Error [1-9]"
    # the same in words: "exited with a non-zero exit code", "returned a nonzero exit status"
    r"|\bnon-?zero exit(?: code| status)?\b"
    # (tools40) GNU time's "Command exited with non-zero status 1", docker's classic builder's "The
    # command '/bin/sh -c ...' returned a non-zero code: 1" (moby builder/dockerfile), a Python
    # child's repr "CompletedProcess(args=[...], returncode=1)", Code::Blocks' console runner's
    # "Process returned -1073741571 (0xC00000FD)" (0 on success)
    # (after the verb: "exit with a non-zero status if a check fails" is an option's help)
    r"|\b(?:exited|returned|terminated|finished)(?: with)?(?: an?)? non-?zero (?:return )?(?:code|status)\b"
    r"|\breturncode\s{0,2}[=:]\s{0,2}" + _CTRL_C + r"-?[1-9]"
    r"|\b[Pp]rocess returned " + _CTRL_C + r"-?[1-9]"
    # systemd's record of a unit's main process (src/core/service.c: "Main process exited,
    # code=exited, status=1/FAILURE", "code=killed, status=9/KILL", "code=dumped, status=11/SEGV")
    r"|\bcode=(?:exited|killed|dumped), status=(?!0/)\d{1,3}/[A-Z]{2,20}"
    # (tools41) the status alone, its "code=" cut off by a wrap or a paste ("status=1/FAILURE",
    # "(status=203/EXEC)"; systemd's exit_status_to_string names), and Neovim's :terminal record of
    # its job (src/nvim/channel.c channel_process_exit_cb: "[Process exited 1]"; 0 on success)
    r"|(?<![\w.-])status=(?!0/)\d{1,3}/[A-Z][A-Z_]{1,20}\b|\[Process exited " + _CTRL_C + r"-?[1-9]\d{0,10}\]"
    # a Windows status a bare number was read as (.numbers: "Command returned -1073741819
    # [STATUS_ACCESS_VIOLATION]", "returned 0xC00000FD [STATUS_STACK_OVERFLOW]", MSVC's C++ exception
    # "returned 0xE06D7363 [EH_EXCEPTION_NUMBER: ...]"); not STATUS_CONTROL_C_EXIT (Ctrl+C)
    r"|[0-9A-Fa-f] \[(?:STATUS_(?!CONTROL_C_EXIT\b)[A-Z_]{3,40}|EH_EXCEPTION_NUMBER)[\]:])"
    # (and "Cuda error 10 in file 'cuda_common.cu'", torch 0.x's "THCudaCheck FAIL file=... error=35")
    r"|(?P<cuda>CUDA error|Cuda error|THCudaCheck FAIL|CUDA_ERROR_[A-Z]|\bcudaError[A-Z]|CUBLAS_STATUS_[A-Z]"
    r"|CUDNN_STATUS_[A-Z]"
    # cuda-gdb's stop on a kernel's fault ("CUDA Exception: Warp Illegal Address") (tools40)
    r"|\bCUDA Exception: [A-Z]"
    # ggml's ggml_cuda_error (ggml-cuda.cu): the line after "CUDA error: <text>", where the
    # failed call was; the text before it names the cause
    r"|^\s{0,8}current device: -?\d{1,3}, in function \w{1,100} at )"
    r"|(?P<symbol>[Uu]ndefined symbol)"
    r"|(?P<oom>[Oo]ut of memory|\bOOM\b|oom-kill|OOMKilled)"
    r"|(?P<killed>\bKilled$|^\u5df2\u6740\u6b7b$"
    # "Killed" as a Chinese sentence quotes the shell's report, glued to the ideographs before it
    # ("the program showed Killed" in Chinese, ShuweiShao/AF-SfMLearner#38), where \b sees no boundary
    r"|(?<=[\u4e00-\u9fff])Killed(?![A-Za-z])"
    # the shell's report retyped in lower case on a line of its own (the only words on the line)
    r"|^\s*killed\s*$)"
    # a record a logger wrote at ERROR/CRITICAL level (Python logging's "ERROR 05-26 ...",
    # "%(asctime)s - %(name)s - ERROR - ...", loguru's "| ERROR    |", "[ERROR]", and such a
    # record quoted in a sentence: 'it reported "ERROR - No OpenCL kernel for Device ..."')
    # logrus (docker, containerd, the NVIDIA container toolkit): "ERRO[0001] ...", "level=error msg=..."
    # the lower- and mixed-case tags of other loggers and runners (Node's and Rust's "[error] ...",
    # "[Fatal]", a test runner's or an init system's "[FAIL] ...", "[FAILED] ..."), before text
    r"|(?P<level>\[(?:error|Error|fatal|Fatal|ERR|FAIL|FAILED)\][ \t:]"
    # (tools41) the short tag some tools start an error line with ("ERR: ...", node-gyp's and
    # older npm's "ERR! ...": gyp/lib/log.js, npmlog's level "ERR!"), not "STDERR:", "ERR_..."
    # nor a count ("ERR: 0")
    r"|(?:^|(?<=\s))ERR[:!] {1,4}(?!0\b|[Nn]one\b)\S"
    # Go's log/slog prints its levels in capitals ("time=... level=ERROR source=server.go:421 msg=...", ollama),
    # zap, logrus and slog's JSON handlers a "level" key beside the message (lead42); a config's "log_level" is
    # not a record, nor is a "level" key without a message
    r"|\"(?:msg|message)\" ?: ?\"[^\n]{0,2000}\"(?:level|severity)\" ?: ?\"(?:error|ERROR|fatal|FATAL|panic|PANIC)\""
    r"|\"(?:level|severity)\" ?: ?\"(?:error|ERROR|fatal|FATAL|panic|PANIC)\"(?=[^\n]{0,2000}\"(?:msg|message)\" ?:)"
    r"|^(?:ERRO|FATA)\[\d|\blevel=(?:error|fatal|panic|ERROR|FATAL|PANIC)\b"
    r"|^ERROR\s|^[\w.-]{1,30}: ERROR\s|\[(?:ERROR|CRITICAL|"
    r"FATAL)\]| - (?:ERROR|CRITICAL) - |[\"'`(](?:ERROR|CRITICAL|FATAL) - |\|\s(?:ERROR|CRITICAL)\s{1,8}\|"
    r"|^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,]?\d{0,9}\s{1,4}(?:ERROR|CRITICAL)\s)"
    # the failure lines of the tools GPU users paste output from, each in the tool's own words:
    # apt ("E: ..."), dpkg, pip's resolver, uv, mamba, git, docker/podman, kubectl events and pod
    # states, Slurm (scontrol/sacct states with their exit code, slurmstepd's banner), torch
    # elastic's failure table, Go and Rust panics, C++ std::terminate, CMake, GNU make, cmd.exe
    r"|(?P<tool>^\[?[EF]\d{4} \d\d:\d\d:\d\d\.\d{1,9}\s{1,8}\d{1,9} [\w./-]{1,200}:\d{1,6}\]|^\s{0,8}E: |^dpkg: error|"
    r"^Errors were encountered while processing|No solution found when resolving"
    r"|ResolutionImpossible|\b(?:error|critical)\s{1,8}libmamba\b|^fatal: |Error response from daemon"
    r"|OCI runtime (?:create|exec|start) failed|CrashLoopBackOff|ImagePullBackOff|ErrImagePull"
    r"|\bBack-off restarting|\bFailed[A-Z][a-z]{2,30}\b|Insufficient nvidia\.com/gpu"
    r"|\b(?:OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL|PREEMPTED|DEADLINE|TIMEOUT|CANCELLED\+?(?: by \d{1,10})?)\s{1,20}"
    r"-?\d{1,3}:\d{1,3}\b|\bCANCELLED AT \d|DUE TO (?:TIME LIMIT|PREEMPTION|NODE FAILURE)|Job step aborted"
    # (tools40) Slurm's failed job states as scontrol prints them ("JobState=OUT_OF_MEMORY Reason=...")
    # and sacct's state column cut to its width ("OUT_OF_ME+"), and a job's exit code or signal
    # ("ExitCode=1:0", "ExitCode=0:9"; src/common/slurm_protocol_defs.c job_state_string)
    r"|\b(?:Job)?State=(?:OUT_OF_MEMORY|FAILED|NODE_FAIL|BOOT_FAIL|TIMEOUT|DEADLINE)\b|\bOUT_OF_ME\+"
    r"|\bExitCode=(?:[1-9]\d{0,2}:\d{1,3}|\d{1,3}:[1-9]\d{0,2})\b"
    r"|Root Cause \(first observed failure\)|^\s{0,8}panic: |^goroutine \d{1,9} \[running\]"
    r"|thread '[^'\n]{1,100}'(?: \(\d{1,10}\))? panicked|terminate called (?:after throwing|without an active|"
    r"recursively)|\bwhat\(\):"
    r"|CMake Error|Configuring incomplete|make(?:\[\d{1,3}\])?: \*\*\* (?!\[)|is not recognized as (?:an internal or "
    r"external|the name of a cmdlet)"
    r"|Error executing job with overrides"
    # a test or a sample's verdict: the CUDA samples' checkResult ("Result = FAIL", deviceQuery,
    # bandwidthTest), unittest's TextTestResult ("FAIL: test_x (module.Case)"); npm's error
    # lines ("npm ERR! code ELIFECYCLE"; npm 10: "npm error"); Docker Compose's schema check
    # ("The Compose file './docker-compose.yml' is invalid because:"); an uncaught exception in
    # .NET's and MSVC's debugger's words ("Unhandled exception. System.DllNotFoundException: ...",
    # "Unhandled exception at 0x00007FF8... in python.exe: ...")
    r"|^\s{0,8}Result = FAIL\b|^FAIL: \w{1,200} \(|^npm (?:ERR!|error) |The Compose file '[^'\n]{1,300}' is invalid\b"
    r"|^\s{0,8}Unhandled [Ee]xception(?:\. |: | at 0x)"
    # unittest's verbose verdict (unittest/runner.py TextTestResult: "test_x (mod.Case) ... FAIL",
    # "... ERROR"); Click's Abort (click/exceptions.py, core.py main: "Aborted!") and a program's
    # "Aborting!" alone on its line; Rust's stack overflow (library/std/src/sys/pal/unix/
    # stack_overflow.rs: "thread 'main' has overflowed its stack"); C++'s std::bad_alloc
    # (libstdc++'s what(): "std::bad_alloc") named anywhere
    r"|^[^\n]{1,300}? \.\.\. (?:FAIL|ERROR)\s*$|^\s{0,8}Abort(?:ed|ing)(?:!|\.{1,3})\s*$"
    r"|\bhas overflowed its stack\b|\bstd::bad_alloc\b"
    # Open MPI's report of a process's fatal signal (opal/util/stacktrace.c: "[host:123] Failing at
    # address: (nil)"), Lua's traceback header (lua.c msghandler: "stack traceback:"), GStreamer's
    # missing element (gst-launch: "No such element or plugin 'dtls'")
    r"|\bFailing at address: |^\s{0,8}stack traceback:\s*$|\bNo such element or plugin\b"
    # a server's access log that answered a request with a 5xx status (uvicorn's, gunicorn's and
    # werkzeug's common log format, at INFO: '"POST /generate HTTP/1.1" 500 Internal Server Error'):
    # the request failed inside the server, whatever the record's level; a 4xx is the client's
    r"|\"[A-Z]{3,7} [^\"\n]{1,500} HTTP/\d(?:\.\d)?\" 5\d\d\b"
    # the same answer seen from the client (tools42): a response's status line ("HTTP/1.1 502 Bad Gateway",
    # curl -i, a proxy in front of a GPU service), requests' Response repr ("<Response [503]>"), a proxy's
    # page title ("502 Bad Gateway", nginx's ngx_http_special_response.c)
    r"|\bHTTP/\d(?:\.\d)? 5\d\d\b(?![.,]\d)|<Response \[5\d\d\]>|\b50[234] (?:Bad Gateway|Service Unavailable"
    r"|Gateway Time-?out)\b)"
)
SOFT_ERROR_RE = re.compile(
    r"(?P<failed>\b(?:[Ff]ailed|FAILED|[Ff]ails)\b"
    # the bare verb, as many C and C++ programs word a failed step ("fail to initialise cuda
    # backend", "Fail to load model"): only before a verb of a step, and not a guess ("it would
    # fail to build") nor a denial ("does not fail to load")
    r"|(?<!would )(?<!could )(?<!might )(?<!will )(?<!may )(?<!not )(?<!n't )(?<!ever )"
    r"\b(?:[Ff]ail|FAIL|[Ff]ailing) to (?:initiali[sz]e|load|open|find|create|allocate|start|connect|import|launch|read"
    r"|bind|build|compile|get|set|map|register|parse|call|execute|init)\b)"
    r"|(?P<missing>No such file or directory|No such device|\bnot found\b|[Cc]annot (?:open|find|load|import|"
    r"allocate|access|connect|locate|create|execute|read|stat|bind|be loaded)|Cannot [a-z]|[Uu]nable to\b"
    r"|[Cc]ould not (?:find|load|open|locate|import|be found|be loaded|initiali[sz]e|start|connect|create|allocate"
    r"|access|determine|resolve|execute|run|read|write|get|bind|launch|compile|build)\b|No matching distribution found"
    # a shortage in words ("not enough memory", "Insufficient GPU memory", "insufficient shared memory")
    r"|(?<!if )(?<!If )(?<!when )(?<!unless )(?<!avoid )\b(?:[Nn]ot enough|NOT ENOUGH|[Ii]nsufficient|INSUFFICIENT) "
    r"(?:GPU |gpu |device |host |system |shared |CUDA |cuda"
    r" |video |free |disk |physical |virtual )?(?:memory|MEMORY|RAM|VRAM|space|disk space)\b"
    # the same in contracted or split spelling ("Can't load tokenizer for ...", "couldn't find
    # libcudart.so", "Can not open shared object"): ASCII and typographic apostrophes
    r"|(?:Can['\u2019]?t|CAN['\u2019]?T|Can not) [a-z]|\bcan(?:['\u2019]t| not) (?:open|find|load|import|allocate|"
    r"access"
    r"|connect|locate|create|execute|read|stat|bind|be loaded)\b|[Cc]ouldn['\u2019]t (?:find|load|open|locate|import"
    r"|be found|be loaded|connect|allocate|access|create|initiali[sz]e|start|read)\b)"
    # ("abnormally": Windows' and Java's "The process terminated abnormally", MPI's "exited abnormally")
    r"|(?P<exited>(?:exited|terminated|died|crashed) (?:unexpectedly|abnormally)|\b(?:worker|actor|raylet) died\b"
    r"|\b[Kk]ernel (?:crashed|died|appears to have died)"
    # Ray's GCS on a node whose raylet stopped answering (gcs_health_check_manager / node manager:
    # "The node with node id: ... has been marked dead because the detector has missed too many
    # heartbeats from it.")
    r"|\bhas been marked dead because\b"
    # a launcher's report on what it runs: text-generation-inference's launcher/src/main.rs
    # (tracing::error! "Shard {rank} failed to start", "Shard {rank} crashed", "Webserver Crashed"),
    # any program's "<Name> Crashed" / "*** WEBSERVER CRASHED"
    r"|\b[Ss]hard \d{1,4} (?:failed|crashed|terminated)\b|(?<=\w )(?:Crashed|CRASHED)\b(?!:?\s{0,3}0\b)"
    # a panic in other words than Go's and Rust's own lines ("the worker panicked", the kernel's
    # "Kernel panic - not syncing"), an exception no handler caught ("uncaught exception: ...",
    # V8's and Node's "Uncaught TypeError", "caught exception: bad_alloc"), a web UI's toast
    # ("Something went wrong", Gradio's and many front ends' generic failure), and an HTTP
    # failure status a client printed ("status code 500", "Error 503", "returned status 404")
    r"|\bpanicked\b|\b[Kk]ernel panic\b|\b(?:[Uu]ncaught|[Uu]nhandled|UNCAUGHT|UNHANDLED) (?:[Ee]xception|EXCEPTION|"
    r"[Ee]rror|[A-Z]\w{1,40}Error)\b|\b[Cc]aught (?:an )?exception:|(?<!if )(?<!If )\b[Ss]omething went wrong\b"
    r"|\b(?:[Ss]tatus(?: code)?|STATUS|HTTP(?: [Ee]rror)?|[Ee]rror|ERROR|[Rr]esponse code):? [45]\d\d\b(?![.,]\d))"
    # a failed status in absl's words (absl/status/status.cc StatusCodeToString), as XLA, JAX,
    # TensorFlow and gRPC print one before its message ("INVALID_ARGUMENT: Unknown ptxas version",
    # "INTERNAL: ..."); soft, since JAX logs its back-end probes at INFO ("NOT_FOUND: Could not
    # find registered platform with name: \"rocm\"")
    r"|(?P<status>(?<![\w.])(?:INVALID_ARGUMENT|FAILED_PRECONDITION|RESOURCE_EXHAUSTED|PERMISSION_DENIED"
    r"|DEADLINE_EXCEEDED|OUT_OF_RANGE|UNIMPLEMENTED|DATA_LOSS|UNAUTHENTICATED|INTERNAL|NOT_FOUND|UNAVAILABLE): \S)"
    r"|(?P<timeout>timed out|Watchdog caught|Timeout at |[Tt]imeout (?:expired|exceeded|reached|error)"
    r"|[Dd]eadline exceeded|\b(?:[Cc]onnection|was) refused\b)"
    r"|(?P<errno>\[Errno -?\d{1,5}\]|(?<![\w-])errno\s{0,2}[=:]?\s{0,2}-?\d"
    # the C library's strerror() text ending a line, as perror() and err() print it ("cp: error
    # writing 'x': No space left on device", "mount: /mnt: Operation not permitted") or alone
    # (glibc string/_strerror.c, sysdeps/gnu/errlist.h); "No such file or directory", "Cannot
    # allocate memory" and "Connection refused" are read above
    r"|(?:^\s{0,8}|: |\()(?:Operation not permitted|Permission denied|Input/output error|Device or resource busy"
    r"|No space left on device|Read-only file system|Too many open files(?: in system)?|Broken pipe"
    r"|Connection reset by peer|Text file busy|Invalid argument|Operation not supported|Bad address|No such process"
    r"|Network is unreachable|No route to host|Address already in use|Disk quota exceeded|Stale file handle"
    r"|Function not implemented|Argument list too long|Structure needs cleaning|Value too large for defined data type"
    r"|Protocol error|Software caused connection abort|Transport endpoint is not connected|Remote I/O error"
    r"|Invalid cross-device link|Resource temporarily unavailable|Exec format error|No such device or address"
    # Go's syscall.Errno texts, lower case (syscall/zerrors_linux_amd64.go errors: "open x.yaml: no
    # such file or directory", "dial unix /var/run/docker.sock: connect: permission denied")
    r"|no such file or directory|permission denied|operation not permitted|input/output error|no space left on "
    r"device|read-only file system|too many open files|connection reset by peer|invalid argument|exec format error"
    r"|device or resource busy)"
    r"[.)'\"]?\s*$"
    # a refusal in other programs' words (Windows' ERROR_ACCESS_DENIED as FormatMessage words it:
    # "Access is denied."; MySQL's "Access denied for user 'root'@'localhost'", S3's
    # "Access Denied", a registry's "denied: requested access to the resource is denied")
    r"|\b[Aa]ccess (?:is )?[Dd]enied\b|^denied: \S)"
    r"|(?P<hang>\b(?:hangs?|hanging|hung|stuck|stall(?:s|ed|ing)|freez(?:es|ing)|frozen|deadlock(?:s|ed)?)\b)"
    # a run that works, but on the CPU, in users' words: the GPU not used, the CPU build of
    # torch named ("it uses the CPU instead", "installed the cpu version of torch", "Torch
    # changed to the cpu", Chinese "CPU\u7248\u672c"); and a process the kernel killed ("the
    # process was killed"): issues that paste no error line still say what went wrong
    r"|(?P<cpu>\b(?:instead of|rather than) (?:the |my |a )?GPU\b|\bCPU instead\b"
    r"|\bnot (?:using|use|utilizing|detecting|invoke|invoking) (?:the |my |any )?GPU\b"
    r"|\b(?:install(?:s|ed)?|got|gets|is|was|resulted in|gave|pulled|pulls|downloaded) (?:the |a )?(?:CPU|"
    r"cpu)(?:-only)? (?:version|build) of (?:torch|pytorch|PyTorch|Torch)\b"
    r"|\b(?:torch|pytorch|PyTorch|Torch) (?:cpu|CPU) version (?:is |was |got |gets )?installed\b"
    r"|\b(?:torch|Torch|pytorch|PyTorch) (?:changed|switched|reverted) to (?:the )?(?:cpu|CPU)\b"
    r"|\b(?:torch|Torch|pytorch|PyTorch) without (?:the )?CUDA (?:version|support)\b"
    r"|(?<![A-Za-z])(?:CPU|cpu)\u7248\u672c)"
    r"|(?P<slain>\b(?:process|it|job|program|training|script) (?:was|is|will be|got|gets|get|being)"
    r"(?: directly| immediately| just| suddenly| automatically| forcibly| forcefully| always)? killed\b"
    # Ray's, Kubernetes' and Jupyter's nouns for what died ("Actor killed after ...", "the pod got killed")
    # (and "Process killed", "job killed abnormally")
    r"|\b(?:[Ww]orker|[Aa]ctor|[Tt]ask|[Pp]od|[Cc]ontainer|[Kk]ernel|[Nn]ode|[Rr]aylet|[Pp]rocess|[Jj]ob)s?"
    r" (?:was |is |got |gets |get |being )?killed\b"
    # a machine or a program that crashed, in the user's words ("it exhausts the RAM and the PC
    # crashes"; a bare "it crashes" is a sentence about a message it does not quote: "prose")
    r"|\b(?:PC|[Cc]omputer|[Mm]achine|[Ss]ystem|[Ss]erver|[Pp]rocess|[Pp]rogram|app|[Pp]ython|[Tt]raining|job|script|"
    r"[Ss]ession|[Nn]otebook|[Rr]untime)"
    r"(?: just| always| then| still| also)? (?:crashes|crashed|keeps crashing)\b)"
    # "error" / "reported an error" / "failed" in the languages users write issues in: Chinese,
    # Japanese, Korean, Russian (the message itself is often pasted in English around it)
    r"|(?P<foreign>\u9519\u8bef|\u62a5\u9519|\u5931\u8d25|\u5931\u6557|\u30a8\u30e9\u30fc|\uc624\ub958"
    r"|[\u041e\u043e]\u0448\u0438\u0431\u043a"
    # and German, French, Italian, Portuguese, Polish, Spanish: "Fehler", "fehlgeschlagen",
    # "Erreur", "\u00e9chec", "Errore", "Erro:", "B\u0142\u0105d", "fall\u00f3"
    r"|\bFehler\b|\bfehlgeschlagen\b|\b[Ee]rreur\b|(?<!\w)[\u00c9\u00e9]chec\b|\b[Ee]rrore\b|\bErro:"
    r"|\bB\u0142\u0105d\b|\bfall\u00f3\b)"
    # an issue's prose about a message it quotes ("it crashes with `...`", "I get an error
    # when calling `...`"); error_shape counts it only when the line quotes something
    r"|(?P<prose>\b(?:crash(?:es|ed)|segfaults|(?:seems?|started) to (?:break|crash|fail)|breaks (?:when|with|on|"
    r"after)|broke|(?:does|did|is)(?:n't| not) work(?:ing)?|stopped working"
    r"|(?:get|gets|got|getting|throws?|raises?|seeing)(?: (?:an|the|this|a|same|following)){0,2}"
    r" (?:error|exception|crash|segfault)s?)\b)"
)
#: The last soft shape: an error word itself, in a line no logger marked below ERROR ("I am
#: getting the error", "Backend worker is gone and cannot be restarted", "Device=0 CANNOT Access
#: Peer Device=3", "-> unknown error"). Not a part of a name (-Wno-error, error_msgs,
#: errors.py, on_failure), a quoted name (JSON's "error": null), an argument or a call in code
#: (set_verbosity(ERROR), on_error=...) nor a metric ("val error rate 0.0312":
#: HEALTHY_ERROR_WORDS_RE).
#: Searched apart from SOFT_ERROR_RE so that a prose or hang match that does not count
#: (no quoted message, no word of the stack) still leaves the word to be judged.
WORD_ERROR_RE = re.compile(
    r"(?<![-\w./\"'(=\[{<])(?:[Ee]rrors?|ERRORS?|[Ff]atal|FATAL|[Cc]annot|CANNOT|[Ff]ailures?|"
    r"FAILURES?)(?![-\w/\"'(=]|\.\w)"
)
#: counts and fallback notices that carry an error word on a healthy run: "0 failed",
#: "failures=0", "not found, using regular one", CMake's "-- ... - not found" status lines and
#: debconf's "unable to initialize frontend: Dialog" (it falls back to the next frontend; every
#: apt-get in a Dockerfile prints it), and any line that says what it falls back to (torch's
#: "could not find ninja.. Falling back to using the slow distutils backend")
HEALTHY_ERROR_WORDS_RE = re.compile(
    # (a count, not "Shard 0 failed to start", "rank 0 failed", "GPU 0 failed with ...")
    r"(?<!hard )(?<!ank )(?<!GPU )(?<!gpu )(?<!vice )(?<!ode )(?<!rker )(?<!cess )(?<!ask )(?<!lica )"
    r"\b0 (?:\w{1,12} )?(?:failed|errors?|failures?)\b(?!\s{1,3}(?:to|with|because|while|at)\b)|\b(?:failed|errors?|"
    r"failures?)\s{0,3}[=:]\s{0,3}0\b"
    r"|^-- |^debconf: "
    # (not a fallback from the GPU to the CPU: "Failed to load libcuda.so, falling back to CPU" is
    # a GPU path that failed and was swallowed, as FLA's "roll back to CPU")
    r"|not found[,.;]?\s{1,3}(?:using|falling back|fall back|will use|skipping|defaulting|trying)(?! (?:to )?(?:the "
    r")?(?:CPU|cpu)\b)"
    r"|\b[Ff]alling back to\b(?! (?:the )?(?:CPU|cpu)\b)"
    # a notice that names its own fallback and says the run is fine (XLA's "Can't find ptxas binary
    # in ${CUDA_DIR}/bin.  Will back to the GPU driver for PTX -> sass compilation. This is OK so
    # long as you don't see a warning below ...")
    r"|\b[Ww]ill (?:fall ?back|back) to\b|\bThis is OK so long as\b"
    r"|\bif (?:not found|it fails)|\bno errors?\b"
    # a setting or a note about errors, not one ("ignore errors", "--ignore-errors", "errors: []",
    # "error_count=0", "error count: 0", "Not found: 0", "# if this fails, try again")
    r"|\b[Ii]gnor(?:e|es|ed|ing)[ _-](?:all |any )?(?:errors?|failures?)\b"
    r"|\b(?:[Ee]rrors?|[Ff]ailures?)[ _][Cc]ount\s{0,3}[=:]\s{0,3}0\b|\b[Nn]ot [Ff]ound\s{0,3}[=:]\s{0,3}0\b"
    r"|\b(?:[Ee]rrors?|[Ff]ailures?)\s{0,3}[=:]\s{0,3}(?:\[\]|\{\}|None\b|null\b|none\b)"
    r"|\bif (?:this|that|it|\w{1,20}) (?:fails|failed|errors)\b"
    # a metric named error, with its value: "val error rate 0.0312", "error = 0.12", "top-1 error: 23.1"
    # (not an HTTP status: "Error 500", "error 404")
    r"|\b[Ee]rrors?\s{0,3}(?:rate\s{0,3})?[=:]?\s{0,3}(?![45]\d\d(?:\s|$))\.?\d[\d.]{0,11}%?(?:\s|,|$)"
    r"|\b[Nn]o (?:errors?|failures?)\b"
    r"|\bwithout (?:any )?errors?\b|\b(?:errors?|failures?) (?:were |was )?(?:found|detected|reported)?:? ?(?:none|0)\b"
    # "no error(s)" in Chinese and Japanese
    r"|\u6ca1\u6709\u9519\u8bef|\u65e0\u9519\u8bef|\u30a8\u30e9\u30fc\u306a\u3057"
    # docker run's note before it pulls an image it does not have yet
    r"|^Unable to find image '[^'\n]{1,300}' locally$"
    # nvidia-smi -q's flags when nothing happened ("Remapping Failure Occurred : No"), and the
    # kernel's note on every load of an unsigned out-of-tree module (the module loads; Secure
    # Boot's refusal reads "Key was rejected by service" / "Required key not available")
    r"|\b(?:Failure|Error)s? Occurred\s{0,40}:\s{0,3}(?:No|None|N/A)\b"
    r"|module verification failed: signature and/or required key missing - tainting kernel"
    # a tree walk's note on a directory it may not read (findutils, du: "find: '/proc/1/map_files':
    # Permission denied"): the walk goes on and the paste's point is what it found
    r"|^(?:find|du): [^\n]{1,300}: Permission denied\s*$"
    # a logging level in a configuration dump ("log_level: ERROR", "'level': 'error'", "LOG_LEVEL=FATAL",
    # "verbosity = error"): a setting, what a logger will print, not a record of an error (tools42)
    r"|\b(?:[Ll]og_?[Ll]evel|LOG_?LEVEL|[Ll]evel|LEVEL|[Vv]erbosity|VERBOSITY|[Ss]everity|[Tt]hreshold)[\"']?\s{0,3}"
    r"[=:]\s{0,3}[\"']?(?:ERROR|[Ee]rror|FATAL|[Ff]atal|CRITICAL|[Cc]ritical)[\"']?(?=\s{0,3}(?:[,;}\])]|$))"
)
#: notices that libraries print on healthy runs (at start-up, or as a performance hint),
#: whatever their level or shape (an ``E`` glog record, a ``UserWarning``): TensorFlow/XLA's duplicate
#: factory registration
#: (xla/stream_executor/cuda/cuda_{dnn,fft,blas}.cc "Unable to register cuDNN factory: Attempting
#: to register factory for plugin cuDNN when one has already been registered"), TF-TRT's missing
#: optional TensorRT (tensorflow/compiler/tf2tensorrt: "TF-TRT Warning: Could not find TensorRT",
#: "Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, ..."),
#: JAX's fork warning (jax/_src/xla_bridge.py _at_fork: every DataLoader worker prints it) and
#: CuPy's CUDA_PATH note (cupy/_environment.py: wheels carry their own libraries)
STARTUP_NOTICE_RE = re.compile(
    r"Unable to register cu(?:DNN|FFT|BLAS) factory: Attempting to register factory for plugin"
    r"|TF-TRT Warning: Could not find TensorRT"
    # torchvision/io/_video_opt.py: its optional video ops are absent from the pip wheels, said on import
    r"|video reader based on ffmpeg c\+\+ ops not available"
    r"|Cannot dlopen some TensorRT libraries\. If you would like to use Nvidia GPU with TensorRT"
    # TensorFlow 2.9+ (tensorflow/core/util/port.cc): a note on numerics, printed on every start
    r"|oneDNN custom operations are on\. You may see slightly different numerical results"
    r"|os\.fork\(\) was called\. os\.fork\(\) is incompatible with multithreaded code"
    r"|Set CUDA_PATH environment variable if CuPy fails to load"
    # performance notices of a run that goes on: the BFC allocator's retry with less memory
    # (xla/tsl/framework/bfc_allocator.cc), CuPy's synchronous-copy fallback
    # (cupy/_core/core.pyx _alloc_async_transfer_buffer), Numba's occupancy hint
    # (numba/cuda/dispatcher.py NumbaPerformanceWarning)
    r"|The caller indicates that this is not a failure"
    r"|Using synchronous transfer as pinned memory \(\d{1,20} bytes\) could not be allocated"
    r"|Grid size \d{1,12} will likely result in GPU under-utilization"
    # torch's other back ends (harvh): the MPS CPU fallback of an operator (aten/src/ATen/mps/
    # MPSFallback.mm mps_fallback, with PYTORCH_ENABLE_MPS_FALLBACK=1 or for the ops always routed
    # there), the MPS int64 reduction cast (native/mps/operations/ReduceOps.mm) and ROCm's
    # hipBLASLt fallback to hipBLAS (aten/src/ATen/Context.cpp) run on
    r"|is not currently supported on the MPS backend and will fall back to run on the CPU"
    r"|MPS: no support for int64 (?:reduction|min/max) ops, casting it to int32"
    r"|Attempting to use hipBLASLt on an? unsupported architecture! Overriding blas backend to hipblas"
    # libdrm's optional marketing-name table, missing on many ROCm hosts and images (amdgpu_asic_id.c)
    r"|^amdgpu\.ids: No such file or directory"
    # torch.distributed notices of runs that go on (docs/dev/harvest-harvf.md): c10d's IPv6
    # attempts on hosts without IPv6 (torch/csrc/distributed/c10d/socket.cpp, W-level, IPv4 is
    # tried next) and ProcessGroupNCCL's device guess (every init_process_group without device_id)
    r"|The server socket cannot be initialized on \[::\]:\d{1,5} \(errno: 97 - Address family not supported"
    r"|The client socket cannot be initialized to connect to \[[^\]\n]{1,200}\]:\d{1,5} \(errno: 97 - Address family"
    r"|The IPv6 network addresses of \([^)\n]{1,200}\) cannot be retrieved \(gai error"
    r"|Guessing device ID based on global rank\. This can cause a hang"
    r"|to perform barrier as devices used by this process are currently unknown"
    # Megatron-core's norm fallback at import (megatron/core/fusions/fused_layer_norm.py:
    # warnings.warn('Apex is not installed. Falling back to Torch Norm')): the run goes on
    r"|Apex is not installed\. Falling back to Torch Norm"
    # openai-whisper whisper/transcribe.py: a run on the CPU (asked for, or the only device) casts
    # to float32 and goes on
    r"|FP16 is not supported on CPU; using FP32 instead|Performing inference on CPU when CUDA is available"
    # LostRuins/koboldcpp koboldcpp.py: a CPU without AVX2 gets the failsafe build, which runs
    r"|NoAVX2 library file not found\. Failsafe library will be used"
    # torch/utils/cpp_extension.py _get_cuda_arch_flags: a UserWarning on every extension build
    # without TORCH_CUDA_ARCH_LIST (it builds for the visible cards and goes on)
    r"|TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation"
    # torch's NNPACK on a CPU without AVX2 / a VM's masked flags (aten/src/ATen/native/NNPACK.cpp
    # init_nnpack: TORCH_WARN_ONCE "Could not initialize NNPACK! Reason: Unsupported hardware."):
    # convolutions take another path and the run goes on
    r"|Could not initialize NNPACK! Reason: Unsupported hardware"
    # nvcc's note that it drops a -std= its host compiler has no option for (MSVC has no C++11 mode
    # and defaults to C++14; a gcc that predates the dialect) and compiles on: where the dialect
    # mattered, the compiler's own error follows and is the reading (tools32, docs/dev/tools32.md)
    r"|The -std=c\+\+\w{1,4} flag is not supported with the configured host compiler"
    # IPython's note that its own command-history database could not be written (the SQLite file
    # in ~/.ipython/profile_default is locked, read-only or damaged): the session runs on and only
    # the history is lost (ipython IPython/core/history.py HistorySavingThread.run; tools33)
    r"|The history saving thread hit an unexpected error \(\w{1,40}\("
)
#: the literals one of which every STARTUP_NOTICE_RE match holds (a cheap test before the regex)
_STARTUP_NOTICE_WORDS = tuple(needles_of(STARTUP_NOTICE_RE.pattern))

#: a clue literal shaped like a host name or a path: it names the place even inside a link
URL_SHAPED_CLUE_RE = re.compile(r"[./\\]")
#: a shell command that prints one variable's value on the next line (``$ echo $LD_LIBRARY_PATH``,
#: ``echo "${CUDA_HOME}"``, ``printenv LD_LIBRARY_PATH``): a clue on it is recorded as ``VAR=value``
#: with the value of the line after it, so that a refine's context reads the value as it reads an
#: assignment (tools34 left ``echo $LD_LIBRARY_PATH`` with the CUDA path on the next line unread)
ECHO_VAR_RE = re.compile(r"(?:^|[\s$#>])(?:echo\s{1,4}[\"']?\$\{?([A-Za-z_]\w{1,60})\}?[\"']?"
                         r"|printenv\s{1,4}([A-Za-z_]\w{1,60}))\s*$")
#: the value line such a command prints: one word (a path list, an index list), no prompt
ECHO_VALUE_RE = re.compile(r"^\s*([^\s$#>][^\s]{0,1000})\s*$")
_URL_START_RE = re.compile(r"(?:https?|ftp)://|www\.")


def _in_url(body: str, pos: int) -> bool:
    """Whether ``body[pos]`` lies inside a link (the whitespace-free word around it starts a URL)."""
    start = pos
    while start > 0 and pos - start < 300 and not body[start - 1].isspace() and body[start - 1] not in "(<[\"'":
        start -= 1
    return bool(_URL_START_RE.match(body, start))


def startup_notice(text: str) -> bool:
    """True when ``text`` is one of :data:`STARTUP_NOTICE_RE`'s healthy start-up notices."""
    return any(w in text for w in _STARTUP_NOTICE_WORDS) and STARTUP_NOTICE_RE.search(text) is not None

#: a hang counts as an error only next to a word of the GPU stack
HANG_CONTEXT_RE = re.compile(
    r"GPU|CUDA|NCCL|cuda|nccl|[Aa]ll[Rr]educe|all_reduce|\brank|torchrun|DDP|barrier|collective|"
    r"init_process_group|distributed|[Tt]raining|[Dd]ata[Ll]oader|kernel"
)
#: the log level of a record: INFO/DEBUG (Python logging, glog ``I1201``, ``[I1201``, NCCL INFO,
#: TensorFlow's glog records without a date, ``W tensorflow/.../dso_loader.cc:64]``) or
#: WARNING; soft error words in such records are not errors
INFO_LEVEL_RE = re.compile(r"^[^\n]{0,60}?(?:\b(?:INFO|DEBUG|TRACE|NOTICE)\b|(?:^|\[)[IVD]\d{4} \d\d:\d\d"
                           r"|(?:^|[\s:])I [\w/.-]{1,120}\.(?:cc|cpp|h):\d{1,6}\]"
                           # onnxruntime's logger ("[I:onnxruntime:, ...]", "[V:onnxruntime:...]") and
                           # TensorRT's Python logger ("[TRT] [I]", "[TRT] [V]")
                           r"|\[[IV]:onnxruntime:|\[TRT\] \[[IV]\])")
WARN_LEVEL_RE = re.compile(r"^[^\n]{0,60}?(?:\b(?:WARN|WARNING)\b|(?:^|\[)W\d{4} \d\d:\d\d"
                           r"|(?:^|[\s:])W [\w/.-]{1,120}\.(?:cc|cpp|h):\d{1,6}\]"
                           # onnxruntime's "[W:onnxruntime:, transformer_memcpy.cc:74 ApplyImpl] ..." and
                           # TensorRT's "[TRT] [W] ..." (harvd)
                           r"|\[W:onnxruntime:|\[TRT\] \[W\])")
#: the end of an exception class name: ``RuntimeError``, ``torch.OutOfMemoryError``, in a
#: sentence, in backticks or after a prefix (the name itself is read backwards in Python)
_EXC_NAME_END_RE = re.compile(r"(?:Error|Exception)\b")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


def exception_name(text: str) -> Optional[str]:
    """The first exception class name anywhere in ``text`` (``AssertionError`` in
    "terminated with the AssertionError", ``torch.OutOfMemoryError`` after a prefix), else
    None. Linear: each candidate end is found by one regex, the name read back at most 80
    characters, and at most 20 candidates are looked at."""
    for n, m in enumerate(_EXC_NAME_END_RE.finditer(text)):
        if n >= 20:
            break
        start = end = m.end()
        while start > 0 and end - start < 80 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name = text[start:end].strip(".")
        if name and name != "Exception" and "Warning" not in name and _is_exception_type(name):
            return name
    return None


def warning_line(text: str) -> bool:
    """Whether ``text`` is a Python warning's own line, ``UserWarning: ...``, after any logger's
    prefix (``2024-05-01 12:00:00 WARNING  FutureWarning: ...``), outside a traceback: the
    category's name in the exception's place (tools40)."""
    exc = exception_line(strip_log_prefix(text.lstrip()))
    return exc is not None and exc[0].endswith("Warning")


#: a library's warning printed without a level, held back as a WARNING record's words are (tools41):
#: transformers' notice at import without torch (transformers/__init__.py logger.warning_advice "PyTorch
#: was not found. Models won't be available ..."), which every tokenizer-only process prints. By the
#: documented rule it alone is still a possible failure (its "not found"), never an error line; a
#: signature (transformers-no-framework-notice) reads it where a model needed torch
HELD_BACK_NOTICE_RE = re.compile(r"PyTorch was not found\. Models won't be available")


def error_shape(text: str) -> Optional[str]:
    """The shape of error ``text`` shows ("label", "crash", "exit", "exception", "failed", ...),
    or None for a line no user would call an error. Healthy counts ("0 failed"), fallback
    notices ("not found, using ...") and soft words in INFO or WARNING records are not errors;
    "hang"/"stuck" are only next to a word of the GPU stack."""
    if not text:
        return None
    text = text[:ERROR_SHAPE_CHARS]
    if startup_notice(text):
        return None
    m = HARD_ERROR_RE.search(text)
    if m:
        return m.lastgroup
    if exception_line(strip_log_prefix(text.lstrip())):
        return "exception"
    leveled = INFO_LEVEL_RE.match(text) or WARN_LEVEL_RE.match(text) or HELD_BACK_NOTICE_RE.search(text)
    if not leveled and exception_name(text):
        return "exception"
    if leveled:
        return None
    m = SOFT_ERROR_RE.search(text)
    if m is not None and HEALTHY_ERROR_WORDS_RE.search(text):
        return None
    if m is not None and not (m.lastgroup == "hang" and not HANG_CONTEXT_RE.search(text)) \
            and not (m.lastgroup == "prose" and not (_QUOTE_MARKS & set(text) or text.rstrip().endswith(":"))):
        return m.lastgroup
    if WORD_ERROR_RE.search(text) and (m is not None or not HEALTHY_ERROR_WORDS_RE.search(text)) \
            and not OPTION_HELP_RE.match(text):
        return "word"
    return None


#: The words of the documented rule (docs/explain.md, *Never silence on an error*) that
#: :func:`error_shape` holds back for precision: a failure stated in a WARNING record (a library
#: that swallowed a failure says so in a warning: "Triton is not supported on current platform,
#: roll back to CPU"), a hang or a timeout with no word of the GPU stack on its line, any signal.
SUSPECT_RE = re.compile(
    # each word as a statement, in any case (a sentence starts "Stuck at ..."), not a part of a
    # name or an option (the guards of WORD_ERROR_RE: error_msgs, -Werror, on_failure,
    # errors.py, "error": null)
    r"(?<![-\w./\"'(=\[{<])(?:fatal|errors?|failed|failures?|cannot|unable|not found|hangs?|hanging|hung|stuck"
    r"|freez(?:es|ing)|froze|frozen|deadlock(?:s|ed)?|timed out"
    # a timeout, not the setting of one ("timeout=1800", "Timeout: 30 s", "timeout of 600")
    r"|timeout(?!\s{0,3}(?:[=:(]|is |of |set|after \d|\d)))(?![-\w/\"'(=]|\.\w)"
    # a signal; bash's "Killed", not a count ("Killed 0 stale workers") nor prose ("is not killed")
    r"|\bsignal \d{1,2}\b|\bSIG[A-Z]{3,6}\b|(?-i:\bKilled\b)(?!\s{1,3}\d)|core dumped|segmentation fault"
    r"|\bsegfault(?:s|ed)?\b(?![-\w/\"'(=]|\.\w)"
    # pip's legacy install step (pip/_internal/utils/subprocess.py spinner: "Running setup.py
    # install for torch: finished with status 'error'"), whose quoted word the guard above skips
    r"|finished with status 'error'"
    # faulthandler's watchdog dump (CPython Python/faulthandler.c "Timeout (%lu:%02lu:%02lu)!"):
    # the program was still running when its time was up (a hang), whatever frames follow
    r"|^Timeout \(\d{1,4}:\d\d:\d\d(?:\.\d+)?\)!"
    # the rest of faulthandler's dump (CPython Python/traceback.c write_thread_id, dump_traceback,
    # dump_frame): a thread's header, and a frame in its own format ("line 7 in f", no comma
    # before "in": Python's tracebacks print "line 7, in f"; "???" for an unknown file, line or
    # function). Python prints it only on a fatal signal, a timeout or an explicit dump, so a
    # frame of it with its header cut is still a possible failure
    r"|^(?:Current thread|Thread) 0x[0-9a-f]{1,16} \(most recent call first\):|^Stack \(most recent call first\):"
    r"|^\s{0,8}File (?:\"[^\"\n]{1,1000}\"|\?\?\?), line (?:\d{1,9}|\?\?\?) in \S",
    re.I,
)
#: A user's words that something does not work, with no program's message quoted (issue 8, item 3:
#: "No known problem" only when the log holds no error at all): the GPU or a library "not
#: detected", "not available", "unavailable"; "no GPU detected"; a program that "does not work",
#: "stopped working", "dies"; ``is_available()`` that "says False"; a run that got "very slow"; a
#: job that would "time out"; the same in Chinese. Not "crashes" (SOFT_ERROR_RE's ``prose`` and
#: ``slain`` judge it, and a changelog's "fixes a crash" is healthy), nor "not supported" ("drivers
#: older than 450 are not supported" states a requirement). No error line by itself (a sentence is
#: no message); a possible failure
#: when the log holds nothing else (:func:`suspect_shape`), so that an issue whose body is a
#: description gets its lines listed, and a ``said`` symptom signature can rank the causes.
#: Bounded repeats only (linear on any line).
COMPLAINT_RE = re.compile(
    r"(?<![-\w./\"'(=\[{<])(?:not|never|isn't|aren't|wasn't|weren't|no longer) (?:being |been |getting )?"
    r"(?:detected|recogni[sz]ed|visible|seen|available|accessible|usable|working)\b"
    r"|\b(?:un(?:available|detected|usable|recogni[sz]ed)|inaccessible)\b"
    r"|\bno (?:\w{1,20} ){0,2}(?:GPUs?|CUDA|NVIDIA|gpus?|graphics?|devices?|drivers?|accelerators?)(?: \w{1,20}){0,2}"
    r" (?:was |were |is |are )?(?:detected|found|available|visible)\b"
    r"|\b(?:does|did|do|is|was|are|were)(?:n't|n\u2019t| not) (?:work(?:ing)?|run(?:ning)?|start(?:ing)?|"
    r"load(?:ing)?)\b"
    r"|\b(?:stop(?:s|ped)|quits?) (?:working|responding)\b|\bno longer (?:works?|runs?|starts?)\b"
    r"|\bwon't (?:work|run|start|load|build|compile)\b|\b(?:dies|died)\b"
    # a crash in the user's words ("it crashes on startup", "the kernel keeps crashing", "vLLM
    # segfaults when ..."): the statement, not a name or a setting (crash_handler, --no-crash)
    r"|\b(?:it|that|this|which|then|and|but|model|server|kernel|app|process|program|training|script|job|worker|engine)"
    r"(?: always| still| just| then| also| sometimes| randomly| immediately| instantly)? (?:crash(?:es|ed)|keeps "
    r"crashing|segfault(?:s|ed))\b"
    # a process that ends without a word, in the user's words ("the python process just exits
    # silently", "training stopped without any output"); not "exits without error" (a success;
    # "without any error message" stays healthy too: HEALTHY_ERROR_WORDS_RE reads "without any error")
    r"|\b(?:exits?|exited|quits?|quit|terminates?|terminated|stops?|stopped|closes?|closed|dies|died|crash(?:es|ed)?)"
    r" (?:silently|quietly|without (?:any |an |a )?(?:error )?(?:messages?|output|traceback|warning))\b"
    r"|\bis_available\(\)\W{0,4}(?:\w{1,12} ){0,3}(?:returns?|returned|gives?|gave|says?|said|shows?|showed|prints?"
    r"|printed|is|was|=)?\W{0,4}False\b"
    # the count of the same symptom ("torch.cuda.device_count() returns 0")
    r"|\bdevice_count\(\)\W{0,4}(?:\w{1,12} ){0,3}(?:returns?|returned|gives?|gave|says?|said|shows?|showed|prints?"
    r"|printed|is|was|=+)\W{0,4}0\b(?![.\d])"
    r"|\b(?:very|really|extremely|much|too|so|unusably|super) slow\b|\bslow(?:s|ed)? down\b|\bslower\b"
    r"|\btimes? out\b|\bproblems? (?:with|when|running|using)\b"
    # a GPU stack that works only on the CPU, in the user's words (transformerlab#1330: "the web UI
    # shows no CUDA support and 0 VRAM"; alphapulldown#237: "inference runs on cpu") or in the
    # list a framework printed, which holds only the CPU (TensorFlow's
    # tf.config.list_physical_devices repr, tensorflow#38090: "[PhysicalDevice(name=
    # '/physical_device:CPU:0', device_type='CPU')]"; a GPU would follow the CPU before "]")
    r"|\b(?:shows?|showed|shown|says?|said|reports?|reported|displays?|displayed|gives?|gave|gets?|got|there is|"
    r"there's|but|still)"
    r" [*_`]{0,2}no (?:CUDA|GPU) support\b|\b(?:shows?|showed|shown|says?|reports?|reported|displays?|displayed|"
    r"detects?|detected|only|with|has|and) [*_`]{0,2}0 ?(?:MB |MiB |GB |GiB |B )?VRAM\b"
    r"|(?<!when )(?<!if )(?<!while )(?<!whether )\b(?:it|inference|training|the model|everything|generation|the app|"
    r"the process|the program|the script|the job)"
    r"(?: still| only| always| just)? (?:runs?|ran|is running|was running) on (?:the )?CPU\b(?!\s{0,2}[:=])"
    r"|\b(?:still|only|always|just) (?:runs?|running|ran|uses?|using|used) (?:on )?(?:the )?CPU\b(?!\s{0,2}[:=])"
    r"|device_type='CPU'\)\]"
    # a build that never ends (Wan2.1#38: "flash_attn is always building"): "still compiling",
    # "the build takes forever", "it never finishes", "no progress"
    r"|\b(?:always|still|forever|endlessly|keeps?) (?:building|compiling)\b"
    r"|\b(?:build(?:ing|s)?|compil(?:e|es|ing|ation)|install(?:ing|ation)?)\b[^\n]{0,40}?\b(?:takes?|took|taking|"
    r"ha(?:s|ve) taken|running for|ran for)"
    r" (?:forever|hours|so long|too long|very long|a long time|ages)\b"
    r"|\bnever (?:finish(?:es)?|ends|completes|returns)\b|\bno progress\b"
    # a process that vanishes ("there is no traceback, the process just disappears"), and a run
    # whose results are wrong ("the result is wrong", "produces incorrect results")
    r"|\b(?:process|program|job|container|pod|worker|training|script|it|server|kernel)(?: just| simply| silently| "
    r"then)?"
    r" (?:disappears|disappeared|vanishes|vanished)\b(?! (?:after|when|once|if|with)\b)"
    r"|(?<!avoid )(?<!prevent )(?<!fix )(?<!fixes )\b(?:wrong|incorrect|garbage|corrupted|invalid) (?:results?|"
    r"outputs?|answers?|values)\b"
    r"|\b(?:results?|outputs?|answers?) (?:is|are|was|were|looks?|seems?) (?:all )?(?:wrong|incorrect|garbage|"
    r"corrupted|invalid)\b"
    # an issue's words for a step it cannot take ("I can't install flash-attn", "we cannot run the
    # model", "can't start"), a program that aborts, a traceback it points at but lost ("here is the
    # traceback"), an exception named by its moment ("exception when loading"), a thing "broken"
    r"|\b(?:I|we)(?: still| just| now)? (?:can't|can\u2019t|cannot|can not|couldn't|could not|am unable to"
    # (not a maintainer's "I can't reproduce this", "we cannot confirm", "I can't tell": tools36)
    r"|was unable to|'m unable to) (?!(?:reproduce|repro|replicate|confirm|tell|say|recall|remember|think"
    r"|comment|speak|guarantee|promise|answer|verify)\b)\w"
    r"|\b(?:can't|can\u2019t|cannot|can not|couldn't|could not|unable to) (?:start|run|launch|install|build|compile"
    r"|generate|train)\b"
    r"|\b(?:it|program|process|training|job|script|app|build|run|compilation|installation|server|kernel)"
    r"(?: always| just| then| also| immediately)? abort(?:s|ed)\b"
    r"|\b(?:here is|here's|see|below is|attached is|attached|following is)(?: the| a| my| full| complete){0,2}"
    r" traceback\b|(?<![\w.])exceptions? (?:when|while|during|on|at|after) \w"
    r"|\b(?:is|are|was|were|seems?|got|gets|looks?)(?: completely| totally| still)? broken\b(?! pipe)"
    # a failure the user points at ("I get the following error:", "it shows the error:", "this bug
    # appears", "I recieved this error:"), whose message the paste lost or the reader cut
    r"|\b(?:I|i|we|it|It|We)(?: always| still| now| then| also)? (?:get|got|getting|am getting|see|saw|am seeing|"
    r"receive[ds]?|recieved|meet|met|hit|encounter(?:ed)?|shows?|showed|raises?|raised|throws?|threw)"
    r"(?: (?:an|the|this|a|same|following|below|these|such|that)){0,2} (?:error|errors|exceptions?|bug|traceback)\b(?! "
    r"(?:rates?|bars?|metrics?|margins?|terms?|functions?|handling)\b)(?!\s{0,2}(?:is|was) (?:gone|fixed|solved))"
    r"|\b(?:error|bug|exception) (?:appears|appeared|occurs|occurred|shows up|showed up|pops up)\b"
    # "the tests are failing", "keeps failing" (a crash of a program the user names:
    # CRASH_SUBJECT_RE; not "an exception was raised": "no CUDA exception was raised during setup")
    r"|\b(?:is|are|was|were|keeps?|kept|started|starts) failing\b"
    # "still not work" (etarkangaroo#4), "I can't run it normally" (lincir#22), "the make process
    # errored" (flexflow#263), Russian "не загружается" / "не работает" / "не запускается" / "не
    # видит" (colabtools#4425: it does not load / work / start / see)
    r"|\b(?:still|just|it|that|this) (?:not|doesn't|does not|didn't|did not|won't|cannot|can't|can not) (?:work|run|"
    r"start|load)s?\b"
    r"|\bcan(?:'t|not| not) (?:run|start|use|load) (?:it |this |the \w{1,20} )?(?:normally|properly|correctly)\b"
    # a program that does not find the GPU, in the user's words (sdnext#409: "does not detect GPU,
    # generates on CPU"): the words of torch.toml's said-torch-cuda-unavailable
    r"|\b(?:can't|cannot|can not|couldn't|could not|doesn't|does not|didn't|did not|won't|will not|fails? to)"
    r" (?:detect|find|see|recogni[sz]e|use|access) (?:the |my |any |a |an )?(?:NVIDIA |[Nn]vidia )?"
    r"(?:GPUs?|gpus?|graphics? cards?|video cards?|CUDA devices?)\b"
    # what a user sees of a failure no program reports: "nothing happens", a loss that turns NaN,
    # a model that writes gibberish, a GPU that stays idle (0 % utilization) during the run
    r"|(?<!if )(?<!when )\bnothing (?:happens|happened)(?=\s*(?:[.!,;]|$)| (?:after|when)\b)"
    r"|(?<!if )(?<!when )(?<!whether )(?<!if the )(?<!when the )(?<!whether the )\b(?:the )?loss "
    r"(?:is|becomes|became|goes to|went to|turns(?: into)?|turned(?: into)?) (?:nan|NaN|NAN)\b(?![-?])"
    r"|(?<!not )(?<!never )(?<!n't )\b(?:generates?|generated|generating|outputs?|produces?|produced|writes?|returns?"
    r"|returned) (?:only |just |pure |complete )?(?:gibberish|garbage|nonsense)\b"
    r"|\bGPU (?:utili[sz]ation|usage|util) (?:is |stays |stayed |remains |remained |was |shows? )?(?:at |only )?0 ?%"
    r"|\b(?:process|build|make|script|job|run|step|command|install(?:ation)?) errored\b"
    r"|\u043d\u0435 (?:\u0440\u0430\u0431\u043e\u0442\u0430\u0435\u0442|"
    r"\u0437\u0430\u043f\u0443\u0441\u043a\u0430\u0435\u0442\u0441\u044f"
    r"|\u0437\u0430\u0433\u0440\u0443\u0436\u0430\u0435\u0442\u0441\u044f|\u0432\u0438\u0434\u0438\u0442)"
    r"|[\u5f88\u592a\u53d8]\u6162|\u65e0\u6cd5|\u4e0d\u80fd\u7528|\u68c0\u6d4b\u4e0d\u5230|\u8bc6\u522b\u4e0d\u5230"
    r"|\u6ca1\u6709\u68c0\u6d4b\u5230|\u627e\u4e0d\u5230|\u7528\u4e0d\u4e86",
    re.I,
)
#: a crash of any program the user names ("ComfyUI crashes when ...", "Blender crashed"), not the
#: noun ("the crashes are gone", "fixes crashes") nor a fix's note ("fixed a crash"); apart from
#: COMPLAINT_RE and searched only in a line that holds "crash" or "segfault" (a search at every
#: word's start costs a third more on every line otherwise)
CRASH_SUBJECT_RE = re.compile(
    r"\b(?!(?:the|no|of|these|those|any|many|some|rare|random|frequent|occasional|fix|fixes|fixed|avoid|prevent"
    r"|prevents|for|and|or|with|without|to|in|on|from|about|all|more|fewer|less|cause|causes|caused|multiple|several"
    r"|reduce|reduces|reduced|if|when|whether|not|never)\b)[A-Za-z][\w.-]{1,40}(?: always| still| just| then"
    r"| also| sometimes| randomly| immediately| instantly)? (?:crash(?:es|ed)|keeps crashing|segfault(?:s|ed))\b"
    r"(?!:?\s{0,3}\d)",     # (not a count: "Tests Crashed: 0", "Total Crashed 0 of 12")
    re.I,
)
#: a notice that says what a program uses instead ("No CUDA runtime is found, using CUDA_HOME=...",
#: "CPU/No GPU detected (using precise math)"): a program talking, no user's complaint
COMPLAINT_NOTICE_RE = re.compile(r"[,(;:]\s{0,3}(?:using|will use|falling back|fall back|defaulting|switching)\b", re.I)


def complaint(text: str) -> bool:
    """True when ``text`` says in a user's words that something does not work (:data:`COMPLAINT_RE`),
    not in a program's leveled record (a WARNING's "lazy loading is not enabled") nor in a notice
    of what it uses instead."""
    low = text.lower()
    return (COMPLAINT_RE.search(text) is not None
            or (("crash" in low or "segfault" in low) and CRASH_SUBJECT_RE.search(text) is not None)) \
        and not WARN_LEVEL_RE.match(text) and not COMPLAINT_NOTICE_RE.search(text)
#: a command's help line ("  --timeout TIMEOUT   seconds to wait", "  -x, --exitfirst  exit on
#: the first error or failed test", "  --on-error ACTION   what to do on error", argparse's choices
#: "  --on-error {stop,continue}   what to do on an error"): an option described
OPTION_HELP_RE = re.compile(
    r"^\s{0,8}-{1,2}\w[\w-]{0,40}(?:[ =](?:[A-Z][A-Z_]{0,30}|\{[\w,.-]{1,80}\}))?(?:, -{1,2}\w[\w-]{0,40})?\s{2,}\S")
#: a notice that the run goes on without something (vLLM's "Custom allreduce is disabled because
#: ... P2P test failed. To silence this warning, ..."): no failure of the run
SUSPECT_GOES_ON_RE = re.compile(
    # (and a command's help: OPTION_HELP_RE)
    OPTION_HELP_RE.pattern
    + r"|\b(?:is|are|was|were|will be|has been|have been) (?:now )?disabled\b|[Tt]o silence this warning"
    r"|\bwill not be used\b|\bwill be ignored\b|\bretrying\b|\bwill retry\b|\bwill (?:proceed|continue)\b"
    # a performance notice (onnxruntime's "Memcpy nodes are added ... It might have negative impact
    # on performance (including unable to run CUDA graph)")
    r"|\b(?:might|may|could)(?: or may not)? have (?:an? )?negative impact on performance\b"
)


def _error_words(text: str) -> bool:
    """Whether ``text`` holds a word any error shape reads (healthy or not)."""
    text = text[:ERROR_SHAPE_CHARS]
    return bool(HARD_ERROR_RE.search(text) or SOFT_ERROR_RE.search(text) or WORD_ERROR_RE.search(text))


def suspect_shape(text: str) -> Optional[str]:
    """"suspect" when ``text`` states a failure by the documented rule though
    :func:`error_shape` does not count it (see :data:`SUSPECT_RE`), or says in a user's words
    that something does not work (:data:`COMPLAINT_RE`), else None. Never for a
    record at INFO or DEBUG level, a healthy count, a fallback notice or a notice that the run
    goes on without something (:data:`SUSPECT_GOES_ON_RE`)."""
    if not text:
        return None
    text = text[:ERROR_SHAPE_CHARS]
    if INFO_LEVEL_RE.match(text) or HEALTHY_ERROR_WORDS_RE.search(text) or startup_notice(text) \
            or not (SUSPECT_RE.search(text) or complaint(text)) \
            or SUSPECT_GOES_ON_RE.search(text):
        return None
    return "suspect"


def _cut_between(first: str, second: str) -> bool:
    """True when a line break between ``first`` and ``second`` may be a terminal's cut inside a
    word: neither side has a space at the break (an upper-case name cut as ``LD_PRE`` /
    ``LOAD``, CJK text, a path, ``shape[-`` / ``1]) > 256``)."""
    return bool(first and second) and not first[-1].isspace() and not second[0].isspace()


#: marks that quote a message in prose (an issue's "it crashes with `...`")
_QUOTE_MARKS = frozenset("`\"\u201c")


#: Decorations a pasted log puts before a line that are no stream of their own: RFC 3339
#: timestamps (GitHub Actions, ``docker logs -t``) with the CRI container-log tag
#: (``2024-01-01T00:00:00.000000000Z stdout F ``), Markdown quote markers, table borders and
#: pytest's ``E   `` before an exception line. Removed before the stream prefix is read, so a
#: traceback keeps its frames and its exception line whatever decorates it.
DECOR_RE = re.compile(
    r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?[ \t]"
    r"(?:(?:stdout|stderr) [FP] )?"
    # (pytest's "E" marker stays before the assertion it rewrote, "E       assert 0 == 1": the
    # marker is what makes that line an error line, HARD_ERROR_RE "pytest")
    r"|>[ \t]?|\|[ \t]|E {3,8}(?=\S)(?!assert\b|\+{1,2} {1,4}where\b))"
)
_DECOR_FIRST = frozenset("0123456789>|E")
#: first characters of a line that may carry a decoration or a stream prefix (a quote, a rank,
#: a worker, a pod, a timestamp): such a line is bared before it is judged an echoed comment
_PREFIXED_FIRST = frozenset("0123456789>|E[(ADFJMNOS")


_QUIET_LEVELS = frozenset(("DEBUG", "INFO", "NOTICE", "I", "D"))
_AS_WRITTEN_LEVELS = _QUIET_LEVELS | {"WARNING", "WARN", "W"}


def undecorate(text: str) -> str:
    """``text`` without the decorations of :data:`DECOR_RE` (at most three, e.g. a quoted,
    timestamped line), and without a table row's closing border."""
    for _ in range(3):
        if not text or text[0] not in _DECOR_FIRST:
            return text
        m = DECOR_RE.match(text)
        if m is None:
            return text
        if text[0] == "|" and text.rstrip().endswith("|"):
            text = text.rstrip()[:-1].rstrip()
        text = text[m.end():]
    return text


def _echoed_comment(lines: List[str], k: int, cuts: Set[int] = frozenset()) -> bool:
    """Whether ``lines[k]`` is a comment of a library's source that a traceback echoes
    (:data:`ECHOED_COMMENT_RE`), under a stream or a logger's prefix too, or the rest of one
    a terminal cut (``cuts``: :func:`hard_wrap_cuts`) or a wrapper moved to the next line
    (``    168         # ... a driver initialization`` / ``    error, no GPUs``): a line after an
    echoed comment that is no numbered source line, frame or exception line."""
    def echoed(raw: str) -> bool:
        if "#" not in raw:     # (most lines: one C-speed search)
            return False
        return ECHOED_COMMENT_RE.match(raw) is not None or (
            raw[:1] in _PREFIXED_FIRST
            and ECHOED_COMMENT_RE.match(strip_log_prefix(bare(raw[:MAX_LINE])[1])) is not None)

    if echoed(lines[k]):
        return True
    if k == 0 or not lines[k].strip() or not echoed(lines[k - 1]):
        return False
    if k - 1 in cuts:
        return True
    # an echoed source line is followed by the next numbered one, an arrow or a blank line: a line
    # of none of these shapes after a comment is its rest, wrapped (at a width no cut was seen at)
    rest = strip_log_prefix(bare(lines[k][:MAX_LINE])[1])
    return not _NUMBERED_SOURCE_RE.match(rest) and not rest.lstrip().startswith(('File "', "Traceback (")) \
        and not exception_line(rest.strip())


class InputError(Exception):
    """The input cannot be read as a log (binary, unreadable); the message says why."""


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    stream: str = ""


@dataclass(frozen=True)
class Hit:
    entry: str
    line: Line
    before: Tuple[Line, ...] = ()
    after: Tuple[Line, ...] = ()
    #: index of the traceback the line belongs to (its exception line), or None
    traceback: Optional[int] = None
    #: the text a refinement is judged on: the line, its neighbours, its traceback
    context: str = ""
    #: the line with the pieces that continue it joined (a line a paste wrapped), "" when none does
    whole: str = ""


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    func: str


@dataclass
class Traceback:
    index: int
    start: int                      # line number of "Traceback (most recent call last):"
    stream: str = ""
    end: int = 0
    exc_type: Optional[str] = None
    message: str = ""
    exc_line: int = 0
    frames: List[Frame] = field(default_factory=list)
    n_frames: int = 0
    #: how it links to the previous traceback of its stream: "cause" | "context" | None
    chain: Optional[str] = None
    parent: Optional[int] = None
    truncated: bool = False
    files_text: str = ""

    def context(self) -> str:
        return f"{self.files_text}\n{self.exc_type or ''}: {self.message}"[-TB_CONTEXT_CHARS:]


@dataclass
class Repeat:
    """A record repeated (the same text but for its numbers) whose later copies were counted,
    not read (COLLAPSE_AFTER)."""
    #: the first line of its first copy collapsed
    line: Line
    #: copies in the log, the ones read included
    count: int = 0
    #: copies collapsed (counted only)
    collapsed: int = 0
    #: first line numbers of the collapsed copies (REPEAT_LINES at most)
    numbers: List[int] = field(default_factory=list)


@dataclass
class ParseResult:
    hits: List[Hit] = field(default_factory=list)
    hit_counts: Dict[str, int] = field(default_factory=dict)
    tracebacks: List[Traceback] = field(default_factory=list)
    n_tracebacks: int = 0
    other_errors: List[Line] = field(default_factory=list)
    n_other_errors: int = 0
    #: lines that state a failure only in a warning, a hang or timeout without a word of the GPU
    #: stack, or a signal (:func:`suspect_shape`); they stand in for ``other_errors`` when the
    #: log holds no error at all (``suspect_only``)
    suspects: List[Line] = field(default_factory=list)
    n_suspects: int = 0
    suspect_only: bool = False
    n_warnings: int = 0
    lines: int = 0
    bytes: int = 0
    cut_lines: int = 0
    junk_chars: int = 0
    streams: List[str] = field(default_factory=list)
    compressed: bool = False
    #: False when the input held nothing but whitespace
    has_text: bool = False
    #: clue literal (``stackpeel/knowledge`` ``clues``) -> (line number, line text) of its first
    #: occurrences (at most :data:`CLUE_LINES`)
    clues: Dict[str, List[Tuple[int, str]]] = field(default_factory=dict)
    #: what the log states about its stack: versions, GPUs, the torch build's CUDA and arch
    #: list, CUDA availability, context (combinations.LogFacts); read from the first and the
    #: last FACT_WINDOW characters (where environment reports are printed) and from every line
    #: the scan kept
    facts: _combinations.LogFacts = field(default_factory=_combinations.LogFacts)
    #: line number -> the line in the log's own language, for the lines read in English
    #: (what the C library, bash, gcc, binutils and make printed translated: :mod:`.translate`)
    translated: Dict[int, str] = field(default_factory=dict)
    #: the records collapsed in a long log (COLLAPSE_AFTER), most collapsed first
    repeats: List[Repeat] = field(default_factory=list)

    def traceback(self, index: Optional[int]) -> Optional[Traceback]:
        if index is None:
            return None
        for tb in self.tracebacks:
            if tb.index == index:
                return tb
        return None


def _scrub_kept(r: ParseResult) -> None:
    """Replace credential shapes in every text the scan kept (hits with their context,
    tracebacks, other errors, clue lines, stream names). Scrubbing only what is kept, a few
    hundred lines at most, instead of every scanned line is what keeps a 10 MB log at scan
    speed: training logs name "tokens" on a third of their lines, and each such line cost
    three word-detector substitutions (tests/test_redact.py covers both paths)."""
    memo: Dict[str, str] = {}

    def s(text: str) -> str:
        if not text:
            return text
        out = memo.get(text)
        if out is None:
            out = memo[text] = scrub_shapes(text)
        return out

    def line(ln: Line) -> Line:
        text, stream = s(ln.text), s(ln.stream)
        return ln if text is ln.text and stream is ln.stream else replace(ln, text=text, stream=stream)

    r.hits[:] = [replace(h, line=line(h.line), before=tuple(line(b) for b in h.before),
                         after=tuple(line(a) for a in h.after), context=s(h.context), whole=s(h.whole)) for h in r.hits]
    r.other_errors[:] = [line(ln) for ln in r.other_errors]
    for rep in r.repeats:
        rep.line = line(rep.line)
    for number, text in r.translated.items():
        r.translated[number] = s(text)
    for tb in r.tracebacks:
        tb.message, tb.files_text, tb.stream = s(tb.message), s(tb.files_text), s(tb.stream)
        tb.exc_type = s(tb.exc_type) if tb.exc_type else tb.exc_type
        tb.frames[:] = [replace(fr, file=s(fr.file), func=s(fr.func)) for fr in tb.frames]
    r.streams[:] = [s(name) for name in r.streams]
    for lit, seen in r.clues.items():
        seen[:] = [(n, s(text)) for n, text in seen]
    if r.facts.lines:
        r.facts = replace(r.facts, lines={k: (n, s(text)) for k, (n, text) in r.facts.lines.items()})


class _Open:
    """A traceback being read (per stream)."""

    __slots__ = ("tb", "state", "foreign", "lit", "indent", "stamped")

    def __init__(self, tb: Traceback, lit: str, indent: str = ""):
        self.tb = tb
        self.state = "frames"   # frames -> message -> closed
        self.foreign = 0
        self.lit = lit
        #: the indentation of the "Traceback" line (a log pasted as an indented block, the traceback
        #: torchrun's Root Cause table indents under "traceback :"): a line of this traceback at that
        #: indentation and no deeper is its exception line, as an unindented one is elsewhere
        self.indent = indent
        #: whether the "Traceback" line carried a logger's timestamped record prefix
        self.stamped = False


#: a span quoted in prose: backticks, double quotes, typographic quotes (single quotes are
#: apostrophes too often); every repeat is bounded and stops at the closing mark
QUOTED_RE = re.compile(r"`([^`\n]{8,2000})`|\"([^\"\n]{8,2000})\"|\u201c([^\u201d\n]{8,2000})\u201d")


def _quoted_parts(text: str) -> List[str]:
    """The spans of ``text`` quoted in prose, and ``text`` without its closing punctuation:
    the places a message pasted into a sentence may end (at most 8)."""
    parts = [next(g for g in m.groups() if g is not None) for m in QUOTED_RE.finditer(text)][:7]
    trimmed = text.rstrip().rstrip(".,;:!?)")
    if trimmed != text.rstrip():
        parts.append(trimmed)
    return parts


def _clue_text(lines: List[str], i: int) -> str:
    """The text a clue line is recorded with: the line, or for a command that prints a variable
    (:data:`ECHO_VAR_RE`) followed by a one-word line, ``echo $VAR => VAR=value``."""
    text = scrub_shapes(lines[i][:MAX_LINE])[:300].strip()
    if ("echo" in text or "printenv" in text) and i + 1 < len(lines):
        m = ECHO_VAR_RE.search(bare(text)[1])
        if m:
            v = ECHO_VALUE_RE.match(bare(lines[i + 1][:MAX_LINE])[1])
            if v:
                return f"{text} => {m.group(1) or m.group(2)}={scrub_shapes(v.group(1))[:300]}"
    return text


def bare(line: str) -> Tuple[str, str]:
    """(stream key, message) of a raw line: decorations, then the stream prefix, then the
    decorations after it (``[rank0]: 2024-01-01T00:00:00Z ...``) removed."""
    key, rest = split_prefix(undecorate(line))
    return key, (undecorate(rest) if key else rest)


def _stream_of(line: str) -> str:
    """The stream key of a raw line's prefix, ``"T"`` for a line only a timestamp decorates
    (GitHub Actions', ``docker logs -t``), ``""`` for a line with neither."""
    key, rest = bare(line[:MAX_LINE])
    return key or ("T" if line[:1].isdigit() and len(rest) < len(line) else "")


def split_prefix(line: str) -> Tuple[str, str]:
    """(stream key, rest of the line) for a line with a known per-process prefix."""
    if not line or line[0] not in "[(0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_":
        return "", line
    m = PREFIX_RE.match(line)
    if not m:
        return "", line
    key = m.group("journal") or m.group(0)
    return key.strip(), line[m.end():]


#: the HTML entities a mail notification or a page's source holds for quotes and brackets
#: ("No module named &#39;triton&#39;"): read as the characters (bench/explain_invariance.py "html")
_HTML_ENTITY_RE = re.compile(r"&(?:#39|#x27|#34|#x22|quot|apos|lt|gt|amp);")
_HTML_ENTITIES = {"&#39;": "'", "&#x27;": "'", "&#34;": '"', "&#x22;": '"', "&quot;": '"', "&apos;": "'",
                  "&lt;": "<", "&gt;": ">", "&amp;": "&"}


def as_printed(line: str) -> str:
    """``line`` with what a paste's route put for the characters a program printed read back as
    them: typographic quotes and fixed-width spaces (:data:`.translate.PASTED_CHARS`), the HTML
    entities of quotes and brackets."""
    if not line.isascii() and _PASTED_CHARS_RE.search(line):
        line = line.translate(_PASTED_CHARS)
    if "&" in line and _HTML_ENTITY_RE.search(line):
        line = _HTML_ENTITY_RE.sub(lambda m: _HTML_ENTITIES[m.group()], line)
    return line


def _pasted(body: str) -> bool:
    """Whether ``body`` holds anything :func:`as_printed` reads back (a C-speed test first)."""
    return ("&" in body and _HTML_ENTITY_RE.search(body) is not None) or \
        (not body.isascii() and _PASTED_CHARS_RE.search(body) is not None)


def clean(text: str) -> Tuple[str, int]:
    """Remove ANSI escapes and control characters; (clean text, junk characters removed)."""
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    if text.isascii():
        out = text.translate(_CTRL_TABLE)
    else:
        out = CTRL_RE.sub("", text) if CTRL_RE.search(text) else text
    junk = len(text) - len(out)
    return (out if junk else text), junk


class LogScanner:
    """Feed it text with :meth:`feed` (any chunking), then call :meth:`close`."""

    def __init__(self, kb: Optional[KnowledgeBase] = None, environ: Optional[Mapping[str, str]] = None):
        self.kb = kb or load()
        # logs carry tokens too: the environment's secret values are replaced in every chunk
        # before any line is kept or cut short (a substring search per value, in C); credential
        # shapes (redact.DETECTORS) are replaced in what the scan keeps (:meth:`_scrub_kept`),
        # and in a line before it is cut short
        self._secrets = secret_values(os.environ if environ is None else environ)
        self.result = ParseResult()
        self._gate = self.kb.line_gate.search
        self._entry_gate = self.kb.entry_gate.search
        self._tail: List[Line] = []                        # last lines of the previous chunk
        # hits collecting lines after them (with how many of the log's own lines they hold)
        self._waiting: List[Tuple[Hit, List[Line], List[int]]] = []
        self._open: Dict[str, _Open] = {}
        self._last_closed: Dict[str, Traceback] = {}
        self._chain: Dict[str, str] = {}
        self._tb_tail: Deque[Traceback] = collections.deque(maxlen=TRACEBACKS_TAIL)
        self._streams: Dict[str, None] = {}
        self._carry = ""
        #: the chunks read while the log has shown no error (None: too long, or an error came)
        self._quiet: Optional[List[str]] = []
        self._quiet_chars = 0
        self._seams: Set[int] = set()
        self._wraps: Set[int] = set()
        self._pieces: Set[int] = set()
        self._piece_joins: Dict[int, str] = {}
        self._rejoins = 0
        self._paragraphs = 0
        #: unexplained error records whose message alone is no error (their level alone says
        #: error): reported only where the log shows no failure in its own words (:meth:`close`)
        self._by_level: List[Line] = []
        self._n_by_level = 0
        #: a warning's own line outside a traceback (``UserWarning: ...`` with its file cut off, a
        #: ``WARNING`` record's ``FutureWarning: ...``): an error line only where the log shows a
        #: failure besides (:meth:`close`); a healthy run prints them too (tools40)
        self._warned: List[Line] = []
        self._n_warned = 0
        #: chunk-wide indexes (base + index) of the last paragraph reported as one error line
        self._paragraph_seen: Tuple[int, int] = (-1, -1)
        #: (chunk lines, whether they read as word-wrapped as a whole: :func:`soft_wrapped`)
        self._soft: Tuple[Optional[List[str]], bool] = (None, False)
        self._folded = 0
        self._lineno = 0
        self._closed = False
        #: (line number, text) of the lines the facts gate flagged at the start of the log, and
        #: the latest chunk (the end of its text is gated when the log ends)
        self._fact_lines: List[Tuple[int, str]] = []
        self._last_body: Optional[Tuple[int, str]] = None
        #: repeated records (COLLAPSE_AFTER): whether the log is longer than one read, the copies
        #: met per record (numbers aside), what one copy adds to the counts, the ones collapsed
        self._long = False
        #: the clue literals that hold their CLUE_LINES lines (their later hits are skipped)
        self._clues_done: Set[str] = set()
        self._kinds: Dict[str, int] = {}
        self._effects: Dict[str, Tuple[Dict[str, int], int, int, int, int]] = {}
        self._repeats: Dict[str, Repeat] = {}
        #: the last collapsed copies that hold a traceback: (first line number, first traceback
        #: index, lines), read again when the log ends for the tracebacks it ends with
        self._collapsed_tbs: Deque[Tuple[int, int, int, List[str]]] = collections.deque(maxlen=TRACEBACKS_TAIL)

    # -- input ---------------------------------------------------------------
    def feed(self, text: str) -> None:
        if not text:
            return
        if not self.result.has_text and not text.isspace():
            self.result.has_text = True
        text = self._carry + text
        cut = text.rfind("\n")
        if cut < 0:
            if len(text) > MAX_LINE * 4:   # one enormous line: keep its start, drop the rest
                self._carry = text[:MAX_LINE]
            else:
                self._carry = text
            return
        if len(text) < CHUNK:
            # held until a chunk's worth has come or the log ends: the last line, with or without
            # a newline, is read with the lines before it (a terminal's cut or a wrapped message
            # that ends the paste is joined across it, whatever the pieces it was fed in)
            self._carry = text
            return
        self._carry = text[cut + 1:]
        self._long = True
        self._take(text[:cut])

    def _take(self, text: str) -> None:
        """Read whole lines: JSON records decoded, a terminal's hard wrap joined back, the
        environment's secrets replaced, then scanned."""
        if _has_json_records(text):
            text = decode_json_records(text)
        text = rejoin_hard_wraps(text)
        text = scrub_text(text, self._secrets, shapes=False)
        if self._long:
            self._collapsed(text)
        else:
            self._lines(text.split("\n"))

    # -- repeated records ----------------------------------------------------
    def _collapsed(self, text: str) -> None:
        """Read ``text`` (whole lines of a long log) with its repeated records collapsed
        (COLLAPSE_AFTER): the runs of records kept are scanned with their own line numbers; a
        record is collapsed where it and its neighbours were each met COLLAPSE_AFTER times
        already, and no traceback waits for its exception line."""
        lines = text.split("\n")
        keys = _DIGITS_RE.sub("0", text).split("\n")
        n = len(lines)
        starts = [0]
        line_of, last = 0, 0
        for m in RECORD_START_RE.finditer(text):
            pos = m.start()
            line_of += text.count("\n", last, pos)
            last = pos
            if line_of:
                starts.append(line_of)
        starts.append(n)
        kinds = self._kinds
        records: List[Tuple[int, int, str, bool]] = []
        for a, b in zip(starts, starts[1:]):
            kind = keys[a] if b == a + 1 else "\n".join(keys[a:b])
            seen = kinds.get(kind)
            if seen is None:
                if len(kinds) < MAX_RECORD_KINDS:
                    kinds[kind] = 1
                seen = 0
            else:
                kinds[kind] = seen + 1
            records.append((a, b, kind, seen >= COLLAPSE_AFTER))
        base = self._lineno
        kept = 0              # first line (chunk index) of the run not scanned yet
        for r, (a, b, kind, repeated) in enumerate(records):
            if not (repeated and 0 < r < len(records) - 1 and records[r - 1][3] and records[r + 1][3]):
                continue
            if kept < a:
                self._lineno = base + kept
                self._lines(lines[kept:a])
                kept = a
            op = self._open.get(split_prefix(lines[a])[0])
            if op is not None and op.state == "frames" and TB_START not in lines[a]:
                continue        # its stream's traceback waits for its exception line: the copy is read
            self._collapse(lines, a, b, kind, base)
            kept = b
        if kept < n:
            self._lineno = base + kept
            self._lines(lines[kept:])
        self._lineno = base + n

    def _collapse(self, lines: List[str], a: int, b: int, kind: str, base: int) -> None:
        """Count the copy ``lines[a:b]`` of a record read COLLAPSE_AFTER times already."""
        eff = self._effects.get(kind)
        if eff is None:
            eff = self._effects[kind] = self._record_effects(lines[a:b])
        r = self.result
        for entry, k in eff[0].items():
            r.hit_counts[entry] = r.hit_counts.get(entry, 0) + k
        if eff[1]:
            # (with the lines after it: an exception line may start the next record)
            self._collapsed_tbs.append((base + a, r.n_tracebacks, b - a, lines[a:b + MESSAGE_LINES + 5]))
        r.n_tracebacks += eff[1]
        r.n_other_errors += eff[2]
        r.n_warnings += eff[3]
        r.n_suspects += eff[4]
        self._streams.setdefault(split_prefix(lines[a])[0], None)
        rep = self._repeats.get(kind)
        if rep is None:
            rep = self._repeats[kind] = Repeat(Line(base + a + 1, lines[a]))
        rep.collapsed += 1
        if len(rep.numbers) < REPEAT_LINES:
            rep.numbers.append(base + a + 1)
        # the lines before the next run's first line are the collapsed copy's last ones
        self._tail = [Line(base + j + 1, lines[j]) for j in range(max(a, b - CONTEXT_BEFORE), b)]

    def _last_tracebacks(self) -> None:
        """The tracebacks of the last collapsed copies, each copy read alone with its own line
        numbers and indexes, among the last ones kept (TRACEBACKS_TAIL): a log ends with its own
        last tracebacks whether or not their copies were collapsed."""
        if not self._collapsed_tbs:
            return
        after = max((tb.start for tb in (*self.result.tracebacks, *self._tb_tail)), default=0)
        found: List[Traceback] = []
        for offset, first, size, lines in self._collapsed_tbs:
            if offset < after:
                continue
            scratch = LogScanner(self.kb, environ={})
            scratch._lines(lines)
            for key in list(scratch._open):
                op = scratch._open.pop(key)
                op.tb.truncated = op.tb.truncated or op.state == "frames"
                scratch._finish(op.tb)
            for tb in (*scratch.result.tracebacks, *scratch._tb_tail):
                if tb.start > size:
                    continue
                found.append(replace(tb, index=first + tb.index, start=tb.start + offset,
                                     end=tb.end + offset if tb.end else 0,
                                     exc_line=tb.exc_line + offset if tb.exc_line else 0,
                                     parent=None, chain=None, frames=list(tb.frames)))
        if found:
            tail = sorted([*self._tb_tail, *found], key=lambda tb: tb.start)[-TRACEBACKS_TAIL:]
            self._tb_tail.clear()
            self._tb_tail.extend(tail)

    def _record_effects(self, lines: List[str]) -> Tuple[Dict[str, int], int, int, int, int]:
        """What one copy of a record adds to the counts: the copy read alone."""
        scratch = LogScanner(self.kb, environ={})
        scratch._lines(lines)
        r = scratch.result
        return dict(r.hit_counts), r.n_tracebacks, r.n_other_errors, r.n_warnings, r.n_suspects

    def close(self) -> ParseResult:
        if self._closed:
            return self.result
        self._closed = True
        if self._carry:
            # the held text (the last line has no newline, or the log was shorter than a chunk)
            # is read as feed reads a chunk; one final newline ends the last line, no line of its own
            carry = self._carry[:-1] if self._carry.endswith("\n") else self._carry
            self._carry = ""
            self._take(carry)
        for key in list(self._open):
            op = self._open.pop(key)
            if op.state == "frames":
                op.tb.truncated = True
            self._finish(op.tb)
        for hit, after, _ in self._waiting:
            self._emit(hit, after)
        self._waiting = []
        r = self.result
        r.lines = self._lineno
        self._last_tracebacks()
        for kind, rep in self._repeats.items():
            rep.count = self._kinds.get(kind, rep.collapsed)
        r.repeats = sorted(self._repeats.values(), key=lambda rep: (-rep.collapsed, rep.line.number))
        self._collect_facts()
        kept = {tb.index for tb in r.tracebacks}
        r.tracebacks.extend(tb for tb in self._tb_tail if tb.index not in kept)
        r.streams = [s for s in self._streams if s]
        if self._warned:
            self._place_warnings(r)
        # a hit of a program's warning signature (``warning = true``: transformers' no-torch notice,
        # triton-windows' 'Failed to find MSVC.') shows no failure itself: beside it, the lines that
        # say something went wrong are still the log's possible failures (tools41)
        entries = {e.id: e for e in self.kb.entries} if r.hits else {}
        hits = any(e is None or not e.warning for e in (entries.get(h.entry) for h in r.hits))
        if self._quiet and not (r.n_other_errors or hits or r.n_tracebacks):
            self._rescan_quiet(r)
        self._quiet = None
        if self._by_level and not (r.n_other_errors or r.hits or r.n_tracebacks or r.suspects):
            # no line states a failure in its own words: the records whose level alone says
            # error are the errors
            r.other_errors, r.n_other_errors = list(self._by_level), self._n_by_level
        # the warning signature's own line is no possible failure beside itself: a log that holds only
        # that warning ("nvcc warning : Cannot find valid GPU for '-arch=native'", triton-windows'
        # 'Failed to find MSVC.' before a run that goes on) stays healthy
        warned_at = {h.line.number for h in r.hits if entries.get(h.entry) is not None and entries[h.entry].warning}
        suspects = [ln for ln in r.suspects if ln.number not in warned_at]
        if suspects and not (r.n_other_errors or hits or r.n_tracebacks):
            # no error line at all: the lines that still say something went wrong are the
            # errors to report (never "No known problem" on them), marked as such
            n = r.n_suspects - (len(r.suspects) - len(suspects))
            r.other_errors, r.n_other_errors, r.suspect_only = suspects, n, True
        r.suspects = []
        _scrub_kept(r)
        return r

    def _place_warnings(self, r: ParseResult) -> None:
        """The warnings' own lines (:attr:`_warned`) are error lines where the log shows a failure
        besides them: a traceback, another error line, a signature's line that is no program's
        warning and no user's sentence. Elsewhere a healthy run printed them: only those that
        state a failure in words are possible failures (:func:`suspect_shape`), as a WARNING
        record's are, and nothing resembles or fingerprints the rest (tools40)."""
        entries = {e.id: e for e in self.kb.entries}
        failing = r.n_other_errors or r.n_tracebacks or any(
            not (e.warning or e.said) for e in (entries.get(h.entry) for h in r.hits) if e is not None)
        if failing:
            r.other_errors = sorted(r.other_errors + self._warned, key=lambda ln: ln.number)[:OTHER_ERRORS]
            r.n_other_errors += self._n_warned
            r.n_warnings -= self._n_warned
        else:
            said = [ln for ln in self._warned if suspect_shape(ln.text)]
            if said and not r.n_other_errors:
                r.suspects = sorted(r.suspects + said, key=lambda ln: ln.number)[:OTHER_ERRORS]
                r.n_suspects += len(said)
        self._warned = []

    def _rescan_quiet(self, r: ParseResult) -> None:
        """A log with no error line, read again line by line (at most QUIET_RESCAN_CHARS): the
        lines the gate did not flag that state a failure by the rule are suspects too."""
        seen = {ln.number for ln in r.suspects}
        found: List[Line] = []
        n = 0
        for number, raw in enumerate("\n".join(self._quiet).split("\n"), 1):
            if number in seen or not (SUSPECT_RE.search(raw) or complaint(raw)) \
                    or INFO_LEVEL_RE.match(raw):
                continue
            text = undecorate(raw)
            end, level, stamped = _record_prefix(text)
            if stamped and not text[end:].strip():
                continue        # a record that says nothing
            if end and not (stamped and level not in _AS_WRITTEN_LEVELS):
                # (an error record keeps its prefix: its level is what states the failure)
                text = text[end:]
            text = text.strip()
            if suspect_shape(text) and not ECHOED_COMMENT_RE.match(text):
                n += 1
                if len(found) < OTHER_ERRORS:
                    found.append(Line(number, text, ""))
        if found:
            r.suspects = sorted(r.suspects + found, key=lambda ln: ln.number)[:OTHER_ERRORS]
            r.n_suspects += n

    # -- per chunk -----------------------------------------------------------
    def _lines(self, raw_lines: List[str]) -> None:
        self._chunk("\n".join(raw_lines))

    def _chunk(self, body: str) -> None:
        """Scan whole lines. The gate runs once over the chunk (in C); Python only
        touches the lines it flags, the lines of open tracebacks and the few lines of
        context after a hit."""
        r = self.result
        if "\r" in body:
            body = body.replace("\r\n", "\n")
        body, junk = clean(body)
        r.junk_chars += junk
        if _pasted(body):
            body = self._as_printed(body)
        if not body.isascii():
            body = self._translate(body)
        body = self._read_numbers(body)
        body = self._read_abort_stacks(body)
        if self._quiet is not None:
            if r.hits or r.n_tracebacks or r.n_other_errors or self._quiet_chars + len(body) > QUIET_RESCAN_CHARS:
                self._quiet = None
            else:
                self._quiet.append(body)
                self._quiet_chars += len(body) + 1
        lines = body.split("\n")
        base = self._lineno
        n = len(lines)
        flagged = flagged_lines(self.kb.gate, body)
        if not body.isascii():
            # error words of other languages (knowledge.FOREIGN_WORDS): an ASCII chunk holds none
            extra = flagged_lines(self.kb.foreign_gate, body)
            if extra:
                flagged = sorted(set(flagged) | set(extra))
        # a message wrapped onto the next line (a terminal, a logger or the user cut it):
        # the lines joined are searched too, so a pattern that spans the break still matches
        # a terminal's hard wrap: a line cut at the width, continued by the pieces after it
        wraps = hard_wrap_cuts(lines) if n > 1 else set()
        seams: Set[int] = set()
        line_of, last = 0, 0
        for m in SEAM_RE.finditer(body):
            pos = m.start()
            line_of += body.count("\n", last, pos)
            last = pos
            # (the last piece of a line a terminal cut is as long as the line was: any length)
            if pos and body[pos - 1] in SEAM_END and line_of + 1 < n and len(lines[line_of]) <= SEAM_MAX \
                    and (SEAM_MIN <= len(lines[line_of]) or line_of - 1 in wraps):
                seams.add(line_of)
        if n > 1 and (_stream_of(lines[0]) or _stream_of(lines[-1])):
            seams |= self._prefixed_seams(lines)
        if seams or wraps:
            flagged = sorted(set(flagged) | seams | wraps)
        self._seams = seams
        self._wraps = wraps
        # the seams that are a line's pieces, for a refinement's context: not a new record of a
        # stream (a worker's, a pod's prefix) nor one that starts as the line before does (a
        # prefix repeated on every line), whose lines only look continued
        # (nor the line after a sentence's end: a wrapped piece ends inside a sentence)
        self._pieces = {i for i in seams if lines[i + 1][:8] != lines[i][:8] and lines[i].rstrip()[-1:] not in ".:;!?"
                        and not split_prefix(lines[i + 1])[0]}
        # how each line that continues the one before joins it in a refinement's context (a
        # seam: a space; a terminal's cut: glued), by line number; this chunk's and the last one's
        self._piece_joins = {**{k: v for k, v in self._piece_joins.items() if k > base - CONTEXT_PIECES},
                             **{base + i + 2: " " for i in self._pieces}, **{base + i + 2: "" for i in wraps}}
        if self.kb.clues and len(r.clues) < MAX_CLUES:
            self._find_clues(body, lines, base, wraps)
        if base == 0:
            self._fact_lines.extend(self._gate_facts(body, lines, base, 0, FACT_WINDOW))
        self._last_body = (base, body)
        k = 0
        i = 0
        while i < n:
            if not (self._open or self._waiting):
                while k < len(flagged) and flagged[k] < i:
                    k += 1
                if k == len(flagged):
                    break
                i = flagged[k]
            raw = lines[i]
            if len(raw) > MAX_LINE:  # a credential cut in two would no longer look like one
                raw = scrub_shapes(raw)[:MAX_LINE]
                r.cut_lines += 1
            for seg in (self._segments(raw) if "\r" in raw else (raw,)):
                if i in wraps:   # a terminal's cut: glued as it was split, a space tried second
                    self._line(base + i + 1, seg, (lines, i, base), _wrapped_rest(lines, i, wraps), glued_first=True)
                else:
                    self._line(base + i + 1, seg, (lines, i, base), self._joined(lines, i) if i in seams else None)
            i += 1
        self._tail = ([*self._tail, *(Line(base + j + 1, lines[j]) for j in range(max(0, n - CONTEXT_BEFORE), n))]
                      )[-CONTEXT_BEFORE:]
        self._lineno = base + n

    @staticmethod
    def _prefixed_seams(lines: List[str]) -> Set[int]:
        """The seams of a chunk whose lines carry a stream's prefix (``[rank3]: ``, a pod's, a
        journal's) or a timestamp (GitHub Actions'): :data:`SEAM_RE` read after it, between two
        lines of one stream (a message a logger or a console wrapped, then prefixed line by line)."""
        keyed = [(_stream_of(line), bare(line[:MAX_LINE])[1]) for line in lines]
        seams: Set[int] = set()
        for i in range(len(keyed) - 1):
            (key, text), (nxt_key, nxt) = keyed[i], keyed[i + 1]
            if key and key == nxt_key and SEAM_MIN <= len(text) <= SEAM_MAX and text[-1:] in SEAM_END \
                    and SEAM_RE.match("\n" + nxt):
                seams.add(i)
        return seams

    def _as_printed(self, body: str) -> str:
        """``body`` with what a paste's route put for the printed characters read back
        (:func:`as_printed`); the lines as pasted are kept for the report."""
        lines = body.split("\n")
        found = self._read_lines(lines, [i for i, raw in enumerate(lines) if _pasted(raw)], as_printed)
        return "\n".join(lines) if found else body

    def _translate(self, body: str) -> str:
        """``body`` with its localized system messages read in English (:mod:`.translate`)."""
        lines = body.split("\n")
        found = self._read_lines(lines, [i for i, raw in enumerate(lines) if not raw.isascii()], translate)
        return "\n".join(lines) if found else body

    def _read_numbers(self, body: str) -> str:
        """``body`` with the names of the bare status numbers it holds appended (``exit code
        132 [SIGILL: Illegal instruction]``, :mod:`.numbers`); only the lines the numbers' gate
        flags are read."""
        flagged = flagged_lines(NUMBERS_GATE, body)
        if not flagged:
            return body
        lines = body.split("\n")
        changed = self._read_lines(lines, flagged, read_numbers)
        # torch's "... set an error?" and its "Error 46" wrapped onto the next line
        for i in flagged:
            if i + 1 < len(lines) and len(lines[i + 1]) <= MAX_LINE:
                new = read_wrapped(lines[i], lines[i + 1])
                if new is not None:
                    if len(self.result.translated) < MAX_TRANSLATED:
                        self.result.translated.setdefault(self._lineno + i + 2, lines[i + 1])
                    lines[i + 1] = new
                    changed = True
        return "\n".join(lines) if changed else body

    def _read_abort_stacks(self, body: str) -> str:
        """``body`` with the first frame past libc's abort path marked where it is a GPU library's
        (:mod:`.stacks`, tools43); only the lines the frame gate flags are read."""
        flagged = flagged_lines(STACK_GATE, body)
        if not flagged:
            return body
        lines = body.split("\n")
        found = read_abort_stacks(lines, [i for i in flagged if len(lines[i]) <= MAX_LINE])
        if not found:
            return body
        kept = self.result.translated
        for i, new in found.items():
            if len(kept) < MAX_TRANSLATED:
                kept.setdefault(self._lineno + i + 1, lines[i])
            lines[i] = new
        return "\n".join(lines)

    def _read_lines(self, lines: List[str], indexes: List[int], read) -> bool:
        """Replace ``lines[i]`` by ``read(lines[i])`` for each index (a line past MAX_LINE is
        left); the line as the log wrote it is kept for the report (``ParseResult.translated``,
        the first reading's input when two readers change one line). True when one changed."""
        kept = self.result.translated
        changed = False
        for i in indexes:
            raw = lines[i]
            if len(raw) > MAX_LINE:
                continue
            new = read(raw)
            if new != raw:
                lines[i] = new
                changed = True
                if len(kept) < MAX_TRANSLATED:
                    kept.setdefault(self._lineno + i + 1, raw)
        return changed

    def _find_clues(self, body: str, lines: List[str], base: int, wraps: Set[int] = frozenset()) -> None:
        """Record where each clue literal first occurs (one more C-speed pass over the chunk).

        A comment of a library's source that a traceback echoes (IPython's and rich's
        numbered source lines: ``    168  # ... driver initialization error, no GPUs ...``)
        is the library's words, not the user's situation: its clues do not count.

        The chunk is searched with a line end after its last line (a chunk is whole lines), so
        a clue that ends with a line end (a number that must end its line: ``Unsupported operand
        60`` and its line end is not ``... 601``) is found on a chunk's last line too."""
        found = self.result.clues
        done = self._clues_done
        line_of, last = 0, 0
        body += "\n"
        for pos, hit in self.kb.clue_hits(body):
            line_of += body.count("\n", last, pos)
            last = pos
            if done and done.issuperset(self.kb.clue_literals(hit)):
                continue        # each clue it may be holds its CLUE_LINES lines already
            if _echoed_comment(lines, line_of, wraps):
                continue
            url = _in_url(body, pos)
            for lit in self.kb.clues_at(body, pos, hit):
                if url and not URL_SHAPED_CLUE_RE.search(lit):
                    # a word of a link ("github.com/microsoft/WSL/issues/..."): where the user read,
                    # not where the program ran; a clue that is itself a host or a path
                    # ("colab.research.google", "/usr/lib/wsl") still counts
                    continue
                seen = found.setdefault(lit, [])
                if len(seen) < CLUE_LINES and (not seen or seen[-1][0] != base + line_of + 1):
                    seen.append((base + line_of + 1, _clue_text(lines, line_of)))
                    if len(seen) == CLUE_LINES:
                        done.add(lit)
            if len(found) >= MAX_CLUES:
                return

    @staticmethod
    def _gate_facts(body: str, lines: List[str], base: int, start: int = 0, end: Optional[int] = None
                    ) -> List[Tuple[int, str]]:
        """(line number, text without prefixes) of the lines of ``body[start:end]`` (a chunk) that
        hold a fact literal."""
        out: List[Tuple[int, str]] = []
        line_of = body.count("\n", 0, start)
        last, prev = start, -1
        for m in FACT_GATE.finditer(body, start, len(body) if end is None else end):
            pos = m.start()
            line_of += body.count("\n", last, pos)
            last = pos
            if line_of != prev:
                prev = line_of
                out.append((base + line_of + 1, bare(lines[line_of][:_combinations.FactCollector.LINE_CHARS])[1]))
                if len(out) >= FACT_LINES:
                    break
        return out

    def _collect_facts(self) -> None:
        """Read the facts of the flagged lines at the start and at the end of the log and of
        every line the scan kept (hits with their context, error lines, exception lines), in
        line order."""
        r = self.result
        found: Dict[int, str] = dict(self._fact_lines)
        if self._last_body is not None:
            base, body = self._last_body
            start = max(0, len(body) - FACT_WINDOW, FACT_WINDOW if base == 0 else 0)
            if start < len(body):
                found.update(self._gate_facts(body, body.split("\n"), base, start))
        kept: List[Line] = [ln for h in r.hits for ln in (*h.before, h.line, *h.after)] + list(r.other_errors)
        for ln in kept:
            if ln.number not in found and FACT_GATE.search(ln.text):
                found[ln.number] = ln.text
        for tb in (*r.tracebacks, *self._tb_tail):
            text = f"{tb.exc_type}: {tb.message.splitlines()[0] if tb.message else ''}"
            if tb.exc_line and tb.exc_line not in found and FACT_GATE.search(text):
                found[tb.exc_line] = text
        # torch's out-of-memory message wrapped at word boundaries (tools39): its numbers read across
        # the exception's lines, or a hit's line and the lines after it, joined
        wrapped = [(tb.exc_line, f"{tb.exc_type}: {tb.message}".split("\n"))
                   for tb in (*r.tracebacks, *self._tb_tail) if tb.exc_line and "\n" in (tb.message or "")]
        wrapped += [(h.line.number, [h.line.text, *(a.text for a in h.after)]) for h in r.hits if h.after]
        for number, pieces in wrapped:
            joined = _combinations.torch_oom_across(pieces)
            if joined is not None:
                found[number] = joined
        if not found:
            return
        collector = _combinations.FactCollector()
        for number in sorted(found):
            collector.add(number, found[number])
        r.facts = collector.result()
        self._fact_lines, self._last_body = [], None

    @staticmethod
    def _segments(raw: str) -> List[str]:
        """A bare CR rewrites the line (progress bars): keep the distinct non-empty
        versions, at most the last three."""
        parts = [p for p in raw.split("\r") if p.strip()]
        if len(parts) > 3:
            parts = list(dict.fromkeys(parts))[-3:]
        return parts or [""]

    def _before(self, where: Optional[Tuple[List[str], int, int]]) -> Tuple[Line, ...]:
        """The CONTEXT_BEFORE lines before line ``i`` of a chunk (reaching into the previous one)."""
        if where is None:
            return ()
        lines, i, base = where
        # CONTEXT_BEFORE of the log's own lines: a piece that continues the line before it is
        # read with that line (so is a hit line's own earlier piece), CONTEXT_PIECES at most
        count = -1 if self._continues(i) else 0
        start = i
        while start > 0 and count < CONTEXT_BEFORE and i - start < CONTEXT_BEFORE + CONTEXT_PIECES:
            start -= 1
            count += not self._continues(start)
        before = [Line(base + j + 1, lines[j]) for j in range(start, i)]
        if len(before) < CONTEXT_BEFORE:
            before = (self._tail + before)[-CONTEXT_BEFORE:]
        return tuple(before)

    def _continues(self, i: int) -> bool:
        """Whether line ``i`` of the chunk continues the line before it (a seam or a terminal's cut)."""
        return i - 1 in self._pieces or i - 1 in self._wraps

    @staticmethod
    def _joined(lines: List[str], i: int) -> Optional[str]:
        """Line ``i`` and the next line (its prefix, indentation and quote marks removed),
        when the next one continues it."""
        nxt = bare(lines[i + 1][:MAX_LINE])[1].strip().lstrip(">").strip()
        if not nxt or nxt.startswith(("File \"", "Traceback (most recent")) or LOG_PREFIX_RE.match(nxt):
            return None
        return nxt

    def _rejoin(self, rest: str, where: Tuple[List[str], int, int]) -> Tuple[str, List[Entry]]:
        """A second look at an error line no entry matched (issue 8): the message may be broken
        before an upper-case word, a path or a number, which the seam pass (lower-case
        continuations only) leaves apart. The line joined with the next one, then the previous
        one joined with it, are searched, each with a space and, where neither side has one at
        the break (a terminal cut inside a word: ``LD_PRE`` / ``LOAD``, a path, CJK text),
        without; entries that match a part alone are not counted
        again. Only error lines get here (a few per log, at most MAX_REJOINS), so widening
        the join costs nothing on the lines of a healthy log."""
        self._rejoins += 1
        lines, i, _ = where
        alone = set(self.kb.match_line(rest)) if self._entry_gate(rest) is not None else set()
        n = SEAM_CHARS
        # (the whole join, its first part, the separator, its second part, whether the other
        # line is the first): searched within SEAM_CHARS of the break, the other line read
        # alone within the same reach
        joins: List[Tuple[str, str, str, str, bool]] = []
        if i + 1 < len(lines):
            nxt = self._joined(lines, i)
            if nxt and not exception_line(nxt):
                joins.append((f"{rest.rstrip()} {nxt}", rest.rstrip(), " ", nxt, False))
                if _cut_between(rest, bare(lines[i + 1][:MAX_LINE])[1]):
                    # a terminal cut inside a word: an upper-case name (LD_PRE|LOAD), CJK text
                    joins.append((rest + nxt, rest, "", nxt, False))
        prev_raw = lines[i - 1] if i > 0 else (self._tail[-1].text if self._tail else "")
        prev_raw = bare(prev_raw[:MAX_LINE])[1]
        prev = prev_raw.strip()
        if prev and not prev.startswith(("File \"", "Traceback (most recent")) \
                and not exception_line(strip_log_prefix(rest.strip())):
            joins.append((f"{prev} {rest.strip()}", prev, " ", rest.strip(), True))
            if _cut_between(prev_raw, rest):
                joins.append((prev + rest, prev, "", rest, True))
        for whole, first, sep, second, other_first in joins:
            head, tail = first[-n:], second[:n]
            joined = head + sep + tail
            if self._entry_gate(joined) is None:
                continue
            other = head if other_first else tail
            seen = alone | (set(self.kb.match_line(other)) if self._entry_gate(other) is not None else set())
            new = [e for e in self.kb.match_line(joined) if e not in seen]
            if new:
                return whole, new
        return rest, []

    def _soft_chunk(self, lines: List[str]) -> bool:
        """:func:`soft_wrapped` of the chunk ``lines``, computed once per chunk."""
        if self._soft[0] is not lines:
            self._soft = (lines, soft_wrapped(lines))
        return self._soft[1]

    @staticmethod
    def _paragraph_span(rest: str, where: Tuple[List[str], int, int], sentences: bool = False
                        ) -> Optional[Tuple[int, int, List[str]]]:
        """(first, last, stripped pieces) of the soft-wrapped paragraph of line ``i`` of a chunk
        (``rest`` standing for that line), or None when the line is a paragraph of its own."""
        lines, i, _ = where
        lo, hi = max(0, i - PARAGRAPH_LINES + 1), min(len(lines), i + PARAGRAPH_LINES)
        pieces = [rest if j == i else bare(lines[j][:MAX_LINE])[1] for j in range(lo, hi)]
        # a line whose logger's prefix was read off starts a record: no line above continues into it
        head = read_log_prefix(bare(lines[i][:MAX_LINE])[1])[0] > 0
        first, last = soft_wrap_paragraph(pieces, i - lo, head, sentences)
        if first == last:
            return None
        return lo + first, lo + last, [p.strip() for p in pieces[first:last + 1]]

    def _paragraph(self, rest: str, where: Tuple[List[str], int, int], have: List[Entry],
                   folded: bool = False) -> Tuple[str, List[Entry]]:
        """The soft-wrapped paragraph of line ``i`` (:func:`soft_wrap_paragraph`) joined with
        spaces, and the entries it reads that none of its lines reads alone and that ``have`` does
        not hold; ``(rest, [])`` when there is none. A message re-wrapped at word boundaries may
        hold a signature's core over three or more lines (``Unexpected error from
        cudaGetDeviceCount(). Did you run some cuda`` / ``functions before calling ...`` / ``Error
        500: named symbol not found``), which the joins of two lines leave apart. The joined text
        has its bare status numbers named (``return code = -9`` cut from its number); ``folded``:
        an error line's paragraph is matched whatever the letter case too, as the line would be.
        At most MAX_PARAGRAPHS paragraphs are looked for per log."""
        if self._paragraphs >= MAX_PARAGRAPHS:
            return rest, []
        self._paragraphs += 1
        span = self._paragraph_span(rest, where)
        if span is None:
            return rest, []
        self._rejoins += 1
        parts = span[2]
        joined = " ".join(parts)
        if NUMBERS_GATE.search(joined) is not None:
            joined = read_numbers(joined)
        if self._entry_gate(joined) is None:
            return rest, []
        alone = set(have)
        for part in parts:
            if self._entry_gate(part) is not None:
                alone.update(self.kb.match_line(part))
        new = [e for e in self.kb.match_line(joined) if e not in alone]
        if not new and folded and self._folded < MAX_FOLDED:
            self._folded += 1
            new = [e for e in self.kb.match_line_folded(joined) if e not in alone]
            if new:   # not one a line reads alone whatever its case
                self._folded += len(parts)
                for part in parts:
                    alone.update(self.kb.match_line_folded(part))
                new = [e for e in new if e not in alone]
        return (joined, new) if new else (rest, [])

    def _line(self, lineno: int, text: str, where: Optional[Tuple[List[str], int, int]] = None,
              continuation: Optional[str] = None, glued_first: bool = False) -> None:
        text = undecorate(text)
        key, rest = split_prefix(text)
        if key:
            rest = undecorate(rest)
        level, whole = "", rest
        end, lvl, stamped = _record_prefix(rest)
        if stamped:
            # the message core; the record's level is kept apart (an INFO record is no error, nor
            # is an error record that says nothing: a logger's prefix on an empty line)
            level, rest = lvl, rest[end:]
            if level in _QUIET_LEVELS:
                # a record that relays another program's line (a wrapper logging each line of its
                # child at INFO): the level the line carries itself is the one that counts
                level = _relayed_level(rest) or level
        if not key and self._open:
            for k, op in self._open.items():
                if op.lit and text.startswith(op.lit):
                    key, rest = k, text[len(op.lit):]
                    break
        self._streams.setdefault(key, None)
        line = Line(lineno, rest, key)
        tb_index = self._traceback_step(key, rest, lineno, stamped, quiet=stamped and level in _QUIET_LEVELS)
        if level in _AS_WRITTEN_LEVELS and key not in self._open:
            # an INFO, DEBUG or WARNING record outside a traceback is read as written: its level
            # keeps it quiet, or a warning, wherever a rule looks for one
            rest = whole
            line = Line(lineno, rest, key)

        if self._waiting:
            # CONTEXT_AFTER of the log's own lines, each with the pieces that continue it (a
            # wrapped line's, CONTEXT_PIECES at most): the line's piece counts only where it
            # does not continue the line before, and the window closes before a new line
            own = not (where is not None and self._continues(where[1]))
            more = where is not None and self._continues(where[1] + 1) and where[1] + 1 < len(where[0])
            still = []
            for hit, after, counted in self._waiting:
                after.append(line)
                counted[0] += own
                if counted[0] >= CONTEXT_AFTER and not (more and len(after) < CONTEXT_AFTER + CONTEXT_PIECES):
                    self._emit(hit, after)
                else:
                    still.append((hit, after, counted))
            self._waiting = still

        if continuation is not None:
            # word-wrapped (a space was lost at the break) or cut mid-word by a terminal
            # (a terminal keeps the space where it cut at one: glued as is)
            spaced = f"{rest.rstrip()} {continuation}"
            glued = rest + continuation if glued_first else rest.rstrip() + continuation
            for joined in ((glued, spaced) if glued_first else (spaced, glued)):
                if self._entry_gate(joined) is None:
                    continue
                alone = self.kb.match_line(rest) if self._entry_gate(rest) is not None else []
                if [e for e in self.kb.match_line(joined) if e not in alone]:
                    rest = joined
                    line = Line(lineno, rest, key)
                    break
        # (the gate searched once per line: perf36 found every flagged line searched twice)
        gated = self._gate(rest) is not None
        if not gated and self._seam_piece(rest, continuation, glued_first, where) \
                and self._gate(f"{rest.rstrip()} {continuation}") is not None and not self._open.get(key):
            # the words of a failure a word wrapper broke apart ("...so:undefined" / "symbol: _ZN3c10..."):
            # neither piece is an error line, the whole is (clean35)
            joined = f"{rest.rstrip()} {continuation}"
            shape = error_shape(joined)
            if shape and not (where is not None and self._paragraph_seen[0] <= where[2] + where[1]
                              <= self._paragraph_seen[1]):
                self._paragraph_seen = (where[2] + where[1] + 1, where[2] + where[1] + 1)
                self._other(self._with_earlier_pieces(Line(lineno, joined, key), where)
                            if where[1] - 1 in self._pieces and shape in self._SENTENCE_SHAPES
                            else Line(lineno, joined, key), shape)
        elif gated and not ECHOED_COMMENT_RE.match(rest) \
                and not ECHOED_STRING_RE.match(rest):
            # (a comment of the library's source that a traceback echoes, ``168  # ... error ...``,
            # is neither an error line nor a signature's message)
            # most flagged lines carry only a structural word ("Error", "Traceback"):
            # one more search rules out every entry at once
            partial = self._entry_gate(rest) is not None
            entries = self.kb.match_line(rest) if partial else []
            # the frames and source lines of a traceback are not error lines of their own
            # (`    raise ValueError(...)`): the traceback's exception line speaks for them
            op = self._open.get(key)
            in_frames = op is not None and op.state == "frames" and (rest[:1] in (" ", "\t")
                                                                    or rest.startswith('File "'))
            shape = None if entries or in_frames else error_shape(rest)
            by_level = False
            if shape is None and level and not (entries or in_frames):
                # an error record whose message alone reads as no error (klog's
                # ``E1201 ... memcache.go:265] "Unhandled Error" err=...``): its level says it is one
                shape = error_shape(whole)
                by_level = shape is not None
            # a line only a catch-all matched (a bare "CUDA error: ...") may be the first half of
            # a message a specific signature names once joined; so may a line only a user's-
            # statement rule matched (PaddlePaddle's "Cannot use GPU because you have installed
            # CPU version" wrapped before "PaddlePaddle.")
            catch_all = bool(entries) and all(e.fallback or e.number or e.said for e in entries)
            if catch_all and (INFO_LEVEL_RE.match(rest) or level in _QUIET_LEVELS):
                # a catch-all names an error nothing more specific explains; an INFO record is no
                # error, nor a user's sentence (NCCL_DEBUG=INFO prints "dlerror=libnccl-net.so:
                # cannot open shared object file ... using internal implementation" on every healthy run)
                entries, catch_all = [], False
            if not entries and partial and self._rejoins < MAX_REJOINS:
                # a message quoted in prose: a pattern anchored at its end ('...named 'torch'$')
                # fails on the sentence around it, not on the quoted span or the line without
                # its final full stop
                parts = _quoted_parts(rest)
                self._rejoins += bool(parts)
                for part in parts:
                    # (a quoted span is a program's message: a user's statement is read whole)
                    entries = [e for e in self.kb.match_line(part) if not e.said]
                    if entries:
                        break
            if (not entries or catch_all) and where is not None and (partial or shape or catch_all) \
                    and self._rejoins < MAX_REJOINS:
                joined, found = self._rejoin(rest, where)
                if not found and self._rejoins < MAX_REJOINS:
                    joined, found = self._paragraph(rest, where, entries, folded=shape is not None)
                # (a line a catch-all named keeps it unless the join names more; a line nothing
                # named takes what the join names, a fallback entry too: it ranks last anyway)
                if found and not (catch_all and all(e.fallback or e.number or e.said for e in found)):
                    rest, entries = joined, found
                    line = Line(lineno, rest, key)
            elif entries and where is not None and not in_frames and self._rejoins < MAX_REJOINS:
                # a line a specific entry named may be the start of a re-wrapped message whose
                # whole names one more (a `No space left on device` whose paragraph ends on /dev/shm)
                joined, found = self._paragraph(rest, where, entries)
                if found and not all(e.fallback or e.number or e.said for e in found):
                    rest, entries = joined, entries + found
                    line = Line(lineno, rest, key)
            if not entries and shape and self._folded < MAX_FOLDED:
                # an error line no signature matches as written may match whatever the letter
                # case (a Go program's lower-case errors, a message retyped by hand); after the joins,
                # which read the text as written
                self._folded += 1
                entries = self.kb.match_line_folded(rest)
                if not entries and continuation is not None and not rest.endswith(continuation):
                    # the piece of a line a terminal cut or a wrapper broke: its joins too, whatever
                    # the case (a retyped message cut at 80 columns)
                    alone = set(self.kb.match_line_folded(continuation))
                    spaced, glued = f"{rest.rstrip()} {continuation}", rest + continuation
                    for joined in ((glued, spaced) if glued_first else (spaced, glued)):
                        entries = [e for e in self.kb.match_line_folded(joined) if e not in alone]
                        if entries:
                            rest = joined
                            line = Line(lineno, rest, key)
                            break
                if entries:
                    shape = None
            if entries:
                tb = self._open.get(key)
                tb_ctx = tb.tb.context() if tb else ""
                before = self._before(where)
                for e in entries:
                    n = self.result.hit_counts.get(e.id, 0) + 1
                    self.result.hit_counts[e.id] = n
                    if n <= HITS_PER_ENTRY:
                        # (the lines around it are added when the hit is emitted: _emit)
                        hit = Hit(e.id, line, before, (),
                                  tb_index if tb_index is not None else (tb.tb.index if tb else None), tb_ctx)
                        self._waiting.append((hit, [], [0]))
                if all(e.said and not e.is_root for e in entries):
                    # a user's words for a symptom ("GPU not detected") read only where nothing else
                    # shows the failure (reasoning): the line still counts as what it is
                    self._other(line, error_shape(rest))
            elif not in_frames:
                if where is not None and self._paragraph_seen[0] <= where[2] + where[1] <= self._paragraph_seen[1]:
                    return          # reported with the paragraph it continues
                if where is not None and self._paragraphs < MAX_PARAGRAPHS and not WARNING_RE.match(rest) \
                        and self._soft_chunk(where[0]):
                    # an unexplained error re-wrapped at word boundaries is reported whole (what a
                    # guess from its words reads), once for its paragraph
                    self._paragraphs += 1
                    span = self._paragraph_span(rest, where, sentences=True)
                    if span is not None:
                        first, last = where[2] + span[0], where[2] + span[1]
                        joined = " ".join(span[2])
                        # (a line that is no error alone takes its paragraph only where it holds no
                        # error word a rule judged healthy, and no line of it is an error alone
                        # either: the whole states the failure)
                        joined_shape = shape or (error_shape(joined) if not _error_words(rest) and not any(
                            error_shape(part) for part in span[2]) else None)
                        if joined_shape:
                            self._paragraph_seen = (first, last)
                            line, shape = Line(lineno, joined, key), joined_shape
                elif glued_first and continuation and shape and where is not None and not rest.endswith(continuation) \
                        and error_shape(continuation) is None:
                    # an unexplained error line a terminal cut is reported whole (what a guess from
                    # its words reads), once for its pieces, where they are no error line of their own
                    # (two error lines that merely look cut stay two); a cut between two letters joined
                    # with a space, as a refinement's context reads it (a word-wrapper's dropped space
                    # leaves the same cut: its words stay whole, a terminal's cut word reads as two)
                    last = where[1] + 1
                    while last in self._wraps:
                        last += 1
                    self._paragraph_seen = (where[2] + where[1] + 1, where[2] + last)
                    space = " " if rest[-1:].isalnum() and continuation[:1].isalnum() else ""
                    line = Line(lineno, rest + space + continuation, key)
                elif not shape and not entries and self._seam_piece(rest, continuation, glued_first, where) \
                        and not _error_words(rest) and error_shape(f"{rest.rstrip()} {continuation}"):
                    # an unexplained error line a word wrapper broke (clean35: a mail client, an
                    # editor or the issue form re-wrapped it at a space; the next line, lower-case and
                    # no error line of its own, is its rest): reported whole, once for both pieces,
                    # as a terminal's cut is above; also where only the whole is an error line (the
                    # words of the failure broken apart: "install the" / "cpu version of torch")
                    self._paragraph_seen = (where[2] + where[1] + 1, where[2] + where[1] + 1)
                    line = Line(lineno, f"{rest.rstrip()} {continuation}", key)
                    shape = shape or error_shape(line.text)
                if shape and where is not None and (where[1] - 1 in self._wraps or (
                        where[1] - 1 in self._pieces and shape in self._SENTENCE_SHAPES)):
                    # (a word wrapper's earlier pieces only for a sentence's words: a program's own
                    # line, "x86_64-linux-gnu-gcc: error: ...", starts its message after any line)
                    line = self._with_earlier_pieces(line, where)
                if by_level and error_shape(line.text) is None:
                    # (a paste whose every line a logger stamped ERROR: prose, a table, a banner)
                    self._n_by_level += 1
                    if len(self._by_level) < OTHER_ERRORS:
                        self._by_level.append(line)
                else:
                    self._other(line, shape)

    #: the shapes of a user's sentence (error_shape), whose start a word wrapper may have put on
    #: the lines before
    _SENTENCE_SHAPES = frozenset(("word", "prose", "cpu", "slain", "foreign"))

    def _seam_piece(self, rest: str, continuation: Optional[str], glued_first: bool,
                    where: Optional[Tuple[List[str], int, int]]) -> bool:
        """Whether line ``where`` (``rest``) goes on in ``continuation``, the next line, as a word
        wrapper broke it (a seam that is a line's piece: :attr:`_pieces`), and that piece is no
        error line nor a signature's line of its own."""
        if not continuation or glued_first or where is None or where[1] not in self._pieces \
                or not (continuation[:1].isalnum() or continuation[:1] == "(") or _PROGRESS_RE.search(rest) \
                or rest.endswith(continuation) or error_shape(continuation) is not None:
            return False            # (a fence, a quote mark, a progress bar: no wrapped sentence)
        return self._entry_gate(continuation) is None or not self.kb.match_line(continuation)

    def _with_earlier_pieces(self, line: Line, where: Tuple[List[str], int, int]) -> Line:
        """An unexplained error line that is the later piece of a line a terminal cut, reported
        from where the cut line starts (what a guess from its words reads: a user's sentence
        whose error word fell after the cut), where the earlier pieces are no error line of
        their own; joined as :meth:`_line` joins a cut line's pieces."""
        lines, i, base = where
        start = i
        # (a word wrapper's pieces too, joined with the space it broke at: clean35)
        while (start - 1 in self._wraps or start - 1 in self._pieces) and start - 1 >= 0 \
                and i - start < CONTEXT_PIECES:
            start -= 1
        pieces = [bare(lines[j][:MAX_LINE])[1] for j in range(start, i)]
        if not pieces or any(error_shape(piece) or _PROGRESS_RE.search(piece) for piece in pieces):
            # (a progress bar as wide as the terminal is no line the error continues: the
            # shell's "Killed" after a bar the kill cut short stays its own line)
            return line
        text = ""
        for j, piece in enumerate([*pieces, line.text]):
            seam = j and start + j - 1 in self._pieces and start + j - 1 not in self._wraps
            text += (" " if seam or (text[-1:].isalnum() and piece[:1].isalnum()) else "") + \
                (piece.strip() if seam else piece)
        return Line(base + start + 1, text, line.stream)

    def _emit(self, hit: Hit, after: List[Line]) -> None:
        # the log's lines around the hit, a wrapped line's pieces joined back (a refinement's
        # context reads a line as the log wrote it, however a paste wrapped it), then its traceback
        ctx = self._joined_lines([*hit.before, hit.line, *after]) + "\n" + hit.context
        tb = self.result.traceback(hit.traceback)
        if tb is not None and tb.exc_type:
            ctx += f"\n{tb.exc_type}: {tb.message}"
        whole = self._joined_lines([hit.line, *after]).split("\n", 1)[0] if after else ""
        self.result.hits.append(Hit(hit.entry, hit.line, hit.before, tuple(after), hit.traceback, ctx,
                                    whole if whole != hit.line.text else ""))

    def _joined_lines(self, lines: Sequence[Line]) -> str:
        """The text of ``lines``, each piece that continues the line before it joined to it."""
        out: List[str] = []
        prev = None
        for ln in lines:
            join = self._piece_joins.get(ln.number) if prev is not None and ln.number == prev + 1 else None
            if join is None or not out:
                out.append(ln.text)
            elif join or (out[-1][-1:].isalnum() and ln.text[:1].isalnum()):
                # a seam; or a cut between two letters, which a word-wrapper's dropped space leaves
                # too (a line of the terminal's width may be one): read as two words
                out[-1] = out[-1].rstrip() + " " + ln.text.strip()
            else:
                out[-1] += ln.text
            prev = ln.number
        return "\n".join(out)

    def _other(self, line: Line, shape: Optional[str] = None) -> None:
        text = line.text
        r = self.result
        if WARNING_RE.match(text):
            r.n_warnings += 1
        elif shape or error_shape(text):
            if warning_line(text):
                r.n_warnings += 1
                self._n_warned += 1
                if len(self._warned) < OTHER_ERRORS:
                    self._warned.append(line)
                return
            r.n_other_errors += 1
            if len(r.other_errors) < OTHER_ERRORS:
                r.other_errors.append(line)
            return
        if not r.n_other_errors and suspect_shape(text):
            r.n_suspects += 1
            if len(r.suspects) < OTHER_ERRORS:
                r.suspects.append(line)

    # -- tracebacks ----------------------------------------------------------
    def _traceback_step(self, key: str, text: str, lineno: int, stamped: bool = False,
                        quiet: bool = False) -> Optional[int]:
        """Advance the traceback state machine of ``key``; returns the index of the
        traceback whose exception line ``text`` is, if it is one."""
        pos = text.find(TB_START)
        if pos >= 0:
            # text before "Traceback" on an unprefixed line (e.g. "worker-0: "): later lines of
            # this traceback may repeat it
            lit = text[:pos] if pos and not key else ""
            old = self._open.pop(key, None)
            if old is not None:
                old.tb.truncated = old.tb.truncated or old.state == "frames"
                self._finish(old.tb)
            r = self.result
            tb = Traceback(index=r.n_tracebacks, start=lineno, stream=key)
            r.n_tracebacks += 1
            chain = self._chain.pop(key, None)
            if chain and key in self._last_closed:
                tb.chain = chain
                tb.parent = self._last_closed[key].index
            head = text[:pos]
            self._open[key] = _Open(tb, lit if lit.strip() else "", head[:len(head) - len(head.lstrip(" \t"))])
            self._open[key].stamped = stamped
            return None
        if CHAIN_CONTEXT in text or CHAIN_CAUSE in text:
            op = self._open.pop(key, None)
            if op is not None:
                self._finish(op.tb)
            if key in self._last_closed:
                self._chain[key] = "context" if CHAIN_CONTEXT in text else "cause"
            return None
        op = self._open.get(key)
        if op is None:
            if '", line ' in text:
                self._headless(key, text, lineno)
            return None
        tb = op.tb
        if op.indent and text.startswith(op.indent):
            # a line at the traceback's own indentation reads as an unindented one (the frames and
            # source lines below it stay indented)
            text = text[len(op.indent):]
        if op.state == "frames":
            if not text.strip():
                return None
            if text[0] in " \t":
                m = FRAME_RE.match(text)
                if m:
                    tb.n_frames += 1
                    fr = Frame(m.group("file"), int(m.group("line")), (m.group("func") or "").strip())
                    tb.frames.append(fr)
                    if len(tb.frames) > FRAMES_KEPT:
                        del tb.frames[0]
                    if len(tb.files_text) < TB_CONTEXT_CHARS:
                        tb.files_text += fr.file + "\n"
                return None
            exc = exception_line(strip_log_prefix(text.rstrip()))
            if exc:
                tb.exc_type = exc[0]
                tb.message = exc[1].strip()
                tb.exc_line = lineno
                tb.end = lineno
                op.state = "message"
                return tb.index
            op.foreign += 1
            if op.foreign > 3:
                tb.truncated = True
                self._close(key)
            return None
        # state == "message": continuation lines of a multi-line exception message
        # (a logger's quiet record after a traceback printed without one starts a record of its own:
        # DeepSpeed's '[...] [INFO] [launch.py:319:sigkill_handler] Killing subprocess' after its worker's
        # traceback; an error record, glog's 'E1206 ...' between ranks' tracebacks, is left to the
        # message's own end, so that a read that counts repeated records instead of reading them closes
        # tracebacks in the same order: tests/test_explain_long.py)
        if not text.strip() or RECORD_RE.match(text) or tb.message.count("\n") >= MESSAGE_LINES \
                or (quiet and not op.stamped) or text.strip() == SHOW_HELP_FRAME or PROGRAM_ERROR_RE.match(text):
            self._close(key)
            return None
        tb.message += "\n" + text.rstrip()
        tb.end = lineno
        return tb.index

    def _headless(self, key: str, text: str, lineno: int) -> None:
        """Open a traceback at a frame line that no "Traceback" line announced: its head was cut
        (the paste starts inside it, or only the log's last lines were kept). It is marked
        truncated; the frames and the exception line that follow are read as usual."""
        m = HEADLESS_FRAME_RE.match(text)
        if m is None:
            return
        r = self.result
        tb = Traceback(index=r.n_tracebacks, start=lineno, stream=key, truncated=True)
        r.n_tracebacks += 1
        fr = Frame(m.group("file"), int(m.group("line")), (m.group("func") or "").strip())
        tb.frames.append(fr)
        tb.n_frames = 1
        tb.files_text = fr.file + "\n"
        self._open[key] = _Open(tb, "")

    def _close(self, key: str) -> None:
        op = self._open.pop(key, None)
        if op is not None:
            self._finish(op.tb)

    def _finish(self, tb: Traceback) -> None:
        if not tb.end:
            tb.end = tb.start
        self._last_closed[tb.stream] = tb
        r = self.result
        if len(r.tracebacks) < TRACEBACKS_HEAD:
            r.tracebacks.append(tb)
        else:
            self._tb_tail.append(tb)


# -- reading inputs ------------------------------------------------------------

def _sniff_binary(sample: bytes) -> bool:
    """True when ``sample`` does not look like text in any encoding we read."""
    if not sample:
        return False
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    nul = sample.count(b"\x00")
    if nul > len(sample) // 10:
        return True
    text = sample.decode("utf-8", "replace")
    bad = text.count("\ufffd") + sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\x1b\x08\x0c")
    return bad > max(8, len(text) // 5)


def iter_decoded(stream: IO[bytes], chunk: int = CHUNK) -> Iterator[str]:
    """Decode a byte stream to text chunks: UTF-8 (invalid bytes replaced), or UTF-16
    with a BOM; gzip is decompressed. Raises :class:`InputError` for binary input."""
    head = stream.read(chunk)
    if head[:2] == b"\x1f\x8b":
        stream = _Gunzip(gzip.GzipFile(fileobj=_Prepend(head, stream)))
        head = stream.read(chunk)
    if _sniff_binary(head[:65536]):
        raise InputError("the input looks binary, not like a text log")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        dec = codecs.getincrementaldecoder("utf-16")("replace")
    else:
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        if head.startswith(codecs.BOM_UTF8):
            head = head[3:]
    data = head
    while data:
        yield dec.decode(data)
        data = stream.read(chunk)
    tail = dec.decode(b"", final=True)
    if tail:
        yield tail


class _Gunzip:
    """Reads a gzip stream; a corrupt one raises :class:`InputError`."""

    def __init__(self, gz: "gzip.GzipFile"):
        self.gz = gz

    def read(self, n: int = -1) -> bytes:
        try:
            return self.gz.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot read the gzip-compressed input: {exc}") from None


class _Prepend(io.RawIOBase):
    """A readable stream: ``head`` bytes, then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]):
        self.head = head
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self.head:
            n = min(len(b), len(self.head))
            b[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.stream.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def flagged_lines(pattern: Pattern[str], body: str) -> List[int]:
    """The indexes of the lines of ``body`` that ``pattern`` matches in, in order, each once:
    one search over the chunk (in C), Python touching only the matches."""
    flagged: List[int] = []
    line_of, last = 0, 0
    for m in pattern.finditer(body):
        pos = m.start()
        line_of += body.count("\n", last, pos)
        last = pos
        if not flagged or flagged[-1] != line_of:
            flagged.append(line_of)
    return flagged


def scan_stream(stream: IO[bytes], kb: Optional[KnowledgeBase] = None,
                progress: Optional[Callable[[int], None]] = None) -> ParseResult:
    """Scan a binary stream (file, stdin.buffer) in bounded memory. ``progress``, when given,
    is called with the bytes read so far after each chunk."""
    scanner = LogScanner(kb)
    counter = _Counting(stream)
    for text in iter_decoded(counter):
        scanner.feed(text)
        if progress is not None:
            progress(counter.n)
    result = scanner.close()
    result.bytes = counter.n
    result.compressed = counter.compressed
    return result


class _Counting:
    def __init__(self, stream: IO[bytes]):
        self.stream = stream
        self.n = 0
        self.compressed = False

    def read(self, n: int = -1) -> bytes:
        data = self.stream.read(n)
        if self.n == 0 and data[:2] == b"\x1f\x8b":
            self.compressed = True
        self.n += len(data)
        return data


def scan_text(text: str, kb: Optional[KnowledgeBase] = None) -> ParseResult:
    """Scan a log already in memory."""
    scanner = LogScanner(kb)
    scanner.feed(text)
    result = scanner.close()
    result.bytes = len(text.encode("utf-8", "replace"))
    return result
