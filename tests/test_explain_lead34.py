"""Session 34 (lead): the joins of an unexplained error line with its neighbours
(``LogScanner._rejoin``) search :data:`~stackpeel.explain.parser.SEAM_CHARS` either side of
the break, not both whole lines (64 error lines of 16 KB had taken 6.5 s of CPU). A message cut
at the break is still read when a long line stands on either side of it."""
from stackpeel.explain import explain_text
from stackpeel.explain.parser import SEAM_CHARS

# triton/runtime/build.py's message, cut before 'C compiler' (an upper-case word, which the
# seam pass for lower-case continuations leaves apart)
HEAD = "RuntimeError: Failed to find"
TAIL = "C compiler. Please specify via CC environment variable or set triton.knobs.build.impl."
NOISE = "step 12 loss 0.25 " * (3 * SEAM_CHARS // 18)


def test_the_cut_message_is_read_without_long_lines():
    expl = explain_text(f"epoch 1/10\n{HEAD}\n{TAIL}\n")
    assert expl.root.code == "no-c-compiler" and expl.root.basis == "signature"


def test_a_message_cut_at_the_end_of_a_long_line_is_still_joined():
    assert len(NOISE) > 2 * SEAM_CHARS
    expl = explain_text(f"epoch 1/10\n{NOISE}{HEAD}\n{TAIL}\n")
    assert expl.root.code == "no-c-compiler" and expl.root.basis == "signature"
    # the evidence is the whole joined line, not the window that was searched
    assert expl.root.evidence[0].text.endswith("triton.knobs.build.impl.")


def test_a_message_cut_before_a_long_next_line_is_still_joined():
    expl = explain_text(f"epoch 1/10\n{HEAD}\n{TAIL} {NOISE}\n")
    assert expl.root.code == "no-c-compiler" and expl.root.basis == "signature"


def test_a_message_split_by_more_than_the_window_is_not_joined():
    """Near-miss: the two halves SEAM_CHARS apart are no message cut at one break."""
    expl = explain_text(f"epoch 1/10\n{HEAD} {NOISE}\n{TAIL}\n")
    assert not expl.root or expl.root.code != "no-c-compiler" or expl.root.basis != "signature"
