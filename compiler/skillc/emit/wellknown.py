"""``.well-known/agent-skills/index.json``: the Agent Skills discovery index, v0.2.0
(research/registry.md §2.3), with per-file and per-skill digests.

Each entry's ``name`` is the skill's canonical ID (unique in the bundle; the spec ``name`` can
repeat across collections).  Files are served at ``/.well-known/agent-skills/<id>/<path>`` by
``skillc serve`` and the routing configs (which map that prefix to ``/api/files/``), and the
``package`` is the skill's zip under ``api/archives/`` (a URL relative to the index).
"""

from __future__ import annotations

from urllib.parse import quote

from ..resolve_types import EmitContext
from .common import compact_json, pretty_json_rows, skill_digest, write

INDEX = ".well-known/agent-skills/index.json"
VERSION = "0.2.0"


def index_entry(skill_id: str, description: str, files, archive: tuple[str, str, int] | None) -> dict:
    """One skill's entry: ``files`` are ``(path, sha256, size)`` of what is published, its SKILL.md
    first (whatever its spelling: ``skill.md`` is published so); listed so, then the others in byte order."""
    files = [*files[:1], *sorted(files[1:], key=lambda f: f[0].encode("utf-8"))]
    entry = {
        "name": skill_id,
        "description": description,
        "digest": skill_digest((p, s) for p, s, _ in files),
        "files": [{"path": p, "digest": "sha256:" + s} for p, s, _ in files],
    }
    if archive is not None:
        # Relative to the index, so a bundle served below a path prefix still resolves it.
        entry["package"] = {"url": "../../" + quote(archive[0], safe="/"), "digest": "sha256:" + archive[1]}
    return entry


def index_rows(ctx: EmitContext) -> list[str]:
    """Each skill's entry as compact JSON (made with its files and cached: ``SkillArtifacts.index_row``)."""
    artifacts = ctx.options.get("artifacts") or {}
    rows = []
    for skill in ctx.resolution.skills:
        art = artifacts.get(skill.id)
        if art is not None and art.index_row:
            rows.append(art.index_row)
        elif art is not None:
            rows.append(compact_json(index_entry(skill.id, skill.description, art.files, art.archive)))
        else:
            files = [(f.path, f.sha256, f.size) for f in skill.files]
            rows.append(compact_json(index_entry(skill.id, skill.description, files, None)))
    return rows


def emit_well_known(ctx: EmitContext) -> None:
    write(ctx.out, INDEX, pretty_json_rows({"version": VERSION}, "skills", index_rows(ctx)))
