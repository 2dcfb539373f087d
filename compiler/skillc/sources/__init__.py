"""Sources: one small class per repository type, all behind one interface.

``open_source(repo, cache_dir=…, lint=…)`` returns a ``Source``; ``source.skills(read)`` lists the
skills the repository offers (``SourceSkill``: canonical ID, parsed SKILL.md, supporting files with
their hashes), what went into the build (``SourceInput``: resolved git commit, zip hash, HTTP
ETag…) and the source's own diagnostics.  Remote sources (git, zip, http) materialise their files
under ``cache_dir`` so every ``SkillFile.source_path`` is a local file.

An unreachable repository, a missing ref or a missing ``skills_root`` raises ``SourceError`` (a
``BuildError``: exit 1) with a message that names the repository and never a secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Protocol

from ..errors import BuildError
from ..lint import LintConfig
from ..model import Diagnostic, DiscoveredItem, Document
from ..resolve_types import Repository, SourceInput, SourceSkill

ReadItem = Callable[[str, DiscoveredItem], Document]


class SourceError(BuildError):
    """A repository cannot be read (unreachable, missing ref or skills_root, bad archive…)."""


@dataclass(frozen=True, slots=True)
class SourceListing:
    """What one repository offers."""

    skills: tuple[SourceSkill, ...]  # sorted by ID bytes
    input: SourceInput
    diagnostics: tuple[Diagnostic, ...] = ()
    collection_docs: Mapping[str, str] = field(default_factory=dict)  # collection path → COLLECTION.md text
    repository: Repository | None = None  # who offers them (precedence of an empty listing too)


class Source(Protocol):
    """A repository, opened.  ``read(root, item)`` parses one discovered SKILL.md (default
    ``lint.read_item``; the build passes a caching wrapper)."""

    repository: Repository

    def skills(self, read: ReadItem | None = None) -> SourceListing: ...


def open_source(repo: Repository, *, cache_dir: Path, lint: LintConfig) -> Source:
    """The ``Source`` for ``repo`` (nothing is fetched until ``skills()`` is called)."""
    from .embedded import EmbeddedSource
    from .filesystem import FilesystemSource
    from .git import GitSource
    from .http import HttpSource
    from .zip import ZipSource

    classes = {"filesystem": FilesystemSource, "embedded": EmbeddedSource, "git": GitSource, "zip": ZipSource,
               "http": HttpSource}
    try:
        cls = classes[repo.type]
    except KeyError:
        raise SourceError(f"repository {repo.name!r}: unknown type {repo.type!r}") from None
    return cls(repo, cache_dir=cache_dir, lint=lint)


__all__ = ["ReadItem", "Source", "SourceError", "SourceListing", "open_source"]
