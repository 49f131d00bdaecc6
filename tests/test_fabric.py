"""gpu.nvlink_fabric: the real probe runs against a stand-in ``nvidia-smi`` on PATH.

No NVSwitch machine has been lent to the project, so the stand-in prints what nvidia-smi
prints on one: the fabric query's CSV (field names and state words from nvidia-smi's
``--query-gpu`` help and NVML's nvmlGpuFabricState_t), the ``Fabric`` section of ``-q``
(as quoted in kubernetes-sigs/dra-driver-nvidia-gpu#626) and ``topo -m`` (a real 8-GPU paste,
tests/data/multi_gpu/topo/). The probe, the check and the diagnosis are the product's own.
"""

import os
import sys
from pathlib import Path

import pytest

from stackpeel.checks.cuda import DriverApi
from stackpeel.checks.gpu import NvlinkFabric
from stackpeel.diagnosis import diagnose
from stackpeel.model import CheckResult, Severity, Status
from stackpeel.registry import LAYERS
from stackpeel.runner import run_checks

HOST = {"pkg_manager": "apt", "is_root": True}
TOPO = Path(__file__).parent / "data" / "multi_gpu" / "topo"

QUERY_HEADER = "index, name, uuid, fabric.state, fabric.status"


def standin(tmp_path, query_rows, q_text="", topo_text=""):
    """A directory holding an executable `nvidia-smi` that answers like a real one would."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / "query.csv").write_text("\n".join(query_rows) + "\n")
    (d / "q.txt").write_text(q_text)
    (d / "topo.txt").write_text(topo_text)
    script = d / "nvidia-smi"
    script.write_text(f"""#!/bin/sh
case "$1" in
  --query-gpu=*) cat "{d}/query.csv";;
  -q) cat "{d}/q.txt";;
  topo) cat "{d}/topo.txt";;
  *) echo "stand-in nvidia-smi: unexpected $*" >&2; exit 2;;
esac
""")
    script.chmod(0o755)
    return d


def run_fabric(bindir):
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    (res,) = run_checks([type("Fabric", (NvlinkFabric,), {"requires": ()})], sys.executable, HOST,
                        {"python": sys.executable}, env=env)
    return res


def eight(state, status="N/A"):
    return [f"{i}, NVIDIA H100 80GB HBM3, GPU-{i:08x}-0000-0000-0000-000000000000, {state}, {status}" for i in range(8)]


def nccl933():
    return (TOPO / "nccl-933-8xA100-nv8.txt").read_text().split("# ---\n", 1)[1]


def test_no_nvidia_smi_skips(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))
    (res,) = run_checks([type("Fabric", (NvlinkFabric,), {"requires": ()})], sys.executable, HOST,
                        {"python": sys.executable}, env=env)
    assert res.status is Status.SKIP and "nvidia-smi is not on PATH" in res.summary


def test_fabric_in_progress_is_blocking_and_cuda_802_nests_under_it(tmp_path):
    res = run_fabric(standin(tmp_path, eight("In Progress"), topo_text=nccl933()))
    assert res.status is Status.FAIL
    (f,) = res.findings
    assert f.code == "fabric-not-ready" and f.severity is Severity.BLOCKING
    assert "'In Progress' for GPU 0, 1, 2, 3, 4, 5, 6, 7" in f.message and "error 802" in f.message
    assert "fabric.state" in " ".join(c.command for c in f.remedy.commands)
    # cuInit's 802 on the same machine is a symptom of it, not a second root cause
    cuda = CheckResult(id="cuda.driver_api", title=DriverApi.title, layer="cuda", status=Status.FAIL,
                       summary="cuInit failed: 802", requires=DriverApi.requires)
    diag = diagnose([res, cuda], LAYERS)
    assert [r.check_id for r in diag.blocking] == ["gpu.nvlink_fabric"]
    assert [s.check_id for s in diag.blocking[0].symptoms] == ["cuda.driver_api"]


def test_completed_with_error_status(tmp_path):
    rows = eight("Completed", "Success")
    rows[3] = rows[3].replace("Success", "NVML_ERROR_UNKNOWN")
    res = run_fabric(standin(tmp_path, rows, topo_text=nccl933()))
    (f,) = res.findings
    assert f.code == "fabric-registration-failed" and "GPU 3" in f.message and "NVML_ERROR_UNKNOWN" in f.message


def test_unhealthy_fabric_health_from_the_q_section(tmp_path):
    q = """==============NVSMI LOG==============

GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 2
        ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278
        Health
            Summary                       : Unhealthy
            Bandwidth                     : Full
"""
    res = run_fabric(standin(tmp_path, eight("Completed", "Success")[:1], q_text=q))
    assert res.status is Status.WARN
    (f,) = res.findings
    assert f.code == "fabric-unhealthy" and f.severity is Severity.DEGRADED and "GPU 0" in f.message


def test_healthy_eight_gpu_board(tmp_path):
    res = run_fabric(standin(tmp_path, eight("Completed", "Success"), topo_text=nccl933()))
    assert res.status is Status.PASS and res.findings == ()
    assert res.summary == "8 GPU(s) registered with the NVLink fabric, every pair NV8"
    assert res.facts["nvlink_layout"] == "all-nvlink"


@pytest.mark.parametrize("replacement,expect", [("NV2", "GPU2-GPU6 (NV2)"), ("SYS", "GPU2-GPU6 (SYS)")])
def test_weak_or_missing_links_are_named(tmp_path, replacement, expect):
    lines = []
    for line in nccl933().splitlines():
        cells = line.split()
        if cells[:1] in (["GPU2"], ["GPU6"]):
            j = 6 if cells[0] == "GPU2" else 2
            cells[j + 1] = replacement
            line = "  ".join(cells)
        lines.append(line)
    res = run_fabric(standin(tmp_path, eight("Completed", "Success"), topo_text="\n".join(lines)))
    (f,) = res.findings
    assert f.code == "nvlink-degraded" and expect in f.message and "most GPU pairs have NV8" in f.message


def test_single_gpu_not_supported_skips(tmp_path):
    res = run_fabric(standin(tmp_path, ["0, NVIDIA H200, GPU-1, Not Supported, Not Supported"]))
    assert res.status is Status.SKIP and "no NVLink fabric here (1 GPU(s)" in res.summary


def test_the_three_queries_run_at_once_and_answer_as_before(tmp_path):
    """nvidia-smi's three queries are started together (each waits for the driver to open the
    GPUs): the stand-in answers only once all three are running (after 20 s it notes that it
    ran alone, and answers). The facts and the verdict are those of the queries in turn."""
    d = standin(tmp_path, eight("Completed", "Success"), topo_text=nccl933())
    real = d / "nvidia-smi.real"
    (d / "nvidia-smi").rename(real)
    script = d / "nvidia-smi"
    script.write_text(f"""#!/bin/sh
mkdir -p "{d}/started"
touch "{d}/started/$$"
n=0
while [ "$(ls "{d}/started" | wc -l)" -lt 3 ]; do
  n=$((n + 1))
  if [ "$n" -gt 200 ]; then echo "alone" > "{d}/alone"; break; fi
  sleep 0.1
done
exec "{real}" "$@"
""")
    script.chmod(0o755)
    res = run_fabric(d)
    assert not (d / "alone").exists(), "nvidia-smi's queries ran one after the other"
    assert len(list((d / "started").iterdir())) == 3
    assert res.status is Status.PASS and res.summary == "8 GPU(s) registered with the NVLink fabric, every pair NV8"
