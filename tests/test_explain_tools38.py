"""tools38: a signature that does not count beside a contradicting fact (``unless``), a bound on the
compute capability of the GPUs a log names (``gpu_cc`` in ``requires``/``unless``), and cuDNN's
CUDNN_STATUS_ARCH_MISMATCH (``cudnn-gpu-arch-unsupported``). docs/dev/KNOWLEDGE.md, docs/dev/tools38.md.
"""
from __future__ import annotations

import pytest

from stackpeel import combinations, knowledge
from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import Requires
from stackpeel.knowledge import KnowledgeError

from explain_helpers import codes_of as codes, first


# ----------------------------------------------------------------------------- 1. unless

WHISPER = ("/usr/lib/python3.10/site-packages/whisper/transcribe.py:114: UserWarning: FP16 is not supported "
           "on CPU; using FP32 instead\n  warnings.warn(\"FP16 is not supported on CPU; using FP32 instead\")")
CT2 = ("[2024-03-06 11:43:38.305] [ctranslate2] [thread 2816] [warning] The compute type inferred from the saved "
       "model is float16, but the target device or backend do not support efficient float16 computation. The "
       "model weights have been automatically converted to use the float32 compute type instead.")
WARNINGS = [(WHISPER, "torch-cpu-only-build"), (CT2, "gpu-arch-lacks-dtype")]

NVIDIA_SMI = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |
+-------------------------------+----------------------+----------------------+"""

#: a GPU fact the warning needs (tools37's requires)
GPU_SHOWN = ["GPU: NVIDIA GeForce RTX 3080", "I have an RTX 4090 but it is very slow", NVIDIA_SMI]

#: the user chose the CPU: the warning says nothing about a missing GPU
CPU_CHOSEN = [
    "$ whisper audio.mp3 --device cpu --model medium",
    "$ whisper audio.mp3 --device=cpu --model medium",
    "$ whisper audio.mp3 --device 'cpu'",
    "model = WhisperModel('small', device='cpu', compute_type='int8')",
    'model = WhisperModel("large-v2", device="cpu")',
    'pipe = pipeline("automatic-speech-recognition", device = "cpu")',
    "python transcribe.py device=cpu model=base",
    'CUDA_VISIBLE_DEVICES="" python transcribe.py',
    "CUDA_VISIBLE_DEVICES=-1 python transcribe.py",
]

#: no CPU chosen: near misses of the words above
NOT_CPU_CHOSEN = [
    "$ whisper audio.mp3 --device cuda --model medium",
    'model = WhisperModel("large-v2", device="cuda", compute_type="float16")',
    'device = "cuda" if torch.cuda.is_available() else "cpu"',
    "x = x.cpu().numpy()",
    "CUDA_VISIBLE_DEVICES=0 python transcribe.py",
    "cpu_offload=True, device_map='auto'",
    "the cpu is an i9, --device not given",
]


@pytest.mark.parametrize("gpu", GPU_SHOWN)
@pytest.mark.parametrize("warning,code", WARNINGS)
def test_warning_beside_a_gpu_still_names_its_cause(warning, code, gpu):
    assert first(f"{gpu}\n{warning}") == code


@pytest.mark.parametrize("cpu", CPU_CHOSEN)
@pytest.mark.parametrize("gpu", GPU_SHOWN)
@pytest.mark.parametrize("warning,code", WARNINGS)
def test_cpu_chosen_on_purpose_silences_the_warning(warning, code, gpu, cpu):
    assert code not in codes(f"{gpu}\n{cpu}\n{warning}")


@pytest.mark.parametrize("other", NOT_CPU_CHOSEN)
@pytest.mark.parametrize("warning,code", WARNINGS)
def test_near_misses_of_the_cpu_choice_do_not_silence(warning, code, other):
    assert first(f"GPU: NVIDIA GeForce RTX 3080\n{other}\n{warning}") == code


def test_cpu_choice_does_not_hide_a_failure_elsewhere():
    text = ("$ whisper a.mp3 --device cpu\n" + WHISPER + "\nTraceback (most recent call last):\n"
            "  File \"x.py\", line 1, in <module>\nFileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'")
    assert "torch-cpu-only-build" not in codes(text)
    assert first(text) == "ffmpeg-not-found"


# ----------------------------------------------------------------------------- 2. gpu_cc

#: the GPU names the brief lists, as logs print them, and their compute capability (NVIDIA's CUDA
#: GPUs list; knowledge/gpus.toml)
NAMES = [
    ("|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |", "7.5"),
    ("GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-8f6c)", "7.0"),
    ("torch.cuda.get_device_name(0): NVIDIA GeForce GTX 1080 Ti", "6.1"),
    ("GPU: NVIDIA GeForce RTX 3090", "8.6"),
    ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1234)", "8.0"),
    ("|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |", "9.0"),
    ("GPU 0: NVIDIA L4 (UUID: GPU-5)", "8.9"),
    ("'NVIDIA GeForce RTX 4090'", "8.9"),
    ("Device 0: NVIDIA GeForce RTX 5090, compute capability 12.0, VMM: yes", "12.0"),
    ("NVIDIA Jetson Nano Developer Kit", "5.3"),
    ("Jetson TX2", "6.2"),
    ("Quadro P4000", "6.1"),
    ("NVIDIA Jetson AGX Orin", "8.7"),
]


@pytest.mark.parametrize("line,cc", NAMES)
def test_gpu_names_give_their_capability(line, cc):
    assert combinations.facts_from_text(line).versions.get("gpu_cc") == [cc]


@pytest.mark.parametrize("line", [
    "SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher.",
    "requires GPUs with compute capability 8.0+",
    "jetson nano",  # no vendor casing: prose, not a device name
])
def test_requirements_are_no_capability_fact(line):
    assert not combinations.facts_from_text(line).versions.get("gpu_cc")


def test_a_capability_the_log_states_is_still_read():
    assert combinations.facts_from_text("Your Tesla T4 GPU has compute capability 7.5.").versions["gpu_cc"] == ["7.5"]


FA = ("Traceback (most recent call last):\n  File \"train.py\", line 80, in forward\n"
      "    out = flash_attn_func(q, k, v, causal=True)\n"
      "RuntimeError: FlashAttention only supports Ampere GPUs or newer.")

BLACKWELL = [
    "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1a2b)",
    "|   0  NVIDIA B200                    On  | 00000000:1B:00.0 Off |                    0 |",
    "torch.cuda.get_device_name(0) -> 'NVIDIA RTX PRO 6000 Blackwell Workstation Edition'",
    "UserWarning: NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible",
]
OLDER = [
    "",
    "GPU 0: Tesla T4 (UUID: GPU-1)",
    "Quadro RTX 5000",
    "GPU 0: Tesla V100-SXM2-16GB",
    "GPU 0: NVIDIA H100 80GB HBM3",
    "NVIDIA GeForce RTX 3090",
    "It took 5090 seconds",  # a number, no GPU
]


@pytest.mark.parametrize("gpu", BLACKWELL)
def test_flash_attn_ampere_line_on_blackwell_is_a_release_without_the_gpu(gpu):
    found = codes(f"{gpu}\n{FA}")
    assert found[0] == "extension-arch-missing"
    assert "flash-attn-arch-unsupported" not in found


@pytest.mark.parametrize("gpu", OLDER)
def test_flash_attn_ampere_line_elsewhere_stays_the_gpu_too_old(gpu):
    found = codes(f"{gpu}\n{FA}")
    assert found[0] == "flash-attn-arch-unsupported"
    assert "extension-arch-missing" not in found


def _requires(raw: dict) -> Requires:
    kb = knowledge.parse([("t.toml", {"some-code": {
        "layer": "torch", "kind": "root", "severity": "blocking", "title": "t", "meaning": "m", "fix": "f",
        "log": [{"id": "s", "patterns": ["Something went wrong here"], "requires": raw}]}})])
    req = kb.codes["some-code"].logs[0].requires
    return Requires(None, req.facts, combinations.parse_specifier(req.gpu_cc) if req.gpu_cc else None)


def test_capability_bound_holds_for_any_gpu_the_log_names():
    below8 = _requires({"gpu_cc": "<8.0"})
    t4_and_a100 = combinations.facts_from_text("GPU 0: Tesla T4\nGPU 1: NVIDIA A100-SXM4-40GB")
    assert below8.holds("", "", t4_and_a100)
    assert not below8.holds("", "", combinations.facts_from_text("GPU 0: NVIDIA A100-SXM4-40GB"))
    assert not below8.holds("", "", combinations.facts_from_text("no GPU named"))
    band = _requires({"gpu_cc": ">=7.0,<8.0"})
    assert band.holds("", "", combinations.facts_from_text("Tesla V100"))
    assert not band.holds("", "", combinations.facts_from_text("GeForce GTX 1080"))


# ----------------------------------------------------------------------------- loader

def _load(log: dict):
    data = {"some-code": {"layer": "torch", "kind": "root", "severity": "blocking", "title": "t", "meaning": "m",
                          "fix": "f", "log": [dict({"id": "s", "patterns": ["Something went wrong here"]}, **log)]}}
    if "cpu-ish" in repr(log):  # declared only where named (an unused context is refused)
        data["context"] = {"cpu-ish": {"pattern": "--device cpu", "means": "m"}}
    return knowledge.parse([("t.toml", data)])


@pytest.mark.parametrize("log", [
    {"unless": {"context_name": "cpu-ish"}},
    {"unless": {"context": "--device cpu"}, "requires": {"context_name": "cpu-ish"}},
    {"requires": {"gpu_cc": "<8.0"}},
    {"requires": {"gpu_cc": ">=7.0,<8.0"}, "unless": {"context_name": "cpu-ish"}},
    {"unless": {"gpu_cc": ">=10.0"}},
    {"requires": {"context": "x{4}", "facts": ["gpus"], "gpu_cc": "==7.5"}},
])
def test_loader_accepts(log):
    sig = _load(log).codes["some-code"].logs[0]
    assert (sig.requires is not None) == ("requires" in log) and (sig.unless is not None) == ("unless" in log)


def test_a_context_only_unless_names_counts_as_used():
    assert _load({"unless": {"context_name": "cpu-ish"}}).codes["some-code"].logs[0].unless.name == "cpu-ish"


@pytest.mark.parametrize("log", [
    {"unless": {}},
    {"unless": "cpu"},
    {"unless": {"context": "a", "context_name": "cpu-ish"}},
    {"unless": {"context_name": "no-such-context"}},
    {"unless": {"context": "(unclosed"}},
    {"unless": {"other": 1}},
    {"unless": {"facts": []}},
    {"unless": {"facts": ["gpus"]}},  # facts stand beside a context (tools37)
    {"unless": {"context": "--device cpu", "facts": []}},
    {"unless": {"facts": ["cuda"]}},
    {"requires": {"gpu_cc": "8.0"}},
    {"requires": {"gpu_cc": "<8"}},
    {"requires": {"gpu_cc": "<8.0.1"}},
    {"requires": {"gpu_cc": ">>8.0"}},
    {"requires": {"gpu_cc": "~=8.0"}},
    {"requires": {"gpu_cc": 8.0}},
    {"requires": {"gpu_cc": "<8.0,>=7.0,<9.0,>1.0"}},
    {"unless": {"gpu_cc": "sm_80"}},
])
def test_loader_refuses(log):
    with pytest.raises(KnowledgeError):
        _load(log)


def test_built_in_entries():
    kb = knowledge.load()
    logs = {s.id: s for c in kb.codes.values() for s in c.logs}
    assert logs["whisper-fp16-on-cpu"].unless.name == "cpu-chosen"
    assert logs["ctranslate2-float16-converted-to-float32"].unless.name == "cpu-chosen"
    assert logs["flash-attn-ampere-only"].unless.gpu_cc == ">=10.0"
    assert logs["flash-attn-ampere-only-on-blackwell"].requires.gpu_cc == ">=10.0"
    assert logs["flash-attn-ampere-only-on-blackwell"].code == "extension-arch-missing"


# ----------------------------------------------------------------------------- 3. cuDNN ARCH_MISMATCH

CUDNN_ARCH = [
    # torch (aten/src/ATen/cudnn/Exceptions.h)
    "RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH",
    # torch with cuDNN 9
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
    # TensorFlow's stream executor
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_ARCH_MISMATCH",
    # cuDNN's mnistCUDNN sample, Caffe's CUDNN_CHECK
    "Testing single precision\nCUDNN failure\nError: CUDNN_STATUS_ARCH_MISMATCH\nmnistCUDNN.cpp:394\nAborting...",
    "F0309 14:17:01.1 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS (6 vs. 0)  "
    "CUDNN_STATUS_ARCH_MISMATCH",
    # waifu2x#176's title
    "can't user cuDNN backend(CUDNN_STATUS_ARCH_MISMATCH)",
    # the cuDNN frontend's string
    "RuntimeError: cudnn_frontend: execute failed: The function requires a feature absent from the current GPU "
    "device.",
]


@pytest.mark.parametrize("text", CUDNN_ARCH)
def test_cudnn_arch_mismatch_is_the_gpu_older_than_cudnn(text):
    assert first(text) == "cudnn-gpu-arch-unsupported"


@pytest.mark.parametrize("text", [
    # the frontend's per-engine note: it tries the next engine
    "Warning: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH; Reason: FORT_NATIVE_8X engine requires Ampere or newer",
    # a program's own source quoting the name
    '        if "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH" in str(exc):',
    # other cuDNN statuses
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED",
    # other libraries' arch mismatches
    "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx(...)`",
    "cuBLAS error 8 at ggml-cuda.cu:1234: the function requires a feature absent from the device",
    "CURAND_STATUS_ARCH_MISMATCH",
])
def test_cudnn_arch_mismatch_near_misses(text):
    assert "cudnn-gpu-arch-unsupported" not in codes(text)


def test_cudnn_arch_mismatch_explains_the_cudnn_symptom():
    kb = knowledge.load()
    assert "cudnn-gpu-arch-unsupported" in kb.codes["cudnn-call-failed"].caused_by
    assert kb.codes["cudnn-gpu-arch-unsupported"].kind == "root"


# ----------------------------------------------------------------------------- 4. torch's OOM numbers

# c10/cuda/CUDACachingAllocator.cpp's message, torch >= 2.1 ("capacty" in 2.1), with the processes
# NVML lists before or after this process's line, and the older "(GPU 0; X total capacity; ...)" form
HELD = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
    "of which 3.12 MiB is free. Process 1234 has 18.20 GiB memory in use. Process 5678 has 5.40 GiB memory in use. "
    "Including non-PyTorch memory, this process has 5.40 GiB memory in use. Of the allocated memory 4.90 GiB is "
    "allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 79.11 GiB "
    "of which 1.93 GiB is free. Including non-PyTorch memory, this process has 6.17 GiB memory in use. Process 998 has "
    "71.00 GiB memory in use. Of the allocated memory 5.61 GiB is allocated by PyTorch",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 690.00 MiB (GPU 0; 39.59 GiB total capacity; "
    "973.79 MiB already allocated; 474.62 MiB free; 1.72 GiB reserved in total by PyTorch) If reserved memory is >> "
    "allocated memory try setting max_split_size_mb to avoid fragmentation.",
]
OWN = [
    # the job itself fills the GPU
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.15 GiB. GPU 0 has a total capacity of 39.56 GiB "
    "of which 6.80 GiB is free. Including non-PyTorch memory, this process has 36.61 GiB memory in use. Of the "
    "allocated memory 31.66 GiB is allocated by PyTorch, and 4.11 GiB is reserved by PyTorch but unallocated.",
    # another process holds some, less than half the GPU
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 298.00 MiB. GPU 0 has a total capacity of 44.39 GiB "
    "of which 12.06 MiB is free. Process 6324 has 8.06 GiB memory in use. Including non-PyTorch memory, this process "
    "has 36.30 GiB memory in use.",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.53 GiB already "
    "allocated; 18.56 MiB free; 9.80 GiB reserved in total by PyTorch)",
    # the older form cannot see the process's memory outside torch's allocator: a wider margin
    # (instruct-nerf2nerf#33: 13.5 of 23.7 GiB outside torch's reserve, tiny-cuda-nn's)
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 988.00 MiB (GPU 0; 23.70 GiB total capacity; 8.13 GiB "
    "already allocated; 14.50 MiB free; 9.20 GiB reserved in total by PyTorch)",
    # no numbers
    "RuntimeError: CUDA error: out of memory",
]


@pytest.mark.parametrize("text", HELD)
def test_oom_numbers_show_memory_held_by_other_processes(text):
    found = explain_text(text).to_dict()["candidates"]
    assert found[0]["code"] == "gpu-memory-held-by-other-processes"
    assert found[0]["basis"] == "facts"


@pytest.mark.parametrize("text", OWN)
def test_oom_numbers_of_the_job_itself_stay_out_of_memory(text):
    found = codes(text)
    assert found[0] == "gpu-out-of-memory"
    assert "gpu-memory-held-by-other-processes" not in found


def test_oom_numbers_are_read():
    from stackpeel.explain.facts import torch_oom_numbers
    other = combinations.facts_from_text(HELD[0]).other["torch_oom"]
    assert torch_oom_numbers(other)[:3] == pytest.approx((23.65, 3.12 / 1024, 5.40))
    old = combinations.facts_from_text(HELD[2]).other["torch_oom"]
    assert torch_oom_numbers(old)[:3] == pytest.approx((39.59, 474.62 / 1024, 2.72))
    assert torch_oom_numbers("") is None

