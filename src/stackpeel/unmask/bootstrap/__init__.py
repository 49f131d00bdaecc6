"""Files copied into the monitored Python's PYTHONPATH by stackpeel.unmask.launcher (never imported from here)."""
