"""``skillc build --emit whoosh``: a whoosh index of the same tokens, deterministic bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_skillc
from unit.bundle.test_bundle_api_local import make_repo


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_emit_whoosh(tmp_path):
    pytest.importorskip("whoosh")
    make_repo(tmp_path)
    outs = []
    for name in ("a", "b"):
        proc = run_skillc("build", "repo", "--no-site", "--emit", "whoosh", "--out", name, "--no-cache", cwd=tmp_path,
                          env={"SOURCE_DATE_EPOCH": "0"})
        assert proc.returncode == 0, proc.stderr
        outs.append(tmp_path / name / "api" / "index" / "whoosh")
    assert _files(outs[0]) == _files(outs[1])  # no random segment names, no file times
    from whoosh import index
    from whoosh.qparser import MultifieldParser, OrGroup

    from skillc.index.tokenize import tokenize

    ix = index.open_dir(str(outs[0]))
    with ix.searcher() as searcher:
        parser = MultifieldParser(["name", "description", "tags", "body"], ix.schema, group=OrGroup)
        hits = [h["id"] for h in searcher.search(parser.parse(" ".join(tokenize("Search RUST codebase"))))]
    assert hits[0] == "code-search"
