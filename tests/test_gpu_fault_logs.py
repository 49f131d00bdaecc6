"""explain on what a user's program printed under each fault of the GPU suite, on an H200.

``scenarios/gpu/suite.py`` injects a fault, runs ``stackpeel check`` and a user's Triton kernel
under it, and feeds the kernel's output (the log a user would paste) to ``stackpeel explain
--no-live``. The outputs of one such run (session 21, torch 2.11 / Triton 3.6 on an H200; the
checkout's path written as /repo, the suite's output folder as /out) are kept in
``tests/data/gpu_fault_logs``: explain must name the injected cause first, as the suite expects
it among the first three. Before any rule was written for them explain named 9 of the first 11
first; the two it missed (the toolkit's stub libcuda, a stray triton package) taught
``libcuda-stub-loaded`` and the ``No module named 'triton.language'`` reading of module-shadowed.
Of the next four (written before their run), 2 first: a Triton cache on a noexec mount (the
helper's name, not a ``.triton`` path, says whose it is) and ``CUDA_VISIBLE_DEVICES=0,0`` (101
from the device count itself) taught two more signatures. Session 22's five device-node faults
print what other causes print too (``SHARED_OUTPUT``): the log-only answer offers the cause among
three, and the suite's live explain, run as the user inside the fault, names it first (5 of 5).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ranking import ranked
from stackpeel.explain import explain_text

#: judged as a user sees them: with the base rates of earlier threads (tests/conftest.py switches
#: them off elsewhere); CUDA_VISIBLE_DEVICES' faults print only "No CUDA GPUs are available",
#: whose established causes those rates rank
USES_PRIORS = True

LOGS = sorted((Path(__file__).parent / "data" / "gpu_fault_logs").glob("*.log"))
_SUITE = Path(__file__).resolve().parent.parent / "scenarios" / "gpu" / "suite.py"
_spec = importlib.util.spec_from_file_location("gpu_suite_for_logs", _SUITE)
suite = importlib.util.module_from_spec(_spec)
sys.modules["gpu_suite_for_logs"] = suite  # dataclasses look their module up while the class is built
_spec.loader.exec_module(suite)
EXPECTED = {sc.name: list(sc.explain) for sc in suite.SCENARIOS if sc.explain}

#: outputs that several causes print alike, judged as the suite judges them (the expected cause among
#: the first three of the log-only ranking; the suite's live run must put it first): torch's "No CUDA
#: GPUs are available" is byte-identical for an empty CUDA_VISIBLE_DEVICES, a missing /dev/nvidiactl
#: or GPU node, nodes the user cannot open, and nodes no driver is behind (session 22, H200); torch's generic "CUDA unknown
#: error" (999) is what a missing /dev/nvidia-uvm prints, as a UVM broken after a suspend does; the
#: first tensor's "CUDA error: out of memory" under `ulimit -v` is what a context on a full GPU says (session 23)
SHARED_OUTPUT = {"nvidia-uvm-node-missing", "nvidiactl-node-missing", "gpu-node-missing", "only-gpu-node-passed",
                 "device-nodes-not-openable", "driver-gone-nodes-left", "address-space-limit"}


#: scenarios that expect an explanation but have not run on a GPU yet: whoever keeps a log takes its
#: name out. older-nvjitlink-preloaded-cu12 needs a torch built for CUDA 12 (the H200's is CUDA 13); gpu38's three
#: (Triton's libcuda lookup without the linker cache or without /sbin/ldconfig, a full cache), written before a run,
#: ran in session 39 on an H100 (docs/validation/2026-12-12-h100-session39/): their logs are kept
AWAITING_GPU_RUN = {"older-nvjitlink-preloaded-cu12"}


def test_every_scenario_that_expects_an_explanation_has_its_log():
    assert SHARED_OUTPUT <= set(EXPECTED)
    assert AWAITING_GPU_RUN <= set(EXPECTED)  # a name that is no scenario's (or has its log) is dropped
    assert {p.stem for p in LOGS} == set(EXPECTED) - AWAITING_GPU_RUN


def test_the_shared_outputs_are_the_same_text():
    data = Path(__file__).parent / "data" / "gpu_fault_logs"
    empty = (data / "cuda-visible-devices-empty.log").read_text()
    for name in SHARED_OUTPUT - {"nvidia-uvm-node-missing", "address-space-limit"}:
        assert (data / f"{name}.log").read_text() == empty, name
    # the runtime's own out-of-memory status, no allocator message naming sizes or other processes
    limited = (data / "address-space-limit.log").read_text()
    assert "torch.AcceleratorError: CUDA error: out of memory" in limited and "Tried to allocate" not in limited
    assert (data / "nvidia-uvm-node-missing.log").read_text().rstrip().endswith(
        "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env "
        "variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.")


@pytest.mark.parametrize("path", [p for p in LOGS if p.stem not in SHARED_OUTPUT], ids=lambda p: p.stem)
def test_explain_names_the_injected_fault_first(path):
    expl = explain_text(path.read_text())
    assert expl.root is not None and expl.root.code in EXPECTED[path.stem], (
        path.stem, [c.code for c in expl.candidates][:3])


@pytest.mark.parametrize("path", [p for p in LOGS if p.stem in SHARED_OUTPUT], ids=lambda p: p.stem)
def test_a_shared_output_offers_the_injected_cause_among_three(path):
    found = ranked(explain_text(path.read_text()))
    assert set(found[:3]) & set(EXPECTED[path.stem]), (path.stem, found[:5])


@pytest.mark.parametrize("line, code", [
    # Triton's helper on a noexec cache, wherever TRITON_CACHE_DIR points (errno shown or not)
    ("ImportError: /scratch/tc/ABC/__triton_launcher.cpython-310-x86_64-linux-gnu.so: failed to map segment "
     "from shared object: Operation not permitted", "triton-cache-unusable"),
    ("ImportError: /data/cache/XU5D/cuda_utils.cpython-312-x86_64-linux-gnu.so: failed to map segment from shared "
     "object", "triton-cache-unusable"),
    # the device count refused as a whole: the variable's list, not an ordinal a program chose
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 101: invalid device ordinal",
     "cuda-visible-devices-hides-gpus"),
    # counting devices initialises the driver: 'out of memory' there is cuInit's own reservation failing
    # (address-space-limit), as the error itself and quoted in torch's warning
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 2: out of memory", "address-space-limit"),
    ("/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: "
     "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
     "that might have already set an error? Error 2: out of memory (Triggered internally at "
     "/pytorch/c10/cuda/CUDAFunctions.cpp:109.)", "address-space-limit"),
    # torch's out-of-memory error naming another process (gpu-memory-held-by-another-process): the GPU is full
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 139.81 "
     "GiB of which 3.98 GiB is free. Process 4242 has 135.82 GiB memory in use.", "gpu-out-of-memory"),
    # the same on an H100 of 80 GB (session 35's fault suite, gpu-memory-held-by-another-process): this process
    # holds 518 MiB of the 75.8 GiB in use, so other processes hold it (tools38's reading of torch's numbers)
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.18 "
     "GiB of which 3.40 GiB is free. Process 11100 has 75.26 GiB memory in use. Including non-PyTorch memory, this "
     "process has 518.00 MiB memory in use.", "gpu-memory-held-by-other-processes"),
    # a DataLoader worker's shm allocation under docker's 64 MiB /dev/shm, as torch words it with errno 0 (its third
    # worker in session 35's H100 run of dataloader-docker-shm; the others said 'Resource temporarily unavailable (11)')
    ("RuntimeError: unable to allocate shared memory(shm) for file </torch_8872_2652403122_1>: Success (0)",
     "dataloader-shm-too-small"),
    # Triton's default cache under a read-only HOME (triton/runtime/cache.py makes the folder first)
    ("OSError: [Errno 30] Read-only file system: '/home/user/.triton'", "triton-cache-unusable"),
    # the worker's own words under a low open-files limit (measured on CPU, open-files-limit scenario)
    ("RuntimeError: unable to open shared memory object </torch_11179_423800145_36> in read-write mode: Too many "
     "open files (24)", "open-files-limit-exhausted"),
])
def test_fault_messages_in_isolation(line, code):
    assert explain_text(line + "\n").root.code == code


@pytest.mark.parametrize("line, not_code", [
    # a memory limit, not a noexec mount
    ("ImportError: /scratch/tc/ABC/cuda_utils.so: failed to map segment from shared object: Cannot allocate memory",
     "triton-cache-unusable"),
    # an ordinal a program chose (torch.cuda.set_device): the generic reading stays
    ("RuntimeError: CUDA error: invalid device ordinal", "cuda-visible-devices-hides-gpus"),
    # the GPU's memory used up by a job, not a limit on address space
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 139.81 "
     "GiB of which 3.98 GiB is free. Process 4242 has 135.82 GiB memory in use.", "address-space-limit"),
    # another error number from the same count
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 34: CUDA driver is a stub library",
     "address-space-limit"),
])
def test_near_misses_keep_their_other_reading(line, not_code):
    expl = explain_text(line + "\n")
    assert expl.root is None or expl.root.code != not_code
