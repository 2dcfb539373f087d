"""The incremental build cache: content-addressed records, so an unchanged skill is not parsed,
linted or rendered again.

Every record is keyed by a SHA-256 that covers what it depends on:

* a **parse** record by the file's bytes (its SHA-256) and the tool version;
* a **lint** record by the skill's digest (every file of the skill), the tool version and the hash
  of the lint configuration (and, for a skill at a repository's root, that folder's name, which
  S308 compares its name with);
* a **render** record (the bundle files one skill produces: wire document, supporting files, zip)
  by the skill's digest, its ID, repository, tier, the tool version and the build configuration;
* an **index** record (one skill's search-index analysis: terms, weighted frequencies, field bits)
  by its SKILL.md hash and indexed fields, and the whole index by all of those and the IDs;
* a **stat** record (``file_digest``) maps a source file's path to the SHA-256 of its bytes and the
  ``stat`` it had when hashed (device, inode, size, mtime_ns, ctime_ns), so an unchanged file is
  neither read nor hashed again (a SKILL.md's also keeps the key of its parse record, with the path,
  kind and skill it was read under).  See ``file_digest`` for when a stat is trusted;
* a **listing** record (``sources.filesystem.skill_files``) keeps a skill folder's file list with
  the stat of every folder read, so an unchanged skill's folders are not listed again;
* a **discovery** record (``sources.filesystem.remembered_discovery``) keeps a repository's walk
  with the stat of every folder it listed, so an unchanged repository is not walked again;
* a **wellknown** record keeps one skill's rows of the discovery indexes and its legacy tree's files
  (``emit.wellknown``), keyed by its archive's and wire document's SHA-256, its main file's
  spelling, its ID and its flat name;
* a **manifest** record keeps the SHA-256 of the manifest a build swapped into an output folder:
  the next build finds the same bytes there and need not parse them (``emit.manifest.read_manifest``);
* an **index-files** record keeps a whole search index (its files, or its postings: megabytes each).

Records are plain Python values (no dataclasses: those unpickle slower than a YAML parse), kept in
one pickle per table below ``root``.  A build keeps exactly the records it used: the new ones go
into a small *delta* file beside the table (``<table>.delta.pickle``, tied to its table by a random
token), and the table itself is rewritten (compacted) only when a fifth of what it holds went
unused or the delta grew past a fifth of it, so a rebuild that changed one skill writes kilobytes,
not the whole cache.  The few tables of large records (``FILE_TABLES``) keep each record in a file
of its own (``<table>/<key>.pickle``), read only when a build asks for it (loading every table
whole unpickled megabytes of search index a rebuild did not use).  Every file is replaced
atomically.  ``stats`` counts hits and misses; ``skillc build --json`` reports them (``parsed``,
``cached``…).  A cache that cannot be read is ignored, never trusted.
"""

from __future__ import annotations

import hashlib
import operator
import os
import pickle
import re
import stat as stat_module
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from pathlib import Path
from typing import Any

from .errors import writing
from .model import ITEM_KIND_OF, Diagnostic, Document, Frontmatter, ItemKind, Severity
from .parse.document import parse_document
from .version import __version__

FORMAT = 28  # (28: the whole search index and its postings in records of their own files (index-files); 27: P214 for control characters written as YAML escapes, R131, R104 for names that are not UTF-8 or end .html/.svg/.xml…, such files of a skill in its zip only; 26: lint verdicts block a credential hidden by YAML escapes; the publishing gate's verdicts; 25: a Plan Cascade rule without a priority is priority 0; 24: a folder laid out as a git repository is withheld; 23: a .git file is withheld from the bundle; 22: code spans end at a list item, heading, quote or table row; 21: a secret behind a bold Markdown label (`**Client Secret**: …`) is found and withheld; M60x see the skill-memory reader's line layout; 20: links masked as CommonMark reads code spans, comments and definitions; bad dates placed at the value; unbalanced allowed-tools; no quoting fix for a null; 19: extend-select adds to a select; 18: the secret scan finds keys next to non-ASCII letters and values in escaped quotes, lint messages show secrets redacted: a cached lint verdict or withheld list would keep publishing them; 17: no archive for a skill folder named __MACOSX; 16: YAML errors at the key, quote or bracket to fix, a tab opening a block scalar read as text; 15: positions in the file's lines after NEL, U+2028, U+2029; 14: credential names in any case; 13: archive entry limits; 12: names import refuses are withheld; 11: a skill.md listed first in its discovery entry; 10: fixtures under assets/ listed with their skill; 6: the wire body without the blank lines after the frontmatter; 7: the frontmatter's last line break; 8: list items' positions; 9: the wire body from the closing line's dashes)
TABLES = ("parse", "lint", "render", "index", "stat", "listing", "discovery", "gate", "bundle-clean", "gzip",
          "manifest", "wellknown")
# Tables of a few large records, one file each, read on demand (``BuildCache.get``), never loaded whole.
FILE_TABLES = ("index-files",)
COMPACT_SHARE = 0.2  # rewrite a table when this share of it went unused (or its delta is this big)
# A stat is trusted only for a file last modified (mtime or ctime) this long before the start of the
# build that hashed it: file times come from a coarse kernel clock (a jiffy behind the one
# ``time.time_ns`` reads), and an edit in the same tick as the hashing leaves the stat unchanged.
RACY_NS = 1_000_000_000
# File systems that keep whole milliseconds or coarser (FAT: 2 s, exFAT: 10 ms, HFS+: 1 s) round
# times down: a longer margin.
COARSE_RACY_NS = 3_000_000_000


_CACHE_LAYOUT = frozenset({"records", "sources", "emit", "site"})  # what skillc keeps in its cache folder


def own_cache(root: Path) -> bool:
    """``root`` is skillc's cache folder, or may become it: absent, empty, tagged, or holding only
    what skillc keeps there."""
    from .discover.walk import CACHE_TAG

    try:
        return not root.exists() or (root / CACHE_TAG).is_file() or \
            all(e.name in _CACHE_LAYOUT for e in os.scandir(root))
    except OSError:
        return False


def tag_cache_root(root: Path) -> None:
    """Create ``root`` with a ``CACHEDIR.TAG`` in it: backup tools leave it out, and discovery never
    reads it as a repository (a cache inside the project would otherwise publish the checkouts of
    the git sources in it)."""
    from .discover.walk import CACHE_TAG, CACHE_TAG_SIGNATURE

    tag = root / CACHE_TAG
    if tag.is_file() or not own_cache(root):  # (anything else may be someone's data: never tagged)
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        tag.write_bytes(CACHE_TAG_SIGNATURE + b"\n# This file is a cache directory tag created by skillc.\n"
                        b"# For information about cache directory tags see https://bford.info/cachedir/\n")
    except OSError:
        pass  # (a read-only cache is reported where it is written)


def key_of(*parts: object) -> str:
    """A record's key: the SHA-256 of the parts' ``repr`` (strings are quoted and escaped in it, so
    different parts never give the same text)."""
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class CacheStats:
    parsed: int = 0  # SKILL.md files parsed this build
    cached: int = 0  # SKILL.md files whose parse came from the cache
    linted: int = 0  # skills whose document rules ran
    lint_cached: int = 0
    rendered: int = 0  # skills whose bundle files were produced again
    render_cached: int = 0
    hashed: int = 0  # source files read and hashed (SKILL.md and supporting files)
    stat_cached: int = 0  # source files whose hash came from their unchanged stat
    listed: int = 0  # skill folders listed (the others' listings were remembered)
    walked: int = 0  # repository folders walked by discovery (the others' walks were remembered)

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class TableChanges:
    """What a process did with one table of the build's cache (``BuildCache.changes``): the keys of
    the records it used as they were loaded (or read), and the records it put."""
    table: str
    used: tuple[str, ...]
    put: dict[str, Any]


# --- compact, fast-to-load forms of model objects ------------------------------------------------

def _diag_out(d: Diagnostic) -> tuple:
    return (d.code, d.severity.value, d.path, d.line, d.column, d.message, d.skill, d.fix)


def _diag_in(t: tuple) -> Diagnostic:
    return Diagnostic(t[0], Severity(t[1]), t[2], t[3], t[4], t[5], t[6], t[7])


def diagnostics_out(diags) -> tuple:
    return tuple(_diag_out(d) for d in diags)


def diagnostics_in(rows) -> tuple[Diagnostic, ...]:
    return tuple(_diag_in(t) for t in rows)


class _Unpickled(Mapping):
    """One of a cached document's position maps (key positions, scalars), unpickled from the parse
    record on first use: most cached documents are never asked for a position, and unpickling
    10,000 documents' maps of small tuples was most of the time a rebuild spent loading the cache."""

    __slots__ = ("_blob", "_index", "_map")

    def __init__(self, blob: bytes, index: int) -> None:
        self._blob, self._index, self._map = blob, index, None

    def _get(self) -> Mapping:
        m = self._map
        if m is None:
            m = self._map = pickle.loads(self._blob)[self._index]
        return m

    def __getitem__(self, key: Any) -> Any:
        return self._get()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._get()

    def __iter__(self) -> Iterator:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple:
        return (_Unpickled, (self._blob, self._index))  # still lazy in a worker process


def _document_out(doc: Document) -> tuple:
    """A parse record: the document with its text (so a file whose stat did not change is not read);
    the frontmatter's key positions and scalars as one pickle (the parser's maps pickle compactly)."""
    fm = doc.frontmatter
    fm_rec = None
    if fm is not None:
        maps = pickle.dumps((fm.keys, fm.scalars), protocol=pickle.HIGHEST_PROTOCOL)
        fm_rec = (fm.data, maps, fm.start_line, fm.end_line)
    full = doc.text
    body_rec: Any = len(doc.body) if full.endswith(doc.body) else doc.body
    return (doc.kind.value, doc.size, fm_rec, full, body_rec, doc.body_line, diagnostics_out(doc.diagnostics))


def _document_in(rec: tuple, path: str, digest: str) -> Document:
    kind, size, fm_rec, text, body_rec, body_line, diags = rec
    body = (text[len(text) - body_rec:] if body_rec else "") if isinstance(body_rec, int) else body_rec
    fm = None
    if fm_rec is not None:
        data, maps, start, end = fm_rec
        fm = Frontmatter(data, _Unpickled(maps, 0), _Unpickled(maps, 1), start, end)
    return Document(path, ITEM_KIND_OF.get(kind) or ItemKind(kind), digest, size, text, fm, body, body_line,
                    diagnostics_in(diags) if diags else ())



_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_MISSING = object()


def _read_upto(fd: int, n: int, size: int) -> bytes:
    """Up to ``n`` bytes of a file whose ``fstat`` said ``size``: one ``read`` when it did not change
    (a regular file returns a short count only at its end), more while fewer than ``size`` came."""
    data = os.read(fd, n)
    if len(data) >= min(n, size) or not data:
        return data
    parts = [data]
    got = len(data)
    while got < n and (chunk := os.read(fd, n - got)):
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def stat_signature(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev)


def stat_settled(sig: tuple[int, int, int, int, int], hashed_ns: int) -> bool:
    """Whether a file with this stat, hashed by a build that started at ``hashed_ns``, cannot have
    changed since without its stat changing (it was last modified well before that build began)."""
    mtime, ctime = sig[2], sig[3]
    margin = COARSE_RACY_NS if not mtime % 1_000_000 or not ctime % 1_000_000 else RACY_NS
    return max(mtime, ctime) < hashed_ns - margin


class BuildCache:
    """Load once, look up many times, ``save()`` once.  ``root=None`` disables caching (counts still).

    ``started_ns`` is when the build began (``time.time_ns()`` by default): stat records made now
    carry it, and ``file_digest`` trusts a stat only for a file that had settled before it."""

    def __init__(self, root: Path | None, salt: str = "", started_ns: int | None = None, *,
                 fresh: bool = False) -> None:
        self.root = root
        self.save_error: str | None = None  # why save() could not write (the build still succeeded)
        self.salt = f"{__version__}|{FORMAT}|{salt}"
        self.started_ns = time.time_ns() if started_ns is None else started_ns
        self.stats = CacheStats()
        # The records loaded, per table: each table file is read on the first look at it (``_Loaded``),
        # so the tables the emitters after the site's fork use are not loaded before it, and a table a
        # build never looks at is never unpickled.
        self._old: dict[str, dict] = _Loaded(self._load if root is not None and not fresh else None)
        self._old.update((t, {}) for t in FILE_TABLES)
        self._new: dict[str, dict] = {t: {} for t in (*TABLES, *FILE_TABLES)}
        # The keys given a record that is not the one loaded (``put``, new stat records): what ``save``
        # writes is found from them, not by comparing 10,000 records a table (a steady rebuild).
        self._dirty: dict[str, set[str]] = {t: set() for t in (*TABLES, *FILE_TABLES)}
        self._base: dict[str, tuple[str, int]] = {}  # table -> (token, records in its table file)
        self._delta_keys: dict[str, frozenset] = {}  # table -> keys loaded from its delta file
        # FILE_TABLES: the record files each holds (by file name), and those a lookup may read
        self._on_disk: dict[str, frozenset[str]] = {t: frozenset() for t in FILE_TABLES}
        self._readable: dict[str, frozenset[str]] = dict(self._on_disk)
        # FILE_TABLES: the keys of the records a forked process used (``adopt``): kept, never read here
        self._held: dict[str, set[str]] = {t: set() for t in FILE_TABLES}
        if root is not None:
            for table in FILE_TABLES:  # (listed even when fresh: save() removes what it did not write)
                self._on_disk[table] = _record_files(root / table)
        if root is not None and not fresh:  # fresh: read nothing, and save() rewrites every table
            self._readable = dict(self._on_disk)

    def _load(self, table: str) -> dict:
        assert self.root is not None
        base = self._read(self.root / f"{table}.pickle")
        if base is None:
            return {}
        token, data = base
        self._base[table] = (token, len(data))
        delta = self._read(self.root / f"{table}.delta.pickle")
        if delta is not None and delta[0] == token:
            data.update(delta[1])
            self._delta_keys[table] = frozenset(delta[1])
        return data

    def _read(self, path: Path) -> tuple[str, dict] | None:
        try:
            with open(path, "rb") as fh:
                salt, token, data = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
            return None
        if salt != self.salt or not isinstance(token, str) or not isinstance(data, dict):
            return None
        return token, data

    def get(self, table: str, key: str) -> Any:
        value = self._old[table].get(key)
        if value is None:
            value = self._new[table].get(key)
            if value is None and table in self._readable:
                value = self._read_record(table, key)
        else:
            self._new[table][key] = value
        return value

    def _read_record(self, table: str, key: str) -> Any:
        """The record of a ``FILE_TABLES`` table read from its own file (None: none, or not this
        version's, or not this key's); kept for the next build as it is (not rewritten)."""
        name = _record_name(key)
        if name not in self._readable[table]:
            return None
        assert self.root is not None
        try:
            with open(self.root / table / name, "rb") as fh:
                salt, stored_key, value = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
            return None
        if salt != self.salt or stored_key != key or value is None:
            return None
        self._new[table][key] = value
        return value

    def kept(self, table: str, keys: list[str], value: Any) -> set[str]:
        """Those of ``keys`` whose record is ``value``, each kept for the next build (``get`` for
        many keys at once: the publishing gate asks for 53,000 verdicts at 10,000 skills, so each
        key is looked up in the table once: passes of ``map``/``compress`` looking each up three
        times cost twice as much, each pass over 60,000 records being memory-bound)."""
        old, new = self._old[table], self._new[table]
        wanted = set(keys)
        get = old.get  # (one look-up a key: each pass over the table's 60,000 records is memory-bound)
        found = {key: record for key in wanted if (record := get(key, _MISSING)) == value}
        new.update(found)  # (the loaded objects: ``save`` tells unchanged records by identity)
        hits = set(found)
        added = [key for key in wanted.difference(hits) if key in new]  # (records put by this build)
        hits.update(compress(added, map(operator.eq, repeat(value), map(new.__getitem__, added))))
        return hits

    def put(self, table: str, key: str, value: Any) -> None:
        if self._old[table].get(key, _MISSING) is not value:
            self._dirty[table].add(key)
        self._new[table][key] = value

    def changes(self, tables: tuple[str, ...]) -> tuple[TableChanges, ...]:
        """What this process did with ``tables`` (a forked process's records are lost with it unless
        the build process takes them over: ``adopt``)."""
        out = []
        for table in tables:
            new, dirty = self._new[table], self._dirty[table]
            out.append(TableChanges(table, tuple(k for k in new if k not in dirty),
                                    {k: new[k] for k in dirty if k in new}))
        return tuple(out)

    def adopt(self, changes: tuple[TableChanges, ...]) -> None:
        """Keep for the next build the records a forked process used or put (``changes``), as if this
        process had: the used ones as loaded (a record file of a ``FILE_TABLES`` table is kept as it
        is, not read), the put ones written by ``save``."""
        for change in changes:
            if change.table in FILE_TABLES:
                self._held[change.table].update(change.used)
            else:
                old = self._old[change.table]
                self._new[change.table].update((k, old[k]) for k in change.used if k in old)
            for key, value in change.put.items():
                self.put(change.table, key, value)

    # --- source files --------------------------------------------------------------------------------
    def file_digest(self, path: str, st: os.stat_result | None = None) -> tuple[str, int]:
        """``(sha256 hex, size)`` of the regular file at ``path`` (``st``: its ``stat``, if known).

        The bytes are read and hashed unless the file's stat (device, inode, size, mtime_ns,
        ctime_ns) equals the one recorded when it was hashed *and* the file was last modified
        (mtime or ctime: an edit that restores the mtime still moves the ctime) at least
        ``RACY_NS`` before the build that hashed it began; otherwise the stat is ambiguous (an edit
        in the same clock tick as the hashing keeps it) and the file is hashed again.  Raises
        ``OSError`` when the file cannot be read."""
        if st is not None:
            rec = self._stat_record(path, st)
            if rec is not None:
                self.stats.stat_cached += 1
                return rec[1], rec[2]
        fd = os.open(path, _READ)
        try:
            sig = stat_signature(os.fstat(fd))  # of the file read (the path may have been replaced)
            h = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                h.update(chunk)
            digest = h.hexdigest()
        finally:
            os.close(fd)
        self.stats.hashed += 1
        self.put("stat", path, (sig, digest, sig[1], self.started_ns))
        return digest, sig[1]

    def _stat_record(self, path: str, st: os.stat_result) -> tuple | None:
        """The stat record ``(signature, sha256, size, hashed_ns)`` of ``path`` if it can be trusted."""
        rec = self._old["stat"].get(path)
        if rec is not None and rec[0] == stat_signature(st) and stat_settled(rec[0], rec[3]):
            self._new["stat"][path] = rec
            return rec
        return None

    # --- the parse stage ---------------------------------------------------------------------------
    def read_document(self, root: str, path: str, kind: ItemKind, skill: str | None,
                      st: os.stat_result | None = None) -> Document:
        """Read and parse one file, or rebuild its ``Document`` from the parse cache.

        With ``st`` (the file's ``stat``) and a settled stat record for it, the file is not even
        read: the record gives its hash, and the parse record its text."""
        from .parse.document import MAX_FILE_BYTES

        full = f"{root}/{path}" if root and root[-1] != "/" else os.path.join(root, path)  # (as the sources join it)
        if st is not None and stat_module.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES:
            hit = self._stat_record(full, st)
            if hit is not None:
                doc = self._cached_document(_parse_key(hit, path, kind, skill), path, hit[1])
                if doc is not None:
                    self.stats.stat_cached += 1
                    return doc
        fd = os.open(full, _READ)  # (os-level: a buffered open costs three more system calls a file)
        try:
            sig = stat_signature(os.fstat(fd))
            want = min(sig[1], MAX_FILE_BYTES) + 1  # (a buffer as big as the file, not as the limit)
            raw = _read_upto(fd, want, sig[1])
            if len(raw) == want < MAX_FILE_BYTES + 1:  # it grew since the fstat
                raw += _read_upto(fd, MAX_FILE_BYTES + 1 - want, MAX_FILE_BYTES)
        finally:
            os.close(fd)
        digest = hashlib.sha256(raw).hexdigest()
        self.stats.hashed += 1
        key = key_of("parse", digest, path, kind.value, skill)
        small = len(raw) <= MAX_FILE_BYTES
        if small and sig[1] == len(raw):
            self.put("stat", full, (sig, digest, sig[1], self.started_ns, (path, kind.value, skill, key)))
        doc = self._cached_document(key, path, digest) if small else None
        if doc is not None:
            return doc
        self.stats.parsed += 1
        doc = parse_document(raw, path, kind, skill)
        if small:
            self.put("parse", key, _document_out(doc))
        return doc

    def _cached_document(self, key: str, path: str, digest: str) -> Document | None:
        """The document of the parse record under ``key`` (counted as ``cached``), or None when
        there is none or it does not load."""
        rec = self.get("parse", key)
        if rec is None:
            return None
        try:
            doc = _document_in(rec, path, digest)
        except (ValueError, TypeError):
            return None
        self.stats.cached += 1
        return doc

    def save(self) -> None:
        """Keep exactly the records this build used (so the cache never grows without bound): those
        its table file does not hold go into the delta file; the table is rewritten instead when a
        fifth of it went unused or the delta would outgrow a fifth of it."""
        if self.root is None:
            return
        try:
            self._save()
        except OSError as exc:  # (a full or read-only cache folder: the cache is only an optimisation)
            self.save_error = f"{exc.strerror or exc}: {exc.filename or self.root}"

    def _save(self) -> None:
        assert self.root is not None
        self.root.mkdir(parents=True, exist_ok=True)
        for table in FILE_TABLES:
            self._save_files(table)
        for table in TABLES:
            new = self._new[table]
            token, in_base = self._base.get(table, ("", 0))
            base_path, delta_path = self.root / f"{table}.pickle", self.root / f"{table}.delta.pickle"
            if token:
                delta, unused = self._changes(table)
                if delta is None:
                    continue  # exactly the records the files hold: nothing to write
                limit = COMPACT_SHARE * max(in_base, 1)
                if unused <= limit and len(delta) <= limit:
                    self._write(delta_path, token, delta)
                    continue
            self._write(base_path, os.urandom(8).hex(), new)
            delta_path.unlink(missing_ok=True)

    def _save_files(self, table: str) -> None:
        """A ``FILE_TABLES`` table: each record put by this build written to its file, and the files
        of the records it did not use removed."""
        assert self.root is not None
        new, folder = self._new[table], self.root / table
        written = {_record_name(k) for k in (*new, *self._held[table])}
        for key in self._dirty[table]:
            if key in new:
                folder.mkdir(exist_ok=True)
                self._write(folder / _record_name(key), key, new[key], into=folder)
        for name in self._on_disk[table] - written:
            (folder / name).unlink(missing_ok=True)

    def _changes(self, table: str) -> tuple[dict | None, int]:
        """What the table's files do not hold as they are (new records, changed ones, and those of
        its delta file), and how many of its records went unused; ``(None, 0)`` when the files hold
        exactly the records this build used.  Counted from the keys given other records
        (``_dirty``): the work is proportional to the change, not to the table."""
        new, old, dirty = self._new[table], self._old[table], self._dirty[table]
        delta_keys = self._delta_keys.get(table, frozenset())
        if not dirty and len(new) == len(old):  # (every record used, each the one loaded)
            return None, 0
        delta = {k: new[k] for k in (dirty | delta_keys) if k in new and (k in delta_keys or old.get(k) is not new[k])}
        added = sum(1 for k in dirty if k in new and k not in old)  # (new keys are always dirty)
        used_delta = sum(1 for k in delta_keys if k in new)
        # old keys (the delta's among them) not used, and not in the delta file: len(old) - |delta_keys|
        # minus those of the others that the build used.
        unused = (len(old) - len(delta_keys)) - ((len(new) - added) - used_delta)
        return delta, unused

    def _write(self, path: Path, token: str, data: Any, into: Path | None = None) -> None:
        """``(salt, token, data)`` pickled to ``path`` atomically (a temporary file in ``into``, the
        records folder by default, renamed over it)."""
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=into or self.root)
        try:
            with writing(tmp), os.fdopen(fd, "wb") as fh:
                pickle.dump((self.salt, token, data), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _parse_key(rec: tuple, path: str, kind: ItemKind, skill: str | None) -> str:
    """The key of the parse record of the file a stat record describes: the one the record keeps
    when the file was read under the same path, kind and skill (``key_of`` costs microseconds,
    10,000 times a rebuild), else computed."""
    if len(rec) > 4 and rec[4][:3] == (path, kind.value, skill):
        return rec[4][3]
    return key_of("parse", rec[1], path, kind.value, skill)


class _Loaded(dict):
    """Table name -> its loaded records, each table loaded by ``load(table)`` when first looked up
    (``load`` None: every table starts empty)."""

    def __init__(self, load: Callable[[str], dict] | None) -> None:
        super().__init__()
        self._loader = load

    def __missing__(self, table: str) -> dict:
        if table not in TABLES:
            raise KeyError(table)
        data = self[table] = self._loader(table) if self._loader is not None else {}
        return data


_RECORD_FILE = re.compile(r"[0-9a-f]{64}\.pickle")


def _record_name(key: str) -> str:
    """The file of a ``FILE_TABLES`` record: its key when it is a SHA-256 (``key_of``), else the
    SHA-256 of the key (the file holds the key itself, compared when read)."""
    if len(key) != 64 or not _HEX.fullmatch(key):
        key = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{key}.pickle"


_HEX = re.compile(r"[0-9a-f]+")


def _record_files(folder: Path) -> frozenset[str]:
    """The record files in a ``FILE_TABLES`` folder (none when it does not exist)."""
    try:
        return frozenset(n for n in os.listdir(folder) if _RECORD_FILE.fullmatch(n))
    except OSError:
        return frozenset()
