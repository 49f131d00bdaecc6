"""scripts/expect-open-files (fd25's points for a GPU run under `ulimit -n N`) on a real report.

Recorded (gpu29): `stackpeel check --fresh` on one H100 80GB HBM3 (torch 2.11.0+cu130, Triton 3.6.0,
FLA 0.6.0, driver 580.159.04) under `ulimit -n 48`, main as of session 28 (the checkout path scrubbed to
`<repo>`). There the first tensor fitted under 48 descriptors (torch.cuda passed; on the H200 of
session 24 it failed at 48), the Triton launch died and nested under the limit. Point 3 asked for
torch.cuda among the limit's symptoms regardless and failed a correct report."""

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
