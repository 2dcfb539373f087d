"""Stage diagnostics are raised through their declared rule (issue 18 item 2).

A stage raises a diagnostic as ``RULE.diagnostic(path, line, column, message, …)``: the rule object
carries the code and the severity, as ruff passes a violation type, never a code string.  A code
written by hand beside a severity (``Diagnostic("P201", Severity.ERROR, …)``, or the same pair
handed to a helper) can drift from the rule reference; the AST scan below finds them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import PROJECT
from skillc import resolve_types
from skillc.discover import rules as discover_rules
from skillc.model import RuleRef, Severity
from skillc.parse import rules as parse_rules
from skillc.validate.rules.loader import load_all
from skillc.validate.rules.registry import declare

PACKAGE = PROJECT / "compiler" / "skillc"
CODE = re.compile(r"[A-Z][0-9]{3}")

# The rule modules declare codes: that is where a code is written.
RULE_MODULES = ("validate/rules/",)
STAGE_REFS = {"discovery": discover_rules, "parse": parse_rules}


def hand_written_codes(source: str, filename: str = "<src>") -> list[tuple[int, str]]:
    """(line, code) of each call given a rule code as a string literal: ``Diagnostic("X123", …)``, a
    helper that builds one (``_diag("P204", Severity.WARNING, …)``), a lookup (``RULES["G101"]`` is
    not a call, ``RULES.get("G101")`` is).  ``RuleRef("X123", Severity.X)`` is the declaration itself
    (a stage's ``rules`` module), not a use."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call) or isinstance(node.func, ast.Name) and node.func.id == "RuleRef":
            continue
        found += [(node.lineno, a.value) for a in list(node.args) + [k.value for k in node.keywords]
                  if isinstance(a, ast.Constant) and isinstance(a.value, str) and CODE.fullmatch(a.value)][:1]
    return found


def _modules() -> list[tuple[str, Path]]:
    return [(p.relative_to(PACKAGE).as_posix(), p) for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_code_literal_beside_a_severity_outside_the_rule_modules():
    found = [f"{rel}:{line}: {code}"
             for rel, path in _modules()
             if not rel.startswith(RULE_MODULES)
             for line, code in hand_written_codes(path.read_text(encoding="utf-8"), rel)]
    assert not found, ("raise these through their rule (RULE.diagnostic(...)), not a code string:\n"
                       + "\n".join(found))


@pytest.mark.parametrize("source", [
    'Diagnostic("P201", Severity.ERROR, path, 1, 1, "missing")',
    'Diagnostic(code="D105", severity=Severity.WARNING, path="", line=0, column=0, message="x")',
    '_diag(ctx, "P204", Severity.WARNING, 1, 1, "crlf")',
    'diag("D105", Severity.ERROR if strict else Severity.WARNING, rel, "x")',
    'Diagnostic("G101", sev, path, 0, 0, "x")',
    '_diag("G110", m.path, m.at("name"), "no description")',
])
def test_the_scan_finds_a_hand_written_code(source):
    assert hand_written_codes(source)


@pytest.mark.parametrize("source", [
    'MISSING_FRONTMATTER.diagnostic(path, 1, 1, "missing")',
    'Diagnostic(r[0], Severity(r[1]), r[2], r[3], r[4], r[5])',  # a cached diagnostic read back
    'd.code == "P205"',
    'RuleRef("P201", Severity.ERROR)',  # the declaration, in a stage's rules module
])
def test_the_scan_lets_rule_objects_and_declarations_be(source):
    assert hand_written_codes(source) == []


def test_stage_declarations_are_the_registered_rules():
    """Every code a stage declares is in the rule reference with the same severity, and every rule of
    the discovery and parse scopes is declared by its stage: nothing raised goes undocumented."""
    rules = load_all()
    refs = {}
    for module in (discover_rules, parse_rules, resolve_types):
        refs.update({ref.code: ref for ref in vars(module).values() if type(ref) is RuleRef})
    for code, ref in refs.items():
        assert code in rules, f"{code} is raised but not declared in the registry"
        assert (rules[code].code, rules[code].severity) == (ref.code, ref.severity)
    for scope, module in STAGE_REFS.items():
        declared = {ref.code for ref in vars(module).values() if type(ref) is RuleRef}
        assert {r.code for r in rules.values() if r.scope == scope} == declared
    assert {r.code for r in rules.values() if r.code.startswith("R1")} <= set(refs)


def test_a_rule_makes_its_diagnostic_with_its_code_and_severity():
    rule = load_all()["P201"]
    d = rule.diagnostic("a/SKILL.md", 1, 1, "missing YAML frontmatter", "a")
    assert (d.code, d.severity, d.path, d.line, d.column, d.message, d.skill) == (
        "P201", Severity.ERROR, "a/SKILL.md", 1, 1, "missing YAML frontmatter", "a")
    # the context may lower it (a file that may omit frontmatter), never change the code
    lowered = parse_rules.MISSING_FRONTMATTER.diagnostic("AGENTS.md", 1, 1, "x", severity=Severity.WARNING)
    assert (lowered.code, lowered.severity) == ("P201", Severity.WARNING)


def test_a_stage_rule_states_its_severity_once():
    with pytest.raises(ValueError, match="severity"):
        declare(RuleRef("Z999", Severity.ERROR), "z-twice", "z", rationale="r", bad="b", good="g",
                severity=Severity.WARNING)


def test_the_manifest_stage_raises_each_manifest_rule_through_its_object():
    """Every rule of the manifest scope is a named object the manifest stage imports (no code looked
    up by string), and the stage raises each of them somewhere."""
    from skillc.validate import manifests
    from skillc.validate.rules.builtin import manifests as declared

    scope = {r.code for r in load_all().values() if r.scope == "manifest"}
    named = {name: rule for name, rule in vars(declared).items() if getattr(rule, "scope", None) == "manifest"}
    assert {rule.code for rule in named.values()} == scope
    source = (PACKAGE / "validate" / "manifests.py").read_text(encoding="utf-8")
    for name, rule in named.items():
        assert getattr(manifests, name) is rule
        assert f"_diag({name}," in source, f"{rule.code} ({name}) is declared but never raised"
