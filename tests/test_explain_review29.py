"""Session 29's merge review: readings the harvests and the raise-site sweep gave that told the
user the wrong cause, each proved with the program's own text.

- torch >= 2.6 refuses a Git LFS pointer or a saved HTML page with its weights-only message and
  ``Unsupported operand 118`` / ``60`` (the bytes ``v`` and ``<``, which torch < 2.6 printed as
  ``invalid load key``): a download that is not the checkpoint (model-file-corrupt), not the
  weights-only default; a GLOBAL the allowlist lacks stays the default's;
- Cython's ``RuntimeWarning: numpy.ndarray size changed`` (a larger struct than the headers: the
  harmless direction) is no error; the ValueError is;
- ``No module named 'torch._C'; 'torch' is not a package``: CPython says the parent is a plain
  module, a torch.py shadowing the package (module-shadowed), not a broken install; likewise
  triton.ops;
- ``Could not import triton.ops, some features disabled`` does not say Triton is missing.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of

# torch 2.13's own output for torch.load of a Git LFS pointer (torch/serialization.py
# _get_wo_message; torch/_weights_only_unpickler.py 'Unsupported operand {key[0]}')
WO = ("_pickle.UnpicklingError: Weights only load failed. In PyTorch 2.6, we changed the default value of "
      "the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
      "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. "
      "Do it only if you got the file from a trusted source.\n"
      "Please file an issue with the following so that we can make `weights_only=True` compatible with "
      "your use case: WeightsUnpickler error: \n\n{detail}\n\n"
      "Check the documentation of torch.load to learn more about types accepted by default with "
      "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.\n")
TB = ('Traceback (most recent call last):\n  File "load.py", line 3, in <module>\n'
      '    sd = torch.load("model.pt")\n')


@pytest.mark.parametrize("operand", ["118", "60"])
def test_weights_only_refusal_of_an_lfs_pointer_or_html_is_a_corrupt_download(operand):
    codes = codes_of(TB + WO.format(detail=f"Unsupported operand {operand}"))
    assert codes[0] == "model-file-corrupt", codes


def test_weights_only_refusal_of_a_global_stays_the_default():
    detail = ("Unsupported global: GLOBAL ultralytics.nn.tasks.DetectionModel was not an allowed global by "
              "default. Please use `torch.serialization.add_safe_globals([DetectionModel])` to allowlist")
    codes = codes_of(TB + WO.format(detail=detail))
    assert codes[0] == "torch-load-weights-only-default", codes
    # an operand that is no LFS/HTML first byte stays the default's too
    assert codes_of(TB + WO.format(detail="Unsupported operand 149"))[0] == "torch-load-weights-only-default"


def test_cython_numpy_size_warning_is_no_error_but_the_valueerror_is():
    warn = ("/usr/lib/python3.10/importlib/_bootstrap.py:219: RuntimeWarning: numpy.ndarray size changed, "
            "may indicate binary incompatibility. Expected 80 from C header, got 88 from PyObject\n"
            "Epoch 1/10 loss 0.53\nTraining finished.\n")
    expl = explain_text(warn)
    assert not expl.codes and not expl.has_errors, expl.codes
    err = ("ValueError: numpy.ndarray size changed, may indicate binary incompatibility. "
           "Expected 88 from C header, got 80 from PyObject\n")
    assert codes_of(err)[0] == "numpy-abi-mismatch"


@pytest.mark.parametrize("pkg,sub", [("torch", "_C"), ("triton", "ops"), ("transformers", "models")])
def test_parent_that_is_not_a_package_is_a_shadowing_module(pkg, sub):
    text = (f'Traceback (most recent call last):\n  File "/home/u/proj/train.py", line 1, in <module>\n'
            f"    import {pkg}.{sub}\nModuleNotFoundError: No module named '{pkg}.{sub}'; '{pkg}' is not a package\n")
    assert codes_of(text)[0] == "module-shadowed", codes_of(text)


def test_the_bare_missing_submodules_keep_their_readings():
    assert codes_of("ModuleNotFoundError: No module named 'torch._C'\n")[0] == "torch-import-failed"
    assert codes_of("ModuleNotFoundError: No module named 'triton.ops'\n")[0] == "triton-too-old-for-package"


def test_optional_import_of_a_triton_submodule_does_not_say_triton_is_missing():
    assert "triton-not-installed" not in codes_of("Could not import triton.ops, some features disabled\n")
    assert codes_of("Could not import triton, some features disabled\n")[0] == "triton-not-installed"
