"""Recall of explain on logs sampled by symptom (sweeph): 11 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02m``) taken in search order
for kernel-compiler symptom queries (Triton's CompilationError, ptxas error, LLVM ERROR,
OutOfResources, BackendCompilerFailed, InductorError, cuda_utils.c, Triton Error [CUDA], NVRTC's
--gpu-architecture, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, the unsupported-toolchain PTX error,
selective_scan_cuda), then fixed by class from the programs that print the messages.

What the threads showed, and the class each fix covers:

- ptxas names the data type a pre-Ampere GPU lacks on every conversion of it, not only as
  ``Feature '.bf16'``: ``Feature 'cvt with .f32.bf16'``, ``'cvt.bf16.f32'``, and for fp8 before
  sm_89 ``'cvt with .e4m3x2/.e5m2x2'`` and ``'mma with FP8 floating point type'``
  (kijai/ComfyUI-HunyuanVideoWrapper 48: a bf16 sampler on a 2080 Ti). They are
  gpu-arch-lacks-dtype; an instruction such as ``'.m16n8k16'`` stays
  framework-gpu-arch-unsupported.
- the unsupported-toolchain PTX error from a program of its own (no torch around it) is a
  driver older than that program's build: besides .cu/.cpp sources, the CUDA samples'
  ``checkCudaErrors`` format ``code=222(cudaErrorUnsupportedPtxVersion) "call"`` that Jittor and
  many C++ programs copy (Jittor/jittor 194), and for the PTX error the driver
  API's own enum name CUDA_ERROR_UNSUPPORTED_PTX_VERSION, which torch never prints
  (ingowald/pynari 6, an OptiX renderer). torch's ``RuntimeError: CUDA error:`` wording keeps
  driver-too-old-for-torch.
- VMamba's csms6s.py imports selective_scan_cuda_oflex / _core / selective_scan_cuda in a
  try/except that swallows the ImportError, so an unbuilt kernel shows up as ``NameError: name
  'selective_scan_cuda_core' is not defined`` (NJU-LHRS/Official_Remote_Sensing_Mamba 2,
  MzeroMiko/VMamba 308 and 136): kernel-extension-not-built, the torch mismatch in could_be.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test

# code -> messages as the programs print them (each must rank the code first, whatever wraps it)
FAMILIES = {
    "gpu-arch-lacks-dtype": [
        # ptxas, as Triton's make_cubin passes its stderr on (kijai/ComfyUI-HunyuanVideoWrapper#48)
        r"ptxas C:\Users\...\AppData\Local\Temp\tmpumohz431.ptx, line 387; error   : Feature 'cvt with .f32.bf16' requires .target sm_80 or higher",
        # hiyouga/LlamaFactory#7417, hitz-zentroa/GoLLIE#5
        "ptxas /tmp/tmpmfrp_3wp.ptx, line 281; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher",
        "ptxas /tmp/compile-ptx-src-38da7f, line 91; error   : Feature 'cvt with .bf16' requires .target sm_80 or higher",
        "ptxas /tmp/tmpmfrp_3wp.ptx, line 281; error   : Feature '.bf16' requires .target sm_80 or higher",
        # ptxas for fp8 below sm_89
        "ptxas /tmp/tmp1b2c3d.ptx, line 120; error   : Feature 'cvt with .e4m3x2/.e5m2x2' requires .target sm_89 or higher",
        "ptxas /tmp/tmp1b2c3d.ptx, line 98; error   : Feature 'mma with FP8 floating point type' requires .target sm_89 or higher",
    ],
    "driver-too-old-for-build": [
        # Jittor/jittor#194: the checkCudaErrors format of a compiled program
        "code=222( cudaErrorUnsupportedPtxVersion ) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)",
        # ingowald/pynari#6: the driver API's enum name, from a renderer that loads its own PTX
        "unknown CUDA error when building module for bounds program kernel CUDA_ERROR_UNSUPPORTED_PTX_VERSION log: "
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current version is '8.4'",
    ],
    "kernel-extension-not-built": [
        # NJU-LHRS/Official_Remote_Sensing_Mamba#2, MzeroMiko/VMamba#308 and #136
        "NameError: name 'selective_scan_cuda_core' is not defined",
        "NameError: name 'selective_scan_cuda' is not defined. Did you mean: 'SelectiveScanCuda'?",
        "NameError: name 'selective_scan_cuda_oflex' is not defined",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


def test_an_instruction_the_target_lacks_stays_the_build_arch():
    line = "ptxas /tmp/file9LHVYI, line 649; error   : Feature '.m16n8k16' requires .target sm_80 or higher"
    codes = [c.code for c in explain_text(line + "\n").candidates]
    assert codes[:1] == ["framework-gpu-arch-unsupported"], codes


def test_a_bf16_sampler_on_turing_is_the_missing_dtype():
    # kijai/ComfyUI-HunyuanVideoWrapper#48: Triton's RuntimeError with ptxas's lines below it
    log = r"""  File "C:\ComfyUI_windows_portable\python_embeded\Lib\site-packages\triton\backends\nvidia\compiler.py", line 312, in make_cubin
    raise RuntimeError(f'`ptxas` failed with error code {e.returncode}: \n{log}')
RuntimeError: `ptxas` failed with error code 4294967295:
ptxas C:\Users\...\AppData\Local\Temp\tmpumohz431.ptx, line 387; error   : Feature '.bf16' requires .target sm_80 or higher
ptxas C:\Users\...\AppData\Local\Temp\tmpumohz431.ptx, line 387; error   : Feature 'cvt with .f32.bf16' requires .target sm_80 or higher
!!! Exception during processing !!! `ptxas` failed with error code 4294967295
"""
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["gpu-arch-lacks-dtype"], codes


@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "2024-06-01 10:00:00 ", "(Worker pid=4242) ", "> "])
def test_the_checkcudaerrors_format_is_a_program_of_its_own(prefix):
    log = ("运行时出现错误：\n" + prefix + "code=222( cudaErrorUnsupportedPtxVersion ) "
           "cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)\nAborted (core dumped)\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["driver-too-old-for-build"], codes


@pytest.mark.parametrize("log", [
    # torch's own wording (MadryLab/trak#68 is labelled this way)
    "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n",
    # the driver API's name in a torch traceback is still torch's process
    "  File \"/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 298, in _lazy_init\n"
    "RuntimeError: CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain.\n",
])
def test_the_ptx_error_in_a_torch_process_stays_torchs(log):
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["driver-too-old-for-torch"], codes


def test_the_selective_scan_name_error_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line("NameError: name 'selective_scan_cuda_core' is not defined")
               if e.id == "selective-scan-module-name-undefined"]
    assert entries and entries[0].weight == 2 and "extension-torch-mismatch" in entries[0].could_be


def test_vmamba_traceback_with_the_name_error_is_the_unbuilt_kernel():
    # MzeroMiko/VMamba#124 shape: the forward of the autograd Function that uses the module
    log = """  File "/data/ryh/VMamba/classification/models/csms6s.py", line 234, in forward
    out, x, *rest = selective_scan_cuda.fwd(u, delta, A, B, C, D, None, delta_bias, delta_softplus)
NameError: name 'selective_scan_cuda' is not defined. Did you mean: 'selective_scan_cuda_core'?
"""
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["kernel-extension-not-built"], codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "sm_80 or higher is needed for bf16; falling back to fp16",
    "bf16 requires .target sm_80 or higher on NVIDIA GPUs, so we use fp16 on the T4",
    "import selective_scan_cuda_oflex  # optional fast path",
    "selective_scan_cuda_core is defined in kernels/selective_scan",
    "checkCudaErrors: code=0(cudaSuccess) cudaMalloc ok",
    "ptxas info    : Used 64 registers, 384 bytes cmem[0]",
])
