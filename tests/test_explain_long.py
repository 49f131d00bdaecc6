"""fix33: long logs of repeated records (a fault that makes every rank and DataLoader worker print
the same traceback with its own pids). Past one read (parser.CHUNK), a record met
parser.COLLAPSE_AFTER times is counted, not read again; what a full read gives must stay: the
answer, the counts, and the first line numbers of the copies collapsed (bench/explain_long.py times
it; no timing here)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stackpeel.explain import parser
from stackpeel.explain.reasoning import explain

CORPUS = Path(__file__).resolve().parent / "corpus" / "explain"


def _body(name: str) -> list:
    return (CORPUS / name).read_text(encoding="utf-8").split("# ---\n", 1)[1].rstrip("\n").split("\n")


def _workers_log(size: int) -> str:
    """torchtitan#423's traceback as each rank prints it, pipedream#28's DataLoader bus error with
    the worker's pid, and torchrun's record of each failed rank, up to ``size`` characters."""
    tb = _body("torchtitan-423-invalid-device-ordinal-ngpu.log")
    tb = [ln.replace("traceback : ", "", 1) for ln in tb[next(i for i, ln in enumerate(tb) if "Traceback" in ln):]]
    bus = [ln for ln in _body("pipedream-28-unexpected-bus-error-shm.log")
           if ln.startswith(("ERROR:", "Traceback", "  ", "RuntimeError"))]
    rng = random.Random(7)
    out, n, total = [], 0, 0
    while total < size:
        rank, pid = n % 64, 10000 + rng.randrange(90000)
        block = ([ln.replace("pid 325", f"pid {pid}") for ln in bus] if n % 4 == 3
                 else [f"[rank{rank}]: {ln}" for ln in tb])
        block.append(f"E1206 03:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{rng.randrange(10 ** 6):06d} {pid} "
                     f"torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
                     f"local_rank: {rank % 8} (pid: {pid}) of binary: /usr/bin/python3")
        text = "\n".join(block) + "\n"
        out.append(text)
        total += len(text)
        n += 1
    return "".join(out)


@pytest.fixture(scope="module")
def long_log():
    return _workers_log(int(parser.CHUNK * 2.5))


def _scan(text: str, collapse: bool):
    saved = parser.COLLAPSE_AFTER
    if not collapse:
        parser.COLLAPSE_AFTER = 10 ** 12
    try:
        return parser.scan_text(text)
    finally:
        parser.COLLAPSE_AFTER = saved


def test_collapsed_records_keep_their_count_and_first_line_numbers(long_log):
    full, collapsed = _scan(long_log, False), _scan(long_log, True)
    assert not full.repeats
    assert collapsed.repeats and sum(rep.collapsed for rep in collapsed.repeats) > 1000
    # the counts a full read makes
    assert collapsed.hit_counts == full.hit_counts
    assert (collapsed.lines, collapsed.n_tracebacks, collapsed.n_other_errors, collapsed.n_warnings) == \
        (full.lines, full.n_tracebacks, full.n_other_errors, full.n_warnings)
    assert collapsed.streams == full.streams
    # the hits kept are the first ones, with their own line numbers
    assert [(h.entry, h.line.number, h.line.text) for h in collapsed.hits] == \
        [(h.entry, h.line.number, h.line.text) for h in full.hits]
    lines = long_log.split("\n")
    for rep in collapsed.repeats:
        # each copy counted is where the log has that record, numbers aside
        assert rep.numbers == sorted(rep.numbers) and rep.numbers[0] == rep.line.number
        assert len(rep.numbers) == min(rep.collapsed, parser.REPEAT_LINES)
        for number in rep.numbers:
            assert parser._DIGITS_RE.sub("0", lines[number - 1]) == parser._DIGITS_RE.sub("0", rep.line.text)
        assert rep.count > rep.collapsed >= 1
    # the torchrun record: every copy counted, the first ones read
    record = next(rep for rep in collapsed.repeats if "failed (exitcode: 1)" in rep.line.text)
    assert record.count == long_log.count("failed (exitcode: 1)")
    # the log ends with its own last tracebacks
    assert [tb.start for tb in collapsed.tracebacks][-5:] == [tb.start for tb in full.tracebacks][-5:]


def test_the_answer_of_a_collapsed_read_is_the_full_reads(long_log):
    full = explain(_scan(long_log, False))
    collapsed = explain(_scan(long_log, True))
    assert [(c.code, c.count, [e.line for e in c.evidence]) for c in collapsed.candidates] == \
        [(c.code, c.count, [e.line for e in c.evidence]) for c in full.candidates]
    assert collapsed.root is not None and collapsed.root.code == "dataloader-shm-too-small"
    assert any("counted, not read again" in note for note in collapsed.notes)
    assert not any("counted, not read again" in note for note in full.notes)


def test_a_short_log_is_read_whole():
    # under one read nothing is collapsed, however often a record repeats (the corpus's logs)
    text = _workers_log(200_000)
    assert not parser.scan_text(text).repeats


def test_progress_shows_after_two_seconds_and_is_erased(tmp_path, monkeypatch):
    import io
    import sys

    from stackpeel.explain import cli

    log = tmp_path / "long.log"
    log.write_text(_workers_log(300_000), encoding="utf-8")
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    now = [100.0]
    with open(log, "rb") as stream:
        progress = cli._Progress(stream)
        progress._clock = lambda: now[0]
        progress._next = now[0] + cli._Progress.PROGRESS_AFTER
        assert progress.total == log.stat().st_size
        progress(100_000)                 # a quick read shows nothing
        progress.done()
        assert err.getvalue() == ""
        now[0] += 2.5
        progress(progress.total // 2)
        assert err.getvalue() == "\rstackpeel explain: read 0 MB of 0 MB (50 %)"
        progress(progress.total - 1)                 # not again within PROGRESS_EVERY
        assert err.getvalue().count("\r") == 1
        progress.done()
        assert err.getvalue().endswith("\r\x1b[K")
