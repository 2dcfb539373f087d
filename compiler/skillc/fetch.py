"""GET over HTTP(S) from servers skillc does not trust: the one way skillc fetches (the ``http``
source, ``Bundle`` over a URL, memory snapshots).

* The body is capped (``MAX_BYTES``) and the whole exchange (connection, headers, body) has a
  deadline (``DEADLINE``), enforced by shutting the socket down when it passes: a server that
  trickles a byte every few seconds, in its headers or its body, never trips a per-read timeout,
  and one that streams forever would otherwise fill the memory.
* Redirects are followed only to ``http`` and ``https``; a redirect to another host (or port), or
  from ``https`` down to ``http``, keeps only the ``Accept`` and ``User-Agent`` headers (credentials
  stay with the origin they were given for, and never cross the network in clear text).
* A ``user:password@`` in the URL is sent as ``Authorization: Basic`` (an explicit
  ``Authorization`` header wins), as git and Meerkat's client do; urllib would look the whole
  ``user:password@host`` up as a host name.
* A body sent with ``Content-Encoding: gzip`` (a static host serving pre-compressed files whatever
  the request asked) is decompressed, the cap applying to the decompressed bytes too.
* A failure is one ``FetchError`` naming the URL (with any user and password in it hidden);
  ``304``, ``404`` and ``410`` are answers, not failures (ETag revalidation, a missing document).
"""

from __future__ import annotations

import base64
import http.client
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass, field

MAX_BYTES = 64 * 1024 * 1024
READ_TIMEOUT = 30.0  # seconds without a byte (also the connection's)
DEADLINE = 120.0  # seconds for a whole response
ANSWERS = (304, 404, 410)  # statuses returned to the caller rather than raised
_KEPT_ACROSS_HOSTS = ("accept", "user-agent", "accept-encoding")


class FetchError(Exception):
    """A request that failed: ``status`` is the HTTP status when the server answered one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


def shown(url: str) -> str:
    """``url`` as messages print it: its user part and its query hidden, its fragment dropped.  A
    presigned download link carries its credentials in the query (``?X-Amz-Credential=AKIA…&
    X-Amz-Signature=…``, Azure's ``sig=``), and messages reach CI logs."""
    if "://" not in url:  # (a local path, or git's user@host:path)
        return url
    url = url.split("#", 1)[0]
    url, question, query = url.partition("?")
    return re.sub(r"(://)[^/@\s]+@", r"\1***@", url) + ("?***" if question and query else "")


def _web(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme.lower() in ("http", "https")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def _keeps_credentials(old: str, new: str) -> bool:
    """Whether a redirect from ``old`` to ``new`` may carry credentials: the same origin, or the
    same host upgraded from http to https on the default ports (what requests allows too).  A
    comparison of the netloc alone would send a token from https://host to http://host in clear."""
    before, after = _origin(old), _origin(new)
    return before == after or (before == ("http", after[1], 80) and after == ("https", before[1], 443))


class _Redirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        if not _web(newurl):
            raise FetchError(f"{shown(req.full_url)} redirects to {urllib.parse.urlsplit(newurl).scheme or '?'}: "
                             "only http and https are followed", code)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and not _keeps_credentials(req.full_url, newurl):
            for name in list(new.headers):
                if name.lower() not in _KEPT_ACROSS_HOSTS:
                    del new.headers[name]
            new.unredirected_hdrs.clear()
        return new


class _Watchdog:
    """Shuts down every socket a request opened (redirects open more) once its deadline passes."""

    current = threading.local()  # the watchdog of the request this thread is making

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        _Watchdog.current.value = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _Watchdog.current.value = None

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            self._shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _watched(cls: type) -> type:
    """An ``http.client`` connection class whose socket the current watchdog may shut down."""

    def connect(self) -> None:
        cls.connect(self)
        watchdog = getattr(_Watchdog.current, "value", None)
        if watchdog is not None:
            watchdog.watch(self.sock)

    return type("Watched" + cls.__name__, (cls,), {"connect": connect})


_HTTP, _HTTPS = _watched(http.client.HTTPConnection), _watched(http.client.HTTPSConnection)


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):  # type: ignore[override]
        return self.do_open(_HTTP, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):  # type: ignore[override]
        return self.do_open(_HTTPS, req, context=self._context)


_OPENER = urllib.request.build_opener(_Redirect, _HTTPHandler, _HTTPSHandler)


def get(url: str, headers: dict[str, str] | None = None, *, max_bytes: int = MAX_BYTES,
        deadline: float = DEADLINE) -> Response:
    """GET ``url``: a 2xx response or one of ``ANSWERS``; anything else raises ``FetchError``.
    The whole exchange takes at most ``deadline`` seconds."""
    if not _web(url):
        raise FetchError(f"{shown(url)}: only http:// and https:// URLs are fetched")
    if deadline <= 0:
        raise FetchError(f"no time was left to fetch {shown(url)}")
    with _Watchdog(deadline) as watchdog:
        try:
            resp = _get(url, headers, max_bytes, deadline)
            if watchdog.fired:  # (a socket shut down can read as a short body, or the end of the headers)
                raise _late(url, deadline)
            return resp
        except FetchError:
            if watchdog.fired:
                raise _late(url, deadline) from None
            raise
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
            if watchdog.fired:
                raise _late(url, deadline) from None
            reason = getattr(exc, "reason", None) or exc
            raise FetchError(f"cannot reach {shown(url)}: {reason}") from None


def _late(url: str, deadline: float) -> FetchError:
    return FetchError(f"{shown(url)} took more than {deadline:.0f} s to answer")


def _get(url: str, headers: dict[str, str] | None, max_bytes: int, deadline: float) -> Response:
    url, headers = _userinfo_as_header(url, dict(headers or {}))
    req = urllib.request.Request(url, headers=headers)
    try:
        with _OPENER.open(req, timeout=min(READ_TIMEOUT, deadline)) as resp:
            chunks: list[bytes] = []
            total = 0
            read = getattr(resp, "read1", resp.read)
            while chunk := read(1 << 16):
                total += len(chunk)
                if total > max_bytes:
                    raise FetchError(f"{shown(url)} answered more than {max_bytes:,} bytes")
                chunks.append(chunk)
            got = {k.lower(): v for k, v in resp.headers.items()}
            body = b"".join(chunks)
            if got.get("content-encoding", "").strip().lower() in ("gzip", "x-gzip"):
                body = _gunzip(url, body, max_bytes)
                del got["content-encoding"]
                got.pop("content-length", None)
            return Response(resp.status, body, got)
    except urllib.error.HTTPError as exc:
        if exc.code in ANSWERS:
            return Response(exc.code, b"", {k.lower(): v for k, v in (exc.headers or {}).items()})
        raise FetchError(f"HTTP {exc.code} from {shown(url)}", exc.code) from None


def _userinfo_as_header(url: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
    """``url`` without its ``user:password@``, sent as Basic auth unless ``Authorization`` is given."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, headers
    userinfo, _, host = parts.netloc.rpartition("@")
    if not any(k.lower() == "authorization" for k in headers):
        user, _, password = userinfo.partition(":")
        pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), headers


def _gunzip(url: str, data: bytes, max_bytes: int) -> bytes:
    """A gzip body decompressed, refusing more than ``max_bytes`` out (a small bomb expands a lot)."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise FetchError(f"{shown(url)} answered a broken gzip body ({exc})") from None
    if len(out) > max_bytes:
        raise FetchError(f"{shown(url)} answered more than {max_bytes:,} bytes")
    return out


__all__ = ["ANSWERS", "DEADLINE", "FetchError", "MAX_BYTES", "READ_TIMEOUT", "Response", "get", "shown"]
