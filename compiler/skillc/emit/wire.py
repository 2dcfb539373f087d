"""The Meerkat Skills API list endpoints (research/frameworks.md §1.5) and the inventory.

* ``api/skills.json`` — ``{"skills":[WireSkillDescriptor…]}`` in ID byte order.  A static host
  cannot hold a file ``api/skills`` beside the folder ``api/skills/``; the routing configs and
  ``skillc serve`` map ``/api/skills`` to this file, and ``api/skills/index.html`` holds the same
  bytes so a host without routing (``/api/skills`` → 301 → ``/api/skills/``) still answers.
* ``api/skill-collections`` and ``….json`` — ``{"collections":[{"path","description","count"}…]}``.
* ``api/inventory.xml`` — Meerkat's inventory block (flat up to ``inventory_threshold``).
"""

from __future__ import annotations

from ..resolve_types import EmitContext
from .common import compact_json, json_bytes, wire_descriptor, write
from .render._templates import xml_chars
from .render.meerkat import DEFAULT_INVENTORY_THRESHOLD, render_inventory


def emit_lists(ctx: EmitContext) -> None:
    res = ctx.resolution
    artifacts = ctx.collected.artifacts
    rows = []
    for s in res.skills:  # each descriptor's JSON was made (or cached) with the skill's files
        art = artifacts.get(s.id)  # type: ignore[union-attr]
        rows.append(art.descriptor if art is not None and art.descriptor else compact_json(wire_descriptor(s)))
    listing = ('{"skills":[' + ",".join(rows) + "]}\n").encode("utf-8")  # = json_bytes({"skills": [...]})
    write(ctx.out, "api/skills.json", listing)
    write(ctx.out, "api/skills/index.html", listing)
    collections = json_bytes(
        {"collections": [{"path": c.path, "description": c.description, "count": c.count} for c in res.collections]}
    )
    write(ctx.out, "api/skill-collections", collections)
    write(ctx.out, "api/skill-collections.json", collections)


def emit_inventory(ctx: EmitContext) -> None:
    threshold = ctx.resolution.settings.get("inventory_threshold", DEFAULT_INVENTORY_THRESHOLD)
    text = render_inventory(ctx.resolution.skills, ctx.resolution.collections, int(threshold))  # type: ignore[arg-type]
    write(ctx.out, "api/inventory.xml", xml_chars(text).encode("utf-8"))
