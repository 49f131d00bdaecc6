"""harv31: an eighth unbiased harvest (fine-tuning and RL training frameworks), scored blind, and the
general fixes its misses ask for (docs/dev/harv31.md).

Fourteen new training-side logs; explain named nine first before any change. The fixed misses:
- A1, a program's own line nothing read: a SIGBUS inside NCCL's ``ncclShmOpen`` (the frame of a
  gdb or glibc backtrace). ncclShmOpen (nccl src/misc/shmutils.cc) mmaps a file it extended in
  /dev/shm and writes it; when tmpfs cannot back the page (a container's 64 MB /dev/shm) the
  write dies with SIGBUS in that frame, before NCCL prints any WARN (NVIDIA/JAX-Toolbox#183):
  ``nccl-shm-too-small`` (it was guessed as the DataLoader's shared memory);
- A1, gcc's own line: a host gcc older than 5 (gnu89 by default) rejecting the C99 loop of the
  helper Triton compiles in a ``tmpXXXXXXXX`` directory (``main.c`` in Triton 2.1-3.1,
  ``cuda_utils.c``/``__triton_launcher.c`` later): ``'for' loop initial declarations are only
  allowed in C99 mode`` (and gcc's zh_CN wording), chengzeyi/stable-fast#147: ``c-compiler-too-old``
  (it was guessed as a missing compiler; the session's review gave the old compiler its own root,
  first read as ``triton-build-failed``).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "nccl-shm-too-small": [
        # gdb's frame of the crashing thread (NVIDIA/JAX-Toolbox#183)
        "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () "
        "from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so",
        # glibc backtrace_symbols' form of the same frame in libnccl (C++ linkage: mangled)
        "/usr/lib/x86_64-linux-gnu/libnccl.so.2(_Z11ncclShmOpenPcmPPvS1_iS1_+0x1a3)[0x7f0e2c1d5e33]",
        # a symbolizer's demangled name and offset
        "#3 libnccl.so.2(ncclShmOpen+0x1a3) [0x7f0e2c1d5e33]",
    ],
    "c-compiler-too-old": [
        # gcc 4.8.5 (zh_CN locale) on Triton's helper (chengzeyi/stable-fast#147)
        "/tmp/tmp4s6z8k3o/main.c:354:3: 错误：只允许在 C99 模式下使用‘for’循环初始化声明",
        # the same diagnostic in gcc's English wording, gcc 4.x
        "/tmp/tmpab12cd34/main.c:354:3: error: 'for' loop initial declarations are only allowed in C99 mode",
        # gcc 5+ with an explicit gnu89/c89 standard, on newer Triton's cuda_utils.c
        "/tmp/tmpq9w8e7r6/cuda_utils.c:582:3: error: ‘for’ loop initial declarations are only allowed in C99 or C11 mode",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_jax_gdb_backtrace_names_nccl_shared_memory():
    text = (
        'Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.\n'
        "[Switching to Thread 0x7f45d7dff640 (LWP 3925)]\n"
        "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () "
        "from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n"
        "(gdb) bt\n"
        "#0 0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) ()\n"
        "#1 0x00007f6b595436d7 in ncclProxyService(void*) ()\n"
    )
    assert _codes(text)[:1] == ["nccl-shm-too-small"]


def test_stable_fast_triton_helper_build_names_the_old_compiler():
    text = (
        "gcc version 4.8.5\n"
        "/tmp/tmp4s6z8k3o/main.c: 在函数‘list_to_cuuint64_array’中:\n"
        "/tmp/tmp4s6z8k3o/main.c:354:3: 错误：只允许在 C99 模式下使用‘for’循环初始化声明\n"
        "   for (Py_ssize_t i = 0; i < len; i++) {\n"
        "/tmp/tmp4s6z8k3o/main.c:354:3: 附注：使用 -std=c99 或 -std=gnu99 来编译您的代码\n"
        "RuntimeError: CalledProcessError: Command **'['/usr/bin/gcc', '/tmp/tmp4s6z8k3o/main.c', '-O3', "
        "'-shared', '-fPIC', '-lcuda', '-o', '/tmp/tmp4s6z8k3o/cuda_utils.cpython-310-x86_64-linux-gnu.so']'** "
        "returned non-zero exit status 1.\n"
    )
    assert _codes(text)[:1] == ["c-compiler-too-old"]


def test_near_misses_keep_their_own_cause():
    # another project's C file rejected by an old gcc is no Triton build (jonas/tig#964)
    assert "c-compiler-too-old" not in match_codes(
        "src/refs.c:189:2: error: 'for' loop initial declarations are only allowed in C99 mode\n")
    # a main.c outside a tempfile directory (a user's project) is not Triton's helper
    assert "c-compiler-too-old" not in match_codes(
        "/home/user/proj/main.c:12:5: error: 'for' loop initial declarations are only allowed in C99 mode\n")
    # NCCL's WARN when it can create no segment keeps its own (existing) reading
    assert match_codes(
        "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 "
        "(size 9637888)\n")[:1] == ["nccl-shm-too-small"]
    # a SIGBUS in another NCCL frame, and the bare name in prose, are not this frame
    assert "nccl-shm-too-small" not in match_codes(
        " 2 0x000000000007587d ncclGroupEnd()  ???:0\n")
    assert "nccl-shm-too-small" not in match_codes(
        "I think ncclShmOpen is where it fails, any idea?\n")
    # NCCL's own source line, parameter names and all, pasted into an issue
    assert "nccl-shm-too-small" not in match_codes(
        "ncclResult_t ncclShmOpen(char* shmPath, size_t shmSize, void** shmPtr, void** devShmPtr, int refcount, "
        "ncclShmHandle_t* handle) {\n")
    # a DataLoader worker killed by a bus error keeps the DataLoader's shared memory
    assert match_codes(
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")[:1] == [
        "dataloader-shm-too-small"]
