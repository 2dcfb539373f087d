"""The publishing gate reads the manifest in pieces (issue 21): its head and blocks of its rows, each
cut at a line break and checked by itself, so a rebuild scans the blocks it has not seen clean
(the site's rows after the join; the others while the site is built) instead of 13 MB.  Scanned
apart, the pieces must see every secret a scan of the whole manifest sees."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from bundle_contract import make_sample_repo
from secret_forms import FORMS
from skillc import gate, secrets
from skillc.build.pipeline import BuildOptions, run_build
from skillc.cache import BuildCache
from skillc.emit.common import pretty_json_head, pretty_json_rows, write
from skillc.emit.manifest import _line, _Rows, manifest_pieces
from skillc.errors import BuildError
from skillc.layout import MANIFEST

GHP = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"

# The patterns whose regex can match a line break: ``gate.check_pieces`` explains why none of them
# can match across one of the manifest's (pretty JSON); a pattern added here needs the same reasoning.
CROSS_LINES = {"private-key", "putty-private-key", "aws-secret-access-key", "bearer-token"}


def _matches_newline(items, dotall: bool) -> bool:
    """Whether a parsed regex (``re._parser``) has a part that consumes ``\\n``."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op is c.LITERAL and av == 10 or op is c.NOT_LITERAL and av != 10 or op is c.ANY and dotall:
            return True
        if op is c.IN and _class_has_newline(av):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and _matches_newline(av[2], dotall):
            return True
        if op is c.SUBPATTERN and _matches_newline(av[3], (dotall or bool(av[1] & re.S)) and not av[2] & re.S):
            return True
        if op is c.BRANCH and any(_matches_newline(b, dotall) for b in av[1]):
            return True
        if op is c.ATOMIC_GROUP and _matches_newline(av, dotall):
            return True
        assert op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT,
                      c.SUBPATTERN, c.BRANCH, c.ATOMIC_GROUP, c.AT, c.ASSERT, c.ASSERT_NOT, c.GROUPREF), op
    return False


def _class_has_newline(items) -> bool:
    from re import _constants as c  # type: ignore[attr-defined]

    negate = bool(items) and items[0][0] is c.NEGATE
    hit = False
    for op, av in items[1 if negate else 0:]:
        if op is c.LITERAL:
            hit |= av == 10
        elif op is c.RANGE:
            hit |= av[0] <= 10 <= av[1]
        elif op is c.CATEGORY:
            hit |= av in (c.CATEGORY_SPACE, c.CATEGORY_UNI_SPACE, c.CATEGORY_NOT_DIGIT, c.CATEGORY_UNI_NOT_DIGIT,
                          c.CATEGORY_NOT_WORD, c.CATEGORY_UNI_NOT_WORD, c.CATEGORY_LINEBREAK,
                          c.CATEGORY_UNI_LINEBREAK)
    return hit != negate


def test_only_the_known_patterns_can_match_a_line_break():
    from re import _parser  # type: ignore[attr-defined]

    found = set()
    for p in secrets.PATTERNS:
        parsed = _parser.parse(p.regex.pattern, p.regex.flags)
        if _matches_newline(list(parsed), bool(parsed.state.flags & re.S)):
            found.add(p.kind)
    assert found == CROSS_LINES


def _manifest(paths: list[str], head: dict) -> tuple[bytes, tuple[bytes, ...]]:
    """A manifest's bytes written whole, and in the pieces the build checks."""
    rows = sorted(((p, (hashlib.sha256(p.encode()).hexdigest(), 7)) for p in paths), key=lambda r: r[0].encode())
    doc_head = {**head, "files": []}
    whole = pretty_json_rows(doc_head, "files", [_line(p, sha, size) for p, (sha, size) in rows])
    return whole, manifest_pieces(pretty_json_head(doc_head, "files"), _Rows.of(rows).runs())


# Many rows, so that blocks end (a row's SHA-256 ends in "00") and several top-level names.
FILLER = [f"api/files/s{i}/SKILL.md" for i in range(1500)] + [f"skills/s{i}/index.html" for i in range(600)]


def test_the_pieces_are_the_manifest_s_bytes():
    whole, pieces = _manifest(FILLER + ["404.html", "api.html", "api-x/y", "zz/last"], {"kind": "k", "z": [1, 2]})
    assert b"".join(pieces) == whole
    assert len(pieces) > 5 and all(p.endswith(b"\n") or n.startswith(b"\n") for p, n in zip(pieces, pieces[1:]))
    assert _manifest([], {"kind": "k"})[1] == (pretty_json_rows({"kind": "k"}, "files", []),)


@pytest.mark.parametrize("name,kind,line,value", FORMS, ids=[f[0] for f in FORMS])
@pytest.mark.parametrize("where", ["first row", "middle row", "last row", "head"])
def test_each_secret_the_whole_scan_finds_the_pieces_find(name, kind, line, value, where):
    """Planted in a row's path (JSON-escaped, as the manifest holds it) or in the head, first,
    among, or after every other row: found in the pieces wherever the whole manifest shows it."""
    planted = {"first row": f"!/{line}", "middle row": f"api/files/s7/{line}", "last row": f"zz/{line}"}.get(where)
    whole, pieces = _manifest(FILLER + ([planted] if planted else []),
                              {"kind": "k", "note": line if where == "head" else "x"})
    assert secrets.scan_bytes(whole), "the whole manifest shows it"
    with pytest.raises(BuildError, match="likely secret") as caught:
        gate.check_pieces(MANIFEST, pieces, None)
    assert value not in str(caught.value)
    at = whole[:whole.index(json.dumps(line, ensure_ascii=False)[1:-1].encode())].count(b"\n") + 1
    assert f"{MANIFEST}:{at}:" in str(caught.value)  # (the line in the manifest, not in the piece)


def test_a_rebuild_scans_only_the_pieces_it_has_not_seen_clean(tmp_path: Path):
    """A clean verdict is kept by the piece's SHA-256 under the rule set: a piece with those bytes is
    not read again (a planted verdict proves it); a piece with other bytes is, and fails."""
    _, pieces = _manifest(FILLER + [f"api/files/s8/{GHP}.md"], {"kind": "k"})
    dirty = next(p for p in pieces if GHP.encode() in p)
    cache = BuildCache(tmp_path / "cache")
    with pytest.raises(BuildError):
        gate.check_pieces(MANIFEST, pieces, cache)
    assert cache.get("bundle-clean", hashlib.sha256(dirty).hexdigest()) is None
    clean = [p for p in pieces if p is not dirty]
    assert gate.check_pieces(MANIFEST, clean, cache) == {hashlib.sha256(p).hexdigest() for p in clean}
    cache.put("bundle-clean", hashlib.sha256(dirty).hexdigest(), gate.ruleset_digest())
    gate.check_pieces(MANIFEST, pieces, cache)  # (the planted verdict: not read)
    other = BuildCache(tmp_path / "other")
    other.put("bundle-clean", hashlib.sha256(dirty).hexdigest(), "0" * 64)  # (another rule set's)
    with pytest.raises(BuildError):
        gate.check_pieces(MANIFEST, pieces, other)


def _planting(monkeypatch, emitter: str, names: list[str]) -> None:
    """The emitter ``emitter`` also writes (clean) files named ``names`` (a name holding a token that
    no earlier check sees: only the manifest's row shows it)."""
    from skillc.build import pipeline
    from skillc.emit import EMITTERS

    def planting(name, original):
        def emit(ctx) -> None:
            original(ctx)
            for rel in names:
                write(ctx.out, rel, b"nothing to see\n")
        return emit if name == emitter else original

    monkeypatch.setattr(pipeline, "EMITTERS", [(name, planting(name, fn)) for name, fn in EMITTERS])


@pytest.mark.parametrize("emitter,name", [
    ("routing", f"_routing/{GHP}.conf"),  # (a row listed and gated beside the site)
    ("site", f"pages/{GHP}.html"),  # (a site row: gated after the join)
    ("site", f"zz/{GHP}.html"),  # (the last row, without its comma)
])
def test_a_token_in_a_row_of_a_rebuild_fails_it(tmp_path: Path, monkeypatch, emitter: str, name: str):
    """The first build's pieces are all kept clean; the rebuild adds one row holding a token, in a
    block of its own or among rows seen before: the build fails and the bundle is the first one."""
    monkeypatch.setenv("SKILLC_SITE", "minimal")
    make_sample_repo(tmp_path / "repo")
    opts = BuildOptions(paths=("repo",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache", jobs=2,
                        env={"SOURCE_DATE_EPOCH": "1700000000"})
    _planting(monkeypatch, emitter, [name.replace(GHP, "clean")])
    run_build(opts)
    before = (tmp_path / "out" / MANIFEST).read_bytes()
    _planting(monkeypatch, emitter, [name.replace(GHP, "clean"), name])
    with pytest.raises(BuildError, match="likely secret"):
        run_build(opts)
    assert (tmp_path / "out" / MANIFEST).read_bytes() == before


def _index(descriptions: list[str]) -> bytes:
    """A discovery index's bytes (pretty JSON, a row a line), one row per description."""
    rows = [json.dumps({"description": d, "name": f"s{i}"}, ensure_ascii=False, separators=(",", ":"))
            for i, d in enumerate(descriptions)]
    return pretty_json_rows({"$schema": "x"}, "skills", rows)


def test_line_pieces_are_the_file_s_bytes_and_a_changed_line_changes_its_own_piece_only():
    descriptions = [f"Skill number {i}." for i in range(3000)]
    data = _index(descriptions)
    pieces = gate.line_pieces(data)
    assert b"".join(pieces) == data and len(pieces) > 10
    assert all(p.endswith(b"\n") for p in pieces[:-1])
    descriptions[1500] = "Another description."
    again = gate.line_pieces(_index(descriptions))
    assert len(set(again) - set(pieces)) == 1 and len(again) == len(pieces)
    assert gate.line_pieces(b"") == [b""] and gate.line_pieces(b"{}") == [b"{}"]


@pytest.mark.parametrize("name,kind,line,value", FORMS, ids=[f[0] for f in FORMS])
def test_each_secret_the_whole_scan_finds_in_a_discovery_index_its_pieces_find(tmp_path: Path, name, kind, line,
                                                                               value):
    """A pretty-JSON file the build names to the gate as such (``unchecked_files``'s ``pieced``) is
    scanned in ``line_pieces``: a token in any row fails the check, as a scan of the whole file does,
    even when every other piece has a clean verdict already."""
    from skillc.emit.wellknown import INDEX

    descriptions = [f"Skill number {i}." for i in range(3000)]
    clean = _index(descriptions)
    (tmp_path / INDEX).parent.mkdir(parents=True)
    cache = BuildCache(tmp_path / "cache")
    for data in (clean, _index(descriptions[:2000] + [line] + descriptions[2000:])):
        (tmp_path / INDEX).write_bytes(data)
        pair = (INDEX, hashlib.sha256(data).hexdigest())
        if data is clean:
            assert gate.unchecked_files(tmp_path, [pair], cache, [pair]) == []
            continue
        assert secrets.scan_bytes(data), "the whole file shows it"
        with pytest.raises(BuildError, match="likely secret") as caught:
            gate.unchecked_files(tmp_path, [pair], cache, [pair])
        assert value not in str(caught.value) and f"{INDEX}:" in str(caught.value)


def test_a_token_in_a_discovery_index_row_of_a_rebuild_fails_it(tmp_path: Path, monkeypatch):
    """The discovery index is gated in pieces beside the site: the first build's are kept clean, the
    rebuild's index gains a row holding a token (no earlier check sees it): the build fails and the
    bundle is the first one."""
    from skillc.emit import wellknown

    monkeypatch.setenv("SKILLC_SITE", "minimal")
    make_sample_repo(tmp_path / "repo")
    opts = BuildOptions(paths=("repo",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache", jobs=2,
                        env={"SOURCE_DATE_EPOCH": "1700000000"})
    run_build(opts)
    before = (tmp_path / "out" / MANIFEST).read_bytes()
    original = wellknown.index_document
    monkeypatch.setattr(wellknown, "index_document", lambda rows: original([*rows, json.dumps({"description": GHP})]))
    with pytest.raises(BuildError, match="likely secret"):
        run_build(opts)
    assert (tmp_path / "out" / MANIFEST).read_bytes() == before
