"""No source line in src/ is wider than 120 columns (session 33 wrapped 43, session 34's clean34
the other 53; three more came back with that session's own harvests the same day)."""
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
WIDTH = 120


def test_no_source_line_is_wider_than_120_columns():
    wide = [f"{p.relative_to(SRC)}:{n}: {len(line)} columns"
            for p in sorted(SRC.rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if len(line) > WIDTH]
    assert not wide, "\n".join(wide)
