"""Golden reports: `skillc lint` on tests/golden/lint-tree, byte for byte, in every format.

Regenerate after an intended change with ``SKILLC_UPDATE_GOLDEN=1`` (see tests/golden/README.md).
The selection is limited to the discovery, parse and specification families so that new rules in
other families do not churn these files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_skillc
from skillc import __version__
from skillc.validate.report import printable

GOLDEN = Path(__file__).parents[2] / "golden"
TREE = GOLDEN / "lint-tree"
DATA = Path(__file__).parents[2] / "data"
SELECT = ("--select", "D1,P2,S3")
UPDATE = bool(os.environ.get("SKILLC_UPDATE_GOLDEN"))


def _normalise(text: str) -> str:
    # The tool version is the only thing allowed to change without a regeneration.
    return re.sub(r'("(?:semanticV|v)ersion": )"' + re.escape(__version__) + '"', r'\1"{version}"', text)


def _check(name: str, out: str) -> None:
    out = _normalise(out)
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(out.encode("utf-8"))
    expected = path.read_bytes().decode("utf-8")
    assert out == expected, f"{name} differs; if intended, regenerate with SKILLC_UPDATE_GOLDEN=1"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the tree (symbolic links kept), so a bug that writes cannot touch the fixture."""
    dest = tmp_path_factory.mktemp("golden") / "lint-tree"
    shutil.copytree(TREE, dest, symlinks=True)
    return dest


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_golden_report(tree: Path, fmt: str):
    proc = run_skillc("lint", ".", *SELECT, "--format", fmt, cwd=tree)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    _check(f"lint.{fmt}", proc.stdout)


def test_golden_diff_and_nothing_written(tree: Path):
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    proc = run_skillc("lint", *SELECT, "--diff", cwd=tree)
    assert proc.returncode == 1
    assert "would be changed" in proc.stderr
    _check("lint.diff", proc.stdout)
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_json_report_has_the_brief_shape(tree: Path):
    report = json.loads(run_skillc("lint", *SELECT, "--format", "json", cwd=tree).stdout)
    assert set(report) == {"summary", "diagnostics"}
    assert set(report["summary"]) == {"skills", "files", "errors", "warnings"}  # (the brief's, and files)
    assert report["summary"]["skills"] == 7  # 7 skill folders; the assets/ fixture is no skill
    assert report["summary"]["files"] == 8  # and CLAUDE.md
    for d in report["diagnostics"]:
        assert set(d) == {"code", "severity", "path", "line", "column", "message", "skill"}
    assert not any(d["path"].startswith("good-skill") for d in report["diagnostics"])


def test_sarif_is_valid_against_the_official_schema(tree: Path):
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text("utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    proc = run_skillc("lint", *SELECT, "--format", "sarif", cwd=tree)
    doc = json.loads(proc.stdout)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    run = doc["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert "odd,%20name/SKILL.md" in uris  # a valid URI reference, relative to the repository
    # The validator really checks formats: an invalid URI reference is caught.
    bad = json.loads(proc.stdout)
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "a b\\c"
    assert any(e.validator == "format" for e in validator.iter_errors(bad))
    # Every result's rule is described, and indexes point at it.
    rules = run["tool"]["driver"]["rules"]
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning", "note")
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)


def test_sarif_paths_are_relative_to_the_current_directory(tree: Path):
    doc = json.loads(run_skillc("lint", "lint-tree", *SELECT, "--format", "sarif", cwd=tree.parent).stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert "lint-tree/colon/SKILL.md" in uris
    text = run_skillc("lint", "lint-tree", *SELECT, cwd=tree.parent).stdout
    assert text.startswith("Upper/SKILL.md:")  # text and JSON stay relative to the linted root


@given(st.text(alphabet=st.sampled_from(["a", "é", "\n", "\ud800", "\udc80", "\udcff", "\udfff", "\\"]), max_size=20))
def test_printable_shows_any_lone_surrogate_and_never_raises(value: str):
    """Every message and name goes through ``printable`` before it is printed: a lone surrogate
    outside U+DC80-U+DCFF (a JSON `\\ud800`) raised UnicodeEncodeError, an internal error."""
    shown = printable(value)
    shown.encode("utf-8")  # printable: no surrogate left
    assert "\ud800" not in shown and ("\ud800" not in value or "\\ud800" in shown)
