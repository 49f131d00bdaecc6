"""A plugin whose probes misbehave: one raises, one dies of SIGSEGV, one prints junk and returns junk."""

import os

from stackpeel.checks.base import Check

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes")


class Raises(Check):
    id = "plugin.broken_probe.raises"
    title = "A probe that raises"
    layer = "kernels"
    probe = "faults.raises"
    probes_dir = HERE
    codes = ("broken-probe-never",)

    def evaluate(self, facts, ctx):
        return ctx.ok("unreachable")


class Segfaults(Raises):
    id = "plugin.broken_probe.segfaults"
    title = "A probe that dies of SIGSEGV"
    probe = "faults.segfaults"


class Junk(Raises):
    id = "plugin.broken_probe.junk"
    title = "A probe that prints junk and answers with a list"
    probe = "faults.junk"
