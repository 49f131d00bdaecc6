"""Every claim the docs make is backed by committed evidence, and the evidence is current.

1. Stale evidence: each committed report under docs/validation/ is re-diagnosed from its
   recorded facts with today's code (stackpeel.replay); the verdict must be the one the real
   run printed. A validation directory whose README says "Superseded by" is the record of its
   day and is skipped (its README says why); every other one must replay exactly.
2. Quoted output and figures: in README.md and docs/*.md, a block preceded by
   ``<!-- source: PATH -->`` must come from PATH: each line of a fenced block appears in PATH
   (in order; a line ``...`` marks abridging), each number of a table appears in PATH.
   A measured figure (seconds, ×, %) in running text needs a source marker in its section
   (a figure right after "timeout", "budget", "default", "limit", "<=" ... is a setting).

Bulky raw output is committed gzipped (``NAME.gz``, docs/dev/KNOWLEDGE.md "Committed results"):
both checks read a ``.gz`` file as the text it holds.
"""

import gzip
import json
import re
from pathlib import Path

import pytest

from stackpeel.model import Report
from stackpeel.replay import rediagnose, verdict_of

ROOT = Path(__file__).resolve().parents[1]
VALIDATION = ROOT / "docs" / "validation"
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def read_text(path: Path) -> str:
    """A committed file's text; a gzipped one (``NAME.gz``) as the text it holds."""
    if path.name.endswith(".gz"):
        return gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    return path.read_text(errors="replace")


#: "Superseded: facts/x.json by ../other-run/facts/x.json" in a run's README: that one report was
#: re-run after a deliberate change of verdict (the newer report must exist, and replays itself)
SUPERSEDED_FILE = re.compile(r"^Superseded: (\S+\.json(?:\.gz)?) by (\S+\.json(?:\.gz)?)", re.MULTILINE)


def current_reports():
    for d in sorted(p for p in VALIDATION.iterdir() if p.is_dir()):
        readme = d / "README.md"
        text = readme.read_text() if readme.exists() else ""
        if "Superseded by" in text:
            continue
        replaced = set()
        for old, new in SUPERSEDED_FILE.findall(text):
            assert (d / new).resolve().is_file(), f"{readme}: {new} does not exist"
            replaced.add((d / old).resolve())
        for path in sorted([*d.rglob("*.json"), *d.rglob("*.json.gz")]):
            if path.resolve() in replaced:
                continue
            data = json.loads(read_text(path))
            if isinstance(data, dict) and "results" in data and "diagnosis" in data:
                yield path


REPORTS = list(current_reports())


def test_there_is_current_gpu_evidence():
    assert any("h200" in str(p) for p in REPORTS) and len(REPORTS) >= 10


@pytest.mark.parametrize("path", REPORTS, ids=[str(p.relative_to(VALIDATION)) for p in REPORTS])
def test_committed_report_replays_to_its_verdict(path):
    rep = Report.from_dict(json.loads(read_text(path)))
    assert verdict_of(rediagnose(rep)) == verdict_of(rep), \
        "today's code diagnoses this recorded run differently: re-run the scenario and commit its output"


SOURCE = re.compile(r"<!--\s*source:\s*(\S+)\s*-->")
FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s\b|×|%)|\b\d+(?:\.\d+)?x\b")
#: a figure right after one of these words is a setting or a target, not a measurement
SETTING = re.compile(r"(?:timeout|budget|killed at|deadline|limit|floor|default|bounds|at most|target|"
                     r"issue \d+(?: asks)?:?|<=|>=|≤|≥|within|every)\W{0,3}(?:\w+\W{1,3}){0,2}$", re.I)


def sourced_blocks(text):
    """(source path, block lines, line number) for every marker, and the sections' figures."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = SOURCE.search(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block = []
        if j < len(lines) and lines[j].startswith("```"):
            j += 1
            while j < len(lines) and not lines[j].startswith("```"):
                block.append(lines[j])
                j += 1
            out.append((m.group(1), "fence", block, i + 1))
        else:
            while j < len(lines) and lines[j].startswith("|"):
                block.append(lines[j])
                j += 1
            out.append((m.group(1), "table", block, i + 1))
    return out


CASES = [(doc, src, kind, block, n) for doc in DOCS for src, kind, block, n in sourced_blocks(doc.read_text())]


@pytest.mark.parametrize("doc, src, kind, block, n", CASES,
                         ids=[f"{c[0].name}:{c[4]}" for c in CASES])
def test_quoted_block_comes_from_its_source(doc, src, kind, block, n):
    path = ROOT / src
    assert path.exists(), f"{doc.name}:{n} cites {src}, which is not committed"
    source = read_text(path)
    if kind == "fence":
        pos = 0
        for line in block:
            if line.strip() in ("...", "…"):
                continue
            found = source.find(line.rstrip(), pos)
            assert found >= 0, f"{doc.name}:{n}: {line!r} is not in {src} (after the previous quoted line)"
            pos = found + len(line.rstrip())
    else:
        for row in block[2:]:  # header and separator rows name things, the body holds figures
            for num in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", row):
                assert num in source, f"{doc.name}:{n}: {num} (row {row!r}) is not in {src}"


def unsourced_figures(text):
    """Measured figures in running text whose section (heading to heading) cites no source."""
    sections, current = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#") and current:
            sections.append(current)
            current = []
        current.append((n, line))
    sections.append(current)
    problems = []
    for sec in sections:
        if any(SOURCE.search(line) for _, line in sec):
            continue
        in_code = False
        for n, line in sec:
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            for m in FIGURE.finditer(line):
                if not SETTING.search(line[:m.start()]):
                    problems.append((n, line.strip()[:100]))
                    break
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_measured_figures_name_their_source(doc):
    assert unsourced_figures(doc.read_text()) == []
