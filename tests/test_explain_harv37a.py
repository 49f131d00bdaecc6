"""harv37a: an unbiased harvest of GPU capability and precision mismatches (bf16/fp8 on GPUs
without them, FlashAttention on pre-Ampere GPUs, wheels and builds without the GPU's
architecture, nvcc too old or too new for an arch list), scored blind, and the general fixes its
misses ask for (docs/dev/harv37a.md).

Twenty-five new training-side logs; explain named fourteen first before any change. The fixed
misses:
- A1, a package's setup.py refusing an old GPU: vLLM 0.1-0.2's ``GPUs with compute capability
  below 7.0 are not supported.`` (vllm-project/vllm#1284, where vLLM's bf16 check on the line
  before had won); now ``framework-gpu-arch-unsupported``;
- A1, text-generation-inference's and LoRAX's own check ``GPU with CUDA capability 7 0 is not
  supported for Flash Attention V2`` (Dao-AILab/flash-attention#524, silent before); now
  ``flash-attn-arch-unsupported``;
- A2, xFormers 0.0.2x's flash op reason ``requires a GPU with compute capability > 7.5`` (an
  older wording of the '(too old)' reason; facebookresearch/xformers#891 read it as a build
  without CUDA); now ``flash-attn-arch-unsupported``;
- A2, ggml's own ``ERROR: ggml-cuda was compiled without support for the current GPU
  architecture.`` and ``ggml was not compiled with any CUDA arch <= 750`` (LostRuins/koboldcpp#610,
  read as a model architecture); now ``extension-arch-missing``;
- C2, a bare ``no kernel image is available`` beside Ollama, KoboldCpp or KTransformers (their
  own bundled CUDA binaries, ollama/ollama#12341, kvcache-ai/ktransformers#44): the refine of the
  no-kernel-image signature now reads those names as it reads ggml-cuda and llama-box.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# vllm-project/vllm setup.py (0.1.x-0.2.x), built on a GPU below 7.0
VLLM_SETUP = "RuntimeError: GPUs with compute capability below 7.0 are not supported."
# the same check as forks copied it with another floor
SETUP_SIX = "RuntimeError: GPUs with compute capability below 6.0 are not supported."
# huggingface/text-generation-inference and predibase/lorax server/.../utils/flash_attn.py
TGI_FA2 = "ImportError: GPU with CUDA capability 7 5 is not supported for Flash Attention V2"
# xformers 0.0.2x ops/fmha/flash.py FwOp.not_supported_reasons, as the 'No operator found' block lists it
XF_OLD_REASON = "`flshattF` is not supported because: requires a GPU with compute capability > 7.5"
# ggml-cuda.cu bad_arch() (llama.cpp before 2024, KoboldCpp 1.5x)
GGML_BAD_ARCH = "ERROR: ggml-cuda was compiled without support for the current GPU architecture."
# ggml/src/ggml-cuda/common.cuh ggml_cuda_highest_compiled_arch_impl (GGML_ABORT)
GGML_NO_ARCH = "/root/llama.cpp/ggml/src/ggml-cuda/../ggml-cuda/common.cuh:112: ggml was not compiled with any CUDA arch <= 750"

FAMILIES = {
    "framework-gpu-arch-unsupported": [VLLM_SETUP, SETUP_SIX],
    "flash-attn-arch-unsupported": [TGI_FA2, XF_OLD_REASON],
    "extension-arch-missing": [GGML_BAD_ARCH, GGML_NO_ARCH],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_vllm_p100_setup_refusal_outranks_its_bf16_line():
    # vllm-project/vllm#1284: vLLM's bf16 check and its setup.py floor, both in the paste; the
    # floor decides (float16 would not help a 6.0 GPU)
    text = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
            "Your Tesla P100-PCIE-16GB GPU has compute capability 6.0.\n"
            "RuntimeError: GPUs with compute capability below 7.0 are not supported.\n")
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


def test_vllm_setup_refusal_in_a_pip_build_log():
    text = (
        "  Building wheel for vllm (pyproject.toml) ... error\n"
        "  error: subprocess-exited-with-error\n"
        "  Traceback (most recent call last):\n"
        '    File "/tmp/pip-install-x/vllm/setup.py", line 50, in <module>\n'
        "      raise RuntimeError(\n"
        "  RuntimeError: GPUs with compute capability below 7.0 are not supported.\n"
    )
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


def test_setup_floor_near_misses_keep_their_reading():
    # sglang's issue prose (no floor number, no 'are not supported')
    assert "package-setup-gpu-below-min-capability" not in _ids(
        "`sglang` fails to start on GPUs with compute capability below sm80 (e.g., RTX 2080, sm75).")
    # a README's requirement line
    assert "package-setup-gpu-below-min-capability" not in _ids(
        "Note: GPUs with compute capability below 7.0 may be slow.")


def test_tgi_flash_attn_check_with_fullwidth_bang_in_prose():
    # Dao-AILab/flash-attention#524, as the reporter pasted it (bold, a full-width '！')
    text = "Does flash attention not support v100 ?\n\nWhen using it, a problem occurs:\n\n" \
           "**GPU with CUDA capability 7 0 is not supported！**\n"
    assert _codes(text)[:1] == ["flash-attn-arch-unsupported"]


def test_tgi_check_near_misses():
    # torch's own arch warning names sm_XX, never two bare numbers
    assert "tgi-flash-attn-v2-capability" not in _ids(
        "NVIDIA GeForce RTX 3050 Ti Laptop GPU with CUDA capability sm_86 is not compatible with the current "
        "PyTorch installation.")
    # a README's requirement sentence
    assert "tgi-flash-attn-v2-capability" not in _ids("- NVIDIA GPU with CUDA capability (Compute Capability 6.0 or higher)")


def test_xformers_891_block_names_flash_not_the_build():
    # facebookresearch/xformers#891 (V100, fp16, the flash op forced)
    text = (
        "ValueError: Operator `memory_efficient_attention` does not support inputs:\n"
        "     query       : shape=(1, 4101, 32, 128) (torch.float16)\n"
        "     key         : shape=(1, 4101, 32, 128) (torch.float16)\n"
        "     value       : shape=(1, 4101, 32, 128) (torch.float16)\n"
        "     attn_bias   : <class 'xformers.ops.fmha.common.LowerTriangularMask'>\n"
        "     p           : 0.0\n"
        "`flshattF` is not supported because:\n"
        "    requires a GPU with compute capability > 7.5\n"
    )
    assert _codes(text)[:1] == ["flash-attn-arch-unsupported"]


def test_xformers_block_with_bf16_reasons_names_the_dtype():
    # the usual ComfyUI/PuLID block on a Turing GPU: every op refuses bf16, so the dtype is the cause
    text = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 577, 16, 64) (torch.bfloat16)\n"
        "`fa2F@v2.6.3-24-gbdf733b` is not supported because:\n"
        "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
        "    bf16 is only supported on A100+ GPUs\n"
        "`cutlassF-pt` is not supported because:\n"
        "    bf16 is only supported on A100+ GPUs\n"
    )
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_ggml_bad_arch_near_misses():
    # llama.cpp's GPU-offload warning is its own code
    assert "ggml-cuda-compiled-without-gpu-arch" not in _ids(
        "warning: llama.cpp was compiled without support for GPU offload. Setting the split mode has no effect.")
    assert "ggml-cuda-compiled-without-gpu-arch" not in _ids("ggml was not compiled with CUDA support")


def test_koboldcpp_title_names_the_build():
    # LostRuins/koboldcpp#610 (the title)
    text = "Koboldcpp 1.55: ERROR: ggml-cuda was compiled without support for the current GPU architecture.\n"
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_ollama_no_kernel_image_is_its_own_build():
    # ollama/ollama#12341 (Quadro P2000 with 0.11.x; no torch anywhere)
    text = (
        '"`CUDA error: no kernel image is available for execution on the device`" and some more errors appear '
        "in journal and GPU is not used. This happens only with NVIDIA P2000 an ollama v0.11.x.\n"
    )
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_ktransformers_image_no_kernel_image_is_its_own_build():
    # kvcache-ai/ktransformers#44 (the title and the reporter's sentence, T4)
    text = (
        "CUDA error: No kernel image is available for execution on the device\n\n"
        "I tried the DeepSeek-V2-Lite in your container image `approachingai/ktransformers:0.1.1`, which is "
        "deployed on an Nvidia T4 GPU with driver 535.161.8.\n"
    )
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_torch_arch_warning_still_wins_beside_an_ollama_word():
    # torch's own incompatibility warning is read before the runner's name
    text = (
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device (calling ollama "
        "from the same venv)\n"
    )
    assert _codes(text)[:1] == ["torch-arch-not-supported"]


def test_bare_no_kernel_image_keeps_torch_first():
    # nothing names a runner or an extension: the near-miss keeps its old reading
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert _codes(text)[:1] == ["torch-arch-not-supported"]
