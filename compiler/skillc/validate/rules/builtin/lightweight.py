"""Lightweight skills (seed 000 format B) and convention files (format C), codes L9xx."""

from __future__ import annotations

from ....model import ItemKind, Position, Severity
from ....parse.document import a_type_name
from ..registry import Finding, RuleContext, rule

REC = frozenset({"recommended"})
LIGHT = frozenset({ItemKind.LIGHTWEIGHT})
CONVENTION = frozenset({ItemKind.CONVENTION})
FORMAT_B_KEYS = ("name", "description", "tags")


def _required(ctx: RuleContext, key: str):
    if ctx.document.frontmatter is None:
        return  # P201 / P209 already say why
    if key not in ctx.meta:
        yield Finding(f"missing required field {key!r} (format B: name and description)", ctx.key())
        return
    value = ctx.meta[key]
    if not isinstance(value, str) or not value.strip():
        what = "empty" if isinstance(value, str) or value is None else f"{a_type_name(value)}"
        yield Finding(f"{key!r} must be non-empty text, found {what}", ctx.value(key))


@rule(
    "L901", "lightweight-name-missing", "A lightweight skill (`.skills/*.md`) has no `name` text.",
    rationale="Format B (adk-rust `.skills/`) requires `name`; loaders skip the file without it.",
    bad="""
        ---
        description: Bootstrap new apps.
        ---
    """,
    good="""
        ---
        name: app-bootstrap
        description: Bootstrap new apps.
        ---
    """,
    profiles=REC, kinds=LIGHT,
)
def lightweight_name_missing(ctx: RuleContext):
    yield from _required(ctx, "name")


@rule(
    "L902", "lightweight-description-missing", "A lightweight skill has no `description` text.",
    rationale="Format B requires `description`: it is what the agent matches a request against.",
    bad="""
        ---
        name: app-bootstrap
        ---
    """,
    good="""
        ---
        name: app-bootstrap
        description: Bootstrap new apps with the right crate features.
        ---
    """,
    profiles=REC, kinds=LIGHT,
)
def lightweight_description_missing(ctx: RuleContext):
    yield from _required(ctx, "description")


@rule(
    "L903", "lightweight-unsupported-key", "A lightweight skill uses a key format B does not have.",
    rationale="""
        Format B has `name`, `description` and optional `tags`: "No hooks, no version". Loaders of
        lightweight skills ignore anything else (hooks would silently never run). Use a SKILL.md
        folder (format A) for the full frontmatter.
    """,
    bad="""
        ---
        name: app-bootstrap
        description: Bootstrap new apps.
        version: 1.0.0
        ---
    """,
    good="""
        ---
        name: app-bootstrap
        description: Bootstrap new apps.
        tags: [bootstrap]
        ---
    """,
    severity=Severity.WARNING, profiles=REC, kinds=LIGHT,
)
def lightweight_unsupported_key(ctx: RuleContext):
    for key in ctx.meta:
        if key not in FORMAT_B_KEYS:
            yield Finding(f"key {key!r} is not part of lightweight skills (name, description, tags); "
                          "use a SKILL.md folder for it", ctx.key(key))


@rule(
    "L904", "convention-file-empty", "A convention file (CLAUDE.md, AGENTS.md, …) is empty.",
    rationale="An empty convention file is loaded as a skill named after the file, with nothing in it.",
    bad="an empty AGENTS.md", good="an AGENTS.md with build and test commands",
    severity=Severity.WARNING, profiles=REC, kinds=CONVENTION, agnix=("CDX-AG-001",),
)
def convention_file_empty(ctx: RuleContext):
    if not ctx.document.text.strip() and not ctx.document.diagnostics:
        yield Finding("the file is empty", None)


@rule(
    "L905", "convention-file-too-long", "A convention file is over the line limit (500 lines by default).",
    rationale="""
        Convention files are loaded whole into every session (format C: no frontmatter, the body
        is the content). The skill body limit applies (`[lint] max-body-lines`).
    """,
    bad="a 1,200-line CLAUDE.md", good="a 150-line CLAUDE.md that links docs/ for details",
    severity=Severity.WARNING, profiles=REC, kinds=CONVENTION,
)
def convention_file_too_long(ctx: RuleContext):
    text = ctx.document.text
    limit = ctx.settings.max_body_lines
    if len(text) < limit:
        return
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > limit:
        yield Finding(f"the file is {lines:,} lines; keep it to {limit:,} or fewer", Position(1, 1))
