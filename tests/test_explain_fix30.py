"""fix30: what session 29's review left in the knowledge base's wording and clues.

- ``Unsupported operand 60`` / ``118`` (model-file-corrupt's clues: the first byte of an HTML page
  or a Git LFS pointer that torch's weights-only unpickler refused) were substrings of
  ``Unsupported operand 601`` / ``1180``: the clues now end with the line end torch prints after
  the operand (torch/_weights_only_unpickler.py ``f"Unsupported operand {key[0]}"``, then
  serialization.py's ``"\\n\\n" + DOCS_MESSAGE``);
- transformers' refusal to offload weights to disk without an ``offload_folder`` has a code of its
  own (device-map-offload-folder-missing), never gpu-out-of-memory: raised here by the stack venv's
  real transformers;
- triton-too-old-for-package's fix says which way to move; fp16-nan-output's fix leads with the
  general cause (NaN/inf logits, the sampler's refusal), the image case second.
"""

from __future__ import annotations

import subprocess

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import scan_text
from stackpeel.knowledge import load as load_knowledge
from test_explain_review29 import TB, WO
from test_explain_patterns import codes_of


@pytest.mark.parametrize("operand", ["60", "118"])
def test_an_operand_clue_is_the_whole_number(operand):
    clue = f"Unsupported operand {operand}\n"
    # the operand ends its line, in the middle of a log or at its very end (no newline after it)
    for text in (TB + WO.format(detail=f"Unsupported operand {operand}"), f"x\nUnsupported operand {operand}"):
        assert clue in scan_text(text).clues, text[-200:]
    # a longer number that starts with the same digits is another byte, not '<' or 'v'
    for longer in (operand + "1", operand + "0"):
        text = TB + WO.format(detail=f"Unsupported operand {longer}")
        assert clue not in scan_text(text).clues, longer
        assert codes_of(text)[0] == "torch-load-weights-only-default", (longer, codes_of(text))


def _real_disk_offload_refusal(stack_python: str) -> str:
    """transformers' own ValueError (the stack venv's release: integrations/accelerate.py
    offload_weight in 5.x) for a weight that must go to disk with no offload_folder."""
    prog = ("import torch\n"
            "from transformers.integrations.accelerate import offload_weight\n"
            "offload_weight(torch.zeros(2), 'model.layers.0.weight', None, {})\n")
    out = subprocess.run([stack_python, "-c", prog], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "offload_folder" in out.stderr, out.stderr[-2000:]
    return out.stderr


# transformers 4.x modeling_utils.py _load_pretrained_model, as users' tracebacks show it
OFFLOAD_4X = ('  File "/usr/local/lib/python3.10/dist-packages/transformers/modeling_utils.py", line 3601, '
              'in _load_pretrained_model\n    raise ValueError(\n'
              "ValueError: The current `device_map` had weights offloaded to the disk. Please provide an "
              "`offload_folder` for them. Alternatively, make sure you have `safetensors` installed if the model "
              "you are using offers the weights in this format.\n")


def test_disk_offload_without_a_folder_is_its_own_cause_not_gpu_oom(stack_python):
    for text in (_real_disk_offload_refusal(stack_python), TB + OFFLOAD_4X):
        expl = explain_text(text)
        codes = [c.code for c in expl.candidates]
        assert codes[0] == "device-map-offload-folder-missing", codes
        assert "gpu-out-of-memory" not in codes, codes
    code = load_knowledge().codes["device-map-offload-folder-missing"]
    assert code.kind == "root" and "offload_folder=" in code.fix and "memory" in code.fix


def test_triton_too_old_fix_says_which_way_to_move():
    code = load_knowledge().codes["triton-too-old-for-package"]
    commands = [cmd for _, cmd in code.commands]
    # a name Triton does not have yet: Triton (with torch) up; a module Triton removed: the library
    # up, or the Triton the project's pin was written for; never Triton up for triton.ops
    assert any("install -U torch" in c and "triton.ops" not in c for c in commands), commands
    assert any("install -U <library>" in c and "triton.ops" in c for c in commands), commands
    assert any("'triton<3.2'" in c for c in commands), commands
    assert not any("-U torch triton" in c for c in commands), commands
    fix = code.fix
    assert fix.index("older than the library") < fix.index("upgrade Triton")
    assert fix.index("newer than the library") < fix.index("upgrade the library")


def test_fp16_nan_fix_leads_with_the_general_cause():
    fix = load_knowledge().codes["fp16-nan-output"].fix
    first = fix.split(". ")[0]
    assert "logits" in first and "VAE" not in first, first
    assert fix.index("probability tensor contains") < fix.index("VAE")
