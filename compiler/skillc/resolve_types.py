"""Types shared by the sources, the resolve stage and the emitters (issue 3).

Sources produce ``SourceSkill``s; ``resolve`` turns them into a ``Resolution`` (winners, shadowing,
collections); emitters write a ``Resolution`` into a bundle.  All frozen.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .instructions import instruction_description, instruction_name
from .model import Diagnostic, Document, ItemKind


class Tier(str, enum.Enum):
    """Seed 000 source tiers and their priority ranges (higher priority wins)."""

    BUILTIN = "builtin"  # 1-50
    EXTERNAL = "external"  # 51-100
    USER = "user"  # 101-200
    PROJECT = "project"  # 201+

    @property
    def priority_range(self) -> tuple[int, int | None]:
        return {"builtin": (1, 50), "external": (51, 100), "user": (101, 200), "project": (201, None)}[self.value]

    @property
    def default_priority(self) -> int:
        return {"builtin": 25, "external": 75, "user": 150, "project": 250}[self.value]

    @property
    def scope(self) -> str:
        """Meerkat wire `scope` (builtin|project|user); external skills are published as builtin."""
        return {"builtin": "builtin", "external": "builtin", "user": "user", "project": "project"}[self.value]


@dataclass(frozen=True, slots=True)
class Repository:
    """One configured repository (a `[[repositories]]` entry, an external-skills.json source, …)."""

    name: str
    type: str  # filesystem | git | zip | http | embedded
    location: str  # path or URL as configured (after ${VAR} expansion; never printed with secrets)
    tier: Tier = Tier.PROJECT
    priority: int = 250
    order: int = 0  # declaration order (lower = declared first)
    skills_root: str = ""
    git_ref: str | None = None
    ref_type: str | None = None  # branch | tag | commit
    auth_header: str | None = None
    auth_token: str | None = field(default=None, repr=False)
    refresh_seconds: int = 300
    # the whole fetch of an http or zip URL repository, every request together (a server dripping
    # each document under the per-request limits stalled a build for half an hour)
    timeout_seconds: int = 600
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    config_file: str | None = None  # where it was declared
    # Also publish its lightweight .skills/*.md files and its convention files (CLAUDE.md…) as
    # skills (seed 000 formats B and C; ``instructions``): off unless the repository opts in.
    publish_lightweight: bool = False
    publish_conventions: bool = False


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A supporting file of a skill (anything in its directory but SKILL.md), or SKILL.md itself."""

    path: str  # posix, relative to the skill directory
    sha256: str
    size: int
    source_path: str  # absolute path on disk to read it from (sources materialise into temp/cache dirs)
    executable: bool = False  # any execute bit set when it was listed (kept in the zip; part of the cache keys)


@dataclass(frozen=True, slots=True)
class SourceSkill:
    """A skill as one repository offers it."""

    id: str  # canonical ID: the skill directory relative to skills_root, '/'-joined
    repository: Repository
    document: Document
    files: tuple[SkillFile, ...]  # SKILL.md first, then byte order
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def name(self) -> str:
        if self.document.kind is not ItemKind.SKILL:  # (a lightweight or convention file: seed 000's rules)
            return instruction_name(self.document, self.document.path.rsplit("/", 1)[-1])
        value = self.document.meta.get("name")
        return value.strip() if isinstance(value, str) and value.strip() else self.id.rsplit("/", 1)[-1]

    @property
    def description(self) -> str:
        if self.document.kind is not ItemKind.SKILL:
            return instruction_description(self.document, self.document.path.rsplit("/", 1)[-1])
        value = self.document.meta.get("description")
        return value.strip() if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class Shadowing:
    id: str
    winner: str  # repository name
    loser: str
    winner_source: str  # repository location
    loser_source: str
    winner_priority: int
    loser_priority: int


@dataclass(frozen=True, slots=True)
class Collection:
    path: str
    description: str
    count: int  # skills at or below this path


@dataclass(frozen=True, slots=True)
class SourceInput:
    """What went into a build, for the manifest."""

    repository: str
    type: str
    location: str
    resolved: str | None = None  # git commit, zip sha256, http ETag…


@dataclass(frozen=True, slots=True)
class SourceListing:
    """What one repository offers (what ``skillc.sources`` hands to resolve)."""

    skills: tuple[SourceSkill, ...]  # sorted by ID bytes
    input: SourceInput
    diagnostics: tuple[Diagnostic, ...] = ()
    collection_docs: Mapping[str, str] = field(default_factory=dict)  # collection path → COLLECTION.md text
    repository: Repository | None = None  # who offers them (precedence of an empty listing too)
    # The plugin and marketplace manifests found beside the skills (``.claude-plugin/*.json``, relative
    # to ``root``, the folder the skills were discovered in): the build lints them as `skillc lint` does.
    manifests: tuple[str, ...] = ()
    root: str = ""


# Meerkat's defaults for the settings a Resolution carries (skills.toml reads them; the renderers
# fall back on them).
DEFAULT_MAX_INJECTION_BYTES = 32 * 1024
DEFAULT_INVENTORY_THRESHOLD = 12


@dataclass(frozen=True, slots=True)
class Resolution:
    skills: tuple[SourceSkill, ...]  # winners, sorted by ID bytes
    shadowed: tuple[Shadowing, ...]
    collections: tuple[Collection, ...]  # every collection path at any depth, sorted
    inputs: tuple[SourceInput, ...]
    diagnostics: tuple[Diagnostic, ...]
    excluded: tuple[str, ...] = ()  # IDs left out by --keep-going
    settings: Mapping[str, object] = field(default_factory=dict)  # enabled, inventory_threshold, …
    # skill ID -> its flat name (``flatnames.assign_flat_names`` over the winners): the name flat
    # readers see (the discovery index, ``skills/<name>/`` exports, plugins, MCP).
    flat_names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EmitOptions:
    """What ``skillc build`` tells every emitter, set once before the first emitter runs.

    A typed, frozen object rather than a dict: a misspelt or forgotten key used to read as its
    default without a word (the minimal page lost its lint status that way).  The build's own types
    (``BuildCache``, ``Staging``) live in layers above this module, so those fields are ``Any``.
    """

    site: bool = True  # write the docs page(s) (--no-site: False)
    emit: tuple[str, ...] = ()  # extra outputs (--emit whoosh)
    epoch: int = 0  # SOURCE_DATE_EPOCH, 0 when unset: zip timestamps and render keys
    source_date_epoch: int | None = None  # SOURCE_DATE_EPOCH as given (None: unset)
    config_hash: str = ""  # hash of the configuration files (api/manifest.json)
    records_hash: str | None = None  # salt of the build cache's records (None: config_hash)
    cwd: str | None = None  # the build's working folder: shown paths are made relative to it
    cache: Any = None  # skillc.cache.BuildCache, or None: no records cache
    config_files: tuple[tuple[str, str], ...] = ()  # (path as shown, sha256) of each config file read
    staging: Any = None  # skillc.emit.staging.Staging of the build (None: write straight into out)
    lint_summary: Mapping[str, Any] = field(default_factory=dict)  # api/manifest.json "lint"
    excluded_reasons: Mapping[str, str] = field(default_factory=dict)  # ID left out -> why (--keep-going)
    jobs: int = 1  # worker processes for the skills' files and the docs site's pages
    keep_going: bool = False  # memory: skip or repair bad entries instead of failing
    external: Any = None  # Plan Cascade's external-skills.json (BuildConfig.external)
    redactions: tuple[Any, ...] = ()  # the publishing gate's audit (gate.Redaction), for the manifest
    archives: bool = True  # write one zip per skill
    progress: Callable[..., Any] | None = None  # the skills emitter's progress bar (one step a skill)
    mkdocs: Any = None  # the docs site's mkdocs child, started at the build's start (docsite.start_mkdocs)

    @property
    def render_salt(self) -> str:
        """What keys rendered skills in the cache besides their content: the records' salt."""
        return self.config_hash if self.records_hash is None else self.records_hash


@dataclass(slots=True)
class EmitCollected:
    """What emitters hand back to the build (mutable on purpose: the one place emitters write to).

    ``artifacts``: each skill's published files, set by the skills emitter (a mapping that may wait
    for the forked workers when first read); ``diagnostics``: (repository, Diagnostic) an emitter
    found (R130); ``notes``: warnings for the user (memory entries --keep-going skipped);
    ``digests``, ``known`` and ``listed``: files whose SHA-256 an emitter knows."""

    artifacts: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: list[tuple[str, Diagnostic]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Files an emitter already knows the SHA-256 of: bundle path -> (inode, size, mtime_ns, sha256).
    # The manifest takes the digest only while the file in the staging folder is still that inode,
    # size and time (the docs site: its files are hard links of the kept output, hashed once).
    digests: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    # Files an emitter wrote from bytes it held, bundle path -> (sha256, size), and the folders whose
    # every file it lists there (``listed``): the manifest reads none of those files and walks none
    # of those folders (the legacy well-known tree: 13,000 files in as many folders at 10,000 skills).
    known: dict[str, tuple[str, int]] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class EmitContext:
    """What every emitter gets.  Emitters write only below ``out`` (the build's staging directory).

    ``skillc build`` calls each function in ``skillc.emit.EMITTERS`` in order; the search-index and
    memory emitters register themselves there.  An emitter returns nothing; the manifest is written
    last from the files found under ``out``.
    """

    resolution: Resolution
    out: "Path"  # staging directory (becomes the bundle)
    as_of: float  # build time (SOURCE_DATE_EPOCH or now), seconds since the epoch
    memory_paths: tuple["Path", ...] = ()  # --memory PATH… plus each repository's memory/ folder
    cache_dir: "Path | None" = None  # content-addressed cache (None: no caching)
    options: EmitOptions = field(default_factory=EmitOptions)
    collected: EmitCollected = field(default_factory=EmitCollected)  # what emitters hand back


from pathlib import Path  # noqa: E402  (for the string annotations above)

# The diagnostics of resolving repositories (codes R1xx) are declared in ``resolve_rules`` (which
# lint imports without these types); resolve, sources and emit import them from here too.
from .resolve_rules import (  # noqa: E402,F401
    BUNDLE_PATH_COLLISION,
    DUPLICATE_SKILL_NAME,
    EMPTY_REPOSITORY,
    FLAT_NAME_COLLISION,
    ID_CASE_COLLISION,
    ID_NOT_INVOCABLE,
    REMOTE_FILE_UNVERIFIED,
    REMOTE_SKILL_MISSING,
    SITE_PAGE_NOT_RENDERED,
    SKILL_SHADOWED,
    STALE_SOURCE,
    SUBMODULE_NOT_FETCHED,
    UNPUBLISHABLE_FILE_NAME,
    UNSAFE_SKILL_ID,
)
