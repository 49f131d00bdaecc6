"""harv41a: an unbiased harvest of sharded and large-scale training frameworks at start-up
(DeepSpeed ZeRO, Megatron-LM/Megatron-Core, ColossalAI, torchtitan/FSDP2, Transformer Engine),
scored blind, and the general fixes its misses ask for (docs/dev/harv41a.md).

Eighteen new training-side logs; explain named eight first before any change. The fixed misses
(all A1, a program's own message with no signature):
- DeepSpeed's dtype check ``Type fp16 is not supported on your device.`` (older: ``Type fp16 is
  not supported.``; bf16 alike) on a GPU older than the type needs (deepspeedai/DeepSpeed#6723);
  now ``gpu-arch-lacks-dtype``;
- Transformer Engine's flash-attn range ``Supported flash-attn versions are ... Found flash-attn
  2.8.3.`` (NVIDIA/Megatron-LM#3984) and its older assertions; now ``dependency-version-mismatch``
  (a catch-all: any other stated cause wins);
- ColossalAI's setup.py ``[extension] Could not find any kernel compatible with the current
  environment.`` in ``docker build`` (hpcaitech/ColossalAI#5732); now
  ``build-native-arch-without-gpu``;
- pip's resolver notice for a package pinning a torch range (``colossalai 0.2.8 requires
  torch<2.0,>=1.11, but you have torch 2.1.0.dev... which is incompatible.``, hpcaitech/ColossalAI#3854,
  which was silent); now ``dependency-version-mismatch``, and ``torch-too-old-for-package`` for a
  lower bound only (catch-alls);
- a Megatron-LM repository module missing from the megatron-core wheel (``No module named
  'megatron.optimizer'``, verl-project/verl#82); now ``python-project-module-not-found``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# deepspeed/runtime/engine.py DeepSpeedEngine._do_sanity_check (current and before #6742)
DS_FP16 = "ValueError: Type fp16 is not supported on your device."
DS_FP16_OLD = "ValueError: Type fp16 is not supported."
DS_BF16 = "ValueError: Type bf16 is not supported on your device."
# transformer_engine/pytorch/attention/dot_product_attention/backends.py (a warning), as the
# Megatron-LM#3984 paste raised it
TE_FA_RANGE = "ValueError: Supported flash-attn versions are >= 2.1.1, <= 2.7.4.post1. Found flash-attn 2.8.3."
TE_FA_WARN = ("[WARNING  | DotProductAttention]: Supported flash-attn versions are >= 2.1.1, <= 2.6.3. "
              "Found flash-attn 2.7.0.post2.")
# transformer_engine/pytorch/attention.py before #1226 (assertions in FlashAttention.__init__)
TE_FA_MAX = "AssertionError: FlashAttention maximum version 2.5.8 is supported."
TE_FA_MIN = "AssertionError: FlashAttention minimum version 2.0.6 is required."
# hpcaitech/ColossalAI setup.py with BUILD_EXT=1
CLAI_NO_KERNEL = "RuntimeError: [extension] Could not find any kernel compatible with the current environment."
# pip's _warn_about_conflicts for a torch range (hpcaitech/ColossalAI#3854) and a lower bound only
PIP_TORCH_RANGE = ("colossalai 0.2.8 requires torch<2.0,>=1.11, but you have torch 2.1.0.dev20230525+cu121 "
                   "which is incompatible.")
PIP_TORCH_UPPER = "torchtune 0.1.1 requires torch<=2.2.2, but you have torch 2.3.0 which is incompatible."
PIP_TORCH_LOWER = "megatron-core 0.13.0 requires torch>=2.6.0, but you have torch 2.5.1 which is incompatible."
# a Megatron-LM repository module that the megatron-core wheel does not ship
MEGATRON_OPT = "ModuleNotFoundError: No module named 'megatron.optimizer'"
MEGATRON_TRAINING = "ModuleNotFoundError: No module named 'megatron.training'"
MEGATRON_LEGACY = "ModuleNotFoundError: No module named 'megatron.legacy.model'"

FAMILIES = {
    "gpu-arch-lacks-dtype": [DS_FP16, DS_FP16_OLD, DS_BF16],
    "dependency-version-mismatch": [TE_FA_RANGE, TE_FA_WARN, TE_FA_MAX, TE_FA_MIN, PIP_TORCH_RANGE, PIP_TORCH_UPPER],
    "torch-too-old-for-package": [PIP_TORCH_LOWER],
    "build-native-arch-without-gpu": [CLAI_NO_KERNEL],
    "python-project-module-not-found": [MEGATRON_OPT, MEGATRON_TRAINING, MEGATRON_LEGACY],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_deepspeed_fp16_check_in_the_reporters_traceback():
    # deepspeedai/DeepSpeed#6723: the title's cuBLAS failure, then DeepSpeed's own dtype check
    text = (
        "CUBLAS_STATUS_NOT_SUPPORTED\n\n"
        "I have changed my configuration from `bf16` to `fp16`.\nBut it return an error:\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py", line 1080, '
        "in _do_sanity_check\n"
        '[rank0]:     raise ValueError("Type fp16 is not supported.")\n'
        "[rank0]: ValueError: Type fp16 is not supported.\n"
    )
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]


def test_dtype_near_misses_stay_quiet():
    for line in (
        "ValueError: dtype fp16 is not supported for this quantization method",
        "Type fp16 is supported on your device.",
        "NotImplementedError: Data type fp8 is not supported",
        '"fp16": {"enabled": true}',
    ):
        assert "deepspeed-dtype-not-supported-on-device" not in _ids(line), line


def test_flash_attn_range_gives_way_to_a_stated_cause():
    # the TE warning beside an unrelated failure: the failure's own reading comes first
    text = (
        "[WARNING  | DotProductAttention]: Supported flash-attn versions are >= 2.1.1, <= 2.6.3. "
        "Found flash-attn 2.7.0.post2.\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.10 GiB of which 1.12 GiB is free.\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_flash_attn_near_misses_stay_quiet():
    for line in (
        "Supported flash-attn versions are listed in setup.py",
        "flash-attn 2.8.3 is installed",
        "FlashAttention maximum sequence length is 8192",
    ):
        assert "transformer-engine-flash-attn-version-range" not in _ids(line), line


def test_colossalai_docker_build_paste():
    # hpcaitech/ColossalAI#5732 (the reporter's Dockerfile step and pip's egg_info failure)
    text = (
        "when docker build run follow command \nRUN BUILD_EXT=1   pip install colossalai-nightly\n\n"
        "RuntimeError: [extension] Could not find any kernel compatible with the current environment. \n"
        "#0 17.77   Preparing metadata (setup.py): finished with status 'error'\n"
        "#0 17.78   error: subprocess-exited-with-error\n"
        "#0 17.78   × python setup.py egg_info did not run successfully.\n"
    )
    assert _codes(text)[:1] == ["build-native-arch-without-gpu"]


def test_colossalai_near_misses_stay_quiet():
    for line in (
        "[extension] Compiling or loading the JIT-built cpu_adam kernel during runtime now",
        "[extension] Building extensions cpu_adam, fused_optim",
        "Could not find any compatible kernel image",
    ):
        assert "colossalai-build-ext-no-compatible-kernel" not in _ids(line), line


def test_pip_torch_notices_keep_their_readings():
    # an exact pin of a compiled companion keeps pip-torch-pin-conflict; other packages keep the
    # general notice; the lower-bound and range rules do not claim them
    pinned = "torchvision 0.16.0 requires torch==2.1.0, but you have torch 2.2.0 which is incompatible."
    assert "pip-torch-pin-conflict" in _ids(pinned)
    other = "accelerate 0.20.3 requires numpy>=1.17, but you have numpy 1.16.6 which is incompatible."
    assert "pip-installed-release-incompatible" in _ids(other)
    for line in (pinned, other):
        assert "pip-package-torch-range-excludes-installed" not in _ids(line), line
        assert "pip-package-needs-newer-torch" not in _ids(line), line
    # a range with an upper bound is not read as 'torch too old'
    assert "pip-package-needs-newer-torch" not in _ids(PIP_TORCH_RANGE)
    assert "pip-package-torch-range-excludes-installed" not in _ids(PIP_TORCH_LOWER)


def test_pip_torch_range_gives_way_to_a_stated_cause():
    text = (
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are "
        "installed. This behaviour is the source of the following dependency conflicts.\n"
        + PIP_TORCH_RANGE + "\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert _codes(text)[:1] != ["dependency-version-mismatch"]


def test_megatron_module_in_a_traceback():
    # verl-project/verl#82
    text = (
        "from megatron.optimizer import DistributedOptimizer\n"
        "ModuleNotFoundError: No module named 'megatron.optimizer'\n"
    )
    assert _codes(text)[:1] == ["python-project-module-not-found"]


def test_megatron_near_misses_stay_quiet():
    for line in (
        "ModuleNotFoundError: No module named 'megatron'",
        "ModuleNotFoundError: No module named 'megatron.core'",
        "from megatron.training import get_args",
        "No module named 'megatron.core.optimizer'",
        "No module named 'megatron_training'",
    ):
        assert "megatron-lm-repository-module-missing" not in _ids(line), line
