"""Harvest harvr: "the GPU is not there" symptoms whose thread established the cause
(docs/dev/harvest-harvr.md). Each message is the text the program prints, taken from its
source (cited per line) in the form the thread's user pasted it.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import family_tests

FAMILIES = {
    "framework-cpu-only-build": [
        # jax/_src/xla_bridge.py backends(): a TPU host whose jax has no TPU backend (no libtpu)
        "WARNING:jax._src.xla_bridge:A Google TPU may be present on this machine, but either a "
        "TPU-enabled jaxlib or libtpu is not installed. Falling back to cpu.",
        "W0406 19:31:14.948704 125696970082304 xla_bridge.py:971] A Google TPU may be present on this "
        "machine, but either a TPU-enabled jaxlib or libtpu is not installed. Falling back to cpu.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_a_tpu_host_that_found_its_tpu_is_no_cpu_build():
    # a healthy TPU run lists its devices; nothing in it says a TPU build is missing
    codes = match_codes("jax.devices(): [TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0)] "
                        "libtpu is installed")
    assert "framework-cpu-only-build" not in codes


TF_FALSE = [
    # tensorflow/python/platform/test.py is_built_with_cuda(), printed by the user (tensorflow/tensorflow#60156)
    "print(tf.test.is_build_with_cuda()) #  false is returned",
    ">>> print(tf.test.is_built_with_cuda())  -> False",
    "tf.test.is_built_with_cuda(): False",
    "Is TensorFlow built with CUDA?: False",
]


def test_tensorflow_built_without_cuda_is_a_cpu_build():
    for line in TF_FALSE:
        assert "framework-cpu-only-build" in match_codes(line), line
        assert "framework-cpu-only-build" in match_codes("    " + line + "\n"), line


def test_tensorflow_built_with_cuda_is_no_cpu_build():
    for line in ("print(tf.test.is_built_with_cuda())  # True", "if not tf.test.is_built_with_cuda(): sys.exit(1)",
                 "Is TensorFlow built with CUDA?: True"):
        assert "framework-cpu-only-build" not in match_codes(line), line
