"""The failure families issue 8 found without an entry (loader and libc, GPU partitioning and
sharing, containers, interconnect, kernel modules, prebuilt binaries, Windows compilers), and
the ranked answer explain gives when a log shows only a symptom or a bare error name.

Every message below is real text: the program's own wording where its source prints it (the
``source`` of the signature that matches it names where), or a line from a public thread of a
*training* repository. Each is run through the wrappers pasted logs put around messages
(tests/test_explain_patterns.py: rank and worker prefixes, logging/glog/vLLM prefixes, docker
compose, Markdown quotes, prose in backticks or quotes, CRLF, word wrap and terminal cut at
80 columns).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import KnowledgeError, load as load_kb, parse
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "open-kernel-module-unsupported-gpu": [
        # open-gpu-kernel-modules nv-pci.c, one NVRM line each as dmesg prints them (pop-os/pop#3859)
        "NVRM: installed in this system is not supported by open",
        "NVRM: nvidia.ko because it does not include the required GPU",
    ],
    "secure-boot-rejects-module": [
        "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
        "modprobe: ERROR: could not insert 'nvidia_uvm': Required key not available",
        "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
    ],
    "mig-mode-change-blocked": [
        "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use by another client",
        "00000000:07:00.0 is currently being used by one or more other processes (e.g. CUDA application or a "
        "monitoring application such as another instance of nvidia-smi). Please first kill all processes using the "
        "device and retry the command or reboot the system to make MIG mode effective.",
        'level=debug msg="    Mode change pending: true"',
    ],
    "mps-unavailable": [
        "RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server",
        "failed call to cuInit: CUDA_ERROR_MPS_CONNECTION_FAILED",
    ],
    "onnxruntime-cuda-libs-missing": [
        "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcublasLt.so.11: cannot open shared object file: No such file or directory",
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 CreateExecutionProviderInstance] Failed to create "
        "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.",
    ],
    "nvidia-driver-capabilities-missing": [
        "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=utility my/image python infer.py",
        "          capabilities: [gpu, utility]",
    ],
    "docker-compose-too-old": [
        "services.gpu-jupyter.deploy.resources.reservations value Additional properties are not allowed "
        "('devices' was unexpected)",
        "unknown flag: --gpus",
    ],
    "driver-too-old-for-build": [
        # a compiled program, no torch: llama.cpp's ggml, CTranslate2 (faster-whisper), cuda_memtest
        "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version",
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version",
    ],
    "build-native-arch-without-gpu": [
        'CUDA_ARCHITECTURES is set to "native", but no GPU was detected.',
        "nvcc fatal : Unsupported gpu architecture 'compute_'",
    ],
    "windows-compiler-unusable": [
        "stlsoft.h(1287): fatal error C1083: Cannot open include file: 'stddef.h': No such file or directory",
        "cl : fatal error C1034: stdio.h: no include path set",
    ],
    "nccl-duplicate-gpu": [
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device a4000",
    ],
    "device-ordinal-out-of-range": [
        "RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1. Please "
        "use torch.load with map_location to map your storages to an existing device.",
    ],
    "flash-attn-arch-unsupported": [
        "RuntimeError: Error in model execution: FlashAttention only supports Ampere GPUs or newer.",
        "`flshattF@v2.3.6` is not supported because: requires device with capability > (8, 0) but your GPU has "
        "capability (7, 5) (too old)",
    ],
    "cuda-library-shadowed": [
        "ImportError: /usr/lib/x86_64-linux-gnu/libcublasLt.so.12: version `libcublasLt.so.12' not found "
        "(required by /venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12)",
    ],
    "library-missing": [
        "Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared object file: "
        "No such file or directory",
        "dso_loader.cc:64] Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found",
        'OSError: [WinError 126] The specified module could not be found. Error loading '
        '"C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
    ],
    "wsl-gpu-unavailable": [
        "Failed to initialize NVML: GPU access blocked by the operating system",
    ],
    "library-needs-executable-stack": [
        "ImportError: libctranslate2-d3638643.so.4.4.0: cannot enable executable stack as shared object requires: "
        "Invalid argument",
    ],
    "static-tls-exhausted": [
        "OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
    ],
    "library-wrong-format": [
        "OSError: /opt/vendor/lib/libvendor.so: wrong ELF class: ELFCLASS32",
    ],
    "gpu-arch-lacks-dtype": [
        "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
    ],
    "nouveau-holds-gpu": [
        "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).",
        "ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is incompatible with the "
        "NVIDIA driver",
    ],
    "gpu-hardware-fault": [
        "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    ],
    "no-nvidia-driver": [
        "bash: nvidia-smi: command not found",
    ],
    # the container runtime's own words: the container got no GPU, so no driver utilities
    "device-nodes-missing": [
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "nvidia-smi": executable '
        "file not found in $PATH: unknown",
    ],
    # the loader misses a symbol every torch exports: torch was not imported first (sweepc)
    "extension-imported-without-torch": [
        "ImportError: /x/site-packages/lltm_cpp.cpython-36m-x86_64-linux-gnu.so: undefined symbol: THPVariableClass",
    ],
    # SIGILL as the shell reports it; TensorFlow's cpu_feature_guard.cc (sweepc)
    "cpu-instruction-set-unsupported": [
        "Illegal instruction (core dumped)",
        "The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.",
    ],
}

test_family_message_in_every_wrapper, test_every_family_message_matches_a_signature_of_its_code = family_tests(FAMILIES)


def test_wrapped_nvrm_block_as_dmesg_prints_it():
    """The NVRM message spans four lines, each with its own prefix and timestamp."""
    log = ("[    5.101] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1c82)\n"
           "[    5.101] NVRM: installed in this system is not supported by open\n"
           "[    5.101] NVRM: nvidia.ko because it does not include the required GPU\n"
           "[    5.101] NVRM: System Processor (GSP).\n"
           "[    5.102] nvidia 0000:01:00.0: probe with driver nvidia failed with error -1\n"
           "[    5.102] NVRM: None of the NVIDIA devices were initialized.\n"
           "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")
    expl = explain_text(log)
    assert expl.root.code == "open-kernel-module-unsupported-gpu"
    # the probe failure and nvidia-smi's complaint are what it causes, not causes of their own
    assert {"nvidia-gpu-init-failed", "no-nvidia-driver"} <= set(expl.root.explains)


def test_onnxruntime_refines_the_loader_message_it_wraps():
    """The loader's 'cannot open shared object file' inside onnxruntime's provider bridge is
    onnxruntime's dependency problem; the same text elsewhere stays library-missing."""
    ort = ("2024-03-27 06:33:23.2 [E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_CUDA] "
           "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
           "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
           "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: "
           "No such file or directory\n")
    assert [c.code for c in explain_text(ort).candidates] == ["onnxruntime-cuda-libs-missing"]
    bare = "OSError: libcublasLt.so.11: cannot open shared object file: No such file or directory\n"
    assert explain_text(bare).root.code == "library-missing"


@pytest.mark.parametrize("log,code", [
    ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
     "driver-too-old-for-torch"),
    ("CUDA driver version is insufficient for CUDA runtime version\n", "driver-too-old-for-torch"),
    ("File \"/venv/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 314, in _lazy_init\n"
     "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n",
     "driver-too-old-for-torch"),
    ("[05/23/2021 18:30:06][computer][0]:ERROR: CUDA error: the provided PTX was compiled with an unsupported "
     "toolchain., line 148, file /var/tmp/cuda_memtest/src/cuda_memtest/cuda_memtest.cu\n", "driver-too-old-for-build"),
    ("CUDA error 35 at /tmp/llama-cpp-python/vendor/llama.cpp/ggml-cuda.cu:5522: CUDA driver version is "
     "insufficient for CUDA runtime version\n", "driver-too-old-for-build"),
])
def test_driver_too_old_for_torch_or_for_a_prebuilt_program(log, code):
    """torch's wording, a bare line or a Python traceback of torch keep the torch code; only a
    compiled program's own line (a .cu source, ggml, CTranslate2 ...) makes it a prebuilt binary's."""
    assert explain_text(log).root.code == code


def test_cpp_extension_arch_query_without_gpu_is_a_native_arch_build():
    log = ('  File "/venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 1960, in '
           '_get_cuda_arch_flags\n'
           '    capability = torch.cuda.get_device_capability()\n'
           '  File "/venv/lib/python3.10/site-packages/torch/cuda/__init__.py", line 298, in _lazy_init\n'
           '    torch._C._cuda_init()\n'
           'RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and '
           'installed a driver\n')
    tb = "Traceback (most recent call last):\n  File \"setup.py\", line 9, in <module>\n" + log
    assert explain_text(tb).root.code == "build-native-arch-without-gpu"
    assert explain_text(log.splitlines()[-1] + "\n").root.code == "no-nvidia-driver"


# -- symptoms and bare error names: a ranked answer, never silence ------------------------------

def test_bare_cuda_error_name_gets_ranked_causes():
    expl = explain_text("RuntimeError: CUDA error: misaligned address\n")
    assert expl.root.code == "cuda-error-unclassified" and expl.root.confidence == "symptom"
    assert {"no-nvidia-driver", "driver-library-mismatch"} <= set(expl.root.could_be)
    assert expl.fingerprint is None and expl.exit_code == 1


@pytest.mark.parametrize("line", [
    "cudaErrorIllegalAddress: an illegal memory access was encountered",
    "NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python, Graphics SM Warp Exception",
    "failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    "CUDA driver error: operation not supported",
])
def test_every_cuda_error_spelling_is_caught(line):
    assert explain_text(line + "\n").root.code == "cuda-error-unclassified"


def test_catch_all_gives_way_to_any_specific_entry():
    """The bare-name signature is a fallback: with a line that names the cause it stays out."""
    log = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
           "CUDA error: unspecified launch failure\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert "cuda-error-unclassified" not in codes and codes[0] == "torch-arch-not-supported"


def test_out_of_memory_is_not_an_environment_error():
    """An OOM is the program's size, not the stack: no cause, but it is an error (exit 1)."""
    expl = explain_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                        "RuntimeError: CUDA error: out of memory\n")
    assert "cuda-error-unclassified" not in [c.code for c in expl.candidates]
    assert expl.exit_code == 1


def test_cuda_error_causes_ranked_by_the_logs_context():
    """The same bare error, once with a WSL kernel in the log and once from an MPS setup: the
    cause whose clues the log holds comes first among what could cause it."""
    err = "RuntimeError: CUDA error: invalid argument\n"
    mps = explain_text("export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\n" + err)
    assert mps.root.code == "mps-unavailable" and mps.root.confidence == "inferred"
    assert "cuda-error-unclassified" in mps.root.explains
    plain = explain_text(err)
    assert plain.root.code == "cuda-error-unclassified"
    # 'operation not supported' has a code of its own (sweepe: torch's cudaMallocAsync backend,
    # tests/test_explain_patterns_sweepe.py); an MPS setup in the log still decides for MPS
    unsupported = "RuntimeError: CUDA error: operation not supported\n"
    assert explain_text(unsupported).root.code == "cuda-malloc-async-unsupported"
    mps = explain_text("export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\n" + unsupported)
    assert mps.root.code == "mps-unavailable"


@pytest.mark.parametrize("line,first", [
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run "
     "with NCCL_DEBUG=INFO for details), NCCL version 2.19.3", "nccl-shm-too-small"),
    ("ncclUnhandledCudaError: Call to CUDA function failed.", "nccl-p2p-blocked"),
    ("ncclInternalError: Internal check failed.", "nccl-ib-hca-wrong"),
    ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "nccl-duplicate-gpu"),
    ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
     "nccl-socket-ifname-wrong"),
])
def test_nccl_result_codes_name_their_own_causes(line, first):
    expl = explain_text(line + "\n")
    assert expl.root.code == "nccl-error" and expl.root.kind == "symptom"
    # could_be lists lower layers first; among NCCL's own causes the result code's come first
    nccl_layer = [c for c in expl.root.could_be if c.startswith("nccl-")]
    assert nccl_layer[0] == first, expl.root.could_be


def test_nccl_system_error_in_a_container_points_at_shm():
    log = ("docker run --gpus all -it trainer:latest\n"
           "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")
    expl = explain_text(log)
    assert expl.root.code == "nccl-shm-too-small" and expl.root.confidence == "inferred"


def test_crash_inside_a_gpu_library():
    log = ("Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.\n"
           "0x00007fffd1a2b3c4 in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1\n"
           "Fatal Python error: Segmentation fault in /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n")
    expl = explain_text(log)
    assert expl.root.code == "native-crash-in-gpu-library"
    assert {"library-loaded-twice", "driver-library-mismatch"} <= set(expl.root.could_be)


NEW_FAMILIES_HEALTHY = [
    "INFO 03-19 11:53:56 [cuda.py:234] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
    "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility my/image",
    "          capabilities: [gpu]",
    "NVIDIA_DRIVER_CAPABILITIES=all",
    "Enabled MIG Mode for GPU 00000000:07:00.0",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build",
    "Secure Boot is disabled; the nvidia module is signed with the enrolled MOK",
    "docker compose version: Docker Compose version v2.27.0",
]

test_healthy_lines_of_the_new_families_name_nothing = healthy_test(NEW_FAMILIES_HEALTHY)


# -- aliases: a code proposed for a cause that already had an entry ------------------------------

def test_aliases_resolve_to_the_code_that_meant_them():
    kb = load_kb()
    assert kb.canonical("cuda-device-index-invalid") == "device-ordinal-out-of-range"
    assert kb.canonical("flash-attn-gpu-too-old") == "flash-attn-arch-unsupported"
    assert kb.canonical("no-c-compiler") == "no-c-compiler"
    assert kb.get("cuda-toolkit-library-missing").code == "library-missing"


def test_alias_may_not_shadow_a_code_or_another_alias():
    base = {"layer": "gpu", "kind": "root", "severity": "blocking", "title": "t", "meaning": "m", "fix": "f"}
    with pytest.raises(KnowledgeError, match="already a code"):
        parse([("x.toml", {"a-code": {**base, "aliases": ["b-code"]}, "b-code": dict(base)})])
    with pytest.raises(KnowledgeError, match="already an alias"):
        parse([("x.toml", {"a-code": {**base, "aliases": ["c-code"]}, "b-code": {**base, "aliases": ["c-code"]}})])
    with pytest.raises(KnowledgeError, match="not a code name"):
        parse([("x.toml", {"a-code": {**base, "aliases": ["Not A Code"]}})])


def test_codes_command_shows_the_code_an_alias_names():
    out = subprocess.run([sys.executable, "-m", "stackpeel", "codes", "flash-attn-gpu-too-old", "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    (entry,) = json.loads(out.stdout)
    assert entry["code"] == "flash-attn-arch-unsupported" and "flash-attn-gpu-too-old" in entry["aliases"]


def test_could_be_says_which_context_ranked_a_cause_first():
    """How sure explain is: each cause the log's context points to carries the clue words
    found (JSON could_be_clues, and in the text), and the note says when nothing does."""
    err = "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
    bare = explain_text(err)
    assert bare.root.could_be_clues == () and "nothing in the log tells them apart" in " ".join(bare.notes)
    k8s = explain_text("kubectl logs trainer-0 -c worker\n" + err)
    assert k8s.root.code == "nccl-shm-too-small" and k8s.root.confidence == "inferred"
    symptom = next(c for c in k8s.candidates if c.code == "nccl-error")
    assert dict(symptom.could_be_clues)["nccl-shm-too-small"] == ("kubectl",)
    assert symptom.to_dict()["could_be_clues"] == {"nccl-shm-too-small": ["kubectl"]}
