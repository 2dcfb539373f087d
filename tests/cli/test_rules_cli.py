"""`skillc rules` through the installed command, and the generated rule reference."""

from __future__ import annotations

import json

from conftest import PROJECT, run_skillc
from skillc.validate.rules.loader import by_code_order


def test_docs_rules_md_is_generated_from_the_registry():
    result = run_skillc("rules", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    committed = (PROJECT / "docs" / "rules.md").read_text("utf-8")
    assert committed == result.stdout, "docs/rules.md is stale: run `skillc rules --format markdown > docs/rules.md`"


def test_table_lists_every_rule():
    result = run_skillc("rules")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["CODE", "NAME", "SEVERITY", "PROFILES"]
    assert len(lines) == len(by_code_order()) + 1
    assert any(line.startswith("F410  hook-matcher-invalid-regex") for line in lines)


def test_profile_filter_and_json():
    result = run_skillc("rules", "--profile", "claude", "--format", "json")
    assert result.returncode == 0
    rules = json.loads(result.stdout)["rules"]
    codes = {r["code"] for r in rules}
    assert {"K001", "K005", "S316", "S301"} <= codes
    assert not codes & {"F401", "S308", "S304", "B704"}
    assert all("claude" in r["profiles"] for r in rules)


def test_spec_profile_is_the_specification():
    rules = json.loads(run_skillc("rules", "--profile", "spec", "--format", "json").stdout)["rules"]
    families = {r["code"][0] for r in rules}
    assert families <= {"D", "P", "S", "B", "R"}  # R1xx: build/resolution diagnostics
    s308 = next(r for r in rules if r["code"] == "S308")
    assert s308["severity_per_profile"] == {"recommended": "warning", "spec": "error", "claude": "off"}


def test_explain_by_code_and_by_name():
    by_code = run_skillc("rules", "b704")
    by_name = run_skillc("rules", "broken-relative-link")
    assert by_code.returncode == by_name.returncode == 0
    assert by_code.stdout == by_name.stdout
    for part in ("B704 broken-relative-link", "Why:", "Bad:", "Good:", "Severity: recommended: warning"):
        assert part in by_code.stdout


def test_unknown_rule_exits_2_with_a_suggestion():
    result = run_skillc("rules", "S3O1")  # letter O, resolved to S301
    assert result.returncode == 0 and "S301 name-missing" in result.stdout
    result = run_skillc("rules", "name-mising")
    assert result.returncode == 2
    # (one `skillc: error:` line and a hint, as every command's errors)
    assert result.stderr.splitlines() == ["skillc: error: unknown rule 'name-mising'",
                                          "  hint: did you mean name-missing?"]
    assert "Traceback" not in result.stderr


def test_a_code_prefix_lists_that_family():
    r = run_skillc("rules", "R1", "--format", "json")
    codes = [x["code"] for x in json.loads(r.stdout)["rules"]]
    assert r.returncode == 0 and codes and all(c.startswith("R1") for c in codes) and "R101" in codes
    assert run_skillc("rules", "r10").returncode == 0
    assert "R101 skill-shadowed" in run_skillc("rules", "R101").stdout  # a whole code still explains it
