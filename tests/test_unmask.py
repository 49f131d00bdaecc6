"""``stackpeel run`` / stackpeel.unmask: real programs, real interpreters, real FLA.

The monitor runs inside the target interpreter, so its behaviour is checked on the
sys.monitoring path (3.12, 3.13) and on the settrace fallback (3.8, 3.9, 3.11) with the
pyenv interpreters; FLA is imported for real in the stack venv (twice: that costs ~10 s
a run under the fallback monitor).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import find_python
from stackpeel.unmask import launcher
from stackpeel.unmask.render import render_json, render_text
from stackpeel.unmask.report import build_report, report_from_dict, short_path

DATA = Path(__file__).resolve().parent / "data" / "unmask"
FAKE_SITE = DATA / "site-packages"
SRC = Path(__file__).resolve().parent.parent / "src"

MONITORING = ["3.12", "3.13"]
FALLBACK = ["3.8", "3.9", "3.11"]


_FOUND: dict = {}


def _works(py) -> bool:
    try:
        return subprocess.run([py, "-c", "pass"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _python(minor: str) -> str:
    """A working interpreter of that minor version: pyenv's own build first (a pyenv shim
    on PATH may refuse to run a version that is not selected), then find_python()."""
    if minor not in _FOUND:
        roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
        cands = [str(p) for r in filter(None, roots) for p in sorted(Path(r, "versions").glob(f"{minor}.*/bin/python"))]
        cands.append(find_python(minor))
        _FOUND[minor] = next((c for c in cands if c and _works(c)), None)
    py = _FOUND[minor]
    if not py:
        if os.environ.get("CI"):
            pytest.fail(f"Python {minor} not found; the unmask monitor must be tested on it")
        pytest.skip(f"Python {minor} not installed")
    return py


def _env(**extra) -> dict:
    env = dict(os.environ)
    for k in ("PYTHONPATH", "STACKPEEL_UNMASK_DIR", "STACKPEEL_UNMASK_OPTIONS", "PYTHONWARNINGS"):
        env.pop(k, None)
    env.update(extra)
    return env


def stackpeel_run(args, env=None, cwd=None, timeout=240) -> subprocess.CompletedProcess:
    env = dict(env if env is not None else _env())
    return subprocess.run([sys.executable, "-m", "stackpeel", "run", *args], env=env, cwd=cwd,
                          capture_output=True, timeout=timeout)


def run_json(tmp_path, cmd, env=None, extra=(), name="report.json"):
    out = tmp_path / name
    proc = stackpeel_run([*extra, "--format", "json", "-o", str(out), "--", *cmd], env=env, cwd=tmp_path)
    return proc, json.loads(out.read_text())


def fake_env(**extra) -> dict:
    return _env(PYTHONPATH=str(FAKE_SITE), **extra)


def handled(report: dict, function: str) -> list:
    return [s for s in report["swallowed"] if s["handled"]["function"].endswith(function)]


# -- transparency ----------------------------------------------------------------------


@pytest.mark.parametrize("minor", MONITORING + ["3.11", "3.9"])
@pytest.mark.parametrize("mode,expect", [("ok", 0), ("exit3", 3), ("uncaught", 1),
                                         ("sigterm", -signal.SIGTERM), ("sigsegv", -signal.SIGSEGV)])
def test_program_io_status_and_argv_are_untouched(tmp_path, minor, mode, expect):
    py = _python(minor)
    cmd = [py, str(DATA / "transparent.py"), mode, "ärg with space", "--all"]
    direct = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, timeout=60)
    report = tmp_path / "report.json"
    via = stackpeel_run(["--format", "json", "-o", str(report), "--", *cmd], cwd=tmp_path)
    assert direct.returncode == expect
    assert via.returncode == direct.returncode
    assert via.stdout == direct.stdout          # argv, sys.path and raw bytes included
    assert via.stderr == direct.stderr          # the report went to --output
    assert f"'{mode}', 'ärg with space', '--all']".encode() in via.stdout
    rep = json.loads(report.read_text())
    assert rep["schema_version"] == 1 and rep["kind"] == "run" and rep["tool"]["name"] == "stackpeel"
    assert rep["exit"]["returncode"] == expect
    assert [p["mode"] for p in rep["processes"]] == ["monitoring" if minor in MONITORING else "settrace"]
    if mode == "uncaught":
        assert rep["exit"]["uncaught"]["type"] == "RuntimeError"
        assert rep["exit"]["uncaught"]["message"] == "boom"
    if expect < 0:
        assert rep["exit"]["signal_name"] == signal.Signals(-expect).name
        assert rep["processes"][0]["complete"] is False      # rebuilt from the journal
        assert "transparent.py" in (rep["exit"]["crash_dump"] or "")


def test_report_goes_to_stderr_after_the_program(tmp_path):
    py = _python("3.12")
    proc = stackpeel_run(["--", py, str(DATA / "transparent.py"), "exit3"], cwd=tmp_path)
    assert proc.returncode == 3
    direct = subprocess.run([py, str(DATA / "transparent.py"), "exit3"], env=_env(), cwd=tmp_path,
                            capture_output=True)
    assert proc.stdout == direct.stdout
    assert proc.stderr.startswith(direct.stderr)
    tail = proc.stderr[len(direct.stderr):].decode()
    assert tail.startswith("stackpeel run: ") and "exited with status 3" in tail
    assert "Exit: status 3" in tail


def test_python_dash_m_and_console_script(tmp_path):
    py = _python("3.13")
    proc, rep = run_json(tmp_path, [py, "-m", "fakelib.cli", "x", "-y"], env=fake_env())
    assert proc.returncode == 4
    assert proc.stdout.decode().startswith("module argv=[")
    assert "'x', '-y']" in proc.stdout.decode()
    assert handled(rep, "swallow")[0]["message"] == "swallowed"

    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "fakelib-cli"
    script.write_text(f"#!{py}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom fakelib import main_cli\n"
                      "if __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      "    sys.exit(main_cli())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = fake_env(PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    proc, rep = run_json(tmp_path, ["fakelib-cli", "--flag", "v"], env=env, name="cli.json")
    assert proc.returncode == 5
    assert proc.stdout.decode() == f"cli argv=[{str(script)!r}, '--flag', 'v']\n"
    assert rep["target"]["kind"] == "python-script" and rep["target"]["interpreter"] == py
    assert handled(rep, "swallow")[0]["count"] == 1


def test_a_sitecustomize_of_the_program_still_runs(tmp_path):
    py = _python("3.12")
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text(
        "import sys\nsys.stderr.write('own sitecustomize ran in %d.%d\\n' % sys.version_info[:2])\nMARK = 42\n")
    code = "import sys, sitecustomize; print(sitecustomize.MARK, [p for p in sys.path if 'stackpeel-run' in p])"
    proc, rep = run_json(tmp_path, [py, "-c", code], env=_env(PYTHONPATH=str(own)))
    assert proc.returncode == 0
    # (stackpeel's own Python reads PYTHONPATH too, and runs it as well)
    assert proc.stderr.count(b"own sitecustomize ran in 3.12\n") == 1
    assert proc.stdout == b"42 []\n"
    assert rep["processes"][0]["mode"] == "monitoring"


def test_usage_errors(tmp_path):
    assert stackpeel_run([]).returncode == 2
    proc = stackpeel_run(["--", "no-such-command-xyz"])
    assert proc.returncode == 127 and b"not found" in proc.stderr
    proc = stackpeel_run(["--", _python("3.12"), "-I", "-c", "pass"])
    assert proc.returncode == 0 and b"-I (isolated mode)" in proc.stderr


# -- what the monitor records, on both backends ------------------------------------------


@pytest.mark.parametrize("minor", MONITORING + FALLBACK)
def test_handled_reraised_converted_and_linked(tmp_path, minor):
    py = _python(minor)
    proc, rep = run_json(tmp_path, [py, str(DATA / "semantics.py"), "child"], env=fake_env(), extra=["--all"])
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b""
    assert b"falling back to the slow path" in proc.stderr and b"feature disabled" in proc.stderr
    lib = [s for s in rep["swallowed"] if s["scope"] == "library"]
    main_pid = rep["processes"][0]["pid"]
    mine = [s for s in lib if s["pid"] == main_pid]
    by_fn = {}
    for s in mine:
        by_fn.setdefault(s["handled"]["function"].rsplit(".", 1)[-1], []).append(s)

    assert by_fn["swallow"][0]["count"] == 1
    assert by_fn["swallow"][0]["raised"]["function"].endswith("_inner")
    assert by_fn["swallow"][0]["type"] == "RuntimeError" and by_fn["swallow"][0]["message"] == "swallowed"
    for reraised in ("finally_reraise", "nomatch", "with_reraise", "raise_e"):
        assert all(s["count"] == 0 for s in by_fn.get(reraised, [])), reraised
    conv = by_fn["translate"][0]
    assert conv["count"] == 0 and conv["converted"] == 1
    assert conv["converted_to"] == {"type": "ValueError", "message": "converted"}
    if minor != "3.8":      # 3.8 emits no line event for a with-block's exit: documented limitation
        assert by_fn["suppress"][0]["count"] == 1
    assert by_fn["loop"][0]["count"] == 1000
    assert by_fn["swallow_in_thread"][0]["thread"] == "worker-1"
    assert by_fn["probe"][0]["type"] == "ModuleNotFoundError" and by_fn["probe"][0]["shown"] is False

    warn = by_fn["warn_fallback"][0]
    assert warn["codes"] == ["no-c-compiler"]
    notices = {(n["pid"], n["id"]): n for n in rep["notices"]}
    linked = [notices[(warn["pid"], i)] for i in warn["notices"]]
    assert linked and linked[0]["kind"] == "warning"
    assert linked[0]["message"] == "fast kernel not available, falling back to the slow path"
    assert linked[0]["handling"] == warn["id"]
    logd = by_fn["log_fallback"][0]
    ln = [notices[(logd["pid"], i)] for i in logd["notices"]]
    assert ln and ln[0]["kind"] == "log" and ln[0]["logger"] == "fakelib" and ln[0]["category"] == "WARNING"
    assert rep["swallowed"][0]["id"] == warn["id"]      # most relevant first

    # the child Python (subprocess.run) was monitored too
    assert len(rep["processes"]) == 2
    child = [s for s in lib if s["pid"] != main_pid]
    assert [s["message"] for s in child if s["count"]] == ["suppressed"] or minor == "3.8"


def test_default_report_hides_routine_noise(tmp_path):
    py = _python("3.12")
    proc = stackpeel_run(["--", py, str(DATA / "semantics.py")], env=fake_env(), cwd=tmp_path)
    text = proc.stderr.decode()
    assert " 1. RuntimeError: Failed to find C compiler." in text
    assert "evidence for  no-c-compiler" in text
    assert 'then          UserWarning "fast kernel not available' in text
    assert "fakelib_optional_dependency" not in text      # an optional-import probe
    assert "KeyError" not in text


def test_include_and_exclude_filters(tmp_path):
    py = _python("3.12")
    _, rep = run_json(tmp_path, [py, str(DATA / "semantics.py")], env=fake_env(), extra=["--all", "--exclude", "fakelib"])
    assert not [s for s in rep["swallowed"] if (s["handled"]["module"] or "").startswith("fakelib")]
    _, rep = run_json(tmp_path, [py, str(DATA / "semantics.py")], env=fake_env(),
                      extra=["--all", "--include", "fakelib"], name="inc.json")
    mods = {(s["handled"]["module"] or "", s["raised"]["module"] or "") for s in rep["swallowed"]}
    assert mods and all(h.startswith("fakelib") or r.startswith("fakelib") for h, r in mods)


@pytest.mark.parametrize("minor", ["3.12", "3.11"])
def test_a_million_exceptions_make_a_bounded_record(tmp_path, minor):
    py = _python(minor)
    prog = tmp_path / "many.py"
    prog.write_text(
        "import fakelib\n"
        "fakelib.loop(1000000)\n"
        "for i in range(400):\n"          # 400 distinct user handler sites, more than the cap
        "    exec(compile('try:\\n' + '\\n' * i + '    {}[0]\\nexcept KeyError:\\n    pass\\n', 'gen.py', 'exec'))\n")
    res = launcher.launch([py, str(prog)], options={"cap_user": 50}, env=fake_env())
    assert res.returncode == 0
    (rec,) = res.records
    loop = [h for h in rec["handled"] if h["handled"]["function"].endswith("loop")]
    assert loop[0]["count"] == 1000000 and loop[0]["message"] == "loop"
    user = [h for h in rec["handled"] if h["scope"] == "user"]
    assert len(user) <= 50
    counted = rec["overflow"]["counted_only"]["user"]
    assert counted["sites"] + len(user) >= 400
    assert len(json.dumps(rec)) < 500_000


# -- real FLA on CPU -------------------------------------------------------------------


def _fla_checks(rep):
    drivers = [s for s in rep["swallowed"] if "0 active drivers ([]). There should only be one." in s["message"]]
    assert drivers, [s["message"] for s in rep["swallowed"][:5]]
    s = drivers[0]
    assert s["type"] == "RuntimeError"
    assert "triton/runtime/" in s["raised"]["file"] and s["raised"]["module"].startswith("triton")
    assert "fla/utils/" in s["handled"]["file"] and s["handled"]["function"] == "get_available_device"
    assert "triton-no-active-driver" in s["codes"]
    assert s["shown"] and rep["swallowed"][0] == s
    warn = [n for n in rep["notices"] if "roll back to CPU" in n["message"]]
    assert warn and warn[0]["category"] == "UserWarning" and warn[0]["handling"] == s["id"]
    assert "fla-cpu-fallback" in warn[0]["codes"]
    return s


@pytest.mark.slow
def test_fla_import_on_cpu_shows_the_error_it_swallowed(tmp_path, stack_python, clean_env):
    proc = stackpeel_run(["--", stack_python, str(DATA / "fla_import.py")], env=clean_env, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == b"fla imported\n"
    text = proc.stderr.decode()
    assert "roll back to CPU" in text.split("stackpeel run:")[0]         # FLA's own warning, as always
    report = text[text.index("stackpeel run:"):]
    first = report.split(" 2. ")[0]
    assert " 1. RuntimeError: 0 active drivers ([]). There should only be one." in first
    assert "raised at     triton/runtime/driver.py:" in first
    assert "swallowed at  fla/utils/hardware.py:" in first and "in get_available_device" in first
    flat = " ".join(first.split())  # the report wraps at 80 columns when stderr is no terminal
    assert 'then UserWarning "Triton is not supported on current platform, roll back to CPU."' in flat
    assert "evidence for  triton-no-active-driver" in first
    assert all(len(ln) <= 80 for ln in report.splitlines() if not ln.startswith("stackpeel run:"))


@pytest.mark.slow
def test_fla_op_without_compilers_links_the_crash(tmp_path, stack_python, nocc_env):
    proc, rep = run_json(tmp_path, [stack_python, str(DATA / "fla_op.py")], env=nocc_env)
    assert proc.returncode == 1
    assert proc.stdout == b"fla imported\n"
    s = _fla_checks(rep)
    u = rep["exit"]["uncaught"]
    assert u["type"] == "RuntimeError" and u["message"] == s["message"]
    assert "the same error ended the program" in s["reasons"]
    text = render_text(report_from_dict(rep))
    assert "the same error was swallowed earlier: #1" in text


# -- in-process API --------------------------------------------------------------------


def test_watch_in_process(monkeypatch):
    if sys.gettrace() is not None and sys.version_info < (3, 12):
        pytest.skip("a tracer (coverage/debugger) is active: the settrace fallback steps aside")
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    import warnings

    import fakelib
    import stackpeel.unmask as unmask

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unmask.watch() as w:
            fakelib.swallow()
            fakelib.warn_fallback()
    rep = w.report()
    first = rep.shown_swallowed[0]
    assert first.type == "RuntimeError" and first.codes == ("no-c-compiler",)
    assert "Failed to find C compiler" in str(rep)
    assert any(s.message == "swallowed" for s in rep.swallowed)
    assert json.loads(render_json(rep))["schema_version"] == 1
    # stopped: nothing more is recorded
    fakelib.swallow()
    assert [s.count for s in w.report().swallowed if s.message == "swallowed"] == [1]


def test_install_and_auto_on_monitoring_python(tmp_path):
    py = _python("3.12")
    env = _env(PYTHONPATH=os.pathsep.join([str(SRC), str(FAKE_SITE)]))
    code = "import stackpeel.unmask as u; u.install(); import fakelib; fakelib.warn_fallback(); print('done')"
    proc = subprocess.run([py, "-c", code], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"done\n"
    assert b" 1. RuntimeError: Failed to find C compiler" in proc.stderr
    proc = subprocess.run([py, "-m", "stackpeel.unmask.auto", str(DATA / "semantics.py")], env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0
    assert b"evidence for  no-c-compiler" in proc.stderr


# -- pure pieces -----------------------------------------------------------------------


def test_short_path():
    assert short_path("/v/lib/python3.11/site-packages/triton/runtime/driver.py") == "triton/runtime/driver.py"
    assert short_path("/usr/lib/python3/dist-packages/torch/x.py") == "torch/x.py"
    assert short_path("/usr/lib/python3.12/importlib/__init__.py") == "python3.12/importlib/__init__.py"
    assert short_path("repro.py") == "repro.py"


def test_golden_text_and_json_roundtrip():
    rec = json.loads((DATA / "fla_import.record.json").read_text())
    codes = {"RuntimeError: 0 active drivers ([]). There should only be one.": ["triton-no-active-driver"],
             "UserWarning: Triton is not supported on current platform, roll back to CPU.": ["fla-cpu-fallback"]}
    rep = build_report([rec], command=["python", "repro.py"], returncode=0, duration=9.5,
                       main_pid=rec["pid"], codes_fn=lambda t: codes.get(t, []))
    golden = DATA / "fla_import.report.txt"
    text = render_text(rep)
    if os.environ.get("STACKPEEL_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
    doc = json.loads(render_json(rep))
    assert list(doc)[:3] == ["schema_version", "kind", "tool"] and doc["schema_version"] == 1
    assert {"command", "target", "duration", "exit", "processes", "swallowed", "notices", "totals",
            "notes", "show_all"} <= set(doc)
    assert {"type", "message", "raised", "handled", "codes", "score", "reasons", "count", "shown",
            "notices", "pid", "scope"} <= set(doc["swallowed"][0])
    back = report_from_dict(doc)
    assert render_text(back) == text
    everything = render_text(build_report([rec], command=["python", "repro.py"], returncode=0, duration=9.5,
                                          main_pid=rec["pid"], codes_fn=lambda t: [], show_all=True))
    assert "cannot import name '_cudart'" in everything and "score " in everything
