"""The plugin's checks: declared data plus a small, pure ``evaluate``.

stackpeel registers every ``Check`` subclass of this module (the entry point names it). Ids
start with ``plugin.example.``, codes with ``example-``; the codes' wording lives in
``knowledge/example.toml`` beside this file, never here.
"""

import os

from stackpeel.checks.base import Check

#: the oldest GCC major version the example library's extensions build with
MINIMUM_GCC = 9


class CompilerVersion(Check):
    """Reads the version of the C compiler Triton would use (the one ``toolchain.c_compiler``
    found) and fails when it is older than the example library supports."""

    id = "plugin.example.compiler_version"
    title = "C compiler new enough for the example library"
    layer = "toolchain"
    #: its facts come from the built-in check; its failure explains ours (the diagnosis graph)
    requires = ("toolchain.c_compiler",)
    #: "<module>.<function>" in probes_dir, run in a child of the diagnosed interpreter
    probe = "example.compiler_version"
    probes_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes")
    probe_options = {"minimum": MINIMUM_GCC}
    timeout = 20.0
    codes = ("example-compiler-too-old", "example-compiler-unusable")

    def evaluate(self, facts, ctx):
        minimum = facts.get("minimum", MINIMUM_GCC)
        if not facts.get("compiler"):
            return ctx.verdict("no C compiler to ask for its version",
                               ctx.finding("example-compiler-unusable", "none"))
        if facts.get("error") or facts.get("major") is None:
            return ctx.verdict(f"{facts['compiler']} does not say its version",
                               ctx.finding("example-compiler-unusable", "silent", compiler=facts["compiler"],
                                           error=facts.get("error") or facts.get("version")))
        if facts.get("is_gcc") and facts["major"] < minimum:
            return ctx.verdict(f"{facts['compiler']} is GCC {facts['version']}, older than {minimum}",
                               ctx.finding("example-compiler-too-old", compiler=facts["compiler"],
                                           version=facts["version"], minimum=minimum))
        return ctx.ok(f"{facts['compiler']} {facts['version']} (at least {minimum} needed)")
