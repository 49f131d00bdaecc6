"""The scanner searches the line gate once per line it reads, not twice (perf36).

clean35's seam check (a wrapped failure whose pieces hold no error word) was put in front of the
flagged-line branch of ``LogScanner._line`` as ``if gate(rest) is None and ... elif gate(rest) is
not None``: every flagged line ran the whole gate alternation a second time (about 2,080 more
searches on bench/explain_bench.py's 3 MB log). No timing here: the count of gate searches per
line, and the answers on a wrapped failure and a plain traceback.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from stackpeel.explain.parser import LogScanner

LOG = """\
2026-11-29 12:00:01,001 INFO trainer.py:120] step=1 loss=0.5
2026-11-29 12:00:02,001 WARNING checkpoint.py:12] slow storage, save took 3.21s
Traceback (most recent call last):
  File "/app/train.py", line 88, in <module>
    loss = model(batch).loss
AttributeError: module 'torch.cpu' has no attribute 'device'
RuntimeError: Failed to find C compiler. Please specify via CC environment variable.
"""


def _gate_calls(text: str) -> tuple:
    scanner = LogScanner()
    calls = []
    gate = scanner._gate

    def counted(s, *a):
        calls.append(s)
        return gate(s, *a)

    scanner._gate = counted
    scanner.feed(text)
    scanner.close()
    return calls


def test_each_flagged_line_passes_the_line_gate_once():
    calls = _gate_calls(LOG)
    assert calls, "the flagged lines are read"
    repeated = [s for s in set(calls) if calls.count(s) > 1]
    assert repeated == []


def test_the_answers_stay():
    assert explain_text(LOG).root.code == "no-c-compiler"
    # a healthy log: no root cause
    assert explain_text("step 1/10 done\nSaving model checkpoint to out/checkpoint-500\n").root is None
