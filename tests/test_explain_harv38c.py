"""harv38c: an unbiased harvest of hangs, timeouts and watchdogs whose log holds mostly a symptom
(NCCL watchdog timeouts, JIT extension builds that never finish, stalls at start-up), scored
blind, and the general fixes its misses ask for (docs/dev/harv38c.md).

Eight new training-side logs; explain named none first before any change. The fixed misses:
- the NCCL watchdog's timeout of a one-element all-reduce (a barrier) while the main rank still
  maps the dataset ('Running tokenizer on dataset', 'Converting format of dataset', 'Grouping
  texts in chunks of N': LlamaFactory's loader.py, transformers' run_clm.py) is the new root
  ``collective-timeout-one-rank-busy`` (hiyouga/LlamaFactory#2424), not a broken transport;
- torch's ``Using <dir> as PyTorch extensions root...`` (cpp_extension._get_build_directory) as
  the line a user says the run stopped at, and a user's ``stop(s)/stuck at ... C++ extension(s)``
  or ``... cpp_extension.load``, are ``extension-build-lock-stale`` (mit-han-lab/pvcnn#24, #49).
Each case is real text (a thread's paste or the library's own source) with near-misses that must
keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes

BUSY = "collective-timeout-one-rank-busy"
LOCK = "extension-build-lock-stale"

# torch ProcessGroupNCCL.cpp WorkNCCL::checkTimeout, torch 2.x wording with the rank prefix
WATCHDOG_BARRIER = ("[rank1]:[E1123 00:52:57.704703955 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                    "Timeout(ms)=1800000) ran for 1800041 milliseconds before timing out.")


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_llamafactory_tokenizer_then_watchdog_names_the_busy_rank():
    # hiyouga/LlamaFactory#2424 (the reporter's paste: the progress bar and the watchdog on one line)
    text = (
        "Running tokenizer on dataset:   9%|███████▊          | 280000/2969526 [29:55<4:48:08, 155.57 examples/s]"
        "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800328 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
        "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
        "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.\n"
    )
    assert codes(text)[:1] == [BUSY]


def test_run_clm_grouping_then_rank_prefixed_watchdog():
    # transformers examples run_clm.py's second map, torch 2.x's rank-prefixed watchdog line
    text = (
        "Grouping texts in chunks of 1024:  41%|████      | 410000/1000000 [29:58<43:07, 228.1 examples/s]\n"
        + WATCHDOG_BARRIER + "\n"
        "[rank1]:[E1123 00:52:57.705170911 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 1] Exception (either an error or "
        "timeout) detected by watchdog at work: 2, last enqueued NCCL work: 2, last completed NCCL work: 1.\n"
    )
    assert codes(text)[:1] == [BUSY]


def test_llamafactory_converting_format_then_watchdog():
    text = ("Converting format of dataset (num_proc=16):  87%|████████▋ | 1730000/2000000 [29:41<04:38]\n"
            + WATCHDOG_BARRIER + "\n")
    assert codes(text)[:1] == [BUSY]


def test_watchdog_without_preprocessing_keeps_its_reading():
    # the same timeout with no dataset map in the log says nothing about a busy rank
    text = WATCHDOG_BARRIER + "\n"
    assert BUSY not in codes(text)
    # a finished tokenizer progress bar with no timeout is no failure of this kind
    assert BUSY not in codes("Running tokenizer on dataset: 100%|██████████| 5000/5000 [00:03<00:00, 1500 examples/s]\n")
    # a timeout of another collective (an all-gather of real data) in the same log
    text = ("Running tokenizer on dataset: 100%|██████████| 5000/5000 [00:03<00:00]\n"
            "[rank0]:[E626 05:06:30.929096625 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=120049, OpType=_ALLGATHER_BASE, NumelIn=16384000, "
            "NumelOut=131072000, Timeout(ms)=1800000) ran for 1800065 milliseconds before timing out.\n")
    assert "watchdog-timeout-during-dataset-preprocessing" not in {
        e for line in text.splitlines() for e in _ids(line)}


def test_stops_at_torch_extensions_root():
    # mit-han-lab/pvcnn#24: the reporter's words and torch's last line before the lock wait
    text = (
        "Hi, there is something wrong with the backend.py running today.\n"
        "the running infomation is as below and it stoped here\n"
        '"Using /tmp/torch_extensions as PyTorch extensions root..."\n'
    )
    assert codes(text)[:1] == [LOCK]


def test_deepspeed_root_line_then_hangs_forever():
    text = (
        "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n"
        "It hangs forever after this line, no other output.\n"
    )
    assert codes(text)[:1] == [LOCK]


def test_healthy_extension_build_keeps_quiet():
    # torch's full sequence for a build that took the lock, then an unrelated NCCL heartbeat warning
    text = (
        "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n"
        "Emitting ninja build file /root/.cache/torch_extensions/py310_cu121/cpu_adam/build.ninja...\n"
        "Building extension module cpu_adam...\n"
        "Loading extension module cpu_adam...\n"
        "Time to load cpu_adam op: 31.37122869491577 seconds\n"
        "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
        "collectives.\n"
    )
    # (the root line matches on its own; the user's words that the run stopped there are missing)
    assert LOCK not in codes(text)


def test_user_says_it_stops_at_the_cpp_extension_import():
    # mit-han-lab/pvcnn#49 (pytorch/pytorch#59146): the user's sentence and the load() call
    text = (
        "hi, thanks for your sharing code, but when I run the command,it's log stop at the process of import "
        "the C++ extensions.\n"
        "==> loading configs from ['configs/kitti/frustum/pvcnne.py']\n"
        "### Finally,stop at `_backend = load()` in `modules/functional/backend.py`:\n"
        "from torch.utils.cpp_extension import load\n"
    )
    assert codes(text)[:1] == [LOCK]


def test_stuck_compiling_cpp_extensions_titles():
    # the titles of nv-tlabs/GSCNN#69 and zhou13/neurvps#1, fenglinglwb/MAT#101's sentence
    for title in ("Stuck in process of compiling C++ extensions",
                  "Stuck in the process of compiling C++ extensions",
                  "When I was running the train.py, program got stuck at this statement and was not responding: "
                  "torch.utils.cpp_extension.load(name=module_name, verbose=verbose_build, sources=sources)"):
        assert "extension-build-stuck" in _ids(title), title


def test_cpp_extension_words_without_a_stall_stay_quiet():
    for line in ("Successfully compiled the C++ extensions in 42 s.",
                 "How do I import the C++ extension module after building it?",
                 "from torch.utils.cpp_extension import load",
                 "The build stopped with an error while compiling, see below"):
        assert "extension-build-stuck" not in _ids(line), line


def test_mid_training_timeout_after_tokenizing_keeps_its_reading():
    # a LlamaFactory log tokenizes first (the bar reaches 100 %), trains, and times out much later on a
    # gradient all-reduce: the busy-rank reading needs one of the first collectives, a barrier
    text = (
        "Running tokenizer on dataset: 100%|██████████| 5000/5000 [00:41<00:00, 121.3 examples/s]\n"
        "{'loss': 0.8533, 'grad_norm': 4.869833469390869, 'learning_rate': 1.4516129032258065e-05, 'epoch': 0.16}\n"
        "  2%|▏         | 13/620 [01:07<50:20,  4.98s/it][rank0]:[E1123 00:52:57.664949121 ProcessGroupNCCL.cpp:607] "
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1516, OpType=ALLREDUCE, "
        "NumelIn=25427968, NumelOut=25427968, Timeout(ms)=600000) ran for 600017 milliseconds before timing out.\n"
    )
    assert BUSY not in codes(text)


def test_old_torch_watchdog_wording_during_tokenizing():
    # torch 1.x/2.0 printed no sizes: 'WorkNCCL(SeqNum=2, OpType=ALLREDUCE, Timeout(ms)=1800000)'
    text = ("Running tokenizer on dataset:  63%|██████▎   | 630000/1000000 [29:57<17:35, 350.4 examples/s]\n"
            "[E ProcessGroupNCCL.cpp:821] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
            "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800631 milliseconds before timing out.\n")
    assert codes(text)[:1] == [BUSY]
