"""scripts/expect-open-files (fd25's points for a GPU run under `ulimit -n N`) on a real report.

Recorded (gpu29): `stackpeel check --fresh` on one H100 80GB HBM3 (torch 2.11.0+cu130, Triton 3.6.0,
FLA 0.6.0, driver 580.159.04) under `ulimit -n 48`, main as of session 28 (the checkout path scrubbed to
`<repo>`). There the first tensor fitted under 48 descriptors (torch.cuda passed; on the H200 of
session 24 it failed at 48), the Triton launch died and nested under the limit. Point 3 asked for
torch.cuda among the limit's symptoms regardless and failed a correct report.

Recorded (gpu30): the same under `ulimit -n` 44 and 56 on one NVIDIA H200 (session 30; same driver,
torch, Triton and FLA, main at 1ba60c32). At 44 torch's first tensor fails ("CUDA-capable device(s)
is/are busy or unavailable", as a bare `torch.ones(4, device="cuda")` did at 40 and 44 and not at 48);
at 56 the first tensor and the Triton launch both work, so nothing the limit starves fails and the
limit is a warning (degraded), not a blocking root. Point 3 asked for a blocking root at every limit
and failed that correct report."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from stackpeel.model import Report
from stackpeel.replay import rediagnose

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "expect-open-files"
H100_48 = ROOT / "tests" / "data" / "open_files" / "h100-nofile-48.json"
H200_44 = ROOT / "tests" / "data" / "open_files" / "h200-s30-nofile-44.json"
H200_56 = ROOT / "tests" / "data" / "open_files" / "h200-s30-nofile-56.json"


def _expect(raw: dict, tmp_path: Path, n: int = 48):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(raw))
    return subprocess.run([sys.executable, str(SCRIPT), str(n), str(path)], capture_output=True, text=True)


def test_the_h100_report_at_48_meets_every_point(tmp_path):
    raw = json.loads(H100_48.read_text())
    assert "/work/" not in H100_48.read_text()
    torch = next(r for r in raw["results"] if r["id"] == "torch.cuda")
    assert torch["status"] == "pass" and "H100" in torch["summary"]
    r = _expect(raw, tmp_path)
    assert r.returncode == 0, r.stdout
    assert "ok   multi_gpu.open_files is a blocking root over torch.cuda: symptoms ['triton.kernel_launch']" \
        " (torch.cuda passed under this limit)" in r.stdout


def test_today_s_diagnosis_of_the_h100_facts_is_the_same():
    report = rediagnose(Report.from_dict(json.loads(H100_48.read_text())))
    (root,) = [b for b in report.diagnosis.blocking if b.check_id == "multi_gpu.open_files"]
    assert root.codes == ("open-files-limit-low",)
    assert [s.check_id for s in root.symptoms] == ["triton.kernel_launch"]
    assert report.diagnosis.errors == ()


def test_a_failed_torch_cuda_outside_the_limit_still_fails_point_3(tmp_path):
    """Control: where torch.cuda failed and is not the limit's symptom, point 3 fails as before."""
    raw = copy.deepcopy(json.loads(H100_48.read_text()))
    next(r for r in raw["results"] if r["id"] == "torch.cuda")["status"] = "fail"
    r = _expect(raw, tmp_path)
    assert r.returncode == 1
    assert "FAIL multi_gpu.open_files is a blocking root over torch.cuda: symptoms ['triton.kernel_launch']\n" \
        in r.stdout


def test_the_h200_report_at_44_meets_every_point_with_torch_under_the_limit(tmp_path):
    raw = json.loads(H200_44.read_text())
    assert "/work/" not in H200_44.read_text()
    torch = next(r for r in raw["results"] if r["id"] == "torch.cuda")
    assert torch["status"] == "fail" and "NVIDIA H200" in torch["summary"]
    assert "busy or unavailable" in torch["findings"][0]["message"]
    r = _expect(raw, tmp_path, 44)
    assert r.returncode == 0, r.stdout
    assert "ok   multi_gpu.open_files is a blocking root over torch.cuda: symptoms ['torch.cuda'," in r.stdout


def test_the_h200_report_at_56_where_nothing_failed_meets_every_point(tmp_path):
    raw = json.loads(H200_56.read_text())
    assert "/work/" not in H200_56.read_text()
    by_id = {x["id"]: x for x in raw["results"]}
    assert by_id["torch.cuda"]["status"] == by_id["triton.kernel_launch"]["status"] == "pass"
    assert by_id["multi_gpu.open_files"]["status"] == "warn"
    assert [f["code"] for f in by_id["multi_gpu.open_files"]["findings"]] == ["open-files-limit-low"]
    r = _expect(raw, tmp_path, 56)
    assert r.returncode == 0, r.stdout
    assert "ok   torch.cuda and triton.kernel_launch passed under this limit: multi_gpu.open_files is degraded, " \
        "not a blocking root" in r.stdout


def test_today_s_diagnosis_of_the_h200_facts_at_56_is_degraded_not_blocking():
    report = rediagnose(Report.from_dict(json.loads(H200_56.read_text())))
    assert "multi_gpu.open_files" not in [b.check_id for b in report.diagnosis.blocking]
    assert "multi_gpu.open_files" in [d.check_id for d in report.diagnosis.degraded]
    assert report.diagnosis.errors == ()


def test_a_failed_launch_that_the_limit_does_not_explain_fails_point_3_at_56(tmp_path):
    """Control: the same report with the Triton launch failed (and no blocking root over it) is no pass."""
    raw = copy.deepcopy(json.loads(H200_56.read_text()))
    next(r for r in raw["results"] if r["id"] == "triton.kernel_launch")["status"] = "fail"
    r = _expect(raw, tmp_path, 56)
    assert r.returncode == 1
    assert "FAIL multi_gpu.open_files is a blocking root over torch.cuda: symptoms [] (torch.cuda passed" in r.stdout
