"""pytest plugin: see below."""
