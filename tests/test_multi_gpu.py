"""The multi_gpu layer: /dev/shm, memlock, peer copies, a real all-reduce.

Three kinds of test:

- ``evaluate`` tables over recorded facts. The 2 x H200 records (torch 2.11.0+cu130,
  NCCL 2.28.9, driver 580.159.04, NVLink NV18) come from running these very probes on
  such a host; the failing ones from the same host with a fault injected, or are
  shaped like it where the fault cannot be injected (ACS, corrupt copies).
- the real probes: statvfs and getrlimit here, and /dev/shm shrunk to 64 MiB for real in
  a private mount namespace (``unshare -m``, root only; skipped otherwise);
- the real multi-process all-reduce harness, on CPU with backend gloo through the stack
  venv: healthy, one rank raising, one rank hanging, one rank contributing a wrong value.
"""

from __future__ import annotations

import copy
import glob
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.checks.base import Context
from stackpeel.checks.multi_gpu import (AllReduce, Memlock, OpenFiles, PeerToPeer, SharedMemory, human_bytes,
                                        topology_links)
from stackpeel.model import Severity, Status
from stackpeel.runner import run_checks, run_probe
from shapes import answer
from test_gpu_layers import load_probe  # the runner's way of loading a probe

HOST = {"pkg_manager": "apt", "is_root": True}
TARGET = {"python": "/opt/venv/bin/python"}


def ctx(device_count=2):
    return Context(HOST, TARGET, {"torch.cuda": {"installed": True, "available": device_count > 0,
                                                 "device_count": device_count}})


def evaluate(cls, facts, device_count=2):
    return cls().evaluate(answer(cls, facts), ctx(device_count))


def codes(verdict):
    return [f.code for f in verdict.findings]


# --------------------------------------------------------------------------- recorded facts (2 x H200)

H200_TOPO = ("\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
             "GPU0\t X \tNV18\t0-31\t0\t\tN/A\nGPU1\tNV18\t X \t0-31\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n")

H200_SHM = {"path": "/dev/shm", "exists": True, "container": "docker",
            "mount": {"fstype": "tmpfs", "source": "tmpfs", "options": "rw,size=268435456k"},
            "size_bytes": 274877906944, "free_bytes": 274877906944, "writable": True, "entries": 0, "largest": [],
            "nccl_segments": 0}

H200_P2P = {
    "device_count": 2,
    "topology": {"argv": ["/usr/local/nvidia/bin/nvidia-smi", "topo", "-m"], "rc": 0, "stdout": H200_TOPO,
                 "stderr": "", "error": None},
    "iommu_groups": 0, "iommu_cmdline": [], "duration_s": 4.619,
    "worker": {"exit_code": 0, "signal": None, "killed": None, "timeout_s": 90.0, "stage": "done", "log_tail": ""},
    "access": [[None, True], [True, None]],
    "pairs": [{"src": 0, "dst": 1, "bytes": 67108864, "mismatches_forward": 0, "mismatches_back": 0, "ok": True,
               "gb_per_s": 154.97},
              {"src": 1, "dst": 0, "bytes": 67108864, "mismatches_forward": 0, "mismatches_back": 0, "ok": True,
               "gb_per_s": 176.45}],
    "error": None, "torch": "2.11.0+cu130", "device_names": ["NVIDIA H200", "NVIDIA H200"],
}


def _rank(rank, **kw):
    r = {"rank": rank, "exit_code": 0, "signal": None, "killed": None, "stage": "done", "ok": True, "value": 3.0,
         "big_min": 3.0, "big_max": 3.0, "device": "NVIDIA H200",
         "env_seen": {"NCCL_NVLS_ENABLE": "0", "NCCL_DEBUG": "WARN"}, "error": None, "nccl_warnings": [],
         "log_tail": "NCCL version 2.28.9+cuda13.0\n" if rank == 0 else ""}
    r.update(kw)
    return r


H200_NCCL = {
    "backend": "nccl",
    "nccl_env": {"NCCL_NVLS_ENABLE": "0", "NCCL_VERSION": "2.28.3-1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"},
    "world_size": 2, "env_set_by_stackpeel": {"NCCL_DEBUG": "WARN"}, "expected": 3.0, "duration_s": 5.727,
    "timeout_s": 150.0, "nccl_version": "2.28.9", "torch": "2.11.0+cu130",
    "ranks": [_rank(0), _rank(1)], "sum": 3.0, "ok": True,
}


def nccl_facts(**kw):
    f = copy.deepcopy(H200_NCCL)
    f.update(kw)
    return f


# --------------------------------------------------------------------------- shm: evaluate

def test_shm_healthy_h200():
    v = evaluate(SharedMemory, H200_SHM)
    assert v.status is Status.PASS and not v.findings
    assert v.summary == "/dev/shm: 256 GiB, 256 GiB free"


@pytest.mark.parametrize("change, expect", [
    ({"size_bytes": 64 << 20, "free_bytes": 64 << 20}, ["64 MiB", "default of Docker", "docker container",
                                                        "failed to extend"]),
    ({"size_bytes": 256 << 20, "free_bytes": 200 << 20, "container": None}, ["256 MiB", "at least 1 GiB"]),
    ({"free_bytes": 100 << 20, "entries": 7, "nccl_segments": 5,
      "largest": [{"name": "nccl-AbCdEf", "bytes": 9637892}]}, ["only 100 MiB is free", "5 `nccl-*` segment"]),
    ({"writable": False}, ["not writable"]),
    ({"exists": False, "size_bytes": None, "free_bytes": None}, ["does not exist"]),
])
def test_shm_problems_warn_with_observed_values(change, expect):
    facts = dict(H200_SHM, **change)
    v = evaluate(SharedMemory, facts)
    assert v.status is Status.WARN, v
    (f,) = v.findings
    assert f.code == "nccl-shm-too-small" and f.severity is Severity.DEGRADED
    for text in expect:
        assert text in f.message, (text, f.message)
    assert "--shm-size" in f.remedy.text


def test_shm_exactly_one_gib_passes():
    v = evaluate(SharedMemory, dict(H200_SHM, size_bytes=1 << 30, free_bytes=1 << 30))
    assert v.status is Status.PASS


def test_shm_unmeasurable_is_an_error_not_a_verdict():
    v = evaluate(SharedMemory, dict(H200_SHM, size_bytes=None, free_bytes=None, statvfs_error="PermissionError: x"))
    assert v.status is Status.ERROR and "PermissionError" in v.summary


# --------------------------------------------------------------------------- memlock: evaluate

MEMLOCK_UNLIMITED = {"soft_bytes": None, "hard_bytes": None, "soft_unlimited": True, "hard_unlimited": True,
                     "cap_ipc_lock": False, "rdma_devices": []}
MEMLOCK_8M = {"soft_bytes": 8 << 20, "hard_bytes": 8 << 20, "soft_unlimited": False, "hard_unlimited": False,
              "cap_ipc_lock": False, "rdma_devices": []}


@pytest.mark.parametrize("facts, status, severity, text", [
    (MEMLOCK_UNLIMITED, Status.PASS, None, "unlimited"),
    (dict(MEMLOCK_8M, cap_ipc_lock=True, rdma_devices=["uverbs0"]), Status.PASS, None, "CAP_IPC_LOCK"),
    (dict(MEMLOCK_8M, soft_bytes=2 << 30, hard_bytes=None, hard_unlimited=True), Status.PASS, None, "2 GiB"),
    (MEMLOCK_8M, Status.PASS, Severity.INFO, "No RDMA devices"),
    (dict(MEMLOCK_8M, rdma_devices=["uverbs0", "uverbs1"]), Status.WARN, Severity.DEGRADED, "ibv_reg_mr"),
    (dict(MEMLOCK_8M, soft_bytes=65536, rdma_devices=["uverbs0"]), Status.WARN, Severity.DEGRADED, "64 KiB"),
])
def test_memlock_table(facts, status, severity, text):
    v = evaluate(Memlock, facts)
    assert v.status is status, v
    if severity is None:
        assert not v.findings and text in v.summary
    else:
        (f,) = v.findings
        assert f.code == "memlock-limit-low" and f.severity is severity and text in f.message
        assert "memlock=-1" in f.remedy.text


# --------------------------------------------------------------------------- p2p: evaluate

def test_topology_parser_reads_nvidia_smi_with_escape_codes():
    assert topology_links(H200_TOPO) == {(0, 1): "NV18", (1, 0): "NV18"}
    assert topology_links("") == {}


def test_p2p_healthy_h200():
    v = evaluate(PeerToPeer, H200_P2P)
    assert v.status is Status.PASS and not v.findings
    assert "values intact" in v.summary and "154.97-176.45 GB/s" in v.summary and "peer access on" in v.summary


def test_p2p_skips_with_one_gpu_and_says_why():
    v = evaluate(PeerToPeer, {"device_count": 1, "skipped": "1 visible GPU; peer access needs at least 2"}, 1)
    assert v.status is Status.SKIP and "1 visible GPU" in v.summary


def test_p2p_access_denied_over_nvlink_is_degraded_and_blames_the_platform():
    facts = copy.deepcopy(H200_P2P)
    facts["access"] = [[None, False], [False, None]]
    facts["iommu_cmdline"] = ["intel_iommu=on"]
    v = evaluate(PeerToPeer, facts)
    assert v.status is Status.WARN
    (f,) = v.findings
    assert f.code == "nccl-p2p-blocked" and f.severity is Severity.DEGRADED
    assert "cuda:0->cuda:1" in f.message and "NVLink" in f.message and "intel_iommu=on" in f.message
    assert "NV18" in f.evidence


def test_p2p_corrupt_copy_is_blocking():
    facts = copy.deepcopy(H200_P2P)
    facts["pairs"][0].update(ok=False, mismatches_forward=16777216, sample={"expected": [0, 1, 2, 3],
                                                                          "got": [0, 0, 0, 0]})
    v = evaluate(PeerToPeer, facts)
    assert v.status is Status.FAIL
    (f,) = v.findings
    assert f.code == "nccl-p2p-blocked" and f.severity is Severity.BLOCKING
    assert "16777216 wrong elements" in f.message and "peer access reported: yes" in f.message
    assert "'got': [0, 0, 0, 0]" in f.evidence


def test_p2p_hung_copy_becomes_a_finding_with_the_pair():
    facts = copy.deepcopy(H200_P2P)
    facts["worker"].update(exit_code=-9, signal="SIGKILL", killed="timeout", stage="copy 1->0",
                           log_tail="copy worker log line\n")
    facts["pairs"] = facts["pairs"][:1]
    v = evaluate(PeerToPeer, facts)
    assert v.status is Status.FAIL and codes(v) == ["nccl-p2p-blocked"]
    f = v.findings[0]
    assert "cuda:1 to cuda:0 hung" in f.message and "90 s" in f.message
    assert "stage 'copy 1->0'" in f.evidence and "copy worker log line" in f.evidence


def test_p2p_worker_crash_before_copies_is_an_error():
    facts = copy.deepcopy(H200_P2P)
    facts["worker"].update(exit_code=1, stage="imported")
    facts["error"] = {"type": "RuntimeError", "message": "CUDA error: unknown error"}
    v = evaluate(PeerToPeer, facts)
    assert v.status is Status.ERROR and "CUDA error: unknown error" in v.summary


# --------------------------------------------------------------------------- nccl: evaluate

def test_nccl_healthy_h200():
    v = evaluate(AllReduce, H200_NCCL)
    assert v.status is Status.PASS and not v.findings
    assert "nccl 2.28.9" in v.summary and "sum 3 as expected" in v.summary
    assert v.facts["nccl_transport_switches"] == ["NCCL_NVLS_ENABLE=0"]


def test_nccl_summary_names_nvls_off_and_transport_switches():
    facts = nccl_facts(nccl_env={"NCCL_P2P_DISABLE": "1"}, env_set_by_stackpeel={"NCCL_NVLS_ENABLE": "0"})
    v = evaluate(AllReduce, facts)
    assert v.status is Status.PASS and "NVLS off" in v.summary and "NCCL_P2P_DISABLE=1 set" in v.summary


def test_nccl_skips_with_one_gpu():
    v = evaluate(AllReduce, {"backend": "nccl", "nccl_env": {}, "world_size": 1,
                             "skipped": "1 visible GPU; an all-reduce needs at least 2"}, 1)
    assert v.status is Status.SKIP and "at least 2" in v.summary


def test_nccl_wrong_sum_is_blocking():
    # recorded on the 2 x H200 host with rank 1 contributing 3 instead of 2
    facts = nccl_facts(ok=False, sum=4.0, ranks=[_rank(0, value=4.0, big_min=4.0, big_max=4.0),
                                                 _rank(1, value=4.0, big_min=4.0, big_max=4.0)])
    v = evaluate(AllReduce, facts)
    assert v.status is Status.FAIL and codes(v) == ["nccl-allreduce-failed"]
    assert "expected 3 everywhere, got rank 0: 4" in v.findings[0].message


def test_nccl_rank_raising_names_both_ranks():
    # recorded on the 2 x H200 host with rank 1 raising before the all-reduce
    err = {"type": "RuntimeError", "message": "fault injected by stackpeel's tests: rank 1 raises before all_reduce"}
    facts = nccl_facts(ok=False, sum=None, ranks=[
        _rank(0, exit_code=-9, signal="SIGKILL", killed="peer-failed", stage="all_reduce", ok=False, value=None,
              big_min=None, big_max=None),
        _rank(1, exit_code=1, stage="all_reduce", ok=False, value=None, big_min=None, big_max=None, error=err)])
    v = evaluate(AllReduce, facts)
    assert v.status is Status.FAIL and codes(v) == ["nccl-allreduce-failed"]
    f = v.findings[0]
    assert "rank 0 still in all_reduce after another rank failed, killed" in f.message
    assert "rank 1 raised RuntimeError in all_reduce" in f.message
    assert "fault injected" in f.evidence and "killed (peer-failed)" in f.evidence


# recorded on the 2 x H200 host: /dev/shm shrunk to 1 MiB in a private mount namespace,
# NCCL_CUMEM_HOST_ENABLE=0 and NCCL_P2P_DISABLE=1 (NCCL 2.28.9 otherwise keeps its host
# buffers out of /dev/shm and the all-reduce passes even at 1 MiB)
NCCL_SHM_ERROR = {
    "type": "DistBackendError",
    "message": "NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3780, unhandled system "
               "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9\nncclSystemError: System call "
               "(e.g. socket, malloc) or external library call failed or device error. \nLast error:\nError while "
               "creating shared memory segment /dev/shm/nccl-Heo28W (size 9637888), error: No space left on device "
               "(28)"}
NCCL_SHM_WARNINGS = [
    "[2026-11-29 17:07:04] vm:3490:3575 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend "
    "/dev/shm/nccl-Heo28W to 9637892 bytes, error: No space left on device (28)",
    "[2026-11-29 17:07:04] vm:3490:3575 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory "
    "segment /dev/shm/nccl-Heo28W (size 9637888), error: No space left on device (28)"]


def test_nccl_failure_on_dev_shm_is_reported_as_shm():
    ranks = [_rank(i, exit_code=1, stage="all_reduce", ok=False, value=None, big_min=None, big_max=None,
                   error=NCCL_SHM_ERROR, nccl_warnings=NCCL_SHM_WARNINGS) for i in range(2)]
    v = evaluate(AllReduce, nccl_facts(ok=False, sum=None, ranks=ranks,
                                       nccl_env={"NCCL_P2P_DISABLE": "1", "NCCL_CUMEM_HOST_ENABLE": "0"}))
    assert v.status is Status.FAIL and codes(v) == ["nccl-shm-too-small"]
    f = v.findings[0]
    assert f.severity is Severity.BLOCKING and "failed on /dev/shm" in f.message
    assert "rank 0 raised DistBackendError in all_reduce" in f.message
    assert NCCL_SHM_WARNINGS[0] in f.evidence and "No space left on device" in f.evidence
    assert "--shm-size" in f.remedy.text


def test_nccl_library_error_is_nccl_error():
    err = {"type": "DistBackendError", "message": "NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO)"}
    warn = "host:1:2 [1] NCCL WARN Cuda failure 'peer access is not supported between these two devices'"
    ranks = [_rank(0, exit_code=1, stage="all_reduce", ok=False, value=None, error=err, nccl_warnings=[warn]),
             _rank(1, exit_code=-9, signal="SIGKILL", killed="peer-failed", stage="all_reduce", ok=False,
                   value=None)]
    v = evaluate(AllReduce, nccl_facts(ok=False, sum=None, ranks=ranks))
    assert codes(v) == ["nccl-error"]
    f = v.findings[0]
    assert "NCCL 2.28.9" in f.message and warn in f.evidence


def test_nccl_hang_without_nccl_words_is_allreduce_failed():
    # recorded on the 2 x H200 host with rank 1 sleeping instead of joining the all-reduce
    ranks = [_rank(i, exit_code=-9, signal="SIGKILL", killed="timeout", stage="all_reduce", ok=False, value=None,
                   big_min=None, big_max=None) for i in range(2)]
    v = evaluate(AllReduce, nccl_facts(ok=False, sum=None, ranks=ranks))
    assert codes(v) == ["nccl-allreduce-failed"]
    assert "rank 0 still in all_reduce at the deadline, killed" in v.findings[0].message


def test_human_bytes():
    assert [human_bytes(x) for x in (None, 512, 1 << 20, 64 << 20, 3 << 29, 256 << 30)] == [
        "unknown", "512 bytes", "1 MiB", "64 MiB", "1.5 GiB", "256 GiB"]


# --------------------------------------------------------------------------- declarations

def test_declarations():
    for cls in (SharedMemory, Memlock):
        assert cls.layer == "multi_gpu" and cls.requires == ()
    assert PeerToPeer.gate == ("torch.cuda",) and AllReduce.gate == ("torch.cuda",)
    assert set(AllReduce.requires) == {"torch.cuda", "multi_gpu.shm", "multi_gpu.p2p", "config.nccl_environment",
                                       "multi_gpu.open_files"}
    # the probe's own deadline leaves room to report a hang before the runner's kill
    assert AllReduce.probe_options["timeout_s"] + AllReduce.probe_options["grace_s"] < AllReduce.timeout
    assert PeerToPeer.probe_options["timeout_s"] < PeerToPeer.timeout


def _probe_module():
    return load_probe("multi_gpu")


def test_worker_env_turns_nvls_off_unless_the_user_chose():
    mod = _probe_module()
    env, added = mod.worker_env("nccl", {"PATH": "/bin"})
    assert env["NCCL_NVLS_ENABLE"] == "0" and added == {"NCCL_NVLS_ENABLE": "0", "NCCL_DEBUG": "WARN"}
    env, added = mod.worker_env("nccl", {"NCCL_NVLS_ENABLE": "1", "NCCL_DEBUG": "INFO"})
    assert env["NCCL_NVLS_ENABLE"] == "1" and env["NCCL_DEBUG"] == "INFO" and added == {}
    env, added = mod.worker_env("gloo", {})
    assert "NCCL_NVLS_ENABLE" not in env and added == {}
    assert mod.nccl_env({"NCCL_P2P_DISABLE": "1", "HOME": "/x", "CUDA_VISIBLE_DEVICES": "0,1"}) == {
        "CUDA_VISIBLE_DEVICES": "0,1", "NCCL_P2P_DISABLE": "1"}


# --------------------------------------------------------------------------- real probes here

def _run(cls, python=sys.executable, env=None, deps=None, options=None):
    inp = {"deps": deps or {}, "options": dict(cls.probe_options, **(options or {})), "check": cls.id}
    ans = run_probe(python, cls.probe, inp, cls.timeout, env=env)
    assert ans.failure is None, ans.failure
    return ans.facts


def test_real_shm_probe_matches_statvfs():
    facts = _run(SharedMemory)
    if not os.path.isdir("/dev/shm"):
        assert facts["exists"] is False
        return
    st = os.statvfs("/dev/shm")
    assert facts["size_bytes"] == st.f_blocks * st.f_frsize
    assert facts["writable"] == os.access("/dev/shm", os.W_OK | os.X_OK)
    v = evaluate(SharedMemory, facts)
    assert v.status in (Status.PASS, Status.WARN) and human_bytes(facts["size_bytes"]) in v.summary


def test_real_memlock_probe_matches_getrlimit():
    facts = _run(Memlock)
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    assert facts["soft_unlimited"] == (soft == resource.RLIM_INFINITY)
    if soft != resource.RLIM_INFINITY:
        assert facts["soft_bytes"] == soft
    assert evaluate(Memlock, facts).status in (Status.PASS, Status.WARN)


@pytest.mark.parametrize("facts, status, variant_words", [
    ({"soft": 64, "hard": 64, "open_now": 7}, Status.WARN, "hard limit is also 64"),
    ({"soft": 256, "hard": 524288, "open_now": 7}, Status.WARN, "The hard limit lets the job raise it itself"),
    ({"soft": 1024, "hard": 524288, "open_now": 7}, Status.PASS, None),  # the usual default: no alarm
    ({"soft": None, "hard": None, "open_now": None}, Status.PASS, None),
])
def test_open_files_table(facts, status, variant_words):
    v = evaluate(OpenFiles, facts)
    assert v.status is status, v
    assert f"open-files soft limit {facts['soft'] or 'unlimited'}" in v.summary
    if variant_words is None:
        assert not v.findings
        return
    (f,) = v.findings
    assert f.code == "open-files-limit-low" and f.severity is Severity.DEGRADED
    assert variant_words in f.message and "file_descriptor" in f.message
    assert f"getrlimit(RLIMIT_NOFILE) = ({facts['soft']}, {facts['hard']})" in f.evidence
    assert "set_sharing_strategy('file_system')" in f.remedy.text


def test_real_open_files_probe_reads_the_limit_it_inherits(tmp_path):
    facts = _run(OpenFiles)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert facts["soft"] == (None if soft == resource.RLIM_INFINITY else soft)
    assert facts["hard"] == (None if hard == resource.RLIM_INFINITY else hard)
    assert facts["open_now"] >= 3
    if not shutil.which("prlimit"):
        pytest.skip("needs prlimit (util-linux) to start the probe under a lower limit")
    # run_probe starts the probe as the target's interpreter: under prlimit, through a one-line wrapper
    wrapper = tmp_path / "prlimit-python"
    wrapper.write_text(f"#!/bin/sh\nexec prlimit --nofile=64:128 -- {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    low = _run(OpenFiles, python=str(wrapper))
    assert (low["soft"], low["hard"]) == (64, 128)
    assert evaluate(OpenFiles, low).findings[0].code == "open-files-limit-low"


def _behind_pyenv_shim(py):
    """``other_python`` may be a pyenv shim that refuses to run an unselected version."""
    if "/shims/" not in py:
        return py
    minor = os.path.basename(py)[len("python"):]
    root = os.path.dirname(os.path.dirname(py))
    hits = sorted(glob.glob(os.path.join(root, "versions", f"{minor}.*", "bin", "python")))
    return hits[-1] if hits else py


def test_real_host_probes_on_other_pythons(other_python):
    for cls in (SharedMemory, Memlock):
        facts = _run(cls, python=_behind_pyenv_shim(other_python))
        assert evaluate(cls, facts).status in (Status.PASS, Status.WARN)
    one_gpu = {"torch.cuda": {"installed": True, "available": True, "device_count": 1}}
    for cls in (PeerToPeer, AllReduce):
        facts = _run(cls, python=_behind_pyenv_shim(other_python), deps=one_gpu)
        assert evaluate(cls, facts, 1).status is Status.SKIP


def _can_shrink_shm():
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    r = subprocess.run(["unshare", "-m", "--", "sh", "-c", "mount -t tmpfs -o size=64m tmpfs /dev/shm"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    return r.returncode == 0


def test_real_64mib_dev_shm_is_found(tmp_path):
    """A Docker-sized /dev/shm for real: a private mount namespace with a 64 MiB tmpfs."""
    if not _can_shrink_shm():
        pytest.skip("needs root and `unshare -m` + mount to shrink /dev/shm in a private namespace")
    wrapper = tmp_path / "python-in-small-shm"
    wrapper.write_text("#!/bin/sh\nexec unshare -m -- sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 97; "
                       f"exec \"$@\"' sh {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    before = os.statvfs("/dev/shm").f_blocks
    (res,) = run_checks([SharedMemory], str(wrapper), HOST, TARGET)
    assert res.status is Status.WARN, res
    assert res.facts["size_bytes"] == 64 << 20 and res.facts["mount"]["options"].endswith("size=65536k")
    (f,) = res.findings
    assert f.code == "nccl-shm-too-small" and "64 MiB" in f.message and "size 67108864 bytes" in f.evidence
    assert os.statvfs("/dev/shm").f_blocks == before  # the namespace kept the small mount to itself


# --------------------------------------------------------------------------- real all-reduce harness (gloo, CPU)

def gloo_check(**options):
    """The production AllReduce check, run with backend gloo on CPU ranks and no GPU prerequisites."""
    opts = {"backend": "gloo", "world_size": 2, "timeout_s": 60, "grace_s": 2, "elements": 1 << 16}
    opts.update(options)
    return type("GlooAllReduce", (AllReduce,), {"id": "multi_gpu.nccl_gloo", "requires": (), "gate": (),
                                                "probe_options": opts, "timeout": 90.0})


FAULTS = Path(__file__).parent / "data" / "multi_gpu_faults"


def run_gloo(stack_python, fault=None, **options):
    """Run the gloo harness; ``fault`` ("raise:1", "hang:0", "wrong:1") breaks one rank from
    outside: tests/data/multi_gpu_faults/sitecustomize.py patches torch.distributed in the
    rank workers (the product has no fault hook)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("STACKPEEL_TEST_ALLREDUCE_FAULT", None)
    if fault:
        env["PYTHONPATH"] = str(FAULTS)
        env["STACKPEEL_TEST_ALLREDUCE_FAULT"] = fault
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # this box's hostname need not resolve; the harness is the test
    (res,) = run_checks([gloo_check(**options)], stack_python, HOST, {"python": stack_python}, env=env)
    return res


@pytest.mark.slow
def test_real_gloo_allreduce_two_ranks(stack_python):
    res = run_gloo(stack_python)
    assert res.status is Status.PASS, (res.summary, res.findings, res.failure)
    assert res.facts["sum"] == 3.0 and res.facts["expected"] == 3.0
    assert [r["value"] for r in res.facts["ranks"]] == [3.0, 3.0]
    assert all(r["stage"] == "done" and r["exit_code"] == 0 for r in res.facts["ranks"])
    assert "sum 3 as expected" in res.summary


@pytest.mark.slow
def test_real_gloo_rank_raising_gives_finding_with_evidence(stack_python):
    res = run_gloo(stack_python, fault="raise:1")
    assert res.status is Status.FAIL
    (f,) = res.findings
    assert f.code == "nccl-allreduce-failed"
    assert "rank 1 raised RuntimeError in all_reduce" in f.message
    assert "fault injected from outside by the test: rank 1 raises in all_reduce" in f.evidence
    ranks = res.facts["ranks"]
    assert ranks[1]["exit_code"] == 1 and ranks[1]["error"]["type"] == "RuntimeError"
    assert ranks[0]["value"] is None  # rank 0 never got a sum: it errored or was stopped


@pytest.mark.slow
def test_real_gloo_rank_hanging_is_killed_and_reported(stack_python):
    res = run_gloo(stack_python, fault="hang:0", timeout_s=12)
    assert res.status is Status.FAIL and [f.code for f in res.findings] == ["nccl-allreduce-failed"]
    r0 = res.facts["ranks"][0]
    assert r0["killed"] in ("timeout", "peer-failed") and r0["signal"] == "SIGKILL" and r0["stage"] == "all_reduce"
    assert "rank 0 still in all_reduce" in res.findings[0].message


@pytest.mark.slow
def test_real_gloo_wrong_contribution_is_caught(stack_python):
    res = run_gloo(stack_python, fault="wrong:1", world_size=3)
    assert res.status is Status.FAIL
    assert res.facts["sum"] == 7.0 and res.facts["expected"] == 6.0
    assert "expected 6 everywhere" in res.findings[0].message


@pytest.mark.slow
def test_real_gpu_probes_on_cpu_torch_skip_or_fail_honestly(stack_python):
    # what the torch.cuda check reports on a CPU build: no GPUs, so both skip
    deps = {"torch.cuda": {"installed": True, "available": False, "device_count": 0}}
    for cls in (PeerToPeer, AllReduce):
        facts = _run(cls, python=stack_python, deps=deps)
        assert evaluate(cls, facts, 0).status is Status.SKIP
    # told there are 2 GPUs that torch cannot see, the workers fail, and the checks say so
    facts = _run(PeerToPeer, python=stack_python, options={"device_count": 2, "timeout_s": 60})
    v = evaluate(PeerToPeer, facts)
    assert v.status is Status.ERROR and "device_count() is 0" in v.summary
    facts = _run(AllReduce, python=stack_python, options={"world_size": 2, "timeout_s": 60, "grace_s": 2},
                 env={k: v for k, v in os.environ.items() if k != "NCCL_NVLS_ENABLE"})
    assert [r["env_seen"]["NCCL_NVLS_ENABLE"] for r in facts["ranks"]] == ["0", "0"]
    v = evaluate(AllReduce, facts)
    assert v.status is Status.FAIL and v.findings[0].code == "nccl-allreduce-failed"
    assert "rank 0 raised" in v.findings[0].message
