"""Incremental site builds: one changed skill re-renders only the pages that show it.

The generated mkdocs project and mkdocs' output are kept between builds in the build cache
(``<cache>/site/<hash of the output folder>/``, never in the bundle).  Each build writes only the
project files whose text changed (the others keep their modification time), removes the pages of
skills that are gone, and runs ``mkdocs build --dirty``, which renders a page again only when its
source is newer than its output.  Anything every page depends on (the theme files, the tool
versions, ``mkdocs.yml``, the lists of published files and pages that ``markdown_safe`` reads, the
clock) is the *frame key*: when it changes, the kept state is dropped and mkdocs builds clean.
The result is then hard-linked into the staging folder: byte-identical to a clean build (a test
holds it to that).  Linking is safe because no file of the kept output is ever written in place:
the bounded mkdocs unlinks a file before writing it, and so do the build's own records.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

FRAME_KEY = "frame.key"


def state_dir(cache_dir: Path, out: Path) -> Path:
    """Where the project and output of the bundle built into ``out`` are kept."""
    digest = hashlib.sha256(os.fsencode(os.path.abspath(out))).hexdigest()[:16]
    return Path(os.path.abspath(cache_dir)) / "site" / digest  # (mkdocs runs in another folder)


def frame_key(files: Mapping[str, str], theme_key: str, shared: tuple[str, ...]) -> str:
    """What every page depends on: the theme and tools (``theme_key``) and the shared files."""
    h = hashlib.sha256(theme_key.encode())
    for rel in shared:
        h.update(rel.encode() + b"\0" + files.get(rel, "").encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One build at a time uses the kept state of an output folder."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def sync(files: Mapping[str, str], project: Path, theme: frozenset[str]) -> tuple[list[str], list[str]]:
    """Write the files whose text changed (an unchanged file keeps its modification time, so mkdocs
    skips its page) and delete the generated ones no longer generated (``theme``: the theme's own
    files, copied in by a clean build); returns the deleted paths and the written ones."""
    changed: list[str] = []
    removed = sorted(rel for rel in _listing(project) if rel not in files and rel not in theme)
    for rel in removed:
        (project / rel).unlink()
    for rel, text in files.items():
        data = text.encode("utf-8", "surrogateescape")
        path = project / rel
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changed.append(rel)
    return removed, changed


def files_below(folder: Path) -> list[str]:
    """Every file's path below ``folder`` (links not followed), in no particular order."""
    out: list[str] = []
    if not folder.is_dir():
        return out
    with os.scandir(folder) as it:
        entries = list(it)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            out.extend(files_below(Path(entry.path)))
        else:
            out.append(entry.path)
    return out


def _listing(root: Path) -> list[str]:
    """Every file below ``root``, relative, '/'-separated (``files_below``: scandir)."""
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in files_below(root)]


def drop_outputs(site: Path, removed: list[str]) -> None:
    """The built files of removed project files (``docs/x/index.md`` → ``x/index.html``)."""
    for rel in removed:
        if not rel.startswith("docs/"):
            continue
        doc = rel[len("docs/"):]
        target = site / (doc[:-len(".md")] + ".html" if doc.endswith("index.md") else doc)
        target.unlink(missing_ok=True)


def link_site(site: Path, out: Path, skip) -> list[str]:
    """Hard-link the built site into the staging folder (a copy where linking fails: another file
    system); ``skip(rel)`` leaves a file out.  Safe because nothing ever writes into a kept file:
    the bounded mkdocs unlinks each file before writing it (``bounded.fresh_inodes``) and the
    build replaces its own records, so a bundle holding a link keeps its bytes while the next build
    runs.  Each folder is made once, when its first file is linked.  Returns the top-level names."""
    names: set[str] = set()
    made: set[str] = set()
    for rel in _listing(site):
        if skip(rel):
            continue
        parent = rel.rpartition("/")[0]
        if parent and parent not in made:
            os.makedirs(out / parent, exist_ok=True)
            while parent and parent not in made:
                made.add(parent)
                parent = parent.rpartition("/")[0]
        try:
            os.link(site / rel, out / rel, follow_symlinks=False)
        except OSError:
            shutil.copyfile(site / rel, out / rel)
        names.add(rel.split("/", 1)[0])
    return sorted(names)


def replace_bytes(path: Path, data: bytes) -> None:
    """Write ``path`` as a new file (unlinked first): a bundle may share the old one's inode."""
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def reset(folder: Path) -> None:
    for name in ("project", "site", FRAME_KEY):
        path = folder / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
