"""Discovery: find skills, lightweight skill files and convention files in a directory tree.

The walk never follows a symbolic link.  A link that resolves inside the root is recorded as an
alias of its target (so the target is linted once); a link that dangles, loops or leaves the root
is a diagnostic.  Results are sorted by the byte order of their relative paths, whatever order
the filesystem returns.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import MANIFEST_DIR, MANIFEST_NAMES

# (path_key lives in the model, where every stage reads it; re-exported here for its old import path)
from ..model import Diagnostic, DiscoveredItem, Discovery, ItemKind, RuleRef, Severity, path_key
from . import rules

# Seed 000's IGNORED_DIRS (its skill discovery walk), and .skillc-build: a build's lock, staging and
# previous bundle (skillc.build).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "target", "node_modules", ".next", "dist", "build", "coverage", "__pycache__",
     ".plan-cascade", ".skillc-build"}
)
CONVENTION_FILES = ("CLAUDE.md", "AGENTS.md", "AGENT.md", "SKILLS.md", "COPILOT.md", "GEMINI.md", "SOUL.md")
CONVENTION_UPPER = {n.upper(): n for n in CONVENTION_FILES}
# Inside a skill these folders hold resources: a SKILL.md there is a fixture or template, not a skill.
RESOURCE_DIRS = frozenset({"assets", "references", "scripts"})
# adk-rust skips lightweight files under these components (case-insensitive).
_LIGHTWEIGHT_EXCLUDED = frozenset({"references", "agents", "scripts"})
MAX_COLLECTION_BYTES = 64 * 1024  # COLLECTION.md is one line of prose; never read a huge one whole
SKILL_FILE_NAMES = ("SKILL.md", "skill.md", "Skill.md")
_SKILL_FILE_SET = frozenset(SKILL_FILE_NAMES)
# The Cache Directory Tagging Specification (bford.info/cachedir): a folder holding this file, starting
# with the signature, is a cache.  skillc tags its own (SKILLC_CACHE_DIR may be inside a repository).
CACHE_TAG = "CACHEDIR.TAG"
CACHE_TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"


def is_tagged_cache(folder: str | os.PathLike[str]) -> bool:
    try:
        with open(os.path.join(folder, CACHE_TAG), "rb") as fh:
            return fh.read(len(CACHE_TAG_SIGNATURE)) == CACHE_TAG_SIGNATURE
    except OSError:
        return False


def is_bundle(folder: str | os.PathLike[str]) -> bool:
    """A published bundle (``skillc build --out site``): its ``api/files/`` hold copies of the skills,
    which a walk of the repository would lint again (every name a C801 duplicate of its source)."""
    return (os.path.isfile(os.path.join(folder, "api", "manifest.json"))
            and os.path.isfile(os.path.join(folder, ".well-known", "agent-skills", "index.json")))


MAX_LISTED_FILES = 2000  # files listed per skill folder (rules see at most this many)


@dataclass(frozen=True, slots=True)
class DiscoveryOptions:
    lightweight: bool = True  # .skills/*.md and .claude/skills/*.md
    conventions: bool = True  # CLAUDE.md, AGENTS.md, …
    exclude: tuple[str, ...] = ()  # fnmatch globs on relative posix paths (a dir excludes its subtree)
    # The globs are relative to the configuration file's folder: the walked root's path from there,
    # or that folder's path from the root (see ``config_relative``).
    exclude_base: str = ""
    exclude_strip: str = ""
    skip_dirs: frozenset[str] = field(default=SKIP_DIRS)
    # Walk only towards these relative directories ("" is the root): a directory is entered when it
    # is one of them or an ancestor of one.  Used to lint single files (pre-commit passes file names)
    # without walking the whole repository.  None walks everything.
    only_dirs: frozenset[str] | None = None
    manifests: bool = True  # .claude-plugin/marketplace.json and plugin.json (skillc.validate.manifests)


def config_relative(path: str, base: str, strip: str) -> str | None:
    """``path`` (relative to a linted or built root) as the configuration file's globs see it:
    ``base`` is the root's path from the file's folder (``skills`` for ``skillc lint skills``),
    ``strip`` the folder's path from the root (the file sits below the root: a path outside its
    folder is seen as ``../…``, as its globs write it)."""
    if strip:
        path = posixpath.relpath(path or ".", strip)
        if path == ".":
            path = ""
    if base:
        path = f"{base}/{path}" if path else base
    return path


def _excluded(rel: str, patterns: tuple[str, ...], base: str = "", strip: str = "") -> bool:
    path = config_relative(rel, base, strip) if base or strip else rel
    return path is not None and any(fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(path + "/", p)
                                    for p in patterns)


def excluded_by(options: DiscoveryOptions, rel: str) -> bool:
    """Whether ``rel`` (relative to the walked root), or a folder above it, matches one of the
    ``exclude`` globs: the walk never reaches it."""
    return bool(options.exclude) and any(
        _excluded(p, options.exclude, options.exclude_base, options.exclude_strip) for p in _ancestors([rel]) if p)


def _lightweight_dir(rel_parts: tuple[str, ...]) -> bool:
    """True when a file with these parent parts lies under .skills/ or .claude/skills/."""
    for i, part in enumerate(rel_parts):
        if part == ".skills":
            rest = rel_parts[i + 1 :]
            break
        if part == ".claude" and i + 1 < len(rel_parts) and rel_parts[i + 1] == "skills":
            rest = rel_parts[i + 2 :]
            break
    else:
        return False
    return not any(p.lower() in _LIGHTWEIGHT_EXCLUDED for p in rest)


def _ancestors(rels: Iterable[str]) -> frozenset[str]:
    """``["a/b"]`` → ``{"", "a", "a/b"}``: the directories a walk passes through to reach each of
    ``rels`` (going up from each only until a folder already known: selections share their parents)."""
    out: set[str] = set()
    for rel in rels:
        while rel not in out:
            out.add(rel)
            if not rel:
                break
            rel = rel.rpartition("/")[0]
    return frozenset(out)


def _skill_listing(listings: dict[str, tuple[list[str], list[str], list[str], bool]],
                   skill_dir: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """A skill folder's (files, folders, links) from the walk's listings; a nested skill's folder is
    listed as a folder but not entered.  None when the folder holds MAX_LISTED_FILES or more (rules
    then list it themselves, and stop there)."""
    top = listings.get(skill_dir)
    if top is None:
        return None
    if not top[1] and not top[2] and len(top[0]) < MAX_LISTED_FILES:  # the common case: a flat folder
        return tuple(sorted(top[0])), (), ()
    files: list[str] = []
    dirs: list[str] = []
    links: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        listed = listings.get(f"{skill_dir}/{rel}" if skill_dir and rel else rel or skill_dir)
        if listed is None:
            return None
        names, subdirs, linked, has_skill_file = listed
        if rel and has_skill_file and rel.partition("/")[0] not in RESOURCE_DIRS:
            continue  # a nested skill: its files are its own (a SKILL.md under assets/ is a fixture: listed)
        prefix = f"{rel}/" if rel else ""
        files.extend(prefix + n for n in names)
        links.extend(prefix + n for n in linked)
        for d in subdirs:
            dirs.append(prefix + d)
            stack.append(prefix + d)
        if len(files) + len(links) >= MAX_LISTED_FILES:
            return None
    return tuple(sorted(files)), tuple(sorted(dirs)), tuple(sorted(links))


@dataclass
class WalkRecord:
    """What a walk's result depends on, for a caller that remembers it (``sources.filesystem``):
    the ``stat`` of every folder listed (taken before listing it: an entry added, removed or
    renamed since moves its times) with its ``listing_key``, and of every file read (COLLECTION.md),
    by path relative to the root.  ``exact`` is False when the result depends on anything else too (a symbolic link, whose
    target may change elsewhere; a folder skipped for what a file in it says; an error)."""

    stats: list[tuple[str, os.stat_result, str]] = field(default_factory=list)  # (path, stat, listing_key or "")
    exact: bool = True


def listing_key(entries: Iterable[os.DirEntry]) -> str:
    """What a folder's listing tells the walk: its names and their types.  A file saved by renaming
    a new one over it moves the folder's times but not this, so the walk's result still holds."""
    found = sorted((e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False)) for e in entries)
    return hashlib.sha256(repr(found).encode("utf-8", "surrogateescape")).hexdigest()


_Listing = tuple[list[str], list[str], list[str], bool]


@dataclass(slots=True)
class _Walk:
    """What the walk builds up, shared by its steps."""

    root_abs: str
    options: DiscoveryOptions
    record: WalkRecord
    on_item: Callable[[DiscoveredItem], None] | None
    # The folders inside skills as listed: dir → (files, subfolders, symbolic links, holds a SKILL.md).
    # Only a whole, unfiltered walk lists skills completely (exclusions and `only_dirs` prune it).
    listings: dict[str, _Listing] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    items: dict[str, DiscoveredItem] = field(default_factory=dict)
    collection_docs: dict[str, str] = field(default_factory=dict)
    manifests: list[str] = field(default_factory=list)
    dir_links: list[tuple[str, str]] = field(default_factory=list)  # (link rel path, target rel path)
    file_links: list[tuple[str, str]] = field(default_factory=list)
    # The folders walked: a link to one never walked (node_modules/, an exclude, a file selection)
    # is an alias of something this run does not lint, and D106 must not say it is linted.
    walked: set[str] = field(default_factory=set)

    def diag(self, rule: RuleRef, rel: str, message: str, *, severity: Severity | None = None) -> None:
        self.record.exact = False  # (an unreadable path may become readable with no folder's stat moving)
        self.diagnostics.append(rule.diagnostic(rel, 0, 0, message, severity=severity))

    def rel_of(self, abs_path: str) -> str:
        rel = os.path.relpath(abs_path, self.root_abs)
        return "" if rel == "." else rel.replace(os.sep, "/")

    def check_link(self, abs_path: str, rel: str) -> str | None:
        """Classify a symlink; return the target's relative path when it stays inside the root."""
        root_abs = self.root_abs
        try:
            target = os.path.realpath(abs_path, strict=True)
        except OSError as exc:
            if "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40:
                self.diag(rules.SYMLINK_LOOP, rel, f"symbolic link loop: {rel} -> {os.readlink(abs_path)}")
            else:
                self.diag(rules.DANGLING_SYMLINK, rel, f"dangling symbolic link: {rel} -> {os.readlink(abs_path)}")
            return None
        if target != root_abs and not target.startswith(root_abs + os.sep):
            self.diag(rules.SYMLINK_ESCAPES_REPOSITORY, rel,
                      f"symbolic link leaves the repository: {rel} -> {os.readlink(abs_path)} (not followed)")
            return None
        return self.rel_of(target)

    def complete(self, rel: str) -> None:
        """``rel``'s item is done: give a skill its listing, and pass the item to ``on_item``."""
        item = self.items[rel]
        if item.kind is ItemKind.SKILL and self.listings is not None:
            listing = _skill_listing(self.listings, item.skill_dir)
            if listing is not None:
                item = self.items[rel] = DiscoveredItem(item.kind, item.path, item.skill_dir, item.file_name, (),
                                                        listing)
        if self.on_item is not None:
            self.on_item(item)


def discover(root: str | os.PathLike[str], options: DiscoveryOptions = DiscoveryOptions(),
             on_item: Callable[[DiscoveredItem], None] | None = None,
             record: WalkRecord | None = None) -> Discovery:
    """Walk ``root`` and return what it holds, sorted by relative path bytes.

    ``on_item`` is called with each item as soon as it is complete (a skill once its folder has been
    walked, with its listing), in walk order, so a caller can start on it while the walk goes on.
    Only the returned items carry their ``aliases`` (known at the end).  ``record`` receives what
    the result depends on (``WalkRecord``)."""
    if record is None:
        record = WalkRecord(exact=False)  # (nobody reads it: no stat is taken for it)
    root_path = Path(root)
    walk = _Walk(os.path.realpath(root_path), options, record, on_item)
    if not root_path.is_dir():
        kind = "does not exist" if not root_path.exists() else "is not a directory"
        walk.diag(rules.UNREADABLE_PATH, "", f"{root} {kind}")
        return Discovery(walk.root_abs, (), tuple(walk.diagnostics))

    wanted = None if options.only_dirs is None else _ancestors(options.only_dirs)
    if wanted is None and not options.exclude and options.skip_dirs == SKIP_DIRS:
        walk.listings = {}
    listings, complete = walk.listings, walk.complete

    # Iterative walk: (absolute dir, relative posix path, parts, inside a skill, inside a skill's resource dir)
    stack: list[tuple[str, str, tuple[str, ...], bool, bool]] = [(walk.root_abs, "", (), False, False)]
    # Skills whose folders are still being walked: (stack size when the skill's folder was taken
    # off the stack, item path).  The walk is depth first, so a folder's subtree is done when the
    # stack is back to that size.
    walking: list[tuple[int, str]] = []

    while stack:
        while walking and len(stack) <= walking[-1][0]:
            complete(walking.pop()[1])
        dir_abs, dir_rel, parts, in_skill, in_resource = stack.pop()
        prefix = f"{dir_rel}/" if dir_rel else ""
        listed = _read_folder(walk, dir_abs, dir_rel, prefix, wanted)
        if listed is None:
            continue
        names, files, subdirs, links = listed

        skill_file = "SKILL.md" if "SKILL.md" in files else _other_skill_file(files)
        # A SKILL.md under a skill's assets/, references/ or scripts/ is a fixture or template, not a skill.
        skill = None if skill_file is None or in_resource else _take_skill(walk, files, dir_rel, skill_file)
        is_skill = skill is not None
        if is_skill:
            walking.append((len(stack), skill))
        if "COLLECTION.md" in files and dir_rel and not files["COLLECTION.md"].is_symlink():
            _read_collection_doc(walk, dir_rel, files["COLLECTION.md"])

        if parts and parts[-1] == MANIFEST_DIR and options.manifests:
            walk.manifests.extend(prefix + n for n in MANIFEST_NAMES if n in files and not files[n].is_symlink())
        inside = in_skill or is_skill
        if inside and listings is not None:
            listings[dir_rel] = ([n for n, e in files.items() if not e.is_symlink()], [e.name for e in subdirs],
                                 links, not _SKILL_FILE_SET.isdisjoint(names))
        _take_files(walk, files, dir_rel, parts, skill_file, inside)
        for entry in subdirs:
            rel = f"{dir_rel}/{entry.name}" if dir_rel else entry.name
            resource = in_resource or (is_skill and entry.name in RESOURCE_DIRS)
            stack.append((entry.path, rel, parts + (entry.name,), inside, resource))

    while walking:
        complete(walking.pop()[1])

    final = _final_items(walk, _attach_aliases(walk))
    walk.diagnostics.sort(key=Diagnostic.sort_key)
    return Discovery(walk.root_abs, tuple(final), tuple(walk.diagnostics), dict(sorted(walk.collection_docs.items())),
                     tuple(sorted(walk.manifests, key=path_key)))


def _read_folder(walk: _Walk, dir_abs: str, dir_rel: str, prefix: str, wanted: frozenset[str] | None
                 ) -> tuple[list[str], dict[str, os.DirEntry], list[os.DirEntry], list[str]] | None:
    """A folder's entries: (their names, files and links to files by name, folders to enter, names
    of symbolic links); a link to a folder is recorded in ``walk.dir_links``, one to a file in
    ``walk.file_links``.  None when the folder cannot be read or is not walked (a cache, a bundle)."""
    options, record = walk.options, walk.record
    try:
        before = os.stat(dir_abs) if record.exact else None
        with os.scandir(dir_abs) as it:
            entries = list(it)
    except OSError as exc:
        walk.diag(rules.UNREADABLE_PATH, dir_rel or ".", f"cannot read directory: {exc.strerror or exc}")
        return None
    if before is not None:
        record.stats.append((dir_rel, before, listing_key(entries)))
    names = [e.name for e in entries]  # (one pass: `in` on a list is C, a generator per test is not)
    if dir_rel and CACHE_TAG in names and is_tagged_cache(dir_abs):
        record.exact = False  # (what the tag file says decides it)
        return None  # a cache (skillc's own, with the checkouts of git sources inside): never an input
    if dir_rel and wanted is None and ".well-known" in names and is_bundle(dir_abs):
        record.exact = False  # (files in its subfolders decide it)
        return None  # a bundle built into the repository (`--out site`); a file named in it is still linted
    walk.walked.add(dir_rel)
    exclude, skip_dirs = options.exclude, options.skip_dirs
    files: dict[str, os.DirEntry] = {}
    subdirs: list[os.DirEntry] = []
    links: list[str] = []
    for entry in entries:
        name = entry.name
        if exclude and _excluded(prefix + name, exclude, options.exclude_base, options.exclude_strip):
            continue
        try:
            # The type comes from the directory listing (d_type): no stat call per entry.
            if entry.is_symlink():
                record.exact = False  # (its target may change with no folder here changing)
                links.append(name)
                if name in skip_dirs:
                    continue
                rel = prefix + name
                target_rel = walk.check_link(entry.path, rel)
                if target_rel is None:
                    continue
                if os.path.isdir(entry.path):
                    walk.dir_links.append((rel, target_rel))
                else:
                    walk.file_links.append((rel, target_rel))
                    files[name] = entry
                continue
            if entry.is_dir(follow_symlinks=False):
                # (a folder on the way to a selected item is entered even if it is one walks skip:
                # a file named on the command line is linted wherever it is)
                if prefix + name in wanted if wanted is not None else name not in skip_dirs:
                    subdirs.append(entry)
            elif entry.is_file(follow_symlinks=False):
                files[name] = entry
            elif name.lower() == "skill.md":
                # A FIFO, socket or device named SKILL.md: never read (a FIFO would block the run),
                # but said, not skipped in silence ("Checked 0 files" and a pass).
                walk.diag(rules.UNREADABLE_PATH, prefix + name, "cannot read: not a regular file")
        except OSError as exc:
            walk.diag(rules.UNREADABLE_PATH, prefix + name, f"cannot read: {exc.strerror or exc}")
    return names, files, subdirs, links


def _other_skill_file(files: dict[str, os.DirEntry]) -> str | None:
    """A folder's skill file when it holds no SKILL.md: the first of its other spellings (skill.md, …)."""
    variants = sorted(n for n in files if n.lower() == "skill.md")
    return variants[0] if variants else None


def _take_skill(walk: _Walk, files: dict[str, os.DirEntry], dir_rel: str, skill_file: str) -> str | None:
    """Record the folder's skill, and return its path; None when its skill file links to another
    skill's (the folder is then an alias of that skill's)."""
    rel = f"{dir_rel}/{skill_file}" if dir_rel else skill_file
    if files[skill_file].is_symlink():
        target = dict(walk.file_links)[rel]
        if os.path.basename(target).lower() == "skill.md" and target != rel:
            # SKILL.md is a link to another skill's file: this directory is an alias.
            target_dir = target.rsplit("/", 1)[0] if "/" in target else ""
            walk.dir_links.append((dir_rel, target_dir))
            return None
    walk.items[rel] = DiscoveredItem(ItemKind.SKILL, rel, dir_rel, skill_file)
    return rel


def _read_collection_doc(walk: _Walk, dir_rel: str, entry: os.DirEntry) -> None:
    try:
        with open(entry.path, "rb") as fh:
            if walk.record.exact:
                walk.record.stats.append((f"{dir_rel}/COLLECTION.md", os.fstat(fh.fileno()), ""))
            walk.collection_docs[dir_rel] = fh.read(MAX_COLLECTION_BYTES).decode("utf-8").strip()
    except OSError as exc:
        walk.diag(rules.UNREADABLE_PATH, f"{dir_rel}/COLLECTION.md", f"cannot read: {exc.strerror or exc}",
                  severity=Severity.WARNING)
    except UnicodeDecodeError:
        walk.diag(rules.UNREADABLE_PATH, f"{dir_rel}/COLLECTION.md", "cannot read: not valid UTF-8 text",
                  severity=Severity.WARNING)


def _take_files(walk: _Walk, files: dict[str, os.DirEntry], dir_rel: str, parts: tuple[str, ...],
                skill_file: str | None, inside: bool) -> None:
    """Record the folder's convention files and lightweight skill files (``inside``: in a skill)."""
    options, items, complete = walk.options, walk.items, walk.complete
    for name, entry in files.items():
        if entry.is_symlink() or name == skill_file:
            continue
        rel = f"{dir_rel}/{name}" if dir_rel else name
        if options.conventions and name.upper() in CONVENTION_UPPER and (name.upper() != "SOUL.MD" or not dir_rel):
            items[rel] = DiscoveredItem(ItemKind.CONVENTION, rel, dir_rel, name)
            complete(rel)
            continue
        if (
            options.lightweight
            and not inside
            and name.endswith(".md")
            and name.lower() != "skill.md"
            and _lightweight_dir(parts)
        ):
            items[rel] = DiscoveredItem(ItemKind.LIGHTWEIGHT, rel, dir_rel, name)
            complete(rel)


def _attach_aliases(walk: _Walk) -> dict[str, list[str]]:
    """Attach aliases: a linked directory aliases every skill at or below its target.  Returns the
    aliases by item path, and says each link (D106)."""
    aliases: dict[str, list[str]] = {}
    by_dir = {item.skill_dir: item.path for item in walk.items.values() if item.kind is ItemKind.SKILL}
    for link_rel, target_rel in sorted(walk.dir_links, key=lambda p: path_key(p[0])):
        hits = [
            (d, p)
            for d, p in by_dir.items()
            if d == target_rel or not target_rel or d.startswith(target_rel + "/")
        ]
        for skill_dir, path in hits:
            suffix = skill_dir[len(target_rel) :].lstrip("/") if target_rel else skill_dir
            aliases.setdefault(path, []).append(f"{link_rel}/{suffix}" if suffix else link_rel)
        said = f"{link_rel} is an alias of {target_rel or '.'} (linted once, at its target)"
        if not hits and target_rel not in walk.walked:
            said = (f"{link_rel} is an alias of {target_rel}, which is not linted: a folder walks skip or exclude, "
                    "or not among the paths named (lint it by its own path)")
        walk.diagnostics.append(rules.SYMLINK_ALIAS.diagnostic(link_rel, 0, 0, said))
    return aliases


def _final_items(walk: _Walk, aliases: dict[str, list[str]]) -> list[DiscoveredItem]:
    """The items sorted by path, with their aliases; a skill file not named SKILL.md is said (D101)."""
    items = walk.items
    final = []
    for path in sorted(items, key=path_key):
        item = items[path]
        if path in aliases:
            item = DiscoveredItem(item.kind, item.path, item.skill_dir, item.file_name,
                                  tuple(sorted(aliases[path], key=path_key)), item.listing)
        final.append(item)
    for item in final:
        if item.kind is ItemKind.SKILL and item.file_name != "SKILL.md":
            walk.diagnostics.append(rules.SKILL_FILE_NAME_CASE.diagnostic(
                item.path, 0, 0, f"skill file is named {item.file_name!r}; the specification requires 'SKILL.md'",
                skill=item.skill_dir))
    return final
