"""Remote repositories against slow and leaky cases, with real servers on loopback: a server
dripping every document (the whole fetch of a repository is bounded, not only each request), one
dripping its headers, and presigned URLs whose query must never reach a message."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from urllib.parse import quote

import pytest
from test_fetch import serve

from conftest import run_skillc
from skillc.fetch import FetchError, get, shown


def _drip(h: http.server.BaseHTTPRequestHandler, body: bytes, every: float) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    for i in range(len(body)):
        h.wfile.write(body[i:i + 1])
        h.wfile.flush()
        time.sleep(every)


def wire_server(h: http.server.BaseHTTPRequestHandler) -> None:
    """A Meerkat Skills API listing 20 skills at once, then dripping each document: 0.25 s a byte
    (never a silent read), about 15 s a document, five minutes for the repository."""
    ids = [f"s{i:02d}" for i in range(20)]
    if h.path.endswith("/skills"):
        body = json.dumps({"skills": [{"id": i, "name": i, "description": "d"} for i in ids]}).encode()
        _drip(h, body, 0)
    elif h.path.endswith(tuple("/skills/" + quote(i, safe="") for i in ids)):
        skill_id = h.path.rsplit("/", 1)[1]
        _drip(h, json.dumps({"id": skill_id, "name": skill_id, "description": "d", "body": "b" * 40}).encode(), 0.25)
    else:
        h.send_response(404)
        h.send_header("Content-Length", "0")
        h.end_headers()


def test_a_repository_dripping_every_document_is_bounded_as_a_whole(tmp_path):
    with serve(wire_server) as url:
        (tmp_path / "skills.toml").write_text(
            f'[[repositories]]\nname = "slow"\ntype = "http"\nurl = "{url}/api"\ntimeout_seconds = 3\n')
        try:  # (the guard only stops a hung test: before, each document had its own 120 s)
            r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path,
                           env={"SKILLC_CACHE_DIR": str(tmp_path / "c")}, timeout=90)
        except subprocess.TimeoutExpired:
            pytest.fail("the build was still fetching after 90 s")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "repository 'slow'" in r.stderr and "timeout_seconds = 3" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_timeout_seconds_is_checked_as_config(tmp_path):
    (tmp_path / "skills.toml").write_text(
        '[[repositories]]\nname = "r"\ntype = "http"\nurl = "http://127.0.0.1:9/api"\ntimeout_seconds = 0\n')
    r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "skills.toml:5" in r.stderr and "timeout_seconds" in r.stderr, r.stderr


def drip_headers(h: http.server.BaseHTTPRequestHandler) -> None:
    h.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for _ in range(400):  # a header line a byte every 0.1 s: never a silent read
        h.wfile.write(b"X")
        h.wfile.flush()
        time.sleep(0.1)


def test_a_server_dripping_its_headers_meets_the_deadline():
    # The deadline was checked between body reads only: headers dripped a byte at a time (each
    # inside the 30 s read timeout) held the request for as long as the server liked.
    with serve(drip_headers) as url:
        done: list[BaseException] = []

        def call() -> None:
            try:
                get(url + "/api/skills", deadline=1.0)
            except BaseException as exc:  # noqa: B036 - handed to the test thread
                done.append(exc)

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        thread.join(30)
        assert not thread.is_alive(), "still reading headers after 30 s"
        assert isinstance(done[0], FetchError) and "took more than 1 s" in str(done[0])


SIGNED = ("https://bucket.s3.amazonaws.com/skills.zip?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261129"
          "&X-Amz-Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef#frag")


def test_a_url_is_shown_without_its_query_or_credentials():
    assert shown(SIGNED) == "https://bucket.s3.amazonaws.com/skills.zip?***"
    assert shown("https://user:pw@host/x?sig=abc") == "https://***@host/x?***"
    assert shown("https://host/x") == "https://host/x" and shown("/local/a?b.zip") == "/local/a?b.zip"


def not_found(h: http.server.BaseHTTPRequestHandler) -> None:
    h.send_response(403)
    h.send_header("Content-Length", "0")
    h.end_headers()


def test_a_failed_download_prints_the_url_without_its_query(tmp_path):
    # (a presigned zip URL's X-Amz-Credential and X-Amz-Signature reached the CI log)
    with serve(not_found) as url:
        signed = url + "/skills.zip?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE&X-Amz-Signature=deadbeefcafe"
        (tmp_path / "skills.toml").write_text(f'[[repositories]]\nname = "z"\ntype = "zip"\nurl = "{signed}"\n')
        r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "c")})
        http_toml = f'[[repositories]]\nname = "h"\ntype = "http"\nurl = "{url}/api?sig=SECRETSIG123"\n'
        (tmp_path / "skills.toml").write_text(http_toml)
        r2 = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode != 0 and "HTTP 403" in r.stderr and "/skills.zip?***" in r.stderr, r.stderr
    assert r2.returncode != 0
    for out in (r.stdout + r.stderr, r2.stdout + r2.stderr):
        assert "AKIA" not in out and "deadbeef" not in out and "X-Amz" not in out and "SECRETSIG" not in out, out
