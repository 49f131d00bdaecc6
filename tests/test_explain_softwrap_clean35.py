"""Soft-wrap losses (clean35): a message re-wrapped at a space (a mail client, an editor, the
issue form) whose error line, or whose words of a failure, the wrap broke apart. Each text is a
training log's line as bench/explain_invariance.py's softwrap transform (textwrap at 80 columns)
breaks it; before clean35 the wrapped paste lost the answer the log gets as pasted.
"""

from __future__ import annotations

import textwrap

import pytest

from stackpeel.explain import explain_text


def soft_wrap(body: str) -> str:
    out = []
    for line in body.split("\n"):
        indent = line[:len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, 80, subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True) or [""])
    return "\n".join(out)


CASES = [
    # open-mmlab/mmdetection#3991: "undefined symbol" broken at its space (neither piece an error line)
    ("I met the problem when I run the demo.\n"
     "/home/ubuntu/miniconda3/envs/py37-cuda101/lib/python3.7/site-packages/mmcv/_ext.cpython-37m-x86_64-"
     "linux-gnu.so:undefined symbol: _ZN3c106Symbol14fromQualStringERKSs,how can I solve the problem?\n\n"
     "The environment infomation is\n", "extension-torch-mismatch"),
    # kijai/ComfyUI-WanVideoWrapper#875: the error line's rest, "loaded (Triton)", on a line of its own
    ("Having a problem with WanWrapper - Sampler cannot be initiated.\n\n"
     "Basically the proocess cannot be initiated because some of the packages are not loaded (Triton)\n\n"
     "How ot fix that?\n", "triton-not-installed"),
    # pinokiofactory/pinokio#978: "install the" / "cpu version of torch." (only the whole is a failure)
    ("I'm using wsl to run this app. When I install https://github.com/pinokiofactory/RMBG-2-Studio , "
     "it automatically install the cpu version of torch.\n\nhow can I fix it\n", "torch-cpu-only-build"),
]


@pytest.mark.parametrize("body,code", CASES, ids=["mmdetection-3991", "wanvideowrapper-875", "pinokio-978"])
def test_a_soft_wrapped_paste_keeps_the_answer_of_the_log_as_pasted(body, code):
    assert explain_text(body).codes[:1] == [code]
    wrapped = soft_wrap(body)
    assert wrapped != body
    assert explain_text(wrapped).codes[:1] == [code], wrapped


def test_the_whole_wrapped_line_is_reported_once():
    body = soft_wrap(CASES[0][0])
    texts = [u.text for u in explain_text(body).unexplained]
    assert sum("undefined symbol: _ZN3c10" in t for t in texts) == 1, texts
    assert not any(t.startswith("symbol: ") for t in texts), texts


def test_a_fence_after_the_shells_killed_is_no_wrapped_piece():
    # InternLandMark/LandMark#65: the shell's "Killed" after a progress bar, then the closing fence
    # (SEAM_RE reads a backtick as a continuation's start; a fence is none)
    body = ("```bash\n$ python3 -m app.trainer --config confs/x.txt\nTraining with a single process on 1 GPUs.\n"
            " 20%|\u2588\u2588\u2588\u2588                | 216/1063 [00:27<02:17,  6.17it/s]Killed\n ```\n")
    assert explain_text(body).codes[:1] == ["host-oom-killed"]


def test_a_next_line_that_is_an_error_of_its_own_is_not_joined():
    # two error lines that merely look wrapped stay two
    body = ("the loader could not open the file at the path given in the config because\n"
            "error: permission denied while reading /data/model.bin\n")
    texts = [u.text for u in explain_text(body).unexplained]
    assert any(t.startswith("error: permission denied") for t in texts), texts
