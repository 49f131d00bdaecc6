"""harv42a: an unbiased harvest of object detection and segmentation toolkits (mmcv / mmdet / mmseg,
detectron2, ultralytics / YOLO, SAM / SAM 2, GroundingDINO, Deformable-DETR and their compiled ops),
scored blind, and the general fixes its misses ask for (docs/dev/harv42a.md).

Twenty new training-side logs; explain named sixteen first before any change. The fixed misses:
- Deformable-DETR's compiled op ``MultiScaleDeformableAttention`` (built by ``sh make.sh`` in
  models/ops and copied under that name into Mask2Former, MaskDINO, DINO ...) not built: the bare
  ``No module named 'MultiScaleDeformableAttention'`` was read as a missing pip package
  (A2, fundamentalvision/Deformable-DETR#22); Mask2Former's copy re-raises it with ``Please compile
  MultiScaleDeformableAttention CUDA op``; now ``kernel-extension-not-built``;
- torch 1.11's ``'Upsample' object has no attribute 'recompute_scale_factor'``: a model pickled
  whole by torch <= 1.10 (YOLOv5-family checkpoints) run on torch 1.11 (A1, wmcnally/kapao#55);
  now ``dependency-version-mismatch``;
- torch's ``Unknown CUDA arch (8.6) or GPU not supported`` with a bare capability in a log that never
  names TORCH_CUDA_ARCH_LIST: torch 1.7 and older take the arch from the visible GPU and refuse one
  newer than their fixed list (C2, JosephKJ/OWOD#43: RTX 3090 with torch 1.6); now
  ``torch-arch-not-supported``, while a log that shows the variable keeps
  ``env-torch-cuda-arch-list-invalid``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# fundamentalvision/Deformable-DETR models/ops/functions/ms_deform_attn_func.py (import MultiScaleDeformableAttention as MSDA)
MSDA_MISSING = "ModuleNotFoundError: No module named 'MultiScaleDeformableAttention'"
# facebookresearch/Mask2Former mask2former/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py
MSDA_MASK2FORMER = "Please compile MultiScaleDeformableAttention CUDA op with the following commands:"
# torch 1.11 torch/nn/modules/upsampling.py Upsample.forward via Module.__getattr__
UPSAMPLE = "AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'"
# torch <= 1.7 torch/utils/cpp_extension.py _get_cuda_arch_flags with TORCH_CUDA_ARCH_LIST unset
ARCH_86 = "ValueError: Unknown CUDA arch (8.6) or GPU not supported"
ARCH_89 = "    raise ValueError(\"Unknown CUDA arch ({}) or GPU not supported\".format(arch))\nValueError: Unknown CUDA arch (8.9) or GPU not supported"

# IDEA-Research/GroundingDINO groundingdino/models/GroundingDINO/ms_deform_attn.py (guarded `from groundingdino
# import _C`; MultiScaleDeformableAttnFunction.forward then calls _C.ms_deform_attn_forward)
GDINO_C = "NameError: name '_C' is not defined"
# torch 2.x torch/utils/cpp_extension.py _check_cuda_version raises RuntimeError(CUDA_MISMATCH_MESSAGE, a, b):
# setuptools prints the tuple, so the message keeps its '(%s)' placeholders
CUDA_MISMATCH_TUPLE = ("RuntimeError: ('\\nThe detected CUDA version (%s) mismatches the version that was used to "
                       "compile\\nPyTorch (%s). Please make sure to use the same CUDA versions.\\n', '12.1', '11.8')")

FAMILIES = {
    "kernel-extension-not-built": [MSDA_MISSING, MSDA_MASK2FORMER, GDINO_C],
    "nvcc-torch-cuda-mismatch": [CUDA_MISMATCH_TUPLE],
    "dependency-version-mismatch": [UPSAMPLE],
    "torch-arch-not-supported": [ARCH_86, ARCH_89],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_deformable_detr_traceback_names_the_unbuilt_op():
    # the traceback Deformable-DETR's main.py prints when models/ops was never compiled
    text = (
        "Traceback (most recent call last):\n"
        '  File "main.py", line 21, in <module>\n'
        "    import datasets\n"
        '  File "/home/u/Deformable-DETR/models/ops/functions/ms_deform_attn_func.py", line 18, in <module>\n'
        "    import MultiScaleDeformableAttention as MSDA\n"
        "ModuleNotFoundError: No module named 'MultiScaleDeformableAttention'\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_mask2former_instruction_names_the_unbuilt_op():
    text = (
        "ModuleNotFoundError: \n\n"
        "Please compile MultiScaleDeformableAttention CUDA op with the following commands:\n"
        "\t`cd mask2former/modeling/pixel_decoder/ops`\n"
        "\t`sh make.sh`\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_ms_deform_attn_near_misses_stay_quiet():
    for line in ("    import MultiScaleDeformableAttention as MSDA",
                 "  [OK] MultiScaleDeformableAttention C extension available",
                 "building 'MultiScaleDeformableAttention' extension",
                 "Successfully installed MultiScaleDeformableAttention-1.0",
                 "ModuleNotFoundError: No module named 'MultiScaleDeformableAttentionV2'"):
        assert "ms-deform-attn-op-not-built" not in _ids(line), line


def test_kapao_paste_names_the_torch_release():
    # wmcnally/kapao#55, the reporter's words around the message
    text = (
        "I got an error when i used latest pytorch 1.11.0. \n"
        "The error : \"Upsample' object has no attribute 'recompute_scale_factor\"\n"
        "AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_yolov5_detect_traceback_names_the_torch_release():
    # ultralytics/yolov5#6948's shape: the warmup forward of a checkpoint pickled by an older torch
    text = (
        "YOLOv5  2022-1-10 torch 1.11.0+cu113 CUDA:0 (NVIDIA GeForce RTX 2060, 6144MiB)\n"
        "Traceback (most recent call last):\n"
        '  File "E:\\condaaa\\lib\\site-packages\\torch\\nn\\modules\\upsampling.py", line 154, in forward\n'
        "    recompute_scale_factor=self.recompute_scale_factor)\n"
        '  File "E:\\condaaa\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1185, in __getattr__\n'
        "    raise AttributeError(\"'{}' object has no attribute '{}'\".format(\n"
        "AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_upsample_near_misses_stay_quiet():
    for line in ("    recompute_scale_factor=self.recompute_scale_factor)",
                 "AttributeError: 'Upsample' object has no attribute 'mode'",
                 "AttributeError: 'Conv' object has no attribute 'recompute_scale_factor'",
                 "            state[\"recompute_scale_factor\"] = True"):
        assert "torch-upsample-pickled-before-1-11" not in _ids(line), line


def test_owod_paste_names_the_old_torch_for_the_gpu():
    # JosephKJ/OWOD#43: torch 1.6 / CUDA 10.2 on an RTX 3090, the variable never set
    text = (
        "I followed your settings:\npython 3.6\ncuda 10.2\nnvcc 10.2\npytorch 1.6.0\n"
        "Then I re-build the detectron2 from the repo, but I got:\n"
        "ValueError: Unknown CUDA arch (8.6) or GPU not supported\n"
    )
    assert _codes(text)[:1] == ["torch-arch-not-supported"]


def test_unknown_arch_with_the_variable_shown_stays_the_variable():
    # bmtrain's paste: the variable printed beside the message keeps the configuration reading
    text = (
        "`ValueError: Unknown CUDA arch (9.0+PTX) or GPU not supported`\n"
        "echo $TORCH_CUDA_ARCH_LIST\n5.2 6.0 6.1 7.0 7.5 8.0 8.6 9.0+PTX\n"
    )
    assert _codes(text)[:1] == ["env-torch-cuda-arch-list-invalid"]
    text = "export TORCH_CUDA_ARCH_LIST=8.9\nValueError: Unknown CUDA arch (8.9) or GPU not supported\n"
    assert _codes(text)[:1] == ["env-torch-cuda-arch-list-invalid"]


def test_unknown_arch_with_a_name_or_list_stays_the_variable():
    # only a setting can put a name, a comma list or a suffix other than a letter in the parentheses
    for line in ("ValueError: Unknown CUDA arch (8.0,8.6) or GPU not supported",
                 "ValueError: Unknown CUDA arch (Blackwell) or GPU not supported",
                 "ValueError: Unknown CUDA arch (all) or GPU not supported"):
        assert _codes(line + "\n")[:1] == ["env-torch-cuda-arch-list-invalid"], line


def test_groundingdino_warning_alone_is_not_a_failure():
    # printed at every start on a CPU-only host; it only counts beside a failure
    ids = _ids("UserWarning: Failed to load custom C++ ops. Running on CPU mode Only!")
    assert "groundingdino-c-ops-warning" in ids
    assert "groundingdino-c-ops-not-loaded" not in ids


def test_c_not_defined_near_misses_stay_quiet():
    for line in ("NameError: name 'C' is not defined", "NameError: name '_Cfg' is not defined",
                 "from torch._C import _cuda_getDeviceCount"):
        assert "groundingdino-c-ops-not-loaded" not in _ids(line)
