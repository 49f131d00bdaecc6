"""gpu32: the repeat run reused nothing on a machine whose Triton cache exists. The cache key held the
Triton cache folder's stat with its modification time, and toolchain.triton_cache creates and removes a
folder in that cache on every run (probes/toolchain.py _exec_map_test), so each check changed the key
of the next. On session 32's GPU machine the bench's repeat run was 12.6x faster before a Triton
program had filled ~/.triton/cache and 1.0x after. The key now holds the folder's entries instead of
its mtime: a second run reuses, a kernel compiled into the cache in between reuses nothing. Real CLI
runs of the real probe against the real stack venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _run(stack: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--format", "json", "--no-plugins",
                          "--python", stack, "--only", "toolchain.triton_cache"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    reused = report["target"].get("reused") or {}
    return {"reused": reused.get("results", 0), "ran": reused.get("ran"),
            "status": {r["id"]: r["status"] for r in report["results"]}}


def test_a_repeat_run_reuses_its_results_where_the_triton_cache_exists(tmp_path, stack_python):
    triton_cache = tmp_path / "triton-cache"
    (triton_cache / "Q2ZLHKOBFRZ2MIDYB4NQGHHSU7TBUJ3VOB3QCO5E2BUNJRXWTSGA").mkdir(parents=True)  # one kernel
    env = dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               TRITON_CACHE_DIR=str(triton_cache))
    first = _run(stack_python, env)
    assert first["reused"] == 0 and first["status"]["toolchain.triton_cache"] == "pass", first
    assert not [p for p in triton_cache.iterdir() if p.name.startswith(".stackpeel-probe-")]  # it cleans up
    again = _run(stack_python, env)
    # before gpu32: 0, the probe's own folder changed the key; toolchain.triton_cache itself is volatile
    # (free space, measured on every run), config.triton_environment is reused
    assert again["reused"] == 1 and again["ran"] == ["toolchain.triton_cache"], again
    (triton_cache / "HQ5NDQ4ZM3PLMGAYKVFTQZ7M35FOJ5NMC4LDCQ3SDX6FXJFS6QZA").mkdir()  # a kernel compiled since
    after_kernel = _run(stack_python, env)
    assert after_kernel["reused"] == 0, after_kernel  # negative control: the cache's content is in the key
