"""recall7: explain's recall on the existing codes of the cuda, config, multi_gpu and triton layers,
widened by class from 23 fresh training threads (tests/corpus/explain/*.log with ``# collected:
training-2026-12-02b``, 23 and then 4 more) and from the programs that print the messages.

What the threads showed, and the class each fix covers:

- NCCL's RDMA failures in the wordings of other releases and plugins: 2.4-2.12's ``NET/IB : Got
  completion with error 12, opcode 0, len 0, vendor err 129`` (also HPC-X's ib_plugin.c), the IBP
  plugin's ``NET/IBP:Got completion from peer``, and ibvwrap.cc's ``Call to ibv_modify_qp failed``
  in both its old (``with error <strerror>``) and new (``with <errno> <strerror>, on dev ...``)
  forms: timed out / unreachable names the path between the NICs (nccl 426, 769, 902, 2013).
- torch.distributed started without a launcher in older wordings: torch 0.4's THD (``rank is not
  set but it is required for env:// init method``, pysot 60) and the traceback's own ``raise
  _env_error("MASTER_ADDR")`` line (ECCV2022-RIFE 52).
- XLA's device allocator: ``RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB
  (184549376B) on device ordinal 0`` (jax_privacy 10).
- CUresult names without their ``CUDA_`` prefix (CUDA.jl, cuda-python, prose):
  ``ERROR_JIT_COMPILER_NOT_FOUND`` (jetpack-nixos 184).
- A driver older than the build outside torch: Rust's cudarc (``DriverError(CUDA_ERROR_
  UNSUPPORTED_PTX_VERSION, ...)``, llama-dfdx 6) and Triton's cached helper calling a CUDA 12
  driver entry point (``cuda_utils.so: undefined symbol: cuTensorMapEncodeTiled``, triton 2062).
- Triton's install, told apart by Python's own import errors: a top-level name every release
  exports (``module 'triton' has no attribute 'jit'``, ``(unknown location)``) is a shadowing
  folder (intel-xpu-backend-for-triton 2740); ``partially initialized module 'triton'`` and a
  missing ``triton._C`` are a broken install (LoRA_Easy_Training_Scripts 136); pip's resolver
  naming torch's Triton pin is the mismatch (ComfyUI-Easy-Install 192), and next to ``0 active
  drivers`` the same words point there too (sentence-transformers 3557).
- NCCL built for fewer GPUs than it runs on: ``ncclMaxSharedMem 82240 exceeds device/fn
  maxSharedMem 79856`` (NCCL 2.25.1 on an RTX 5090, nccl-tests 287).
- Where the loader takes libcuda from is printed lines away from the 803 (``ldconfig -p`` listing
  ``/usr/local/cuda-13.0/compat/libcuda.so.1``, nvidia-container-toolkit 1679): compat paths are
  clues of ``library-too-old-for-driver``, which the mismatch's refine reads anywhere.
- A debugging switch left in code, ``os.environ['CUDA_LAUNCH_BLOCKING'] = '1'`` (WavTokenizer 17),
  as a fallback that names it only when nothing else in the log fails.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, users_words_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "nccl-ib-transport-error": [
        # NCCL 2.4-2.12 src/transport/net_ib.cc ncclIbTest (nccl 426, 902)
        "worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, "
        "vendor err 129",
        "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
        # the IBP plugin (nccl 1664)
        "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)",
        # NCCL src/misc/ibvwrap.cc wrap_ibv_modify_qp, before and after 2.19 (nccl 769, 2013, nccl-tests 185)
        "_ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out_",
        "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is "
        "unreachable",
        "host-01:4242:4250 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev "
        "mlx_x:1, curr state INIT, next state RTR, local GID index 3",
        # NCCL's troubleshooting page: a RoCE GID index that does not fit (weight 2, could be the HCA selection)
        "NCCL WARN Call to ibv_modify_qp failed with error Invalid argument",
    ],
    "distributed-launch-env-missing": [
        # torch 0.4 THD InitMethodEnv.cpp (pysot 60)
        "RuntimeError: rank is not set but it is required for env:// init method at "
        "/opt/conda/conda-bld/pytorch_1524590031827/work/torch/lib/THD/process_group/General.cpp:17",
        # torch/distributed/rendezvous.py, the traceback line above the ValueError (ECCV2022-RIFE 52)
        '    raise _env_error("MASTER_ADDR")',
    ],
    "gpu-out-of-memory": [
        # XLA's device allocator as JAX raises it (jax_privacy 10, equinox 737)
        "Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device ordinal 0",
        "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 6.27GiB (6727663616B) on device ordinal 0",
    ],
    "ptx-jit-compiler-missing": [
        # the CUresult name as CUDA.jl prints it (cuTile.jl 9) and as a user quotes it (jetpack-nixos 184)
        "It errors with `ERROR_JIT_COMPILER_NOT_FOUND`, which I guess indicates that some dynamically-loaded libraries "
        "are missing.",
    ],
    "driver-too-old-for-build": [
        # Triton 2.x's cached helper on a CUDA 11 driver (triton 2062)
        "ImportError: /home/lclcq/.triton/cache/c6a7b91a416b1ca1efa1318c10a89f87/cuda_utils.so: undefined symbol: "
        "cuTensorMapEncodeTiled",
        # Rust's cudarc (candle 2237, llama-dfdx 6)
        'Error: DriverError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported '
        'toolchain.") when loading cast_u32_f32',
    ],
    "triton-torch-version-mismatch": [
        # pip's resolver (ComfyUI-Easy-Install 192), and pip before 20.3 (vllm 3426)
        'torch 2.11.0 requires triton==3.6.0; platform_system == "Linux", but you have triton 3.5.1 which is incompatible.',
        'ERROR: torch 2.1.2 has requirement triton==2.1.0; platform_system == "Linux" and platform_machine == "x86_64", '
        "but you'll have triton 2.2.0 which is incompatible.",
    ],
    "module-shadowed": [
        # CPython's AttributeError on a module that is not the real triton (intel-xpu-backend-for-triton 2740)
        "AttributeError: module 'triton' has no attribute 'jit'",
        # CPython's ImportError on a namespace package (ROCm/triton 489)
        "ImportError: cannot import name 'cdiv' from 'triton' (unknown location)",
        # a stray triton/__init__.py on PYTHONPATH, on an H200 (scenarios/gpu/suite.py stray-triton-package):
        # every Triton release has triton.language and triton.runtime
        "ModuleNotFoundError: No module named 'triton.language'",
    ],
    "nccl-too-old-for-gpu": [
        # NCCL 2.25.1 src/enqueue.cc on an RTX 5090 (nccl-tests 287), and the WARN of later releases
        "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856",
        "node1:42:42 [0] enqueue.cc:117 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856",
    ],
    "env-switch-set": [
        # a debugging switch left in a training script (WavTokenizer 17)
        "Purpose of os.environ['CUDA_LAUNCH_BLOCKING'] = '1' in train.py",
        '    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"',
    ],
    "triton-import-failed": [
        # CPython's circular-import wording when triton/__init__.py fails midway (LoRA_Easy_Training_Scripts 136)
        "AttributeError: partially initialized module 'triton' has no attribute '_C' (most likely due to a circular import)",
        "ImportError: cannot import name 'OutOfResources' from partially initialized module 'triton.runtime.autotuner' "
        "(most likely due to a circular import)",
        # the native extension missing (triton 1586, 5728)
        "ModuleNotFoundError: No module named 'triton._C'",
        "ModuleNotFoundError: No module named 'triton.backends.nvidia._C'",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# users' words of the training threads
test_users_words_name_the_cause = users_words_test({
    "It errors with `ERROR_JIT_COMPILER_NOT_FOUND` on a system with just l4t-cuda installed.": "ptx-jit-compiler-missing",
    "AttributeError: module 'triton' has no attribute 'jit'": "module-shadowed",
})


def test_a_module_only_some_releases_have_is_not_a_shadowing_triton():
    """triton.language.extra and triton.common come and go with releases (a version's problem); only
    the packages every release has, missing, say the imported triton is not Triton."""
    for line in ("ModuleNotFoundError: No module named 'triton.language.extra'",
                 "ModuleNotFoundError: No module named 'triton.common'",
                 "ModuleNotFoundError: No module named 'triton._C'"):
        expl = explain_text(line + "\n")
        assert expl.root is None or expl.root.code != "module-shadowed", (line, expl.root.code)


def test_zero_active_drivers_next_to_torchs_triton_pin_is_the_mismatch():
    """'0 active drivers' alone is a symptom with many causes; a line naming the Triton torch requires
    (pip's resolver, or the user's own words: sentence-transformers 3557) points to the mismatch."""
    line = "RuntimeError: 0 active drivers ([]). There should only be one.\n"
    assert explain_text(line).root.code == "triton-no-active-driver"
    with_pin = line + "It might me a problem with pytorch 2.6 which itself requires triton v3.2.0\n"
    assert explain_text(with_pin).root.code == "triton-torch-version-mismatch"


def test_a_newer_triton_api_missing_stays_the_version_mismatch():
    """Only names every release exports mean the module is not Triton at all; a newer API, or a
    submodule's name, is still a release that does not have it."""
    for line in ("AttributeError: module 'triton' has no attribute 'set_allocator'",
                 "AttributeError: module 'triton.language' has no attribute 'cdiv'",
                 "ImportError: cannot import name 'libdevice' from 'triton.language.extra' "
                 "(/venv/lib/python3.11/site-packages/triton/language/extra/__init__.py)"):
        codes = [c.code for c in explain_text(line + "\n").candidates]
        assert codes[:1] in (["triton-torch-version-mismatch"], ["triton-too-old-for-package"]), (line, codes)


def test_unsupported_ptx_under_torch_stays_torchs_driver():
    """The driver rejecting PTX inside torch is still torch's CUDA build against the driver."""
    expl = explain_text("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n")
    assert expl.root.code == "driver-too-old-for-torch"


def test_ibv_modify_qp_einval_also_names_the_hca_selection():
    expl = explain_text("NCCL WARN Call to ibv_modify_qp failed with error Invalid argument\n")
    assert expl.root.code == "nccl-ib-transport-error"
    assert "nccl-ib-hca-wrong" in expl.root.could_be


def test_a_compat_libcuda_listed_away_from_the_803_is_the_stale_copy():
    """The refine of the driver/library mismatch reads the lines that hold compat paths wherever they
    are (ldconfig's listing under the error: nvidia-container-toolkit 1679)."""
    err = ('CUDA error at helper_cuda.h:816 code=803(cudaErrorSystemDriverMismatch) "cudaGetDeviceCount(&device_count)"\n')
    assert explain_text(err).root.code == "driver-library-mismatch"
    listing = ("```\n\nNote that:\n```\n ldconfig -p | grep libcuda.so.1\n"
               "\tlibcuda.so.1 (libc6,AArch64) => /usr/local/cuda-13.0/compat/libcuda.so.1\n"
               "\tlibcuda.so.1 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1\n")
    assert explain_text(err + listing).root.code == "library-too-old-for-driver"


def test_cuda_launch_blocking_in_code_does_not_outrank_a_real_failure():
    log = ("os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert explain_text(log).root.code == "gpu-out-of-memory"


test_healthy_lines_name_nothing = healthy_test([
    "node1:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.2<0>",
    "node1:123:456 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.",
    "Requirement already satisfied: triton==3.2.0 in ./venv/lib/python3.11/site-packages (from torch) (3.2.0)",
    "Requires: filelock, fsspec, jinja2, networkx, sympy, triton, typing-extensions",
    "Successfully installed torch-2.6.0 triton-3.2.0",
    "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 torchrun --nnodes 2 --node_rank 0 train.py",
    "Allocated 176.00MiB (184549376B) on device ordinal 0: 0x7f2a40000000",
    ">>> print(triton.jit, triton.__file__)",
    "export CUDA_LAUNCH_BLOCKING=0",
    "node1:42:42 [0] NCCL INFO NCCL version 2.26.2+cuda12.8",
])
