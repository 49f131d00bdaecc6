"""The arch lists of the official torch wheels (knowledge/torch_wheels.toml) and what explain and
the known-bad combinations read from them (lead45; research in docs/dev/archtable44.md)."""

from __future__ import annotations

import pytest

from stackpeel import combinations as C
from stackpeel.explain.facts import _arch_runs
from tests.explain_helpers import answer, first

#: the capabilities of the GPUs people run torch on (Kepler to consumer Blackwell; Jetson's 7.2
#: and 8.7 are aarch64 only, outside the table)
CAPABILITIES = ("3.5", "3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")


def _cc(text: str) -> tuple:
    return tuple(int(x) for x in text.split("."))


def _pairs():
    for row in C.torch_wheels():
        for release in row.torch:
            for cuda in row.cuda:
                yield row, release, cuda


def test_table_loads_and_every_row_is_sourced():
    rows = C.torch_wheels()
    assert len(rows) >= 10
    for row in rows:
        assert row.basis in C.WHEEL_BASES and row.source
        assert all(a.startswith("sm_") for a in row.sm)
    # the releases the research covers (1.8 to 2.11, and 2.13 from torch's own table)
    releases = {t for r in rows for t in r.torch}
    assert {"1.8", "2.0", "2.5", "2.8", "2.11", "2.13"} <= releases


@pytest.mark.parametrize("cc", CAPABILITIES)
def test_combinations_name_exactly_the_gpus_a_wheel_lacks(cc):
    """A GPU a published wheel has no code for is one a known-bad combination explaining
    torch-arch-not-supported names for that torch and CUDA, and a GPU it runs is one none names:
    the hand-written entries and the sourced table cannot drift apart."""
    wrong = []
    for row, release, cuda in _pairs():
        runs = _arch_runs(row.arch_list, _cc(cc))
        versions = {"torch": f"{release}.0+cu{cuda.replace('.', '')}", "cuda": cuda, "gpu_cc": [cc],
                    "machine": "x86_64"}
        named = [m.combination.id for m in C.match_combinations(versions)
                 if "torch-arch-not-supported" in m.combination.explains]
        if runs == bool(named):
            wrong.append(f"torch {release} cu{cuda} on {cc}: {'runs' if runs else 'no code'}, combinations {named}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("version,cuda,expect", [
    ("2.6.0+cu126", None, [("2.6",), ("12.4", "12.6")]),
    ("2.8.0+cu128", None, [("2.8", "2.9", "2.10"), ("12.8",)]),
    ("2.1.0", "12.1", [("2.1", "2.2", "2.3", "2.4", "2.5"), ("12.1", "12.4")]),
    ("2.0.1+cu117.with.pypi.cudnn", None, [("1.8", "1.9", "1.10", "1.11", "1.12", "1.13", "2.0"),
                                           ("11.1", "11.3", "11.5", "11.6", "11.7")]),
])
def test_rows_of_a_labelled_or_stated_variant(version, cuda, expect):
    rows = C.torch_wheel_rows(version, cuda)
    assert [(r.torch, r.cuda) for r in rows] == [tuple(expect)]


def test_rows_of_a_release_without_variant_are_all_its_variants():
    rows = C.torch_wheel_rows("2.5.1")
    assert {c for r in rows for c in r.cuda} >= {"11.8", "12.1", "12.4"}


@pytest.mark.parametrize("version", ["2.7.0.dev20250310+cu128", "2.8.0rc1", "2.1.0+cpu", "2.4.0+rocm6.1",
                                     "1.7.1+cu110", "3.0.0", "not a version"])
def test_no_row_for_what_the_table_cannot_speak_for(version):
    assert C.torch_wheel_rows(version) == []


@pytest.mark.parametrize("body,message", [
    ('[[wheel]]\ntorch = ["2.1"]\ncuda = ["12.1"]\nsm = ["sm_80"]\nptx = []\nbasis = "rumour"\nsource = "x"\n',
     "basis"),
    ('[[wheel]]\ntorch = ["2.1"]\ncuda = ["12.1"]\nsm = ["8.0"]\nptx = []\nbasis = "measured"\nsource = "x"\n',
     "malformed"),
    ('[[wheel]]\ntorch = ["2.1"]\ncuda = ["12.1"]\nsm = ["sm_80"]\nptx = []\nbasis = "measured"\nsource = "x"\n'
     '[[wheel]]\ntorch = ["2.1"]\ncuda = ["12.1"]\nsm = ["sm_90"]\nptx = []\nbasis = "measured"\nsource = "y"\n',
     "also in"),
])
def test_malformed_rows_are_refused(tmp_path, body, message):
    p = tmp_path / "torch_wheels.toml"
    p.write_text("version = 1\n" + body)
    with pytest.raises(C.SpecifierError, match=message):
        C.torch_wheels(p)


NO_IMAGE = """Traceback (most recent call last):
  File "run.py", line 3, in <module>
    y = ext.forward(x)
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""


def _log(*lines: str) -> str:
    return "\n".join(lines) + "\n" + NO_IMAGE


def _rules(text: str):
    return [f for c in answer(text)["candidates"] for f in c.get("facts", [])]


def test_gpu_in_published_list_names_the_extension():
    text = _log("torch 2.6.0+cu126", "GPU 0: NVIDIA GeForce RTX 2080 Ti")
    assert first(text) == "extension-arch-missing"
    assert "state:gpu-in-published-torch-arch-list" in _rules(text)
    got = answer(text)["candidates"][0]["explanation"]
    assert "sm_75" in got and "get_arch_list" in got


def test_every_variant_agreeing_is_enough_without_a_label():
    # torch 2.5.1 ships sm_90 in every CUDA variant: an H800's missing image is an extension's
    text = _log("pytorch 2.5.1", "GPU: NVIDIA H800")
    assert first(text) == "extension-arch-missing"
    assert "state:gpu-in-published-torch-arch-list" in _rules(text)


def test_variants_disagreeing_decide_nothing():
    # torch 1.9's cu102 wheel stops at sm_70, its cu111 one has sm_86: the log does not say which
    text = _log("torch==1.9.0", "GPU 0: NVIDIA GeForce RTX 3090")
    assert "state:gpu-in-published-torch-arch-list" not in _rules(text)


def test_gpu_newer_than_the_wheel_is_torch_s_own():
    text = _log("torch 2.6.0+cu126", "GPU 0: NVIDIA GeForce RTX 5090")
    assert first(text) == "torch-arch-not-supported"
    assert "state:gpu-in-published-torch-arch-list" not in _rules(text)
    assert "combination:torch-cuda-below-12.8-blackwell" in [
        e["entry"].split(" ")[0] for c in answer(text)["candidates"] for e in c["evidence"]]


@pytest.mark.parametrize("extra", [
    r"  File C:\Users\me\miniconda3\lib\site-packages\ext\__init__.py, line 3",   # Windows: other lists
    "OS: Ubuntu 22.04.4 LTS (aarch64)",                                           # not an x86_64 wheel
])
def test_other_platforms_are_not_inferred(extra):
    text = _log("torch 2.6.0+cu126", "GPU 0: NVIDIA GeForce RTX 2080 Ti", extra)
    assert "state:gpu-in-published-torch-arch-list" not in _rules(text)


def test_a_nightly_is_not_inferred():
    text = _log("torch 2.7.0.dev20250310+cu128", "GPU 0: NVIDIA GeForce RTX 5090")
    assert "state:gpu-in-published-torch-arch-list" not in _rules(text)


def test_a_printed_arch_list_wins_over_the_table():
    # the printed list (a source build without sm_75) says torch lacks the GPU, whatever the table says
    text = _log("torch 2.6.0+cu126", "GPU 0: NVIDIA GeForce RTX 2080 Ti",
                "torch.cuda.get_arch_list(): ['sm_80', 'sm_86', 'sm_90']")
    assert "state:gpu-in-published-torch-arch-list" not in _rules(text)
    assert first(text) == "torch-arch-not-supported"


@pytest.mark.parametrize("versions,entry", [
    ({"torch": "2.6.0+cu126", "cuda": "12.6", "gpu_cc": ["12.0"]}, "torch-cuda-below-12.8-blackwell"),
    ({"torch": "1.13.1+cu117", "cuda": "11.7", "gpu_cc": ["9.0"]}, "torch-cuda-below-11.8-hopper"),
    ({"torch": "1.10.0+cu102", "cuda": "10.2", "gpu_cc": ["8.6"]}, "torch-cuda-10-ampere"),
    ({"torch": "2.7.1+cu128", "cuda": "12.8", "gpu_cc": ["7.0"]}, "torch-2.7-cu128-pre-turing"),
    ({"torch": "2.4.0+cu118", "cuda": "11.8", "gpu_cc": ["3.5"]}, "torch-kepler-sm35"),
    ({"torch": "2.4.0+cu121", "cuda": "12.1", "gpu_cc": ["3.7"]}, "cuda-12-kepler"),
])
def test_check_reads_the_new_entries_from_package_metadata(versions, entry):
    """`stackpeel check` matches the same entries against the versions it reads (no import)."""
    assert entry in [m.combination.id for m in C.match_combinations(versions)]


def test_a_k80_on_a_cu118_wheel_is_fine():
    # 2.1-2.5's cu118 wheels append sm_37: no entry names a K80 there
    versions = {"torch": "2.4.0+cu118", "cuda": "11.8", "gpu_cc": ["3.7"]}
    assert not [m for m in C.match_combinations(versions) if "torch-arch-not-supported" in m.combination.explains]


def test_check_leaves_the_new_entries_to_torch_cuda_on_a_recorded_stack():
    """On recorded H200 facts with a cu126 torch and an RTX 5090 put in: torch.cuda reports the
    missing Blackwell code live, config.known_combinations matches the entry and leaves it (no second
    root for one fact)."""
    from tests.test_combinations import CU126, _report

    report = _report(CU126, "12.0", "NVIDIA GeForce RTX 5090")
    facts = report.result("config.known_combinations").facts
    assert "torch-cuda-below-12.8-blackwell" in facts["matched"]
    assert "torch-cuda-below-12.8-blackwell" in facts["left_to_live_checks"]
    assert [f.code for f in report.result("torch.cuda").findings] == ["torch-arch-not-supported"]
    assert all("torch-cuda-below-12.8-blackwell" not in f.message
               for f in report.result("config.known_combinations").findings)
