"""harv28: a third unbiased harvest scored blind, and the general fixes its misses ask for
(docs/dev/harv28.md).

Twenty-six new training-side logs sampled in search order (not by family); explain named
nineteen first before any change. The misses the log itself can fix:
- nvidia-docker 1.x's own refusal to start a container whose CUDA is newer than the driver
  (``Error: unsupported CUDA version: driver 7.5 < image 8.0``), read by nothing (A1):
  ``driver-too-old-for-build``;
- numba's ``Driver missing function: cuInit``, read as an old driver: every driver library exports
  cuInit, so the library numba loaded as the driver (NUMBA_CUDA_DRIVER) is another one (A2):
  ``env-path-unusable``;
- the loader's own line naming the libcuda it resolved in the toolkit's ``stubs/`` directory, after
  a generic 'Call to cuInit results in UNKNOWN_CUDA_ERROR' (C1): ``libcuda-stub-loaded``;
- xFormers' 'No operator found' block in which the build has no CUDA at all, read as the flash op's
  'too old' capability reason (A2): ``xformers-no-cuda-ops``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "driver-too-old-for-build": [
        # nvidia-docker 1.x cudaSupported, as its wrapper prints it (floydhub/dl-docker#34)
        "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0",
        # the image label with a patch level (nvidia/cuda 8.0.61 and 9.0.176 images)
        "Error: unsupported CUDA version: driver 8.0 < image 9.0.176",
    ],
    "env-path-unusable": [
        # numba < 0.49 MISSING_FUNCTION_ERRMSG (numba/numba#3963)
        "numba.cuda.cudadrv.error.CudaDriverError: driver missing function: cuInit.",
        # numba >= 0.49 Driver._find_api
        "CudaDriverError: Driver missing function: cuInit",
    ],
    "libcuda-stub-loaded": [
        # ctypes' AttributeError carries dlerror's '<object>: undefined symbol: <name>' (numba/numba#8985)
        "AttributeError: /scratch/yhao24/opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef",
        # ldd resolving the driver library to the toolkit's stub
        "\tlibcuda.so.1 => /usr/local/cuda/lib64/stubs/libcuda.so.1 (0x00007f3c2a000000)",
    ],
}

# torch's autocast check (metavoice-src#27 on a Colab T4), which only resemblance named before
FAMILIES["gpu-arch-lacks-dtype"] = [
    "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
]

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_a_later_driver_function_missing_is_still_an_old_driver():
    # numba's own reading of a missing function ('Requires CUDA 9.0 or above'): a driver older
    # than the function; only cuInit, which every driver exports, means no driver library at all
    text = "numba.cuda.cudadrv.error.CudaDriverError: Driver missing function: cuDevicePrimaryCtxRelease\n"
    assert _codes(text)[:1] == ["driver-too-old-for-build"]
    text = "CudaDriverError: driver missing function: cuLinkAddData_v2.\n"
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_numba_driver_variable_naming_the_runtime_log():
    # numba/numba#3963: the error and the export line of the reporter's shell profile
    text = ("CudaDriverError: driver missing function: cuInit.\n\n"
            "export NUMBAPRO_CUDA_DRIVER=/usr/lib/cuda/lib64/libcudart.so\n")
    assert _codes(text)[:1] == ["env-path-unusable"]


def test_stub_named_by_the_loader_outranks_the_generic_cuinit_error():
    # numba/numba#8985: numba's generic cuInit failure, then the probe that shows the stub loaded
    text = ("Call to cuInit results in UNKNOWN_CUDA_ERROR\n\n"
            "python -c \"from ctypes import CDLL; CDLL('libcuda.so')._undef\"\n\n"
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            "AttributeError: /scratch/yhao24/opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef\n")
    assert _codes(text)[:1] == ["libcuda-stub-loaded"]


def test_stub_directory_at_link_time_is_no_stub_at_run_time():
    # linking against the stub is what it is for: a link line, a -L flag and the driver's own
    # libcuda resolved by ldd name no stub loaded at run time
    for text in ("g++ -o app main.o -L/usr/local/cuda/lib64/stubs -lcuda\n",
                 "/usr/bin/ld: warning: libcuda.so.1, needed by libggml-cuda.so, not found (try using -rpath or -rpath-link)\n",
                 "\tlibcuda.so.1 => /lib/x86_64-linux-gnu/libcuda.so.1 (0x00007f3c2a000000)\n"):
        assert "libcuda-stub-loaded" not in _codes(text), text


def test_newer_driver_than_image_is_no_error():
    # nvidia-docker only refuses an image newer than the driver; the reverse never prints, and a
    # prose sentence comparing versions without the tool's words names nothing
    text = "nvidia-docker | 2017/02/08 14:01:45 Error: unsupported CUDA version: driver 6.5 < image 8.0\n"
    assert _codes(text)[:1] == ["driver-too-old-for-build"]
    text = "the driver supports CUDA 12.2 and the image ships CUDA 11.8, so this works\n"
    assert "driver-too-old-for-build" not in _codes(text)


XFORMERS_NO_CUDA_T4 = (
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
    "     query       : shape=(40, 1564, 1, 64) (torch.float32)\n"
    "     key         : shape=(40, 1564, 1, 64) (torch.float32)\n"
    "     value       : shape=(40, 1564, 1, 64) (torch.float32)\n"
    "     attn_bias   : <class 'NoneType'>\n"
    "     p           : 0.0\n"
    "`fa2F@0.0.0` is not supported because:\n"
    "    xFormers wasn't build with CUDA support\n"
    "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
    "    dtype=torch.float32 (supported: {torch.bfloat16, torch.float16})\n"
    "    operator wasn't built - see `python -m xformers.info` for more info\n"
    "`cutlassF` is not supported because:\n"
    "    xFormers wasn't build with CUDA support\n"
    "    operator wasn't built - see `python -m xformers.info` for more info\n"
)


def test_xformers_without_cuda_explains_the_flash_ops_capability_reason():
    # kijai/ComfyUI-SUPIR#167 on a T4: the flash op's 'too old' reason beside a build without CUDA
    assert _codes(XFORMERS_NO_CUDA_T4)[:1] == ["xformers-no-cuda-ops"]
    # prefixed, as a ComfyUI server log and a torchrun rank put it
    for prefix in ("[rank0]: ", "comfyui-1  | "):
        text = "".join(prefix + line + "\n" for line in XFORMERS_NO_CUDA_T4.splitlines())
        assert _codes(text)[:1] == ["xformers-no-cuda-ops"], prefix
    # quoted in markdown
    text = "".join("> " + line + "\n" for line in XFORMERS_NO_CUDA_T4.splitlines())
    assert _codes(text)[:1] == ["xformers-no-cuda-ops"]


def test_xformers_flash_op_too_old_alone_stays_the_gpu():
    # a working xFormers build on a T4 with inputs only the flash op could take: the capability
    # reason is the cause (camenduru-style block without the build line)
    text = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "     query       : shape=(1, 4096, 8, 160) (torch.float16)\n"
            "`flshattF@v2.3.6` is not supported because:\n"
            "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
            "`cutlassF` is not supported because:\n"
            "    attn_bias type is <class 'torch.Tensor'>\n")
    assert _codes(text)[:1] == ["flash-attn-arch-unsupported"]
