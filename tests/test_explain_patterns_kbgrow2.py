"""Issue 8 items 2, 3 and 7 (kbgrow2): what explain missed on 44 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-01h``), fixed by class.

- Triton's compiler crashing inside (an MLIR verifier error, ``UNREACHABLE executed``, a failed
  assertion in ``mlir::triton::...``, ``PassManager::run failed``) is a cause of its own,
  ``triton-compiler-bug``: another Triton release compiles the kernel. It was the
  ``triton-kernel-failed`` symptom, whose fix speaks of ptxas and drivers.
- A kernel library that did not import shows up later as ``'NoneType' object has no attribute
  'causal_conv1d_fwd'`` (mamba_ssm binds causal_conv1d_cuda to None on ImportError) or as the
  ``NotImplementedError: The fast path is not available`` of model code copied from transformers'
  MambaMixer.
- cudarc (candle, mistral.rs) words a missing libcuda in its own way.
- nvidia-smi's "couldn't communicate with the NVIDIA driver" says the user-space driver is
  installed and no kernel module answers: the log's context picks among the module not built for
  the running kernel, Secure Boot and nouveau.
- A C/C++ program's own error check (``ERROR: cudaGetDeviceCount <message>``) marks the driver
  message as the program's build, not torch's.
- NCCL's ``Call to shm_open failed : Permission denied`` is /dev/shm (not writable).
- A clue word inside a library comment that a traceback echoes (``168  # ... no GPUs ...``) is
  not the user's situation.

Messages are the programs' own wording (each signature's ``source`` names the file); the
rich-traceback case runs a real interpreter.
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "triton-compiler-bug": [
        # MLIR's dominance verifier inside Triton 2.2/2.3 on FLA's wy_fast.py
        'loc(fused["/venv/lib/python3.10/site-packages/fla/ops/gated_delta_rule/wy_fast.py":160:16]): '
        "error: operand #1 does not dominate this use",
        # C assert() in Triton 3.2's lib/Tools/LinearLayout.cpp
        "python3: /project/lib/Tools/LinearLayout.cpp:562: mlir::triton::LinearLayout "
        "mlir::triton::LinearLayout::reshapeOuts(llvm::ArrayRef<std::pair<mlir::StringAttr, int> >) const: "
        "Assertion `getTotalOutDimSize() == std::accumulate( newOutDims.begin(), newOutDims.end(), 1, "
        "[&](int32_t acc, auto &outDim) { return acc * outDim.second; })' failed.",
        # llvm_unreachable in Triton's Blackwell pipeline
        "UNREACHABLE executed at /project/lib/Dialect/TritonGPU/Transforms/HoistTMEMAlloc.cpp:418!",
        # python/src/ir.cc
        "RuntimeError: PassManager::run failed",
        # Triton's SameOperandsAndResultEncoding verifier
        'loc("/mnt/fla/ops/gated_delta_rule/wy_fast.py":223:23): error: \'arith.mulf\' op requires the same '
        "encoding for all operands and results",
    ],
    "kernel-library-not-installed": [
        # mamba_ssm/ops/triton/ssd_combined.py after `import causal_conv1d_cuda` failed
        "AttributeError: 'NoneType' object has no attribute 'causal_conv1d_fwd'",
        "AttributeError: 'NoneType' object has no attribute 'causal_conv1d_update'",
        # MambaMixer copies: raise NotImplementedError(...) when is_fast_path_available is False
        "NotImplementedError: The fast path is not available",
        "NotImplementedError: The fast path is not available. Please install the required libraries.",
    ],
    "libcuda-missing": [
        # cudarc 0.11 src/driver/sys/mod.rs; cudarc src/lib.rs panic_no_lib_found
        'Unable to find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue.',
        'Unable to dynamically load the "cuda" shared library - searched for library names: ["cuda", '
        '"nvcuda", "libcuda.so", "libcuda.so.1"]. Ensure that `LD_LIBRARY_PATH` has the correct path to the '
        "installed library.",
    ],
    "nccl-shm-too-small": [
        # NCCL src/include/checks.h SYSCHECKVAL around shm_open
        "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    ],
    "driver-too-old-for-build": [
        # a C/C++ test binary's own check of cudaGetDeviceCount (cudaGetErrorString(35))
        "ERROR: cudaGetDeviceCount CUDA driver version is insufficient for CUDA runtime version",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

NEW_ROOTS = ["triton-compiler-bug"]
test_new_root_is_sourced_and_says_what_to_do = sourced_roots_test(NEW_ROOTS)

# lines the same programs print when all is well, and the library comment a traceback echoes
HEALTHY = [
    "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |",
    "Triton 3.2.0 compiled chunk_gated_delta_rule_fwd_h in 2.1 s (cache miss)",
    "Using the fast path for Mamba layers: causal_conv1d 1.4.0, mamba_ssm 2.2.2",
    "cudaGetDeviceCount returned 8 devices",
    "Loaded libcuda.so.1 from /usr/lib/x86_64-linux-gnu through cudarc",
    "node1:123:456 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
    "    168         # This function throws if there's a driver initialization error, no GPUs",
    "│   4 │   # are found or any other error occurs                                    │",
]
test_healthy_lines_name_nothing = healthy_test(HEALTHY)


def test_proposed_names_are_aliases_of_the_codes_that_now_hold_them():
    kb = load_kb()
    assert kb.canonical("triton-version-compile-error") == "triton-compiler-bug"
    assert kb.canonical("shm-permission-denied") == "nccl-shm-too-small"


NVIDIA_SMI = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the " \
             "latest NVIDIA driver is installed and running."


@pytest.mark.parametrize("context,cause", [
    ("I've already installed `nvidia-dkms` and use kernel `linux-cachyos`; it works on the `linux` kernel.",
     "nvidia-module-missing-for-kernel"),
    ("It started after a kernel update last night.", "nvidia-module-missing-for-kernel"),
    ("mokutil --sb-state says SecureBoot enabled", "secure-boot-rejects-module"),
])
def test_nvidia_smi_failing_takes_its_cause_from_the_context(context, cause):
    expl = explain_text(f"$ nvidia-smi\n{NVIDIA_SMI}\n{context}\n")
    # inferred from the context; stated where a user's-statement rule reads the sentence
    # ("It started after a kernel update", tests/test_explain_users_words.py)
    said = any(ev.entry.startswith("said-") for ev in expl.root.evidence)
    assert expl.root.code == cause and expl.root.confidence == ("stated" if said else "inferred"), \
        [c.code for c in expl.candidates]
    assert expl.exit_code == 1


def test_nvidia_smi_failing_alone_ranks_the_module_first_among_its_causes():
    expl = explain_text(f"$ nvidia-smi\n{NVIDIA_SMI}\n")
    assert expl.root.code == "no-nvidia-driver" and expl.root.kind == "symptom"
    assert expl.root.could_be[0] == "nvidia-module-missing-for-kernel", expl.root.could_be


def test_driver_message_is_the_programs_build_in_a_c_program_and_torchs_in_python():
    c_program = ("./all_tests\nRunning executable: ./all_tests\nChecking available CUDA-capable devices...\n"
                 "ERROR: cudaGetDeviceCount CUDA driver version is insufficient for CUDA runtime version\n")
    assert explain_text(c_program).root.code == "driver-too-old-for-build"
    in_torch = ("  File \"/venv/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 293, in _lazy_init\n"
                "    torch._C._cuda_init()\n"
                "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n")
    assert explain_text(in_torch).root.code == "driver-too-old-for-torch"
    # torch's own wording names the call with '()': not a C program's check
    warning = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some "
               "cuda functions before calling NumCudaDevices() that might have already set an error? Error 35: "
               "CUDA driver version is insufficient for CUDA runtime version\n")
    assert explain_text(warning).root.code == "driver-too-old-for-torch"


def test_a_user_saying_no_gpu_is_still_a_clue():
    expl = explain_text("I run this on my laptop, it has no GPU.\nRuntimeError: No CUDA GPUs are available\n")
    assert expl.root.code == "no-nvidia-driver" and expl.root.confidence == "inferred"


def test_a_comment_echoed_by_a_real_rich_traceback_is_not_a_clue(stack_python, tmp_path):
    """rich (installed in the stack venv) prints the source around each frame, comments included:
    torch's own comment in _lazy_init says 'no GPUs are found', which is not the user's machine."""
    script = tmp_path / "lazy_init.py"
    script.write_text(textwrap.dedent('''\
        from rich.traceback import install
        install(width=100)
        def _lazy_init():
            # This function throws if there's a driver initialization error, no GPUs
            # are found or any other error occurs
            raise RuntimeError("No CUDA GPUs are available")
        _lazy_init()
        '''))
    out = subprocess.run([stack_python, str(script)], capture_output=True, text=True, timeout=60,
                         env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1 and "no GPUs" in out.stderr and "No CUDA GPUs are available" in out.stderr
    expl = explain_text(out.stderr)
    assert expl.root.code == "torch-cuda-unavailable", [(c.code, c.confidence) for c in expl.candidates]
    assert not any(c.confidence == "inferred" for c in expl.candidates)
