"""Per-skill bundle files: the wire document, the supporting files and the zip of every skill.

For each winning skill:

* ``api/skills/<quote(id, safe='')>`` and the same bytes as ``….json``: the ``WireSkillDocument``;
* ``api/files/<id>/<path>``: every file of the skill (SKILL.md and its references/, scripts/,
  assets/…), byte for byte, except files withheld because a path is unsafe to publish or the file
  holds a likely secret (listed in the manifest);
* ``api/archives/<id>.zip``: the skill as a Claude-compatible zip (nested by ID, so the URL needs no
  escaped slash a static host would decode).

What a skill produced is remembered in the render cache under a key covering everything it depends
on, so an unchanged skill is not rendered again: its files are kept or hard-linked (see
``staging``).  The records go into ``ctx.options["artifacts"]`` for the well-known index and the
manifest.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from .. import secrets
from ..resolve_types import EmitContext, SourceSkill
from .common import encode_id, json_bytes, sha256_hex, wire_document
from .staging import Staging

# Agent Skills discovery path rules: printable ASCII without \ ? # [ ], no empty/./.. segment.
_SAFE_PATH = re.compile(r"[\x20-\x7e]+")
_FORBIDDEN = set('\\?#[]')
SECRET_SCAN_MAX = 1 << 20
# Never published whatever they contain (credentials by convention).
_SECRET_NAMES = re.compile(r"(^|/)(\.env(\..*)?|\.netrc|\.npmrc|\.pypirc|id_(rsa|dsa|ecdsa|ed25519)|.*\.(pem|key|p12|pfx))$")


@dataclass(frozen=True, slots=True)
class SkillArtifacts:
    """What one skill put in the bundle (all paths relative to the bundle root)."""

    id: str
    document: tuple[str, str, int]  # (path, sha256, size) of api/skills/<enc>
    files: tuple[tuple[str, str, int], ...]  # (path relative to the skill, sha256, size), published
    archive: tuple[str, str, int] | None  # the zip
    withheld: tuple[tuple[str, str], ...]  # (path, reason) not published

    def bundle_files(self) -> list[tuple[str, str, int]]:
        doc_path, sha, size = self.document
        out = [self.document, (doc_path + ".json", sha, size)]
        out.extend((f"api/files/{self.id}/{p}", s, n) for p, s, n in self.files)
        if self.archive:
            out.append(self.archive)
        return out

    def to_record(self) -> tuple:
        return (self.id, self.document, self.files, self.archive, self.withheld)

    @classmethod
    def from_record(cls, rec: tuple) -> SkillArtifacts:
        return cls(*rec)


def publishable(path: str) -> str | None:
    """Why ``path`` (relative to a skill) cannot be published, or None."""
    if not _SAFE_PATH.fullmatch(path) or any(c in _FORBIDDEN for c in path):
        return "path is not printable ASCII without \\ ? # [ ]"
    if path.startswith("/") or any(seg in ("", ".", "..") for seg in path.split("/")):
        return "path has an empty, '.' or '..' segment"
    if _SECRET_NAMES.search(path):
        return "credential file (never published)"
    return None


def _secret_in(source_path: str, size: int) -> str | None:
    if size > SECRET_SCAN_MAX:
        return None
    try:
        with open(source_path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = secrets.scan(text)
    if found:
        return f"likely secret ({found[0].kind}) at line {found[0].line}; not published"
    return None


def render_key(ctx: EmitContext, skill: SourceSkill) -> str:
    from ..cache import key_of

    files = tuple((f.path, f.sha256) for f in skill.files)
    return key_of("render", skill.id, skill.repository.name, skill.repository.tier.value, files,
                  int(ctx.options.get("epoch", 0)), ctx.options.get("config_hash", ""))


def render_skill(ctx: EmitContext, staging: Staging, skill: SourceSkill) -> SkillArtifacts:
    enc = encode_id(skill.id)
    doc = json_bytes(wire_document(skill))
    doc_rel = f"api/skills/{enc}"
    staging.write(doc_rel, doc)
    staging.link(doc_rel, doc_rel + ".json")
    published, withheld = [], []
    for f in skill.files:
        reason = publishable(f.path)
        if reason is None and f.path != "SKILL.md":
            reason = _secret_in(f.source_path, f.size)
        if reason is not None and f.path != "SKILL.md":
            withheld.append((f.path, reason))
            continue
        staging.copy(f"api/files/{skill.id}/{f.path}", f.source_path)
        published.append((f.path, f.sha256, f.size))
    archive = None
    if ctx.options.get("archives", True):
        from ..archive import write_skill_zip

        zip_rel = f"api/archives/{skill.id}.zip"
        dest = staging.out / zip_rel
        staging._clear(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_skill_zip(skill, dest, int(ctx.options.get("epoch", 0)))
        with open(dest, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        archive = (zip_rel, digest, os.path.getsize(dest))
    return SkillArtifacts(skill.id, (doc_rel, sha256_hex(doc), len(doc)), tuple(published), archive,
                          tuple(withheld))


def emit_skills(ctx: EmitContext) -> None:
    """Write (or reuse) every skill's files; record them in ``ctx.options["artifacts"]``."""
    staging: Staging = ctx.options.get("staging") or Staging(ctx.out)
    cache = ctx.options.get("cache")
    artifacts: dict = ctx.options.setdefault("artifacts", {})  # type: ignore[union-attr]
    progress = ctx.options.get("progress")
    todo = []
    for skill in ctx.resolution.skills:
        key = render_key(ctx, skill)
        rec = cache.get("render", key) if cache is not None else None
        art = SkillArtifacts.from_record(rec) if rec is not None else None
        if art is not None and all(staging.provide(p, (s, n)) for p, s, n in art.bundle_files()):
            if cache is not None:
                cache.stats.render_cached += 1
            artifacts[skill.id] = art
            if progress is not None:
                progress(1)
        else:
            todo.append((skill, key))
    # Rendering is independent per skill: forked workers write their files, return their records.
    from ..parallel import fork_map

    jobs = int(ctx.options.get("jobs", 1) or 1)  # type: ignore[call-overload]
    done = fork_map(lambda entry: render_skill(ctx, staging, entry[0]), todo, jobs, progress)
    for (skill, key), art in zip(todo, done):
        if cache is not None:
            cache.stats.rendered += 1
            cache.put("render", key, art.to_record())
        artifacts[skill.id] = art
    # Deterministic order whatever was reused or rendered.
    ordered = {s.id: artifacts[s.id] for s in ctx.resolution.skills}
    artifacts.clear()
    artifacts.update(ordered)
