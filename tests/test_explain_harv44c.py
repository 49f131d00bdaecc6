"""harv44c: an unbiased harvest of point-cloud and autonomous-driving perception stacks (OpenPCDet and
its forks, CenterPoint, BEVFormer, MinkowskiEngine, spconv/cumm, Pointcept, PointNet++ ops, Open3D),
scored blind, and the general fixes its misses ask for (docs/dev/harv44c.md).

Nineteen new training-side logs; explain named ten first before any change. The fixed misses:
- spconv's two API generations: spconv 1.x exports its layers at the top level and has no
  ``__version__``, spconv 2.x moved them to ``spconv.pytorch`` and exports ``__version__``, so
  ``module 'spconv' has no attribute 'SparseConv3d'`` (code for 1.x on a 2.x install,
  Xharlie/BtcDet#16) and ``... '__version__'`` (pcdet's spconv_utils on a 1.x install,
  open-mmlab/OpenPCDet#1371) are a release pair that does not fit: ``dependency-version-mismatch``;
- CUDA 12's Thrust 2.x no longer includes thrust/execution_policy.h and the algorithm headers
  transitively: ``namespace "thrust" has no member "device"`` (MinkowskiEngine's sources,
  facebookresearch/ConvNeXt-V2#20): ``extension-source-missing-std-include``;
- the compiled ops of point-cloud code bases that only a local build creates: OpenPCDet's
  ``cannot import name 'iou3d_nms_cuda' from 'pcdet.ops.iou3d_nms' (unknown location)``
  (djiajunustc/Voxel-R-CNN#10) and Pointcept's ``No module named 'pointgroup_ops'``
  (Pointcept/Pointcept#122): ``kernel-extension-not-built``;
- ``"<THC/THC.h> no such file or directory"`` quoted by a user (open-mmlab/OpenPCDet#1124):
  ``extension-source-torch-api-removed``;
- ``No matching distribution found for cumm-cu100`` (traveller59/spconv#341): spconv's and cumm's
  CUDA-variant wheels join ``package-no-matching-wheel``'s list.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# spconv 2.x installed, code written for spconv 1.x's top-level API (OpenPCDet before its port, BtcDet)
SPCONV_V1_API = "AttributeError: module 'spconv' has no attribute 'SparseModule'"
SPCONV_V1_CONV = "AttributeError: module 'spconv' has no attribute 'SparseConv3d'"
# spconv 1.x installed, pcdet/utils/spconv_utils.py reads spconv.__version__ (a 2.x attribute)
SPCONV_NO_VERSION = "AttributeError: module 'spconv' has no attribute '__version__'"
# nvcc (EDG) under CUDA 12's Thrust 2.x on MinkowskiEngine's src/3rdparty/concurrent_unordered_map.cuh
THRUST_DEVICE = ('/ConvNeXt-V2/MinkowskiEngine/src/3rdparty/concurrent_unordered_map.cuh(503): '
                 'error: namespace "thrust" has no member "device"')
THRUST_REMOVE_IF = 'src/coordinate_map_gpu.cu(381): error: namespace "thrust" has no member "remove_if"'
# CPython's ImportError for pcdet/ops/iou3d_nms/iou3d_nms_utils.py 'from . import iou3d_nms_cuda' before the build
PCDET_OP = "ImportError: cannot import name 'iou3d_nms_cuda' from 'pcdet.ops.iou3d_nms' (unknown location)"
PCDET_ROIAWARE = ("ImportError: cannot import name 'roiaware_pool3d_cuda' from 'pcdet.ops.roiaware_pool3d' "
                  "(unknown location)")
# Pointcept's models: 'from pointgroup_ops import ballquery_batch_p, bfs_cluster', 'from pointops._C import ...'
POINTGROUP = "ModuleNotFoundError: No module named 'pointgroup_ops'"
POINTOPS_C = "ModuleNotFoundError: No module named 'pointops._C'"
# a user's quote of gcc's message for a torch >= 1.11 build (OpenPCDet#1124)
THC_QUOTED = '`"<THC/THC.h> no such file or directory"` occured when I try to build `OpenPCDet` with `torch1.12`.'
# pip's DistributionNotFound for spconv's CUDA-variant dependency (traveller59/spconv#341)
CUMM_WHEEL = "ERROR: No matching distribution found for cumm-cu100"
SPCONV_WHEEL = ("ERROR: Could not find a version that satisfies the requirement spconv-cu114==2.2.3 "
                "(from versions: 2.1.21, 2.1.25)")

FAMILIES = {
    "dependency-version-mismatch": [SPCONV_V1_API, SPCONV_V1_CONV, SPCONV_NO_VERSION],
    "extension-source-missing-std-include": [THRUST_DEVICE, THRUST_REMOVE_IF],
    "kernel-extension-not-built": [PCDET_OP, PCDET_ROIAWARE, POINTGROUP, POINTOPS_C],
    "extension-source-torch-api-removed": [THC_QUOTED],
    "package-no-matching-wheel": [CUMM_WHEEL, SPCONV_WHEEL],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_pcdet_traceback_names_the_spconv_pair():
    # open-mmlab/OpenPCDet#1371: the reporter's demo run on a spconv 1.x install
    text = (
        " when I want to run  \n"
        "python demo.py --cfg_file cfgs/kitti_models/pointpillar.yaml --ckpt ../pointpillar_7728.pth\n"
        "output:\n"
        ' File "/home/u/OpenPCDet/pcdet/utils/spconv_utils.py", line 4, in <module>\n'
        "    if float(spconv.__version__[2:]) >= 2.2:\n"
        "AttributeError: module 'spconv' has no attribute '__version__'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_spconv_near_misses_stay_quiet():
    # spconv 2.x's own namespace, another module, and a user's own attribute keep their readings
    for line in ("AttributeError: module 'spconv.pytorch' has no attribute 'SparseModule'",
                 "AttributeError: module 'spconv' has no attribute 'my_helper'",
                 "AttributeError: module 'spconvx' has no attribute 'SparseConv3d'",
                 "    class SparseBasicBlock(spconv.SparseModule):",
                 "spconv.__version__ = 2.3.6"):
        assert "spconv-1x-2x-api" not in _ids(line), line


def test_minkowski_build_names_the_missing_thrust_header():
    # facebookresearch/ConvNeXt-V2#20 as pasted
    text = (
        "cd MinkowskiEngine\n"
        "python setup.py install --blas_include_dirs=${CONDA_PREFIX}/include --blas=openblas\n"
        "reported an error:\n\n" + THRUST_DEVICE + "\n\n"
        '1 error detected in the compilation of "/home/u/ConvNeXt-V2/MinkowskiEngine/src/broadcast_gpu.cu".\n'
        "error: command '/usr/local/cuda-12.0/bin/nvcc' failed with exit code 2\n"
    )
    assert _codes(text)[:1] == ["extension-source-missing-std-include"]


def test_thrust_near_misses_stay_quiet():
    # a member Thrust never had is the code's own error; a healthy include line says nothing
    for line in ('error: namespace "thrust" has no member "my_kernel"',
                 "#include <thrust/execution_policy.h>",
                 '    return thrust::count_if(thrust::device, m_hashtbl_values, m_hashtbl_values + m_capacity,'):
        assert "thrust-member-header-not-included" not in _ids(line), line


def test_voxel_rcnn_traceback_names_the_unbuilt_op():
    # djiajunustc/Voxel-R-CNN#10: create_kitti_infos before `python setup.py develop`
    text = (
        '  File "/data/Voxel-R-CNN/pcdet/datasets/augmentor/database_sampler.py", line 5, in <module>\n'
        "    from ...ops.iou3d_nms import iou3d_nms_utils\n"
        '  File "/data/Voxel-R-CNN/pcdet/ops/iou3d_nms/iou3d_nms_utils.py", line 9, in <module>\n'
        "    from . import iou3d_nms_cuda\n" + PCDET_OP + "\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_point_op_near_misses_stay_quiet():
    # a Python name from a known file, a name that is no compiled module, and the healthy import line
    for line in ("ImportError: cannot import name 'iou3d_nms_cuda' from 'pcdet.ops.iou3d_nms' "
                 "(/home/u/OpenPCDet/pcdet/ops/iou3d_nms/__init__.py)",
                 "ImportError: cannot import name 'boxes_iou3d_gpu' from 'pcdet.ops.iou3d_nms' (unknown location)",
                 "    from . import iou3d_nms_cuda",
                 "ModuleNotFoundError: No module named 'pointgroup'",
                 "building 'pointgroup_ops_cuda' extension"):
        assert "point-cloud-cuda-op-not-built" not in _ids(line), line


def test_thc_quoted_near_misses_stay_quiet():
    for line in ("#include <THC/THC.h>", "  -I/usr/lib/python3.8/site-packages/torch/include/THC",
                 '"<THC/THCAtomics.cuh>" found'):
        assert "extension-thc-or-at-check" not in _ids(line), line


def test_spconv_wheel_near_misses_stay_quiet():
    # a package named like spconv's wheels is not one of them; pip's healthy lines say nothing
    for line in ("ERROR: No matching distribution found for spconvnet",
                 "Successfully installed cumm-cu113-0.4.11 spconv-cu113-2.3.6",
                 "Collecting spconv-cu120"):
        assert "pip-no-gpu-package-version" not in _ids(line), line
