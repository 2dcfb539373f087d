"""The publishing gate (issue 17): no planted credential of any form reaches any byte of a bundle
(zip members, gzip files and SQLite rows read as a client reads them), and the audit lists each one
without its value.  Real builds through the installed `skillc`."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from bundle_contract import build_env
from conftest import run_skillc, write_skill
from secret_forms import FORMS, readable_bytes
from skillc import gate, secrets

GHP = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
HUNTER = "hunter2-" + "Secret-Pa55word"
STANDIN = "changeme-" + "later"
SLACK = "xoxb-" + "730519284016-4918273650192-" + "KLzdocJ2isAjIhKtJ0RlgLKO"
SENDGRID = [f for f in FORMS if f[0] == "sendgrid key"][0][3]


def _plant(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    # every documented form in a supporting file, and glued after letters into a binary asset
    forms = write_skill(repo, "skills/forms", body="# Forms\n\nSee references.\n").parent
    (forms / "references").mkdir()
    (forms / "assets").mkdir()
    for i, (_, _, line, _) in enumerate(FORMS):
        (forms / "references" / f"form-{i:02d}.md").write_text(f"# Form\n\n{line}\n")
        (forms / "assets" / f"blob-{i:02d}.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" + line.encode() + b"\x00\xfe")
    (forms / "assets" / "glued.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xffgithub" + GHP.encode() + b"\x00")
    # stand-ins lint lets pass: in the frontmatter, the body and a supporting file (published redacted)
    standins = write_skill(repo, "skills/standins", frontmatter=(
        f"name: standins\ndescription: Connect with password={HUNTER} to the staging database.\n"),
        body=f"# Stand-ins\n\nexport API_TOKEN={STANDIN}\n\nAuthorization: Bearer YOUR_ACCESS_TOKEN\n").parent
    (standins / "notes.md").write_text(f"memory says password={HUNTER}\n")
    # values a scan of the raw text cannot see: YAML escapes, an escaped line break
    write_skill(repo, "skills/escaped", frontmatter=(
        'name: escaped\ndescription: "Use the bot token \\x67hp_' + GHP[4:] + ' when asked."\n'))
    write_skill(repo, "skills/folded", frontmatter=(
        'name: folded\ndescription: "Use the bot token ' + GHP[:12] + '\\\n  ' + GHP[12:] + ' when asked."\n'))
    # a credential in a body (lint's B707: the skill is left out, --keep-going publishes the rest)
    write_skill(repo, "skills/inbody", body=f"# Body\n\nThe token is {SLACK}.\n")
    # credential files by name and by content
    creds = write_skill(repo, "skills/creds").parent
    for name in (".envrc", ".pgpass", "key.ppk", "prod.tfvars", "credentials.json", "id_work", ".npmrc", ".pypirc",
                 ".git-credentials", "kubeconfig"):
        (creds / name).write_text("x = 1\n")
    (creds / "docker.json").write_text('{"auths": {"registry.acme.io": {"auth": "ZGVwbG95Olprc3Bx"}}}\n')
    (creds / "cluster.yaml").write_text("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n"
                                        "    client-key-data: LS0tLS1CRUdJTg==\n")
    (repo / "skills" / "COLLECTION.md").write_text(f"# Skills\n\nTeam skills. Staging password={HUNTER}, bot {SLACK}.\n")
    memory = tmp_path / "memory.yaml"
    memory.write_text(f"- {{id: m1, category: fact, content: 'The staging password={HUNTER}'}}\n"
                      f"- {{id: m2, category: fact, content: 'SendGrid key {SENDGRID}'}}\n")
    return repo, memory


PLANTED = [f[3] for f in FORMS] + [HUNTER, STANDIN, "YOUR_ACCESS_TOKEN", GHP, GHP[4:], SLACK, "ZGVwbG95Olprc3Bx",
                                   "LS0tLS1CRUdJTg=="]


@pytest.fixture(scope="module", params=["lint", "no-lint"])
def planted_build(request, tmp_path_factory) -> tuple[Path, dict, str]:
    """Built as is (lint's B707 leaves the skills with a credential out), and with B707 ignored (the
    gate alone: supporting files withheld, SKILL.md kept out, stand-ins redacted)."""
    tmp = tmp_path_factory.mktemp("gate")
    repo, memory = _plant(tmp)
    if request.param == "no-lint":
        (tmp / "skills.toml").write_text('[lint]\nignore = ["B707"]\n')
    out = tmp / "out"
    r = run_skillc("build", "repo", "-o", "out", "--keep-going", "--memory", str(memory), cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "api" / "manifest.json").read_text()), request.param


def test_no_planted_credential_in_any_byte_of_the_bundle(planted_build):
    out, _, mode = planted_build
    readable = readable_bytes(out)
    assert any(k.endswith(".zip!standins/SKILL.md") for k in readable)  # (zips were opened)
    assert any(k.endswith(".zip!forms/SKILL.md") for k in readable) is (mode == "no-lint")
    assert any("#rows" in k for k in readable)  # (the memory snapshot's SQLite was read)
    for value in PLANTED:
        leaked = [k for k, data in readable.items() if value.encode() in data]
        assert not leaked, (value[:6] + "…", leaked[:5])


def test_the_audit_lists_each_credential_without_its_value(planted_build):
    out, manifest, mode = planted_build
    withheld = {(w["id"], w["path"]): w["reason"] for w in manifest["withheld"]}
    excluded = {e["id"]: e["reason"] for e in manifest["excluded"]}
    b707 = {(d["path"].rsplit("/", 1)[-1], d["message"].split()[1]) for d in manifest["lint"]["diagnostics"]
            if d["code"] == "B707"}
    for i, (name, kind, _, _) in enumerate(FORMS):
        if mode == "no-lint":
            assert kind in withheld[("skills/forms", f"references/form-{i:02d}.md")], name
            assert "not published" in withheld[("skills/forms", f"assets/blob-{i:02d}.bin")], name
        else:
            assert (f"form-{i:02d}.md", kind) in b707, name
    if mode == "no-lint":
        assert "github-token" in withheld[("skills/forms", "assets/glued.bin")]
        assert "holds a likely secret (slack-token)" in excluded["skills/inbody"]
    else:
        assert "B707" in excluded["skills/forms"] and "B707" in excluded["skills/inbody"]
        assert ("SKILL.md", "slack-token") in b707
    for name in (".envrc", ".pgpass", "key.ppk", "prod.tfvars", "credentials.json", "id_work", ".npmrc", ".pypirc",
                 ".git-credentials", "kubeconfig", "docker.json", "cluster.yaml"):
        assert "credential file" in withheld[("skills/creds", name)], name
    redacted = {(r["id"], r["path"], r["line"], r["kind"]) for r in manifest["redactions"]}
    assert {("skills/standins", "SKILL.md", 3, "password-assignment"), ("skills/standins", "SKILL.md", 7, "secret-assignment"),
            ("skills/standins", "SKILL.md", 9, "bearer-token"),
            ("skills/standins", "notes.md", 1, "password-assignment")} <= redacted
    assert ("skills", "COLLECTION.md", 0, "password-assignment") in redacted
    assert ("skills", "COLLECTION.md", 0, "slack-token") in redacted
    assert "YAML escapes" in excluded["skills/escaped"] and "YAML escapes" in excluded["skills/folded"]
    snapshot = json.loads((out / "api" / "memory" / "snapshot.json").read_text())
    assert {(r["entry"], r["kind"]) for r in snapshot["redactions"]} == {
        ("m1", "password-assignment"), ("m2", "sendgrid-api-key")}
    audit = json.dumps([manifest["withheld"], manifest["redactions"], manifest["excluded"], snapshot["redactions"]])
    assert not any(v in audit for v in PLANTED)


def test_the_stand_in_skill_is_published_redacted(planted_build):
    out, _, _ = planted_build
    doc = (out / "api" / "files" / "skills" / "standins" / "SKILL.md").read_text()
    assert "export API_TOKEN=[REDACTED:secret-assignment]" in doc
    skills = json.loads((out / "api" / "skills.json").read_text())
    text = json.dumps(skills)
    assert "password=[REDACTED:password-assignment]" in text


def test_a_build_is_byte_identical_again(planted_build, tmp_path):
    """The gate's copies and audit are deterministic (same inputs, same bundle), from a cold cache."""
    out, manifest, mode = planted_build
    repo, memory = _plant(tmp_path)
    if mode == "no-lint":
        (tmp_path / "skills.toml").write_text('[lint]\nignore = ["B707"]\n')
    again = tmp_path / "out"
    r = run_skillc("build", "repo", "-o", "out", "--keep-going", "--memory", str(memory), cwd=tmp_path,
                   env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    second = json.loads((again / "api" / "manifest.json").read_text())
    assert second["files"] == manifest["files"] and second["redactions"] == manifest["redactions"]


@pytest.mark.parametrize("name,data", [
    ("api/skills.json", b'{"description": "githubghp_' + GHP[4:].encode() + b'"}'),
    ("api/index.sqlite", None),
    ("api/archives/x.zip", None),
    ("search/index.json.gz", gzip.compress(b'{"t": "token ' + SLACK.encode() + b'"}', mtime=0)),
])
def test_the_last_check_reads_every_output_byte(tmp_path, name, data):
    """What the earlier steps would miss fails the build: the check reads zips, gzip and SQLite."""
    if name.endswith(".sqlite"):
        db = sqlite3.connect(tmp_path / "x.sqlite")
        db.execute("CREATE TABLE t (v TEXT)")
        db.execute("INSERT INTO t VALUES (?)", ("x" * 5000 + "github" + GHP + " y" * 2500,))  # (across pages)
        db.commit()
        db.close()
        data = (tmp_path / "x.sqlite").read_bytes()
    elif name.endswith(".zip"):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("x/notes.md", f"password: {GHP}\n")
        data = buf.getvalue()
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(data)
    leaks = gate.bundle_leaks(tmp_path, [(name, "h")], set())
    assert leaks and all(GHP not in str(leak) and SLACK not in str(leak) for leak in leaks)


def test_a_memory_stand_in_password_is_redacted_when_frozen(tmp_path):
    """'hunter2' and 'secret' look like stand-ins to lint; a memory is published: redacted."""
    src = tmp_path / "m.yaml"
    src.write_text(f"- {{id: m1, category: fact, content: 'use password={HUNTER} for staging'}}\n")
    out = tmp_path / "snap"
    r = run_skillc("memory", "freeze", str(src), "--out", str(out), "--as-of", "2026-01-01")
    assert r.returncode == 0, r.stderr
    for f in out.rglob("*"):
        if f.is_file():
            assert HUNTER.encode() not in f.read_bytes(), f
    assert secrets.scan(f"password={HUNTER}") == []  # (lint stays quiet on it)


# ---------------------------------------------------------------- what commands print

@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_lint_never_prints_a_secret_in_the_path_it_was_given(tmp_path, fmt):
    """The folder above the skill is named like a token: the path prefix lint prints is redacted."""
    skill = write_skill(tmp_path / GHP / "skills", "demo", name="Demo")
    r = run_skillc("lint", "--format", fmt, str(skill.relative_to(tmp_path)), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    out = r.stdout + r.stderr
    assert "S304" in out and GHP not in out and GHP[4:] not in out


def test_import_prints_a_hostile_member_name_redacted(tmp_path):
    archive = tmp_path / "h.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("demo/SKILL.md", "---\nname: demo\ndescription: Demo. Use when demoing.\n---\n# Demo\n")
        zf.writestr(f"demo/notes-{GHP}.md", "x")
    for extra in ((), ("--json",)):
        r = run_skillc("import", *extra, str(archive), "--into", str(tmp_path / "into"))
        assert r.returncode == 1 and "B707" in r.stdout + r.stderr
        assert GHP[4:] not in r.stdout + r.stderr


def test_an_error_naming_a_secret_path_prints_it_redacted(tmp_path):
    r = run_skillc("pack", str(tmp_path / GHP / "missing"))
    assert r.returncode != 0 and GHP[4:] not in r.stdout + r.stderr


def test_pack_and_export_archive_a_stand_in_redacted(tmp_path):
    """Lint takes `changeme-later` for an example; pack (a publishing gate) never archives it."""
    skill = write_skill(tmp_path, "demo", description="Demo. Use when demoing.",
                        body=f"# Demo\n\nexport API_TOKEN={STANDIN}\npassword: {HUNTER}\n").parent
    dest = tmp_path / "demo.zip"
    r = run_skillc("pack", str(skill), "-o", str(dest))
    assert r.returncode == 0, r.stderr
    assert "demo/SKILL.md:7: secret-assignment redacted" in r.stderr and STANDIN not in r.stderr
    with zipfile.ZipFile(dest) as zf:
        text = zf.read("demo/SKILL.md").decode()
    assert "API_TOKEN=[REDACTED:secret-assignment]" in text and STANDIN not in text and HUNTER not in text
