"""HTTP (wire format, real server on loopback) and zip sources."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from skillc.resolve_types import Repository, Tier
from skillc.sources import SourceError, open_source
from skillc.validate.lint import LintConfig

SKILLS = {
    "extraction/email": {"id": "extraction/email", "name": "email", "description": "Extract from emails",
                         "scope": "project", "metadata": {"owner": "team-a"},
                         "body": "# Email Extractor\n\nExtract entities.\n"},
    "formatting/markdown": {"id": "formatting/markdown", "name": "markdown", "description": "Markdown output",
                            "scope": "project", "metadata": {}, "body": "# Markdown\n"},
}


class Registry(http.server.BaseHTTPRequestHandler):
    """A minimal Meerkat Skills API server (what `skillc serve` and Elephant speak)."""

    skills: dict = SKILLS
    require: tuple[str, str] | None = None
    hits: list = []
    html = False
    missing: set = set()
    manifest_status = 0  # answer GET /api/manifest.json with this status (0: 404 like any wire server)

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status: int, payload, ctype="application/json", etag=None):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        type(self).hits.append(self.path)
        if self.require and self.headers.get(self.require[0]) != self.require[1]:
            return self._send(401, {"error": "unauthorized"})
        if self.html:
            return self._send(200, b"<!doctype html><html>hello</html>", "text/html")
        if self.path == "/api/manifest.json" and self.manifest_status:
            return self._send(self.manifest_status, b"<html>internal error</html>", "text/html")
        if self.path == "/api/skills":
            return self._send(200, {"skills": [{k: v for k, v in d.items() if k != "body"} for d in self.skills.values()]})
        if self.path == "/api/skill-collections":
            return self._send(200, {"collections": [{"path": "extraction", "description": "Entity extraction",
                                                     "count": 1}, {"path": "formatting", "description": "1 skill",
                                                                   "count": 1}]})
        if self.path.startswith("/api/skills/"):
            skill_id = urllib.parse.unquote(self.path[len("/api/skills/"):])
            if "/" in self.path[len("/api/skills/"):] or skill_id not in self.skills or skill_id in self.missing:
                return self._send(404, {"error": "not found"})
            doc = self.skills[skill_id]
            etag = '"' + hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return None
            return self._send(200, doc, etag=etag)
        return self._send(404, {"error": "not found"})


@pytest.fixture
def server():
    handler = type("H", (Registry,), {"hits": [], "require": None, "html": False, "missing": set(), "skills": dict(SKILLS),
                                      "manifest_status": 0})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, handler, f"http://127.0.0.1:{srv.server_address[1]}/api"
    srv.shutdown()
    srv.server_close()


def http_repo(url: str, **kw) -> Repository:
    return Repository("remote", "http", url, Tier.USER, 150, **kw)


def listing_of(repo, cache):
    return open_source(repo, cache_dir=cache, lint=LintConfig()).skills()


def test_http_lists_then_loads_each_document(tmp_path, server):
    _, handler, base = server
    listing = listing_of(http_repo(base + "/", refresh_seconds=0), tmp_path / "c")
    assert [s.id for s in listing.skills] == ["extraction/email", "formatting/markdown"]
    email = listing.skills[0]
    assert email.name == "email" and email.description == "Extract from emails"
    assert email.document.meta["metadata"] == {"owner": "team-a"}
    assert email.document.body == "# Email Extractor\n\nExtract entities.\n"
    assert "/api/skills/extraction%2Femail" in handler.hits  # the ID is percent-encoded, '/' included
    assert listing.collection_docs == {"extraction": "Entity extraction"}  # "1 skill" is not a description
    assert listing.input.resolved.startswith("sha256:")
    assert Path(email.files[0].source_path).read_text().startswith("---\nname: email\n")


@pytest.mark.parametrize("status", [200, 403, 500])
def test_http_server_without_a_skillc_manifest_gives_documents_alone(tmp_path, server, status):
    """Only a skillc bundle's manifest adds files; HTML, an error or a refusal there changes nothing."""
    srv, handler, url = server
    handler.manifest_status = status
    listing = listing_of(http_repo(url, refresh_seconds=0), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["extraction/email", "formatting/markdown"]
    assert all([f.path for f in s.files] == ["SKILL.md"] for s in listing.skills)
    assert "/api/manifest.json" in handler.hits and not listing.diagnostics


def test_http_ttl_cache_and_revalidation(tmp_path, server):
    _, handler, base = server
    cache = tmp_path / "c"
    listing_of(http_repo(base, refresh_seconds=3600), cache)
    n = len(handler.hits)
    listing_of(http_repo(base, refresh_seconds=3600), cache)
    assert len(handler.hits) == n  # within the TTL: no request at all
    again = listing_of(http_repo(base, refresh_seconds=0), cache)
    assert len(handler.hits) > n and len(again.skills) == 2  # expired: revalidated (304s reuse the cache)


@pytest.mark.parametrize("header, token, sent", [
    (None, "tok123", ("Authorization", "Bearer tok123")),
    ("X-API-Key", "k-456", ("X-API-Key", "k-456")),
])
def test_http_auth(tmp_path, server, header, token, sent):
    _, handler, base = server
    handler.require = sent
    with pytest.raises(SourceError, match="HTTP 401"):
        listing_of(http_repo(base, refresh_seconds=0), tmp_path / "c1")
    listing = listing_of(http_repo(base, auth_header=header, auth_token=token, refresh_seconds=0), tmp_path / "c2")
    assert len(listing.skills) == 2
    for f in (tmp_path / "c2").rglob("*"):
        if f.is_file():
            assert token.encode() not in f.read_bytes()


def test_http_errors(tmp_path, server):
    _, handler, base = server
    with pytest.raises(SourceError, match="not found"):
        listing_of(http_repo(base + "/nope"), tmp_path / "c")
    handler.html = True
    with pytest.raises(SourceError, match="HTML, not JSON"):
        listing_of(http_repo(base), tmp_path / "c")
    handler.html = False
    with pytest.raises(SourceError, match="cannot reach"):
        listing_of(http_repo("http://127.0.0.1:9/api"), tmp_path / "c")


def test_http_missing_document_and_bad_metadata(tmp_path, server):
    _, handler, base = server
    handler.missing = {"formatting/markdown"}
    listing = listing_of(http_repo(base, refresh_seconds=0), tmp_path / "c")
    assert [s.id for s in listing.skills] == ["extraction/email"]
    assert [d.code for d in listing.diagnostics] == ["R106"]
    handler.skills["bad"] = {"id": "bad", "name": "bad", "description": "x", "metadata": {"n": 1}, "body": ""}
    with pytest.raises(SourceError, match="metadata must map strings to strings"):
        listing_of(http_repo(base, refresh_seconds=0), tmp_path / "c2")



def test_http_cache_holds_the_unfiltered_list_and_selects_every_build(tmp_path, server):
    """Seed 004: one cache entry per URL holds the whole list; include/exclude are applied on each
    read, so two repositories on one URL, or a changed include, never see another's selection."""
    _, handler, base = server
    cache = tmp_path / "c"
    email = listing_of(http_repo(base, refresh_seconds=3600, include=("extraction/*",)), cache)
    assert [s.id for s in email.skills] == ["extraction/email"]
    markdown = listing_of(http_repo(base, refresh_seconds=3600, include=("formatting",)), cache)
    assert [s.id for s in markdown.skills] == ["formatting/markdown"]
    n = len(handler.hits)
    both = listing_of(http_repo(base, refresh_seconds=3600), cache)
    assert [s.id for s in both.skills] == ["extraction/email", "formatting/markdown"]
    assert len(handler.hits) == n  # everything selected is cached: no request within the TTL
    excluded = listing_of(http_repo(base, refresh_seconds=3600, exclude=("extraction",)), cache)
    assert [s.id for s in excluded.skills] == ["formatting/markdown"]


def test_http_warm_read_reports_what_the_fetch_reported(tmp_path, server):
    _, handler, base = server
    handler.missing = {"formatting/markdown"}
    handler.skills["../evil"] = {"id": "../evil", "name": "evil", "description": "x", "body": ""}
    cache = tmp_path / "c"
    fresh = listing_of(http_repo(base, refresh_seconds=3600), cache)
    assert sorted(d.code for d in fresh.diagnostics) == ["R104", "R106"]
    n = len(handler.hits)
    warm = listing_of(http_repo(base, refresh_seconds=3600), cache)
    assert len(handler.hits) == n
    assert warm.diagnostics == fresh.diagnostics and [s.id for s in warm.skills] == ["extraction/email"]
    # a document's warning belongs to its selection; the list's own (R104) to every reader
    only = listing_of(http_repo(base, refresh_seconds=3600, include=("extraction",)), cache)
    assert [d.code for d in only.diagnostics] == ["R104"]


# ---------------------------------------------------------------- zip

def make_zip(path: Path, entries: dict[str, bytes], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


SKILL = b"---\nname: pdf\ndescription: Reads PDFs. Use when asked.\n---\n# PDF\n"


def zip_repo(path: Path, **kw) -> Repository:
    return Repository("z", "zip", str(path), Tier.PROJECT, 250, **kw)


def test_zip_source_lists_skills_and_records_the_hash(tmp_path):
    archive = make_zip(tmp_path / "skills.zip", {"skills/tools/pdf/SKILL.md": SKILL,
                                                  "skills/tools/pdf/references/a.md": b"A"})
    listing = listing_of(zip_repo(archive, skills_root="skills"), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["tools/pdf"]
    assert [f.path for f in listing.skills[0].files] == ["SKILL.md", "references/a.md"]
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert listing.input.resolved == f"sha256:{digest}"
    assert all(str(tmp_path / "cache") in f.source_path for f in listing.skills[0].files)


def test_zip_source_claude_layout_one_folder(tmp_path):
    archive = make_zip(tmp_path / "pdf.zip", {"pdf/SKILL.md": SKILL})
    assert [s.id for s in listing_of(zip_repo(archive), tmp_path / "c").skills] == ["pdf"]


@pytest.mark.parametrize("entries, symlink, words", [
    ({"../evil/SKILL.md": SKILL}, None, "traversal"),
    ({"/abs/SKILL.md": SKILL}, None, "absolute"),
    ({"pdf/SKILL.md": SKILL}, "pdf/link", "symbolic link"),
    ({"pdf\\SKILL.md": SKILL}, None, "backslash"),
])
def test_zip_source_rejects_hostile_archives(tmp_path, entries, symlink, words):
    archive = make_zip(tmp_path / "bad.zip", entries, symlink)
    with pytest.raises(SourceError, match=words):
        listing_of(zip_repo(archive), tmp_path / "cache")
    assert not (tmp_path / "evil").exists() and not Path("/abs").exists()


def test_zip_source_missing_archive(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        listing_of(zip_repo(tmp_path / "none.zip"), tmp_path / "c")


def test_a_missing_archive_or_skills_root_names_where_it_was_declared(tmp_path):
    """A path or skills_root that names nothing is a configuration problem: the error says where the
    repository was declared, as a filesystem repository's missing path does."""
    where = f"{tmp_path / 'skills.toml'}:7"
    with pytest.raises(SourceError, match=rf"none.zip not found \(declared at {where}\)$"):
        listing_of(zip_repo(tmp_path / "none.zip", config_file=where), tmp_path / "c")
    archive = make_zip(tmp_path / "skills.zip", {"skills/tools/pdf/SKILL.md": SKILL})
    with pytest.raises(SourceError, match=rf"skills_root 'skillz' not found in .* \(declared at {where}\)$"):
        listing_of(zip_repo(archive, skills_root="skillz", config_file=where), tmp_path / "c")


def test_a_zip_url_with_a_query_names_a_one_skill_archive_by_its_file(tmp_path):
    """A download url with a query (a presigned S3 or GCS link: `pdf.zip?X-Amz-Date=…&v=1.2`) named
    an archive that is one skill after the whole tail, query included: the ID was unsafe (R104) and
    the build failed."""
    data = make_zip(tmp_path / "pdf.zip", {"SKILL.md": SKILL}).read_bytes()

    class Zip(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Zip)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        for url in (f"{base}/dl/pdf.zip?X-Amz-Date=20240101T000000Z&v=1.2", f"{base}/dl/pdf.zip#frag"):
            repo = Repository("z", "zip", url, Tier.PROJECT, 250)
            assert [s.id for s in listing_of(repo, tmp_path / "c").skills] == ["pdf"], url
    finally:
        srv.shutdown()
        srv.server_close()
