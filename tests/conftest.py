"""Shared fixtures.

``stack_python``: a real virtualenv with CPU torch, triton, flash-linear-attention and
transformers (``scripts/make-stack-venv`` builds it at ``.venv-stack``; override with
``STACKPEEL_STACK_PYTHON``). Tests that need it fail loudly when it is missing under CI,
and skip with the command to build it elsewhere.

``other_pythons``: the interpreters of other minor versions (pyenv), to run probes under
3.8 and 3.13 as well.
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# a check that emits a finding code it does not declare (Check.codes) fails the test that
# ran it, in this process and in every stackpeel child it starts
os.environ["STACKPEEL_STRICT_CODES"] = "1"
# probe facts that do not fit their declared shape (Check.facts, stackpeel/facts.py) raise
# instead of becoming an error result: missing keys, wrong types, undeclared keys
os.environ["STACKPEEL_STRICT_FACTS"] = "1"


def _stack_python():
    env = os.environ.get("STACKPEEL_STACK_PYTHON")
    if env:
        return env
    cand = ROOT / ".venv-stack" / "bin" / "python"
    return str(cand) if cand.exists() else None


@pytest.fixture(scope="session")
def stack_python() -> str:
    py = _stack_python()
    if not py:
        if os.environ.get("CI"):
            pytest.fail("the stack venv is missing: .ci/run must build it (scripts/make-stack-venv)")
        pytest.skip("no stack venv: run scripts/make-stack-venv (or set STACKPEEL_STACK_PYTHON)")
    return py


def find_python(minor: str):
    """An interpreter of version ``minor`` (e.g. "3.8"), or None.

    pyenv's real interpreters first: its shims on PATH refuse versions that are not selected.
    """
    roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    for root in filter(None, roots):
        hits = sorted(glob.glob(os.path.join(root, "versions", f"{minor}.*", "bin", "python")))
        if hits:
            return hits[-1]
    exe = shutil.which(f"python{minor}")
    if exe and "shims" not in exe:
        return exe
    return None


@pytest.fixture(scope="session", params=["3.8", "3.13"])
def other_python(request) -> str:
    py = find_python(request.param)
    if not py:
        if os.environ.get("CI"):
            pytest.fail(f"Python {request.param} not found; target code must be tested on it")
        pytest.skip(f"Python {request.param} not installed")
    return py


@pytest.fixture
def clean_env():
    """The current environment minus variables that would change what checks see."""
    env = dict(os.environ)
    for k in ("CUDA_VISIBLE_DEVICES", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_LIBCUDA_PATH", "TRITON_PTXAS_PATH",
              "TRITON_PTXAS_BLACKWELL_PATH", "CC", "PYTHONPATH"):
        env.pop(k, None)
    return env


def no_compiler_path(tmp_path: Path) -> str:
    """A directory of symlinks to every program on PATH except C compilers (GPU_NOTES recipe)."""
    d = tmp_path / "nocc-bin"
    d.mkdir(exist_ok=True)
    banned = ("cc", "gcc", "g++", "c++", "c89", "c99", "cpp", "tcc", "x86_64-linux-gnu-gcc")
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            if (name in banned or name.startswith("clang") or "-gcc" in name or name.startswith("gcc-")
                    or name.startswith("g++") or "-g++" in name or name.endswith("-cc")):
                continue
            link = d / name
            src = os.path.join(entry, name)
            if not link.exists() and os.access(src, os.X_OK) and not os.path.isdir(src):
                link.symlink_to(src)
    return str(d)


@pytest.fixture
def nocc_env(tmp_path, clean_env):
    """Environment with every C compiler removed from PATH and CC unset."""
    env = dict(clean_env)
    env["PATH"] = no_compiler_path(tmp_path)
    env.pop("CC", None)
    return env


@pytest.fixture(autouse=True)
def signatures_without_priors(request):
    """The pattern and ranking tests pin what signatures, clues and facts say of a log; the base
    rates of earlier threads (explain/priors.py), which put a cause before a symptom shown alone,
    are pinned by the modules that set ``USES_PRIORS = True`` (tests/test_explain_priors.py, and
    the corpus tests that measure explain as a user gets it). CLI runs in a subprocess get them."""
    if getattr(request.module, "USES_PRIORS", False):
        yield
        return
    from stackpeel.explain import priors

    with priors.off():
        yield


@pytest.fixture(scope="session", autouse=True)
def private_result_cache(tmp_path_factory):
    """`stackpeel check` reuses an unchanged machine's results from $XDG_CACHE_HOME/stackpeel:
    the tests' CLI runs use a cache of their own, never the user's (tests/test_speed.py
    covers the cache itself)."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory) -> Path:
    """A fresh venv with stackpeel (built from this tree), templates/plugin and the test
    plugins of tests/data/plugin_pkg installed from wheels: offline, --no-build-isolation
    (setuptools from the test extras), copies so the tree gets no build/ or egg-info."""
    import subprocess
    import sys

    import setuptools

    if tuple(int(x) for x in setuptools.__version__.split(".")[:2]) < (70, 1):
        pytest.fail(f"setuptools {setuptools.__version__} cannot build wheels without the 'wheel' package: "
                    "pip install -e '.[test]' (it asks for setuptools>=70.1)")
    base = tmp_path_factory.mktemp("plugin-venv")
    sources = {"stackpeel": ROOT, "template": ROOT / "templates" / "plugin", "test": ROOT / "tests" / "data" / "plugin_pkg"}
    copies = []
    for name, src in sources.items():
        dst = base / "src" / name
        if name == "stackpeel":
            shutil.copytree(src / "src", dst / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
            for f in ("pyproject.toml", "README.md"):
                shutil.copy(src / f, dst / f)
        else:
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
        copies.append(str(dst))
    quiet = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"}
    env = dict(os.environ, **quiet)
    def run(*argv: str) -> None:
        p = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"{argv[:3]} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"

    run("-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(base / "wheels"), *copies)
    run("-m", "venv", "--without-pip", str(base / "venv"))
    run("-m", "pip", "--python", str(base / "venv" / "bin" / "python"), "install", "-q", "--no-deps",
        *sorted(map(str, (base / "wheels").glob("*.whl"))))
    return base / "venv"
