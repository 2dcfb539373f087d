"""One module per CLI command; ``skillc.cli`` imports them lazily."""
