"""A repository's walk is remembered with the stat of every folder it listed: an unchanged
repository is not walked again, and a skill added, removed or renamed, or a COLLECTION.md edited,
is always seen by the next build (issue 21: a rebuild's work proportional to the change)."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write_skill
from skillc.cache import RACY_NS, BuildCache
from skillc.discover.walk import DiscoveryOptions, discover
from skillc.sources.filesystem import remembered_discovery

SECOND = 1_000_000_000


def _settled(cache_root: Path, tree: Path) -> BuildCache:
    """A cache as a build that began well after ``tree`` last changed leaves it."""
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in (p.lstat() for p in [tree, *tree.rglob("*")]))
    return BuildCache(cache_root, started_ns=newest + RACY_NS + SECOND)


def _remembered(cache_root: Path, tree: Path) -> tuple[list[str], dict[str, str], int]:
    """What a build that began after the tree settled sees: (item paths, collection texts, walks)."""
    cache = _settled(cache_root, tree)
    disc = remembered_discovery(tree, DiscoveryOptions(), cache)
    cache.save()
    return [i.path for i in disc.items], dict(disc.collection_docs), cache.stats.walked


def _same(tree: Path, cache_root: Path) -> None:
    """The remembered walk equals a fresh one."""
    cache = BuildCache(cache_root)
    assert remembered_discovery(tree, DiscoveryOptions(), cache) == discover(tree, DiscoveryOptions())


def test_an_unchanged_repository_is_not_walked_again(tmp_path: Path):
    tree = tmp_path / "repo"
    write_skill(tree, "team/alpha")
    write_skill(tree, "team/beta")
    (tree / "team/COLLECTION.md").write_text("# Team\n\nThe team's skills.\n")
    first = _remembered(tmp_path / "cache", tree)
    assert first == (["team/alpha/SKILL.md", "team/beta/SKILL.md"], {"team": "# Team\n\nThe team's skills."}, 1)
    again = _remembered(tmp_path / "cache", tree)
    assert again == (first[0], first[1], 0)
    _same(tree, tmp_path / "cache")


def test_added_removed_renamed_skills_and_an_edited_collection_are_seen(tmp_path: Path):
    tree = tmp_path / "repo"
    write_skill(tree, "team/alpha")
    write_skill(tree, "team/beta/inner")
    collection = tree / "team/COLLECTION.md"
    collection.write_text("# Team\n\nversion one\n")
    _remembered(tmp_path / "cache", tree)
    steps = [
        (lambda: write_skill(tree, "team/gamma"), "team/gamma/SKILL.md"),  # added
        (lambda: write_skill(tree, "team/beta/inner/deeper"), "team/beta/inner/deeper/SKILL.md"),  # nested, deep
        (lambda: (tree / "team/alpha/SKILL.md").unlink(), None),  # removed (the folder stays)
        (lambda: os.rename(tree / "team/gamma", tree / "team/delta"), "team/delta/SKILL.md"),  # renamed
    ]
    for change, expected in steps:
        change()
        paths, _, walked = _remembered(tmp_path / "cache", tree)
        assert walked == 1
        if expected is not None:
            assert expected in paths
        assert paths == [i.path for i in discover(tree, DiscoveryOptions()).items]
    assert "team/alpha/SKILL.md" not in paths and "team/gamma/SKILL.md" not in paths
    # a same-size edit in place that restores the mtime: only the file's ctime moves
    st = collection.stat()
    collection.write_text("# Team\n\nversion two\n")
    os.utime(collection, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, docs, walked = _remembered(tmp_path / "cache", tree)
    assert (docs["team"], walked) == ("# Team\n\nversion two", 1)


def test_a_walk_that_met_a_link_is_never_remembered(tmp_path: Path):
    """A link's target can change with no folder of the repository changing: such a walk is redone."""
    tree = tmp_path / "repo"
    write_skill(tree, "team/alpha")
    os.symlink(tmp_path / "elsewhere", tree / "team/outside")
    assert _remembered(tmp_path / "cache", tree)[2] == 1
    assert _remembered(tmp_path / "cache", tree)[2] == 1


def test_a_folder_whose_times_moved_is_listed_again(tmp_path: Path):
    """A build that began within the clock tick of a change cannot tell it from the next one, and a
    folder's times move when a file in it is saved by renaming a new one over it: such a folder is
    listed again, and the walk is redone only if its names changed (a skill added with the
    folder's mtime put back is still seen: its ctime moved)."""
    tree = tmp_path / "repo"
    skill = write_skill(tree, "team/alpha")
    racy = BuildCache(tmp_path / "cache")  # (began now: the folders changed just before)
    remembered_discovery(tree, DiscoveryOptions(), racy)
    racy.save()
    paths, _, walked = _remembered(tmp_path / "cache", tree)
    assert (paths, walked) == (["team/alpha/SKILL.md"], 0)
    saved = skill.with_name("SKILL.md.tmp")  # (what `sed -i` and many editors do)
    saved.write_text(skill.read_text().replace("Does the thing", "Does another thing"))
    os.replace(saved, skill)
    assert _remembered(tmp_path / "cache", tree)[1:] == ({}, 0)
    st = (tree / "team").stat()
    write_skill(tree, "team/beta")
    os.utime(tree / "team", ns=(st.st_atime_ns, st.st_mtime_ns))
    paths, _, walked = _remembered(tmp_path / "cache", tree)
    assert (paths, walked) == (["team/alpha/SKILL.md", "team/beta/SKILL.md"], 1)
    _same(tree, tmp_path / "cache")
