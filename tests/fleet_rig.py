"""A real SSH fleet on one machine: one network namespace per host on a private bridge, a
real ``sshd`` in each with its own configuration and environment (``SetEnv``), started and
stopped by the tests (recipe: shared/design/ENGINES.md). Every address is inside namespaces
the rig creates; it removes them, and every process it started, when it stops.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

SSHD = "/usr/sbin/sshd"


def can_run() -> Optional[str]:
    """None when the rig can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ip", "nsenter", "unshare", "ssh-keygen"):
        if not shutil.which(tool):
            return f"needs {tool}"
    if not os.path.exists(SSHD):
        return "needs openssh-server (apt-get install openssh-server)"
    probe = subprocess.run(["ip", "netns", "add", f"sp-probe{os.getpid()}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot create network namespaces: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", f"sp-probe{os.getpid()}"], capture_output=True)
    return None


def record_evidence(name: str, fleet_json: str) -> None:
    """With STACKPEEL_EVIDENCE_DIR set, write a fleet run's JSON as a person reads it (``fleet
    --from``) to that directory: how docs/validation's fleet output is recorded."""
    out = os.environ.get("STACKPEEL_EVIDENCE_DIR")
    if not out:
        return
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--from", "/dev/stdin"], input=fleet_json,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(root / "src")))
    Path(out, name).write_text(proc.stdout)


def free_port() -> int:
    """A TCP port nothing listens on now (the rigs' daemons take theirs per run)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


@dataclass
class Host:
    name: str
    addr: str
    env: Dict[str, str]
    proc: Optional[subprocess.Popen] = None


def _tag_in_use(tag: int) -> bool:
    net, netns = Path("/sys/class/net"), Path("/run/netns")
    if (net / f"spbr{tag}").exists() or any(net.glob(f"sp{tag}[vw]*")):
        return True
    return netns.is_dir() and any(netns.glob(f"sp{tag}-*"))


def _free_tag() -> int:
    """A tag no bridge, veth or namespace on this machine uses now. Per rig, not per process:
    a namespace is destroyed asynchronously after ``ip netns del``, so its veth can outlive
    the rig before it by a moment, and the next rig of the same test run must not reuse it."""
    start = os.getpid() % 200
    for step in range(200):
        tag = 20 + (start + 37 * _free_tag.count + step) % 200  # type: ignore[attr-defined]
        if not _tag_in_use(tag):
            _free_tag.count += 1  # type: ignore[attr-defined]
            return tag
    raise RuntimeError("no free rig tag: 200 fleet rigs' bridges or namespaces are left on this machine")


_free_tag.count = 0  # type: ignore[attr-defined]


@dataclass
class Rig:
    workdir: Path
    #: per rig, so two rigs on one machine never share a bridge, subnet or namespace name
    tag: int = field(default_factory=_free_tag)
    hosts: List[Host] = field(default_factory=list)
    key: Optional[Path] = None
    _hang: Optional[socket.socket] = None

    @property
    def subnet(self) -> str:
        return f"10.231.{self.tag}"

    @property
    def bridge(self) -> str:
        return f"spbr{self.tag}"

    def ns(self, name: str) -> str:
        return f"sp{self.tag}-{name}"

    def start(self, envs: Dict[str, Dict[str, str]]) -> "Rig":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.key = self.workdir / "client_key"
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key))
        _sh("ip", "link", "add", self.bridge, "type", "bridge")
        _sh("ip", "addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        _sh("ip", "link", "set", self.bridge, "up")
        for i, (name, env) in enumerate(envs.items(), start=11):
            host = Host(name, f"{self.subnet}.{i}", env)
            self.hosts.append(host)
            ns = self.ns(name)
            _sh("ip", "netns", "add", ns)
            _sh("ip", "link", "add", f"sp{self.tag}v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            _sh("ip", "link", "set", f"sp{self.tag}v{i}", "master", self.bridge, "up")
            _sh("ip", "-n", ns, "addr", "add", f"{host.addr}/24", "dev", "eth0")
            _sh("ip", "-n", ns, "link", "set", "eth0", "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            d = self.workdir / name
            d.mkdir()
            _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
            shutil.copy(str(self.key) + ".pub", d / "authorized_keys")
            setenv = " ".join(f'{k}="{v}"' for k, v in env.items())
            (d / "sshd_config").write_text(
                f"Port 22\nListenAddress {host.addr}\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
                f"AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                + (f"SetEnv {setenv}\n" if setenv else ""))
            host.proc = subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{ns}", "unshare", "-m", "--propagation", "private", "sh", "-c",
                 f"mount -t tmpfs -o mode=755 x /run && mkdir -m 755 /run/sshd && exec {SSHD} -D -e -f {d}/sshd_config"],
                stdout=subprocess.DEVNULL, stderr=open(d / "sshd.log", "wb"), start_new_session=True)
        for host in self.hosts:
            self._wait_port(host.addr, 22)
        return self

    @staticmethod
    def _wait_port(addr: str, port: int, timeout: float = 15.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with socket.create_connection((addr, port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"sshd on {addr} did not start")

    def add_isolated_interface(self, host: str, ifname: str, cidr: str) -> None:
        """Give ``host`` a second interface, up and addressed, on a network no other host
        reaches (a veth whose other end is on no bridge; removed with the namespace)."""
        ns, outer = self.ns(host), f"sp{self.tag}w{host[:6]}"
        _sh("ip", "link", "add", outer, "type", "veth", "peer", "name", ifname, "netns", ns)
        _sh("ip", "-n", ns, "addr", "add", cidr, "dev", ifname)
        _sh("ip", "-n", ns, "link", "set", ifname, "up")
        _sh("ip", "link", "set", outer, "up")

    def hanging_login(self, port: int = 2299) -> str:
        """An address whose TCP port accepts and then never says a word (a hung sshd)."""
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((f"{self.subnet}.1", port))
        srv.listen(8)
        self._hang = srv
        held: List[socket.socket] = []

        def accept() -> None:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                held.append(conn)  # keep it open, silent

        threading.Thread(target=accept, daemon=True).start()
        return f"{self.subnet}.1:{port}"

    def unreachable(self) -> str:
        return f"{self.subnet}.99"  # on the bridge, no host answers ARP

    def stop(self) -> None:
        if self._hang is not None:
            self._hang.close()
        for host in self.hosts:
            if host.proc is not None and host.proc.poll() is None:
                try:
                    os.killpg(host.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    host.proc.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(host.proc.pid, signal.SIGKILL)
                    host.proc.wait()
        for i, host in enumerate(self.hosts, start=11):
            # deleting the outer end of a veth removes both ends now; the namespace itself
            # is destroyed asynchronously once its last process is gone
            subprocess.run(["ip", "link", "del", f"sp{self.tag}v{i}"], capture_output=True)
            subprocess.run(["ip", "link", "del", f"sp{self.tag}w{host.name[:6]}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", self.ns(host.name)], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
