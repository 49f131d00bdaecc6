"""``stackpeel fix``: the remedy contract, the plan, consent, argv-only execution, foreign reports,
and end to end on a real minimal Debian root (opt-in: ``pytest -m minroot tests/test_fix.py``).

The end-to-end part builds a bookworm minbase root (python3, python3-venv; no C compiler, no
Python headers) with a venv holding the stack venv's real Triton, runs ``stackpeel check`` and
``stackpeel fix`` inside it (chroot in a private mount namespace: tests/rootfs.py) and lets the
root's own apt-get install from Debian's mirror.
"""

from __future__ import annotations

import ast
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackpeel import fix as fixmod
from stackpeel import knowledge, registry
from stackpeel.host import machine_identity
from stackpeel.model import Report

import rootfs

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "report" / "minroot-bookworm.json"
STACK_PY = os.environ.get("STACKPEEL_STACK_PYTHON") or str(REPO / ".venv-stack" / "bin" / "python")


# ----------------------------------------------------------------------------- the contract

def test_every_code_with_commands_or_packages_declares_its_remedy_contract():
    kb = knowledge.load()
    ids = {c.id for c in registry.load(plugins=False)}
    missing, bad = [], []
    for code, e in kb.codes.items():
        if not (e.packages or e.commands):
            continue
        if not isinstance(e.remedy.get("automatic"), bool):
            missing.append(code)
            continue
        if e.remedy["automatic"] is False and not e.remedy.get("why"):
            bad.append((code, "automatic = false without why"))
        for cid in e.remedy.get("verify", ()):
            if cid not in ids:
                bad.append((code, f"verify names unknown check {cid}"))
    assert not missing, f"codes with commands but no remedy = {{automatic = ...}}: {missing}"
    assert not bad, bad


def test_loader_refuses_a_malformed_remedy():
    base = {"layer": "toolchain", "kind": "root", "severity": "blocking", "title": "t", "meaning": "m", "fix": "f",
            "message": "x"}
    with pytest.raises(knowledge.KnowledgeError, match="why"):
        knowledge.parse_code("x-y", {**base, "remedy": {"automatic": False}}, "t.toml", 0)
    with pytest.raises(knowledge.KnowledgeError, match="remedy"):
        knowledge.parse_code("x-y", {**base, "remedy": {"automatic": "yes"}}, "t.toml", 0)
    with pytest.raises(knowledge.KnowledgeError, match="needed_by"):
        knowledge.parse_code("x-y", {**base, "needed_by": [{"package": "triton"}]}, "t.toml", 0)


# ----------------------------------------------------------------------------- the plan (pure)

def _recorded() -> Report:
    return Report.from_dict(json.loads(RECORDED.read_text()))


def test_plan_as_root_is_one_refresh_and_one_install_in_argv_lists():
    p = fixmod.plan(_recorded(), {"pkg_manager": "apt", "is_root": True})
    assert [s.argv for s in p.steps] == [
        ("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "update"),
        ("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends",
         "gcc", "libc6-dev", "python3.11-dev", "python3-dev")]
    assert all(isinstance(a, str) for s in p.steps for a in s.argv)
    actions = {i.code: i.action for i in p.items}
    assert actions == {"no-nvidia-driver": "person", "no-c-compiler": "run", "python-headers-missing": "run"}
    driver = next(i for i in p.items if i.code == "no-nvidia-driver")
    assert "host" in driver.why and driver.text  # said why, and what to do


def test_plan_not_root_uses_sudo_only_where_it_exists():
    with_sudo = fixmod.plan(_recorded(), {"pkg_manager": "apt", "is_root": False, "sudo_path": "/usr/bin/sudo"})
    assert all(s.argv[0] == "sudo" for s in with_sudo.steps) and len(with_sudo.steps) == 2
    without = fixmod.plan(_recorded(), {"pkg_manager": "apt", "is_root": False, "sudo_path": None})
    assert without.steps == ()
    reasons = {i.code: i.why for i in without.items}
    assert "not root" in reasons["no-c-compiler"] and "no sudo" in reasons["no-c-compiler"]


def test_plan_on_another_package_manager_runs_nothing_it_was_not_told():
    p = fixmod.plan(_recorded(), {"pkg_manager": "dnf", "is_root": True})
    assert p.steps == ()  # the report's packages were named for apt; dnf names are not guessed
    assert all(i.action == "person" for i in p.items)


def test_conda_and_pip_install_into_the_diagnosed_environment_without_sudo():
    from stackpeel import remedies
    host = {"pkg_manager": None, "is_root": False, "sudo_path": None, "conda_prefix": "/opt/conda/envs/ml"}
    d = json.loads(RECORDED.read_text())
    for r in d["results"]:
        for f in r["findings"]:
            if f["code"] == "no-c-compiler":
                f["remedy"] = remedies.build("no-c-compiler", host, {"python": "/opt/conda/envs/ml/bin/python"}).to_dict()
            if f["code"] == "python-headers-missing":  # as if triton were missing instead
                f.update(code="triton-not-installed", remedy=remedies.build(
                    "triton-not-installed", host, {"python": "/opt/stack/bin/python",
                                                   "triton_requirement": "triton==3.9.0"}).to_dict())
    p = fixmod.plan(Report.from_dict(d), host, only=["no-c-compiler", "triton-not-installed"])
    assert [s.argv for s in p.steps] == [
        ("conda", "install", "-y", "-p", "/opt/conda/envs/ml", "-c", "conda-forge", "c-compiler"),
        ("/opt/stack/bin/python", "-m", "pip", "install", "triton==3.9.0")]
    assert {i.code: i.action for i in p.items} == {"no-c-compiler": "run", "triton-not-installed": "run"}


def test_a_report_cannot_smuggle_options_in_as_package_names():
    d = json.loads(RECORDED.read_text())
    for r in d["results"]:
        for f in r["findings"]:
            for c in (f.get("remedy") or {}).get("commands", []):
                if c.get("kind") == "install" and f["code"] == "no-c-compiler":
                    c["packages"] = ["gcc", "-oAPT::Update::Pre-Invoke::=touch /tmp/pwned"]
    p = fixmod.plan(Report.from_dict(d), {"pkg_manager": "apt", "is_root": True})
    cc = next(i for i in p.items if i.code == "no-c-compiler")
    assert cc.action == "person" and "not package names" in cc.why
    assert all(not a.startswith("-oAPT") for s in p.steps for a in s.argv)
    assert p.steps[-1].argv[-2:] == ("python3.11-dev", "python3-dev")  # the honest finding still planned


def test_only_selects_codes_anywhere_in_the_report():
    p = fixmod.plan(_recorded(), {"pkg_manager": "apt", "is_root": True}, only=["file-command-missing"])
    assert [i.code for i in p.items] == ["file-command-missing"]  # a degraded root: only when asked
    assert p.steps[-1].argv[-1] == "file"


def test_fix_module_runs_argv_only():
    tree = ast.parse(Path(fixmod.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "shell":
            pytest.fail("fix.py passes shell=...")
        if isinstance(node, ast.Attribute) and node.attr in ("system", "popen") and getattr(node.value, "id", "") == "os":
            pytest.fail("fix.py calls os.system/os.popen")


def test_machine_identity_is_recorded_and_compared():
    here = machine_identity()
    assert here["hostname"]
    ok, _ = fixmod.machine_matches(dict(here), here)
    assert ok == bool(here["machine_id"])
    ok, why = fixmod.machine_matches({"machine_id": "0" * 32, "hostname": "elsewhere"}, here)
    assert not ok and "another machine" in why
    ok, why = fixmod.machine_matches({}, here)
    assert not ok and "does not say" in why


# ----------------------------------------------------------------------------- the command, on this host

def _stand_ins(tmp_path: Path) -> Path:
    """A PATH directory whose apt-get and sudo only record their argv (appended, one
    element a line, each call ended by a line ``--end--``)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("apt-get", "sudo"):
        script = bindir / name
        script.write_text(STAND_IN.format(log=tmp_path / f"{name}.argv"))
        script.chmod(0o755)
    return bindir


STAND_IN = "#!/bin/sh\nprintf '%s\\n' \"$@\" --end-- >> {log}\necho \"stand-in $0 ran\"\nexit 0\n"


def _split_calls(text: str):
    calls, cur = [], []
    for line in text.splitlines():
        if line == "--end--":
            calls.append(cur)
            cur = []
        else:
            cur.append(line)
    return calls


def _calls(tmp_path: Path, name: str):
    log = tmp_path / f"{name}.argv"
    return _split_calls(log.read_text()) if log.exists() else []


def _own_report(tmp_path: Path) -> Path:
    """The recorded minimal-root report, as if this machine wrote it about the stack venv."""
    d = json.loads(RECORDED.read_text())
    d["host"].update(machine_identity())
    d["target"]["python"] = STACK_PY
    out = tmp_path / "report.json"
    out.write_text(json.dumps(d))
    return out


def _fix(args, tmp_path, **kw):
    bindir = tmp_path / "bin" if (tmp_path / "bin").exists() else _stand_ins(tmp_path)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "stackpeel", "fix", *args], capture_output=True, text=True,
                          env=env, timeout=600, **kw)


def test_foreign_report_is_refused(tmp_path):
    if not machine_identity()["machine_id"]:
        pytest.skip("this machine has no /etc/machine-id")
    d = json.loads(_own_report(tmp_path).read_text())
    d["host"].update(machine_id="0123456789abcdef0123456789abcdef", hostname="build-node-7")
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(d))
    p = _fix(["--from", str(foreign), "--yes"], tmp_path, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p.stderr
    assert "another machine" in p.stderr and "build-node-7" in p.stderr
    assert _calls(tmp_path, "apt-get") == [] and "Plan" not in p.stdout
    # a report that does not say where it was written (older stackpeel, --redact) is refused too
    p = _fix(["--from", str(RECORDED), "--yes"], tmp_path, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "does not say which machine" in p.stderr
    assert _calls(tmp_path, "apt-get") == []


def test_no_terminal_and_no_yes_is_refused_and_runs_nothing(tmp_path):
    p = _fix(["--from", str(_own_report(tmp_path))], tmp_path, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "no terminal" in p.stderr and "--yes" in p.stderr
    assert "apt-get install -y --no-install-recommends gcc libc6-dev python3.11-dev" in p.stdout  # the plan shown
    assert _calls(tmp_path, "apt-get") == []


def test_dry_run_shows_the_plan_and_runs_nothing(tmp_path):
    p = _fix(["--from", str(_own_report(tmp_path)), "--dry-run", "--yes"], tmp_path, stdin=subprocess.DEVNULL)
    assert p.returncode == 1 and "--dry-run: nothing was run" in p.stdout
    assert _calls(tmp_path, "apt-get") == []


def _on_a_terminal(args, tmp_path, answer: bytes):
    """Run fix with a pseudo-terminal as stdin/stdout; answer the prompt; return (rc, output)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PATH": f"{_stand_ins(tmp_path)}:{os.environ['PATH']}"}
    proc = subprocess.Popen([sys.executable, "-m", "stackpeel", "fix", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    answered = False
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 1.0)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"[y/N]" in out:
                os.write(master, answer)
                answered = True
        elif proc.poll() is not None:
            break
    rc = proc.wait(timeout=60)
    os.close(master)
    return rc, out.decode("utf-8", "replace"), answered


def test_prompt_on_a_terminal_no_runs_nothing(tmp_path):
    rc, out, answered = _on_a_terminal(["--from", str(_own_report(tmp_path))], tmp_path, b"n\n")
    assert answered, out
    assert rc == 1 and "Nothing was run" in out
    assert _calls(tmp_path, "apt-get") == []


def test_prompt_on_a_terminal_yes_runs_each_argv_exactly_then_rechecks(tmp_path):
    rc, out, answered = _on_a_terminal(["--from", str(_own_report(tmp_path))], tmp_path, b"y\n")
    assert answered, out
    calls = _calls(tmp_path, "apt-get")
    assert calls == [["update"], ["install", "-y", "--no-install-recommends", "gcc", "libc6-dev", "python3.11-dev",
                                  "python3-dev"]], out
    assert "stand-in" in out and "| stand-in" in out.replace("\r", "")  # each step's output shown
    assert "Re-checking" in out and "Result:" in out
    # the driver is a person's job: reported, never attempted
    assert "not-attempted" in out and "no-nvidia-driver" in out
    assert rc == 1


# ----------------------------------------------------------------------------- end to end in a real root

pytest_minroot = pytest.mark.minroot


@pytest.fixture(scope="module")
def root(request):
    if "minroot" not in (request.config.getoption("-m") or ""):
        pytest.skip("opt-in: pytest -m minroot tests/test_fix.py (builds a Debian root with mmdebstrap)")
    reason = rootfs.why_not()
    if reason:
        pytest.skip(reason)
    base = rootfs.scratch_dir()
    try:
        r = rootfs.build_base(base / "root")
        rootfs.inside(r, "useradd -m tester", check=True)
        yield r
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _codes(report_json: str):
    rep = Report.from_dict(json.loads(report_json))
    return rep, {c for rc in rep.diagnosis.blocking for c in rc.codes}


def _installed(root: Path, binary: str) -> bool:
    return (root / "usr" / "bin" / binary).exists()


@pytest_minroot
def test_root_check_names_both_roots(root):
    p = rootfs.stackpeel(root, ["check", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--format", "json"])
    assert p.returncode == 1, p.stderr[-2000:]
    rep, roots = _codes(p.stdout)
    assert {"no-c-compiler", "python-headers-missing"} <= roots
    assert rep.result("triton.import").status.value == "pass"  # the real Triton, imported in the root


@pytest_minroot
def test_root_dry_run_changes_nothing(root):
    rootfs.stackpeel(root, ["check", "--timeout-scale", "4", "--python", "/opt/stack/bin/python"])  # what a check itself writes
    before = rootfs.tree(root)
    p = rootfs.stackpeel(root, ["fix", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--dry-run"])
    after = rootfs.tree(root)
    assert p.returncode == 1, p.stderr
    assert "apt-get install -y --no-install-recommends gcc libc6-dev python3.11-dev" in p.stdout
    changed = sorted(k for k in set(before) | set(after)
                     if before.get(k) != after.get(k) and not (k in before and k in after and os.path.isdir(root / k)
                                                               and before[k][:1] == after[k][:1]))
    assert changed == [], changed[:20]
    assert not _installed(root, "gcc")


@pytest_minroot
def test_root_not_root_without_sudo_prints_instructions_and_runs_nothing(root):
    p = rootfs.stackpeel(root, ["fix", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--yes"], user="tester")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "not root and has no sudo" in p.stdout
    assert "Nothing here can be run" in p.stdout
    assert not _installed(root, "gcc")


@pytest_minroot
def test_root_not_root_with_sudo_runs_through_sudo(root):
    sudo = root / "usr/local/bin/sudo"
    sudo.write_text(STAND_IN.format(log="/tmp/sudo.argv"))
    sudo.chmod(0o755)
    try:
        p = rootfs.stackpeel(root, ["fix", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--yes"], user="tester")
    finally:
        sudo.unlink()
    log = root / "tmp" / "sudo.argv"
    calls = _split_calls(log.read_text()) if log.exists() else []
    log.unlink(missing_ok=True)
    assert calls == [["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "update"],
                     ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends",
                      "gcc", "libc6-dev", "python3.11-dev", "python3-dev"]], p.stdout
    # the stand-in installed nothing: the re-check says so, with the new evidence
    assert p.returncode == 1
    assert "still-failing" in p.stdout and "no-c-compiler" in p.stdout
    assert not _installed(root, "gcc")


@pytest_minroot
def test_root_fix_yes_installs_with_the_roots_apt_and_the_recheck_passes(root):
    p = rootfs.stackpeel(root, ["fix", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--yes"], timeout=1200)
    print(p.stdout[-6000:])
    assert "| Setting up gcc" in p.stdout  # apt's own output, shown
    lines = {ln.split()[1]: ln.split()[0] for ln in p.stdout.split("Result:")[1].splitlines()
             if ln.startswith("  ") and len(ln.split()) > 2 and not ln.strip().startswith("re-checked")}
    assert lines["no-c-compiler"] == "fixed" and lines["python-headers-missing"] == "fixed", p.stdout
    assert lines["no-nvidia-driver"] == "not-attempted"
    assert p.returncode == 1  # the driver remains: a person's job
    assert _installed(root, "gcc")
    q = rootfs.stackpeel(root, ["check", "--timeout-scale", "4", "--python", "/opt/stack/bin/python", "--format", "json"])
    rep, roots = _codes(q.stdout)
    for cid in ("toolchain.c_compiler", "toolchain.python_headers", "toolchain.extension_build", "triton.build"):
        assert rep.result(cid).status.value == "pass", (cid, rep.result(cid).summary)
    assert roots == {"no-nvidia-driver"}
