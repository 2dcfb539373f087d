"""What a rebuild knows of the bundle it replaces (issue 21): the manifest it wrote there is
trusted by its bytes' hash, never by its name, and the files emitters state are listed as a walk
and a read would list them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from test_build_trust import build_json

from bundle_contract import build_env, make_sample_repo
from conftest import run_skillc


def test_a_manifest_replaced_after_the_build_is_read_again(tmp_path: Path):
    """The last build's manifest is not parsed again while the output holds its very bytes; any
    other file there is read as any manifest is (a stranger's file: refused without --force)."""
    make_sample_repo(tmp_path / "repo")
    build_json(tmp_path, "repo", "--out", "out")
    build_json(tmp_path, "repo", "--out", "out")  # (the trusted manifest: a rebuild as any other)
    manifest = tmp_path / "out/api/manifest.json"
    manifest.write_text('{"kind": "not a manifest"}\n')
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1 and "holds no skillc bundle" in r.stderr


def test_every_listed_digest_is_the_file_on_disk(tmp_path: Path):
    """The digests emitters state (well-known indexes and tree, search index, precompressed copies)
    are those of the bytes published, after a change and a removal too."""
    repo = tmp_path / "repo"
    make_sample_repo(repo)
    build_json(tmp_path, "repo", "--out", "out")
    first = next(p for p in sorted(repo.rglob("SKILL.md")))
    first.write_text(first.read_text().replace("description: ", "description: Changed. ", 1))
    for _ in range(2):
        build_json(tmp_path, "repo", "--out", "out")
        out = tmp_path / "out"
        rows = json.loads((out / "api/manifest.json").read_bytes())["files"]
        assert {r["path"]: (r["sha256"], r["size"]) for r in rows} == {
            p.relative_to(out).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_size)
            for p in out.rglob("*") if p.is_file() and p != out / "api/manifest.json"}


def test_a_listed_folder_s_stated_file_that_changed_since_is_read_again(tmp_path: Path):
    """A folder an emitter lists (the docs site's, in a rebuild) is not walked: its files are those
    stated, each taken only while it is still the inode, size and time stated; another is read."""
    import os

    from skillc.emit.manifest import file_entries

    (tmp_path / "site/a").mkdir(parents=True)
    kept, changed = tmp_path / "site/a/index.html", tmp_path / "site/b.html"
    kept.write_bytes(b"kept page\n")
    changed.write_bytes(b"old page\n")
    stated = {}
    for path in (kept, changed):
        st = os.stat(path)
        stated[path.relative_to(tmp_path).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns, "stated-digest")
    changed.unlink()
    changed.write_bytes(b"a new page\n")  # (another inode and size: what was stated no longer holds)
    rows = {r["path"]: r["sha256"] for r in file_entries(tmp_path, {}, stated=stated, listed=("site",))}
    assert rows == {"site/a/index.html": "stated-digest",
                    "site/b.html": hashlib.sha256(b"a new page\n").hexdigest()}


def test_the_manifest_rows_listed_in_two_parts_are_those_listed_whole(tmp_path: Path):
    """The build lists the files below the other emitters' top-level names while the docs site is
    built and the site's after it (``manifest_part``, ``write_manifest``): merged, the rows are
    those listed in one pass, in path byte order, whatever names sort between the parts'."""
    from skillc.emit.manifest import _file_rows, _Rows, _Sources, _Tops, file_entries
    from skillc.layout import BUNDLE_TOPS

    for rel in ("api/skills.json", "api/index/a.json", "api.html", "api-x/y", "_headers", "_routing/nginx.conf",
                ".well-known/agent-skills/index.json", ".nojekyll", "index.html", "assets/skillc/x.js",
                "_redirects", "a/b", "a-b/c", "a.b", "zz/é.html", "skills/x/index.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    src = _Sources({"api/skills.json": ("stated", 3)}, None, {}, ())
    early = _Rows.of(_file_rows(tmp_path, src, _Tops(BUNDLE_TOPS, True)))
    rest = _Rows.of(_file_rows(tmp_path, src, _Tops(BUNDLE_TOPS, False)))
    assert {e["path"].split("/")[0] for e in early.entries} == {"api", "_headers", "_routing", ".well-known",
                                                                "_redirects"}
    whole = file_entries(tmp_path, {"api/skills.json": ("stated", 3)})
    assert early.merged(rest).entries == whole
    assert [e["path"] for e in whole] == sorted((e["path"] for e in whole), key=lambda p: p.encode())


def test_rows_sort_by_their_bytes_whatever_the_names():
    """ASCII paths sort as strings; a name with other characters by its bytes, where code point
    order is not byte order (an undecodable name's byte, kept as a lone surrogate, against U+E000)."""
    from skillc.emit.manifest import _sort_rows

    rows = [("b/x", ("1", 1)), ("a/\udcff", ("2", 1)), ("a/\ue000", ("3", 1)), ("a/z", ("4", 1))]
    _sort_rows(rows)
    assert [r[0] for r in rows] == ["a/z", "a/\ue000", "a/\udcff", "b/x"]
    ascii_rows = [("b", ("1", 1)), ("B", ("2", 1)), ("a-b/c", ("3", 1)), ("a/c", ("4", 1))]
    _sort_rows(ascii_rows)
    assert [r[0] for r in ascii_rows] == ["B", "a-b/c", "a/c", "b"]
