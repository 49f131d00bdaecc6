"""Bare numeric status codes read as their names (stackpeel.explain.numbers, knowledge/status_codes.json).

A program often reports a failure only as a number (``exited with code 132``, ``exit code
-1073741819``, ``CUDA error 35``, ``NCCL error 2``, a Vulkan call's ``-4``); explain's signatures
are written for the names and texts. The names come from the vendors' headers and libraries
(scripts/build_status_codes.py), so these tests take them from the same file: every value must
render its own name in its context, and the name must lead explain to the right code.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from stackpeel.explain import explain_text, match_codes
from stackpeel.explain import numbers as N
from stackpeel.explain.parser import scan_text
from test_explain_translate import cpu_on_adversarial_lines

ROOT = Path(__file__).resolve().parent.parent
DOC = json.loads(N.FILE.read_text(encoding="utf-8"))
NS = DOC["namespaces"]


def first(text: str) -> str:
    got = explain_text(text if text.endswith("\n") else text + "\n").candidates
    return got[0].code if got else ""


# -- the data -------------------------------------------------------------------------------

def test_the_table_records_its_sources_and_holds_every_namespace():
    assert set(NS) == {"cudaError", "CUresult", "ncclResult", "cublasStatus", "cudnnStatus", "nvmlReturn",
                       "NTSTATUS", "HRESULT", "VkResult", "signal"}
    assert set(DOC["sources"]) == set(NS)
    for ns, src in DOC["sources"].items():
        assert src["package"] and src["version"] and src["file"], ns
    assert DOC["sources"]["cudaError"]["texts"].startswith("cudaGetErrorString")
    assert NS["cudaError"]["35"] == ["cudaErrorInsufficientDriver",
                                     "CUDA driver version is insufficient for CUDA runtime version"]
    assert NS["cudaError"]["804"][0] == "cudaErrorCompatNotSupportedOnDevice"
    assert NS["CUresult"]["999"] == ["CUDA_ERROR_UNKNOWN"]
    assert NS["ncclResult"]["2"][0] == "ncclSystemError"
    assert NS["NTSTATUS"]["0xC0000005"] == ["STATUS_ACCESS_VIOLATION"]
    assert NS["NTSTATUS"]["0xC0000135"] == ["STATUS_DLL_NOT_FOUND"]
    assert NS["HRESULT"]["0x887A0006"] == ["DXGI_ERROR_DEVICE_HUNG"]
    assert NS["VkResult"]["-4"] == ["VK_ERROR_DEVICE_LOST"]
    assert NS["signal"]["4"] == ["SIGILL", "Illegal instruction"]
    assert NS["signal"]["9"] == ["SIGKILL", "Killed"] and NS["signal"]["11"] == ["SIGSEGV", "Segmentation fault"]
    assert len(NS["cudaError"]) > 100 and len(NS["CUresult"]) > 90 and len(NS["VkResult"]) > 30


def test_the_windows_values_are_the_ones_the_build_script_keeps():
    spec = importlib.util.spec_from_file_location("build_status_codes", ROOT / "scripts" / "build_status_codes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert sorted(v[0] for v in NS["NTSTATUS"].values()) == sorted(mod.NTSTATUS_KEEP)
    assert {v[0] for v in NS["HRESULT"].values()} >= set(mod.HRESULT_KEEP)
    assert all(v[0].startswith(("DXGI_ERROR_", "E_")) for v in NS["HRESULT"].values())


# -- every value renders its own name -----------------------------------------------------------

def _lines_for(ns: str, key: str):
    """Lines a program prints with this value in a context of its namespace."""
    if ns == "cudaError":
        return [f"RuntimeError: CUDA error {key}", f"cudaMalloc returned {key}", f"cudaError_t = {key}"]
    if ns == "CUresult":
        return [f"CUDA driver error: {key}", f"cuInit(0) failed: {key}", f"CUresult {key}"]
    if ns == "ncclResult":
        return [f"NCCL error {key}", f"ncclCommInitRank failed with error {key}"]
    if ns == "cublasStatus":
        return [f"cuBLAS error {key}", f"cublasCreate_v2 returned {key}"]
    if ns == "cudnnStatus":
        return [f"cudnnStatus_t {key}", f"cudnnCreate failed: {key}"]
    if ns == "nvmlReturn":
        return [f"nvmlInit_v2 returned {key}", f"NVML error {key}"]
    if ns == "VkResult":
        return [f"vkQueueSubmit returned {key}", f"VkResult: {key}"] if int(key) < 0 else []
    if ns == "NTSTATUS":
        u = int(key, 16)
        return [f"exit status {key.lower()}", f"Process finished with exit code {u - 2**32}", f"exited with code {u}"]
    if ns == "HRESULT":
        u = int(key, 16)
        return [f"GetDeviceRemovedReason: {key}", f"HRESULT {u - 2**32}"]
    if ns == "signal":
        n = int(key)
        return [f"killed by signal {n}", f"exit code {128 + n}"] + ([f"  exitcode  : -{n} (pid: 77)"] if n > 1 else [])
    raise AssertionError(ns)


def test_every_value_of_every_namespace_renders_its_own_name():
    wrong, n = [], 0
    for ns, values in NS.items():
        for key, names in values.items():
            if names[0] in ("cudaSuccess", "CUDA_SUCCESS", "ncclSuccess", "CUBLAS_STATUS_SUCCESS",
                            "CUDNN_STATUS_SUCCESS", "NVML_SUCCESS"):
                continue  # "CUDA error 0" is nobody's failure, but read all the same below
            for line in _lines_for(ns, key):
                got = N.read_numbers(line)
                n += 1
                if not N.GATE_RE.search(line):  # the scanner reads only the lines the gate flags
                    wrong.append((ns, line, "not flagged by the gate"))
                if N.render(tuple(names)) not in got or not got.startswith(line.split(" (pid")[0]):
                    wrong.append((ns, line, got))
    assert n > 1000 and not wrong, wrong[:10]


@pytest.mark.parametrize("line,want", [
    ("Process finished with exit code -1073741819 (0xC0000005)",
     "Process finished with exit code -1073741819 (0xC0000005) [STATUS_ACCESS_VIOLATION]"),
    ("error: process exited with code 3221225781", "error: process exited with code 3221225781 [STATUS_DLL_NOT_FOUND]"),
    ("error: process exited with code 132", "error: process exited with code 132 [SIGILL: Illegal instruction]"),
    ("RuntimeError: CUDA error 35",
     "RuntimeError: CUDA error 35 [cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version]"),
    ("NCCL error 2", "NCCL error 2 [ncclSystemError: unhandled system error (run with NCCL_DEBUG=INFO for details)]"),
    ("  exitcode  : -11 (pid: 1234)", "  exitcode  : -11 [SIGSEGV: Segmentation fault] (pid: 1234)"),
    ("HRESULT 0x887a0006", "HRESULT 0x887a0006 [DXGI_ERROR_DEVICE_HUNG]"),
    ("vkCreateDevice returned -4", "vkCreateDevice returned -4 [VK_ERROR_DEVICE_LOST]"),
    ("failed call to cuInit: UNKNOWN ERROR (303)",
     "failed call to cuInit: UNKNOWN ERROR (303) [CUDA_ERROR_SHARED_OBJECT_INIT_FAILED]"),
    ("numba.cuda.cudadrv.driver.CudaAPIError: [804] Call to cuInit results in UNKNOWN_CUDA_ERROR",
     "numba.cuda.cudadrv.driver.CudaAPIError: [804] [CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE] Call to cuInit results in UNKNOWN_CUDA_ERROR"),
    ('CUDA error at x.cu:12 code=35 "cudaGetDeviceCount(&n)"',
     'CUDA error at x.cu:12 code=35 [cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version] "cudaGetDeviceCount(&n)"'),
    ("make: *** [Makefile:5: all] Error 132", "make: *** [Makefile:5: all] Error 132 [SIGILL: Illegal instruction]"),
    ("Exited (137) 5 seconds ago", "Exited (137) [SIGKILL: Killed] 5 seconds ago"),
    ("returned non-zero exit status 134.", "returned non-zero exit status 134 [SIGABRT: Aborted]."),
])
def test_lines_users_paste_get_the_name(line, want):
    assert N.read_numbers(line) == want
    assert N.read_numbers(want) == want  # read once: the name is there now


# -- what must stay as written ------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "exit code 0", "Process finished with exit code 1", "Process finished with exit code -1",
    "error: process exited with code 1", "Command '['ninja', '-v']' returned non-zero exit status 1.",
    "exit code 2", "code 1", "loss: 0.35 epoch 35 step 139", "Epoch 35/100", "listening on port 29500",
    "MASTER_PORT=29500 code 35", "CUDA error at x.cu:12 code=35(cudaErrorInsufficientDriver) \"cudaGetDeviceCount(&n)\"",
    "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version",
    "Signal 11 (SIGSEGV) received by PID 1234", "Segmentation fault (core dumped) exit code 139",
    "Error 804: forward compatibility was attempted on non supported HW",
    "RuntimeError: CUDA error: out of memory", "NCCL version 2.18.1+cuda12.1", "CUDA Version: 12.2",
    "vkAcquireNextImageKHR returned 2", "cudnnStatus_t 9", "CUDA_VISIBLE_DEVICES=3 python x.py",
    "exit code 255", "exit code 127", "0xC0000999 is not a status we keep", "", "no digits here: exit code",
    # old torch's numbering (CUDA <= 10.0: 8 was invalid device function) with its own text
    "RuntimeError: cuda runtime error (8) : invalid device function at /pytorch/aten/src/THC/THCGeneral.cpp:405",
    "RuntimeError: NCCL Error 2: unhandled system error",  # the program's own text after the number
    "FAILED: [code=1] ht_cuda.cuda.o im2ht.o -lcudart -o im2ht.so",  # ninja's code on a line of CUDA objects
])
def test_lines_without_a_status_number_are_left_as_they_are(line):
    assert N.read_numbers(line) == line
    assert scan_text(line + "\n").translated == {}


# -- the first cause explain names ------------------------------------------------------------

@pytest.mark.parametrize("line,code", [
    ("error: process exited with code 132", "cpu-instruction-set-unsupported"),
    ("Process finished with exit code -1073741795 (0xC000001D)", "cpu-instruction-set-unsupported"),
    ("error: process exited with code 3221225781", "library-missing"),
    ("Process finished with exit code -1073741515", "library-missing"),
    ("RuntimeError: CUDA error 35", "driver-too-old-for-torch"),
    ("cudaGetDeviceCount returned 804", "cuda-forward-compat-unsupported"),
    ("NCCL error 2", "nccl-error"),
    ("HRESULT 0x887a0006", "gpu-display-watchdog"),
    ("vkQueueSubmit returned -4", "gpu-display-watchdog"),
    ("  exitcode  : -9 (pid: 1234)", "host-oom-killed"),       # SIGKILL: the OOM killer, as before
    ("Exit Code: 137", "host-oom-killed"),
    ("  exitcode  : -7 (pid: 1234)", "nccl-shm-too-small"),    # SIGBUS: shared memory, as before
    ("exit code 139", "native-crash-in-gpu-library"),           # SIGSEGV: a native crash (a guess)
    ("Process finished with exit code -1073741819 (0xC0000005)", "native-crash-in-gpu-library"),
])
def test_the_name_leads_explain_to_its_code(line, code):
    assert first(line) == code, explain_text(line + "\n").candidates[:2]


@pytest.mark.parametrize("shape", [
    "{}", "[rank3]: {}", "[default0]:{}", '> {}', '"{}"', "    {}",
    "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    run()\n{}",
    "2026-12-02 10:11:12,345 ERROR {}",
])
@pytest.mark.parametrize("line,code", [
    ("RuntimeError: CUDA error 35", "driver-too-old-for-torch"),
    ("error: process exited with code 132", "cpu-instruction-set-unsupported"),
    ("subprocess.CalledProcessError: Command '['x']' died: exit code 3221225781", "library-missing"),
    ("RuntimeError: NCCL error 2", "nccl-error"),
])
def test_every_paste_shape_is_read(shape, line, code):
    assert first(shape.format(line)) == code


def test_the_evidence_shows_the_line_as_written():
    for raw in ("error: process exited with code 132", "[rank3]: RuntimeError: NCCL error 2"):
        e = explain_text(raw + "\n")
        shown = [(x.stream + " " + x.text).strip() for x in e.candidates[0].evidence]
        assert shown == [raw], shown
        assert "[" not in shown[0].split(":", 1)[-1] or "[rank3]" in shown[0]
    r = scan_text("step 1\nerror: process exited with code 132\n")
    assert r.translated == {2: "error: process exited with code 132"}


def test_match_codes_reads_a_status_number_as_the_scanner_does():
    assert match_codes("error: process exited with code 132")[:1] == ["cpu-instruction-set-unsupported"]
    assert "driver-too-old-for-torch" in match_codes("RuntimeError: CUDA error 35")
    assert match_codes("exit code 0") == []


# -- linear time ---------------------------------------------------------------------------------

def test_reading_is_linear_on_adversarial_lines():
    """Lines made of the contexts' words over and over, 16 KB each (the scanner's cut):
    measured, the worst line 0.02 s of CPU and explain over 1.6 MB of them about 6 s (5.6 s
    without reading the numbers: the rest is the signatures); the bounds are about 10x that in
    CPU time (a loaded machine stretches the wall clock, not the CPU); killed at 120 s."""
    n = 16000
    shapes = ["exit code " * 1600, "exit code 139 " * 1100, "cudaMallocX" * 1450, "cudaMalloc(" * 1450,
              "cudaMalloc returned " * 800, "cuInit " + "x" * n, "cudaGetDevice" + " error" * 2600,
              "0xC0000005 " * 1450, "signal 9 " * 1750, "CUDA error 35 " * 1100, "NCCL error " * 1450,
              "vkX" + "(" * n, "code=" * 3200, "cudaX" + "a" * n + " returned 3", "exit" * 4000,
              "[804] Call to cuInit " * 760, "1" * n, "exitcode  : -" + "9" * n, "cublasX " * 2000,
              "cudaMalloc returned x1 " * 700, "cuInit1 failed error " * 700, "vkX(1) " * 2000,
              "cudaX" + "(" * 80 + " error 1" * 1500, "exit code -" * 1400 + "5", "cudaMalloc" + "a" * 59 + " 1 " * 5000]
    res = cpu_on_adversarial_lines("stackpeel.explain.numbers", "read_numbers", "exit code 132", shapes, 4)
    assert res["worst"] < 0.5 and res["whole"] < 30, res


@pytest.mark.parametrize("line", [
    "cudaGetDeviceCount returned 8 devices",  # a count, not a status (tests/test_explain_patterns_kbgrow2.py)
    "cudaGetDeviceCount returned 3 CUDA GPUs",
    "cudaMemGetInfo returned 2048 MB free",
])
def test_a_call_that_returns_a_count_is_not_read_as_a_status(line):
    assert N.read_numbers(line) == line
