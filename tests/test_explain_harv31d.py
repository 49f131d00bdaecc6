"""harv31d: an eleventh unbiased harvest (container images and CI pipelines), scored blind, and the
general fixes its misses ask for (docs/dev/harv31d.md).

Ten new training-side logs; explain named six first before any change. The fixed misses:
- C3, a symptom plus a configuration fact: DeepSpeed's setup.py (and its forks') failing in the
  frame ``os.environ["TORCH_CUDA_ARCH_LIST"] = get_default_compute_capabilities()``. setup.py runs
  it only when torch sees no GPU (docker build, a CPU-only CI runner) and TORCH_CUDA_ARCH_LIST is
  unset; op_builder/builder.py's get_default_compute_capabilities() probes the toolkit through
  installed_cuda_version(), which fails only when there is none (``CUDA_HOME does not exist``, or
  ``<CUDA_HOME>/bin/nvcc -V`` not found in a runtime image): EleutherAI/gpt-neox#1021, whose paste
  stops at that frame: ``nvcc-missing`` (it was read as a generic extension build failure);
- C2, one environment word picks the variant: Lua Torch's cutorch (torch7) printing cudart's
  error 35 from its own tree (``extra/cutorch/lib/THC/THCGeneral.c``, ``share/lua/5.x``) is a
  prebuilt CUDA program, not a PyTorch wheel (NVIDIA/nvidia-docker#414): ``driver-too-old-for-build``
  (it was read as ``driver-too-old-for-torch``, whose fix names torch wheels).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

# the frame line as Python prints it under the setup.py line (DeepSpeed, DeeperSpeed, ATorch)
DS_FRAME = 'os.environ["TORCH_CUDA_ARCH_LIST"] = get_default_compute_capabilities()'
# cutorch's __THCudaCheck (lib/THC/THCGeneral.c): its fprintf, then _THError through Lua's error
LUA_THC = ("THCudaCheck FAIL file=/root/torch/extra/cutorch/lib/THC/THCGeneral.c line=66 error=35 : "
           "CUDA driver version is insufficient for CUDA runtime version")
LUA_ERR = ("/root/torch/install/bin/luajit: /root/torch/install/share/lua/5.1/trepl/init.lua:389: "
           "cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
           "/root/torch/extra/cutorch/lib/THC/THCGeneral.c:66")

FAMILIES = {
    "nvcc-missing": [DS_FRAME],
    "driver-too-old-for-build": [LUA_THC, LUA_ERR],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_gpt_neox_docker_build_names_nvcc_missing():
    # EleutherAI/gpt-neox#1021: a runtime base image, the paste ends at the setup.py frame
    text = (
        "  Preparing metadata (setup.py): finished with status 'error'\n"
        "  error: subprocess-exited-with-error\n"
        "  × python setup.py egg_info did not run successfully.\n"
        "  │ exit code: 1\n"
        "  ╰─> [21 lines of output]\n"
        "      No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "      Traceback (most recent call last):\n"
        '        File "<string>", line 2, in <module>\n'
        '        File "<pip-setuptools-caller>", line 34, in <module>\n'
        '        File "/tmp/pip-install-ami7m0w2/deepspeed_b5115/setup.py", line 119, in <module>\n'
        "          " + DS_FRAME + "\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]


def test_deepspeed_frame_with_its_exception_still_nvcc_missing():
    # the same frame followed by builder.py's probe failing (the full paste a CPU-only CI shows)
    text = (
        '  File "/tmp/pip-install-x/deepspeed_1/setup.py", line 100, in <module>\n'
        "    " + DS_FRAME + "\n"
        '  File "/tmp/pip-install-x/deepspeed_1/op_builder/builder.py", line 71, in get_default_compute_capabilities\n'
        "    if torch.utils.cpp_extension.CUDA_HOME is not None and installed_cuda_version()[0] >= 11:\n"
        '  File "/tmp/pip-install-x/deepspeed_1/op_builder/builder.py", line 47, in installed_cuda_version\n'
        '    output = subprocess.check_output([cuda_home + "/bin/nvcc", "-V"], universal_newlines=True)\n'
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]


def test_lua_torch_container_names_driver_for_build():
    # NVIDIA/nvidia-docker#414 (driver 367 under a CUDA 8 image)
    text = (
        "xyf@xyfpc:~$ nvidia-docker run --rm nvidia/cuda nvidia-smi\n"
        "| NVIDIA-SMI 367.57                 Driver Version: 367.57                    |\n"
        + LUA_THC + "\n"
        "/root/torch/install/bin/lua: /root/torch/install/share/lua/5.2/trepl/init.lua:389: "
        "cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
        "/root/torch/extra/cutorch/lib/THC/THCGeneral.c:66\n"
        "stack traceback:\n"
        "\t[C]: in function 'error'\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_near_misses_keep_their_own_cause():
    # PyTorch 0.x printed the same THCudaCheck line from its own THC (torch/lib/THC/THCGeneral.c):
    # a PyTorch wheel, so it stays driver-too-old-for-torch
    pytorch_thc = (
        "THCudaCheck FAIL file=/py/conda-bld/pytorch_1493681908901/work/torch/lib/THC/THCGeneral.c "
        "line=70 error=35 : CUDA driver version is insufficient for CUDA runtime version\n"
        "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime "
        "version at /py/conda-bld/pytorch_1493681908901/work/torch/lib/THC/THCGeneral.c:70\n"
    )
    assert _codes(pytorch_thc)[:1] == ["driver-too-old-for-torch"]
    # a later PyTorch (THCGeneral.cpp under aten) likewise
    assert _codes(
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=35 : "
        "CUDA driver version is insufficient for CUDA runtime version\n")[:1] == ["driver-too-old-for-torch"]
    # the function name elsewhere (a user's own call, or DeepSpeed's JIT builder computing
    # its flags) is no setup.py probe of a missing toolkit
    assert "nvcc-missing" not in match_codes(
        "    cross_compile_archs = get_default_compute_capabilities()\n")
    assert "nvcc-missing" not in match_codes(
        "print(get_default_compute_capabilities())\n")
    # the setup.py warning DeepSpeed prints before the probe is not a failure
    assert "nvcc-missing" not in match_codes(
        "[WARNING] Torch did not find cuda available, if cross-compiling or running with cpu only you "
        "can ignore this message. Adding compute capability for Pascal, Volta, and Turing "
        "(compute capabilities 6.0, 6.1, 6.2)\n")
