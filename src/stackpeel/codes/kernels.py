"""Finding codes of the kernel libraries: flash-linear-attention, causal-conv1d and the
transformers fast path that binds them (FAILURE_MODES.md sections 3 to 5).

Parameters the checks fill in: ``fla_dists`` (the installed FLA distributions),
``torch_version``, ``cuda_major`` (``12``), ``triton_requirement``.
"""

from ..model import Severity
from . import Code

CODES = (
    Code(
        code="fla-cpu-fallback",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="flash-linear-attention fell back to CPU at import",
        meaning="At import, FLA (`fla/utils/hardware.py`, `get_available_device`) calls "
                "`triton.runtime.driver.active.get_current_target()`, catches any exception and only warns `Triton "
                "is not supported on current platform, roll back to CPU.` It then reports `device_platform == 'cpu'` "
                "and `IS_NVIDIA == False` (0.5.1+ also resets `device` to 'cuda', a contradictory state), freezes "
                "slow tile sizes, skips the Blackwell allocator, and every Triton-backed op (chunk_gated_delta_rule, "
                "FusedRMSNormGated, ShortConvolution...) raises the original Triton error at its first call. "
                "stackpeel recovers that swallowed exception by calling the same entry point.",
        fix="Fix the Triton or torch problem reported as the root cause (the swallowed exception in the evidence "
            "names it), then import fla again: there is no FLA setting that forces a device.",
        commands=(("shell", "TRITON_CACHE_DIR=$(mktemp -d) {python} -W always -c \"import triton, fla.utils as u; "
                            "print(u.device_platform); triton.runtime.driver.active.get_current_target()\""),),
        links=("https://github.com/sgl-project/sglang/issues/25549",
               "https://github.com/fla-org/flash-linear-attention"),
    ),
    Code(
        code="fla-missing-triton",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="flash-linear-attention is installed without torch or Triton",
        meaning="fla-core's only hard dependency is einops; torch and triton come with the `cuda` extra. "
                "`import fla` still succeeds (it treats a missing module as 'extension unavailable'), but `fla.utils`, "
                "`fla.ops` and `fla.layers` fail with `ModuleNotFoundError`, and transformers falls back to its slow "
                "reference code.",
        fix="Install FLA with its CUDA extra (it brings torch and triton), or install torch, which pulls the Triton "
            "it pins on Linux.",
        packages={"pip": "'fla-core[cuda]'"},
        links=("https://github.com/fla-org/flash-linear-attention#installation",),
    ),
    Code(
        code="fla-import-failed",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="`import fla.utils` fails",
        meaning="Importing flash-linear-attention's `fla.utils` raised something other than a missing torch or "
                "triton (a version conflict with torch or transformers, a broken install). Every FLA layer and every "
                "transformers model that binds FLA fails or falls back.",
        fix="Reinstall FLA at a release that supports the installed torch and transformers; the evidence shows "
            "the exception.",
        packages={"pip": "--force-reinstall {fla_dists}"},
    ),
    Code(
        code="causal-conv1d-import-failed",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="`import causal_conv1d` fails",
        meaning="causal-conv1d is installed but importing it raises. transformers 5.15+ silently (5.17+: claiming "
                "it 'is not installed') falls back to the slow PyTorch convolution; transformers <= 5.14 crashes when "
                "the model module is imported; FLA's ShortConvolution quietly uses its Triton version.",
        fix="Reinstall causal-conv1d against the torch that is installed (no build isolation, so it builds for "
            "this torch); the evidence shows the exception.",
        commands=(("shell", "{python} -m pip install --no-build-isolation --no-cache-dir --force-reinstall "
                            "causal-conv1d"),),
        links=("https://github.com/Dao-AILab/causal-conv1d/issues/9",),
    ),
    Code(
        code="causal-conv1d-torch-mismatch",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="causal-conv1d was built for another torch",
        meaning="The `causal_conv1d_cuda` extension was compiled against a different torch than the one installed "
                "(a plain `pip install causal-conv1d` builds in an isolated environment with whatever torch the index "
                "offers, and names the prebuilt wheel after that torch). The import fails with `undefined symbol: "
                "_ZN3c10...` (a C++ symbol of the other torch), or, when the version tag differs but the import "
                "works, the ABI is unchecked and may crash later.",
        fix="Rebuild it against the installed torch: install with `--no-build-isolation` (torch, ninja and an nvcc "
            "whose major version matches torch.version.cuda must be present), or pick the prebuilt wheel whose tag "
            "names this torch, CUDA major and C++ ABI.",
        commands=(("shell", "{python} -m pip install --no-build-isolation --no-cache-dir --force-reinstall "
                            "causal-conv1d"),),
        links=("https://github.com/Dao-AILab/causal-conv1d/issues/35",
               "https://github.com/state-spaces/mamba/issues/28"),
    ),
    Code(
        code="causal-conv1d-no-extension",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="causal-conv1d is installed without its CUDA extension",
        meaning="The `causal_conv1d` package is installed but its compiled `causal_conv1d_cuda` module is not "
                "(installed with CAUSAL_CONV1D_SKIP_CUDA_BUILD=TRUE after the prebuilt-wheel download failed: the "
                "install reports success and builds a pure-Python wheel). Import fails with `ModuleNotFoundError: No "
                "module named 'causal_conv1d_cuda'`.",
        fix="Reinstall and build the extension (needs nvcc matching torch's CUDA major; "
            "CAUSAL_CONV1D_FORCE_BUILD=TRUE avoids the network download):",
        commands=(("shell", "CAUSAL_CONV1D_FORCE_BUILD=TRUE {python} -m pip install --no-build-isolation "
                            "--no-cache-dir --force-reinstall causal-conv1d"),),
        links=("https://github.com/Dao-AILab/causal-conv1d/issues/9",),
    ),
    Code(
        code="extension-arch-missing",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="A compiled kernel extension has no code for this GPU",
        meaning="The extension imports but its first GPU call fails with `CUDA error: no kernel image is available "
                "for execution on the device`: it was compiled without SASS or PTX for this GPU's architecture "
                "(causal-conv1d hard-codes its gencodes: sm_103, sm_110 and sm_121 need nvcc >= 13.0, sm_100 and "
                "sm_120 nvcc >= 12.8).",
        fix="Rebuild the extension with an nvcc new enough for this GPU (and matching torch's CUDA major), or use a "
            "prebuilt wheel that covers the architecture.",
        commands=(("shell", "CAUSAL_CONV1D_FORCE_BUILD=TRUE {python} -m pip install --no-build-isolation "
                            "--no-cache-dir --force-reinstall causal-conv1d"),),
    ),
    Code(
        code="transformers-fast-path-unavailable",
        layer="kernels",
        severity=Severity.DEGRADED,
        title="transformers uses the slow reference path for gated-delta-net layers",
        meaning="On a machine where CUDA works, transformers bound one or more gated-delta-net functions "
                "(chunk_gated_delta_rule, causal_conv1d_fn...) to its reference PyTorch implementation because "
                "importing flash-linear-attention or causal-conv1d failed. 5.15-5.16 say nothing; 5.17+ log that the "
                "package 'is not installed' whatever the real exception was. Training and inference run, but much "
                "slower and with more memory; packed sequences (cu_seqlens) raise ValueError.",
        fix="Install (or repair) the package named in the message: the real reason is in the evidence.",
        packages={"pip": "{missing_packages}"},
        links=("https://github.com/RobTand/prismaquant/issues/4",
               "https://github.com/fla-org/flash-linear-attention#installation",
               "https://github.com/Dao-AILab/causal-conv1d"),
    ),
    Code(
        code="transformers-fla-on-cpu",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="transformers bound FLA kernels although CUDA is unavailable",
        meaning="transformers 5.15+ picks flash-linear-attention whenever `import fla` succeeds, without checking "
                "`torch.cuda.is_available()`. With CUDA unavailable FLA only warns 'roll back to CPU' at import, so "
                "the first gated-delta-net forward crashes inside Triton (`RuntimeError: 0 active drivers ([]). There "
                "should only be one.`, or `Failed to find C compiler` on a GPU machine without a compiler) instead of "
                "using the reference PyTorch path.",
        fix="Make CUDA available to torch (see the root cause), or on CPU-only deployments uninstall "
            "flash-linear-attention so transformers uses its PyTorch implementation.",
        commands=(("shell", "{python} -m pip uninstall -y flash-linear-attention fla-core"),),
    ),
    Code(
        code="extension-torch-mismatch",
        layer="kernels",
        severity=Severity.BLOCKING,
        title="A compiled extension was built for another torch",
        meaning="A CUDA extension (flash-attn, mamba-ssm, vLLM's _C, causal-conv1d...) fails to import with "
                "`undefined symbol: _ZN3c10...` / `_ZN2at...`: it was compiled against a different PyTorch (version "
                "or C++ ABI) than the one installed, typically after upgrading torch, or because pip's build "
                "isolation built it against another torch. Libraries that import it optionally then silently fall "
                "back to slower code.",
        fix="Reinstall the extension against the installed torch (with torch already installed, no build "
            "isolation), or install the prebuilt wheel whose name matches your torch, CUDA and C++ ABI.",
        commands=(("pip", "{python} -m pip install --no-build-isolation --no-cache-dir --force-reinstall "
                          "{package}"),),
        links=("https://github.com/state-spaces/mamba/issues/465",),
    ),
)
