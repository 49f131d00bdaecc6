#!/usr/bin/env python3
"""Compute the training/validation split of the explain corpus from the log headers.

The split is by repository and fixed by a rule nobody tunes (issue 8, item 7):

    a repository is in the VALIDATION part iff
        hashlib.sha256(repo.lower().encode()).hexdigest()[0] in "0123"
    and none of the seed files (the 50 logs the knowledge base was first written
    from) comes from it.

Every other repository is TRAINING. A renamed repository (``ALIASES.toml``: canonical name and
its former names, each with its evidence) is one project: its alias group is VALIDATION only when
every name in the group is validation by the rule above; a group with any training name is
TRAINING whole (tools36: moving unseen validation logs to training is blind-safe, the reverse
would put logs rules were written from into validation). ``--side`` answers for the group.

Patterns may be written from training logs only;
validation logs measure how explain does on failures nobody tuned it for.

``tests/corpus/explain/SPLIT.toml`` records the rule, the seed files, the validation
repositories and the counts. This script recomputes all of it from the ``# repository:``
headers of the ``*.log`` files:

    python scripts/corpus_split.py            # print the split and its counts
    python scripts/corpus_split.py --check    # exit 1 if SPLIT.toml disagrees
    python scripts/corpus_split.py --write    # rewrite SPLIT.toml (keeps seed files
                                              # and proposed codes)
    python scripts/corpus_split.py --training-files   # the logs pattern writers may read
    python scripts/corpus_split.py --side owner/name  # a new thread's part, before reading it

Standard library only (tomllib on 3.11+, else the optional ``tomli``); the test suite
imports ``read_header``, ``compute_split`` and ``load_split`` from here.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "explain"
SPLIT_FILE = CORPUS / "SPLIT.toml"
ALIASES_FILE = "ALIASES.toml"
HASH_PREFIXES = "0123"
RULE = ('validation iff hashlib.sha256(repo.lower().encode()).hexdigest()[0] in "0123" '
        "and no seed file comes from the repository, for every name of its alias group (ALIASES.toml); "
        "every other repository is training")

# Headers every log carries; validation logs also carry `issue` and `category`.
REQUIRED = ("source", "repository", "established", "expected")
REQUIRED_VALIDATION = REQUIRED + ("issue", "category")
SOURCE_RE = re.compile(r"^https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?:issues|pull)/(?P<num>\d+)$")
# Threads outside GitHub (forums, Q&A sites, blogs: harv29c): the source is the page's URL and the
# repository a stable "<host>/<thread id>" key (discuss.pytorch.org/t-123456,
# stackoverflow.com/q-7654321), the host written as in the URL without "www.". The split hashes
# that key like an owner/name, so one thread's pages fall on one side.
PAGE_SOURCE_RE = re.compile(r"^https?://(?:www\.)?(?P<host>[a-z0-9][a-z0-9.-]{0,200}\.[a-z]{2,24})(?::\d{1,5})?/\S{0,2000}$")
PAGE_KEY_RE = re.compile(r"^(?P<host>[a-z0-9][a-z0-9.-]{0,200}\.[a-z]{2,24})/(?P<thread>[\w.~-]{1,200})$")


def source_thread(source: str, repository: str) -> Optional[str]:
    """The thread's id when ``source`` and ``repository`` name the same thread, else None.

    A GitHub issue or pull request: its number, and ``repository`` must be its owner/name. Any
    other page (github.com excluded): the id after the host in the ``<host>/<thread id>`` key,
    whose host must be the URL's and whose id must be one of the URL's path segments (a file
    name's extension dropped), whole or after a word prefix (``t-242308`` for ``/t/.../242308``,
    ``q-7654321`` for ``/questions/7654321/...``): two keys for one page would split it apart."""
    m = SOURCE_RE.match(source)
    if m:
        return m["num"] if m["repo"].lower() == repository.lower() else None
    page, key = PAGE_SOURCE_RE.match(source), PAGE_KEY_RE.match(repository)
    if not page or not key or page["host"] == "github.com" or page["host"] != key["host"]:
        return None
    thread = key["thread"]
    path = source.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0].split("#", 1)[0]
    segments = {seg.rsplit(".", 1)[0] if seg.endswith((".html", ".htm", ".php")) else seg for seg in path.split("/")}
    bare = re.sub(r"^[A-Za-z]+-", "", thread)
    return thread if thread in segments or bare in segments else None



@dataclass(frozen=True)
class LogHeader:
    path: Path
    meta: Dict[str, str]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def repository(self) -> str:
        return self.meta.get("repository", "")

    @property
    def thread(self) -> str:
        """The thread URL (one thread may give up to three logs)."""
        return self.meta.get("source", "")

    @property
    def expected(self) -> List[str]:
        return [c.strip() for c in re.split(r"[,\s]+", self.meta.get("expected", "")) if c.strip()]

    @property
    def category(self) -> str:
        return self.meta.get("category", "")


def read_header(path: Path) -> LogHeader:
    """Parse the ``# key: value`` lines above the ``# ---`` line."""
    meta: Dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line == "# ---":
                break
            if line.startswith("# ") and ": " in line:
                key, value = line[2:].split(": ", 1)
                meta.setdefault(key.strip(), value.strip())
    return LogHeader(path, meta)



def read_body(path: Path) -> str:
    """The pasted log below the ``# ---`` line, without the corpus header: the header names the
    thread, the established cause and the expected code, which no user's log carries; explain
    must never see them (its context clues would read them)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    head, sep, body = text.partition("# ---\n")
    return body if sep else text

def hash_prefix(repo: str) -> str:
    return hashlib.sha256(repo.lower().encode()).hexdigest()[0]


def load_aliases(corpus: Path = CORPUS) -> Dict[str, List[str]]:
    """Each name (lower case) of a group in ``ALIASES.toml`` -> every name of its group."""
    path = corpus / ALIASES_FILE
    if not path.exists():
        return {}
    groups: Dict[str, List[str]] = {}
    for g in load_split(path).get("group", []):
        names = [g["canonical"], *g.get("aliases", [])]
        for n in names:
            if n.lower() in groups:
                raise ValueError(f"{path.name}: {n} is in two alias groups")
            groups[n.lower()] = names
    return groups


def in_validation(repo: str, seed_repos: Sequence[str],
                  aliases: Optional[Dict[str, List[str]]] = None) -> bool:
    """Validation iff every name of the repository's alias group is validation by the hash
    and none is a seed repository (a lone name is its own group)."""
    seeds = {r.lower() for r in seed_repos}
    names = (aliases or {}).get(repo.lower(), [repo])
    return all(hash_prefix(n) in HASH_PREFIXES and n.lower() not in seeds for n in names)


@dataclass
class Split:
    seed_files: List[str]
    seed_repos: List[str]
    training: List[LogHeader] = field(default_factory=list)
    validation: List[LogHeader] = field(default_factory=list)

    def repos(self, part: str) -> List[str]:
        logs = self.validation if part == "validation" else self.training
        return sorted({h.repository for h in logs}, key=str.lower)

    def counts(self, part: str) -> Dict[str, int]:
        logs = self.validation if part == "validation" else self.training
        return {
            "logs": len(logs),
            "threads": len({h.thread for h in logs}),
            "repositories": len({h.repository.lower() for h in logs}),
            "categories": len({h.category for h in logs if h.category}),
        }

    def part_of(self, name: str) -> Optional[str]:
        for part, logs in (("training", self.training), ("validation", self.validation)):
            if any(h.name == name for h in logs):
                return part
        return None


def load_split(split_file: Path = SPLIT_FILE) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(split_file, "rb") as fh:
        return tomllib.load(fh)


def compute_split(corpus: Path = CORPUS, seed_files: Optional[Sequence[str]] = None) -> Split:
    if seed_files is None:
        seed_files = load_split(corpus / "SPLIT.toml")["seed"]["files"]
    headers = [read_header(p) for p in sorted(corpus.glob("*.log"))]
    by_name = {h.name: h for h in headers}
    seed_repos = sorted({by_name[f].repository for f in seed_files if f in by_name}, key=str.lower)
    split = Split(list(seed_files), seed_repos)
    aliases = load_aliases(corpus)
    for h in headers:
        (split.validation if in_validation(h.repository, seed_repos, aliases) else split.training).append(h)
    return split


def _toml_list(items: Sequence[str], indent: str = "  ") -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f'{indent}"{i}",\n' for i in items) + "]"


def render(split: Split, proposed_codes: Sequence[str]) -> str:
    tr, va = split.counts("training"), split.counts("validation")
    total = tr["logs"] + va["logs"]
    share = va["logs"] / total if total else 0.0
    out = [
        "# The explain corpus split (issue 8, item 7). Generated by scripts/corpus_split.py --write;",
        "# tests/test_corpus_split.py checks that it agrees with the rule and the log headers.",
        "# Patterns may be written from training logs only. Validation logs are never read",
        "# when writing patterns: they measure how explain does on failures nobody tuned for.",
        "",
        "[rule]",
        f"text = '{RULE}'",
        'hash = "sha256(repository.lower())"',
        f'validation_prefixes = "{HASH_PREFIXES}"',
        "",
        "[seed]",
        "# The 50 logs the knowledge base was first written from: their repositories are",
        "# training whatever their hash.",
        f"files = {_toml_list(split.seed_files)}",
        f"repositories = {_toml_list(split.seed_repos)}",
        "",
        "[validation]",
        f"repositories = {_toml_list(split.repos('validation'))}",
        "",
        "[counts]",
        f"training_logs = {tr['logs']}",
        f"training_threads = {tr['threads']}",
        f"training_repositories = {tr['repositories']}",
        f"training_categories = {tr['categories']}",
        f"validation_logs = {va['logs']}",
        f"validation_threads = {va['threads']}",
        f"validation_repositories = {va['repositories']}",
        f"validation_categories = {va['categories']}",
        f'validation_share = "{share:.2f}"',
        "",
        "[codes]",
        "# Codes named in `# expected:` that no knowledge-base entry defines yet: the real",
        "# cause of a validation log has no code. The team adds them; delete them here then.",
        f"proposed = {_toml_list(sorted(proposed_codes))}",
        "",
    ]
    return "\n".join(out)


def check(split: Split, recorded: dict) -> List[str]:
    """Differences between SPLIT.toml and the split the rule gives."""
    problems = []
    want = split.repos("validation")
    have = sorted(recorded.get("validation", {}).get("repositories", []), key=str.lower)
    if [r.lower() for r in want] != [r.lower() for r in have]:
        extra = sorted(set(have) - set(want))
        missing = sorted(set(want) - set(have))
        problems.append(f"validation repositories differ: listed but not by the rule {extra}, "
                        f"by the rule but not listed {missing}")
    if recorded.get("rule", {}).get("validation_prefixes") != HASH_PREFIXES:
        problems.append("rule.validation_prefixes is not the rule's")
    if recorded.get("seed", {}).get("repositories") != split.seed_repos:
        problems.append("seed.repositories does not match the seed files' headers")
    counts = recorded.get("counts", {})
    for part in ("training", "validation"):
        for key, value in split.counts(part).items():
            if counts.get(f"{part}_{key}") != value:
                problems.append(f"counts.{part}_{key} = {counts.get(f'{part}_{key}')}, the corpus has {value}")
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if SPLIT.toml disagrees with the rule")
    mode.add_argument("--write", action="store_true", help="rewrite SPLIT.toml from the headers")
    mode.add_argument("--training-files", action="store_true",
                      help="print the paths of the training logs only, one per line (what pattern writers may "
                           "read and grep: `grep -l WORD $(scripts/corpus_split.py --training-files)`)")
    mode.add_argument("--side", metavar="OWNER/NAME",
                      help="print which part a repository belongs to (training or validation), by the rule, "
                           "before reading any of its threads")
    args = ap.parse_args(argv)
    split_file = args.corpus / "SPLIT.toml"
    recorded = load_split(split_file)
    if args.side:
        seeds = compute_split(args.corpus, recorded["seed"]["files"]).seed_repos
        print("validation" if in_validation(args.side, seeds, load_aliases(args.corpus)) else "training")
        return 0
    split = compute_split(args.corpus, recorded["seed"]["files"])
    if args.training_files:
        for h in sorted(split.training, key=lambda h: h.name):
            print(h.path)
        return 0
    if args.write:
        split_file.write_text(render(split, recorded.get("codes", {}).get("proposed", [])), encoding="utf-8")
        print(f"wrote {split_file}")
    elif args.check:
        problems = check(split, recorded)
        for p in problems:
            print(f"SPLIT.toml: {p}", file=sys.stderr)
        if problems:
            return 1
    for part in ("training", "validation"):
        c = split.counts(part)
        print(f"{part:10s} {c['logs']:4d} logs  {c['threads']:4d} threads  "
              f"{c['repositories']:4d} repositories  {c['categories']:3d} categories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
