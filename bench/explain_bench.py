"""Benchmark of `stackpeel explain` on a large, realistic log (not a test).

Generates a ~10 MB training log: timestamped INFO lines, tqdm progress bars rewritten
with bare CRs, ANSI-coloured warnings, rank-prefixed lines of a 2-process run, a few
unrelated tracebacks, and the seed cascade (FLA's "roll back to CPU" warning, the
swallowed "Failed to find C compiler", the final `torch.cpu` AttributeError) buried in
the middle. Then it times, in this same run:

* ``explain``: the whole pipeline, stream read + scan + reasoning (``explain_stream``);
* anchor 1, ``grep -P``: GNU grep (PCRE2) with every knowledge-base pattern over the same
  file, in runs of 100 patterns (PCRE2 refuses one alternation of them all as too large),
  counting the lines any of them matches: what a plain pattern search costs;
* anchor 2 (``--re-anchor``, minutes), ``re over the text``: Python's ``re`` with the
  knowledge base's patterns as one alternation, over the whole text read at once.

and prints seconds, MB/s and the ratio to each anchor. Usage::

    python bench/explain_bench.py [--mb 10] [--repeat 3] [--keep FILE] [--no-anchors] [--re-anchor]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

from stackpeel.explain import explain_stream
from stackpeel.explain.knowledge import load

SEED = """\
/venv/lib/python3.12/site-packages/fla/utils.py:62: UserWarning: Triton is not supported on current platform, roll back to CPU.
  warnings.warn(
Traceback (most recent call last):
  File "/venv/lib/python3.12/site-packages/triton/runtime/driver.py", line 20, in _initialize_obj
    self._obj = self._init_fn()
  File "/venv/lib/python3.12/site-packages/triton/runtime/build.py", line 32, in _build
    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.")
RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/train.py", line 88, in <module>
    loss = model(batch).loss
  File "/venv/lib/python3.12/site-packages/fla/utils.py", line 200, in wrapper
    with custom_device_ctx(tensor.device.index):
AttributeError: module 'torch.cpu' has no attribute 'device'
"""

HANDLED = """\
Traceback (most recent call last):
  File "/app/data.py", line 41, in __getitem__
    return self.cache[key]
KeyError: 'shard-00017'
"""


def make_log(path: str, mb: float, seed: int = 0) -> int:
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    words = ("loss", "lr", "grad_norm", "tokens_per_s", "mem_alloc", "mem_reserved", "step_time", "epoch")
    written = 0
    placed = False
    with open(path, "w", encoding="utf-8", newline="") as f:
        step = 0
        while written < target:
            step += 1
            r = rng.random()
            ts = f"2026-11-29 12:{(step // 60) % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d}"
            if r < 0.80:
                line = f"{ts} INFO trainer.py:{rng.randrange(100, 900)}] step={step} " + " ".join(
                    f"{w}={rng.random():.5f}" for w in rng.sample(words, 5)) + "\n"
            elif r < 0.90:
                line = (f"[rank{step % 2}]: {ts} INFO dist.py:77] all_reduce bucket={rng.randrange(64)} "
                        f"bytes={rng.randrange(1 << 24)}\n")
            elif r < 0.97:
                bar = "".join(f"\r{p:3d}%|{'#' * (p // 10):<10}| {p}/100 [00:{p // 10:02d}<00:10, 9.{p % 10}it/s]"
                              for p in range(0, 101, 20))
                line = f"Evaluating: {bar}\n"
            elif r < 0.995:
                line = f"\x1b[33m{ts} WARNING\x1b[0m checkpoint.py:12] slow storage, save took {rng.random() * 9:.2f}s\n"
            else:
                line = HANDLED
            if not placed and written >= target // 2:
                line += SEED
                placed = True
            f.write(line)
            written += len(line.encode("utf-8"))
    return written


def pcre(pattern: str) -> str:
    """A knowledge-base regex as one PCRE2 pattern for grep -P: a literal newline (from a TOML
    basic string) as ``\\n``, Python's ``\\uXXXX`` / ``\\UXXXXXXXX`` as ``\\x{...}``."""
    pattern = pattern.replace("\n", r"\n")
    pattern = re.sub(r"(?<!\\)\\u([0-9a-fA-F]{4})", r"\\x{\1}", pattern)
    return re.sub(r"(?<!\\)\\U([0-9a-fA-F]{8})", lambda m: "\\x{%x}" % int(m.group(1), 16), pattern)


#: patterns per grep -P run (PCRE2 refuses one alternation of all of them: "regular expression
#: is too large")
GREP_CHUNK = 100


#: best CPU time (this process) of each in-process measurement, by its function's name: on a
#: shared machine the wall time also measures the neighbours
CPU = {}


def timed(fn, repeat: int):
    best = float("inf")
    out = None
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        CPU[fn.__name__] = min(CPU.get(fn.__name__, float("inf")), time.process_time() - c0)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=10.0, help="log size in MB (default 10)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    ap.add_argument("--keep", metavar="FILE", help="write the generated log here and keep it")
    ap.add_argument("--no-anchors", action="store_true",
                    help="time explain only: for comparing two checkouts back to back, with "
                         "PYTHONPATH=<checkout>/src")
    ap.add_argument("--re-anchor", action="store_true",
                    help="also time Python re with all patterns as one regex (minutes with today's knowledge base)")
    args = ap.parse_args()

    tmp = None
    path = args.keep
    if not path:
        tmp = tempfile.mkdtemp(prefix="stackpeel-bench-")
        path = os.path.join(tmp, "train.log")
    size = make_log(path, args.mb)
    mb = size / 1e6
    kb = load()
    patterns = [p.pattern for e in kb.entries for p in e.patterns]

    def run_explain():
        with open(path, "rb") as f:
            return explain_stream(f, source=path)

    t_explain, expl = timed(run_explain, args.repeat)
    root = expl.root.code if expl.root else None
    ev = expl.root.evidence[0].line if expl.root else None

    rows = [("explain (stream + scan + reasoning)", t_explain)]

    grep = shutil.which("grep") if not args.no_anchors else None
    if grep:
        chunks = ["|".join(f"(?:{pcre(p)})" for p in patterns[i:i + GREP_CHUNK])
                  for i in range(0, len(patterns), GREP_CHUNK)]

        def run_grep():
            lines, errors = set(), []
            for chunk in chunks:
                res = subprocess.run([grep, "-P", "-n", "-e", chunk, path], capture_output=True, text=True,
                                     env={**os.environ, "LC_ALL": "C.UTF-8"})
                if res.returncode not in (0, 1):
                    errors.append(res.stderr.strip())
                lines.update(ln.split(":", 1)[0] for ln in res.stdout.splitlines())
            return lines, errors

        t_grep, (lines, errors) = timed(run_grep, args.repeat)
        if not errors:
            rows.append((f"anchor: grep -P, {len(patterns)} KB patterns in {len(chunks)} runs ({len(lines)} lines)",
                         t_grep))
        else:
            rows.append((f"anchor: grep -P failed: {errors[0][:80]}", float("nan")))

    if args.re_anchor:
        whole = re.compile("|".join(f"(?:{p})" for p in patterns), re.MULTILINE)

        def run_re():
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            return sum(1 for _ in whole.finditer(text))

        t_re, n_re = timed(run_re, args.repeat)
        rows.append((f"anchor: Python re, KB patterns as one regex over the whole text ({n_re} matches)", t_re))

    print(f"log: {mb:.1f} MB, {expl.lines:,} lines; machine: {os.cpu_count()} CPU(s), Python "
          f"{sys.version.split()[0]}; best of {args.repeat}")
    print(f"explain found: {root} (evidence line {ev}); candidates: {', '.join(expl.codes)}")
    print(f"explain CPU time (this process, best of {args.repeat}): {CPU['run_explain']:.3f} s")
    print()
    print(f"{'what':<84} {'seconds':>8} {'MB/s':>8} {'explain/this':>13}")
    for name, t in rows:
        ratio = t_explain / t if t == t and t > 0 else float("nan")
        print(f"{name:<84} {t:8.3f} {mb / t if t else float('inf'):8.1f} {ratio:13.2f}")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if root == "no-c-compiler" else 1


if __name__ == "__main__":
    sys.exit(main())
