"""The checkout stays small enough to travel: the device tool copies the working tree to a GPU
machine and refuses more than 64 MiB (tracked files, untracked ones and the carried build outputs
together), and every session commits more raw output. docs/dev/KNOWLEDGE.md "Committed results"
states the rule; docs/dev/slim33.md measured it (60.5 MB tracked before, 31.2 MB after).

1. The tracked tree (the files ``git ls-files`` names, as they are on disk) stays under
   TREE_BUDGET bytes.
2. A raw output under bench/results/ or docs/validation/ over RAW_LIMIT bytes is committed
   gzipped (``gzip -9n NAME`` -> ``NAME.gz``, its references naming the ``.gz``).
3. Every committed ``.gz`` there unpacks: a gzipped result is still a readable one.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: bytes: the tracked tree after slim33 was 31.2 MB; the device tool's limit is 64 MiB (67.1 MB)
#: for everything that travels, the carried virtual environments and wheels included
TREE_BUDGET = 40_000_000
#: bytes of one plain (not gzipped) file under RAW_DIRS
RAW_LIMIT = 300_000
RAW_DIRS = ("bench/results/", "docs/validation/")
HINT = ("gzip it in place (gzip -9n FILE: FILE.gz, byte-identical once unpacked) and make every "
        "reference name the .gz; readers use gzip (docs/dev/KNOWLEDGE.md \"Committed results\")")


def tracked() -> List[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def sizes() -> dict:
    """path -> bytes on disk, for every tracked file present (a deletion not yet committed counts 0)."""
    out = {}
    for p in tracked():
        f = ROOT / p
        if f.is_file() and not f.is_symlink():
            out[p] = f.stat().st_size
    return out


def test_the_tracked_tree_stays_under_its_budget():
    size = sizes()
    total = sum(size.values())
    assert total > 1_000_000, "git ls-files named almost nothing: this is not the project's checkout"
    if total > TREE_BUDGET:
        biggest = sorted(((s, p) for p, s in size.items() if p.startswith(RAW_DIRS) and not p.endswith(".gz")),
                         reverse=True)[:5]
        pytest.fail(f"the tracked tree is {total / 1e6:.1f} MB, over its budget of {TREE_BUDGET / 1e6:.0f} MB: "
                    f"gzip older raw outputs ({HINT}); the largest plain ones: "
                    + ", ".join(f"{p} ({s // 1000} KB)" for s, p in biggest))


def test_raw_outputs_over_the_limit_are_committed_gzipped():
    big = sorted(f"{p} ({s // 1000} KB)" for p, s in sizes().items()
                 if p.startswith(RAW_DIRS) and not p.endswith(".gz") and s > RAW_LIMIT)
    assert not big, f"over {RAW_LIMIT // 1000} KB uncompressed: {', '.join(big)}: {HINT}"


def test_every_gzipped_result_unpacks():
    packed = [p for p in sizes() if p.startswith(RAW_DIRS) and p.endswith(".gz")]
    assert packed, "no gzipped results: the bulky raw outputs are committed gzipped"
    for p in packed:
        data = gzip.decompress((ROOT / p).read_bytes())
        assert data, f"{p} unpacks to nothing"
        if p.endswith((".txt.gz", ".json.gz", ".tsv.gz", ".log.gz")):
            data.decode("utf-8")  # text it was, text it stays
