"""The names ``stackpeel`` documents as its Python API (README, the package docstring) are what
they say, whatever was imported before: the package hands most of them out on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import stackpeel


@pytest.mark.parametrize("first", ["", "import stackpeel.render.text", "import stackpeel.render.json",
                                   "import stackpeel.engine", "import stackpeel.cli"])
def test_public_names_are_the_api_after_any_import(first):
    """``render`` shares its name with the subpackage ``stackpeel.render``: importing one of its
    modules first must not turn ``stackpeel.render`` into a module (it did once)."""
    code = (f"{first}\nimport stackpeel, inspect\nfrom stackpeel import check, render, require\n"
            "assert callable(render) and not inspect.ismodule(render), render\n"
            "assert stackpeel.render is render and callable(check) and callable(require)\n"
            "print(sorted(n for n in stackpeel.__all__ if inspect.ismodule(getattr(stackpeel, n))))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_every_exported_name_resolves():
    for name in stackpeel.__all__:
        assert getattr(stackpeel, name) is not None, name
