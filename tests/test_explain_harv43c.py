"""harv43c: an unbiased harvest of OCR and document-AI threads (PaddleOCR and PaddlePaddle GPU
builds, PaddleX, MinerU, layout-parser, Pix2Text, OCR training), scored blind, and the general
fixes its misses ask for (docs/dev/harv43c.md).

Twenty new training-side logs; explain named fourteen first before any change. The fixed misses:
- Paddle's own format for a CUDA runtime failure, ``(External) CUDA error(209), no kernel image is
  available for execution on the device`` (phi/core/enforce.h build_nvidia_error_msg), was read as
  torch's wheel (PaddlePaddle/PaddleX#4682: the default cu129 wheel on a GTX 1080); now
  ``framework-gpu-arch-unsupported``;
- PaddleX 3.2's ``PaddlePredictorOption.__init__() takes 1 positional argument but 2 were given``
  under PaddleOCR 3.1 was silent (PaddlePaddle/PaddleOCR#16286); now ``dependency-version-mismatch``;
- layoutparser's lazy module ``module layoutparser has no attribute Detectron2LayoutModel`` (the
  class is registered only when detectron2 imports) was read as a too-old torch
  (Layout-Parser/layout-parser#108); now ``python-package-not-installed``;
- Paddle 0.x's ``[cudnn init] libcudnn v5 with header v7 unmatched!`` was first only as a guess
  from words (PaddlePaddle/Paddle#12965); now a signature of ``cudnn-unusable``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# PaddlePaddle/Paddle paddle/phi/core/enforce.h build_nvidia_error_msg, raised as ExternalError
PADDLE_209 = ("OSError: (External) CUDA error(209), no kernel image is available for execution on the device. \n"
              "  [Hint: 'cudaErrorNoKernelImageForDevice'. This indicates that there is no kernel image available "
              "that is suitable for the device. ] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.cc:251)")
PADDLE_209_OLD = "ExternalError:  Cuda error(209), no kernel image is available for execution on the device."
PADDLE_98 = "OSError: (External) CUDA error(98), invalid device function. "
# PaddlePaddle/PaddleX paddlex/inference/utils/pp_option.py under PaddleOCR 3.1
PREDICTOR_OPTION = "TypeError: PaddlePredictorOption.__init__() takes 1 positional argument but 2 were given"
# PaddlePaddle/Paddle v0.x paddle/cuda/src/hl_cuda_cudnn.cc hl_cudnn_init
CUDNN_UNMATCHED = ("F0613 10:15:03.468956 69692 hl_cuda_cudnn.cc:171] Check failed: (cudnn_cuh_major < 4 && "
                   "cudnn_dso_major < 4) || (cudnn_cuh_major == cudnn_dso_major) [cudnn init] libcudnn v5 with "
                   "header v7 unmatched!")
# Layout-Parser/layout-parser src/layoutparser/file_utils.py _LazyModule.__getattr__
LP_DETECTRON2 = "AttributeError: module layoutparser has no attribute Detectron2LayoutModel"
LP_PADDLE = "AttributeError: module layoutparser has no attribute PaddleDetectionLayoutModel"
LP_TESSERACT = "AttributeError: module layoutparser has no attribute TesseractAgent"

FAMILIES = {
    "framework-gpu-arch-unsupported": [PADDLE_209, PADDLE_209_OLD, PADDLE_98],
    "dependency-version-mismatch": [PREDICTOR_OPTION],
    "cudnn-unusable": [CUDNN_UNMATCHED],
    "python-package-not-installed": [LP_DETECTRON2, LP_PADDLE, LP_TESSERACT],
}



# (a wrap or cut inside Paddle's message, '... execution on' / 'the device.', once read by torch's
# signature alone, reads Paddle's since lead43: explain.numbers no longer names a status whose text's
# start the line holds)
test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_paddlex_title_names_the_paddle_wheel():
    # PaddlePaddle/PaddleX#4682: the title is all the paste holds
    text = ("Please help for GPU installation: OSError: (External) CUDA error(209), no kernel image is "
            "available for execution on the device.\n")
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


def test_torch_no_kernel_image_keeps_torch_reading():
    # torch's own spelling (c10/cuda/CUDAException.h) and its old 'cuda runtime error (48) :' are not Paddle's
    for line in ("RuntimeError: CUDA error: no kernel image is available for execution on the device",
                 "RuntimeError: cuda runtime error (48) : no kernel image is available for execution on the device at /pytorch/aten/src/THC/generic/THCTensorMath.cu:35"):
        assert "paddle-enforce-no-kernel-image" not in _ids(line), line
    text = ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(text)[:1] == ["torch-arch-not-supported"]


def test_paddle_other_cuda_errors_stay_off_the_arch_reading():
    for line in ("OSError: (External) CUDA error(700), an illegal memory access was encountered.",
                 "ExternalError:  Cuda error(35), CUDA driver version is insufficient for CUDA runtime version.",
                 "OSError: (External) CUDA error(2), out of memory."):
        assert "paddle-enforce-no-kernel-image" not in _ids(line), line


def test_paddleocr_paste_names_the_version_pair():
    # PaddlePaddle/PaddleOCR#17181's shape: the traceback from PaddleOCR into PaddleX
    text = (
        '  File "/env/lib/python3.10/site-packages/paddleocr/_models/base.py", line 68, in _create_paddlex_predictor\n'
        "    kwargs = prepare_common_init_args(self._model_name, self._common_args)\n"
        '  File "/env/lib/python3.10/site-packages/paddleocr/_common_args.py", line 72, in prepare_common_init_args\n'
        "    pp_option = PaddlePredictorOption(\n"
        "TypeError: PaddlePredictorOption.__init__() takes 1 positional argument but 2 were given\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_predictor_option_near_misses_stay_quiet():
    for line in ("    pp_option = PaddlePredictorOption(",
                 "TypeError: PaddlePredictorOption.__init__() got an unexpected keyword argument 'foo'",
                 "TypeError: Predictor.__init__() takes 1 positional argument but 2 were given"):
        assert "paddleocr-paddlex-predictor-option" not in _ids(line), line


def test_legacy_cudnn_check_names_cudnn():
    text = (CUDNN_UNMATCHED + "\n"
            "PaddlePaddle Requirement: (header v[2-3] with libcudnn v[2-3]) Or (header v4 with libcudnn v4) "
            "Or (header v5 with libcudnn v5) Or(header v6 with libcudnn v6).\n"
            "*** Check failure stack trace: ***\n")
    assert _codes(text)[:1] == ["cudnn-unusable"]


def test_cudnn_check_near_misses_stay_quiet():
    for line in ("I0613 10:15:01.992686 device: 0, cuDNN Version: 7.0.",
                 "[cudnn init] libcudnn v7 loaded",
                 "libcudnn v5 with header v7"):
        assert "paddle-legacy-cudnn-header-library-unmatched" not in _ids(line), line


def test_layoutparser_colab_traceback_names_the_missing_backend():
    # Layout-Parser/layout-parser#108 (Colab, detectron2 not installed)
    text = (
        "----> 1 model = lp.Detectron2LayoutModel('lp://PubLayNet/faster_rcnn_R_50_FPN_3x/config',\n"
        "/usr/local/lib/python3.7/dist-packages/layoutparser/file_utils.py in __getattr__(self, name)\n"
        "    224             value = getattr(module, name)\n"
        "--> 226             raise AttributeError(f\"module {self.__name__} has no attribute {name}\")\n"
        "AttributeError: module layoutparser has no attribute Detectron2LayoutModel\n"
    )
    assert _codes(text)[:1] == ["python-package-not-installed"]


def test_layoutparser_near_misses_stay_quiet():
    for line in ("AttributeError: module layoutparser has no attribute Layout",
                 "model = lp.models.Detectron2LayoutModel('lp://PubLayNet/faster_rcnn_R_50_FPN_3x/config')",
                 "AttributeError: module 'layoutparser' has no attribute 'Detectron2LayoutModelX'"):
        assert "layoutparser-backend-class-missing" not in _ids(line), line
