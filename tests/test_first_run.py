"""The first five minutes: a progress line that fits a real terminal, a CPU-only torch named
as its own root cause, Triton's checks quiet where Triton is absent, an install that works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from stackpeel.cli import Progress

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("width", [20, 40, 80, 200])
def test_progress_line_never_reaches_the_last_column(width):
    p = Progress(total=27)
    now = 100.0
    items = [(f"toolchain.check_{i}", now - i * 3) for i in range(9)]
    for n in range(len(items) + 1):
        line = p.line(5, items[:n], now, width)
        assert len(line) <= width - 1, line
        assert line.startswith("stackpeel: 5/27"[: width - 1])
    assert "+" in p.line(5, items, now, 80)  # what does not fit is counted, not dropped silently


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a real terminal emulator)")
@pytest.mark.parametrize("width", [80, 50])
def test_no_stale_progress_lines_in_a_real_terminal(stack_python, tmp_path, width):
    """stackpeel under tmux at 80 (and 50) columns: while probes run the progress line is
    rewritten in place; afterwards no progress text is left anywhere in the scrollback."""
    session = f"stackpeel-test-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "done"
    cmd = (f"{sys.executable} -m stackpeel check --python {stack_python} --only torch,triton,kernels --fresh "
           f"--no-color > /dev/null; echo rc=$? > {done}; sleep 600")
    env = dict(os.environ, TERM="xterm")
    env.pop("TMUX", None)
    subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", str(width), "-y", "40",
                    "sh", "-c", cmd], check=True, env=env)
    screens = []
    try:
        deadline = time.monotonic() + 300
        while not done.exists() and time.monotonic() < deadline:
            screens.append(subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-J", "-t", session],
                                          capture_output=True, text=True).stdout)
            time.sleep(0.3)
        final = subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-J", "-S", "-", "-t", session],
                               capture_output=True, text=True).stdout
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)
    assert done.exists(), "stackpeel did not finish"
    progress = [ln for s in screens for ln in s.splitlines() if "checks done" in ln]
    assert progress, "no progress line was ever shown"
    assert all(len(ln.rstrip()) < width for ln in progress), [ln for ln in progress if len(ln.rstrip()) >= width]
    for s in screens:  # one progress line at a time, never a wrapped pile
        assert sum("checks done" in ln for ln in s.splitlines()) <= 1, s
    assert "checks done" not in final, final


def _check_json(python, *only, env=None):
    p = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", python, "--format", "json",
                        *(a for o in only for a in ("--only", o))], capture_output=True, text=True, timeout=600,
                       env=env)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_cpu_only_torch_is_its_own_root_cause(stack_python):
    """torch 2.13.0+cpu on a machine without a driver: two root causes, each with its fix;
    the wheel is not nested under the driver (installing a driver would not fix it)."""
    report = _check_json(stack_python, "torch")
    torch = next(r for r in report["results"] if r["id"] == "torch.cuda")
    assert torch["facts"]["version"].endswith("+cpu") and torch["facts"]["cuda"] is None
    roots = {rc["check"]: rc for rc in report["diagnosis"]["blocking"]}
    assert "torch.cuda" in roots and roots["torch.cuda"]["codes"] == ["torch-cpu-only-build"]
    if "gpu.kernel_driver" in roots:  # no driver here: both apply, and the message says so
        nested = [s["check"] for s in roots["gpu.kernel_driver"]["symptoms"]]
        assert "torch.cuda" not in nested
        msg = torch["findings"][0]["message"]
        assert "installing one will not change this wheel" in msg
    text = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", stack_python, "--only", "torch",
                           "--no-color"], capture_output=True, text=True, timeout=600).stdout
    root_part = text.split("CHECKS")[0]
    assert "PyTorch is a CPU-only build" in root_part and "uninstall" in root_part.lower()


def test_layers_of_absent_packages_skip_with_the_reason():
    """The tool venv has neither torch nor triton: nothing of Triton's is a finding."""
    report = _check_json(sys.executable)
    by_id = {r["id"]: r for r in report["results"]}
    from stackpeel.knowledge import all_codes

    triton_codes = {c for c, e in all_codes().items() if e.layer == "triton"}
    for cid in ("toolchain.libcuda_discovery", "toolchain.triton_cache", "toolchain.ptxas", "triton.import",
                "triton.build", "triton.kernel_launch", "kernels.fla"):
        assert by_id[cid]["status"] == "skip", (cid, by_id[cid]["summary"])
        assert "not installed" in by_id[cid]["summary"]
    emitted = {f["code"] for r in report["results"] for f in r["findings"]}
    assert not emitted & triton_codes
    assert not emitted & {"libcuda-not-in-ldconfig", "ldconfig-missing", "triton-libcuda-path-wrong",
                          "triton-cache-unusable", "file-command-missing"}


def test_readme_installs_with_pipx_first_and_answers_externally_managed():
    readme = (ROOT / "README.md").read_text()
    install = readme[readme.index("## Install"):]
    install = install[:install.index("\n## ", 4)]
    assert install.index("pipx install") < install.index("pip install")
    assert "externally-managed-environment" in install
    assert "scripts/make-stack-venv" in readme and "GB" in readme  # what the stack venv costs is said
