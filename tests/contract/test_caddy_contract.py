"""The generated Caddyfile, served by a real Caddy 2 on loopback, passes the contract client."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_nginx_contract import free_port

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
    make_unusual_repo,
)
from conftest import run_skillc, stop_process
from skillc.emit.routing import render_routing

pytestmark = pytest.mark.caddy


def caddy_exe() -> str:
    exe = shutil.which("caddy")
    if exe is None:
        pytest.skip("caddy is not installed (tests/setup_system.sh installs it with apt; it could not run here)")
    return exe


@contextlib.contextmanager
def caddy_serving(tmp: Path, bundle: Path):
    """A real Caddy serving ``bundle`` with the generated Caddyfile; yields its base URL."""
    exe = caddy_exe()
    port = free_port()
    site = render_routing("Caddyfile", root=str(bundle), listen=f"127.0.0.1:{port}")
    conf = tmp / "Caddyfile"
    # Global options for a test: no admin endpoint, no automatic HTTPS, nothing written outside tmp.
    conf.write_text("{\n\tadmin off\n\tauto_https off\n}\n" + site)
    env = {**os.environ, "HOME": str(tmp), "XDG_DATA_HOME": str(tmp / "data"), "XDG_CONFIG_HOME": str(tmp / "config")}
    proc = subprocess.Popen([exe, "run", "--config", str(conf), "--adapter", "caddyfile"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 15
    while True:
        if proc.poll() is not None:
            pytest.fail(f"caddy exited: {proc.stdout.read()}")
        try:
            fetch(base, "/api/manifest.json")
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("caddy did not start")
            time.sleep(0.1)
    try:
        yield base
    finally:
        stop_process(proc)


@pytest.fixture(scope="module")
def caddy_bundle(tmp_path_factory):
    caddy_exe()
    tmp = tmp_path_factory.mktemp("caddy")
    make_sample_repo(tmp / "repo")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    bundle = tmp / "out"
    assert (bundle / "_routing/Caddyfile").read_text() == render_routing("Caddyfile")
    with caddy_serving(tmp, bundle) as base:
        yield bundle, base


def test_contract_through_caddy(caddy_bundle):
    bundle, base = caddy_bundle
    counts = check_contract(base, bundle)
    assert counts == {"skills": 5, "files": 7, "packages": 5}


def test_a_skills_own_files_are_never_active_content(caddy_bundle):
    bundle, base = caddy_bundle
    check_untrusted_files(base, bundle)


def test_caddy_answers_like_skillc_serve(caddy_bundle):
    bundle, base = caddy_bundle
    check_answers_like_skillc_serve(base)


@pytest.mark.parametrize("path", ESCAPE_PATHS)
def test_caddy_no_escapes(caddy_bundle, path):
    bundle, base = caddy_bundle
    check_no_escape(base, path)


def test_skill_documents_are_json_whatever_their_name_ends_with(caddy_bundle):
    bundle, base = caddy_bundle
    check_documents_are_json(base, bundle)


def test_an_api_folder_is_a_json_404(caddy_bundle):
    bundle, base = caddy_bundle
    check_api_folders(base)


def test_ids_any_character_escaped_reach_their_documents_through_caddy(tmp_path):
    # (the Caddyfile re-escaped only %2F: the file server decoded the rest, so `caf%C3%A9`,
    # `with%20space` or `a%2Bb` looked for `café`, `with space`, `a+b` and every such ID was a 404)
    make_unusual_repo(tmp_path / "repo")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    with caddy_serving(tmp_path, tmp_path / "out") as base:
        counts = check_contract(base, tmp_path / "out")
    assert counts == {"skills": 8, "files": 11, "packages": 8}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND"])
@pytest.mark.parametrize("path", ["/api/skills", "/api/skills/formatting%2Fmarkdown", "/api/skills/no-such-skill",
                                  "/", "/no-such-page"])
def test_other_methods_are_a_405_with_allow_like_skillc_serve(caddy_bundle, method, path):
    # (Caddy's file server answered any method with the file: a POST or a DELETE was a 200)
    bundle, base = caddy_bundle
    status, headers, body = fetch(base, path, method=method)
    assert status == 405 and headers.get("allow") == "GET, HEAD", (method, path, status, headers)
    assert headers["content-type"].startswith("application/json"), (method, path, headers)
    assert json.loads(body)["error"] == "method_not_allowed"


def test_every_answer_is_revalidated_like_skillc_serve(caddy_bundle):
    # (no Cache-Control, only Last-Modified: a browser or a CDN may keep a file for a tenth of its
    # age without asking, and after a rebuild mix a new listing with old documents)
    bundle, base = caddy_bundle
    for path in ("/api/skills", "/api/skills/formatting%2Fmarkdown", "/api/skill-collections",
                 "/api/files/scripts-demo/SKILL.md", "/.well-known/agent-skills/index.json",
                 "/.well-known/agent-skills/scripts-demo/SKILL.md", "/"):
        status, headers, body = fetch(base, path)
        assert status == 200 and "no-cache" in headers.get("cache-control", ""), (path, status, headers)
        status, headers, body = fetch(base, path, headers={"If-None-Match": headers["etag"]})
        assert status == 304 and "no-cache" in headers.get("cache-control", ""), (path, status, headers)


def test_the_builds_gzip_copies_are_sent_as_they_are(caddy_bundle):
    from bundle_contract import check_precompressed

    bundle, base = caddy_bundle
    check_precompressed(base, bundle)
