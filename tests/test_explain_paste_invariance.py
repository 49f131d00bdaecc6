"""How a log is pasted must not change what explain reads in it (issue 8 item 2): container
runtimes' JSON lines, whole-stream prefixes of kubectl, journald and vLLM/Ray workers, and the
echoed source comments of a traceback under such a prefix. bench/explain_invariance.py measures
the same over the training corpus; these tests pin the mechanisms and their near misses.
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


def _codes(text: str):
    return [c.code for c in explain_text(text).candidates]


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

