"""Finding codes of the gpu layer: kernel driver, device nodes, NVML, visible devices.

Fixes that run on the *host* of a container say so; commands that only make sense in one
kind of container are gated by a parameter the check sets only for that kind
(``container_runtime``, ``lxc_uvm_major``), so a Docker user is not handed LXC lines.
"""

from ..model import Severity
from . import Code

_DRIVER_DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"
_TOOLKIT_DOCS = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"

CODES = (
    Code(
        code="no-nvidia-driver",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="No NVIDIA driver: no GPU is usable here",
        meaning="No NVIDIA kernel driver is loaded or visible: /proc/driver/nvidia/version is absent, "
                "/proc/modules lists no nvidia module, there is no /dev/nvidiactl and no WSL2 /dev/dxg. "
                "Nothing in this environment can use an NVIDIA GPU: CUDA initialisation fails (torch warns "
                "'Found no NVIDIA driver on your system'), torch.cuda.is_available() is False, Triton raises "
                "'0 active drivers', and FLA falls back to CPU (or crashes at the first kernel).",
        fix="If the machine has an NVIDIA GPU (lspci | grep -i nvidia), install the NVIDIA driver on the host "
            "and reboot or load it (modprobe nvidia); R580 or newer runs CUDA 13 wheels (torch 2.11+ from PyPI). "
            "Inside a container the driver belongs to the host, never the image: install it there and start the "
            "container with the GPU passed through. On WSL2 install or update the Windows NVIDIA driver, then "
            "run 'wsl --shutdown'; never install a Linux driver inside WSL. If there is no GPU at all, run the "
            "GPU stack on a machine that has one (every GPU code path here will fail or fall back to CPU).",
        commands=(
            ("apt", "{sudo}apt-get install -y nvidia-open   # from NVIDIA's CUDA apt repository (cuda-keyring); "
                    "GPU seen on PCI: {pci_gpu}"),
            ("dnf", "{sudo}dnf install -y nvidia-open   # from NVIDIA's CUDA repository; GPU seen on PCI: {pci_gpu}"),
            ("shell", "{sudo}modprobe nvidia && cat /proc/driver/nvidia/version   # GPU seen on PCI: {pci_gpu}"),
        ),
        links=(_DRIVER_DOWNLOAD,
               "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html",
               "https://docs.nvidia.com/cuda/wsl-user-guide/index.html"),
    ),
    Code(
        code="device-nodes-missing",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="NVIDIA device nodes missing: the GPU was not passed in",
        meaning="The NVIDIA kernel driver is loaded (on the host), but /dev/nvidiactl or /dev/nvidia<N> is "
                "missing here. That is what a container started without GPU passthrough looks like. CUDA "
                "cannot open the GPU: torch warns 'Found no NVIDIA driver on your system' or CUDA error 100, "
                "and every GPU code path above fails.",
        fix="Pass the GPU into the container (these run on the host). Docker: install the NVIDIA Container "
            "Toolkit, then 'docker run --gpus all ...' (or with CDI: '--device nvidia.com/gpu=all'). Podman: "
            "generate a CDI spec and use '--device nvidia.com/gpu=all'. Kubernetes: install the NVIDIA device "
            "plugin or GPU operator and request 'resources: limits: nvidia.com/gpu: 1'. LXC/Incus: allow the "
            "devices ('lxc.cgroup2.devices.allow = c 195:* rwm' plus the nvidia-uvm and nvidia-caps majors from "
            "/proc/devices) and bind them ('lxc.mount.entry = /dev/nvidia0 dev/nvidia0 none "
            "bind,optional,create=file', likewise nvidiactl, nvidia-uvm, nvidia-uvm-tools), or use "
            "'lxc.hook.mount = /usr/share/lxc/hooks/nvidia'. Apptainer/Singularity: run with '--nv'. On a bare "
            "host, the nodes are created by nvidia-modprobe or udev: run 'nvidia-modprobe -c=0' as root.",
        commands=(
            ("shell", "{sudo}nvidia-ctk runtime configure --runtime={container_runtime} && "
                      "{sudo}systemctl restart {container_runtime}   # on the host; then start the container "
                      "with --gpus all"),
            ("shell", "{sudo}nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml   # on the host; then "
                      "{container_runtime} run --device nvidia.com/gpu=all ..."),
            ("shell", "printf '%s\\n' 'lxc.cgroup2.devices.allow = c 195:* rwm' "
                      "'lxc.cgroup2.devices.allow = c {lxc_uvm_major}:* rwm' "
                      "'lxc.mount.entry = /dev/nvidia0 dev/nvidia0 none bind,optional,create=file' "
                      "'lxc.mount.entry = /dev/nvidiactl dev/nvidiactl none bind,optional,create=file' "
                      "'lxc.mount.entry = /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file' "
                      "'lxc.mount.entry = /dev/nvidia-uvm-tools dev/nvidia-uvm-tools none bind,optional,create=file' "
                      ">> /var/lib/lxc/{lxc_name}/config   # on the host, then restart the container"),
        ),
        links=(_TOOLKIT_DOCS,
               "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html",
               "https://github.com/NVIDIA/k8s-device-plugin"),
    ),
    Code(
        code="nvidia-uvm-missing",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="/dev/nvidia-uvm missing: nvidia-smi works but CUDA does not",
        meaning="The GPU nodes exist but /dev/nvidia-uvm (CUDA unified memory) does not, or the nvidia_uvm "
                "module is not loaded. NVML and nvidia-smi still list the GPU, yet cuInit fails with CUDA "
                "error 999 and torch warns 'CUDA unknown error - this may be due to an incorrectly set up "
                "environment'. The node is created on demand by the setuid nvidia-modprobe, which cannot run "
                "inside a container, so a container's bind mount of it stays empty.",
        fix="On the host, load the module and create the node: 'nvidia-modprobe -u -c=0' (or 'modprobe "
            "nvidia-uvm'; make it permanent with nvidia-persistenced or a modules-load.d entry). Then restart "
            "the container so it receives /dev/nvidia-uvm (LXC: 'lxc.mount.entry = /dev/nvidia-uvm "
            "dev/nvidia-uvm none bind,optional,create=file' and allow its major from /proc/devices).",
        commands=(
            ("shell", "{sudo}nvidia-modprobe -u -c=0 && ls -l /dev/nvidia-uvm   # on the host"),
            ("shell", "echo nvidia-uvm | {sudo}tee /etc/modules-load.d/nvidia-uvm.conf   # on the host, at boot"),
        ),
        links=("https://github.com/pytorch/pytorch/issues/49081",
               "https://github.com/NVIDIA/nvidia-docker/issues/1085",
               "https://github.com/NVIDIA/nvidia-modprobe"),
    ),
    Code(
        code="device-permission-denied",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="NVIDIA device nodes exist but this user cannot open them",
        meaning="/dev/nvidiactl, /dev/nvidia<N> or /dev/nvidia-uvm exists but cannot be opened read-write by "
                "this user. CUDA then behaves as if there were no GPU (error 100 or 999) and torch "
                "reports CUDA unavailable.",
        fix="Give the user access to the nodes: add it to the group that owns them (often 'video' or "
            "'render'), then log in again; or set the driver's file mode (NVreg_DeviceFileMode=0666, "
            "NVreg_DeviceFileGID) in /etc/modprobe.d and reload the driver. In a container, pass the nodes "
            "with the runtime's GPU option instead of a bare --device.",
        commands=(
            ("shell", "{sudo}usermod -aG {device_group} {user}   # then log out and in again"),
        ),
    ),
    Code(
        code="nvml-unavailable",
        layer="gpu",
        severity=Severity.DEGRADED,
        title="NVML (libnvidia-ml.so.1) cannot be used",
        meaning="libnvidia-ml.so.1 cannot be loaded or nvmlInit fails. nvidia-smi, GPU monitoring and "
                "PYTORCH_NVML_BASED_CUDA_CHECK=1 do not work; torch falls back to asking CUDA for the device "
                "count. CUDA itself may still work (see cuda.driver_api); when the driver is missing it does not.",
        fix="Install the driver's NVML library at exactly the kernel module's version (Ubuntu "
            "'libnvidia-compute-<branch>', Debian 'libnvidia-ml1', RHEL 'nvidia-driver-NVML'). In a container, "
            "NVIDIA_DRIVER_CAPABILITIES must include 'utility' (unset means 'utility,compute') so the toolkit "
            "injects it.",
        packages={"apt": "libnvidia-compute-{driver_branch}", "dnf": "nvidia-driver-NVML"},
        links=("https://docs.nvidia.com/deploy/nvml-api/index.html",),
    ),
    Code(
        code="driver-library-mismatch",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="Driver libraries do not match the kernel module",
        meaning="The user-space driver libraries (libcuda.so.1, libnvidia-ml.so.1) are not the version of the "
                "loaded kernel module. NVML says 'Failed to initialize NVML: Driver/library version mismatch', "
                "CUDA fails with error 803 ('system has unsupported display driver / cuda driver combination') "
                "or 'CUDA driver version is insufficient', and dmesg shows 'NVRM: API mismatch'. Typical after "
                "a driver upgrade without reboot, or in LXC with a different driver inside than on the host.",
        fix="Make them one version. After a driver upgrade on a host: reboot (or unload and reload the nvidia "
            "modules). In LXC or with bind mounts: install the same driver version inside with "
            "'--no-kernel-module', or bind-mount the host's libraries. With Docker, let the NVIDIA Container "
            "Toolkit inject the host's libraries instead of baking a driver into the image.",
        commands=(
            ("shell", "cat /proc/driver/nvidia/version; ls -l $(ldconfig -p | awk '/libcuda.so.1|libnvidia-ml.so.1/ "
                      "{{print $NF}}')"),
            ("shell", "sh NVIDIA-Linux-x86_64-{kernel_driver_version}.run --no-kernel-module   # inside LXC, "
                      "the installer of the host's exact version"),
        ),
        links=("https://github.com/NVIDIA/ubuntu-packaging-nvidia-driver/issues/3",
               "https://stackoverflow.com/questions/43022843/nvidia-nvml-driver-library-version-mismatch"),
    ),
    Code(
        code="cuda-visible-devices-hides-gpus",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="CUDA_VISIBLE_DEVICES hides the GPUs",
        meaning="CUDA_VISIBLE_DEVICES selects no usable GPU (it is empty, repeats an entry, starts with an "
                "invalid one, or names indices or UUIDs that do not exist here) although the driver sees GPUs. "
                "CUDA and torch then see fewer or no devices: torch.cuda.is_available() is False and Triton "
                "raises '0 active drivers' exactly as on a machine with no GPU.",
        fix="Unset CUDA_VISIBLE_DEVICES, or set it to indices or UUIDs that exist (nvidia-smi -L lists them). "
            "Parsing stops at the first invalid entry, and a repeated entry hides every GPU. Set it before the "
            "process starts: changing it after CUDA is initialised has no effect.",
        commands=(
            ("shell", "unset CUDA_VISIBLE_DEVICES   # or: export CUDA_VISIBLE_DEVICES={suggested_visible}"),
        ),
        links=("https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables",),
    ),
    Code(
        code="container-toolkit-missing",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="GPU nodes are in the container but the driver libraries are not",
        meaning="This container has the NVIDIA device nodes (passed with --device or a privileged mount) but not "
                "the host driver's user-space libraries (libcuda.so.1, libnvidia-ml.so.1), which the NVIDIA "
                "Container Toolkit injects. CUDA cannot load: torch finds no driver and Triton finds no libcuda.",
        fix="On the host, install the NVIDIA Container Toolkit and start the container through it: "
            "'docker run --gpus all ...' (or CDI '--device nvidia.com/gpu=all'), with NVIDIA_DRIVER_CAPABILITIES "
            "including 'compute,utility'. Do not install a driver inside the image: it will not match the host.",
        commands=(
            ("shell", "{sudo}nvidia-ctk runtime configure --runtime={container_runtime} && "
                      "{sudo}systemctl restart {container_runtime}   # on the host"),
        ),
        links=(_TOOLKIT_DOCS,),
    ),
    Code(
        code="gpu-access-revoked",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="The container lost access to the GPU (cgroup device rules)",
        meaning="The NVIDIA device nodes exist and their file modes allow access, but opening them fails with "
                "'Operation not permitted' (or NVML says 'Failed to initialize NVML: Unknown Error'): the "
                "container's cgroup no longer allows the devices. The known cause is cgroup v2 with non-CDI GPU "
                "injection: a 'systemctl daemon-reload' on the host (often from a package upgrade) resets the "
                "container's device rules while it runs.",
        fix="Restart the container to get access back. To stop it happening again, inject GPUs through CDI "
            "(nvidia-ctk cdi generate; --device nvidia.com/gpu=all) or pass the device nodes explicitly with "
            "--device, and upgrade the NVIDIA Container Toolkit (1.16+ uses CDI by default for Kubernetes).",
        commands=(
            ("shell", "{sudo}nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml   # on the host"),
        ),
        links=("https://github.com/NVIDIA/nvidia-container-toolkit/issues/48",
               "https://github.com/NVIDIA/nvidia-docker/issues/1671",
               "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html"),
    ),
    Code(
        code="fabric-manager-not-running",
        layer="gpu",
        severity=Severity.BLOCKING,
        title="NVSwitch system without a running Fabric Manager",
        meaning="CUDA initialisation fails with error 802 ('system not yet initialized'): on NVSwitch systems "
                "(HGX/DGX with 8 GPUs) the GPUs cannot be used until the NVIDIA Fabric Manager has configured "
                "the NVLink fabric. torch.cuda.is_available() is False or raises 'Error 802'.",
        fix="On the host, install the Fabric Manager of exactly the driver's version and start it; wait until "
            "it reports the fabric as initialised, then retry.",
        packages={"apt": "nvidia-fabricmanager-{driver_branch}", "dnf": "nvidia-fabric-manager"},
        commands=(
            ("shell", "{sudo}systemctl enable --now nvidia-fabricmanager && systemctl status nvidia-fabricmanager"),
        ),
        links=("https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html",),
    ),
)
