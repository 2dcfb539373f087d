"""skillc against agnix 0.59.3, the lint peer (issue 22): the coverage is computable from the registry, the
catalogue matches the installed agnix, and on every shared corpus each agnix finding of a rule skillc
maps has a skillc finding of a rule naming it on the same file (bar a documented list of disagreements,
tests/data/agnix-disagreements.toml).  agnix is installed by tests/setup/lint.sh under .clients/agnix."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import CORPORA, PROJECT, run_skillc
from skillc.validate.lint import LintConfig, lint_root
from skillc.validate.rules import agnix
from skillc.validate.rules.loader import by_code_order

AGNIX = PROJECT / ".clients" / "agnix" / "bin" / "agnix"
DISAGREEMENTS = PROJECT / "tests" / "data" / "agnix-disagreements.toml"
SHARED = sorted(p.name for p in CORPORA.iterdir() if p.is_dir()) if CORPORA.is_dir() else []


@pytest.fixture(scope="module")
def agnix_bin() -> Path:
    if not AGNIX.is_file():
        pytest.skip("agnix is not installed: run tests/setup/lint.sh (PyPI agnix==0.59.3 into .clients/agnix)")
    version = subprocess.run([str(AGNIX), "--version"], capture_output=True, text=True).stdout
    if agnix.catalogue().version not in version:
        pytest.skip(f"agnix {agnix.catalogue().version} expected, found {version.strip()!r}")
    return AGNIX


def test_every_in_scope_agnix_rule_is_caught_or_explained():
    rows = agnix.coverage(by_code_order())
    assert len(rows) == 176
    assert [c.rule.id for c in rows if not c.skillc and not c.rule.reason] == []  # neither
    assert [c.rule.id for c in rows if c.skillc and c.rule.reason] == []  # both: the reason would be stale
    assert agnix.unknown_ids(by_code_order()) == []  # no rule names an ID agnix lacks or one out of scope
    assert sum(1 for c in rows if c.skillc) >= 63  # (issue 22's closing count; it may only grow)


def test_rules_command_shows_the_agnix_rules():
    text = run_skillc("rules", "B710").stdout
    assert "agnix: CC-SK-021, XP-SK-002, XP-003" in text
    listed = json.loads(run_skillc("rules", "--format", "json").stdout)["rules"]
    assert {r["code"]: r["agnix"] for r in listed}["G103"] == ["CC-MP-002", "CC-PL-018"]
    assert all(isinstance(r["agnix"], list) for r in listed)


def test_rule_reference_carries_the_coverage_table():
    text = (PROJECT / "docs" / "rules.md").read_text("utf-8")
    assert "## agnix 0.59.3 coverage" in text
    assert "| `CC-SK-008` | Unknown Tool Name | [F415](#f415-allowed-tools-unknown-tool) |  |" in text
    assert "| `PE-004` | Ambiguous Instructions |  | a prompt-style judgement" in text


def test_catalogue_matches_the_installed_agnix(agnix_bin: Path):
    wrong = []
    for rule in agnix.catalogue().rules:
        proc = subprocess.run([str(agnix_bin), "explain", rule.id, "--format", "json"], capture_output=True, text=True)
        got = json.loads(proc.stdout) if proc.returncode == 0 else {}
        if (got.get("name"), got.get("category"), got.get("severity")) != (rule.name, rule.category, rule.severity):
            wrong.append(rule.id)
    assert wrong == []


def _disagreements() -> dict[tuple[str, str], str]:
    data = tomllib.loads(DISAGREEMENTS.read_text("utf-8"))
    return {(d["rule"], f): d["reason"] for d in data["disagreement"] for f in d["files"]}


def test_disagreements_are_about_mapped_rules_and_give_reasons():
    mapped = {a for r in by_code_order() for a in r.agnix}
    for (rule, path), reason in _disagreements().items():
        assert rule in mapped and len(reason) > 40, (rule, path)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", SHARED)
def test_every_agnix_finding_of_a_mapped_rule_has_a_skillc_finding(agnix_bin: Path, corpus: str):
    root = CORPORA / corpus
    proc = subprocess.run([str(agnix_bin), "--format", "json", "--max-files", "0", "."], cwd=root,
                          capture_output=True, text=True, timeout=600)
    found = json.loads(proc.stdout)["diagnostics"]
    skillc_codes: dict[str, set[str]] = defaultdict(set)
    for d in lint_root(root, LintConfig(select=("ALL",)), documents=False).diagnostics:
        skillc_codes[d.path].add(d.code)
    naming: dict[str, set[str]] = defaultdict(set)
    for r in by_code_order():
        for a in r.agnix:
            naming[a].add(r.code)
    allowed = _disagreements()
    missed = sorted({(d["rule"], d["file"]) for d in found
                     if naming.get(d["rule"]) and not skillc_codes[d["file"]] & naming[d["rule"]]
                     and (d["rule"], f"{corpus}/{d['file']}") not in allowed})
    assert missed == []
