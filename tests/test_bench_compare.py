"""bench/explain_accuracy.py --compare: how a change moved the logs two runs both answered, in
counts only (the person who measures validation logs learns whether they moved, never which)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench():
    sys.path.insert(0, str(BENCH))
    try:
        import explain_accuracy
    finally:
        sys.path.pop(0)
    return explain_accuracy


def _raw(rows):
    head = "stackpeel explain accuracy, ...\n\nper-log answers (part, file, expected, explain's ranking, verdict):\n"
    return head + "".join(f"{p}\t{f}\texpected={e}\tranked={r}\texit=1\t{v}\n" for p, f, e, r, v in rows)


def test_compare_counts_gains_losses_and_new_logs_without_naming_any(tmp_path):
    bench = _bench()
    old = tmp_path / "old.txt"
    old.write_text(_raw([
        ("validation", "a.log", "x", "x", "top-1"),
        ("validation", "b.log", "y", "z", "miss"),
        ("validation", "c.log", "y", "y", "top-1"),
        ("training", "t.log", "x", "x", "top-1"),
    ]) + "validation misses by category (top-1 misses / logs):\n  y   1 / 2\n")
    new = {"validation": {"a.log": "top-1", "b.log": "top-1", "c.log": "top-3", "d.log": "top-1"}}
    line = bench.compare(bench.read_verdicts(old), new, "validation", "old.txt")
    assert line == ("validation since old.txt: 3 logs in both, top-1 2 -> 2 (gained 1, lost 1); 1 new")
    assert not any(name in line for name in ("a.log", "b.log", "c.log", "d.log"))
    # a part the old file does not hold: nothing in both, every log new
    assert bench.compare(bench.read_verdicts(old), {"training": {"t.log": "miss", "u.log": "top-1"}},
                         "training").endswith("1 logs in both, top-1 1 -> 0 (gained 0, lost 1); 1 new")


def test_compare_reads_a_gzipped_results_file_as_the_plain_one(tmp_path):
    """Older raw results are committed gzipped (docs/dev/KNOWLEDGE.md "Committed results"):
    --compare reads one as it reads the text it holds (a real committed training file)."""
    import gzip
    bench = _bench()
    packed = BENCH / "results" / "explain_accuracy-2026-12-02-harva-training-after.txt.gz"
    plain = tmp_path / "plain.txt"
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    verdicts = bench.read_verdicts(packed)
    assert verdicts == bench.read_verdicts(plain)
    assert len(verdicts["training"]) > 1000 and "validation" not in verdicts
    assert bench.compare(verdicts, verdicts, "training").endswith("top-1 {0} -> {0} (gained 0, lost 0); 0 new".format(
        sum(v == "top-1" for v in verdicts["training"].values())))


def test_the_verdict_column_is_the_one_the_raw_file_writes():
    bench = _bench()
    row = {"top1": False, "top3": True, "silent": False, "unknown": False}
    assert bench.verdict_of(row) == "top-3"
    assert bench.verdict_of({**row, "top3": False, "unknown": True, "silent": True}) == "silent"


def test_validation_categories_reach_the_results_file_not_stdout(tmp_path, capsys):
    """Whoever runs the bench for its summary line must not read what the validation logs are
    about: the validation part's per-category misses go to the results file only (the training
    part's still print)."""
    bench = _bench()
    out = tmp_path / "va.txt"
    assert bench.main(["--part", "validation", "--in-process", "--collected", "holdout-2026-12-05b",
                       "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    written = out.read_text(encoding="utf-8")
    assert "validation  " in shown and "top-1" in shown          # the summary line is printed
    assert "validation misses by category (top-1 misses / logs):" in written
    assert "misses by category (top-1" not in shown
    assert "in the results file only" in shown
    # nothing below the summary names a category or a log
    assert shown.count("\n") <= 12


def test_out_gz_writes_the_results_gzipped_and_compare_reads_them(tmp_path, capsys):
    """``--out NAME.txt.gz`` writes the raw results as `gzip -9n` would (no name, no time in the
    header), for a result too big to commit plain (tests/test_tree_size.py); --compare reads it."""
    import gzip
    bench = _bench()
    out = tmp_path / "tr.txt.gz"
    assert bench.main(["--part", "training", "--in-process", "--collected", "harv32b-2026-12-06",
                       "--out", str(out)]) == 0
    capsys.readouterr()
    packed = out.read_bytes()
    assert packed[:2] == b"\x1f\x8b" and packed[4:8] == b"\0\0\0\0"  # gzip, mtime 0
    text = gzip.decompress(packed).decode("utf-8")
    assert text.startswith("stackpeel explain accuracy") and "\ntraining\t" in text
    verdicts = bench.read_verdicts(out)
    assert verdicts["training"] and set(verdicts) == {"training"}
    assert len(verdicts["training"]) == text.count("\ntraining\t")
