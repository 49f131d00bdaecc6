"""harvx21: infrastructure messages no entry read (docs/dev/harvx21.md).

A CDI spec written for an earlier driver or device set names files the host no longer has: crun
cannot stat a versioned NVIDIA library a bind mount of the spec lists, or the CDI library cannot
stat a device node it lists (``cdi-spec-stale``, a new root). A watchdog timeout that comes after
Lightning's "`Trainer.fit` stopped" points at a post-fit collective only some ranks call (a clue
of ``collective-mismatch-across-ranks``). Each message is the program's own text (the ``source``
of each signature) or a training-side thread's paste; every message runs through the wrappers
pasted logs put around lines, and each family has near-misses that must stay unread.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests, sourced_roots_test

FAMILIES = {
    "cdi-spec-stale": [
        # crun (newer wording) through podman, as NVIDIA/nvidia-container-toolkit#692 pasted it
        "Error: crun: cannot stat `/usr/lib/libnvidia-egl-wayland.so.1.1.13`: No such file or directory: OCI runtime attempted to invoke a command that was not found",
        # the same for libEGL_nvidia after a Fedora driver update (nvidia-container-toolkit#450)
        "Error: crun: cannot stat `/lib64/libEGL_nvidia.so.550.54.14`: No such file or directory: OCI runtime attempted to invoke a command that was not found",
        # crun src/libcrun/utils.c crun_dir_p_at's older wording, no backticks (Igalia/webkit-container-sdk#23)
        "Error: unable to start container \"ecdb2132\": crun: error stat'ing file /lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07: No such file or directory: OCI runtime attempted to invoke a command that was not found",
        # libcuda itself
        "Error: crun: cannot stat `/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15`: No such file or directory: OCI runtime attempted to invoke a command that was not found",
        # container-device-interface container-edits.go through cache.go InjectDevices (nvidia-container-toolkit#885)
        'Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device "/dev/dri/renderD129": no such file or directory',
        # the same through containerd / the toolkit's runtime
        'OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: failed to inject devices: failed to stat CDI host device "/dev/dri/card0": no such file or directory: unknown',
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


test_new_root_is_sourced = sourced_roots_test(["cdi-spec-stale"])


def test_cdi_spec_stale_says_to_regenerate_the_spec():
    entry = assert_sourced_root("cdi-spec-stale")
    assert entry.severity == "blocking"
    assert "nvidia-ctk cdi generate" in str(entry.commands)
    assert "nvidia-ctk cdi generate" in entry.fix


def test_stale_spec_in_a_fenced_paste_with_the_regeneration_after_it():
    # nvidia-container-toolkit#885: the error, then the user's regeneration (whose WARN lines
    # about libraries it could not find are healthy) and a working run
    text = ("```\n"
            "podman run --rm --device nvidia.com/gpu=all  ubuntu nvidia-smi\n"
            'Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device "/dev/dri/renderD129": no such file or directory\n'
            "```\n"
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml\n"
            "WARN[0000] Could not locate /dev/dri/controlD64: pattern /dev/dri/controlD64 not found \n"
            "WARN[0000] Could not locate libnvidia-egl-wayland.so.*.*: pattern libnvidia-egl-wayland.so.*.* not found\n")
    assert _codes(text)[:1] == ["cdi-spec-stale"]


def test_stale_spec_quoted_in_markdown_prose():
    # Igalia/webkit-container-sdk#23 quotes podman's error as a markdown quote inside prose
    text = ("When starting manually with `podman start wkdev`, `podman` failed with the following message:\n\n"
            "> Error: unable to start container \"ecdb2132becbc09015d0bb7d14299693a75a462be160a2a4fc7610d60e0d3f2a\": crun: error stat'ing file "
            "/lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07: No such file or directory: OCI runtime attempted to invoke a command that was not found\n")
    assert _codes(text)[:1] == ["cdi-spec-stale"]


def test_unresolvable_cdi_device_stays_the_unknown_device():
    # a spec the engine cannot see at all (moby/moby#47676, rootless dockerd) is not a stale one
    text = "docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=all.\n"
    codes = _codes(text)
    assert codes[:1] == ["container-gpu-device-unknown"]
    assert "cdi-spec-stale" not in codes


def test_watchdog_timeout_after_fit_stopped_points_at_mismatched_collectives():
    # alan-turing-institute/autocast#381: rank 0 alone entered save_checkpoint's barrier after fit
    text = ("`Trainer.fit` stopped: `max_epochs=N` reached.\n"
            "[Rank 0] Watchdog caught collective operation timeout:\n"
            "  WorkNCCL(..., OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n"
            "  ran for 1800090 milliseconds before timing out.\n")
    codes = _codes(text)
    assert codes[:1] == ["collective-mismatch-across-ranks"]
    assert "collective-hang" in codes


def test_watchdog_timeout_alone_keeps_its_transport_causes_first():
    # without the post-fit clue the watchdog's symptom ranks its usual causes, not the mismatch
    text = ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1580, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n")
    assert _codes(text)[:1] != ["collective-mismatch-across-ranks"]


@pytest.mark.parametrize("line,code", [
    # /dev/nvidia-uvm missing is the uvm module not loaded, not a stale spec
    ('Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device "/dev/nvidia-uvm": no such file or directory', "cdi-spec-stale"),
    # crun failing to stat a file that is no NVIDIA driver library (a user's bind mount, a cgroup)
    ("Error: unable to start container 'abc': crun: cannot stat `/tmp/loom-release-smoke/demo/data/mysql`: No such file or directory: OCI runtime attempted to invoke a command that was not found", "cdi-spec-stale"),
    ("Error: crun: executable file `bash` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found", "cdi-spec-stale"),
    # an unversioned library name is a missing file inside the image, not a spec entry
    ("crun: cannot stat `/usr/lib/libcuda.so`: No such file or directory", "cdi-spec-stale"),
    # nvidia-ctk's own WARN while generating a spec is healthy
    ("WARN[0000] Could not locate libnvidia-egl-wayland.so.*.*: pattern libnvidia-egl-wayland.so.*.* not found", "cdi-spec-stale"),
    # Lightning's end-of-fit line alone is no failure
    ("`Trainer.fit` stopped: `max_epochs=20` reached.", "collective-mismatch-across-ranks"),
])
def test_near_misses_stay_unread(line, code):
    assert code not in match_codes(line)
    assert code not in _codes(line)
