"""The site's pages rendered by worker processes inside the bounded mkdocs child (``page_workers``):
the same bytes as one process, every page's bound kept, a failing page failing the site by name
(that they die with the build: ``tests/unit/build/test_hostile_input.py``); the child started
before its project exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_skill

EPOCH = 1700000000
NESTED = "".join("    " * i + "- level\n" for i in range(250))  # RecursionError in Python-Markdown: a fallback


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The mkdocs project of a 90-skill build (kept in the cache's site state), one skill too deep to render."""
    needs_mkdocs()
    from skillc.build.pipeline import BuildOptions, run_build

    tmp = tmp_path_factory.mktemp("workers")
    repo = tmp / "repo"
    for i in range(90):
        write_skill(repo, f"c{i % 3}/skill-{i:02d}", body=f"# Skill {i}\n\n- step\n\n    ```python\n    x = {i}\n    ```\n\n"
                                                          f"## Part\n\n[home](https://example.org/{i})\n")
    write_skill(repo, "deep", body="\n" + NESTED)
    run_build(BuildOptions(paths=("repo",), out="out", cwd=tmp, cache_dir=tmp / "cache", jobs=1,
                           env={"SOURCE_DATE_EPOCH": str(EPOCH)}))
    return next((tmp / "cache").rglob("project/mkdocs.yml")).parent


def build_site(project: Path, site: Path, jobs: int) -> subprocess.CompletedProcess:
    """The bounded mkdocs child, as ``run_mkdocs`` starts it, with ``--jobs``."""
    from skillc.emit.docsite import mkdocs_env
    from skillc.emit.docsite.bounded import FALLBACK_LOG

    (project / FALLBACK_LOG).unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-m", "skillc.emit.docsite.bounded", "build", "--clean", "--config-file",
                           str(project / "mkdocs.yml"), "--site-dir", str(site), "--jobs", str(jobs)],
                          cwd=project, env=mkdocs_env(EPOCH), capture_output=True, text=True, timeout=300)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_pages_rendered_by_workers_are_the_bytes_one_process_writes(project: Path, tmp_path: Path):
    from skillc.emit.docsite.bounded import read_log

    one = build_site(project, tmp_path / "one", jobs=1)
    assert one.returncode == 0, one.stderr
    log_one = read_log(project)
    two = build_site(project, tmp_path / "two", jobs=2)
    assert two.returncode == 0, two.stderr
    assert "pages in 2 worker processes" in two.stderr and "worker processes" not in one.stderr
    a, b = tree(tmp_path / "one"), tree(tmp_path / "two")
    assert len(a) > 90 and sorted(a) == sorted(b)
    assert [rel for rel in a if a[rel] != b[rel]] == []
    # The bound holds in a worker: the deep page is shown as text and logged once, as by one process.
    assert read_log(project) == log_one and [f.doc for f in log_one] == ["skills/deep/index.md"]
    assert "Shown as plain text" in (tmp_path / "two/skills/deep/index.html").read_text()


def test_a_page_that_fails_in_a_worker_fails_the_site_with_its_name(project: Path, tmp_path: Path):
    from skillc.emit.docsite import run_mkdocs
    from skillc.errors import BuildError

    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    page = copy / "docs/skills/c1/skill-40/index.md"
    page.write_text(page.read_text().replace("---\n", "---\ntemplate: missing.html\n", 1))
    with pytest.raises(BuildError) as caught:
        run_mkdocs(copy / "mkdocs.yml", tmp_path / "site", EPOCH, jobs=2)
    assert "skills/c1/skill-40/index.md" in str(caught.value) and "missing.html" in str(caught.value)


def test_mkdocs_started_before_its_project_builds_it_and_an_unused_one_ends(project: Path, tmp_path: Path):
    from skillc.emit.docsite import run_mkdocs, start_mkdocs, stop_mkdocs

    unused = start_mkdocs(EPOCH)  # (a build whose site is reused: nothing to run)
    stop_mkdocs(unused)
    assert unused.returncode is not None  # (ended, not left running)
    child = start_mkdocs(EPOCH)
    copy = tmp_path / "project"
    shutil.copytree(project, copy)  # (written while the child imports)
    run_mkdocs(copy / "mkdocs.yml", tmp_path / "site", EPOCH, jobs=1, child=child)
    assert child.returncode == 0 and "skill-07" in (tmp_path / "site/skills/c1/skill-07/index.html").read_text()


_WAITED = """
import io, os, sys
from skillc.emit.docsite import bounded
sys.stdin = io.StringIO("\\n")
assert bounded._args_from_stdin() is None  # (the wait: imports, then its input closed)
sys.stdin = sys.__stdin__
before = set(sys.modules)
def _exit(code):
    print("\\n".join(sorted(set(sys.modules) - before)), flush=True)
    os._exit(code)
bounded._exit = _exit
bounded.main(["build", "--clean", "--config-file", sys.argv[1], "--site-dir", sys.argv[2]])
"""


def test_the_waiting_mkdocs_child_has_imported_what_its_build_needs(project: Path, tmp_path: Path):
    """The child imports mkdocs, the theme and the Markdown extensions while it waits for its
    command (``bounded._args_from_stdin``), and what those import on a first page too: after the
    command arrives, a build imports nothing of them (only the lexers of the languages it meets)."""
    from skillc.emit.docsite import mkdocs_env

    done = subprocess.run([sys.executable, "-c", _WAITED, str(project / "mkdocs.yml"), str(tmp_path / "site")],
                          cwd=project, env=mkdocs_env(EPOCH), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "site/skills/c1/skill-07/index.html").is_file()
    tools = ("mkdocs", "material", "pymdownx", "markdown", "jinja2", "colorama", "pygments")
    lexers = ("pygments.lexers.", "pygments.unistring")  # (what the languages it meets need)
    late = [m for m in done.stdout.split() if m.startswith(tools) and not m.startswith(lexers)]
    assert late == []
