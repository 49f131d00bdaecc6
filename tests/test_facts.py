"""Probe facts have a declared shape (stackpeel/facts.py), checked against facts recorded on
real machines: the committed reports of docs/validation/ (H200 and CPU runs) and the
recorded facts in tests/data/. A probe that renames or drops a key fails here, instead of
its readers silently getting ``None``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterator, Tuple, TypedDict

import pytest

from stackpeel import facts as F
from stackpeel import registry
from stackpeel.checks.base import Context

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
VALIDATION = ROOT / "docs" / "validation"
#: whole reports: the scenario runs, the --deep runs (GPU-only keys of the kernel ops probes),
#: the layout run, the healthy runs; plus the CPU minimal-root run and the toolchain H200 run
REPORTS = sorted(VALIDATION.glob("*/reports/*.json")) + sorted(VALIDATION.glob("*/deep/*.json")) + \
    sorted(VALIDATION.glob("*/healthy.json")) + sorted(VALIDATION.glob("*/layout/report.json")) + \
    sorted(VALIDATION.glob("*/loaded/*/check.json")) + \
    [DATA / "toolchain" / "h200_report.json", DATA / "report" / "minroot-bookworm.json"] + \
    sorted((DATA / "open_files").glob("h200-nofile-*.json"))  # check under ulimit -n 20-48 (ofl24)
#: runtime_libs.loaded's probe answers as recorded on the H200 (five library-layout scenarios)
LOADED = sorted(VALIDATION.glob("*/loaded/*/facts.json"))
#: keys a check's evaluate wrote over its probe's in reports saved before it stopped doing so
OVERWRITTEN = {("config.nccl_environment", "interfaces")}
#: tests/data/triton/<prefix>*.json hold the facts of one check each
TRITON_FILES = {"build_": "triton.build", "cpu_launch": "triton.kernel_launch", "h200_fla": "kernels.fla",
                "h200_import": "triton.import", "h200_launch": "triton.kernel_launch",
                "h200_transformers": "kernels.transformers_fast_path"}


def recorded() -> Iterator[Tuple[str, str, Dict]]:
    """(where, check id, facts) for every fact set recorded on a real machine."""
    for path in REPORTS:
        for r in json.loads(path.read_text())["results"]:
            # facts of probes with no declared shape yet (UNDECLARED below) cannot be checked
            if r["status"] not in ("error", "blocked") and r["facts"]:
                yield f"{path.relative_to(ROOT)}:{r['id']}", r["id"], r["facts"]
    gpu = json.loads((DATA / "gpu" / "h200_recorded.json").read_text())
    for scenario, results in gpu.items():
        if scenario != "_source":
            for cid, res in results.items():
                yield f"h200_recorded.json:{scenario}:{cid}", cid, res["facts"]
    for path in LOADED:
        yield f"{path.relative_to(ROOT)}", "runtime_libs.loaded", json.loads(path.read_text())
    for path in sorted((DATA / "triton").glob("*.json")):
        cid = next(v for k, v in TRITON_FILES.items() if path.name.startswith(k))
        yield f"triton/{path.name}", cid, json.loads(path.read_text())


RECORDED = list(recorded())


def test_every_probe_has_a_declared_shape():
    """Every built-in check with a probe names its shape, and checks sharing a probe share it."""
    by_probe = {}
    for cls in registry.load(plugins=False):
        if cls.probe:
            assert cls.facts is not None and cls.facts is F.BY_CHECK.get(cls.id), cls.id
            assert by_probe.setdefault(cls.probe, cls.facts) is cls.facts, cls.probe
    assert set(F.BY_CHECK) == {c.id for c in registry.load(plugins=False) if c.probe}


#: probes no real machine has recorded yet (the live test below still runs them)
#: (gpu.nvlink_fabric: recorded on the 1-GPU H200, fabric state N/A); multi_gpu.open_files, new in
#: gpu23b, was recorded on the H200 under ulimit -n 20-48 (tests/data/open_files/); toolchain.temp_dir is new
#: in tmp24 (its facts are checked against this machine's real probe in tests/test_toolchain.py until an
#: H200 run records them); toolchain.cxx_compiler is new in chk27 (its facts are checked against this
#: machine's real probe, torch 2.13 and 2.14, in tests/test_cxx_compiler.py); system.file_size_limit is
#: new in session 28 (its facts are checked against this machine's real probe under real `ulimit -f`
#: limits in tests/test_file_size_limit.py)
NOT_RECORDED: set = {"toolchain.temp_dir", "toolchain.cxx_compiler", "system.file_size_limit"}


def test_recorded_facts_cover_every_probe():
    assert len(REPORTS) >= 10 and len(RECORDED) >= 250
    assert {cid for _, cid, _ in RECORDED} == set(F.BY_CHECK) - NOT_RECORDED


@pytest.mark.parametrize("where, cid, facts", RECORDED, ids=[w for w, _, _ in RECORDED])
def test_recorded_facts_fit_their_declared_shape(where, cid, facts):
    overwritten = tuple(f"{k!r} is " for c, k in OVERWRITTEN if c == cid)
    assert [p for p in F.problems(F.BY_CHECK[cid], facts) if not p.startswith(overwritten or ("\0",))] == []


def _reports_results():
    for path in REPORTS:
        report = json.loads(path.read_text())
        by_id = {r["id"]: r for r in report["results"]}
        for r in report["results"]:
            if r["status"] not in ("error", "blocked") and r["facts"]:
                yield path, report, by_id, r


def test_recorded_reports_hold_no_undeclared_probe_keys():
    """A report's facts are the probe's answer plus what evaluate derived: every other key
    (one a probe writes on the H200 that no shape declares) is found here, not on a user's machine."""
    classes = {c.id: c for c in registry.load(plugins=False)}
    undeclared = {}
    for path, report, by_id, r in _reports_results():
        cls = classes[r["id"]]
        deps = {q: by_id[q]["facts"] for q in cls.requires if q in by_id}
        derived = cls().evaluate(r["facts"], Context(report["host"], report["target"], deps)).facts
        extra = set(r["facts"]) - set(F._hints(cls.facts)) - set(derived)
        if extra:
            undeclared[f"{path.relative_to(ROOT)}:{r['id']}"] = sorted(extra)
    assert undeclared == {}


def test_a_renamed_key_is_caught():
    where, cid, facts = next(r for r in RECORDED if r[1] == "torch.cuda")
    renamed = dict(facts)
    renamed["cuda_version"] = renamed.pop("cuda")
    assert F.problems(F.TorchCudaFacts, renamed) == ["missing key 'cuda'"]
    wrong = dict(facts, device_count="2")
    assert F.problems(F.TorchCudaFacts, wrong) == ["'device_count' is str, declared typing.Optional[int]"]


def test_a_renamed_key_inside_a_device_entry_is_caught():
    """cuda.driver_api's devices are a contract of their own (CONTRACT.md): other checks and
    probes read their cc; a probe renaming it fails here and is an error result at runtime."""
    where, cid, facts = next(r for r in RECORDED if r[1] == "cuda.driver_api" and len(r[2]["devices"]) >= 2)
    assert F.problems(F.CudaDriverApiFacts, facts) == []
    devices = [dict(d) for d in facts["devices"]]
    devices[1]["compute_capability"] = devices[1].pop("cc")
    devices[0]["cc_major"] = "9"
    assert F.problems(F.CudaDriverApiFacts, dict(facts, devices=devices)) == [
        "'devices'[0]: 'cc_major' is str, declared typing.Optional[int]", "'devices'[1]: missing key 'cc'"]


def _validated(report):
    """Results whose probe answered (the runner validated those facts before evaluate)."""
    shaped = [r for r in report.results if r.id in F.BY_CHECK and r.facts]
    assert not [r.id for r in report.results if r.failure is not None and r.failure.reason == "facts-shape"]
    return shaped


def test_live_facts_of_this_machine_fit_too(stack_python):
    """The probes as they run today, on the CPU stack venv (a real child per probe). The test
    suite runs strict (conftest): the runner raised on any missing, mistyped or undeclared key."""
    from stackpeel.engine import check

    report = check(python=stack_python)  # no GPU here: the gpu/cuda probes take their failure paths
    shaped = _validated(report)
    for r in shaped:
        if r.status.value not in ("error", "blocked"):
            assert F.problems(F.BY_CHECK[r.id], r.facts) == [], r.id
    assert len(shaped) >= 30


def test_live_facts_without_a_compiler_fit(stack_python, clean_env, tmp_path):
    """PATH without any C compiler: the build probes take their no-compiler paths."""
    from conftest import no_compiler_path
    from stackpeel.engine import check

    env = dict(clean_env, PATH=no_compiler_path(tmp_path))
    report = check(python=stack_python, env=env, only=["toolchain.extension_build", "triton.build"])
    by_id = {r.id: r for r in report.results}
    assert by_id["toolchain.c_compiler"].facts["compiler"] is None
    assert by_id["toolchain.extension_build"].facts["failure_kind"] == "no-compiler"
    assert len(_validated(report)) >= 5


def test_live_facts_of_a_bare_interpreter_fit(other_python, clean_env):
    """pyenv's 3.8 and 3.13 hold none of the stack: every probe's not-installed path."""
    from stackpeel.engine import check

    report = check(python=other_python, env=clean_env)
    by_id = {r.id: r for r in report.results}
    assert by_id["torch.cuda"].facts["installed"] is False
    assert by_id["kernels.fla"].facts["installed"] is False
    assert by_id["toolchain.ptxas"].facts == {"triton_installed": False}
    assert len(_validated(report)) >= 25


# ---------------------------------------------------------------------- the shape bites at runtime

from stackpeel.checks.base import FactsShapeError  # noqa: E402
from stackpeel.checks.toolchain import PythonHeaders  # noqa: E402
from stackpeel.diagnosis import diagnose  # noqa: E402
from stackpeel.model import Report, Status  # noqa: E402
from stackpeel.render.text import render_text  # noqa: E402
from stackpeel.runner import run_checks  # noqa: E402

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
HOST = {"os": "linux", "distro_id": "debian", "package_manager": "apt", "is_root": True}


class _RenamedInclude(F.ToolchainPythonHeadersFacts):
    """What the check would declare if the probe had renamed ``include_dir``."""

    include_path: str


class _MistypedPythonH(F.ToolchainPythonHeadersFacts):
    python_h: int  # type: ignore[misc]


def _without(key):
    """The python_headers shape less one key (a probe that added ``key`` without declaring it)."""
    return TypedDict("Fewer", {k: v for k, v in F._hints(F.ToolchainPythonHeadersFacts).items() if k != key})


def _headers_check(shape):
    evaluated = []

    class Headers(PythonHeaders):
        facts = shape

        def evaluate(self, facts, ctx):
            evaluated.append(facts)
            return super().evaluate(facts, ctx)

    return Headers, evaluated


@pytest.mark.parametrize("shape, named", [(_RenamedInclude, "missing key 'include_path'"),
                                          (_MistypedPythonH, "'python_h' is str, declared <class 'int'>")])
def test_facts_that_do_not_fit_are_an_error_naming_the_key(shape, named, stack_python, monkeypatch):
    """In production a mismatch is the check's ``error`` result, naming the key; evaluate
    never sees the facts (no silent None)."""
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.delenv("STACKPEEL_STRICT_FACTS")
    cls, evaluated = _headers_check(shape)
    [res] = run_checks([cls], stack_python, HOST, {"python": stack_python})
    assert res.status is Status.ERROR and named in res.summary
    assert res.failure.reason == "facts-shape" and named in res.failure.detail
    assert res.facts["include_dir"]  # the probe's answer stays as evidence
    assert evaluated == []
    # the report holding it is valid, counts it among the checks that could not complete, and says which key
    report = Report(tool_version="test", created="2026-12-01T00:00:00+00:00",
                    target={"python": stack_python, "source": "--python"},
                    host=HOST, results=(res,), diagnosis=diagnose([res]))
    jsonschema.validate(report.to_dict(), SCHEMA)
    assert report.diagnosis.errors == ("toolchain.python_headers",)
    assert named in render_text(report, width=200)


def test_strict_mode_raises_on_a_mismatch_and_an_undeclared_key(stack_python):
    cls, evaluated = _headers_check(_RenamedInclude)
    with pytest.raises(FactsShapeError, match="missing key 'include_path'"):
        run_checks([cls], stack_python, HOST, {"python": stack_python})

    cls, evaluated = _headers_check(_without("scheme"))
    with pytest.raises(FactsShapeError, match="undeclared key 'scheme'"):
        run_checks([cls], stack_python, HOST, {"python": stack_python})


def test_an_undeclared_key_alone_keeps_the_verdict_in_production(stack_python, monkeypatch):
    """Outside strict mode an undeclared key cannot mislead evaluate (it reads declared keys)."""
    monkeypatch.delenv("STACKPEEL_STRICT_FACTS")
    cls, evaluated = _headers_check(_without("scheme"))
    [res] = run_checks([cls], stack_python, HOST, {"python": stack_python})
    assert res.status is Status.PASS and len(evaluated) == 1


def test_evaluate_fed_facts_without_a_required_key_raises_in_strict_mode():
    """Tests that call evaluate directly get the same contract as the runner gives."""
    with pytest.raises(FactsShapeError, match="missing key 'python_h_exists'"):
        PythonHeaders().evaluate({"include_dir": "/usr/include/python3.11"}, Context({}, {}, {}))
