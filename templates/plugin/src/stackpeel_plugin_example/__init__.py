"""An example stackpeel plugin (docs/plugins.md)."""
