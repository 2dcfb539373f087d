"""Precompressed copies: ``<file>.gz`` next to the large text files the site fetches at run time.

The search index (``api/index/``: header, shards, document chunks, the JS reader) and the site's
scripts, styles and catalog chunks are fetched by every reader's browser; a static server
(nginx ``gzip_static``, Caddy ``precompressed gzip``, ``skillc serve``) then sends these bytes as
they are instead of compressing each answer (or, on hosts without on-the-fly compression, sending
them uncompressed).  Deterministic: gzip level 9 and mtime 0, no file name in the gzip header.
Runs after every other emitter, so the manifest (written after all of them) lists the copies and
the secret gate reads them (decompressed).

With a build cache, each copy is a record of its ``gzip`` table keyed by its source's SHA-256: a
rebuild compresses only the files that changed (gzip level 9 over the 8 MB a 10,000-skill bundle
fetches took about 0.8 s of every rebuild).
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import Any

from ..errors import writing
from ..resolve_types import EmitContext

# What a browser fetches as it searches or filters: the folders below, these suffixes.
PRECOMPRESSED_DIRS = ("api/index", "assets/skillc")
PRECOMPRESSED_SUFFIXES = (".json", ".bin", ".js", ".css")
PRECOMPRESSED_MIN = 1024  # below this a gzip copy saves less than its request headers weigh
GZIP_LEVEL = 9
GZIP_TABLE = "gzip"  # (skillc.cache.TABLES)


def precompressed_sources(out: Path, folders: tuple[str, ...] = PRECOMPRESSED_DIRS) -> list[Path]:
    """The files that get a ``.gz`` copy, in path order (``whoosh/`` is read by Python, not fetched)."""
    found = []
    for folder in folders:
        base = out / folder
        if base.is_dir():
            found += [p for p in base.rglob("*") if p.is_file() and not p.is_symlink()
                      and p.suffix in PRECOMPRESSED_SUFFIXES and "whoosh" not in p.relative_to(out).parts
                      and p.stat().st_size >= PRECOMPRESSED_MIN]
    return sorted(found)


def precompressed_folders(tops: frozenset[str], inside: bool) -> tuple[str, ...]:
    """The ``PRECOMPRESSED_DIRS`` below the top-level names ``tops`` (``inside``), or below none of them."""
    return tuple(f for f in PRECOMPRESSED_DIRS if (f.split("/", 1)[0] in tops) == inside)


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, GZIP_LEVEL, mtime=0)


def emit_precompressed(ctx: EmitContext, folders: tuple[str, ...] = PRECOMPRESSED_DIRS) -> None:
    """The copies of the files below ``folders`` (the build makes those of the index while the docs
    site is built, then the site's: ``precompressed_folders``); the same bytes either way."""
    known = ctx.collected.known
    for path in precompressed_sources(ctx.out, folders):
        target = path.with_name(path.name + ".gz")
        rel = path.relative_to(ctx.out).as_posix()
        with writing(target):
            # (unlinked first: a reused site is hard-linked from the visible bundle, never written through)
            target.unlink(missing_ok=True)
            data = compressed(ctx.options.cache, path, known.get(rel))
            target.write_bytes(data)
        known[rel + ".gz"] = (hashlib.sha256(data).hexdigest(), len(data))  # (the manifest reads it no more)


def compressed(cache: Any, path: Path, known: tuple[str, int] | None = None) -> bytes:
    """``gzip_bytes`` of the file at ``path``, from the build cache's ``gzip`` table when it holds
    them; ``known``: the file's (sha256, size) when an emitter stated them (then it is not read)."""
    if cache is None:
        return gzip_bytes(path.read_bytes())
    data = None
    if known is None:
        data = path.read_bytes()
        known = (hashlib.sha256(data).hexdigest(), len(data))
    found = cache.get(GZIP_TABLE, known[0])
    if not isinstance(found, bytes):
        found = gzip_bytes(data if data is not None else path.read_bytes())
        cache.put(GZIP_TABLE, known[0], found)
    return found
