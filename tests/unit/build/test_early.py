"""What ``skillc build`` starts before it imports its stages (``build.early``): the docs site's mkdocs
child, whenever the build makes the mkdocs site, and its seed, forked only where a site build into this output left its kept site and the generation the build
will recycle has none; nothing written for an output skillc never built; the seed's folder gone
when the build ends, and spared by the build's own ``clean_stale``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillc.build.early import head_start, wants_mkdocs
from skillc.build.options import BuildOptions
from skillc.build.output import clean_stale
from skillc.emit.docsite import available
from skillc.emit.docsite.incremental import DIGESTS, FRAME_KEY, state_dir

pytestmark = pytest.mark.skipif(not available(), reason="the mkdocs site (the site extra) is not installed")


def _options(tmp_path: Path, **kw) -> BuildOptions:
    return BuildOptions(**{"out": "out", "cwd": tmp_path, "cache_dir": tmp_path / "cache", "jobs": 2, "env": {},
                           "home": tmp_path, **kw})


def _kept_site(tmp_path: Path) -> Path:
    """A finished site build's kept state for ``<tmp_path>/out`` (as ``emit.docsite.incremental`` keeps it)."""
    state = state_dir(tmp_path / "cache/emit", tmp_path / "out")
    table = {}
    for rel in ("index.html", "skills/a/index.html"):
        (state / "site" / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / "site" / rel).write_text(rel)
        st = (state / "site" / rel).stat()
        table[rel] = [st.st_ino, st.st_size, st.st_mtime_ns, "a" * 64]
    (state / DIGESTS).write_text(json.dumps(table))
    (state / FRAME_KEY).write_text("frame")
    return state


def test_an_output_skillc_never_built_is_seeded_nothing_and_nothing_is_written(tmp_path: Path):
    _kept_site(tmp_path)  # (even with a kept site for that path: no work area beside it yet)
    with head_start(_options(tmp_path)) as start:
        assert start.seed is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_the_seed_is_forked_when_the_recycled_generation_has_no_site_and_its_folder_goes_with_the_build(tmp_path: Path):
    state = _kept_site(tmp_path)
    work = tmp_path / ".skillc-build"
    (work / "out.prev").mkdir(parents=True)  # (a generation without a site: a --no-site build's)
    with head_start(_options(tmp_path)) as start:
        assert start.seed is not None
        seeded = start.seed()
        assert seeded is not None and seeded.folder == work / f"out.tmp-{os.getpid()}-seed"
        assert sorted(seeded.entries) == ["index.html", "skills/a/index.html"]
        assert os.path.samefile(seeded.folder / "skills/a/index.html", state / "site/skills/a/index.html")
        clean_stale(work, "out")  # (the build's own, after it takes the lock: this process's seed is live)
        assert seeded.folder.is_dir()
    assert sorted(p.name for p in work.iterdir()) == ["out.prev"]


@pytest.mark.parametrize("case", ["no site", "no cache", "minimal site", "recycled site"])
def test_no_seed_where_the_build_will_not_want_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str):
    _kept_site(tmp_path)
    work = tmp_path / ".skillc-build"
    (work / "out.prev/assets/skillc").mkdir(parents=True)
    if case == "recycled site":
        (work / "out.prev/assets/skillc/site.json").write_text("{}")
    if case == "minimal site":
        monkeypatch.setenv("SKILLC_SITE", "minimal")
    opts = _options(tmp_path, site=case != "no site", use_cache=case != "no cache")
    with head_start(opts) as start:
        assert start.seed is None
    assert not [p for p in work.iterdir() if ".tmp-" in p.name]


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


def test_a_killed_builds_seed_is_cleaned_and_a_misspelt_site_engine_is_left_to_the_site(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch):
    work = tmp_path / ".skillc-build"
    (work / "out.tmp-1-seed/skills").mkdir(parents=True)  # (pid 1 never runs a build)
    clean_stale(work, "out")
    assert list(work.iterdir()) == []
    monkeypatch.setenv("SKILLC_SITE", "mkdcos")
    assert not wants_mkdocs(_options(tmp_path))  # (the site emitter reports it, in its turn)


def test_the_head_start_comes_before_the_stages_imports():
    import subprocess
    import sys

    code = ("import sys, skillc.build.early, skillc.cli.build; "
            "print(sorted(m for m in sys.modules if m.startswith(('skillc.build.pipeline', 'skillc.validate', 'skillc.sources'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
