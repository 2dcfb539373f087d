"""Lint every real repository in ../shared/corpora: every skill file gets a verdict, nothing raises,
and the counts of skills and of parse/specification errors match numbers checked independently.

How the numbers were checked (not with skillc's code):

* Skills: ``find CORPUS -iname skill.md`` (no symbolic links in these snapshots), minus SKILL.md
  files inside a skill's resource folders (``assets/``, ``references/``, ``scripts/``), which are
  the skill's own files and not skills. The only such files are the 23 modules of
  ``openclaw__skills/skills/jchopard69/marketing-skills/references/*/SKILL.md``: that skill says
  "One installed skill containing 23 marketing modules … Read the corresponding
  references/<module>/SKILL.md file", so they are read by its router, not installed alone.
  Hence openclaw has 2,451 - 23 = 2,428 skills; every other corpus equals its ``find`` count (and the
  SKILL.md counts in corpora/README.md).
* Errors (``select=("P2", "S3", "D1")``): a separate script split each file at its ``---`` lines
  with plain regular expressions and parsed the frontmatter with ``yaml.safe_load``, then counted:
  files not opening with ``---`` (P201), never closing (P202), each git conflict marker line
  (P205: ``skills/bastos/obsidian-daily/SKILL.md`` has ``<<<<<<<`` on line 4 and ``>>>>>>>`` on line
  9), YAML errors (P209), reader errors on C1 control characters (P214: the mojibake
  ``ai-image-prompts-for-eye-catching-marketing-creati-4e43d568``), and the specification's checks
  on the parsed mapping (name missing/upper case/``--``/other characters, description missing or
  over 1,024 characters, compatibility not 1-500 characters, allowed-tools not a string, one S316
  per key outside the six spec keys). Its counts equal the ones below code for code. They also
  agree with research/corpora.md §7-8 where it counts the same thing (openclaw: 4 unclosed, 1
  conflict file, 1 control-character file; 1,068- and 1,929-character descriptions in anthropics
  and K-Dense).
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

import pytest

from skillc.model import ItemKind, Severity
from skillc.validate.lint import LintConfig, lint_root
from skillc.validate.rules.registry import RULES

# corpus: (skills, other files linted (convention/lightweight), error counts by code)
EXPECTED = {
    "K-Dense-AI__claude-scientific-skills": (134, 0, {"S311": 1, "S316": 1}),
    "anthropics__skills": (14, 0, {"S311": 1}),
    "expo__skills": (26, 2, {"S316": 23}),
    "getsentry__skills": (27, 2, {"S316": 2}),
    "github__awesome-copilot": (419, 2, {"S314": 7, "S316": 16}),
    "hashicorp__agent-skills": (17, 1, {}),
    "mattpocock__skills": (41, 2, {"S316": 28}),
    "obra__superpowers": (14, 3, {}),
    "openai__skills": (10, 0, {}),
    "openclaw__skills": (2428, 21, {
        "P201": 132, "P202": 4, "P205": 2, "P209": 47, "P214": 1, "S301": 4, "S304": 41, "S306": 5, "S307": 44,
        "S309": 1, "S312": 1, "S314": 17, "S316": 1459}),
    "trailofbits__skills": (80, 2, {"S314": 3, "S316": 22}),
    "wshobson__agents": (181, 2, {"S316": 14}),
}
SLOW = {"openclaw__skills", "github__awesome-copilot"}
RESOURCE_DIRS = ("assets", "references", "scripts")


def _skill_files(corpus: Path) -> set[str]:
    out = set()
    for dirpath, _dirs, files in os.walk(corpus):
        for f in files:
            if f.lower() == "skill.md" and not os.path.islink(os.path.join(dirpath, f)):
                out.add(Path(dirpath, f).relative_to(corpus).as_posix())
    return out


def _linked_files(corpus: Path) -> tuple[int, int]:
    """(SKILL.md, other) files that are symbolic links in this checkout.  The counts above are those
    of a checkout whose links were copied as files (a link's text as its content: `CLAUDE.md` holding
    `AGENTS.md`); git checks them out as links, which discovery never follows (a link to a file of the
    repository is an alias of it, not one more file to lint), so each is one item fewer."""
    skills = others = 0
    for dirpath, _dirs, files in os.walk(corpus):  # (a link to a folder is in _dirs, and not entered)
        for f in files:
            if os.path.islink(os.path.join(dirpath, f)):
                skills, others = (skills + 1, others) if f.lower() == "skill.md" else (skills, others + 1)
    return skills, others


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in EXPECTED])
def test_corpus(corpora: Path, name: str):
    corpus = corpora / name
    if not corpus.is_dir():
        pytest.skip(f"{name} is not in this checkout of the corpora")
    _check_corpus(corpus, name)


# The symbolic links of the corpora upstream (a checkout without links holds each as a file of its text).
LINKS = {
    "expo__skills": ("CLAUDE.md",), "getsentry__skills": ("CLAUDE.md", ".agents/skills"),
    "mattpocock__skills": ("AGENTS.md",), "obra__superpowers": ("AGENTS.md",), "wshobson__agents": ("CLAUDE.md",),
}


@pytest.mark.parametrize("name", sorted(LINKS))
def test_corpus_with_its_links_as_git_checks_them_out(corpora: Path, tmp_path: Path, name: str):
    """The counts hold whether the links are links (git) or were copied as files (this snapshot)."""
    import shutil

    if not (corpora / name).is_dir():
        pytest.skip(f"{name} is not in this checkout of the corpora")
    corpus = tmp_path / name
    shutil.copytree(corpora / name, corpus, symlinks=True)
    for rel in LINKS[name]:
        path = corpus / rel
        if not path.is_symlink():
            target = path.read_text().strip()
            path.unlink()
            path.symlink_to(target)
    _check_corpus(corpus, name)


def _check_corpus(corpus: Path, name: str) -> None:
    skills, others, errors = EXPECTED[name]
    linked_skills, linked_others = _linked_files(corpus)
    skills, others = skills - linked_skills, others - linked_others
    result = lint_root(corpus, LintConfig(select=("P2", "S3", "D1")))
    linted = {li.item.path: li for li in result.items}
    skill_items = {p for p, li in linted.items() if li.item.kind is ItemKind.SKILL}
    assert len(skill_items) == skills
    assert len(linted) - len(skill_items) == others
    # Every SKILL.md file (any case) gets a verdict, except the documented resource-folder files.
    files = _skill_files(corpus)
    excluded = {f for f in files if any(f"/{r}/" in f"/{f}" for r in RESOURCE_DIRS)}
    assert files - excluded == skill_items
    assert len(excluded) == (23 if name == "openclaw__skills" else 0)
    assert all(li.verdict in ("ok", "warning", "error") for li in linted.values())
    got = collections.Counter(d.code for d in result.diagnostics if d.severity is Severity.ERROR)
    assert dict(got) == errors
    assert all(d.code in RULES and d.path for d in result.diagnostics)


@pytest.mark.slow
def test_every_corpus_in_every_format_through_the_cli(corpora: Path, tmp_path: Path):
    """The installed command gives a report in each format for each corpus, never a traceback."""
    import json

    from conftest import run_skillc

    for corpus in sorted(p for p in corpora.iterdir() if p.is_dir()):
        for fmt in ("json", "sarif", "github", "text"):
            out = tmp_path / f"{corpus.name}.{fmt}"
            proc = run_skillc("lint", str(corpus), "--format", fmt, "--output", str(out))
            assert proc.returncode in (0, 1), (corpus.name, fmt, proc.stderr)
            assert "Traceback" not in proc.stderr and out.stat().st_size > 0
            if fmt in ("json", "sarif"):
                json.loads(out.read_text("utf-8"))
