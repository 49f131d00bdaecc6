"""stackpeel under a low open-files limit (fd25): its own process raises its soft limit and
bounds the probes it has under way, every probe runs under the user's limit, and a probe that
used every descriptor its limit allows still gets its answer back. Real limits (resource /
bash ulimit), real child processes, the real stack venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

PROBE = textwrap.dedent('''
    import os, resource
    HELD = []
    def limit(inp):
        return {"nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
                "env": "STACKPEEL_NOFILE" in os.environ}
    def grab(inp):
        # what a CUDA context does under a low limit: take descriptors and keep them
        try:
            while True:
                HELD.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as e:
            return {"held": len(HELD), "errno": e.errno}
    def lose(inp):
        # its answer cannot be written for another reason: a folder where the file goes
        os.mkdir(os.path.join(os.path.dirname(os.getcwd()), "answer.json.tmp"))
        return {"never": True}
''')

DRIVER = textwrap.dedent('''
    import json, resource, sys
    from pathlib import Path
    soft, hard, probe, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    from stackpeel.runner import child, zygote
    if sys.argv[6] == "program":
        child.raise_own_nofile()  # as the CLI does when stackpeel is the program
    probes = Path(sys.argv[5])
    if how == "fork":
        z = zygote.Zygote(sys.executable, ())
        ans = z.run_probe("fdprobe." + probe, {}, 30, probes_dir=probes)
        z.close()
    else:
        ans = child.run_probe(sys.executable, "fdprobe." + probe, {}, 30, probes_dir=probes)
    f = ans.failure
    print(json.dumps({"facts": ans.facts, "tool": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
                      "slots": child.probe_slots()._value,
                      "failure": f and {"reason": f.reason, "rc": f.exit_code, "detail": f.detail,
                                        "stderr": f.stderr_tail}}))
''')


def drive(tmp_path: Path, soft: int, hard: int, probe: str, how: str, role: str = "program") -> dict:
    (tmp_path / "fdprobe.py").write_text(PROBE)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", DRIVER, str(soft), str(hard), probe, how, str(tmp_path), role],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_probe_runs_under_the_users_limit_while_stackpeel_raises_its_own(tmp_path, how):
    hard = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[1]
    if hard != __import__("resource").RLIM_INFINITY and hard < 256:
        pytest.skip("needs a hard limit of 256 or more")
    res = drive(tmp_path, 24, 256, "limit", how)
    assert res["failure"] is None
    assert res["facts"]["nofile"] == [24, 256]      # the user's limit, in the probe
    assert res["facts"]["env"] is False             # the note does not leak into the probe's children
    assert res["tool"] == [256, 256]                # stackpeel's own: raised to the hard limit
    assert res["slots"] > 1


def test_a_library_caller_keeps_its_own_limit(tmp_path):
    # negative control: engine.check from a user's process (the pytest plugin) never raises its limit
    hard = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[1]
    if hard != __import__("resource").RLIM_INFINITY and hard < 256:
        pytest.skip("needs a hard limit of 256 or more")
    res = drive(tmp_path, 64, 256, "limit", "spawn", role="library")
    assert res["failure"] is None
    assert res["tool"] == [64, 256] and res["facts"]["nofile"] == [64, 256]


@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_soft_equal_to_hard_changes_nothing_and_one_probe_at_a_time(tmp_path, how):
    # negative control: nothing to raise, nothing to put back; 24 descriptors leave room for one probe
    res = drive(tmp_path, 24, 24, "limit", how)
    assert res["failure"] is None
    assert res["facts"] == {"nofile": [24, 24], "env": False}
    assert res["tool"] == [24, 24]
    assert res["slots"] in (1, 2)  # (24 - open - 8 spare) // 6: not the 64 of a generous limit


@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_probe_that_used_every_descriptor_still_answers(tmp_path, how):
    res = drive(tmp_path, 24, 24, "grab", how)
    assert res["failure"] is None, res["failure"]
    assert res["facts"]["errno"] == 24
    # a forked probe starts with the descriptors a fresh process has (0, 1, 2 and no more than
    # what the interpreter itself keeps), so it can take about as many as a spawned one
    assert res["facts"]["held"] >= 24 - 8


@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_answer_lost_for_another_reason_says_why(tmp_path, how):
    # negative control for the EMFILE path: EISDIR is not retried; distinct status, stderr's words
    res = drive(tmp_path, 1024, 1024, "lose", how)
    assert res["facts"] is None
    assert res["failure"]["rc"] == 71
    assert "without writing its answer: IsADirectoryError" in res["failure"]["detail"]


STACK = os.environ.get("STACKPEEL_STACK_PYTHON",
                       str(Path(__file__).resolve().parent.parent / ".venv-stack" / "bin" / "python"))


def _check(limit_cmd: str, tmp_path: Path,
           only: str = "multi_gpu.open_files,torch.cuda,triton.kernel_launch,kernels.fla") -> dict:
    """``stackpeel check`` of the stack venv under ``limit_cmd`` (a shell command, "" for none);
    ``only`` "" runs every check."""
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    cmd = (f"{limit_cmd + '; ' if limit_cmd else ''}exec {sys.executable} -m stackpeel check --fresh --format json "
           f"--no-plugins --python {STACK}" + (f" --only {only}" if only else ""))
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_check_at_ulimit_20_answers_every_check_and_names_the_users_limit(tmp_path):
    report = _check("ulimit -n 20", tmp_path)
    by_id = {r["id"]: r for r in report["results"]}
    assert not [r["id"] for r in report["results"] if r["status"] == "error"]
    facts = by_id["multi_gpu.open_files"]["facts"]
    assert (facts["soft"], facts["hard"]) == (20, 20)
    assert [f["code"] for f in by_id["multi_gpu.open_files"]["findings"]] == ["open-files-limit-low"]
    if by_id["torch.cuda"]["facts"].get("device_count") == 0:
        # this machine has no GPU: Triton's '0 active drivers' is no shortage of descriptors, and the
        # limit stays a degraded warning with nothing nested under it (before fd25: a blocking root)
        assert not any(f["code"] == "open-files-limit-low" for f in by_id["triton.kernel_launch"]["findings"])
        assert [r["check"] for r in report["diagnosis"]["degraded"]] == ["multi_gpu.open_files"]
        assert "multi_gpu.open_files" not in [r["check"] for r in report["diagnosis"]["blocking"]]


def test_check_at_soft_12_measures_12_not_stackpeels_raised_limit(tmp_path):
    report = _check("ulimit -Sn 12", tmp_path)
    facts = {r["id"]: r for r in report["results"]}["multi_gpu.open_files"]["facts"]
    assert facts["soft"] == 12 and facts["hard"] > 12


def test_a_hard_limit_too_low_for_stackpeel_itself_says_so(tmp_path):
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    # the whole check (it runs from about 16 or 17 on the 2-core CI machine)
    out = subprocess.run(["bash", "-c", f"ulimit -n 12; exec {sys.executable} -m stackpeel check --fresh "
                                        f"--python {STACK}"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert out.returncode == 2
    assert "Too many open files (stackpeel itself needs about 17 open files and the hard limit here is 12" in out.stderr


# --------------------------------------------------------------------------------------------------
# tmp26: gcc and ld under a low soft limit fail with their own words (`ld: cannot find
# /lib64/ld-linux-x86-64.so.2: Too many open files`); the builds name the limit, not the toolchain


def _builds(limit_cmd: str, tmp_path: Path) -> dict:
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    cmd = (f"{limit_cmd}; exec {sys.executable} -m stackpeel check --fresh --format json --no-plugins "
           f"--python {STACK} --only toolchain.extension_build,triton.build")
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_the_real_builds_under_soft_12_name_the_open_files_limit(tmp_path):
    report = _builds("ulimit -Sn 12", tmp_path)
    by_id = {r["id"]: r for r in report["results"]}
    for check, own in (("toolchain.extension_build", "extension-build-failed"), ("triton.build", "triton-build-failed")):
        res = by_id[check]
        assert res["status"] == "fail", res
        assert "Too many open files" in json.dumps(res["facts"])  # gcc's/ld's own words: a real EMFILE
        notes = [f for f in res["findings"] if f["code"] == "open-files-limit-low"]
        assert len(notes) == 1 and notes[0]["severity"] == "info", res["findings"]
        assert "failed under an open-files limit of 12" in notes[0]["message"] and "Too many open files" in notes[0]["message"]
        # ld's `cannot find X: Too many open files` is no missing file: the build's own finding is plain
        assert [f["code"] for f in res["findings"] if f["code"] != "open-files-limit-low"] == [own]
    roots = {r["check"]: r for r in report["diagnosis"]["blocking"]}
    assert "toolchain.extension_build" not in roots  # before tmp26: the compiler was the root
    assert {"toolchain.extension_build", "triton.build"} <= {s["check"] for s in roots["multi_gpu.open_files"]["symptoms"]}
    assert report["diagnosis"]["errors"] == []


def test_the_real_builds_under_a_soft_limit_they_fit_name_nothing(tmp_path):
    """Negative control: a soft limit under 1024 (the limit itself still warns) that the builds fit in
    (13 is what they need here): they pass, and nothing is nested under the limit."""
    report = _builds("ulimit -Sn 64", tmp_path)
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["toolchain.extension_build"]["status"] == "pass" and by_id["triton.build"]["status"] == "pass"
    assert by_id["multi_gpu.open_files"]["facts"]["soft"] == 64
    assert not any(r["check"] == "multi_gpu.open_files" and r["symptoms"] for r in report["diagnosis"]["blocking"])


# --------------------------------------------------------------------------------------------------
# tmp26: stackpeel identifies the target (and starts its probes) under its own raised limit. An
# interpreter whose startup needs more descriptors than the user's limit would look healthy; the
# open-files probe starts it once more under the user's limit (soft < 64) and the check says so.


def _heavy_python(tmp_path: Path) -> str:
    """A real venv whose startup holds 16 descriptors at once (a .pth line, as an import hook's)."""
    venv = tmp_path / "heavy"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "hold.pth").write_text("import os; _h = [open(os.devnull) for _ in range(16)]\n")
    return str(venv / "bin" / "python")


def _open_files(limit_cmd: str, python: str, tmp_path: Path) -> dict:
    cmd = (f"{limit_cmd}; exec {sys.executable} -m stackpeel check --fresh --format json --no-plugins "
           f"--python {python} --only multi_gpu.open_files")
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path)))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_an_interpreter_whose_startup_does_not_fit_the_users_limit_is_named(tmp_path):
    python = _heavy_python(tmp_path)
    report = _open_files("ulimit -Sn 12", python, tmp_path)
    res = {r["id"]: r for r in report["results"]}["multi_gpu.open_files"]
    assert report["target"]["python"] == python or python in json.dumps(report["target"])  # identified all the same
    assert res["status"] == "fail" and res["facts"]["soft"] == 12
    assert "Too many open files" in res["facts"]["start"]["stderr"]  # CPython's own words, started at 12
    (f,) = res["findings"]
    assert f["code"] == "open-files-limit-low" and f["severity"] == "blocking"
    assert "fails in its own startup: `OSError: [Errno 24] Too many open files" in f["message"]
    assert [b["check"] for b in report["diagnosis"]["blocking"]] == ["multi_gpu.open_files"]


@pytest.mark.parametrize("limit, heavy", [("ulimit -Sn 64", True), ("ulimit -Sn 12", False)])
def test_an_interpreter_that_starts_under_the_users_limit_only_gets_the_warning(tmp_path, limit, heavy):
    """Negative controls: the same venv under a limit its startup fits (64: no start test, a warning),
    and the plain stack venv at 12 (it starts: the limit stays a degraded warning)."""
    if not heavy and not Path(STACK).exists():
        pytest.skip("no stack venv")
    report = _open_files(limit, _heavy_python(tmp_path) if heavy else STACK, tmp_path)
    res = {r["id"]: r for r in report["results"]}["multi_gpu.open_files"]
    assert res["status"] == "warn", res
    assert [f["severity"] for f in res["findings"]] == ["degraded"]
    assert "start" not in res["facts"] if heavy else res["facts"]["start"]["rc"] == 0


def test_a_run_under_a_lower_limit_reuses_nothing_measured_under_another(tmp_path):
    """tmp26: the cache key was computed in stackpeel's process, under its raised limit, and held no
    open-files limit: a run under `ulimit -Sn 12` reused the results of one under the default limit
    (multi_gpu.open_files 'pass' at 20000, the builds 'pass'). The key now holds the user's limit.
    Control: a second run under the same limit reuses them."""
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    env = dict(os.environ, PYTHONPATH=str(SRC), HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    cmd = (f"exec {sys.executable} -m stackpeel check --format json --no-plugins --python {STACK} "
           "--only multi_gpu.open_files,toolchain.extension_build")

    def run(limit: str) -> dict:
        out = subprocess.run(["bash", "-c", f"{limit}{cmd}"], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode in (0, 1), out.stderr
        report = json.loads(out.stdout)
        return {"reused": (report["target"].get("reused") or {}).get("results", 0),
                **{r["id"]: (r["status"], r["facts"].get("soft")) for r in report["results"]}}

    first = run("")
    assert first["toolchain.extension_build"][0] == "pass" and first["multi_gpu.open_files"][1] >= 1024
    low = run("ulimit -Sn 12; ")
    assert low["reused"] == 0, low
    assert low["multi_gpu.open_files"] == ("warn", 12) and low["toolchain.extension_build"][0] == "fail", low
    again = run("ulimit -Sn 12; ")
    assert again["reused"] > 0 and again["multi_gpu.open_files"] == ("warn", 12), again


# --------------------------------------------------------------------------------------------------
# chk27: at a soft limit of 5 multi_gpu.open_files's own probe dies (its fork's setup, exit 70, nothing
# on stderr); the runner's view of the user's limit names it, and the check is that root, not an error


def test_the_open_files_probe_dying_at_soft_5_names_the_limit(tmp_path):
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    report = _open_files("ulimit -Sn 5", STACK, tmp_path)
    res = {r["id"]: r for r in report["results"]}["multi_gpu.open_files"]
    assert res["status"] == "error" and res["failure"]["exit_code"] is not None  # the probe gave no answer
    (f,) = res["findings"]
    assert f["code"] == "open-files-limit-low" and f["severity"] == "blocking"
    assert "5 descriptors per process" in f["message"] and "could not run under it" in f["message"]
    assert [b["check"] for b in report["diagnosis"]["blocking"]] == ["multi_gpu.open_files"]
    assert report["diagnosis"]["errors"] == []


def test_a_soft_limit_the_probe_fits_gives_its_answer_not_the_death_note(tmp_path):
    """Negative control: at 20 the same probe answers (soft 20 measured), no `no-probe` sentence."""
    if not Path(STACK).exists():
        pytest.skip("no stack venv")
    report = _open_files("ulimit -Sn 20", STACK, tmp_path)
    res = {r["id"]: r for r in report["results"]}["multi_gpu.open_files"]
    assert res["status"] == "warn" and res["failure"] is None and res["facts"]["soft"] == 20
    assert not any("could not run under it" in f["message"] for f in res["findings"])
    assert report["diagnosis"]["errors"] == []


def test_a_probe_death_under_a_roomy_limit_is_not_blamed_on_it():
    """on_failure alone: the same death under 4096 without EMFILE names nothing; EMFILE in its stderr does."""
    from stackpeel.checks.base import Context
    from stackpeel.checks.multi_gpu import OpenFiles
    from stackpeel.model import ProbeFailure
    died = ProbeFailure("exit", exit_code=70, detail="probe multi_gpu.open_files exited with status 70")
    ctx = Context({}, {"python": "/x/python", "nofile": [4096, 4096]}, {})
    assert OpenFiles().on_failure(died, ctx) == []
    said = ProbeFailure("exit", exit_code=1, stderr_tail="OSError: [Errno 24] Too many open files", detail="x")
    assert [f.code for f in OpenFiles().on_failure(said, ctx)] == ["open-files-limit-low"]
    assert OpenFiles().on_failure(died, Context({}, {"python": "/x/python", "nofile": [-1, -1]}, {})) == []
    # under a low limit only a death is the limit's: a timeout or stackpeel's own fault is not
    low = Context({}, {"python": "/x/python", "nofile": [5, 4096]}, {})
    assert [f.code for f in OpenFiles().on_failure(died, low)] == ["open-files-limit-low"]
    for reason in ("timeout", "facts-shape", "probe-exception", "spawn"):
        assert OpenFiles().on_failure(ProbeFailure(reason, detail="x"), low) == [], reason


# --------------------------------------------------------------------------------------------------
# chk28: at a soft limit of 5 not only multi_gpu.open_files's probe dies: every probe forked from the
# torch-free interpreter does (exit 70, its setup cannot open its output files), and before chk28 they
# were listed as ~28 checks that "could not complete" beside the open-files root. The limit check
# declares that it limits every probe (Check.limits_every_probe); the runner offers it each death.


def test_every_probe_dying_at_soft_5_is_the_open_files_roots_symptom(tmp_path):
    report = _check("ulimit -Sn 5", tmp_path, only="")
    died = {r["id"]: r for r in report["results"] if r["status"] == "error"}
    assert "multi_gpu.open_files" in died and len(died) > 5, sorted(died)  # (28 on the CPU machine, chk28)
    assert report["diagnosis"]["errors"] == []
    (root,) = [b for b in report["diagnosis"]["blocking"] if b["check"] == "multi_gpu.open_files"]
    nested = {s["check"] for s in root["symptoms"]}
    for cid, res in died.items():
        notes = [f for f in res["findings"] if f["code"] == "open-files-limit-low"]
        assert len(notes) == 1, (cid, res["findings"])
        if cid == "multi_gpu.open_files":
            assert notes[0]["severity"] == "blocking"
            continue
        assert notes[0]["severity"] == "info", cid
        assert "5 descriptors per process" in notes[0]["message"] and cid in nested, cid
        assert res["failure"]["detail"].splitlines()[0] in notes[0]["message"], cid
    # the report records the limit its probes ran under: replayed here, under this process's own
    # (roomy) limit, the deaths are judged by the run's limit and the verdict is the same
    from stackpeel.model import Report
    from stackpeel.replay import rediagnose, verdict_of
    assert report["target"]["nofile"][0] == 5
    saved = Report.from_dict(report)
    assert verdict_of(rediagnose(saved)) == verdict_of(saved)


def test_at_the_usual_limit_no_probe_dies_and_nothing_names_the_limit(tmp_path):
    """Negative control: the same whole run under the machine's own limit."""
    report = _check("", tmp_path, only="")
    assert not [r["id"] for r in report["results"] if r["status"] == "error"]
    assert not any(f["code"] == "open-files-limit-low" for r in report["results"] for f in r["findings"])
    assert "multi_gpu.open_files" not in [b["check"] for b in report["diagnosis"]["blocking"]]


def test_another_probes_death_is_offered_to_the_limit_only_when_the_limit_explains_it():
    """explain_death alone: a death under 5 is the limit's (one informational note); the same
    death under 4096, a timeout or stackpeel's own fault under 5, or an unknown limit: nothing."""
    from stackpeel.checks.base import Check, Context
    from stackpeel.checks.multi_gpu import OpenFiles
    from stackpeel.model import ProbeFailure, Severity
    assert OpenFiles.limits_every_probe and not Check.limits_every_probe
    died = ProbeFailure("exit", exit_code=70, detail="probe gpu.nvml exited with status 70 without writing its answer")
    low = Context({}, {"python": "/x/python", "nofile": [5, 4096]}, {})
    (note,) = OpenFiles().explain_death(died, low)
    assert (note.code, note.severity) == ("open-files-limit-low", Severity.INFO)
    assert "probe gpu.nvml exited with status 70" in note.message and "5 descriptors" in note.message
    assert OpenFiles().explain_death(died, Context({}, {"nofile": [4096, 4096]}, {})) == []
    assert OpenFiles().explain_death(died, Context({}, {"nofile": [-1, -1]}, {})) == []
    for reason in ("timeout", "facts-shape", "probe-exception", "spawn"):
        assert OpenFiles().explain_death(ProbeFailure(reason, detail="x"), low) == [], reason
