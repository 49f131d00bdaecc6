"""Triton facts, measured with Triton's own code. Standard library only; Python 3.8+.

Three probes:

- ``import_facts``: installed distribution (metadata), the Triton torch pins, ``import triton``.
- ``build_facts``: Triton's own C build function (``triton.runtime.build``) on a tiny Python
  extension, with a fresh temporary ``TRITON_CACHE_DIR``; the compiler's stderr is captured
  at the file-descriptor level because Triton lets it through to fd 2.
- ``kernel_launch``: in sub-processes (so that each starts with Triton's in-process caches
  empty and a crash becomes a fact): get the active driver and target, compile and launch
  a real ``@triton.jit`` vector add on torch CUDA tensors and check the result exactly. The
  first run uses a fresh cache. When it fails for want of a C compiler while the user's
  cache holds ``cuda_utils`` for this Python, a second run uses a *copy* of the user's
  compiled helpers (the user's cache is never written) and also launches with an int
  argument equal to 1, which Triton <= 3.6 turns into a new launcher signature.

Works with Triton 3.x: 3.6 (``compile_module_from_src`` builds from a string,
per-signature launchers) and 3.7+ (generic launcher, ``compile_module_from_file``).
"""

import contextlib
import json
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import time

import _stackpeel_probe__common as common

#: distributions that provide the ``triton`` module (upstream, torch nightlies, ROCm, XPU)
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu")

COMPILER_MISSING = "Failed to find C compiler"

BUILD_PROBE_NAME = "stackpeel_build_probe"
BUILD_PROBE_SRC = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <dlfcn.h>

static PyObject *answer(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    return PyLong_FromLong(42);
}

static PyMethodDef methods[] = {
    {"answer", answer, METH_NOARGS, "stackpeel: Triton can build and load C extensions"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "stackpeel_build_probe", NULL, -1, methods};

PyMODINIT_FUNC PyInit_stackpeel_build_probe(void) { return PyModule_Create(&module); }
"""

#: the kernel the launch probe compiles; @triton.jit needs real source, so it is written to a file
KERNEL_SRC = '''
import triton
import triton.language as tl


@triton.jit
def stackpeel_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
'''

#: runs one launch phase in a fresh interpreter: loads this file by path, like the runner does
INNER_BOOT = r"""
import sys, os, json, traceback, importlib.util
d, out_path, opts = sys.argv[1], sys.argv[2], sys.argv[3]
def _load(name):
    spec = importlib.util.spec_from_file_location("_stackpeel_probe_" + name, os.path.join(d, name + ".py"))
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    return m
try:
    _load("_common")
    res = _load("triton_layer")._launch_phase(json.loads(opts))
except BaseException as e:
    res = {"ok": False, "stage": "probe", "error": {"type": type(e).__name__, "message": str(e)[:4000],
                                                   "traceback": traceback.format_exc()[-6000:], "chain": []}}
with open(out_path + ".tmp", "w") as f:
    json.dump(res, f, default=repr)
os.replace(out_path + ".tmp", out_path)
for s in (sys.stdout, sys.stderr):
    try:
        s.flush()
    except Exception:
        pass
os._exit(0)
"""


# --------------------------------------------------------------------------- helpers


def installed_triton():
    """(distribution, version) of the installed Triton, without importing it."""
    for dist in TRITON_DISTS:
        v = common.dist_version(dist)
        if v:
            return dist, v
    return None, None


def torch_metadata():
    """torch's version, its CUDA/HIP build (from torch/version.py, not imported) and its Triton pin."""
    out = {"torch_version": common.dist_version("torch"), "torch_cuda": None, "torch_hip": None,
           "triton_pin": None, "triton_pin_dist": None, "triton_requirement_line": None}
    if not out["torch_version"]:
        return out
    try:
        from importlib import metadata
        reqs = metadata.requires("torch") or []
    except Exception:
        reqs = []
    for line in reqs:
        # an exact pin (torch <= 2.13: triton==3.7.1) or a compatible release (torch 2.14:
        # triton~=3.8.0, any 3.8.x from 3.8.0); the operator stays in triton_requirement_line
        m = re.match(r"\s*(triton|pytorch-triton(?:-rocm|-xpu)?)\s*(?:==|~=)\s*([^\s;,]+)", line)
        if m:
            out["triton_pin_dist"], out["triton_pin"] = m.group(1), m.group(2)
            out["triton_requirement_line"] = line
            break
    origin = common.find_spec_origin("torch")
    if origin:
        text = ""
        try:
            with open(os.path.join(origin, "version.py")) as f:
                text = f.read()
        except (OSError, IOError):
            pass
        for key in ("cuda", "hip"):
            m = re.search(r"^%s\s*(?::[^=\n]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)" % key, text, re.M)
            if m:
                out["torch_" + key] = m.group(1) or m.group(2) or None
    return out


@contextlib.contextmanager
def fd_capture():
    """Capture what the process and its children write to fds 1 and 2 (compilers, ptxas).

    Yields a dict filled with ``stdout``/``stderr`` after the block.
    """
    box = {"stdout": "", "stderr": ""}
    saved, files = {}, {}
    for fd in (1, 2):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            files[fd] = tempfile.TemporaryFile()
            saved[fd] = os.dup(fd)
            os.dup2(files[fd].fileno(), fd)
        except OSError:
            files.pop(fd, None)
    try:
        yield box
    finally:
        for fd in (1, 2):
            if fd in saved:
                try:
                    os.dup2(saved[fd], fd)
                    os.close(saved[fd])
                except OSError:
                    pass
            f = files.get(fd)
            if f is not None:
                try:
                    f.seek(0)
                    box["stdout" if fd == 1 else "stderr"] = common.clip(f.read())
                    f.close()
                except OSError:
                    pass


def user_cache_dir(env=None):
    """The cache directory Triton would use, resolved like ``triton.knobs.cache.dir``."""
    env = os.environ if env is None else env
    if env.get("TRITON_CACHE_DIR"):
        return env["TRITON_CACHE_DIR"], "TRITON_CACHE_DIR"
    home = env.get("TRITON_HOME") or os.path.expanduser("~/")
    return os.path.join(home, ".triton", "cache"), ("TRITON_HOME" if env.get("TRITON_HOME") else "home")


def scan_cache(path, ext_suffix, limit=50000):
    """Count compiled helpers in a Triton cache, per kind and for this Python's EXT_SUFFIX."""
    out = {"dir": path, "exists": os.path.isdir(path), "entries": 0, "cuda_utils": 0, "cuda_utils_this_python": 0,
           "launchers": 0, "launchers_this_python": 0, "so_dirs_this_python": [], "truncated": False}
    if not out["exists"]:
        return out
    try:
        names = os.listdir(path)
    except OSError as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        return out
    for i, name in enumerate(names):
        if i >= limit:
            out["truncated"] = True
            break
        sub = os.path.join(path, name)
        try:
            files = os.listdir(sub)
        except OSError:
            continue
        out["entries"] += 1
        mine = False
        for fname in files:
            if not fname.endswith(".so"):
                continue
            this = bool(ext_suffix) and fname.endswith(ext_suffix)
            if fname.startswith("cuda_utils"):
                out["cuda_utils"] += 1
                out["cuda_utils_this_python"] += this
                mine = mine or this
            elif fname.startswith("__triton_launcher"):
                out["launchers"] += 1
                out["launchers_this_python"] += this
                mine = mine or this
        if mine:
            out["so_dirs_this_python"].append(name)
    return out


def copy_helpers(src_dir, names, dest, limit=2000):
    """Copy the cache entries holding compiled helpers into ``dest`` (same keys, same files)."""
    copied = 0
    for name in names[:limit]:
        try:
            shutil.copytree(os.path.join(src_dir, name), os.path.join(dest, name))
            copied += 1
        except (OSError, shutil.Error):
            continue
    return copied


def compiler_choice(env=None):
    """The C compiler Triton's build picks: $CC, else gcc, else clang (none probes plain `cc`)."""
    env = os.environ if env is None else env
    if env.get("CC") is not None:
        return env["CC"], "CC"
    path = env.get("PATH")
    gcc = shutil.which("gcc", path=path)
    if gcc:
        return gcc, "PATH gcc"
    clang = shutil.which("clang", path=path)
    if clang:
        return clang, "PATH clang"
    return None, None


def python_include():
    scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else None
    if scheme == "posix_local":
        scheme = "posix_prefix"
    try:
        inc = sysconfig.get_paths(scheme=scheme)["include"] if scheme else sysconfig.get_paths()["include"]
    except Exception:
        inc = sysconfig.get_paths().get("include")
    return inc


def is_compiler_failure(err):
    """Whether an exception's facts say that a C compile failed or no compiler was found."""
    if not err:
        return False
    text = (err.get("message") or "") + "\n" + (err.get("traceback") or "")
    return (COMPILER_MISSING in text or err.get("type") == "CalledProcessError"
            or (err.get("type") == "FileNotFoundError" and "runtime/build.py" in text))


# --------------------------------------------------------------------------- triton.import

def import_facts(inp):
    dist, version = installed_triton()
    facts = {"installed": bool(dist), "dist": dist, "dist_version": version, "version": version,
             "path": common.find_spec_origin("triton"), "importable": False, "import_error": None,
             "python_version": "%d.%d.%d" % sys.version_info[:3]}
    facts.update(torch_metadata())
    if not dist and not facts["path"]:
        return facts
    start = time.monotonic()
    with common.recorded() as box:
        try:
            import triton
            facts["importable"] = True
            facts["version"] = getattr(triton, "__version__", version)
            facts["path"] = os.path.dirname(os.path.abspath(triton.__file__))
        except Exception as exc:
            facts["import_error"] = common.exc_facts(exc)
    facts["import_s"] = round(time.monotonic() - start, 3)
    facts["import_output"] = {"warnings": box["warnings"], "stderr": box["stderr"]}
    facts["env"] = {k: v for k, v in os.environ.items() if k.startswith("TRITON_") or k == "CC"}
    return facts


# --------------------------------------------------------------------------- triton.build

@contextlib.contextmanager
def target_tmp():
    """Run the body with the target's TMPDIR and working directory, where the runner passed them
    (STACKPEEL_TARGET_TMPDIR, absent: unset; STACKPEEL_TARGET_CWD): Triton's build makes its
    tempfile.TemporaryDirectory() and runs gcc (whose scratch follows TMPDIR, else /tmp, else the
    working directory) where the user's run would, not in stackpeel's scratch (tmp24).

    Python's own temporary folders (Triton's TemporaryDirectory) go one level down, in a folder
    made in the directory tempfile finds for the target and stamped as stackpeel's (tmp25): same
    filesystem, same room, same faults, but a probe killed outright leaves nothing the next
    stackpeel does not sweep. Where tempfile finds none, the body sees that as the user would.
    The compilers the body starts get TMPDIR/TMP/TEMP naming a stamped folder in the directory gcc
    would choose (``common.compiler_env``, tmp26): a compiler killed with the probe leaves its
    ccXXXXXX files in a folder the sweep removes, not loose among the user's files.
    Yields what the body sees: {"TMPDIR" (the user's, as Python's tempfile read it), "cwd",
    "python_tmpdir", "error", "folder", "compiler_folder" (None: the compilers see the user's)}."""
    seen = {"TMPDIR": os.environ.get("TMPDIR"), "cwd": None, "python_tmpdir": None, "error": None, "folder": None,
            "compiler_folder": None}
    if "STACKPEEL_TARGET_CWD" not in os.environ:
        yield seen
        return
    saved_vars = {v: os.environ.get(v) for v in common.COMPILER_TMP_VARS}
    saved_default = tempfile.tempdir
    try:
        saved_cwd = os.getcwd()
    except OSError:
        saved_cwd = None
    folder = cc_made = None
    try:
        if "STACKPEEL_TARGET_TMPDIR" in os.environ:
            os.environ["TMPDIR"] = os.environ["STACKPEEL_TARGET_TMPDIR"]
        else:
            os.environ.pop("TMPDIR", None)
        seen["TMPDIR"] = os.environ.get("TMPDIR")
        tempfile.tempdir = None  # gettempdir() searches again, as in the user's process
        try:
            os.chdir(os.environ["STACKPEEL_TARGET_CWD"])
        except OSError:
            pass
        try:
            seen["cwd"] = os.getcwd()
            seen["python_tmpdir"] = tempfile.gettempdir()
            folder = common.stamped_mkdtemp("stackpeel-triton-", seen["python_tmpdir"])
            tempfile.tempdir = seen["folder"] = folder
        except (OSError, IOError) as exc:  # none usable, or it filled up since: the body meets it too
            seen["error"] = "%s: %s" % (type(exc).__name__, exc)
            tempfile.tempdir = None
        # the compilers Triton starts (gcc for its helpers and launchers) inherit os.environ: their
        # ccXXXXXX files go in a stamped folder of the directory gcc chooses (tmp26); Python's
        # choice is pinned above (tempfile.tempdir), so only the compilers see this. Where Python
        # found no directory, nothing is pinned and nothing changes: the body meets that as is
        cc_env = os.environ
        if folder is not None:
            cc_env, cc_made = common.compiler_env(os.environ, seen["cwd"], folder)
        if cc_env.get("TMPDIR") != seen["TMPDIR"]:
            seen["compiler_folder"] = cc_env["TMPDIR"]
            for var in common.COMPILER_TMP_VARS:
                os.environ[var] = cc_env[var]
        yield seen
    finally:
        for d in (cc_made, folder):
            if d is not None:
                shutil.rmtree(d, ignore_errors=True)
        for var, value in saved_vars.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        tempfile.tempdir = saved_default
        if saved_cwd is not None:
            try:
                os.chdir(saved_cwd)
            except OSError:
                pass


def _build_with(build_mod, tmp):
    """Call the build entry point this Triton offers; returns (api, loaded module or .so path)."""
    import inspect
    fn = getattr(build_mod, "compile_module_from_src", None)
    if fn is not None:
        params = inspect.signature(fn).parameters
        kwargs = {"src": BUILD_PROBE_SRC, "name": BUILD_PROBE_NAME}
        if "language" in params:
            kwargs["language"] = "c"
        return "triton.runtime.build.compile_module_from_src", fn(**kwargs)
    fn = getattr(build_mod, "_build")  # older Triton: only the raw build function
    srcdir = os.path.join(tmp, "src")
    os.makedirs(srcdir)
    src = os.path.join(srcdir, BUILD_PROBE_NAME + ".c")
    with open(src, "w") as f:
        f.write(BUILD_PROBE_SRC)
    params = inspect.signature(fn).parameters
    args = {"name": BUILD_PROBE_NAME, "src": src, "srcdir": srcdir, "library_dirs": [], "include_dirs": [],
            "libraries": [], "ccflags": []}
    so = fn(**{k: v for k, v in args.items() if k in params})
    return "triton.runtime.build._build", so


#: ``__version__ = '3.9.0'`` in triton/__init__.py
INIT_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def _build_module(standin):
    """Triton's ``triton.runtime.build``, and how it was loaded. By default the module runs
    under stand-in ``triton`` and ``triton.runtime`` packages: its own code and what it
    imports (``triton.knobs`` with ``libtriton``, ``triton.runtime.cache``) load for real, but
    not ``triton/__init__.py`` (the language, compiler, JIT and autotuner: 60 % of the probe's
    time), which ``triton.import`` already imports. Where that fails (another Triton's
    layout), and with ``--deep``, ``import triton`` as before, so the error is the real one."""
    root = common.find_spec_origin("triton")
    if standin and root and os.path.isfile(os.path.join(root, "runtime", "build.py")):
        keep = set(sys.modules)
        try:
            with open(os.path.join(root, "__init__.py")) as f:
                m = INIT_VERSION.search(f.read())
            if m:
                common.stub_package("triton", root, m.group(1))
                common.stub_package("triton.runtime", os.path.join(root, "runtime"))
                import importlib
                return importlib.import_module("triton.runtime.build"), "triton/runtime/build.py only", m.group(1)
        except Exception:
            pass
        common.drop_modules("triton", keep, native=("triton._C",))
    import triton
    import triton.runtime.build as build_mod
    return build_mod, "import triton", getattr(triton, "__version__", None)


def build_facts(inp):
    """Build and load a tiny extension through Triton's build entry point on an empty cache.
    By default ``triton.runtime.build`` runs under stand-in parent packages
    (:func:`_build_module`); when that build does not succeed, the same build runs again after
    a real ``import triton`` and its answer is the one reported (``standin_failed`` keeps the
    first error), so a stand-in can make the check faster but never change its verdict."""
    standin = (inp or {}).get("mode") != "deep"
    keep = set(sys.modules)
    facts = _build_attempt(standin)
    if standin and not facts["ok"] and facts.get("import_path") != "import triton":
        first = facts["error"]
        common.drop_modules("triton", keep, native=("triton._C",))
        facts = _build_attempt(False)
        facts["standin_failed"] = first
    return facts


def _build_attempt(standin):
    tmp = tempfile.mkdtemp(prefix="stackpeel-triton-build-")
    cache = os.path.join(tmp, "cache")
    os.environ["TRITON_CACHE_DIR"] = cache  # before triton is imported: a fresh cache, nothing reused
    cc, cc_source = compiler_choice()
    inc = python_include()
    facts = {"ok": False, "api": None, "cache_dir": cache, "compiler": cc, "compiler_source": cc_source,
             "python_include": inc, "python_h": bool(inc) and os.path.exists(os.path.join(inc, "Python.h")),
             "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"), "file_program": shutil.which("file"),
             "error": None, "command": None, "returncode": None, "compiler_stderr": "", "compiler_stdout": "",
             "answer": None, "python_version": "%d.%d.%d" % sys.version_info[:3]}
    try:
        with common.recorded() as box:
            with fd_capture() as cap:
                try:
                    build_mod, facts["import_path"], facts["triton_version"] = _build_module(standin)
                    pk = getattr(build_mod, "platform_key", None)
                    if pk is not None:
                        try:
                            facts["platform_key"] = pk()
                        except Exception as exc:
                            facts["platform_key_error"] = "%s: %s" % (type(exc).__name__, exc)
                    with target_tmp():  # Triton's TemporaryDirectory and gcc's scratch: the user's (tmp24)
                        facts["api"], result = _build_with(build_mod, tmp)
                    if isinstance(result, str):  # a path: load it ourselves
                        import importlib.util
                        spec = importlib.util.spec_from_file_location(BUILD_PROBE_NAME, result)
                        result = importlib.util.module_from_spec(spec)
                        spec.loader.exec_module(result)
                    facts["answer"] = result.answer()
                    facts["ok"] = facts["answer"] == 42
                except Exception as exc:
                    facts["error"] = common.exc_facts(exc)
                    cmd = getattr(exc, "cmd", None)
                    if cmd is not None:
                        facts["command"] = [str(c) for c in cmd] if isinstance(cmd, (list, tuple)) else str(cmd)
                        facts["returncode"] = getattr(exc, "returncode", None)
        facts["compiler_stderr"] = cap["stderr"]
        facts["compiler_stdout"] = cap["stdout"]
        facts["warnings"] = box["warnings"]
        facts["python_stderr"] = box["stderr"]
        facts["cache_files"] = sorted(os.path.relpath(os.path.join(r, f), cache)
                                      for r, _, fs in os.walk(cache) for f in fs)[:20]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


# --------------------------------------------------------------------------- triton.kernel_launch

#: where Triton keeps the class that builds and loads its ``cuda_utils`` helper (3.0 and later)
CUDA_UTILS_MODULE = "triton.backends.nvidia.driver"


def launch_prework(inp):
    """Torch-free, while the other interpreter imports torch (``Check.prework``): build
    Triton's own ``cuda_utils`` helper, which creating its CUDA driver compiles with the C
    compiler (0.4 s on an H200), into the empty cache the launch will use (``inp["scratch"]``).
    The launch then loads it from there instead of building it on the critical path: its
    cache is still one nobody else wrote, and a failure here changes nothing, since the launch
    builds whatever it does not find and reports its own error."""
    facts = {"ok": False, "skipped": None, "error": None, "seconds": None}
    scratch = (inp or {}).get("scratch")
    if not scratch:
        facts["skipped"] = "no folder shared with the launch"
        return facts
    if not any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/dxg")):
        facts["skipped"] = "no NVIDIA device node: the launch stops before it needs the helper"
        return facts
    os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "fresh-cache")
    start = time.monotonic()
    try:
        with common.recorded():
            with fd_capture():
                import importlib
                mod = importlib.import_module(CUDA_UTILS_MODULE)
                utils = getattr(mod, "CudaUtils", None)
                if utils is None:
                    facts["skipped"] = "this Triton has no %s.CudaUtils" % CUDA_UTILS_MODULE
                else:
                    with target_tmp():  # the helper's build in the user's temporary directory (tmp25)
                        utils()
                    facts["ok"] = True
    except Exception as exc:
        facts["error"] = common.exc_facts(exc)
    facts["seconds"] = round(time.monotonic() - start, 3)
    facts["torch_imported"] = "torch" in sys.modules  # it must not be: it would defeat the point
    return facts


def _launch_once(torch, kernel, n, block, device):
    t0 = time.monotonic()
    x = torch.arange(n, dtype=torch.float32, device=device)  # the first one creates the CUDA context
    y = torch.full((n,), 0.5, dtype=torch.float32, device=device)
    out = torch.full((n,), -1.0, dtype=torch.float32, device=device)
    t1 = time.monotonic()
    grid = ((n + block - 1) // block,)
    kernel[grid](x, y, out, n, BLOCK=block)  # compile (empty cache: ptxas, the launcher's build), launch
    torch.cuda.synchronize()
    t2 = time.monotonic()
    got = out.cpu()
    expected = torch.arange(n, dtype=torch.float32) + 0.5  # exact in float32
    bad = (got != expected)
    nbad = int(bad.sum().item())
    res = {"n": n, "block": block, "checked": n, "mismatches": nbad,
           "max_abs_err": float((got - expected).abs().max().item()), "ok": nbad == 0,
           "tensors_s": round(t1 - t0, 3), "kernel_s": round(t2 - t1, 3)}
    if nbad:
        idx = int(bad.nonzero()[0].item())
        res["first_bad"] = {"index": idx, "got": float(got[idx].item()), "expected": float(expected[idx].item())}
    return res


def _launch_phase(opts):
    """One launch run in this (fresh) interpreter; TRITON_CACHE_DIR was set by the parent."""
    facts = {"cache": opts.get("cache"), "cache_dir": os.environ.get("TRITON_CACHE_DIR"), "ok": False,
             "stage": None, "error": None, "launches": []}
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="stackpeel-kernel-")  # the kernel's source: stackpeel's scratch
    try:
        # what the launch builds (Triton's helpers, the kernel's launcher: TemporaryDirectory, gcc)
        # it builds where the user's kernel would: the target's temporary directory (tmp25)
        with common.recorded() as box:
            with fd_capture() as cap:  # its files in stackpeel's scratch, made before the switch
                with target_tmp() as seen:
                    facts["temp"] = dict(seen)
                    _launch_steps(opts, facts, tmp)
        facts["output"] = {"stdout": common.clip(box["stdout"] + cap["stdout"], 6000),
                           "stderr": common.clip(box["stderr"] + cap["stderr"], 6000),
                           "warnings": box["warnings"][:20]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    facts["seconds"] = round(time.monotonic() - t0, 3)
    cd = facts["cache_dir"]
    if cd:
        facts["cache_after"] = scan_cache(cd, sysconfig.get_config_var("EXT_SUFFIX"))
        facts["cache_after"].pop("so_dirs_this_python", None)
    return facts


def _driver_beside_context(triton, torch, facts):
    """Triton's active driver and target, as the first launch gets them: the driver's creation
    builds the ``cuda_utils`` helper with the C compiler (0.4 s on an H200). While that compiler
    runs, this thread asks torch about CUDA (``is_available``, the device count: 0.1-0.2 s
    there, into ``facts``) and creates the CUDA context the launch needs anyway (0.1 s), so
    they overlap. Returns {"driver", "target"} or {"error": the driver's exception}; a context
    that fails is left for the launch to report, where it always was."""
    import threading
    built = {}

    def build():
        try:
            built["driver"] = triton.runtime.driver.active
            built["target"] = built["driver"].get_current_target()
        except BaseException as exc:  # reported by the caller, as the stage's error
            built["error"] = exc

    worker = threading.Thread(target=build, name="stackpeel-triton-driver", daemon=True)
    worker.start()
    common.torch_facts(facts, import_error_key="error", cuda_error_key="torch_cuda_error")
    if facts.get("cuda_available"):
        try:
            torch.zeros(1, device="cuda")
        except Exception:
            pass
    worker.join()
    return built


def _launch_steps(opts, facts, tmp):
    times = facts["stage_s"] = {}  # each stage's seconds: what the critical path spends its time on
    clock = [time.monotonic()]

    def stage(name):
        now = time.monotonic()
        if facts["stage"] is not None:
            times[facts["stage"]] = round(now - clock[0], 3)
        clock[0] = now
        facts["stage"] = name

    try:
        _launch_stages(opts, facts, tmp, stage)
    finally:  # the stage an error ended it in
        if facts["stage"] not in ("done", None):
            times.setdefault(facts["stage"], round(time.monotonic() - clock[0], 3))


def _launch_stages(opts, facts, tmp, stage):
    stage("import-torch")  # what it says about CUDA is asked while Triton's driver builds
    try:
        import torch
    except Exception as exc:
        facts["error"] = common.exc_facts(exc)
        return

    stage("import-triton")
    try:
        import triton
        import triton.runtime.build as build_mod
    except Exception as exc:
        facts["error"] = common.exc_facts(exc)
        return
    facts["triton_version"] = getattr(triton, "__version__", None)
    try:
        facts["platform_key"] = build_mod.platform_key()
    except Exception as exc:
        facts["platform_key"] = None
        facts["platform_key_error"] = "%s: %s" % (type(exc).__name__, exc)

    stage("driver")
    built = _driver_beside_context(triton, torch, facts)
    if "error" in built:
        facts["error"] = common.exc_facts(built["error"])
        return
    drv, target = built["driver"], built["target"]
    facts["driver"] = type(drv).__module__ + "." + type(drv).__name__
    facts["target"] = {"backend": getattr(target, "backend", None), "arch": getattr(target, "arch", None),
                       "warp_size": getattr(target, "warp_size", None)}
    if facts.get("cuda_available"):
        try:
            idx = torch.cuda.current_device()
            facts["device"] = {"index": idx, "name": torch.cuda.get_device_name(idx),
                               "cc": "%d.%d" % torch.cuda.get_device_capability(idx)}
        except Exception as exc:
            facts["device_error"] = common.exc_facts(exc)

    stage("kernel-source")
    try:
        import importlib.util
        path = os.path.join(tmp, "stackpeel_triton_kernel.py")
        with open(path, "w") as f:
            f.write(KERNEL_SRC)
        spec = importlib.util.spec_from_file_location("stackpeel_triton_kernel", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        kernel = mod.stackpeel_add
    except Exception as exc:
        facts["error"] = common.exc_facts(exc)
        return

    device = "cuda"
    for label, n in (("main", 1000),) + ((("int-arg-1", 1),) if opts.get("int1") else ()):
        stage("launch" if label == "main" else "launch-int-arg-1")
        entry = {"label": label, "n": n, "block": 256}
        facts["launches"].append(entry)
        try:
            entry.update(_launch_once(torch, kernel, n, 256, device))
        except Exception as exc:
            entry["ok"] = False
            entry["error"] = common.exc_facts(exc)
            entry["ptxas_error"] = type(exc).__name__ == "PTXASError"
            cmd = getattr(exc, "cmd", None)
            if cmd is not None:
                entry["command"] = [str(c) for c in cmd] if isinstance(cmd, (list, tuple)) else str(cmd)
            if label == "main":
                facts["error"] = entry["error"]
                return
            continue
        if label == "main" and not entry["ok"]:
            stage("result")
            return
    stage("done")
    facts["ok"] = all(e.get("ok") for e in facts["launches"][:1])


def _phase_to_file(opts, out_path):
    """What INNER_BOOT does, in a forked child."""
    try:
        res = _launch_phase(opts)
    except BaseException as e:
        res = {"ok": False, "stage": "probe", "error": common.exc_facts(e)}
    with open(out_path + ".tmp", "w") as f:
        json.dump(res, f, default=repr)
    os.replace(out_path + ".tmp", out_path)


def _run_phase(opts, env, timeout):
    """Run ``_launch_phase`` in a fresh interpreter with ``env``; never raises."""
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = tempfile.mkdtemp(prefix="stackpeel-phase-")
    out_path = os.path.join(out_dir, "answer.json")
    try:
        if common.can_fork_from("torch"):  # forked from stackpeel's interpreter that imported torch once
            res = common.fork_call(lambda: _phase_to_file(opts, out_path), env, timeout)
        else:
            res = common.run([sys.executable, "-c", INNER_BOOT, here, out_path, json.dumps(opts)], timeout=timeout,
                             env=env)
        try:
            with open(out_path) as f:
                facts = json.load(f)
        except (OSError, IOError, ValueError):
            facts = {"ok": False, "stage": "process", "cache": opts.get("cache"),
                     "error": {"type": "ProbeProcessFailed",
                               "message": res.get("error") or ("exited with status %s without answering"
                                                               % res.get("rc")),
                               "traceback": "", "chain": []}}
        facts["process"] = {"rc": res.get("rc"), "error": res.get("error"),
                            "stderr_tail": common.clip(res.get("stderr"), 3000)}
        return facts
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def kernel_launch(inp):
    options = inp.get("options") or {}
    deps = inp.get("deps") or {}
    budget = float(options.get("budget_s", 220))
    if inp.get("timeout_s"):  # leave the runner time to read the answer under --timeout-scale
        budget = min(budget * float(inp["timeout_s"]) / 240.0, float(inp["timeout_s"]) - 10)
    deadline = time.monotonic() + budget
    ext_suffix = sysconfig.get_config_var("EXT_SUFFIX")
    dist, version = installed_triton()
    facts = {"triton_version": version, "ext_suffix": ext_suffix, "fresh": None, "user_cache": None,
             "user_run": None, "user_run_reason": None, "compiler": compiler_choice()[0],
             "file_program": shutil.which("file")}
    cache_dir, cache_source = user_cache_dir()
    cache_dir = (deps.get("toolchain.triton_cache") or {}).get("cache_dir") or cache_dir
    facts["user_cache"] = scan_cache(cache_dir, ext_suffix)
    facts["user_cache"]["source"] = cache_source
    helper_dirs = facts["user_cache"].pop("so_dirs_this_python", [])

    facts["prebuilt"] = inp.get("prework")  # what launch_prework built into the empty cache, if it ran
    tmp = tempfile.mkdtemp(prefix="stackpeel-launch-")
    try:
        env = dict(os.environ)
        # the empty cache: the one launch_prework filled with Triton's helper when it ran
        scratch = inp.get("scratch") if isinstance(inp.get("scratch"), str) else None
        env["TRITON_CACHE_DIR"] = os.path.join(scratch or tmp, "fresh-cache")
        fresh_timeout = max(10.0, min(float(options.get("fresh_timeout_s", 150)), deadline - time.monotonic() - 5))
        facts["fresh"] = _run_phase({"cache": "fresh", "int1": False}, env, fresh_timeout)

        fresh_err = facts["fresh"].get("error")
        build_dep = deps.get("triton.build") or {}
        no_compiler = is_compiler_failure(fresh_err) or build_dep.get("ok") is False
        if not facts["fresh"].get("ok") and is_compiler_failure(fresh_err) \
                and facts["user_cache"]["cuda_utils_this_python"] > 0:
            remaining = deadline - time.monotonic() - 5
            if remaining < 20:
                facts["user_run_reason"] = "no-time-left"
            else:
                copy = os.path.join(tmp, "user-cache-copy")
                os.makedirs(copy)
                facts["user_cache"]["copied_entries"] = copy_helpers(cache_dir, helper_dirs, copy)
                env2 = dict(os.environ)
                env2["TRITON_CACHE_DIR"] = copy
                facts["user_run_reason"] = "compiler-missing-and-cached-helpers"
                facts["user_run"] = _run_phase({"cache": "user-copy", "int1": True}, env2,
                                               min(float(options.get("user_timeout_s", 120)), remaining))
        elif no_compiler:
            facts["user_run_reason"] = "no-cuda-utils"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts
