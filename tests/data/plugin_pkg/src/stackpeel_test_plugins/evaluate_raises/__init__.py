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


class Undeclared(Check):
    """Emits a code it does not declare: an error wherever STACKPEEL_STRICT_CODES=1 (the tests),
    as for a built-in check."""

    id = "plugin.broken_eval.undeclared"
    title = "An evaluate that emits a code it does not declare"
    layer = "toolchain"
    codes = ()

    def evaluate(self, facts, ctx):
        return ctx.verdict("says something it did not declare", ctx.finding("broken-eval-never"))
