"""rev32fix: what the merge review of lead32 found (docs/dev/rev32fix.md), one block per item.
Each block is realistic near-miss text run through explain (or a check's finding on facts), that
failed before its fix."""

from __future__ import annotations

import pytest

from test_explain_patterns import codes_of as _codes


# -- item 2: a TORCH_CUDA_ARCH_LIST setting is read only beside torch's 'no kernel image'
#
# torch/utils/cpp_extension.py compiles an extension for the architectures of
# TORCH_CUDA_ARCH_LIST; torch's own wheels never read it. The setting is local evidence: a
# `docker run -e TORCH_CUDA_ARCH_LIST=...` line or an environment dump far above a plain torch
# traceback says nothing about which binary lacked the kernel (the refinement is `local = true`:
# it is not read on the log's clue lines).

_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
_TORCH_TB = ("Traceback (most recent call last):\n"
             '  File "/app/infer.py", line 12, in <module>\n'
             '    x = torch.randn(4, 4, device="cuda") @ w\n'
             f"{_NO_KERNEL}\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the "
             "stacktrace below might be incorrect.\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")


def test_arch_list_far_from_torchs_error_keeps_torchs_reading():
    for head in ('$ docker run --gpus all -e TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0" myimage python infer.py\n'
                 "Loading model...\n",
                 "Running on WSL2, TORCH_CUDA_ARCH_LIST is unset\n"
                 + "".join(f"step {i} done\n" for i in range(6)),
                 "NVIDIA_PYTORCH_VERSION=24.01 TORCH_CUDA_ARCH_LIST=5.2 6.0 6.1 7.0 7.5 8.0 8.6 9.0+PTX "
                 "CUDA_VERSION=12.3 (inside the docker container)\n"
                 + "".join(f"step {i} done\n" for i in range(6))):
        codes = _codes(head + _TORCH_TB)
        assert codes[:1] == ["torch-arch-not-supported"], (head, codes)
        assert "extension-arch-missing" not in codes[:1]


def test_arch_list_beside_the_error_still_names_the_extension():
    # the apex#1051 shape: the setting, one line of prose, the error
    text = ('export TORCH_CUDA_ARCH_LIST="7.5"\n'
            "But when I run the code, the following situation appears:\n"
            f"{_NO_KERNEL}\n")
    assert _codes(text)[:1] == ["extension-arch-missing"]
    # CMAKE_CUDA_ARCHITECTURES keeps its reading from anywhere in the log (a clue of the code)
    far = ("-- CMAKE_CUDA_ARCHITECTURES: 70;75\n" + "".join(f"step {i} done\n" for i in range(6))
           + _TORCH_TB)
    assert _codes(far)[:1] == ["extension-arch-missing"]


def test_local_refine_flag_is_read_and_checked(tmp_path):
    from stackpeel import knowledge
    rules = [r for s in knowledge.load().signatures() if s.id == "no-kernel-image" for r in s.refine]
    assert [(r.context, r.code) for r in rules if r.local] == [
        (r"\b(?:CUDA|Cuda) error\(\d{1,3}\),", "framework-gpu-arch-unsupported"),  # Paddle's own wording, harv43c
        (r"\bTORCH_CUDA_ARCH_LIST\b", "extension-arch-missing")]
    # a `local` that is no boolean is refused, naming the file and the code
    path = tmp_path / "toolchain.toml"
    path.write_text('[a-code]\nlayer = "toolchain"\nkind = "root"\nseverity = "blocking"\ntitle = "A title"\n'
                    'meaning = "What is true and why it matters, long enough to read."\nfix = "Do this."\n'
                    '[[a-code.log]]\nid = "x"\npatterns = ["some text"]\n'
                    'refine = [{context = "ctx words", code = "a-code", local = "yes"}]\n')
    knowledge.load.cache_clear()
    try:
        with pytest.raises(knowledge.KnowledgeError, match=r"toolchain\.toml \[a-code\].*refine entries"):
            knowledge.load((str(path),))
    finally:
        knowledge.load.cache_clear()


# -- item 3: the driver mount off LD_LIBRARY_PATH (tools32's libcuda_off_path)
#
# The off-path reading is for a loader that found no libcuda.so.1 ('cannot open shared object
# file'); a libcuda that was found and is broken (an ELF error, a missing symbol) is another
# problem. The probe reads /usr/local/nvidia/lib64 only: /usr/local/nvidia/lib is nvidia-docker
# 1's 32-bit directory. The platform mounted the driver, so the finding offers no package.

from test_gpu_layers import _cuda_facts, evaluate, fake_driver_mount, load_probe  # noqa: E402
from stackpeel.checks import cuda as cuda_checks  # noqa: E402

_CANNOT_OPEN = "libcuda.so.1: cannot open shared object file: No such file or directory"


def test_the_32_bit_driver_directory_is_no_off_path_mount(tmp_path):
    probe = load_probe("cuda_driver")
    root = fake_driver_mount(tmp_path, "usr/local/nvidia/lib")
    assert probe.mounted_off_path(root, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}) is None
    facts = probe.driver_api_facts(library="libstackpeel-absent.so.1", root=root,
                                   env={"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"})
    assert facts["libcuda_off_path"] is None


@pytest.mark.parametrize("err", [
    "/usr/local/nvidia/lib64/libcuda.so.1: invalid ELF header",
    "/usr/local/nvidia/lib64/libcuda.so.1: wrong ELF class: ELFCLASS32",
    "/usr/local/nvidia/lib64/libcuda.so.1: undefined symbol: nvRmGpuLibOpen",
])
def test_a_libcuda_that_was_found_is_not_read_as_off_path(err):
    facts = _cuda_facts(libcuda_loaded=False, container="kubernetes", kernel_driver_version="570.133.20",
                        load_error=err, libcuda_off_path="/usr/local/nvidia/lib64")
    v = evaluate(cuda_checks.DriverApi, facts)
    assert [f.code for f in v.findings] != [] and "LD_LIBRARY_PATH does not name" not in v.findings[0].message
    cmds = " ".join(c.command for c in v.findings[0].remedy.commands)
    assert "export LD_LIBRARY_PATH" not in cmds


def test_the_off_path_finding_offers_no_package_and_keeps_the_path():
    facts = _cuda_facts(libcuda_loaded=False, container="kubernetes", kernel_driver_version="570.133.20",
                        load_error=_CANNOT_OPEN, libcuda_off_path="/usr/local/nvidia/lib64")
    f = evaluate(cuda_checks.DriverApi, facts).findings[0]
    assert f.code == "libcuda-missing" and "LD_LIBRARY_PATH does not name" in f.message
    assert [c.command for c in f.remedy.commands if c.kind == "install"] == []
    assert not any("libnvidia-compute" in c.command or "nvidia-driver-cuda-libs" in c.command
                   for c in f.remedy.commands)
    assert any(c.command.startswith("export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
               for c in f.remedy.commands)
    # without the mount, the plain reading still offers the driver's package on a known host
    plain = _cuda_facts(libcuda_loaded=False, container="none", kernel_driver_version="570.133.20",
                        load_error=_CANNOT_OPEN)
    g = evaluate(cuda_checks.DriverApi, plain).findings[0]
    assert g.code == "libcuda-missing" and "LD_LIBRARY_PATH does not name" not in g.message
    assert "libnvidia-compute-570" in " ".join(c.command for c in g.remedy.commands)


# -- item 4: waifu2x-caffe's 'cuDNN cannot be used' dialog, not torch's healthy cuDNN V8 warning
#
# waifu2x-caffe bin/lang/english.json: "MessagecuDNNNotFindError":"cuDNN cannot be used\r\n[%s]not
# found", "...OldVersionError":"cuDNN cannot be used\r\n[%s]is an older version. Please use v2",
# "...CannotCreateError":"cuDNN cannot be used\r\ncFailed to initialize cuDNN", "...DefautlError":
# "cuDNN cannot be used". torch's TORCH_WARN_ONCE (aten/src/ATen/native/Convolution.cpp) only says
# a large convolution takes another path.

_TORCH_CUDNN_WARN = (
    "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py:456: UserWarning: cuDNN cannot be used for "
    "large non-batch-splittable convolutions if the V8 API is not enabled or before cuDNN version 9.3+. "
    "Consider upgrading cuDNN and/or enabling the V8 API for better efficiency. (Triggered internally at "
    "../aten/src/ATen/native/Convolution.cpp:414.)\n"
    "  return F.conv2d(input, weight, bias, self.stride,\n")


def test_torchs_cudnn_v8_warning_is_no_unusable_cudnn():
    assert "cudnn-unusable" not in _codes(_TORCH_CUDNN_WARN)
    oom = _TORCH_CUDNN_WARN + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 20.00 GiB is free.\n")
    codes = _codes(oom)
    assert codes[:1] == ["gpu-out-of-memory"] and "cudnn-unusable" not in codes


@pytest.mark.parametrize("text", [
    "cuDNN cannot be used\n[cudnn64_7.dll]not found\n",
    "cuDNN cannot be used\n[cudnn64_8.dll]is an older version. Please use v2\n",
    "cuDNN cannot be used\ncFailed to initialize cuDNN\n",
    "Error: cuDNN cannot be used\n",
    "I click Check cuDNN and get: cuDNN cannot be used [cudnn64_7.dll]not found\n",
])
def test_waifu2x_dialog_still_names_unusable_cudnn(text):
    assert _codes(text)[:1] == ["cudnn-unusable"]


# -- item 5: triton-windows' 'Failed to find MSVC.' / 'Failed to find Windows SDK.' is a warning
#
# woct0rdho/triton-windows python/triton/windows_utils.py find_msvc / find_winsdk:
# warnings.warn("Failed to find MSVC.") (release/3.0.x: print("WARNING: Failed to find MSVC.")),
# called by runtime/build.py only when the compiler is cl / clang-cl; the compile may still pass
# and runs go on. The signature is `warning = true`: it names windows-compiler-unusable only where
# another line of the log shows a failure.

from stackpeel.explain import explain_text  # noqa: E402
from test_explain_patterns import WRAPPERS  # noqa: E402

_MSVC_WARNINGS = [
    "C:\\Users\\me\\venv\\Lib\\site-packages\\triton\\windows_utils.py:173: UserWarning: Failed to find MSVC.",
    "C:\\Users\\me\\venv\\Lib\\site-packages\\triton\\windows_utils.py:272: UserWarning: Failed to find "
    "Windows SDK.",
    "WARNING: Failed to find MSVC.",
]
_CL_FAILED = ("subprocess.CalledProcessError: Command '['cl', 'main.c', '/nologo', '/O2', '/LD', "
              "'/IC:\\\\Python312\\\\Include']' returned non-zero exit status 2.")


@pytest.mark.parametrize("warning", _MSVC_WARNINGS)
def test_a_run_that_goes_on_after_the_msvc_warning_is_healthy(warning):
    text = (f"{warning}\n"
            '  warnings.warn("Failed to find MSVC.")\n'
            "100%|##########| 20/20 [00:12<00:00,  1.60it/s]\n"
            "Prompt executed in 14.2 seconds\n")
    expl = explain_text(text)
    assert len(expl.candidates) == 0 and expl.root is None
    assert int(expl.exit_code) == 0


def test_an_unrelated_failure_after_the_warning_keeps_its_own_root():
    text = (f"{_MSVC_WARNINGS[1]}\n"
            "100%|##########| 20/20 [00:12<00:00,  1.60it/s]\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 8.00 GiB of which 0 bytes is free.\n")
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


@pytest.mark.parametrize("warning", _MSVC_WARNINGS)
@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_the_warning_beside_the_failed_compile_names_the_compiler(warning, wrapper):
    text = WRAPPERS[wrapper](f"{warning}\n{_CL_FAILED}")
    expl = explain_text(text)
    assert [c.code for c in expl.candidates][:1] == ["windows-compiler-unusable"], (wrapper, text)
    assert int(expl.exit_code) == 1


# -- item 6: the two NVML rules read the same list of old names and the same object name
#
# nvml-symbol-undefined (old driver) excludes, in a lookahead, the NVML names every supported
# driver exports; nvml-not-linked's loader-undefined-old-nvml-symbol matches exactly those names.
# The list is written in both patterns: they must stay equal. Both leave the driver's own library
# ('libnvidia-ml\.so[\w.]{0,20}: ', ctypes' dlsym) to the old-driver reading.

import re  # noqa: E402

from stackpeel import knowledge as _kb  # noqa: E402


def _nvml_patterns():
    sigs = {s.id: s for s in _kb.load().signatures()}
    old_driver = [p for p in sigs["nvml-symbol-undefined"].patterns if "(?!nvml(?:" in p]
    not_linked = sigs["loader-undefined-old-nvml-symbol"].patterns
    assert len(old_driver) == 1 and len(not_linked) == 1
    return old_driver[0], not_linked[0]


def _names(pattern: str, opener: str) -> str:
    start = pattern.index(opener) + len(opener)
    return pattern[start:pattern.index(")(?![A-Z0-9_])", start)]


def test_the_old_nvml_names_are_one_list():
    old_driver, not_linked = _nvml_patterns()
    a = _names(old_driver, "(?!nvml(?:")
    b = _names(not_linked, "undefined symbol: nvml(?:")
    assert len(a) > 1000 and a == b


@pytest.mark.parametrize("suffix", ["", ".1", ".535.104.05", ".470.82.01", ".1.535", "." + "9" * 19])
def test_the_drivers_own_library_is_no_missing_link(suffix):
    line = (f"AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so{suffix}: undefined symbol: "
            "nvmlInit_v2")
    _, not_linked = _nvml_patterns()
    assert re.search(not_linked, line) is None
    codes = _codes(line + "\n")
    assert "nvml-not-linked" not in codes
    assert codes[:1] == ["nvml-function-missing-in-driver"]


def test_an_extension_without_the_link_still_names_it():
    line = ("ImportError: /opt/venv/lib/python3.10/site-packages/gpumon/_C.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: nvmlInit_v2\n")
    assert _codes(line)[:1] == ["nvml-not-linked"]


# -- item 7: extension-source-torch-api-removed also covers torch.utils.ffi (harv32b): its search
#    command finds the import in a build.py, and its meaning no longer says only the compiler stops

import subprocess  # noqa: E402

from stackpeel import remedies  # noqa: E402

_FFI_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "build.py", line 3, in <module>\n'
    "    from torch.utils.ffi import create_extension\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/utils/ffi/__init__.py", line 1, in <module>\n'
    '    raise ImportError("torch.utils.ffi is deprecated. Please use cpp extensions instead.")\n'
    "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.\n")


def test_the_search_command_finds_the_ffi_build_script(tmp_path):
    (tmp_path / "build.py").write_text(
        "from torch.utils.ffi import create_extension\n"
        'ffi = create_extension("_ext.nms", headers=["src/nms.h"])\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "nms_cuda.cu").write_text("#include <THC/THC.h>\nextern THCState *state;\n")
    (tmp_path / "README.md").write_text("Needs torch 0.4.1 (torch.utils.ffi).\n")
    cmds = [c.command for c in remedies.build("extension-source-torch-api-removed", {}).commands]
    assert len(cmds) == 1
    out = subprocess.run(cmds[0], shell=True, cwd=tmp_path, capture_output=True, text=True).stdout
    assert "build.py:1:from torch.utils.ffi import create_extension" in out
    assert "nms_cuda.cu:1:#include <THC/THC.h>" in out
    assert "README.md" not in out


def test_the_ffi_import_error_explains_an_import_stopping():
    expl = explain_text(_FFI_ERROR)
    top = expl.candidates[0]
    assert top.code == "extension-source-torch-api-removed"
    assert "at the compiler or the import" in top.explanation
