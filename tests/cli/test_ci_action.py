"""The composite GitHub Action: it parses, its steps use real `skillc lint` flags, and its shell steps
run as GitHub would run them (inputs substituted into the environment) against a real repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import write_skill
from skillc.cli.lint import lint as lint_command

PROJECT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((PROJECT / "action.yml").read_text("utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def test_action_shape():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) >= {"path", "profile", "format", "sarif-file", "strict", "version"}
    for step in ACTION["runs"]["steps"]:
        assert "uses" in step or step.get("shell") == "bash"
    # Inputs reach shell scripts only through env (no ${{ }} inside `run:`: no script injection).
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", "")


def test_steps_use_real_cli_flags_and_values():
    options = {opt for p in lint_command.params for opt in getattr(p, "opts", [])}
    scripts = "\n".join(s.get("run", "") for s in ACTION["runs"]["steps"])
    used = set(re.findall(r"skillc lint [^\n]*", scripts))
    assert used, "the action never runs skillc lint"
    for line in used:
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", line):
            assert flag in options, f"{flag} is not an option of skillc lint"
    profile = next(p for p in lint_command.params if p.name == "profile")
    fmt = next(p for p in lint_command.params if p.name == "fmt")
    assert ACTION["inputs"]["profile"]["default"] in profile.type.choices
    assert ACTION["inputs"]["format"]["default"] in fmt.type.choices


def _evaluate(expr: str, inputs: dict[str, str]) -> str | bool:
    m = re.fullmatch(r"inputs\.([\w-]+)(?:\s*(==|!=)\s*'([^']*)')?", expr)
    assert m, f"expression not understood by this test: {expr}"
    value = inputs[m.group(1)]
    if m.group(2) is None:
        return value
    return (value == m.group(3)) if m.group(2) == "==" else (value != m.group(3))


def run_action(inputs: dict[str, str], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run the action's shell steps like the runner: substitute expressions, honour `if:`, bash -e."""
    values = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | inputs
    skillc_bin = Path(shutil.which("skillc", path=str(Path(sys.executable).parent)) or "").parent
    results = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or step["name"] == "Install skillc":  # skillc is already installed here
            continue
        cond = step.get("if")
        if cond is not None and not _evaluate(EXPR.fullmatch(cond.strip()).group(1), values):
            continue
        env = {**os.environ, "NO_COLOR": "1", "PATH": f"{skillc_bin}{os.pathsep}{os.environ['PATH']}",
               "GITHUB_ACTION_PATH": str(PROJECT)}
        for key, val in (step.get("env") or {}).items():
            env[key] = EXPR.sub(lambda m: str(_evaluate(m.group(1), values)), str(val))
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=300)
        results.append(proc)
        if proc.returncode != 0:
            break
    return results


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    root = tmp_path / "user"
    write_skill(root, "skills/good")
    write_skill(root, "skills/bad", frontmatter="name: bad\ndescription: Use when: asked\n")
    write_skill(root, "docs/Mismatch", name="mismatch")
    return root


def test_action_fails_with_annotations_and_writes_sarif(user_repo: Path):
    (lint_step,) = run_action({"path": "skills docs", "sarif-file": "skillc.sarif"}, cwd=user_repo)
    assert lint_step.returncode == 1  # (the lint's result: writing the report first does not end the step)
    assert "::error file=skills/bad/SKILL.md,line=3,col=22,title=P209::" in lint_step.stdout
    doc = json.loads((user_repo / "skillc.sarif").read_text())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert uris == {"skills/bad/SKILL.md", "docs/Mismatch/SKILL.md"}


def test_action_strict_and_profile(user_repo: Path):
    (user_repo / "skills" / "bad" / "SKILL.md").unlink()
    (user_repo / "skills" / "bad").rmdir()
    (lint_step,) = run_action({"path": "docs"}, cwd=user_repo)
    assert lint_step.returncode == 0 and "::warning" in lint_step.stdout  # S308 is a warning by default
    (lint_step,) = run_action({"path": "docs", "strict": "true"}, cwd=user_repo)
    assert lint_step.returncode == 1
    (lint_step,) = run_action({"path": "docs", "profile": "spec", "format": "text"}, cwd=user_repo)
    assert lint_step.returncode == 1 and "Mismatch/SKILL.md:2:7: S308" in lint_step.stdout


def test_action_paths_one_a_line_with_spaces_and_sarif_in_a_new_folder(user_repo: Path):
    """`path: |` with one path a line is read whole (only its first line was, and the job passed);
    a path may then hold spaces; the SARIF file's folder is made; strict takes `True` too."""
    write_skill(user_repo / "my skills", "x", frontmatter="name: x\ndescription: X: bad\n")
    (lint_step,) = run_action({"path": "docs\n  my skills  \n\n", "sarif-file": "reports/out/skillc.sarif"},
                              cwd=user_repo)
    assert lint_step.returncode == 1, lint_step.stderr
    assert "file=my skills/x/SKILL.md," in lint_step.stdout and "file=docs/Mismatch/SKILL.md," in lint_step.stdout
    doc = json.loads((user_repo / "reports/out/skillc.sarif").read_text())
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} >= {"P209", "S308"}
    (user_repo / "my skills/x/SKILL.md").write_text("---\nname: x\ndescription: Does x. Use when x.\n---\n# X\n")
    (lint_step,) = run_action({"path": "my skills\ndocs", "strict": "True"}, cwd=user_repo)
    assert lint_step.returncode == 1 and "::warning file=docs/Mismatch/SKILL.md" in lint_step.stdout


@pytest.mark.parametrize("given", ["docs skills", "docs skills\n", "  docs   skills  \n\n"],
                         ids=["one-line", "folded-block", "padded"])
def test_action_paths_on_one_line_are_split_on_spaces(user_repo: Path, given: str):
    """`path: >` folds its lines into one line ending in a newline: still several paths (the first
    version of the one-path-a-line rule linted 'docs skills' as one missing path)."""
    (lint_step,) = run_action({"path": given}, cwd=user_repo)
    assert lint_step.returncode == 1, lint_step.stderr
    assert "file=skills/bad/SKILL.md," in lint_step.stdout and "file=docs/Mismatch/SKILL.md," in lint_step.stdout
