"""The emit stage: write a ``Resolution`` into a bundle directory.

``EMITTERS`` (``emitters.py``) is the ordered list of ``(name, fn(ctx: EmitContext) -> None)`` that ``skillc build``
runs into its staging directory; other stages register theirs by appending (the search index, the
memory snapshot).  An emitter writes only below ``ctx.out``, deterministically, and never rewrites a
file in place that it did not create in this build.  The manifest (``emit.manifest``) is written
after all of them, from the files found under ``ctx.out``.

Each emitter reads ``ctx.options`` (an ``EmitOptions``: frozen, typed, set by ``skillc.build``:
``staging`` and ``cache`` for incremental reuse, ``site``, ``lint_summary``, ``epoch`` for zip
timestamps, ``config_hash``, …) and writes what it hands back into ``ctx.collected`` (an
``EmitCollected``: ``artifacts``, the per-skill outputs the ``skills`` emitter fills; ``diagnostics``;
``notes``).
"""

from __future__ import annotations

# ``EMITTERS`` and ``Emitter`` live in ``emitters.py`` and are imported on first use (PEP 562): a
# process that needs one module of this package (the docs site's mkdocs child) does not import them all.


def __getattr__(name: str):
    if name in ("EMITTERS", "Emitter"):
        from . import emitters

        return getattr(emitters, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EMITTERS", "Emitter"]
