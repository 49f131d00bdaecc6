"""Python's own import messages, protobuf's typo and CUDA's error 803 as NGC containers print it, as
explain reads them (issue 8, item 2).

- CPython Objects/moduleobject.c ``module_getattro`` (3.8-3.12): "partially initialized module
  '%U' has no attribute '%U' (most likely due to a circular import)": a script named like the
  package it imports (``torch.py`` running ``import torch`` imports itself), or mismatched builds of
  one package; Triton's own case stays ``triton-import-failed``'s
- cudaGetErrorString(cudaErrorSystemDriverMismatch, 803), capitalised by NGC containers' banner
  ("ERROR: The NVIDIA Driver is present, but CUDA failed to initialize ... [[ System has ... ]]")
- protocolbuffers/protobuf python/google/protobuf/descriptor.py: 4.21.0-4.21.x raised "Descriptors
  cannot not be created directly." (the doubled negative), later releases "cannot be created"
"""

from __future__ import annotations

import pytest

from test_explain_patterns import WRAPPERS, codes


CASES = [
    ("AttributeError: partially initialized module 'torch' has no attribute 'cuda' (most likely due to a "
     "circular import)", "module-shadowed"),
    ("AttributeError: partially initialized module 'numpy.random' has no attribute 'seed' (most likely due to a "
     "circular import)", "module-shadowed"),
    ("TypeError: Descriptors cannot not be created directly.", "dependency-version-mismatch"),
    ("TypeError: Descriptors cannot be created directly.", "dependency-version-mismatch"),
    # cudaGetErrorString(803) as NGC containers' start banner prints it, capitalised
    ("   [[ System has unsupported display driver / cuda driver combination (error 803) ]]",
     "driver-library-mismatch"),
]


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("line,code", CASES)
def test_the_message_names_its_cause_however_it_is_pasted(line, code, wrapper):
    assert codes(WRAPPERS[wrapper](line))[:1] == [code], (wrapper, codes(WRAPPERS[wrapper](line)))


def test_tritons_partial_import_keeps_its_own_reading():
    got = codes("AttributeError: partially initialized module 'triton.language' has no attribute 'core' "
                "(most likely due to a circular import)")
    assert got[:1] == ["triton-import-failed"], got


@pytest.mark.parametrize("line", [
    # an attribute missing from a module that finished importing: a version question, not shadowing
    "AttributeError: module 'numpy' has no attribute 'float'.",
    # the words in a sentence about imports
    "the module was partially initialized when I checked",
])
def test_near_misses_are_not_shadowing(line):
    assert "module-shadowed" not in codes(line), codes(line)


# -- a lower-case message capitalised where it starts a sentence, a title or a banner ----------

@pytest.mark.parametrize("line,code", [
    ("Device-side assert triggered", "cuda-device-side-assert"),
    ("An illegal memory access was encountered", "cuda-error-unclassified"),
    ("Invalid device function", "torch-arch-not-supported"),
    ("Misaligned address", "cuda-error-unclassified"),
    ("Operation not permitted when stream is capturing", "cuda-graph-capture-unsupported"),
    ("Undefined symbol: _ZN3c104cuda9SetDeviceEi", "extension-torch-mismatch"),
])
def test_a_capitalised_first_letter_still_names_the_cause(line, code):
    assert codes(line)[:1] == [code], codes(line)


@pytest.mark.parametrize("pattern,compiled", [
    ("no kernel image", "[nN]o kernel image"),
    (r"\ban illegal", r"\b[aA]n illegal"),
    ("Failed to find C compiler", "Failed to find C compiler"),   # already capitalised
    ("a?b", "a?b"),                                               # a quantified letter
    (r"\d+ files", r"\d+ files"),                                 # no letter first
])
def test_only_a_leading_lower_case_letter_is_widened(pattern, compiled):
    from stackpeel.explain.knowledge import either_case_start
    assert either_case_start(pattern) == compiled


def test_the_rest_of_the_message_keeps_its_case():
    # only the first letter: "No Kernel Image" is not how any program words it
    assert "torch-arch-not-supported" not in codes("No Kernel Image Is Available For Execution")


def test_a_capitalised_hang_in_the_users_words_is_its_symptom():
    # "stuck at loading the model" named model-load-hang; capitalised at a sentence's start it did not
    assert codes("Stuck at loading the model, nothing happens after that.")[:1] == ["model-load-hang"]
