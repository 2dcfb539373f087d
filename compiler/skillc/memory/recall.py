"""Recall over a frozen snapshot: ``MemoryIndex.open(path_or_url).search(query)``.

Seed 000 §4.3.2's relevance score::

    score = 0.40 · cosine(TF-IDF(query), TF-IDF(memory))
          + 0.25 · |query terms ∩ memory keywords| / |query terms ∪ memory keywords|
          + 0.20 · effective importance
          + 0.15 · 1 / (1 + 0.1 · days since last access)

TF-IDF is computed over the snapshot's active entries (stop words left out); the memory's keywords are
its ``keywords`` (split into terms), or its content's terms when it has none.  As in the seed's
search flow, every memory the filters keep is a candidate and is scored: one that shares no term
with the query still scores its importance and recency terms, and can rank above a weak match.
The entries sharing a term come from an inverted index and the others from a list kept in order of
those two terms, so a search does not visit every memory.  When the query shares no term with any
memory, the snapshot's ``memories_fts`` (FTS5, the seed's own table) is searched with each query
token as a prefix, and the normalised BM25 takes the cosine's place (mode ``fts5-fallback``).  Filters: namespace (exact, or a kind such as
``project`` for every ``project/…``), category, type, ``min_importance`` (default 0.1) on the
effective importance; superseded entries are left out.  Days are counted to the snapshot's ``as_of``
(pass ``as_of=`` for another time), so a frozen bundle answers the same way every time; the
snapshot is read-only, so access counts are not bumped.
"""

from __future__ import annotations

import json
import math
import sqlite3
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..discover.walk import path_key
from ..errors import SkillcError
from ..jsonio import load_json
from .model import BADGES, category_of, epoch
from .render import SkillMemoryConfig, skill_block
from .text import Idf, cosine, terms, tokens

W_SIM, W_KW, W_IMP, W_REC = 0.40, 0.25, 0.20, 0.15
FTS_LIMIT = 200


@dataclass(frozen=True, slots=True)
class MemoryHit:
    entry: Mapping[str, Any]
    score: float
    similarity: float
    keyword_overlap: float
    recency: float
    mode: str  # tfidf | fts5-fallback

    def to_json(self) -> dict[str, Any]:
        return {"id": self.entry["id"], "score": round(self.score, 6), "similarity": round(self.similarity, 6),
                "keyword_overlap": round(self.keyword_overlap, 6), "recency": round(self.recency, 6),
                "mode": self.mode, "entry": dict(self.entry)}


def _fetch(url: str) -> bytes | None:
    from ..fetch import FetchError, get

    try:
        resp = get(url)
    except FetchError as exc:
        raise SkillcError(str(exc)) from None
    return None if resp.status in (404, 410) else resp.body


def _snapshot_urls(base: str) -> list[str]:
    """Where a snapshot can be below ``base`` (no trailing slash): only the layouts its last segment
    allows (an API base ``…/api`` has ``memory/snapshot.json``, never ``api/memory/…`` again)."""
    last = urlsplit(base).path.rstrip("/").rsplit("/", 1)[-1]
    if last == "memory":
        return [f"{base}/snapshot.json"]
    if last == "api":
        return [f"{base}/memory/snapshot.json"]
    return [f"{base}/api/memory/snapshot.json", f"{base}/memory/snapshot.json", f"{base}/snapshot.json"]


def _locate(path_or_url: str | Path) -> tuple[bytes, Any, str]:
    """(snapshot.json bytes, sqlite locator (Path | url | None), where)."""
    text = str(path_or_url)
    if text.startswith(("http://", "https://")):
        base = text.rstrip("/")
        # a bundle's root, its API base (…/api, what `skillc search` takes) or a snapshot folder
        tries = [base] if base.endswith(".json") else _snapshot_urls(base)
        for url in tries:
            data = _fetch(url)
            if data is not None:
                return data, url.rsplit("/", 1)[0] + "/snapshot.sqlite", url
        raise SkillcError(f"{text}: no memory snapshot (looked for {', '.join(tries)})",
                          hint="build the bundle with memories (a memory/ folder or --memory PATH)")
    p = Path(text)
    for candidate in ([p] if p.is_file() else [p / "api" / "memory" / "snapshot.json", p / "memory" / "snapshot.json",
                                               p / "snapshot.json"]):
        if candidate.is_file():
            try:
                return candidate.read_bytes(), candidate.parent / "snapshot.sqlite", str(candidate)
            except OSError as exc:
                raise SkillcError(f"{candidate}: cannot read: {exc.strerror}") from None
    if not p.exists():
        raise SkillcError(f"{text}: no such bundle or snapshot")
    raise SkillcError(f"{text}: no memory snapshot (api/memory/snapshot.json, memory/snapshot.json or snapshot.json)",
                      hint="build the bundle with memories, or run `skillc memory freeze --out DIR`")


class MemoryIndex:
    """A read-only view of one snapshot with seed 000's recall."""

    def __init__(self, doc: Mapping[str, Any], sqlite_locator: Any = None, where: str = "") -> None:
        if doc.get("format") != "skillc-memory-snapshot":
            raise SkillcError(f"{where or 'snapshot'}: not a skillc memory snapshot")
        self.doc = doc
        self.where = where
        self.as_of = epoch(doc["as_of"])
        self.entries: list[Mapping[str, Any]] = [e for e in doc["entries"] if e["status"] == "active"]
        self._by_id = {e["id"]: e for e in doc["entries"]}
        self._sqlite_locator = sqlite_locator
        self._con: sqlite3.Connection | None = None
        self._build()

    @classmethod
    def open(cls, path_or_url: str | Path) -> MemoryIndex:
        """A bundle folder or URL (``api/memory/snapshot.json``), a snapshot folder, or a snapshot.json."""
        data, locator, where = _locate(path_or_url)
        try:
            doc = load_json(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SkillcError(f"{where}: not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise SkillcError(f"{where}: not a skillc memory snapshot")
        return cls(doc, locator, where)

    # -------------------------------------------------------------- index

    def _build(self) -> None:
        entries = self.entries
        per_doc = [Counter(terms(e["content"])) for e in entries]
        self.idf = Idf(list(c) for c in per_doc)
        postings: dict[str, tuple[array, array]] = {}
        kw_postings: dict[str, array] = defaultdict(lambda: array("I"))
        self._kw_len = array("I")
        self._has_kw = array("b")
        self._base = array("d")
        self._recency = array("d")
        for i, (e, counts) in enumerate(zip(entries, per_doc)):
            weights = {t: (1.0 + math.log(tf)) * self.idf.idf(t) for t, tf in counts.items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for t, w in weights.items():
                slot = postings.get(t)
                if slot is None:
                    slot = postings[t] = (array("I"), array("d"))
                slot[0].append(i)
                slot[1].append(w / norm)
            kw = set(terms(" ".join(e["keywords"]))) if e["keywords"] else None
            if kw:
                for t in kw:
                    kw_postings[t].append(i)
                self._has_kw.append(1)
                self._kw_len.append(len(kw))
            else:
                self._has_kw.append(0)
                self._kw_len.append(len(counts))
            rec = self._recency_of(e, self.as_of)
            self._recency.append(rec)
            self._base.append(W_IMP * e["effective_importance"] + W_REC * rec)
        self._postings = postings
        self._kw_postings = dict(kw_postings)
        # Every entry by the score it has when it shares nothing with a query (ties: ID bytes).
        self._by_base = sorted(range(len(entries)), key=lambda i: (-self._base[i], path_key(entries[i]["id"])))

    @staticmethod
    def _recency_of(e: Mapping[str, Any], now: float) -> float:
        days = max(0.0, (now - epoch(e["last_accessed_at"])) / 86_400)
        return 1.0 / (1.0 + 0.1 * days)

    # -------------------------------------------------------------- filters

    @staticmethod
    def _ns_match(ns: str, want: str | None) -> bool:
        if not want:
            return True
        return ns == want or ("/" not in want and ns.split("/", 1)[0] == want) or \
            (want.endswith("/") and ns.startswith(want))

    def _keep(self, e: Mapping[str, Any], namespace: str | None, category: str | None, type: str | None,
              min_importance: float) -> bool:
        return (e["effective_importance"] >= min_importance and self._ns_match(e["namespace"], namespace)
                and (not category or category_of(e) == category) and (not type or e["type"] == type))

    # -------------------------------------------------------------- search

    def search(self, query: str, namespace: str | None = None, category: str | None = None, top_k: int = 10,
               min_importance: float = 0.1, type: str | None = None, as_of: float | None = None) -> list[MemoryHit]:
        q_terms = terms(query)
        q_set = set(q_terms)
        q_vec = self.idf.vector(q_terms, known_only=True)
        sims: dict[int, float] = defaultdict(float)
        inter: dict[int, int] = defaultdict(int)
        for t, qw in q_vec.items():
            ids, ws = self._postings[t]
            for i, w in zip(ids, ws):
                sims[i] += qw * w
        has_kw = self._has_kw
        for t in q_set:
            slot = self._postings.get(t)
            if slot is not None:
                for i in slot[0]:
                    if not has_kw[i]:
                        inter[i] += 1
            for i in self._kw_postings.get(t, ()):
                inter[i] += 1
        mode = "tfidf"
        if not sims and not inter:
            sims = self._fts(query)
            mode = "fts5-fallback"
        hits: list[tuple[float, int, float, float]] = []
        entries = self.entries
        nq = len(q_set)
        matched = set(sims) | set(inter)
        for i in matched:
            e = entries[i]
            if not self._keep(e, namespace, category, type, min_importance):
                continue
            k = inter.get(i, 0)
            jac = k / (nq + self._kw_len[i] - k) if k else 0.0
            sim = min(1.0, sims.get(i, 0.0))
            if as_of is None:
                score = W_SIM * sim + W_KW * jac + self._base[i]
            else:
                rec = self._recency_of(e, as_of)
                score = W_SIM * sim + W_KW * jac + W_IMP * e["effective_importance"] + W_REC * rec
            hits.append((score, i, sim, jac))
        hits.extend(self._unmatched(matched, top_k, namespace, category, type, min_importance, as_of))
        hits.sort(key=lambda h: (-h[0], path_key(entries[h[1]]["id"])))
        out = []
        for score, i, sim, jac in hits[:max(0, top_k)]:
            e = entries[i]
            rec = self._recency[i] if as_of is None else self._recency_of(e, as_of)
            out.append(MemoryHit(e, score, sim, jac, rec, mode))
        return out

    def _unmatched(self, matched: set[int], top_k: int, namespace: str | None, category: str | None,
                   type: str | None, min_importance: float, as_of: float | None) -> list[tuple[float, int, float, float]]:
        """The best ``top_k`` candidates that share nothing with the query: their score is
        ``0.20 · importance + 0.15 · recency`` (no more are needed: the matched ones are all scored)."""
        entries = self.entries
        if as_of is None:
            order: Iterable[int] = self._by_base
            base = self._base
        else:
            base = array("d", (W_IMP * e["effective_importance"] + W_REC * self._recency_of(e, as_of)
                               for e in entries))
            order = sorted(range(len(entries)), key=lambda i: (-base[i], path_key(entries[i]["id"])))
        out: list[tuple[float, int, float, float]] = []
        for i in order:
            if len(out) >= top_k:
                break
            if i not in matched and self._keep(entries[i], namespace, category, type, min_importance):
                out.append((base[i], i, 0.0, 0.0))
        return out

    def _connection(self) -> sqlite3.Connection | None:
        if self._con is not None:
            return self._con
        loc = self._sqlite_locator
        if loc is None:
            return None
        if isinstance(loc, Path):
            if not loc.is_file():
                return None
            self._con = sqlite3.connect(f"{loc.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        else:
            data = _fetch(str(loc))
            if data is None:
                return None
            con = sqlite3.connect(":memory:")
            con.deserialize(data)
            self._con = con
        return self._con

    def _fts(self, query: str) -> dict[int, float]:
        toks = [t for t in tokens(query)]
        if not toks:
            return {}
        con = self._connection()
        if con is None:
            return {}
        match = " OR ".join('"' + t.replace('"', '""') + '"*' for t in dict.fromkeys(toks))
        try:
            rows = con.execute(
                "SELECT m.id, bm25(memories_fts) AS s FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
                "WHERE memories_fts MATCH ? ORDER BY s LIMIT ?", (match, FTS_LIMIT)).fetchall()
        except sqlite3.Error:
            return {}
        if not rows:
            return {}
        best = min(s for _, s in rows) or -1.0
        index = {e["id"]: i for i, e in enumerate(self.entries)}
        return {index[rid]: (s / best if best else 0.0) for rid, s in rows if rid in index}

    # -------------------------------------------------------------- listing (the seed's memory tab)

    def show(self, namespace: str | None = None, category: str | None = None, type: str | None = None,
             text: str | None = None, status: str = "active", offset: int = 0,
             limit: int | None = None) -> list[Mapping[str, Any]]:
        """List entries like seed 000's memory tab: filters, best first (effective importance), paginated.

        ``status``: ``active`` (default), ``superseded``, ``pruned``, or ``all``.
        """
        pool: list[Mapping[str, Any]]
        if status == "pruned":
            pool = list(self.doc["pruned"])
        elif status == "all":
            pool = [*self.doc["entries"], *self.doc["pruned"]]
        else:
            pool = [e for e in self.doc["entries"] if e["status"] == status]
        needle = " ".join(text.lower().split()) if text else None
        out = [e for e in pool if self._ns_match(e["namespace"], namespace)
               and (not category or category_of(e) == category) and (not type or e["type"] == type)
               and (needle is None or needle in " ".join(e["content"].lower().split())
                    or any(needle in k for k in e["keywords"]))]
        out.sort(key=lambda e: (-e["effective_importance"], path_key(e["id"])))
        return out[offset: offset + limit if limit is not None else None]

    def get(self, memory_id: str) -> Mapping[str, Any] | None:
        if memory_id in self._by_id:
            return self._by_id[memory_id]
        return next((e for e in self.doc["pruned"] if e["id"] == memory_id), None)

    def stats(self, entries: Iterable[Mapping[str, Any]] | None = None) -> dict[str, int]:
        """Counts like the memory tab's footer: total, then per category badge."""
        pool = list(self.entries if entries is None else entries)
        counts = {"memories": len(pool)}
        for cat in BADGES:
            counts[cat] = sum(1 for e in pool if category_of(e) == cat)
        return counts

    def skill_block(self, skill_id: str, intent: str | None = None,
                    config: SkillMemoryConfig | None = None) -> str:
        """Seed 003's ``<skill-memory>`` block for ``skill_id``: mode ``no-intent`` without an intent
        (or a blank one), ``flat-fts`` (the same flat order) for an intent without a letter or digit,
        which seed 003's FTS query cannot match, else ``full``."""
        cfg = config or SkillMemoryConfig()
        notes = [e for e in self.entries if e.get("note") and e["namespace"] == f"skill/{skill_id}"]
        if not intent or not intent.strip():
            return skill_block(skill_id, notes, cfg, mode="no-intent")
        if not tokens(intent):
            return skill_block(skill_id, notes, cfg, mode="flat-fts")
        q = self.idf.vector(terms(intent))
        rel = {n["id"]: max(cosine(q, self.idf.vector(terms(n["note"].get("intent", "")))),
                            cosine(q, self.idf.vector(terms(n["content"])))) for n in notes}
        return skill_block(skill_id, notes, cfg, mode="full", relevance=rel)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __len__(self) -> int:
        return len(self.entries)


def badge(entry: Mapping[str, Any]) -> str:
    if entry["type"] != "semantic":
        return {"episodic": "[EPIS]", "procedural": "[PROC]"}.get(entry["type"], "")
    return BADGES.get(category_of(entry) or "fact", "[FACT]")


def stars(importance: float) -> str:
    n = max(0, min(5, round(importance * 5)))
    return "★" * n + "☆" * (5 - n)


def search_snapshot(path_or_url: str | Path, query: str, **kw: Any) -> Sequence[MemoryHit]:
    return MemoryIndex.open(path_or_url).search(query, **kw)
