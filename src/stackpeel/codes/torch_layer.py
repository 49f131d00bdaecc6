"""Finding codes of the torch layer: PyTorch's CUDA build, initialisation and GPU coverage.

``{torch_index}`` is the PyTorch wheel index (cu126, cu128, cu130...) that the check picks
for this machine's driver (cuDriverGetVersion) and GPUs; commands that need it are left
out when it is unknown.
"""

from ..model import Severity
from . import Code

_GET_STARTED = "https://pytorch.org/get-started/locally/"
_REINSTALL = ("{python} -m pip uninstall -y torch && "
              "{python} -m pip install torch --index-url https://download.pytorch.org/whl/{torch_index}")

CODES = (
    Code(
        code="torch-not-installed",
        layer="torch",
        severity=Severity.INFO,
        title="PyTorch is not installed in this environment",
        meaning="'import torch' would fail with ModuleNotFoundError: this interpreter has no torch "
                "distribution. Nothing that needs PyTorch (transformers models, FLA, causal-conv1d) can run here.",
        fix="Install the PyTorch wheel built for this machine's CUDA driver (the index URL selects the CUDA "
            "version: cu130 needs driver R580+, cu128 R570+, cu126 R560+); see the selector on pytorch.org.",
        commands=(("pip", "{python} -m pip install torch --index-url https://download.pytorch.org/whl/{torch_index}"),),
        links=(_GET_STARTED,),
    ),
    Code(
        code="torch-import-failed",
        layer="torch",
        severity=Severity.BLOCKING,
        title="'import torch' fails",
        meaning="The torch package is installed but importing it raises. Every library built on it fails "
                "the same way. Common causes: a CUDA library from the nvidia-* wheels is missing or of another "
                "version ('libcudnn.so.9: cannot open shared object file', 'undefined symbol'), a partially "
                "upgraded install, or a NumPy/Python ABI mismatch. The traceback in the evidence is torch's own.",
        fix="Read the last line of the traceback. For missing or mismatched CUDA libraries, reinstall torch "
            "together with its pinned nvidia-* dependencies (one pip command, same index URL as before); do not "
            "mix CUDA libraries from a system toolkit via LD_LIBRARY_PATH with the wheel's own.",
        commands=(("pip", "{python} -m pip install --force-reinstall torch --index-url "
                          "https://download.pytorch.org/whl/{torch_index}"),),
        links=(_GET_STARTED,),
    ),
    Code(
        code="torch-cpu-only-build",
        layer="torch",
        severity=Severity.BLOCKING,
        title="PyTorch is a CPU-only build",
        meaning="torch.version.cuda is None: this wheel has no CUDA kernels at all (a '+cpu' build, or a build "
                "from a CPU-only index). torch.cuda.is_available() is False on any machine, tensors on 'cuda' "
                "fail with 'Torch not compiled with CUDA enabled', Triton sees no active driver and FLA runs "
                "its CPU fallback. pip will not replace it by itself: 'torch' is already satisfied.",
        fix="Uninstall it and install the CUDA wheel that matches the driver (cu130 for driver R580+ "
            "(cuDriverGetVersion 13000), cu128 for R570+, cu126 for R560+); reinstall torchvision/torchaudio "
            "from the same index so their versions match.",
        commands=(("pip", _REINSTALL),),
        links=(_GET_STARTED, "https://download.pytorch.org/whl/"),
    ),
    Code(
        code="driver-too-old-for-torch",
        layer="torch",
        severity=Severity.BLOCKING,
        title="NVIDIA driver too old for this PyTorch's CUDA",
        meaning="The driver's CUDA version (cuDriverGetVersion) has a lower major version than the CUDA this "
                "torch wheel was built with (torch.version.cuda). CUDA only guarantees compatibility within a "
                "major version, so initialisation fails: torch warns 'The NVIDIA driver on your system is too "
                "old (found version NNNNN)' and reports CUDA unavailable. The usual case: torch 2.11+ from PyPI "
                "(CUDA 13.0) on an R570/R575 driver (CUDA 12.8/12.9).",
        fix="Either install a torch wheel built for the driver's CUDA (the command below) or upgrade the "
            "driver (R580+ for CUDA 13). On data-centre GPUs the cuda-compat forward-compatibility package is "
            "a third option.",
        commands=(("pip", _REINSTALL),),
        links=(_GET_STARTED, "https://docs.nvidia.com/deploy/cuda-compatibility/index.html"),
    ),
    Code(
        code="torch-cuda-unavailable",
        layer="torch",
        severity=Severity.BLOCKING,
        title="torch.cuda.is_available() is False",
        meaning="This CUDA build of torch cannot use the GPU: is_available() returned False. torch's own "
                "warning (in the evidence) names the CUDA error it swallowed. Everything above it (Triton, FLA, "
                "models on 'cuda') fails or silently runs on CPU.",
        fix="Follow torch's warning and the lower layers' findings (driver, device nodes, "
            "CUDA_VISIBLE_DEVICES, libcuda). If those all pass, compare the driver's CUDA version with "
            "torch.version.cuda.",
        links=(_GET_STARTED,),
    ),
    Code(
        code="torch-arch-not-supported",
        layer="torch",
        severity=Severity.BLOCKING,
        title="This PyTorch build has no kernels for the GPU's architecture",
        meaning="The GPU's compute capability is not covered by torch.cuda.get_arch_list(): no SASS of the same "
                "major and lower-or-equal minor version, and no PTX it could JIT from. torch warns 'is not "
                "compatible with the current PyTorch installation' and kernels fail with 'CUDA error: no kernel "
                "image is available for execution on the device'. Typical: Blackwell (cc 10.x/12.x) with a "
                "cu126 wheel, or a new GPU with an old torch.",
        fix="Install a torch wheel that includes the architecture: Blackwell needs torch 2.7+ from the cu128 "
            "index or torch 2.8+ from PyPI (cu128/cu130); cc 11.0 needs cu130.",
        commands=(("pip", _REINSTALL),),
        links=(_GET_STARTED, "https://developer.nvidia.com/cuda-gpus"),
    ),
    Code(
        code="torch-gpu-op-failed",
        layer="torch",
        severity=Severity.BLOCKING,
        title="A one-element CUDA tensor operation failed",
        meaning="torch reports CUDA available, yet (torch.ones(1, device='cuda') + 1).item() did not give 2: "
                "the exception (evidence) is what any model would hit first. 'no kernel image is available' "
                "means an architecture gap, 'CUDA unknown error' or 'initialization error' points at the driver "
                "or device nodes, 'out of memory' at another process holding the GPU.",
        fix="Act on the exception: for 'no kernel image' install a wheel covering the GPU (see "
            "torch-arch-not-supported); for init errors see the gpu and cuda layers; for out-of-memory, "
            "nvidia-smi shows which process holds the memory.",
        commands=(("shell", "nvidia-smi"),),
        links=("https://pytorch.org/docs/stable/notes/cuda.html",),
    ),
)
