"""Safe zip archives: deterministic writing of Claude-compatible skill zips, hostile-proof reading.

* ``write_skill_zip(skill, dest, epoch)``: one top-level folder named after the skill with SKILL.md
  directly inside (what Claude.ai and the Claude API accept), package_skill.py's exclusions,
  sorted entries, fixed timestamps and permissions, written atomically.
* ``read_zip(path)``: validates every entry (no absolute paths, no ``..``, no symlinks, no
  duplicates, size and compression-ratio caps) before anything is extracted.
"""

from __future__ import annotations

from pathlib import Path

from .resolve_types import SourceSkill


def write_skill_zip(skill: SourceSkill, dest: Path, epoch: int) -> None:
    """Write ``skill`` as ``dest`` (a Claude-compatible zip); ``epoch`` is SOURCE_DATE_EPOCH or 0."""
    raise NotImplementedError
