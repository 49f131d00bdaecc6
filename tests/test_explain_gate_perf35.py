"""The chunk gate's error words flag error lines, not the healthy lines of a training log (perf35).

clean35 added the French word for a failure, "\u00e9chec", to knowledge.ERROR_WORDS as the ASCII
"chec": it flagged every "checkpoint" and "check" line, each then read by the per-line regexes
(+21 % CPU on bench/explain_bench.py's generated log). The accented word is in FOREIGN_WORDS,
whose gate runs on every chunk that is not ASCII, as a chunk holding "\u00e9" is: the French line is
still read, the healthy lines are not flagged.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import ERROR_WORDS, load

PRE = "Loading model...\nstep 1/10 done\n"

HEALTHY = [
    # transformers/trainer.py _save_checkpoint: logger.info(f"Saving model checkpoint to {output_dir}")
    "[INFO|trainer.py:3478] 2024-05-01 12:00:00,123 >> Saving model checkpoint to out/checkpoint-500",
    # transformers/modeling_utils.py: the shard loading progress bar
    "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]",
    # lightning/pytorch/trainer/connectors/checkpoint_connector.py: rank_zero_info
    "Restoring states from the checkpoint path at /ckpt/last.ckpt",
    # bench/explain_bench.py's generated warning
    "2024-05-01 12:00:00 WARNING checkpoint.py:12] slow storage, save took 3.21s",
    # lightning's sanity check progress bar
    "Sanity Checking DataLoader 0: 100%|##########| 2/2 [00:00<00:00,  9.80it/s]",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_a_checkpoint_line_passes_no_gate(line):
    kb = load()
    assert kb.gate.search(line) is None, kb.gate.search(line).group()


def test_no_error_word_is_a_prefix_of_check():
    assert not [w for w in ERROR_WORDS if w in "checkpoint check checking checked"]


@pytest.mark.parametrize("line", [
    "\u00c9chec de la compilation du module",
    "\u00e9chec du chargement du mod\u00e8le",
])
def test_the_french_word_for_a_failure_is_still_read(line):
    expl = explain_text(PRE + line + "\n")
    assert expl.candidates or int(expl.exit_code) == 1
