"""Orchestration: ``pipeline.py`` runs discover, parse, validate, resolve, index and emit, then swaps the output in."""
