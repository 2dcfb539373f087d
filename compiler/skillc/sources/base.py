"""What every source shares: the interface, its error and how it reads a SKILL.md.  The package's
``__init__`` opens a source by type and imports every source class, so the classes import these from
here (importing them from the package would make each source module and the package a cycle)."""

from __future__ import annotations

from typing import Callable, Protocol

from ..errors import BuildError
from ..model import DiscoveredItem, Document
from ..resolve_types import Repository, SourceListing

ReadItem = Callable[[str, DiscoveredItem], Document]


class SourceError(BuildError):
    """A repository cannot be read (unreachable, missing ref or skills_root, bad archive…)."""


class Source(Protocol):
    """A repository, opened.  ``read(root, item)`` parses one discovered SKILL.md (default
    ``lint.read_item``; the build passes a caching wrapper)."""

    repository: Repository

    def skills(self, read: ReadItem | None = None) -> SourceListing: ...


__all__ = ["ReadItem", "Source", "SourceError"]
