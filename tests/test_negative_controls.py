"""Negative controls: logs of healthy runs must not be blamed on a blocking cause.

tests/corpus/negative/ holds logs of runs that worked, made for real on the CPU-only CI
machine (a pip install of the stack, a CPU training loop of a tiny transformers model,
`stackpeel check` output, torch/Triton import noise, a torchrun gloo run, an inductor
compile, a C extension build with a compiler warning, ...) plus NCCL INFO lines from a
public thread about a healthy run. Each file says how it was made and why it is healthy.

`stackpeel explain --no-live` is run on each exactly as a user would; a candidate whose
code is blocking (per `stackpeel codes`) is a false alarm. The knowledge-base tests use
the same directory to reject patterns that match healthy output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

CORPUS = Path(__file__).parent / "corpus"
NEGATIVE = sorted((CORPUS / "negative").glob("*.log"))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stackpeel", *args], capture_output=True,
                          text=True, timeout=120)


def _candidates(report) -> List[Dict]:
    """The candidate list wherever the JSON envelope puts it."""
    if isinstance(report, dict):
        if isinstance(report.get("candidates"), list):
            return report["candidates"]
        for value in report.values():
            found = _candidates(value)
            if found:
                return found
    return []


@pytest.fixture(scope="module")
def severity() -> Dict[str, str]:
    out = _run("codes", "--format", "json")
    assert out.returncode == 0, out.stderr[-2000:]
    found: Dict[str, str] = {}

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("code"), str) and isinstance(node.get("severity"), str):
                found[node["code"]] = node["severity"]
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(out.stdout))
    assert len(found) >= 40 and "blocking" in found.values()
    return found


def _explain(path: Path):
    out = _run("explain", "--no-live", "--format", "json", str(path))
    assert out.returncode in (0, 1), f"{path.name}: explain failed ({out.returncode}): {out.stderr[-2000:]}"
    return json.loads(out.stdout)


def test_enough_negative_controls_and_each_documented():
    assert len(NEGATIVE) >= 15
    for path in NEGATIVE:
        head = path.read_text(encoding="utf-8").split("# ---\n", 1)
        assert len(head) == 2 and head[1].strip(), f"{path.name}: header or body missing"
        assert "# made: " in head[0] and "# healthy: " in head[0], path.name
        assert "/work/" not in head[1] and "/root/" not in head[1], f"{path.name}: machine path"


def test_harness_sees_a_blocking_cause_when_there_is_one(severity):
    # The check below is only worth something if a real failure does trip it.
    seed = CORPUS / "explain" / "comfyui-5216-no-c-compiler.log"
    codes = [c.get("code") for c in _candidates(_explain(seed))]
    assert "no-c-compiler" in codes and severity["no-c-compiler"] == "blocking"


@pytest.mark.parametrize("path", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_no_blocking_cause_named_on_a_healthy_log(path, severity):
    report = _explain(path)
    blocking = [(c.get("code"), [e.get("text", "")[:120] for e in c.get("evidence", [])[:2]])
                for c in _candidates(report) if severity.get(c.get("code")) == "blocking"]
    assert not blocking, f"{path.name}: healthy log blamed on {blocking}"
