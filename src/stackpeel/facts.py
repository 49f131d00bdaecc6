"""The shape of each probe's facts: one TypedDict per probe, keyed as the probe writes them.

Probes run in the target interpreter and return plain JSON; these declarations are the
contract between a probe, its check's ``evaluate`` and the checks that read its facts
through ``ctx.dep(...)``. ``Check.facts`` names the TypedDict of the check's probe.
tests/test_facts.py validates the facts recorded on real machines (tests/data/ and the
committed reports in docs/validation/) against them, so a renamed or dropped key fails a
test instead of silently reading as ``None``.

Required keys are the ones the probe always sets (probes start from a full dict of
defaults); ``NotRequired`` keys (the ``...Optional`` base) appear on some paths only.
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


class GpuNvmlFacts(TypedDict):
    """Facts of ``gpu.nvml`` (check ``gpu.nvml``)."""

    cuda_driver_version: Optional[int]
    device_count: Optional[int]
    devices: List[Any]
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


class _CudaDriverApiFactsOptional(TypedDict, total=False):
    driver_cuda_version: Optional[str]
    uvm_node_after_init: bool


class CudaDriverApiFacts(_CudaDriverApiFactsOptional):
    """Facts of ``cuda_driver.driver_api`` (check ``cuda.driver_api``)."""

    container: Optional[str]
    cuda_visible_devices: Optional[str]
    device_count: Optional[int]
    devices: List[Any]
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


class TorchCudaFacts(TypedDict):
    """Facts of ``torch_layer.torch_cuda`` (check ``torch.cuda``)."""

    arch_list: List[Any]
    available: bool
    built_arch_flags: Optional[List[Any]]
    capabilities: List[Any]
    compiled_with_cuda: bool
    cuda: Optional[str]
    device_count: Optional[int]
    devices: List[Any]
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
    missing: Optional[str]


class ToolchainExtensionBuildFacts(_ToolchainExtensionBuildFactsOptional):
    """Facts of ``toolchain.extension_build`` (check ``toolchain.extension_build``)."""

    attempted: bool
    command: List[Any]
    compiler: Optional[str]
    error: Any
    failure_kind: Optional[str]
    include_dir: Optional[str]
    ok: bool
    rc: Optional[int]
    source: Optional[str]
    stderr: Optional[str]
    stdout: Optional[str]
    tmpdir: Optional[str]


class ToolchainLibcudaDiscoveryFacts(TypedDict):
    """Facts of ``toolchain.libcuda_discovery`` (check ``toolchain.libcuda_discovery``)."""

    ld_library_path: Optional[str]
    ld_library_path_hits: List[Any]
    ldconfig: Optional[str]
    ldconfig_entries: List[Any]
    ldconfig_executable: bool
    ldconfig_exists: bool
    ldconfig_run: Dict[str, Any]
    libcuda_dirs: List[Any]
    libcuda_found_in: List[Any]
    triton_dirs: List[Any]
    triton_error: Any
    triton_libcuda_path: Any
    triton_ok: bool
    triton_source: Optional[str]


class ToolchainNvccFacts(TypedDict):
    """Facts of ``toolchain.nvcc`` (check ``toolchain.nvcc``)."""

    cuda_home: Optional[str]
    cuda_home_env: Optional[str]
    cuda_path_env: Any
    nvcc: Optional[str]
    nvcc_error: Any
    nvcc_exists: bool
    nvcc_rc: Optional[int]
    nvcc_stderr: Optional[str]
    nvcc_version: Optional[str]
    pip_nvcc: List[Any]
    source: Optional[str]
    torch_files: Dict[str, Any]


class ToolchainPtxasFacts(TypedDict):
    """Facts of ``toolchain.ptxas`` (check ``toolchain.ptxas``)."""

    archs: List[Any]
    bin_dir: Optional[str]
    blackwell_env: Optional[str]
    blackwell_from_arch: Optional[int]
    ccs: List[Any]
    driver_version: Optional[int]
    env_ignored_by_this_version: List[Any]
    nvidia_backend: bool
    tools: Dict[str, Any]
    triton_installed: bool
    triton_path: Optional[str]
    triton_version: Optional[str]


class _ToolchainTritonCacheFactsOptional(TypedDict, total=False):
    cached_helpers: List[Any]
    entries: Optional[int]


class ToolchainTritonCacheFacts(_ToolchainTritonCacheFactsOptional):
    """Facts of ``toolchain.triton_cache`` (check ``toolchain.triton_cache``)."""

    abs_path: Optional[str]
    cache_dir: Optional[str]
    cache_manager: Any
    empty: bool
    exec_error: Any
    exec_ok: bool
    exists: bool
    file_program: Optional[str]
    free_bytes: Optional[int]
    free_inodes: Optional[int]
    home_env: Optional[str]
    mount: Dict[str, Any]
    platform_key: Optional[str]
    platform_key_with_file: Optional[str]
    relative: bool
    remote_cache: Any
    source: Optional[str]
    tested_dir: Optional[str]
    writable: bool
    write_error: Any


class TritonImportFacts(TypedDict):
    """Facts of ``triton_layer.import_facts`` (check ``triton.import``)."""

    dist: Optional[str]
    dist_version: Optional[str]
    env: Dict[str, Any]
    import_error: Any
    import_output: Dict[str, Any]
    import_s: Optional[float]
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


class TritonBuildFacts(TypedDict):
    """Facts of ``triton_layer.build_facts`` (check ``triton.build``)."""

    answer: Optional[int]
    api: Optional[str]
    cache_dir: Optional[str]
    cache_files: List[Any]
    command: Optional[List[Any]]
    compiler: Optional[str]
    compiler_source: Optional[str]
    compiler_stderr: Optional[str]
    compiler_stdout: Optional[str]
    error: Optional[Dict[str, Any]]
    ext_suffix: Optional[str]
    file_program: Optional[str]
    ok: bool
    platform_key: Optional[str]
    python_h: bool
    python_include: Optional[str]
    python_stderr: Optional[str]
    python_version: Optional[str]
    returncode: Optional[int]
    triton_version: Optional[str]
    warnings: List[Any]


class _TritonKernelLaunchFactsOptional(TypedDict, total=False):
    cache_used: Optional[str]


class TritonKernelLaunchFacts(_TritonKernelLaunchFactsOptional):
    """Facts of ``triton_layer.kernel_launch`` (check ``triton.kernel_launch``)."""

    compiler: Optional[str]
    ext_suffix: Optional[str]
    file_program: Optional[str]
    fresh: Dict[str, Any]
    triton_version: Optional[str]
    user_cache: Dict[str, Any]
    user_run: Optional[Dict[str, Any]]
    user_run_reason: Optional[str]


class KernelsCausalConv1dFacts(TypedDict):
    """Facts of ``kernels.causal_conv1d_facts`` (check ``kernels.causal_conv1d``)."""

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
    gpu_name: Optional[str]


class KernelsFlaFacts(_KernelsFlaFactsOptional):
    """Facts of ``kernels.fla_facts`` (check ``kernels.fla``)."""

    IS_NVIDIA: bool
    IS_NVIDIA_BLACKWELL: bool
    IS_NVIDIA_HOPPER: bool
    IS_TF32_SUPPORTED: bool
    cuda_available: bool
    device: Optional[str]
    device_count: Optional[int]
    device_name: Optional[str]
    device_platform: Optional[str]
    device_torch_lib: Optional[str]
    dists: Dict[str, Any]
    fallback_warnings: List[Any]
    import_error: Any
    installed: bool
    other_warnings: List[Any]
    spec: Optional[str]
    stderr: Optional[str]
    swallowed: Optional[Dict[str, Any]]
    target: Optional[Dict[str, Any]]
    torch_cuda: Optional[str]
    torch_installed: bool
    torch_version: Optional[str]
    triton_cache_dir: Optional[str]
    triton_installed: bool
    triton_version: Optional[str]
    version: Optional[str]


class KernelsTransformersFastPathFacts(TypedDict):
    """Facts of ``kernels.transformers_facts`` (check ``kernels.transformers_fast_path``)."""

    bindings: List[Any]
    causal_conv1d_version: Any
    cuda_available: bool
    device_count: Optional[int]
    fla_dists: Dict[str, Any]
    import_error: Any
    installed: bool
    legacy: Any
    model_module: Optional[str]
    stderr: Optional[str]
    torch_cuda: Optional[str]
    torch_version: Optional[str]
    version: Optional[str]
    warnings: List[Any]


class _MultiGpuP2pFactsOptional(TypedDict, total=False):
    access: List[Any]
    device_names: List[Any]
    duration_s: Optional[float]
    error: Any
    iommu_cmdline: List[Any]
    iommu_groups: Optional[int]
    pairs: List[Any]
    pairs_checked: Optional[int]
    skipped: Optional[str]
    topology: Dict[str, Any]
    torch: Optional[str]
    worker: Dict[str, Any]


class MultiGpuP2pFacts(_MultiGpuP2pFactsOptional):
    """Facts of ``multi_gpu.p2p`` (check ``multi_gpu.p2p``)."""

    device_count: Optional[int]


class MultiGpuShmFacts(TypedDict):
    """Facts of ``multi_gpu.shm`` (check ``multi_gpu.shm``)."""

    container: Optional[str]
    entries: Optional[int]
    exists: bool
    free_bytes: Optional[int]
    largest: List[Any]
    mount: Dict[str, Any]
    nccl_segments: Optional[int]
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
    nccl_transport_switches: List[Any]
    world_size: Optional[int]


class MultiGpuMemlockFacts(TypedDict):
    """Facts of ``multi_gpu.memlock`` (check ``multi_gpu.memlock``)."""

    cap_ipc_lock: bool
    hard_bytes: Any
    hard_unlimited: bool
    rdma_devices: List[Any]
    soft_bytes: Any
    soft_unlimited: bool


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
    fabric_manager_pids: List[Any]


#: check id -> the TypedDict of its probe's facts
BY_CHECK: Dict[str, type] = {
    "system.platform": SystemPlatformFacts,
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
    "toolchain.ptxas": ToolchainPtxasFacts,
    "toolchain.triton_cache": ToolchainTritonCacheFacts,
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
}


_SIMPLE = {bool: (bool,), int: (int,), float: (int, float), str: (str,), list: (list,), dict: (dict,)}


def _accepts(tp: Any, value: Any) -> bool:
    """Whether ``value`` fits the annotation ``tp`` (Any, Optional, List/Dict, plain types)."""
    if tp is Any:
        return True
    origin = getattr(tp, "__origin__", None)
    if origin is Union:
        return any(_accepts(t, value) for t in tp.__args__)
    if tp is type(None):
        return value is None
    if origin in (list, List):
        return isinstance(value, list)
    if origin in (dict, Dict):
        return isinstance(value, dict)
    kinds = _SIMPLE.get(tp)
    if kinds is None:
        return True
    if tp in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, kinds)


def problems(shape: Type[Any], facts: Mapping[str, Any]) -> List[str]:
    """What is wrong with ``facts`` for the TypedDict ``shape``: missing required keys and
    values of the wrong type (extra keys are allowed: checks add derived ones)."""
    hints = get_type_hints(shape)
    out = [f"missing key {k!r}" for k in sorted(shape.__required_keys__) if k not in facts]
    for key, tp in hints.items():
        if key in facts and not _accepts(tp, facts[key]):
            out.append(f"{key!r} is {type(facts[key]).__name__}, declared {tp}")
    return out
