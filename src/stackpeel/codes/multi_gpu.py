"""Finding codes of the multi-GPU layer: NCCL and what it needs from the host
(FAILURE_MODES.md section 8.3).

Meanings read as documentation (no placeholders); the checks put the observed values
(/dev/shm size, ``ulimit -l``, the GPU pair, NCCL's version) in each finding's message.
"""

from ..model import Severity
from . import Code

CODES = (
    Code(
        code="nccl-shm-too-small",
        layer="multi_gpu",
        severity=Severity.BLOCKING,
        title="/dev/shm is too small for NCCL and DataLoader workers",
        meaning="/dev/shm is small. When NCCL keeps its intra-node buffers in shared memory (older NCCL, "
                "`NCCL_CUMEM_ENABLE=0`, or its SHM transport when P2P is unavailable) it creates segments of tens "
                "of megabytes per peer there (`/dev/shm/nccl-XXXXXX`); with Docker's 64 MB default it then fails "
                "with `NCCL WARN Error: failed to extend /dev/shm/nccl-... to N bytes` and `unhandled system error`, "
                "or hangs at the first collective. (On 2 H200s with NCCL 2.28's defaults a 1 MiB /dev/shm did not "
                "break an all-reduce; the multi_gpu.nccl check decides.) PyTorch DataLoader workers also pass "
                "tensors through /dev/shm (`bus error` / `insufficient shared memory`).",
        fix="Give the container a larger /dev/shm: `docker run --shm-size=1g` (or more, or `--ipc=host`); on "
            "Kubernetes mount an `emptyDir: {{medium: Memory}}` volume at /dev/shm. `NCCL_SHM_DISABLE=1` is a slow "
            "workaround.",
        commands=(("shell", "df -h /dev/shm"),),
        links=("https://github.com/NVIDIA/nccl/issues/290",
               "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#docker"),
    ),
    Code(
        code="nccl-p2p-blocked",
        layer="multi_gpu",
        severity=Severity.BLOCKING,
        title="GPU peer-to-peer transfers are blocked or broken",
        meaning="Peer access between GPUs of one host is denied, or the GPUs report it but peer-to-peer copies "
                "fail, hang or return wrong data. On bare "
                "metal this is PCIe Access Control Services (ACS) redirecting P2P traffic through the root complex, "
                "or an IOMMU not in passthrough mode; in VMs the hypervisor does not support P2P. NCCL's P2P "
                "transport then hangs at the first all-reduce or produces garbage.",
        fix="Disable ACS on the PCIe bridges (BIOS, or `setpci` per NVIDIA's NCCL troubleshooting guide) and boot "
            "with `iommu=pt` (or the IOMMU off); confirm with cuda-samples' p2pBandwidthLatencyTest. "
            "`NCCL_P2P_DISABLE=1` avoids the fault at a cost in bandwidth.",
        commands=(("shell", "nvidia-smi topo -m"),
                  ("shell", "lspci -vvv | grep -i acsctl")),
        links=("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs",
               "https://github.com/NVIDIA/nccl/issues/2079"),
    ),
    Code(
        code="memlock-limit-low",
        layer="multi_gpu",
        severity=Severity.DEGRADED,
        title="Locked-memory limit too low for RDMA/pinned memory",
        meaning="The locked-memory limit (`ulimit -l`) is low. NCCL's InfiniBand/RoCE transport and GPUDirect RDMA register (pin) "
                "memory; with a low limit `ibv_reg_mr` fails (`NCCL WARN Call to ibv_reg_mr failed`) and NCCL "
                "errors out or falls back to slower sockets. (CUDA's own pinned host allocations are not bound by "
                "this limit; RDMA registration is.)",
        fix="Raise the limit: `docker run --ulimit memlock=-1:-1`, `* - memlock unlimited` in "
            "/etc/security/limits.conf, or `LimitMEMLOCK=infinity` in the systemd unit (Slurm: "
            "`PropagateResourceLimitsExcept=MEMLOCK`).",
        commands=(("shell", "ulimit -l"),),
        links=("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#infiniband",),
    ),
    Code(
        code="nccl-allreduce-failed",
        layer="multi_gpu",
        severity=Severity.BLOCKING,
        title="An NCCL all-reduce between the GPUs failed",
        meaning="A small all-reduce across the local GPUs did not complete (it raised, timed out, or returned a "
                "wrong sum). Distributed training and tensor-parallel inference on this machine will hang or fail "
                "at their first collective. The evidence holds NCCL's own warnings.",
        fix="Re-run with `NCCL_DEBUG=INFO` to see the transport NCCL picked; try `NCCL_P2P_DISABLE=1` and "
            "`NCCL_SHM_DISABLE=1` one at a time to find the broken transport; run nccl-tests' all_reduce_perf.",
        commands=(("shell", "NCCL_DEBUG=INFO {python} -c \"import torch; print(torch.cuda.nccl.version())\""),),
        links=("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",),
    ),
    Code(
        code="nccl-error",
        layer="multi_gpu",
        severity=Severity.BLOCKING,
        title="NCCL reported an error",
        meaning="NCCL failed (`unhandled system error`, `unhandled cuda error`, `internal error` or "
                "`remote process exited`). These codes are generic: NCCL's `NCCL WARN` lines (printed with "
                "`NCCL_DEBUG=WARN` or `INFO`) name the failing call, often /dev/shm, memlock, P2P or the network.",
        fix="Re-run with `NCCL_DEBUG=INFO` and read the first `NCCL WARN` line; check /dev/shm size "
            "(`df -h /dev/shm`), `ulimit -l` and `nvidia-smi topo -m`.",
        commands=(("shell", "df -h /dev/shm"), ("shell", "ulimit -l")),
        links=("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",),
    ),
)
