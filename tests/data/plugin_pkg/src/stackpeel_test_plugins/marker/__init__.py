"""A working plugin whose probe appends one line per run to $STACKPEEL_TEST_MARKER
(the local rank that ran it), so a test can count who ran the checks."""

import os

from stackpeel.checks.base import Check


class Counted(Check):
    id = "plugin.marker.counted"
    title = "A probe that leaves a mark per run"
    layer = "system"
    requires = ("system.platform",)
    probe = "marker.counted"
    probes_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes")
    codes = ("marker-unmarked",)

    def evaluate(self, facts, ctx):
        if not facts.get("written"):
            return ctx.verdict("no mark written", ctx.finding("marker-unmarked", path=facts.get("path")))
        return ctx.ok(f"marked {facts['path']} as local rank {facts['rank']}")
