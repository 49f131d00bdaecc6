"""A user's sentence naming a symptom does not silence a program's catch-all line (issue 8, prec21).

A catch-all signature (a bare CUDA error name, ``fallback = true``) speaks only where no other
signature matched. A `said` symptom ("can't use nvidia GPU only after sleep", ollama#6647) counts
only where no program's line shows the failure, so when both matched, the sentence was dropped
because the catch-all's line shows the failure, and the catch-all was dropped because the sentence
matched: explain answered nothing."""
import pytest

from test_explain_patterns import codes_of as codes

SAID = "can't use nvidia GPU only after sleep"   # ollama#6647, the reporter's title


@pytest.mark.parametrize("error", [
    "RuntimeError: CUDA error: unknown error",
    "[rank0]: RuntimeError: CUDA error: unknown error",
    "> RuntimeError: CUDA error: unknown error",
    "`RuntimeError: CUDA error: unknown error`",
])
def test_the_catch_all_line_still_speaks_beside_a_users_symptom_sentence(error):
    found = codes(f"{SAID}\n{error}")
    assert "cuda-error-unclassified" in found, found
    assert found[0] in ("nvidia-uvm-broken-after-suspend", "cuda-error-unclassified"), found


def test_the_sentence_alone_is_still_read_as_its_symptom():
    found = codes("GPU not detected on fresh install")
    assert "torch-cuda-unavailable" in found[:2], found


def test_a_programs_specific_line_still_silences_the_catch_all():
    found = codes("RuntimeError: CUDA error: out of memory\nCUDA error: cudaErrorUnknown")
    assert found[0] == "gpu-out-of-memory" and "cuda-error-unclassified" not in found, found
