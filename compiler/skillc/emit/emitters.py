"""The emitters ``skillc build`` runs, in order (``skillc.emit.EMITTERS``: see the package's docstring).

Kept out of ``skillc/emit/__init__.py`` so that importing one module of the package (the docs site's
mkdocs child imports ``skillc.emit.docsite.bounded`` and ``markdown_config``) does not import every
emitter and what they need (the memory, index and lint stages: ≈ 0.35 s of the child's start).
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
