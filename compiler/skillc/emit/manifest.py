"""``api/manifest.json``: what the bundle holds and what went into it.

Every file of the bundle (but the manifest itself) with its SHA-256 and size, the inputs
(repositories, resolved commits, configuration files with their hashes), the settings, the
shadowing table, the excluded skills and withheld files, the lint summary, and the tool and schema
versions.  ``skillc build`` writes it last, after every emitter; it is also how a later build
recognises a folder as a bundle (and reuses its files) and how ``skillc serve`` computes ETags.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) quotes strings with
from operator import itemgetter
from pathlib import Path
from typing import Any

from .. import secrets
from ..layout import MANIFEST, MANIFEST_KIND, MANIFEST_VERSION
from ..resolve_types import EmitContext
from ..version import __version__
from .common import pretty_json_head, pretty_json_rows, rows_around, shown_location, write

KIND = MANIFEST_KIND  # (the name sources.http and older code import)
WIRE_FORMAT = "meerkat-skills-api/2.0"


# Folders that hold exactly the per-skill files the ``skills`` emitter reports (its artifacts) and
# the ``SHARED_FILES`` other emitters put there: a fresh staging folder gets nothing else, and a
# recycled one is pruned to them (``Staging.prune``).  The manifest lists them from the artifacts
# instead of walking 10,000 skill folders (and a folder of 20,000 documents) again.
PER_SKILL_DIRS = ("api/files", "api/archives", "api/discovery", "api/skills")
SHARED_FILES = ("api/skills/index.html",)  # emit.wire.emit_lists: the skills list, for hosts without routing
_PER_SKILL_PREFIXES = tuple(d + "/" for d in PER_SKILL_DIRS)


def _path_key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


def walk_files(root: Path, skip: tuple[str, ...] = (), only: frozenset[str] | None = None) -> list[str]:
    """Every regular file below ``root`` (posix paths, byte order) but those below the ``skip``
    folders; links and specials are refused.  ``only``: the top-level names looked at (no other is
    even seen: the forked docs site may be writing them meanwhile)."""
    out: list[str] = []
    stack = [(str(root), "")]
    while stack:
        d, rel = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if not rel and only is not None and e.name not in only:
                    continue
                r = f"{rel}/{e.name}" if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    if r not in skip:
                        stack.append((e.path, r))
                elif e.is_file(follow_symlinks=False):
                    out.append(r)
                else:
                    raise OSError(f"{r}: not a regular file (symbolic link or special file) in the bundle")
    out.sort(key=_path_key)
    return out


def file_entries(root: Path, known: Mapping[str, tuple[str, int]],
                 per_skill: Mapping[str, tuple[str, int]] | None = None,
                 stated: Mapping[str, tuple[int, int, int, str]] | None = None,
                 listed: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The manifest's ``files``: everything below ``root`` but the manifest, with SHA-256 and size
    (from ``known`` where given, else read).  With ``per_skill`` (path -> (sha256, size) of every
    file below ``PER_SKILL_DIRS``), those folders are not walked: their files are these; nor are
    the ``listed`` folders, whose files are those of ``known`` and ``stated`` below them
    (``EmitCollected.listed``: a stated file is still checked against its inode, size and time).
    ``stated``: path -> (inode, size, mtime_ns, sha256), taken while the file is still that inode,
    size and time (``EmitCollected.digests``)."""
    rows = _file_rows(root, _Sources(known, per_skill, stated or {}, tuple(listed)), _Tops(frozenset(), False))
    return [{"path": rel, "sha256": hit[0], "size": hit[1]} for rel, hit in rows]


@dataclass(frozen=True)
class _Sources:
    """What ``file_entries`` lists files from besides the folders it walks (its arguments)."""
    known: Mapping[str, tuple[str, int]]
    per_skill: Mapping[str, tuple[str, int]] | None
    stated: Mapping[str, tuple[int, int, int, str]]
    listed: tuple[str, ...]


@dataclass(frozen=True)
class _Tops:
    """The files below some of the bundle's top-level names: those in ``names`` (``inside``), or
    those in none of them (a top-level file counts as its own name)."""
    names: frozenset[str]
    inside: bool

    def __contains__(self, rel: str) -> bool:
        return (rel.split("/", 1)[0] in self.names) == self.inside


def _file_rows(root: Path, src: _Sources, tops: _Tops) -> list[tuple[str, tuple[str, int]]]:
    """``file_entries``'s rows (path, (sha256, size)) of the files in ``tops``, in path byte order."""
    trees = src.listed
    skip = trees + (PER_SKILL_DIRS if src.per_skill is not None else ())
    if not tops.inside:  # (the folders of the names it covers; a file among them is left out below)
        skip += tuple(tops.names)
    rows: list[tuple[str, tuple[str, int]]] = []
    for rel in walk_files(root, skip, tops.names if tops.inside else None):
        if rel == MANIFEST or rel not in tops:
            continue
        rows.append((rel, src.known.get(rel) or _stated(root, rel, src.stated) or _hashed(root, rel)))
    # (a folder's files are in ``tops`` exactly when the folder is: each is looked at once, not each file)
    below = tuple(t + "/" for t in trees if t in tops)
    if below:
        rows.extend((rel, hit) for rel, hit in src.known.items() if rel.startswith(below))
        rows.extend((rel, _stated(root, rel, src.stated) or _hashed(root, rel)) for rel in src.stated
                    if rel.startswith(below) and rel not in src.known)
    if src.per_skill is not None:
        if all(d in tops for d in PER_SKILL_DIRS):
            rows.extend(src.per_skill.items())
        elif any(d in tops for d in PER_SKILL_DIRS):
            rows.extend(hit for hit in src.per_skill.items() if hit[0] in tops)
        rows.extend((rel, _hashed(root, rel)) for rel in SHARED_FILES
                    if rel not in src.per_skill and rel in tops and os.path.isfile(root / rel))
    if trees or src.per_skill is not None:
        _sort_rows(rows)
    return rows


def _sort_rows(rows: list[tuple[str, tuple[str, int]]]) -> None:
    """In path byte order: ASCII paths (the usual) sort as strings, others by their bytes (code point
    order is UTF-8's but for the lone surrogates an undecodable name's bytes become)."""
    if "".join([rel for rel, _ in rows]).isascii():
        rows.sort(key=itemgetter(0))
    else:
        rows.sort(key=lambda r: _path_key(r[0]))


def _stated(root: Path, rel: str, stated: Mapping[str, tuple[int, int, int, str]] | None) -> tuple[str, int] | None:
    """The digest an emitter stated for ``rel`` while the file is still the inode, size and time it had."""
    seen = stated.get(rel) if stated else None
    if seen is None:
        return None
    ino, size, mtime, sha = seen
    st = os.stat(f"{root}/{rel}", follow_symlinks=False)
    return (sha, size) if (st.st_ino, st.st_size, st.st_mtime_ns) == (ino, size, mtime) else None


def _hashed(root: Path, rel: str) -> tuple[str, int]:
    with open(f"{root}/{rel}", "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        return hashlib.file_digest(fh, "sha256").hexdigest(), size


@dataclass(frozen=True)
class _Rows:
    """Manifest ``files`` rows in path byte order, three ways: sort keys, JSON lines, and the rows
    ``(path, (sha256, size))`` (the document's entries are made from these only when asked for:
    ``entries``, 53,000 dictionaries at 10,000 skills)."""
    keys: list[bytes]
    lines: list[str]
    rows: list[tuple[str, tuple[str, int]]]

    @classmethod
    def of(cls, rows: list[tuple[str, tuple[str, int]]]) -> _Rows:
        return cls([_path_key(rel) for rel, _ in rows], [_line(rel, sha, size) for rel, (sha, size) in rows], rows)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The rows as the manifest document's ``files`` entries."""
        return [{"path": rel, "sha256": sha, "size": size} for rel, (sha, size) in self.rows]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Each row's ``(path, sha256)``: what the publishing gate checks."""
        return [(rel, sha) for rel, (sha, _) in self.rows]

    def merged(self, other: _Rows) -> _Rows:
        """Both, in path byte order.  ``other`` holds the files of other top-level names: each name's
        rows are one run of the order, so each goes in whole at one place (a few splices)."""
        keys, lines, rows = list(self.keys), list(self.lines), list(self.rows)
        end = len(other.keys)
        i = 0
        while i < end:
            top = other.keys[i].split(b"/", 1)[0]
            j = i + 1
            while j < end and other.keys[j].split(b"/", 1)[0] == top:
                j += 1
            at = bisect.bisect_left(keys, other.keys[i])
            keys[at:at] = other.keys[i:j]
            lines[at:at] = other.lines[i:j]
            rows[at:at] = other.rows[i:j]
            i = j
        return _Rows(keys, lines, rows)

    def runs(self) -> list[_Run]:
        """The rows as manifest text, one ``_Run`` per top-level name (each name's rows are one run
        of the path order: a file named as the top, or the paths below ``<top>/``)."""
        keys, out, i = self.keys, [], 0
        while i < len(keys):
            top, slash, _ = keys[i].partition(b"/")
            end = bisect.bisect_left(keys, top + b"0", i) if slash else i + 1  # ("0" follows "/")
            out.append(_Run(keys[i], _blocks(self.lines[i:end], self.rows[i:end])))
            i = end
        return out


@dataclass(frozen=True)
class _Run:
    """One top-level name's ``files`` rows as the manifest writes them (``"    <row>,"`` lines), in
    blocks (``_blocks``); ``first``: its first path's sort key (the runs' order in the manifest)."""
    first: bytes
    blocks: tuple[bytes, ...]


# A block of rows ends after a row whose SHA-256 ends with this (one row in 256): where blocks end
# depends on the rows alone, so a changed row changes the block it is in, not the blocks after it,
# and a rebuild's gate scans that block again, not the 13 MB of the manifest (``gate.check_pieces``).
_BLOCK_END = "00"


def _blocks(lines: list[str], rows: list[tuple[str, tuple[str, int]]]) -> tuple[bytes, ...]:
    ends = [i + 1 for i, (_, (sha, _)) in enumerate(rows) if sha.endswith(_BLOCK_END)]
    if not ends or ends[-1] != len(lines):
        ends.append(len(lines))
    out, start = [], 0
    for end in ends:
        out.append("".join([f"    {line},\n" for line in lines[start:end]]).encode())
        start = end
    return tuple(out)


def manifest_pieces(head: bytes, runs: list[_Run]) -> tuple[bytes, ...]:
    """The manifest's bytes (``with_rows(head, "files", lines)``) in pieces cut at line breaks: the
    head through the ``files`` list's opening line, the rows' blocks in path order, the rest."""
    blocks = [b for run in sorted(runs, key=lambda r: r.first) for b in run.blocks]
    around = rows_around(head, "files")
    if not blocks or around is None:
        return (head,)
    blocks[-1] = blocks[-1][:-2]  # (the last row has no comma; the line break is the rest's)
    return (around[0], *blocks, around[1])


@dataclass(frozen=True)
class ManifestPart:
    """The manifest as far as it is known before the docs site is joined: the whole document but
    the rows of the files below the top-level names it does not cover (``tops``: the other
    emitters' ``BUNDLE_TOPS``), its pretty JSON with ``files`` empty, and what the rest needs."""
    doc: dict[str, Any]
    head: bytes
    rows: _Rows
    tops: frozenset[str]
    known: dict[str, tuple[str, int]]  # (the skills' files outside PER_SKILL_DIRS)
    per_skill: dict[str, tuple[str, int]]
    runs: tuple[_Run, ...] = ()  # (its rows as manifest text)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return self.rows.pairs

    @property
    def pieces(self) -> tuple[bytes, ...]:
        """The pieces of the manifest's text it knows (``manifest_pieces``): the head and its rows'
        blocks, the last one without the comma its last row gets when the site's rows follow (that
        block is then checked again after the join)."""
        return manifest_pieces(self.head, list(self.runs))


def manifest_part(ctx: EmitContext, tops: frozenset[str] = frozenset()) -> ManifestPart:
    """Everything of the manifest but the files outside ``tops`` (nothing emitted later may write
    below them): ``write_manifest`` adds those.  Empty ``tops``: the document alone."""
    known: dict[str, tuple[str, int]] = {}
    per_skill: dict[str, tuple[str, int]] = {}
    withheld = []
    for art in ctx.collected.artifacts.values():
        for path, sha, size in art.bundle_files():
            (per_skill if path.startswith(_PER_SKILL_PREFIXES) else known)[path] = (sha, size)
        withheld.extend({"id": art.id, "path": p, "reason": r} for p, r in art.withheld)
    doc = manifest_head(ctx, withheld, per_skill)
    rows = _Rows.of(_file_rows(ctx.out, _manifest_sources(ctx, known, per_skill), _Tops(tops, True))
                    if tops else [])
    return ManifestPart(doc, pretty_json_head(doc, "files"), rows, tops, known, per_skill, tuple(rows.runs()))


def _manifest_sources(ctx: EmitContext, known: dict[str, tuple[str, int]],
                      per_skill: dict[str, tuple[str, int]]) -> _Sources:
    """The skills' files and what the emitters stated so far (``known``: the skills' others)."""
    return _Sources({**known, **ctx.collected.known}, per_skill if ctx.options.staging is not None else None,
                    ctx.collected.digests, tuple(sorted(ctx.collected.listed)))


def manifest_head(ctx: EmitContext, withheld: list[dict[str, str]],
                  per_skill: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """The manifest document with ``files`` empty (its place kept)."""
    res = ctx.resolution
    epoch = ctx.options.source_date_epoch
    cwd = ctx.options.cwd
    kinds = {i.repository: i.type for i in res.inputs}
    return {
        "kind": KIND,
        "manifest_version": MANIFEST_VERSION,
        "tool": {"name": "skillc", "version": __version__},
        "formats": {
            "wire": WIRE_FORMAT,
            "well_known": "agentskills-discovery/0.2.0",  # (+ the Cloudflare draft's per-file digests)
            "well_known_legacy": "skills-discovery/0.1",
            "schemas": "api/schemas/",
        },
        "source_date_epoch": epoch,
        "settings": {k: res.settings[k] for k in sorted(res.settings)},
        "inputs": [
            {"repository": i.repository, "type": i.type, "location": shown_location(i.type, i.location, cwd),
             "resolved": i.resolved}
            for i in res.inputs
        ],
        "config_files": [{"path": p, "sha256": h} for p, h in ctx.options.config_files],
        "config_hash": ctx.options.config_hash,
        "skills": len(res.skills),
        "collections": len(res.collections),
        # Each published skill's flat name (flatnames.py): its name in the discovery index and in
        # skills/<name>/ exports, plugins and MCP; by ID, in ID order.
        "flat_names": {s.id: res.flat_names[s.id] for s in res.skills if s.id in res.flat_names},
        "shadowing": [
            {"id": s.id, "winner": s.winner, "loser": s.loser,
             "winner_source": shown_location(kinds.get(s.winner, ""), s.winner_source, cwd),
             "loser_source": shown_location(kinds.get(s.loser, ""), s.loser_source, cwd),
             "winner_priority": s.winner_priority,
             "loser_priority": s.loser_priority}
            for s in res.shadowed
        ],
        "excluded": [{"id": secrets.redact(e)[0],
                      "reason": secrets.redact(ctx.options.excluded_reasons.get(e, "lint errors"))[0]}
                     for e in res.excluded],
        "withheld": sorted(withheld, key=lambda w: (w["id"].encode(), w["path"].encode())),
        # The publishing gate's audit: each credential redacted from a published file (never its value)
        "redactions": [r.to_json() for r in ctx.options.redactions],
        "lint": ctx.options.lint_summary,
        "files": [],
        # Published files with the executable bit (the files rows hold no mode): what another build
        # reading this bundle over HTTP needs to keep scripts runnable, as the zip archives do.
        "executables": sorted((p for s in res.skills for f in s.files if f.executable
                               and (p := f"api/files/{s.id}/{f.path}") in per_skill),
                              key=lambda p: p.encode("utf-8", "surrogateescape")),
    }


def manifest_bytes(doc: Mapping[str, Any]) -> bytes:
    """``json_bytes(doc, pretty=True)``, with the ``files`` rows (43,000 at 10,000 skills) written
    directly rather than each through ``json.dumps``: the same bytes, a fifth of the time."""
    rows = [_line(f["path"], f["sha256"], f["size"]) for f in doc.get("files") or ()]
    return pretty_json_rows(doc, "files", rows)


def _line(rel: str, sha: str, size: int) -> str:
    """A ``files`` row as ``json.dumps`` writes it compact (``encode_basestring``: its quoting)."""
    enc = encode_basestring
    return f'{{"path":{enc(rel)},"sha256":{enc(sha)},"size":{int(size)}}}'


@dataclass(frozen=True)
class ManifestFile:
    """The manifest ``write_manifest`` wrote: the SHA-256 of its bytes (``read_manifest``'s
    ``written``), those bytes in pieces cut at line breaks (what the publishing gate scans:
    ``gate.check_pieces``), the ``(path, sha256)`` of the rows its part did not hold (the site's),
    and every row ``(path, (sha256, size))`` (no document of 66,000 entries at 10,000 skills: the
    build reads none of it)."""
    sha256: str
    pieces: tuple[bytes, ...]
    added: list[tuple[str, str]]
    rows: list[tuple[str, tuple[str, int]]]

    @property
    def size(self) -> int:
        """The bytes of the files it lists."""
        return sum(size for _, (_, size) in self.rows)


def _finished(ctx: EmitContext, part: ManifestPart) -> tuple[ManifestFile, bytes]:
    """``part`` with the rows of the files outside its ``tops`` merged in: the manifest and its bytes
    (the part's blocks of rows as they were; the others' made now)."""
    src = _manifest_sources(ctx, part.known, part.per_skill)
    added = _Rows.of(_file_rows(ctx.out, src, _Tops(part.tops, False)))
    pieces = manifest_pieces(part.head, [*part.runs, *added.runs()])
    data = b"".join(pieces)
    return ManifestFile(hashlib.sha256(data).hexdigest(), pieces, added.pairs, part.rows.merged(added).rows), data


def write_manifest(ctx: EmitContext, part: ManifestPart | None = None) -> ManifestFile:
    """Write the manifest.  ``part``: what ``manifest_part`` computed of it before the last emitters
    ran (they wrote only outside its ``tops``); None: all of it is computed here."""
    written, data = _finished(ctx, part if part is not None else manifest_part(ctx))
    write(ctx.out, MANIFEST, data)
    return written


def read_manifest(bundle: Path, written: str | None = None) -> Mapping[str, Any] | None:
    """The manifest of a bundle, or None when ``bundle`` holds no (readable) skillc manifest.
    ``written``: the SHA-256 of a manifest a build wrote there; when the file still holds those
    bytes it is a skillc manifest, and is parsed only when first read (``WrittenManifest``: 13 MB
    of JSON at 10,000 skills, which a steady rebuild never reads)."""
    if written is not None:
        try:
            data = (bundle / MANIFEST).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() == written:
            return WrittenManifest(data)
    return read_manifest_file(bundle / MANIFEST)


class WrittenManifest(Mapping):
    """A manifest known to be one a build wrote (by its bytes' hash), parsed on first use."""

    __slots__ = ("_data", "_doc")

    def __init__(self, data: bytes) -> None:
        self._data, self._doc = data, None

    def _get(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = json.loads(self._data)
        return self._doc

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def read_manifest_file(path: Path) -> dict[str, Any] | None:
    """A bundle manifest read from ``path`` (``<bundle>/api/manifest.json``), or None when it is not
    a readable skillc manifest (the build, the server and `skillc export` read it through here; the
    ``Bundle`` reader, which also reads one over HTTP, checks the same kind and refuses newer versions)."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("files"), list):
        return None
    return doc


def manifest_entries(doc: Mapping[str, Any] | None) -> dict[str, tuple[str, int]]:
    """``path -> (sha256, size)`` of every file a manifest lists (rows that are not well-formed are left out)."""
    files = (doc or {}).get("files", [])
    try:
        return {f["path"]: (f["sha256"], f["size"]) for f in files}
    except (TypeError, KeyError):
        pass
    out: dict[str, tuple[str, int]] = {}
    for f in files:
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            out[f["path"]] = (f.get("sha256"), f.get("size"))
    return out
