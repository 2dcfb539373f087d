"""`skillc lint` through the installed command: PATH handling, options, config, fixes, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.validate.report import gh_escape_data, gh_escape_property, render_github


def snapshot(root: Path) -> dict:
    """Every path under root with its bytes and modification time (to prove nothing was written)."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p)] = (p.read_bytes() if p.is_file() and not p.is_symlink() else None, st.st_mtime_ns)
    return out


def lint_json(*args: str, cwd: Path, env: dict | None = None) -> tuple[int, dict]:
    proc = run_skillc("lint", "--format", "json", *args, cwd=cwd, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def codes(report: dict) -> list[tuple[str, str]]:
    return [(d["path"], d["code"]) for d in report["diagnostics"]]


# --- the JSON report --------------------------------------------------------------------------------

def test_the_json_report_is_indented_json_whatever_the_messages_hold(repo: Path):
    """Tools diff and grep the report: it stays ``json.dumps(..., indent=2)`` byte for byte (the
    report writes its diagnostics with the C string encoder), quotes, backslashes, non-ASCII and
    undecodable names included."""
    write_skill(repo, "Mismatch", name="mismatch")
    write_skill(repo, "quotes", description='Says "hi" \\ back. café')
    (repo / "caf\u00e9-Bad").mkdir()
    write_skill(repo, "caf\u00e9-Bad")
    proc = run_skillc("lint", "--format", "json", "--select", "ALL", cwd=repo)
    report = json.loads(proc.stdout)
    assert len(report["diagnostics"]) >= 3
    assert proc.stdout == json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def test_each_diagnostic_of_the_json_report_is_its_to_json_key_for_key(repo: Path):
    """The report writes each diagnostic through one template: its keys in ``Diagnostic.to_json``'s
    order, each value under its own key."""
    from skillc.validate.lint import LintConfig, lint_root
    from skillc.validate.report import render_json

    write_skill(repo, "Mismatch", name="mismatch")
    write_skill(repo, "quotes", description='Says "hi" \\ back. café')
    result = lint_root(repo, LintConfig(select=("ALL",)))
    assert len(result.diagnostics) >= 2
    rows = json.loads(render_json([result], result.diagnostics), object_pairs_hook=list)
    written = dict(rows)["diagnostics"]
    assert written == [list(d.to_json().items()) for d in result.diagnostics]


# --- exit codes ----------------------------------------------------------------------------------

def test_exit_codes(repo: Path):
    write_skill(repo, "good")
    assert run_skillc("lint", cwd=repo).returncode == 0
    write_skill(repo, "Mismatch", name="mismatch")  # S308: a warning under the recommended profile
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 0 and "S308" in proc.stdout and "1 warning" in proc.stdout
    assert run_skillc("lint", "--strict", cwd=repo).returncode == 1
    assert run_skillc("lint", "--profile", "spec", cwd=repo).returncode == 1  # an error there
    bad = run_skillc("lint", "no-such-dir", cwd=repo)
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    unknown = run_skillc("lint", "--select", "Z9", cwd=repo)
    assert unknown.returncode == 2 and "Z9" in unknown.stderr
    assert run_skillc("lint", "--fix", "--diff", cwd=repo).returncode == 2


def test_select_ignore_extend_select(repo: Path):
    write_skill(repo, "Mismatch", name="mismatch")
    write_skill(repo, "colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    _, r = lint_json(cwd=repo)
    assert {c for _, c in codes(r)} == {"S308", "P209"}
    _, r = lint_json("--select", "P2", cwd=repo)
    assert codes(r) == [("colon/SKILL.md", "P209")]
    _, r = lint_json("--ignore", "p209", cwd=repo)  # codes are case-insensitive
    assert codes(r) == [("Mismatch/SKILL.md", "S308")]
    # S314 is only in the spec profile; --extend-select adds it to recommended.
    write_skill(repo, "tools", frontmatter="name: tools\ndescription: d\nallowed-tools: [Read, Bash]\n")
    _, r = lint_json(cwd=repo)
    assert ("tools/SKILL.md", "S314") not in codes(r)
    _, r = lint_json("--extend-select", "S314", cwd=repo)
    assert ("tools/SKILL.md", "S314") in codes(r)


def test_extend_select_adds_to_a_select(repo: Path):
    """--extend-select adds to --select's rules (or the file's select), as in Ruff: it was dropped
    silently whenever a select was in force."""
    write_skill(repo, "Mismatch", name="mismatch")
    write_skill(repo, "colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    _, r = lint_json("--select", "P2", "--extend-select", "S308", cwd=repo)
    assert codes(r) == [("Mismatch/SKILL.md", "S308"), ("colon/SKILL.md", "P209")]
    (repo / "skills.toml").write_text('[lint]\nselect = ["P2"]\n', encoding="utf-8")
    _, r = lint_json("--extend-select", "S308", cwd=repo)
    assert codes(r) == [("Mismatch/SKILL.md", "S308"), ("colon/SKILL.md", "P209")]
    (repo / "skills.toml").write_text('[lint]\nextend-select = ["S308"]\n', encoding="utf-8")
    _, r = lint_json("--select", "P2", cwd=repo)
    assert codes(r) == [("Mismatch/SKILL.md", "S308"), ("colon/SKILL.md", "P209")]
    _, r = lint_json("--select", "P2", "--extend-select", "S308", "--ignore", "S3", cwd=repo)
    assert codes(r) == [("colon/SKILL.md", "P209")]  # (ignore still wins)


# --- PATH handling -------------------------------------------------------------------------------

def test_paths_relative_to_the_single_root(repo: Path):
    write_skill(repo, "skills/colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    _, r = lint_json("skills", cwd=repo)
    assert codes(r) == [("colon/SKILL.md", "P209")] and r["diagnostics"][0]["skill"] == "colon"
    _, r = lint_json(str(repo / "skills"), cwd=Path("/"))
    assert codes(r) == [("colon/SKILL.md", "P209")]


def test_github_annotations_are_placed_from_the_current_directory(repo: Path):
    """GitHub places an annotation by its path in the repository, whatever folder was linted."""
    write_skill(repo, "skills/colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    proc = run_skillc("lint", "skills", "--format", "github", cwd=repo)
    assert proc.stdout.startswith("::error file=skills/colon/SKILL.md,line=3,"), proc.stdout


def test_several_roots_are_relative_to_the_current_directory(repo: Path, tmp_path: Path):
    write_skill(repo, "a/x", frontmatter="name: x\ndescription: Use when: asked\n")
    write_skill(repo, "b/y", frontmatter="name: y\ndescription: Use when: asked\n")
    _, r = lint_json("a", "b", cwd=repo)
    assert codes(r) == [("a/x/SKILL.md", "P209"), ("b/y/SKILL.md", "P209")]
    assert r["summary"]["skills"] == 2
    _, r = lint_json("a", ".", "a/x/SKILL.md", cwd=repo)  # nested and repeated arguments: linted once
    assert r["summary"]["skills"] == 2


def test_file_arguments_as_pre_commit_passes_them(repo: Path):
    write_skill(repo, "skills/a", frontmatter="name: a\ndescription: Use when: asked\n")
    write_skill(repo, "skills/b", frontmatter="name: b\ndescription: Use when: asked\n")
    write_skill(repo, "skills/c")
    (repo / "CLAUDE.md").write_text("")
    (repo / "README.md").write_text("# not a skill\n")
    rc, r = lint_json("skills/a/SKILL.md", "skills/c/SKILL.md", "CLAUDE.md", cwd=repo)
    assert rc == 1
    assert codes(r) == [("CLAUDE.md", "L904"), ("skills/a/SKILL.md", "P209")]  # b is not linted
    assert (r["summary"]["skills"], r["summary"]["files"]) == (2, 3)
    proc = run_skillc("lint", "README.md", "skills/c/SKILL.md", cwd=repo)
    assert proc.returncode == 0 and "README.md" not in proc.stderr  # (not a skill: skipped quietly)
    # A SKILL.md outside the current directory: rooted at the folder above its skill.
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    _, r = lint_json(str(repo / "skills" / "b" / "SKILL.md"), cwd=elsewhere)
    assert codes(r) == [("b/SKILL.md", "P209")]


def test_a_lightweight_file_in_a_subfolder_outside_the_current_directory_is_linted(repo: Path):
    """`.skills/deep/five.md` is a lightweight skill (found in .skills/'s subfolders); named from
    elsewhere it was rooted at `deep/`, where it is no lightweight skill: nothing linted, exit 0."""
    for rel in (".skills/deep/five.md", ".claude/skills/g/six.md"):
        (repo / rel).parent.mkdir(parents=True)
        (repo / rel).write_text(f"---\nname: {Path(rel).stem}\n---\nBody.\n")
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    rc, r = lint_json(str(repo / ".skills/deep/five.md"), str(repo / ".claude/skills/g/six.md"), cwd=elsewhere)
    assert rc == 1 and r["summary"]["files"] == 2
    assert {c for _, c in codes(r)} == {"L902"}


def test_a_named_file_the_configuration_excludes_is_said_to_be_excluded(repo: Path):
    (repo / "skills.toml").write_text('[lint]\nexclude = ["skills/legacy/*"]\n')
    write_skill(repo, "skills/legacy/old")
    proc = run_skillc("lint", "skills/legacy/old/SKILL.md", cwd=repo)
    assert proc.returncode == 0
    assert "skills/legacy/old matches an exclude glob of the configuration; skipped" in proc.stderr, proc.stderr


def test_any_file_of_a_skill_lints_the_skill_it_belongs_to(repo: Path):
    """pre-commit passes a changed reference or script alone: its secret is the skill's finding."""
    (repo / ".git").mkdir()
    d = write_skill(repo, "skills/deploy").parent
    (d / "references").mkdir()
    (d / "references/setup.md").write_text("export GITHUB_TOKEN=ghp_" + "Zq8vR2mK7xW4pL9sT3nB6yH1cF5dJ0gA2eUo\n")
    (d / "run.py").write_text("print('ok')\n")
    (repo / "setup.py").write_text("")
    rc, r = lint_json("skills/deploy/references/setup.md", "skills/deploy/run.py", "setup.py", cwd=repo)
    assert rc == 1 and codes(r) == [("skills/deploy/references/setup.md", "B707")]
    assert r["summary"]["skills"] == 1
    proc = run_skillc("lint", "setup.py", cwd=repo)
    assert proc.returncode == 0 and "not a skill" not in proc.stderr  # (quietly: pre-commit passes every file)


def test_a_file_linted_from_above_its_repository_uses_the_repositorys_configuration(repo: Path):
    (repo / ".git").mkdir()
    write_skill(repo, "skills/warn", frontmatter="name: other\nversion: 2.0\ndescription: Does it. Use when asked.\n",
                body="[see](missing.md)\n")
    (repo / "skills.toml").write_text('[lint]\nignore = ["B704"]\n[lint.per-path-ignores]\n"skills/warn/*" = ["S308"]\n')
    expected = {"F402"}
    for cwd in (repo, repo / "skills", repo.parent, Path("/")):
        rc, r = lint_json(str(repo / "skills/warn/SKILL.md"), cwd=cwd)
        assert {c for _, c in codes(r)} == expected, cwd
    # several arguments that collapse into one root: still relative to the current directory
    rc, r = lint_json("skills", "skills/warn", "skills/warn/SKILL.md", cwd=repo)
    assert codes(r) == [("skills/warn/SKILL.md", "F402")]


def test_assets_fixture_passed_as_a_file_is_skipped(repo: Path):
    write_skill(repo, "s")
    (repo / "s" / "assets" / "sample").mkdir(parents=True)
    (repo / "s" / "assets" / "sample" / "SKILL.md").write_text("no frontmatter\n")
    proc = run_skillc("lint", "s/assets/sample/SKILL.md", cwd=repo)
    assert proc.returncode == 0 and "is not a skill" in proc.stderr


def test_a_file_named_under_a_folder_walks_skip_is_linted(repo: Path):
    """`skillc lint dist/x/SKILL.md` lints that skill, as `skillc lint dist/x` does; a walk of the
    repository still skips dist/ (generated output)."""
    write_skill(repo, "dist/x", name="wrong-name")
    rc, r = lint_json("dist/x/SKILL.md", cwd=repo)
    assert ("dist/x/SKILL.md", "S308") in codes(r)
    rc, r = lint_json("dist/x", cwd=repo)
    assert ("SKILL.md", "S308") in codes(r)
    rc, r = lint_json(cwd=repo)
    assert not any(path.startswith("dist/") for path, _ in codes(r))


# --- configuration -------------------------------------------------------------------------------

def test_skills_toml_and_pyproject_configuration(repo: Path):
    write_skill(repo, "skills/Mismatch", name="mismatch")
    write_skill(repo, "skills/colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    (repo / "skills.toml").write_text('[lint]\nignore = ["S308"]\n[lint.per-path-ignores]\n"skills/colon/*" = ["P209"]\n')
    rc, r = lint_json(cwd=repo)
    assert (rc, codes(r)) == (0, [])
    # Found from a sub-folder root too, with per-path globs relative to the config's folder.
    rc, r = lint_json("skills", cwd=repo)
    assert (rc, codes(r)) == (0, [])
    (repo / "skills.toml").unlink()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.skillc.lint]\nselect = ["P2"]\n')
    _, r = lint_json(cwd=repo)
    assert codes(r) == [("skills/colon/SKILL.md", "P209")]
    other = repo.parent / "other.toml"
    other.write_text('[lint]\nprofile = "spec"\n')
    rc, r = lint_json("--config", str(other), cwd=repo)
    assert rc == 1 and ("skills/Mismatch/SKILL.md", "S308") in codes(r)
    assert r["diagnostics"][[c for _, c in codes(r)].index("S308")]["severity"] == "error"


def test_config_globs_with_a_leading_dot_slash(repo: Path):
    """"./skills/colon/*" is relative to the file's folder like "skills/colon/*": it matched nothing
    (per-path-ignores and exclude), silently."""
    write_skill(repo, "skills/Mismatch", name="mismatch")
    write_skill(repo, "skills/colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    (repo / "skills.toml").write_text('[lint]\nexclude = ["./skills/Mismatch"]\n'
                                      '[lint.per-path-ignores]\n"./skills/colon/*" = ["P209"]\n')
    for args in ((), ("skills",)):
        rc, r = lint_json(*args, cwd=repo)
        assert (rc, codes(r), r["summary"]["files"]) == (0, [], 1), args


def test_config_globs_double_star_slash_matches_no_folder_too(repo: Path):
    """`**/` in per-path-ignores and exclude matches zero folders too, as in Ruff and .gitignore:
    "skills/**/legacy/*" missed skills/legacy/x and "**/backups" a top-level backups/, silently."""
    write_skill(repo, "skills/legacy/Mismatch", name="mismatch")
    write_skill(repo, "skills/team/legacy/Other", name="other")
    write_skill(repo, "backups/Old", name="old")
    (repo / "skills.toml").write_text('[lint]\nexclude = ["**/backups"]\n'
                                      '[lint.per-path-ignores]\n"skills/**/legacy/**" = ["S308"]\n')
    for args in ((), ("skills",)):
        rc, r = lint_json(*args, cwd=repo)
        assert (rc, codes(r), r["summary"]["files"]) == (0, [], 2), args


def test_bad_configuration_is_one_line_naming_the_file(repo: Path):
    write_skill(repo, "a")
    (repo / "skills.toml").write_text('[lint]\nselect = "P2"\nbogus = 1\n')
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "skills.toml:3" in proc.stderr and "bogus" in proc.stderr and "Traceback" not in proc.stderr
    (repo / "skills.toml").write_text("[lint\n")
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr


@pytest.mark.parametrize("config, where", [
    ('enabled = true\nlint = { selec = ["S3"] }\n', "skills.toml:2:"),  # an inline table
    ('[lint]\nprofile = "spec"\nselect.x = 1\n', "skills.toml:3:"),  # a dotted key
])
def test_a_wrong_key_written_inline_or_dotted_still_names_a_line(repo: Path, config: str, where: str):
    """docs/guides/lint.md promises file and line for a wrong key or type: `lint = { selec = … }` and
    `select.x = 1` named the file alone."""
    write_skill(repo, "a")
    (repo / "skills.toml").write_text(config)
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 2 and where in proc.stderr, proc.stderr


@pytest.mark.parametrize("config, words", [
    ('[lint]\nselect = ["ZZZ"]\n', "skills.toml:2: 'lint.select': no rule code starts with 'ZZZ'"),
    ('[lint]\nignore = ["Q9"]\n', "skills.toml:2: 'lint.ignore': no rule code starts with 'Q9'"),
    ('[lint]\nper-path-ignores = { "x/*" = ["nope"] }\n', "'lint.per-path-ignores': no rule code starts with 'NOPE'"),
])
def test_a_rule_code_in_the_configuration_must_name_a_rule(repo: Path, config: str, words: str):
    """A typo must not select nothing (every rule off, exit 0) without a word, as on the command line."""
    write_skill(repo, "a", frontmatter="name: Bad\n")
    (repo / "skills.toml").write_text(config)
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr


def test_configuration_codes_are_read_like_the_command_line(repo: Path):
    write_skill(repo, "a", frontmatter="name: Bad\n")
    (repo / "skills.toml").write_text('[lint]\nselect = ["s3"]\n')
    rc, report = lint_json(cwd=repo)
    assert rc == 1 and {c for _, c in codes(report)} == {"S304", "S308", "S309"}


@pytest.mark.parametrize("pyproject", ["[tool]\nskillc = 1\n", "tool = 1\n"])
def test_a_pyproject_whose_tool_skillc_is_not_a_table(repo: Path, pyproject: str):
    write_skill(repo, "a")
    (repo / "pyproject.toml").write_text(pyproject)
    proc = run_skillc("lint", cwd=repo)
    assert proc.returncode == 2 and "'tool.skillc' must be a table" in proc.stderr and "internal" not in proc.stderr


def test_diff_is_text_only(repo: Path):
    (repo / "a").mkdir()
    (repo / "a/SKILL.md").write_bytes(b"---\r\nname: a\r\ndescription: d\r\n---\r\nb\r\n")
    for fmt in ("json", "sarif", "github"):
        proc = run_skillc("lint", "--diff", "--format", fmt, cwd=repo)
        assert proc.returncode == 2 and "--diff prints a unified diff" in proc.stderr and proc.stdout == ""


def test_a_line_break_in_a_file_name_stays_on_its_report_line(repo: Path):
    os.makedirs(os.fsencode(repo) + b"/new\nline")
    os.makedirs(os.fsencode(repo) + b"/bad\xff")
    for name in ("new\nline", os.fsdecode(b"bad\xff")):
        write_skill(repo, name, frontmatter="name: Bad\ndescription: Does it. Use when asked.\n")
    proc = run_skillc("lint", cwd=repo)
    lines = proc.stdout.splitlines()
    assert all(ln.startswith(("bad\\xff/SKILL.md:", "new\\x0aline/SKILL.md:", "Checked ")) for ln in lines), lines
    assert "'bad\\xff'" in proc.stdout and "udc" not in proc.stdout


# --- fixes ---------------------------------------------------------------------------------------

def test_fix_applies_safe_fixes_until_stable_and_keeps_mode(repo: Path):
    d = repo / "w"
    d.mkdir()
    f = d / "SKILL.md"
    f.write_bytes(b"\xef\xbb\xbf---\r\nname: w\r\ndescription: Use when: asked\r\nversion: 2.0\r\n---\r\n# W\r\n")
    f.chmod(0o640)
    before = snapshot(repo)
    diff = run_skillc("lint", "--diff", cwd=repo)
    assert diff.returncode == 1 and "+description: 'Use when: asked'" in diff.stdout
    assert snapshot(repo) == before  # --diff writes nothing
    proc = run_skillc("lint", "--fix", cwd=repo)
    assert "Fixed" in proc.stdout, proc.stdout + proc.stderr
    assert f.read_bytes() == b"---\nname: w\ndescription: 'Use when: asked'\nversion: '2.0'\n---\n# W\n"
    assert proc.returncode == 0 and (f.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in d.iterdir()) == ["SKILL.md"]  # no temporary file left behind
    again = run_skillc("lint", "--fix", cwd=repo)
    assert again.returncode == 0 and "Fixed" not in again.stdout


def test_fix_through_a_symlink_writes_the_target_and_keeps_the_link(repo: Path):
    write_skill(repo, "real", frontmatter="name: real\ndescription: Use when: asked\n")
    (repo / "alias").mkdir()
    os.symlink("../real/SKILL.md", repo / "alias" / "SKILL.md")
    assert run_skillc("lint", "--fix", cwd=repo).returncode == 0
    assert (repo / "alias" / "SKILL.md").is_symlink()
    assert "'Use when: asked'" in (repo / "real" / "SKILL.md").read_text()


def test_diff_of_a_skill_md_that_is_a_link_names_the_file_fix_writes(repo: Path, tmp_path: Path):
    """A SKILL.md linked to a file elsewhere in the repository is fixed at its target, so the diff
    patches the target: git apply and patch refuse to patch through a link (and would replace it)."""
    import shutil
    import subprocess

    (repo / "shared").mkdir()
    (repo / "shared" / "c.md").write_bytes(b"---\nname: c\ndescription: Use when: asked\n---\nBody\n")
    (repo / "c").mkdir()
    os.symlink("../shared/c.md", repo / "c" / "SKILL.md")
    shutil.copytree(repo, tmp_path / "copy", symlinks=True)
    diff = run_skillc("lint", "--diff", "-o", str(tmp_path / "fix.diff"), cwd=repo)
    assert diff.returncode == 1, diff.stderr
    assert run_skillc("lint", "--fix", cwd=repo).returncode == 0
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=tmp_path / "copy", check=True,
                   capture_output=True)
    assert (tmp_path / "copy" / "c" / "SKILL.md").is_symlink()
    assert (tmp_path / "copy" / "shared" / "c.md").read_bytes() == (repo / "shared" / "c.md").read_bytes()
    assert b"'Use when: asked'" in (repo / "shared" / "c.md").read_bytes()


@pytest.fixture
def unwritable():
    """Make a folder unwritable for this process: chmod for a user, the immutable attribute for root
    (whom permissions do not stop); skipped only where the file system has no such attribute."""
    import subprocess

    undo = []

    def lock(folder: Path) -> None:
        if os.geteuid() != 0:
            folder.chmod(0o555)
            undo.append(lambda: folder.chmod(0o755))
            return
        proc = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"cannot make a folder immutable here: {proc.stderr.strip()}")
        undo.append(lambda: subprocess.run(["chattr", "-i", str(folder)], check=True))

    yield lock
    for fn in undo:
        fn()


def test_fix_that_cannot_be_written_is_reported_and_the_others_are_fixed(repo: Path, unwritable):
    for name in ("locked", "open"):
        write_skill(repo, name)
        f = repo / name / "SKILL.md"
        f.write_bytes(f.read_bytes().replace(b"\n", b"\r\n"))
    before = (repo / "locked" / "SKILL.md").read_bytes()
    unwritable(repo / "locked")
    proc = run_skillc("lint", "--fix", cwd=repo)
    assert "locked/SKILL.md: cannot write the fix" in proc.stderr and "the file is unchanged" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (repo / "locked" / "SKILL.md").read_bytes() == before
    assert b"\r" not in (repo / "open" / "SKILL.md").read_bytes()
    assert "locked/SKILL.md:" in proc.stdout and "P204" in proc.stdout  # still reported: not fixed
    assert "open/SKILL.md" not in proc.stdout


def test_lint_writes_nothing_without_fix(repo: Path, tmp_path: Path):
    write_skill(repo, "a", frontmatter="name: a\ndescription: Use when: asked\n")
    (repo / "b").mkdir()
    (repo / "b" / "SKILL.md").write_bytes(b"\xef\xbb\xbf---\r\nname: b\r\n---\r\n")
    before = snapshot(repo)
    for fmt in ("text", "json", "github", "sarif"):
        run_skillc("lint", "--format", fmt, cwd=repo)
    assert snapshot(repo) == before
    out = tmp_path / "report.sarif"
    proc = run_skillc("lint", "--format", "sarif", "--output", str(out), cwd=repo)
    assert proc.returncode == 1 and proc.stdout == "" and json.loads(out.read_text())["version"] == "2.1.0"
    assert snapshot(repo) == before


# --- text output ---------------------------------------------------------------------------------

def test_colour_only_on_request_or_a_terminal(repo: Path):
    write_skill(repo, "colon", frontmatter="name: colon\ndescription: Use when: asked\n")
    plain = run_skillc("lint", cwd=repo)  # a pipe, NO_COLOR set by run_skillc
    assert "\x1b[" not in plain.stdout
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    forced = run_skillc("lint", cwd=repo, env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[31m" in forced.stdout or "\x1b[1m\x1b[31m" in forced.stdout
    assert "\x1b[" not in run_skillc("lint", cwd=repo, env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    quiet = run_skillc("lint", "-q", cwd=repo)
    assert quiet.stdout == "Checked 1 file: 1 error, 0 warnings.\n"


def test_github_annotation_escaping():
    assert gh_escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert gh_escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    from skillc.model import Diagnostic, Severity

    d = Diagnostic("P209", Severity.ERROR, "we:ird,dir/SKILL.md", 3, 4, "bad: value\nnext, 100%")
    out = render_github([], [d])
    assert out.splitlines()[0] == (
        "::error file=we%3Aird%2Cdir/SKILL.md,line=3,col=4,title=P209::P209 bad: value%0Anext, 100%25")


# --- bad input: every problem named, the run goes on ---------------------------------------------

def test_hostile_tree_gets_a_verdict_for_every_file(repo: Path):
    write_skill(repo, "good")
    (repo / "binary").mkdir()
    (repo / "binary" / "SKILL.md").write_bytes(bytes(range(256)))
    (repo / "latin1").mkdir()
    (repo / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    (repo / "big").mkdir()
    with open(repo / "big" / "SKILL.md", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    write_skill(repo, "bomb", frontmatter="a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcde", "bcdef")))
    write_skill(repo, "deep", frontmatter="a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    write_skill(repo, "blockdeep", frontmatter="a:\n" + "- " * 50_000 + "x\n")
    os.symlink("loop2", repo / "loop1")
    os.symlink("loop1", repo / "loop2")
    odd = os.fsencode(str(repo)) + b"/bad\xffname"
    os.mkdir(odd)
    with open(odd + b"/SKILL.md", "wb") as fh:
        fh.write(b"---\nname: x\ndescription: Use when: asked\n---\n")
    for fmt in ("text", "github", "sarif"):
        proc = run_skillc("lint", "--format", fmt, cwd=repo)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr and proc.stderr == "", proc.stderr
    rc, r = lint_json(cwd=repo)
    assert rc == 1
    by_path = {}
    for path, code in codes(r):
        by_path.setdefault(path, set()).add(code)
    assert by_path["binary/SKILL.md"] >= {"P211"}
    assert by_path["latin1/SKILL.md"] >= {"P211"}
    assert by_path["big/SKILL.md"] >= {"P212"}
    assert by_path["bomb/SKILL.md"] >= {"P213"}
    assert by_path["deep/SKILL.md"] >= {"P213"}
    assert by_path["blockdeep/SKILL.md"] >= {"P213"}
    assert by_path["loop1"] == {"D103"} and by_path["loop2"] == {"D103"}
    assert by_path["bad\\xffname/SKILL.md"] >= {"P209"}  # an undecodable name is shown, not a crash
    assert "good/SKILL.md" not in by_path
    assert r["summary"]["skills"] == 8


def test_internal_error_is_one_line_with_a_hint(repo: Path, monkeypatch, capsys):
    import skillc.cli.lint as cmd
    from skillc.cli.main import main

    def boom(*a, **k):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(cmd, "lint_root", boom)
    with pytest.raises(SystemExit) as exc:
        main(["lint", str(repo)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["skillc: internal error: RuntimeError: simulated bug",
                   "  hint: run again with --debug for a traceback, and report it"]
    with pytest.raises(RuntimeError):
        main(["--debug", "lint", str(repo)])
    with pytest.raises(RuntimeError):
        main(["lint", "--debug", str(repo)])


def test_help_explains_paths_formats_and_exit_codes():
    out = run_skillc("lint", "--help").stdout
    for word in ("PATH", "--format", "sarif", "--strict", "--select", "--ignore", "--extend-select", "--fix",
                 "--diff", "--config", "--profile", "--output", "Exit status"):
        assert word in out, word


def test_usage_names_the_argument_as_the_help_and_errors_do(tmp_path: Path):
    """The usage line read `[PATHS]...` while the help explains PATH and an error says `Invalid value
    for PATH`: one name for the argument everywhere."""
    usage = run_skillc("lint", "--help").stdout.splitlines()[0]
    assert usage == "Usage: skillc lint [OPTIONS] [PATH]...", usage
    err = run_skillc("lint", "missing", cwd=tmp_path).stderr
    assert "Usage: skillc lint [OPTIONS] [PATH]..." in err and "Invalid value for PATH" in err, err


def test_only_serve_keeps_the_cyclic_collector():
    """`skillc` runs batch commands without the cyclic GC (cli.run); `serve` runs until stopped and keeps it."""
    from skillc.cli.main import _command_name

    assert _command_name(["--debug", "serve", "dist"]) == "serve"
    assert _command_name(["lint", "serve"]) == "lint"  # a folder named serve is not the command
    assert _command_name(["--version"]) is None


def test_a_fixture_skill_md_under_assets_belongs_to_its_skill(repo: Path):
    """A SKILL.md under a skill's assets/ is a fixture, not a skill: the files beside it are the
    outer skill's (B707 scans them, as the build does), and a file there lints the outer skill."""
    (repo / ".git").mkdir()
    d = write_skill(repo, "skills/pdf").parent
    write_skill(d / "assets", "fixture", description="A fixture.")
    (d / "assets/fixture/data.txt").write_text("export GITHUB_TOKEN=ghp_" + "Zq8vR2mK7xW4pL9sT3nB6yH1cF5dJ0gA2eUo\n")
    for args in ((), ("skills/pdf/assets/fixture/data.txt",)):
        rc, r = lint_json(*args, cwd=repo)
        assert rc == 1 and codes(r) == [("skills/pdf/assets/fixture/data.txt", "B707")], (args, r)


@pytest.mark.parametrize("chained", [True, False], ids=["click-8.1.4+", "click-8.1.0-8.1.3"])
def test_sigterm_is_reported_as_terminated_whichever_way_click_wraps_it(monkeypatch, capsys, chained: bool):
    """click turns the KeyboardInterrupt that SIGTERM raises into ``Abort``: ``from e`` since 8.1.4,
    ``from None`` before (pyproject allows 8.1.0).  Either way a killed run exits 143, not 130."""
    import click

    from skillc.cli import main as cli

    def main(*args, **kwargs):
        try:
            raise cli.Terminated()
        except KeyboardInterrupt as e:
            if chained:
                raise click.exceptions.Abort() from e
            raise click.exceptions.Abort() from None

    monkeypatch.setattr(cli.cli, "main", main)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["lint"])
    assert exit_info.value.code == 143 and capsys.readouterr().err.strip() == "Terminated."


def test_without_libyaml_fix_never_quotes_a_line_that_is_not_broken(tmp_path: Path):
    """PyYAML built without libyaml (its pure-Python parser) words errors differently; ``--fix``
    must not then quote the line where the mapping starts (it once rewrote ``name: demo``)."""
    hide = tmp_path / "nolibyaml"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('yaml._yaml', '_yaml', 'yaml.cyaml'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, _Hide())\n")
    skill = write_skill(tmp_path / "repo", "demo",
                        frontmatter='name: demo\ndescription: "Quoted" then more. Use when asked.\n')
    before = skill.read_text()
    env = {"PYTHONPATH": f"{hide}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    probe = run_skillc("rules", "P209", env=env)  # (the command runs at all without the C loader)
    assert probe.returncode == 0, probe.stderr
    r = run_skillc("lint", "--fix", str(tmp_path / "repo"), env=env)
    assert r.returncode == 1 and "P209" in r.stdout, r.stdout + r.stderr
    assert skill.read_text() == before


def test_diff_is_a_patch_git_applies_to_the_bytes_fix_writes(tmp_path: Path):
    """Old-Mac CR line ends, mixed ends, a form feed and U+2028 are text to diff and patch (lines
    end at LF only), and a last line without LF gets its marker wherever it stands in the hunk."""
    import shutil
    import subprocess

    files = {
        "skills/c/SKILL.md": b"---\rname: c\rdescription: C thing.\r---\rBody\rmore",
        "skills/m/SKILL.md": b"---\r\nname: m\r\ndescription: M thing.\r\n---\r\nBody\rmixed\r\nend",
        "skills/b/SKILL.md": "---\r\nname: b\r\ndescription: B.\r\n---\r\nBody \u2028 LS\r\nform\x0cfeed\r\n".encode(),
    }
    for rel, data in files.items():
        (tmp_path / "a" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "a" / rel).write_bytes(data)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    diff = run_skillc("lint", "--diff", "-o", str(tmp_path / "fix.diff"), cwd=tmp_path / "a")
    assert diff.returncode == 1, diff.stderr
    assert run_skillc("lint", "--fix", cwd=tmp_path / "b").returncode == 0
    subprocess.run(["git", "apply", "--unsafe-paths", str(tmp_path / "fix.diff")], cwd=tmp_path / "a", check=True,
                   capture_output=True)
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    assert b"\r" not in (tmp_path / "b/skills/c/SKILL.md").read_bytes()


@pytest.mark.parametrize("folder", ["with space", "tab\tname", "line\nbreak", 'quote"back\\slash'])
def test_diff_names_a_file_as_git_does_so_patch_and_git_apply_find_it(tmp_path: Path, folder: str):
    """A name with a space ends in a tab (GNU patch reads a name up to whitespace, then a date); one
    with a control character, a quote or a backslash is C-quoted: both read it back as git writes it."""
    import shutil
    import subprocess

    if not shutil.which("patch"):
        pytest.skip("GNU patch is not installed")
    skill = tmp_path / "a" / "skills" / folder / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_bytes(b"---\nname: x\ndescription: Use when: asked\n---\nBody\n")
    for copy in "bc":
        shutil.copytree(tmp_path / "a", tmp_path / copy)
    diff = run_skillc("lint", "--diff", "-o", str(tmp_path / "fix.diff"), cwd=tmp_path / "a")
    assert diff.returncode == 1, diff.stderr
    assert run_skillc("lint", "--fix", cwd=tmp_path / "a").returncode == 0
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=tmp_path / "b", check=True, capture_output=True)
    subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "fix.diff")], cwd=tmp_path / "c", check=True,
                   capture_output=True, stdin=subprocess.DEVNULL)
    for copy in "bc":
        assert (tmp_path / copy / "skills" / folder / "SKILL.md").read_bytes() == skill.read_bytes(), copy


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_diff_names_a_file_whose_name_is_not_utf8_by_its_bytes(tmp_path: Path, to: str):
    """--diff -o, and stdout whose encoding refuses undecodable bytes (a UTF-8 locale other than
    C.UTF-8), write a name that is not UTF-8 as its own bytes, which git apply finds, instead of
    failing with an internal error (and an empty file)."""
    import shutil
    import subprocess

    from conftest import skillc_command

    folder = os.fsdecode(b"bad\xff")
    skill = tmp_path / "a" / folder / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_bytes(b"---\nname: bad\ndescription: Use when: asked\n---\nBody\n")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8:strict"}
    args = [*skillc_command(), "lint", "--diff"] + (["-o", str(tmp_path / "fix.diff")] if to == "file" else [])
    proc = subprocess.run(args, cwd=tmp_path / "a", env=env, capture_output=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    if to == "stdout":
        (tmp_path / "fix.diff").write_bytes(proc.stdout)
    assert b"a/bad\xff/SKILL.md" in (tmp_path / "fix.diff").read_bytes()
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=tmp_path / "b", check=True, capture_output=True)
    assert (tmp_path / "b" / folder / "SKILL.md").read_bytes() == (
        b"---\nname: bad\ndescription: 'Use when: asked'\n---\nBody\n")


def _unprivileged(*args: str, cwd: Path):
    """skillc as root without the capabilities that read any file whatever its mode (setpriv), so
    modes apply to it; as another user, plainly."""
    import shutil
    import subprocess

    from conftest import skillc_command

    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("setpriv is not installed: cannot drop root's read-anything capabilities")
        drop = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--"]
    else:
        prefix = []
    return subprocess.run([*prefix, *skillc_command(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.parametrize("locked, named", [("file", "SKILL.md"), ("folder", "SKILL.md"),
                                           ("folder", "refs/x.md"), ("folder", "missing.md")])
def test_an_unreadable_file_named_on_the_command_line_is_a_d105_diagnostic(tmp_path: Path, locked: str,
                                                                           named: str):
    """As pre-commit passes it (SKILL.md, or a reference of the skill): exit 1 with D105, as a
    folder walk reports it (it was an internal error, exit 2, or click's usage error)."""
    write_skill(tmp_path / "skills", "locked")
    (tmp_path / "skills/locked/refs").mkdir()
    (tmp_path / "skills/locked/refs/x.md").write_text("x\n")
    target = tmp_path / "skills/locked" / ("SKILL.md" if locked == "file" else "")
    target.chmod(0o000)
    try:
        r = _unprivileged("lint", f"skills/locked/{named}", cwd=tmp_path)
    finally:
        target.chmod(0o755 if locked == "folder" else 0o644)
    if r.returncode == 0:
        pytest.skip("modes do not apply to this user here")
    assert r.returncode == 1 and " D105 cannot read" in r.stdout, r.stdout + r.stderr
    assert "internal error" not in r.stderr and "note:" not in r.stderr


def test_several_roots_place_annotations_sarif_and_skills_once(tmp_path: Path):
    """Arguments that collapse to one folder (`skills skills/a`) or name two roots: GitHub annotations
    and SARIF URIs are from the current directory once (they read `skills/skills/...`), and JSON's
    `skill` is from there too, so two roots' skills of one name stay apart."""
    for root in ("skills", "docs"):
        write_skill(tmp_path / root, "a", body="# A\n\nSee [gone](references/gone.md).\n")
    gh = run_skillc("lint", "skills", "skills/a", "--format", "github", cwd=tmp_path)
    assert "file=skills/a/SKILL.md," in gh.stdout and "skills/skills" not in gh.stdout, gh.stdout
    sarif = json.loads(run_skillc("lint", "skills", "./skills", "--format", "sarif", cwd=tmp_path).stdout)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for res in sarif["runs"][0]["results"] for loc in res["locations"]}
    assert uris == {"skills/a/SKILL.md"}
    report = json.loads(run_skillc("lint", "skills", "docs", "--format", "json", cwd=tmp_path).stdout)
    assert {(d["path"], d["skill"]) for d in report["diagnostics"]} == {
        ("skills/a/SKILL.md", "skills/a"), ("docs/a/SKILL.md", "docs/a")}


def test_a_file_name_with_a_line_break_cannot_forge_a_line_on_stderr(tmp_path: Path):
    """The Actions runner reads workflow commands (`::error ...`) on stderr too: the skipped-file
    note shows a control character as \\xNN, as diagnostics do."""
    folder = tmp_path / "skills/a/references/evil\n::error file=x::injected"
    folder.mkdir(parents=True)
    write_skill(tmp_path / "skills", "a")
    (folder / "SKILL.md").write_text("---\nname: q\n---\n")
    r = run_skillc("lint", str(folder.relative_to(tmp_path) / "SKILL.md"), cwd=tmp_path)
    assert "note:" in r.stderr and not any(line.startswith("::") for line in r.stderr.splitlines()), r.stderr


def test_a_path_through_a_file_does_not_exist(tmp_path: Path):
    """`SKILL.md/x` (ENOTDIR) is a usage error, as a missing path is; it linted the skill above it."""
    write_skill(tmp_path / "skills", "foo")
    for arg in ("skills/foo/SKILL.md/x", "skills/foo/SKILL.md/x/SKILL.md"):
        r = run_skillc("lint", arg, cwd=tmp_path)
        assert r.returncode == 2 and "does not exist" in r.stderr, (arg, r.stdout, r.stderr)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_message_never_prints_a_secret_its_rule_quotes(tmp_path: Path, fmt: str):
    # S304/S307/S308 quote the name: a token there is shown as B707 shows it, and the suggested
    # name (the token lower-cased, which no redaction recognises) is left out.
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    write_skill(tmp_path / "repo", "pdf", name=token)
    r = run_skillc("lint", "repo", "--format", fmt, cwd=tmp_path)
    assert r.returncode == 1
    out = (r.stdout + r.stderr).lower()
    assert "s304" in out and "[redacted:github-token]" in out
    assert token[4:].lower() not in out


def test_a_file_named_through_a_linked_folder_is_linted_where_it_is(tmp_path):
    """`skillc lint sk/colon/SKILL.md` with `sk -> skills` said "Checked 0 files" and passed, while
    the skill has an error: the walk never follows links, so the file was never reached."""
    write_skill(tmp_path / "skills", "colon", description="Use when: asked")
    os.symlink("skills", tmp_path / "sk")
    r = run_skillc("lint", "sk/colon/SKILL.md", cwd=tmp_path)
    assert r.returncode == 1 and "skills/colon/SKILL.md:3:" in r.stdout and "P209" in r.stdout, r.stdout + r.stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    r = run_skillc("lint", str(tmp_path / "sk/colon/SKILL.md"), cwd=outside)
    assert r.returncode == 1 and "P209" in r.stdout, r.stdout + r.stderr
