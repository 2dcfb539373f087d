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
from .common import json_bytes, skill_digest, write

INDEX = ".well-known/agent-skills/index.json"
VERSION = "0.2.0"


def index_document(ctx: EmitContext) -> dict:
    artifacts = ctx.options.get("artifacts") or {}
    skills = []
    for skill in ctx.resolution.skills:
        art = artifacts.get(skill.id)
        files = list(art.files) if art is not None else [(f.path, f.sha256, f.size) for f in skill.files]
        # SKILL.md first, then byte order (the digest itself is order-independent).
        files.sort(key=lambda f: (f[0] != "SKILL.md", f[0].encode("utf-8")))
        entry = {
            "name": skill.id,
            "description": skill.description,
            "digest": skill_digest((p, s) for p, s, _ in files),
            "files": [{"path": p, "digest": "sha256:" + s} for p, s, _ in files],
        }
        if art is not None and art.archive is not None:
            # Relative to the index, so a bundle served below a path prefix still resolves it.
            url = "../../" + quote(art.archive[0], safe="/")
            entry["package"] = {"url": url, "digest": "sha256:" + art.archive[1]}
        skills.append(entry)
    return {"version": VERSION, "skills": skills}


def emit_well_known(ctx: EmitContext) -> None:
    write(ctx.out, INDEX, json_bytes(index_document(ctx), pretty=True))
