"""The fast default check (issue 9): the shared torch interpreter, the shortcuts of the
kernel probes, and the repeat-run cache.

The shortcut tests run the real CLI twice on the real stack venv under each injected
fault: once as shipped (one torch import forked per probe, FLA's detection without
``fla/__init__``, transformers' bindings from source) and once the old way (every probe
in a fresh interpreter, full ``import fla`` and model import: ``--deep`` with
``STACKPEEL_NO_PRELOAD=1``), and demand the same verdicts.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from stackpeel import engine
from stackpeel.checks.base import Check
from stackpeel.model import Status
from stackpeel.runner import cache, run_checks

from conftest import no_compiler_path

FAULTS = str(Path(__file__).parent / "data" / "fault_probes")
HOST = {"pkg_manager": "apt", "is_root": True}
DEEP_OPS = "kernels.fla_ops,kernels.torch_compile,kernels.causal_conv1d_ops"


# --------------------------------------------------------------------------- helpers

def cli(python, env, *args, unshare_script=None):
    argv = [sys.executable, "-m", "stackpeel", "check", "--python", python, "--format", "json", *args]
    if unshare_script:  # run inside a private mount namespace after a bind mount
        argv = ["unshare", "-m", "sh", "-c", unshare_script + ' && exec "$@"', "sh", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout)


def verdicts(report):
    """What a user acts on: each check's status and findings, and the root causes."""
    checks = {r["id"]: (r["status"], sorted((f["code"], f["severity"]) for f in r["findings"]))
              for r in report["results"] if r["id"] not in DEEP_OPS.split(",")}
    diag = report["diagnosis"]
    roots = sorted((kind, c["check"], tuple(c["codes"]), tuple(sorted(s.get("check", "") for s in c["symptoms"])))
                   for kind in ("blocking", "degraded") for c in diag[kind])
    return checks, roots


def bindings(report):
    tf = next(r for r in report["results"] if r["id"] == "kernels.transformers_fast_path")
    return {b["func_name"]: ("reference" if b["reference"] else b["package"]) for b in tf["facts"].get("bindings", [])}


def fact(report, check_id, key):
    return next(r for r in report["results"] if r["id"] == check_id)["facts"].get(key)


def overlay_venv(root: Path, stack_python: str, drop=(), break_triton=False, drop_models=(),
                 causal_conv1d_without_extension=False) -> str:
    """A venv whose site-packages links to the stack venv's entries, less ``drop`` (a real
    environment where those packages are not installed), optionally with a Triton whose
    native library is truncated (a broken install), with transformers less the model
    packages ``drop_models``, or with causal-conv1d installed without its compiled extension
    (its package and metadata, as a wheel built without CUDA leaves them)."""
    cfg = Path(stack_python).parent.parent / "pyvenv.cfg"
    home = next(line.split("=", 1)[1].strip() for line in cfg.read_text().splitlines() if line.startswith("home"))
    base = next(p for p in (Path(home) / "python3", Path(home) / "python") if p.exists())
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(root)], check=True)
    src = Path(subprocess.run([stack_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip())
    dst = Path(subprocess.run([str(root / "bin" / "python"), "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip())
    for entry in src.iterdir():
        if any(entry.name.lower().startswith(d) for d in drop):
            continue
        if break_triton and entry.name == "triton":
            (dst / "triton").mkdir()
            for sub in entry.iterdir():
                if sub.name == "_C":
                    (dst / "triton" / "_C").mkdir()
                    for lib in sub.iterdir():
                        if lib.name.startswith("libtriton"):
                            (dst / "triton" / "_C" / lib.name).write_bytes(b"\x7fELF truncated")
                        else:
                            (dst / "triton" / "_C" / lib.name).symlink_to(lib)
                else:
                    (dst / "triton" / sub.name).symlink_to(sub)
            continue
        if drop_models and entry.name == "transformers":
            _link_tree_without(entry, dst / entry.name, {Path("models") / m for m in drop_models})
            continue
        (dst / entry.name).symlink_to(entry)
    if causal_conv1d_without_extension:
        pkg = dst / "causal_conv1d"
        pkg.mkdir()
        # causal-conv1d 1.5's own layout: the package imports its interface, which imports the extension
        (pkg / "__init__.py").write_text('__version__ = "1.5.0.post8"\n\n'
                                         "from causal_conv1d.causal_conv1d_interface import causal_conv1d_fn, "
                                         "causal_conv1d_update\n")
        (pkg / "causal_conv1d_interface.py").write_text(
            "import torch\nimport torch.nn.functional as F\n\nimport causal_conv1d_cuda\n\n\n"
            "def causal_conv1d_fn(x, weight, bias=None, seq_idx=None, activation=None):\n    raise NotImplementedError\n\n\n"
            "def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None):\n    raise NotImplementedError\n")
        meta = dst / "causal_conv1d-1.5.0.post8.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: causal_conv1d\nVersion: 1.5.0.post8\n")
    return str(root / "bin" / "python")


def _link_tree_without(src: Path, dst: Path, hidden, rel=Path()) -> None:
    """``dst`` mirrors ``src`` by symlinks, less the relative paths in ``hidden``."""
    dst.mkdir()
    for entry in src.iterdir():
        here = rel / entry.name
        if here in hidden:
            continue
        if any(len(h.parts) > len(here.parts) and h.parts[:len(here.parts)] == here.parts for h in hidden):
            _link_tree_without(entry, dst / entry.name, hidden, here)
        else:
            (dst / entry.name).symlink_to(entry)


# --------------------------------------------------------------------------- same verdicts

FAULT_CASES = ["no-driver", "no-compiler", "python-h-hidden", "triton-missing", "triton-broken", "fla-absent",
               "causal-conv1d-no-extension", "transformers-without-model", "fla-shadowed"]


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULT_CASES)
def test_fast_default_reaches_the_verdicts_of_the_full_imports(fault, stack_python, clean_env, tmp_path):
    env = dict(clean_env, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    python, unshare_script = stack_python, None
    if fault == "no-compiler":
        env["PATH"] = no_compiler_path(tmp_path)
    elif fault == "python-h-hidden":
        if not shutil.which("unshare"):
            pytest.skip("needs unshare")
        inc = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
        empty = tmp_path / "empty-include"
        empty.mkdir()
        unshare_script = f"mount --bind {empty} {inc}"
        probe = subprocess.run(["unshare", "-m", "sh", "-c", unshare_script + f" && test ! -e {inc}/Python.h"])
        if probe.returncode != 0:
            pytest.skip("cannot bind-mount in a private mount namespace here")
    elif fault == "triton-missing":
        python = overlay_venv(tmp_path / "venv", stack_python, drop=("triton",))
    elif fault == "triton-broken":
        python = overlay_venv(tmp_path / "venv", stack_python, break_triton=True)
    elif fault == "fla-absent":
        python = overlay_venv(tmp_path / "venv", stack_python, drop=("fla", "flash_linear_attention"))
    elif fault == "causal-conv1d-no-extension":
        python = overlay_venv(tmp_path / "venv", stack_python, causal_conv1d_without_extension=True)
    elif fault == "transformers-without-model":
        python = overlay_venv(tmp_path / "venv", stack_python, drop_models=("qwen3_next", "qwen3_5"))
    elif fault == "fla-shadowed":  # a stray `fla` directory (a checkout, a local folder) ahead of site-packages
        stray = tmp_path / "stray"
        (stray / "fla").mkdir(parents=True)
        (stray / "fla" / "__init__.py").write_text("")
        env["PYTHONPATH"] = str(stray)

    fast = cli(python, env, "--fresh", unshare_script=unshare_script)
    full = cli(python, dict(env, STACKPEEL_NO_PRELOAD="1"), "--fresh", "--deep", "--skip", DEEP_OPS,
               unshare_script=unshare_script)

    assert verdicts(fast) == verdicts(full)
    assert bindings(fast) == bindings(full)
    # the shortcuts were taken where they apply, and not in the full run
    fla_path = fact(fast, "kernels.fla", "import_path")
    if fault not in ("fla-absent", "fla-shadowed"):
        assert fla_path == "fla/utils/hardware.py only"
        assert fact(full, "kernels.fla", "import_path") == "import fla.utils"
    if fault not in ("triton-missing", "triton-broken"):  # (triton.build is blocked there)
        # triton.build ran Triton's build module under stand-ins, and where that build failed
        # it ran again after a real `import triton`: the answer reported is that one's
        built = fact(fast, "triton.build", "ok")
        assert fact(fast, "triton.build", "import_path") == ("triton/runtime/build.py only" if built
                                                             else "import triton")
        assert bool(fact(fast, "triton.build", "standin_failed")) == (not built)
        assert fact(full, "triton.build", "import_path") == "import triton"
    if fault != "transformers-without-model":
        assert fact(fast, "kernels.transformers_fast_path", "bindings_from") == "source"
        assert fact(full, "kernels.transformers_fast_path", "bindings_from") == "import"
        # the default path never imports torch for transformers: it joins the other checks' answers
        assert "torch_version" not in next(r for r in fast["results"]
                                           if r["id"] == "kernels.transformers_fast_path")["facts"]
    # what each fault must show, so that the comparison is not between two blind runs
    checks, roots = verdicts(fast)
    expected = {
        "no-driver": ("kernels.fla", "fail"),
        "no-compiler": ("toolchain.c_compiler", "fail"),
        "python-h-hidden": ("toolchain.python_headers", "fail"),
        "triton-missing": ("kernels.fla", "fail"),
        "triton-broken": ("triton.import", "fail"),
        "fla-absent": ("kernels.fla", "skip"),
        "causal-conv1d-no-extension": ("kernels.causal_conv1d", "fail"),
        "transformers-without-model": ("kernels.transformers_fast_path", "skip"),
        "fla-shadowed": ("kernels.fla", "fail"),
    }[fault]
    assert checks[expected[0]][0] == expected[1], checks[expected[0]]
    if fault == "transformers-without-model":
        assert bindings(fast) == {}
    elif fault in ("triton-missing", "triton-broken", "fla-absent", "fla-shadowed"):
        assert bindings(fast)["chunk_gated_delta_rule"] == "reference"
    else:
        assert bindings(fast)["chunk_gated_delta_rule"] == "fla"
    if fault == "causal-conv1d-no-extension":
        assert bindings(fast)["causal_conv1d_fn"] == "reference"
        assert "causal-conv1d-no-extension" in dict(checks["kernels.causal_conv1d"][1])


@pytest.mark.slow
def test_transformers_reason_is_the_exception_it_swallowed(stack_python, clean_env, tmp_path):
    python = overlay_venv(tmp_path / "venv", stack_python, drop=("triton",))
    report = engine.check(python, only=["kernels.transformers_fast_path"], env=clean_env, plugins=False)
    tf = report.result("kernels.transformers_fast_path")
    ref = {b["func_name"]: b for b in tf.facts["bindings"]}["chunk_gated_delta_rule"]
    # the exception kernels.fla's import met (its process imported what `import fla` imports)
    assert ref["reference"] and ref["joined_from"] == "kernels.fla"
    assert ref["reason"]["type"] == "ModuleNotFoundError" and "triton" in ref["reason"]["message"]
    assert tf.findings == () or all(f.code != "transformers-fla-on-cpu" for f in tf.findings)


# --------------------------------------------------------------------------- the shared interpreter

def make(check_id, probe_fn, preload=("xml.dom.minidom",), timeout=20.0, options=None, requires=(), gate=()):
    attrs = dict(id=f"system.{check_id}", title=check_id, layer="system", probe=f"faulty.{probe_fn}",
                 probes_dir=FAULTS, timeout=timeout, preload=tuple(preload), probe_options=dict(options or {}),
                 requires=tuple(requires), gate=tuple(gate), probe_needs=())
    attrs["evaluate"] = lambda self, facts, ctx: ctx.ok(f"pid {facts.get('pid')} parent {facts.get('ppid')}")
    return type(f"C_{check_id}", (Check,), attrs)


def test_forked_probes_stay_isolated_from_each_other(clean_env):
    # different options: two probe runs (the same input would share one: next test)
    classes = [make("ok1", "whoami"), make("ok2", "whoami", options={"n": 2}), make("crash", "segfault"),
               make("hang", "hang", timeout=2.0), make("raise", "raises")]
    start = time.monotonic()
    res = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=clean_env)}
    assert time.monotonic() - start < 60
    ok1, ok2 = res["system.ok1"], res["system.ok2"]
    assert ok1.status is Status.PASS and ok2.status is Status.PASS
    # forked from one interpreter: distinct processes with the same parent, which is not us
    assert ok1.facts["pid"] != ok2.facts["pid"] and ok1.facts["ppid"] == ok2.facts["ppid"] != os.getpid()
    assert ok1.facts["preloaded"] is True
    # the zygote imported with the garbage collector off; each probe runs with it on, as anywhere
    assert ok1.facts["gc_enabled"] is True and ok2.facts["gc_enabled"] is True
    # the zygote's SIGCHLD wakeup (it notices a fork's exit at once) is not inherited by the probe
    assert ok1.facts["sigchld_default"] is True and ok1.facts["wakeup_fd"] == -1
    crash = res["system.crash"]
    assert crash.status is Status.ERROR and crash.failure.reason == "signal" and crash.failure.signal == 11
    hang = res["system.hang"]
    assert hang.status is Status.ERROR and hang.failure.timed_out
    assert res["system.raise"].failure.reason == "probe-exception"
    assert "probe blew up on purpose" in res["system.raise"].failure.detail


def test_checks_whose_probe_gets_the_same_input_share_one_run(clean_env):
    same = [make(f"same{i}", "whoami", preload=()) for i in range(3)]
    other = make("other", "whoami", preload=(), options={"n": 1})
    res = {r.id: r for r in run_checks(same + [other], sys.executable, HOST, {"python": sys.executable},
                                       env=clean_env)}
    assert {res[f"system.same{i}"].facts["pid"] for i in range(3)} == {res["system.same0"].facts["pid"]}
    assert res["system.other"].facts["pid"] != res["system.same0"].facts["pid"]
    assert all(r.status is Status.PASS for r in res.values())


def test_a_probe_starts_on_its_gates_clean_answer_and_the_gate_still_blocks(clean_env, tmp_path):
    """A gated probe starts when its gate's probe answered, while the gate's verdict still
    waits for a slow requirement (how triton.build overlaps import torch); when the gate's
    verdict then fails, the gated check is blocked, whatever its probe said."""
    slow = make("slow", "sleepy", preload=(), options={"seconds": 3})
    gate_ok = make("gate_ok", "whoami", preload=(), requires=("system.slow",))
    gate_bad = make("gate_bad", "whoami", preload=(), options={"n": 1}, requires=("system.slow",))
    gate_bad.evaluate = lambda self, facts, ctx: ctx.verdict("bad", ctx.finding("no-c-compiler", message="bad"))
    after_ok = make("after_ok", "stamp", preload=(), requires=("system.gate_ok",), gate=("system.gate_ok",))
    after_bad = make("after_bad", "stamp", preload=(), options={"n": 1}, requires=("system.gate_bad",),
                     gate=("system.gate_bad",))
    res = {r.id: r for r in run_checks([slow, gate_ok, gate_bad, after_ok, after_bad], sys.executable, HOST,
                                       {"python": sys.executable}, env=clean_env)}
    assert res["system.after_ok"].status is Status.PASS
    # it ran before the slow requirement of its gate finished, not after the gate's verdict
    assert res["system.after_ok"].facts["start"] < res["system.slow"].facts["end"]
    assert res["system.gate_bad"].status is Status.FAIL
    assert res["system.after_bad"].status is Status.BLOCKED and "system.gate_bad" in res["system.after_bad"].summary


def test_the_preloading_interpreter_ends_once_its_probes_answered(clean_env):
    """It is not kept until the run ends: once the last probe that forks from it answered, it
    is ended in the background while the torch-free probes and the verdicts carry on."""
    from stackpeel.runner.zygote import Zygotes
    loaded, slow = make("loaded", "whoami"), make("slow", "sleepy", preload=(), options={"seconds": 3})
    zygotes = Zygotes(sys.executable, ("xml.dom.minidom",), clean_env)
    torch_like = zygotes.loaded
    seen = {}

    def progress(event, cls, result):
        if event == "finish" and cls.id == "system.slow":
            seen["loaded_rc"] = torch_like.proc.poll()

    res = {r.id: r for r in run_checks([loaded, slow], sys.executable, HOST, {"python": sys.executable},
                                       env=clean_env, progress=progress, zygotes=zygotes)}
    assert res["system.loaded"].status is Status.PASS and res["system.slow"].status is Status.PASS
    assert res["system.loaded"].facts["ppid"] == torch_like.proc.pid  # it did fork from it
    assert seen["loaded_rc"] is not None  # already gone while the slow probe still ran
    zygotes.close()  # the bare one was ended in the background at the end of the run: gone now
    assert zygotes.bare.closed and zygotes.bare.proc.poll() is not None and torch_like.closed


def test_a_probe_forked_from_a_starting_interpreter_is_timed_from_when_it_was_asked_for(clean_env, tmp_path):
    """The CLI starts both interpreters before its own steps (engine.start_early). A probe of
    the torch interpreter pays all of its start (it would have imported torch itself); a
    torch-free probe pays what is left of the bare one's start, as its own interpreter would
    have, but not the CLI's steps before it was asked for. Both interpreters start slowly
    here (a sitecustomize that sleeps), and both probes are asked for before they are ready."""
    from stackpeel.runner.zygote import Zygotes
    slow_start = 1.5
    (tmp_path / "sitecustomize.py").write_text(f"import time\ntime.sleep({slow_start})\n")
    env = dict(clean_env, PYTHONPATH=str(tmp_path))
    bare, loaded = make("bare", "stamp", preload=()), make("loaded", "stamp")
    zygotes = Zygotes(sys.executable, ("xml.dom.minidom",), env)
    zygotes.loaded  # noqa: B018 (starts it now, as start_early does)
    cli_steps = 0.8
    time.sleep(cli_steps)
    assert not zygotes.bare.ready.is_set()
    res = {r.id: r for r in run_checks([bare, loaded], sys.executable, HOST, {"python": sys.executable},
                                       env=env, zygotes=zygotes)}
    zygotes.close()
    assert res["system.bare"].status is Status.PASS and res["system.loaded"].status is Status.PASS
    assert res["system.loaded"].duration_s >= slow_start  # the whole start, from before it was asked
    # the bare probe's time left the CLI's steps out; both interpreters took about as long to start
    assert res["system.bare"].duration_s <= res["system.loaded"].duration_s - cli_steps / 2


@pytest.mark.parametrize("source_changed", [False, True])
def test_a_zygote_loads_a_probe_module_as_the_import_system_would(clean_env, tmp_path, source_changed):
    """The interpreters probes fork from load each probe module once: from its .pyc when
    that is current (magic number, the source's mtime and size: what the import system checks),
    else from the source. The answer is the one a plain ``import`` gives in the same state:
    here the .pyc of an older source of the same size and mtime stands in for a current one,
    so that which of the two was used shows in the answer."""
    import py_compile
    from stackpeel.runner.zygote import Zygote
    probes = tmp_path / "probes"
    probes.mkdir()
    mod = probes / "pycprobe.py"
    mod.write_text("def which(inp):\n    return {'v': 'old'}\n")
    py_compile.compile(str(mod), doraise=True)
    st = mod.stat()
    mod.write_text("def which(inp):\n    return {'v': 'new'}\n" + ("# longer\n" if source_changed else ""))
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns))
    plain = subprocess.run([sys.executable, "-c", "import pycprobe; print(pycprobe.which(None)['v'])"],
                           cwd=probes, env=clean_env, capture_output=True, text=True, check=True).stdout.strip()
    assert plain == ("new" if source_changed else "old")
    z = Zygote(sys.executable, (), env=clean_env)
    try:
        answer = z.run_probe("pycprobe.which", {"deps": {}, "options": {}}, 30, probes_dir=probes)
    finally:
        z.close()
    assert answer is not None and answer.facts == {"v": plain}


@pytest.mark.parametrize("prework", ["prework_part", "prework_raises"])
def test_a_checks_prework_runs_torch_free_and_reaches_its_probe(clean_env, prework):
    """A check's ``prework`` runs in the torch-free interpreter while the preload imports; the
    probe (forked from the preloading one) gets its facts as inp["prework"], or nothing when it
    failed, and the check's result is the probe's either way."""
    cls = make("pre", "with_prework")
    cls.prework = prework
    (res,) = run_checks([cls], sys.executable, HOST, {"python": sys.executable}, env=clean_env)
    assert res.status is Status.PASS, res.summary
    got = res.facts["prework"]
    if prework == "prework_raises":
        assert got is None
    else:
        assert got["pid"] != res.facts["pid"] and got["preloaded"] is False  # another process, no preload


@pytest.mark.parametrize("blocked", [False, True])
def test_a_prework_and_its_probe_share_a_folder_the_runner_removes(clean_env, blocked):
    """What the prework leaves in ``inp["scratch"]`` the probe finds (triton.kernel_launch's
    prework builds Triton's helper into the empty cache the launch uses); the folder is gone
    when the run is, also when the probe never ran because its gate failed."""
    gate = make("gate", "raises", preload=())
    cls = make("pre", "with_prework", requires=("system.gate",) if blocked else (),
               gate=("system.gate",) if blocked else ())
    cls.prework = "prework_leaves_a_file"
    res = {r.id: r for r in run_checks([gate, cls], sys.executable, HOST, {"python": sys.executable}, env=clean_env)}
    pre = res["system.pre"]
    if blocked:
        assert pre.status is Status.BLOCKED
        leftovers = [p for p in Path(tempfile.gettempdir()).glob("stackpeel-scratch-*")
                     if (p / "left-by-prework").exists()]
        assert not leftovers
        return
    assert pre.status is Status.PASS, pre.summary
    # (besides hygiene's owner stamp, which lets the next run sweep it after a SIGKILL)
    assert [n for n in pre.facts["in_scratch"] if n != ".owner"] == ["left-by-prework"]
    assert pre.facts["prework"]["scratch"] == pre.facts["scratch"]
    assert not os.path.exists(pre.facts["scratch"])


def test_a_prework_the_probe_module_lacks_is_refused():
    from stackpeel import registry
    cls = make("pre", "with_prework")
    cls.prework = "no_such_function"
    with pytest.raises(registry.RegistryError, match="prework 'no_such_function'"):
        registry.validate([cls])


def test_torch_free_probes_yield_the_cores_to_the_preload_on_a_small_machine(clean_env):
    from stackpeel.runner import scheduler
    loaded, bare = make("loaded", "whoami"), make("bare", "whoami", preload=(), options={"n": 1})
    res = {r.id: r for r in run_checks([loaded, bare], sys.executable, HOST, {"python": sys.executable},
                                       env=clean_env)}
    base = os.nice(0)
    assert res["system.loaded"].facts["nice"] == base
    want = min(19, base + scheduler.TORCH_FREE_NICE) if (os.cpu_count() or 1) <= scheduler.FEW_CORES else base
    assert res["system.bare"].facts["nice"] == want


def test_torch_free_probes_take_turns_on_a_small_machine(clean_env, monkeypatch):
    """With few cores, the torch-free probes run at most ``cores - 1`` at once (the import of
    the preloading interpreter has the other core), each timed from when it got its turn;
    with more cores they all start at once."""
    from stackpeel.runner import scheduler, zygote
    monkeypatch.setattr(zygote, "SLOT_LEASE_S", 30.0)  # a slow machine must not end a turn early here
    classes = [make("loaded", "whoami")] + [make(f"bare{i}", "sleepy", preload=(), options={"seconds": 0.3, "i": i})
                                            for i in range(4)]
    res = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=clean_env)}
    spans = sorted((r.facts["start"], r.facts["end"]) for cid, r in res.items() if cid != "system.loaded")
    assert len(spans) == 4 and all(r.status is Status.PASS for r in res.values())
    most = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    cores = os.cpu_count() or 1
    if cores <= scheduler.FEW_CORES:
        assert most <= max(1, cores - 1), spans
        # the last one's time is its own turn, not the turns it waited for before it
        last = max((r for cid, r in res.items() if cid != "system.loaded"), key=lambda r: r.facts["start"])
        assert last.duration_s < last.facts["end"] - spans[0][0] - 0.3, (last.duration_s, spans)
    else:
        assert most == 4, spans


def test_a_slot_held_past_its_lease_lets_the_next_probe_start():
    """A probe that hangs in its slot (a driver call, a compiler) delays the others by the
    lease at most: the next one gets a slot while the first still holds its own."""
    import threading
    from stackpeel.runner.zygote import Slots
    slots, holding, release, order = Slots(1, lease_s=0.05), threading.Event(), threading.Event(), []

    def hold():
        with slots.take():
            holding.set()
            release.wait(30)
            order.append("first ends")

    first = threading.Thread(target=hold)
    first.start()
    assert holding.wait(10)
    with slots.take() as waited:
        order.append("second starts")
        assert waited >= 0.0
    release.set()
    first.join(30)
    assert order == ["second starts", "first ends"]


@pytest.mark.parametrize("n", [1, 2])
def test_slots_serve_in_the_order_asked_and_never_more_than_n(n):
    import threading
    from stackpeel.runner.zygote import Slots
    slots, lock, state, served = Slots(n, lease_s=30.0), threading.Lock(), {"now": 0, "most": 0}, []
    holders = [slots.take() for _ in range(n)]
    for h in holders:  # both slots taken: whoever asks now queues
        h.__enter__()

    def use(i):
        with slots.take():
            with lock:
                served.append(i)
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1

    threads = []
    for i in range(5):  # each one queued before the next asks
        threads.append(threading.Thread(target=use, args=(i,)))
        threads[-1].start()
        end = time.monotonic() + 10
        while len(slots._queue) < i + 1 and time.monotonic() < end:
            time.sleep(0.005)
    for h in holders:
        h.__exit__(None, None, None)
    for t in threads:
        t.join(30)
    assert 1 <= state["most"] <= n and sorted(served) == [0, 1, 2, 3, 4]
    if n == 1:  # one at a time: the order they were served in is the order they asked in
        assert served == [0, 1, 2, 3, 4]


def test_a_noisy_preload_falls_back_to_fresh_interpreters(clean_env, tmp_path):
    (tmp_path / "noisy_preload.py").write_text("import warnings\nwarnings.warn('preload says something')\n")
    env = dict(clean_env, PYTHONPATH=str(tmp_path))
    classes = [make("ok1", "whoami", preload=("noisy_preload",))]
    (res,) = run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=env)
    assert res.status is Status.PASS
    assert res.facts["preloaded"] is False  # its own interpreter, which never imported the noisy module


@pytest.mark.parametrize("later", ["noisy", "broken", "absent"])
def test_a_later_preload_that_fails_is_left_to_the_forks(clean_env, tmp_path, later):
    """The second preload module is imported once, in the zygote itself (no throwaway child
    first); when it warns or raises, the zygote starts over preloading only the first, so no
    fork inherits a half-imported module, and the probes still fork from it."""
    (tmp_path / "noisy_preload.py").write_text("import warnings\nwarnings.warn('preload says something')\n")
    (tmp_path / "broken_preload.py").write_text("import json\nimport broken_preload_part\n")
    (tmp_path / "broken_preload_part.py").write_text("raise ImportError('half imported')\n")
    env = dict(clean_env, PYTHONPATH=str(tmp_path))
    second = {"noisy": "noisy_preload", "broken": "broken_preload", "absent": "absent_preload"}[later]
    classes = [make("ok1", "loaded_modules", preload=("xml.dom.minidom", second),
                    options={"names": ["xml.dom.minidom", second, "broken_preload_part"]})]
    stats = {}
    (res,) = run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=env, stats=stats)
    assert res.status is Status.PASS, res.summary
    assert res.facts["ppid"] != os.getpid()  # forked from the zygote, not spawned
    assert res.facts["loaded"] == {"xml.dom.minidom": True, second: False, "broken_preload_part": False}
    assert stats["preload"]["imported"] == ["xml.dom.minidom"] and stats["preload"]["problem"] is None


def test_no_preload_switch_spawns_every_probe(clean_env):
    env = dict(clean_env, STACKPEEL_NO_PRELOAD="1")
    (res,) = run_checks([make("ok1", "whoami")], sys.executable, HOST, {"python": sys.executable}, env=env)
    assert res.facts["ppid"] == os.getpid() and res.facts["preloaded"] is False


# --------------------------------------------------------------------------- repeat runs

SMALL = ["system.platform", "toolchain.c_compiler", "toolchain.python_headers", "toolchain.triton_cache"]


def small_run(python, env):
    return engine.check(python, only=SMALL, env=env, plugins=False, reuse=True)


def reused(report):
    return (report.target.get("reused") or {}).get("results", 0)


def all_but_volatile(report):
    """Every result of the run except the one volatile check (free space) is reusable; --only
    also pulls in what SMALL requires, so count the run's own results."""
    return len(report.results) - 1


def same_verdicts(a, b):
    return [(r.id, r.status, r.summary if r.id != "toolchain.triton_cache" else "", [f.code for f in r.findings])
            for r in a.results] == \
           [(r.id, r.status, r.summary if r.id != "toolchain.triton_cache" else "", [f.code for f in r.findings])
            for r in b.results] and a.diagnosis.to_dict() == b.diagnosis.to_dict()


@pytest.fixture
def cache_env(clean_env, tmp_path):
    env = dict(clean_env, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    site = tmp_path / "site"
    (site / "fakedist-1.0.dist-info").mkdir(parents=True)
    (site / "fakedist-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedist\nVersion: 1.0\n")
    env["PYTHONPATH"] = str(site)
    return env


def test_repeat_run_reuses_everything_but_volatile_checks_with_identical_verdicts(stack_python, cache_env):
    first = small_run(stack_python, cache_env)
    second = small_run(stack_python, cache_env)
    assert reused(first) == 0
    assert reused(second) == all_but_volatile(second) >= len(SMALL) - 1
    assert second.target["reused"]["ran"] == ["toolchain.triton_cache"]  # free space is measured again
    assert same_verdicts(first, second)
    entry = next(Path(cache_env["XDG_CACHE_HOME"], "stackpeel").iterdir())
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    assert oct(entry.parent.stat().st_mode & 0o777) == "0o700"


def _change_path_dir(env, tmp_path):
    (Path(env["PATH"].split(os.pathsep)[0]) / "gcc").write_text("#!/bin/sh\nexit 1\n")


def _touch_metadata(env, tmp_path):
    meta = Path(env["PYTHONPATH"]) / "fakedist-1.0.dist-info" / "METADATA"
    st = meta.stat()
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def _set_env(env, tmp_path):
    env["TRITON_CACHE_DIR"] = str(tmp_path / "elsewhere")


def _set_cc(env, tmp_path):
    env["CC"] = "/usr/bin/false"


def _new_ld_dir(env, tmp_path):
    env["LD_LIBRARY_PATH"] = str(tmp_path)


@pytest.mark.parametrize("change", [_change_path_dir, _touch_metadata, _set_env, _set_cc, _new_ld_dir],
                         ids=["compiler-added-to-PATH-dir", "dist-METADATA-touched", "TRITON_CACHE_DIR-set",
                              "CC-set", "LD_LIBRARY_PATH-set"])
def test_each_key_component_invalidates(stack_python, cache_env, tmp_path, change):
    small_run(stack_python, cache_env)
    second = small_run(stack_python, cache_env)
    assert reused(second) == all_but_volatile(second)
    change(cache_env, tmp_path)
    after = small_run(stack_python, cache_env)
    assert reused(after) == 0
    again = small_run(stack_python, cache_env)
    assert reused(again) == all_but_volatile(again)  # and the new state is cached in turn


def test_dependents_of_a_volatile_check_stand_only_if_its_verdict_came_out_the_same(clean_env):
    vol = make("vol", "healthy")
    vol.volatile = True
    dep = make("dep", "whoami")
    dep.requires = ("system.vol",)
    classes = [vol, dep]
    first = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=clean_env)}
    # the same verdict: the dependent's earlier result stands, the volatile one runs again
    again = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=clean_env,
                                         cached=first)}
    assert again["system.dep"] is first["system.dep"] and again["system.vol"] is not first["system.vol"]
    # a different verdict of the volatile requirement: the dependent runs again
    changed = dict(first, **{"system.vol": dataclasses.replace(first["system.vol"], status=Status.FAIL)})
    rerun = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=clean_env,
                                         cached=changed)}
    assert rerun["system.dep"] is not first["system.dep"]
    assert rerun["system.dep"].facts["pid"] != first["system.dep"].facts["pid"]


def test_fresh_ignores_the_cache_and_a_shared_cache_is_never_read(stack_python, cache_env):
    small_run(stack_python, cache_env)
    fresh = engine.check(stack_python, only=SMALL, env=cache_env, plugins=False, reuse=True, fresh=True)
    assert reused(fresh) == 0
    d = cache.cache_dir(cache_env)
    d.chmod(0o770)  # writable by the group: someone else could have planted results
    assert reused(small_run(stack_python, cache_env)) == 0


def test_cli_repeat_run_reports_reuse_and_fresh(stack_python, cache_env):
    argv = [sys.executable, "-m", "stackpeel", "check", "--python", stack_python, "--format", "json"]
    for k in SMALL:
        argv += ["--only", k]
    first = json.loads(subprocess.run(argv, capture_output=True, text=True, env=cache_env).stdout)
    second = json.loads(subprocess.run(argv, capture_output=True, text=True, env=cache_env).stdout)
    third = json.loads(subprocess.run(argv + ["--fresh"], capture_output=True, text=True, env=cache_env).stdout)
    assert "reused" not in first["target"] and second["target"]["reused"]["results"] == len(second["results"]) - 1
    assert "reused" not in third["target"]
    assert verdicts(first) == verdicts(second) == verdicts(third)


def test_env_values_never_reach_the_cache(stack_python, cache_env):
    cache_env["HF_TOKEN"] = "hf_SECRETSECRETSECRETSECRET1234"
    small_run(stack_python, cache_env)
    entry = next(cache.cache_dir(cache_env).iterdir())
    assert "SECRETSECRET" not in entry.read_text()


# --------------------------------------------------------------------------- the torch import first

def test_builtin_preload_is_what_the_builtin_checks_preload():
    from stackpeel import registry
    from stackpeel.runner.scheduler import preload_of
    assert preload_of(registry.load(plugins=False), {}) == engine.BUILTIN_PRELOAD


def test_the_torch_interpreter_starts_before_the_registry_and_only_when_it_can_pay(stack_python, cache_env):
    """start_early (what the CLI calls before it loads the registry) starts the interpreter
    that imports torch; check() forks the torch probes from that very one, and closes it.
    A repeat run that may reuse stored results starts only the bare interpreter early (for
    the checks that always run again), and when every torch probe is reused the torch one
    never starts at all; --only starts neither early."""
    early = engine.start_early(stack_python, env=cache_env, reuse=True)
    assert early is not None and early.preload == engine.BUILTIN_PRELOAD and early.loaded is not None
    pid = early.loaded.proc.pid
    first = engine.check(stack_python, env=cache_env, plugins=False, reuse=True, zygotes=early)
    assert first.target["preload"]["forked"] is True
    forked = [r for r in first.results if r.id == "torch.cuda"][0]
    assert forked.status is not Status.ERROR
    assert early.bare.closed and early.loaded.closed and early.loaded.proc.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

    early = engine.start_early(stack_python, env=cache_env, reuse=True)  # an entry is stored now
    assert early is not None and early.bare.proc.poll() is None and early.loaded is None
    assert engine.start_early(stack_python, env=cache_env, reuse=True, only=["toolchain"]) is None
    again = engine.check(stack_python, env=cache_env, plugins=False, reuse=True, zygotes=early)
    assert set(again.target["reused"]["ran"]) and early.bare.next_id > 0  # the volatile checks forked from it
    assert early.loaded is None or early.loaded is early.bare
    from stackpeel import registry
    torch_checks = [c.id for c in registry.load(plugins=False) if c.preload and c.probe]
    assert not set(torch_checks) & set(again.target["reused"]["ran"])  # every torch probe reused...
    assert "preload" not in again.target                                # ...so torch was never imported
    assert verdicts_of(again) == verdicts_of(first)


def verdicts_of(report):
    return [(r.id, r.status, [f.code for f in r.findings]) for r in report.results]


def test_check_parses_without_importing_the_other_commands():
    """`stackpeel check` builds only the built-in subcommands' parsers: the other commands'
    modules (explain, run, fleet, fix, ...) are not imported before the torch import starts."""
    code = ("import sys; from stackpeel import cli; cli.build_parser('check'); "
            "print(sorted(m for m in ('stackpeel.unmask.cli', 'stackpeel.fleet.cli', 'stackpeel.fix', "
            "'stackpeel.export', 'stackpeel.explain.cli') if m in sys.modules)); "
            "p = cli.build_parser(); print(sorted(p._subparsers._group_actions[0].choices))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[]"
    assert {"check", "explain", "run", "fleet", "fix"} <= set(eval(out[1]))


def test_the_fast_scan_of_builtin_probe_modules_finds_every_function_the_parser_finds():
    import ast
    from stackpeel import registry
    from stackpeel.runner.child import PROBES_DIR
    for path in sorted(Path(PROBES_DIR).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parsed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert parsed <= registry._defined_functions(str(path)), path.name
