"""src41 (issue 8 item 2): messages harvested from the programs' own source: the leftovers of src39/src40
(NCCL's MNNVL/IMEX check, NCCL_COMM_ID, ibv_reg_mr's EFAULT, SGLang's and vLLM's free-memory checks, the
ROCm toolkit on a build host, Ollama's AMD lines) and the programs not swept before (xformers, DeepSpeed's
op builder, TransformerEngine, accelerate, PEFT). docs/dev/src41.md says what was read; the lists
docs/dev/src41-*.txt hold every message listed and explain's answer.

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). Each runs through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word wrap
and terminal cuts at 80 columns, CRLF, container log formats) and must rank its code first. Near misses
that must not name the new signatures follow.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "gpudirect-rdma-unavailable": [
        # nccl src/misc/ibvwrap.cc wrap_ibv_reg_mr_iova2 with errno EFAULT
        "node1:1234:1300 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address",
        "NCCL WARN Call to ibv_reg_mr failed with error Bad address",
    ],
    "nccl-mnnvl-imex-unavailable": [
        # nccl src/mnnvl.cc ncclMnnvlCheck (2.27+, both branches; 2.21-2.26)
        "gb200-1:2345:2345 [0] NCCL WARN MNNVL (cliqueSize 72) is available but not working on this system. "
        "Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to "
        "ignore this issue.",
        "gb200-1:2345:2345 [3] NCCL WARN MNNVL (cliqueSize 8) is available but not working on this system. "
        "Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
        "gb200-1:2345:2345 [0] NCCL WARN MNNVL (cliqueSize 18) is available but not supported on this system. "
        "Check the IMEX configuration.",
    ],
    "env-nccl-comm-id-invalid": [
        # nccl src/bootstrap.cc bootstrapNetInit
        "node1:1:1 [0] bootstrap.cc:114 NCCL WARN Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or "
        "[<ipv6>]:<port> or <hostname>:<port>",
    ],
    "gpu-memory-held-by-other-processes": [
        # sglang model_runner.py init_torch_distributed; vllm gpu_worker.py (were gpu-out-of-memory)
        "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
        "min_per_gpu_memory=10.2, local_gpu_memory=70.1, local_gpu_memory * 0.9 = 63.1",
        "ValueError: Free memory on device (10.5/79.1 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 71.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
        "processes.",
    ],
    "rocm-toolkit-missing": [
        # flash-attention setup.py check_if_rocm_home_none; mamba setup.py check_if_hip_home_none, get_hip_version
        "UserWarning: flash_attn was requested, but hipcc was not found.",
        "UserWarning: mamba_ssm was requested, but hipcc was not found.  Are you sure your environment has "
        "hipcc available?",
        "hip installation not found: [Errno 2] No such file or directory: 'hipcc' ROCM_PATH=None",
        # ollama discover/amd_linux.go (2024-25)
        "time=2024-11-02T10:00:00.000Z level=WARN source=amd_linux.go:443 msg=\"amdgpu detected, but no "
        "compatible rocm library found.  Either install rocm v6, or follow manual install instructions at "
        "https://github.com/ollama/ollama/blob/main/docs/linux.md#manual-install\"",
    ],
    "amd-driver-too-old": [
        # ollama discover/amd.go detectOldAMDDriverWindows
        "time=2025-10-01T10:00:00.000+02:00 level=WARN source=amd.go:485 msg=\"AMD driver is too old. Update "
        "your AMD driver to enable GPU inference.\"",
    ],
    "git-submodules-missing": [
        # xformers setup.py get_extensions
        "RuntimeError: CUTLASS submodule not found at /tmp/xformers/third_party/cutlass/include. Did you "
        "forget to run `git submodule update --init --recursive` ?",
    ],
    "libaio-missing": [
        # deepspeed op_builder/async_io.py's last warning, appended by builder.py jit_load
        "RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
        "issue. If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS "
        "environment variables to where it can be found.",
    ],
    "framework-gpu-arch-unsupported": [
        # deepspeed op_builder/transformer_inference.py, fp_quantizer.py, evoformer_attn.py via jit_load
        "RuntimeError: Unable to JIT load the transformer_inference op due to it not being compatible due to "
        "hardware/software issue. NVIDIA Inference is only supported on Pascal and newer architectures",
        "RuntimeError: Unable to JIT load the fp_quantizer op due to it not being compatible due to "
        "hardware/software issue. NVIDIA Inference is only supported on Ampere and newer architectures",
        "RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
        "hardware/software issue. Please use a GPU with compute capability >= 7.0",
    ],
    "dependency-version-mismatch": [
        # deepspeed op_builder/sparse_attn.py via jit_load
        "RuntimeError: Unable to JIT load the sparse_attn op due to it not being compatible due to "
        "hardware/software issue. please install triton==1.0.0 if you want to use sparse attention",
        "RuntimeError: Unable to JIT load the sparse_attn op due to it not being compatible due to "
        "hardware/software issue. using untested triton version (2.3.0), only 1.0.0 is known to be compatible",
        # TransformerEngine transformer_engine/common/__init__.py
        "AssertionError: Transformer Engine package version mismatch. Found transformer_engine_torch v2.4.0, "
        "transformer-engine v2.5.0, and transformer-engine-cu12 v2.5.0. Install transformer-engine using "
        "'pip3 install --no-build-isolation transformer-engine[pytorch]==VERSION'",
        # peft src/peft/import_utils.py
        "ImportError: Found an incompatible version of gptqmodel. Found version `2.0.0`, but only versions "
        "`7.0.0` or higher are supported",
        "ImportError: gptqmodel requires optimum version `1.24.0` or higher. Found version `1.20.0`, but only "
        "versions above `1.24.0` are supported",
        "ImportError: Found an incompatible version of torchao. Found version 0.5.0, but only versions above "
        "0.16.0 are supported",
    ],
    "package-not-on-native-windows": [
        # deepspeed op_builder/pin_memory.py via jit_load
        "RuntimeError: Unable to JIT load the pin_memory op due to it not being compatible due to "
        "hardware/software issue. pin_memory is only supported on POSIX platforms, not Windows.",
        # deepspeed setup.py (DS_BUILD_AIO=1 on Windows)
        "RuntimeError: Cannot pre-compile async_io without pin_memory, which is required at runtime but is not "
        "compatible on this platform.",
    ],
    "torch-cpu-only-build": [
        # deepspeed op_builder/gds.py via jit_load
        "RuntimeError: Unable to JIT load the gds op due to it not being compatible due to hardware/software "
        "issue. Please install torch CUDA if trying to pre-compile GDS with CUDA",
    ],
    "gpu-arch-lacks-dtype": [
        # TransformerEngine transformer_engine/pytorch/quantization.py _compute_mxfp8_support
        "AssertionError: MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.",
    ],
    "kernel-extension-not-built": [
        # TransformerEngine transformer_engine/common/__init__.py load_framework_extension
        "AssertionError: Could not find TE core package `transformer-engine-cu*`.",
    ],
    "torch-too-old-for-package": [
        # TransformerEngine transformer_engine/pytorch/__init__.py
        "AssertionError: Minimum torch version 2.1 required. Found (2, 0).",
    ],
    "kernel-library-not-installed": [
        # accelerate src/accelerate/accelerator.py
        "ImportError: Tried to train with `fp8` and auto-detect backend, but no FP8-compatible backend was "
        "installed. Valid backends are: `torchao`, `transformer-engine`, and `msamp`.",
    ],
    "windows-stack-overflow": [
        # Windows ntstatus.h, named by explain.numbers; CPython faulthandler.c on Windows
        "Process finished with exit code -1073741571 (0xC00000FD)",
        "Windows fatal exception: stack overflow",
    ],
    "windows-mapped-file-unreadable": [
        "Process finished with exit code -1073741818 (0xC0000006)",
        "Windows fatal exception: page error",
    ],
}

# the symptom: its code heads the answer only where nothing narrower is named
SYMPTOMS = {
    "torch-cuda-unavailable": [
        # accelerate src/accelerate/utils/bnb.py load_and_quantize_model
        "RuntimeError: No GPU or Intel XPU found. A GPU or Intel XPU is needed for quantization.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)
test_symptom_in_every_wrapper, test_symptom_own_signature = family_tests(SYMPTOMS)

# every new (or moved) signature id, and one message above that it must match on its own
NEW_SIGNATURES = {
    "nccl-ibv-reg-mr-bad-address": FAMILIES["gpudirect-rdma-unavailable"][0],
    "nccl-mnnvl-not-working": FAMILIES["nccl-mnnvl-imex-unavailable"][0],
    "nccl-comm-id-invalid-format": FAMILIES["env-nccl-comm-id-invalid"][0],
    "sglang-memory-capacity-unbalanced": FAMILIES["gpu-memory-held-by-other-processes"][0],
    "vllm-free-memory-below-utilization": FAMILIES["gpu-memory-held-by-other-processes"][1],
    "setup-hipcc-not-found": FAMILIES["rocm-toolkit-missing"][0],
    "ollama-no-compatible-rocm-library": FAMILIES["rocm-toolkit-missing"][3],
    "ollama-amd-driver-too-old": FAMILIES["amd-driver-too-old"][0],
    "xformers-cutlass-submodule-missing": FAMILIES["git-submodules-missing"][0],
    "deepspeed-jit-async-io-libaio-hint": FAMILIES["libaio-missing"][0],
    "deepspeed-jit-op-gpu-too-old": FAMILIES["framework-gpu-arch-unsupported"][2],
    "deepspeed-jit-sparse-attn-triton-1-0": FAMILIES["dependency-version-mismatch"][0],
    "deepspeed-jit-pin-memory-posix-only": FAMILIES["package-not-on-native-windows"][0],
    "deepspeed-jit-gds-needs-torch-cuda": FAMILIES["torch-cpu-only-build"][0],
    "te-mxfp8-not-on-sm120": FAMILIES["gpu-arch-lacks-dtype"][0],
    "te-package-version-mismatch": FAMILIES["dependency-version-mismatch"][2],
    "te-core-package-missing": FAMILIES["kernel-extension-not-built"][0],
    "te-minimum-torch-version": FAMILIES["torch-too-old-for-package"][0],
    "accelerate-no-fp8-backend": FAMILIES["kernel-library-not-installed"][0],
    "accelerate-bnb-no-gpu-or-xpu": SYMPTOMS["torch-cuda-unavailable"][0],
    "peft-quantizer-version-gate": FAMILIES["dependency-version-mismatch"][3],
    "faulthandler-windows-stack-overflow": FAMILIES["windows-stack-overflow"][1],
    "faulthandler-windows-page-error": FAMILIES["windows-mapped-file-unreadable"][1],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


test_new_code_is_sourced_and_says_what_to_do = sourced_roots_test(
    ["nccl-mnnvl-imex-unavailable", "env-nccl-comm-id-invalid", "rocm-toolkit-missing", "amd-driver-too-old",
     "windows-stack-overflow", "windows-mapped-file-unreadable"])


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # NCCL on a working NVL72 and a working IB fabric
    "gb200-1:2345:2345 [0] NCCL INFO MNNVL 1 cliqueId 7fff cliqueSize 72 cliqueRank 3 nvlDomainSize 72",
    "node1:1:1 [0] NCCL INFO NCCL_COMM_ID set by environment to 10.0.0.1:29600",
    "node1:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'",
    # Ollama's discovery on a working AMD GPU
    "time=2025-01-01T12:00:00.000Z level=INFO source=amd_linux.go:386 msg=\"amdgpu is supported\" gpu=0 "
    "gpu_type=gfx1100",
    # DeepSpeed's op builder accepting a minor CUDA mismatch
    "Installed CUDA version 12.1 does not match the version torch was compiled with 12.4 but since the APIs "
    "are compatible, accepting this combination",
    # TransformerEngine and xformers info lines
    "transformer_engine: Using cuDNN 9.1.0 for fused attention",
    "xFormers 0.0.28.post3 with CUDA 1201 built for PyTorch 2.5.1",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # ENOMEM from ibv_reg_mr stays the locked-memory limit's
    ("NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "nccl-ibv-reg-mr-bad-address"),
    ("NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory", "nccl-ibv-reg-mr-bad-address"),
    # ... and EFAULT is no longer the locked-memory limit's
    ("NCCL WARN Call to ibv_reg_mr failed with error Bad address", "nccl-memlock"),
    ("NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address", "nccl-memlock"),
    # MNNVL's healthy INFO line, and NCCL_MNNVL_ENABLE set on purpose
    ("NCCL INFO MNNVL 1 cliqueId 7fff cliqueSize 72 cliqueRank 3 nvlDomainSize 72", "nccl-mnnvl-not-working"),
    ("NCCL INFO NCCL_MNNVL_ENABLE set by environment to 0.", "nccl-mnnvl-not-working"),
    # NCCL_COMM_ID set and used, and the other bootstrap warning about it
    ("NCCL INFO NCCL_COMM_ID set by environment to 10.0.0.1:29600", "nccl-comm-id-invalid-format"),
    ("NCCL WARN ncclCommGetUniqueId should not be called when NCCL_COMM_ID is set", "nccl-comm-id-invalid-format"),
    # a balanced SGLang start and vLLM's KV-cache line
    ("INFO model_runner.py: Memory pool end. avail mem=10.21 GB", "sglang-memory-capacity-unbalanced"),
    ("INFO gpu_worker.py: Available KV cache memory: 61.25 GiB", "vllm-free-memory-below-utilization"),
    # nvcc, not hipcc
    ("UserWarning: flash_attn was requested, but nvcc was not found.", "setup-hipcc-not-found"),
    ("hip installation found: HIP version: 6.2.41133", "setup-hipcc-not-found"),
    # Ollama's other AMD lines
    ("level=INFO source=amd_linux.go:296 msg=\"unsupported Radeon iGPU detected skipping\" id=0",
     "ollama-no-compatible-rocm-library"),
    ("level=WARN source=amd_windows.go:140 msg=\"amdgpu is not supported (supported types:[gfx1030 gfx1100])\"",
     "ollama-amd-driver-too-old"),
    ("NVIDIA driver is too old. Update your driver", "ollama-amd-driver-too-old"),
    # another submodule message
    ("fatal: No url found for submodule path 'third_party/cutlass' in .gitmodules",
     "xformers-cutlass-submodule-missing"),
    # DeepSpeed's bare warnings (printed by ds_report for every op) name nothing on their own
    (" [WARNING]  NVIDIA Inference is only supported on Pascal and newer architectures",
     "deepspeed-jit-op-gpu-too-old"),
    (" [WARNING]  please install triton==1.0.0 if you want to use sparse attention",
     "deepspeed-jit-sparse-attn-triton-1-0"),
    (" [WARNING]  pin_memory is only supported on POSIX platforms, not Windows.",
     "deepspeed-jit-pin-memory-posix-only"),
    (" [WARNING]  If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS "
     "environment variables to where it can be found.", "deepspeed-jit-async-io-libaio-hint"),
    # TransformerEngine: FP8 on Ada with new libraries is fine; the version line of a matching install
    ("AssertionError: Device compute capability 8.9 or higher required for FP8 execution.", "te-mxfp8-not-on-sm120"),
    ("transformer-engine 2.5.0, transformer-engine-cu12 2.5.0, transformer_engine_torch 2.5.0",
     "te-package-version-mismatch"),
    ("Minimum supported torch version is 2.1", "te-minimum-torch-version"),
    # accelerate's fp8 fallback warning, and PEFT's compatible versions
    ("The current device has compute capability of (8, 6) which is insufficient for FP8 mixed precision "
     "training (requires a GPU Hopper/Ada Lovelace or higher, compute capability of 8.9 or higher). Will use "
     "FP16 instead.", "accelerate-no-fp8-backend"),
    ("Found a compatible version of gptqmodel: 7.1.0", "peft-quantizer-version-gate"),
    # faulthandler's other Windows exceptions, and Python's own recursion error
    ("Windows fatal exception: access violation", "faulthandler-windows-stack-overflow"),
    ("Windows fatal exception: access violation", "faulthandler-windows-page-error"),
    ("RecursionError: maximum recursion depth exceeded while calling a Python object",
     "faulthandler-windows-stack-overflow"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)


def test_sglang_and_vllm_memory_checks_outrank_the_oom_code():
    for msg in FAMILIES["gpu-memory-held-by-other-processes"]:
        found = [c.code for c in explain_text("step 1\n" + msg + "\n").candidates]
        assert found[0] == "gpu-memory-held-by-other-processes", found


def test_memlock_still_names_enomem():
    log = "node1:1:1 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n"
    assert [c.code for c in explain_text(log).candidates][:1] == ["memlock-limit-low"]


def test_a_named_message_outranks_the_bare_status():
    # a status number gives way to any message of the log that names a cause
    log = ("OSError: [WinError 1455] The paging file is too small for this operation to complete.\n"
           "Process finished with exit code -1073741818 (0xC0000006)\n")
    assert [c.code for c in explain_text(log).candidates][:1] == ["windows-pagefile-too-small"]
