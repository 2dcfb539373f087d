"""A small bundle for the `skillc mcp` tests: a skill-memory skill, a skill with references and a
script, two skills whose leaves collide (flat names python-testing / js-testing), a step skill."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import run_skillc, write_skill

DATA = Path(__file__).parent / "data"

STEP_SKILL = """name: summarise-notes
description: Summarise the notes that match a query. Use when the user asks for a summary of notes.
inputs:
  query: {type: string, required: true, description: What the notes are about}
  limit: {type: integer, default: 5, description: How many notes}
  style: {type: string, enum: [short, long]}
steps:
  - tool: search_notes
    args: {query: "{{ query }}", limit: "{{ limit }}"}
"""


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    shutil.copytree(DATA / "memory" / "repo", repo)
    write_skill(repo, "tools/guide", body="# Guide\n\nRead [the guide](references/guide.md). A </skill> tag.\n")
    (repo / "tools/guide/references").mkdir()
    (repo / "tools/guide/references/guide.md").write_text("# The guide\n\nStep one.\n", encoding="utf-8")
    (repo / "tools/guide/scripts").mkdir()
    (repo / "tools/guide/scripts/run.py").write_text("print('run')\n", encoding="utf-8")
    write_skill(repo, "python/testing", description="Run pytest suites. Use when Python tests fail.")
    write_skill(repo, "js/testing", description="Run jest suites. Use when JavaScript tests fail.")
    write_skill(repo, "tools/summarise-notes", frontmatter=STEP_SKILL)
    return repo


def build(repo: Path, out: Path) -> Path:
    r = run_skillc("build", str(repo), "--out", str(out), "--no-site")
    assert r.returncode == 0, r.stderr
    return out
