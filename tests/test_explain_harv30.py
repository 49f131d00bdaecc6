"""harv30: a sixth unbiased harvest (serving engines and launchers), scored blind, and the general
fixes its misses ask for (docs/dev/harv30.md).

Twenty-two new training-side logs; explain named twenty first before any change. The two misses:
- A1, a program's own line nothing read: torch's ``_scaled_mm_out_cuda is not compiled for this
  platform.`` (aten/src/ATen/native/cuda/Blas.cpp in torch 2.2/2.3: no fp8 scaled matmul in
  Windows/MSVC or ROCm < 6.0 builds; Comfy-Org/ComfyUI#4539, fixed by torch 2.4):
  ``torch-too-old-for-package`` (it was guessed, low confidence, as a CPU-only build);
- A2, a generic reading outranking the specific one: a kernel library's own launch check
  ``GemmaRMSNorm failed with error code no kernel image is available for execution on the device``
  (sgl-kernel/FlashInfer ``TORCH_CHECK(status == cudaSuccess, "<Op> failed with error code " +
  cudaGetErrorString(status))``; sgl-project/sglang#24302) was read first as torch's wheel lacking
  the GPU: ``extension-arch-missing``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "torch-too-old-for-package": [
        # aten/src/ATen/native/cuda/Blas.cpp _scaled_mm_out_cuda, torch 2.3.1 on Windows
        # (Comfy-Org/ComfyUI#4539, ComfyUI --fast)
        "RuntimeError: _scaled_mm_out_cuda is not compiled for this platform.",
        # the same line as the issue title carried it, without the exception type
        "_scaled_mm_out_cuda is not compiled for this platform. after updating to use --fast",
    ],
    "extension-arch-missing": [
        # sgl-kernel's GemmaRMSNorm (FlashInfer norm) on an sm75 GPU (sgl-project/sglang#24302)
        "RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution on the device",
        # sgl-kernel/src/sgl-kernel/csrc/fused_add_rms_norm_kernel.cu with cudaErrorInvalidDeviceFunction
        "RuntimeError: FusedAddRMSNorm failed with error code invalid device function",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_sglang_cuda_graph_capture_names_the_kernel_library():
    # the reporter's log: sglang falls back to float16, then CUDA graph capture runs the sgl-kernel op
    text = (
        "Capture cuda graph begin. This can take up to several minutes.\n"
        '  File "/usr/local/lib/python3.12/dist-packages/sgl_kernel/elementwise.py", line 64, in gemma_rmsnorm\n'
        "    torch.ops.sgl_kernel.gemma_rmsnorm.default(out, input, weight, eps, enable_pdl)\n"
        "RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution on the device\n"
    )
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_comfyui_fast_traceback_names_old_torch():
    text = (
        "!!! Exception during processing !!! _scaled_mm_out_cuda is not compiled for this platform.\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\ComfyUI_windows_portable\\ComfyUI\\comfy\\ops.py", line 301, in fp8_linear\n'
        "    o = torch._scaled_mm(inn, w, out_dtype=input_dtype, bias=bias, scale_a=scale_input, scale_b=scale_weight)\n"
        "RuntimeError: _scaled_mm_out_cuda is not compiled for this platform.\n"
    )
    assert _codes(text)[:1] == ["torch-too-old-for-package"]


def test_near_misses_keep_their_own_cause():
    # torch's plain 'no kernel image' line (no op named) stays torch's wheel first
    assert _codes("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[:1] == [
        "torch-arch-not-supported"]
    # another CUDA error from the same launcher check is no architecture gap
    assert "extension-arch-missing" not in match_codes(
        "RuntimeError: RMSNorm failed with error code an illegal memory access was encountered\n")
    # the container runtime's ldconfig 'failed with error code: N' is not a kernel's launch
    assert "extension-arch-missing" not in match_codes(
        "nvidia-container-cli: ldcache error: process /sbin/ldconfig failed with error code: 1\n")
    # _scaled_mm's own argument checks and its GPU requirement are no old torch
    assert "torch-too-old-for-package" not in match_codes(
        "RuntimeError: Expected mat1 to be Float8 matrix got Float\n")
    assert "torch-too-old-for-package" not in match_codes(
        "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, "
        "or ROCm MI300+\n")
    # a CPU build of torch keeps its own reading
    assert _codes("AssertionError: Torch not compiled with CUDA enabled\n")[:1] == ["torch-cpu-only-build"]
