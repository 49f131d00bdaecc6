"""toolchain.cxx_compiler (chk27): torch 2.14's headers need C++20, so the C++ compiler torch's
cpp_extension runs (CXX, else c++) must compile it. Real compiles with the real g++ here (12.2 on
CI, 13.3 on the GPU image; C++20-capable) and two real faults: a CXX that runs the real g++ with ``-std=c++17`` forced last
(what gcc 10's ``__cplusplus`` 201709L, or a wrapper's flag, gives torch's test), and a CXX that
answers ``-std=c++20`` the way gcc 9 does (its own words, ``--version`` line included). The
target's torch version is read from torch/version.py: a real torch 2.13 (the stack venv) and a
torch package whose version.py says 2.14.0 (nothing imports it). Negative controls: below 2.14
nothing is compiled or said, even with a compiler that cannot do C++20."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.checks.base import Context
from stackpeel.checks.toolchain import CxxCompiler
from stackpeel.host import detect
from stackpeel.model import Severity, Status
from stackpeel.runner import run_one
from shapes import answer

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="needs the real g++")

# what g++ 9.4 (Ubuntu 20.04) prints for -std=c++20, verbatim
GCC9_WORDS = "g++: error: unrecognized command-line option '-std=c++20'; did you mean '-std=c++2a'?"


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def faults(tmp_path):
    forced = _script(tmp_path / "g++-forced-17", f'exec {GXX} "$@" -std=c++17\n')
    gcc9 = _script(tmp_path / "g++-9", 'for a in "$@"; do case "$a" in\n'
                   '  --version) echo "g++ (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0"; exit 0;;\n'
                   f'  -std=c++20) echo "{GCC9_WORDS}" >&2; exit 1;;\nesac; done\nexec {GXX} "$@"\n')
    return {"forced": forced, "gcc9": gcc9}


@pytest.fixture(scope="module")
def torch_214(tmp_path_factory):
    """A directory holding a torch package whose version.py says 2.14.0 (never imported)."""
    root = tmp_path_factory.mktemp("torch214")
    (root / "torch").mkdir()
    (root / "torch" / "__init__.py").write_text("raise ImportError('stackpeel must not import torch')\n")
    (root / "torch" / "version.py").write_text("__version__ = '2.14.0+cu130'\ncuda: Optional[str] = '13.0'\n")
    return str(root)


def _run(python, env):
    return run_one(CxxCompiler, python, detect(python), {"python": python}, {}, env=env)


def _env(clean_env, **extra):
    env = dict(clean_env)
    env.pop("CXX", None)
    env.update(extra)
    return env


def test_torch_214_with_the_real_gxx_passes(clean_env, torch_214):
    r = _run(sys.executable, _env(clean_env, PYTHONPATH=torch_214))
    assert r.facts["torch_files"]["version"] == "2.14.0+cu130" and r.facts["needs_cxx20"] is True
    assert r.facts["attempted"] and r.facts["kind"] == "ok" and r.facts["rc"] == 0, r.facts
    assert r.status is Status.PASS and "compiles C++20" in r.summary and r.findings == ()
    # which program `c++` was on PATH (the probe's shutil.which), named in the summary
    assert r.facts["resolved"] == shutil.which("c++") and f"c++ at {shutil.which('c++')} (" in r.summary


def test_torch_214_with_cplusplus_below_202002_is_named(clean_env, torch_214, faults):
    r = _run(sys.executable, _env(clean_env, PYTHONPATH=torch_214, CXX=faults["forced"]))
    assert r.facts["kind"] == "cplusplus" and r.facts["rc"] != 0
    assert r.status is Status.WARN and [f.code for f in r.findings] == ["extension-cxx-standard-too-old"]
    f = r.findings[0]
    assert f.severity is Severity.DEGRADED
    # the real g++'s own words and version line, and torch's version
    assert "stackpeel-cxx20-probe: __cplusplus below 202002L" in f.evidence
    major = subprocess.run([GXX, "-dumpversion"], capture_output=True, text=True).stdout.strip().split(".")[0]
    assert f"{major}." in f.message and "__cplusplus" in f.message and "2.14.0+cu130" in f.message
    assert faults["forced"] in f.message


def test_torch_214_with_a_gcc9_that_does_not_know_the_flag(clean_env, torch_214, faults):
    r = _run(sys.executable, _env(clean_env, PYTHONPATH=torch_214, CXX=faults["gcc9"]))
    assert r.facts["kind"] == "flag" and r.facts["compiler_version"].endswith("9.4.0")
    f = r.findings[0]
    assert f.code == "extension-cxx-standard-too-old" and GCC9_WORDS in f.message and "9.4.0" in f.message
    assert "-std=c++20" in f.message and GCC9_WORDS in f.evidence


def test_torch_213_says_nothing_even_with_a_compiler_that_cannot(clean_env, stack_python, faults):
    """Negative control: the real torch of the stack venv (2.13 here) needs C++17: nothing compiled."""
    r = _run(stack_python, _env(clean_env, CXX=faults["gcc9"]))
    version = r.facts["torch_files"].get("version") or ""
    if tuple(int(x) for x in version.split("+")[0].split(".")[:2]) >= (2, 14):
        pytest.skip(f"the stack venv's torch is {version}: no torch below 2.14 to control with")
    assert r.facts["needs_cxx20"] is False and r.facts["attempted"] is False and r.facts.get("kind") is None
    assert "command" not in r.facts
    assert r.status is Status.SKIP and r.findings == ()


def _python_without_torch(tmp_path: Path) -> str:
    """An interpreter that finds no torch: this one (the CI venv), else a bare venv made from its base
    interpreter (on the GPU image pytest itself runs in the torch venv)."""
    def has_torch(python):
        return subprocess.run([python, "-c", "import importlib.util, sys; "
                               "sys.exit(importlib.util.find_spec('torch') is None)"]).returncode == 0
    if not has_torch(sys.executable):
        return sys.executable
    venv = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    if has_torch(python):
        pytest.skip(f"every interpreter here finds torch ({sys.executable}, and a bare venv of its base)")
    return python


def test_no_torch_skips(clean_env, faults, tmp_path):
    r = _run(_python_without_torch(tmp_path), _env(clean_env, CXX=faults["gcc9"]))
    assert r.facts["torch_files"] == {"installed": False} and r.status is Status.SKIP and r.findings == ()


def test_the_probe_runs_on_python_38_and_313(other_python, clean_env, torch_214, faults):
    r = _run(other_python, _env(clean_env, PYTHONPATH=torch_214, CXX=faults["forced"]))
    assert r.status is Status.WARN and r.facts["kind"] == "cplusplus", (r.summary, r.facts)


# ---- recorded facts: the verdict alone -------------------------------------------------------

APT = {"pkg_manager": "apt", "is_root": True, "conda_prefix": None, "distro_id": "ubuntu", "distro_version": "22.04"}
DNF = {"pkg_manager": "dnf", "is_root": False, "conda_prefix": None, "distro_id": "rhel", "distro_version": "8.9"}
YUM = {"pkg_manager": "yum", "is_root": True, "conda_prefix": None, "distro_id": "centos", "distro_version": "7"}


def _evaluate(facts, host=APT):
    return CxxCompiler().evaluate(answer(CxxCompiler, facts), Context(host, {"python": "/opt/venv/bin/python"}, {}))


def _recorded(version, kind=None, **more):
    facts = {"cxx_env": None, "compiler": "c++", "source": "CXX unset", "attempted": kind is not None,
             "torch_files": {"installed": True, "version": version, "cuda": "13.0"},
             "needs_cxx20": tuple(int(x) for x in version.split(".")[:2]) >= (2, 14)}
    if kind is not None:
        facts.update(kind=kind, rc=1, command=["c++", "-std=c++20", "-fsyntax-only", "-x", "c++", "-"],
                     compiler_version="c++ (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0", stderr=GCC9_WORDS + "\n")
    facts.update(more)
    return facts


@pytest.mark.parametrize("host,install,cxx", [
    (APT, "apt-get install -y g++-12", "export CXX=g++-12"),
    (DNF, "dnf install -y gcc-toolset-12-gcc-c++", "export CXX=/opt/rh/gcc-toolset-12/root/usr/bin/g++"),
    (YUM, "yum install -y devtoolset-11-gcc-c++", "export CXX=/opt/rh/devtoolset-11/root/usr/bin/g++"),
])
def test_recorded_214_flag_gives_this_hosts_fix(host, install, cxx):
    v = _evaluate(_recorded("2.14.0", "flag"), host)
    assert v.status is Status.WARN and [f.code for f in v.findings] == ["extension-cxx-standard-too-old"]
    cmds = " ".join(c.command for c in v.findings[0].remedy.commands)
    assert install in cmds and cxx in cmds
    assert "9.4.0" in v.findings[0].message and "<" not in v.findings[0].message


@pytest.mark.parametrize("distro,version", [("ubuntu", "20.04"), ("debian", "11")])
def test_a_host_whose_archive_has_no_cxx20_gxx_gets_no_failing_install_command(distro, version):
    # Ubuntu 20.04 (gcc 9) and Debian 11 (gcc 10) are the hosts that fail, and neither archive holds
    # g++ 11 or newer: the fix's words (a PPA, conda-forge's gxx), no apt command that would fail
    v = _evaluate(_recorded("2.14.0", "flag"), dict(APT, distro_id=distro, distro_version=version))
    cmds = " ".join(c.command for c in v.findings[0].remedy.commands)
    assert v.status is Status.WARN and "g++-1" not in cmds, cmds
    assert "conda-forge" in str(v.findings[0].to_dict()), v.findings[0].to_dict()


def test_recorded_213_and_ok_say_nothing():
    assert _evaluate(_recorded("2.13.0")).status is Status.SKIP
    ok = _evaluate(_recorded("2.14.1", "ok", rc=0, stderr=""))
    assert ok.status is Status.PASS and ok.findings == ()


def test_a_missing_cxx_is_named_with_its_error():
    v = _evaluate(_recorded("2.14.0", "exec", error="FileNotFoundError: [Errno 2] No such file or directory: 'c++'",
                            rc=None, stderr=""))
    assert "No such file or directory: 'c++'" in v.findings[0].message
    # no compiler at all is its own cause, not an older C++ standard; the host's package installs it
    assert [f.code for f in v.findings] == ["cxx-compiler-missing"] and v.status is Status.WARN
    assert "apt-get install -y g++" in " ".join(c.command for c in v.findings[0].remedy.commands)


def test_classify_reads_old_compilers_words():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "stackpeel" / "probes"))
    import importlib
    sys.modules.setdefault("_stackpeel_probe__common", importlib.import_module("_common"))
    from toolchain import classify_cxx20 as c  # noqa: E402 (the probe module, stdlib only)
    assert c({"error": None, "rc": 1, "stderr": GCC9_WORDS}) == "flag"
    # gcc 8 spells it without the hyphen, with gcc's UTF-8 quotes
    assert c({"error": None, "rc": 1, "stderr": "g++: error: unrecognized command line option \u2018-std=c++20\u2019"}) == "flag"
    assert c({"error": None, "rc": 1, "stderr": "error: invalid value 'c++20' in '-std=c++20'"}) == "flag"  # clang 9
    assert c({"error": None, "rc": 1, "stderr": "<stdin>:1:10: fatal error: 'compare' file not found"}) == "library"
    assert c({"error": None, "rc": 0, "stderr": ""}) == "ok"
    assert c({"error": None, "rc": 1, "stderr": "internal compiler error"}) == "other"


def test_recorded_resolved_program_is_named_where_it_differs_from_cxx():
    """chk28: ``resolved`` (shutil.which of CXX's first word) says which program ran: `c++` is an
    alternatives link on Debian and Ubuntu. Named in the evidence and the summary; not repeated
    when CXX already is that path, nor when PATH has none."""
    v = _evaluate(_recorded("2.14.0", "flag", resolved="/usr/bin/c++"))
    assert v.findings[0].evidence.startswith("# c++ is /usr/bin/c++\n$ c++ -std=c++20"), v.findings[0].evidence
    ok = _evaluate(_recorded("2.14.1", "ok", rc=0, stderr="", resolved="/usr/bin/c++"))
    assert "c++ at /usr/bin/c++ (" in ok.summary
    same = _evaluate(_recorded("2.14.0", "flag", compiler="/usr/bin/g++-9", resolved="/usr/bin/g++-9"))
    assert same.findings[0].evidence.startswith("$ c++ -std=c++20") and " is /usr/bin" not in same.findings[0].evidence
    gone = _evaluate(_recorded("2.14.0", "exec", error="FileNotFoundError: 'c++'", rc=None, stderr="", resolved=None))
    assert gone.findings[0].evidence.startswith("$ c++")
