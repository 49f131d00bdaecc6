"""harv36b: an unbiased harvest of scientific and general-purpose GPU computing outside the deep
learning frameworks (CuPy, Numba, OpenMM, PyCUDA, RAPIDS, Halide, QuEST, libgpuarray, Rust's CUDA
bindings, conda cudatoolkit packages), scored blind, and the general fixes its misses ask for
(docs/dev/harv36b.md).

Eighteen new training-side logs; explain named eleven first before any change. The fixed misses:
- an extension whose import needs a versioned CUDA driver entry point the loaded libcuda lacks
  (``undefined symbol: cuDevicePrimaryCtxRelease_v2``, inducer/pycuda#255): cuda.h binds an API
  name to its ``_vN`` entry point when its ABI changed, so a binary built against newer headers
  needs a newer driver; now ``driver-too-old-for-build`` (A1, was a guess from words);
- numba's ``Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR`` (numba/numba#7006, silent): the
  driver's linker rejecting numba's PTX, which older numba releases name UNKNOWN_CUDA_ERROR (222
  was missing from their table); now ``driver-too-old-for-build`` (A1);
- Rust's CUDA bindings' name of error 209, ``Cuda(NoBinaryForGpu)`` (cust/rustacuda's enum
  CudaError, filecoin-project/rust-gpu-tools#79): now the no-kernel-image symptom, refined to
  ``framework-gpu-arch-unsupported`` as for the other non-torch GPU libraries (A1).
Plus a new explain-only code, ``openmm-plugin-dir-mismatch``, for a cause the log does not show
(openmm#3656 stays a known miss).
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes as _codes, family_tests

# inducer/pycuda#255 (the loader's message for pycuda's _driver module) and JPaulMora/Pyrit#186
PYCUDA_V2 = ("ImportError: /home/u/anaconda3/envs/sim/lib/python3.7/site-packages/pycuda/"
             "_driver.cpython-37m-x86_64-linux-gnu.so: undefined symbol: cuDevicePrimaryCtxRelease_v2")
PYRIT_V2 = ("ImportError: /usr/local/lib/python2.6/dist-packages/cpyrit/_cpyrit_cuda.so: "
            "undefined symbol: cuMemcpyHtoD_v2")
# numba/cuda/cudadrv/driver.py _check_ctypes_error from Linker.add_ptx
NUMBA_LINK_UNKNOWN = "numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR"
NUMBA_LINK_PTX = ("numba.cuda.cudadrv.driver.CudaAPIError: [222] Call to cuLinkAddData results in "
                  "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
# filecoin-project/rust-gpu-tools#79 (rustacuda/cust CudaError's Debug form)
RUST_209 = ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', "
            "examples/add.rs:10:76")

FAMILIES = {
    "driver-too-old-for-build": [PYCUDA_V2, PYRIT_V2, NUMBA_LINK_UNKNOWN, NUMBA_LINK_PTX],
    "framework-gpu-arch-unsupported": [RUST_209],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_pycuda_thread_names_the_old_driver():
    # inducer/pycuda#255, the reporter's paste
    text = (
        "undefined symbol: cuDevicePrimaryCtxRelease_v2\n\n"
        "$ cd pycuda-2020.1/test\n$ python test_driver.py\n\nGot error:\n" + PYCUDA_V2 + "\n\n"
        "I am using Ubuntu 18.04 and having cuda-11.1. What could be the possible cause of this issue? Thx!\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_numba_linker_with_sysinfo_names_the_old_driver():
    # numba/numba#7006: the title and the `numba -s` lines the maintainer quotes
    text = ("Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n\n"
            "CUDA Driver Version                           : (11, 5)\n"
            "CUDA Runtime Version                          : 11060\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_numba_linker_with_ptxas_line_keeps_its_reading():
    # numba/numba#3794: the ptxas line beside it was read before (ptxas-gpu-name-undefined, refined)
    text = ("LinkerError: [218] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n"
            "ptxas application ptx input, line 9; fatal   : Unsupported .version 6.3; current version is '6.1'\n"
            "ptxas fatal   : Ptx assembly aborted due to errors\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_rust_program_without_the_gpus_arch():
    # filecoin-project/rust-gpu-tools#79, the reporter's paste
    text = ("```\n/rust-gpu-tools$ cargo run --example add\n"
            "    Finished dev [unoptimized + debuginfo] target(s) in 0.03s\n"
            "     Running `target/debug/examples/add`\n" + RUST_209 +
            "\n```\nI use Tesla K80 GPU and how can I solve it.\n")
    assert _codes(text)[:1] == ["framework-gpu-arch-unsupported"]


# near-misses: lines that must not be read by the new signatures


def test_runtime_and_library_symbols_are_not_the_drivers():
    for line in (
        # the CUDA runtime's own versioned symbol (cudaStreamGetCaptureInfo_v2, CUDA 11.3): libcudart, not libcuda
        "ImportError: /opt/ext/_C.so: undefined symbol: cudaStreamGetCaptureInfo_v2, version libcudart.so.11.0",
        # cuBLAS / cuDNN / cuFile (GPUDirect Storage) symbols
        "OSError: libcublas.so.11: undefined symbol: cublasLt_for_cublas_HSS, version libcublasLt.so.11",
        "ImportError: libkvikio.so: undefined symbol: cuFileDriverOpen_v2",
        # a driver API name without a versioned entry point is not claimed by this signature
        "ImportError: /opt/ext/_C.so: undefined symbol: cuGetErrorString",
    ):
        assert "libcuda-versioned-entry-point-undefined" not in _ids(line), line


def test_other_numba_calls_are_not_the_linker():
    for line in (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in UNKNOWN_CUDA_ERROR",
        "numba.cuda.cudadrv.driver.CudaAPIError: [1] Call to cuLinkAddData results in CUDA_ERROR_INVALID_VALUE",
        "numba.cuda.cudadrv.driver.LinkerError: Call to cuLinkComplete results in UNKNOWN_CUDA_ERROR",
    ):
        assert "numba-linker-rejects-ptx" not in _ids(line), line


def test_prefixed_spellings_of_209_are_not_rusts():
    # HIP's enum and C#'s ManagedCuda spell the same code with a prefix: not Rust's bare variant
    for line in ("    hipErrorNoBinaryForGpu = 209,", "    CudaErrorNoBinaryForGpu = 209,"):
        assert "no-kernel-image" not in _ids(line), line


def test_openmm_plugin_dir_code_is_worded():
    from stackpeel.knowledge import load as load_kb

    entry = load_kb().get("openmm-plugin-dir-mismatch")
    assert entry.layer == "config" and entry.kind == "root"
    assert "OPENMM_PLUGIN_DIR" in entry.meaning and "unset OPENMM_PLUGIN_DIR" in entry.fix
    assert entry.links and all(link.startswith("https://") for link in entry.links)
