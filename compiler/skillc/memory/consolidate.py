"""Consolidation: nothing silently lost.

``consolidate(entries, settings, as_of)`` is pure.  In order:

1. **Tombstones** (``forget: true``, from ``skillc memory extract``'s "forget that …") move every older
   entry they match (the ids in ``supersedes``, or every query term a prefix of one of the entry's
   tokens; a global tombstone reaches every namespace) to ``pruned`` with the reason.
2. **Exact duplicates** within a namespace and type (per-skill notes: whatever their type, as seed
   003's table has one row per normalised text; normalised hash: lower-case, whitespace
   collapsed) are merged into one: access, hit and recall counts added, the highest importance, the
   earliest creation, the latest update and access, keywords and tags united; the others are kept in
   ``merged_from`` (reason ``duplicate``).
3. **Near-duplicates** within a namespace, type and category with TF-IDF cosine above
   ``compactionThreshold`` (seed 000: 0.90) are merged the same way (reason ``near-duplicate`` with the
   similarity).  The most important entry of a cluster absorbs the others; pairs related by
   ``supersedes`` are never merged.  Candidates come from an inverted index of each entry's prefix
   (its rarest terms until the rest weighs less than the threshold: ``text.prefix_terms``) probed
   with the same prefix, which finds every pair above the threshold without comparing all pairs.
4. **Supersession**: an entry that ``supersedes`` another keeps both; the older one is marked
   ``superseded`` with ``superseded_by`` (left out of the prompt and of recall, still in the snapshot).
5. **Decay** as of ``as_of``: ``effective = importance × 0.95^(days since last access / 7)``.
6. **Pruning** into ``pruned`` with the reason: effective importance below ``minImportance``; older
   than ``autoDeleteAfterDays`` and below ``autoDeleteMinImportance``; beyond
   ``maxMemoriesPerNamespace`` (0 = no limit; the least important go first).  Pinned notes are exempt.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..discover.walk import path_key
from .model import MemoryEntry, content_hash, epoch
from .settings import MemorySettings
from .text import Idf, cosine, prefix_terms, terms, tokens

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Consolidated:
    entry: MemoryEntry
    effective_importance: float
    status: str = "active"  # active | superseded
    superseded_by: tuple[str, ...] = ()
    merged_from: tuple[Mapping[str, Any], ...] = ()
    reason: str | None = None  # why it was pruned (entries in `pruned` only)

    def to_json(self) -> dict[str, Any]:
        out = self.entry.to_json()
        out["effective_importance"] = round(self.effective_importance, 6)
        out["status"] = self.status
        if self.superseded_by:
            out["superseded_by"] = list(self.superseded_by)
        if self.merged_from:
            out["merged_from"] = [dict(m) for m in self.merged_from]
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class Consolidation:
    entries: tuple[Consolidated, ...]  # kept, sorted by (namespace, id) bytes
    pruned: tuple[Consolidated, ...]  # sorted the same way
    tombstones: tuple[MemoryEntry, ...]
    warnings: tuple[str, ...]
    stats: Mapping[str, int]


def decay(importance: float, last_accessed: str, as_of: float) -> float:
    days = max(0.0, (as_of - epoch(last_accessed)) / DAY)
    return importance * 0.95 ** (days / 7.0)


def _order(e: MemoryEntry) -> tuple:
    """Which entry of a group survives: the most important, then the most recently used, then id."""
    return (-e.importance, -epoch(e.last_accessed_at), path_key(e.id))


def _sort_key(c: Consolidated) -> tuple:
    return (path_key(c.entry.namespace), path_key(c.entry.id))


def _merge(rep: MemoryEntry, others: Sequence[MemoryEntry]) -> MemoryEntry:
    group = [rep, *others]
    note = rep.note
    if note is not None:
        notes = [e.note for e in group if e.note is not None]
        note = replace(note, hit_count=sum(n.hit_count for n in notes), recall_count=sum(n.recall_count for n in notes),
                       pinned=any(n.pinned for n in notes))
    return replace(
        rep,
        importance=max(e.importance for e in group),
        access_count=sum(e.access_count for e in group),
        created_at=min(e.created_at for e in group),
        updated_at=max(e.updated_at for e in group),
        last_accessed_at=max(e.last_accessed_at for e in group),
        keywords=tuple(dict.fromkeys(k for e in group for k in e.keywords)),
        tags=tuple(dict.fromkeys(t for e in group for t in e.tags)),
        supersedes=tuple(dict.fromkeys(s for e in group for s in e.supersedes if s != rep.id)),
        note=note,
    )


def _original(e: MemoryEntry, reason: str, similarity: float | None = None) -> dict[str, Any]:
    out = {"reason": reason, **e.to_json()}
    if similarity is not None:
        out["similarity"] = round(similarity, 6)
    return out


def _tombstone_candidates(queries: Sequence[tuple[MemoryEntry, list[str]]],
                          have: Sequence[set[str]]) -> Callable[[MemoryEntry, set[str]], list[int]]:
    """The positions in ``queries`` (ascending) of the tombstones that may forget an entry: those
    naming its id in ``supersedes``, and those whose key term is a prefix of one of its tokens
    (``have``: each live entry's).  Every query term must be such a prefix, so the key is the term
    that reaches the fewest entries.  Testing each entry against these alone, not every
    tombstone, keeps many tombstones and many memories linear; ``_forgets`` still decides."""
    freq = Counter(token for tokens_of in have for token in tokens_of)
    words = sorted(freq)
    cum = [0]
    for word in words:
        cum.append(cum[-1] + freq[word])

    def reach(term: str) -> int:  # entries holding a token that starts with term (at most)
        lo = bisect_left(words, term)
        last = ord(term[-1])
        hi = len(words) if last == 0x10FFFF else bisect_left(words, term[:-1] + chr(last + 1), lo)
        return cum[hi] - cum[lo]

    by_id: dict[str, list[int]] = defaultdict(list)
    by_term: dict[str, list[int]] = defaultdict(list)
    for k, (tomb, query) in enumerate(queries):
        for target in dict.fromkeys(tomb.supersedes):
            by_id[target].append(k)
        if query:
            by_term[min(query, key=lambda term: (reach(term), -len(term), term))].append(k)
    lengths = sorted({len(term) for term in by_term})

    def candidates(entry: MemoryEntry, tokens_of: set[str]) -> list[int]:
        found = set(by_id.get(entry.id, ()))
        for token in tokens_of:
            for n in lengths:
                if n > len(token):
                    break
                found.update(by_term.get(token[:n], ()))
        return sorted(found)

    return candidates


def _forgets(tomb: MemoryEntry, query: list[str], entry: MemoryEntry, have: set[str]) -> bool:
    if entry.id in tomb.supersedes:
        return True
    if tomb.namespace != "global" and tomb.namespace != entry.namespace:
        return False
    if entry.created_at > tomb.created_at or not query:
        return False
    return all(any(t.startswith(q) for t in have) for q in query)


# An entry after merging, with the originals it absorbed (``merged_from``)
_Merged = tuple[MemoryEntry, list[dict[str, Any]]]
_FORGET_STOPWORDS = frozenset({"that", "the", "a", "an", "i", "my", "about"})


def consolidate(entries: Iterable[MemoryEntry], settings: MemorySettings, as_of: float) -> Consolidation:
    all_entries = list(entries)
    tombstones = [e for e in all_entries if e.forget]
    pruned: list[Consolidated] = []
    warnings: list[str] = []
    stats: dict[str, int] = defaultdict(int)  # (a counter appears in the stats once it counts something)
    stats["input"] = len(all_entries)
    stats["tombstones"] = len(tombstones)
    alias: dict[str, str] = {}  # merged entry id -> the id of the entry that absorbed it
    live = _forget(tombstones, [e for e in all_entries if not e.forget], as_of, pruned, stats)
    merged = _merge_duplicates(live, alias, stats)
    after = _merge_near_duplicates(merged, settings.compaction_threshold, alias, stats)
    superseded_by = _supersessions(after, alias, warnings)
    kept = _decay_and_prune(after, superseded_by, settings, as_of, pruned, stats)
    kept = _limit_namespaces(kept, settings.max_memories_per_namespace, pruned, stats)
    kept.sort(key=_sort_key)
    pruned.sort(key=_sort_key)
    stats["kept"] = len(kept)
    stats["pruned"] = len(pruned)
    stats["superseded"] = sum(1 for c in kept if c.status == "superseded")
    return Consolidation(tuple(kept), tuple(pruned), tuple(sorted(tombstones, key=lambda t: path_key(t.id))),
                         tuple(warnings), dict(sorted(stats.items())))


def _forget(tombstones: list[MemoryEntry], live: list[MemoryEntry], as_of: float, pruned: list[Consolidated],
            stats: dict[str, int]) -> list[MemoryEntry]:
    """1. The entries no tombstone reaches; those it reaches go to ``pruned`` naming the tombstone."""
    if not tombstones:
        return live
    kept = []
    queries = [(t, [q for q in tokens(t.content) if q not in _FORGET_STOPWORDS])
               for t in sorted(tombstones, key=lambda t: path_key(t.id))]
    have = [set(tokens(e.content)) for e in live]
    candidates = _tombstone_candidates(queries, have)
    for e, tokens_of in zip(live, have):
        tomb = next((queries[k][0] for k in candidates(e, tokens_of) if _forgets(*queries[k], e, tokens_of)),
                    None)
        if tomb is None:
            kept.append(e)
            continue
        where = tomb.provenance.get("file")
        at = f" ({where}:{tomb.provenance.get('line')})" if where else ""
        pruned.append(Consolidated(e, decay(e.importance, e.last_accessed_at, as_of),
                                   reason=f"forgotten by {tomb.id}{at}"))
        stats["forgotten"] += 1
    return kept


def _merge_duplicates(live: list[MemoryEntry], alias: dict[str, str], stats: dict[str, int]) -> list[_Merged]:
    """2. Exact duplicates (same namespace, type and normalised text) merged into one."""
    groups: dict[tuple, list[MemoryEntry]] = defaultdict(list)
    for e in live:
        # Per-skill notes of any kind count as one type: seed 003's skill_memory keeps one row per
        # normalised text of a skill (UNIQUE on its hash), so a gotcha and a workflow step saying the
        # same thing would otherwise both stay active and one of them would vanish from the table.
        kind = "\0note" if e.note is not None else e.type
        groups[(e.namespace, kind, content_hash(e.content))].append(e)
    merged: list[_Merged] = []
    for key in sorted(groups, key=lambda k: (path_key(k[0]), k[1], k[2])):
        group = sorted(groups[key], key=_order)
        rep, others = group[0], group[1:]
        if others:
            stats["duplicates"] += len(others)
            for o in others:
                alias[o.id] = rep.id
            merged.append((_merge(rep, others), [_original(o, "duplicate") for o in others]))
        else:
            merged.append((rep, []))
    return merged


def _merge_near_duplicates(merged: list[_Merged], threshold: float, alias: dict[str, str],
                           stats: dict[str, int]) -> list[_Merged]:
    """3. Near-duplicates (TF-IDF cosine > threshold within namespace + type + category) merged into
    the most important entry of their cluster; ``alias`` then maps every merged id to its survivor."""
    absorbed, gone = _near_duplicate_clusters(merged, threshold)
    after: list[_Merged] = []
    for i, (e, originals) in enumerate(merged):
        if i in gone:
            continue
        if i in absorbed:
            others = [merged[j][0] for j, _ in absorbed[i]]
            # (an exact duplicate of an absorbed entry says which one it duplicated: not this one)
            originals = originals + [o for j, sim in absorbed[i]
                                     for o in ([_original(merged[j][0], "near-duplicate", sim)]
                                               + [{**d, "duplicate_of": merged[j][0].id} for d in merged[j][1]])]
            for o in others:
                alias[o.id] = e.id
            stats["near_duplicates"] += len(others)
            e = _merge(e, others)
        after.append((e, originals))
    for old, new in list(alias.items()):
        while new in alias and alias[new] != new:
            new = alias[new]
        alias[old] = new
    return after


def _near_duplicate_clusters(merged: list[_Merged], threshold: float
                             ) -> tuple[dict[int, list[tuple[int, float]]], set[int]]:
    """Which entry absorbs which (with the similarity), and the set of those absorbed."""
    toks = [terms(e.content) for e, _ in merged]
    idf = Idf(toks)
    vectors = [idf.vector(t) for t in toks]
    by_group: dict[tuple, list[int]] = defaultdict(list)
    for i, (e, _) in enumerate(merged):
        by_group[(e.namespace, e.type, e.category or "")].append(i)
    absorbed: dict[int, list[tuple[int, float]]] = {}
    gone: set[int] = set()
    for members in by_group.values():
        if len(members) >= 2:
            _cluster_group(members, merged, vectors, threshold, absorbed, gone)
    return absorbed, gone


def _cluster_group(members: list[int], merged: list[_Merged], vectors: list, threshold: float,
                   absorbed: dict[int, list[tuple[int, float]]], gone: set[int]) -> None:
    """The clusters within one namespace + type + category, found through an inverted index of each
    entry's prefix terms rather than by comparing every pair."""
    ordered = sorted(members, key=lambda i: _order(merged[i][0]))
    df = Counter(term for i in members for term in vectors[i])
    rank = {term: (n, term) for term, n in df.items()}  # rare terms first, one order for all
    prefixes = {i: prefix_terms(vectors[i], threshold, rank) for i in members}
    postings: dict[str, list[int]] = defaultdict(list)  # term -> ranks (ascending) of the entries
    for r, i in enumerate(ordered):  # with it in their prefix
        for term in prefixes[i]:
            postings[term].append(r)
    for ri, i in enumerate(ordered):
        if i in gone or not vectors[i]:
            continue
        ei = merged[i][0]
        found: list[tuple[int, float]] = []
        seen: set[int] = {i}
        for term in prefixes[i]:
            plist = postings[term]
            # entries ranked before i already compared themselves with i (cosine is symmetric)
            for rj in plist[bisect_right(plist, ri):]:
                j = ordered[rj]
                if j in seen or j in gone:
                    continue
                seen.add(j)
                ej = merged[j][0]
                if ej.id in ei.supersedes or ei.id in ej.supersedes:
                    continue
                sim = cosine(vectors[i], vectors[j])
                if sim > threshold:
                    found.append((j, sim))
        if found:
            absorbed[i] = sorted(found, key=lambda js: _order(merged[js[0]][0]))
            gone.update(j for j, _ in found)


def _supersessions(after: list[_Merged], alias: Mapping[str, str], warnings: list[str]) -> dict[str, list[str]]:
    """4. Which entries supersede each entry (targets followed through merges); a target that is not
    among the memories, and entries superseding each other, are warned about."""
    ids = {e.id for e, _ in after}
    edges: dict[str, list[str]] = defaultdict(list)  # entry -> the entries it supersedes
    for e, _ in after:
        for target in e.supersedes:
            target = alias.get(target, target)
            if target == e.id:
                continue
            if target in ids:
                edges[e.id].append(target)
            else:
                where = e.provenance.get("file")
                at = f"{where}:{e.provenance.get('line')}: " if where else ""
                warnings.append(f"{at}entry {e.id!r} supersedes {target!r}, which is not among the memories")
    # Entries that supersede each other (a -> b -> a) would all be hidden: none of them is newer, so
    # the supersessions among them are ignored and reported instead.
    in_cycle: dict[str, int] = {}
    for n, cycle in enumerate(_cycles(edges)):
        in_cycle.update(dict.fromkeys(cycle, n))
        warnings.append(f"entries {', '.join(repr(i) for i in cycle)} supersede each other; all of them are kept "
                        "active (remove the supersedes that is wrong)")
    superseded_by: dict[str, list[str]] = defaultdict(list)
    for source in sorted(edges, key=path_key):
        for target in edges[source]:
            if source in in_cycle and in_cycle.get(target) == in_cycle[source]:
                continue
            superseded_by[target].append(source)
    return superseded_by


def _decay_and_prune(after: list[_Merged], superseded_by: Mapping[str, list[str]], settings: MemorySettings,
                     as_of: float, pruned: list[Consolidated], stats: dict[str, int]) -> list[Consolidated]:
    """5. Decay as of ``as_of``, 6. pruning by importance and age (pinned notes are exempt)."""
    kept: list[Consolidated] = []
    for e, originals in after:
        eff = decay(e.importance, e.last_accessed_at, as_of)
        by = tuple(sorted(set(superseded_by.get(e.id, ())), key=path_key))
        c = Consolidated(e, eff, "superseded" if by else "active", by, tuple(originals))
        reason = None if e.note is not None and e.note.pinned else _prune_reason(e, eff, settings, as_of)
        if reason:
            pruned.append(replace(c, reason=reason))
            stats["pruned_importance"] += 1
        else:
            kept.append(c)
    return kept


def _prune_reason(e: MemoryEntry, eff: float, settings: MemorySettings, as_of: float) -> str | None:
    if eff < settings.min_importance:
        return f"effective importance {eff:.4f} is below retention.minImportance {settings.min_importance:g}"
    if (settings.auto_delete_after_days
            and (as_of - epoch(e.created_at)) / DAY > settings.auto_delete_after_days
            and eff < settings.auto_delete_min_importance):
        return (f"older than retention.autoDeleteAfterDays ({settings.auto_delete_after_days}) with effective "
                f"importance {eff:.4f} below autoDeleteMinImportance {settings.auto_delete_min_importance:g}")
    return None


def _limit_namespaces(kept: list[Consolidated], limit: int, pruned: list[Consolidated],
                      stats: dict[str, int]) -> list[Consolidated]:
    """6. At most ``limit`` entries per namespace (0: no limit): the least important go first, pinned
    notes stay."""
    if not limit:
        return kept
    per_ns: dict[str, list[Consolidated]] = defaultdict(list)
    for c in kept:
        per_ns[c.entry.namespace].append(c)
    kept = []
    for ns, items in per_ns.items():
        items.sort(key=lambda c: (not (c.entry.note and c.entry.note.pinned), c.status != "active",
                                  -c.effective_importance, path_key(c.entry.id)))
        kept.extend(items[:limit])
        for c in items[limit:]:
            if c.entry.note and c.entry.note.pinned:
                kept.append(c)
                continue
            pruned.append(replace(c, reason=f"beyond retention.maxMemoriesPerNamespace ({limit}) in {ns}"))
            stats["pruned_namespace_limit"] += 1
    return kept


def _cycles(edges: Mapping[str, list[str]]) -> list[list[str]]:
    """The groups of nodes that reach each other (strongly connected components of more than one
    node), each sorted, in sorted order (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(edges, key=path_key):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                t = targets[i]
                if t not in index:
                    work.append((t, 0))
                elif t in on_stack:
                    low[node] = min(low[node], index[t])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    group.append(x)
                    if x == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group, key=path_key))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(groups, key=lambda g: path_key(g[0]))
