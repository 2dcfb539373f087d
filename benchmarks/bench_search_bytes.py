"""Bytes the site's header search downloads (issue 21: ≤ 150 KB for a first query at 10,000 skills).

``skillc build --no-site`` (the index and its ``.gz`` copies are all the search fetches), then, as
``site/assets/skillc/search.js`` does: the header, ``terms.bin``, the shards of the query's terms and
the document chunks of the first ten hits, each counted as its ``.gz`` copy (what ``skillc serve``,
nginx and Caddy send) where the build wrote one.  Baseline in the same run: every file of the index
(what a reader that fetched it all would download).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

QUERIES = ("deploy kubernetes release", "extract pdf table")


def _sent(index: Path, name: str) -> int:
    copy = index / (name + ".gz")
    return (copy if copy.is_file() else index / name).stat().st_size


def query_costs(index: Path, queries: tuple[str, ...] = QUERIES, shown: int = 10) -> list[tuple[int, int]]:
    """(bytes sent, bytes uncompressed) of the files each query fetches that the ones before did not."""
    from skillc.index.reader import SearchIndex
    from skillc.index.tokenize import tokenize

    idx = SearchIndex.open(index)
    head = idx.header
    fetched: set[str] = set()
    costs = []
    for query in queries:
        names = {"search.json", head["dictionary"]["file"]}
        names |= {head["shards"][i]["file"] for i in map(idx.shard_of, tokenize(query)) if i >= 0}
        names |= {head["docs"]["files"][h.index // head["docs"]["chunk"]]["file"] for h in idx.search(query, shown)}
        new = names - fetched
        fetched |= new
        costs.append((sum(_sent(index, n) for n in new), sum((index / n).stat().st_size for n in new)))
    return costs


def rows_for(index: Path) -> list[tuple[str, str]]:
    everything = [p.name for p in index.iterdir() if p.is_file() and p.suffix in (".json", ".bin")
                  and p.name != "select.json"]
    whole = sum(_sent(index, n) for n in everything)
    (first, first_raw), (second, second_raw) = query_costs(index)
    return [("baseline: the whole index (sent)", f"{whole / 1024:.0f} KiB"),
            ("first search query downloads (sent, gzip)", f"{first / 1024:.0f} KiB ({first_raw / 1024:.0f} KiB uncompressed, "
                                                          f"{first / max(whole, 1):.1%} of the index)"),
            ("second search query downloads (sent, gzip)", f"{second / 1024:.0f} KiB ({second_raw / 1024:.0f} KiB uncompressed)")]


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    from skillc.build.pipeline import BuildOptions, run_build

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        out = Path(tmp) / "bundle"
        result = run_build(BuildOptions(paths=(str(corpus),), out=str(out), site=False, keep_going=True,
                                        cache_dir=Path(tmp) / "cache", env={"SOURCE_DATE_EPOCH": "1700000000"}))
        rows = [("skills", f"{len(result.resolution.skills):,}")]
        return rows + rows_for(out / "api" / "index")
