"""tools31b: exit status 0 is no death; ROCm/HIP wordings; wordings of other releases.

Every line is a message as the library prints it (its raise site is named beside it); each is
read plain, and where it matters wrapped, quoted and prefixed, with a near miss that must stay
unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text, vocabulary

from test_explain_patterns import codes


def top(text):
    c = codes(text)
    return c[0] if c else None


# -- 3. vocabulary `process-died`: exit status 0 is success, never a death

def _died():
    return next(w for w in vocabulary.load().words if w.id == "process-died")


@pytest.mark.parametrize("line", [
    "error: process exited with code 0",
    "Error: subprocess exited with status 0",
    "error: exit status 0",
    "[worker 3] exited with code 0x0",
    "[worker 3] exited with code 0x00000000",
    "Process exited with code 0.",
])
def test_exit_status_zero_is_no_death(line):
    assert not _died().search(line)
    guesses = vocabulary.guess([(1, line, "", 1.0)], {}, {}, vocabulary.load())
    assert all("process-died" not in [w for w, _ in g.words] for g in guesses)


@pytest.mark.parametrize("line", [
    "error: process exited with code 137",
    "error: process exited with code -9",
])
def test_a_sigkill_exit_status_still_reads_as_a_death(line):
    assert _died().search(line)
    guesses = vocabulary.guess([(1, line, "", 1.0)], {}, {}, vocabulary.load())
    assert any("process-died" in [w for w, _ in g.words] for g in guesses)


@pytest.mark.parametrize("line", [
    # tools42: an exit status speaks only for what it can mean. 1 is the program's own failure (no
    # code of process-died's); a Windows status and a signal other than SIGKILL read their own names
    # (explain.numbers: STATUS_ACCESS_VIOLATION, SIGSEGV), which other words read
    "error: process exited with code 1",
    "error: process exited with code 0xC0000005",
    "error: process exited with code 0x0000000B",
    "Error: subprocess exited with status 139",
])
def test_an_exit_status_other_than_sigkill_is_no_death_word(line):
    assert not _died().search(line)


# -- 1. the ROCm/HIP wordings of failures the knowledge base reads in CUDA words, and tools31's two
#    unread model-loading lines. Each runs through every wrapper of test_explain_patterns.WRAPPERS
#    (rank and logging prefixes, quotes, markdown, 80-column wraps)

from test_explain_patterns import codes_of, family_tests, healthy_test  # noqa: E402

FAMILIES = {
    # torch's hipified C10_CUDA_CHECK: 'HIP error: ' + hipGetErrorString (clr hip_error.cpp); older
    # HIP returned the status's name
    "gpu-out-of-memory": [
        "RuntimeError: HIP error: out of memory",
        "RuntimeError: HIP error: hipErrorOutOfMemory",
        # clr rocdevice.cpp: the queue callback when a queue or its scratch does not fit
        "rocdevice.cpp:3583: Aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to "
        "allocate the necessary resources. Available Free mem : 24 MB",

        # hipBLAS's and MIOpen's own allocation status through torch's hipified checks
        "RuntimeError: HIP error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`",
        "RuntimeError: miopenStatusAllocFailed",
    ],
    # rocBLAS tensile_host.cpp: no per-arch library (a build without ROCBLAS_TENSILE_SEPARATE_ARCH
    # falls through to TensileLibrary.dat); its and hipBLASLt's 'No paths matched' warnings are not read
    "rocm-gpu-arch-unsupported": [
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory",
        # already read (hip-no-binary-for-gpu, hip-invalid-device-function): ROCm 3.x's spelling and 2.x's
        "hipErrorNoBinaryForGpu: Coudn't find binary for current devices!",
        "torch.AcceleratorError: HIP error: invalid device function",
    ],
    # rocminfo RET_IF_HSA_ERR after hsa_init: Runtime::Acquire answers OUT_OF_RESOURCES for any load failure
    "rocm-gpu-unavailable": [
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
        "resources. This error may also occur when the core runtime library needs to spawn threads or create "
        "internal OS-specific events.",
    ],
    # the HIP wording of cudaErrorLaunchFailure
    "torch-gpu-op-failed": [
        "RuntimeError: HIP error: unspecified launch failure",
    ],
    # clr rocdevice.cpp Device::callbackQueue with any other HSA status: cause unstated
    "cuda-error-unclassified": [
        ":0:rocdevice.cpp            :2984: 6545699276902 us: [pid:196431 tid:0x7f2301dff640] Callback: Queue "
        "0x7f2301400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to "
        "access memory beyond the largest legal address. code: 0x29",
    ],
    # vllm model_executor/models/registry.py _raise_for_unsupported (0.6+; 0.10+ through pydantic)
    "extension-torch-mismatch": [
        "ValueError: Model architectures ['Qwen2ForCausalLM'] failed to be inspected. Please check the logs for "
        "more details.",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Model "
        "architectures ['Gemma3ForConditionalGeneration'] failed to be inspected. Please check the logs for more "
        "details. [type=value_error, input_value=ArgsKwargs((), {'model': 'google/gemma-3-4b-it'}), "
        "input_type=ArgsKwargs]",
    ],
    # transformers auto_factory.py / tokenization_auto.py
    "model-architecture-unsupported": [
        "ValueError: Unrecognized configuration class <class 'transformers_modules.THUDM.chatglm3-6b."
        "configuration_chatglm.ChatGLMConfig'> to build an AutoTokenizer.",
    ],
}


test_rocm_and_model_wordings_head_explain_in_every_wrapper, test_rocm_and_model_wordings_own_signature = \
    family_tests(FAMILIES)

# near misses: the raise sites' own source lines (an IPython traceback prints them), healthy ROCm lines
@pytest.mark.parametrize("line", [
    '    565     f"Unrecognized configuration class {config.__class__} for this kind of AutoModel: {cls.__name__}.\\n"',
    '            "Unrecognized configuration class {} to build an AutoTokenizer.\\n"',
])
def test_the_raise_sites_source_line_names_no_cause(line):
    assert codes_of(line + "\n") == []


def test_a_config_class_of_transformers_own_is_no_old_release():
    """transformers knows Qwen2VLConfig (5.24 raises this for AutoModelForCausalLM too): the Auto class
    asked is the wrong one, and upgrading transformers would not help."""
    line = ("ValueError: Unrecognized configuration class <class 'transformers.models.qwen2_vl.configuration_qwen2_vl."
            "Qwen2VLConfig'> for this kind of AutoModel: AutoModelForCausalLM.\n")
    assert "model-architecture-unsupported" not in codes(line)[:1]


test_near_misses_stay_quiet = healthy_test([
    "export HSA_OVERRIDE_GFX_VERSION=10.3.0 ROCBLAS_TENSILE_LIBPATH=/opt/rocm/lib/rocblas/library",
    "INFO 03-01 10:00:00 [registry.py:300] Model architectures ['Qwen2ForCausalLM'] inspected in 2.1 s",
])


def test_no_hip_gpus_ranks_both_rocm_causes():
    cand = explain_text("RuntimeError: No HIP GPUs are available\n").candidates[0]
    assert cand.code == "torch-cuda-unavailable"
    assert {"rocm-gpu-arch-unsupported", "rocm-gpu-unavailable"} <= set(cand.could_be)


def test_a_bare_hsa_out_of_resources_names_no_missing_gpu():
    """hsa_status_string's sentence alone (no rocminfo 'Call returned', no queue 'Available Free mem')
    comes from any HSA call: a queue or memory allocation as much as hsa_init."""
    line = ("HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error "
            "may also occur when the core runtime library needs to spawn threads or create internal OS-specific "
            "events.\n")
    assert "rocm-gpu-unavailable" not in codes_of(line)[:1]


def test_hip_statuses_other_than_oom_are_not_out_of_memory():
    for line in ("RuntimeError: HIP error: invalid argument\n", "RuntimeError: HIP error: hipErrorInvalidValue\n"):
        assert "gpu-out-of-memory" not in codes_of(line)


def test_the_inspection_failure_gives_way_to_the_cause_its_subprocess_printed():
    log = ("ERROR 03-01 10:00:00 [registry.py:300] Error in inspecting model architecture 'Qwen2ForCausalLM'\n"
           "Traceback (most recent call last):\n"
           "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: "
           "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n" + FAMILIES["extension-torch-mismatch"][0] + "\n")
    assert codes_of(log)[:1] == ["extension-torch-mismatch"]
    log = ("ModuleNotFoundError: No module named 'mkl'\n" + FAMILIES["extension-torch-mismatch"][0] + "\n")
    assert codes_of(log)[0] != "extension-torch-mismatch"


def test_vllm_unsupported_architecture_keeps_its_reading():
    line = "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: []\n"
    assert codes_of(line)[:1] == ["model-architecture-unsupported"]


# -- 2. the version-drift sweep of the next codes by training-log count: the wordings it found unread

DRIFT = {
    # the signal by name only: torch.multiprocessing spawn (1.x-2.x), CPython CalledProcessError
    # (3.5+), IntelliJ's run console
    "cpu-instruction-set-unsupported": [
        "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGILL",
        "subprocess.CalledProcessError: Command '['python', 'worker.py']' died with <Signals.SIGILL: 4>.",
        "Process finished with exit code 132 (interrupted by signal 4: SIGILL)",
    ],
    # THC's .cuh headers went with THC in torch 1.11
    "extension-source-torch-api-removed": [
        "csrc/cuda/deform_conv_cuda.cu:5:10: fatal error: THC/THCAtomics.cuh: No such file or directory",
        "fatal error: THC/THCDeviceUtils.cuh: No such file or directory",
    ],
    # torch.compiler.is_compiling / is_dynamo_compiling: torch 2.3
    "torch-too-old-for-package": [
        "AttributeError: module 'torch.compiler' has no attribute 'is_compiling'",
    ],
    # NCCL misc/socket.cc ncclFindInterfaceMatchSubnet (with NCCL_COMM_ID)
    "nccl-socket-ifname-wrong": [
        "node1:123:456 [0] misc/socket.cc:484 NCCL WARN Net : No interface found in the same subnet as remote "
        "address 10.0.0.2<34567>",
    ],
}

test_drift_wordings_head_explain_in_every_wrapper, test_drift_wordings_own_signature = family_tests(DRIFT)


@pytest.mark.parametrize("line", [
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGSEGV",
    "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
    "subprocess.CalledProcessError: Command '['python', 'worker.py']' died with <Signals.SIGKILL: 9>.",
])
def test_other_signals_are_no_missing_instruction_set(line):
    assert "cpu-instruction-set-unsupported" not in codes_of(line + "\n")


def test_a_found_interface_is_no_failure():
    line = "node1:123:456 [0] NCCL INFO NET : Found interface eth0:10.0.0.3<0> in the same subnet as remote address 10.0.0.2<34567>\n"
    assert "nccl-socket-ifname-wrong" not in codes_of(line)


@pytest.mark.parametrize("warning", [
    "rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx1032*co. Make sure that "
    "ROCBLAS_TENSILE_LIBPATH is set correctly.",
    "rocblaslt warning: No paths matched /opt/rocm/lib/hipblaslt/library/*gfx1030*co. Make sure that "
    "HIPBLASLT_TENSILE_LIBPATH is set correctly.",
])
def test_the_tensile_path_warning_is_no_cause(warning):
    """Only a warning (hipBLASLt's shows on a supported gfx906 whose run completes, ROCm/hipBLASLt#251):
    a healthy run keeps no cause, and a real error beside it keeps its own."""
    assert "rocm-gpu-arch-unsupported" not in codes(warning + "\nEpoch 1: 100%| 500/500 loss=0.31\n")
    assert codes(warning + "\nTraceback (most recent call last):\n"
                    "ModuleNotFoundError: No module named 'wandb'\n")[:1] != ["rocm-gpu-arch-unsupported"]
