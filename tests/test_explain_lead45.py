"""lead45: Lightning's "no GPU" messages with nothing visible are no ordinal past the last GPU, and
an Apptainer/Singularity command is a container clue for device-nodes-missing."""

from __future__ import annotations

import pytest

from stackpeel.explain import match_codes

from tests.explain_helpers import WRAPPERS, answer, codes, first, wrapped

# Lightning's own words (src/lightning/fabric/utilities/device_parser.py _sanitize_gpu_ids,
# src/lightning/fabric/accelerators/cuda.py find_usable_cuda_devices)
# pytorch_lightning 1.x's device_parser.py ('You requested GPUs: {gpus}\n But your machine only has: ...'),
# as singularity-6203 pastes it; Lightning 2's first line ('You requested gpu:') still reads an ordinal
EMPTY_LIST = ("pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]\n"
              " But your machine only has: []")
ZERO_GPUS = "ValueError: You requested to find 2 devices but this machine only has 0 GPUs."
TOO_MANY = ("pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0, 1, 2, 3]\n"
            " But your machine only has: [0, 1]")
SOME_GPUS = "ValueError: You requested to find 4 devices but this machine only has 2 GPUs."


@pytest.mark.parametrize("text", [EMPTY_LIST, ZERO_GPUS])
@pytest.mark.parametrize("wrap", sorted(WRAPPERS))
def test_nothing_visible_is_no_gpu_at_all(text, wrap):
    got = codes(wrapped(wrap, text))
    assert got[0] == "torch-cuda-unavailable", got
    assert "device-ordinal-out-of-range" not in got


@pytest.mark.parametrize("text", [TOO_MANY, SOME_GPUS])
def test_an_ordinal_past_the_visible_gpus_keeps_its_reading(text):
    assert first(text) == "device-ordinal-out-of-range"


def test_the_symptom_points_where_a_gpu_goes_missing():
    c = answer(ZERO_GPUS)["candidates"][0]
    assert c["kind"] == "symptom"
    assert {"cuda-visible-devices-hides-gpus", "device-nodes-missing", "torch-cpu-only-build"} <= set(c["could_be"])


@pytest.mark.parametrize("command", ["singularity shell nemo.sif", "apptainer exec image.sif python train.py",
                                     "singularity run docker://nvcr.io/nvidia/pytorch:24.01-py3"])
def test_an_apptainer_command_points_to_the_missing_device_nodes(command):
    text = f"$ {command}\nSingularity> python3 train.py\n{EMPTY_LIST}\n"
    assert first(text) == "device-nodes-missing"


def test_without_a_container_the_symptom_stays_first():
    assert first(f"$ python3 train.py\n{EMPTY_LIST}\n") == "torch-cuda-unavailable"


# Lightning's connector refusing a precision name a newer Lightning introduced (litgpt#241)
PRECISION = ("ValueError: Precision 'bf16-true' is invalid. Allowed precision values: ('16-mixed', 'bf16-mixed', "
             "'32-true', '64-true', 64, 32, 16, '64', '32', '16', 'bf16')")


@pytest.mark.parametrize("wrap", sorted(WRAPPERS))
def test_a_precision_name_newer_than_lightning(wrap):
    assert first(wrapped(wrap, PRECISION)) == "dependency-version-mismatch"


def test_a_precision_name_no_release_knows_is_not_read_as_a_version():
    # no signature reads a typo (a guess by resemblance to litgpt#241 may still offer the code)
    text = PRECISION.replace("'bf16-true'", "'bf-16'", 1)
    assert "dependency-version-mismatch" in match_codes(PRECISION)
    assert "dependency-version-mismatch" not in match_codes(text)
