"""harv36d: an unbiased harvest of profiling, debugging and monitoring tools on GPU hosts
(Nsight Compute/Systems, nvprof, CUPTI via torch/TensorFlow/Paddle profilers, cuda-gdb, DCGM and
dcgm-exporter, gpustat/pynvml, Prometheus GPU exporters), scored blind, and the general fixes its
misses ask for (docs/dev/harv36d.md).

The fixed misses (A1/A2, a program's own message with no signature or only a guess):
- nvprof's ``Warning: nvprof is not supported on devices with compute capability 8.0 and higher.``
  (PaddleJitLab/CUDATutorial#5; was a guess, framework-gpu-arch-unsupported); now
  ``nvprof-unsupported-gpu``;
- cuda-gdb's ``Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is not
  possible`` (NVIDIA/cuda-python#2711; was unknown); now ``cuda-debugger-backend-missing``;
- DCGM's profiling-module errors for a GPU without DCP metrics (NVIDIA/DCGM#47, a P100:
  ``Error setting watches. Result: -33: This request is serviced by a module of DCGM that is not
  currently loaded``; was unknown); now ``dcgm-profiling-unsupported-gpu``;
- DCGM_ST_PROFILING_LIBRARY_ERROR ``The third-party Profiling module returned an unrecoverable
  error`` (NVIDIA/dcgm-exporter#148, the GSP driver bug; was unknown); now
  ``dcgm-profiling-module-failed``;
- DCGM's errorString ``Cannot perform the requested operation because NVML doesn't exist on this
  system`` (kubernetes-sigs/dra-driver-nvidia-gpu#166; was a guess); now a signature of
  ``nvml-unavailable``.
Each message is the program's own text (its source, or a training-side thread's paste), run through
the wrappers pasted logs put around lines, with near-misses that must keep their reading.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# nvprof (CUDA 11.x toolkits) on an Ampere or newer GPU
NVPROF = "======== Warning: nvprof is not supported on devices with compute capability 8.0 and higher."
NVPROF_OLD = "Warning: This version of nvprof doesn't support the underlying device, GPU profiling skipped"
# cuda-gdb without the driver's debugger back-end
CUDA_GDB = "Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is not possible"
# DCGM's profiling (DCP) module on a GPU that has no DCP metrics
DCP_ARCH = ("2024-04-05 15:32:02.811 ERROR [1:1] [[Profiling]] DCP metrics are supported for Volta, Turing or "
            "Ampere GPUs architectures only")
DCP_NOT_SUPPORTED = ('time="2021-04-09T09:26:00Z" level=info msg="Not collecting DCP metrics: Error getting '
                     'supported metrics: Profiling is not supported for this group of GPUs or GPU"')
DCP_MODULE = ('time="2023-05-08T11:34:59Z" level=info msg="Not collecting DCP metrics: Error getting supported '
              'metrics: This request is serviced by a module of DCGM that is not currently loaded"')
DCP_MODULE_NEW = ("2025/03/03 06:51:55 INFO Not collecting DCP metrics: This request is serviced by a module "
                  "of DCGM that is not currently loaded")
DCGMI_PROFILE = ("Error: Unable to Get supported metric groups: This request is serviced by a module of DCGM "
                 "that is not currently loaded.")
DMON_33 = "Error setting watches. Result: -33: This request is serviced by a module of DCGM that is not currently loaded"
# DCGM_ST_PROFILING_LIBRARY_ERROR
PROF_LIB = ("Failed to watch metrics: Error watching fields: The third-party Profiling module returned an "
            "unrecoverable error")
HOSTENGINE_37 = ("[Profiling] Got error from GetSamples: -37 The third-party Profiling module returned an "
                 "unrecoverable error")
# DCGM's errorString when it cannot load libnvidia-ml
NVML_GONE = ('time="2024-11-13T22:25:51Z" level=info msg="Not collecting GPU metrics; Error getting devices count: '
             "Cannot perform the requested operation because NVML doesn't exist on this system.\"")

FAMILIES = {
    "nvprof-unsupported-gpu": [NVPROF, NVPROF_OLD],
    "cuda-debugger-backend-missing": [CUDA_GDB],
    "dcgm-profiling-unsupported-gpu": [DCP_ARCH, DCP_NOT_SUPPORTED, DCGMI_PROFILE, DMON_33],
    "dcgm-profiling-module-failed": [PROF_LIB, HOSTENGINE_37],
    "nvml-unavailable": [NVML_GONE],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_nvprof_paste_names_nvprof_not_an_arch_build():
    # PaddleJitLab/CUDATutorial#5, the reporter's console
    text = (
        "D:\\Codes\\CUDATutorial\\02_first_kernel>nvprof add.exe\n"
        "======== Warning: nvprof is not supported on devices with compute capability 8.0 and higher.\n"
        "                  Use NVIDIA Nsight Systems for GPU tracing and CPU sampling and NVIDIA Nsight Compute "
        "for GPU profiling.\n"
        "                  Refer https://developer.nvidia.com/tools-overview for more details.\n"
    )
    assert _codes(text)[:1] == ["nvprof-unsupported-gpu"]


def test_nvprof_near_misses_stay_quiet():
    # nvprof's permission warning and its plain start banner keep their reading
    assert "nvprof-cc80-unsupported" not in _ids(
        "==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on the target device.")
    assert "nvprof-cc80-unsupported" not in _ids("==12345== NVPROF is profiling process 12345, command: ./a.out")
    assert "nvprof-cc80-unsupported" not in _ids("======== Warning: No CUDA application was profiled, exiting")
    # a tutorial's note that mentions the limit without nvprof's words
    assert "nvprof-cc80-unsupported" not in _ids("nvprof does not work on my compute capability 8.6 card")


def test_cuda_gdb_paste_names_the_debugger_library():
    # NVIDIA/cuda-python#2711, cuda-gdb's output in the analysis
    text = (
        "FAILED cuda_core/tests/test_program.py::test_cuda_gdb_shows_nvrtc_debug_source_lines - AssertionError: "
        "[Thread debugging using libthread_db enabled]\n"
        "[Inferior 1 (process 718707) exited normally]\n"
        "Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is not possible\n"
    )
    assert _codes(text)[:1] == ["cuda-debugger-backend-missing"]


def test_cuda_gdb_near_misses_stay_quiet():
    assert "cuda-gdb-backend-not-found" not in _ids("NVIDIA (R) CUDA Debugger")
    assert "cuda-gdb-backend-not-found" not in _ids(
        "INFO[0000] Selecting /lib/x86_64-linux-gnu/libcudadebugger.so.575.57.08 as "
        "/lib/x86_64-linux-gnu/libcudadebugger.so.575.57.08")
    assert "cuda-gdb-backend-not-found" not in _ids("Debugging is not possible without it.")


def test_dcgmi_dmon_on_a_pascal_gpu_names_the_missing_dcp():
    # NVIDIA/DCGM#47, the title and the reporter's sentence about fields above 1000
    text = (
        "Error setting watches. Result: -33: This request is serviced by a module of DCGM that is not "
        "currently loaded\n\n"
        "I am using p100 gpu, and there is a problem that more than 1000 features(1002,1003,1004,1005....) are "
        "not work with this error code\n"
    )
    assert _codes(text)[:1] == ["dcgm-profiling-unsupported-gpu"]


def test_exporter_start_on_a_p40_names_the_missing_dcp():
    # dcgm-exporter 2.4.5 on a Tesla P40 (NVIDIA/dcgm-exporter#158's pod log)
    text = (
        'time="2023-05-08T11:34:59Z" level=info msg="Starting dcgm-exporter"\n'
        'time="2023-05-08T11:34:59Z" level=info msg="DCGM successfully initialized!"\n'
        + DCP_MODULE + "\n"
        'time="2023-05-08T11:34:59Z" level=warning msg="Skipping line 34 (\'DCGM_FI_PROF_GR_ENGINE_ACTIVE\'): '
        'DCP metrics not enabled"\n'
    )
    assert _codes(text)[:1] == ["dcgm-profiling-unsupported-gpu"]


def test_dcgm_module_near_misses_stay_quiet():
    # the same module message for the CPU and MIG-hierarchy modules on a healthy exporter
    for line in (
        'level=info msg="Not collecting CPU metrics; Error retrieving DCGM MIG hierarchy: This request is '
        'serviced by a module of DCGM that is not currently loaded"',
        'level=INFO msg="Not collecting CPU Core metrics; error retrieving DCGM CPU hierarchy: This request is '
        'serviced by a module of DCGM that is not currently loaded"',
        'level=INFO msg="Collecting DCP Metrics"',
        "Error setting watches. Result: -15: Host engine is running as non-root",
    ):
        assert not {"dcgm-dcp-unsupported", "dcgmi-watch-module-not-loaded"} & set(_ids(line)), line


def test_profiling_library_error_near_misses_stay_quiet():
    assert "dcgm-profiling-library-error" not in _ids(
        "DCGM_ST_PROFILING_MULTI_PASS: The requested profiling metrics cannot be collected in a single pass")
    assert "dcgm-profiling-library-error" not in _ids("Error watching fields: Bad parameter passed to function")


def test_nvml_gone_in_a_kind_node_names_nvml():
    # kubernetes-sigs/dra-driver-nvidia-gpu#166
    text = (
        "Was trying to get dcgm-exporter working after installing this, but helm install errored with\n\n"
        "> Not collecting GPU metrics; Error getting devices count: Cannot perform the requested operation "
        "because NVML doesn't exist on this system.\n"
    )
    assert _codes(text)[:1] == ["nvml-unavailable"]


def test_nvml_gone_near_misses_stay_quiet():
    assert "dcgm-nvml-not-loaded" not in _ids("NVML doesn't support this GPU")
    assert "dcgm-nvml-not-loaded" not in _ids(
        "Cannot perform the requested operation because the GPU is in use")


# dcgm-exporter's start-up notice is said on every GPU without profiling counters and the exporter goes
# on: alone it names nothing (as test_explain_patterns_harve's healthy notices); beside a failure it does
@pytest.mark.parametrize("line", [DCP_MODULE, DCP_MODULE_NEW])
def test_exporter_dcp_notice_alone_names_nothing(line):
    assert _codes(line + "\n") == []


@pytest.mark.parametrize("line", [DCP_MODULE, DCP_MODULE_NEW])
def test_exporter_dcp_notice_beside_a_failure_names_the_missing_dcp(line):
    text = line + "\nError: failed to collect DCGM_FI_PROF_GR_ENGINE_ACTIVE from the exporter\n"
    assert _codes(text)[:1] == ["dcgm-profiling-unsupported-gpu"]


def test_exporter_skipping_a_dcp_field_is_its_own_evidence():
    # dcgm-exporter's counters parser: a DCGM_FI_PROF_* line of the CSV dropped for want of DCP
    line = ('time="2023-05-08T11:34:59Z" level=warning msg="Skipping line 34 (\'DCGM_FI_PROF_GR_ENGINE_ACTIVE\'): '
            'DCP metrics not enabled"')
    assert _codes(line + "\n")[:1] == ["dcgm-profiling-unsupported-gpu"]
    # a field below 1000 is never skipped for DCP; another reason for skipping is no DCP evidence
    assert "dcgm-exporter-dcp-field-skipped" not in _ids(
        "level=warning msg=\"Skipping line 12 ('DCGM_FI_DEV_GPU_UTIL'): metric not enabled\"")
