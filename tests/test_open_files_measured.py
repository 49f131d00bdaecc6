"""gpu32: the figures the open-files finding quotes are the measured ones. Its GPU message said "measured
on one H200 with torch 2.11 and Triton 3.6: the first tensor fails at 48 and works at 64" (session 24).
Sessions 30 and 32 measured the same driver, torch and Triton again: a bare `torch.ones(4, device="cuda")`
fails at 44 and works at 45 on an H100 and at 48 on an H200 (session 32, an H100: 44 fails, 45-56 work;
session 30, an H200: 40 and 44 fail, 48 works), and a bare first Triton kernel with an empty cache
(scenarios/gpu/user_kernel.py) fails at 45-48 and works at 52-56 on the H100, where the check's own
launch probe still failed up to 55 (it holds a few descriptors more: fd capture, its fork's pipe). The
message now says so. Replayed on session 30's recorded H200 report at `ulimit -n 44`.

gpu33: session 33 measured the points between (49-51) on two H100s (driver 580.159.04, torch 2.11.0+cu130,
Triton 3.6.0; docs/validation/2026-12-06-h200-session33): the bare first kernel fails at 48 and already
works at 49, 50 and 51, in both calls, while the check's launch probe fails up to 55 and works at 56. The
message said "works at 52", the first point measured then; it now quotes 49, and the probe's own 56."""

from __future__ import annotations

import json
from pathlib import Path

from stackpeel.model import Report
from stackpeel.replay import rediagnose

H200_44 = Path(__file__).resolve().parent / "data" / "open_files" / "h200-s30-nofile-44.json"


def test_the_gpu_message_quotes_the_thresholds_measured_since_session_30():
    report = rediagnose(Report.from_dict(json.loads(H200_44.read_text())))
    by_id = {r.id: r for r in report.results}
    for cid in ("torch.cuda", "triton.kernel_launch"):
        (finding,) = [f for f in by_id[cid].findings if f.code == "open-files-limit-low"]
        assert "under an open-files limit of 44 descriptors per process (hard limit 44)" in finding.message
        assert "fails at 44 and works at 45 on an H100, at 48 on an H200" in finding.message, finding.message
        assert "fails at 48 and works at 49 on the H100" in finding.message, finding.message
        assert "its Triton launch needs 56 there" in finding.message
        assert "works at 52" not in finding.message  # session 32's first point measured, not the threshold
        assert "works at 64" not in finding.message  # session 24's figure, not seen since
