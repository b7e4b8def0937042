"""The `deftly` command line."""
