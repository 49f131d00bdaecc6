"""Finding codes of the Triton layer (FAILURE_MODES.md section 2).

Parameters the checks fill in (a command whose parameters are missing is left out):
``triton_version``, ``triton_pin``, ``triton_requirement`` (``triton==3.6.0`` or ``triton``),
``torch_version``, ``cache_dir``, ``py_mm`` (``3.12``), ``arch`` (``sm_90``).
"""

from ..model import Severity
from . import Code

#: C toolchain Triton compiles its helpers with: compiler, libc headers (and Python.h)
_BUILD_PACKAGES = {
    "apt": "gcc libc6-dev python{py_mm}-dev",
    "dnf": "gcc glibc-devel python{py_mm}-devel",
    "yum": "gcc glibc-devel python{py_mm}-devel",
    "apk": "gcc musl-dev python3-dev",
    "zypper": "gcc glibc-devel python{py_nodot}-devel",
    "pacman": "gcc",
    "conda": "-c conda-forge c-compiler",
}

CODES = (
    Code(
        code="triton-not-installed",
        layer="triton",
        severity=Severity.BLOCKING,
        title="Triton is missing although torch is a CUDA build",
        meaning="torch is a CUDA (or ROCm) build, but no Triton distribution is installed. torch.compile "
                "(Inductor) and every library of Triton kernels (flash-linear-attention, Liger, Unsloth, ...) import "
                "triton: they fail with `ModuleNotFoundError: No module named 'triton'`, or quietly fall back to slow "
                "paths (transformers' gated-delta-net models use their reference PyTorch code).",
        fix="Install the Triton release this torch pins (torch's own metadata names it, e.g. torch 2.10 and 2.11 "
            "pin triton 3.6.0). On Linux x86_64 `pip install torch` brings it; installing torch with `--no-deps` or "
            "from a custom index may not.",
        packages={"pip": "{triton_requirement}"},
        links=("https://pytorch.org/get-started/locally/",),
    ),
    Code(
        code="triton-import-failed",
        layer="triton",
        severity=Severity.BLOCKING,
        title="`import triton` fails",
        meaning="The triton package is installed but importing it raises (a broken or partial install, a wheel for "
                "another Python or CPU, a missing shared library such as libtriton). Everything that uses Triton "
                "fails the same way.",
        fix="Reinstall the Triton release this torch expects, replacing the files that are there. The evidence "
            "shows the exception raised by `import triton`.",
        packages={"pip": "--force-reinstall --no-deps {triton_requirement}"},
        commands=(("shell", "{python} -c \"import triton; print(triton.__version__, triton.__file__)\""),),
    ),
    Code(
        code="triton-torch-version-mismatch",
        layer="triton",
        severity=Severity.DEGRADED,
        title="Triton is not the version torch pins",
        meaning="torch declares the Triton it was built with (`Requires-Dist: triton==X` in its metadata) but "
                "another release is installed (usually a later `pip install triton`, or a library that requires "
                "another Triton). torch's Inductor generates code against the internals of the Triton it pins and "
                "is only tested with it: with "
                "another release torch.compile commonly fails with ImportError or AttributeError on triton internals, "
                "or produces kernels that fail to compile. Libraries that only use `@triton.jit` usually keep working, "
                "so this is reported as degraded.",
        fix="Put back the Triton release torch pins, or move torch to the release that pins the Triton you need.",
        packages={"pip": "{triton_requirement}"},
        links=("https://github.com/huggingface/sentence-transformers/issues/3557",),
    ),
    Code(
        code="triton-no-active-driver",
        layer="triton",
        severity=Severity.BLOCKING,
        title="Triton sees no active GPU driver",
        meaning="Creating Triton's driver raised `RuntimeError: 0 active drivers ([]). There should only be one.` "
                "Triton's NVIDIA backend is active only when `torch.cuda.is_available()` is true (Triton 3.8+ without "
                "torch imported: when ctypes `cuInit` and `cuDeviceGetCount` succeed). The same message appears on a "
                "machine without a GPU, with a CPU-only torch, with `CUDA_VISIBLE_DEVICES=` (empty), a driver too old "
                "for torch's CUDA, or a missing /dev/nvidia-uvm: the message alone cannot tell them apart; the torch "
                "and GPU checks say which it is. FLA hides this error behind its 'roll back to CPU' warning, and every "
                "Triton kernel launch raises it.",
        fix="Fix the torch CUDA problem reported as the root cause (see torch.cuda). If `CUDA_VISIBLE_DEVICES` is "
            "set to an empty or invalid value, unset it. On a machine that really has no GPU, do not use "
            "Triton-based code paths.",
        commands=(
            ("shell", "{python} -c \"import torch; print(torch.__version__, torch.version.cuda, "
                      "torch.cuda.is_available())\""),
            ("shell", "echo \"CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES-<unset>}}\""),
        ),
        links=("https://github.com/deepseek-ai/DeepSeek-R1/issues/493",
               "https://github.com/huggingface/sentence-transformers/issues/3557"),
    ),
    Code(
        code="triton-driver-init-failed",
        layer="triton",
        severity=Severity.BLOCKING,
        title="Triton's CUDA driver cannot be created",
        meaning="`triton.runtime.driver.active` raised something other than '0 active drivers'. Creating the CUDA "
                "driver compiles (or loads from the cache) Triton's `cuda_utils` C helper, which needs a C compiler, "
                "Python.h, libc headers and `libcuda.so.1` listed by `/sbin/ldconfig -p` (or TRITON_LIBCUDA_PATH). "
                "Typical texts: `Failed to find C compiler. Please specify via CC environment variable or set "
                "triton.knobs.build.impl.`, `CalledProcessError` from the compiler, `AssertionError: libcuda.so "
                "cannot found!`. Triton retries (and fails) on every access; FLA swallows it into 'roll back to CPU'.",
        fix="Act on the evidence: no compiler -> install gcc (or export CC); CalledProcessError -> read the "
            "compiler's stderr (missing Python.h or libc headers); `libcuda.so cannot found` -> run `ldconfig` as "
            "root or export TRITON_LIBCUDA_PATH to the directory that holds libcuda.so.1.",
        packages=_BUILD_PACKAGES,
        commands=(("shell", "TRITON_CACHE_DIR=$(mktemp -d) {python} -c \"import triton; "
                            "print(triton.runtime.driver.active.get_current_target())\""),),
        links=("https://github.com/Comfy-Org/ComfyUI/issues/5216",),
    ),
    Code(
        code="triton-build-failed",
        layer="triton",
        severity=Severity.BLOCKING,
        title="Triton cannot compile its C helpers",
        meaning="Triton's own build function (`triton.runtime.build`) failed to compile and load a tiny C extension "
                "with an empty cache. Triton builds the `cuda_utils` helper this way when it first creates its CUDA "
                "driver, and (Triton 3.6 and older) one `__triton_launcher` module per kernel signature. With an "
                "empty cache (a new container, another Python, a cleared ~/.triton) every Triton kernel, FLA op and "
                "torch.compile fails. The evidence holds Triton's exception and the compiler's stderr.",
        fix="Fix the toolchain problem shown as the root cause (no C compiler, no libc headers, no Python.h); "
            "without one, read the compiler's stderr in the evidence. Install a C compiler with the C library and "
            "Python development headers:",
        packages=_BUILD_PACKAGES,
        commands=(("shell", "stackpeel check --python {python} --only triton.build -v"),),
        links=("https://github.com/Comfy-Org/ComfyUI/issues/5216",),
    ),
    Code(
        code="triton-kernel-failed",
        layer="triton",
        severity=Severity.BLOCKING,
        title="A tiny Triton kernel fails to compile or launch",
        meaning="Triton's driver works, but compiling or launching a 10-line `@triton.jit` kernel with an empty cache "
                "raised. Typical texts: `PTXASError` with `ptxas fatal : Value 'sm_121a' is not defined for option "
                "'gpu-name'` (the bundled ptxas is older than the GPU), `Unsupported .version` (ptxas too old for "
                "the PTX), `device kernel image is invalid` (a driver older than Triton's ptxas), `Cannot find ptxas` "
                "(missing or not executable), or `Failed to find C compiler` while building a launcher (Triton <= "
                "3.6). Every Triton kernel in the process fails the same way.",
        fix="Act on the evidence: ptxas does not know the arch -> upgrade Triton (>= 3.3 for sm_100/sm_120, >= 3.6 "
            "for sm_103/sm_121, >= 3.7 for sm_110) or point TRITON_PTXAS_BLACKWELL_PATH (arch >= 90 on Triton 3.9, "
            ">= 100 before) at a newer CUDA ptxas; kernel image invalid -> upgrade the NVIDIA driver (R580+ for "
            "CUDA 13 cubins); ptxas not executable -> `chmod +x` the files in triton/backends/nvidia/bin.",
        commands=(("shell", "stackpeel check --python {python} --only triton.kernel_launch -v"),),
    ),
    Code(
        code="triton-wrong-result",
        layer="triton",
        severity=Severity.BLOCKING,
        title="A Triton kernel ran but computed a wrong result",
        meaning="A vector-add kernel compiled and launched without error but the output differs from the exact "
                "expected values. Causes seen in the field: a stale or foreign cubin in the Triton cache, "
                "`TRITON_INTERPRET` or debugging knobs left set, a miscompile in this Triton for this GPU, or a "
                "faulty GPU (ECC errors). Models would train or infer on garbage without any error.",
        fix="Retry with an empty cache; if the result is still wrong, check the GPU for ECC/Xid errors "
            "(`nvidia-smi -q -d ECC`, `dmesg | grep -i xid`) and try another Triton release.",
        commands=(("shell", "TRITON_CACHE_DIR=$(mktemp -d) stackpeel check --python {python} --only "
                            "triton.kernel_launch -v"),
                  ("shell", "nvidia-smi -q -d ECC")),
    ),
    Code(
        code="triton-warm-cache-hides-compiler",
        layer="triton",
        severity=Severity.DEGRADED,
        title="Triton works only because its cache is warm",
        meaning="With an empty cache Triton fails for want of a C compiler, but the user's cache "
                "(TRITON_CACHE_DIR, default ~/.triton/cache) holds "
                "`cuda_utils` (and launchers) built earlier, so today's runs work. This is a latent failure: a new "
                "kernel signature (Triton <= 3.6: e.g. an int argument equal to 1, `None` instead of a tensor, a "
                "value past 2**31), a new container, another Python, a missing `file` program (it changes the cache "
                "key) or a cleared cache will fail with `Failed to find C compiler`. Reported as blocking when a new "
                "kernel signature was shown to fail right now (Triton <= 3.6), as degraded otherwise (Triton >= 3.7 "
                "never compiles C again while the `cuda_utils` entry's key stays the same).",
        fix="Install a C compiler (with libc and Python headers) in the image that runs the jobs, or export CC to "
            "one. If the runtime image must stay compiler-free: use Triton >= 3.7, ship the warmed cache, and keep "
            "its key stable (same Python, same venv path, `file` installed in both images).",
        packages=_BUILD_PACKAGES,
        commands=(("shell", "ls {cache_dir}/*/cuda_utils*.so {cache_dir}/*/__triton_launcher*.so"),),
        links=("https://github.com/Comfy-Org/ComfyUI/issues/5216",),
    ),
    Code(
        code="triton-cache-stale-arch",
        layer="triton",
        severity=Severity.BLOCKING,
        title="Cached Triton binaries do not fit this GPU or driver",
        meaning="Kernels loaded from the Triton cache fail with `RuntimeError: Triton Error [CUDA]: device kernel "
                "image is invalid` (or `no kernel image is available`): the cache was built elsewhere (copied from "
                "another machine, shared over NFS between GPU generations, built with TRITON_OVERRIDE_ARCH or by a "
                "ptxas newer than this driver accepts). An empty cache compiles correctly.",
        fix="Clear the cache, or give each machine its own TRITON_CACHE_DIR.",
        commands=(("shell", "rm -rf {cache_dir}"),
                  ("shell", "export TRITON_CACHE_DIR=$HOME/.triton/cache-$(hostname)")),
        links=("https://github.com/fla-org/flash-linear-attention/issues/3",),
    ),
    Code(
        code="gpu-arch-lacks-dtype",
        layer="triton",
        severity=Severity.BLOCKING,
        title="The GPU architecture lacks a data type the kernel uses",
        meaning="A Triton kernel uses a type this GPU cannot execute: bf16 before Ampere (sm_80: V100, T4), "
                "fp8e4nv before sm_89 (`type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
                "('fp8e4b15', 'fp8e5')`), TF32 before Ampere. The kernel does not compile on this GPU.",
        fix="Run the model in a type this GPU supports (float16 or float32 instead of bfloat16 or fp8), or use a "
            "newer GPU.",
    ),
    Code(
        code="shared-memory-too-small",
        layer="triton",
        severity=Severity.BLOCKING,
        title="A Triton kernel needs more shared memory than the GPU has",
        meaning="`triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: N, Hardware limit: "
                "M`: the kernel's block sizes and pipeline stages were tuned for a GPU with more shared memory (A100 "
                "164 KB, H100 228 KB) than this one (consumer GPUs: about 100 KB). FLA picks its tile sizes at "
                "import from the shared memory Triton reports; if Triton failed at import it falls back to defaults.",
        fix="Use smaller block sizes or fewer `num_stages` (for library kernels, upgrade the library or report the "
            "GPU to its authors); make sure Triton initialises correctly before FLA is imported.",
    ),
)
