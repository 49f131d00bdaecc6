"""Issue 8, the lower layers: the NVIDIA driver and NVML, the container runtime and Kubernetes,
CUDA's error names, the dynamic loader, c10d's rendezvous, TensorRT and Vulkan.

Every message below is real text: the program's own wording where its source prints it (the
``source`` of the signature that matches it names where; the variable parts are filled in as
the program fills them), or a line from a public thread of a *training* repository. Each runs
through the wrappers pasted logs put around messages (tests/test_explain_patterns.py: rank and
worker prefixes, logging/glog/vLLM prefixes, docker compose, Markdown quotes, prose in backticks
or quotes, CRLF, word wrap and terminal cut at 80 columns), and must rank its code first.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    # libnvidia-container nvc_mount.c (BIOP/BIOP-desktop#2: libnvidia-compute-535-server in the image)
    "container-image-bundles-driver": [
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/36b6fcd35cb3d156b32520"
        "3e5766197a4c32259e1efd25567305af74aa3f5e80/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: "
        "unknown.",
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/2a1a1c35/merged/usr/lib/"
        "aarch64-linux-gnu/libnvidia-fatbinaryloader.so.440.18: file exists",
    ],
    # nvidia-container-toolkit hooks and containerd drop-in on an immutable host (NVIDIA/gpu-operator#2382)
    "container-runtime-path-unwritable": [
        'error running createContainer hook #6: exit status 1, stdout: , stderr: time="2026-08-26T21:50:49Z" '
        'level=error msg="failed to create application profiles directory: mkdirat '
        'etc/nvidia/nvidia-application-profiles-rc.d: read-only file system"',
        'Error: failed to generate container "cdc186ce" spec: failed to apply OCI options: failed to mkdir '
        '"/etc/containerd/conf.d": mkdir /etc/containerd/conf.d: read-only file system',
    ],
    # k8s apimachinery scheme.go / meta NoKindMatchError
    "gpu-sharing-k8s-too-old": [
        'couldn\'t create scheduler: no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1" in scheme "pkg/scheduler/apis/config/scheme/scheme.go:30"',
        'error: resource mapping not found for name: "single-gpu" namespace: "" from "claim.yaml": no matches for '
        'kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"',
    ],
    # kube-scheduler noderesources/fit.go
    "k8s-gpu-insufficient": [
        "Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        "0/3 nodes are available: 3 insufficient nvidia.com/gpu.",
    ],
    # libnvidia-container nvc_ldcache.c
    "container-toolkit-ldconfig-broken": [
        "stderr: nvidia-container-cli: ldcache error: open failed: /sbin/ldconfig.real: no such file or directory: "
        "unknown",
        "nvidia-container-cli: ldcache error: process /sbin/ldconfig failed with error code: 1",
    ],
    # libnvidia-container cli/common.c, container-device-interface cache.go
    "container-gpu-device-unknown": [
        "nvidia-container-cli: device error: 1: unknown device: unknown.",
        "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
    ],
    # driver_types.h cudaErrorDeviceNotLicensed, nvidia-smi -q
    "vgpu-unlicensed": [
        "RuntimeError: CUDA error: device doesn't have valid Grid license",
        "    License Status                    : Unlicensed (Restricted)",
    ],
    # glibc dl-load.c with the libraries slim images lack (OpenCV's libGL)
    "system-library-missing": [
        "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
        "ImportError: libgthread-2.0.so.0: cannot open shared object file: No such file or directory",
    ],
    # torch c10d socket.cpp
    "rendezvous-port-in-use": [
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "RuntimeError: The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "RuntimeError: The server socket has failed to listen on any local network address. useIpv6: 0, code: -48, "
        "name: EADDRINUSE, message: address already in use",
    ],
    "collective-rendezvous-unreachable": [
        "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to "
        "connect to (10.0.0.1, 29500).",
        "RuntimeError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
        "failed. See inner exception for details.",
    ],
    "collective-peer-lost": [
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
        "[10.0.0.2]:23456",
        "[W socket.cpp:663] [c10d] recvValue failed on SocketImpl(fd=5, addr=[localhost]:55470, remote=[localhost]:"
        "29500): Connection reset by peer",
    ],
    # TensorRT runtime/builder as ILogger prints them
    "tensorrt-engine-built-for-other-gpu": [
        "[07/14/2023-11:41:43] [TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting "
        "compute 5.3 got compute 6.1, please rebuild.",
    ],
    "tensorrt-engine-version-mismatch": [
        "[E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library version "
        "8.6.1.6 got 8.6.1.4, please rebuild.",
        "[TensorRT] ERROR: ../rtSafe/coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Version tag "
        "does not match)",
        "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization "
        "assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match)",
    ],
    "tensorrt-gpu-arch-unsupported": [
        "[TRT] [E] IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 61 is not "
        "supported by this TensorRT release.)",
        "[caskBuilderUtils.cpp::trtSmToCaskCCV::548] Error Code 1: Internal Error (Unsupported SM: 0x809)",
    ],
    "tensorrt-linked-library-version-warning": [
        "[05/21/2024-14:00:34] [TRT] [W] TensorRT was linked against cuDNN 8.9.6 but loaded cuDNN 8.9.2",
        "[TensorRT] WARNING: TensorRT was linked against cuBLAS/cuBLAS LT 11.6.3 but loaded cuBLAS/cuBLAS LT 11.3.0",
    ],
    # Vulkan-Loader loader.c and vulkaninfo
    "vulkan-driver-libs-missing": [
        "ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!",
        "loader_scanned_icd_add: Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD "
        "libGLX_nvidia.so.0",
        "ERROR at ./vulkaninfo/./vulkaninfo.h:458:vkCreateInstance failed with ERROR_INCOMPATIBLE_DRIVER",
        # libvulkan1 1.3.239 (Debian bookworm) spells the loader's message this way
        "ERROR: [Loader Message] Code 0 : terminator_CreateInstance: Found no drivers!",
        "ERROR: [Loader Message] Code 0 : loader_scanned_icd_add: Attempt to retrieve either 'vkGetInstanceProcAddr' "
        "or 'vk_icdGetInstanceProcAddr' from ICD libGL.so.1 failed.",
    ],
    # NCCL src/transport/net_ib.cc and net_socket.cc (strings of libnccl.so.2 2.31)
    "nccl-ib-transport-error": [
        "node2:123:456 [1] transport/net_ib.cc:1294 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41234> with "
        "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0",
        "NCCL WARN NET/IB : Got completion from peer 10.1.4.2<58732> with error 12, opcode 0, len 0, vendor err 129",
    ],
    "nccl-socket-ifname-wrong": [
        "misc/socket.cc:50 NCCL WARN NET/Socket : No usable listening interface found",
    ],
    # torchelastic's failure table, the DataLoader, the kernel's OOM killer, Kubernetes, Slurm
    "host-oom-killed": [
        "  exitcode  : -9 (pid: 1234)",
        "RuntimeError: DataLoader worker (pid 4321) is killed by signal: Killed.",
        "[Mon Jan  1 00:00:00 2024] Out of memory: Killed process 1234 (python) total-vm:123kB, anon-rss:456kB",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=123.batch. Some of the step tasks have been OOM Killed.",
    ],
    # open-gpu-kernel-modules nv-pci.c, one NVRM line each as dmesg prints them
    "gpu-pci-bar-unassigned": [
        "[    5.015146] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
        "[    5.015146] NVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)",
        "[   28.109032] NVRM: The system BIOS may have misconfigured your GPU.",
    ],
    # nvidia-smi -mig 1 on a GPU without MIG (nvmlErrorString(NVML_ERROR_NOT_SUPPORTED))
    "mig-unsupported-gpu": [
        "Unable to enable MIG Mode for GPU 00000000:01:00.0: Not Supported",
    ],
    # NCCL bootstrap.cc / net_socket.cc (strings of libnccl.so.2 2.31)
    "collective-mismatch-across-ranks": [
        "misc/socket.cc:540 NCCL WARN Message truncated : received 1024 bytes instead of 256",
        "NCCL WARN NET/Socket : peer 10.0.0.2<41234> message truncated : receiving 4096 bytes instead of 2048. If "
        "you believe your socket network is in a healthy state, there may be a mismatch in collective sizes",
    ],
    # kmod modprobe and dkms
    "nvidia-module-missing-for-kernel": [
        "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
        "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)",
        "==> ERROR: module not found: 'nvidia_uvm'",
        "Could not resolve Linux kernel version",
    ],
    # driver_types.h cudaErrorLaunchTimeout (702)
    "gpu-display-watchdog": [
        "RuntimeError: CUDA error: the launch timed out and was terminated",
    ],
    # nvidia-smi with the driver loaded and no GPU initialised
    "nvidia-gpu-init-failed": [
        "No devices were found",
        "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module "
        "was built against the wrong or improperly configured kernel sources",
    ],
    # nvml.h nvmlErrorString and NVML_ERROR_* names, as nvidia-smi, pynvml and go-nvml print them
    "no-nvidia-driver": [
        "Failed to initialize NVML: Driver Not Loaded",
        "pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
        "failed call to cuInit: CUDA_ERROR_NO_DEVICE",
    ],
    "nvml-unavailable": [
        "pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
        "E0101 12:00:00.000000 1 factory.go:112] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.",
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
        "Driver is properly installed and present in your system.",
    ],
    "device-permission-denied": [
        "Failed to initialize NVML: Insufficient Permissions",
        "failed to open /dev/nvidiactl: Permission denied",
        "NvRmMemInitNvmap failed with Permission denied",
        "nvidia-container-cli: initialization error: nvml error: insufficient permissions: unknown",
    ],
    "driver-library-mismatch": [
        "pynvml.NVMLError_LibRmVersionMismatch: Driver/library version mismatch",
        "nvml.ERROR_LIB_RM_VERSION_MISMATCH",
    ],
    "gpu-hardware-fault": [
        "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this "
        "GPU",
        "WARNING: infoROM is corrupted at gpu 0000:02:00.0",
        "Unable to determine the device handle for GPU0000:41:00.0: Unknown Error",
    ],
    "container-toolkit-missing": [
        # (Docker's 'Unknown runtime specified nvidia.' is docker-nvidia-runtime-not-registered now: kb6)
        'OCI runtime create failed: container_linux.go:349: starting container process caused "exec: '
        '\\"nvidia-container-runtime-hook\\": executable file not found in $PATH": unknown',
        # enroot's hook as pyxis prints it under Slurm
        "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
        "https://github.com/NVIDIA/libnvidia-container",
    ],
    "nvidia-uvm-missing": [
        "[WARN] Kernel module nvidia_uvm is not loaded. Make sure the NVIDIA device driver is installed and loaded.",
        "nvidia-container-cli: mount error: stat failed: /dev/nvidia-uvm: no such file or directory: unknown.",
    ],
    # libnvidia-container under WSL 2 (dxcore)
    "wsl-gpu-unavailable": [
        "nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown.",
    ],
    # driver_types.h / cuda.h
    "libcuda-stub-loaded": [
        "RuntimeError: CUDA driver error: CUDA driver is a stub library",
        "cuInit failed: CUDA_ERROR_STUB_LIBRARY",
        # torch on an H200 with the CUDA 13.0 toolkit's stub first on LD_LIBRARY_PATH (scenarios/gpu/suite.py)
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 34: CUDA driver is a stub library",
    ],
    "cuda-init-failed": [
        "RuntimeError: CUDA error: initialization error",
    ],
    "cuda-forward-compat-unsupported": [
        "failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on "
        "non supported HW",
    ],
}

test_lower_layer_message_in_every_wrapper, test_every_message_matches_a_signature_of_its_code = family_tests(FAMILIES)


def test_every_new_code_is_sourced_and_says_what_to_do():
    kb = load_kb()
    for code in ("container-image-bundles-driver", "container-runtime-path-unwritable", "gpu-sharing-k8s-too-old",
                 "k8s-gpu-insufficient", "container-gpu-device-unknown", "vgpu-unlicensed", "system-library-missing",
                 "rendezvous-port-in-use", "collective-peer-lost", "tensorrt-engine-built-for-other-gpu",
                 "tensorrt-engine-version-mismatch", "tensorrt-gpu-arch-unsupported",
                 "tensorrt-linked-library-version-warning", "vulkan-driver-libs-missing", "nccl-ib-transport-error",
                 "nvidia-module-missing-for-kernel", "gpu-display-watchdog", "host-oom-killed",
                 "container-toolkit-ldconfig-broken", "gpu-pci-bar-unassigned", "mig-unsupported-gpu",
                 "collective-mismatch-across-ranks"):
        entry = kb.get(code)
        assert entry.code == code and entry.fix and entry.source, code
        assert entry.logs and all(sig.source for sig in entry.logs), code
    # reached through the 803 signature's refine rule (the compat package in the log)
    refine_codes = {c for e in load().entries for r in e.refine for c in r.codes}
    assert "library-too-old-for-driver" in refine_codes


def test_cuda_compat_package_in_the_log_makes_803_the_compat_librarys_fault():
    """Error 803 alone is the driver's user-space/kernel mismatch; with the forward-compatibility
    package on the loader's path it is that older copy of libcuda."""
    err = "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination\n"
    assert explain_text(err).root.code == "driver-library-mismatch"
    log = "ENV LD_LIBRARY_PATH=/usr/local/cuda-12.2/compat/lib:/usr/local/nvidia/lib64\n" + err
    assert explain_text(log).root.code == "library-too-old-for-driver"


def test_generic_loader_message_only_when_nothing_specific_matched():
    """Any missing library is an answer for a log with nothing else; it never outranks a CUDA
    library, libcuda or onnxruntime's own message."""
    bare = "ImportError: libfoo_vendor.so.3: cannot open shared object file: No such file or directory\n"
    assert explain_text(bare).root.code == "system-library-missing"
    cuda = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    assert [c.code for c in explain_text(cuda).candidates][:1] == ["library-missing"]
    libcuda = "OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    assert explain_text(libcuda).root.code == "libcuda-missing"
    # TensorFlow's optional TensorRT libraries: a warning on every start, never the answer
    trt = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory\n")
    assert explain_text(trt).candidates == ()


def test_nvml_library_missing_in_a_container_ranks_the_runtime():
    log = ("kubectl logs nvidia-device-plugin-daemonset-x7k2p -n kube-system\n"
           "E0101 12:00:00.000000 1 factory.go:112] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n")
    expl = explain_text(log)
    assert expl.root.code == "nvml-unavailable"
    assert "container-toolkit-missing" in expl.root.could_be


def test_watchdog_timeout_of_any_collective_is_a_hang_and_allreduce_keeps_its_code():
    bcast = ("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, "
             "NumelOut=1, Timeout(ms)=1800000) ran for 1800302 milliseconds before timing out.\n")
    assert explain_text(bcast).root.code == "collective-hang"
    allreduce = bcast.replace("BROADCAST", "ALLREDUCE")
    assert explain_text(allreduce).root.code == "nccl-allreduce-failed"


def test_dataloader_worker_killed_by_oom_or_bus_error():
    """strsignal names the signal: 'Killed' is the OOM killer's SIGKILL, 'Bus error' is /dev/shm."""
    oom = "RuntimeError: DataLoader worker (pid 4321) is killed by signal: Killed.\n"
    assert explain_text(oom).root.code == "host-oom-killed"
    shm = "RuntimeError: DataLoader worker (pid 4321) is killed by signal: Bus error.\n"
    assert explain_text(shm).root.code == "dataloader-shm-too-small"


def test_bar_block_as_dmesg_prints_it_names_the_bar_and_explains_the_probe_failure():
    log = ("[    5.015146] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
           "               NVRM: BAR1 is 0M @ 0x0 (PCI:0000:c1:00.0)\n"
           "[    5.017631] nvidia 0000:c1:00.0: probe with driver nvidia failed with error -1\n"
           "[    5.028313] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    expl = explain_text(log)
    assert expl.root.code == "gpu-pci-bar-unassigned"
    assert "nvidia-gpu-init-failed" in expl.root.explains


def test_missing_module_explains_nvidia_smi_failing():
    """nvidia-smi's complaint is what a kernel without the module looks like (the older
    module-init-tools wording, NVIDIA/nvidia-docker#365): the module is the cause."""
    log = ("$ nvidia-smi\nmodprobe: FATAL: Module nvidia not found.\nNVIDIA-SMI has failed because it couldn't "
           "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
    expl = explain_text(log)
    assert expl.root.code == "nvidia-module-missing-for-kernel"
    assert "no-nvidia-driver" in expl.root.explains


def test_rendezvous_timeout_and_port_clash_are_told_apart():
    clash = ("[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
             "already in use).\n[E socket.cpp:472] [c10d] The server socket has failed to listen on any local "
             "network address.\n")
    assert explain_text(clash).root.code == "rendezvous-port-in-use"
    timeout = ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients "
               "joined.\n")
    assert explain_text(timeout).root.code == "collective-rendezvous-unreachable"


@pytest.mark.parametrize("versions,expected", [
    ({"tensorrt": "10.13.3.9", "gpu_cc": ["6.1"]}, ["tensorrt-10-pre-volta"]),
    ({"tensorrt": "10.7.0.23", "gpu_cc": ["12.0"]}, ["tensorrt-below-10.8-blackwell"]),
    ({"tensorrt": "8.6.1", "gpu_cc": ["6.1"]}, []),
    ({"tensorrt": "10.8.0.43", "gpu_cc": ["12.0"]}, []),
    ({"tensorrt": "10.13.3.9", "gpu_cc": ["8.9"]}, []),
])
def test_tensorrt_release_against_the_gpu(versions, expected):
    from stackpeel import combinations as combos
    assert [m.id for m in combos.match_combinations(versions) if m.id.startswith("tensorrt")] == expected


def test_tensorrt_version_and_gpu_read_from_a_pip_list():
    from stackpeel import combinations as combos
    v = combos.versions_from_text("tensorrt-cu12       10.7.0.23\n|   0  NVIDIA GeForce RTX 5090   Off |\n")
    assert v == {"tensorrt": "10.7.0.23", "gpu_cc": ["12.0"]}
    assert "tensorrt-below-10.8-blackwell" in [m.id for m in combos.match_combinations(v)]


HEALTHY = [
    # healthy lines of the same programs: nothing to explain
    "[TRT] [I] [MemUsageChange] Init cuDNN: CPU +1, GPU +10, now: CPU 2128, GPU 613 (MiB)",
    "[TRT] [I] Loaded engine size: 42 MiB",
    "GPU id : 0 (NVIDIA GeForce RTX 3090 (NVIDIA))",
    "Vulkan Instance Version: 1.3.275",
    "    License Status                    : Licensed (Expiry: 2026-12-1 0:0:0 GMT)",
    "  nvidia.com/gpu:     4",
    "Allocatable:\n  nvidia.com/gpu: 8",
    "INFO[0000] Wrote updated config to /etc/containerd/conf.d/99-nvidia.toml",
    "Auto-detected mode as 'legacy'",
    "I0604 13:40:12.687043 86169 nvc_info.c:228] selecting /usr/bin/nvidia-smi",
    "INFO:torch.distributed.elastic.rendezvous: Rendezvous complete for workers.",
    "[c10d] The client socket has connected to [localhost]:29500 on SocketImpl(fd=3)",
    "NVML library version: 570.158",
    "Driver Version: 570.158.01   CUDA Version: 12.8",
]

test_healthy_lines_name_nothing = healthy_test(HEALTHY)
