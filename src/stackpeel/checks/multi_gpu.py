"""Multi-GPU layer: what NCCL needs from the host, and whether it actually works.

``multi_gpu.shm``, ``multi_gpu.memlock`` and ``multi_gpu.open_files`` read host limits (no GPU
needed).
``multi_gpu.p2p`` copies real tensors between every ordered pair of visible GPUs, and
``multi_gpu.nccl`` runs a real all-reduce with one worker process per GPU. Both skip,
saying why, with fewer than two GPUs. Their probes (``probes/multi_gpu.py``) run torch
only in worker processes with deadlines, so a hung copy or collective becomes evidence.

Thresholds (documented here, used below):

- /dev/shm: warn under :data:`SHM_MIN_BYTES` (1 GiB) in total or
  :data:`SHM_MIN_FREE_BYTES` (512 MiB) free. DataLoader workers pass every batch through
  it, and NCCL creates ``/dev/shm/nccl-*`` segments of ~10-35 MB per rank wherever it
  keeps host buffers in POSIX shared memory; Docker's and Kubernetes' 64 MiB default is
  the classic failure. Warn (degraded), not fail, because whether NCCL trips depends on
  its version and transports. Measured on 2 x H200 with NCCL 2.28.9: a 1 MiB /dev/shm
  did not stop an all-reduce by default (host buffers in cuMem memory), even with
  NCCL_P2P_DISABLE=1; with NCCL_CUMEM_ENABLE=0 it failed at init (34 MB segment), with
  NCCL_CUMEM_HOST_ENABLE=0 + NCCL_P2P_DISABLE=1 at the first all-reduce (9.6 MB). When
  NCCL does fail on it, ``multi_gpu.nccl`` reports that as blocking with NCCL's words.
- memlock: RDMA registration (``ibv_reg_mr``) needs the locked-memory limit raised
  unless the process holds CAP_IPC_LOCK. Under :data:`MEMLOCK_MIN_BYTES` (1 GiB, far
  above NCCL's own IB buffers) it is a degraded finding where RDMA devices exist and
  an informational one where none do (NCCL then registers nothing).
- open files: under :data:`NOFILE_MIN` (1024, the usual default soft limit) descriptors per
  process, a degraded finding. torch's DataLoader passes every tensor of a batch from a worker
  as its own descriptor (the default ``file_descriptor`` sharing strategy); measured with torch
  on CPU under ``prlimit --nofile=64``, two workers with batches of 64 small tensors fail
  ('unable to open shared memory object </torch_...> in read-write mode: Too many open files
  (24)') and the loop waits until DataLoader's timeout.
  The same limit breaks the GPU stack itself: a CUDA context and the libraries torch and Triton
  load hold descriptors of their own. Measured on one H200 (torch 2.11.0+cu130, Triton 3.6.0,
  driver 580, `stackpeel check --fresh` under `ulimit -n N`): at N <= 48 torch's first tensor
  raises 'CUDA error: CUDA-capable device(s) is/are busy or unavailable'
  (cudaErrorDevicesUnavailable), at 28 Triton's driver build raises '[Errno 24] Too many open
  files', at 20 torch's probe dies without an answer and Triton finds '0 active drivers'; at 64
  one GPU works, two do not. A GPU check whose failure shows such evidence while the limit is
  under :data:`NOFILE_MIN` names ``open-files-limit-low`` beside its own code
  (:func:`descriptor_shortage`, :func:`limit_note`), and the diagnosis makes the limit the
  blocking root with the layer failures as its symptoms. The evidence: an errno of EMFILE or
  'Too many open files' (unambiguous), or one of the ways a CUDA context that cannot get its
  descriptors fails ('busy or unavailable', '0 active drivers', a GPU worker that died without
  an answer). The last ones alone also fit a GPU in exclusive-process mode held by another
  process: they count only under the low limit, never with a generous one.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..model import Severity, Status
from .. import facts as _facts
from .base import Check, Verdict

GIB = 1 << 30
MIB = 1 << 20
SHM_MIN_BYTES = 1 * GIB
SHM_MIN_FREE_BYTES = 512 * MIB
DOCKER_DEFAULT_SHM = 64 * MIB
MEMLOCK_MIN_BYTES = 1 * GIB
NOFILE_MIN = 1024
#: under this soft limit the death of a probe (multi_gpu.open_files's own, or any other check's) is the
#: limit's doing: at 5 every probe forked from the torch-free interpreter dies in its fork's setup, exit
#: 70 with nothing on stderr (chk27, chk28; at 6 on the CPU machine they all answer), on an H200 torch's
#: probe died at 20 (fd25); the open-files probe's start test begins there too
NOFILE_PROBE_ROOM = 64

#: NCCL variables that switch a transport off or on; worth naming in a summary
_TRANSPORT_SWITCHES = ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_P2P_LEVEL")

_SHM_EVIDENCE = re.compile(r"/dev/shm|failed to extend|shared memory segment|shm_open|insufficient shared memory", re.I)
_MEMLOCK_EVIDENCE = re.compile(r"ibv_reg_mr|memlock|RLIMIT_MEMLOCK", re.I)
_NCCL_EVIDENCE = re.compile(r"NCCL (WARN|ERROR|error)|nccl\w*Error|DistBackendError|unhandled (system|cuda) error|"
                            r"ncclInternalError|ncclInvalidUsage|ncclRemoteError|internal error - please report",
                            re.I)


def human_bytes(n: Optional[float]) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n)} bytes"


def _error_verdict(summary: str, **facts: Any) -> Verdict:
    """The measurement itself could not be made: say so rather than guess."""
    return Verdict(Status.ERROR, summary, (), facts)


# --------------------------------------------------------------------------- /dev/shm

class SharedMemory(Check):
    """Size, free space and writability of /dev/shm, where NCCL puts its intra-node
    segments and DataLoader workers pass batches. Warns under 1 GiB in total or 512 MiB
    free (Docker and Kubernetes give 64 MiB unless told otherwise)."""

    id = "multi_gpu.shm"
    volatile = True  # free space: measured again on every run (runner/cache.py)
    title = "/dev/shm large enough for NCCL and DataLoader workers"
    layer = "multi_gpu"
    codes = ("nccl-shm-too-small",)
    facts = _facts.MultiGpuShmFacts
    probe = "multi_gpu.shm"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        path = facts["path"]
        container = facts["container"]
        where = ["container"] if container else []
        if not facts["exists"]:
            return ctx.verdict(f"{path} does not exist", ctx.finding(
                "nccl-shm-too-small", ["missing"] + where, path=path, container=container,
                severity=Severity.DEGRADED, shm_size="missing"))
        size, free = facts["size_bytes"], facts["free_bytes"]
        if size is None:
            return _error_verdict(f"could not measure {path}: {facts.get('statvfs_error')}")
        summary = f"{path}: {human_bytes(size)}, {human_bytes(free)} free"
        mount = facts["mount"] or {}
        evidence = f"statvfs({path}): size {size} bytes, free {free} bytes"
        if mount:
            evidence += f"\nmount: {mount.get('fstype')} {mount.get('options')}"
        largest = facts.get("largest") or []
        if largest:
            evidence += "\nlargest entries: " + ", ".join(f"{e['name']} ({human_bytes(e['bytes'])})" for e in largest)
        findings = []
        observed = {"path": path, "container": container, "size": human_bytes(size), "free": human_bytes(free)}
        if not facts["writable"]:
            findings.append(ctx.finding("nccl-shm-too-small", ["not-writable"] + where, evidence=evidence,
                                        severity=Severity.DEGRADED, shm_size=human_bytes(size), **observed))
        elif size < SHM_MIN_BYTES:
            findings.append(ctx.finding(
                "nccl-shm-too-small", ["small"] + (["docker-default"] if size == DOCKER_DEFAULT_SHM else []) + where,
                minimum=human_bytes(SHM_MIN_BYTES), evidence=evidence, severity=Severity.DEGRADED,
                shm_size=human_bytes(size), **observed))
        elif free is not None and free < SHM_MIN_FREE_BYTES:
            leftovers = facts.get("nccl_segments") or 0
            findings.append(ctx.finding(
                "nccl-shm-too-small", ["full"] + (["leftovers"] if leftovers else []), entries=facts.get("entries", 0),
                leftovers=leftovers, evidence=evidence, severity=Severity.DEGRADED,
                shm_size=f"{human_bytes(free)} free of {human_bytes(size)}", **observed))
        return ctx.verdict(summary, *findings)


# --------------------------------------------------------------------------- memlock

def _memlock_text(soft: Optional[int]) -> str:
    """``ulimit -l`` style: KiB, or unlimited."""
    if soft is None:
        return "unlimited"
    return f"{soft // 1024} KiB ({human_bytes(soft)})" if soft >= 1024 else f"{soft} bytes"


class Memlock(Check):
    """The locked-memory limit (RLIMIT_MEMLOCK, ``ulimit -l``) that caps RDMA memory
    registration for NCCL over InfiniBand/RoCE and GPUDirect RDMA. Warns under 1 GiB when
    RDMA devices exist and the process lacks CAP_IPC_LOCK; notes it otherwise."""

    id = "multi_gpu.memlock"
    title = "Locked-memory limit (ulimit -l) for RDMA"
    layer = "multi_gpu"
    codes = ("memlock-limit-low",)
    facts = _facts.MultiGpuMemlockFacts
    probe = "multi_gpu.memlock"
    timeout = 15.0

    def evaluate(self, facts, ctx):
        soft = None if facts["soft_unlimited"] else facts["soft_bytes"]
        hard = None if facts["hard_unlimited"] else facts["hard_bytes"]
        text = _memlock_text(soft)
        rdma = facts["rdma_devices"] or []
        summary = f"memlock soft limit {text}, hard {_memlock_text(hard)}"
        if rdma:
            summary += f"; RDMA devices: {', '.join(rdma)}"
        if soft is None or soft >= MEMLOCK_MIN_BYTES:
            return ctx.ok(summary)
        if facts["cap_ipc_lock"]:
            return ctx.ok(summary + "; CAP_IPC_LOCK held, which lifts the limit for this process")
        evidence = f"getrlimit(RLIMIT_MEMLOCK) = ({facts['soft_bytes']}, {facts['hard_bytes']})"
        if rdma:
            return ctx.verdict(summary, ctx.finding("memlock-limit-low", "rdma", memlock=text, rdma=", ".join(rdma),
                                                    evidence=evidence))
        return ctx.verdict(summary + " (no RDMA devices, so nothing registers memory here)", ctx.finding(
            "memlock-limit-low", "no-rdma", evidence=evidence, severity=Severity.INFO, memlock=text))

# --------------------------------------------------------------------------- open files

def _nofile_text(n: Optional[int]) -> str:
    return "unlimited" if n is None else str(n)


def _raise_to(soft: Optional[int], hard: Optional[int]) -> Optional[str]:
    """What the job may raise its soft limit to itself; None (the `ulimit -n N` command is left
    out) where the hard limit is no higher than the soft one: `ulimit -n 48` under a hard 48 fixes nothing."""
    if hard is None:
        return "unlimited"
    return str(hard) if soft is None or hard > soft else None


class OpenFiles(Check):
    """The open-files limit (RLIMIT_NOFILE, ``ulimit -n``) the job inherits. Warns under
    :data:`NOFILE_MIN`: DataLoader workers hand each tensor over as a file descriptor."""

    id = "multi_gpu.open_files"
    title = "Open-files limit (ulimit -n) for DataLoader workers and NCCL"
    layer = "multi_gpu"
    codes = ("open-files-limit-low",)
    facts = _facts.MultiGpuOpenFilesFacts
    probe = "multi_gpu.open_files"
    timeout = 15.0

    limits_every_probe = True  # the runner starts every probe under the user's limit (runner/child.py)

    def death_params(self, failure, ctx) -> Optional[Dict[str, Any]]:
        """The finding's parameters when a probe that died without an answer died of the limit the
        runner started it under (``target["nofile"]``, the user's, read before stackpeel raised its
        own): a death (not a timeout, nor stackpeel's own fault: a facts shape, an exception in
        evaluate) under :data:`NOFILE_PROBE_ROOM`, or one whose words say EMFILE. None otherwise."""
        soft, hard = (list(ctx.target.get("nofile") or ()) + [None, None])[:2]
        text = f"{getattr(failure, 'stderr_tail', '') or ''}\n{getattr(failure, 'detail', '') or ''}"
        died = getattr(failure, "reason", "") in ("exit", "no-output", "signal")
        if not isinstance(soft, int) or soft < 0 or not died \
                or (soft >= NOFILE_PROBE_ROOM and not _EMFILE.search(text)):
            return None
        hard = hard if isinstance(hard, int) and hard >= 0 else None
        error = (getattr(failure, "detail", "") or "").strip().splitlines()[:1] or ["no answer"]
        return dict(soft=soft, hard=_nofile_text(hard), raise_to=_raise_to(soft, hard), minimum=NOFILE_MIN,
                    error=error[0], evidence=f"the limit stackpeel started the probe under: ({soft}, "
                    f"{_nofile_text(hard)})\n{text.strip()}")

    # Check.on_failure and Check.explain_death turn death_params into findings: its own probe that
    # died (a fork's setup fails at a soft limit of 5, exit 70, chk27) is the limit measured as far as
    # it matters (blocking); another check's (at 5 every probe forked from the torch-free interpreter
    # dies, chk28) gets the informational note that nests it under this check

    def evaluate(self, facts, ctx):
        soft, hard = facts["soft"], facts["hard"]
        summary = f"open-files soft limit {_nofile_text(soft)}, hard {_nofile_text(hard)}"
        if facts.get("open_now") is not None:
            summary += f"; a fresh Python holds {facts['open_now']}"
        if soft is None or soft >= NOFILE_MIN:
            return ctx.ok(summary)
        raise_to = _raise_to(soft, hard)
        start = facts.get("start") or {}
        # tmp26: stackpeel identified the target (and starts its probes) under its own raised limit;
        # started under the user's, the same interpreter exits non-zero, or says EMFILE (a .pth line
        # or sitecustomize that failed is skipped with a message), or could not even be started for
        # want of descriptors (a timeout is no such evidence)
        said = [ln.strip() for ln in (start.get("stderr") or "").splitlines() if _EMFILE.search(ln)]
        if start.get("rc") not in (0, None) or said or _EMFILE.search(start.get("error") or ""):
            error = (said or (start.get("error") or start.get("stderr") or f"exit status {start.get('rc')}")
                     .strip().splitlines() or [""])[-1]
            return ctx.verdict(summary + "; the interpreter fails in its startup under it", ctx.finding(
                "open-files-limit-low", "no-start", severity=Severity.BLOCKING, soft=soft, hard=_nofile_text(hard),
                raise_to=raise_to, minimum=NOFILE_MIN, error=error, python=ctx.target.get("python"),
                evidence=f"getrlimit(RLIMIT_NOFILE) = ({soft}, {_nofile_text(hard)}); "
                         f"`{ctx.target.get('python')} -c pass` under it: {start.get('error') or ''}"
                         f"exit status {start.get('rc')}\n{start.get('stderr') or ''}".rstrip()))
        return ctx.verdict(summary, ctx.finding(
            "open-files-limit-low", "raisable" if hard is None or hard > soft else "hard",
            evidence=f"getrlimit(RLIMIT_NOFILE) = ({soft}, {_nofile_text(hard)}); "
                     f"descriptors open in a fresh Python: {facts.get('open_now')}",
            soft=soft, hard=_nofile_text(hard), raise_to=raise_to, minimum=NOFILE_MIN))


#: an error that says the process ran out of descriptors (strerror(EMFILE), in any wrapper)
_EMFILE = re.compile(r"Too many open files(?! in system)|\[Errno 24\]|\bEMFILE\b")
#: how a CUDA context that could not be had fails (cudaErrorDevicesUnavailable from torch,
#: CUDA_ERROR_DEVICE_UNAVAILABLE from the driver API, Triton with no driver to create): a low
#: open-files limit, or an exclusive-mode GPU another process holds
CONTEXT_DENIED = re.compile(r"busy or unavailable|cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE|"
                            r"\b0 active drivers\b")


def nofile_low(limits: Mapping[str, Any]) -> bool:
    """The open-files soft limit (multi_gpu.open_files's facts) is under :data:`NOFILE_MIN`."""
    soft = limits.get("soft")
    return isinstance(soft, int) and soft < NOFILE_MIN


#: below this soft limit, errors that a shortage of descriptors explains but that other causes
#: print too (a GPU in exclusive-process mode is also "busy or unavailable"; a worker may die of
#: anything) are read as the limit's doing. Measured with torch 2.11 and Triton 3.6 (sessions 24-33): one
#: GPU's first tensor fails at 44 (48 in session 24) and works from 45, a bare first Triton kernel
#: from 49, on an H100 and an H200 alike (sessions 33-34; the check's own launch probe from 56); two
#: GPUs fail at 64; 256 leaves room for eight GPUs at that rate. EMFILE itself counts under
#: :data:`NOFILE_MIN`, since it names the shortage whatever the limit
NOFILE_GPU_SUSPECT = 256


#: NVML compute modes in which a second process cannot get a context ('busy or unavailable')
EXCLUSIVE_MODES = ("EXCLUSIVE_PROCESS", "EXCLUSIVE_THREAD", "PROHIBITED")


def exclusive_gpus(ctx: Any) -> List[str]:
    """The GPUs NVML reports in an exclusive (or prohibited) compute mode, as "GPU 0
    (EXCLUSIVE_PROCESS)", from the derived ``compute_modes`` that gpu.visible_devices,
    cuda.driver_api and torch.cuda pass on ([] when unknown or all DEFAULT)."""
    modes = ctx.dep("torch.cuda").get("compute_modes") or ctx.dep("cuda.driver_api").get("compute_modes") or []
    return [f"GPU {m.get('index')} ({m.get('mode')})" for m in modes
            if isinstance(m, Mapping) and m.get("mode") in EXCLUSIVE_MODES]


def other_causes(ctx: Any) -> List[str]:
    """What else makes a context be refused, or a GPU process die, here: a GPU in an exclusive
    compute mode (:func:`exclusive_gpus`), or no GPU at all (torch or the driver API counted 0
    devices: Triton's '0 active drivers' on a machine without a GPU is no shortage of descriptors).
    Facts a check did not produce (its probe died) rule nothing out."""
    out = exclusive_gpus(ctx)
    torch, drv = ctx.dep("torch.cuda"), ctx.dep("cuda.driver_api")
    if torch.get("device_count") == 0 or drv.get("device_count") == 0:
        out.append("no GPU (0 devices)")
    return out


def exclusive_evidence(gpus: Sequence[str]) -> str:
    """The line a GPU check adds to its own finding's evidence when its context was refused on an
    exclusive-mode GPU (what 'busy or unavailable' means there), '' when none is."""
    if not gpus:
        return ""
    return (f"NVML compute mode: {', '.join(gpus)}: one process at a time may hold a context there "
            "(none in PROHIBITED mode): 'busy or unavailable' means another process holds the GPU "
            "(nvidia-smi --query-compute-apps=pid,process_name --format=csv); not read as the open-files limit")


def descriptor_shortage(limits: Mapping[str, Any], *errors: Any, died: bool = False,
                        ruled_out: Sequence[str] = ()) -> Optional[str]:
    """The first line of ``errors`` (probe error dicts or text) that a shortage of descriptors
    explains, when the open-files soft limit is low; ``died``: a GPU worker ended without an
    answer. None when the limit is generous or nothing fits (then nothing changes). EMFILE counts
    under :data:`NOFILE_MIN`; the context's refusal and a worker's death, which other causes
    produce too, only under :data:`NOFILE_GPU_SUSPECT`, and never when one of those other causes
    is known (``ruled_out``, from :func:`other_causes`: an exclusive-mode GPU, where another process
    holding it says the same; no GPU at all)."""
    if not nofile_low(limits):
        return None
    ambiguous_too = limits.get("soft") < NOFILE_GPU_SUSPECT and not ruled_out
    texts = []
    for err in errors:
        if isinstance(err, Mapping):
            if err.get("errno") == 24 or err.get("errno_name") == "EMFILE":
                return f"{err.get('type')}: {(err.get('message') or '').strip()}".splitlines()[0]
            texts.append(f"{err.get('type')}: {err.get('message') or ''}")
            texts.extend(f"{c.get('type')}: {c.get('message') or ''}" for c in err.get("chain") or ())
        elif err:
            texts.append(str(err))
    for pattern in (_EMFILE, CONTEXT_DENIED) if ambiguous_too else (_EMFILE,):
        for text in texts:
            for line in text.splitlines():
                if pattern.search(line):
                    return line.strip()
    return "the process ended without an answer" if died and ambiguous_too else None


def limit_note(ctx: Any, limits: Mapping[str, Any], what: str, error: str, variant: str = "gpu") -> Any:
    """``open-files-limit-low`` as a GPU check (``variant`` "gpu") or a build (``compiler``) names it
    beside its own finding (informational: the diagnosis reads it as "this failure is the limit's
    doing", see stackpeel.diagnosis)."""
    soft, hard = limits.get("soft"), limits.get("hard")
    return ctx.finding(
        "open-files-limit-low", variant, severity=Severity.INFO, soft=soft, hard=_nofile_text(hard),
        raise_to=_raise_to(soft, hard), minimum=NOFILE_MIN, what=what, error=error,
        evidence=f"{error}\ngetrlimit(RLIMIT_NOFILE) = ({soft}, {_nofile_text(hard)})")


def failure_note(ctx: Any, failure: Any, what: str) -> List[Any]:
    """``open-files-limit-low`` for a GPU check whose probe gave no answer (``Check.on_failure``):
    its error or stderr says EMFILE, or (under :data:`NOFILE_GPU_SUSPECT`) it died without an answer
    (an exit status, a signal: under a limit of 20 torch's probe could not even write its answer).
    A probe that timed out, or whose answer stackpeel could not read, is not the limit's evidence."""
    limits = ctx.dep("multi_gpu.open_files")
    died = getattr(failure, "reason", "") in ("exit", "no-output", "signal")
    short = descriptor_shortage(limits, getattr(failure, "stderr_tail", ""), getattr(failure, "detail", ""),
                                died=died, ruled_out=other_causes(ctx))
    return [limit_note(ctx, limits, what, short)] if short else []


#: descriptors the extension-build probe's compile and link need with gcc 12.2 and GNU ld (tmp26,
#: measured with `ulimit -Sn N` around `stackpeel check --only toolchain.extension_build`: at 12 ld
#: fails with `cannot find /lib64/ld-linux-x86-64.so.2: Too many open files`, at 13 it builds, and so
#: does Triton's own test build); a build that fails with no cause of its own under it is the limit's
BUILD_NOFILE_NEED = 13


def build_shortage(limits: Mapping[str, Any], *texts: Any, unexplained: bool = False) -> Optional[str]:
    """The line of a failed compile or link (compiler stderr, error text) that a low open-files
    limit explains: EMFILE (gcc's and ld's `Too many open files`, as `cannot find X: Too many open
    files` or `cannot open`) under :data:`NOFILE_MIN`; or, for a failure with no cause of its own
    (``unexplained``), a limit under :data:`BUILD_NOFILE_NEED`, what the build is known to need.
    None otherwise (a generous limit, or a failure with another cause)."""
    if not nofile_low(limits):
        return None
    short = descriptor_shortage(limits, *texts)
    if short:
        return short
    if unexplained and limits.get("soft") < BUILD_NOFILE_NEED:
        lines = [ln.strip() for t in texts if isinstance(t, str) for ln in t.splitlines() if ln.strip()]
        return (lines[-1] if lines else "the build failed") + (
            f" (the build needs about {BUILD_NOFILE_NEED} descriptors)")
    return None


def build_note(ctx: Any, what: str, *texts: Any, unexplained: bool = False) -> List[Any]:
    """``open-files-limit-low`` (variant ``compiler``) beside a failed build's own finding when
    :func:`build_shortage` explains it; [] otherwise."""
    limits = ctx.dep("multi_gpu.open_files")
    short = build_shortage(limits, *texts, unexplained=unexplained)
    return [limit_note(ctx, limits, what, short, "compiler")] if short else []


# --------------------------------------------------------------------------- helpers for GPU checks

def _tail(text: Optional[str], lines: int = 25) -> str:
    if not text:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _transport_env(env: Mapping[str, str]) -> List[str]:
    return [f"{k}={env[k]}" for k in _TRANSPORT_SWITCHES if k in env]


_GPU_CELL = re.compile(r"GPU(\d+)$")
_LINK_KIND = re.compile(r"(X|SYS|NODE|PHB|PXB|PIX|NV\d+|SOC|PHB)$")
_CPU_LIST = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*$")


def topology_matrix(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi topo -m`` as people paste it: spaces or tabs, ANSI-underlined header,
    a "N NICs found" preamble, a missing header line, or rows cut short.

    Returns ``{"gpus": [0, 1, ...], "links": {(i, j): "NV18" | "PIX" | "SYS" ...},
    "nics": {(i, "NIC0"): "PIX" ...}, "cpu_affinity": {i: "0-55"}, "numa": {i: "0"},
    "truncated": [rows that ended early]}``. GPUs are numbered as nvidia-smi numbers them
    (not remapped by CUDA_VISIBLE_DEVICES)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text or "")
    cols: Optional[List[str]] = None
    out: Dict[str, Any] = {"gpus": [], "links": {}, "nics": {}, "cpu_affinity": {}, "numa": {}, "truncated": []}
    for line in text.splitlines():
        if line.strip().startswith("Legend"):
            break
        cells = [c.strip() for c in (line.split("\t") if "\t" in line else line.split())]
        if cells and cells[0] == "":
            cells = cells[1:]
        if not cells:
            continue
        if cols is None and cells[:2] == ["GPU0", "GPU1"]:
            cols = [c for c in cells if _GPU_CELL.match(c) or re.match(r"(NIC|mlx)\S*$", c)]
            continue
        m = _GPU_CELL.match(cells[0])
        if not m:
            continue
        i = int(m.group(1))
        row = cells[1:]
        if cols is None:  # no header line: GPU columns run until the row's own "X"
            if "X" not in row:
                continue
            n_gpu = max(row.index("X") + 1, sum(1 for c in row if re.match(r"(NV\d+|X)$", c)))
            cols = ["GPU%d" % k for k in range(n_gpu)]
        out["gpus"].append(i)
        gpu_cols = [c for c in cols if _GPU_CELL.match(c)]
        nic_cols = [c for c in cols if not _GPU_CELL.match(c)]
        if len(row) < len(gpu_cols):
            out["truncated"].append(i)
        for col, cell in zip(gpu_cols, row):
            j = int(_GPU_CELL.match(col).group(1))
            if j != i:
                out["links"][(i, j)] = cell
        rest = row[len(gpu_cols):]
        k = 0
        while k < len(rest) and _LINK_KIND.match(rest[k]):
            name = nic_cols[k] if k < len(nic_cols) else "NIC%d" % k
            out["nics"][(i, name)] = rest[k]
            k += 1
        tail = [c for c in rest[k:] if c]
        if tail and _CPU_LIST.match(tail[0]):
            out["cpu_affinity"][i] = tail[0]
            if len(tail) > 1 and re.match(r"\d+$", tail[1]):
                out["numa"][i] = tail[1]
    return out


def topology_links(text: str) -> Dict[tuple, str]:
    """{(i, j): "NV18" | "PIX" | "SYS" ...} between GPUs (see :func:`topology_matrix`)."""
    return topology_matrix(text)["links"]


def nvlink_layout(matrix: Mapping[str, Any]) -> Dict[str, Any]:
    """What the GPU-to-GPU links say: ``kind`` is "all-nvlink" (every pair NV#: NVSwitch boards and
    fully linked pairs), "partial-nvlink", "no-nvlink" or "unknown"; ``weak`` lists pairs whose
    NVLink count is below the most common one, and ``not_nvlink`` the pairs without NVLink on a
    board where most pairs have it (a GPU that lost links to the fabric, as on HGX boards whose
    fabric is half-trained)."""
    links = matrix.get("links") or {}
    if not links:
        return {"kind": "unknown", "weak": [], "not_nvlink": [], "common": None}
    counts = {pair: int(cell[2:]) for pair, cell in links.items() if re.match(r"NV\d+$", cell)}
    if not counts:
        return {"kind": "no-nvlink", "weak": [], "not_nvlink": [], "common": None}
    tally: Dict[int, int] = {}
    for c in counts.values():
        tally[c] = tally.get(c, 0) + 1
    common = max(tally, key=lambda c: (tally[c], c))
    weak = sorted(pair for pair, c in counts.items() if c < common and pair[0] < pair[1])
    not_nv = sorted(pair for pair in links if pair not in counts and pair[0] < pair[1])
    kind = "all-nvlink" if not not_nv else "partial-nvlink"
    return {"kind": kind, "weak": weak, "not_nvlink": not_nv if len(counts) > len(links) / 2 else [],
            "common": "NV%d" % common}


# --------------------------------------------------------------------------- p2p

class PeerToPeer(Check):
    """Peer access between every ordered pair of visible GPUs, as CUDA reports it, and a
    real 64 MiB copy each way whose values are checked. A copy that hangs or corrupts
    data is blocking (ACS/IOMMU); peer access denied is degraded (NCCL goes through host
    memory). Skips with fewer than two GPUs."""

    id = "multi_gpu.p2p"
    title = "GPU peer-to-peer access and copies"
    layer = "multi_gpu"
    codes = ("nccl-p2p-blocked", "open-files-limit-low")
    facts = _facts.MultiGpuP2pFacts
    requires = ("torch.cuda", "multi_gpu.open_files")
    gate = ("torch.cuda",)
    probe = "multi_gpu.p2p"
    timeout = 120.0
    probe_options = {"timeout_s": 90}

    def on_failure(self, failure, ctx):
        return failure_note(ctx, failure, "the peer-copy probe")

    def evaluate(self, facts, ctx):
        if facts.get("skipped"):
            return ctx.skip(f"not applicable: {facts['skipped']}")
        n = facts["device_count"]
        worker = facts.get("worker") or {}
        pairs = facts.get("pairs") or []
        access = facts.get("access")
        topo = facts.get("topology") or {}
        topo_text = topo.get("stdout") if isinstance(topo, dict) else None
        evidence_base = f"nvidia-smi topo -m:\n{topo_text.rstrip()}" if topo_text else ""
        stage = worker.get("stage") or "start"
        derived: Dict[str, Any] = {}
        findings = []

        # the worker hung or died: where it was says what broke
        if worker.get("killed") or worker.get("exit_code") != 0:
            how = (f"did not finish within {worker.get('timeout_s'):g} s and was killed" if worker.get("killed")
                   else f"died with {worker.get('signal')}" if worker.get("signal")
                   else f"exited with status {worker.get('exit_code')}")
            err = facts.get("error") or {}
            evidence = "\n".join(filter(None, [
                f"worker {how} at stage {stage!r}",
                f"{err.get('type')}: {err.get('message')}" if err else "",
                _tail(worker.get("log_tail")), evidence_base]))
            limits = ctx.dep("multi_gpu.open_files")
            # a worker that died with a Python error of its own died of that error, not unseen
            short = descriptor_shortage(limits, err, worker.get("log_tail"),
                                        died=not worker.get("killed") and not err, ruled_out=other_causes(ctx))
            if short:
                findings.append(limit_note(ctx, limits, f"the peer-copy worker (stage {stage!r})", short))
            if stage.startswith("copy "):
                src, dst = stage[5:].split("->")
                findings.append(ctx.finding(
                    "nccl-p2p-blocked", "copy-hung" if worker.get("killed") else "copy-failed", src=src, dst=dst,
                    fate=how, access=self._access(access, int(src), int(dst)), evidence=evidence, gpus=f"{src},{dst}"))
                return ctx.verdict(f"copy cuda:{src} -> cuda:{dst} {'hung' if worker.get('killed') else 'failed'}",
                                   *findings)
            return _error_verdict(f"could not test peer copies: the worker {how} at stage {stage!r}"
                                  + (f" ({err.get('type')}: {err.get('message')})" if err else ""),
                                  evidence=evidence)

        bad = [p for p in pairs if not p.get("ok")]
        for p in bad:
            i, j = p["src"], p["dst"]
            findings.append(ctx.finding(
                "nccl-p2p-blocked", "corrupt", src=i, dst=j, forward=p.get("mismatches_forward"),
                back=p.get("mismatches_back"), access=self._access(access, i, j),
                evidence="\n".join(filter(None, [f"sample: {p.get('sample')}", evidence_base])), gpus=f"{i},{j}"))
        denied = [(i, j) for i in range(len(access or [])) for j in range(len(access or []))
                  if i != j and access[i][j] is False]
        if denied and not bad:
            links = topology_links(topo_text or "")
            nvlinked = [(i, j) for i, j in denied if links.get((i, j), "").startswith("NV")]
            listing = ", ".join(f"cuda:{i}->cuda:{j}" for i, j in denied)
            iommu = facts.get("iommu_cmdline")
            findings.append(ctx.finding(
                "nccl-p2p-blocked",
                ["no-peer-access", "nvlinked" if nvlinked else "pcie"] + (["iommu"] if iommu else []),
                pairs=listing, iommu=" ".join(iommu or []), evidence=evidence_base, severity=Severity.DEGRADED,
                gpus=",".join(str(x) for x in sorted({d for pair in denied for d in pair}))))
        rates = [p["gb_per_s"] for p in pairs if p.get("gb_per_s")]
        derived["pairs_checked"] = len(pairs)
        summary = f"{len(pairs)} ordered pair(s) of {n} GPUs copied"
        if bad:
            summary = f"{len(bad)} of {len(pairs)} GPU pair copies returned wrong data"
        elif rates:
            summary += f", values intact, {min(rates):g}-{max(rates):g} GB/s"
        if denied:
            summary += f"; peer access denied for {len(denied)} pair(s)"
        elif access:
            summary += "; peer access on for every pair"
        return ctx.verdict(summary, *findings, **derived)

    @staticmethod
    def _access(access: Optional[Sequence[Sequence[Optional[bool]]]], i: int, j: int) -> str:
        try:
            value = access[i][j]  # type: ignore[index]
        except (TypeError, IndexError):
            return "unknown"
        return {True: "yes", False: "no"}.get(value, "unknown")


# --------------------------------------------------------------------------- all-reduce

class AllReduce(Check):
    """A real all-reduce across every visible GPU: one worker process per GPU, backend
    NCCL, each contributing rank+1; the sum must be n(n+1)/2 on every rank, and a second
    16 MiB all-reduce must come back exact. Every worker is time-bounded; a worker that
    hangs is killed and its last stage, log tail and NCCL WARN lines become evidence.
    NVLink multicast (NVLS) is switched off for the workers unless NCCL_NVLS_ENABLE is
    set. Also reports the NCCL_* variables in effect. Skips with fewer than two GPUs."""

    id = "multi_gpu.nccl"
    title = "NCCL all-reduce across the local GPUs"
    layer = "multi_gpu"
    codes = ("nccl-shm-too-small", "memlock-limit-low", "nccl-allreduce-failed", "nccl-error",
             "open-files-limit-low")
    facts = _facts.MultiGpuNcclFacts
    # multi_gpu.open_files: each rank's context, NCCL's sockets, shared-memory segments and proxy
    # threads need descriptors (the limit its failures may be, as in multi_gpu.p2p)
    requires = ("torch.cuda", "multi_gpu.shm", "multi_gpu.p2p", "config.nccl_environment", "multi_gpu.open_files")
    gate = ("torch.cuda",)
    probe = "multi_gpu.nccl"
    timeout = 200.0
    probe_options = {"backend": "nccl", "timeout_s": 150, "grace_s": 10}
    # probe_needs stays at its default (all requires) on purpose: the all-reduce waits for
    # the peer copies, so the two never share the GPUs and the copy rates stay honest.

    def evaluate(self, facts, ctx):
        env = facts["nccl_env"] or {}
        switches = _transport_env(env)
        derived: Dict[str, Any] = {"nccl_transport_switches": switches}
        if facts.get("skipped"):
            return ctx.skip(f"not applicable: {facts['skipped']}", **derived)
        backend = facts["backend"]
        world = facts["world_size"]
        expected = facts.get("expected")
        ranks = facts.get("ranks") or []
        version = facts.get("nccl_version")
        label = f"{backend}" + (f" {version}" if version and backend == "nccl" else "")
        added = facts.get("env_set_by_stackpeel") or {}
        notes = []
        if "NCCL_NVLS_ENABLE" in added:
            notes.append("NVLS off")
        notes.extend(f"{s} set" for s in switches)
        note = f" ({', '.join(notes)})" if notes else ""

        if facts.get("ok"):
            return ctx.ok(f"all-reduce across {world} ranks with {label}: sum {_num(facts.get('sum'))} as expected, "
                          f"16 MiB all-reduce exact{note}", **derived)

        evidence = self._evidence(ranks)
        values = [r.get("value") for r in ranks]
        finished = all(r.get("stage") in ("destroy_process_group", "done") and r.get("value") is not None
                       for r in ranks)
        if finished:
            got = ", ".join(f"rank {r['rank']}: {_num(r.get('value'))} (16 MiB: {_num(r.get('big_min'))}.."
                            f"{_num(r.get('big_max'))})" for r in ranks)
            return ctx.verdict(
                f"all-reduce across {world} ranks returned wrong results", ctx.finding(
                    "nccl-allreduce-failed", "wrong-sums", world=world, label=label, note=note,
                    expected=_num(expected), got=got, evidence=evidence, nccl_version=version), **derived)

        story = "; ".join(self._rank_story(r) for r in ranks)
        text = evidence + "\n" + "\n".join(
            f"{(r.get('error') or {}).get('type')}: {(r.get('error') or {}).get('message')}" for r in ranks)
        observed = {"world": world, "label": label, "note": note, "story": story}
        summary = f"all-reduce across {world} ranks with {label} failed: {story}"
        if _SHM_EVIDENCE.search(text):
            finding = ctx.finding("nccl-shm-too-small", "allreduce", evidence=evidence, shm_size="too small for NCCL",
                                  **observed)
        elif _MEMLOCK_EVIDENCE.search(text):
            finding = ctx.finding("memlock-limit-low", "allreduce", evidence=evidence, severity=Severity.BLOCKING,
                                  **observed)
        elif backend == "nccl" and _NCCL_EVIDENCE.search(text):
            finding = ctx.finding("nccl-error", evidence=evidence, nccl_version=version,
                                  nccl=version or "(version unknown)", **observed)
        else:
            finding = ctx.finding("nccl-allreduce-failed", "incomplete", evidence=evidence, nccl_version=version,
                                  **observed)
        derived["values"] = values
        return ctx.verdict(summary, finding, *self._limit(ctx, ranks), **derived)

    @staticmethod
    def _limit(ctx: Any, ranks: Sequence[Mapping[str, Any]]) -> List[Any]:
        """``open-files-limit-low`` beside the failure when a rank's error, log or death is a
        shortage of descriptors (:func:`descriptor_shortage`): a rank that raised its own error
        died of it, and one killed at the deadline or after a peer failed did not die unseen."""
        limits = ctx.dep("multi_gpu.open_files")
        for r in ranks:
            err = r.get("error") or {}
            died = not r.get("killed") and not err and (r.get("exit_code") not in (0, None) or bool(r.get("signal")))
            short = descriptor_shortage(limits, err, "\n".join(r.get("nccl_warnings") or ()), r.get("log_tail"),
                                        died=died, ruled_out=other_causes(ctx))
            if short:
                return [limit_note(ctx, limits, f"NCCL rank {r.get('rank')} (stage {r.get('stage')!r})", short)]
        return []

    def on_failure(self, failure, ctx):
        return failure_note(ctx, failure, "the all-reduce probe")

    @staticmethod
    def _rank_story(r: Mapping[str, Any]) -> str:
        stage = r.get("stage")
        err = r.get("error") or {}
        if r.get("killed") == "timeout":
            return f"rank {r['rank']} still in {stage} at the deadline, killed"
        if r.get("killed") == "peer-failed":
            return f"rank {r['rank']} still in {stage} after another rank failed, killed"
        if r.get("signal"):
            return f"rank {r['rank']} killed by {r['signal']} in {stage}"
        if err:
            return f"rank {r['rank']} raised {err.get('type')} in {stage}"
        if r.get("exit_code") not in (0, None):
            return f"rank {r['rank']} exited with status {r.get('exit_code')} in {stage}"
        if r.get("exit_code") is None:
            return f"rank {r['rank']} could not be reaped in {stage}"
        return f"rank {r['rank']} finished ({stage})"

    @staticmethod
    def _evidence(ranks: Sequence[Mapping[str, Any]]) -> str:
        parts = []
        for r in ranks:
            err = r.get("error") or {}
            head = f"--- rank {r['rank']}: stage {r.get('stage')}, exit {r.get('exit_code')}"
            if r.get("signal"):
                head += f" ({r['signal']})"
            if r.get("killed"):
                head += f", killed ({r['killed']})"
            parts.append(head)
            if err:
                parts.append(f"{err.get('type')}: {err.get('message')}")
            warns = r.get("nccl_warnings") or []
            if warns:
                parts.append("NCCL warnings:\n" + "\n".join(warns))
            tail = _tail(r.get("log_tail"), 15)
            if tail and not err:
                parts.append(tail)
        return "\n".join(parts)


def _num(x: Any) -> str:
    if isinstance(x, float) and x == int(x):
        return str(int(x))
    return str(x)
