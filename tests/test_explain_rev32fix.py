"""rev32fix: what the merge review of lead32 found (docs/dev/rev32fix.md), one block per item.
Each block is realistic near-miss text run through explain (or a check's finding on facts), that
failed before its fix."""

from __future__ import annotations

import pytest

from test_explain_patterns import codes_of as _codes


# -- item 2: a TORCH_CUDA_ARCH_LIST setting is read only beside torch's 'no kernel image'
#
# torch/utils/cpp_extension.py compiles an extension for the architectures of
# TORCH_CUDA_ARCH_LIST; torch's own wheels never read it. The setting is local evidence: a
# `docker run -e TORCH_CUDA_ARCH_LIST=...` line or an environment dump far above a plain torch
# traceback says nothing about which binary lacked the kernel (the refinement is `local = true`:
# it is not read on the log's clue lines).

_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
_TORCH_TB = ("Traceback (most recent call last):\n"
             '  File "/app/infer.py", line 12, in <module>\n'
             '    x = torch.randn(4, 4, device="cuda") @ w\n'
             f"{_NO_KERNEL}\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the "
             "stacktrace below might be incorrect.\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")


def test_arch_list_far_from_torchs_error_keeps_torchs_reading():
    for head in ('$ docker run --gpus all -e TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0" myimage python infer.py\n'
                 "Loading model...\n",
                 "Running on WSL2, TORCH_CUDA_ARCH_LIST is unset\n"
                 + "".join(f"step {i} done\n" for i in range(6)),
                 "NVIDIA_PYTORCH_VERSION=24.01 TORCH_CUDA_ARCH_LIST=5.2 6.0 6.1 7.0 7.5 8.0 8.6 9.0+PTX "
                 "CUDA_VERSION=12.3 (inside the docker container)\n"
                 + "".join(f"step {i} done\n" for i in range(6))):
        codes = _codes(head + _TORCH_TB)
        assert codes[:1] == ["torch-arch-not-supported"], (head, codes)
        assert "extension-arch-missing" not in codes[:1]


def test_arch_list_beside_the_error_still_names_the_extension():
    # the apex#1051 shape: the setting, one line of prose, the error
    text = ('export TORCH_CUDA_ARCH_LIST="7.5"\n'
            "But when I run the code, the following situation appears:\n"
            f"{_NO_KERNEL}\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # CMAKE_CUDA_ARCHITECTURES keeps its reading from anywhere in the log (a clue of the code)
    far = ("-- CMAKE_CUDA_ARCHITECTURES: 70;75\n" + "".join(f"step {i} done\n" for i in range(6))
           + _TORCH_TB)
    assert _codes(far)[:1] == ["extension-arch-missing"]


def test_local_refine_flag_is_read_and_checked(tmp_path):
    from stackpeel import knowledge
    rules = [r for s in knowledge.load().signatures() if s.id == "no-kernel-image" for r in s.refine]
    assert [(r.context, r.code) for r in rules if r.local] == [
        (r"\bTORCH_CUDA_ARCH_LIST\b", "extension-arch-missing")]
    # a `local` that is no boolean is refused, naming the file and the code
    path = tmp_path / "toolchain.toml"
    path.write_text('[a-code]\nlayer = "toolchain"\nkind = "root"\nseverity = "blocking"\ntitle = "A title"\n'
                    'meaning = "What is true and why it matters, long enough to read."\nfix = "Do this."\n'
                    '[[a-code.log]]\nid = "x"\npatterns = ["some text"]\n'
                    'refine = [{context = "ctx words", code = "a-code", local = "yes"}]\n')
    knowledge.load.cache_clear()
    try:
        with pytest.raises(knowledge.KnowledgeError, match=r"toolchain\.toml \[a-code\].*refine entries"):
            knowledge.load((str(path),))
    finally:
        knowledge.load.cache_clear()
