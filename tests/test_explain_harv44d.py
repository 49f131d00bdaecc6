"""harv44d: an unbiased harvest of pose estimation, tracking and video understanding threads (SAM 2,
mmpose / mmtrack, AlphaPose, OpenPose, pytracking, SAM-PT, ByteTrack-family trackers, SlowFast /
pytorchvideo), scored blind, and the general fixes its misses ask for (docs/dev/harv44d.md).

Twenty new training-side logs; explain named eleven first before any change. The fixed misses:
- mmdetection 1.x's compiled ops (``make_cuda_ext(name='deform_conv_cuda', ...)``), copied with that
  setup.py into AlphaPose and other repositories, are imported relatively (``from . import
  deform_conv_cuda``): an op never built reads ``cannot import name 'deform_conv_cuda'``, which the
  catch-all read as an API mismatch (A2, MVIG-SJTU/AlphaPose#730: Windows skips the build unless
  force_compile; #898: a CPU-only install); now ``kernel-extension-not-built``;
- Caffe's (and OpenPose's) glog check of a CUDA call, ``Check failed: error == cudaSuccess (2 vs. 0)
  out of memory``, had no signature (A1, CMU-Perceptual-Computing-Lab/openpose#882); now
  ``gpu-out-of-memory``;
- a paste that stops at the traceback frame importing ``torchvision.transforms.functional_tensor``
  (removed in torchvision 0.17) without the error line (B, facebookresearch/pytorchvideo#258); now
  ``dependency-version-mismatch``, as the ``No module named`` line already was.
A second round of two logs, scored blind at the first round's tree, missed one:
- pytracking's Precise RoI Pooling op is a git submodule (``ltr/external/PreciseRoIPooling``); a
  clone without it leaves an empty folder that imports as a namespace package, so the next name
  fails (A1, visionml/pytracking#229); now ``git-submodules-missing``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# MVIG-SJTU/AlphaPose alphapose/models/layers/dcn/deform_conv.py (from . import deform_conv_cuda), Python >= 3.7
DCN_FROM = ("ImportError: cannot import name 'deform_conv_cuda' from 'alphapose.models.layers.dcn' "
            "(e:\\ai\\alphapose-master\\alphapose\\models\\layers\\dcn\\__init__.py)")
# the same import under Python <= 3.6 (no 'from' part)
DCN_PY36 = "ImportError: cannot import name 'deform_conv_cuda'"
# open-mmlab/mmdetection v1.x mmdet/ops/roi_align/roi_align.py (from . import roi_align_cuda)
ROI_ALIGN = "ImportError: cannot import name 'roi_align_cuda' from 'mmdet.ops.roi_align' (/home/u/mmdetection/mmdet/ops/roi_align/__init__.py)"
# BVLC/caffe include/caffe/util/device_alternate.hpp CUDA_CHECK through glog CHECK_EQ (src/caffe/syncedmem.cpp)
CAFFE_OOM = "F1017 07:50:15.537199  5808 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory"
CAFFE_OOM_BARE = "Check failed: error == cudaSuccess (2 vs. 0)  out of memory"
# visionml/pytracking ltr/models/target_classifier/initializer.py with the submodule folder empty / absent
PRROI_EMPTY = "ModuleNotFoundError: No module named 'ltr.external.PreciseRoIPooling.pytorch'"
PRROI_ABSENT = "ModuleNotFoundError: No module named 'ltr.external.PreciseRoIPooling'"

FAMILIES = {
    "kernel-extension-not-built": [DCN_FROM, DCN_PY36, ROI_ALIGN],
    "gpu-out-of-memory": [CAFFE_OOM, CAFFE_OOM_BARE],
    "git-submodules-missing": [PRROI_EMPTY, PRROI_ABSENT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_alphapose_traceback_names_the_unbuilt_op():
    # MVIG-SJTU/AlphaPose#730 (Windows, the ops skipped by setup.py)
    text = (
        "Traceback (most recent call last):\n"
        '  File "scripts/demo_inference.py", line 17, in <module>\n'
        "    from alphapose.models import builder\n"
        '  File "e:\\ai\\alphapose-master\\alphapose\\models\\layers\\dcn\\deform_conv.py", line 9, in <module>\n'
        "    from . import deform_conv_cuda\n"
        + DCN_FROM + "\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_alphapose_cpu_install_question_names_the_unbuilt_op():
    # MVIG-SJTU/AlphaPose#898: the message quoted inside the reporter's sentence
    text = ("I installed alphapose wtih cpu by the step which the file offered.\n"
            "but I encounted the problem,'ImportError: cannot import name 'deform_conv_cuda'\n")
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_a_python_function_ending_in_cuda_keeps_the_api_reading():
    # sageattention's Python function, not a compiled module: still the version mismatch
    line = "ImportError: cannot import name 'sageattn_qk_int8_pv_fp16_cuda' from 'sageattention' (/x/sageattention/__init__.py)"
    assert "mmdet1-style-cuda-op-not-built" not in _ids(line)
    assert _codes(line + "\n")[:1] == ["dependency-version-mismatch"]


def test_op_name_near_misses_stay_quiet():
    for line in ("    from . import deform_conv_cuda",
                 "building 'mmdet.ops.dcn.deform_conv_cuda' extension",
                 "copying build/lib/mmdet/ops/roi_align/roi_align_cuda.cpython-37m-x86_64-linux-gnu.so -> mmdet/ops/roi_align",
                 "ImportError: cannot import name 'deform_conv_cuda_v2'",
                 "ImportError: cannot import name 'nms_cuda_kernel' from 'mypkg'"):
        assert "mmdet1-style-cuda-op-not-built" not in _ids(line), line


def test_openpose_paste_names_the_memory():
    # CMU-Perceptual-Computing-Lab/openpose#882: the glog line split over two lines in the paste
    text = (
        "The demo of 1.3.0 could be successfully finished, but when I ran the 1.4.0, it errored:\n\n"
        "*** Check failure stack trace: ***\n"
        "F1017 07:50:15.537199  5808 syncedmem.cpp:71] \n"
        "Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_caffe_other_cuda_statuses_keep_their_readings():
    # the same glog check with another status is not memory
    for line in ("Check failed: error == cudaSuccess (30 vs. 0)  unknown error",
                 "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable",
                 "Check failed: error == cudaSuccess (100 vs. 0)  no CUDA-capable device is detected",
                 "Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED"):
        assert "glog-cuda-check-out-of-memory" not in _ids(line), line
        assert "gpu-out-of-memory" not in _codes(line + "\n")[:1], line


def test_pytorchvideo_paste_cut_at_the_import_names_the_torchvision_release():
    # facebookresearch/pytorchvideo#258: the paste ends at the frame, without the error line
    text = (
        "## Bugs / Unexpected behaviors\n"
        "```bash\n"
        "    import pytorchvideo.transforms as PV\n"
        '  File "/miniconda/lib/python3.10/site-packages/pytorchvideo/transforms/__init__.py", line 3, in \n'
        "    from .augmix import AugMix  # noqa\n"
        '  File "/miniconda/lib/python3.10/site-packages/pytorchvideo/transforms/augmentations.py", line 9, in \n'
        "    import torchvision.transforms.functional_tensor as F_t\n"
        "```\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]
    # basicsr's form of the same import
    assert "torchvision-functional-tensor-import-line" in _ids(
        "    from torchvision.transforms.functional_tensor import rgb_to_grayscale")


def test_functional_tensor_near_misses_stay_quiet():
    # torchvision 0.15-0.16's own deprecation warning, healthy, and the module's successors
    for line in ("/usr/lib/python3.10/site-packages/torchvision/transforms/functional_tensor.py:5: UserWarning: "
                 "The torchvision.transforms.functional_tensor module is deprecated in 0.15 and will be **removed in 0.17**.",
                 "    import torchvision.transforms._functional_tensor as F_t",
                 "    from torchvision.transforms.functional import rgb_to_grayscale",
                 "    import torchvision.transforms.functional as F"):
        assert "torchvision-functional-tensor-import-line" not in _ids(line), line


def test_preciseroipooling_near_misses_stay_quiet():
    # the installed pip package of the op, and a build of it, are not the empty submodule
    for line in ("ModuleNotFoundError: No module named 'prroi_pool'",
                 "Emitting ninja build file /root/.cache/torch_extensions/_prroi_pooling/build.ninja...",
                 "    from ltr.external.PreciseRoIPooling.pytorch.prroi_pool import PrRoIPool2D",
                 "RuntimeError: Error building extension '_prroi_pooling'"):
        assert "pytracking-preciseroipooling-submodule-empty" not in _ids(line), line
