"""tools31b: exit status 0 is no death; ROCm/HIP wordings; wordings of other releases.

Every line is a message as the library prints it (its raise site is named beside it); each is
read plain, and where it matters wrapped, quoted and prefixed, with a near miss that must stay
unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text, vocabulary


def codes(text):
    return [c.code for c in explain_text(text if text.endswith("\n") else text + "\n").candidates]


def top(text):
    c = codes(text)
    return c[0] if c else None


# -- 3. vocabulary `process-died`: exit status 0 is success, never a death

def _died():
    return next(w for w in vocabulary.load().words if w.id == "process-died")


@pytest.mark.parametrize("line", [
    "error: process exited with code 0",
    "Error: subprocess exited with status 0",
    "error: exit status 0",
    "[worker 3] exited with code 0x0",
    "[worker 3] exited with code 0x00000000",
    "Process exited with code 0.",
])
def test_exit_status_zero_is_no_death(line):
    assert not _died().search(line)
    guesses = vocabulary.guess([(1, line, "", 1.0)], {}, {}, vocabulary.load())
    assert all("process-died" not in [w for w, _ in g.words] for g in guesses)


@pytest.mark.parametrize("line", [
    "error: process exited with code 1",
    "error: process exited with code -9",
    "error: process exited with code 0xC0000005",
    "error: process exited with code 0x0000000B",
    "Error: subprocess exited with status 139",
])
def test_a_nonzero_exit_status_still_reads_as_a_death(line):
    assert _died().search(line)
    guesses = vocabulary.guess([(1, line, "", 1.0)], {}, {}, vocabulary.load())
    assert any("process-died" in [w for w, _ in g.words] for g in guesses)
