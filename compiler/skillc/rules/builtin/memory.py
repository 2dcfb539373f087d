"""skill-memory frontmatter (seed 003; research/frameworks.md §4.1), codes M6xx.

The structure is checked with ``#/$defs/skill-memory`` of ``schemas/skill-frontmatter.schema.json``;
each schema issue is routed to the rule that owns its key, so a user can select or ignore them
separately.  The reader these rules protect is a hand-rolled line parser, not YAML: it reads
``enabled: true`` (or ``"true"``), numbers via ``Number()``, child keys matching ``\\w+`` only, and
silently falls back to defaults for anything else.  That silence is why these are errors.
"""

from __future__ import annotations

from ...model import ItemKind, Severity
from ...parse import a_type_name
from ..registry import Finding, RuleContext, rule
from . import schema

REC = frozenset({"recommended"})
KEY = "skill-memory"
BUDGET_KEYS = ("max_tokens", "max_pinned_tokens")
WEIGHT_KEYS = ("ranking_relevance", "ranking_recency", "ranking_hit")
KNOWN = ("enabled",) + BUDGET_KEYS + ("dedup_threshold",) + WEIGHT_KEYS


def _issues(ctx: RuleContext, keys: tuple[str, ...] | None) -> list[schema.SchemaIssue]:
    """Schema issues for the skill-memory block whose first key under it is in ``keys``
    (``None``: issues about the block itself)."""
    value = ctx.meta.get(KEY)
    if not isinstance(value, dict):
        return []
    out = []
    for issue in schema.issues(value, KEY, (KEY,)):
        sub = issue.path[1] if len(issue.path) > 1 else None
        if issue.validator in ("additionalProperties",):
            continue  # M605
        if (keys is None and (sub is None or sub == "enabled")) or (keys is not None and sub in keys):
            out.append(issue)
    return out


@rule(
    "M601", "skill-memory-invalid", "`skill-memory` is not a mapping with a boolean `enabled`.",
    rationale="""
        Seed 003: `skill-memory: {enabled: true}` turns per-skill memory on; the reader accepts
        `true` or `"true"` and treats anything else (a missing key, `yes`, `on`, `1`) as off,
        without a word. skillc reports what the reader would silently ignore, including YAML 1.1
        booleans such as `yes` that PyYAML reads as true but the line parser does not.
    """,
    bad="""
        skill-memory:
          enabled: yes
    """,
    good="""
        skill-memory:
          enabled: true
    """,
    profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=(KEY,),
)
def skill_memory_invalid(ctx: RuleContext):
    if KEY not in ctx.meta:
        return
    value = ctx.meta[KEY]
    if not isinstance(value, dict):
        yield Finding(f"'skill-memory' must be a mapping such as {{enabled: true}}, found {a_type_name(value)}",
                      ctx.value(KEY))
        return
    for issue in _issues(ctx, None):
        yield Finding(issue.message, ctx.value(*issue.path))
    fm = ctx.document.frontmatter
    scalar = fm.scalars.get((KEY, "enabled")) if fm else None
    if isinstance(value.get("enabled"), bool) and scalar is not None and scalar.text not in ("true", "false"):
        yield Finding(f"skill-memory.enabled is written {scalar.text!r}; the skill-memory reader only "
                      f"understands true or false", scalar.position)


@rule(
    "M602", "skill-memory-budget-invalid", "`max_tokens` or `max_pinned_tokens` is not a positive integer.",
    rationale="""
        Both are token budgets (defaults 1,500 and 4,000). Pinned notes have their own budget, so
        `max_pinned_tokens` may exceed `max_tokens` (the defaults do); skillc does not require
        pinned ≤ max. A fraction, zero, a negative number or text makes the reader fall back to
        the default.
    """,
    bad="""
        skill-memory:
          enabled: true
          max_tokens: 0
    """,
    good="""
        skill-memory:
          enabled: true
          max_tokens: 2000
    """,
    profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=(KEY,),
)
def skill_memory_budget_invalid(ctx: RuleContext):
    for issue in _issues(ctx, BUDGET_KEYS):
        yield Finding(issue.message, ctx.value(*issue.path))


@rule(
    "M603", "skill-memory-threshold-invalid", "`dedup_threshold` is not a number between 0 and 1.",
    rationale="It is a cosine similarity (default 0.92); values outside 0-1 make deduplication all-or-nothing.",
    bad="""
        skill-memory:
          enabled: true
          dedup_threshold: 92
    """,
    good="""
        skill-memory:
          enabled: true
          dedup_threshold: 0.92
    """,
    profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=(KEY,),
)
def skill_memory_threshold_invalid(ctx: RuleContext):
    for issue in _issues(ctx, ("dedup_threshold",)):
        yield Finding(issue.message, ctx.value(*issue.path))


@rule(
    "M604", "skill-memory-ranking-invalid", "A `ranking_*` weight is not a number between 0 and 1, or all are 0.",
    rationale="""
        `ranking_relevance`, `ranking_recency` and `ranking_hit` (defaults 0.6, 0.25, 0.15) weigh
        recall. The reader normalises them to sum 1 (`r/(r+c+h)`), so their sum need not be 1 and
        skillc does not check it; but each must be a number in 0-1, and if every given weight is 0
        the reader ignores them all and uses the defaults.
    """,
    bad="""
        skill-memory:
          enabled: true
          ranking_relevance: 0
          ranking_recency: 0
          ranking_hit: 0
    """,
    good="""
        skill-memory:
          enabled: true
          ranking_relevance: 0.7
          ranking_recency: 0.3
          ranking_hit: 0
    """,
    profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=(KEY,),
)
def skill_memory_ranking_invalid(ctx: RuleContext):
    issues = _issues(ctx, WEIGHT_KEYS)
    for issue in issues:
        yield Finding(issue.message, ctx.value(*issue.path))
    value = ctx.meta.get(KEY)
    if issues or not isinstance(value, dict):
        return
    weights = [value[k] for k in WEIGHT_KEYS if k in value]
    if len(weights) == len(WEIGHT_KEYS) and all(w == 0 for w in weights):
        yield Finding("every ranking weight is 0; the reader ignores them and uses the defaults (0.6, 0.25, 0.15)",
                      ctx.key(KEY, WEIGHT_KEYS[0]))


@rule(
    "M605", "skill-memory-unknown-key", "`skill-memory` has a key the reader does not know.",
    rationale=f"""
        The reader knows {', '.join(KNOWN)} and matches child keys with `\\w+`, so `max-tokens`
        (a hyphen) or `maxTokens` is silently ignored.
    """,
    bad="""
        skill-memory:
          enabled: true
          max-tokens: 2000
    """,
    good="""
        skill-memory:
          enabled: true
          max_tokens: 2000
    """,
    severity=Severity.ERROR, profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=(KEY,),
)
def skill_memory_unknown_key(ctx: RuleContext):
    value = ctx.meta.get(KEY)
    if not isinstance(value, dict):
        return
    for key in value:
        if key not in KNOWN:
            norm = str(key).replace("-", "_").lower()
            camel = "".join("_" + c.lower() if c.isupper() else c for c in str(key))
            guess = next((k for k in KNOWN if k in (norm, camel)), None)
            hint = f"; did you mean {guess!r}?" if guess else f"; known keys: {', '.join(KNOWN)}"
            yield Finding(f"unknown skill-memory key {key!r}{hint}", ctx.key(KEY, key))
