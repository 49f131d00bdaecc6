"""How often `stackpeel explain` names the established root cause (not a test).

Runs ``stackpeel explain --no-live --format json`` on every log of the corpus
(tests/corpus/explain/*.log), exactly as a user would on a pasted log (the text below the
header's ``# ---`` line, on standard input: the header is the answer key), and compares the
answer with the ``# expected:`` header (the cause the issue thread established). The
training and validation parts (tests/corpus/explain/SPLIT.toml, by repository) are
reported separately: training logs are the ones patterns were written from, validation
logs are the honest predictor of accuracy on failures nobody tuned for.

Ranking: the codes of explain's candidates in order, each followed by the codes it says
it "could be caused by" (a symptom's ranked causes), without repeats. A log counts as

* top-1 when an expected code is first in that ranking;
* top-3 when an expected code is among its first three;
* unknown when explain names no code. Every corpus log records a failure from its thread,
  so every unknown is a miss;
* silent when, besides, explain exits 0: it answered "No known problem found", as if the
  log held no error at all (the worst answer: the user is told to look elsewhere). Issue 8
  allows that answer only for a log that holds no error at all, so a second line per part
  counts the silent logs whose text holds a word of failure (:data:`FAILURE_WORD_RE`: error,
  exception, failed, fatal, killed, cannot, not found, hangs, ...), a broad, fixed list written
  for this count and never used by explain: no log is read to make it.

A top-1 whose first candidate is a guess from the words of the error lines (``"basis":
"vocabulary"``, low confidence: no signature matched) is counted as top-1 and also shown
apart ("top-1 by a guess from words"), so signature matches and guesses can be told apart;
likewise a first candidate guessed from the threads the error lines resemble (``"basis":
"similar"``, ``knowledge/exemplars.json``), shown as "by resemblance"; and a cause put before
a symptom the log shows alone from the base rate of earlier threads (``"basis": "prior"``,
``knowledge/priors.json``), shown as "by prior". Each log is explained without its own thread
among the exemplars and the priors (``STACKPEEL_EXEMPLARS_LEAVE_OUT``), so a training log never
counts as recognising itself.

Prints the figures and the misses per category, and writes the raw per-log answers with
the machine and commit to bench/results/explain_accuracy-<date>.txt (``--out`` to
change). Usage::

    python bench/explain_accuracy.py --part training [--stackpeel CMD] [--out FILE] [--jobs N]
                                     [--collected TAG] [--in-process]

``--in-process`` runs the same command through ``stackpeel.cli.main`` in this process, one log
at a time: the 754 training logs in seconds instead of minutes (an hour on a loaded 2-core
machine), with answers identical log for log to the subprocess run.

``--part`` is required: ``training`` runs, prints and writes the training logs only (what anyone
writing patterns may look at; of a validation log it reads only the header lines, whose
``# repository:`` decides the split), ``validation`` only the validation logs (for the person who
measures, once), ``all`` both. ``--collected TAG`` keeps only the logs whose header says
``# collected: TAG`` (a blind set gathered at one time, measured once when it lands).
Expected codes are compared through the knowledge base's aliases (``aliases = [...]``): a
code proposed for a cause that already had an entry scores as that entry's code.

``--compare OLD`` adds, per part, how the logs both runs answered moved since an earlier raw
results file: how many, top-1 before and after, how many gained and lost their first place, and
how many are new. It prints counts only, never a log's name: the person measuring validation
logs learns whether a change moved them without reading which. OLD may be gzipped (``.txt.gz``:
older raw results are committed so, docs/dev/KNOWLEDGE.md "Committed results").
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import gzip
import importlib.util
import json
import os
import platform
import re
import shlex
import subprocess
import tempfile
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("corpus_split", ROOT / "scripts" / "corpus_split.py")
corpus_split = importlib.util.module_from_spec(_spec)
sys.modules["corpus_split"] = corpus_split
_spec.loader.exec_module(corpus_split)


def find_candidates(report) -> Optional[list]:
    """The ranked candidate list wherever the JSON envelope puts it."""
    if isinstance(report, dict):
        cands = report.get("candidates")
        if isinstance(cands, list):
            return cands
        for value in report.values():
            found = find_candidates(value)
            if found is not None:
                return found
    return None


def ranking(report) -> List[str]:
    ranked: List[str] = []
    for cand in find_candidates(report) or []:
        if not isinstance(cand, dict):
            continue
        for code in [cand.get("code")] + list(cand.get("could_be") or []):
            if isinstance(code, str) and code not in ranked:
                ranked.append(code)
    return ranked


def explain(cmd: List[str], path: Path, source: str = "") -> Dict:
    # the log's own thread is left out of the exemplars (leave-one-out): a training log that
    # resembles itself says nothing about logs nobody collected
    env = dict(os.environ, STACKPEEL_EXEMPLARS_LEAVE_OUT=source)
    proc = subprocess.run(cmd + ["explain", "--no-live", "--format", "json", "-"],
                          input=corpus_split.read_body(path), capture_output=True, text=True, timeout=300, env=env)
    return _answer(proc)


def _answer(proc: subprocess.CompletedProcess) -> Dict:
    result = {"exit": proc.returncode, "ranked": [], "error": "", "basis": ""}
    try:
        report = json.loads(proc.stdout)
        result["ranked"] = ranking(report)
        first = next((c for c in find_candidates(report) or [] if isinstance(c, dict)), {})
        result["basis"] = first.get("basis") or ""
    except ValueError:
        result["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        result["error"] = result["error"][0][:200]
    return result


def explain_in_process(path: Path, source: str = "") -> Dict:
    """The same command and JSON, run by stackpeel.cli.main in this process (``--in-process``):
    no interpreter start per log, which on a loaded 2-core machine is most of the bench's time.
    One log at a time (standard streams are process-wide)."""
    import contextlib
    import io

    sys.path.insert(0, str(ROOT / "src"))
    from stackpeel.cli import main as stackpeel_main
    from stackpeel.explain import similar

    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:  # the body alone, as standard input gets it
        body = Path(tmp) / "log"
        body.write_text(corpus_split.read_body(path), encoding="utf-8")
        with similar.leaving_out(source), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = stackpeel_main(["explain", "--no-live", "--format", "json", str(body)])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    proc = subprocess.CompletedProcess([], int(code or 0), out.getvalue(), err.getvalue())
    return _answer(proc)


#: a word of failure in any language's English log (the silent logs that hold one are counted)
FAILURE_WORD_RE = re.compile(
    r"\b(?:errors?|exceptions?|traceback|fail(?:s|ed|ure|ing)?|fatal|abort(?:s|ed)?|segmentation fault"
    r"|core dumped|killed|cannot|can't|unable|denied|not found|no such|undefined|invalid|panic(?:ked)?"
    r"|crash(?:es|ed)?|hangs?|hanging|stuck|timed out|timeout)\b", re.IGNORECASE)


def score(rows: List[Dict]) -> Dict:
    n = len(rows)
    top1 = sum(r["top1"] for r in rows)
    top3 = sum(r["top3"] for r in rows)
    unknown = sum(r["unknown"] for r in rows)
    silent = sum(r["silent"] for r in rows)
    silent_worded = sum(r["silent"] and r.get("worded", False) for r in rows)
    guessed = sum(r["top1"] and r["basis"] == "vocabulary" for r in rows)
    resembled = sum(r["top1"] and r["basis"] == "similar" for r in rows)
    by_prior = sum(r["top1"] and r["basis"] == "prior" for r in rows)
    pct = (lambda k: 100.0 * k / n) if n else (lambda k: 0.0)
    return {"logs": n, "top1": top1, "top3": top3, "unknown": unknown, "silent": silent,
            "silent_worded": silent_worded, "guessed": guessed,
            "resembled": resembled, "by_prior": by_prior,
            "top1_pct": pct(top1), "top3_pct": pct(top3), "unknown_pct": pct(unknown)}


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except OSError:
        return "?"


def shown(arg: str) -> str:
    """A command word fit for a committed file: no absolute paths of this machine."""
    path = Path(arg)
    if not path.is_absolute():
        return arg
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = [l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")]
        if names:
            cpu = f"{names[0]} x{len(names)}"
    except OSError:
        pass
    return f"{platform.node()} {platform.system()} {platform.release()}; {cpu}; Python {platform.python_version()}"


def aliases() -> Dict[str, str]:
    """alias -> code, from the knowledge base of this checkout."""
    sys.path.insert(0, str(ROOT / "src"))
    try:
        from stackpeel.knowledge import load
    finally:
        sys.path.pop(0)
    return dict(getattr(load(), "aliases", {}))  # older checkouts have none


def verdict_of(row: Dict) -> str:
    """The verdict column of a raw results line."""
    return ("top-1" if row["top1"] else "top-3" if row["top3"] else "silent" if row["silent"]
            else "unknown" if row["unknown"] else "miss")


def read_results(path: Path) -> str:
    """The text of a raw results file, plain or gzipped (``NAME.txt.gz``)."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def read_verdicts(path: Path) -> Dict[str, Dict[str, str]]:
    """part -> {file: verdict} of a raw results file this script wrote (plain or gzipped)."""
    out: Dict[str, Dict[str, str]] = defaultdict(dict)
    for line in read_results(path).splitlines():
        cols = line.split("\t")
        if len(cols) >= 6 and cols[0] in ("training", "validation") and cols[2].startswith("expected="):
            out[cols[0]][cols[1]] = cols[5]
    return out


def compare(old: Dict[str, Dict[str, str]], new: Dict[str, Dict[str, str]], part: str, label: str = "") -> str:
    """One line of counts: the logs of ``part`` both runs answered, top-1 before and after, gained,
    lost, and the logs only the new run has (no log is named)."""
    before, after = old.get(part, {}), new.get(part, {})
    both = sorted(set(before) & set(after))
    t0 = sum(before[f] == "top-1" for f in both)
    t1 = sum(after[f] == "top-1" for f in both)
    gained = sum(before[f] != "top-1" and after[f] == "top-1" for f in both)
    lost = sum(before[f] == "top-1" and after[f] != "top-1" for f in both)
    fresh = len(set(after) - set(before))
    return (f"{part:10s} since {label or 'the earlier run'}: {len(both)} logs in both, top-1 {t0} -> {t1} "
            f"(gained {gained}, lost {lost}); {fresh} new")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", required=True, choices=("training", "validation", "all"),
                    help="which part of the corpus to run and report (patterns are written "
                         "from the training part only)")
    ap.add_argument("--stackpeel", default=f"{shlex.quote(sys.executable)} -m stackpeel",
                    help="command that runs stackpeel (default: this Python's)")
    ap.add_argument("--out", type=Path, default=None, help="raw results file (NAME.gz: gzipped)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--in-process", action="store_true",
                    help="run explain in this process (same arguments, JSON and scoring; one log at a "
                         "time, no interpreter start per log; --stackpeel is ignored)")
    ap.add_argument("--collected", metavar="TAG", default=None,
                    help="only the logs whose '# collected:' header is TAG")
    ap.add_argument("--compare", metavar="OLD", type=Path, default=None,
                    help="an earlier raw results file: print how many of the logs both runs answered "
                         "gained or lost their first place (counts only, no log named)")
    args = ap.parse_args(argv)
    if args.compare and not args.compare.is_file():
        ap.error(f"--compare: no results file at {args.compare}")
    cmd = shlex.split(args.stackpeel)

    split = corpus_split.compute_split()
    parts = ("training", "validation") if args.part == "all" else (args.part,)
    logs = [("training", h) for h in split.training] * ("training" in parts) \
        + [("validation", h) for h in split.validation] * ("validation" in parts)
    if args.collected:
        logs = [(part, h) for part, h in logs if h.meta.get("collected") == args.collected]
        if not logs:
            print(f"no {args.part} log says '# collected: {args.collected}'", file=sys.stderr)
            return 2
    alias = aliases()
    if args.in_process:
        answers = [explain_in_process(h.path, h.meta.get("source", "")) for _, h in logs]
        cmd = [sys.executable, "-m", "stackpeel"]
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            answers = list(pool.map(lambda item: explain(cmd, item[1].path, item[1].meta.get("source", "")), logs))

    rows = []
    for (part, h), ans in zip(logs, answers):
        expected = [alias.get(c, c) for c in h.expected]
        ranked = ans["ranked"]
        rows.append({
            "part": part, "file": h.name, "category": h.category or (expected[0] if expected else "?"),
            "expected": expected, "ranked": ranked, "exit": ans["exit"], "error": ans["error"],
            "top1": bool(ranked) and ranked[0] in expected,
            "top3": any(c in expected for c in ranked[:3]),
            "unknown": not ranked,
            "silent": not ranked and ans["exit"] == 0,
            "worded": not ranked and ans["exit"] == 0
            and FAILURE_WORD_RE.search(corpus_split.read_body(h.path)) is not None,
            "basis": ans["basis"],
        })

    commit = git("rev-parse", "--short", "HEAD")
    src_commit = git("log", "-1", "--format=%h", "--", "src")
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--", "src") else ""
    lines = [f"stackpeel explain accuracy, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"commit {commit}, src/ as of {src_commit}{dirty}; {machine()}",
             f"command: {' '.join(shown(a) for a in cmd)} explain --no-live --format json - < <log body>"
             + (" (in process, --in-process)" if args.in_process else ""),
             f"part: {args.part}" + (f", collected: {args.collected}" if args.collected else ""), ""]
    for part in parts:
        part_rows = [r for r in rows if r["part"] == part]
        s = score(part_rows)
        lines.append(f"{part:10s} {s['logs']:4d} logs  top-1 {s['top1']:4d} ({s['top1_pct']:5.1f} %)  "
                     f"top-3 {s['top3']:4d} ({s['top3_pct']:5.1f} %)  "
                     f"unknown {s['unknown']:4d} ({s['unknown_pct']:5.1f} %)  silent {s['silent']:3d}  "
                     f"top-1 by a guess from words {s['guessed']:3d}, by resemblance {s['resembled']:3d}, "
                     f"by prior {s['by_prior']:3d}")
        lines.append(f"{part:10s}  silent logs holding a word of failure: {s['silent_worded']} of {s['silent']}")
    if args.compare:
        old = read_verdicts(args.compare)
        new = {part: {r["file"]: verdict_of(r) for r in rows if r["part"] == part} for part in parts}
        for part in parts:
            lines.append(compare(old, new, part, args.compare.name))
    lines.append("")
    #: What stdout shows: the summary, and the per-category misses of the training part only.
    #: The validation part's categories go to the results file alone, so whoever runs the bench
    #: to read its summary line does not also read what the validation logs are about.
    shown_lines = list(lines)
    for part in parts:
        misses = defaultdict(list)
        for r in rows:
            if r["part"] == part and not r["top1"]:
                misses[r["category"]].append(r)
        totals = defaultdict(int)
        for r in rows:
            if r["part"] == part:
                totals[r["category"]] += 1
        block = [f"{part} misses by category (top-1 misses / logs):"]
        if not misses:
            block.append("  none")
        for cat in sorted(misses, key=lambda c: (-len(misses[c]), c)):
            block.append(f"  {cat:45s} {len(misses[cat]):3d} / {totals[cat]}")
        block.append("")
        lines.extend(block)
        shown_lines.extend(block if part == "training" else
                           [f"{part} misses by category: in the results file only (not printed)", ""])
    summary = "\n".join(lines)
    print("\n".join(shown_lines))

    raw = [summary, "per-log answers (part, file, expected, explain's ranking, verdict):"]
    for r in rows:
        verdict = verdict_of(r)
        raw.append(f"{r['part']}\t{r['file']}\texpected={','.join(r['expected'])}\t"
                   f"ranked={','.join(r['ranked'][:5]) or '-'}\texit={r['exit']}\t{verdict}"
                   + ("\tguess" if r["basis"] == "vocabulary" else "\tprior" if r["basis"] == "prior" else "")
                   + (f"\terror={r['error']}" if r["error"] else ""))
    suffix = ("" if args.part == "all" else f"-{args.part}") + (f"-{args.collected}" if args.collected else "")
    out = args.out or ROOT / "bench" / "results" / f"explain_accuracy-{dt.date.today():%Y-%m-%d}{suffix}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = ("\n".join(raw) + "\n").encode("utf-8")
    # --out NAME.txt.gz: gzipped as `gzip -9n` would (no name, no time: same text, same bytes)
    out.write_bytes(gzip.compress(text, compresslevel=9, mtime=0) if out.name.endswith(".gz") else text)
    print(f"raw results: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
