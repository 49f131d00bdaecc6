"""In-process monitor: records the exceptions that code catches and does not re-raise.

This module runs inside the TARGET interpreter. It is standard-library only and runs on
Python 3.8 to 3.13. ``stackpeel run`` copies it next to a bootstrap ``sitecustomize.py``
(as ``_stackpeel_unmask_monitor``); ``stackpeel.unmask.watch()`` imports it in-process.

What it records
---------------
* **handled exceptions**: an exception raised and then caught by an ``except`` (or a
  ``with`` block that suppresses it) without being re-raised. One entry per
  (type, raise site, handler site), with counts, first/last time and sequence numbers,
  the first message (capped), a short stack (handler frame -> raise site) and the
  first frame of the user's own code above the handler ("during").
  Re-raised exceptions (``finally``, non-matching ``except``, bare ``raise``,
  ``raise e``) are subtracted again; exceptions turned into another one
  (``raise X from e`` / raised inside the handler and escaping it) are counted as
  ``converted``.
* **warnings** as shown (wrapping ``warnings._showwarnmsg``, so what the user sees does
  not change), with the issuing stack and the exception being handled at the time.
* **log records** of level WARNING and above (wrapping ``logging.Logger.callHandlers``
  once ``logging`` is imported).
* **process end**: the uncaught exception (``sys.last_value``), a pending ``SystemExit``.

How
---
* Python >= 3.12: ``sys.monitoring`` (PEP 669) events RAISE, RERAISE and
  EXCEPTION_HANDLED. These fire only when exceptions happen, so code that raises
  nothing pays nothing. (They are not per-location events, so ``DISABLE`` cannot
  switch them off per code object; the callbacks return early instead.)
* Python < 3.12: ``sys.settrace`` + ``threading.settrace``. Only frames of code that can
  catch (try/except/finally/with) outside the standard library get a local trace
  function, with line events off (``f_trace_lines = False``); after an ``exception``
  event a frame's line events are switched on until its next event: a ``line`` event
  means a handler in that frame started (the exception was caught there), a ``return``
  means it unwound. An active trace function slows every Python instruction down in
  CPython, so this fallback costs far more (bench/run_overhead.py).

Exceptions raised and handled inside the standard library itself are not recorded
(importing transformers handles ~20 000 of them in importlib and inspect).

No exception, traceback or frame is kept alive: pending "caught, maybe re-raised"
exceptions are remembered by ``id()`` only (a fresh raise of an object clears a stale
id). Memory is bounded: entries are capped per scope, then counted as overflow.

Records go to ``$STACKPEEL_UNMASK_DIR/record-<pid>.json`` at exit; every new entry is
also appended to ``journal-<pid>.jsonl`` at once, so a process that dies by a signal
or ``os._exit`` still leaves its evidence. Fatal signals are dumped by ``faulthandler``
to ``crash-<pid>.txt`` and then re-delivered, so the exit status does not change.
"""

import _thread
import atexit
import itertools
import json
import os
import sys
import time

RECORD_FORMAT = "stackpeel-unmask-record"
RECORD_VERSION = 1

ENV_DIR = "STACKPEEL_UNMASK_DIR"
ENV_OPTIONS = "STACKPEEL_UNMASK_OPTIONS"

#: top-level modules of the GPU ML stack: code under these counts as library code even
#: when it is not installed in site-packages (editable/dev installs)
STACK_LIBS = (
    "torch", "triton", "fla", "causal_conv1d", "transformers", "flash_attn", "bitsandbytes",
    "xformers", "mamba_ssm", "accelerate", "deepspeed", "vllm", "apex", "liger_kernel",
    "tilelang", "kernels", "peft", "torchvision", "torchaudio", "safetensors", "huggingface_hub",
    "tokenizers", "nvidia", "cuda", "pynvml", "jax", "jaxlib", "tensorflow", "onnxruntime",
    "tensorrt", "sglang", "flashinfer", "transformer_engine", "megatron", "nccl", "cupy",
)

SELF, STDLIB, LIBRARY, USER = 0, 1, 2, 3
SCOPE_NAMES = {STDLIB: "stdlib", LIBRARY: "library", USER: "user"}

DEFAULTS = {
    "include": [],          # module prefixes: record only entries touching these (plus stack libs)
    "exclude": [],          # module prefixes: never record entries handled in these
    "max_message": 500,     # characters of a message kept
    "max_stack": 10,        # frames of the handler -> raise-site stack kept
    "cap_library": 1000,    # detailed entries per handler scope; more are counted only
    "cap_user": 300,
    "cap_stdlib": 300,
    "cap_keys": 20000,      # distinct (type, raise site, handler site) keys in all
    "cap_warnings": 500,
    "cap_logs": 500,
    "journal": True,
}

# indexes into an entry list (a list, not an object: the hot path only does += on it)
COUNT, RERAISED, CONVERTED, FIRST_T, LAST_T, FIRST_SEQ, LAST_SEQ, INFO, CODES = range(9)

_PENDING_CAP = 2048


#: the sys / sys.monitoring / threading functions stackpeel wraps to stay out of the program's sight
_ORIGINAL = {}


def _short(text, limit):
    if len(text) > limit:
        return text[:limit] + "... [%d more characters]" % (len(text) - limit)
    return text


def _type_name(cls):
    mod = getattr(cls, "__module__", None) or ""
    name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")
    if mod in ("builtins", "exceptions", "__builtin__"):
        return name
    return "%s.%s" % (mod, name)


def _code_name(code):
    return getattr(code, "co_qualname", None) or code.co_name


def _frame_info(frame, lineno):
    code = frame.f_code
    try:
        module = frame.f_globals.get("__name__")
    except Exception:
        module = None
    return {"file": code.co_filename, "line": lineno, "function": _code_name(code),
            "module": module if isinstance(module, str) else None}


def _line_of_offset(code, offset):
    """The source line of a handler's bytecode offset (sys.monitoring gives offsets).

    A handler starts with an instruction that has no line (PUSH_EXC_INFO): take the
    first line at or after the offset (the ``except`` clause)."""
    try:
        for start, end, line in code.co_lines():
            if end > offset and line is not None:
                return line
    except Exception:
        pass
    return None


def _handler_opcodes():
    """Opcodes that set up an exception handler (Python < 3.11; 3.11 has co_exceptiontable)."""
    try:
        import opcode
    except Exception:
        return frozenset()
    return frozenset(opcode.opmap[n] for n in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH",
                                                "SETUP_EXCEPT", "SETUP_CLEANUP") if n in opcode.opmap)


def _has_handler(code, handler_ops):
    """Can a frame of this code catch an exception (try/except/finally/with)?"""
    table = getattr(code, "co_exceptiontable", None)
    if table is not None:
        return len(table) > 0
    if not handler_ops:
        return True
    raw = code.co_code
    for i in range(0, len(raw), 2):
        if raw[i] in handler_ops:
            return True
    return False


# -- what an exception is made of (entries, log records and the uncaught one) ---------------


def _message(exc, limit):
    try:
        text = str(exc)
    except Exception as e:  # a broken __str__
        text = "<str() failed: %s>" % type(e).__name__
    return _short(text, limit)


def _tb_stack(tb, limit):
    """The frames of a traceback, head first; past ``limit`` the first two and the last ones,
    with a ``skipped`` count between them."""
    frames = []
    t = tb
    while t is not None:
        frames.append((t.tb_frame, t.tb_lineno))
        t = t.tb_next
    if len(frames) > limit:
        head, tail = frames[:2], frames[-(limit - 2):]
        out = [_frame_info(f, n) for f, n in head]
        out.append({"skipped": len(frames) - len(head) - len(tail)})
        out.extend(_frame_info(f, n) for f, n in tail)
        return out
    return [_frame_info(f, n) for f, n in frames]


def _chain(exc, limit):
    """Up to three exceptions behind ``exc`` (its cause, else its context, and theirs)."""
    out = []
    seen = set()
    cur = exc
    while len(out) < 3:
        nxt = cur.__cause__ if cur.__cause__ is not None else cur.__context__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        out.append({"type": _type_name(type(nxt)), "message": _message(nxt, limit),
                    "relation": "cause" if cur.__cause__ is not None else "context"})
        cur = nxt
    return out


def _thread_name():
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            return threading.current_thread().name
        except Exception:
            pass
    return str(_thread.get_ident())


# -- whose code a frame runs ------------------------------------------------------------------


class _Scopes(object):
    """Which part of the program a file belongs to: stackpeel itself (SELF), the standard
    library, a library (site-packages, or a module of the GPU stack run from a checkout) or the
    user's own code, decided once per file name; and which entries the ``include`` /
    ``exclude`` options keep."""

    def __init__(self, include, exclude):
        here = os.path.dirname(os.path.abspath(__file__))
        self.self_dirs = (here + os.sep,)
        self.stdlib_dirs = self._find_stdlib_dirs()
        self.include = tuple(p for p in include or () if p)
        self.exclude = tuple(p for p in exclude or () if p)
        self.file_scope = {}        # co_filename -> scope

    def reset(self):
        """A new table (after a fork: the hot-path callbacks are rebuilt over it)."""
        self.file_scope = {}

    @staticmethod
    def _find_stdlib_dirs():
        dirs = set()
        for mod in ("os", "json"):
            m = sys.modules.get(mod)
            f = getattr(m, "__file__", None)
            if f:
                d = os.path.dirname(os.path.dirname(f)) if mod == "json" else os.path.dirname(f)
                dirs.add(d)
                dirs.add(os.path.realpath(d))
        for p in (sys.base_prefix, sys.base_exec_prefix):
            dirs.add(os.path.join(p, "lib", "python%d.%d" % sys.version_info[:2]))
        return tuple(d.rstrip(os.sep) + os.sep for d in dirs if d)

    def classify(self, filename, frame=None):
        scope = self._classify(filename, frame)
        self.file_scope[filename] = scope
        return scope

    def _classify(self, fn, frame):
        if fn.startswith(self.self_dirs):
            return SELF
        if fn.startswith("<frozen"):
            return STDLIB
        if "site-packages" in fn or "dist-packages" in fn:
            return LIBRARY
        if fn.startswith(self.stdlib_dirs):
            return STDLIB
        module = None
        if frame is not None:
            try:
                module = frame.f_globals.get("__name__")
            except Exception:
                module = None
        if isinstance(module, str) and module.split(".", 1)[0] in STACK_LIBS:
            return LIBRARY
        if module == "_stackpeel_unmask_monitor" or fn.endswith("_stackpeel_unmask_monitor.py"):
            return SELF
        return USER

    def scope_of(self, frame):
        fn = frame.f_code.co_filename
        sc = self.file_scope.get(fn)
        if sc is None:
            sc = self.classify(fn, frame)
        return sc

    def excluded(self, hmod, rmod):
        """Do the options leave out an entry handled in module ``hmod``, raised in ``rmod``?"""
        if self.exclude and hmod and hmod.startswith(self.exclude):
            return True
        if self.include:
            for m in (hmod, rmod):
                if m and (m.startswith(self.include) or m.split(".", 1)[0] in STACK_LIBS):
                    return False
            return True
        return False

    def during(self, frame):
        """The first frame of the user's own code above ``frame``: what the program was doing."""
        f = frame.f_back
        steps = 0
        while f is not None and steps < 200:
            if self.scope_of(f) == USER:
                return _frame_info(f, f.f_lineno)
            f = f.f_back
            steps += 1
        return None

    def issuer_stack(self, skip_modules):
        """The stack of the caller's caller (a warning's issuer), without stackpeel's frames and
        those of ``skip_modules``, at most eight frames."""
        frames = []
        f = sys._getframe(2)
        while f is not None and len(frames) < 8:
            fn = f.f_code.co_filename
            mod = f.f_globals.get("__name__") if isinstance(f.f_globals, dict) else None
            if not (fn.startswith(self.self_dirs) or mod in skip_modules or fn.startswith("<frozen")):
                frames.append(_frame_info(f, f.f_lineno))
            f = f.f_back
        return frames


# -- what a process leaves on disk -------------------------------------------------------------


class _Files(object):
    """The files one process leaves in the record directory: ``journal-<pid>.jsonl`` (each new
    entry at once, so a process killed by a signal or ``os._exit`` still leaves its evidence),
    ``crash-<pid>.txt`` (faulthandler's dump on a fatal signal) and ``record-<pid>.json`` (at
    exit). Without a record directory it writes nothing. Each file is named by the pid of the
    process that opens it, so a forked child's files are its own."""

    def __init__(self, record_dir, journal):
        self.record_dir = record_dir
        self.journal = journal
        self._journal = None
        self._crash = None

    def path(self, stem, ext):
        return os.path.join(self.record_dir, "%s-%d.%s" % (stem, os.getpid(), ext))

    def write(self, kind, data):
        """One journal line; never raises."""
        if not self.record_dir or not self.journal:
            return
        try:
            if self._journal is None:
                self._journal = open(self.path("journal", "jsonl"), "a", buffering=1, encoding="utf-8")
            self._journal.write(json.dumps({"kind": kind, "data": data}, default=str) + "\n")
        except Exception:
            pass

    def arm_crash_dump(self):
        """Dump tracebacks on fatal signals into crash-<pid>.txt (then die as before)."""
        if not self.record_dir:
            return
        try:
            import faulthandler
            import signal
        except Exception:
            return
        try:
            if faulthandler.is_enabled():
                return      # the program (or -X faulthandler) uses it already
            f = open(self.path("crash", "txt"), "w")
            faulthandler.enable(file=f, all_threads=True)
            for name in ("SIGTERM", "SIGHUP", "SIGQUIT"):
                sig = getattr(signal, name, None)
                if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                    faulthandler.register(sig, file=f, all_threads=True, chain=True)
            self._crash = f
        except Exception:
            pass

    def after_fork(self):
        """A forked child writes files of its own: the parent's journal is closed, its crash
        dump re-armed into the child's file."""
        if self._journal is not None:
            try:
                self._journal.close()
            except Exception:
                pass
            self._journal = None
        if self._crash is not None:
            try:
                import faulthandler
                faulthandler.disable()
                self._crash.close()
            except Exception:
                pass
            self._crash = None
            self.arm_crash_dump()

    def write_record(self, rec):
        """record-<pid>.json, replaced atomically; never raises."""
        if not self.record_dir:
            return
        try:
            path = self.path("record", "json")
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(rec, f)
            os.replace(tmp, path)
        except Exception:
            pass


# -- how the events reach the monitor: two backends that stay out of the program's sight -------


def _disguise(fn, orig, name=None):
    """Give a wrapper the name and doc of the function it stands in for."""
    fn.__name__ = fn.__qualname__ = name or orig.__name__
    fn.__doc__ = orig.__doc__


def _unhide():
    """Put back every sys / sys.monitoring / threading function a backend wrapped."""
    M = getattr(sys, "monitoring", None)
    for name in ("get_tool", "use_tool_id"):
        if name in _ORIGINAL and M is not None:
            setattr(M, name, _ORIGINAL[name])
    if "gettrace" in _ORIGINAL:
        sys.gettrace, sys.settrace = _ORIGINAL["gettrace"], _ORIGINAL["settrace"]
    threading = sys.modules.get("threading")
    if "threading.gettrace" in _ORIGINAL and threading is not None:
        threading.gettrace = _ORIGINAL["threading.gettrace"]


class _MonitoringBackend(object):
    """Python >= 3.12: ``sys.monitoring`` (PEP 669) events RAISE, RERAISE and EXCEPTION_HANDLED
    delivered to the monitor's callbacks, under a tool id the program sees as free."""

    name = "monitoring"
    _TOOL_PREFERENCE = (4, 3, 5, 2, 1, 0)   # 0-2 are named for debuggers, coverage, profilers: last

    def __init__(self, mon):
        self.mon = mon
        self.tool_id = None
        self.callbacks = None

    def start(self):
        """True when monitoring; else the monitor's ``mode_note`` says why not."""
        tool = self._free_tool_id()
        if tool is None:
            self.mon.mode_note = "no free sys.monitoring tool id"
            return False
        self._take_tool_id(tool)
        self.callbacks = self.mon._make_callbacks()
        self._register(tool)
        self._hide_tool_id()
        return True

    def stop(self):
        self._release_tool_id(self.tool_id)

    def _free_tool_id(self, avoid=()):
        get_tool = _ORIGINAL.get("get_tool") or sys.monitoring.get_tool
        for cand in self._TOOL_PREFERENCE:
            if cand not in avoid and get_tool(cand) is None:
                return cand
        return None

    def _take_tool_id(self, tool):
        use = _ORIGINAL.get("use_tool_id") or sys.monitoring.use_tool_id
        use(tool, "stackpeel-unmask")
        self.tool_id = tool

    def _register(self, tool):
        M = sys.monitoring
        ev = M.events
        on_handled, on_raise, on_reraise = self.callbacks
        M.register_callback(tool, ev.EXCEPTION_HANDLED, on_handled)
        M.register_callback(tool, ev.RAISE, on_raise)
        M.register_callback(tool, ev.RERAISE, on_reraise)
        M.set_events(tool, ev.EXCEPTION_HANDLED | ev.RAISE | ev.RERAISE)

    def _release_tool_id(self, tool):
        M = sys.monitoring
        M.set_events(tool, 0)
        for e in (M.events.EXCEPTION_HANDLED, M.events.RAISE, M.events.RERAISE):
            M.register_callback(tool, e, None)
        (_ORIGINAL.get("free_tool_id") or M.free_tool_id)(tool)

    def _hide_tool_id(self):
        """The program sees every tool id as free that stackpeel holds: get_tool() answers None
        for it, and use_tool_id() on it moves stackpeel to another free id first (or stops
        monitoring when none is left), so the program's own call succeeds."""
        M, mon, backend = sys.monitoring, self.mon, self
        for name in ("get_tool", "use_tool_id", "free_tool_id"):
            _ORIGINAL.setdefault(name, getattr(M, name))
        get_tool, use_tool_id = _ORIGINAL["get_tool"], _ORIGINAL["use_tool_id"]

        def hidden_get_tool(tool_id):
            if mon.mode == "monitoring" and tool_id == backend.tool_id:
                return None
            return get_tool(tool_id)

        def hidden_use_tool_id(tool_id, name):
            if mon.mode == "monitoring" and tool_id == backend.tool_id:
                old = backend.tool_id
                new = backend._free_tool_id(avoid=(old,))
                backend._release_tool_id(old)
                if new is None:
                    mon.mode, backend.tool_id = None, None
                    mon.mode_note = ("the program took sys.monitoring tool id %d and no other was free: "
                                     "monitoring stopped there" % old)
                else:
                    backend._take_tool_id(new)
                    backend._register(new)
            return use_tool_id(tool_id, name)

        _disguise(hidden_get_tool, get_tool)
        _disguise(hidden_use_tool_id, use_tool_id)
        M.get_tool, M.use_tool_id = hidden_get_tool, hidden_use_tool_id


class _SettraceBackend(object):
    """The fallback before 3.12: a trace function, local tracing only in frames that can catch
    anything (code with try/except/finally/with), outside the stdlib.

    An ``exception`` event in a frame switches its line events on until its next event:
    ``line`` means a handler in it started, ``return`` that it unwound. A caught exception that
    shows up again in a traced frame above its handler's frame was passed on (re-raised), and
    one raised while it was handled that shows up above the handler's frame means it was
    converted."""

    name = "settrace"

    def __init__(self, mon):
        self.mon = mon
        self.trace_fns = None

    def start(self):
        """True when tracing; else the monitor's ``mode_note`` says why not."""
        mon = self.mon
        if sys.gettrace() is not None:
            mon.mode_note = "another trace function (debugger, coverage) is active; not monitoring"
            return False
        threading = sys.modules.get("threading")
        if threading is None:
            import threading  # noqa: F811 - new threads must be traced too (imported before tracing starts)
        on_handled, _, _ = mon._make_callbacks()
        pending = mon.pending
        pending_pop, pending_get = pending.pop, pending.get
        armed = {}      # id(frame) -> (exc, tb): from an 'exception' event to the frame's next event

        def above(tb, frame_id):
            """Is the frame with that id in the traceback, below its head?"""
            t = tb.tb_next
            while t is not None:
                if id(t.tb_frame) == frame_id:
                    return True
                t = t.tb_next
            return False

        def on_exception(exc, tb):
            if pending:
                p = pending_pop(id(exc), None)
                if p is not None and above(tb, p[1]):
                    mon._mark_reraised(p[0])
                ctx = exc.__context__
                if ctx is not None:
                    p = pending_get(id(ctx))
                    if p is not None and above(tb, p[1]):
                        del pending[id(ctx)]
                        mon._mark_converted(p[0], exc)
            if exc.__class__ is SystemExit:
                mon.system_exit = [exc.code]

        def local(frame, event, arg):
            if event == "return":
                if armed:
                    armed.pop(id(frame), None)
            elif event == "exception":
                exc, tb = arg[1], arg[2]
                if exc is None or tb is None:
                    return local
                on_exception(exc, tb)
                armed[id(frame)] = (exc, tb)
                frame.f_trace_lines = True
            elif event == "line":
                frame.f_trace_lines = False
                a = armed.pop(id(frame), None)
                if a is not None:
                    on_handled(frame.f_code, -frame.f_lineno, a[0], a[1])
            return local

        scope_get, classify = mon.scopes.file_scope.get, mon.scopes.classify
        can_catch = {}          # id(code) -> bool
        keep = []               # the code objects of can_catch, so that their ids stay unique
        handler_ops = _handler_opcodes()

        def decide(code, frame):
            if len(keep) > 200000:
                can_catch.clear()
                del keep[:]
            fn = code.co_filename
            sc = scope_get(fn)
            if sc is None:
                sc = classify(fn, frame)
            ok = sc > STDLIB and _has_handler(code, handler_ops)
            can_catch[id(code)] = ok
            keep.append(code)
            return ok

        cc_get = can_catch.get

        def call(frame, event, arg):
            code = frame.f_code
            ok = cc_get(id(code))
            if ok is None:
                ok = decide(code, frame)
            if ok:
                frame.f_trace_lines = False
                return local
            return None     # cannot catch anything, or the stdlib's/our own code: no local tracing

        self.trace_fns = (call, local)
        # frames already running (in-process install): trace them too
        f = sys._getframe(1)
        while f is not None:
            f.f_trace_lines = False
            f.f_trace = local
            f = f.f_back
        sys.settrace(call)
        threading.settrace(call)
        self._hide_settrace(call)
        return True

    def stop(self):
        call, local = self.trace_fns
        if sys.gettrace() is call:
            sys.settrace(None)
        threading = sys.modules.get("threading")
        if threading is not None:
            threading.settrace(None)
        f = sys._getframe(1)
        while f is not None:
            if f.f_trace is local:
                f.f_trace = None
            f = f.f_back

    def _hide_settrace(self, call):
        """sys.gettrace() / threading.gettrace() answer None while stackpeel's hook is the
        one installed; sys.settrace(None) by the program puts stackpeel's hook back, and
        sys.settrace(f) hands tracing to f (stackpeel records nothing while f is set)."""
        _ORIGINAL.setdefault("gettrace", sys.gettrace)
        _ORIGINAL.setdefault("settrace", sys.settrace)
        gettrace, settrace, mon = _ORIGINAL["gettrace"], _ORIGINAL["settrace"], self.mon

        def hidden_gettrace():
            t = gettrace()
            return None if t is call else t

        def hidden_settrace(fn):
            if fn is None and mon.mode == "settrace":
                fn = call
            return settrace(fn)

        _disguise(hidden_gettrace, gettrace)
        _disguise(hidden_settrace, settrace)
        sys.gettrace, sys.settrace = hidden_gettrace, hidden_settrace
        threading = sys.modules.get("threading")
        if threading is not None and hasattr(threading, "gettrace"):
            tget = threading.gettrace
            _ORIGINAL.setdefault("threading.gettrace", tget)

            def hidden_thread_gettrace():
                t = tget()
                return None if t is call else t

            _disguise(hidden_thread_gettrace, tget, "gettrace")
            threading.gettrace = hidden_thread_gettrace


# -- warnings and log records ------------------------------------------------------------------


class _WarningsHook(object):
    """Every warning as shown, to ``mon.record_warning``: wraps ``warnings._showwarnmsg``, so
    what the user sees does not change."""

    def __init__(self, mon):
        self.mon = mon
        self.orig = None

    def install(self):
        import warnings
        orig = warnings._showwarnmsg
        mon = self.mon

        def _showwarnmsg(msg):
            try:
                mon.record_warning(msg)
            except Exception:
                pass
            return orig(msg)

        _showwarnmsg._stackpeel_orig = orig
        warnings._showwarnmsg = _showwarnmsg
        self.orig = orig

    def uninstall(self):
        warnings = sys.modules.get("warnings")
        if warnings is not None and self.orig is not None:
            if getattr(warnings._showwarnmsg, "_stackpeel_orig", None) is self.orig:
                warnings._showwarnmsg = self.orig
        self.orig = None


class _LoggingHook(object):
    """Every log record of level WARNING and above, to ``mon.record_log``: wraps
    ``logging.Logger.callHandlers``, at once when logging is imported, else right after its
    import (a one-shot meta path finder), so a program that never logs never imports it."""

    def __init__(self, mon):
        self.mon = mon
        self.orig = None
        self.import_hook = None

    def install(self):
        logging = sys.modules.get("logging")
        if logging is not None:
            self.patch(logging)
            return
        mon, hook = self.mon, self

        class _LoggingImportHook(object):
            """One-shot meta path finder: patches logging right after it is imported."""

            def find_spec(self, name, path=None, target=None):
                if name != "logging":
                    return None
                try:
                    sys.meta_path.remove(self)
                except ValueError:
                    pass
                hook.import_hook = None
                for finder in list(sys.meta_path):
                    find = getattr(finder, "find_spec", None)
                    if find is None:
                        continue
                    spec = find(name, path, target)
                    if spec is not None:
                        break
                else:
                    return None
                loader = spec.loader
                orig_exec = getattr(loader, "exec_module", None)
                if orig_exec is None:
                    return spec

                def exec_module(module):
                    try:
                        orig_exec(module)
                    finally:
                        try:
                            del loader.exec_module
                        except AttributeError:
                            pass
                    if mon.started:
                        hook.patch(module)

                try:
                    loader.exec_module = exec_module
                except Exception:
                    pass
                return spec

            def invalidate_caches(self):
                pass

        self.import_hook = _LoggingImportHook()
        sys.meta_path.insert(0, self.import_hook)

    def patch(self, logging):
        Logger = logging.Logger
        orig = Logger.callHandlers
        if getattr(orig, "_stackpeel_orig", None) is not None:
            return
        mon = self.mon

        def callHandlers(self, record):
            if record.levelno >= 30 and mon.started:
                try:
                    mon.record_log(record)
                except Exception:
                    pass
            return orig(self, record)

        callHandlers._stackpeel_orig = orig
        Logger.callHandlers = callHandlers
        self.orig = orig

    def uninstall(self):
        if self.import_hook is not None:
            try:
                sys.meta_path.remove(self.import_hook)
            except ValueError:
                pass
            self.import_hook = None
        logging = sys.modules.get("logging")
        if logging is not None and self.orig is not None:
            if getattr(logging.Logger.callHandlers, "_stackpeel_orig", None) is self.orig:
                logging.Logger.callHandlers = self.orig
        self.orig = None


# -- the monitor -------------------------------------------------------------------------------


class Monitor(object):
    """One monitor per process: the state of what it saw, the hot-path callbacks that update
    it, and the record made of it. The parts it is made of do the rest: :class:`_Scopes` says
    whose code a frame runs, a backend (:class:`_MonitoringBackend` from Python 3.12,
    :class:`_SettraceBackend` before) delivers the exception events, :class:`_WarningsHook` and
    :class:`_LoggingHook` the warnings and log records, :class:`_Files` writes the journal,
    crash dump and record. ``start()`` installs it, ``stop()`` removes it, ``record()`` returns
    what it saw as a JSON-ready dict."""

    def __init__(self, options=None, record_dir=None):
        opts = dict(DEFAULTS)
        opts.update(options or {})
        self.options = opts
        self.record_dir = record_dir
        self.mode = None            # "monitoring" | "settrace" | None
        self.mode_note = None
        self.started = False
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self.scopes = _Scopes(opts.get("include"), opts.get("exclude"))
        self.files = _Files(record_dir, opts.get("journal"))
        self._backend = None
        self._warnings = _WarningsHook(self)
        self._logging = _LoggingHook(self)
        self._finished = False
        self._reset_state()

    # -- state -----------------------------------------------------------------------

    def _reset_state(self):
        self.pid = os.getpid()
        self.entries = {}           # key -> entry list
        self.pending = {}           # id(exc) -> (entry, id(handler frame))
        self.scopes.reset()
        self.detailed = {STDLIB: 0, LIBRARY: 0, USER: 0}
        self.overflow_keys = 0      # keys not stored at all (cap_keys reached)
        self.overflow_events = 0
        self.warnings = {}          # key -> warning dict
        self.logs = {}
        self.dropped_warnings = 0
        self.dropped_logs = 0
        self.system_exit = None     # ["code"] while a SystemExit propagates
        self.busy = set()           # thread ids inside our slow path
        self.next_id = itertools.count(1).__next__
        self.next_seq = itertools.count(1).__next__

    def _message(self, exc):
        return _message(exc, self.options["max_message"])

    # -- the slow path: a key seen for the first time ----------------------------------

    def new_entry(self, key, exc, tb, last, hscope, except_line):
        """Create (and journal) the entry for a new key; None when it must not be stored."""
        tid = _thread.get_ident()
        if tid in self.busy:
            return None
        self.busy.add(tid)
        try:
            return self._new_entry(key, exc, tb, last, hscope, except_line)
        except Exception:
            return None
        finally:
            self.busy.discard(tid)

    def _new_entry(self, key, exc, tb, last, hscope, except_line):
        opts = self.options
        if len(self.entries) >= opts["cap_keys"]:
            self.overflow_keys += 1
            self.overflow_events += 1
            return None
        # the entry keeps its two code objects alive: the key holds their id()s, which must
        # not be reused by other code (exec'd code comes and goes); code holds no frames
        entry = [0, 0, 0, 0.0, 0.0, 0, 0, None, (tb.tb_frame.f_code, last.tb_frame.f_code)]
        self.entries[key] = entry
        cap = opts.get("cap_" + SCOPE_NAMES[hscope], 300)
        if self.detailed[hscope] >= cap:
            return entry        # counted, not described
        hframe, rframe = tb.tb_frame, last.tb_frame
        handled = _frame_info(hframe, tb.tb_lineno)
        handled["except_line"] = except_line
        raised = _frame_info(rframe, last.tb_lineno)
        if self.scopes.excluded(handled["module"], raised["module"]):
            entry[INFO] = {"excluded": True}
            return entry
        self.detailed[hscope] += 1
        now = time.monotonic() - self.t0
        info = {
            "id": self.next_id(),
            "type": _type_name(type(exc)),
            "message": self._message(exc),
            "raised": raised,
            "handled": handled,
            "scope": SCOPE_NAMES[hscope],
            "raise_scope": SCOPE_NAMES.get(self.scopes.scope_of(rframe), "self"),
            "stack": _tb_stack(tb, opts["max_stack"]),
            "during": self.scopes.during(hframe),
            "chain": _chain(exc, opts["max_message"]),
            "thread": _thread_name(),
            "pid": self.pid,
        }
        entry[INFO] = info
        self.files.write("handled", dict(info, first_time=now))
        return entry

    def _mark_reraised(self, entry):
        """A caught exception escaped again (raise e, re-raised into the caller): not swallowed."""
        entry[COUNT] -= 1
        entry[RERAISED] += 1
        if entry[RERAISED] == 1:
            self._journal_update(entry, "reraised")

    def _mark_converted(self, entry, new_exc):
        """A caught exception became the context of a new one leaving its handler: converted."""
        entry[COUNT] -= 1
        entry[CONVERTED] += 1
        self._converted(entry, new_exc)
        if entry[CONVERTED] == 1:
            self._journal_update(entry, "converted")

    def _converted(self, entry, new_exc):
        info = entry[INFO]
        if info and "converted_to" not in info and not info.get("excluded"):
            info["converted_to"] = {"type": _type_name(type(new_exc)),
                                    "message": self._message(new_exc)}

    # -- the hot path (shared by both backends) ----------------------------------------

    def _make_callbacks(self):
        """The hot-path callbacks, as closures over the state dicts (attribute lookups
        on self cost more). Returns (on_handled, on_raise, on_reraise), the sys.monitoring
        callbacks (the settrace backend adapts its events to them):

        * ``on_handled(code, where, exc, tb=None)``: exc was caught by a handler in the
          frame at the head of its traceback (whose code is ``code``); ``where`` is the
          handler's bytecode offset (sys.monitoring) or, when negative, minus its line;
        * ``on_raise(code, offset, exc, tb=None)``: exc is raised in, or propagates into,
          the frame at the head of tb (``exc.__traceback__`` when not given);
        * ``on_reraise(code, offset, exc)``: a handler re-raised exc.

        The key of an entry is (type, id(handler code), handler tb_lasti, id(raise code),
        raise tb_lasti): cheap to compute (no line-table lookups, no string hashing).
        """
        entries, pending, file_scope = self.entries, self.pending, self.scopes.file_scope
        classify, new_entry = self.scopes.classify, self.new_entry
        clock, nseq = time.monotonic, self.next_seq
        pending_pop, pending_get, entries_get, scope_get = pending.pop, pending.get, entries.get, file_scope.get
        mon = self

        def on_handled(code, where, exc, tb=None):
            if tb is None:
                tb = exc.__traceback__
                if tb is None:
                    return
            sc = scope_get(code.co_filename)
            if sc is None:
                sc = classify(code.co_filename, tb.tb_frame)
            if sc == SELF:
                return
            nxt = tb.tb_next
            if nxt is None and sc == STDLIB:
                return          # raised and caught in the same stdlib frame
            last = tb
            while nxt is not None:
                last = nxt
                nxt = nxt.tb_next
            rcode = last.tb_frame.f_code
            if sc == STDLIB:
                rsc = scope_get(rcode.co_filename)
                if rsc is None:
                    rsc = classify(rcode.co_filename, last.tb_frame)
                if rsc <= STDLIB:
                    return      # the standard library's own business (import system, inspect...)
            key = (exc.__class__, id(code), tb.tb_lasti, id(rcode), last.tb_lasti)
            e = entries_get(key)
            if e is None:
                e = new_entry(key, exc, tb, last, sc, -where if where < 0 else _line_of_offset(code, where))
                if e is None:
                    return
            e[COUNT] += 1
            e[LAST_T] = clock()
            e[LAST_SEQ] = nseq()
            if not e[FIRST_SEQ]:
                e[FIRST_T] = e[LAST_T]
                e[FIRST_SEQ] = e[LAST_SEQ]
            pending[id(exc)] = (e, id(tb.tb_frame))
            if len(pending) > _PENDING_CAP:
                for k in list(pending)[:_PENDING_CAP // 2]:
                    pending_pop(k, None)
            if exc.__class__ is SystemExit:
                mon.system_exit = None

        def on_raise(code, offset, exc, tb=None):
            if pending:
                p = pending_pop(id(exc), None)
                ctx = exc.__context__
                if p is None and ctx is None:
                    pass
                else:
                    if tb is None:
                        tb = exc.__traceback__
                    if p is not None and tb is not None and tb.tb_next is not None:
                        # a caught exception escaped again (raise e / re-raised into the caller)
                        mon._mark_reraised(p[0])
                    # (p with a fresh traceback: the id belonged to a dead exception; dropped)
                    if ctx is not None and tb is not None and tb.tb_next is not None:
                        p = pending_get(id(ctx))
                        if p is not None and p[1] == id(tb.tb_next.tb_frame):
                            # raised while ctx was being handled, and now escaping the
                            # handler's frame into its caller: ctx was converted, not swallowed
                            del pending[id(ctx)]
                            mon._mark_converted(p[0], exc)
            if exc.__class__ is SystemExit:
                mon.system_exit = [exc.code]

        def on_reraise(code, offset, exc):
            p = pending_pop(id(exc), None)
            if p is not None:
                mon._mark_reraised(p[0])

        return on_handled, on_raise, on_reraise

    # -- installing and removing -------------------------------------------------------

    def start(self):
        if self.started:
            return self
        if sys.version_info >= (3, 12) and hasattr(sys, "monitoring"):
            backend = _MonitoringBackend(self)
        else:
            backend = _SettraceBackend(self)
        if backend.start():
            self.mode, self._backend = backend.name, backend
        self._warnings.install()
        self._logging.install()
        self.started = True
        return self

    def stop(self):
        if not self.started:
            return
        self.started = False
        _unhide()
        if self.mode is not None and self._backend is not None:
            self._backend.stop()
        self._warnings.uninstall()
        self._logging.uninstall()

    # -- warnings and logging --------------------------------------------------------

    def _handling_entry(self):
        """The id of the entry of the exception being handled right now, if recorded."""
        exc = sys.exc_info()[1]
        if exc is None:
            return None
        p = self.pending.get(id(exc))
        if p is not None and p[0][INFO] and "id" in p[0][INFO]:
            return p[0][INFO]["id"]
        return None

    def record_warning(self, msg):
        tid = _thread.get_ident()
        if tid in self.busy:
            return
        self.busy.add(tid)
        try:
            text = str(msg.message)
            key = (msg.category, msg.filename, msg.lineno, text[:200])
            w = self.warnings.get(key)
            now = time.monotonic() - self.t0
            seq = self.next_seq()
            if w is None:
                if len(self.warnings) >= self.options["cap_warnings"]:
                    self.dropped_warnings += 1
                    return
                w = {"id": self.next_id(), "category": _type_name(msg.category),
                     "message": _short(text, self.options["max_message"]),
                     "file": msg.filename, "line": msg.lineno,
                     "stack": self.scopes.issuer_stack(("warnings",)),
                     "handling": self._handling_entry(), "thread": _thread_name(),
                     "pid": self.pid, "count": 0, "first_time": now, "first_seq": seq}
                self.warnings[key] = w
                self.files.write("warning", w)
            w["count"] += 1
            w["last_time"] = now
            w["last_seq"] = seq
        finally:
            self.busy.discard(tid)

    def record_log(self, record):
        tid = _thread.get_ident()
        if tid in self.busy:
            return
        self.busy.add(tid)
        try:
            key = (record.name, record.pathname, record.lineno)
            r = self.logs.get(key)
            now = time.monotonic() - self.t0
            seq = self.next_seq()
            if r is None:
                if len(self.logs) >= self.options["cap_logs"]:
                    self.dropped_logs += 1
                    return
                try:
                    text = record.getMessage()
                except Exception:
                    text = str(record.msg)
                r = {"id": self.next_id(), "level": record.levelname, "logger": record.name,
                     "message": _short(text, self.options["max_message"]),
                     "file": record.pathname, "line": record.lineno, "function": record.funcName,
                     "handling": self._handling_entry(), "thread": _thread_name(),
                     "pid": self.pid, "count": 0, "first_time": now, "first_seq": seq}
                ei = record.exc_info
                if ei and ei[1] is not None:
                    r["exception"] = {"type": _type_name(type(ei[1])), "message": self._message(ei[1])}
                self.logs[key] = r
                self.files.write("log", r)
            r["count"] += 1
            r["last_time"] = now
            r["last_seq"] = seq
        finally:
            self.busy.discard(tid)

    # -- files ---------------------------------------------------------------------------

    def _process_info(self):
        return {"pid": self.pid, "ppid": os.getppid(), "python": "%d.%d.%d" % sys.version_info[:3],
                "implementation": sys.implementation.name, "executable": sys.executable,
                "argv": [_short(a, 300) for a in sys.argv[:50]], "mode": self.mode,
                "mode_note": self.mode_note, "started": self.wall0}

    def journal_header(self):
        """First journal line: who this process is (a record rebuilt from the journal needs it).
        sys.argv is not set yet when sitecustomize runs: it is filled in at exit."""
        self.files.write("process", self._process_info())

    def _journal_update(self, entry, what):
        """Once per entry: it was re-raised or converted (a journal-only record needs that)."""
        info = entry[INFO]
        if info and "id" in info:
            self.files.write(what, {"id": info["id"]})

    def arm_crash_dump(self):
        """Dump tracebacks on fatal signals into crash-<pid>.txt (then die as before)."""
        self.files.arm_crash_dump()

    def after_fork_in_child(self):
        """A forked child starts a record of its own."""
        self._reset_state()
        self.files.after_fork()
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        if self.mode is not None:
            # the callbacks close over the old dicts: rebuild them
            started = self.started
            self.stop()
            if started:
                self.start()
        self.journal_header()

    # -- the record --------------------------------------------------------------------

    def _entry_dict(self, e):
        info = e[INFO]
        d = dict(info)
        d["count"] = e[COUNT]
        d["reraised"] = e[RERAISED]
        d["converted"] = e[CONVERTED]
        d["first_time"] = round(e[FIRST_T] - self.t0, 6) if e[FIRST_SEQ] else None
        d["last_time"] = round(e[LAST_T] - self.t0, 6) if e[FIRST_SEQ] else None
        d["first_seq"] = e[FIRST_SEQ]
        d["last_seq"] = e[LAST_SEQ]
        return d

    def _uncaught(self):
        exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
        if exc is None or not isinstance(exc, BaseException):
            return None
        # it escaped: if it had been caught before, it was not swallowed after all
        p = self.pending.pop(id(exc), None)
        if p is not None:
            p[0][COUNT] -= 1
            p[0][RERAISED] += 1
        cur, seen = exc, set()
        while True:
            nxt = cur.__cause__ if cur.__cause__ is not None else cur.__context__
            if nxt is None or id(nxt) in seen:
                break
            seen.add(id(nxt))
            p = self.pending.pop(id(nxt), None)
            if p is not None:
                p[0][COUNT] -= 1
                p[0][CONVERTED] += 1
                self._converted(p[0], cur)
            cur = nxt
        tb = exc.__traceback__
        last = tb
        while last is not None and last.tb_next is not None:
            last = last.tb_next
        return {"type": _type_name(type(exc)), "message": self._message(exc),
                "raised": _frame_info(last.tb_frame, last.tb_lineno) if last is not None else None,
                "stack": _tb_stack(tb, self.options["max_stack"]) if tb is not None else [],
                "chain": _chain(exc, self.options["max_message"])}

    def record(self, final=False):
        """Everything seen so far, as a JSON-ready dict."""
        tid = _thread.get_ident()
        self.busy.add(tid)
        try:
            uncaught = self._uncaught() if final else None
            handled, counted_only, excluded = [], {}, 0
            file_scope = self.scopes.file_scope
            for e in list(self.entries.values()):
                info = e[INFO]
                if info is None:
                    scope = SCOPE_NAMES.get(file_scope.get(e[CODES][0].co_filename), "user")
                    c = counted_only.setdefault(scope, [0, 0])
                    c[0] += 1
                    c[1] += max(e[COUNT], 0)
                elif info.get("excluded"):
                    excluded += max(e[COUNT], 0)
                elif e[COUNT] > 0 or e[CONVERTED] > 0:
                    handled.append(self._entry_dict(e))
            handled.sort(key=lambda d: d["first_seq"] or 0)
            rec = {"format": RECORD_FORMAT, "version": RECORD_VERSION, "complete": bool(final)}
            rec.update(self._process_info())
            rec.update({
                "duration": round(time.monotonic() - self.t0, 6),
                "handled": handled,
                "warnings": sorted(self.warnings.values(), key=lambda w: w["first_seq"]),
                "logs": sorted(self.logs.values(), key=lambda w: w["first_seq"]),
                "overflow": {
                    "counted_only": {k: {"sites": v[0], "events": v[1]} for k, v in counted_only.items()},
                    "keys_not_stored": self.overflow_keys, "events_not_stored": self.overflow_events,
                    "excluded_events": excluded,
                    "warnings": self.dropped_warnings, "logs": self.dropped_logs,
                },
                "uncaught": uncaught,
                "system_exit": {"code": self.system_exit[0]} if (final and self.system_exit) else None,
                "options": {k: self.options[k] for k in ("include", "exclude")},
            })
            return json.loads(json.dumps(rec, default=str))
        finally:
            self.busy.discard(tid)

    def finish(self):
        """atexit: write record-<pid>.json."""
        if self._finished or os.getpid() != self.pid:
            return
        self._finished = True
        try:
            rec = self.record(final=True)
        except Exception as exc:  # never disturb the exit
            rec = {"format": RECORD_FORMAT, "version": RECORD_VERSION, "complete": False, "pid": self.pid,
                   "error": "%s: %s" % (type(exc).__name__, exc)}
        self.stop()
        self.files.write_record(rec)
        return rec


_active = None


def active():
    """The monitor installed in this process by :func:`install_from_env`, if any."""
    return _active


def install_from_env():
    """Called by the bootstrap sitecustomize: start recording when $STACKPEEL_UNMASK_DIR is set."""
    global _active
    record_dir = os.environ.get(ENV_DIR)
    if not record_dir or _active is not None:
        return _active
    try:
        options = json.loads(os.environ.get(ENV_OPTIONS) or "{}")
    except ValueError:
        options = {}
    mon = Monitor(options, record_dir=record_dir)
    mon.arm_crash_dump()
    mon.start()
    mon.journal_header()
    atexit.register(mon.finish)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=mon.after_fork_in_child)
    _active = mon
    return mon
