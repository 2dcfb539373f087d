"""The search index built in a forked process at the start of the emitters (``pipeline.FORKED_FIRST``):
the bundle and the cache it leaves are those of the index built in the build's own process, build
after build."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from site_fixture import make_site_repos

EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}


def _bundle(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _index_records(cache: Path) -> tuple[frozenset, frozenset]:
    """The keys of the cache's ``index`` table (its file and delta) and its ``index-files`` record files."""
    records = cache / "records"
    keys: set[str] = set()
    for name in ("index.pickle", "index.delta.pickle"):
        if (records / name).is_file():
            keys.update(pickle.loads((records / name).read_bytes())[2])
    return frozenset(keys), frozenset(p.name for p in (records / "index-files").iterdir())


def _build(tmp: Path, out: str, jobs: int):
    from skillc.build.pipeline import BuildOptions, run_build

    result = run_build(BuildOptions(paths=("team", "vendor"), out=out, cwd=tmp, cache_dir=tmp / f"cache-{out}",
                                    env=EPOCH, jobs=jobs, site=False))
    assert ("emit index (forked)" in result.timings) == (jobs > 1), sorted(result.timings)
    return result


def _edit(tmp: Path, description: str) -> None:
    path = tmp / "team/deploy-helper/SKILL.md"
    text = path.read_text()
    start = text.index("description:")
    path.write_text(text[:start] + f"description: {description}" + text[text.index("\n", start):])


@pytest.mark.parametrize("steps", [("Ship services. Use for releases.", "Ship services again. Use for releases."),
                                   ("Ship services. Use for releases.", "Deploy services to production.")])
def test_the_forked_index_publishes_and_caches_what_the_index_built_here_does(tmp_path: Path, steps):
    """A clean build then rebuilds changing one skill (postings updated from the cache): forked or
    not, the bundles are byte-identical and the cache keeps the same index records (a forked
    process's records would otherwise be lost with it, and the next rebuild would index every skill
    again)."""
    make_site_repos(tmp_path)
    for step in (None, *steps):
        if step is not None:
            _edit(tmp_path, step)
        _build(tmp_path, "forked", 2)
        _build(tmp_path, "here", 1)
        assert _bundle(tmp_path / "forked") == _bundle(tmp_path / "here")
        assert _index_records(tmp_path / "cache-forked") == _index_records(tmp_path / "cache-here")
    assert steps[-1].split(".")[0] in (tmp_path / "forked/api/index/docs-000.json").read_text()
