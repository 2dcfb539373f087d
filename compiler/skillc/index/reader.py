"""Read the bundle's BM25 index (``bm25.py`` writes it) with the standard library; numpy if present.

Files are fetched through a ``fetch(name) -> bytes`` callable, so the same reader works on a
directory and over HTTP.  The header is read at open, the dictionary too (both checked against the
header's sizes and SHA-256); a postings shard is fetched and verified the first time a query needs
it.  Any mismatch raises ``BundleError`` rather than answering from corrupted data.
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
    __slots__ = ("docs", "fields", "impact", "tf")

    def __init__(self, docs, tf, fields):
        self.docs, self.tf, self.fields = docs, tf, fields
        self.impact = None  # numpy: per-posting tf * (k1 + 1) / (tf + norm[doc]), computed on first use


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
            self._idf = _typed(self._np, data, "float64", sec["idf"]["offset"], self.n_terms)
            self._term_off = _typed(self._np, data, "uint32", sec["term_offsets"]["offset"], self.n_terms + 1)
            self._post_off = _typed(self._np, data, "uint32", sec["posting_offsets"]["offset"], self.n_terms + 1)
            self._dl = _typed(self._np, data, "uint32", sec["doc_lengths"]["offset"], self.N)
            self._body_unique = _typed(self._np, data, "uint32", sec["body_unique"]["offset"], self.N)
            self._doc_id_off = _typed(None, data, "uint32", sec["doc_id_offsets"]["offset"], self.N + 1)
            self._doc_name_off = _typed(None, data, "uint32", sec["doc_name_offsets"]["offset"], self.N + 1)
            blobs = {}
            for key in ("term_bytes", "doc_ids", "doc_names"):
                start = sec[key]["offset"]
                blobs[key] = bytes(data[start: start + sec[key]["count"]])
            self._blob, self._ids, self._names = blobs["term_bytes"], blobs["doc_ids"], blobs["doc_names"]
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"{self.source}: {DICTIONARY} does not match its header ({exc})") from None
        self._shard_first = [s["first_term"] for s in header["shards"]]
        self._check_offsets(header)
        self._shards: dict[int, _Shard] = {}
        self._norm = None
        self._tags: list[list[str]] | None = None

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
        for key in ("N", "avgdl", "bm25", "tags", "terms", "doc_id_type", "dictionary", "shards"):
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

    def _check_offsets(self, header: Mapping) -> None:
        """Every offset table runs from 0 to the end of what it indexes without going back, and the
        shards cover the terms and postings in order: data that lies (the hashes match what was
        written, not what is true) is refused instead of answering from the wrong place."""
        shards = header["shards"]
        total = sum(int(s["count"]) for s in shards)
        tables = ((self._term_off, len(self._blob)), (self._post_off, total),
                  (self._doc_id_off, len(self._ids)), (self._doc_name_off, len(self._names)))
        for table, end in tables:
            values = table.tolist() if hasattr(table, "tolist") else list(table)
            if not values or values[0] != 0 or values[-1] != end or any(a > b for a, b in zip(values, values[1:])):
                raise BundleError(f"{self.source}: {DICTIONARY}: an offset table does not fit its data (corrupted)")
        if not shards and not self.n_terms:
            return  # an empty bundle: no terms, no postings, nothing to shard
        if not shards or self._shard_first[0] != 0 or any(
                int(s["first_posting"]) != int(self._post_off[s["first_term"]]) for s in shards):
            raise BundleError(f"{self.source}: the shards do not cover the terms in order (corrupted)")

    def _shard(self, i: int) -> _Shard:
        shard = self._shards.get(i)
        if shard is None:
            meta = self.header["shards"][i]
            data = self._verified(meta["file"], meta["size"], meta["sha256"])
            n = meta["count"]
            dsize = _TYPES[self._doc_type][1]
            shard = _Shard(_typed(self._np, data, self._doc_type, 0, n),
                           _typed(self._np, data, "uint16", dsize * n, n),
                           _typed(self._np, data, "uint8", (dsize + 2) * n, n))
            docs = shard.docs.tolist() if hasattr(shard.docs, "tolist") else shard.docs
            if n and max(docs) >= self.N:
                raise BundleError(f"{self.source}/{meta['file']}: a posting names a document past the last (corrupted)")
            self._shards[i] = shard
        return shard

    def verify(self) -> None:
        """Fetch and check every file now (``skillc`` does it lazily, shard by shard)."""
        for i in range(len(self.header["shards"])):
            self._shard(i)
        self.doc_tags()

    # -- documents -------------------------------------------------------------------------------
    def doc_id(self, d: int) -> str:
        return self._ids[self._doc_id_off[d]: self._doc_id_off[d + 1]].decode("utf-8")

    def doc_name(self, d: int) -> str:
        return self._names[self._doc_name_off[d]: self._doc_name_off[d + 1]].decode("utf-8")

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
    def term_id(self, term: str) -> int:
        """The term's number, or -1 (binary search over the sorted UTF-8 terms)."""
        key = term.encode("utf-8")
        blob, off = self._blob, self._term_off
        lo, hi = 0, self.n_terms
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

    def _postings(self, tid: int):
        """(shard, start, end) of a term's postings inside its shard."""
        si = bisect_right(self._shard_first, tid) - 1
        shard = self._shard(si)
        base = self.header["shards"][si]["first_posting"]
        return shard, int(self._post_off[tid]) - base, int(self._post_off[tid + 1]) - base

    def _query_terms(self, query: str) -> list[int]:
        seen: list[int] = []
        for tok in tokenize(query):
            tid = self.term_id(tok)
            if tid >= 0 and tid not in seen:
                seen.append(tid)
        return seen

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
        tids = self._query_terms(query)
        if not tids:
            return []
        norm = self._norms()
        k1p1 = self.k1 + 1.0
        np = self._np
        if np is not None:
            acc = np.zeros(self.N)
            for tid in tids:
                shard, lo, hi = self._postings(tid)
                if shard.impact is None:
                    tf = shard.tf.astype(np.float64)
                    shard.impact = (tf * k1p1) / (tf + norm[shard.docs])
                acc[shard.docs[lo:hi]] += float(self._idf[tid]) * shard.impact[lo:hi]
            hit = np.flatnonzero(acc)
            if len(hit) > k:
                kth = np.partition(acc[hit], len(hit) - k)[len(hit) - k]
                hit = hit[acc[hit] >= kth]
            order = np.lexsort((hit, -acc[hit]))[:k]
            ranked = [(int(hit[j]), float(acc[hit[j]])) for j in order]
        else:
            scores: dict[int, float] = {}
            get = scores.get
            for tid in tids:
                shard, lo, hi = self._postings(tid)
                idf = self._idf[tid]
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
        tids = [t for t in (self.term_id(tok) for tok in query_tokens) if t >= 0]  # duplicates kept
        if not tids:
            return {}
        np = self._np
        if np is not None:
            weights = np.array(_ADK_WEIGHTS, dtype=np.float32)
            raw = np.zeros(self.N, dtype=np.float32)
            for tid in tids:
                shard, lo, hi = self._postings(tid)
                raw[shard.docs[lo:hi]] += weights[shard.fields[lo:hi]]
            hit = np.flatnonzero(raw)
            n = np.maximum(self._body_unique[hit], 1).astype(np.float32)
            score = raw[hit] / np.maximum(np.sqrt(n), np.float32(1.0))
            return {int(d): float(s) for d, s in zip(hit, score)}
        raws: dict[int, float] = {}
        for tid in tids:
            shard, lo, hi = self._postings(tid)
            docs, fields = shard.docs, shard.fields
            for j in range(lo, hi):
                d = docs[j]
                raws[d] = raws.get(d, 0.0) + _ADK_WEIGHTS[fields[j]]
        return {d: normalise(r, self._body_unique[d]) for d, r in raws.items()}

    def adk_candidates(self, with_tags: bool = True) -> list[AdkCandidate]:
        tags = self.doc_tags() if with_tags else [()] * self.N
        return [AdkCandidate(self.doc_name(d), self.doc_id(d), tuple(tags[d])) for d in range(self.N)]

    def adk_select(self, query: str, policy: SelectionPolicy | None = None) -> list[AdkMatch]:
        policy = policy or SelectionPolicy()
        tokens = tokenize(query)
        candidates = self.adk_candidates(with_tags=bool(policy.include_tags or policy.exclude_tags))
        return rank(candidates, self.adk_scores(tokens), tokens, policy)


__all__ = ["Hit", "SearchIndex", "directory_fetch", "f32"]
