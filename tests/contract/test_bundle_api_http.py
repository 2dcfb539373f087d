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
from urllib.parse import quote

import pytest

from conftest import run_skillc, skillc_command, stop_process, write_skill
from skillc import Bundle
from skillc.index import BundleError
from unit.bundle.test_bundle_api_local import make_repo


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
        stop_process(proc)


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
        stop_process(proc)


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


@pytest.fixture
def redeployable(tmp_path):
    """A bundle built into a folder `skillc serve` serves, and a `redeploy()` that builds it again
    with one more skill (in a new collection)."""
    repo = make_repo(tmp_path)
    site = tmp_path / "site"

    def build() -> None:
        proc = run_skillc("build", str(repo), "--no-site", "--out", str(site), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr

    def redeploy() -> None:
        write_skill(repo, "linting/lint-python", description="Lint Python sources. Use when linting.")
        build()

    build()
    proc = subprocess.Popen([*skillc_command(), "serve", str(site), "--port", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"(http://[^ ]+?)/? ", proc.stdout.readline())
        assert m, proc.stderr.read()
        yield m.group(1) + "/api", site, redeploy
    finally:
        stop_process(proc)


def _sees_the_new_deployment(b: Bundle) -> None:
    assert "linting/lint-python" in [s.id for s in b.skills()]
    hits = b.search("lint")  # index files read after the manifest: no false "corrupted"
    assert hits[0]["id"] == "linting/lint-python"
    assert hits[0]["description"] == "Lint Python sources. Use when linting."  # one deployment's answer
    assert "linting" in [c.path for c in b.collections()]
    assert [s["id"] for s in b.browse("linting")["skills"]] == ["linting/lint-python"]
    assert b.adk_select("lint python")[0].path == "linting/lint-python"


def test_a_redeploy_is_seen_whole_after_ttl(redeployable):
    url, _site, redeploy = redeployable
    b = Bundle.open(url, ttl=0)
    b.skills()
    b.collections()
    b.search("rust")
    cached = b._t._cache["skill-collections"][2]
    b.collections()  # revalidated: 304 keeps the cached bytes
    assert b._t._cache["skill-collections"][2] is cached
    redeploy()
    _sees_the_new_deployment(b)


def test_index_files_of_a_redeploy_restart_the_answer(redeployable):
    """Within the TTL the manifest is not asked again, but a shard fetched lazily from the new
    deployment differs from the old header: the manifest is re-read and the answer starts over."""
    url, _site, redeploy = redeployable
    b = Bundle.open(url, ttl=300)
    b.index()  # the header and the dictionary, not the postings
    b.collections()
    redeploy()
    assert "linting/lint-python" in [h["id"] for h in b.search("rust lint")]  # "rust" needs a shard
    _sees_the_new_deployment(b)


def test_a_rebuilt_local_bundle_is_read_again(redeployable):
    _url, site, redeploy = redeployable
    b = Bundle.open(site)
    b.skills()
    redeploy()
    assert b.search("lint")[0]["description"] == "Lint Python sources. Use when linting."


def test_a_file_that_still_differs_is_corrupted(redeployable):
    url, site, _redeploy = redeployable
    b = Bundle.open(url, ttl=0)
    b.skills()
    header = site / "api/index/search.json"
    header.write_bytes(header.read_bytes().replace(b'"avgdl"', b' "avgdl"'))
    with pytest.raises(BundleError, match="SHA-256 differs from the manifest"):
        b.search("rust")


class _MeerkatWithoutCollections(http.server.BaseHTTPRequestHandler):
    """A Meerkat HTTP skill server of static JSON below /x: `/x/skills`, `/x/skills/{id}`, and no
    `/skill-collections` (it answers `collections_status`)."""

    routes: dict[str, bytes] = {}
    collections_status = 404

    def do_GET(self):
        body = self.routes.get(self.path)
        status = 200 if body is not None else self.collections_status if self.path == "/x/skill-collections" else 404
        body = body if body is not None else b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status", [404, 500])
def test_meerkat_server_without_skill_collections(status):
    """frameworks.md §1.5: `/skill-collections` non-2xx falls back to collections derived from the
    skills list; the flat inventory needs none."""
    import json

    ids = ["extraction/email", "extraction/medical/diagnosis", "code-search"]
    skills = [{"id": i, "name": i.rsplit("/", 1)[-1], "description": f"Does {i}.", "scope": "project",
               "metadata": {}} for i in ids]
    routes = {"/x/skills": json.dumps({"skills": skills}).encode()}
    routes.update({"/x/skills/" + quote(s["id"], safe=""): json.dumps({**s, "body": "# Body\n"}).encode()
                   for s in skills})
    handler = type("Handler", (_MeerkatWithoutCollections,), {"routes": routes, "collections_status": status})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/x"
        proc = run_skillc("render", url, "--inventory")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("<available_skills>\n") and 'id="extraction/email"' in proc.stdout
        b = Bundle.open(url)
        # Meerkat's derive_collections: top-level segments, recursive counts, "N skills"
        assert [(c.path, c.description, c.count) for c in b.collections()] == [("extraction", "2 skills", 2)]
        assert b.render_inventory(threshold=1).startswith('<available_skills mode="collections">')
        assert [s["id"] for s in b.browse("extraction")["skills"]] == ["extraction/email"]
    finally:
        server.shutdown()
        server.server_close()


def test_threads_share_one_bundle(served, dist):
    """Each thread's answer pins its own manifest and wire routes (ttl=0: every answer revalidates)."""
    from concurrent.futures import ThreadPoolExecutor

    b = Bundle.open(served, ttl=0)
    want = Bundle.open(dist)
    expected = (want.search("rust codebase"), want.get("code-search"), want.collections())
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: (b.search("rust codebase"), b.get("code-search"), b.collections()), range(40)))
    assert all(g == expected for g in got)


def test_ids_with_a_space_or_accents_read_their_files(tmp_path):
    """A skill's published file (Plan Cascade's block is cut from it; to-prompt's location) was
    requested with the raw ID: a space raised http.client's InvalidURL, a non-ASCII letter failed
    to encode and the block silently fell back to the wire body (another text than the folder's)."""
    write_skill(tmp_path / "repo", "a b/c-d", body="\n\n# Title\n\nDo the thing.\n")
    write_skill(tmp_path / "repo", "café/naive", body="\n\n# Title\n\nDo the thing.\n")
    proc = run_skillc("build", "repo", "--no-site", "--out", "dist", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    server = subprocess.Popen([*skillc_command(), "serve", str(tmp_path / "dist"), "--port", "0", "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"(http://[^ ]+?)/? ", server.stdout.readline())
        assert m
        remote, local = Bundle.open(m.group(1)), Bundle.open(tmp_path / "dist")
        for skill_id in ("a b/c-d", "café/naive"):
            assert remote.render_plan_cascade([skill_id]) == local.render_plan_cascade([skill_id])
            assert remote.render_plan_cascade([skill_id]).endswith("\n\n\n# Title\n\nDo the thing.\n\n")
        assert remote.skill_location("a b/c-d") == m.group(1) + "/api/files/a%20b/c-d/SKILL.md"
        assert remote.skill_location("café/naive") == m.group(1) + "/api/files/caf%C3%A9/naive/SKILL.md"
    finally:
        stop_process(server)
