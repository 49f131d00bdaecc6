"""Environment messages harvested from the libraries' own source (harvb), as classes.

Libraries: mmcv / mmengine / mmdet, detectron2, pytorch3d, PyG's extensions (torch_scatter,
torch_sparse, torch_cluster, pyg-lib), spconv and cumm, NVIDIA apex, torchvision and
torchaudio. Each message below is the text the source raises or prints, with its variable
parts filled in as users paste them; docs/dev/harvest-harvb.md lists every message found,
what explain named before and after, and the ones left and why.

The classes this round added or widened:

- a compiled op refusing the GPU because the package was built without CUDA, in each
  package's words (``<Op> is not compiled with GPU support``, ``spconv not compiled with
  cuda``, mmcv's device registry ``<op>_impl: implementation for device cuda:0 not found``,
  cumm's ``you must compile with CUDA first``) -> framework-cpu-only-build;
- the package imports but its compiled part is absent (mmcv-lite, torch_scatter's
  ``Could not find module '_version_cpu'``, pyg-lib's ``Could not find shared library``,
  apex's ``requires cuda extensions`` and ``installed without --X flag``, pytorch3d built
  with PYTORCH3D_NO_EXTENSION, ``cannot import name '_C' from 'detectron2'``)
  -> kernel-extension-not-built;
- a minimum-torch assertion (mmengine, detectron2's setup.py, apex's setup.py)
  -> torch-too-old-for-package;
- pytorch3d's EGL device query, cumm's driver dlopen, nvcc run, NVRTC headers and Windows
  DLL search, detectron2's collect_env ``CUDA_HOME ... - invalid!``;
- torchaudio with no audio I/O backend: a new code, torchaudio-backend-missing.
"""

from __future__ import annotations

import pytest

from test_explain_patterns import assert_sourced_root, family_tests, healthy_test, codes_of as _codes


def _in_traceback(msg: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/user/project/train.py", line 12, in <module>\n'
            "    main()\n"
            '  File "/home/user/project/train.py", line 8, in main\n'
            "    model = build_model(cfg)\n"
            + msg)


def _wrapped_at_60(msg: str) -> str:
    # a terminal or an issue form that breaks long lines
    return "\n".join(msg[i:i + 60] for i in range(0, len(msg), 60))


EXTRA_WRAPPERS = {"traceback": _in_traceback, "wrapped-60": _wrapped_at_60}

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "framework-cpu-only-build": [
        # open-mmlab/mmcv mmcv/ops/csrc/pytorch/deform_conv.cpp, spconv_ops.cpp (AT_ERROR)
        "RuntimeError: DeformConv is not compiled with GPU support",
        "RuntimeError: get_indice_pairs is not compiled with GPU support",
        # open-mmlab/mmcv mmcv/ops/csrc/common/pytorch_device_registry.hpp Dispatch
        "RuntimeError: nms_impl: implementation for device cuda:0 not found.",
        "RuntimeError: roi_align_forward_impl: implementation for device cuda:1 not found.",
        # facebookresearch/detectron2 detectron2/layers/csrc/*/*.h (AT_ERROR)
        "RuntimeError: Detectron2 is not compiled with GPU support!",
        # facebookresearch/pytorch3d pytorch3d/csrc (AT_ERROR), torch_cluster csrc (already matched)
        "RuntimeError: Not compiled with GPU support.",
        "RuntimeError: Not compiled with CUDA support",
        # traveller59/spconv spconv/csrc/hash/core.py, spconv/csrc/sparse/inference.py
        "RuntimeError: spconv not compiled with cuda, don't support cuda",
        "RuntimeError: spconv not built with CUDA",
        "RuntimeError: this function don't support cpu only build.",
        # FindDefinition/cumm include/tensorview/cuda/nvrtc.h
        "RuntimeError: you must compile with CUDA first to use nvrtc program",
        "RuntimeError: you must compile with CUDA first to use NVRTCModule",
    ],
    "kernel-extension-not-built": [
        # open-mmlab/mmcv mmcv/cnn/bricks/transformer.py (the lite package has no ops)
        "UserWarning: Fail to import ``MultiScaleDeformableAttention`` from "
        "``mmcv.ops.multi_scale_deform_attn``, You should install ``mmcv`` rather than "
        "``mmcv-lite`` if you need this module. ",
        # rusty1s/pytorch_scatter torch_scatter/__init__.py, rusty1s/pytorch_sparse torch_sparse/__init__.py
        "ImportError: Could not find module '_version_cpu' in /usr/local/lib/python3.8/dist-packages/torch_scatter",
        "ImportError: Could not find module '_convert_cpu' in /opt/conda/lib/python3.10/site-packages/torch_sparse",
        # pyg-team/pyg-lib pyg_lib/__init__.py load_library
        "UserWarning: Could not find shared library 'libpyg'",
        # NVIDIA/apex apex/optimizers/*.py, apex/contrib/optimizers/fp16_optimizer.py
        "RuntimeError: apex.optimizers.FusedAdam requires cuda extensions",
        "RuntimeError: apex.optimizers.FusedLAMB requires cuda extensions",
        "RuntimeError: FP16_Optimizer requires cuda extensions",
        # NVIDIA/apex apex/contrib/focal_loss/__init__.py, apex/contrib/groupbn/__init__.py
        "apex was installed without --focal_loss flag, apex.contrib.focal_loss is not available",
        "apex was installed without --bnp flag, contrib.groupbn is not available",
        # facebookresearch/pytorch3d setup.py get_extensions (PYTORCH3D_NO_EXTENSION=1)
        "SKIPPING EXTENSION BUILD. PYTORCH3D WILL NOT WORK!",
        # detectron2 / pytorch3d: `from detectron2 import _C` on a tree without its build
        "ImportError: cannot import name '_C' from 'detectron2' (/home/user/detectron2/detectron2/__init__.py)",
        "ImportError: cannot import name '_C' from 'pytorch3d' (/usr/local/lib/python3.10/dist-packages/pytorch3d/__init__.py)",
        # open-mmlab/mmcv mmcv/utils/ext_loader.py load_ext
        "AssertionError: fused_bias_leakyrelu miss in module _ext",
        # traveller59/spconv and FindDefinition/cumm: the pccm-built core_cc extension
        "ModuleNotFoundError: No module named 'spconv.core_cc'",
        "ModuleNotFoundError: No module named 'cumm.core_cc'",
    ],
    "kernel-library-not-installed": [
        # pyg-team/pytorch_geometric torch_geometric/sampler/neighbor_sampler.py
        "ImportError: 'NeighborSampler' requires either 'pyg-lib' or 'torch-sparse'",
    ],
    "torch-too-old-for-package": [
        # open-mmlab/mmengine mmengine/_strategy/base.py, optim/optimizer/amp_optimizer_wrapper.py
        "AssertionError: PyTorch >= 2.0.0 is required to enable torch.compile",
        "RuntimeError: PyTorch>=2.0.0 is required when sets `use_fsdp=True`",
        "AssertionError: `torch.cuda.amp` is only available when pytorch version >= 1.6",
        # facebookresearch/detectron2 setup.py
        "AssertionError: Requires PyTorch >= 1.8",
        # NVIDIA/apex setup.py
        "RuntimeError: --cpp_ext requires Pytorch 1.0 or later, found torch.__version__ = 0.4.1",
        "RuntimeError: Apex requires Pytorch 0.4 or newer.",
    ],
    "dependency-version-mismatch": [
        # open-mmlab/mmcv setup.py
        "RuntimeError: OpenCV >=3 is required but 2.4.9 is installed",
        # mmdet/__init__.py (already matched: the class the taxonomy names)
        "AssertionError: MMCV==1.3.9 is used but incompatible. Please install mmcv>=1.3.17, <=1.8.0.",
    ],
    "egl-device-display-unavailable": [
        # facebookresearch/pytorch3d pytorch3d/renderer/opengl/opengl_utils.py _get_cuda_device
        "RuntimeError: EGL requires a system that supports at least one device.",
        "RuntimeError: EGL sees no available devices.",
        "ValueError: Found 2 CUDA devices, but none with CUDA id 0.",
    ],
    "libcuda-missing": [
        # FindDefinition/cumm include/tensorview/cuda/driver.h CUDADriverWrapper
        "RuntimeError: load CUDA Driver library failed!!! You must install cuda driver first.",
    ],
    "library-missing": [
        # FindDefinition/cumm cumm/__init__.py (Windows)
        "RuntimeError: Can't find cuda libraries, install cuda first.",
    ],
    "nvcc-missing": [
        # FindDefinition/cumm cumm/common.py get_cuda_version
        "RuntimeError: Failed to run nvcc: [Errno 2] No such file or directory: 'nvcc'",
    ],
    "cuda-headers-missing": [
        # FindDefinition/cumm cumm/common.py _get_cuda_include_lib
        "ValueError: can't find cudart include for nvrtc, you must either install cuda to your system "
        "or use nvidia pip package (nvidia-cuda-runtime-cu12)",
    ],
    "torch-cuda-unavailable": [
        # open-mmlab/mmengine amp_optimizer_wrapper.py; NVIDIA/apex fp16_optimizer.py
        "AssertionError: ``AmpOptimizerWrapper`` is only available training on gpu, npu, mlu or musa",
        "SystemError: Cannot use fp16 without CUDA.",
    ],
    "torchaudio-backend-missing": [
        # pytorch/audio torchaudio/_backend/utils.py dispatcher
        "RuntimeError: Couldn't find appropriate backend to handle uri output.wav and format None.",
        "RuntimeError: Couldn't find appropriate backend to handle uri <_io.BytesIO object at 0x7f2a1c0b6f40> and format wav.",
        # pytorch/audio torchaudio/_torchcodec.py
        "ImportError: TorchCodec is required for load_with_torchcodec. Please install torchcodec to use this function.",
        "ImportError: TorchCodec is required for save_with_torchcodec. Please install torchcodec to use this function.",
        # pytorch/audio torchaudio/backend/utils.py (0.x)
        "UserWarning: No audio backend is available.",
        # pytorch/torchcodec _core/ops.py (torchaudio 2.9+ loads audio through it)
        "RuntimeError: Could not load libtorchcodec. Likely causes:",
        # pytorch/audio torio/_extension/utils.py (a fallback wording: alone in the log)
        "RuntimeError: FFmpeg extension is not available.",
    ],
    "extension-torch-mismatch": [
        # pytorch/vision torchvision/extension.py (already matched; kept as the class's guard)
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision "
        "versions are incompatible, or if you had errors while compiling torchvision from source.",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
        "PyTorch has CUDA Version=13.0 and torchvision has CUDA Version=12.8. Please reinstall the torchvision that matches your PyTorch install.",
        "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. "
        "PyTorch has CUDA version 13.0 whereas TorchAudio has CUDA version 12.8.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, wrappers=EXTRA_WRAPPERS)


def test_the_torchaudio_backend_code_is_a_sourced_root():
    entry = assert_sourced_root("torchaudio-backend-missing")
    assert "soundfile" in entry.fix and "torchcodec" in entry.fix


def test_a_cpu_built_op_under_a_real_traceback_is_the_cpu_build():
    log = ("Traceback (most recent call last):\n"
           '  File "tools/train.py", line 242, in <module>\n'
           '  File "/opt/conda/lib/python3.8/site-packages/mmcv/ops/nms.py", line 27, in forward\n'
           "    inds = ext_module.nms(\n"
           "RuntimeError: nms_impl: implementation for device cuda:0 not found.\n")
    assert _codes(log)[:1] == ["framework-cpu-only-build"]


def test_torios_ffmpeg_probe_does_not_outrank_the_real_failure():
    log = ("DEBUG:torio._extension.utils:Failed to load FFmpeg6 extension.\n"
           "DEBUG:torio._extension.utils:FFmpeg extension is not available.\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert _codes(log)[:1] == ["gpu-out-of-memory"]


def test_transformers_own_torch_minimum_stays_its_code():
    log = "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1\n"
    assert _codes(log)[:1] == ["transformers-torch-too-old"]


def test_a_torch_minimum_assert_beats_the_torch_compile_words():
    log = ('  File "/usr/local/lib/python3.8/site-packages/mmengine/_strategy/base.py", line 329, in compile_model\n'
           "AssertionError: PyTorch >= 2.0.0 is required to enable torch.compile\n")
    assert _codes(log)[:1] == ["torch-too-old-for-package"]


# notices the programs handle themselves (printed on working installs): they name no cause
# (explain may still list them as unexplained warnings, so only the candidates are checked)
NOTICES = [
    # pytorch3d setup.py warns about CUB_HOME on every build; CUDA >= 11 bundles CUB
    "UserWarning: The environment variable `CUB_HOME` was not found. NVIDIA CUB is required for compilation "
    "and can be downloaded from `https://github.com/NVIDIA/cub/releases`. You can unpack it to a location of "
    "your choice and set the environment variable `CUB_HOME` to the folder containing the `CMakeListst.txt` file.",
    # pytorch3d renderer/opengl/__init__.py: the OpenGL rasterizer is optional
    "UserWarning: Can't import EGL, not importing MeshRasterizerOpenGL. This might happen if your Python "
    "application imported OpenGL with a non-EGL backend before importing PyTorch3D, or if you don't have "
    "pyopengl installed as part of your Python distribution.",
    "UserWarning: Can't import pycuda.gl, not importing MeshRasterizerOpenGL.",
    # spconv/algo.py: falls back to NVRTC for kernels not prebuilt
    "Can't find algo ConvAlgoDesp(...) in prebuilt. compile with nvrtc...",
    # apex setup.py cross-compile notice, apex/parallel (old) fallback
    "Warning: Torch did not find available GPUs on this system.",
    "Warning:  apex was installed without --cpp_ext.  Falling back to Python flatten and unflatten.",
    # mmengine utils/dl_utils/setup_env.py defaults
    "UserWarning: Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, "
    "to avoid your system being overloaded, please further tune the variable for optimal performance in "
    "your application as needed.",
    # torchvision's optional backends (io/_video_opt.py; io/image.py with an empty reason)
    "UserWarning: video reader based on ffmpeg c++ ops not available",
    # torio probes FFmpeg 6, 5, 4 at debug level
    "DEBUG:torio._extension.utils:Failed to load FFmpeg6 extension.",
    "UserWarning: Failed to load image Python extension: ''If you don't plan on using image functionality "
    "from `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your "
    "environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?",
]


@pytest.mark.parametrize("line", NOTICES)
def test_handled_notices_name_no_cause(line):
    assert _codes("step 1/10\n" + line + "\nstep 2/10\n") == []


# healthy lines with the same words: name nothing and exit 0
test_healthy_lines_name_nothing = healthy_test([
    # detectron2 collect_env, healthy rows
    "detectron2._C                    built",
    "CUDA_HOME                        /usr/local/cuda",
    "GPU available                    Yes",
    # the same words, nothing wrong
    "DeformConv is compiled with GPU support (sm_80, sm_86)",
    "mmcv-full 1.7.1 installed; mmcv rather than mmcv-lite is what we ship",
    "Successfully installed torch-scatter-2.1.2+pt21cu121 torch-sparse-0.6.18+pt21cu121",
    "Requirements: Python >= 3.8 and PyTorch >= 1.8 (see INSTALL.md)",
    "torchaudio backend: soundfile (found), ffmpeg (found)",
    "Found 2 CUDA devices with EGL support",
    "nvcc ran: Cuda compilation tools, release 12.1, V12.1.105",
])
