"""`stackpeel diff`: differences ranked by what they can explain."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.compare import compare, render_comparison
from stackpeel.model import Report

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "docs" / "validation" / "2026-11-29-h200" / "reports"


def load(path):
    return Report.from_dict(json.loads(Path(path).read_text()))


def test_healthy_against_no_compiler_names_the_compiler_first():
    cmp = compare(load(H200 / "healthy.json"), load(H200 / "no-compiler.json"))
    first = cmp.differences[0]
    assert (first.kind, first.where, first.b) == ("verdict", "toolchain.c_compiler", "fail (no-c-compiler)")
    assert first.why == "root cause on B"
    facts = [d for d in cmp.differences if d.where == "toolchain.c_compiler" and d.kind != "verdict"]
    assert facts and min(cmp.differences.index(d) for d in facts) < \
        min(i for i, d in enumerate(cmp.differences) if d.where == "triton.build")
    assert any(d.key == "compiler" and d.a == "/opt/gcc/bin/gcc" and d.b is None for d in facts)
    # noise stays out: timings, free bytes, captured stderr
    assert not any(d.key.endswith(("duration_s", "free_bytes", "stderr")) for d in cmp.differences)
    text = render_comparison(cmp)
    assert text.index("toolchain.c_compiler: pass -> fail (no-c-compiler) [root cause on B]") < text.index("triton.build")
    assert max(len(line) for line in text.splitlines() if not line.startswith(("A: ", "B: "))) <= 80  # labels are paths


def test_each_difference_names_the_changed_checks_it_can_explain():
    cmp = compare(load(H200 / "healthy.json"), load(H200 / "no-compiler.json"))
    changed = ("toolchain.c_compiler", "toolchain.extension_build", "triton.build", "triton.kernel_launch",
               "kernels.fla")
    first = cmp.differences[0]
    assert first.explains == changed  # the root's verdict can explain every changed check below it
    build = next(d for d in cmp.differences if d.where == "triton.build" and d.kind == "verdict")
    assert build.explains == ("triton.build", "triton.kernel_launch", "kernels.fla")  # not the compiler above it
    assert json.loads(render_comparison(cmp, "json"))["differences"][0]["explains"] == list(changed)
    # the target's Python version may explain any changed check; where it is installed, none
    raw = json.loads((H200 / "no-compiler.json").read_text())
    raw["target"].update(version="3.11.9", prefix="/srv/other-venv")
    target = {d.key: d for d in compare(load(H200 / "healthy.json"), Report.from_dict(raw)).differences
              if d.where == "target"}
    assert target["version"].explains == changed and target["prefix"].explains == ()


def fleet_report(tmp_path, *reports):
    """A fleet report as `stackpeel fleet` writes it, from real reports (the H200 runs)."""
    out = tmp_path / "fleet.json"
    proc = subprocess.run([sys.executable, "-m", "stackpeel", "fleet", "--from", *map(str, reports), "--format",
                           "json", "-o", str(out)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 1 and out.exists(), proc.stderr
    return out


def test_diff_between_two_nodes_of_a_fleet_report(tmp_path):
    fleet = fleet_report(tmp_path, H200 / "healthy.json", H200 / "no-compiler.json", H200 / "python-h-hidden.json")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "stackpeel", "diff", *a], capture_output=True,  # noqa: E731
                                    text=True, env=env, timeout=60)
    p = run(f"{fleet}:healthy", f"{fleet}:no-compiler", "--format", "json")
    assert p.returncode == 1, p.stderr
    d = json.loads(p.stdout)
    assert d["a"]["label"] == f"{fleet}:healthy"
    first = d["differences"][0]
    assert (first["where"], first["b"], first["why"]) == ("toolchain.c_compiler", "fail (no-c-compiler)",
                                                          "root cause on B")
    # the same as diffing the two saved reports themselves
    direct = json.loads(run(str(H200 / "healthy.json"), str(H200 / "no-compiler.json"), "--format", "json").stdout)
    assert d["differences"] == direct["differences"]
    other = json.loads(run(f"{fleet}:healthy", f"{fleet}:python-h-hidden", "--format", "json").stdout)
    assert other["differences"][0]["where"] == "toolchain.python_headers"
    # a fleet report without a node, or a node it does not hold: exit 2, naming the nodes
    for spec, words in ((str(fleet), "name one of its nodes"), (f"{fleet}:gpu-99", "has no node 'gpu-99'")):
        bad = run(spec, f"{fleet}:healthy")
        assert bad.returncode == 2 and words in bad.stderr and "no-compiler" in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr
    plain = run(f"{H200 / 'healthy.json'}:x", f"{fleet}:healthy")
    assert plain.returncode == 2 and "not a fleet report" in plain.stderr


def test_a_node_that_gave_no_report_is_refused_with_why(tmp_path):
    from stackpeel.fleet import NodeOutcome, merge

    fleet = merge([NodeOutcome("gpu-a", "file", "ok", load(H200 / "healthy.json")),
                   NodeOutcome("gpu-b:2222", "ssh", "unreachable", None, "OSError: [Errno 113] No route to host")])
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet.to_dict()))
    p = subprocess.run([sys.executable, "-m", "stackpeel", "diff", f"{path}:gpu-a", f"{path}:gpu-b:2222"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert p.returncode == 2 and "gpu-b:2222" in p.stderr and "unreachable" in p.stderr and "No route" in p.stderr


def test_a_report_against_itself_has_no_difference():
    rep = load(H200 / "healthy.json")
    cmp = compare(rep, rep)
    assert cmp.differences == ()
    assert "No meaningful difference" in render_comparison(cmp)
    assert json.loads(render_comparison(cmp, "json"))["kind"] == "diff"


def test_cli_exit_codes_and_markdown(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "stackpeel", "diff", *a], capture_output=True,  # noqa: E731
                                    text=True, env=env, timeout=60)
    same = run(str(H200 / "healthy.json"), str(H200 / "healthy.json"))
    assert same.returncode == 0, same.stderr
    differ = run(str(H200 / "healthy.json"), str(H200 / "no-compiler.json"), "--format", "markdown")
    assert differ.returncode == 1 and differ.stdout.startswith("# stackpeel diff")
    assert "### toolchain.c_compiler: pass -> fail (no-c-compiler)" in differ.stdout
    missing = run(str(tmp_path / "nope.json"), str(H200 / "healthy.json"))
    assert missing.returncode == 2 and "cannot read a report" in missing.stderr and "Traceback" not in missing.stderr


@pytest.fixture(scope="module")
def triton36_venv(stack_python, tmp_path_factory):
    """The stack venv with Triton 3.6.0 laid over it: a real second venv whose only difference
    is the Triton release (its own site-packages comes before the stack's, added by a .pth)."""
    base = tmp_path_factory.mktemp("triton36") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(base)], check=True, timeout=120)
    site = subprocess.run([str(base / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stack_site = subprocess.run([stack_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "stack.pth").write_text(stack_site + "\n")
    pip = subprocess.run([str(base / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                          "--disable-pip-version-check", "triton==3.6.0"], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"triton 3.6.0 not installable here: {pip.stderr.strip()[-300:]}")
    return str(base / "bin" / "python")


@pytest.mark.slow
def test_two_real_venvs_that_differ_in_triton(stack_python, triton36_venv):
    from stackpeel.engine import check

    a = check(python=stack_python, only=["triton.import"])
    b = check(python=triton36_venv, only=["triton.import"])
    cmp = compare(a, b, "stack", "triton-3.6")
    first = cmp.differences[0]
    assert (first.kind, first.where) == ("version", "triton.import") and first.key in ("version", "dist_version"), \
        cmp.differences[:3]
    assert first.a.startswith("3.9") and first.b == "3.6.0"


@pytest.mark.slow
def test_cli_diff_of_two_real_venvs_names_the_triton_release_first(stack_python, triton36_venv, tmp_path):
    """The whole `stackpeel diff` on two venv directories (every check, not only triton.import):
    the same verdicts on both sides, and Triton 3.9.0 -> 3.6.0 is what differs most."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    venvs = [str(Path(p).parent.parent) for p in (stack_python, triton36_venv)]
    p = subprocess.run([sys.executable, "-m", "stackpeel", "diff", *venvs, "--format", "json"], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 1, p.stderr[-2000:]
    d = json.loads(p.stdout)
    # today both sides get the same verdicts here; should a Triton-3.6 finding ever change one,
    # that verdict ranks first and the release must still be the first fact
    first = next(x for x in d["differences"] if x["kind"] != "verdict")
    assert first["kind"] == "version" and "triton" in first["key"] + first["where"], d["differences"][:3]
    assert first["a"].startswith("3.9") and first["b"] == "3.6.0"
    if d["a"]["root_causes"] == d["b"]["root_causes"]:
        assert d["differences"][0] == first
