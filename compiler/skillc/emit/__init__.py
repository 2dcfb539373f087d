"""The emit stage: write a ``Resolution`` into a bundle directory.

``EMITTERS`` is the ordered list of ``(name, fn(ctx: EmitContext) -> None)`` that ``skillc build``
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

from collections.abc import Callable

from ..index.emit import emit_index
from ..memory.emit import emit_memory
from ..resolve_types import EmitContext
from .precompressed import emit_precompressed
from .routing import emit_routing
from .schemas import emit_schemas
from .site import emit_site
from .skills import emit_skills
from .wellknown import emit_well_known
from .wire import emit_inventory, emit_lists

Emitter = Callable[[EmitContext], None]

EMITTERS: list[tuple[str, Emitter]] = [
    ("skills", emit_skills),  # api/skills/<id>, api/files/<id>/…, api/archives/<id>.zip (first: others read artifacts)
    ("lists", emit_lists),  # api/skills.json, api/skill-collections
    ("inventory", emit_inventory),  # api/inventory.xml
    ("well-known", emit_well_known),  # .well-known/agent-skills/index.json
    ("schemas", emit_schemas),  # api/schemas/*.json
    ("routing", emit_routing),  # _routing/nginx.conf, _routing/Caddyfile, _redirects, _headers
    ("index", emit_index),  # api/index/: BM25 index, select.json, skillc-index.js, whoosh/ (issue 4)
    ("memory", emit_memory),  # api/memory/: snapshot.json/.sqlite, prompt.md, skills/<id>.md (issue 5)
    ("site", emit_site),  # index.html (unless --no-site)
    ("precompressed", emit_precompressed),  # <file>.gz of the index and site assets (last: it reads theirs)
]

__all__ = ["EMITTERS", "Emitter"]
