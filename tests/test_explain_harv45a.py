"""harv45a: an unbiased harvest of image and video decoding and of computer-vision libraries built
with CUDA outside torch (OpenCV's CUDA modules and DNN CUDA backend, dlib / face_recognition, decord,
torchvision.io, PyAV), scored blind, and the general fixes its misses ask for (docs/dev/harv45a.md).

Fifteen new training-side logs (fourteen in round 1, one in round 3); explain named six of the
first fourteen first before any change, and not the fifteenth. The fixed misses:
- OpenCV's DNN ``OpenCV was not built to work with the selected device. Please check CUDA_ARCH_PTX or
  CUDA_ARCH_BIN``: the build has no kernels for the GPU's compute capability, read as an OpenCV without
  CUDA by the generic ``(-216:No CUDA support)`` pattern (A2, opencv/opencv#18382); now
  ``framework-gpu-arch-unsupported``;
- OpenCV's ``throw_no_cuda`` in a build with CUDA, ``The called functionality is disabled for current
  build or platform``: the CUDA feature was compiled out (A1, opencv/opencv#7344); now
  ``framework-cpu-only-build``;
- ``AttributeError: module 'cv2.cv2' has no attribute 'cudacodec'``: the PyPI opencv wheels carry no
  CUDA modules (A2, opencv/opencv_contrib#3077); now ``framework-cpu-only-build``;
- dlib's ``Error while calling cudaMalloc(...) ... code: 2, reason: out of memory`` (face_recognition's
  cnn detector, dnn_mmod): no reading at all (A1, davisking/dlib#391, #462); now ``gpu-out-of-memory``;
- torchvision's ``PyAV is not installed, and is necessary for the video operations in torchvision``:
  named a torchvision built without video_reader by resemblance (A1, gorkaydemir/track_on#9); now
  ``python-package-not-installed``;
- ``ImportError: DLL load failed: %1 is not a valid Win32 application`` without ``[WinError 193]``
  (Python 3.7 and older on Windows): a DLL for another architecture, read as a missing library (A2,
  PyAV-Org/PyAV#799); now ``library-wrong-format``;
- round 3: PyAV built from source against an older FFmpeg, ``src/av/codec/hwaccel.c:...: error:
  'AV_HWDEVICE_TYPE_D3D12VA' undeclared``: read as a failed extension build (A1, nagadomi/nunif#317);
  now ``dependency-version-mismatch``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from explain_helpers import codes, first
from test_explain_patterns import family_tests, healthy_test, ids as _ids

# opencv/opencv modules/dnn/src/op_cuda.cpp initCUDABackend (opencv/opencv#18382's paste)
OPENCV_DNN_ARCH = ("cv2.error: OpenCV(4.4.0) /home/ycc/opencv-4.4.0/modules/dnn/src/dnn.cpp:2353: error: "
                   "(-216:No CUDA support) OpenCV was not built to work with the selected device. Please check "
                   "CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build configuration. in function 'initCUDABackend'")
# modules/core/include/opencv2/core/private.cuda.hpp throw_no_cuda, HAVE_CUDA branch (4.x and 3.x prints)
OPENCV_COMPILED_OUT = ("OpenCV(4.7.0) /opencv/modules/core/include/opencv2/core/private.cuda.hpp:112: error: "
                       "(-213:The function/feature is not implemented) The called functionality is disabled for "
                       "current build or platform in function 'throw_no_cuda'")
OPENCV_COMPILED_OUT_3 = ("OpenCV Error: The function/feature is not implemented (The called functionality is "
                         "disabled for current build or platform) in throw_no_cuda, file "
                         "/opencv/modules/core/include/opencv2/core/private.cuda.hpp, line 101")
# the PyPI opencv-python / opencv-contrib-python wheels (opencv/opencv_contrib#3077's paste; 4.6+ says 'cv2')
CV2_NO_CUDACODEC = "AttributeError: module 'cv2.cv2' has no attribute 'cudacodec'"
CV2_NO_NVOF = "AttributeError: module 'cv2' has no attribute 'cuda_NvidiaOpticalFlow_1_0'"
# davisking/dlib dlib/cuda/cuda_errors.h CHECK_CUDA (dlib#391 and dlib#462's pastes)
DLIB_OOM_HOST = ("Error while calling cudaMallocHost(&data, new_size*sizeof(float)) in file "
                 "C:\\dlib\\dlib\\dnn\\gpu_data.cpp:181. code: 2, reason: out of memory")
DLIB_OOM = ("RuntimeError: Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file "
            "/home/user/.cache/pip-install-xxga2353/dlib/dlib/cuda/gpu_data.cpp:221. code: 2, reason: out of memory")
# pytorch/vision torchvision/io/video.py (_check_av_available)
TV_NO_PYAV = "ImportError: PyAV is not installed, and is necessary for the video operations in torchvision."
# Windows LoadLibrary ERROR_BAD_EXE_FORMAT as Python 3.7 and older print it (PyAV-Org/PyAV#799)
DLL_NOT_WIN32 = "ImportError: DLL load failed: %1 is not a valid Win32 application."
DLL_NOT_WIN32_38 = "ImportError: DLL load failed while importing _core: %1 is not a valid Win32 application."
# PyAV 14.1 compiled against FFmpeg older than 7.1 (nagadomi/nunif#317's paste; gcc's quotes vary by locale)
PYAV_FFMPEG_OLD = ("src/av/codec/hwaccel.c:7905:53: error: \u2018AV_HWDEVICE_TYPE_D3D12VA\u2019 undeclared (first use "
                   "in this function); did you mean \u2018AV_HWDEVICE_TYPE_D3D11VA\u2019?")
# the same message as gcc prints it in the C locale (ASCII quotes)
PYAV_FFMPEG_OLD_ASCII = ("src/av/codec/hwaccel.c:7905:53: error: 'AV_HWDEVICE_TYPE_D3D12VA' undeclared (first use "
                         "in this function); did you mean 'AV_HWDEVICE_TYPE_D3D11VA'?")

FAMILIES = {
    "framework-gpu-arch-unsupported": [OPENCV_DNN_ARCH],
    "framework-cpu-only-build": [OPENCV_COMPILED_OUT, OPENCV_COMPILED_OUT_3, CV2_NO_CUDACODEC, CV2_NO_NVOF],
    "gpu-out-of-memory": [DLIB_OOM_HOST, DLIB_OOM],
    "python-package-not-installed": [TV_NO_PYAV],
    "library-wrong-format": [DLL_NOT_WIN32, DLL_NOT_WIN32_38],
    "dependency-version-mismatch": [PYAV_FFMPEG_OLD, PYAV_FFMPEG_OLD_ASCII],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)



def test_opencv_without_cuda_keeps_its_reading():
    # the sibling message of the same status: an OpenCV built without CUDA at all
    line = ("cv2.error: OpenCV(4.4.0) C:\\opencv\\modules\\core\\include\\opencv2/core/private.cuda.hpp:106: error: "
            "(-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'")
    assert first(line) == "framework-cpu-only-build"
    assert "opencv-dnn-cuda-build-lacks-device-arch" not in _ids(line)


def test_face_recognition_traceback_names_the_memory():
    # ageitgey/face_recognition#257's shape: the cnn detector on a large image
    text = (
        '  File "/usr/lib/python3.6/site-packages/face_recognition/api.py", line 95, in _raw_face_locations\n'
        "    return cnn_face_detector(img, number_of_times_to_upsample)\n"
        + DLIB_OOM + "\n"
    )
    assert codes(text)[:1] == ["gpu-out-of-memory"]


def test_dlib_other_cuda_codes_are_not_memory():
    # code 35 (the driver older than the runtime) and 98 (invalid device function) are other causes
    for line in (
        "RuntimeError: Error while calling cudaGetDevice(&the_device_id) in file /home/user/dlib/dlib/dnn/gpu_data.cpp:178. "
        "code: 35, reason: CUDA driver version is insufficient for CUDA runtime version",
        "RuntimeError: Error while calling cudaOccupancyMaxPotentialBlockSize(&num_blocks,&num_threads,K) in file "
        "dlib/cuda/cuda_utils.h:164. code: 98, reason: invalid device function",
    ):
        assert "dlib-check-cuda-out-of-memory" not in _ids(line), line
        assert first(line) != "gpu-out-of-memory", line
    line = ("RuntimeError: Error while calling cudaGetDevice(&the_device_id) in file /home/user/dlib/dlib/dnn/gpu_data.cpp:178. "
            "code: 35, reason: CUDA driver version is insufficient for CUDA runtime version")
    assert first(line) == "driver-too-old-for-build"


def test_video_reader_backend_keeps_its_code():
    # the sibling message: PyAV is there, torchvision's own decoder is not
    line = "UserWarning: video_reader video backend is not available"
    assert "torchvision-pyav-not-installed" not in _ids(line)
    text = ("RuntimeError: video_reader video backend is not available. Please compile torchvision from source "
            "and try again\n")
    assert codes(text)[:1] == ["torchvision-video-backend-not-built"]


def test_near_misses_stay_quiet():
    for line, sig in (
        # the same words for OpenCL and highgui in OpenCV: not a CUDA feature
        ("OpenCV Error: The function/feature is not implemented (The called functionality is disabled for current "
         "build or platform) in ocl2mat, file superres/src/frame_source.cpp", "opencv-cuda-feature-compiled-out"),
        ("module 'cv2' has no attribute 'Mat'", "opencv-pip-wheel-no-cuda-modules"),
        ("AttributeError: module 'cv2' has no attribute 'cudaArithm'", "opencv-pip-wheel-no-cuda-modules"),
        ("cv2.cuda.getCudaEnabledDeviceCount() = 1", "opencv-pip-wheel-no-cuda-modules"),
        ("Error while calling cudaMalloc(&data, n) in file cuda_data_ptr.cpp:58. code: 20, reason: out of memory?",
         "dlib-check-cuda-out-of-memory"),
        ("pip install av  # PyAV is needed for torchvision.io.read_video", "torchvision-pyav-not-installed"),
        ("[setUpNet] selected device: CUDA (NVIDIA GeForce RTX 2060, compute capability 7.5)",
         "opencv-dnn-cuda-build-lacks-device-arch"),
        # another package's C source, and a PyAV source error that is not an FFmpeg name
        ("src/torchaudio/ffmpeg.c:12:5: error: 'AV_HWDEVICE_TYPE_D3D12VA' undeclared", "pyav-source-build-ffmpeg-too-old"),
        ("src/av/codec/hwaccel.c:7905:53: error: 'my_local_var' undeclared", "pyav-source-build-ffmpeg-too-old"),
    ):
        assert sig not in _ids(line), line


test_healthy_lines_name_nothing = healthy_test([
    "NVIDIA CUDA:                   YES (ver 11.2, CUFFT CUBLAS NVCUVID FAST_MATH)",
    "    NVIDIA GPU arch:             75 86",
    "dlib.DLIB_USE_CUDA = True, dlib.cuda.get_num_devices() = 1",
    "Successfully installed av-12.0.0 opencv-contrib-python-4.10.0.84",
    "torchvision.set_video_backend('pyav')",
])
