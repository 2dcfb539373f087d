"""skill-memory frontmatter (seed 003; research/frameworks.md §4.1), codes M6xx.

The structure is checked with ``#/$defs/skill-memory`` of ``schemas/skill-frontmatter.schema.json``;
each schema issue is routed to the rule that owns its key, so a user can select or ignore them
separately.  The reader these rules protect is a hand-rolled line parser, not YAML: it reads
``enabled: true`` (or ``"true"``), numbers via ``Number()``, child keys matching ``\\w+`` only, and
silently falls back to defaults for anything else.  That silence is why these are errors.

Numbers are checked as the reader reads them, with JavaScript's ``Number()`` on the text as
written (quotes stripped), not as YAML does: ``1e3`` (text to YAML 1.1) and ``"2000"`` are numbers
to the reader; ``1_000``, ``.nan`` and ``.inf`` (numbers to YAML 1.1) are not, and it uses the default.
"""

from __future__ import annotations

import math
import re

from ....model import ItemKind, Severity
from ....parse.document import a_type_name
from ..registry import Finding, RuleContext, rule
from . import schema

REC = frozenset({"recommended"})
KEY = "skill-memory"
BUDGET_KEYS = ("max_tokens", "max_pinned_tokens")
WEIGHT_KEYS = ("ranking_relevance", "ranking_recency", "ranking_hit")
KNOWN = ("enabled",) + BUDGET_KEYS + ("dedup_threshold",) + WEIGHT_KEYS
NUMBER_KEYS = BUDGET_KEYS + ("dedup_threshold",) + WEIGHT_KEYS
DEFAULTS = {"max_tokens": 1500, "max_pinned_tokens": 4000, "dedup_threshold": 0.92, "ranking_relevance": 0.6,
            "ranking_recency": 0.25, "ranking_hit": 0.15}
# (ASCII: JavaScript's numeric literals are, and Python's `\d` and float() would read `٢٠٠٠` as 2000)
_JS_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_JS_PREFIXED = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_NOT_A_NUMBER = object()


def js_number(text: str) -> float | int | object:
    """JavaScript's ``Number(text)``: the number, or ``_NOT_A_NUMBER`` for NaN and ±Infinity (which
    the reader's ``Number.isFinite`` check turns into the default)."""
    text = text.strip()
    if not text:
        return 0
    if _JS_DECIMAL.fullmatch(text):
        value = float(text)
        if not math.isfinite(value):
            return _NOT_A_NUMBER
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if m := _JS_PREFIXED.fullmatch(text):
        return int(m.group(1)[1:], {"x": 16, "o": 8, "b": 2}[m.group(1)[0].lower()])
    return _NOT_A_NUMBER


def _reader_view(ctx: RuleContext, block: dict) -> tuple[dict, list[str]]:
    """The block with each numeric key as the reader reads it, and the keys it reads as no number."""
    fm = ctx.document.frontmatter
    view, unread = dict(block), []
    for key in NUMBER_KEYS:
        scalar = fm.scalars.get((KEY, key)) if fm and key in block else None
        if scalar is None or scalar.style not in (None, "'", '"'):
            continue  # (a list, a mapping, a block scalar: the schema says what is wrong)
        if scalar.style is None and scalar.text in ("true", "false", "null", "~", ""):
            continue  # the reader's booleans and null: the schema reports their type
        value = js_number(scalar.text)
        if value is _NOT_A_NUMBER:
            unread.append(key)
            view.pop(key)
        else:
            view[key] = value
    return view, unread


# The reader's line parser (frameworks.md §4.1): the block starts at a line `skill-memory:` (a
# comment may follow; a later variant also reads the inline `{…}` form) and ends at the first line
# that starts at column 0; it reads only child lines `^\s{2,}(\w+):\s*(.*)$`.  YAML reads more
# (one-space indentation, quoted keys, a value on the next line, a comment at column 0 inside the
# mapping), so a key can be valid YAML that the reader never sees: memory stays off, or the value
# is silently the default (or '' read as 0).
_HEADER = re.compile(r"skill-memory:\s*(#.*)?")
_INLINE = re.compile(r"skill-memory:\s*\{.*\}\s*(#.*)?")
_CHILD = re.compile(r"\s{2,}(\w+):\s*(.*)", re.ASCII)  # (JavaScript's \w without the u flag: ASCII)
_UNREAD_BLOCK = "the block"


def _layout_unread(ctx: RuleContext, block: dict) -> dict[str, str]:
    """Keys of the block the reader's line parser does not see, with why (``_UNREAD_BLOCK``: the
    header itself, so none of it)."""
    fm = ctx.document.frontmatter
    header = fm.keys.get((KEY,)) if fm else None
    if header is None:
        return {}
    lines = [line.removesuffix("\r") for line in ctx.document.text.split("\n")]
    first = lines[header.line - 1] if header.line <= len(lines) else ""
    if _INLINE.fullmatch(first):
        return {}
    if not _HEADER.fullmatch(first):
        return {_UNREAD_BLOCK: f"it reads a block only from a line 'skill-memory:' at column 0, found {first!r}"}
    out: dict[str, str] = {}
    for key in block:
        pos = fm.keys.get((KEY, key))
        if pos is None or not isinstance(key, str) or pos.line > len(lines):
            continue
        end = next((n for n in range(header.line + 1, pos.line) if lines[n - 1][:1].strip()), None)
        m = _CHILD.fullmatch(lines[pos.line - 1])
        scalar = fm.scalars.get((KEY, key))
        if end is not None:
            out[key] = f"line {end} starts at column 0 and ends the block for it"
        elif m is None or m.group(1) != key:
            out[key] = "it reads only lines `key: value` indented by two or more spaces, with an unquoted key"
        elif scalar is not None and scalar.position.line != pos.line:
            out[key] = "it reads the value on the key's own line only, and reads '' there"
    return out


def _unseen_effect(key: str, why: str) -> str:
    if key == "enabled":
        return "skill memory stays off"
    if why.endswith("reads '' there"):
        return "'' is 0 to JavaScript's Number(), so it uses 0"  # (not the default: Number('') is 0)
    return f"it uses the default {DEFAULTS[key]}"


def _issues(ctx: RuleContext, keys: tuple[str, ...] | None) -> list[schema.SchemaIssue]:
    """Schema issues for the skill-memory block whose first key under it is in ``keys``
    (``None``: issues about the block itself)."""
    value = ctx.meta.get(KEY)
    if not isinstance(value, dict):
        return []
    layout = _layout_unread(ctx, value)
    if _UNREAD_BLOCK in layout:
        return [schema.SchemaIssue((KEY,), f"the skill-memory reader does not see this block ({layout[_UNREAD_BLOCK]}); "
                                   "skill memory stays off", "layout")] if keys is None else []
    out = [schema.SchemaIssue((KEY, k), f"skill-memory.{k} is valid YAML but the skill-memory reader does not see it "
                              f"({why}); {_unseen_effect(k, why)}", "layout")
           for k, why in layout.items() if k in ((("enabled",) if keys is None else keys))]
    view, unread = _reader_view(ctx, value)
    out += [schema.SchemaIssue((KEY, k), f"skill-memory.{k} {ctx.document.frontmatter.scalars[(KEY, k)].text!r} is "
                              f"not a finite number to the reader (JavaScript Number()); it uses the default {DEFAULTS[k]}",
                              "reader")
           for k in unread if keys is not None and k in keys and k not in layout]
    for issue in schema.issues(view, KEY, (KEY,)):
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
        booleans such as `yes` that PyYAML reads as true but the line parser does not, and a
        block YAML reads but the line parser does not see: it starts at a line `skill-memory:`
        (or the inline `{…}` form) and reads only `key: value` lines indented by two or more
        spaces, up to the first line at column 0, so one-space indentation, a quoted key, a value
        on the next line or a comment at column 0 inside the block hide a key (M602-M604 report
        their keys the same way).
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
        pinned ≤ max. Values are read as the reader reads them, with JavaScript's `Number()` on
        the text: `1e3` and `"2000"` are numbers, while `1_000`, `.nan` and `.inf` (numbers to
        YAML) are not and the reader uses the default (M603 and M604 read theirs the same way).
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
    value = _reader_view(ctx, value)[0]
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
