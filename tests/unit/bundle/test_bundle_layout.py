"""The bundle `skillc build` writes: layout, wire fields, digests, manifest, schemas, lint gating."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest

from bundle_contract import PROJECT, _schema_validator, build_env, make_sample_repo
from conftest import run_skillc, write_skill
from skillc.emit.common import metadata_text, skill_digest


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_sample_repo(repo)
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    return tmp_path / "out"


def test_rfc_worked_example_digest():
    # research/registry.md §2.3: SKILL.md "# Hello\n" + scripts/run.sh "#!/bin/sh\n"
    files = [("scripts/run.sh", hashlib.sha256(b"#!/bin/sh\n").hexdigest()),
             ("SKILL.md", hashlib.sha256(b"# Hello\n").hexdigest())]
    assert skill_digest(files) == "sha256:34f7a8c484e9991f3e71a309f31332d6335efc01f544105c4185a7c4ab12eb1e"


def test_metadata_values_become_strings():
    assert metadata_text("x") == "x"
    assert metadata_text(2) == "2"
    assert metadata_text(True) == "true"
    assert metadata_text(None) == "null"
    assert metadata_text(["a", "b"]) == '["a","b"]'
    assert metadata_text({"b": 1, "a": "x"}) == '{"a":"x","b":1}'


def test_layout_and_wire_documents(bundle: Path):
    listing = json.loads((bundle / "api/skills.json").read_text())
    ids = [s["id"] for s in listing["skills"]]
    assert ids == ["extraction/email", "extraction/medical/diagnosis", "formatting/markdown", "pdf-processing",
                   "scripts-demo"]
    assert (bundle / "api/skills/index.html").read_bytes() == (bundle / "api/skills.json").read_bytes()
    for desc in listing["skills"]:
        enc = quote(desc["id"], safe="")
        doc = json.loads((bundle / "api/skills" / enc).read_text())
        assert (bundle / "api/skills" / (enc + ".json")).read_bytes() == (bundle / "api/skills" / enc).read_bytes()
        assert {k: v for k, v in doc.items() if k != "body"} == desc
        assert (bundle / "api/archives" / (desc["id"] + ".zip")).is_file()
        assert (bundle / "api/files" / desc["id"] / "SKILL.md").is_file()
    md = next(s for s in listing["skills"] if s["id"] == "formatting/markdown")
    assert md["requires_capabilities"] == ["shell"]
    assert md["scope"] == "project"
    assert md["metadata"]["version"] == "2"
    assert md["metadata"]["stable"] == "true"
    assert md["metadata"]["owners"] == '["ana","bo"]'
    assert md["metadata"]["limits"] == '{"cpu":2}'
    assert md["metadata"]["license"] == "MIT"
    assert md["metadata"]["skillc.repository"] == "repo"
    email = json.loads((bundle / "api/skills/extraction%2Femail").read_text())
    assert email["body"] == "# Email Extractor\n\nExtract entities.\n"
    colls = json.loads((bundle / "api/skill-collections").read_text())["collections"]
    assert {"path": "extraction", "description": "Entity extraction", "count": 2} in colls
    assert {"path": "extraction/medical", "description": "1 skill", "count": 1} in colls


def test_supporting_files_published_secrets_withheld(bundle: Path):
    assert (bundle / "api/files/scripts-demo/scripts/run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert (bundle / "api/files/scripts-demo/references/REFERENCE.md").is_file()
    assert not (bundle / "api/files/scripts-demo/.env").exists()
    manifest = json.loads((bundle / "api/manifest.json").read_text())
    assert {"id": "scripts-demo", "path": ".env", "reason": "credential file (never published)"} in manifest["withheld"]
    assert not any(b"ghp_abcdefghijklmnop" in p.read_bytes() for p in bundle.rglob("*") if p.is_file())
    # the zip holds what is published, not the withheld files (deflated, so the bytes check above misses it)
    with zipfile.ZipFile(bundle / "api/archives/scripts-demo.zip") as zf:
        names = zf.namelist()
        assert "scripts-demo/scripts/run.sh" in names and "scripts-demo/references/REFERENCE.md" in names
        assert not any(n.endswith(".env") for n in names)
        assert all(b"ghp_" not in zf.read(n) for n in names)


def test_well_known_index_digests(bundle: Path):
    index = json.loads((bundle / ".well-known/agent-skills/index.json").read_text())
    assert index["$schema"] == "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    demo = next(s for s in index["skills"] if s["name"] == "scripts-demo")
    assert (demo["id"], demo["type"]) == ("scripts-demo", "archive")
    assert [f["path"] for f in demo["files"]] == ["SKILL.md", "references/REFERENCE.md", "scripts/run.sh"]
    for f in demo["files"]:
        data = (bundle / "api/files/scripts-demo" / f["path"]).read_bytes()
        assert f["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    lines = sorted((f["path"], f["digest"][7:]) for f in demo["files"])
    assert demo["files_digest"] == skill_digest(lines)  # the Cloudflare draft's skill digest
    zip_path = (bundle / ".well-known/agent-skills" / demo["url"]).resolve()
    assert zip_path == (bundle / "api/discovery/scripts-demo.zip").resolve()
    assert demo["digest"] == "sha256:" + hashlib.sha256(zip_path.read_bytes()).hexdigest()  # the artifact's
    with zipfile.ZipFile(zip_path) as zf:
        assert sorted(zf.namelist()) == [f["path"] for f in demo["files"]]  # SKILL.md at the root
        assert all(i.date_time == (2023, 11, 14, 22, 13, 20) for i in zf.infolist())  # SOURCE_DATE_EPOCH, UTC


def test_inventory_is_meerkat_bytes(bundle: Path):
    text = (bundle / "api/inventory.xml").read_text()
    assert text.startswith("<available_skills>\n  <skill id=\"extraction/email\">\n")
    assert "Extract from emails &lt;b&gt;&amp;amp; &apos;quotes&apos; &quot;too&quot;" in text
    assert text.endswith("</available_skills>")


def test_manifest_lists_every_file_but_itself(bundle: Path):
    manifest = json.loads((bundle / "api/manifest.json").read_text())
    on_disk = sorted((p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()),
                     key=lambda s: s.encode())
    listed = [f["path"] for f in manifest["files"]]
    assert listed == [p for p in on_disk if p != "api/manifest.json"]
    for f in manifest["files"]:
        data = (bundle / f["path"]).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (f["sha256"], f["size"]), f["path"]
    assert manifest["tool"]["name"] == "skillc"
    assert manifest["inputs"] == [{"repository": "repo", "type": "filesystem", "location": "repo", "resolved": None}]
    assert manifest["skills"] == 5 and manifest["source_date_epoch"] == 1700000000


def test_every_bundle_json_validates_against_its_schema(bundle: Path):
    checks = {
        "api/skills.json": "wire-skills.schema.json",
        "api/skill-collections": "wire-skill-collections.schema.json",
        ".well-known/agent-skills/index.json": "well-known-index.schema.json",
        "api/manifest.json": "manifest.schema.json",
    }
    for rel, schema in checks.items():
        _schema_validator(schema).validate(json.loads((bundle / rel).read_text()))
    validator = _schema_validator("wire-skill-document.schema.json")
    docs = [p for p in (bundle / "api/skills").iterdir() if p.suffix != ".json" and p.name != "index.html"]
    assert len(docs) == 5
    for p in docs:
        validator.validate(json.loads(p.read_text()))
    # the bundle carries the schemas it is checked against
    for name in set(checks.values()) | {"wire-skill-document.schema.json", "wire-skill-descriptor.schema.json"}:
        assert (bundle / "api/schemas" / name).read_bytes() == (PROJECT / "schemas" / name).read_bytes()


def test_site_page_escapes_skill_text(bundle: Path):
    html = (bundle / "index.html").read_text()
    assert "<script>" not in html and "alert(1)" not in html
    assert "&lt;b&gt;" in html
    assert "Content-Security-Policy" in html
    assert "extraction/email" in html


def test_routing_configs_are_generated(bundle: Path):
    nginx = (bundle / "_routing/nginx.conf").read_text()
    assert "server {" in nginx and "$request_uri" in nginx
    assert "/api/skills.json" in (bundle / "_redirects").read_text()
    assert (bundle / "_routing/Caddyfile").is_file()


def test_no_site_leaves_out_the_page(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "out/index.html").exists()


def test_lint_error_fails_the_build_and_names_the_skill(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "good")
    write_skill(repo, "broken", frontmatter="name: broken\n")  # no description: a spec error
    (tmp_path / "out").mkdir()
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1
    assert "broken" in r.stderr and "Traceback" not in r.stderr
    # the error itself, with its file and line, before the one-line failure
    assert "repo:broken/SKILL.md:1:1: S309 missing required field 'description'" in r.stderr
    assert r.stderr.index("S309") < r.stderr.index("skillc: error: 1 skill failed: broken")
    assert not any((tmp_path / "out").iterdir())  # nothing half-written
    r = run_skillc("build", "repo", "--out", "out", "--json", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1
    failure = json.loads(r.stdout)  # machines get the same as JSON
    assert failure["ok"] is False and failure["failed"] == {"broken": "lint errors: S309"}
    assert [(d["repository"], d["path"], d["code"], d["severity"]) for d in failure["diagnostics"]] == [
        ("repo", "broken/SKILL.md", "S309", "error")]
    r = run_skillc("build", "repo", "--out", "out", "--keep-going", "--json", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["excluded"] == ["broken"] and json.loads(r.stdout)["ok"] is True
    r = run_skillc("build", "repo", "--out", "out", "--keep-going", cwd=tmp_path, env=build_env(tmp_path))
    assert "repo:broken/SKILL.md:1:1: S309 missing required field 'description'" in r.stderr  # why it was left out
    r = run_skillc("build", "missing-repo", "--out", "out", "--json", cwd=tmp_path, env=build_env(tmp_path))
    failure = json.loads(r.stdout)
    assert r.returncode == 1 and failure["ok"] is False and failure["failed"] == {} and failure["diagnostics"] == []
    assert failure["error"].startswith("repository 'missing-repo': ") and failure["error"].endswith("is not a directory")
    manifest = json.loads((tmp_path / "out/api/manifest.json").read_text())
    assert [e["id"] for e in manifest["excluded"]] == ["broken"]
    assert manifest["lint"]["errors"] >= 1
    ids = [s["id"] for s in json.loads((tmp_path / "out/api/skills.json").read_text())["skills"]]
    assert ids == ["good"]


def test_a_top_level_key_wins_over_the_same_metadata_key(tmp_path: Path):
    """Seed 000's format A example has `version` at the top level and in `metadata`: the wire
    metadata publishes the top-level one (the skill's semantic version), and lint says the other is
    not published (F414)."""
    write_skill(tmp_path / "repo", "fa", frontmatter='name: fa\ndescription: Format A. Use for tests.\nversion: "3.2.0"\n'
                'metadata:\n  version: "1.0.0"\n  author: ana\n')
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "out/api/skills/fa").read_text())["metadata"]
    assert meta["version"] == "3.2.0" and meta["author"] == "ana"
    lint = run_skillc("lint", "repo", "--format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(lint.stdout)["diagnostics"]] == ["F414"]
