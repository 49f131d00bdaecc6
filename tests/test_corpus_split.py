"""The explain corpus and its training/validation split (issue 8, item 7).

tests/corpus/explain/SPLIT.toml must agree with the rule computed from the log headers
(scripts/corpus_split.py), every log must carry the headers that make it checkable, and
the validation part must keep the size and spread it was gathered with.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("corpus_split", ROOT / "scripts" / "corpus_split.py")
corpus_split = importlib.util.module_from_spec(_spec)
sys.modules["corpus_split"] = corpus_split
_spec.loader.exec_module(corpus_split)

RECORDED = corpus_split.load_split()
SPLIT = corpus_split.compute_split()
ALL = SPLIT.training + SPLIT.validation


def test_split_file_agrees_with_the_rule():
    assert corpus_split.check(SPLIT, RECORDED) == []


def test_rule_is_the_fixed_one():
    # The rule is not a tuning knob: sha256 of the lower-cased owner/name, first hex digit.
    assert corpus_split.HASH_PREFIXES == "0123"
    assert corpus_split.hash_prefix("NVIDIA/mig-parted") == "1"          # validation
    assert corpus_split.hash_prefix("pytorch/pytorch") == "0"            # a seed repository
    assert corpus_split.hash_prefix("triton-lang/triton") not in "0123"  # training
    assert not corpus_split.in_validation("pytorch/pytorch", SPLIT.seed_repos)
    assert corpus_split.in_validation("NVIDIA/mig-parted", SPLIT.seed_repos)


def test_seed_files_are_training_and_present():
    names = {h.name for h in SPLIT.training}
    assert len(SPLIT.seed_files) == 50
    assert set(SPLIT.seed_files) <= names


@pytest.mark.parametrize("header", ALL, ids=[h.path.stem for h in ALL])
def test_log_has_required_headers(header):
    part = SPLIT.part_of(header.name)
    required = corpus_split.REQUIRED_VALIDATION if part == "validation" else corpus_split.REQUIRED
    missing = [k for k in required if not header.meta.get(k)]
    assert not missing, f"{header.name} ({part}) lacks headers {missing}"
    thread = corpus_split.source_thread(header.meta["source"], header.repository)
    assert thread, (f"{header.name}: source and repository do not name one thread (a GitHub issue/PR "
                    f"and its owner/name, or a page and its <host>/<thread id>): "
                    f"{header.meta['source']} / {header.repository}")
    if part == "validation":
        assert header.meta["issue"].split()[0] == thread, header.name
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", header.category), header.name
    text = header.path.read_text(encoding="utf-8")
    body = text.split("# ---\n", 1)[1] if "# ---\n" in text else ""
    assert body.strip(), f"{header.name}: no log text after '# ---'"


def test_at_most_three_logs_per_thread_and_one_split_per_thread():
    per_thread = Counter(h.thread for h in ALL)
    assert max(per_thread.values()) <= 3, per_thread.most_common(3)
    train_threads = {h.thread for h in SPLIT.training}
    val_threads = {h.thread for h in SPLIT.validation}
    assert not train_threads & val_threads


def _known_codes():
    out = subprocess.run([sys.executable, "-m", "stackpeel", "codes", "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    found = set()

    def walk(node):
        if isinstance(node, dict):
            code = node.get("code")
            if isinstance(code, str):
                found.add(code)
            # an alias names the same code (knowledge/*.toml `aliases`)
            found.update(a for a in node.get("aliases") or () if isinstance(a, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    assert len(found) >= 40, "could not read the code catalogue"
    return found


def test_validation_expected_codes_exist_or_are_proposed():
    known = _known_codes()
    proposed = set(RECORDED.get("codes", {}).get("proposed", []))
    unknown = sorted({c for h in SPLIT.validation for c in h.expected} - known - proposed)
    assert not unknown, f"expected codes neither in the catalogue nor in SPLIT.toml [codes].proposed: {unknown}"
    unused = sorted(proposed - {c for h in SPLIT.validation for c in h.expected})
    assert not unused, f"proposed codes no validation log expects: {unused}"
    defined = sorted(proposed & known)
    assert not defined, f"now in the catalogue, drop them from SPLIT.toml [codes].proposed: {defined}"


def test_validation_part_size_and_spread():
    c = SPLIT.counts("validation")
    # Floors at corpus-b (73 logs, 72 threads, 41 categories) plus the held-out
    # collection of 2026-12-01 (61 logs, 61 threads) plus the second held-out
    # collection holdout-2026-12-01b (63 logs, 63 threads) plus the third,
    # holdout-2026-12-01c (12 logs, 12 threads), the fourth, holdout-2026-12-01d
    # (40 logs), the fifth, holdout-2026-12-01e (30 logs, 30 threads), the
    # sixth, holdout-2026-12-01f (39 logs, 38 threads), the seventh,
    # holdout-2026-12-01g (10 logs, 10 threads), the eighth,
    # holdout-2026-12-01h (33 logs, 33 threads), and the ninth,
    # holdout-2026-12-01i (20 logs, 20 threads, 16 repositories), and the tenth,
    # holdout-2026-12-01j (28 logs, 28 threads, 24 repositories): 409 logs,
    # 407 threads, 296 categories. The issue 8 targets were 85 logs, 45
    # threads, 35 categories. Raise them, never lower.
    assert c["logs"] >= 409, c
    assert c["threads"] >= 407, c
    assert c["categories"] >= 296, c
    # A validation part worth the name: at least a quarter of the whole corpus.
    assert c["logs"] * 4 >= c["logs"] + SPLIT.counts("training")["logs"], c


def test_training_part_keeps_kbgrow4_logs():
    # kbgrow4's training-2026-12-01j: 37 logs from 37 threads in 24 repositories of image,
    # video, audio and speech users (ComfyUI, Forge, Fooocus, kohya_ss, whisper, TTS, ...),
    # collected before explain was run on them. Raise them, never lower.
    fresh = [h for h in SPLIT.training if h.meta.get("collected") == "training-2026-12-01j"]
    assert len(fresh) >= 37 and len({h.thread for h in fresh}) >= 37, len(fresh)
    assert len({h.repository.lower() for h in fresh}) >= 24


def test_training_part_keeps_its_size():
    # 269 logs before kbgrow2, plus the 44 fresh threads of training-2026-12-01h (44 threads,
    # 40 repositories): 313 logs, 311 threads; plus kbgrow3's training-2026-12-01i (44 logs,
    # 43 threads, 38 repositories): 357 logs, 354 threads; plus the eighth session's five
    # collections (training-2026-12-01j to -01n, 203 logs): 560 logs, 554 threads. Raise them,
    # never lower.
    c = SPLIT.counts("training")
    assert c["logs"] >= 560, c
    assert c["threads"] >= 554, c
    fresh = [h for h in SPLIT.training if h.meta.get("collected") == "training-2026-12-01h"]
    assert len(fresh) >= 44 and len({h.thread for h in fresh}) >= 44, len(fresh)
    assert len({h.repository.lower() for h in fresh}) >= 40
    fresh = [h for h in SPLIT.training if h.meta.get("collected") == "training-2026-12-01i"]
    assert len(fresh) >= 44 and len({h.thread for h in fresh}) >= 43, len(fresh)
    assert len({h.repository.lower() for h in fresh}) >= 38


def test_pattern_writers_can_list_the_training_logs_and_ask_a_repositorys_side(capsys):
    """What pattern writers use to stay off the validation side: the training files only, and
    a new thread's side by the rule before anything of it is read."""
    assert corpus_split.main(["--training-files"]) == 0
    listed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in listed) == sorted(h.name for h in SPLIT.training)
    assert not {h.name for h in SPLIT.validation} & {Path(p).name for p in listed}
    for repo, part in (("NVIDIA/mig-parted", "validation"), ("triton-lang/triton", "training"),
                       ("pytorch/pytorch", "training")):  # the last hashes to 0 but is a seed repository
        assert corpus_split.main(["--side", repo]) == 0
        assert capsys.readouterr().out.strip() == part


@pytest.mark.parametrize("source,repository,thread", [
    ("https://github.com/numba/numba/issues/3963", "numba/numba", "3963"),
    ("https://github.com/NVIDIA/nccl/pull/96", "nvidia/nccl", "96"),
    ("https://forums.developer.nvidia.com/t/containers-losing-access-to-gpus-failed-to-initialize-nvml/242308",
     "forums.developer.nvidia.com/t-242308", "t-242308"),
    ("https://discuss.pytorch.org/t/training-on-multi-gpus-out-of-memory/55592/2", "discuss.pytorch.org/t-55592", "t-55592"),
    ("https://stackoverflow.com/questions/7654321/why", "stackoverflow.com/q-7654321", "q-7654321"),
    ("https://www.wanpihou.xyz/archives/some-post", "wanpihou.xyz/some-post", "some-post"),
])
def test_source_thread_accepts_github_and_forum_threads(source, repository, thread):
    assert corpus_split.source_thread(source, repository) == thread


@pytest.mark.parametrize("source,repository", [
    ("https://github.com/numba/numba/issues/3963", "numba/llvmlite"),  # another repository
    ("https://github.com/numba/numba/issues/3963", "github.com/3963"),  # a GitHub thread keyed as a page
    ("https://github.com/numba/numba/blob/main/README.md", "github.com/readme"),  # github.com, not an issue
    ("https://discuss.pytorch.org/t/x/55592", "stackoverflow.com/q-55592"),  # host differs from the URL's
    ("https://discuss.pytorch.org/t/x/55592", "discuss.pytorch.org"),  # no thread id
    ("https://discuss.pytorch.org/t/x/55592", "discuss.pytorch.org/t 55592"),  # not one token
    ("ftp://discuss.pytorch.org/t/x/55592", "discuss.pytorch.org/t-55592"),  # not a web page
    ("https://discuss.pytorch.org/t/cuda-error/111111", "discuss.pytorch.org/t-999999"),  # another thread's id
    ("https://discuss.pytorch.org/t/cuda-error/111111", "discuss.pytorch.org/anything"),  # no id of the URL's
])
def test_source_thread_refuses_mismatched_pairs(source, repository):
    assert corpus_split.source_thread(source, repository) is None


def test_page_keys_split_by_the_same_hash_rule():
    key = "forums.developer.nvidia.com/t-242308"
    assert corpus_split.in_validation(key, []) == (corpus_split.hash_prefix(key) in "0123")


def test_alias_groups_take_one_side_and_straddlers_go_to_training(tmp_path):
    # tools36: a renamed repository is one project; its group is validation only when every
    # name in it is, so rules written under one name never meet its logs under another.
    aliases = corpus_split.load_aliases()
    assert aliases, "ALIASES.toml is read"
    seen = set()
    for names in aliases.values():
        key = tuple(n.lower() for n in names)
        if key in seen:
            continue
        seen.add(key)
        sides = {corpus_split.in_validation(n, SPLIT.seed_repos, aliases) for n in names}
        assert len(sides) == 1, names
        by_hash = {corpus_split.hash_prefix(n) in "0123" for n in names}
        assert sides == ({True} if by_hash == {True} else {False}), names
    # ggml-org/whisper.cpp hashes validation, its former name ggerganov/whisper.cpp training:
    assert corpus_split.hash_prefix("ggml-org/whisper.cpp") in "0123"
    assert corpus_split.hash_prefix("ggerganov/whisper.cpp") not in "0123"
    assert not corpus_split.in_validation("ggml-org/whisper.cpp", [], aliases)
    # a name in no group keeps its own hash
    assert corpus_split.in_validation("NVIDIA/mig-parted", [], aliases)
    # every log of a group is on one side
    for part, logs in (("training", SPLIT.training), ("validation", SPLIT.validation)):
        for h in logs:
            for other in aliases.get(h.repository.lower(), []):
                assert not any(o.repository.lower() == other.lower()
                               for o in (SPLIT.validation if part == "training" else SPLIT.training))
    # a name in two groups is refused
    bad = tmp_path / "ALIASES.toml"
    bad.write_text('[[group]]\ncanonical = "a/b"\naliases = ["c/d"]\nevidence = "x"\n'
                   '[[group]]\ncanonical = "e/f"\naliases = ["C/D"]\nevidence = "x"\n')
    with pytest.raises(ValueError):
        corpus_split.load_aliases(tmp_path)


def test_alias_groups_carry_evidence():
    groups = corpus_split.load_split(corpus_split.CORPUS / corpus_split.ALIASES_FILE)["group"]
    for g in groups:
        assert g.get("evidence", "").strip(), g
        assert set(g) <= {"canonical", "aliases", "evidence"}, g


def test_side_answers_for_the_alias_group(capsys):
    assert corpus_split.main(["--side", "ggerganov/whisper.cpp"]) == 0
    assert capsys.readouterr().out.strip() == "training"
    assert corpus_split.main(["--side", "ggml-org/whisper.cpp"]) == 0
    assert capsys.readouterr().out.strip() == "training"
