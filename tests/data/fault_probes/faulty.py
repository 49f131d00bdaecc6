"""Probes that misbehave on purpose, for the runner's fault suite."""

import ctypes
import gc
import os
import subprocess
import sys
import time


def healthy(inp):
    return {"value": 42, "deps_seen": sorted(inp.get("deps", {}))}


def hang(inp):
    while True:
        time.sleep(1)


def hang_ignoring_sigterm(inp):
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(1)


def segfault(inp):
    ctypes.string_at(0)


def abort(inp):
    os.abort()


def exit_nonzero(inp):
    os._exit(3)


def sys_exit(inp):
    sys.exit(4)


def raises(inp):
    raise RuntimeError("probe blew up on purpose")


def junk_answer(inp):
    out = sys.argv[6]
    with open(out, "w") as f:
        f.write("\x00\x01 this is not json {")
    os._exit(0)


def junk_stdout(inp):
    sys.stdout.write("Internal Triton PTX codegen error\n" + "\x1b[31mgarbage\x1b[0m\n" * 100)
    return {"printed": True}


def megabytes(inp):
    chunk = "x" * 1023 + "\n"
    for _ in range(20 * 1024):  # 20 MiB on stdout
        sys.stdout.write(chunk)
    sys.stderr.write("the end of stderr\n")
    return {"printed_mib": 20}


def not_a_dict(inp):
    return [1, 2, 3]


def unserialisable(inp):
    return {"obj": object()}


def leaves_grandchild(inp):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    return {"grandchild": p.pid}


def echo_env(inp):
    """Leaks every environment value into facts and stderr, as careless libraries do."""
    sys.stderr.write("env dump: " + " ".join("%s=%s" % kv for kv in sorted(os.environ.items())) + "\n")
    return {"env": dict(os.environ), "cmdline": "curl -H 'Authorization: Bearer %s'" % os.environ.get("HF_TOKEN", "")}


def echo_env_and_crash(inp):
    sys.stderr.write("token is %s\n" % os.environ.get("WANDB_API_KEY"))
    sys.stderr.flush()
    os.abort()


def sleepy(inp):
    start = time.time()
    time.sleep(float((inp.get("options") or {}).get("seconds", 1.5)))
    return {"start": start, "end": time.time()}


def stamp(inp):
    return {"start": time.time(), "deps_seen": sorted(inp.get("deps", {}))}


def whoami(inp):
    """Which process answered, and whether it started with a preloaded module (zygote tests)."""
    import signal
    wakeup_fd = signal.set_wakeup_fd(-1)
    return {"pid": os.getpid(), "ppid": os.getppid(), "nice": os.nice(0), "gc_enabled": gc.isenabled(),
            "sigchld_default": signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL, "wakeup_fd": wakeup_fd,
            "preloaded": any(m in sys.modules for m in ("xml.dom.minidom", "noisy_preload"))}


def loaded_modules(inp):
    """Which of the named modules this process has in sys.modules (zygote preload tests)."""
    names = (inp.get("options") or {}).get("names") or []
    return {"pid": os.getpid(), "ppid": os.getppid(), "loaded": {n: n in sys.modules for n in names}}


def prework_part(inp):
    """A check's prework (scheduler tests): which process read it, and whether it had the preload."""
    return {"pid": os.getpid(), "preloaded": "xml.dom.minidom" in sys.modules}


def prework_raises(inp):
    raise RuntimeError("prework blew up on purpose")


def with_prework(inp):
    """The probe of a check with a prework: what it was handed."""
    scratch = inp.get("scratch")
    return {"pid": os.getpid(), "ppid": os.getppid(), "prework": inp.get("prework"), "scratch": scratch,
            "in_scratch": sorted(os.listdir(scratch)) if scratch and os.path.isdir(scratch) else None}


def prework_leaves_a_file(inp):
    """A prework that leaves something in the folder it shares with the probe."""
    with open(os.path.join(inp["scratch"], "left-by-prework"), "w") as f:
        f.write(str(os.getpid()))
    return {"pid": os.getpid(), "scratch": inp["scratch"]}
