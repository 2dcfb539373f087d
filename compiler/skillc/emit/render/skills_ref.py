"""skills-ref ``to-prompt`` (research/spec.md §2.3), byte-exact.

Every element's open tag, content and close tag on their own lines, no indentation, no attributes;
``name`` and ``description`` stripped and ``html.escape``d (``'`` → ``&#x27;``); ``location`` verbatim.
The result has no final newline (the skills-ref CLI's ``click.echo`` adds one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._templates import render


@dataclass(frozen=True, slots=True)
class PromptSkill:
    name: str
    description: str
    location: str  # absolute path (or URL) of the skill's SKILL.md


def to_prompt(skills: Sequence[PromptSkill]) -> str:
    items = [PromptSkill(s.name.strip(), s.description.strip(), s.location) for s in skills]
    return render("skills_ref_to_prompt.xml.j2", skills=items)
