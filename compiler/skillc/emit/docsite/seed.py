"""The recycled generation's docs site, seeded while the build reads its sources.

A rebuild keeps the site's unchanged files where they already are in the generation it recycles
(``incremental.link_site``, ``Staging.reclaim``).  When that generation has no site (the previous
build but one ran with ``--no-site``, or there was none: the first rebuilds of a bundle), every
file of the site is linked into the staging folder instead, in the site's own process: 13,585
folders and hard links at 10,000 skills, 0.7 s of system time on the build's critical path (the
first rebuild after a clean one took 4.7 s where the next took 4.2 s).

So the build forks ``seed_site`` at its start: it hard-links the kept site (the files of the last
site build, in the build cache: ``incremental.state_dir``) into a folder of the work area while the
build reads, lints and resolves its sources on the other core; just before the site reclaims its
trees, the staging folder holds that tree as if the recycled generation had it
(``Staging.hold_seed``), and the site emitter reclaims it.  Nothing here decides what is
published: ``link_site`` still keeps a held file only where it is the inode the new site's file
is, replaces the others and removes what the site no longer has; a seeded tree the site does not
reclaim is deleted with the held folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..staging import Entry, Seed
from . import SITE_RECORD
from .incremental import DIGESTS, FRAME_KEY, state_dir


def seed_source(cache_dir: Path | None, out: Path, recycled: Path) -> Path | None:
    """The kept site to seed from: the state folder of the bundle ``out`` in the emitters' cache
    ``cache_dir``, when its last site build finished (``FRAME_KEY``) and the generation the build
    will recycle (``recycled``, possibly absent) holds no site; else None."""
    if cache_dir is None or (recycled / SITE_RECORD).exists():
        return None
    state = state_dir(cache_dir, out)
    if not ((state / FRAME_KEY).is_file() and (state / DIGESTS).is_file() and (state / "site").is_dir()):
        return None
    return state


def seed_site(state: Path, dest: Path) -> dict[str, Entry]:
    """Hard-link each file of the kept site in ``state`` (its ``DIGESTS`` table lists them) to the
    same path below ``dest`` (made here, folders with a 022 umask as the bundle's); returns the
    entries of the files linked.  A file gone since the table was written is left out."""
    os.umask(0o022)
    table = _table(state)
    site, root = os.fspath(state / "site"), os.fspath(dest)
    os.mkdir(root)
    made: set[str] = set()
    entries: dict[str, Entry] = {}
    for rel in sorted(table):
        source = f"{site}/{rel}"
        if not os.path.isfile(source):  # (gone since the table was written: no folder made for it)
            continue
        parent = rel.rpartition("/")[0]
        if parent and parent not in made:
            os.makedirs(f"{root}/{parent}", exist_ok=True)
            while parent and parent not in made:
                made.add(parent)
                parent = parent.rpartition("/")[0]
        os.link(source, f"{root}/{rel}", follow_symlinks=False)
        entries[rel] = table[rel]
    return entries


def _table(state: Path) -> Mapping[str, Entry]:
    """The kept site's files with their SHA-256 and size (only safe relative paths)."""
    raw = json.loads((state / DIGESTS).read_bytes())
    table: dict[str, Entry] = {}
    for rel, row in raw.items() if isinstance(raw, dict) else ():
        parts = rel.split("/")
        if (isinstance(row, list) and len(row) == 4 and rel and not rel.startswith("/")
                and all(p not in ("", ".", "..") for p in parts)):
            table[rel] = (str(row[3]), int(row[1]))
    return table


__all__ = ["Seed", "seed_site", "seed_source"]
