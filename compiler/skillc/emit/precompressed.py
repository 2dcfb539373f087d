"""Precompressed copies: ``<file>.gz`` next to the large text files the site fetches at run time.

The search index (``api/index/``: header, shards, document chunks, the JS reader) and the site's
scripts, styles and catalog chunks are fetched by every reader's browser; a static server
(nginx ``gzip_static``, Caddy ``precompressed gzip``, ``skillc serve``) then sends these bytes as
they are instead of compressing each answer (or, on hosts without on-the-fly compression, sending
them uncompressed).  Deterministic: gzip level 9 and mtime 0, no file name in the gzip header.
Runs after every other emitter, so the manifest (written after all of them) lists the copies and
the secret gate reads them (decompressed).

Level 9 is slow (0.4-0.8 s for a 10,000-skill index, most of which a one-skill change leaves as it
was): each copy is kept in the build cache under the SHA-256 of the file it compresses
(``<cache>/emit/gz/<folder of the output>/``), and a rebuild copies a kept one instead of
compressing again.  The folder keeps only what the last build of that output used.
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
    kept = _kept_copies(ctx)
    used: set[str] = set()
    for path in precompressed_sources(ctx.out):
        target = path.with_name(path.name + ".gz")
        data = path.read_bytes()
        with writing(target):
            # (unlinked first: a reused site is hard-linked from the visible bundle, never written through)
            target.unlink(missing_ok=True)
            target.write_bytes(_compressed(data, kept, used))
    if kept is not None:
        _forget_unused(kept, used)


def _kept_copies(ctx: EmitContext) -> Path | None:
    """The cache folder of this output's compressed copies (None: no cache)."""
    if ctx.cache_dir is None:
        return None
    from .docsite import bundle_path

    out = os.path.abspath(bundle_path(ctx.out))
    return Path(ctx.cache_dir) / "gz" / hashlib.sha256(os.fsencode(out)).hexdigest()[:16]


def _compressed(data: bytes, kept: Path | None, used: set[str]) -> bytes:
    """``gzip_bytes(data)``, from the kept copy of the same bytes when there is one."""
    if kept is None:
        return gzip_bytes(data)
    name = hashlib.sha256(data).hexdigest() + ".gz"
    used.add(name)
    try:
        packed = (kept / name).read_bytes()
        if gzip.decompress(packed) == data:  # (a damaged copy is made again)
            return packed
    except (OSError, EOFError, gzip.BadGzipFile):
        pass
    packed = gzip_bytes(data)
    _keep(kept / name, packed)
    return packed


def _keep(path: Path, packed: bytes) -> None:
    """Write a copy into the cache (whole or not at all; a cache that cannot be written is skipped)."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(packed)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)


def _forget_unused(kept: Path, used: set[str]) -> None:
    try:
        names = os.listdir(kept)
    except OSError:
        return
    for name in names:
        if name not in used:
            (kept / name).unlink(missing_ok=True)
