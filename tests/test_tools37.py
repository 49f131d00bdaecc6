"""tools37: the final sweep ends a process tree that is still forking when the signal comes.

A signal during identification once left two ``sleep 1000`` of the target behind under load
(a clean-clone CI at load 9): terminate_all read the process table once, then killed what it
had read, so a child forked after that read (by a target stackpeel was still starting in
another thread, or by a shell between the read and the kill) escaped. The sweep now kills
and reads again until no live process is left under stackpeel (bounded by a deadline).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from test_hygiene import assert_nothing_left, cmdline, marked, start, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def forking_python(tmp_path: Path, n: int = 400) -> str:
    """A target 'interpreter' that never answers and keeps starting sleepers in sessions of their
    own (each escapes its process group) for a while, so that the signal comes mid-fork."""
    script = tmp_path / "forking-python"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        i=0
        while [ $i -lt {n} ]; do
          setsid sleep 1000 &
          sleep 1000 &
          i=$((i+1))
        done
        exec sleep 1000
        """))
    script.chmod(0o755)
    return str(script)


def sleepers(mark: str):
    return [p for p in marked(mark) if cmdline(p).startswith("sleep 1000")]


def test_signal_while_the_target_is_forking_leaves_nothing(tmp_path):
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["check", "--python", forking_python(tmp_path)], tmp_path, mark)
    assert wait_for(lambda: len(sleepers(mark)) >= 6, 60), "the target never started"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert_nothing_left(mark, tmpdir)


SWEEPER = textwrap.dedent("""\
    import os, subprocess, sys, time
    from stackpeel.runner import hygiene
    assert hygiene.become_subreaper()
    # a shell that keeps forking sleepers in sessions of their own, started outside spawn's registry
    subprocess.Popen(["sh", "-c", "while :; do setsid sleep 1000 & sleep 1000 & done"], start_new_session=True)
    time.sleep(0.3)
    rounds = hygiene._sweep_descendants(10.0)
    kids, states = hygiene._proc_table()
    left = [p for p in hygiene.descendants(os.getpid(), kids) if states.get(p) not in ("Z", "X", None)]
    print(rounds, len(left))
    """)


def test_the_sweep_ends_a_tree_that_forks_without_end(tmp_path):
    """In a child process of its own (the sweep kills every descendant of its caller): a shell
    that never stops forking is ended, with every sleeper it started, within the deadline."""
    mark = uuid.uuid4().hex
    env = dict(os.environ, STACKPEEL_TEST_MARK=mark,
               PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent / "src"),
                                                        os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", SWEEPER], env=env, capture_output=True, text=True, timeout=60)
    try:
        assert out.returncode == 0, out.stderr
        rounds, left = map(int, out.stdout.split())
        assert rounds >= 1 and left == 0, out.stdout
    finally:
        for p in marked(mark):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    assert wait_for(lambda: marked(mark) == [], 5), [cmdline(p) for p in marked(mark)]
