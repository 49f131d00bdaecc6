"""Multi-GPU facts: /dev/shm, the memlock limit, peer-to-peer copies and a real all-reduce.

Standard library only; Python 3.8+. torch is imported only inside *worker* processes
that this probe starts with the same interpreter (``sys.executable this_file worker
<config.json>``), never in the probe itself: a worker that hangs in a CUDA copy or an
NCCL collective is killed at its deadline and becomes evidence (its last stage, its
log tail, its NCCL WARN lines) instead of taking the whole probe with it.

Every wait is bounded. Workers stay in the probe's process group, so if the runner
kills the probe at the check's timeout, the workers go with it.
"""

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

try:
    import _stackpeel_probe__common as common
except ImportError:  # run as a worker script: the helpers are not loaded and not needed
    common = None

#: environment variables that change how NCCL moves data between GPUs of one host
NCCL_ENV_KEYS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE",
                 "NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG", "NCCL_CUMEM_ENABLE", "NCCL_ALGO", "NCCL_PROTO")

#: set in the environment of NCCL workers unless the user set them. NVLink multicast
#: (NVLS) can take a shared host's GPUs out of service; a health probe must not use it.
NCCL_WORKER_DEFAULTS = (("NCCL_NVLS_ENABLE", "0"), ("NCCL_DEBUG", "WARN"))

LOG_TAIL = 3000
MAX_WARN_LINES = 20
#: NCCL's own diagnosis lines (the exception text is recorded apart, from the worker)
_WARN_RE = re.compile(r"NCCL (WARN|ERROR)")


# --------------------------------------------------------------------------- helpers

def _clip(text, limit):
    if common is not None:
        return common.clip(text, limit)
    return text if len(text) <= limit else text[-limit:]


def _tail_file(path, limit=LOG_TAIL):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read().decode("utf-8", "replace")
    except (OSError, IOError):
        return ""
    if size > limit:
        data = "[... %d bytes cut ...]" % (size - limit) + data
    return data


def _warn_lines(path, limit=MAX_WARN_LINES):
    """Lines of a worker log that carry NCCL's own diagnosis (``NCCL WARN`` with NCCL_DEBUG=WARN)."""
    out = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip()
                if _WARN_RE.search(line) and line not in out:
                    out.append(line[:500])
                    if len(out) >= limit:
                        break
    except (OSError, IOError):
        pass
    return out


def _write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, default=repr)
    os.replace(tmp, path)


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, IOError, ValueError):
        return None


def _exc(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:4000],
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]}


def nccl_env(environ=None):
    """NCCL_* variables in effect, and a few that matter for multi-GPU runs."""
    environ = os.environ if environ is None else environ
    keys = set(k for k in environ if k.startswith("NCCL_"))
    keys.update(k for k in ("CUDA_VISIBLE_DEVICES", "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT",
                            "TORCH_SYMM_MEM_DISABLE_MULTICAST") if k in environ)
    return dict((k, environ[k]) for k in sorted(keys))


def worker_env(backend, environ=None):
    """The environment NCCL workers get, and which variables stackpeel set in it."""
    env = dict(os.environ if environ is None else environ)
    added = {}
    if backend == "nccl":
        for key, value in NCCL_WORKER_DEFAULTS:
            if key not in env:
                env[key] = value
                added[key] = value
    env["PYTHONUNBUFFERED"] = "1"
    return env, added


def _visible_gpus(inp):
    """GPU count from the torch.cuda check's facts (None when unknown)."""
    tc = (inp.get("deps") or {}).get("torch.cuda") or {}
    count = tc.get("device_count")
    return count if isinstance(count, int) else None


def _spawn(role, cfg, workdir, name, env):
    cfg = dict(cfg, role=role)
    cfg_path = os.path.join(workdir, name + ".cfg.json")
    _write_json(cfg_path, cfg)
    log_path = os.path.join(workdir, name + ".log")
    log = open(log_path, "wb")
    try:
        proc = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), "worker", cfg_path],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    finally:
        log.close()
    return proc, log_path


def _supervise(procs, deadline, grace_s):
    """Wait for every worker, never past ``deadline``. Once one fails, the others get
    ``grace_s`` to report their own error, then are killed. Returns, per worker,
    (returncode, why it was killed or None)."""
    n = len(procs)
    rcs = [None] * n
    killed = [None] * n
    first_failure = None
    while True:
        for i, p in enumerate(procs):
            if rcs[i] is None:
                rc = p.poll()
                if rc is not None:
                    rcs[i] = rc
                    if rc != 0 and first_failure is None:
                        first_failure = time.monotonic()
        if all(rc is not None for rc in rcs):
            break
        now = time.monotonic()
        reason = None
        if now >= deadline:
            reason = "timeout"
        elif first_failure is not None and now - first_failure >= grace_s:
            reason = "peer-failed"
        if reason:
            for i, p in enumerate(procs):
                if rcs[i] is None:
                    killed[i] = reason
                    try:
                        p.kill()
                    except OSError:
                        pass
            for i, p in enumerate(procs):
                if rcs[i] is None:
                    try:
                        rcs[i] = p.wait(timeout=10)
                    except subprocess.TimeoutExpired:  # unkillable (D state in the driver)
                        rcs[i] = None
            break
        time.sleep(0.05)
    return rcs, killed


def _cleanup(workdir, rcs):
    """Remove the scratch folder, unless a worker could not be reaped (it may still write there)."""
    if all(rc is not None for rc in rcs):
        shutil.rmtree(workdir, ignore_errors=True)


def _signal_name(rc):
    if rc is None or rc >= 0:
        return None
    try:
        import signal
        return signal.Signals(-rc).name
    except (ValueError, AttributeError):
        return "signal %d" % -rc


# --------------------------------------------------------------------------- /dev/shm

def _shm_mount(path):
    """The mount that serves ``path`` (the last matching line of mountinfo wins)."""
    found = None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 4 and parts[4] == path:
                    sep = parts.index("-") if "-" in parts else None
                    if sep is not None and len(parts) > sep + 3:
                        found = {"fstype": parts[sep + 1], "source": parts[sep + 2], "options": parts[sep + 3]}
    except (OSError, IOError):
        pass
    return found


def _container_hint():
    if os.environ.get("KUBERNETES_SERVICE_HOST") or os.path.isdir("/var/run/secrets/kubernetes.io/serviceaccount"):
        return "kubernetes"
    if os.path.exists("/run/.containerenv"):
        return "podman"
    if os.path.exists("/.dockerenv"):
        return "docker"
    return None


def shm(inp):
    opts = inp.get("options") or {}
    path = opts.get("path") or "/dev/shm"
    facts = {"path": path, "exists": os.path.isdir(path), "container": _container_hint(), "mount": _shm_mount(path)}
    if not facts["exists"]:
        facts.update(size_bytes=None, free_bytes=None, writable=False)
        return facts
    try:
        st = os.statvfs(path)
        facts["size_bytes"] = st.f_blocks * st.f_frsize
        facts["free_bytes"] = st.f_bavail * st.f_frsize
    except OSError as exc:
        facts.update(size_bytes=None, free_bytes=None, statvfs_error="%s: %s" % (type(exc).__name__, exc))
    facts["writable"] = os.access(path, os.W_OK | os.X_OK)
    # biggest files: segments left behind by killed jobs fill /dev/shm just like a small one
    entries = []
    try:
        for name in os.listdir(path):
            try:
                st = os.lstat(os.path.join(path, name))
            except OSError:
                continue
            entries.append((getattr(st, "st_blocks", 0) * 512, name))
    except OSError:
        pass
    entries.sort(reverse=True)
    facts["entries"] = len(entries)
    facts["largest"] = [{"name": n, "bytes": b} for b, n in entries[:5]]
    facts["nccl_segments"] = sum(1 for _, n in entries if n.startswith("nccl-"))
    return facts


# --------------------------------------------------------------------------- memlock

def _cap_ipc_lock():
    """Whether this process holds CAP_IPC_LOCK (bit 14), which lifts RLIMIT_MEMLOCK."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) & (1 << 14))
    except (OSError, IOError, ValueError, IndexError):
        pass
    return None


def memlock(inp):
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    inf = resource.RLIM_INFINITY
    try:
        rdma = sorted(n for n in os.listdir("/dev/infiniband") if n.startswith("uverbs"))
    except OSError:
        rdma = []
    return {
        "soft_bytes": None if soft == inf else soft,
        "hard_bytes": None if hard == inf else hard,
        "soft_unlimited": soft == inf,
        "hard_unlimited": hard == inf,
        "cap_ipc_lock": _cap_ipc_lock(),
        "rdma_devices": rdma,
    }


# --------------------------------------------------------------------------- open files

def open_files(inp):
    """RLIMIT_NOFILE (``ulimit -n``) of this process, inherited from the job that runs stackpeel,
    and how many descriptors this probe holds (what any Python process starts with)."""
    try:
        held = len(os.listdir("/proc/self/fd"))
    except OSError:
        held = None
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return {"soft": None, "hard": None, "open_now": held}
    inf = resource.RLIM_INFINITY
    out = {
        "soft": None if soft == inf else soft,
        "hard": None if hard == inf else hard,
        "open_now": held,
    }
    if soft != inf and soft < START_TEST_BELOW:
        out["start"] = _start_under_this_limit()
    return out


#: under this soft limit the probe starts the interpreter once more, under the limit it now has (the
#: user's): stackpeel identifies the target under its own raised limit (tmp26), and an interpreter
#: whose startup (site, .pth files, sitecustomize) needs more descriptors than the user's limit
#: leaves would otherwise go unseen. A plain CPython 3.11 starts at 5 and fails at 4.
START_TEST_BELOW = 64


def _tail_text(text, limit):
    text = text.strip()
    return text if len(text) <= limit else "[...]" + text[-limit:]


def _start_under_this_limit():
    """``python -c pass`` as the user starts it (site and .pth files included), under this process's
    limit: {"rc", "stderr", "error"} (error: this process could not even start one). CPython skips a
    .pth line or a sitecustomize that raises with only a message and exits 0: its stderr tells."""
    try:
        proc = subprocess.run([sys.executable, "-c", "pass"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=60)
        return {"rc": proc.returncode, "stderr": _tail_text(proc.stderr.decode("utf-8", "replace"), 2000),
                "error": None}
    except Exception as exc:  # EMFILE making the pipes, a timeout
        return {"rc": None, "stderr": "", "error": "%s: %s" % (type(exc).__name__, exc)}


# --------------------------------------------------------------------------- p2p

def _iommu_facts():
    try:
        groups = len(os.listdir("/sys/kernel/iommu_groups"))
    except OSError:
        groups = None
    try:
        with open("/proc/cmdline") as f:
            cmdline = f.read()
        flags = [w for w in cmdline.split() if "iommu" in w.lower() or w.startswith("pcie_acs")]
    except (OSError, IOError):
        flags = None
    return {"iommu_groups": groups, "iommu_cmdline": flags}


def p2p(inp):
    opts = inp.get("options") or {}
    count = opts.get("device_count") or _visible_gpus(inp)
    facts = {"device_count": count}
    if count is None or count < 2:
        facts["skipped"] = ("%s visible GPU%s; peer access needs at least 2" % (count, "" if count == 1 else "s")
                            if count is not None else "GPU count unknown (no torch.cuda facts)")
        return facts
    smi = common.which("nvidia-smi") if common else None
    facts["topology"] = common.run([smi, "topo", "-m"], timeout=15) if smi else None
    facts.update(_iommu_facts())
    timeout = float(opts.get("timeout_s", 60))
    workdir = tempfile.mkdtemp(prefix="stackpeel-p2p-")
    result = os.path.join(workdir, "p2p.json")
    env, _ = worker_env("p2p")
    cfg = {"result": result, "elements": int(opts.get("elements", 1 << 24)), "device_count": count}
    start = time.monotonic()
    proc, log = _spawn("p2p", cfg, workdir, "p2p", env)
    rcs, killed = _supervise([proc], start + timeout, 0)
    facts["duration_s"] = round(time.monotonic() - start, 3)
    state = _read_json(result) or {}
    facts.update(
        worker={"exit_code": rcs[0], "signal": _signal_name(rcs[0]), "killed": killed[0], "timeout_s": timeout,
                "stage": state.get("stage"), "log_tail": _tail_file(log)},
        access=state.get("access"),
        pairs=state.get("pairs") or [],
        error=state.get("error"),
        torch=state.get("torch"),
        device_names=state.get("device_names"),
    )
    _cleanup(workdir, rcs)
    return facts


def _worker_p2p(cfg, save):
    import torch
    n = torch.cuda.device_count()
    save(stage="imported", torch=torch.__version__, device_count_seen=n)
    if n < 2:
        raise RuntimeError("torch.cuda.device_count() is %d in the copy worker; peer copies need 2 GPUs" % n)
    save(device_names=[torch.cuda.get_device_name(i) for i in range(n)])
    access = [[None if i == j else bool(torch.cuda.can_device_access_peer(i, j)) for j in range(n)]
              for i in range(n)]
    pairs = []
    save(stage="access", access=access, pairs=pairs)
    elements = cfg["elements"]
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            pair = {"src": i, "dst": j, "bytes": elements * 4}
            pairs.append(pair)
            save(stage="copy %d->%d" % (i, j))
            src = torch.arange(elements, device="cuda:%d" % i, dtype=torch.int32)
            ref = torch.arange(elements, device="cuda:%d" % j, dtype=torch.int32)
            torch.cuda.synchronize(i)
            torch.cuda.synchronize(j)
            dst = src.to("cuda:%d" % j)  # warm-up, and the copy whose values are checked
            torch.cuda.synchronize(j)
            t0 = time.perf_counter()
            again = src.to("cuda:%d" % j)
            torch.cuda.synchronize(j)
            dt = time.perf_counter() - t0
            back = dst.to("cuda:%d" % i)
            torch.cuda.synchronize(i)
            pair["mismatches_forward"] = int((dst != ref).sum().item()) + int((again != ref).sum().item())
            pair["mismatches_back"] = int((back != src).sum().item())
            pair["ok"] = pair["mismatches_forward"] == 0 and pair["mismatches_back"] == 0
            pair["gb_per_s"] = round(elements * 4 / dt / 1e9, 2) if dt > 0 else None
            if not pair["ok"]:
                pair["sample"] = {"expected": ref[:4].tolist(), "got": dst[:4].tolist()}
            del src, ref, dst, again, back
            torch.cuda.empty_cache()
            save(pairs=pairs)
    save(stage="done", ok=True)


# --------------------------------------------------------------------------- all-reduce

def nccl(inp):
    """A real all-reduce: one worker process per rank, each contributing rank+1.

    Options: ``backend`` ("nccl"; "gloo" runs the same harness on CPU), ``world_size``
    (default: the visible GPU count for nccl), ``timeout_s`` (whole run), ``grace_s``
    (how long the other ranks may keep going once one failed), ``elements`` (size of
    the second, larger all-reduce).
    """
    opts = inp.get("options") or {}
    backend = opts.get("backend") or "nccl"
    facts = {"backend": backend, "nccl_env": nccl_env()}
    world = opts.get("world_size")
    if world is None:
        world = _visible_gpus(inp) if backend == "nccl" else 2
    facts["world_size"] = world
    if world is None or world < 2:
        facts["skipped"] = ("%s visible GPU%s; an all-reduce needs at least 2" % (world, "" if world == 1 else "s")
                            if world is not None else "GPU count unknown (no torch.cuda facts)")
        return facts
    timeout = float(opts.get("timeout_s", 150))
    grace = float(opts.get("grace_s", 10))
    env, added = worker_env(backend)
    facts["env_set_by_stackpeel"] = added
    facts["expected"] = world * (world + 1) / 2.0
    workdir = tempfile.mkdtemp(prefix="stackpeel-allreduce-")
    init = "file://" + os.path.join(workdir, "store")
    base = {"backend": backend, "world_size": world, "init_method": init,
            "elements": int(opts.get("elements", 1 << 22)), "timeout_s": max(5.0, timeout - 5)}
    start = time.monotonic()
    procs, logs, results = [], [], []
    for rank in range(world):
        results.append(os.path.join(workdir, "rank%d.json" % rank))
        proc, log = _spawn("allreduce", dict(base, rank=rank, result=results[-1]), workdir, "rank%d" % rank, env)
        procs.append(proc)
        logs.append(log)
    rcs, killed = _supervise(procs, start + timeout, grace)
    facts["duration_s"] = round(time.monotonic() - start, 3)
    facts["timeout_s"] = timeout
    ranks = []
    for rank in range(world):
        state = _read_json(results[rank]) or {}
        ranks.append({
            "rank": rank,
            "exit_code": rcs[rank],
            "signal": _signal_name(rcs[rank]),
            "killed": killed[rank],
            "stage": state.get("stage", "not started"),
            "ok": bool(state.get("ok")),
            "value": state.get("value"),
            "big_min": state.get("big_min"),
            "big_max": state.get("big_max"),
            "device": state.get("device_name"),
            "env_seen": state.get("env_seen"),
            "error": state.get("error"),
            "nccl_warnings": _warn_lines(logs[rank]),
            "log_tail": _tail_file(logs[rank]),
        })
        for key in ("nccl_version", "torch"):
            if state.get(key) and not facts.get(key):
                facts[key] = state[key]
    facts["ranks"] = ranks
    values = [r["value"] for r in ranks]
    facts["sum"] = values[0] if values and all(v == values[0] for v in values) else None
    facts["ok"] = all(r["ok"] and r["value"] == facts["expected"] and r["big_min"] == facts["expected"]
                      and r["big_max"] == facts["expected"] for r in ranks)
    _cleanup(workdir, rcs)
    return facts


def _worker_allreduce(cfg, save):
    import datetime
    import inspect
    rank, world, backend = cfg["rank"], cfg["world_size"], cfg["backend"]
    import torch
    import torch.distributed as dist
    save(stage="imported", torch=torch.__version__)
    device = None
    if backend == "nccl":
        try:
            save(nccl_version=".".join(str(p) for p in torch.cuda.nccl.version()))
        except Exception as exc:  # recorded, not fatal: the collective is the real test
            save(nccl_version_error="%s: %s" % (type(exc).__name__, exc))
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
        save(device_name=torch.cuda.get_device_name(rank))
    save(stage="init_process_group")
    kwargs = dict(backend=backend, init_method=cfg["init_method"], rank=rank, world_size=world,
                  timeout=datetime.timedelta(seconds=cfg["timeout_s"]))
    if device is not None and "device_id" in inspect.signature(dist.init_process_group).parameters:
        kwargs["device_id"] = device  # build the NCCL communicator now, so setup errors show at this stage
    dist.init_process_group(**kwargs)
    save(stage="all_reduce")
    mine_value = float(rank + 1)
    where = device if device is not None else "cpu"
    t = torch.full((1,), mine_value, dtype=torch.float32, device=where)
    dist.all_reduce(t)
    big = torch.full((cfg["elements"],), mine_value, dtype=torch.float32, device=where)
    dist.all_reduce(big)
    if device is not None:
        torch.cuda.synchronize(device)
    save(stage="destroy_process_group", value=t.item(), big_min=big.min().item(), big_max=big.max().item())
    dist.destroy_process_group()
    save(stage="done", ok=True)


# --------------------------------------------------------------------------- worker entry

def _worker_main(cfg_path):
    with open(cfg_path) as f:
        cfg = json.load(f)
    state = {"pid": os.getpid(), "stage": "start", "ok": False,
             "env_seen": dict((k, os.environ.get(k)) for k in ("NCCL_NVLS_ENABLE", "NCCL_DEBUG"))}
    if "rank" in cfg:
        state["rank"] = cfg["rank"]

    def save(**kw):
        state.update(kw)
        _write_json(cfg["result"], state)

    save()
    rc = 0
    try:
        {"p2p": _worker_p2p, "allreduce": _worker_allreduce}[cfg["role"]](cfg, save)
    except BaseException as exc:  # recorded for the probe; the exit status says it failed
        state["ok"] = False
        save(error=_exc(exc))
        traceback.print_exc()
        rc = 1
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    os._exit(rc)  # no atexit hooks or lingering NCCL threads may hang the worker


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "worker":
    _worker_main(sys.argv[2])
