"""One rank of ``stackpeel fleet --collective``, run by a node's target interpreter as a script:
``python collective.py '{"master_addr": ..., "master_port": ..., "rank": ..., "world_size": ...,
"backend": "gloo", "timeout": 30}'``. Prints one JSON document.

Facts first, without torch: the node's interfaces and their IPv4 addresses, the route the
kernel takes to the master (the source address and its interface), the interface gloo would
bind (GLOO_SOCKET_IFNAME's names, else the address the hostname resolves to, as torch's
ProcessGroupGloo does), NCCL_SOCKET_IFNAME as set, and whether a TCP connection to
MASTER_ADDR:PORT opens (ranks other than 0 retry until rank 0's store listens). Then the real
thing: ``torch.distributed`` init over ``tcp://MASTER:PORT`` and an all-reduce whose sum every
rank checks. Standard library only until torch is imported; Python 3.8+.
"""

import datetime
import json
import os
import socket
import struct
import sys
import threading
import time
import traceback

SIOCGIFADDR = 0x8915


def interfaces():
    """name -> IPv4 address (None: the interface has none), of this network namespace
    (if_nameindex asks the kernel; /sys/class/net shows the namespace sysfs was mounted in)."""
    try:
        names = sorted(n for _, n in socket.if_nameindex())
    except OSError:
        names = sorted(os.listdir("/sys/class/net"))
    out = {}
    for name in names:
        try:
            import fcntl

            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                raw = fcntl.ioctl(s.fileno(), SIOCGIFADDR, struct.pack("256s", name[:15].encode()))
            out[name] = socket.inet_ntoa(raw[20:24])
        except (OSError, ImportError):
            out[name] = None
    return out


def _iface_of(addr, ifaces):
    if addr is None:
        return None
    if addr.startswith("127."):
        return next((n for n, a in ifaces.items() if a and a.startswith("127.")), "lo")
    return next((n for n, a in ifaces.items() if a == addr), None)


def route_to(addr, port, ifaces):
    """The source address and interface the kernel picks to reach ``addr`` (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((addr, port))
            src = s.getsockname()[0]
    except OSError as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}
    return {"source": src, "interface": _iface_of(src, ifaces)}


def gloo_binding(ifaces, environ):
    """Where gloo binds: each GLOO_SOCKET_IFNAME name's address, else the hostname's."""
    value = environ.get("GLOO_SOCKET_IFNAME")
    if value is not None:
        names = [n.strip() for n in value.split(",") if n.strip()]
        return {"source": "GLOO_SOCKET_IFNAME", "value": value,
                "interfaces": [{"name": n, "exists": n in ifaces, "address": ifaces.get(n)} for n in names]}
    host = socket.gethostname()
    try:
        addr = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except OSError as exc:
        return {"source": "hostname", "hostname": host, "error": "%s: %s" % (type(exc).__name__, exc)}
    return {"source": "hostname", "hostname": host, "address": addr, "interface": _iface_of(addr, ifaces)}


def reach(addr, port, deadline):
    """Open a TCP connection to the rendezvous, retrying until ``deadline``."""
    attempts, last = 0, None
    start = time.monotonic()
    while True:
        attempts += 1
        try:
            socket.create_connection((addr, port), timeout=2).close()
            return {"ok": True, "attempts": attempts, "seconds": round(time.monotonic() - start, 3)}
        except OSError as exc:
            last = "%s: %s" % (type(exc).__name__, exc)
        if time.monotonic() >= deadline:
            return {"ok": False, "attempts": attempts, "error": last, "seconds": round(time.monotonic() - start, 3)}
        time.sleep(0.3)


def allreduce(spec):
    start = time.monotonic()
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # no torch in this interpreter: a fact, not a crash
        return {"ok": False, "stage": "import", "error": "%s: %s" % (type(exc).__name__, exc)}
    rank, world = int(spec["rank"]), int(spec["world_size"])
    out = {"torch": getattr(torch, "__version__", None), "backend": spec.get("backend", "gloo")}
    stage = "init_process_group"
    try:
        dist.init_process_group(out["backend"], init_method="tcp://%s:%d" % (spec["master_addr"], spec["master_port"]),
                                rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=float(spec.get("timeout", 30))))
        stage = "all_reduce"
        device = "cuda:0" if out["backend"] == "nccl" else "cpu"
        t = torch.full((8,), float(rank + 1), device=device)
        dist.all_reduce(t)
        got = sorted(set(float(x) for x in t.cpu().tolist()))
        expected = world * (world + 1) / 2.0
        out.update(ok=got == [expected], expected=expected, got=got)
        stage = "destroy_process_group"
        dist.destroy_process_group()
    except Exception as exc:
        out.update(ok=False, stage=stage, error="%s: %s" % (type(exc).__name__, str(exc).strip()[-1500:]),
                   traceback=traceback.format_exc()[-3000:])
    out["seconds"] = round(time.monotonic() - start, 3)
    return out


def main(argv):
    spec = json.loads(argv[1])
    timeout = float(spec.get("timeout", 30))
    ifaces = interfaces()
    master = spec["master_addr"]
    try:
        master_ip = socket.gethostbyname(master)
    except OSError as exc:
        master_ip = None
        resolve_error = "%s: %s" % (type(exc).__name__, exc)
    else:
        resolve_error = None
    env = {k: v for k, v in os.environ.items()
           if k in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "TP_SOCKET_IFNAME")}
    facts = {
        "hostname": socket.gethostname(), "rank": spec["rank"], "world_size": spec["world_size"],
        "master": {"addr": master, "ip": master_ip, "port": spec["master_port"], "error": resolve_error},
        "interfaces": ifaces, "env": env,
        "route": route_to(master_ip, int(spec["master_port"]), ifaces) if master_ip else {"error": resolve_error},
        "gloo": gloo_binding(ifaces, os.environ),
        "python": sys.executable,
    }
    if int(spec["rank"]) == 0:
        facts["rendezvous"] = {"ok": True, "host": True, "local": master_ip in ifaces.values() if master_ip else False}
    elif master_ip:
        # rank 0 opens the store only once torch is imported: on a loaded node that takes seconds
        facts["rendezvous"] = reach(master_ip, int(spec["master_port"]), time.monotonic() + timeout)
    else:
        facts["rendezvous"] = {"ok": False, "error": resolve_error}
    # gloo's connect retries can outlive the process group's timeout: a watchdog bounds the rank
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=allreduce(spec)), daemon=True)
    worker.start()
    worker.join(timeout + 10)
    facts["allreduce"] = box.get("result") or {
        "ok": False, "stage": "init_process_group or all_reduce",
        "error": "no result within %g s (the process group's timeout is %g s)" % (timeout + 10, timeout)}
    sys.stdout.write(json.dumps(facts) + "\n")
    sys.stdout.flush()
    os._exit(0)  # a rank still stuck in gloo's connect must not hold the process


if __name__ == "__main__":
    sys.exit(main(sys.argv))
