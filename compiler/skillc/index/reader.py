"""Read the bundle's BM25 index (``bm25.py`` writes it) with the standard library; numpy if present.

Files are fetched through a ``fetch(name) -> bytes`` callable, so the same reader works on a
directory and over HTTP.  The header is read at open, the document lengths too (both checked against the
header's sizes and SHA-256); a shard (terms and postings) is fetched and verified the first time a
query needs it, a chunk of document IDs and names the first time a hit in it is shown.  Any mismatch raises ``BundleError`` rather than answering from corrupted data.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..jsonio import load_json
from . import BundleError, HashMismatch
from .adk import AdkCandidate, AdkMatch, SelectionPolicy, f32, normalise, rank
from .bm25 import DICTIONARY, FORMAT, HEADER, VERSION
from .tokenize import tokenize

Fetch = Callable[[str], bytes]

_TYPES = {"uint8": ("B", 1), "uint16": ("H", 2), "uint32": ("I", 4), "float64": ("d", 8)}
_NP_TYPES = {"uint8": "<u1", "uint16": "<u2", "uint32": "<u4", "float64": "<f8"}
# adk-rust increments per fields bit set (1 name 4.0, 2 description 2.5, 4 tags 2.0, 8 body 1.0)
_ADK_WEIGHTS = tuple(4.0 * (m & 1) + 2.5 * (m >> 1 & 1) + 2.0 * (m >> 2 & 1) + 1.0 * (m >> 3 & 1) for m in range(16))


def _numpy():
    if os.environ.get("SKILLC_NO_NUMPY"):
        return None
    try:
        import numpy
    except ImportError:
        return None
    return numpy


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    name: str
    score: float
    index: int  # document number in the index (ID byte order)


def directory_fetch(directory: Path) -> Fetch:
    def fetch(name: str) -> bytes:
        path = directory / name
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise BundleError(f"{path}: missing search index file",
                              hint="rebuild the bundle with `skillc build`") from None
        except OSError as exc:
            raise BundleError(f"{path}: cannot read ({exc.strerror})") from None

    return fetch


def _typed(np, data: bytes | memoryview, type_: str, offset: int, count: int):
    code, size = _TYPES[type_]
    if np is not None:
        return np.frombuffer(data, dtype=_NP_TYPES[type_], count=count, offset=offset)
    view = memoryview(data)[offset: offset + count * size]
    if sys.byteorder == "little":
        return view.cast(code)
    arr = array(code, view.tobytes())  # pragma: no cover - big-endian hosts
    arr.byteswap()
    return arr


class _Shard:
    __slots__ = ("blob", "docs", "fields", "idf", "impact", "post_off", "term_off", "tf")

    def __init__(self, idf, term_off, post_off, docs, tf, fields, blob):
        self.idf, self.term_off, self.post_off, self.blob = idf, term_off, post_off, blob
        self.docs, self.tf, self.fields = docs, tf, fields
        self.impact = None  # numpy: per-posting tf * (k1 + 1) / (tf + norm[doc]), computed on first use

    def find(self, key: bytes) -> int:
        """The local number of the term ``key`` (UTF-8), or -1 (binary search: terms are sorted)."""
        blob, off = self.blob, self.term_off
        lo, hi = 0, len(self.idf)
        while lo < hi:
            mid = (lo + hi) // 2
            cur = blob[off[mid]: off[mid + 1]]
            if cur < key:
                lo = mid + 1
            elif cur > key:
                hi = mid
            else:
                return mid
        return -1


def _monotone(values, end: int) -> bool:
    values = values.tolist() if hasattr(values, "tolist") else list(values)
    return bool(values) and values[0] == 0 and values[-1] == end and all(a <= b for a, b in zip(values, values[1:]))


class SearchIndex:
    """The BM25 index plus the token-set view adk-rust's scorer needs."""

    def __init__(self, header: Mapping, fetch: Fetch, *, source: str = "search index", numpy: bool | None = None):
        self.source = source
        self._np = _numpy() if numpy in (None, True) else None
        self._fetch = fetch
        self.header = header
        self._check_header(header)
        self.N: int = header["N"]
        self.avgdl: float = header["avgdl"]
        self.k1: float = header["bm25"]["k1"]
        self.b: float = header["bm25"]["b"]
        self.n_terms: int = header["terms"]
        self._doc_type: str = header["doc_id_type"]
        d = header["dictionary"]
        data = self._verified(d["file"], d["size"], d["sha256"])
        sec = d["sections"]
        try:
            self._dl = _typed(self._np, data, "uint32", sec["doc_lengths"]["offset"], self.N)
            self._chunk = int(header["docs"]["chunk"])
            self._doc_files = list(header["docs"]["files"])
            self._shard_first = [str(s["first"]).encode("utf-8") for s in header["shards"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"{self.source}: {DICTIONARY} does not match its header ({exc})") from None
        self._check_shards(header)
        self._shards: dict[int, _Shard] = {}
        self._doc_chunks: dict[int, tuple[list[str], list[str]]] = {}
        self._norm = None
        self._tags: list[list[str]] | None = None
        self._unique = None

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, directory: str | Path, **kw) -> SearchIndex:
        directory = Path(directory)
        return cls.from_fetch(directory_fetch(directory), source=str(directory), **kw)

    @classmethod
    def from_fetch(cls, fetch: Fetch, *, header_bytes: bytes | None = None, source: str = "search index",
                   **kw) -> SearchIndex:
        raw = header_bytes if header_bytes is not None else fetch(HEADER)
        try:
            header = load_json(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BundleError(f"{source}/{HEADER}: not a search index header (invalid JSON: {exc})",
                              hint="the file is corrupted or truncated; rebuild the bundle") from None
        return cls(header, fetch, source=source, **kw)

    def _check_header(self, header: Mapping) -> None:
        where = f"{self.source}/{HEADER}"
        if not isinstance(header, Mapping) or header.get("format") != FORMAT:
            raise BundleError(f"{where}: not a skillc search index")
        version = header.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise BundleError(f"{where}: index format version {version} is newer than this skillc reads ({VERSION})",
                              hint="upgrade skillc (pip install -U skillc)")
        if version < VERSION:
            raise BundleError(f"{where}: index format version {version} is older than this skillc reads ({VERSION})",
                              hint="rebuild the bundle with this skillc")
        for key in ("N", "avgdl", "bm25", "tags", "terms", "doc_id_type", "dictionary", "body_unique", "docs",
                    "shards"):
            if key not in header:
                raise BundleError(f"{where}: the header has no {key!r}")
        if header["doc_id_type"] not in ("uint16", "uint32"):
            raise BundleError(f"{where}: inconsistent header")

    def _verified(self, name: str, size: int, sha256: str) -> bytes:
        data = self._fetch(name)
        if len(data) != size:
            raise HashMismatch(f"{self.source}/{name}: {len(data)} bytes, the header says {size} (truncated?)",
                               hint="rebuild or re-download the bundle")
        if hashlib.sha256(data).hexdigest() != sha256:
            raise HashMismatch(f"{self.source}/{name}: SHA-256 mismatch (corrupted)",
                               hint="rebuild or re-download the bundle")
        return data

    def _check_shards(self, header: Mapping) -> None:
        """The shards cover the terms and postings in order, their first terms ascending, and the
        document chunks cover the documents: data that lies (the hashes match what was written,
        not what is true) is refused instead of answering from the wrong place."""
        shards = header["shards"]
        try:
            term = posting = 0
            for s in shards:
                if int(s["first_term"]) != term or int(s["first_posting"]) != posting or int(s["terms"]) < 1:
                    raise ValueError
                term += int(s["terms"])
                posting += int(s["count"])
            ordered = all(a < b for a, b in zip(self._shard_first, self._shard_first[1:]))
        except (KeyError, TypeError, ValueError):
            ordered = False
        if not ordered or term != self.n_terms or (self.n_terms and not shards):
            raise BundleError(f"{self.source}: the shards do not cover the terms in order (corrupted)")
        if self._chunk < 1 or len(self._doc_files) != -(-self.N // self._chunk):
            raise BundleError(f"{self.source}: the document chunks do not cover the documents (corrupted)")

    def _shard(self, i: int) -> _Shard:
        shard = self._shards.get(i)
        if shard is None:
            meta = self.header["shards"][i]
            shard = self._parse_shard(meta, self._verified(meta["file"], meta["size"], meta["sha256"]))
            self._shards[i] = shard
        return shard

    def _parse_shard(self, meta: Mapping, data: bytes) -> _Shard:
        """Sections in order: idf (float64 x T), term and posting offsets (uint32 x T+1 each), docs,
        tf (uint16), fields (uint8), each ``count`` long, then the terms' UTF-8 bytes."""
        t, n = int(meta["terms"]), int(meta["count"])
        dsize = _TYPES[self._doc_type][1]
        at = [0, 8 * t, 12 * t + 4, 16 * t + 8]
        at += [at[-1] + dsize * n, at[-1] + (dsize + 2) * n, at[-1] + (dsize + 3) * n]
        where = f"{self.source}/{meta['file']}"
        if at[-1] > len(data):
            raise BundleError(f"{where}: shorter than its header says (corrupted)")
        np = self._np
        shard = _Shard(_typed(np, data, "float64", at[0], t), _typed(None, data, "uint32", at[1], t + 1),
                       _typed(np, data, "uint32", at[2], t + 1), _typed(np, data, self._doc_type, at[3], n),
                       _typed(np, data, "uint16", at[4], n), _typed(np, data, "uint8", at[5], n), bytes(data[at[6]:]))
        if not _monotone(shard.term_off, len(shard.blob)) or not _monotone(shard.post_off, n):
            raise BundleError(f"{where}: an offset table does not fit its data (corrupted)")
        shard.docs = self._undelta(shard.docs, shard.post_off)
        docs = shard.docs.tolist() if hasattr(shard.docs, "tolist") else shard.docs
        if n and max(docs) >= self.N:
            raise BundleError(f"{where}: a posting names a document past the last (corrupted)")
        return shard

    def _undelta(self, gaps, post_off):
        """Documents from each term's first document and the gaps after it (the shard's ``docs``)."""
        np = self._np
        if np is not None:
            if not len(gaps):
                return gaps.astype(np.int64)
            sums = np.cumsum(gaps, dtype=np.int64)
            starts = post_off[:-1].astype(np.int64)
            before = np.where(starts > 0, sums[np.maximum(starts - 1, 0)], 0)
            return sums - np.repeat(before, np.diff(post_off.astype(np.int64)))
        docs = array("I" if self._doc_type == "uint32" else "L")
        for t in range(len(post_off) - 1):
            acc = 0
            for j in range(post_off[t], post_off[t + 1]):
                acc += gaps[j]
                docs.append(acc)
        return docs

    def verify(self) -> None:
        """Fetch and check every file now (``skillc`` does it lazily, shard by shard)."""
        for i in range(len(self.header["shards"])):
            self._shard(i)
        for i in range(len(self._doc_files)):
            self._docs_of(i)
        self.body_unique()
        self.doc_tags()

    # -- documents -------------------------------------------------------------------------------
    def _docs_of(self, chunk: int) -> tuple[list[str], list[str]]:
        """The IDs and names of one chunk of documents (fetched and verified on first use)."""
        got = self._doc_chunks.get(chunk)
        if got is None:
            meta = self._doc_files[chunk]
            try:
                doc = json.loads(self._verified(meta["file"], meta["size"], meta["sha256"]))
                got = ([str(x) for x in doc["ids"]], [str(x) for x in doc["names"]])
            except (ValueError, KeyError, TypeError):
                raise BundleError(f"{self.source}/{meta.get('file')}: not a document chunk") from None
            if len(got[0]) != len(got[1]) or len(got[0]) != min(self._chunk, self.N - chunk * self._chunk):
                raise BundleError(f"{self.source}/{meta['file']}: the wrong number of documents (corrupted)")
            self._doc_chunks[chunk] = got
        return got

    def doc_id(self, d: int) -> str:
        return self._docs_of(d // self._chunk)[0][d % self._chunk]

    def doc_name(self, d: int) -> str:
        return self._docs_of(d // self._chunk)[1][d % self._chunk]

    def body_unique(self):
        """Every document's number of unique body tokens (adk-rust's normaliser), fetched on first use."""
        if self._unique is None:
            meta = self.header["body_unique"]
            try:
                data = self._verified(meta["file"], meta["size"], meta["sha256"])
            except (KeyError, TypeError):
                raise BundleError(f"{self.source}/{HEADER}: no body_unique file") from None
            if len(data) != 4 * self.N:
                raise BundleError(f"{self.source}/{meta['file']}: not {self.N} counts (corrupted)")
            self._unique = _typed(self._np, data, "uint32", 0, self.N)
        return self._unique

    def doc_tags(self) -> list[list[str]]:
        """Every document's tags (``tags.json``, fetched and verified on first use)."""
        if self._tags is None:
            meta = self.header["tags"]
            try:
                tags = json.loads(self._verified(meta["file"], meta["size"], meta["sha256"]))["tags"]
            except (ValueError, KeyError, TypeError):
                raise BundleError(f"{self.source}/{meta.get('file')}: not a tags file") from None
            if len(tags) != self.N:
                raise BundleError(f"{self.source}/{meta['file']}: {len(tags)} entries for {self.N} documents")
            self._tags = tags
        return self._tags

    # -- dictionary ------------------------------------------------------------------------------
    def shard_of(self, term: str) -> int:
        """The number of the shard that holds ``term`` if any term does (by the header's first terms)."""
        return bisect_right(self._shard_first, term.encode("utf-8")) - 1

    def _postings(self, term: str):
        """(shard, start, end, idf) of a term's postings inside its shard, or None."""
        si = self.shard_of(term)
        if si < 0:
            return None
        shard = self._shard(si)
        t = shard.find(term.encode("utf-8"))
        if t < 0:
            return None
        return shard, int(shard.post_off[t]), int(shard.post_off[t + 1]), float(shard.idf[t])

    def _query_terms(self, query: str) -> list:
        seen: list[str] = []
        found = []
        for tok in tokenize(query):
            if tok not in seen:
                seen.append(tok)
                hit = self._postings(tok)
                if hit is not None:
                    found.append(hit)
        return found

    # -- BM25 ------------------------------------------------------------------------------------
    def _norms(self):
        if self._norm is None:
            k1, b, avgdl = self.k1, self.b, self.avgdl
            if self._np is not None:
                dl = self._dl.astype(self._np.float64)
                self._norm = k1 * (1.0 - b + b * dl / avgdl) if avgdl else self._np.full(self.N, k1 * (1.0 - b))
            else:
                self._norm = [k1 * (1.0 - b + b * dl / avgdl) if avgdl else k1 * (1.0 - b) for dl in self._dl]
        return self._norm

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best documents for ``query`` (OR of its unique tokens), best first."""
        if k <= 0 or self.N == 0:
            return []
        terms = self._query_terms(query)
        if not terms:
            return []
        norm = self._norms()
        k1p1 = self.k1 + 1.0
        np = self._np
        if np is not None:
            acc = np.zeros(self.N)
            for shard, lo, hi, idf in terms:
                if shard.impact is None:
                    tf = shard.tf.astype(np.float64)
                    shard.impact = (tf * k1p1) / (tf + norm[shard.docs])
                acc[shard.docs[lo:hi]] += idf * shard.impact[lo:hi]
            hit = np.flatnonzero(acc)
            if len(hit) > k:
                kth = np.partition(acc[hit], len(hit) - k)[len(hit) - k]
                hit = hit[acc[hit] >= kth]
            order = np.lexsort((hit, -acc[hit]))[:k]
            ranked = [(int(hit[j]), float(acc[hit[j]])) for j in order]
        else:
            scores: dict[int, float] = {}
            get = scores.get
            for shard, lo, hi, idf in terms:
                docs, tfs = shard.docs, shard.tf
                for j in range(lo, hi):
                    d = docs[j]
                    tf = tfs[j]
                    scores[d] = get(d, 0.0) + idf * ((tf * k1p1) / (tf + norm[d]))
            ranked = heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [Hit(self.doc_id(d), self.doc_name(d), s, d) for d, s in ranked]

    # -- adk-rust ----------------------------------------------------------------------------------
    def adk_scores(self, query_tokens: Sequence[str]) -> dict[int, float]:
        """adk-rust's f32 score of every document some query token touches (others score 0.0)."""
        found = [t for t in map(self._postings, query_tokens) if t is not None]  # duplicates kept
        if not found:
            return {}
        np = self._np
        if np is not None:
            weights = np.array(_ADK_WEIGHTS, dtype=np.float32)
            raw = np.zeros(self.N, dtype=np.float32)
            for shard, lo, hi, _ in found:
                raw[shard.docs[lo:hi]] += weights[shard.fields[lo:hi]]
            hit = np.flatnonzero(raw)
            n = np.maximum(self.body_unique()[hit], 1).astype(np.float32)
            score = raw[hit] / np.maximum(np.sqrt(n), np.float32(1.0))
            return {int(d): float(s) for d, s in zip(hit, score)}
        raws: dict[int, float] = {}
        for shard, lo, hi, _ in found:
            docs, fields = shard.docs, shard.fields
            for j in range(lo, hi):
                d = docs[j]
                raws[d] = raws.get(d, 0.0) + _ADK_WEIGHTS[fields[j]]
        unique = self.body_unique()
        return {d: normalise(r, unique[d]) for d, r in raws.items()}

    def adk_candidates(self, with_tags: bool = True) -> list[AdkCandidate]:
        tags = self.doc_tags() if with_tags else [()] * self.N
        return [AdkCandidate(self.doc_name(d), self.doc_id(d), tuple(tags[d])) for d in range(self.N)]

    def adk_select(self, query: str, policy: SelectionPolicy | None = None) -> list[AdkMatch]:
        policy = policy or SelectionPolicy()
        tokens = tokenize(query)
        candidates = self.adk_candidates(with_tags=bool(policy.include_tags or policy.exclude_tags))
        return rank(candidates, self.adk_scores(tokens), tokens, policy)


__all__ = ["Hit", "SearchIndex", "directory_fetch", "f32"]
