"""The rule registry: every diagnostic skillc can emit is a registered rule.

A rule has a stable code, a kebab-case name, a default severity, the profiles it belongs to, a
one-line summary, a rationale, a bad and a good example, and (where safe) a fix.  The `skillc rules`
command and the generated rule reference read this registry, so documentation cannot drift from code.

Scopes:
* ``discovery`` and ``parse`` rules are emitted by those stages; they are declared here (no check).
* ``document`` rules get one ``RuleContext`` and yield ``Finding``s.
* ``collection`` rules get every context of a linted root and yield ``(context, Finding)`` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ...model import DiscoveredItem, Document, Fix, ItemKind, Position, RuleRef, Severity

PROFILES = ("recommended", "spec", "claude")
ALL = frozenset(PROFILES)


@dataclass(frozen=True, slots=True)
class Finding:
    message: str
    position: Position | None = None  # None: the whole file (line 0)
    fix: Fix | None = None
    path: str | None = None  # another file of the same skill (root-relative posix), when the finding is there


@dataclass(frozen=True, slots=True)
class LintSettings:
    """What rules may read from configuration."""

    tools: tuple[str, ...] = ()  # known tool names for step skills (seed 002)
    max_body_lines: int = 500
    max_body_tokens: int = 5000
    description_budget: int = 16_000  # characters of all descriptions in one root
    secret_scan: bool = True


@dataclass(frozen=True, slots=True)
class RuleContext:
    item: DiscoveredItem
    document: Document
    root: Path  # absolute root being linted
    settings: LintSettings
    profile: str
    # For a skill at the root: the name the build publishes it under (its ID's last segment), where the
    # root folder has another name (a git checkout, a zip's extraction folder, an http mirror); "" for
    # the root folder's own name.
    published_name: str = ""
    # The frontmatter mapping ({} without one): read by most rules, so an attribute, not a property.
    meta: Mapping[str, Any] = field(init=False, repr=False, compare=False)
    _skill_dir: Path | None = field(init=False, default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "meta", self.document.meta)

    @property
    def skill_id(self) -> str:
        return self.item.skill_dir if self.item.kind is ItemKind.SKILL else self.item.path

    @property
    def skill_dir(self) -> Path:
        path = self._skill_dir
        if path is None:  # built once: pathlib joins cost microseconds, and several rules ask
            path = self.root / self.item.skill_dir if self.item.skill_dir else self.root
            object.__setattr__(self, "_skill_dir", path)
        return path

    def key(self, *path: Any) -> Position:
        fm = self.document.frontmatter
        return fm.position(*path) if fm else Position(1, 1)

    def value(self, *path: Any) -> Position:
        fm = self.document.frontmatter
        return fm.value_position(*path) if fm else Position(1, 1)


DocumentCheck = Callable[[RuleContext], Iterable[Finding]]
CollectionCheck = Callable[[Sequence[RuleContext]], Iterable[tuple[RuleContext, Finding]]]


@dataclass(frozen=True, slots=True)
class Rule(RuleRef):
    """A declared rule: its ``code`` and default ``severity`` (the ``RuleRef`` a stage raises a
    diagnostic through, ``rule.diagnostic(...)``) and what the rule reference documents."""

    name: str
    summary: str
    rationale: str
    bad: str
    good: str
    profiles: frozenset[str]
    scope: str  # discovery | parse | document | collection
    kinds: frozenset[ItemKind] = frozenset({ItemKind.SKILL})
    fix: str | None = None  # description of the safe fix, when there is one
    check: Callable[..., Iterable[Any]] | None = None
    severity_by_profile: Mapping[str, Severity] = field(default_factory=dict)
    # The frontmatter keys the check looks at.  A document rule cannot find anything in a file whose
    # frontmatter has none of them, so lint does not call it there (most skills have no hooks, steps
    # or memory); a collection rule reads only these top-level keys of each document, so lint may
    # hand it summaries (``lint.summary``) instead of whole documents.
    keys: frozenset[str] | None = None
    # The agnix rules (agnix 0.59.3 IDs such as ``CC-SK-008``) this rule catches the same problem as:
    # the coverage table of the rule reference is computed from them (``rules/agnix.py``).
    agnix: tuple[str, ...] = ()

    def severity_for(self, profile: str) -> Severity:
        return self.severity_by_profile.get(profile, self.severity)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "summary": self.summary,
            "severity": self.severity.value,
            "profiles": sorted(self.profiles),
            "scope": self.scope,
            "applies_to": sorted(k.value for k in self.kinds),
            "fix": self.fix,
            "rationale": self.rationale,
            "bad": self.bad,
            "good": self.good,
            "severity_by_profile": {k: v.value for k, v in sorted(self.severity_by_profile.items())},
            "agnix": list(self.agnix),
        }


RULES: dict[str, Rule] = {}


def _register(rule: Rule) -> Rule:
    if rule.code in RULES:
        raise ValueError(f"rule code {rule.code} registered twice")
    if any(r.name == rule.name for r in RULES.values()):
        raise ValueError(f"rule name {rule.name} registered twice")
    RULES[rule.code] = rule
    return rule


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n")


def declare(
    code: str | RuleRef,
    name: str,
    summary: str,
    *,
    rationale: str,
    bad: str,
    good: str,
    severity: Severity | None = None,
    profiles: frozenset[str] = ALL,
    scope: str = "parse",
    kinds: frozenset[ItemKind] = frozenset(ItemKind),
    fix: str | None = None,
    severity_by_profile: Mapping[str, Severity] | None = None,
    check: Callable[..., Iterable[Any]] | None = None,
    keys: Iterable[str] | None = None,
    agnix: Iterable[str] = (),
) -> Rule:
    """Declare a rule; without ``check`` it is emitted by a stage (discovery, parse, resolve).

    ``code`` is a code, or the ``RuleRef`` a stage below validate declared (``parse/rules.py``),
    whose code and severity the rule takes: the severity is then not given again here."""
    if isinstance(code, RuleRef):
        if severity is not None:
            raise ValueError(f"rule {code.code}: the severity is its RuleRef's, not given again")
        code, severity = code.code, code.severity
    return _register(
        Rule(code, severity or Severity.ERROR, name, summary, _dedent(rationale), _dedent(bad), _dedent(good),
             profiles, scope, kinds, fix, check, dict(severity_by_profile or {}), None if keys is None else frozenset(keys),
             tuple(agnix))
    )


def rule(
    code: str,
    name: str,
    summary: str,
    *,
    rationale: str,
    bad: str,
    good: str,
    severity: Severity = Severity.ERROR,
    profiles: frozenset[str] = ALL,
    scope: str = "document",
    kinds: frozenset[ItemKind] = frozenset({ItemKind.SKILL}),
    fix: str | None = None,
    severity_by_profile: Mapping[str, Severity] | None = None,
    keys: Iterable[str] | None = None,
    agnix: Iterable[str] = (),
) -> Callable[[Callable[..., Iterable[Any]]], Callable[..., Iterable[Any]]]:
    """Register a check function as a rule (``keys``: see ``Rule.keys``)."""

    def wrap(check: Callable[..., Iterable[Any]]) -> Callable[..., Iterable[Any]]:
        declare(code, name, summary, rationale=rationale, bad=bad, good=good, severity=severity,
                profiles=profiles, scope=scope, kinds=kinds, fix=fix, severity_by_profile=severity_by_profile,
                check=check, keys=keys, agnix=agnix)
        return check

    return wrap


def matches(code: str, selectors: Iterable[str]) -> bool:
    """Ruff-style selection: ``ALL``, a full code, or a code prefix (``S3`` selects ``S301``…)."""
    return any(s == "ALL" or code.startswith(s) for s in selectors)
