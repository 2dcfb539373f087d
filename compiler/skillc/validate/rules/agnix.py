"""Coverage of agnix's rules by skillc's (issue 22): which skillc rules catch what an agnix rule
catches, or why none does.

The agnix catalogue (``agnix.toml`` beside this module: every rule of agnix 0.59.3 with its name,
category and severity, the categories of files skillc does not lint, and a reason for each in-scope
rule no skillc rule names) is data; the mapping is the ``agnix`` field of each skillc rule.  The
coverage is computed from both (pure), for the rule reference and for the tests.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .registry import Rule

CATALOGUE = Path(__file__).with_name("agnix.toml")


@dataclass(frozen=True, slots=True)
class AgnixRule:
    id: str
    name: str
    category: str
    severity: str  # HIGH | MEDIUM | LOW, as agnix rates it
    in_scope: bool  # about files skillc lints (skills, convention files, frontmatter hooks, manifests)
    reason: str  # why no skillc rule catches it ("" when one does, or when out of scope)


@dataclass(frozen=True, slots=True)
class Catalogue:
    version: str
    rules: tuple[AgnixRule, ...]
    out_of_scope: Mapping[str, str]  # category → why skillc does not lint those files


@dataclass(frozen=True, slots=True)
class Coverage:
    rule: AgnixRule
    skillc: tuple[str, ...]  # codes of the skillc rules that name it


@cache
def catalogue() -> Catalogue:
    data = tomllib.loads(CATALOGUE.read_text("utf-8"))
    out = data["out-of-scope"]
    rules = tuple(
        AgnixRule(r["id"], r["name"], r["category"], r["severity"], r.get("in-scope", r["category"] not in out),
                  r.get("reason", ""))
        for r in data["rule"]
    )
    return Catalogue(data["version"], rules, dict(out))


def coverage(rules: Iterable[Rule], cat: Catalogue | None = None) -> list[Coverage]:
    """Each in-scope agnix rule with the skillc rules that name it, in agnix ID order."""
    cat = cat or catalogue()
    by_agnix: dict[str, list[str]] = {}
    for r in rules:
        for a in r.agnix:
            by_agnix.setdefault(a, []).append(r.code)
    return [Coverage(a, tuple(sorted(by_agnix.get(a.id, ())))) for a in cat.rules if a.in_scope]


def unknown_ids(rules: Iterable[Rule], cat: Catalogue | None = None) -> list[tuple[str, str]]:
    """``(skillc code, agnix ID)`` pairs naming an ID the catalogue does not have, or one out of scope."""
    known = {a.id: a for a in (cat or catalogue()).rules}
    return [(r.code, a) for r in rules for a in r.agnix if a not in known or not known[a].in_scope]


def markdown(rules: Iterable[Rule], cat: Catalogue | None = None) -> list[str]:
    """The coverage section of the rule reference (lines)."""
    cat = cat or catalogue()
    rules = list(rules)
    rows = coverage(rules, cat)
    covered = sum(1 for c in rows if c.skillc)
    out_rules = [a for a in cat.rules if not a.in_scope]
    lines = [
        "",
        f"## agnix {cat.version} coverage",
        "",
        f"agnix has {len(cat.rules)} rules. {len(rows)} of them are about files skillc lints (SKILL.md and its",
        "files, `.skills/*.md`, convention files, frontmatter hooks, plugin and marketplace manifests):",
        f"**{covered}** are caught by a skillc rule (each names them: `skillc rules CODE`), **{len(rows) - covered}**",
        f"are not, for the reason given. The other {len(out_rules)} are about other tools' files.",
        "",
        "| agnix rule | name | skillc | or why not |",
        "|---|---|---|---|",
    ]
    for c in rows:
        codes = ", ".join(f"[{code}](#{_anchor(code, rules)})" for code in c.skillc)
        lines.append(f"| `{c.rule.id}` | {_cell(c.rule.name)} | {codes} | {_cell(c.rule.reason) if not c.skillc else ''} |")
    counts: dict[str, int] = {}
    for a in out_rules:
        counts[a.category] = counts.get(a.category, 0) + 1
    lines += ["", "Out of scope, by agnix category:", "", "| category | rules | why |", "|---|---|---|"]
    for category in sorted(counts):
        lines.append(f"| `{category}` | {counts[category]} | {_cell(cat.out_of_scope.get(category, ''))} |")
    return lines


def _anchor(code: str, rules: Iterable[Rule]) -> str:
    name = next((r.name for r in rules if r.code == code), "")
    return f"{code.lower()}-{name}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
