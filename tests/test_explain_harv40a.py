"""harv40a: an unbiased harvest of RLHF and post-training stacks that combine training with Ray and a
rollout engine (verl, OpenRLHF, TRL with vLLM, EasyR1, open-r1 and their forks), scored blind, and
the general fixes its misses ask for (docs/dev/harv40a.md).

Fifteen new training-side logs (11 in round 1, 4 in round 2); explain named six first before any
change. The fixed misses and what generalises from them:
- Ray's memory monitor kills a worker itself when the node's host memory passes its threshold:
  ``Task was killed due to the node running low on memory`` (ray.exceptions.OutOfMemoryError; Ray
  2.4x: ``N worker(s) were killed due to ...``), the raylet's summary ``Workers (tasks / actors)
  killed due to memory pressure (OOM)``, and the kill details' ``PID MEM(GB) COMMAND`` table of the
  top users (OpenRLHF/OpenRLHF#1013, verl-project/verl#224, both unknown); now ``host-oom-killed``;
- torch's ``The kernel on this machine does not support the pidfd_open syscall needed to use IPC for
  CUDA tensors when expandable_segments:True is set`` (OpenRLHF/OpenRLHF#957, the CUDA IPC weight
  update of a colocated vLLM): a new code, ``cuda-ipc-expandable-segments-unsupported``;
- pip's resolver notice for any two packages (``transformer-engine 1.3.0 requires flash-attn<=2.4.2,
  but you have flash-attn 2.6.1 which is incompatible``, OpenRLHF/OpenRLHF#413): a catch-all
  reading, ``dependency-version-mismatch``, that gives way to the torch, Triton and nvidia-* pins;
- verl's own resource check ``Total available GPUs X is less than total desired GPUs Y`` (no
  corpus log; the message of the same cause EasyR1 does not check for, hiyouga/EasyR1#63):
  ``scheduler-gpu-request-unsatisfiable``, which now also answers to the blind name
  ``too-few-gpus-for-job``;
- a mangled torch symbol in markdown bold (``undefined symbol: **_ZN2at4_ops5zeros...**``,
  OpenRLHF/OpenRLHF#251, first only by a guess from words): ``extension-torch-mismatch`` by its
  signature.
Each message is the program's own text (from its source) run through the wrappers pasted logs put
around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# ray: the owner's OutOfMemoryError, the raylet's kill details and summary (src/ray/raylet/node_manager.cc)
RAY_TASK_OOM = "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."
RAY_WORKERS_OOM = ("Error: 1 worker(s) were killed due to the node running low on memory. Memory on the node "
                   "(IP: 10.0.50.112, ID: 4cb25bc084aeb5a31ca5402ad589ae042a71165a8e2dd8418fecee26) was 28.62GB / "
                   "30.00GB (0.954017), which exceeds the memory usage threshold of 0.950000")
RAY_DETAIL = ("Memory on the node (IP: 10.0.62.231, ID: e5d953ef03e55e26f13973ea1b5a0fd0ecc729cd820bc89e4aa50451) "
              "where the task (task ID: 43534ce9375fa8e4cd0d0ec285d9974a6a95897401000000, name=allocate_memory, "
              "pid=11362, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the "
              "memory usage threshold of 0.95. Ray killed this worker (ID: 6f2ec5c8b0d5f5a66572859faf192d36743536c2e9"
              "702ea58084b037) because it was the most recently scheduled task")
RAY_SUMMARY = ("(raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers "
               "(tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at "
               "node (ID: 351e406b196f66bb45eaad02a3b8b4725babfa8cc12949432f7ad7d8, IP: 10.95.143.76) over the last "
               "time period. To see more information about the Workers killed on this node, use "
               "`ray logs raylet.out -ip 10.95.143.76`")
RAY_TOP_USERS = "Top 10 memory users:"
# c10/cuda/CUDACachingAllocator.cpp (an expandable segment's IPC handle opened on a kernel without pidfd_open)
PIDFD = ("RuntimeError: The kernel on this machine does not support the pidfd_open syscall needed to use IPC for "
         "CUDA tensors when expandable_segments:True is set. Consider using expandable_segments:False via "
         "torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation.")
# verl ResourcePoolManager._check_resource_available (both spellings: with and without the final period)
VERL_GPUS = "ValueError: Total available GPUs 0 is less than total desired GPUs 8"
VERL_GPUS_FLOAT = "ValueError: Total available GPUs 7.0 is less than total desired GPUs 8."
# pip's resolver notice (pip/_internal/commands/install.py _warn_about_conflicts), and pip < 20.3's
PIP_CONFLICT = ("transformer-engine 1.3.0+5b90b7f requires flash-attn!=2.0.9,!=2.1.0,<=2.4.2,>=2.0.6, but you "
                "have flash-attn 2.6.1 which is incompatible.")
PIP_CONFLICT_OLD = ("ERROR: tensorflow 2.4.1 has requirement numpy~=1.19.2, but you'll have numpy 1.21.0 which is "
                    "incompatible.")
# the dynamic loader's undefined symbol with the mangled name in markdown bold (OpenRLHF/OpenRLHF#251)
BOLD_SYMBOL = ("ImportError: /home/user/anaconda3/envs/rlhf/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-"
               "310-x86_64-linux-gnu.so: undefined symbol: **_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE**")

FAMILIES = {
    "host-oom-killed": [RAY_TASK_OOM, RAY_WORKERS_OOM, RAY_DETAIL, RAY_SUMMARY, RAY_TOP_USERS],
    "cuda-ipc-expandable-segments-unsupported": [PIDFD],
    "scheduler-gpu-request-unsatisfiable": [VERL_GPUS, VERL_GPUS_FLOAT],
    "dependency-version-mismatch": [PIP_CONFLICT, PIP_CONFLICT_OLD],
    "extension-torch-mismatch": [BOLD_SYMBOL],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_ray_oom_traceback_under_verl_names_host_memory():
    # the shape verl and EasyR1 users paste: ray.get's OutOfMemoryError with the kill details and table
    text = (
        '  File "/verl/verl/single_controller/ray/base.py", line 49, in func\n'
        "    output = ray.get(output)\n"
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
        "Memory on the node (IP: 10.20.49.141, ID: 4748aa6d1bc114b8bf58822d0b162796a1d36a79dee5c167c9bf91f5) where "
        "the task (actor ID: 9e43ace6a1234e13df7b456b01000000, name=WorkerDict.__init__, pid=4100606, memory "
        "used=56.57GB) was running was 246.41GB / 251.54GB (0.979583), which exceeds the memory usage threshold "
        "of 0.95. Ray killed this worker because it was the most recently scheduled task.\n"
        "Top 10 memory users:\n"
        "PID\tMEM(GB)\tCOMMAND\n"
        "4100606\t56.57\tray::WorkerDict.actor_rollout_generate_sequences\n"
    )
    assert _codes(text)[:1] == ["host-oom-killed"]


def test_top_users_table_alone_names_host_memory():
    # verl-project/verl#224: the reporter pasted only the memory monitor's table (spaces for tabs)
    text = (
        "There were 8 rollout processes and each consumed 11G memory:\n"
        "PID     MEM(GB) COMMAND\n"
        "40126   11.20   ray::WorkerDict.actor_rollout_generate_sequences\n"
        "39907   0.54    ray::main_task\n"
    )
    assert _codes(text)[:1] == ["host-oom-killed"]


def test_ray_oom_title_names_host_memory():
    # OpenRLHF/OpenRLHF#1013's title
    assert _codes("Task was killed due to the node running low on memory (ray oom)\n")[:1] == ["host-oom-killed"]


def test_low_memory_words_elsewhere_are_not_a_ray_kill():
    # (the raylet's follow-up line 'Refer to the documentation on how to address the out of memory
    # issue' is Ray's own OOM text too: its words already read as host memory, no near-miss)
    for text in (
        "WARNING: the system is running low on memory, consider closing some applications\n",
        "WARNING services.py:2022 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm "
        "has only 67108864 bytes available. This will harm performance!\n",
        "INFO 06-28 vllm: Memory usage threshold set to 0.95\n",
        "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n",
    ):
        assert "ray-memory-monitor-killed" not in _ids(text.strip()), text
        assert "ray-memory-monitor-top-users" not in _ids(text.strip()), text
        assert "host-oom-killed" not in _codes(text)[:1], text


def test_pidfd_paste_under_openrlhf_names_the_new_code():
    # OpenRLHF/OpenRLHF#957: the message quoted in backticks inside the reporter's Chinese prose
    text = (
        "我在使用 colocate_all_models 时，在调用 `update_weight_cuda_ipc` 方法时碰到如下报错：\n\n"
        "`RuntimeError: The kernel on this machine does not support the pidfd_open syscall needed to use IPC for "
        "CUDA tensors when expandable_segments:True is set. Consider using expandable_segments:False via "
        "torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation.`\n"
    )
    assert _codes(text)[:1] == ["cuda-ipc-expandable-segments-unsupported"]


def test_pidfd_words_elsewhere_keep_their_reading():
    for text in (
        "pidfd_open(1234, 0) = -1 ENOSYS (Function not implemented)",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    ):
        assert "torch-expandable-segments-ipc-no-pidfd" not in _ids(text), text
    # the allocator-config errors keep their own code
    assert _codes("RuntimeError: Unrecognized CachingAllocator option: expandable_segment\n")[:1] == [
        "env-alloc-conf-invalid"]


def test_verl_gpu_check_near_misses():
    for text in (
        "INFO: Total available GPUs: 8",
        "resource pool global_pool: 8 GPUs desired",
    ):
        assert "verl-resource-pool-gpus-unavailable" not in _ids(text), text


def test_too_few_gpus_is_an_alias_of_the_scheduler_code():
    from stackpeel.knowledge import load as load_codes
    assert load_codes().canonical("too-few-gpus-for-job") == "scheduler-gpu-request-unsatisfiable"


def test_pip_conflict_gives_way_to_the_specific_pins():
    # a torch pin of a companion package keeps its reading; a Triton pin keeps Triton's
    torch_pin = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are "
                 "installed. This behaviour is the source of the following dependency conflicts.\n"
                 "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.\n")
    assert _codes(torch_pin)[:1] == ["extension-torch-mismatch"]
    triton_pin = "torch 2.5.1 requires triton==3.1.0, but you have triton 3.2.0 which is incompatible.\n"
    assert _codes(triton_pin)[:1] == ["triton-torch-version-mismatch"]


def test_pip_conflict_gives_way_to_the_real_failure():
    # the notice beside the run's own error: the error is the answer
    text = (
        "transformer-engine 1.3.0+5b90b7f requires flash-attn!=2.0.9,!=2.1.0,<=2.4.2,>=2.0.6, but you have "
        "flash-attn 2.6.1 which is incompatible.\n"
        "Successfully installed flash-attn-2.6.1\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 MiB. GPU 0 has a total capacity of "
        "21.99 GiB of which 33.44 MiB is free.\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_pip_words_that_are_not_the_conflict_notice():
    for text in (
        "Successfully installed flash-attn-2.6.1 transformer-engine-1.3.0",
        "This package requires flash-attn, but you have to build it yourself",
        "Requirement already satisfied: flash-attn in /usr/local/lib/python3.10/dist-packages (2.6.1)",
    ):
        assert "pip-installed-release-incompatible" not in _ids(text), text


def test_plain_mangled_symbol_still_reads_as_before():
    text = ("ImportError: /x/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
            "_ZN3c104cuda9SetDeviceEi\n")
    assert _codes(text)[:1] == ["extension-torch-mismatch"]
