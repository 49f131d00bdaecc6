"""gpu38's three fault-suite scenarios, their setups run for real on this CPU machine (root, unshare -m).

``libcuda-not-in-ldconfig`` (a valid linker cache without libcuda.so.1, LD_LIBRARY_PATH unset) and
``ldconfig-missing`` (no /sbin/ldconfig) break Triton's own lookup of libcuda.so.1 (FAILURE_MODES T5);
``triton-cache-full`` puts TRITON_CACHE_DIR on a full tmpfs (T8). Here: the fault is what the scenario
says (Triton's lookup or a cache write fails with the proof's text), check's toolchain layer names the
scenario's code, and explain reads the failure as it. On a CPU machine the driver layer's own roots
(no GPU here) come first, so the libcuda scenarios' check side is judged by its finding, not its root;
the GPU run (scripts/device) judges the whole report.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel.explain import explain_text

SUITE_PATH = Path(__file__).resolve().parent.parent / "scenarios" / "gpu" / "suite.py"
spec = importlib.util.spec_from_file_location("gpu_suite_38", SUITE_PATH)
suite = importlib.util.module_from_spec(spec)
sys.modules["gpu_suite_38"] = suite  # dataclasses look their module up while the class is built
spec.loader.exec_module(suite)
SC = {s.name: s for s in suite.SCENARIOS}

#: what Triton does first on a fresh cache: find libcuda.so.1 (3.0-3.9's libcuda_dirs)
LIBCUDA_DIRS = "from triton.backends.nvidia.driver import libcuda_dirs; print('dirs', libcuda_dirs())"
#: what Triton's cache does with a built helper: write it into TRITON_CACHE_DIR
CACHE_PUT = ("from triton.runtime.cache import get_cache_manager\n"
             "m = get_cache_manager('0' * 64)\n"
             "print('put', m.put(b'x' * 200000, 'cuda_utils.so', binary=True))\n")


def need_namespace():
    if os.geteuid() != 0 or not shutil.which("unshare") or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs root and unshare -m for a private mount namespace")


def test_the_three_scenarios_are_in_the_suite_and_await_their_gpu_run():
    for name, code in (("libcuda-not-in-ldconfig", "libcuda-not-in-ldconfig"), ("ldconfig-missing", "ldconfig-missing"),
                       ("triton-cache-full", "triton-cache-unusable")):
        sc = SC[name]
        assert list(sc.roots) == [code] and list(sc.explain) == [code]
        assert sc.proofs and not sc.proofs[0].expect_ok and sc.proofs[0].expect_text
        assert sc.needs(suite.Machine(python="p", gpus=0, is_root=True, unshare=True, fla=False, triton_version=None,
                                      include_dir=None, ptxas=None, cc_major=None))  # a GPU scenario: skips here


def check(sc, tmp_path, stack_python, only):
    setup = sc.setup(None, tmp_path)
    env = dict(setup.env, PYTHONPATH=str(suite.REPO / "src"))
    p = subprocess.run(setup.wrap + suite.stackpeel_argv(stack_python, ["--only", only]), env=env,
                       capture_output=True, text=True, timeout=300)
    return setup, json.loads(p.stdout)


@pytest.mark.parametrize("name", ["libcuda-not-in-ldconfig", "ldconfig-missing"])
def test_tritons_libcuda_lookup_fails_and_check_and_explain_name_it(name, tmp_path, stack_python):
    need_namespace()
    sc = SC[name]
    setup, rep = check(sc, tmp_path, stack_python, "toolchain.libcuda_discovery")
    (r,) = [r for r in rep["results"] if r["id"] == "toolchain.libcuda_discovery"]
    assert r["status"] == "fail" and [f["code"] for f in r["findings"]] == list(sc.roots), r
    looked = subprocess.run(setup.wrap + [stack_python, "-c", LIBCUDA_DIRS], env=setup.env, capture_output=True,
                            text=True, timeout=120)
    out = looked.stdout + looked.stderr
    assert looked.returncode != 0 and "dirs" not in looked.stdout
    assert sc.proofs[0].expect_text in out, out[-2000:]
    assert explain_text(out).root.code in sc.explain
    # outside the fault the same lookup goes on (here, with no driver, to its own assertion or a list)
    plain = subprocess.run([stack_python, "-c", LIBCUDA_DIRS], env=setup.env, capture_output=True, text=True,
                           timeout=120)
    assert "No such file or directory: '/sbin/ldconfig'" not in plain.stderr


def test_the_empty_linker_cache_is_valid_and_lists_nothing(tmp_path):
    need_namespace()
    setup = SC["libcuda-not-in-ldconfig"].setup(None, tmp_path)
    assert "LD_LIBRARY_PATH" not in setup.env
    p = subprocess.run(setup.wrap + ["/sbin/ldconfig", "-p"], env=setup.env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("0 libs found in cache"), p.stdout[:300] + p.stderr[:300]
    # the loader still finds the system's libraries in its default directories
    c = subprocess.run(setup.wrap + [sys.executable, "-c", "import ctypes; ctypes.CDLL('libstdc++.so.6'); print('ok')"],
                       env=setup.env, capture_output=True, text=True, timeout=60)
    assert c.stdout.strip() == "ok", c.stderr[-500:]


def test_the_full_cache_is_the_root_and_a_cache_write_fails(tmp_path, stack_python):
    need_namespace()
    sc = SC["triton-cache-full"]
    setup, rep = check(sc, tmp_path, stack_python, "toolchain.triton_cache")
    assert suite.judge(sc, rep) == []
    wrote = subprocess.run(setup.wrap + [stack_python, "-c", CACHE_PUT], env=setup.env, capture_output=True,
                           text=True, timeout=120)
    out = wrote.stdout + wrote.stderr
    assert wrote.returncode != 0 and sc.proofs[0].expect_text in out, out[-2000:]
    # ENOSPC from triton/runtime/cache.py is the cache's, not the temporary directory's (tmp-full's)
    assert explain_text(out).root.code in sc.explain
    # the same write into a cache with room succeeds: the fault, not this machine, broke it
    ok = subprocess.run([stack_python, "-c", CACHE_PUT], env=dict(setup.env, TRITON_CACHE_DIR=str(tmp_path / "ok")),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "put" in ok.stdout, ok.stderr[-1000:]


# ---- scripts/device: the shared device call's staging and unpacking, on a scratch repository ----------------

DEVICE = Path(__file__).resolve().parent.parent / "scripts" / "device"
B_PATHS = ("src", "scenarios", "bench/explain_accuracy.py", "scripts/corpus_split.py")


@pytest.mark.parametrize("name", ["stage.sh", "go.sh", "run.sh"])
def test_the_device_scripts_parse(name):
    assert subprocess.run(["bash", "-n", str(DEVICE / name)], capture_output=True).returncode == 0


def test_b_carries_what_the_suite_imports_and_go_copies_the_same_paths():
    stage, go = (DEVICE / "stage.sh").read_text(), (DEVICE / "go.sh").read_text()
    assert f'BPATHS="{" ".join(B_PATHS)}"' in stage
    assert f'cp -a --parents {" ".join(B_PATHS)} "$S/B/"' in go
    # the suite ranks with bench/explain_accuracy.py, which loads scripts/corpus_split.py by path
    assert "from explain_accuracy import ranking" in SUITE_PATH.read_text()
    assert '"scripts" / "corpus_split.py"' in (SUITE_PATH.parent.parent.parent / "bench" / "explain_accuracy.py").read_text()


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_stage_carries_only_bs_changes_and_go_rebuilds_b(tmp_path):
    """A scratch 'main' (A) and a clone whose branch (B) changes, adds and deletes files under B's paths:
    stage.sh (NVJ=0, fake wheels in its cache) carries only B's changed files and the deleted list, and
    go.sh, on a copy of A's tree, rebuilds B's paths exactly as B's commit has them."""
    if not shutil.which("git"):
        pytest.skip("needs git")
    main = tmp_path / "main"
    for rel, text in (("src/pkg/a.py", "a = 1\n"), ("src/pkg/gone.py", "x\n"), ("scenarios/gpu/suite.py", "s\n"),
                      ("bench/explain_accuracy.py", "b\n"), ("scripts/corpus_split.py", "c\n"), ("README", "r\n")):
        (main / rel).parent.mkdir(parents=True, exist_ok=True)
        (main / rel).write_text(text)
    (main / ".gitignore").write_text("/.whl-*/\n/.whl/\n")
    git(tmp_path, "init", "-q", str(main))
    git(main, "add", "-A")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "A")
    branch = tmp_path / "branch"
    subprocess.run(["git", "clone", "-q", str(main), str(branch)], check=True)
    (branch / "src/pkg/a.py").write_text("a = 2\n")
    (branch / "src/pkg/new.py").write_text("n = 1\n")
    (branch / "src/pkg/gone.py").unlink()
    dev = branch / "scripts" / "device"
    dev.mkdir(parents=True)
    for name in ("stage.sh", "go.sh", "run.sh"):
        shutil.copy(DEVICE / name, dev / name)
    git(branch, "add", "-A")
    git(branch, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "B")
    cache = tmp_path / "cache"
    cache.mkdir()
    for wheel in ("fla_core-0.6.0-py3-none-any.whl", "flash_linear_attention-0.6.0-py3-none-any.whl"):
        (cache / wheel).write_bytes(b"not a wheel")
    env = dict(os.environ, CHECKOUT=str(main), STAGE=".whl-t", CACHE=str(cache), NVJ="0")
    p = subprocess.run(["bash", str(dev / "stage.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    staged = main / ".whl-t"
    assert "[over A: 2 files, 1 deleted]" in (staged / "stage.txt").read_text()
    assert (staged / "srcB.deleted").read_text().split() == ["src/pkg/gone.py"]
    assert not (staged / "nvj").exists()
    assert git(main, "status", "--porcelain") == ""  # the staged folder is ignored there
    out = tmp_path / "out"
    out.mkdir()
    run = subprocess.run(["bash", ".whl-t/go.sh"], cwd=main, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, OUT=str(out), PART="none", T=sys.executable, W=str(tmp_path / "w"),
                                  SITE=str(tmp_path / "site")))
    assert "unknown PART=none" in run.stdout
    b = staged / "B"
    assert (b / "src/pkg/a.py").read_text() == "a = 2\n" and (b / "src/pkg/new.py").read_text() == "n = 1\n"
    assert not (b / "src/pkg/gone.py").exists()
    for rel in ("scenarios/gpu/suite.py", "bench/explain_accuracy.py", "scripts/corpus_split.py"):
        assert (b / rel).read_text() == (main / rel).read_text()
    assert not (b / "README").exists() and (b / ".whl").is_symlink()
