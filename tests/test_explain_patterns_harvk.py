"""Environment messages of the Python interpreter and the installers (harvk), taken from their
own source: CPython (the stdlib C modules a source build can lack, the modules and names later
releases removed), setuptools/packaging/importlib.metadata, pip, uv, Poetry, conda/mamba/libmamba,
and the removals of numpy, protobuf and Pillow that old code meets. docs/dev/harvest-harvk.md has
the table (source file, message, what explain named before and after).

Also the class behind "No module named 'distutils'" being guessed as Triton's absence: a guess by
resemblance compared only the words every missing-module line shares (``modulenotfounderror``,
``module``, ``named``); those words now count only towards a thread that names the same
missing module (stackpeel/explain/similar.py ``missing_modules``); the log's other lines count as
before.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain import similar
from test_explain_patterns import family_tests, healthy_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "python-stdlib-extension-missing": [
        # cpython Lib/lzma.py 'from _lzma import *', Lib/bz2.py, Lib/ctypes/__init__.py,
        # Lib/sqlite3/dbapi2.py, Lib/ssl.py, Lib/tkinter/__init__.py, Lib/uuid.py
        "ModuleNotFoundError: No module named '_lzma'",
        "ModuleNotFoundError: No module named '_bz2'",
        "ModuleNotFoundError: No module named '_ctypes'",
        "ModuleNotFoundError: No module named '_sqlite3'",
        "ModuleNotFoundError: No module named '_ssl'",
        "ModuleNotFoundError: No module named '_tkinter'",
        "ImportError: No module named _ctypes",
        # pandas/compat/__init__.py get_lzma_file
        "UserWarning: Could not import the lzma module. Your installed Python is incomplete. "
        "Attempting to use lzma compression will result in a RuntimeError.",
        # pip/_internal/cli/req_command.py
        "WARNING: pip is configured with locations that require TLS/SSL, however the ssl module "
        "in Python is not available.",
        # cpython Lib/tkinter/__init__.py: the comment the traceback shows on the import line
        "    import _tkinter # If this fails your Python may not be configured for Tk",
        # pyenv plugins/python-build/bin/python-build
        "WARNING: The Python lzma extension was not compiled. Missing the lzma lib?",
        "ERROR: The Python ssl extension was not compiled. Missing the OpenSSL lib?",
    ],
    "python-stdlib-module-removed": [
        # cpython Doc/whatsnew/3.12.rst (PEP 632 distutils, imp, asynchat), 3.13.rst (PEP 594)
        "ModuleNotFoundError: No module named 'distutils'",
        "ModuleNotFoundError: No module named 'distutils.util'",
        "ModuleNotFoundError: No module named 'imp'",
        "ModuleNotFoundError: No module named 'asynchat'",
        "ModuleNotFoundError: No module named 'imghdr'",
        "ModuleNotFoundError: No module named 'pipes'",
        # 3.12 pkgutil.ImpImporter (old pip / pkg_resources), 3.10 collections aliases, 3.11 inspect
        "AttributeError: module 'pkgutil' has no attribute 'ImpImporter'. Did you mean: 'zipimporter'?",
        "ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.10/collections/__init__.py)",
        "AttributeError: module 'collections' has no attribute 'Callable'",
        "AttributeError: module 'inspect' has no attribute 'getargspec'. Did you mean: 'getargs'?",
        "AttributeError: module 'configparser' has no attribute 'SafeConfigParser'. Did you mean: 'RawConfigParser'?",
    ],
    "python-externally-managed": [
        # pip/_internal/exceptions.py ExternallyManagedEnvironment
        "error: externally-managed-environment",
        "× This environment is externally managed",
        # uv crates/uv-python ExternallyManaged
        "error: The interpreter at /usr is externally managed, and indicates the following:",
    ],
    "venv-interpreter-moved": [
        # bash execute_cmd.c for a #! naming a Python that is gone
        "-bash: /home/u/proj/.venv/bin/pip: /home/u/old/.venv/bin/python3: bad interpreter: No such file or directory",
        "/bin/sh: 1: ./venv/bin/accelerate: /opt/venvs/train/bin/python3.10: bad interpreter: No such file or directory",
        # distlib PC/launcher.c, CPython's venv launcher
        "Fatal error in launcher: Unable to create process using '\"C:\\old\\venv\\Scripts\\python.exe\"  \"C:\\new\\venv\\Scripts\\pip.exe\" install torch': The system cannot find the file specified.",
        "No Python at '\"C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python310\\python.exe'",
    ],
    "python-build-tools-missing": [
        # setuptools/_distutils/dist.py (no wheel package), a setup.py's imports, pyproject-hooks
        "error: invalid command 'bdist_wheel'",
        "ModuleNotFoundError: No module named 'pkg_resources'",
        "ModuleNotFoundError: No module named 'setuptools'",
        "ModuleNotFoundError: No module named 'packaging'",
        "pip._vendor.pyproject_hooks._impl.BackendUnavailable: Cannot import 'setuptools.build_meta'",
    ],
    "dependency-version-mismatch": [
        # protobuf python/google/protobuf/descriptor.py
        "TypeError: Descriptors cannot be created directly.",
        "If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with protoc >= 3.19.0.",
        # numpy/__init__.py __getattr__ (1.24 __former_attrs__, 2.0 _expired_attrs_2_0)
        "AttributeError: module 'numpy' has no attribute 'float'.",
        "`np.int` was a deprecated alias for the builtin `int`. To avoid this error in existing code, use `int` by itself.",
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.",
        "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead.",
        # Pillow 10.0.0 release notes (constants and getsize removed)
        "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
        "AttributeError: 'FreeTypeFont' object has no attribute 'getsize'",
        # importlib_metadata 5.0 / Python 3.12
        "AttributeError: 'EntryPoints' object has no attribute 'get'",
        # packaging/version.py (22+ dropped LegacyVersion)
        "packaging.version.InvalidVersion: Invalid version: '0.23ubuntu1'",
        # pip resolvelib factory.py get_installation_error
        "ERROR: Cannot install torch==2.1.0 and torchvision==0.18.0 because these package versions have conflicting dependencies.",
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts",
        # uv NoSolutionError, Poetry SolverProblemError, conda UnsatisfiableError, libmamba
        "× No solution found when resolving dependencies:",
        "SolverProblemError: Because no versions of foo match >2.1.0,<3.0.0 and foo (2.1.0) depends on bar (1.0), foo requires bar (1.0). So, because proj depends on both, version solving failed.",
        "UnsatisfiableError: The following specifications were found to be incompatible with each other:",
        "LibMambaUnsatisfiableError: Encountered problems while solving:",
        "error    libmamba Could not solve for environment specs",
    ],
    "package-no-matching-wheel": [
        # pip DistributionNotFound for any package, when the index lists releases
        "ERROR: Could not find a version that satisfies the requirement opencv-python==4.1.2.30 (from versions: 4.5.5.64, 4.6.0.66)",
        # uv pubgrub report hints
        "hint: You require CPython 3.13 (`cp313`), but we only found wheels for `numpy` (v1.24.4) with the following Python ABI tags: `cp38`, `cp39`",
        "hint: `torch` was found on https://download.pytorch.org/whl/cu121, but not at the requested version (torch==2.5.0). A compatible version may be available on a subsequent index (e.g., https://pypi.org/simple). By default, uv will only consider versions that are published on the first index that contains a given package, to avoid dependency confusion attacks. If all indexes are equally trusted, use `--index-strategy unsafe-best-match` to consider all versions from all indexes, regardless of the order in which they were defined.",
        # conda/exceptions.py PackagesNotFoundError; libmamba problems graph
        "PackagesNotFoundError: The following packages are not available from current channels:",
        "  - nothing provides requested pytorch-cuda 12.4**",
    ],
    "kernel-library-not-installed": [
        # importlib/metadata Distribution.from_name
        "importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes",
    ],
    "flash-attn-not-installed": [
        "importlib.metadata.PackageNotFoundError: No package metadata was found for flash_attn",
    ],
    "extension-build-failed": [
        # pip/_internal/exceptions.py MetadataGenerationFailed
        "error: metadata-generation-failed",
        "note: Encountered error while generating package metadata.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# notices printed on healthy runs, with the same words: they name nothing
test_healthy_lines_name_nothing = healthy_test([
    "DEPRECATION: pkg_resources is deprecated as an API. See https://setuptools.pypa.io/en/latest/pkg_resources.html",
    "Requirement already satisfied: setuptools in ./venv/lib/python3.11/site-packages (69.5.1)",
    "Successfully installed distutils-extra-2.39 packaging-24.1 wheel-0.43.0",
    "import lzma, bz2, ctypes, sqlite3  # all present",
    "Collecting protobuf<4,>=3.20",
    "Building wheel for flash-attn (setup.py) ... done",
    "python3 -m venv .venv && . .venv/bin/activate",
    "Solving environment: done",
])


@pytest.mark.parametrize("module", ["distutils", "imp", "_lzma", "_bz2", "pkg_resources", "asynchat",
                                    "_ctypes", "readline", "some_unknown_module"])
def test_a_missing_module_resembles_no_thread_of_another_module(module):
    # the class: a missing module resembles only threads that name it, never Triton's absence
    idx = similar.load()
    assert idx is not None
    for g in idx.nearest(f"ModuleNotFoundError: No module named '{module}'"):
        assert g.code != "triton-not-installed", (module, g)
    assert "triton-not-installed" not in _codes(f"ModuleNotFoundError: No module named '{module}'\n")


def test_missing_modules_reads_the_spellings():
    assert similar.missing_modules("ModuleNotFoundError: No module named 'fla.layers.x'") == {"fla"}
    assert similar.missing_modules("ImportError: No module named triton") == {"triton"}
    assert similar.missing_modules('No module named "_lzma"') == {"_lzma"}
    assert similar.missing_modules("RuntimeError: CUDA error") == frozenset()


def test_the_named_module_still_resembles_its_own_threads():
    # the filter keeps exemplars that name the missing module
    idx = similar.load()
    text = "ModuleNotFoundError: No module named 'triton'"
    for g in idx.nearest(text):
        assert g.resembles


def test_a_solver_headline_yields_to_the_cuda_virtual_package_line():
    log = ("Could not solve for environment specs\n"
           "LibMambaUnsatisfiableError: Encountered problems while solving:\n"
           "  - nothing provides __cuda needed by pytorch-2.1.0-cuda118py310h6e9d1c2_0\n")
    assert _codes(log)[:1] == ["conda-cuda-virtual-package-unsatisfied"]


def test_pip_from_versions_none_alone_names_no_wheel_gap():
    # '(from versions: none)' is also what a name that is no package gets: it says nothing alone
    line = "ERROR: Could not find a version that satisfies the requirement split_torch_state_dict_into_shards (from versions: none)\n"
    stated = [c.code for c in explain_text(line).candidates if c.confidence != "low"]
    assert "package-no-matching-wheel" not in stated


def test_cr_lf_shebang_is_not_a_moved_venv():
    # '^M' in the interpreter's name is a script saved with Windows line ends, another cause
    assert "venv-interpreter-moved" not in _codes("-bash: ./train.sh: /bin/bash^M: bad interpreter: No such file or directory\n")
