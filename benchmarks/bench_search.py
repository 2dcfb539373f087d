"""Search: the bundle's portable BM25 index vs tantivy and whoosh, on the same documents and queries.

Measured in one run: index build time and size, open time (median of 5 fresh opens), and p50/p95
latency of 1,000 seeded queries of 1-4 words (top 10, one at a time, after 50 warm-up queries),
printed with ratios.  Targets (issue 4): open <= 20 ms, p95 <= 2x tantivy's.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from pathlib import Path

from skillc.discover.walk import path_key
from skillc.index.bm25 import FIELD_WEIGHTS, IndexDoc, build, tokenize_doc
from skillc.index.emit import skill_tags
from skillc.index.reader import SearchIndex
from skillc.index.tokenize import tokenize
from skillc.model import ItemKind
from skillc.parse.document import parse_document

QUERIES = 1000
WARMUP = 50


class _Doc:  # what skill_tags reads
    def __init__(self, document):
        self.document = document


def load_docs(corpus: Path) -> list[IndexDoc]:
    docs = []
    for path in corpus.rglob("SKILL.md"):
        rel = path.parent.relative_to(corpus).as_posix()
        doc = parse_document(path.read_bytes(), rel + "/SKILL.md", ItemKind.SKILL, rel)
        meta = doc.meta
        name = str(meta.get("name") or rel.rsplit("/", 1)[-1])
        docs.append(IndexDoc(rel, name, str(meta.get("description") or ""), skill_tags(_Doc(doc)), doc.body))
    docs.sort(key=lambda d: path_key(d.id))
    return docs


def make_queries(docs: list[IndexDoc], n: int, seed: int = 42) -> list[str]:
    rng = random.Random(seed)
    vocab = sorted({t for d in docs[:500] for t in tokenize(d.description + " " + d.body) if t.isalpha()})
    return [" ".join(rng.sample(vocab, rng.randint(1, 4))) for _ in range(n)]


def _latency(fn, queries: list[str]) -> tuple[float, float]:
    for q in queries[:WARMUP]:
        fn(q)
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2] * 1000, times[int(len(times) * 0.95)] * 1000


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _median_open(fn) -> float:
    times = []
    for _ in range(5):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def bench_bundle(docs, queries, work: Path) -> dict:
    t = time.perf_counter()
    built = build(docs)
    out = work / "bundle-index"
    out.mkdir()
    for name, data in built.files.items():
        (out / name).write_bytes(data)
    build_s = time.perf_counter() - t

    def open_and_warm():
        return SearchIndex.open(out)

    open_ms = _median_open(open_and_warm)
    ix = SearchIndex.open(out)
    ix.verify()  # every shard fetched and hash-checked, as a long-running agent would have them
    p50, p95 = _latency(lambda q: ix.search(q, 10), queries)
    res = {"build_s": build_s, "size": _size(out), "open_ms": open_ms, "p50": p50, "p95": p95,
           "numpy": ix._np is not None}
    pure = SearchIndex.open(out, numpy=False)
    pure.verify()
    res["pure_p50"], res["pure_p95"] = _latency(lambda q: pure.search(q, 10), queries[:300])
    res["top"] = {q: [h.id for h in ix.search(q, 10)] for q in queries[:200]}
    return res


def bench_tantivy(docs, queries, work: Path) -> dict | None:
    try:
        import tantivy
    except ImportError:
        return None
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    for f in FIELD_WEIGHTS:
        sb.add_text_field(f, stored=False)
    schema = sb.build()
    path = work / "tantivy"
    path.mkdir()
    t = time.perf_counter()
    index = tantivy.Index(schema, path=str(path))
    writer = index.writer()
    for d in docs:
        writer.add_document(tantivy.Document(id=d.id, name=d.name, description=d.description,
                                             tags=" ".join(d.tags), body=d.body))
    writer.commit()
    writer.wait_merging_threads()
    build_s = time.perf_counter() - t
    open_ms = _median_open(lambda: tantivy.Index.open(str(path)).searcher())
    index = tantivy.Index.open(str(path))
    searcher = index.searcher()
    fields = list(FIELD_WEIGHTS)
    boosts = {f: float(w) for f, w in FIELD_WEIGHTS.items()}

    def query(q):
        return searcher.search(index.parse_query(q, fields, field_boosts=boosts), 10).hits

    p50, p95 = _latency(query, queries)
    top = {}
    for q in queries[:200]:
        top[q] = [searcher.doc(addr)["id"][0] for _, addr in query(q)]
    return {"build_s": build_s, "size": _size(path), "open_ms": open_ms, "p50": p50, "p95": p95, "top": top}


def bench_whoosh(docs, queries, work: Path, tokens) -> dict | None:
    try:
        from whoosh import index as windex
        from whoosh.qparser import MultifieldParser, OrGroup
    except ImportError:
        return None
    from skillc.index.whoosh_emit import write_whoosh

    path = work / "whoosh"
    t = time.perf_counter()
    write_whoosh(path, docs, tokens)
    build_s = time.perf_counter() - t
    open_ms = _median_open(lambda: windex.open_dir(str(path)).searcher().close())
    ix = windex.open_dir(str(path))
    searcher = ix.searcher()
    parser = MultifieldParser(list(FIELD_WEIGHTS), ix.schema, group=OrGroup)

    def query(q):
        return [hit["id"] for hit in searcher.search(parser.parse(" ".join(tokenize(q))), limit=10)]

    p50, p95 = _latency(query, queries)
    return {"build_s": build_s, "size": _size(path), "open_ms": open_ms, "p50": p50, "p95": p95}


def _overlap(a: dict, b: dict) -> float:
    return statistics.mean(len(set(a[q]) & set(b[q])) / max(len(a[q]), 1) for q in a if a[q])


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    t = time.perf_counter()
    docs = load_docs(corpus)
    read_s = time.perf_counter() - t
    queries = make_queries(docs, QUERIES)
    rows = [("documents", f"{len(docs):,} (read + parse {read_s:.1f} s)"),
            ("queries", f"{len(queries):,} of 1-4 words, top 10, after {WARMUP} warm-up")]
    own = bench_bundle(docs, queries, workdir)
    tan = bench_tantivy(docs, queries, workdir)
    who = None
    if not os.environ.get("SKILLC_BENCH_NO_WHOOSH"):  # the same tokens (tokenized again: not part of the bundle's time)
        who = bench_whoosh(docs, queries, workdir, [tokenize_doc(d) for d in docs])
    rows += [
        ("bundle index: build (tokenize + invert + write)", f"{own['build_s']:.2f} s"),
        ("bundle index: size", f"{own['size'] / 1e6:.1f} MB"),
        ("bundle index: open (header + dictionary, hashed)", f"{own['open_ms']:.2f} ms  (target <= 20 ms)"),
        ("bundle index: query p50 / p95" + (" (numpy)" if own["numpy"] else " (stdlib)"),
         f"{own['p50']:.3f} / {own['p95']:.3f} ms"),
        ("bundle index: query p50 / p95 (stdlib only, 300 queries)", f"{own['pure_p50']:.3f} / {own['pure_p95']:.3f} ms"),
    ]
    if tan:
        rows += [
            ("tantivy: build / size / open", f"{tan['build_s']:.2f} s / {tan['size'] / 1e6:.1f} MB / {tan['open_ms']:.2f} ms"),
            ("tantivy: query p50 / p95", f"{tan['p50']:.3f} / {tan['p95']:.3f} ms"),
            ("ratio p95 bundle / tantivy", f"{own['p95'] / tan['p95']:.2f}x  (target <= 2x)"),
            ("ratio p50 bundle / tantivy", f"{own['p50'] / tan['p50']:.2f}x"),
            ("ratio build bundle / tantivy", f"{own['build_s'] / tan['build_s']:.2f}x"),
            ("top-10 overlap bundle vs tantivy (200 queries)", f"{_overlap(own['top'], tan['top']):.3f}"),
        ]
    else:
        rows.append(("tantivy", "not installed (pip install tantivy)"))
    if who:
        rows += [
            ("whoosh: build / size / open", f"{who['build_s']:.1f} s / {who['size'] / 1e6:.1f} MB / {who['open_ms']:.2f} ms"),
            ("whoosh: query p50 / p95", f"{who['p50']:.3f} / {who['p95']:.3f} ms"),
            ("ratio whoosh / bundle: build, p50, p95", (f"{who['build_s'] / own['build_s']:.1f}x, "
                                                        f"{who['p50'] / own['p50']:.1f}x, {who['p95'] / own['p95']:.1f}x")),
        ]
    else:
        rows.append(("whoosh", "skipped or not installed (pip install 'skillc[whoosh]')"))
    return rows
