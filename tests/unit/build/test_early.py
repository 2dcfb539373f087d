"""What ``skillc build`` starts before it imports its stages (``build.early``): the docs site's mkdocs
child, whenever the build makes the mkdocs site, stopped when the build ends; nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.build.early import head_start, wants_mkdocs
from skillc.build.options import BuildOptions
from skillc.build.output import clean_stale
from skillc.emit.docsite import available

pytestmark = pytest.mark.skipif(not available(), reason="the mkdocs site (the site extra) is not installed")


def _options(tmp_path: Path, **kw) -> BuildOptions:
    return BuildOptions(**{"out": "out", "cwd": tmp_path, "cache_dir": tmp_path / "cache", "jobs": 2, "env": {},
                           "home": tmp_path, **kw})


def test_an_output_skillc_never_built_gets_nothing_written(tmp_path: Path):
    with head_start(_options(tmp_path)) as start:
        assert start.mkdocs is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_mkdocs_child_is_started_for_the_mkdocs_site_and_stopped_when_the_block_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with head_start(_options(tmp_path)) as start:
        child = start.mkdocs
        assert child is not None and child.poll() is None  # (importing, then waiting for its command)
    assert child.poll() is not None
    for opts in (_options(tmp_path, site=False), _options(tmp_path, env={"SOURCE_DATE_EPOCH": "soon"})):
        with head_start(opts) as start:  # (--no-site; a bad SOURCE_DATE_EPOCH: the plan reports it)
            assert start.mkdocs is None
    monkeypatch.setenv("SKILLC_SITE", "minimal")
    with head_start(_options(tmp_path)) as start:
        assert start.mkdocs is None


def test_a_killed_builds_staging_is_cleaned_and_a_misspelt_site_engine_is_left_to_the_site(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    work = tmp_path / ".skillc-build"
    (work / "out.tmp-1-held/skills").mkdir(parents=True)  # (pid 1 never runs a build)
    (work / "out.prev").mkdir()
    clean_stale(work, "out")
    assert [p.name for p in work.iterdir()] == ["out.prev"]
    monkeypatch.setenv("SKILLC_SITE", "mkdcos")
    assert not wants_mkdocs(_options(tmp_path))  # (the site emitter reports it, in its turn)


def test_the_head_start_comes_before_the_stages_imports():
    import subprocess
    import sys

    code = ("import sys, skillc.build.early, skillc.cli.build; "
            "print(sorted(m for m in sys.modules if m.startswith(('skillc.build.pipeline', 'skillc.validate', 'skillc.sources'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
