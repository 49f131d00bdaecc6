"""Environment messages of the video, graphics, 3D and simulation GPU stacks (harvm), taken from
their own source: ffmpeg's NVENC/NVDEC code and nv-codec-headers, OpenCV's CUDA and DNN modules,
decord, torchvision's GPU decoder, DALI, nvdiffrast, GLFW, PyOpenGL, tiny-cuda-nn, gsplat, NVIDIA
Warp, Taichi and GPU PhysX (Isaac Gym / Isaac Sim / Isaac Lab; the closed builds' words from
training-side threads). docs/dev/harvest-harvm.md has the table (source file, message, what explain
named before and after).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "nvenc-session-limit": [
        # FFmpeg libavcodec/nvenc.c nvenc_open_session -> nvenc_print_error('%s: %s (%d): %s')
        "[h264_nvenc @ 0x55d0c8a2c8c0] OpenEncodeSessionEx failed: out of memory (10): (no details)",
        "[hevc_nvenc @ 0x5615c5a4b7c0] OpenEncodeSessionEx failed: out of memory (10)",
        "[h264_nvenc @ 0x1f2e3d4c] OpenEncodeSessionEx failed: incompatible client key (21)",
    ],
    "nvidia-video-codec-libs-missing": [
        # FFmpeg/nv-codec-headers include/ffnvcodec/dynlink_loader.h LOAD_LIBRARY ('Cannot load %s')
        "[h264_nvenc @ 0x55d0c8a2c8c0] Cannot load libnvidia-encode.so.1",
        "[h264_cuvid @ 0x55b6f7a2b400] Cannot load libnvcuvid.so.1",
        "[h264_nvenc @ 000001d2c3e4f5a0] Cannot load nvEncodeAPI64.dll",
        # FFmpeg libavcodec/cuviddec.c cuvid_decode_init
        "[hevc_cuvid @ 0x55b6f7a2b400] Failed loading nvcuvid.",
        # NVIDIA/DALI dali/operators/reader/loader/video_loader.h
        "RuntimeError: [/opt/dali/dali/operators/reader/loader/video_loader.h:170] Assert on \"ret\" failed: "
        "Failed to load libnvcuvid.so, needed by the VideoReader operator. If you are running in a Docker "
        "container, please refer to https://github.com/NVIDIA/nvidia-docker/wiki/Usage",
        # TorchCodec's NVCUVIDLoader (the code index's copy of its loader)
        "Failed to load libnvcuvid and resolve required symbols",
    ],
    "gpu-video-codec-unsupported": [
        # FFmpeg libavcodec/nvenc.c nvenc_setup_device / nvenc_check_capabilities / nvenc_open_session
        "[h264_nvenc @ 0x563a0ac0d7c0] No NVENC capable devices found",
        "[h264_nvenc @ 0x563a0ac0d7c0] No capable devices found",
        "[hevc_nvenc @ 0x563a0ac0d7c0] Provided device doesn't support required NVENC features",
        "[av1_nvenc @ 0x563a0ac0d7c0] Codec not supported",
        "[hevc_nvenc @ 0x563a0ac0d7c0] 10 bit encode not supported",
        "[h264_nvenc @ 0x563a0ac0d7c0] OpenEncodeSessionEx failed: unsupported device (2): (no details)",
        # FFmpeg libavcodec/cuviddec.c cuvid_test_capabilities
        "[av1_cuvid @ 0x5581f1d2a940] Codec av1_cuvid is not supported.",
        # dmlc/decord src/video/nvcodec/cuda_decoder_impl.cc
        "decord._ffi.base.DECORDError: [12:00:00] /decord/src/video/nvcodec/cuda_decoder_impl.cc:132: "
        "Unsupported Codec AV1 with chroma format 4:2:0",
    ],
    "physx-gpu-buffer-too-small": [
        # PhysX gpunarrowphase/src/PxgNarrowphaseCore.cpp, gpubroadphase (isaac-sim/IsaacLab#176, #981, #1199)
        "[Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected, please increase its size "
        "to at least 219146 in the scene desc!",
        "/buildAgent/work/99bede84aa0a52c2/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp (2185) : internal "
        "error : PxgDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its "
        "size to at least 1484688128 in the scene desc!",
        "[Error] [omni.physx.plugin] PhysX error: The application needs to increase "
        "PxGpuDynamicsMemoryConfig::totalAggregatePairsCapacity to 16790 , otherwise, the simulation will "
        "miss interactions",
        "PhysX error: The application needs to increase PxGpuDynamicsMemoryConfig::foundLostPairsCapacity to "
        "36218880, otherwise, the simulation will miss interactions",
        "Contact buffer overflow detected, please increase its size in the scene desc!",
    ],
    "gpu-out-of-memory": [
        # Isaac Gym's GPU PhysX (closed build): isaac-sim/IsaacGymEnvs#256
        "PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2",
    ],
    "framework-cpu-only-build": [
        # opencv modules/core/include/opencv2/core/private.cuda.hpp throw_no_cuda
        "cv2.error: OpenCV(4.8.0) /io/opencv/modules/core/include/opencv2/core/private.cuda.hpp:106: error: "
        "(-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'",
        "OpenCV Error: No GPU support (The library is compiled without CUDA support) in mallocPitch, file "
        "/build/opencv/modules/dynamicuda/include/opencv2/dynamicuda/dynamicuda.hpp, line 126",
        # dmlc/decord src/video/video_reader.cc, src/runtime/c_runtime_api.cc
        "decord._ffi.base.DECORDError: [10:00:00] /github/workspace/src/video/video_reader.cc:167: CUDA not "
        "enabled. Requested context GPU(0).",
        "decord._ffi.base.DECORDError: [10:00:00] /github/workspace/src/runtime/c_runtime_api.cc:70: Check "
        "failed: allow_missing: Device API gpu is not enabled.",
        # pytorch/vision torchvision/io/video_reader.py
        "RuntimeError: Not compiled with GPU decoder support.",
        # NVIDIA/warp warp/_src/context.py greeting
        "   CUDA not enabled in this build",
        # ffmpeg built without --enable-nvenc
        "Unknown encoder 'h264_nvenc'",
        # opencv modules/dnn/src/net_impl.cpp setUpNet (a fallback: heads only when nothing else does)
        "[ WARN:0@0.027] global net_impl.cpp:174 setUpNet DNN module was not built with CUDA backend; "
        "switching to CPU",
    ],
    "driver-too-old-for-build": [
        # FFmpeg libavcodec/nvenc.c nvenc_load_libraries
        "[h264_nvenc @ 0x5615c5a4b7c0] Driver does not support the required nvenc API version. Required: 12.1 "
        "Found: 12.0",
        # NVIDIA/warp context.py greeting, native/cuda_util.cpp init_cuda_driver
        "   CUDA Toolkit 12.8, Driver 11.4 (insufficient CUDA driver version!)",
        "Warp CUDA error: Failed to get function cuGetProcAddress",
        # taichi-dev/taichi taichi/rhi/cuda/cuda_driver.cpp
        "[W 12/02/26 10:00:00.123 4567] [cuda_driver.cpp:CUDADriver@134] The Taichi CUDA backend requires at "
        "least CUDA 10.0, got v9.2.",
    ],
    "libcuda-missing": [
        # FFmpeg libavutil/hwcontext_cuda.c cuda_device_init
        "[AVHWDeviceContext @ 0x5581f1d2a940] Could not dynamically load CUDA",
        # taichi-dev/taichi taichi/rhi/cuda/cuda_driver.cpp load_lib
        "[W 12/02/26 10:00:00.123 4567] [cuda_driver.cpp:load_lib@36] libcuda.so lib not found.",
        # NVIDIA/warp warp/_src/context.py greeting
        "   CUDA driver not found or failed to initialize",
    ],
    "cuda-init-failed": [
        # NVIDIA/warp warp/native/cuda_util.cpp check_cu_result
        "Warp CUDA error 999: unknown error (in function init_cuda_driver, /builds/omniverse/warp/warp/native/warp.cu:285)",
    ],
    "no-nvidia-driver": [
        # FFmpeg libavcodec/nvenc.c nvenc_setup_device; nv-codec-headers dynlink_loader.h on Windows
        "[h264_nvenc @ 0x563a0ac0d7c0] No CUDA capable devices found",
        "[h264_nvenc @ 000001d2c3e4f5a0] Cannot load nvcuda.dll",
    ],
    "egl-device-display-unavailable": [
        # NVlabs/nvdiffrast nvdiffrast/common/glutil.cpp createGLContext
        "[F glutil.cpp:357] eglChooseConfig() failed",
        "[F glutil.cpp:366] eglCreateContext() failed",
        # glfw/glfw src/egl_context.c
        "glfw.GLFWError: (65542) b'EGL: Library not found'",
        "glfw.GLFWError: (65542) b'EGL: Failed to get EGL display: EGL_BAD_PARAMETER'",
    ],
    "no-display-for-rendering": [
        # glfw/glfw src/wl_init.c, src/platform.c, src/glx_context.c
        "glfw.GLFWError: (65544) b'Wayland: Failed to connect to display'",
        "glfw.GLFWError: (65550) b'Failed to detect any supported platform'",
        "glfw.GLFWError: (65542) b'GLX: GLX extension not found'",
        "glfw.GLFWError: (65542) b'GLX: No GLXFBConfigs returned'",
    ],
    "system-library-missing": [
        # mcfletch/pyopengl OpenGL/platform/glx.py, egl.py, baseplatform.py; glfw src/x11_init.c
        "ImportError: Unable to find an OpenGL or GL library",
        "OSError: No GL/OpenGL library available",
        "OpenGL.error.NullFunctionError: Attempt to call an undefined function glutInit, check for "
        "bool(glutInit) before calling",
        "glfw.GLFWError: (65544) b'X11: Failed to load Xlib'",
        # pyopengl OpenGL/GLUT/special.py
        "OpenGL.error.NullFunctionError: Undefined GLUT callback function Display, check for "
        "bool(glutDisplayFunc) before calling",
    ],
    "torch-cuda-unavailable": [
        # NVlabs/tiny-cuda-nn bindings/torch/tinycudann/modules.py
        "OSError: Unknown compute capability. Ensure PyTorch with CUDA support is installed.",
    ],
    "nvcc-missing": [
        # nerfstudio-project/gsplat gsplat/cuda/_backend.py
        "gsplat: No CUDA toolkit found. gsplat will be disabled.",
    ],
    "build-isolation-hides-torch": [
        # NVlabs/nvdiffrast setup.py
        "ERROR! Cannot compile nvdiffrast CUDA extension. Please ensure that:",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


test_healthy_lines_name_nothing = healthy_test([
    # ffmpeg's own healthy output about NVENC/NVDEC (libavcodec/nvenc.c AV_LOG_VERBOSE lines)
    "[h264_nvenc @ 0x55d0c8a2c8c0] Loaded Nvenc version 12.1",
    "[h264_nvenc @ 0x55d0c8a2c8c0] Nvenc initialized successfully",
    "[h264_nvenc @ 0x55d0c8a2c8c0] 1 CUDA capable devices found",
    "[h264_nvenc @ 0x55d0c8a2c8c0] supports NVENC",
    "ffmpeg -hwaccel cuda -c:v h264_cuvid -i in.mp4 -c:v h264_nvenc -preset p4 out.mp4",
    "Stream #0:0 -> #0:0 (h264 (h264_cuvid) -> h264 (h264_nvenc))",
    # Isaac Gym's start-up banner
    "+++ Using GPU PhysX",
    "Physics Engine: PhysX",
    "Physics Device: cuda:0",
    "GPU Pipeline: enabled",
    "GPU Pipeline: disabled",
    "Not connected to PVD",
    "sim.physx.max_gpu_contact_pairs: 8388608",
    "PhysxCfg(gpu_max_rigid_patch_count=2**18, gpu_total_aggregate_pairs_capacity=2**21)",
    # Warp's and Taichi's greetings on a working GPU
    "Warp 1.5.0 initialized:",
    "   CUDA Toolkit 12.6, Driver 12.8",
    '     "cuda:0"   : "NVIDIA GeForce RTX 4090" (24 GiB, sm_89, mempool enabled)',
    "[Taichi] version 1.7.2, llvm 15.0.4, commit 0131dce9, linux, python 3.10.12",
    "[Taichi] Starting on arch=cuda",
    # OpenCV, nvdiffrast, gsplat when they work
    "cv2.cuda.getCudaEnabledDeviceCount(): 1",
    "[I glutil.cpp:370] EGL 1.5 OpenGL context created (disp: 0x000055d0c8a2c8c0, surface: 0x0, context: 0x000055d0c8a2d000)",
    "gsplat: Setting up CUDA with MAX_JOBS=10 (This may take a few minutes the first time)",
    "export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl",
])


def test_the_encode_library_outranks_the_driver_requirement_notice():
    # nvenc.c prints the minimum-driver notice after the encode library failed to load too
    log = ("[h264_nvenc @ 0x55d0c8a2c8c0] Cannot load libnvidia-encode.so.1\n"
           "[h264_nvenc @ 0x55d0c8a2c8c0] The minimum required Nvidia driver for nvenc is 520.56.06 or newer\n"
           "Error initializing output stream 0:0 -- Error while opening encoder for output stream #0:0\n")
    assert _codes(log)[:1] == ["nvidia-video-codec-libs-missing"]


def test_an_old_driver_heads_with_its_notice():
    log = ("[h264_nvenc @ 0x5615c5a4b7c0] Driver does not support the required nvenc API version. Required: 12.1 Found: 12.0\n"
           "[h264_nvenc @ 0x5615c5a4b7c0] The minimum required Nvidia driver for nvenc is 520.56.06 or newer\n")
    assert _codes(log)[:1] == ["driver-too-old-for-build"]


def test_a_physx_overflow_explains_isaac_gyms_illegal_access():
    # the generic CUDA error Isaac Gym ends with yields to the buffer PhysX names
    log = ("/buildAgent/work/99bede84aa0a52c2/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp (2185) : internal error : "
           "PxgDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its size to at least "
           "1484688128 in the scene desc!\n"
           "[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: "
           "../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1718\n")
    assert _codes(log)[:1] == ["physx-gpu-buffer-too-small"]


def test_the_opencv_dnn_fallback_yields_to_a_real_failure():
    log = ("[ WARN:0@0.027] global net_impl.cpp:174 setUpNet DNN module was not built with CUDA backend; switching to CPU\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert _codes(log)[:1] == ["gpu-out-of-memory"]


def test_a_gl_function_missing_in_a_context_is_not_a_missing_library():
    # NullFunctionError for a gl* function means no (or too old a) context, not a missing freeglut
    line = ("OpenGL.error.NullFunctionError: Attempt to call an undefined function glGenVertexArrays, "
            "check for bool(glGenVertexArrays) before calling\n")
    assert "system-library-missing" not in _codes(line)


@pytest.mark.parametrize("log, code", [
    # the same context reads as for CUDA's own 'no CUDA-capable device' and the loader's libcuda line
    ("CUDA_VISIBLE_DEVICES=5 ffmpeg -hwaccel cuda -i in.mp4 out.mp4\n[h264_nvenc @ 0x55d5c] No CUDA capable devices found\n",
     "cuda-visible-devices-hides-gpus"),
    ("Linux 5.15.90.1-microsoft-standard-WSL2\n[h264_nvenc @ 0x55d5c] No CUDA capable devices found\n", "wsl-gpu-unavailable"),
    ("Linux 5.15.90.1-microsoft-standard-WSL2\n[AVHWDeviceContext @ 0x5] Could not dynamically load CUDA\n",
     "wsl-libcuda-not-linked"),
    ("[h264_nvenc @ 0x55d5c] No CUDA capable devices found\n", "no-nvidia-driver"),
])
def test_video_stack_no_device_lines_read_their_context_like_cudas_own(log, code):
    assert [c.code for c in explain_text(log).candidates][:1] == [code]
