import fla  # noqa: F401  (FLA probes Triton at import and falls back to CPU on failure)

print("fla imported")
