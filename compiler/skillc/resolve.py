"""The resolve stage (pure): precedence, shadowing, ID safety, collections, browsing and queries.

``resolve(listings, settings=…)`` merges what every source offers into one ``Resolution``:

* the same ID offered twice: the higher priority wins, then the earlier declaration; each loser is a
  ``Shadowing`` row and an R101 diagnostic;
* the same ``name`` under different IDs: R102 warning; IDs that differ only by case: R103 error;
  IDs unsafe in a URL or a file name: R104 error;
* collections at every depth: every ancestor path of every ID, described by ``COLLECTION.md``
  (its first line of prose) or "N skills", counting the skills at or below it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .resolve_types import Collection, Resolution, SourceSkill
from .sources import SourceListing


def resolve(listings: Sequence[SourceListing], *, settings: Mapping[str, object] | None = None) -> Resolution:
    """Merge listings (in any order: precedence comes from each repository's priority and order)."""
    raise NotImplementedError


def browse(resolution: Resolution, path: str) -> tuple[list[SourceSkill], list[Collection]]:
    """Seed 004 browsing: the skills directly in ``path`` ("" = root) and its immediate subcollections."""
    raise NotImplementedError


def query(resolution: Resolution, text: str) -> list[SourceSkill]:
    """Seed 004 search: skills whose name or description contains ``text`` (case-insensitive), by ID."""
    raise NotImplementedError
