"""chk29: Triton's cache on a file system that refuses its writes, as a real fault: a private
mount namespace (``unshare -m``) with a full tmpfs, a tmpfs without free inodes, or a read-only
bind mount under TRITON_CACHE_DIR. In the same fault, ``stackpeel check`` (toolchain.triton_cache's
real probe) and real Triton writing its cache (triton/runtime/cache.py FileCacheManager, as a
compile does) must agree: the check's finding code is what ``explain`` names for Triton's own
traceback.

Of the caches the failures name, only Triton's is checked (toolchain.triton_cache) besides the
temporary directory (toolchain.temp_dir, tmp24's tests): no check reads the torch extensions,
TorchInductor or huggingface caches; explain names those (build-dir-unusable,
huggingface-cache-unwritable, disk-full, read-only-filesystem) from logs only.
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from stackpeel.explain import explain_text
# fixtures and helpers of test_toolchain's real-probe tests (imported by name)
from test_toolchain import can_unshare, cli_env, result, stackpeel_cli  # noqa: F401

#: Triton's own cache write, as a compile stores a kernel (the stack venv's Triton)
TRITON_PUT = textwrap.dedent("""
    from triton.runtime.cache import FileCacheManager
    FileCacheManager("0" * 64).put(b"\\0" * 65536, "kernel.cubin")
    print("stored")
""")

#: each leaves an existing cache folder (a user who ran Triton before) on the refusing file system;
#: a TRITON_CACHE_DIR that cannot even be created is config.triton_environment's env-path-unusable,
#: the root the cache check's finding nests under
FAULTS = {
    # a 1 MiB tmpfs filled by dd (dd itself stops with ENOSPC: `;`, not `&&`)
    "full": ("mount -t tmpfs -o size=1m none {m} && mkdir {m}/cache && "
             "{{ dd if=/dev/zero of={m}/fill bs=4k count=1000 2>/dev/null; true; }}", "No space left on device"),
    # room for bytes, none for another file: every inode taken (the root, cache, a, b)
    "no-inodes": ("mount -t tmpfs -o size=64m,nr_inodes=4 none {m} && mkdir {m}/cache && touch {m}/a {m}/b",
                  "No space left on device"),
    "read-only": ("mkdir -p {m}/cache && mount --bind {m} {m} && mount -o remount,bind,ro {m}", "Read-only file system"),
}


def _in_fault(setup, cmd, env):
    return subprocess.run(["unshare", "-m", "sh", "-c", setup + ' && exec "$@"', "sh", *cmd],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_check_and_explain_name_the_same_code_for_a_refused_triton_cache(fault, stack_python, cli_env, tmp_path,
                                                                          can_unshare):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    setup, errno_text = FAULTS[fault]
    setup = setup.format(m=mnt)
    env = dict(cli_env, TRITON_CACHE_DIR=str(mnt / "cache"))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.triton_cache", "--fresh", env=env,
                              wrap=setup)
    res = result(report, "toolchain.triton_cache")
    assert res["status"] == "fail" and [f["code"] for f in res["findings"]] == ["triton-cache-unusable"]
    f = res["findings"][0]
    assert f["severity"] == "blocking" and res["facts"]["writable"] is False
    assert errno_text in f["evidence"] and str(mnt / "cache") in f["message"]
    # the root: the cache check itself, or (where the folder TRITON_CACHE_DIR names cannot be
    # written: read-only, no inode for a file) config.triton_environment's env-path-unusable, under
    # which the cache's finding nests
    blocking = [(r["check"], r["codes"], [s["check"] for s in r["symptoms"]]) for r in report["diagnosis"]["blocking"]]
    assert blocking == [("toolchain.triton_cache", ["triton-cache-unusable"], [])] or \
        blocking == [("config.triton_environment", ["env-path-unusable"], ["toolchain.triton_cache"])], blocking
    # real Triton meets the same fault; explain reads its traceback
    run = _in_fault(setup, [stack_python, "-c", TRITON_PUT], dict(env, PYTHONPATH=""))
    assert run.returncode == 1 and "stored" not in run.stdout, run.stdout + run.stderr
    assert errno_text in run.stderr and "triton/runtime/cache.py" in run.stderr
    said = explain_text(run.stderr, source=f"triton-cache-{fault}")
    assert said.candidates and said.candidates[0].code == f["code"], [c.code for c in said.candidates[:3]]


def _check_on_tmpfs(size: str, stack_python, cli_env, tmp_path):
    """toolchain.triton_cache's real probe with TRITON_CACHE_DIR on a tmpfs of ``size`` (mount's
    spelling: 64m) in a private mount namespace: (its result, the mount command, the environment)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    setup = f"mount -t tmpfs -o size={size} none {mnt}"
    env = dict(cli_env, TRITON_CACHE_DIR=str(mnt / "cache"))
    report, _ = stackpeel_cli("--python", stack_python, "--only", "toolchain.triton_cache", "--fresh", env=env,
                              wrap=setup)
    return result(report, "toolchain.triton_cache"), setup, env


def test_a_cache_with_room_passes_and_triton_stores_its_kernel(stack_python, cli_env, tmp_path, can_unshare):
    """Negative control: the same tmpfs with room (64 MiB, over the 32 MiB the check asks for)."""
    res, setup, env = _check_on_tmpfs("64m", stack_python, cli_env, tmp_path)
    assert res["status"] == "pass" and res["findings"] == [] and res["facts"]["writable"] is True
    run = _in_fault(setup, [stack_python, "-c", TRITON_PUT], dict(env, PYTHONPATH=""))
    assert run.returncode == 0 and run.stdout.strip() == "stored", run.stderr


def test_a_nearly_full_cache_is_named_before_triton_fails(stack_python, cli_env, tmp_path, can_unshare):
    """4 MiB free: Triton's 64 KiB write still succeeds, but compiled kernels and helpers (hundreds
    of KiB each) are about to fail: the check's no-space sentence, with what is free."""
    res, _, _ = _check_on_tmpfs("4m", stack_python, cli_env, tmp_path)
    assert [f["code"] for f in res["findings"]] == ["triton-cache-unusable"] and res["facts"]["writable"] is True
    assert "4096 KiB free" in res["findings"][0]["message"]
