"""tools44: the exception a user reads where torchrun's summary reports a worker's own traceback.

Where torch elastic's launcher (torchrun) reports a worker that failed with a Python exception, the
log ends with the launcher's ``ChildFailedError`` traceback and its Root Cause table, and the
worker's own traceback (the real exception) comes before it. tools43 made the ranking read the
worker's traceback (``reasoning._launcher_reports_child_traceback``); the report's "Last exception"
line still named the launcher's ChildFailedError. Now ``Explanation.last_exception`` is the
worker's exception there (``worker_exception_line`` in the JSON), the text and Markdown reports
introduce it as the worker's and name the launcher's line, and the list of exceptions marks the
launcher's as its report. A signal's status, a summary alone, or no launcher keep the log's last
exception.

The launcher's lines are torch's own: ``torch/distributed/elastic/multiprocessing/api.py``
(``failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s``) and
``torch/distributed/elastic/multiprocessing/errors/__init__.py`` (ChildFailedError's
``Root Cause (first observed failure):`` table).
"""

from __future__ import annotations

import json

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.render import render_json, render_markdown, render_text

from explain_helpers import TORCHRUN_CHILD_FAILED as CHILD


UNKNOWN = "ValueError: the config wants 3 stages, got 2"
KNOWN = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def log(child: str = UNKNOWN, status: object = 1) -> str:
    return CHILD.format(child=child, status=status)


def _prefixed(text: str, prefix: str, worker_lines: int = 6) -> str:
    """The worker's lines as torchrun's --tee / a rank filter print them (the launcher's own are not)."""
    lines = text.splitlines()
    return "\n".join((prefix + ln) if i < worker_lines else ln for i, ln in enumerate(lines)) + "\n"


VARIANTS = {
    "plain": log(),
    "rank-prefixed": _prefixed(log(), "[rank0]: "),
    "tee-prefixed": _prefixed(log(), "[default0]:"),
    "quoted": "".join("> " + ln + "\n" for ln in log().splitlines()),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_workers_exception_is_the_one_the_report_names(name):
    expl = explain_text(VARIANTS[name])
    assert expl.worker_exception_line == 6
    assert expl.last_exception.type == "ValueError"
    assert "3 stages" in expl.last_exception.message
    assert expl.launcher_exception is not None and expl.launcher_exception.type.endswith("ChildFailedError")
    text = " ".join(render_text(expl).split())  # as read, whatever the wrap
    assert "The worker's exception (line 6; the launcher's ChildFailedError at line 13 reports it)" in text
    assert "ValueError: the config wants 3 stages, got 2" in text.split("The worker's exception", 1)[1]
    assert "Last exception" not in text


def test_the_markdown_report_names_the_workers_exception():
    md = render_markdown(explain_text(log()))
    assert "The worker's exception (line 6; the launcher's ChildFailedError at line 13 reports it):" in md
    block = md.split("reports it):", 1)[1]
    assert block.split("```")[1].strip() == UNKNOWN
    assert "Last exception" not in md


def test_the_json_carries_the_workers_line():
    d = json.loads(render_json(explain_text(log())))
    assert d["worker_exception_line"] == 6
    assert [e["line"] for e in d["exceptions"]] == [6, 13]  # both still listed, in the log's order


def test_with_a_known_cause_the_list_marks_the_launchers_report():
    expl = explain_text(log(KNOWN))
    assert expl.candidates[0].code == "torch-arch-not-supported"
    assert expl.last_exception.type == "RuntimeError"
    text = " ".join(render_text(expl).split())
    assert "(the launcher's report of the worker's exception at line 6)" in text
    md = render_markdown(expl)
    assert "`torch.distributed.elastic.multiprocessing.errors.ChildFailedError:" in md
    assert md.count("(the launcher's report of the worker's exception at line 6)") == 1


def test_a_chained_worker_traceback_names_its_last_exception():
    chained = ("KeyError: 'stages'\n\nDuring handling of the above exception, another exception occurred:\n\n"
               "Traceback (most recent call last):\n  File \"train.py\", line 9, in main\n"
               "    raise ValueError('bad config')\nValueError: bad config")
    expl = explain_text(log(chained))
    assert expl.last_exception.type == "ValueError" and expl.last_exception.message == "bad config"
    assert expl.worker_exception_line == expl.last_exception.line


# ------------------------------------------------------------------ negative controls: the log's last


@pytest.mark.parametrize("status", ["-9", "-7", "137"])
def test_a_signal_status_keeps_the_launchers_exception_last(status):
    # a worker killed by a signal: the launcher's report is the failure read (tools43), and shown
    expl = explain_text(log(status=status))
    assert expl.worker_exception_line is None
    assert expl.last_exception.type.endswith("ChildFailedError")
    text = render_text(expl)
    assert "The worker's exception" not in text


def test_the_summary_alone_keeps_its_own_exception():
    text = "ERROR:torch" + log(status=1).split("ERROR:torch", 1)[1]
    expl = explain_text(text)
    assert expl.worker_exception_line is None
    assert expl.last_exception.type.endswith("ChildFailedError")
    assert "The worker's exception" not in render_text(expl)


def test_two_tracebacks_without_a_launcher_keep_the_last():
    text = (f"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\n{UNKNOWN}\n"
            "Traceback (most recent call last):\n  File \"b.py\", line 2, in <module>\n    g()\n"
            "KeyError: 'stages'\n")
    expl = explain_text(text)
    assert expl.worker_exception_line is None
    assert expl.last_exception.type == "KeyError" and expl.launcher_exception is None
    assert "Last exception (line 8): KeyError: 'stages'" in " ".join(render_text(expl).split())
