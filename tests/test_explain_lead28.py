"""Packages whose name begins with ``triton`` but are not OpenAI's Triton (issue 8, item 2).

NVIDIA's Triton Inference Server client is ``tritonclient`` (``pip install tritonclient[all]``);
``tritonserver`` and ``triton_python_backend_utils`` belong to the server. CPython's import system
(Lib/importlib/_bootstrap.py ``_find_and_load_unlocked``) reports the top-level name that is
missing: ``No module named 'tritonclient'``. Before this, the missing-package signature refused
every name that merely started with ``triton`` (to leave Triton's own ``triton-not-installed`` its
line), so a missing ``tritonclient`` was an unexplained error.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text

from test_explain_patterns import WRAPPERS


def codes(text: str):
    return [c.code for c in explain_text(text + "\n").candidates]


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", ["tritonclient", "tritonserver", "triton_python_backend_utils"])
def test_a_missing_package_named_triton_something_is_not_tritons(name, wrapper):
    line = "ModuleNotFoundError: No module named '%s'" % name
    got = codes(WRAPPERS[wrapper](line))
    assert got[:1] == ["python-package-not-installed"], (wrapper, got)
    assert "triton-not-installed" not in got, got


@pytest.mark.parametrize("text", [
    "ModuleNotFoundError: No module named 'triton'",
    "ModuleNotFoundError: No module named triton",
    # a wrapped line whose next line starts right after the name
    "ModuleNotFoundError: No module named 'triton'\nTraceback (most recent call last):",
    "ImportError: No module named triton",
])
def test_tritons_own_absence_keeps_its_code(text):
    got = codes(text)
    assert got[:1] == ["triton-not-installed"], got
    assert "python-package-not-installed" not in got, got
