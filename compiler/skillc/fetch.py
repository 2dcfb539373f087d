"""GET over HTTP(S) from servers skillc does not trust: the one way skillc fetches (the ``http``
source, ``Bundle`` over a URL, memory snapshots).

* The body is capped (``MAX_BYTES``) and read against an overall deadline (``DEADLINE``): a
  server that trickles a byte every few seconds never trips a per-read timeout, and one that
  streams forever would otherwise fill the memory.
* Redirects are followed only to ``http`` and ``https``; a redirect to another host keeps only the
  ``Accept`` and ``User-Agent`` headers (credentials stay with the host they were given for).
* A failure is one ``FetchError`` naming the URL (with any user and password in it hidden);
  ``304``, ``404`` and ``410`` are answers, not failures (ETag revalidation, a missing document).
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.parse
import urllib.request
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
    """``url`` with the credentials of its user part hidden (for messages)."""
    return re.sub(r"(://)[^/@\s]+@", r"\1***@", url)


def _web(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme.lower() in ("http", "https")


class _Redirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        if not _web(newurl):
            raise FetchError(f"{shown(req.full_url)} redirects to {urllib.parse.urlsplit(newurl).scheme or '?'}: "
                             "only http and https are followed", code)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            for name in list(new.headers):
                if name.lower() not in _KEPT_ACROSS_HOSTS:
                    del new.headers[name]
            new.unredirected_hdrs.clear()
        return new


_OPENER = urllib.request.build_opener(_Redirect)


def get(url: str, headers: dict[str, str] | None = None, *, max_bytes: int = MAX_BYTES,
        deadline: float = DEADLINE) -> Response:
    """GET ``url``: a 2xx response or one of ``ANSWERS``; anything else raises ``FetchError``."""
    if not _web(url):
        raise FetchError(f"{shown(url)}: only http:// and https:// URLs are fetched")
    req = urllib.request.Request(url, headers=headers or {})
    end = time.monotonic() + deadline
    try:
        with _OPENER.open(req, timeout=READ_TIMEOUT) as resp:
            chunks: list[bytes] = []
            total = 0
            read = getattr(resp, "read1", resp.read)  # (read1: what has come, so the deadline is checked)
            while chunk := read(1 << 16):
                total += len(chunk)
                if total > max_bytes:
                    raise FetchError(f"{shown(url)} answered more than {max_bytes:,} bytes")
                if time.monotonic() > end:
                    raise FetchError(f"{shown(url)} took more than {deadline:.0f} s to answer")
                chunks.append(chunk)
            return Response(resp.status, b"".join(chunks), {k.lower(): v for k, v in resp.headers.items()})
    except urllib.error.HTTPError as exc:
        if exc.code in ANSWERS:
            return Response(exc.code, b"", {k.lower(): v for k, v in (exc.headers or {}).items()})
        raise FetchError(f"HTTP {exc.code} from {shown(url)}", exc.code) from None
    except FetchError:
        raise
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise FetchError(f"cannot reach {shown(url)}: {reason}") from None


__all__ = ["ANSWERS", "DEADLINE", "FetchError", "MAX_BYTES", "READ_TIMEOUT", "Response", "get", "shown"]
