"""The bundle's BM25 index: one ranking from the Python reader (stdlib and numpy) and the JS reader,
its agreement with adk-rust's scorer on text, and refusal of corrupted, truncated or newer files."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.index import BundleError
from skillc.index.adk import score_text
from skillc.index.bm25 import IndexDoc, build
from skillc.index.reader import SearchIndex

PROJECT = Path(__file__).resolve().parents[3]
JS_READER = PROJECT / "templates" / "js" / "skillc-index.js"
WORDS = ["deploy", "build", "test", "review", "release", "docker", "python", "rust", "pdf", "table", "extract", "merge", "search", "index", "cache", "query", "schema", "lint", "commit", "branch", "secret", "token", "audit", "chart", "report", "email", "слово", "数据", "处理", "café"]


def corpus(n: int, seed: int = 7) -> list[IndexDoc]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:04d}"
        desc = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
        tags = tuple(sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 3))}))
        body = "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 15))) for _ in range(rng.randint(1, 20)))
        docs.append(IndexDoc(f"c{i % 5}/{name}", name, desc, tags, body))
    docs.sort(key=lambda d: d.id.encode())
    return docs


QUERIES = ["deploy", "python test", "rust docker release", "pdf table extract merge", "Deploy DEPLOY deploy",
           "数据 处理", "café", "слово search", "nothing-matches-zzz", "secret-token audit", "query schema lint commit"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, list[IndexDoc]]:
    docs = corpus(400)
    out = tmp_path_factory.mktemp("index")
    for name, data in build(docs, shard_bytes=4096).files.items():
        (out / name).write_bytes(data)
    return out, docs


def test_index_is_sharded_and_deterministic(built):
    out, docs = built
    header = json.loads((out / "search.json").read_text())
    assert len(header["shards"]) > 3 and header["N"] == 400
    again = build(docs, shard_bytes=4096).files
    assert all((out / name).read_bytes() == data for name, data in again.items())


@pytest.mark.parametrize("numpy", [False, None])
def test_an_empty_index_answers_nothing(tmp_path, numpy):
    """0 documents: N=0, no terms, no shards (what `skillc build` writes for a bundle without skills)."""
    for name, data in build([]).files.items():
        (tmp_path / name).write_bytes(data)
    assert json.loads((tmp_path / "search.json").read_text())["shards"] == []
    ix = SearchIndex.open(tmp_path, numpy=numpy)
    ix.verify()
    assert ix.search("deploy") == [] and ix.adk_select("deploy") == []
    assert ix.adk_scores(["deploy"]) == {} and ix.adk_candidates() == []


def test_stdlib_and_numpy_readers_agree(built):
    pytest.importorskip("numpy")
    out, _ = built
    pure, fast = SearchIndex.open(out, numpy=False), SearchIndex.open(out, numpy=True)
    assert fast._np is not None and pure._np is None
    for q in QUERIES:
        assert [(h.id, h.score) for h in pure.search(q, 10)] == [(h.id, h.score) for h in fast.search(q, 10)]
        toks = q.lower().split()
        assert pure.adk_scores(toks) == fast.adk_scores(toks)


def test_search_ranks_name_and_description_matches_first(built):
    out, _ = built
    ix = SearchIndex.open(out)
    hits = ix.search("café", 5)
    assert hits and all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert ix.search("nothing-matches-zzz") == ix.search("zzz") == []


def test_precomputed_token_sets_give_adk_scores_of_the_text(built):
    out, docs = built
    ix = SearchIndex.open(out, numpy=False)
    for q in QUERIES:
        from skillc.index.tokenize import tokenize

        scores = ix.adk_scores(tokenize(q))
        for i, d in enumerate(docs[:120]):
            assert scores.get(i, 0.0) == score_text(q, d.name, d.description, d.tags, d.body), (q, d.id)


def test_js_reader_returns_the_same_top_10(built, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    out, _ = built
    driver = tmp_path / "driver.js"
    driver.write_text(
        "const fs = require('fs'); const path = require('path');\n"
        f"const SkillcIndex = require({json.dumps(str(JS_READER))});\n"
        "(async () => {\n"
        "  const dir = process.argv[2]; const queries = JSON.parse(process.argv[3]);\n"
        "  const index = await SkillcIndex.load(async (name) => fs.readFileSync(path.join(dir, name)));\n"
        "  const out = [];\n"
        "  for (const q of queries) out.push((await index.search(q, 10)).map(h => [h.id, h.score]));\n"
        "  process.stdout.write(JSON.stringify(out));\n"
        "})().catch(e => { console.error(String(e)); process.exit(1); });\n")
    proc = subprocess.run([node, str(driver), str(out), json.dumps(QUERIES)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    js = json.loads(proc.stdout)
    ix = SearchIndex.open(out, numpy=False)
    py = [[[h.id, h.score] for h in ix.search(q, 10)] for q in QUERIES]
    assert js == py  # same documents, same order, same float64 scores
    assert any(len(r) == 10 for r in js)


def _fetched_by_js(out: Path, tmp_path: Path, query: str) -> tuple[list, list[str]]:
    """Every hit of ``query`` without documents, then the documents of the first ten, as the site's
    header search does, with the files the JS reader loaded."""
    driver = tmp_path / "fetched.js"
    driver.write_text(
        "const fs = require('fs'); const path = require('path');\n"
        f"const SkillcIndex = require({json.dumps(str(JS_READER))});\n"
        "(async () => {\n"
        "  const dir = process.argv[2]; const loaded = [];\n"
        "  const index = await SkillcIndex.load(async (name) => { loaded.push(name); return fs.readFileSync(path.join(dir, name)); });\n"
        "  const hits = await index.search(process.argv[3], index.N, {documents: false});\n"
        "  const shown = await Promise.all(hits.slice(0, 10).map(async h => [(await index.doc(h.index)).id, h.score]));\n"
        "  process.stdout.write(JSON.stringify([hits.length, shown, loaded]));\n"
        "})().catch(e => { console.error(String(e)); process.exit(1); });\n")
    proc = subprocess.run([shutil.which("node"), str(driver), str(out), query], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    count, shown, loaded = json.loads(proc.stdout)
    return [count, shown], loaded


def test_a_query_fetches_only_its_terms_shards_and_the_shown_hits_documents(built, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    out, _ = built
    header = json.loads((out / "search.json").read_text())
    ix = SearchIndex.open(out, numpy=False)
    query = "deploy python"
    (count, shown), loaded = _fetched_by_js(out, tmp_path, query)
    every = ix.search(query, ix.N)
    assert count == len(every) > 10 and shown == [[h.id, h.score] for h in every[:10]]
    shards = {header["shards"][ix.shard_of(t)]["file"] for t in ("deploy", "python")}
    chunk = header["docs"]["chunk"]
    chunks = {header["docs"]["files"][h.index // chunk]["file"] for h in every[:10]}
    assert sorted(loaded) == sorted({"search.json", "terms.bin"} | shards | chunks)
    assert len(header["shards"]) > len(shards) and len(header["docs"]["files"]) > len(chunks)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_ascii_text_tokenizes_into_lowercased_letter_and_digit_runs(text):
    # The fast ASCII path (str.translate + split) must agree with the rule as adk-rust states it,
    # including for the ASCII control characters str.split() treats as spaces (\x1c-\x1f).
    from skillc.index.tokenize import tokenize

    assert tokenize(text) == [t.lower() for t in re.findall(r"[A-Za-z0-9]+", text)]


def test_js_tokenizer_matches_python(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    from skillc.index.tokenize import tokenize

    texts = ["code_search-v2.0", "déjà vu", "打开 Safari 浏览器", "हिन्दी", "ÀB Ωmega x² ½", "hi 👋 there", "İstanbul ǅ",
             "ASCII_only: Foo-Bar.baz/v2\x1cQ\x1fz\tX\x0bY"]
    script = (f"const S=require({json.dumps(str(JS_READER))});"
              "console.log(JSON.stringify(JSON.parse(process.argv[1]).map(S.tokenize)))")
    proc = subprocess.run([node, "-e", script, json.dumps(texts)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [tokenize(t) for t in texts]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_truncated_or_corrupted_files_are_refused(built, tmp_path):
    out, _ = built
    header = json.loads((out / "search.json").read_text())
    d = _copy(out, tmp_path / "trunc")
    data = (d / "terms.bin").read_bytes()
    (d / "terms.bin").write_bytes(data[:-10])
    with pytest.raises(BundleError, match="truncated"):
        SearchIndex.open(d)
    d = _copy(out, tmp_path / "flip")
    shard = d / header["shards"][1]["file"]
    raw = bytearray(shard.read_bytes())
    raw[5] ^= 0xFF
    shard.write_bytes(bytes(raw))
    ix = SearchIndex.open(d)  # the shard is checked when a query first needs it
    with pytest.raises(BundleError, match="SHA-256 mismatch"):
        ix.verify()
    d = _copy(out, tmp_path / "header")
    (d / "search.json").write_text((out / "search.json").read_text()[:100])
    with pytest.raises(BundleError, match="invalid JSON"):
        SearchIndex.open(d)


def test_newer_index_version_is_refused(built, tmp_path):
    out, _ = built
    d = _copy(out, tmp_path / "newer")
    header = json.loads((d / "search.json").read_text())
    header["version"] = 99
    (d / "search.json").write_text(json.dumps(header))
    with pytest.raises(BundleError, match="newer than this skillc reads"):
        SearchIndex.open(d)


def test_header_matches_its_json_schema(built):
    jsonschema = pytest.importorskip("jsonschema")
    out, _ = built
    schema = json.loads((PROJECT / "schemas" / "search-index.schema.json").read_text())
    jsonschema.validate(json.loads((out / "search.json").read_text()), schema)


def test_scores_are_textbook_bm25_over_field_weighted_tf():
    import math
    from collections import Counter

    from skillc.index.tokenize import tokenize

    docs = [IndexDoc("a", "deploy-app", "Deploy the app", ("ops",), "run deploy twice: deploy"),
            IndexDoc("b", "notes", "Release notes", ("deploy",), "write notes"),
            IndexDoc("c", "other", "Nothing here", (), "unrelated text")]
    weights = {"name": 4, "description": 2, "tags": 2, "body": 1}

    def tf_and_len(d):
        c, n = Counter(), 0
        for field, text in (("name", d.name), ("description", d.description), ("tags", " ".join(d.tags)),
                            ("body", d.body)):
            toks = tokenize(text)
            n += weights[field] * len(toks)
            for t in toks:
                c[t] += weights[field]
        return c, n

    stats = [tf_and_len(d) for d in docs]
    avgdl = sum(n for _, n in stats) / len(docs)
    df = sum(1 for c, _ in stats if c["deploy"])
    idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    expected = {d.id: idf * (c["deploy"] * 2.2) / (c["deploy"] + 1.2 * (1 - 0.75 + 0.75 * n / avgdl))
                for d, (c, n) in zip(docs, stats) if c["deploy"]}
    with __import__("tempfile").TemporaryDirectory() as tmp:
        for name, data in build(docs).files.items():
            (Path(tmp) / name).write_bytes(data)
        hits = SearchIndex.open(tmp, numpy=False).search("deploy", 10)
    assert [h.id for h in hits] == ["a", "b"]
    assert {h.id: h.score for h in hits} == pytest.approx(expected, rel=1e-12)


def test_analysis_weights_fields_caps_tf_and_keeps_first_seen_order():
    from skillc.index.bm25 import FIELD_BITS, FIELD_WEIGHTS, MAX_TF, analyze

    doc = IndexDoc("a/b", "pdf tools", "Merge PDF files", ("pdf", "docs"), "merge " * 70_000 + "table pdf")
    terms, tfs, bits, length, unique = analyze(doc)
    fields = {"name": ["pdf", "tools"], "description": ["merge", "pdf", "files"], "tags": ["pdf", "docs"],
              "body": ["merge"] * 70_000 + ["table", "pdf"]}
    expected_tf: dict[str, int] = {}
    expected_bits: dict[str, int] = {}
    for f in ("body", "name", "description", "tags"):  # body first: its terms lead, in first-seen order
        for t in fields[f]:
            expected_tf[t] = expected_tf.get(t, 0) + FIELD_WEIGHTS[f]
            expected_bits[t] = expected_bits.get(t, 0) | FIELD_BITS[f]
    assert terms == ("merge", "table", "pdf", "tools", "files", "docs")
    assert dict(zip(terms, tfs)) == {t: min(v, MAX_TF) for t, v in expected_tf.items()}
    assert tfs[0] == MAX_TF  # 70,002 weighted occurrences, capped
    assert dict(zip(terms, bits)) == expected_bits
    assert length == sum(len(v) * FIELD_WEIGHTS[f] for f, v in fields.items())
    assert unique == 3


def test_updated_postings_give_the_index_a_fresh_build_gives():
    from skillc.index.bm25 import analyze, update_postings

    docs = corpus(300, seed=11)
    docs[5] = IndexDoc(docs[5].id, docs[5].name, docs[5].description, docs[5].tags, docs[5].body + " onlyhere")
    analyzed = [analyze(d) for d in docs]
    first = build(docs, analyzed=analyzed)
    before = {t: tuple(map(bytes, arrays)) for t, arrays in first.postings.items()}
    rng = random.Random(3)
    changed = docs[:]
    changes = []
    for i in [5, *rng.sample(range(300), 20)]:  # 5 loses its only term; others gain new ones or lose words
        d = changed[i]
        words = [w for w in d.body.split() if w != "onlyhere"]
        body = " ".join(rng.sample(words, k=max(1, len(words) // 2))) + f" fresh{i % 3} café"
        changed[i] = IndexDoc(d.id, d.name, d.description, d.tags, body)
        new = analyze(changed[i])
        changes.append((i, analyzed[i], new))
        analyzed[i] = new
    updated = update_postings(first.postings, changes)
    assert "onlyhere" in first.postings and "onlyhere" not in updated and "fresh0" in updated
    assert build(changed, analyzed=analyzed, postings=updated).files == build(changed).files
    assert {t: tuple(map(bytes, arrays)) for t, arrays in first.postings.items()} == before  # not modified
    with pytest.raises(ValueError):  # an old analysis the postings do not hold is refused, not half-applied
        update_postings(first.postings, [(0, analyze(IndexDoc("x", "x", "x", (), "neverseen")), analyzed[0])])


def test_the_shards_no_change_touched_are_reused_byte_for_byte():
    """A rebuild takes the previous bytes of each postings shard none of whose terms a changed
    document touched (same first and last term, as many terms); the index is the fresh build's,
    also where a term appeared or vanished between two kept shards' terms."""
    from skillc.index.bm25 import analyze, changed_terms, previous_shards, update_postings

    docs = corpus(300, seed=11)
    analyzed = [analyze(d) for d in docs]
    first = build(docs, analyzed=analyzed, shard_bytes=2048)
    changes = []
    changed = docs[:]
    for i, extra in ((7, " zzzbrandnew"), (120, " aaanewterm"), (250, "")):
        d = changed[i]
        changed[i] = IndexDoc(d.id, d.name, d.description, d.tags, " ".join(d.body.split()[1:]) + extra)
        changes.append((i, analyzed[i], analyze(changed[i])))
        analyzed[i] = changes[-1][2]
    touched = {t for _, old, new in changes for t in changed_terms(old, new)}
    assert touched < {t for _, old, new in changes for t in (*old[0], *new[0])}  # (most terms kept theirs)
    reuse = previous_shards(first.files, sorted(first.postings), touched)
    shards = json.loads(first.files["search.json"])["shards"]
    assert 0 < len(reuse) < len(shards)
    updated = update_postings(first.postings, changes)
    fresh = build(changed, shard_bytes=2048).files
    assert build(changed, analyzed=analyzed, postings=updated, shard_bytes=2048, reuse=reuse).files == fresh
    # (what is offered is what is written: a wrong offer would show)
    poisoned = build(changed, analyzed=analyzed, postings=updated, shard_bytes=2048,
                     reuse={k: b"poisoned" for k in reuse}).files
    terms = sorted(updated)
    offered = [s for s in json.loads(fresh["search.json"])["shards"]
               if (s["first"], terms[s["first_term"] + s["terms"] - 1], s["terms"]) in reuse]
    assert offered and all(poisoned[s["file"]] == b"poisoned" for s in offered)
    assert sum(data == b"poisoned" for data in poisoned.values()) == len(offered)
    assert previous_shards({"search.json": b"not json"}, sorted(first.postings), touched) == {}


def test_a_rebuild_inverts_everything_when_the_previous_postings_cannot_be_updated(tmp_path):
    from skillc.cache import BuildCache
    from skillc.index.bm25 import analyze
    from skillc.index.emit import _analysis_record, _updated_postings

    docs = corpus(40, seed=5)
    analyzed = [analyze(d) for d in docs]
    keys = [f"k{i}" for i in range(40)]
    cache = BuildCache(None)
    for k, a in zip(keys, analyzed):
        cache.put("index", k, _analysis_record(a))
    previous = (tuple(keys), build(docs, analyzed=analyzed).postings, "the files' key")
    changed = docs[:]
    changed[3] = IndexDoc(docs[3].id, docs[3].name, docs[3].description, docs[3].tags, "new words here")
    new_analyzed = analyzed[:3] + [analyze(changed[3])] + analyzed[4:]
    records = [_analysis_record(a) for a in new_analyzed]
    new_keys = keys[:3] + ["k3-new"] + keys[4:]
    updated, touched = _updated_postings(cache, previous, new_keys, records)
    assert touched == {t for t in set(analyzed[3][0]) ^ set(new_analyzed[3][0])} | {
        t for t in set(analyzed[3][0]) & set(new_analyzed[3][0])
        if analyzed[3][1][analyzed[3][0].index(t)] != new_analyzed[3][1][new_analyzed[3][0].index(t)]
        or analyzed[3][2][analyzed[3][0].index(t)] != new_analyzed[3][2][new_analyzed[3][0].index(t)]}
    assert build(changed, analyzed=new_analyzed, postings=updated).files == build(changed).files
    # (with the postings updated, a build reads only each analysis's lengths: the terms stay pickled)
    lengths = [((), (), (), length, unique) for length, unique, _ in records]
    assert build(changed, analyzed=lengths, postings=updated).files == build(changed).files
    assert _updated_postings(cache, None, new_keys, records) is None  # no previous build
    assert _updated_postings(cache, previous, new_keys[:-1], records[:-1]) is None  # other skills
    many = [f"{k}-new" for k in keys[:11]] + keys[11:]  # more than a quarter changed
    assert _updated_postings(cache, previous, many, records) is None
    forgetful = BuildCache(None)  # the old analysis of the changed skill is not in the cache
    assert _updated_postings(forgetful, previous, new_keys, records) is None
    misshapen = BuildCache(None)  # a record of another shape (an older layout) is never read as one
    misshapen.put("index", "k3", analyzed[3])
    assert _updated_postings(misshapen, previous, new_keys, records) is None




def test_the_kept_postings_come_back_from_the_cache_as_they_were_built(tmp_path):
    # (kept as three byte strings, not 30,000 pickled arrays: the same terms, documents, tf and
    # field bits, read back through a saved cache, and updated as they would be in memory)
    import pickle

    from skillc.cache import BuildCache
    from skillc.index.bm25 import analyze, update_postings
    from skillc.index.emit import WHOLE_TABLE, postings_in, postings_out

    docs = corpus(60, seed=9)
    analyzed = [analyze(d) for d in docs]
    postings = build(docs, analyzed=analyzed).postings
    keys = [f"k{i}" for i in range(60)]
    cache = BuildCache(tmp_path / "records")
    cache.put(WHOLE_TABLE, "p" * 64, postings_out(keys, postings))
    cache.save()
    back = postings_in(BuildCache(tmp_path / "records").get(WHOLE_TABLE, "p" * 64))
    assert back is not None and back[0] == tuple(keys)
    assert list(back[1]) == list(postings)
    assert {t: tuple((a.typecode, a.tobytes()) for a in row) for t, row in back[1].items()} == \
        {t: tuple((a.typecode, a.tobytes()) for a in row) for t, row in postings.items()}
    change = [(7, analyzed[7], analyze(IndexDoc("x", "x", "x", (), "brand new words")))]
    assert update_postings(back[1], change) == update_postings(postings, change)
    # a record of another shape, byte order or length is never read as postings (they are inverted again)
    rec = postings_out(keys, postings)
    assert postings_in(None) is None and postings_in((tuple(keys), postings)) is None
    assert postings_in((rec[0], "middle", *rec[2:])) is None
    assert postings_in((*rec[:5], rec[5][:-1], *rec[6:])) is None
    assert postings_in(pickle.loads(pickle.dumps(rec))) is not None
