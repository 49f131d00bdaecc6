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
message said "works at 52", the first point measured then; it now quotes 49, and the probe's own 56.

gpu34: session 34 measured every point 44-56 on an H200 at last (the same driver, torch and Triton;
docs/validation/2026-12-07-h200-session34, call H): the same thresholds as the H100's, point for point
(bare first tensor fails at 44, works at 45; bare first Triton kernel fails at 48, works at 49; the check's
torch.cuda passes from 46, its launch from 56). The message said "works at 45 on an H100, at 48 on an H200"
(48 was session 30's first H200 point above 44, not its threshold) and quoted the kernel's figure for the
H100 only; it now gives the figures once, for both cards."""

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
        assert "on an H100 and an H200 alike" in finding.message, finding.message
        assert "a bare first tensor fails at 44 and works at 45;" in finding.message, finding.message
        assert "empty cache fails at 48 and works at 49;" in finding.message, finding.message
        assert "its Triton launch needs 56" in finding.message
        assert "at 48 on an H200" not in finding.message  # session 30's first point above 44, not the threshold
        assert "works at 52" not in finding.message  # session 32's first point measured, not the threshold
        assert "works at 64" not in finding.message  # session 24's figure, not seen since


#: gpu35: the words as the device gave them (session 35, an H100; docs/validation/2026-12-06-h100-session35):
#: a whole check under `ulimit -n` 46, with gpu34's message, recorded as it ran and replayed here
H100_46 = (Path(__file__).resolve().parent.parent / "docs" / "validation" / "2026-12-06-h100-session35" / "reports"
           / "words-n46.json.gz")


def test_the_device_gave_the_gpu_words_at_46_and_the_limit_is_the_launchs_root():
    import gzip

    recorded = Report.from_dict(json.loads(gzip.decompress(H100_46.read_bytes())))
    for report in (recorded, rediagnose(recorded)):
        by_id = {r.id: r for r in report.results}
        assert by_id["torch.cuda"].status.value == "pass"  # the check's torch.cuda passes from 46
        (root,) = [b for b in report.diagnosis.blocking if b.check_id == "multi_gpu.open_files"]
        assert [s.check_id for s in root.symptoms] == ["triton.kernel_launch"]  # its launch needs 56
        (finding,) = [f for f in by_id["triton.kernel_launch"].findings if f.code == "open-files-limit-low"]
        assert "under an open-files limit of 46 descriptors per process (hard limit 46)" in finding.message
        assert "on an H100 and an H200 alike: a bare first tensor fails at 44 and works at 45;" in finding.message
        assert "its Triton launch needs 56" in finding.message


def test_the_limit_that_broke_the_launch_is_marked_as_blocking_in_the_text_report():
    """gpu35's reading of the device's text report: the limit stood under "BLOCKING ROOT CAUSES" marked
    `!` (its own check only warns: the limit is low, nothing of its own failed), beside a `✗` root. A root
    under that heading is marked as failing; its own check's status stays in the check list."""
    import gzip

    from stackpeel.render import render

    recorded = Report.from_dict(json.loads(gzip.decompress(H100_46.read_bytes())))
    for verbose in (False, True):
        text = render(recorded, "text", width=80, ascii_only=True, verbose=verbose)
        head = text.split("DEGRADED")[0]
        assert "BLOCKING ROOT CAUSES" in head
        (line,) = [ln for ln in head.splitlines() if "] open-files-limit-low:" in ln]
        assert line.lstrip().startswith("[FAIL] "), line
        if verbose:
            (full,) = [ln for ln in text.splitlines() if "2. Open-files limit too low" in ln]
            assert full.lstrip().startswith("[FAIL] 2."), full
    by_id = {r.id: r for r in recorded.results}
    assert by_id["multi_gpu.open_files"].status.value == "warn"  # the check itself still only warns
