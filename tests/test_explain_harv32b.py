"""harv32b: a thirteenth unbiased harvest (the 2018-2021 era: RTX 20xx/30xx on CUDA 9/10 builds,
nvcc and gcc limits, THC/AT_CHECK removals, custom-op builds), scored blind, and the general fix
its one fixable miss asks for (docs/dev/harv32b.md).

Twenty new training-side logs; explain named seventeen first before any change. The fixed miss:
- A1, a program's own line nothing read: torch 1.0 removed ``torch.utils.ffi`` (C extensions
  built through cffi) and left a module in its place whose first line raises
  ``ImportError("torch.utils.ffi is deprecated. Please use cpp extensions instead.")`` (pytorch
  PR 12122; test/test_utils.py TestFFI.test_deprecated asserts the text). A torch-0.4-era
  ``build.py`` (``from torch.utils.ffi import create_extension``) stops there on any newer torch
  (MIC-DKFZ/medicaldetectiontoolkit#67: the build needs torch 0.4.1):
  ``extension-source-torch-api-removed`` (explain answered "unknown").
Each message is torch's own text or a training-side thread's paste, run through the wrappers
pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "extension-source-torch-api-removed": [
        # torch/utils/ffi/__init__.py line 1 (torch 1.0 and later), as the ImportError prints it
        "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.",
        # the raise statement itself, as the traceback quotes the source line
        'raise ImportError("torch.utils.ffi is deprecated. Please use cpp extensions instead.")',
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_ffi_build_traceback_names_the_removed_api():
    # the traceback a torch-0.4-era build.py prints on torch 1.x (SeanNaren/warp-ctc#95's shape)
    text = (
        "[root@localhost pytorch_binding]# python setup.py install\n"
        "Traceback (most recent call last):\n"
        '  File "setup.py", line 7, in <module>\n'
        "    from torch.utils.ffi import create_extension\n"
        '  File "/usr/lib64/python2.7/site-packages/torch/utils/ffi/__init__.py", line 1, in <module>\n'
        '    raise ImportError("torch.utils.ffi is deprecated. Please use cpp extensions instead.")\n'
        "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.\n"
    )
    assert _codes(text)[:1] == ["extension-source-torch-api-removed"]


def test_medicaldetectiontoolkit_reporters_words_name_the_removed_api():
    # the reporter's own retelling of the same ImportError (MIC-DKFZ/medicaldetectiontoolkit#67)
    text = (
        "ImportError: torch.utils.ffi is deprecated, how to use cpp extensions instead?\n\n"
        "When I run python build.py, there is an error saying torch.utils.ffi is deprecated, is there an "
        "updated version available which uses cpp extensions?\n"
    )
    assert _codes(text)[:1] == ["extension-source-torch-api-removed"]


def test_near_misses_keep_their_own_cause():
    # the import line alone (it works on torch 0.4) is no failure
    assert "extension-source-torch-api-removed" not in match_codes(
        "from torch.utils.ffi import create_extension\n")
    # the module named in prose without the raise
    assert "extension-source-torch-api-removed" not in match_codes(
        "This repo still builds its NMS with torch.utils.ffi; I use torch 0.4.1.\n")
    # the cpp_extension path that replaced it, failing for its own reason, is not this cause
    assert "extension-source-torch-api-removed" not in match_codes(
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")
    # a missing THC header keeps the same code by its existing signature (no regression)
    assert _codes("src/nms_cuda.cpp:2:10: fatal error: THC/THC.h: No such file or directory\n")[:1] == [
        "extension-source-torch-api-removed"]


# -- round 2: torch's 'no kernel image' next to a TORCH_CUDA_ARCH_LIST setting
#
# torch/utils/cpp_extension.py _get_cuda_arch_flags compiles an extension for the architectures in
# TORCH_CUDA_ARCH_LIST (torch's prebuilt wheels never read it at run time), so 'no kernel image'
# beside that setting is an extension built for a list without this GPU (NVIDIA/apex#1051: apex
# built with TORCH_CUDA_ARCH_LIST="7.5" on an RTX 3080, maintainer ptrblck), as the refinement
# already reads CMAKE_CUDA_ARCHITECTURES and CUDA_NVCC_FLAGS.

_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _arch_list_block(setting: str, error: str = _NO_KERNEL) -> str:
    return (f"{setting}\n"
            "But when I run the code, the following situation appears:\n"
            f"{error}\n")


def test_no_kernel_image_beside_an_arch_list_names_the_extension():
    for setting in ('export TORCH_CUDA_ARCH_LIST="7.5"',
                    "TORCH_CUDA_ARCH_LIST=7.5 pip install -v --no-cache-dir ./",
                    "I built it with TORCH_CUDA_ARCH_LIST='6.1;7.0;7.5'"):
        # as pasted, in markdown bold, quoted in a reply, and behind a log prefix
        for text in (_arch_list_block(setting),
                     _arch_list_block(f"**{setting}**", f"**{_NO_KERNEL}.**"),
                     "".join(f"> {line}\n" for line in _arch_list_block(setting).splitlines()),
                     "".join(f"2021-02-10 12:00:01 INFO {line}\n"
                             for line in _arch_list_block(setting).splitlines())):
            assert _codes(text)[:1] == ["extension-arch-missing"], text


def test_arch_list_near_misses_keep_torchs_own_reading():
    # torch's own warning that the GPU is not in its build wins over the arch list
    text = (
        'export TORCH_CUDA_ARCH_LIST="8.6"\n'
        "UserWarning: NVIDIA GeForce RTX 3080 with CUDA capability sm_86 is not compatible with the "
        "current PyTorch installation.\n"
        f"{_NO_KERNEL}\n"
    )
    assert _codes(text)[:1] == ["torch-arch-not-supported"]
    # the setting far above the error (more than two lines) is not the error's context (the rule
    # is `local = true`: never read on the log's clue lines)
    far = ('export TORCH_CUDA_ARCH_LIST="7.5"\n' + "".join(f"step {i} done\n" for i in range(6))
           + f"{_NO_KERNEL}\n")
    assert _codes(far)[:1] == ["torch-arch-not-supported"]
    # a bare 'no kernel image' keeps torch's reading
    assert _codes(f"{_NO_KERNEL}\n")[:1] == ["torch-arch-not-supported"]
