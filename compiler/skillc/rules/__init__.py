"""Lint rules: the registry and the built-in rules."""

from .registry import PROFILES, RULES, Finding, LintSettings, Rule, RuleContext, load_all, rule

__all__ = ["PROFILES", "RULES", "Finding", "LintSettings", "Rule", "RuleContext", "load_all", "rule"]
