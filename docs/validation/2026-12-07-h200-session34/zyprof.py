"""gpu34: where a torch-free probe's time goes in a whole `stackpeel check` (issue 9: cuda.driver_api).

Runs `stackpeel check --fresh --no-plugins --python T --format json` in this process, with the
runner's Zygote wrapped (nothing changed in what it does) to record, for every probe forked:
when it was asked for, how long it waited for its zygote to be ready, when the zygote reported
the fork (pid), when it reported the exit, and the duration the report gives it; and for each
zygote its start and ready times. Each round runs in a fresh interpreter, as the CLI would.
Usage: python zyprof.py T OUT.json [ROUNDS]
"""
import contextlib
import io
import json
import shutil
import sys
import threading
import time

T0 = time.monotonic()
from stackpeel import cli  # noqa: E402
from stackpeel.runner import zygote as Z  # noqa: E402


class Timed(dict):
    def __init__(self):
        super().__init__()
        self.at = {}

    def __setitem__(self, k, v):
        self.at[k] = time.monotonic()
        super().__setitem__(k, v)


class Stdin:
    def __init__(self, raw, log):
        self.raw, self.log = raw, log

    def write(self, data):
        try:
            req = json.loads(data.decode())
            self.log[req["id"]] = (req["argv"][2] + "." + req["argv"][3], time.monotonic())
        except Exception:
            pass
        return self.raw.write(data)

    def __getattr__(self, name):
        return getattr(self.raw, name)


ZYGOTES = []
_init = Z.Zygote.__init__


def init(self, *a, **k):
    _init(self, *a, **k)
    self.pids, self.exits, self.sent = Timed(), Timed(), {}
    if self.proc is not None:
        self.proc.stdin = Stdin(self.proc.stdin, self.sent)
    ZYGOTES.append(self)


Z.Zygote.__init__ = init
_usable = Z.Zygote.usable
WAITS = {}


def usable(self):
    t = time.monotonic()
    r = _usable(self)
    WAITS.setdefault(threading.get_ident(), []).append(time.monotonic() - t)
    return r


Z.Zygote.usable = usable
_run = Z.Zygote._run_probe
ASKED = []


def run_probe(self, probe, inp, timeout, probes_dir):
    t = time.monotonic()
    WAITS[threading.get_ident()] = []
    ans = _run(self, probe, inp, timeout, probes_dir)
    ASKED.append({"probe": probe, "zygote": "loaded" if self.preload else "bare", "asked": t,
                  "ready_wait": sum(WAITS.get(threading.get_ident(), [])), "answered": time.monotonic(),
                  "duration_s": getattr(ans, "duration_s", None)})
    return ans


Z.Zygote._run_probe = run_probe

# inside each fork: when the bootstrap began, when the probe function began and ended, when the
# answer was renamed into place, and just before os._exit (CLOCK_MONOTONIC: one clock for all processes)
TDIR = "/tmp/zyprof-t-%d" % __import__("os").getpid()
_boot = Z.BOOTSTRAP
assert 'res = {"ok": True, "facts": getattr(_load(mod), fn)(inp)}' in _boot
assert '    os.replace(out_path + ".tmp", out_path)\n' in _boot and _boot.rstrip().endswith("os._exit(0)")
_boot = "import time as _zt\n_zp = [_zt.monotonic()]\n" + _boot
_boot = _boot.replace('res = {"ok": True, "facts": getattr(_load(mod), fn)(inp)}',
                      '_zp.append(_zt.monotonic()); res = {"ok": True, "facts": getattr(_load(mod), fn)(inp)}; '
                      '_zp.append(_zt.monotonic())')
_boot = _boot.replace('    os.replace(out_path + ".tmp", out_path)\n',
                      '    os.replace(out_path + ".tmp", out_path)\n    _zp.append(_zt.monotonic())\n')
_boot = _boot.rstrip()[:-len("os._exit(0)")] + (
    "try:\n    _zp.append(_zt.monotonic()); open(%r + '/%%d' %% os.getpid(), 'w').write(repr(_zp))\n"
    "except Exception:\n    pass\nos._exit(0)\n" % TDIR)
Z.BOOTSTRAP = _boot


def one(python):
    global T0
    import os
    os.makedirs(TDIR, exist_ok=True)
    ZYGOTES.clear(); ASKED.clear()
    T0 = time.monotonic()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(["check", "--fresh", "--no-plugins", "--python", python, "--format", "json"])
    end = time.monotonic() - T0
    report = json.loads(buf.getvalue())
    steps = {r["id"]: (r.get("facts") or {}).get("seconds") for r in report["results"]}
    dur = {r["id"]: r["duration_s"] for r in report["results"]}
    zs = []
    for z in ZYGOTES:
        zs.append({"preload": list(z.preload), "started": z.started - T0, "import_s": z.import_s})
    probes = []
    inside = {}
    for name in os.listdir(TDIR):
        with open(os.path.join(TDIR, name)) as f:
            inside[int(name)] = [round(t - T0, 4) for t in eval(f.read())]
    for z in ZYGOTES:
        by_rid = {rid: (name, at) for rid, (name, at) in z.sent.items()}
        for rid, (name, at) in sorted(by_rid.items()):
            pid = z.pids.get(rid)
            probes.append({"probe": name, "zygote": "loaded" if z.preload else "bare", "rid": rid,
                           "sent": round(at - T0, 4),
                           "forked": round(z.pids.at[rid] - T0, 4) if rid in z.pids.at else None,
                           "exited": round(z.exits.at[pid] - T0, 4) if pid in z.exits.at else None,
                           "inside": inside.get(pid)})
    # cuda_driver.driver_api alone, three times, forked from a bare zygote with nothing else running
    # (as bench/check_bench.py measures it), with the same timestamps
    from stackpeel import registry
    from stackpeel.runner.scheduler import probe_inputs
    cls = {c.id: c for c in registry.load(plugins=False)}["cuda.driver_api"]
    facts = {r["id"]: r["facts"] for r in report["results"]}
    z = Z.Zygote(os.path.abspath(python), (), None)
    alone = []
    try:
        if z.usable():
            for _ in range(3):
                for f in os.listdir(TDIR):
                    os.unlink(os.path.join(TDIR, f))
                inp = {"deps": {r: facts.get(r, {}) for r in probe_inputs(cls)}, "options": dict(cls.probe_options),
                       "check": cls.id, "timeout_s": cls.timeout, "mode": "default"}
                t = time.monotonic()
                ans = z.run_probe(cls.probe, inp, cls.timeout, probes_dir=cls.probes_dir)
                rid = max(z.pids)
                pid = z.pids[rid]
                ins = os.listdir(TDIR)
                with open(os.path.join(TDIR, ins[0])) as f:
                    times = eval(f.read())
                alone.append({"asked": 0.0, "forked": round(z.pids.at[rid] - t, 4),
                              "inside": [round(x - t, 4) for x in times],
                              "exited": round(z.exits.at[pid] - t, 4), "duration_s": ans.duration_s,
                              "steps": (ans.facts or {}).get("seconds")})
    finally:
        z.close()
    shutil.rmtree(TDIR, ignore_errors=True)
    for a in ASKED:
        a["asked"] = round(a["asked"] - T0, 4); a["answered"] = round(a["answered"] - T0, 4)
        a["ready_wait"] = round(a["ready_wait"], 4)
    return {"rc": rc, "wall": round(end, 3), "zygotes": zs, "sent": probes, "asked": ASKED[:],
            "durations": dur, "driver_api_steps": steps.get("cuda.driver_api"), "alone": alone}


def summary(run):
    print("run rc %s wall %.2f s; zygotes: %s" % (run["rc"], run["wall"], ", ".join(
        "%s started %.3f ready after %s s" % (z["preload"] or "bare", z["started"], z["import_s"]) for z in run["zygotes"])))
    bare = [p for p in run["sent"] if p["zygote"] == "bare"]
    print("  bare zygote: %d forks; first sent %.3f, last sent %.3f" % (len(bare), bare[0]["sent"] if bare else -1,
                                                                     bare[-1]["sent"] if bare else -1))
    order = sorted(run["asked"], key=lambda a: a["asked"])
    for a in order[:12] + [a for a in order[12:] if "cuda_driver" in a["probe"] or "nvml" in a["probe"]]:
        s = next((p for p in run["sent"] if p["probe"] == a["probe"]), {})
        print("  %-40s %-6s asked %.3f ready-wait %.3f sent %s forked %s exited %s answered %.3f duration %.3f" % (
            a["probe"], a["zygote"], a["asked"], a["ready_wait"], s.get("sent"), s.get("forked"), s.get("exited"),
            a["answered"], a["duration_s"] or -1))
    print("  cuda.driver_api duration %.3f, its steps %s" % (run["durations"].get("cuda.driver_api", -1), run["driver_api_steps"]))
    print("  inside each fork (s after the run's start): bootstrap began, probe began, probe ended, answer in place, "
          "before os._exit; then the exit reported")
    for p in run["sent"]:
        if p["zygote"] == "bare" and (p["probe"] in ("cuda_driver.driver_api", "gpu.nvml", "fabric.nvlink_fabric",
                                                     "triton_layer.triton_import", "config.versions")):
            i = p.get("inside") or []
            print("  %-32s forked %s inside %s exited %s" % (p["probe"], p["forked"], i, p["exited"]))
            if len(i) == 5 and p["exited"]:
                print("  %-32s fork->boot %.3f boot->probe %.3f probe %.3f probe->answer %.3f answer->exit-call %.3f "
                      "exit-call->exit-reported %.3f" % ("", i[0] - p["forked"], i[1] - i[0], i[2] - i[1], i[3] - i[2],
                                                         i[4] - i[3], p["exited"] - i[4]))
    for a in run["alone"]:
        i = a["inside"]
        if len(i) == 5:
            print("  driver_api alone: duration %.3f forked %.3f fork->boot %.3f boot->probe %.3f probe %.3f probe->answer %.3f "
                  "answer->exit-call %.3f exit-call->exit-reported %.3f steps %s" % (
                      a["duration_s"], a["forked"], i[0] - a["forked"], i[1] - i[0], i[2] - i[1], i[3] - i[2],
                      i[4] - i[3], a["exited"] - i[4], a["steps"]))


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        with open(sys.argv[3], "w") as f:
            json.dump(one(sys.argv[2]), f)
        sys.exit(0)
    import os
    import subprocess
    python, out = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    runs = []
    for i in range(rounds):
        part = "%s.%d" % (out, i)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--one", python, part], check=True)
        with open(part) as f:
            runs.append(json.load(f))
        os.unlink(part)
        summary(runs[-1])
    with open(out, "w") as f:
        json.dump(runs, f, indent=1)
