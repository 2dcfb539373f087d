"""``skillc.Bundle`` over HTTP: against `skillc serve` and a real nginx with the generated routing config.

Only the wire routes and static files below /api are used; answers are cached (index files for the
life of the object, wire routes with a TTL and ETags) and must equal what the directory gives.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import run_skillc, skillc_command
from skillc import Bundle
from skillc.index import BundleError
from test_bundle_api_local import make_repo


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("httpbundle")
    make_repo(root)
    proc = run_skillc("build", "repo", "--no-site", "--out", "dist", cwd=root, env={"SOURCE_DATE_EPOCH": "0"})
    assert proc.returncode == 0, proc.stderr
    return root / "dist"


@pytest.fixture(scope="module")
def served(dist):
    proc = subprocess.Popen([*skillc_command(), "serve", str(dist), "--port", "0", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"(http://[^ ]+?)/? ", line)
        assert m, line + proc.stderr.read()
        yield m.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nginx(dist, tmp_path_factory):
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if exe is None:
        pytest.skip("nginx is not installed (tests/setup_system.sh installs it)")
    prefix = tmp_path_factory.mktemp("nginx")
    port = _free_port()
    server = (dist / "_routing" / "nginx.conf").read_text()
    server = re.sub(r"listen\s+80;", f"listen 127.0.0.1:{port};", server)
    server = re.sub(r"root\s+/srv/skillc;", f"root {dist};", server)
    mime = "/etc/nginx/mime.types"
    conf = prefix / "nginx.conf"
    temps = "".join(f"{k}_temp_path {prefix}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers would run as nobody, unable to read tmp
    conf.write_text(f"{user}worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\ndaemon off;\n"
                    f"events {{}}\nhttp {{\n{'include ' + mime + ';' if os.path.exists(mime) else ''}\n"
                    f"access_log off;\n{temps}{server}\n}}\n")
    proc = subprocess.Popen([exe, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail("nginx did not start: " + proc.stderr.read().decode())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _same_as_directory(remote: Bundle, local: Bundle) -> None:
    assert remote.skills() == local.skills()
    assert remote.collections() == local.collections()
    assert remote.get("extraction/email") == local.get("extraction/email")
    for q in ("search rust codebase", "records chart", "mail"):
        assert remote.search(q, 5) == local.search(q, 5)
    assert remote.adk_select("search rust codebase") == local.adk_select("search rust codebase")
    assert remote.render_inventory() == local.render_inventory()
    assert remote.render_injection(["extraction/email", "code-search"]) == local.render_injection(
        ["extraction/email", "code-search"])
    assert remote.load_skill("extraction/medical/diagnosis") == local.load_skill("extraction/medical/diagnosis")
    assert remote.browse("extraction") == local.browse("extraction")


@pytest.mark.parametrize("suffix", ["", "/", "/api", "/api/"])
def test_over_skillc_serve(served, dist, suffix):
    remote = Bundle.open(served + suffix)
    assert remote.location == served + "/api"
    _same_as_directory(remote, Bundle.open(dist))


def test_over_nginx(nginx, dist):
    _same_as_directory(Bundle.open(nginx + "/api"), Bundle.open(dist))


def test_http_answers_are_cached(served):
    b = Bundle.open(served)
    b.search("rust")
    b.get("code-search")
    before = b._t.requests
    for _ in range(3):
        b.search("rust codebase")
        b.search("release")
        b.get("code-search")
        b.skills()
    assert b._t.requests == before
    b._t.ttl = 0  # expired: revalidated with If-None-Match (304 keeps the cached bytes)
    assert b.get("code-search").id == "code-search"
    assert b._t.requests > before


def test_cli_over_http(served):
    proc = run_skillc("search", served + "/api", "search rust codebase", "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"code-search"' in proc.stdout
    proc = run_skillc("render", served, "--inject", "nope")
    assert proc.returncode == 2 and "unknown skill ID 'nope'" in proc.stderr


class _HtmlEverywhere(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!DOCTYPE html><html><body>app</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_url_answering_html_is_a_clear_error():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HtmlEverywhere)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(BundleError):
            Bundle.open(url)
        proc = run_skillc("search", url + "/api", "rust")
        assert proc.returncode == 1 and "HTML" in proc.stderr and "Traceback" not in proc.stderr
    finally:
        server.shutdown()
        server.server_close()


def test_unreachable_url_is_a_clear_error():
    port = _free_port()
    proc = run_skillc("search", f"http://127.0.0.1:{port}/api", "rust")
    assert proc.returncode == 1 and "cannot reach http://127.0.0.1" in proc.stderr and "Connection refused" in proc.stderr


class _MeerkatOnlySkills(http.server.BaseHTTPRequestHandler):
    """A Meerkat registry that answers /x/skills and nothing else (no /skill-collections, no manifest)."""

    SKILLS = (b'{"skills":[{"id":"extraction/email","name":"email","description":"Mail & more"},'
              b'{"id":"extraction/pdf","name":"pdf","description":"PDF"},{"id":"solo","name":"solo","description":"S"}]}')

    def do_GET(self):
        ok = self.path == "/x/skills"
        body = self.SKILLS if ok else b'{"error":"not found"}'
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_registry_without_skill_collections_derives_them_as_meerkat_does():
    """frameworks.md §1.5: a non-2xx /skill-collections falls back to derive_collections (top-level
    segments, recursive counts, "N skills"); the flat inventory needs none."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _MeerkatOnlySkills)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/x"
        proc = run_skillc("render", url, "--inventory")
        assert proc.returncode == 0, proc.stderr
        assert '<skill id="extraction/email">' in proc.stdout and "Mail &amp; more" in proc.stdout
        b = Bundle.open(url)
        assert [(c.path, c.description, c.count) for c in b.collections()] == [("extraction", "2 skills", 2)]
        assert "extraction" in b.render_inventory(threshold=1)
    finally:
        server.shutdown()
        server.server_close()
