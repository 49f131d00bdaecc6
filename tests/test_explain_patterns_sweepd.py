"""Recall of explain on logs sampled by symptom (sweepd): 14 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02h``) taken in search order
for symptom queries (a watchdog timeout, NCCL WARN, a killed DataLoader worker, a killed
process, no space left, too many open files, ChildFailedError, a taken MASTER_PORT, a hang at
the first iteration), then fixed by class from the programs that print the messages.

What the threads showed, and the class each fix covers:

- the open-files limit had no code: torch's DataLoader (``Too many open files. Communication
  with the workers is no longer possible.``), multiprocessing's ``received 0 items of ancdata``
  when a worker's descriptor cannot be received (Peterande/D-FINE 22), strerror(EMFILE) in its
  Python, C++ and zh-CN spellings, and users' words (``打开文件过多``, ``files opend too much``):
  ``open-files-limit-exhausted``.
- users' words for a taken rendezvous port (``meet master_port is already used``,
  ViTAE-Transformer/ViTDet 16), next to c10d's own ``Address already in use``.
- bash's ``Killed`` in a zh_CN locale (``已杀死``, alone or in job control's report) is an error
  line like ``Killed``, and so is a ``Killed`` glued to the end of tqdm's bar
  (InternLandMark/LandMark 65); users' ``the process was directly killed by the system``
  (danijar/dreamerv3 203).
- a multi-GPU run that hangs with its GPUs at 100 % is NCCL spinning on a broken peer-to-peer
  path (shivammehta25/Matcha-TTS 57, pytorch 1637): weight 1, the symptom among could_be.
- users' words for a full disk (``report a error: no disk space``, ultralytics/yolov5 6756,
  measured as a second batch of one before its rule): weight 1.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import assert_sourced_root, family_tests, healthy_test, users_words_test

# code -> messages as the programs print them (each must rank the code first, whatever wraps it)
FAMILIES = {
    "open-files-limit-exhausted": [
        # torch/utils/data/dataloader.py _try_get_data, errno.EMFILE branch (torch >= 1.5)
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please "
        "increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
        "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code",
        # CPython multiprocessing/reduction.py recvfds
        "RuntimeError: received 0 items of ancdata",
        # strerror(EMFILE) as Python's OSError, a C++ socket and torch's MapAllocator print it
        "OSError: [Errno 24] Too many open files: '/data/train/000123.jpg'",
        "OSError: [Errno 24] Too many open files",
        "RuntimeError: unable to open shared memory object </torch_4242_1234567_7> in read-write mode: Too many open files (24)",
        "OSError: [Errno 24] 打开的文件过多",
    ],
    "rendezvous-port-in-use": [
        # c10d's own words keep their signature
        "RuntimeError: Address already in use",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# what users write for the same causes, in every way an issue carries a sentence
test_users_words_name_the_cause = users_words_test({
    # Peterande/D-FINE#22 (zh and en of one report)
    "如图，在模型的评估阶段报这样的错误，网上查说是打开文件过多": "open-files-limit-exhausted",
    "I searched the internet and got \"files opend too much\", but it still cannot work": "open-files-limit-exhausted",
    "训练时文件描述符超过上限，程序退出": "open-files-limit-exhausted",
    # ViTAE-Transformer/ViTDet#16 and the other spellings of the same setting
    "I used with multiple machines, but meet master_port is already used, do you meet this questions?":
        "rendezvous-port-in-use",
    "MASTER_PORT=29500 is already in use by another job on this node": "rendezvous-port-in-use",
    "the --master_port was occupied by my previous run": "rendezvous-port-in-use",
    "启动时报错，master_port 被占用": "rendezvous-port-in-use",
    "port 29500 is already in use": "rendezvous-port-in-use",
    # danijar/dreamerv3#203
    "The training process was directly killed by the system": "host-oom-killed",
    "my job got killed by the OS after two hours": "host-oom-killed",
    # shivammehta25/Matcha-TTS#57, pytorch/pytorch#1637
    "When i start training with multi-gpu, the script hangs forever with GPU at 100% and GPU Memory at 2%":
        "nccl-p2p-blocked",
    "DDP training is stuck at the first step, GPU util 100% on both cards": "nccl-p2p-blocked",
    "Training hangs on 2 GPUs and nvidia-smi shows 100% utilization": "nccl-p2p-blocked",
    "GPU utilization is at 100% on the first GPU until I kill the process": "nccl-p2p-blocked",
    # ultralytics/yolov5#6756 (the maintainer: the machine is out of hard drive space)
    "After 13 epochs of training and when val is starting, report a error: no disk space": "disk-full",
    "the training stopped because we ran out of disk space while saving checkpoints": "disk-full",
    "保存模型时报错，磁盘空间不足": "disk-full",
})


@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "2024-06-01 10:00:00 ", "(Worker pid=4242) ", "> "])
def test_the_torch_message_keeps_its_code_behind_prefixes(prefix):
    line = prefix + "RuntimeError: Too many open files. Communication with the workers is no longer possible."
    codes = [c.code for c in explain_text("epoch 1\n" + line + "\n").candidates]
    assert codes[:1] == ["open-files-limit-exhausted"], codes


def test_the_torch_message_wrapped_by_a_terminal_keeps_its_code():
    log = ("RuntimeError: Too many open files. Communication with the workers is no longer\n"
           "possible. Please increase the limit using `ulimit -n` in the shell\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["open-files-limit-exhausted"], codes


def test_ancdata_in_a_dataloader_traceback_is_the_open_files_limit():
    log = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 761, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
  File "/opt/conda/lib/python3.8/multiprocessing/queues.py", line 113, in get
    return _ForkingPickler.loads(res)
  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/reductions.py", line 294, in rebuild_storage_fd
    fd = df.detach()
  File "/opt/conda/lib/python3.8/multiprocessing/reduction.py", line 161, in recvfds
    len(ancdata))
RuntimeError: received 0 items of ancdata
"""
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["open-files-limit-exhausted"], codes


def test_the_open_files_code_is_sourced():
    entry = assert_sourced_root("open-files-limit-exhausted")
    assert entry.layer == "system"


@pytest.mark.parametrize("log", [
    "epoch 3 loss 0.21\n已杀死\n",
    "[1]+  已杀死               nohup python train.py > train.log 2>&1 &\n",
    # the shell's Killed glued to tqdm's bar, which redraws with a carriage return and never ends
    # its line (InternLandMark/LandMark#65)
    "Training with a single process on 1 GPUs.\n 31%|█████▉          | 331/1063 [01:06<03:59,  3.06it/s]Killed\n",
    " 20%|████                | 216/1063 [00:27<02:17,  6.17s/it]Killed\n",
])
def test_bash_killed_in_a_zh_cn_locale_is_the_oom_killer(log):
    expl = explain_text(log)
    assert [c.code for c in expl.candidates][:1] == ["host-oom-killed"], [c.code for c in expl.candidates]
    assert expl.exit_code == 1


def test_the_busy_hang_is_generic_and_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line("the script hangs forever with multi-gpu, GPU at 100%")
               if e.id == "multi-gpu-hang-gpus-at-100"]
    assert entries and entries[0].weight == 1 and "collective-hang" in entries[0].could_be


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "ulimit -n 65536",
    "open files                          (-n) 1024",
    "torch.multiprocessing.set_sharing_strategy('file_system')",
    "Using MASTER_PORT=29500 for the rendezvous",
    "export MASTER_PORT=29501  # the port used by rank 0",
    "master_port: 29500, master_addr: 10.0.0.1",
    "已杀死服务器进程: 4242",
    "Killed 0 stale workers",
    "GPU utilization 100% across 8 GPUs, 3.2 it/s",
    "100%|██████████| 2209/2209 [39:03<00:00,  1.06s/it] training done on 4 GPUs",
    "Checking disk space: 120 GB free, OK",
    "disk space used by checkpoints: 42 GB",
])
