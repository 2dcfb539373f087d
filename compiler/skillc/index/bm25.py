"""Build the bundle's BM25 index: a JSON header plus little-endian typed arrays (pure, no I/O).

Layout (``schemas/search-index.schema.json``; readers: ``reader.py`` and ``skillc-index.js``):

* ``search.json`` — the header (small, so opening is fast): parameters, and each file below with
  its SHA-256 and size; for each shard its first term, so a reader knows which shard holds a term.
* ``terms.bin`` — ``doc_lengths`` (uint32 × N, weighted): all BM25 needs besides a term's shard.
* ``unique.bin`` — uint32 × N, unique body tokens (adk-rust's normaliser), read only by selection.
* ``tags.json`` — ``{"tags": [[tag, …] per document]}``, read only when a tag filter is used.
* ``docs-NNN.json`` — ``DOC_CHUNK`` documents' ``ids``, ``names`` and ``descriptions`` (cut),
  fetched only for the hits a reader shows: what a first query downloads does not grow with N.
* ``postings-NNN.bin`` — a contiguous range of the terms (sorted by bytes) with their dictionary
  and postings (format 2 sharded the dictionary, which held every term and every ID and name):
  ``idf`` (float64 × T), ``term_offsets`` and ``posting_offsets`` (uint32 × T+1, local), ``docs``
  (uint16 when N ≤ 65,536, else uint32; per term its first document, then the gaps to the next), ``tf`` (uint16, the *field-weighted* term frequency, capped
  at 65,535), ``fields`` (uint8 bit set: 1 name, 2 description, 4 tags, 8 body), each ``count``
  long, then the terms' UTF-8 bytes.

Scoring (both readers, in this order of float64 operations, so they agree to the bit):
``norm[d] = k1 * (1 - b + b * dl[d] / avgdl)``; per query term (unique, in query order)
``score[d] += idf[t] * ((tf * (k1 + 1)) / (tf + norm[d]))``; ties by document order (ID bytes).
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` is precomputed so no reader depends on its ``log``.
The ``fields`` bits are the token sets adk-rust's scorer needs, so selection reads no body.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field

from .tokenize import TOKENIZER_SPEC, tokenize

FORMAT = "skillc-search-index"
VERSION = 2
FIELD_WEIGHTS = {"name": 4, "description": 2, "tags": 2, "body": 1}
FIELD_BITS = {"name": 1, "description": 2, "tags": 4, "body": 8}
K1 = 1.2
B = 0.75
SHARD_BYTES = 32 * 1024
DOC_CHUNK = 50  # small: a page of 10 hits fetches up to 10 chunks
DESCRIPTION_CHARS = 200  # the snippet a hit shows (as a card cuts it: site.pages.SUMMARY_CHARS)
MAX_TF = 65_535
HEADER = "search.json"
DICTIONARY = "terms.bin"
TAGS = "tags.json"
BODY_UNIQUE = "unique.bin"


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """One skill as the index sees it."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...] = ()
    body: str = ""


@dataclass(frozen=True)
class BuiltIndex:
    header: dict
    files: dict[str, bytes]  # file name (relative to api/index/) → bytes, header included
    body_unique: tuple[int, ...]  # |unique body tokens| per document (adk-rust's normaliser)
    tokens: tuple[DocTokens, ...] = field(repr=False, default=())
    postings: Postings = field(repr=False, default_factory=dict)


@dataclass(frozen=True, slots=True)
class DocTokens:
    """The token lists of one document (for emitters that index the same tokens elsewhere)."""

    name: list[str]
    description: list[str]
    tags: list[str]
    body: list[str]


def _le(arr: array) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover - every supported platform is little-endian
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return arr.tobytes()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dump_json(value: object) -> bytes:
    return (json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def tokenize_doc(doc: IndexDoc) -> DocTokens:
    return DocTokens(tokenize(doc.name), tokenize(doc.description),
                     [t for tag in doc.tags for t in tokenize(tag)], tokenize(doc.body))


# What one document contributes (``analyze``): its terms with their field-weighted frequency and
# field bits (parallel tuples, in first-seen order), its weighted length and its unique body tokens.
# Plain tuples, so a build can cache them per document and skip tokenizing unchanged skills.
DocTerms = tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...], int, int]


def analyze(doc: IndexDoc, toks: DocTokens | None = None) -> DocTerms:
    toks = toks or tokenize_doc(doc)
    weighted: Counter[str] = Counter(toks.body)
    body_unique = len(weighted)
    bits = dict.fromkeys(weighted, 8)
    for tokens, field_name, bit in ((toks.name, "name", 1), (toks.description, "description", 2), (toks.tags, "tags", 4)):
        weight = FIELD_WEIGHTS[field_name]
        for t in tokens:  # a new term goes last in both dicts, so their orders stay the same
            weighted[t] += weight
            bits[t] = bits.get(t, 0) | bit
    length = min(len(toks.body) * FIELD_WEIGHTS["body"] + len(toks.name) * FIELD_WEIGHTS["name"]
                 + len(toks.description) * FIELD_WEIGHTS["description"] + len(toks.tags) * FIELD_WEIGHTS["tags"],
                 0xFFFFFFFF)
    tfs = tuple(weighted.values())
    if tfs and max(tfs) > MAX_TF:
        tfs = tuple(min(tf, MAX_TF) for tf in tfs)
    return tuple(weighted), tfs, tuple(bits.values()), length, body_unique


# The inverted index: term → (document numbers ascending, their weighted tf, their field bits), as
# arrays in the types the postings files hold.  A build keeps it (with the documents' analysis keys)
# so that the next one, where a few documents changed, updates it instead of inverting every one.
Postings = dict[str, tuple[array, array, array]]


def doc_typecode(n_docs: int) -> str:
    return "H" if n_docs <= 65_536 else "I"


def invert(analyzed: Sequence[DocTerms]) -> Postings:
    """The postings of every term of ``analyzed`` (documents numbered in that order)."""
    post_docs: dict[str, list[int]] = {}
    post_tf: dict[str, list[int]] = {}
    post_fields: dict[str, list[int]] = {}
    for i, (terms, tfs, bits, _, _) in enumerate(analyzed):
        for t, tf, bit in zip(terms, tfs, bits):
            lst = post_docs.get(t)
            if lst is None:
                post_docs[t] = [i]
                post_tf[t] = [tf]
                post_fields[t] = [bit]
            else:
                lst.append(i)
                post_tf[t].append(tf)
                post_fields[t].append(bit)
    code = doc_typecode(len(analyzed))
    return {t: (array(code, d), array("H", post_tf[t]), array("B", post_fields[t])) for t, d in post_docs.items()}


def update_postings(postings: Postings, changes: Sequence[tuple[int, DocTerms, DocTerms]]) -> Postings:
    """``postings`` with documents replaced: ``(number, old analysis, new analysis)`` each (the
    same documents in the same order otherwise).  Returns a new mapping; ``postings`` is untouched
    (the arrays of the terms the changes touch are copied, the others shared)."""
    out = dict(postings)
    copied: set[str] = set()
    code = next(iter(postings.values()))[0].typecode if postings else "H"

    def own(term: str) -> tuple[array, array, array]:
        entry = out.get(term)
        if term not in copied:
            copied.add(term)
            entry = out[term] = ((array(code, entry[0]), array("H", entry[1]), array("B", entry[2])) if entry
                                 else (array(code), array("H"), array("B")))
        return entry  # type: ignore[return-value]

    for i, old, new in changes:
        differ = changed_terms(old, new)  # (a term the document holds as it did keeps its postings)
        for term in old[0]:
            if term not in differ:
                continue
            docs, tfs, bits = own(term)
            k = bisect_left(docs, i)
            if k == len(docs) or docs[k] != i:
                raise ValueError(f"document {i} is not in the postings of {term!r}")
            del docs[k], tfs[k], bits[k]
        for term, tf, bit in zip(new[0], new[1], new[2]):
            if term not in differ:
                continue
            docs, tfs, bits = own(term)
            k = bisect_left(docs, i)
            docs.insert(k, i)
            tfs.insert(k, tf)
            bits.insert(k, bit)
    for term in copied:
        if not out[term][0]:
            del out[term]
    return out


def changed_terms(old: DocTerms, new: DocTerms) -> set[str]:
    """The terms whose postings entry for a document differs between two analyses of it (held by
    one only, or with another weighted frequency or field bits)."""
    before = dict(zip(old[0], zip(old[1], old[2])))
    after = dict(zip(new[0], zip(new[1], new[2])))
    return {t for t in before.keys() | after.keys() if before.get(t) != after.get(t)}


def _file_entry(name: str, data: bytes) -> dict:
    return {"file": name, "size": len(data), "sha256": _sha256(data)}


def _doc_chunks(docs: Sequence[IndexDoc], files: dict[str, bytes]) -> list[dict]:
    """The documents' IDs and names, ``DOC_CHUNK`` a file: a reader fetches only the chunks of the
    hits it shows, so what a first query downloads does not grow with the corpus."""
    entries = []
    for start in range(0, len(docs), DOC_CHUNK):
        part = docs[start: start + DOC_CHUNK]
        data = dump_json({"ids": [d.id for d in part], "names": [d.name for d in part],
                          "descriptions": [d.description[:DESCRIPTION_CHARS] for d in part]})
        name = f"docs-{start // DOC_CHUNK:03d}.json"
        files[name] = data
        entries.append(_file_entry(name, data))
    return entries


def _shard_bytes(idf: array, term_off: array, post_off: array, docs: array, tfs: array, bits: array,
                 blob: bytes) -> bytes:
    """One shard: its terms' dictionary then their postings, each section aligned for typed arrays
    (float64 first, then uint32, the documents' type, uint16, bytes)."""
    return (_le(idf) + _le(term_off) + _le(post_off) + _le(docs) + _le(tfs) + bits.tobytes() + blob)


def _term_shards(terms: list[str], postings: Postings, n_docs: int, shard_bytes: int,
                 files: dict[str, bytes], reuse: Mapping[tuple[str, str, int], bytes] | None = None) -> list[dict]:
    """Cut the sorted terms into contiguous ranges of about ``shard_bytes``; each shard holds its
    terms (idf, UTF-8 bytes) and their postings, so a query term costs one fetch of one shard, found
    by the ``first`` term the header lists for each.  ``reuse``: the bytes of shards known already,
    by their (first term, last term, number of terms), whose terms' postings are the ones here."""
    code = doc_typecode(n_docs)
    shards: list[dict] = []
    first_posting = 0
    for first_term, end, count in _shard_ranges(terms, postings, (2 if code == "H" else 4) + 3, shard_bytes):
        known = reuse.get((terms[first_term], terms[end - 1], end - first_term)) if reuse else None
        data = known if known is not None else _shard(terms[first_term:end], postings, n_docs, code)
        name = f"postings-{len(shards):03d}.bin"
        files[name] = data
        shards.append({**_file_entry(name, data), "first": terms[first_term], "first_term": first_term,
                       "terms": end - first_term, "first_posting": first_posting, "count": count})
        first_posting += count
    return shards


def _shard_ranges(terms: list[str], postings: Postings, per_posting: int,
                  shard_bytes: int) -> Iterator[tuple[int, int, int]]:
    """Each shard's terms ``[first, end)`` and how many postings they hold."""
    first = end = used = count = 0
    while end < len(terms):
        n = len(postings[terms[end]][0])
        cost = n * per_posting + len(terms[end].encode("utf-8")) + 16
        # (a term that would overflow the shard starts the next one: a common term's long
        # postings then share a shard with few others, and a query that names it fetches less)
        if end > first and used + cost > shard_bytes:
            yield first, end, count
            first, used, count = end, 0, 0
        used += cost
        count += n
        end += 1
    if end > first:
        yield first, end, count


def _shard(terms: list[str], postings: Postings, n_docs: int, code: str) -> bytes:
    """One shard's bytes: its terms' dictionary and postings."""
    idf, term_off, post_off = array("d"), array("I", [0]), array("I", [0])
    docs, tfs, bits, blob = array(code), array("H"), array("B"), bytearray()
    for term in terms:
        d, tf, fb = postings[term]
        idf.append(math.log(1.0 + (n_docs - len(d) + 0.5) / (len(d) + 0.5)))
        blob += term.encode("utf-8")
        term_off.append(len(blob))
        docs.append(d[0])  # then the gaps: they compress (gzip); ``map`` runs in C (720,000 at 10,000 skills)
        docs.extend(map(operator.sub, d[1:], d))
        tfs.extend(tf)
        bits.extend(fb)
        post_off.append(len(bits))
    return _shard_bytes(idf, term_off, post_off, docs, tfs, bits, bytes(blob))


def build(docs: Sequence[IndexDoc], *, k1: float = K1, b: float = B, shard_bytes: int = SHARD_BYTES,
          keep_tokens: bool = False, analyzed: Sequence[DocTerms | None] | None = None,
          postings: Postings | None = None, reuse: Mapping[tuple[str, str, int], bytes] | None = None) -> BuiltIndex:
    """Tokenize and invert ``docs`` (already in the order the index keeps: ID byte order).

    ``analyzed``: ``analyze(doc)`` of each document where already known (a build's cache), else None.
    ``postings``: their inversion, when known (``update_postings``); ``BuiltIndex.postings`` is it.
    ``reuse``: shards' bytes known already (``previous_shards``)."""
    n_docs = len(docs)
    doc_lengths = array("I")
    body_unique: list[int] = []
    kept: list[DocTokens] = []
    complete: list[DocTerms] = []
    for i, doc in enumerate(docs):
        known = analyzed[i] if analyzed is not None else None
        if known is None or keep_tokens:
            toks = tokenize_doc(doc)
            if keep_tokens:
                kept.append(toks)
            known = analyze(doc, toks)
        complete.append(known)
        body_unique.append(known[4])
        doc_lengths.append(known[3])
    if postings is None:
        postings = invert(complete)

    terms = sorted(postings)  # code point order == UTF-8 byte order
    avgdl = (sum(doc_lengths) / n_docs) if n_docs else 0.0
    files: dict[str, bytes] = {}
    shards = _term_shards(terms, postings, n_docs, shard_bytes, files, reuse)
    sections: dict[str, dict] = {}
    dictionary = bytearray()
    sections["doc_lengths"] = {"offset": 0, "type": "uint32", "count": n_docs}
    dictionary += _le(doc_lengths)
    files[DICTIONARY] = bytes(dictionary)
    files[BODY_UNIQUE] = _le(array("I", body_unique))  # (only adk-rust's selection reads it: not at open)
    tags = dump_json({"tags": [list(doc.tags) for doc in docs]})
    files[TAGS] = tags
    header = {
        "format": FORMAT,
        "version": VERSION,
        "tokenizer": TOKENIZER_SPEC,
        "fields": {"weights": FIELD_WEIGHTS, "bits": FIELD_BITS},
        "bm25": {"k1": k1, "b": b, "idf": "ln(1 + (N - df + 0.5) / (df + 0.5))"},
        "N": n_docs,
        "avgdl": avgdl,
        "terms": len(terms),
        "postings": sum(s["count"] for s in shards),
        "doc_id_type": "uint16" if doc_typecode(n_docs) == "H" else "uint32",
        "tags": _file_entry(TAGS, tags),
        "dictionary": {**_file_entry(DICTIONARY, bytes(dictionary)), "sections": sections},
        "body_unique": _file_entry(BODY_UNIQUE, files[BODY_UNIQUE]),
        "docs": {"chunk": DOC_CHUNK, "files": _doc_chunks(docs, files)},
        "shards": shards,
    }
    files[HEADER] = dump_json(header)
    return BuiltIndex(header, files, tuple(body_unique), tuple(kept), postings)


def previous_shards(files: Mapping[str, bytes], terms: Sequence[str],
                    touched: Set[str]) -> dict[tuple[str, str, int], bytes]:
    """The shards of an index built before (its ``files``; ``terms``: its terms, sorted) whose terms
    ``touched`` does not name, by (first term, last term, number of terms), for ``build``'s
    ``reuse``: the same number of terms between the same two, none of them touched, have the same
    postings (with as many documents), so the same bytes.  Empty when the files are not such an index."""
    try:
        header = json.loads(files[HEADER])
        out = {}
        for shard in header["shards"]:
            first, n = shard["first_term"], shard["terms"]
            held = terms[first:first + n]
            if len(held) == n and touched.isdisjoint(held):
                out[(held[0], held[-1], n)] = files[shard["file"]]
        return out
    except (KeyError, TypeError, ValueError, IndexError):
        return {}
