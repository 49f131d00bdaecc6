"""Harvest harvq: programs' own messages from public issue threads whose cause the thread
established (docs/dev/harvest-harvq.md). Each message is the text the program prints, taken
from its source (cited per line) in the form the thread's user pasted it.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import family_tests

FAMILIES = {
    "package-no-matching-wheel": [
        # astral-sh/uv crates/uv-resolver pubgrub report, project mode (uv add / lock / sync)
        "  ╰─▶ Because there is no version of torch==1.6.0+cu101 and your project depends on "
        "torch==1.6.0+cu101, we can conclude that your project's requirements are unsatisfiable.",
        # the same report in pip-interface mode
        "  ╰─▶ Because there is no version of torch==2.1.0+cu118 and you require torch==2.1.0+cu118, "
        "we can conclude that your requirements are unsatisfiable.",
    ],
    "tensorrt-engine-version-mismatch": [
        # libnvinfer (TensorRT 5-7) engine.cpp nvinfer1::rt::Engine::deserialize assertion
        "loadtrt: engine.cpp:868: bool nvinfer1::rt::Engine::deserialize(const void*, std::size_t, "
        "nvinfer1::IGpuAllocator&, nvinfer1::IPluginFactory*): Assertion `size >= bsize && \"Mismatch "
        "between allocated memory size and expected size of serialized engine.\"' failed.",
        'Assertion size >= bsize && "Mismatch between allocated memory size and expected size of serialized engine." failed.',
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # ray autoscaler/_private/autoscaler.py, the demand printed as a defaultdict (ray 2.x)
        "(autoscaler +8m46s) Error: No available node types can fulfill resource request defaultdict(<class "
        "'float'>, {'CPU': 2.0, 'GPU': 2.0}). Add suitable node types to this cluster to resolve this issue.",
        "Error: No available node types can fulfill resource request defaultdict(<class 'float'>, "
        "{'accelerator_type_a10': 0.02, 'CPU': 9.0, 'GPU': 1.0}).",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_a_uv_conflict_between_two_packages_is_no_missing_wheel():
    # uv's report for two requirements that exclude each other names no missing version
    codes = match_codes(
        "  ╰─▶ Because torchvision==0.15.2 depends on torch==2.0.1 and your project depends on "
        "torch==2.1.0, we can conclude that your project's requirements are unsatisfiable.")
    assert "package-no-matching-wheel" not in codes



def test_a_ray_demand_without_gpu_is_not_a_gpu_request():
    # the same autoscaler line for a CPU-only demand says nothing about GPUs
    codes = match_codes("(autoscaler +32s) Error: No available node types can fulfill resource request "
                        "defaultdict(<class 'float'>, {'CPU': 64.0}). Add suitable node types to this cluster "
                        "to resolve this issue.")
    assert "scheduler-gpu-request-unsatisfiable" not in codes
