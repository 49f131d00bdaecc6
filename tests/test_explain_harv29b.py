"""harv29b: a harvest of the newest stack releases (2025-2026), scored blind, and the fix its
misses ask for (docs/dev/harv29b.md).

The miss that generalises: torch.load's weights-only unpickler, the default since PyTorch 2.6.
Its failure (`_pickle.UnpicklingError: Weights only load failed. ... In PyTorch 2.6, we changed
the default value of the `weights_only` argument in `torch.load` from `False` to `True`.`) was
read by no signature; explain ranked it as a corrupt model file by resemblance. It now names
``torch-load-weights-only-default``. And transformers' own range check for the ``kernels``
package ('Kernels are not available. Please install a compatible version (A <= version < B)'),
read by nothing, now names ``dependency-version-mismatch``. Each message is torch's own text (torch/serialization.py
_get_wo_message and UNSAFE_MESSAGE, torch/_weights_only_unpickler.py), run through the wrappers
pasted logs put around lines, with near-misses that stay quiet or keep their own cause.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

_UNSAFE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
           "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
           "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
           "trusted source.")

FAMILIES = {
    "torch-load-weights-only-default": [
        # torch/serialization.py _get_wo_message, no unsafe global (tencent-ailab/SongGeneration#63's form)
        "_pickle.UnpicklingError: Weights only load failed. " + _UNSAFE,
        # the unsafe-global form, first line (Imageomics/kabr-tools#98)
        "_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you have "
        "two options, do those steps only if you trust the source of the checkpoint.",
        # the unpickler's own line, all that a paste cut to its tail keeps
        "WeightsUnpickler error: Unsupported global: GLOBAL ultralytics.nn.tasks.DetectionModel was not an "
        "allowed global by default. Please use `torch.serialization.add_safe_globals([DetectionModel])` or "
        "the `torch.serialization.safe_globals([DetectionModel])` context manager to allowlist this global "
        "if you trust this class/function.",
        # the TorchScript archive check (torch/serialization.py load)
        "RuntimeError: Cannot use ``weights_only=True`` with TorchScript archives passed to ``torch.load``. "
        + _UNSAFE,
    ],
    "dependency-version-mismatch": [
        # transformers' set_use_kernels / kernelize range check (huggingface/transformers#47312)
        "ValueError: Kernels are not available. Please install a compatible version (0.15.2 <= version < "
        "0.16.0), e.g. `pip install kernels==0.15.2`",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_kabr_tools_quoted_paste_names_the_new_default():
    # Imageomics/kabr-tools#98: the traceback's last lines, pasted as a markdown quote
    text = ("I get\n\n"
            ">     raise pickle.UnpicklingError(_get_wo_message(str(e))) from None\n"
            "> _pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you "
            "have two options, do those steps only if you trust the source of the checkpoint.\n"
            ">         (1) " + _UNSAFE + "\n")
    assert _codes(text)[:1] == ["torch-load-weights-only-default"]


def test_comfyui_json_with_escaped_backticks():
    # ComfyUI's error report: exception_message as JSON, backticks escaped as \u0060 and ANSI bold
    text = ('{\n  "node_type": "UltralyticsDetectorProvider",\n'
            '  "exception_message": "Weights only load failed. This file can still be loaded, to do so you '
            'have two options, \\u001B[1mdo those steps only if you trust the source of the checkpoint'
            '\\u001B[0m. \\n\\t(1) In PyTorch 2.6, we changed the default value of the \\u0060weights_only'
            '\\u0060 argument in \\u0060torch.load\\u0060 from \\u0060False\\u0060 to \\u0060True\\u0060. '
            '\\n\\tWeightsUnpickler error: Unsupported global: GLOBAL getattr was not an allowed global by '
            'default.",\n  "exception_type": "_pickle.UnpicklingError"\n}\n')
    assert _codes(text)[:1] == ["torch-load-weights-only-default"]


def test_old_torch_wording_for_an_explicit_weights_only():
    # torch 1.13-2.5, a caller that passed weights_only=True itself (its message had no '2.6')
    text = ("_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` "
            "set to `False` will likely succeed, but it can result in arbitrary code execution.Do it only if "
            "you get the file from a trusted source. WeightsUnpickler error: Unsupported operand 71\n")
    assert _codes(text)[:1] == ["torch-load-weights-only-default"]


def test_the_future_warning_of_torch_2_4_is_not_a_failure():
    # torch 2.4-2.5 warn on every bare torch.load; nothing failed yet
    text = ("/usr/lib/python3.11/site-packages/torch/serialization.py:1189: FutureWarning: You are using "
            "`torch.load` with `weights_only=False` (the current default value), which uses the default pickle "
            "module implicitly. It is possible to construct malicious pickle data which will execute arbitrary "
            "code during unpickling. In a future release, the default value for `weights_only` will be flipped "
            "to `True`. This limits the functions that could be executed during unpickling. Arbitrary objects "
            "will no longer be allowed to be loaded via this mode unless they are explicitly allowlisted by the "
            "user via `torch.serialization.add_safe_globals`.\n")
    assert "torch-load-weights-only-default" not in _codes(text)


def test_prose_about_the_new_default_is_not_a_failure():
    # a pull request's description (gpoesia/minimo#21's kind, without the error)
    text = ("From PyTorch 2.6 the default value of weights_only in torch.load changed from False to True, "
            "so this patch passes weights_only=False explicitly to every torch.load call.\n")
    assert "torch-load-weights-only-default" not in _codes(text)


def test_a_git_lfs_pointer_stays_a_corrupt_model_file():
    # pickle's 'invalid load key' on the pointer torch.load read instead of the weights
    text = ("  File \"/usr/lib/python3.11/site-packages/torch/serialization.py\", line 1040, in load\n"
            "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
            "_pickle.UnpicklingError: invalid load key, 'v'.\n")
    assert _codes(text)[:1] == ["model-file-corrupt"]


def test_kernels_absent_is_not_read_as_a_version_pair():
    # the older wording of the same check, when kernels is not installed at all: no signature of
    # the version pair reads it (a guess by resemblance to the range check's thread may still rank)
    text = ("ValueError: Kernels are not available. To use kernels, please install kernels using "
            "`pip install -U kernels`\n")
    assert "dependency-version-mismatch" not in match_codes(text)
