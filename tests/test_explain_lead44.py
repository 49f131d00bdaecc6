"""lead44: one list of GPU libraries for every crash signature of native-crash-in-gpu-library.

The names after ``lib`` that make a crashed frame a GPU library's were written nine times (eight
patterns of explain_only.toml and ``stackpeel.explain.stacks``) in three variants: some without
Triton's ``libtriton``, some with ``torch_cuda`` where torch 1.10-1.12 split it into
``libtorch_cuda_cu.so`` and ``libtorch_cuda_cpp.so``. They are now one list,
:data:`stackpeel.explain.stacks.GPU_LIBRARY_NAMES`, and this file fails when a copy differs.
"""
from __future__ import annotations

import re

import pytest

from stackpeel.explain.stacks import GPU_LIBRARY_NAMES, GPU_MODULE_RE
from stackpeel.knowledge import load

from explain_helpers import codes_of as codes

#: an alternation that starts like the GPU library list
_COPY_RE = re.compile(r"lib\(\?:cuda\|")


def _patterns():
    for sig in load().signatures():
        for pattern in sig.patterns:
            yield sig.id, pattern


def test_every_copy_of_the_gpu_library_list_is_the_one_list():
    seen = 0
    for sig_id, pattern in _patterns():
        for m in _COPY_RE.finditer(pattern):
            seen += 1
            assert pattern[m.start():].startswith("lib(?:" + GPU_LIBRARY_NAMES + ")"), (sig_id, pattern)
    assert seen >= 8  # the crash signatures that write it


@pytest.mark.parametrize("module", [
    "libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libcudnn_cnn_infer.so.8",
    "libcublasLt.so.12", "libtorch_cuda_cu.so", "libtorch_cuda.so", "libnccl.so.2", "libtriton.so"])
def test_gpu_modules(module):
    assert GPU_MODULE_RE.search(module)


@pytest.mark.parametrize("module", ["libc.so.6", "libpython3.10.so.1.0", "libstdc++.so.6", "libcudaaa"])
def test_other_modules(module):
    assert not GPU_MODULE_RE.search(module)


# torch 1.10-1.12 split libtorch_cuda.so into libtorch_cuda_cu.so and libtorch_cuda_cpp.so; the
# kernel's record (arch/x86/mm/fault.c show_signal_msg) names the module the fault was in
DMESG = ("[ 8123.456789] python[40213]: segfault at 7f0000000010 ip 00007f3b1c2d4e5f sp 00007ffd2a1b3c40 "
         "error 4 in libtorch_cuda_cu.so[7f3b10000000+3a000000]\n")
SHELL = "Segmentation fault (core dumped)  python train.py  # crashed in libtorch_cuda_cu.so\n"


@pytest.mark.parametrize("text", [DMESG, "[rank1]: " + DMESG, SHELL], ids=["dmesg", "prefixed", "shell"])
def test_a_crash_in_torch_1_1x_split_cuda_library(text):
    assert codes(text)[:1] == ["native-crash-in-gpu-library"]


def test_a_crash_in_libc_alone_names_no_gpu_library():
    text = ("[ 8123.456789] python[40213]: segfault at 0 ip 00007f3b1c2d4e5f sp 00007ffd2a1b3c40 "
            "error 4 in libc.so.6[7f3b10000000+195000]\n")
    assert "native-crash-in-gpu-library" not in codes(text)[:1]
