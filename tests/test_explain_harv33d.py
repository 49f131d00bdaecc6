"""harv33d: an eighteenth unbiased harvest (other frameworks on the same GPU stack: TensorFlow,
JAX, PaddlePaddle, MXNet, ONNX Runtime, CuPy/PyCUDA, Numba, RAPIDS, OpenCV), scored blind, and
the general fixes its two misses ask for (docs/dev/harv33d.md).

Sixteen new training-side logs; explain named fourteen first before any change. The fixed misses:
- A1, a program's own message not covered: TensorFlow 0.6-1.x logs
  ``I tensorflow/stream_executor/cuda/cuda_dnn.cc:NNNN] Unable to load cuDNN DSO`` after its
  dso_loader could not open libcudnn.so[.N] / cudnn64_N.dll: cuDNN of the major version TF was
  built for is not on the loader's path (tensorflow/tensorflow#62: cuDNN v3 installed, v2
  needed). It is ``cudnn-unusable``; explain had no signature for it.
- C2, a symptom plus the configuration fact that decides it: ``export
  CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8`` makes CUDA_HOME a ':'-list that Numba
  (numba/cuda/cuda_paths.py) and torch's cpp_extension read as one directory, so libNVVM is
  not found there (``OSError: libnvvm.so: cannot open shared object file``, numba's
  ``libNVVM cannot be found``): ``env-path-unusable`` (numba/numba#9216, gmarkall), not the
  generic ``system-library-missing``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# TensorFlow 0.6 (tensorflow/tensorflow#62), 1.0 on Linux and on Windows (cuda_dnn.cc line numbers differ)
TF_DSO_06 = "I tensorflow/stream_executor/cuda/cuda_dnn.cc:1062] Unable to load cuDNN DSO."
TF_DSO_10 = "I tensorflow/stream_executor/cuda/cuda_dnn.cc:3459] Unable to load cuDNN DSO"
TF_DSO_WIN = ("I c:\\tf_jenkins\\home\\workspace\\release-win\\device\\gpu\\os\\windows\\tensorflow\\"
              "stream_executor\\cuda\\cuda_dnn.cc:3517] Unable to load cuDNN DSO")

FAMILIES = {"cudnn-unusable": [TF_DSO_06, TF_DSO_10, TF_DSO_WIN]}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_tensorflow_62_report_names_cudnn_unusable():
    # tensorflow/tensorflow#62 (the reporter's paste)
    text = (
        "I'm getting the following error when I try to run the gpu version.\n\n"
        "I tensorflow/stream_executor/dso_loader.cc:77] LD_LIBRARY_PATH: :/usr/local/cuda-7.0/lib:"
        "/usr/local/cuda-7.0/lib64:/usr/local/cuda-7.0/lib64:/usr/local/lib\n"
        + TF_DSO_06 + "\n"
    )
    assert _codes(text)[:1] == ["cudnn-unusable"]


def test_tensorflow_1x_start_with_dso_loader_line_names_cudnn_unusable():
    # TF 1.0's import banner: dso_loader's line for libcudnn, then cuda_dnn's
    text = (
        ">>> import tensorflow as tf\n"
        "I tensorflow/stream_executor/dso_loader.cc:128] successfully opened CUDA library libcublas.so locally\n"
        "I tensorflow/stream_executor/dso_loader.cc:119] Couldn't open CUDA library libcudnn.so. LD_LIBRARY_PATH: "
        "/usr/local/lib:/usr/local/lib:\n"
        + TF_DSO_10 + "\n"
        "I tensorflow/stream_executor/dso_loader.cc:128] successfully opened CUDA library libcufft.so locally\n"
    )
    assert _codes(text)[:1] == ["cudnn-unusable"]


@pytest.mark.parametrize("text", [
    "I tensorflow/stream_executor/dso_loader.cc:128] successfully opened CUDA library libcudnn.so.5 locally",
    "I tensorflow/stream_executor/cuda/cuda_dnn.cc:428] Loaded cuDNN version 8904",
    "Successfully opened dynamic library libcudnn.so.8",
])
def test_cudnn_loaded_lines_stay_quiet(text):
    assert "cudnn-library-not-loadable" not in _ids(text)
    assert "cudnn-unusable" not in _codes(text)


# --- CUDA_HOME written as a list (context cuda-home-assigned-a-list)

NUMBA_OSERROR = "OSError: libnvvm.so: cannot open shared object file: No such file or directory"
NUMBA_NVVM = "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/miniconda3/lib/python3.10/site-packages/numba/cuda/cudadrv/nvvm.py", line 139, in __new__\n'
    '    inst.driver = open_cudalib("nvvm")\n'
)
FILLER = "$ python train.py\nloading data\nbuilding model\nstep 1\nstep 2\n"


def test_numba_9216_report_names_env_path_unusable():
    # numba/numba#9216 (the reporter's title and the export line the maintainer quoted)
    text = (
        "numba cannot find libnvvm.so <" + NUMBA_OSERROR + ">\n\n"
        "export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8\n"
    )
    assert _codes(text)[:1] == ["env-path-unusable"]


@pytest.mark.parametrize("export", [
    "export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8",
    "export CUDA_HOME=${CUDA_HOME}:/usr/local/cuda",
    'export CUDA_HOME="$CUDA_HOME:/usr/local/cuda-12.1"',
    "> export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8",
    "    CUDA_HOME=$CUDA_HOME:/opt/cuda python -c 'import numba.cuda'",
])
@pytest.mark.parametrize("error", [NUMBA_OSERROR, NUMBA_NVVM])
def test_cuda_home_list_far_from_the_error(export, error):
    text = export + "\n" + FILLER + TRACE + error + "\n"
    assert _codes(text)[:1] == ["env-path-unusable"], _codes(text)


def test_cuda_home_appended_list_next_to_the_error():
    # the other order (CUDA_HOME=/path:$CUDA_HOME) is read on the lines around the error
    text = TRACE + NUMBA_OSERROR + "\nexport CUDA_HOME=/usr/local/cuda-11.8:$CUDA_HOME\n"
    assert _codes(text)[:1] == ["env-path-unusable"]


@pytest.mark.parametrize("export", [
    # one path: a usable CUDA_HOME, the library is missing for another reason
    "export CUDA_HOME=/usr/local/cuda-11.8",
    # PATH and LD_LIBRARY_PATH are lists by design
    "export PATH=$PATH:$CUDA_HOME/bin",
    "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDA_HOME/lib64",
    "export CUDA_HOME_OLD=$CUDA_HOME:/usr/local/cuda",
])
def test_other_assignments_keep_the_library_reading(export):
    text = export + "\n" + TRACE + NUMBA_OSERROR + "\n"
    assert "env-path-unusable" not in _codes(text)[:1], _codes(text)


def test_numba_nvvm_without_the_list_keeps_numba_toolkit():
    text = "export CUDA_HOME=/usr/local/cuda\n" + TRACE + NUMBA_NVVM + "\n"
    assert _codes(text)[:1] == ["numba-cuda-toolkit-unusable"]


def test_cuda_home_list_alone_names_nothing():
    assert _codes("export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-11.8\n") == []


def test_libgl_beside_the_list_keeps_its_own_reading():
    # libGL is read by its own signature (not the loader's catch-all line the refine is on)
    text = ("export CUDA_HOME=$CUDA_HOME:/usr/local/cuda\n" + FILLER
            + "ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n")
    assert _codes(text)[:1] == ["system-library-missing"], _codes(text)


# --- round 2 (found after the fixes): MXNet's own kernels without the GPU's architecture.
# mshadow's MSHADOW_CUDA_POST_KERNEL_CHECK (mshadow/cuda/tensor_gpu-inl.cuh, src/operator/mxnet_op.h):
# CHECK_EQ(err, cudaSuccess) << "Name: " << #x << " ErrStr:" << cudaGetErrorString(err)
MX_OLD = ("Check failed: (err) == (cudaSuccess) Name: mxnet_generic_kernel ErrStr:no kernel image is "
          "available for execution on the device")
MX_18 = ("Check failed: err == cudaSuccess (209 vs. 0) : mxnet_generic_kernel ErrStr:no kernel image is "
         "available for execution on the device")
MX_MAPPLAN = ("mxnet.base.MXNetError: [10:57:16] /work/mxnet/3rdparty/mshadow/mshadow/././././cuda/"
              "tensor_gpu-inl.cuh:110: Check failed: err == cudaSuccess (48 vs. 0) Name: MapPlanKernel "
              "ErrStr:no kernel image is available for execution on the device")

test_mxnet_in_every_wrapper, test_mxnet_own_signature = family_tests(
    {"framework-gpu-arch-unsupported": [MX_OLD, MX_18, MX_MAPPLAN]})


@pytest.mark.parametrize("text", [
    # torch's own wording keeps torch's reading
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    # the same CHECK macro copied into a custom operator outside MXNet (no MXNet word): not MXNet's build
    'Check failed: err == cudaSuccess (48 vs. 0) Name: MemInit,  ErrStr:no kernel image is available for execution on the device',
])
def test_no_kernel_image_without_mxnet_words_is_not_mxnet(text):
    assert _codes(text)[:1] != ["framework-gpu-arch-unsupported"], _codes(text)
