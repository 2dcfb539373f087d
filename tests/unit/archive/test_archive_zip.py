"""Zip archives: deterministic Claude-compatible writing, hostile-proof reading, pack/export/import CLI."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.archive import ArchiveError, Limits, check_zip, extract_zip, write_skill_zip
from skillc.resolve_types import Repository, Tier
from skillc.sources import open_source
from skillc.validate.lint import LintConfig


def one_skill(root: Path, rel: str = "tools/pdf"):
    d = write_skill(root, rel).parent
    (d / "scripts").mkdir()
    (d / "scripts/run.py").write_text("print('ok')\n")
    os.chmod(d / "scripts/run.py", 0o755)
    (d / "evals").mkdir()
    (d / "evals/cases.json").write_text("[]")
    (d / "references").mkdir()
    (d / "references/evals").mkdir()
    (d / "references/evals/keep.md").write_text("kept: only the root evals/ is excluded")
    (d / "x.pyc").write_bytes(b"\0")
    repo = Repository("r", "filesystem", str(root), Tier.PROJECT, 250)
    listing = open_source(repo, cache_dir=root.parent / "cache", lint=LintConfig()).skills()
    return next(s for s in listing.skills if s.id == rel)


def test_write_skill_zip_layout_exclusions_and_determinism(tmp_path):
    skill = one_skill(tmp_path / "repo")
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    write_skill_zip(skill, a, 0)
    os.utime(skill.files[0].source_path, (2_000_000_000, 2_000_000_000))  # mtimes never leak in
    write_skill_zip(skill, b, 0)
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as zf:
        infos = zf.infolist()
    assert [i.filename for i in infos] == ["pdf/SKILL.md", "pdf/references/evals/keep.md", "pdf/scripts/run.py"]
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in infos}
    assert modes == {"pdf/SKILL.md": 0o644, "pdf/references/evals/keep.md": 0o644, "pdf/scripts/run.py": 0o755}
    c = tmp_path / "c.zip"
    write_skill_zip(skill, c, 1_700_000_000)
    with zipfile.ZipFile(c) as zf:
        assert zf.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)


def hostile(tmp_path: Path, name: str, build) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        build(zf)
    return path


def test_zip_bomb_and_caps(tmp_path):
    bomb = hostile(tmp_path, "bomb.zip", lambda zf: zf.writestr("s/SKILL.md", b"\0" * (20 * 1024 * 1024)))
    with pytest.raises(ArchiveError, match="zip bomb"):
        check_zip(bomb)
    with pytest.raises(ArchiveError, match="uncompressed"):
        check_zip(bomb, Limits(max_file_bytes=1024, max_ratio=10**9))
    many = hostile(tmp_path, "many.zip", lambda zf: [zf.writestr(f"s/{i}", b"x") for i in range(20)])
    with pytest.raises(ArchiveError, match="entries"):
        check_zip(many, Limits(max_entries=10))


def test_lying_header_is_caught_while_extracting(tmp_path):
    path = hostile(tmp_path, "lie.zip", lambda zf: zf.writestr("s/a.txt", b"A" * 5000))
    listing = check_zip(path)
    from dataclasses import replace

    forged = replace(listing, entries=tuple(replace(e, size=10) for e in listing.entries))
    with pytest.raises(ArchiveError, match="inflates beyond"):
        extract_zip(forged, tmp_path / "out")


def test_duplicates_and_case_collisions(tmp_path):
    path = hostile(tmp_path, "case.zip", lambda zf: (zf.writestr("s/A.md", b"1"), zf.writestr("s/a.md", b"2")))
    with pytest.raises(ArchiveError, match="differ only by case"):
        check_zip(path)
    path = hostile(tmp_path, "clash.zip", lambda zf: (zf.writestr("s/a", b"1"), zf.writestr("s/a/b", b"2")))
    with pytest.raises(ArchiveError, match="both a file and a folder"):
        check_zip(path)


def test_not_a_zip(tmp_path):
    (tmp_path / "x.zip").write_bytes(b"\x1f\x8b gzip pretending")
    with pytest.raises(ArchiveError, match="not a valid zip"):
        check_zip(tmp_path / "x.zip")


# ---------------------------------------------------------------- CLI

def test_pack_then_import_round_trip(tmp_path):
    skill_dir = one_skill(tmp_path / "repo").files[0].source_path
    skill_dir = Path(skill_dir).parent
    out = tmp_path / "pdf.zip"
    r = run_skillc("pack", str(skill_dir), "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["files"] == ["pdf/SKILL.md", "pdf/references/evals/keep.md", "pdf/scripts/run.py"]
    again = tmp_path / "again.zip"
    assert run_skillc("pack", str(skill_dir), "-o", str(again), env={"SOURCE_DATE_EPOCH": "0"}).returncode == 0
    assert again.read_bytes() == out.read_bytes()

    dest = tmp_path / "skills"
    r = run_skillc("import", str(out), "--into", str(dest))
    assert r.returncode == 0, r.stderr
    assert (dest / "pdf/SKILL.md").read_bytes() == (skill_dir / "SKILL.md").read_bytes()
    assert os.access(dest / "pdf/scripts/run.py", os.X_OK)
    r = run_skillc("import", str(out), "--into", str(dest))
    assert r.returncode != 0 and "already exist" in r.stderr and "--force" in r.stderr
    (dest / "pdf/local.txt").write_text("replaced on --force")
    r = run_skillc("import", str(out), "--into", str(dest), "--force")
    assert r.returncode == 0 and not (dest / "pdf/local.txt").exists()
    assert sorted(p.name for p in dest.iterdir()) == ["pdf"]  # no staging folder left


def test_a_very_compressible_file_round_trips_through_pack_build_and_import(tmp_path):
    """A blank 1.2 MB CSV template deflates 400x, past the ratio import refuses as a zip bomb (200x):
    pack, export and the bundle's archive store it, so what skillc writes, skillc imports."""
    from conftest import write_skill

    skill = write_skill(tmp_path / "repo", "blank").parent
    (skill / "assets").mkdir()
    (skill / "assets/blank.csv").write_bytes((b"," * 30 + b"\n") * 40_000)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache")}
    assert run_skillc("pack", str(skill), "-o", str(tmp_path / "p.zip")).returncode == 0
    assert run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path, env=env).returncode == 0
    assert run_skillc("export", "repo", "blank", "-o", str(tmp_path / "e.zip"), cwd=tmp_path, env=env).returncode == 0
    for n, archive in enumerate((tmp_path / "p.zip", tmp_path / "dist/api/archives/blank.zip", tmp_path / "e.zip")):
        r = run_skillc("import", str(archive), "--into", str(tmp_path / f"imported{n}"))
        assert r.returncode == 0, (archive, r.stderr)
        assert (tmp_path / f"imported{n}/blank/assets/blank.csv").read_bytes() == (skill / "assets/blank.csv").read_bytes()


def test_pack_and_export_leave_out_credential_files_as_the_bundle_withholds_them(tmp_path):
    """A `.env` (or `id_rsa`, `*.pem`…) is never published by the build: pack and export from the
    folder leave it out too, so the three exports of a skill agree."""
    from conftest import write_skill

    skill = write_skill(tmp_path / "repo", "envy").parent
    (skill / ".env").write_text("DEBUG=1\nAPI_URL=http://localhost\n")
    (skill / "cert.PEM").write_text("not a real certificate\n")  # (in any case)
    (skill / "notes.md").write_text("notes\n")
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache")}
    assert run_skillc("pack", str(skill), "-o", str(tmp_path / "p.zip")).returncode == 0
    assert run_skillc("export", "repo", "envy", "-o", str(tmp_path / "folder.zip"), cwd=tmp_path, env=env).returncode == 0
    assert run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path, env=env).returncode == 0
    assert run_skillc("export", "dist", "envy", "-o", str(tmp_path / "bundle.zip"), cwd=tmp_path, env=env).returncode == 0
    for archive in ("p.zip", "folder.zip", "bundle.zip"):
        with zipfile.ZipFile(tmp_path / archive) as zf:
            assert zf.namelist() == ["envy/SKILL.md", "envy/notes.md"], archive


def test_pack_refuses_secrets(tmp_path):
    d = write_skill(tmp_path, "leaky").parent
    (d / "config.py").write_text('API = "x"\nGITHUB = "ghp_' + "a1B2" * 9 + '"\n')
    out = tmp_path / "leaky.zip"
    r = run_skillc("pack", str(d), "-o", str(out))
    assert r.returncode == 1 and not out.exists()
    assert "github-token" in r.stderr and "a1B2a1B2" not in r.stderr + r.stdout


@pytest.mark.parametrize("entries, words", [
    ({"../x/SKILL.md": b"x"}, "traversal"),
    ({"SKILL.md": b"x"}, "archive root"),
    ({"pdf/sub/SKILL.md": b"x"}, "directly inside the top-level folder 'pdf' (found at pdf/sub/SKILL.md)"),
])
def test_import_refuses_bad_layouts(tmp_path, entries, words):
    path = hostile(tmp_path, "bad.zip", lambda zf: [zf.writestr(n, d) for n, d in entries.items()])
    dest = tmp_path / "dest"
    r = run_skillc("import", str(path), "--into", str(dest))
    assert r.returncode == 1, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists() and (not dest.exists() or not any(dest.iterdir()))


def test_import_refuses_a_symlink_entry(tmp_path):
    def build(zf):
        zf.writestr("pdf/SKILL.md", b"---\nname: pdf\ndescription: d\n---\n")
        info = zipfile.ZipInfo("pdf/evil")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    r = run_skillc("import", str(hostile(tmp_path, "l.zip", build)), "--into", str(tmp_path / "d"))
    assert r.returncode == 1 and "symbolic link" in r.stderr


def test_import_refuses_lint_errors_and_writes_nothing(tmp_path):
    path = hostile(tmp_path, "bad.zip", lambda zf: zf.writestr("pdf/SKILL.md", b"no frontmatter at all\n"))
    dest = tmp_path / "dest"
    r = run_skillc("import", str(path), "--into", str(dest))
    assert r.returncode == 1 and "lint error" in r.stderr
    assert not dest.exists()  # (created for the import, removed with it)
    dest.mkdir()
    r = run_skillc("import", str(path), "--into", str(dest))
    assert r.returncode == 1 and list(dest.iterdir()) == []


def test_export_several_ids_from_a_directory(tmp_path):
    repo = tmp_path / "repo"
    write_skill(repo, "extraction/email")
    write_skill(repo, "formatting/markdown")
    write_skill(repo, "other/email")
    out = tmp_path / "two.zip"
    r = run_skillc("export", str(repo), "extraction/email", "formatting/markdown", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "Claude.ai accepts one skill per zip" in r.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["email/SKILL.md", "markdown/SKILL.md"]
    r = run_skillc("export", str(repo), "extraction/email", "other/email", "-o", str(tmp_path / "x.zip"))
    assert r.returncode == 2 and "both be the folder 'email'" in r.stderr
    r = run_skillc("export", str(repo), "nope/missing", "-o", str(tmp_path / "y.zip"))
    assert r.returncode == 2 and "not found" in r.stderr and "extraction/email" in r.stderr


def test_export_takes_an_id_given_twice_once(tmp_path):
    """The same ID twice (or as `a/b/`) is one skill, not two folders that clash."""
    repo = tmp_path / "repo"
    write_skill(repo, "extraction/email")
    out = tmp_path / "one.zip"
    r = run_skillc("export", str(repo), "extraction/email", "extraction/email/", "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["skills"] == ["extraction/email"]
    assert "top-level folders" not in r.stderr  # (one folder: no note about several)
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["email/SKILL.md"]


@pytest.mark.parametrize("command", ["pack", "export"])
def test_an_output_that_cannot_be_written_is_one_line_not_an_internal_error(tmp_path, command):
    """-o below a file (or in a read-only folder, on a full disk): the environment, exit 1 naming it."""
    repo = tmp_path / "repo"
    write_skill(repo, "tools/pdf")
    (tmp_path / "afile").write_text("not a folder")
    dest = tmp_path / "afile" / "sub" / "pdf.zip"
    args = ["pack", str(repo / "tools/pdf")] if command == "pack" else ["export", str(repo), "tools/pdf"]
    r = run_skillc(*args, "-o", str(dest))
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == f"skillc: error: cannot write {dest}: {tmp_path / 'afile'} is not a folder"
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_export_from_a_skills_toml(tmp_path):
    low, high = tmp_path / "low", tmp_path / "high"
    write_skill(low, "tools/pdf", description="Low version. Use when asked.")
    write_skill(high, "tools/pdf", description="High version. Use when asked.")
    (tmp_path / "skills.toml").write_text(
        f'[[repositories]]\nname = "low"\ntype = "filesystem"\npath = "{low}"\ntier = "builtin"\n'
        f'[[repositories]]\nname = "high"\ntype = "filesystem"\npath = "{high}"\n')
    out = tmp_path / "pdf.zip"
    r = run_skillc("export", str(tmp_path / "skills.toml"), "tools/pdf", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as zf:
        assert b"High version" in zf.read("pdf/SKILL.md")


def test_import_skips_vcs_and_build_folders(tmp_path):
    """A .git/ folder in an archive could run commands in the next `git status`; nothing below the
    folders discovery skips is extracted (lint would never see it)."""
    def build(zf):
        zf.writestr(".git/SKILL.md", b"---\nname: Not Valid!!\n---\n")
        zf.writestr(".git/config", b'[core]\n\tfsmonitor = "touch PWNED; false"\n')
        zf.writestr("pdf/SKILL.md", b"---\nname: pdf\ndescription: Reads PDFs. Use when asked.\n---\nBody.\n")
        zf.writestr("pdf/node_modules/x/creds.txt", b"token\n")
        zf.writestr("pdf/.GIT/config", b"[core]\n")  # (is .git/ on a case-insensitive file system)
        zf.writestr("pdf/build/out.txt", b"x\n")
        zf.writestr("pdf/Build/notes.md", b"kept: discovery skips build/, not Build/\n")
    dest = tmp_path / "dest"
    r = run_skillc("import", str(hostile(tmp_path, "vcs.zip", build)), "--into", str(dest), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["skills"] == ["pdf"]
    assert sorted(summary["skipped"]) == [".git/SKILL.md", ".git/config", "pdf/.GIT/config", "pdf/build/out.txt",
                                          "pdf/node_modules/x/creds.txt"]
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "pdf", "pdf/Build", "pdf/Build/notes.md", "pdf/SKILL.md"]


def test_pack_and_export_scan_large_and_binary_files(tmp_path):
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    d = write_skill(tmp_path / "skills", "sec").parent
    (d / "big.txt").write_text("lorem ipsum\n" * 800_000 + token + "\n")  # over 9 MB
    r = run_skillc("pack", str(d), "--profile", "recommended", "-o", str(tmp_path / "s.zip"))
    assert r.returncode == 1 and "sec/big.txt:800001:1: possible github-token" in r.stderr
    (d / "big.txt").unlink()
    (d / "c.bin").write_bytes(b"\x00\x01\n" + token.encode() + b"\n")
    r = run_skillc("export", str(tmp_path / "skills"), "sec", "-o", str(tmp_path / "e.zip"))
    assert r.returncode == 1 and "sec/c.bin:2:1: possible github-token" in r.stderr
    assert not (tmp_path / "s.zip").exists() and not (tmp_path / "e.zip").exists()


def test_pack_refuses_to_write_into_the_skill_or_a_name_import_refuses(tmp_path):
    d = write_skill(tmp_path / "skills", "pdf").parent
    for inside in ("pdf/self.zip", "pdf/SKILL.md"):
        r = run_skillc("pack", str(d), "-o", str(tmp_path / "skills" / inside))
        assert r.returncode == 2 and "inside the skill folder it packs" in r.stderr
    assert (d / "SKILL.md").read_text().startswith("---\n") and not (d / "self.zip").exists()
    odd = write_skill(tmp_path, "x:y", name="x-y").parent
    r = run_skillc("pack", str(odd), "-o", str(tmp_path / "a.zip"))
    assert r.returncode == 1 and "contains a control character or one of" in r.stderr
    path = hostile(tmp_path, "c.zip", lambda zf: zf.writestr("x:y/SKILL.md", b"---\nname: a\n---\n"))
    r = run_skillc("import", str(path), "--into", str(tmp_path / "out"))
    assert r.returncode == 1 and "absolute path" not in r.stderr and "one of" in r.stderr


def test_export_from_a_bundle_takes_the_skills_archive(tmp_path):
    repo = tmp_path / "repo"
    d = write_skill(repo, "tools/pdf").parent
    (d / "ref.md").write_text("reference\n")
    r = run_skillc("build", str(repo), "--out", str(tmp_path / "dist"), "--no-site",
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "pdf.zip"
    r = run_skillc("export", str(tmp_path / "dist"), "tools/pdf", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["pdf/SKILL.md", "pdf/ref.md"]
        assert zf.read("pdf/SKILL.md") == (d / "SKILL.md").read_bytes()
    r = run_skillc("export", str(tmp_path / "dist"), "../../etc", "-o", str(tmp_path / "x.zip"))
    assert r.returncode == 2 and "is not a skill ID" in r.stderr
    # a bundle whose manifest is not a skillc manifest (truncated by a failed copy): the skills are
    # still exported, under the names the manifest would have given, never a traceback
    (tmp_path / "dist" / "api" / "manifest.json").write_text('{"kind": "skillc-bun', encoding="utf-8")
    out.unlink()
    r = run_skillc("export", str(tmp_path / "dist"), "tools/pdf", "-o", str(out))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["pdf/SKILL.md", "pdf/ref.md"]


# ---------------------------------------------------------------- what pack/export scan, and with which configuration

TOKEN = "ghp_" + "Zq8vR2mK7xW4pL9sT3nB6yH1cF5dJ0gA2eUo"


def _git_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()  # (the repository's top: where lint stops looking for a configuration)
    return root


def test_pack_and_export_read_the_configuration_lint_reads(tmp_path):
    """Per-path ignores are relative to the configuration's folder, found in the skill's folder or
    above it, as `skillc lint` finds and anchors them, whatever the current folder: a glob meant for
    the project's tests/ does not silence a token inside a skill, and a reviewed ignore is honoured."""
    project = _git_project(tmp_path / "project")
    d = write_skill(project / "skills", "deploy").parent
    (d / "tests").mkdir()
    (d / "tests/live.env").write_text(f"GITHUB_TOKEN={TOKEN}\n")
    (project / "skills.toml").write_text('[lint.per-path-ignores]\n"tests/*" = ["B707"]\n')
    assert run_skillc("lint", cwd=project).returncode == 1
    r = run_skillc("pack", "skills/deploy", "-o", str(tmp_path / "p.zip"), cwd=project)
    assert r.returncode == 1 and "deploy/tests/live.env:1:14:" in r.stderr, r.stderr
    r = run_skillc("export", "skills", "deploy", "-o", str(tmp_path / "e.zip"), cwd=project)
    assert r.returncode == 1 and "possible github-token" in r.stderr
    assert not (tmp_path / "p.zip").exists() and not (tmp_path / "e.zip").exists()
    # the reviewed exception, in the configuration of the skills folder
    (project / "skills.toml").unlink()
    (project / "skills/skills.toml").write_text('[lint.per-path-ignores]\n"deploy/tests/live.env" = ["B707"]\n')
    assert run_skillc("lint", "skills", cwd=project).returncode == 0
    for cwd in (project, project / "skills", tmp_path):
        r = run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"), cwd=cwd)
        assert r.returncode == 0, (cwd, r.stderr)
        r = run_skillc("export", str(project / "skills"), "deploy", "-o", str(tmp_path / "e.zip"), cwd=cwd)
        assert r.returncode == 0, (cwd, r.stderr)
    # a global ignore above the skill, found from the skill folder (not only in its parent)
    (project / "skills/skills.toml").unlink()
    (project / "skills.toml").write_text('[lint]\nignore = ["B707"]\n')
    assert run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"), cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_token_in_a_utf16_file_is_found(tmp_path, encoding):
    """Windows PowerShell writes UTF-16 by default: with or without a byte-order mark, a token in
    such a file refuses the pack (and lint reports it when the mark says what the file is)."""
    d = write_skill(tmp_path / "skills", "sec").parent
    (d / "assets").mkdir()
    (d / "assets/creds.txt").write_bytes(f"GITHUB_TOKEN={TOKEN}\r\n".encode(encoding))
    r = run_skillc("pack", str(d), "--profile", "spec", "-o", str(tmp_path / "s.zip"))
    assert r.returncode == 1 and "sec/assets/creds.txt:1:14: " in r.stderr, r.stderr
    assert r.stderr.count("possible github-token") == 1
    lint = run_skillc("lint", str(d), "--format", "json")
    found = [x for x in json.loads(lint.stdout)["diagnostics"] if x["code"] == "B707"]
    assert len(found) == (1 if encoding == "utf-16" else 0)


def test_pack_lints_the_whole_folder_and_names_nested_skills_it_leaves_out(tmp_path):
    d = write_skill(tmp_path / "skills", "dang", body="See [guide](references/guide.md).\n").parent
    (d / "references").mkdir()
    os.symlink("missing.md", d / "references/guide.md")
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "d.zip"))
    assert r.returncode == 1 and "D102" in r.stderr and not (tmp_path / "d.zip").exists()
    (d / "references/guide.md").unlink()
    (d / "references/guide.md").write_text("guide\n")
    write_skill(d, "helper")
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "d.zip"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nested_skills_left_out"] == ["helper"]
    assert json.loads(r.stdout)["files"] == ["dang/SKILL.md", "dang/references/guide.md"]


def test_pack_refuses_a_folder_of_skills_instead_of_packing_one_of_them(tmp_path):
    """`skillc pack skills` (a folder holding skills, no SKILL.md of its own) packed the first skill
    below it into `skills.zip`, exit 0, as if it were the folder: it is not one skill folder."""
    write_skill(tmp_path / "skills", "alpha")
    write_skill(tmp_path / "skills", "beta")
    r = run_skillc("pack", "skills", "-o", str(tmp_path / "s.zip"), cwd=tmp_path)
    assert r.returncode == 2 and "no SKILL.md directly inside" in r.stderr, (r.returncode, r.stdout, r.stderr)
    assert not (tmp_path / "s.zip").exists()
    r = run_skillc("pack", "skills/alpha", "-o", str(tmp_path / "a.zip"), cwd=tmp_path)  # (one skill: packed)
    assert r.returncode == 0, r.stderr
    assert zipfile.ZipFile(tmp_path / "a.zip").namelist() == ["alpha/SKILL.md"]


def test_pack_and_export_never_write_what_import_refuses_or_drops(tmp_path):
    skills = tmp_path / "skills"
    both = write_skill(skills, "both").parent
    (both / "skill.md").write_text("lower-case twin\n")
    aux = write_skill(skills, "aux").parent
    cov = write_skill(tmp_path / "other", "coverage").parent
    colon = write_skill(skills, "colon").parent
    (colon / "notes:v2.md").write_text("x\n")
    for args, words in (
        (("pack", str(both)), "collide"),
        (("pack", str(aux)), "reserved device name"),
        (("pack", str(cov)), "below a folder that discovery skips"),
        (("export", str(skills), "colon"), "one of"),
    ):
        r = run_skillc(*args, "-o", str(tmp_path / "x.zip"))
        assert r.returncode == 1 and words in r.stderr and "import" in r.stderr, (args, r.stderr)
        assert not (tmp_path / "x.zip").exists()
    # a name that is not UTF-8: refused by name, never an internal error
    bad = write_skill(skills, "badname").parent
    (bad / "caf\udce9.md").write_bytes(b"x")
    for args in (("pack", str(bad)), ("export", str(skills), "badname")):
        r = run_skillc(*args, "-o", str(tmp_path / "x.zip"))
        assert r.returncode == 1 and "caf\\xe9.md" in r.stderr and "not a UTF-8 name" in r.stderr, r.stderr


def test_round_trip_keeps_folders_discovery_does_not_skip(tmp_path):
    d = write_skill(tmp_path / "skills", "rt").parent
    (d / "Build").mkdir()
    (d / "Build/notes.md").write_text("a\n")
    assert run_skillc("pack", str(d), "-o", str(tmp_path / "rt.zip")).returncode == 0
    r = run_skillc("import", str(tmp_path / "rt.zip"), "--into", str(tmp_path / "imp"))
    assert r.returncode == 0 and "skipped" not in r.stderr, r.stderr
    assert (tmp_path / "imp/rt/Build/notes.md").read_text() == "a\n"


@pytest.mark.parametrize("names, words", [
    (["s/Refs/a.md", "s/refs/b.md"], "differ only by case"),
    (["s/caf\u00e9.md", "s/cafe\u0301.md"], "Unicode normalization"),
    (["s/" + "a" * 300 + ".md"], "file systems stop at 255"),
    (["s/" + "/".join(["d" * 200] * 6) + "/x.md"], "more than 1024 bytes"),
])
def test_import_refuses_names_a_file_system_would_merge_or_refuse(tmp_path, names, words):
    def build(zf):
        zf.writestr("s/SKILL.md", b"---\nname: s\ndescription: Does s. Use when asked for s.\n---\nBody.\n")
        for n in names:
            zf.writestr(n, b"x\n")
    into = tmp_path / "into"
    r = run_skillc("import", str(hostile(tmp_path, "n.zip", build)), "--into", str(into))
    assert r.returncode == 1 and words in r.stderr and "internal error" not in r.stderr, r.stderr
    assert not into.exists()  # (refused before anything was written)


def test_a_failed_import_into_a_new_folder_leaves_nothing(tmp_path):
    path = hostile(tmp_path, "bad.zip", lambda zf: zf.writestr("bad/SKILL.md", b"---\nname: Not Valid!!\n---\n"))
    r = run_skillc("import", str(path), "--into", str(tmp_path / "new/skills"))
    assert r.returncode == 1 and "not imported" in r.stderr
    assert not (tmp_path / "new/skills").exists()


def test_a_forced_import_that_fails_half_way_puts_everything_back(tmp_path, monkeypatch):
    """A folder that cannot be moved in (a mount point answers EBUSY; injected here, as mounting needs
    privileges) undoes the folders moved before it: DIR is as it was, and the error is exit 1."""
    import errno

    from click.testing import CliRunner

    from skillc.cli.main import cli

    def build(zf):
        for n in "ab":
            zf.writestr(f"{n}/SKILL.md", f"---\nname: {n}\ndescription: New {n}. Use when asked.\n---\n# new\n")
    into = tmp_path / "into"
    for n in "ab":
        write_skill(into, n, description=f"Old {n}. Use when asked.")
    before = {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*") if p.is_file()}
    real_replace = os.replace

    def flaky(src, dst, *args, **kwargs):
        if os.fspath(src) == os.fspath(into / "b"):
            raise OSError(errno.EBUSY, "Device or resource busy", os.fspath(src))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", flaky)
    result = CliRunner().invoke(cli, ["import", str(hostile(tmp_path, "ab.zip", build)), "--into", str(into),
                                      "--force"], standalone_mode=False)
    monkeypatch.undo()
    assert "is as it was" in str(result.exception) and result.exception.exit_code == 1
    after = {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in into.iterdir()) == ["a", "b"]  # (no staging folder left)


def test_a_killed_import_leaves_nothing_lint_build_or_the_next_import_would_see(tmp_path):
    """The staging folder lives in DIR/.skillc-build/, which discovery skips; the next import removes
    what a killed one left; SIGTERM unwinds like Ctrl-C (exit 143)."""
    import signal
    import subprocess
    import time

    from conftest import skillc_command

    into = tmp_path / "skills"
    write_skill(into, "real")
    leftover = into / ".skillc-build/import.tmp-dead/skills/half"
    write_skill(leftover.parent, "half")
    r = run_skillc("lint", str(into), "--format", "json")
    assert json.loads(r.stdout)["summary"]["skills"] == 1
    r = run_skillc("build", str(into), "--out", str(tmp_path / "dist"), "--no-site", "--json",
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert [s["id"] for s in json.loads((tmp_path / "dist/api/skills.json").read_text())["skills"]] == ["real"]
    path = hostile(tmp_path, "ok.zip", lambda zf: zf.writestr(
        "ok/SKILL.md", b"---\nname: ok\ndescription: Does ok. Use when asked.\n---\nBody.\n"))
    assert run_skillc("import", str(path), "--into", str(into)).returncode == 0
    assert sorted(p.name for p in into.iterdir()) == ["ok", "real"]
    # SIGTERM while the archive is being opened (a FIFO nobody writes: the command waits there)
    fifo = tmp_path / "slow.zip"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*skillc_command(), "import", str(fifo), "--into", str(into)],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while True:  # a writer can open the FIFO once skillc has it open for reading; then its read waits
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    os.close(writer)
    assert proc.returncode == 143 and err.strip().endswith("Terminated."), err


def _one_skill_zip(tmp_path: Path, name: str, body: str = "Body.\n") -> Path:
    return hostile(tmp_path, f"{name}.zip", lambda zf: zf.writestr(
        f"{name}/SKILL.md", f"---\nname: {name}\ndescription: Does {name}. Use when asked.\n---\n{body}"))


def test_a_signal_during_a_forced_import_waits_for_the_renames(tmp_path, monkeypatch):
    """SIGTERM (or Ctrl-C) while the skills are moved in is delivered after the last rename: DIR
    holds all the new folders, never half of them and never none of one."""
    import signal

    from click.testing import CliRunner

    from skillc.cli.main import _terminated, cli

    def build(zf):
        for n in ("a", "b", "c"):
            zf.writestr(f"{n}/SKILL.md", f"---\nname: {n}\ndescription: New {n}. Use when asked.\n---\n# new\n")
    into = tmp_path / "into"
    for n in ("a", "b", "c"):
        write_skill(into, n, description=f"Old {n}. Use when asked.")
    real_replace, sent = os.replace, []

    def replace_then_kill(src, dst, *args, **kwargs):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # (held: it waits for the renames)
        return real_replace(src, dst, *args, **kwargs)

    old_handler = signal.signal(signal.SIGTERM, _terminated)
    try:
        monkeypatch.setattr(os, "replace", replace_then_kill)
        result = CliRunner().invoke(cli, ["import", str(hostile(tmp_path, "abc.zip", build)), "--into", str(into),
                                          "--force"], standalone_mode=False)
        monkeypatch.undo()
    finally:
        signal.signal(signal.SIGTERM, old_handler)
    assert sent and result.exception is not None  # (the signal unwound the command afterwards)
    assert sorted(p.name for p in into.iterdir()) == ["a", "b", "c"]
    assert {n: "New" in (into / n / "SKILL.md").read_text() for n in "abc"} == {"a": True, "b": True, "c": True}


def test_a_failed_import_never_removes_what_another_import_put_in_the_new_folder(tmp_path):
    """Import A creates DIR and waits (its --config is a FIFO); import B fills DIR; A then fails its
    lint: DIR and B's skill stay."""
    import subprocess

    from conftest import skillc_command

    bad = hostile(tmp_path, "bad.zip", lambda zf: zf.writestr("bad/SKILL.md", b"---\nname: Not Valid!!\n---\n"))
    into = tmp_path / "dest"
    cfg = tmp_path / "cfg.toml"
    os.mkfifo(cfg)
    a = subprocess.Popen([*skillc_command(), "import", str(bad), "--into", str(into), "--config", str(cfg)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        writer = None
        for _ in range(600):  # until A has DIR made and opens the FIFO
            try:
                writer = os.open(cfg, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert a.poll() is None
                import time

                time.sleep(0.05)
        assert writer is not None and into.is_dir()
        r = run_skillc("import", str(_one_skill_zip(tmp_path, "s1")), "--into", str(into))
        assert r.returncode == 0, r.stderr
        os.write(writer, b"")
        os.close(writer)
        _, err = a.communicate(timeout=60)
    finally:
        if a.poll() is None:
            a.kill()
    assert a.returncode == 1 and "not imported" in err, err
    assert (into / "s1/SKILL.md").is_file()


def test_pack_ignores_lint_errors_of_nested_skills_it_leaves_out_and_names_with_colons(tmp_path):
    parent = write_skill(tmp_path / "n", "parent").parent
    (parent / "experimental").mkdir()
    (parent / "experimental/SKILL.md").write_text("---\nname: Experimental_WIP\ndescription: [todo\n---\nwip\n")
    r = run_skillc("pack", str(parent), "-o", str(tmp_path / "p.zip"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nested_skills_left_out"] == ["experimental"]
    # a likely secret in a file whose name holds a colon: refused cleanly, never an internal error
    colon = write_skill(tmp_path / "c", "colon").parent
    (colon / "references").mkdir()
    (colon / "references/notes:v2.txt").write_text(f"GITHUB_TOKEN={TOKEN}\n")
    r = run_skillc("pack", str(colon), "-o", str(tmp_path / "c.zip"))
    assert r.returncode == 1 and "internal error" not in r.stderr and "possible github-token" in r.stderr, r.stderr


def test_an_entry_name_import_refuses_is_named_with_its_archive(tmp_path):
    """Every refusal names the archive (`<zip>: entry …`), a bad entry name too (it did not)."""
    bad = tmp_path / "old-bundle-colon.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("colon/SKILL.md", "---\nname: colon\ndescription: Does c. Use when c.\n---\n# C\n")
        zf.writestr("colon/a:b.txt", "x\n")
    r = run_skillc("import", str(bad), "--into", str(tmp_path / "in"))
    assert r.returncode == 1 and f"{bad}: entry 'colon/a:b.txt'" in r.stderr, r.stderr


@pytest.mark.parametrize("extra", ["license: 3\n", "allowed-tools: 42\n"])
def test_pack_refuses_what_import_would_refuse_under_its_own_profile(tmp_path, extra):
    """`--profile claude` (pack's default) does not check `license` or `allowed-tools`, but `skillc
    import` lints with `recommended`, where they are errors: the archive pack wrote was refused by
    import. Pack refuses it, naming the profile that shows the errors."""
    d = write_skill(tmp_path / "skills", "pdf", frontmatter="name: pdf\ndescription: Reads PDF files. "
                    f"Use when the user asks about a PDF.\n{extra}").parent
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"))
    assert r.returncode == 1 and "`skillc import` would refuse" in r.stderr, r.stderr
    assert "--profile recommended" in r.stderr and not (tmp_path / "p.zip").exists()
    assert run_skillc("import", str(_zip_of(tmp_path, d)), "--into", str(tmp_path / "in")).returncode == 1
    (d / "SKILL.md").write_text(write_skill(tmp_path / "ok", "pdf").read_text())
    assert run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip")).returncode == 0
    assert run_skillc("import", str(tmp_path / "p.zip"), "--into", str(tmp_path / "in")).returncode == 0


def _zip_of(tmp_path: Path, skill_dir: Path) -> Path:
    """The zip pack would have written for ``skill_dir`` (its one file), to show import refuses it."""
    path = tmp_path / "by-hand.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(skill_dir / "SKILL.md", f"{skill_dir.name}/SKILL.md")
    return path


def test_a_skill_folder_named_macosx_is_neither_packed_nor_exported_empty(tmp_path):
    """Import drops `__MACOSX/` (Finder's junk): a skill folder of that name was packed and exported
    from its folder (import then found no files), exported from a bundle as an empty zip, exit 0, and
    the build published its archive."""
    d = write_skill(tmp_path / "repo", "__MACOSX", name="macosx").parent
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache")}
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"))
    assert r.returncode == 1 and "macOS junk" in r.stderr, r.stderr
    r = run_skillc("export", "repo", "__MACOSX", "-o", str(tmp_path / "f.zip"), cwd=tmp_path, env=env)
    assert r.returncode == 1 and "macOS junk" in r.stderr, r.stderr
    assert run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path, env=env).returncode == 0
    # the build publishes the skill but no archive import would find empty
    assert (tmp_path / "dist/api/files/__MACOSX/SKILL.md").is_file()
    assert not (tmp_path / "dist/api/archives/__MACOSX.zip").exists()
    r = run_skillc("export", "dist", "__MACOSX", "-o", str(tmp_path / "b.zip"), cwd=tmp_path, env=env)
    assert r.returncode == 1 and "macOS junk" in r.stderr, r.stderr
    assert not any((tmp_path / z).exists() for z in ("p.zip", "f.zip", "b.zip"))


def _raw_names(path: Path, names: dict[bytes, bytes]) -> Path:
    """Rewrite entry names byte for byte (same length), without the UTF-8 flag Python's writer sets
    for a non-ASCII name: as Info-ZIP's `zip` on Linux and macOS's Finder write them."""
    data = path.read_bytes()
    for placeholder, raw in names.items():
        assert len(placeholder) == len(raw) and placeholder in data
        data = data.replace(placeholder, raw)
    path.write_bytes(data)
    return path


def test_a_utf8_name_without_the_utf8_flag_is_read_as_utf8(tmp_path):
    """`zip -r pdf.zip pdf` (Info-ZIP) and Finder store UTF-8 names without the flag: they were read
    as code page 437 and `café.md` was imported as `caf├⌐.md` (the skill's links to it broken).  A
    name that is not UTF-8 is code page 437, as the zip standard says."""
    def build(zf):
        zf.writestr("pdf/SKILL.md", b"---\nname: pdf\ndescription: Does pdf. Use when asked.\n---\n"
                                    b"See [it](references/caf\xc3\xa9.md).\n")
        zf.writestr("pdf/references/cafXX.md", b"utf-8\n")
        zf.writestr("pdf/references/dosY.md", b"cp437\n")
    path = _raw_names(hostile(tmp_path, "infozip.zip", build),
                      {b"cafXX.md": "café.md".encode("utf-8"), b"dosY.md": b"dos\x82.md"})  # (0x82: é in cp437)
    assert {e.name for e in check_zip(path).entries} == {"pdf/SKILL.md", "pdf/references/café.md",
                                                         "pdf/references/dosé.md"}
    into = tmp_path / "into"
    r = run_skillc("import", str(path), "--into", str(into))
    assert r.returncode == 0 and "B704" not in r.stderr, r.stderr
    assert (into / "pdf/references/café.md").read_bytes() == b"utf-8\n"
    assert (into / "pdf/references/dosé.md").read_bytes() == b"cp437\n"


def test_a_git_file_is_neither_imported_nor_packed(tmp_path):
    """A `.git` file (a submodule's `gitdir:` pointer) makes git use the folder it names: a `.git`
    file pointing into the archive ran its config's core.fsmonitor on the next `git status` in the
    skill, past the skipped `.git/` folders; pack put a submodule's pointer into the archive."""
    def build(zf):
        zf.writestr("pdf/SKILL.md", b"---\nname: pdf\ndescription: Does pdf. Use when asked.\n---\nBody.\n")
        zf.writestr("pdf/.git", b"gitdir: references/g\n")
        zf.writestr("pdf/sub/.GIT", b"gitdir: ../references/g\n")
        zf.writestr("pdf/references/g/notes.md", b"kept\n")
    listing = check_zip(hostile(tmp_path, "g.zip", build))
    assert [e.name for e in listing.entries] == ["pdf/SKILL.md", "pdf/references/g/notes.md"]
    assert listing.skipped == ("pdf/.git", "pdf/sub/.GIT")
    d = write_skill(tmp_path / "repo", "sub").parent
    (d / ".git").write_text("gitdir: ../.git/modules/sub\n")
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(tmp_path / "p.zip") as zf:
        assert zf.namelist() == ["sub/SKILL.md"]


def test_import_never_stages_through_a_linked_work_folder(tmp_path):
    """`DIR/.skillc-build` a link (a cloned repository can hold one): import staged the skills where
    it points, outside DIR, and removed `import.tmp-*` folders there."""
    into, elsewhere = tmp_path / "into", tmp_path / "elsewhere"
    (elsewhere / "import.tmp-theirs").mkdir(parents=True)
    into.mkdir()
    (into / ".skillc-build").symlink_to(elsewhere)
    r = run_skillc("import", str(_one_skill_zip(tmp_path, "pdf")), "--into", str(into))
    assert r.returncode == 1 and "symbolic link" in r.stderr and "internal error" not in r.stderr, r.stderr
    assert [p.name for p in elsewhere.iterdir()] == ["import.tmp-theirs"]
    assert sorted(p.name for p in into.iterdir()) == [".skillc-build"]


@pytest.mark.parametrize("root", ["pdf/", "pdf/assets/repo/"])
def test_a_folder_laid_out_as_a_git_repository_is_refused(tmp_path, root):
    """HEAD, objects/ and refs/ make a folder a (bare) git repository to git: `git status` run in it
    (a shell prompt runs one on `cd`) read its config, whose core.fsmonitor runs a command, past the
    skipped `.git/` folders.  Pack refuses to write one, as import refuses it."""
    def build(zf):
        zf.writestr("pdf/SKILL.md", b"---\nname: pdf\ndescription: Does pdf. Use when asked.\n---\nBody.\n")
        zf.writestr(root + "HEAD", b"ref: refs/heads/main\n")
        zf.writestr(root + "config", b"[core]\n\tworktree = .\n\tfsmonitor = touch pwned\n")
        zf.writestr(root + "objects/info/x", b"")
        zf.writestr(root + "refs/heads/x", b"")
    into = tmp_path / "into"
    r = run_skillc("import", str(hostile(tmp_path, "bare.zip", build)), "--into", str(into))
    assert r.returncode == 1 and f"{root.rstrip('/')!r} is laid out as a git repository" in r.stderr, r.stderr
    assert not into.exists()
    d = write_skill(tmp_path / "repo", "pdf").parent
    for rel in ("HEAD", "config", "objects/info/x", "refs/heads/x"):
        (d / root[4:] / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / root[4:] / rel).write_text("ref: refs/heads/main\n" if rel == "HEAD" else "")
    r = run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip"))
    assert r.returncode == 1 and "laid out as a git repository" in r.stderr and not (tmp_path / "p.zip").exists()
    (d / root[4:] / "HEAD").unlink()  # (objects/ and refs/ alone are not a repository)
    assert run_skillc("pack", str(d), "-o", str(tmp_path / "p.zip")).returncode == 0
