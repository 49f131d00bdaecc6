"""chk27: a full file system may take a folder (an inode) but not its owner stamp's bytes: tmp26's
``stackpeel-cc-*`` folder for the compiler's own temporary files was then left unstamped, and an
empty ``.owner`` is one no sweep can read: a SIGKILLed probe left it forever. The folder is now not
made there (the compiler gets the user's TMPDIR and meets the full file system itself). Real: a
private mount namespace, a 1 MiB tmpfs filled with dd, the probes' own module, hygiene's real sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# the private-mount-namespace probe test_toolchain's tmpfs tests use (a fixture, imported by name)
from test_toolchain import can_unshare  # noqa: F401

SRC = Path(__file__).resolve().parent.parent / "src"

INNER = textwrap.dedent('''
    import importlib.util, json, os, subprocess, sys
    spec = importlib.util.spec_from_file_location("_stackpeel_probe__common", sys.argv[1])
    c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
    from stackpeel.runner import hygiene
    mnt = sys.argv[2]
    env, made = c.compiler_env({"TMPDIR": mnt, "PATH": os.environ["PATH"]}, "/", None)
    out = {"made": made, "tmpdir": env.get("TMPDIR"),
           "stamp": open(os.path.join(made, ".owner")).read() if made else None}
    # the old way on the same file system: a folder made by a process that is gone, its stamp empty
    code = ("import importlib.util,sys; s=importlib.util.spec_from_file_location('_c', sys.argv[1]); "
            "m=importlib.util.module_from_spec(s); s.loader.exec_module(m); print(m.stamped_mkdtemp('stackpeel-cc-', sys.argv[2]))")
    old = subprocess.run([sys.executable, "-c", code, sys.argv[1], mnt], capture_output=True, text=True).stdout.strip()
    out["old"] = old and os.path.basename(old)
    out["old_stamp_bytes"] = os.path.getsize(os.path.join(old, ".owner")) if old else None
    out["swept"] = [os.path.basename(p) for p in hygiene.sweep_orphans(mnt)]
    if made:
        import shutil; shutil.rmtree(made)
    out["left"] = sorted(os.listdir(mnt))
    print(json.dumps(out))
''')




def _inside(tmp_path: Path, fill: bool) -> dict:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "inner.py"
    script.write_text(INNER)
    filler = f"dd if=/dev/zero of={mnt}/fill bs=4k count=1000 2>/dev/null; " if fill else ""
    cmd = f"mount -t tmpfs -o size=1m none {mnt} && {filler}exec \"$@\""
    p = subprocess.run(["unshare", "-m", "sh", "-c", cmd, "sh", sys.executable, str(script),
                        str(SRC / "stackpeel" / "probes" / "_common.py"), str(mnt)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_full_tmpfs_gets_no_unstampable_compiler_folder(tmp_path, can_unshare):
    out = _inside(tmp_path, fill=True)
    assert out["made"] is None and out["tmpdir"] == str(tmp_path / "mnt")  # the user's, unchanged
    # what the old call left there: a folder whose stamp has no bytes, which the sweep cannot remove
    assert out["old"].startswith("stackpeel-cc-") and out["old_stamp_bytes"] == 0
    assert out["swept"] == [] and out["left"] == ["fill", out["old"]]


def test_a_tmpfs_with_room_gets_the_stamped_folder(tmp_path, can_unshare):
    """Negative control: with room the folder is made and stamped, and the sweep removes the one
    whose maker is gone."""
    out = _inside(tmp_path, fill=False)
    assert out["made"] and os.path.basename(out["made"]).startswith("stackpeel-cc-") and out["tmpdir"] == out["made"]
    assert len(out["stamp"].split()) == 4
    assert out["old_stamp_bytes"] > 0 and out["swept"] == [out["old"]] and out["left"] == []
