"""Memory as code: the model, loading, importers, consolidation, redaction, the frozen snapshot, recall.

Stages (each a module with pure functions in the middle, I/O at the edges)::

    load / importers / extract  →  redact  →  consolidate  →  snapshot (json, sqlite, prompt, skill blocks)
                                                                  ↑
                                                     recall.MemoryIndex reads it back

``skillc memory …`` (``commands/memory.py``) and the bundle emitter (``memory/emit.py``) drive them
through ``pipeline``.
"""
