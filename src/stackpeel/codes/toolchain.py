"""Finding codes of the toolchain layer: what Triton needs to build its C helper
(``cuda_utils``), find libcuda, assemble PTX and cache its output, and what CUDA
extensions (causal-conv1d) need to build.

Params filled in by ``checks/toolchain.py`` (a command whose params are missing is left out):

- ``cc_path``: a plain ``cc`` (or a conda gcc) found where Triton does not look;
- ``cc_env``: the value of ``CC``;
- ``py_mm`` / ``py_nodot``: the target Python's version, "3.12" / "312";
- ``apt_dev`` / ``dnf_devel``: the header packages of a distro Python (absent for
  conda, pyenv, uv... whose headers no distro package provides);
- ``reinstall_cmd``: how to reinstall a conda / pyenv / uv Python that lost its headers;
- ``libcuda_dir``, ``cache_dir``, ``ptxas_path``, ``cuda_mm``, ``torch_cuda_mm``,
  ``torch_cuda_major``: observed values.
"""

from ..model import Severity
from . import Code

_TRITON = "https://github.com/triton-lang/triton"

CODES = (
    Code(
        code="no-c-compiler",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="No C compiler that Triton can find",
        meaning="CC is unset and neither gcc nor clang is on PATH (Triton never looks for a plain `cc`). "
                "Triton compiles a C helper (cuda_utils) the first time its CUDA driver is used, and on "
                "Triton <= 3.6 one launcher per kernel signature, so it raises `RuntimeError: Failed to find C "
                "compiler. Please specify via CC environment variable or set triton.knobs.build.impl.` FLA then "
                "hides this behind 'Triton is not supported on current platform, roll back to CPU', and "
                "torch.compile fails too. A warm Triton cache can hide it until a new kernel signature, a new "
                "container or a cleared cache.",
        fix="Install a C compiler (gcc, with the C library headers), or point CC at one that exists.",
        packages={"apt": "gcc libc6-dev", "dnf": "gcc glibc-devel", "yum": "gcc glibc-devel",
                  "apk": "gcc musl-dev", "zypper": "gcc glibc-devel", "pacman": "gcc",
                  "conda": "-c conda-forge c-compiler"},
        commands=(("shell", "export CC={cc_path}"),),
        links=("https://github.com/Comfy-Org/ComfyUI/issues/5216",),
    ),
    Code(
        code="c-compiler-broken",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="The C compiler Triton would use does not run",
        meaning="Triton takes CC as given (one program name, never split into words, never checked) or the gcc/"
                "clang it found on PATH, and runs it to build its helper. This compiler is missing, not "
                "executable, or fails even `--version`, so Triton's build dies with `FileNotFoundError` or "
                "`subprocess.CalledProcessError`, with the real reason only on the compiler's stderr.",
        fix="When CC is set, unset it or point it at a working compiler (`export CC=/usr/bin/gcc`); when the "
            "compiler found on PATH fails, reinstall it ({compiler_pkg}).",
        packages={"apt": "{compiler_pkg}", "dnf": "{compiler_pkg}", "yum": "{compiler_pkg}", "apk": "{compiler_pkg}",
                  "zypper": "{compiler_pkg}", "pacman": "{compiler_pkg}"},
        commands=(("shell", "unset CC  # was {cc_env}"),),
    ),
    Code(
        code="libc-headers-missing",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="C library headers or start files are missing",
        meaning="The compiler runs but cannot find the C library's headers (stdlib.h, dlfcn.h) or start files "
                "(crti.o, crt1.o): typical of gcc installed with --no-install-recommends. Triton's helper build "
                "fails with a bare `CalledProcessError ... returned non-zero exit status 1`; the cause is only on "
                "the compiler's stderr.",
        fix="Install the C library development package.",
        packages={"apt": "libc6-dev", "dnf": "glibc-devel glibc-headers", "yum": "glibc-devel glibc-headers",
                  "apk": "musl-dev", "zypper": "glibc-devel", "pacman": "glibc"},
    ),
    Code(
        code="python-headers-missing",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="Python.h is missing for this interpreter",
        meaning="Triton compiles its helper with -I<sysconfig include dir> (Debian's posix_local scheme read "
                "as posix_prefix; for a venv, the base interpreter's dir) and that dir has no Python.h, so the "
                "build fails with `fatal error: Python.h: No such file or directory` on the compiler's stderr "
                "and only `CalledProcessError` in Python. Distro Pythons keep the headers in a separate package "
                "(Debian/Ubuntu python3.X-dev, RHEL/Fedora python3.X-devel or python3-devel for the default "
                "python3); conda, pyenv, uv/python-build-standalone and the official python images ship them, "
                "so there a missing Python.h means a damaged install.",
        fix="Install the development headers of Python {py_mm}, the version this environment runs: the distro's "
            "development package for a distro Python; for conda, pyenv, uv and other self-contained Pythons, "
            "reinstall the interpreter.",
        packages={"apt": "{apt_dev}", "dnf": "{dnf_devel}", "yum": "{dnf_devel}", "apk": "python3-dev",
                  "zypper": "python{py_nodot}-devel", "pacman": "python"},
        commands=(("shell", "{reinstall_cmd}"),),
        links=("https://github.com/sgl-project/sglang/issues/1117",),
    ),
    Code(
        code="extension-build-failed",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="A minimal Python C extension does not build or load",
        meaning="Compiling and loading a tiny extension module with Triton's exact command "
                "(`$CC src.c -O3 -shared -fPIC -Wno-psabi -I<python include>`) failed for a reason other than "
                "missing headers: no assembler or linker (binutils), a compiler for another architecture, a "
                "wrapper that fails, or a .so that cannot be loaded. Triton's own build of cuda_utils fails the "
                "same way; the evidence is the compiler's stderr verbatim.",
        fix="Read the compiler's stderr in the evidence. A missing `as`/`ld` needs binutils; a bad CC needs "
            "`unset CC`; a cross compiler needs the native one.",
        packages={"apt": "build-essential", "dnf": "gcc binutils glibc-devel", "yum": "gcc binutils glibc-devel",
                  "apk": "build-base", "zypper": "gcc binutils glibc-devel", "pacman": "base-devel"},
    ),
    Code(
        code="libcuda-not-in-ldconfig",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="Triton cannot find libcuda.so.1",
        meaning="Triton does not ask the dynamic loader: it runs `/sbin/ldconfig -p`, keeps the lines naming "
                "libcuda.so.1, consults LD_LIBRARY_PATH only when there are none, and asserts that one of those "
                "directories holds libcuda.so.1. Here none does (absent from the cache, or the cache points to "
                "files that are gone), so Triton raises `AssertionError: libcuda.so cannot found!` at first use, "
                "even with a warm cache, while torch, which dlopens libcuda normally, may still work.",
        fix="Add the directory that holds libcuda.so.1 to the linker cache and refresh it (as root), or tell "
            "Triton where it is with TRITON_LIBCUDA_PATH (on WSL: /usr/lib/wsl/lib).",
        commands=(
            ("shell", "echo {libcuda_dir} | {sudo}tee /etc/ld.so.conf.d/zz-libcuda.conf && {sudo}/sbin/ldconfig"),
            ("shell", "export TRITON_LIBCUDA_PATH={libcuda_dir}"),
            ("shell", "{sudo}/sbin/ldconfig  # {refresh_reason}"),
        ),
        links=(f"{_TRITON}/pull/2019",),
    ),
    Code(
        code="ldconfig-missing",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="/sbin/ldconfig is missing",
        meaning="Triton runs the hard-coded `/sbin/ldconfig -p` to find libcuda.so.1 unless TRITON_LIBCUDA_PATH "
                "is set. Without it (distroless and some minimal images) the first use of Triton's CUDA driver "
                "raises `FileNotFoundError: [Errno 2] No such file or directory: '/sbin/ldconfig'`.",
        fix="Install ldconfig (it comes with the C library package), or set TRITON_LIBCUDA_PATH to the directory "
            "holding libcuda.so.1.",
        packages={"apt": "libc-bin", "dnf": "glibc", "yum": "glibc", "zypper": "glibc", "pacman": "glibc"},
        commands=(("shell", "export TRITON_LIBCUDA_PATH={libcuda_dir}"),),
    ),
    Code(
        code="triton-libcuda-path-wrong",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="TRITON_LIBCUDA_PATH does not hold libcuda.so.1",
        meaning="Triton trusts TRITON_LIBCUDA_PATH blindly and links its helper with `-l:libcuda.so.1 "
                "-L$TRITON_LIBCUDA_PATH`. This directory has no libcuda.so.1 (the classic case is "
                "/usr/local/cuda/lib64/stubs, which holds only the link-time stub libcuda.so), so the build "
                "fails with `cannot find -l:libcuda.so.1` from ld and a bare CalledProcessError. On Triton "
                "3.6/3.7 a warm cache hides this until the next cache miss.",
        fix="Unset TRITON_LIBCUDA_PATH to let Triton use the linker cache, or point it at the directory of the "
            "real driver library.",
        commands=(("shell", "unset TRITON_LIBCUDA_PATH"), ("shell", "export TRITON_LIBCUDA_PATH={libcuda_dir}")),
    ),
    Code(
        code="ptxas-unusable",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="The ptxas Triton would use cannot run",
        meaning="Triton runs `ptxas --version` for the cache key of every kernel, in every new process (even "
                "for cached kernels), and ptxas to assemble each new kernel. The one it would use here is "
                "missing, not executable (wheel unpacked without exec bits, site-packages on a noexec mount), "
                "or fails, so kernels fail with `RuntimeError: Cannot find ptxas` (or `ptxas-blackwell`) or "
                "`PermissionError: [Errno 13] Permission denied`. A TRITON_PTXAS_PATH / "
                "TRITON_PTXAS_BLACKWELL_PATH naming a missing file is silently replaced by the bundled ptxas.",
        fix="Restore the exec bit of Triton's bundled tools (or reinstall triton), remount site-packages with "
            "exec, or point the variable that applies to this GPU at a working ptxas.",
        commands=(("shell", "chmod +x {ptxas_path}"),
                  ("pip", "{python} -m pip install --force-reinstall --no-deps triton=={triton_version}"),
                  ("shell", "unset {override_var}")),
    ),
    Code(
        code="ptxas-arch-unsupported",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="ptxas does not know this GPU's architecture",
        meaning="The ptxas Triton picks for this GPU rejects `--gpu-name=sm_XXa`: the GPU is newer than the "
                "CUDA toolkit bundled with this Triton (for example sm_103/sm_121 before Triton 3.6, sm_110 "
                "before 3.7, or Thor reporting 10.1 on a CUDA 13 ptxas). Every kernel compile fails with "
                "`PTXASError: ... ptxas fatal : Value 'sm_XXXa' is not defined for option 'gpu-name'`, after a "
                "banner that dumps the whole PTX. TRITON_OVERRIDE_ARCH does not help: ptxas still gets the real arch.",
        fix="Upgrade Triton together with the torch release that pins it (>= 3.3 for sm_100/sm_120, >= 3.6 for "
            "sm_103/sm_121, >= 3.7 for sm_110), or point {ptxas_env} at a ptxas from a CUDA toolkit that knows "
            "this GPU (a command is given when one was found on this machine that accepts it).",
        commands=(("shell", "export {ptxas_env}={ptxas_alternative}"),),
    ),
    Code(
        code="ptxas-newer-than-driver",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="Triton's ptxas is newer than the driver",
        meaning="The ptxas Triton uses for this GPU comes from a newer CUDA major than the driver supports "
                "(cuDriverGetVersion). Cubins from a newer major toolkit use an ELF ABI the older driver cannot load "
                "(CUDA 13 ptxas: OS/ABI 41, ABI version 8), so the first launch fails with `RuntimeError: Triton "
                "Error [CUDA]: device kernel image is invalid`. Triton 3.9 uses its CUDA 13 ptxas for Hopper "
                "too; 3.7+ for Blackwell.",
        fix="Upgrade the NVIDIA driver (R580 or newer for CUDA 13), or point {ptxas_env} at a ptxas of the "
            "driver's CUDA major that knows this GPU (a command is given when one was found on this machine), or "
            "use a Triton whose ptxas matches the driver.",
        commands=(("shell", "export {ptxas_env}={ptxas_alternative}"),),
    ),
    Code(
        code="triton-cache-unusable",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="Triton's cache directory cannot be used",
        meaning="Triton writes every compiled kernel and its C helper under its cache directory "
                "(TRITON_CACHE_DIR, else $TRITON_HOME/.triton/cache, else ~/.triton/cache) and dlopens the helper "
                "from there. This directory cannot be created or written (read-only $HOME, "
                "readOnlyRootFilesystem, permissions, disk full), or sits on a noexec mount, so Triton fails "
                "with `OSError: [Errno 30] Read-only file system`, `PermissionError`, `Could not create or locate "
                "cache dir`, or `failed to map segment from shared object`.",
        fix="Point Triton at a writable directory on a mount that allows exec (in Kubernetes, an emptyDir volume).",
        commands=(("shell", "export TRITON_CACHE_DIR=/tmp/triton-cache-$(id -u)"),),
    ),
    Code(
        code="file-command-missing",
        layer="toolchain",
        severity=Severity.DEGRADED,
        title="The `file` program is missing: Triton's build cache key differs",
        meaning="Triton keys its compiled helpers with platform.architecture(), which runs `file`. Without "
                "`file` the key ends in '64bit,' instead of '64bit,ELF', so a warm cache built where `file` "
                "exists (most build images and CI) is cold here: Triton rebuilds its helper and needs a working "
                "C compiler at runtime, and fails where there is none.",
        fix="Install `file` in both the image that warms the cache and the runtime image (or in neither), or "
            "keep a C compiler in the runtime image.",
        packages={"apt": "file", "dnf": "file", "yum": "file", "apk": "file", "zypper": "file", "pacman": "file"},
    ),
    Code(
        code="nvcc-missing",
        layer="toolchain",
        severity=Severity.DEGRADED,
        title="No nvcc for building CUDA extensions",
        meaning="torch.utils.cpp_extension finds CUDA via CUDA_HOME/CUDA_PATH, then `nvcc` on PATH, then "
                "/usr/local/cuda, and none holds nvcc. Prebuilt wheels and Triton kernels work, but source builds "
                "of CUDA extensions fail: causal-conv1d's setup.py warns 'nvcc was not found' then crashes with "
                "`NameError: name 'bare_metal_version' is not defined`; FLA's TileLang backends need nvcc too.",
        fix="Install the CUDA compiler of torch's CUDA major ({torch_cuda_mm}) and set CUDA_HOME, or use prebuilt "
            "wheels (causal-conv1d: CAUSAL_CONV1D_SKIP_CUDA_BUILD=TRUE).",
        packages={"apt": "cuda-nvcc-{torch_cuda_pkg}", "dnf": "cuda-nvcc-{torch_cuda_pkg}",
                  "yum": "cuda-nvcc-{torch_cuda_pkg}", "conda": "-c nvidia cuda-nvcc={torch_cuda_mm}"},
        commands=(("shell", "export CUDA_HOME=/usr/local/cuda-{torch_cuda_mm}"),),
    ),
    Code(
        code="nvcc-torch-cuda-mismatch",
        layer="toolchain",
        severity=Severity.DEGRADED,
        title="nvcc's CUDA major differs from torch's",
        meaning="torch.utils.cpp_extension refuses to build a CUDA extension when nvcc's CUDA major differs "
                "from the one torch was built with: `RuntimeError('The detected CUDA version (%s) mismatches the "
                "version that was used to compilePyTorch (%s)...` (sic). Source builds of causal-conv1d and other "
                "extensions fail; prebuilt wheels still work.",
        fix="Use an nvcc of CUDA {torch_cuda_major}.x for extension builds (set CUDA_HOME to it), or install the "
            "torch build that matches nvcc {nvcc_version}.",
        packages={"apt": "cuda-nvcc-{torch_cuda_pkg}", "dnf": "cuda-nvcc-{torch_cuda_pkg}",
                  "yum": "cuda-nvcc-{torch_cuda_pkg}", "conda": "-c nvidia cuda-nvcc={torch_cuda_mm}"},
        commands=(("shell", "export CUDA_HOME=/usr/local/cuda-{torch_cuda_mm}"),),
    ),
    Code(
        code="nvcc-arch-unsupported",
        layer="toolchain",
        severity=Severity.BLOCKING,
        title="nvcc is older than the GPU architecture it is asked to build for",
        meaning="An extension build asked nvcc for an architecture its CUDA release does not know "
                "(`nvcc fatal : Unsupported gpu architecture 'compute_120'`, or `Value 'sm_121' is not defined for "
                "option 'gpu-architecture'`): sm_100/sm_120 need CUDA 12.8+, sm_103/sm_121 12.9+, sm_110 13.0+. The "
                "build fails before compiling anything.",
        fix="Install a CUDA toolkit new enough for the GPU (matching torch's CUDA major), or limit the build to "
            "architectures this nvcc knows with TORCH_CUDA_ARCH_LIST.",
        commands=(("shell", "nvcc --list-gpu-arch"),),
    ),
)
