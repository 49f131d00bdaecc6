"""fix33 item 2: the same failure line printed twice (an issue's title repeating its body's error
line) is one failure; where the lines around one copy refine it (a narrower cause) and those
around the other do not, the copy with that context carries the evidence (apex#1051,
docs/dev/harv32b.md 'the title-repeat effect')."""

from __future__ import annotations

from pathlib import Path

from stackpeel.explain import explain_text

CORPUS = Path(__file__).resolve().parent / "corpus" / "explain"
_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _body(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8").split("# ---\n", 1)[1]


def test_apex_1051_the_bodys_copy_beside_the_arch_list_carries_the_title():
    expl = explain_text(_body("apex-1051-rtx3080-arch-list-7.5-no-kernel-image.log"))
    by_code = {c.code: c for c in expl.candidates}
    # the title's copy (line 1) no longer reads as torch's own build on its own
    assert "torch-arch-not-supported" not in by_code
    ext = by_code["extension-arch-missing"]
    assert [ev.line for ev in ext.evidence if ev.entry == "no-kernel-image"] == [1, 9]
    # (the first install's `nvcc fatal: Unsupported gpu architecture 'compute_86'` weighs more:
    # nvcc-arch-unsupported ranks first, extension-arch-missing second)
    assert [c.code for c in expl.candidates][:2] == ["nvcc-arch-unsupported", "extension-arch-missing"]


def test_a_title_that_repeats_the_error_line_does_not_decide():
    text = (f"{_NO_KERNEL}\n\n"
            "I built the extension for my old card and now run it on an RTX 3090.\n"
            "Before installing I did:\n"
            'export TORCH_CUDA_ARCH_LIST="7.5" && python setup.py install\n'
            "Then running the demo gives:\n"
            f"{_NO_KERNEL}\n")
    assert [c.code for c in explain_text(text).candidates][:1] == ["extension-arch-missing"]


def test_one_copy_alone_keeps_its_reading():
    # no second copy: the title line alone is torch's build, as before
    assert [c.code for c in explain_text(f"{_NO_KERNEL}\n\nIt happens on my RTX 3090.\n").candidates][:1] == \
        ["torch-arch-not-supported"]


def test_copies_refined_two_ways_stay_as_they_are():
    text = ("The installed PyTorch reports:\n"
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
            "installation.\n"
            f"{_NO_KERNEL}\n"
            "\n\n\n\n\n"
            "and my own extension, built with\n"
            "cmake -DCMAKE_CUDA_ARCHITECTURES=75 ..\n"
            f"{_NO_KERNEL}\n")
    # (the first copy is torch's build by its own line above: it is not read as the second's)
    top = explain_text(text).candidates[0]
    assert top.code == "torch-arch-not-supported" and 3 in [ev.line for ev in top.evidence]
