"""The recycled generation's docs site seeded while the build reads its sources (``emit.docsite.seed``):
when the generation a rebuild recycles has no site (the build before last ran with ``--no-site``, or
there was none), the kept site is hard-linked into a folder the staging folder holds as that
generation's site just before the site runs (``Staging.hold``).  It only saves work: the bundle is the clean build's, byte for byte
(``test_site_catalog``: a rebuild after a build without the site)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from skillc.build.output import prepare_staging
from skillc.emit.docsite import SITE_RECORD
from skillc.emit.docsite.incremental import DIGESTS, FRAME_KEY, state_dir
from skillc.emit.docsite.seed import seed_site, seed_source
from skillc.emit.staging import Seed


def _kept_site(state: Path, files: dict[str, bytes], table_extra: dict | None = None) -> None:
    (state / "site").mkdir(parents=True)
    table = {}
    for rel, data in files.items():
        (state / "site" / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / "site" / rel).write_bytes(data)
        st = (state / "site" / rel).stat()
        table[rel] = [st.st_ino, st.st_size, st.st_mtime_ns, "a" * 64]
    (state / DIGESTS).write_text(json.dumps({**table, **(table_extra or {})}))
    (state / FRAME_KEY).write_text("frame")


def test_the_kept_site_is_linked_file_by_file_and_unsafe_or_missing_paths_are_left_out(tmp_path: Path):
    state = tmp_path / "state"
    _kept_site(state, {"index.html": b"home", "skills/a/index.html": b"a", "assets/x.css": b"x"},
               {"../escape.html": [1, 1, 1, "b" * 64], "gone/index.html": [1, 1, 1, "c" * 64]})
    entries = seed_site(state, tmp_path / "seed")
    assert sorted(entries) == ["assets/x.css", "index.html", "skills/a/index.html"]
    assert entries["skills/a/index.html"] == ("a" * 64, 1)
    for rel in entries:
        assert os.path.samefile(tmp_path / "seed" / rel, state / "site" / rel)
    assert not (tmp_path / "escape.html").exists() and not (tmp_path / "seed/gone").exists()


def test_a_seed_is_asked_for_only_when_the_recycled_generation_has_no_site(tmp_path: Path):
    cache, out, prev = tmp_path / "cache", tmp_path / "out", tmp_path / ".skillc-build/out.prev"
    assert seed_source(cache, out, prev) is None  # (no kept site)
    state = state_dir(cache, out)
    _kept_site(state, {"index.html": b"home"})
    assert seed_source(cache, out, prev) == state
    assert seed_source(None, out, prev) is None  # (a build without a cache)
    (prev / SITE_RECORD).parent.mkdir(parents=True)
    (prev / SITE_RECORD).write_text("{}")
    assert seed_source(cache, out, prev) is None  # (the recycled generation has its site)
    (prev / SITE_RECORD).unlink()
    (state / FRAME_KEY).unlink()
    assert seed_source(cache, out, prev) is None  # (the last site build did not finish)


def test_the_staging_folder_holds_the_seed_unless_the_recycled_generation_has_those_trees(tmp_path: Path):
    work = tmp_path / ".skillc-build"
    work.mkdir()
    seed = work / "seed"
    (seed / "skills/a").mkdir(parents=True)
    (seed / "skills/a/index.html").write_text("a")
    entries = {"skills/a/index.html": ("a" * 64, 1)}
    path, staging, _ = prepare_staging(work, "out", tmp_path / "out", None)
    asked = []
    staging.seed = lambda: asked.append(1) or Seed(seed, entries)
    staging.hold_seed()
    staging.hold_seed()  # (waited for once)
    assert asked == [1]
    assert (staging.held / "skills/a/index.html").read_text() == "a" and staging.held_entries == entries
    assert not (seed / "skills").exists()
    assert staging.reclaim("skills") and (path / "skills/a/index.html").is_file()
    # a second seed of a tree the recycled generation holds is not taken: it stays where it is
    again = work / "again"
    (again / "skills/b").mkdir(parents=True)
    (again / "skills/b/index.html").write_text("b")
    staging.hold(again, {"skills/b/index.html": ("b" * 64, 1)})
    assert (again / "skills/b/index.html").is_file() and staging.held_entries == entries
