"""lead43: XLA's warning that the driver is older than the ptxas it compiles with.

kb5 and harvx20 held ``The NVIDIA driver's CUDA version is X which is older than the ptxas CUDA
version`` a healthy notice (XLA only disables parallel compilation), and harv43b measured a
signature for its 2024+ wording (``... older than the PTX compiler version``) and left the decision
to the lead. Both wordings now read as ``driver-too-old-for-build`` as a *warning* signature
(``warning = true``, weight 1): alone, in a run that finishes, the warning names nothing; in a log
where another line shows a failure and no program's line names a cause, the old driver is the
answer (the warning itself says to update the driver; localcolabfold#126 and alphafold3#272's
maintainers said so); beside a failure a program's own line names, that failure stays first.
Messages: openxla/xla xla/service/gpu/nvptx_compiler.cc ChooseLinkingMethod.
"""
from __future__ import annotations

import pytest

from explain_helpers import codes_of as codes

NEW = ("2025-10-15 18:52:49.085286: W external/xla/xla/service/gpu/nvptx_compiler.cc:930] The NVIDIA "
       "driver's CUDA version is 12.4 which is older than the PTX compiler version 12.6.77. Because the "
       "driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may "
       "slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA "
       "forward compatibility packages.")
OLD = ("2022-05-01 10:00:00.123456: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/"
       "nvptx_compiler.cc:497] The NVIDIA driver's CUDA version is 11.0 which is older than the ptxas "
       "CUDA version (11.6.124). Because the driver is older than the ptxas version, XLA is disabling "
       "parallel compilation, which may slow down compilation. You should update your NVIDIA driver or "
       "use the NVIDIA-provided CUDA forward compatibility packages.")
UNNAMED_FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "run_alphafold.py", line 812, in <module>\n'
    "    app.run(main)\n"
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: "
    "run time error: custom call 'xla.gpu.func.launch' failed.\n")
OOM = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
       "allocate 50677266816 bytes.\n")


@pytest.mark.parametrize("warning", [NEW, OLD], ids=["ptx-compiler", "ptxas"])
def test_the_warning_alone_names_nothing(warning):
    assert codes("I0101 starting\n" + warning + "\nI0101 done, 5 models predicted\n") == []


@pytest.mark.parametrize("warning", [NEW, OLD], ids=["ptx-compiler", "ptxas"])
def test_beside_an_unnamed_failure_the_old_driver_is_first(warning):
    assert codes(warning + "\n" + UNNAMED_FAILURE)[:1] == ["driver-too-old-for-build"]


@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "(pid=123) ", "> ", "    "])
def test_prefixed_and_quoted(prefix):
    assert codes(prefix + NEW + "\n" + UNNAMED_FAILURE)[:1] == ["driver-too-old-for-build"]


def test_a_failure_a_program_names_stays_first():
    got = codes(NEW + "\n" + OOM)
    assert got[:1] == ["gpu-out-of-memory"] and "driver-too-old-for-build" in got


def test_a_driver_newer_than_ptxas_is_no_match():
    line = NEW.replace("older than the PTX compiler", "newer than the PTX compiler")
    assert "driver-too-old-for-build" not in codes(line + "\n" + UNNAMED_FAILURE)


def test_a_piece_of_the_warning_wrapped_onto_its_own_line_is_no_other_failure():
    # localcolabfold#126's paste, hard-wrapped at the terminal's width: the third piece reads like
    # an error line of its own ("You should update your NVIDIA driver"), but it is the warning's
    wrapped = ("2022-12-16 18:31:30.311235: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/"
               "nvptx_compiler.cc:497] The NVIDIA driver's CUDA version is 11.\n"
               "0 which is older than the ptxas CUDA version (11.6.124). Because the driver is older than the "
               "ptxas version, XLA is disabling parallel compilation, whic\n"
               "h may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided "
               "CUDA forward compatibility packages.\n")
    assert codes(wrapped) == []
    assert codes(wrapped + UNNAMED_FAILURE)[:1] == ["driver-too-old-for-build"]


# harv43a left gcc's newer hint unread: gcc 10 and later print "this is probably fixable by adding"
# (gcc/c-family/known-headers.cc), gcc 8-9 "did you forget to"
GCC_HINTS = [
    "diff_gaussian_rasterization/cuda_rasterizer/rasterizer_impl.h:23:42: note: 'uint32_t' is defined in header "
    "'<cstdint>'; this is probably fixable by adding '#include <cstdint>'",
    "simple_knn.cu:12:5: note: 'FLT_MAX' is defined in header '<cfloat>'; this is probably fixable by adding "
    "'#include <cfloat>'",
    "rasterizer_impl.h:23:42: note: 'uint32_t' is defined in header '<cstdint>'; did you forget to '#include <cstdint>'?",
    "knn.c:3:1: note: 'uint64_t' is defined in header '<stdint.h>'; this is probably fixable by adding "
    "'#include <stdint.h>'",
]


@pytest.mark.parametrize("line", GCC_HINTS, ids=["gcc13-cstdint", "gcc13-cfloat", "gcc9", "c-stdint"])
def test_gccs_include_hint_names_the_missing_std_include(line):
    text = line + "\nerror: command '/usr/bin/gcc' failed with exit code 1\n"
    assert codes(text)[:1] == ["extension-source-missing-std-include"]


def test_a_hint_for_another_header_is_no_match():
    line = ("foo.cc:3:1: note: 'std::vector' is defined in header '<vector>'; this is probably fixable by adding "
            "'#include <vector>'")
    assert "extension-source-missing-std-include" not in codes(line + "\nerror: build failed\n")


# explain.numbers names a bare status number unless the line holds its name or its text; a line cut
# or wrapped inside the text holds only the text's start, and the name put after the number then
# broke the program's own wording ("Cuda error(209) [cudaErrorNoKernelImageForDevice: ...],")
PADDLE_OLD = "ExternalError:  Cuda error(209), no kernel image is available for execution on the device."


@pytest.mark.parametrize("cut", [60, 70, 80])
def test_a_status_whose_text_the_line_starts_is_not_named_again(cut):
    from stackpeel.explain.numbers import read_numbers
    line = PADDLE_OLD[:cut]
    assert read_numbers(line) == line


def test_a_status_without_its_text_is_still_named():
    from stackpeel.explain.numbers import read_numbers
    assert "cudaErrorNoKernelImageForDevice" in read_numbers("ExternalError:  Cuda error(209)")
