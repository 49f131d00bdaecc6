"""Recall of explain on logs sampled the way the blind sets are (sweepj): 12 fresh training logs
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02q``) taken in search order for
the generic queries "nvidia driver", "compile error cuda", "kernel launch failed", "triton",
"xformers", "flash attention", "bitsandbytes", "deepspeed", "vllm" and "jax gpu" (with "cuda",
"gpu" or "error" added), then fixed by class from the programs that print the messages.

What the threads showed, and the class each fix covers:

- CUDA_HOME written like a PATH list (``export CUDA_HOME=$CUDA_HOME:/usr/local/cuda`` with the
  variable empty, ``/usr/local/cuda:$PATH``): torch.utils.cpp_extension joins it as given, so the
  nvcc it runs is ``:/usr/local/cuda/bin/nvcc`` or ``/usr/local/cuda:/bin/nvcc`` (OpenPPL/ppq#393,
  the answer: CUDA_HOME was ':/usr/local/cuda'; the same path in open-mmlab/mmdetection#2113 and
  #1756, NVIDIA/apex#368, rusty1s/pytorch_cluster#55, chengdazhi/Deformable-Convolution-V2-PyTorch#86):
  env-path-unusable, whatever prints the path (ninja's command, /bin/sh, setuptools' spawn, a
  FileNotFoundError). A Windows drive (``C:/...``) and a URL are not such a path.
- py-faster-rcnn's ``locate_cuda()``, copied into many detection builds: 'The nvcc binary could not
  be located in your $PATH' is nvcc-missing; its sibling 'The CUDA nvcc path could not be located
  in X' (CUDAHOME set to a wrong directory or a partial toolkit) is env-path-unusable, weight 2.
- torch's driver check as users quote it: without its article or version ('NVIDIA driver on your
  system is too old (found version 6000)....', pytorch/pytorch#920) or retyped in a title ('NVIDIA
  Driver on your system is too OLD').
- bitsandbytes 0.37-0.41's check_cuda_result(): 'Unknown CUDA exception! Please check your CUDA
  install. It might also be that your GPU is too old.' and 'CUDA exception! Error code: X' are its
  CUDA detection failing (bitsandbytes-cuda-setup-failed, weight 2: a named error string wins).
- Triton 1.x/2.0-dev's C++ 'Triton requires CUDA 11.4+' (the ptxas it found is older; sibling of
  'Triton only support CUDA 10.0 or higher'): ptxas-unusable, weight 2.
- jaxlib's 'cudaGetErrorString symbol not found' (jax-ml/jax#11828, #3951) was already library-missing
  (the stub's answer when the CUDA runtime of its build cannot be loaded); the two logs are labelled so.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages as the programs print them (each must rank the code first, whatever wraps it)
FAMILIES = {
    "env-path-unusable": [
        # OpenPPL/ppq#218 and #393: ninja's command line under torch's JIT build
        "RuntimeError: Error building extension 'PPQ_Cuda_Impls': [1/6] :/usr/local/cuda-10.2/bin/nvcc  -DTORCH_EXTENSION_NAME=PPQ_Cuda_Impls",
        # chengdazhi/Deformable-Convolution-V2-PyTorch#86: the shell running it
        "/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found",
        # open-mmlab/mmdetection#1756: setuptools' spawn (CUDA_HOME ':/usr/local/cuda-10.0/bin')
        "unable to execute ':/usr/local/cuda-10.0/bin/bin/nvcc': No such file or directory",
        # NVIDIA/apex#368: two entries joined by ':'
        "FileNotFoundError: [Errno 2] No such file or directory: ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc': ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc'",
        # rusty1s/pytorch_cluster#55: a trailing ':' (CUDA_HOME='/usr/local/cuda:')
        "/usr/local/cuda:/bin/nvcc -I/home/gautam/anaconda3/lib/python3.7/site-packages/torch/include -c cuda/graclus_kernel.cu",
        # hyangwinter/flownet3d_pytorch#11: a CUDA_HOME holding a library-path list
        "/bin/sh: 1: [path-to-my-cuda]/lib64:/bin/nvcc: not found",
        "error: command ':/usr/local/cuda-11.3/bin/nvcc' failed with exit code 1",
        # py-faster-rcnn's locate_cuda() with CUDAHOME set to a wrong directory
        "EnvironmentError: The CUDA nvcc path could not be located in /usr/local/cuda-9.0/bin/nvcc",
        "OSError: The CUDA lib64 path could not be located in /opt/cuda/lib64",
    ],
    "nvcc-missing": [
        "OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDAHOME",
        "EnvironmentError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDA_HOME",
    ],
    "driver-too-old-for-torch": [
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
        "**error info:** NVIDIA driver on your system is too old (found version 6000)....",
        "NVIDIA Driver on your system is too OLD ---> alternatively go pytorch version to update the driver",
    ],
    "bitsandbytes-cuda-setup-failed": [
        "Unknown CUDA exception! Please check your CUDA install. It might also be that your GPU is too old.",
        "CUDA exception! Error code: initialization error",
    ],
    "ptxas-unusable": [
        "RuntimeError: Triton requires CUDA 11.4+",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

# users' words for the same causes, as they write them in a title or a comment
test_users_words = users_words_test({
    "NVIDIA driver on your system is too old (found version 10010)": "driver-too-old-for-torch",
    "build fails with /bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found": "env-path-unusable",
})


def test_the_ppq_build_log_is_the_cuda_home_not_the_build():
    # OpenPPL/ppq#393: the whole ninja line, then ninja's FAILED
    log = ("Error building extension 'PPQ_Cuda_Impls': [1/5] :/usr/local/cuda:/usr/local/cuda/bin/nvcc "
           "--generate-dependencies-with-compile --dependency-output linear.cuda.o.d "
           "-DTORCH_EXTENSION_NAME=PPQ_Cuda_Impls -isystem :/usr/local/cuda:/usr/local/cuda/include "
           "-std=c++14 -c /usr/local/miniconda3/envs/ppq_1/lib/python3.7/site-packages/ppq/csrc/cuda/linear.cu -o linear.cuda.o \n"
           "FAILED: linear.cuda.o\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["env-path-unusable"], codes


def test_a_named_cuda_error_in_bitsandbytes_report_wins():
    codes = [c.code for c in explain_text("CUDA exception! Error code: no CUDA-capable device is detected\n").candidates]
    assert codes[:1] == ["no-nvidia-driver"], codes
    assert "bitsandbytes-cuda-setup-failed" in codes


def test_the_locate_cuda_sibling_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line("The CUDA include path could not be located in /usr/local/cuda/include")
               if e.id == "locate-cuda-path-missing"]
    assert entries and entries[0].weight == 2
    assert {"nvcc-missing", "cuda-headers-missing"} <= set(entries[0].could_be)


@pytest.mark.parametrize("line", [
    "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1",
    "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
    "unable to execute '/usr/local/cuda-11.8/bin/nvcc': No such file or directory",
])
def test_a_plain_nvcc_path_stays_the_missing_nvcc_or_the_build(line):
    codes = [c.code for c in explain_text(line + "\n").candidates]
    assert "env-path-unusable" not in codes, codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/nvcc -c kernel.cu -o kernel.obj",
    "'C:/cuda/bin/nvcc.exe' -c x.cu",
    "nvcc: /usr/local/cuda/bin/nvcc",
    "see https://developer.nvidia.com/cuda/bin/nvcc for details",
    "10:21:07 /usr/local/cuda/bin/nvcc --version",
    "export PATH=/usr/local/cuda/bin:$PATH CUDA_HOME=/usr/local/cuda",
    "no CUDA exception was raised during setup",
    "Triton requires CUDA 11.4 or newer; this machine has 12.4",
])
