"""The embedded repository skills/ and `skillc new`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_skillc

PROJECT = Path(__file__).resolve().parents[3]


def test_embedded_skills_pass_the_spec_profile_strictly():
    proc = run_skillc("lint", "skills", "--profile", "spec", "--strict", cwd=PROJECT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_skillc("lint", "skills", "--strict", cwd=PROJECT)  # and the default profile
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_embedded_skills_have_real_bodies_and_a_nested_collection():
    skills = sorted((PROJECT / "skills").rglob("SKILL.md"))
    assert 5 <= len(skills) <= 8
    for s in skills:
        body = s.read_text("utf-8").split("---", 2)[2]
        assert body.count("\n") >= 20 and "skillc " in body, s
    collections = sorted(p.parent.relative_to(PROJECT / "skills").as_posix()
                         for p in (PROJECT / "skills").rglob("COLLECTION.md"))
    assert any("/" in c for c in collections)  # a collection inside a collection
    for c in collections:
        text = (PROJECT / "skills" / c / "COLLECTION.md").read_text("utf-8").strip()
        assert text and "\n" not in text  # one line of prose


def test_embedded_skills_use_real_commands_and_flags():
    from skillc.cli.lint import lint
    from skillc.cli.main import COMMANDS

    flags = {o for p in lint.params for o in getattr(p, "opts", [])}
    import re

    for s in (PROJECT / "skills").rglob("*.md"):
        text = s.read_text("utf-8")
        for cmd in re.findall(r"(?:^\s*|`)skillc ([a-z]+)", text, re.MULTILINE):  # commands in code, not prose
            assert cmd in COMMANDS, (s, cmd)
        for line in re.findall(r"skillc lint[^\n`]*", text):
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", line):
                assert flag in flags, (s, flag)


def test_new_creates_a_skill_that_lints_clean(tmp_path: Path):
    proc = run_skillc("new", "skills/data/csv-cleanup", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "skills" / "data" / "csv-cleanup" / "SKILL.md"
    assert target.read_text("utf-8").startswith("---\nname: csv-cleanup\ndescription: '")
    lint = run_skillc("lint", "skills", "--profile", "spec", "--strict", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout
    proc = run_skillc("new", "x/y", "-d", "Use when: it's needed", cwd=tmp_path)
    assert "description: 'Use when: it''s needed'" in (tmp_path / "x" / "y" / "SKILL.md").read_text()
    assert run_skillc("lint", "x", "--strict", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("folder", ["my skills/csv-cleanup", "-team/csv-cleanup"])
def test_the_lint_command_new_suggests_runs_as_shown(tmp_path: Path, folder: str):
    """A folder with a space or a leading dash: the printed `skillc lint …` is one path argument."""
    import shlex

    proc = run_skillc("new", "--", folder, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    suggested = re.search(r"`(skillc lint .*)`", proc.stdout).group(1)
    words = shlex.split(suggested)
    assert len(words) == 3 and not words[2].startswith("-"), words
    lint = run_skillc(*words[1:], cwd=tmp_path)
    assert lint.returncode == 0 and "Checked 1 file" in lint.stdout, lint.stderr


def test_new_quotes_a_name_yaml_would_read_as_another_type(tmp_path: Path):
    """Valid names that YAML 1.1 reads as a number, boolean, null or date are written quoted, so
    the skill passes the spec (S302 wants a string); other names stay plain."""
    names = ("123", "0x1f", "017", "yes", "off", "null", "2024-01-01", "a-b")
    for name in names:
        assert run_skillc("new", f"s/{name}", cwd=tmp_path).returncode == 0, name
    assert "\nname: '123'\n" in (tmp_path / "s" / "123" / "SKILL.md").read_text("utf-8")
    assert "\nname: a-b\n" in (tmp_path / "s" / "a-b" / "SKILL.md").read_text("utf-8")
    assert "\n# 123\n" in (tmp_path / "s" / "123" / "SKILL.md").read_text("utf-8")  # the title is not quoted
    lint = run_skillc("lint", "s", "--profile", "spec", "--strict", cwd=tmp_path)
    assert lint.returncode == 0 and f"Checked {len(names)} files" in lint.stdout, lint.stdout


def test_new_notes_a_folder_reached_through_a_symbolic_link(tmp_path: Path):
    """Discovery never follows a link (D104 outside the repository), so a skill written through one
    is invisible to `skillc lint` and `skillc build`: say so."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "repo" / "skills").mkdir(parents=True)
    (tmp_path / "repo" / "skills" / "link").symlink_to(tmp_path / "outside")
    proc = run_skillc("new", "skills/link/csv", cwd=tmp_path / "repo")
    assert proc.returncode == 0 and (tmp_path / "outside" / "csv" / "SKILL.md").is_file()
    assert "note: skills/link is a symbolic link, which discovery does not follow" in proc.stderr
    proc = run_skillc("new", "skills/plain", cwd=tmp_path / "repo")
    assert proc.returncode == 0 and "note:" not in proc.stderr


@pytest.mark.parametrize("description", ["", "   "])
def test_new_refuses_a_blank_description(tmp_path: Path, description: str):
    """`-d ""` is not the placeholder, and `-d "  "` is not a description (S310): an error, nothing written."""
    proc = run_skillc("new", "s/x", "-d", description, cwd=tmp_path)
    assert proc.returncode == 2 and "not all blank" in proc.stderr, proc.stderr
    assert not (tmp_path / "s").exists()


def test_new_refuses_a_description_that_is_not_utf8_and_writes_nothing(tmp_path: Path):
    """`-d $'\\xff'` (an argument that is not UTF-8, which Python holds as a lone surrogate) was an
    internal error raised while writing, which left an empty SKILL.md that `skillc new` then refused
    to overwrite: one clear error now, and nothing written."""
    proc = run_skillc("new", "s/x", "-d", "caf\udcff", cwd=tmp_path)  # (passed on as the byte 0xff)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert not (tmp_path / "s").exists()


def test_new_usage_names_the_argument_id_as_its_help_and_errors_do(tmp_path: Path):
    """The usage line read `SKILL_ID` while the help explains ID and an error says `Invalid value for ID`."""
    usage = run_skillc("new", "--help").stdout.splitlines()[0]
    assert usage == "Usage: skillc new [OPTIONS] ID", usage
    err = run_skillc("new", "", cwd=tmp_path).stderr
    assert "Usage: skillc new [OPTIONS] ID" in err and "Invalid value for ID" in err, err


def test_new_refuses_to_overwrite_and_bad_names(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "skill.md").write_text("mine\n")
    proc = run_skillc("new", "a", cwd=tmp_path)
    assert proc.returncode == 1 and "not overwriting" in proc.stderr
    assert (tmp_path / "a" / "skill.md").read_text() == "mine\n"
    for bad in ("Bad_Name", "x/-lead", "x/two--hyphens", "a" * 65, "../escape"):
        proc = run_skillc("new", bad, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    # a description that would break the frontmatter, a path through a file: clear errors, nothing written
    for description in ("a\n---\nname: evil", "x \x01 y"):
        proc = run_skillc("new", "b/c", "-d", description, cwd=tmp_path)
        assert proc.returncode == 2 and "one line of text" in proc.stderr
    (tmp_path / "f").write_text("a file")
    proc = run_skillc("new", "f/x", cwd=tmp_path)
    assert proc.returncode == 2 and "cannot create" in proc.stderr and "internal error" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "f"]
    proc = run_skillc("new", "dist/foo", cwd=tmp_path)
    assert proc.returncode == 0 and "discovery skips dist/ folders" in proc.stderr


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"^\s*```toml\n(.*?)^\s*```", text, re.MULTILINE | re.DOTALL)


def test_embedded_skills_toml_snippets_are_valid_configuration(tmp_path: Path):
    """Every ```toml block of the embedded skills loads: a [lint] table as lint reads it, a
    [[repositories]] list as a build reads it (an agent copies them as they are)."""
    from skillc.config.build import load_build_config

    blocks = [(s, b) for s in sorted((PROJECT / "skills").rglob("*.md")) for b in _toml_blocks(s.read_text("utf-8"))]
    assert len(blocks) >= 3
    for n, (source, block) in enumerate(blocks):
        folder = tmp_path / f"c{n}"
        (folder / "skills").mkdir(parents=True)
        (folder / "skills.toml").write_text(block, "utf-8")
        if "[[repositories]]" in block:
            config = load_build_config([], None, cwd=folder, home=tmp_path / "home", env={})
            assert [r.name for r in config.repositories], source
        else:
            proc = run_skillc("lint", "skills", cwd=folder)
            assert proc.returncode == 0, (source, proc.stdout + proc.stderr)


def test_embedded_skills_name_the_bundle_files_a_build_writes(tmp_path: Path):
    """The bundle paths the publishing skills name (`dist/_routing/nginx.conf`, `dist/_redirects`,
    `api/skills/quality%2Flint-skills`…) are files of the embedded skills' own bundle."""
    proc = run_skillc("build", "--out", str(tmp_path / "dist"), "--no-site", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    named = set()
    for s in (PROJECT / "skills" / "publishing").rglob("SKILL.md"):
        for path in re.findall(r"`((?:dist/|api/|\.well-known/)[^`<>\s]*)`", s.read_text("utf-8")):
            named.add(path.removeprefix("dist/").rstrip("/"))
    assert {"_routing/nginx.conf", "_redirects", "api/skills/quality%2Flint-skills"} <= named
    for path in sorted(named):
        assert (tmp_path / "dist" / path).exists(), path
    # The nginx file is a whole server block (to include in nginx's http block, not in a server).
    assert "\nserver {" in (tmp_path / "dist" / "_routing" / "nginx.conf").read_text("utf-8")
