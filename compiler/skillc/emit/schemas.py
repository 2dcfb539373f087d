"""``api/schemas/``: the JSON Schemas of everything in the bundle (wire API, manifest, discovery
index, frontmatter, search and memory files…): a copy of the project's ``schemas/*.json``."""

from __future__ import annotations

from ..resolve_types import EmitContext
from ..resources import data_dir
from .common import write


def emit_schemas(ctx: EmitContext) -> None:
    folder = data_dir("schemas")
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name.encode()):
        write(ctx.out, f"api/schemas/{path.name}", path.read_bytes())
