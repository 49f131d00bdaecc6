"""Harvest harvp: programs' own messages from public issue threads whose cause the thread
established (docs/dev/harvest-harvp.md). Each message is the text the program prints, taken
from its source (cited per line) in the form the thread's user pasted it.

New code: ``container-option-after-image`` (a runtime option written after the image name runs
as the container's command).
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import family_tests, sourced_roots_test, codes_of as _codes

FAMILIES = {
    # the image's CUDA against the host driver (docs/dev/signature-precision.md, 4)
    "driver-too-old-for-build": [
        # libnvidia-container 1.0 printed the parsed condition with spaces (NVIDIA/nvidia-docker#753)
        'docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting '
        'container process caused "process_linux.go:402: container init caused \\"process_linux.go:385: '
        'running prestart hook 1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec '
        'command: [/usr/bin/nvidia-container-cli --load-kmods configure --require=cuda>=9.2 --pid=15437 '
        '/var/lib/docker/overlay2/33e0/merged]\\\\\\\\nnvidia-container-cli: requirement error: '
        'unsatisfied condition: cuda >= 9.2\\\\\\\\n\\\\\\"\\"": unknown.',
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0",
    ],
    "apple-mps-op-unsupported": [
        # aten/src/ATen/native/mps/operations/UnaryOps.mm unary_op TORCH_CHECK_TYPE
        "TypeError: Operation 'abs_out_mps()' does not support input type 'int64' in MPS backend.",
        "TypeError: Operation 'neg_out_mps()' does not support input type 'int64' in MPS backend.",
    ],
    "dependency-version-mismatch": [
        # jaxlib/plugin_support.py
        "/usr/local/lib/python3.12/dist-packages/jaxlib/plugin_support.py:71: RuntimeWarning: JAX plugin "
        "jax_cuda12_plugin version 0.7.2 is installed, but it is not compatible with the installed jaxlib "
        "version 0.7.1, so it will not be used.",
        # setuptools 70 dropped pkg_resources.packaging
        "ImportError: cannot import name 'packaging' from 'pkg_resources' "
        "(/opt/conda/lib/python3.10/site-packages/pkg_resources/__init__.py)",
        "Some time i face this error:ImportError: cannot import name 'packaging' from 'pkg_resources",
    ],
    "rocm-gpu-arch-unsupported": [
        # ollama gpu/amd_windows.go, gpu/amd_linux.go slog.Warn("amdgpu is not supported", ...)
        'time=2024-05-11T10:00:00.000+02:00 level=WARN source=amd_windows.go:95 msg="amdgpu is not supported" '
        'gpu=0 gpu_type=gfx1031 library="C:\\Program Files\\AMD\\ROCm\\5.5\\bin" '
        'supported_types="[gfx1030 gfx1100 gfx1101 gfx1102 gfx906]"',
        'source=amd_linux.go:340 msg="amdgpu is not supported" gpu=0 gpu_type=gfx1032 library=/usr/lib64 '
        'supported_types="[gfx1030 gfx1100 gfx1101 gfx1102]"',
    ],
    "extension-arch-missing": [
        # gpustack's llama-box (a llama.cpp server binary) built without the GPU's architecture
        "Failed to run llama-box with RTX-5090D - CUDA error: no kernel image is available for execution on the device",
    ],
    "gpu-arch-lacks-dtype": [
        # aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK on a bf16 GEMM (opendatalab/MinerU#1508, Tesla M40)
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, "
        "opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, "
        "strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, "
        "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
    ],
    "shared-memory-too-small": [
        # HigherOrderCO/HVM src/hvm.cu: the launch error and its note for GPUs with a small L1/shared memory
        "Failed to launch kernels. Error code: invalid argument.",
        "Note: for now, HVM-CUDA requires a GPU with at least 128 KB of L1 cache per SM.",
    ],
    "container-option-after-image": [
        # the container's /.singularity.d/actions/exec ends in exec "$@" (dash and bash wording)
        "/.singularity.d/actions/exec: 9: exec: --nv: not found",
        "/.singularity.d/actions/run: line 21: exec: -B: not found",
        # runc: an option docker passed to the image as its command
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: "
        "OCI runtime create failed: runc create failed: unable to start container process: "
        'exec: "--gpus": executable file not found in $PATH: unknown.',
    ],
}



def _skip(msg, wrapper):
    # (cuBLAS's call text, word-wrapped at 80 columns with its bfloat16 operand type on a
    # continuation line, is read as its paragraph: parser.soft_wrap_paragraph, session 20)
    return None


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, skip=_skip)

test_new_root_is_sourced = sourced_roots_test(["container-option-after-image"])


def test_a_program_missing_in_the_container_is_no_misplaced_option():
    # the same action script reports a command the image lacks; that is no option after the image
    # (no signature reads it; a resemblance guess to the corpus's log may still name the code)
    assert "container-option-after-image" not in match_codes("/.singularity.d/actions/exec: 9: exec: python: not found")
    assert "container-option-after-image" not in match_codes(
        'exec: "python3": executable file not found in $PATH: unknown.')


def test_other_names_from_pkg_resources_keep_the_generic_reading():
    # only 'packaging' is the setuptools-70 removal; another missing name stays a fallback guess
    codes = _codes("ImportError: cannot import name 'resource_filename' from 'pkg_resources'\n")
    assert codes[:1] in (["dependency-version-mismatch"], [])


def test_a_cuda_requirement_without_a_version_is_not_read():
    assert not {"driver-too-old-for-torch", "driver-too-old-for-build"} & set(_codes("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=\n"))


def test_a_half_precision_gemm_not_supported_stays_a_cublas_failure():
    # only the bfloat16 operand type names the GPU's missing dtype
    codes = _codes("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, "
                   "opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, "
                   "CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`\n")
    assert "gpu-arch-lacks-dtype" not in codes[:1]
