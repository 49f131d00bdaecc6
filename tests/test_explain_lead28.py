"""Packages whose name begins with ``triton`` but are not OpenAI's Triton (issue 8, item 2).

NVIDIA's Triton Inference Server client is ``tritonclient`` (``pip install tritonclient[all]``);
``tritonserver`` and ``triton_python_backend_utils`` belong to the server. CPython's import system
(Lib/importlib/_bootstrap.py ``_find_and_load_unlocked``) reports the top-level name that is
missing: ``No module named 'tritonclient'``. Before this, the missing-package signature refused
every name that merely started with ``triton`` (to leave Triton's own ``triton-not-installed`` its
line), so a missing ``tritonclient`` was an unexplained error. Only the Triton Inference Server's
names are let through: a bare ``triton`` whose next line a hard-wrap reading glues on
(``tritonexiting``) stays Triton's.
"""

from __future__ import annotations

import pytest

from test_explain_patterns import WRAPPERS, codes


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", ["tritonclient", "tritonserver", "triton_python_backend_utils"])
def test_a_missing_package_named_triton_something_is_not_tritons(name, wrapper):
    line = "ModuleNotFoundError: No module named '%s'" % name
    got = codes(WRAPPERS[wrapper](line))
    assert got[:1] == ["python-package-not-installed"], (wrapper, got)
    assert "triton-not-installed" not in got, got


@pytest.mark.parametrize("text", [
    "ModuleNotFoundError: No module named 'triton'",
    "ModuleNotFoundError: No module named triton",
    # a wrapped line whose next line starts right after the name
    "ModuleNotFoundError: No module named 'triton'\nTraceback (most recent call last):",
    # unquoted, the next line glued on as a hard wrap's second half ('tritonexiting')
    "step 1/10\nModuleNotFoundError: No module named triton\nexiting",
    "ImportError: No module named triton",
])
def test_tritons_own_absence_keeps_its_code(text):
    got = codes(text)
    assert got[:1] == ["triton-not-installed"], got
    assert "python-package-not-installed" not in got, got


# -- bench/explain_invariance.py: a cut's losses, and which of them kept the answer's own line --

def _invariance():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "explain_invariance.py"
    spec = importlib.util.spec_from_file_location("explain_invariance_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n", [1, 3, 4, 9, 10])
def test_the_cuts_keep_the_lines_they_say_they_keep(n):
    inv = _invariance()
    body = "\n".join("line %d" % i for i in range(1, n + 1))
    for name, top in inv.CUTS.items():
        kept = inv.TRANSFORMS[name][1](body).split("\n")
        assert kept == ["line %d" % i for i in inv._kept_lines(top, n)], (name, kept)
        assert len(kept) == n - n // 4


def test_the_signature_line_is_the_message_not_the_context_beside_it():
    """A cut counts as fragile only when it kept a line a signature matched: here the NCCL error
    line, not the question about NCCL_SOCKET_IFNAME that picked the variant."""
    inv = _invariance()
    log = ("What do I set NCCL_SOCKET_IFNAME to on both nodes?\n"
           "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:410, "
           "unhandled system error, NCCL version 2.4.8\n")
    cand = inv.first(log, "")
    assert cand is not None
    clue_lines = {e.line for e in cand.evidence if e.entry.startswith("clue:")}
    assert 2 in inv.signature_lines(cand), cand.evidence
    assert not clue_lines & set(inv.signature_lines(cand))


# -- writes the file system refuses: a quota, a file-size limit, a read-only mount, torch.save's lost write --
#
# Sources: strerror() of glibc (EDQUOT 'Disk quota exceeded', EFBIG 'File too large', EROFS 'Read-only
# file system') as CPython's OSError prints it ('[Errno N] <strerror>: <path>'); strsignal(SIGXFSZ)
# 'File size limit exceeded' as bash reports a job it killed (CPython ignores SIGXFSZ at start-up, so a
# Python program sees EFBIG); Go's os.PathError ('mkdir <path>: read-only file system'); torch's
# caffe2/serialize/inline_container.cc ('PytorchStreamWriter failed writing file <name>: file write
# failed', 'unexpected pos N vs M'), whose errno is never printed.

WRITE_CASES = [
    ("OSError: [Errno 122] Disk quota exceeded: '/home/u/.cache/huggingface/hub/tmpa1b2'", "disk-quota-exceeded"),
    ("ERROR: Could not install packages due to an OSError: [Errno 122] Disk quota exceeded", "disk-quota-exceeded"),
    ("fatal error: error writing to /tmp/ccQw3rTy.s: Disk quota exceeded", "disk-quota-exceeded"),
    ("cp: error writing '/home/u/ckpt/model.safetensors': Disk quota exceeded", "disk-quota-exceeded"),
    ("OSError: [Errno 27] File too large: '/media/usb/checkpoints/model.pt'", "file-size-limit"),
    ("/var/spool/slurmd/job4242/slurm_script: line 12: 31337 File size limit exceeded (core dumped) python train.py",
     "file-size-limit"),
    ("worker 3 was killed by signal SIGXFSZ while writing the checkpoint", "file-size-limit"),
    ("OSError: [Errno 30] Read-only file system: '/app/outputs/checkpoint-500'", "read-only-filesystem"),
    ("Error response from daemon: mkdir /var/lib/docker/overlay2/abc123: read-only file system", "read-only-filesystem"),
    ("RuntimeError: [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file data/42: "
     "file write failed", "disk-full"),
    ("RuntimeError: [enforce fail at ..\\caffe2\\serialize\\inline_container.cc:300] . unexpected pos 192 vs 86",
     "disk-full"),
]


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("line,code", WRITE_CASES)
def test_a_refused_write_names_why(line, code, wrapper):
    got = codes(WRAPPERS[wrapper](line))
    assert got[:1] == [code], (wrapper, got)


def test_torch_saves_lost_write_is_the_quota_where_the_log_shows_one():
    log = ("$ lfs quota -hu alice /lustre\n"
           "RuntimeError: [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
           "data/42: file write failed\n")
    assert codes(log)[:1] == ["disk-quota-exceeded"], codes(log)
    log = ("my checkpoints go to a FAT32 USB stick\n"
           "RuntimeError: [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
           "data/42: file write failed\n")
    assert codes(log)[:1] == ["file-size-limit"], codes(log)


@pytest.mark.parametrize("line,code", [
    # a cache or an install target with a code of its own keeps it, the read-only mount second
    ("OSError: [Errno 30] Read-only file system: '/root/.triton/cache/abc'", "triton-cache-unusable"),
    ("OSError: [Errno 30] Read-only file system: '/home/user/.cache/huggingface/hub'", "huggingface-cache-unwritable"),
    ("ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file system: "
     "'/usr/lib/python3/dist-packages/torch'", "install-dir-unwritable"),
])
def test_a_read_only_cache_keeps_its_own_code(line, code):
    got = codes(line)
    assert got[:2] == [code, "read-only-filesystem"], got


@pytest.mark.parametrize("line", [
    # an upload refused by a server, not a file system
    "The upload failed: File too large",
    "413 Request Entity Too Large",
    # quotas of an API, not a disk
    "openai.RateLimitError: You exceeded your current quota, please check your plan and billing details.",
    # a mount listing that merely says ro
    "overlay on / type overlay (ro,relatime)",
    # the signal's name in code or a comment, nothing killed
    "signal.signal(signal.SIGXFSZ, signal.SIG_DFL)",
    "ignoring SIGXFSZ so writes return EFBIG",
])
def test_look_alikes_are_not_refused_writes(line):
    got = codes(line)
    assert not {"disk-quota-exceeded", "file-size-limit", "read-only-filesystem", "disk-full"} & set(got), got


@pytest.mark.parametrize("text,said", [
    ("I had exceeded my disk quota on the cluster\nRuntimeError: the job failed", True),
    ("The home quota was full\nRuntimeError: the job failed", True),
    # an API's or a service's quota
    ("We exceeded the quota of the API\nRuntimeError: the job failed", False),
])
def test_a_users_sentence_names_a_disk_quota_only(text, said):
    assert ("disk-quota-exceeded" in codes(text)) is said, codes(text)
