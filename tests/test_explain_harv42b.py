"""harv42b: an unbiased harvest of retrieval, vector search, recommender and tabular GPU ML
threads (Faiss, sentence-transformers, FBGEMM, XGBoost, CatBoost, ThunderGBM, Milvus, dask-cuda),
scored blind, and the general fixes its misses ask for (docs/dev/harv42b.md).

Twenty-three new training-side logs; explain named eight first before any change. The fixed misses
are each library's own wording (A1), taken from its source:
- GPU memory running out, in three libraries' own words: Faiss (faiss/gpu/utils/MemorySpace.cpp
  ``failed to cudaMalloc N bytes (error 2 out of memory)``, StandardGpuResources.cpp
  ``... (cudaMalloc error out of memory [2])``), Thrust under XGBoost (parallel_for.h
  ``parallel_for failed: out of memory``), CatBoost (stack_like_memory_pool.h
  ``NCudaLib::TOutOfMemoryError ... Error: Out of memory. Requested N MB; Free M MB``);
- a CPU build: Faiss without GPU_WRAPPER (``module 'faiss' has no attribute
  'StandardGpuResources'``), XGBoost without CUDA (common.h ``XGBoost version not compiled with GPU
  support``, context.cc ``XGBoost is not compiled with CUDA support``);
- pymilvus's own index-type list older than Milvus's GPU indexes (client/check.py
  ``Invalid index_type: GPU_IVF_FLAT``);
- CatBoost's ``CUDA error 35`` from its own build (``catboost/cuda/cuda_lib/cuda_base.h:281``) read
  as the torch wheel's driver problem: CatBoost, XGBoost, Faiss, ThunderGBM and a C++ header with
  a line number now count as a compiled program of its own (``driver-too-old-for-build``).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import codes_of as _codes, family_tests

# faiss/gpu/utils/MemorySpace.cpp allocMemorySpaceV (1.6.x; facebookresearch/faiss#1031)
FAISS_OOM_16 = ("RuntimeError: Error in void faiss::gpu::allocMemorySpaceV(faiss::gpu::MemorySpace, void**, size_t) at "
                "gpu/utils/MemorySpace.cpp:26: Error: 'err == cudaSuccess' failed: failed to cudaMalloc 47064032 bytes "
                "(error 2 out of memory)")
# 1.7.0 (facebookresearch/faiss#2020)
FAISS_OOM_17 = ("Error: 'err == cudaSuccess' failed: Failed to cudaMalloc 536870912 bytes on device 1 "
                "(error 2 out of memory")
# faiss/gpu/StandardGpuResources.cpp allocMemory (1.7.1+; facebookresearch/faiss#2105)
FAISS_OOM_SGR = ("Error: 'err == cudaSuccess' failed: StandardGpuResources: alloc fail type TemporaryMemoryBuffer dev 0 "
                 "space Device stream 0x7f7b46ba9a60 size 1610612736 bytes (cudaMalloc error out of memory [2])")
# thrust parallel_for.h throw_on_error under XGBoost's gpu_hist (dmlc/xgboost#4898)
THRUST_OOM = "what(): parallel_for failed: out of memory"
# catboost stack_like_memory_pool.h (catboost/catboost#2750, #302)
CATBOOST_OOM = ("(NCudaLib::TOutOfMemoryError) /src/catboost/catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:303: "
                "Error: Out of memory. Requested 8880 MB; Free 5902.061425 MB")
CATBOOST_OOM_OLD = ('what() -> "catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:294: Error: Out of memory. '
                    'Requested 1070.546387; Free 1010.952393"')

# faiss/python/swigfaiss.swig: GPU classes only #ifdef GPU_WRAPPER
FAISS_NO_SGR = "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'"
FAISS_NO_GPUINDEX = "AttributeError: module 'faiss' has no attribute 'GpuIndexFlatL2'"
FAISS_NO_CLONER = "AttributeError: module 'faiss' has no attribute 'index_cpu_to_gpu'"
FAISS_NO_SGR_PY2 = "AttributeError: 'module' object has no attribute 'StandardGpuResources'"
# xgboost src/common/common.h AssertGPUSupport (dmlc/xgboost#4355's paste)
XGB_FATAL = ("XGBoostError: [12:54:26] /home/lly2014/xgboost/src/learner.cc:180: "
             "XGBoost version not compiled with GPU support.")
# xgboost src/context.cc (2.x), gbm/gbtree.cc
XGB_WARNING = "UserWarning: [00:11:25] WARNING: /workspace/src/context.cc:196: XGBoost is not compiled with CUDA support."
XGB_DATA = ("xgboost.core.XGBoostError: [10:03:11] /workspace/src/gbm/gbtree.cc:575: "
            "Data is on CUDA device, but XGBoost is not compiled with CUDA support.")

# pymilvus/client/check.py check_index_params
PYMILVUS_GPU_INDEX = ("pymilvus.exceptions.ParamError: <ParamError: (code=1, message=Invalid index_type: GPU_IVF_FLAT, "
                      "which must be one of: ['FLAT', 'IVF_FLAT', 'IVF_SQ8', 'IVF_PQ', 'HNSW', 'ANNOY', 'DISKANN', "
                      "'AUTOINDEX'])>")

FAMILIES = {
    "gpu-out-of-memory": [FAISS_OOM_16, FAISS_OOM_17, FAISS_OOM_SGR, THRUST_OOM, CATBOOST_OOM, CATBOOST_OOM_OLD],
    "framework-cpu-only-build": [FAISS_NO_SGR, FAISS_NO_GPUINDEX, FAISS_NO_CLONER, FAISS_NO_SGR_PY2,
                                 XGB_FATAL, XGB_WARNING, XGB_DATA],
    "dependency-version-mismatch": [PYMILVUS_GPU_INDEX],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_faiss_cpu_build_paste_names_the_cpu_build():
    # facebookresearch/faiss#2892 (faiss-cpu installed over faiss-gpu), the reporter's paste
    text = (
        "module 'faiss' has no attribute 'StandardGpuResources'\n\n"
        "I have already installed faiss-gpu(1.7.2) using pip install, seen as followings:\n"
        "`Requirement already satisfied: faiss-gpu in /opt/conda/lib/python3.7/site-packages (1.7.2)`\n"
        "```\nres = faiss.StandardGpuResources()\n```\n"
    )
    assert _codes(text)[:1] == ["framework-cpu-only-build"]


def test_faiss_title_without_its_closing_quote():
    # facebookresearch/faiss#888: the reporter retyped the error in the title
    text = ("while executing i got the error AttributeError: module 'faiss' has no attribute "
            "'StandardGpuResources can anyone helpme me\n")
    assert _codes(text)[:1] == ["framework-cpu-only-build"]


def test_faiss_cpu_build_near_misses():
    # a CPU class missing is a broken or shadowed install, not the CPU build; another module's
    # attribute; a name that only starts like a GPU class
    assert "faiss-cpu-build-gpu-api" not in _ids("AttributeError: module 'faiss' has no attribute 'IndexFlatL2'")
    assert "faiss-cpu-build-gpu-api" not in _ids("AttributeError: module 'mylib' has no attribute 'StandardGpuResources'")
    assert "faiss-cpu-build-gpu-api" not in _ids(
        "AttributeError: module 'faiss' has no attribute 'StandardGpuResourcesPool'")
    assert "faiss-cpu-build-gpu-api" not in _ids("faiss.get_num_gpus() returned 0")


def test_faiss_oom_paste_names_gpu_memory():
    # facebookresearch/faiss#1031, the reporter's paste
    text = (
        "I am using faiss and feeding 150,000 vectors directly from pytorch. I got this error:\n\n"
        + FAISS_OOM_16 + "\n\n I am using  **StandardGpuResources**  and GpuIndexFlatIP\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_faiss_alloc_near_misses():
    # another CUDA status is no shortage of memory; Faiss's alloc logging of a temp-space retry
    assert "faiss-gpu-alloc-oom" not in _ids(
        "Error: 'err == cudaSuccess' failed: failed to cudaMalloc 47064032 bytes (error 1 invalid argument)")
    assert "faiss-gpu-alloc-oom" not in _ids(
        "StandardGpuResources: alloc fail type TemporaryMemoryBuffer dev 0 space Temporary stream 0x0 size 1024 "
        "bytes (no temp space); retrying as MemorySpace::Device")
    assert "faiss-gpu-alloc-oom" not in _ids(
        "StandardGpuResources: alloc fail type FlatData dev 0 space Device stream 0 size 64 bytes "
        "(cudaMalloc error invalid device ordinal [101])")


def test_xgboost_thrust_oom_title_names_gpu_memory():
    # dmlc/xgboost#3756 (the title) and #4898 (the reporter's paste)
    assert _codes("Multi-gpu terminate called after throwing an instance of 'thrust::system::system_error' "
                  "parallel_for failed: out of memory\n")[:1] == ["gpu-out-of-memory"]
    text = ("I feed  datasets(1.09 million cases contained)  to xgboost with GPU support,\nand get the error：\n"
            "'thrust::system::system_error' what(): parallel_for failed: out of memory Aborted\n")
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_thrust_near_misses():
    # another status of the same launch is not memory
    assert "thrust-parallel-for-oom" not in _ids(
        "what():  parallel_for failed: cudaErrorNoKernelImageForDevice: no kernel image is available for "
        "execution on the device")
    assert "thrust-parallel-for-oom" not in _ids("parallel_for failed: invalid device function")


def test_catboost_near_misses():
    # another program's out-of-memory wording; catboost's own pool statistics
    assert "catboost-gpu-memory-pool-oom" not in _ids(
        "Fatal Error: Out of memory. Requested 12.00KB memory. Must shutdown app.")
    assert "catboost-gpu-memory-pool-oom" not in _ids("Free memory in last block 1024.5")


def test_xgboost_near_misses():
    assert "xgboost-cpu-build" not in _ids("XGBoost version not compiled with OneAPI support.")
    assert not {"xgboost-cpu-build", "xgboost-cpu-build-warning"} & set(_ids(
        "WARNING: No visible GPU is found, setting device to CPU."))


def test_pymilvus_near_misses():
    # a CPU index type the old client knows, and other programs' 'Invalid index_type'
    assert "pymilvus-index-type-list-too-old" not in _ids(
        "ParamError: (code=1, message=Invalid index_type: IVF_FLAT, which must be one of: ['FLAT'])")
    assert "pymilvus-index-type-list-too-old" not in _ids(
        "ValueError: Invalid index_type: hnsw. Must be 'hnsw' or 'flat'")


def test_catboost_error_35_is_its_own_build():
    # catboost/catboost#1591 and #1254: catboost's GPU build on a driver older than its CUDA
    text = (
        "Problem: c:/program files (x86)/go agent/pipelines/buildmaster/catboost.git/catboost/cuda/cuda_lib/"
        "cuda_base.h:281: CUDA error 35: CUDA driver version is insufficient for CUDA runtime version\n\n"
        "catboost version: catboost-0.24.4\nOperating System: win10 x64\nGPU: GTX 1070\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]
    text = (
        "Error in catboost.train(pool, test.pool, params = fit_params) :\n"
        "  catboost/cuda/cuda_lib/cuda_base.h:281: CUDA error 35: CUDA driver version is insufficient for CUDA "
        "runtime version\nExecution halted\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_a_header_line_alone_marks_a_compiled_program():
    text = ("src/gpu/context.h:88: CUDA error 35: CUDA driver version is insufficient for CUDA runtime version\n"
            "Aborted (core dumped)\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_torch_log_with_a_header_line_stays_torchs():
    # the header:line counts only where nothing of torch is in the log
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 302, in _lazy_init\n'
        "    torch._C._cuda_init()\n"
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
        "c10/cuda/CUDAFunctions.h:55: note\n"
    )
    assert _codes(text)[:1] == ["driver-too-old-for-torch"]


def test_code_text_names_the_new_libraries():
    oom = load_kb().get("gpu-out-of-memory")
    assert "StandardGpuResources" in oom.meaning and "TOutOfMemoryError" in oom.meaning
    assert "setTempMemory" in oom.fix and "gpu_ram_part" in oom.fix
    cpu = load_kb().get("framework-cpu-only-build")
    assert "faiss-cpu" in cpu.meaning and "XGBoost version not compiled with GPU support" in cpu.meaning
    assert "faiss-gpu" in cpu.fix and "build_info" in cpu.fix
