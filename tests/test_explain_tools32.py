"""tools32: the wordings earlier rounds left unread.

Every message is written as the program prints it (its raise site is named beside it); each runs
through every wrapper of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near
misses that must stay unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text

from test_explain_patterns import codes, family_tests, ids  # noqa: E402


# -- 5. an undefined NVML name every supported driver exports: the object was linked without
#    -lnvidia-ml (nvml-not-linked); a name added in a recent driver: the driver is older than it

NVML_OLD = [
    # glibc dl-lookup.c through Python's import of an extension built without -lnvidia-ml
    "ImportError: /opt/venv/lib/python3.10/site-packages/gpustat_ext/_nvml.cpython-310-x86_64-linux-gnu.so: "
    "undefined symbol: nvmlInit_v2",
    "ImportError: /usr/local/lib/python3.11/dist-packages/mylib/_C.so: undefined symbol: nvmlDeviceGetCount_v2",
    "OSError: /workspace/build/libmonitor.so: undefined symbol: nvmlDeviceGetHandleByIndex_v2",
    "./gpu_exporter: symbol lookup error: ./gpu_exporter: undefined symbol: nvmlDeviceGetMemoryInfo",
    "ImportError: /app/ext.so: undefined symbol: nvmlShutdown",
    "ImportError: /app/ext.so: undefined symbol: nvmlErrorString",
]

NVML_NEW = [
    # names later drivers added (R384, R510, R450): an old driver lacks them
    "./nvidia-device-plugin: symbol lookup error: ./nvidia-device-plugin: undefined symbol: nvmlDeviceGetPciInfo_v3",
    "ImportError: /app/ext.so: undefined symbol: nvmlDeviceGetComputeRunningProcesses_v3",
    "ImportError: /app/ext.so: undefined symbol: nvmlDeviceGetMemoryInfo_v2",
    "ImportError: /app/ext.so: undefined symbol: nvmlDeviceGetComputeRunningProcesses_v2",
    # ctypes' dlsym in the driver's own library: the library lacks the name, whatever it is
    "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: nvmlInit_v2",
]

# A terminal cut at column 80 inside the symbol's name was skipped here until fix32's paste
# joining: the three cut cases are now read like the others.
test_nvml_wordings_head_explain_in_every_wrapper, test_nvml_wordings_own_signature = family_tests({
    "nvml-not-linked": NVML_OLD, "nvml-function-missing-in-driver": NVML_NEW})


@pytest.mark.parametrize("line", NVML_OLD)
def test_an_old_nvml_name_is_read_by_the_loader_signature_alone(line):
    assert ids(line) == ["loader-undefined-old-nvml-symbol"]


@pytest.mark.parametrize("line", NVML_NEW)
def test_a_recent_nvml_name_keeps_the_old_driver_reading_alone(line):
    assert ids(line) == ["nvml-symbol-undefined"]


@pytest.mark.parametrize("line", [
    # a longer name that starts with an old one is no old name
    "ImportError: /app/ext.so: undefined symbol: nvmlDeviceGetNameFoo",
    "ImportError: /app/ext.so: undefined symbol: nvmlInit_v3",
])
def test_a_name_that_only_starts_like_an_old_one_is_not_read_as_unlinked(line):
    assert "loader-undefined-old-nvml-symbol" not in ids(line)
    assert codes(line)[:1] == ["nvml-function-missing-in-driver"]


def test_the_linkers_wording_keeps_its_own_signature():
    line = "ld.lld: error: undefined symbol: nvmlInit_v2"
    assert ids(line) == ["linker-undefined-nvml-symbol"]
    assert codes(line)[:1] == ["nvml-not-linked"]


@pytest.mark.parametrize("line", [
    "nvmlInit_v2 returned 0 (NVML_SUCCESS); 8 devices",
    "loaded symbol nvmlInit_v2 from /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
])
def test_an_nvml_name_without_the_loaders_words_stays_quiet(line):
    assert codes(line) == []


# -- 4. nvcc's `The -std=c++14 flag is not supported with the configured host compiler. Flag will be
#    ignored.` is no cause. nvcc passes -std=c++NN on to the host compiler with that compiler's dialect
#    option (CUDA Programming Guide, C++ Language Support: "invokes the host preprocessor, compiler and
#    linker with the corresponding C++ dialect option"); for a host compiler that has no such option
#    (MSVC has no C++11 mode and defaults to C++14; CMake's Compiler/NVIDIA.cmake: "MSVC requires c++14
#    as the minimum level") or that nvcc knows lacks it (gcc 4.8 and -std=c++14) it drops the flag,
#    says so and compiles on. The build goes on; where the dialect mattered, the compiler's own error
#    follows (torch's '#error C++17 or later compatible compiler is required', libstdc++'s
#    c++0x_warning.h) and that line is the reading

NVCC_STD = [
    "nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. Flag will be ignored.",
    "nvcc warning : The -std=c++17 flag is not supported with the configured host compiler. Flag will be ignored.",
    "nvcc warning : The -std=c++11 flag is not supported with the configured host compiler. Flag will be ignored.",
    # MSBuild's CUDA build customization prefixes the tool and suffixes the project
    "CUDACOMPILE : nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. "
    "Flag will be ignored. [P:\\src\\tiny-cuda-nn\\build\\src\\tiny-cuda-nn.vcxproj]",
]

WRAPPED = [(w, m) for m in NVCC_STD for w in ("plain", "torchrun-rank", "python-logging", "prose-quotes",
                                                "markdown-quote", "word-wrapped-80", "docker-json")]


@pytest.mark.parametrize("wrapper,line", WRAPPED)
def test_nvccs_dropped_std_flag_is_no_failure(wrapper, line):
    from test_explain_patterns import WRAPPERS
    expl = explain_text(WRAPPERS[wrapper](line) + "\n")
    assert expl.candidates == () and expl.exit_code == 0, [c.code for c in expl.candidates]


@pytest.mark.parametrize("line", NVCC_STD)
def test_no_signature_reads_the_dropped_flag(line):
    assert ids(line) == []


def test_the_compilers_own_error_after_it_is_the_reading():
    log = (NVCC_STD[0] + "\n"
           "/usr/local/lib/python3.10/dist-packages/torch/include/torch/csrc/api/include/torch/all.h:4:2: error: "
           "#error C++17 or later compatible compiler is required to use PyTorch.\n")
    assert codes(log)[:1] == ["extension-cxx-standard-too-old"]


def test_beside_a_failed_build_it_adds_no_cause():
    log = NVCC_STD[0] + "\nRuntimeError: Error compiling objects for extension\n"
    plain = codes("RuntimeError: Error compiling objects for extension\n")
    assert codes(log) == plain


# -- 2. harv31's leftovers: Lua Torch's cudnn.torch and triton-windows' MSVC lookup, by their own lines

test_harv31_leftovers_head_explain_in_every_wrapper, test_harv31_leftovers_own_signature = family_tests({
    # soumith/cudnn.torch ffi.lua (error([[...]]) when no libcudnn.so.N loads; the version check after it)
    "cudnn-unusable": [
        "/home/user/torch/install/share/lua/5.1/torch/init.lua:102: /home/user/torch/install/share/lua/5.1/"
        "cudnn/ffi.lua:1600: 'libcudnn (R4) not found in library path.",
        "/home/user/torch/install/bin/luajit: /home/user/torch/install/share/lua/5.1/cudnn/ffi.lua:1603: "
        "'libcudnn (R5) not found in library path.",
        "/home/user/torch/install/share/lua/5.1/cudnn/ffi.lua:1618: These bindings are for CUDNN 5.x (5005 <= "
        "cudnn.version > 6000) , while the loaded CuDNN is version: 6021",
    ],
    # woct0rdho/triton-windows' 'Failed to find MSVC.' / 'Failed to find Windows SDK.' is a warning
    # after which a run may go on: alone it names nothing (rev32fix); its lines, beside the failed
    # compile, are in tests/test_explain_rev32fix.py
})


@pytest.mark.parametrize("line,sig", [
    ("'libcudnn (R7) not found in library path.", "cudnn-torch-lua-library-not-found"),
    ("UserWarning: Failed to find MSVC.", "triton-windows-msvc-winsdk-not-found"),
])
def test_each_is_read_by_its_new_signature(line, sig):
    assert sig in ids(line)


@pytest.mark.parametrize("line", [
    # Rust's cc crate / other tools' own wordings, and Triton's own missing-compiler error
    "error: failed to find MSVC installation for target x86_64-pc-windows-msvc",
    "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
    # the Lua source line itself, and a cuDNN found
    "local libnames = {'libcudnn.so.5', 'libcudnn.5.dylib', 'cudnn64_5.dll'}",
    "Found Environment variable CUDNN_PATH = /usr/local/cuda/lib64/libcudnn.so.5",
])
def test_near_misses_are_not_read_by_the_new_signatures(line):
    assert not {"cudnn-torch-lua-library-not-found", "triton-windows-msvc-winsdk-not-found"} & set(ids(line))


def test_tritons_own_compiler_error_keeps_its_code():
    assert codes("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")[:1] == \
        ["no-c-compiler"]


# -- 2c. Triton 3.3.0 on consumer Blackwell (sm_120): getMMAVersionSafe knows no capability >= 11.0
#    (AccelerateMatmul.cpp, release/3.3.x at 3.3.0; fixed for 3.3.1 by triton PR 6771)

from stackpeel import combinations as combos  # noqa: E402

ASSERTION = ("python: /project/lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp:36: int mlir::triton::gpu::"
             "(anonymous namespace)::getMMAVersionSafe(int, DotOp): Assertion `false && \"computeCapability not "
             "supported\"' failed.")


def _combo_ids(versions, **kw):
    return {m.id for m in combos.match_combinations(versions, **kw)}


def test_triton_330_on_sm120_is_a_known_bad_combination():
    assert "triton-3.3.0-consumer-blackwell-mma" in _combo_ids({"triton": "3.3.0", "gpu_cc": "12.0"})
    assert "triton-3.3.0-consumer-blackwell-mma" in _combo_ids({"torch": "2.7.0+cu128", "triton": "3.3.0",
                                                               "gpu_cc": ["8.6", "12.0"]})


@pytest.mark.parametrize("versions", [
    {"triton": "3.3.1", "gpu_cc": "12.0"},      # the fix (torch 2.7.1's pin)
    {"triton": "3.4.0", "gpu_cc": "12.0"},
    {"triton": "3.3.0", "gpu_cc": "9.0"},       # Hopper: MMA v3
    {"triton": "3.3.0", "gpu_cc": "10.0"},      # datacenter Blackwell: MMA v5
])
def test_the_entry_stays_out_of_other_releases_and_gpus(versions):
    assert "triton-3.3.0-consumer-blackwell-mma" not in _combo_ids(versions)


def test_a_log_with_the_versions_and_the_assertion_names_the_combination():
    log = ("triton                    3.3.0\n"
           "torch                     2.7.0+cu128\n"
           "GPU 0: NVIDIA GeForce RTX 5090\n" + ASSERTION + "\nAborted (core dumped)\n")
    facts = combos.versions_from_text(log)
    assert facts.get("triton") == "3.3.0"
    assert "triton-3.3.0-consumer-blackwell-mma" in _combo_ids(facts, partial=True)
    # the line names the failure (Triton's compiler), the combination says which one it is and its fix
    expl = explain_text(log)
    assert [c.code for c in expl.candidates][:1] == ["triton-compiler-bug"]
    assert [(f.code, f.rule, f.confidence) for f in expl.fact_findings] == [
        ("triton-compiler-bug", "combination:triton-3.3.0-consumer-blackwell-mma", "high")]
    assert "triton 3.3.1" in expl.fact_findings[0].fix.lower()


def test_the_assertion_alone_reads_as_tritons_compiler_failing():
    assert codes(ASSERTION)[:1] == ["triton-compiler-bug"]


# -- 3. GKE mounts the driver in /usr/local/nvidia/lib64, which CUDA 12.8.1-12.9 images no longer put
#    on LD_LIBRARY_PATH: the check names the directory (probe: cuda_driver.mounted_off_path)

from test_gpu_layers import _cuda_facts, evaluate, fake_driver_mount, load_probe  # noqa: E402
from stackpeel.checks import cuda as cuda_checks  # noqa: E402


def test_the_probe_names_a_driver_mount_the_loader_is_not_told_about(tmp_path):
    probe = load_probe("cuda_driver")
    root = fake_driver_mount(tmp_path)
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}   # the CUDA 12.8.1 image's
    assert probe.mounted_off_path(root, env) == "/usr/local/nvidia/lib64"
    facts = probe.driver_api_facts(library="libstackpeel-absent.so.1", root=root, env=env)
    assert facts["libcuda_loaded"] is False and facts["libcuda_off_path"] == "/usr/local/nvidia/lib64"


@pytest.mark.parametrize("ld_path", ["/usr/local/nvidia/lib64:/usr/local/cuda/lib64",
                                     "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"])
def test_a_mount_on_the_path_is_no_hint(tmp_path, ld_path):
    root = fake_driver_mount(tmp_path)
    assert load_probe("cuda_driver").mounted_off_path(root, {"LD_LIBRARY_PATH": ld_path}) is None


def test_no_mount_no_hint(tmp_path):
    assert load_probe("cuda_driver").mounted_off_path(str(tmp_path), {}) is None


def test_the_check_says_where_the_driver_is_and_how_to_reach_it():
    facts = _cuda_facts(libcuda_loaded=False, container="kubernetes", kernel_driver_version="570.133.20",
                        load_error="libcuda.so.1: cannot open shared object file: No such file or directory",
                        libcuda_off_path="/usr/local/nvidia/lib64")
    v = evaluate(cuda_checks.DriverApi, facts)
    assert [f.code for f in v.findings] == ["libcuda-missing"]   # not container-toolkit-missing: it mounted it
    msg = v.findings[0].message
    assert "/usr/local/nvidia/lib64" in msg and "12.8.1" in msg and "570.133.20" in msg
    cmds = " ".join(c.command for c in v.findings[0].remedy.commands)
    assert "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" in cmds


def test_without_a_mount_the_container_reading_is_unchanged():
    facts = _cuda_facts(libcuda_loaded=False, container="kubernetes",
                        load_error="libcuda.so.1: cannot open shared object file: No such file or directory")
    v = evaluate(cuda_checks.DriverApi, facts)
    assert [f.code for f in v.findings] == ["container-toolkit-missing"]
    assert "/usr/local/nvidia" not in v.findings[0].message


# -- 1. ROCm: HSA_STATUS_ERROR_INVALID_ISA from ROCR-Runtime's two raise sites (a queue's
#    EC_QUEUE_PACKET_DISPATCH_REGISTER_SIZE_INVALID; an agent whose ISA the runtime does not know)

INVALID_ISA = [
    ":0:rocdevice.cpp            :2984: 6545699276902 us: [pid:196431 tid:0x7f2301dff640] Callback: Queue "
    "0x7f2301400000 aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is "
    "invalid. code: 0x100f",
    "Warning: Agent creation failed.\nThe GPU node has an unrecognized id.",
]

test_invalid_isa_heads_explain_in_every_wrapper, test_invalid_isa_own_signature = family_tests(
    {"rocm-gpu-arch-unsupported": INVALID_ISA})


@pytest.mark.parametrize("line", [
    # the status sentence alone: any HSA call that takes an ISA returns it (hsa.h), cause unstated
    "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
    # another queue status stays the unclassified fallback
    ":0:rocdevice.cpp            :2984: 6545699276902 us: [pid:1 tid:0x7f] Callback: Queue 0x7f2301400000 "
    "aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory "
    "beyond the largest legal address. code: 0x29",
    # HSA_STATUS_ERROR_INVALID_ISA_NAME is another status (hsa_isa_from_name)
    "Callback: Queue 0x7f2301400000 aborting with error : HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction "
    "set architecture name is invalid.",
])
def test_other_hsa_lines_are_not_read_as_the_isa(line):
    assert "hsa-invalid-isa" not in ids(line)
    assert "rocm-gpu-arch-unsupported" not in codes(line)[:1]
