"""Environment messages of the system at run time, harvested from their own source (harvj):
nvidia-smi and NVML's strings, the NVIDIA kernel module's NVRM lines (Xid and GPU initialisation),
the Fabric Manager, MIG, ECC and row remapping, the persistence daemon, and the CUDA driver and
runtime error names and strings (cuda.h CUresult, driver_types.h cudaError_t, libcudart's
cudaGetErrorString). Each message below is the program's text with its variable parts filled in
(the file or document that has it is named above it); each must rank its code first in every
wrapper pasted logs put around it, the kernel log's own prefixes included. The healthy lines are
what these programs print on machines that work: they must name nothing. docs/dev/harvest-harvj.md
has the table of what explain named for each message before and after.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

#: how kernel and service lines reach a pasted log: dmesg's clock, journalctl's host prefix
KERNEL_WRAPPERS = {
    "dmesg": lambda m: "[ 1234.567890] " + m,
    "journalctl": lambda m: "Nov 05 13:55:26 node1 kernel: " + m,
}

FAMILIES = {
    "gpu-hardware-fault": [
        # NVIDIA Xid catalog (Ampere and later) / open-gpu-kernel-modules nvErrorLog: the hardware Xids
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:b3:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) has "
        "been detected on GPU in the framebuffer at partition 6, subpartition 0.",
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
        "NVRM: Xid (PCI:0000:3b:00): 74, pid=3456, name=python, NVLink: fatal error detected on link 3(0x0, 0x0)",
        "NVRM: Xid (PCI:0000:3b:00): 95, pid=1234, name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
        "NVRM: Xid (PCI:0000:01:00): 119, pid=1183, name=nvidia-smi, Timeout after 6s of waiting for RPC "
        "response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
        # the Xids of Hopper and Blackwell: 140 unrecovered ECC, 144-150 NVLink, 154 recovery action
        "NVRM: Xid (PCI:0000:18:00): 140, pid=1234, name=python, Unrecovered ECC Error",
        "NVRM: Xid (PCI:0000:18:00): 145, pid=1234, name=python, NVLink: RLW Error (0x0)",
        "NVRM: Xid (PCI:0000:18:00): 154, pid='<unknown>', name=<unknown>, GPU recovery action changed from "
        "0x0 (None) to 0x1 (GPU Reset Required)",
        "NVRM: Xid (PCI:0000:18:00): 154, pid='<unknown>', name=<unknown>, GPU recovery action changed from "
        "0x0 (None) to 0x2 (Node Reboot Required)",
        # older drivers print the bus id without 'PCI:'
        "NVRM: Xid (0000:02:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU",
        # open-gpu-kernel-modules nvstatus: NV_ERR_GPU_IS_LOST through NV_CHECK_OK
        "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) "
        "returned from intrServiceStallSingle_HAL(pGpu, pIntr, MC_ENGINE_IDX_GSP, NV_TRUE) @ kernel_gsp.c:1842",
        # kernel_gsp.c _kgspLogXid119's banner
        "NVRM: GPU0 _kgspLogXid119: ********************************* GSP Timeout **********************************",
        # libcudart cudaGetErrorString(cudaErrorContained = 226) through torch
        "RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error",
        # nvidia-smi -q -d ROW_REMAPPER / PAGE_RETIREMENT
        "        Remapping Failure Occurred        : Yes",
        "            Pending                       : Yes",
        "        Pending Page Blacklist            : Yes",
        # nvidia-smi's wording of NVML_ERROR_INSUFFICIENT_POWER
        "nvidia-smi: Unable to determine the device handle for GPU 0000:01:00.0: Unable to communicate with GPU "
        "because it is insufficiently powered. This may be because not all required external power cables are "
        "attached, or the attached cables are not seated properly.",
        # nvidia-smi with nvmlErrorString (already named; kept as the class's other raise sites)
        "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error",
        "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU",
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
    ],
    "nvidia-gpu-init-failed": [
        # open-gpu-kernel-modules kernel_gsp.c kgspInitRm_IMPL / _kgspBootGspRm
        "NVRM: GPU0 kgspInitRm_IMPL: cannot bootstrap GSP-RM",
        "NVRM: _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP",
        "NVRM: GPU0 RmInitAdapter: Cannot initialize GSP firmware RM",
        # kernel-open/nvidia/nv.c
        "NVRM: rm_init_adapter failed, device minor number 0",
        "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1601)",
        # nvidia-smi with nvmlErrorString(NVML_ERROR_IRQ_ISSUE)
        "Unable to determine the device handle for GPU 0000:01:00.0: The NVIDIA kernel module detected an issue "
        "with GPU interrupts.Consult the \"Common Problems\" Chapter of the NVIDIA Driver README for details and "
        "steps that can be taken to resolve this issue.",
        # NVIDIA/nvidia-persistenced nvidia-persistenced.c (fallback: alone it names the cause)
        "nvidia-persistenced failed to initialize. Check syslog for more details.",
        "nvidia-persistenced[1234]: Unable to find any NVIDIA devices",
        "No devices were found",
    ],
    "cuda-devices-unavailable": [
        # libcudart cudaGetErrorString(cudaErrorDeviceAlreadyInUse = 216); cuda.h CUDA_ERROR_CONTEXT_ALREADY_IN_USE
        "RuntimeError: CUDA error: exclusive-thread device already in use by a different thread",
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_CONTEXT_ALREADY_IN_USE: exclusive-thread "
        "device already in use by a different thread",
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
    ],
    "env-switch-set": [
        # libcudart cudaGetErrorString(cudaErrorJitCompilationDisabled = 223)
        "RuntimeError: CUDA error: PTX JIT compilation was disabled",
        "CUDA_ERROR_JIT_COMPILATION_DISABLED: PTX JIT compilation was disabled",
    ],
    "fabric-manager-not-running": [
        # nv-fabricmanager's version check (two releases' wording)
        "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with "
        "driver version 530.41.03. Please update with matching NVIDIA driver package.",
        "nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match "
        "with driver version 550.120. Please update with the matching NVIDIA driver package.",
        # cuda.h CUDA_ERROR_SYSTEM_NOT_READY (802) through torch, numba
        "RuntimeError: CUDA error: system not yet initialized",
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
        "CUDA_ERROR_SYSTEM_NOT_READY (802)",
    ],
    "fabric-manager-no-nvswitch": [
        # nv-fabricmanager on a system without NVSwitch
        "nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with "
        "error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
    ],
    "mig-mode-change-blocked": [
        # nvidia-smi --gpu-reset before R450
        "Unable to reset this GPU because it's being used by some other process (e.g. CUDA application, graphics "
        "application like X server, monitoring application like other instance of nvidia-smi). Please first kill "
        "all processes using this GPU and all compute applications running in the system.",
        "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use by another client",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, wrappers=KERNEL_WRAPPERS)

test_new_code_is_sourced = sourced_roots_test(["fabric-manager-no-nvswitch"])

test_healthy = healthy_test([
    # NVRM and module lines of every boot with a working GPU
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023",
    "NVRM: GPU at PCI:0000:3b:00: GPU-8a5b6c3e-1111-2222-3333-444455556666",
    "NVRM: GPU Board Serial Number: 1324020012345",
    "NVRM: Persistence mode is deprecated and will be removed in a future release. Please use nvidia-persistenced instead.",
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 235",
    "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  535.104.05",
    "nvidia-uvm: Loaded the UVM driver, major device number 511.",
    # nvidia-smi -q on a healthy GPU
    "            Pending                       : No",
    "        Pending Page Blacklist            : No",
    "    ECC Mode\n        Current                           : Enabled\n        Pending                           : Enabled",
    "    MIG Mode\n        Current                           : Disabled\n        Pending                           : Disabled",
    "    Fabric\n        State                             : Completed\n        Status                            : Success",
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
    "Enabled persistence mode for GPU 00000000:3B:00.0.",
    "Persistence mode is already Enabled for GPU 00000000:3B:00.0.",
    "GPU 00000000:3B:00.0 was successfully reset.",
    "All done.",
    # the daemons on a working node
    "nvidia-persistenced[1234]: Started (1234)",
    "nvidia-persistenced[1234]: device 0000:3b:00.0 - registered",
    "nv-fabricmanager[2345]: Successfully configured all the available NVSwitches to route GPU NVLink traffic.",
    "Started NVIDIA fabric manager service.",
    # an Xid nobody needs to service: the catalog's recovery action None
    "AMD-Vi: Interrupt remapping enabled",
    "DMAR: IOMMU enabled",
    "CUDA_DISABLE_PTX_JIT=0 python train.py",
])


def _top(text: str):
    return [c.code for c in explain_text(text).candidates][:1]


def test_fabric_manager_without_switches_outranks_the_failed_service():
    # the whole systemd record: the service's own failure lines name the generic code too
    log = ("systemd[1]: Starting NVIDIA fabric manager service...\n"
           "nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed "
           "with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
           "systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE\n"
           "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n")
    assert _top(log) == ["fabric-manager-no-nvswitch"]


def test_a_recovery_action_of_none_is_no_hardware_fault():
    # Xid 154 back to None: the GPU is usable again; only the any-Xid fallback may read it
    line = ("NVRM: Xid (PCI:0000:18:00): 154, pid='<unknown>', name=<unknown>, GPU recovery action changed "
            "from 0x1 (GPU Reset Required) to 0x0 (None)\n")
    assert _top(line) != ["gpu-hardware-fault"]


def test_persistenced_failure_yields_to_the_kernel_line_under_it():
    log = ("nvidia-persistenced failed to initialize. Check syslog for more details.\n"
           "NVRM: API mismatch: the client has the version 535.129.03, but\n"
           "NVRM: this kernel module has the version 535.104.05.  Please\n"
           "NVRM: make sure that this kernel module and all NVIDIA driver\n"
           "NVRM: components have the same version.\n")
    assert _top(log) == ["driver-library-mismatch"]


def test_a_row_remapper_without_failure_names_nothing():
    # nvidia-smi -q on a healthy GPU: no code, and no unexplained error line either (exit 0)
    expl = explain_text("        Remapping Failure Occurred        : No\n")
    assert expl.candidates == () and not expl.has_errors and int(expl.exit_code) == 0


def test_the_kernels_note_on_an_unsigned_module_is_no_error():
    """Printed on every load of an out-of-tree module without a signature (the module loads);
    Secure Boot's refusal is another message (nvidia-module-... codes)."""
    expl = explain_text("[    3.141592] nvidia: module verification failed: signature and/or required "
                        "key missing - tainting kernel\n")
    assert expl.candidates == () and not expl.has_errors and int(expl.exit_code) == 0
