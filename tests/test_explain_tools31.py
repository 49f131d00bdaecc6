"""The same failures in other versions' words (tools31, docs/dev/tools31.md has the table of every
wording checked, its library, file and version range, and explain's reading before and after).

A message's words drift between releases of the library that raises it; the knowledge base was
mostly written from the releases of the threads it read. These are the older or newer wordings
explain did not read (or read as a word guess), each with the real text of its release, taken
from the raise site (the file and the releases are in the signature's `source`), plus the lines
tools30 left unread (vLLM's platform-plugin and package-not-found lines, DeepSpeed's sparse_attn
refusal inside jit_load). The family tests run each through every wrapper of
test_explain_patterns.WRAPPERS (rank and logging prefixes, quotes, markdown, 80-column wraps).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

SWEEP = {
    # aten/src/ATen/detail/CUDAHooksInterface.h: the CPU library's stub CUDA hooks (1.0 lower case,
    # 1.1+ capitalised with CUDA_HELP after it)
    "torch-cpu-only-build": [
        "RuntimeError: Cannot query detailed CUDA version without ATen_cuda library. PyTorch splits its "
        "backend into two shared libraries: a CPU library and a CUDA library; this error has occurred because "
        "you are trying to use some CUDA functionality, but the CUDA library has not been loaded by the dynamic "
        "linker for some reason.",
        "RuntimeError: Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
        "shared libraries: a CPU library and a CUDA library;",
        "RuntimeError: cannot initialize CUDA without ATen_cuda library",
    ],
    # torch <= 1.4 aten/src/THC: THCCachingAllocator and THCudaCheck spell cudaErrorMemoryAllocation (2)
    "gpu-out-of-memory": [
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=278 error=2 : out of memory",
    ],
    # transformers 4.34-4.35 modeling_utils.py _check_and_enable_flash_attn_2
    "flash-attn-not-installed": [
        "ImportError: Flash Attention 2 is not available. Please refer to the documentation of "
        "https://github.com/Dao-AILab/flash-attention for installing it. Make sure to have at least the version 2.1.0",
    ],
    # xformers 0.0.12-0.0.16 AttentionOpDispatch.op / ops/fmha/dispatch.py _dispatch_fw
    "xformers-no-cuda-ops": [
        "NotImplementedError: No operator found for this attention: AttentionOpDispatch(dtype=torch.float16, "
        "device=device(type='cuda', index=0), k=40, has_dropout=False, attn_bias_type=None, kv_len=4096)",
    ],
    # deepspeed op_builder/sparse_attn.py is_compatible appended by builder.py jit_load;
    # transformers 4.26-4.36's bitsandbytes environment check
    "dependency-version-mismatch": [
        "RuntimeError: Unable to JIT load the sparse_attn op due to it not being compatible due to "
        "hardware/software issue. sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.1",
        "ImportError: Using `load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest "
        "version of bitsandbytes `pip install -i https://test.pypi.org/simple/ bitsandbytes` or pip install "
        "bitsandbytes`",
    ],
    # torch/csrc/distributed/c10d/socket.cpp on Windows: the Winsock error WSAEADDRINUSE (10048)
    "rendezvous-port-in-use": [
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
        "failed to bind to [::]:29500 (system error: 10048 - Only one usage of each socket address "
        "(protocol/network address/port) is normally permitted.).",
    ],
    # vllm/platforms/__init__.py vllm_version_matches_substr
    "python-package-not-installed": [
        "WARNING 03-15 15:15:41 [__init__.py:26] The vLLM package was not found, so its version could not be "
        "inspected. This may cause platform detection to fail.",
    ],
    # vllm/platforms/__init__.py resolve_current_platform_cls_qualname
    "vllm-platform-plugin-conflict": [
        "RuntimeError: Only one platform plugin can be activated, but got: ['optimum_neuron', 'neuron']",
        "RuntimeError: Only one platform plugin can be activated, but got: ['cuda', 'xpu']",
    ],
}



def _known_limit(msg, wrapper):
    # a hard cut at 80 columns splits 'and < 2.0' ('a' / 'nd < 2.0'), so package-requires-newer-torch's
    # guard against DeepSpeed's range ('>= 1.5 and < 2.0') no longer holds on the re-joined line and
    # its 'requires a torch version >= 1.5' reading (torch too old) ties with this one and comes first
    if wrapper == "terminal-cut-80" and "sparse_attn requires" in msg:
        return "a hard cut inside 'and <' defeats the too-old guard"
    return None


test_version_wordings_head_explain_in_every_wrapper, test_version_wordings_are_matched_by_their_code = \
    family_tests(SWEEP, skip=_known_limit)

test_new_root_is_sourced = sourced_roots_test(["vllm-platform-plugin-conflict"])

# near misses a healthy run prints: they must stay quiet
test_near_misses_stay_quiet = healthy_test([
    # vLLM's platform resolution on a healthy start, and the variable that picks plugins
    "INFO 03-15 15:15:41 [__init__.py:260] No platform detected, vLLM is running on UnspecifiedPlatform",
    "INFO 03-15 15:15:41 [__init__.py:34] Automatically detected platform cuda.",
    "INFO 03-15 15:15:41 [__init__.py:41] Platform plugin neuron is activated",
    "export VLLM_PLUGINS=neuron",
    # DeepSpeed's start notice (the same sentence outside jit_load's error)
    " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.3",
])


def test_the_aten_cuda_stub_on_a_mac_is_cuda_asked_for_on_macos():
    """diffusers on Apple silicon: a CUDA generator asked of a macOS torch (no CUDA in any build)."""
    log = ("RuntimeError: Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into "
           "two shared libraries\nmacOS 14.2 on an Apple M2 Pro\n")
    assert codes_of(log)[:1] == ["cuda-on-macos"]


@pytest.mark.parametrize("line", [
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument",
    "RuntimeError: cuda runtime error (10) : invalid device ordinal at /pytorch/aten/src/THC/THCGeneral.cpp:88",
])
def test_other_thc_statuses_are_not_out_of_memory(line):
    assert "gpu-out-of-memory" not in codes_of(line + "\n")[:1]


def test_flash_attention_on_cpu_keeps_its_own_reading():
    """4.3x's 'Flash Attention 2 is not available on CPU' is a CUDA question, not a missing package."""
    line = ("ValueError: Flash Attention 2 is not available on CPU. Please make sure torch can access a CUDA "
            "device.\n")
    assert "flash-attn-not-installed" not in codes_of(line)[:1]


def test_the_old_8bit_check_ranks_a_torch_without_cuda():
    """is_bitsandbytes_available() was False without CUDA too: a CPU torch in the log names it."""
    line = SWEEP["dependency-version-mismatch"][1] + "\n"
    assert [c.code for c in explain_text("torch 2.0.1+cpu\n" + line).candidates[:1]] == ["torch-cpu-only-build"]
    # the control: without the CPU torch line it is only one possible cause, not the headline
    assert [c.code for c in explain_text(line).candidates[:1]] != ["torch-cpu-only-build"]


def test_the_vllm_metadata_warning_gives_way_to_a_stated_cause():
    warn = SWEEP["python-package-not-installed"][0] + "\n"
    assert codes_of(warn + "ImportError: libcuda.so.1: cannot open shared object file: No such file or "
                           "directory\n")[:1] == ["libcuda-missing"]
    assert codes_of(warn + SWEEP["vllm-platform-plugin-conflict"][0] + "\n")[:1] == [
        "vllm-platform-plugin-conflict"]


def test_the_vllm_metadata_warning_explains_the_undetected_platform():
    log = (SWEEP["python-package-not-installed"][0] + "\n"
           "INFO 03-15 15:15:41 [__init__.py:260] No platform detected, vLLM is running on UnspecifiedPlatform\n"
           "RuntimeError: Failed to infer device type, please set the environment variable "
           "`VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.\n")
    assert codes_of(log)[:1] == ["python-package-not-installed"]


def test_sparse_attn_below_its_range_is_torch_too_old():
    """DeepSpeed 0.3-0.5 refused torch < 1.5 with the same builder: the existing torch-too-old reading."""
    line = ("RuntimeError: Unable to JIT load the sparse_attn op due to it not being compatible due to "
            "hardware/software issue. sparse_attn requires a torch version >= 1.5 but detected 1.4\n")
    assert codes_of(line)[:1] == ["torch-too-old-for-package"]


def test_nvml_timeout_is_no_broken_nvml():
    """NVML_ERROR_TIMEOUT is 'User provided timeout passed' (nvml.h): nvmlEventSetWait's wait ended
    with no event. The raise site names no cause in the stack, so no root is stated for it."""
    expl = explain_text("pynvml.NVMLError_Timeout: Timeout\n")
    assert not [c for c in expl.candidates if c.confidence == "stated"]


def test_other_windows_socket_errors_are_not_the_port_in_use():
    """10049 (WSAEADDRNOTAVAIL: a host name that is not this machine's) is no port taken by another job."""
    line = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket "
            "has failed to bind to [myhost]:29500 (system error: 10049 - The requested address is not valid in "
            "its context.).\n")
    assert "rendezvous-port-in-use" not in codes_of(line)[:1]
