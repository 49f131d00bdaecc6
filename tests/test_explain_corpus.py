"""The knowledge base against the catalogue and the checks, and the corpus of real logs.

Every file under tests/corpus/explain/ is a log pasted in a public issue thread, with a
header naming the thread and the root cause it established::

    # source: https://github.com/<owner>/<repo>/issues/<n>
    # established: <what the thread found>
    # expected: <the code `stackpeel explain` must rank first from the log alone>
    # cause: <the thread's root cause, when the log alone shows only its symptom>
    # ---
    <the log, verbatim (trimmed to the relevant part)>
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Dict, Tuple

import pytest

from stackpeel import registry
from stackpeel.codes import all_codes
from stackpeel.explain import explain_text, match_codes
from stackpeel.explain.knowledge import LAYER_ORDER, load

CORPUS = Path(__file__).parent / "corpus" / "explain"


def _validation_repos():
    """Repositories of the validation part (SPLIT.toml; scripts/corpus_split.py): their
    logs measure explain (bench/explain_accuracy.py) and are never tuned to or asserted on."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    with open(CORPUS / "SPLIT.toml", "rb") as fh:
        return {r.lower() for r in tomllib.load(fh)["validation"]["repositories"]}


def _repository(path: Path) -> str:
    m = re.search(r"^# repository: (\S+)", path.read_text(encoding="utf-8"), re.M)
    return m.group(1).lower() if m else ""


LOGS = sorted(p for p in CORPUS.glob("*.log") if _repository(p) not in _validation_repos())


def read_corpus(path: Path) -> Tuple[Dict[str, str], str]:
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.partition("# ---\n")
    assert sep, f"{path.name}: no '# ---' line ends the header"
    meta = {}
    for line in head.splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            meta[key.strip()] = value.strip()
    return meta, body


# -- knowledge base --------------------------------------------------------------

def test_every_code_the_kb_references_is_in_the_catalogue():
    catalogue = all_codes()
    missing = [c for c in load().referenced_codes() if c not in catalogue]
    assert not missing, f"log signatures name codes the knowledge base does not define: {missing}"


def test_kb_entries_are_well_formed():
    kb = load()
    assert len(kb.entries) >= 40
    for e in kb.entries:
        assert e.layer in LAYER_ORDER
        assert e.explanation and e.fix
        if e.kind == "symptom":
            assert e.could_be, f"symptom entry {e.id} must say what could cause it"
        for link in e.links:
            assert link.startswith("https://"), (e.id, link)
        for pat in e.patterns:
            assert not pat.pattern.startswith("^"), f"{e.id}: patterns are searched unanchored"


def test_each_live_check_really_emits_its_code():
    """The code -> check table must point at the check whose source emits the code,
    or a passing check would 'rule out' a cause it cannot see."""
    emits: Dict[str, set] = {}
    for cls in registry.load():
        for code in re.findall(r'finding\(\s*"([a-z0-9-]+)"', inspect.getsource(cls)):
            emits.setdefault(code, set()).add(cls.id)
    wrong = {code: cid for code, cid in load().checks.items() if cid not in emits.get(code, set())}
    assert not wrong, f"[checks] entries whose check never emits the code: {wrong}"


# -- corpus ----------------------------------------------------------------------

def test_corpus_is_big_enough_and_real():
    assert len(LOGS) >= 40
    sources = set()
    known = set(all_codes()) | set(load().referenced_codes())  # the catalogue test checks the rest
    for path in LOGS:
        meta, body = read_corpus(path)
        assert re.match(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$", meta.get("source", "")), path.name
        assert meta.get("established"), path.name
        assert meta.get("expected") in known, path.name
        assert body.strip(), path.name
        sources.add(meta["source"])
    assert len(sources) == len(LOGS), "two corpus files from the same thread"


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_corpus_top1(path):
    meta, body = read_corpus(path)
    expl = explain_text(body, source=path.name)
    assert expl.root is not None, f"nothing found; expected {meta['expected']}"
    assert expl.root.code == meta["expected"], [c.code for c in expl.candidates]
    assert expl.root.evidence and all(ev.line >= 1 for ev in expl.root.evidence)
    assert expl.exit_code == 1
    cause = meta.get("cause")
    if cause:
        # the thread's root cause is not in the log: it must be offered as a lower layer
        assert cause in expl.root.could_be or cause in expl.codes, expl.root.could_be


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_corpus_match_codes_agrees(path):
    """match_codes on the whole text names the same deepest code (no refinement by
    surrounding traceback needed for these)."""
    meta, body = read_corpus(path)
    assert meta["expected"] in match_codes(body)
