"""The published frontmatter JSON Schemas agree with the rules' examples, and schema issues read well."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import PROJECT, write_skill
from skillc.validate.lint import LintConfig, lint_root
from skillc.validate.rules.builtin import schema
from skillc.validate.rules.loader import by_code_order

SCHEMAS = ["skill-frontmatter.schema.json", "skill-frontmatter-spec.schema.json", "lightweight-skill.schema.json"]
BASE = {"name": "demo", "description": "Does the thing. Use when the user asks for the thing."}


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_is_valid_draft_2020_12_with_skillc_id(name):
    doc = json.loads((PROJECT / "schemas" / name).read_text("utf-8"))
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"https://skillc.dev/schemas/{name}"
    jsonschema.Draft202012Validator.check_schema(doc)


def _frontmatter_examples(kind_prefixes: tuple[str, ...]):
    for r in by_code_order():
        if not r.code.startswith(kind_prefixes):
            continue
        text = "\n".join(line for line in r.good.splitlines() if line.strip() != "---")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue  # prose, not a frontmatter fragment
        if isinstance(data, dict):
            yield r.code, data


FULL_EXAMPLES = list(_frontmatter_examples(("S3", "F4", "M6", "T5", "K0")))
SPEC_EXAMPLES = [(c, d) for c, d in _frontmatter_examples(("S3",)) if c != "S308"]
LIGHT_EXAMPLES = list(_frontmatter_examples(("L90",)))


def test_examples_were_found():
    assert len(FULL_EXAMPLES) >= 25 and SPEC_EXAMPLES and LIGHT_EXAMPLES


@pytest.mark.parametrize("code,data", FULL_EXAMPLES, ids=[c for c, _ in FULL_EXAMPLES])
def test_good_examples_validate_against_the_full_schema(code, data):
    instance = {**BASE, **data}
    errors = list(schema.validator("", schema.FULL_SCHEMA).iter_errors(instance))
    assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("code,data", SPEC_EXAMPLES, ids=[c for c, _ in SPEC_EXAMPLES])
def test_spec_rule_good_examples_validate_against_the_spec_schema(code, data):
    errors = list(schema.validator("", schema.SPEC_SCHEMA).iter_errors({**BASE, **data}))
    assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("code,data", LIGHT_EXAMPLES, ids=[c for c, _ in LIGHT_EXAMPLES])
def test_lightweight_good_examples_validate(code, data):
    errors = list(schema.validator("", schema.LIGHTWEIGHT_SCHEMA).iter_errors({**BASE, **data}))
    assert not errors, [e.message for e in errors]


def test_spec_schema_rejects_extension_keys():
    errors = list(schema.validator("", schema.SPEC_SCHEMA).iter_errors({**BASE, "version": "1.0"}))
    assert errors


def _lint(root: Path, fm: str) -> list:
    write_skill(root, "demo", f"name: demo\ndescription: Does it.\n{fm}")
    return list(lint_root(root, LintConfig()).diagnostics)


def test_schema_issue_points_at_the_key_with_a_human_message(tmp_path):
    fm = ("hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - type: command\n"
          "          comand: ./x.sh\n")
    diags = [d for d in _lint(tmp_path, fm) if d.code == "F408"]
    messages = {d.message for d in diags}
    assert "hooks.PreToolUse[0].hooks[0] has unknown key 'comand'; expected one of command, timeout, type" in messages
    assert "hooks.PreToolUse[0].hooks[0] is missing required key 'command'" in messages
    unknown = next(d for d in diags if "comand" in d.message)
    assert (unknown.line, unknown.column) == (9, 11)  # the `comand:` key in SKILL.md


def test_matcher_regex_error_has_the_column_inside_the_value(tmp_path):
    fm = 'hooks:\n  PreToolUse:\n    - matcher: "Write|(Edit"\n      hooks:\n        - type: command\n          command: x\n'
    (d,) = [d for d in _lint(tmp_path, fm) if d.code == "F410"]
    assert "missing ), unterminated subpattern at position 6" in d.message
    assert (d.line, d.column) == (6, 23)  # the "(" inside the quotes


def test_skill_memory_issues_are_routed_to_their_rules(tmp_path):
    fm = "skill-memory:\n  enabled: true\n  max_tokens: 1.5\n  dedup_threshold: -1\n  ranking_hit: 2\n  maxTokens: 3\n"
    got = {(d.code, d.message) for d in _lint(tmp_path, fm) if d.code.startswith("M6")}
    assert got == {
        ("M602", "skill-memory.max_tokens must be integer, found a number"),
        ("M603", "skill-memory.dedup_threshold must be at least 0, found -1"),
        ("M604", "skill-memory.ranking_hit must be at most 1, found 2"),
        ("M605", "unknown skill-memory key 'maxTokens'; did you mean 'max_tokens'?"),
    }


def test_skill_memory_default_budgets_are_accepted_although_pinned_exceeds_max(tmp_path):
    fm = "skill-memory:\n  enabled: true\n  max_tokens: 1500\n  max_pinned_tokens: 4000\n"
    assert not [d for d in _lint(tmp_path, fm) if d.code.startswith("M6")]


def _matcher_codes(tmp_path, matcher):
    fm = f"hooks:\n  PreToolUse:\n    - matcher: '{matcher}'\n      hooks:\n        - type: command\n          command: x\n"
    return [d for d in _lint(tmp_path, fm) if d.code == "F410"]


def test_matcher_is_checked_in_rust_regex_dialect(tmp_path):
    # Plan Cascade compiles matchers with Rust's regex crate; Python's re accepted these, Rust refuses them
    for bad, why in [("(?!Bash).*", "look-ahead"), ("(\\w)\\1", "backreferences"), ("(?>Write)", "atomic group"),
                     ("Write\\Z", "use \\z"), ("Write{", "'{' must open a repetition")]:
        (d,) = _matcher_codes(tmp_path, bad)
        assert why in d.message, (bad, d.message)
    (d,) = _matcher_codes(tmp_path, "Write|(?=Edit)")
    assert d.column == 23  # the "(?=" inside the quotes
    # and Rust syntax Python lacks is accepted
    for good in ("\\p{Lu}\\w+", "Write\\z", "(?<tool>Write|Edit)", "\\x{57}rite", "(?U)Wr.+"):
        assert _matcher_codes(tmp_path, good) == [], good


def test_skill_memory_numbers_are_read_as_the_readers_number(tmp_path):
    # the reader parses numbers with JavaScript's Number() on the text, not as YAML 1.1 does
    fm = ("skill-memory:\n  enabled: true\n  max_tokens: 1e3\n  max_pinned_tokens: '2000'\n  dedup_threshold: .nan\n"
          "  ranking_hit: 1_0\n")
    got = {(d.code, d.message) for d in _lint(tmp_path, fm) if d.code.startswith("M6")}
    assert got == {
        ("M603", "skill-memory.dedup_threshold '.nan' is not a finite number to the reader (JavaScript Number()); "
                 "it uses the default 0.92"),
        ("M604", "skill-memory.ranking_hit '1_0' is not a finite number to the reader (JavaScript Number()); "
                 "it uses the default 0.15"),
    }


def test_step_script_whose_name_holds_a_space(tmp_path):
    # the whole path names a file of the skill: it is not cut at the space (`scripts/my` "does not exist")
    (tmp_path / "demo" / "scripts").mkdir(parents=True)
    (tmp_path / "demo" / "scripts" / "my script.py").write_text("print(1)\n")
    (tmp_path / "demo" / "scripts" / "run.sh").write_text("echo\n")
    fm = 'steps:\n  - script: "scripts/my script.py"\n  - script: scripts/run.sh --verbose\n  - script: scripts/gone.sh\n'
    got = [d.message for d in _lint(tmp_path, fm) if d.code == "T509"]
    assert got == ["step 3 script 'scripts/gone.sh' does not exist in the skill folder"]
