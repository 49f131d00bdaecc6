"""Finding codes of the cuda layer: the driver API in libcuda.so.1."""

from ..model import Severity
from . import Code

CODES = (
    Code(
        code="libcuda-missing",
        layer="cuda",
        severity=Severity.BLOCKING,
        title="libcuda.so.1 (the CUDA driver library) cannot be loaded",
        meaning="dlopen('libcuda.so.1') fails, so no CUDA program can start: torch warns 'Found no NVIDIA "
                "driver on your system' and reports CUDA unavailable, Triton cannot find libcuda. libcuda.so.1 "
                "is part of the driver (not of the CUDA toolkit or of pip's nvidia-* wheels) and must be the "
                "kernel module's exact version.",
        fix="Install the driver's user-space CUDA library at the kernel module's version: Ubuntu "
            "'libnvidia-compute-<branch>', Debian 'libcuda1' (non-free), RHEL/Fedora with NVIDIA's repository "
            "'nvidia-driver-cuda-libs'. In a container, let the NVIDIA Container Toolkit inject it (docker run "
            "--gpus all; NVIDIA_DRIVER_CAPABILITIES must include 'compute'). On WSL2 it lives in /usr/lib/wsl/lib "
            "(comes with the Windows driver). If it is installed outside the loader's path, add its directory "
            "to /etc/ld.so.conf.d and run ldconfig. Never point the loader at the toolkit's stubs/libcuda.so: "
            "it is a link-time stub that fails at run time.",
        packages={"apt": "libnvidia-compute-{driver_branch}", "dnf": "nvidia-driver-cuda-libs"},
        commands=(
            ("shell", "ldconfig -p | grep -E 'libcuda\\.so'; ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* "
                      "/usr/lib64/libcuda.so* /usr/lib/wsl/lib/libcuda.so* 2>/dev/null"),
        ),
        links=("https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",),
    ),
    Code(
        code="cuda-init-failed",
        layer="cuda",
        severity=Severity.BLOCKING,
        title="cuInit failed: the CUDA driver cannot initialise",
        meaning="libcuda.so.1 loads but cuInit(0) returns an error, so every CUDA user fails: torch reports "
                "CUDA unavailable with a 'CUDA initialization: ...' warning, Triton finds no active driver. The "
                "CUresult tells why. 100 CUDA_ERROR_NO_DEVICE: no GPU visible to this process (device nodes, "
                "CUDA_VISIBLE_DEVICES). 999 CUDA_ERROR_UNKNOWN: usually /dev/nvidia-uvm missing or the nvidia_uvm "
                "module not loaded, or the container's cgroup lost device access. 803 "
                "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: libcuda is not the kernel module's version. 804 "
                "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: the forward-compatibility package on a GPU that does "
                "not support it. 802 CUDA_ERROR_SYSTEM_NOT_READY: Fabric Manager not running (NVSwitch). 34 "
                "CUDA_ERROR_STUB_LIBRARY: the toolkit's stub libcuda was loaded instead of the driver's. 46 "
                "CUDA_ERROR_DEVICE_UNAVAILABLE: GPU busy in exclusive-process mode.",
        fix="Act on the code: for 999 create /dev/nvidia-uvm on the host ('nvidia-modprobe -u -c=0') and "
            "restart the container, or restart a container that lost access after 'systemctl daemon-reload'; "
            "for 100 pass the GPU into the container and check CUDA_VISIBLE_DEVICES; for 803 make libcuda and "
            "the kernel module one version (reboot after a driver upgrade); for 34 remove the CUDA stubs "
            "directory from LD_LIBRARY_PATH; for 46 set the GPU's compute mode to Default "
            "('nvidia-smi -c DEFAULT') or free it.",
        commands=(
            ("shell", "{sudo}nvidia-modprobe -u -c=0 && ls -l /dev/nvidia-uvm   # on the host; here: {uvm_state}"),
            ("shell", "export LD_LIBRARY_PATH=$(printf %s \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v stubs "
                      "| paste -sd:)   # drops {stub_dir}"),
            ("shell", "{sudo}nvidia-smi -c DEFAULT   # compute mode of {busy_gpu}"),
        ),
        links=("https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
               "https://github.com/pytorch/pytorch/issues/49081"),
    ),
    Code(
        code="cuda-forward-compat-unsupported",
        layer="cuda",
        severity=Severity.BLOCKING,
        title="CUDA forward-compatibility libraries in use where they cannot work",
        meaning="The libcuda.so.1 that loads comes from the CUDA forward-compatibility package (cuda-compat, "
                "typically /usr/local/cuda/compat, often put on LD_LIBRARY_PATH by CUDA container images), and "
                "cuInit rejects it: 804 CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (forward compatibility is "
                "only for data-centre GPUs) or 803 CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (the compat libraries do "
                "not fit the installed kernel driver branch).",
        fix="Use the driver's own libcuda: remove the compat directory from LD_LIBRARY_PATH (and from "
            "/etc/ld.so.conf.d), or upgrade the host driver to one that supports the wheel's CUDA natively "
            "(R580+ for CUDA 13). Forward compatibility works only on data-centre GPUs with a supported "
            "driver branch.",
        commands=(
            ("shell", "export LD_LIBRARY_PATH=$(printf %s \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v compat "
                      "| paste -sd:)   # drops {compat_dir}"),
        ),
        links=("https://docs.nvidia.com/deploy/cuda-compatibility/index.html",),
    ),
)
