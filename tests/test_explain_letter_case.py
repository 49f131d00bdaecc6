"""An error line no signature matches as written is matched again whatever the letter case
(explain/knowledge.py ``match_line_folded``, parser ``MAX_FOLDED``): Go programs of the stack print
their errors in lower case, and users retype messages."""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain import parser as parser_mod
from stackpeel.explain.knowledge import load


@pytest.mark.parametrize("line, code", [
    # the k8s device plugin (go-nvml) prints NVML's errors in lower case
    ("E1202 10:01:02.123 main.go:123] failed to initialize nvml: unknown error", "gpu-access-revoked"),
    ("Error: cudnn_status_not_initialized", "cudnn-unusable"),
    ("RuntimeError: cuda driver version is insufficient for cuda runtime version", "driver-too-old-for-torch"),
    ("Error: NO KERNEL IMAGE IS AVAILABLE FOR EXECUTION ON THE DEVICE", "torch-arch-not-supported"),
])
def test_a_message_in_another_letter_case_names_its_cause(line, code):
    assert not load().match_line(line), "matches as written: not a case for the folded pass"
    expl = explain_text(line + "\n")
    assert expl.candidates and code in [c.code for c in expl.candidates][:2], [c.code for c in expl.candidates]


@pytest.mark.parametrize("line", [
    "INFO: nccl debug level set, no errors so far",
    "loss 0.41 at step 100 (failed batches: 0)",
])
def test_healthy_lines_stay_quiet(line):
    assert not explain_text(line + "\n").candidates


def test_the_folded_pass_is_bounded_per_log(monkeypatch):
    calls = []
    kb = load()
    real = type(kb).match_line_folded
    monkeypatch.setattr(type(kb), "match_line_folded", lambda self, line: calls.append(line) or real(self, line))
    text = "".join(f"RuntimeError: frobnicator {i} failed to initialise the widget\n" for i in range(parser_mod.MAX_FOLDED * 2))
    explain_text(text)
    assert 0 < len(calls) <= parser_mod.MAX_FOLDED


def test_match_codes_reads_the_same_lines_as_the_scanner():
    """`stackpeel run` names codes with match_codes: the same letter-case rule applies."""
    from stackpeel.explain.knowledge import match_codes
    assert "cudnn-unusable" in match_codes("Error: cudnn_status_not_initialized")
    assert match_codes("the frobnicator failed") == []
