"""harv29: a fourth unbiased harvest, sampled from the final line users see, scored blind, and
the general fixes its misses ask for (docs/dev/harv29.md).

Twenty-eight new training-side logs; explain named nineteen first before any change. The misses
the log itself can fix were a program's own line that nothing read (A1):
- Cython's type-size check on NumPy's ndarray (``numpy.ndarray size changed, may indicate binary
  incompatibility. Expected 88 from C header, got 80 from PyObject``): ``numpy-abi-mismatch``
  (only ``numpy.dtype`` was read);
- torch's multinomial check under transformers' sampling (``probability tensor contains either
  `inf`, `nan` or element < 0``), logits that overflowed in float16: ``fp16-nan-output``, as a
  fallback that a log naming another failure does not hear;
- ``No module named 'torch._C'`` from torch/__init__.py: ``torch-import-failed``;
and one generic reading outranking the specific one (A2): ``No module named 'triton.ops'``, a
package Triton removed (triton-lang/triton#4156) that bitsandbytes < 0.45.1, xformers and DeepSpeed
imported, read as torch's Triton pin: ``triton-too-old-for-package``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "numpy-abi-mismatch": [
        # Cython/Utility/ImportExport.c __Pyx_ImportType, a module compiled against NumPy >= 1.20
        # headers imported beside an older NumPy (delvelabs/batea#15, mjhydri/BeatNet#6)
        "ValueError: numpy.ndarray size changed, may indicate binary incompatibility. "
        "Expected 88 from C header, got 80 from PyObject",
        # the NumPy 2 headers' dtype beside NumPy 1.x (read before this round; kept as a row)
        "ValueError: numpy.dtype size changed, may indicate binary incompatibility. "
        "Expected 96 from C header, got 88 from PyObject",
    ],
    "torch-import-failed": [
        # torch/__init__.py 'from torch._C import *' with the compiled extension absent (yisol/IDM-VTON#126)
        "ModuleNotFoundError: No module named 'torch._C'",
    ],
    "triton-too-old-for-package": [
        # bitsandbytes/triton/int8_matmul_mixed_dequantize.py against a Triton without triton.ops
        "ModuleNotFoundError: No module named 'triton.ops'",
        "ModuleNotFoundError: No module named 'triton.ops.matmul_perf_model'",
    ],
    "fp16-nan-output": [
        # aten/src/ATen/native/Distributions.cpp multinomial, as transformers' generate raises it
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
        # the same check pasted without the backticks (JIA-Lab-research/LongLoRA#165)
        "RuntimeError: probability tensor contains either inf, nan or element < 0",
    ],
    # blind hits only by resemblance, which the pattern-only agreement test found (A1 behind a hit):
    # torch API by the release that added it (ultralytics/yolov3#67, asyml/texar-pytorch#123,
    # explosion/thinc#615)
    "torch-too-old-for-package": [
        "AttributeError: module 'torch' has no attribute 'argsort'",
        "AttributeError: module 'torch.nn' has no attribute 'Identity'",
        "AttributeError: module 'torch.cuda' has no attribute 'amp'",
    ],
    # cffi's "cannot load library '%s': %s" for a bare soname, the reason cut by a title
    # (Keycatowo/audioviz-webui#15)
    "system-library-missing": [
        "OSError: cannot load library 'libsndfile.so': libsndfile.so",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_removed_torch_api_and_bundled_sndfile_are_no_signature():
    # torch._six was removed (torch 2.0): the package is too old, not torch
    assert "torch-too-old-for-package" not in match_codes("AttributeError: module 'torch' has no attribute '_six'\n")
    # a circular import of a local torch.py says 'partially initialized'
    assert "torch-too-old-for-package" not in match_codes(
        "AttributeError: partially initialized module 'torch' has no attribute 'argsort'\n")
    # the wheel's own bundled copy (a path, not the system search)
    assert "system-library-missing" not in match_codes(
        "OSError: cannot load library '/venv/lib/python3.10/site-packages/_soundfile_data/libsndfile.dylib': "
        "dlopen(...): no such file\n")


def test_bitsandbytes_import_chain_to_triton_ops():
    # the traceback bitsandbytes < 0.45.1 prints under a Triton after triton-lang/triton#4156
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/bitsandbytes/nn/triton_based_modules.py", line 7, in <module>\n'
        "    from bitsandbytes.triton.int8_matmul_mixed_dequantize import (\n"
        '  File "/opt/venv/lib/python3.11/site-packages/bitsandbytes/triton/int8_matmul_mixed_dequantize.py", line 12, in <module>\n'
        "    from triton.ops.matmul_perf_model import early_config_prune, estimate_matmul_time\n"
        "ModuleNotFoundError: No module named 'triton.ops'\n"
    )
    assert _codes(text)[:1] == ["triton-too-old-for-package"]


def test_other_missing_triton_modules_keep_their_reading():
    # a Triton submodule other than ops stays the pin's (triton-torch-version-mismatch), and
    # Triton's own compiled module stays a broken Triton install
    assert "triton-too-old-for-package" not in _codes("ModuleNotFoundError: No module named 'triton.compiler.compiler'\n")[:1]
    assert "triton-too-old-for-package" not in _codes("ModuleNotFoundError: No module named 'triton._C'\n")[:1]
    # a module merely named like it in another package
    assert _codes("ModuleNotFoundError: No module named 'tritonclient.ops'\n")[:1] != ["triton-too-old-for-package"]


def test_sampling_nan_is_a_fallback_under_a_named_failure():
    # a log that names an out-of-memory keeps it; the multinomial line only speaks alone
    text = (
        "RuntimeError: CUDA out of memory. Tried to allocate 288.00 MiB (GPU 0; 2.00 GiB total capacity; "
        "849.59 MiB already allocated; 87.44 MiB free; 326.41 MiB cached)\n"
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_sampling_nan_in_a_generate_traceback():
    # LianjiaTech/BELLE#412: the script, then the error from torch.multinomial
    text = (
        "CUDA_VISIBLE_DEVICES=0 python prompt_eval.py --model_name_or_path m --test_file t\n"
        '  File "/usr/local/lib/python3.10/dist-packages/transformers/generation/utils.py", line 2589, in sample\n'
        "    next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)\n"
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n"
    )
    assert _codes(text)[:1] == ["fp16-nan-output"]


def test_size_lines_of_other_types_are_no_signature():
    # the harmless RuntimeWarning of old Cython on numpy.ufunc, and a package's own Cython type:
    # no signature reads them (explain may still offer a low-confidence resemblance)
    assert "numpy-abi-mismatch" not in match_codes(
        "RuntimeWarning: numpy.ufunc size changed, may indicate binary incompatibility. Expected 216, got 192\n")
    assert "numpy-abi-mismatch" not in match_codes(
        "ValueError: sklearn.tree._tree.Tree size changed, may indicate binary incompatibility. "
        "Expected 64 from C header, got 56 from PyObject\n")


def test_torch_itself_missing_is_not_a_broken_install():
    # 'No module named torch' is torch-not-installed; a source checkout is torch's own message
    assert _codes("ModuleNotFoundError: No module named 'torch'\n")[:1] == ["torch-not-installed"]
    assert "torch-import-failed" not in _codes("ModuleNotFoundError: No module named 'torchvision'\n")[:1]
    assert "torch-import-failed" not in _codes("ModuleNotFoundError: No module named 'torch_scatter'\n")[:1]
