"""The pre-commit hook, run by the real `pre-commit try-repo` against a git repository made here.

pre-commit installs hooks from a git repository, so the test commits a copy of this project's
files (tracked and new, as they are in the working tree) into a temporary repository and points
`try-repo` at it; the "user" repository is another temporary git repository with skills in it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
HOOKS = PROJECT / ".pre-commit-hooks.yaml"


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def pre_commit() -> list[str]:
    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    return [exe] if exe else [sys.executable, "-m", "pre_commit"]


def test_hook_definition():
    (hook,) = yaml.safe_load(HOOKS.read_text("utf-8"))
    assert hook["id"] == "skillc-lint" and hook["language"] == "python" and hook["entry"] == "skillc lint"
    assert hook["pass_filenames"] is True
    # Every changed file reaches skillc (a reference's secret or link is its skill's finding): no
    # `files` filter that would keep references/ or scripts/ out.
    assert "files" not in hook and hook["types"] == ["file"]
    # ... but for the folders discovery never reads (a committed bundle holds copies of the skills)
    from skillc.discover.walk import SKIP_DIRS

    exclude = re.compile(hook["exclude"])
    for folder in SKIP_DIRS:
        assert exclude.search(f"{folder}/api/files/pdf/SKILL.md") and exclude.search(f"x/{folder}/SKILL.md"), folder
    for path in ("skills/pdf/SKILL.md", "skills/pdf/references/build-notes.md", "distribution/SKILL.md"):
        assert not exclude.search(path), path


@pytest.mark.slow
def test_pre_commit_try_repo_fails_on_a_bad_skill_and_passes_when_fixed(tmp_path: Path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=PROJECT,
                                check=True, capture_output=True).stdout.decode().split("\0")
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("the project is not a git checkout")
    # 1. A committed copy of the project, as pre-commit needs.
    hook_repo = tmp_path / "skillc"
    for rel in filter(None, listed):
        src = PROJECT / rel
        if not (src.exists() or src.is_symlink()) or rel.startswith(("tests/", "benchmarks/", "site/")):
            continue
        dst = hook_repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
    git("init", "-q", cwd=hook_repo)
    git("add", "-A", cwd=hook_repo)
    git("commit", "-qm", "skillc", cwd=hook_repo)
    # 2. A user's repository with a broken skill.
    user = tmp_path / "user"
    skill = user / "skills" / "pdf" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: pdf\ndescription: Use when: the user asks for PDFs\n---\n# PDF\n")
    (user / "README.md").write_text("# not linted\n")
    git("init", "-q", cwd=user)
    git("add", "-A", cwd=user)
    git("commit", "-qm", "bad skill", cwd=user)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1", "PRE_COMMIT_COLOR": "never",
           "GIT_CONFIG_GLOBAL": os.devnull}

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run([*pre_commit(), "try-repo", str(hook_repo), "skillc-lint", "--all-files", "--verbose"],
                              cwd=user, env=env, capture_output=True, text=True, timeout=900)

    bad = try_repo()
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "skills/pdf/SKILL.md:3:22: P209" in bad.stdout
    assert "Failed" in bad.stdout
    # 3. Fix it (with skillc itself), commit, and the hook passes.
    skill.write_text("---\nname: pdf\ndescription: 'Use when: the user asks for PDFs'\n---\n# PDF\n")
    git("commit", "-qam", "fix", cwd=user)
    good = try_repo()
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
    # 4. A commit that only touches a reference: the skill it belongs to is linted.
    ref = skill.parent / "references" / "setup.md"
    ref.parent.mkdir()
    ref.write_text("export GITHUB_TOKEN=ghp_" + "Zq8vR2mK7xW4pL9sT3nB6yH1cF5dJ0gA2eUo\n")
    git("add", "-A", cwd=user)
    git("commit", "-qm", "reference", cwd=user)
    leak = subprocess.run([*pre_commit(), "try-repo", str(hook_repo), "skillc-lint", "--files",
                           "skills/pdf/references/setup.md", "README.md", "--verbose"],
                          cwd=user, env=env, capture_output=True, text=True, timeout=900)
    assert leak.returncode == 1, leak.stdout + leak.stderr
    assert "README.md" not in leak.stdout  # (skipped quietly)
    assert "skills/pdf/references/setup.md:1:21: B707" in leak.stdout, leak.stdout
