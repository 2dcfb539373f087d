"""``api/manifest.json``: what the bundle holds and what went into it.

Every file of the bundle (but the manifest itself) with its SHA-256 and size, the inputs
(repositories, resolved commits, configuration files with their hashes), the settings, the
shadowing table, the excluded skills and withheld files, the lint summary, and the tool and schema
versions.  ``skillc build`` writes it last, after every emitter; it is also how a later build
recognises a folder as a bundle (and reuses its files) and how ``skillc serve`` computes ETags.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..resolve_types import EmitContext
from .common import json_bytes, write

MANIFEST = "api/manifest.json"
KIND = "skillc-bundle"
MANIFEST_VERSION = 1
WIRE_FORMAT = "meerkat-skills-api/2.0"


def walk_files(root: Path) -> list[str]:
    """Every regular file below ``root`` (posix paths, byte order); links and specials are refused."""
    out: list[str] = []
    stack = [(str(root), "")]
    while stack:
        d, rel = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                r = f"{rel}/{e.name}" if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    stack.append((e.path, r))
                elif e.is_file(follow_symlinks=False):
                    out.append(r)
                else:
                    raise OSError(f"{r}: not a regular file (symbolic link or special file) in the bundle")
    out.sort(key=lambda p: p.encode("utf-8", "surrogateescape"))
    return out


def file_entries(root: Path, known: Mapping[str, tuple[str, int]]) -> list[dict[str, Any]]:
    entries = []
    for rel in walk_files(root):
        if rel == MANIFEST:
            continue
        hit = known.get(rel)
        if hit is None:
            with open(root / rel, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                hit = (hashlib.file_digest(fh, "sha256").hexdigest(), size)
        entries.append({"path": rel, "sha256": hit[0], "size": hit[1]})
    return entries


def shown_location(kind: str, location: str, ctx: EmitContext) -> str:
    """A local path relative to the build's working folder when inside it (so the manifest does not
    depend on where a checkout lives); the embedded repository by name."""
    if kind == "embedded":
        return "embedded:skills"
    cwd = ctx.options.get("cwd")
    if kind in ("filesystem", "zip") and cwd and os.path.isabs(location):
        rel = os.path.relpath(location, cwd)
        if not rel.startswith(".."):
            return Path(rel).as_posix()
    return location


def manifest_document(ctx: EmitContext) -> dict[str, Any]:
    res = ctx.resolution
    artifacts = ctx.options.get("artifacts") or {}
    known: dict[str, tuple[str, int]] = {}
    withheld = []
    for art in artifacts.values():
        for path, sha, size in art.bundle_files():
            known[path] = (sha, size)
        withheld.extend({"id": art.id, "path": p, "reason": r} for p, r in art.withheld)
    epoch = ctx.options.get("source_date_epoch")
    return {
        "kind": KIND,
        "manifest_version": MANIFEST_VERSION,
        "tool": {"name": "skillc", "version": __version__},
        "formats": {
            "wire": WIRE_FORMAT,
            "well_known": "agent-skills-discovery/0.2.0",
            "schemas": "api/schemas/",
        },
        "source_date_epoch": epoch,
        "settings": {k: res.settings[k] for k in sorted(res.settings)},
        "inputs": [
            {"repository": i.repository, "type": i.type, "location": shown_location(i.type, i.location, ctx),
             "resolved": i.resolved}
            for i in res.inputs
        ],
        "config_files": [{"path": p, "sha256": h} for p, h in ctx.options.get("config_files", ())],
        "config_hash": ctx.options.get("config_hash", ""),
        "skills": len(res.skills),
        "collections": len(res.collections),
        "shadowing": [
            {"id": s.id, "winner": s.winner, "loser": s.loser, "winner_source": s.winner_source,
             "loser_source": s.loser_source, "winner_priority": s.winner_priority,
             "loser_priority": s.loser_priority}
            for s in res.shadowed
        ],
        "excluded": [{"id": e, "reason": ctx.options.get("excluded_reasons", {}).get(e, "lint errors")}
                     for e in res.excluded],
        "withheld": sorted(withheld, key=lambda w: (w["id"].encode(), w["path"].encode())),
        "lint": ctx.options.get("lint_summary", {}),
        "files": file_entries(ctx.out, known),
    }


def write_manifest(ctx: EmitContext) -> dict[str, Any]:
    doc = manifest_document(ctx)
    write(ctx.out, MANIFEST, json_bytes(doc, pretty=True))
    return doc


def read_manifest(bundle: Path) -> dict[str, Any] | None:
    """The manifest of a bundle, or None when ``bundle`` holds no (readable) skillc manifest."""
    try:
        doc = json.loads((bundle / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("files"), list):
        return None
    return doc


def manifest_entries(doc: Mapping[str, Any] | None) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for f in (doc or {}).get("files", []):
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            out[f["path"]] = (f.get("sha256"), f.get("size"))
    return out
