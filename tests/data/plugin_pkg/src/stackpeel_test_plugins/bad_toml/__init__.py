"""A plugin whose knowledge file is not valid TOML."""

from stackpeel.checks.base import Check


class Fine(Check):
    id = "plugin.broken_toml.fine"
    title = "A check whose codes' file does not parse"
    layer = "system"
    codes = ("broken-toml-code",)

    def evaluate(self, facts, ctx):
        return ctx.ok("fine")
