"""chk27: a relative PYTHONPATH in the cache key. The key script runs in a fresh folder, so
``PYTHONPATH=src`` read there named a new ``/tmp/stackpeel-key-*/src`` in the target's sys.path every
run and nothing was ever reused (tmp26). The key now holds the path as the target resolves it, against
the user's working directory: a second run from the same directory reuses, one from another directory
(whose ``src`` is another folder) reuses nothing. Real CLI runs against the real stack venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
STACK = os.environ.get("STACKPEEL_STACK_PYTHON",
                       str(Path(__file__).resolve().parent.parent / ".venv-stack" / "bin" / "python"))


def _run(cwd: Path, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--format", "json", "--no-plugins",
                          "--python", STACK, "--only", "multi_gpu.open_files"],
                         capture_output=True, text=True, timeout=300, env=env, cwd=str(cwd))
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    return {"reused": (report["target"].get("reused") or {}).get("results", 0),
            "status": {r["id"]: r["status"] for r in report["results"]}}


def test_a_relative_pythonpath_repeats_the_key_from_the_same_directory_only(tmp_path):
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    here, there = tmp_path / "here", tmp_path / "there"
    for d in (here, there):
        (d / "src").mkdir(parents=True)
    (there / "src" / "sitecustomize.py").write_text("# another project's\n")
    # stackpeel imports itself from the absolute entry; the target also gets the relative `src`
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}src", HOME=str(tmp_path),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = _run(here, env)
    assert first["reused"] == 0 and first["status"]["multi_gpu.open_files"] in ("pass", "warn")
    again = _run(here, env)
    assert again["reused"] == 1, again  # before chk27: 0, the key never repeated
    elsewhere = _run(there, env)
    assert elsewhere["reused"] == 0, elsewhere  # negative control: `src` is another folder there


def test_resolve_pythonpath_resolves_only_relative_entries(tmp_path, monkeypatch):
    """What the key script (cache.target_material) and every probe (hygiene.keep_target_tmp) get."""
    from stackpeel.runner.hygiene import resolve_pythonpath
    monkeypatch.chdir(tmp_path)
    env = resolve_pythonpath({"PYTHONPATH": f"/abs/one{os.pathsep}src{os.pathsep}../up", "OTHER": "x"})
    assert env["PYTHONPATH"].split(os.pathsep) == ["/abs/one", str(tmp_path / "src"), str(tmp_path.parent / "up")]
    assert env["OTHER"] == "x"
    assert resolve_pythonpath({"PATH": "/bin"}) == {"PATH": "/bin"}  # no PYTHONPATH: unchanged
    assert resolve_pythonpath({"PYTHONPATH": "/a"}) == {"PYTHONPATH": "/a"}
    # CPython adds nothing for an empty PYTHONPATH (ENV PYTHONPATH= in an image): no cwd either
    assert resolve_pythonpath({"PYTHONPATH": ""}) == {"PYTHONPATH": ""}
