"""The long fuzzing run behind docs/fuzzing.md: the properties of tests/test_fuzz.py with many
more examples, counting inputs and crashes and timing every input (the slowest is reported
with its size). A crash is recorded and the run goes on.

    .ci-venv/bin/python bench/fuzz_long.py [EXAMPLES_PER_PROPERTY] > bench/results/fuzz-long.txt
"""

from __future__ import annotations

import copy
import io
import os
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import test_fuzz as tf  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
LONG = settings(max_examples=N, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


class Stats:
    def __init__(self, name):
        self.name, self.inputs, self.crashes, self.slowest, self.slowest_size, self.total = name, 0, [], 0.0, 0, 0.0

    def run(self, fn, arg, size):
        self.inputs += 1
        t0 = time.perf_counter()
        try:
            fn(arg)
        except Exception:
            self.crashes.append(traceback.format_exc(limit=3)[-600:])
        dt = time.perf_counter() - t0
        self.total += dt
        if dt > self.slowest:
            self.slowest, self.slowest_size = dt, size

    def line(self):
        return (f"{self.name:36s} inputs {self.inputs:6d}  crashes {len(self.crashes):3d}  "
                f"mean {self.total / max(self.inputs, 1) * 1000:7.2f} ms  slowest {self.slowest * 1000:8.1f} ms "
                f"({self.slowest_size} bytes)")


def main():
    stats = []

    s = Stats("explain: token soup")
    stats.append(s)

    @LONG
    @given(st.lists(st.one_of(st.sampled_from(tf.TOKENS), st.text(max_size=80)), max_size=400))
    def soup(parts):
        data = "".join(parts).encode("utf-8", "surrogatepass")
        s.run(tf.explain_bytes, data, len(data))

    r = Stats("explain: random bytes")
    stats.append(r)

    @LONG
    @given(st.binary(max_size=20000))
    def raw(data):
        r.run(tf.explain_bytes, data, len(data))

    m = Stats("explain: mutated real logs")
    stats.append(m)

    @LONG
    @given(st.sampled_from(tf.CORPUS), st.data())
    def mutated(path, data):
        buf = bytearray(path.read_bytes())
        for _ in range(data.draw(st.integers(0, 20))):
            if not buf:
                break
            i = data.draw(st.integers(0, len(buf) - 1))
            op = data.draw(st.sampled_from(["flip", "cut", "dup", "insert"]))
            if op == "flip":
                buf[i] = data.draw(st.integers(0, 255))
            elif op == "cut":
                del buf[i:i + data.draw(st.integers(1, 2000))]
            elif op == "dup":
                buf[i:i] = buf[i:i + data.draw(st.integers(1, 4000))]
            else:
                buf[i:i] = data.draw(st.sampled_from(tf.TOKENS)).encode() * data.draw(st.integers(1, 500))
        m.run(tf.explain_bytes, bytes(buf), len(buf))

    rep = Stats("Report.from_dict: mutated reports")
    stats.append(rep)

    @LONG
    @given(st.lists(st.tuples(st.sampled_from(tf.PATHS), st.sampled_from(["delete", "replace"]), tf.JUNK),
                    max_size=12))
    def reports(mutations):
        doc = tf.mutate_report(mutations)
        rep.run(tf.load_report, doc, len(repr(doc)))

    tf.explain_bytes(b"warm-up: the knowledge base loads once\n")  # not counted as the slowest input
    tf.load_report(copy.deepcopy(tf.SEED))
    t0 = time.time()
    for fn in (soup, raw, mutated, reports):
        fn()
    print(f"stackpeel fuzz_long: {N} examples per property, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.time() - t0:.0f} s")
    for st_ in stats:
        print(st_.line())
    for st_ in stats:
        for c in st_.crashes[:5]:
            print(f"--- crash in {st_.name}:\n{c}")


if __name__ == "__main__":
    main()
