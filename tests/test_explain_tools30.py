"""A raise-site sweep (tools30, docs/dev/tools30.md has the table of every message swept, its
source and explain's reading before and after): NCCL's WARN lines, the CUDA runtime/driver and
NVML error strings, vLLM/SGLang/DeepSpeed/transformers refusals, glibc's loader and
nvidia-container-cli, run through explain; these are the ones it answered with nothing or a wrong
cause (a base-rate guess of /dev/shm for NCCL lines that are about something else).

Each message is the program's own text, taken from its source (the file and function are in the
signature's `source`); the family tests run it through every wrapper of
test_explain_patterns.WRAPPERS (rank and logging prefixes, quotes, markdown, 80-column wraps).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

SWEEP = {
    # nccl src/transport/nvls.cc nvlsGroupBindMem: cuMulticastBindMem failed
    "fabric-registration-failed": [
        "NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 1 "
        "'invalid argument'.\nThis is usually caused by a system or configuration error in the Fabric Manager "
        "or NVSwitches.\nDisable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.",
    ],
    # nccl src/transport/net_ib/init.cc ncclIbInitDevices; src/plugin/net.cc ncclNetInit
    "nccl-socket-ifname-wrong": [
        "NCCL WARN NET/IB : No IP interface found.",
        "gpu-node-3:41:41 [0] NCCL WARN Failed to initialize any NET plugin",
    ],
    # nccl src/transport/nvls.cc ncclNvlsInit
    "nccl-duplicate-gpu": [
        "NCCL WARN NCCL_NVLS_ENABLE has been set to \"1\" and communicator has multiple ranks using the same NVML "
        "device. This is not compatible with NCCL_NVLS_ENABLE=1.",
    ],
    # nccl src/misc/ibvwrap.cc: verbs calls that pin memory, ENOMEM under a low RLIMIT_MEMLOCK
    "memlock-limit-low": [
        "NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory",
        "NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory errno 12",
    ],
    # nccl src/include/checks.h CUDACHECK: a CUDA failure no more specific signature names
    "nccl-error": ["NCCL WARN Cuda failure 'an illegal memory access was encountered'"],
    # nvml.h NVML_ERROR_UNINITIALIZED: an earlier nvmlInit failed and the caller went on
    "nvml-unavailable": ["pynvml.NVMLError_Uninitialized: Uninitialized"],
    # deepspeed op_builder/builder.py (module level), run by setup.py in pip's isolated build env
    "build-isolation-hides-torch": [
        " [WARNING]  unable to import torch, please install it if you want to pre-compile any deepspeed ops.",
    ],
    # deepspeed op_builder/evoformer_attn.py is_compatible, and jit_load appending it
    "deepspeed-cutlass-missing": [
        "RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
        "hardware/software issue. Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH",
        "RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
        "hardware/software issue. Please use CUTLASS version >= 3.1.0",
    ],
    # deepspeed op_builder/builder.py jit_load when is_compatible() refused without a warning
    "extension-build-failed": [
        "RuntimeError: Unable to JIT load the fused_lamb op due to it not being compatible due to "
        "hardware/software issue. None",
    ],
    # transformers training_args.py __post_init__
    "torch-cuda-unavailable": [
        "ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
        "(`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices "
        "(with IPEX).",
    ],
    # sgl-kernel python/sgl_kernel/flash_mla.py, spatial.py
    "driver-too-old-for-build": [
        "ImportError: Failed to load sgl_kernel.flashmla_ops extension. Ensure CUDA Driver >= 12.4",
        "ImportError: Failed to load sgl_kernel.spatial_ops extension. Ensure CUDA Driver >= 12.4",
    ],
}

test_sweep_messages_head_explain_in_every_wrapper, test_sweep_messages_are_matched_by_their_code = \
    family_tests(SWEEP)

test_sweep_roots_are_sourced = sourced_roots_test(["deepspeed-cutlass-missing"])

# look-alike lines a healthy run prints: they must stay quiet
test_healthy_look_alikes_stay_quiet = healthy_test([
    "NCCL INFO NVLS multicast support is not available on dev 0",
    "NCCL INFO NVLS Created Multicast group 7f1c00000000 nranks 8 size 2097152 on rank 0",
    "NCCL INFO Failed to initialize NET plugin IB",
    "NCCL INFO Initialized NET plugin Socket",
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
    "Installed CUDA version 11.7 does not match the version torch was compiled with 11.8 but since the APIs are "
    "compatible, accepting this combination",
    "export CUTLASS_PATH=/opt/cutlass",
    # DeepSpeed prints these at every start (ds_report, accelerator detection), whatever is used later
    " [WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH",
    " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.3",
    " [WARNING]  using untested triton version (2.3.0), only 1.0.0 is known to be compatible",
])


def test_the_deepspeed_start_notices_do_not_outrank_the_failure():
    """The bare CUTLASS notice DeepSpeed prints at every start is no cause of a later failure."""
    log = (" [WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH\n"
           " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.3\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert codes_of(log)[:1] == ["gpu-out-of-memory"]


@pytest.mark.parametrize("line", [
    # a verbs call failing for another reason is no locked-memory limit
    "NCCL WARN Call to ibv_create_qp failed with error Connection timed out",
    "NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, local GID ::ffff:10.0.0.1",
])
def test_other_verbs_failures_are_not_the_memlock_limit(line):
    assert "memlock-limit-low" not in codes_of(line + "\n")[:1]


@pytest.mark.parametrize("line", [
    "NCCL WARN Cuda failure 'an illegal memory access was encountered'",
    "NCCL WARN Cuda failure 'operation not supported'",
])
def test_a_cuda_failure_in_nccl_is_no_shm_guess(line):
    """NCCL's CUDACHECK line returns ncclUnhandledCudaError: the /dev/shm size most NCCL threads
    established is no cause of a failed CUDA call, so no base rate names it."""
    codes = codes_of(line + "\n")
    assert codes[:1] == ["nccl-error"], codes
    assert "nccl-shm-too-small" not in codes[:1]


@pytest.mark.parametrize("line,code", [
    ("NCCL WARN Cuda failure 'peer access is not supported between these two devices'", "nccl-p2p-blocked"),
    ("NCCL WARN Cuda failure 'out of memory'", "gpu-out-of-memory"),
    ("NCCL WARN Cuda failure 'invalid device ordinal'", "device-ordinal-out-of-range"),
])
def test_a_cuda_failure_that_names_its_cause_keeps_it(line, code):
    assert codes_of(line + "\n")[:1] == [code]


def test_the_nvls_line_ranks_the_fabric_causes():
    expl = explain_text(SWEEP["fabric-registration-failed"][0] + "\n")
    top = expl.candidates[0]
    assert top.code == "fabric-registration-failed"
    assert {"fabric-manager-not-running", "fabric-not-ready"} <= set(top.could_be) | {
        c.code for c in expl.candidates}


def test_the_builder_notice_gives_way_to_a_stated_cause():
    """DeepSpeed's 'unable to import torch' is printed by setup.py; a later line naming the cause wins."""
    log = (" [WARNING]  unable to import torch, please install it if you want to pre-compile any deepspeed ops.\n"
           "RuntimeError: Ninja is required to load C++ extensions\n")
    assert codes_of(log)[:1] == ["ninja-missing"]


def test_nvml_uninitialized_gives_way_to_the_init_failure():
    log = ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found\n"
           "pynvml.NVMLError_Uninitialized: Uninitialized\n")
    assert codes_of(log)[:1] == ["nvml-unavailable"]
    log = "Failed to initialize NVML: Driver/library version mismatch\npynvml.NVMLError_Uninitialized: Uninitialized\n"
    assert codes_of(log)[:1] == ["driver-library-mismatch"]
