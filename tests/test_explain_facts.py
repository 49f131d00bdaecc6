"""explain reads the versions, GPUs and context a log prints, evaluates the known-bad
combinations on them with check's matcher, and states what the facts alone prove (issue 8
items 3 and 5). Real text: collect_env run for real on the stack venv, nvidia-smi lines and pip
lines from training-corpus logs, torch's own warning and arch list, each through the wrappers
pasted logs put around lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import combinations as combos
from stackpeel.checks.config import observed_versions
from stackpeel.explain import explain_text
from stackpeel.explain.parser import CHUNK, scan_stream

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "explain"


def _body(name: str) -> str:
    """A training-corpus log as a user would paste it (the text below its header)."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    return text.split("# ---\n", 1)[1]


# wrappers a pasted log puts around a line (a subset of test_explain_patterns' 13)
WRAPS = {
    "plain": lambda s: s,
    "rank": lambda s: "\n".join(f"[rank0]: {ln}" for ln in s.splitlines()),
    "timestamp": lambda s: "\n".join(f"2024-05-01T12:00:00.123456Z stdout F {ln}" for ln in s.splitlines()),
    "quote": lambda s: "\n".join(f"> {ln}" for ln in s.splitlines()),
    "crlf": lambda s: s.replace("\n", "\r\n"),
}


# --------------------------------------------------------------------------- the GPU table (data)

@pytest.mark.parametrize("line, cc", [
    ("|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |", "9.0"),
    ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5b1c)", "8.0"),
    ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible", "12.0"),
    ("|   0  Tesla T4                       Off  | 00000000:00:04.0 Off |                    0 |", "7.5"),
    ("GPU 0: NVIDIA RTX 5000 Ada Generation", "8.9"),          # Ada, not an RTX 50 card
    ("GPU 0: Quadro RTX 5000", "7.5"),                         # Turing
    ("GPU 0: NVIDIA RTX A6000", "8.6"),
    ("Device: 0, GeForce GTX 1080 Ti, pciBusID: 2", "6.1"),
    ("GPU 0: NVIDIA B200", "10.0"),
    ("GPU 0: NVIDIA L4", "8.9"),
])
def test_gpu_names_map_to_their_compute_capability(line, cc):
    assert [c for _, c in combos.gpus_in_line(line)] == [cc]


@pytest.mark.parametrize("line", ["We trained T4 models on layer L4 of A2 stage", "RTX 5000 series", "H20 water"])
def test_words_that_are_no_gpu_name_name_none(line):
    assert combos.gpus_in_line(line) == []


def test_gpu_table_is_data_and_complete():
    rows = combos.gpu_table()
    assert len(rows) >= 15 and all(r.cc and r.name and r.patterns for r in rows)
    assert {"12.0", "10.0", "9.0", "8.9", "8.6", "8.0", "7.5", "7.0", "6.1"} <= {r.cc for r in rows}


# --------------------------------------------------------------------------- facts a log states

@pytest.fixture(scope="module")
def real_collect_env() -> str:
    """torch's own collect_env, run for real in the stack venv (CPU torch, no GPU here)."""
    py = os.environ.get("STACKPEEL_STACK_PYTHON") or str(ROOT / ".venv-stack" / "bin" / "python")
    if not Path(py).exists():
        pytest.skip("no stack venv")
    p = subprocess.run([py, "-m", "torch.utils.collect_env"], capture_output=True, text=True, timeout=300)
    assert "PyTorch version:" in p.stdout, p.stdout + p.stderr
    return p.stdout


def test_real_collect_env_gives_its_facts(real_collect_env):
    f = combos.facts_from_text(real_collect_env)
    assert f.versions["torch"].endswith("+cpu") and f.torch_cpu is True
    assert f.versions["python"].startswith("3.") and f.cuda_available is False
    assert not f.gpus and "gpu_cc" not in f.versions    # "GPU models and configuration: Could not collect"


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_healthy_collect_env_adds_no_candidate(real_collect_env, wrap):
    """A negative control: the CPU stack's own report, no GPU and no error: no candidate, exit 0."""
    expl = explain_text(WRAPS[wrap](real_collect_env))
    assert expl.codes == [] and int(expl.exit_code) == 0
    assert expl.facts is not None and expl.facts.torch_cpu is True


def test_healthy_gpu_stack_report_adds_no_candidate():
    """torch 2.11.0+cu130 with its pinned Triton on an H200 and driver R580: nothing is bad."""
    log = ("PyTorch version: 2.11.0+cu130\nCUDA used to build PyTorch: 13.0\nIs CUDA available: True\n"
           "GPU models and configuration: GPU 0: NVIDIA H200\nNvidia driver version: 580.159.04\n"
           "[pip3] torch==2.11.0+cu130\n[pip3] triton==3.6.0\n")
    expl = explain_text(log)
    assert expl.codes == [] and int(expl.exit_code) == 0 and not expl.notes
    assert expl.facts.versions["gpu_cc"] == ["9.0"] and expl.facts.versions["cuda"] == "13.0"


def test_real_nvidia_smi_lines_of_training_logs():
    f = combos.facts_from_text(_body("faster-whisper-1278-driver-535-insufficient.log"))
    assert f.versions["driver"] == "535.183.01" and f.versions["cuda_driver"] == "12.2"
    assert "container" not in f.context    # "Docker version 28.0.4" is a version, not a container run
    f = combos.facts_from_text(_body("nvidia-docker-1671-nvml-unknown-error.log"))
    assert f.versions["driver"] == "510.68.02" and f.versions["cuda_driver"] == "11.6"
    assert "container" in f.context    # docker run ... nvidia/cuda:11.4.2


def test_the_cuda_a_torch_build_names():
    f = combos.facts_from_text(_body("mamba-323-cuda-11-6.log"))    # torch.__version__  = 2.1.0+cu121
    assert f.versions["torch"] == "2.1.0+cu121" and f.versions["cuda"] == "12.1" and f.torch_cpu is False
    f = combos.facts_from_text(_body("causal-conv1d-108-no-nvcc-slim.log"))
    assert f.versions["torch"] == "2.11.0+cu130" and f.versions["cuda"] == "13.0"
    # conda list lines and the official image tag
    f = combos.facts_from_text("pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch\n")
    assert f.versions["torch"] == "2.1.0" and f.versions["cuda"] == "12.1"
    f = combos.facts_from_text("FROM pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel\n")
    assert f.versions["torch"] == "2.4.0" and f.versions["cuda"] == "12.4" and "container" in f.context


def test_real_pip_and_conda_lines_of_training_logs():
    f = combos.facts_from_text(_body("mamba-652-selective-scan-null-data-ptr-2.log"))
    # python=3.11 pytorch==2.3.0 torchvision==0.18.0 torchaudio==2.3.0 pytorch-cuda=12.1
    assert (f.versions["python"], f.versions["torch"], f.versions["cuda"]) == ("3.11", "2.3.0", "12.1")
    f = combos.facts_from_text(_body("flash-attention-1832-undefined-symbol-wheel.log"))
    assert (f.versions["torch"], f.versions["flash-attn"], f.versions["python"]) == ("2.6.0", "2.6.3", "3.12.7")


@pytest.mark.parametrize("line, key, version", [
    # pip's own words (pip/_internal/commands/install.py "Successfully installed", the wheel file
    # names it downloads, req_install's "Requirement already satisfied ... (version)")
    ("Successfully installed mpmath-1.3.0 torch-2.5.1 triton-3.1.0 nvidia-cudnn-cu12-9.1.0.70", "triton", "3.1.0"),
    ("  Downloading torch-2.1.0+cu121-cp310-cp310-linux_x86_64.whl (2200.6 MB)", "torch", "2.1.0+cu121"),
    ("Requirement already satisfied: xformers>=0.0.20 in /venv/lib/python3.10/site-packages (0.0.28.post3)",
     "xformers", "0.0.28.post3"),
    ("Successfully installed pytorch-triton-3.0.0+dedb7bdf33 torch-2.4.0.dev20240501+cu121", "triton",
     "3.0.0+dedb7bdf33"),
])
def test_pip_install_output(line, key, version):
    for wrap in WRAPS.values():
        assert combos.facts_from_text(wrap(line)).versions[key] == version


def test_a_prebuilt_wheel_built_for_another_torch_supports_the_undefined_symbol():
    """mamba-308: mamba_ssm-1.0.1+cu118torch1.12cxx11abiTRUE with pytorch=1.13.1+cu117."""
    body = _body("mamba-308-selective-scan-wheel-torch112.log")
    f = combos.facts_from_text(body)
    assert ("mamba-ssm", "1.0.1", "11.8", "1.12") in f.wheels and f.versions["torch"] == "1.13.1+cu117"
    top = explain_text(body).root
    assert top.code == "extension-torch-mismatch" and "state:wheel-built-for-other-torch" in top.facts
    # the same wheel with the torch it was built for is no finding
    ok = "torch==1.12.1+cu118\nmamba_ssm-1.0.1+cu118torch1.12cxx11abiTRUE-cp39-cp39-linux_x86_64.whl\n"
    assert explain_text(ok).codes == []


def test_arch_list_nvcc_image_and_context():
    f = combos.facts_from_text(
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
        "Cuda compilation tools, release 12.1, V12.1.105\n"
        "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
        "Python platform: Linux-5.15.90.1-microsoft-standard-WSL2-x86_64-with-glibc2.35\n")
    assert f.arch_list[0] == "sm_50" and f.arch_list[-1] == "sm_90" and f.versions["gpu_cc"] == ["12.0"]
    assert f.other["nvcc"] == "12.1" and f.other["image_cuda"] == "12.1"
    assert {"wsl", "container"} <= set(f.context)
    # an extension's nvcc -gencode line is no torch arch list
    assert combos.facts_from_text("nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 x.cu"
                                  ).arch_list == ()


def test_supports_capability_is_torchs_rule():
    archs = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    assert combos.supports_capability(archs, "8.9") is True     # same major as sm_80/sm_86
    assert combos.supports_capability(archs, "12.0") is False
    assert combos.supports_capability(("compute_90",), "9.0") is None


# --------------------------------------------------------------------------- state facts rank causes

CPU_TORCH_ON_GPU = """\
PyTorch version: 2.1.0+cpu
CUDA used to build PyTorch: None
Is CUDA available: False
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090
Nvidia driver version: 535.104.05
"""


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_cpu_torch_with_a_gpu_listed_is_the_cause(wrap):
    expl = explain_text(WRAPS[wrap](CPU_TORCH_ON_GPU))
    top = expl.root
    assert top.code == "torch-cpu-only-build" and top.basis == "facts" and top.confidence == "high"
    assert "state:torch-cpu-build" in top.facts and int(expl.exit_code) == 1
    assert {e.line for e in top.evidence} >= {1, 3, 4}


def _stack_py() -> str:
    py = os.environ.get("STACKPEEL_STACK_PYTHON") or str(ROOT / ".venv-stack" / "bin" / "python")
    if not Path(py).exists():
        pytest.skip("no stack venv")
    return py


def _collect_env_as(**fields) -> str:
    """torch's own collect_env formatter (pretty_str) on this machine's facts with some fields
    set as collect_env sets them on another machine (the GPU fields come from nvidia-smi, not from
    torch, so a CPU torch on a GPU host prints exactly this)."""
    code = ("import json, sys\nfrom torch.utils import collect_env as c\n"
            "print(c.pretty_str(c.get_env_info()._replace(**json.loads(sys.argv[1]))))")
    p = subprocess.run([_stack_py(), "-c", code, json.dumps(fields)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "PyTorch version:" in p.stdout, p.stderr[-2000:]
    return p.stdout


def test_collect_env_of_a_cpu_torch_on_a_gpu_host():
    text = _collect_env_as(nvidia_gpu_models="GPU 0: NVIDIA GeForce RTX 3090", nvidia_driver_version="535.104.05")
    expl = explain_text(text)
    assert expl.root.code == "torch-cpu-only-build" and expl.root.confidence == "high", expl.codes
    assert "torch-cuda-unavailable" in expl.root.explains or "torch-cuda-unavailable" not in expl.codes


def test_collect_env_of_a_cuda_torch_on_a_driver_too_old_for_it():
    """torch 2.4.0+cu124 (CUDA 12.4 needs driver >= 525.60.13) on driver 470: the driver-floor
    combination names the cause, and 'Is CUDA available: False' is the symptom it explains."""
    text = _collect_env_as(torch_version="2.4.0+cu124", cuda_compiled_version="12.4", is_cuda_available="False",
                           nvidia_gpu_models="GPU 0: NVIDIA A100-SXM4-80GB", nvidia_driver_version="470.182.03")
    expl = explain_text(text)
    top = expl.root
    assert top.code == "driver-too-old-for-torch" and top.basis == "combination" and top.confidence == "high"
    assert "combination:cuda-12-driver-below-525.60.13" in top.facts


def test_torchs_own_arch_warning_names_the_arch_list():
    """The text of torch/cuda/__init__.py _check_cubins, formatted as torch formats it."""
    code = ("import inspect, re, torch.cuda as c\nsrc = inspect.getsource(c._check_cubins)\n"
            "tpl = re.search(r'incompatible_device_warn = \"\"\"(.*?)\"\"\"', src, re.S).group(1)\n"
            "print(tpl.format('NVIDIA GeForce RTX 5090', 120, ' '.join(['sm_50', 'sm_80', 'sm_86', 'sm_90']), "
            "'NVIDIA GeForce RTX 5090'))")
    p = subprocess.run([_stack_py(), "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    f = combos.facts_from_text(p.stdout)
    assert f.arch_list == ("sm_50", "sm_80", "sm_86", "sm_90") and f.versions["gpu_cc"] == ["12.0"]
    top = explain_text(p.stdout + "RuntimeError: CUDA error: no kernel image is available for execution on the "
                                  "device\n").root
    assert top.code == "torch-arch-not-supported" and "state:gpu-not-in-arch-list" in top.facts


def test_cpu_torch_supports_the_line_that_names_it():
    log = CPU_TORCH_ON_GPU + ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                              "AssertionError: Torch not compiled with CUDA enabled\n")
    top = explain_text(log).root
    assert top.code == "torch-cpu-only-build" and top.basis == "signature"
    assert "state:torch-cpu-build" in top.facts
    # the log's own error line stays in the evidence, before the version lines that support it
    assert 8 in {e.line for e in top.evidence} and len(top.evidence) <= 5


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_driver_cuda_below_the_build_with_a_cuda_error(wrap):
    smi = "| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |"
    log = f"{smi}\ntorch.__version__  = 2.1.0+cu121\nRuntimeError: CUDA error: unknown error\n"
    expl = explain_text(WRAPS[wrap](log))
    top = expl.root
    assert top.code == "driver-too-old-for-torch" and top.confidence == "high", expl.codes
    assert "state:driver-cuda-below-build" in top.facts
    assert "cuda-error-unclassified" in top.explains


def test_same_major_driver_is_minor_version_compatible():
    smi = "| NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2     |"
    expl = explain_text(f"{smi}\ntorch==2.4.0+cu124\nRuntimeError: CUDA error: unknown error\n")
    assert "driver-too-old-for-torch" not in expl.codes


def test_gpu_missing_from_a_printed_arch_list():
    log = ("GPU 0: NVIDIA GeForce RTX 5090\n>>> torch.cuda.get_arch_list()\n"
           "['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']\n"
           "RuntimeError: CUDA error: unknown error\n")
    top = explain_text(log).root
    assert top.code == "torch-arch-not-supported" and "state:gpu-not-in-arch-list" in top.facts


def test_a_listed_gpu_with_cuda_unavailable_and_nothing_else():
    log = ("PyTorch version: 2.4.0+cu124\nCUDA used to build PyTorch: 12.4\nIs CUDA available: False\n"
           "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB\nNvidia driver version: 550.54.15\n")
    expl = explain_text(log)
    assert expl.root.code == "torch-cuda-unavailable" and expl.root.kind == "symptom"
    assert expl.root.could_be and int(expl.exit_code) == 1


# --------------------------------------------------------------------------- known-bad combinations

PIP_FLA_H100 = """\
| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8 |
|   0  NVIDIA H100 80GB HBM3          On  |
fla-core                  0.6.0
flash-linear-attention    0.6.0
triton                    3.6.0
torch                     2.10.0
"""


def test_combination_without_a_failure_is_context_only():
    expl = explain_text(PIP_FLA_H100)
    assert expl.codes == [] and int(expl.exit_code) == 0
    assert any("fla-gated-bwd-hopper-triton-3.4-3.7.0" in n for n in expl.notes)
    rules = [f.rule for f in expl.fact_findings]
    assert "combination:fla-gated-bwd-hopper-triton-3.4-3.7.0" in rules


def test_combination_with_its_own_message_supports_it():
    log = PIP_FLA_H100 + ("RuntimeError: Triton >= 3.4.0 and < 3.7.1 on Hopper GPUs produces incorrect results for "
                          "gated chunk_bwd_dqkwg (see #640).\n")
    top = explain_text(log).root
    assert top.code == "fla-triton-hopper-gated-backward"
    assert "combination:fla-gated-bwd-hopper-triton-3.4-3.7.0" in top.facts


def test_combination_with_a_failure_in_its_layer_is_medium():
    """Versions match torch 2.6 with Triton 3.3; the log fails in Triton with a line no entry names.
    The words of that line guess the failure the entry explains (triton-torch-version-mismatch):
    the finding names it, from the combination, as sure as the versions make it (medium)."""
    log = "torch==2.6.0\ntriton==3.3.0\nTraceback (most recent call last):\n  File \"x.py\", line 1\n" \
          "triton.compiler.errors.CompilationError: at 12:4: something\n"
    expl = explain_text(log)
    top = expl.root
    assert top.code == "triton-torch-version-mismatch" and top.basis == "combination", expl.codes
    assert top.confidence == "medium" and "combination:torch-2.6-triton-3.3-attrsdescriptor" in top.facts
    assert "AttrsDescriptor" in top.explanation and "triton==3.2.0" in top.fix
    # the guesses from the error line's words stay listed after it
    assert any(c.basis == "vocabulary" for c in expl.candidates[1:])


def test_check_and_explain_agree_on_the_same_versions():
    """The H200 of issue 8 (torch 2.11.0+cu130, Triton 3.6.0, FLA 0.6.0): check's versions from
    recorded probe facts and explain's from the collect_env/pip text of the same stack match the
    same entries: one matcher."""
    facts = {"dists": {"torch": "2.11.0+cu130", "triton": "3.6.0", "fla-core": "0.6.0",
                       "flash-linear-attention": "0.6.0"},
             "gpus": [{"name": "NVIDIA H200", "cc": "9.0"}], "driver": "580.159.04",
             "cuda_driver_version": 13000, "torch_cuda": "13.0", "python": "3.12.3", "machine": "x86_64"}
    from_check = [m.id for m in combos.match_combinations(observed_versions(facts))]
    text = ("PyTorch version: 2.11.0+cu130\nCUDA used to build PyTorch: 13.0\n"
            "Python version: 3.12.3 (main, Nov  6 2025, 13:44:16) [GCC 13.3.0] (64-bit runtime)\n"
            "GPU models and configuration: GPU 0: NVIDIA H200\nNvidia driver version: 580.159.04\n"
            "[pip3] torch==2.11.0+cu130\n[pip3] triton==3.6.0\nfla-core 0.6.0\nflash-linear-attention 0.6.0\n")
    from_log = [m.id for m in combos.match_combinations(combos.versions_from_text(text))]
    assert from_check == from_log == ["fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    expl = explain_text(text)
    assert [f.rule for f in expl.fact_findings] == ["combination:fla-gated-bwd-hopper-triton-3.4-3.7.0"]
    assert expl.to_dict()["facts"]["combinations"] == from_check


# --------------------------------------------------------------------------- streaming, redaction, CLI

def test_facts_of_the_first_and_last_chunk_of_a_large_stream(tmp_path):
    import io

    noise = "".join(f"step {i} loss 0.{i % 97:02d} lr 3e-4\n" for i in range(CHUNK // 20))
    log = CPU_TORCH_ON_GPU + noise * 3 + "Traceback (most recent call last):\n" \
        "AssertionError: Torch not compiled with CUDA enabled\n"
    parsed = scan_stream(io.BytesIO(log.encode()))
    assert parsed.facts.torch_cpu is True and parsed.facts.gpus == ("RTX 3090",)
    assert parsed.facts.lines["torch"][0] == 1
    # the report pasted at the end of a long log (a CI job that runs collect_env after failing)
    tail = noise * 3 + CPU_TORCH_ON_GPU
    parsed = scan_stream(io.BytesIO(tail.encode()))
    assert parsed.facts.torch_cpu is True and parsed.facts.lines["torch"][0] == len(noise.splitlines()) * 3 + 1
    assert explain_text(tail).root.code == "torch-cpu-only-build"


def test_no_secret_reaches_the_facts(monkeypatch):
    token = "hf_" + "Qx7" * 11
    log = f"HF_TOKEN={token} torch==2.1.0+cpu\nGPU 0: NVIDIA GeForce RTX 3090\nIs CUDA available: False\n"
    out = json.dumps(explain_text(log).to_dict())
    assert token not in out and "torch-cpu-only-build" in out


def test_cli_json_carries_facts_and_findings(tmp_path):
    f = tmp_path / "env.txt"
    f.write_text(CPU_TORCH_ON_GPU)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", "--format", "json", str(f)],
                       capture_output=True, text=True, timeout=120, env=env)
    data = json.loads(p.stdout)
    assert p.returncode == 1 and data["root_cause"] == "torch-cpu-only-build"
    assert data["candidates"][0]["basis"] == "facts" and data["candidates"][0]["confidence"] == "high"
    assert data["facts"]["versions"]["torch"] == "2.1.0+cpu" and data["facts"]["torch_cpu"] is True
    assert data["facts"]["findings"][0]["rule"] == "state:torch-cpu-build"
    t = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live", str(f)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert "Root cause (from the versions and GPUs the log prints): torch-cpu-only-build" in t.stdout


def test_fact_patterns_are_linear_on_adversarial_lines():
    """Every pattern of the facts parser (versions, facts, context, GPU table, its gate) on the
    adversarial 16 KB lines of test_explain_patterns plus shapes aimed at them; the collector
    reads 2000 characters of a line, the gate the whole line. Run in a child killed at 60 s; the
    budget per search is the one test_explain_patterns uses (measured: about 0.01 s)."""
    from test_explain_patterns import SHAPES, _run

    shapes = {**SHAPES, "torch-spaces": "torch" + " " * 16000, "version-digits": "torch==1." + "1" * 16000 + "x",
              "nvidia": "NVIDIA " * 2300, "sm-list": "['sm_80'," * 2000, "os": "OS: x" + " " * 16000 + "y",
              "from": "FROM " + " " * 16000 + "x", "rtx-pro": "RTX PRO 1234" + " Abc" * 4000,
              "satisfied": "Requirement already satisfied: torch in " + "(1.0" * 4000,
              "installed": "Successfully installed " + "torch-1.1+a" * 1500, "wheel": "mamba_ssm-1.0+cu1" * 1000}
    probe = r'''
import json, re, sys, time
from stackpeel import combinations as c
from stackpeel.explain import parser
shapes = json.loads(sys.stdin.read())
rx = [(k, r) for k, r, _ in c._LOG_KEYS]
rx += list(c._DIST_RES) + list(c._FACT_RES) + list(c.CONTEXT_WORDS) + [("gate", parser.FACT_GATE)]
rx += [("pip", r) for r in c._PIP_FORMS] + [("wheel", c._WHEEL_RE)]
rx += [(row.name, p) for row in c.gpu_table() for p in row.patterns]
worst = []
for name, line in shapes.items():
    for rid, r in rx:
        t = time.perf_counter(); r.search(line if rid == "gate" else line[:c.FactCollector.LINE_CHARS])
        worst.append((time.perf_counter() - t, name, rid))
    col = c.FactCollector(); t = time.perf_counter(); col.add(1, line); col.result()
    worst.append((time.perf_counter() - t, name, "collector"))
worst.sort(reverse=True)
print(json.dumps({"n": len(rx), "worst": worst[:5]}))
'''
    out = _run(probe, json.dumps(shapes), timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert res["n"] > 60
    assert not [w for w in res["worst"] if w[0] > 0.25], res["worst"]


def test_a_combination_supports_the_specific_code_a_line_names():
    """unsloth PR 6400 (training log): torchao 0.14.0 skips its C++ ops under torch 2.10.0. The
    line names torchao-torch-mismatch; the combination the versions match supports it (it does
    not replace it with the generic known-bad-combination) and the note says the pairing is the cause."""
    expl = explain_text(_body("unsloth-pr6400-torchao-skips-cpp-extensions.log"))
    top = expl.root
    assert top.code == "torchao-torch-mismatch" and "combination:torchao-0.14-torch-2.10-or-newer" in top.facts
    assert "known-bad-combination" not in expl.codes
    assert any("torchao-0.14-torch-2.10-or-newer" in n and "pairing of versions" in n for n in expl.notes)
