"""Facts a log prints pick the specific cause of a generic build or compile failure (issue 8
item 3; the rules are tabled in docs/dev/context-rules.md, "Facts that narrow a generic code").

Each rule (:func:`stackpeel.explain.facts._narrowing_facts`): the generic line with the deciding
facts names the specific code first (facts near the line and far from it); the generic line
without them keeps the generic code; the facts alone name nothing; the facts with a generic
line of another layer do not make the candidate; and a line that states another cause keeps
that cause first.
"""

from __future__ import annotations

import pytest

from stackpeel.combinations import facts_from_text
from stackpeel.explain.facts import _narrowing_facts
from test_explain_patterns import codes_of as _codes

GAP = "\n".join(f"step {i}: ok" for i in range(8))

NVCC_118 = "Cuda compilation tools, release 11.8, V11.8.89"
NVCC_124 = "Cuda compilation tools, release 12.4, V12.4.131"
TORCH_CU121 = "CUDA used to build PyTorch: 12.1"
BUILD_FAIL = "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1"
NINJA_FAIL = "RuntimeError: Error compiling objects for extension"
INDUCTOR_FAIL = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:"
GCC_STATED = ("/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! "
              "gcc versions later than 11 are not supported!")
CXX_MISSING_STATED = "RuntimeError: Python 3.12+ not yet supported for torch.compile"
HEADERS_STATED = "/tmp/tmpa1b2c3/main.c:5:10: fatal error: Python.h: No such file or directory"
OOM_STATED = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"

# (rule id, facts (lines), generic line, generic code, specific code, a line stating another cause, its code)
RULES = [
    ("nvcc-major-vs-torch-cuda", [NVCC_118, TORCH_CU121], BUILD_FAIL, "extension-build-failed",
     "nvcc-torch-cuda-mismatch", GCC_STATED, "host-compiler-unsupported-by-nvcc"),
    ("nvcc-major-vs-torch-cuda/ninja", ["nvcc: NVIDIA (R) Cuda compiler driver", NVCC_118,
                                        "torch.version.cuda = 12.1"], NINJA_FAIL, "extension-build-failed",
     "nvcc-torch-cuda-mismatch", GCC_STATED, "host-compiler-unsupported-by-nvcc"),
    ("nvcc-older-than-blackwell", [NVCC_124, "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-9f3a)"], BUILD_FAIL,
     "extension-build-failed", "nvcc-arch-unsupported", GCC_STATED, "host-compiler-unsupported-by-nvcc"),
    ("nvcc-older-than-ampere", ["Cuda compilation tools, release 11.0, V11.0.221",
                                "Device 0: GeForce RTX 3090, compute capability: 8.6"], BUILD_FAIL,
     "extension-build-failed", "nvcc-arch-unsupported", GCC_STATED, "host-compiler-unsupported-by-nvcc"),
    ("gpu-below-triton", ["GPU 0: NVIDIA GeForce GTX 1080 Ti (UUID: GPU-5b1c)"], INDUCTOR_FAIL,
     "torch-compile-failed", "triton-gpu-too-old", CXX_MISSING_STATED, "torch-compile-python-unsupported"),
    ("gpu-below-triton/mx", ["Using device: NVIDIA GeForce MX250"], INDUCTOR_FAIL,
     "torch-compile-failed", "triton-gpu-too-old", CXX_MISSING_STATED, "torch-compile-python-unsupported"),
    ("gpu-below-triton/tuple", [">>> torch.cuda.get_device_capability() (6, 1)"], INDUCTOR_FAIL,
     "torch-compile-failed", "triton-gpu-too-old", CXX_MISSING_STATED, "torch-compile-python-unsupported"),
    ("invalid-image-on-gpu-below-7", [" 0|52| 6144M|22|  1076M| 3505M| 384|  3072K| NO| 1:0:0 GeForce GTX 980 Ti"],
     "ERROR - CUDA Error: device kernel image is invalid (err_no=200)", "cuda-error-unclassified",
     "framework-gpu-arch-unsupported", "CUDA driver version is insufficient for CUDA runtime version",
     "driver-too-old-for-torch"),
    ("invalid-image-on-gpu-below-7/capability", ["Device 0: Quadro K620, compute capability 5.0"],
     "CUDA_ERROR_INVALID_IMAGE", "cuda-error-unclassified",
     "framework-gpu-arch-unsupported", "CUDA driver version is insufficient for CUDA runtime version",
     "driver-too-old-for-torch"),
    ("gpu-in-torch-arch-list", ["torch.cuda.get_arch_list() ['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']",
                                "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-5b1c)"],
     "RuntimeError: CUDA error: no kernel image is available for execution on the device", "torch-arch-not-supported",
     "extension-arch-missing", "CUDA driver version is insufficient for CUDA runtime version",
     "driver-too-old-for-torch"),
    ("gpu-in-torch-arch-list/ptx", ["torch.cuda.get_arch_list() ['sm_70', 'sm_80', 'sm_90', 'compute_90']",
                                    "GPU 0: NVIDIA H200"],
     "RuntimeError: CUDA error: no kernel image is available for execution on the device", "torch-arch-not-supported",
     "extension-arch-missing", "CUDA driver version is insufficient for CUDA runtime version",
     "driver-too-old-for-torch"),
    ("python-newer-than-torch-compile", ["PyTorch version: 2.2.1+cu121", "Python version: 3.12.4 (main) [GCC 11.2.0]"],
     INDUCTOR_FAIL, "torch-compile-failed", "torch-compile-python-unsupported", HEADERS_STATED, "python-headers-missing"),
]
IDS = [r[0] for r in RULES]


def _top(text: str):
    return _codes(text)[:1]


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_facts_name_the_specific_cause(rule):
    _, facts, line, _, specific, _, _ = rule
    near = "\n".join([*facts, line]) + "\n"
    far = "\n".join([*facts, GAP, line]) + "\n"
    after = "\n".join([line, GAP, *facts]) + "\n"
    for log in (near, far, after):
        assert _top(log) == [specific], _codes(log)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_without_the_facts_the_generic_code_stays(rule):
    _, _, line, generic, _, _, _ = rule
    assert _top(line + "\n") == [generic], _codes(line + "\n")


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_facts_alone_name_nothing(rule):
    facts = rule[1]
    assert _codes("\n".join([*facts, GAP, "all done, exit code 0"]) + "\n") == []


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_a_stated_cause_keeps_its_rank(rule):
    _, facts, line, _, specific, other, other_code = rule
    log = "\n".join([*facts, GAP, line, GAP, other]) + "\n"
    codes = _codes(log)
    assert codes[:1] == [other_code], codes


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_a_failure_of_another_layer_is_not_narrowed(rule):
    """The facts next to a failure they do not decide (an out-of-memory) add no candidate."""
    _, facts, _, _, specific, _, _ = rule
    log = "\n".join([*facts, GAP, OOM_STATED]) + "\n"
    codes = _codes(log)
    assert codes[:1] == ["gpu-out-of-memory"] and specific not in codes, codes


@pytest.mark.parametrize("facts", [
    [NVCC_124, TORCH_CU121],                                              # same major: minor differences only warn
    [NVCC_118, "CUDA used to build PyTorch: None"],                       # a CPU build has no CUDA to compare
    ["Cuda compilation tools, release 12.8, V12.8.61", "GPU 0: NVIDIA GeForce RTX 5090"],  # new enough
    ["GPU 0: NVIDIA GeForce GTX 1080 Ti", "GPU 1: NVIDIA GeForce RTX 3090"],  # one GPU Triton supports
    ["PyTorch version: 2.4.0", "Python version: 3.12.4"],                # torch.compile runs on 3.12 from 2.4
    # no cubin the GPU runs: sm_86 is not run by an sm_80 GPU, sm_120 not by sm_90 code
    ["torch.cuda.get_arch_list() ['sm_86', 'sm_90']", "GPU 0: NVIDIA A100-SXM4-80GB"],
    ["torch.cuda.get_arch_list() ['sm_50', 'sm_80', 'sm_90']", "GPU 0: NVIDIA GeForce RTX 5090"],
], ids=["same-major", "cpu-build", "nvcc-12.8-blackwell", "mixed-gpus", "torch-2.4-py312", "sm86-list-on-a100",
        "blackwell-not-in-list"])
def test_facts_that_decide_nothing(facts):
    assert _narrowing_facts(facts_from_text("\n".join(facts) + "\n")) == []


@pytest.mark.parametrize("line,cc", [
    ("gpu.compute_capability: 7.5", "7.5"),
    ("Compute Capability: 8.6", "8.6"),
    ("  * **Compute Capability:** 12.0 (`sm_120`)", "12.0"),
    ("torch.cuda.get_device_capability() (8, 6)", "8.6"),
    ("capability: (7, 5)", "7.5"),
    ("GPU: NVIDIA GeForce RTX 3090 (sm_86)", "8.6"),
    ("NVIDIA GeForce MX150", "6.1"),
    ("GeForce MX450 with Max-Q Design", "7.5"),
    ("NVIDIA GeForce MX130", "5.0"),
    # ggml-cuda's ggml_cuda_init device list (llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu)
    ("  Device 0: NVIDIA GeForce GTX 1080 Ti, compute capability 6.1, VMM: yes", "6.1"),
    ("llama_model_load:   Device 1: Tesla P40, compute capability 6.1, VMM: no", "6.1"),
    # Ollama's "inference compute" record (types.go), both orders and quotings
    ('time=2024-09-01T10:00:00Z level=INFO source=types.go:107 msg="inference compute" id=GPU-5b9a library=cuda '
     'variant=v12 compute=7.5 driver=12.4 name="NVIDIA GeForce GTX 1660" total="5.8 GiB"', "7.5"),
    ('level=INFO msg="inference compute" name="GeForce GTX 970" compute="5.2"', "5.2"),
])
def test_capability_shapes(line, cc):
    assert cc in (facts_from_text(line + "\n").versions.get("gpu_cc") or ())


@pytest.mark.parametrize("line", [
    "minimum compute capability: 8.0",
    "FlashAttention requires compute capability >= 8.0",
    "nvcc -gencode arch=compute_86,code=sm_86 -c kernel.cu",
    "TORCH_CUDA_ARCH_LIST='7.5;8.0;8.6'",
    "MX250",
    "found 1 CUDA devices, compute capability required >= 7.0",
    'msg="inference compute" id=0 library=cpu variant="" compute="" driver=0.0 name=""',
    'msg="inference compute" library=ROCm compute=gfx1151',
])
def test_capability_near_misses(line):
    assert not facts_from_text(line + "\n").versions.get("gpu_cc")


def test_invalid_image_on_a_new_gpu_stays_generic():
    """On a GPU Triton supports, an invalid image may be a ptxas newer than the driver: no narrowing."""
    log = "GPU 0: NVIDIA GeForce RTX 3090\n" + GAP + "\nCUDA error: device kernel image is invalid\n"
    assert _top(log) == ["cuda-error-unclassified"], _codes(log)


@pytest.mark.parametrize("text,clue,counts", [
    ("see https://github.com/microsoft/WSL/issues/5 for the same", "WSL", False),
    ("the steps at www.example.org/docker/install did not help", "docker", False),
    ("I run it in WSL 2 on Windows 11", "WSL", True),
    ("Linux box 5.15.153.1-microsoft-standard-WSL2 x86_64", "WSL", True),
    ("pip install torch --index-url https://download.pytorch.org/whl/cpu", "whl/cpu", True),
])
def test_clue_words_inside_links(text, clue, counts):
    """A clue word inside a link is where the user read, not where the program ran; a clue that is
    itself a host or a path (whl/cpu, /usr/lib/wsl) still counts there (parser._in_url)."""
    from stackpeel.explain.knowledge import load
    from stackpeel.explain.parser import scan_text

    if not any(clue in lits for lits in load().clues.values()):
        pytest.skip(f"{clue!r} is no clue literal")
    line = "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"
    found = scan_text(f"{text}\n{GAP}\n{line}\n").clues
    assert (clue in found) == counts, sorted(found)
