"""A plugin whose evaluate raises (its probe is stackpeel's own toolchain probe)."""

from stackpeel.checks.base import Check


class Divides(Check):
    id = "plugin.broken_eval.divides"
    title = "An evaluate that divides by zero"
    layer = "toolchain"
    requires = ("toolchain.c_compiler",)
    codes = ("broken-eval-never",)

    def evaluate(self, facts, ctx):
        return ctx.ok(str(len(ctx.dep("toolchain.c_compiler")) / 0))
