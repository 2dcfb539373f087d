"""Lint rules: the registry and the built-in rules."""

from .loader import load_all
from .registry import PROFILES, RULES, Finding, LintSettings, Rule, RuleContext, rule

__all__ = ["PROFILES", "RULES", "Finding", "LintSettings", "Rule", "RuleContext", "load_all", "rule"]
