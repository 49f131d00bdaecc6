"""A plugin whose module raises at import."""

raise ImportError("stackpeel-test-plugins: this plugin needs libfoo, which is not installed")
