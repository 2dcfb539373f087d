"""skills-ref to-prompt, adk-rust blocks and Plan Cascade's Markdown block: exact bytes."""

from __future__ import annotations

from pathlib import Path

from skillc.emit.render import adk
from skillc.emit.render.plan_cascade import (
    CascadeSkill,
    body_content,
    extract_key_content,
    format_skills,
    title,
)
from skillc.emit.render.skills_ref import PromptSkill, to_prompt

GOLDEN = Path(__file__).parents[2] / "golden_render"


def golden(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


def test_to_prompt_exact_bytes_html_escaping_and_unescaped_location():
    skills = [PromptSkill("  pdf-processing ", "Use <foo> & \"bar\" tags, it's fine", "/abs/skills/pdf-processing/SKILL.md"),
              PromptSkill("multi", "line one\nline two\n", "/abs/a&b/SKILL.md")]
    assert to_prompt(skills) == golden("skills_ref_to_prompt.xml")
    assert to_prompt([]) == "<available_skills>\n</available_skills>"


def test_adk_prompt_block_cuts_characters_without_marker():
    assert adk.prompt_block("search", "Use rg first.") == "[skill:search]\nUse rg first.\n[/skill]"
    assert adk.prompt_block("x", "日本語テキスト", max_chars=3) == "[skill:x]\n日本語\n[/skill]"
    assert adk.inject("[skill:x]\nb\n[/skill]", "Please search") == "[skill:x]\nb\n[/skill]\n\nPlease search"


def test_adk_body_trims_unicode_white_space_only():
    assert adk.adk_body("\r\n\u3000 body\r\nline \n\n") == "body\nline"
    assert adk.adk_body("\x1cbody\x1c") == "\x1cbody\x1c"  # not White_Space in Rust, although Python strips it


def test_adk_instruction_variant():
    assert adk.instruction("search", "Search code", "Use rg.", 8000) == (
        "[skill:search]\n\n# search\nSearch code\n\n## Instructions\nUse rg.\n\n[/skill]")
    text = adk.instruction("s", "d", "abcdef", 4, tools=("fs.read", "shell"))
    assert text == ("[skill:s]\n\n# s\nd\n\nYou have access to the following tools: fs.read, shell.\n\n"
                    "## Instructions\nabcd\n[... truncated]\n\n[/skill]")
    assert "[... truncated]" not in adk.instruction("s", "d", "abcd", 4)  # exactly max_chars: kept whole


def test_plan_cascade_block_exact_bytes():
    python = extract_key_content("---\nname: python\ndescription: x\n---\n\n# Python Best Practices\n\nUse type hints.",
                                 200)
    router = body_content("one\ntwo\nthree\nfour\nfive", 2)
    block = format_skills([CascadeSkill("python-best-practices", "builtin", "builtin", 30, python),
                           CascadeSkill("vue-router-best-practices", "vue", "submodule", 80, router)])
    assert block == golden("plan_cascade_block.md")
    assert format_skills([]) == ""


def test_plan_cascade_extraction_edge_cases():
    assert extract_key_content("---\nunterminated\nbody", 200) == "---\nunterminated\nbody"  # frontmatter kept
    assert extract_key_content("a\nb\nc\n", 3) == "a\nb\nc\n\n... (1 more lines)"  # final newline is a line
    assert title("m01-ownership") == "M01 Ownership" and title("vue-router-best-practices") == "Vue Router Best Practices"
