"""``skillc.Bundle``: read a built bundle from a directory or over HTTP, search it, select and render.

    from skillc import Bundle
    b = Bundle.open("dist")                        # or "https://skills.example.com/api"
    b.search("deploy to production", k=5)          # BM25 over name, description, tags, body
    b.select("fix the failing pytest", project=".", phase="implementation")
    print(b.render_inventory())                    # Meerkat <available_skills> block

Over HTTP only the Meerkat wire routes (``/skills``, ``/skills/{id}``, ``/skill-collections``) and
static files below the API (``index/…``, ``manifest.json``, ``inventory.xml``, ``files/…``) are
read, so any static host serves it.  Responses are cached in memory: the manifest and the wire
routes for ``ttl`` seconds (then revalidated with ETags), index files while the manifest is unchanged
(they are verified by hash).  Each answer comes from one deployment: a file that differs from the
manifest makes the manifest be read again, and when a redeploy changed it the answer starts over
from the new deployment (only a file that still differs is called corrupted).

Errors a user can act on (a missing or corrupted file, a bundle written by a newer skillc, a URL
that answers HTML, an unknown skill ID, an empty query) raise ``BundleError`` / ``SkillcError``.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import SkillcError
from ..fetch import FetchError, shown
from ..fetch import get as http_get
from ..index import ArgumentTypeError, ArgumentValueError, BundleError, HashMismatch
from ..index.adk import AdkMatch, SelectionPolicy
from ..index.tokenize import tokenize
from ..jsonio import load_json
from ..layout import MANIFEST_KIND, MANIFEST_VERSION, SELECT_VERSION
from ..resolve_types import Collection

__all__ = ["AppliedReferences", "Bundle", "BundleError", "BundleFile", "ReferenceEvent", "SkillDoc", "SkillInfo",
           "UnknownSkill"]

INDEX = "index/"
MANIFEST = "manifest.json"
DEFAULT_TTL = 300.0
USER_AGENT = "skillc-bundle"


class UnknownSkill(SkillcError):
    """A skill ID that the bundle does not hold."""


@dataclass(frozen=True, slots=True)
class SkillInfo:
    """A Meerkat wire descriptor."""

    id: str
    name: str
    description: str
    scope: str = "builtin"
    requires_capabilities: tuple[str, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, d: Mapping[str, Any]) -> SkillInfo:
        return cls(str(d["id"]), str(d["name"]), str(d["description"]), str(d.get("scope") or "builtin"),
                   tuple(d.get("requires_capabilities") or ()), dict(d.get("metadata") or {}))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description, "scope": self.scope,
                "requires_capabilities": list(self.requires_capabilities), "metadata": dict(self.metadata)}


@dataclass(frozen=True, slots=True)
class SkillDoc:
    """A Meerkat wire document: the descriptor plus the Markdown body."""

    info: SkillInfo
    body: str

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def description(self) -> str:
        return self.info.description

    def to_json(self) -> dict[str, Any]:
        return {**self.info.to_json(), "body": self.body}


# -- transports -----------------------------------------------------------------------------------

class _Local:
    """Routes below a bundle's ``api/`` folder on disk."""

    def __init__(self, api: Path):
        self.api = api
        self.location = str(api)
        self._cache: dict[str, bytes | None] = {}  # a Bundle object reads each file once

    def _path(self, route: str) -> Path:
        if route == "skills":
            return self.api / "skills.json"
        return self.api / route

    def get(self, route: str, *, immutable: bool = False, fresh: bool = False) -> bytes | None:
        """The route's bytes, or None when missing; ``fresh`` reads the disk again."""
        if route in self._cache and not fresh:
            return self._cache[route]
        try:
            data: bytes | None = self._path(route).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            data = None
        except OSError as exc:
            raise BundleError(f"{self._path(route)}: cannot read ({exc.strerror})") from None
        self._cache[route] = data
        return data

    def expire(self, keep: str) -> None:
        """Forget every file but ``keep`` (the bundle was rebuilt: they are read again)."""
        self._cache = {keep: self._cache[keep]} if keep in self._cache else {}

    def describe(self, route: str) -> str:
        return str(self._path(route))

    def location_of(self, route: str) -> str:
        return str(self._path(route).resolve())


class _HttpStatus(BundleError):
    """The server answered a status that is neither 2xx nor an answer (304, 404, 410)."""


class _Http:
    """Routes below an API base URL, with an in-memory cache (TTL + ETag revalidation)."""

    def __init__(self, base: str, ttl: float, headers: Mapping[str, str] | None = None):
        self.base = base.rstrip("/")
        self.location = self.base
        self.ttl = ttl
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self._cache: dict[str, tuple[float, str | None, bytes | None]] = {}
        self._epoch = -math.inf  # entries cached before it are revalidated, even immutable ones
        self.requests = 0  # how many HTTP requests were made (for tests and curiosity)

    def url(self, route: str) -> str:
        if route.startswith(("files/", "memory/skills/")):  # (a memory block's file name holds the quoted ID)
            # (a skill's file is named by its raw ID and path, as the manifest lists it: an ID with a
            # space or a non-ASCII letter must be percent-encoded to be requested, or Plan Cascade's
            # block read from the file fell back to the wire body, and a space crashed the request;
            # the other routes are URL-safe already: a wire document's ID is quoted whole)
            route = quote(route, safe="/")
        return f"{self.base}/{route}"

    def get(self, route: str, *, immutable: bool = False, fresh: bool = False) -> bytes | None:
        """The route's bytes, or None on 404/410: from the cache while fresh (``immutable``: until
        ``expire``), else revalidated; ``fresh`` revalidates now."""
        now = time.monotonic()
        hit = self._cache.get(route)
        if hit is not None and not fresh and hit[0] >= self._epoch and (immutable or now - hit[0] < self.ttl):
            return hit[2]
        headers = dict(self.headers)
        if hit is not None and hit[1]:
            headers["If-None-Match"] = hit[1]
        self.requests += 1
        try:  # (skillc.fetch: capped, with an overall deadline, and no credentials across hosts)
            resp = http_get(self.url(route), headers)
        except FetchError as exc:
            if exc.status:
                raise _HttpStatus(str(exc)) from None
            raise BundleError(str(exc), hint="check the URL and that the server is running") from None
        if resp.status == 304:
            if hit is None:
                raise BundleError(f"{self.url(route)}: HTTP 304 to a request that was not conditional")
            self._cache[route] = (now, hit[1], hit[2])
            return hit[2]
        if resp.status in (404, 410):
            self._cache[route] = (now, None, None)
            return None
        data, etag = resp.body, resp.headers.get("etag")
        # No Content-Type check (Meerkat has none, and a static host may serve the skills list from
        # skills/index.html as text/html); HTML *content* is refused where JSON is parsed.
        self._cache[route] = (now, etag, data)
        return data

    def expire(self, keep: str) -> None:
        """Revalidate everything cached (with its ETag) on its next use, ``keep`` (just fetched) aside:
        a redeploy changed the manifest, so index files of the same name may have changed too."""
        self._epoch = time.monotonic()
        hit = self._cache.get(keep)
        if hit is not None:
            self._cache[keep] = (self._epoch, hit[1], hit[2])

    def describe(self, route: str) -> str:
        return self.url(route)

    def location_of(self, route: str) -> str:
        return self.url(route)


def _looks_like_html(data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def _check_url(url: str) -> None:
    """A URL the transport can request, or a usage error (never "the bundle is malformed")."""
    hint = "give the bundle's API base URL, e.g. https://host/api"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ArgumentValueError(f"{shown(url)}: not a valid URL ({exc})", hint=hint) from None
    if not parts.hostname or any(c.isspace() or not c.isprintable() for c in url):
        raise ArgumentValueError(f"{shown(url)}: not a valid URL (no host, or spaces or control characters)",
                                 hint=hint)


def _check_type(name: str, value: Any, types: tuple[type, ...], what: str) -> None:
    """An argument of the wrong type is the caller's mistake: a TypeError naming it (a bool is no int)."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise ArgumentTypeError(f"{name} must be {what}, not {type(value).__name__}")


def _check_tags(name: str, tags: Any) -> None:
    if isinstance(tags, str) or not isinstance(tags, Iterable) or not all(isinstance(t, str) for t in tags):
        raise ArgumentTypeError(f"{name} must be a sequence of strings, not {type(tags).__name__}")


def _manifest_path(route: str) -> str:
    """The path the manifest lists a route's file under (``/skills`` is ``skills.json``)."""
    return "api/skills.json" if route == "skills" else "api/" + route


class _Answer(threading.local):
    """The answer a thread is computing: each thread's answer reads its own deployment."""

    def __init__(self) -> None:
        self.depth = 0  # public methods running (the outermost syncs and retries)
        self.pinned: dict[str, bytes | None] = {}  # wire routes read during the answer
        self.rechecked = False  # the manifest was fetched again during this attempt


class _Redeployed(Exception):
    """The manifest changed while an answer was being read: start it over (never a BundleError, which
    fallbacks catch)."""


def _answer(method):
    """A public method's answer comes from one deployment: the manifest is brought up to date first
    (HTTP: revalidated when ``ttl`` has passed) and a redeploy noticed midway starts it over once.
    Calls made inside an answer share its manifest and the wire routes it already read."""

    @functools.wraps(method)
    def run(self: Bundle, *args, **kwargs):
        state = self._answer
        if state.depth:
            return method(self, *args, **kwargs)
        state.depth += 1
        try:
            for _ in range(2):
                state.pinned, state.rechecked = {}, False
                try:
                    self._sync()
                    return method(self, *args, **kwargs)
                except _Redeployed:
                    continue
                except HashMismatch:  # an index file the reader fetched lazily, after a redeploy?
                    if not self._recheck():
                        raise
            raise BundleError(f"{self._t.location}: the bundle was redeployed twice while being read",
                              hint="try again")
        finally:
            state.depth -= 1
            state.pinned = {}
    return run


# -- the bundle -----------------------------------------------------------------------------------

class Bundle:
    """A skillc bundle (``dist/``, its ``api/`` folder, or the API base URL of a deployed one)."""

    def __init__(self, transport: _Local | _Http):
        self._t = transport
        self._skills: list[SkillInfo] | None = None
        self._skills_raw: bytes | None = None
        self._by_id: dict[str, SkillInfo] | None = None
        self._docs: dict[str, tuple[bytes, SkillDoc]] = {}
        self._collections: list[Collection] | None = None
        self._collections_raw: bytes | None = None
        self._manifest: dict | None = None
        self._manifest_raw: bytes | None = None
        self._manifest_loaded = False
        self._sha_by_path: dict[str, str] = {}
        self._checked: dict[str, bytes] = {}  # wire bytes already compared with the manifest
        self._answer = _Answer()
        self._index = None
        self._select: dict | None = None
        self._memory = None
        self._files_cache: tuple[bytes | None, dict[str, list[BundleFile]]] | None = None

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def open(cls, location: str | Path, *, ttl: float = DEFAULT_TTL,
             headers: Mapping[str, str] | None = None) -> Bundle:
        """Open a bundle directory (``dist`` or ``dist/api``) or an ``http(s)://`` URL.

        ``ttl`` is how long wire responses are cached over HTTP (Meerkat's ``refresh_seconds``);
        ``headers`` are sent with every request (e.g. ``{"Authorization": "Bearer …"}``).
        """
        text = str(location)
        if text.startswith(("http://", "https://")):
            bundle = cls._open_url(text, ttl, headers)
        elif isinstance(location, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):
            raise ArgumentValueError(f"{text}: only http:// and https:// URLs can be read, or a bundle folder",
                                     hint="give the bundle's http(s) API URL, or the path of a bundle folder")
        else:
            bundle = cls._open_dir(Path(location))
        bundle._sync()
        return bundle

    @classmethod
    def _open_dir(cls, path: Path) -> Bundle:
        if not path.is_dir():
            raise BundleError(f"{path}: no such bundle directory", hint="build one with `skillc build`")
        for api in (path / "api", path):
            if (api / "skills.json").is_file() or (api / "manifest.json").is_file():
                return cls(_Local(api))
        raise BundleError(f"{path}: not a skillc bundle (no api/skills.json)",
                          hint="give the output folder of `skillc build` (default dist/)")

    @classmethod
    def _open_url(cls, url: str, ttl: float, headers: Mapping[str, str] | None) -> Bundle:
        _check_url(url)
        parts = urlsplit(url)
        base = url.rstrip("/")
        candidates = [base] if parts.path.rstrip("/").endswith("/api") else [base + "/api", base]
        last: Exception | None = None
        html = False
        for cand in candidates:
            t = _Http(cand, ttl, headers)
            try:
                data = t.get("skills")
            except BundleError as exc:
                last = exc
                continue
            if data is not None and _looks_like_html(data):
                html = True
            elif data is not None:
                bundle = cls(t)
                bundle._set_skills(data)
                return bundle
        if html:
            raise BundleError(f"{url}: the server answered HTML where the skills list (JSON) was expected",
                              hint="give the bundle's API base URL (the folder holding skills.json), "
                                   "e.g. https://host/api")
        if last is not None:
            raise last
        raise BundleError(f"{url}: no skills list at {candidates[0]}/skills",
                          hint="give the bundle's API base URL, e.g. https://host/api")

    def __repr__(self) -> str:
        return f"Bundle({self._t.location!r})"

    @property
    def location(self) -> str:
        return self._t.location

    # -- raw access -------------------------------------------------------------------------------
    def _json_bytes(self, route: str, data: bytes) -> Any:
        try:
            return load_json(data)
        except (UnicodeDecodeError, ValueError):
            if _looks_like_html(data):
                raise BundleError(f"{self._t.describe(route)}: HTML where a bundle file was expected",
                                  hint="give the bundle's API base URL (the folder holding skills.json)") from None
            raise BundleError(f"{self._t.describe(route)}: not valid JSON (corrupted or truncated)",
                              hint="rebuild or re-download the bundle") from None

    @_answer
    def manifest(self) -> dict | None:
        """``manifest.json`` (every file's SHA-256 and size, inputs, settings…), or None when absent."""
        return self._manifest

    def _sync(self, *, fresh: bool = False) -> bool:
        """Bring the manifest up to date (HTTP: revalidated when ``ttl`` has passed; ``fresh``: now).
        True when a redeploy changed it: everything read from the previous deployment is forgotten."""
        data = self._t.get(MANIFEST, fresh=fresh)
        if self._manifest_loaded and data == self._manifest_raw:
            return False
        doc = self._json_bytes(MANIFEST, data) if data is not None else None
        if doc is not None:
            self._check_manifest(doc)
        changed = self._manifest_loaded
        self._manifest, self._manifest_raw, self._manifest_loaded = doc, data, True
        self._sha_by_path = {f.get("path"): f.get("sha256") for f in (doc or {}).get("files", ())
                             if isinstance(f, dict)}
        if changed:
            self._t.expire(keep=MANIFEST)
            self._index = self._select = self._collections = self._collections_raw = None
            self._skills_raw = self._by_id = None
            self._docs, self._checked, self._answer.pinned = {}, {}, {}
        return changed

    def _recheck(self) -> bool:
        """A file differs from the manifest: read the manifest again (once per answer).  True when a
        redeploy changed it (the caller starts the answer over)."""
        if self._answer.rechecked:
            return False
        self._answer.rechecked = True
        return self._sync(fresh=True)

    def _check_manifest(self, doc: Any) -> None:
        if not isinstance(doc, dict) or doc.get("kind") != MANIFEST_KIND:
            raise BundleError(f"{self._t.describe(MANIFEST)}: not a skillc bundle manifest")
        version = doc.get("manifest_version")
        if not isinstance(version, int) or isinstance(version, bool) or not isinstance(doc.get("files"), list):
            raise BundleError(f"{self._t.describe('manifest.json')}: a malformed manifest (manifest_version "
                              f"{version!r}, files {type(doc.get('files')).__name__})",
                              hint="rebuild the bundle with `skillc build`")
        if version > MANIFEST_VERSION:
            tool = doc.get("tool", {}).get("version", "?") if isinstance(doc.get("tool"), dict) else "?"
            raise BundleError(f"{self._t.describe('manifest.json')}: bundle format version {version} (written by "
                              f"skillc {tool}) is newer than this skillc reads ({MANIFEST_VERSION})",
                              hint="upgrade skillc (pip install -U skillc)")

    def _manifest_sha(self, route: str) -> str | None:
        return self._sha_by_path.get(_manifest_path(route))

    def _differs(self, route: str, data: bytes) -> bool:
        expected = self._manifest_sha(route)
        return expected is not None and hashlib.sha256(data).hexdigest() != expected

    def _verified(self, route: str) -> bytes:
        """A static file (index, ``files/…``), checked against the manifest's SHA-256 when the manifest
        lists it; a file that differs is read again after the manifest (a redeploy starts over)."""
        data = self._t.get(route, immutable=True)
        if data is not None and self._differs(route, data):
            if self._recheck():
                raise _Redeployed
            data = self._t.get(route, immutable=True, fresh=True)
            if data is not None and self._differs(route, data):
                raise BundleError(f"{self._t.describe(route)}: SHA-256 differs from the manifest (corrupted or "
                                  f"truncated)", hint="rebuild or re-download the bundle")
        if data is None:
            raise BundleError(f"{self._t.describe(route)}: missing from the bundle",
                              hint="rebuild the bundle with `skillc build`")
        return data

    def _wire(self, route: str) -> bytes | None:
        """A wire route's bytes (HTTP: revalidated when ``ttl`` has passed), read once per answer.
        Bytes that differ from the manifest make it be read again (a redeploy starts the answer
        over); bytes that still differ are taken as the host serves them (wire routes are kept from
        mixing deployments, not verified: a host may rewrite them)."""
        pinned = self._answer.pinned
        if route in pinned:
            return pinned[route]
        data = self._t.get(route)
        if data is not None and self._checked.get(route) is not data and self._differs(route, data):
            if self._recheck():
                raise _Redeployed
            data = self._t.get(route, fresh=True)
        if data is not None:
            self._checked[route] = data
        pinned[route] = data
        return data

    # -- skills and collections -------------------------------------------------------------------
    def _set_skills(self, data: bytes) -> None:
        if data is self._skills_raw:
            return
        try:
            doc = load_json(data)
            skills = [SkillInfo.from_wire(d) for d in doc["skills"]]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
            raise BundleError(f"{self._t.describe('skills')}: not a Meerkat skills list") from None
        from ..model import id_problem

        for info in skills:  # an ID names files and URLs (skill_location): never one that leaves the bundle
            problem = id_problem(info.id)
            if problem:
                raise BundleError(f"{self._t.describe('skills')}: skill ID {info.id!r} is not safe: {problem}",
                                  hint="rebuild the bundle with `skillc build`")
        # Remembered only once the list is known good: the same bytes read again (the transport
        # caches them) must raise again, not be taken as already parsed with no skills set.
        self._skills, self._by_id, self._skills_raw = skills, {s.id: s for s in skills}, data

    def _skill_list(self) -> list[SkillInfo]:
        data = self._wire("skills")  # the transport caches (HTTP: for `ttl` seconds)
        if data is None:
            raise BundleError(f"{self._t.describe('skills')}: missing from the bundle")
        self._set_skills(data)
        return self._skills  # type: ignore[return-value]

    @_answer
    def skills(self) -> list[SkillInfo]:
        """Every skill's descriptor, in ID byte order."""
        return list(self._skill_list())

    def _info(self, skill_id: str) -> SkillInfo:
        _check_type("skill_id", skill_id, (str,), "a string")
        self._skill_list()
        info = self._by_id.get(skill_id)  # type: ignore[union-attr]
        if info is None:
            close = difflib.get_close_matches(skill_id, list(self._by_id), n=3)  # type: ignore[arg-type]
            raise UnknownSkill(f"unknown skill ID {skill_id!r} in {self._t.location}",
                               hint=("did you mean " + ", ".join(close) + "?") if close else
                               "the IDs are listed in api/skills.json (`skillc render BUNDLE --to-prompt`, "
                               "Bundle.skills())")
        return info

    @_answer
    def get(self, skill_id: str) -> SkillDoc:
        """The skill's wire document (descriptor + body); ``UnknownSkill`` if the bundle lacks it."""
        info = self._info(skill_id)
        route = "skills/" + quote(skill_id, safe="")
        raw = self._wire(route)  # cached by the transport
        hit = self._docs.get(skill_id)
        if hit is not None and hit[0] is raw:
            return hit[1]
        data = self._json_bytes(route, raw) if raw is not None else None
        if data is None:
            raise BundleError(f"{self._t.describe(route)}: listed skill {skill_id!r} has no document",
                              hint="the bundle is incomplete; rebuild it")
        if not isinstance(data, dict) or not isinstance(data.get("body"), str):
            raise BundleError(f"{self._t.describe(route)}: not a Meerkat skill document")
        doc = SkillDoc(info, data["body"])
        self._docs[skill_id] = (raw, doc)
        return doc

    @_answer
    def collections(self) -> list[Collection]:
        """Every collection (``/skill-collections``, a wire route: HTTP revalidates it after ``ttl``),
        in path byte order.  A server without the route (non-2xx) gets them derived from the skills
        list, as Meerkat's HTTP source does (research/frameworks.md §1.5)."""
        from ..resolve.precedence import derive_collections

        route = "skill-collections"
        try:
            data = self._wire(route)
        except _HttpStatus:
            data = None
        if data is None:
            # (Meerkat's trait default: top-level segments only, "N skills")
            return [c for c in derive_collections(self._skill_list()) if "/" not in c.path]  # type: ignore[arg-type]
        if data is not self._collections_raw:
            doc = self._json_bytes(route, data)
            try:
                self._collections = [Collection(str(c["path"]), str(c["description"]), int(c["count"]))
                                     for c in doc["collections"]]
            except (KeyError, TypeError, ValueError, OverflowError):
                raise BundleError(f"{self._t.describe(route)}: not a collections list") from None
            self._collections_raw = data
        return list(self._collections)  # type: ignore[arg-type]

    @_answer
    def browse(self, path: str | None = None, query: str | None = None) -> dict:
        """Meerkat's ``browse_skills`` result: a listing of ``path`` or, with ``query``, a search."""
        from ..emit.render.meerkat import browse_data

        for name, value in (("path", path), ("query", query)):
            _check_type(name, value, (str, type(None)), "a string or None")
        return browse_data(self.skills(), self.collections(), path, query)

    # -- search and selection ---------------------------------------------------------------------
    @_answer
    def index(self):
        """The bundle's BM25 index (``skillc.index.reader.SearchIndex``), opened on first use."""
        if self._index is None:
            from ..index.reader import SearchIndex

            header = self._verified(INDEX + "search.json")
            self._index = SearchIndex.from_fetch(lambda name: self._index_file(name), header_bytes=header,
                                                 source=self._t.describe("index"))
        return self._index

    def _index_file(self, name: str) -> bytes:
        """A binary index file; the reader checks it against the header's SHA-256, and the header
        itself was checked against the manifest, so each byte is hashed once."""
        if "/" in name or name.startswith("."):
            raise BundleError(f"index file name {name!r} is not allowed")
        data = self._t.get(INDEX + name, immutable=True)
        if data is None:
            raise BundleError(f"{self._t.describe(INDEX + name)}: missing from the bundle",
                              hint="rebuild the bundle with `skillc build`")
        return data

    @staticmethod
    def _query(query: str) -> list[str]:
        _check_type("query", query, (str,), "a string")
        if not query or not query.strip():
            raise SkillcError("empty query", hint="give some words to search for")
        tokens = tokenize(query)
        if not tokens:
            raise SkillcError(f"the query {query!r} has no searchable words (letters or digits)")
        return tokens

    @_answer
    def search(self, query: str, k: int = 10) -> list[dict]:
        """BM25 search: ``[{"id","name","description","score"}…]``, best first."""
        self._query(query)
        _check_type("k", k, (int,), "an int")
        hits = self.index().search(query, k)
        self._skill_list()
        return [{"id": h.id, "name": h.name, "description": self._by_id[h.id].description if h.id in self._by_id
                 else "", "score": h.score} for h in hits]  # type: ignore[operator,index]

    @_answer
    def select_data(self) -> dict:
        if self._select is None:
            from ..index.select import select_data_problem

            route = INDEX + "select.json"
            doc = self._json_bytes(route, self._verified(route))
            if not isinstance(doc, dict) or doc.get("format") != "skillc-select":
                raise BundleError(f"{self._t.describe(route)}: not skillc selection data")
            if not isinstance(doc.get("version"), int) or doc["version"] > SELECT_VERSION:
                raise BundleError(f"{self._t.describe(route)}: version {doc.get('version')} is "
                                  f"newer than this skillc reads", hint="upgrade skillc")
            problem = select_data_problem(doc)
            if problem:  # checked once here, so selection and rendering index it without surprises
                raise BundleError(f"{self._t.describe(route)}: malformed selection data: {problem}",
                                  hint="rebuild the bundle with `skillc build`")
            self._select = doc
        return self._select

    @_answer
    def settings(self) -> dict:
        return dict(self.select_data().get("settings", {}))

    @_answer
    def adk_select(self, query: str, top_k: int = 1, min_score: float = 1.0, include_tags: Sequence[str] = (),
                   exclude_tags: Sequence[str] = ()) -> list[AdkMatch]:
        """adk-rust's ``select_skills`` exactly (defaults: top 1, ``min_score`` 1.0)."""
        _check_type("query", query, (str,), "a string")
        _check_type("top_k", top_k, (int,), "an int")
        _check_type("min_score", min_score, (int, float), "a number")
        _check_tags("include_tags", include_tags)
        _check_tags("exclude_tags", exclude_tags)
        policy = SelectionPolicy(top_k, min_score, tuple(include_tags), tuple(exclude_tags))
        if not include_tags:
            self._query(query)
        return self.index().adk_select(query, policy)

    @_answer
    def select(self, message: str, project: str | Path | None = None, phase: str | None = None, *,
               mode: str = "cli", top_k: int = 3, min_score: float = 1.0, max_skills: int | None = None):
        """Seed 000's two-phase selection: Plan Cascade detection in ``project`` (if given), then
        adk-rust's lexical matches for ``message`` in the remaining slots.  Returns ``Selected``s."""
        from ..index import select as sel
        from ..index.adk import rank

        _check_type("message", message, (str,), "a string")
        _check_type("project", project, (str, os.PathLike, type(None)), "a path or None")
        _check_type("phase", phase, (str, type(None)), "a string or None")
        _check_type("top_k", top_k, (int,), "an int")
        _check_type("min_score", min_score, (int, float), "a number")
        _check_type("max_skills", max_skills, (int, type(None)), "an int or None")
        if mode not in sel.DETECT_MODES:
            raise SkillcError(f"unknown detect mode {mode!r} (choose {', '.join(sel.DETECT_MODES)})")
        if phase is not None and phase not in sel.PHASES:  # (a typo kept no detected skill, silently)
            raise ArgumentValueError(f"unknown phase {phase!r} (choose {', '.join(sel.PHASES)})")
        data = self.select_data()
        index = self.index()
        self._check_per_skill(data, index.N, "documents in the search index")
        rules = [sel.DetectRule.from_json(r) for r in data.get("rules", ())]
        slots = max_skills if max_skills is not None else data["settings"].get("max_skills_per_story", 3)
        tokens = tokenize(message)
        lexical = []
        if tokens and top_k > 0:
            matches = rank(index.adk_candidates(with_tags=False), index.adk_scores(tokens), tokens,
                           SelectionPolicy(top_k=index.N, min_score=min_score))
            prio, source, stype = data["priority"], data["source"], data["source_type"]
            lexical = [sel.LexicalCandidate(m.path, m.name, prio[m.index], source[m.index], stype[m.index], m.score)
                       for m in matches]
        files = sel.ProjectFiles(project) if project is not None else None
        if files is not None and not Path(project).is_dir():  # type: ignore[arg-type]
            raise SkillcError(f"{project}: no such project directory")
        chosen = sel.select(rules, files, lexical, phase=phase, mode=mode, max_skills=slots)
        detected = [c for c in chosen if c.reason == "detected"]
        return detected + [c for c in chosen if c.reason == "lexical"][:top_k]

    def _check_per_skill(self, data: dict, count: int, what: str) -> None:
        """select.json has one priority and source per skill: as many as the index (or skills list)."""
        if len(data["priority"]) != count:
            raise BundleError(f"{self._t.describe(INDEX + 'select.json')}: {len(data['priority'])} skills' "
                              f"priorities for {count} {what}", hint="rebuild the bundle with `skillc build`")

    # -- renderers --------------------------------------------------------------------------------
    def _setting(self, key: str, default: int) -> int:
        try:
            return self.settings().get(key, default)  # (integers: checked with select.json)
        except BundleError:
            doc = self.manifest() or {}
            value = (doc.get("settings") if isinstance(doc.get("settings"), dict) else {}).get(key, default)
            if not isinstance(value, int) or isinstance(value, bool):
                raise BundleError(f"{self._t.describe(MANIFEST)}: settings.{key} is not an integer ({value!r})",
                                  hint="rebuild the bundle with `skillc build`") from None
            return value

    @_answer
    def render_inventory(self, threshold: int | None = None) -> str:
        """Meerkat's ``<available_skills>`` block (flat up to the bundle's ``inventory_threshold``)."""
        from ..emit.render.meerkat import render_inventory

        _check_type("threshold", threshold, (int, type(None)), "an int or None")
        if threshold is None:
            threshold = self._setting("inventory_threshold", 12)
        skills = self._skill_list()
        # (the flat form lists skills only: a server without /skill-collections is not asked for them)
        return render_inventory(skills, self.collections() if len(skills) > threshold else (), threshold)

    @_answer
    def render_injection(self, ids: str | Iterable[str], max_bytes: int | None = None) -> str:
        """Meerkat ``<skill id>`` blocks for ``ids``, joined by a blank line (as Meerkat prepends them)."""
        from ..emit.render.meerkat import render_injection

        _check_type("max_bytes", max_bytes, (int, type(None)), "an int or None")
        ids = [ids] if isinstance(ids, str) else list(ids)
        cap = max_bytes if max_bytes is not None else self._setting("max_injection_bytes", 32768)
        return "\n\n".join(render_injection(i, self.get(i).body, cap) for i in ids)

    @_answer
    def load_skill(self, skill_id: str) -> dict:
        """Meerkat's ``load_skill`` tool result: ``{"id","name","body","byte_size"}``."""
        from ..emit.render.meerkat import load_data

        doc = self.get(skill_id)
        return load_data(skill_id, doc.name, doc.body, self._setting("max_injection_bytes", 32768))

    def _skill_file(self, skill_id: str) -> str:
        """The route of the skill's file as published: ``SKILL.md``, else ``skill.md`` (spec §2.3: the
        name found), whichever the manifest lists; ``SKILL.md`` when it lists neither."""
        for name in ("SKILL.md", "skill.md"):
            route = f"files/{skill_id}/{name}"
            if _manifest_path(route) in self._sha_by_path:
                return route
        return f"files/{skill_id}/SKILL.md"

    @_answer
    def skill_location(self, skill_id: str) -> str:
        """Where the skill's SKILL.md (or skill.md) is: an absolute path in a local bundle, else its URL."""
        self._info(skill_id)
        return self._t.location_of(self._skill_file(skill_id))

    @_answer
    def to_prompt(self, ids: str | Iterable[str] | None = None) -> str:
        """skills-ref ``to-prompt`` XML of the given skills (all by default)."""
        from ..emit.render.skills_ref import PromptSkill, to_prompt

        ids = [ids] if isinstance(ids, str) else ids  # one ID, as render_injection takes it (not its letters)
        infos = self.skills() if ids is None else [self._info(i) for i in ids]
        return to_prompt([PromptSkill(s.name, s.description, self.skill_location(s.id)) for s in infos])

    @_answer
    def render_adk(self, ids: str | Iterable[str], max_chars: int = 2000, *, instruction: bool = False) -> str:
        """adk-rust ``[skill:name]`` blocks (or, with ``instruction``, its system-instruction variant)."""
        from ..emit.render import adk

        _check_type("max_chars", max_chars, (int,), "an int")
        ids = [ids] if isinstance(ids, str) else list(ids)
        out = []
        for i in ids:
            doc = self.get(i)
            body = adk.adk_body(doc.body)
            out.append(adk.instruction(doc.name, doc.description, body, max_chars) if instruction
                       else adk.prompt_block(doc.name, body, max_chars))
        return "\n\n".join(out)

    def _plan_cascade_content(self, skill_id: str, body: str, max_lines: int) -> str:
        """Plan Cascade cuts its content from the whole SKILL.md (the lines after the closing ``---``,
        blank ones included): read from the bundle's copy, else (withheld, or a bundle that does not
        publish it) from the wire body, whose leading newlines Meerkat's parser dropped."""
        from ..emit.render.plan_cascade import body_content, extract_key_content

        # (Plan Cascade reads the file with Python's read_text: universal newlines, so no "\r")
        try:
            text = self._verified(self._skill_file(skill_id)).decode("utf-8")
        except (BundleError, UnicodeDecodeError):
            return body_content(_universal_newlines(body), max_lines)
        return extract_key_content(_universal_newlines(text), max_lines)

    @_answer
    def render_plan_cascade(self, ids_or_selected: str | Iterable, max_content_lines: int | None = None) -> str:
        """Plan Cascade's "## Framework-Specific Best Practices" block for skills (IDs or ``Selected``)."""
        from ..emit.render.plan_cascade import CascadeSkill, format_skills
        from ..index.select import DetectRule, Selected

        if isinstance(ids_or_selected, (str, Selected)):  # one skill (not an ID's letters: "unknown skill ID 's'")
            ids_or_selected = [ids_or_selected]
        _check_type("max_content_lines", max_content_lines, (int, type(None)), "an int or None")
        lines = max_content_lines if max_content_lines is not None else self._setting("max_content_lines", 200)
        data = self.select_data()
        rules = {r.id: r for r in map(DetectRule.from_json, data.get("rules", ()))}
        skills = self._skill_list()
        self._check_per_skill(data, len(skills), "skills in the skills list")
        index_of = {s.id: n for n, s in enumerate(skills)}
        out = []
        for item in ids_or_selected:
            _check_type("a skill to render", item, (str, Selected), "an ID or a Selected")
            if isinstance(item, str):
                doc = self.get(item)
                rule = rules.get(item)
                n = index_of[item]
                if rule is not None:
                    name, source, stype, prio = rule.name, rule.source, rule.source_type, rule.priority
                else:
                    name, source, stype, prio = (doc.name, data["source"][n], data["source_type"][n],
                                                 data["priority"][n])
            else:
                doc = self.get(item.id)
                name, source, stype, prio = item.name, item.source, item.source_type, item.priority
            skill_id = item if isinstance(item, str) else item.id
            out.append(CascadeSkill(name, source, stype, prio, self._plan_cascade_content(skill_id, doc.body, lines)))
        return format_skills(out)

    # -- memory (issue 5) -------------------------------------------------------------------------
    @property
    def memory(self):
        """The bundle's frozen memory snapshot (``skillc.memory.recall.MemoryIndex``), opened on first
        use: ``bundle.memory.search("…")``."""
        if self._memory is None:
            try:
                from ..memory.recall import MemoryIndex
            except ImportError:
                raise SkillcError("this skillc has no memory support") from None
            where = (str(self._t.api / "memory") if isinstance(self._t, _Local)
                     else self._t.url("memory"))  # type: ignore[union-attr]
            if isinstance(self._t, _Local) and not (self._t.api / "memory" / "snapshot.json").is_file():
                raise SkillcError(f"{self.location}: the bundle holds no memory snapshot (built without memories)",
                                  hint="build with memories: a memory/ folder in a repository, or --memory PATH")
            self._memory = MemoryIndex.open(where)
        return self._memory


    # -- published files and per-turn references (issue 20) ----------------------------------------
    def _file_table(self) -> dict[str, list[BundleFile]]:
        """Every skill's published files (``api/files/<id>/…`` in the manifest), each file given to the
        longest skill ID it lies in (a nested skill's files are its own); cached per manifest."""
        raw = self._manifest_raw
        if self._files_cache is not None and self._files_cache[0] is raw:
            return self._files_cache[1]
        ids = {s.id for s in self._skill_list()}
        table: dict[str, list[BundleFile]] = {i: [] for i in ids}
        for f in (self._manifest or {}).get("files", ()):
            path = f.get("path") if isinstance(f, dict) else None
            if not isinstance(path, str) or not path.startswith("api/files/"):
                continue
            owner, rel = _owner(path[len("api/files/"):], ids)
            if owner is not None and isinstance(f.get("sha256"), str) and isinstance(f.get("size"), int):
                table[owner].append(BundleFile(rel, f["sha256"], f["size"]))
        for files in table.values():
            files.sort(key=lambda f: f.path.encode("utf-8", "surrogatepass"))
        self._files_cache = (raw, table)
        return table

    @_answer
    def files(self, skill_id: str) -> list[BundleFile]:
        """The files the bundle publishes for a skill (its SKILL.md, references, scripts…), in path byte
        order, with the SHA-256 and size the manifest gives them; empty without a manifest."""
        self._info(skill_id)
        return list(self._file_table().get(skill_id, ()))

    @_answer
    def read_file(self, skill_id: str, path: str) -> bytes:
        """One published file of a skill, checked against the manifest's SHA-256."""
        self._info(skill_id)
        _check_type("path", path, (str,), "a string")
        if not any(f.path == path for f in self._file_table().get(skill_id, ())):
            raise BundleError(f"{skill_id}: the bundle publishes no file {path!r} for this skill")
        return self._verified(f"files/{skill_id}/{path}")

    @_answer
    def skill_memory_block(self, skill_id: str) -> str | None:
        """The frozen ``<skill-memory>`` block of a skill that opts into skill-memory (seed 003), as the
        bundle publishes it (``api/memory/skills/<id>.md``), or None for a skill without one."""
        self._info(skill_id)
        route = "memory/skills/" + quote(skill_id, safe="") + ".md"
        if self._manifest is not None and self._manifest_sha(route) is None:
            return None  # (the manifest lists every memory file: no request for a skill without one)
        data = self._t.get(route, immutable=True)
        if data is None:
            return None
        if self._differs(route, data):
            data = self._verified(route)
        return data.decode("utf-8", "replace")

    @_answer
    def apply_references(self, message: str, max_bytes: int | None = None) -> AppliedReferences:
        """Seed 004's per-turn ``/skill-ref`` processing of a user message.

        A message that starts with ``/collection/skill`` (Meerkat's regex) gets the reference
        stripped and the skill's ``<skill id>`` block prepended as Meerkat does (``block + "\n\n" +
        rest``, the block alone when nothing follows).  An unknown ID fails no turn: the message
        passes through unchanged with a ``SkillResolutionFailed`` event saying so.
        """
        from ..emit.render.meerkat import parse_skill_ref

        _check_type("message", message, (str,), "a string")
        ref = parse_skill_ref(message)
        if ref is None:
            return AppliedReferences(message, message, ())
        try:
            block = self.render_injection(ref.id, max_bytes)
        except UnknownSkill:
            event = ReferenceEvent("SkillResolutionFailed", ref.id, 0, f"Skill '{ref.id}' not found")
            return AppliedReferences(message, message, (event,))
        text = block + "\n\n" + ref.rest if ref.rest else block
        event = ReferenceEvent("SkillsResolved", ref.id, len(block.encode("utf-8")), "")
        return AppliedReferences(message, text, (event,), (block,), ref.rest)


def _owner(rel: str, ids: set[str]) -> tuple[str | None, str]:
    """The longest skill ID ``rel`` (``<id>/<path>``) lies in, and the path inside it."""
    parts = rel.split("/")
    for n in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:n])
        if candidate in ids:
            return candidate, "/".join(parts[n:])
    return None, rel


@dataclass(frozen=True, slots=True)
class BundleFile:
    """A file a bundle publishes for a skill: its path in the skill folder, SHA-256 and size."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class ReferenceEvent:
    """What Meerkat emits for a reference: ``SkillsResolved`` (with the injected bytes) or
    ``SkillResolutionFailed`` (with the message the user is shown)."""

    kind: str
    id: str
    injection_bytes: int
    error: str


@dataclass(frozen=True, slots=True)
class AppliedReferences:
    """``Bundle.apply_references``: the message as sent to the model (``text``), the blocks injected,
    the events, and the user's own words after the reference (``rest``)."""

    message: str
    text: str
    events: tuple[ReferenceEvent, ...]
    blocks: tuple[str, ...] = ()
    rest: str | None = None

    @property
    def failed(self) -> tuple[ReferenceEvent, ...]:
        return tuple(e for e in self.events if e.kind == "SkillResolutionFailed")


def _universal_newlines(text: str) -> str:
    """``text`` as Python's text mode reads it: CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
