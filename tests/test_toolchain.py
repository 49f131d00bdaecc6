"""Toolchain layer: evaluate() on recorded facts (tables), then the real probes against the
stack venv with real injected faults: PATH without compilers, a bogus CC, Python.h and libc
headers hidden by a private bind mount, ptxas asked for an arch it does not know, read-only
and noexec cache dirs, PATH without `file`, a stale linker cache.

Where Triton has a function for the same lookup, the test also asks Triton itself (in the
stack venv, in a child process) and requires the same answer: the probes re-implement
Triton's lookups and must not drift from them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.checks.base import Context
from stackpeel.checks.toolchain import (CCompiler, ExtensionBuild, LibcudaDiscovery, Nvcc, PythonHeaders, Ptxas,
                                        TritonCache)
from stackpeel.host import detect
from stackpeel.model import CheckResult, Severity, Status
from stackpeel.runner import run_one, run_probe
from shapes import answer


APT_ROOT = {"pkg_manager": "apt", "is_root": True, "conda_prefix": None}
DNF_USER = {"pkg_manager": "dnf", "is_root": False, "conda_prefix": None}
PROBES = ("c_compiler", "python_headers", "extension_build", "libcuda_discovery", "ptxas", "triton_cache", "nvcc",
          "temp_dir")
H200 = {"libcuda_loaded": True, "libcuda_path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver_version": 13000,
        "device_count": 1, "devices": [{"index": 0, "name": "NVIDIA H200", "cc": "9.0", "cc_major": 9, "cc_minor": 0}],
        "init_error": None}


# --------------------------------------------------------------------------------------------
# helpers


def evaluate(cls, facts, deps=None, host=APT_ROOT, dep_status=None):
    ctx = Context(host, {"python": "/opt/venv/bin/python"}, deps or {}, dep_status)
    return cls().evaluate(answer(cls, facts), ctx)


def codes(v):
    return [f.code for f in v.findings]


def commands(v):
    return [c.command for f in v.findings for c in (f.remedy.commands if f.remedy else ())]


def recorded(check_id, facts, status=Status.PASS):
    return CheckResult(id=check_id, title=check_id, layer=check_id.split(".")[0], status=status,
                       summary="recorded", facts=facts)


def run_check(cls, python, env, deps=None):
    """The real probe of ``cls`` in ``python``; requirements given as recorded facts."""
    done = {cid: recorded(cid, facts) for cid, facts in (deps or {}).items()}
    return run_one(cls, python, detect(python), {"python": python}, done, env=env)


def ask_triton(python, code, env):
    """Run ``code`` in the stack venv (Triton importable); returns the CompletedProcess."""
    return subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def stackpeel_cli(*args, env=None, wrap=None, timeout=300):
    """``python -m stackpeel check --format json ...``, optionally inside ``sh -c`` (unshare)."""
    cmd = [sys.executable, "-m", "stackpeel", "check", "--format", "json", *args]
    if wrap:
        cmd = ["unshare", "-m", "sh", "-c", wrap + " && exec \"$@\"", "sh", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def result(report, check_id):
    return next(r for r in report["results"] if r["id"] == check_id)


def roots(report):
    return {r["check"]: r for r in report["diagnosis"]["blocking"] + report["diagnosis"]["degraded"]}


@pytest.fixture(scope="module")
def can_unshare():
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"private mount namespaces not permitted here: {p.stderr.strip()}")
    return True


@pytest.fixture
def cli_env(clean_env):
    """stackpeel's own environment for CLI runs (clean_env drops PYTHONPATH, which a dev
    checkout may need for stackpeel itself)."""
    env = dict(clean_env)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@pytest.fixture(scope="module")
def bundled_bin(stack_python):
    p = subprocess.run([stack_python, "-c", "import importlib.util, os; "
                        "print(os.path.dirname(importlib.util.find_spec('triton').origin))"],
                       capture_output=True, text=True, timeout=60)
    d = Path(p.stdout.strip()) / "backends" / "nvidia" / "bin"
    if not (d / "ptxas").exists():
        pytest.skip("the stack venv's triton has no bundled ptxas")
    return d


# --------------------------------------------------------------------------------------------
# evaluate() on recorded facts


GCC = {"compiler": "/usr/bin/gcc", "source": "PATH gcc", "resolved": "/usr/bin/gcc", "works": True,
       "version": "gcc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", "path_env": "/usr/bin:/bin"}


@pytest.mark.parametrize("facts, status, code, needles", [
    (GCC, Status.PASS, None, ["13.3.0", "PATH gcc"]),
    ({"compiler": None, "source": None, "path_env": "/opt/bin:/usr/bin", "plain_cc": "/usr/bin/cc",
      "plain_cc_version": "tcc version 0.9.27", "works": False},
     Status.FAIL, "no-c-compiler", ["/opt/bin:/usr/bin", "never looks for plain `cc`", "Failed to find C compiler"]),
    ({"compiler": "/nonexistent/gcc", "source": "CC", "resolved": None, "works": False,
      "version_run": {"argv": ["/nonexistent/gcc", "--version"], "rc": None, "stderr": "",
                      "error": "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/gcc'"}},
     Status.FAIL, "c-compiler-broken", ["CC=/nonexistent/gcc", "does not exist"]),
    ({"compiler": "ccache gcc", "source": "CC", "resolved": None, "works": False, "version_run": {}},
     Status.FAIL, "c-compiler-broken", ["several words", "one program name"]),
    ({"compiler": "", "source": "CC", "resolved": None, "works": False, "version_run": {}},
     Status.FAIL, "c-compiler-broken", ["CC is set but empty"]),
    ({"compiler": "/usr/bin/gcc", "source": "PATH gcc", "resolved": "/usr/bin/gcc", "works": False,
      "executable": True, "version_run": {"argv": ["/usr/bin/gcc", "--version"], "rc": 1, "stderr": "boom",
                                          "error": None}},
     Status.FAIL, "c-compiler-broken", ["gcc on PATH", "exit status 1"]),
])
def test_c_compiler_table(facts, status, code, needles):
    v = evaluate(CCompiler, facts)
    assert v.status is status
    assert codes(v) == ([code] if code else [])
    text = v.summary + " ".join(f.message for f in v.findings)
    for n in needles:
        assert n in text
    assert v.facts["compiler"] == facts["compiler"] and v.facts["source"] == facts["source"]


def test_c_compiler_remedies():
    v = evaluate(CCompiler, {"compiler": None, "source": None, "path_env": "/x", "plain_cc": "/usr/bin/cc"})
    assert "apt-get install -y gcc libc6-dev" in " ".join(commands(v))
    assert "export CC=/usr/bin/cc" in commands(v)
    v = evaluate(CCompiler, {"compiler": None, "source": None, "path_env": "/x"}, host=DNF_USER)
    assert commands(v) == ["sudo dnf install -y gcc glibc-devel"]
    # a bad CC: unset it, installing gcc is not the fix
    v = evaluate(CCompiler, {"compiler": "/opt/x/gcc", "source": "CC", "resolved": None, "works": False})
    assert commands(v) == ["unset CC  # was /opt/x/gcc"]
    # the gcc on PATH fails: reinstall it
    v = evaluate(CCompiler, {**GCC, "works": False, "executable": True, "version_run": {"rc": 1}})
    assert commands(v) == ["apt-get update && apt-get install -y gcc"]


HEADERS_SYSTEM = {"python_version": "3.12.3", "py_mm": "3.12", "scheme": "posix_prefix",
                  "include_dir": "/usr/include/python3.12", "include_dir_exists": False,
                  "python_h": "/usr/include/python3.12/Python.h", "python_h_exists": False, "python_h_readable": False,
                  "kind": "system", "is_distro_python3": True, "base_prefix": "/usr"}


@pytest.mark.parametrize("facts, host, expect", [
    (HEADERS_SYSTEM, APT_ROOT, "apt-get update && apt-get install -y python3.12-dev python3-dev"),
    ({**HEADERS_SYSTEM, "is_distro_python3": False}, APT_ROOT, "apt-get install -y python3.12-dev"),
    (HEADERS_SYSTEM, DNF_USER, "sudo dnf install -y python3-devel"),
    ({**HEADERS_SYSTEM, "is_distro_python3": False}, DNF_USER, "sudo dnf install -y python3.12-devel"),
    ({**HEADERS_SYSTEM, "kind": "pyenv", "base_prefix": "/root/.pyenv/versions/3.12.3", "python_version": "3.12.3"},
     APT_ROOT, "pyenv install --force 3.12.3"),
    ({**HEADERS_SYSTEM, "kind": "conda", "base_prefix": "/opt/conda"}, APT_ROOT,
     "conda install -y -p /opt/conda --force-reinstall python=3.12.3"),
    ({**HEADERS_SYSTEM, "kind": "standalone", "base_prefix": "/root/.local/share/uv/python/cpython-3.12.3-linux"},
     APT_ROOT, "uv python install --reinstall 3.12.3"),
])
def test_python_headers_remedy_names_the_right_package(facts, host, expect):
    v = evaluate(PythonHeaders, facts, host=host)
    assert v.status is Status.FAIL and codes(v) == ["python-headers-missing"]
    assert any(expect in c for c in commands(v)), commands(v)
    assert "/usr/include/python3.12/Python.h" in v.findings[0].message
    if facts["kind"] != "system":  # a distro package cannot repair a self-contained Python
        assert not any("apt-get" in c or "dnf" in c for c in commands(v))
        assert "reinstall" in v.findings[0].message


def test_python_headers_present():
    v = evaluate(PythonHeaders, {**HEADERS_SYSTEM, "include_dir_exists": True, "python_h_exists": True,
                                 "python_h_readable": True})
    assert v.status is Status.PASS and "/usr/include/python3.12" in v.summary


EXT = {"compiler": "/usr/bin/gcc", "include_dir": "/usr/include/python3.12", "attempted": True, "rc": 1,
       "command": ["/usr/bin/gcc", "/tmp/x/p.c", "-O3", "-shared", "-fPIC", "-Wno-psabi"], "ok": False}


@pytest.mark.parametrize("facts, status, code, needle", [
    ({"compiler": None, "failure_kind": "no-compiler", "ok": False, "attempted": False}, Status.BLOCKED, None,
     "no C compiler"),
    ({**EXT, "ok": True, "rc": 0, "failure_kind": None, "answer": 42}, Status.PASS, None, "compiled, loaded"),
    ({**EXT, "failure_kind": "python-headers", "missing": "Python.h",
      "stderr": "p.c:2:10: fatal error: Python.h: No such file or directory"}, Status.FAIL, "python-headers-missing",
     "Python.h was not found"),
    ({**EXT, "failure_kind": "libc-headers", "missing": "stdlib.h",
      "stderr": "Python.h:23:12: fatal error: stdlib.h: No such file or directory"}, Status.FAIL,
     "libc-headers-missing", "header stdlib.h"),
    ({**EXT, "failure_kind": "libc-headers", "missing": "crti.o",
      "stderr": "/usr/bin/ld: cannot find crti.o: No such file or directory"}, Status.FAIL, "libc-headers-missing",
     "start file crti.o"),
    ({**EXT, "failure_kind": "binutils", "missing": "as",
      "stderr": "gcc: fatal error: cannot execute 'as': execvp: No such file or directory"}, Status.FAIL,
     "extension-build-failed", "assembler `as`"),
    ({**EXT, "rc": 0, "failure_kind": "load", "tmpdir": "/tmp/x",
      "import_error": {"type": "ImportError", "message": "failed to map segment from shared object",
                       "traceback": "Traceback ...\nImportError: failed to map segment from shared object"}},
     Status.FAIL, "extension-build-failed", "failed to map segment"),
])
def test_extension_build_table(facts, status, code, needle):
    deps = {"toolchain.python_headers": HEADERS_SYSTEM}
    v = evaluate(ExtensionBuild, facts, deps=deps)
    assert v.status is status
    assert codes(v) == ([code] if code else [])
    assert needle in v.summary + " ".join(f.message for f in v.findings)
    if code:
        ev = v.findings[0].evidence
        assert (facts.get("stderr") or facts.get("import_error", {}).get("message")) in ev
    if code == "python-headers-missing":  # the remedy comes from the headers check's facts
        assert any("python3.12-dev" in c for c in commands(v))
    assert v.facts["ok"] is (status is Status.PASS)


@pytest.mark.parametrize("soft, named", [(12, True), (4096, False)])
def test_a_start_file_ld_cannot_open_under_a_low_limit_is_the_limit_not_libc(soft, named):
    """ld prints `cannot find crti.o: Too many open files` under a low open-files limit (EMFILE): the
    start file is there (tmp26). Under 1024 the limit is named beside a plain build failure; with a
    generous limit (negative control) the reading stays what it was."""
    facts = {**EXT, "failure_kind": "libc-headers", "missing": "crti.o",
             "stderr": "/usr/bin/ld: cannot find crti.o: Too many open files\ncollect2: error: ld returned 1 exit status"}
    deps = {"toolchain.python_headers": HEADERS_SYSTEM, "multi_gpu.open_files": {"soft": soft, "hard": 20000}}
    v = evaluate(ExtensionBuild, facts, deps=deps)
    if named:
        assert codes(v) == ["open-files-limit-low", "extension-build-failed"]
        assert v.findings[0].severity is Severity.INFO and "open-files limit of 12" in v.findings[0].message
    else:
        assert codes(v) == ["libc-headers-missing"]


LDC = {"triton_libcuda_path": None, "ldconfig": "/sbin/ldconfig", "ldconfig_exists": True,
       "ldconfig_run": {"rc": 0, "error": None, "stderr": ""}, "ld_library_path": None, "ld_library_path_hits": [],
       "libcuda_found_in": []}
_ENTRY = {"line": "libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1",
          "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}


@pytest.mark.parametrize("facts, status, code, needles", [
    # the H200 machine: the ld cache lists the driver's library
    ({**LDC, "ldconfig_entries": [{**_ENTRY, "exists": True}], "triton_dirs": ["/usr/lib/x86_64-linux-gnu"],
      "triton_source": "ldconfig", "triton_ok": True}, Status.PASS, None, ["/usr/lib/x86_64-linux-gnu"]),
    # stale cache, the library is reachable through LD_LIBRARY_PATH, which Triton then ignores
    ({**LDC, "ldconfig_entries": [{**_ENTRY, "exists": False}], "triton_dirs": ["/usr/lib/x86_64-linux-gnu"],
      "ld_library_path": "/usr/local/nvidia/lib64", "ld_library_path_hits": ["/usr/local/nvidia/lib64"],
      "libcuda_found_in": ["/usr/local/nvidia/lib64"], "triton_ok": False,
      "triton_error": "AssertionError: libcuda.so cannot found!\nPossible files are located at "
                      "['/usr/lib/x86_64-linux-gnu/libcuda.so.1'].Please create a symlink of libcuda.so to any of "
                      "the files."},
     Status.FAIL, "libcuda-not-in-ldconfig", ["stale", "only when the cache lists no libcuda.so.1",
                                             "exists in /usr/local/nvidia/lib64"]),
    # WSL: the library is in /usr/lib/wsl/lib, which the ld cache does not know
    ({**LDC, "ldconfig_entries": [], "triton_dirs": [], "triton_ok": False, "libcuda_found_in": ["/usr/lib/wsl/lib"],
      "triton_error": "AssertionError: libcuda.so cannot found!"}, Status.FAIL, "libcuda-not-in-ldconfig",
     ["lists no libcuda.so.1", "/usr/lib/wsl/lib"]),
    ({**LDC, "triton_libcuda_path": "/usr/local/cuda/lib64/stubs", "ldconfig_entries": [{**_ENTRY, "exists": True}],
      "override": {"is_dir": True, "has_libcuda_so1": False, "has_libcuda_so": True, "is_stubs": True},
      "triton_ok": True}, Status.FAIL, "triton-libcuda-path-wrong", ["link-time stub", "cannot find -l:libcuda.so.1"]),
    ({**LDC, "triton_libcuda_path": "/usr/lib/wsl/lib", "ldconfig_entries": [],
      "override": {"is_dir": True, "has_libcuda_so1": True}, "triton_ok": True}, Status.PASS, None,
     ["TRITON_LIBCUDA_PATH=/usr/lib/wsl/lib"]),
    ({**LDC, "ldconfig_exists": False, "ldconfig_entries": [], "triton_ok": False,
      "ldconfig_run": {"rc": None, "error": "FileNotFoundError: [Errno 2] No such file or directory: '/sbin/ldconfig'",
                       "stderr": ""},
      "triton_error": "FileNotFoundError: [Errno 2] No such file or directory: '/sbin/ldconfig'",
      "libcuda_found_in": ["/usr/lib/x86_64-linux-gnu"]},
     Status.FAIL, "ldconfig-missing", ["/sbin/ldconfig does not exist", "FileNotFoundError"]),
])
def test_libcuda_discovery_table(facts, status, code, needles):
    v = evaluate(LibcudaDiscovery, facts, deps={"cuda.driver_api": H200})
    assert v.status is status and codes(v) == ([code] if code else [])
    text = v.summary + " ".join(f.message for f in v.findings)
    for n in needles:
        assert n in text, text
    if code and facts.get("libcuda_found_in"):
        assert any(facts["libcuda_found_in"][0] in c for c in commands(v))


def _arch(cc, tool, release, accepted=True, newer=False, stderr="", alternatives=(), ignored=()):
    arch = int(cc.replace(".", ""))
    name = f"sm_{arch}{'a' if arch >= 90 else ''}"
    path = f"/venv/triton/backends/nvidia/bin/{tool}"
    return {"arch": arch, "cc": cc, "from_device": True, "tool": tool, "ptxas": path, "release": release,
            "env_var": "TRITON_PTXAS_BLACKWELL_PATH" if tool != "ptxas" else "TRITON_PTXAS_PATH",
            "ignored_env": list(ignored), "newer_than_driver": newer, "alternatives": list(alternatives),
            "assemble": {"command": [path, "-v", f"--gpu-name={name}", "/tmp/p.ptx", "-o", "/tmp/p.cubin"],
                         "gpu_name": name, "rc": 0 if accepted else 255, "error": None, "stderr": stderr,
                         "accepted": accepted}}


def _tools(**errors):
    out = {}
    for name in ("ptxas", "ptxas-blackwell"):
        out[name] = {"binary": name, "path": f"/venv/triton/backends/nvidia/bin/{name}", "error": errors.get(name),
                     "fell_back": False, "tried": [{"path": f"/venv/triton/backends/nvidia/bin/{name}", "exists": True,
                                                    "executable": not errors.get(name), "mode": "0o644",
                                                    "error": errors.get(name)}]}
    return out


REJECT = "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n"
ALT = {"ptxas": "/usr/local/cuda-12.9/bin/ptxas", "accepted": True, "newer_than_driver": False}


@pytest.mark.parametrize("version, archs, tools, driver, status, code, needles", [
    # the H200: triton 3.6 on Hopper uses the 12.8 ptxas, driver 13.0
    ("3.6.0", [_arch("9.0", "ptxas", "12.8")], _tools(), 13000, Status.PASS, None, ["GPU 9.0", "sm_90a"]),
    # GB10 on triton 3.4: the 12.8 ptxas does not know sm_121a; a 12.9 toolkit on the machine does
    ("3.4.0", [_arch("12.1", "ptxas", "12.8", accepted=False, stderr=REJECT, alternatives=[ALT])], _tools(), 12090,
     Status.FAIL, "ptxas-arch-unsupported", ["compute capability 12.1", "--gpu-name=sm_121a"]),
    # triton 3.9 on Hopper with a 12.8 driver: CUDA 13.4 cubins do not load
    ("3.9.0", [_arch("9.0", "ptxas-blackwell", "13.4", newer=True,
                     alternatives=[{**ALT, "ptxas": "/venv/triton/backends/nvidia/bin/ptxas"}],
                     ignored=["TRITON_PTXAS_PATH"])], _tools(), 12080,
     Status.FAIL, "ptxas-newer-than-driver", ["CUDA 12.8 only", "TRITON_PTXAS_PATH is set but Triton 3.9.0 ignores"]),
    # the wheel was unpacked without exec bits
    ("3.9.0", [{"arch": 90, "cc": "9.0", "from_device": True, "tool": "ptxas-blackwell", "ptxas": None,
                "release": None}],
     _tools(**{"ptxas-blackwell": "PermissionError: [Errno 13] Permission denied: "
                                  "'/venv/triton/backends/nvidia/bin/ptxas-blackwell'"}), 13000,
     Status.FAIL, "ptxas-unusable", ["PermissionError", "mode 0o644"]),
])
def test_ptxas_table(version, archs, tools, driver, status, code, needles):
    facts = {"triton_installed": True, "triton_version": version, "tools": tools, "archs": archs,
             "driver_version": driver}
    v = evaluate(Ptxas, facts, deps={"cuda.driver_api": {**H200, "driver_version": driver}})
    assert v.status is status and codes(v) == ([code] if code else [])
    text = v.summary + " ".join(f.message for f in v.findings)
    for n in needles:
        assert n in text, text
    if code == "ptxas-arch-unsupported":
        assert v.findings[0].evidence.endswith(REJECT.strip())
        assert "export TRITON_PTXAS_PATH=/usr/local/cuda-12.9/bin/ptxas" in commands(v)
    if code == "ptxas-newer-than-driver":
        assert "export TRITON_PTXAS_BLACKWELL_PATH=/venv/triton/backends/nvidia/bin/ptxas" in commands(v)
    if code == "ptxas-unusable":
        assert "chmod +x /venv/triton/backends/nvidia/bin/ptxas-blackwell" in commands(v)


def test_ptxas_skips_without_triton_or_its_nvidia_backend():
    assert evaluate(Ptxas, {"triton_installed": False}).status is Status.SKIP
    v = evaluate(Ptxas, {"triton_installed": True, "triton_version": "3.6.0", "nvidia_backend": False,
                         "triton_path": "/venv/triton"})
    assert v.status is Status.SKIP and "no NVIDIA backend" in v.summary


CACHE = {"cache_dir": "/home/u/.triton/cache", "abs_path": "/home/u/.triton/cache", "source": "HOME",
         "tested_dir": "/home/u/.triton/cache", "exists": True, "writable": True, "exec_ok": True,
         "free_bytes": 50 * 2**30, "free_inodes": 10**6, "file_program": "/usr/bin/file",
         "platform_key": "x86_64,Linux,64bit,ELF", "platform_key_with_file": "x86_64,Linux,64bit,ELF",
         "mount": {"mount_point": "/home", "fstype": "ext4", "options": ["rw", "relatime"]}}


@pytest.mark.parametrize("change, status, code, severity, needle", [
    ({}, Status.PASS, None, None, "50.0 GiB free"),
    ({"writable": False, "exec_ok": None, "write_error": "OSError: [Errno 30] Read-only file system: '/home/u'",
      "mount": {"mount_point": "/home", "fstype": "ext4", "options": ["ro"]}}, Status.FAIL, "triton-cache-unusable",
     Severity.BLOCKING, "Read-only file system"),
    ({"exec_ok": False, "exec_error": "PermissionError: [Errno 1] Operation not permitted"}, Status.FAIL,
     "triton-cache-unusable", Severity.BLOCKING, "failed to map segment"),
    ({"cache_dir": "", "empty": True}, Status.FAIL, "triton-cache-unusable", Severity.BLOCKING,
     "Could not create or locate cache dir"),
    ({"free_bytes": 4096 * 1024}, Status.FAIL, "triton-cache-unusable", Severity.BLOCKING, "4096 KiB free"),
    ({"cache_dir": "~/.triton/cache", "relative": True, "source": "unresolved ~"}, Status.WARN,
     "triton-cache-unusable", Severity.DEGRADED, "relative path ~/.triton/cache"),
    ({"file_program": None, "platform_key": "x86_64,Linux,64bit,", "cached_helpers": ["ABC/cuda_utils.so"]},
     Status.WARN, "file-command-missing", Severity.DEGRADED, "'x86_64,Linux,64bit,' instead of"),
])
def test_triton_cache_table(change, status, code, severity, needle):
    v = evaluate(TritonCache, {**CACHE, **change})
    assert v.status is status and codes(v) == ([code] if code else [])
    if code:
        assert v.findings[0].severity is severity
    assert needle in v.summary + " ".join(f.message for f in v.findings)
    if code == "file-command-missing":
        assert commands(v) == ["apt-get update && apt-get install -y file"]


@pytest.mark.parametrize("facts, torch, status, code, cmd", [
    ({"nvcc": None, "cuda_home": None}, {"installed": False}, Status.SKIP, None, None),
    ({"nvcc": None, "cuda_home": None}, {"installed": True, "version": "2.13.0+cpu", "cuda": None}, Status.PASS,
     None, None),
    ({"nvcc": None, "cuda_home": None}, {"installed": True, "version": "2.11.0+cu130", "cuda": "13.0"}, Status.WARN,
     "nvcc-missing", "apt-get install -y cuda-nvcc-13-0"),
    ({"nvcc": "/opt/cuda/bin/nvcc", "cuda_home": "/opt/cuda", "source": "CUDA_HOME", "nvcc_exists": False},
     {"installed": True, "version": "2.11.0+cu130", "cuda": "13.0"}, Status.WARN, "nvcc-missing",
     "export CUDA_HOME=/usr/local/cuda-13.0"),
    ({"nvcc": "/usr/local/cuda/bin/nvcc", "cuda_home": "/usr/local/cuda", "nvcc_exists": True,
      "nvcc_version": "12.8"}, {"installed": True, "version": "2.11.0+cu130", "cuda": "13.0"}, Status.WARN,
     "nvcc-torch-cuda-mismatch", "apt-get install -y cuda-nvcc-13-0"),
    ({"nvcc": "/usr/local/cuda/bin/nvcc", "cuda_home": "/usr/local/cuda", "nvcc_exists": True,
      "nvcc_version": "13.1"}, {"installed": True, "version": "2.11.0+cu130", "cuda": "13.0"}, Status.PASS, None,
     None),
])
def test_nvcc_table(facts, torch, status, code, cmd):
    v = evaluate(Nvcc, facts, deps={"torch.cuda": torch})
    assert v.status is status and codes(v) == ([code] if code else [])
    if code:
        assert v.findings[0].severity is Severity.DEGRADED
        assert cmd in " ".join(commands(v))


# --------------------------------------------------------------------------------------------
# the real probes, end to end


def test_healthy_here_compiler_headers_and_build_pass(stack_python, clean_env):
    from stackpeel.engine import check
    report = check(python=stack_python, only=["toolchain.extension_build"], env=clean_env)
    by_id = {r.id: r for r in report.results}
    for cid in ("toolchain.c_compiler", "toolchain.python_headers", "toolchain.extension_build"):
        assert by_id[cid].status is Status.PASS, (cid, by_id[cid].summary, by_id[cid].findings)
    assert by_id["toolchain.extension_build"].facts["ok"] is True
    assert by_id["toolchain.c_compiler"].facts["compiler"] == shutil.which("gcc", path=clean_env.get("PATH"))
    assert report.diagnosis.blocking == ()


def test_no_compiler_is_the_root_and_the_build_is_its_symptom(stack_python, nocc_env):
    from stackpeel.engine import check
    report = check(python=stack_python, only=["toolchain.extension_build"], env=nocc_env)
    cc = report.result("toolchain.c_compiler")
    assert cc.status is Status.FAIL and [f.code for f in cc.findings] == ["no-c-compiler"]
    assert nocc_env["PATH"] in cc.findings[0].message and "CC is unset" in cc.findings[0].message
    if report.host.get("pkg_manager") == "apt" and report.host.get("is_root"):
        assert any("apt-get install -y gcc" in c.command for c in cc.findings[0].remedy.commands)
    assert report.result("toolchain.extension_build").status is Status.BLOCKED
    (root,) = report.diagnosis.blocking
    assert root.check_id == "toolchain.c_compiler" and root.codes == ("no-c-compiler",)
    assert [s.check_id for s in root.symptoms] == ["toolchain.extension_build"]
    # Triton agrees there is nothing to compile with
    p = ask_triton(stack_python, "from triton.runtime.build import _find_compiler; print(_find_compiler('c'))",
                   nocc_env)
    if "cannot import name" not in p.stderr:  # _find_compiler is Triton >= 3.8
        assert "Failed to find C compiler" in p.stderr


def test_bogus_cc_is_broken_and_triton_would_run_it(stack_python, clean_env):
    env = dict(clean_env, CC="/nonexistent/gcc")
    c = run_check(CCompiler, stack_python, env)
    assert c.status is Status.FAIL and [f.code for f in c.findings] == ["c-compiler-broken"]
    assert "FileNotFoundError" in c.findings[0].evidence and "/nonexistent/gcc" in c.findings[0].evidence
    assert c.facts["compiler"] == "/nonexistent/gcc" and c.facts["source"] == "CC"
    e = run_check(ExtensionBuild, stack_python, env)
    assert e.status is Status.FAIL and [f.code for f in e.findings] == ["extension-build-failed"]
    p = ask_triton(stack_python, "from triton.runtime.build import _find_compiler; print(_find_compiler('c'))", env)
    if p.returncode == 0:
        assert p.stdout.strip() == "/nonexistent/gcc"


def test_cc_set_but_no_assembler_on_path(stack_python, clean_env, tmp_path):
    """GPU_NOTES: CC names a real gcc but PATH is emptied; gcc cannot run `as`."""
    gcc = shutil.which("gcc", path=clean_env.get("PATH"))
    if not gcc:
        pytest.skip("no gcc here")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = dict(clean_env, CC=gcc, PATH=str(empty))
    assert run_check(CCompiler, stack_python, env).status is Status.PASS
    e = run_check(ExtensionBuild, stack_python, env)
    assert e.status is Status.FAIL and e.facts["failure_kind"] == "binutils" and e.facts["missing"] == "as"
    assert "cannot execute" in e.findings[0].evidence


def test_python_headers_hidden_by_a_bind_mount(stack_python, cli_env, tmp_path, can_unshare):
    inc = subprocess.run([stack_python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True, timeout=60).stdout.strip()
    version = subprocess.run([stack_python, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    empty = tmp_path / "empty"
    empty.mkdir()
    report, p = stackpeel_cli("--python", stack_python, "--only", "toolchain", env=cli_env,
                              wrap=f"mount --bind {empty} {inc}")
    rc = roots(report)
    assert "toolchain.python_headers" in rc, report["diagnosis"]
    root = rc["toolchain.python_headers"]
    assert root["codes"] == ["python-headers-missing"]
    assert "toolchain.extension_build" in [s["check"] for s in root["symptoms"]]
    finding = result(report, "toolchain.python_headers")["findings"][0]
    assert f"{inc}/Python.h" in finding["message"]
    cmds = [c["command"] for c in finding["remedy"]["commands"]]
    build = result(report, "toolchain.extension_build")["findings"][0]
    assert "Python.h: No such file or directory" in build["evidence"]
    if "/.pyenv/versions/" in inc:  # the stack venv's base is a pyenv Python: reinstall it
        assert f"pyenv install --force {version}" in cmds
    assert p.returncode == 1


def test_distro_python_headers_hidden_names_the_apt_package(cli_env, tmp_path, can_unshare):
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        pytest.skip("no distro python3")
    info = json.loads(subprocess.run([py, "-c", "import json, sys, sysconfig; print(json.dumps("
                                      "[sysconfig.get_paths(scheme='posix_prefix')['include'], '%d.%d' % "
                                      "sys.version_info[:2]]))"], capture_output=True, text=True).stdout)
    inc, mm = info
    if not os.path.exists(os.path.join(inc, "Python.h")) or detect(py).get("pkg_manager") != "apt":
        pytest.skip("needs a Debian/Ubuntu python3 with its headers installed")
    empty = tmp_path / "empty"
    empty.mkdir()
    report, _ = stackpeel_cli("--python", py, "--only", "toolchain.extension_build", env=cli_env,
                              wrap=f"mount --bind {empty} {inc}")
    root = roots(report)["toolchain.python_headers"]
    assert root["codes"] == ["python-headers-missing"]
    cmds = [c["command"] for c in result(report, "toolchain.python_headers")["findings"][0]["remedy"]["commands"]]
    assert any(f"apt-get install -y python{mm}-dev python3-dev" in c for c in cmds), cmds


def test_libc_headers_hidden_by_a_bind_mount(stack_python, cli_env, tmp_path, can_unshare):
    inc = subprocess.run([stack_python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True, timeout=60).stdout.strip()
    if inc.startswith("/usr/include"):
        pytest.skip("the stack Python's headers live in /usr/include too")
    empty = tmp_path / "empty"
    empty.mkdir()
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.extension_build", env=cli_env,
                              wrap=f"mount --bind {empty} /usr/include")
    rc = roots(report)
    assert list(rc) == ["toolchain.extension_build"] and rc["toolchain.extension_build"]["codes"] == [
        "libc-headers-missing"]
    f = result(report, "toolchain.extension_build")["findings"][0]
    assert "stdlib.h: No such file or directory" in f["evidence"]
    if report["host"].get("pkg_manager") == "apt":
        assert any("libc6-dev" in c["command"] for c in f["remedy"]["commands"])


# ---- ptxas with the bundled binaries ------------------------------------------------------------


def _driver(cc, driver_version=13000):
    major, minor = cc.split(".")
    return {"cuda.driver_api": {**H200, "driver_version": driver_version,
                                "devices": [{"index": 0, "name": "GPU", "cc": cc, "cc_major": int(major),
                                             "cc_minor": int(minor)}]}}


def _triton_ptxas(stack_python, arch, env):
    p = ask_triton(stack_python, "from triton.backends.nvidia.compiler import get_ptxas; "
                   f"t = get_ptxas({arch}); print(t.path); print(t.version)", env)
    return p.stdout.split() if p.returncode == 0 else p.stderr


def test_ptxas_hopper_assembles_and_matches_triton(stack_python, clean_env):
    r = run_check(Ptxas, stack_python, clean_env, deps=_driver("9.0"))
    assert r.status is Status.PASS, (r.summary, r.findings)
    (a,) = r.facts["archs"]
    assert a["assemble"]["accepted"] and a["assemble"]["gpu_name"] == "sm_90a"
    assert _triton_ptxas(stack_python, 90, clean_env) == [a["ptxas"], a["release"]]


def test_ptxas_rejects_an_arch_it_does_not_know(stack_python, clean_env):
    """Thor still reporting 10.1: the CUDA 13 ptxas has no sm_101a (renamed sm_110)."""
    r = run_check(Ptxas, stack_python, clean_env, deps=_driver("10.1"))
    (a,) = r.facts["archs"]
    if a["release"] and int(a["release"].split(".")[0]) < 13:
        pytest.skip(f"this Triton's ptxas for sm_101a is CUDA {a['release']}, which knows it")
    assert r.status is Status.FAIL and "ptxas-arch-unsupported" in [f.code for f in r.findings]
    f = next(f for f in r.findings if f.code == "ptxas-arch-unsupported")
    assert "Value 'sm_101a' is not defined for option 'gpu-name'" in f.evidence
    # the older bundled ptxas knows sm_101a and is offered
    older = [x for x in a["alternatives"] if x["accepted"]]
    assert older and any(c.command == f"export TRITON_PTXAS_BLACKWELL_PATH={older[0]['ptxas']}"
                         for c in f.remedy.commands)


def test_ptxas_override_for_the_wrong_arch(stack_python, clean_env, bundled_bin):
    """TRITON_PTXAS_BLACKWELL_PATH at the CUDA 12.9 ptxas, GPU 11.0: ptxas says sm_110a is unknown."""
    env = dict(clean_env, TRITON_PTXAS_BLACKWELL_PATH=str(bundled_bin / "ptxas"), TRITON_PTXAS_PATH="/nonexistent")
    r = run_check(Ptxas, stack_python, env, deps=_driver("11.0"))
    (a,) = r.facts["archs"]
    if a["tool"] != "ptxas-blackwell" or a["release"] != "12.9":
        pytest.skip(f"needs a Triton whose override ptxas is CUDA 12.9 for cc 11.0, got {a['tool']} {a['release']}")
    assert _triton_ptxas(stack_python, 110, env) == [a["ptxas"], a["release"]]
    f = next(f for f in r.findings if f.code == "ptxas-arch-unsupported")
    assert "Value 'sm_110a' is not defined for option 'gpu-name'" in f.evidence
    assert "TRITON_PTXAS_PATH is set but Triton" in f.message


def test_ptxas_newer_than_driver(stack_python, clean_env):
    r = run_check(Ptxas, stack_python, clean_env, deps=_driver("9.0", driver_version=12080))
    (a,) = r.facts["archs"]
    if int(a["release"].split(".")[0]) <= 12:
        pytest.skip(f"this Triton uses CUDA {a['release']} ptxas for Hopper")
    f = next(f for f in r.findings if f.code == "ptxas-newer-than-driver")
    assert f"CUDA {a['release']}" in f.message and "CUDA 12.8 only" in f.message
    assert any(c.command.startswith("export TRITON_PTXAS_BLACKWELL_PATH=") for c in f.remedy.commands)


def test_ptxas_override_missing_or_not_executable(stack_python, clean_env, bundled_bin, tmp_path):
    # which tool and variable apply to Hopper depends on the Triton version (3.9: ptxas-blackwell)
    (a,) = run_check(Ptxas, stack_python, clean_env, deps=_driver("9.0")).facts["archs"]
    tool, var = a["tool"], a["env_var"]
    # a missing override: Triton silently falls back to its bundled ptxas
    env = dict(clean_env, **{var: str(tmp_path / "nope" / "ptxas")})
    r = run_check(Ptxas, stack_python, env, deps=_driver("9.0"))
    (f,) = [f for f in r.findings if f.code == "ptxas-unusable"]
    assert f.severity is Severity.DEGRADED and "silently" in f.message
    assert [c.command for c in f.remedy.commands] == [f"unset {var}"]
    assert _triton_ptxas(stack_python, 90, env)[0] == r.facts["archs"][0]["ptxas"] == str(bundled_bin / tool)
    # an override without exec bit: Triton does not catch the PermissionError
    noexec = tmp_path / "ptxas"
    shutil.copy(bundled_bin / tool, noexec)
    noexec.chmod(0o644)
    env = dict(clean_env, **{var: str(noexec)})
    r = run_check(Ptxas, stack_python, env, deps=_driver("9.0"))
    assert r.status is Status.FAIL
    f = next(f for f in r.findings if f.code == "ptxas-unusable")
    assert "PermissionError" in f.message and f.severity is Severity.BLOCKING
    assert "PermissionError" in _triton_ptxas(stack_python, 90, env)


def test_ptxas_without_gpu_still_proves_the_bundled_tools(stack_python, clean_env):
    r = run_check(Ptxas, stack_python, clean_env, deps={"cuda.driver_api": {"libcuda_loaded": False, "devices": []}})
    assert r.status is Status.PASS and "no GPU known" in r.summary
    assert all(a["assemble"]["accepted"] for a in r.facts["archs"])


# ---- libcuda discovery ----------------------------------------------------------------------------


def _libcuda_dirs(stack_python, env):
    p = ask_triton(stack_python, "from triton.backends.nvidia.driver import libcuda_dirs\n"
                   "try:\n    print(libcuda_dirs())\nexcept BaseException as e:\n"
                   "    print(type(e).__name__ + ': ' + str(e))", env)
    return p.stdout.strip()


def _fake_libcuda(directory: Path, soname="libcuda.so.1"):
    """A real shared object named like the driver library (this machine has no GPU)."""
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("no gcc to build a stand-in libcuda")
    directory.mkdir(parents=True, exist_ok=True)
    src = directory / "fake.c"
    src.write_text("int cuInit(unsigned int flags) { return 100; /* CUDA_ERROR_NO_DEVICE */ }\n")
    subprocess.run([gcc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(directory / soname), str(src)],
                   check=True, timeout=60)
    src.unlink()
    return directory / soname


def test_libcuda_absent_here_matches_triton(stack_python, clean_env):
    if subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout.count("libcuda.so.1"):
        pytest.skip("this machine has libcuda.so.1")
    r = run_check(LibcudaDiscovery, stack_python, clean_env,
                  deps={"cuda.driver_api": {"libcuda_loaded": False, "devices": []}})
    assert r.status is Status.FAIL and [f.code for f in r.findings] == ["libcuda-not-in-ldconfig"]
    assert "not installed on this machine" in r.findings[0].message
    assert r.findings[0].remedy.commands == ()  # nothing to point ldconfig at: the fix is the driver's
    assert r.facts["triton_error"] == _libcuda_dirs(stack_python, clean_env)


def test_triton_libcuda_path_stubs_and_real(stack_python, clean_env, tmp_path):
    stubs = tmp_path / "cuda" / "lib64" / "stubs"
    _fake_libcuda(stubs, "libcuda.so")
    r = run_check(LibcudaDiscovery, stack_python, dict(clean_env, TRITON_LIBCUDA_PATH=str(stubs)))
    assert [f.code for f in r.findings] == ["triton-libcuda-path-wrong"] and "link-time stub" in r.findings[0].message
    real = tmp_path / "driver"
    _fake_libcuda(real)
    env = dict(clean_env, TRITON_LIBCUDA_PATH=str(real))
    r = run_check(LibcudaDiscovery, stack_python, env)
    assert r.status is Status.PASS and r.facts["triton_dirs"] == [str(real)]
    assert _libcuda_dirs(stack_python, env) == str([str(real)])


def test_triton_libcuda_path_without_libcuda_is_degraded_when_the_link_finds_it(stack_python, clean_env, tmp_path):
    """On an H200 (Ubuntu image, Triton 3.6) a TRITON_LIBCUDA_PATH without libcuda.so.1 did not stop
    the user's kernel: ld searched the compiler's default directories next and found the driver's
    library. Here the compiler's directories hold a stand-in through LIBRARY_PATH (gcc searches it
    too): wrong but not blocking, and the message names what the link finds."""
    empty = tmp_path / "no-libcuda-here"
    empty.mkdir()
    driver = tmp_path / "driver"
    _fake_libcuda(driver)
    env = dict(clean_env, TRITON_LIBCUDA_PATH=str(empty), LIBRARY_PATH=str(driver))
    r = run_check(LibcudaDiscovery, stack_python, env)
    assert [f.code for f in r.findings] == ["triton-libcuda-path-wrong"], r.findings
    f = r.findings[0]
    assert f.severity is Severity.DEGRADED and r.status is Status.WARN
    # the first of the compiler's library directories that holds libcuda.so.1 (ld's order): the stand-in
    # here; on a GPU host the driver's own (/lib/libcuda.so.1 on the H100 of session 29) can come first
    linked = r.facts["linker_libcuda"]
    assert linked and f"finds the driver's {linked}" in f.message
    if not subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout.count("libcuda.so.1"):
        assert linked == str(driver / "libcuda.so.1")
    # without it the link has nothing to find: blocking
    r = run_check(LibcudaDiscovery, stack_python, dict(clean_env, TRITON_LIBCUDA_PATH=str(empty)))
    if r.facts.get("linker_libcuda") is None:
        assert r.findings[0].severity is Severity.BLOCKING


def test_stale_linker_cache_and_missing_ldconfig(stack_python, clean_env, cli_env, tmp_path, can_unshare):
    libdir = tmp_path / "nvidia-driver"
    lib = _fake_libcuda(libdir)
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"{libdir}\n")
    cache = tmp_path / "ld.so.cache"
    subprocess.run(["/sbin/ldconfig", "-C", str(cache), "-f", str(conf)], check=True, timeout=120)
    inner = [stack_python, "-c", "from triton.backends.nvidia.driver import libcuda_dirs\n"
             "try:\n    print(libcuda_dirs())\nexcept BaseException as e:\n    print(type(e).__name__ + ': ' + str(e))"]
    bind = f"mount --bind {cache} /etc/ld.so.cache"

    def in_ns(cmd, env):
        p = subprocess.run(["unshare", "-m", "sh", "-c", bind + ' && exec "$@"', "sh", *cmd], capture_output=True,
                           text=True, env=env, timeout=120)
        return p.stdout.strip()

    # the cache lists the library and it is there: Triton and stackpeel find it
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.libcuda_discovery", env=cli_env,
                              wrap=bind)
    res = result(report, "toolchain.libcuda_discovery")
    assert res["status"] == "pass" and str(libdir) in res["facts"]["triton_dirs"]
    assert in_ns(inner, clean_env) == str(res["facts"]["triton_dirs"])
    real = [e for e in res["facts"]["ldconfig_entries"] if not e["path"].startswith(str(libdir))]
    # no /sbin/ldconfig at all (its real directory hidden)
    sbin = os.path.dirname(os.path.realpath("/sbin/ldconfig"))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.libcuda_discovery", env=cli_env,
                              wrap=f"mount -t tmpfs none {sbin}")
    res = result(report, "toolchain.libcuda_discovery")
    assert [f["code"] for f in res["findings"]] == ["ldconfig-missing"]
    assert "No such file or directory: '/sbin/ldconfig'" in res["findings"][0]["message"]
    # the file goes away, the cache stays: stale; LD_LIBRARY_PATH with a real copy is not consulted
    # (only where the machine's own cache has no libcuda.so.1: a GPU machine's real one would be found)
    if real:
        pytest.skip(f"this machine's linker cache has its own libcuda.so.1 ({real[0]['path']})")
    other = tmp_path / "elsewhere"
    _fake_libcuda(other)
    lib.unlink()
    env = dict(cli_env, LD_LIBRARY_PATH=str(other))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.libcuda_discovery", env=env, wrap=bind)
    res = result(report, "toolchain.libcuda_discovery")
    assert res["status"] == "fail" and [f["code"] for f in res["findings"]] == ["libcuda-not-in-ldconfig"]
    msg = res["findings"][0]["message"]
    assert "stale" in msg and str(other) in msg
    assert res["facts"]["triton_error"] == in_ns(inner, dict(clean_env, LD_LIBRARY_PATH=str(other)))


# ---- Triton's cache ---------------------------------------------------------------------------------


def _triton_cache_view(stack_python, env):
    p = ask_triton(stack_python, "from triton import knobs; from triton.runtime.build import platform_key; "
                   "print(repr(knobs.cache.dir)); print(platform_key())", env)
    assert p.returncode == 0, p.stderr
    d, key = p.stdout.strip().splitlines()
    return eval(d), key  # noqa: S307 - repr of a str written by our own child


def test_cache_dir_resolution_matches_triton(stack_python, clean_env, tmp_path):
    cases = [clean_env, dict(clean_env, TRITON_HOME=str(tmp_path / "th")),
             dict(clean_env, TRITON_CACHE_DIR=str(tmp_path / "tc" / "cache")),
             {k: v for k, v in clean_env.items() if k != "HOME"}]
    for env in cases:
        r = run_check(TritonCache, stack_python, env)
        d, key = _triton_cache_view(stack_python, env)
        assert r.facts["cache_dir"] == d and r.facts["platform_key"] == key
        assert r.status is Status.PASS, (r.summary, r.findings)
    assert not (tmp_path / "th").exists() and not (tmp_path / "tc").exists()  # the probe leaves nothing behind


def test_cache_dir_unwritable(stack_python, clean_env):
    env = dict(clean_env, TRITON_CACHE_DIR="/proc/stackpeel-test/cache")
    r = run_check(TritonCache, stack_python, env)
    assert r.status is Status.FAIL and [f.code for f in r.findings] == ["triton-cache-unusable"]
    assert r.findings[0].evidence and "/proc" in r.findings[0].message
    assert r.facts["writable"] is False and r.facts["cache_dir"] == "/proc/stackpeel-test/cache"


def test_cache_dir_that_is_a_file_is_called_a_file(stack_python, clean_env, tmp_path):
    """The real probe on a TRITON_CACHE_DIR that names a regular file: the message says what the
    path is (it said "does not exist; its nearest existing parent ..." of a path that exists)."""
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory\n")
    r = run_check(TritonCache, stack_python, dict(clean_env, TRITON_CACHE_DIR=str(blocker)))
    assert r.status is Status.FAIL and [f.code for f in r.findings] == ["triton-cache-unusable"]
    assert r.facts["not_a_directory"] is True and r.facts["writable"] is False
    assert f"{blocker} (a file, not a directory)" in r.findings[0].message
    assert "does not exist" not in r.findings[0].message


def test_cache_dir_read_only_and_noexec_mounts(stack_python, cli_env, tmp_path, can_unshare):
    ro, nx = tmp_path / "ro", tmp_path / "nx"
    ro.mkdir()
    nx.mkdir()
    env = dict(cli_env, TRITON_CACHE_DIR=str(ro / "cache"))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.triton_cache", env=env,
                              wrap=f"mount --bind {ro} {ro} && mount -o remount,bind,ro {ro}")
    res = result(report, "toolchain.triton_cache")
    assert res["status"] == "fail" and res["findings"][0]["code"] == "triton-cache-unusable"
    assert "Read-only file system" in res["findings"][0]["evidence"] and res["facts"]["mount"]["ro"] is True
    env = dict(cli_env, TRITON_CACHE_DIR=str(nx))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.triton_cache", env=env,
                              wrap=f"mount -t tmpfs -o noexec none {nx}")
    res = result(report, "toolchain.triton_cache")
    assert res["status"] == "fail" and res["facts"]["writable"] is True and res["facts"]["exec_ok"] is False
    assert "failed to map segment" in res["findings"][0]["message"] and res["facts"]["mount"]["noexec"] is True


def test_missing_file_program_changes_the_key_like_triton(stack_python, clean_env, tmp_path):
    d = tmp_path / "nofile-bin"
    d.mkdir()
    for entry in clean_env.get("PATH", "").split(os.pathsep):
        if os.path.isdir(entry):
            for name in os.listdir(entry):
                src = os.path.join(entry, name)
                if name != "file" and not (d / name).exists() and os.access(src, os.X_OK) and not os.path.isdir(src):
                    (d / name).symlink_to(src)
    env = dict(clean_env, PATH=str(d))
    r = run_check(TritonCache, stack_python, env)
    assert r.status is Status.WARN and [f.code for f in r.findings] == ["file-command-missing"]
    _, key = _triton_cache_view(stack_python, env)
    assert r.facts["platform_key"] == key and key.endswith(",")
    assert r.facts["platform_key_with_file"] == _triton_cache_view(stack_python, clean_env)[1]
    assert f"'{key}' instead of" in r.findings[0].message


# ---- nvcc ---------------------------------------------------------------------------------------------


def test_nvcc_found_the_way_torch_finds_it(stack_python, clean_env, tmp_path):
    r = run_check(Nvcc, stack_python, clean_env, deps={"torch.cuda": {"installed": True, "version": "2.11.0+cu130",
                                                                      "cuda": "13.0"}})
    nv = shutil.which("nvcc", path=clean_env.get("PATH"))
    if nv:
        assert r.facts["nvcc"] == os.path.join(os.path.dirname(os.path.dirname(nv)), "bin", "nvcc")
        assert r.facts["nvcc_version"]
        assert r.status in (Status.PASS, Status.WARN)
    # CUDA_HOME wins, and a wrong one hides every other nvcc (torch: "nvcc not found at ...")
    env = dict(clean_env, CUDA_HOME=str(tmp_path / "cuda"))
    r = run_check(Nvcc, stack_python, env, deps={"torch.cuda": {"installed": True, "version": "2.11.0+cu130",
                                                                "cuda": "13.0"}})
    assert r.status is Status.WARN and [f.code for f in r.findings] == ["nvcc-missing"]
    assert str(tmp_path / "cuda" / "bin" / "nvcc") in r.findings[0].message


def test_nvcc_major_mismatch_with_a_real_nvcc(stack_python, clean_env):
    if not (shutil.which("nvcc", path=clean_env.get("PATH")) or os.path.exists("/usr/local/cuda/bin/nvcc")):
        pytest.skip("no nvcc on this machine")
    base = run_check(Nvcc, stack_python, clean_env, deps={"torch.cuda": {"installed": True, "cuda": None}})
    ver = base.facts["nvcc_version"]
    assert ver and base.status is Status.PASS  # CPU torch here: informational
    other = "12.8" if not ver.startswith("12.") else "13.0"
    r = run_check(Nvcc, stack_python, clean_env, deps={"torch.cuda": {"installed": True, "version": "2.x",
                                                                      "cuda": other}})
    assert r.status is Status.WARN and [f.code for f in r.findings] == ["nvcc-torch-cuda-mismatch"]
    assert f"CUDA {ver}" in r.findings[0].message


# ---- every probe on the oldest and newest Python ---------------------------------------------------


def test_probes_run_on_other_pythons(other_python, clean_env):
    for name in PROBES:
        ans = run_probe(other_python, f"toolchain.{name}", {"deps": {}, "options": {}, "check": name}, 120,
                        env=clean_env)
        assert ans.failure is None, (name, ans.failure)
        assert isinstance(ans.facts, dict) and ans.facts
    ans = run_probe(other_python, "toolchain.python_headers", {"deps": {}, "options": {}}, 60, env=clean_env)
    ver = subprocess.run([other_python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True).stdout.strip()
    assert ans.facts["py_mm"] == ver
    if ans.facts["python_h_exists"] and shutil.which("gcc", path=clean_env.get("PATH")):
        ans = run_probe(other_python, "toolchain.extension_build", {"deps": {}, "options": {}}, 120, env=clean_env)
        assert ans.facts["ok"] is True and ans.facts["answer"] == 42


# ---- facts recorded on a real H200 (tests/data/toolchain/gpu_validate.sh) ---------------------------

DATA = Path(__file__).parent / "data" / "toolchain"
CHECKS = {c.id: c for c in (CCompiler, PythonHeaders, ExtensionBuild, LibcudaDiscovery, Ptxas, TritonCache, Nvcc)}


def _h200():
    return json.loads((DATA / "h200_report.json").read_text())


def test_h200_recorded_facts_evaluate_as_recorded():
    """Ubuntu 24.04, driver 580, H200 (cc 9.0), torch 2.11+cu130, triton 3.6, CC=/opt/gcc/bin/gcc."""
    report = _h200()
    by_id = {r["id"]: r for r in report["results"]}
    for cid, cls in CHECKS.items():
        rec = by_id[cid]
        # requirements the recorded report predates (config.*) read as absent
        deps = {req: by_id[req]["facts"] for req in cls.requires if req in by_id}
        status = {req: Status(by_id[req]["status"]) for req in cls.requires if req in by_id}
        v = cls().evaluate(rec["facts"], Context(report["host"], report["target"], deps, status))
        assert (v.status.value, v.summary) == (rec["status"], rec["summary"]), cid
        assert v.status is Status.PASS, (cid, v.summary)


def test_h200_recorded_facts_agree_with_triton_there():
    by_id = {r["id"]: r for r in _h200()["results"]}
    view = (DATA / "h200_triton_view.txt").read_text().splitlines()
    line = next(x for x in view if x.startswith("libcuda_dirs "))
    assert line == "libcuda_dirs " + str(by_id["toolchain.libcuda_discovery"]["facts"]["triton_dirs"])
    (a,) = by_id["toolchain.ptxas"]["facts"]["archs"]
    assert f"get_ptxas 90 {a['ptxas']} {a['release']}" in view
    assert f"cache dir {by_id['toolchain.triton_cache']['facts']['cache_dir']}" in view
    assert f"platform_key {by_id['toolchain.triton_cache']['facts']['platform_key']}" in view
    assert by_id["toolchain.c_compiler"]["facts"]["source"] == "CC"  # that machine sets CC=/opt/gcc/bin/gcc


def test_h200_facts_with_a_fault_injected():
    """The same machine's facts, one fact changed: the verdict follows it."""
    report = _h200()
    by_id = {r["id"]: r for r in report["results"]}
    ctx = Context(report["host"], report["target"], {}, {})
    h = dict(by_id["toolchain.python_headers"]["facts"], python_h_exists=False)
    v = PythonHeaders().evaluate(h, ctx)
    assert [c.command for c in v.findings[0].remedy.commands] == [
        "apt-get update && apt-get install -y python3.12-dev python3-dev"]
    ptx = by_id["toolchain.ptxas"]["facts"]
    deps = {"cuda.driver_api": dict(by_id["cuda.driver_api"]["facts"], driver_version=11080)}
    v = Ptxas().evaluate(ptx, Context(report["host"], report["target"], deps, {}))
    assert codes(v) == ["ptxas-newer-than-driver"]  # the historic case: a CUDA 12 ptxas on an 11.x driver
    assert "CUDA 11.8 only" in v.findings[0].message
    assert codes(evaluate(Nvcc, dict(by_id["toolchain.nvcc"]["facts"], nvcc_version="12.8"),
                          deps={"torch.cuda": by_id["torch.cuda"]["facts"]})) == ["nvcc-torch-cuda-mismatch"]


# ---- tmp24: the temporary directory Triton's build and gcc use ---------------------------------------

from stackpeel import facts as F  # noqa: E402
from stackpeel.checks.toolchain import LOW_TMP_FREE, MIN_TMP_FREE, TempDir  # noqa: E402
from stackpeel.checks.triton_layer import TritonBuild  # noqa: E402
from stackpeel.explain import explain_text  # noqa: E402
from test_explain_patterns import family_tests, healthy_test  # noqa: E402
from test_gpu_layers import load_probe  # noqa: E402


def classify_build_stderr(text):
    return load_probe("toolchain").classify_build_stderr(text)

_TMP_MOUNT = {"mount_point": "/tmp", "fstype": "tmpfs", "options": ["rw", "relatime"], "ro": False, "noexec": False}


def _tmp_entry(path, free=70 * 2**30, write_error=None, access_ok=True):
    return {"path": path, "is_dir": True, "access_ok": access_ok, "write_error": write_error, "free_bytes": free,
            "mount": _TMP_MOUNT}


def _tmp_facts(py="/tmp", cc="/tmp", py_entry=None, cc_entry=None, error=None, skipped=(), env=None):
    return {"env": env or {"TMPDIR": None, "TEMP": None, "TMP": None}, "cwd": "/work", "python_tmpdir": py,
            "python_error": error, "python": py_entry if py_entry is not None else (_tmp_entry(py) if py else None),
            "compiler_tmpdir": cc, "compiler": cc_entry or _tmp_entry(cc), "skipped": list(skipped)}


NO_DIR = "FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', '/work']"
ENOSPC = "OSError: [Errno 28] No space left on device"


@pytest.mark.parametrize("facts, status, variant_needles", [
    (_tmp_facts(), Status.PASS, ["/tmp: writable"]),
    # /tmp and /var/tmp read-only, working directory read-only (run here under unshare -m)
    (_tmp_facts(py=None, cc="/work", error=NO_DIR,
                cc_entry=_tmp_entry("/work", write_error="OSError: [Errno 30] Read-only file system")),
     Status.FAIL, ["No usable temporary directory found in", "fails before the compiler runs"]),
    # a full /tmp: Python's tempfile falls back to /var/tmp, gcc does not (access() accepts a full mount)
    (_tmp_facts(py="/var/tmp", cc_entry=_tmp_entry("/tmp", free=0, write_error=ENOSPC)),
     Status.FAIL, ["has 0 KiB free", "error writing to /tmp/ccXXXXXX.s", "Python's tempfile uses /var/tmp, gcc /tmp"]),
    # TMPDIR=/proc as root: access() accepts it, so gcc writes there; tempfile skips it
    (_tmp_facts(py="/tmp", cc="/proc", cc_entry=_tmp_entry("/proc", write_error="FileNotFoundError: [Errno 2] x"),
                skipped=[dict(_tmp_entry("/proc", write_error="FileNotFoundError: [Errno 2] x"), var="TMPDIR")]),
     Status.FAIL, ["gcc writes its intermediates in /proc", "Cannot create temporary file in /proc/",
                   "TMPDIR=/proc cannot be used"]),
    (_tmp_facts(cc_entry=_tmp_entry("/tmp", free=MIN_TMP_FREE - 1)), Status.FAIL, ["1023 KiB free"]),
    # ENOSPC with 50 GiB free: the file system's inodes are used up, not its blocks
    (_tmp_facts(py="/var/tmp", cc_entry=_tmp_entry("/tmp", free=50 * 2**30, write_error=ENOSPC)),
     Status.FAIL, ["52428800 KiB free, yet no file can be created there", "no free inodes left"]),
])
def test_temp_dir_blocking_table(facts, status, variant_needles):
    v = evaluate(TempDir, facts)
    assert v.status is status
    if status is Status.PASS:
        assert not v.findings and all(n in v.summary for n in variant_needles)
        return
    assert codes(v) == ["temp-dir-unusable"] and v.findings[0].severity is Severity.BLOCKING
    for needle in variant_needles:
        assert needle in v.findings[0].message, (needle, v.findings[0].message)
    assert any("TMPDIR=" in c for c in commands(v)) and any("--tmpfs /tmp" in c for c in commands(v))


def test_temp_dir_degrades_on_low_space_and_on_a_skipped_variable():
    v = evaluate(TempDir, _tmp_facts(cc_entry=_tmp_entry("/tmp", free=LOW_TMP_FREE - 1)))
    assert v.status is Status.WARN and v.findings[0].severity is Severity.DEGRADED
    assert "a torch CUDA extension build can run out" in v.findings[0].message
    skipped = dict(_tmp_entry("/nonexistent", write_error="not a directory"), is_dir=False, var="TMPDIR")
    v = evaluate(TempDir, _tmp_facts(skipped=[skipped], env={"TMPDIR": "/nonexistent", "TEMP": None, "TMP": None}))
    assert v.status is Status.WARN and codes(v) == ["temp-dir-unusable"]
    msg = v.findings[0].message
    assert "TMPDIR=/nonexistent cannot be used" in msg and "silently skips it and uses /tmp" in msg
    assert "nvcc does not skip" in msg  # the consequence a fallback does not cure


def test_temp_dir_failures_are_named_in_the_builds_they_break():
    assert classify_build_stderr("x.c:1:1: fatal error: error closing /tmp/cc5tleEc.s: No space left on device") \
        == ("temp-dir", "/tmp/cc5tleEc.s: No space left on device")
    assert classify_build_stderr("Cannot create temporary file in ./: Read-only file system")[0] == "temp-dir"
    assert classify_build_stderr("/tmp/ccBlY2V0.s: Fatal error: can't write 29 bytes to section .eh_frame of "
                                 "/tmp/ccPBndu2.o: 'No space left on device'")[0] == "temp-dir"
    # near miss: the user's own output file on a full disk is no temporary file
    assert classify_build_stderr("/usr/bin/ld: final link failed: No space left on device")[0] == "other"
    v = evaluate(ExtensionBuild, {"compiler": "/usr/bin/gcc", "ok": False, "failure_kind": "no-tmp", "stderr": "",
                                  "error": NO_DIR})
    assert v.status is Status.BLOCKED and "toolchain.temp_dir" in v.summary
    tb = evaluate(TritonBuild, {"ok": False, "compiler": "/usr/bin/gcc", "api": "compile_module_from_src",
                                "error": {"type": "FileNotFoundError", "message": NO_DIR.split(": ", 1)[1]},
                                "compiler_stderr": "", "triton_version": "3.6.0"},
                  deps={"triton.import": {"version": "3.6.0"}})
    assert "temporary directory is missing, read-only or full" in tb.findings[0].message, tb.findings[0].message
    assert "does not exist (CC=" not in tb.findings[0].message  # tempfile's FileNotFoundError is no missing CC


def test_temp_dir_probe_shape_and_the_real_tempfile(stack_python, clean_env):
    """The real probe on this machine fits its declared shape and agrees with tempfile.gettempdir()."""
    ans = run_probe(stack_python, "toolchain.temp_dir", {"deps": {}, "options": {}}, 60, env=clean_env)
    assert ans.failure is None, ans.failure
    assert F.problems(F.ToolchainTempDirFacts, ans.facts, extra=True) == []
    real = subprocess.run([stack_python, "-c", "import tempfile; print(tempfile.gettempdir())"],
                          capture_output=True, text=True, env=clean_env, timeout=60).stdout.strip()
    assert ans.facts["python_tmpdir"] == real  # the target's TMPDIR, not the probe's scratch
    assert "stackpeel-" not in ans.facts["compiler_tmpdir"]


def _fault(mode):
    """A private mount namespace whose /tmp (and /var/tmp) are read-only or full, run from a read-only
    working directory: 'ro' leaves tempfile nothing; 'full' leaves it /var/tmp while gcc writes /tmp."""
    cwd = "mkdir -p /run/stackpeel-tmp24-cwd && mount -t tmpfs -o ro tmpfs /run/stackpeel-tmp24-cwd && " \
          "cd /run/stackpeel-tmp24-cwd"
    if mode == "ro":
        return "mount -t tmpfs -o ro tmpfs /tmp && mount -t tmpfs -o ro tmpfs /var/tmp && " + cwd
    return "mount -t tmpfs -o size=64k tmpfs /tmp && (dd if=/dev/zero of=/tmp/fill bs=4k count=64 " \
           "2>/dev/null; true) && " + cwd


def _under_tmp(*paths):
    """The first of ``paths`` (resolved) inside /tmp or /var/tmp: a fault mounted there hides it."""
    for path in paths:
        real = os.path.realpath(str(path))
        if any(real == d or real.startswith(d + os.sep) for d in ("/tmp", "/var/tmp")):
            return real
    return None


@pytest.fixture
def outside_tmp(stack_python):
    """Skip where this checkout or an interpreter lives under /tmp (a CI clone there): the faults
    below mount over /tmp and /var/tmp, which would hide the very programs they run."""
    hidden = _under_tmp(Path(__file__).resolve().parents[1], sys.executable, stack_python)
    if hidden:
        pytest.skip(f"{hidden} lies under /tmp or /var/tmp, which these faults mount over")


@pytest.fixture
def abs_cli_env(cli_env):
    """cli_env with stackpeel's source as an absolute path: the faults below change the working directory."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    return dict(cli_env, PYTHONPATH=os.pathsep.join([src] + [p for p in cli_env.get("PYTHONPATH", "").split(os.pathsep)
                                                             if p and os.path.isabs(p)]))


def test_real_read_only_tmp(can_unshare, outside_tmp, stack_python, abs_cli_env):
    cli_env = abs_cli_env
    report, p = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.extension_build",
                              env=cli_env, wrap=_fault("ro"))
    root = roots(report)["toolchain.temp_dir"]
    assert root["codes"] == ["temp-dir-unusable"] and "toolchain.extension_build" in [s["check"]
                                                                                      for s in root["symptoms"]]
    msg = result(report, "toolchain.temp_dir")["findings"][0]["message"]
    assert "No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', '/run/stackpeel-tmp24-cwd']" in msg
    # the real tempfile and the real gcc, under the same fault
    code = "import tempfile; tempfile.gettempdir()"
    out = subprocess.run(["unshare", "-m", "sh", "-c", _fault("ro") + f" && {stack_python} -c '{code}'; "
                          "echo 'int f(void){return 1;}' > /dev/shm/stackpeel-tmp24.c && "
                          "gcc -c /dev/shm/stackpeel-tmp24.c -o /dev/shm/stackpeel-tmp24.o; rm -f /dev/shm/stackpeel-tmp24.*"],
                         capture_output=True, text=True, timeout=60).stderr
    assert "No usable temporary directory found in" in out and "Cannot create temporary file in ./" in out, out
    expl = explain_text(out)
    assert [c.code for c in expl.candidates][:1] == ["temp-dir-unusable"]


def test_real_full_tmp(can_unshare, outside_tmp, stack_python, abs_cli_env):
    """A full tmpfs at /tmp: tempfile falls back to /var/tmp, gcc does not, and the build fails as Triton's does."""
    cli_env = abs_cli_env
    report, p = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.extension_build,triton.build",
                              env=cli_env, wrap=_fault("full"))
    root = roots(report)["toolchain.temp_dir"]
    assert root["codes"] == ["temp-dir-unusable"]
    assert {"toolchain.extension_build", "triton.build"} <= {s["check"] for s in root["symptoms"]}
    # Triton's own build, in the user's temporary directory: its source in /var/tmp, gcc's .s in the full /tmp
    tb = result(report, "triton.build")
    assert tb["status"] == "fail" and "temporary directory is missing, read-only or full" in tb["findings"][0]["message"]
    assert "No space left on device" in tb["findings"][0]["evidence"]
    build = result(report, "toolchain.extension_build")
    assert build["status"] == "fail" and "No space left on device" in build["findings"][0]["evidence"]
    assert "could not write its temporary files" in build["findings"][0]["message"]
    assert "Python's tempfile uses /var/tmp, gcc /tmp" in result(report, "toolchain.temp_dir")["findings"][0]["message"]


def test_real_missing_tmpdir_is_named_and_noexec_tmp_is_no_fault(can_unshare, outside_tmp, stack_python, cli_env):
    env = dict(cli_env, TMPDIR="/nonexistent-stackpeel-tmp24")
    report, _ = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.temp_dir", env=env)
    r = result(report, "toolchain.temp_dir")
    assert r["status"] == "warn" and "TMPDIR=/nonexistent-stackpeel-tmp24 cannot be used" in r["findings"][0]["message"]
    # Triton loads its helper from its cache, never from the temporary directory: noexec /tmp is fine
    report, _ = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.temp_dir", env=cli_env,
                              wrap="mount -t tmpfs -o size=512m,noexec tmpfs /tmp")
    assert result(report, "toolchain.temp_dir")["status"] == "pass"


TEMP_DIR_MESSAGES = {
    "temp-dir-unusable": [
        # CPython Lib/tempfile.py, as it raised here (/tmp, /var/tmp and the working directory read-only)
        "FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', "
        "'/run/tmp24cwd']",
        # libiberty make_temp_file, gcc 12.2 here on a read-only /tmp and working directory
        "Cannot create temporary file in ./: Read-only file system",
        # gcc toplev.cc and gas write.c, gcc 12.2 here on a full tmpfs at /tmp
        "/dev/shm/t24.c:1:1: fatal error: error closing /tmp/cc5tleEc.s: No space left on device",
        "big.c:4000:1: fatal error: error writing to /tmp/ccDcgqpw.s: No space left on device",
        "/tmp/ccBlY2V0.s: Fatal error: can't write 29 bytes to section .eh_frame of /tmp/ccPBndu2.o: "
        "'No space left on device'",
        "/tmp/ccVezjLk.s: Fatal error: /tmp/cc6Ylf6f.o: No space left on device",
    ],
}

test_temp_dir_message_in_every_wrapper, test_temp_dir_message_matches_its_own_signature = \
    family_tests(TEMP_DIR_MESSAGES)

# near misses: a temporary directory named in a healthy line, a full disk that is no compiler's temp file
test_temp_dir_near_misses_name_nothing = healthy_test([
    "Using temporary directory /tmp/tmpab12cd34 for the build",
    "export TMPDIR=/scratch/tmp && python train.py",
    "gcc -c -o /tmp/ccache/foo.o foo.c",
])


def test_temp_dir_near_miss_of_a_full_disk_is_not_the_temp_dir():
    expl = explain_text("OSError: [Errno 28] No space left on device: '/data/checkpoints/step_1000.pt'\n")
    assert [c.code for c in expl.candidates][:1] == ["disk-full"]


def test_the_kernel_launch_child_builds_in_the_users_temporary_directory(stack_python, cli_env, tmp_path):
    """triton.kernel_launch's launch runs in a child forked from the interpreter that imported torch,
    whose TMPDIR and working directory are stackpeel's scratch. What that child builds (Triton's
    helpers, the kernel's launcher) it now builds in the user's temporary directory, in a stamped
    folder there (tmp25). On this CPU machine the launch stops at Triton's driver; what the child
    saw before that is in its facts."""
    user_tmp = tmp_path / "user-tmp"
    user_tmp.mkdir()
    report, p = stackpeel_cli("--python", stack_python, "--fresh", "--only", "triton.kernel_launch",
                              env=dict(cli_env, TMPDIR=str(user_tmp)))
    fresh = result(report, "triton.kernel_launch")["facts"]["fresh"]
    seen = fresh["temp"]
    assert seen["TMPDIR"] == str(user_tmp) and seen["python_tmpdir"] == str(user_tmp), seen
    assert seen["cwd"] == os.getcwd() and seen["error"] is None
    assert os.path.dirname(seen["folder"]) == str(user_tmp) and "stackpeel-triton-" in seen["folder"]
    assert list(user_tmp.iterdir()) == []  # the folder went with the launch
    # negative control: stackpeel's own scratch is not what the child saw
    assert "stackpeel-" not in os.path.dirname(seen["folder"])


def test_the_kernel_launch_child_meets_the_users_read_only_tmp(can_unshare, outside_tmp, stack_python, abs_cli_env):
    """Under a read-only /tmp, /var/tmp and working directory, stackpeel's scratch moves to /dev/shm, but
    the launch child meets the user's fault: tempfile finds no directory, as the user's kernel would."""
    report, p = stackpeel_cli("--python", stack_python, "--fresh", "--only", "triton.kernel_launch",
                              env=abs_cli_env, wrap=_fault("ro"))
    seen = result(report, "triton.kernel_launch")["facts"]["fresh"]["temp"]
    assert seen["TMPDIR"] is None and seen["folder"] is None, seen
    assert "No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', '/run/stackpeel-tmp24-cwd']" \
        in seen["error"], seen
    assert "temp-dir-unusable" in [c for r in roots(report).values() for c in r["codes"]]


@pytest.mark.parametrize("size, ok", [("16k", False), ("64k", True)])
def test_the_extension_build_needs_about_32_kib_of_the_temporary_directory(can_unshare, stack_python, cli_env,
                                                                          size, ok):
    """The extension-build probe writes its source, gcc's .s/.o and the .so in the user's TMPDIR:
    sampled peak 32 KiB (tmp25). On a 16 KiB tmpfs ld's output fails ('final link failed: No space
    left on device'), which is the temporary directory too; on a 64 KiB one the build passes."""
    wrap = f"mkdir -p /run/stackpeel-tmp25-t && mount -t tmpfs -o size={size} tmpfs /run/stackpeel-tmp25-t"
    report, _ = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.extension_build",
                              env=dict(cli_env, TMPDIR="/run/stackpeel-tmp25-t"), wrap=wrap)
    build = result(report, "toolchain.extension_build")
    assert (build["status"] == "pass") is ok, build
    if not ok:
        assert build["facts"]["failure_kind"] == "temp-dir", build["facts"]
        assert "No space left on device" in build["facts"]["missing"]
        assert "toolchain.extension_build" in [s["check"] for s in roots(report)["toolchain.temp_dir"]["symptoms"]]


@pytest.mark.parametrize("size, status", [("200m", "warn"), ("300m", "pass")])
def test_low_space_line_is_256_mib_on_a_real_tmpfs(can_unshare, stack_python, cli_env, size, status):
    """LOW_TMP_FREE (tmp25): the largest measured need in the temporary directory is torch.compile's
    149 MiB precompiled header (a CUDA extension build with nvcc: 54 MiB for one architecture), with a
    1.7x margin. A real 200 MiB tmpfs as TMPDIR is degraded, a 300 MiB one passes."""
    assert LOW_TMP_FREE == 256 << 20
    wrap = f"mkdir -p /run/stackpeel-tmp25-t && mount -t tmpfs -o size={size} tmpfs /run/stackpeel-tmp25-t"
    report, _ = stackpeel_cli("--python", stack_python, "--fresh", "--only", "toolchain.temp_dir",
                              env=dict(cli_env, TMPDIR="/run/stackpeel-tmp25-t"), wrap=wrap)
    r = result(report, "toolchain.temp_dir")
    assert r["status"] == status, r
    if status == "warn":
        msg = r["findings"][0]["message"]
        assert "(below 262144 KiB)" in msg and "54 MiB for one GPU architecture" in msg, msg


# --------------------------------------------------------------------------------------------------
# tmp26: a compiler's own temporary files go in a stamped folder of the directory it would choose


def test_the_compiler_gets_a_stamped_folder_where_it_would_have_written(tmp_path):
    """common.compiler_env: the probe's own stamped folder when it lies in gcc's choice of directory;
    else a stamped ``stackpeel-cc-`` folder made *there* (the user's file system stays the one written
    to); unchanged where gcc's choice cannot hold a folder (it meets the fault itself)."""
    common = load_probe("_common")
    user, other = tmp_path / "user", tmp_path / "other"
    user.mkdir()
    other.mkdir()
    own = common.stamped_mkdtemp("stackpeel-ext-", str(user))
    env, made = common.compiler_env({"TMPDIR": str(user), "PATH": "/usr/bin"}, str(tmp_path), own)
    assert made is None and {env[v] for v in ("TMPDIR", "TMP", "TEMP")} == {own} and env["PATH"] == "/usr/bin"
    # Python writes elsewhere (its folder in `other`): gcc's directory is still `user`
    elsewhere = common.stamped_mkdtemp("stackpeel-triton-", str(other))
    env, made = common.compiler_env({"TMPDIR": str(user)}, str(tmp_path), elsewhere)
    assert made and os.path.dirname(made) == str(user) and os.path.basename(made).startswith("stackpeel-cc-")
    assert (Path(made) / ".owner").read_text().split()[0] == str(os.getpid()) and env["TMPDIR"] == made
    # a TMPDIR gcc skips (missing): it writes in /tmp, and so does its folder
    env, made2 = common.compiler_env({"TMPDIR": str(tmp_path / "gone")}, str(tmp_path), None)
    try:
        assert os.path.dirname(made2) == "/tmp" and env["TMPDIR"] == made2
    finally:
        shutil.rmtree(made2)
    # negative control: gcc's choice holds no folder (TMPDIR=/proc: access() passes for root, mkdir
    # fails): the environment is the user's, unchanged, and gcc meets /proc itself
    if os.geteuid() == 0:
        user_env = {"TMPDIR": "/proc", "TMP": "/x"}
        assert common.compiler_env(user_env, str(tmp_path), own) == (user_env, None)
