"""One report envelope and one exit-code enum for `check`, `explain` and `run`.

Each command runs for real (stackpeel as a child process) and its JSON must start with the
same keys: ``schema_version``, ``kind``, ``tool``; its exit status must be an ``ExitCode``
member that means what its ``--help`` says.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stackpeel import __version__
from stackpeel.model import SCHEMA_VERSION, ExitCode, envelope

C_COMPILER_LOG = """\
Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/triton/runtime/build.py", line 35, in _build
    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.")
RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.
"""


def sp(*args, **kw):
    return subprocess.run([sys.executable, "-m", "stackpeel", *args], capture_output=True, text=True,
                          timeout=300, **kw)


def _head(doc):
    return {k: doc[k] for k in list(doc)[:3]}


def test_envelope_helper():
    assert envelope("check") == {"schema_version": SCHEMA_VERSION, "kind": "check",
                                 "tool": {"name": "stackpeel", "version": __version__}}
    with pytest.raises(ValueError):
        envelope("diff-of-something")


def test_check_explain_and_run_share_the_envelope(tmp_path):
    chk = sp("check", "--only", "system", "--format", "json")
    assert chk.returncode in (ExitCode.OK, ExitCode.PROBLEMS), chk.stderr
    log = tmp_path / "triton.log"
    log.write_text(C_COMPILER_LOG)
    exp = sp("explain", str(log), "--no-live", "--format", "json")
    assert exp.returncode == ExitCode.PROBLEMS, exp.stderr
    out = tmp_path / "run.json"
    run = sp("run", "--format", "json", "-o", str(out), "--", sys.executable, "-c", "pass")
    assert run.returncode == 0, run.stderr

    docs = {"check": json.loads(chk.stdout), "explain": json.loads(exp.stdout), "run": json.loads(out.read_text())}
    for kind, doc in docs.items():
        assert _head(doc) == envelope(kind), kind
    assert docs["check"]["diagnosis"]["exit_code"] == chk.returncode
    assert docs["explain"]["exit_code"] == exp.returncode and docs["explain"]["root_cause"] == "no-c-compiler"


def test_exit_codes_are_the_enum_everywhere(tmp_path):
    # usage errors: 2 for all three
    assert sp("check", "--only", "no-such-layer").returncode == ExitCode.USAGE
    assert sp("explain", str(tmp_path)).returncode == ExitCode.USAGE  # a directory
    assert sp("run").returncode == ExitCode.USAGE  # no command
    # run: the program's own status, or 127 when it cannot start
    assert sp("run", "--", sys.executable, "-c", "raise SystemExit(7)").returncode == 7
    assert sp("run", "--", str(tmp_path / "no-such-program")).returncode == ExitCode.NOT_STARTED
    # explain: a log with no error is OK
    quiet = tmp_path / "quiet.log"
    quiet.write_text("epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
    assert sp("explain", str(quiet), "--no-live").returncode == ExitCode.OK


@pytest.mark.parametrize("command", ["check", "explain", "run"])
def test_help_documents_the_exit_codes(command):
    out = sp(command, "--help").stdout
    assert "exit status:" in out
    for code in (ExitCode.USAGE,):
        assert f"  {int(code)}  " in out
    if command == "run":
        assert "127  the command cannot be started" in out and "program's own exit status" in out
    else:
        assert "0  no" in out and "1  a" in out and "130  interrupted" in out
