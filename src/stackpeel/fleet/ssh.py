"""The SSH transport, on asyncssh: every host at once up to ``concurrency``, each within
``timeout`` seconds from connect to report, with the user's ``~/.ssh/config`` (Host patterns,
User, Port, IdentityFile, ProxyJump), agent and known hosts, as ``ssh`` would use them.

A host that refuses or cannot be reached is ``unreachable``; one that accepts the TCP
connection but never completes the login or never answers is ``timeout``; one that answers
without a report is ``stackpeel-failed`` with its stderr. Nothing is left running on a node
when its connection closes: the remote shell's trap removes the unpacked bundle, and
asyncssh closing the channel hangs up the remote command.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import FAILED, TIMEOUT, UNREACHABLE, NodeOutcome, outcome_of_run

Progress = Callable[[NodeOutcome, int, int], None]


@dataclass(frozen=True)
class SshOptions:
    username: Optional[str] = None
    port: Optional[int] = None
    identity: Sequence[str] = ()
    known_hosts: Optional[str] = None  # path; "none" disables host key checking (test rigs only)
    config: Sequence[str] = ()  # extra ssh_config files (default: ~/.ssh/config as ssh reads it)
    jump: Optional[str] = None  # ProxyJump host, overriding the config
    extra: Dict[str, Any] = field(default_factory=dict)


def hosts_from_ssh_config(patterns: Sequence[str], path: Optional[str] = None) -> List[str]:
    """Host aliases in an ssh_config that match any of ``patterns`` (shell-style, e.g. ``gpu-*``).

    Only concrete aliases (no wildcards) are listed: ``Host gpu-01 gpu-02`` gives both."""
    path = path or os.path.expanduser("~/.ssh/config")
    names: List[str] = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                words = line.strip().split()
                if len(words) >= 2 and words[0].lower() == "host":
                    for name in words[1:]:
                        if not any(c in name for c in "*?!") and name not in names:
                            names.append(name)
    except OSError:
        return []
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def hosts_from_file(path: str) -> List[str]:
    """One host per line; blank lines and ``#`` comments ignored."""
    with open(path, encoding="utf-8") as f:
        return [ln.split("#", 1)[0].strip() for ln in f if ln.split("#", 1)[0].strip()]


def _split_host(spec: str) -> Dict[str, Any]:
    """``user@host:port`` (each part optional but the host) into asyncssh's keywords."""
    out: Dict[str, Any] = {}
    if "@" in spec:
        out["username"], spec = spec.split("@", 1)
    if spec.startswith("["):  # [v6addr]:port
        host, _, rest = spec[1:].partition("]")
        if rest.startswith(":"):
            out["port"] = int(rest[1:])
    elif spec.count(":") == 1:
        host, port = spec.split(":")
        out["port"] = int(port)
    else:
        host = spec
    out["host"] = host
    return out


def _connect_kw(spec: str, opts: SshOptions) -> Tuple[str, Dict[str, Any]]:
    kw = _split_host(spec)
    host = kw.pop("host")
    conn_kw: Dict[str, Any] = dict(opts.extra)
    if opts.username and "username" not in kw:
        conn_kw["username"] = opts.username
    if opts.port and "port" not in kw:
        conn_kw["port"] = opts.port
    conn_kw.update(kw)
    if opts.identity:
        conn_kw["client_keys"] = list(opts.identity)
    if opts.known_hosts is not None:
        conn_kw["known_hosts"] = None if opts.known_hosts == "none" else opts.known_hosts
    if opts.config:
        conn_kw["config"] = list(opts.config)
    if opts.jump:
        conn_kw["tunnel"] = opts.jump
    return host, conn_kw


async def execute(spec: str, command: str, stdin: bytes, opts: SshOptions, timeout: float,
                  transport: str = "ssh") -> Union[Tuple[Optional[int], bytes, str], NodeOutcome]:
    """Run ``command`` on ``spec`` with ``stdin``: (exit status, stdout, stderr), or the
    outcome that says why it could not run (unreachable, timeout, refused)."""
    import asyncssh

    start = time.monotonic()
    host, conn_kw = _connect_kw(spec, opts)

    def done(state: str, detail: str = "") -> NodeOutcome:
        return NodeOutcome(spec, transport, state, None, detail[-2000:], time.monotonic() - start)

    try:
        async with asyncssh.connect(host, connect_timeout=timeout, login_timeout=timeout, **conn_kw) as conn:
            left = max(1.0, timeout - (time.monotonic() - start))
            result = await asyncio.wait_for(conn.run(command, input=stdin, encoding=None, check=False), left)
    except asyncio.TimeoutError:
        return done(TIMEOUT, f"no answer within {timeout:g} s")
    except (OSError, asyncssh.Error) as exc:
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, asyncssh.Error) and "timed out" not in str(exc).lower():
            return done(UNREACHABLE if isinstance(exc, (asyncssh.DisconnectError, asyncssh.ConnectionLost))
                        else FAILED, text)
        if "timed out" in str(exc).lower():
            return done(TIMEOUT, text)
        return done(UNREACHABLE, text)
    return result.exit_status, result.stdout or b"", (result.stderr or b"").decode("utf-8", "replace")


async def _one(spec: str, command: str, bundle: bytes, opts: SshOptions, timeout: float) -> NodeOutcome:
    start = time.monotonic()
    got = await execute(spec, command, bundle, opts, timeout)
    if isinstance(got, NodeOutcome):
        return got
    return outcome_of_run(spec, "ssh", *got, duration_s=time.monotonic() - start)


async def gather(hosts: Sequence[str], command: str, bundle: bytes, opts: SshOptions, timeout: float,
                 concurrency: int, progress: Optional[Progress] = None, one=None) -> List[NodeOutcome]:
    """Run ``command`` on every host, at most ``concurrency`` at a time; results in host order.

    ``one`` replaces the per-host coroutine (``bench/fleet_bench.py`` injects latency and
    failures through it to measure the fan-out on a thousand simulated hosts)."""
    one = one or _one
    sem = asyncio.Semaphore(max(1, concurrency))
    out: List[Optional[NodeOutcome]] = [None] * len(hosts)
    finished = 0

    async def run(i: int, spec: str) -> None:
        nonlocal finished
        async with sem:
            try:
                out[i] = await asyncio.wait_for(one(spec, command, bundle, opts, timeout), timeout + 5)
            except asyncio.TimeoutError:
                out[i] = NodeOutcome(spec, "ssh", TIMEOUT, None, f"no answer within {timeout:g} s", timeout)
            except Exception as exc:  # a transport bug must not lose the other hosts' reports
                out[i] = NodeOutcome(spec, "ssh", FAILED, None, f"{type(exc).__name__}: {exc}")
        finished += 1
        if progress is not None:
            progress(out[i], finished, len(hosts))

    await asyncio.gather(*(run(i, h) for i, h in enumerate(hosts)))
    return [o for o in out if o is not None]


def run_ssh(hosts: Sequence[str], command: str, bundle: bytes, opts: SshOptions, timeout: float = 300.0,
            concurrency: int = 32, progress: Optional[Progress] = None) -> List[NodeOutcome]:
    return asyncio.run(gather(hosts, command, bundle, opts, timeout, concurrency, progress))
