"""Plan Cascade's "Framework-Specific Best Practices" block (``ExternalSkillLoader``; research §3.2).

``extract_key_content`` is ``_extract_key_content`` (frontmatter skipped when the first line is
``---``, at most ``max_content_lines`` lines, then ``\\n... (N more lines)``); ``format_skills`` is
``format_skills_for_prompt``: the lines below joined with ``\\n`` (so the block ends with one
``\\n``), ``""`` without skills.  Titles are ``name.replace('-', ' ').title()`` (Python's title-casing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_CONTENT_LINES = 200
HEADER = "## Framework-Specific Best Practices"
INTRO = "The following guidelines apply to this project based on detected frameworks:"


@dataclass(frozen=True, slots=True)
class CascadeSkill:
    name: str  # the external-skills.json key (or the skill's name)
    source: str
    source_type: str
    priority: int
    content: str  # already cut by extract_key_content / body_content


def _cut(lines: list[str], start: int, max_lines: int) -> str:
    extracted = lines[start: start + max_lines]
    if len(lines) > start + max_lines:
        extracted.append(f"\n... ({len(lines) - start - max_lines} more lines)")
    return "\n".join(extracted)


def extract_key_content(content: str, max_lines: int = DEFAULT_MAX_CONTENT_LINES) -> str:
    """From a whole SKILL.md text, exactly as Plan Cascade does."""
    lines = content.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                start = i + 1
                break
    return _cut(lines, start, max_lines)


def body_content(body: str, max_lines: int = DEFAULT_MAX_CONTENT_LINES) -> str:
    """The same cut from a body already separated from its frontmatter (a bundle's wire ``body``)."""
    return _cut(body.split("\n"), 0, max_lines)


def title(name: str) -> str:
    return name.replace("-", " ").title()


def format_skills(skills: Sequence[CascadeSkill]) -> str:
    if not skills:
        return ""
    lines = [HEADER, "", INTRO, ""]
    for s in skills:
        lines += [f"### {title(s.name)}", f"*Source: {s.source} ({s.source_type}) | Priority: {s.priority}*", "",
                  s.content, ""]
    return "\n".join(lines)
