"""Stage 2, parse: bytes of a SKILL.md or convention file into a typed Document (never raises)."""
