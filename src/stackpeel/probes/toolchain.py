"""Toolchain facts: what Triton needs to build its C helper, find libcuda, assemble PTX and
cache its output, found the way Triton finds each of them but without importing Triton.

Every lookup below mirrors a named piece of Triton (3.6 and 3.9 read side by side) or of
torch.utils.cpp_extension; the comments say which. Standard library only; Python 3.8+.
"""

import glob
import os
import platform
import re
import shutil
import stat
import sys
import sysconfig
import tempfile

import _stackpeel_probe__common as common

LDCONFIG = "/sbin/ldconfig"  # hard-coded in triton/backends/nvidia/driver.py libcuda_dirs()


def _exists(path):
    try:
        return os.path.exists(path)
    except (OSError, ValueError):
        return False


def _first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return None


# ---------------------------------------------------------------------------------------
# C compiler: triton/runtime/build.py _find_compiler("c") (3.9) / _build (3.6)


def triton_compiler(environ=None):
    """The C compiler Triton would run, and what else is around.

    Triton: ``CC`` if set (even empty, taken as one program name, never checked); else
    ``shutil.which("gcc")`` preferred over ``shutil.which("clang")``; plain ``cc`` never.
    """
    env = os.environ if environ is None else environ
    path = env.get("PATH")
    cc_env = env.get("CC")
    gcc = shutil.which("gcc", path=path)
    clang = shutil.which("clang", path=path)
    out = {
        "cc_env": cc_env,
        "path_env": path,
        "gcc": gcc,
        "clang": clang,
        # found only for hints: Triton never runs these
        "plain_cc": shutil.which("cc", path=path),
        "conda_gcc": sorted(glob.glob(os.path.join(sys.prefix, "bin", "*-conda*-linux-gnu*-gcc")))[:3]
        if os.path.isdir(os.path.join(sys.prefix, "conda-meta")) else [],
    }
    if cc_env is not None:
        out["compiler"], out["source"] = cc_env, "CC"
        out["resolved"] = shutil.which(cc_env, path=path) if cc_env else None
    elif gcc or clang:
        out["compiler"] = gcc if gcc is not None else clang
        out["source"] = "PATH gcc" if gcc is not None else "PATH clang"
        out["resolved"] = out["compiler"]
    else:
        out["compiler"], out["source"], out["resolved"] = None, None, None
    return out


def _compiler_kind(text):
    low = (text or "").lower()
    if "clang" in low:
        return "clang"
    if "gcc" in low or "free software foundation" in low:
        return "gcc"
    return None


def c_compiler(inp):
    facts = triton_compiler()
    cc = facts["compiler"]
    resolved = facts["resolved"]
    facts["exists"] = bool(resolved) and _exists(resolved)
    facts["executable"] = bool(resolved) and os.access(resolved, os.X_OK)
    facts["realpath"] = os.path.realpath(resolved) if resolved else None
    facts["machine"] = platform.machine()
    if cc is not None:
        run = common.run([cc, "--version"], timeout=20)
        facts["version_run"] = run
        facts["works"] = run["rc"] == 0 and run["error"] is None
        facts["version"] = _first_line(run["stdout"]) if facts["works"] else None
        facts["kind"] = _compiler_kind(run["stdout"]) if facts["works"] else None
        if facts["works"]:
            dm = common.run([cc, "-dumpmachine"], timeout=20)
            facts["target_triple"] = dm["stdout"].strip() if dm["rc"] == 0 else None
    else:
        facts["works"] = False
        if facts["plain_cc"]:
            run = common.run([facts["plain_cc"], "--version"], timeout=20)
            facts["plain_cc_version"] = _first_line(run["stdout"]) if run["rc"] == 0 else None
    return facts


# ---------------------------------------------------------------------------------------
# Python headers: triton/runtime/build.py _build (3.6 :34-39, 3.9 :67-72)


def triton_python_include():
    """(default scheme, scheme Triton uses, include dir) computed as Triton does."""
    getter = getattr(sysconfig, "get_default_scheme", None) or getattr(sysconfig, "_get_default_scheme", None)
    scheme = getter() if getter else "posix_prefix"
    used = "posix_prefix" if scheme == "posix_local" else scheme
    return scheme, used, sysconfig.get_paths(scheme=used)["include"]


def _base_executable():
    cand = getattr(sys, "_base_executable", None)
    mm = "python%d.%d" % sys.version_info[:2]
    if not cand or (sys.prefix != sys.base_prefix and os.path.dirname(cand) == os.path.dirname(sys.executable)):
        cand = os.path.join(sys.base_prefix, "bin", mm)
    return cand


def python_kind():
    """Where this interpreter comes from, as far as its files tell: conda, pyenv,
    standalone (python-build-standalone: uv, rye, pdm), system (/usr), local (/usr/local,
    /opt: built from source, official python images) or other."""
    base = sys.base_prefix
    if os.path.isdir(os.path.join(base, "conda-meta")):
        return "conda"
    if "/.pyenv/versions/" in base + "/" or os.environ.get("PYENV_ROOT") and base.startswith(os.environ["PYENV_ROOT"]):
        return "pyenv"
    config_args = sysconfig.get_config_var("CONFIG_ARGS") or ""
    if "--prefix=/install" in config_args or "/uv/python/" in base or "/rye/py/" in base:
        return "standalone"
    if base == "/usr":
        return "system"
    if base.startswith("/usr/local") or base.startswith("/opt"):
        return "local"
    return "other"


def python_headers(inp):
    scheme, used, include = triton_python_include()
    python_h = os.path.join(include, "Python.h")
    base_exe = _base_executable()
    distro_python3 = os.path.realpath("/usr/bin/python3") if _exists("/usr/bin/python3") else None
    return {
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "py_mm": "%d.%d" % sys.version_info[:2],
        "implementation": sys.implementation.name,
        "default_scheme": scheme,
        "scheme": used,
        "include_dir": include,
        "include_dir_exists": os.path.isdir(include),
        "python_h": python_h,
        "python_h_exists": os.path.isfile(python_h),
        "python_h_readable": os.access(python_h, os.R_OK),
        "pyconfig_h_exists": os.path.isfile(os.path.join(include, "pyconfig.h")),
        "config_includepy": sysconfig.get_config_var("INCLUDEPY"),
        "base_prefix": sys.base_prefix,
        "in_venv": sys.prefix != sys.base_prefix,
        "base_executable": base_exe,
        "kind": python_kind(),
        "is_distro_python3": bool(distro_python3) and os.path.realpath(base_exe) == distro_python3,
    }


# ---------------------------------------------------------------------------------------
# A real extension build with Triton's command line (build.py: cc_cmd)

EXT_NAME = "stackpeel_ext_probe"
EXT_SOURCE = r"""
#include <Python.h>
#include <dlfcn.h>
#include <stdlib.h>

/* Same headers and libc entry points as Triton's cuda_utils helper (driver.c). */
static PyObject *answer(PyObject *self, PyObject *args) {
    void *handle = dlopen(NULL, RTLD_LAZY);
    long value = handle ? 42 : -1;
    if (handle) dlclose(handle);
    return PyLong_FromLong(value);
}

static PyMethodDef methods[] = {
    {"answer", answer, METH_NOARGS, "Return 42 if dlopen works."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "stackpeel_ext_probe", NULL, -1, methods};

PyMODINIT_FUNC PyInit_stackpeel_ext_probe(void) { return PyModule_Create(&module); }
"""

_MISSING_HEADER_GCC = re.compile(r"fatal error: ([\w./+-]+\.h): No such file or directory")
_MISSING_HEADER_CLANG = re.compile(r"fatal error: '([\w./+-]+\.h)' file not found")
_START_FILES = re.compile(r"cannot find (crt1\.o|Scrt1\.o|crti\.o|crtn\.o|-lc\b|-lgcc_s\b|crtbeginS\.o)")
# gcc quotes with '' or, in UTF-8 locales, \u2018\u2019
_NO_TOOL = re.compile(u"(?:cannot execute|error trying to exec|cannot find) ['\u2018\"]?(as|ld|cc1|collect2|ld\\.\\w+)"
                      u"['\u2019\"]?")


# libiberty make_temp_file, gcc toplev.cc, gas write.c: the compiler's own temporary files (tmp24)
_TEMP_FILE = re.compile(r"Cannot create temporary file in [^\n]{1,300}|[^\s:]{0,300}/cc\w{6}\.[sio]:? [^\n]{0,80}"
                        r"No space left on device")


def classify_build_stderr(text):
    """(kind, detail) for a failed compile: python-headers, libc-headers, binutils,
    compiler-incomplete or other. ``detail`` is the missing file or program."""
    text = text or ""
    m = _MISSING_HEADER_GCC.search(text) or _MISSING_HEADER_CLANG.search(text)
    if m:
        header = m.group(1)
        base = os.path.basename(header)
        if base in ("Python.h", "pyconfig.h") or header.startswith("cpython/") or base.startswith("py"):
            return "python-headers", header
        return "libc-headers", header
    m = _START_FILES.search(text)
    if m:
        return "libc-headers", m.group(1)
    m = _TEMP_FILE.search(text)  # tmp24: gcc/as could not write their temporary files
    if m:
        return "temp-dir", m.group(0)
    m = _NO_TOOL.search(text)
    if m:
        tool = m.group(1)
        return ("compiler-incomplete" if tool in ("cc1", "collect2") else "binutils"), tool
    return "other", None


def extension_build(inp):
    found = triton_compiler()
    _, _, include = triton_python_include()
    facts = {"compiler": found["compiler"], "source": found["source"], "include_dir": include, "ok": False,
             "attempted": False, "stderr": "", "failure_kind": None}
    if found["compiler"] is None:
        facts["failure_kind"] = "no-compiler"
        return facts
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    # Triton builds in tempfile.TemporaryDirectory() and runs the compiler in the user's working
    # directory with the user's TMPDIR: so does this build (tmp24), not in stackpeel's scratch
    environ, cwd = target_tmp_env()
    root, error = python_tmpdir(environ, cwd)
    try:
        if root is None:
            raise OSError(error)
        tmp = common.stamped_mkdtemp("stackpeel-ext-", root)  # swept if the probe is killed (tmp25)
    except (OSError, IOError) as exc:  # No usable temporary directory found in [...] (toolchain.temp_dir)
        facts["failure_kind"], facts["error"] = "no-tmp", error or "%s: %s" % (type(exc).__name__, exc)
        return facts
    run_cwd = cwd if cwd and os.path.isdir(cwd) else tmp
    # gcc's own ccXXXXXX files in a stamped folder of the directory it chooses (tmp26): a compiler
    # killed with this probe leaves nothing the sweep cannot remove
    cc_env, cc_folder = common.compiler_env(environ, run_cwd, tmp)
    try:
        src = os.path.join(tmp, EXT_NAME + ".c")
        so = os.path.join(tmp, EXT_NAME + suffix)
        with open(src, "w") as f:
            f.write(EXT_SOURCE)
        # Triton: [cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so] + -l/-L + -I (srcdir, python include)
        argv = [found["compiler"], src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so, "-I" + tmp, "-I" + include]
        run = common.run(argv, timeout=90, cwd=run_cwd, env=cc_env)
        facts["compiler_tmpdir"] = cc_env.get("TMPDIR")  # the folder of its ccXXXXXX files (tmp26)
        facts.update(attempted=True, command=argv, tmpdir=tmp, rc=run["rc"], stdout=run["stdout"],
                     stderr=run["stderr"], error=run["error"])
        if run["error"] is not None:
            facts["failure_kind"] = "compiler-exec"
            return facts
        if run["rc"] != 0:
            kind, detail = classify_build_stderr(run["stderr"])
            m = re.search(r"[^\n]{0,200}No space left on device", run["stderr"] or "")
            if kind == "other" and m:  # ld's output too lies in the temporary directory here (tmp25)
                kind, detail = "temp-dir", m.group(0)
            facts["failure_kind"], facts["missing"] = kind, detail
            return facts
        # load it the way Triton loads cuda_utils (build.py _load_module_from_path)
        import importlib.util
        try:
            spec = importlib.util.spec_from_file_location(EXT_NAME, so)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            facts["answer"] = mod.answer()
        except Exception as exc:  # ImportError (noexec tmp, wrong ELF class), or anything the module raises
            facts["failure_kind"] = "load"
            facts["import_error"] = common.exc_facts(exc)
            return facts
        facts["ok"] = facts["answer"] == 42
        if not facts["ok"]:
            facts["failure_kind"] = "wrong-result"
        return facts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if cc_folder is not None:
            shutil.rmtree(cc_folder, ignore_errors=True)



# ---------------------------------------------------------------------------------------
# C++ standard: torch/utils/cpp_extension.py get_cxx_compiler() (CXX, else c++) against the
# C++ standard torch's headers need (chk27)

#: torch releases from which torch/csrc/api/include/torch/all.h and ATen/ATen.h stop with
#: '#error C++20 or later compatible compiler is required to use PyTorch.' when
#: __cplusplus < 202002L (2.12 and 2.13 still test 201703L; combo26 read the wheels)
CXX20_FROM = (2, 14)
CXX20_MARK = "stackpeel-cxx20-probe: __cplusplus below 202002L"
# What torch's headers test first, then what they use from C++20: a concept and <compare>'s
# std::strong_ordering (c10/util/intrusive_ptr.h). gcc 10 accepts -std=c++20 but sets
# __cplusplus to 201709L (gcc 8-10 spell it c++2a); gcc 11 and clang 10 set 202002L.
CXX20_SOURCE = (
    "#if __cplusplus < 202002L\n#error " + CXX20_MARK + "\n#endif\n"
    "#include <compare>\n#include <concepts>\n"
    "template <typename T> concept Number = std::integral<T> || std::floating_point<T>;\n"
    "template <Number T> constexpr std::strong_ordering cmp(T a, T b) { return a <=> b; }\n"
    "static_assert(cmp(1, 2) == std::strong_ordering::less);\n"
    "int main() { return 0; }\n")
# gcc 8 'unrecognized command line option', gcc 9+ 'command-line' (and a hint '-std=c++2a');
# clang < 10: "invalid value 'c++20' in '-std=c++20'"
_CXX20_FLAG = re.compile(u"unrecognized command[- ]line option ['\u2018\"]?-std=c\\+\\+20|"
                         u"invalid value ['\u2018\"]?c\\+\\+20['\u2019\"]? in ['\u2018\"]?-std=c\\+\\+20")
_CXX20_HEADER = re.compile(r"fatal error: (?:'(compare|concepts)' file not found|(compare|concepts): No such file)")


def _version_tuple(text):
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def classify_cxx20(run):
    """'ok', 'exec' (did not run), 'flag' (no -std=c++20: gcc < 10, clang < 10),
    'cplusplus' (the flag, but __cplusplus below 202002L: gcc 10, or a -std= given after it),
    'library' (a C++ standard library without <compare>/<concepts>) or 'other'."""
    if run.get("error") is not None:
        return "exec"
    if run.get("rc") == 0:
        return "ok"
    text = (run.get("stderr") or "") + (run.get("stdout") or "")
    if _CXX20_FLAG.search(text):
        return "flag"
    if CXX20_MARK in text:
        return "cplusplus"
    if _CXX20_HEADER.search(text):
        return "library"
    return "other"


def cxx_compiler(inp):
    """The C++ compiler torch.utils.cpp_extension runs (``CXX``, else ``c++``; the ninja file
    takes it as shell words) compiles C++20 with ``-std=c++20``, when the target's torch
    (read from torch/version.py, not imported) needs it. Nothing is compiled below 2.14."""
    import shlex
    env_cxx = os.environ.get("CXX")
    facts = {"cxx_env": env_cxx, "compiler": env_cxx if env_cxx is not None else "c++",
             "source": "CXX" if env_cxx is not None else "CXX unset", "torch_files": torch_cuda_from_files(),
             "attempted": False}
    version = _version_tuple((facts["torch_files"] or {}).get("version"))
    facts["needs_cxx20"] = bool(version and version >= CXX20_FROM)
    if not facts["needs_cxx20"]:
        return facts
    try:
        words = shlex.split(facts["compiler"])
    except ValueError:
        words = []
    facts["resolved"] = shutil.which(words[0]) if words else None
    if not words:
        facts.update(attempted=True, kind="exec", error="CXX is empty")
        return facts
    # within the check's 60 s: a slow cold compile ends classified, not killed by the runner
    ver = common.run(words + ["--version"], timeout=10)
    facts["compiler_version"] = _first_line(ver["stdout"]) if ver["rc"] == 0 else None
    # from stdin, syntax and semantics only: nothing written, so no temporary file to leave
    argv = words + ["-std=c++20", "-fsyntax-only", "-x", "c++", "-"]
    run = common.run(argv, timeout=40, input_text=CXX20_SOURCE)
    facts.update(attempted=True, command=argv, rc=run["rc"], stderr=run["stderr"], error=run["error"],
                 kind=classify_cxx20(run))
    return facts

# ---------------------------------------------------------------------------------------
# libcuda discovery: triton/backends/nvidia/driver.py libcuda_dirs() (3.6 :21-41, 3.9 :27-47)

_LIBCUDA_GUESSES = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu", "/usr/lib/wsl/lib",
                    "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib", "/lib64",
                    "/run/nvidia/driver/usr/lib/x86_64-linux-gnu")


def _linker_libcuda():
    """The driver's libcuda.so.1 in the default library directories of the compiler Triton
    runs (``cc -print-search-dirs``), or None (no compiler, or none of them holds it)."""
    cc = triton_compiler().get("resolved")
    if not cc:
        return None
    run = common.run([cc, "-print-search-dirs"], timeout=10, clip_output=False)
    if run["rc"] != 0:
        return None
    for line in run["stdout"].splitlines():
        if line.startswith("libraries:"):
            for d in line.split("=", 1)[-1].split(os.pathsep):
                d = os.path.normpath(d) if d else ""
                if d and "stubs" not in d.split(os.sep) and _exists(os.path.join(d, "libcuda.so.1")):
                    return os.path.join(d, "libcuda.so.1")
    return None


def _run_unclipped(argv, timeout):
    """Like common.run (never raises, has a timeout) but keeps all of stdout."""
    import subprocess
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
        return {"rc": proc.returncode, "stdout": proc.stdout.decode("utf-8", "replace"),
                "stderr": proc.stderr.decode("utf-8", "replace"), "error": None}
    except subprocess.TimeoutExpired:
        return {"rc": None, "stdout": "", "stderr": "", "error": "timed out after %ss" % timeout}
    except OSError as exc:
        return {"rc": None, "stdout": "", "stderr": "", "error": "%s: %s" % (type(exc).__name__, exc)}


def libcuda_discovery(inp):
    env_path = os.environ.get("TRITON_LIBCUDA_PATH")
    facts = {
        "triton_libcuda_path": env_path,
        "ldconfig": LDCONFIG,
        "ldconfig_exists": _exists(LDCONFIG),
        "ldconfig_executable": os.access(LDCONFIG, os.X_OK),
        "ld_library_path": os.environ.get("LD_LIBRARY_PATH"),
        "triton_installed": common.find_spec_origin("triton") is not None,
    }
    if env_path:
        facts["override"] = {
            "is_dir": os.path.isdir(env_path),
            "has_libcuda_so1": _exists(os.path.join(env_path, "libcuda.so.1")),
            "has_libcuda_so": _exists(os.path.join(env_path, "libcuda.so")),
            "is_stubs": os.path.basename(os.path.normpath(env_path)) == "stubs",
        }
        if not facts["override"]["has_libcuda_so1"]:
            # Triton links with -L$TRITON_LIBCUDA_PATH -l:libcuda.so.1: the compiler's own library
            # directories are searched after it, so the link still works when the driver's
            # libcuda.so.1 lies in one of them (/usr/lib/x86_64-linux-gnu on Debian and Ubuntu)
            facts["linker_libcuda"] = _linker_libcuda()
    # what the linker cache lists (always read, even when the override applies); the whole
    # listing is needed (hundreds of lines), so not common.run, which clips long output
    run = _run_unclipped([LDCONFIG, "-p"], timeout=20)
    facts["ldconfig_run"] = {"rc": run["rc"], "error": run["error"], "stderr": common.clip(run["stderr"]),
                             "lines": len(run["stdout"].splitlines())}
    entries = []
    if run["rc"] == 0:
        for line in run["stdout"].splitlines():
            if "libcuda.so.1" in line:
                loc = line.split()[-1]
                entries.append({"line": line.strip(), "path": loc, "exists": _exists(loc)})
    facts["ldconfig_entries"] = entries
    # LD_LIBRARY_PATH is consulted only when ldconfig lists nothing
    ld_dirs = [d for d in (facts["ld_library_path"] or "").split(":") if d]
    facts["ld_library_path_hits"] = [d for d in ld_dirs if _exists(os.path.join(d, "libcuda.so.1"))]

    # Triton's verdict, with the exact message it would raise
    if env_path:
        dirs, source = [env_path], "TRITON_LIBCUDA_PATH"
        ok = True  # trusted unchecked; the link fails later if libcuda.so.1 is not there
        error = None
    elif run["error"] is not None:
        dirs, source, ok = [], "ldconfig", False
        if run["error"].startswith("FileNotFoundError"):
            error = "FileNotFoundError: [Errno 2] No such file or directory: '%s'" % LDCONFIG
        else:
            error = run["error"]
    elif run["rc"] != 0:
        dirs, source, ok = [], "ldconfig", False
        error = "subprocess.CalledProcessError: Command '['%s', '-p']' returned non-zero exit status %s." % (
            LDCONFIG, run["rc"])
    else:
        locs = [e["path"] for e in entries]
        dirs = [os.path.dirname(loc) for loc in locs]
        source = "ldconfig"
        if not dirs and ld_dirs:
            dirs = facts["ld_library_path_hits"]
            source = "LD_LIBRARY_PATH"
        ok = any(_exists(os.path.join(d, "libcuda.so.1")) for d in dirs)
        if ok:
            error = None
        elif locs:
            error = ("AssertionError: libcuda.so cannot found!\nPossible files are located at %s."
                     "Please create a symlink of libcuda.so to any of the files." % str(locs))
        else:
            error = ('AssertionError: libcuda.so cannot found!\nPlease make sure GPU is set up and then run '
                     '"/sbin/ldconfig" (requires sudo) to refresh the linker cache.')
    facts.update(triton_dirs=dirs, triton_source=source, triton_ok=ok, triton_error=error)

    # where libcuda.so.1 really is, to name it in the fix (no dlopen here: cuda.driver_api does that)
    seen, elsewhere = set(dirs), []
    driver = (inp.get("deps") or {}).get("cuda.driver_api") or {}
    candidates = []
    if driver.get("libcuda_path"):
        candidates.append(os.path.dirname(driver["libcuda_path"]))
    candidates += ld_dirs + list(_LIBCUDA_GUESSES)
    for d in candidates:
        if d and d not in seen:
            seen.add(d)
            if _exists(os.path.join(d, "libcuda.so.1")):
                elsewhere.append(d)
    facts["libcuda_found_in"] = elsewhere
    return facts


# ---------------------------------------------------------------------------------------
# ptxas: triton/knobs.py env_nvidia_tool + NvidiaTool.from_path, backends/nvidia/compiler.py
# get_ptxas / sm_arch_from_capability / ptx_get_version

_RELEASE = re.compile(r".*release (\d+\.\d+).*", re.MULTILINE)


def triton_version(pkg_dir):
    """Triton's version from its __init__.py text (no import), else from metadata."""
    try:
        with open(os.path.join(pkg_dir, "__init__.py")) as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.MULTILINE)
        if m:
            return m.group(1)
    except (OSError, IOError):
        pass
    for dist in ("triton", "pytorch-triton", "triton-nightly"):
        v = common.dist_version(dist)
        if v:
            return v
    return None


def _vtuple(version):
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def ptxas_rule(version):
    """(arch from which ptxas-blackwell is used or None, its env var) for a Triton version.

    3.3: blackwell from arch 100, env var spelt TRITON_PTXAS-BLACKWELL_PATH; 3.4/3.5 and
    <= 3.2: one ptxas; 3.6-3.8: from arch 100; 3.9 and later: from arch 90 (Hopper too).
    """
    v = _vtuple(version)
    if v is None or v >= (3, 9):
        return 90, "TRITON_PTXAS_BLACKWELL_PATH"
    if v >= (3, 6):
        return 100, "TRITON_PTXAS_BLACKWELL_PATH"
    if v == (3, 3):
        return 100, "TRITON_PTXAS-BLACKWELL_PATH"
    return None, None


def ptx_isa_version(release):
    """The PTX ISA Triton emits for a ptxas release (compiler.py ptx_get_version)."""
    major, minor = (int(x) for x in release.split("."))
    if major >= 13:
        return 90 + (major - 13) * 10 + minor
    if major == 12:
        return 80 + minor if minor < 6 else 80 + minor - 1
    if major == 11:
        return 70 + minor
    return 63 + minor


def sm_name(arch):
    return "sm_%d%s" % (arch, "a" if arch >= 90 else "")


def tool_version(path):
    """Run ``path --version`` like NvidiaTool.from_path: (outcome, release, run facts).

    outcome: "ok"; "skip" (Triton moves to the next candidate: missing file, non-zero
    exit, no "release X.Y"); "raise" (an error Triton does not catch, e.g. PermissionError).
    """
    run = common.run([path, "--version"], timeout=30)
    out = (run["stdout"] or "") + (run["stderr"] or "")
    if run["error"] is not None:
        if run["error"].startswith("FileNotFoundError"):
            return "skip", None, run
        return "raise", None, run
    if run["rc"] != 0:
        return "skip", None, run
    m = _RELEASE.search(out)
    if not m:
        return "skip", None, run
    return "ok", m.group(1), run


def _file_facts(path):
    try:
        st = os.stat(path)
    except OSError as exc:
        return {"path": path, "exists": False, "stat_error": "%s: %s" % (type(exc).__name__, exc)}
    return {"path": path, "exists": True, "is_file": stat.S_ISREG(st.st_mode), "mode": oct(st.st_mode & 0o7777),
            "executable": os.access(path, os.X_OK)}


def resolve_tool(binary, default_path, env_names):
    """Which binary Triton ends up running for tool ``binary`` (env_nvidia_tool.transform)."""
    override, override_var = None, None
    for name in env_names:
        if name in os.environ:
            override, override_var = os.environ[name], name
            break
    paths = ([override] if override is not None else []) + [default_path]
    tried = []
    for p in paths:
        outcome, release, run = tool_version(p)
        entry = _file_facts(p) if p else {"path": p, "exists": False}
        entry.update(outcome=outcome, release=release, rc=run["rc"], error=run["error"],
                     stderr=common.clip(run["stderr"], 2000), version_line=_first_line(run["stdout"]))
        tried.append(entry)
        if outcome == "ok":
            return {"binary": binary, "env_var": override_var, "override": override, "path": p, "release": release,
                    "fell_back": override is not None and p != override, "tried": tried, "error": None}
        if outcome == "raise":
            err = run["error"]
            if err.startswith("PermissionError"):
                err = "PermissionError: [Errno 13] Permission denied: '%s'" % p
            return {"binary": binary, "env_var": override_var, "override": override, "path": p, "release": None,
                    "fell_back": False, "tried": tried, "error": err}
    return {"binary": binary, "env_var": override_var, "override": override, "path": None, "release": None,
            "fell_back": False, "tried": tried, "error": "RuntimeError: Cannot find %s" % binary}


_PTX = """//
// stackpeel probe: the smallest kernel Triton could emit, stores 42
//
.version {isa_major}.{isa_minor}
.target {target}
.address_size 64

.visible .entry stackpeel_probe(.param .u64 out)
{{
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, 42;
\tst.global.u32 [%rd2], %r1;
\tret;
}}
"""


def assemble(ptxas, release, arch, workdir):
    """Assemble a tiny PTX for ``arch`` with ``ptxas`` as Triton would (``--gpu-name=sm_XXa``)."""
    isa = ptx_isa_version(release)
    target = sm_name(arch)
    tag = "%s-%d" % (target, len(os.listdir(workdir)))
    src = os.path.join(workdir, "probe-%s.ptx" % tag)
    out = os.path.join(workdir, "probe-%s.cubin" % tag)
    with open(src, "w") as f:
        f.write(_PTX.format(isa_major=isa // 10, isa_minor=isa % 10, target=target))
    argv = [ptxas, "-v", "--gpu-name=%s" % target, src, "-o", out]
    run = common.run(argv, timeout=60)
    return {"ptxas": ptxas, "release": release, "gpu_name": target, "ptx_version": "%d.%d" % (isa // 10, isa % 10),
            "command": argv, "rc": run["rc"], "error": run["error"], "stderr": run["stderr"],
            "accepted": run["rc"] == 0 and run["error"] is None and _exists(out)}


def _ptxas_alternatives(pkg_bin, exclude):
    cands = [os.path.join(pkg_bin, "ptxas"), os.path.join(pkg_bin, "ptxas-blackwell")]
    for var in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_PTXAS-BLACKWELL_PATH"):
        if os.environ.get(var):
            cands.append(os.environ[var])
    cands.append(shutil.which("ptxas"))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "bin", "ptxas"))
    cands.append("/usr/local/cuda/bin/ptxas")
    cands += sorted(glob.glob("/usr/local/cuda-*/bin/ptxas"), reverse=True)[:4]
    out, seen = [], set(exclude)
    for c in cands:
        if not c or not _exists(c):
            continue
        real = os.path.realpath(c)
        if real in seen:
            continue
        seen.add(real)
        out.append(c)
    return out


def ptxas(inp):
    pkg = common.find_spec_origin("triton")
    facts = {"triton_installed": pkg is not None}
    if pkg is None:
        return facts
    if os.path.isfile(pkg):  # a module, not a package: not a real triton
        pkg = os.path.dirname(pkg)
    version = triton_version(pkg)
    threshold, bw_env = ptxas_rule(version)
    pkg_bin = os.path.join(pkg, "backends", "nvidia", "bin")
    facts.update(triton_path=pkg, triton_version=version, bin_dir=pkg_bin, blackwell_from_arch=threshold,
                 blackwell_env=bw_env, nvidia_backend=os.path.isdir(os.path.dirname(pkg_bin)))
    if not facts["nvidia_backend"]:  # a ROCm or CPU-only build of Triton: no ptxas to look for
        return facts

    driver = (inp.get("deps") or {}).get("cuda.driver_api") or {}
    facts["driver_version"] = driver.get("driver_version")
    ccs = []
    for dev in driver.get("devices") or []:
        try:
            cc = (int(dev["cc_major"]), int(dev["cc_minor"]))
        except (KeyError, TypeError, ValueError):
            parsed = _vtuple(str(dev.get("cc")))
            if parsed is None:
                continue
            cc = parsed
        if cc not in ccs:
            ccs.append(cc)
    facts["ccs"] = ["%d.%d" % cc for cc in ccs]

    # resolve each tool this Triton has, as Triton would
    tools = {"ptxas": resolve_tool("ptxas", os.path.join(pkg_bin, "ptxas"), ["TRITON_PTXAS_PATH"])}
    if threshold is not None:
        tools["ptxas-blackwell"] = resolve_tool("ptxas-blackwell", os.path.join(pkg_bin, "ptxas-blackwell"), [bw_env])
    facts["tools"] = tools
    all_vars = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_PTXAS-BLACKWELL_PATH")
    applicable = {"TRITON_PTXAS_PATH", bw_env}
    ignored = [v for v in all_vars if v in os.environ and v not in applicable]
    facts["env_ignored_by_this_version"] = ignored

    workdir = tempfile.mkdtemp(prefix="stackpeel-ptx-")
    try:
        per_arch = []
        targets = [(cc[0] * 10 + cc[1], "%d.%d" % cc, True) for cc in ccs]
        if not targets:  # no GPU known: still prove each tool assembles for a mainstream arch
            targets = [(80, None, False)]
            if threshold is not None:
                targets.append((threshold, None, False))
        for arch, cc, real in targets:
            name = "ptxas-blackwell" if threshold is not None and arch >= threshold else "ptxas"
            tool = tools[name]
            env_var = bw_env if name != "ptxas" else "TRITON_PTXAS_PATH"
            entry = {"arch": arch, "cc": cc, "from_device": real, "tool": name, "env_var": env_var,
                     "ptxas": tool["path"], "release": tool["release"], "error": tool["error"],
                     "ignored_env": [v for v in all_vars if v in os.environ and v != env_var]}
            if tool["path"] and tool["release"]:
                entry["assemble"] = assemble(tool["path"], tool["release"], arch, workdir)
                newer = False
                dv = facts["driver_version"]
                if isinstance(dv, int) and dv > 0:
                    newer = int(tool["release"].split(".")[0]) > dv // 1000
                entry["newer_than_driver"] = newer
                if real and (not entry["assemble"]["accepted"] or newer):
                    alts = []
                    for alt in _ptxas_alternatives(pkg_bin, [os.path.realpath(tool["path"])]):
                        outcome, release, _ = tool_version(alt)
                        if outcome != "ok":
                            continue
                        a = assemble(alt, release, arch, workdir)
                        a["newer_than_driver"] = (isinstance(dv, int) and dv > 0
                                                  and int(release.split(".")[0]) > dv // 1000)
                        alts.append(a)
                    entry["alternatives"] = alts
            per_arch.append(entry)
        facts["archs"] = per_arch
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return facts


# ---------------------------------------------------------------------------------------
# Triton's cache: knobs.cache (TRITON_CACHE_DIR / TRITON_HOME), runtime/cache.py
# FileCacheManager, runtime/build.py platform_key()


def triton_cache_dir(environ=None):
    """(dir, source) as triton.knobs resolves it. TRITON_HOME's default is
    os.path.expanduser("~/") at import: '~/' itself when HOME is unset and the uid has no
    passwd entry, so the cache becomes relative to the working directory."""
    env = os.environ if environ is None else environ
    if "TRITON_CACHE_DIR" in env:
        return env["TRITON_CACHE_DIR"], "TRITON_CACHE_DIR"
    if "TRITON_HOME" in env:
        home, source = env["TRITON_HOME"], "TRITON_HOME"
    else:
        home = os.path.expanduser("~/")
        source = "HOME" if "HOME" in env else ("passwd" if home != "~/" else "unresolved ~")
    return os.path.join(home, ".triton", "cache"), source


def _unescape_mount(field):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_of(path):
    """The /proc/self/mountinfo entry holding ``path`` (longest mount-point prefix)."""
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except (OSError, IOError):
        return None
    real = os.path.realpath(path)
    best = None
    for line in lines:
        parts = line.split()
        if len(parts) < 10 or "-" not in parts:
            continue
        sep = parts.index("-")
        mp = _unescape_mount(parts[4])
        if real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best["mount_point"]):
                opts = parts[5].split(",")
                sopts = parts[sep + 3].split(",") if len(parts) > sep + 3 else []
                best = {"mount_point": mp, "options": opts, "fstype": parts[sep + 1],
                        "source": _unescape_mount(parts[sep + 2]) if len(parts) > sep + 2 else None,
                        "super_options": sopts, "ro": "ro" in opts or "ro" in sopts, "noexec": "noexec" in opts}
    return best


def _exec_map_test(directory):
    """Write a file in ``directory`` and map it executable, as dlopen of a cached .so does.
    Returns (writable, write_error, exec_ok, exec_error); leaves nothing behind."""
    import mmap
    try:
        tmpdir = tempfile.mkdtemp(prefix=".stackpeel-probe-", dir=directory)
    except OSError as exc:
        return False, "%s: %s" % (type(exc).__name__, exc), None, None
    try:
        path = os.path.join(tmpdir, "probe.so")
        try:
            with open(path, "wb") as f:
                f.write(b"\0" * mmap.PAGESIZE)
        except OSError as exc:
            return False, "%s: %s" % (type(exc).__name__, exc), None, None
        try:
            with open(path, "rb") as f:
                m = mmap.mmap(f.fileno(), mmap.PAGESIZE, flags=mmap.MAP_PRIVATE,
                              prot=mmap.PROT_READ | getattr(mmap, "PROT_EXEC", 4))
                m.close()
            return True, None, True, None
        except (OSError, ValueError) as exc:
            return True, None, False, "%s: %s" % (type(exc).__name__, exc)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def triton_platform_key():
    """build.py platform_key(): machine, system, *platform.architecture() (runs `file`)."""
    return ",".join([platform.machine(), platform.system()] + list(platform.architecture()))


def triton_cache(inp):
    cache_dir, source = triton_cache_dir()
    facts = {"cache_dir": cache_dir, "source": source, "home_env": os.environ.get("HOME"),
             "empty": cache_dir == "", "relative": bool(cache_dir) and not os.path.isabs(cache_dir),
             "cache_manager": os.environ.get("TRITON_CACHE_MANAGER"),
             "remote_cache": os.environ.get("TRITON_REMOTE_CACHE_BACKEND"),
             "triton_installed": common.find_spec_origin("triton") is not None}
    file_prog = shutil.which("file")
    facts["file_program"] = file_prog
    facts["platform_key"] = triton_platform_key()
    facts["platform_key_with_file"] = ",".join([platform.machine(), platform.system(), platform.architecture()[0],
                                                "ELF"])
    if not cache_dir:
        facts.update(writable=False, write_error="RuntimeError: Could not create or locate cache dir")
        return facts
    path = os.path.abspath(cache_dir)
    facts["abs_path"] = path
    facts["exists"] = os.path.isdir(path)
    probe_dir = path
    while not os.path.isdir(probe_dir):
        parent = os.path.dirname(probe_dir)
        if parent == probe_dir:
            break
        probe_dir = parent
    facts["tested_dir"] = probe_dir
    facts["not_a_directory"] = _exists(path) and not os.path.isdir(path)
    if facts["not_a_directory"]:
        facts.update(writable=False, write_error="FileExistsError: %s exists and is not a directory" % path)
    else:
        writable, werr, exec_ok, xerr = _exec_map_test(probe_dir)
        facts.update(writable=writable, write_error=werr, exec_ok=exec_ok, exec_error=xerr)
    facts["mount"] = mount_of(probe_dir)
    try:
        st = os.statvfs(probe_dir)
        facts["free_bytes"] = st.f_bavail * st.f_frsize
        facts["free_inodes"] = st.f_favail if st.f_files else None
    except OSError as exc:
        facts["statvfs_error"] = "%s: %s" % (type(exc).__name__, exc)
    if facts["exists"]:
        helpers, entries = [], 0
        try:
            for name in sorted(os.listdir(path))[:5000]:
                entries += 1
                sub = os.path.join(path, name)
                if os.path.isdir(sub):
                    for f in os.listdir(sub):
                        if (f.startswith("cuda_utils") or f.startswith("__triton_launcher")) and len(helpers) < 20:
                            helpers.append(os.path.join(name, f))
        except OSError as exc:
            facts["list_error"] = "%s: %s" % (type(exc).__name__, exc)
        facts["entries"] = entries
        facts["cached_helpers"] = helpers
    return facts


# ---------------------------------------------------------------------------------------
# Temporary directory (tmp24): Triton 3.6-3.9 builds cuda_utils and its launchers in
# tempfile.TemporaryDirectory() (runtime/build.py _compile_so_from_src / compile_module_from_src)
# and copies the .so into its cache before loading it; gcc writes its .s/.o in its own choice of
# temporary directory (libiberty make-temp-file.c choose_tmpdir).

#: CPython tempfile._candidate_tempdir_list(): these variables in this order, then the fixed dirs
PY_TMP_VARS = ("TMPDIR", "TEMP", "TMP")
GCC_TMP_VARS, TMP_FIXED = common.GCC_TMP_VARS, common.TMP_FIXED


def _write_test(directory):
    """Create and remove a file in ``directory`` as tempfile._get_default_tempdir() does
    (O_CREAT|O_EXCL, a few bytes written). Returns None or 'Type: message'."""
    for _ in range(100):  # a random name, tried again when it exists (as tempfile does)
        name = os.path.join(directory, ".stackpeel-tmp-%d-%s" % (os.getpid(), os.urandom(4).hex()))
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, b"blat")
            finally:
                os.close(fd)
                os.unlink(name)
            return None
        except FileExistsError:
            continue
        except OSError as exc:
            return "%s: %s" % (type(exc).__name__, exc)
    return "FileExistsError: 100 random names all exist in %s" % directory


_in_cwd = common._in_cwd


def _dir_facts(path):
    out = {"path": path, "is_dir": os.path.isdir(path)}
    out["access_ok"] = out["is_dir"] and os.access(path, os.R_OK | os.W_OK | os.X_OK)
    out["write_error"] = _write_test(path) if out["is_dir"] else "not a directory"
    try:
        st = os.statvfs(path)
        out["free_bytes"] = st.f_bavail * st.f_frsize
    except OSError:
        out["free_bytes"] = None
    mount = mount_of(path) if out["is_dir"] else None
    out["mount"] = {k: mount[k] for k in ("mount_point", "fstype", "options", "ro", "noexec")} if mount else None
    return out


def target_tmp_env():
    """(environment, working directory) of the target as the user runs it. Under stackpeel's
    runner the probe's own TMPDIR and cwd are stackpeel's scratch; the runner passes the
    target's in STACKPEEL_TARGET_TMPDIR (absent: unset) and STACKPEEL_TARGET_CWD."""
    env = dict(os.environ)
    if "STACKPEEL_TARGET_CWD" not in env:
        try:
            return env, os.getcwd()
        except OSError:
            return env, None
    env.pop("TMPDIR", None)
    if "STACKPEEL_TARGET_TMPDIR" in env:
        env["TMPDIR"] = env["STACKPEEL_TARGET_TMPDIR"]
    return env, env["STACKPEEL_TARGET_CWD"]


def python_tmpdir(environ, cwd):
    """(directory, error) as tempfile.gettempdir() finds it in that environment and working
    directory: CPython's _candidate_tempdir_list() and _get_default_tempdir() (3.8-3.13), the
    first candidate in which a file can really be created. error is the FileNotFoundError
    text tempfile raises when there is none."""
    dirlist = [environ[v] for v in PY_TMP_VARS if environ.get(v)] + list(TMP_FIXED)
    dirlist.append(cwd if cwd is not None else os.curdir)
    for d in dirlist:
        if d != os.curdir and not os.path.isabs(d) and cwd:
            d = os.path.join(cwd, d)
        d = os.path.normpath(d) if d != os.curdir else d
        if os.path.isdir(d) and _write_test(d) is None:
            return d, None
    return None, "FileNotFoundError: [Errno 2] No usable temporary directory found in %s" % dirlist


gcc_tmpdir = common.gcc_tmpdir


def temp_dir(inp):
    environ, cwd = target_tmp_env()
    env = {v: environ.get(v) for v in PY_TMP_VARS}
    facts = {"env": env, "cwd": cwd, "skipped": []}
    facts["python_tmpdir"], facts["python_error"] = python_tmpdir(environ, cwd)
    for var in PY_TMP_VARS:
        value = env[var]
        if not value:
            continue
        d = _dir_facts(_in_cwd(value, cwd))
        if d["write_error"]:
            facts["skipped"].append(dict(d, var=var))
    python_dir = facts["python_tmpdir"]
    facts["python"] = _dir_facts(python_dir) if python_dir else None
    compiler_dir = gcc_tmpdir(environ, cwd)
    facts["compiler_tmpdir"] = os.path.abspath(compiler_dir)
    facts["compiler"] = _dir_facts(compiler_dir)
    return facts


# ---------------------------------------------------------------------------------------
# nvcc: torch/utils/cpp_extension.py _find_cuda_home() and _check_cuda_version()


def torch_cuda_from_files():
    """torch's version and CUDA version read from torch/version.py, without importing torch."""
    origin = common.find_spec_origin("torch")
    if origin is None:
        return {"installed": False}
    pkg = origin if os.path.isdir(origin) else os.path.dirname(origin)
    out = {"installed": True, "path": pkg}
    try:
        with open(os.path.join(pkg, "version.py")) as f:
            text = f.read()
    except (OSError, IOError):
        return out
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    out["version"] = m.group(1) if m else None
    m = re.search(r"^cuda\s*(?::[^=]*)?=\s*(None|['\"]([^'\"]*)['\"])", text, re.MULTILINE)
    out["cuda"] = m.group(2) if m and m.group(2) else None
    return out


def find_cuda_home(environ=None):
    """(cuda_home or None, how it was found) exactly like torch's _find_cuda_home."""
    env = os.environ if environ is None else environ
    cuda_home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    if cuda_home is not None:
        return (cuda_home or None), ("CUDA_HOME" if env.get("CUDA_HOME") else "CUDA_PATH")
    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if nvcc is not None:
        return os.path.dirname(os.path.dirname(nvcc)), "PATH nvcc"
    if os.path.exists("/usr/local/cuda"):
        return "/usr/local/cuda", "/usr/local/cuda"
    return None, None


def nvcc(inp):
    cuda_home, source = find_cuda_home()
    facts = {"cuda_home": cuda_home, "source": source, "cuda_home_env": os.environ.get("CUDA_HOME"),
             "cuda_path_env": os.environ.get("CUDA_PATH"), "torch_files": torch_cuda_from_files()}
    purelib = sysconfig.get_paths().get("purelib") or ""
    facts["pip_nvcc"] = sorted(glob.glob(os.path.join(purelib, "nvidia", "*", "bin", "nvcc")))[:4]
    if not cuda_home:
        facts["nvcc"] = None
        return facts
    path = os.path.join(cuda_home, "bin", "nvcc")
    facts["nvcc"] = path
    facts["nvcc_exists"] = _exists(path)
    if facts["nvcc_exists"]:
        run = common.run([path, "--version"], timeout=30)
        m = re.search(r"release (\d+[.]\d+)", (run["stdout"] or "") + (run["stderr"] or ""))
        facts.update(nvcc_rc=run["rc"], nvcc_error=run["error"], nvcc_stderr=run["stderr"],
                     nvcc_version=m.group(1) if m and run["rc"] == 0 else None)
    return facts
