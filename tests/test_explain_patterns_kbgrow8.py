"""Issue 8 items 2, 3 and 7 (kbgrow8): what explain missed on 51 fresh training threads of
research-code and extension users (tests/corpus/explain/*.log with
``# collected: training-2026-12-01n``: CUDA extension builds, Triton, JAX/XLA, TensorFlow, ONNX
Runtime, AlphaFold 3, Isaac Gym/Lab, Open3D), fixed by class:

- A package's compiled module is named by how setuptools' CUDAExtension names it (``<pkg>._ext``,
  ``<pkg>._C``, ``<name>_cuda``), whatever the package: mmcv's lite build, OpenFold's attention
  kernel, DCNv2 and detectron2 are one class (kernel-extension-not-built); the research CUDA
  packages code imports and installs separately (gaussian splatting's rasterizer, tiny-cuda-nn,
  PyG's extensions, spconv) are kernel-library-not-installed.
- Packages released together that do not fit each other: OpenMMLab's version guards, Python's
  ``cannot import name X from Y``, pybind11's ``type not registered yet`` (new code
  dependency-version-mismatch).
- A CUDA library older than the framework was built against is a version mismatch, in JAX's and
  XLA's words (``Found cuSOLVER version ..., but JAX was built against``; ``Loaded runtime CuDNN
  library: X but source was compiled with``); a ``std::`` symbol the loader cannot resolve is an
  old libstdc++; ``were compiled with different CUDA versions`` (PyG, torchvision, torchaudio).
- ONNX Runtime's ``not in available provider names`` is the CPU package (the GPU package always
  lists the CUDA provider and fails later, in other words); cumm's ``don't compiled with cuda``.
- Kernel configurations that exceed the register file (ptxas ``Register allocation failed``,
  Triton ``out of resource: threads``, CUDA ``too many resources requested for launch``), a new
  code; Triton kernel libraries that require Ampere; XLA's ``ptxas does not support CC``.
- Build-time messages: tiny-cuda-nn's ``Unknown compute capability`` (no GPU at build time) and
  ``Could not find compatible tinycudann extension`` (built for other GPUs); pip's ``is not
  installable. Neither 'setup.py' nor 'pyproject.toml' found`` (a git submodule not checked out,
  new code); a ``Building wheel ... -`` spinner left running (a source build, new code); gcc's
  ``fatal error: THC/THC.h:`` in any locale.
- Context: a crash that depends on the order of two imports is two copies of a library; a
  segfault in Isaac Gym / Isaac Sim is the Vulkan driver; ``CC 12.0`` is a compute capability,
  not the C compiler variable.

Messages are the programs' own wording (each signature's ``source`` names the file).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "kernel-extension-not-built": [
        # mmcv/utils/ext_loader.py with the lite `mmcv` package (XLearning-SCU/2022-CVPR-AirNet#5)
        "ModuleNotFoundError: No module named 'mmcv._ext'",
        # openfold/utils/kernel/attention_core.py (aqlaboratory/openfold#445)
        "ModuleNotFoundError: No module named 'attn_core_inplace_cuda'",
        # detectron2/layers (built without its extension), DCNv2's setup
        "ImportError: No module named 'detectron2._C'",
        "ModuleNotFoundError: No module named 'models.networks.DCNv2._ext'",
    ],
    "kernel-library-not-installed": [
        "ModuleNotFoundError: No module named 'diff_gaussian_rasterization'",
        "ModuleNotFoundError: No module named 'simple_knn'",
        "ModuleNotFoundError: No module named 'tinycudann'",
        "ModuleNotFoundError: No module named 'torch_scatter'",
    ],
    "dependency-version-mismatch": [
        # mmdet/__init__.py and its siblings (open-mmlab/mmdetection#5803, open-mmlab/mmcv#2236)
        "AssertionError: MMCV==1.3.9 is used but incompatible. Please install mmcv>=[1, 1, 4], <=[1, 2, 0].",
        "AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
        "AssertionError: MMEngine==0.10.3 is used but incompatible. Please install mmengine>=0.4.0, <1.0.0.",
        # Python's import system (traveller59/spconv#367)
        "ImportError: cannot import name 'ConvFwdAndBwdInput' from 'cumm.conv.main'",
        # pybind11/attr.h (traveller59/spconv#337)
        "ImportError: arg(): could not convert default argument 'indice_pair_mask: tv::Tensor' in function "
        "'generate_subm_conv_inds' into a Python object (type not registered yet?)",
    ],
    "torch-too-old-for-package": [
        # pypose/__init__.py: the same guard for torch
        "AssertionError: PyTorch==1.13.1 is used but incompatible. Please install torch>=2.0.",
    ],
    "git-submodules-missing": [
        # pip/_internal/req/constructors.py (graphdeco-inria/gaussian-splatting#2), pip/_internal/pyproject.py
        "ERROR: Directory 'submodules/diff-gaussian-rasterization' is not installable. Neither 'setup.py' nor "
        "'pyproject.toml' found.",
        "ERROR: file:///src/gaussian-splatting/submodules/simple-knn does not appear to be a Python project: "
        "neither 'setup.py' nor 'pyproject.toml' found.",
    ],
    "kernel-exceeds-register-limit": [
        # ptxas through Triton's make_cubin (triton-lang/triton#5017)
        "ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program "
        "with a higher register target",
        # triton/compiler/compiler.py _init_handles
        "triton.runtime.errors.OutOfResources: out of resource: threads, Required: 2048, Hardware limit: 1024. "
        "Reducing block sizes or `num_stages` may help.",
        # cudaGetErrorString(cudaErrorLaunchOutOfResources)
        "RuntimeError: CUDA error: too many resources requested for launch",
    ],
    "framework-cpu-only-build": [
        # onnxruntime_inference_collection.py (Naozumi520/g2pW-Cantonese#1)
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
        "providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        # cumm's tensorview (traveller59/spconv#423)
        "ValueError: /io/include/tensorview/tensor.h(171) don't compiled with cuda",
    ],
    "library-version-mismatch": [
        # jaxlib 0.4.x _version_check (KosinskiLab/AlphaPulldown#237)
        "Unable to initialize backend 'cuda': Found cuSOLVER version 11002, but JAX was built against version "
        "11401, which is newer. The copy of cuSOLVER that is installed must be at least as new as the version "
        "against which JAX was built.",
        "CUDA backend failed to initialize: Found CUDA version 12010, but JAX was built against version 12020, "
        "which is newer. The copy of CUDA that is installed must be at least as new as the version against which "
        "JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        # xla cuda_dnn.cc (jax-ml/jax#16901, conda-forge/jaxlib-feedstock#329)
        "E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was "
        "compiled with: 9.13.1.  CuDNN library needs to have matching major version and equal or higher minor "
        "version.",
    ],
    "libstdcxx-too-old": [
        # the loader for std:: symbols (pyg-team/pytorch_geometric#506)
        "OSError: /envs/pyg/lib/python3.6/site-packages/torch_scatter/scatter_cuda.so: undefined symbol: "
        "_ZNSt13runtime_errorC2EPKc",
        "ImportError: /opt/venv/lib/python3.10/site-packages/spconv/core_cc.so: undefined symbol: "
        "_ZSt28__throw_bad_array_new_lengthv",
    ],
    "extension-arch-missing": [
        # tinycudann/modules.py (NVlabs/tiny-cuda-nn#230)
        "OSError: Could not find compatible tinycudann extension for compute capability 75.",
    ],
    "build-native-arch-without-gpu": [
        # tiny-cuda-nn bindings/torch/setup.py
        "OSError: Unknown compute capability. Specify the target compute capabilities in the "
        "TCNN_CUDA_ARCHITECTURES environment variable or install PyTorch with the CUDA backend to detect it "
        "automatically.",
    ],
    "extension-source-torch-api-removed": [
        # gcc with a localized strerror (PJLab-ADG/DetZero#19), clang's wording
        "src/deform_conv_cuda.cpp:3:10: fatal error: THC/THC.h: \u6ca1\u6709\u90a3\u4e2a\u6587\u4ef6\u6216\u76ee\u5f55",
        "src/tree_filter.cpp:4:10: fatal error: 'THC/THC.h' file not found",
    ],
    "vulkan-driver-libs-missing": [
        # Omniverse Kit in Isaac Lab (isaac-sim/IsaacLab#3792)
        "2025-11-07 10:00:00 [1,234ms] [Error] [gpu.foundation.plugin] No device could be created",
    ],
    "framework-gpu-arch-unsupported": [
        # kernl, nucle, Stable Triton (ELS-RD/kernl#133)
        "RuntimeError: GPU compute capability 8.0 (Ampere) or higher is required to use Kernl",
        "RuntimeError: GPU compute capability 8.0 (Ampere) or higher is required to install nucle",
    ],
    "nvcc-torch-cuda-mismatch": [
        # torch_scatter/__init__.py (rusty1s/pytorch_scatter#187)
        "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA versions. "
        "PyTorch has CUDA version 11.0 and torch_scatter has CUDA version 11.2. Please reinstall the "
        "torch_scatter that matches your PyTorch install.",
    ],
    "extension-torch-mismatch": [
        # torchvision/extension.py, torchaudio/_extension/utils.py
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
        "PyTorch has CUDA Version=13.0 and torchvision has CUDA Version=12.8.",
        "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch "
        "has CUDA version 12.8 whereas TorchAudio has CUDA version 12.9.",
    ],
    "ptxas-arch-unsupported": [
        # xla cuda_asm_compiler.cc (google-deepmind/alphafold3#387)
        "W external/xla/xla/stream_executor/cuda/cuda_asm_compiler.cc:280] Falling back to the CUDA driver for "
        "PTX compilation; ptxas does not support CC 12.0",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_new_codes_are_sourced = sourced_roots_test(
    ["dependency-version-mismatch", "git-submodules-missing", "extension-source-build-slow",
     "kernel-exceeds-register-limit"])


def _ranked(text):
    return [c.code for c in explain_text(text).candidates]


def test_the_gpu_package_failing_to_load_its_libraries_stays_the_libraries():
    """Only the CPU package leaves the CUDA provider out of the available names; the GPU package
    lists it and then fails to create it when its CUDA libraries are missing."""
    gpu_pkg = ("2024-03-05 11:40:14.847815005 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:861 "
               "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference "
               "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure "
               "all dependencies are met.\n")
    assert _ranked(gpu_pkg)[:1] == ["onnxruntime-cuda-libs-missing"]


@pytest.mark.parametrize("log,code", [
    # a providers list without a GPU provider, as scripts print get_available_providers()
    ("\U0001f527 ONNX Runtime Providers:\n  \u2022 ['AzureExecutionProvider', 'CPUExecutionProvider']\n",
     "framework-cpu-only-build"),
    # flash-attn's setup.py falling back, pip's spinner left running
    ("Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
     "flash_attn-2.6.3+cu123torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl\n"
     "Precompiled wheel not found. Building from source...\n", "extension-source-build-slow"),
    ("Building wheels for collected packages: flash-attn\n  Building wheel for flash-attn (setup.py) ... -\n",
     "extension-source-build-slow"),
    ("  Building wheel for causal-conv1d (pyproject.toml) ... |\n", "extension-source-build-slow"),
])
def test_notices_name_their_cause_when_nothing_else_does(log, code):
    expl = explain_text(log)
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    assert expl.exit_code == 1


def test_a_notice_gives_way_to_the_error_that_follows_it():
    """The fallback notices never outrank a real error in the same log."""
    log = ("Precompiled wheel not found. Building from source...\n"
           "      RuntimeError: Error compiling objects for extension\n"
           "      c++: fatal error: Killed signal terminated program cc1plus\n")
    assert _ranked(log)[:1] != ["extension-source-build-slow"]


def test_cc_with_a_version_is_a_compute_capability_not_the_compiler():
    # google-deepmind/alphafold3#570, as the reporter wrote it
    line = ('The problem arises if the default GPU (GPU 0) is a newer card (CC 12.0), as jaxlib 0.4.34 and its '
            'bundled Triton compiler do not support Compute Capability 12.0. This results in a fatal "compute '
            'capability not supported" assertion failure during the initial JAX/Triton compilation phase.\n')
    ranked = _ranked(line)
    assert ranked and ranked[0] == "framework-gpu-arch-unsupported", ranked
    assert "no-c-compiler" not in ranked[:1]
    # CC as the compiler variable is still the compiler's word
    from stackpeel.explain.vocabulary import load as load_vocabulary
    word = next(w for w in load_vocabulary().words if w.id == "c-compiler")
    assert word.search("CC is unset in this shell") == "CC"
    assert word.search("an RTX 5090 (CC 12.0)") is None and word.search("CC8.6") is None


@pytest.mark.parametrize("crash", ["Segmentation fault (core dumped)", "Fatal Python error: Aborted"])
def test_an_import_order_crash_is_two_copies_of_a_library(crash):
    log = ("import open3d as o3d\nimport torch\n" + crash + "\n"
           "To solve this, all I need to do is to swap the order of the imports.\n")
    assert _ranked(log)[:1] == ["library-loaded-twice"]
    # without the order, the crash stays the symptom it is
    assert _ranked(crash + "\n")[:1] == ["native-crash-in-gpu-library"]


def test_a_segfault_in_isaac_gym_is_the_vulkan_driver():
    log = ("python 1080_balls_of_solitude.py\nImporting module 'gym_38' (/isaacgym/python/isaacgym/_bindings/"
           "linux-x86_64/gym_38.so)\nSegmentation fault (core dumped)\n")
    assert _ranked(log)[:1] == ["vulkan-driver-libs-missing"]


def test_torch_own_module_is_not_an_extension():
    # running from torch's source tree, or a broken torch: not a kernel library's extension
    assert "kernel-extension-not-built" not in _ranked("ModuleNotFoundError: No module named 'torch._C'\n")


def test_a_circular_import_is_not_a_version_mismatch():
    line = ("ImportError: cannot import name 'MMDataParallel' from partially initialized module 'mmcv.parallel' "
            "(most likely due to a circular import)\n")
    assert "dependency-version-mismatch" not in match_codes(line)


test_healthy_lines_stay_quiet = healthy_test([
    "Building wheel for flash-attn (setup.py) ... done",
    "  Building wheel for causal-conv1d (pyproject.toml) ... done",
    "Successfully installed mmcv-2.1.0 mmengine-0.10.3",
    "Loading extension module attn_core_inplace_cuda...",
    "['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']",
    "Submodule path 'submodules/diff-gaussian-rasterization': checked out '59f5f77e3ddbac3ed9db93ec2cfe99ed6c5d121d'",
    "Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
    "flash_attn-2.6.3+cu123torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
    "GPU: NVIDIA GeForce RTX 5090, CC 12.0, 32607 MiB",
    "export CC=gcc-12 CXX=g++-12",
    "Registers per thread: 96, shared memory per block: 49152 bytes",
    "import torch first, then open3d (the import order matters on this image)",
])
