"""Lightweight `.skills/*.md` files and convention files (CLAUDE.md, AGENTS.md…) published as skills
when a repository opts in (issue 19 item 3), with the IDs, names and descriptions seed 000's
parser (adk-rust) gives them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bundle_contract import build_env
from conftest import run_skillc, write_skill
from skillc.instructions import instruction_id, normalize_id

SEARCH = b"---\nname: search\ndescription: Search docs\n---\nUse rg first."


def make_repo(root: Path) -> None:
    (root / ".skills").mkdir(parents=True)
    (root / ".skills/search.md").write_bytes(SEARCH)
    (root / ".skills/nameless.md").write_text("---\ndescription: no name, adk-rust skips it\n---\nx\n")
    (root / "CLAUDE.md").write_text("\n# Project rules\n\nAlways run the tests.\n")
    (root / "docs").mkdir()
    (root / "docs/AGENTS.md").write_text("Agents here write docs in British English, never in a hurry.\n")
    write_skill(root / "skills", "pdf")


def build(tmp: Path, *keys: str) -> tuple[dict, Path]:
    make_repo(tmp / "repo")
    lines = "".join(f"{k} = true\n" for k in keys)
    (tmp / "skills.toml").write_text(f'[[repositories]]\nname = "team"\ntype = "filesystem"\npath = "repo"\n{lines}')
    r = run_skillc("build", "--config", "skills.toml", "--out", "out", cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    listing = json.loads((tmp / "out/api/skills.json").read_text())
    return {s["id"]: s for s in listing["skills"]}, tmp / "out"


def test_nothing_but_skill_folders_is_published_by_default(tmp_path):
    skills, _ = build(tmp_path)
    assert list(skills) == ["skills/pdf"]


def test_opted_in_files_are_skills_with_seed_000_ids_and_names(tmp_path):
    skills, out = build(tmp_path, "publish_lightweight", "publish_conventions")
    claude = instruction_id("claude", (tmp_path / "repo/CLAUDE.md").read_bytes())
    agents = instruction_id("agents", (tmp_path / "repo/docs/AGENTS.md").read_bytes())
    assert sorted(skills) == sorted(["search-2c05ae7760e5", claude, agents, "skills/pdf"])  # (no nameless)
    assert (skills["search-2c05ae7760e5"]["name"], skills["search-2c05ae7760e5"]["description"]) == (
        "search", "Search docs")
    assert (skills[claude]["name"], skills[claude]["description"]) == ("claude", "Project rules")
    assert skills[agents]["description"] == "Agents here write docs in British English, never in a hurry."
    # The lightweight file is published as it is; the convention file gets the frontmatter a
    # SKILL.md needs in front of its unchanged text.
    assert (out / "api/files/search-2c05ae7760e5/SKILL.md").read_bytes() == SEARCH
    published = (out / f"api/files/{claude}/SKILL.md").read_bytes()
    assert published == b'---\nname: "claude"\ndescription: "Project rules"\n---\n' + (
        tmp_path / "repo/CLAUDE.md").read_bytes()
    index = json.loads((out / ".well-known/agent-skills/index.json").read_text())
    assert {s["id"] for s in index["skills"]} == set(skills)


def test_one_switch_publishes_one_format(tmp_path):
    skills, _ = build(tmp_path, "publish_lightweight")
    assert sorted(skills) == ["search-2c05ae7760e5", "skills/pdf"]


def test_a_bad_switch_value_is_a_configuration_error(tmp_path):
    make_repo(tmp_path / "repo")
    (tmp_path / "skills.toml").write_text(
        '[[repositories]]\nname = "team"\ntype = "filesystem"\npath = "repo"\npublish_conventions = "yes"\n')
    r = run_skillc("build", "--config", "skills.toml", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 2 and "publish_conventions" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("name", "normalised"), [
    ("search", "search"), ("Code_Search v2!", "code-search-v2"), ("a  b", "a--b"), ("café", "café"), ("!!!", "skill"),
])
def test_normalize_id_is_adk_rusts(name, normalised):
    assert normalize_id(name) == normalised
