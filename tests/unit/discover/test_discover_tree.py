"""Discovery: layouts real repositories use, symbolic links, byte order, unreadable paths."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import skillc_command, write_skill
from skillc.discover.walk import DiscoveryOptions, discover, path_key
from skillc.model import ItemKind, Severity
from skillc.validate.lint import lint_root


def paths(disc) -> list[str]:
    return [i.path for i in disc.items]


def by_code(disc, code: str):
    return [d for d in disc.diagnostics if d.code == code]


def test_layouts_nested_hidden_and_case_variants(repo: Path):
    write_skill(repo, "skills/pdf")
    write_skill(repo, "skills/.curated/gh-fix-ci")  # openai/skills keeps skills in dot-folders
    write_skill(repo, "skills/game-dev")
    write_skill(repo, "skills/game-dev/2d-games")  # a skill inside a skill
    write_skill(repo, "skills/todo", file_name="skill.md")
    write_skill(repo, "skills/ns", file_name="Skill.md")
    write_skill(repo, "skills/pdf/assets/sample-skill")  # a fixture inside a skill's assets/
    write_skill(repo, "skills/pdf/references/deeper/example")  # anything below references/ too
    write_skill(repo, "node_modules/pkg/skill-x")
    write_skill(repo, ".git/hooks/skill-y")
    write_skill(repo, ".plan-cascade/cache/skill-z")  # seed 000 skips Plan Cascade's own folder
    (repo / "CLAUDE.md").write_text("# rules\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "AGENTS.md").write_text("# agents\n")
    (repo / ".skills").mkdir()
    (repo / ".skills" / "deploy.md").write_text("---\nname: deploy\n---\n")
    (repo / ".claude" / "skills" / "review" / "references").mkdir(parents=True)
    (repo / ".claude" / "skills" / "review.md").write_text("---\nname: review\n---\n")
    (repo / ".claude" / "skills" / "review" / "references" / "x.md").write_text("ref\n")
    disc = discover(repo)
    assert paths(disc) == [
        ".claude/skills/review.md",
        ".skills/deploy.md",
        "CLAUDE.md",
        "docs/AGENTS.md",
        "skills/.curated/gh-fix-ci/SKILL.md",
        "skills/game-dev/2d-games/SKILL.md",
        "skills/game-dev/SKILL.md",
        "skills/ns/Skill.md",
        "skills/pdf/SKILL.md",
        "skills/todo/skill.md",
    ]
    kinds = {i.path: i.kind for i in disc.items}
    assert kinds[".skills/deploy.md"] is ItemKind.LIGHTWEIGHT and kinds["CLAUDE.md"] is ItemKind.CONVENTION
    assert [d.path for d in by_code(disc, "D101")] == ["skills/ns/Skill.md", "skills/todo/skill.md"]
    assert all(d.severity is Severity.WARNING for d in by_code(disc, "D101"))


def test_lightweight_and_conventions_can_be_turned_off(repo: Path):
    write_skill(repo, "a")
    (repo / "AGENTS.md").write_text("x\n")
    (repo / ".skills").mkdir()
    (repo / ".skills" / "b.md").write_text("x\n")
    assert paths(discover(repo, DiscoveryOptions(lightweight=False, conventions=False))) == ["a/SKILL.md"]


def test_exclude_globs(repo: Path):
    write_skill(repo, "skills/a")
    write_skill(repo, "backups/old/a")
    assert paths(discover(repo, DiscoveryOptions(exclude=("backups",)))) == ["skills/a/SKILL.md"]


def test_order_is_byte_order_whatever_the_filesystem_says(repo: Path):
    names = ["zeta", "Zeta", "_x", "a-b", "a", "a.b", "é", "Ωmega", "10", "9"]
    for name in reversed(names):
        write_skill(repo, name)
    got = paths(discover(repo))
    assert got == sorted((f"{n}/SKILL.md" for n in names), key=path_key)
    assert got[:3] == ["10/SKILL.md", "9/SKILL.md", "Zeta/SKILL.md"]  # bytes, not locale or case-folded order
    assert got.index("a-b/SKILL.md") < got.index("a.b/SKILL.md") < got.index("a/SKILL.md")


def test_symlinks_alias_dangle_loop_escape(repo: Path, tmp_path: Path):
    write_skill(repo, "skills/docx-official")
    os.symlink("docx-official", repo / "skills" / "docx")  # an alias inside the repository
    os.symlink("skills", repo / "mirror")  # a whole-tree alias (like .agents/skills -> ../skills)
    os.symlink("missing", repo / "skills" / "gone")
    os.symlink("loop-b", repo / "skills" / "loop-a")
    os.symlink("loop-a", repo / "skills" / "loop-b")
    outside = tmp_path / "outside"
    write_skill(outside, "secret")
    os.symlink(outside / "secret", repo / "skills" / "secret")
    (repo / "skills" / "alias-file").mkdir()
    os.symlink("../docx-official/SKILL.md", repo / "skills" / "alias-file" / "SKILL.md")
    disc = discover(repo)
    assert paths(disc) == ["skills/docx-official/SKILL.md"]  # linted once
    (item,) = disc.items
    assert item.aliases == ("mirror/docx-official", "skills/alias-file", "skills/docx")
    assert [d.path for d in by_code(disc, "D102")] == ["skills/gone"]
    assert sorted(d.path for d in by_code(disc, "D103")) == ["skills/loop-a", "skills/loop-b"]
    (escape,) = by_code(disc, "D104")
    assert escape.path == "skills/secret" and escape.severity is Severity.ERROR
    assert {d.path for d in by_code(disc, "D106")} == {"mirror", "skills/alias-file", "skills/docx"}


def test_root_missing_or_a_file(tmp_path: Path):
    (d,) = discover(tmp_path / "nope").diagnostics
    assert d.code == "D105" and "does not exist" in d.message
    f = tmp_path / "f"
    f.write_text("x")
    assert "is not a directory" in discover(f).diagnostics[0].message


def test_only_dirs_walks_towards_the_selection(repo: Path):
    write_skill(repo, "skills/a")
    write_skill(repo, "skills/b")
    write_skill(repo, "other/c")
    disc = discover(repo, DiscoveryOptions(only_dirs=frozenset({"skills/a"})))
    assert paths(disc) == ["skills/a/SKILL.md"]


def test_fifo_named_skill_md_does_not_block(repo: Path):
    (repo / "pipe").mkdir()
    os.mkfifo(repo / "pipe" / "SKILL.md")
    assert paths(discover(repo)) == []
    assert lint_root(repo).items == ()


def test_collection_docs(repo: Path):
    write_skill(repo, "tools/a")
    (repo / "tools" / "COLLECTION.md").write_text("Tools for things.\n")
    (repo / "bad").mkdir()
    (repo / "bad" / "COLLECTION.md").write_bytes(b"\xff\xfe\x00")
    disc = discover(repo)
    assert disc.collection_docs == {"tools": "Tools for things."}
    assert [d.path for d in by_code(disc, "D105")] == ["bad/COLLECTION.md"]


# --- unreadable files and folders ----------------------------------------------------------------
# Tests run as root, which reads anything whatever its mode; these run skillc as `nobody` through
# setpriv, in a world-traversable temporary folder, and skip when that is impossible here.

def _as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *skillc_command(), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "HOME": str(cwd)})


@pytest.fixture
def public_tmp():
    d = Path(tempfile.mkdtemp(prefix="skillc-perm-"))
    d.chmod(0o755)
    yield d
    for p in [d, *d.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(d)


def test_unreadable_files_and_folders_are_diagnostics(public_tmp: Path):
    if os.geteuid() != 0 and os.access("/root", os.R_OK):
        pytest.skip("cannot test permissions here")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv is not installed: cannot drop root to test unreadable files")
    repo = public_tmp / "repo"
    write_skill(repo, "ok")
    write_skill(repo, "locked-file")
    write_skill(repo, "locked-dir/inner")
    for p in [repo, *repo.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    probe = _as_nobody("--version", cwd=repo)
    if probe.returncode != 0:
        pytest.skip(f"skillc cannot run as nobody here: {probe.stderr.strip()[:200]}")
    (repo / "locked-file" / "SKILL.md").chmod(0o000)
    (repo / "locked-dir").chmod(0o000)
    proc = _as_nobody("lint", "--format", "json", ".", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    import json

    report = json.loads(proc.stdout)
    by_path = {d["path"]: d for d in report["diagnostics"] if d["code"] == "D105"}
    assert set(by_path) == {"locked-dir", "locked-file/SKILL.md"}
    assert "ermission denied" in by_path["locked-file/SKILL.md"]["message"]
    assert report["summary"]["skills"] == 2  # ok and locked-file both get a verdict
    assert "Traceback" not in proc.stderr


def test_a_bundle_built_into_the_repository_is_not_linted_again(repo: Path):
    """`skillc build skills --out site` (the example in docs/reference/bundle.md) puts copies of every skill under
    site/api/files/: a later `skillc lint` of the repository must not report each as a C801
    duplicate of its source. A file named inside the bundle is still linted."""
    write_skill(repo, "skills/pdf")
    write_skill(repo, "skills/tools/csv")
    env = {**os.environ, "SKILLC_CACHE_DIR": str(repo.parent / "cache")}
    built = subprocess.run([*skillc_command(), "build", "skills", "--out", "site", "--no-site", "--quiet"], cwd=repo,
                           env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert (repo / "site/api/files/pdf/SKILL.md").is_file()
    result = lint_root(repo)
    assert [i.item.path for i in result.items] == ["skills/pdf/SKILL.md", "skills/tools/csv/SKILL.md"]
    assert not [d for d in result.diagnostics if d.code == "C801"]
    named = lint_root(repo, only=["site/api/files/pdf"])
    assert [i.item.path for i in named.items] == ["site/api/files/pdf/SKILL.md"]


def test_a_skill_file_that_is_not_a_regular_file_is_said_not_skipped(repo: Path):
    """A FIFO named SKILL.md was skipped without a word: "Checked 0 files", exit 0. It is never
    opened (a FIFO would block the run) and is a D105 error."""
    (repo / "skills/pipe").mkdir(parents=True)
    os.mkfifo(repo / "skills/pipe/SKILL.md")
    disc = discover(repo)
    assert paths(disc) == []
    (d,) = by_code(disc, "D105")
    assert d.path == "skills/pipe/SKILL.md" and "not a regular file" in d.message
    r = subprocess.run([*skillc_command(), "lint", "skills"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "D105" in r.stdout, r.stdout + r.stderr


def test_a_named_skill_file_that_is_not_a_regular_file_is_not_also_said_skipped(repo: Path):
    """``skillc lint skills/pipe/SKILL.md`` (a FIFO): the D105 error came with a note that the file
    "is not a skill or convention file skillc lints; skipped", which contradicts it."""
    (repo / "skills/pipe").mkdir(parents=True)
    os.mkfifo(repo / "skills/pipe/SKILL.md")
    os.mkfifo(repo / "SKILL.md")  # (a skill at the top: its selector is "")
    for named in ("skills/pipe/SKILL.md", "SKILL.md"):
        r = subprocess.run([*skillc_command(), "lint", named], cwd=repo, capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and f"{named}:0:0: D105 cannot read: not a regular file" in r.stdout, r.stdout
        assert "note" not in r.stderr, r.stderr


def test_an_alias_of_a_folder_the_walk_skips_does_not_say_it_is_linted(repo: Path):
    """A link to a skill in a folder walks skip (node_modules/, dist/) or exclude: D106 said
    "linted once, at its target", but the target is never walked ("Checked 0 files", exit 0)."""
    write_skill(repo, "node_modules/pkg/nm")
    write_skill(repo, "dist/dd")
    write_skill(repo, "backups/old")
    write_skill(repo, "skills/a")
    (repo / "skills/x").mkdir()
    os.symlink("../../node_modules/pkg/nm/SKILL.md", repo / "skills/x/SKILL.md")
    os.symlink("../dist/dd", repo / "skills/dd")
    os.symlink("../backups/old", repo / "skills/old")
    os.symlink("a", repo / "skills/b")  # an alias of a walked skill: linted at its target
    disc = discover(repo, DiscoveryOptions(exclude=("backups",)))
    assert paths(disc) == ["skills/a/SKILL.md"]
    said = {d.path: d.message for d in by_code(disc, "D106")}
    assert set(said) == {"skills/b", "skills/dd", "skills/old", "skills/x"}
    assert "linted once, at its target" in said["skills/b"]
    for link in ("skills/dd", "skills/old", "skills/x"):
        assert "linted once" not in said[link] and "not linted" in said[link], said[link]
