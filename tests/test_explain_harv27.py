"""harv27: a second unbiased harvest scored blind, and the general fixes its misses ask for
(docs/dev/harv27.md).

Twenty-six new training-side logs sampled in search order (not by family); explain named
nineteen first before any change. The misses the log itself can fix:
- Ollama's start-up line listing only CPU runners (a build without a GPU runner), which nothing
  read (A1): ``framework-cpu-only-build``;
- 'invalid device function' printed by a program's own CUDA source file named by a path that is
  not torch's (C2: KinFu's ``.../kfusion/src/cuda/tsdf_volume.cu:40``), and the same line in a log
  that shows the project's own CMake/nvcc architecture setting (C2: ``CMAKE_CUDA_ARCHITECTURES``),
  both read as torch's wheel before: ``extension-arch-missing``.
Each message is the program's own text (ollama's runner list as its logs print it, a project's
CUDA check) or a training-side thread's paste, run through the wrappers pasted logs put around
lines, with near-misses that must stay unread or keep their own cause.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "framework-cpu-only-build": [
        # ollama 0.5.x server/routes.go through journald's prefix (ollama/ollama#8349)
        'Jan 14 16:41:34 architect ollama[16241]: time=2025-01-14T16:41:34.306Z level=INFO source=routes.go:1339 '
        'msg="Dynamic LLM libraries" runners=[cpu]',
        # ollama 0.3-0.4 runners/common.go: a source build without the CUDA toolkit lists the cpu variants
        'time=2026-06-04T15:23:45.234Z level=INFO source=common.go:149 msg="Dynamic LLM libraries" '
        'runners="[cpu cpu_avx cpu_avx2]"',
        # ollama 0.1.x llm/payload_common.go: the list inside msg
        'time=2024-03-01T10:00:00.000Z level=INFO source=payload_common.go:139 msg="Dynamic LLM libraries [cpu_avx2 cpu cpu_avx]"',
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_ollama_with_gpu_runners_is_no_cpu_build():
    # the official builds list cuda/rocm runners beside the cpu ones; macOS lists metal; Intel's
    # IPEX-LLM build its own runner: none of them is a CPU-only build
    for runners in ('runners="[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12 rocm_v60102]"',
                    'runners="[cuda_v12_avx rocm_avx cpu cpu_avx cpu_avx2 cuda_v11_avx]"',
                    'runners=[metal]', 'runners=[ipex_llm]'):
        text = f'time=2024-12-02T02:20:21.360Z level=INFO source=common.go:49 msg="Dynamic LLM libraries" {runners}\n'
        assert "framework-cpu-only-build" not in _codes(text), runners
    # the old in-message form with a CUDA runner
    text = 'level=INFO source=payload_common.go:139 msg="Dynamic LLM libraries [rocm_v60000 cpu_avx2 cuda_v11 cpu cpu_avx]"\n'
    assert "framework-cpu-only-build" not in _codes(text)


def test_ollama_cpu_only_log_names_the_build_first():
    # ollama/ollama#8349: the user's sentence and the runner line; nothing else in the log
    text = ("Previously, it run on the GPU by default, but after the update, it run on the CPU.\n\n"
            'Jan 14 16:41:34 architect ollama[16241]: time=2025-01-14T16:41:34.306Z level=INFO '
            'source=routes.go:1339 msg="Dynamic LLM libraries" runners=[cpu]\n')
    assert _codes(text)[:1] == ["framework-cpu-only-build"]


def test_invalid_device_function_from_a_programs_own_cu_path_is_the_extensions():
    # mihaibujanca/dynamicfusion#79: KinFu's CUDA check names its source file by its path
    text = ("./build/bin/dynamicfusion data/umbrella\n"
            "KinFu2 error: invalid device function\t/home/dynamicfusion-master/dynamicfusion/kfusion/src/cuda/tsdf_volume.cu:40\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # a relative path, and a Windows path with the MSVC-style line number
    text = "Error: invalid device function ./Core/src/Cuda/raycast.cu:68\n"
    assert _codes(text)[:1] == ["extension-arch-missing"]
    text = "src\\kernels\\resample.cu(90) : invalid device function\n"
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # quoted, as an issue title puts it
    text = "Failed: Cuda error ./ripserplusplus/ripser++.cu:2371 'invalid device function'\n"
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_invalid_device_function_beside_the_projects_cmake_arch_is_the_extensions():
    # laugh12321/TensorRT-YOLO#74: the project's CUDA check (a .cpp file), and the user's
    # set(CMAKE_CUDA_ARCHITECTURES 89) further down, far from the error line
    text = ("CUDA Error:\n"
            "    File:       TensorRT-YOLO/source/deploy/vision/inference.cpp\n"
            "    Line:       558\n"
            "    Error code: 98\n"
            "    Error text: invalid device function\n"
            "[I] Infering data in images\n"
            "Processing batches   0% -:--:--Segmentation fault (core dumped)\n"
            "```\n\nThe thing I changed in CMakeLists to make the code build\n```bash\n"
            "# cmake_policy(SET CMP0146 OLD)\n\n"
            "# set(CMAKE_CUDA_ARCHITECTURES native)\n"
            "set(CMAKE_CUDA_ARCHITECTURES 89)\n```\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # nvcc flags set by the project's CMake
    text = ('list(APPEND CUDA_NVCC_FLAGS "-gencode;arch=compute_35,code=sm_35")\n'
            "CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]


def test_invalid_device_function_under_torchs_own_paths_stays_torch():
    # torch's own .cu files, by the path of the official wheel and of a site's own torch build:
    # torch's build has no kernels for the GPU
    for path in ("/pytorch/aten/src/THC/generic/THCTensorMath.cu:19",
                 "/home/coulombc/wheels_builder/tmp.17380/python-3.10/torch/aten/src/THC/THCGeneral.cu:31",
                 "..\\aten\\src\\THC\\THCTensorCopy.cu:204"):
        text = f"THCudaCheck FAIL file={path} error=98 : invalid device function\n"
        assert _codes(text)[:1] == ["torch-arch-not-supported"], path
    # torch's build report lists its own -gencode flags: that is not a project's build setting
    text = ("  - NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;-gencode;arch=compute_50,code=sm_50\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] == ["torch-arch-not-supported"]
    # the bare line alone is still torch's
    assert _codes("RuntimeError: CUDA error: invalid device function\n")[:1] == ["torch-arch-not-supported"]


def test_cmake_arch_setting_alone_names_no_arch_cause():
    # a build log that sets the architectures and fails for another reason is not an arch gap
    text = ('-- Using CMAKE_CUDA_ARCHITECTURES="86"\n'
            "nvcc fatal   : Unsupported gpu architecture 'compute_86'\n")
    assert "extension-arch-missing" not in _codes(text)[:1]
