"""Import FLA, then run one of its Triton-backed modules on CPU: FLA's import swallows
Triton's error, the first op raises it for real."""
import torch

import fla  # noqa: F401
from fla.modules import ShortConvolution

print("fla imported")
conv = ShortConvolution(hidden_size=8, kernel_size=4)
conv(torch.randn(1, 5, 8))
