"""stackpeel plugins for stackpeel's tests."""
