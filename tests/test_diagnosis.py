"""Pure diagnosis: tables of results in, root causes and chains out."""

from __future__ import annotations

import pytest

from stackpeel.diagnosis import diagnose, root_of
from stackpeel.model import CheckResult, ExitCode, Finding, Severity, Status

LAYERS = ("system", "gpu", "cuda", "torch", "toolchain", "triton", "kernels")


def res(cid, status, requires=(), sev=None, code=None):
    findings = ()
    if sev is not None:
        findings = (Finding(code or cid.replace(".", "-"), sev, "t", "m"),)
    return CheckResult(id=cid, title=cid, layer=cid.split(".")[0], status=status, summary="s", findings=findings,
                       requires=tuple(requires))


P, F, W, B, E, S = Status.PASS, Status.FAIL, Status.WARN, Status.BLOCKED, Status.ERROR, Status.SKIP
BL, DG = Severity.BLOCKING, Severity.DEGRADED

# the seed's cascade on a GPU machine: no compiler; everything above it fails
SEED = [
    res("gpu.kernel_driver", P),
    res("cuda.driver_api", P, ["gpu.kernel_driver"]),
    res("torch.cuda", P, ["cuda.driver_api"]),
    res("toolchain.c_compiler", F, [], BL, "no-c-compiler"),
    res("toolchain.python_headers", P),
    res("toolchain.extension_build", F, ["toolchain.c_compiler", "toolchain.python_headers"], BL),
    res("triton.import", P, ["torch.cuda"]),
    res("triton.build", F, ["triton.import", "toolchain.extension_build"], BL),
    res("triton.kernel_launch", F, ["triton.import", "triton.build", "torch.cuda"], BL),
    res("kernels.fla", F, ["triton.kernel_launch"], BL, "fla-cpu-fallback"),
    res("kernels.transformers_fast_path", W, ["kernels.fla"], DG),
]


def test_seed_cascade_has_one_root_and_a_chain():
    d = diagnose(SEED, LAYERS)
    assert [r.check_id for r in d.blocking] == ["toolchain.c_compiler"]
    root = d.blocking[0]
    assert root.codes == ("no-c-compiler",)
    paths = {s.check_id: s.path for s in root.symptoms}
    assert paths["kernels.fla"] == ("toolchain.c_compiler", "toolchain.extension_build", "triton.build",
                                    "triton.kernel_launch", "kernels.fla")
    # a warning under a failure is its own degraded root: had the failure caused it, it would fail too
    assert "kernels.transformers_fast_path" not in paths
    assert [r.check_id for r in d.degraded] == ["kernels.transformers_fast_path"]
    assert d.exit_code is ExitCode.PROBLEMS


def test_two_independent_roots_bottom_layer_first():
    rs = [
        res("gpu.kernel_driver", F, [], BL, "no-nvidia-driver"),
        res("cuda.driver_api", F, ["gpu.kernel_driver"], BL),
        res("toolchain.c_compiler", F, [], BL),
        res("triton.kernel_launch", F, ["cuda.driver_api", "toolchain.c_compiler"], BL),
    ]
    d = diagnose(rs, LAYERS)
    assert [r.check_id for r in d.blocking] == ["gpu.kernel_driver", "toolchain.c_compiler"]
    # a symptom of both roots is listed under each
    assert root_of(d, "triton.kernel_launch") == ["gpu.kernel_driver", "toolchain.c_compiler"]


def test_problem_explained_through_passing_intermediate():
    rs = [res("a.root", F, [], BL), res("b.mid", P, ["a.root"]), res("c.top", F, ["b.mid"], BL)]
    d = diagnose(rs)
    assert [r.check_id for r in d.blocking] == ["a.root"]
    assert d.blocking[0].symptoms[0].path == ("a.root", "c.top")


def test_degraded_root_is_listed_apart_and_exit_is_ok():
    rs = [res("toolchain.nvcc", W, [], DG, "nvcc-missing"), res("system.platform", P)]
    d = diagnose(rs)
    assert d.blocking == () and [r.check_id for r in d.degraded] == ["toolchain.nvcc"]
    assert d.exit_code is ExitCode.OK


def test_error_is_never_a_root_but_fails_the_exit_code():
    rs = [res("a.crashed", E), res("b.dep", B, ["a.crashed"])]
    d = diagnose(rs)
    assert d.blocking == () and d.errors == ("a.crashed",)
    assert d.exit_code is ExitCode.PROBLEMS


def test_healthy_and_skipped_is_clean():
    rs = [res("a.x", P), res("b.y", S, ["a.x"])]
    d = diagnose(rs)
    assert d.blocking == d.degraded == d.errors == ()
    assert d.exit_code is ExitCode.OK


@pytest.mark.parametrize("status", [F, B])
def test_blocked_or_failed_symptom_nests_under_its_gate(status):
    rs = [res("triton.import", F, [], BL), res("triton.build", status, ["triton.import"])]
    d = diagnose(rs)
    assert [r.check_id for r in d.blocking] == ["triton.import"]
    assert [s.check_id for s in d.blocking[0].symptoms] == ["triton.build"]


def test_warning_is_nested_under_a_warning():
    rs = [res("triton.kernel_launch", W, [], DG, "triton-warm-cache-hides-compiler"),
          res("kernels.fla", W, ["triton.kernel_launch"], DG)]
    d = diagnose(rs)
    assert [r.check_id for r in d.degraded] == ["triton.kernel_launch"]
    assert [s.check_id for s in d.degraded[0].symptoms] == ["kernels.fla"]


def test_failure_is_not_blamed_on_a_degraded_requirement():
    rs = [res("gpu.nvml", W, [], DG, "nvml-unavailable"),
          res("cuda.driver_api", F, ["gpu.nvml"], BL, "cuda-init-failed"),
          res("gpu.kernel_driver", F, [], BL, "no-nvidia-driver"),
          res("torch.cuda", F, ["cuda.driver_api"], BL)]
    d = diagnose(rs)
    assert [r.check_id for r in d.blocking] == ["cuda.driver_api", "gpu.kernel_driver"]
    assert [s.check_id for s in d.blocking[0].symptoms] == ["torch.cuda"]
    assert [r.check_id for r in d.degraded] == ["gpu.nvml"] and d.degraded[0].symptoms == ()


def test_walk_passes_through_the_other_kind():
    rs = [res("a.fail", F, [], BL), res("b.warn", W, ["a.fail"], DG), res("c.fail", F, ["b.warn"], BL)]
    d = diagnose(rs)
    assert [r.check_id for r in d.blocking] == ["a.fail"]
    assert [s.check_id for s in d.blocking[0].symptoms] == ["c.fail"]
    assert [r.check_id for r in d.degraded] == ["b.warn"]


def _died(cid, requires=(), note=True):
    """A check whose probe died without an answer; ``note``: the open-files limit's informational note
    the runner attached (multi_gpu.open_files explain_death, chk28)."""
    findings = (Finding("open-files-limit-low", Severity.INFO, "t", "m"),) if note else ()
    return CheckResult(id=cid, title=cid, layer=cid.split(".")[0], status=E, summary="s", findings=findings,
                       requires=tuple(requires))


# chk28: a limit every probe starts under explains the deaths that name it, required or not
LIMIT_ROOT = res("multi_gpu.open_files", E, [], BL, "open-files-limit-low")


def test_a_probe_death_naming_the_limit_nests_under_it_without_requiring_it():
    d = diagnose([_died("system.platform"), _died("gpu.nvml", ["gpu.kernel_driver"]), res("gpu.kernel_driver", P),
                  LIMIT_ROOT], LAYERS)
    (root,) = d.blocking
    assert root.check_id == "multi_gpu.open_files"
    assert [(s.check_id, s.path) for s in root.symptoms] == [
        ("system.platform", ("multi_gpu.open_files", "system.platform")),
        ("gpu.nvml", ("multi_gpu.open_files", "gpu.nvml"))]
    assert d.errors == ()


def test_a_death_the_limit_explains_is_not_also_blamed_on_a_failing_requirement():
    """triton.import died of the limit: torch.cuda failing (a CPU-only wheel) did not kill its probe."""
    d = diagnose([res("torch.cuda", F, [], BL, "torch-cpu-only-build"), _died("triton.import", ["torch.cuda"]),
                  res("triton.build", B, ["triton.import"]), LIMIT_ROOT], LAYERS)
    roots = {r.check_id: [s.check_id for s in r.symptoms] for r in d.blocking}
    assert roots == {"torch.cuda": [], "multi_gpu.open_files": ["triton.import", "triton.build"]}


def test_negative_control_a_death_without_the_note_stays_could_not_complete():
    d = diagnose([_died("system.platform", note=False), _died("gpu.nvml", note=False), LIMIT_ROOT], LAYERS)
    assert [r.check_id for r in d.blocking] == ["multi_gpu.open_files"] and d.blocking[0].symptoms == ()
    assert d.errors == ("system.platform", "gpu.nvml")
    # and the limit measured fine (no problem): a stray note explains nothing
    d = diagnose([_died("system.platform"), res("multi_gpu.open_files", P)], LAYERS)
    assert d.blocking == () and d.errors == ("system.platform",)
