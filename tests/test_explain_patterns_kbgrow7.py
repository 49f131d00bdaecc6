"""Issue 8 items 2, 3 and 7 (kbgrow7): what explain missed on 42 fresh training logs of
infrastructure users (docker and the NVIDIA container toolkit, Kubernetes, Slurm and module
systems, Singularity, WSL 2, conda/pip installs, driver installs with DKMS and Secure Boot,
Jetson; tests/corpus/explain/*.log with ``# collected: training-2026-12-01m``), fixed by class.

- Programs' messages nobody had harvested, with their siblings of the same source: DKMS's
  (``Your kernel headers for kernel ... cannot be found``, ``Build of ....ko failed for``,
  ``Autoinstall on ... failed for module(s)``) and the distributions' kernel hooks that run it
  (Void's ``Building DKMS module: ...  FAILED!``, Arch's ``Missing ... kernel headers for
  module``); Singularity/Apptainer ``--nv`` (``Could not find any NVIDIA libraries on this
  host!``); Lmod and Environment Modules (new code ``env-module-not-found``); conda's own plan
  for the CPU builds of the pytorch channel (``py3.8_cpu_0``, ``pytorch-mutex-1.0-cpu``,
  ``cpuonly``); the container runtime's ``exec: "nvidia-smi": executable file not found``.
- Wrappers markdown eats: a libstdc++/glibc version node pasted without its quotes.
- Where a message's cause depends on where it runs, the log's context decides: torch's ``Found
  no NVIDIA driver`` under WSL 2 is the WSL GPU bridge, in a container the GPU not passed in;
  ``nvidia-smi: command not found`` next to a ``docker run`` line is the GPU not passed in; the
  container hook's ``driver error`` under WSL is WSL; ``libcuda.so: cannot open`` under WSL is
  WSL's libcuda links; a CUDA library missing on a Jetson is a torch wheel built for another
  JetPack (new code ``torch-wheel-wrong-jetpack``), CUDA unavailable on a Jetson is the CPU-only
  wheel. A refinement whose code has clues reads the log's clue lines wherever they are.
- Users' words: an installer that "suggested" / "only installs" the CPU version, a job "killed
  abnormally", WSL that "failed to identify" the driver.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it), as the programs print them
FAMILIES = {
    "env-module-not-found": [
        # Lmod messageDir/en.lua e_Failed_Load, e_Failed_Load_2 (and its older wording)
        'Lmod has detected the following error:  The following module(s) are unknown: "cuda/12.4"',
        'Lmod has detected the following error: These module(s) or extension(s) exist but cannot be loaded '
        'as requested: "cuda/12.4"',
        'Lmod has detected the following error:  These module(s) exist but cannot be loaded as requested: "cudnn"',
        # Environment Modules 3.2 (ModuleCmd_Load.c) and 4/5 (modulecmd.tcl)
        "ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'cuda/11.8'",
        "cuda(4):ERROR:105: Unable to locate a modulefile for 'cuda/6.0'",
        "ERROR: Unable to locate a modulefile for 'cudatoolkit/12.1'",
        # bash, in a batch script whose shell never initialised the module system
        "/var/spool/slurmd/job4242/slurm_script: line 5: module: command not found",
    ],
    "nvidia-module-missing-for-kernel": [
        # dkms (dkms.in): prepare_kernel die 21, actual_build report_build_problem 7, autoinstall
        "Error! Your kernel headers for kernel 6.8.0-45-generic cannot be found at /lib/modules/6.8.0-45-generic/build "
        "or /lib/modules/6.8.0-45-generic/source.",
        "Error! Build of nvidia.ko failed for: 6.14.0-1-default (x86_64)",
        "Autoinstall on 6.8.0-45-generic failed for module(s) nvidia(10).",
        # Void Linux srcpkgs/dkms/files/kernel.d/dkms.postinst
        "Building DKMS module: nvidia-570.133.07... FAILED!",
        "Installing DKMS module: nvidia-dkms-535.183.01... FAILED!",
        "WARNING: cannot build DKMS modules! missing kernel headers package for 6.14.0_1.",
        # Arch Linux's dkms pacman hook
        "==> ERROR: Missing 6.2.1-zen1-1-zen kernel headers for module nvidia/525.89.02.",
    ],
    "no-nvidia-driver": [
        # SingularityCE/Apptainer cmd/internal/cli/actions_linux.go (--nv), old and new wording
        "WARNING: Could not find any NVIDIA libraries on this host!",
        "WARNING: Could not find any nv libraries on this host!",
    ],
    "torch-cpu-only-build": [
        # conda's transaction plan, download table and `conda list` for the pytorch channel's CPU builds
        "  pytorch            pytorch/win-64::pytorch-1.10.0-py3.8_cpu_0",
        "  pytorch-mutex      pytorch/noarch::pytorch-mutex-1.0-cpu",
        "  cpuonly            pytorch/noarch::cpuonly-2.0-0",
        "    pytorch-mutex-1.0          |              cpu           3 KB  pytorch",
        "pytorch                   1.12.1              py3.8_cpu_0    pytorch",
    ],
    "device-nodes-missing": [
        # runc relayed by docker (newer wording of the exec failure)
        'docker: Error response from daemon: failed to create task for container: failed to create shim task: '
        'OCI runtime create failed: runc create failed: unable to start container process: exec: "nvidia-smi": '
        "executable file not found in $PATH: unknown.",
    ],
    "libstdcxx-too-old": [
        # glibc's 'version `%s' not found' with the quotes a Markdown paste ate
        "ImportError: /miniconda3/envs/x/lib/libstdc++.so.6: version GLIBCXX_3.4.29 not found (required by ./ext.so)",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_new_code_is_sourced_and_says_what_to_do = sourced_roots_test(["env-module-not-found"])


def test_the_jetson_wheel_code_is_reached_by_the_loaders_message_and_says_what_to_do():
    """No program prints a Jetson-only message: the loader's 'cannot open shared object file' for a
    CUDA library is refined to it where the log says Jetson (the refinement is its evidence)."""
    from stackpeel.knowledge import load as load_kb

    entry = load_kb().get("torch-wheel-wrong-jetpack")
    assert entry.kind == "root" and entry.fix and entry.source and entry.links and entry.clues
    assert entry.commands and entry.remedy.get("automatic") is False
    refined = [sig for code in load_kb().codes.values() for sig in code.logs
               if any(r.code == "torch-wheel-wrong-jetpack" for r in sig.refine)]
    assert refined and all(sig.source for sig in refined)


# Users' words -> the code they name, each as a training thread wrote it
USERS_WORDS = {
    # SupreethN/HOISTFormer#3, fastai/fastai_old#48, ai4d-iasc/trixie#73
    "This command installs cpu version instead of cuda.": "torch-cpu-only-build",
    "I tried  `conda install -c pytorch pytorch-nightly` and it suggested cpu version for installation.":
        "torch-cpu-only-build",
    "The wiki page has this line that currently only installs cpu versions of pytorch:": "torch-cpu-only-build",
    # ArjunaCluster/ArjunaUsers#52
    "Observed Behavior: job killed abnormally": "host-oom-killed",
    # microsoft/WSL#6014
    "But WSL just failed to identify both NVIDIA driver and CUDA.": "wsl-gpu-unavailable",
}



test_users_words_name_the_cause = users_words_test(USERS_WORDS)


# Healthy lines of the same programs and phrasings: a plan, a notice, a success, a CUDA build
HEALTHY = [
    "Installing the CPU version of torch for the docs build (no GPU needed)",
    "Successfully installed torch-2.13.0+cpu",
    "module load cuda/12.4 gcc/12.2.0",
    'Lmod is automatically replacing "gcc/11.2.0" with "gcc/12.2.0".',
    "Building DKMS module: nvidia-570.133.07... done.",
    "Installing DKMS module: nvidia-570.133.07... done.",
    "Autoinstall on 6.8.0-45-generic succeeded for module(s) nvidia.",
    "INFO:    Setting 'NVIDIA_VISIBLE_DEVICES=all' to emulate legacy GPU binding.",
    "  pytorch            pytorch/linux-64::pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0",
    "  pytorch-mutex      pytorch/noarch::pytorch-mutex-1.0-cuda",
    "torch.cuda.is_available(): True, 1 device (Orin)",
    "wsl --update done; nvidia-smi lists the RTX 4090 inside WSL",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


# --- the log's context decides ------------------------------------------------------------------

def _top(text):
    return [c.code for c in explain_text(text).candidates]


FOUND_NO_DRIVER = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                   "and installed a driver from http://www.nvidia.com/Download/index.aspx")


def test_torchs_found_no_driver_alone_is_no_driver():
    assert _top(FOUND_NO_DRIVER + "\n")[:1] == ["no-nvidia-driver"]


@pytest.mark.parametrize("context,code", [
    ("Linux DESKTOP-5A67SBM 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux", "wsl-gpu-unavailable"),
    ("I'm using Ubuntu 22.04 in WSL 2 on Windows 11", "wsl-gpu-unavailable"),
    ("$ docker run -it --rm myimage:latest python train.py", "device-nodes-missing"),
])
def test_torchs_found_no_driver_in_context(context, code):
    # microsoft/WSL#6014: the WSL words are lines away from torch's message
    text = "\n".join([context, "", "some output", "more output", "", FOUND_NO_DRIVER, "", "thanks"]) + "\n"
    assert _top(text)[:1] == [code], _top(text)


def test_nvidia_smi_not_found_next_to_a_plain_docker_run_is_the_gpu_not_passed_in():
    # anibali/docker-pytorch#27
    text = ("after connected to container with command  `docker run -it anibali/pytorch:1.4.0-cuda10.1 sh`\n"
            "both nvcc and nvidia-smi not found.\n")
    assert _top(text)[:1] == ["device-nodes-missing"], _top(text)
    assert _top("bash: nvidia-smi: command not found\n")[:1] == ["no-nvidia-driver"]


CLI_DRIVER_ERROR = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting "
                    "container process caused: process_linux.go:459: container init caused: Running hook #0:: error "
                    "running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: driver "
                    "error: failed to process request: unknown.")


def test_the_container_hooks_driver_error_under_wsl_is_wsl():
    # docker/for-win#10379: the Windows default hostname of the WSL prompt says where it runs
    text = f"root@DESKTOP-5A67SBM:/home/anurag# docker run --rm --gpus all nvidia/cuda:11.0-base nvidia-smi\n{CLI_DRIVER_ERROR}\n"
    assert _top(text)[:1] == ["wsl-gpu-unavailable"], _top(text)
    assert _top(CLI_DRIVER_ERROR + "\n")[:1] == ["nvidia-container-cli-driver-error"]


def test_libcuda_cannot_open_under_wsl_is_wsls_links():
    line = "OSError: libcuda.so: cannot open shared object file: No such file or directory"
    assert _top(line + "\n")[:1] == ["libcuda-missing"]
    # bitsandbytes-foundation/bitsandbytes#17 (WSL on the line) and the WSL kernel far from it
    assert _top("WSL: " + line + "\n")[:1] == ["wsl-libcuda-not-linked"]
    far = "uname -r: 5.15.90.1-microsoft-standard-WSL2\n" + "step\n" * 12 + line + "\n"
    assert _top(far)[:1] == ["wsl-libcuda-not-linked"], _top(far)


LIBCUDART = "ImportError: libcudart.so.10.2: cannot open shared object file: No such file or directory"


def test_a_cuda_library_missing_on_a_jetson_is_a_wheel_for_another_jetpack():
    # NVIDIA-AI-IOT/jetracer#88: the board is named ten lines after the traceback
    text = ("  File \"/usr/local/lib/python3.6/dist-packages/torch/__init__.py\", line 81, in <module>\n"
            "    from torch._C import *\n" + LIBCUDART + "\n" + "\n" * 8 +
            "**Hardware**:\nJetson Nano B01\n")
    assert _top(text)[:1] == ["torch-wheel-wrong-jetpack"], _top(text)
    assert _top(LIBCUDART + "\n")[:1] == ["library-missing"]


def test_cuda_unavailable_on_a_jetson_is_the_cpu_only_wheel():
    # Lmy0217/PyTorch-aarch64#3
    text = "I successfully install the torch on my jetson nano(Jetpack 4.4 [L4T 32.4.3]),but cuda.is_available() returns false\n"
    assert _top(text)[:1] == ["torch-cpu-only-build"], _top(text)
    assert _top("cuda.is_available() returns false\n")[:1] == ["torch-cuda-unavailable"]
