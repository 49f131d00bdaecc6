"""A user's program: launch one Triton kernel on the GPU and check the result.

Used by the scenarios to warm a Triton cache the way a real job does, and to prove
what a warm cache hides: `--n1` passes n == 1, which Triton specialises into a
constexpr, so (up to Triton 3.6) it needs a new C launcher and hence a C compiler.
`--alloc-gib N` first allocates N GiB on the GPU, as a model's weights would (the suite's
gpu-memory-held-by-another-process scenario: another process leaves less than that free).
"""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main() -> int:
    n = 1 if "--n1" in sys.argv else 1000
    if "--alloc-gib" in sys.argv:
        gib = float(sys.argv[sys.argv.index("--alloc-gib") + 1])
        weights = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")  # noqa: F841
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.full((n,), 2.0, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    torch.cuda.synchronize()
    ok = torch.equal(out, x + y)
    print("user kernel", "OK" if ok else "WRONG RESULT", f"n={n}", f"triton {triton.__version__}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
