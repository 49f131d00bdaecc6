"""Failure families of the upper layers (issue 8, item 2): torch's CUDA build against the GPU,
c10/ATen's CUDA, cuBLAS and cuDNN errors, compilers and extension builds (cpp_extension, nvcc's
host-compiler check, pip build isolation, DeepSpeed's op builder), Triton, kernel libraries
(torchao, mamba-ssm, apex, vLLM, bitsandbytes, xformers, flash-attn) and transformers' attention
checks.

Every message is real text: the library's own wording where its source prints it (the
``source`` of the signature that matches it names the file), or a line from a public thread of
a *training* repository. Each runs through the wrappers pasted logs put around messages
(tests/test_explain_patterns.py: rank and worker prefixes, logging/glog/vLLM prefixes, docker
compose, Markdown quotes, prose in backticks or quotes, CRLF, word wrap and terminal cut).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "torch-arch-not-supported": [
        # torch/cuda/__init__.py _warn_unsupported_code (torch 2.8+)
        "UserWarning: Found GPU0 NVIDIA GeForce RTX 5090 which is of compute capability (CC) 12.0.",
        "Your installed torch==2.6.0+cu124 does not include kernels for this GPU. Reinstall the same version "
        "against a CUDA build that does, e.g.:",
        "No published PyTorch CUDA builds for release 2.4.1+cu121 support this GPU. Visit "
        "https://pytorch.org/get-started/locally/ to find a compatible release.",
        # _check_capability before torch 2.4 (old_gpu_warn)
        "UserWarning: Found GPU0 NVIDIA GeForce GT 730 which is of cuda capability 3.5.",
        "The minimum cuda capability supported by this library is 3.7.",
        # torch/backends/cudnn/__init__.py: the cuDNN bundled with the wheel drops pre-Turing GPUs
        "RuntimeError: cuDNN version 91100 is not compatible with devices with SM < 7.5. Please install a version "
        "of PyTorch with a compatible cuDNN version.",
    ],
    "cuda-device-side-assert": [
        "RuntimeError: CUDA error: device-side assert triggered",
        "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
        "[5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [194,0,0], thread: [96,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.",
        "torch.AcceleratorError: CUDA error: device-side assert triggered",
        # quoted differently in prose (transformers#1848) and with the quotes lost (MedicalGPT#275)
        "Otherwise you are going to get `Assertion 'srcIndex < srcSelectDimSize' failed`.",
        "Indexing.cu:1146: indexSelectLargeIndex: block: [58,0,0], thread: [21,0,0] Assertion srcIndex < "
        "srcSelectDimSize failed.",
        "../aten/src/ATen/native/cuda/ScatterGatherKernel.cu:365: operator(): block: [0,0,0], thread: [0,0,0] "
        'Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"` failed.',
    ],
    "cublas-call-failed": [
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmStridedBatchedExFix( handle, "
        "opa, opb, m, n, k, (void*)(&falpha), a, CUDA_R_16F, lda, stridea, b, CUDA_R_16F, ldb, strideb, "
        "(void*)(&fbeta), c, CUDA_R_16F, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, "
        "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
    ],
    "cudnn-call-failed": [
        "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
        "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
        "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR",
        "RuntimeError: GET was unable to find an engine to execute this computation",
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
    ],
    "host-compiler-unsupported-by-nvcc": [
        # CUDA include/crt/host_config.h
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions "
        "later than 12 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this "
        "version check; however, using an unsupported host compiler may cause compilation failure or incorrect run "
        "time execution. Use at your own risk.",
        "#error -- unsupported clang version! clang version must be less than 16 and greater than 3.2 . The nvcc "
        "flag '-allow-unsupported-compiler' can be used to override this version check",
        "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/include/crt/host_config.h(153): fatal error C1189: "
        "#error:  -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) "
        "are supported!",
        # torch/utils/cpp_extension.py _check_cuda_version
        "RuntimeError: The current installed version of g++ (13.2.0) is greater than the maximum required version by "
        "CUDA 12.1. Please make sure to use an adequate version of g++ (>=6.0.0, <13.0).",
    ],
    "nvcc-arch-unsupported": [
        "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        "nvcc fatal : Value 'sm_121a' is not defined for option 'gpu-architecture'",
    ],
    "ptxas-arch-unsupported": [
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
        "ptxas /tmp/tmpabc/kernel.ptx, line 5; fatal   : Unsupported .version 8.7; current version is '8.4'",
    ],
    "cuda-headers-missing": [
        "/venv/lib/python3.10/site-packages/torch/include/ATen/cuda/CUDAContext.h:5:10: fatal error: "
        "cuda_runtime_api.h: No such file or directory",
        "csrc/causal_conv1d.cpp:7:10: fatal error: cusparse.h: No such file or directory",
        "fatal error: 'cuda_runtime.h' file not found",
    ],
    "extension-cxx-standard-too-old": [
        # torch/include/torch/csrc/api/include/torch/all.h, torch/include/ATen/ATen.h
        "/venv/lib/python3.10/site-packages/torch/include/torch/csrc/api/include/torch/all.h:4:2: error: #error C++17 "
        "or later compatible compiler is required to use PyTorch.",
        "#error C++17 or later compatible compiler is required to use ATen.",
    ],
    "ninja-missing": [
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)",
    ],
    "no-c-compiler": [
        "RuntimeError: Failed to find C++ compiler. Please specify via CXX environment variable or set "
        "triton.knobs.build.impl.",
        "W0101 12:00:00.000000 1234 torch/utils/cpp_extension.py:606] Error checking compiler version for c++",
        # torch/_inductor/exc.py InvalidCxxCompiler on Linux without g++ names its cause (harvg): the
        # compiler root, as `check` does (toolchain.c_compiler explains kernels.torch_compile)
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: InvalidCxxCompiler: No working C++ "
        "compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')",
    ],
    "extension-build-failed": [
        "error: command '/usr/bin/gcc' failed with exit code 1",
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 2",
        "RuntimeError: Error building extension 'fused_adam'",
        "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
    ],
    "nvcc-missing": [
        # DeepSpeed op_builder/builder.py
        "[WARNING] CUDA_HOME does not exist, unable to compile CUDA op(s)",
    ],
    "env-torch-cuda-arch-list-invalid": [
        "ValueError: Unknown CUDA arch (8.0,8.6) or GPU not supported",
    ],
    "build-isolation-hides-torch": [
        # uv's hint under the failed build (crates/uv-build-frontend/src/error.rs)
        "hint: This error likely indicates that `flash-attn@2.8.1` depends on `torch`, but doesn't declare it as a "
        "build dependency. If `flash-attn` is a first-party package, consider adding `torch` to its "
        "`build-system.requires`. Otherwise, `uv pip install torch` into the environment and re-run with "
        "`--no-build-isolation`.",
        "Caused by: This error likely indicates that flash-attn==2.6.1 depends on torch, but doesn't declare it as a "
        "build dependency.",
    ],
    "libaio-missing": [
        " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.",
        " [WARNING]  async_io: please install the libaio-dev package with apt",
        " [WARNING]  async_io requires the libraries: ['libaio-dev'] but are missing. Can be fixed by: `apt install "
        "libaio-dev`.",
        "AssertionError: Unable to pre-compile async_io",
        "LINK : fatal error LNK1181: cannot open input file 'aio.lib'",
    ],
    "triton-gpu-too-old": [
        "torch._inductor.exc.InductorError: RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be "
        "supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA "
        "Capability >= 7.0, but your device is of CUDA capability 6.0",
    ],
    # the same exception on Windows names its cause: cl.exe is not on PATH (no MSVC environment);
    # torch's check_compiler_exist_windows (recall9) outranks the torch.compile symptom
    "windows-compiler-unusable": [
        "torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.",
    ],
    # Triton's compiler failing inside is a Triton-release problem of its own (kbgrow2)
    "triton-compiler-bug": [
        "RuntimeError: PassManager::run failed",
    ],
    "gpu-arch-lacks-dtype": [
        # bitsandbytes csrc/ops.cu, built without cublasLt for GPUs before Turing
        "ERROR: Your GPU does not support Int8 Matmul!",
    ],
    "triton-cache-unusable": [
        "ImportError: /home/user/.triton/cache/9f3c0b1e2d/cuda_utils.cpython-311-x86_64-linux-gnu.so: failed to map "
        "segment from shared object",
    ],
    "torchao-torch-mismatch": [
        "Skipping import of cpp extensions due to incompatible torch version 2.11.0 for torchao version 0.16.0 "
        "Please see https://github.com/pytorch/ao/issues/2919 for more info",
        "WARNING:torchao:Skipping import of cpp extensions due to incompatible torch version. Please upgrade to "
        "torch >= 2.11.0 (found 2.9.1+cu130).",
        "RuntimeError: No such operator torchao::unpack_tensor_core_tiled_layout",
    ],
    "kernel-extension-not-built": [
        "ModuleNotFoundError: No module named 'selective_scan_cuda'",
        "ModuleNotFoundError: No module named 'amp_C'",
        "ModuleNotFoundError: No module named 'flash_attn_2_cuda'",
        "ModuleNotFoundError: No module named 'vllm._C'",
        "Warning: multi_tensor_applier fused unscale kernel is unavailable, possibly because apex was installed "
        "without --cuda_ext --cpp_ext. Using Python fallback.  Original ImportError was: ModuleNotFoundError(\"No "
        "module named 'amp_C'\")",
    ],
    "extension-torch-mismatch": [
        # CPython's Windows loader for an extension built against another torch or CUDA
        "ImportError: DLL load failed while importing flash_attn_2_cuda: The specified procedure could not be found.",
        "ImportError: DLL load failed while importing selective_scan_cuda: The specified module could not be found.",
    ],
    "flash-attn-arch-unsupported": [
        "ImportError: FlashAttention3 has been toggled on, but it cannot be used due to the following error: "
        "FlashAttention3 requires compute capability >= 9, but found (8, 0) with compute capability 8.x",
        # flash-attention csrc/flash_attn/flash_api.cpp mha_bwd, before and after 2.5.5
        "RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
        # TORCH_CHECK without a message: torch 2.0's SDPA flash kernel, flash-attn 1.x on Volta
        "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be improved? "
        "If so, please report an enhancement request to PyTorch.)",
        "RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.",
        "RuntimeError: FlashAttention backward for head dim 256 with dropout, or head dim 224 with/without dropout "
        "requires A100/A800 or H100/H800",
    ],
    "flash-attn-not-installed": [
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the "
        "package for FlashAttention2 doesn't seem to be installed.",
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
        "FlashAttention2 requires at least version `2.3.3`.",
    ],
    "torch-cuda-unavailable": [
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
        "FlashAttention2 is not available on CPU. Please make sure you are on any of the supported devices: "
        "('cuda', 'xpu', 'npu').",
        "RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` "
        "to turn on verbose logging to help debug the issue.",
    ],
    "xformers-no-cuda-ops": [
        "xFormers was built for:",
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
    ],
    "bitsandbytes-cuda-setup-failed": [
        "CUDA SETUP: Problem: The main issue seems to be that the main CUDA runtime library was not detected.",
        "RuntimeError: Configured CUDA binary not found at /venv/lib/python3.12/site-packages/bitsandbytes/"
        "libbitsandbytes_cuda130.so",
        "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, "
        "8-bit multiplication, and GPU quantization are unavailable.",
        "AttributeError: /opt/conda/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined "
        "symbol: cget_col_row_stats",
    ],
}

test_family_message_in_every_wrapper, test_every_family_message_matches_a_signature_of_its_code = family_tests(FAMILIES)


def test_every_new_signature_names_its_source():
    kb = load_kb()
    for code in FAMILIES:
        for sig in kb.codes[kb.canonical(code)].logs:
            assert sig.source, (code, sig.id)


# -- the cause a line gives, refined by where it is printed ---------------------------------------

PIP_ISOLATED = """\
Collecting flash-attn
  Downloading flash_attn-2.7.4.post1.tar.gz (6.0 MB)
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
  Getting requirements to build wheel: started
  Getting requirements to build wheel: finished with status 'error'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [20 lines of output]
      Traceback (most recent call last):
        File "/venv/lib/python3.11/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 353, in <module>
          main()
        File "/venv/lib/python3.11/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 335, in main
          json_out['return_val'] = hook(**hook_input['kwargs'])
        File "/tmp/pip-build-env-x1y2z3/overlay/lib/python3.11/site-packages/setuptools/build_meta.py", line 334, in get_requires_for_build_wheel
          return self._get_build_requires(config_settings, requirements=[])
        File "<string>", line 22, in <module>
      ModuleNotFoundError: No module named 'torch'
      [end of output]
"""


def test_no_torch_inside_pips_isolated_build_is_build_isolation():
    expl = explain_text(PIP_ISOLATED)
    assert expl.root.code == "build-isolation-hides-torch", [c.code for c in expl.candidates]
    assert "--no-build-isolation" in expl.root.fix


def test_a_failed_requirements_step_without_its_output_points_at_build_isolation():
    """pip's summary alone (the hook's output cut off): the failed 'Getting requirements to build
    wheel' step of a CUDA extension is inferred to be the isolated build, as a guess from context."""
    log = ("  Getting requirements to build wheel did not run successfully.\n"
           "ERROR: Failed building wheel for flash-attn\n")
    expl = explain_text(log)
    assert expl.root.code == "build-isolation-hides-torch" and expl.root.confidence == "inferred"
    assert "extension-build-failed" in expl.root.explains
    # a cause the log names still wins over the guess
    named = explain_text(log + "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA "
                               "install root.\n")
    assert named.root.code == "nvcc-missing"


def test_inductor_wrapper_alone_is_a_symptom_and_its_inner_error_decides():
    wrapper = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    alone = explain_text(wrapper + "AssertionError: something unexpected\n")
    assert alone.root.code == "torch-compile-failed" and alone.root.kind == "symptom"
    assert {"no-c-compiler", "triton-gpu-too-old"} <= set(alone.root.could_be)
    inner = explain_text(wrapper + "RuntimeError: Found Tesla P40 which is too old to be supported by the triton GPU "
                                   "compiler, which is used as the backend. Triton only supports devices of CUDA "
                                   "Capability >= 7.0, but your device is of CUDA capability 6.1\n")
    assert inner.root.code == "triton-gpu-too-old"


DS_REPORT_AND_TORCHAO = (
    " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.\n"
    " [WARNING]  async_io: please install the libaio-dev package with apt\n"
    "async_io ............... [NO] ....... [NO]\n"
    "WARNING:torchao:Skipping import of cpp extensions due to incompatible torch version 2.10.0 for torchao version "
    "0.14.0\n")


@pytest.mark.parametrize("error,first", [
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with "
     "NCCL_DEBUG=INFO for details), NCCL version 2.19.3", "nccl-error"),
    ("RuntimeError: Error building extension 'fused_adam'", "extension-build-failed"),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "torch-arch-not-supported"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda-error-unclassified"),
])
def test_warnings_printed_at_every_start_never_outrank_the_failure(error, first):
    """ds_report's libaio warning and torchao's skip warning appear in logs whose failure is
    elsewhere: they are fallbacks, named only when nothing else in the log is."""
    expl = explain_text(DS_REPORT_AND_TORCHAO + error + "\n")
    assert expl.candidates[0].code == first, [c.code for c in expl.candidates]
    alone = explain_text(DS_REPORT_AND_TORCHAO)
    assert [c.code for c in alone.candidates] == ["libaio-missing", "torchao-torch-mismatch"]
    assert alone.root.confidence == "symptom"


def test_no_torch_in_a_plain_script_stays_torch_not_installed():
    log = ("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import torch\n"
           "ModuleNotFoundError: No module named 'torch'\n")
    assert explain_text(log).root.code == "torch-not-installed"


def test_device_side_assert_with_torchs_hints_is_the_assert_not_the_catch_all():
    """c10's hint lines (CUDA_LAUNCH_BLOCKING, TORCH_USE_CUDA_DSA) come with every CUDA error:
    they name nothing; the assert does."""
    log = ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
           "thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
           "Traceback (most recent call last):\n  File \"train.py\", line 80, in <module>\n    loss.backward()\n"
           "RuntimeError: CUDA error: device-side assert triggered\n"
           "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
           "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    expl = explain_text(log)
    assert [c.code for c in expl.candidates] == ["cuda-device-side-assert"]
    hints = ("CUDA kernel errors might be asynchronously reported at some other API call\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    assert "cuda-device-side-assert" not in {c.code for c in explain_text(hints).candidates}


def test_cublas_failure_ranks_the_library_causes():
    expl = explain_text("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, "
                        "opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, "
                        "CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`\n")
    assert expl.root.code == "cublas-call-failed" and expl.root.kind == "symptom"
    assert "cuda-library-shadowed" in expl.root.could_be
    # the catch-all for bare CUDA errors gives way to it
    assert "cuda-error-unclassified" not in [c.code for c in expl.candidates]


def test_cudnn_not_initialized_stays_cudnn_unusable():
    expl = explain_text("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n")
    assert [c.code for c in expl.candidates][:1] == ["cudnn-unusable"]


def test_vllm_c_import_warning_follows_the_error_it_carries():
    """vLLM logs the import error of its _C module: an undefined torch symbol inside it is the
    torch mismatch; the warning alone is a ranked guess."""
    mismatch = ("WARNING 05-01 12:00:00 [_custom_ops.py:21] Failed to import from vllm._C with ImportError('/venv/"
                "lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')\n")
    assert explain_text(mismatch).root.code == "extension-torch-mismatch"
    alone = explain_text("WARNING 05-01 12:00:00 [_custom_ops.py:21] Failed to import from vllm._C with "
                         "ModuleNotFoundError(\"No module named 'vllm._C'\")\n")
    assert alone.root.code == "kernel-extension-not-built"


def test_proposed_names_are_aliases_of_the_codes_that_meant_them():
    kb = load_kb()
    assert kb.canonical("nvcc-too-old-for-build") == "nvcc-arch-unsupported"
    assert kb.canonical("ptxas-too-old-for-ptx") == "ptxas-arch-unsupported"
    assert kb.canonical("host-compiler-unsupported-by-nvcc") == "host-compiler-unsupported-by-nvcc"
    assert kb.canonical("torchao-torch-mismatch") == "torchao-torch-mismatch"


def test_torchao_built_for_another_torch_is_a_known_bad_combination():
    """torchao's pairing with torch (unsloth PR 6400, AReaL#979): check evaluates it from
    package metadata, and the entry names the code explain gives the warning."""
    from stackpeel.combinations import match_combinations

    ids = [m.combination.id for m in match_combinations({"torchao": "0.16.0", "torch": "2.9.1+cu129"})]
    assert ids == ["torchao-0.16-torch-below-2.10"]
    (m,) = match_combinations({"torchao": "0.14.0", "torch": "2.10.0+cu130"})
    assert m.combination.explains == ("torchao-torch-mismatch",) and m.combination.severity == "degraded"
    assert match_combinations({"torchao": "0.16.0", "torch": "2.10.0+cu130"}) == []
    assert match_combinations({"torchao": "0.14.1", "torch": "2.9.1"}) == []


def test_vllm_without_a_device_ranks_the_environment_causes_by_context():
    err = "RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG`\n"
    plain = explain_text(err)
    assert plain.root.code == "torch-cuda-unavailable" and plain.root.kind == "symptom"
    assert {"no-nvidia-driver", "container-toolkit-missing", "torch-cpu-only-build"} <= set(plain.root.could_be)
    cpu = explain_text("Successfully installed torch-2.6.0+cpu vllm-0.8.3\n" + err)
    # pip's line states the CPU-only build (a fact, explain/facts.py): no longer only inferred from a clue
    assert cpu.root.code == "torch-cpu-only-build" and cpu.root.confidence == "high" and cpu.root.basis == "facts"


# lines that come with failures but name none of these causes (c10's hints, another package's
# undeclared build dependency): whatever else explain says about them, none of these codes
HINTS = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "hint: This error likely indicates that `openai-whisper@20240930` depends on `pkg_resources`, but doesn't declare "
    "it as a build dependency.",
]


@pytest.mark.parametrize("line", HINTS)
def test_hint_lines_name_none_of_these_causes(line):
    codes = {c.code for c in explain_text(line + "\n").candidates}
    assert not codes & (set(FAMILIES) | {"cuda-error-unclassified"}), codes


HEALTHY = [
    "export CUDA_LAUNCH_BLOCKING=1 TORCH_USE_CUDA_DSA=1",
    "Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back to using the "
    "slow distutils backend.",
    "ninja .................. [OKAY]",
    "fused_adam ............. [NO] ....... [OKAY]",
    "pip install --no-build-isolation flash-attn==2.7.4.post1",
    "torch.backends.cudnn.version(): 90100, CUBLAS_WORKSPACE_CONFIG=:4096:8",
    "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
    "Using /root/.cache/torch_extensions/py311_cu121 as PyTorch extensions root...",
    "export TORCH_CUDA_ARCH_LIST='8.0;8.6;9.0+PTX'",
    "torchao 0.16.0 with torch 2.11.0: cpp extensions loaded",
    "Found GPU0 NVIDIA H100 80GB HBM3, compute capability 9.0",
    "model = AutoModelForCausalLM.from_pretrained(name, attn_implementation='flash_attention_2')",
    "Successfully installed ninja-1.11.1.4 mamba-ssm-2.2.4 causal-conv1d-1.5.0.post8",
]


test_healthy_line_names_nothing = healthy_test(HEALTHY)
