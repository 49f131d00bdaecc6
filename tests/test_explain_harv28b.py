"""harv28b: a harvest of the corners the corpus samples least, scored blind, and the general
fixes its misses ask for (docs/dev/harv28b.md).

Twenty-six new training-side logs (TensorRT-LLM, TransformerEngine, JAX's CUDA plugin,
unsloth, trl, MPS, Slurm, lmdeploy, TensorRT on Windows ...), sampled in search order; explain
named sixteen first before any change. The misses the log itself can fix:
- unsloth's own 'Please file a bug report! Error patching SFTTrainer' (a trl release newer than
  the unsloth release supports), read by nothing (A1): ``dependency-version-mismatch``;
- XLA's 'Mismatched PJRT plugin PJRT API version', caught only by jax's generic backend line
  (A2): ``dependency-version-mismatch``;
- TensorRT-LLM's 'The following expected tensors are not found' (the logger line before the
  RuntimeError an existing signature reads), alone in a cut paste (A2):
  ``tensorrt-engine-version-mismatch``;
- Slurm's 'can't stat gres.conf file /dev/nvidia0' (A1): ``device-nodes-missing``;
- 'DLL load failed while importing tensorrt' on Windows (A1): ``library-missing``;
- TensorRT's 'Networks with FP8 Q/DQ layers require hardware with FP8 support', read only by
  resemblance (A2): ``gpu-arch-lacks-dtype``;
- 'no kernel image' from lmdeploy's TurboMind, ranked as torch's wheel (C2):
  ``extension-arch-missing``.
Each message is the program's own text (its source, or a training-side thread's paste), run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "dependency-version-mismatch": [
        # unsloth 2025.2 tokenizer_utils.py (unslothai/unsloth#1700)
        "RuntimeError: Unsloth: Please file a bug report! Error patching SFTTrainer",
        # xla/pjrt/pjrt_api.cc through jax's xla_bridge (jax-ml/jax#24901)
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API "
        "version (0.54) and framework PJRT API version 0.51). (you may need to uninstall the failing plugin "
        "package, or set JAX_PLATFORMS=cpu to skip this backend.)",
        # the same check for jax-metal's plugin
        "RuntimeError: Unable to initialize backend 'METAL': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API "
        "version (0.47) and framework PJRT API version 0.51).",
    ],
    "tensorrt-engine-version-mismatch": [
        # tensorrt_llm/runtime/generation.py logger.error (NVIDIA/TensorRT-LLM#574)
        "[12/05/2023-23:50:35] [TRT-LLM] [E] The following expected tensors are not found: "
        "{'past_key_value_16', 'present_key_value_31', 'present_key_value_10'}",
    ],
    "device-nodes-missing": [
        # slurm src/common/gres.c _my_stat (fgci-org/ansible-role-cuda#3)
        "Jul  8 15:11:23 gpu slurmd[5421]: fatal: can't stat gres.conf file /dev//nvidia0: No such file or directory",
        "slurmd: fatal: can't stat gres.conf file /dev/nvidia1: No such file or directory",
    ],
    "library-missing": [
        # CPython's dynload_win.c on the tensorrt wheel (NVIDIA/TensorRT-LLM#1446)
        "ImportError: DLL load failed while importing tensorrt: The specified module could not be found.",
    ],
    "gpu-arch-lacks-dtype": [
        # TensorRT's builder (NVIDIA/Model-Optimizer#70)
        "[09/11/2024-21:49:27] [E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error "
        "(Networks with FP8 Q/DQ layers require hardware with FP8 support.)",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_unsloth_patch_failure_in_its_traceback_names_the_version_pair():
    # unslothai/unsloth#1700: the traceback prints the source lines that raise it
    text = ("SyntaxError: invalid syntax (<string>, line 4)\n\n"
            "RuntimeError                              Traceback (most recent call last)\n"
            "/usr/local/lib/python3.11/dist-packages/unsloth/tokenizer_utils.py in <module>\n"
            "   1060     try:\n"
            "-> 1061         exec(trainer_text, globals())\n"
            "   1062     except:\n"
            '-> 1063         raise RuntimeError(f"Unsloth: Please file a bug report! Error patching {trainer_name}")\n'
            "RuntimeError: Unsloth: Please file a bug report! Error patching SFTTrainer\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_pjrt_plugin_mismatch_is_not_a_failed_cuda_init():
    text = ("RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT "
            "API version (0.54) and framework PJRT API version 0.51). (you may need to uninstall the failing "
            "plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)\n")
    codes = _codes(text)
    assert codes[:1] == ["dependency-version-mismatch"]
    assert "cuda-init-failed" not in codes
    # the compatibility mode's major-version and minimum forms
    assert _codes("INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API major version (1) and framework PJRT API "
                  "major version 0).\n")[:1] == ["dependency-version-mismatch"]
    assert _codes("RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Plugin PJRT API version "
                  "0.40 is older than the minimum supported version 0.47\n")[:1] == ["dependency-version-mismatch"]


def test_other_jax_backend_failures_keep_their_causes():
    # a real CUDA backend failure still reads as the CUDA init, a CPU-only jaxlib as that build
    assert _codes("RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU "
                  "devices. (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu "
                  "to skip this backend.)\n")[:1] != ["dependency-version-mismatch"]
    assert _codes("Unable to initialize backend 'cuda': NOT_FOUND: Could not find registered platform with "
                  'name: "cuda". Available platform names are: Interpreter Host\n')[:1] == ["framework-cpu-only-build"]


def test_trtllm_expected_tensors_line_alone_reads_as_an_old_engine():
    # the paste of NVIDIA/TensorRT-LLM#574, cut inside the set
    text = ("python benchmarks/python/benchmark.py --model llama_7b --mode plugin --batch_size \"64\" "
            "--engine_dir examples/llama/out/7b/fp16_1gpu\n\n"
            "[12/05/2023-23:50:35] [TRT-LLM] [E] The following expected tensors are not found: {'past_key_value_16', "
            "'present_key_value_31', 'present_key_valu\n"
            "e_16', 'past_key_value_4', 'pre\n")
    assert _codes(text)[:1] == ["tensorrt-engine-version-mismatch"]


def test_slurmd_waiting_then_fatal_names_the_missing_device_node():
    text = ("Jul  8 15:11:04 gpu slurmd[5421]: error: Waiting for gres.conf file /dev//nvidia0\n"
            "Jul  8 15:11:23 gpu slurmd[5421]: fatal: can't stat gres.conf file /dev//nvidia0: No such file or directory\n")
    assert _codes(text)[:1] == ["device-nodes-missing"]


def test_slurmd_finding_its_device_node_in_time_is_not_read():
    # slurm's _my_stat logs 'now exists' when the node appears within its wait: no failure
    text = ("slurmd: info: gres.conf file /dev/nvidia0 now exists\n"
            "slurmd: slurmd started on Mon, 08 Jul 2024 15:11:30 +0000\n")
    assert "device-nodes-missing" not in _codes(text)


def test_dll_load_failed_for_tensorrt_in_chinese_windows():
    # NVIDIA/TensorRT-LLM#1446 on a Chinese Windows
    text = ("  File \"C:\\Users\\x\\site-packages\\tensorrt\\__init__.py\", line 71, in <module>\n"
            "    from .tensorrt import *\n"
            "ImportError: DLL load failed while importing tensorrt: 找不到指定的模块。\n")
    assert _codes(text)[:1] == ["library-missing"]


def test_dll_load_failed_for_torch_keeps_its_reading():
    # torch._C's DLL load failure stays with the Visual C++ runtime reading
    text = "ImportError: DLL load failed while importing _C: The specified module could not be found.\n"
    assert "library-missing" not in _codes(text)[:1]


def test_no_kernel_image_from_lmdeploy_is_its_own_build():
    # InternLM/lmdeploy#3844: the serve command, then the bare CUDA line on a Blackwell card
    text = ("lmdeploy serve api_server /home/v/model/Qwen/Qwen3-0.6B\n"
            "启动正常，运行下面代码报错\n"
            "no kernel image is available for execution on the device\n"
            "Aborted (core dumped)\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # TurboMind's own check names its kernel file
    text = ("terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  [TM][ERROR] CUDA runtime error: no kernel image is available for execution on the device "
            "/lmdeploy/src/turbomind/kernels/sampling_topp_kernels.cu:1219\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_no_kernel_image_with_torchs_own_warning_stays_torchs():
    # torch's compatibility warning decides even when lmdeploy is the program
    text = ("lmdeploy serve api_server Qwen/Qwen3-0.6B\n"
            "NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] == ["torch-arch-not-supported"]


def test_fp8_qdq_engine_on_ampere_is_a_dtype_gap_not_an_arch_mismatch():
    text = ("[09/11/2024-21:49:27] [E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error "
            "(Networks with FP8 Q/DQ layers require hardware with FP8 support.)\n"
            "[09/11/2024-21:49:27] [E] Engine could not be created from network\n"
            "[09/11/2024-21:49:27] [E] Building engine failed\n")
    assert _codes(text)[:1] == ["gpu-arch-lacks-dtype"]
