"""Fault suite: nothing stackpeel started outlives it, whatever ends it.

Real processes and real signals. Every process of a run carries a marker in its
environment (inherited by every descendant, whatever session or group it makes), so the
test finds survivors in /proc even after they were re-parented. Each test has a private
TMPDIR, so a leftover ``stackpeel-*`` directory is visible.

The 2-second bound after stackpeel has exited is the acceptance criterion of issue 10
(a job scheduler or a closed SSH session must not leave probes behind), not a speed test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from stackpeel.host import TargetError, identify

REPO_SRC = str(Path(__file__).resolve().parent.parent / "src")
GRACE_S = 2.0


def marked(mark: str):
    """pids of live (non-zombie) processes whose environment holds the marker."""
    needle = f"STACKPEEL_TEST_MARK={mark}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(name))
    return out


def cmdline(pid: int, limit: int = 120) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:limit]
    except OSError:
        return "?"


def wait_for(pred, timeout: float, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


def hanging_python(tmp_path: Path, answers_identification: bool = True) -> str:
    """A target 'interpreter': identification goes to the real Python, every probe hangs
    with descendants: a sleeper in its group and one in a session of its own."""
    script = tmp_path / "hanging-python"
    ident = f'case "$*" in *STACKPEEL-ID*) exec {sys.executable} "$@";; esac\n' if answers_identification else ""
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        {ident}sleep 1000 &
        setsid sleep 1000 &
        exec sleep 1000
        """).format(ident=ident))
    script.chmod(0o755)
    return str(script)


def start(args, tmp_path: Path, mark: str, parent_shell: bool = False):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = dict(os.environ, STACKPEEL_TEST_MARK=mark, TMPDIR=str(tmpdir),
               PYTHONPATH=os.pathsep.join(filter(None, [REPO_SRC, os.environ.get("PYTHONPATH")])))
    argv = [sys.executable, "-m", "stackpeel", *args]
    if parent_shell:  # stackpeel as the child of a shell the test will kill
        argv = ["sh", "-c", '"$@" & wait', "sh", *argv]
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_default_signals), tmpdir


def _default_signals() -> None:
    """The signals these tests send start at their default action in stackpeel, whatever the
    test run inherited: under `nohup` SIGHUP arrives ignored, and stackpeel rightly keeps an
    ignored signal ignored (test_nohup_* covers that path)."""
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def assert_nothing_left(mark: str, tmpdir: Path, stackpeel_pid=None):
    left = wait_for(lambda: [p for p in marked(mark) if p != stackpeel_pid] == [], GRACE_S)
    survivors = [(p, cmdline(p)) for p in marked(mark) if p != stackpeel_pid]
    for p, _ in survivors:  # do not leak them into other tests
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    assert left, f"processes outlived stackpeel: {survivors}"
    assert sorted(x.name for x in tmpdir.iterdir()) == [], "temporary directories left behind"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_ends_hanging_probes_and_their_descendants(tmp_path, sig):
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["check", "--python", hanging_python(tmp_path), "--only", "system,toolchain"],
                         tmp_path, mark)
    # several probes are hanging, each with its sleepers
    assert wait_for(lambda: len([p for p in marked(mark) if "sleep" in cmdline(p)]) >= 6, 60), \
        proc.stderr.read1().decode() if proc.poll() is not None else "probes never started"
    assert any(x.name.startswith("stackpeel-") for x in tmpdir.iterdir())
    proc.send_signal(sig)
    rc = proc.wait(timeout=30)
    assert rc == 128 + sig, proc.stderr.read().decode()
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "every probe was stopped" in err
    assert_nothing_left(mark, tmpdir)


def test_parent_death_ends_stackpeel_and_its_probes(tmp_path):
    mark = uuid.uuid4().hex
    shell, tmpdir = start(["check", "--python", hanging_python(tmp_path), "--only", "system,toolchain"],
                          tmp_path, mark, parent_shell=True)
    assert wait_for(lambda: len([p for p in marked(mark) if "sleep" in cmdline(p)]) >= 6, 60)
    stackpeel = [p for p in marked(mark) if "-m stackpeel" in cmdline(p) and not cmdline(p).startswith("sh ")]
    assert len(stackpeel) == 1, [cmdline(p) for p in marked(mark)]
    shell.kill()  # SIGKILL: the parent cannot pass anything on
    shell.wait()
    assert wait_for(lambda: not os.path.exists(f"/proc/{stackpeel[0]}/environ")
                    or stackpeel[0] not in marked(mark), 10), "stackpeel outlived its parent"
    assert_nothing_left(mark, tmpdir)


def test_signal_during_identification_leaves_nothing(tmp_path):
    """--python pointing at a program that never answers: a signal ends it and its children."""
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["check", "--python", hanging_python(tmp_path, answers_identification=False)],
                         tmp_path, mark)
    assert wait_for(lambda: len([p for p in marked(mark) if "sleep" in cmdline(p)]) >= 3, 60)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert_nothing_left(mark, tmpdir)


def test_identification_timeout_ends_the_target_and_its_children(tmp_path, monkeypatch):
    mark = uuid.uuid4().hex
    monkeypatch.setenv("STACKPEEL_TEST_MARK", mark)
    with pytest.raises(TargetError, match="did not answer within 1 s"):
        identify(hanging_python(tmp_path, answers_identification=False), timeout=1)
    survivors = [cmdline(p) for p in marked(mark) if p != os.getpid()]
    assert survivors == [], survivors


def test_sigterm_on_the_real_stack_leaves_nothing(tmp_path, stack_python):
    """The real stack venv: torch/triton probes are running when the signal comes."""
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["check", "--python", stack_python], tmp_path, mark)
    assert wait_for(lambda: len([p for p in marked(mark) if "common_dir" in cmdline(p, 100000)]) >= 2, 60), "no probe started"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert_nothing_left(mark, tmpdir)


def test_nohup_keeps_stackpeel_running_after_its_parent_dies(tmp_path):
    """SIGHUP ignored on entry (nohup) means: outlive the terminal, and the parent too."""
    mark = uuid.uuid4().hex
    out = tmp_path / "report.json"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, STACKPEEL_TEST_MARK=mark, TMPDIR=str(tmpdir),
               PYTHONPATH=os.pathsep.join(filter(None, [REPO_SRC, os.environ.get("PYTHONPATH")])))
    parent = subprocess.Popen(["sh", "-c", 'nohup "$@" >/dev/null 2>&1 & sleep 1', "sh", sys.executable, "-m",
                               "stackpeel", "check", "--python", sys.executable, "--only", "system.platform",
                               "--fresh", "--format", "json", "-o", str(out)], env=env, start_new_session=True)
    parent.wait()  # the parent is gone at once; stackpeel goes on and writes its report
    assert wait_for(out.exists, 120), "stackpeel under nohup did not survive its parent"
    assert wait_for(lambda: marked(mark) == [], 30)
    assert sorted(x.name for x in tmpdir.iterdir()) == []


def test_a_daemon_left_by_the_target_does_not_outlive_a_normal_run(tmp_path):
    """A target that answers identification but leaves a double-forked daemon behind (it
    escapes the process group and the tree): stackpeel, as a subreaper, adopts and ends it."""
    mark = uuid.uuid4().hex
    script = tmp_path / "leaky-python"
    script.write_text(f'#!/bin/sh\n( setsid sleep 1000 </dev/null >/dev/null 2>&1 & )\nexec {sys.executable} "$@"\n')
    script.chmod(0o755)
    proc, tmpdir = start(["check", "--python", str(script), "--only", "system.platform", "--fresh"], tmp_path, mark)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 1), err
    assert_nothing_left(mark, tmpdir)


def test_a_stackpeel_killed_outright_has_its_directories_swept_by_the_next_run(tmp_path):
    """SIGKILL (the OOM killer, `kill -9`, a container stopped hard) leaves stackpeel no moment
    to clean up: its temporary directories stay. The next stackpeel removes them, and only
    them: a directory of a stackpeel still running and one without an owner stamp stay."""
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["check", "--python", hanging_python(tmp_path), "--only", "system,toolchain"],
                         tmp_path, mark)
    assert wait_for(lambda: len([p for p in marked(mark) if "sleep" in cmdline(p)]) >= 6, 60), \
        proc.stderr.read1().decode() if proc.poll() is not None else "probes never started"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    for p in marked(mark):  # the hanging "probes" are sleep(1), not probes: no parent-death signal
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    orphans = sorted(x.name for x in tmpdir.iterdir())
    assert orphans and all((tmpdir / n / ".owner").is_file() for n in orphans), orphans

    from stackpeel.runner.hygiene import _start_time, _where

    ns, boot = _where()
    alive = tmpdir / "stackpeel-alive"  # a stackpeel that still runs: this test's process
    alive.mkdir()
    (alive / ".owner").write_text(f"{os.getpid()} {_start_time(os.getpid())} {ns} {boot}\n")
    elsewhere = tmpdir / "stackpeel-other-pid-namespace"  # pid 1 of a container sharing /tmp
    elsewhere.mkdir()
    (elsewhere / ".owner").write_text(f"999999 1 pid:[1] {boot}\n")
    rebooted = tmpdir / "stackpeel-before-reboot"  # this pid namespace, an earlier boot: gone
    rebooted.mkdir()
    (rebooted / ".owner").write_text(f"{os.getpid()} {_start_time(os.getpid())} {ns} an-earlier-boot\n")
    unstamped = tmpdir / "stackpeel-unstamped"
    unstamped.mkdir()
    other = tmpdir / "not-ours"
    other.mkdir()

    mark2 = uuid.uuid4().hex
    proc2, _ = start(["check", "--only", "system.platform", "--fresh"], tmp_path, mark2)
    out, err = proc2.communicate(timeout=120)
    assert proc2.returncode in (0, 1), err
    assert sorted(x.name for x in tmpdir.iterdir()) == ["not-ours", "stackpeel-alive",
                                                        "stackpeel-other-pid-namespace", "stackpeel-unstamped"]


def test_a_stackpeel_run_killed_outright_has_its_directory_swept_by_the_next_run(tmp_path):
    """`stackpeel run` keeps the monitor's bootstrap and the records in a directory of its own
    while the program runs. SIGKILLed, it cannot remove it: the stamp lets the next stackpeel."""
    mark = uuid.uuid4().hex
    proc, tmpdir = start(["run", "--", sys.executable, "-c", "import time; time.sleep(1000)"], tmp_path, mark)
    program = wait_for(lambda: [p for p in marked(mark) if p != proc.pid and "time.sleep" in cmdline(p)], 60)
    assert program, proc.stderr.read1().decode() if proc.poll() is not None else "the program never started"
    folders = sorted(x.name for x in tmpdir.iterdir())
    assert [n for n in folders if n.startswith("stackpeel-run-")], folders
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    for p in marked(mark):
        os.kill(p, signal.SIGKILL)
    wait_for(lambda: marked(mark) == [], 10)
    left = sorted(x.name for x in tmpdir.iterdir())
    assert left == folders and all((tmpdir / n / ".owner").is_file() for n in left), left

    proc2, _ = start(["check", "--only", "system.platform", "--fresh"], tmp_path, uuid.uuid4().hex)
    out, err = proc2.communicate(timeout=120)
    assert proc2.returncode in (0, 1), err
    assert sorted(x.name for x in tmpdir.iterdir()) == []


def test_a_zygote_importing_when_stackpeel_is_killed_outright_ends_at_once(tmp_path):
    """The interpreter that preloads torch reads stackpeel's requests only once its import is
    done (seconds on a real stack). When stackpeel is SIGKILLed before that, the zygote must not
    live on until the import ends: it checks its parent while it imports."""
    (tmp_path / "slow_preload.py").write_text("import time\nfor _ in range(600):\n    time.sleep(0.1)\n")
    runner = textwrap.dedent(f"""\
        import os, sys, time
        sys.path.insert(0, {REPO_SRC!r})
        from stackpeel.runner.zygote import Zygote
        z = Zygote(sys.executable, ("slow_preload",), env=dict(os.environ, PYTHONPATH={str(tmp_path)!r}))
        print(z.proc.pid, flush=True)
        time.sleep(1000)
        """)
    proc = subprocess.Popen([sys.executable, "-c", runner], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    zpid = int(proc.stdout.readline())
    time.sleep(0.5)  # well inside the 60-second import
    assert Path(f"/proc/{zpid}").exists()
    proc.kill()
    proc.wait(timeout=30)

    def gone() -> bool:
        try:
            return Path(f"/proc/{zpid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
    try:
        assert wait_for(gone, GRACE_S), "the importing zygote outlived stackpeel"
    finally:
        try:
            os.kill(zpid, signal.SIGKILL)
        except OSError:
            pass


def test_what_the_preloading_interpreter_writes_in_its_temporary_directory_goes_with_it(tmp_path):
    """Importing torch can write scratch files, and tempfile's first look for a writable
    directory leaves a file with a random name when a kill lands between its write and its
    unlink. The zygote's TMPDIR is inside its own directory, so all of that goes when it goes."""
    (tmp_path / "scratch_preload.py").write_text(
        "import os, tempfile\n"
        "fd, path = tempfile.mkstemp()\n"
        "os.close(fd)\n"
        f"with open({str(tmp_path / 'where')!r}, 'w') as f:\n"
        "    f.write(path)\n")
    users_tmp = tmp_path / "tmp"
    users_tmp.mkdir()
    runner = textwrap.dedent(f"""\
        import os, sys
        sys.path.insert(0, {REPO_SRC!r})
        from stackpeel.runner.zygote import Zygote
        z = Zygote(sys.executable, ("scratch_preload",),
                   env=dict(os.environ, PYTHONPATH={str(tmp_path)!r}, TMPDIR={str(users_tmp)!r}))
        assert z.usable(), z.problem
        print(z.cwd, flush=True)
        z.close()
        """)
    out = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TMPDIR=str(users_tmp)))
    assert out.returncode == 0, out.stderr
    cwd = out.stdout.strip()
    written = (tmp_path / "where").read_text()
    assert written.startswith(cwd + os.sep), (written, cwd)
    assert not Path(written).exists() and not Path(cwd).exists()
    assert sorted(x.name for x in users_tmp.iterdir()) == []


def _slow_extension_build(tmp_path: Path, stack_python: str, mark: str):
    """stackpeel checking the real extension build with TMPDIR=tmp_path/tmp, its compiler (CC) a
    script that has started and waits; returns (stackpeel, the build's folder in TMPDIR) once the
    probe has made and stamped that folder."""
    slow_cc = tmp_path / "slow-cc"
    slow_cc.write_text('#!/bin/sh\nsleep 1000\nexec gcc "$@"\n')
    slow_cc.chmod(0o755)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = dict(os.environ, STACKPEEL_TEST_MARK=mark, TMPDIR=str(tmpdir), CC=str(slow_cc),
               PYTHONPATH=os.pathsep.join(filter(None, [REPO_SRC, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "check", "--python", stack_python, "--fresh",
                             "--only", "toolchain.extension_build", "--format", "json"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_default_signals)

    def building():
        if not any("slow-cc" in cmdline(p) for p in marked(mark)):
            return None
        return [d for d in tmpdir.glob("stackpeel-ext-*")
                if (d / ".owner").is_file() and d.name not in ("stackpeel-ext-alive", "stackpeel-ext-mine")]

    folders = wait_for(building, 120)
    if not folders:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the extension build never started: {err.decode()[-2000:]}")
    return proc, folders[0]


def _controls(tmpdir: Path):
    """A folder with the same stamp whose maker (this test) still runs, and a user's folder of a
    similar name without one: no sweep may touch them."""
    from stackpeel.runner.hygiene import _start_time, _where

    ns, boot = _where()
    alive = tmpdir / "stackpeel-ext-alive"
    alive.mkdir()
    (alive / ".owner").write_text(f"{os.getpid()} {_start_time(os.getpid())} {ns} {boot}\n")
    users = tmpdir / "stackpeel-ext-mine"
    users.mkdir()
    (users / "notes.txt").write_text("mine\n")


def test_a_killed_extension_build_leaves_nothing_in_the_users_tmp(tmp_path, stack_python):
    """The extension-build probe builds in the user's temporary directory (tmp24), outside stackpeel's
    scratch. SIGKILLed mid-build (its compiler still running), it cannot remove its folder there; the
    owner stamp it wrote (tmp25) lets stackpeel sweep it at the end of the same run."""
    mark = uuid.uuid4().hex
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    _controls(tmpdir)
    proc, folder = _slow_extension_build(tmp_path, stack_python, mark)
    owner = int((folder / ".owner").read_text().split()[0])
    assert "python" in cmdline(owner) and owner != proc.pid  # the probe's interpreter made and stamped it
    os.kill(owner, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 1), err.decode()[-2000:]
    assert b"was killed by SIGKILL" in out, out[-2000:]
    assert not folder.exists()
    assert sorted(x.name for x in tmpdir.iterdir()) == ["stackpeel-ext-alive", "stackpeel-ext-mine"]
    assert marked(mark) == []  # the killed probe's compiler went with its process group


def test_an_extension_build_of_a_stackpeel_killed_outright_is_swept_by_the_next_run(tmp_path, stack_python):
    """stackpeel itself SIGKILLed while the probe builds: the probe dies with it (parent-death signal)
    and nobody is left to remove the folder in the user's temporary directory; the next run does."""
    mark = uuid.uuid4().hex
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    _controls(tmpdir)
    proc, folder = _slow_extension_build(tmp_path, stack_python, mark)
    owner = int((folder / ".owner").read_text().split()[0])
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert wait_for(lambda: not os.path.exists(f"/proc/{owner}/stat") or "python" not in cmdline(owner), 10)
    for p in marked(mark):  # the compiler the probe started: in its own group, orphaned (no parent-death signal)
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    assert folder.is_dir() and (folder / "stackpeel_ext_probe.c").is_file()  # left where the user builds
    proc2, _ = start(["check", "--only", "system.platform", "--fresh"], tmp_path, uuid.uuid4().hex)
    out, err = proc2.communicate(timeout=120)
    assert proc2.returncode in (0, 1), err
    assert sorted(x.name for x in tmpdir.iterdir()) == ["stackpeel-ext-alive", "stackpeel-ext-mine"]


def test_probes_stamp_their_folders_as_the_sweep_reads_them(tmp_path, stack_python):
    """probes/_common.py writes the line runner/hygiene.py writes and reads: a folder stamped by a
    probe that has ended is swept, one stamped by a live process is not."""
    code = ("import importlib.util, sys; s = importlib.util.spec_from_file_location('c', sys.argv[1]); "
            "c = importlib.util.module_from_spec(s); s.loader.exec_module(c); "
            "print(c.stamped_mkdtemp('stackpeel-ext-', sys.argv[2]))")
    common = Path(REPO_SRC) / "stackpeel" / "probes" / "_common.py"
    made = subprocess.run([stack_python, "-c", code, str(common), str(tmp_path)], capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()
    from stackpeel.runner import hygiene

    pid, start_time, ns, boot = (Path(made) / ".owner").read_text().split()
    assert (ns, boot) == hygiene._where() and start_time.isdigit()
    live = hygiene.make_tempdir("stackpeel-")  # this process's own, stamped by the runner
    try:
        assert (Path(live) / ".owner").read_text().split()[1:] == [hygiene._start_time(os.getpid()), ns, boot]
        assert hygiene.sweep_orphans(str(tmp_path)) == [made]
    finally:
        hygiene.remove_tempdir(live)
    bad = subprocess.run([stack_python, "-c", code.replace("'stackpeel-ext-'", "'ext-'"), str(common), str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "ValueError: a swept folder's name starts with stackpeel-" in bad.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == []  # a name the sweep would never look at: not made


def _ns(script: str, env=None, timeout: float = 300):
    """``script`` in a private mount namespace (root, unshare -m); skips where that is not permitted."""
    import shutil as _sh
    if _sh.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare -m")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"private mount namespaces not permitted here: {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=timeout)


#: /tmp and /var/tmp read-only in place (a checkout under /tmp stays visible), a read-only working directory
RO_TMP = ("mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && mount --bind /var/tmp /var/tmp && "
          "mount -o remount,bind,ro /var/tmp && mkdir -p /run/stackpeel-tmp25-cwd && "
          "mount -t tmpfs -o ro tmpfs /run/stackpeel-tmp25-cwd && cd /run/stackpeel-tmp25-cwd && ")
#: the user's cache folder (XDG_CACHE_HOME), writable, outside /tmp (which pytest's tmp_path is under)
XDG = "/run/stackpeel-tmp25-xdg"
XDG_MOUNT = f"mkdir -p {XDG} && mount -t tmpfs -o size=64m tmpfs {XDG}"
WHERE = ("from stackpeel.runner import hygiene; import tempfile; print(hygiene.fallback_roots()); "
         "d = hygiene.make_tempdir(); print(d); hygiene.remove_tempdir(d)")


@pytest.mark.parametrize("shm_size, first", [("64m", "cache"), ("1g", "/dev/shm")])
def test_stackpeel_scratch_leaves_a_small_dev_shm_to_nccl(tmp_path, shm_size, first):
    """With no usable temporary directory, stackpeel's scratch goes to /dev/shm only when it has room
    for the --deep peak twice and 200 MiB more (tmp25); Docker's default 64 MiB /dev/shm is left to
    NCCL and the scratch goes to the user's cache folder."""
    env = dict(os.environ, XDG_CACHE_HOME=XDG, PYTHONPATH=REPO_SRC)
    p = _ns(f"mount -t tmpfs -o size={shm_size} tmpfs /dev/shm && {XDG_MOUNT} && {RO_TMP} {sys.executable} "
            f"-c '{WHERE}'", env)
    assert p.returncode == 0, p.stderr
    roots, made = p.stdout.splitlines()[:2]
    cache = XDG + "/stackpeel/tmp"
    expected = [cache, "/dev/shm"] if first == "cache" else ["/dev/shm", cache]
    assert roots == repr(expected), roots
    assert os.path.dirname(made) == expected[0] and os.path.basename(made).startswith("stackpeel-")


def test_with_no_cache_folder_a_small_dev_shm_is_the_last_resort_and_a_tiny_one_none(tmp_path):
    ro_cache = "XDG_CACHE_HOME=/tmp/stackpeel-tmp25-xdg"  # under the read-only /tmp: cannot be made
    env = dict(os.environ, PYTHONPATH=REPO_SRC)
    p = _ns(f"mount -t tmpfs -o size=64m tmpfs /dev/shm && {RO_TMP} {ro_cache} {sys.executable} -c '{WHERE}'", env)
    assert p.returncode == 0, p.stderr
    assert os.path.dirname(p.stdout.splitlines()[1]) == "/dev/shm"
    p = _ns(f"mount -t tmpfs -o size=8m tmpfs /dev/shm && {RO_TMP} {ro_cache} {sys.executable} -c '{WHERE}'", env)
    assert p.returncode != 0 and "NoTempDir" in p.stderr and "no writable temporary directory" in p.stderr, p.stderr


def test_a_real_check_keeps_its_scratch_out_of_a_small_dev_shm(tmp_path, stack_python):
    """The real check on the stack venv, /tmp read-only, /dev/shm Docker's 64 MiB: the fault is named,
    stackpeel's scratch was in the user's cache folder (where Triton's test build kept its fresh
    cache) and is gone afterwards; /dev/shm is as empty as before."""
    env = dict(os.environ, XDG_CACHE_HOME=XDG, PYTHONPATH=REPO_SRC)
    p = _ns(f"mount -t tmpfs -o size=64m tmpfs /dev/shm && {XDG_MOUNT} && {RO_TMP} {sys.executable} -m stackpeel "
            f"check --python {stack_python} --fresh --only triton.build --format json; echo; echo /dev/shm:; "
            f"ls -A /dev/shm; echo cache:; ls -A {XDG}/stackpeel/tmp", env)
    cut = p.stdout.rindex("}") + 1
    report = json.loads(p.stdout[:cut])
    assert p.stdout[cut:].split() == ["/dev/shm:", "cache:"], p.stdout[cut:]  # both empty after the run
    assert ["temp-dir-unusable"] in [r["codes"] for r in report["diagnosis"]["blocking"]]
    build = next(r for r in report["results"] if r["id"] == "triton.build")
    assert build["facts"]["cache_dir"].startswith(XDG + "/stackpeel/tmp/stackpeel-"), build["facts"]


def _stamped_by_a_dead_process(folder: Path) -> None:
    """Make ``folder`` with the owner stamp of a process that has ended (a stackpeel killed outright)."""
    from stackpeel.runner import hygiene

    dead = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    start_time = hygiene._start_time(dead.pid)
    dead.kill()
    dead.wait()
    ns, boot = hygiene._where()
    folder.mkdir()
    (folder / ".owner").write_text(f"{dead.pid} {start_time} {ns} {boot}\n")


def test_the_sweep_also_looks_where_the_fallback_scratch_goes(tmp_path, monkeypatch):
    """A stackpeel killed outright while its scratch was in the user's cache folder (no usable /tmp)
    leaves it there: the sweep looks there too, and removes only what a dead stackpeel stamped."""
    from stackpeel.runner import hygiene

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "xdg" / "stackpeel" / "tmp"
    root.mkdir(parents=True)
    _stamped_by_a_dead_process(root / "stackpeel-dead")
    ns, boot = hygiene._where()
    (root / "stackpeel-alive").mkdir()
    (root / "stackpeel-alive" / ".owner").write_text(f"{os.getpid()} {hygiene._start_time(os.getpid())} {ns} {boot}\n")
    (root / "stackpeel-unstamped").mkdir()
    assert str(root / "stackpeel-dead") in hygiene.sweep_orphans()
    assert sorted(x.name for x in root.iterdir()) == ["stackpeel-alive", "stackpeel-unstamped"]


@pytest.mark.parametrize("where", ["TMPDIR", "cwd"])
def test_the_sweep_looks_where_probes_make_folders_when_the_scratch_moved(tmp_path, monkeypatch, where):
    """A probe makes its stamped folder in the user's temporary directory (or, where tempfile fell
    back to it, the working directory) even when stackpeel's own scratch moved to a fallback and
    tempfile no longer names that place: the sweep looks in the variables and the working directory."""
    from stackpeel.runner import hygiene

    root = tmp_path / "user"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "elsewhere"))  # the scratch's fallback
    (tmp_path / "elsewhere").mkdir()
    if where == "TMPDIR":
        monkeypatch.setenv("TMPDIR", str(root))
    else:
        monkeypatch.chdir(root)
    _stamped_by_a_dead_process(root / "stackpeel-ext-dead")
    (root / "stackpeel-user-folder").mkdir()  # unstamped: the user's, whatever its name
    assert str(root / "stackpeel-ext-dead") in hygiene.sweep_orphans()
    assert sorted(x.name for x in root.iterdir()) == ["stackpeel-user-folder"]


def test_tmp_peak_measures_what_a_command_writes_to_its_temporary_directory(tmp_path):
    """scripts/tmp_peak.py (how the figures of tmp25 were taken) on a real tmpfs: a command that writes
    3 MiB in TMPDIR and removes it peaks at 3 MiB or more; one that writes nothing peaks near 0."""
    script = Path(REPO_SRC).parent / "scripts" / "tmp_peak.py"
    write = ("import os, tempfile, time; p = os.path.join(tempfile.gettempdir(), 'x'); "
             "open(p, 'wb').write(b'x' * (3 << 20)); time.sleep(0.2); os.remove(p)")
    p = _ns(f"mount -t tmpfs -o size=16m tmpfs /mnt && {sys.executable} {script} /mnt -- {sys.executable} -c \"{write}\"; "
            f"{sys.executable} {script} /mnt -- true")
    assert p.returncode == 0, p.stderr
    peaks = [int(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("tmp_peak:")]
    assert len(peaks) == 2 and peaks[0] >= 3072 and peaks[1] < 64, p.stdout
    assert "/mnt/x" in p.stdout


# --------------------------------------------------------------------------------------------------
# tmp26: the compilers' own files. gcc, as and collect2 name their temporary files themselves
# (libiberty make_temp_file: ccXXXXXX.s/.o/.res in TMPDIR, TMP, TEMP, else /tmp) and remove them only
# when they end normally; SIGKILLed with their probe they stay, unstamped. The probes now give every
# compiler they start a stamped folder inside the directory it would have chosen.

#: run inside the private namespace: stackpeel checks ``sys.argv[2]`` with TMPDIR a fresh tmpfs, its
#: compiler held in ``as`` (gcc -wrapper) when it builds ``source``, the .s already written; the probe that made the stamped
#: folder is SIGKILLed (stackpeel then SIGKILLs its group: the compiler too, as at a timeout)
_HELD_BUILD = r'''
import json, os, signal, subprocess, sys, time
tmp, only, prefix, source, python, out = sys.argv[1:7]
with open(os.path.join(tmp, "ccUSER01.s"), "w") as f:  # the user's own gcc file: must stay
    f.write("mine\n")
hold = os.path.join(out, "hold.sh")
with open(hold, "w") as f:
    f.write('#!/bin/sh\ncase "$HOLD:$1" in 1:*/as|1:as) touch "$HOLD_MARK"; exec sleep 1000;; esac\nexec "$@"\n')
cc = os.path.join(out, "cc")
with open(cc, "w") as f:
    f.write('#!/bin/sh\ncase "$*" in *%s*) export HOLD=1;; esac\nexec gcc -wrapper %s "$@"\n' % (source, hold))
os.chmod(hold, 0o755); os.chmod(cc, 0o755)
mark = os.path.join(out, "in-as")
env = dict(os.environ, TMPDIR=tmp, CC=cc, HOLD_MARK=mark)
proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "check", "--python", python, "--fresh", "--only", only,
                         "--format", "json"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
deadline = time.monotonic() + 240
while not os.path.exists(mark) and time.monotonic() < deadline and proc.poll() is None:
    time.sleep(0.05)
def files():
    return sorted(os.path.relpath(os.path.join(r, f), tmp) for r, _, fs in os.walk(tmp) for f in fs)
held = files()
folders = [d for d in os.listdir(tmp) if d.startswith(prefix)]
owner = None
if os.path.exists(mark) and folders:
    owner = int(open(os.path.join(tmp, folders[0], ".owner")).read().split()[0])
    os.kill(owner, signal.SIGKILL)
else:
    proc.kill()
stdout, stderr = proc.communicate(timeout=240)
print(json.dumps({"held": held, "owner": owner, "rc": proc.returncode, "after": files(),
                  "killed": b"was killed by SIGKILL" in stdout, "stderr": stderr.decode()[-3000:]}))
'''


@pytest.mark.parametrize("only, prefix, source", [
    ("toolchain.extension_build", "stackpeel-ext-", "stackpeel_ext_probe"),
    ("triton.build", "stackpeel-triton-", "stackpeel_build_probe"),  # Triton's own build, started by the probe
])
def test_a_compiler_killed_mid_build_leaves_no_cc_file_in_the_users_tmp(tmp_path, stack_python, only, prefix,
                                                                         source):
    """The real probe SIGKILLed while its real gcc is in ``as`` (cc1's .s written): gcc's ccXXXXXX
    files lay in the probe's stamped folder, and the end-of-run sweep removed it with them. Negative
    control: the user's own ``ccUSER01.s`` beside it stays. TMPDIR is a private tmpfs (unshare -m)."""
    driver = tmp_path / "driver.py"
    driver.write_text(_HELD_BUILD)
    tmp = "/run/stackpeel-tmp26-tmp"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [REPO_SRC, os.environ.get("PYTHONPATH")])))
    run = _ns(f"mkdir -p {tmp} && mount -t tmpfs -o size=64m tmpfs {tmp} && "
              f"exec {sys.executable} {driver} {tmp} {only} {prefix} {source} {stack_python} {tmp_path}", env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["owner"] is not None, got  # the build reached the assembler in the probe's folder
    gcc_files = [f for f in got["held"] if os.path.basename(f).startswith("cc") and f != "ccUSER01.s"]
    assert gcc_files and all(f.startswith(prefix) for f in gcc_files), got["held"]  # inside the stamped folder
    assert got["killed"], got
    assert got["after"] == ["ccUSER01.s"], got  # the folder swept with gcc's files; the user's file kept


# tmp26: --deep with no usable /tmp, no cache folder and a 16 MiB /dev/shm (the last resort): Inductor's
# 149 MiB precompiled header cannot fit in stackpeel's scratch. Before: `CppCompileError: C++ compile
# error` as a torch-compile-failed finding; now the compile is not attempted and says why.

@pytest.mark.parametrize("shm_size, fits", [("16m", False), ("1g", True)])
def test_deep_torch_compile_without_room_says_so_instead_of_a_compile_error(tmp_path, stack_python, shm_size, fits):
    unusable = "HOME=/tmp/stackpeel-tmp26-home XDG_CACHE_HOME=/tmp/stackpeel-tmp26-xdg"  # under the read-only /tmp
    env = dict(os.environ, PYTHONPATH=REPO_SRC)
    p = _ns(f"mount -t tmpfs -o size={shm_size} tmpfs /dev/shm && {RO_TMP} {unusable} {sys.executable} -m stackpeel "
            f"check --deep --python {stack_python} --fresh --only kernels.torch_compile --format json; echo; "
            f"echo /dev/shm:; ls -A /dev/shm", env, timeout=900)
    cut = p.stdout.rindex("}") + 1
    report = json.loads(p.stdout[:cut])
    assert p.stdout[cut:].split() == ["/dev/shm:"], p.stdout[cut:]  # nothing left there
    res = next(r for r in report["results"] if r["id"] == "kernels.torch_compile")
    room = res["facts"]["room"]
    assert room["dir"].startswith("/dev/shm/stackpeel-"), room  # the last resort held the scratch
    roots = {r["check"]: r for r in report["diagnosis"]["blocking"]}
    assert roots["toolchain.temp_dir"]["codes"] == ["temp-dir-unusable"]
    if not fits:
        assert res["status"] == "blocked" and res["findings"] == [], res
        assert "writes about 149 MiB" in res["summary"] and "/dev/shm/stackpeel-" in res["summary"]
        assert "for want of a usable temporary directory" in res["summary"] and res["facts"]["steps"] == []
        assert "kernels.torch_compile" in [s["check"] for s in roots["toolchain.temp_dir"]["symptoms"]]
    else:  # negative control: with room the compile runs (whatever it then does), as before
        assert room["free_bytes"] >= room["need_bytes"] and res["facts"]["steps"], res
        assert res["status"] != "blocked"
