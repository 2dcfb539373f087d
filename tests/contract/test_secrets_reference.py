"""skillc's scanner against the two well-kept rule sets (issue 17): on a corpus of one credential of
every form they document (``tests/secret_forms.py``), skillc catches everything detect-secrets and
secretlint's recommended preset catch, and more.  Both tools are the real programs, installed by
``tests/setup/secrets.sh``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from secret_forms import FORMS
from skillc.secrets import KINDS, redact, scan

ROOT = Path(__file__).resolve().parents[2]  # (the project: tests/contract/ is two levels down)
DETECT_SECRETS = ROOT / ".clients" / "detect-secrets" / "bin" / "detect-secrets"
SECRETLINT = ROOT / ".clients" / "secretlint" / "node_modules" / ".bin" / "secretlint"


@pytest.fixture(scope="module")
def forms(tmp_path_factory) -> dict[str, tuple[str, str, str, str]]:
    """One file per form, named by its index."""
    folder = tmp_path_factory.mktemp("forms")
    out = {}
    for i, form in enumerate(FORMS):
        name = f"{i:02d}.txt"
        (folder / name).write_text(form[2] + "\n")
        out[str(folder / name)] = form
    return out


@pytest.mark.parametrize("name,kind,line,value", FORMS, ids=[f[0] for f in FORMS])
def test_every_documented_form_is_caught_with_its_kind(name, kind, line, value):
    found = [(m.kind, line[m.start:m.end]) for m in scan(line)]
    assert any(k == kind and value in v for k, v in found), (name, [k for k, _ in found])
    assert value not in redact(line)[0] and value not in redact(line, strict=True)[0]


def test_every_kind_is_in_the_corpus():
    assert {f[1] for f in FORMS} | {"putty-private-key"} == set(KINDS)


def _caught_by_skillc(forms) -> set[str]:
    return {path for path, (_, _, line, _) in forms.items() if scan(line)}


def test_a_superset_of_detect_secrets(forms):
    if not DETECT_SECRETS.exists():
        pytest.skip("detect-secrets is not installed (tests/setup/secrets.sh)")
    folder = Path(next(iter(forms))).parent
    run = subprocess.run([str(DETECT_SECRETS), "scan", "--all-files", "."], cwd=folder, capture_output=True,
                         text=True, check=True)
    theirs = {str(folder / f) for f in json.loads(run.stdout)["results"]}
    assert theirs, "detect-secrets caught nothing: not the tool we measure against"
    ours = _caught_by_skillc(forms)
    assert theirs <= ours, sorted(forms[p][0] for p in theirs - ours)
    assert len(ours) > len(theirs)


def test_a_superset_of_secretlint_recommended(forms, tmp_path):
    if not SECRETLINT.exists():
        pytest.skip("secretlint is not installed (tests/setup/secrets.sh)")
    folder = Path(next(iter(forms))).parent
    config = tmp_path / "secretlintrc.json"
    config.write_text(json.dumps({"rules": [{"id": "@secretlint/secretlint-rule-preset-recommend"}]}))
    run = subprocess.run([str(SECRETLINT), "--secretlintrc", str(config), "--format", "json", f"{folder}/*.txt"],
                         cwd=SECRETLINT.parents[2], capture_output=True, text=True)
    theirs = {r["filePath"] for r in json.loads(run.stdout) if r["messages"]}
    assert theirs, run.stderr
    ours = _caught_by_skillc(forms)
    assert theirs <= ours, sorted(forms[p][0] for p in theirs - ours)
    assert len(ours) > len(theirs)
