"""apps26 (issue 8): explain's leftovers: torch's device-count warning cut before its text, bare NCCL
results, nvcc's temporary files on a full disk, vLLM's missing custom ops, and the ranking of a
specific message over a generic one on the same line.

Real text: pytorch c10/cuda/CUDAFunctions.cpp device_count_impl, default branch (``"Unexpected error
from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that
might have already set an error? Error ", err, ": ", cudaGetErrorString(err)``), repeated by
c10's device_count() as ``TORCH_WARN("CUDA initialization: ", ex.msg())`` and shown by
torch/cuda/__init__.py as a UserWarning.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.numbers import read_numbers, read_wrapped


def answer(text: str):
    return explain_text(text if text.endswith("\n") else text + "\n")


def codes(rep):
    return [c.code for c in rep.candidates]


#: the NCCL tests are about base rates (tests/conftest.py switches them off elsewhere)
USES_PRIORS = True

PREFIXES = ["", "[rank0]: ", "2024-05-01 10:00:00,123 ", "(Worker pid=4242) ", "> "]

# -- 1. torch's device-count warning with its "Error N" cut before the text -----------------------

TORCH_Q = ("Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
           "NumCudaDevices() that might have already set an error?")
WARN = "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: " + TORCH_Q

#: number -> the code torch's full line (with cudaGetErrorString's text) is answered by. None: the
#: symptom `cuda-init-failed` (999, "unknown error") whose first cause is the priors' pick among the
#: training threads that showed the line (nvidia_uvm missing or broken after suspend, or the symptom
#: itself on a tie): the cut line must answer as the whole line does and keep the symptom in the list.
CUT = [(46, "cuda-devices-unavailable"), (804, "cuda-forward-compat-unsupported"),
       (802, "fabric-manager-not-running"), (803, "driver-library-mismatch"), (999, None),
       (34, "libcuda-stub-loaded"), (35, "driver-too-old-for-torch"), (2, "address-space-limit")]


_UNKNOWN_ERROR_FIRST = {"cuda-init-failed", "nvidia-uvm-missing", "nvidia-uvm-broken-after-suspend"}


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("number,code", CUT)
def test_torchs_device_count_error_cut_before_its_text_is_read_by_its_number(number, code, prefix):
    rep = answer(f"{prefix}{WARN} Error {number}")
    if code is None:
        from stackpeel.explain.numbers import lookup
        whole = answer(f"{WARN} Error {number}: {lookup('cudaError', number)[1]}")
        assert rep.exit_code == 1 and codes(rep)[:1] == codes(whole)[:1], (number, codes(rep), codes(whole))
        assert "cuda-init-failed" in codes(rep) and codes(rep)[0] in _UNKNOWN_ERROR_FIRST, codes(rep)
        return
    assert rep.exit_code == 1 and codes(rep)[:1] == [code], (number, codes(rep))


@pytest.mark.parametrize("number,code", CUT)
def test_the_cut_line_answers_as_torchs_whole_line_does(number, code):
    from stackpeel.explain.numbers import lookup
    text = lookup("cudaError", number)[1]
    whole = answer(f"RuntimeError: {TORCH_Q} Error {number}: {text}")
    cut = answer(f"RuntimeError: {TORCH_Q} Error {number}")
    assert codes(cut)[:1] == codes(whole)[:1], (codes(cut), codes(whole))
    assert codes(cut)[0] in (_UNKNOWN_ERROR_FIRST if code is None else {code}), codes(cut)


@pytest.mark.parametrize("text", [
    WARN + "\nError 46",                      # the terminal wrapped before "Error"
    WARN + " Error\n46",                      # ... or between "Error" and its number
    WARN + "\n  Error 46 (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)",
    "`" + WARN + " Error 46`",                # quoted in backticks
    "I get this: " + TORCH_Q + " Error 46 every time",
])
def test_wrapped_quoted_and_triggered_variants(text):
    rep = answer(text)
    assert codes(rep)[:1] == ["cuda-devices-unavailable"], codes(rep)


def test_the_number_is_read_as_torch_prints_it():
    assert read_numbers(TORCH_Q + " Error 46").endswith(
        "Error 46: CUDA-capable device(s) is/are busy or unavailable")
    assert read_wrapped(WARN, "Error 804") == "Error 804: forward compatibility was attempted on non supported HW"
    assert read_wrapped(WARN + " Error", "804") == "804: forward compatibility was attempted on non supported HW"


@pytest.mark.parametrize("line,after", [
    # the text is there already: left as it is
    (TORCH_Q + " Error 46: all CUDA-capable devices are busy or unavailable", None),
    # a user's own question, not torch's: no number read
    ("Did you set an error? Error 46 in my script", None),
])
def test_a_number_torch_already_named_or_no_torch_question_is_left(line, after):
    assert read_numbers(line) == line


@pytest.mark.parametrize("prev,nxt", [
    (WARN, "Error 46: all CUDA-capable devices are busy or unavailable"),   # the text came with it
    (WARN, "46"),                                                            # a number, no "Error"
    (WARN + " Error", "Error 46"),
    ("Did you set an error?", "Error 46"),                                   # not torch's question
    (WARN + " and more words", "Error 46"),                                  # the question is not at the end
])
def test_wrapped_negative_controls(prev, nxt):
    assert read_wrapped(prev, nxt) is None


def test_a_near_miss_line_stays_quiet():
    rep = answer("Did you run some functions before? I set an error? Error 46 happened in my script")
    assert "cuda-devices-unavailable" not in codes(rep), codes(rep)


# -- 2. NCCL's bare results: the base rate speaks only for the result the line names ---------------

#: NCCL src/nccl.h.in ncclResult_t and ncclGetErrorString, as torch (NCCLUtils.hpp), vLLM
#: (pynccl_wrapper.py NCCL_CHECK) and users print them
NOT_SHM = [
    "NCCL error 1",                                      # ncclUnhandledCudaError, by number
    "ncclUnhandledCudaError",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "NCCL error 3",                                      # ncclInternalError
    "ncclInternalError",
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, "
    "NCCL version 2.7.8",
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, internal error, NCCL version 2.7.8",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled "
    "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
    "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "NCCL error 4",                                      # ncclInvalidArgument: silent before
    "ncclInvalidArgument",
    "RuntimeError: NCCL error: invalid argument (run with NCCL_DEBUG=WARN for details)",
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("line", NOT_SHM)
def test_a_bare_nccl_cuda_or_internal_error_is_the_symptom_with_its_causes(line, prefix):
    rep = answer(prefix + line)
    top = rep.candidates[0]
    # a failed CUDA call or an internal error: /dev/shm's size (ncclSystemError) is no base-rate answer
    assert top.code == "nccl-error" and top.kind == "symptom", (line, codes(rep))
    assert "nccl-shm-too-small" not in codes(rep)[:1]
    assert top.could_be, top


def test_unhandled_cuda_error_lists_the_causes_a_cuda_call_inside_nccl_has():
    top = answer("ncclUnhandledCudaError").candidates[0]
    for cause in ("nccl-p2p-blocked", "driver-library-mismatch", "nccl-release-bug"):
        assert cause in top.could_be, top.could_be


@pytest.mark.parametrize("line", [
    "NCCL error 2",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, "
    "NCCL version 2.14.3",
    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
])
def test_a_bare_system_error_keeps_the_shm_base_rate_as_a_low_confidence_guess(line):
    top = answer(line).candidates[0]
    assert (top.code, top.confidence, top.basis) == ("nccl-shm-too-small", "low", "prior"), top


def test_a_line_naming_the_shm_failure_still_names_it_whatever_the_result():
    rep = answer("NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)\n"
                 "RuntimeError: NCCL error in: x.cpp:12, unhandled cuda error, NCCL version 2.7.8")
    assert codes(rep)[0] == "nccl-shm-too-small" and rep.candidates[0].basis == "signature", codes(rep)


def test_the_retold_results_do_not_read_other_words():
    # "internal error" of something else than NCCL: no nccl-error
    rep = answer("RuntimeError: internal error, please retry (version 2.1)")
    assert "nccl-error" not in codes(rep), codes(rep)


# -- 3. nvcc's temporary files on a full temporary directory ---------------------------------------

#: reproduced with CUDA 13.0's nvcc, TMPDIR on a small tmpfs (knowledge: toolchain.toml nvcc-temp-file-no-space)
NVCC_FULL_TMP = [
    "<built-in>: fatal error: when writing output to /tmp/tmpxft_00002847_00000000-5_k.cpp4.ii: "
    "No space left on device",
    "<built-in>: fatal error: when writing output to /tmp/a26full/tmpxft_000029d5_00000000-9_k.cpp1.ii: "
    "Invalid argument",
    "/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/driver_types.h(2582): catastrophic error: error while "
    "writing generated C++ file: No space left on device",
    "src/operator/quantization/./.././../common/../operator/mxnet_op.h(772): catastrophic error: error while writing "
    "generated C file: No space left on device",
    "/tmp/ccweilyW.s: Fatal error: can't write 253 bytes to section .text of /tmp/tmpxft_00002d7b_00000000-11_k.o: "
    "'No space left on device'",
    "ptxas fatal   : Internal error: writing file",
    # gcc's own ccXXXXXX.s, already read, next to the tmpxft stub it compiles
    "/tmp/tmpxft_00005cb9_00000000-4_THCTensorSortByte.cudafe1.stub.c:1046:27: fatal error: error writing to "
    "/tmp/cc2mYx0T.s: No space left on device",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", NVCC_FULL_TMP)
def test_nvccs_temporary_files_on_a_full_tmp_name_the_temporary_directory(line, prefix):
    rep = answer(prefix + line)
    assert codes(rep)[:1] == ["temp-dir-unusable"], (line, codes(rep))


def test_nvccs_line_wrapped_and_quoted():
    rep = answer("<built-in>: fatal error: when writing output to /tmp/tmpxft_00002847_00000000-5_k.cpp4.ii:\n"
                 "No space left on device\ncompilation terminated.")
    assert codes(rep)[:1] == ["temp-dir-unusable"], codes(rep)
    rep = answer("the build stops with `catastrophic error: error while writing generated C++ file: No space left on "
                 "device` every time")
    assert codes(rep)[:1] == ["temp-dir-unusable"], codes(rep)


@pytest.mark.parametrize("line,not_code", [
    # an output that is not nvcc's temporary file: a full disk, not the temporary directory
    ("<built-in>: fatal error: when writing output to build/k.ii: No space left on device", "temp-dir-unusable"),
    # nvcc's temporary name in an ordinary build line: no failure at all
    ("tmpxft_00004328_00000000-7_mincu-tests.cudafe1.cpp", "temp-dir-unusable"),
    ("ptxas info    : Used 40 registers, 49152 bytes smem, 396 bytes cmem[0]", "temp-dir-unusable"),
])
def test_nvcc_temp_file_negative_controls(line, not_code):
    assert not_code not in codes(answer(line)), codes(answer(line))


# -- 4. a library's custom op never registered (vLLM's torch.ops._C) -------------------------------

OPS = [
    "AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'",
    "AttributeError: '_OpNamespace' '_C' object has no attribute 'silu_and_mul'",
    "ERROR 05-01 10:06:50 [engine.py:448] '_OpNamespace' '_C' object has no attribute 'silu_and_mul'",
    "AttributeError: '_OpNamespace' '_C_cache_ops' object has no attribute 'reshape_and_cache_flash'",
    # vLLM 0.5's hint_on_error
    "ERROR 08-29 09:26:38 _custom_ops.py:36] Error in calling custom op rms_norm: '_OpNamespace' '_C' object has no "
    "attribute 'rms_norm'",
    "ERROR 08-29 09:26:38 _custom_ops.py:36] Possibly you have built or installed an obsolete version of vllm.",
    # retold without torch's first quotes
    "I get _OpNamespace '_C' object has no attribute 'rms_norm' when serving",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", OPS)
def test_an_unregistered_custom_op_is_the_symptom_with_its_causes(line, prefix):
    rep = answer(prefix + line)
    top = rep.candidates[0]
    assert top.code == "custom-ops-not-registered" and top.kind == "symptom", (line, codes(rep))
    assert set(top.could_be) >= {"extension-torch-mismatch", "library-missing", "kernel-extension-not-built",
                                 "module-shadowed"}, top.could_be


@pytest.mark.parametrize("warning,cause", [
    ("WARNING 06-24 21:44:48 _custom_ops.py:14] Failed to import from vllm._C with ImportError('libcudart.so.12: "
     "cannot open shared object file: No such file or directory')", "library-missing"),
    ("WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/local/lib/"
     "python3.8/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c10"
     "11DispatchKeyEEPKcj')", "extension-torch-mismatch"),
])
def test_vllms_import_warning_names_the_cause_before_the_symptom(warning, cause):
    rep = answer(warning + "\n[rank0]: AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'")
    assert codes(rep)[:2] == [cause, "custom-ops-not-registered"], codes(rep)


@pytest.mark.parametrize("line", [
    # torch's own namespaces: not a library's extension
    "AttributeError: '_OpNamespace' 'aten' object has no attribute 'foo'",
    "AttributeError: '_OpNamespace' 'prims' object has no attribute 'bar'",
    # another object's missing attribute
    "AttributeError: 'RMSNormGated' object has no attribute 'activation'",
])
def test_other_missing_attributes_are_not_an_unregistered_op(line):
    assert "custom-ops-not-registered" not in codes(answer(line)), codes(answer(line))


# -- 5. a specific text behind a generic wrapper: no longer the wrapper's generic rule alone ---------

@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("line,code", [
    # Triton's gpuAssert ('Triton Error [CUDA]: ' + cuGetErrorString) had only the catch-all symptom
    ("RuntimeError: Triton Error [CUDA]: out of memory", "gpu-out-of-memory"),
    # torch's C10_CUDA_DRIVER_CHECK (c10/cuda/driver_api.h) was read only by resemblance
    ("RuntimeError: CUDA driver error: out of memory", "gpu-out-of-memory"),
    # ggml's device count: cuInit's reservation, as torch's 'cudaGetDeviceCount() ... Error 2: out of memory'
    ("ggml_cuda_init: failed to initialize CUDA: out of memory", "address-space-limit"),
])
def test_the_out_of_memory_text_behind_a_wrapper_is_read(line, code, prefix):
    rep = answer(prefix + line)
    assert codes(rep)[:1] == [code] and rep.candidates[0].basis == "signature", (line, codes(rep))


@pytest.mark.parametrize("line,code", [
    ("RuntimeError: Triton Error [CUDA]: unspecified launch failure", "triton-kernel-failed"),
    ("ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected", "no-nvidia-driver"),
])
def test_other_texts_behind_the_same_wrappers_keep_their_answers(line, code):
    assert codes(answer(line))[:1] == [code], codes(answer(line))


def test_a_run_that_merely_mentions_memory_after_the_wrapper_is_not_an_oom():
    rep = answer("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
    assert "gpu-out-of-memory" not in codes(rep)[:1], codes(rep)


def test_cudas_own_invalid_argument_is_no_nccl_error():
    assert "nccl-error" not in codes(answer("cudaErrorInvalidValue: invalid argument"))
