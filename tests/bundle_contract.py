"""A contract client for a served bundle: one function used against `skillc serve` and nginx.

It speaks HTTP with the standard library (a real client on a real socket) and checks what a Meerkat
HttpSkillSource and an Agent Skills discovery client rely on (research/frameworks.md §1.5,
research/registry.md §2.3): every route, every field and its type, ID percent-encoding, status
codes (JSON 404 for an unknown skill), content types, ETag/304, HEAD and gzip.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import io
import json
import zipfile
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

import jsonschema

PROJECT = Path(__file__).resolve().parent.parent


def fetch(base: str, path: str, method: str = "GET", headers: dict | None = None) -> tuple[int, dict, bytes]:
    """One request, no redirect following, no decoding: (status, lower-cased headers, raw body)."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def _schema_validator(name: str):
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in (PROJECT / "schemas").glob("*.json")}
    registry = Registry().with_resources(
        [(n, Resource.from_contents(s)) for n, s in schemas.items()]
        + [(s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s]
    )
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


def _json(status_headers_body, expect_status: int = 200):
    status, headers, body = status_headers_body
    assert status == expect_status, (status, body[:200])
    assert headers.get("content-type", "").split(";")[0].strip() == "application/json", headers
    return json.loads(body.decode("utf-8"))


def _check_descriptor(d: dict) -> None:
    assert isinstance(d["id"], str) and d["id"]
    assert isinstance(d["name"], str)
    assert isinstance(d["description"], str)
    assert d["scope"] in ("builtin", "project", "user")
    assert isinstance(d["requires_capabilities"], list) and all(isinstance(c, str) for c in d["requires_capabilities"])
    assert isinstance(d["metadata"], dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in d["metadata"].items()), d["metadata"]


def _check_caching(base: str, path: str, body: bytes) -> None:
    """ETag present; If-None-Match gives 304 without a body; HEAD gives the headers only."""
    status, headers, _ = fetch(base, path)
    etag = headers.get("etag")
    assert etag, f"no ETag on {path}"
    status, h304, body304 = fetch(base, path, headers={"If-None-Match": etag})
    assert status == 304 and body304 == b"", (path, status)
    status, hhead, bhead = fetch(base, path, method="HEAD")
    assert status == 200 and bhead == b"", (path, status)
    assert int(hhead["content-length"]) == len(body), (path, hhead)


def check_contract(base: str, bundle: Path) -> dict[str, int]:
    """Check every route of the bundle at ``bundle`` as served at ``base`` (``http://host:port``).

    Returns counts of what was checked (so a caller can assert the run was not empty)."""
    listing, listing_body = _check_listing(base, bundle)
    ids = [s["id"] for s in listing["skills"]]
    skills = _check_documents(base, listing)
    _check_missing(base)
    _check_collections(base, ids)
    packages, files = _check_discovery(base, ids)
    _check_inventory_and_manifest(base, bundle)
    _check_gzip(base, listing_body)
    _check_site(base, bundle)
    return {"skills": skills, "files": files, "packages": packages}


def _check_listing(base: str, bundle: Path) -> tuple[dict, bytes]:
    """/api/skills: the schema, the bundle's bytes, ID byte order, caching, the trailing-slash form."""
    listing_resp = fetch(base, "/api/skills")
    listing = _json(listing_resp)
    _schema_validator("wire-skills.schema.json").validate(listing)
    assert listing_resp[2] == (bundle / "api/skills.json").read_bytes()
    ids = [s["id"] for s in listing["skills"]]
    assert ids == sorted(ids, key=lambda i: i.encode()), "skills are not in ID byte order"
    assert len(set(ids)) == len(ids)
    _check_caching(base, "/api/skills", listing_resp[2])
    # the trailing-slash form (what a static host redirects /api/skills to) answers the same list
    assert json.loads(fetch(base, "/api/skills/")[2]) == listing
    return listing, listing_resp[2]


def _check_documents(base: str, listing: dict) -> int:
    """One document per skill, the ID encoded with nothing left safe; returns how many."""
    doc_validator = _schema_validator("wire-skill-document.schema.json")
    count = 0
    for desc in listing["skills"]:
        _check_descriptor(desc)
        path = "/api/skills/" + quote(desc["id"], safe="")
        if "/" in desc["id"]:
            assert "%2F" in path
        resp = fetch(base, path)
        doc = _json(resp)
        doc_validator.validate(doc)
        assert isinstance(doc["body"], str)
        assert {k: v for k, v in doc.items() if k != "body"} == desc, desc["id"]
        _check_caching(base, path, resp[2])
        count += 1
    return count


def _check_missing(base: str) -> None:
    """Unknown IDs: a JSON 404 (Meerkat maps 404 to NotFound), and so is a missing skill file."""
    for missing in ("/api/skills/no-such-skill", "/api/skills/" + quote("no/such/skill", safe=""),
                    "/api/files/no/such/file.md", "/api/archives/no/such.zip",
                    "/.well-known/agent-skills/no/such/file.md"):
        body = _json(fetch(base, missing), 404)
        assert body.get("error"), missing


def _check_collections(base: str, ids: list[str]) -> None:
    colls = _json(fetch(base, "/api/skill-collections"))
    _schema_validator("wire-skill-collections.schema.json").validate(colls)
    paths = [c["path"] for c in colls["collections"]]
    assert paths == sorted(paths, key=lambda p: p.encode())
    for c in colls["collections"]:
        inside = [i for i in ids if i.startswith(c["path"] + "/")]
        assert c["count"] == len(inside), c


def _check_discovery(base: str, ids: list[str]) -> tuple[int, int]:
    """The discovery index (npx skills' agentskills.io shape): archives and files, verified by
    digest, and the legacy index; returns (packages, files) checked."""
    index = _json(fetch(base, "/.well-known/agent-skills/index.json"))
    _schema_validator("well-known-index.schema.json").validate(index)
    assert [s["id"] for s in index["skills"]] == ids
    packages = files = 0
    for entry in index["skills"]:
        lines = []
        assert entry["files"][0]["path"] == "SKILL.md"
        url = urljoin("/.well-known/agent-skills/index.json", entry["url"])
        status, headers, body = fetch(base, url)
        assert status == 200, (url, status)
        assert entry["digest"] == "sha256:" + hashlib.sha256(body).hexdigest()  # the artifact's digest
        with zipfile.ZipFile(io.BytesIO(body)) as zf:
            held = {i.filename: zf.read(i) for i in zf.infolist()}
        assert sorted(held) == sorted(f["path"] for f in entry["files"])  # the skill folder at the root
        packages += 1
        for f in entry["files"]:
            # (also reachable by ID as the draft's /.well-known/agent-skills/<id>/<path>)
            status, headers, body = fetch(base, f"/.well-known/skills/{entry['name']}/{quote(f['path'])}")
            assert status == 200, (entry["name"], f["path"], status)
            _check_untrusted_headers(f["path"], headers)
            hexd = hashlib.sha256(body).hexdigest()
            assert f["digest"] == "sha256:" + hexd and held[f["path"]] == body
            lines.append((f["path"], hexd))
            files += 1
        lines.sort(key=lambda x: x[0].encode())
        digest = hashlib.sha256(b"".join(p.encode() + b"\0" + h.encode() + b"\n" for p, h in lines)).hexdigest()
        assert entry["files_digest"] == "sha256:" + digest  # the Cloudflare draft's skill digest
    legacy = _json(fetch(base, "/.well-known/skills/index.json"))
    _schema_validator("well-known-skills-index.schema.json").validate(legacy)
    assert [s["name"] for s in legacy["skills"]] == [s["name"] for s in index["skills"]]
    return packages, files


def _check_inventory_and_manifest(base: str, bundle: Path) -> None:
    status, headers, body = fetch(base, "/api/inventory.xml")
    assert status == 200 and "xml" in headers["content-type"]
    assert body == (bundle / "api/inventory.xml").read_bytes()
    manifest = _json(fetch(base, "/api/manifest.json"))
    assert manifest["kind"] == "skillc-bundle"


def _check_gzip(base: str, listing_body: bytes) -> None:
    """gzip when asked, identical bytes once decoded."""
    for path, plain in (("/api/skills", listing_body), ("/api/manifest.json", None)):
        if plain is None:
            plain = fetch(base, path)[2]
        if len(plain) < 256:  # too small to be worth compressing (nginx gzip_min_length)
            continue
        status, headers, body = fetch(base, path, headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("content-encoding") == "gzip", (path, headers)
        assert gzip.decompress(body) == plain


def _check_site(base: str, bundle: Path) -> None:
    if (bundle / "index.html").exists():
        status, headers, body = fetch(base, "/")
        assert status == 200 and headers["content-type"].startswith("text/html")
    if (bundle / "404.html").exists():  # a mistyped page: the site's 404 page, not JSON or the server's
        page = (bundle / "404.html").read_bytes()
        for path in ("/no-such-page", "/skills/no/such/skill/"):
            status, headers, body = fetch(base, path)
            assert status == 404 and headers["content-type"].startswith("text/html"), (path, headers)
            assert body == page, path


# --- a skill's own files are untrusted -------------------------------------------------------------

ACTIVE_TYPES = ("text/html", "application/xhtml+xml", "text/javascript", "application/javascript",
                "application/x-javascript", "text/css", "application/xml", "text/xml", "text/xsl")
UNTRUSTED_PROBES = {
    "page.html": b"<script>document.title = 'pwned'</script>",
    "page.xhtml": b"<html xmlns='http://www.w3.org/1999/xhtml'><script>1</script></html>",
    "app.js": b"window.pwned = 1;",
    "app.mjs": b"export default 1;",
    "style.css": b"body { display: none }",
    "feed.xml": b"<?xml version='1.0'?><x/>",
    "diagram.svg": b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>",
    "notes.md": b"# Notes\n",
    "logo.png": b"\x89PNG\r\n\x1a\n",
}


def _check_untrusted_headers(path: str, headers: dict) -> None:
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    assert ctype not in ACTIVE_TYPES, (path, ctype)
    assert headers.get("x-content-type-options") == "nosniff", (path, headers)
    assert "sandbox" in headers.get("content-security-policy", ""), (path, headers)


def check_untrusted_files(base: str, bundle: Path) -> None:
    """A skill's files of every type a browser would run or apply, published beside the others, reach
    a browser as plain text (or an image), never sniffed, sandboxed when opened directly; through
    both routes (``/api/files/`` and ``/.well-known/agent-skills/``)."""
    import shutil

    probe = bundle / "api/files/zz-untrusted-probe"
    probe.mkdir()
    try:
        for name, data in UNTRUSTED_PROBES.items():
            (probe / name).write_bytes(data)
        for name, data in UNTRUSTED_PROBES.items():
            for path in (f"/api/files/zz-untrusted-probe/{name}", f"/.well-known/agent-skills/zz-untrusted-probe/{name}"):
                status, headers, body = fetch(base, path)
                assert status == 200 and body == data, (path, status)
                _check_untrusted_headers(path, headers)
                ctype = headers["content-type"].split(";")[0].strip()
                if name.endswith((".html", ".xhtml", ".js", ".mjs", ".css", ".xml")):
                    assert ctype == "text/plain", (path, ctype)
                elif name.endswith(".svg"):
                    assert ctype == "image/svg+xml", (path, ctype)  # an image still, sandboxed
                elif name.endswith(".png"):
                    assert ctype == "image/png", (path, ctype)
                else:
                    assert ctype == "text/markdown", (path, ctype)
    finally:
        shutil.rmtree(probe)


# --- skill documents are JSON, API folders are JSON 404s --------------------------------------------

# The listing's copy (api/skills/index.html) and the documents, spelt every way a path can reach them.
DOCUMENT_SPELLINGS = ("/api/skills/index.html", "/api//skills/", "/api//skills/index.html", "/api/skills%2Findex.html",
                      "/api%2Fskills/index.html", "/api/skills/zz-probe.html", "/api/skills/zz%2Fprobe.svg",
                      "/api%2Fskills/zz%252Fprobe.svg")


def check_documents_are_json(base: str, bundle: Path) -> None:
    """Every file under api/skills/ reaches a client as JSON (or not at all), whatever its name ends with:
    an ID may end in ``.html`` or ``.svg``, and descriptions and bodies are the skills' own text (a
    ``<script>`` in one would run on the site's origin if the listing or a document were a page)."""
    probes = {"zz-probe.html": b'{"body":"<script>alert(1)</script>"}', "zz%2Fprobe.svg": b'{"body":"<svg/>"}'}
    for name, data in probes.items():
        (bundle / "api/skills" / name).write_bytes(data)
    try:
        for path in DOCUMENT_SPELLINGS:
            status, headers, body = fetch(base, path)
            if status == 200:
                assert headers.get("content-type", "").split(";")[0].strip() == "application/json", (path, headers)
            else:
                assert status in (301, 400, 404), (path, status)
    finally:
        for name in probes:
            (bundle / "api/skills" / name).unlink()


API_FOLDERS = ("/.well-known/agent-skills/", "/.well-known/agent-skills/scripts-demo/",
               "/.well-known/agent-skills/scripts-demo/scripts/", "/api/files/scripts-demo", "/api/files/scripts-demo/",
               "/api/archives")


def check_api_folders(base: str) -> None:
    """A folder under the API names no file: a JSON 404 (what a client parses), never a redirect (which
    would send it round: ``…/scripts-demo/`` to ``…/scripts-demo//`` and on) nor a server's HTML page."""
    for path in API_FOLDERS:
        status, headers, body = fetch(base, path)
        assert status == 404, (path, status, headers.get("location"))
        assert headers.get("content-type", "").split(";")[0].strip() == "application/json", (path, headers)
        assert json.loads(body)["error"] == "not_found", path


# --- a sample repository and a bundle built from it (shared by the bundle, serve and nginx tests) ---

SAMPLE_METADATA = """metadata:
  version: 2
  stable: true
  owners: [ana, bo]
  limits: {cpu: 2}
  note: plain text
"""


def make_sample_repo(root: Path, order: str = "forward") -> list[str]:
    """A repository with nested collections, supporting files, non-string metadata and hostile text.

    ``order="reverse"`` creates the same files in the opposite order (for determinism tests)."""
    from conftest import write_skill

    specs = [
        ("extraction/email", dict(body="# Email Extractor\n\nExtract entities.\n",
                                  description="Extract from emails <b>&amp; 'quotes' \"too\"")),
        ("extraction/medical/diagnosis", dict(description="Diagnose from notes. Use for medical text.")),
        ("formatting/markdown", dict(frontmatter="name: markdown\ndescription: Markdown output. Use when formatting.\n"
                                     "license: MIT\nrequires_capabilities: [shell]\n" + SAMPLE_METADATA)),
        ("pdf-processing", dict(description="Process PDF files. Use for PDFs. Ünïcödé ✓")),
        ("scripts-demo", dict(body="# Demo\n\n<script>alert(1)</script>\n\nRun `scripts/run.sh`.\n")),
    ]
    if order == "reverse":
        specs = specs[::-1]
    for rel, kw in specs:
        write_skill(root, rel, **kw)
    extras = [
        ("scripts-demo/scripts/run.sh", "#!/bin/sh\necho hi\n"),
        ("scripts-demo/references/REFERENCE.md", "# Reference\n\nDetails.\n"),
        ("extraction/COLLECTION.md", "Entity extraction\n"),
        ("scripts-demo/.env", "API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"),
    ]
    for rel, text in (extras[::-1] if order == "reverse" else extras):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return sorted((s[0] for s in specs), key=lambda i: i.encode())


# IDs a Meerkat client percent-encodes whole (accents, a space, '+', '&', an apostrophe, an astral
# emoji, fullwidth letters, right-to-left script, and a collection path), with files whose names a
# client escapes too.  Every server must answer each under ``quote(id, safe='')``.
UNUSUAL_IDS = ("a&b", "a+b", "caf\u00e9", "it's", "rocket-\U0001f680", "tools & co/\u05e9\u05dc\u05d5\u05dd",
               "with space", "\uff46\uff55\uff4c\uff4c")


def make_unusual_repo(root: Path) -> list[str]:
    """A repository whose skill IDs (and some file names) are not plain ASCII words; its IDs in byte order."""
    from conftest import write_skill

    for n, skill_id in enumerate(UNUSUAL_IDS):
        write_skill(root, skill_id, name=f"unusual-{n}")
    for rel in ("with space.md", "pct%20x.md", "a+b&c.md"):
        (root / "caf\u00e9/references" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "caf\u00e9/references" / rel).write_text(f"# {rel}\n", encoding="utf-8")
    return sorted(UNUSUAL_IDS, key=lambda i: i.encode())


def build_env(tmp: Path, **extra: str) -> dict[str, str]:
    return {"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000", **extra}


def check_precompressed(base: str, bundle: Path) -> None:
    """The build's ``.gz`` copies of the search index are what the server sends to a client that
    accepts gzip (byte for byte: level 9, mtime 0), with Vary; the manifest lists them."""
    import gzip as _gzip

    copies = sorted((bundle / "api/index").glob("*.gz"))
    assert copies, "the build published no precompressed copy of the search index"
    listed = {row["path"] for row in json.loads((bundle / "api/manifest.json").read_text())["files"]}
    for copy in copies:
        rel = copy.relative_to(bundle).as_posix()
        assert rel in listed, rel
        status, headers, body = fetch(base, "/" + rel[: -len(".gz")], headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("content-encoding") == "gzip", (rel, headers)
        assert "accept-encoding" in headers.get("vary", "").lower(), (rel, headers)
        assert body == copy.read_bytes(), rel
        assert _gzip.decompress(body) == (bundle / rel[: -len(".gz")]).read_bytes()


# What a static host's routing must get right, whichever server runs it (nginx, Caddy): the API's
# JSON documents with CORS, and no path that climbs out of the bundle.
JSON_PATHS = ("/api/skills", "/api/skills/formatting%2Fmarkdown", "/api/skill-collections",
              "/.well-known/agent-skills/index.json")
ESCAPE_PATHS = ["/api/skills/..", "/api/skills/%2e%2e", "/api/skills/..%2F..%2Fetc%2Fpasswd",
                "/.well-known/agent-skills/%2e%2e/%2e%2e/etc/passwd", "/api/nothing-here"]


def check_answers_like_skillc_serve(base: str) -> None:
    for path in JSON_PATHS:
        status, headers, body = fetch(base, path)
        assert status == 200 and headers["content-type"].startswith("application/json"), (path, headers)
        assert headers.get("access-control-allow-origin") == "*"


def check_no_escape(base: str, path: str) -> None:
    status, headers, body = fetch(base, path)
    assert status in (400, 404), (path, status)
    assert b"root:" not in body
