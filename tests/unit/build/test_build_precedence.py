"""What a build publishes when repositories meet: broken copies that lose, bundle paths that collide,
and a cache folder inside a repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill


def _build(tmp_path: Path, *args: str, cwd: Path | None = None, cache: Path | None = None):
    env = {"SKILLC_CACHE_DIR": str(cache or tmp_path / "cache")}
    return run_skillc("build", *args, "--no-site", "--json", cwd=cwd or tmp_path, env=env)


def _ids(bundle: Path) -> list[str]:
    return [s["id"] for s in json.loads((bundle / "api/skills.json").read_text())["skills"]]


def test_a_broken_copy_that_loses_does_not_stop_the_copy_that_wins(tmp_path):
    write_skill(tmp_path / "hi", "foo", description="The good override. Use when asked for foo.")
    write_skill(tmp_path / "lo", "foo", frontmatter="name: foo\n")  # no description: S309, an error
    r = _build(tmp_path, "hi", "lo", "--out", "dist")
    assert r.returncode == 0, r.stderr
    assert _ids(tmp_path / "dist") == ["foo"]
    doc = json.loads((tmp_path / "dist/api/skills/foo").read_text())
    assert doc["description"] == "The good override. Use when asked for foo."
    assert json.loads(r.stdout)["errors"] == 1  # (reported: the repository has an error)
    lint = json.loads((tmp_path / "dist/api/manifest.json").read_text())["lint"]
    assert [(d["code"], d["repository"]) for d in lint["diagnostics"]] == [("S309", "lo")]
    # the other way round: the copy that would win is broken, so the ID is not published at all
    # (never the shadowed copy in its place)
    r = _build(tmp_path, "lo", "hi", "--out", "dist2")
    assert r.returncode == 1 and "foo (lint errors: S309)" in r.stderr
    r = _build(tmp_path, "lo", "hi", "--out", "dist2", "--keep-going")
    assert r.returncode == 0 and _ids(tmp_path / "dist2") == []


def test_skills_that_would_write_the_same_bundle_path_are_refused(tmp_path):
    a = write_skill(tmp_path / "r1", "a").parent
    (a / "b").mkdir()
    (a / "b/x.txt").write_text("from r1 skill a\n")
    ab = write_skill(tmp_path / "r2", "a/b", name="b").parent
    (ab / "x.txt").write_text("from r2 skill a/b\n")
    r = _build(tmp_path, "r1", "r2", "--out", "d1")
    assert r.returncode == 1 and "R110" in r.stderr and "api/files/a/b/x.txt" in r.stderr, r.stderr
    failed = json.loads(r.stdout)
    assert sorted((d["skill"], d["code"]) for d in failed["diagnostics"]) == [("a", "R110"), ("a/b", "R110")]
    write_skill(tmp_path / "r3", "index.html", name="indexhtml")
    write_skill(tmp_path / "r3", "other")
    write_skill(tmp_path / "r4", "foo")
    write_skill(tmp_path / "r4", "foo.json", name="foojson")
    write_skill(tmp_path / "r5", "a")
    write_skill(tmp_path / "r5", "a.zip/x", name="x")  # (api/archives/a.zip/x.zip: a.zip is a file)
    for repo, path in (("r3", "api/skills/index.html"), ("r4", "api/skills/foo.json"), ("r5", "api/archives/a.zip")):
        r = _build(tmp_path, repo, "--out", f"d-{repo}", "--keep-going")
        assert r.returncode == 0, r.stderr
        lint = json.loads((tmp_path / f"d-{repo}/api/manifest.json").read_text())["lint"]
        assert any(d["code"] == "R110" and path in d["message"] for d in lint["diagnostics"]), lint
    assert _ids(tmp_path / "d-r3") == ["other"]
    listing = (tmp_path / "d-r3/api/skills/index.html").read_bytes()
    assert listing == (tmp_path / "d-r3/api/skills.json").read_bytes()  # the list's page, not a skill
    assert _ids(tmp_path / "d-r4") == []  # (foo and foo.json: neither wins the name)


def test_a_cache_folder_inside_a_repository_is_never_an_input(tmp_path):
    """SKILLC_CACHE_DIR inside the project (a CI cache): the checkouts of git sources in it are not
    skills of the filesystem repository around it; the bundle is the same on every build."""
    git = tmp_path / "g"
    write_skill(git / "skills", "alpha")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", *cmd], cwd=git, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    project = tmp_path / "project"
    write_skill(project, "mine")
    (project / "skills.toml").write_text(
        '[[repositories]]\nname = "here"\ntype = "filesystem"\npath = "."\n\n'
        f'[[repositories]]\nname = "g"\ntype = "git"\nurl = "file://{git}"\nskills_root = "skills"\n')
    cache = project / ".skillc-cache"
    for out in ("dist", "build"):
        r = _build(tmp_path, "--out", out, cwd=project, cache=cache)
        assert r.returncode == 0, r.stderr
        assert _ids(project / out) == ["alpha", "mine"]
    assert (cache / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    r = run_skillc("lint", ".", "--format", "json", cwd=project)
    assert json.loads(r.stdout)["summary"]["skills"] == 1  # (lint skips a tagged cache too)


def test_a_cache_folder_that_holds_an_input_is_refused_and_a_strangers_folder_never_tagged(tmp_path):
    skills = tmp_path / "skills"
    write_skill(skills, "pdf")
    r = _build(tmp_path, "skills", "--out", "dist", cache=skills)
    assert r.returncode == 1 and "holds input repository" in r.stderr, r.stderr
    assert not (skills / "CACHEDIR.TAG").exists()
    data = tmp_path / "data"
    (data / "notes.txt").parent.mkdir()
    (data / "notes.txt").write_text("mine\n")
    assert _build(tmp_path, "skills", "--out", "dist", cache=data).returncode == 0
    assert not (data / "CACHEDIR.TAG").exists()  # (someone's folder: used, never tagged)
    r = run_skillc("lint", ".", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["summary"]["skills"] == 1


def test_a_cache_folder_inside_an_input_that_cannot_be_tagged_is_refused(tmp_path):
    skills = tmp_path / "skills"
    write_skill(skills, "loc")  # (SKILLC_CACHE_DIR set to a skill folder)
    r = _build(tmp_path, "skills", "--out", "dist", cache=skills / "loc")
    assert r.returncode == 1 and "cannot be tagged" in r.stderr, r.stderr
    assert _build(tmp_path, "skills", "--out", "dist", cache=skills / ".skillc-cache").returncode == 0


def test_a_shared_name_is_reported_once_per_skill(tmp_path: Path):
    """Within one repository lint's C801 (with the line of the name) says it, and R102 does not say
    it again (openclaw printed 449 C801 and 440 R102 lines for the same clashes); across
    repositories, where C801 cannot see it, R102 does."""
    for rel in ("one/a/x", "one/b/x", "two/c/y"):
        write_skill(tmp_path / rel.split("/")[0], rel.split("/", 1)[1])
    write_skill(tmp_path / "three", "d/y")
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache")}
    r = run_skillc("build", "one", "two", "three", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    codes = sorted(line.split(" ")[1] + " " + line.split(":")[1] for line in r.stderr.splitlines()
                   if " C801 " in line or " R102 " in line)
    assert codes == ["C801 a/x/SKILL.md", "C801 b/x/SKILL.md", "R102 c/y/SKILL.md", "R102 d/y/SKILL.md"], r.stderr


def test_a_broken_winner_still_records_the_copy_it_shadows(tmp_path: Path):
    """--keep-going leaves out an ID whose winning copy is broken, never publishing the shadowed one
    in its place; the shadowing is recorded all the same (manifest, R101, the summary), and an ID
    left out for holding a secret is shown redacted there."""
    token = "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
    write_skill(tmp_path / "low", "tools/lint")
    write_skill(tmp_path / "low", f"keys/{token}", name="tokdir")
    (tmp_path / "high/tools/lint").mkdir(parents=True)
    (tmp_path / "high/tools/lint/SKILL.md").write_text("---\nname: lint\n---\n\nBroken: no description.\n")
    write_skill(tmp_path / "high", f"keys/{token}", name="tokdir")
    (tmp_path / "skills.toml").write_text(
        '[[repositories]]\nname = "low"\ntype = "filesystem"\npath = "low"\npriority = 220\n'
        '[[repositories]]\nname = "high"\ntype = "filesystem"\npath = "high"\npriority = 260\n')
    r = run_skillc("build", "--out", "out", "--no-site", "--keep-going", "--json", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["skills"] == 0 and summary["shadowed"] == 2 and len(summary["excluded"]) == 2
    manifest = json.loads((tmp_path / "out/api/manifest.json").read_text())
    assert [(s["id"], s["winner"], s["loser"]) for s in manifest["shadowing"]] == [
        ("keys/[REDACTED:github-token]", "high", "low"), ("tools/lint", "high", "low")]
    assert token not in (tmp_path / "out/api/manifest.json").read_text()
    r = run_skillc("build", "--out", "out", "--no-site", "--keep-going", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert "R101 skill 'tools/lint' from repository 'high' (priority 260) shadows the one from 'low'" in r.stderr
    assert token not in r.stderr + r.stdout


def test_two_repositories_on_one_folder_are_linted_apart(tmp_path: Path):
    """Splitting one folder into tiers (include globs) or offering it twice: each repository's
    collection rules see its own skills, so no skill 'shares its name' with its own other copy
    (a C801 that named the file itself, twice); a real clash inside one is still reported."""
    for skill_id in ("writing-a", "writing-b", "other", "dup/other"):
        write_skill(tmp_path / "shared", skill_id, name=skill_id.rsplit("/", 1)[-1])
    (tmp_path / "skills.toml").write_text(
        '[[repositories]]\nname = "core"\ntype = "filesystem"\npath = "shared"\ninclude = ["writing-*"]\n'
        '[[repositories]]\nname = "rest"\ntype = "filesystem"\npath = "shared"\ntier = "external"\n')
    r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stderr
    c801 = sorted(line.split(" C801 ")[0] for line in r.stderr.splitlines() if " C801 " in line)
    assert c801 == ["rest:dup/other/SKILL.md:2:7:", "rest:other/SKILL.md:2:7:"], r.stderr


@pytest.mark.parametrize("outer_file, inner_file, path", [
    ("b", None, "api/files/a/b"),  # a file of skill a where skill a/b needs its folder
    ("b/c/x.txt", "c", "api/files/a/b/c"),  # a file of a/b where a needs a folder
])
def test_a_file_where_another_skill_needs_a_folder_is_refused(tmp_path, outer_file, inner_file, path):
    a = write_skill(tmp_path / "r1", "a").parent
    (a / outer_file).parent.mkdir(parents=True, exist_ok=True)
    (a / outer_file).write_text("outer\n")
    ab = write_skill(tmp_path / "r2", "a/b", name="b").parent
    if inner_file:
        (ab / inner_file).write_text("inner\n")
    r = _build(tmp_path, "r1", "r2", "--out", "d1")
    assert r.returncode == 1, r.stderr
    r110 = [d for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "R110"]
    assert sorted(d["skill"] for d in r110) == ["a", "a/b"] and all(f"would write {path}," in d["message"]
                                                                     or f"have {path} overwritten" in d["message"]
                                                                     for d in r110), r110
