"""clean34 item 4: paste invariance (bench/explain_invariance.py; docs/dev/clean34.md).

A logger's record prefix on every line of a paste (``2024-05-01 12:00:00,123 - root - ERROR - ``,
glog's ``E0501 ...] ``, vLLM's ``ERROR 05-01 ...``): a record whose message is empty says
nothing, and a record whose level alone says error (its message is prose, a table, a banner)
is an error only where no line of the log states a failure in its own words."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text, scan_text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from explain_invariance import TRANSFORMS  # noqa: E402

PREFIXES = ["record", "record-bracket", "glog", "vllm"]


def _body(name: str) -> str:
    return (ROOT / "tests" / "corpus" / "explain" / name).read_text(encoding="utf-8").split("# ---\n", 1)[1]


@pytest.mark.parametrize("prefix", ["2024-05-01 12:00:00,123 - root - ERROR - ", "[2024-05-01 12:00:00] ERROR: ",
                                    "E0501 12:00:00.123456  4242 worker.cc:88] ",
                                    "ERROR 05-01 12:00:00 [engine.py:12] "])
def test_an_error_record_that_says_nothing_is_no_error_line(prefix):
    # (as pasted, and with the trailing space an editor strips)
    for empty in (prefix, prefix.rstrip()):
        r = scan_text(f"{empty}\n{empty}\n")
        assert r.n_other_errors == 0 and not r.other_errors, r.other_errors


def test_an_error_record_alone_is_still_an_error():
    # klog's record whose message alone reads as no error: its level says it is one, and nothing
    # else in the log states a failure
    line = 'E1201 10:11:12.123456    4242 memcache.go:265] "Unhandled Error" err="couldn\'t get resource list"'
    r = scan_text(line + "\n")
    assert [ln.text for ln in r.other_errors] == [line[line.index("]") + 2:]]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("name,code", [
    # graspnet-baseline#89: bash's 'Killed' is the only failure line; the user's prose around it
    ("graspnet-baseline-89-loading-labels-killed-oom.log", "host-oom-killed"),
    # homelab-monitor#203: a description ("GPU not detected on fresh install") and no error line
    ("homelab-monitor-203-gpu-not-detected-compose-env.log", "device-nodes-missing"),
    # unsloth#1998: unsloth's banner names the GTX 1070 and Triton 3.1.0; no error line
    ("unsloth-1998-gtx1070-gpu-too-old.log", "triton-gpu-too-old"),
])
def test_a_paste_every_line_of_which_a_logger_stamped_error_keeps_its_answer(name, code, prefix):
    body = _body(name)
    assert [c.code for c in explain_text(body).candidates][:1] == [code]
    assert [c.code for c in explain_text(TRANSFORMS[prefix][1](body)).candidates][:1] == [code]


def test_the_words_of_a_failure_outrank_a_level():
    # an ERROR record of prose before bash's 'Killed': the signal is the failure
    text = ("2024-05-01 12:00:00,123 - root - ERROR - I ran the training script on my dataset\n"
            "2024-05-01 12:00:00,123 - root - ERROR - Killed\n")
    r = scan_text(text)
    assert [ln.text for ln in r.other_errors] == ["Killed"]


# -- a message a console logger wrapped (a hanging indent), then prefixed line by line

@pytest.mark.parametrize("prefix", ["rank", "kubectl", "journald", "gha"])
def test_a_wrapped_record_under_a_streams_prefix_is_read_whole(prefix):
    # bmaltais/kohya_ss (sd-scripts#1597): rich's console log wraps 'Error loading' before the
    # DLL's path; the path's line alone names torch\lib but not WinError 126, which says the
    # DLL's own dependencies (the Visual C++ runtime) are what is missing
    body = _body("sd-scripts-1597-fbgemm-dll-libomp140-msvc.log")
    assert [c.code for c in explain_text(body).candidates][:1] == ["msvc-runtime-missing"]
    assert [c.code for c in explain_text(TRANSFORMS[prefix][1](body)).candidates][:1] == ["msvc-runtime-missing"]


def test_two_streams_lines_are_no_seam():
    # rank 0's line and rank 1's next line are two records, however the second one starts
    first = ("Could not load torch: [WinError 126] The specified module could not be found. Error loading")
    second = '                   "C:\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.'
    one = scan_text(f"[rank0]: {first}\n[rank0]: {second}\n")
    assert 1 in {h.line.number for h in one.hits if h.entry == "torch-dll-dependencies"}
    two = scan_text(f"[rank0]: {first}\n[rank1]: {second}\n")
    assert 1 not in {h.line.number for h in two.hits if h.entry == "torch-dll-dependencies"}


# -- a user's sentence cut by a terminal after its first 80 columns, its error word on the piece

def test_an_error_line_on_the_later_piece_of_a_cut_line_is_reported_from_its_start():
    # rapidsai/cuml#5484: the sentence that names compute capability 5.0 says 'error' only after
    # the cut; the guess from its words needs the whole of it
    body = _body("cuml-5484-cc-50-gpu-unsupported-missing-ptx.log")
    expl = explain_text(TRANSFORMS["wrap80"][1](body))
    assert [c.code for c in expl.candidates][:1] == ["framework-gpu-arch-unsupported"]
    texts = [u.text for u in expl.unexplained]
    assert any(t.startswith("I have a GPU with a compute capability 5.0.") and "the following error" in t
               for t in texts), texts


def test_an_earlier_piece_that_is_an_error_of_its_own_is_not_joined_again():
    line = "RuntimeError: the worker pool could not start because of error 12 in the allocator, retry later"
    r = scan_text(line[:80] + "\n" + line[80:] + "\n")
    # (one line from the first piece: a cut between two letters reads as two words, as fix33 joins it)
    assert [ln.number for ln in r.other_errors] == [1]
    assert r.other_errors[0].text.startswith("RuntimeError: ") and r.other_errors[0].text.endswith(", retry later")
