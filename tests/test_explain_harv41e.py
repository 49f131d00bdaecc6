"""harv41e: an unbiased harvest of medical, microscopy and bio-imaging tools (MONAI, nnU-Net,
TotalSegmentator, cellpose, StarDist, micro-sam, ColabFold/localcolabfold), scored blind, and the
general fixes its misses ask for (docs/dev/harv41e.md).

Ten new training-side logs; explain named three first before any change. The fixed misses (A1, a
program's own message read wrongly or not at all):
- JAX's finalized deprecations, ``jax.interpreters.xla.xe was removed in JAX v0.4.36. Use
  jax.lib.xla_extension instead.`` (jax/_src/deprecations.py raises the message kept in each
  module's ``_deprecations``), ``module 'jax' has no attribute 'linear_util'`` (removed in jax
  0.4.24, YoshitakaMo/localcolabfold#261) and dm-haiku reading a deleted flag, ``'Config' object has
  no attribute 'jax_experimental_name_stack'`` (jax 0.3.25, sokrypton/ColabFold#332): a package
  written for an older JAX, now ``dependency-version-mismatch``;
- ``'torch.cuda' has no attribute 'mem_get_info'`` (torch 1.10 API, cellpose on torch 1.9,
  MouseLand/cellpose#646): now ``torch-too-old-for-package``.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# jax/interpreters/xla.py and jax/core.py _deprecations (finalized entries)
JAX_XE = "AttributeError: jax.interpreters.xla.xe was removed in JAX v0.4.36. Use jax.lib.xla_extension instead."
JAX_EQN = ("AttributeError: jax.core.JaxprEqn was removed in JAX v0.6.0. Use jax.extend.core.JaxprEqn instead, "
           "and see https://docs.jax.dev/en/latest/jax.extend.html for details.")
# jax/_src/deprecations.py deprecation_getattr for a name no longer listed
JAX_LU = "AttributeError: module 'jax' has no attribute 'linear_util'"
# dm-haiku reading jax.config.jax_experimental_name_stack on jax >= 0.3.25
JAX_FLAG = "AttributeError: 'Config' object has no attribute 'jax_experimental_name_stack'"
# cellpose 2.x dynamics on torch < 1.10
TORCH_MEMINFO = "AttributeError: module 'torch.cuda' has no attribute 'mem_get_info'"

FAMILIES = {
    "dependency-version-mismatch": [JAX_XE, JAX_EQN, JAX_LU, JAX_FLAG],
    "torch-too-old-for-package": [TORCH_MEMINFO],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_localcolabfold_haiku_traceback_names_the_jax_pair():
    # YoshitakaMo/localcolabfold#296 / #212: the import chain colabfold -> haiku -> jax
    text = (
        "2025-04-19 10:41:43,980 Running on GPU\n"
        "Traceback (most recent call last):\n"
        '  File "/home/of/localcolabfold/colabfold-conda/bin/colabfold_batch", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/home/of/localcolabfold/colabfold-conda/lib/python3.10/site-packages/colabfold/alphafold/models.py",'
        " line 4, in <module>\n"
        "    import haiku\n"
        "AttributeError: jax.core.JaxprEqn was removed in JAX v0.6.0. Use jax.extend.core.JaxprEqn instead, and see "
        "https://docs.jax.dev/en/latest/jax.extend.html for details.\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_linear_util_quoted_in_prose():
    # the reporter's sentence, quoted (localcolabfold#261)
    text = 'I started getting this error,\n\n"AttributeError: module \'jax\' has no attribute \'linear_util\'"\n'
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_jax_near_misses_keep_their_reading():
    # deprecation warnings (not yet removed), another library's removal note, a jax flag that exists
    for line in (
        "DeprecationWarning: jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer)",
        "    # jax.clear_backends() was removed in JAX",
        "TypeError: The newshape argument to jnp.reshape was removed in JAX v0.4.36. Use shape instead.",
        "AttributeError: module 'jax' has no attribute 'tree'",
        "AttributeError: 'Config' object has no attribute 'use_cache'",
        "jax.config.update('jax_enable_x64', True)",
        "AttributeError: module 'jaxlib' has no attribute 'linear_util'",
    ):
        assert "jax-api-removed-for-dependent" not in _ids(line), line


def test_cellpose_mem_get_info_unquoted_paste():
    # MouseLand/cellpose#646: the message as the reporter quoted it, without "module"
    text = ("This will create this error `'torch.cuda' has no attribute 'mem_get_info'`\n"
            "torch version:  \t1.9.0a0+2ecb2c7\n")
    assert _codes(text)[:1] == ["torch-too-old-for-package"]


def test_mem_get_info_near_misses_stay_quiet():
    # a partially initialized torch (a circular import) and other objects' mem_get_info
    for line in (
        "AttributeError: partially initialized module 'torch.cuda' has no attribute 'mem_get_info' "
        "(most likely due to a circular import)",
        "AttributeError: 'Device' object has no attribute 'mem_get_info'",
        "free, total = torch.cuda.mem_get_info()",
    ):
        assert "torch-api-missing-older" not in _ids(line), line
