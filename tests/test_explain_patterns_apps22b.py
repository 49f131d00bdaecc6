"""apps22b: kernel libraries' own messages left by apps22 and coverage-audit (docs/dev/apps22b.md).

bitsandbytes 0.35-0.41 raise a bare ``Exception('CUDA SETUP: Setup Failed!')`` after their
instructions when the library for the detected CUDA is not in the package (cuda_setup/main.py
CUDASetup.run_cuda_setup); Triton looks up cuobjdump and nvdisasm as it looks up ptxas
(_path_to_binary: TRITON_<TOOL>_PATH, then the wheel's bin directory) and raises
``Cannot find <tool>``; vLLM asserts that the GPU's free memory went down during its profiling
run (v1/worker/gpu_worker.py determine_available_memory, worker/worker.py before it), which
another process freeing memory in that window breaks. Every message runs through the wrappers
pasted logs put around lines; near-misses must stay unread.
"""

from __future__ import annotations

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import codes_of as _codes, family_tests

#: the signatures this round added or extended (src/stackpeel/knowledge: explain_only.toml, toolchain.toml)
NEW_IDS = {"bitsandbytes-setup-failed", "ptxas-cannot-run", "sgl-kernel-cuda-lib-dir-missing",
           "vllm-memory-profiling-assert"}

FAMILIES = {
    "bitsandbytes-cuda-setup-failed": [
        # cuda_setup/main.py run_cuda_setup: the raise, as its traceback's last line
        "Exception: CUDA SETUP: Setup Failed!",
        # the same line as bitsandbytes' log stack prints it
        "CUDA SETUP: Setup Failed!",
    ],
    "ptxas-unusable": [
        # triton/knobs.py and backends/nvidia/compiler.py _path_to_binary("cuobjdump" / "nvdisasm")
        "RuntimeError: Cannot find cuobjdump",
        "RuntimeError: Cannot find nvdisasm",
    ],
    "nvcc-missing": [
        # sgl_kernel/__init__.py: no lib, lib64 or libcudart.so.12 under the CUDA directory it found
        "RuntimeError: Could not find CUDA lib directory.",
    ],
    "gpu-memory-changed-during-profiling": [
        # vllm/v1/worker/gpu_worker.py determine_available_memory
        "AssertionError: Error in memory profiling. Initial free memory 82.94 GiB, current free memory 90.17 GiB. "
        "This happens when other processes sharing the same container release GPU memory while vLLM is profiling "
        "during initialization. To fix this, ensure consistent GPU memory allocation or isolate vLLM in its own container.",
        # vllm/worker/worker.py 0.6 (bytes, the older explanation)
        "AssertionError: Error in memory profiling. Initial free memory 20812431360, current free memory 21474836480. "
        "This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.",
        # vllm/worker/worker.py 0.7 _assert_memory_footprint_increased_during_profiling
        "AssertionError: Error in memory profiling. Initial used memory 1612709888, currently used memory 1073741824. "
        "This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_bitsandbytes_setup_failed_in_its_traceback():
    log = ("CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n"
           "CUDA SETUP: Highest compute capability among GPUs detected: 8.6\n"
           "CUDA SETUP: Detected CUDA version 122\n"
           "CUDA SETUP: Setup Failed!\n"
           "Traceback (most recent call last):\n"
           '  File "train.py", line 3, in <module>\n'
           "    import bitsandbytes as bnb\n"
           "Exception: CUDA SETUP: Setup Failed!\n")
    assert _codes(log)[:1] == ["bitsandbytes-cuda-setup-failed"]


def test_vllm_profiling_error_from_an_engine_core_prefix():
    # the v1 engine core's log prefix, as `vllm serve` prints the worker's exception
    log = ("(EngineCore_DP0 pid=418) ERROR 01-29 15:38:21 [core.py:946]     assert self.init_snapshot.free_memory > free_gpu_memory, (\n"
           "(EngineCore_DP0 pid=418) ERROR 01-29 15:38:21 [core.py:946] AssertionError: Error in memory profiling. "
           "Initial free memory 30.27 GiB, current free memory 52.21 GiB. This happens when other processes sharing "
           "the same container release GPU memory while vLLM is profiling during initialization.\n")
    assert _codes(log)[:1] == ["gpu-memory-changed-during-profiling"]


def test_sgl_kernel_lookup_in_its_import_traceback():
    log = ("Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/layers/activation.py", line 39, in <module>\n'
           "    from sgl_kernel import gelu_and_mul, silu_and_mul\n"
           '  File "/opt/venv/lib/python3.12/site-packages/sgl_kernel/__init__.py", line 31, in <module>\n'
           '    raise RuntimeError("Could not find CUDA lib directory.")\n'
           "RuntimeError: Could not find CUDA lib directory.\n")
    assert _codes(log)[:1] == ["nvcc-missing"]


def test_near_misses_stay_unread():
    for line, code in [
        # vLLM's healthy INFO lines about its profiling
        ("INFO 03-30 01:59:44 [worker.py:267] Memory profiling takes 48.14 seconds", "gpu-memory-changed-during-profiling"),
        ("INFO 03-30 01:59:44 [worker.py:267] model weights take 6.74GiB; non_torch_memory takes 0.11GiB; "
         "PyTorch activation peak memory takes 1.66GiB; the rest of the memory reserved for KV Cache is 3.88GiB.",
         "gpu-memory-changed-during-profiling"),
        # IPython's memory_profiler, no vLLM
        ("Error in memory profiling (%mprun): could not find file <ipython-input-3>", "gpu-memory-changed-during-profiling"),
        # other tools Triton never looks up, and a longer name
        ("RuntimeError: Cannot find cudnn", "ptxas-unusable"),
        ("RuntimeError: Cannot find cuobjdumpx", "ptxas-unusable"),
        # other programs' CUDA library lookups (a build script's fallback warning, a Rust build script)
        ("Warning: Could not find CUDA lib directory, using fallback: /usr/local/cuda/lib64", "nvcc-missing"),
        ("ERROR: npp-rs-sys: Could not find CUDA lib directory: /opt/cuda/lib64", "nvcc-missing"),
        # bitsandbytes' healthy setup lines
        ("CUDA SETUP: Loading binary /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda118.so...",
         "bitsandbytes-cuda-setup-failed"),
        ("CUDA SETUP: Detected CUDA version 118", "bitsandbytes-cuda-setup-failed"),
    ]:
        assert code not in set(match_codes(line)), (line, match_codes(line))
        # in a whole log no new signature reads it either (explain may still guess from the
        # words 'Could not find CUDA', as it did before this round)
        expl = explain_text("step 1\n" + line + "\n")
        assert not NEW_IDS & {ev.entry for c in expl.candidates for ev in c.evidence}, line
