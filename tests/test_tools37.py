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
import time
import uuid
from pathlib import Path

import pytest

from stackpeel.runner import hygiene
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
