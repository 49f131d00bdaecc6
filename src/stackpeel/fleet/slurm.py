"""The Slurm transport: one ``srun`` step, one task per node (``--ntasks-per-node=1``).

Inside an allocation (``salloc``, ``sbatch``: ``SLURM_JOB_ID`` is set) the step covers every
node of the job (``--overlap``, so it runs beside a job step that holds the CPUs); with
``--slurm PARTITION[/NODES]`` srun asks for an allocation itself (``-p PARTITION`` and ``-N
COUNT`` or ``-w NODELIST``; without NODES, every node of the partition).

The bundle travels the way SSH sends it: on srun's standard input, which ``--input=all``
broadcasts to every task, so the nodes need no install and no shared file system. Each task
prints a header with its Slurm node name as soon as it starts, then its report and stderr as
base64 (76-column lines: srun's ``--label`` prefixes survive, and no line is ever long enough
to be split). A node that started but sent no report before the timeout is ``timeout``; a node
of the step that never started is ``unreachable`` with srun's own words.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from . import FAILED, TIMEOUT, UNREACHABLE, NodeOutcome, outcome_of_run

MARK = "@stackpeel-fleet"
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


def wrap(remote: str) -> str:
    """The shell line each task runs: a header, then ``remote``'s stdout and stderr in base64."""
    return (
        f'echo "{MARK} node ${{SLURMD_NODENAME:-$(hostname)}} ${{SLURM_STEP_NODELIST:-}}"; '
        'o=$(mktemp) && e=$(mktemp) || exit 97; trap \'rm -f "$o" "$e"\' EXIT HUP INT TERM; '
        f'( {remote} ) >"$o" 2>"$e"; rc=$?; echo "{MARK} rc $rc"; base64 <"$o"; echo "{MARK} stderr"; '
        f'tail -c 4000 "$e" | base64; echo "{MARK} end"'
    )


def srun_argv(where: Optional[str], remote: str, timeout: float,
              environ: Optional[Dict[str, str]] = None, nodes_only: Optional[Sequence[str]] = None) -> List[str]:
    """srun's command line: ``where`` is None (this allocation) or ``PARTITION[/NODES]``;
    ``nodes_only`` pins the step to those nodes (a second step on the nodes that answered)."""
    env = os.environ if environ is None else environ
    argv = ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--input=all", "--label",
            "--job-name=stackpeel-fleet", f"--time={max(1, int(timeout // 60) + 1)}"]
    if nodes_only:
        where = (where or "").partition("/")[0] + "/" + ",".join(nodes_only) if where is not None else None
    if where is None:
        nodes = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")
        if not env.get("SLURM_JOB_ID") or not nodes:
            raise ValueError("--slurm without PARTITION runs inside an allocation (salloc/sbatch), and "
                             "SLURM_JOB_ID or SLURM_JOB_NUM_NODES is not set here")
        argv += ["--overlap", f"--nodes={len(nodes_only) if nodes_only else nodes}"]
        if nodes_only:
            argv.append(f"--nodelist={','.join(nodes_only)}")
    else:
        part, _, nodes = where.partition("/")
        if part:
            argv.append(f"--partition={part}")
        if nodes.isdigit():
            argv.append(f"--nodes={nodes}")
        elif nodes:
            argv += [f"--nodelist={nodes}", f"--nodes={len(expand_nodelist(nodes))}"]
        else:
            argv.append(f"--nodes={partition_size(part)}")
    return argv + ["/bin/sh", "-c", wrap(remote)]


def expand_nodelist(spec: str) -> List[str]:
    """A Slurm hostlist (``gpu[01-03,07],cpu1``) -> its node names, zero padding kept."""
    names: List[str] = []
    for part in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", spec):
        m = re.match(r"^(.*?)\[([^\]]*)\](.*)$", part)
        if not m:
            names.append(part)
            continue
        head, ranges, tail = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            if hi and lo.isdigit() and hi.isdigit():
                names += [f"{head}{i:0{len(lo)}d}{tail}" for i in range(int(lo), int(hi) + 1)]
            else:
                names.append(f"{head}{lo}{tail}")
    return names


def partition_size(part: str) -> int:
    """How many nodes of ``part`` are up (not down, drained or failing)."""
    argv = ["sinfo", "-h", "-o", "%D %t"] + ([f"--partition={part}"] if part else [])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise ValueError(f"sinfo cannot list partition {part!r}: {out.stderr.strip()}")
    up = sum(int(n) for n, state in (line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
             if not state.startswith(("down", "drain", "fail", "unk", "no_resp")) and n.isdigit())
    if not up:
        raise ValueError(f"partition {part!r} has no node that is up (sinfo: {out.stdout.strip() or 'nothing'})")
    return up


@dataclass(frozen=True)
class TaskAnswer:
    """What one node's task sent back through srun."""

    node: str
    rc: Optional[int]
    stdout: bytes
    stderr: str
    ended: bool  # False: it started but was cut off before its report
    error: Optional[str] = None  # the base64 did not decode


def answers(stdout: str) -> Tuple[List[TaskAnswer], List[str]]:
    """srun's labelled output -> each task's answer, and the step's node list (pure)."""
    tasks: Dict[str, List[str]] = {}
    for line in stdout.splitlines():
        m = _LABEL.match(line)
        if m:
            tasks.setdefault(m.group(1), []).append(m.group(2).rstrip("\r"))
    out_answers: List[TaskAnswer] = []
    step_nodes: List[str] = []
    for _task, lines in sorted(tasks.items(), key=lambda kv: int(kv[0])):
        node, rc, out, err, section, ended = None, None, [], [], None, False
        for line in lines:
            if line.startswith(MARK + " "):
                words = line.split()
                if words[1] == "node" and len(words) >= 3:
                    node = words[2]
                    if len(words) >= 4 and not step_nodes:
                        step_nodes = expand_nodelist(words[3])
                elif words[1] == "rc" and len(words) >= 3:
                    rc, section = int(words[2]) if words[2].lstrip("-").isdigit() else None, out
                elif words[1] == "stderr":
                    section = err
                elif words[1] == "end":
                    ended, section = True, None
            elif section is not None:
                section.append(line)
        if node is not None:
            body, bad = _b64(out)
            out_answers.append(TaskAnswer(node, rc, body, _b64(err)[0].decode("utf-8", "replace"), ended, bad))
    return out_answers, step_nodes


def missing(step_nodes: Sequence[str], seen: Sequence[str], stderr: str, finished: bool,
            duration_s: float) -> List[NodeOutcome]:
    """Nodes of the step that sent nothing: unreachable (the step ended) or timeout."""
    why = _srun_said(stderr)
    return [NodeOutcome(node, "slurm", UNREACHABLE if finished else TIMEOUT, None,
                        why.get(node) or (stderr.strip()[-500:] if finished else
                                          "its task did not start before the timeout"), duration_s)
            for node in step_nodes if node not in seen]


def parse(stdout: str, stderr: str, duration_s: float, finished: bool) -> List[NodeOutcome]:
    """srun's labelled output -> one outcome per node (pure: tests feed it recorded output)."""
    got, step_nodes = answers(stdout)
    outcomes = [_outcome(a, duration_s) for a in got]
    return outcomes + missing(step_nodes, [a.node for a in got], stderr, finished, duration_s)


def _srun_said(stderr: str) -> Dict[str, str]:
    """srun's error lines that name a node (``srun: error: node2: task 1: ...``)."""
    out: Dict[str, str] = {}
    for line in stderr.splitlines():
        m = re.match(r"srun: error: ([^:\s]+): (.*)", line.strip())
        if m:
            out.setdefault(m.group(1), m.group(0))
    return out


def _b64(lines: Sequence[str]) -> Tuple[bytes, Optional[str]]:
    try:
        return base64.b64decode("".join(lines), validate=False), None
    except (binascii.Error, ValueError) as exc:
        return b"", f"{type(exc).__name__}: {exc}"


def _outcome(a: TaskAnswer, duration_s: float) -> NodeOutcome:
    if not a.ended:
        return NodeOutcome(a.node, "slurm", TIMEOUT, None, "its task started but sent no report before the timeout",
                           duration_s)
    if a.error:
        return NodeOutcome(a.node, "slurm", FAILED, None,
                           f"exit status {a.rc}, its report did not decode "
                           f"({a.error}); stderr: {a.stderr.strip()}"[-2000:], duration_s)
    return outcome_of_run(a.node, "slurm", a.rc, a.stdout, a.stderr, duration_s)


def srun(argv: List[str], stdin: bytes, timeout: float) -> Tuple[str, str, bool, Optional[int]]:
    """Run srun: (stdout, stderr, finished, exit status). At the timeout srun is ended
    (SIGTERM, which cancels the step on every node; SIGKILL 10 s later), what came back kept."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    finished = True
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        finished = False
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), finished, proc.returncode


def run_slurm(where: Optional[str], remote: str, bundle: bytes, timeout: float = 300.0) -> List[NodeOutcome]:
    """Run ``remote`` (bundle.remote_command) once per node through srun; outcomes by node.

    ``timeout`` bounds the whole step, waiting for the allocation included."""
    start = time.monotonic()
    try:
        argv = srun_argv(where, remote, timeout)
        out, err, finished, rc = srun(argv, bundle, timeout)
    except (ValueError, OSError, subprocess.TimeoutExpired) as exc:
        return [NodeOutcome(where or "slurm", "slurm", FAILED, None, f"cannot run srun: {type(exc).__name__}: {exc}")]
    took = time.monotonic() - start
    outcomes = parse(out, err, took, finished)
    said = _srun_said(err)
    if not outcomes and said:  # no task got as far as its header: srun names each node's failure
        outcomes = [NodeOutcome(node, "slurm", FAILED, None, "\n".join(
            ln.strip() for ln in err.splitlines() if f"{node}:" in ln or f"-{node}:" in ln)[-2000:], took)
            for node in said]
    if not outcomes:
        state = FAILED if finished else TIMEOUT
        what = f"srun exited {rc}" if finished else f"no node answered within {timeout:g} s"
        outcomes = [NodeOutcome(where or "slurm", "slurm", state, None,
                                f"{what}: {' '.join(shlex.quote(a) for a in argv[:-1])} ...; srun said: "
                                f"{err.strip()[-1000:]}")]
    return outcomes


__all__ = ["run_slurm", "srun_argv", "srun", "parse", "answers", "wrap", "expand_nodelist"]
