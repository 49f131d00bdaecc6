"""harv39d: an unbiased harvest of hardware and firmware faults (ECC, Xid, PCIe errors, thermal
slowdown, NVLink and the Fabric Manager's NVLS fabric), scored blind, and the general fixes its
misses ask for (docs/dev/harv39d.md).

Thirteen new training-side logs; explain named seven first before any change. The fixes:
- NCCL's own topology check ``P2P is disabled between NVLINK connected GPUs 1 and 0. This should
  not be the case given their connectivity, and is probably due to a hardware issue``
  (nccl src/graph/paths.cc ncclTopoCheckP2p, NVIDIA/nccl#2329): now ``nvlink-degraded`` (it was
  read as PCIe peer access blocked, ``nccl-p2p-blocked``, which stays among its could-be);
- a CUDA call of NCCL's NVLS transport failing (``transport/nvls.cc:244 NCCL WARN Cuda failure 1
  'invalid argument'``, NVIDIA/nccl#1488: the Fabric Manager restarted without a GPU reset): a
  weak ``fabric-registration-failed``;
- the kernel's PCIe AER lines naming the nvidia device (``nvidia 0000:03:00.0: AER: can't
  recover (no error_detected callback)``, an uncorrected ``PCIe Bus Error`` on it;
  rwth-i6/returnn#1500): ``gpu-hardware-fault``;
- ``CUDA illegal instruction`` (cudaErrorIllegalInstruction, a GPU-side fault) is no longer read
  as the shell's SIGILL (``cpu-instruction-set-unsupported``, mumax/3#58);
- a new code ``gpu-thermal-throttling`` for nvidia-smi's ``HW/SW Thermal Slowdown : Active``.
"""

from __future__ import annotations

from test_explain_patterns import codes as _codes, family_tests, ids as _ids

# nccl src/graph/paths.cc ncclTopoCheckP2p (NVIDIA/nccl 5067397c), as NCCL's WARN prints it
P2P_NVLINK = ("node1:1234:1290 [0] graph/paths.cc:396 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 "
              "and 0. This should not be the case given their connectivity, and is probably due to a hardware "
              "issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.")
# the kernel's AER report for the GPU's own device (drivers/pci/pcie/err.c, aer.c)
AER_CANT_RECOVER = "[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)"
AER_UNCORRECTED = ("[74889.542] nvidia 0000:05:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
                   "type=Transaction Layer, (Receiver ID)")
AER_OLD_KERNEL = "[74889.542239] nvidia 0000:02:00.0: device has no AER-aware driver"
# nvidia-smi -q, Clocks Event Reasons
THERMAL_HW = "            HW Thermal Slowdown           : Active"
THERMAL_SW = "        SW Thermal Slowdown               : Active"

FAMILIES = {
    "nvlink-degraded": [P2P_NVLINK],
    "gpu-hardware-fault": [AER_CANT_RECOVER, AER_UNCORRECTED, AER_OLD_KERNEL],
    "gpu-thermal-throttling": [THERMAL_HW, THERMAL_SW],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_nccl_p2p_nvlink_check_names_the_links_not_pcie_acs():
    # NVIDIA/nccl#2329's quote, in a torch distributed traceback
    text = (
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda "
        "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
        "[rank0]: Last error:\n"
        "[rank0]: P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their "
        "connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set "
        "NCCL_IGNORE_DISABLED_P2P=1.\n"
    )
    answer = _codes(text)
    assert answer[0] == "nvlink-degraded"


def test_pcie_peer_access_wording_keeps_its_reading():
    # CUDA's cudaErrorPeerAccessUnsupported stays nccl-p2p-blocked (ACS, IOMMU, GeForce)
    assert "nccl-p2p" in _ids("RuntimeError: CUDA error: peer access is not supported between these two devices")
    assert "nccl-p2p-disabled-between-nvlink-gpus" not in _ids(
        "NCCL INFO P2P is disabled between connected GPUs 1 and 0")


def test_nvls_transport_cuda_failure_names_the_fabric():
    # NVIDIA/nccl#1488 (nccl-tests on H100 with NVSwitch after a Fabric Manager restart)
    text = (
        "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'\n"
        "node23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1\n"
        "node23:12098:12141 [2] NCCL INFO init.cc:1196 -> 1\n"
        "node23:12098:12141 [2] NCCL INFO group.cc:75 -> 1 [Async thread]\n"
    )
    assert _codes(text)[0] == "fabric-registration-failed"


def test_cuda_failures_elsewhere_are_not_the_fabric():
    # the same WARN from NCCL's other transports, and NVLS's INFO return-code trail alone
    assert "nccl-nvls-transport-cuda-failure" not in _ids(
        "node1:1:1 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported'")
    assert "nccl-nvls-transport-cuda-failure" not in _ids("node23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1")
    # NCCL's numbered out of memory in the NVLS transport stays gpu-out-of-memory (review30)
    for line in ("gpu1:2:2 [0] transport/nvls.cc:160 NCCL WARN Cuda failure 2 'out of memory'",
                 "gpu1:2:2 [0] transport/nvls.cc:160 NCCL WARN Cuda failure 'out of memory'"):
        assert "nccl-nvls-transport-cuda-failure" not in _ids(line), line


def test_returnn_dmesg_aer_names_the_gpu_hardware():
    # rwth-i6/returnn#1500 (the maintainer's dmesg)
    text = (
        "[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
        "[  +0.000001] snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)\n"
        "[  +0.000008] pcieport 0000:00:03.0: AER: device recovery failed\n"
        "[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0\n"
        "[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
        "Layer, (Requester ID)\n"
    )
    assert _codes(text)[0] == "gpu-hardware-fault"


def test_aer_near_misses_stay_quiet():
    # corrected errors on the GPU, and other devices' AER lines (Wi-Fi, Thunderbolt, NVMe)
    for line in (
        "nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "ath9k 0000:2d:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer",
        "thunderbolt 0000:0a:00.0: AER: can't recover (no error_detected callback)",
        "pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5",
        "xhci_hcd 0000:3e:00.0: device has no AER-aware driver",
    ):
        assert "pcie-aer-uncorrectable-on-nvidia-device" not in _ids(line), line


def test_cuda_illegal_instruction_is_not_sigill():
    # mumax/3#58's wording of cudaErrorIllegalInstruction, and the CUDA error string itself
    for line in ('It is something like "CUDA illegal instructions", "Unknwon CU result: 700".',
                 "RuntimeError: CUDA error: an illegal instruction was encountered"):
        assert "cpu-instruction-set-unsupported" not in _codes(line), line
    # the shell's SIGILL keeps its reading
    assert _codes("Illegal instruction (core dumped)")[0] == "cpu-instruction-set-unsupported"
    assert "sigill-illegal-instruction" in _ids("zsh: illegal hardware instruction  python train.py")


def test_nvidia_smi_thermal_section_names_the_throttling():
    # nvidia-smi -q -d PERFORMANCE on a hot card
    text = (
        "    Clocks Event Reasons\n"
        "        Idle                              : Not Active\n"
        "        Applications Clocks Setting       : Not Active\n"
        "        SW Power Cap                      : Not Active\n"
        "        HW Slowdown                       : Active\n"
        "            HW Thermal Slowdown           : Active\n"
        "            HW Power Brake Slowdown       : Not Active\n"
        "        Sync Boost                        : Not Active\n"
        "        SW Thermal Slowdown               : Active\n"
    )
    assert _codes(text)[0] == "gpu-thermal-throttling"


def test_healthy_clock_reasons_stay_quiet():
    # open_clip#703's healthy section: every thermal reason 'Not Active'
    for line in ("            HW Thermal Slowdown           : Not Active",
                 "        SW Thermal Slowdown               : Not Active",
                 "clocks_event_reasons.hw_thermal_slowdown"):
        assert "nvidia-smi-thermal-slowdown-active" not in _ids(line), line
