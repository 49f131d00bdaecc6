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
STACK = os.environ.get("STACKPEEL_STACK_PYTHON", "/work/main/.venv-stack/bin/python")


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


def test_users_pythonpath_resolves_only_relative_entries(tmp_path, monkeypatch):
    from stackpeel.runner.cache import users_pythonpath
    monkeypatch.chdir(tmp_path)
    env = users_pythonpath({"PYTHONPATH": f"/abs/one{os.pathsep}src{os.pathsep}../up", "OTHER": "x"})
    assert env["PYTHONPATH"].split(os.pathsep) == ["/abs/one", str(tmp_path / "src"), str(tmp_path.parent / "up")]
    assert env["OTHER"] == "x"
    assert users_pythonpath({"PATH": "/bin"}) == {"PATH": "/bin"}  # no PYTHONPATH: unchanged
    assert users_pythonpath({"PYTHONPATH": "/a"}) == {"PYTHONPATH": "/a"}
    # CPython adds nothing for an empty PYTHONPATH (ENV PYTHONPATH= in an image): no cwd either
    assert users_pythonpath({"PYTHONPATH": ""}) == {"PYTHONPATH": ""}


PROBE = '''
import importlib.util, sys
def where(inp):
    spec = importlib.util.find_spec("chk27_users_module")
    return {"origin": spec.origin if spec else None, "path": [p for p in sys.path if p.endswith("src")]}
'''


def test_a_probe_sees_a_relative_pythonpath_as_the_target_does(tmp_path):
    """The probes run in folders of their own too: `PYTHONPATH=src` named `<probe folder>/src` there, so
    a module the user's program imports from ./src was invisible to every probe. Negative control:
    from a directory without that module the probe does not find it."""
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "wherep.py").write_text(PROBE)
    here, there = tmp_path / "here", tmp_path / "there"
    (here / "src").mkdir(parents=True)
    (there / "src").mkdir(parents=True)
    (here / "src" / "chk27_users_module.py").write_text("X = 1\n")
    driver = ("import json, sys; from pathlib import Path; from stackpeel.runner import child; "
              "a = child.run_probe(sys.executable, 'wherep.where', {}, 60, probes_dir=Path(sys.argv[1])); "
              "print(json.dumps(a.facts))")

    def ask(cwd: Path) -> dict:
        out = subprocess.run([sys.executable, "-c", driver, str(probes)], capture_output=True, text=True, timeout=120,
                             cwd=str(cwd), env=dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}src"))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    seen = ask(here)
    assert seen["origin"] == str(here / "src" / "chk27_users_module.py"), seen
    assert str(here / "src") in seen["path"]
    assert ask(there)["origin"] is None
