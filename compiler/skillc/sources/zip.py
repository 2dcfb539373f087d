"""Zip repositories: skills read from an archive (a local ``path`` or a ``url``).

The archive is validated by ``archive.check_zip`` (no traversal, absolute paths, links, bombs),
then extracted once into ``cache_dir/zip/<sha256>`` (a temporary directory renamed into place), and
listed like a directory.  ``SourceInput.resolved`` is ``sha256:<hex>`` of the archive.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
import urllib.parse
from pathlib import Path

from ..archive import ArchiveError, check_zip, extract_zip
from ..resolve_types import Repository, SourceInput, SourceListing
from ..validate.lint import LintConfig
from .base import ReadItem, SourceError
from .filesystem import declared, display, list_directory, skills_root_of


class ZipSource:
    def __init__(self, repository: Repository, *, cache_dir: Path, lint: LintConfig) -> None:
        self.repository = repository
        self.cache_dir = cache_dir
        self.lint = lint

    def _archive(self) -> Path:
        loc = self.repository.location
        if "://" not in loc:
            path = Path(loc)
            if not path.is_file():
                raise SourceError(f"repository {self.repository.name!r}: zip archive {loc} not found"
                                  f"{declared(self.repository)}")
            return path
        from .http import deadline_of, fetch

        key = hashlib.sha256(loc.encode()).hexdigest()[:16]
        dest = self.cache_dir / "zip" / f"download-{key}.zip"
        dest.parent.mkdir(parents=True, exist_ok=True)
        data, _ = fetch(self.repository, loc, accept="application/zip", until=deadline_of(self.repository))
        tmp = dest.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, dest)
        return dest

    def skills(self, read: ReadItem | None = None) -> SourceListing:
        repo = self.repository
        archive = self._archive()
        try:
            listing = check_zip(archive)
        except ArchiveError as exc:
            raise SourceError(f"repository {repo.name!r}: {exc}") from None
        base = self.cache_dir / "zip"
        base.mkdir(parents=True, exist_ok=True)
        target = base / listing.sha256
        with open(base / f"{listing.sha256}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_dir():
                tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=base))
                try:
                    extract_zip(listing, tmp / "x")
                    os.replace(tmp / "x", target)
                except ArchiveError as exc:
                    raise SourceError(f"repository {repo.name!r}: {exc}") from None
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
        root = skills_root_of(repo, target)
        source_input = SourceInput(repo.name, "zip", display(repo), f"sha256:{listing.sha256}")
        # An archive that is one skill is named after its file: for a url, the path's last segment
        # (a presigned download's `?X-Amz-Date=…` made the ID unsafe, R104).
        loc = urllib.parse.unquote(urllib.parse.urlsplit(repo.location).path) if "://" in repo.location \
            else repo.location
        name = Path(loc.rstrip("/").rsplit("/", 1)[-1]).stem if root == target else None
        return list_directory(repo, root, read, self.lint, source_input, name)


__all__ = ["ZipSource"]
