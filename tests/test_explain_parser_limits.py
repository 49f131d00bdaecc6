"""Parser limits fixed as classes (docs/explain.md, *Known limits*): what a cut, wrapped or odd
log leaves must still be read.

* Python faulthandler's dump (CPython ``Python/traceback.c`` ``write_thread_id``,
  ``dump_traceback``, ``dump_frame``; ``Python/faulthandler.c``): its thread headers and its
  frames (``File "x.py", line 7 in f``: no comma before ``in``, ``???`` where a part is unknown)
  are a possible failure even when the ``Timeout (0:02:00)!`` or ``Fatal Python error`` header
  above them is cut: Python prints that dump only on a fatal signal, a timeout or an explicit
  ``dump_traceback``.
* gcc's and clang's source echo of a ``#error`` directive (``  143 | #error -- ...``) is what the
  compiler failed on, not an echoed comment.
* a terminal's cut inside a word (an upper-case name ``LD_PRE``/``LOAD``, a path, ``shape[-``/
  ``1]) > 256``, CJK text) is rejoined without a space when one of its halves is an error line
  or holds a pattern's literal (the second look of ``LogScanner._rejoin``); so is a line that
  goes on with a closing bracket.
* a frame line whose function GitHub's Markdown ate (``line 16, in`` and nothing after), an
  ERROR record quoted in a sentence, and a killed worker, actor or pod in the user's words are
  a possible failure, not "No known problem".

Every line is real text: a training log of tests/corpus/explain/ (named), a library's message
(the file is named) or the program's own format. Negative controls: healthy lines of the same
shapes name nothing and exit 0.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import ECHOED_COMMENT_RE, error_shape, suspect_shape
from stackpeel.explain.render import render_text

SILENT = "No error in this log. No known problem found."

# -- faulthandler's dump, its header cut -----------------------------------------------------

#: openequivariance-156-file-baton-hang.log (training): faulthandler.dump_traceback_later's
#: frames under its 'Timeout (0:02:00)!' header (GitHub Actions stripped the two-space indent)
BATON_FRAMES = [
    'File "/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py", line 50 in wait',
    'File "/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py", line 2156 in _jit_compile',
    'File "/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py", line 1681 in load',
    'File "/opt/venv/lib/python3.12/site-packages/openequivariance/_torch/extlib/__init__.py", line 105 in <module>',
    'File "/opt/venv/lib/python3.12/site-packages/openequivariance/__init__.py", line 37 in <module>',
    'File "/__w/nequip-private/nequip-private/tests/unit/model/test_nequip_model.py", line 7 in <module>',
]

#: the shapes of CPython's Python/traceback.c (write_thread_id, dump_traceback, dump_frame)
FAULTHANDLER_SHAPES = [
    "Current thread 0x00007f3c9e7fc740 (most recent call first):",
    "Thread 0x00007f3c8affd700 (most recent call first):",
    "Stack (most recent call first):",
    '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
    "  File ???, line ??? in ???",
    '  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed',
]


@pytest.mark.parametrize("log", [
    BATON_FRAMES[-1:],          # the cut of test_explain_silence.py: the last line only
    BATON_FRAMES[-3:],          # the last three lines
], ids=["last1", "last3"])
def test_faulthandler_frames_without_their_header_are_a_possible_failure(log):
    expl = explain_text("collected 12 items\n" + "\n".join(log) + "\n")
    assert expl.has_errors and expl.suspect_only and int(expl.exit_code) == 1
    text = render_text(expl)
    assert SILENT not in text and "Possible failure" in text and "test_nequip_model.py" in text


def test_the_whole_dump_without_its_header_still_names_the_stale_lock():
    # torch/utils/file_baton.py's frame is the signature of extension-build-lock-stale
    expl = explain_text("collected 12 items\n" + "\n".join(BATON_FRAMES) + "\n")
    assert expl.codes[:1] == ["extension-build-lock-stale"] and int(expl.exit_code) == 1


@pytest.mark.parametrize("line", FAULTHANDLER_SHAPES)
def test_each_shape_of_faulthandlers_dump_is_a_suspect(line):
    assert error_shape(line) is None and suspect_shape(line) == "suspect"
    expl = explain_text("epoch 1 done\n" + line + "\n")
    assert expl.suspect_only and int(expl.exit_code) == 1 and SILENT not in render_text(expl)


def test_a_dump_under_a_real_error_stays_behind_it():
    log = ("Fatal Python error: Segmentation fault\n\n"
           "Current thread 0x00007f3c9e7fc740 (most recent call first):\n"
           '  File "/app/train.py", line 88 in <module>\n')
    expl = explain_text(log)
    assert not expl.suspect_only and int(expl.exit_code) == 1


def test_the_whole_training_log_still_ranks_its_cause_first():
    from test_explain_corpus import CORPUS, LOGS, read_corpus

    path = CORPUS / "openequivariance-156-file-baton-hang.log"
    assert path in LOGS, "a training log (SPLIT.toml)"
    headers, body = read_corpus(path)
    expl = explain_text(body)
    assert int(expl.exit_code) == 1 and expl.codes[:1] == [headers["expected"]], (headers, expl.codes)


@pytest.mark.parametrize("line", [
    # Python's own traceback frame has a comma before "in": a truncated traceback, not a dump
    # (tested in test_explain_silence.py); here lines that only look like a dump's
    "Thread 0x7f3c started: loading shards",
    "Call Stack (most recent call first):",   # CMake's context lines under its own error
    'See File "README.md", line 7 in the docs for the options.',
    "Stack size: 8192 kB (ulimit -s)",
])
def test_lines_that_only_look_like_a_dump_name_nothing(line):
    assert suspect_shape(line) is None
    expl = explain_text("epoch 1 done\n" + line + "\n")
    assert not expl.has_errors and int(expl.exit_code) == 0 and SILENT in render_text(expl)


# -- gcc's and clang's echo of a #error directive ---------------------------------------------

#: cuda-samples-250-gcc13-host-config.log (training): gcc 13's echo of CUDA's crt/host_config.h
HOST_CONFIG_ECHO = ("  143 | #error -- unsupported GNU version! gcc versions later than 12 are not supported! The "
                    "nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, "
                    "using an unsupported host compiler may cause compilation failure or incorrect run time "
                    "execution. Use at your own risk.")


def test_the_echo_of_a_error_directive_is_what_the_compiler_failed_on():
    # the uncited cut of test_explain_silence.py: the diagnostic line above it is gone
    log = HOST_CONFIG_ECHO + "\n      |  ^~~~~\n"
    assert not ECHOED_COMMENT_RE.match(HOST_CONFIG_ECHO)
    expl = explain_text(log)
    assert expl.codes[:1] == ["host-compiler-unsupported-by-nvcc"], expl.codes
    assert int(expl.exit_code) == 1


def test_the_echo_of_a_directive_no_entry_knows_is_an_error():
    # clang's echo format is gcc's ("  12 | #error ..."); the directive's text is a user's header's
    log = '   12 | #error "This file requires compiler and library support for the ISO C++ 2017 standard."\n'
    expl = explain_text(log)
    assert expl.has_errors and not expl.suspect_only and int(expl.exit_code) == 1
    assert SILENT not in render_text(expl)


@pytest.mark.parametrize("line", [
    # IPython's echo of a library's Python comment (ECHOED_COMMENT_RE's purpose)
    "    168  # error handling: the driver reports no GPUs before initialization",
    # gcc's echo of a #warning directive (a warning, the build goes on) and of a variable's name
    '   44 | #warning "cusparse.h is deprecated, include cusparse_v2.h"',
    "   44 | #errorCount is reset below",
])
def test_other_echoed_lines_stay_echoes(line):
    assert ECHOED_COMMENT_RE.match(line)
    expl = explain_text("[ 50%] Building CUDA object main.cu.o\n" + line + "\n")
    assert not expl.has_errors and int(expl.exit_code) == 0


# -- a terminal's cut inside a word, a wrap before a bracket or inside CJK text ------------------

def _cut(msg: str, width: int = 80) -> str:
    return "\n".join(msg[i:i + width] for i in range(0, len(msg), width))


@pytest.mark.parametrize("msg, code", [
    # glibc elf/rtld.c: the cut falls inside LD_PRELOAD
    ("ERROR: ld.so: object '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' from LD_PRELOAD cannot be preloaded "
     "(cannot open shared object file): ignored.", "env-library-path-missing"),
    # runc libcontainer/cgroups/devices: the cut falls inside bpf_prog_query(BPF_CGROUP_DEVICE)
    ("error setting cgroup config for procHooks process: bpf_prog_query(BPF_CGROUP_DEVICE) failed: "
     "operation not permitted", None),
    # xformers/ops/fmha/common.py shape_not_supported_reasons: the cut falls inside 'shape[-1]'
    ("`flshattF@v2.3.6` is not supported because: max(query.shape[-1] != value.shape[-1]) > 256",
     "flash-attn-head-dim-unsupported"),
])
def test_a_terminal_cut_inside_a_word_is_rejoined(msg, code):
    expl = explain_text("step 1/10\n" + _cut(msg) + "\nexiting\n")
    whole = explain_text("step 1/10\n" + msg + "\nexiting\n")
    assert expl.codes[:1] == (whole.codes[:1] if code is None else [code]), (expl.codes, whole.codes)
    assert expl.codes and int(expl.exit_code) == 1


@pytest.mark.parametrize("log", [
    # healthy lines a terminal cut at 80 columns, with no error line: nothing to rejoin
    _cut("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 python train.py --config configs/llama3_8b.yaml"),
    _cut('{"input_shape": [1, 3, 224, 224], "output_shape": [1, 1000], "dtype": "float16", "batch": [8, 16]}'),
    # a wrapped list that goes on with a bracket
    "max_position_embeddings: 4096, rope_scaling: {'type': 'dynamic', 'factor': [2.0, 4.0\n]}\n",
    # Chinese prose a terminal cut (users' words: 'the model loaded, training starts, the loss goes down')
    _cut("\u6a21\u578b\u52a0\u8f7d\u5b8c\u6210\uff0c\u5f00\u59cb\u8bad\u7ec3\uff0c" * 6, 40),
], ids=["ld-preload-setting", "json", "bracket", "cjk"])
def test_healthy_cut_lines_name_nothing(log):
    expl = explain_text("epoch 1 done\n" + log + "\n")
    assert not expl.codes and not expl.has_errors and int(expl.exit_code) == 0, expl.codes


def test_a_cut_inside_cjk_text_is_searched_joined():
    # glibc po/zh_CN: dl-load.c's 'cannot enable executable stack as shared object requires' and
    # its errno, the line cut by a terminal inside the Chinese words (recall4's family)
    msg = ("ImportError: /opt/venv/lib/python3.10/site-packages/ctranslate2.libs/libctranslate2-bc15bf3f.so.4.5.0: "
           "\u65e0\u6cd5\u542f\u7528\u5171\u4eab\u76ee\u6807\u9700\u8981\u7684\u6267\u884c\u6808: "
           "\u65e0\u6548\u7684\u53c2\u6570")
    cut = msg[:106] + "\n" + msg[106:]
    assert "\u542f\n\u7528" in cut
    expl = explain_text("step 1/10\n" + cut + "\nexiting\n")
    assert expl.codes[:1] == ["library-needs-executable-stack"], expl.codes


def test_a_wrapped_line_goes_on_before_a_closing_bracket():
    # the same xformers reason, broken where the next line starts with ']' (the seam pass joins
    # only lower-case continuations; the second look joins it: the line holds a pattern's literal)
    msg = "`flshattF@v2.3.6` is not supported because: max(query.shape[-1] != value.shape[-1]) > 256"
    at = msg.index("]) > 256")
    expl = explain_text("step 1/10\n" + msg[:at] + "\n" + msg[at:] + "\nexiting\n")
    assert expl.codes[:1] == ["flash-attn-head-dim-unsupported"], expl.codes


# -- pip's legacy install step ---------------------------------------------------------------

def test_pips_failed_install_step_is_a_possible_failure():
    """pip/_internal/utils/subprocess.py's spinner ends a failed legacy `setup.py install` with
    "finished with status 'error'" (training log pytorch-46775, cut to its last line): the
    quoted word is what said the install failed."""
    log = "    Running setup.py install for torch: finished with status 'error'\n"
    expl = explain_text(log)
    assert int(expl.exit_code) == 1 and "No known problem" not in render_text(expl)
    assert suspect_shape(log.strip())


def test_pips_finished_install_step_names_nothing():
    expl = explain_text("    Running setup.py install for torch: finished with status 'done'\n")
    assert int(expl.exit_code) == 0 and not expl.candidates


# -- failure lines that were read as nothing (every failure line of the training logs, alone) --
# Found by explaining each line of the training logs that the documented rule calls a failure
# (tests/test_explain_silence.py's failure_lines) on its own: 12 of 1,767 were answered "No
# known problem"; these are the shapes among them that a user means as a failure.

@pytest.mark.parametrize("line", [
    # GitHub's Markdown drops `<module>`, `<lambda>`, `<listcomp>` as unknown HTML tags
    # (training logs deepspeed-..., gaussian-splatting-...: 'line 165, in' and nothing after)
    '  File "train.py", line 16, in',
    'File "C:\\Windows\\System32\\gaussian-splatting\\gaussian_renderer_init_.py", line 14, in',
    '  File "/usr/lib/python3.10/runpy.py", line 86',
    # a Python logging record ("%(levelname)s - %(message)s") quoted in the user's sentence
    'when i mined cbk,it reported "ERROR - No OpenCL kernel for Device: GeForce GTX 980 Ti."',
    # Ray's and Kubernetes' nouns for what the kernel or the scheduler killed
    "Actor killed after training one episode.",
    "the worker got killed when the second epoch started",
    "our pod was killed during checkpointing",
    # a machine or a program that crashed, in the user's words (training log flash-attention-1811)
    "Any time I try to compile flash attention it exhausts the RAM and the PC crashes.",
])
def test_a_cut_frame_a_quoted_record_or_a_kill_is_a_possible_failure(line):
    expl = explain_text(line + "\n")
    assert expl.has_errors and SILENT not in render_text(expl), line


def test_a_frame_without_its_function_still_reads_the_exception_below():
    log = ('  File "/opt/app/train.py", line 16, in\n'
           '  File "/opt/venv/lib/python3.10/site-packages/torch/cuda/__init__.py", line 302, in\n'
           "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
           "and installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    assert explain_text(log).codes[:1] == ["no-nvidia-driver"]


@pytest.mark.parametrize("line", [
    "set the logger's format to '%(levelname)s - %(message)s' to read ERROR lines",
    "killed_workers = 0",
    "Restarted the worker after it was idle for an hour",
    "the crash reporter is off; crashes: 0",
])
def test_lines_like_them_that_state_no_failure_name_nothing(line):
    expl = explain_text(line + "\n")
    assert not expl.candidates, (line, expl.codes)
