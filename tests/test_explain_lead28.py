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


# -- bench/explain_invariance.py: a cut's losses, and which of them kept the answer's own line --

def _invariance():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "explain_invariance.py"
    spec = importlib.util.spec_from_file_location("explain_invariance_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n", [1, 3, 4, 9, 10])
def test_the_cuts_keep_the_lines_they_say_they_keep(n):
    inv = _invariance()
    body = "\n".join("line %d" % i for i in range(1, n + 1))
    for name, top in inv.CUTS.items():
        kept = inv.TRANSFORMS[name][1](body).split("\n")
        assert kept == ["line %d" % i for i in inv._kept_lines(top, n)], (name, kept)
        assert len(kept) == n - n // 4


def test_the_signature_line_is_the_message_not_the_context_beside_it():
    """A cut counts as fragile only when it kept a line a signature matched: here the NCCL error
    line, not the question about NCCL_SOCKET_IFNAME that picked the variant."""
    inv = _invariance()
    log = ("What do I set NCCL_SOCKET_IFNAME to on both nodes?\n"
           "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:410, "
           "unhandled system error, NCCL version 2.4.8\n")
    cand = inv.first(log, "")
    assert cand is not None
    clue_lines = {e.line for e in cand.evidence if e.entry.startswith("clue:")}
    assert 2 in inv.signature_lines(cand), cand.evidence
    assert not clue_lines & set(inv.signature_lines(cand))
