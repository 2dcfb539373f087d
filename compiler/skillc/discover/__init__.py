"""Stage 1, discover: walk a skills folder into a typed Discovery (never follows links)."""
