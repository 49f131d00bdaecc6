"""Read a bare numeric status code as its name: what a program printed as a number, put next
to the name and text explain's signatures are written for.

``exited with code 132`` becomes ``exited with code 132 [SIGILL: Illegal instruction]``;
``exit code -1073741819 (0xC0000005)`` becomes ``... (0xC0000005) [STATUS_ACCESS_VIOLATION]``;
``RuntimeError: CUDA error 35`` becomes ``RuntimeError: CUDA error 35
[cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version]``;
``NCCL error 2`` becomes ``NCCL error 2 [ncclSystemError: unhandled system error ...]``.

A number is read only in a context that says which namespace it belongs to (:data:`CONTEXTS`,
each a regular expression anchored on literal words, with bounded repeats only, so a line
costs linear time): a process's exit status (128+N and a negative N are signal N, a negative
32-bit value or one >= 0xC0000000 an NTSTATUS), ``0xC0000...``/``0x887A...`` anywhere, the
CUDA runtime's and driver's numbers after their usual words or a ``cuda*``/``cu*`` call, NCCL's,
cuBLAS's, cuDNN's and NVML's after theirs, a Vulkan call's negative result. The names and texts
come from the vendors' headers and libraries (``knowledge/status_codes.json``, written by
``scripts/build_status_codes.py``). A number whose name or text the line already holds is
left as it is (and so is one the program follows with its own text: ``NCCL Error 2: unhandled
system error``), and so are exit statuses 0, 1 and -1 (a program's own failure, no signal).
The CUDA runtime's numbers are read in the numbering of CUDA 10.1 and later (older releases
numbered most of them otherwise; their ``cuda runtime error (N) : text`` is not read).
Pure and standard library only.
"""

from __future__ import annotations

import functools
import json
import re
import string
from pathlib import Path
from typing import Callable, Dict, List, Optional, Pattern, Tuple

from .knowledge import _literal_alternation

FILE = Path(__file__).resolve().parent.parent / "knowledge" / "status_codes.json"

#: names appended to one line at most
MAX_READINGS = 8

Names = Dict[str, Dict[str, Tuple[str, ...]]]


@functools.lru_cache(maxsize=1)
def table() -> Names:
    """namespace -> key (a decimal number; ``0xC0000005`` for NTSTATUS and HRESULT) -> (name, text?)."""
    try:
        doc = json.loads(FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {ns: {k: tuple(v) for k, v in values.items()} for ns, values in doc.get("namespaces", {}).items()}


#: the exception code Microsoft's C++ runtime raises for every ``throw`` (vcruntime's
#: _CxxThrowException; ehdata.h ``#define EH_EXCEPTION_NUMBER ('msc' | 0xE0000000)``): a process
#: that lets a C++ exception escape exits with it (``exited with code 0xE06D7363``, ``-529697949``,
#: ``3765269347``). A customer code (bit 29 set), in no ntstatus.h: its own namespace, which says what
#: it is and nothing of the cause (what was thrown is in the program's own output, if anywhere)
MSVC_CXX_EXCEPTION = 0xE06D7363
MSVC_NAMES: Dict[int, Tuple[str, ...]] = {
    MSVC_CXX_EXCEPTION: ("EH_EXCEPTION_NUMBER", "an uncaught C++ exception (Microsoft C++ runtime), not an NTSTATUS"),
}


def lookup(namespace: str, value: int) -> Optional[Tuple[str, ...]]:
    """(name, text?) of ``value`` in ``namespace``, or None."""
    if namespace == "MSVC":
        return MSVC_NAMES.get(value & 0xFFFFFFFF)
    values = table().get(namespace)
    if not values:
        return None
    key = f"0x{value & 0xFFFFFFFF:08X}" if namespace in ("NTSTATUS", "HRESULT") else str(value)
    return values.get(key)


# -- what a number means in each context ------------------------------------------------------

Reading = Tuple[str, int]  # (namespace, value)


def _exit_status(value: int) -> Optional[Reading]:
    """A process's exit status: 128+N (a shell's, Docker's, make's) and -N (Python's
    returncode, torch elastic's exitcode) are signal N; a negative 32-bit value or one from
    0xC0000000 up is what Windows reports for a process an exception or the loader ended."""
    if value in (0, 1, -1):
        return None
    if 129 <= value <= 159:
        return ("signal", value - 128)
    if -31 <= value <= -2:
        return ("signal", -value)
    if -0x80000000 <= value < 0 or 0x80000000 <= value <= 0xFFFFFFFF:
        return _windows(value & 0xFFFFFFFF)
    return None


def _windows(u: int) -> Reading:
    """A 32-bit Windows status: MSVC's C++ exception code, an NTSTATUS (from 0xC0000000) or an HRESULT."""
    if u in MSVC_NAMES:
        return ("MSVC", u)
    return ("NTSTATUS", u) if u >= 0xC0000000 else ("HRESULT", u)


def _returned_status(value: int) -> Optional[Reading]:
    """A bare ``returned N`` whose N only a Windows status can be: a negative 32-bit value or one from
    0xC0000000 up (nine or ten digits; a small number after "returned" is anything: a count, a size)."""
    if -0x40000000 <= value < 0 or 0xC0000000 <= value <= 0xFFFFFFFF:
        u = value & 0xFFFFFFFF
        return _windows(u) if u >= 0xC0000000 else None
    return None


def _signal(value: int) -> Optional[Reading]:
    return ("signal", value) if 1 <= value <= 31 else None


def _hex(text: str) -> Optional[Reading]:
    return _windows(int(text, 16))


def _negative_hresult(value: int) -> Optional[Reading]:
    return ("HRESULT", value & 0xFFFFFFFF) if -0x80000000 <= value < 0 else None


#: a library's words -> its namespace
_LIBRARY = {"cuda": "cudaError", "cudaerror": "cudaError", "cudaerror_t": "cudaError",
            "curesult": "CUresult", "nccl": "ncclResult", "ncclresult": "ncclResult",
            "ncclresult_t": "ncclResult", "cublas": "cublasStatus", "cublasstatus": "cublasStatus",
            "cublasstatus_t": "cublasStatus", "cudnn": "cudnnStatus", "cudnnstatus": "cudnnStatus",
            "cudnnstatus_t": "cudnnStatus", "nvml": "nvmlReturn", "nvmlreturn": "nvmlReturn",
            "nvmlreturn_t": "nvmlReturn", "vkresult": "VkResult"}


def _call_namespace(call: str) -> Optional[str]:
    """The namespace of what an API call returns, by its name."""
    for prefix, ns in (("cublas", "cublasStatus"), ("cudnn", "cudnnStatus"), ("cuda", "cudaError"),
                       ("cu", "CUresult"), ("nccl", "ncclResult"), ("nvml", "nvmlReturn"), ("vk", "VkResult")):
        if call.startswith(prefix):
            return ns
    return None


_NUM = r"(?P<num>-?\d{1,10})\b"
_SEP = r"[ \t]{0,8}(?:[:=#][ \t]{0,4})?\(?[ \t]{0,2}"
#: a check macro's own words between the library's and the number: "CUDA error: Error code 35",
#: "CUBLAS error: Status code 13" (optional)
_CODE_WORD = r"(?:(?:[Ee]rror|[Ss]tatus)[ _]code[ \t]{0,2}(?:[:=#][ \t]{0,2})?)?"
#: a call's result that is a count, not a status: "cudaGetDeviceCount returned 8 devices",
#: "returned 3 CUDA GPUs", "cudaMemGetInfo returned 2048 MB"
_NOT_A_COUNT = (r"(?![ \t]{1,2}(?:[A-Za-z]{1,12} )?(?:devices?|GPUs?|gpus?|bytes?|[KMGT]i?B|elements?|items?"
                r"|entries|times|ms|seconds?|threads?|blocks?|streams?|kernels?|ranks?|nodes?|processes)\b)")
#: the CUDA driver API's call names (``cuInit``, ``cuDeviceGet``, ``cuMemAlloc_v2``, ``cuTensorMapEncodeTiled``):
#: named one by one so cuDNN, cuBLAS, cuFFT, cuPy ... are not taken for driver calls
_DRIVER_CALL = (r"cu(?:Init|Device|Ctx|Mem|Module|Launch|Stream|Event|Graph|Link|Library|Func|Tex|Surf"
                r"|GetProcAddress|DriverGetVersion|Pointer|Ipc|Array|Occupancy|Kernel|TensorMap|Import"
                r"|External|Multicast)")


#: the end of torch's question before its "Error N" (c10/cuda/CUDAFunctions.cpp): the words the
#: number follows, on its line or at the end of the line before it
TORCH_DEVICE_COUNT = r"(?:\bNumCudaDevices\(\)[^\n]{0,60}?|\bhave already )set an error\?"


class Context:
    """One context: a literal-anchored pattern with a ``num`` (or ``hex``) group, the words a
    line must hold for it to be tried (lower case), and what the number means there."""

    def __init__(self, name: str, pattern: str, needles: Tuple[str, ...],
                 read: Callable[[re.Match], Optional[Reading]], as_text: bool = False):
        self.name = name
        self.as_text = as_text  # the text written as the program would have: "Error 2: out of memory"
        self.regex: Pattern[str] = re.compile(pattern)
        self.needles = needles
        self.read = read


def _num(m: re.Match) -> int:
    return int(m.group("num"))


CONTEXTS: Tuple[Context, ...] = (
    # a process's exit status: "exit code 139", "exited with code 132", "Exit Code: 137",
    # "returned non-zero exit status 134", "exitcode  : -11" (torch elastic), "returncode=-9",
    # "Process finished with exit code -1073741819 (0xC0000005)", Tabby's llama-server supervisor's
    # "exited with status code -1073741515" (harv45c: TabbyML/tabby#4117)
    Context("exit status",
            r"(?i)\b(?:exit(?:ed)?(?:[ _]?code|[ _]status| with(?: exit)? code| with status code)|exitcode|exit value"
            r"|return(?:ed)?[ _]?code|returncode|terminated with(?: exit)? code)\b" + _SEP + _NUM,
            ("exit", "return", "terminated"), lambda m: _exit_status(_num(m))),
    # a bare "returned -1073741819" / "returned 3221225477" (a build tool's or a launcher's report of a
    # child Windows ended): only a number no other status can be (:func:`_returned_status`)
    Context("returned Windows status", r"(?i)\breturned[ \t]{1,4}(?:[:=][ \t]{0,4})?\(?(?P<num>-?\d{9,10})\b",
            ("returned",), lambda m: _returned_status(_num(m))),
    # make's "make: *** [Makefile:5: all] Error 139", docker's "Exited (137)"
    Context("make or docker exit status", r"(?:\] Error |\bExited \()" + _NUM, ("] error", "exited ("),
            lambda m: _exit_status(_num(m))),
    # Slurm's exit code, "status:signal" (scontrol show job's "ExitCode=0:9", sacct's ExitCode column
    # after a job's state: "OUT_OF_ME+    0:125", "FAILED      0:9"): the number after the colon is the
    # signal that ended the job (src/common/slurm_protocol_defs.c; tools40). (Not the status before it:
    # sacct reads it off the batch script, whose shell may have reported any number.)
    Context("Slurm exit code",
            r"\b(?:(?:Derived)?ExitCode=|(?:FAILED|CANCELLED|OUT_OF_ME(?:MORY|\+)|NODE_FAIL|TIMEOUT)\+?[ \t]{1,20})"
            r"\d{1,3}:" + _NUM,
            ("exitcode=", "failed", "cancelled", "out_of_me", "node_fail", "timeout"), lambda m: _signal(_num(m))),
    # "killed by signal 9", "received signal 11", "Signal 7 (SIGBUS) received" (named: left)
    Context("signal", r"(?i)\bsignal[ \t]{0,2}(?:[:=#][ \t]{0,2})?\(?" + _NUM, ("signal",),
            lambda m: _signal(_num(m))),
    # Windows' codes written in hexadecimal anywhere: "(0xC0000005)", "exit status 0xc0000135",
    # "GetDeviceRemovedReason: 0x887A0006", "hr=0x8007000E", MSVC's C++ exception "0xE06D7363"
    Context("Windows status in hexadecimal",
            r"\b0[xX](?P<hex>[cC]0000[0-9A-Fa-f]{3}|887[aA][0-9A-Fa-f]{4}|8007000[eE]|80004005|80070057"
            r"|[eE]06[dD]7363)\b",
            ("0x",), lambda m: _hex(m.group("hex"))),
    # "HRESULT -2005270523", "HRESULT: -2005270523" (a negative decimal HRESULT)
    Context("HRESULT", r"\bHRESULT\b" + _SEP + _NUM, ("hresult",), lambda m: _negative_hresult(_num(m))),
    # the CUDA runtime's: "CUDA error 35", "CUDA error: 35", "cuda error code 700", a check macro's
    # "CUDA error: Error code 35" (fprintf(stderr, "CUDA error: Error code %d\n", err) of a cudaError_t)
    # (not old torch's "cuda runtime error (8) : invalid device function": CUDA 10.0 and older numbered
    # them otherwise, and the text follows anyway)
    Context("CUDA error", r"(?i)\bcuda[ _]error(?:[ _]code)?" + _SEP + _CODE_WORD + _NUM, ("cuda",),
            lambda m: ("cudaError", _num(m))),
    # the CUDA driver's: "CUDA driver error: 999", "CUDA driver error 804"
    Context("CUDA driver error", r"(?i)\bcuda[ _]driver[ _]error(?:[ _]code)?" + _SEP + _NUM, ("cuda",),
            lambda m: ("CUresult", _num(m))),
    # a status type's name: "cudaError 35", "cudaError_t = 2", "CUresult 804", "ncclResult_t 2",
    # "cublasStatus_t 13", "nvmlReturn_t 9", "VkResult -4"
    Context("status type",
            r"\b(?P<lib>cudaError(?:_t)?|CUresult|ncclResult(?:_t)?|cublasStatus(?:_t)?|cudnnStatus(?:_t)?"
            r"|nvmlReturn(?:_t)?|VkResult)\b" + _SEP + _NUM,
            ("cudaerror", "curesult", "ncclresult", "cublasstatus", "cudnnstatus", "nvmlreturn", "vkresult"),
            lambda m: (_LIBRARY[m.group("lib").lower()], _num(m))),
    # a library's words: "NCCL error 2", "nccl error: 3", "cuBLAS error 13", "CUDNN status 3000", "NVML error 9",
    # a check macro's "CUBLAS error: Status code 13"
    Context("library error",
            r"(?i)\b(?P<lib>nccl|cublas|cudnn|nvml)[ _](?:error|status|result|failure)(?:[ _]code)?" + _SEP + _CODE_WORD
            + _NUM,
            ("nccl", "cublas", "cudnn", "nvml"), lambda m: (_LIBRARY[m.group("lib").lower()], _num(m))),
    # numba's "[804] Call to cuInit results in UNKNOWN_CUDA_ERROR"
    Context("numba driver call", r"\[(?P<num>\d{1,4})\] Call to " + _DRIVER_CALL, ("call to cu",),
            lambda m: ("CUresult", _num(m))),
    # a call's result: "cudaGetDeviceCount returned 804", "cuInit(0) failed: 100",
    # "failed call to cuInit: UNKNOWN ERROR (303)", "ncclCommInitRank failed with error 2",
    # "vkCreateDevice returned -4", "nvmlInit_v2 returned 9", "checkCudaErrors: code=35"
    Context("call result",
            r"\b(?P<call>cuda[A-Z]\w{0,60}|" + _DRIVER_CALL + r"\w{0,60}|nccl[A-Z]\w{0,60}|cublas[A-Z]\w{0,60}"
            r"|cudnn[A-Z]\w{0,60}|nvml[A-Z]\w{0,60}|vk[A-Z]\w{0,60})\b(?:\([^()\n]{0,80}\))?[^\n]{0,40}?"
            r"\b(?i:returned|returns|failed with|failed|error|result|status|code)\b"
            r"[ \t]{0,4}(?:(?i:error|code|status|value)[ \t]{0,2}){0,2}(?:[:=#][ \t]{0,4})?\(?" + _NUM + _NOT_A_COUNT,
            ("cu", "nccl", "nvml", "vk"), lambda m: _call_result(m.group("call"), _num(m))),
    # torch's device count (c10/cuda/CUDAFunctions.cpp device_count_impl, the default case:
    # "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling
    # NumCudaDevices() that might have already set an error? Error ", err, ": ", cudaGetErrorString(err)),
    # as torch/cuda/__init__.py's "UserWarning: CUDA initialization: ..." repeats it: the number is a
    # cudaError_t, read when the text after it was cut or wrapped away
    Context("torch device count", TORCH_DEVICE_COUNT + r"[ \t]{0,2}\bError[ \t]{1,2}" + _NUM,
            ("numcudadevices", "set an error"), lambda m: ("cudaError", _num(m)), as_text=True),
    # CUDA's samples' checkCudaErrors: "CUDA error at x.cu:12 code=35 "cudaGetDeviceCount(&n)""
    # (after "CUDA error" only: ninja's "FAILED: [code=1]" on a line of CUDA objects is no CUDA error)
    Context("code= after CUDA error",
            r"(?i)\bcuda[ _]error\b[^\n]{0,200}?\bcode[ \t]{0,2}=[ \t]{0,2}" + _NUM, ("code",),
            lambda m: ("cudaError", _num(m))),
)


def _call_result(call: str, value: int) -> Optional[Reading]:
    ns = _call_namespace(call)
    if ns == "VkResult" and value >= 0:
        return None  # a Vulkan call's non-negative results are not errors
    return (ns, value) if ns else None


#: the cheap gate of all contexts: literals in the forms logs print them, run over a whole chunk
#: as a trie (:func:`.knowledge._literal_alternation`: 4x faster than the alternation of classes
#: it replaced); only the lines it flags are read
GATE_LITERALS: Tuple[str, ...] = (
    "xit", "XIT", "eturned", "eturn code", "eturn_code", "eturncode", "ETURN", "erminated with", "ignal",
    "IGNAL", "] Error", "0xC", "0xc", "0XC", "0x8", "0X8", "HRESULT", "CUDA", "Cuda", "cuda", "CUresult",
    "Nccl", "nccl", "NCCL", "cublas", "CUBLAS", "cudnn", "CUDNN", "nvml", "NVML", "VkResult",
    "code=", "code =", "code  =", "set an error?",
    # sacct's state before its ExitCode column (tools40; "ExitCode=" has "xit")
    "FAILED", "CANCELLED", "OUT_OF_ME", "NODE_FAIL", "TIMEOUT",
    *("cu" + c for c in string.ascii_uppercase), *("vk" + c for c in string.ascii_uppercase),
)
GATE_RE = _literal_alternation(GATE_LITERALS)
_DIGIT_RE = re.compile(r"\d")
#: what follows a number that already carries its name: "35(cudaErrorInsufficientDriver)", "2 [ncclSystemError"
_NAMED_AFTER_RE = re.compile(r"[ \t]{0,2}[(\[][ \t]{0,2}(?:cuda|CUDA_|nccl|CUBLAS_|CUDNN_|NVML_|VK_|SIG[A-Z]|STATUS_|"
                             r"DXGI_|E_[A-Z])")
#: a hexadecimal form right after a decimal one: "-1073741819 (0xC0000005)": the name goes after it
_HEX_AFTER_RE = re.compile(r"[ \t]{0,2}\(0[xX][0-9A-Fa-f]{1,8}\)")
#: a number the program follows with its own text: "NCCL Error 2: unhandled system error",
#: "cuda runtime error (8) : invalid device function"
_TEXT_AFTER_RE = re.compile(r"[)\]]?[ \t]{0,2}:[ \t]{0,2}[A-Za-z]")


#: how much of a long status text a line must hold to hold the text (a wrap or a cut ends the rest)
TEXT_HEAD = 24


def readings(line: str) -> List[Tuple[int, str, Tuple[str, ...], bool]]:
    """(position after the number, namespace, (name, text?), as the program's text?) of every number ``line`` holds in
    a context, left to right, each name once; not those the line already names."""
    if not _DIGIT_RE.search(line):
        return []
    low = line.lower()
    found: Dict[str, Tuple[int, str, Tuple[str, ...], bool]] = {}
    for ctx in CONTEXTS:
        if not any(n in low for n in ctx.needles):
            continue
        for m in ctx.regex.finditer(line):
            reading = ctx.read(m)
            if reading is None:
                continue
            names = lookup(*reading)
            if names is None or names[0] in found:
                continue
            group = "hex" if "hex" in m.re.groupindex and m.group("hex") else "num"
            end = m.end(group)
            if _NAMED_AFTER_RE.match(line, end) or _TEXT_AFTER_RE.match(line, end):
                continue  # "code=35(cudaErrorInsufficientDriver)", "Error 2: unhandled ...": named as written
            if names[0] in line or (len(names) > 1 and names[1] in line):
                continue  # the line holds the name or the text already
            if len(names) > 1 and len(names[1]) > TEXT_HEAD and names[1][:TEXT_HEAD] in line:
                continue  # the text's start: a line cut or wrapped inside it ("... for execution on")
            after = _HEX_AFTER_RE.match(line, end)
            if after is not None:
                end = after.end()
            elif end < len(line) and line[end] in ")]" and m.start(group) > 0 and \
                    line[m.start(group) - 1] == "([" [line[end] == "]"]:
                end += 1  # "(303)", "[804]": the name goes after the number's brackets
            found[names[0]] = (end, reading[0], names, ctx.as_text)
            if len(found) >= MAX_READINGS:
                break
        if len(found) >= MAX_READINGS:
            break
    return sorted(found.values(), key=lambda r: r[0])


#: torch's question at the end of a line, its "Error N" wrapped onto the next (or "Error" here, N there)
_WRAPPED_HEAD_RE = re.compile(TORCH_DEVICE_COUNT + r"(?P<error>[ \t]{0,2}\bError)?[ \t]{0,4}$")
#: the next line's start: a prefix a logger or a quote puts there, then "Error N" (or only N)
_WRAPPED_NEXT_RE = re.compile(r"[ \t>|`'\"]{0,8}(?P<error>Error[ \t]{1,2})?(?P<num>\d{1,4})\b")


def read_wrapped(line: str, next_line: str) -> Optional[str]:
    """``next_line`` with the text and name of the cudaError_t number it starts with appended, when
    ``line`` ends with torch's device-count question (``... that might have already set an
    error?`` and the ``Error 46`` on the next line, or ``... set an error? Error`` and ``46``);
    None when it does not, or when the number is followed by its text (``46: all CUDA-capable ...``)."""
    head = _WRAPPED_HEAD_RE.search(line)
    if head is None:
        return None
    m = _WRAPPED_NEXT_RE.match(next_line)
    if m is None or bool(head.group("error")) == bool(m.group("error")):
        return None
    end = m.end("num")
    if _TEXT_AFTER_RE.match(next_line, end) or _NAMED_AFTER_RE.match(next_line, end):
        return None
    names = lookup("cudaError", int(m.group("num")))
    if names is None or names[0] in next_line or (len(names) > 1 and names[1] in next_line):
        return None
    return next_line[:end] + render_as_text(names) + next_line[end:]


def render(names: Tuple[str, ...]) -> str:
    return f"[{names[0]}: {names[1]}]" if len(names) > 1 else f"[{names[0]}]"


def render_as_text(names: Tuple[str, ...]) -> str:
    """The text after the number as the program prints it (torch's ``Error 2: out of memory``): the line
    then reads as the program's own, and the signatures written for that line decide, as they would have."""
    return f": {names[1]}" if len(names) > 1 else f" [{names[0]}]"


def read_numbers(line: str) -> str:
    """``line`` with the name (and text) of every status number it holds in a context appended
    in brackets after the number (unchanged when none)."""
    found = readings(line)
    if not found:
        return line
    out, pos = [], 0
    for end, _, names, as_text in found:
        out.append(line[pos:end])
        out.append(render_as_text(names) if as_text else " " + render(names))
        pos = end
    out.append(line[pos:])
    return "".join(out)


def read_text(text: str) -> str:
    """Every line of ``text`` read (:func:`read_numbers`); only the lines :data:`GATE_RE` flags are looked at."""
    if not GATE_RE.search(text):
        return text
    return "\n".join(read_numbers(ln) if GATE_RE.search(ln) else ln for ln in text.split("\n"))


# -- an exit status that names no cause --------------------------------------------------------

#: a program's report of a child's (or its own) exit status, in the launchers' words: JetBrains'
#: "Process finished with exit code 1", Compose's "train-1 exited with code 1", Neovim's "[Process
#: exited 1]", systemd's "status=1/FAILURE", GNU time's "Command exited with non-zero status 1",
#: Code::Blocks' "Process returned 1 (0x1)", subprocess' "returned non-zero exit status 1",
#: "returncode=1", srun's "Exited with exit code 1", GitHub Actions' "Process completed with exit code 1"
_STATUS_RE = re.compile(
    r"(?i)(?:\b(?:finished|exited|completed|terminated|failed|returned|stopped)(?P<cut>[ \t]{1,4})with[ \t]{1,4}"
    r"(?:an?[ \t]{1,4})?(?:non-zero[ \t]{1,4})?(?:exit[ \t]{1,4})?(?:code|status)"
    r"|\bProcess[ \t]{1,4}exited|\bProcess[ \t]{1,4}returned|\breturned[ \t]{1,4}(?:a[ \t]{1,4})?non-zero"
    r"(?:[ \t]{1,4}exit)?[ \t]{1,4}(?:code|status)|\bexit(?:[ _]?code|[ _]status)|\breturn[ _]?code"
    r"|\bstatus=(?=\d{1,3}/(?!KILL|SEGV|ABRT|BUS|ILL|FPE|TERM|INT|HUP|QUIT|TRAP|SYS|PIPE|XCPU|XFSZ)[A-Z]))"
    r"[ \t]{0,4}(?:[:=][ \t]{0,4})?(?P<num>-?\d{1,10})\b(?:[ \t]{0,2}\(0x[0-9A-Fa-f]{1,8}\)|/[A-Z]{2,20}\b)?\]?")

#: a level or a state a program tags its status report with ("srun: error: node: task 0: Exited with
#: exit code 1", "Error: setup.py exited with code 1", "##[error]Process completed with exit code 1.",
#: colcon's "Failed   <<< pkg [1.72s, exited with code 1]"): it says no more than the status
_LEVEL_TAG_RE = re.compile(r"(?i)\b(?:error|fatal|failed|failure)\b\]?[ \t]{0,4}(?::|\]|<<<)")
#: what is left of a line once its bare status is taken out, when it still says what failed (an exception's
#: type too: "CalledProcessError: Command '['which', 'c++']'" names the command that failed)
_LEFT_SAYS_RE = re.compile(r"(?i)\w(?:error|exception)\b"
                           r"|\b(?:error|errno|fail|fatal|abort|exception|traceback|crash|killed|denied|"
                           r"not found|no such|cannot|can't|unable|panic|missing|undefined|invalid|segfault)")


def bare_status(line: str) -> Optional[str]:
    """``line`` without the exit statuses it reports that name no cause: a status that is no signal
    (128+N or -N) and no Windows status (:func:`_exit_status`): 1 is a program's own failure, 2 a usage
    error, 255 anything (tools42). None where the line holds nothing else that says what failed
    ("Process finished with exit code 1", "train-1 exited with code 1"); the line as it is where it
    holds no such status. A status that names a signal (137 SIGKILL, 139 SIGSEGV) stays: it says how
    the process ended, which a guess may read."""
    if not _DIGIT_RE.search(line):
        return line
    cut, pos, out = False, 0, []
    for m in _STATUS_RE.finditer(line):
        value = int(m.group("num"))
        if value == 0 or _exit_status(value) is not None or _NAMED_AFTER_RE.match(line, m.end()) \
                or "signal" in line[m.end():m.end() + 40].lower():
            continue
        # (the verb stays: "command 'nvcc' failed" says what failed, "Process finished" nothing)
        out.append(line[pos:m.start("cut") if m.group("cut") is not None else m.start()])
        pos, cut = m.end(), True
    if not cut:
        return line
    left = "".join(out) + line[pos:]
    return left if _LEFT_SAYS_RE.search(_LEVEL_TAG_RE.sub(" ", left)) else None
