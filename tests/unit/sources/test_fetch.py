"""skillc.fetch, the one way skillc GETs from servers it does not trust, against hostile servers on
loopback: endless and trickling bodies, redirects to other schemes and hosts."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from skillc.fetch import FetchError, get


@contextmanager
def serve(handle: Callable[[http.server.BaseHTTPRequestHandler], None], host: str = "127.0.0.1") -> Iterator[str]:
    seen: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(dict(self.headers))
            try:
                handle(self)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://{host}:{server.server_address[1]}"
        serve.seen = seen  # type: ignore[attr-defined]
        yield url
    finally:
        server.shutdown()
        server.server_close()


def endless(h: http.server.BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b" " * 65536
    while True:
        h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def trickle(h: http.server.BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Length", "1000000")
    h.end_headers()
    for _ in range(1000):
        h.wfile.write(b"x")
        h.wfile.flush()
        time.sleep(0.1)


def test_a_body_over_the_cap_is_refused():
    with serve(endless) as url:
        with pytest.raises(FetchError, match="answered more than 1,048,576 bytes"):
            get(url + "/api/skills", max_bytes=1 << 20)


def test_a_trickling_server_meets_the_deadline():
    with serve(trickle) as url:
        t0 = time.monotonic()
        with pytest.raises(FetchError, match="took more than 1 s"):
            get(url + "/api/skills", deadline=1.0)
        assert time.monotonic() - t0 < 5


def test_redirects_only_to_http_and_never_with_credentials_to_another_host():
    def to(location: str) -> Callable:
        def handle(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(302)
            h.send_header("Location", location)
            h.send_header("Content-Length", "0")
            h.end_headers()
        return handle

    def ok(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "2")
        h.end_headers()
        h.wfile.write(b"{}")

    with serve(to("ftp://user:pw@127.0.0.1:21/x.json")) as url:
        with pytest.raises(FetchError, match="redirects to ftp: only http and https are followed"):
            get(url + "/api/skills")
    with serve(ok, host="127.0.0.2") as other:
        seen_there = serve.seen  # type: ignore[attr-defined]
        with serve(to(other + "/api/skills")) as url:
            resp = get(url + "/api/skills", {"Authorization": "Bearer SECRET", "User-Agent": "t"})
        assert resp.status == 200 and resp.body == b"{}"
        assert [h.get("Authorization") for h in seen_there] == [None]
        assert seen_there[0].get("User-Agent") == "t"
    with pytest.raises(FetchError, match="only http:// and https://"):
        get("file:///etc/passwd")


@pytest.mark.parametrize("old, new, kept", [
    ("https://127.0.0.1/api/skills", "http://127.0.0.1/api/skills/", False),  # down to clear text
    ("https://127.0.0.1:8443/api", "http://127.0.0.1:8443/api/", False),
    ("http://127.0.0.1/api", "https://127.0.0.1/api/", True),  # an upgrade on the default ports
    ("http://127.0.0.1:8000/api", "https://127.0.0.1:8000/api/", False),
    ("https://Host.example/api", "https://host.example:443/api/", True),  # the same origin
    ("https://host.example/api", "https://host.example:8443/api/", False),
])
def test_credentials_follow_a_redirect_only_within_the_origin(old: str, new: str, kept: bool):
    """Comparing the netloc alone sent a token from https://host to http://host in clear text."""
    import urllib.request

    from skillc.fetch import _Redirect

    req = urllib.request.Request(old, headers={"Authorization": "Bearer SECRET", "X-Api-Key": "k", "Accept": "a"})
    moved = _Redirect().redirect_request(req, None, 302, "Found", {}, new)
    assert ("Authorization" in moved.headers and "X-api-key" in moved.headers) is kept
    assert moved.headers.get("Accept") == "a"


def test_a_user_and_password_in_the_url_are_sent_as_basic_auth_not_looked_up_as_a_host():
    def ok(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "2")
        h.end_headers()
        h.wfile.write(b"{}")

    with serve(ok) as url:
        seen = serve.seen  # type: ignore[attr-defined]
        resp = get(url.replace("://", "://team:s%2Fcret@") + "/api/skills")
        assert resp.body == b"{}" and seen[-1]["Authorization"] == "Basic dGVhbTpzL2NyZXQ="  # team:s/cret
        get(url.replace("://", "://team:s3cret@") + "/api/skills", {"Authorization": "Bearer T"})
        assert seen[-1]["Authorization"] == "Bearer T"  # an explicit header wins


def test_a_gzip_body_is_decompressed_within_the_cap():
    """A static host may send Content-Encoding: gzip unasked (pre-compressed files)."""
    import gzip

    def gzipped(payload: bytes) -> Callable:
        def handle(h: http.server.BaseHTTPRequestHandler) -> None:
            body = gzip.compress(payload)
            h.send_response(200)
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
        return handle

    with serve(gzipped(b'{"skills": []}')) as url:
        resp = get(url + "/api/skills")
        assert resp.body == b'{"skills": []}' and "content-encoding" not in resp.headers
    with serve(gzipped(b" " * (4 << 20))) as url:  # 4 KiB on the wire, 4 MiB decompressed
        with pytest.raises(FetchError, match="answered more than 1,048,576 bytes"):
            get(url + "/api/skills", max_bytes=1 << 20)


@pytest.mark.parametrize("listing, words", [
    ('{"skills":' + "[" * 100_000 + "]" * 100_000 + "}", "answered JSON nested too deep"),
    ('{"skills":[{"id":"ok","name":"ok","description":"\\ud800"}]}', "not Unicode (a lone surrogate escape)"),
    ('{"skills":[{"id":"' + "a" * 300 + '","name":"n","description":"d"}]}', "longer than 255 bytes"),
    ('{"skills":[{"id":"e\\u001b]0;pwned\\u0007","name":"n","description":"d"}]}', "\\x1b]0;pwned\\x07"),
], ids=["deep-nesting", "lone-surrogate", "long-id", "terminal-escape"])  # (pytest puts a test's ID in the
# environment of the commands it runs: a 200 KB ID is more than one variable may hold, E2BIG)
def test_a_hostile_registry_gets_a_diagnostic_not_a_crash(tmp_path, listing: str, words: str):
    from conftest import run_skillc

    def handle(h: http.server.BaseHTTPRequestHandler) -> None:
        body = listing.encode() if h.path == "/api/skills" else b'{"error": "not found"}'
        h.send_response(200 if h.path == "/api/skills" else 404)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    with serve(handle) as url:
        (tmp_path / "skills.toml").write_text(f'[[repositories]]\nname = "h"\ntype = "http"\nurl = "{url}/api"\n')
        r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path,
                       env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)})
    assert r.returncode in (0, 1) and words in r.stderr, r.stderr
    assert "internal error" not in r.stderr and "\x1b" not in r.stderr + r.stdout
