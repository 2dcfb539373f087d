"""The staging directory a build writes into, and the earlier bundles whose files it may reuse.

A build never touches the visible bundle.  It writes into a temporary sibling that is either fresh
or *recycled* (the generation the previous build swapped out, brought up to date file by file).  A
per-skill file whose content is already known (by its SHA-256, from the manifests) is kept where it
is in a recycled staging directory, or hard-linked from the visible bundle, instead of being
rendered again.  Files are always replaced, never rewritten in place, because a recycled file may
share its inode with the visible bundle: a new file is created with ``O_EXCL``, and a name that is
taken is unlinked first.

At 10,000 skills the bundle holds 43,000 files in 13,000 folders, and creating them is most of
what a build costs (a folder costs more than a file, a hard link a fifth of either): so paths are
plain strings, each call is one system call when nothing is in the way, and ``ensure_dirs`` makes
every folder a batch of files needs in one sorted pass instead of discovering them one failed
``open`` at a time.

The recycled generation's trees outside ``api/`` (the legacy ``.well-known/skills/`` tree, the docs
site: 13,585 files in 19,870 folders at 10,000 skills, nearly all the same from one build to the
next) are *held* aside (``held``: a sibling folder, so an emitter that does not reconcile never sees
them), and the emitter that owns one ``reclaim``s it: the tree is renamed back (one rename), each
file it places is kept where it already is the right inode (``link``, ``link_file``) and replaced
otherwise, and ``settle`` removes what it no longer places, with the folders left empty.  No
folder is made or deleted for an unchanged file; what is never reclaimed is deleted with ``held``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import writing

Entry = tuple[str, int]  # (sha256 hex, size)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# Files of the visible bundle checked by their bytes before its manifest is read instead: a steady
# rebuild asks for a few (the previous build's changes); the first rebuild after a full build for
# all of them, and the manifest then answers.
CHECK_BUDGET = 256


def _holds(path: str, entry: Entry) -> bool:
    """Whether ``path`` is a regular file (not a link) holding the bytes ``entry`` describes."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != entry[1]:
            return False
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest() == entry[0]
    except OSError:
        return False
    finally:
        os.close(fd)


@dataclass
class Staging:
    out: Path
    recycled: dict[str, Entry] = field(default_factory=dict)  # what the recycled staging dir holds
    current_dir: Path | None = None  # the visible bundle
    current: dict[str, Entry] | None = None  # what the visible bundle holds (None: read on first need)
    load_current: Callable[[], dict[str, Entry]] | None = None  # reads it (the manifest of current_dir)
    held: Path | None = None  # the recycled generation's other trees, set aside until reclaimed
    held_entries: dict[str, Entry] = field(default_factory=dict)  # their files (its manifest's entries)
    kept: int = 0
    linked: int = 0
    written: int = 0

    def __post_init__(self) -> None:
        self._root = os.fspath(self.out)
        self._reclaimed: dict[str, Entry] = {}  # the held files now back in ``out`` (not yet placed again)
        self._placed: set[str] = set()  # the files of reclaimed trees placed by this build
        self._by_top: dict[str, list[str]] | None = None
        self._checked = 0  # visible files read to check them (``_in_current``)

    def reclaim(self, tree: str) -> bool:
        """Move the held tree ``tree`` (a folder or file path below the root, e.g. ``.well-known/skills``)
        back into ``out``, so its files can be kept where they are; False when none is held (or a file
        of this build is already in the way: the held one is then deleted with ``held``)."""
        if self.held is None:
            return False
        source, dest = f"{os.fspath(self.held)}/{tree}", f"{self._root}/{tree}"
        if not os.path.lexists(source) or os.path.lexists(dest):
            return False
        parent = dest.rpartition("/")[0]
        if not os.path.isdir(parent):
            try:
                os.makedirs(parent)
            except OSError:  # (a file of this build where a folder on the way is needed)
                return False
        os.rename(source, dest)
        prefix = tree + "/"
        self._reclaimed.update((rel, self.held_entries[rel]) for rel in self._held_by_top().get(tree.split("/")[0], ())
                               if rel.startswith(prefix) or rel == tree)
        return True

    def _held_by_top(self) -> dict[str, list[str]]:
        """The held files by their top-level name (each reclaim reads only its own)."""
        if self._by_top is None:
            self._by_top = {}
            for rel in self.held_entries:
                self._by_top.setdefault(rel.split("/", 1)[0], []).append(rel)
        return self._by_top

    def reclaimed_dirs(self) -> set[str]:
        """The folders the reclaimed trees hold (so far): a file placed in one needs no ``mkdir``."""
        dirs: set[str] = set()
        for rel in self._reclaimed:
            d = rel.rpartition("/")[0]
            while d and d not in dirs:
                dirs.add(d)
                d = d.rpartition("/")[0]
        return dirs

    @property
    def recycling(self) -> bool:
        return bool(self.recycled)

    def current_entries(self) -> dict[str, Entry]:
        """What the visible bundle holds (its manifest, read on first use)."""
        if self.current is None:
            self.current = self.load_current() if self.load_current is not None else {}
        return self.current

    def provide(self, rel: str, entry: Entry) -> bool:
        """Make ``out/rel`` hold the file ``entry`` describes without producing it; False if unknown."""
        if self.recycled.get(rel) == entry:
            self.kept += 1
            return True
        if self.current_dir is None or not self._in_current(rel, entry):
            return False
        dest = f"{self._root}/{rel}"
        try:
            self._place(dest, lambda: os.link(f"{os.fspath(self.current_dir)}/{rel}", dest))
        except OSError:
            return False
        self.linked += 1
        return True

    def _in_current(self, rel: str, entry: Entry) -> bool:
        """Whether the visible bundle's ``rel`` holds the bytes ``entry`` describes: by its manifest
        once read; until then by reading the file itself while few are asked (a steady rebuild asks
        for the files of the skills the previous build changed, which the recycled generation, one
        build older, lacks: hashing those is cheaper than parsing 13 MB of manifest)."""
        if self.current is None and self._checked < CHECK_BUDGET:
            self._checked += 1
            return _holds(f"{os.fspath(self.current_dir)}/{rel}", entry)
        return self.current_entries().get(rel) == entry

    def provide_all(self, files: Iterable[tuple[str, str, int]]) -> bool:
        """``provide`` each ``(rel, sha256, size)``; False at the first it cannot.  The steady case,
        every file still in the recycled generation, costs one dictionary lookup a file (53,000 at
        10,000 skills) and no system call."""
        files = list(files)
        recycled = self.recycled
        if all(recycled.get(rel) == (sha, size) for rel, sha, size in files):
            self.kept += len(files)
            return True
        return all(self.provide(rel, (sha, size)) for rel, sha, size in files)

    def ensure_dirs(self, rels: Iterable[str], below: str = "") -> int:
        """Create (parents first) every folder the files ``rels`` need that does not exist yet;
        returns how many were made.  ``below``: only that folder and its subfolders (its parents
        are known to exist)."""
        need: set[str] = set()
        for rel in rels:
            d = rel.rpartition("/")[0]
            while d and d not in need and (not below or d == below or d.startswith(below + "/")):
                need.add(d)
                d = d.rpartition("/")[0]
        made = 0
        for d in sorted(need):  # a parent sorts before its children
            path = f"{self._root}/{d}"
            try:
                os.mkdir(path)
                made += 1
            except FileExistsError:
                if not os.path.isdir(path):  # a file of the old generation where a folder is now needed
                    Staging._unlink(path)
                    os.mkdir(path)
                    made += 1
        return made

    def write(self, rel: str, data: bytes) -> None:
        """Write ``out/rel`` as a new file."""
        dest = f"{self._root}/{rel}"
        if rel in self._reclaimed:
            self._placed.add(rel)
        fd = self._place(dest, lambda: os.open(dest, _CREATE, 0o644))
        try:
            with writing(dest):
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
        self.link_file(f"{self._root}/{existing}", rel)

    def link_file(self, source: str, rel: str, inode: int | None = None) -> None:
        """``out/rel`` becomes another name of the file ``source`` (its inode ``inode`` when the caller
        knows it), a copy where linking fails (another file system).  In a reclaimed tree a file
        that already is that inode stays; any other is replaced, never written in place (the
        visible bundle may share it).  (Its manifest entry is not enough: a file of the recycled
        generation altered since is replaced, ``test_a_recycled_file_whose_bytes_were_altered_is_replaced``.)"""
        dest = f"{self._root}/{rel}"
        if rel in self._reclaimed:
            self._placed.add(rel)
            try:
                if os.lstat(dest).st_ino == (inode if inode is not None else os.stat(source).st_ino):
                    self.kept += 1
                    return
            except OSError:
                pass
        try:
            self._place(dest, lambda: os.link(source, dest, follow_symlinks=False))
        except OSError:  # (another file system, or links refused)
            with open(source, "rb") as fh:
                self.write(rel, fh.read())
            return
        self.linked += 1

    def keep(self, rels: Iterable[str]) -> None:
        """Count the files ``rels`` of the reclaimed trees as placed by this build (an emitter that
        brought them up to date where they are: the docs site, ``incremental.Placing.RECLAIM``)."""
        self._placed.update(rel for rel in rels if rel in self._reclaimed)

    def unplace(self) -> None:
        """Forget what was placed since the trees were reclaimed (a placing given up half way: the
        next one decides again which files of the reclaimed trees stay)."""
        self._placed.clear()

    def settle(self) -> int:
        """Delete the files of the reclaimed trees that this build did not place again (what the new
        bundle no longer has), and the folders that leaves empty; returns how many files went."""
        gone = [rel for rel in self._reclaimed if rel not in self._placed]
        removed = self._remove_files(gone)
        self._reclaimed.clear()
        self._placed.clear()
        return removed

    @staticmethod
    def _place(dest: str, make: Callable):
        """``make()`` a new file at ``dest``: a name in the way is removed first (never truncated),
        a missing folder is created."""
        try:
            return make()
        except FileExistsError:
            Staging._unlink(dest)
            return make()
        except FileNotFoundError:
            os.makedirs(dest.rpartition("/")[0], exist_ok=True)
            return make()
        except NotADirectoryError:  # a file of the old generation where a folder on the way is now needed
            Staging._clear_path(dest.rpartition("/")[0])
            return make()

    @staticmethod
    def _clear_path(folder: str) -> None:
        """Make ``folder`` (and its parents) folders, removing any file that holds one of the names."""
        parent, _, _ = folder.rpartition("/")
        if parent and not os.path.isdir(parent):
            Staging._clear_path(parent)
        if os.path.lexists(folder) and not os.path.isdir(folder):
            os.unlink(folder)
        os.makedirs(folder, exist_ok=True)

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
        return self._remove_files([rel for rel in self.recycled if rel not in produced])

    def _remove_files(self, rels: Iterable[str]) -> int:
        """Unlink each of ``rels`` (those already gone or now folders are passed over), then the
        folders that leaves empty, deepest first."""
        removed = 0
        dirs: set[Path] = set()
        for rel in rels:
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
