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

from pathlib import Path

from ..resolve_types import Repository, SourceListing
from ..validate.lint import LintConfig
from .base import ReadItem, Source, SourceError

# Each repository type's module and class: only the one a build uses is imported (the HTTP source
# brings http.client and ssl, ~25 ms of every local build's start-up otherwise).
_CLASSES = {"filesystem": ("filesystem", "FilesystemSource"), "embedded": ("filesystem", "EmbeddedSource"),
            "git": ("git", "GitSource"), "zip": ("zip", "ZipSource"), "http": ("http", "HttpSource")}


def open_source(repo: Repository, *, cache_dir: Path, lint: LintConfig) -> Source:
    """The ``Source`` for ``repo`` (nothing is fetched until ``skills()`` is called)."""
    from importlib import import_module

    try:
        module, name = _CLASSES[repo.type]
    except KeyError:
        raise SourceError(f"repository {repo.name!r}: unknown type {repo.type!r}") from None
    cls = getattr(import_module(f"{__name__}.{module}"), name)
    return cls(repo, cache_dir=cache_dir, lint=lint)


__all__ = ["ReadItem", "Source", "SourceError", "SourceListing", "open_source"]
