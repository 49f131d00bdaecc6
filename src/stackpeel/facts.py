"""The shape of each probe's facts: one TypedDict per probe, keyed as the probe writes them.

Probes run in the target interpreter and return plain JSON; these declarations are the
contract between a probe, its check's ``evaluate`` and the checks that read its facts
through ``ctx.dep(...)``. ``Check.facts`` names the TypedDict of the check's probe.

The runner validates every answer with :func:`problems` before ``evaluate`` runs
(runner/scheduler.py): a missing required key or a value of another type makes the check's
result ``error`` naming the key, so ``evaluate`` reads required keys as ``facts["key"]``.
tests/test_facts.py validates the facts recorded on real machines (tests/data/ and the
committed reports in docs/validation/) and the probes' live answers against them, so a
renamed or dropped key fails a test instead of silently reading as ``None``.

Required keys are the ones the probe sets on every path, "not installed" and early
returns included (written from the probe's code, not only from what recordings hold);
``NotRequired`` keys (the ``...Optional`` base) appear on some paths only.
Checks may add derived keys in their verdict: those are not the probe's and are not listed.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Type, TypedDict, Union, get_type_hints


class SystemPlatformFacts(TypedDict):
    """Facts of ``system.platform_facts`` (check ``system.platform``)."""

    arch: Optional[str]
    container: Optional[str]
    container_signals: List[Any]
    distro: Optional[str]
    distro_id: Optional[str]
    distro_like: Optional[str]
    distro_version: Optional[str]
    ext_suffix: Optional[str]
    in_venv: bool
    is_root: bool
    kernel: Optional[str]
    libc: Optional[str]
    libc_version: Optional[str]
    python_base_prefix: Optional[str]
    python_executable: Optional[str]
    python_prefix: Optional[str]
    python_version: Optional[str]
    slurm_job: Any
    user: Optional[str]


class _GpuKernelDriverFactsOptional(TypedDict, total=False):
    driver_branch: Optional[str]
    nvidiactl_open_error: Optional[str]


class GpuKernelDriverFacts(_GpuKernelDriverFactsOptional):
    """Facts of ``gpu.kernel_driver`` (check ``gpu.kernel_driver``)."""

    container: Optional[str]
    container_signals: List[Any]
    driver_version: Optional[str]
    kernel: Optional[str]
    module_flavour: Optional[str]
    modules: Optional[List[Any]]
    nvidiactl_exists: bool
    pci_gpus: List[Any]
    proc_devices: Dict[str, Any]
    proc_version_text: Optional[str]
    wsl: Dict[str, Any]


class _GpuDeviceNodesFactsOptional(TypedDict, total=False):
    nvidia_modprobe: Dict[str, Any]
    dev_read_only: Optional[bool]


class GpuDeviceNodesFacts(_GpuDeviceNodesFactsOptional):
    """Facts of ``gpu.device_nodes`` (check ``gpu.device_nodes``)."""

    caps: List[Any]
    container: Optional[str]
    container_signals: List[Any]
    dxg: Dict[str, Any]
    env: Dict[str, Any]
    gpus: List[Any]
    groups: List[Any]
    hostname: Optional[str]
    modeset: Dict[str, Any]
    modules: Optional[List[Any]]
    nvidiactl: Dict[str, Any]
    nvswitches: Optional[int]
    proc_devices: Dict[str, Any]
    uid: Optional[int]
    user: Optional[str]
    uvm: Dict[str, Any]
    uvm_tools: Dict[str, Any]


class NvmlSlowdownFacts(TypedDict):
    """One NVML device's ``slowdown`` (probes/gpu.py ``clock_slowdown``): the GPU temperature in
    degrees C, the clock event reasons bitmask (nvml.h ``nvmlClocksEventReason*``) with the call that
    answered and the bits' names as nvidia-smi prints them, the temperature thresholds that the
    driver gave (shutdown, slowdown, mem_max, gpu_max), and each failed call's error. ``None`` where
    a call failed; ``reasons_call`` is None when neither the new nor the old name is exported."""

    errors: Dict[str, Any]
    reasons: Optional[List[str]]
    reasons_call: Optional[str]
    reasons_mask: Optional[int]
    temperature_c: Optional[int]
    thresholds_c: Dict[str, int]


class _NvmlDeviceFactsOptional(TypedDict, total=False):
    compute_mode: Optional[str]
    memory: Optional[Dict[str, Any]]
    memory_errors: Dict[str, Any]
    processes: Optional[List[Any]]
    slowdown: NvmlSlowdownFacts  # absent in facts recorded before gpu40


class NvmlDeviceFacts(_NvmlDeviceFactsOptional):
    """One entry of ``gpu.nvml``'s ``devices``; the optional keys are absent when the handle could
    not be had (``error``) and in facts recorded before they were added."""

    cc: Optional[str]
    cc_major: Optional[int]
    cc_minor: Optional[int]
    error: Optional[Dict[str, Any]]
    index: int
    name: Optional[str]
    uuid: Optional[str]


class _GpuNvmlFactsOptional(TypedDict, total=False):
    pid: int


class GpuNvmlFacts(_GpuNvmlFactsOptional):
    """Facts of ``gpu.nvml`` (check ``gpu.nvml``). Each device may carry ``memory`` (total, free,
    used bytes) and ``processes`` (pid, used_bytes, name) from NVML, and ``compute_mode``
    (nvmlDeviceGetComputeMode: "DEFAULT", "EXCLUSIVE_THREAD", "PROHIBITED", "EXCLUSIVE_PROCESS";
    None when unreadable; absent in facts recorded before fd25), and ``slowdown`` (temperature and
    clock event reasons, :class:`NvmlSlowdownFacts`; absent before gpu40)."""

    cuda_driver_version: Optional[int]
    device_count: Optional[int]
    devices: List[NvmlDeviceFacts]
    driver_version: Optional[str]
    errors: Dict[str, Any]
    init_error: Any
    kernel_driver_version: Optional[str]
    libcuda_load_error: Any
    libcuda_path: Optional[str]
    libcuda_path_version: Optional[str]
    library: Optional[str]
    load_error: Any
    loaded: bool
    missing_symbols: List[Any]
    nvml_version: Optional[str]
    path: Optional[str]
    path_version: Optional[str]


class _GpuVisibleDevicesFactsOptional(TypedDict, total=False):
    #: derived: each NVML device's compute mode (index, mode), passed on by cuda.driver_api and torch.cuda
    compute_modes: List[Any]
    gpu_count: Optional[int]
    visible_count: Optional[int]


class GpuVisibleDevicesFacts(_GpuVisibleDevicesFactsOptional):
    """Facts of ``gpu.visible_devices`` (check ``gpu.visible_devices``)."""

    cuda_device_order: Any
    cuda_visible_devices: Optional[str]
    gpu_nodes: Optional[int]
    nvidia_visible_devices: Optional[str]
    parsed: Dict[str, Any]
    pytorch_nvml_based_cuda_check: Any


class CudaDeviceFacts(TypedDict):
    """One entry of ``cuda.driver_api``'s ``devices`` (cuDeviceGet*, cuda_driver.py); the ``None``
    values and ``error`` when a call failed for that device."""

    cc: Optional[str]
    cc_major: Optional[int]
    cc_minor: Optional[int]
    error: Optional[Dict[str, Any]]
    index: int
    name: Optional[str]
    total_memory: Optional[int]


class _CudaDriverApiFactsOptional(TypedDict, total=False):
    compute_modes: List[Any]  # derived, from gpu.visible_devices (NVML's compute mode per GPU)
    device_count_error: Dict[str, Any]
    driver_cuda_version: Optional[str]
    libcuda_off_path: Optional[str]  # when libcuda did not load: a driver mount (/usr/local/nvidia/lib64) holding it
    rlimit_as: Dict[str, Optional[int]]
    seconds: Dict[str, float]
    uvm_node_after_init: bool


class CudaDriverApiFacts(_CudaDriverApiFactsOptional):
    """Facts of ``cuda_driver.driver_api`` (check ``cuda.driver_api``)."""

    container: Optional[str]
    cuda_visible_devices: Optional[str]
    device_count: Optional[int]
    devices: List[CudaDeviceFacts]
    driver_version: Optional[int]
    driver_version_error: Optional[Dict[str, Any]]
    forward_compat: bool
    init_error: Optional[Dict[str, Any]]
    init_result: Optional[int]
    kernel_driver_version: Optional[str]
    ld_library_path: Optional[str]
    libcuda_loaded: bool
    libcuda_path: Optional[str]
    libcuda_path_version: Optional[str]
    library: Optional[str]
    load_error: Any
    missing_symbols: List[Any]
    nvidiactl: bool
    stub: bool
    uvm_module: Optional[bool]
    uvm_node: bool


class TorchDeviceFacts(TypedDict):
    """One entry of ``torch.cuda``'s ``devices`` (torch_layer.py): ``None`` where the call failed."""

    cc: Optional[str]
    index: int
    name: Optional[str]


class _TorchCudaFactsOptional(TypedDict, total=False):
    compute_modes: List[Any]  # derived, from cuda.driver_api (NVML's compute mode per GPU)


class TorchCudaFacts(_TorchCudaFactsOptional):
    """Facts of ``torch_layer.torch_cuda`` (check ``torch.cuda``)."""

    arch_list: List[Any]
    available: bool
    built_arch_flags: Optional[List[Any]]
    capabilities: List[Any]
    compiled_with_cuda: Optional[bool]
    cuda: Optional[str]
    device_count: Optional[int]
    devices: List[TorchDeviceFacts]
    dist_version: Optional[str]
    env: Dict[str, Any]
    errors: Dict[str, Any]
    hip: Any
    import_error: Any
    installed: bool
    op_ok: Optional[bool]
    op_result: Optional[float]
    origin: Optional[str]
    output: List[Any]
    path: Optional[str]
    version: Optional[str]
    warnings: List[Any]


class _ToolchainCCompilerFactsOptional(TypedDict, total=False):
    kind: Optional[str]
    plain_cc_version: Optional[str]
    target_triple: Optional[str]
    version: Optional[str]
    version_run: Dict[str, Any]


class ToolchainCCompilerFacts(_ToolchainCCompilerFactsOptional):
    """Facts of ``toolchain.c_compiler`` (check ``toolchain.c_compiler``)."""

    cc_env: Optional[str]
    clang: Any
    compiler: Optional[str]
    conda_gcc: List[Any]
    executable: bool
    exists: bool
    gcc: Optional[str]
    machine: Optional[str]
    path_env: Optional[str]
    plain_cc: Optional[str]
    realpath: Optional[str]
    resolved: Optional[str]
    source: Optional[str]
    works: bool


class ToolchainPythonHeadersFacts(TypedDict):
    """Facts of ``toolchain.python_headers`` (check ``toolchain.python_headers``)."""

    base_executable: Optional[str]
    base_prefix: Optional[str]
    config_includepy: Optional[str]
    default_scheme: Optional[str]
    implementation: Optional[str]
    in_venv: bool
    include_dir: Optional[str]
    include_dir_exists: bool
    is_distro_python3: bool
    kind: Optional[str]
    py_mm: Optional[str]
    pyconfig_h_exists: bool
    python_h: Optional[str]
    python_h_exists: bool
    python_h_readable: bool
    python_version: Optional[str]
    scheme: Optional[str]


class _ToolchainExtensionBuildFactsOptional(TypedDict, total=False):
    answer: Optional[int]
    command: List[Any]
    #: the TMPDIR/TMP/TEMP the compiler ran with: a stamped folder in the directory gcc chooses
    #: (tmp26), or the user's own value where none could be made there
    compiler_tmpdir: Optional[str]
    error: Any
    import_error: Dict[str, Any]
    missing: Optional[str]
    rc: Optional[int]
    stdout: Optional[str]
    tmpdir: Optional[str]


class ToolchainExtensionBuildFacts(_ToolchainExtensionBuildFactsOptional):
    """Facts of ``toolchain.extension_build`` (check ``toolchain.extension_build``); the
    build's keys only once a compiler was found and run."""

    attempted: bool
    compiler: Optional[str]
    failure_kind: Optional[str]
    include_dir: Optional[str]
    ok: bool
    source: Optional[str]
    stderr: Optional[str]


class _ToolchainLibcudaDiscoveryFactsOptional(TypedDict, total=False):
    override: Dict[str, Any]
    #: the driver's libcuda.so.1 in the compiler's default library directories, when the override
    #: lacks it (None: no compiler, or none holds it); not in reports before 2026-12-04
    linker_libcuda: Optional[str]
    triton_installed: bool  # not in reports of stackpeel before 2026-12


class ToolchainLibcudaDiscoveryFacts(_ToolchainLibcudaDiscoveryFactsOptional):
    """Facts of ``toolchain.libcuda_discovery`` (check ``toolchain.libcuda_discovery``);
    ``override`` when TRITON_LIBCUDA_PATH is set."""

    ld_library_path: Optional[str]
    ld_library_path_hits: List[Any]
    ldconfig: Optional[str]
    ldconfig_entries: List[Any]
    ldconfig_executable: bool
    ldconfig_exists: bool
    ldconfig_run: Dict[str, Any]
    libcuda_found_in: List[Any]
    triton_dirs: List[Any]
    triton_error: Any
    triton_libcuda_path: Any
    triton_ok: bool
    triton_source: Optional[str]


class _ToolchainCxxCompilerFactsOptional(TypedDict, total=False):
    command: List[Any]
    compiler_version: Optional[str]
    error: Any
    #: ok, exec, flag (no -std=c++20), cplusplus (__cplusplus below 202002L), library, other
    kind: Optional[str]
    rc: Optional[int]
    resolved: Optional[str]
    stderr: Optional[str]


class ToolchainCxxCompilerFacts(_ToolchainCxxCompilerFactsOptional):
    """Facts of ``toolchain.cxx_compiler`` (check ``toolchain.cxx_compiler``); the compile's
    keys only when torch needs C++20 (2.14 and newer)."""

    attempted: bool
    compiler: str
    cxx_env: Optional[str]
    needs_cxx20: bool
    source: str
    torch_files: Dict[str, Any]


class _ToolchainNvccFactsOptional(TypedDict, total=False):
    nvcc_error: Any
    nvcc_exists: bool
    nvcc_rc: Optional[int]
    nvcc_stderr: Optional[str]
    nvcc_version: Optional[str]


class ToolchainNvccFacts(_ToolchainNvccFactsOptional):
    """Facts of ``toolchain.nvcc`` (check ``toolchain.nvcc``); the nvcc keys only when a
    CUDA home was found (``nvcc_rc`` ... only when its bin/nvcc exists)."""

    cuda_home: Optional[str]
    cuda_home_env: Optional[str]
    cuda_path_env: Any
    nvcc: Optional[str]
    pip_nvcc: List[Any]
    source: Optional[str]
    torch_files: Dict[str, Any]


class _ToolchainPtxasFactsOptional(TypedDict, total=False):
    archs: List[Any]
    bin_dir: Optional[str]
    blackwell_env: Optional[str]
    blackwell_from_arch: Optional[int]
    ccs: List[Any]
    driver_version: Optional[int]
    env_ignored_by_this_version: List[Any]
    nvidia_backend: bool
    tools: Dict[str, Any]
    triton_path: Optional[str]
    triton_version: Optional[str]


class ToolchainPtxasFacts(_ToolchainPtxasFactsOptional):
    """Facts of ``toolchain.ptxas`` (check ``toolchain.ptxas``): only ``triton_installed``
    without Triton; the tools and per-arch keys only with Triton's NVIDIA backend."""

    triton_installed: bool


class _ToolchainTritonCacheFactsOptional(TypedDict, total=False):
    abs_path: Optional[str]
    cached_helpers: List[Any]
    entries: Optional[int]
    exec_error: Any
    exec_ok: Optional[bool]  # None when nothing could be written to test it
    exists: bool
    free_bytes: Optional[int]
    free_inodes: Optional[int]
    list_error: str
    mount: Optional[Dict[str, Any]]
    not_a_directory: bool  # the path exists and is a file (not in reports before 2026-12-04)
    statvfs_error: str
    tested_dir: Optional[str]
    triton_installed: bool  # not in reports of stackpeel before 2026-12


class ToolchainTritonCacheFacts(_ToolchainTritonCacheFactsOptional):
    """Facts of ``toolchain.triton_cache`` (check ``toolchain.triton_cache``); the directory's
    keys only when a cache directory is named."""

    cache_dir: Optional[str]
    cache_manager: Any
    empty: bool
    file_program: Optional[str]
    home_env: Optional[str]
    platform_key: Optional[str]
    platform_key_with_file: Optional[str]
    relative: bool
    remote_cache: Any
    source: Optional[str]
    writable: bool
    write_error: Any


class TempDirEntryFacts(TypedDict, total=False):
    """One temporary directory as ``toolchain.temp_dir`` tested it (``var``: only for a
    TMPDIR/TEMP/TMP that was skipped)."""

    access_ok: bool  # access(R|W|X), the test gcc makes
    free_bytes: Optional[int]
    is_dir: bool
    mount: Optional[Dict[str, Any]]
    path: str
    var: str
    write_error: Optional[str]  # a real O_CREAT|O_EXCL write, the test Python's tempfile makes


class ToolchainTempDirFacts(TypedDict):
    """Facts of ``toolchain.temp_dir`` (check ``toolchain.temp_dir``, tmp24): the directory
    Python's tempfile (Triton's build) and gcc (its intermediates) will use."""

    compiler: TempDirEntryFacts
    compiler_tmpdir: str
    cwd: Optional[str]  # the target's working directory (tempfile's last candidate, gcc's ".")
    env: Dict[str, Optional[str]]  # TMPDIR, TEMP, TMP as the target has them
    python: Optional[TempDirEntryFacts]
    python_error: Optional[str]  # FileNotFoundError: No usable temporary directory found in [...]
    python_tmpdir: Optional[str]
    skipped: List[TempDirEntryFacts]


class _TritonImportFactsOptional(TypedDict, total=False):
    env: Dict[str, Any]
    import_output: Dict[str, Any]
    import_s: Optional[float]


class TritonImportFacts(_TritonImportFactsOptional):
    """Facts of ``triton_layer.import_facts`` (check ``triton.import``); the import's keys
    only when Triton is installed."""

    dist: Optional[str]
    dist_version: Optional[str]
    import_error: Any
    importable: bool
    installed: bool
    path: Optional[str]
    python_version: Optional[str]
    torch_cuda: Optional[str]
    torch_hip: Any
    torch_version: Optional[str]
    triton_pin: Optional[str]
    triton_pin_dist: Optional[str]
    triton_requirement_line: Optional[str]
    version: Optional[str]


class _TritonBuildFactsOptional(TypedDict, total=False):
    import_path: str
    platform_key: Optional[str]
    platform_key_error: str
    standin_failed: Optional[Dict[str, Any]]
    triton_version: Optional[str]


class TritonBuildFacts(_TritonBuildFactsOptional):
    """Facts of ``triton_layer.build_facts`` (check ``triton.build``); ``triton_version`` and
    ``platform_key`` once triton imported."""

    answer: Optional[int]
    api: Optional[str]
    cache_dir: Optional[str]
    cache_files: List[Any]
    command: Union[List[Any], str, None]
    compiler: Optional[str]
    compiler_source: Optional[str]
    compiler_stderr: Optional[str]
    compiler_stdout: Optional[str]
    error: Optional[Dict[str, Any]]
    ext_suffix: Optional[str]
    file_program: Optional[str]
    ok: bool
    python_h: bool
    python_include: Optional[str]
    python_stderr: Optional[str]
    python_version: Optional[str]
    returncode: Optional[int]
    warnings: List[Any]


class _TritonKernelLaunchFactsOptional(TypedDict, total=False):
    cache_used: Optional[str]
    prebuilt: Optional[Dict[str, Any]]


class TritonKernelLaunchFacts(_TritonKernelLaunchFactsOptional):
    """Facts of ``triton_layer.kernel_launch`` (check ``triton.kernel_launch``)."""

    compiler: Optional[str]
    ext_suffix: Optional[str]
    file_program: Optional[str]
    fresh: Optional[Dict[str, Any]]
    triton_version: Optional[str]
    user_cache: Dict[str, Any]
    user_run: Optional[Dict[str, Any]]
    user_run_reason: Optional[str]


class _KernelsCausalConv1dFactsOptional(TypedDict, total=False):
    cuda_available: bool
    cuda_error: Dict[str, Any]
    device_count: int
    gpu_call: Dict[str, Any]
    has_fn: bool
    torch_cuda: Optional[str]
    torch_cxx11abi: Optional[bool]
    torch_error: Dict[str, Any]
    torch_version: str
    warnings: List[Any]


class KernelsCausalConv1dFacts(_KernelsCausalConv1dFactsOptional):
    """Facts of ``kernels.causal_conv1d_facts`` (check ``kernels.causal_conv1d``); the import's
    keys only when causal-conv1d is installed."""

    extension: Any
    import_error: Any
    imported: bool
    installed: bool
    package: Any
    tag: Any
    undefined_symbol: Any
    undefined_symbol_demangled: Any
    version: Any


class _KernelsFlaFactsOptional(TypedDict, total=False):
    IS_NVIDIA_BLACKWELL: Union[bool, int, str, None]
    IS_NVIDIA_HOPPER: Union[bool, int, str, None]
    IS_TF32_SUPPORTED: Union[bool, int, str, None]
    cuda_error: Dict[str, Any]
    device_count: int
    gpu_name: Optional[str]
    import_deps_error: Optional[Dict[str, Any]]
    import_path: str
    other_warnings: List[Any]
    stderr: Optional[str]
    torch_cuda: Optional[str]
    torch_error: Dict[str, Any]
    torch_version: Optional[str]
    triton_cache_dir: Optional[str]


class KernelsFlaFacts(_KernelsFlaFactsOptional):
    """Facts of ``kernels.fla_facts`` (check ``kernels.fla``); the detection's keys only when
    FLA is installed (fla.utils' flags as FLA sets them: bool, else their repr)."""

    IS_NVIDIA: Union[bool, int, str, None]
    cuda_available: Optional[bool]
    device: Union[str, bool, int, None]
    device_name: Union[str, bool, int, None]
    device_platform: Union[str, bool, int, None]
    device_torch_lib: Optional[str]
    dists: Dict[str, Any]
    fallback_warnings: List[Any]
    import_error: Any
    installed: bool
    spec: Optional[str]
    swallowed: Optional[Dict[str, Any]]
    target: Optional[Dict[str, Any]]
    torch_installed: bool
    triton_installed: bool
    triton_version: Optional[str]
    version: Optional[str]


class _KernelsTransformersFastPathFactsOptional(TypedDict, total=False):
    bindings_from: str
    cuda_error: Dict[str, Any]
    device_count: int
    source_bindings: List[Any]
    stderr: Optional[str]
    torch_cuda: Optional[str]
    torch_error: Dict[str, Any]
    torch_version: Optional[str]
    warnings: List[Any]


class KernelsTransformersFastPathFacts(_KernelsTransformersFastPathFactsOptional):
    """Facts of ``kernels.transformers_facts`` (check ``kernels.transformers_fast_path``); the
    import's keys only when transformers is installed."""

    bindings: List[Any]
    causal_conv1d_version: Any
    cuda_available: Optional[bool]
    fla_dists: Dict[str, Any]
    import_error: Any
    installed: bool
    legacy: Any
    model_module: Optional[str]
    version: Optional[str]


class _MultiGpuP2pFactsOptional(TypedDict, total=False):
    access: Optional[List[Any]]
    device_names: Optional[List[Any]]
    duration_s: Optional[float]
    error: Any
    iommu_cmdline: List[Any]
    iommu_groups: Optional[int]
    pairs: List[Any]
    pairs_checked: Optional[int]
    skipped: Optional[str]
    topology: Optional[Dict[str, Any]]
    torch: Optional[str]
    worker: Dict[str, Any]


class MultiGpuP2pFacts(_MultiGpuP2pFactsOptional):
    """Facts of ``multi_gpu.p2p`` (check ``multi_gpu.p2p``)."""

    device_count: Optional[int]


class _MultiGpuShmFactsOptional(TypedDict, total=False):
    entries: Optional[int]
    largest: List[Any]
    nccl_segments: Optional[int]
    statvfs_error: str


class MultiGpuShmFacts(_MultiGpuShmFactsOptional):
    """Facts of ``multi_gpu.shm`` (check ``multi_gpu.shm``); its contents only when /dev/shm exists."""

    container: Optional[str]
    exists: bool
    free_bytes: Optional[int]
    mount: Dict[str, Any]
    path: Optional[str]
    size_bytes: Optional[int]
    writable: bool


class _MultiGpuNcclFactsOptional(TypedDict, total=False):
    duration_s: Optional[float]
    env_set_by_stackpeel: Dict[str, Any]
    expected: Optional[float]
    nccl_version: Optional[str]
    ok: bool
    ranks: List[Any]
    skipped: Optional[str]
    sum: Optional[float]
    timeout_s: Optional[float]
    torch: Optional[str]


class MultiGpuNcclFacts(_MultiGpuNcclFactsOptional):
    """Facts of ``multi_gpu.nccl`` (check ``multi_gpu.nccl``)."""

    backend: Optional[str]
    nccl_env: Dict[str, Any]
    world_size: Optional[int]


class MultiGpuMemlockFacts(TypedDict):
    """Facts of ``multi_gpu.memlock`` (check ``multi_gpu.memlock``)."""

    cap_ipc_lock: bool
    hard_bytes: Any
    hard_unlimited: bool
    rdma_devices: List[Any]
    soft_bytes: Any
    soft_unlimited: bool


class SystemFileSizeLimitFacts(TypedDict):
    """Facts of ``system.file_size_limit`` (check ``system.file_size_limit``): RLIMIT_FSIZE in
    bytes, None where unlimited."""

    hard: Optional[int]
    soft: Optional[int]


class _MultiGpuOpenFilesFactsOptional(TypedDict, total=False):
    #: under a soft limit of 64: ``python -c pass`` started under the user's limit (tmp26):
    #: {"rc", "stderr" (its last lines), "error" (the probe could not start it)}
    start: Dict[str, Any]


class MultiGpuOpenFilesFacts(_MultiGpuOpenFilesFactsOptional):
    """Facts of ``multi_gpu.open_files`` (check ``multi_gpu.open_files``)."""

    hard: Optional[int]
    open_now: Optional[int]
    soft: Optional[int]


class _GpuNvlinkFabricFactsOptional(TypedDict, total=False):
    query: Dict[str, Any]
    gpus: List[Any]
    sections: List[Any]
    q_error: Dict[str, Any]
    topology: Any


class GpuNvlinkFabricFacts(_GpuNvlinkFabricFactsOptional):
    """Facts of ``fabric.nvlink_fabric`` (check ``gpu.nvlink_fabric``); no real NVSwitch
    machine has recorded them yet: the live test covers the no-nvidia-smi path."""

    nvidia_smi: Optional[str]
    nvswitch_nodes: Optional[List[Any]]
    fabric_manager_pids: Optional[List[Any]]  # None when /proc cannot be listed


class _ConfigVersionsFactsOptional(TypedDict, total=False):
    fla_tilelang: Dict[str, Any]


class ConfigVersionsFacts(_ConfigVersionsFactsOptional):
    """Facts of ``config.versions`` (check ``config.known_combinations``): package metadata,
    torch/version.py and NVML; nothing of the stack imported."""

    cuda_driver_version: Optional[int]
    dists: Dict[str, Any]
    driver: Optional[str]
    gpu_source: Optional[str]
    gpus: List[Any]
    imported: List[Any]
    machine: Optional[str]
    python: Optional[str]
    torch_cuda: Optional[str]
    torch_version_file: Optional[str]


class _ConfigEnvironmentFactsOptional(TypedDict, total=False):
    cuda_home_nvcc: Dict[str, Any]
    libcuda_files: List[Any]


class ConfigEnvironmentFacts(_ConfigEnvironmentFactsOptional):
    """Facts of ``config.environment`` (checks ``config.environment``, ``config.compiler_environment``,
    ``config.cuda_home_environment``, ``config.triton_environment``, ``config.nccl_environment``)."""

    cache_parent: Dict[str, Any]
    ib_devices: Optional[Dict[str, Any]]
    interfaces: Optional[Dict[str, Any]]
    lists: Dict[str, Any]
    paths: Dict[str, Any]
    programs: Dict[str, Any]
    set: Dict[str, Any]


class ConfigModuleOriginsFacts(TypedDict):
    """Facts of ``config.module_origins`` (check ``config.module_origins``)."""

    cwd: Optional[str]
    modules: List[Any]
    sys_path_head: List[Any]


class _RuntimeLibsLoadedFactsOptional(TypedDict, total=False):
    cxx_newest_needed: Dict[str, Any]
    cxx_provided: Optional[str]
    reason: str
    timings: Dict[str, Any]


class RuntimeLibsLoadedFacts(_RuntimeLibsLoadedFactsOptional):
    """Facts of ``runtime_libs.loaded_libs`` (check ``runtime_libs.loaded``); ``reason`` when the
    probe stopped early (no /proc/self/maps, no child finished its imports)."""

    copies: Dict[str, Any]
    cxx_needs: List[Any]
    duration_s: Optional[float]
    env: Dict[str, Any]
    failed_import_shadows: List[Any]
    import_libraries: List[Any]
    imports: List[Any]
    loaded: List[Any]
    others: List[Any]
    others_count: int
    supported: bool
    torch: Optional[Dict[str, Any]]


class _DeepOpsFactsOptional(TypedDict, total=False):
    """What every ``--deep`` probe may add: common.torch_facts and the recorded output."""

    caches: str
    cuda_available: bool
    cuda_error: Dict[str, Any]
    device_count: int
    stderr: str
    torch_cuda: Optional[str]
    torch_error: Dict[str, Any]
    torch_version: str
    warnings: List[Any]


class _KernelsTorchCompileFactsOptional(_DeepOpsFactsOptional, total=False):
    #: {"dir" (the temporary directory Inductor writes in), "free_bytes", "need_bytes"} (tmp26);
    #: the compile is not attempted (steps empty) when free_bytes < need_bytes
    room: Dict[str, Any]


class KernelsTorchCompileFacts(_KernelsTorchCompileFactsOptional):
    """Facts of ``kernels.torch_compile_op`` (check ``kernels.torch_compile``, ``--deep``)."""

    devices: List[Any]
    skipped: Optional[str]
    steps: List[Any]


class _KernelsFlaOpsFactsOptional(_DeepOpsFactsOptional, total=False):
    cc: str
    gpu_name: str


class KernelsFlaOpsFacts(_KernelsFlaOpsFactsOptional):
    """Facts of ``kernels.fla_ops`` (check ``kernels.fla_ops``, ``--deep``)."""

    dists: Dict[str, Any]
    installed: bool
    skipped: Optional[str]
    steps: List[Any]
    triton_version: Optional[str]


class KernelsCausalConv1dOpsFacts(_DeepOpsFactsOptional):
    """Facts of ``kernels.causal_conv1d_ops`` (check ``kernels.causal_conv1d_ops``, ``--deep``)."""

    skipped: Optional[str]
    steps: List[Any]
    version: Optional[str]


#: check id -> the TypedDict of its probe's facts
BY_CHECK: Dict[str, type] = {
    "system.platform": SystemPlatformFacts,
    "system.file_size_limit": SystemFileSizeLimitFacts,
    "gpu.kernel_driver": GpuKernelDriverFacts,
    "gpu.device_nodes": GpuDeviceNodesFacts,
    "gpu.nvml": GpuNvmlFacts,
    "gpu.visible_devices": GpuVisibleDevicesFacts,
    "gpu.nvlink_fabric": GpuNvlinkFabricFacts,
    "cuda.driver_api": CudaDriverApiFacts,
    "torch.cuda": TorchCudaFacts,
    "toolchain.c_compiler": ToolchainCCompilerFacts,
    "toolchain.python_headers": ToolchainPythonHeadersFacts,
    "toolchain.extension_build": ToolchainExtensionBuildFacts,
    "toolchain.libcuda_discovery": ToolchainLibcudaDiscoveryFacts,
    "toolchain.nvcc": ToolchainNvccFacts,
    "toolchain.cxx_compiler": ToolchainCxxCompilerFacts,
    "toolchain.ptxas": ToolchainPtxasFacts,
    "toolchain.triton_cache": ToolchainTritonCacheFacts,
    "toolchain.temp_dir": ToolchainTempDirFacts,
    "triton.import": TritonImportFacts,
    "triton.build": TritonBuildFacts,
    "triton.kernel_launch": TritonKernelLaunchFacts,
    "kernels.causal_conv1d": KernelsCausalConv1dFacts,
    "kernels.fla": KernelsFlaFacts,
    "kernels.transformers_fast_path": KernelsTransformersFastPathFacts,
    "multi_gpu.p2p": MultiGpuP2pFacts,
    "multi_gpu.shm": MultiGpuShmFacts,
    "multi_gpu.nccl": MultiGpuNcclFacts,
    "multi_gpu.memlock": MultiGpuMemlockFacts,
    "multi_gpu.open_files": MultiGpuOpenFilesFacts,
    "config.known_combinations": ConfigVersionsFacts,
    "config.environment": ConfigEnvironmentFacts,
    "config.compiler_environment": ConfigEnvironmentFacts,
    "config.cuda_home_environment": ConfigEnvironmentFacts,
    "config.triton_environment": ConfigEnvironmentFacts,
    "config.nccl_environment": ConfigEnvironmentFacts,
    "config.module_origins": ConfigModuleOriginsFacts,
    "runtime_libs.loaded": RuntimeLibsLoadedFacts,
    "kernels.torch_compile": KernelsTorchCompileFacts,
    "kernels.fla_ops": KernelsFlaOpsFacts,
    "kernels.causal_conv1d_ops": KernelsCausalConv1dOpsFacts,
}


_SIMPLE = {bool: (bool,), int: (int,), float: (int, float), str: (str,), list: (list,), dict: (dict,)}


def _is_shape(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "__required_keys__")


def _accepts(tp: Any, value: Any) -> bool:
    """Whether ``value`` fits the annotation ``tp`` (Any, Optional, List/Dict, plain types, a
    nested shape: a dict, whose own keys :func:`_nested` checks)."""
    if tp is Any:
        return True
    origin = getattr(tp, "__origin__", None)
    if origin is Union:
        return any(_accepts(t, value) for t in tp.__args__)
    if tp is type(None):
        return value is None
    if origin in (list, List):
        return isinstance(value, list)
    if origin in (dict, Dict) or _is_shape(tp):
        return isinstance(value, dict)
    kinds = _SIMPLE.get(tp)
    if kinds is None:
        return True
    if tp in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, kinds)


def _nested(tp: Any, value: Any, where: str) -> List[str]:
    """Problems inside ``value`` where ``tp`` holds a nested shape (alone, Optional, or as the
    items of a List): missing keys and wrong types, prefixed with where they are."""
    if _is_shape(tp):
        return [f"{where}: {p}" for p in problems(tp, value)] if isinstance(value, dict) else []
    origin = getattr(tp, "__origin__", None)
    if origin is Union:
        for t in tp.__args__:
            if t is not type(None) and _accepts(t, value):
                return _nested(t, value, where)
    if origin in (list, List) and getattr(tp, "__args__", None) and isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _nested(tp.__args__[0], item, f"{where}[{i}]")]
    return []


def problems(shape: Type[Any], facts: Mapping[str, Any], extra: bool = False) -> List[str]:
    """What is wrong with ``facts`` for the TypedDict ``shape``: missing required keys, values
    of the wrong type (inside nested shapes too) and, with ``extra``, top-level keys the shape
    does not declare. A report's facts hold the keys ``evaluate`` derived as well, so ``extra``
    is for a probe's own answer."""
    hints = _hints(shape)
    out = [f"missing key {k!r}" for k in sorted(shape.__required_keys__) if k not in facts]
    for key, tp in hints.items():
        if key not in facts:
            continue
        if not _accepts(tp, facts[key]):
            out.append(f"{key!r} is {type(facts[key]).__name__}, declared {tp}")
        else:
            out += _nested(tp, facts[key], repr(key))
    if extra:
        out += [f"undeclared key {k!r}" for k in sorted(set(facts) - set(hints))]
    return out


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(shape: Type[Any]) -> Dict[str, Any]:
    """``get_type_hints`` of a shape, computed once (every check's facts are validated per run)."""
    hints = _HINTS.get(shape)
    if hints is None:
        hints = _HINTS[shape] = get_type_hints(shape)
    return hints
