"""Read a crash record's stack whose top frames are libc's abort path (tools43).

A process that calls ``abort()`` (a failed ``assert``, ``std::terminate`` after an uncaught C++
exception, glibc's ``malloc(): corrupted ...``, a library's own fatal check) dies of SIGABRT in
libc: the top frames of its stack, in systemd-coredump's record (``#0  0x... __pthread_kill_
implementation (libc.so.6 + 0x...)``) or gdb's backtrace (``#0  __pthread_kill_implementation
(...) at ./nptl/pthread_kill.c:44``, ``#1  0x... in __GI_raise (sig=6) ...``, ``#2  0x... in
__GI_abort () ...``), are libc's (``raise``, ``abort``, ``__pthread_kill_implementation``) and, for
an uncaught exception, libstdc++'s (``__gnu_cxx::__verbose_terminate_handler``, ``std::terminate``,
``__cxa_throw``). None of them says where the failure was: the first frame past them does. Where
that frame is in a GPU library (libcuda, libnvidia-*, cuDNN, cuBLAS, libtorch_cuda, NCCL, the CUDA
runtime, Triton's), its line gets :data:`MARK` appended, which explain's signature
``abort-path-frame-in-gpu-library`` (native-crash-in-gpu-library) reads, so the report names the
library's frame and not libc's. A stack whose first frame past the abort path is any other module
(libpython, the user's own program, an unknown ``??``) is left as it is.
Pure and standard library only; one pass over the frame lines, linear time.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

#: what is appended to the first frame past the abort path when it is a GPU library's
MARK = " [abort called from this frame]"

#: the gate: a line that may be a frame of a native stack
GATE_RE = re.compile(r"#\d{1,3} {1,2}(?:0x[0-9a-f]{4,16} |[A-Za-z_?])")

#: systemd-coredump's frame (src/shared/elf-util.c frame_callback '#%-2u 0x%016x %s (%s + 0x%x)')
_SYSTEMD_FRAME_RE = re.compile(
    r"#(\d{1,3}) {1,2}0x[0-9a-f]{4,16} (\S{1,300}) \(([^\s()]{1,300})(?: \+ 0x[0-9a-f]{1,16})?\)")
#: gdb's frame ('#1  0x00007ffff7c42476 in __GI_raise (sig=6) at ../sysdeps/posix/raise.c:26',
#: '#4  0x00007fffe5a2b1c3 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1', '#0
#: __pthread_kill_implementation (no_tid=0, ...) at ./nptl/pthread_kill.c:44')
_GDB_FRAME_RE = re.compile(
    r"#(\d{1,3}) {1,2}(?:0x[0-9a-f]{4,16} in )?([^\s(]{1,300}) \((?:[^()\n]|\([^()\n]{0,100}\)){0,400}\)"
    r"(?: from (\S{1,300})| at (\S{1,300}))?")

#: the functions of the abort path: libc's raise and abort, glibc's pthread_kill (2.35+), its
#: assert and fatal-message helpers, libstdc++'s terminate handlers and throw
ABORT_FUNCTIONS = frozenset((
    "raise", "abort", "gsignal", "__GI_raise", "__GI_abort", "__pthread_kill_implementation",
    "__pthread_kill_internal", "__pthread_kill", "pthread_kill", "__GI___pthread_kill", "__assert_fail",
    "__assert_fail_base", "__GI___assert_fail", "__libc_message", "__libc_fatal", "__fortify_fail",
    "__stack_chk_fail", "malloc_printerr", "__cxa_throw", "__cxa_rethrow", "std::terminate()",
    "std::terminate", "__cxxabiv1::__terminate", "__cxxabiv1::__terminate(void", "__cxa_call_terminate",
    "__gnu_cxx::__verbose_terminate_handler()", "__gnu_cxx::__verbose_terminate_handler",
))
#: modules whose frames are part of the path (any function): the C and C++ runtimes
_RUNTIME_MODULE_RE = re.compile(r"(?:^|/)(?:libc|libstdc\+\+|libgcc_s|libpthread|ld-linux[\w-]*)[.-][\w.]{0,20}$")
#: gdb's source file of a libc frame (no module printed): ./nptl/pthread_kill.c, ../sysdeps/...
_LIBC_SOURCE_RE = re.compile(r"(?:^|/)(?:nptl|sysdeps|stdlib|assert|signal|malloc|debug)/")
#: the GPU libraries' names after ``lib``: the one list every crash signature of
#: native-crash-in-gpu-library (explain_only.toml) writes as ``lib(?:...)`` and this module reads;
#: tests/test_explain_lead44.py fails when a copy differs
GPU_LIBRARY_NAMES = r"cuda|nvidia-[\w-]+|cudnn\w*|cublas\w*|torch_cuda\w*|nccl|cudart|triton\w*"
#: a GPU library's module
GPU_MODULE_RE = re.compile(r"(?:^|/)lib(?:" + GPU_LIBRARY_NAMES + r")\.so")


def _frame(line: str) -> Optional[Tuple[int, str, str]]:
    """(frame number, function, module or source file) of a native stack's frame line."""
    m = _SYSTEMD_FRAME_RE.search(line)
    if m:
        return int(m.group(1)), m.group(2), m.group(3)
    m = _GDB_FRAME_RE.search(line)
    if m:
        return int(m.group(1)), m.group(2), m.group(3) or m.group(4) or ""
    return None


def _on_path(function: str, module: str) -> bool:
    return (function in ABORT_FUNCTIONS or bool(_RUNTIME_MODULE_RE.search(module))
            or bool(_LIBC_SOURCE_RE.search(module)))


def abort_callers(lines: Sequence[str], indexes: Sequence[int]) -> List[int]:
    """The indexes (among ``indexes``, the frame-gated lines, in order) of each stack's first frame
    past libc's abort path where it is a GPU library's. A stack starts at frame #0 and goes on
    while the numbers follow one another; its #0 must be on the path and an abort function
    (``raise``, ``abort``, ``pthread_kill`` ...) must be among the frames the path holds."""
    out: List[int] = []
    state = None  # (last frame number, saw an abort function, still on the path)
    for i in indexes:
        fr = _frame(lines[i])
        if fr is None:
            continue
        n, function, module = fr
        if n == 0:
            state = None
            if _on_path(function, module):
                state = (0, function in ABORT_FUNCTIONS, True)
            continue
        if state is None or not state[2] or n != state[0] + 1:
            state = None
            continue
        if _on_path(function, module):
            state = (n, state[1] or function in ABORT_FUNCTIONS, True)
            continue
        if state[1] and GPU_MODULE_RE.search(module):
            out.append(i)
        state = None
    return out


def read_abort_stacks(lines: List[str], indexes: Sequence[int]) -> Dict[int, str]:
    """index -> the line with :data:`MARK` appended, for :func:`abort_callers`' frames."""
    return {i: lines[i] + MARK for i in abort_callers(lines, indexes) if MARK not in lines[i]}
