"""`deftly run`: print mode, --json, the interactive session."""
