"""How a log is pasted must not change what explain reads in it (issue 8 item 2): container
runtimes' JSON lines, whole-stream prefixes of kubectl, journald and vLLM/Ray workers, the
echoed source comments of a traceback under such a prefix, typographic quotes, no-break spaces
and HTML entities. bench/explain_invariance.py measures the same over the training corpus; these
tests pin the mechanisms and their near misses.
"""

from __future__ import annotations

import json

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import decode_json_records, json_record_text, scan_text, split_prefix

SEED = """Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    out = model(x)
  File "/usr/lib/python3/dist-packages/triton/runtime/build.py", line 32, in _build
    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")
RuntimeError: Failed to find C compiler. Please specify via CC environment variable."""


def _docker(body: str) -> str:
    return "\n".join(json.dumps({"log": line + "\n", "stream": "stderr", "time": "2024-05-01T12:00:00.1Z"})
                     for line in body.split("\n"))


# -- JSON log records -------------------------------------------------------------------------

def test_docker_json_lines_read_as_the_log_they_hold():
    assert _codes(_docker(SEED))[:1] == ["no-c-compiler"]
    r = scan_text(_docker(SEED))
    assert r.n_tracebacks == 1 and r.tracebacks[0].exc_type == "RuntimeError"


def test_record_text_decodes_escapes():
    line = json.dumps({"log": 'E  \u001b[31mRuntimeError: "x"\tfailed\u001b[0m\n', "stream": "stderr", "time": "t"})
    assert json_record_text(line) == 'E  \x1b[31mRuntimeError: "x"\tfailed\x1b[0m'


@pytest.mark.parametrize("record", [
    {"MESSAGE": "RuntimeError: Failed to find C compiler.", "_PID": "4242", "SYSLOG_IDENTIFIER": "python3"},  # journalctl -o json
    {"level": "error", "ts": 1714564800.1, "msg": "RuntimeError: Failed to find C compiler."},                 # zap-style
    {"timestamp": "2024-05-01T12:00:00Z", "levelname": "ERROR", "message": "RuntimeError: Failed to find C compiler."},
])
def test_structured_logger_records(record):
    assert _codes("starting\n" + json.dumps(record) + "\n")[:1] == ["no-c-compiler"]


def test_a_record_holding_a_traceback_becomes_its_lines():
    rec = json.dumps({"log": SEED + "\n", "stream": "stderr", "time": "t"})
    out = decode_json_records("first\n" + rec + "\nlast")
    assert out.split("\n")[0] == "first" and out.split("\n")[-1] == "last"
    assert SEED in out


@pytest.mark.parametrize("line", [
    '{"message": "RuntimeError: Failed to find C compiler.", "id": 3}',      # data: no time/level/stream
    '{"log": 3, "stream": "stderr"}',                                         # no text
    '{"log": "x", "stream": "stderr"',                                        # not closed
    '[{"log": "x", "stream": "stderr"}]',                                     # not an object
    'config = {"log": "x", "stream": "stderr"}',                              # code, not a record line
])
def test_other_json_and_code_stay_as_they_are(line):
    assert decode_json_records("a\n" + line + "\nb") == "a\n" + line + "\nb"


def test_json_data_line_with_an_error_word_is_not_decoded_into_a_cause():
    text = 'result = {"message": "RuntimeError: Failed to find C compiler.", "count": 1}\n'
    # the line still holds the message (as data), but was not rewritten
    assert decode_json_records(text) == text


# -- whole-stream prefixes --------------------------------------------------------------------

@pytest.mark.parametrize("prefix,key", [
    ("[pod/trainer-0/main] ", "[pod/trainer-0/main]"),
    ("May 01 12:00:00 gpu-node-3 python3[4242]: ", "python3[4242]"),
    ("Dec  4 03:05:09 host kernel: ", "kernel"),
    ("(VllmWorker rank=0 pid=123) ", "(VllmWorker rank=0 pid=123)"),
    ("(VllmWorker TP0 pid=2305) ", "(VllmWorker TP0 pid=2305)"),
    ("(EngineCore_0 pid=77) ", "(EngineCore_0 pid=77)"),
    ("(RayWorkerWrapper pid=1234, ip=10.0.0.1) ", "(RayWorkerWrapper pid=1234, ip=10.0.0.1)"),
])
def test_stream_prefixes(prefix, key):
    assert split_prefix(prefix + "RuntimeError: x") == (key, "RuntimeError: x")


def test_journald_stream_is_the_process_not_the_timestamp():
    # every line has its own time: the traceback must still be one stream
    lines = SEED.split("\n")
    text = "\n".join(f"May 01 12:00:{i:02d} node python3[4242]: {ln}" for i, ln in enumerate(lines))
    r = scan_text(text)
    assert r.n_tracebacks == 1 and r.streams == ["python3[4242]"]
    assert _codes(text)[:1] == ["no-c-compiler"]


@pytest.mark.parametrize("line", [
    "May 01 is when it started: RuntimeError: x",      # a date in prose
    "[pod/trainer-0] RuntimeError: x",                   # kubectl names pod AND container
    "(see pid=12 below) RuntimeError: x",               # prose in parentheses
    "(pid 12) RuntimeError: x",
])
def test_prefix_near_misses(line):
    assert split_prefix(line)[0] == ""


@pytest.mark.parametrize("wrap", [
    lambda ln: "[pod/nb-0/notebook] " + ln,
    lambda ln: "May 01 12:00:00 node jupyter[12]: " + ln,
    lambda ln: "[rank0]: " + ln,
    lambda ln: "> " + ln,
    lambda ln: "2024-05-01 12:00:00,123 - root - ERROR - " + ln,
    lambda ln: "E0501 12:00:00.123456  4242 worker.cc:88] " + ln,
    lambda ln: "ERROR 05-01 12:00:00 [engine.py:12] " + ln,
])
def test_echoed_source_comment_under_a_prefix_is_no_clue(wrap):
    # an IPython traceback echoes torch's source; its comment words ("driver initialization
    # error") are the library's, not the user's situation
    lines = [
        "/usr/local/lib/python3.7/dist-packages/torch/cuda/__init__.py in _lazy_init()",
        "    168         # This function throws if there's a driver initialization error, no GPUs",
        "    169         # are found or any other error occurs",
        "--> 170         torch._C._cuda_init()",
        "",
        "RuntimeError: No CUDA GPUs are available",
    ]
    body = "\n".join(wrap(ln) for ln in lines)
    assert _codes(body)[:1] == _codes("\n".join(lines))[:1]
    assert "driver initialization error" not in scan_text(body).clues


# -- a terminal's hard wrap -------------------------------------------------------------------

from stackpeel.explain.parser import hard_wrap_cuts, rejoin_hard_wraps  # noqa: E402

LONG = [
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
    "calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found",
    "  File \"/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 118, in is_available and more",
    "W0501 12:00:00.000000 1 worker.cc:88] CUDA initialization: the driver on this machine reported an error, see above",
]


def _cut(text: str, width: int) -> str:
    return "\n".join(piece for line in text.split("\n")
                     for piece in ([line[i:i + width] for i in range(0, len(line), width)] or [""]))


@pytest.mark.parametrize("width", [60, 80, 100])
def test_a_terminal_wrapped_log_is_joined_back(width):
    text = "\n".join(["starting", *LONG, "done"])
    assert rejoin_hard_wraps(_cut(text, width)) == text


def test_one_message_cut_twice_is_read_whole():
    # one long line in a short paste: two cuts in a row (not enough to rewrite the log, enough
    # to try the join), and the cut lands after a '?' whose space the terminal kept
    text = "step 1/10\n" + _cut(LONG[0], 80) + "\nexiting\n"
    assert rejoin_hard_wraps(text) == text
    assert hard_wrap_cuts(text.split("\n"))
    assert _codes(text)[:1] == ["wsl-gpu-unavailable"]


@pytest.mark.parametrize("end", ["", "\n"])
@pytest.mark.parametrize("size", [0, 1, 37])
def test_a_wrapped_message_that_ends_the_paste_is_joined_across_its_last_line(end, size):
    # the last piece of a cut line without a newline after it (a paste that ends with the
    # message): it is read with the lines before it, however the text was fed
    from stackpeel.explain.parser import LogScanner

    text = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" + _cut(LONG[0], 80) + end
    if size:
        sc = LogScanner()
        for i in range(0, len(text), size):
            sc.feed(text[i:i + size])
        r = sc.close()
    else:
        r = scan_text(text)
    assert {h.entry for h in r.hits} == {"cuda-device-count-symbol-not-found"}
    assert r.lines == 5 and [t.exc_type for t in r.tracebacks] == ["RuntimeError"]
    assert _codes(text)[:1] == ["wsl-gpu-unavailable"]


def test_a_last_line_without_newline_is_one_line_not_two():
    # a near miss: the text held until the end is not read twice, nor does a final newline add a line
    for text in ("a\nRuntimeError: No CUDA GPUs are available", "a\nRuntimeError: No CUDA GPUs are available\n"):
        r = scan_text(text)
        assert r.lines == 2
        assert r.hit_counts == {"torch-cuda-unavailable-no-gpus": 1, "said-torch-cuda-unavailable": 1}
    assert scan_text("a\n\n").lines == 2


@pytest.mark.parametrize("text", [
    # nvidia-smi's table: every row as wide by design
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 510.68.02    Driver Version: 510.68.02    CUDA Version: 11.6     |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n",
    # the same record twice, and records of one shape (torch's device list)
    "Device: 2, GeForce GTX 1080 Ti, pciBusID: 82, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 3, GeForce GTX 1080 Ti, pciBusID: 83, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 4, GeForce GTX 1080 Ti, pciBusID: 84, pciDeviceID: 0, pciDomainID:0\n",
    # a message of several sentences whose lines happen to be as long (torch's old driver text)
    "The NVIDIA driver on your system is too old (found version 9000).\n"
    "Please update your GPU driver by downloading and installing a new\n"
    "version from the URL: http://www.nvidia.com/Download/index.aspx Alt\n"
    "ernatively, go to: https://pytorch.org to install a PyTorch vers.\n",
    # progress bars
    "  0%|                                                      | 0/20 [00:00<?, ?it/s]\n"
    " 50%|###########################                           | 10/20 [00:01<?, ?it/s]\n"
    "100%|######################################################| 20/20 [00:02<?, ?it/s]\n",
])
def test_lines_as_wide_by_design_are_not_joined(text):
    assert rejoin_hard_wraps(text) == text


def test_a_word_wrap_whose_lines_are_equally_long_is_not_glued():
    # textwrap drops the space at each break; two lines of exactly the longest length in a row
    # are a weak sign: the lines stay apart and a join is kept only where it reads more
    msg = ("numba.cuda.cudadrv.error.CudaSupportError: CUDA is disabled due to setting NUMBA_DISABLE_CUDA=1 in "
           "the environment, or because CUDA is unsupported on 32-bit systems.")
    import textwrap
    text = "step 1/10\n" + "\n".join(textwrap.wrap(msg, 80, break_long_words=False)) + "\nexiting\n"
    assert rejoin_hard_wraps(text) == text
    assert _codes(text)[:1] == ["env-switch-set"]


# -- a logger's record prefix (robust, session 19) ---------------------------------------------

# tests/corpus/explain/samus-39-no-cuda-gpus-visible-devices-3.log (training)
TRACEBACK = """\
Traceback (most recent call last):
  File "/home/user/SAMUS/train.py", line 120, in <module>
    model.to(device)
RuntimeError: No CUDA GPUs are available"""

RECORD_PREFIXES = (
    "2024-05-01 12:00:00,123 - root - ERROR - ",
    "[2024-05-01 12:00:00] ERROR: ",
    "E0501 12:00:00.123 123 file.cc:12] ",
    "INFO 05-01 12:00:00 [file.py:12] ",
    "May 01 12:00:00 host python[123]: ",
)


def _exc(text):
    return [(tb.exc_type, tb.message) for tb in scan_text(text).tracebacks]


@pytest.mark.parametrize("prefix", RECORD_PREFIXES)
def test_logger_record_prefixes_leave_the_message_core(prefix):
    wrapped = "\n".join(prefix + line for line in TRACEBACK.split("\n"))
    assert _exc(wrapped) == [("RuntimeError", "No CUDA GPUs are available")]


@pytest.mark.parametrize("near", ["ERROR - RuntimeError: x", "[note] ERROR: x", "May the GPU: x", "E0501 is a code] x"])
def test_record_prefix_needs_a_timestamp(near):
    from stackpeel.explain.parser import read_log_prefix
    assert read_log_prefix(near) == (0, "", False)


@pytest.mark.parametrize("prefix,level", [
    ("2024-05-01 12:00:00,123 - root - ERROR - ", "ERROR"),
    ("2024-05-01 12:00:00,123 - INFO - ", "INFO"),
    ("[2024-05-01 12:00:00] ERROR: ", "ERROR"),
    ("[2024-05-01 12:00:00][trainer] WARNING ", "WARNING"),
    ("2024-05-01T12:00:00Z | CRITICAL | ", "CRITICAL"),
    ("E0501 12:00:00.123 123 file.cc:12] ", "E"),
    ("I0501 12:00:00.123456  4242 worker.cc:88] ", "I"),
    ("E0303 11:40:42.533000 713 torch/distributed/elastic/multiprocessing/api.py:732] ", "E"),
    ("INFO 05-01 12:00:00 [file.py:12] ", "INFO"),
    ("ERROR 05-26 07:50:26 [core.py:396] ", "ERROR"),
])
def test_one_reader_reads_a_record_prefix_and_its_level(prefix, level):
    from stackpeel.explain.parser import read_log_prefix, strip_log_prefix
    line = prefix + "RuntimeError: No CUDA GPUs are available"
    assert read_log_prefix(line) == (len(prefix), level, True)
    assert strip_log_prefix(line) == "RuntimeError: No CUDA GPUs are available"


@pytest.mark.parametrize("prefix", [
    "ERROR:    ",                                          # uvicorn
    "[05/23/2021 18:30:06][host][0]:",                     # bracketed fields, no ISO time
    "E0303 11:40:42.533000 713 api.py] ",                 # glog's shape without a line number
    "WARNING 2024/05/01 something] ",
])
def test_looser_logger_prefixes_are_read_before_an_exception_only(prefix):
    # no timestamp the record reader trusts: the line keeps its prefix when it is scanned, the
    # exception's type after it is still found
    from stackpeel.explain.parser import exception_line, read_log_prefix, strip_log_prefix
    line = prefix + "RuntimeError: No CUDA GPUs are available"
    end, level, stamped = read_log_prefix(line)
    assert (end, level, stamped) == (len(prefix), "", False)
    assert exception_line(strip_log_prefix(line)) == ("RuntimeError", "No CUDA GPUs are available")


def test_error_record_stays_an_error_once_its_prefix_is_read():
    # klog (kubectl): the message alone reads as no error, the E level says it is one
    line = 'E1201 09:22:09.628174    7015 memcache.go:265] "Unhandled Error" err="couldn\'t get current server API group list"'
    assert scan_text(line).n_other_errors == 1


# -- a message re-wrapped at word boundaries (session 20) ---------------------------------------

import textwrap  # noqa: E402

from stackpeel.explain.parser import soft_wrap_paragraph  # noqa: E402

from explain_helpers import codes_of as _codes

# c10/cuda/CUDAFunctions.cpp device_count_impl, with cudaErrorSymbolNotFound (500)
DEVICE_COUNT = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                "calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found")
# aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK on a bf16 batched GEMM
CUBLAS_BF16 = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, "
               "opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, "
               "(int)ldb, strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, "
               "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")
# torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (torch 1.7), the path a word longer than the width
NCCL_ERROR = ("NCCL error in: /opt/conda/conda-bld/pytorch_1603729096996/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, "
              "unhandled system error, NCCL version 2.7.8")


def _soft(text: str, width: int = 80, indent: str = "") -> str:
    return "\n".join(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent,
                                   break_long_words=False, break_on_hyphens=False))


def _entries(text: str):
    return {h.entry for h in scan_text(text).hits}


@pytest.mark.parametrize("message,entry", [
    (DEVICE_COUNT, "cuda-device-count-symbol-not-found"),
    (CUBLAS_BF16, "cublas-bf16-gemm-not-supported"),
    (NCCL_ERROR, "nccl-error-generic"),
])
@pytest.mark.parametrize("width,indent,wrap", [
    (72, "", None), (80, "", None), (100, "    ", None),
    (80, "", lambda ln: "[rank1]: " + ln), (80, "", lambda ln: "> " + ln),
])
def test_a_message_rewrapped_at_word_boundaries_reads_its_entry(message, entry, width, indent, wrap):
    body = _soft(message, width, indent)
    assert body.count("\n") >= 1
    if wrap:
        body = "\n".join(wrap(ln) for ln in body.split("\n"))
    text = "step 1/10 loss 0.51\n" + body + "\nexiting\n"
    assert entry in _entries(message)
    assert entry in _entries(text)


def test_a_rewrapped_message_names_what_only_its_last_line_says():
    # a specific entry on the first line, a more specific one read only with the rest of the
    # paragraph (an issue's sentence about ENOSPC that ends on /dev/shm: theroyallab/tabbyAPI#387)
    msg = ("When using the docker compose file provided in the repo, loading a model with tensor parallelism "
           "fails. I get a `[Errno 28] No space left on device.` error (see logs below). I think I've "
           "pinpointed it down, it seems to reference to the space available at /dev/shm.")
    assert {"enospc-no-path", "nccl-shm"} <= _entries(msg)
    assert {"enospc-no-path", "nccl-shm"} <= _entries(_soft(msg) + "\n")


def test_paragraph_of_a_greedy_wrap():
    pieces = _soft(DEVICE_COUNT).split("\n")
    assert len(pieces) == 3
    for i in range(3):
        assert soft_wrap_paragraph(pieces, i) == (0, 2)


@pytest.mark.parametrize("pieces", [
    # a short line and a long one: the long one's first word would have fit after the short one
    ["Error when building docker", "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions"],
    # lines of a log, each a record of its own
    ["2024-05-01 12:00:00,123 - root - INFO - loading the model weights from the checkpoint directory",
     "2024-05-01 12:00:01,456 - root - ERROR - Error 500: named symbol not found"],
    # a traceback's frame, an exception line, a list item and a blank line end a paragraph
    ["  File \"/usr/lib/python3/dist-packages/torch/cuda/__init__.py\", line 118, in is_available and more",
     "  File \"x.py\", line 2, in f"],
    ["Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling it",
     "RuntimeError: named symbol not found"],
    ["Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling it",
     "- named symbol not found"],
    ["Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling it",
     "", "named symbol not found"],
    # a progress bar cut at the terminal's width, and the shell's report after it
    ["Loading data path and collision labels...:  91%|\u2589| 91/100 [00:17<00:02,  3.32it/", "Killed"],
    # other indentation: a new block
    ["Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling it",
     "    named symbol not found"],
])
def test_lines_that_are_no_wrapped_paragraph(pieces):
    for i in range(len(pieces)):
        assert soft_wrap_paragraph(pieces, i) == (i, i)


def test_two_messages_on_two_lines_are_not_read_as_one():
    # a near miss: the device-count message over three lines that no word wrapper made (the
    # middle one is far longer than the first could have been wrapped at)
    text = ("Unexpected error from cudaGetDeviceCount(). Did you run some cuda\n"
            "functions before calling NumCudaDevices() that might have already set an error? The loader said so "
            "in the log of the previous run as well\n"
            "Error 500: named symbol not found\n")
    assert "cuda-device-count-symbol-not-found" not in _entries(text)
    # the same three lines as a wrapper makes them are one message
    assert "cuda-device-count-symbol-not-found" in _entries(_soft(DEVICE_COUNT) + "\n")


PROSE = ("I followed the installation guide of the repository step by step on a fresh machine with two "
         "GPUs, created the conda environment from the YAML file and installed the package in editable mode. "
         "Then I started the launcher from the examples folder with the default configuration, and after a "
         "few seconds it stopped with the output below. The same command works on my laptop.")


def test_a_rewrapped_unexplained_error_is_reported_whole_once():
    # nothing names it: the words a guess reads are the whole message (pytorch/torchx#540's title),
    # in a paste that is word-wrapped as a whole
    msg = ("Error: Failed to launch PyTorch DDP script on ray clusters when exposed ports on nodes are limited "
           "to a small range that the rendezvous cannot use")
    r = scan_text(_soft(PROSE) + "\n\n" + _soft(msg) + "\n\nstep 2\n")
    assert [ln.text for ln in r.other_errors] == [msg]
    assert r.n_other_errors == 1


def test_an_unexplained_error_in_a_log_not_wrapped_as_a_whole_keeps_its_line():
    # a near miss: two lines of a log that merely look like a wrap (no other line near their width)
    msg = ("Error: Failed to launch PyTorch DDP script on ray clusters when exposed ports on nodes are limited "
           "to a small range that the rendezvous cannot use")
    r = scan_text("step 1\n" + _soft(msg) + "\nstep 2\n")
    assert [ln.text for ln in r.other_errors] == _soft(msg).split("\n")


def test_the_shells_kill_report_after_a_cut_progress_bar_stays_its_own_line():
    text = ("Loading grasping labels...: 100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 88/88 [00:28<00:00,  3.07it/s]\n"
            "Loading data path and collision labels...:  91%|\u2589| 91/100 [00:17<00:02,  3.32it/\n"
            "Killed\n")
    assert [ln.text for ln in scan_text(text).other_errors] == ["Killed"]


@pytest.mark.parametrize("prefix", ["2024-05-01 12:00:00,123 - root - ERROR - ", "E0501 12:00:00.123456  4242 worker.cc:88] "])
def test_a_record_on_every_line_is_no_paragraph(prefix):
    # each line a record of its own: the shell's "Killed" is not joined to the record above it
    lines = ["Loading the checkpoint shards from the model directory of the run, this may take a while",
             "Killed"]
    r = scan_text("\n".join(prefix + ln for ln in lines) + "\n")
    assert [ln.text for ln in r.other_errors] == ["Killed"]


@pytest.mark.parametrize("pieces", [
    # two records of one shape, then the shell's report (a capital word after no sentence end)
    ["Writing metrics: /home/user/logdir/dreamer/20251205T175323/metrics.jsonl",
     "Writing metrics: /home/user/logdir/dreamer/20251205T175323/scores.jsonl", "Killed"],
    ["Saving the checkpoint of step 1200 to /home/user/runs/exp-42/checkpoints/last.ckpt", "Killed"],
])
def test_a_line_of_its_own_after_a_long_one_is_no_wrapped_piece(pieces):
    for i in range(len(pieces)):
        assert soft_wrap_paragraph(pieces, i) == (i, i)
    assert [ln.text for ln in scan_text("\n".join(pieces) + "\n").other_errors] == ["Killed"]


def test_a_name_or_a_sentence_end_before_a_capital_still_continues():
    pieces = ["I am unable to get PyTorch to recognize the CUDA cores on my NVIDIA Jetson AGX",
              "Orin. Despite multiple installation attempts using standard `pip` commands and"]
    assert soft_wrap_paragraph(pieces, 1) == (0, 1)
    pieces = _soft("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                   "functions before calling NumCudaDevices() that might have already set an error? "
                   "Error 500: named symbol not found", 80).split("\n")
    assert pieces[-1].startswith("Error 500") and soft_wrap_paragraph(pieces, len(pieces) - 1) == (0, len(pieces) - 1)


@pytest.mark.parametrize("rest", ["    error, no GPUs", " no GPUs", "no GPUs"])
def test_the_wrapped_rest_of_an_echoed_comment_is_no_clue(rest):
    # torch/cuda/__init__.py's comment, echoed by IPython and wrapped at 80 columns (by words or
    # by a terminal): its second half is still the library's words
    lines = [
        "/usr/local/lib/python3.7/dist-packages/torch/cuda/__init__.py in _lazy_init()",
        "    168         # This function throws if there's a driver initialization" + ("" if rest.startswith("    ") else " error,"),
        rest,
        "    169         # are found or any other error occurs",
        "--> 170         torch._C._cuda_init()",
        "",
        "RuntimeError: No CUDA GPUs are available",
    ]
    assert "no GPU" not in scan_text("\n".join(lines)).clues


def test_a_users_line_after_the_echoed_source_is_still_read():
    # a near miss: the exception line after an echoed comment is the program's, and a user's
    # sentence after a blank line is the user's
    lines = ["    168         # This function throws if there's a driver initialization error, no GPUs",
             "RuntimeError: no GPU found on this machine", "", "I have no GPU on this machine"]
    seen = scan_text("\n".join(lines)).clues.get("no GPU", [])
    assert [n for n, _ in seen] == [2, 4]


def test_a_hit_line_that_ends_its_paragraph_keeps_its_own_text():
    # a near miss: the next line is far longer than this one could have been wrapped at (its
    # first word would have fit): a line of its own, not the rest of this one
    text = ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n"
            "Nothing else was printed by the build step before the process exited with status 1, "
            "and the log of the previous run ends the same way\n")
    hits = [h for h in scan_text(text).hits if h.entry == "triton-no-c-compiler"]
    assert hits and hits[0].line.text == "RuntimeError: Failed to find C compiler. Please specify via CC environment variable."


def test_a_tables_rows_are_no_sentence_to_report_whole():
    # `docker context ls` (NVIDIA/nvidia-container-toolkit#814): the header ends on ERROR, a row
    # follows; reported as one error line they would mix two rows
    rows = ["NAME              DESCRIPTION                               DOCKER ENDPOINT        ERROR",
            "default           Current DOCKER_HOST based configuration   unix:///var/run/docker.sock"]
    assert soft_wrap_paragraph(rows, 0, sentences=True) == (0, 0)
    # the same two rows are no paragraph of prose either way round
    assert soft_wrap_paragraph(rows, 1, sentences=True) == (1, 1)


# -- typographic quotes ------------------------------------------------------------------------

SMART = str.maketrans({"'": "\u2019", '"': "\u201d"})


@pytest.mark.parametrize("text,code", [
    (SEED, "no-c-compiler"),
    ("ModuleNotFoundError: No module named 'triton'", "triton-not-installed"),
    ("AttributeError: module 'torch' has no attribute 'compiler'", "torch-too-old-for-package"),
])
def test_typographic_quotes_read_as_the_ascii_ones_the_program_printed(text, code):
    # a word processor, a forum or a chat client turns ' and " into \u2019 and \u201d (or \u2018 \u201c)
    assert _codes(text.translate(SMART))[:1] == [code], _codes(text.translate(SMART))
    opened = text.replace("'", "\u2018", 1).translate(SMART)
    assert _codes(opened)[:1] == [code], _codes(opened)


@pytest.mark.parametrize("route", [
    lambda t: t.replace(" ", "\u00a0"),                                       # a web page's no-break spaces
    lambda t: t.replace(" ", "\u202f", 3),                                    # a few narrow ones
    lambda t: t.replace("'", "&#39;").replace('"', "&quot;"),                  # a mail notification's entities
    lambda t: t.replace("'", "&#x27;").replace('"', "&#34;"),
])
@pytest.mark.parametrize("text,code", [
    (SEED, "no-c-compiler"),
    ("ModuleNotFoundError: No module named 'triton'", "triton-not-installed"),
])
def test_what_a_pastes_route_put_for_the_printed_characters_is_read_back(text, code, route):
    assert _codes(route(text))[:1] == [code], _codes(route(text))


def test_an_ampersand_that_is_no_entity_is_kept():
    from stackpeel.explain.parser import as_printed
    assert as_printed("make && make install; echo a&b &amp c") == "make && make install; echo a&b &amp c"
    assert as_printed("x &lt;y&gt; &amp;&amp; z") == "x <y> && z"


def test_the_evidence_shows_the_line_as_pasted():
    from stackpeel.explain.parser import as_printed
    line = "ModuleNotFoundError: No module named \u2018triton\u2019 \u2014 \u00e9t\u00e9"
    assert as_printed(line) == "ModuleNotFoundError: No module named 'triton' \u2014 \u00e9t\u00e9"
    assert as_printed("plain 'ascii' text") == "plain 'ascii' text"
    expl = explain_text("some output\n" + line + "\n")
    assert expl.candidates[0].code == "triton-not-installed"
    assert [e.text for e in expl.candidates[0].evidence] == [line]
