"""explain's JSON report against docs/explain.schema.json (lead45; tools44 left the report's keys
undocumented but for schema_version): every report validates, and every key a report writes is one
the schema describes, so a new key fails here until it is documented."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.reasoning import Candidate, Evidence, LiveCheck, LiveSummary
from tests.explain_helpers import TORCHRUN_CHILD_FAILED

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "explain.schema.json").read_text())
CORPUS = ROOT / "tests" / "corpus" / "explain"
#: every n-th training log of the corpus (about a hundred): the shapes real logs give
EVERY = 25


def _training_logs():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "corpus_split.py"), "--training-files"],
                         capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}).stdout.split()
    return sorted(out)[::EVERY]


def _body(path: str) -> str:
    text = Path(path).read_text(errors="replace")
    return text.split("# ---\n", 1)[1] if "# ---\n" in text else text


def _undescribed(value, schema, path="$"):
    """Keys of ``value`` that ``schema`` does not name (objects with fixed properties only)."""
    if "$ref" in schema:
        return _undescribed(value, SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]], path)
    for alt in schema.get("oneOf", ()):
        if value is not None and alt.get("type") != "null":
            return _undescribed(value, alt, path)
    out = []
    if isinstance(value, dict) and "properties" in schema:
        for k, v in value.items():
            if k not in schema["properties"]:
                out.append(f"{path}.{k}")
            else:
                out += _undescribed(v, schema["properties"][k], f"{path}.{k}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += _undescribed(v, schema["items"], f"{path}[{i}]")
    return out


def _valid(report: dict) -> None:
    jsonschema.validate(report, SCHEMA)
    assert _undescribed(report, SCHEMA) == []


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", _training_logs(), ids=lambda p: Path(p).stem[:60])
def test_reports_of_real_logs_validate(path):
    _valid(explain_text(_body(path)).to_dict())


@pytest.mark.parametrize("text", [
    "",                                                                     # nothing at all
    "epoch 1 loss 0.52\nepoch 2 loss 0.41\n",                              # a healthy run: exit 0, no candidate
    "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    main()\nKeyboardInterrupt\n",
    "ERROR: frobnicator exploded with status 7\n",                         # an error no entry knows: fingerprint
    TORCHRUN_CHILD_FAILED.format(child="ValueError: bad shape", status=1),  # worker_exception_line
    "torch 2.6.0+cu126\nGPU 0: NVIDIA GeForce RTX 5090\n"                  # facts, a combination, findings
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
])
def test_reports_of_edge_cases_validate(text):
    _valid(explain_text(text).to_dict())


def test_a_report_with_live_verdicts_validates():
    base = explain_text("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    c = base.candidates[0]
    lc = LiveCheck(verdict="confirmed", check="toolchain.c_compiler", status="fail", detail="no cc on PATH")
    live = LiveSummary(ran=True, python="/usr/bin/python3", checks=("toolchain.c_compiler",),
                       found=("no-c-compiler",), note="", provenance="same", provenance_reason="host name matches")
    import dataclasses
    report = dataclasses.replace(base, candidates=(dataclasses.replace(c, live=lc),) + base.candidates[1:], live=live)
    _valid(report.to_dict())


def test_an_undocumented_key_is_caught():
    report = explain_text("RuntimeError: CUDA error: out of memory\n").to_dict()
    report["candidates"][0]["new_key"] = 1
    assert _undescribed(report, SCHEMA) == ["$.candidates[0].new_key"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, SCHEMA)


def test_the_cli_json_validates(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    out = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", str(log)],
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1, out.stderr
    _valid(json.loads(out.stdout))


# the dataclasses the report is built from name no field the schema lacks (a field added to a
# dataclass but left out of to_dict would not show here; the key walk above catches the reverse)
@pytest.mark.parametrize("cls, where", [(Candidate, "candidate"), (Evidence, "evidence")])
def test_dataclass_fields_are_described(cls, where):
    import dataclasses
    described = set(SCHEMA["$defs"][where]["properties"])
    fields = {f.name for f in dataclasses.fields(cls)} - {"own_causes"}  # own_causes: ranking only, not in to_dict
    assert fields <= described, fields - described
