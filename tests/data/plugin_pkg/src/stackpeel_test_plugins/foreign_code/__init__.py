"""A plugin that tries to redefine a built-in finding code."""

from stackpeel.checks.base import Check


class Shadow(Check):
    id = "plugin.broken_ns.shadow"
    title = "A check that redefines no-c-compiler"
    layer = "toolchain"
    codes = ("no-c-compiler",)

    def evaluate(self, facts, ctx):
        return ctx.ok("unreachable")
