"""The generated nginx server block, served by a real nginx on loopback, passes the contract client."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from bundle_contract import (
    ESCAPE_PATHS,
    build_env,
    check_answers_like_skillc_serve,
    check_api_folders,
    check_contract,
    check_documents_are_json,
    check_no_escape,
    check_untrusted_files,
    fetch,
    make_sample_repo,
)
from conftest import run_skillc, stop_process
from skillc.emit.routing import render_routing

pytestmark = pytest.mark.nginx


def nginx_binary() -> str | None:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nginx_bundle(tmp_path_factory):
    exe = nginx_binary()
    if exe is None:
        pytest.skip("nginx is not installed (tests/setup_system.sh installs nginx-light with apt; it could not run here)")
    tmp = tmp_path_factory.mktemp("nginx")
    make_sample_repo(tmp / "repo")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    bundle = tmp / "out"
    port = free_port()
    prefix = tmp / "nginx"
    for sub in ("logs", "tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    server = render_routing("nginx.conf", root=str(bundle), listen=f"127.0.0.1:{port}", server_name="localhost")
    # The bundle's own copy is the same template with placeholder root/listen.
    assert (bundle / "_routing/nginx.conf").read_text() == render_routing("nginx.conf")
    conf = prefix / "nginx.conf"
    # As root, nginx's workers would drop to `nobody`, who cannot read pytest's private temp folder.
    user = "user root;" if os.geteuid() == 0 else ""
    conf.write_text(f"""
{user}
error_log {prefix}/logs/error.log warn;
worker_processes 1;
events {{ worker_connections 64; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {prefix}/logs/access.log;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
{server}
}}
""")
    proc = subprocess.Popen([exe, "-p", str(prefix), "-c", str(conf), "-g", f"daemon off; pid {prefix}/nginx.pid;"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"nginx exited: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield bundle, base
    stop_process(proc)


def test_contract_through_nginx(nginx_bundle):
    bundle, base = nginx_bundle
    counts = check_contract(base, bundle)
    assert counts == {"skills": 5, "files": 7, "packages": 5}


def test_a_skills_own_files_are_never_active_content(nginx_bundle):
    bundle, base = nginx_bundle
    check_untrusted_files(base, bundle)


def test_nginx_answers_like_skillc_serve(nginx_bundle):
    bundle, base = nginx_bundle
    check_answers_like_skillc_serve(base)


@pytest.mark.parametrize("path", ESCAPE_PATHS)
def test_nginx_no_escapes(nginx_bundle, path):
    bundle, base = nginx_bundle
    check_no_escape(base, path)


def test_skill_documents_are_json_whatever_their_name_ends_with(nginx_bundle):
    # (mime.types sent api/skills/index.html, and a document whose ID ends in .html, as text/html)
    bundle, base = nginx_bundle
    check_documents_are_json(base, bundle)


def test_an_api_folder_is_a_json_404(nginx_bundle):
    # (/.well-known/agent-skills/ was nginx's HTML 404 page)
    bundle, base = nginx_bundle
    check_api_folders(base)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND"])
@pytest.mark.parametrize("path", ["/api/skills", "/api/skills/formatting%2Fmarkdown", "/api/skills/no-such-skill",
                                  "/", "/no-such-page"])
def test_other_methods_are_a_405_with_allow_like_skillc_serve(nginx_bundle, method, path):
    # (nginx's own 405 is an HTML page without the Allow header RFC 9110 requires, and a missing
    # file was a 404 for POST: `skillc serve` answers every such request with a JSON 405 and Allow)
    bundle, base = nginx_bundle
    status, headers, body = fetch(base, path, method=method)
    assert status == 405 and headers.get("allow") == "GET, HEAD", (method, path, status, headers)
    assert headers["content-type"].startswith("application/json"), (method, path, headers)
    assert json.loads(body)["error"] == "method_not_allowed"


def test_the_sites_scripts_are_compressed_and_utf8_like_skillc_serve(nginx_bundle):
    # (mime.types names .js application/javascript, which gzip_types and charset_types left out:
    # the site's 114 KB script went uncompressed, and without its charset)
    bundle, base = nginx_bundle
    scripts = sorted(p for p in (bundle / "assets").rglob("*.js") if p.stat().st_size >= 1024)
    assert scripts
    for script in scripts:
        path = "/" + script.relative_to(bundle).as_posix()
        status, headers, body = fetch(base, path, headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("content-encoding") == "gzip", (path, headers)
        assert gzip.decompress(body) == script.read_bytes()
        assert "charset=utf-8" in headers["content-type"].lower(), (path, headers)


def test_the_well_known_folder_is_a_json_404(nginx_bundle):
    # (/.well-known/ was nginx's HTML 403 page: a folder there is a JSON 404, as through skillc serve)
    bundle, base = nginx_bundle
    status, headers, body = fetch(base, "/.well-known/")
    assert status == 404 and headers["content-type"].startswith("application/json"), (status, headers)
    assert json.loads(body)["error"] == "not_found"


def test_every_answer_is_revalidated_like_skillc_serve(nginx_bundle):
    # (nginx sent no Cache-Control, only Last-Modified: a browser or a CDN may then keep a file for a
    # tenth of its age without asking, so after a rebuild it mixed a new listing with old documents;
    # `skillc serve` sends `no-cache` on every answer: kept, but revalidated with its ETag)
    bundle, base = nginx_bundle
    for path in ("/api/skills", "/api/skills/", "/api/skills/formatting%2Fmarkdown", "/api/skill-collections",
                 "/api/manifest.json", "/api/files/scripts-demo/SKILL.md", "/api/archives/scripts-demo.zip",
                 "/.well-known/agent-skills/index.json", "/.well-known/agent-skills/scripts-demo/SKILL.md",
                 "/", "/index.html"):
        status, headers, body = fetch(base, path)
        assert status == 200 and "no-cache" in headers.get("cache-control", ""), (path, status, headers)
        etag = headers["etag"]
        status, headers, body = fetch(base, path, headers={"If-None-Match": etag})
        assert status == 304 and "no-cache" in headers.get("cache-control", ""), (path, status, headers)


def test_repeated_slashes_reach_a_document_like_skillc_serve(nginx_bundle):
    # (nginx merges slashes in $uri, but the document's name is read from the raw request line,
    # where `//api/skills/…` or `/api/skills//…` named no file: a 404 for a document `skillc serve` sends)
    bundle, base = nginx_bundle
    want = (bundle / "api/skills/formatting%2Fmarkdown").read_bytes()
    for path in ("//api/skills/formatting%2Fmarkdown", "/api//skills/formatting%2Fmarkdown",
                 "/api/skills//formatting%2Fmarkdown"):
        status, headers, body = fetch(base, path)
        assert status == 200 and body == want, (path, status)
        assert headers["content-type"].startswith("application/json")


def test_the_builds_gzip_copies_are_sent_as_they_are(nginx_bundle):
    from bundle_contract import check_precompressed

    bundle, base = nginx_bundle
    check_precompressed(base, bundle)
