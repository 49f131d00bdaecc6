"""apps25 (issue 8 item 3): applications' own messages (XLA, Ollama, ColossalAI, ggml), a shell's
own failure line, each answered by what it says and never by a GPU guess from its words.

Real text: openxla/xla GetGpuXlaClient (``FailedPrecondition("No visible GPU devices.")``), ollama
llm/memory.go (``slog.Debug("gpu has too little memory to allocate any layers", ...)``),
ColossalAI colossalai/moe/_operation.py (``print("If you want to activate cuda mode for MoE, please
install with cuda_ext!")``), ggml-cuda.cu ggml_cuda_error (``"  current device: %d, in function %s
at %s:%d"``), bash execute_cmd.c (``"%s: command not found"``, file_error ``"%s: %s"``), dash
src/exec.c (``"<arg0>: <lineno>: %s: %s"`` with errmsg's ``not found``), zsh Src/exec.c
(``"command not found: %s"``, ``"%e: %s"``).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text


def answer(text: str):
    return explain_text(text if text.endswith("\n") else text + "\n")


def codes(rep):
    return [c.code for c in rep.candidates]


PREFIXES = ["", "[rank0]: ", "2024-05-01 10:00:00,123 ", "(Worker pid=4242) "]

APPS = [
    ("jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.", "cuda-init-failed"),
    ("RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.",
     "cuda-init-failed"),
    ('time=2024-11-08T01:05:27.404+05:30 level=DEBUG source=memory.go:170 msg="gpu has too little memory to '
     'allocate any layers" id=0 library=cuda total="7.8 GiB" available="1.1 GiB"', "llm-gpu-layers-not-offloaded"),
    ("If you want to activate cuda mode for MoE, please install with cuda_ext!", "kernel-extension-not-built"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", APPS)
def test_an_applications_own_message_names_its_code(line, code, prefix):
    rep = answer(prefix + line)
    assert rep.exit_code == 1 and codes(rep)[:1] == [code], (prefix + line, codes(rep))


def test_the_colossalai_notice_never_outranks_the_real_failure():
    # it prints on every start without the compiled kernels: a fallback, as ds_report's lines
    rep = answer("If you want to activate cuda mode for MoE, please install with cuda_ext!\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert codes(rep)[0] == "gpu-out-of-memory", codes(rep)


def test_xla_healthy_cpu_notice_names_no_gpu_cause():
    # the same backend probe on a CPU-only jaxlib says NOT_FOUND, not FAILED_PRECONDITION
    rep = answer("Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform with name: \"rocm\"")
    assert "cuda-init-failed" not in codes(rep), codes(rep)


GGML = ("CUDA error: out of memory\n"
        "  current device: 0, in function alloc at /tmp/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:396\n"
        "  cuMemCreate(&handle, reserve_size, &prop, 0)\n")


def test_ggml_current_device_line_is_a_failure_but_the_cuda_error_keeps_the_cause():
    rep = answer(GGML)
    assert rep.exit_code == 1 and codes(rep)[0] == "gpu-out-of-memory", codes(rep)
    alone = answer("  current device: 1, in function ggml_cuda_mul_mat at ggml/src/ggml-cuda/ggml-cuda.cu:1781")
    assert alone.exit_code == 1, alone.exit_code


def test_a_count_of_devices_is_no_ggml_failure_line():
    rep = answer("ggml_cuda_init: found 1 CUDA devices: current device: 0")
    assert rep.exit_code == 0 and not rep.candidates, codes(rep)


# (line, the code it must rank first)
SHELL = [
    ("bash: ./train.sh: Permission denied", "shell-permission-denied"),
    ("sh: 1: ./run.sh: Permission denied", "shell-permission-denied"),
    ("zsh: permission denied: ./run.sh", "shell-permission-denied"),
    ("./launch.sh: line 3: ./train.sh: Permission denied", "shell-permission-denied"),
    ("bash: x: command not found", "shell-command-not-found"),
    ("-bash: /usr/bin/python: No such file or directory", "shell-command-not-found"),
    ("./launch.sh: line 7: torchrun: command not found", "shell-command-not-found"),
    ("/bin/sh: 1: accelerate: not found", "shell-command-not-found"),
    ("zsh: command not found: deepspeed", "shell-command-not-found"),
    ("bash: ./train.sh: /bin/bash^M: bad interpreter: No such file or directory", "shell-command-not-found"),
    # a GPU tool the shell cannot find: its own code, never the generic one
    ("/bin/sh: 1: nvcc: not found", "nvcc-missing"),
    ("zsh: command not found: nvcc", "nvcc-missing"),
    ("bash: nvidia-smi: command not found", "no-nvidia-driver"),
    ("zsh: command not found: nvidia-smi", "no-nvidia-driver"),
    ("bash: module: command not found", "env-module-not-found"),
    # a device node the shell was refused is the device's permission
    ("bash: /dev/nvidia0: Permission denied", "device-permission-denied"),
]
GPU_GUESSES = {"device-permission-denied", "triton-cache-unusable", "gpu-access-revoked", "device-nodes-missing",
               "install-dir-unwritable"}


@pytest.mark.parametrize("prefix", ["", "$ ", "  "])
@pytest.mark.parametrize("line,code", SHELL)
def test_a_shell_failure_line_is_a_failure_with_its_own_cause(line, code, prefix):
    rep = answer(prefix + line)
    assert rep.exit_code == 1 and codes(rep)[:1] == [code], (prefix + line, codes(rep))
    if code.startswith("shell-"):
        assert not GPU_GUESSES & set(codes(rep)), codes(rep)


def test_a_shell_failure_quoted_in_a_sentence_is_still_read():
    rep = answer("When I run it I get `bash: ./train.sh: Permission denied` every time")
    assert rep.exit_code == 1 and not GPU_GUESSES & set(codes(rep)), codes(rep)


def test_bashs_words_quoted_without_the_shells_name_are_read():
    # HIT-SCIR/Chinese-Mixtral-8x7B#23: the message quoted in a sentence, no "bash:" before it
    rep = answer("\u90fd\u51fa\u73b0\u201ctorchrun: command not found\u201d\u95ee\u9898")
    assert codes(rep)[:1] == ["shell-command-not-found"], codes(rep)
    # the lower-case retelling of ColossalAI's notice (hpcaitech/ColossalAI#774)
    rep = answer("it's all tips \"if you want to activate cuda mode for moe, please install with cuda_ext\"")
    assert codes(rep)[:1] == ["kernel-extension-not-built"], codes(rep)


def test_the_generic_shell_line_never_outranks_a_gpu_cause_in_the_same_log():
    rep = answer("bash: ./train.sh: Permission denied\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert codes(rep)[0] == "gpu-out-of-memory", codes(rep)


HEALTHY = [
    "run chmod +x train.sh to fix the Permission denied",
    "-rw-r--r-- 1 root root 120 Dec  4 10:00 train.sh",
    "-rwxr-xr-x 1 root root 120 Dec  4 10:00 run.sh",
    "Permission denied checks are skipped",
    "find: '/proc/1/map_files': Permission denied",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_the_same_words_in_no_shell_failure_stay_quiet(line):
    rep = answer(line)
    assert rep.exit_code == 0 and not rep.candidates, (line, codes(rep))


# item 3: numeric statuses (stackpeel.explain.numbers reads the number; the line must be a failure)
NUMBERED = [
    # Kubernetes' `kubectl describe pod` (Last State: Terminated ... Exit Code: 137), a debugger's
    # or IDE's capitalised report of Windows' NTSTATUS
    ("    Exit Code:    137", None),
    ("Exit code: 0xC0000005", None),
    ("Exit status: 139", None),
    ("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 137.", None),
    ("Process finished with exit code -1073741795 (0xC000001D)", "cpu-instruction-set-unsupported"),
    ("returned non-zero exit status 132.", "cpu-instruction-set-unsupported"),
    ("Triton Error [CUDA]: CUDA Error 222", "ptxas-newer-than-driver"),
    ("RuntimeError: CUDA error 35", "driver-too-old-for-torch"),
    ("cudaGetDeviceCount returned 100", "no-nvidia-driver"),
    ("nvmlInit failed with error code 9", "no-nvidia-driver"),
    ("cuInit returned 999", "cuda-init-failed"),
]


@pytest.mark.parametrize("line,code", NUMBERED)
def test_a_numeric_status_is_a_failure_and_read_by_its_number(line, code):
    rep = answer(line)
    assert rep.exit_code == 1, (line, rep.exit_code)
    if code:
        assert codes(rep)[:1] == [code], (line, codes(rep))


@pytest.mark.parametrize("line", [
    "Exit Code: 0", "Exit code: 0x0", "Exit status: 0", "epoch 46 loss 0.31", "step 999 loss 2.1",
    "Epoch 137/200: exit code path covered", "trained 100 steps, 9 GPUs, 35 layers",
])
def test_a_number_that_is_no_status_stays_quiet(line):
    rep = answer(line)
    assert rep.exit_code == 0 and not rep.candidates, (line, codes(rep))
