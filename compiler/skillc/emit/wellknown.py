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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from urllib.parse import quote

from ..jsonio import json_string
from ..resolve_types import EmitContext, SourceSkill
from .common import pretty_json_rows, sha256_hex, skill_digest, write

INDEX = ".well-known/agent-skills/index.json"
LEGACY_DIR = ".well-known/skills"
LEGACY_INDEX = f"{LEGACY_DIR}/index.json"
# Both indexes are pretty JSON, a skill's row on each line (``pretty_json_rows``): the publishing gate
# may scan them in pieces cut at line breaks (``gate.unchecked_files``), a rebuild the changed ones.
PRETTY_JSON = (INDEX, LEGACY_INDEX)
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


def discovery_skill(skill: SourceSkill, art, names: Mapping[str, str]) -> DiscoverySkill:
    """``skill`` as the discovery indexes list it (its artifacts ``art``, with a discovery archive;
    its flat name in ``names``)."""
    # (the archive names the main file SKILL.md whatever its spelling; it is always files[0])
    sha = {("SKILL.md" if i == 0 else p): s for i, (p, s, _) in enumerate(art.files)}
    files = tuple((p, sha[p]) for p in art.rooted_files)
    return DiscoverySkill(skill.id, names[skill.id], skill.description, art.rooted[0], art.rooted[1], files)


def legacy_entries(skill: DiscoverySkill, art) -> tuple[tuple[str, str, str, int], ...]:
    """The files of a listable skill's legacy tree, each ``(path, published file, sha256, size)``.
    SKILL.md is published under the spelling it had (skill.md too), while the archive and this
    tree call it SKILL.md."""
    published = {("SKILL.md" if i == 0 else p): (p, s, n) for i, (p, s, n) in enumerate(art.files)}
    return tuple((f"{LEGACY_DIR}/{skill.name}/{path}", f"api/files/{skill.id}/{spelled}", sha, size)
                 for path in legacy_files(skill) for spelled, sha, size in (published[path],))


def write_legacy_tree(skills: Sequence[DiscoverySkill], place: Callable[[DiscoverySkill, str, str], None]) -> None:
    """Put each listed file at ``.well-known/skills/<name>/<path>``: ``place(skill, path, dest)``."""
    for skill in skills:
        if skill.listable:
            for path in legacy_files(skill):
                place(skill, path, f"{LEGACY_DIR}/{skill.name}/{path}")


ROWS_TABLE = "wellknown"  # (skillc.cache.TABLES) the discovery indexes' rows and legacy files of each skill


@dataclass(frozen=True)
class Discovery:
    """What the discovery indexes list: the listable skills' ``index_row``s and ``legacy_row``s, and
    the legacy tree: each file's path -> (the published file it is another name of, no second
    copy on disk; its ``(sha256, size)``, so the manifest reads none of 13,000 files again)."""

    index_rows: list[str]
    legacy_rows: list[str]
    tree: dict[str, tuple[str, tuple[str, int]]]


def _row_key(skill: SourceSkill, art, name: str) -> str:
    """What a skill's record is made of: its archive's bytes (every path and file it holds, so the
    published files' digests and sizes), its wire document's (ID, description, files as published),
    the spelling of its main file, its ID and its flat name.  Plain text, not hashed (10,000 a
    build): the two hashes have a fixed length, and NUL ends the others."""
    return f"{art.rooted[1]}{art.document[1]}{art.files[0][0]}\0{skill.id}\0{name}"


def discovery(ctx: EmitContext) -> Discovery:
    """``Discovery`` of the build's skills through the build cache: an unchanged skill's rows and
    legacy files are one record, found by one key made of its artifacts (a rebuild computes the
    records of the skills that changed: 10,000 skills' cost a fifth of a second)."""
    cache, artifacts, names = ctx.options.cache, ctx.collected.artifacts, ctx.resolution.flat_names
    found = Discovery([], [], {})
    for skill in ctx.resolution.skills:
        art = artifacts.get(skill.id)
        if art is None or art.rooted is None or skill.id not in names:
            continue
        key = _row_key(skill, art, names[skill.id]) if cache is not None else ""
        record = cache.get(ROWS_TABLE, key) if cache is not None else None
        if record is None:
            record = _record(discovery_skill(skill, art, names), art)
            if record is None:
                continue
            if cache is not None:
                cache.put(ROWS_TABLE, key, record)
        found.index_rows.append(record[0])
        found.legacy_rows.append(record[1])
        found.tree.update((dest, (published, (sha, size))) for dest, published, sha, size in record[2])
    return found


def _record(skill: DiscoverySkill, art) -> tuple | None:
    """A listable skill's cached record: ``(index_row, legacy_row, legacy_entries)``; None otherwise."""
    if not skill.listable:
        return None
    return index_row(skill, relative_url(INDEX, skill.archive)), legacy_row(skill), legacy_entries(skill, art)


def emit_well_known(ctx: EmitContext) -> None:
    found = discovery(ctx)
    index, legacy, tree = index_document(found.index_rows), legacy_document(found.legacy_rows), found.tree
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
