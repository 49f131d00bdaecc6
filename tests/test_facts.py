"""Probe facts have a declared shape (stackpeel/facts.py), checked against facts recorded on
real machines: the committed reports of docs/validation/ (H200 and CPU runs) and the
recorded facts in tests/data/. A probe that renames or drops a key fails here, instead of
its readers silently getting ``None``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest

from stackpeel import facts as F
from stackpeel import registry

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
REPORTS = sorted((ROOT / "docs" / "validation").glob("*/reports/*.json")) + [DATA / "toolchain" / "h200_report.json"]
#: tests/data/triton/<prefix>*.json hold the facts of one check each
TRITON_FILES = {"build_": "triton.build", "cpu_launch": "triton.kernel_launch", "h200_fla": "kernels.fla",
                "h200_import": "triton.import", "h200_launch": "triton.kernel_launch",
                "h200_transformers": "kernels.transformers_fast_path"}


def recorded() -> Iterator[Tuple[str, str, Dict]]:
    """(where, check id, facts) for every fact set recorded on a real machine."""
    for path in REPORTS:
        for r in json.loads(path.read_text())["results"]:
            # facts of probes with no declared shape yet (UNDECLARED below) cannot be checked
            if r["status"] not in ("error", "blocked") and r["facts"] and r["id"] in F.BY_CHECK:
                yield f"{path.relative_to(ROOT)}:{r['id']}", r["id"], r["facts"]
    gpu = json.loads((DATA / "gpu" / "h200_recorded.json").read_text())
    for scenario, results in gpu.items():
        if scenario != "_source":
            for cid, res in results.items():
                yield f"h200_recorded.json:{scenario}:{cid}", cid, res["facts"]
    for path in sorted((DATA / "triton").glob("*.json")):
        cid = next(v for k, v in TRITON_FILES.items() if path.name.startswith(k))
        yield f"triton/{path.name}", cid, json.loads(path.read_text())


RECORDED = list(recorded())


#: probes of checks added by other tasks whose facts have no declared shape yet: no real
#: machine has recorded them. Adding one here is a conscious debt; declaring it removes it.
UNDECLARED = {"config.compiler_environment", "config.cuda_home_environment", "config.environment",
              "config.known_combinations", "config.module_origins", "config.nccl_environment",
              "config.triton_environment", "runtime_libs.loaded", "kernels.causal_conv1d_ops", "kernels.fla_ops",
              "kernels.torch_compile"}


def test_every_probe_has_a_declared_shape():
    missing = set()
    for cls in registry.load(plugins=False):
        if cls.probe and cls.id in F.BY_CHECK:
            assert cls.facts is F.BY_CHECK[cls.id], cls.id
        elif cls.probe:
            missing.add(cls.id)
    assert missing == UNDECLARED


#: probes no real machine has recorded yet (the live test below still runs them)
NOT_RECORDED: set = set()  # gpu.nvlink_fabric: recorded on the 1-GPU H200 (fabric state N/A)


def test_recorded_facts_cover_every_probe():
    assert len(REPORTS) >= 10 and len(RECORDED) >= 250
    assert {cid for _, cid, _ in RECORDED} == set(F.BY_CHECK) - NOT_RECORDED


@pytest.mark.parametrize("where, cid, facts", RECORDED, ids=[w for w, _, _ in RECORDED])
def test_recorded_facts_fit_their_declared_shape(where, cid, facts):
    assert F.problems(F.BY_CHECK[cid], facts) == []


def test_a_renamed_key_is_caught():
    where, cid, facts = next(r for r in RECORDED if r[1] == "torch.cuda")
    renamed = dict(facts)
    renamed["cuda_version"] = renamed.pop("cuda")
    assert F.problems(F.TorchCudaFacts, renamed) == ["missing key 'cuda'"]
    wrong = dict(facts, device_count="2")
    assert F.problems(F.TorchCudaFacts, wrong) == ["'device_count' is str, declared typing.Optional[int]"]


def test_live_facts_of_this_machine_fit_too(stack_python):
    """The probes as they run today, on the CPU stack venv (a real child per probe)."""
    from stackpeel.engine import check

    report = check(python=stack_python)  # no GPU here: the gpu/cuda probes take their failure paths
    seen = 0
    for r in report.results:
        if r.id in F.BY_CHECK and r.status.value not in ("error", "blocked"):
            assert F.problems(F.BY_CHECK[r.id], r.facts) == [], r.id
            seen += 1
    assert seen >= 18
