"""The rules added for what agnix caught and skillc did not (issue 22): F415-F418, B709-B712, L906."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.validate.lint import LintConfig, lint_root


def found(root: Path, code: str) -> list[tuple[str, int, str]]:
    result = lint_root(root, LintConfig(select=(code,)))
    return [(d.path, d.line, d.message) for d in result.diagnostics]


def skill(repo: Path, frontmatter_extra: str = "", body: str = "# T\n\nDo it.\n", name: str = "demo",
          description: str = "Does the thing. Use when the user asks for the thing.") -> Path:
    return write_skill(repo, name, frontmatter=f"name: {name}\ndescription: {description}\n{frontmatter_extra}",
                       body=body)


# --- F415 unknown tools --------------------------------------------------------------------------

@pytest.mark.parametrize("tools, unknown", [
    ("Read Azure", ["Azure"]),
    ("Read, Grep, Bash(git:*)", []),
    ("[Read, sql, mcp__github__create_issue, mcp__azure]", ["sql"]),
    ("Read Bassh(ls:*)", ["Bassh"]),
])
def test_f415_unknown_tool_names(repo: Path, tools: str, unknown: list[str]):
    skill(repo, f"allowed-tools: {tools}\n")
    assert [m.split("'")[1] for _, _, m in found(repo, "F415")] == unknown


# --- F416 unrestricted Bash ----------------------------------------------------------------------

@pytest.mark.parametrize("tools, hit", [("Bash Read", True), ("Bash(*)", True), ("Bash(git:*) Read", False),
                                        ("Read", False)])
def test_f416_unrestricted_bash(repo: Path, tools: str, hit: bool):
    skill(repo, f"allowed-tools: {tools}\n")
    assert bool(found(repo, "F416")) is hit


# --- F417 side effects ---------------------------------------------------------------------------

def test_f417_side_effect_skill_without_disable_model_invocation(repo: Path):
    skill(repo, name="deploy-staging")
    skill(repo, "disable-model-invocation: true\n", name="release-notes")
    skill(repo, name="pdf-reader")
    assert [p for p, _, _ in found(repo, "F417")] == ["deploy-staging/SKILL.md"]


# --- F418 when to use ----------------------------------------------------------------------------

def test_f418_description_without_trigger_is_opt_in(repo: Path):
    skill(repo, description="Helps with PDFs.")
    skill(repo, name="other", description="Extract PDF text. Use when the user mentions PDFs.")
    assert [p for p, _, _ in found(repo, "F418")] == ["demo/SKILL.md"]
    assert not any(d.code == "F418" for d in lint_root(repo).diagnostics)  # in no profile


# --- B709 tags -----------------------------------------------------------------------------------

@pytest.mark.parametrize("body, messages", [
    ("<example>\nRun it.\n", ["tag <example> is never closed"]),
    ("<a>\n<b>\n</a>\n", ["tag <b> is closed by </a>, which closes an outer tag"]),
    ("text</output>\n", ["closing tag </output> has no opening tag"]),
    ("<example>\nok <br> <img src=x> <self/>\n</example>\n", []),
    ("```xml\n<open>\n```\nand `<span>` in code\n<!-- <x> -->\n", []),
    ("See <https://example.com>.\n", []),
])
def test_b709_unbalanced_tags(repo: Path, body: str, messages: list[str]):
    skill(repo, body=body)
    assert [m for _, _, m in found(repo, "B709")] == messages


def test_b709_reads_reference_files_with_their_own_lines(repo: Path):
    skill(repo)
    (repo / "demo" / "references").mkdir()
    (repo / "demo" / "references" / "guide.md").write_text("# Guide\n\n<steps>\n1. one\n", encoding="utf-8")
    assert found(repo, "B709") == [("demo/references/guide.md", 3, "tag <steps> is never closed")]


# --- B710 home folders ---------------------------------------------------------------------------

def test_b710_hard_coded_user_paths(repo: Path):
    body = ("Run /Users/alice/app/build.sh\nor C:\\Users\\John\\app.exe\nor /home/bob/x\n"
            "not /home/user/x, /Users/Shared/x, https://host/home/carol or $HOME/x\n")
    skill(repo, body=body)
    assert [m.split("'")[1] for _, _, m in found(repo, "B710")] == ["/Users/alice", "C:\\Users\\John", "/home/bob"]


def test_b710_in_convention_files(repo: Path):
    (repo / "AGENTS.md").write_text("# Agents\n\nCache in /home/clawdbot/.cache\n", encoding="utf-8")
    assert found(repo, "B710")[0][:2] == ("AGENTS.md", 3)


# --- B711 $1 in code -----------------------------------------------------------------------------

def test_b711_positional_in_code_only(repo: Path):
    body = "Pass $1 as the file.\n\n```bash\nawk '{print $1}'\necho \\$2 ${3}\n```\n\nAnd `cut -f $4`.\n"
    skill(repo, body=body)
    assert [m[:2] for _, _, m in found(repo, "B711")] == ["$1", "$4"]
    assert [line for _, line, _ in found(repo, "B711")] == [8, 12]  # (the frontmatter's 4 lines, then the body's)


# --- B712 contents -------------------------------------------------------------------------------

def test_b712_long_reference_without_contents(repo: Path):
    skill(repo)
    refs = repo / "demo" / "references"
    refs.mkdir()
    long = "\n".join(f"line {i}" for i in range(400))
    (refs / "plain.md").write_text("# Plain\n" + long, encoding="utf-8")
    (refs / "toc.md").write_text("# API\n\n## Contents\n- [A](#a)\n" + long, encoding="utf-8")
    (refs / "short.md").write_text("# Short\n", encoding="utf-8")
    assert [p for p, _, _ in found(repo, "B712")] == ["demo/references/plain.md"]


def test_markdown_rules_run_together_read_the_same_texts_as_alone(repo: Path):
    """B709, B710 and B712 share one list of a skill's Markdown texts per file (B712 reads the
    references only): run together, each reports what it reports alone, SKILL.md's long body never
    counting as a reference without contents."""
    long = "\n".join(f"line {i}" for i in range(400))
    skill(repo, body="# T\n\nRun /Users/jane/bin/x.\n<example>\n" + long + "\n")
    refs = repo / "demo" / "references"
    refs.mkdir()
    (refs / "plain.md").write_text("# Plain\nSee /home/alice/notes.\n<note>\n" + long, encoding="utf-8")
    codes = ("B709", "B710", "B712")
    together = lint_root(repo, LintConfig(select=codes)).diagnostics
    alone = sorted((d for code in codes for d in lint_root(repo, LintConfig(select=(code,))).diagnostics),
                   key=lambda d: d.sort_key())
    assert list(together) == alone
    assert {(d.code, d.path) for d in together} == {
        ("B709", "demo/SKILL.md"), ("B709", "demo/references/plain.md"), ("B710", "demo/SKILL.md"),
        ("B710", "demo/references/plain.md"), ("B712", "demo/references/plain.md")}


# --- L906 convention links -----------------------------------------------------------------------

def test_l906_convention_file_names_missing_files(repo: Path):
    (repo / "docs").mkdir()
    (repo / "docs" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    (repo / "AGENTS.md").write_text(
        "# Agents\n\nSee `docs/setup.md` and `docs/missing.md`, [guide](./docs/guide.md),\n"
        "`memory/YYYY-MM-DD.md` and [site](https://example.com/x.md).\n", encoding="utf-8")
    assert [m.split(" names ")[1].split(",")[0] for _, _, m in found(repo, "L906")] == ["docs/missing.md",
                                                                                          "./docs/guide.md"]


# --- the registry field --------------------------------------------------------------------------

def test_each_new_rule_names_its_agnix_rules():
    from skillc.validate.rules.loader import rule_by_code_or_name

    expected = {"F415": ("CC-SK-008",), "F416": ("CC-SK-007",), "F417": ("CC-SK-006",), "F418": ("AS-020",),
                "B709": ("XML-001", "XML-002", "XML-003"), "B710": ("CC-SK-021", "XP-SK-002", "XP-003"),
                "B711": ("CC-SK-023",), "B712": ("CC-SK-034",), "L906": ("CDX-AG-005", "REF-002")}
    assert {code: rule_by_code_or_name(code).agnix for code in expected} == expected


# --- F419, F420 Claude Code values ---------------------------------------------------------------

@pytest.mark.parametrize("extra, hits", [
    ("model: gpt-4\n", ["model"]), ("model: claude-sonnet-4-5\n", []), ("model: sonnet[1m]\n", []),
    ("context: inline\n", ["context"]), ("shell: zsh\neffort: maximum\n", ["shell", "effort"]),
    ("shell: powershell\neffort: xhigh\n", []),
])
def test_f419_values_claude_code_accepts(repo: Path, extra: str, hits: list[str]):
    skill(repo, extra)
    assert [m.split(" ")[0] for _, _, m in found(repo, "F419")] == hits


def test_f420_agent_needs_a_forked_context(repo: Path):
    skill(repo, "agent: Explore\n")
    skill(repo, "agent: Explore\ncontext: fork\n", name="forked")
    assert [p for p, _, _ in found(repo, "F420")] == ["demo/SKILL.md"]


def test_f415_fix_writes_a_tool_name_in_its_case(repo: Path):
    path = skill(repo, "allowed-tools: read Grep bash(git:*)\n")
    listed = skill(repo, "allowed-tools:\n  - webfetch\n  - 'glob'\n", name="listed")
    proc = run_skillc("lint", "--fix", "--select", "F415", str(repo))
    assert "allowed-tools: Read Grep Bash(git:*)\n" in path.read_text("utf-8")
    assert "  - WebFetch\n  - 'glob'\n" in listed.read_text("utf-8")  # (a quoted value is left alone)
    assert proc.returncode == 0 and "Fixed 3 problems" in proc.stdout and "'glob'" in proc.stdout  # (a warning left)
