"""The http source and `skillc export` against a real `skillc build` bundle served by `skillc serve`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import run_skillc, skillc_command, stop_process, write_skill
from skillc.resolve_types import Repository, Tier
from skillc.sources import open_source
from skillc.validate.lint import LintConfig


@pytest.fixture
def served(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "extraction/email", body="# Email\n\nExtract entities.\n")
    write_skill(repo, "pdf")
    (repo / "pdf/references").mkdir()
    (repo / "pdf/references/guide.md").write_text("guide\n")
    (repo / "pdf/scripts").mkdir()
    (repo / "pdf/scripts/run.sh").write_text("#!/bin/sh\necho ok\n")
    os.chmod(repo / "pdf/scripts/run.sh", 0o755)
    dist = tmp_path / "dist"
    r = run_skillc("build", str(repo), "--out", str(dist), "--no-site", cwd=tmp_path)
    if r.returncode != 0:
        pytest.skip(f"skillc build is not usable here: {r.stderr[-300:]}")
    proc = subprocess.Popen([*skillc_command(), "serve", str(dist), "--port", "0", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"\(API: (http://[^)]+/api)\)", line)
        assert m, line
        yield dist, m.group(1)
    finally:
        stop_process(proc)


def test_http_source_reads_a_skillc_bundle(tmp_path, served):
    _, api = served
    repo = Repository("remote", "http", api, Tier.USER, 150, refresh_seconds=0)
    listing = open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()
    assert [s.id for s in listing.skills] == ["extraction/email", "pdf"]
    email = listing.skills[0]
    assert email.document.body == "# Email\n\nExtract entities.\n" and email.name == "email"
    # a second read after expiry revalidates with the server's ETags
    again = open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()
    assert [s.document.sha256 for s in again.skills] == [s.document.sha256 for s in listing.skills]


def test_export_from_the_url_and_from_the_bundle_directory(tmp_path, served):
    dist, api = served
    out = tmp_path / "email.zip"
    r = run_skillc("export", api, "extraction/email", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["email/SKILL.md"] and b"Extract entities." in zf.read("email/SKILL.md")
    out2 = tmp_path / "pdf.zip"
    r = run_skillc("export", str(dist), "pdf", "-o", str(out2))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out2) as zf:
        assert "pdf/SKILL.md" in zf.namelist()
    # over HTTP the script stays executable (the manifest's `executables`), as from the folder; the
    # bundle's root URL works as its API URL does
    out3 = tmp_path / "pdf-url.zip"
    r = run_skillc("export", api.removesuffix("/api"), "pdf", "-o", str(out3))
    assert r.returncode == 0, r.stderr
    for archive in (out2, out3):
        with zipfile.ZipFile(archive) as zf:
            modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
        assert modes["pdf/scripts/run.sh"] == 0o755 and modes["pdf/references/guide.md"] == 0o644, (archive, modes)
    assert "api/files/pdf/scripts/run.sh" in json.loads((dist / "api/manifest.json").read_text())["executables"]


def _remote(tmp_path: Path, api: str):
    repo = Repository("remote", "http", api, Tier.USER, 150, refresh_seconds=0)
    return open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()


def test_http_source_fetches_whole_skills_from_a_skillc_bundle(tmp_path, served):
    dist, api = served
    listing = _remote(tmp_path, api)
    pdf = {s.id: s for s in listing.skills}["pdf"]
    assert [f.path for f in pdf.files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]
    local = tmp_path / "repo" / "pdf"
    # the original SKILL.md (every frontmatter key), and the reference, byte for byte
    assert Path(pdf.files[0].source_path).read_bytes() == (local / "SKILL.md").read_bytes()
    assert Path(pdf.files[1].source_path).read_bytes() == b"guide\n"
    assert not listing.diagnostics
    # a build from the remote registry republishes the whole skill, zip included
    (tmp_path / "skills.toml").write_text(f'[[repositories]]\nname = "remote"\ntype = "http"\nurl = "{api}"\n'
                                          "refresh_seconds = 0\n")
    r = run_skillc("build", "--out", "mirror", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "c2")})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "mirror/api/files/pdf/references/guide.md").read_bytes() == b"guide\n"
    with zipfile.ZipFile(tmp_path / "mirror/api/archives/pdf.zip") as zf:
        assert sorted(zf.namelist()) == ["pdf/SKILL.md", "pdf/references/guide.md", "pdf/scripts/run.sh"]
        assert (zf.getinfo("pdf/scripts/run.sh").external_attr >> 16) & 0o777 == 0o755  # (still executable)


def test_http_source_leaves_out_files_that_do_not_match_the_manifest(tmp_path, served):
    dist, api = served
    first = _remote(tmp_path, api)
    assert [f.path for f in {s.id: s for s in first.skills}["pdf"].files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]
    # unchanged in the manifest: the next sync reuses the fetched copy even if the server lost it
    (dist / "api/files/pdf/references/guide.md").unlink()
    again = _remote(tmp_path, api)
    assert [f.path for f in {s.id: s for s in again.skills}["pdf"].files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]
    # a fresh cache must fetch it: 404, reported and left out, the skill still built
    gone = _remote(tmp_path / "fresh", api)
    assert [f.path for f in {s.id: s for s in gone.skills}["pdf"].files] == ["SKILL.md", "scripts/run.sh"]
    assert [(d.code, d.path) for d in gone.diagnostics] == [("R108", "pdf")]
    assert "references/guide.md: answered 404" in gone.diagnostics[0].message
    # bytes that differ from the manifest are never republished
    (dist / "api/files/pdf/references/guide.md").write_bytes(b"tampered\n")
    bad = _remote(tmp_path / "fresh2", api)
    assert [f.path for f in {s.id: s for s in bad.skills}["pdf"].files] == ["SKILL.md", "scripts/run.sh"]
    assert "where the manifest lists" in bad.diagnostics[0].message


def test_http_source_refuses_hostile_manifest_paths(tmp_path, served):
    import json

    dist, api = served
    manifest_path = dist / "api/manifest.json"
    manifest = json.loads(manifest_path.read_text())
    sha = "0" * 64
    manifest["files"] += [{"path": "api/files/pdf/../../../../etc/passwd", "sha256": sha, "size": 3},
                          {"path": "api/files/pdf/references/guide.md/x", "sha256": sha, "size": 3},
                          {"path": "api/files/pdf/a\\b", "sha256": sha, "size": 3},
                          {"path": "api/files/pdf/huge", "sha256": sha, "size": 10**12}]
    manifest_path.write_text(json.dumps(manifest))
    listing = _remote(tmp_path, api)
    pdf = {s.id: s for s in listing.skills}["pdf"]
    assert [f.path for f in pdf.files] == ["SKILL.md", "references/guide.md", "scripts/run.sh"]
    messages = " | ".join(d.message for d in listing.diagnostics)
    assert "path has an empty, '.' or '..' segment" in messages and all(d.code == "R108" for d in listing.diagnostics)
    assert "would pass" in messages and "guide.md/x: answered 404" in messages
    assert not list(tmp_path.rglob("passwd"))


def test_a_skill_stored_as_skill_md_comes_over_http_as_its_skill_md(tmp_path):
    """The bundle publishes it as `skill.md`: the http source takes that file for the skill's
    SKILL.md (it wrote the one rebuilt from the wire document beside it, and export from the URL
    failed on the two names)."""
    write_skill(tmp_path / "repo", "lower", file_name="skill.md", body="# Lower\n\nOriginal text.\n")
    original = (tmp_path / "repo/lower/skill.md").read_bytes()
    assert run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path).returncode == 0
    proc = subprocess.Popen([*skillc_command(), "serve", str(tmp_path / "dist"), "--port", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        api = re.search(r"\(API: (http://[^)]+/api)\)", proc.stdout.readline()).group(1)
        r = run_skillc("export", api, "lower", "-o", str(tmp_path / "url.zip"),
                       env={"SKILLC_CACHE_DIR": str(tmp_path / "c1")})
        assert r.returncode == 0, r.stderr
        with zipfile.ZipFile(tmp_path / "url.zip") as zf:
            assert zf.namelist() == ["lower/SKILL.md"] and zf.read("lower/SKILL.md") == original
        (tmp_path / "mirror").mkdir()
        (tmp_path / "mirror/skills.toml").write_text(f'[[repositories]]\nname = "up"\ntype = "http"\nurl = "{api}"\n')
        r = run_skillc("build", "--out", "dist", "--no-site", cwd=tmp_path / "mirror",
                       env={"SKILLC_CACHE_DIR": str(tmp_path / "c2")})
        assert r.returncode == 0, r.stderr
        files = tmp_path / "mirror/dist/api/files/lower"
        assert sorted(p.name for p in files.iterdir()) == ["SKILL.md"] and (files / "SKILL.md").read_bytes() == original
    finally:
        stop_process(proc)


def test_an_older_bundle_listing_skill_md_beside_skill_md_mirrors_and_exports(tmp_path):
    """Bundles before 26 Nov published case twins (`skill.md` beside `SKILL.md`, `Notes.md` beside
    `notes.md`): the http source leaves the later one out (R108) instead of writing both, so export
    from the URL works; and a fetch another version cached is fetched again."""
    import hashlib

    write_skill(tmp_path / "repo", "twin")
    assert run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path).returncode == 0
    manifest_path = tmp_path / "dist/api/manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for name, data in (("skill.md", b"lower-case twin\n"), ("refs/Notes.md", b"N\n"), ("refs/notes.md", b"n\n")):
        (tmp_path / f"dist/api/files/twin/{name}").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"dist/api/files/twin/{name}").write_bytes(data)
        manifest["files"].append({"path": f"api/files/twin/{name}", "sha256": hashlib.sha256(data).hexdigest(),
                                  "size": len(data)})
    manifest_path.write_text(json.dumps(manifest))
    proc = subprocess.Popen([*skillc_command(), "serve", str(tmp_path / "dist"), "--port", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        api = re.search(r"\(API: (http://[^)]+/api)\)", proc.stdout.readline()).group(1)
        r = run_skillc("export", api, "twin", "-o", str(tmp_path / "url.zip"), "--cache-dir", str(tmp_path / "c"))
        assert r.returncode == 0, r.stderr
        with zipfile.ZipFile(tmp_path / "url.zip") as zf:
            assert zf.namelist() == ["twin/SKILL.md", "twin/refs/Notes.md"]
            assert zf.read("twin/SKILL.md") == (tmp_path / "repo/twin/SKILL.md").read_bytes()
        # A fetch cached by another version (no format in its state) is not trusted: fetched again.
        cached = next((tmp_path / "c/http").glob("*/state.json"))
        state = json.loads(cached.read_text())
        del state["format"]
        cached.write_text(json.dumps(state))
        (cached.parent / "tree/twin/SKILL.md").write_text("stale copy of another version\n")
        r = run_skillc("export", api, "twin", "-o", str(tmp_path / "again.zip"), "--cache-dir", str(tmp_path / "c"))
        assert r.returncode == 0, r.stderr
        with zipfile.ZipFile(tmp_path / "again.zip") as zf:
            assert zf.read("twin/SKILL.md") == (tmp_path / "repo/twin/SKILL.md").read_bytes()
    finally:
        stop_process(proc)
