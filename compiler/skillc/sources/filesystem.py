"""Filesystem repositories (and the shared directory lister every other source delegates to)."""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..cache import BuildCache, diagnostics_in, diagnostics_out, key_of, stat_settled, stat_signature
from ..config.files import anchored
from ..discover.walk import SKIP_DIRS, DiscoveryOptions, WalkRecord, discover, listing_key, path_key
from ..model import DiscoveredItem, Discovery, ItemKind
from ..resolve_types import EMPTY_REPOSITORY, Repository, SkillFile, SourceInput, SourceListing, SourceSkill
from ..validate.lint import LintConfig, read_item
from .base import ReadItem, SourceError

SKIP_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
SKIP_SUFFIXES = (".pyc", ".pyo")


def id_selected(skill_id: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    """Include/exclude globs (fnmatch, case-sensitive) match an ID or any of its collections."""
    parts = skill_id.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]

    def hit(globs: tuple[str, ...]) -> bool:
        return any(fnmatch.fnmatchcase(c, g.strip("/")) for g in globs for c in candidates)

    return (not include or hit(include)) and not hit(exclude)


FileDigest = Callable[[str, os.stat_result], tuple[str, int]]  # (path, stat) -> (sha256 hex, size)


def hash_file(path: str, st: os.stat_result) -> tuple[str, int]:
    """SHA-256 and size of a file, read in chunks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest(), os.fstat(fh.fileno()).st_size


def skill_files(root_abs: str, skill_dir: str, nested: set[str], skill_file: str,
                digest: FileDigest = hash_file, cache: BuildCache | None = None,
                seen: dict[str, tuple] | None = None) -> list[SkillFile]:
    """The supporting files of one skill (everything but its SKILL.md), in byte order.

    Skips VCS/build folders, OS junk, nested skills (they are skills of their own), directory
    links, and file links that resolve outside the repository root.  ``digest(path, stat)`` gives
    each file's hash (the build's passes through its stat cache).  With ``cache``, a listing is
    remembered with the stat of every folder it read, and used again (no folder listed, each file
    only stat'ed) while those stats are unchanged and settled (see ``BuildCache.file_digest``).
    ``seen``: the stat signatures this build already took of folders (by path: the repository's
    remembered walk checked them), not taken again.
    """
    base = root_abs
    if skill_dir:  # (as the discovery joins paths: an f-string costs a third of os.path.join)
        base = f"{root_abs}/{skill_dir}" if root_abs[-1:] != "/" else os.path.join(root_abs, skill_dir)
    if cache is not None:
        hit = _remembered_listing(cache, base, skill_dir, nested, digest, seen or {})
        if hit is not None:
            return hit
        cache.stats.listed += 1
    out: list[SkillFile] = []
    dirs: list[tuple[str, tuple]] = []  # (folder relative to the skill, its stat signature) of every folder read
    skipped: list[str] = []  # folders left out because they are nested skills
    clean = cache is not None  # no link and no error: the listing may be remembered
    try:
        dirs.append(("", stat_signature(os.stat(base))))  # before listing it: a later change moves its times
    except OSError:
        clean = False
    stack = [(base, "")]
    while stack:
        dir_abs, rel_dir = stack.pop()
        try:
            with os.scandir(dir_abs) as it:
                entries = list(it)
        except OSError:
            clean = False
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            repo_rel = f"{skill_dir}/{rel}" if skill_dir else rel
            try:
                if entry.is_symlink():
                    clean = False
                    target = os.path.realpath(entry.path)
                    if not target.startswith(root_abs + os.sep) or not os.path.isfile(target):
                        continue  # a link out of the repository, a dangling link or a directory link
                    path_on_disk = target
                    st = os.stat(target)
                else:
                    st = entry.stat(follow_symlinks=False)
                    path_on_disk = entry.path
            except OSError:
                clean = False
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in SKIP_DIRS:
                    continue
                if repo_rel in nested:
                    skipped.append(rel)
                    continue
                dirs.append((rel, stat_signature(st)))
                stack.append((entry.path, rel))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if (not rel_dir and entry.name == skill_file) or entry.name in SKIP_FILES \
                    or entry.name.endswith(SKIP_SUFFIXES):
                continue
            sha, size = digest(path_on_disk, st)
            out.append(SkillFile(rel, sha, size, path_on_disk, bool(st.st_mode & 0o111)))
    out.sort(key=lambda f: path_key(f.path))
    if clean and cache is not None:
        cache.put("listing", base, (tuple(dirs), tuple(f.path for f in out), tuple(skipped), cache.started_ns))
    return out


def _remembered_listing(cache: BuildCache, base: str, skill_dir: str, nested: set[str],
                        digest: FileDigest, seen: dict[str, tuple]) -> list[SkillFile] | None:
    """The files of a remembered listing, or None when a folder changed (or may have: racy stat),
    a nested skill appeared or went, or a file is no longer a regular file."""
    rec = cache.get("listing", base)
    if rec is None:
        return None
    dirs, files, skipped, listed_ns = rec
    prefix = f"{skill_dir}/" if skill_dir else ""
    try:
        for rel, sig in dirs:
            if (rel and prefix + rel in nested) or not stat_settled(sig, listed_ns):
                return None
            path = f"{base}/{rel}" if rel else base
            if (seen.get(path) or stat_signature(os.stat(path))) != sig:
                return None
        if any(prefix + rel not in nested for rel in skipped):
            return None
        out = []
        for rel in files:
            path = f"{base}/{rel}"
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                return None
            sha, size = digest(path, st)
            out.append(SkillFile(rel, sha, size, path, bool(st.st_mode & 0o111)))
    except OSError:
        return None
    return out


DISCOVERY_TABLE = "discovery"  # (skillc.cache.TABLES)


def remembered_discovery(root: Path, options: DiscoveryOptions, cache: BuildCache,
                         seen: dict[str, tuple] | None = None) -> Discovery:
    """``discover(root, options)``, from the build cache while nothing it depends on changed: the
    stat of every folder it listed and file it read is the same and settled (``stat_settled``), or
    a folder whose stat moved still lists the same names (``listing_key``: a file saved by
    renaming a new one over it).  A skill added, removed or renamed changes its folder's listing,
    so it is always seen; an edit inside a file changes no listing (the file's own stat decides
    whether it is read again).  A walk that met a symbolic link, a skipped cache or bundle folder,
    or an error is never remembered.  ``seen`` receives the stat signature this build took of each
    path the walk depends on (the skills' listings then need not take them again: 10,000 ``stat``
    calls at 10,000 skills)."""
    root_abs = os.path.realpath(root)
    key = key_of("discovery", root_abs, _options_key(options))
    rec = cache.get(DISCOVERY_TABLE, key)
    if rec is not None:
        stats = _still(root_abs, rec)
        if stats is not None:
            if seen is not None:
                seen.update((f"{root_abs}/{rel}" if rel else root_abs, sig) for rel, sig, _ in stats)
            if stats is not rec[0]:  # (folders listed again: their new stats, for the next build)
                cache.put(DISCOVERY_TABLE, key, (stats, cache.started_ns, rec[2]))
            return _discovery_in(root_abs, rec[2])
    record = WalkRecord()
    cache.stats.walked += 1
    disc = discover(root, options, record=record)
    if record.exact:
        stats = tuple((rel, stat_signature(st), listed) for rel, st, listed in record.stats)
        cache.put(DISCOVERY_TABLE, key, (stats, cache.started_ns, _discovery_out(disc)))
        if seen is not None:
            seen.update((f"{root_abs}/{rel}" if rel else root_abs, sig) for rel, sig, _ in stats)
    return disc



def _options_key(options: DiscoveryOptions) -> tuple:
    """Every field of the options, sets in a stable order (a frozenset's order changes from one
    process to the next)."""
    def stable(value: object) -> object:
        return tuple(sorted(value)) if isinstance(value, (set, frozenset)) else value

    return tuple((f.name, stable(getattr(options, f.name))) for f in dataclasses.fields(options))


def _still(root_abs: str, rec: tuple) -> tuple | None:
    """The remembered walk's stats when it still holds (each stat unchanged and settled, or the
    folder listed again with the same ``listing_key``: then its new stat replaces the old), else None."""
    stats, listed_ns, _ = rec
    changed: dict[int, tuple] = {}
    try:
        for i, (rel, sig, listed) in enumerate(stats):
            path = f"{root_abs}/{rel}" if rel else root_abs
            now = stat_signature(os.stat(path))
            if now == sig and stat_settled(sig, listed_ns):
                continue
            if not listed:  # (a file read: COLLECTION.md)
                return None
            with os.scandir(path) as it:
                if listing_key(list(it)) != listed:
                    return None
            changed[i] = (rel, now, listed)
    except OSError:
        return None
    if not changed:
        return stats
    return tuple(changed.get(i, row) for i, row in enumerate(stats))


def _discovery_out(disc: Discovery) -> tuple:
    """A discovery as plain values (records are never dataclasses: those unpickle slowly)."""
    items = tuple((i.kind.value, i.path, i.skill_dir, i.file_name, i.aliases, i.listing) for i in disc.items)
    return items, diagnostics_out(disc.diagnostics), tuple(disc.collection_docs.items()), disc.manifests


def _discovery_in(root_abs: str, rec: tuple) -> Discovery:
    items, diags, docs, manifests = rec
    kinds = {k.value: k for k in ItemKind}  # (a lookup: calling the enum costs more, per item)
    return Discovery(root_abs, tuple(DiscoveredItem(kinds.get(k) or ItemKind(k), p, d, f, a, li)
                                     for k, p, d, f, a, li in items),
                     diagnostics_in(diags), dict(docs), manifests)


def list_directory(repo: Repository, root: Path, read: ReadItem | None, lint: LintConfig,
                   source_input: SourceInput, root_name: str | None = None,
                   instructions_dir: Path | None = None) -> SourceListing:
    """List the skills under ``root`` (the repository's skills_root, already materialised locally).

    IDs are skill directories relative to ``root``; when ``root`` is itself a skill, IDs are
    prefixed with its directory name (a repository that is one skill publishes it by name).
    With ``instructions_dir`` (where the SKILL.md made for a convention file is kept), the
    lightweight and convention files the repository opts in to publish are skills too.
    """
    read = read or read_item
    options = replace(lint.discovery, lightweight=instructions_dir is not None and repo.publish_lightweight,
                      conventions=instructions_dir is not None and repo.publish_conventions)  # (its exclude globs)
    cache: BuildCache | None = getattr(read, "cache", None)  # remembers listings and walks too
    seen: dict[str, tuple] = {}  # (path -> the stat signature this build took of it)
    disc = remembered_discovery(root, options, cache, seen) if cache is not None else discover(root, options)
    if any(d.code == "D105" and d.path == "" for d in disc.diagnostics):
        raise SourceError(f"repository {repo.name!r}: {root} does not exist or is not a directory")
    skills_items = [i for i in disc.items if i.kind is ItemKind.SKILL]
    prefix = ""
    if any(i.skill_dir == "" for i in skills_items):
        prefix = root_name or Path(disc.root).name
    nested = {i.skill_dir for i in skills_items}
    # The build's reader hashes through its stat cache and, given a file's stat, may not read it.
    digest: FileDigest | None = getattr(read, "file_digest", None)
    root_abs = disc.root  # already a real path, and discovery follows no directory link below it
    filtering = bool(repo.include or repo.exclude)
    progress = getattr(read, "progress", None)  # the build's progress bars (a terminal only)
    advance = progress("Reading skills", len(skills_items)) if progress is not None else None
    out: list[SourceSkill] = []
    for item in skills_items:
        if advance is not None:
            advance(1)
        skill_id = f"{prefix}/{item.skill_dir}".strip("/") if prefix else item.skill_dir
        if filtering and not id_selected(skill_id, repo.include, repo.exclude):
            continue
        full = f"{root_abs}/{item.path}"
        try:
            st: os.stat_result | None = os.lstat(full)
        except OSError:
            st = None  # the reader reports it (D105)
        if st is not None and stat.S_ISLNK(st.st_mode):
            full, st = os.path.realpath(full), None  # SKILL.md links to a file elsewhere in the repository
        doc = read(root_abs, item, st=st) if digest is not None else read(root_abs, item)
        try:
            mode = st.st_mode if st is not None else os.stat(full).st_mode
        except OSError:
            mode = 0
        main = SkillFile(item.file_name, doc.sha256, doc.size, full, bool(mode & 0o111))
        files = [main, *skill_files(root_abs, item.skill_dir, nested, item.file_name, digest or hash_file, cache, seen)]
        out.append(SourceSkill(skill_id, repo, doc, tuple(files)))
    if instructions_dir is not None:
        out.extend(instruction_skills(repo, root_abs, [i for i in disc.items if i.kind is not ItemKind.SKILL],
                                      read, instructions_dir))
    out.sort(key=lambda s: path_key(s.id))
    docs = {(f"{prefix}/{k}" if prefix else k): v for k, v in disc.collection_docs.items()}
    diags = list(disc.diagnostics)
    if not out:
        where = f" (skills_root {repo.skills_root!r})" if repo.skills_root else ""
        diags.append(EMPTY_REPOSITORY.diagnostic("", 0, 0, f"repository {repo.name!r} offers no skill{where}: {root}"))
    return SourceListing(tuple(out), source_input, tuple(diags), docs, repo, tuple(disc.manifests), root_abs)


def instruction_skills(repo: Repository, root_abs: str, items: list, read: ReadItem,
                       instructions_dir: Path) -> list[SourceSkill]:
    """Lightweight and convention files as one-file skills (``instructions``): a lightweight file
    adk-rust would skip (no name or description) is not published; a SKILL.md made for a file is
    kept in ``instructions_dir`` under its hash."""
    from ..instructions import instruction_id, skill_md

    out = []
    for item in items:
        full = f"{root_abs}/{item.path}"
        try:
            raw = Path(full).read_bytes()
        except OSError:
            continue  # (the lint reports an unreadable file)
        doc = read(root_abs, item)
        skill = SourceSkill("", repo, doc, ())
        name, description = skill.name, skill.description
        if not name or not description:
            continue
        data = skill_md(doc, raw, name, description)
        sha = hashlib.sha256(data).hexdigest()
        source = full if data is raw else _kept(instructions_dir, sha, data)
        main = SkillFile("SKILL.md", sha, len(data), source)
        out.append(SourceSkill(instruction_id(name, raw), repo, doc, (main,)))
    return out


def _kept(folder: Path, sha: str, data: bytes) -> str:
    """``data`` stored as ``folder/<sha>.md`` (content-addressed: written once, atomically)."""
    path = folder / f"{sha}.md"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{sha}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


def skills_root_of(repo: Repository, base: Path) -> Path:
    """``base / skills_root``, refusing a skills_root that leaves ``base`` (also through a link)."""
    if not repo.skills_root:
        return base
    rel = PurePosixPath(repo.skills_root)
    if rel.is_absolute() or ".." in rel.parts:
        raise SourceError(f"repository {repo.name!r}: skills_root {repo.skills_root!r} must stay inside the repository")
    root = base / rel
    if not root.is_dir():
        # ("not found" for a path that names a file, SKILL.md say, sends the user looking elsewhere)
        what = "is a file, not a folder," if root.exists() else "not found"
        raise SourceError(f"repository {repo.name!r}: skills_root {repo.skills_root!r} {what} in {display(repo)}"
                          f"{declared(repo)}")
    real, real_base = os.path.realpath(root), os.path.realpath(base)
    if real != real_base and not real.startswith(real_base + os.sep):
        raise SourceError(f"repository {repo.name!r}: skills_root {repo.skills_root!r} leaves the repository")
    return root


def declared(repo: Repository) -> str:
    """`` (declared at skills.toml:LINE)`` for an error that a configuration entry caused (a path,
    ref or skills_root that names nothing), so the one-line error says which line to fix."""
    return f" (declared at {repo.config_file})" if repo.config_file else ""


def display(repo: Repository) -> str:
    """The repository's location as messages print it (``fetch.shown``: no credentials, no query)."""
    from ..fetch import shown

    return shown(repo.location)


class FilesystemSource:
    """A directory on disk (``path``); ``skills_root`` is a folder inside it."""

    def __init__(self, repository: Repository, *, cache_dir: Path, lint: LintConfig) -> None:
        self.repository = repository
        self.cache_dir = cache_dir
        self.lint = lint

    def skills(self, read: ReadItem | None = None) -> SourceListing:
        base = Path(self.repository.location)
        if not base.is_dir():
            raise SourceError(f"repository {self.repository.name!r}: {base} is not a directory"
                              f"{declared(self.repository)}")
        root = skills_root_of(self.repository, base)
        source_input = SourceInput(self.repository.name, self.repository.type, str(base), None)
        # A local repository's paths are matched by the configuration's globs from its file's folder.
        lint = anchored(self.lint, root) if self.repository.type == "filesystem" else self.lint
        return list_directory(self.repository, root, read, lint, source_input,
                              instructions_dir=self.cache_dir / "instructions")


class EmbeddedSource(FilesystemSource):
    """skillc's own ``skills/`` folder (the ``builtin`` tier)."""


__all__ = [
    "EmbeddedSource",
    "FilesystemSource",
    "declared",
    "display",
    "id_selected",
    "list_directory",
    "skill_files",
    "skills_root_of",
]
