"""The reference server for a bundle (``skillc serve``): the site at ``/``, the API at ``/api``.

Routes (Meerkat Skills API v2.0, base URL ``http://host:port/api``):

* ``/api/skills`` (and ``/api/skills/``) → ``api/skills.json``;
* ``/api/skills/<quote(id, safe='')>`` → that skill's document; the ID is decoded and encoded
  again, so ``%2f``, ``%2F`` and a raw ``/`` reach the same file; a missing one is a JSON 404;
* ``/api/skill-collections`` → ``api/skill-collections``;
* ``/.well-known/agent-skills/index.json``, and ``/.well-known/agent-skills/<id>/<path>`` →
  ``api/files/<id>/<path>``;
* anything else: a file of the bundle (``index.html`` for a folder of the site; a folder under
  ``/api/`` or ``/.well-known/`` is a JSON 404, like a missing file there).

Every response carries an ETag (the file's SHA-256 from the manifest), answers ``If-None-Match``
with 304, is gzip-compressed when the client asks, and HEAD is supported.  A skill's own files are
untrusted: ``nosniff``, a sandboxing Content-Security-Policy, and pages, scripts and styles sent as
plain text (``SKILL_FILES``).  No request can reach a
file outside the bundle: ``..`` and ``.`` segments (encoded or not), NUL bytes, backslashes and
symbolic links anywhere on the path are refused.

Every rule above is ``answer(bundle, Request) -> Reply``; the front end (``Handler``, on
http.server) only carries bytes, under limits a hostile or slow client cannot wear down: a listen
queue of 1,024, at most 256 connections at once, 10 s for a request's head, 60 s idle, a gzip
cache of 32 MB, files from 4 MB on sent from the file.  Why http.server and not waitress, with
figures: docs/security/serving.md.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import mimetypes
import os
import re
import socket
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..emit.manifest import MANIFEST, manifest_entries, read_manifest
from ..errors import SkillcError

JSON = "application/json"
JSON_UTF8 = "application/json; charset=utf-8"
TYPES = {
    ".json": JSON, ".xml": "application/xml", ".md": "text/markdown", ".html": "text/html",
    ".htm": "text/html", ".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
    ".txt": "text/plain", ".sh": "text/plain", ".py": "text/plain", ".zip": "application/zip",
    ".bin": "application/octet-stream", ".svg": "image/svg+xml", ".png": "image/png", ".sqlite": "application/vnd.sqlite3",
}
# A skill's own files (``api/files/``, also reached as ``/.well-known/agent-skills/<id>/<path>``) are
# untrusted: on the site's origin none may be a page, a script or a style a browser runs or applies.
# They are sent with these headers (no sniffing; a page opened directly is sandboxed: no script,
# no same-origin access), and any type outside PASSIVE_TYPES as plain text (or bytes).
# (and the legacy discovery tree ``.well-known/skills/<name>/<path>``, copies of the same files;
# its index.json is JSON either way, these headers harmless on it)
SKILL_FILES = ("api/files/", ".well-known/skills/")
SKILL_DOCS = "api/skills/"
UNTRUSTED_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'"}
PASSIVE_TYPES = frozenset({"text/plain", "text/markdown", "text/csv", "application/json", "application/zip",
                           "application/octet-stream"})
_SHOWN_AS_TEXT = ("text/", "application/javascript", "application/x-javascript", "application/xml",
                  "application/xhtml+xml", "application/ecmascript")
COMPRESSIBLE = ("application/json", "application/xml", "text/", "image/svg+xml", "application/javascript")
GZIP_MIN = 256
# The gzip cache is bounded by bytes, not entries (4,096 entries of a 30 MB asset each was
# gigabytes resident): the least recently used bodies go first, and a body larger than a tenth of
# the bound is compressed for each request instead of evicting everything else.
GZIP_CACHE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Route:
    rel: str | None  # the bundle file to send, posix, relative to the root
    content_type: str | None = None  # forced type (extensionless API files)
    not_found: str | None = None  # the JSON error message when the file is missing
    redirect: str | None = None


def _clean(rel: str) -> str | None:
    """``rel`` when it is a plain relative path below the root, else None."""
    if "\0" in rel or "\\" in rel:
        return None
    parts = rel.split("/")
    # (an empty segment too: ``api//skills/index.html`` would name the listing under a path the
    # content-type rules do not recognise, and ``api/files/`` a folder)
    if any(p in ("", ".", "..") for p in parts):
        return None
    return rel


_RAW_BYTE = re.compile(r"[\x80-\xff]")


def request_path(target: str) -> str:
    """The request target as ``route`` takes it: percent-encoded ASCII.

    http.server decodes the request line as ISO-8859-1, so a client that sends a name's UTF-8 bytes
    unencoded (``curl http://host/api/files/café/SKILL.md``; nginx and Caddy serve that) hands over
    one character per byte: encoding each again as ``%XX`` gives the bytes back, the same path as
    ``caf%C3%A9``, where decoding them as they stand named ``cafÃ©`` (a 404 and a garbled message)."""
    return _RAW_BYTE.sub(lambda m: f"%{ord(m.group()):02X}", target)


def route(raw_path: str) -> Route:
    """Map a request path (still percent-encoded) to a bundle file.  Pure."""
    # Repeated slashes are one, as nginx and Caddy read them (``/api//skills/`` is the list); an
    # encoded one (``%2F%2F``) is not merged, and names nothing outside a skill ID (``_clean``).
    path = re.sub(r"//+", "/", raw_path.split("?", 1)[0].split("#", 1)[0])
    if path in ("/api/skills", "/api/skills/"):
        return Route("api/skills.json", JSON)
    if path.startswith("/api/skills/"):
        rest = path[len("/api/skills/"):]
        skill_id = unquote(rest, errors="strict") if "%" in rest else rest
        name = quote(skill_id, safe="")
        if name in ("", ".", "..") or "\0" in skill_id:
            return Route(None, JSON, f"no skill {skill_id!r}")
        return Route(f"api/skills/{name}", JSON, f"no skill {skill_id!r}")
    if path in ("/api/skill-collections", "/api/skill-collections/"):
        return Route("api/skill-collections", JSON)
    try:
        decoded = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return Route(None, None, "not found")
    api = decoded.startswith(("/api/", "/.well-known/"))
    if decoded.startswith("/.well-known/agent-skills/") and decoded != "/.well-known/agent-skills/index.json":
        rel = _clean("api/files/" + decoded[len("/.well-known/agent-skills/"):])
        return Route(rel, None, "no such skill file")
    rel = decoded.lstrip("/")
    if rel == "" or rel.endswith("/"):
        rel += "index.html"
    rel = _clean(rel)  # type: ignore[assignment]
    return Route(rel, None, "not found" if api else None)


def content_type(rel: str, forced: str | None = None) -> str:
    if rel.startswith(SKILL_DOCS):
        # The skill documents and the listing's copy (``index.html``) are JSON whatever their name
        # ends with: an ID may end in ``.html`` or ``.svg``, and the text inside (descriptions,
        # bodies) is the skills' own, never a page on the site's origin, however the path was spelt.
        forced = JSON
    ctype = forced or TYPES.get(os.path.splitext(rel)[1].lower()) or mimetypes.guess_type(rel)[0] \
        or "application/octet-stream"
    if rel.startswith(SKILL_FILES) and ctype not in PASSIVE_TYPES and not ctype.startswith("image/"):
        # (an SVG stays an image: an <img> never runs its script, and opened directly it is sandboxed)
        ctype = "text/plain" if ctype.startswith(_SHOWN_AS_TEXT) else "application/octet-stream"
    if ctype.startswith("text/") or ctype in (JSON, "application/xml", "text/javascript", "image/svg+xml"):
        ctype += "; charset=utf-8"
    return ctype


# Files from this size on are sent from the file (``socket.sendfile``), never read whole, and sent
# uncompressed: fifty clients fetching a 30 MB asset held 1.5 GB; now each holds a descriptor.
STREAM_MIN = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileBody:
    """A large body, sent from its open file (whose bytes a rebuild cannot change: a build swaps
    a new folder in, the open file stays the old one)."""

    file: io.BufferedReader
    size: int

    def __len__(self) -> int:
        return self.size

    def close(self) -> None:
        self.file.close()


def _sha256(data: bytes | FileBody) -> str:
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.file_digest(data.file, "sha256").hexdigest()
    data.file.seek(0)
    return digest


class GzipCache:
    """Compressed bodies by digest, least recently used first out, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def put(self, key: str, body: bytes) -> None:
        if len(body) > self.max_bytes // 10:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = body
            self.size += len(body)
            while self.size > self.max_bytes:
                self.size -= len(self._entries.popitem(last=False)[1])


class Bundle:
    """A bundle folder, its manifest hashes (reloaded when a build swaps a new bundle in)."""

    def __init__(self, root: Path, gzip_cache_bytes: int = GZIP_CACHE_BYTES) -> None:
        # Resolved once: a bundle folder reached through a link (a deploy folder) is served; links
        # *inside* it are never followed (``open``).
        self.root = Path(os.path.realpath(root))
        if not self.root.is_dir():
            raise SkillcError(f"{root} does not exist or is not a folder",
                              hint="serve the folder `skillc build` wrote (its --out; dist by default)")
        if read_manifest(self.root) is None:
            empty = not any(True for _ in os.scandir(self.root))
            raise SkillcError(f"{root} holds no skillc bundle (no api/manifest.json)",
                              hint=("build one first: skillc build --out " + str(root)) if empty else
                              "serve the folder `skillc build` wrote (its --out; dist by default)")
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._hashes: dict[str, tuple[str, int]] = {}
        # gzip bodies by the SHA-256 of their source bytes (content-addressed: valid across rebuilds)
        self.gzip_cache = GzipCache(gzip_cache_bytes)

    def _generation(self) -> tuple | None:
        """What tells one build's bundle from the next (a rebuild swaps a new folder in)."""
        try:
            st = os.stat(self.root / MANIFEST)
            return st.st_ino, st.st_mtime_ns, st.st_size, os.stat(self.root).st_ino
        except OSError:
            return None

    def _refresh(self) -> tuple[tuple | None, dict[str, tuple[str, int]]]:
        """The current generation's stamp and manifest hashes, read together."""
        stamp = self._generation()
        with self._lock:
            if stamp != self._stamp:
                self._hashes = manifest_entries(read_manifest(self.root))
                self._stamp = stamp
            return self._stamp, self._hashes

    def open(self, rel: str) -> tuple[bytes | FileBody, str] | None:
        """The bytes (a ``FileBody`` from STREAM_MIN bytes on) and SHA-256 of a bundle file; None
        when missing, a folder or behind a link."""
        stamp, hashes = self._refresh()
        full = os.path.join(self.root, *rel.split("/"))
        # No symbolic link anywhere between the root and the file, and nothing outside the root.
        if os.path.realpath(full) != os.path.normpath(full):
            return None
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            fh = os.fdopen(os.dup(fd), "rb")
        finally:
            os.close(fd)
        if st.st_size >= STREAM_MIN:  # (sent from the file: never whole in memory, whatever the traffic)
            data: bytes | FileBody = FileBody(fh, st.st_size)
        else:
            with fh:
                data = fh.read()
        known = hashes.get(rel)
        # (a manifest is data too: only a well-formed digest from it may become a header)
        trusted = known and known[1] == len(data) and isinstance(known[0], str) and _SHA256.fullmatch(known[0])
        # The manifest's hash names these bytes only if no rebuild was swapped in between reading
        # it and reading the file (else a new document would carry the old ETag, or an old one
        # the new ETag: a client would then keep it on 304, and the gzip cache, keyed by digest,
        # would hand it to everyone until the next build).  Otherwise hash the bytes read.
        trusted = trusted and stamp is not None and self._generation() == stamp
        digest = known[0] if trusted else _sha256(data)
        return data, digest

    def gzipped(self, digest: str, data: bytes) -> bytes:
        hit = self.gzip_cache.get(digest)
        if hit is None:
            hit = gzip.compress(data, compresslevel=6, mtime=0)
            self.gzip_cache.put(digest, hit)
        return hit

    def is_dir(self, rel: str) -> bool:
        full = os.path.join(self.root, *rel.split("/"))
        return os.path.realpath(full) == os.path.normpath(full) and os.path.isdir(full)


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _accepts_gzip(header: str | None) -> bool:
    """Whether ``Accept-Encoding`` lets gzip through (RFC 9110 §12.5.3): its own weight when it is
    named, else that of ``*``; a weight of 0 (``q=0``, ``Q=0.``, ``q=0.000``) refuses it, wherever
    it stands in the list (``*, gzip;q=0`` refuses gzip)."""
    weights: dict[str, float] = {}
    for part in (header or "").split(","):
        token, *params = (x.strip() for x in part.split(";"))
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0  # (unreadable: not a yes)
        weights.setdefault(token.lower(), weight)
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


def _etag_matches(header: str | None, etags: tuple[str, ...]) -> bool:
    if not header:
        return False
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        tag = tag.removeprefix("W/")
        if tag in etags:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Request:
    """What the answer depends on, read from a request by the front end."""

    method: str
    target: str  # the request target as sent (its bytes as ISO-8859-1 text, still percent-encoded)
    accept_encoding: str | None = None
    if_none_match: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer: ``headers`` are complete (Content-Length included); ``body`` is empty for HEAD
    and 304."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes | FileBody  # (a FileBody is the front end's to send and close)


def _reply(status: int, ctype: str | None, body: bytes | FileBody, head: bool,
           extra: dict[str, str] | None = None) -> Reply:
    headers = [("Content-Type", ctype)] if ctype else []
    if status != 304:
        headers.append(("Content-Length", str(len(body))))
    headers.append(("Access-Control-Allow-Origin", "*"))
    headers.extend((extra or {}).items())
    if head or status == 304:
        if isinstance(body, FileBody):
            body.close()
        body = b""
    return Reply(status, tuple(headers), body)


METHOD_NOT_ALLOWED = _reply(405, JSON_UTF8, b'{"error":"method_not_allowed"}\n', False, {"Allow": "GET, HEAD"})


def _not_found(bundle: Bundle, message: str | None, head: bool) -> Reply:
    if message is None:  # a site page: the site's own 404 page when it has one
        page = bundle.open("404.html")
        if page is not None:
            return _reply(404, "text/html; charset=utf-8", page[0], head)
        return _reply(404, "text/plain; charset=utf-8", b"404 not found\n", head)
    body = json.dumps({"error": "not_found", "message": message}, ensure_ascii=False).encode() + b"\n"
    return _reply(404, JSON_UTF8, body, head)


def _target_route(target: str) -> tuple[str, Route]:
    """The request target's path (raw UTF-8 bytes encoded again) and its route."""
    try:
        target = request_path(target)
        raw = urlsplit(target).path if "://" in target else target
        return raw, route(raw)
    except (UnicodeDecodeError, ValueError):  # (an absolute target with a malformed host: http://[::1/)
        return "/", Route(None, None, "not found")


def answer(bundle: Bundle, req: Request) -> Reply:
    """The reply to a request: every rule of the server, whatever front end carries the bytes."""
    if req.method not in ("GET", "HEAD"):  # (case-sensitive, RFC 9110: `get` is another method)
        return METHOD_NOT_ALLOWED
    head = req.method == "HEAD"
    raw, r = _target_route(req.target)
    if r.rel is None:
        return _not_found(bundle, r.not_found or "not found", head)
    found = bundle.open(r.rel)
    if found is None:
        return _missing(bundle, raw, r, head)
    data, digest = found
    ctype = content_type(r.rel, r.content_type)
    pre = _precompressed(bundle, r.rel) if isinstance(data, bytes) else None  # (binary shards too)
    compressible = pre is not None or (ctype.startswith(COMPRESSIBLE) and GZIP_MIN <= len(data)
                                       and isinstance(data, bytes))
    use_gzip = compressible and _accepts_gzip(req.accept_encoding)
    headers = {"ETag": f'"{digest}-gzip"' if use_gzip else f'"{digest}"', "Cache-Control": "no-cache"}
    if r.rel.startswith(SKILL_FILES):
        headers.update(UNTRUSTED_HEADERS)
    if compressible:
        headers["Vary"] = "Accept-Encoding"
    if _etag_matches(req.if_none_match, (f'"{digest}"', f'"{digest}-gzip"')):
        return _reply(304, None, b"", head, headers)
    if use_gzip:
        data = pre or bundle.gzipped(digest, data)
        headers["Content-Encoding"] = "gzip"
    return _reply(200, ctype, data, head, headers)


def _precompressed(bundle: Bundle, rel: str) -> bytes | None:
    """The build's ``<file>.gz`` copy (``emit.precompressed``), sent as it is rather than compressed
    again."""
    found = bundle.open(rel + ".gz")
    return found[0] if found is not None and isinstance(found[0], bytes) else None


def _missing(bundle: Bundle, raw: str, r: Route, head: bool) -> Reply:
    """No file at the route: a folder of the site is a redirect to its page; one under the API
    names no file (and a redirect there would add a slash to a path that already ends with one,
    forever)."""
    if not r.content_type and r.not_found is None and bundle.is_dir(r.rel):  # type: ignore[arg-type]
        # (the query kept, as nginx keeps it: `/search?q=x` is `/search/?q=x`)
        path, _, query = raw.split("#", 1)[0].partition("?")
        location = path + "/" + ("?" + query if query else "")
        return _reply(301, "text/plain; charset=utf-8", b"", head, {"Location": location})
    if r.rel.endswith("/index.html") and r.not_found is None:  # type: ignore[union-attr]
        return _not_found(bundle, None, head)
    return _not_found(bundle, r.not_found, head)


def url_of(server) -> str:
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    return f"http://{shown}:{port}/"


# --- the front end: http.server, hardened --------------------------------------------------------
# (measured against waitress and nginx in benchmarks/bench_serve.py; docs/security/serving.md)

# Seconds a connection may stay silent (a kept-alive connection left idle, a client that stops
# reading): without a limit each such client holds a thread and a socket for ever (nginx: 60 s too).
IDLE_TIMEOUT = 60.0
# Seconds a client has, from the first byte of a request, to send its whole line and headers: a
# client dripping a byte just inside the idle timeout would otherwise hold its connection for ever
# (nginx's client_header_timeout).
HEADER_TIMEOUT = 10.0
# Connections handled at once (a thread each); more wait in the listen queue.  Each holds a slot
# at most IDLE_TIMEOUT idle and HEADER_TIMEOUT sending its head, so silent clients cannot keep the
# slots.  1024 for the queue, as nginx and waitress use: the default of 5 dropped SYNs under 50
# concurrent clients (a one-second retransmit each: p99 1.2-2.7 s).
MAX_CONNECTIONS = 256
LISTEN_BACKLOG = 1024


class _HeadDeadline(io.RawIOBase):
    """The connection's read side, raising TimeoutError once the request head's deadline passes
    (a socket timeout bounds each read; this bounds all the reads of one head)."""

    def __init__(self, sock: socket.socket, idle: float | None) -> None:
        self.sock, self.idle = sock, idle
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("request head took too long")
            self.sock.settimeout(left if self.idle is None else min(left, self.idle))
        return self.sock.recv_into(buffer)


class Handler(BaseHTTPRequestHandler):
    """Carries bytes between a socket and ``answer``; every rule of the server is there."""

    server_version = "skillc"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    bundle: Bundle
    quiet = False
    timeout = IDLE_TIMEOUT  # (StreamRequestHandler sets it on the socket; a timeout closes it)
    header_timeout = HEADER_TIMEOUT
    # Headers and body are two writes: with Nagle's algorithm the body waited for the client's
    # delayed ACK, about 40 ms for every request after the first on a kept-alive connection.
    disable_nagle_algorithm = True

    def version_string(self) -> str:
        return "skillc"

    def setup(self) -> None:
        super().setup()
        self._reader = _HeadDeadline(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        # The idle timeout for the request's first byte, then HEADER_TIMEOUT for all of its head.
        self._reader.deadline = None
        self.connection.settimeout(self.timeout)
        try:
            if not self.rfile.peek(1):
                self.close_connection = True
                return
        except (TimeoutError, ConnectionError):
            self.close_connection = True
            return
        self._reader.deadline = time.monotonic() + self.header_timeout
        super().handle_one_request()

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self._reader.deadline = None  # (the head is in: writing the answer has the idle timeout)
        self.connection.settimeout(self.timeout)
        return parsed

    def __getattr__(self, name: str):
        # Every method reaches ``answer`` (a 405 for all but GET and HEAD): http.server answers a
        # method without a do_ handler with its own 501 HTML page and no Allow header.
        if name.startswith("do_"):
            return self._respond
        raise AttributeError(name)

    def _respond(self) -> None:
        self._close_if_body()
        headers = self.headers
        reply = answer(self.bundle, Request(self.command, self.path, headers.get("Accept-Encoding"),
                                            headers.get("If-None-Match")))
        if reply.status == 405:
            self.close_connection = True  # (its body is never read: see _close_if_body)
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if isinstance(reply.body, FileBody):
                self.connection.sendfile(reply.body.file, 0, reply.body.size)
            elif reply.body:
                self.wfile.write(reply.body)
        except ConnectionError:  # (the client went away mid-answer, as a browser cancelling does: not an error)
            self.close_connection = True
        finally:
            if isinstance(reply.body, FileBody):
                reply.body.close()

    def _close_if_body(self) -> None:
        # A request's body is never read (no route takes one): the connection is closed after the
        # answer, so those bytes are never parsed as the next request on a kept-alive connection
        # (a GET with a body smuggled a second request past whatever proxy checked the first).
        length = (self.headers.get("Content-Length") or "0").strip()
        if length != "0" or self.headers.get("Transfer-Encoding") is not None:
            self.close_connection = True

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            super().log_message(format, *args)


class BundleServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG  # (npx skills fetches a registry's archives all at once)
    max_connections = MAX_CONNECTIONS

    def server_activate(self) -> None:
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._holding: set[int] = set()  # the requests holding a slot (by id)
        super().server_activate()

    def process_request(self, request, client_address) -> None:
        self._slots.acquire()  # (full: the accept loop waits; new clients queue in the backlog)
        self._holding.add(id(request))
        try:
            super().process_request(request, client_address)
        except BaseException:
            # The stop signal (a KeyboardInterrupt) can arrive while the handler's thread is
            # starting, after that thread already answered and gave the slot back: giving it back
            # twice raised ValueError, which the accept loop swallowed, and the signal was lost
            # (the server ran on: a test's stop waited 60 s).
            self._give_back(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._give_back(request)

    def _give_back(self, request) -> None:
        """Release the request's slot once, whichever of its two paths ends first."""
        try:
            self._holding.remove(id(request))  # (atomic: only one caller finds it)
        except KeyError:
            return
        self._slots.release()


def make_server(root: Path, host: str = "127.0.0.1", port: int = 8000, quiet: bool = False,
                idle_timeout: float | None = IDLE_TIMEOUT, header_timeout: float = HEADER_TIMEOUT,
                gzip_cache_bytes: int = GZIP_CACHE_BYTES) -> BundleServer:
    bundle = Bundle(root, gzip_cache_bytes)
    handler = type("BoundHandler", (Handler,), {"bundle": bundle, "quiet": quiet, "timeout": idle_timeout,
                                                "header_timeout": header_timeout})
    try:
        # The socket's family is the address's: ``--host ::1`` (or a name that resolves to IPv6
        # only) is an IPv6 socket, which the server's default AF_INET cannot bind.
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        server_class = BundleServer if family == socket.AF_INET else \
            type("BundleServer", (BundleServer,), {"address_family": family})
        return server_class((host, port), handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            hint = "choose another --port (0 picks a free one)"
        elif exc.errno == errno.EACCES:
            hint = "ports below 1024 need privileges: choose another --port (0 picks a free one)"
        else:  # (a name that does not resolve, an address this machine does not have)
            hint = "--host takes an address of this machine: 127.0.0.1 (the default), ::1, or 0.0.0.0 for every one"
        raise SkillcError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", hint=hint) from None
