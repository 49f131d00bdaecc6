"""Harvest harvu: building and version gates (docs/dev/harvest-harvu.md).

No new code. ``dependency-version-mismatch`` now reads the Hugging Face libraries' own version
gates (``require_version`` in transformers/accelerate/diffusers/peft, and the Trainer's
accelerate check, which used to read as torch-cpu-only-build) and pybind11's refusal to
register one C++ type twice. Each message is the library's own text (source cited per line).
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import family_tests

FAMILIES = {
    "dependency-version-mismatch": [
        # transformers/utils/versions.py _compare_versions, via dependency_versions_check.py
        "ImportError: tokenizers>=0.14,<0.19 is required for a normal functioning of this module, "
        "but found tokenizers==0.19.1.",
        "ImportError: huggingface-hub>=0.19.3,<1.0 is required for a normal functioning of this module, "
        "but found huggingface-hub==0.17.3.\n"
        "Try: pip install transformers -U or pip install -e '.[dev]' if you're working with git main",
        # the same function copied into accelerate / peft / diffusers
        "ImportError: accelerate>=0.21.0 is required for a normal functioning of this module, "
        "but found accelerate==0.20.3.",
        "ImportError: peft>=0.5.0 is required for a normal functioning of this module, but found peft==0.4.0.",
        # transformers/training_args.py _setup_devices
        "ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.21.0`: Please run "
        "`pip install transformers[torch]` or `pip install accelerate -U`",
        # transformers/modeling_utils.py from_pretrained (new and old wording)
        "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
        "`pip install 'accelerate>=0.26.0'`",
        "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install accelerate`",
        # pybind11/pybind11.h generic_type::initialize
        'ImportError: generic_type: type "Device" is already registered!',
        "ImportError: generic_type: type \"open3d::core::Tensor\" is already registered!",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_version_gate_near_misses_are_not_read():
    # a requirement that is met or a package merely named in prose is no mismatch
    assert "dependency-version-mismatch" not in match_codes(
        "accelerate>=0.21.0 is required for this example; install it with pip install accelerate")
    assert "dependency-version-mismatch" not in match_codes(
        "Using the Trainer with PyTorch on 8 GPUs")
    assert "dependency-version-mismatch" not in match_codes(
        "Using low_cpu_mem_usage=True or a device_map speeds up loading")
    # pybind11's other registration message (a name clash in one module) is another matter
    assert "dependency-version-mismatch" not in match_codes(
        'generic_type: cannot initialize type "Foo": an object with that name is already defined')


def test_trainer_accelerate_gate_is_not_a_cpu_only_torch():
    text = ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run "
            "`pip install transformers[torch]` or `pip install 'accelerate>=0.26.0'`")
    assert "dependency-version-mismatch" in match_codes(text)
