"""gpu36: the critical path's probe is forked first when the preload ends (runner/zygote.py).

``triton.kernel_launch`` (``Check.start_first``) has the most work after ``import torch`` of the
probes that wait for it (a CUDA context, a compile on an empty cache, a launch: 0.9-1.3 s on an
H100, against 0.5 s for ``torch.cuda``): when the preloading interpreter becomes ready, its
request goes out before the others', so that its fork is the first one made and the first to
initialise CUDA. Real child processes here, as in tests/test_speed.py: a preloading
interpreter that starts slowly (a sitecustomize that sleeps), several probes asked for while it
starts, the one marked first asked for last.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from stackpeel import registry
from stackpeel.checks.base import Check
from stackpeel.model import Status
from stackpeel.runner import run_checks
from stackpeel.runner import zygote as zmod
from stackpeel.runner.zygote import Zygote, Zygotes

FAULTS = str(Path(__file__).parent / "data" / "fault_probes")
HOST = {"pkg_manager": "apt", "is_root": True}
SLOW_START = 1.0


def _slow_env(clean_env, tmp_path):
    (tmp_path / "sitecustomize.py").write_text(f"import time\ntime.sleep({SLOW_START})\n")
    return dict(clean_env, PYTHONPATH=str(tmp_path))


def _ask(z, first, n, out, key):
    answer = z.run_probe("faulty.whoami", {"deps": {}, "options": {"n": n}}, 30, probes_dir=FAULTS, first=first)
    out[key] = answer


def test_the_probe_asked_first_is_forked_first_when_the_preload_ends(clean_env, tmp_path):
    z = Zygote(sys.executable, ("xml.dom.minidom",), env=_slow_env(clean_env, tmp_path))
    try:
        out = {}
        others = [threading.Thread(target=_ask, args=(z, False, i, out, f"other{i}")) for i in range(4)]
        for t in others:
            t.start()
        time.sleep(0.3)  # the others wait for the preload before the first one is even asked for
        first = threading.Thread(target=_ask, args=(z, True, 99, out, "first"))
        first.start()
        assert not z.ready.is_set()
        for t in others + [first]:
            t.join(60)
        assert set(out) == {"first", "other0", "other1", "other2", "other3"}
        pids = {k: a.facts["pid"] for k, a in out.items()}
        assert all(a.failure is None and a.facts["preloaded"] for a in out.values())
        # the zygote forks in the order the requests arrive: the first one's pid is the lowest
        assert pids["first"] == min(pids.values()), pids
        assert z.firsts == 0  # its request went out: nobody waits for it any more
    finally:
        z.close()


def test_a_first_probe_that_never_sends_holds_nobody_back(clean_env, tmp_path, monkeypatch):
    """A probe marked first whose zygote cannot serve it (here: the preload fails) gives its
    turn back at once, and the counter the others wait on returns to zero."""
    z = Zygote(sys.executable, ("no_such_module_gpu36",), env=clean_env)
    try:
        out = {}
        _ask(z, True, 1, out, "first")
        assert out["first"] is None  # the caller spawns it instead
        assert z.firsts == 0
    finally:
        z.close()


def test_the_others_wait_for_a_first_probe_at_most_briefly(clean_env, monkeypatch):
    """The wait behind a first probe is bounded (FIRST_WAIT_S), whatever holds that probe up."""
    monkeypatch.setattr(zmod, "FIRST_WAIT_S", 0.3)
    z = Zygote(sys.executable, (), env=clean_env)
    try:
        assert z.usable()
        with z.changed:
            z.firsts = 1  # a first probe asked for but stuck before its request
        out = {}
        t0 = time.monotonic()
        _ask(z, False, 1, out, "other")
        assert out["other"] is not None and out["other"].failure is None
        assert 0.25 <= time.monotonic() - t0 < 10
    finally:
        with z.changed:
            z.firsts = 0
        z.close()


def test_run_checks_passes_start_first_and_the_verdicts_are_unchanged(clean_env, tmp_path):
    env = _slow_env(clean_env, tmp_path)

    def make(cid, first, n):
        attrs = dict(id=f"system.{cid}", title=cid, layer="system", probe="faulty.whoami", probes_dir=FAULTS,
                     timeout=30.0, preload=("xml.dom.minidom",), probe_options={"n": n}, probe_needs=(),
                     start_first=first)
        attrs["evaluate"] = lambda self, facts, ctx: ctx.ok(f"pid {facts.get('pid')}")
        return type(f"C_{cid}", (Check,), attrs)

    classes = [make(f"other{i}", False, i) for i in range(3)] + [make("first", True, 9)]
    zygotes = Zygotes(sys.executable, ("xml.dom.minidom",), env)
    res = {r.id: r for r in run_checks(classes, sys.executable, HOST, {"python": sys.executable}, env=env,
                                       zygotes=zygotes)}
    zygotes.close()
    assert all(r.status is Status.PASS for r in res.values())
    pids = {cid: r.facts["pid"] for cid, r in res.items()}
    assert pids["system.first"] == min(pids.values()), pids


def test_only_the_kernel_launch_is_marked_first():
    marked = sorted(c.id for c in registry.load(plugins=False) if c.start_first)
    assert marked == ["triton.kernel_launch"]
    # and it forks from the preloading interpreter, where the order matters
    launch = {c.id: c for c in registry.load(plugins=False)}["triton.kernel_launch"]
    assert launch.preload and launch.probe


@pytest.mark.parametrize("first", [False, True])
def test_a_first_probe_on_a_ready_zygote_runs_as_any_other(clean_env, first):
    z = Zygote(sys.executable, (), env=clean_env)
    try:
        out = {}
        _ask(z, first, 1, out, "p")
        assert out["p"].failure is None and out["p"].facts["pid"] > 0
        assert z.firsts == 0
    finally:
        z.close()
