"""Helpers shared by probes. Standard library only; Python 3.8+."""

import contextlib
import ctypes
import io
import os
import shutil
import subprocess
import sys
import traceback
import warnings

#: most characters of any one captured text kept in facts
MAX_TEXT = 8000


def clip(text, limit=MAX_TEXT):
    """Keep the head and the tail of a long text, marking the cut."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace")
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n[... %d characters cut ...]\n" % (len(text) - limit) + text[-half:]


#: the file in each of stackpeel's temporary folders that names the process that made it: the same
#: line as runner/hygiene.py ``_stamp`` writes, so its ``sweep_orphans`` removes a folder whose maker
#: was killed outright (tmp25)
OWNER = ".owner"


def owner_line():
    """"pid start-time pid-namespace boot-id" of this process, or None where /proc does not tell
    them all: the stamp runner/hygiene.py writes (with this function) and reads."""
    pid = os.getpid()
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read().decode("ascii", "replace")
        start = stat[stat.rindex(")") + 2:].split()[19]
        ns = os.readlink("/proc/self/ns/pid").replace(" ", "")
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except (OSError, ValueError, IndexError):
        return None
    if not ns or not boot:
        return None
    return "%d %s %s %s\n" % (pid, start, ns, boot)


def stamped_mkdtemp(prefix, dir=None, stamp_required=False):
    """tempfile.mkdtemp for a folder a probe makes outside stackpeel's own scratch (the target's
    temporary directory: the extension build): its name starts with ``stackpeel-`` and it holds
    the owner stamp, so a probe killed outright (SIGKILL, timeout, the OOM killer) leaves nothing
    the next stackpeel does not sweep (runner/hygiene.py sweep_orphans). Raises as mkdtemp does.
    A full file system may take the folder (an inode) but not the stamp's bytes (ENOSPC): with
    ``stamp_required`` the folder is then removed again and that OSError raised (chk27), where a
    folder the sweep could never remove is worse than none."""
    import tempfile
    if not prefix.startswith("stackpeel-"):
        raise ValueError("a swept folder's name starts with stackpeel-: %r" % prefix)
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    line = owner_line()
    if line is not None:
        try:
            with open(os.path.join(path, OWNER), "w") as f:
                f.write(line)
        except (OSError, IOError):  # a full disk: the build that follows fails and says why
            if stamp_required:
                shutil.rmtree(path, ignore_errors=True)
                raise
    return path


#: libiberty choose_tmpdir(): these variables in this order, then P_tmpdir (/tmp), /var/tmp, /usr/tmp
GCC_TMP_VARS = ("TMPDIR", "TMP", "TEMP")
TMP_FIXED = ("/tmp", "/var/tmp", "/usr/tmp")
#: what a compiler reads for its own temporary files: gcc/as/collect2 (libiberty), nvcc (TMPDIR)
COMPILER_TMP_VARS = ("TMPDIR", "TMP", "TEMP")


def _in_cwd(path, cwd):
    """``path`` as the target's process resolves it: a relative one against its working directory."""
    return os.path.join(cwd, path) if path and cwd and not os.path.isabs(path) else path


def gcc_tmpdir(environ=None, cwd=None):
    """The directory gcc writes its intermediates to, chosen as libiberty's choose_tmpdir()
    does: the first of $TMPDIR, $TMP, $TEMP, /tmp, /var/tmp, /usr/tmp that access(R|W|X)
    accepts (a read-only mount fails it; a full one does not), else the working directory.
    gcc aborts ('Cannot create temporary file in DIR/: ...') when that one cannot be written."""
    env = os.environ if environ is None else environ
    for cand in [_in_cwd(env.get(v), cwd) for v in GCC_TMP_VARS] + list(TMP_FIXED):
        if cand and os.path.isdir(cand) and os.access(cand, os.R_OK | os.W_OK | os.X_OK):
            return cand
    return cwd or "."


def _same_dir(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def compiler_env(environ, cwd, folder=None):
    """(environment, folder made or None) for a compiler a probe starts (tmp26). gcc, as and
    collect2 name their own temporary files (libiberty make_temp_file: ccXXXXXX.s/.o/.res in
    choose_tmpdir's directory), as nvcc does (tmpxft_*), and remove them only when they end
    normally: a compiler SIGKILLed with its probe (a timeout, the OOM killer) leaves them in
    the user's temporary directory, where no sweep can tell them from the user's own. So the
    compiler gets TMPDIR, TMP and TEMP naming a stamped folder *inside the directory it would
    have chosen* (libiberty's choice with the target's environment and working directory): the
    user's file system is still the one written to and measured, and the sweep removes the
    folder. ``folder`` is a stamped folder the probe already made (its build folder): used when
    it lies in that directory, else a ``stackpeel-cc-`` one is made there (the caller removes
    it). Where none can be made (read-only, full, gone), the environment is returned unchanged:
    the compiler meets the fault itself, as the user's would."""
    env = dict(environ)
    chosen = gcc_tmpdir(environ, cwd)
    if chosen == "." and cwd:
        chosen = cwd
    made = None
    if not (folder and _same_dir(os.path.dirname(os.path.abspath(folder)), chosen)):
        try:
            # unstamped it would outlive a SIGKILL unswept: rather none (the compiler meets the full
            # file system itself, as the user's would)
            folder = made = stamped_mkdtemp("stackpeel-cc-", chosen, stamp_required=True)
        except (OSError, IOError):
            return env, None
    for var in COMPILER_TMP_VARS:
        env[var] = folder
    return env, made


def run(argv, timeout=20, env=None, cwd=None, input_text=None, clip_output=True):
    """Run a program; never raises. Returns a dict with rc, stdout, stderr, error.

    Long output is clipped to its head and tail; a probe that *parses* long output
    (``ldconfig -p``, ``nvidia-smi -q``) passes ``clip_output=False``.
    """
    keep = clip if clip_output else (lambda t: t.decode("utf-8", "replace") if isinstance(t, bytes) else (t or ""))
    try:
        proc = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env, cwd=cwd,
            # input= gives the program a pipe of its own (subprocess refuses stdin= beside it)
            **({"input": input_text.encode()} if input_text is not None else {"stdin": subprocess.DEVNULL})
        )
        return {"argv": list(argv), "rc": proc.returncode, "stdout": keep(proc.stdout), "stderr": keep(proc.stderr),
                "error": None}
    except subprocess.TimeoutExpired as exc:
        return {"argv": list(argv), "rc": None, "stdout": clip(exc.stdout), "stderr": clip(exc.stderr),
                "error": "timed out after %ss" % timeout}
    except OSError as exc:
        return {"argv": list(argv), "rc": None, "stdout": "", "stderr": "", "error": "%s: "
                                                                                     "%s" % (type(exc).__name__, exc)}


def run_together(calls):
    """Run independent programs at the same time, each as :func:`run` (``calls``: a list of
    ``(argv, keyword arguments)``); their results in the same order. Three queries of
    ``nvidia-smi`` each wait for the driver to open the GPUs: together they take the time of
    the slowest, not the sum."""
    import threading

    out = [None] * len(calls)

    def one(i, argv, kwargs):
        out[i] = run(argv, **kwargs)

    threads = [threading.Thread(target=one, args=(i, argv, dict(kwargs))) for i, (argv, kwargs) in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def exc_facts(exc):
    """An exception as facts: type, message, traceback (clipped), and its chain."""
    chain = []
    cur = exc.__cause__ or exc.__context__
    while cur is not None and len(chain) < 5:
        link = {"type": type(cur).__name__, "message": clip(str(cur), 2000)}
        link.update(_errno_facts(cur))
        chain.append(link)
        cur = cur.__cause__ or cur.__context__
    out = {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "message": clip(str(exc), 4000),
        "traceback": clip("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), 6000),
        "chain": chain,
    }
    out.update(_errno_facts(exc))
    return out


def _errno_facts(exc):
    """An OSError's errno as a number and a name ({"errno": 24, "errno_name": "EMFILE"}), so a
    check reads a descriptor shortage (EMFILE) from the number, not from translated text;
    {} for every other exception."""
    code = getattr(exc, "errno", None)
    if not isinstance(code, int) or isinstance(code, bool):
        return {}
    import errno as _errno

    return {"errno": code, "errno_name": _errno.errorcode.get(code)}


@contextlib.contextmanager
def recorded():
    """Record warnings (all of them, every time) and stdout/stderr writes of the block.

    Yields a dict that, after the block, holds ``warnings`` (category, message,
    file, line), ``stdout`` and ``stderr``.
    """
    box = {"warnings": [], "stdout": "", "stderr": ""}
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            yield box
        finally:
            sys.stdout, sys.stderr = old_out, old_err
            box["stdout"] = clip(out.getvalue())
            box["stderr"] = clip(err.getvalue())
            seen = set()
            for w in caught:
                key = (w.category.__name__, str(w.message), w.filename, w.lineno)
                if key in seen:
                    continue
                seen.add(key)
                box["warnings"].append({"category": w.category.__name__, "message": clip(str(w.message), 2000),
                                        "file": w.filename, "line": w.lineno})


def dist_version(name):
    """Installed distribution version without importing the package (None if absent)."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return metadata.version(name)
    except Exception:
        return None


def find_spec_origin(name):
    """Where a top-level module would be imported from, without importing it."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        locs = list(spec.submodule_search_locations)
        return locs[0] if locs else spec.origin
    return spec.origin


def which(name, path=None):
    import shutil
    return shutil.which(name, path=path)


def env_flag_names():
    return sorted(os.environ)


def sibling(name):
    """Another probe module of stackpeel's probes directory, loaded once, by path, under the
    same private name the runner gives it (``_stackpeel_probe_<name>``)."""
    import importlib.util
    mod_name = "_stackpeel_probe_" + name
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


class GuardedLib(object):
    """A ctypes library whose missing symbols are recorded (``missing``), never raised."""

    def __init__(self, lib):
        self.lib = lib
        self.missing = []

    def fn(self, name, argtypes, restype=ctypes.c_int):
        try:
            f = getattr(self.lib, name)
        except AttributeError:
            self.missing.append(name)
            return None
        f.argtypes = argtypes
        f.restype = restype
        return f


def torch_facts(facts, import_error_key="torch_error", cuda_error_key="cuda_error"):
    """Import torch (as the libraries do first) and record what it says about CUDA in
    ``facts``; returns the module, or None when the import failed."""
    try:
        import torch
    except Exception as exc:
        facts[import_error_key] = exc_facts(exc)
        return None
    facts["torch_version"] = torch.__version__
    facts["torch_cuda"] = getattr(torch.version, "cuda", None)
    try:
        facts["cuda_available"] = bool(torch.cuda.is_available())
        facts["device_count"] = int(torch.cuda.device_count())
    except Exception as exc:
        facts["cuda_available"] = False
        facts[cuda_error_key] = exc_facts(exc)
    return torch


def stub_package(name, path, version=None):
    """A stand-in for a package whose ``__init__`` must not run: submodules still load from
    ``path`` by the normal import system, and run their own, real code."""
    import types
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    mod.__file__ = os.path.join(path, "__init__.py")
    mod.__package__ = name
    if version:
        mod.__version__ = version
    sys.modules[name] = mod
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, mod)
    return mod


def drop_modules(top, keep, native=()):
    """Remove ``top`` and its submodules imported since ``keep`` (a set of sys.modules names)
    so that a later real import finds no stand-ins. Modules under the ``native`` prefixes
    stay: a native extension cannot be initialised twice in one process (pybind11 and LLVM
    abort), and the real import then finds the loaded one."""
    for name in set(sys.modules) - keep:
        if (name == top or name.startswith(top + ".")) and not name.startswith(tuple(native) or ("\0",)):
            del sys.modules[name]


def can_fork_from(module_name):
    """True when this process already imported ``module_name`` (forked from stackpeel's
    preloading interpreter) and may fork a fresh-enough child instead of starting a new
    interpreter: torch imported, CUDA not initialised, no Triton driver created yet."""
    if not hasattr(os, "fork") or module_name not in sys.modules:
        return False
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return False
    except Exception:
        return False
    drv = getattr(sys.modules.get("triton.runtime.driver"), "driver", None)  # triton imported, no driver made
    return getattr(drv, "_active", None) is None and getattr(drv, "_default", None) is None


def fork_call(fn, env, timeout):
    """Run ``fn()`` in a forked child whose ``os.environ`` is ``env``, with its stdout and
    stderr (file descriptors) captured; returns :func:`run`'s dict (rc, stdout, stderr,
    error). The child leaves with ``os._exit``; on timeout its session is killed."""
    import signal
    import tempfile
    import time
    outs = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setsid()
            os.dup2(outs[0].fileno(), 1)
            os.dup2(outs[1].fileno(), 2)
            os.environ.clear()
            os.environ.update(env)
            fn()
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            for s in (sys.stdout, sys.stderr):
                try:
                    s.flush()
                except Exception:
                    pass
            os._exit(code)
    deadline = time.monotonic() + timeout
    rc, error = None, None
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            break
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            error = "timed out after %ss" % timeout
            break
        time.sleep(0.02)
    texts = []
    for f in outs:
        f.seek(0)
        texts.append(clip(f.read()))
        f.close()
    return {"argv": ["<fork>"], "rc": rc, "stdout": texts[0], "stderr": texts[1], "error": error}
