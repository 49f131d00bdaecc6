"""Issue 8 items 2, 3 and 7 (kbgrow3): what explain missed on 44 fresh training threads found
the way users who do not know the cause search (tests/corpus/explain/*.log with
``# collected: training-2026-12-01i``), fixed by class.

- Users' words for a run on the CPU: many threads paste no error line at all, they say it ("it
  uses the CPU instead", "installed the cpu version of torch", "Torch changed to the cpu",
  "PyTorch安装的是CPU版本"). Such a line is now an error line (parser's ``cpu`` shape) and its
  words implicate the +cpu build (knowledge/vocabulary.toml ``cpu-build-named``,
  ``gpu-not-used``); the same for "the process was killed" (``slain``, word ``killed``).
- A setup.py that spawns nvcc itself fails in distutils' words ("unable to execute 'nvcc': No
  such file or directory"): that is nvcc missing, not a C compiler ("nvcc" ends in "cc").
- AlphaFold 3 words a GPU too old for its Triton attention in its own way
  (``implementation='triton' is unsupported on this GPU generation``).
- transformers 5.17+ names the package it did not import (``because `flash-linear-attention` is
  not installed``): when nothing else in the log names a cause, the package not installed is
  inferred (its clue); the legacy wording, which names no package, stays the symptom.
- The log's context: the driver words of a log that speaks of DKMS, an OS upgrade or
  /var/run/reboot-required implicate the module not built for the running kernel; a Triton
  launch failing on a 100 KB-shared-memory GPU (A40, A6000, RTX 30/40) is shared memory; a bare
  connect errno ("No route to host") is the rendezvous unless the log names NCCL.

Messages are the programs' own wording (each signature's ``source`` names the file); the
users' words are those of the training threads (named per case).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import error_shape
from test_explain_patterns import PROSE_WRAPPERS, family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "nvcc-missing": [
        # setuptools/_distutils spawn.py (older releases), cudamat's setup.py spawning nvcc
        "unable to execute 'nvcc': No such file or directory",
        # setuptools/_distutils spawn.py (newer releases)
        "error: command '/usr/local/cuda/bin/nvcc' failed: No such file or directory",
    ],
    "triton-gpu-too-old": [
        # AlphaFold 3's flash-attention dispatch (google-deepmind/alphafold3#90), and as HPC guides quote it
        "ValueError: implementation='triton' is unsupported on this GPU generation.",
        "implementation='triton' for FlashAttention is unsupported on this GPU generation.",
    ],
    "no-c-compiler": [
        # the same spawn, for the C compiler: still the compiler (a cross or versioned name)
        "unable to execute 'x86_64-linux-gnu-gcc': No such file or directory",
        "error: command '/usr/bin/gcc-11' failed: No such file or directory",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# Users' words -> the code they implicate (a guess from words: confidence low, basis vocabulary;
# or a user's-statement rule's signature, stated), each as the training thread wrote it
USERS_WORDS = {
    # raryelcostasouza/pyTranscriber#56
    "Whisper does not invoke the GPU; it uses the CPU instead": "torch-cpu-only-build",
    "The openai-whisper package installed Torch without the CUDA version, but I installed Torch using": "torch-cpu-only-build",
    # pinokiocomputer/pinokio#978
    "When I install https://github.com/pinokiofactory/RMBG-2-Studio , it automatically install the cpu "
    "version of torch.": "torch-cpu-only-build",
    # pytorch/pytorch#168065
    "Hi, noticing that trying to `pip install torch` resulted in the CPU version of torch stable.": "torch-cpu-only-build",
    # vladmandic/sdnext#1424
    "after the --upgrade , for some reason, Torch changed to the cpu.": "torch-cpu-only-build",
    # tonybaloney/CSnakes#750
    "thins is requirements.txt file. when debug torch cpu version installed. how to solve this.": "torch-cpu-only-build",
    # chatchat-space/Langchain-Chatchat#294
    "\u4f7f\u7528requirements\u5b89\u88c5\uff0cPyTorch\u5b89\u88c5\u7684\u662fCPU\u7248\u672c": "torch-cpu-only-build",
    # sczhou/CodeFormer#307
    "When running on my own computer, I use the CPU for calculations throughout the entire process, "
    "rather than the GPU.": "torch-cpu-only-build",
    # 131250208/TPlinker-joint-extraction#78
    "I watched the system monitor and found that the memory was completely (99%+) used during load so "
    "it was killed": "host-oom-killed",
}



@pytest.mark.parametrize("wrapper", list(PROSE_WRAPPERS))
@pytest.mark.parametrize("line,code", list(USERS_WORDS.items()), ids=[f"{c}-{i}" for i, c in enumerate(USERS_WORDS.values())])
def test_users_words_name_the_cause_as_a_guess(line, code, wrapper):
    expl = explain_text(PROSE_WRAPPERS[wrapper](line) + "\n")
    assert [c.code for c in expl.candidates][:1] == [code], [c.code for c in expl.candidates]
    top = expl.candidates[0]
    # a guess from the words, or, where a user's-statement rule reads the sentence
    # (tests/test_explain_users_words.py), the cause the user states
    said = any(ev.entry.startswith("said-") for ev in top.evidence)
    assert (top.basis, top.confidence) == (("signature", "stated") if said else ("vocabulary", "low")), \
        (top.basis, top.confidence)
    assert expl.exit_code == 1


@pytest.mark.parametrize("line", list(USERS_WORDS))
def test_users_words_are_error_lines(line):
    assert error_shape(line) in ("cpu", "slain"), error_shape(line)


# Healthy lines that share words with the shapes above: a plan, a setting, a notice, a count
HEALTHY = [
    "Installing the CPU version of torch for the docs build (no GPU needed)",
    "pip install torch --index-url https://download.pytorch.org/whl/cpu",
    "Moved the model to the GPU (cuda:0) in 3.1 s",
    "Benchmark: the GPU run took 12 s, the CPU run 340 s",
    "The job is not killed by the scheduler when it exceeds the soft limit",
    "torch 2.5.1+cu124, CUDA available: True, using the GPU for training",
    "Killed 0 stale workers",
    "NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
    "running on NVIDIA A40 with 46068 MiB free",
    "Setting up nvidia-dkms-535 (535.183.01-0ubuntu1) ...",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


# --- the log's context ---------------------------------------------------------------------

DRIVER_NOT_LOADED = [
    # pop-os/pop#690 (nvidia-settings at login)
    "Oct 14 07:35:56 pop-os nvidia-settings-autostart.desktop[2905]: ERROR: NVIDIA driver is not loaded",
    "Oct 14 07:35:56 pop-os nvidia-settings-autostart.desktop[2905]: ERROR: Unable to load info from any available system",
]


@pytest.mark.parametrize("context", [
    "After installing system updates, some DKMS stuff gets rebuilt. After a reboot, nvidia-smi reports nothing.",
    "*Reboot the VM as indicated by the existence of /var/run/reboot-required",
    "The NVIDIA driver is lost after rebooting the machine (as required by os upgrade).",
])
def test_driver_words_after_a_kernel_update_name_the_module_not_built(context):
    expl = explain_text("\n".join([context, *DRIVER_NOT_LOADED]) + "\n")
    assert [c.code for c in expl.candidates][:1] == ["nvidia-module-missing-for-kernel"], \
        [c.code for c in expl.candidates]


def test_driver_words_alone_do_not_name_a_kernel_update():
    expl = explain_text("\n".join(DRIVER_NOT_LOADED) + "\n")
    codes = [c.code for c in expl.candidates]
    assert codes and codes[0] != "nvidia-module-missing-for-kernel", codes


# mosaicml/llm-foundry#190: Triton 2.0's launch on an A40 (about 100 KB of shared memory per block)
TRITON_INVALID_ARGUMENT = "RuntimeError: Triton Error [CUDA]: invalid argument"


@pytest.mark.parametrize("gpu", ["GPU Device: A40", "NVIDIA RTX A6000", "GPU 0: NVIDIA GeForce RTX 3090",
                                 "compute capability sm_86"])
def test_a_triton_launch_failing_on_a_100kb_gpu_is_shared_memory(gpu):
    expl = explain_text(f"{gpu}\nBut when I train i get this error:\n`{TRITON_INVALID_ARGUMENT}`\n")
    assert [c.code for c in expl.candidates][:1] == ["shared-memory-too-small"], [c.code for c in expl.candidates]


def test_a_triton_launch_failing_alone_stays_the_symptom():
    expl = explain_text(TRITON_INVALID_ARGUMENT + "\n")
    assert [c.code for c in expl.candidates][:1] == ["triton-kernel-failed"], [c.code for c in expl.candidates]


# facebookresearch/PyTorch-BigGraph#99: a bare connect errno is the rendezvous; NCCL named is NCCL's
def test_a_bare_connect_errno_is_the_rendezvous():
    expl = explain_text('Distributed job on slurm cluster fails with "RuntimeError: No route to host"\n')
    assert [c.code for c in expl.candidates][:1] == ["collective-rendezvous-unreachable"], \
        [c.code for c in expl.candidates]


def test_a_connect_errno_next_to_ncclS_socket_words_is_ncclS_socket():
    # the words of a line NCCL's src/misc/socket.cc prints: the socket word outranks the errno's
    from stackpeel.explain import vocabulary
    line = "socketStartConnect: Connect to 192.168.122.1<45678> failed : No route to host"
    guesses = vocabulary.guess([(1, line, "", 1.0)], {}, {}, vocabulary.load())
    assert [g.code for g in guesses][:1] == ["nccl-socket-ifname-wrong"], [g.code for g in guesses]
    bare = vocabulary.guess([(1, "RuntimeError: No route to host", "", 1.0)], {}, {}, vocabulary.load())
    assert [g.code for g in bare][:1] == ["collective-rendezvous-unreachable"], [g.code for g in bare]


# transformers 5.17+ (iapp-technology/openthai-systemone#2) and the legacy wording (RobTand/prismaquant#4)
REFERENCE_PATH = ("[transformers] `chunk_gated_delta_rule` is falling back to its reference PyTorch implementation "
                  "because `flash-linear-attention` is not installed. This is correct but much slower ...")
LEGACY = ("[transformers] The fast path is not available because one of the required library is not installed. "
          "Falling back to torch implementation.")


def test_transformers_naming_a_package_not_installed_infers_it():
    expl = explain_text(REFERENCE_PATH + "\n")
    codes = [c.code for c in expl.candidates]
    assert codes[:2] == ["kernel-library-not-installed", "transformers-fast-path-unavailable"], codes
    assert expl.candidates[0].confidence == "inferred"


def test_the_legacy_wording_stays_the_symptom():
    expl = explain_text(LEGACY + "\n")
    assert [c.code for c in expl.candidates][:1] == ["transformers-fast-path-unavailable"], [c.code for c in expl.candidates]


def test_a_named_import_failure_outranks_the_not_installed_claim():
    # causal-conv1d built for another torch: transformers 5.17+ still says 'is not installed'
    log = ("ImportError: /venv/lib/python3.12/site-packages/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so: "
           "undefined symbol: _ZN3c104cuda9SetDeviceEa\n"
           + REFERENCE_PATH.replace("chunk_gated_delta_rule", "causal_conv1d_fn").replace("flash-linear-attention", "causal-conv1d")
           + "\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes and codes[0] != "kernel-library-not-installed", codes
