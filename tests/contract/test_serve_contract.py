"""`skillc serve` on loopback: the contract client, path escapes, encodings, clean shutdown."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from bundle_contract import (
    build_env,
    check_api_folders,
    check_contract,
    check_documents_are_json,
    check_untrusted_files,
    fetch,
    make_sample_repo,
    make_unusual_repo,
)
from conftest import run_skillc, skillc_command, stop_process, write_skill


def start_server(bundle: Path, cwd: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*skillc_command(), "serve", str(bundle), "--port", "0", "--quiet"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, f"http://127.0.0.1:{m.group(1)}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    make_sample_repo(tmp / "repo")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    proc, base = start_server(tmp / "out", tmp)
    yield tmp / "out", base
    stop_process(proc, signal.SIGINT)


def test_contract(served):
    bundle, base = served
    counts = check_contract(base, bundle)
    assert counts == {"skills": 5, "files": 7, "packages": 5}


def test_a_skills_own_files_are_never_active_content(served):
    bundle, base = served
    check_untrusted_files(base, bundle)


def test_skill_documents_are_json_however_the_path_is_spelt(served):
    # (/api//skills/ and /api/skills%2Findex.html sent the listing, descriptions and all, as text/html)
    bundle, base = served
    check_documents_are_json(base, bundle)
    assert fetch(base, "/api//skills/")[2] == (bundle / "api/skills.json").read_bytes()  # (slashes merged)


def test_an_api_folder_is_a_json_404_not_a_redirect_loop(served):
    # (/.well-known/agent-skills/scripts-demo/ was a 301 to …/scripts-demo// and so on, for ever)
    _, base = served
    check_api_folders(base)
    status, headers, _ = fetch(base, "/skills")  # a folder of the site is still a redirect to its page
    assert status == 301 and headers["location"] == "/skills/"


@pytest.mark.parametrize(("accept", "gzipped"), [
    ("*;q=1, gzip;q=0", False), ("gzip;Q=0", False), ("gzip;q=0.", False), ("gzip ; q=0", False),
    ("gzip;q=0, *", False), ("identity", False), ("br, gzip;q=0.5", True), ("*", True), ("x-gzip", True),
])
def test_accept_encoding_weights(served, accept, gzipped):
    # (gzip refused with a weight of 0 was sent anyway when `*` came first or the q was `Q=` or `0.`)
    _, base = served
    status, headers, body = fetch(base, "/api/skills", headers={"Accept-Encoding": accept})
    assert status == 200 and (headers.get("content-encoding") == "gzip") == gzipped, (accept, headers)


def _tiny_bundle(root: Path, text: bytes) -> None:
    import hashlib
    import json

    (root / "api/skills").mkdir(parents=True)
    (root / "api/skills/one").write_bytes(text)
    row = {"path": "api/skills/one", "sha256": hashlib.sha256(text).hexdigest(), "size": len(text)}
    (root / "api/manifest.json").write_text(json.dumps({"kind": "skillc-bundle", "files": [row]}))


def test_a_rebuild_swapped_in_mid_request_never_labels_bytes_with_the_other_generations_hash(tmp_path: Path):
    # The manifest is read, then a build swaps a new bundle in, then the file is read: its ETag
    # (and the gzip cache key) must be the new bytes' hash, not the old manifest's (same size).
    import gzip
    import hashlib

    from skillc.bundle import serve

    old, new = b'{"body":"' + b"A" * 400 + b'"}', b'{"body":"' + b"B" * 400 + b'"}'
    _tiny_bundle(tmp_path / "live", old)
    _tiny_bundle(tmp_path / "next", new)
    bundle = serve.Bundle(tmp_path / "live")
    assert bundle.open("api/skills/one") == (old, hashlib.sha256(old).hexdigest())
    refresh = bundle._refresh

    def refresh_then_swap():
        snapshot = refresh()
        os.rename(tmp_path / "live", tmp_path / "prev")
        os.rename(tmp_path / "next", tmp_path / "live")
        bundle._refresh = refresh  # (once)
        return snapshot

    bundle._refresh = refresh_then_swap
    data, digest = bundle.open("api/skills/one")
    assert data == new and digest == hashlib.sha256(new).hexdigest()
    assert gzip.decompress(bundle.gzipped(digest, data)) == new
    assert bundle.open("api/skills/one") == (new, hashlib.sha256(new).hexdigest())


def test_a_silent_client_is_dropped_and_never_holds_the_others(tmp_path: Path):
    import socket
    import threading
    import time

    from skillc.bundle import serve

    assert serve.Handler.timeout and serve.Handler.timeout <= 120  # (the default had none: held for ever)
    _tiny_bundle(tmp_path / "b", b"{}")
    server = serve.make_server(tmp_path / "b", port=0, quiet=True, idle_timeout=0.5)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        slow = socket.create_connection((host, port), timeout=10)
        slow.sendall(b"GET /api/skills/one HTTP/1.1\r\nHost: x\r\n")  # (headers never finished)
        assert fetch(f"http://{host}:{port}", "/api/skills/one")[0] == 200  # others are served meanwhile
        started = time.monotonic()
        assert slow.recv(100) == b""  # closed by the server
        assert time.monotonic() - started < 5
        slow.close()
    finally:
        server.shutdown()
        server.server_close()


def test_host_ipv6_loopback_and_hints(tmp_path: Path):
    import socket

    from skillc.bundle import serve
    from skillc.cli.serve import _loopback
    from skillc.errors import SkillcError

    _tiny_bundle(tmp_path / "b", b"{}")
    if socket.has_ipv6:
        try:
            socket.socket(socket.AF_INET6).close()
        except OSError:
            pass
        else:  # (--host ::1 failed: "Address family for hostname not supported")
            server = serve.make_server(tmp_path / "b", host="::1", port=0, quiet=True)
            try:
                assert serve.url_of(server).startswith("http://[::1]:")
            finally:
                server.server_close()
    with pytest.raises(SkillcError) as info:  # (TEST-NET-1: no machine has it; the hint was "another --port")
        serve.make_server(tmp_path / "b", host="192.0.2.1", port=0, quiet=True)
    assert "--host" in info.value.hint and "--port" not in info.value.hint
    assert _loopback("127.0.0.1") and _loopback("::1") and not _loopback("0.0.0.0") and not _loopback("::")


def test_id_encodings_reach_the_same_document(served):
    bundle, base = served
    want = fetch(base, "/api/skills/extraction%2Femail")[2]
    assert fetch(base, "/api/skills/extraction%2femail")[2] == want
    assert fetch(base, "/api/skills/extraction/email")[2] == want
    assert fetch(base, "/api/skills/extraction%2Femail.json")[2] == want


def test_unusual_ids_and_their_names_sent_unencoded(tmp_path: Path):
    # http.server reads the request line as ISO-8859-1: a path sent as raw UTF-8 (curl, nginx and
    # Caddy take it) named `cafÃ©`, so every page, file and zip of a non-ASCII skill was a 404.
    import socket
    from urllib.parse import urlsplit

    make_unusual_repo(tmp_path / "repo")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    proc, base = start_server(tmp_path / "out", tmp_path)
    u = urlsplit(base)

    def status_and_body(target: str) -> tuple[bytes, bytes]:
        with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
            sock.sendall(b"GET " + target.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            chunks = []
            while data := sock.recv(65536):
                chunks.append(data)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        return head.split(b"\r\n", 1)[0], body

    try:
        assert check_contract(base, tmp_path / "out") == {"skills": 8, "files": 11, "packages": 8}
        skill_md = (tmp_path / "out/api/files/caf\u00e9/SKILL.md").read_bytes()
        for target in ("/api/files/caf\u00e9/SKILL.md", "/.well-known/agent-skills/caf\u00e9/SKILL.md"):
            line, body = status_and_body(target)
            assert b" 200 " in line and body == skill_md, (target, line)
        line, body = status_and_body("/api/skills/rocket-\U0001f680")
        assert b" 200 " in line and json.loads(body)["id"] == "rocket-\U0001f680"
        assert b" 200 " in status_and_body("/api/archives/caf\u00e9.zip")[0]
        line, body = status_and_body("/api/skills/caf\u00e9-nope")
        assert b" 404 " in line and json.loads(body)["message"] == "no skill 'caf\u00e9-nope'"
    finally:
        stop_process(proc, signal.SIGINT)


@pytest.mark.parametrize("path", [
    "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/api/files/..%2f..%2f..%2fetc/passwd",
    "/api/skills/..", "/api/skills/%2e%2e", "/api/skills/..%2F..%2Fapi%2Fmanifest.json",
    "/.well-known/agent-skills/../../../etc/passwd", "/.well-known/agent-skills/%2e%2e/%2e%2e/etc/passwd",
    "/api/files/scripts-demo/%00", "/api/files/scripts-demo\\..\\..\\x",
])
def test_no_path_escapes(served, path):
    bundle, base = served
    status, headers, body = fetch(base, path)
    assert status == 404, (path, status)
    assert b"root:" not in body


def test_symlinks_are_not_followed(served):
    bundle, base = served
    link = bundle / "leak"
    os.symlink("/etc/passwd", link)
    try:
        assert fetch(base, "/leak")[0] == 404
    finally:
        link.unlink()


def test_unknown_method_and_gzip_refused_with_q0(served):
    bundle, base = served
    assert fetch(base, "/api/skills", method="POST")[0] == 405
    status, headers, _ = fetch(base, "/api/skills", headers={"Accept-Encoding": "gzip;q=0"})
    assert status == 200 and "content-encoding" not in headers


def test_a_refused_body_is_never_read_as_the_next_request_and_bad_targets_get_an_answer(served):
    import socket
    from urllib.parse import urlsplit

    _, base = served
    u = urlsplit(base)

    def exchange(raw: bytes) -> bytes:
        with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
            sock.sendall(raw)
            chunks = []
            while data := sock.recv(65536):
                chunks.append(data)
            return b"".join(chunks)

    smuggled = b"GET /api/skill-collections HTTP/1.1\r\n\r\n"
    answer = exchange(b"POST /api/skills HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(smuggled), smuggled))
    assert answer.startswith(b"HTTP/1.0 405") or answer.startswith(b"HTTP/1.1 405")
    assert answer.count(b"HTTP/1.") == 1 and b"collections" not in answer
    answer = exchange(b"GET http://[::1/api/skills HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert b" 404 " in answer.split(b"\r\n", 1)[0]


def test_rebuild_is_picked_up_without_restart(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    env = build_env(tmp_path)
    assert run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    proc, base = start_server(tmp_path / "out", tmp_path)
    try:
        first = fetch(base, "/api/skills")
        write_skill(tmp_path / "repo", "two")
        assert run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=env).returncode == 0
        second = fetch(base, "/api/skills")
        assert b'"two"' in second[2] and second[1]["etag"] != first[1]["etag"]
    finally:
        assert stop_process(proc, signal.SIGINT) == 0
    assert "Stopped." in proc.stderr.read()


def test_a_linked_bundle_folder_is_served_and_a_manifest_cannot_write_headers(tmp_path: Path):
    import hashlib
    import json

    write_skill(tmp_path / "repo", "one")
    (tmp_path / "real").mkdir()
    (tmp_path / "deploy").symlink_to("real")
    assert run_skillc("build", "repo", "--out", "deploy", cwd=tmp_path, env=build_env(tmp_path)).returncode == 0
    manifest_path = tmp_path / "real/api/manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for row in manifest["files"]:
        if row["path"] == "api/skills.json":
            row["sha256"] = "abc\r\nSet-Cookie: injected=1"
    manifest_path.write_text(json.dumps(manifest))
    proc, base = start_server(tmp_path / "deploy", tmp_path)
    try:
        status, headers, body = fetch(base, "/api/skills")
        assert status == 200 and b'"one"' in body
        assert "set-cookie" not in headers and headers["etag"] == f'"{hashlib.sha256(body).hexdigest()}"'
    finally:
        stop_process(proc, signal.SIGINT)


def test_serve_refuses_a_folder_that_is_not_a_bundle(tmp_path: Path):
    r = run_skillc("serve", str(tmp_path), "--port", "0", cwd=tmp_path)
    assert r.returncode == 2 and "holds no skillc bundle" in r.stderr and "Traceback" not in r.stderr
    assert "skillc build --out" in r.stderr  # (empty: build one there)
    (tmp_path / "notes.txt").write_text("x")
    r = run_skillc("serve", str(tmp_path), "--port", "0", cwd=tmp_path)
    assert "skillc build --out" not in r.stderr and "the folder `skillc build` wrote" in r.stderr
    r = run_skillc("serve", str(tmp_path / "missing"), "--port", "0", cwd=tmp_path)
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_embedded_build_then_serve(tmp_path: Path):
    r = run_skillc("build", cwd=tmp_path, env=build_env(tmp_path, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    proc, base = start_server(Path("dist"), tmp_path)
    try:
        check_contract(base, tmp_path / "dist")
    finally:
        stop_process(proc, signal.SIGINT)


def _exchange(base: str, raw: bytes) -> bytes:
    """Send raw bytes on one connection and read until the server closes it (or goes quiet)."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(base)
    with socket.create_connection((u.hostname, u.port), timeout=5) as sock:
        sock.sendall(raw)
        chunks = []
        try:
            while data := sock.recv(65536):
                chunks.append(data)
        except TimeoutError:
            pass
        return b"".join(chunks)


def test_a_kept_alive_connection_answers_at_once(served):
    # Headers and body were two small writes: with Nagle's algorithm the body waited for the
    # client's delayed ACK, about 40 ms for every request after the first on a kept-alive
    # connection (what reqwest's pool, and so Meerkat, reuses): 24 requests a second.
    import http.client
    import time
    from urllib.parse import urlsplit

    _, base = served
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("GET", "/api/skills")
        conn.getresponse().read()
        started = time.monotonic()
        for _ in range(50):
            conn.request("GET", "/api/skills")
            resp = conn.getresponse()
            assert resp.status == 200 and resp.read()
        # (about 2.2 s with the stall, a few tens of ms without: a wide margin on a loaded machine,
        # not a speed target)
        assert time.monotonic() - started < 1.0
    finally:
        conn.close()


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_get_requests_body_is_never_read_as_the_next_request(served, framing):
    # http.server never reads a GET's body: on a kept-alive connection its bytes were parsed as the
    # next request (answered: a request smuggled past whatever proxy checked the first), or as a bad
    # request line (an HTML error page with no status line after the answer).
    _, base = served
    smuggled = b"GET /api/skill-collections HTTP/1.1\r\nHost: x\r\n\r\n"
    if framing == "length":
        head, body = b"Content-Length: %d\r\n" % len(smuggled), smuggled
    else:
        head, body = b"Transfer-Encoding: chunked\r\n", b"%x\r\n%s\r\n0\r\n\r\n" % (len(smuggled), smuggled)
    answer = _exchange(base, b"GET /api/skills/no-such-skill HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n" + body)
    assert answer.startswith(b"HTTP/1.1 404") and answer.count(b"HTTP/1.") == 1, answer
    assert b"collections" not in answer and b"<html" not in answer.lower()


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "MKCOL", "FOO", "get"])
def test_every_other_method_is_a_405_with_allow(served, method):
    # (only the methods with a do_ handler were 405s: any other was http.server's 501 HTML page,
    # with no Allow header)
    _, base = served
    status, headers, body = fetch(base, "/api/skills", method=method)
    assert status == 405 and headers.get("allow") == "GET, HEAD", (method, status, headers)
    assert headers["content-type"].startswith("application/json") and json.loads(body)["error"] == "method_not_allowed"


def test_a_folders_redirect_keeps_the_query(served):
    # (`/search?q=lint` was sent to `/search/`, the query dropped; nginx keeps it)
    _, base = served
    status, headers, _ = fetch(base, "/skills?q=lint&x=%2F")
    assert status == 301 and headers["location"] == "/skills/?q=lint&x=%2F", headers
    status, headers, _ = fetch(base, "/skills")
    assert status == 301 and headers["location"] == "/skills/"


def test_the_builds_gzip_copies_are_sent_as_they_are(served):
    from bundle_contract import check_precompressed

    bundle, base = served
    check_precompressed(base, bundle)
