"""Loading the rules: the built-in rule modules register themselves in the registry when imported.

This is kept out of ``registry.py`` because every built-in module imports the registry (to declare
its rules): the registry importing them back would make the two a cycle.  Everything that needs
the whole set of rules (a selector check, a lookup by code or name, the rule reference) asks here.
"""

from __future__ import annotations

from .registry import RULES, Rule


def load_all() -> dict[str, Rule]:
    """Import every rule module (registration happens at import) and return the registry."""
    from . import builtin  # noqa: F401

    return RULES


def selects_a_rule(selector: str) -> bool:
    """Whether a selector (``ALL``, a code or a code prefix, upper case) names at least one rule: a
    typo would otherwise select nothing, or ignore nothing, without a word."""
    return selector == "ALL" or any(code.startswith(selector) for code in load_all())


def rule_by_code_or_name(key: str) -> Rule | None:
    load_all()
    key_up = key.upper()
    if key_up in RULES:
        return RULES[key_up]
    return next((r for r in RULES.values() if r.name == key.lower()), None)


def by_code_order() -> list[Rule]:
    load_all()
    return sorted(RULES.values(), key=lambda r: r.code)


__all__ = ["by_code_order", "load_all", "rule_by_code_or_name", "selects_a_rule"]
