"""A plugin whose check names a probe module that does not exist and a code nobody defines."""

from stackpeel.checks.base import Check


class Undeclared(Check):
    id = "plugin.broken_decl.missing"
    title = "A check with a missing probe"
    layer = "system"
    probe = "nowhere.nothing"
    probes_dir = "/nonexistent-stackpeel-probes"
    codes = ("broken-decl-undefined",)

    def evaluate(self, facts, ctx):
        return ctx.ok("unreachable")
