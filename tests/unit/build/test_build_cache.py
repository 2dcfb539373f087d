"""The build cache's parse records: a document read back from the cache is the document the parser made."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from skillc.cache import BuildCache
from skillc.model import ItemKind
from skillc.parse.document import parse_document

DOCS = {
    "plain": "---\nname: a\ndescription: Does a.\n---\n# A\n\nBody.\n",
    "nested": ("---\nname: b\ndescription: >-\n  Folded\n  text.\nmetadata:\n  version: '1.0'\n  owners: [ana, bo]\n"
               "  limits: {cpu: 2}\ntags:\n  - x\n  - 'y'\nallowed-tools: Read Grep\n---\nBody.\n"),
    "bom-crlf": "\ufeff---\r\nname: c\r\ndescription: \"Quoted: yes\"\r\n---\r\nBody\r\n",
    "dates-and-types": "---\nname: d\ndescription: D.\ncreated: 2024-01-02\nstable: yes\ncount: 3\nempty:\n---\n",
    "broken-yaml": "---\nname: [unclosed\n---\nBody.\n",
    "no-frontmatter": "# Just Markdown\n",
}


@pytest.mark.parametrize("name", sorted(DOCS))
def test_cached_document_equals_parsed_document(tmp_path: Path, name: str):
    raw = DOCS[name].encode("utf-8")
    (tmp_path / "s").mkdir()
    (tmp_path / "s/SKILL.md").write_bytes(raw)
    parsed = parse_document(raw, "s/SKILL.md", ItemKind.SKILL, "s")

    first = BuildCache(tmp_path / "cache")
    assert first.read_document(str(tmp_path), "s/SKILL.md", ItemKind.SKILL, "s") == parsed
    first.save()
    second = BuildCache(tmp_path / "cache")
    doc = second.read_document(str(tmp_path), "s/SKILL.md", ItemKind.SKILL, "s")
    assert (first.stats.parsed, second.stats.cached) == (1, 1)

    assert doc == parsed
    for field in ("path", "kind", "sha256", "size", "text", "body", "body_line", "diagnostics"):
        assert getattr(doc, field) == getattr(parsed, field), field
    assert (doc.frontmatter is None) == (parsed.frontmatter is None)
    if parsed.frontmatter is not None:
        a, b = parsed.frontmatter, doc.frontmatter
        assert b.data == a.data and (b.start_line, b.end_line) == (a.start_line, a.end_line)
        assert dict(b.keys.items()) == dict(a.keys.items())
        assert dict(b.scalars.items()) == dict(a.scalars.items())
        for path in a.keys:  # what rules ask for
            assert b.position(*path) == a.position(*path) and b.value_position(*path) == a.value_position(*path)
        # still picklable (documents go to worker processes)
        assert dict(pickle.loads(pickle.dumps(b.scalars)).items()) == dict(a.scalars.items())


def test_site_and_no_site_builds_share_the_cache(tmp_path: Path):
    """Pull-request builds with `--no-site` and site builds on main share one cache: switching parses
    and renders nothing again, and the bundle is the one a build without cache makes."""
    import filecmp

    from conftest import run_skillc, write_skill

    for i in range(3):
        write_skill(tmp_path / "repo", f"s{i}")
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    stats = []
    for args in (("--no-site",), (), ("--no-site",)):
        r = run_skillc("build", "repo", "--out", "out", "--json", *args, cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        stats.append({k: v for k, v in json.loads(r.stdout).items() if k in ("parsed", "rendered")})
    assert stats == [{"parsed": 3, "rendered": 3}, {"parsed": 0, "rendered": 0}, {"parsed": 0, "rendered": 0}]
    r = run_skillc("build", "repo", "--out", "fresh", "--no-site", "--no-cache", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    assert all(filecmp.cmp(out / f, fresh / f, shallow=False) for f in files)


# --- tables of large records, one file each (FILE_TABLES) ------------------------------------------

def _files_of(root: Path) -> set[str]:
    folder = root / "index-files"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def test_a_file_table_record_is_read_back_only_when_asked_for_and_dropped_when_unused(tmp_path: Path):
    root = tmp_path / "records"
    first = BuildCache(root)
    first.put("index-files", "a" * 64, {"postings": b"x" * 1000})
    first.put("index-files", "b" * 64, ("ids", b"y"))
    first.save()
    assert _files_of(root) == {"a" * 64 + ".pickle", "b" * 64 + ".pickle"}

    second = BuildCache(root)
    assert second.get("index-files", "a" * 64) == {"postings": b"x" * 1000}
    assert second.get("index-files", "c" * 64) is None
    second.save()  # (b was not used by this build: its file goes; a is kept as it was)
    assert _files_of(root) == {"a" * 64 + ".pickle"}
    assert BuildCache(root).get("index-files", "a" * 64) == {"postings": b"x" * 1000}


def test_a_file_table_record_of_another_version_or_key_is_never_served(tmp_path: Path):
    root = tmp_path / "records"
    old = BuildCache(root, salt="config one")
    old.put("index-files", "a" * 64, "old value")
    old.put("index-files", "not a sha", "odd key")
    old.save()
    assert BuildCache(root, salt="config two").get("index-files", "a" * 64) is None
    assert BuildCache(root, salt="config one").get("index-files", "not a sha") == "odd key"
    # a file renamed to another key's name is not that key's record
    (root / "index-files" / ("a" * 64 + ".pickle")).rename(root / "index-files" / ("d" * 64 + ".pickle"))
    assert BuildCache(root, salt="config one").get("index-files", "d" * 64) is None


def test_a_fresh_cache_reads_no_file_table_record_and_its_save_removes_them(tmp_path: Path):
    root = tmp_path / "records"
    old = BuildCache(root)
    old.put("index-files", "a" * 64, "old")
    old.save()
    fresh = BuildCache(root, fresh=True)
    assert fresh.get("index-files", "a" * 64) is None
    fresh.put("index-files", "b" * 64, "new")
    fresh.save()
    assert _files_of(root) == {"b" * 64 + ".pickle"}


def test_a_file_table_record_put_again_replaces_its_file(tmp_path: Path):
    root = tmp_path / "records"
    first = BuildCache(root)
    first.put("index-files", "a" * 64, "one")
    first.save()
    second = BuildCache(root)
    assert second.get("index-files", "a" * 64) == "one"
    second.put("index-files", "a" * 64, "two")
    second.save()
    assert BuildCache(root).get("index-files", "a" * 64) == "two"
    assert not [p for p in (root / "index-files").iterdir() if p.name.startswith(".")]  # no temporary left


def test_tables_are_read_when_first_looked_at_and_keep_exactly_what_the_build_used(tmp_path: Path):
    root = tmp_path / "records"
    first = BuildCache(root)
    for table in ("lint", "gzip", "wellknown"):
        first.put(table, "a", f"{table} a")
        first.put(table, "b", f"{table} b")
    first.save()
    second = BuildCache(root)
    assert second.get("lint", "a") == "lint a"  # (read now)
    second.put("gzip", "c", "gzip c")  # a put into a table not looked at yet: its records stay what they were
    assert second.get("gzip", "b") == "gzip b"
    second.save()  # wellknown was never looked at: none of its records was used
    third = BuildCache(root)
    assert [third.get("lint", k) for k in "ab"] == ["lint a", None]
    assert [third.get("gzip", k) for k in "abc"] == [None, "gzip b", "gzip c"]
    assert [third.get("wellknown", k) for k in "ab"] == [None, None]


def test_an_unchanged_file_read_under_another_path_is_the_document_of_that_path(tmp_path: Path):
    # (the stat record keeps the parse record's key with the path, kind and skill it was read
    # under: read from another root, the same file is parsed as the file at its new path)
    import os
    import time

    raw = DOCS["broken-yaml"].encode("utf-8")  # (its diagnostics name the path)
    (tmp_path / "r/s").mkdir(parents=True)
    (tmp_path / "r/s/SKILL.md").write_bytes(raw)
    later = time.time_ns() + 10_000_000_000  # (builds that start well after the file was written: its stat is settled)
    st = os.lstat(tmp_path / "r/s/SKILL.md")
    first = BuildCache(tmp_path / "cache", started_ns=later)
    first.read_document(str(tmp_path / "r"), "s/SKILL.md", ItemKind.SKILL, "s", st)
    first.save()
    second = BuildCache(tmp_path / "cache", started_ns=later)
    assert second.read_document(str(tmp_path / "r"), "s/SKILL.md", ItemKind.SKILL, "s", st) == \
        parse_document(raw, "s/SKILL.md", ItemKind.SKILL, "s")
    assert (second.stats.stat_cached, second.stats.hashed) == (1, 0)  # (not even read)
    moved = second.read_document(str(tmp_path), "r/s/SKILL.md", ItemKind.SKILL, "r/s", st)
    assert moved == parse_document(raw, "r/s/SKILL.md", ItemKind.SKILL, "r/s")


def test_the_records_a_forked_process_used_or_put_are_kept_once_the_build_adopts_them(tmp_path: Path):
    """The search index runs in a forked process: the records it used (as loaded, or a record file
    kept unread) and those it put reach the next build through ``changes`` and ``adopt``, and those
    it did not use are dropped, as if it had run in the build's process."""
    from skillc.parallel import fork_call

    root = tmp_path / "records"
    first = BuildCache(root)
    for key in ("used", "unused"):
        first.put("index", key, (1, 2, key.encode()))
    first.put("index-files", "a" * 64, "files a")
    first.put("index-files", "b" * 64, "files b")
    first.save()

    build = BuildCache(root)

    def forked() -> tuple:
        assert build.get("index", "used") == (1, 2, b"used")
        assert build.get("index-files", "a" * 64) == "files a"
        build.put("index", "new", (3, 4, b"new"))
        build.put("index-files", "c" * 64, "files c")
        return build.changes(("index", "index-files"))

    running = fork_call(forked, 2)
    assert running is not None
    build.adopt(running.result())
    build.save()
    after = BuildCache(root)
    assert [after.get("index", k) for k in ("used", "new", "unused")] == [(1, 2, b"used"), (3, 4, b"new"), None]
    assert [after.get("index-files", c * 64) for c in "acb"] == ["files a", "files c", None]


def test_kept_answers_the_keys_whose_record_is_the_value_and_keeps_only_those(tmp_path: Path):
    """``kept`` (the publishing gate's verdicts, many at once): a record loaded with the value or put by
    this build with it is a hit and kept for the next build; one with another value, or none (even
    when the value asked for is None), is not; a key asked twice counts once."""
    root = tmp_path / "records"
    first = BuildCache(root)
    for key, value in (("same", "rules-1"), ("other", "rules-0"), ("unused", "rules-1")):
        first.put("bundle-clean", key, value)
    first.save()
    second = BuildCache(root)
    second.put("bundle-clean", "put-now", "rules-1")
    second.put("bundle-clean", "put-other", "rules-0")
    asked = ["same", "other", "missing", "put-now", "put-other", "same"]
    assert second.kept("bundle-clean", asked, "rules-1") == {"same", "put-now"}
    assert second.kept("bundle-clean", ["missing", "absent"], None) == set()
    second.save()
    third = BuildCache(root)
    assert [third.get("bundle-clean", k) for k in ("same", "put-now", "unused", "missing")] == \
        ["rules-1", "rules-1", None, None]
