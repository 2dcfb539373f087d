"""The ``.gz`` copies a rebuild takes from the build cache instead of compressing again."""

from __future__ import annotations

import gzip
from pathlib import Path

from bundle_contract import build_env
from conftest import run_skillc, write_skill
from skillc.emit.precompressed import gzip_bytes


def _build(tmp_path: Path) -> None:
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr


def _copies(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.gz"))}


def _kept(tmp_path: Path) -> list[Path]:
    return sorted(Path(build_env(tmp_path)["SKILLC_CACHE_DIR"]).rglob("gz/*/*.gz"))


def _repo(tmp_path: Path, words: str) -> None:
    for i in range(30):
        write_skill(tmp_path / "repo", f"skill-{i:02}", body=f"# Skill {i}\n\n{words} number {i}.\n" * 20)


def test_a_rebuild_takes_each_copy_from_the_cache_and_keeps_only_those_of_its_files(tmp_path: Path):
    _repo(tmp_path, "Parse the ledger")
    _build(tmp_path)
    out = tmp_path / "out"
    first = _copies(out)
    assert first and all(gzip.decompress(data) == (out / rel[:-3]).read_bytes() for rel, data in first.items())
    kept = _kept(tmp_path)
    assert sorted(p.read_bytes() for p in kept) == sorted(first.values())
    write_skill(tmp_path / "repo", "skill-07", body="# Skill 7\n\nReconcile the accounts instead.\n")
    _build(tmp_path)
    second = _copies(out)
    assert all(data == gzip_bytes((out / rel[:-3]).read_bytes()) for rel, data in second.items())
    assert sorted(p.read_bytes() for p in _kept(tmp_path)) == sorted(second.values())  # (the stale ones gone)


def test_a_damaged_kept_copy_is_made_again(tmp_path: Path):
    _repo(tmp_path, "Summarise the meeting")
    _build(tmp_path)
    for path in _kept(tmp_path):
        path.write_bytes(gzip_bytes(b"something else"))
    _build(tmp_path)
    out = tmp_path / "out"
    copies = _copies(out)
    assert copies and all(gzip.decompress(data) == (out / rel[:-3]).read_bytes() for rel, data in copies.items())
