"""The publishing gate: what a build publishes holds no credential (issue 17).

Three steps, each a pure function but for the file I/O their names say:

1. ``decoding_leak(document)`` (lint stage, per skill): a value that is a credential only once its
   YAML escapes are decoded (``"\\x67hp_…"``, an escaped line break inside a double-quoted scalar)
   is found in the decoded frontmatter, which is what the registry publishes.  The skill is never
   published (the raw text cannot be redacted where the value is spelled in escapes).
2. ``gate_resolution(resolution, folder)`` (between resolve and emit): every text file a skill
   publishes (SKILL.md included) is redacted with the strict reading (``secrets.scan(strict=True)``):
   any value assigned to a password/secret/token/key name that is not plainly a reference becomes
   ``[REDACTED:<kind>]`` (a file with a credential lint's reading finds too is withheld whole at
   emit instead, and a SKILL.md with one keeps its skill out).  The redacted copy is written, by content, into ``folder`` (the build's
   sources folder, never the output), and the skill is published from it: its listing, its archive,
   its wire document and its site page all read one text.  Each redaction is audited (skill, path,
   line, kind; never the value) in the manifest's ``redactions``.
3. ``bundle_leaks(out, files)`` (after the manifest, before the swap): every output byte is scanned
   as a reader gets it (zip members and gzip files decompressed, SQLite tables read row by row), so
   a value the earlier steps missed (rendered JSON, an index, a page) fails the build instead of
   being published; the previous bundle stays.  Verdicts are kept per content hash and
   ``ruleset_digest()``, so an incremental build scans only new bytes, and a scanner that reads
   differently (a pattern added, a check changed) never reuses a verdict of the old one.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import os
import re
import sqlite3
import sys
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import secrets
from .parse.document import parse_document
from .resolve_types import Resolution, SkillFile, SourceSkill

__all__ = ["AuditEntry", "BundleLeak", "decoding_leak", "gate_resolution", "bundle_leaks", "check_bundle",
           "check_pieces", "line_pieces", "unchecked_files", "credential_content", "redacted_bytes",
           "redacted_members", "ruleset_digest"]

# Past these sizes a member is scanned as stored (a zip bomb is not inflated to be read).
_MAX_INFLATED = 256 << 20


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One credential the gate kept out of the bundle: where and what kind, never the value."""

    id: str  # the skill (redacted itself: an ID holding a secret is never published anyway)
    path: str  # relative to the skill
    line: int
    kind: str
    action: str  # "redacted" (published without it) or "withheld" (the file was not published)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "line": self.line, "kind": self.kind, "action": self.action}


@functools.cache
def ruleset_digest() -> str:
    """The SHA-256 of the rule set a verdict was reached under: the scanner's code (``skillc.secrets``:
    its patterns and their checks) and this gate's (how a file is read: zip members, gzip, SQLite
    rows).  Every cached verdict is keyed by it besides the bytes' hash: the tool version alone
    does not change while the patterns are edited, and a verdict of an older scanner must never let
    bytes through unscanned."""
    h = hashlib.sha256()
    for module in (secrets, sys.modules[__name__]):
        try:
            with open(module.__file__ or "", "rb") as fh:
                h.update(fh.read())
        except OSError:  # (no readable source: the compiled patterns still tell one scanner from another)
            h.update(repr([(p.kind, p.regex.pattern, p.triggers, p.group) for p in secrets.PATTERNS]).encode())
    return h.hexdigest()


# ---------------------------------------------------------------- 1. values after decoding

def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a decoded YAML value (keys too), with a dotted path to it."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            key = str(k)
            yield f"{where}.{key}" if where else key, key
            yield from _strings(v, f"{where}.{key}" if where else key)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def decoding_leak(document: Any) -> str:
    """Why a SKILL.md must not be published because of a credential its escapes hide, or "".

    The raw text is redacted first (what step 2 publishes); a credential still in the decoded
    frontmatter of that text was spelled so that no scan of the raw text could see it."""
    text = document.text
    redacted, _ = secrets.redact(text, strict=True)
    doc = document if redacted == text else parse_document(redacted.encode("utf-8", "surrogatepass"), document.path,
                                                           document.kind)
    for where, value in _strings(doc.meta):
        found = secrets.scan(value, strict=True)
        if found:
            return (f"frontmatter {secrets.redact(where)[0]} holds a likely secret ({found[0].kind}) once its YAML "
                    "escapes are decoded; never published")
    return ""


# ---------------------------------------------------------------- 2. strict redaction of published text

def _text_of(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def gate_resolution(resolution: Resolution, folder: Path, cache: Any = None) -> tuple[Resolution, tuple[AuditEntry, ...]]:
    """``resolution`` with every published text redacted strictly (copies in ``folder``), and the
    audit.  ``cache`` (the build cache) keeps each file's verdict by its hash: a file is read and
    scanned once, not at every build."""
    audit: list[AuditEntry] = []
    skills = tuple(_gate_skill(s, folder, audit, cache) for s in resolution.skills)
    audit.extend(_collection_audit(resolution))
    if not audit:
        return resolution, ()
    return replace(resolution, skills=skills), tuple(audit)


_REDACTED = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


def _collection_audit(resolution: Resolution) -> Iterator[AuditEntry]:
    """COLLECTION.md descriptions are redacted (strictly) where they are read (``resolve``); each
    redaction is audited here, by the marker it left (no line: only the description is published)."""
    for c in resolution.collections:
        for m in _REDACTED.finditer(c.description):
            yield AuditEntry(secrets.redact(c.path)[0], "COLLECTION.md", 0, m.group(1), "redacted")


def _verdict(f: SkillFile, folder: Path, cache: Any) -> tuple[tuple[int, str], ...] | tuple[bytes, tuple]:
    """``()`` for a file published as it is; else its redacted bytes and the ``(line, kind)`` found."""
    rules = ruleset_digest()
    if cache is not None and cache.get("gate", f.sha256) == rules:  # (clean under this rule set)
        return ()
    data = _read(f.source_path)
    verdict = redacted_bytes(data) if data is not None else ()
    if not verdict and cache is not None and data is not None and hashlib.sha256(data).hexdigest() == f.sha256:
        cache.put("gate", f.sha256, rules)
    return verdict


def redacted_bytes(data: bytes) -> tuple[()] | tuple[bytes, tuple[tuple[int, str], ...]]:
    """``()`` for bytes published as they are; else the bytes redacted strictly and the
    ``(line, kind)`` of each redaction.  Binary files, and text holding a credential lint's reading
    finds too, are left alone: they are withheld whole (emit; pack and export refuse them), and a
    SKILL.md with one keeps its skill out; only what the strict reading adds is redacted."""
    text = _text_of(data)
    found = secrets.scan(text, strict=True) if text is not None and not secrets.scan(text) else []
    if not found:
        return ()
    return secrets.redact(text, strict=True)[0].encode("utf-8"), tuple((m.line, m.kind) for m in found)


def redacted_members(members: Iterable[tuple[str, str]], folder: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Archive members ``(name, source path)`` with each text redacted strictly (copies in
    ``folder``), and one line per redaction (``name:line: kind``, never the value): pack and export
    are publishing gates too."""
    out, audit = [], []
    for name, source in members:
        data = _read(source)
        verdict = redacted_bytes(data) if data is not None else ()
        if verdict:
            raw, found = verdict
            source = _store(folder, raw)
            audit.extend(f"{name}:{line}: {kind} redacted (value not shown)" for line, kind in found)
        out.append((name, source))
    return out, audit


def _gate_skill(skill: SourceSkill, folder: Path, audit: list[AuditEntry], cache: Any) -> SourceSkill:
    files = list(skill.files)
    document = skill.document
    changed = False
    for i, f in enumerate(files):
        verdict = _verdict(f, folder, cache)
        if not verdict:
            continue
        raw, found = verdict
        shown_id = secrets.redact(skill.id)[0]
        audit.extend(AuditEntry(shown_id, secrets.redact(f.path)[0], line, kind, "redacted") for line, kind in found)
        files[i] = replace(f, sha256=hashlib.sha256(raw).hexdigest(), size=len(raw), source_path=_store(folder, raw))
        if i == 0:  # SKILL.md: the wire document, the descriptor and the site read the parsed text
            document = replace(parse_document(raw, document.path, document.kind), diagnostics=document.diagnostics)
        changed = True
    return replace(skill, files=tuple(files), document=document) if changed else skill


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None  # (emit reads it again and names the path that cannot be read)


def _store(folder: Path, data: bytes) -> str:
    """Write ``data`` under ``folder`` by its hash (once), owner-only: it is derived from sources."""
    digest = hashlib.sha256(data).hexdigest()
    path = folder / digest[:2] / digest
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f"{digest}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


# ---------------------------------------------------------------- credential files by content

def credential_content(name: str, data: bytes) -> str | None:
    """The kind of credential file ``data`` is whatever its name (docker's ``config.json`` with
    ``auths``, a kube config with client key data or a user token, a PuTTY key), or None."""
    if b'"auths"' in data and name.lower().endswith(".json"):
        return "docker-config"
    if b"client-key-data" in data or (b"kind: Config" in data and b"users:" in data and b"token:" in data):
        return "kube-config"
    if data.lstrip().startswith(b"PuTTY-User-Key-File-"):
        return "putty-private-key"
    return None


# ---------------------------------------------------------------- 3. every output byte

@dataclass(frozen=True, slots=True)
class BundleLeak:
    path: str  # bundle path, with `!member` for a zip member or `#table` for an SQLite table
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: likely {self.kind} (value not shown)"


_CLEAN = "bundle-clean"  # (the build cache's table of the clean verdicts)


def check_bundle(out: Path, manifest: Mapping[str, Any], cache: Any = None,
                 checked: frozenset[tuple[str, str]] = frozenset()) -> None:
    """BuildError (the build fails, the previous bundle stays) when any byte of the staged bundle
    holds a likely credential, as a client reads it.  Each clean file's hash is remembered.
    ``checked``: ``(path, sha256)`` pairs ``check_files`` already passed in this build (the build
    checks the files that are not the docs site's while the site is built)."""
    from .layout import MANIFEST

    files = [pair for f in manifest.get("files", ()) if (pair := (f["path"], f["sha256"])) not in checked]
    files.append((MANIFEST, ""))  # (written from the audit itself: scanned at every build)
    check_files(out, files, cache)


def check_files(out: Path, files: list[tuple[str, str]], cache: Any = None) -> frozenset[tuple[str, str]]:
    """``check_bundle`` of some of the staged bundle's files ``(path, sha256)``; returns the pairs
    whose bytes are clean (for ``check_bundle``'s ``checked``: a file not read here is not in it
    unless its SHA-256 is already known clean, which is all ``check_bundle`` asks of any file)."""
    clean = _clean_files(out, files, cache)
    return frozenset(pair for pair in files if pair[1] in clean)  # (those whose bytes are known clean)


def unchecked_files(out: Path, files: list[tuple[str, str]], cache: Any = None,
                    pieced: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """``check_files``, returning the pairs it did not pass instead (a file it could not read): what
    is left for the last check, in one pass over the 67,000 pairs of 10,000 skills rather than two.
    ``pieced``: those of ``files`` the build wrote as pretty JSON (``jsonio.json_bytes``), each
    scanned in pieces (``line_pieces``, ``check_pieces``): a rebuild scans the pieces that changed,
    not the 7.6 MB discovery index of 10,000 skills."""
    clean = _clean_files(out, files, cache, pieced)
    return [pair for pair in files if pair[1] not in clean]


def _clean_files(out: Path, files: list[tuple[str, str]], cache: Any,
                 pieced: Sequence[tuple[str, str]] = ()) -> set[str]:
    """The SHA-256 of the bytes of ``files`` known or found clean; BuildError on a likely secret."""
    rules = ruleset_digest()
    # (each clean verdict: the bytes' SHA-256 -> the rule set it was reached under)
    known = cache.kept(_CLEAN, [sha for _, sha in files], rules) if cache is not None else set()
    clean = set(known)
    for rel, sha in pieced:
        if sha and sha not in clean:
            try:
                data = (out / rel).read_bytes()
            except OSError:
                continue  # (left to ``bundle_leaks``, which passes over it too: the last check reads it again)
            check_pieces(rel, line_pieces(data), cache)
            clean.add(sha)
    leaks = bundle_leaks(out, files, clean)
    _keep_verdicts(cache, clean - known, rules)
    _refuse(leaks)
    return clean


def _keep_verdicts(cache: Any, clean: set[str], rules: str) -> None:
    """The clean verdicts reached now, for the next build (the others are kept by ``kept``)."""
    if cache is not None:
        for sha in clean:
            cache.put(_CLEAN, sha, rules)


def _refuse(leaks: list[BundleLeak]) -> None:
    from .errors import BuildError

    if leaks:
        shown = "; ".join(str(leak) for leak in leaks[:10]) + (" …" if len(leaks) > 10 else "")
        raise BuildError(f"not published: the bundle would hold {len(leaks)} likely secret(s) the earlier checks "
                         f"missed: {secrets.redact(shown)[0]}",
                         hint="report it (skillc bug); the previous bundle is unchanged")


PIECE_LINES = 64  # a piece of ``line_pieces`` ends after one line in this many, on average


def line_pieces(data: bytes) -> list[bytes]:
    """``data`` cut after some of its line breaks: after each line whose CRC-32 is a multiple of
    ``PIECE_LINES``, so where pieces end depends on the lines alone (a changed line changes its own
    piece, not the pieces after it) and the cuts are the same in every process."""
    pieces, start, at = [], 0, 0
    for line in data.split(b"\n")[:-1]:
        at += len(line) + 1
        if zlib.crc32(line) % PIECE_LINES == 0:
            pieces.append(data[start:at])
            start = at
    if start < len(data) or not pieces:
        pieces.append(data[start:])
    return pieces


def check_pieces(rel: str, pieces: Sequence[bytes], cache: Any = None,
                 passed: frozenset[str] = frozenset()) -> frozenset[str]:
    """``check_files`` of the bundle file ``rel`` given as its bytes in pieces cut at line breaks, whose
    text is pretty JSON (``jsonio.json_bytes``: each value or list item compact on a line of its own;
    the manifest: ``emit.manifest.manifest_pieces``).  Each piece is scanned by itself and its clean
    verdict kept by its SHA-256, so a rebuild scans the pieces that changed, not 13 MB.  ``passed``:
    the digests of pieces already found clean in this build; returns those of the pieces found clean.

    Scanning the pieces apart finds every secret a scan of the whole file finds (and may find more):
    a match never crosses a raw line break of such text.  Most patterns cannot match a line break at
    all (``tests/unit/build/test_gate_pieces.py`` lists those that can); of those that can, the
    assignments (``aws-secret-access-key``, ``bearer-token``) cross one only with nothing but blanks
    between their key, ``:``/``=``, scheme word and value, and a raw line of such JSON ends with
    ``,``, a bracket, a quote, a number or a literal, never with a key's name or ``:``, and starts
    with a bracket, a quote, a number or a literal, never with ``:``; the PuTTY pattern needs a line
    ending in ``private-lines: <n>``, which only a string could hold, and strings hold no raw line
    break; a private key's block spanning raw lines would hold, after the PEM check strips blanks
    and ``Name: value`` header lines, the first character of each raw line after its first (a
    quote, bracket, ``-``, or a number or literal followed by ``,`` or a bracket), none of them
    base64, so the check refuses it.  Scanned apart, a piece sees no less: the text before a key is
    read only to let a match go (``_key_starts_word``, the currency and public-key names)."""
    rules = ruleset_digest()
    digests = [hashlib.sha256(piece).hexdigest() for piece in pieces]
    known = (cache.kept(_CLEAN, digests, rules) if cache is not None else set()) | passed
    clean = set(known)
    leaks: list[BundleLeak] = []
    for i, (piece, sha) in enumerate(zip(pieces, digests)):
        if sha in clean:
            continue
        found = list(_leaks_in(rel, piece))
        if not found:
            clean.add(sha)
            continue
        line = sum(p.count(b"\n") for p in pieces[:i])  # (the piece's first line in the file)
        leaks.extend(replace(leak, line=leak.line + line) for leak in found)
    _keep_verdicts(cache, clean - known, rules)
    _refuse(leaks)
    return frozenset(clean)


def bundle_leaks(out: Path, files: Iterable[tuple[str, str]], clean: set[str]) -> list[BundleLeak]:
    """Every likely credential in the bundle's files ``(path, sha256)``, read as a client reads them.
    ``clean``: content hashes already found clean (skipped; the ones found clean now are added)."""
    leaks: list[BundleLeak] = []
    for rel, sha in files:
        if sha and sha in clean:
            continue
        try:
            data = (out / rel).read_bytes()
        except OSError:
            continue
        found = list(_leaks_in(rel, data))
        if found:
            leaks.extend(found)
        elif sha:
            clean.add(sha)
    return leaks


def _leaks_in(rel: str, data: bytes) -> Iterator[BundleLeak]:
    yield from (BundleLeak(rel, m.line, m.kind) for m in secrets.scan_bytes(data))
    low = rel.lower()
    if data[:4] == b"PK\x03\x04":
        yield from _zip_leaks(rel, data)
    elif data[:2] == b"\x1f\x8b" or low.endswith(".gz"):
        inflated = _gunzip(data)
        if inflated is not None:
            yield from (BundleLeak(rel + "!gunzip", m.line, m.kind) for m in secrets.scan_bytes(inflated))
    elif data[:16] == b"SQLite format 3\0":
        yield from _sqlite_leaks(rel, data)


def _zip_leaks(rel: str, data: bytes) -> Iterator[BundleLeak]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.file_size > _MAX_INFLATED:
                    continue
                member = zf.read(info)
                yield from (BundleLeak(f"{rel}!{info.filename}", m.line, m.kind) for m in secrets.scan_bytes(member))
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError):
        return


def _gunzip(data: bytes) -> bytes | None:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            return fh.read(_MAX_INFLATED)
    except (OSError, EOFError):
        return None


def _sqlite_leaks(rel: str, data: bytes) -> Iterator[BundleLeak]:
    """Each table's values, read through SQLite (a long value spans overflow pages, which split
    it in the file's bytes)."""
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(data)  # (read from memory: the bundle file is never opened for writing)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            for row in db.execute(f"SELECT * FROM {quoted}"):  # noqa: S608 (a name from the file, quoted)
                for value in row:
                    if isinstance(value, bytes):
                        found = secrets.scan_bytes(value)
                    elif isinstance(value, str):
                        found = secrets.scan(value)
                    else:
                        continue
                    yield from (BundleLeak(f"{rel}#{table}", m.line, m.kind) for m in found)
    except sqlite3.DatabaseError:
        return
    finally:
        db.close()
