"""A real local Ray cluster: ``ray start --head`` and ``ray start --address`` workers, each a
separate set of processes with its own environment (a worker started with another PATH runs
its tasks with that PATH), started and stopped by the tests (recipe: shared/design/ENGINES.md).

Each ``ray start`` runs in a session of its own, so all the daemons it leaves behind (GCS,
raylet, agents, workers) share its process group: ``stop()`` ends exactly those groups (SIGTERM,
then SIGKILL for what is left), never Ray processes it did not start, and removes its
temporary directory (short, under /tmp: Ray's unix socket paths must stay under 108 bytes).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from fleet_rig import free_port


def ray_exe() -> Optional[str]:
    exe = Path(sys.executable).parent / "ray"
    return str(exe) if exe.exists() else shutil.which("ray")


def can_run() -> Optional[str]:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed in this environment (pip install 'stackpeel[ray]')"
    if not ray_exe():
        return "the `ray` command is not installed beside this Python"
    return None



def _pgid_alive(pgid: int) -> bool:
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
            except (OSError, IndexError, ValueError):
                continue
    return False


@dataclass
class RayRig:
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sp-ray-")))
    port: int = field(default_factory=free_port)
    groups: List[int] = field(default_factory=list)
    #: resource tag -> Ray node id, filled by start()
    node_ids: Dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, nodes: Dict[str, Dict[str, str]]) -> "RayRig":
        """``nodes``: tag -> extra environment; the first is the head. Each node gets a custom
        resource named by its tag, which is how the tests find its node id."""
        for i, (tag, env) in enumerate(nodes.items()):
            argv = [ray_exe(), "start", "--num-cpus=1", "--object-store-memory=80000000",
                    f"--resources={json.dumps({tag: 1})}", f"--temp-dir={self.workdir}", "--disable-usage-stats",
                    "--node-ip-address=127.0.0.1"]
            argv += ["--head", f"--port={self.port}", "--include-dashboard=false"] if i == 0 else \
                [f"--address={self.address}"]
            log = open(self.workdir / f"start-{tag}.log", "wb")
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=dict(os.environ, **env))
            self.groups.append(proc.pid)
            if proc.wait(120) != 0:
                raise RuntimeError(f"ray start for {tag} failed:\n"
                                   + (self.workdir / f"start-{tag}.log").read_text(errors="replace")[-3000:])
        probe = ("import json, ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); "
                 "print(json.dumps({k: n['NodeID'] for n in ray.nodes() if n['Alive'] "
                 "for k in n['Resources'] if k in %r})); ray.shutdown()") % (self.address, list(nodes))
        end = time.monotonic() + 60
        while time.monotonic() < end:  # until every node has registered with the head
            out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
            if out.returncode == 0 and out.stdout.strip():
                self.node_ids = json.loads(out.stdout.strip().splitlines()[-1])
                if len(self.node_ids) == len(nodes):
                    return self
            time.sleep(1)
        raise RuntimeError(f"the Ray nodes did not all register: {self.node_ids}")

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in self.groups:
                try:
                    os.killpg(pgid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + 8
            while time.monotonic() < end and any(_pgid_alive(g) for g in self.groups):
                time.sleep(0.2)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def leftovers(self) -> List[int]:
        return [g for g in self.groups if _pgid_alive(g)]
