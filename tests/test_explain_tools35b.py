"""tools35b: the first wave's leftover wordings (harv35, harv35b, harv35c).

Every message is written as the program prints it (its raise site is named beside it); each runs
through wrappers of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near misses
that must stay unread or read otherwise.
"""
import pytest

from test_explain_patterns import codes, ids, wrapped  # noqa: E402


SOME_WRAPPERS = ["plain", "torchrun-rank", "python-logging", "docker-compose", "markdown-quote",
                 "prose-quotes", "prose-backticks", "word-wrapped-80", "journald"]

# -- 1a. Magnum's windowless EGL context (Habitat-sim): no EGL device for the CUDA device
#    (mosra/magnum src/Magnum/Platform/WindowlessEglApplication.cpp, tryCreateContext)

MAGNUM_LINES = [
    # before magnum b4b93e06
    "Platform::WindowlessEglApplication::tryCreateContext(): unable to find EGL device for CUDA device 0",
    "Platform::WindowlessEglApplication::tryCreateContext(): unable to find CUDA device 1 among 2 EGL devices in total",
    "Platform::WindowlessEglApplication::tryCreateContext(): no EGL devices found, likely a driver issue; "
    "enable --magnum-gpu-validation to see additional info",
    "Platform::WindowlessEglApplication::tryCreateContext(): cannot get default EGL display: EGL_BAD_PARAMETER",
    "Platform::WindowlessEglApplication::tryCreateContext(): cannot initialize EGL: EGL_NOT_INITIALIZED",
    "Platform::WindowlessEglContext: requested EGL device 3 but found only 1",
]

HABITAT_TAIL = ("WindowlessContext: Unable to create windowless context\n")


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("line", MAGNUM_LINES)
def test_magnum_egl_lines_name_the_missing_nvidia_egl(line, wrap):
    text = "I0501 12:00:00.000 simulator.py:221] Loaded navmesh\n" + line + "\n" + HABITAT_TAIL
    assert codes(wrapped(wrap, text))[:1] == ["egl-device-display-unavailable"]


def test_magnum_egl_ids():
    assert ids(MAGNUM_LINES[0]) == ["magnum-egl-no-cuda-device"]
    assert ids(MAGNUM_LINES[3]) == ["magnum-egl-no-display"]


@pytest.mark.parametrize("line", [
    # the verbose log of a context that worked, and the core-context fallback warning
    "Platform::WindowlessEglApplication: found 2 EGL devices, choosing EGL device 0 for CUDA device 0",
    "Platform::WindowlessEglContext: cannot create core context, falling back to compatibility context: "
    "EGL_BAD_MATCH",
    "Renderer: NVIDIA A100-SXM4-40GB/PCIe/SSE2 by NVIDIA Corporation",
])
def test_magnum_lines_of_a_working_context_are_not_read(line):
    assert ids(line) == []
    assert "egl-device-display-unavailable" not in codes(line + "\nstep 10: reward 0.3\n")


# -- 1b. SAPIEN's renderer with no Vulkan driver answering (mani-skill/ManiSkill#34,
#    haosulab/SAPIEN#172; SAPIEN's render.rst: the ICD file in /usr/share/vulkan/icd.d)

SAPIEN_TRACE = """Traceback (most recent call last):
  File "/home/u/miniconda3/lib/python3.10/site-packages/sapien/example/hello_world.py", line 19, in main
    renderer = sapien.SapienRenderer()  # Create a renderer
RuntimeError: createInstance: No Vulkan extensions found for window surface creation (hint: set VK_ICD_FILENAMES to `locate icd.json`).
"""


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
def test_sapien_no_surface_extensions_names_the_vulkan_driver(wrap):
    assert codes(wrapped(wrap, SAPIEN_TRACE))[:1] == ["vulkan-driver-libs-missing"]


def test_sapien_surface_line_is_its_own_signature():
    assert ids(SAPIEN_TRACE.splitlines()[-1]) == ["sapien-no-surface-extensions"]


def test_a_surface_extension_listing_is_not_read():
    # vulkaninfo's listing of the same extensions on a working host
    line = "\tVK_KHR_surface                         : extension revision 25"
    assert ids(line) == []
    assert "vulkan-driver-libs-missing" not in codes(line + "\n")


# -- 2. Start-up warnings after which the program goes on: lora-scripts' torch check
#    (Akegarasu/lora-scripts mikazuki/utils/devices.py check_torch_gpu: log.warning, then it logs
#    the backend and GPUs) and ComfyUI-nunchaku's wheel check (__init__.py: logger.warning, then
#    it imports every node). Alone they are the report; beside a failure another signature reads
#    they give way (fallback = true)

LORA_WARNING = ("11:21:04-887737 WARNING  Torch version is lower than 2.3.0, which may not be able to "
                "train FLUX model properly. Please re-run the installation script (install.ps1 or "
                "install.bash) to upgrade Torch.")
NUNCHAKU_WARNING = ("2025-06-01 10:00:00,000 - WARNING - ComfyUI-nunchaku 0.3.4 is not compatible with "
                    "nunchaku 0.3.1. Please update nunchaku to a supported version in ['v0.3.2'].")
WARNINGS = {"torch-too-old-for-package": LORA_WARNING, "dependency-version-mismatch": NUNCHAKU_WARNING}

# unrelated failures that a signature reads: the warning must not be named over them
OOM = """Traceback (most recent call last):
  File "train_network.py", line 1012, in train
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 11.99 GiB of which 0 bytes is free.
"""
TORCH_DLL = """Traceback (most recent call last):
  File "main.py", line 3, in <module>
    import torch
OSError: [WinError 126] The specified module could not be found. Error loading "C:\\ComfyUI\\python_embeded\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.
"""
FAILURES = {"gpu-out-of-memory": OOM, "msvc-runtime-missing": TORCH_DLL}


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("code", sorted(WARNINGS))
def test_start_up_warning_alone_is_the_answer(code, wrap):
    assert codes(wrapped(wrap, WARNINGS[code]))[:1] == [code]


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("code", sorted(WARNINGS))
@pytest.mark.parametrize("after", [True, False])
def test_start_up_warning_gives_way_to_an_unrelated_failure(code, failure, after):
    text = (WARNINGS[code] + "\n" + FAILURES[failure]) if after else (FAILURES[failure] + WARNINGS[code] + "\n")
    named = codes(text)
    assert named[:1] == [failure]
    assert code not in named


def test_start_up_warning_ids():
    assert ids(LORA_WARNING) == ["lora-scripts-torch-flux-warning"]
    assert ids(NUNCHAKU_WARNING) == ["comfyui-nunchaku-wheel-version-check"]


@pytest.mark.parametrize("line", [
    "11:21:04-890000 INFO     Torch 2.4.1+cu124",
    "2025-06-01 10:00:00,000 - INFO - ComfyUI-nunchaku version: 1.0.1",
    "2025-06-01 10:00:00,000 - INFO - Nunchaku version: 1.0.1",
])
def test_start_up_banners_are_not_read(line):
    assert ids(line) == []


# -- 3a. ffmpeg's 'Cannot load libcuda.so.1' (FFmpeg/nv-codec-headers dynlink_loader.h LOAD_LIBRARY,
#    then libavutil/hwcontext_cuda.c 'Could not dynamically load CUDA'), read with the container
#    context the loader's own 'libcuda.so.1: cannot open shared object file' reads

FFMPEG_NO_LIBCUDA = """[AVHWDeviceContext @ 0x55d0c8a1e0c0] Cannot load libcuda.so.1
[AVHWDeviceContext @ 0x55d0c8a1e0c0] Could not dynamically load CUDA
Device creation failed: -1.
Failed to set value 'cuda' for option 'hwaccel_device': Operation not permitted
Error parsing global options: Operation not permitted
"""
IMAGE_RUN = " jrottenberg/ffmpeg:4.4-nvidia -hwaccel cuda -i in.mp4 out.mp4"


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
@pytest.mark.parametrize("run, code", [
    ("", "libcuda-missing"),
    ("$ docker run --rm -v $PWD:/data" + IMAGE_RUN, "device-nodes-missing"),
    ("$ docker run --rm --device /dev/nvidia0 --device /dev/nvidiactl" + IMAGE_RUN, "container-toolkit-missing"),
    # the GPU given through the toolkit: the container context decides nothing
    ("$ docker run --rm --gpus all" + IMAGE_RUN, "libcuda-missing"),
])
def test_ffmpeg_libcuda_line_reads_the_container_context(run, code, wrap):
    text = (run + "\n" if run else "") + FFMPEG_NO_LIBCUDA
    assert codes(wrapped(wrap, text))[:1] == [code]


def test_ffmpeg_cannot_load_libcuda_alone():
    line = "[AVHWDeviceContext @ 0x5581] Cannot load libcuda.so.1"
    assert "ffmpeg-taichi-warp-libcuda-not-loaded" in ids(line)
    assert codes(line)[:1] == ["libcuda-missing"]


@pytest.mark.parametrize("line", [
    # the optional symbols the loader only logs at debug level, and other libraries' lines
    "[AVHWDeviceContext @ 0x5581] Cannot load optional cuCtxGetDevice",
    "[h264_nvenc @ 0x5581] Cannot load libnvidia-encode.so.1",
])
def test_other_cannot_load_lines_are_not_libcuda(line):
    assert "ffmpeg-taichi-warp-libcuda-not-loaded" not in ids(line)
    assert "libcuda-missing" not in codes(line)[:1]
