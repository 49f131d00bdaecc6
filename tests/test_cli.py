"""The command line as a user meets it: help, bad input, formats, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "report.schema.json").read_text())


def sp(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "stackpeel", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_help_teaches():
    out = sp("--help").stdout
    assert "root cause" in out and "check" in out and "codes" in out
    chk = sp("check", "--help").stdout
    for needle in ("--python", "--format", "--only", "--skip", "--redact", "exit status", "examples"):
        assert needle in chk


def test_no_command_prints_help_and_exits_2():
    p = sp()
    assert p.returncode == 2 and "usage" in p.stdout.lower()


def test_bad_python_is_a_clear_usage_error():
    p = sp("check", "--python", "/nonexistent/bin/python")
    assert p.returncode == 2
    assert "cannot diagnose" in p.stderr and "/nonexistent/bin/python" in p.stderr
    assert "Traceback" not in p.stderr


def test_not_a_python_is_a_clear_usage_error(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho hello\nexit 3\n")
    fake.chmod(0o755)
    p = sp("check", "--python", str(fake))
    assert p.returncode == 2 and "not a working Python" in p.stderr


def test_unknown_only_names_the_problem():
    p = sp("check", "--only", "nosuchlayer")
    assert p.returncode == 2 and "nosuchlayer" in p.stderr and "stackpeel list" in p.stderr


def test_list_runs_nothing_and_shows_layers():
    p = sp("list")
    assert p.returncode == 0 and "system.platform" in p.stdout and "system:" in p.stdout
    data = json.loads(sp("list", "--format", "json").stdout)
    assert any(c["id"] == "system.platform" for c in data)


def test_codes_lists_and_rejects_unknown():
    p = sp("codes")
    assert p.returncode == 0 and "libc-unsupported" in p.stdout
    assert sp("codes", "no-such-code").returncode == 2
    one = json.loads(sp("codes", "libc-unsupported", "--format", "json").stdout)
    assert one[0]["code"] == "libc-unsupported" and one[0]["fix"]


def test_json_output_file_validates(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "r.json"
    p = sp("check", "--python", sys.executable, "--only", "system", "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["target"]["python"] == sys.executable and data["target"]["source"] == "--python"
    assert p.returncode == data["diagnosis"]["exit_code"]


def test_default_target_is_the_active_virtualenv(tmp_path, clean_env):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = dict(clean_env, VIRTUAL_ENV=str(venv))
    env.pop("CONDA_PREFIX", None)
    p = sp("check", "--only", "system", "--format", "json", env=env)
    data = json.loads(p.stdout)
    assert data["target"]["python"] == str(venv / "bin" / "python")
    assert data["target"]["source"] == "$VIRTUAL_ENV"


def test_docs_codes_md_is_generated_from_the_catalogue():
    from stackpeel.codes import all_codes
    from stackpeel.docs import codes_markdown

    path = Path(__file__).parent.parent / "docs" / "codes.md"
    assert path.read_text() == codes_markdown(all_codes().values()), \
        "docs/codes.md is stale: run `stackpeel codes --format markdown > docs/codes.md`"


def test_every_code_has_meaning_and_fix_and_a_known_layer():
    from stackpeel.codes import all_codes
    from stackpeel.registry import LAYERS

    for code in all_codes().values():
        assert code.layer in LAYERS, code.code
        assert len(code.meaning) > 40 and len(code.fix) > 20, code.code


def test_readme_codes_table_is_current():
    from stackpeel.codes import all_codes
    from stackpeel.docs import README_BEGIN, README_END, codes_table

    text = (Path(__file__).parent.parent / "README.md").read_text()
    inner = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip()
    assert inner == codes_table(all_codes().values()), "README's codes table is stale: run python -m stackpeel.docs"


def test_skipping_a_requirement_is_said_in_the_report():
    p = sp("check", "--python", sys.executable, "--skip", "gpu,cuda,torch,triton,kernels,multi_gpu", "--format", "json")
    data = json.loads(p.stdout)
    assert "cuda.driver_api" in data["selection"]["not_run"]  # toolchain.ptxas needs it
    text = sp("check", "--python", sys.executable, "--skip", "cuda", "--only", "toolchain.ptxas").stdout
    assert "Not run on request" in text and "cuda.driver_api" in text
    full = json.loads(sp("check", "--python", sys.executable, "--only", "system", "--format", "json").stdout)
    assert full["selection"]["not_run"] == []
