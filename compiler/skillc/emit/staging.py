"""The staging directory a build writes into, and the earlier bundles whose files it may reuse.

A build never touches the visible bundle.  It writes into a temporary sibling that is either fresh
or *recycled* (the generation the previous build swapped out, brought up to date file by file).  A
per-skill file whose content is already known (by its SHA-256, from the manifests) is kept where it
is in a recycled staging directory, or hard-linked from the visible bundle, instead of being
rendered again.  Files are always replaced, never rewritten in place, because a recycled file may
share its inode with the visible bundle.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

Entry = tuple[str, int]  # (sha256 hex, size)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Staging:
    out: Path
    recycled: dict[str, Entry] = field(default_factory=dict)  # what the recycled staging dir holds
    current_dir: Path | None = None  # the visible bundle
    current: dict[str, Entry] = field(default_factory=dict)  # what the visible bundle holds
    kept: int = 0
    linked: int = 0
    written: int = 0

    @property
    def recycling(self) -> bool:
        return bool(self.recycled)

    def provide(self, rel: str, entry: Entry) -> bool:
        """Make ``out/rel`` hold the file ``entry`` describes without producing it; False if unknown."""
        if self.recycled.get(rel) == entry:
            self.kept += 1
            return True
        if self.current_dir is not None and self.current.get(rel) == entry:
            dest = f"{self._root}/{rel}"
            source = f"{os.fspath(self.current_dir)}/{rel}"
            self._unlink(dest)
            try:
                os.link(source, dest)
            except FileNotFoundError:
                try:
                    os.makedirs(dest.rsplit("/", 1)[0], exist_ok=True)
                    os.link(source, dest)
                except OSError:
                    return False
            except OSError:
                return False
            self.linked += 1
            return True
        return False

    def _clear(self, dest: Path) -> None:
        # A file already there may be a hard link into the visible bundle: unlink, never truncate.
        if self.recycled or self.current_dir is not None:
            try:
                os.unlink(dest)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                shutil.rmtree(dest)

    def write(self, rel: str, data: bytes) -> None:
        """Write ``out/rel`` as a new file (string paths and one ``open``: at 10,000 skills the
        per-file overhead is most of the cost of a build)."""
        dest = f"{self._root}/{rel}"
        if self.recycled or self.current_dir is not None:
            self._unlink(dest)
        try:
            fd = os.open(dest, _CREATE, 0o644)
        except FileNotFoundError:
            os.makedirs(dest.rsplit("/", 1)[0], exist_ok=True)
            fd = os.open(dest, _CREATE, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        self.written += 1

    def copy(self, rel: str, source: str) -> None:
        """Copy a (small) source file's bytes to ``out/rel``."""
        with open(source, "rb") as fh:
            data = fh.read()
        self.write(rel, data)

    def link(self, existing: str, rel: str) -> None:
        """``out/rel`` becomes another name of ``out/existing`` (same bytes)."""
        dest = f"{self._root}/{rel}"
        if self.recycled or self.current_dir is not None:
            self._unlink(dest)
        os.link(f"{self._root}/{existing}", dest)

    @property
    def _root(self) -> str:
        return os.fspath(self.out)

    @staticmethod
    def _unlink(dest: str) -> None:
        try:
            os.unlink(dest)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(dest)

    def prune(self, produced: set[str]) -> int:
        """Delete what a recycled directory still holds from its old generation and nobody produced."""
        removed = 0
        dirs: set[Path] = set()
        for rel in self.recycled:
            if rel in produced:
                continue
            path = self.out / rel
            try:
                os.unlink(path)
                removed += 1
                dirs.add(path.parent)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                pass
        for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
            while d != self.out and d.is_relative_to(self.out):
                try:
                    d.rmdir()
                except OSError:
                    break
                d = d.parent
        return removed
