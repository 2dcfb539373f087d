"""Precompressed copies: ``<file>.gz`` next to the large text files the site fetches at run time.

The search index (``api/index/``: header, shards, document chunks, the JS reader) and the site's
scripts, styles and catalog chunks are fetched by every reader's browser; a static server
(nginx ``gzip_static``, Caddy ``precompressed gzip``, ``skillc serve``) then sends these bytes as
they are instead of compressing each answer (or, on hosts without on-the-fly compression, sending
them uncompressed).  Deterministic: gzip level 9 and mtime 0, no file name in the gzip header.
Runs after every other emitter, so the manifest (written after all of them) lists the copies and
the secret gate reads them (decompressed).

With a build cache, each copy is kept in ``<cache>/site/<output>/gzip/<sha256 of the source>.gz``
and hard-linked into the bundle: a rebuild compresses only the files that changed (gzip level 9
over the 8 MB a 10,000-skill bundle fetches took about 0.8 s of every rebuild).  The store keeps
what the last build used; a kept copy is never written in place (the bundles share its inode).
"""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

from ..errors import writing
from ..resolve_types import EmitContext

# What a browser fetches as it searches or filters: the folders below, these suffixes.
PRECOMPRESSED_DIRS = ("api/index", "assets/skillc")
PRECOMPRESSED_SUFFIXES = (".json", ".bin", ".js", ".css")
PRECOMPRESSED_MIN = 1024  # below this a gzip copy saves less than its request headers weigh
GZIP_LEVEL = 9


def precompressed_sources(out: Path) -> list[Path]:
    """The files that get a ``.gz`` copy, in path order (``whoosh/`` is read by Python, not fetched)."""
    found = []
    for folder in PRECOMPRESSED_DIRS:
        base = out / folder
        if base.is_dir():
            found += [p for p in base.rglob("*") if p.is_file() and not p.is_symlink()
                      and p.suffix in PRECOMPRESSED_SUFFIXES and "whoosh" not in p.relative_to(out).parts
                      and p.stat().st_size >= PRECOMPRESSED_MIN]
    return sorted(found)


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, GZIP_LEVEL, mtime=0)


def emit_precompressed(ctx: EmitContext) -> None:
    store = _store(ctx)
    used: set[str] = set()
    for path in precompressed_sources(ctx.out):
        target = path.with_name(path.name + ".gz")
        with writing(target):
            # (unlinked first: a reused site is hard-linked from the visible bundle, never written through)
            target.unlink(missing_ok=True)
            data = path.read_bytes()
            if store is None:
                target.write_bytes(gzip_bytes(data))
                continue
            name = hashlib.sha256(data).hexdigest() + ".gz"
            used.add(name)
            try:
                kept = _stored(store, name, data)
            except OSError:  # (a cache that cannot be written never fails a build)
                target.write_bytes(gzip_bytes(data))
                continue
            _link_or_copy(kept, target)
    if store is not None:
        _forget_unused(store, used)


def _store(ctx: EmitContext) -> Path | None:
    """The folder of kept copies for the bundle built into ``ctx.out`` (None without a cache)."""
    if ctx.cache_dir is None:
        return None
    from .docsite import bundle_path
    from .docsite.incremental import state_dir

    current = getattr(ctx.options.staging, "current_dir", None)
    store = state_dir(ctx.cache_dir, current or bundle_path(ctx.out)) / "gzip"
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError:  # (a cache that cannot be written never fails a build: compressed each time)
        return None
    return store


def _forget_unused(store: Path, used: set[str]) -> None:
    """Keep only the copies the bundle just built holds (the store never grows past one bundle's)."""
    try:
        for entry in os.scandir(store):
            if entry.name not in used:
                os.unlink(entry.path)
    except OSError:
        pass


def _stored(store: Path, name: str, data: bytes) -> Path:
    """The kept copy of ``data`` (compressed and written, as a new file renamed into place, if absent)."""
    path = store / name
    if not path.is_file():
        part = store / f".{name}.{os.getpid()}"
        part.write_bytes(gzip_bytes(data))
        os.replace(part, path)
    return path


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # (the cache on another file system)
        target.write_bytes(source.read_bytes())
