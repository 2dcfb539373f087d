"""Stage 3, validate: the lint engine, the rules (registry, loader, built-in families), safe fixes and the report renderers."""
