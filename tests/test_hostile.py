"""Output errors and hostile input: each case exits with its documented code, one line, no traceback.

Exit codes (stackpeel check --help): 0 healthy, 1 blocking problem, 2 usage error.
Faults come from outside: a read-only tmpfs (unshare -m), /dev/full, a closed stdout, a
pipe whose reader went away, targets that answer garbage, a deleted working directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import find_python

SRC = str(Path(__file__).resolve().parent.parent / "src")
FAST = ["--only", "system.platform", "--fresh"]  # --fresh: no note about reused results


def env_with(**extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])))
    env.update(extra)
    return env


def stackpeel(*args, **kw):
    kw.setdefault("env", env_with())
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run([sys.executable, "-m", "stackpeel", *args], stdin=subprocess.DEVNULL, **kw)


def one_line_error(proc, rc=2):
    assert proc.returncode == rc, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def diagnosis_rc():
    """The exit code the diagnosis itself gives on this machine, to compare the broken-output cases with."""
    p = stackpeel("check", "--python", sys.executable, *FAST)
    assert p.returncode in (0, 1)
    return p.returncode


def can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "true"], capture_output=True).returncode == 0


needs_unshare = pytest.mark.skipif(not can_unshare(), reason="needs unshare -m (root in a mount namespace)")


# -- -o validated before anything runs --------------------------------------------------------

def test_output_in_missing_directory(tmp_path):
    line = one_line_error(stackpeel("check", "-o", str(tmp_path / "nope" / "x.json")))
    assert "does not exist" in line


def test_output_is_a_directory(tmp_path):
    line = one_line_error(stackpeel("check", "-o", str(tmp_path)))
    assert "is a directory" in line


@needs_unshare
def test_output_on_read_only_filesystem(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    script = (f"mount -t tmpfs -o ro tmpfs {ro} && exec {sys.executable} -m stackpeel check "
              f"--python {sys.executable} -o {ro}/r.json")
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env_with(), capture_output=True, text=True,
                       timeout=120)
    assert "no permission" in one_line_error(p)


def test_output_to_a_device_or_fifo_is_written_in_place(tmp_path):
    """-o /dev/null must not replace the device with a regular file (an atomic rename would)."""
    null = tmp_path / "null"
    os.mknod(null, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    p = stackpeel("check", "--python", sys.executable, *FAST, "-o", str(null))
    assert p.returncode in (0, 1), p.stderr
    assert null.is_char_device()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "check", "--python", sys.executable, *FAST,
                             "--format", "json", "-o", str(fifo)], env=env_with(), stderr=subprocess.PIPE)
    with open(fifo) as f:
        json.loads(f.read())
    assert proc.wait(timeout=120) in (0, 1)
    assert fifo.is_fifo()


def test_diff_output_in_missing_directory(tmp_path):
    line = one_line_error(stackpeel("diff", sys.executable, sys.executable, "-o", str(tmp_path / "no" / "d.txt")))
    assert "does not exist" in line


def test_report_is_written_atomically_and_completely(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old report")
    p = stackpeel("check", "--python", sys.executable, *FAST, "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    json.loads(out.read_text())
    assert [x.name for x in tmp_path.iterdir()] == ["r.json"]  # no temporary file left beside it


# -- broken standard output keeps the diagnosis exit code ------------------------------------

def test_closed_stdout(diagnosis_rc):
    p = subprocess.run(["sh", "-c", f'exec "$@" >&-', "sh", sys.executable, "-m", "stackpeel", "check",
                        "--python", sys.executable, *FAST], env=env_with(), capture_output=True, text=True,
                       timeout=120)
    assert "standard output is closed" in one_line_error(p, diagnosis_rc)


def test_full_disk_stdout(diagnosis_rc):
    with open("/dev/full", "w") as full:
        p = stackpeel("check", "--python", sys.executable, *FAST, stdout=full, capture_output=False,
                      stderr=subprocess.PIPE)
    assert "No space left on device" in one_line_error(p, diagnosis_rc)


def test_reader_gone_like_head(diagnosis_rc):
    """`stackpeel check | head -c 10`: the reader leaves before the report is written."""
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "check", "--python", sys.executable, *FAST],
                            env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == diagnosis_rc, err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_head_c_10_in_a_shell_pipeline(diagnosis_rc):
    p = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" | head -c 10; echo " rc=${PIPESTATUS[0]}"', "sh",
                        sys.executable, "-m", "stackpeel", "check", "--python", sys.executable, *FAST,
                        "--format", "json"], env=env_with(), capture_output=True, text=True, timeout=120)
    assert p.stdout.endswith(f" rc={diagnosis_rc}\n"), p.stdout
    assert "Traceback" not in p.stderr


def test_explain_keeps_its_exit_code_when_stdout_fails(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    with open("/dev/full", "w") as full:
        p = stackpeel("explain", str(log), "--no-live", stdout=full, capture_output=False, stderr=subprocess.PIPE)
    assert "No space left on device" in one_line_error(p, 1)
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "explain", str(log), "--no-live"], env=env_with(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1 and "Traceback" not in err and "Exception ignored" not in err


# -- hostile targets ---------------------------------------------------------------------------

def fake_python(tmp_path: Path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("answer", ["null", "1", '["a"]', '{"version": 3}'])
def test_identification_answer_is_validated(tmp_path, answer):
    py = fake_python(tmp_path, f"echo 'STACKPEEL-ID {answer}'")
    line = one_line_error(stackpeel("check", "--python", py))
    assert "unusable answer" in line


@pytest.mark.parametrize("printed", ["null", "1", '["a"]'])
def test_target_printing_json_but_no_identification(tmp_path, printed):
    line = one_line_error(stackpeel("check", "--python", fake_python(tmp_path, f"echo '{printed}'")))
    assert "not a Python interpreter" in line


def test_python_is_not_python():
    line = one_line_error(stackpeel("check", "--python", "/bin/ls"))
    assert "/bin/ls is not a working Python interpreter" in line
    assert "sys" not in line and "json" not in line  # stackpeel's own one-liner is not dumped


def test_python_too_old():
    py27 = find_python("2.7")
    if not py27:
        pytest.skip("no Python 2.7 here")
    line = one_line_error(stackpeel("check", "--python", py27))
    assert "is Python 2.7." in line and "3.8 and newer" in line


def test_venv_directory_means_its_interpreter(stack_python, tmp_path):
    venv = Path(stack_python).parent.parent
    out = tmp_path / "r.json"
    p = stackpeel("check", "--python", str(venv), *FAST, "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(out.read_text())["target"]["python"] == str(venv / "bin" / "python")


def test_directory_without_interpreter(tmp_path):
    assert "no bin/python in it" in one_line_error(stackpeel("check", "--python", str(tmp_path)))


def test_relative_python_in_deleted_cwd(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    p = subprocess.run(["sh", "-c", f'cd {gone} && rmdir {gone} && exec "$@"', "sh", sys.executable, "-m",
                        "stackpeel", "check", "--python", "./bin/python"], env=env_with(), capture_output=True,
                       text=True, timeout=60)
    assert "current directory no longer exists" in one_line_error(p)


@needs_unshare
def test_no_writable_temp_dir(tmp_path):
    """Every candidate temp dir read-only: check keeps its own scratch in /dev/shm and names the fault
    (temp-dir-unusable, tmp24); with /dev/shm read-only too it says so in one line; run still runs
    the program."""
    # read-only in place (a bind mount remounted ro), so a checkout under /tmp stays visible
    ro = " && ".join(f"mount --bind {d} {d} && mount -o remount,bind,ro {d}" for d in ("/tmp", "/var/tmp"))
    base = f"{ro} && cd /tmp && TMPDIR=/tmp exec {sys.executable} -m stackpeel "
    # the user's cache folder, stackpeel's other fallback (tmp25), under the read-only /tmp: unusable too
    env = dict(env_with(), XDG_CACHE_HOME="/tmp/stackpeel-no-cache-folder")
    p = subprocess.run(["unshare", "-m", "sh", "-c", base + f"check --python {sys.executable} --only "
                        "toolchain.temp_dir --fresh --format json"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1, p.stderr
    roots = [r["codes"] for r in json.loads(p.stdout)["diagnosis"]["blocking"]]
    assert ["temp-dir-unusable"] in roots, roots
    shm_ro = "mount --bind /dev/shm /dev/shm && mount -o remount,bind,ro /dev/shm && "
    p = subprocess.run(["unshare", "-m", "sh", "-c", shm_ro + base +
                        f"check --python {sys.executable} {' '.join(FAST)}"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert "no writable temporary directory" in one_line_error(p)
    program = f"run -- {sys.executable} -c 'print(\"the program ran\"); raise SystemExit(7)'"
    for prefix, unmonitored in (("", False), (shm_ro, True)):  # /dev/shm holds stackpeel's scratch, or not
        p = subprocess.run(["unshare", "-m", "sh", "-c", prefix + base + program],
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 7 and p.stdout == "the program ran\n", p.stderr
        assert ("ran unmonitored" in p.stderr) is unmonitored and "Traceback" not in p.stderr, p.stderr


def test_did_you_mean():
    assert "did you mean 'torch'" in one_line_error(stackpeel("check", "--only", "tor"))
    assert "did you mean 'toolchain'" in one_line_error(stackpeel("check", "--skip", "toolchian"))
    assert "did you mean no-c-compiler" in one_line_error(stackpeel("codes", "no-c-compilr"))


# -- run: the program's exit status and signals are its own ------------------------------------

def test_run_keeps_exit_status_when_report_unwritable(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text("raise SystemExit(5)\n")
    p = stackpeel("run", "-o", str(tmp_path / "missing" / "r.json"), "--", sys.executable, str(prog))
    assert p.returncode == 5
    assert "cannot write the report" in p.stderr and "Traceback" not in p.stderr


def test_run_delivers_a_group_signal_once(tmp_path):
    """SIGTERM and SIGHUP sent to stackpeel's whole process group reach the program once."""
    prog = tmp_path / "p.py"
    log = tmp_path / "signals"
    prog.write_text(textwrap.dedent(f"""\
        import os, signal, sys, time
        got = []
        def h(s, f):
            with open({str(log)!r}, "a") as out:
                out.write(signal.Signals(s).name + "\\n")
            got.append(s)
        signal.signal(signal.SIGTERM, h)
        signal.signal(signal.SIGHUP, h)
        open({str(tmp_path / 'ready')!r}, "w").close()
        deadline = time.monotonic() + 60
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # a second copy of either signal would arrive here
        sys.exit(3)
        """))
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "run", "--", sys.executable, str(prog)],
                            env=env_with(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGTERM)
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGHUP)
    assert proc.wait(timeout=60) == 3, proc.stderr.read()
    assert log.read_text().splitlines() == ["SIGTERM", "SIGHUP"]


HIDE = textwrap.dedent("""\
    import sys
    print("gettrace", sys.gettrace())
    if hasattr(sys, "monitoring"):
        M = sys.monitoring
        print("free", [i for i in range(6) if M.get_tool(i) is None])
        for i in (3, 4, 5):
            M.use_tool_id(i, "mine")
        print("took", [M.get_tool(i) for i in (3, 4, 5)])
    try:
        {}["x"]
    except KeyError:
        pass
    """)


@pytest.mark.parametrize("minor", ["3.8", "3.11", "3.12", "3.13"])
def test_run_is_invisible_to_the_program(tmp_path, minor):
    py = find_python(minor)
    if not py:
        pytest.skip(f"no Python {minor}")
    prog = tmp_path / "p.py"
    prog.write_text(HIDE)
    p = stackpeel("run", "--all", "--format", "json", "-o", str(tmp_path / "r.json"), "--", py, str(prog))
    assert p.returncode == 0, p.stderr
    assert "gettrace None" in p.stdout
    if tuple(map(int, minor.split("."))) >= (3, 12):
        assert "free [0, 1, 2, 3, 4, 5]" in p.stdout
        assert "took ['mine', 'mine', 'mine']" in p.stdout
    report = (tmp_path / "r.json").read_text()
    json.loads(report)
    assert "KeyError" in report  # still monitoring after the program took the tool ids it wanted
