"""Recall of explain on build failures, from a symptom sweep (sweepb): 15 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02f``) taken in search order for
the symptoms users paste when an install or extension build fails (gcc failed, cuda_runtime.h,
ninja build stopped, unsupported GNU version, CUDA_HOME, MSVC 14.0, -lcuda, Python.h, wheel
builds). 11 of 15 ranked first before any rule; the classes the misses showed:

- setuptools' Visual C++ message in its older wordings, ``Microsoft Visual C++ 14.0 is required``
  (setuptools before 55) and ``... 9.0 is required`` / ``10.0 is required`` (Python 2.7 and 3.4):
  no C compiler, as the current ``14.0 or greater is required`` already was (Anaconda-Platform/
  support 125).
- pip building PyPI's torch 0.1.2.postN placeholder sdist (``torch-0.1.2.post2.tar.gz``,
  ``setup(name="torch", version="0.1.2.post2"``, its ``No module named 'tools.nnwrap'``): it is only taken when no torch wheel fits the
  interpreter (32-bit Python on Windows, a Python too new or too old), so the build failure after it
  is package-no-matching-wheel (pytorch 46775).
- the pip ``ninja`` package's console script that cannot import its module (``File
  "/usr/local/bin/ninja"``, ``from ninja import ninja``, ``No module named 'ninja'``): torch's
  ``ninja --version`` check then finds no working ninja (Self-Correction-Human-Parsing 56).

The thread whose log holds only ``error: command 'gcc' failed with exit status 1`` (its cause,
the Python headers, is only in the maintainer's answer) stays a miss: tests/test_explain_corpus.py.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "no-c-compiler": [
        # setuptools/msvc.py and _distutils/_msvccompiler.py across releases
        'error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ Build Tools": '
        "https://visualstudio.microsoft.com/visual-cpp-build-tools/",
        'error: Microsoft Visual C++ 14.0 is required. Get it with "Build Tools for Visual Studio": '
        "https://visualstudio.microsoft.com/downloads/",
        'error: Microsoft Visual C++ 14.0 is required. Get it with "Microsoft Visual C++ Build Tools": '
        "https://visualstudio.microsoft.com/downloads/",
        "error: Microsoft Visual C++ 9.0 is required. Get it from http://aka.ms/vcpython27",
        "error: Microsoft Visual C++ 10.0 is required (Unable to find vcvarsall.bat).",
        # as the thread's title quotes it (Anaconda-Platform/support#125)
        "error: Microsoft Visual C++ 14.0 is required",
    ],
    "package-no-matching-wheel": [
        # pip's lines for PyPI's placeholder sdist (pytorch/pytorch#46775, #34798, #28840)
        "  Using cached torch-0.1.2.post2.tar.gz (128 kB)",
        "  Downloading https://files.pythonhosted.org/packages/f8/02/880b468bd382dc79896eaecbeb8ce95e9c4b99a24902874a2cef0b562cea/torch-0.1.2.post2.tar.gz (128kB)",
        "  Using cached https://files.pythonhosted.org/packages/5f/e9/bac4204fe9cb1a002ec6140b47f51affda1655379fe302a1caef421f9846/torch-0.1.2.post1.tar.gz",
        # the placeholder's setup.py frame in the build's traceback
        '      setup(name="torch", version="0.1.2.post2",',
        # its build_deps step on Windows (pytorch/pytorch#34612, #37126)
        "        from tools.nnwrap import generate_wrappers as generate_nn_wrappers",
        "    ModuleNotFoundError: No module named 'tools.nnwrap'",
    ],
    "ninja-missing": [
        # the pip ninja package's bin/ninja script, as its traceback shows it
        "    from ninja import ninja",
        '  File "/usr/local/bin/ninja", line 6, in <module>',
        '  File "/home/u/miniconda3/envs/x/bin/ninja", line 5, in <module>',
        "ModuleNotFoundError: No module named 'ninja'",
        "ImportError: No module named ninja",
    ],
    "libcuda-not-in-ldconfig": [
        # ld's message as users retype it (czimaginginstitute/AreTomo2#24)
        "/usr/bin/ld : can not not find -lcuda error while compiling the software.",
        "/usr/bin/ld: can not find -lcuda",
        "getting error could not find -lcuda while compiling AreTomo2 on Redhat8",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

# users' words that carry the message (quoted, mid-sentence)
test_users_words_name_the_cause = users_words_test({
    "When I pip install it I get `error: Microsoft Visual C++ 14.0 is required` and nothing else": "no-c-compiler",
    "pip install torch keeps downloading torch-0.1.2.post2.tar.gz and then fails to build it": "package-no-matching-wheel",
    "I have installed ninja but it still says No module named 'ninja' when the extension compiles": "ninja-missing",
})

# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "Successfully installed ninja-1.11.1.1",
    "Requirement already satisfied: ninja in /usr/local/lib/python3.10/dist-packages (1.11.1)",
    "Downloading torch-2.1.0-cp310-cp310-win_amd64.whl (2619.2 MB)",
    "Collecting torch==2.1.0+cu121",
    "Installing Microsoft Visual C++ Build Tools 2022",
    "/usr/bin/ld: skipping incompatible /usr/lib32/libcuda.so when searching for -lcuda",
    "g++ main.o -o main -L/usr/local/cuda/lib64/stubs -lcuda -lcudart",
])


def test_the_placeholder_sdist_outranks_the_failed_build_it_causes():
    """pip's own failure lines after the placeholder (Failed building wheel, setup.py install error)
    are a generic build failure; the tarball's name decides."""
    log = "\n".join([
        "Collecting torch",
        "  Using cached torch-0.1.2.post2.tar.gz (128 kB)",
        "Building wheels for collected packages: torch",
        "  Building wheel for torch (setup.py): finished with status 'error'",
        "  ERROR: Failed building wheel for torch",
        "Failed to build torch",
        "    Running setup.py install for torch: finished with status 'error'",
    ]) + "\n"
    assert [c.code for c in explain_text(log).candidates][:1] == ["package-no-matching-wheel"]


def test_a_broken_ninja_script_outranks_the_triton_guess():
    """``No module named 'ninja'`` under the script's frame is ninja, not a missing Triton."""
    log = "\n".join([
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/ninja", line 6, in <module>',
        "    from ninja import ninja",
        "ModuleNotFoundError: No module named 'ninja'",
    ]) + "\n"
    assert [c.code for c in explain_text(log).candidates][:1] == ["ninja-missing"]


@pytest.mark.parametrize("line,not_code,code", [
    # near misses of ninja-missing and of the torch placeholder sdist's tools.nnwrap; since apps27
    # a missing module is a code of its own (a package not installed, the program's own module)
    ("No module named 'ninja_syntax'", "ninja-missing", "python-package-not-installed"),
    ("No module named 'tools.setup_helpers2'", "package-no-matching-wheel", "python-project-module-not-found"),
])
def test_near_misses_of_ninja_and_nnwrap_name_only_the_generic_code(line, not_code, code):
    codes = [c.code for c in explain_text(line + "\n").candidates]
    assert not_code not in codes and codes[:1] == [code], codes
