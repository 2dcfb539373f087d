"""The incremental build cache: content-addressed records, so an unchanged skill is not parsed,
linted or rendered again.

Every record is keyed by a SHA-256 that covers what it depends on:

* a **parse** record by the file's bytes (its SHA-256) and the tool version;
* a **lint** record by the skill's digest (every file of the skill), the tool version and the hash
  of the lint configuration;
* a **render** record (the bundle files one skill produces: wire document, supporting files, zip)
  by the skill's digest, its ID, repository, tier, the tool version and the build configuration;
* an **index** record (one skill's search-index analysis: terms, weighted frequencies, field bits)
  by its SKILL.md hash and indexed fields, and the whole index by all of those and the IDs.

Records are plain Python values (no dataclasses: those unpickle slower than a YAML parse), kept in
one pickle per table below ``root`` and rewritten atomically at the end of a successful build with
only the records that build used.  ``stats`` counts hits and misses; ``skillc build --json``
reports them (``parsed``, ``cached``…).  A cache that cannot be read is ignored, never trusted.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .model import Diagnostic, Document, Frontmatter, ItemKind, Position, Scalar, Severity
from .parse import parse_document

FORMAT = 2
TABLES = ("parse", "lint", "render", "index")


def default_cache_root(env: dict[str, str] | os._Environ = os.environ) -> Path:
    """``$SKILLC_CACHE_DIR``, else ``$XDG_CACHE_HOME/skillc``, else ``~/.cache/skillc``."""
    if env.get("SKILLC_CACHE_DIR"):
        return Path(env["SKILLC_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "skillc"


def key_of(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class CacheStats:
    parsed: int = 0  # SKILL.md files parsed this build
    cached: int = 0  # SKILL.md files whose parse came from the cache
    linted: int = 0  # skills whose document rules ran
    lint_cached: int = 0
    rendered: int = 0  # skills whose bundle files were produced again
    render_cached: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


# --- compact, fast-to-load forms of model objects ------------------------------------------------

def _diag_out(d: Diagnostic) -> tuple:
    return (d.code, d.severity.value, d.path, d.line, d.column, d.message, d.skill, d.fix)


def _diag_in(t: tuple) -> Diagnostic:
    return Diagnostic(t[0], Severity(t[1]), t[2], t[3], t[4], t[5], t[6], t[7])


def diagnostics_out(diags) -> tuple:
    return tuple(_diag_out(d) for d in diags)


def diagnostics_in(rows) -> tuple[Diagnostic, ...]:
    return tuple(_diag_in(t) for t in rows)


def _pos(p: Position) -> tuple[int, int]:
    return (p.line, p.column)


class _Lazy(Mapping):
    """A read-only mapping whose values are built from compact records on first access (a cached
    document's key positions and scalars: most are never asked for).  Pickles as a plain dict."""

    __slots__ = ("_built", "_make", "_raw")

    def __init__(self, raw: dict, make: Any) -> None:
        self._raw, self._built, self._make = raw, {}, make

    def __getitem__(self, key: Any) -> Any:
        value = self._built.get(key)
        if value is None:
            value = self._built[key] = self._make(self._raw[key])
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple:
        return (dict, (dict(self.items()),))


def _position_in(t: tuple[int, int]) -> Position:
    return Position(*t)


def _scalar_in(t: tuple) -> Scalar:
    return Scalar(t[0], t[1], t[2], Position(*t[3]), Position(*t[4]))


def _positions_out(keys: Mapping) -> dict:
    raw = getattr(keys, "_raw", None)  # the parser's lazy mapping already holds (line, column) pairs
    if isinstance(raw, dict) and all(isinstance(v, tuple) for v in raw.values()):
        return dict(raw)
    return {k: _pos(v) for k, v in keys.items()}


def _document_out(doc: Document, raw_text: str | None) -> tuple:
    fm = doc.frontmatter
    fm_rec = None
    if fm is not None:
        fm_rec = (
            fm.data,
            _positions_out(fm.keys),
            {k: (s.tag, s.text, s.style, _pos(s.position), _pos(s.end)) for k, s in fm.scalars.items()},
            fm.start_line,
            fm.end_line,
        )
    text_rec = None if raw_text is not None and doc.text == raw_text else doc.text
    full = doc.text
    body_rec: Any = len(doc.body) if full.endswith(doc.body) else doc.body
    return (doc.kind.value, doc.size, fm_rec, text_rec, body_rec, doc.body_line, diagnostics_out(doc.diagnostics))


def _document_in(rec: tuple, path: str, digest: str, raw: bytes) -> Document:
    kind, size, fm_rec, text_rec, body_rec, body_line, diags = rec
    text = raw.decode("utf-8") if text_rec is None else text_rec
    body = (text[len(text) - body_rec:] if body_rec else "") if isinstance(body_rec, int) else body_rec
    fm = None
    if fm_rec is not None:
        data, keys, scalars, start, end = fm_rec
        fm = Frontmatter(data, _Lazy(keys, _position_in), _Lazy(scalars, _scalar_in), start, end)
    return Document(path, ItemKind(kind), digest, size, text, fm, body, body_line, diagnostics_in(diags))


class BuildCache:
    """Load once, look up many times, ``save()`` once.  ``root=None`` disables caching (counts still)."""

    def __init__(self, root: Path | None, salt: str = "") -> None:
        self.root = root
        self.salt = f"{__version__}|{FORMAT}|{salt}"
        self.stats = CacheStats()
        self._old: dict[str, dict] = {t: {} for t in TABLES}
        self._new: dict[str, dict] = {t: {} for t in TABLES}
        if root is not None:
            for table in TABLES:
                self._old[table] = self._load(root / f"{table}.pickle")

    def _load(self, path: Path) -> dict:
        try:
            with open(path, "rb") as fh:
                salt, data = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
            return {}
        return data if salt == self.salt and isinstance(data, dict) else {}

    def get(self, table: str, key: str) -> Any:
        value = self._old[table].get(key)
        if value is None:
            value = self._new[table].get(key)
        else:
            self._new[table][key] = value
        return value

    def put(self, table: str, key: str, value: Any) -> None:
        self._new[table][key] = value

    # --- the parse stage ---------------------------------------------------------------------------
    def read_document(self, root: str, path: str, kind: ItemKind, skill: str | None) -> Document:
        """Read and parse one file, or rebuild its ``Document`` from the parse cache."""
        from .parse import MAX_FILE_BYTES

        full = os.path.join(root, path)
        with open(full, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        digest = hashlib.sha256(raw).hexdigest()
        key = key_of("parse", digest, path, kind.value, skill)
        rec = self.get("parse", key) if len(raw) <= MAX_FILE_BYTES else None
        if rec is not None:
            try:
                doc = _document_in(rec, path, digest, raw)
            except (UnicodeDecodeError, ValueError, TypeError):
                doc = None
            if doc is not None:
                self.stats.cached += 1
                return doc
        self.stats.parsed += 1
        doc = parse_document(raw, path, kind, skill)
        if len(raw) <= MAX_FILE_BYTES:
            try:
                raw_text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raw_text = None
            self.put("parse", key, _document_out(doc, raw_text))
        return doc

    def save(self) -> None:
        """Keep exactly the records this build used (so the cache never grows without bound)."""
        if self.root is None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            if self._new[table].keys() == self._old[table].keys():
                continue  # the same records (a key is a content hash): the file on disk is already right
            fd, tmp = tempfile.mkstemp(prefix=f".{table}.", dir=self.root)
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump((self.salt, self._new[table]), fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, self.root / f"{table}.pickle")
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
