"""harv42e: an unbiased harvest of Blackwell / CUDA 12.8-13 migration threads (RTX 50 and B200,
cu128/cu129/cu130 wheels, sm_100/sm_120 'no kernel image', nvcc's unsupported architectures),
scored blind, and the one general fix its single miss asked for (docs/dev/harv42e.md).

Eleven new training-side logs; explain named ten first before any change. The miss (A1, a
library's own message with no signature): the LLVM that Triton bundles warns
``'sm_120' is not a recognized processor for this target (ignoring processor)`` when it is older
than the GPU (Triton < 3.3 on RTX 50), and then stops on ``LLVM ERROR: Cannot select: intrinsic
%llvm.nvvm.shfl.sync.bfly.i32`` (kijai/ComfyUI-HunyuanVideoWrapper#457, kijai: "it's still related
to Triton for sure"). The warning line now names ``ptxas-arch-unsupported`` (the code whose fix is
"upgrade Triton with the torch that pins it, >= 3.3 for sm_120") as a ``warning = true``
signature: it speaks only where the log shows a failure, since LLVM goes on with a generic target
and the kernel may still assemble (woct0rdho/triton-windows#59).
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of

WARN = "'sm_120' is not a recognized processor for this target (ignoring processor)"

# kijai/ComfyUI-HunyuanVideoWrapper#457 (the reporter's paste)
HUNYUAN = (
    "Launch Command\n"
    "python main.py --port 7860 --listen 0.0.0.0 --use-sage-attention\n"
    f"{WARN}\n"
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\n"
)

# fishaudio/fish-speech#907 (torch.compile on an RTX 5090: the warning, then inductor's ptxas call fails)
FISH = (
    f"{WARN}\n" * 3
    + "E0303 11:40:42.533000 713 site-packages/torch/_inductor/runtime/triton_heuristics.py:533] "
    "subprocess.CalledProcessError: Command '['/home/eason/anaconda3/envs/fish-speech/lib/python3.10/"
    "site-packages/triton/backends/nvidia/bin/ptxas', '-lineinfo', '-v', '--gpu-name=sm_120', "
    "'/tmp/tmpdy7phawp.ptx', '-o', '/tmp/tmpdy7phawp.ptx.o']' returned non-zero exit status 255.\n"
)

# woct0rdho/triton-windows#59: the same warning, but ptxas assembles the kernel: no failure
TRITON_WINDOWS_OK = (
    f"{WARN}\n" * 3
    + "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'add_kernel' for 'sm_120'\n"
    "ptxas info    : Function properties for add_kernel\n"
)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_hunyuan_thread_names_the_old_triton():
    assert codes_of(HUNYUAN)[:1] == ["ptxas-arch-unsupported"]


def test_fish_speech_ptxas_call_names_the_old_triton():
    assert codes_of(FISH)[:1] == ["ptxas-arch-unsupported"]


def test_signature_matches_in_wrappers():
    for line in (WARN, f"[rank3]: {WARN}", f"2025-03-15 10:01:02,123 - {WARN}", f"'sm_100a' is not a recognized "
                 "processor for this target (ignoring processor)", f"  0%|          | 0/4 [00:00<?, ?it/s]{WARN}"):
        assert "llvm-nvptx-processor-not-recognized" in _ids(line), line


def test_warning_alone_stays_silent():
    # a kernel that still assembles is no failure: explain names nothing
    assert "ptxas-arch-unsupported" not in codes_of(TRITON_WINDOWS_OK)


def test_near_misses_keep_their_reading():
    # LLVM prints the same for CPU names in unrelated programs (Julia on an M4, Rust for the ESP32)
    for line in ("'apple-m4' is not a recognized processor for this target (ignoring processor)",
                 "'esp32' is not a recognized processor for this target (ignoring processor)",
                 "'+ptx84' is not a recognized feature for this target (ignoring feature)",
                 "'sm_120' is a recognized processor"):
        assert "llvm-nvptx-processor-not-recognized" not in _ids(line), line
    cpu = ("'apple-m4' is not a recognized processor for this target (ignoring processor)\n"
           "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\n")
    assert "ptxas-arch-unsupported" not in codes_of(cpu)[:1]
    # the Cannot-select line alone keeps its own reading
    assert codes_of("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\n")[:1] == [
        "triton-compiler-bug"]
