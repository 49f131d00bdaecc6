"""The cause stated in the user's own sentence (docs/dev/users-words.md; the miss study's class A3).

One miss in seven holds the cause in the reporter's words, often the issue's title or first
sentence, while the pasted error shows only a symptom: *no disk space*, *The openai-whisper package
installed Torch without the CUDA version*, *after your computer wakes up from suspension ... cuda
stops working*, *NODE_RANK causes DDP jobs to hang*. Each root code users state in words has a
signature ``said-<code>`` (weight 1, ``said = true``) that reads such a sentence. These tests hold:

* a statement names its code first, as a title line, as a sentence above a pasted traceback and as
  a Markdown quote;
* a question or a guess in the same words (*Is Secure Boot enabled?*, *maybe the driver is too
  old*) fires no statement rule;
* a program's own line that names another root cause outranks the user's statement, in either
  order; a statement still names the deeper cause of a line that lists it (``could_be``);
* healthy sentences with the same words (*freed disk space*, *plenty of RAM*) name nothing.
"""

from __future__ import annotations

from typing import List, Tuple

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load

#: code -> (statements that name it, questions and guesses in the same words)
CASES = {
    "disk-full": (["Training stops at validation: not enough disk space on the server",
                   "The root partition was full, so the checkpoint could not be written.",
                   "磁盘满了，保存模型的时候报错"],
                  ["Could it be that there is not enough disk space?", "Maybe the root partition was full"]),
    "host-oom-killed": (["When I compile flash attention it exaust the RAM and the PC crashes",
                         "The script ran out of system memory while loading the dataset.",
                         "The OOM killer killed the process during tokenization",
                         "加载数据的时候内存爆了，进程直接退出"],
                        ["Did the OOM killer kill the process?", "Maybe it ran out of system memory"]),
    "torch-cpu-only-build": (["The openai-whisper package installed Torch without the CUDA version",
                              "Running pip install torch installed the CPU version of torch.",
                              "It turned out that my torch is a CPU-only build",
                              "pytorch装成了CPU版本"],
                             ["Did pip install the CPU version of torch?", "Perhaps torch is a CPU-only build"]),
    "framework-cpu-only-build": (["Docker build now installs CPU-only jaxlib (CUDA wheel 0.4.34 removed)",
                                  "I had installed onnxruntime instead of onnxruntime-gpu.",
                                  "llama-cpp-python was built without cuBLAS support"],
                                 ["Is it a CPU-only jaxlib?", "Maybe llama-cpp-python was built without cuBLAS"]),
    "kernel-library-not-installed": (["Training ran the gated DeltaNet layers on the fp32 torch chunk loop because "
                                      "flash-linear-attention was not installed",
                                      "I forgot to install causal-conv1d before loading the model."],
                                     ["Is it because flash-linear-attention is not installed?",
                                      "Maybe the model is slow because causal-conv1d was not installed"]),
    "driver-too-old-for-torch": (["My NVIDIA driver is too old for this build",
                                  "I was running an outdated NVIDIA driver (470).",
                                  "Updating the driver to 550 fixed it.",
                                  "显卡驱动版本太低"],
                                 ["Is my NVIDIA driver too old?", "maybe the driver is too old"]),
    "no-nvidia-driver": (["The NVIDIA driver was not installed on the new node",
                          "I didn't install the NVIDIA driver before running the container.",
                          "服务器没有安装显卡驱动"],
                         ["Is the NVIDIA driver not installed?", "Perhaps the NVIDIA driver was not installed"]),
    "nvcc-missing": (["I didn't have CUDA toolkit installed when building the extension",
                      "The CUDA toolkit was not installed, so pip install failed to compile it.",
                      "nvcc is not installed on this machine"],
                     ["Do you have the CUDA toolkit installed?", "Maybe nvcc is not installed"]),
    "library-missing": (["Problem was that I didn't have CUDA toolkit installed.",
                         "The CUDA toolkit was not installed, only the driver.",
                         "电脑上没有安装CUDA toolkit"],
                        ["Is the CUDA toolkit installed?", "Maybe the CUDA toolkit was not installed"]),
    "no-c-compiler": (["I didn't have gcc installed in the slim image",
                       "build-essential was not installed in the container.",
                       "No C compiler is installed on the cluster nodes"],
                      ["Is gcc not installed?", "Could it be that build-essential was not installed"]),
    "nvidia-uvm-broken-after-suspend": (["After your computer wakes up from suspension, cuda on the host stops working",
                                         "CUDA fails after suspend and resume, nvidia-smi still shows the GPU.",
                                         "CUDA fails to initialize after resuming from suspend with UNKNOWN_ERROR(99)",
                                         "休眠唤醒后CUDA就不能用了"],
                                        ["Does CUDA fail after the computer wakes up from suspend?",
                                         "Maybe it breaks after a suspend"]),
    "secure-boot-rejects-module": (["Secure Boot is enabled on this laptop",
                                    "Disabling Secure Boot in the BIOS fixed it.",
                                    "安全启动已开启"],
                                   ["Is Secure Boot enabled?", "If Secure Boot is enabled, the module cannot load"]),
    "driver-library-mismatch": (["I updated the nvidia driver and didn't reboot",
                                 "unattended-upgrades updated the nvidia driver overnight.",
                                 "驱动更新后没有重启"],
                                ["Did you update the nvidia driver without a reboot?",
                                 "Maybe I upgraded the driver and didn't reboot"]),
    "torch-arch-not-supported": (["My GPU is too old for the current PyTorch",
                                  "PyTorch no longer supports my Kepler card.",
                                  "显卡太老了"],
                                 ["Is my GPU too old?", "Perhaps my GPU is too old"]),
    "wsl-gpu-unavailable": (["WSL doesn't see my GPU at all",
                             "CUDA is not available inside WSL on this laptop.",
                             "I was running everything in WSL 1"],
                            ["Does WSL see the GPU?", "Maybe WSL doesn't see my GPU"]),
    "device-nodes-missing": (["I started the container without --gpus all",
                              "I didn't add --gpus to the docker run command.",
                              "The compose file runs it without the `--gpus` flag"],
                             ["Did you add --gpus to docker run?", "Maybe I started the container without --gpus"]),
    "dataloader-shm-too-small": (["The shared memory is too small in the docker container",
                                  "Increasing --shm-size to 8g fixed it.",
                                  "共享内存不足"],
                                 ["Is /dev/shm too small?", "Maybe the shared memory is too small"]),
    "libc-unsupported": (["The glibc on CentOS 7 is too old for these wheels",
                          "The cluster has an old glibc (2.17).",
                          "系统glibc版本太低"],
                         ["Is glibc too old?", "Probably the glibc is too old"]),
    "libstdcxx-too-old": (["The libstdc++ in my conda env is too old",
                           "The system has an outdated libstdc++ from GCC 7."],
                          ["Is libstdc++ too old?", "Maybe libstdc++ is too old"]),
    "distributed-launch-env-stale": (["NODE_RANK causes DDP jobs to hang",
                                      "WORLD_SIZE was still set in my environment from a previous job.",
                                      "Leftover env vars like NODE_RANK from the scheduler confused the launcher"],
                                     ["Was NODE_RANK set in the environment?", "Maybe NODE_RANK causes the hang"]),
    "cuda-visible-devices-hides-gpus": (["CUDA_VISIBLE_DEVICES was set to -1 in my .bashrc",
                                         "It turned out CUDA_VISIBLE_DEVICES is empty in the job's environment."],
                                        ["Is CUDA_VISIBLE_DEVICES set to -1?",
                                         "Maybe CUDA_VISIBLE_DEVICES was set to -1"]),
    "cuda-library-shadowed": (["My LD_LIBRARY_PATH pointed to an old CUDA 10.2 install",
                               "LD_LIBRARY_PATH had an older CUDA in it, before torch's own libraries."],
                              ["Does LD_LIBRARY_PATH point to an old CUDA?",
                               "Maybe LD_LIBRARY_PATH pointed to an old CUDA"]),
    "package-no-matching-wheel": (["Python 3.13 is not supported by this package yet",
                                   "There is no wheel for Python 3.12 on the index.",
                                   "python版本太高了"],
                                  ["Is Python 3.13 not supported?", "Maybe the wrong Python version"]),
    "gpu-out-of-memory": (["I ran out of VRAM at batch size 8",
                           "Not enough GPU memory for the 13B model.",
                           "显存不足，换了小模型就好了"],
                          ["Did I run out of VRAM?", "Perhaps there is not enough GPU memory"]),
    "nvidia-module-missing-for-kernel": (["After a kernel update the NVIDIA driver stopped working",
                                          "DKMS did not build the nvidia module for the new kernel.",
                                          "内核升级后nvidia-smi就用不了了"],
                                         ["Did DKMS fail to build the module after the kernel update?",
                                          "Maybe after a kernel update the module is gone"]),
    "nouveau-holds-gpu": (["The nouveau driver is still loaded",
                           "I didn't blacklist nouveau before installing the driver.",
                           "nouveau没有禁用"],
                          ["Is nouveau still loaded?", "Maybe nouveau is still loaded"]),
    "ninja-missing": (["ninja is not installed in this environment",
                       "Installing ninja fixed the build."],
                      ["Is ninja not installed?", "Maybe ninja is not installed"]),
    "cmake-missing": (["cmake is not installed on the build machine",
                       "I didn't have cmake on the PATH, installing CMake fixed it."],
                      ["Is cmake not installed?", "Maybe cmake is not installed"]),
    "python-headers-missing": (["python3-dev was not installed in the image",
                                "Installing python3.10-dev fixed it."],
                               ["Is python3-dev not installed?", "Maybe python3-dev was not installed"]),
    "msvc-runtime-missing": (["The Visual C++ Redistributable was not installed on this PC",
                              "Installing the latest vc_redist.x64.exe fixed the DLL error."],
                             ["Is the VC++ redist missing?", "Maybe the Visual C++ Redistributable was not installed"]),
    "windows-pagefile-too-small": (["The page file was too small on drive C",
                                    "Increasing the virtual memory to 32 GB fixed it.",
                                    "虚拟内存不足"],
                                   ["Is the page file too small?", "Maybe the page file was too small"]),
    "gpu-hardware-fault": (["The GPU turned out to be defective",
                            "It was a faulty riser cable; after replacing it the errors stopped.",
                            "显卡坏了"],
                           ["Is the GPU defective?", "Maybe the GPU is defective"]),
    "nccl-p2p-blocked": (["Setting NCCL_P2P_DISABLE=1 fixed the hang",
                          "P2P is broken on the RTX 4090 box.",
                          "ACS was enabled in the BIOS, which blocked P2P between the GPUs"],
                         ["Is P2P broken on this box?", "Maybe P2P is broken"]),
    "flash-attn-arch-unsupported": (["FlashAttention 2 doesn't support my T4",
                                     "V100 is not supported by FlashAttention 2."],
                                    ["Does flash attention support the T4?",
                                     "Perhaps flash attention doesn't support my GPU"]),
    "extension-torch-mismatch": (["The extension was compiled against a different version of PyTorch",
                                  "torch was upgraded after installing the kernels."],
                                 ["Was it compiled against a different version of PyTorch?",
                                  "Maybe it was built for another torch"]),
    "nvcc-torch-cuda-mismatch": (["My nvcc version doesn't match torch's CUDA version",
                                  "There is a mismatch between the CUDA toolkit (11.8) and torch (cu121)."],
                                 ["Does nvcc's version not match torch?",
                                  "Maybe the nvcc version doesn't match torch"]),
    "ffmpeg-not-found": (["ffmpeg is not installed on this machine",
                          "Installing ffmpeg fixed it.",
                          "没有安装ffmpeg"],
                         ["Is ffmpeg not installed?", "Maybe ffmpeg is not installed"]),
    "container-toolkit-missing": (["nvidia-container-toolkit was not installed on the host",
                                   "I forgot to install the NVIDIA Container Toolkit."],
                                  ["Is nvidia-container-toolkit installed?",
                                   "Maybe nvidia-container-toolkit is not installed"]),
    "llm-gpu-layers-not-offloaded": (["n_gpu_layers was 0, so everything ran on the CPU",
                                      "I didn't set --n-gpu-layers when starting the server."],
                                     ["Did you set --n-gpu-layers?", "Maybe n_gpu_layers was 0"]),
    "cpu-instruction-set-unsupported": (["My CPU doesn't support AVX2",
                                         "There is no AVX support on this old Xeon machine.",
                                         "CPU不支持AVX指令集"],
                                        ["Does my CPU support AVX2?", "Maybe my CPU doesn't support AVX"]),
    "host-compiler-unsupported-by-nvcc": (["My gcc 13 is too new for CUDA 11.8",
                                           "nvcc doesn't support gcc 13 yet."],
                                          ["Is gcc too new for nvcc?", "Maybe gcc is too new for CUDA"]),
    "numpy-abi-mismatch": (["NumPy 2.0 broke the compiled extension",
                            "Downgrading to numpy<2 fixed it."],
                           ["Did numpy 2 break it?", "Maybe numpy 2 broke it"]),
    "torch-not-installed": (["I didn't have torch installed in the venv",
                             "PyTorch was not installed in the conda env I launched from."],
                            ["Do you have torch installed?", "Maybe torch was not installed in the venv"]),
    "windows-compiler-unusable": (["Visual Studio Build Tools were not installed",
                                   "I didn't have the C++ Build Tools on this PC."],
                                  ["Are the Visual Studio Build Tools installed?",
                                   "Maybe Visual Studio Build Tools were not installed"]),
    "amd-gpu-no-torch-backend": (["I have an AMD Radeon RX 6800",
                                  "My GPU is an AMD card, not NVIDIA."],
                                 ["Do I need an NVIDIA card if I have an AMD GPU?",
                                  "Maybe because I have an AMD GPU"]),
    "nvidia-uvm-missing": (["nvidia_uvm was not loaded after boot",
                            "Running modprobe nvidia-uvm fixed it."],
                           ["Is nvidia_uvm not loaded?", "Maybe nvidia_uvm was not loaded"]),
}

TRACEBACK = ('Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'
             "RuntimeError: the job failed\n")
#: an error line no signature knows: a statement names the cause of a failure the log shows
FAILURE = "Error: the run failed\n"
SHAPES = {
    "title": lambda s: s + "\n" + FAILURE,
    "before-traceback": lambda s: "### Describe the bug\n\n" + s + "\n\n```\n" + TRACEBACK + "```\n",
    "quote": lambda s: "> " + s + "\n" + FAILURE,
}
#: a program's own line naming a root cause none of the statements is about, with its code
LIBRARY = [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
     "capacity of 23.65 GiB of which 3.06 MiB is free.", "gpu-out-of-memory"),
    ("RuntimeError: Ninja is required to load C++ extensions", "ninja-missing"),
]
HEALTHY = [
    "I freed disk space and the run finished fine.",
    "There is plenty of RAM on this machine (128 GB).",
    "We have enough disk space and enough VRAM.",
    "Disk usage is at 40%, not full.",
    "free -h shows 50 GB of RAM available",
    "RAM: 64 GB, VRAM: 24 GB",
    "GPU memory usage is fine at 40%.",
    "Secure Boot is disabled in the BIOS.",
    "The NVIDIA driver is up to date (550.54).",
    "Drivers older than 450 are not supported, mine is 535.",
    "I installed the CUDA version of torch (cu121).",
    "torch 2.3.0+cu121 is installed with CUDA 12.1 support",
    "Successfully installed torch-2.4.0",
    "CPU-only tests passed on CI.",
    "nouveau is blacklisted and the nvidia module is loaded.",
    "After the kernel finishes, the result is copied back.",
    "The machine resumed the job from the last checkpoint.",
    "ninja is installed (1.11.1).",
    "gcc 11 is installed and works.",
    "The CUDA toolkit is installed at /usr/local/cuda-12.1.",
    "Installing dependencies from requirements.txt",
    "I have an NVIDIA RTX 4090",
    "CUDA_VISIBLE_DEVICES is set to 0,1",
    "LD_LIBRARY_PATH is set to /usr/local/cuda/lib64",
    "Python 3.11 is supported.",
    "ffmpeg is installed via conda.",
    "The shared memory size is 16g, which is enough.",
    "WSL 2 with an RTX 3080 works fine",
]


def _statements() -> List[Tuple[str, str]]:
    return [(code, s) for code, (said, _) in CASES.items() for s in said]


def _said_entries(expl) -> List[str]:
    return [ev.entry for c in expl.candidates for ev in c.evidence if ev.entry.startswith("said-")]


def test_the_statement_rules_cover_at_least_forty_codes_at_weight_one():
    entries = [e for e in load().entries if e.said]
    codes = {c for e in entries for c in e.codes}
    assert len(codes) >= 40, sorted(codes)
    assert set(CASES) <= codes, sorted(set(CASES) - codes)
    for e in entries:
        # a statement names a cause; a user's words for a symptom ("GPU not detected") list the
        # causes to rank (tests/test_explain_silence.py)
        # (a code's second reading of a user's words: "said-<code>-<what>", quiet20)
        assert (e.id == "said-" + e.codes[0] or e.id.startswith("said-" + e.codes[0] + "-")) \
            and e.weight == 1 and (e.is_root or e.could_be), e.id
    # only the said- signatures carry the flag: a program's line never ranks as a statement
    assert all(e.id.startswith("said-") for e in entries)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("code, sentence", _statements(), ids=[f"{c}-{i}" for i, (c, _) in enumerate(_statements())])
def test_a_statement_names_its_code_first(code, sentence, shape):
    expl = explain_text(SHAPES[shape](sentence))
    assert expl.candidates, sentence
    top = expl.candidates[0]
    assert top.code == code, [(c.code, c.confidence) for c in expl.candidates]
    assert top.confidence == "stated"


@pytest.mark.parametrize("code, line", [(c, q) for c, (_, qs) in CASES.items() for q in qs])
def test_a_question_or_a_guess_fires_no_statement_rule(code, line):
    expl = explain_text(line + "\n" + TRACEBACK)
    assert not _said_entries(expl), line
    assert not expl.candidates or expl.candidates[0].code != code or not any(
        ev.entry.startswith("said-") for ev in expl.candidates[0].evidence)


@pytest.mark.parametrize("code, sentence", _statements(), ids=[f"{c}-{i}" for i, (c, _) in enumerate(_statements())])
def test_a_programs_line_for_another_cause_outranks_the_statement(code, sentence):
    alone = explain_text(sentence + "\n" + FAILURE)
    if not all(ev.entry.startswith("said-") for ev in alone.candidates[0].evidence):
        pytest.skip("an older signature (no statement rule) reads this sentence too")
    for line, lib_code in LIBRARY:
        if lib_code == code:
            continue
        for log in (sentence + "\n\n" + line + "\n", line + "\n" + sentence + "\n"):
            expl = explain_text(log)
            assert expl.candidates[0].code == lib_code, [c.code for c in expl.candidates]
            assert _said_entries(expl)   # the statement is still listed, after the program's line


def test_a_statement_names_the_deeper_cause_of_a_line_that_lists_it():
    # nvidia-smi's line is no-nvidia-driver, whose could_be lists Secure Boot: the user's sentence
    # says which of those causes it is, so it heads and explains the line
    log = ("Secure Boot is enabled on this laptop\n"
           "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
           "Make sure that the latest NVIDIA driver is installed and running.\n")
    expl = explain_text(log)
    assert expl.candidates[0].code == "secure-boot-rejects-module", [c.code for c in expl.candidates]
    assert "no-nvidia-driver" in expl.candidates[0].explains


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_sentences_with_the_same_words_name_nothing(line):
    expl = explain_text(line + "\n")
    assert not expl.candidates, [(c.code, [ev.entry for ev in c.evidence]) for c in expl.candidates]
    assert int(expl.exit_code) == 0


@pytest.mark.parametrize("text, code", [
    # a title's question after the statement is another sentence
    ("Any time I compile flash attention it exaust the RAM and the PC crashes. Is there a way to "
     "limit the resources used by build?", "host-oom-killed"),
    ("Maybe it is the driver. Later I found that the NVIDIA driver was not installed.", "no-nvidia-driver"),
    ("Installed CUDA 11.8 and cuDNN 8.9.2. I didn't have gcc installed.", "no-c-compiler"),
])
def test_the_guard_reads_the_sentence_that_holds_the_statement(text, code):
    expl = explain_text(text + "\n" + FAILURE)
    assert expl.candidates and expl.candidates[0].code == code, [c.code for c in expl.candidates]


@pytest.mark.parametrize("text", [
    "I ran out of disk space? No, df shows 40% used.",
    "Could it be that the NVIDIA driver is too old. I have 470.",
    "The root partition was full, I think? Not sure.",
])
def test_a_sentence_that_asks_or_guesses_is_not_read(text):
    assert not _said_entries(explain_text(text + "\n"))


@pytest.mark.parametrize("text", [
    # facts of a machine, with no failure in the log (the context rules read them as clues)
    "mokutil --sb-state says SecureBoot enabled",
    "It started after a kernel update last night.",
    "Secure Boot is enabled on this machine",
    # an environment listing and a reason that is no statement of the cause
    "- `flash-linear-attention` and `causal-conv1d`: not installed in the run below",
    "flash-linear-attention is not installed",
    "I installed flash-linear-attention because the model card asks for it",
    "Training runs at full speed because flash-attn is installed correctly.",
])
def test_a_statement_in_a_log_that_shows_no_failure_names_nothing(text):
    expl = explain_text(text + "\n")
    assert not expl.candidates and int(expl.exit_code) == 0, [c.code for c in expl.candidates]


def test_a_statement_that_is_an_error_line_itself_names_its_cause():
    # "I ran out of disk space" is no failure line by the rule; "the job failed because the
    # disk is full" is (its 'failed'): the statement names its cause with no other line
    expl = explain_text("the job failed because the disk is full\n")
    assert [c.code for c in expl.candidates][:1] == ["disk-full"], [c.code for c in expl.candidates]


@pytest.mark.parametrize("text", [
    # transformers#48718 (training): the title reports what happened and gives its cause
    "Qwen3.5-9B fine-tuning ran the gated DeltaNet layers on the fp32 torch chunk loop because "
    "flash-linear-attention was not installed",
    "The model fell back to the slow path because causal-conv1d is not installed.",
])
def test_a_sentence_that_gives_the_statement_as_a_cause_names_it(text):
    # no failure line and no complaint: "because" ties what happened to the stated cause
    expl = explain_text(text + "\n")
    assert [c.code for c in expl.candidates][:1] == ["kernel-library-not-installed"], \
        [c.code for c in expl.candidates]
    assert int(expl.exit_code) != 0
