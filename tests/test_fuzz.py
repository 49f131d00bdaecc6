"""Hypothesis fuzzing of the two parsers that read what users hand stackpeel: explain's log
parser and ``Report.from_dict`` (``stackpeel diff`` reads reports from files).

Bounded for CI: a few dozen examples each, no deadline (a shared CI machine is slow at
times; hypothesis's per-example deadline would make timing a failure). The long run with
its figures is ``bench/fuzz_long.py`` (docs/fuzzing.md).
"""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stackpeel.explain.parser import InputError, scan_stream  # noqa: E402
from stackpeel.explain.reasoning import explain  # noqa: E402
from stackpeel.explain.render import render as render_explanation  # noqa: E402
from stackpeel.model import Report, ReportFormatError  # noqa: E402
from stackpeel.render import render as render_report  # noqa: E402

ROOT = Path(__file__).resolve().parent
CORPUS = sorted((ROOT / "corpus" / "explain").glob("*.log"))
CI = settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- explain's parser ------------------------------------------------------------------------------

#: words the parser and the signatures react to, so random text reaches the interesting paths
TOKENS = ["Traceback (most recent call last):\n", '  File "x.py", line 3, in <module>\n', "RuntimeError: ",
          "Failed to find C compiler", "[rank0]: ", "0: ", "\x1b[31m", "\r", "\r\n", "\n", "    ", "Error",
          "CUDA error: ", "no kernel image is available", "libcuda.so.1", "Torch not compiled with CUDA enabled",
          "During handling of the above exception, another exception occurred:\n", "  ^^^^^\n", "\t",
          "ImportError: ", "undefined symbol: ", "nvcc fatal", "password=hunter2", "eyJ", "-----BEGIN ",
          "\x00", "\xff", "é", "😀"]


def explain_bytes(data: bytes) -> None:
    """The whole path of `stackpeel explain`: must end in an explanation or an InputError."""
    try:
        parsed = scan_stream(io.BytesIO(data))
    except InputError:
        return
    expl = explain(parsed, source="<fuzz>")
    assert expl.exit_code in (0, 1)
    for fmt in ("text", "json", "markdown"):
        out = render_explanation(expl, fmt)
        assert isinstance(out, str)
    json.loads(render_explanation(expl, "json"))


@CI
@given(st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=40)), max_size=60))
def test_explain_survives_token_soup(parts):
    explain_bytes("".join(parts).encode("utf-8", "surrogatepass"))


@CI
@given(st.binary(max_size=2000))
def test_explain_survives_random_bytes(data):
    explain_bytes(data)


@CI
@given(st.sampled_from(CORPUS), st.data())
def test_explain_survives_mutated_real_logs(path, data):
    raw = bytearray(path.read_bytes()[:20000])
    for _ in range(data.draw(st.integers(0, 8))):
        if not raw:
            break
        op = data.draw(st.sampled_from(["flip", "cut", "dup", "insert"]))
        i = data.draw(st.integers(0, len(raw) - 1))
        if op == "flip":
            raw[i] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del raw[i:i + data.draw(st.integers(1, 200))]
        elif op == "dup":
            raw[i:i] = raw[i:i + data.draw(st.integers(1, 400))]
        else:
            raw[i:i] = data.draw(st.sampled_from(TOKENS)).encode()
    explain_bytes(bytes(raw))


# -- Report.from_dict --------------------------------------------------------------------------------

def _seed_report() -> dict:
    return json.loads((ROOT / "data" / "toolchain" / "h200_report.json").read_text())


SEED = _seed_report()
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(allow_nan=True),
                 st.text(max_size=12), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5),
                                                                                            st.integers(), max_size=3))


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:4]):
            yield from _paths(v, prefix + (i,))


PATHS = [p for p in _paths(SEED) if p]


def load_report(doc) -> None:
    """A mutated report is read, or refused with ReportFormatError; one that is read renders."""
    try:
        report = Report.from_dict(doc)
    except ReportFormatError:
        return
    for fmt in ("text", "json", "markdown"):
        assert isinstance(render_report(report, fmt), str)


def mutate_report(mutations):
    """The seed report with (path, "delete" | "replace", value) mutations applied where they fit
    (also used by bench/fuzz_long.py)."""
    doc = copy.deepcopy(SEED)
    for path, op, value in mutations:
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if op == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@CI
@given(st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from(["delete", "replace"]), JUNK), max_size=6))
def test_report_from_dict_on_mutated_reports(mutations):
    load_report(mutate_report(mutations))


@CI
@given(JUNK)
def test_report_from_dict_on_non_reports(value):
    load_report(value)


def test_seed_report_round_trips():
    report = Report.from_dict(SEED)
    assert Report.from_dict(report.to_dict()) == report
