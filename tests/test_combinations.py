"""Known-bad combinations: the stdlib version matcher, the data file, one test per entry
family with real version strings, and `check` on facts recorded on an H200 (torch
2.11.0+cu130, Triton 3.6.0, FLA 0.6.0), re-diagnosed through today's checks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import combinations as combos
from stackpeel import knowledge, registry
from stackpeel.model import CheckResult, Diagnosis, Report, Severity, Status
from stackpeel.render import render
from stackpeel.replay import rediagnose

DATA = Path(__file__).parent / "data"
S = combos.parse_specifier


# --------------------------------------------------------------------------- versions and specifiers

@pytest.mark.parametrize("spec, version, holds", [
    (">=3.4.0,<3.7.1", "3.6.0", True),
    (">=3.4.0,<3.7.1", "3.7.1", False),
    (">=3.4.0,<3.7.1", "3.7.1rc1", True),       # as fla's packaging.Version comparison sees it
    (">=3.4.0,<3.7.1", "3.4.0", True),
    (">=3.4.0,<3.7.1", "3.3.1", False),
    ("==2.11.0", "2.11.0+cu130", True),          # a local label is ignored unless named
    ("==2.11.0+cu130", "2.11.0+cu128", False),
    ("==2.11.*", "2.11.0+cu130", True),
    ("==2.5.*", "2.6.0", False),
    ("!=2.5.1", "2.5.1+cu124", False),
    ("!=2.5.1", "2.5.0", True),
    (">=0.5.2", "0.6.0.dev0", True),
    (">=0.6.0", "0.6.0.dev0", False),            # a dev release sorts before its final
    ("<0.5.0", "0.4.2", True),
    ("~=0.5.2", "0.5.9", True),
    ("~=0.5.2", "0.6.0", False),
    ("==0.0.28.post3", "0.0.28.post3", True),
    ("==0.0.28.post3", "0.0.28.post2", False),
    (">0.0.28", "0.0.28.post1", True),
    ("<525.60.13", "525.60.11", True),
    ("<580.65.06", "580.159.04", False),
    ("<570", "565.57.01", True),
    (">=9.0,<10.0", "9.0", True),
    (">=9.0,<10.0", "12.0", False),
    ("==10.3", "10.3", True),
    ("*", "1.0", True),
    (">=2.0", "not a version", False),
])
def test_specifiers_with_real_version_strings(spec, version, holds):
    assert S(spec).contains(version) is holds


@pytest.mark.parametrize("bad", [">=", "=>1.0", ">=1.0,,<2", "~=1", ">=1.*", "banana"])
def test_malformed_specifiers_are_refused(bad):
    with pytest.raises(combos.SpecifierError):
        S(bad)


def test_version_ordering_follows_pep_440():
    order = ["1.0.dev0", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1.1"]
    keys = [combos.parse_version(v).key(3) for v in order]
    assert keys == sorted(keys)
    assert combos.parse_version("2.11.0+cu130").local == "cu130"


# --------------------------------------------------------------------------- the data file

def test_data_file_entries_are_complete_and_sourced():
    entries = combos.load()
    assert len(entries) >= 30
    kb = knowledge.load()
    config_codes = {c for cls in registry.load() if cls.id == "config.known_combinations" for c in cls.codes}
    for e in entries:
        assert e.code in config_codes, e.id
        assert all(c in kb.codes for c in e.explains), e.id
        assert len(e.source) > 20 and len(e.fix) > 15 and len(e.breaks) > 10, e.id
        assert e.when, e.id
        assert all(m == "pip" for m, _ in e.commands), e.id
        assert all(link.startswith("https://") for link in e.links), e.id
        assert all(c in {cls.id for cls in registry.load()} for c in e.covered_by), e.id
    assert combos.data_version() >= 1
    # the file sits in knowledge/ but is data, not codes: the knowledge base does not read it
    assert all(not f.endswith("combinations.toml") for f in kb.files)


def test_malformed_entries_are_refused(tmp_path):
    raw = {"combination": [{"id": "x", "code": "known-bad-combination", "severity": "fatal", "breaks": "b",
                            "consequence": "c", "fix": "f", "source": "s", "when": {"torch": ">=2"}}]}
    with pytest.raises(combos.SpecifierError, match="severity"):
        combos.parse_entries(raw)
    raw["combination"][0]["severity"] = "blocking"
    raw["combination"].append(dict(raw["combination"][0]))
    with pytest.raises(combos.SpecifierError, match="id used twice"):
        combos.parse_entries(raw)


H200 = {"torch": "2.11.0+cu130", "triton": "3.6.0", "fla-core": "0.6.0", "flash-linear-attention": "0.6.0",
        "transformers": "5.17.0", "gpu_cc": ["9.0"], "driver": "580.159.04", "cuda": "13.0", "python": "3.12.3"}


def ids(versions, **kw):
    return [m.id for m in combos.match_combinations(versions, **kw)]


# --------------------------------------------------------------------------- one family at a time

def test_fla_on_hopper_matches_only_the_broken_triton_range():
    assert ids(H200) == ["fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    assert ids(dict(H200, triton="3.7.1")) == []
    assert ids(dict(H200, gpu_cc=["8.0"])) == []                  # A100: not Hopper
    assert ids(dict(H200, gpu_cc=["8.0", "9.0"])) != []          # any GPU counts
    assert ids(dict(H200, tilelang="0.1.9")) == []               # FLA dispatches to TileLang
    assert ids(dict(H200, **{"fla-core": "0.6.0.dev0"})) == ["fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    assert ids(dict(H200, **{"fla-core": "0.5.1"}, triton="3.7.1")) == ["fla-gated-bwd-hopper-triton-3.4-fla-0.5.0"]
    assert ids(dict(H200, **{"fla-core": "0.4.2"})) == ["fla-gated-bwd-hopper-unguarded-fla-0.4"]
    # distribution names in any spelling
    assert ids({"FLA_Core": "0.6.0", "Triton": "3.6.0", "gpu_cc": "9.0"}) == ["fla-gated-bwd-hopper-triton-3.4-3.7.0"]


def test_a_log_with_some_versions_gives_partial_matches():
    partial = combos.match_combinations({"triton": "3.6.0", "fla-core": "0.6.0"}, partial=True)
    hit = [m for m in partial if m.id == "fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    assert hit and hit[0].missing == ("gpu_cc",)
    assert combos.match_combinations({"triton": "3.6.0", "fla-core": "0.6.0"}) == []


@pytest.mark.parametrize("versions, expected", [
    ({"transformers": "5.24.0", "torch": "2.5.1+cu124"}, "transformers-5.20-torch-below-2.6"),
    ({"transformers": "5.17.0", "torch": "2.4.1"}, "transformers-5.15-torch-below-2.5"),
    ({"transformers": "5.0.0", "torch": "2.1.2+cu121"}, "transformers-5.0-torch-below-2.2"),
    ({"torch": "2.5.1+cu124", "triton": "3.2.0"}, "torch-2.5-triton-3.2-attrsdescriptor"),
    ({"torch": "2.6.0+cu126", "triton": "3.3.1"}, "torch-2.6-triton-3.3-attrsdescriptor"),
    ({"torch": "2.8.0+cu128", "triton": "3.3.1"}, "torch-2.8-triton-pin"),
    ({"torch": "2.11.0+cu130", "triton": "3.5.1"}, "torch-2.10-2.11-triton-older-than-pin"),
    ({"cuda": "13.0", "driver": "570.124.06"}, "cuda-13-driver-below-580"),
    ({"cuda": "12.8", "driver": "470.256.02"}, "cuda-12-driver-below-525.60.13"),
    ({"gpu_cc": ["12.0"], "driver": "565.57.01"}, "blackwell-driver-below-570"),
    ({"torch": "2.8.0+cu128", "cuda": "12.8", "gpu_cc": ["6.1"]}, "torch-cu128-maxwell-pascal"),
    ({"torch": "2.11.0+cu128", "cuda": "12.8", "gpu_cc": ["7.0"]}, "torch-cu128-volta-from-2.11"),
    ({"cuda": "13.0", "gpu_cc": ["7.0"]}, "cuda-13-pre-turing"),
    ({"triton": "3.2.0", "gpu_cc": ["12.0"]}, "triton-below-3.3-blackwell"),
    ({"triton": "3.4.0", "gpu_cc": ["10.3"]}, "triton-3.3-3.5-sm103"),
    ({"triton": "3.5.1", "gpu_cc": ["12.1"]}, "triton-3.3-3.5-sm121"),
    ({"triton": "3.9.0", "gpu_cc": ["6.1"]}, "triton-pre-volta"),
    ({"flash-attn": "2.8.3", "gpu_cc": ["7.5"]}, "flash-attn-2-pre-ampere"),
    ({"xformers": "0.0.29.post3", "torch": "2.7.0+cu126"}, "xformers-0.0.29.post3-torch"),
    ({"torch": "2.2.2", "numpy": "2.0.0"}, "torch-below-2.3-numpy-2"),
    ({"bitsandbytes": "0.45.0", "cuda": "12.8"}, "bitsandbytes-below-0.45.3-cuda-12.8"),
    ({"bitsandbytes": "0.47.0", "cuda": "13.0"}, "bitsandbytes-below-0.48-cuda-13"),
    ({"torchvision": "0.20.1+cu124", "torch": "2.6.0+cu124"}, "torchvision-0.20-torch"),
    ({"torchvision": "0.22.0", "torch": "2.8.0"}, "torchvision-0.22-torch"),
    ({"torchaudio": "2.5.1", "torch": "2.7.0+cu126"}, "torchaudio-2.5-torch"),
    ({"vllm": "0.6.4.post1", "torch": "2.6.0+cu124"}, "vllm-0.6.4-to-0.7.3-torch"),
    ({"vllm": "0.10.1.1", "torch": "2.8.0"}, "vllm-0.9.0-to-0.10.1.1-torch"),
    ({"xformers": "0.0.34", "torch": "2.9.1+cu128"}, "xformers-0.0.34-torch"),
    ({"xformers": "0.0.23.post1", "torch": "2.1.1"}, "xformers-0.0.23.post1-torch"),    # built for 2.1.2
    # combo26: the releases of 2026-12 (torch 2.13-2.15, Triton 3.8/3.9, transformers 5.25, bitsandbytes 0.50,
    # causal-conv1d 1.7.0, mamba-ssm 2.3.2.post1, xformers 0.0.35, sgl-kernel 0.3.21, flashinfer 0.7.4)
    ({"torch": "2.13.0+cu130", "triton": "3.7.0"}, "torch-2.13-triton-older-than-pin"),
    ({"torch": "2.14.1+cu130", "triton": "3.7.1"}, "torch-2.14-triton-not-3.8"),
    ({"torch": "2.14.0", "triton": "3.9.0"}, "torch-2.14-triton-not-3.8"),              # ~=3.8.0 excludes 3.9
    ({"torch": "2.15.0+cu132", "triton": "3.8.0"}, "torch-2.15-triton-not-3.9"),
    ({"triton": "3.8.0", "gpu_cc": ["10.7"]}, "triton-below-3.9-sm107"),
    ({"transformers": "5.3.0", "torch": "2.3.1+cu121"}, "transformers-5.8-torch-below-2.4"),  # the floor rose in 5.1
    ({"transformers": "5.25.0", "bitsandbytes": "0.45.5"}, "transformers-5-bitsandbytes-below-0.46.1"),
    ({"transformers": "5.25.0", "accelerate": "1.0.1"}, "transformers-5-accelerate-below-1.1"),
    ({"bitsandbytes": "0.49.2", "cuda": "13.2"}, "bitsandbytes-0.48-0.49-cuda-13.2-or-newer"),
    ({"bitsandbytes": "0.46.0", "cuda": "12.9"}, "bitsandbytes-0.45.3-0.46.0-cuda-12.9"),
    ({"causal-conv1d": "1.7.0", "gpu_cc": ["7.0"]}, "causal-conv1d-1.6.2-pre-turing"),
    ({"causal-conv1d": "1.6.2.post1+cu12torch2.8cxx11abiTRUE", "gpu_cc": ["6.0"]}, "causal-conv1d-1.6.2-pre-turing"),
    ({"mamba-ssm": "2.3.2.post1", "gpu_cc": ["7.0"]}, "mamba-ssm-2.3.2-pre-turing"),
    ({"xformers": "0.0.35", "torch": "2.9.1+cu128"}, "xformers-0.0.35-torch-below-2.10"),
    ({"sgl-kernel": "0.3.21", "torch": "2.14.1+cu130"}, "sgl-kernel-0.3.18.post2-to-0.3.21-torch"),
    ({"sgl-kernel": "0.3.17.post1", "torch": "2.9.1"}, "sgl-kernel-0.3.16.post4-to-0.3.18.post1-torch"),
    ({"flashinfer-python": "0.7.4", "gpu_cc": ["7.0"]}, "flashinfer-pre-turing"),
    ({"deepspeed": "0.19.4", "torch": "2.14.1+cu130"}, "deepspeed-below-0.19.5-torch-2.14"),
    ({"deepspeed": "0.19.6", "torch": "2.15.0+cu132", "cuda": "13.2"}, "deepspeed-0.19.5-0.19.6-torch-2.14-cuda-13"),
])
def test_each_family_matches_its_real_combination(versions, expected):
    assert expected in ids(versions)


@pytest.mark.parametrize("versions", [
    {"transformers": "5.24.0", "torch": "2.6.0+cu124"},
    {"torch": "2.6.0+cu124", "triton": "3.2.0"},
    {"torch": "2.11.0+cu130", "triton": "3.6.0"},
    {"cuda": "13.0", "driver": "580.65.06"},
    {"cuda": "12.8", "driver": "525.60.13"},
    {"torch": "2.8.0+cu126", "cuda": "12.6", "gpu_cc": ["6.1"]},
    {"cuda": "13.0", "gpu_cc": ["7.5"]},
    {"triton": "3.6.0", "gpu_cc": ["10.3"]},
    {"triton": "3.3.1", "gpu_cc": ["10.0"]},
    {"flash-attn": "2.8.3", "gpu_cc": ["8.0"]},
    {"xformers": "0.0.29.post3", "torch": "2.6.0+cu124"},
    {"torch": "2.3.0", "numpy": "2.0.0"},
    {"bitsandbytes": "0.48.1", "cuda": "13.0"},
    H200 | {"triton": "3.7.1"},
    {"torchvision": "0.20.1+cu124", "torch": "2.5.1+cu124"},
    {"torchvision": "0.20.0", "torch": "2.5.1"},          # a patch of the same torch minor
    {"torchaudio": "2.9.1", "torch": "2.9.0+cu128"},
    {"torchvision": "0.29.1", "torch": "2.15.0"},          # 0.29.1 asks for torch>=2.14.0: no exact pin
    {"vllm": "0.6.4", "torch": "2.5.0"},                   # pinned to 2.5.1: a patch of the same minor
    {"vllm": "0.11.0", "torch": "2.8.0+cu128"},
    {"xformers": "0.0.34", "torch": "2.10.0+cu130"},
    {"xformers": "0.0.35", "torch": "2.11.0"},              # asks for torch>=2.10: no exact pin
    # combo26: the matching good pair of each new entry
    {"torch": "2.13.0+cu130", "triton": "3.7.1"},
    {"torch": "2.14.1+cu130", "triton": "3.8.1"},          # any 3.8.x from 3.8.0
    {"torch": "2.15.0+cu132", "triton": "3.9.0"},
    {"triton": "3.9.0", "gpu_cc": ["10.7"]},
    {"triton": "3.8.0", "gpu_cc": ["10.0"]},
    {"transformers": "5.3.0", "torch": "2.4.0"},
    {"transformers": "5.0.0", "torch": "2.2.2"},
    {"transformers": "5.25.0", "torch": "2.15.0", "bitsandbytes": "0.46.1", "accelerate": "1.1.0"},
    {"bitsandbytes": "0.50.0", "cuda": "13.2"},
    {"bitsandbytes": "0.49.2", "cuda": "13.0"},
    {"bitsandbytes": "0.46.1", "cuda": "12.9"},
    {"causal-conv1d": "1.7.0", "gpu_cc": ["7.5"]},
    {"causal-conv1d": "1.6.1", "gpu_cc": ["7.0"]},
    {"mamba-ssm": "2.3.1", "gpu_cc": ["7.0"]},
    {"xformers": "0.0.35", "torch": "2.10.0"},
    {"sgl-kernel": "0.3.21", "torch": "2.9.1+cu128"},
    {"sgl-kernel": "0.3.16.post3", "torch": "2.9.1"},      # its description names no torch yet
    {"flashinfer-python": "0.7.4", "gpu_cc": ["7.5"]},
    {"deepspeed": "0.19.4", "torch": "2.13.0+cu130", "cuda": "13.0"},       # torch 2.13's headers accept C++17
    {"deepspeed": "0.19.6", "torch": "2.14.1+cu128", "cuda": "12.8"},       # nvcc gets -std=c++20 on CUDA 12.5+
    {"deepspeed": "0.19.8", "torch": "2.15.0+cu132", "cuda": "13.2"},
])
def test_healthy_neighbours_match_nothing(versions):
    assert ids(versions) == []


# --------------------------------------------------------------------------- check on recorded H200 facts

def _load(path):
    return json.loads((DATA / path).read_text())


def h200_report(triton="3.6.0", cc="9.0", name="NVIDIA H200", extra_dists=None, torch_cuda=None,
                machine="x86_64", torch_build=None, driver=None) -> Report:
    """A report of the facts recorded on the lent H200 (driver 580.159.04, torch 2.11.0+cu130,
    Triton 3.6.0, FLA 0.6.0), re-diagnosed by today's checks: gpu/cuda/torch from
    tests/data/gpu/h200_recorded.json, triton.import from tests/data/triton/h200_import_36.json,
    and the facts the config.versions probe reads there, assembled from the same recordings
    (torch/triton/Python from h200_import_36, FLA's distributions from h200_fla_healthy,
    transformers from h200_transformers_healthy, GPUs and driver from the recorded NVML facts).
    ``torch_build`` ("2.9.1+cu126", [arch list]) replaces the wheel torch.cuda read, ``cc``/``name``
    the GPU every check saw, ``driver`` ("570.172.08", 12080) the driver and the CUDA version it
    reported (cuDriverGetVersion)."""
    rec = _load("gpu/h200_recorded.json")["healthy"]
    imp = dict(_load("triton/h200_import_36.json"), version=triton, dist_version=triton)
    fla = _load("triton/h200_fla_healthy.json")
    tf = _load("triton/h200_transformers_healthy.json")
    facts = {cid: dict(rec[cid]["facts"]) for cid in rec if not cid.startswith("_")}
    nvml = facts["gpu.nvml"]
    if torch_build or cc != "9.0" or driver:
        version, arch = torch_build or (facts["torch.cuda"]["version"], facts["torch.cuda"]["arch_list"])
        major, minor = cc.split(".")
        facts["torch.cuda"] = dict(
            facts["torch.cuda"], version=version, dist_version=version.split("+")[0], arch_list=list(arch),
            built_arch_flags=list(arch), cuda=torch_cuda or facts["torch.cuda"]["cuda"], capabilities=[cc],
            devices=[{"cc": cc, "index": 0, "name": name}])
        gpu = {"cc": cc, "cc_major": int(major), "cc_minor": int(minor), "name": name}
        facts["cuda.driver_api"] = dict(facts["cuda.driver_api"], devices=[
            dict(d, **gpu) for d in facts["cuda.driver_api"]["devices"]])
        nvml = facts["gpu.nvml"] = dict(nvml, devices=[dict(d, **gpu) for d in nvml["devices"]])
        if driver:  # the same machine with another driver: its version wherever a probe read it
            facts = json.loads(json.dumps(facts).replace("580.159.04", driver[0]))
            facts["cuda.driver_api"]["driver_version"] = facts["gpu.nvml"]["cuda_driver_version"] = driver[1]
            nvml = facts["gpu.nvml"]
    dists = {"torch": (torch_build[0] if torch_build else imp["torch_version"] + "+cu130"), "triton": triton, "transformers": tf["version"]}
    dists.update(fla["dists"])
    dists.update(extra_dists or {})
    facts["triton.import"] = imp
    facts["config.known_combinations"] = {
        "dists": dists, "torch_cuda": torch_cuda or imp["torch_cuda"], "python": imp["python_version"],
        "machine": machine,
        "gpus": [{"name": name, "cc": cc} for _ in nvml["devices"]], "driver": nvml["driver_version"],
        "cuda_driver_version": nvml["cuda_driver_version"], "gpu_source": "NVML",
        "torch_version_file": dists["torch"], "imported": []}
    classes = {c.id: c for c in registry.load(plugins=False)}
    results = []
    for cid in ("gpu.kernel_driver", "gpu.device_nodes", "gpu.nvml", "gpu.visible_devices", "cuda.driver_api",
                "torch.cuda", "triton.import", "config.known_combinations"):
        cls = classes[cid]
        results.append(CheckResult(id=cid, title=cls.title, layer=cls.layer, status=Status.PASS, summary="recorded",
                                   facts=facts[cid], requires=cls.requires))
    report = Report(tool_version="test", created="2026-12-01T00:00:00+00:00",
                    target={"python": "/opt/torch/.venv/bin/python3"}, host={"pkg_manager": "apt", "is_root": True},
                    results=tuple(results), diagnosis=Diagnosis())
    return rediagnose(report)


def test_check_on_recorded_h200_facts_reports_the_fla_triton_combination_as_blocking():
    report = h200_report()
    r = report.result("config.known_combinations")
    assert r.status is Status.FAIL
    assert [f.code for f in r.findings] == ["fla-triton-hopper-gated-backward"]
    f = r.findings[0]
    assert f.severity is Severity.BLOCKING
    assert "fla-core 0.6.0, triton 3.6.0, GPU compute capability 9.0" in f.message
    assert "training with FLA's gated kernels" in f.message
    assert "fla/ops/common/chunk_o.py" in f.message                                   # names its source
    assert "Triton 3.7.1 or newer" in f.remedy.text and "tilelang" in f.remedy.text  # the fix
    commands = [c.command for c in f.remedy.commands]
    assert commands == ["/opt/torch/.venv/bin/python3 -m pip install 'triton>=3.7.1'",
                        "/opt/torch/.venv/bin/python3 -m pip install tilelang"]
    # the rest of the recorded stack is healthy: the combination is the one blocking root cause
    assert [(rc.check_id, rc.codes) for rc in report.diagnosis.blocking] == \
        [("config.known_combinations", ("fla-triton-hopper-gated-backward",))]
    assert r.facts["versions"]["gpu_cc"] == ["9.0"] and r.facts["versions"]["driver"] == "580.159.04"
    assert r.facts["versions"]["cuda_driver"] == "13.0" and r.facts["versions"]["cuda"] == "13.0"
    text = render(report, "text", width=100)
    assert "fla-triton-hopper-gated-backward" in text and "triton>=3.7.1" in text  # the root and its fix
    assert "known-bad combination" in render(report, "text", width=100, verbose=True)


def test_check_passes_with_triton_371_on_the_same_h200():
    r = h200_report(triton="3.7.1").result("config.known_combinations")
    assert r.status is Status.PASS, [f.message for f in r.findings]
    assert "none of" in r.summary


def test_check_passes_on_a_non_hopper_gpu():
    r = h200_report(cc="8.0", name="NVIDIA A100-SXM4-80GB").result("config.known_combinations")
    assert r.status is Status.PASS and r.findings == ()


def test_check_passes_with_tilelang_installed():
    r = h200_report(extra_dists={"tilelang": "0.1.9"}).result("config.known_combinations")
    assert r.status is Status.PASS


def _installed(python: str) -> dict:
    """The distributions' versions the interpreter's own metadata gives (no PYTHONPATH, nothing imported):
    what the real-probe tests compare with, so that they hold on any stack (the CI stack venv: torch
    2.13.0+cpu, Triton 3.9.0, FLA 0.6.0; the GPU image: torch 2.11.0+cu130, Triton 3.6.0, no FLA)."""
    code = ("import importlib.metadata as m, json\nout = {}\n"
            "for n in ('torch', 'triton', 'fla-core'):\n"
            "    try: out[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: pass\n"
            "print(json.dumps(out))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return json.loads(subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                                     check=True).stdout)


def _needs_fla_and_fixed_triton(python: str) -> dict:
    """These tests put a Triton 3.6.0 dist-info before the interpreter's own FLA and Triton: they need FLA
    installed and a Triton that FLA's Hopper backward accepts (3.7.1 or newer) as the passing control."""
    have = _installed(python)
    triton = tuple(int(x) for x in re.findall(r"\d+", have.get("triton", "0"))[:3])
    if "fla-core" not in have or triton < (3, 7, 1):
        pytest.skip(f"needs fla-core and Triton >= 3.7.1 in the stack interpreter (it has {have})")
    return have


def _hiding_cuda(stack_python, tmp_path):
    """A wrapper interpreter that runs the stack Python in a private mount namespace where
    /usr/local/cuda is an empty directory (the fault comes from outside, nothing is moved)."""
    import shutil
    import subprocess

    if not os.path.isdir("/usr/local/cuda"):
        return stack_python
    if not shutil.which("unshare") or subprocess.run(
            ["unshare", "-m", "--propagation", "private", "true"], capture_output=True).returncode != 0:
        pytest.skip("/usr/local/cuda exists and cannot be hidden here (unshare -m needs root)")
    empty = tmp_path / "empty"
    empty.mkdir()
    wrapper = tmp_path / "python-without-cuda"
    wrapper.write_text(f"#!/bin/sh\nexec unshare -m --propagation private sh -c "
                       f"'mount --bind {empty} /usr/local/cuda && exec \"$0\" \"$@\"' {stack_python} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def test_tilelang_without_nvcc_is_no_workaround(stack_python, clean_env, fake_libs, tmp_path):
    """FLA dispatches to TileLang only with a usable nvcc (fla/utils/env.py has_usable_nvcc):
    a tilelang dist-info with no nvcc anywhere leaves the combination blocking, and says why;
    an nvcc under CUDA_HOME makes it a workaround."""
    from stackpeel import engine

    _needs_fla_and_fixed_triton(stack_python)
    meta = tmp_path / "meta"
    for name, version in (("triton", "3.6.0"), ("tilelang", "0.1.9")):
        d = meta / f"{name}-{version}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    env = {k: v for k, v in clean_env.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(LD_LIBRARY_PATH=fake_libs["good"], FAKE_GPUS="NVIDIA H200:9.0", PYTHONPATH=str(meta),
               PATH=os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                    if p and not os.path.exists(os.path.join(p, "nvcc"))))
    python = _hiding_cuda(stack_python, tmp_path)
    r = engine.check(python=python, env=env, only=["config.known_combinations"],
                     plugins=False).result("config.known_combinations")
    assert r.facts["versions"]["gpu_cc"] == ["9.0"], r.summary
    assert [f.code for f in r.findings] == ["fla-triton-hopper-gated-backward"]
    assert "tilelang 0.1.9 is installed, but FLA will not use it: no nvcc" in r.findings[0].evidence
    ok = engine.check(python=python, env=dict(env, CUDA_HOME=str(_fake_cuda_home(tmp_path))),
                      only=["config.known_combinations"], plugins=False).result("config.known_combinations")
    assert ok.status is Status.PASS
    assert engine.check(python=python, env=dict(env, CUDA_HOME=str(_fake_cuda_home(tmp_path)), FLA_TILELANG="0"),
                        only=["config.known_combinations"], plugins=False).result(
        "config.known_combinations").status is Status.FAIL


def _fake_cuda_home(tmp_path):
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho fake nvcc\n")
    nvcc.chmod(0o755)
    return home


def test_entries_a_live_check_measures_are_left_to_it():
    # torch 2.11 with Triton 3.5.1: triton.import measures the pin mismatch live (and warns),
    # so check does not repeat it; the table keeps the entry for explain
    report = h200_report(triton="3.5.1")
    r = report.result("config.known_combinations")
    assert r.facts["left_to_live_checks"] == ["torch-2.10-2.11-triton-older-than-pin"]
    assert r.findings[0].code == "fla-triton-hopper-gated-backward"      # 3.5.1 is in FLA's range too
    assert all("torch-2.10-2.11" not in f.message for f in r.findings)
    assert report.result("triton.import").status is Status.WARN


def test_every_distribution_the_table_names_is_read_by_check():
    """A distribution an entry names that the config.versions probe does not read would never
    match in `check` (torchao's and TensorRT's entries did not before the probe read them)."""
    from test_gpu_layers import load_probe

    named = {k for e in combos.load() for cond in (e.when, e.unless) for k in cond
             if k not in combos.SPECIAL_KEYS}
    assert named <= set(load_probe("config").VERSION_DISTS), named - set(load_probe("config").VERSION_DISTS)
    # and explain reads each from a log (pip list, collect_env, a wheel's name)
    assert named <= {name for name, _ in combos._LOG_DISTS}, named - {name for name, _ in combos._LOG_DISTS}


def test_explain_reads_a_companion_built_for_another_torch_from_pip_list():
    facts = combos.facts_from_text("torch                    2.6.0+cu124\n"
                                   "torchvision              0.20.1+cu124\n"
                                   "Successfully installed torchaudio-2.5.1\n")
    assert facts.versions["torchvision"] == "0.20.1+cu124" and facts.versions["torchaudio"] == "2.5.1"
    assert {m.id for m in combos.match_combinations(facts.versions, partial=True)} >= {
        "torchvision-0.20-torch", "torchaudio-2.5-torch"}


def test_companion_pins_follow_the_release_pairing():
    """The block scripts/companion_pins.py wrote from the wheels' metadata keeps PyTorch's
    published pairing: torchvision 0.N with torch 2.(N-15), torchaudio 2.N with torch 2.N."""
    pins = [e for e in combos.load() if e.id.startswith(("torchvision-", "torchaudio-"))]
    assert len(pins) >= 25
    for e in pins:
        package = "torchvision" if e.id.startswith("torchvision-") else "torchaudio"
        minor = int(e.when[package].text.split(".")[1])
        torch_minor = minor - 15 if package == "torchvision" else minor
        assert e.when["torch"].text == f"!=2.{torch_minor}.*", e.id
        assert e.severity == "blocking" and "{version:torch}" in e.commands[0][1], e.id


def test_companion_block_is_what_the_committed_snapshot_gives():
    """scripts/companion_pins.py --check, offline: the block in combinations.toml is generated from
    scripts/companion_pins.json (every release's torch pin as the index served it), never edited by hand."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "companion_pins.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    snap = json.loads(script.with_suffix(".json").read_text())["pins"]
    assert set(snap) == {"torchvision", "torchaudio", "vllm", "sglang", "xformers"}
    assert snap["sglang"]["0.5.3"] == "2.8.0" and snap["torchvision"]["0.22.0"] == "2.7.0"


def test_sglang_pinned_to_another_torch_is_a_known_bad_combination():
    """SGLang 0.5.3's metadata pins torch==2.8.0 (and sgl-kernel 0.3.14.post1 built for it)."""
    ids = {m.id for m in combos.match_combinations({"sglang": "0.5.3", "torch": "2.9.1+cu128"})}
    assert "sglang-0.5.1-to-0.5.5.post3-torch" in ids
    assert not {i for i in ids if i.startswith("sglang-")} & {
        m.id for m in combos.match_combinations({"sglang": "0.5.3", "torch": "2.8.0+cu128"})}
    entry = next(e for e in combos.load() if e.id == "sglang-0.5.1-to-0.5.5.post3-torch")
    assert entry.commands_for("py", {"sglang": "0.5.3"}) == ["py -m pip install 'sglang==0.5.3'"]


def test_a_companion_built_for_another_torch_is_named_with_a_command_for_this_torch():
    report = h200_report(extra_dists={"torchvision": "0.25.0+cu130"})     # built for torch 2.10; 2.11 here
    r = report.result("config.known_combinations")
    found = [f for f in r.findings if f.code == "known-bad-combination"]
    assert len(found) == 1 and "(torchvision-0.25-torch)" in found[0].message
    assert "torchvision 0.25 is built for torch 2.10" in found[0].message
    assert [c.to_dict()["command"] for c in found[0].remedy.commands] == [
        "/opt/torch/.venv/bin/python3 -m pip install --upgrade 'torch==2.11.0' torchvision"]


@pytest.mark.parametrize("dists, expected", [
    # sgl-kernel 0.3.21 (built for torch 2.9.1) beside the H200's torch 2.11.0+cu130
    ({"sgl-kernel": "0.3.21"}, "sgl-kernel-0.3.18.post2-to-0.3.21-torch"),
    # transformers 5.25 counts this bitsandbytes as not installed (and it has no CUDA 13 binary either)
    ({"transformers": "5.25.0", "bitsandbytes": "0.45.5"}, "transformers-5-bitsandbytes-below-0.46.1"),
    # bitsandbytes 0.49.2 has no CUDA 13.2 binary: the H200's torch moved to a +cu132 build
    ({"bitsandbytes": "0.49.2", "torch": "2.15.0+cu132"}, "bitsandbytes-0.48-0.49-cuda-13.2-or-newer"),
    # the negative controls: the matching good pairs
    ({"sgl-kernel": "0.3.21", "torch": "2.9.1+cu128"}, None),
    ({"transformers": "5.25.0", "bitsandbytes": "0.49.2"}, None),       # >= 0.46.1, and it has cuda130
])
def test_check_on_recorded_h200_facts_reports_a_new_release_combination(dists, expected):
    """config.known_combinations on the H200's recorded facts (FLA's Triton entry aside, which the
    triton 3.7.1 here keeps out): a release of 2026-12 beside the recorded stack is a blocking root."""
    cu = dists.get("torch", "").partition("+cu")[2]        # torch/version.py's cuda of that build
    report = h200_report(triton="3.7.1", extra_dists=dists, torch_cuda=f"{cu[:2]}.{cu[2:]}" if cu else None)
    r = report.result("config.known_combinations")
    found = [f for f in r.findings if f.code == "known-bad-combination"]
    if expected is None:
        assert r.status is Status.PASS and r.findings == (), [f.message for f in r.findings]
        return
    assert r.status is Status.FAIL
    (f,) = [f for f in found if f"({expected})" in f.message]
    assert f.severity is Severity.BLOCKING
    assert [rc.check_id for rc in report.diagnosis.blocking] == ["config.known_combinations"]


def test_real_probe_reads_sgl_kernel_built_for_another_torch(stack_python, clean_env, tmp_path):
    """The real probe in the stack interpreter (torch 2.13.0+cpu) with an sgl-kernel 0.3.21 dist-info first
    on PYTHONPATH: check reads the distribution (added to VERSION_DISTS) and names the pairing; 0.3.16.post3,
    whose metadata names no torch, is the control."""
    from stackpeel import engine

    def run(version):
        meta = tmp_path / version / f"sgl_kernel-{version}.dist-info"
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sgl-kernel\nVersion: {version}\n")
        report = engine.check(python=stack_python, env=dict(clean_env, PYTHONPATH=str(meta.parent)),
                              only=["config.known_combinations"], plugins=False)
        return report.result("config.known_combinations")

    r = run("0.3.21")
    torch = _installed(stack_python)["torch"]
    assert r.facts["versions"]["sgl-kernel"] == "0.3.21" and r.facts["versions"]["torch"] == torch
    assert [f.message.count("(sgl-kernel-0.3.18.post2-to-0.3.21-torch)") for f in r.findings] == [1]
    assert r.findings[0].remedy.commands[0].command.endswith("-m pip install 'torch==2.9.1'")
    ok = run("0.3.16.post3")
    assert ok.facts["versions"]["sgl-kernel"] == "0.3.16.post3" and ok.findings == ()


def test_explain_reads_sgl_kernel_and_flashinfer_from_pip_list():
    facts = combos.facts_from_text("torch                    2.14.1+cu130\n"
                                   "sgl-kernel               0.3.21\n"
                                   "flashinfer-python        0.7.4\n")
    assert facts.versions["sgl-kernel"] == "0.3.21" and facts.versions["flashinfer-python"] == "0.7.4"
    assert "sgl-kernel-0.3.18.post2-to-0.3.21-torch" in {m.id for m in combos.match_combinations(facts.versions)}


def test_a_command_whose_version_is_unknown_is_left_out():
    entry = next(e for e in combos.load() if e.id == "torchvision-0.25-torch")
    assert entry.commands_for("py", {"torch": "2.11.0+cu130"}) == [
        "py -m pip install --upgrade 'torch==2.11.0' torchvision"]
    assert entry.commands_for("py", {}) == []


def test_a_combination_is_a_root_even_where_cuda_is_missing():
    """No requirements: on a machine without a driver, transformers refusing this torch is its own root."""
    classes = {c.id: c for c in registry.load(plugins=False)}
    assert classes["config.known_combinations"].requires == ()


# --------------------------------------------------------------------------- the real probe

from test_gpu_layers import fake_libs  # noqa: E402,F401  fixture: fake libnvidia-ml / libcuda built with gcc


def test_real_probe_on_the_stack_venv_reads_metadata_without_importing(stack_python, clean_env):
    from stackpeel import engine

    report = engine.check(python=stack_python, env=clean_env, only=["config.known_combinations"], plugins=False)
    r = report.result("config.known_combinations")
    v = r.facts["versions"]
    have = _installed(stack_python)
    assert {n: v.get(n) for n in have} == have, v
    assert "torch" in have and ("fla-core" in v) == ("fla-core" in have)
    assert r.facts["imported"] == []                               # read from metadata, nothing imported
    if not os.path.exists("/dev/nvidiactl"):                      # no GPU on this machine
        assert r.status is Status.PASS and "gpu_cc" not in v


def test_real_probe_on_a_fake_h200_with_triton_360_metadata(stack_python, clean_env, fake_libs, tmp_path):
    """The probe in a child of the stack interpreter, NVML answering for an H200 (a fake
    libnvidia-ml on LD_LIBRARY_PATH) and a triton-3.6.0 dist-info first on PYTHONPATH: the
    metadata and the GPU alone make check call FLA's backward broken; the real Triton 3.9.0 passes."""
    from stackpeel import engine

    _needs_fla_and_fixed_triton(stack_python)
    meta = tmp_path / "meta" / "triton-3.6.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n")
    env = dict(clean_env, LD_LIBRARY_PATH=fake_libs["good"], FAKE_GPUS="NVIDIA H200:9.0")
    bad = engine.check(python=stack_python, env=dict(env, PYTHONPATH=str(meta.parent)),
                       only=["config.known_combinations"], plugins=False)
    r = bad.result("config.known_combinations")
    assert r.facts["versions"]["gpu_cc"] == ["9.0"] and r.facts["versions"]["triton"] == "3.6.0"
    assert [f.code for f in r.findings] == ["fla-triton-hopper-gated-backward"]
    assert [rc.check_id for rc in bad.diagnosis.blocking] == ["config.known_combinations"]
    good = engine.check(python=stack_python, env=env, only=["config.known_combinations"], plugins=False)
    assert good.result("config.known_combinations").status is Status.PASS


def test_real_probe_reads_a_torchvision_built_for_another_torch(stack_python, clean_env, tmp_path):
    """The real probe in the stack interpreter (torch 2.13.0+cpu, no GPU) with a torchvision
    0.25.0 dist-info first on PYTHONPATH: its metadata alone makes check name the pairing (0.25 is
    built for torch 2.10), with a command that pins the installed torch."""
    from stackpeel import engine

    meta = tmp_path / "meta" / "torchvision-0.25.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.25.0\n")
    report = engine.check(python=stack_python, env=dict(clean_env, PYTHONPATH=str(meta.parent)),
                          only=["config.known_combinations"], plugins=False)
    r = report.result("config.known_combinations")
    assert r.facts["versions"]["torchvision"] == "0.25.0"
    (f,) = r.findings
    assert f.code == "known-bad-combination" and "(torchvision-0.25-torch)" in f.message
    torch = _installed(stack_python)["torch"].partition("+")[0]           # the installed torch, pinned
    assert f.remedy.commands[0].command.endswith(f"-m pip install --upgrade 'torch=={torch}' torchvision")


# --------------------------------------------------------------------------- explain: FLA's own refusal in a log

@pytest.mark.parametrize("line", [
    # fla-core 0.5.2 to 0.6.0 (fla/ops/common/chunk_o.py), as a rank-prefixed torchrun line
    "[rank0]: RuntimeError: Triton >= 3.4.0 and < 3.7.1 on Hopper GPUs produces incorrect results for gated "
    "chunk_bwd_dqkwg (see #640). Please upgrade Triton to >= 3.7.1 or install tilelang: `pip install tilelang`",
    # fla-core 0.5.0 / 0.5.1, quoted in prose
    "Training crashes on the first backward: `RuntimeError: Triton >= 3.4.0 on Hopper GPUs produces incorrect "
    "results for gated chunk_bwd_dqkwg (see #640). Please install tilelang`",
])
def test_explain_names_the_combination_from_flas_refusal(tmp_path, line):
    import subprocess
    import sys

    log = tmp_path / "train.log"
    log.write_text('  File "/opt/venv/lib/python3.12/site-packages/fla/ops/common/chunk_o.py", line 728, in '
                   "chunk_bwd_dqkwg\n    raise RuntimeError(\n" + line + "\n")
    p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", str(log)], capture_output=True,
                       text=True, timeout=120)
    assert "Root cause: fla-triton-hopper-gated-backward" in p.stdout, p.stdout + p.stderr
    assert "Triton 3.7.1 or newer" in p.stdout and "tilelang" in p.stdout


# --------------------------------------------------------------------------- versions a log prints

COLLECT_ENV = """\
PyTorch version: 2.11.0+cu130
Is debug build: False
CUDA used to build PyTorch: 13.0
ROCM used to build PyTorch: N/A

OS: Ubuntu 24.04.3 LTS (x86_64)
Python version: 3.12.3 (main, Nov  6 2025, 13:44:16) [GCC 13.3.0] (64-bit runtime)
Is CUDA available: True
GPU models and configuration: GPU 0: NVIDIA H200
Nvidia driver version: 580.159.04

Versions of relevant libraries:
[pip3] numpy==2.3.5
[pip3] torch==2.11.0+cu130
[pip3] triton==3.6.0
"""


def test_versions_from_collect_env_and_pip_list():
    text = COLLECT_ENV + "fla-core                 0.6.0\nflash-linear-attention   0.6.0\n"
    v = combos.versions_from_text(text)
    assert v == {"torch": "2.11.0+cu130", "cuda": "13.0", "python": "3.12.3", "driver": "580.159.04",
                 "triton": "3.6.0", "numpy": "2.3.5", "fla-core": "0.6.0", "flash-linear-attention": "0.6.0",
                 "gpu_cc": ["9.0"], "machine": "x86_64"}
    assert [m.id for m in combos.match_combinations(v)] == ["fla-gated-bwd-hopper-triton-3.4-3.7.0"]


def test_versions_from_an_nvidia_smi_header_and_prose():
    v = combos.versions_from_text(
        "| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8 |\n"
        "|   0  NVIDIA GeForce RTX 5090   Off |\n"
        "I run torch 2 times a day with 4 GPUs; triton.__version__ = '3.2.0'\n")
    assert v == {"driver": "570.124.06", "cuda_driver": "12.8", "triton": "3.2.0", "gpu_cc": ["12.0"]}
    assert "triton-below-3.3-blackwell" in [m.id for m in combos.match_combinations(v)]


def test_partial_matches_need_the_packages_and_say_what_is_unknown():
    v = combos.versions_from_text("[pip3] triton==3.6.0\nfla-core 0.6.0\n")
    partial = {m.id: m for m in combos.match_combinations(v, partial=True)}
    fla = partial["fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    assert fla.missing == ("gpu_cc",) and fla.strength == pytest.approx(2 / 3)
    assert not any(i.startswith("xformers") for i in partial)    # packages the text never names


# --------------------------------------------------------------------------- the host's architecture (chk28)
# torch's aarch64 CUDA 12.6 wheels hold sm_80 and sm_90 only (torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC,
# read in the stack venv's torch 2.13.0; pytorch .ci/manywheel/build_env_setup.py): the recorded H200 facts,
# with the config.versions probe's `machine` and a torch 2.14.0+cu126 beside another GPU


def _aarch64(cc, name, machine="aarch64"):
    return h200_report(triton="3.7.1", cc=cc, name=name, machine=machine, torch_cuda="12.6",
                       extra_dists={"torch": "2.14.0+cu126"})


def test_an_aarch64_host_with_a_blackwell_gpu_and_torch_cu126_is_blocking_with_the_cu130_fix():
    report = _aarch64("12.0", "NVIDIA GB10")
    r = report.result("config.known_combinations")
    assert r.status is Status.FAIL and r.facts["versions"]["machine"] == "aarch64"
    (f,) = r.findings
    assert f.code == "known-bad-combination" and f.severity is Severity.BLOCKING
    assert "(torch-cu126-aarch64-blackwell)" in f.message and "host aarch64" in f.message
    assert "GPU compute capability 12.0" in f.message and "sm_80 and sm_90 only" in f.message
    assert [c.command for c in f.remedy.commands] == [
        "/opt/torch/.venv/bin/python3 -m pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/cu130"]
    assert [rc.check_id for rc in report.diagnosis.blocking] == ["config.known_combinations"]


def test_an_aarch64_host_with_jetson_orin_gets_the_entry_without_a_wheel_to_install():
    r = _aarch64("8.7", "Orin").result("config.known_combinations")
    (f,) = r.findings
    assert "(torch-cu126-aarch64-pre-ampere-or-orin)" in f.message and f.severity is Severity.BLOCKING
    assert "JetPack" in f.remedy.text and f.remedy.commands == ()


@pytest.mark.parametrize("cc, name", [
    ("9.0", "NVIDIA GH200 480GB"),       # the build's own sm_90
    ("8.9", "NVIDIA L4"),                # sm_80 code runs on 8.9 (DEVICE_REQUIREMENT: 80 covers 8.x but 8.7)
    ("8.0", "NVIDIA A100-SXM4-80GB"),
])
def test_an_aarch64_host_with_a_gpu_the_cu126_build_covers_is_fine(cc, name):
    r = _aarch64(cc, name).result("config.known_combinations")
    assert r.status is Status.PASS and r.findings == (), [f.message for f in r.findings]


@pytest.mark.parametrize("cc", ["12.0", "8.7", "7.5"])
def test_the_same_gpus_on_an_x86_64_host_match_no_aarch64_entry(cc):
    r = _aarch64(cc, "NVIDIA GPU", machine="x86_64").result("config.known_combinations")
    assert not any("aarch64" in m for m in r.facts["matched"]), r.facts["matched"]


def test_machine_specifiers_compare_names():
    assert combos.parse_name_specifier("aarch64").contains("aarch64")
    assert combos.parse_name_specifier("==aarch64").contains("arm64")       # macOS's spelling
    assert not combos.parse_name_specifier("aarch64").contains("x86_64")
    assert combos.parse_name_specifier("!=x86_64").contains("aarch64")
    assert not combos.parse_name_specifier("!=x86_64").contains("AMD64")    # Windows' spelling
    assert not combos.parse_name_specifier("aarch64").contains(None)
    with pytest.raises(combos.SpecifierError):
        combos.parse_name_specifier(">=aarch64")


def test_explain_matches_the_aarch64_entry_only_where_the_log_shows_the_host():
    log = ("PyTorch version: 2.14.0+cu126\nCUDA used to build PyTorch: 12.6\n"
           "OS: Ubuntu 24.04.3 LTS ({machine})\nGPU 0: NVIDIA GB200\n")
    v = combos.versions_from_text(log.format(machine="aarch64"))
    assert v["machine"] == "aarch64" and "10.0" in v["gpu_cc"]
    assert "torch-cu126-aarch64-blackwell" in [m.id for m in combos.match_combinations(v)]
    v = combos.versions_from_text(log.format(machine="x86_64"))
    assert "torch-cu126-aarch64-blackwell" not in [m.id for m in combos.match_combinations(v, partial=True)]
    # a log that never shows the host: the entry is not assumed, even as a partial match
    v = combos.versions_from_text(log.replace("OS: Ubuntu 24.04.3 LTS ({machine})\n", ""))
    assert "machine" not in v
    assert "torch-cu126-aarch64-blackwell" not in [m.id for m in combos.match_combinations(v, partial=True)]
    # the wheel pip downloaded names the host too
    v = combos.versions_from_text("Downloading torch-2.14.0+cu126-cp312-cp312-manylinux_2_28_aarch64.whl (800 MB)")
    assert v["machine"] == "aarch64"


# --------------------------------------------------------------------------- x86_64 builds without Blackwell code
# What torch's x86_64 wheels carry, from pytorch/pytorch .ci/manywheel/build_cuda.sh
# (TORCH_CUDA_ARCH_LIST per CUDA version): 12.6 "5.0;6.0;7.0;7.5;8.0;8.6;9.0" and 12.8
# "7.0;7.5;8.0;8.6;9.0;10.0;12.0" (the 2.8-2.10 era script); the 2.4-2.6 era script: 11.8
# "5.0;6.0;7.0;7.5;8.0;8.6;3.7;9.0", 12.4 "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX" (aarch64: "9.0").
# torch.cuda reads the installed wheel's own list (get_arch_list()) and judges the GPU by torch's
# DEVICE_REQUIREMENT rule, so check needs no entry in combinations.toml for them: the list is data the
# wheel carries, and a reported entry would be a second root for the same fact. chk29 item 1. explain
# has no live torch, so lead45 added entries for the GPUs these lists lack, covered_by torch.cuda:
# check matches and leaves them (_arch_matches counts only entries check reports itself).
CU126_X86 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
CU118_X86 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_37", "sm_90"]
CU124_X86 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]
CU128_X86 = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
R570 = ("570.172.08", 12080)  # the R570 branch: CUDA 12.8, so cu128 is the newest index it runs


def _arch_roots(report):
    return [(rc.check_id, rc.codes) for rc in report.diagnosis.blocking]


ARCH_ENTRIES = {e.id for e in combos.load() if "torch-arch-not-supported" in e.explains}


def _arch_matches(report):
    """Combination entries about a torch build's GPU code that config.known_combinations reports
    itself (by id). Entries that torch.cuda covers (covered_by) may match, for explain, which has
    no live torch to ask (lead45: knowledge/torch_wheels.toml's entries), but check leaves them to
    torch.cuda: matched, listed under left_to_live_checks, no finding of their own."""
    facts = report.result("config.known_combinations").facts
    return [m for m in facts["matched"] if m in ARCH_ENTRIES and m not in facts["left_to_live_checks"]]


# (torch build, its arch list, torch.version.cuda, the Triton it pins)
CU126 = ("2.9.1+cu126", CU126_X86, "12.6", "3.5.1")
CU118 = ("2.6.0+cu118", CU118_X86, "11.8", "3.2.0")
CU124 = ("2.5.1+cu124", CU124_X86, "12.4", "3.1.0")
CU128 = ("2.9.1+cu128", CU128_X86, "12.8", "3.5.1")


def _report(build, cc, name):
    version, arch, cuda, triton = build
    return h200_report(torch_build=(version, arch), torch_cuda=cuda, cc=cc, name=name, driver=R570, triton=triton)


@pytest.mark.parametrize("build", [CU126, CU118])
@pytest.mark.parametrize("cc, name", [("12.0", "NVIDIA GeForce RTX 5090"), ("10.0", "NVIDIA B200")])
def test_x86_64_build_without_blackwell_code_is_blocking_with_the_cu128_fix(build, cc, name):
    report = _report(build, cc, name)
    t = report.result("torch.cuda")
    assert t.status is Status.FAIL and [f.code for f in t.findings] == ["torch-arch-not-supported"]
    f = t.findings[0]
    assert f.severity is Severity.BLOCKING
    assert f"compute capability {cc}" in f.message and "no kernel image is available" in f.message
    assert [c.command for c in f.remedy.commands] == [
        "/opt/torch/.venv/bin/python3 -m pip uninstall -y torch && /opt/torch/.venv/bin/python3 -m pip install "
        "torch --index-url https://download.pytorch.org/whl/cu128"]
    # torch.cuda is the root for it, and no combination entry reports the same fact a second time
    # (cu118's torch 2.6 pins Triton 3.2, whose own Blackwell entry is another problem, rightly)
    assert ("torch.cuda", ("torch-arch-not-supported",)) in _arch_roots(report)
    assert _arch_matches(report) == []
    assert report.result("config.known_combinations").facts["versions"]["machine"] == "x86_64"


def test_x86_64_cu124_build_falls_back_to_its_ptx_on_blackwell():
    # 12.4's x86_64 build carried 9.0+PTX: the driver can JIT compute_90 for sm_120 (degraded, not blocking)
    report = _report(CU124, "12.0", "NVIDIA GeForce RTX 5090")
    f, = report.result("torch.cuda").findings
    assert f.code == "torch-arch-not-supported" and f.severity is Severity.DEGRADED
    assert "compute_90" in f.message and "https://download.pytorch.org/whl/cu128" in f.remedy.commands[0].command
    assert all(rc.check_id != "torch.cuda" for rc in report.diagnosis.blocking) and _arch_matches(report) == []


@pytest.mark.parametrize("build, cc, name", [
    (CU128, "12.0", "NVIDIA GeForce RTX 5090"),
    (CU128, "10.0", "NVIDIA B200"),
    (CU126, "9.0", "NVIDIA H100 80GB HBM3"),
    (CU126, "8.9", "NVIDIA L4"),
])
def test_builds_that_carry_the_gpus_code_pass(build, cc, name):
    report = _report(build, cc, name)
    assert report.result("torch.cuda").status is Status.PASS, report.result("torch.cuda").findings
    assert _arch_matches(report) == []
    assert all(rc.check_id != "torch.cuda" for rc in report.diagnosis.blocking)
