"""Renderers: whole-text golden output at a fixed width, no colour; Markdown and JSON shape."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stackpeel.diagnosis import diagnose
from stackpeel.model import (CheckResult, Command, Finding, ProbeFailure, Remedy, Report, Severity, Status)
from stackpeel.render import render

GOLDEN = Path(__file__).parent / "golden"
LAYERS = ("system", "gpu", "cuda", "torch", "toolchain", "triton", "kernels")

NOCC = Finding(
    "no-c-compiler", Severity.BLOCKING, "No C compiler for Triton",
    "CC is unset and neither gcc nor clang is on PATH (/usr/local/bin:/usr/bin:/bin). Triton compiles a C helper "
    "(cuda_utils) the first time it touches the GPU, so every Triton kernel, and everything built on Triton, fails.",
    "", Remedy("Install a C compiler, or point CC at one.",
               (Command("apt", "apt-get update && apt-get install -y gcc"),)))
TRITON = Finding(
    "triton-build-failed", Severity.BLOCKING, "Triton cannot build its C helpers",
    "Triton's own build of a C module failed.",
    "Traceback (most recent call last):\n  File \"triton/runtime/build.py\", line 31, in _find_compiler\n"
    "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.")
FLA = Finding(
    "fla-cpu-fallback", Severity.BLOCKING, "FLA fell back to CPU",
    "flash-linear-attention 0.6.0 reports device_platform='cpu' while torch sees 1 CUDA device: its Triton probe failed "
    "and the exception was swallowed.",
    "UserWarning: Triton is not supported on current platform, roll back to CPU.\n"
    "swallowed: RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
    "triton.knobs.build.impl.")
NVCC = Finding("nvcc-missing", Severity.DEGRADED, "No nvcc for CUDA extension builds",
               "nvcc was not found (CUDA_HOME unset, not on PATH, no /usr/local/cuda). Building causal-conv1d from "
               "source will fail.", "", Remedy("Install the CUDA compiler matching torch's CUDA 13.0.", ()))


def r(cid, status, summary, findings=(), requires=(), failure=None, facts=None):
    return CheckResult(cid, cid.split(".")[1].replace("_", " "), cid.split(".")[0], status, summary,
                       facts or {}, tuple(findings), 0.5, failure, tuple(requires))


RESULTS = [
    r("system.platform", Status.PASS, "Ubuntu 24.04.3 LTS, x86_64, container: lxc",
      facts={"distro": "Ubuntu 24.04.3 LTS", "arch": "x86_64", "container": "lxc"}),
    r("gpu.kernel_driver", Status.PASS, "NVIDIA driver 580.159.04"),
    r("cuda.driver_api", Status.PASS, "1 device: NVIDIA H200 (cc 9.0)", requires=["gpu.kernel_driver"]),
    r("torch.cuda", Status.PASS, "torch 2.11.0+cu130 runs on NVIDIA H200", requires=["cuda.driver_api"]),
    r("toolchain.c_compiler", Status.FAIL, "no C compiler", [NOCC]),
    r("toolchain.extension_build", Status.BLOCKED, "not run: it needs toolchain.c_compiler, which failed",
      requires=["toolchain.c_compiler"]),
    r("toolchain.nvcc", Status.WARN, "nvcc not found", [NVCC], requires=["torch.cuda"]),
    r("triton.build", Status.FAIL, "Triton cannot build C modules", [TRITON], requires=["toolchain.extension_build"]),
    r("kernels.fla", Status.FAIL, "FLA fell back to CPU", [FLA], requires=["triton.build"]),
    r("kernels.causal_conv1d", Status.ERROR, "check could not complete: probe was killed by SIGSEGV",
      failure=ProbeFailure("signal", signal=11, stderr_tail="Fatal Python error: Segmentation fault")),
]
REPORT = Report(tool_version="0.1.0", created="2026-11-29T00:00:00+00:00",
                target={"python": "/opt/venv/bin/python", "source": "$VIRTUAL_ENV", "version": "3.12.3"},
                host={"pkg_manager": "apt", "is_root": True}, results=tuple(RESULTS),
                diagnosis=diagnose(RESULTS, LAYERS), duration_s=6.25)


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("STACKPEEL_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with STACKPEEL_UPDATE_GOLDEN=1 if intended"


def test_text_golden_ascii_no_colour():
    _golden("seed.txt", render(REPORT, "text", width=100, ascii_only=True))


def test_text_unicode_and_colour_only_when_asked():
    plain = render(REPORT, "text", width=100)
    assert "\x1b[" not in plain and "✗" in plain
    assert "\x1b[31m" in render(REPORT, "text", width=100, color=True)


def test_markdown_golden():
    _golden("seed.md", render(REPORT, "markdown"))


def test_root_first_then_symptoms_then_fix():
    text = render(REPORT, "text", width=100, ascii_only=True)
    i_root = text.index("No C compiler for Triton")
    i_fix = text.index("apt-get install -y gcc")
    i_sym = text.index("FLA fell back to CPU")
    assert i_root < i_fix < i_sym  # the fix right under the cause, then the cascade it explains
    assert "Failed to find C compiler" in text  # the swallowed evidence is quoted
    assert "DEGRADED" in text and "CHECKS THAT COULD NOT COMPLETE" in text


def test_json_roundtrip():
    data = json.loads(render(REPORT, "json"))
    assert Report.from_dict(data).to_dict() == data
    assert data["diagnosis"]["blocking"][0]["check"] == "toolchain.c_compiler"
