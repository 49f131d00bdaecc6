"""A real Slurm cluster on one machine: Debian's ``slurmctld`` and one ``slurmd`` per node
(``slurmd -N nodeK``, each on its own port), authenticated by a real ``munged`` with a key
made for the run, started and stopped by the tests (recipe: shared/design/ENGINES.md).

A node can be given its own file system view: its slurmd runs in a private mount namespace
(``unshare -m``) where chosen files are hidden by bind-mounting ``/dev/null`` over them, so
every task Slurm starts on that node sees, for example, no C compiler: the node's image lost
it. Everything runs under a fresh ``/tmp/sp-slurm-*`` directory (munged refuses
group/world-writable or untraversable parents, so not under pytest's 0700 tmp dirs); ports
are picked free per run; ``stop()`` ends every process the rig started, by its PID, and
removes the directory.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from fleet_rig import free_port

DAEMONS = ("slurmctld", "slurmd", "srun", "sinfo", "munged", "mungekey")


def can_run() -> Optional[str]:
    """None when the rig can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (slurmd runs tasks as the submitting user; munged as user munge)"
    for tool in DAEMONS + ("unshare", "runuser"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            return f"needs {tool}: apt-get install slurm-wlm munge"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "needs the munge user (apt-get install munge)"
    return None



def _exe(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


@dataclass
class SlurmRig:
    nodes: Sequence[str] = ("node1", "node2", "node3")
    #: node -> files to hide from every task on it (bind-mounted over with /dev/null)
    hide: Dict[str, Sequence[str]] = field(default_factory=dict)
    #: node -> environment variables every task on it gets (a TaskProlog prints them, as a
    #: site's prolog would for a node with other hardware)
    env_of: Dict[str, Dict[str, str]] = field(default_factory=dict)
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sp-slurm-")))
    procs: List[subprocess.Popen] = field(default_factory=list)
    partition: str = "debug"

    @property
    def conf(self) -> Path:
        return self.workdir / "slurm.conf"

    @property
    def env(self) -> Dict[str, str]:
        """The environment a user of this cluster has (srun, sinfo read SLURM_CONF)."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def start(self, timeout: float = 60.0) -> "SlurmRig":
        d = self.workdir
        d.chmod(0o755)
        munge = d / "munge"
        munge.mkdir(mode=0o755)
        uid = pwd.getpwnam("munge")
        subprocess.run([_exe("mungekey"), "-c", "-k", str(munge / "munge.key")], check=True, capture_output=True)
        for p in (munge, munge / "munge.key"):
            os.chown(p, uid.pw_uid, uid.pw_gid)
        (munge / "munge.key").chmod(0o600)
        sock = munge / "munge.socket.2"
        self._spawn(["runuser", "-u", "munge", "--", _exe("munged"), "-F", "-S", str(sock), "--key-file",
                     str(munge / "munge.key"), "--pid-file", str(munge / "munged.pid"), "--seed-file",
                     str(munge / "seed"), "--log-file", str(munge / "munged.log")], d / "munged.out")
        self._wait(lambda: sock.exists(), timeout, "munged did not create its socket")
        for sub in ("state", "spool", "log"):
            (d / sub).mkdir()
        prolog = d / "task_prolog"
        cases = "".join(f"  {n}) " + "; ".join(f"echo {shlex_quote(f'export {k}={v}')}" for k, v in env.items())
                        + " ;;\n" for n, env in self.env_of.items())
        prolog.write_text(f'#!/bin/sh\ncase "$SLURMD_NODENAME" in\n{cases}esac\n')
        prolog.chmod(0o755)
        ctld_port = free_port()
        ports = {n: free_port() for n in self.nodes}
        host = socket.gethostname()
        lines = [
            "ClusterName=stackpeel", "SlurmctldHost=localhost", f"SlurmctldPort={ctld_port}", "SlurmUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={sock}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU", "SchedulerType=sched/builtin",
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none", f"TaskProlog={prolog}", "ReturnToService=2", "SlurmdTimeout=60", "InactiveLimit=0", "KillWait=5",
            f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log", f"SlurmdLogFile={d}/log/slurmd-%n.log",
        ]
        for n in self.nodes:
            lines.append(f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={ports[n]} CPUs=1 State=UNKNOWN")
        lines.append(f"PartitionName={self.partition} Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE "
                     "State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        self._spawn([_exe("slurmctld"), "-D", "-i", "-f", str(self.conf)], d / "log" / "slurmctld.out")
        for n in self.nodes:
            argv = [_exe("slurmd"), "-D", "-N", n, "-f", str(self.conf)]
            hidden = list(self.hide.get(n, ()))
            if hidden:  # a private mount namespace: these files are /dev/null for this node's tasks
                binds = " && ".join(f"mount --bind /dev/null {shlex_quote(p)}" for p in hidden)
                argv = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                        f"{binds} && exec {' '.join(shlex_quote(a) for a in argv)}"]
            self._spawn(argv, d / "log" / f"slurmd-{n}.out")
        self._wait(self._all_idle, timeout, "the slurmd nodes did not become idle")
        return self

    def _spawn(self, argv: List[str], log: Path) -> None:
        self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=open(log, "wb"),
                                           stderr=subprocess.STDOUT, start_new_session=True, env=self.env))

    def _all_idle(self) -> bool:
        for p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"{p.args[0]} exited ({p.returncode}); logs in {self.workdir}/log:\n"
                                   + self.logs())
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, env=self.env,
                             timeout=20)
        states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
        return out.returncode == 0 and all(states.get(n) == "idle" for n in self.nodes)

    def logs(self) -> str:
        out = []
        for f in sorted((self.workdir / "log").glob("*")):
            out.append(f"--- {f.name}\n" + f.read_text(errors="replace")[-1500:])
        return "\n".join(out)

    @staticmethod
    def _wait(ok, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if ok():
                return
            time.sleep(0.3)
        raise RuntimeError(what)

    def stop(self) -> None:
        for p in reversed(self.procs):  # slurmd first, then slurmctld, then munged
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def shlex_quote(s: str) -> str:
    import shlex
    return shlex.quote(s)
