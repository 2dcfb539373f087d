"""build/output.py: the one lock, staging folder and swap that `skillc build` and `skillc import` share.

The commands' own tests (test_build_trust, test_full_disk, the import tests in test_archive_zip) check
them end to end; these check the interface they are built on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillc.build.output import OutputLock, clean_stale, move_in, staged_bundle, staging_folder
from skillc.errors import SkillcError


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _busy(holder: str, path: Path) -> SkillcError:
    return SkillcError(f"held by {holder} ({path.name})")


def test_a_staged_bundle_is_swapped_in_only_when_the_block_ends_normally(tmp_path):
    work, out = tmp_path / ".skillc-build", tmp_path / "dist"
    out.mkdir()
    (out / "old.txt").write_text("previous bundle\n")
    work.mkdir()
    with pytest.raises(RuntimeError), staged_bundle(work, out, None, keep_previous=True) as staged:
        (staged.path / "new.txt").write_text("half written\n")
        raise RuntimeError("an emitter failed")
    assert _tree(out) == {"old.txt": b"previous bundle\n"}  # left as it was
    assert list(work.iterdir()) == []  # the staging folder removed
    with staged_bundle(work, out, None, keep_previous=True) as staged:
        (staged.path / "new.txt").write_text("complete\n")
    assert _tree(out) == {"new.txt": b"complete\n"}
    assert _tree(work / "dist.prev") == {"old.txt": b"previous bundle\n"}  # kept for the next build
    with staged_bundle(work, out, None, keep_previous=False) as staged:
        (staged.path / "newer.txt").write_text("again\n")
    assert _tree(out) == {"newer.txt": b"again\n"} and not (work / "dist.prev").exists()


def test_a_lock_file_names_its_holder_and_refuses_a_second_writer(tmp_path):
    lock = tmp_path / "work" / "dist.lock"
    with OutputLock(lock, _busy):
        assert lock.read_text() == f"{os.getpid()}\n"
        # (flock locks belong to the open file description: a second open in this process is refused too)
        with pytest.raises(SkillcError, match=rf"held by {os.getpid()} \(dist.lock\)"), OutputLock(lock, _busy):
            pass
    assert lock.read_text() == ""  # emptied on release
    with OutputLock(lock, _busy):  # and free again
        pass


def test_a_folder_lock_writes_nothing_into_the_folder(tmp_path):
    into = tmp_path / "skills"
    into.mkdir()
    with OutputLock(into, _busy, folder=True):
        with pytest.raises(SkillcError, match=r"held by \? \(skills\)"), OutputLock(into, _busy, folder=True):
            pass
    assert list(into.iterdir()) == []


def test_move_in_replaces_each_folder_and_a_staging_folder_is_always_removed(tmp_path):
    into, work = tmp_path / "into", tmp_path / "into" / ".skillc-build"
    (into / "a").mkdir(parents=True)
    (into / "a" / "SKILL.md").write_text("old a\n")
    work.mkdir()
    (work / "import.tmp-dead").mkdir()  # a killed run's leftovers
    clean_stale(work, "import")
    with staging_folder(work, "import") as staging:
        for name in "ab":
            (staging / "skills" / name).mkdir(parents=True)
            (staging / "skills" / name / "SKILL.md").write_text(f"new {name}\n")
        move_in(["a", "b"], into, staging, staging / "skills")
    assert _tree(into) == {"a/SKILL.md": b"new a\n", "b/SKILL.md": b"new b\n"}
    assert list(work.iterdir()) == []
