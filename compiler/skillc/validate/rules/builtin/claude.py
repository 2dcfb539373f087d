"""What Claude's skill uploaders accept (codes K0xx): the ``claude`` profile.

The ``claude`` profile is the specification rules that Anthropic's ``quick_validate.py`` enforces
(frontmatter present and a mapping, only the six keys, name and description required text,
description ≤ 1,024, compatibility ≤ 500) plus these rules from the Claude.ai upload messages and
the Claude API limits (research/registry.md §1.1, §1.3, §1.4).  The name check is K005, written
exactly as quick_validate does it, instead of S303-S307.
"""

from __future__ import annotations

import re

from ....model import ItemKind
from ..registry import Finding, RuleContext, rule
from .content import skill_files

CLAUDE = frozenset({"claude"})
SKILL = frozenset({ItemKind.SKILL})
RESERVED_WORDS = ("anthropic", "claude")
MAX_SKILL_BYTES = 8 * 1024 * 1024
QUICK_VALIDATE_NAME = re.compile(r"^[a-z0-9-]+$")


@rule(
    "K001", "claude-reserved-word", "`name` contains a reserved word (`anthropic` or `claude`).",
    rationale="The Claude API rejects skill names containing the reserved words `anthropic` and `claude`.",
    bad="name: claude-helper", good="name: code-helper", profiles=CLAUDE, kinds=SKILL, keys=("name",),
    agnix=("CC-SK-022", "CC-SK-030"),
)
def claude_reserved_word(ctx: RuleContext):
    name = ctx.meta.get("name")
    if isinstance(name, str):
        for word in RESERVED_WORDS:
            if word in name.lower():
                yield Finding(f"skill name {name.strip()!r} contains the reserved word {word!r}", ctx.value("name"))


@rule(
    "K002", "claude-angle-brackets", "`name` or `description` contains `<` or `>` (XML tags).",
    rationale="""
        quick_validate rejects any `<` or `>` in the description, and the Claude API rejects XML
        tags in the name and description (they would break the `<available_skills>` prompt block).
    """,
    bad="description: Fill <path> with the output file.", good="description: Fill PATH with the output file.",
    profiles=CLAUDE, kinds=SKILL, keys=("name", "description"),
    agnix=("AS-009", "CC-SK-031"),
)
def claude_angle_brackets(ctx: RuleContext):
    for key in ("name", "description"):
        value = ctx.meta.get(key)
        if isinstance(value, str) and ("<" in value or ">" in value):
            yield Finding(f"{key} contains angle brackets (< or >), which Claude's uploader rejects",
                          ctx.value(key))


@rule(
    "K003", "claude-plugin-manifest-in-skill", "The skill folder contains `.claude-plugin/plugin.json`.",
    rationale="""
        Claude.ai refuses the upload: "A skill cannot contain a plugin manifest
        (.claude-plugin/plugin.json). Remove it, or upload this content as a plugin instead."
    """,
    bad="my-skill/.claude-plugin/plugin.json", good="my-plugin/.claude-plugin/plugin.json + my-plugin/skills/my-skill/",
    profiles=CLAUDE, kinds=SKILL,
)
def claude_plugin_manifest(ctx: RuleContext):
    if ".claude-plugin/plugin.json" in skill_files(ctx).files:
        yield Finding("the skill contains a plugin manifest (.claude-plugin/plugin.json); Claude's uploader "
                      "rejects it: remove it, or publish the folder as a plugin", None)


@rule(
    "K004", "claude-skill-too-large", "The skill's files total more than 8 MB.",
    rationale="""
        The Claude API documented an 8 MB limit per skill upload (agnix AS-015); a third-party
        report of the GA release says 30 MB uncompressed. The limit moves: skillc checks 8 MB
        (MiB) of files, nested skills and VCS/build folders excluded.
    """,
    bad="a skill with a 20 MB dataset in assets/", good="a skill that downloads the dataset in a script",
    profiles=CLAUDE, kinds=SKILL, agnix=("AS-015",),
)
def claude_skill_too_large(ctx: RuleContext):
    files = skill_files(ctx)
    total = sum(files.size(rel) for rel in files.files)
    if total > MAX_SKILL_BYTES:
        yield Finding(f"the skill's files total {total / 1024 / 1024:.1f} MB, over the 8 MB upload limit "
                      "(the Claude API's documented limit; it has changed before, so re-check it)", None)


@rule(
    "K005", "claude-name-format", "`name` fails quick_validate's kebab-case check.",
    rationale="""
        Exactly as Anthropic's quick_validate.py: after `strip()`, the name must match
        `^[a-z0-9-]+$`, must not start or end with `-` or contain `--`, and must be at most 64
        characters. Unlike skills-ref, there is no NFKC normalisation and no Unicode letters.
    """,
    bad="name: PDF_Tools", good="name: pdf-tools", profiles=CLAUDE, kinds=SKILL, keys=("name",),
    agnix=("AS-004",),
)
def claude_name_format(ctx: RuleContext):
    name = ctx.meta.get("name")
    if not isinstance(name, str):
        return
    name = name.strip()
    if not name:
        return
    if not QUICK_VALIDATE_NAME.match(name):
        yield Finding(f"Name {name!r} should be kebab-case (lowercase letters, digits, and hyphens only)",
                      ctx.value("name"))
    elif name.startswith("-") or name.endswith("-") or "--" in name:
        yield Finding(f"Name {name!r} cannot start/end with hyphen or contain consecutive hyphens", ctx.value("name"))
    elif len(name) > 64:
        yield Finding(f"Name is too long ({len(name)} characters); the maximum is 64", ctx.value("name"))
