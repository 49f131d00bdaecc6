"""Issue 8 items 2, 3 and 7 (kbgrow4): what explain missed on 37 fresh training threads of image,
video, audio and speech users (ComfyUI, Forge, Fooocus, kohya_ss, whisper front ends, TTS;
tests/corpus/explain/*.log with ``# collected: training-2026-12-01j``), fixed by class.

- Windows has no OOM killer: running out of RAM plus page file is system error 1455 (Python's
  ``[WinError 1455]``, Rust's ``(os error 1455)``), torch's ``DefaultCPUAllocator: not enough
  memory`` or a bare ``python.exe has stopped working`` (``windows-pagefile-too-small``; the
  allocator's words on a Linux path stay the host's memory).
- An AMD Radeon with a CUDA build of torch: torch's ``Found no NVIDIA driver`` is a symptom whose
  AMD clues (Radeon, ROCm, DirectML, ZLUDA, RX 6xxx ...) name ``amd-gpu-no-torch-backend``; the
  ROCm build's ``No HIP GPUs are available`` points at the ROCm GPU list, not at NVIDIA.
- Other GPU backends' own words: DirectML's unsupported operator or dtype, MPS's missing dtype
  (Float8 checkpoints on Apple silicon).
- Library drift outside the GPU stack that users of these apps hit: huggingface_hub's removed
  ``cached_download`` / ``HfFolder`` / ``Repository``; NumPy's NaN cast under fp16 overflow
  (black images) and A1111's ``NansException``; phonemizer's missing eSpeak; ffmpeg missing.
- Known causes worded differently: the code line Python prints under torch's arch warning, bark's
  "No GPU being used" (a CPU build of torch, unless the log says otherwise).

Messages are the programs' own wording (each signature's ``source`` names the file); users'
words come from the training threads named per case.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb

from explain_helpers import codes_of as _codes
from test_explain_patterns import assert_sourced_root, family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "windows-pagefile-too-small": [
        # Python's OSError for ERROR_COMMITMENT_LIMIT (1455)
        "OSError: [WinError 1455] The paging file is too small for this operation to complete",
        # Rust's std::io::Error Display, through safetensors (krita-ai-diffusion#1898's server)
        "Server execution error: The paging file is too small for this operation to complete. (os error 1455)",
        # c10/core/impl/alloc_cpu.cpp on Windows (lllyasviel/Fooocus#196)
        "RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not "
        "enough memory: you tried to allocate 52428800 bytes.",
    ],
    "huggingface-hub-api-removed": [
        # diffusers/utils/dynamic_modules_utils.py of old diffusers under huggingface_hub >= 0.26
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        "(/usr/local/lib/python3.10/dist-packages/huggingface_hub/__init__.py)",
        # HfFolder / Repository under huggingface_hub >= 1.0
        "ImportError: cannot import name 'HfFolder' from 'huggingface_hub' (C:\\venv\\Lib\\site-packages\\"
        "huggingface_hub\\__init__.py)",
        "ImportError: cannot import name 'Repository' from 'huggingface_hub'",
    ],
    "fp16-nan-output": [
        # stable-diffusion-webui modules/devices.py test_for_nans
        "modules.devices.NansException: A tensor with all NaNs was produced in VAE. This could be because there's "
        "not enough precision to represent the picture. Try adding --no-half-vae commandline argument to fix this. "
        "Use --disable-nan-check commandline argument to disable this check.",
        "NansException: A tensor with all NaNs was produced in Unet. This could be either because there's not "
        "enough precision to represent the picture, or because your video card does not support half type.",
        # numpy's cast of a NaN image (diffusers/image_processor.py, ComfyUI nodes.py)
        "diffusers/image_processor.py:111: RuntimeWarning: invalid value encountered in cast",
    ],
    "directml-op-unsupported": [
        # torch-directml's fatal check (ljleb/sd-webui-freeu#21)
        "[F D:\\a\\_work\\1\\s\\pytorch-directml-plugin\\torch_directml\\csrc\\engine\\dml_util.cc:118] Invalid "
        "or unsupported data type.",
        # its CPU-fallback warning
        "UserWarning: The operator 'aten::std_mean.correction' is not currently supported on the DML backend and "
        "will fall back to run on the CPU. This may have performance implications.",
    ],
    "apple-mps-op-unsupported": [
        # aten/src/ATen/native/mps/OperationUtils.mm getMPSDataType
        "TypeError: Trying to convert Float8_e4m3fn to the MPS backend but it does not have support for that dtype.",
    ],
    "phonemizer-backend-missing": [
        # phonemizer/backend/base.py and phonemizer/backend/espeak/wrapper.py (3.3.0)
        "RuntimeError: espeak not installed on your system",
        "RuntimeError: festival not installed on your system",
        "RuntimeError: failed to find espeak library",
    ],
    "ffmpeg-not-found": [
        # subprocess under whisper/audio.py load_audio
        "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'",
        # pydub/utils.py
        "RuntimeWarning: Couldn't find ffmpeg or avconv - defaulting to ffmpeg, but may not work",
        "'ffmpeg' is not recognized as an internal or external command,",
    ],
    "torch-arch-not-supported": [
        # the source line Python prints under torch's _check_cubins warning (RVC-Project/...-WebUI#2507)
        'warnings.warn(incompatible_device_warn.format(device_name, capability, " ".join(arch_list), device_name))',
    ],
}


# (a terminal's cut inside an upper-case name or a call, "DefaultC" / "PUAllocator", was skipped
# here: explain's second look at an error line now joins it without a space too)
test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

# the new causes say what to do by hand (commands, remedy not automatic) ...
test_new_roots_are_sourced = sourced_roots_test([
    "windows-pagefile-too-small", "huggingface-hub-api-removed", "directml-op-unsupported"])


def test_the_amd_cause_is_inferred_from_its_clues():
    # no line of its own names it: torch's no-driver symptom and the log's AMD words do
    entry = load_kb().get("amd-gpu-no-torch-backend")
    assert entry.kind == "root" and entry.fix and entry.source and entry.links and entry.commands
    assert entry.remedy.get("automatic") is False
    assert {"Radeon", "ROCm", "ZLUDA", "DirectML"} <= set(entry.clues)
    assert not any(c.startswith("AMD") and len(c) <= 4 for c in entry.clues), "AMD64 and AMD CPUs are no GPU"


# ... and the two that only need a package installed may let `stackpeel fix` install it
@pytest.mark.parametrize("code", ["phonemizer-backend-missing", "ffmpeg-not-found", "fp16-nan-output"])
def test_new_roots_with_packages_are_sourced(code):
    entry = assert_sourced_root(code)
    if entry.packages:
        assert entry.remedy.get("automatic") is True and entry.packages.get("apt")


def test_the_names_users_proposed_are_aliases():
    kb = load_kb()
    for alias, code in [("windows-virtual-memory-exhausted", "windows-pagefile-too-small"),
                        ("cuda-torch-on-amd-gpu", "amd-gpu-no-torch-backend"),
                        ("diffusers-too-old-for-hub", "huggingface-hub-api-removed"),
                        ("fp16-overflow-black-image", "fp16-nan-output"),
                        ("espeak-library-not-found", "phonemizer-backend-missing")]:
        assert alias in kb.get(code).aliases, (alias, code)


# --- the allocator's words: Windows is the page file, a Linux path is the host's memory -------

def test_the_cpu_allocator_on_a_linux_path_is_host_memory():
    log = ('  File "/home/user/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1160, in to\n'
           "RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: not enough memory: "
           "you tried to allocate 26214400000 bytes.\n")
    assert _codes(log)[:1] == ["host-oom-killed"], _codes(log)


# --- a Windows crash dialog is the page file only when nothing else is named ----------------

def test_a_python_crash_dialog_alone_is_the_page_file():
    # lllyasviel/stable-diffusion-webui-forge#2022
    log = ('I can like generate 20 images and then "python.exe has stopped working" appears. This only happens '
           "with Flux models.\n")
    assert _codes(log)[:1] == ["windows-pagefile-too-small"], _codes(log)


def test_a_python_crash_dialog_does_not_outrank_a_named_cause():
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
           "of 8.00 GiB of which 1.10 GiB is free.\nthen python.exe has stopped working\n")
    assert _codes(log)[:1] == ["gpu-out-of-memory"], _codes(log)


def test_numpy_nan_cast_does_not_outrank_a_named_cause():
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
           "of 8.00 GiB of which 1.10 GiB is free.\n"
           "image_processor.py:111: RuntimeWarning: invalid value encountered in cast\n")
    assert _codes(log)[:1] == ["gpu-out-of-memory"], _codes(log)


# --- torch finding no NVIDIA driver: the AMD clues of the log decide -------------------------

NO_DRIVER = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")


@pytest.mark.parametrize("context", [
    # LykosAI/StabilityMatrix#885
    "### What GPU / hardware type are you using?\n\nAMD Radeon RX 7900 XT",
    "Installed ComfyUI on Linux with ROCm 6.2 for my card",
    "Windows 11, RX 6700 XT, launched with --directml",
])
def test_no_nvidia_driver_on_an_amd_machine_is_the_torch_build(context):
    log = f"{context}\n\n{NO_DRIVER}\n"
    assert _codes(log)[:1] == ["amd-gpu-no-torch-backend"], _codes(log)


@pytest.mark.parametrize("context", [
    "",
    # an AMD CPU and Python's platform tag are not an AMD GPU
    "Python 3.10.9 (tags/v3.10.9:1dd9be6, Dec  6 2022, 20:01:21) [MSC v.1934 64 bit (AMD64)]\nCPU: AMD Ryzen 9 5900X",
])
def test_no_nvidia_driver_without_amd_gpu_words_stays_the_driver(context):
    log = f"{context}\n{NO_DRIVER}\n"
    assert _codes(log)[:1] == ["no-nvidia-driver"], _codes(log)


def test_no_hip_gpus_with_rocm_words_is_the_rocm_gpu_list():
    # Comfy-Org/ComfyUI#5406 (ROCm on WSL, an RX 6800 XT)
    log = ("device name [0]: AMD Radeon RX 6800 XT\nHSA_OVERRIDE_GFX_VERSION=10.3.0 python main.py\n"
           "RuntimeError: No HIP GPUs are available\n")
    assert _codes(log)[:1] == ["rocm-gpu-arch-unsupported"], _codes(log)


def test_no_hip_gpus_alone_stays_the_symptom():
    assert _codes("RuntimeError: No HIP GPUs are available\n")[:1] == ["torch-cuda-unavailable"]


# --- a library that chose the CPU -------------------------------------------------------------

def test_bark_running_on_the_cpu_is_a_cpu_build_unless_the_log_says_otherwise():
    # suno-ai/bark#202, #153
    log = "No GPU being used. Careful, inference might be very slow!\n"
    assert _codes(log)[:1] == ["torch-cpu-only-build"], _codes(log)
    colab = "Running on Colab (/content/bark)\n" + log
    assert _codes(colab)[:1] == ["no-nvidia-driver"], _codes(colab)


# --- users' words for a Triton that is not there ----------------------------------------------

@pytest.mark.parametrize("line", [
    # kijai/ComfyUI-WanVideoWrapper#875
    "Basically the proocess cannot be initiated because some of the packages are not loaded (Triton)",
    "Error: triton is not installed, sageattention cannot be used",
])
def test_users_words_for_a_missing_triton(line):
    expl = explain_text(line + "\n")
    assert [c.code for c in expl.candidates][:1] == ["triton-not-installed"], [c.code for c in expl.candidates]
    assert expl.candidates[0].basis == "vocabulary"


# Healthy lines that share words with the signatures above: a setting, a version, a notice
HEALTHY = [
    "Virtual memory: 32768 MB, paging file managed by Windows",
    "ffmpeg version 6.1.1 Copyright (c) 2000-2023 the FFmpeg developers",
    "Using directml with device: AMD Radeon RX 7900 XTX",
    "pip install huggingface_hub==0.25.2 diffusers==0.30.0",
    "espeak-ng 1.51 installed at C:\\Program Files\\eSpeak NG",
    "Device: mps, VAE dtype: torch.float32",
    "Set vram state to: NORMAL_VRAM; Device: cuda:0 AMD Radeon RX 7900 XTX [ZLUDA] : native",
    "Loaded cuDNN 90100 from /usr/lib/x86_64-linux-gnu/libcudnn.so.9",
    "Upcast cross attention layer to float32: enabled; --no-half-vae set",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)
