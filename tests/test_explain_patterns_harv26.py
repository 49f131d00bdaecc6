"""harv26: an unbiased harvest scored blind, and the general fixes its misses ask for (docs/dev/harv26.md).

Ten new training-side logs sampled in search order (not by family); explain named five first
before any change. The misses that the log itself can fix:
- Ollama's GPU discovery refusing the GPUs on a CPU without AVX (A1, silent before):
  ``cpu-instruction-set-unsupported``;
- jax's CUDA backend over a jaxlib built without GPU support, whose xla_extension lacks
  ``GpuAllocatorConfig`` (C1: the generic ``cuda-init-failed`` was first):
  ``framework-cpu-only-build``;
- 'no kernel image' printed by a program's own CUDA source file (a bare ``name.cu:LINE``) read
  as torch's wheel (C2): ``extension-arch-missing``.
Each message is the program's own text (ollama discover/gpu.go, jax xla_bridge over xla.cc) or a
training-side thread's paste, run through the wrappers pasted logs put around lines, with
near-misses that must stay unread or keep their own cause.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "cpu-instruction-set-unsupported": [
        # ollama discover/gpu.go slog.Warn as the server log prints it (ollama/ollama#7585)
        'time=2024-11-09T18:44:42.976+08:00 level=WARN source=gpu.go:252 msg="CPU does not have minimum vector '
        'extensions, GPU inference disabled. Required:avx Detected:no vector extensions"',
        # the later fmt.Errorf form, two spaces before Required
        "CPU does not have minimum vector extensions, GPU inference disabled.  Required:avx  Detected:no vector extensions",
        # ollama 0.1.2x gpu/gpu.go, through journald's prefix
        'Feb 22 23:00:37 centos ollama[372779]: time=2024-02-23T23:00:37.256+08:00 level=WARN source=gpu.go:128 '
        'msg="CPU does not have AVX or AVX2, disabling GPU support."',
    ],
    "framework-cpu-only-build": [
        # jax/_src/xla_bridge.py's INFO line over a CPU-only jaxlib (google-research/maxim#32)
        "I1025 08:07:07.369699 139768635004736 xla_bridge.py:357] Unable to initialize backend 'cuda': "
        "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'",
        # the logging module's form
        "INFO:jax._src.xla_bridge:Unable to initialize backend 'cuda': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'",
        # the 'gpu' platform name of older jax
        "Unable to initialize backend 'gpu': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_ollama_log_without_the_warning_names_no_cpu_cause():
    # the INFO line of cpu_common.go alone only reports the CPU's variant; and a log that shows
    # the runner loading says nothing about instructions
    assert "cpu-instruction-set-unsupported" not in _codes('level=INFO source=cpu_common.go:18 msg="CPU has AVX2"\n')
    assert "cpu-instruction-set-unsupported" not in _codes(
        "llama_model_load: vocab only - skipping tensors\n"
        '[GIN] 2024/11/09 - 18:52:17 | 200 |   54.7176227s |       127.0.0.1 | POST     "/v1/chat/completions"\n')


def test_rocm_twin_of_the_jaxlib_line_is_no_finding():
    # every CPU-only jaxlib prints it for ROCm; on its own it is noise, not a CUDA failure
    codes = _codes("INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': "
                   "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'\n")
    assert "cuda-init-failed" not in codes and "framework-cpu-only-build" not in codes


def test_real_cuda_backend_failure_stays_cuda_init():
    # a CUDA jaxlib whose backend fails for a driver reason keeps the generic code
    codes = _codes("Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA\n")
    assert codes[:1] == ["cuda-init-failed"]


def test_maxim_log_names_cpu_only_jaxlib_first():
    text = ("I1025 08:07:07.369448 139768635004736 xla_bridge.py:357] Unable to initialize backend 'tpu_driver': "
            "NOT_FOUND: Unable to find driver in registry given worker: \n"
            "I1025 08:07:07.369699 139768635004736 xla_bridge.py:357] Unable to initialize backend 'cuda': "
            "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'\n"
            "I1025 08:07:07.369804 139768635004736 xla_bridge.py:357] Unable to initialize backend 'rocm': "
            "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'\n"
            "W1025 08:07:07.371087 139768635004736 xla_bridge.py:364] No GPU/TPU found, falling back to CPU. "
            "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
    assert _codes(text)[:1] == ["framework-cpu-only-build"]


def test_no_kernel_image_from_a_programs_own_cu_file_is_the_extensions():
    # shouxieai/tensorRT_Pro#162: the project's CUDA check names its own source file
    text = ("[error][simple_yolo.cu:556]:launch failed: no kernel image is available for execution on the device\n"
            "[error][simple_yolo.cu:450]:launch failed: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # the MSVC-style line number
    text = "ProgramCU.cu(1571) : cudaSafeCall() Runtime API error 209: no kernel image is available for execution on the device.\n"
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_no_kernel_image_under_torchs_own_cu_path_stays_torch():
    # torch's messages name its .cu files by their path: that is torch's wheel, not an extension
    text = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu:19 error=209\n")
    assert _codes(text)[:1] == ["torch-arch-not-supported"]
    assert _codes("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[:1] == [
        "torch-arch-not-supported"]
