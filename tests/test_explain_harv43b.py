"""harv43b: an unbiased harvest of protein structure, molecular and chemistry ML (AlphaFold 3,
ColabFold, OpenMM / openmm-torch / openmm-ml, DGL under molecular models), scored blind, and the
general fixes its misses ask for (docs/dev/harv43b.md).

Eleven new training-side logs; explain named five first before any change. The fixed misses:
- JAX's one-sentence finalized deprecation ``jax.core.DropVar was deprecated in JAX v0.10.0 and
  removed in JAX v0.11.0`` (jax/core.py ``_deprecations``), met by a dm-haiku written for an older
  JAX (A2, google-deepmind/alphafold3#715): the existing signature read only "was removed in JAX";
  now ``dependency-version-mismatch``;
- DGL's ``Cannot load Graphbolt C++ library`` (dgl/graphbolt/__init__.py: the versioned library
  exists but torch.classes.load_library failed): a DGL build made for another torch
  (A1, graeter-group/grappa#20); now ``extension-torch-mismatch``, could be ``library-missing``;
- ``libtorch_cuda.so: cannot open shared object file`` from an extension built against a CUDA torch
  (openmm-torch) beside a CPU build of torch (A2, openmm/openmm-ml#67, openmm/openmm-torch#94): read
  as an extension imported before torch; CUDAExtension links libc10 first and the CUDA libraries
  last, so only libc10_cuda / libtorch_cuda missing means a torch without them; now
  ``torch-cpu-only-build``, while ``libc10.so`` keeps ``library-missing``;
XLA's warning ``The NVIDIA driver's CUDA version is 12.2 which is older than the PTX compiler
version 12.6.77`` (google-deepmind/alphafold3#272): a weight-1 signature was measured here and taken
out; the lead then made both wordings a *warning* signature of ``driver-too-old-for-build``
(``docs/dev/lead43.md``, ``tests/test_explain_lead43.py``): alone it names nothing, beside an
unnamed failure it is the answer, beside a failure a program names that failure stays first.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# jax-ml/jax jax/core.py _deprecations (finalized in v0.11.0), raised by jax/_src/deprecations.py
JAX_DROPVAR = ("AttributeError: jax.core.DropVar  was deprecated in JAX v0.10.0 and removed in JAX v0.11.0. "
               "Use jax.extend.core.DropVar.")
# jax-ml/jax jax/lib/xla_client.py _deprecations (finalized in v0.7.0)
JAX_TOPOLOGY = ("AttributeError: jax.lib.xla_client.get_topology_for_devices was deprecated in JAX v0.6.0 "
                "and removed in JAX v0.7.0")
# dmlc/dgl python/dgl/graphbolt/__init__.py load_graphbolt
GRAPHBOLT = "ImportError: Cannot load Graphbolt C++ library"
# glibc's loader for an extension linked against torch_cuda (openmm-torch's _openmmtorch)
TORCH_CUDA_SO = "ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory"
C10_CUDA_SO = "OSError: libc10_cuda.so: cannot open shared object file: No such file or directory"
FAMILIES = {
    "dependency-version-mismatch": [JAX_DROPVAR, JAX_TOPOLOGY],
    "extension-torch-mismatch": [GRAPHBOLT],
    "torch-cpu-only-build": [TORCH_CUDA_SO, C10_CUDA_SO],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_alphafold3_haiku_traceback_names_the_jax_release():
    # the timestamped traceback of google-deepmind/alphafold3#715
    text = (
        '2026-07-29T09:05:52.806419053Z   File "/usr/local/lib/python3.12/dist-packages/haiku/_src/jaxpr_info.py", line 45, in <module>\n'
        "2026-07-29T09:05:52.806483675Z     DropVar: TypeAlias = jax.core.DropVar\n"
        '2026-07-29T09:05:52.806495405Z   File "/opt/jax/jax/_src/deprecations.py", line 54, in getattr\n'
        "2026-07-29T09:05:52.806550166Z     raise AttributeError(message)\n"
        "2026-07-29T09:05:52.806576517Z AttributeError: jax.core.DropVar  was deprecated in JAX v0.10.0 and removed in JAX v0.11.0. Use jax.extend.core.DropVar.\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_jax_deprecation_warning_without_removal_stays_quiet():
    # a deprecation still in force warns and goes on: no removal, no signature
    for line in (
        "DeprecationWarning: jax.core.DropVar is deprecated. Use jax.extend.core.DropVar.",
        "jax.core.DropVar was deprecated in JAX v0.10.0; it will be removed in a future release.",
    ):
        assert "jax-api-removed-for-dependent" not in _ids(line), line


def test_grappa_paste_names_the_dgl_build():
    text = (
        "**Problem**:  `ImportError: Cannot load Graphbolt C++ library`\n\n"
        "Reinstalling dgl-compatible torch version manually (`pip uninstall torch` ; `pip install torch==2.1.0`) "
        "did not resolve issue.\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]
    expl_could = [e for e in load().match_line(GRAPHBOLT) if e.id == "dgl-graphbolt-load-failed"]
    assert expl_could and "library-missing" in expl_could[0].could_be


def test_graphbolt_traceback_with_missing_cuda_library_names_the_library():
    # dmlc/dgl#7247: the loader's own line under the graphbolt ImportError names the missing library
    text = (
        '  File "/opt/conda/lib/python3.10/site-packages/dgl/graphbolt/__init__.py", line 33, in load_graphbolt\n'
        "OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        '  File "/opt/conda/lib/python3.10/site-packages/dgl/graphbolt/__init__.py", line 35, in load_graphbolt\n'
        '    raise ImportError("Cannot load Graphbolt C++ library")\n'
        "ImportError: Cannot load Graphbolt C++ library\n"
    )
    assert "library-missing" in _codes(text)[:2]


def test_openmm_ml_traceback_names_the_cpu_torch():
    # openmm/openmm-ml#67: `import torch` ran, then openmmtorch's extension could not find libtorch_cuda
    text = (
        "File ~/miniforge3/envs/openmm-ml/lib/python3.11/site-packages/openmmml/models/anipotential.py:80, in ANIPotentialImpl.addForces\n"
        "     79 import torch\n"
        "---> 80 import openmmtorch\n"
        "File ~/miniforge3/envs/openmm-ml/lib/python3.11/site-packages/openmmtorch.py:15\n"
        "---> 15     import _openmmtorch\n\n"
        "ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory\n"
    )
    assert _codes(text)[:1] == ["torch-cpu-only-build"]


def test_extension_imported_before_torch_stays_library_missing():
    # CUDAExtension links c10 first: an extension imported before torch names libc10.so
    for line in (
        "ImportError: libc10.so: cannot open shared object file: No such file or directory",
        "ImportError: libtorch_cpu.so: cannot open shared object file: No such file or directory",
    ):
        assert "extension-needs-torch-cuda-library" not in _ids(line), line
        assert _codes(line + "\n")[:1] == ["library-missing"], line


def test_split_cuda_library_keeps_its_own_reading():
    # torch 1.8-1.12's split libraries: an extension built against another torch (harv33b)
    line = "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory"
    assert "extension-needs-torch-cuda-library" not in _ids(line)
    assert _codes(line + "\n")[:1] == ["extension-torch-mismatch"]


# openxla/xla xla/service/gpu/nvptx_compiler.cc (LOG_FIRST_N(WARNING, 1))
XLA_DRIVER = ("2025-10-15 18:52:49.085286: W external/xla/xla/service/gpu/nvptx_compiler.cc:930] The NVIDIA "
              "driver's CUDA version is 12.4 which is older than the PTX compiler version 12.6.77. Because the "
              "driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may "
              "slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA "
              "forward compatibility packages.")


def test_xla_driver_older_than_ptx_compiler_stays_a_healthy_notice():
    # lead43's reading (a warning signature): the warning alone names nothing, and beside a failure
    # a program's own line names (out of memory here) that failure is the answer
    assert "driver-too-old-for-build" not in _codes(XLA_DRIVER + "\n")
    text = (
        XLA_DRIVER + "\n"
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 50677266816 bytes.\n"
    )
    assert _codes(text)[:1] != ["driver-too-old-for-build"]
