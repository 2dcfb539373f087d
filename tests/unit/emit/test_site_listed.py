"""The mkdocs child's dirty build from the parent's listing (``skillc.emit.docsite.listed``): the same
files as mkdocs' walk, only the changed files written, the same bytes as a clean build; and the
child's imports kept to what it needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EPOCH = 1700000000
MKDOCS_YML = """site_name: "Listed"
docs_dir: docs
exclude_docs: |
  !.*
use_directory_urls: true
theme:
  name: material
  font: false
plugins: []
nav:
  - "Home": "index.md"
  - "Guide": "guide/index.md"
validation:
  nav:
    omitted_files: ignore
  links:
    not_found: ignore
    anchors: ignore
"""
# Names that exercise get_files' rules: index/README first, a README beside an index (one output),
# two sources of one output (a.md, a.markdown), dot-folders taken back in, /templates/ left out,
# files before subfolders, static files.
DOCS = {
    "index.md": "# Home\n\nSee [the guide](guide/index.md) and [a](a.md).\n",
    "a.md": "# A\n",
    "a.markdown": "# A again\n",
    "zeta.md": "# Zeta\n",
    "guide/index.md": "# Guide\n\n[home](../index.md)\n",
    "guide/README.md": "# Readme beside an index\n",
    "guide/deep/README.md": "# Deep readme\n",
    "guide/deep/page.md": "# Deep page\n\n[a json](../../data/x.json)\n",
    ".hidden/secret.md": "# In a dot-folder\n",
    "templates/t.md": "# Left out by default\n",
    "data/x.json": "{\"a\": 1}\n",
    "data/y.json": "{\"b\": 2}\n",
    "b_c.md": "# B C\n",
}


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def make_project(root: Path) -> Path:
    for rel, text in DOCS.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    return root


def listing_of(project: Path) -> list[str]:
    docs = project / "docs"
    return sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file())


def test_files_from_the_listing_are_the_files_mkdocs_walks(tmp_path: Path, monkeypatch):
    needs_mkdocs()
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files

    from skillc.emit.docsite.listed import listed_files

    project = make_project(tmp_path / "p")
    monkeypatch.chdir(project)
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    walked, listed = get_files(config), listed_files(config, listing_of(project)[::-1])

    def rows(files):
        return [(f.src_uri, f.dest_uri, f.url, f.inclusion) for f in files]

    for rel in [*DOCS, "missing.md", "guide"]:  # (looked up first: as a rebuild does)
        a, b = walked.get_file_from_path(rel), listed.get_file_from_path(rel)
        assert (a and rows([a])) == (b and rows([b])), rel
    assert rows(listed) == rows(walked)
    assert len(listed) == len(walked) and "guide/README.md" not in [f.src_uri for f in listed]
    assert rows(listed.documentation_pages()) == rows(walked.documentation_pages())


def run_child(project: Path, site: Path, *command: str, listing: dict | None = None) -> None:
    """The bounded mkdocs child as ``run_mkdocs`` drives it: the command line, then the listing, on stdin."""
    from skillc.emit.docsite import mkdocs_env
    from skillc.emit.docsite.bounded import ARGS_FROM_STDIN

    args = [*command, "--config-file", str(project / "mkdocs.yml"), "--site-dir", str(site)]
    message = json.dumps(args) + "\n" + (json.dumps(listing) + "\n" if listing is not None else "")
    r = subprocess.run([sys.executable, "-m", "skillc.emit.docsite.bounded", ARGS_FROM_STDIN], input=message,
                       cwd=project, env=mkdocs_env(EPOCH), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns  # (a file written again may get the inode just freed)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_listed_rebuild_writes_what_changed_and_equals_a_clean_build(tmp_path: Path, jobs: str):
    """The changed page, the changed nav page and the changed static file are written again (new
    files); nothing else is, even a source whose time is newer than its output (the parent wrote
    only what the listing names); the site is the bytes a clean build of the same project writes."""
    needs_mkdocs()
    from skillc.emit.docsite.listed import LISTED_OPTION

    project, site = make_project(tmp_path / "p"), tmp_path / "site"
    run_child(project, site, "build", "--clean", "--jobs", jobs)
    before = {rel: stamp(site / rel) for rel in tree(site)}
    (project / "docs/guide/deep/page.md").write_text("# Deep page, changed\n\n[a json](../../data/x.json)\n")
    (project / "docs/index.md").write_text(DOCS["index.md"] + "\nMore.\n")
    (project / "docs/data/x.json").write_text("{\"a\": 2}\n")
    os.utime(project / "docs/zeta.md")  # (newer, unchanged: mkdocs' own dirty build would render it)
    changed = ["guide/deep/page.md", "index.md", "data/x.json"]
    run_child(project, site, "build", "--dirty", "--jobs", jobs, LISTED_OPTION,
              listing={"docs": listing_of(project), "changed": changed})
    after = tree(site)
    written = sorted(rel for rel in after if stamp(site / rel) != before.get(rel))
    assert written == ["data/x.json", "guide/deep/page/index.html", "index.html"], written
    assert b"Deep page, changed" in after["guide/deep/page/index.html"]
    clean = tmp_path / "clean"
    run_child(project, clean, "build", "--clean", "--jobs", "1")
    assert after == tree(clean)


def test_the_mkdocs_child_imports_only_what_it_runs():
    """The child (``python -m skillc.emit.docsite.bounded`` and the Markdown extensions its mkdocs.yml
    names) imports no emitter, model or lint stage: they are ≈ 0.35 s of its start, on the path of
    every rebuild."""
    code = ("import sys, skillc.emit.docsite.bounded, skillc.emit.docsite.listed, skillc.emit.docsite.page_workers, "
            "skillc.emit.docsite.markdown_config, skillc.emit.docsite.markdown_safe; "
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('skillc.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    heavy = ("skillc.emit.emitters", "skillc.resolve_types", "skillc.model", "skillc.memory", "skillc.index",
             "skillc.validate", "skillc.config", "skillc.parse")
    assert [m for m in loaded if m.startswith(heavy)] == []
    from skillc.emit import EMITTERS  # (still there for the build, imported on first use)

    assert [name for name, _ in EMITTERS][0] == "skills"
