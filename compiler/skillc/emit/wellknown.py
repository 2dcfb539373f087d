"""The discovery indexes that skills installers read (issue 19; formats: research/clients.md §1).

* ``.well-known/agent-skills/index.json``: the agentskills.io discovery 0.2.0 shape that
  ``npx skills`` 1.7+ reads: ``$schema``, and per skill ``name`` (its flat name, ``flatnames``),
  ``description``, ``type: "archive"``, ``url`` (relative to the index) and ``digest`` (SHA-256 of
  the archive's bytes; a wrong one makes the client drop the skill).  The archive holds the skill
  folder's content at its root.  Each entry also keeps the Cloudflare draft's per-file data, which
  that client ignores: ``id`` (the canonical skill ID), ``files`` (``[{path, digest}]``, each the
  SHA-256 of one file the archive holds) and ``files_digest`` (the draft's skill digest over that
  list).  The two formats give ``digest`` different meanings, so the draft's lives in
  ``files_digest``.
* ``.well-known/skills/index.json`` and ``.well-known/skills/<name>/<path>``: the legacy v0.1 layout
  (no ``$schema``, ``files`` as strings, no digest) that older clients read; a reader rejects the
  whole index for one entry it finds invalid, so a skill that cannot be listed validly is left out.

Pure functions build both from ``DiscoverySkill`` records; ``emit_well_known`` (the build) and
``skillc export --target well-known`` write them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from urllib.parse import quote

from ..jsonio import json_string
from ..resolve_types import EmitContext
from .common import pretty_json_rows, sha256_hex, skill_digest, write

INDEX = ".well-known/agent-skills/index.json"
LEGACY_DIR = ".well-known/skills"
LEGACY_INDEX = f"{LEGACY_DIR}/index.json"
SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
VERSION = "0.2.0"  # (the Cloudflare draft's field; npx skills reads $schema, never this)
MAX_DESCRIPTION = 1024  # npx skills drops an entry with a longer description
_path = itemgetter(0)  # (of a ``(path, sha256)`` pair: asked three times for each of 10,000 skills)


@dataclass(frozen=True, slots=True)
class DiscoverySkill:
    """One skill as the discovery indexes list it."""

    id: str
    name: str  # flat name
    description: str
    archive: str  # where the archive is, relative to the output root
    archive_sha256: str
    files: tuple[tuple[str, str], ...]  # (path, sha256) of each file the archive holds

    @property
    def listable(self) -> bool:
        """Whether a client takes the entry (one it refuses drops the skill, or the whole legacy index)."""
        return 0 < len(self.description) <= MAX_DESCRIPTION and "SKILL.md" in map(_path, self.files)


def _archive_order(files: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The archive's files as the indexes list them: SKILL.md first, then in path byte order."""
    return sorted(files, key=lambda f: (f[0] != "SKILL.md", f[0].encode("utf-8")))


def index_row(skill: DiscoverySkill, url: str) -> str:
    """The skill's ``agent-skills/index.json`` entry as compact JSON (``compact_json`` of the entry,
    written out with its keys in sorted order: 10,000 ``json.dumps`` calls cost twice as much)."""
    files = _archive_order(skill.files)
    listed = ",".join(f'{{"digest":"sha256:{s}","path":{json_string(p)}}}' for p, s in files)
    return (f'{{"description":{json_string(skill.description)},"digest":"sha256:{skill.archive_sha256}",'
            f'"files":[{listed}],"files_digest":"{skill_digest(files)}","id":{json_string(skill.id)},'
            f'"name":{json_string(skill.name)},"type":"archive","url":{json_string(url)}}}')


def agent_skills_index(skills: Iterable[DiscoverySkill], url_of: Callable[[DiscoverySkill], str]) -> bytes:
    """``.well-known/agent-skills/index.json``; ``url_of`` gives an archive's URL relative to the index."""
    return index_document([index_row(s, url_of(s)) for s in skills if s.listable])


def index_document(rows: list[str]) -> bytes:
    """``.well-known/agent-skills/index.json`` of the listable skills' ``index_row``s."""
    return pretty_json_rows({"$schema": SCHEMA, "version": VERSION}, "skills", rows)


# Files a browser runs or applies: the legacy tree is plain files outside api/, which a static host
# without the routing configs serves as they are on the site's origin, so these are left out of it
# (the archive of the agentskills.io index still carries them).
ACTIVE_SUFFIXES = (".html", ".htm", ".xhtml", ".xht", ".shtml", ".js", ".mjs", ".cjs", ".css", ".xml", ".xsl",
                   ".xslt", ".svg")


def legacy_files(skill: DiscoverySkill) -> list[str]:
    """The files a legacy entry lists: a path holding ``..`` anywhere is refused by the reader
    (with the whole index), so such a file is not listed; nor is active content (``ACTIVE_SUFFIXES``)."""
    return [p for p, _ in _archive_order(skill.files) if ".." not in p and not p.lower().endswith(ACTIVE_SUFFIXES)]


def legacy_row(skill: DiscoverySkill) -> str:
    """The skill's ``skills/index.json`` entry as compact JSON (written out, as ``index_row``)."""
    files = ",".join(json_string(p) for p in legacy_files(skill))
    return (f'{{"description":{json_string(skill.description)},"files":[{files}],'
            f'"name":{json_string(skill.name)}}}')


def legacy_index(skills: Iterable[DiscoverySkill]) -> bytes:
    """``.well-known/skills/index.json`` (v0.1)."""
    return legacy_document([legacy_row(s) for s in skills if s.listable])


def legacy_document(rows: list[str]) -> bytes:
    """``.well-known/skills/index.json`` of the listable skills' ``legacy_row``s."""
    return pretty_json_rows({}, "skills", rows)


def relative_url(index: str, target: str) -> str:
    """``target`` (a path from the output root) as a URL relative to ``index``'s folder, so a bundle
    served below a path prefix still resolves it."""
    up = "../" * index.count("/")
    return up + quote(target, safe="/")


def discovery_skills(ctx: EmitContext) -> list[DiscoverySkill]:
    """The build's skills with their discovery archive (``api/discovery/<id>.zip``), in ID order."""
    artifacts = ctx.collected.artifacts
    names = ctx.resolution.flat_names
    out = []
    for skill in ctx.resolution.skills:
        art = artifacts.get(skill.id)
        if art is None or art.rooted is None or skill.id not in names:
            continue
        # (the archive names the main file SKILL.md whatever its spelling; it is always files[0])
        sha = {("SKILL.md" if i == 0 else p): s for i, (p, s, _) in enumerate(art.files)}
        files = tuple((p, sha[p]) for p in art.rooted_files)
        out.append(DiscoverySkill(skill.id, names[skill.id], skill.description, art.rooted[0], art.rooted[1], files))
    return out


def legacy_tree(ctx: EmitContext, skills: Sequence[DiscoverySkill]) -> dict[str, tuple[str, tuple[str, int]]]:
    """Each file of the legacy tree: its path -> (the published file it is another name of, no
    second copy on disk; its ``(sha256, size)``, from the artifacts: the manifest then reads none
    of 13,000 files again).  SKILL.md is published under the spelling it had (skill.md too), while
    the archive and this tree call it SKILL.md."""
    artifacts = ctx.collected.artifacts
    out: dict[str, tuple[str, tuple[str, int]]] = {}
    for skill in skills:
        if skill.listable:
            art = artifacts[skill.id]
            published = {("SKILL.md" if i == 0 else p): (p, s, n) for i, (p, s, n) in enumerate(art.files)}
            for path in legacy_files(skill):
                spelled, sha, size = published[path]
                out[f"{LEGACY_DIR}/{skill.name}/{path}"] = (f"api/files/{skill.id}/{spelled}", (sha, size))
    return out


def write_legacy_tree(skills: Sequence[DiscoverySkill], place: Callable[[DiscoverySkill, str, str], None]) -> None:
    """Put each listed file at ``.well-known/skills/<name>/<path>``: ``place(skill, path, dest)``."""
    for skill in skills:
        if skill.listable:
            for path in legacy_files(skill):
                place(skill, path, f"{LEGACY_DIR}/{skill.name}/{path}")


ROWS_TABLE = "wellknown"  # (skillc.cache.TABLES) the discovery indexes' rows of each skill


def _row_key(skill: DiscoverySkill, art) -> str:
    """What a skill's rows are made of: its archive's bytes (every path and file it holds), its wire
    document's (ID, description) and its flat name.  Plain text, not hashed (10,000 a build): the
    two hashes have a fixed length, and the name ends it."""
    return f"{skill.archive_sha256}{art.document[1]}{skill.name}"


def discovery_rows(ctx: EmitContext, skills: Sequence[DiscoverySkill]) -> tuple[list[str], list[str]]:
    """The ``index_row`` and ``legacy_row`` of each listable skill, through the build cache (a
    rebuild writes the rows of the skills that changed: 10,000 rows cost a tenth of a second)."""
    cache, artifacts = ctx.options.cache, ctx.collected.artifacts
    index_rows, legacy_rows = [], []
    for skill in skills:
        if not skill.listable:
            continue
        key = _row_key(skill, artifacts[skill.id]) if cache is not None else ""
        rows = cache.get(ROWS_TABLE, key) if cache is not None else None
        if rows is None:
            rows = (index_row(skill, relative_url(INDEX, skill.archive)), legacy_row(skill))
            if cache is not None:
                cache.put(ROWS_TABLE, key, rows)
        index_rows.append(rows[0])
        legacy_rows.append(rows[1])
    return index_rows, legacy_rows


def emit_well_known(ctx: EmitContext) -> None:
    skills = discovery_skills(ctx)
    index_rows, legacy_rows = discovery_rows(ctx, skills)
    index, legacy = index_document(index_rows), legacy_document(legacy_rows)
    tree = legacy_tree(ctx, skills)
    write(ctx.out, INDEX, index)
    staging = ctx.options.staging
    if staging is None:
        write(ctx.out, LEGACY_INDEX, legacy)
        for dest, (published, _) in tree.items():
            write(ctx.out, dest, (ctx.out / published).read_bytes())
    else:
        # The recycled generation's tree is brought up to date file by file: a file that already is
        # the published file's inode stays, another is replaced, what is gone is removed (``Staging``).
        staging.reclaim(LEGACY_DIR)
        staging.write(LEGACY_INDEX, legacy)
        for dest, (published, _) in tree.items():
            staging.link(published, dest)
        staging.settle()
    # The tree holds exactly these files (the manifest need not walk it, nor read them)
    known = ctx.collected.known
    known.update((dest, entry) for dest, (_, entry) in tree.items())
    known.update((rel, (sha256_hex(data), len(data))) for rel, data in ((INDEX, index), (LEGACY_INDEX, legacy)))
    ctx.collected.listed.add(LEGACY_DIR)
