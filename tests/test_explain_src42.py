"""src42 (issue 8 item 2): messages harvested from the programs' own source: the leftovers of src41
(NCCL 2.20-2.24's forced-MNNVL check, NCCL's address parser) and the programs not swept before
(torchvision, torchaudio, torchcodec, torch.compile's Dynamo/Inductor, CuPy, Numba's CUDA target, Unsloth,
torchao, Liger-Kernel). docs/dev/src42.md says what was read; the lists docs/dev/src42-*.txt hold every
message listed and explain's answer.

Every message below is the program's own text with plausible values filled in (the ``source`` of the
matching signature names the file and function). Each runs through the wrappers of
tests/test_explain_patterns.py (rank and worker prefixes, logging prefixes, quotes, Markdown, word wrap
and terminal cuts at 80 columns, CRLF, container log formats) and must rank its code first. Near misses
that must not name the new signatures follow.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, ids, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "env-nccl-mnnvl-forced-unsupported": [
        # nccl src/init.cc initTransportsRank (2.20-2.24, NCCL_MNNVL_ENABLE=1)
        "gb200-1:2345:2345 [0] init.cc:919 NCCL WARN MNNVL is not supported on this system",
    ],
    "env-nccl-comm-id-invalid": [
        # nccl src/misc/socket.cc ncclSocketGetAddrFromString
        "node1:1:1 [0] misc/socket.cc:246 NCCL WARN Net : No valid <IPv4_or_hostname>:<port> pair found",
    ],
    "torchaudio-backend-missing": [
        # pytorch/audio torchaudio/_extension/utils.py _find_ffmpeg_extension, _init_ffmpeg
        "ImportError: Failed to intialize FFmpeg extension. Tried versions: ['6', '5', '4', '']. Enable DEBUG "
        "logging to see more details about the error.",
        "RuntimeError: TorchAudio is not built with FFmpeg integration. Please build torchaudio with USE_FFMPEG=1.",
    ],
    "kernel-extension-not-built": [
        # pytorch/audio src/torchaudio/_extension/__init__.py fail_if_no_rir / fail_if_no_align
        "RuntimeError: torchaudio.functional.simulate_rir_ism requires RIR extension, but TorchAudio is not "
        "compiled with it. Please build TorchAudio with RIR support.",
        "RuntimeError: torchaudio.functional.forced_align Requires alignment extension, but TorchAudio is not "
        "compiled with it.         Please build TorchAudio with alignment support.",
        # pytorch/vision torchvision/csrc/io/image/cuda/decode_jpegs_cuda.cpp (no nvJPEG at build time)
        "RuntimeError: decode_jpegs_cuda: torchvision not compiled with nvJPEG support",
    ],
    "framework-gpu-arch-unsupported": [
        # NVIDIA/numba-cuda numba_cuda/numba/cuda/cudadrv/driver.py Device.get_primary_context
        "numba.cuda.cudadrv.error.CudaSupportError: <CUDA device 0 'b'Tesla K20m''> has compute capability "
        "< (3, 5)",
    ],
    "numba-cuda-toolkit-unusable": [
        # NVIDIA/numba-cuda cudadrv/nvvm.py NVVM.__new__, cuda_paths.py _get_nvvm, cudadrv/libs.py check_static_lib
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM is not available",
        "cuda.pathfinder._dynamic_libs.load_dl_common.DynamicLibNotFoundError: nvvm not found and "
        "CUDA_HOME/CUDA_PATH is set; original nvvm error: Failure finding \"libnvvm.so\"",
        "FileNotFoundError: /usr/local/cuda/lib64/libcudadevrt.a not found",
    ],
    "torch-not-installed": [
        # unslothai/unsloth unsloth/__init__.py, unsloth/import_fixes.py torchvision_compatibility_check
        "ImportError: Unsloth: Pytorch is not installed. Go to https://pytorch.org/.",
        "ImportError: Unsloth: torch not found. Please install torch first.",
    ],
    "extension-torch-mismatch": [
        # unslothai/unsloth unsloth/import_fixes.py torchvision_compatibility_check
        "ImportError: Unsloth: torch==2.8.0 requires torchvision>=0.23.0, but found torchvision==0.21.0+cu124. "
        "Please refer to https://pytorch.org/get-started/previous-versions/ for more information.",
        # torch 1.x torch/_ops.py: torchvision's _C never loaded
        "RuntimeError: No such operator torchvision::nms",
    ],
    "dependency-version-mismatch": [
        # unslothai/unsloth unsloth/import_fixes.py check_fbgemm_gpu_version, patch_datasets
        "ImportError: Unsloth: fbgemm_gpu_genai==1.2.0 detected. It might cause unexpected issues like "
        "segmentation faults. Please uninstall the current one by doing `pip uninstall fbgemm-gpu` && "
        "`pip install fbgemm-gpu` to install fbgemm-gpu 1.4.0 or newer!",
        "NotImplementedError: #### Unsloth: Using `datasets = 4.4.1` will cause recursion errors.",
        # torchvision 0.17 removed transforms/functional_tensor.py (basicsr and its users still import it)
        "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
    ],
}

# the symptoms: their code heads the answer only where nothing narrower is named
SYMPTOMS = {
    "torch-cuda-unavailable": [
        # unsloth_zoo device_type.py get_device_type (2025 wording)
        "NotImplementedError: Unsloth currently only works on NVIDIA GPUs and Intel GPUs.",
    ],
    "library-missing": [
        # cupy/__init__.py (CuPy 8-9)
        "ImportError: CuPy is not correctly installed.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)
test_symptom_in_every_wrapper, test_symptom_own_signature = family_tests(SYMPTOMS)

# every new (or extended) signature id, and one message above that it must match on its own
NEW_SIGNATURES = {
    "nccl-mnnvl-forced-not-supported": FAMILIES["env-nccl-mnnvl-forced-unsupported"][0],
    "nccl-no-valid-ip-port-pair": FAMILIES["env-nccl-comm-id-invalid"][0],
    "torchaudio-ffmpeg-extension-not-initialized": FAMILIES["torchaudio-backend-missing"][0],
    "torchaudio-feature-not-compiled": FAMILIES["kernel-extension-not-built"][1],
    "torchvision-no-nvjpeg": FAMILIES["kernel-extension-not-built"][2],
    "numba-cuda-device-cc-below-minimum": FAMILIES["framework-gpu-arch-unsupported"][0],
    "numba-cuda-libnvvm-not-loaded": FAMILIES["numba-cuda-toolkit-unusable"][1],
    "unsloth-torch-not-installed": FAMILIES["torch-not-installed"][0],
    "unsloth-torchvision-too-old-for-torch": FAMILIES["extension-torch-mismatch"][0],
    "torchvision-built-for-other-torch": FAMILIES["extension-torch-mismatch"][1],
    "unsloth-dependency-release-refused": FAMILIES["dependency-version-mismatch"][1],
    "torchvision-functional-tensor-removed": FAMILIES["dependency-version-mismatch"][2],
    "unsloth-no-accelerator": SYMPTOMS["torch-cuda-unavailable"][0],
    "cupy-import-failed": SYMPTOMS["library-missing"][0],
}


@pytest.mark.parametrize("sig,line", sorted(NEW_SIGNATURES.items()))
def test_new_signature_matches_its_message(sig, line):
    assert sig in ids(line), ids(line)


test_new_code_is_sourced_and_says_what_to_do = sourced_roots_test(["env-nccl-mnnvl-forced-unsupported"])


# healthy lines the same programs print: they name nothing
HEALTHY = [
    # NCCL on a working NVL72; NCCL_COMM_ID set and parsed
    "gb200-1:2345:2345 [0] NCCL INFO MNNVL 1 cliqueId 7fff cliqueSize 72 cliqueRank 3 nvlDomainSize 72",
    "node1:1:1 [0] NCCL INFO NCCL_COMM_ID set by environment to 10.0.0.1:29600",
    # torchaudio / Unsloth / torchvision notices of a working install
    "torchaudio backends: ['ffmpeg', 'soundfile']",
    "Unsloth: torch==2.8.0 and torchvision==0.23.0 are compatible.",
    "Unsloth: fbgemm_gpu_genai==1.4.1 detected.",
    "torchvision 0.23.0+cu128 with nvJPEG: decode_jpeg(device='cuda') 1.2 ms",
]

test_healthy = healthy_test(HEALTHY)


@pytest.mark.parametrize("line,sig", [
    # NCCL 2.21-2.26's IMEX wording is nccl-mnnvl-imex-unavailable's, not the forced check's
    ("NCCL WARN MNNVL (cliqueSize 18) is available but not supported on this system. Check the IMEX "
     "configuration.", "nccl-mnnvl-forced-not-supported"),
    ("NCCL INFO NCCL_MNNVL_ENABLE set by environment to 1.", "nccl-mnnvl-forced-not-supported"),
    # other address warnings of NCCL's socket code
    ("NCCL WARN Net : error encountered when getting address info : Name or service not known",
     "nccl-no-valid-ip-port-pair"),
    ("NCCL WARN Net : string is null", "nccl-no-valid-ip-port-pair"),
    # torio's own fallback wording, a torchaudio with FFmpeg loaded, the correctly spelled word elsewhere
    ("RuntimeError: FFmpeg extension is not available.", "torchaudio-ffmpeg-extension-not-initialized"),
    ("Loaded FFmpeg 6 extension; torchaudio is built with FFmpeg integration",
     "torchaudio-ffmpeg-extension-not-initialized"),
    # a torchaudio that has the feature, and another library's build flag
    ("torchaudio: RIR extension is available", "torchaudio-feature-not-compiled"),
    ("SPDL is not compiled with NVJPEG support.", "torchvision-no-nvjpeg"),
    # Numba on a supported GPU, and torch's own capability warning
    ("<CUDA device 0 'b'NVIDIA A100-SXM4-80GB''> compute capability (8, 0)", "numba-cuda-device-cc-below-minimum"),
    ("Found GPU0 Tesla K80 which is of cuda capability 3.7. PyTorch no longer supports this GPU because it is "
     "too old.", "numba-cuda-device-cc-below-minimum"),
    # another library's libNVVM line; the toolkit's libcudadevrt found
    ("libNVVM is available: /usr/local/cuda/nvvm/lib64/libnvvm.so", "numba-cuda-libnvvm-not-loaded"),
    ("Found libcudadevrt.a in /usr/local/cuda/lib64", "numba-cuda-libnvvm-not-loaded"),
    # Unsloth's compatible-version notices and its other messages
    ("Unsloth: torch==2.8.0 and torchvision==0.23.0 are compatible.", "unsloth-torchvision-too-old-for-torch"),
    ("Unsloth: fbgemm_gpu_genai==1.4.1 detected.", "unsloth-dependency-release-refused"),
    ("ModuleNotFoundError: No module named 'torch'", "unsloth-torch-not-installed"),
    # the module torchvision still has, and its deprecation warning in 0.15-0.16 (a warning, the run goes on)
    ("from torchvision.transforms.functional import rgb_to_grayscale", "torchvision-functional-tensor-removed"),
    ("UserWarning: The torchvision.transforms.functional_tensor module is deprecated in 0.15 and will be "
     "**removed in 0.17**.", "torchvision-functional-tensor-removed"),
    # another namespace's operator
    ("RuntimeError: No such operator torchao::quantize_affine", "torchvision-built-for-other-torch"),
])
def test_near_miss_is_not_the_signature(line, sig):
    assert sig not in ids(line)
